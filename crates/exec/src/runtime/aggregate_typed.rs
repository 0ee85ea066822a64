//! Typed column aggregation ([`TypedAgg`]): the fused scan's column mode over batches of plain
//! integers instead of `Value`s. Per batch of node ids each property column is read as an
//! `i64` slice with a presence mask ([`Graph::node_int_batch`]), the filter's integer
//! comparisons make a selection vector, small integer grouping keys find their group in a
//! direct table, and each group's rows are summarised per column ([`IntPartial`]: count, and
//! sum, min and max only where an aggregate reads them) in the same pass, and merged into the
//! group's accumulators once per batch
//! ([`Accumulator::merge_ints`](crate::functions::Accumulator::merge_ints)), or once per scan
//! when every aggregate is a count (counts do not depend on order). Rows with a delta
//! version or an own write stay in the typed form when their visible value is an integer or
//! missing (the storage gather overlays them). A batch the typed form cannot answer exactly
//! (such a row holding another type, a non-integer parameter, a key without an integer
//! column) returns `false` and goes through the `Value` columns as before, so the answers
//! are those of the row-at-a-time operators.

use arbor_cypher_plan::expr::{AggCall, PExpr, Slot};
use arbor_cypher_plan::ops::Name;
use arbor_cypher_syntax::ast::CompareOp;
use arbor_model::{Error, NodeId, Result, Value};

use super::groups::{Grouping, Groups};
use crate::ctx::Ctx;
use crate::functions::{self, AggKind, IntPartial};
use crate::graph::{Graph, TokenId};

#[cfg(test)]
#[path = "aggregate_typed_tests.rs"]
mod tests;

#[cfg(test)]
thread_local! {
    /// Batches answered in the typed form (tests check that it ran).
    static TYPED_BATCHES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What an aggregate needs of a column's summary besides the count (see [`TypedAgg::need`]).
const NEED_SUM: u8 = 1;
const NEED_MIN: u8 = 2;
const NEED_MAX: u8 = 4;

/// The right-hand side of a filter comparison `n.key <op> rhs`.
#[derive(Clone, Copy)]
enum Rhs {
    Int(i64),
    Param(usize),
}

/// A column aggregation the typed form can run: a filter made only of `n.key <op> integer`
/// conjuncts (or none), at most one grouping key, and only `count`, `sum`, `avg`, `min` and
/// `max` (not DISTINCT) of a property of the scanned node or of `*`.
pub(super) struct TypedAgg {
    /// `(column, op, rhs)` per conjunct; a row passes when each column holds an integer that
    /// compares true (a missing value makes the comparison null, which a filter drops).
    conds: Vec<(usize, CompareOp, Rhs)>,
    /// The grouping key's column.
    group: Option<usize>,
    /// Per aggregate: the index in `used` of its column, `None` for a count of rows.
    args: Vec<Option<usize>>,
    /// The columns aggregates read, each summarised once per group and batch.
    used: Vec<usize>,
    /// Per used column: which of [`NEED_SUM`], [`NEED_MIN`], [`NEED_MAX`] its aggregates read
    /// (the count is always kept).
    need: Vec<u8>,
    /// Every aggregate is a count: the per-group summaries are kept over the whole scan and
    /// merged once at its end ([`Grouping::typed_flush`]); a count's merge cannot fail and
    /// does not depend on the order of the values, so this equals merging per batch.
    deferred: bool,
    /// How many columns the batch reads (the column aggregation's property keys).
    ncols: usize,
}

impl TypedAgg {
    /// The typed form of a column aggregation over `keys` (its property columns) whose
    /// aggregate `i` reads column `args[i]` (`None`: `count(*)` or a count of the node
    /// itself), if it has one.
    pub(super) fn of(
        slot: Slot,
        pred: Option<&PExpr>,
        keys: &[Name],
        group: Option<usize>,
        args: &[Option<Option<usize>>],
        aggs: &[(Slot, AggCall)],
    ) -> Option<TypedAgg> {
        let mut conds = Vec::new();
        if let Some(p) = pred {
            conjuncts(p, slot, keys, &mut conds)?;
        }
        let mut used: Vec<usize> = Vec::new();
        let mut need: Vec<u8> = Vec::new();
        let mut deferred = true;
        let mut targs = Vec::with_capacity(aggs.len());
        for ((_, call), arg) in aggs.iter().zip(args) {
            let kind = functions::lookup_aggregate(&call.name)?;
            if call.distinct
                || !matches!(
                    kind,
                    AggKind::Count | AggKind::Sum | AggKind::Avg | AggKind::Min | AggKind::Max
                )
            {
                return None;
            }
            deferred &= kind == AggKind::Count;
            let wants = match kind {
                AggKind::Sum => NEED_SUM | NEED_MIN | NEED_MAX,
                AggKind::Avg => NEED_SUM,
                AggKind::Min => NEED_MIN,
                AggKind::Max => NEED_MAX,
                _ => 0,
            };
            targs.push(match (*arg)? {
                None if kind == AggKind::Count => None,
                None => return None,
                Some(c) => Some(match used.iter().position(|u| *u == c) {
                    Some(j) => {
                        need[j] |= wants;
                        j
                    }
                    None => {
                        used.push(c);
                        need.push(wants);
                        used.len() - 1
                    }
                }),
            });
        }
        Some(TypedAgg { conds, group, args: targs, used, need, deferred, ncols: keys.len() })
    }
}

/// Appends the conjuncts of `e` to `out` if every one is `n.key <op> integer constant or
/// parameter` with `n` the scanned node; `None` otherwise.
fn conjuncts(
    e: &PExpr,
    slot: Slot,
    keys: &[Name],
    out: &mut Vec<(usize, CompareOp, Rhs)>,
) -> Option<()> {
    match e {
        PExpr::And(a, b) => {
            conjuncts(a, slot, keys, out)?;
            conjuncts(b, slot, keys, out)
        }
        PExpr::Compare(a, rest) => {
            let [(op, rhs)] = rest.as_slice() else { return None };
            let PExpr::Property(b, k) = &**a else { return None };
            if !matches!(**b, PExpr::Slot(s) if s == slot) {
                return None;
            }
            let col = keys.iter().position(|c| c == k)?;
            let rhs = match rhs {
                PExpr::Const(Value::Int(x)) => Rhs::Int(*x),
                PExpr::Param(i) => Rhs::Param(*i),
                _ => return None,
            };
            out.push((col, *op, rhs));
            Some(())
        }
        _ => None,
    }
}

/// The buffers of a typed run, reused across its batches.
#[derive(Default)]
pub(super) struct TypedState {
    vals: Vec<Vec<i64>>,
    present: Vec<Vec<bool>>,
    /// The conjuncts with their right-hand sides resolved for this batch.
    conds: Vec<(usize, CompareOp, i64)>,
    /// Per row of the batch: whether it passes the filter.
    keep: Vec<bool>,
    /// `(row, group)` of the rows that pass the filter.
    sel: Vec<(u32, u32)>,
    /// Per used column, per group: this batch's summary.
    parts: Vec<Vec<IntPartial>>,
    /// Per group: this batch's selected rows.
    rows: Vec<i64>,
    /// The groups this batch touched, in the order first touched.
    touched: Vec<u32>,
}

#[inline(always)]
fn int_compare(op: CompareOp, a: i64, b: i64) -> bool {
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
    }
}

impl Grouping<'_> {
    /// Aggregates one batch of a column aggregation in its typed form (see the module doc);
    /// `Ok(false)`, with nothing aggregated, where the typed form cannot answer the batch.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn typed_batch(
        &self,
        t: &TypedAgg,
        st: &mut TypedState,
        toks: &[Option<TokenId>],
        ids: &[NodeId],
        groups: &mut Groups,
        ctx: &Ctx,
        g: &dyn Graph,
    ) -> Result<bool> {
        st.conds.clear();
        for (c, op, rhs) in &t.conds {
            let k = match rhs {
                Rhs::Int(k) => *k,
                Rhs::Param(i) => match ctx.params.get(*i) {
                    Some(Value::Int(k)) => *k,
                    _ => return Ok(false),
                },
            };
            st.conds.push((*c, *op, k));
        }
        st.vals.resize_with(t.ncols, Vec::new);
        st.present.resize_with(t.ncols, Vec::new);
        for c in 0..t.ncols {
            let (vals, present) = (&mut st.vals[c], &mut st.present[c]);
            vals.clear();
            present.clear();
            match toks.get(c).copied().flatten() {
                Some(tok) => {
                    if !g.node_int_batch(ids, tok, vals, present) {
                        return Ok(false);
                    }
                }
                // No such property key: every value is missing.
                None => {
                    vals.resize(ids.len(), 0);
                    present.resize(ids.len(), false);
                }
            }
        }
        if ids.is_empty() {
            return Ok(true);
        }
        #[cfg(test)]
        TYPED_BATCHES.with(|c| c.set(c.get() + 1));
        if st.conds.is_empty() && t.group.is_none() {
            self.typed_global(t, st, ids.len(), groups)?;
        } else {
            self.typed_grouped(t, st, ids.len(), groups)?;
        }
        Ok(true)
    }

    /// No filter, no grouping key: every row goes to the one group, each used column
    /// summarised in one pass over its slice.
    fn typed_global(
        &self,
        t: &TypedAgg,
        st: &mut TypedState,
        n: usize,
        groups: &mut Groups,
    ) -> Result<()> {
        groups.ensure_global(self.aggs)?;
        st.parts.resize_with(t.used.len(), Vec::new);
        for (j, c) in t.used.iter().enumerate() {
            let p = summarise(&st.vals[*c][..n], &st.present[*c][..n], t.need[j]);
            st.parts[j].clear();
            st.parts[j].push(p);
        }
        let stars = IntPartial { count: n as i64, ..IntPartial::default() };
        st.sel.clear();
        let accs = groups.accs_mut(0);
        for (ai, (acc, arg)) in accs.iter_mut().zip(&t.args).enumerate() {
            let p = match arg {
                None => &stars,
                Some(j) => &st.parts[*j][0],
            };
            if !acc.merge_ints(p) {
                // (Rare: the accumulator's state needs the values one by one.)
                st.sel.extend((0..n as u32).map(|i| (i, 0)));
                return feed_rows(t, st, 0, ai, groups);
            }
        }
        Ok(())
    }

    /// A filter or a grouping key: one pass over the batch finds each passing row's group
    /// (groups are created in row order, as the row-at-a-time operators create them; small
    /// integer keys straight from the direct table) and adds the row to its group's count and
    /// column summaries; then each touched group's summaries are merged into its accumulators
    /// (at the end of the scan instead where [`TypedAgg::deferred`]).
    fn typed_grouped(
        &self,
        t: &TypedAgg,
        st: &mut TypedState,
        n: usize,
        groups: &mut Groups,
    ) -> Result<()> {
        let filtered = !st.conds.is_empty();
        // The filter as a mask (all set without one), one tight pass per conjunct.
        st.keep.clear();
        st.keep.resize(n, true);
        for (c, op, k) in &st.conds {
            let (vals, present) = (&st.vals[*c][..n], &st.present[*c][..n]);
            for ((keep, v), here) in st.keep.iter_mut().zip(vals).zip(present) {
                *keep &= *here && int_compare(*op, *v, *k);
            }
        }
        if t.group.is_none() && groups.is_empty() && (!filtered || st.keep[..n].contains(&true)) {
            groups.ensure_global(self.aggs)?;
        }
        // Deferred: the touched groups are found at the flush, not tracked per row.
        let track = !t.deferred;
        if track {
            st.touched.clear();
        }
        st.grow(t, groups.len());
        let TypedState { vals, present, keep, rows, parts, touched, .. } = st;
        let Some(c) = t.group else {
            for (i, _) in keep[..n].iter().enumerate().filter(|(_, k)| **k) {
                bump(t, vals, present, rows, parts, touched, track, 0, i);
            }
            return if track { self.typed_merge(t, st, n, groups) } else { Ok(()) };
        };
        let (gvals, gpresent) = (&vals[c][..n], &present[c][..n]);
        let rows_of = gvals.iter().zip(gpresent).zip(&keep[..n]);
        if t.used.is_empty() && !track {
            // Counts only, merged at the end: a row is one increment of its group's count.
            for ((v, here), k) in rows_of {
                if !*k {
                    continue;
                }
                let gi = match groups.small_ints.get(*v as usize) {
                    Some(code) if *here && *code != 0 => *code as usize - 1,
                    _ => self.group_of_row(groups, *v, *here, rows, parts)?,
                };
                rows[gi] += 1;
            }
            return Ok(());
        }
        for (i, ((v, here), k)) in rows_of.enumerate() {
            if !*k {
                continue;
            }
            let gi = match groups.small_ints.get(*v as usize) {
                Some(code) if *here && *code != 0 => *code as usize - 1,
                _ => self.group_of_row(groups, *v, *here, rows, parts)?,
            };
            bump(t, vals, present, rows, parts, touched, track, gi, i);
        }
        if track {
            self.typed_merge(t, st, n, groups)
        } else {
            Ok(())
        }
    }

    /// The group of a row whose key the direct table does not answer (created if new), with
    /// the per-group summaries grown to hold it.
    #[cold]
    #[inline(never)]
    fn group_of_row(
        &self,
        groups: &mut Groups,
        v: i64,
        here: bool,
        rows: &mut Vec<i64>,
        parts: &mut [Vec<IntPartial>],
    ) -> Result<usize> {
        let key = if here { Value::Int(v) } else { Value::Null };
        let gi = groups.group_of(&key, self.aggs)?;
        if gi >= rows.len() {
            rows.resize(gi + 1, 0);
            parts.iter_mut().for_each(|p| p.resize(gi + 1, IntPartial::default()));
        }
        Ok(gi)
    }

    /// Merges the summaries of a scan whose merges were [`TypedAgg::deferred`] (a no-op for
    /// the others, merged per batch).
    pub(super) fn typed_flush(
        &self,
        t: &TypedAgg,
        st: &mut TypedState,
        groups: &mut Groups,
    ) -> Result<()> {
        if !t.deferred {
            return Ok(());
        }
        st.touched.clear();
        st.touched.extend((0..st.rows.len() as u32).filter(|gi| st.rows[*gi as usize] > 0));
        self.typed_merge(t, st, 0, groups)
    }

    /// Merges each touched group's summaries into its accumulators and resets them; where a
    /// merge is refused, that group's rows of this batch (`n` rows, still in `st`) are fed
    /// one by one. The error reported is the one of the earliest failing row.
    fn typed_merge(
        &self,
        t: &TypedAgg,
        st: &mut TypedState,
        n: usize,
        groups: &mut Groups,
    ) -> Result<()> {
        let mut first_err: Option<(u32, Error)> = None;
        let mut sel_built = false;
        for ti in 0..st.touched.len() {
            let gi = st.touched[ti] as usize;
            let stars = IntPartial { count: st.rows[gi], ..IntPartial::default() };
            for (ai, arg) in t.args.iter().enumerate() {
                let p = match arg {
                    None => &stars,
                    Some(j) => &st.parts[*j][gi],
                };
                let merged = groups.acc_mut(gi, ai).is_some_and(|acc| acc.merge_ints(p));
                if merged {
                    continue;
                }
                if !sel_built {
                    self.fill_sel(t, st, n, groups)?;
                    sel_built = true;
                }
                if let Err((row, e)) = feed_group(t, st, gi, ai, groups) {
                    if first_err.as_ref().is_none_or(|(r, _)| row < *r) {
                        first_err = Some((row, e));
                    }
                }
            }
            st.rows[gi] = 0;
            for p in &mut st.parts {
                p[gi] = IntPartial::default();
            }
        }
        st.touched.clear();
        match first_err {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }

    /// Fills `st.sel` with the `(row, group)` of the batch's passing rows, for the rare merge
    /// that needs the values one by one (every group exists by then).
    fn fill_sel(
        &self,
        t: &TypedAgg,
        st: &mut TypedState,
        n: usize,
        groups: &mut Groups,
    ) -> Result<()> {
        st.sel.clear();
        let filtered = !st.conds.is_empty();
        for i in 0..n {
            if filtered && !st.keep[i] {
                continue;
            }
            let gi = match t.group {
                None => 0,
                Some(c) if st.present[c][i] => {
                    groups.group_of(&Value::Int(st.vals[c][i]), self.aggs)?
                }
                Some(_) => groups.group_of(&Value::Null, self.aggs)?,
            };
            st.sel.push((i as u32, gi as u32));
        }
        Ok(())
    }
}

impl TypedState {
    /// Sizes the per-group summaries for `ng` groups (new ones start empty).
    fn grow(&mut self, t: &TypedAgg, ng: usize) {
        if self.rows.len() < ng {
            self.rows.resize(ng, 0);
        }
        self.parts.resize_with(t.used.len(), Vec::new);
        for p in &mut self.parts {
            if p.len() < ng {
                p.resize(ng, IntPartial::default());
            }
        }
    }
}

/// The summary of one column slice: the count of present values, and of those the sum, the
/// smallest and the largest where `need` asks for them (the others keep their defaults).
fn summarise(vals: &[i64], present: &[bool], need: u8) -> IntPartial {
    if need == 0 {
        let count = present.iter().map(|h| i64::from(*h)).sum();
        return IntPartial { count, ..IntPartial::default() };
    }
    match need {
        NEED_SUM => summarise_as::<NEED_SUM>(vals, present),
        NEED_MIN => summarise_as::<NEED_MIN>(vals, present),
        NEED_MAX => summarise_as::<NEED_MAX>(vals, present),
        3 => summarise_as::<3>(vals, present),
        5 => summarise_as::<5>(vals, present),
        6 => summarise_as::<6>(vals, present),
        _ => summarise_as::<7>(vals, present),
    }
}

/// [`summarise`] for one `need`, in one pass with no branch per value: a missing value
/// counts 0 and adds 0, and is `i64::MAX` to the minimum and `i64::MIN` to the maximum (their
/// starting values, so it changes neither). The sum is kept as two `i64` halves per chunk
/// (each value's high 32 bits, arithmetic, and its low 32 bits, unsigned), which cannot
/// overflow over [`SUM_CHUNK`] values and are joined into the `i128` once per chunk.
fn summarise_as<const NEED: u8>(vals: &[i64], present: &[bool]) -> IntPartial {
    let mut p = IntPartial::default();
    for (vs, hs) in vals.chunks(SUM_CHUNK).zip(present.chunks(SUM_CHUNK)) {
        let (mut count, mut hi, mut lo) = (0i64, 0i64, 0i64);
        let (mut min, mut max) = (i64::MAX, i64::MIN);
        for (v, here) in vs.iter().zip(hs) {
            let h = *here;
            count += i64::from(h);
            if NEED & NEED_SUM != 0 {
                let x = if h { *v } else { 0 };
                hi += x >> 32;
                lo += x & 0xffff_ffff;
            }
            if NEED & NEED_MIN != 0 {
                min = min.min(if h { *v } else { i64::MAX });
            }
            if NEED & NEED_MAX != 0 {
                max = max.max(if h { *v } else { i64::MIN });
            }
        }
        p.count += count;
        p.sum += (i128::from(hi) << 32) + i128::from(lo);
        p.min = p.min.min(min);
        p.max = p.max.max(max);
    }
    p
}

/// Values per chunk of [`summarise_as`]'s split sum: the high halves (below 2^31 in
/// magnitude) and the low ones (below 2^32) of this many values stay far inside `i64`.
const SUM_CHUNK: usize = 1 << 16;

/// Adds row `i` of the batch to group `gi`: its count, and its values to the group's column
/// summaries; `track`: notes the group as touched in this batch when it is the first row.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn bump(
    t: &TypedAgg,
    vals: &[Vec<i64>],
    present: &[Vec<bool>],
    rows: &mut [i64],
    parts: &mut [Vec<IntPartial>],
    touched: &mut Vec<u32>,
    track: bool,
    gi: usize,
    i: usize,
) {
    let r = &mut rows[gi];
    if track && *r == 0 {
        touched.push(gi as u32);
    }
    *r += 1;
    for ((c, need), part) in t.used.iter().zip(&t.need).zip(parts.iter_mut()) {
        if present[*c][i] {
            add_some(&mut part[gi], vals[*c][i], *need);
        }
    }
}

/// Adds `v` to `p` as [`IntPartial::add`] does, keeping only what `need` asks for besides the
/// count.
#[inline(always)]
fn add_some(p: &mut IntPartial, v: i64, need: u8) {
    p.count += 1;
    if need & NEED_SUM != 0 {
        p.sum += i128::from(v);
    }
    if need & NEED_MIN != 0 {
        p.min = p.min.min(v);
    }
    if need & NEED_MAX != 0 {
        p.max = p.max.max(v);
    }
}

/// Feeds aggregate `ai` of group `gi` this batch's selected rows of that group one value at a
/// time; the failing row and its error, if any.
fn feed_group(
    t: &TypedAgg,
    st: &TypedState,
    gi: usize,
    ai: usize,
    groups: &mut Groups,
) -> std::result::Result<(), (u32, Error)> {
    let Some(acc) = groups.acc_mut(gi, ai) else {
        return Ok(());
    };
    let col = t.args.get(ai).copied().flatten().and_then(|j| t.used.get(j).copied());
    for (i, _) in st.sel.iter().filter(|(_, g)| *g as usize == gi) {
        let v = match col {
            None => Value::Bool(true),
            Some(c) if st.present[c][*i as usize] => Value::Int(st.vals[c][*i as usize]),
            Some(_) => Value::Null,
        };
        acc.update(std::slice::from_ref(&v)).map_err(|e| (*i, e))?;
    }
    Ok(())
}

/// [`feed_group`] for the one group of a global aggregation, from aggregate `from` on (the
/// ones before it merged their summaries already).
fn feed_rows(
    t: &TypedAgg,
    st: &TypedState,
    gi: usize,
    from: usize,
    groups: &mut Groups,
) -> Result<()> {
    let mut first_err: Option<(u32, Error)> = None;
    for ai in from..t.args.len() {
        let merged = ai != from && {
            let p = match t.args[ai] {
                None => IntPartial { count: st.sel.len() as i64, ..IntPartial::default() },
                Some(j) => st.parts[j][0],
            };
            groups.acc_mut(gi, ai).is_some_and(|a| a.merge_ints(&p))
        };
        if merged {
            continue;
        }
        if let Err((row, e)) = feed_group(t, st, gi, ai, groups) {
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
