//! Rewrite rule: an `Eager` barrier over every updating operator that a later clause reads
//! past, so a reading clause sees all of an earlier clause's writes before it reads anything
//! (`CREATE (a) WITH a MATCH (b)` must match the nodes every row created, not just those of
//! the rows so far). `CALL { ... } IN TRANSACTIONS` counts as updating: each batch commits
//! before a later clause reads.
//!
//! The rule walks the tree from the root down each operator's streaming input (the earlier
//! clauses of the same query part), carrying whether an operator above reads the graph
//! ([`reads_graph_here`]). Nested plans (subquery bodies, `FOREACH` bodies, the branches of
//! a `UNION`, `OPTIONAL MATCH` and `MERGE` patterns) are parts of their own: they start
//! without a reader above.

use crate::ops::Op;
use crate::rewrite::{RewriteCtx, RewriteRule};

/// The rule.
pub struct EagerAfterWrites;

impl RewriteRule for EagerAfterWrites {
    fn name(&self) -> &'static str {
        "eager_after_writes"
    }

    fn rewrite(&self, op: Op, _: &RewriteCtx) -> Op {
        guard(op, false)
    }
}

/// Rewrites `op`, which some operator above reads past when `read_above`.
fn guard(mut op: Op, read_above: bool) -> Op {
    let read_below = read_above || reads_graph_here(&op);
    let streaming = streaming_input(&op);
    for (i, child) in op.children_mut().into_iter().enumerate() {
        let c = std::mem::replace(child, Op::Argument);
        *child = guard(c, Some(i) == streaming && read_below);
    }
    if read_above && updates_here(&op) {
        Op::Eager { input: Box::new(op) }
    } else {
        op
    }
}

/// Whether the operator itself (not its inputs) reads the graph: scans, seeks, counts,
/// expansions, `MERGE`, procedure calls, and the per-row plans of `OPTIONAL MATCH` and
/// `CALL { }`; a `MATCH` filter on variables bound before (`MATCH (a:L)`, `a` bound) too.
pub fn reads_graph_here(op: &Op) -> bool {
    matches!(
        op,
        Op::NodeScan { .. }
            | Op::NodeIndexSeek { .. }
            | Op::NodeIndexRangeSeek { .. }
            | Op::RelIndexSeek { .. }
            | Op::NodeByIdSeek { .. }
            | Op::RelByIdSeek { .. }
            | Op::NodeCountFromCountStore { .. }
            | Op::RelationshipCountFromCountStore { .. }
            | Op::Expand { .. }
            | Op::VarExpand { .. }
            | Op::PruningVarExpand { .. }
            | Op::VarExpandCount { .. }
            | Op::ShortestPath { .. }
            | Op::Merge { .. }
            | Op::ProcedureCall { .. }
            | Op::Optional { .. }
            | Op::Apply { .. }
            | Op::Filter { reads: true, .. }
    )
}

/// Whether the operator is the end of an updating clause: a write, or the batches of
/// `CALL { } IN TRANSACTIONS` (each commits).
pub fn updates_here(op: &Op) -> bool {
    matches!(
        op,
        Op::Create { .. }
            | Op::Merge { .. }
            | Op::Set { .. }
            | Op::Delete { .. }
            | Op::Foreach { .. }
            | Op::Apply { batch: Some(_), .. }
    )
}

/// The index (in [`Op::children_mut`]) of the input that streams the rows of the earlier
/// clauses of the same query part; `None` for leaves and `UNION`.
fn streaming_input(op: &Op) -> Option<usize> {
    match op {
        Op::Argument | Op::Union { .. } => None,
        _ => Some(0),
    }
}
