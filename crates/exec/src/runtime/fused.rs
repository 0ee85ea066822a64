//! The fused scan aggregate: an aggregation driving a node scan itself in batches
//! ([`FusedScan`]), and its column mode ([`ColumnAgg`]).

use arbor_cypher_plan::expr::{AggCall, PExpr, Slot};
use arbor_cypher_plan::ops::{Name, Op};
use arbor_model::{Error, NodeId, Result, Value};

use super::aggregate_typed::{TypedAgg, TypedState};
use super::groups::{Grouping, Groups, SCAN_BATCH, STARS, TYPED_BATCH};
use crate::ctx::{Ctx, Row, ScanCols};
use crate::eval::CompiledPred;
use crate::functions::{self, AggKind};
use crate::graph::{Graph, TokenId, TokenKind};

/// A node scan, optionally filtered, feeding an aggregation directly: ids are fetched in
/// batches and each node is written into one working row that is filtered and aggregated in
/// place, so no row is copied, produced or recycled per node and no operator is called per
/// node. Equivalent to `Aggregate(Filter(NodeScan(Argument)))` pulled row by row, which still
/// runs under PROFILE (it counts rows per operator).
pub(super) struct FusedScan {
    pub(super) slot: Slot,
    pub(super) label: Option<Name>,
    pub(super) pred: Option<PExpr>,
    /// Set when the grouping key and every aggregate argument are columns of the scan (see
    /// [`ColumnAgg`]).
    pub(super) cols: Option<ColumnAgg>,
}

/// Where a column aggregation takes one aggregate's argument from.
#[derive(Clone, Copy)]
enum ColArg {
    /// The scanned node itself (`collect(n)`).
    Node,
    /// `count(*)`, or `count(n)` of the scanned node (never null).
    Star,
    /// A property of the scanned node: index into [`ColumnAgg::keys`].
    Prop(usize),
}

/// A fused scan's aggregation when its grouping key (at most one) and each aggregate's single
/// argument are properties of the scanned node (or the node itself, or `count(*)`): per batch
/// of ids each property is read for the whole batch at once ([`Graph::node_property_batch`],
/// a column lookup per node in the engine for base rows), and rows are grouped and aggregated
/// straight from those columns, with no expression evaluated per node and integer keys looked
/// up without hashing a generic key. The filter's leading `n.key <op> integer` conjuncts are
/// decided for the whole batch from the columns; the rest of it runs per node where needed,
/// its reads of the scanned node's properties answered from the same columns
/// (`Ctx::scan_cols`), which also hold the properties only the filter reads.
pub(super) struct ColumnAgg {
    /// The property keys read, one column each.
    keys: Vec<Name>,
    /// The column of the grouping key, if there is one.
    group: Option<usize>,
    args: Vec<ColArg>,
    /// The typed form, when the filter, key and aggregates allow it (see [`TypedAgg`]).
    typed: Option<TypedAgg>,
}

impl ColumnAgg {
    pub(super) fn of(
        slot: Slot,
        pred: Option<&PExpr>,
        keys: &[(Slot, PExpr)],
        aggs: &[(Slot, AggCall)],
    ) -> Option<ColumnAgg> {
        let mut cols: Vec<Name> = Vec::new();
        let mut col = |k: &Name| match cols.iter().position(|c| c == k) {
            Some(i) => i,
            None => {
                cols.push(k.clone());
                cols.len() - 1
            }
        };
        fn prop(e: &PExpr, slot: Slot) -> Option<&Name> {
            match e {
                PExpr::Property(b, k) if matches!(**b, PExpr::Slot(s) if s == slot) => Some(k),
                _ => None,
            }
        }
        let group = match keys {
            [] => None,
            [(_, e)] => Some(col(prop(e, slot)?)),
            _ => return None,
        };
        let mut args = Vec::with_capacity(aggs.len());
        for (_, call) in aggs {
            let kind = functions::lookup_aggregate(&call.name)?;
            args.push(match call.args.as_slice() {
                _ if call.count_star => ColArg::Star,
                // The scanned node is never null: counting it counts rows.
                [PExpr::Slot(s)] if *s == slot && kind == AggKind::Count && !call.distinct => {
                    ColArg::Star
                }
                [PExpr::Slot(s)] if *s == slot => ColArg::Node,
                [e] => ColArg::Prop(col(prop(e, slot)?)),
                _ => return None,
            });
        }
        if let Some(p) = pred {
            filter_props(p, slot, &mut col);
        }
        let targs: Vec<_> = args
            .iter()
            .map(|a| match a {
                ColArg::Node => None,
                ColArg::Star => Some(None),
                ColArg::Prop(c) => Some(Some(*c)),
            })
            .collect();
        let typed = TypedAgg::of(slot, pred, &cols, group, &targs, aggs);
        Some(ColumnAgg { keys: cols, group, args, typed })
    }
}

/// Adds to the columns the properties of `slot` that `e` reads through the operators a filter
/// is usually made of (others are read from the graph as usual).
pub(super) fn filter_props(e: &PExpr, slot: Slot, col: &mut dyn FnMut(&Name) -> usize) {
    match e {
        PExpr::Property(b, k) if matches!(**b, PExpr::Slot(s) if s == slot) => {
            col(k);
        }
        PExpr::Not(a) | PExpr::IsNull(a, _) | PExpr::Neg(a) => filter_props(a, slot, col),
        PExpr::And(a, b)
        | PExpr::Or(a, b)
        | PExpr::Xor(a, b)
        | PExpr::Arith(_, a, b)
        | PExpr::In(a, b)
        | PExpr::Str(_, a, b) => {
            filter_props(a, slot, col);
            filter_props(b, slot, col);
        }
        PExpr::Compare(a, rest) => {
            filter_props(a, slot, col);
            rest.iter().for_each(|(_, e)| filter_props(e, slot, col));
        }
        _ => {}
    }
}

impl FusedScan {
    pub(super) fn of(input: &Op) -> Option<FusedScan> {
        let (scan, pred) = match input {
            Op::Filter { input, pred, .. } => (&**input, Some(pred.clone())),
            other => (other, None),
        };
        match scan {
            Op::NodeScan { input, slot, label } if matches!(**input, Op::Argument) => {
                Some(FusedScan { slot: *slot, label: label.clone(), pred, cols: None })
            }
            _ => None,
        }
    }
}

/// For each aggregate, the first earlier one whose single argument is the same property read of
/// the same slot. Only property reads are shared: they give the same value twice within a row,
/// which a general expression (`rand()`) need not.
pub(super) fn reused_args(aggs: &[(Slot, AggCall)]) -> Vec<Option<usize>> {
    let prop = |c: &AggCall| match c.args.as_slice() {
        [PExpr::Property(b, k)] if !c.count_star => match **b {
            PExpr::Slot(s) => Some((s, k.clone())),
            _ => None,
        },
        _ => None,
    };
    let props: Vec<_> = aggs.iter().map(|(_, c)| prop(c)).collect();
    props
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let p = p.as_ref()?;
            props[..i].iter().position(|q| q.as_ref() == Some(p))
        })
        .collect()
}

impl Grouping<'_> {
    /// Runs the fused scan into `groups` (see [`FusedScan`]).
    pub(super) fn scan_into(
        &self,
        scan: &FusedScan,
        groups: &mut Groups,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let tok = match &scan.label {
            None => None,
            Some(l) => match g.token_id(TokenKind::Label, l) {
                Some(t) => Some(t),
                // No such label: the scan is empty.
                None => return Ok(()),
            },
        };
        let mut pred = scan.pred.clone().map(CompiledPred::new);
        let mut row = self.arg.clone();
        if let Some(cols) = &scan.cols {
            let toks = cols.keys.iter().map(|k| g.token_id(TokenKind::PropertyKey, k)).collect();
            // A column aggregation may run inside another one's filter (a subquery): the
            // outer one's columns are put back afterwards.
            let outer = ctx.scan_cols.take();
            ctx.scan_cols = Some(ScanCols {
                node: NodeId(u64::MAX),
                pos: 0,
                toks,
                cols: vec![Vec::with_capacity(SCAN_BATCH); cols.keys.len()],
            });
            let r = self.scan_columns(scan, cols, tok, pred.as_mut(), &mut row, groups, ctx, g);
            ctx.scan_cols = outer;
            return match r? {
                // The table would pass the memory left and froze: the rest of the scan goes
                // row at a time, spilling the rows of new groups.
                Some(from) => {
                    self.scan_rows(scan, tok, from, pred.as_mut(), &mut row, groups, ctx, g)
                }
                None => Ok(()),
            };
        }
        self.scan_rows(scan, tok, NodeId(0), pred.as_mut(), &mut row, groups, ctx, g)
    }

    /// The fused scan row at a time from node `from` on, through [`Groups::add`] (which
    /// spills when the table does not fit).
    #[allow(clippy::too_many_arguments)]
    fn scan_rows(
        &self,
        scan: &FusedScan,
        tok: Option<TokenId>,
        mut from: NodeId,
        mut pred: Option<&mut CompiledPred>,
        row: &mut Row,
        groups: &mut Groups,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let mut ids = Vec::with_capacity(SCAN_BATCH);
        loop {
            ctx.check_interrupt()?;
            ids.clear();
            g.next_nodes(tok, from, SCAN_BATCH, &mut ids);
            for id in &ids {
                row[scan.slot] = Value::Node(*id);
                if let Some(p) = pred.as_deref_mut() {
                    if !p.test(row, ctx, g)? {
                        continue;
                    }
                }
                groups.add(self.keys, self.aggs, self.reuse, row, ctx, g)?;
            }
            match ids.last() {
                Some(last) if ids.len() == SCAN_BATCH => from = NodeId(last.0 + 1),
                _ => return Ok(()),
            }
        }
    }
}

impl Grouping<'_> {
    /// The fused scan as a column aggregation (see [`ColumnAgg`]); `ctx.scan_cols` is set up
    /// by the caller.
    #[allow(clippy::too_many_arguments)]
    fn scan_columns(
        &self,
        scan: &FusedScan,
        cols: &ColumnAgg,
        label: Option<TokenId>,
        mut pred: Option<&mut CompiledPred>,
        row: &mut Row,
        groups: &mut Groups,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<Option<NodeId>> {
        // The typed form reads larger batches (its per-batch work is a few calls, its per-row
        // work a few instructions); a batch it cannot answer goes through the `Value` columns
        // in pieces of `SCAN_BATCH`.
        let batch = if cols.typed.is_some() { TYPED_BATCH } else { SCAN_BATCH };
        let mut ids = Vec::with_capacity(batch);
        let mut from = NodeId(0);
        let mut typed = TypedState::default();
        let toks = ctx.scan_cols.as_ref().map(|sc| sc.toks.clone()).unwrap_or_default();
        loop {
            ctx.check_interrupt()?;
            if groups.needs_spill() {
                // The table's next growth would not fit: the typed summaries merged, and if
                // scratch files can be had the rest of the scan goes row at a time.
                if let Some(t) = &cols.typed {
                    self.typed_flush(t, &mut typed, groups)?;
                }
                if groups.freeze(g) {
                    return Ok(Some(from));
                }
            }
            ids.clear();
            g.next_nodes(label, from, batch, &mut ids);
            let done = match &cols.typed {
                Some(t) => self.typed_batch(t, &mut typed, &toks, &ids, groups, ctx, &*g)?,
                None => false,
            };
            if !done {
                for piece in ids.chunks(SCAN_BATCH) {
                    self.value_batch(scan, cols, piece, pred.as_deref_mut(), row, groups, ctx, g)?;
                }
            }
            match ids.last() {
                Some(last) if ids.len() == batch => from = NodeId(last.0 + 1),
                _ => break,
            }
        }
        if let Some(t) = &cols.typed {
            self.typed_flush(t, &mut typed, groups)?;
        }
        Ok(None)
    }

    /// One batch (at most `SCAN_BATCH` ids) of a column aggregation through the `Value`
    /// columns.
    #[allow(clippy::too_many_arguments)]
    fn value_batch(
        &self,
        scan: &FusedScan,
        cols: &ColumnAgg,
        ids: &[NodeId],
        pred: Option<&mut CompiledPred>,
        row: &mut Row,
        groups: &mut Groups,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        if let Some(sc) = &mut ctx.scan_cols {
            for (c, tok) in sc.cols.iter_mut().zip(&sc.toks) {
                // Scalars own nothing: forgetting them skips a call of the drop glue per
                // value that `clear` would make (others are dropped as usual).
                for v in c.drain(..) {
                    if matches!(v, Value::Int(_) | Value::Null | Value::Bool(_) | Value::Float(_)) {
                        std::mem::forget(v);
                    }
                }
                match tok {
                    Some(t) => g.node_property_batch(ids, *t, c),
                    None => c.resize(ids.len(), Value::Null),
                }
            }
        }
        if pred.is_none() && cols.group.is_none() {
            self.aggregate_batch(cols, ids, groups, ctx)
        } else {
            self.aggregate_rows(scan, cols, ids, pred, row, groups, ctx, g)
        }
    }

    /// One batch of an unfiltered global column aggregation: each aggregate takes its whole
    /// column at once ([`Accumulator::update_many`]). The error reported is the one the row
    /// at a time order meets first: the earliest failing row, and on it the first aggregate.
    fn aggregate_batch(
        &self,
        cols: &ColumnAgg,
        ids: &[NodeId],
        groups: &mut Groups,
        ctx: &mut Ctx,
    ) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        groups.ensure_global(self.aggs)?;
        let Some(sc) = &ctx.scan_cols else {
            return Err(Error::internal("column aggregation without its columns"));
        };
        let mut nodes = Vec::new();
        if cols.args.iter().any(|a| matches!(a, ColArg::Node)) {
            nodes.extend(ids.iter().map(|id| Value::Node(*id)));
        }
        let mut first_err: Option<(usize, Error)> = None;
        for (acc, arg) in groups.accs_mut(0).iter_mut().zip(&cols.args) {
            let vals: &[Value] = match arg {
                ColArg::Star => STARS.get(..ids.len()).unwrap_or(&[]),
                ColArg::Node => &nodes,
                ColArg::Prop(c) => sc.cols.get(*c).map_or(&[], |c| &c[..]),
            };
            if let Err((row, e)) = acc.update_many(vals) {
                if first_err.as_ref().is_none_or(|(r, _)| row < *r) {
                    first_err = Some((row, e));
                }
            }
        }
        match first_err {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }

    /// One batch of a column aggregation with a filter or a grouping key, in two passes:
    /// first each row is filtered and its group found (groups are created in row order, as
    /// the row-at-a-time operators create them), then each aggregate takes its rows in order,
    /// `count(*)` as one count per group. The error reported is the one the row-at-a-time
    /// order meets first: the earliest row where the filter or an aggregate fails, and on an
    /// aggregate's row the first aggregate.
    #[allow(clippy::too_many_arguments)]
    fn aggregate_rows(
        &self,
        scan: &FusedScan,
        cols: &ColumnAgg,
        ids: &[NodeId],
        mut pred: Option<&mut CompiledPred>,
        row: &mut Row,
        groups: &mut Groups,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let mut sel = std::mem::take(&mut groups.sel);
        sel.clear();
        let mut filter_err = None;
        let mut decided = std::mem::take(&mut groups.decided);
        if let Some(p) = pred.as_deref_mut() {
            p.decide_batch(ctx, &*g, scan.slot, ids.len(), &mut decided);
        }
        // Whether no row needs the general filter: then one tight pass over the grouping
        // column finds the groups, small integer keys straight from the direct table.
        let tight =
            cols.group.is_some()
                && (pred.is_none() || decided.iter().all(Option::is_some))
                && ctx.scan_cols.as_ref().zip(cols.group).is_some_and(|(sc, c)| {
                    sc.cols.get(c).is_some_and(|col| col.len() == ids.len())
                });
        if tight {
            let col = match (cols.group, &ctx.scan_cols) {
                (Some(c), Some(sc)) => sc.cols.get(c).map_or(&[][..], |c| &c[..]),
                _ => &[],
            };
            for (i, v) in col.iter().enumerate() {
                if decided.get(i) == Some(&Some(false)) {
                    continue;
                }
                let small = match v {
                    Value::Int(x) => usize::try_from(*x)
                        .ok()
                        .and_then(|x| groups.small_ints.get(x))
                        .filter(|g| **g != 0),
                    _ => None,
                };
                let gi = match small {
                    Some(g) => *g as usize - 1,
                    None => groups.group_of(v, self.aggs)?,
                };
                sel.push((i as u32, gi as u32));
            }
        }
        let rows = if tight { &[][..] } else { ids };
        for (i, id) in rows.iter().enumerate() {
            let undecided = match decided.get(i) {
                Some(Some(false)) => continue,
                Some(Some(true)) => None,
                _ => pred.as_deref_mut(),
            };
            if let Some(p) = undecided {
                // (In place when the slot already holds a node: no drop of the old value.)
                match row.get_mut(scan.slot) {
                    Some(Value::Node(n)) => *n = *id,
                    Some(v) => *v = Value::Node(*id),
                    None => return Err(Error::internal("fused scan slot out of range")),
                }
                if let Some(sc) = &mut ctx.scan_cols {
                    sc.node = *id;
                    sc.pos = i;
                }
                match p.test(row, ctx, g) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        filter_err = Some(e);
                        break;
                    }
                }
            }
            let gi = match cols.group {
                None => {
                    groups.ensure_global(self.aggs)?;
                    0
                }
                Some(c) => {
                    let v = ctx.scan_cols.as_ref().and_then(|sc| sc.cols.get(c)?.get(i));
                    groups.group_of(v.unwrap_or(&Value::Null), self.aggs)?
                }
            };
            sel.push((i as u32, gi as u32));
        }
        let Some(sc) = &ctx.scan_cols else {
            return Err(Error::internal("column aggregation without its columns"));
        };
        let first_err = update_columns(cols, ids, &sel, groups, sc);
        groups.sel = sel;
        groups.decided = decided;
        match (first_err, filter_err) {
            (Some((_, e)), _) | (None, Some(e)) => Err(e),
            (None, None) => Ok(()),
        }
    }
}

/// Feeds the selected rows of a batch (`sel`: row and group) to each aggregate from the
/// batch's columns, `count(*)` as one count per group; the earliest failing row and its
/// error, if any (see `Aggregate::aggregate_rows`).
#[inline(always)]
fn update_columns(
    cols: &ColumnAgg,
    ids: &[NodeId],
    sel: &[(u32, u32)],
    groups: &mut Groups,
    sc: &ScanCols,
) -> Option<(u32, Error)> {
    // (row, error) of the earliest failing row so far.
    let mut first_err: Option<(u32, Error)> = None;
    for (ai, arg) in cols.args.iter().enumerate() {
        match arg {
            ColArg::Star => {
                let mut counts = std::mem::take(&mut groups.counts);
                counts.clear();
                counts.resize(groups.len(), 0);
                for (_, gi) in sel {
                    counts[*gi as usize] += 1;
                }
                for (gi, n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
                    let stars = STARS.get(..*n as usize).unwrap_or(&[]);
                    if let Some(acc) = groups.acc_mut(gi, ai) {
                        // (Counting cannot fail; an error would be reported at row 0.)
                        if let Err((_, e)) = acc.update_many(stars) {
                            first_err = Some((0, e));
                        }
                    }
                }
                groups.counts = counts;
            }
            ColArg::Node | ColArg::Prop(_) => {
                for (i, gi) in sel {
                    if first_err.as_ref().is_some_and(|(r, _)| i >= r) {
                        break;
                    }
                    let node;
                    let v = match arg {
                        ColArg::Prop(c) => {
                            sc.cols.get(*c).and_then(|c| c.get(*i as usize)).unwrap_or(&Value::Null)
                        }
                        _ => {
                            node = Value::Node(ids[*i as usize]);
                            &node
                        }
                    };
                    let Some(acc) = groups.acc_mut(*gi as usize, ai) else {
                        continue;
                    };
                    if let Err(e) = acc.update(std::slice::from_ref(v)) {
                        first_err = Some((*i, e));
                        break;
                    }
                }
            }
        }
    }
    first_err
}
