//! Rewrite rule: an `Eager` barrier under every updating operator whose input reads the graph
//! (since the last barrier), so a clause never observes its own writes: all input rows are
//! read before the first write (`MATCH (a) CREATE (b)` must not match `b`).
//!
//! `CALL { ... } IN TRANSACTIONS` counts as updating: the outer rows that read the graph are
//! all read before the first batch commits. So does a `CALL { }` whose body writes: its
//! driving rows are all read before the first call runs, so the outer `MATCH` does not see
//! what the subquery creates (the Cypher manual's "Peter" example; Neo4j plans the same Eager). The barrier *after* an updating clause is the
//! [`super::eager_after`] rule.

use crate::ops::Op;
use crate::rewrite::{bottom_up, RewriteCtx, RewriteRule};

/// The rule.
pub struct EagerBeforeWrites;

impl RewriteRule for EagerBeforeWrites {
    fn name(&self) -> &'static str {
        "eager_before_writes"
    }

    fn rewrite(&self, op: Op, _: &RewriteCtx) -> Op {
        bottom_up(op, &guard_write)
    }
}

/// `W(input)` becomes `W(Eager(input))` for an updating `W` whose input reads the graph.
fn guard_write(mut op: Op) -> Op {
    if let Op::Apply { input, inner, batch: None, .. } = &mut op {
        if inner.writes() {
            let outer = std::mem::replace(&mut **input, Op::Argument);
            **input = eager(outer);
        }
        return op;
    }
    match &mut op {
        Op::Create { input, .. }
        | Op::Merge { input, .. }
        | Op::Set { input, .. }
        | Op::Delete { input, .. }
        | Op::Foreach { input, .. }
        | Op::Apply { input, batch: Some(_), .. } => {
            let inner = std::mem::replace(&mut **input, Op::Argument);
            **input = eager(inner);
        }
        _ => {}
    }
    op
}

/// Whether the plan so far reads the graph (above the last `Eager`).
pub(crate) fn reads_graph(op: &Op) -> bool {
    match op {
        Op::Eager { .. } => false,
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
        | Op::FrontierExpand { .. }
        | Op::ShortestPath { .. }
        | Op::Repeat(_)
        | Op::SelectPaths { .. }
        | Op::Merge { .. }
        | Op::ProcedureCall { .. }
        | Op::Optional { .. }
        | Op::Apply { .. }
        | Op::Union { .. } => true,
        _ => op.children().into_iter().any(reads_graph),
    }
}

fn eager(op: Op) -> Op {
    if reads_graph(&op) {
        Op::Eager { input: Box::new(op) }
    } else {
        op
    }
}
