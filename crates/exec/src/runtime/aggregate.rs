//! The `Aggregate` operator: grouping its input's rows (or driving a fused scan) into
//! [`Groups`] and producing one row per group.

use arbor_cypher_plan::expr::{AggCall, PExpr, Slot};
use arbor_cypher_plan::ops::Op;
use arbor_model::{Result, Value};

use super::agg_spill::SpillPart;
use super::builder::{build, Builder};
use super::fused::{reused_args, ColumnAgg, FusedScan};
use super::groups::{GroupOutput, Grouping, Groups};
use crate::ctx::{Ctx, Operator, Row};
use crate::functions::Accumulator;
use crate::graph::Graph;

/// Builds an aggregation operator (the builder's dispatch, [`super::build`], sends only those here).
pub(super) fn build_aggregate(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        Op::Aggregate { input, keys, aggs } => Box::new(Aggregate {
            scan: if b.read_only {
                FusedScan::of(input).map(|mut f| {
                    f.cols = ColumnAgg::of(f.slot, f.pred.as_ref(), keys, aggs);
                    f
                })
            } else {
                None
            },
            reuse: reused_args(aggs),
            input: build(input, b),
            keys: keys.clone(),
            aggs: aggs.clone(),
            arg: Vec::new(),
            out: None,
            parts: Vec::new(),
            kv: Vec::new(),
            accs: Vec::new(),
        }),
        _ => unreachable!("build_aggregate called on another operator"),
    }
}

pub(super) struct Aggregate {
    pub(super) input: Box<dyn Operator>,
    /// Set when the input is a node scan (with an optional filter) of the argument row in a
    /// read-only statement: the aggregation then drives the scan itself (see [`FusedScan`]).
    pub(super) scan: Option<FusedScan>,
    /// Per aggregate: the earlier aggregate whose (single) argument is the same property read
    /// (`min(n.x), max(n.x)`), evaluated once per row and shared.
    pub(super) reuse: Vec<Option<usize>>,
    pub(super) keys: Vec<(Slot, PExpr)>,
    pub(super) aggs: Vec<(Slot, AggCall)>,
    pub(super) arg: Row,
    pub(super) out: Option<GroupOutput>,
    /// Spilled partitions not handed up yet (see `agg_spill`).
    pub(super) parts: Vec<SpillPart>,
    /// The group being turned into a row: its key values and accumulators.
    pub(super) kv: Vec<Value>,
    pub(super) accs: Vec<Box<dyn Accumulator>>,
}

impl Operator for Aggregate {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.arg = arg.clone();
        self.out = None;
        self.parts.clear();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            let mut groups = Groups::default();
            match &self.scan {
                Some(scan) if !ctx.profile => {
                    let grouping = Grouping {
                        keys: &self.keys,
                        aggs: &self.aggs,
                        reuse: &self.reuse,
                        arg: &self.arg,
                    };
                    grouping.scan_into(scan, &mut groups, ctx, g)?
                }
                _ => {
                    let (keys, aggs, reuse) = (&self.keys, &self.aggs, &self.reuse);
                    let gr = &mut groups;
                    self.input
                        .drain(ctx, g, &mut |r, ctx, g| gr.add(keys, aggs, reuse, r, ctx, g))?;
                }
            }
            if self.keys.is_empty() {
                groups.ensure_global(&self.aggs)?;
            }
            if let Some(spill) = groups.take_spill() {
                tracing::debug!(rows = spill.rows(), "aggregation: reading spilled groups back");
                self.parts = spill.finish()?;
                self.parts.reverse();
            }
            self.out = Some(groups.into_output());
        }
        loop {
            if self.out.as_mut().is_some_and(|o| o.next_into(&mut self.kv, &mut self.accs)) {
                break;
            }
            // The table's groups are out (its memory given back): the next spilled
            // partition, in a fresh table; at the end an empty output stays, so a later call
            // does not aggregate again.
            self.out = Some(Groups::default().into_output());
            let Some(mut part) = self.parts.pop() else { return Ok(None) };
            let mut groups = Groups::at_depth(part.depth());
            let mut args = vec![Vec::new(); self.aggs.len()];
            let mut buf = Vec::new();
            let mut kv = Vec::new();
            while part.next_row(&mut kv, &mut args, &mut buf)? {
                ctx.tick()?;
                groups.add_values(&mut kv, &args, &self.aggs, g)?;
            }
            drop(part);
            if let Some(spill) = groups.take_spill() {
                // This partition did not fit either: its table's groups now, the rest split
                // one level deeper and read back after.
                tracing::debug!(rows = spill.rows(), "aggregation: a partition spilled again");
                let mut deeper = spill.finish()?;
                deeper.reverse();
                self.parts.extend(deeper);
            }
            self.out = Some(groups.into_output());
        }
        // One output row per group, made as it is pulled: a `Top` above keeps a few of them,
        // so a million groups never become a million rows at once.
        ctx.tick()?;
        let mut row = self.arg.clone();
        for ((s, _), v) in self.keys.iter().zip(self.kv.drain(..)) {
            row[*s] = v;
        }
        for ((s, _), acc) in self.aggs.iter().zip(self.accs.iter_mut()) {
            row[*s] = acc.finish()?;
        }
        self.accs.clear();
        Ok(Some(row))
    }
}
