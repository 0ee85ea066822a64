//! `apoc.convert.toJson`, `fromJsonMap`, `fromJsonList` (JSON through `serde_json`), the
//! `apoc.map.*` functions beyond clean/merge/fromPairs, and `apoc.util.md5`/`sha1`/`sha256`
//! (RustCrypto digests of the values' string forms, concatenated, as lower-case hex).

use arbor_model::{Error, PropertyMap, Result, Value};
use serde_json::Value as Json;

use super::super::{arg, convert, type_err};
use super::{list, map};

/// A value as APOC renders it in JSON: temporals and points as their Cypher strings, nodes
/// and relationships as `{id, type, labels|label, properties}` where the value carries them.
fn to_json(v: &Value) -> Result<Json> {
    Ok(match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::String(s) => Json::String(s.to_string()),
        Value::Bytes(b) => Json::Array(b.iter().map(|x| Json::from(*x)).collect()),
        Value::List(items) => Json::Array(items.iter().map(to_json).collect::<Result<_>>()?),
        Value::Map(m) => map_json(m)?,
        Value::Node(id) => entity(id.0, "node", None, None)?,
        Value::Relationship(id) => entity(id.0, "relationship", None, None)?,
        Value::NodeData(n) => {
            let labels = Json::Array(n.labels.iter().map(|l| Json::String(l.clone())).collect());
            entity(n.id.0, "node", Some(("labels", labels)), Some(&n.properties))?
        }
        Value::RelData(r) => {
            let label = Json::String(r.rel_type.clone());
            entity(r.id.0, "relationship", Some(("label", label)), Some(&r.properties))?
        }
        Value::Path(_) | Value::PathData(_) => {
            return Err(Error::argument("apoc.convert.toJson cannot convert a path"));
        }
        other => match convert::to_string(std::slice::from_ref(other))? {
            Value::String(s) => Json::String(s.to_string()),
            _ => Json::Null,
        },
    })
}

fn map_json(m: &PropertyMap) -> Result<Json> {
    let mut out = serde_json::Map::new();
    for (k, v) in m.iter() {
        out.insert(k.as_str().to_string(), to_json(v)?);
    }
    Ok(Json::Object(out))
}

fn entity(
    id: u64,
    kind: &str,
    labels: Option<(&str, Json)>,
    props: Option<&PropertyMap>,
) -> Result<Json> {
    let mut out = serde_json::Map::new();
    out.insert("id".into(), Json::String(id.to_string()));
    out.insert("type".into(), Json::String(kind.into()));
    if let Some((k, v)) = labels {
        out.insert(k.into(), v);
    }
    if let Some(p) = props.filter(|p| !p.is_empty()) {
        out.insert("properties".into(), map_json(p)?);
    }
    Ok(Json::Object(out))
}

/// JSON to a Cypher value: integral numbers that fit are INTEGER, others FLOAT.
fn from_json(j: Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::List(items.into_iter().map(from_json).collect()),
        Json::Object(m) => Value::Map(
            m.into_iter().map(|(k, v)| (arbor_model::Key::from(k), from_json(v))).collect(),
        ),
    }
}

/// `apoc.convert.toJson(value)`: compact JSON text.
pub fn to_json_text(args: &[Value]) -> Result<Value> {
    let j = to_json(arg(args, 0))?;
    Ok(Value::String(j.to_string().into()))
}

/// Parses `text` and follows a JSON path (`$`, `$.a.b`, `$.a[0]`, `$['a']`).
fn parse_at(func: &str, args: &[Value]) -> Result<Option<Json>> {
    let text = match arg(args, 0) {
        Value::Null => return Ok(None),
        Value::String(s) => s,
        other => return Err(type_err(func, "a String", other)),
    };
    let mut j: Json = serde_json::from_str(text)
        .map_err(|e| Error::argument(format!("{func}: the text is not valid JSON: {e}")))?;
    if let Value::String(path) = arg(args, 1) {
        for step in path_steps(func, path)? {
            j = match (j, step) {
                (Json::Object(mut m), Step::Key(k)) => m.remove(&k).unwrap_or(Json::Null),
                (Json::Array(mut a), Step::Index(i)) if i < a.len() => a.swap_remove(i),
                _ => Json::Null,
            };
        }
    }
    Ok(Some(j))
}

enum Step {
    Key(String),
    Index(usize),
}

fn path_steps(func: &str, path: &str) -> Result<Vec<Step>> {
    let bad = || Error::argument(format!("{func}: unsupported JSON path `{path}`"));
    let rest = path.strip_prefix('$').ok_or_else(bad)?;
    let mut steps = Vec::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut k = String::new();
                while let Some(&n) = chars.peek() {
                    if n == '.' || n == '[' {
                        break;
                    }
                    k.push(n);
                    chars.next();
                }
                steps.push(Step::Key(k));
            }
            '[' => {
                let mut inner = String::new();
                for n in chars.by_ref() {
                    if n == ']' {
                        break;
                    }
                    inner.push(n);
                }
                let quoted = inner.trim_matches(|q| q == '\'' || q == '"');
                steps.push(match inner.parse::<usize>() {
                    Ok(i) => Step::Index(i),
                    Err(_) if quoted.len() + 2 == inner.len() => Step::Key(quoted.to_string()),
                    Err(_) => return Err(bad()),
                });
            }
            _ => return Err(bad()),
        }
    }
    Ok(steps)
}

/// `apoc.convert.fromJsonMap(text[, path])`: the JSON object as a map.
pub fn from_json_map(args: &[Value]) -> Result<Value> {
    match parse_at("apoc.convert.fromJsonMap", args)? {
        None | Some(Json::Null) => Ok(Value::Null),
        Some(j @ Json::Object(_)) => Ok(from_json(j)),
        Some(_) => Err(Error::argument("apoc.convert.fromJsonMap: the JSON is not an object")),
    }
}

/// `apoc.convert.fromJsonList(text[, path])`: the JSON array as a list.
pub fn from_json_list(args: &[Value]) -> Result<Value> {
    match parse_at("apoc.convert.fromJsonList", args)? {
        None | Some(Json::Null) => Ok(Value::Null),
        Some(j @ Json::Array(_)) => Ok(from_json(j)),
        Some(_) => Err(Error::argument("apoc.convert.fromJsonList: the JSON is not an array")),
    }
}

/// The keys argument of the `apoc.map.*` functions: strings, nulls skipped.
fn keys<'a>(func: &str, v: &'a Value) -> Result<Vec<&'a str>> {
    let mut out = Vec::new();
    for k in list(func, v)?.unwrap_or(&[]) {
        match k {
            Value::String(s) => out.push(&**s),
            Value::Null => {}
            other => return Err(type_err(func, "a List of Strings", other)),
        }
    }
    Ok(out)
}

/// `apoc.map.setKey(map, key, value)`.
pub fn map_set_key(args: &[Value]) -> Result<Value> {
    let mut m = map("apoc.map.setKey", arg(args, 0))?.cloned().unwrap_or_default();
    match arg(args, 1) {
        Value::String(k) => {
            m.insert(k.to_string().into(), arg(args, 2).clone());
        }
        other => return Err(type_err("apoc.map.setKey", "a String", other)),
    }
    Ok(Value::Map(m))
}

/// `apoc.map.removeKey(map, key)` and `apoc.map.removeKeys(map, keys)`.
pub fn map_remove_keys(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.map.removeKeys";
    let Some(m) = map(F, arg(args, 0))? else { return Ok(Value::Null) };
    let drop = match arg(args, 1) {
        Value::String(k) => vec![&**k],
        other => keys(F, other)?,
    };
    let out = m.iter().filter(|(k, _)| !drop.contains(&k.as_str()));
    Ok(Value::Map(out.map(|(k, v)| (k.clone(), v.clone())).collect()))
}

/// `apoc.map.fromLists(keys, values)`: zipped; the lists must be equally long.
pub fn map_from_lists(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.map.fromLists";
    let ks = keys(F, arg(args, 0))?;
    let vs = list(F, arg(args, 1))?.unwrap_or(&[]);
    if ks.len() != vs.len() {
        return Err(Error::argument(format!(
            "{F}: {} keys and {} values; the lists must have the same length",
            ks.len(),
            vs.len()
        )));
    }
    Ok(Value::Map(
        ks.into_iter().zip(vs).map(|(k, v)| (arbor_model::Key::from(k), v.clone())).collect(),
    ))
}

/// `apoc.map.values(map, keys[, addNullsForMissing = false])`.
pub fn map_values(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.map.values";
    let Some(m) = map(F, arg(args, 0))? else { return Ok(Value::Null) };
    let nulls = matches!(arg(args, 2), Value::Bool(true));
    let out = keys(F, arg(args, 1))?.into_iter().filter_map(|k| match m.get(k) {
        Some(v) => Some(v.clone()),
        None if nulls => Some(Value::Null),
        None => None,
    });
    Ok(Value::List(out.collect()))
}

/// `apoc.map.submap(map, keys[, defaults, fail = true])`: the listed keys; a missing key takes
/// its default, or fails when `fail`.
pub fn map_submap(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.map.submap";
    let Some(m) = map(F, arg(args, 0))? else { return Ok(Value::Null) };
    let defaults = list(F, arg(args, 2))?.unwrap_or(&[]);
    let fail = !matches!(arg(args, 3), Value::Bool(false));
    let mut out = PropertyMap::new();
    for (i, k) in keys(F, arg(args, 1))?.into_iter().enumerate() {
        let v = match (m.get(k), defaults.get(i)) {
            (Some(v), _) => v.clone(),
            (None, Some(d)) => d.clone(),
            (None, None) if fail => {
                return Err(Error::argument(format!("{F}: key `{k}` is not in the map")))
            }
            (None, None) => Value::Null,
        };
        out.insert(k.into(), v);
    }
    Ok(Value::Map(out))
}

/// `apoc.map.mergeList(maps)`: later maps' entries win.
pub fn map_merge_list(args: &[Value]) -> Result<Value> {
    let mut out = PropertyMap::new();
    for m in list("apoc.map.mergeList", arg(args, 0))?.unwrap_or(&[]) {
        if let Some(m) = map("apoc.map.mergeList", m)? {
            for (k, v) in m.iter() {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Value::Map(out))
}

/// The text a digest covers: the values' string forms (null as empty) concatenated.
fn digest_input(func: &str, args: &[Value]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for v in list(func, arg(args, 0))?.unwrap_or(&[]) {
        match convert::to_string_or_null(std::slice::from_ref(v))? {
            Value::String(s) => out.extend_from_slice(s.as_bytes()),
            _ if v.is_null() => {}
            _ => return Err(type_err(func, "a List of simple values", v)),
        }
    }
    Ok(out)
}

fn hex(bytes: &[u8]) -> Value {
    let s: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Value::String(s.into())
}

/// `apoc.util.md5(values)`.
pub fn md5(args: &[Value]) -> Result<Value> {
    use md5::Digest;
    Ok(hex(&md5::Md5::digest(digest_input("apoc.util.md5", args)?)))
}

/// `apoc.util.sha1(values)`.
pub fn sha1(args: &[Value]) -> Result<Value> {
    use sha1::Digest;
    Ok(hex(&sha1::Sha1::digest(digest_input("apoc.util.sha1", args)?)))
}

/// `apoc.util.sha256(values)`.
pub fn sha256(args: &[Value]) -> Result<Value> {
    use sha2::Digest;
    Ok(hex(&sha2::Sha256::digest(digest_input("apoc.util.sha256", args)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(f: fn(&[Value]) -> Result<Value>, args: &[Value]) -> String {
        arbor_model::to_cypher_literal(&f(args).unwrap())
    }

    #[test]
    fn json_round_trips() {
        let text = Value::from(r#"{"a": 1, "b": [1.5, "x", null], "c": {"d": true}}"#);
        let m = from_json_map(std::slice::from_ref(&text)).unwrap();
        assert_eq!(arbor_model::to_cypher_literal(&m), "{a: 1, b: [1.5, 'x', null], c: {d: true}}");
        assert_eq!(call(to_json_text, &[m]), r#"'{"a":1,"b":[1.5,"x",null],"c":{"d":true}}'"#);
        assert_eq!(call(from_json_list, &[text.clone(), Value::from("$.b")]), "[1.5, 'x', null]");
        assert_eq!(call(from_json_map, &[text.clone(), Value::from("$['c']")]), "{d: true}");
        assert!(from_json_list(&[text]).is_err());
        assert!(from_json_map(&[Value::from("{nope")]).is_err());
    }

    #[test]
    fn digests_are_the_known_ones() {
        let abc = Value::List(vec![Value::from("a"), Value::from("bc")]);
        assert_eq!(call(md5, std::slice::from_ref(&abc)), "'900150983cd24fb0d6963f7d28e17f72'");
        assert_eq!(
            call(sha1, std::slice::from_ref(&abc)),
            "'a9993e364706816aba3e25717850c26c9cd0d89d'"
        );
        assert_eq!(
            call(sha256, &[abc]),
            "'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'"
        );
    }
}
