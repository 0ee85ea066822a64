//! Typed column aggregation ([`TypedAgg`]): the fused scan's column mode over batches of plain
//! integers instead of `Value`s. Per batch of node ids each property column is read as an
//! `i64` slice with a presence mask ([`Graph::node_int_batch`]), the filter's integer
//! comparisons make a selection vector, small integer grouping keys find their group in a
//! direct table, and each group's rows are summarised per column ([`IntPartial`]: count, sum,
//! min, max) and merged into the group's accumulators once per batch
//! ([`Accumulator::merge_ints`](crate::functions::Accumulator::merge_ints)). A batch the
//! typed form cannot answer exactly (a row with a delta version or an own write, a
//! non-integer parameter, a key without an integer column) returns `false` and goes through
//! the `Value` columns as before, so the answers are those of the row-at-a-time operators.

use arbor_cypher_plan::expr::{AggCall, PExpr, Slot};
use arbor_cypher_plan::ops::Name;
use arbor_cypher_syntax::ast::CompareOp;
use arbor_model::{Error, NodeId, Result, Value};

use super::groups::{new_accs, Grouping, Groups};
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
            targs.push(match (*arg)? {
                None if kind == AggKind::Count => None,
                None => return None,
                Some(c) => Some(match used.iter().position(|u| *u == c) {
                    Some(j) => j,
                    None => {
                        used.push(c);
                        used.len() - 1
                    }
                }),
            });
        }
        Some(TypedAgg { conds, group, args: targs, used, ncols: keys.len() })
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
            self.typed_select(t, st, ids.len(), groups)?;
            self.typed_grouped(t, st, groups)?;
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
        if groups.groups.is_empty() {
            groups.groups.push((Vec::new(), new_accs(self.aggs)?));
        }
        st.parts.resize_with(t.used.len(), Vec::new);
        for (j, c) in t.used.iter().enumerate() {
            let mut p = IntPartial::default();
            for (v, here) in st.vals[*c].iter().zip(&st.present[*c]) {
                if *here {
                    p.add(*v);
                }
            }
            st.parts[j].clear();
            st.parts[j].push(p);
        }
        let stars = IntPartial { count: n as i64, ..IntPartial::default() };
        st.sel.clear();
        let accs = &mut groups.groups[0].1;
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

    /// Fills `st.sel` with the rows that pass the filter and their groups (created in row
    /// order, as the row-at-a-time operators create them).
    fn typed_select(
        &self,
        t: &TypedAgg,
        st: &mut TypedState,
        n: usize,
        groups: &mut Groups,
    ) -> Result<()> {
        // The filter as a mask, one tight pass per conjunct over its column.
        st.keep.clear();
        st.keep.resize(n, true);
        for (c, op, k) in &st.conds {
            let (vals, present) = (&st.vals[*c][..n], &st.present[*c][..n]);
            for ((keep, v), here) in st.keep.iter_mut().zip(vals).zip(present) {
                *keep &= *here && int_compare(*op, *v, *k);
            }
        }
        st.sel.clear();
        st.sel.reserve(n);
        let none = &[][..];
        let (gvals, gpresent) = match t.group {
            Some(c) => (&st.vals[c][..n], &st.present[c][..n]),
            None => (none, &[][..]),
        };
        for i in 0..n {
            if !st.keep[i] {
                continue;
            }
            let gi = match t.group {
                None => {
                    if groups.groups.is_empty() {
                        groups.groups.push((Vec::new(), new_accs(self.aggs)?));
                    }
                    0
                }
                Some(_) if gpresent[i] => {
                    let v = gvals[i];
                    let small = usize::try_from(v).ok().and_then(|x| groups.small_ints.get(x));
                    match small.filter(|g| **g != 0) {
                        Some(g) => *g as usize - 1,
                        None => groups.group_of(&Value::Int(v), self.aggs)?,
                    }
                }
                Some(_) => groups.group_of(&Value::Null, self.aggs)?,
            };
            st.sel.push((i as u32, gi as u32));
        }
        Ok(())
    }

    /// Summarises the selected rows per group and used column, then merges each touched
    /// group's summaries into its accumulators.
    fn typed_grouped(&self, t: &TypedAgg, st: &mut TypedState, groups: &mut Groups) -> Result<()> {
        let ng = groups.groups.len();
        st.rows.resize(ng, 0);
        st.parts.resize_with(t.used.len(), Vec::new);
        for p in &mut st.parts {
            p.resize(ng, IntPartial::default());
        }
        st.touched.clear();
        for (_, gi) in &st.sel {
            let gi = *gi as usize;
            if st.rows[gi] == 0 {
                st.touched.push(gi as u32);
            }
            st.rows[gi] += 1;
        }
        for (j, c) in t.used.iter().enumerate() {
            let (vals, present, parts) = (&st.vals[*c], &st.present[*c], &mut st.parts[j]);
            for (i, gi) in &st.sel {
                if present[*i as usize] {
                    parts[*gi as usize].add(vals[*i as usize]);
                }
            }
        }
        let mut first_err: Option<(u32, Error)> = None;
        for ti in 0..st.touched.len() {
            let gi = st.touched[ti] as usize;
            let stars = IntPartial { count: st.rows[gi], ..IntPartial::default() };
            for (ai, arg) in t.args.iter().enumerate() {
                let p = match arg {
                    None => &stars,
                    Some(j) => &st.parts[*j][gi],
                };
                let merged = groups
                    .groups
                    .get_mut(gi)
                    .and_then(|g| g.1.get_mut(ai))
                    .is_some_and(|acc| acc.merge_ints(p));
                if !merged {
                    if let Err((row, e)) = feed_group(t, st, gi, ai, groups) {
                        if first_err.as_ref().is_none_or(|(r, _)| row < *r) {
                            first_err = Some((row, e));
                        }
                    }
                }
            }
            st.rows[gi] = 0;
            for p in &mut st.parts {
                p[gi] = IntPartial::default();
            }
        }
        match first_err {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
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
    let Some(acc) = groups.groups.get_mut(gi).and_then(|g| g.1.get_mut(ai)) else {
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
            groups
                .groups
                .get_mut(gi)
                .and_then(|g| g.1.get_mut(ai))
                .is_some_and(|a| a.merge_ints(&p))
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
