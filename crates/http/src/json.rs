//! Cypher values ↔ the Query API's JSON: plain JSON (`application/json`) and Neo4j's typed JSON
//! (`application/vnd.neo4j.query`, every value a `{"$type": ..., "_value": ...}` object).
//!
//! Element ids are the ones Bolt uses (`n:<id>`, `r:<id>`). Plain JSON cannot tell a string from
//! a temporal, so temporals, durations and points are written as their Cypher text (WKT with an
//! SRID for points); typed JSON names the type. Parameters are read from either format; a plain
//! JSON number is an Integer when it is written without a fraction or exponent and fits in 64
//! bits, else a Float.

use arbor_model::temporal_build::{parse_duration, parse_temporal, TemporalKind};
use arbor_model::{Error, NodeData, PathData, PropertyMap, RelData, Status, Value};
use base64::Engine as _;
use serde_json::{json, Map, Value as Json};

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

fn node_id(n: &NodeData) -> String {
    format!("n:{}", n.id.0)
}

fn rel_id(r: &RelData) -> String {
    format!("r:{}", r.id.0)
}

/// A point as WKT with its SRID: `SRID=4326;POINT (12.5 56.1)`, `SRID=9157;POINT Z (1 2 3)`.
fn point_wkt(p: &arbor_model::Point) -> String {
    let f = |x: f64| arbor_model::format::format_float(x);
    match p.z {
        Some(z) => format!("SRID={};POINT Z ({} {} {})", p.srid, f(p.x), f(p.y), f(z)),
        None => format!("SRID={};POINT ({} {})", p.srid, f(p.x), f(p.y)),
    }
}

fn text_of(v: &Value) -> String {
    arbor_model::to_string_value(v).unwrap_or_default()
}

fn float_json(f: f64) -> Json {
    serde_json::Number::from_f64(f)
        .map_or_else(|| Json::String(arbor_model::format::format_float(f)), Json::Number)
}

/// A value as plain JSON.
pub fn plain(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => json!(i),
        Value::Float(f) => float_json(*f),
        Value::String(s) => Json::String(s.to_string()),
        Value::Bytes(b) => Json::String(b64().encode(b)),
        Value::List(items) => Json::Array(items.iter().map(plain).collect()),
        Value::Map(m) => Json::Object(plain_map(m)),
        Value::NodeData(n) => plain_node(n),
        Value::RelData(r) => plain_rel(r),
        Value::PathData(p) => Json::Array(path_parts(p, plain_node, plain_rel)),
        Value::Node(id) => Json::String(format!("n:{}", id.0)),
        Value::Relationship(id) => Json::String(format!("r:{}", id.0)),
        Value::Path(p) => {
            Json::Array(p.nodes.iter().map(|n| json!(format!("n:{}", n.0))).collect())
        }
        Value::Point(p) => Json::String(point_wkt(p)),
        Value::Date(_)
        | Value::Time(_)
        | Value::LocalTime(_)
        | Value::DateTime(_)
        | Value::LocalDateTime(_)
        | Value::Duration(_) => Json::String(text_of(v)),
    }
}

fn plain_map(m: &PropertyMap) -> Map<String, Json> {
    m.iter().map(|(k, v)| (k.to_string(), plain(v))).collect()
}

fn plain_node(n: &NodeData) -> Json {
    json!({"elementId": node_id(n), "labels": n.labels, "properties": plain_map(&n.properties)})
}

fn plain_rel(r: &RelData) -> Json {
    json!({
        "elementId": rel_id(r),
        "startNodeElementId": format!("n:{}", r.start.0),
        "endNodeElementId": format!("n:{}", r.end.0),
        "type": r.rel_type,
        "properties": plain_map(&r.properties),
    })
}

/// Node, relationship, node, ... in path order.
fn path_parts(p: &PathData, node: fn(&NodeData) -> Json, rel: fn(&RelData) -> Json) -> Vec<Json> {
    let mut out = Vec::with_capacity(p.nodes.len() + p.rels.len());
    for (i, n) in p.nodes.iter().enumerate() {
        if i > 0 {
            if let Some(r) = p.rels.get(i - 1) {
                out.push(rel(r));
            }
        }
        out.push(node(n));
    }
    out
}

fn typed_of(t: &str, v: Json) -> Json {
    json!({"$type": t, "_value": v})
}

/// A value as typed JSON.
pub fn typed(v: &Value) -> Json {
    match v {
        Value::Null => typed_of("Null", Json::Null),
        Value::Bool(b) => typed_of("Boolean", Json::Bool(*b)),
        Value::Int(i) => typed_of("Integer", Json::String(i.to_string())),
        Value::Float(f) => typed_of("Float", Json::String(arbor_model::format::format_float(*f))),
        Value::String(s) => typed_of("String", Json::String(s.to_string())),
        Value::Bytes(b) => typed_of("Base64", Json::String(b64().encode(b))),
        Value::List(items) => typed_of("List", Json::Array(items.iter().map(typed).collect())),
        Value::Map(m) => typed_of("Map", Json::Object(typed_map(m))),
        Value::NodeData(n) => typed_node(n),
        Value::RelData(r) => typed_rel(r),
        Value::PathData(p) => typed_of("Path", Json::Array(path_parts(p, typed_node, typed_rel))),
        Value::Node(_) | Value::Relationship(_) | Value::Path(_) => typed_of("String", plain(v)),
        Value::Point(p) => typed_of("Point", Json::String(point_wkt(p))),
        Value::Date(_) => typed_of("Date", Json::String(text_of(v))),
        Value::Time(_) => typed_of("Time", Json::String(text_of(v))),
        Value::LocalTime(_) => typed_of("LocalTime", Json::String(text_of(v))),
        Value::LocalDateTime(_) => typed_of("LocalDateTime", Json::String(text_of(v))),
        Value::Duration(_) => typed_of("Duration", Json::String(text_of(v))),
        Value::DateTime(_) => {
            let text = text_of(v);
            // A named zone prints as `...+01:00[Europe/Berlin]`.
            let t = if text.ends_with(']') { "ZonedDateTime" } else { "OffsetDateTime" };
            typed_of(t, Json::String(text))
        }
    }
}

fn typed_map(m: &PropertyMap) -> Map<String, Json> {
    m.iter().map(|(k, v)| (k.to_string(), typed(v))).collect()
}

fn typed_node(n: &NodeData) -> Json {
    typed_of(
        "Node",
        json!({"_element_id": node_id(n), "_labels": n.labels, "_properties": typed_map(&n.properties)}),
    )
}

fn typed_rel(r: &RelData) -> Json {
    typed_of(
        "Relationship",
        json!({
            "_element_id": rel_id(r),
            "_start_node_element_id": format!("n:{}", r.start.0),
            "_end_node_element_id": format!("n:{}", r.end.0),
            "_type": r.rel_type,
            "_properties": typed_map(&r.properties),
        }),
    )
}

fn bad_param(message: String) -> Error {
    Error::new(Status::RequestInvalid, message)
}

/// Parameters from plain JSON.
pub fn from_plain(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::str(s),
        Json::Array(items) => Value::List(items.iter().map(from_plain).collect()),
        Json::Object(m) => Value::Map(PropertyMap::from_entries(
            m.iter().map(|(k, v)| (k.as_str().into(), from_plain(v))).collect(),
        )),
    }
}

/// Parameters from typed JSON; anything else is `Neo.ClientError.Request.Invalid` naming it.
pub fn from_typed(j: &Json) -> Result<Value, Error> {
    let (Some(Json::String(t)), Some(v)) = (j.get("$type"), j.get("_value")) else {
        return Err(bad_param(format!(
            "a typed JSON value needs `$type` and `_value`, found {}",
            truncated(j)
        )));
    };
    let text =
        || v.as_str().ok_or_else(|| bad_param(format!("a {t} value must be a string, found {v}")));
    let temporal = |kind| text().and_then(|s| parse_temporal(kind, s));
    Ok(match t.as_str() {
        "Null" => Value::Null,
        "Boolean" => Value::Bool(
            v.as_bool()
                .ok_or_else(|| bad_param(format!("a Boolean must be true or false, found {v}")))?,
        ),
        "Integer" => Value::Int(
            text()?.parse().map_err(|_| bad_param(format!("`{v}` is not a 64-bit Integer")))?,
        ),
        "Float" => {
            Value::Float(text()?.parse().map_err(|_| bad_param(format!("`{v}` is not a Float")))?)
        }
        "String" => Value::str(text()?),
        "Base64" => Value::Bytes(
            b64().decode(text()?).map_err(|e| bad_param(format!("Base64 value: {e}")))?.into(),
        ),
        "List" => {
            let items = v
                .as_array()
                .ok_or_else(|| bad_param(format!("a List must be an array, found {v}")))?;
            Value::List(items.iter().map(from_typed).collect::<Result<_, _>>()?)
        }
        "Map" => {
            let m = v
                .as_object()
                .ok_or_else(|| bad_param(format!("a Map must be an object, found {v}")))?;
            let mut entries = Vec::with_capacity(m.len());
            for (k, x) in m {
                entries.push((k.as_str().into(), from_typed(x)?));
            }
            Value::Map(PropertyMap::from_entries(entries))
        }
        "Date" => temporal(TemporalKind::Date)?,
        "Time" => temporal(TemporalKind::Time)?,
        "LocalTime" => temporal(TemporalKind::LocalTime)?,
        "LocalDateTime" => temporal(TemporalKind::LocalDateTime)?,
        "OffsetDateTime" | "ZonedDateTime" => temporal(TemporalKind::DateTime)?,
        "Duration" => Value::Duration(parse_duration(text()?)?),
        other => {
            return Err(bad_param(format!(
                "typed JSON parameters of type `{other}` are not supported"
            )))
        }
    })
}

fn truncated(j: &Json) -> String {
    let s = j.to_string();
    if s.len() > 80 {
        format!("{}...", &s[..s.floor_char_boundary(80)])
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_model::NodeId;
    use std::sync::Arc;

    #[test]
    fn integers_and_floats_keep_their_types_in_both_directions() {
        assert_eq!(typed(&Value::Int(42)), json!({"$type": "Integer", "_value": "42"}));
        assert_eq!(typed(&Value::Float(1.5)), json!({"$type": "Float", "_value": "1.5"}));
        assert_eq!(plain(&Value::Int(42)), json!(42));
        assert!(matches!(from_plain(&json!(42)), Value::Int(42)));
        assert!(matches!(from_plain(&json!(42.0)), Value::Float(f) if f == 42.0));
        let back = from_typed(&json!({"$type": "Integer", "_value": "-7"})).unwrap();
        assert!(matches!(back, Value::Int(-7)));
    }

    #[test]
    fn nodes_have_the_documented_shapes() {
        let mut props = PropertyMap::new();
        props.insert("name".into(), Value::str("Phil"));
        let n = Value::NodeData(Arc::new(NodeData {
            id: NodeId(3),
            labels: vec!["Person".into()],
            properties: props,
        }));
        assert_eq!(
            plain(&n),
            json!({"elementId": "n:3", "labels": ["Person"], "properties": {"name": "Phil"}})
        );
        assert_eq!(
            typed(&n),
            json!({"$type": "Node", "_value": {"_element_id": "n:3", "_labels": ["Person"],
                "_properties": {"name": {"$type": "String", "_value": "Phil"}}}})
        );
    }

    #[test]
    fn typed_parameters_are_checked() {
        let d = from_typed(&json!({"$type": "Date", "_value": "2024-01-01"})).unwrap();
        assert_eq!(typed(&d), json!({"$type": "Date", "_value": "2024-01-01"}));
        let e = from_typed(&json!({"$type": "Integer", "_value": "x"})).unwrap_err();
        assert_eq!(e.status, Status::RequestInvalid);
        assert!(from_typed(&json!({"_value": 1})).is_err());
        assert!(from_typed(&json!({"$type": "Node", "_value": {}})).is_err());
    }
}
