//! Cypher 25's collection functions (`coll.distinct`, `coll.flatten`, `coll.indexOf`,
//! `coll.insert`, `coll.max`, `coll.min`, `coll.remove`, `coll.sort`; Neo4j 2025.11). Arbor
//! offers them in every Cypher version since no Cypher 5 name clashes with them.
//!
//! A null list gives null. Values compare as in `ORDER BY` (orderability: `1` and `1.0` are
//! the same, nulls are equal to each other), except `coll.indexOf`, which uses `=`.

use std::cmp::Ordering;

use arbor_model::{Result, Value};

use super::{arg, type_err, value_err};

/// A list argument: `None` for null; a non-list is a type error naming the function (shared
/// with the `apoc.coll.*` functions).
pub(super) fn list<'a>(func: &str, v: &'a Value) -> Result<Option<&'a [Value]>> {
    match v {
        Value::Null => Ok(None),
        Value::List(items) => Ok(Some(items)),
        other => Err(type_err(func, "a List", other)),
    }
}

/// An integer argument that must not be null.
fn int(func: &str, v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(type_err(func, "an Integer", other)),
    }
}

/// `coll.distinct(list)`: duplicates removed, first occurrences kept in order.
pub fn distinct(args: &[Value]) -> Result<Value> {
    let Some(items) = list("coll.distinct", arg(args, 0))? else { return Ok(Value::Null) };
    let mut sorted: Vec<&Value> = Vec::with_capacity(items.len());
    let mut out = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        if i % 4096 == 0 {
            crate::interrupt::check()?;
        }
        // `sorted` holds what was kept, in order, so each test is a binary search.
        match sorted.binary_search_by(|k| arbor_model::order(k, v)) {
            Ok(_) => {}
            Err(at) => {
                sorted.insert(at, v);
                out.push(v.clone());
            }
        }
    }
    Ok(Value::List(out))
}

/// `coll.flatten(list[, depth = 1])`: nested lists spliced in, `depth` levels deep.
pub fn flatten(args: &[Value]) -> Result<Value> {
    let Some(items) = list("coll.flatten", arg(args, 0))? else { return Ok(Value::Null) };
    let depth = match arg(args, 1) {
        Value::Null if args.len() < 2 => 1,
        other => int("coll.flatten", other)?,
    };
    if depth < 0 {
        return Err(value_err("coll.flatten", &format!("depth must be 0 or more, got {depth}")));
    }
    let mut out = Vec::with_capacity(items.len());
    flatten_into(items, depth, &mut out)?;
    Ok(Value::List(out))
}

fn flatten_into(items: &[Value], depth: i64, out: &mut Vec<Value>) -> Result<()> {
    crate::interrupt::check()?;
    for v in items {
        match v {
            Value::List(inner) if depth > 0 => flatten_into(inner, depth - 1, out)?,
            other => out.push(other.clone()),
        }
    }
    Ok(())
}

/// `coll.indexOf(list, value)`: the index of the first element `= value`, or -1.
pub fn index_of(args: &[Value]) -> Result<Value> {
    let Some(items) = list("coll.indexOf", arg(args, 0))? else { return Ok(Value::Null) };
    let needle = arg(args, 1);
    let at = items.iter().position(|v| arbor_model::equals(v, needle) == Some(true));
    Ok(Value::Int(at.map_or(-1, |i| i as i64)))
}

/// `coll.insert(list, index, value)`: `value` placed at `index` (0 to the list's size).
pub fn insert(args: &[Value]) -> Result<Value> {
    let Some(items) = list("coll.insert", arg(args, 0))? else { return Ok(Value::Null) };
    let index = int("coll.insert", arg(args, 1))?;
    if index < 0 || index as u64 > items.len() as u64 {
        return Err(value_err(
            "coll.insert",
            &format!("index {index} is out of bounds for a list of size {}", items.len()),
        ));
    }
    let mut out = items.to_vec();
    out.insert(index as usize, arg(args, 2).clone());
    Ok(Value::List(out))
}

/// `coll.remove(list, index)`: the element at `index` (0 to the list's size - 1) removed.
pub fn remove(args: &[Value]) -> Result<Value> {
    let Some(items) = list("coll.remove", arg(args, 0))? else { return Ok(Value::Null) };
    let index = int("coll.remove", arg(args, 1))?;
    if index < 0 || index as u64 >= items.len() as u64 {
        return Err(value_err(
            "coll.remove",
            &format!("index {index} is out of bounds for a list of size {}", items.len()),
        ));
    }
    let mut out = items.to_vec();
    out.remove(index as usize);
    Ok(Value::List(out))
}

/// `coll.min(list)` / `coll.max(list)` (and `apoc.coll.min`/`max`): nulls ignored; null for a
/// list without values.
pub(super) fn extreme(func: &str, args: &[Value], want: Ordering) -> Result<Value> {
    let Some(items) = list(func, arg(args, 0))? else { return Ok(Value::Null) };
    let best = items.iter().filter(|v| !v.is_null()).fold(None::<&Value>, |best, v| match best {
        Some(b) if arbor_model::order(v, b) != want => Some(b),
        _ => Some(v),
    });
    Ok(best.cloned().unwrap_or(Value::Null))
}

pub fn min(args: &[Value]) -> Result<Value> {
    extreme("coll.min", args, Ordering::Less)
}

pub fn max(args: &[Value]) -> Result<Value> {
    extreme("coll.max", args, Ordering::Greater)
}

/// `coll.sort(list)`: ascending in `ORDER BY` order (nulls last).
pub fn sort(args: &[Value]) -> Result<Value> {
    let Some(items) = list("coll.sort", arg(args, 0))? else { return Ok(Value::Null) };
    let mut out = items.to_vec();
    out.sort_by(arbor_model::order);
    Ok(Value::List(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values compared as Cypher's `=` would, with null equal to null (no `PartialEq` on `Value`).
    fn same(a: Value, b: Value) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }

    fn ints(v: &[i64]) -> Value {
        Value::List(v.iter().map(|i| Value::Int(*i)).collect())
    }

    // Goal: each function's result on ordinary input, and its edges (null list, bounds).
    #[test]
    fn collection_functions() {
        same(distinct(&[ints(&[3, 1, 3, 2, 1])]).unwrap(), ints(&[3, 1, 2]));
        let nested = Value::List(vec![Value::Int(1), ints(&[2]), Value::List(vec![ints(&[3])])]);
        same(
            flatten(std::slice::from_ref(&nested)).unwrap(),
            Value::List(vec![Value::Int(1), Value::Int(2), ints(&[3])]),
        );
        same(flatten(&[nested, Value::Int(5)]).unwrap(), ints(&[1, 2, 3]));
        same(index_of(&[ints(&[5, 6]), Value::Int(6)]).unwrap(), Value::Int(1));
        same(index_of(&[ints(&[5, 6]), Value::Int(7)]).unwrap(), Value::Int(-1));
        same(
            insert(&[ints(&[1, 2, 4]), Value::Int(2), Value::Int(3)]).unwrap(),
            ints(&[1, 2, 3, 4]),
        );
        same(insert(&[ints(&[1]), Value::Int(1), Value::Int(2)]).unwrap(), ints(&[1, 2]));
        assert!(insert(&[ints(&[1]), Value::Int(2), Value::Int(2)]).is_err());
        assert!(insert(&[ints(&[1]), Value::Int(-1), Value::Int(2)]).is_err());
        same(remove(&[ints(&[1, 2, 3]), Value::Int(0)]).unwrap(), ints(&[2, 3]));
        assert!(remove(&[ints(&[1, 2, 3]), Value::Int(3)]).is_err());
        same(max(&[ints(&[2, 9, 4])]).unwrap(), Value::Int(9));
        same(min(&[Value::List(vec![Value::Null])]).unwrap(), Value::Null);
        same(sort(&[ints(&[3, 1, 2])]).unwrap(), ints(&[1, 2, 3]));
        same(sort(&[Value::Null]).unwrap(), Value::Null);
        assert!(sort(&[Value::Int(1)]).is_err());
    }
}
