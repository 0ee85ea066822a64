//! PROFILE support: a [`Graph`] wrapper counting every storage access ("db hits"), and row
//! estimates for EXPLAIN/PROFILE from a simple cardinality model.
//!
//! Every call through the seam counts as one db hit, like Neo4j counts store accesses; an
//! operator's hits include its inputs' (the wrapper nests), and the plan description subtracts
//! the children to show each operator's own work.

use std::cell::Cell;

use arbor_cypher_plan::{Op, PExpr};
use arbor_model::{NodeId, RelId, Result, Value};

use crate::graph::{Direction, Edge, Graph, GraphRead, GraphWrite, TokenId, TokenKind};

/// Counts calls into the wrapped graph.
pub(crate) struct Counting<'a> {
    pub inner: &'a mut dyn Graph,
    pub hits: Cell<u64>,
}

impl Counting<'_> {
    fn hit(&self) {
        self.hits.set(self.hits.get() + 1);
    }
}

impl GraphRead for Counting<'_> {
    fn token_id(&self, kind: TokenKind, name: &str) -> Option<TokenId> {
        // Token lookups are schema cache reads, not store accesses (Neo4j does not count them).
        self.inner.token_id(kind, name)
    }
    fn token_name(&self, kind: TokenKind, id: TokenId) -> Option<String> {
        self.inner.token_name(kind, id)
    }
    fn tokens(&self, kind: TokenKind) -> Vec<(TokenId, String)> {
        self.inner.tokens(kind)
    }
    fn next_node(&self, label: Option<TokenId>, from: NodeId) -> Option<NodeId> {
        self.hit();
        self.inner.next_node(label, from)
    }
    fn node_exists(&self, id: NodeId) -> bool {
        self.hit();
        self.inner.node_exists(id)
    }
    fn node_labels(&self, id: NodeId) -> Vec<TokenId> {
        self.hit();
        self.inner.node_labels(id)
    }
    fn node_has_label(&self, id: NodeId, label: TokenId) -> bool {
        self.hit();
        self.inner.node_has_label(id, label)
    }
    fn node_property(&self, id: NodeId, key: TokenId) -> Option<Value> {
        self.hit();
        self.inner.node_property(id, key)
    }
    fn node_properties(&self, id: NodeId) -> Vec<(TokenId, Value)> {
        self.hit();
        self.inner.node_properties(id)
    }
    fn node_edges(&self, node: NodeId, dir: Direction, types: &[TokenId], out: &mut Vec<Edge>) {
        let before = out.len();
        self.inner.node_edges(node, dir, types, out);
        // One hit per relationship read, at least one for the lookup.
        self.hits.set(self.hits.get() + (out.len() - before).max(1) as u64);
    }
    fn for_each_edge(
        &self,
        node: NodeId,
        dir: Direction,
        types: &[TokenId],
        f: &mut dyn FnMut(Edge),
    ) {
        let mut n = 0u64;
        self.inner.for_each_edge(node, dir, types, &mut |e| {
            n += 1;
            f(e)
        });
        self.hits.set(self.hits.get() + n.max(1));
    }
    fn degree(&self, node: NodeId, dir: Direction, types: &[TokenId]) -> u64 {
        self.hit();
        self.inner.degree(node, dir, types)
    }
    fn index_seek(&self, label: TokenId, key: TokenId, value: &Value) -> Option<Vec<NodeId>> {
        let r = self.inner.index_seek(label, key, value);
        self.hits.set(self.hits.get() + r.as_ref().map_or(1, |v| v.len().max(1) as u64));
        r
    }
    fn index_seek_range(
        &self,
        label: TokenId,
        key: TokenId,
        range: &crate::graph::ValueRange,
    ) -> Option<Vec<NodeId>> {
        let r = self.inner.index_seek_range(label, key, range);
        self.hits.set(self.hits.get() + r.as_ref().map_or(1, |v| v.len().max(1) as u64));
        r
    }
    fn count_rels_by_labels(
        &self,
        start: Option<TokenId>,
        ty: Option<TokenId>,
        end: Option<TokenId>,
    ) -> Option<u64> {
        self.hit();
        self.inner.count_rels_by_labels(start, ty, end)
    }
    fn index_seek_composite(
        &self,
        label: TokenId,
        keys: &[TokenId],
        values: &[Value],
    ) -> Option<Vec<NodeId>> {
        let r = self.inner.index_seek_composite(label, keys, values);
        self.hits.set(self.hits.get() + r.as_ref().map_or(1, |v| v.len().max(1) as u64));
        r
    }
    fn rel_index_seek(
        &self,
        ty: TokenId,
        keys: &[TokenId],
        values: &[Value],
    ) -> Option<Vec<RelId>> {
        let r = self.inner.rel_index_seek(ty, keys, values);
        self.hits.set(self.hits.get() + r.as_ref().map_or(1, |v| v.len().max(1) as u64));
        r
    }
    fn index_seek_composite_range(
        &self,
        label: TokenId,
        keys: &[TokenId],
        eq: &[Value],
        range: &crate::graph::ValueRange,
    ) -> Option<Vec<NodeId>> {
        let r = self.inner.index_seek_composite_range(label, keys, eq, range);
        self.hits.set(self.hits.get() + r.as_ref().map_or(1, |v| v.len().max(1) as u64));
        r
    }
    fn rel_index_seek_range(
        &self,
        ty: TokenId,
        key: TokenId,
        range: &crate::graph::ValueRange,
    ) -> Option<Vec<RelId>> {
        let r = self.inner.rel_index_seek_range(ty, key, range);
        self.hits.set(self.hits.get() + r.as_ref().map_or(1, |v| v.len().max(1) as u64));
        r
    }
    fn snapshot_with_writes(&self, rels: bool) -> Option<(u64, Vec<u64>)> {
        self.inner.snapshot_with_writes(rels)
    }
    fn await_indexes(&self, name: Option<&str>, timeout: std::time::Duration) -> Result<()> {
        self.inner.await_indexes(name, timeout)
    }
    fn count_nodes(&self, label: Option<TokenId>) -> u64 {
        self.hit();
        self.inner.count_nodes(label)
    }
    fn rel_exists(&self, id: RelId) -> bool {
        self.hit();
        self.inner.rel_exists(id)
    }
    fn rel_info(&self, id: RelId) -> Option<(NodeId, NodeId, TokenId)> {
        self.hit();
        self.inner.rel_info(id)
    }
    fn rel_property(&self, id: RelId, key: TokenId) -> Option<Value> {
        self.hit();
        self.inner.rel_property(id, key)
    }
    fn rel_properties(&self, id: RelId) -> Vec<(TokenId, Value)> {
        self.hit();
        self.inner.rel_properties(id)
    }
    fn next_rel(&self, types: &[TokenId], from: RelId) -> Option<RelId> {
        self.hit();
        self.inner.next_rel(types, from)
    }
    fn node_deleted_in_tx(&self, id: NodeId) -> bool {
        self.inner.node_deleted_in_tx(id)
    }
    fn rel_deleted_in_tx(&self, id: RelId) -> bool {
        self.inner.rel_deleted_in_tx(id)
    }
    fn count_rels(&self, types: &[TokenId]) -> Option<u64> {
        self.inner.count_rels(types)
    }
}

impl GraphWrite for Counting<'_> {
    fn get_or_create_token(&mut self, kind: TokenKind, name: &str) -> Result<TokenId> {
        self.inner.get_or_create_token(kind, name)
    }
    fn create_node(&mut self, labels: &[TokenId], props: Vec<(TokenId, Value)>) -> Result<NodeId> {
        self.hit();
        self.inner.create_node(labels, props)
    }
    fn create_rel(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: TokenId,
        props: Vec<(TokenId, Value)>,
    ) -> Result<RelId> {
        self.hit();
        self.inner.create_rel(start, end, rel_type, props)
    }
    fn set_node_property(&mut self, id: NodeId, key: TokenId, value: Value) -> Result<()> {
        self.hit();
        self.inner.set_node_property(id, key, value)
    }
    fn set_rel_property(&mut self, id: RelId, key: TokenId, value: Value) -> Result<()> {
        self.hit();
        self.inner.set_rel_property(id, key, value)
    }
    fn add_label(&mut self, id: NodeId, label: TokenId) -> Result<bool> {
        self.hit();
        self.inner.add_label(id, label)
    }
    fn remove_label(&mut self, id: NodeId, label: TokenId) -> Result<bool> {
        self.hit();
        self.inner.remove_label(id, label)
    }
    fn delete_node(&mut self, id: NodeId) -> Result<()> {
        self.hit();
        self.inner.delete_node(id)
    }
    fn delete_rel(&mut self, id: RelId) -> Result<()> {
        self.hit();
        self.inner.delete_rel(id)
    }
    fn batch_begin(&mut self) -> Result<String> {
        self.inner.batch_begin()
    }
    fn batch_commit(&mut self) -> Result<()> {
        self.inner.batch_commit()
    }
    fn batch_rollback(&mut self) -> Result<()> {
        self.inner.batch_rollback()
    }
    fn open_csv(&mut self, url: &str) -> Result<crate::graph::CsvSource> {
        self.inner.open_csv(url)
    }
    fn scratch_file(&mut self) -> Option<std::fs::File> {
        self.inner.scratch_file()
    }
}

/// Graph statistics the estimator uses; `None` fields fall back to defaults.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stats {
    pub nodes: Option<f64>,
    pub rels: Option<f64>,
}

/// Default cardinalities when no statistics are available (EXPLAIN without a graph).
const DEFAULT_NODES: f64 = 100.0;
const DEFAULT_DEGREE: f64 = 2.0;
/// Selectivity of a filter predicate (Neo4j's default for an unknown predicate is similar).
const FILTER_SELECTIVITY: f64 = 0.25;

/// Estimated rows each operator produces, indexed by pre-order number (as the runtime numbers
/// operators), for one argument row at the root. `label_count` answers per-label counts.
pub(crate) fn estimate(
    root: &Op,
    stats: Stats,
    label_count: &dyn Fn(&str) -> Option<f64>,
) -> Vec<f64> {
    let mut out = Vec::new();
    est(root, 1.0, stats, label_count, &mut out);
    out
}

fn est(
    op: &Op,
    arg: f64,
    stats: Stats,
    label_count: &dyn Fn(&str) -> Option<f64>,
    out: &mut Vec<f64>,
) -> f64 {
    let my = out.len();
    out.push(0.0);
    let nodes = stats.nodes.unwrap_or(DEFAULT_NODES);
    let degree = match (stats.rels, stats.nodes) {
        (Some(r), Some(n)) if n > 0.0 => (r / n).max(0.0),
        _ => DEFAULT_DEGREE,
    };
    let child = |o: &Op, a: f64, out: &mut Vec<f64>| est(o, a, stats, label_count, out);
    let const_int = |e: &PExpr| match e {
        PExpr::Const(Value::Int(n)) => Some((*n).max(0) as f64),
        _ => None,
    };
    let rows = match op {
        Op::Argument => arg,
        Op::Union { branches, .. } => branches.iter().map(|(b, _)| child(b, arg, out)).sum(),
        Op::Optional { input, inner, .. } => {
            let i = child(input, arg, out);
            child(inner, i.max(1.0), out).max(i)
        }
        Op::Apply { input, inner, unit, .. } => {
            let i = child(input, arg, out);
            let r = child(inner, i.max(1.0), out);
            if *unit {
                i
            } else {
                r
            }
        }
        Op::Merge { input, matcher, .. } => {
            let i = child(input, arg, out);
            child(matcher, i.max(1.0), out).max(i)
        }
        Op::Foreach { input, body, .. } => {
            let i = child(input, arg, out);
            child(body, i, out);
            i
        }
        other => {
            let Some(input) = other.children().into_iter().next() else {
                return arg;
            };
            let i = child(input, arg, out);
            match other {
                Op::NodeScan { label: None, .. } => i * nodes,
                Op::NodeScan { label: Some(l), .. } => {
                    i * label_count(l).unwrap_or(nodes * FILTER_SELECTIVITY)
                }
                Op::NodeIndexSeek { label, .. } => {
                    i * (label_count(label).unwrap_or(nodes) * 0.1).max(1.0)
                }
                Op::NodeIndexRangeSeek { label, .. } => {
                    i * (label_count(label).unwrap_or(nodes) * FILTER_SELECTIVITY).max(1.0)
                }
                Op::Expand { into: true, .. } => i * degree.min(1.0),
                Op::Expand { .. } => i * degree,
                Op::VarExpand { max, .. } => {
                    let hops = max.unwrap_or(3).clamp(1, 4) as i32;
                    i * (1..=hops).map(|h| degree.powi(h)).sum::<f64>()
                }
                Op::PruningVarExpand { max, .. } => {
                    let hops = max.unwrap_or(3).clamp(1, 4) as i32;
                    (i * (1..=hops).map(|h| degree.powi(h)).sum::<f64>()).min(i * nodes)
                }
                Op::ShortestPath { .. } | Op::SelectPaths { .. } => i,
                Op::Repeat(r) => {
                    let hops = r.max.unwrap_or(3).clamp(1, 4) as i32 * r.hops.len() as i32;
                    i * (1..=hops).map(|h| degree.powi(h)).sum::<f64>()
                }
                Op::VarExpandCount { .. } => 1.0,
                Op::FrontierExpand { max, .. } => {
                    let hops = (*max).clamp(1, 4) as i32;
                    (i * (1..=hops).map(|h| degree.powi(h)).sum::<f64>()).min(i * nodes)
                }
                Op::NodeCountFromCountStore { .. } | Op::RelationshipCountFromCountStore { .. } => {
                    i
                }
                Op::RelIndexSeek { .. } => i * 2.0,
                Op::Filter { .. } => i * FILTER_SELECTIVITY,
                Op::Aggregate { keys, .. } if keys.is_empty() => 1.0,
                Op::Aggregate { .. } | Op::Distinct { .. } => i.sqrt().max(1.0).min(i),
                Op::Skip { count, .. } => (i - const_int(count).unwrap_or(0.0)).max(0.0),
                Op::Limit { count, .. } => const_int(count).map_or(i, |n| n.min(i)),
                Op::Top { limit, .. } => const_int(limit).map_or(i, |n| n.min(i)),
                Op::Unwind { expr, .. } => match expr {
                    PExpr::List(items) => i * items.len() as f64,
                    PExpr::Const(Value::List(items)) => i * items.len() as f64,
                    _ => i * 10.0,
                },
                Op::ProcedureCall { void: true, .. } => i,
                Op::ProcedureCall { .. } => i * 10.0,
                _ => i,
            }
        }
    };
    out[my] = rows;
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_follow_statistics() {
        let text = "MATCH (a:A)-->(b) RETURN b LIMIT 5";
        let stmt = arbor_cypher_syntax::parse(text).unwrap();
        let q = crate::PreparedQuery::prepare(&stmt, text).unwrap();
        let stats = Stats { nodes: Some(1000.0), rels: Some(3000.0) };
        let e = estimate(&q.plan.root, stats, &|l| (l == "A").then_some(10.0));
        // Limit(Expand(NodeByLabelScan(Argument))): 10 A nodes, 3 rels each, cut to 5.
        assert_eq!(e, vec![5.0, 30.0, 10.0, 1.0]);
        let none = estimate(&q.plan.root, Stats::default(), &|_| None);
        assert_eq!(none.len(), 4);
        assert!(none.iter().all(|r| r.is_finite() && *r >= 0.0));
    }
}
