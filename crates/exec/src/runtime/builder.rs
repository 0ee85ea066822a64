//! [`Builder`], the state of one plan-to-operator build, and [`build`], the call through which
//! an operator family builds its inputs. The dispatch of plan operators to families lives in
//! `build` and reaches the families through [`Builder::dispatch`], so the recursion (a family
//! builds its inputs, which may be of any family) runs through a function pointer and no family
//! imports `build`.

use arbor_cypher_plan::ops::Op;

use crate::ctx::Operator;

pub(crate) struct Builder {
    pub next_id: usize,
    /// The statement never writes, so the graph cannot change while one call of
    /// `Execution::next` runs (another statement of the same transaction may run between two
    /// calls): an aggregation, which consumes its whole input in one call, may then drive a
    /// node scan itself with ids fetched in batches ([`Graph::next_nodes`]). Subquery plans
    /// are built with `false` (conservatively, they are not checked separately).
    pub read_only: bool,
    /// Address of the one `Unwind` allowed to move its parameter list out of the execution's
    /// parameters instead of copying it (see [`unwind_taking_param`]).
    pub take_unwind: Option<usize>,
    /// The items of a projection right above the operator being built (set by `Project`
    /// only when its input is a distinct-end expansion, taken by that expansion): the end
    /// node's properties it reads are read late, in columns (see `LateCols` in `runtime/pump.rs`).
    pub late_reads: Vec<arbor_cypher_plan::expr::PExpr>,
    /// Builds one plan operator and its inputs: the dispatch to the operator families, which
    /// `build` hands in (see [`Builder::new`](super::build)), so a family builds its inputs
    /// without importing that dispatch.
    pub(crate) dispatch: fn(&Op, &mut Builder) -> Box<dyn Operator>,
}

/// Builds `op` and its inputs (numbered and counted for PROFILE, see `build`).
pub(crate) fn build(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    (b.dispatch)(op, b)
}
