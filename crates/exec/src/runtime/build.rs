//! The plan-to-operator dispatch: [`Builder::new`] (a builder whose dispatch is
//! [`build_counted`]: each operator wrapped in a PROFILE row counter and sent to the builder of
//! its family) and the `UNWIND $list` that may take its parameter list.

use arbor_cypher_plan::expr::PExpr;
use arbor_cypher_plan::ops::Op;
use arbor_model::Result;

use super::aggregate::build_aggregate;
use super::builder::Builder;
use super::distinct_ends::build_distinct_ends;
use super::expand::build_expand;
use super::frontier::build_frontier;
use super::id_seek::build_id_seek;
use super::order::build_order;
use super::relational::build_relational;
use super::scan::build_scan;
use super::write::build_write;
use crate::ctx::{Ctx, Operator, Row, Sink};
use crate::graph::Graph;

/// Finds the `UNWIND $list` whose list may be moved out of the parameters rather than copied:
/// the parameter is read nowhere else in the plan, and the `Unwind` runs exactly once (it sits
/// on the root's input chain, where no operator resets its input, directly over the top-level
/// `Argument`, which yields one row). This is the batched-write shape
/// `UNWIND $batch AS r CREATE ...`, where copying the list would copy the whole request.
pub(crate) fn unwind_taking_param(plan: &arbor_cypher_plan::Plan) -> Option<usize> {
    let mut op = &plan.root;
    loop {
        if let Op::Unwind { input, expr: PExpr::Param(i), .. } = op {
            let once = plan.param_uses.get(*i) == Some(&1);
            return (once && matches!(**input, Op::Argument)).then_some(op as *const Op as usize);
        }
        if matches!(op, Op::Union { .. } | Op::Argument) {
            return None;
        }
        // The first child is always the operator's input stream, pulled once from start to end.
        op = op.children().into_iter().next()?;
    }
}

impl Builder {
    /// A builder for one plan (`read_only`, `take_unwind`: see the fields), numbering operators
    /// from `next_id`.
    pub(crate) fn new(next_id: usize, read_only: bool, take_unwind: Option<usize>) -> Builder {
        Builder { next_id, read_only, take_unwind, late_reads: Vec::new(), dispatch: build_counted }
    }
}

/// Builds the operator tree for a plan. Operators get pre-order numbers for PROFILE.
fn build_counted(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    let id = b.next_id;
    b.next_id += 1;
    let inner: Box<dyn Operator> = build_inner(op, b);
    Box::new(Counted { id, inner })
}

/// Counts rows per operator when profiling.
struct Counted {
    id: usize,
    inner: Box<dyn Operator>,
}

impl Operator for Counted {
    fn reset(&mut self, arg: &Row) {
        self.inner.reset(arg)
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if !ctx.profile {
            return self.inner.next(ctx, g);
        }
        let started = std::time::Instant::now();
        let mut counting = crate::profile::Counting { inner: g, hits: std::cell::Cell::new(0) };
        let r = self.inner.next(ctx, &mut counting);
        let hits = counting.hits.get();
        let elapsed = started.elapsed().as_nanos() as u64;
        if let Some(c) = ctx.hits.get_mut(self.id) {
            *c += hits;
        }
        if let Some(c) = ctx.time_ns.get_mut(self.id) {
            *c += elapsed;
        }
        let r = r?;
        if r.is_some() {
            if let Some(c) = ctx.rows.get_mut(self.id) {
                *c += 1;
            }
        }
        Ok(r)
    }
    fn drain(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, sink: &mut Sink<'_>) -> Result<()> {
        if !ctx.profile {
            return self.inner.drain(ctx, g, sink);
        }
        // PROFILE counts rows and time per `next` call: pulled one at a time.
        while let Some(mut r) = self.next(ctx, g)? {
            sink(&mut r, ctx, g)?;
            ctx.recycle(r);
        }
        Ok(())
    }
}

/// Sends each operator to the builder of its family.
fn build_inner(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    // `DISTINCT` of one key projected from a distinct-end expansion: one fused operator.
    if let Some(fused) = build_distinct_ends(op, b) {
        return fused;
    }
    match op {
        // A filter right above a variable-length expansion runs inside it (see
        // `build_expand`).
        Op::Filter { input, .. }
            if matches!(**input, Op::VarExpand { .. } | Op::PruningVarExpand { .. }) =>
        {
            build_expand(op, b)
        }
        Op::Filter { input, .. } if matches!(**input, Op::FrontierExpand { .. }) => {
            build_frontier(op, b)
        }
        Op::FrontierExpand { .. } => build_frontier(op, b),
        Op::VarExpandCount { .. } => super::var_count::build_var_count(op, b),
        Op::Argument
        | Op::NodeScan { .. }
        | Op::NodeIndexSeek { .. }
        | Op::NodeIndexRangeSeek { .. }
        | Op::RelIndexSeek { .. }
        | Op::NodeCountFromCountStore { .. }
        | Op::RelationshipCountFromCountStore { .. } => build_scan(op, b),
        Op::NodeByIdSeek { .. } | Op::RelByIdSeek { .. } => build_id_seek(op, b),
        Op::Expand { .. }
        | Op::VarExpand { .. }
        | Op::PruningVarExpand { .. }
        | Op::ShortestPath { .. } => build_expand(op, b),
        Op::Aggregate { .. } => build_aggregate(op, b),
        Op::Sort { .. } | Op::Top { .. } => build_order(op, b),
        Op::Filter { .. }
        | Op::Project { .. }
        | Op::Distinct { .. }
        | Op::Skip { .. }
        | Op::Limit { .. }
        | Op::Unwind { .. }
        | Op::Optional { .. }
        | Op::Apply { .. }
        | Op::Union { .. }
        | Op::ProcedureCall { .. }
        | Op::Eager { .. } => build_relational(op, b),
        Op::Create { .. }
        | Op::Merge { .. }
        | Op::Set { .. }
        | Op::Delete { .. }
        | Op::Foreach { .. } => build_write(op, b),
        Op::LoadCsv { .. } => super::load_csv::build_load_csv(op, b),
        Op::Repeat(_) | Op::SelectPaths { .. } => super::qpp::build_qpp(op, b),
    }
}

/// Builds the operator tree of a subquery plan, for [`Ctx::new`](crate::ctx::Ctx::new).
/// Subquery operators are numbered far from the statement's own (they are not profiled).
pub(crate) fn build_subplan(plan: &Op) -> Box<dyn Operator> {
    build_counted(plan, &mut Builder::new(usize::MAX / 2, false, None))
}
