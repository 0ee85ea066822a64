//! APOC's scalar functions that the GraphRAG and OGM libraries and users call, with APOC's
//! semantics for null and mixed inputs: here `apoc.coll.*`, `apoc.map.clean/merge/fromPairs`,
//! `apoc.text.join`, `apoc.meta.cypher.type(s)`; [`text`] the other `apoc.text.*`, [`convert`]
//! JSON, the other `apoc.map.*` and the `apoc.util` digests, [`date`] `apoc.date.*`. `apoc.any.property(x, key)` is bound by the planner as `x[key]` and
//! `apoc.any.properties(x)` as `properties(x)`, since both need the graph.

pub mod convert;
pub mod date;
pub mod text;

use std::cmp::Ordering;

use arbor_model::{PropertyMap, Result, Value};

use super::coll::{extreme, list};
use super::{arg, type_err};

/// Value equality as APOC's Java collections see it: same type and equal (so `1` and `1.0`
/// differ), null equal to null.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        _ => a.type_name() == b.type_name() && arbor_model::equals(a, b) == Some(true),
    }
}

/// `apoc.coll.sort(list)`: ascending in Cypher's ORDER BY order; null for null.
pub fn coll_sort(args: &[Value]) -> Result<Value> {
    let Some(items) = list("apoc.coll.sort", arg(args, 0))? else { return Ok(Value::Null) };
    let mut out = items.to_vec();
    out.sort_by(arbor_model::order);
    Ok(Value::List(out))
}

/// `apoc.coll.toSet(list)`: duplicates removed, first occurrences kept in order.
pub fn coll_to_set(args: &[Value]) -> Result<Value> {
    let Some(items) = list("apoc.coll.toSet", arg(args, 0))? else { return Ok(Value::Null) };
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        if i % 4096 == 0 {
            crate::interrupt::check()?;
        }
        if !out.iter().any(|o| same(o, v)) {
            out.push(v.clone());
        }
    }
    Ok(Value::List(out))
}

/// `apoc.coll.flatten(list[, recursive = false])`: nested lists spliced in one level (or all
/// levels); null gives the empty list, as APOC.
pub fn coll_flatten(args: &[Value]) -> Result<Value> {
    let Some(items) = list("apoc.coll.flatten", arg(args, 0))? else {
        return Ok(Value::List(Vec::new()));
    };
    let recursive = matches!(arg(args, 1), Value::Bool(true));
    let mut out = Vec::with_capacity(items.len());
    flatten_into(items, recursive, &mut out)?;
    Ok(Value::List(out))
}

fn flatten_into(items: &[Value], recursive: bool, out: &mut Vec<Value>) -> Result<()> {
    crate::interrupt::check()?;
    for v in items {
        match v {
            Value::List(inner) if recursive => flatten_into(inner, true, out)?,
            Value::List(inner) => out.extend(inner.iter().cloned()),
            other => out.push(other.clone()),
        }
    }
    Ok(())
}

/// `apoc.coll.contains(list, value)`.
pub fn coll_contains(args: &[Value]) -> Result<Value> {
    let Some(items) = list("apoc.coll.contains", arg(args, 0))? else {
        return Ok(Value::Bool(false));
    };
    Ok(Value::Bool(items.iter().any(|v| same(v, arg(args, 1)))))
}

/// `apoc.coll.sum(list)`: the sum of the numbers as a float (APOC returns a Double); null
/// for null.
pub fn coll_sum(args: &[Value]) -> Result<Value> {
    let Some(items) = list("apoc.coll.sum", arg(args, 0))? else { return Ok(Value::Null) };
    let mut sum = 0.0;
    for v in items {
        match v {
            Value::Int(i) => sum += *i as f64,
            Value::Float(f) => sum += f,
            Value::Null => {}
            other => return Err(type_err("apoc.coll.sum", "a List of numbers", other)),
        }
    }
    Ok(Value::Float(sum))
}

pub fn coll_min(args: &[Value]) -> Result<Value> {
    extreme("apoc.coll.min", args, Ordering::Less)
}

pub fn coll_max(args: &[Value]) -> Result<Value> {
    extreme("apoc.coll.max", args, Ordering::Greater)
}

/// `apoc.coll.union(a, b)`: the distinct values of both lists, in first-seen order.
pub fn coll_union(args: &[Value]) -> Result<Value> {
    let a = list("apoc.coll.union", arg(args, 0))?.unwrap_or(&[]);
    let b = list("apoc.coll.union", arg(args, 1))?.unwrap_or(&[]);
    let joined: Vec<Value> = a.iter().chain(b).cloned().collect();
    coll_to_set(&[Value::List(joined)])
}

/// `apoc.coll.intersection(a, b)`: the distinct values of `a` also in `b`.
pub fn coll_intersection(args: &[Value]) -> Result<Value> {
    let a = list("apoc.coll.intersection", arg(args, 0))?.unwrap_or(&[]);
    let b = list("apoc.coll.intersection", arg(args, 1))?.unwrap_or(&[]);
    let kept: Vec<Value> = a.iter().filter(|v| b.iter().any(|w| same(v, w))).cloned().collect();
    coll_to_set(&[Value::List(kept)])
}

/// `apoc.coll.subtract(a, b)`: the distinct values of `a` not in `b`.
pub fn coll_subtract(args: &[Value]) -> Result<Value> {
    let a = list("apoc.coll.subtract", arg(args, 0))?.unwrap_or(&[]);
    let b = list("apoc.coll.subtract", arg(args, 1))?.unwrap_or(&[]);
    let kept: Vec<Value> = a.iter().filter(|v| !b.iter().any(|w| same(v, w))).cloned().collect();
    coll_to_set(&[Value::List(kept)])
}

/// A map argument: `None` for null; a non-map is a type error naming the function.
pub(super) fn map<'a>(func: &str, v: &'a Value) -> Result<Option<&'a PropertyMap>> {
    match v {
        Value::Null => Ok(None),
        Value::Map(m) => Ok(Some(m)),
        other => Err(type_err(func, "a Map", other)),
    }
}

/// `apoc.map.clean(map, keys, values)`: the map without the listed keys, without null
/// values and without entries whose value is one of `values`.
pub fn map_clean(args: &[Value]) -> Result<Value> {
    let Some(m) = map("apoc.map.clean", arg(args, 0))? else { return Ok(Value::Null) };
    let keys = list("apoc.map.clean", arg(args, 1))?.unwrap_or(&[]);
    let values = list("apoc.map.clean", arg(args, 2))?.unwrap_or(&[]);
    let out: PropertyMap = m
        .iter()
        .filter(|(k, v)| {
            !v.is_null()
                && !keys.iter().any(|key| matches!(key, Value::String(s) if &**s == k.as_str()))
                && !values.iter().any(|x| same(x, v))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Value::Map(out))
}

/// `apoc.map.merge(a, b)`: `a` with `b`'s entries added or replacing.
pub fn map_merge(args: &[Value]) -> Result<Value> {
    let mut out = map("apoc.map.merge", arg(args, 0))?.cloned().unwrap_or_default();
    if let Some(b) = map("apoc.map.merge", arg(args, 1))? {
        for (k, v) in b.iter() {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Map(out))
}

/// `apoc.map.fromPairs([[key, value], ...])`.
pub fn map_from_pairs(args: &[Value]) -> Result<Value> {
    let Some(pairs) = list("apoc.map.fromPairs", arg(args, 0))? else {
        return Ok(Value::Map(PropertyMap::new()));
    };
    let mut out = PropertyMap::new();
    for p in pairs {
        match p {
            Value::List(kv) if kv.len() == 2 => match &kv[0] {
                Value::String(k) => {
                    out.insert(k.to_string().into(), kv[1].clone());
                }
                Value::Null => {}
                other => return Err(type_err("apoc.map.fromPairs", "String keys", other)),
            },
            other => return Err(type_err("apoc.map.fromPairs", "[key, value] pairs", other)),
        }
    }
    Ok(Value::Map(out))
}

/// `apoc.text.join(list, delimiter)`: the strings joined, nulls skipped.
pub fn text_join(args: &[Value]) -> Result<Value> {
    let Some(items) = list("apoc.text.join", arg(args, 0))? else { return Ok(Value::Null) };
    let sep = match arg(args, 1) {
        Value::String(s) => s.to_string(),
        Value::Null => return Ok(Value::Null),
        other => return Err(type_err("apoc.text.join", "a String", other)),
    };
    let mut parts = Vec::with_capacity(items.len());
    for v in items {
        match v {
            Value::String(s) => parts.push(s.to_string()),
            Value::Null => {}
            other => return Err(type_err("apoc.text.join", "a List of Strings", other)),
        }
    }
    Ok(Value::String(parts.join(&sep).into()))
}

/// APOC's type name of a value (`INTEGER`, `LIST OF STRING`, `DATE_TIME`, ...).
fn cypher_type_name(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bool(_) => "BOOLEAN".into(),
        Value::Int(_) => "INTEGER".into(),
        Value::Float(_) => "FLOAT".into(),
        Value::String(_) => "STRING".into(),
        Value::Bytes(_) => "BYTE_ARRAY".into(),
        Value::List(items) => {
            let mut names = items.iter().map(cypher_type_name);
            let inner = match names.next() {
                Some(first) if names.all(|n| n == first) => first,
                _ => "ANY".into(),
            };
            format!("LIST OF {inner}")
        }
        Value::Map(_) => "MAP".into(),
        Value::Node(_) | Value::NodeData(_) => "NODE".into(),
        Value::Relationship(_) | Value::RelData(_) => "RELATIONSHIP".into(),
        Value::Path(_) | Value::PathData(_) => "PATH".into(),
        Value::Point(_) => "POINT".into(),
        Value::Date(_) => "DATE".into(),
        Value::DateTime(_) => "DATE_TIME".into(),
        Value::LocalDateTime(_) => "LOCAL_DATE_TIME".into(),
        Value::Time(_) => "TIME".into(),
        Value::LocalTime(_) => "LOCAL_TIME".into(),
        Value::Duration(_) => "DURATION".into(),
    }
}

/// `apoc.meta.cypher.type(value)`.
pub fn meta_cypher_type(args: &[Value]) -> Result<Value> {
    Ok(Value::String(cypher_type_name(arg(args, 0)).into()))
}

/// `apoc.meta.cypher.types(map)`: each key's type name; the empty map for anything but a map
/// (pass `properties(n)` for an entity).
pub fn meta_cypher_types(args: &[Value]) -> Result<Value> {
    let out: PropertyMap = match arg(args, 0) {
        Value::Map(m) => {
            m.iter().map(|(k, v)| (k.clone(), Value::String(cypher_type_name(v).into()))).collect()
        }
        _ => PropertyMap::new(),
    };
    Ok(Value::Map(out))
}

/// `apoc.create.uuid()`: a random UUID, as `randomUUID()`.
pub fn create_uuid(args: &[Value]) -> Result<Value> {
    super::scalar::random_uuid(args)
}

/// `gds.util.asNode(nodeId)`: the node with that id (a reference; reading a missing node's
/// properties gives null). `gds.util.asNodes(ids)` maps a list.
pub fn gds_as_node(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Int(i) if *i >= 0 => Ok(Value::Node(arbor_model::NodeId(*i as u64))),
        Value::List(items) => items
            .iter()
            .map(|v| gds_as_node(std::slice::from_ref(v)))
            .collect::<Result<_>>()
            .map(Value::List),
        other => Err(type_err("gds.util.asNode", "a node id", other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::String(v.into())
    }

    fn l(items: Vec<Value>) -> Value {
        Value::List(items)
    }

    /// Deep equality including types (`1` is not `1.0`), through the debug rendering.
    #[track_caller]
    fn same_as(a: impl std::fmt::Debug, b: impl std::fmt::Debug) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }

    #[test]
    fn collections_follow_apoc() {
        let v = coll_sort(&[l(vec![s("b"), s("a"), s("c")])]).unwrap();
        same_as(v, l(vec![s("a"), s("b"), s("c")]));
        same_as(coll_sort(&[Value::Null]).unwrap(), Value::Null);
        let set = coll_to_set(&[l(vec![Value::Int(1), Value::Float(1.0), Value::Int(1)])]).unwrap();
        same_as(set, l(vec![Value::Int(1), Value::Float(1.0)]));
        let nested = l(vec![l(vec![Value::Int(1), l(vec![Value::Int(2)])]), Value::Int(3)]);
        let one = coll_flatten(std::slice::from_ref(&nested)).unwrap();
        same_as(one, l(vec![Value::Int(1), l(vec![Value::Int(2)]), Value::Int(3)]));
        let all = coll_flatten(&[nested, Value::Bool(true)]).unwrap();
        same_as(all, l(vec![Value::Int(1), Value::Int(2), Value::Int(3)]));
        same_as(coll_flatten(&[Value::Null]).unwrap(), l(vec![]));
        assert!(coll_sort(&[Value::Int(1)]).is_err());
        let mx = coll_max(&[l(vec![Value::Int(3), Value::Null, Value::Int(7)])]).unwrap();
        same_as(mx, Value::Int(7));
        same_as(coll_min(&[l(vec![])]).unwrap(), Value::Null);
    }

    #[test]
    fn maps_and_types_follow_apoc() {
        let mut m = PropertyMap::new();
        m.insert("a".into(), Value::Int(1));
        m.insert("b".into(), s("x"));
        m.insert("c".into(), Value::Null);
        let clean = map_clean(&[Value::Map(m.clone()), l(vec![s("a")]), l(vec![s("y")])]).unwrap();
        let Value::Map(c) = clean else { panic!("map expected") };
        assert_eq!(c.len(), 1);
        same_as(c.get("b"), Some(&s("x")));
        let types = meta_cypher_types(&[Value::Map(m)]).unwrap();
        let Value::Map(t) = types else { panic!("map expected") };
        same_as(t.get("a"), Some(&s("INTEGER")));
        same_as(t.get("c"), Some(&s("NULL")));
        let ty = meta_cypher_type(&[l(vec![s("a"), Value::Int(1)])]).unwrap();
        same_as(ty, s("LIST OF ANY"));
        same_as(text_join(&[l(vec![s("a"), s("b")]), s("-")]).unwrap(), s("a-b"));
    }
}
