//! The result boundary: how a consumer (the Bolt encoder, a test) receives the values of one
//! result row, every entity materialised.
//!
//! The engine does not hand rows out as [`Value`]s, which can hold transaction-bound
//! references ([`Value::Node`], [`Value::Relationship`], [`Value::Path`]). It *writes* each
//! row into a [`ResultWriter`]: scalars, list and map headers, and entities with their ids,
//! labels or type, and properties. The trait has no method that takes a reference, so a
//! consumer has no case for one: the type system checks that nothing transaction-bound leaves
//! the engine. The engine resolves references against its transaction as it writes, straight
//! from storage, without building a per-row vector or a per-entity property map.

use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time};
use crate::{NodeId, RelId, Result, Value};

/// A value with no parts: everything but lists, maps and entities.
#[derive(Clone, Copy, Debug)]
pub enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(&'a str),
    Bytes(&'a [u8]),
    Date(&'a Date),
    Time(&'a Time),
    LocalTime(&'a LocalTime),
    DateTime(&'a DateTime),
    LocalDateTime(&'a LocalDateTime),
    Duration(&'a Duration),
    Point(&'a Point),
}

impl<'a> Scalar<'a> {
    /// `v` as a scalar, or `None` for a list, a map or an entity (of either form).
    pub fn of(v: &'a Value) -> Option<Scalar<'a>> {
        Some(match v {
            Value::Null => Scalar::Null,
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Int(i) => Scalar::Int(*i),
            Value::Float(f) => Scalar::Float(*f),
            Value::String(s) => Scalar::String(s),
            Value::Bytes(b) => Scalar::Bytes(b),
            Value::Date(d) => Scalar::Date(d),
            Value::Time(t) => Scalar::Time(t),
            Value::LocalTime(t) => Scalar::LocalTime(t),
            Value::DateTime(t) => Scalar::DateTime(t),
            Value::LocalDateTime(t) => Scalar::LocalDateTime(t),
            Value::Duration(d) => Scalar::Duration(d),
            Value::Point(p) => Scalar::Point(p),
            Value::List(_)
            | Value::Map(_)
            | Value::Node(_)
            | Value::Relationship(_)
            | Value::Path(_)
            | Value::NodeData(_)
            | Value::RelData(_)
            | Value::PathData(_) => return None,
        })
    }
}

/// A node's head: what precedes its properties.
#[derive(Clone, Copy, Debug)]
pub struct NodeHead<'a> {
    pub id: NodeId,
    /// Sorted by name.
    pub labels: &'a [&'a str],
    /// How many `key` + value pairs the property callback writes.
    pub properties: usize,
}

/// A relationship's head. `start`/`end` are as stored, whatever way a path walks it.
#[derive(Clone, Copy, Debug)]
pub struct RelHead<'a> {
    pub id: RelId,
    pub start: NodeId,
    pub end: NodeId,
    pub rel_type: &'a str,
    /// How many `key` + value pairs the property callback writes.
    pub properties: usize,
}

/// Which part of a path [`ResultWriter::path`] asks its callback to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathPart {
    /// The path's distinct nodes, in order of first appearance: one [`ResultWriter::node`]
    /// each.
    Nodes,
    /// The path's distinct relationships, in order of first appearance: one
    /// [`ResultWriter::relationship`] each.
    Relationships,
}

/// Writes the parts of an entity or path; called back by the writer, between what it writes
/// before and after them.
pub type Parts<'a, P> = &'a mut dyn FnMut(&mut dyn ResultWriter, P) -> Result<()>;

/// The receiving end of a result row. A value is one [`scalar`](Self::scalar), a
/// [`list`](Self::list) header followed by its items, a [`map`](Self::map) header followed by
/// its entries ([`key`](Self::key), then a value, each), or an entity. Entities call back for
/// their properties (`key` + scalar or list of scalars, in key order) and parts, so a writer
/// can wrap them (Bolt writes a node's element id after its properties).
pub trait ResultWriter {
    fn scalar(&mut self, v: Scalar<'_>) -> Result<()>;
    fn list(&mut self, len: usize) -> Result<()>;
    fn map(&mut self, len: usize) -> Result<()>;
    fn key(&mut self, key: &str) -> Result<()>;
    /// A node: `properties(w, ())` writes `head.properties` entries into `w`.
    fn node(&mut self, head: NodeHead<'_>, properties: Parts<'_, ()>) -> Result<()>;
    /// A relationship; inside a path's [`PathPart::Relationships`] it is one of the path's
    /// (Bolt writes those without their end nodes).
    fn relationship(&mut self, head: RelHead<'_>, properties: Parts<'_, ()>) -> Result<()>;
    /// A path of `nodes` distinct nodes and `rels` distinct relationships. `steps` holds, for
    /// each relationship walked, its 1-based index among the distinct ones (negative when
    /// walked against its stored direction) and the 0-based index of the node it reaches.
    /// `parts(w, PathPart::Nodes)` then `parts(w, PathPart::Relationships)` write the two
    /// lists.
    fn path(
        &mut self,
        nodes: usize,
        rels: usize,
        steps: &[i64],
        parts: Parts<'_, PathPart>,
    ) -> Result<()>;
}

/// The layout [`ResultWriter::path`] takes, from a path's node ids in walking order and its
/// relationships as `(id, stored start)`: the positions of the distinct nodes and
/// relationships (first appearance) and the step list.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PathLayout {
    pub node_order: Vec<usize>,
    pub rel_order: Vec<usize>,
    pub steps: Vec<i64>,
}

impl PathLayout {
    pub fn new(nodes: &[NodeId], rels: &[(RelId, NodeId)]) -> PathLayout {
        let mut node_order: Vec<usize> = Vec::with_capacity(nodes.len());
        let mut node_index = Vec::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            let pos = match node_order.iter().position(|&j| nodes[j] == *n) {
                Some(pos) => pos,
                None => {
                    node_order.push(i);
                    node_order.len() - 1
                }
            };
            node_index.push(pos);
        }
        let mut rel_order: Vec<usize> = Vec::with_capacity(rels.len());
        let mut steps = Vec::with_capacity(rels.len() * 2);
        for (i, (id, start)) in rels.iter().enumerate() {
            let pos = match rel_order.iter().position(|&j| rels[j].0 == *id) {
                Some(pos) => pos,
                None => {
                    rel_order.push(i);
                    rel_order.len() - 1
                }
            };
            let one_based = pos as i64 + 1;
            // Walking from the stored start node is the forward direction; a self-loop is
            // forward.
            let forward = nodes.get(i) == Some(start);
            steps.push(if forward { one_based } else { -one_based });
            steps.push(node_index.get(i + 1).copied().unwrap_or(0) as i64);
        }
        PathLayout { node_order, rel_order, steps }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_layout_dedups_and_signs_steps() {
        // (42)-[1000]->(69), 1000 again walked 69->42 (backward), then 1001 stored 1->42 walked
        // 42->1 (backward).
        let nodes = [NodeId(42), NodeId(69), NodeId(42), NodeId(1)];
        let rels = [(RelId(1000), NodeId(42)), (RelId(1000), NodeId(42)), (RelId(1001), NodeId(1))];
        let l = PathLayout::new(&nodes, &rels);
        assert_eq!(l.node_order, vec![0, 1, 3]);
        assert_eq!(l.rel_order, vec![0, 2]);
        assert_eq!(l.steps, vec![1, 1, -1, 0, -2, 2]);
        let single = PathLayout::new(&[NodeId(7)], &[]);
        assert_eq!(single, PathLayout { node_order: vec![0], rel_order: vec![], steps: vec![] });
    }

    #[test]
    fn only_parts_free_values_are_scalars() {
        assert!(matches!(Scalar::of(&Value::Int(3)), Some(Scalar::Int(3))));
        assert!(matches!(Scalar::of(&Value::str("a")), Some(Scalar::String("a"))));
        assert!(Scalar::of(&Value::List(vec![])).is_none());
        assert!(Scalar::of(&Value::Node(NodeId(1))).is_none());
    }
}
