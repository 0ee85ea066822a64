//! The Cypher value enum and entity ids.

use std::sync::Arc;

use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time};

/// Dense node id. Exposed to clients as Bolt `id` and as element id `"n:<id>"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u64);

/// Relationship id. Exposed to clients as Bolt `id` and as element id `"r:<id>"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelId(pub u64);

/// Property maps are ordered by key so output and comparisons are deterministic.
pub use crate::propmap::PropertyMap;

/// A Cypher value.
#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Vec<Value>),
    Map(PropertyMap),
    /// A node reference, valid within the transaction that produced it.
    Node(NodeId),
    /// A relationship reference, valid within the transaction that produced it.
    Relationship(RelId),
    /// A path of references: `nodes.len() == rels.len() + 1`.
    Path(Arc<PathRef>),
    /// A materialized node, as results carry it out of the engine.
    NodeData(Arc<NodeData>),
    /// A materialized relationship.
    RelData(Arc<RelData>),
    /// A materialized path.
    PathData(Arc<PathData>),
    Date(Date),
    Time(Time),
    LocalTime(LocalTime),
    DateTime(DateTime),
    LocalDateTime(LocalDateTime),
    Duration(Duration),
    Point(Point),
}

/// A path as references: node ids and the relationship ids between them, in traversal order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathRef {
    pub nodes: Vec<NodeId>,
    pub rels: Vec<RelId>,
}

/// A node with its labels and properties, as seen by one transaction.
#[derive(Clone, Debug)]
pub struct NodeData {
    pub id: NodeId,
    pub labels: Vec<String>,
    pub properties: PropertyMap,
}

/// A relationship with its endpoints, type and properties. `start`/`end` are as stored, whatever
/// direction a path traverses it in.
#[derive(Clone, Debug)]
pub struct RelData {
    pub id: RelId,
    pub start: NodeId,
    pub end: NodeId,
    pub rel_type: String,
    pub properties: PropertyMap,
}

/// A materialized path: `nodes.len() == rels.len() + 1`; `rels[i]` joins `nodes[i]` and `nodes[i + 1]`
/// in either stored direction.
#[derive(Clone, Debug)]
pub struct PathData {
    pub nodes: Vec<NodeData>,
    pub rels: Vec<RelData>,
}

impl Value {
    /// Builds a string value.
    pub fn str(s: &str) -> Value {
        Value::String(Arc::from(s))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The Cypher type name as Neo4j's error messages print it (`Integer`, `String`, `Node`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Bool(_) => "Boolean",
            Value::Int(_) => "Integer",
            Value::Float(_) => "Float",
            Value::String(_) => "String",
            Value::Bytes(_) => "ByteArray",
            Value::List(_) => "List",
            Value::Map(_) => "Map",
            Value::Node(_) | Value::NodeData(_) => "Node",
            Value::Relationship(_) | Value::RelData(_) => "Relationship",
            Value::Path(_) | Value::PathData(_) => "Path",
            Value::Date(_) => "Date",
            Value::Time(_) => "Time",
            Value::LocalTime(_) => "LocalTime",
            Value::DateTime(_) => "DateTime",
            Value::LocalDateTime(_) => "LocalDateTime",
            Value::Duration(_) => "Duration",
            Value::Point(_) => "Point",
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::str(v)
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(Arc::from(v))
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::List(v)
    }
}
