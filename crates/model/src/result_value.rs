//! [`ResultValue`]: a result value as it leaves the engine, owned and with every entity
//! materialised, and [`ResultBuilder`], the [`ResultWriter`] that builds it.
//!
//! The engine hands rows out only by writing them into a [`ResultWriter`]; a consumer that
//! wants owned rows (the embedded API, the HTTP Query API, the test runners) writes them into
//! a [`ResultBuilder`]. [`ResultValue`] has no variant for a transaction-bound reference
//! (`Value::Node(NodeId)` and its kin), so an owned row cannot carry one by construction.
//! [`ResultValue::write`] writes one back into any writer (a Bolt or JSON encoder), and
//! `Value::from` turns one into a [`Value`] for code that computes with values (tests).

use std::sync::Arc;

use crate::result::{NodeHead, PathLayout, PathPart, RelHead, ResultWriter, Scalar};
use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time};
use crate::{Error, Key, KeyOrder, NodeData, NodeId, PathData, PropertyMap, RelData, RelId};
use crate::{Result, Value};

/// A value of a result row: [`Value`] without its three transaction-bound reference variants.
/// Entities are materialised; their properties hold stored values (scalars and lists of
/// scalars) only.
#[derive(Clone, Debug)]
pub enum ResultValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Vec<ResultValue>),
    /// Entries in display order: a `LOAD CSV` row keeps its header's order, other maps are
    /// sorted by key.
    Map(Vec<(Key, ResultValue)>),
    Node(Arc<NodeData>),
    Relationship(Arc<RelData>),
    Path(Arc<PathData>),
    Date(Date),
    Time(Time),
    LocalTime(LocalTime),
    DateTime(DateTime),
    LocalDateTime(LocalDateTime),
    Duration(Duration),
    Point(Point),
}

impl ResultValue {
    pub fn is_null(&self) -> bool {
        matches!(self, ResultValue::Null)
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            ResultValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            ResultValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The entry `key` of a map (`None` for a missing key or a value that is no map).
    pub fn get(&self, key: &str) -> Option<&ResultValue> {
        match self {
            ResultValue::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The Cypher type name, as [`Value::type_name`] prints it.
    pub fn type_name(&self) -> &'static str {
        match self {
            ResultValue::List(_) => "List",
            ResultValue::Map(_) => "Map",
            ResultValue::Node(_) => "Node",
            ResultValue::Relationship(_) => "Relationship",
            ResultValue::Path(_) => "Path",
            other => other.scalar().map_or("Map", |s| Value::from(s).type_name()),
        }
    }

    /// This value as a scalar, or `None` for a list, a map or an entity.
    pub fn scalar(&self) -> Option<Scalar<'_>> {
        Some(match self {
            ResultValue::Null => Scalar::Null,
            ResultValue::Bool(b) => Scalar::Bool(*b),
            ResultValue::Int(i) => Scalar::Int(*i),
            ResultValue::Float(f) => Scalar::Float(*f),
            ResultValue::String(s) => Scalar::String(s),
            ResultValue::Bytes(b) => Scalar::Bytes(b),
            ResultValue::Date(d) => Scalar::Date(d),
            ResultValue::Time(t) => Scalar::Time(t),
            ResultValue::LocalTime(t) => Scalar::LocalTime(t),
            ResultValue::DateTime(t) => Scalar::DateTime(t),
            ResultValue::LocalDateTime(t) => Scalar::LocalDateTime(t),
            ResultValue::Duration(d) => Scalar::Duration(d),
            ResultValue::Point(p) => Scalar::Point(p),
            ResultValue::List(_)
            | ResultValue::Map(_)
            | ResultValue::Node(_)
            | ResultValue::Relationship(_)
            | ResultValue::Path(_) => return None,
        })
    }

    /// Writes this value into `w`, as the engine writes the row it came from.
    pub fn write(&self, w: &mut dyn ResultWriter) -> Result<()> {
        match self {
            ResultValue::List(items) => {
                w.list(items.len())?;
                items.iter().try_for_each(|x| x.write(w))
            }
            ResultValue::Map(entries) => {
                w.map(entries.len())?;
                for (k, x) in entries {
                    w.key(k)?;
                    x.write(w)?;
                }
                Ok(())
            }
            ResultValue::Node(n) => write_node(n, w),
            ResultValue::Relationship(r) => write_rel(r, w),
            ResultValue::Path(p) => write_path(p, w),
            scalar => match scalar.scalar() {
                Some(s) => w.scalar(s),
                None => Err(Error::internal("a result value is neither scalar nor composite")),
            },
        }
    }
}

impl From<Scalar<'_>> for ResultValue {
    fn from(s: Scalar<'_>) -> ResultValue {
        match s {
            Scalar::Null => ResultValue::Null,
            Scalar::Bool(b) => ResultValue::Bool(b),
            Scalar::Int(i) => ResultValue::Int(i),
            Scalar::Float(f) => ResultValue::Float(f),
            Scalar::String(s) => ResultValue::String(Arc::from(s)),
            Scalar::Bytes(b) => ResultValue::Bytes(Arc::from(b)),
            Scalar::Date(d) => ResultValue::Date(*d),
            Scalar::Time(t) => ResultValue::Time(*t),
            Scalar::LocalTime(t) => ResultValue::LocalTime(*t),
            Scalar::DateTime(t) => ResultValue::DateTime(t.clone()),
            Scalar::LocalDateTime(t) => ResultValue::LocalDateTime(*t),
            Scalar::Duration(d) => ResultValue::Duration(*d),
            Scalar::Point(p) => ResultValue::Point(*p),
        }
    }
}

impl From<Scalar<'_>> for Value {
    fn from(s: Scalar<'_>) -> Value {
        match s {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Int(i) => Value::Int(i),
            Scalar::Float(f) => Value::Float(f),
            Scalar::String(s) => Value::String(Arc::from(s)),
            Scalar::Bytes(b) => Value::Bytes(Arc::from(b)),
            Scalar::Date(d) => Value::Date(*d),
            Scalar::Time(t) => Value::Time(*t),
            Scalar::LocalTime(t) => Value::LocalTime(*t),
            Scalar::DateTime(t) => Value::DateTime(t.clone()),
            Scalar::LocalDateTime(t) => Value::LocalDateTime(*t),
            Scalar::Duration(d) => Value::Duration(*d),
            Scalar::Point(p) => Value::Point(*p),
        }
    }
}

/// A result value as a [`Value`] (entities as `Value::NodeData` ...): for code that computes
/// with results, such as tests comparing them.
impl From<ResultValue> for Value {
    fn from(v: ResultValue) -> Value {
        match v {
            ResultValue::List(items) => Value::List(items.into_iter().map(Value::from).collect()),
            ResultValue::Map(entries) => Value::Map(map_of(entries)),
            ResultValue::Node(n) => Value::NodeData(n),
            ResultValue::Relationship(r) => Value::RelData(r),
            ResultValue::Path(p) => Value::PathData(p),
            ResultValue::Null => Value::Null,
            ResultValue::Bool(b) => Value::Bool(b),
            ResultValue::Int(i) => Value::Int(i),
            ResultValue::Float(f) => Value::Float(f),
            ResultValue::String(s) => Value::String(s),
            ResultValue::Bytes(b) => Value::Bytes(b),
            ResultValue::Date(d) => Value::Date(d),
            ResultValue::Time(t) => Value::Time(t),
            ResultValue::LocalTime(t) => Value::LocalTime(t),
            ResultValue::DateTime(t) => Value::DateTime(t),
            ResultValue::LocalDateTime(t) => Value::LocalDateTime(t),
            ResultValue::Duration(d) => Value::Duration(d),
            ResultValue::Point(p) => Value::Point(p),
        }
    }
}

/// A property map of `entries` given in display order, keeping that order when it is not the
/// key order.
fn map_of(entries: Vec<(Key, ResultValue)>) -> PropertyMap {
    let sorted = entries.windows(2).all(|w| w[0].0 < w[1].0);
    let shown: Vec<Key> =
        if sorted { Vec::new() } else { entries.iter().map(|(k, _)| k.clone()).collect() };
    let map =
        PropertyMap::from_entries(entries.into_iter().map(|(k, v)| (k, Value::from(v))).collect());
    if sorted {
        map
    } else {
        map.with_order(Arc::new(KeyOrder::from(shown)))
    }
}

/// Writes a stored property value: storage holds scalars and lists of scalars only, so
/// anything else is a storage bug, reported as such.
pub fn write_stored(v: &Value, w: &mut dyn ResultWriter) -> Result<()> {
    if let Some(s) = Scalar::of(v) {
        return w.scalar(s);
    }
    match v {
        Value::List(items) => {
            w.list(items.len())?;
            items.iter().try_for_each(|x| write_stored(x, w))
        }
        other => Err(Error::internal(format!(
            "a stored property holds a {}, which storage cannot hold",
            other.type_name()
        ))),
    }
}

fn write_properties(props: &PropertyMap, w: &mut dyn ResultWriter) -> Result<()> {
    for (k, x) in props.iter() {
        w.key(k)?;
        write_stored(x, w)?;
    }
    Ok(())
}

fn write_node(n: &NodeData, w: &mut dyn ResultWriter) -> Result<()> {
    let labels: Vec<&str> = n.labels.iter().map(String::as_str).collect();
    let head = NodeHead { id: n.id, labels: &labels, properties: n.properties.len() };
    w.node(head, &mut |w, ()| write_properties(&n.properties, w))
}

fn write_rel(r: &RelData, w: &mut dyn ResultWriter) -> Result<()> {
    let head = RelHead {
        id: r.id,
        start: r.start,
        end: r.end,
        rel_type: &r.rel_type,
        properties: r.properties.len(),
    };
    w.relationship(head, &mut |w, ()| write_properties(&r.properties, w))
}

fn write_path(p: &PathData, w: &mut dyn ResultWriter) -> Result<()> {
    let ids: Vec<NodeId> = p.nodes.iter().map(|n| n.id).collect();
    let rels: Vec<(RelId, NodeId)> = p.rels.iter().map(|r| (r.id, r.start)).collect();
    let layout = PathLayout::new(&ids, &rels);
    let (nodes, rels) = (layout.node_order.len(), layout.rel_order.len());
    w.path(nodes, rels, &layout.steps, &mut |w, part| match part {
        PathPart::Nodes => layout.node_order.iter().try_for_each(|&i| write_node(&p.nodes[i], w)),
        PathPart::Relationships => {
            layout.rel_order.iter().try_for_each(|&i| write_rel(&p.rels[i], w))
        }
    })
}

/// A list or map being written: how many items or entries are still to come.
enum Open {
    List { left: usize, items: Vec<ResultValue> },
    Map { left: usize, entries: Vec<(Key, ResultValue)>, key: Option<Key> },
}

/// The [`ResultWriter`] that builds owned [`ResultValue`]s: write a row into it, then
/// [`take`](Self::take) its values.
#[derive(Default)]
pub struct ResultBuilder {
    done: Vec<ResultValue>,
    open: Vec<Open>,
}

impl ResultBuilder {
    pub fn new() -> ResultBuilder {
        ResultBuilder::default()
    }

    /// The values written since the last call; fails if a list or map is still incomplete
    /// (the writer was handed fewer items than it announced).
    pub fn take(&mut self) -> Result<Vec<ResultValue>> {
        if !self.open.is_empty() {
            self.open.clear();
            self.done.clear();
            return Err(Error::internal("a result row ended inside a list or map"));
        }
        Ok(std::mem::take(&mut self.done))
    }

    /// Adds a complete value to the open list or map (closing it when it is full), or to the
    /// finished values.
    fn push(&mut self, mut v: ResultValue) -> Result<()> {
        while let Some(top) = self.open.last_mut() {
            let left = match top {
                Open::List { left, items } => {
                    items.push(v);
                    left
                }
                Open::Map { left, entries, key } => {
                    let Some(k) = key.take() else {
                        return Err(Error::internal("a map value written without its key"));
                    };
                    entries.push((k, v));
                    left
                }
            };
            *left -= 1;
            if *left > 0 {
                return Ok(());
            }
            v = match self.open.pop() {
                Some(Open::List { items, .. }) => ResultValue::List(items),
                Some(Open::Map { entries, .. }) => ResultValue::Map(entries),
                None => return Ok(()),
            };
        }
        self.done.push(v);
        Ok(())
    }

    /// The `n` entries an entity's property callback writes, as a property map.
    fn properties(n: usize, write: crate::result::Parts<'_, ()>) -> Result<PropertyMap> {
        let mut sub = ResultBuilder::new();
        sub.map(n)?;
        write(&mut sub, ())?;
        let entries = match sub.take()?.pop() {
            Some(ResultValue::Map(entries)) if n > 0 => entries,
            _ if n == 0 => Vec::new(),
            _ => return Err(Error::internal("an entity wrote fewer properties than it announced")),
        };
        Ok(PropertyMap::from_entries(
            entries.into_iter().map(|(k, v)| (k, Value::from(v))).collect(),
        ))
    }

    /// The entities one part of a path writes.
    fn path_part(
        parts: crate::result::Parts<'_, PathPart>,
        part: PathPart,
    ) -> Result<Vec<ResultValue>> {
        let mut sub = ResultBuilder::new();
        parts(&mut sub, part)?;
        sub.take()
    }
}

fn unwrap_node(v: &ResultValue) -> Result<NodeData> {
    match v {
        ResultValue::Node(n) => Ok(NodeData::clone(n)),
        other => {
            Err(Error::internal(format!("a path holds a {} among its nodes", other.type_name())))
        }
    }
}

fn unwrap_rel(v: &ResultValue) -> Result<RelData> {
    match v {
        ResultValue::Relationship(r) => Ok(RelData::clone(r)),
        other => Err(Error::internal(format!(
            "a path holds a {} among its relationships",
            other.type_name()
        ))),
    }
}

impl ResultWriter for ResultBuilder {
    fn scalar(&mut self, v: Scalar<'_>) -> Result<()> {
        self.push(ResultValue::from(v))
    }

    fn list(&mut self, len: usize) -> Result<()> {
        if len == 0 {
            return self.push(ResultValue::List(Vec::new()));
        }
        self.open.push(Open::List { left: len, items: Vec::with_capacity(len) });
        Ok(())
    }

    fn map(&mut self, len: usize) -> Result<()> {
        if len == 0 {
            return self.push(ResultValue::Map(Vec::new()));
        }
        self.open.push(Open::Map { left: len, entries: Vec::with_capacity(len), key: None });
        Ok(())
    }

    fn key(&mut self, key: &str) -> Result<()> {
        match self.open.last_mut() {
            Some(Open::Map { key: slot @ None, .. }) => {
                *slot = Some(Key::from(key));
                Ok(())
            }
            _ => Err(Error::internal(format!("map key `{key}` written outside a map entry"))),
        }
    }

    fn node(&mut self, head: NodeHead<'_>, properties: crate::result::Parts<'_, ()>) -> Result<()> {
        let properties = ResultBuilder::properties(head.properties, properties)?;
        let labels = head.labels.iter().map(|l| l.to_string()).collect();
        self.push(ResultValue::Node(Arc::new(NodeData { id: head.id, labels, properties })))
    }

    fn relationship(
        &mut self,
        head: RelHead<'_>,
        properties: crate::result::Parts<'_, ()>,
    ) -> Result<()> {
        let properties = ResultBuilder::properties(head.properties, properties)?;
        self.push(ResultValue::Relationship(Arc::new(RelData {
            id: head.id,
            start: head.start,
            end: head.end,
            rel_type: head.rel_type.to_string(),
            properties,
        })))
    }

    fn path(
        &mut self,
        _nodes: usize,
        _rels: usize,
        steps: &[i64],
        parts: crate::result::Parts<'_, PathPart>,
    ) -> Result<()> {
        let distinct_nodes = ResultBuilder::path_part(&mut *parts, PathPart::Nodes)?;
        let distinct_rels = ResultBuilder::path_part(parts, PathPart::Relationships)?;
        let first =
            distinct_nodes.first().ok_or_else(|| Error::internal("a path without nodes"))?;
        let mut nodes = vec![unwrap_node(first)?];
        let mut rels = Vec::with_capacity(steps.len() / 2);
        for step in steps.chunks_exact(2) {
            let rel =
                (step[0].unsigned_abs() as usize).checked_sub(1).and_then(|i| distinct_rels.get(i));
            let node = usize::try_from(step[1]).ok().and_then(|i| distinct_nodes.get(i));
            let (Some(rel), Some(node)) = (rel, node) else {
                return Err(Error::internal(format!("a path step {step:?} points past its parts")));
            };
            rels.push(unwrap_rel(rel)?);
            nodes.push(unwrap_node(node)?);
        }
        self.push(ResultValue::Path(Arc::new(PathData { nodes, rels })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u64, label: &str, props: &[(&str, Value)]) -> NodeData {
        let properties = PropertyMap::from_entries(
            props.iter().map(|(k, v)| ((*k).into(), v.clone())).collect(),
        );
        NodeData { id: NodeId(id), labels: vec![label.to_string()], properties }
    }

    fn rel(id: u64, start: u64, end: u64) -> RelData {
        RelData {
            id: RelId(id),
            start: NodeId(start),
            end: NodeId(end),
            rel_type: "R".into(),
            properties: PropertyMap::from_entries(vec![("w".into(), Value::Int(id as i64))]),
        }
    }

    /// Writing a value into a builder gives it back, nested composites and a path that walks a
    /// relationship against its direction and revisits a node included.
    #[test]
    fn a_written_value_builds_back_to_itself() {
        let a = node(1, "A", &[("x", Value::Int(1)), ("l", Value::List(vec![Value::str("s")]))]);
        let b = node(2, "B", &[]);
        let path = PathData {
            nodes: vec![a.clone(), b.clone(), a.clone()],
            rels: vec![rel(7, 1, 2), rel(7, 1, 2)],
        };
        let row = vec![
            ResultValue::Int(3),
            ResultValue::List(vec![ResultValue::List(vec![]), ResultValue::Node(Arc::new(a))]),
            ResultValue::Map(vec![
                ("z".into(), ResultValue::Null),
                ("a".into(), ResultValue::Map(vec![])),
            ]),
            ResultValue::Path(Arc::new(path)),
            ResultValue::Relationship(Arc::new(rel(8, 2, 1))),
        ];
        let mut b = ResultBuilder::new();
        for v in &row {
            v.write(&mut b).unwrap();
        }
        let back = b.take().unwrap();
        assert_eq!(format!("{back:?}"), format!("{row:?}"));
        // The map's display order survives the conversion to a `Value`.
        let Value::Map(m) = Value::from(back[2].clone()) else { panic!("not a map") };
        let keys: Vec<&str> = m.iter_ordered().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a"]);
    }

    #[test]
    fn an_incomplete_row_fails() {
        let mut b = ResultBuilder::new();
        b.list(2).unwrap();
        b.scalar(Scalar::Int(1)).unwrap();
        assert!(b.take().is_err());
        assert!(b.key("k").is_err());
        b.map(1).unwrap();
        assert!(b.scalar(Scalar::Null).is_err(), "a map value needs its key first");
    }
}
