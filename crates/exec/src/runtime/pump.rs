//! The [`Pump`] driver shared by the variable-length expansions (`var_expand`, `pruning`):
//! one generic `next`/`drain` pair for every expansion that works in a row of its own.

use arbor_model::Result;

use crate::ctx::{Ctx, Operator, Row, Sink};
use crate::graph::Graph;

/// A variable-length expansion that writes each result into a working row of its own
/// (`VarLengthExpand`, `VarLengthExpand(Pruning)`): one input row is opened, its results are
/// handed on one by one in the working row, then it is closed and the next input row opened.
///
/// Every `Pump` is an [`Operator`] through one generic driver ([`pump`]): `next` copies the
/// working row out, `drain` hands it to the consuming aggregation in place (no copy per
/// result). The methods are only ever called from that generic code, monomorphized per
/// expansion and per consumer and inlined, so a result costs no virtual call beyond the sink
/// the aggregation passes to `drain`.
pub(super) trait Pump: Send {
    /// The operator's input.
    fn input(&mut self) -> &mut dyn Operator;
    /// Forgets the input row being expanded (the rest of [`Operator::reset`]).
    fn reopen(&mut self);
    /// Whether an input row is open.
    fn is_open(&self) -> bool;
    /// Opens input row `row` (kept as the working row), unless it cannot produce any result
    /// (no start node, no such property key), in which case it is dropped.
    fn open(&mut self, row: Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()>;
    /// Hands the open row's remaining results, each in the working row, to `emit` until it
    /// says stop (`true`, returned) or they are exhausted (`false`).
    fn advance<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>;
    /// Closes the exhausted input row.
    fn close(&mut self, ctx: &mut Ctx);
}

/// Expands input row after input row, handing each result to `emit` until it says stop
/// (`true`, returned) or the input is exhausted (`false`).
#[inline(always)]
fn pump<P, E>(p: &mut P, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
where
    P: Pump,
    E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
{
    loop {
        if p.is_open() {
            if p.advance(ctx, g, emit)? {
                return Ok(true);
            }
            p.close(ctx);
        }
        let Some(r) = p.input().next(ctx, g)? else { return Ok(false) };
        ctx.check_interrupt()?;
        p.open(r, ctx, g)?;
    }
}

impl<P: Pump> Operator for P {
    fn reset(&mut self, arg: &Row) {
        self.input().reset(arg);
        self.reopen();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let mut out = None;
        // The row leaves the operator: a copy of the working row (which the expansion keeps).
        pump(self, ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, _: &mut dyn Graph| {
            out = Some(ctx.row_like(row));
            Ok(true)
        })?;
        Ok(out)
    }
    fn drain(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, sink: &mut Sink<'_>) -> Result<()> {
        // Each result is consumed in the working row itself: no copy per result.
        pump(self, ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph| {
            sink(row, ctx, g)?;
            Ok(false)
        })?;
        Ok(())
    }
}
