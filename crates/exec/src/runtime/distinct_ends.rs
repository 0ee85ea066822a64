//! `Distinct` over a one-key `Project` over a distinct-end expansion, run as one operator:
//! `RETURN DISTINCT n.id` / `WITH DISTINCT n` right above `VarLengthExpand(Pruning)` or
//! `(Pruning,BFS)` (mgBench Q7-Q14: `MATCH (s {id: $id})-->()-->(n:User) RETURN DISTINCT n.id`).
//!
//! Row at a time, each end costs three operators (the expansion copies its working row out,
//! the projection evaluates the key into it, the distinct hashes it and drops a repeat) and two
//! counted virtual calls between them; on Q7 that was about 500 of the 1,700 instructions the
//! engine spent per result row. Here the expansion hands each end to one closure in its working
//! row (the [`Pump`] driver), which evaluates the key, tests it against the keys seen and copies
//! the row out only for a new key: the set of ends is deduplicated on the key without a row per
//! end.
//!
//! Why the answers are the same: the closure does, per end and in the same order, exactly what
//! the three operators did (the projection's `eval` of the key into its slot, the distinct's
//! key test through [`KeySet`], which is the distinct's own), so the same rows come out, the
//! same errors are raised at the same end, and a `reset` clears the keys as `Distinct::reset`
//! did. The working row keeps the key written into it; the expansion never reads that slot
//! (it writes only the end's slot), and the projection wrote the same value into its copy.
//! PROFILE keeps a row count per plan operator: the projection's (and the fused filter's, or
//! the expansion's without one) is counted here, per end handed on.

use rustc_hash::FxHashSet;

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::Op;
use arbor_model::{group_key, GroupKey, Result, Value};

use super::builder::Builder;
use super::frontier::FrontierExpand;
use super::pruning::PruningVarExpand;
use super::pump::{pump, Pump};
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::eval;
use crate::graph::Graph;

/// The keys a one-slot `DISTINCT` has seen: integers in a plain integer set while every key
/// was one (`ints`), the first other key moves them into `other` as `GroupKey::Int`, the key
/// `group_key` gives an integer, so membership is the same either way.
#[derive(Default)]
pub(super) struct KeySet {
    ints: FxHashSet<i64>,
    other: FxHashSet<GroupKey>,
    mixed: bool,
}

impl KeySet {
    /// Adds `v`'s key; whether it was new.
    #[inline]
    pub(super) fn insert(&mut self, v: &Value) -> bool {
        match v {
            Value::Int(x) if !self.mixed => self.ints.insert(*x),
            v => {
                if !self.mixed {
                    self.mixed = true;
                    self.other.extend(self.ints.drain().map(GroupKey::Int));
                }
                self.other.insert(group_key(v))
            }
        }
    }

    /// Whether `v`'s key is in the set.
    pub(super) fn contains(&self, v: &Value) -> bool {
        match v {
            Value::Int(x) if !self.mixed => self.ints.contains(x),
            v if !self.mixed => matches!(group_key(v), GroupKey::Int(i) if self.ints.contains(&i)),
            v => self.other.contains(&group_key(v)),
        }
    }

    pub(super) fn clear(&mut self) {
        self.ints.clear();
        self.other.clear();
        self.mixed = false;
    }
}

/// Builds the fused operator for `Distinct { slots: [k] }` over `Project { items: [(k, e)] }`
/// over a distinct-end expansion (with or without the filter it fuses), or `None` for any other
/// shape. Called with the `Distinct`'s own PROFILE number taken; numbers the projection, the
/// filter and the expansion as their own builders would (pre-order).
pub(super) fn build_distinct_ends(op: &Op, b: &mut Builder) -> Option<Box<dyn Operator>> {
    let Op::Distinct { input, slots } = op else { return None };
    let [slot] = slots[..] else { return None };
    let Op::Project { input: below, items } = &**input else { return None };
    let [(k, expr)] = &items[..] else { return None };
    if *k != slot {
        return None;
    }
    let (filter, expand) = match &**below {
        Op::Filter { input, pred, .. } => (Some(pred), &**input),
        other => (None, other),
    };
    if !matches!(expand, Op::PruningVarExpand { .. } | Op::FrontierExpand { .. }) {
        return None;
    }
    let project_id = b.next_id;
    b.next_id += 1;
    // The filter's number, then the expansion's (counted inside it, before the filter).
    let (counted, filter) = match filter {
        Some(pred) => {
            let filter_id = b.next_id;
            b.next_id += 1;
            let expand_id = b.next_id;
            b.next_id += 1;
            (filter_id, Some((pred.clone(), expand_id)))
        }
        None => {
            let expand_id = b.next_id;
            b.next_id += 1;
            (expand_id, None)
        }
    };
    // What `Project` hands the expansion: its items, for the late columns.
    b.late_reads = vec![expr.clone()];
    let ids = [project_id, counted];
    let expr = expr.clone();
    let op: Box<dyn Operator> = if matches!(expand, Op::FrontierExpand { .. }) {
        let pump = FrontierExpand::new(expand, b, filter);
        Box::new(DistinctEnds { pump, slot, expr, ids, keys: KeySet::default() })
    } else {
        let pump = PruningVarExpand::new(expand, b, filter);
        Box::new(DistinctEnds { pump, slot, expr, ids, keys: KeySet::default() })
    };
    b.late_reads.clear();
    Some(op)
}

/// The fused `Distinct`/`Project`/expansion (see the module doc).
struct DistinctEnds<P: Pump> {
    pump: P,
    /// The key's slot (the projection's and the distinct's).
    slot: Slot,
    /// The projected key.
    expr: PExpr,
    /// PROFILE numbers counted per end handed on: the projection's, and the fused filter's (or
    /// the expansion's).
    ids: [usize; 2],
    keys: KeySet,
}

impl<P: Pump> Operator for DistinctEnds<P> {
    fn reset(&mut self, arg: &Row) {
        self.pump.reset(arg);
        self.keys.clear();
    }

    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let mut out = None;
        let (slot, expr, ids, keys) = (self.slot, &self.expr, self.ids, &mut self.keys);
        pump(&mut self.pump, ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph| {
            if ctx.profile {
                for id in ids {
                    if let Some(c) = ctx.rows.get_mut(id) {
                        *c += 1;
                    }
                }
            }
            let v = eval(expr, row, ctx, g)?;
            ctx.tick()?;
            if !keys.insert(&v) {
                return Ok(false);
            }
            row[slot] = v;
            out = Some(ctx.row_like(row));
            Ok(true)
        })?;
        Ok(out)
    }
}
