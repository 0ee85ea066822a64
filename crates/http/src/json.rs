//! Cypher values ↔ the Query API's JSON: plain JSON (`application/json`) and Neo4j's typed JSON
//! (`application/vnd.neo4j.query`, every value a `{"$type": ..., "_value": ...}` object).
//! Results are written by [`JsonWriter`], a `ResultWriter` the engine writes each record into
//! (the one way rows leave the engine, as for Bolt); parameters are read into [`Value`]s.
//!
//! Element ids are the ones Bolt uses (`n:<id>`, `r:<id>`). Plain JSON cannot tell a string from
//! a temporal, so temporals, durations and points are written as their Cypher text (WKT with an
//! SRID for points); typed JSON names the type. Parameters are read from either format; a plain
//! JSON number is an Integer when it is written without a fraction or exponent and fits in 64
//! bits, else a Float.

use arbor_engine::{Record, RecordNames};
use arbor_model::result::Parts;
use arbor_model::temporal_build::{parse_duration, parse_temporal, TemporalKind};
use arbor_model::{
    Error, NodeHead, PathPart, PropertyMap, RelHead, ResultWriter, Scalar, Status, Value,
};
use base64::Engine as _;
use serde_json::{Map, Value as Json};

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// A point as WKT with its SRID: `SRID=4326;POINT (12.5 56.1)`, `SRID=9157;POINT Z (1 2 3)`.
fn point_wkt(p: &arbor_model::Point) -> String {
    let f = |x: f64| arbor_model::format::format_float(x);
    match p.z {
        Some(z) => format!("SRID={};POINT Z ({} {} {})", p.srid, f(p.x), f(p.y), f(z)),
        None => format!("SRID={};POINT ({} {})", p.srid, f(p.x), f(p.y)),
    }
}

/// A temporal's Cypher text.
fn text_of(s: Scalar<'_>) -> String {
    arbor_model::to_string_value(&Value::from(s)).unwrap_or_default()
}

fn float_json(f: f64) -> Json {
    serde_json::Number::from_f64(f)
        .map_or_else(|| Json::String(arbor_model::format::format_float(f)), Json::Number)
}

fn typed_of(t: &str, v: Json) -> Json {
    let mut m = Map::with_capacity(2);
    m.insert("$type".into(), Json::String(t.into()));
    m.insert("_value".into(), v);
    Json::Object(m)
}

fn plain_scalar(s: Scalar<'_>) -> Json {
    match s {
        Scalar::Null => Json::Null,
        Scalar::Bool(b) => Json::Bool(b),
        Scalar::Int(i) => Json::from(i),
        Scalar::Float(f) => float_json(f),
        Scalar::String(s) => Json::String(s.to_string()),
        Scalar::Bytes(b) => Json::String(b64().encode(b)),
        Scalar::Point(p) => Json::String(point_wkt(p)),
        Scalar::Date(_)
        | Scalar::Time(_)
        | Scalar::LocalTime(_)
        | Scalar::DateTime(_)
        | Scalar::LocalDateTime(_)
        | Scalar::Duration(_) => Json::String(text_of(s)),
    }
}

fn typed_scalar(s: Scalar<'_>) -> Json {
    let (t, v) = match s {
        Scalar::Null => ("Null", Json::Null),
        Scalar::Bool(b) => ("Boolean", Json::Bool(b)),
        Scalar::Int(i) => ("Integer", Json::String(i.to_string())),
        Scalar::Float(f) => ("Float", Json::String(arbor_model::format::format_float(f))),
        Scalar::String(s) => ("String", Json::String(s.to_string())),
        Scalar::Bytes(b) => ("Base64", Json::String(b64().encode(b))),
        Scalar::Point(p) => ("Point", Json::String(point_wkt(p))),
        Scalar::Date(_) => ("Date", Json::String(text_of(s))),
        Scalar::Time(_) => ("Time", Json::String(text_of(s))),
        Scalar::LocalTime(_) => ("LocalTime", Json::String(text_of(s))),
        Scalar::LocalDateTime(_) => ("LocalDateTime", Json::String(text_of(s))),
        Scalar::Duration(_) => ("Duration", Json::String(text_of(s))),
        Scalar::DateTime(_) => {
            let text = text_of(s);
            // A named zone prints as `...+01:00[Europe/Berlin]`.
            let t = if text.ends_with(']') { "ZonedDateTime" } else { "OffsetDateTime" };
            (t, Json::String(text))
        }
    };
    typed_of(t, v)
}

/// A list or map being written: how many items or entries are still to come. `wrap` is false
/// for an entity's property map, which typed JSON writes as a bare object.
enum Open {
    List { left: usize, items: Vec<Json> },
    Map { left: usize, entries: Map<String, Json>, key: Option<String>, wrap: bool },
}

/// The [`ResultWriter`] that writes result rows as plain or typed JSON, straight from the
/// engine's records (no owned row in between): write a row, then [`take`](Self::take) its
/// values.
pub struct JsonWriter {
    typed: bool,
    done: Vec<Json>,
    open: Vec<Open>,
}

impl JsonWriter {
    /// `typed`: Neo4j's typed JSON (`application/vnd.neo4j.query`); else plain JSON.
    pub fn new(typed: bool) -> JsonWriter {
        JsonWriter { typed, done: Vec::new(), open: Vec::new() }
    }

    /// The values written since the last call; fails if a list or map is incomplete.
    pub fn take(&mut self) -> Result<Vec<Json>, Error> {
        if !self.open.is_empty() {
            self.open.clear();
            self.done.clear();
            return Err(Error::internal("a JSON row ended inside a list or map"));
        }
        Ok(std::mem::take(&mut self.done))
    }

    fn wrap(&self, t: &str, v: Json) -> Json {
        if self.typed {
            typed_of(t, v)
        } else {
            v
        }
    }

    fn push(&mut self, mut v: Json) -> Result<(), Error> {
        while let Some(top) = self.open.last_mut() {
            let left = match top {
                Open::List { left, items } => {
                    items.push(v);
                    left
                }
                Open::Map { left, entries, key, .. } => {
                    let Some(k) = key.take() else {
                        return Err(Error::internal("a JSON map value written without its key"));
                    };
                    entries.insert(k, v);
                    left
                }
            };
            *left -= 1;
            if *left > 0 {
                return Ok(());
            }
            v = match self.open.pop() {
                Some(Open::List { items, .. }) => self.wrap("List", Json::Array(items)),
                Some(Open::Map { entries, wrap: true, .. }) => {
                    self.wrap("Map", Json::Object(entries))
                }
                Some(Open::Map { entries, .. }) => Json::Object(entries),
                None => return Ok(()),
            };
        }
        self.done.push(v);
        Ok(())
    }

    /// The `n` properties an entity's callback writes, as a bare object.
    fn properties(&self, n: usize, write: Parts<'_, ()>) -> Result<Json, Error> {
        let mut sub = JsonWriter::new(self.typed);
        if n == 0 {
            return Ok(Json::Object(Map::new()));
        }
        sub.open.push(Open::Map {
            left: n,
            entries: Map::with_capacity(n),
            key: None,
            wrap: false,
        });
        write(&mut sub, ())?;
        sub.take()?
            .pop()
            .ok_or_else(|| Error::internal("an entity wrote fewer properties than it announced"))
    }
}

/// An object of `fields`, in order.
fn object<const N: usize>(fields: [(&str, Json); N]) -> Json {
    let mut m = Map::with_capacity(N);
    for (k, v) in fields {
        m.insert(k.to_string(), v);
    }
    Json::Object(m)
}

impl ResultWriter for JsonWriter {
    fn scalar(&mut self, v: Scalar<'_>) -> Result<(), Error> {
        let j = if self.typed { typed_scalar(v) } else { plain_scalar(v) };
        self.push(j)
    }

    fn list(&mut self, len: usize) -> Result<(), Error> {
        if len == 0 {
            let empty = self.wrap("List", Json::Array(Vec::new()));
            return self.push(empty);
        }
        self.open.push(Open::List { left: len, items: Vec::with_capacity(len) });
        Ok(())
    }

    fn map(&mut self, len: usize) -> Result<(), Error> {
        if len == 0 {
            let empty = self.wrap("Map", Json::Object(Map::new()));
            return self.push(empty);
        }
        self.open.push(Open::Map {
            left: len,
            entries: Map::with_capacity(len),
            key: None,
            wrap: true,
        });
        Ok(())
    }

    fn key(&mut self, key: &str) -> Result<(), Error> {
        match self.open.last_mut() {
            Some(Open::Map { key: slot @ None, .. }) => {
                *slot = Some(key.to_string());
                Ok(())
            }
            _ => Err(Error::internal(format!("JSON key `{key}` written outside a map entry"))),
        }
    }

    fn node(&mut self, head: NodeHead<'_>, properties: Parts<'_, ()>) -> Result<(), Error> {
        let props = self.properties(head.properties, properties)?;
        let labels = Json::Array(head.labels.iter().map(|l| Json::String(l.to_string())).collect());
        let id = Json::String(format!("n:{}", head.id.0));
        let node = if self.typed {
            typed_of(
                "Node",
                object([("_element_id", id), ("_labels", labels), ("_properties", props)]),
            )
        } else {
            object([("elementId", id), ("labels", labels), ("properties", props)])
        };
        self.push(node)
    }

    fn relationship(&mut self, head: RelHead<'_>, properties: Parts<'_, ()>) -> Result<(), Error> {
        let props = self.properties(head.properties, properties)?;
        let id = Json::String(format!("r:{}", head.id.0));
        let start = Json::String(format!("n:{}", head.start.0));
        let end = Json::String(format!("n:{}", head.end.0));
        let rel_type = Json::String(head.rel_type.to_string());
        let rel = if self.typed {
            typed_of(
                "Relationship",
                object([
                    ("_element_id", id),
                    ("_start_node_element_id", start),
                    ("_end_node_element_id", end),
                    ("_type", rel_type),
                    ("_properties", props),
                ]),
            )
        } else {
            object([
                ("elementId", id),
                ("startNodeElementId", start),
                ("endNodeElementId", end),
                ("type", rel_type),
                ("properties", props),
            ])
        };
        self.push(rel)
    }

    /// Node, relationship, node, ... in walking order.
    fn path(
        &mut self,
        _nodes: usize,
        _rels: usize,
        steps: &[i64],
        parts: Parts<'_, PathPart>,
    ) -> Result<(), Error> {
        let mut sub = JsonWriter::new(self.typed);
        parts(&mut sub, PathPart::Nodes)?;
        let nodes = sub.take()?;
        parts(&mut sub, PathPart::Relationships)?;
        let rels = sub.take()?;
        let first = nodes.first().ok_or_else(|| Error::internal("a path without nodes"))?;
        let mut walk = Vec::with_capacity(steps.len() + 1);
        walk.push(first.clone());
        for step in steps.chunks_exact(2) {
            let rel = (step[0].unsigned_abs() as usize).checked_sub(1).and_then(|i| rels.get(i));
            let node = usize::try_from(step[1]).ok().and_then(|i| nodes.get(i));
            let (Some(rel), Some(node)) = (rel, node) else {
                return Err(Error::internal(format!("a path step {step:?} points past its parts")));
            };
            walk.push(rel.clone());
            walk.push(node.clone());
        }
        let path = self.wrap("Path", Json::Array(walk));
        self.push(path)
    }
}

/// `values` as JSON, written as the engine writes result rows (a summary's plan; tests).
pub fn values_json(values: &[Value], typed: bool) -> Result<Vec<Json>, Error> {
    let mut w = JsonWriter::new(typed);
    Record::detached(values, &mut RecordNames::default()).write(&mut w)?;
    w.take()
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
    use arbor_model::{NodeData, NodeId};
    use serde_json::json;
    use std::sync::Arc;

    fn plain(v: &Value) -> Json {
        values_json(std::slice::from_ref(v), false).unwrap().remove(0)
    }

    fn typed(v: &Value) -> Json {
        values_json(std::slice::from_ref(v), true).unwrap().remove(0)
    }

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
        let nested = Value::List(vec![Value::List(vec![]), n.clone()]);
        assert_eq!(typed(&nested)["_value"][0], json!({"$type": "List", "_value": []}));
        assert_eq!(plain(&nested)[1]["labels"], json!(["Person"]));
    }

    /// A path is node, relationship, node, ... in walking order, against the stored direction
    /// included; inside a transaction, after its own writes.
    #[test]
    fn paths_walk_in_order_from_a_session() {
        let db = arbor_engine::Database::in_memory();
        let mut s = db.session();
        s.begin(arbor_engine::TxConfig::default()).unwrap();
        s.run("CREATE (:A {i: 1})<-[:R {w: 2}]-(:B)", PropertyMap::new(), Default::default())
            .unwrap();
        let _ = s.discard(None, -1).unwrap();
        s.run("MATCH p = (:A)--(:B) RETURN p, {p: p}", PropertyMap::new(), Default::default())
            .unwrap();
        let mut rows = Vec::new();
        let mut w = JsonWriter::new(false);
        s.pull_records(None, -1, &mut |r| {
            r.write(&mut w)?;
            rows.push(w.take()?);
            Ok(())
        })
        .unwrap();
        let p = &rows[0][0];
        assert_eq!(p[0]["labels"], json!(["A"]));
        assert_eq!(p[1]["type"], json!("R"));
        assert_eq!(p[1]["startNodeElementId"], p[2]["elementId"]);
        assert_eq!(p[2]["labels"], json!(["B"]));
        assert_eq!(rows[0][1]["p"], *p);
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
