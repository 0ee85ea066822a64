//! Grouping state shared by the aggregation operators: [`Groups`] (the groups of one run,
//! keyed by their grouping values), accumulators, and [`Grouping`] (what one aggregation
//! groups by and computes), so that the row-at-a-time `Aggregate` and the fused scan both
//! sit above it.

use rustc_hash::FxHashMap;

use arbor_cypher_plan::expr::{AggCall, PExpr, Slot};
use arbor_model::{group_key, Error, GroupKey, Result, Value};

use crate::ctx::{Ctx, Row};
use crate::eval::eval;
use crate::functions::{self, Accumulator, AggKind};
use crate::graph::Graph;

/// What one aggregation groups by and computes, borrowed from its operator.
pub(super) struct Grouping<'a> {
    pub(super) keys: &'a [(Slot, PExpr)],
    pub(super) aggs: &'a [(Slot, AggCall)],
    /// Per aggregate: the earlier aggregate whose argument it shares (see `reused_args`).
    pub(super) reuse: &'a [Option<usize>],
    /// The argument row the aggregation runs under.
    pub(super) arg: &'a Row,
}

pub(super) const SCAN_BATCH: usize = 256;
/// Ids per batch of a typed column aggregation (`TypedAgg`): its per-batch calls amortised
/// over more rows, its buffers (ids, and per column values and presence) still a few tens of
/// KiB.
pub(super) const TYPED_BATCH: usize = 2048;
/// Integer grouping keys below this are looked up in a direct table (see `Groups::small_ints`).
const SMALL_INTS: usize = 4096;
/// `count(*)`'s argument for a whole batch (see [`Accumulator::update_many`]).
pub(super) static STARS: [Value; SCAN_BATCH] = [const { Value::Bool(true) }; SCAN_BATCH];

/// One group: its key values and one accumulator per aggregate.
type Group = (Vec<Value>, Vec<Box<dyn Accumulator>>);

fn new_acc(call: &AggCall) -> Result<Box<dyn Accumulator>> {
    let kind = functions::lookup_aggregate(&call.name)
        .ok_or_else(|| Error::internal(format!("unknown aggregate {}", call.name)))?;
    Ok(functions::new_accumulator(kind, call.distinct))
}

pub(super) fn new_accs(aggs: &[(Slot, AggCall)]) -> Result<Vec<Box<dyn Accumulator>>> {
    let mut accs = Vec::with_capacity(aggs.len());
    for (_, call) in aggs {
        accs.push(new_acc(call)?);
    }
    Ok(accs)
}

/// The groups of one aggregation run. Buffers are reused across rows: a key is only allocated
/// when it starts a new group, and one grouping key (the common case) is hashed on its own,
/// not as a one-element vector.
#[derive(Default)]
pub(super) struct Groups {
    pub(super) index: FxHashMap<Vec<GroupKey>, usize>,
    pub(super) index1: FxHashMap<GroupKey, usize>,
    /// With one grouping key, the groups of integer key values seen so far: a lookup by the
    /// integer, no `GroupKey` built or hashed. Filled from `index1`, which stays the
    /// authority (so `1` and `1.0` still share a group); small ones are in `small_ints`.
    pub(super) int_index: FxHashMap<i64, usize>,
    /// The same for integers in `0..SMALL_INTS` (ages, years, counts): `group + 1` by value,
    /// 0 for none yet; grown to the largest such key seen.
    pub(super) small_ints: Vec<u32>,
    /// Per batch of a column aggregation: `(row, group)` of the rows that passed the filter.
    pub(super) sel: Vec<(u32, u32)>,
    /// Per batch of a column aggregation: rows per group.
    pub(super) counts: Vec<u32>,
    /// Per batch of a filtered column aggregation: the rows the filter's integer
    /// comparisons decide (see `CompiledPred::decide_batch`).
    pub(super) decided: Vec<Option<bool>>,
    pub(super) groups: Vec<Group>,
    pub(super) args: Vec<Value>,
    /// Each aggregate's argument in the current row, kept where a later one reuses it.
    pub(super) shared: Vec<Value>,
    pub(super) kv: Vec<Value>,
    pub(super) gk: Vec<GroupKey>,
    /// Each aggregate's kind and DISTINCT flag, looked up by name once per run instead of once
    /// per new group (see [`Groups::accs`]).
    kinds: Vec<(AggKind, bool)>,
}

impl Groups {
    /// A new group's accumulators (as [`new_accs`], the aggregates' kinds resolved once).
    pub(super) fn accs(&mut self, aggs: &[(Slot, AggCall)]) -> Result<Vec<Box<dyn Accumulator>>> {
        if self.kinds.len() != aggs.len() {
            self.kinds.clear();
            for (_, call) in aggs {
                let kind = functions::lookup_aggregate(&call.name)
                    .ok_or_else(|| Error::internal(format!("unknown aggregate {}", call.name)))?;
                self.kinds.push((kind, call.distinct));
            }
        }
        Ok(self.kinds.iter().map(|(k, d)| functions::new_accumulator(*k, *d)).collect())
    }

    /// The group of one grouping key value, created if new (with a copy of `v` as its key).
    #[inline]
    pub(super) fn group_of(&mut self, v: &Value, aggs: &[(Slot, AggCall)]) -> Result<usize> {
        if let Value::Int(i) = v {
            let small = usize::try_from(*i).ok().and_then(|x| self.small_ints.get(x));
            if let Some(&gi) = small.filter(|g| **g != 0) {
                return Ok(gi as usize - 1);
            }
            if let Some(gi) = self.int_index.get(i) {
                return Ok(*gi);
            }
        }
        let k = group_key(v);
        let gi = match self.index1.get(&k) {
            Some(i) => *i,
            None => {
                let accs = self.accs(aggs)?;
                self.groups.push((vec![v.clone()], accs));
                self.index1.insert(k, self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        if let Value::Int(i) = v {
            match (usize::try_from(*i), u32::try_from(gi + 1)) {
                (Ok(x), Ok(code)) if x < SMALL_INTS => {
                    if self.small_ints.len() <= x {
                        self.small_ints.resize(x + 1, 0);
                    }
                    self.small_ints[x] = code;
                }
                _ => {
                    self.int_index.insert(*i, gi);
                }
            }
        }
        Ok(gi)
    }

    pub(super) fn add(
        &mut self,
        keys: &[(Slot, PExpr)],
        aggs: &[(Slot, AggCall)],
        reuse: &[Option<usize>],
        r: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let gi = match keys {
            [] => {
                // Global aggregation: one group, no hashing.
                if self.groups.is_empty() {
                    self.groups.push((Vec::new(), new_accs(aggs)?));
                }
                0
            }
            [(_, e)] => {
                let v = eval(e, r, ctx, g)?;
                self.group_of(&v, aggs)?
            }
            _ => {
                self.kv.clear();
                for (_, e) in keys {
                    let v = eval(e, r, ctx, g)?;
                    self.kv.push(v);
                }
                self.gk.clear();
                self.gk.extend(self.kv.iter().map(group_key));
                match self.index.get(&self.gk) {
                    Some(i) => *i,
                    None => {
                        let accs = self.accs(aggs)?;
                        self.groups.push((std::mem::take(&mut self.kv), accs));
                        self.index.insert(std::mem::take(&mut self.gk), self.groups.len() - 1);
                        self.groups.len() - 1
                    }
                }
            }
        };
        for (ai, (_, call)) in aggs.iter().enumerate() {
            // One variable as the argument (`count(b)`, `collect(DISTINCT n)`), not shared with
            // a later aggregate: the accumulator reads it in the row, no copy made and dropped.
            if let ([PExpr::Slot(s)], false, false) =
                (call.args.as_slice(), call.count_star, matches!(reuse.get(ai), Some(Some(_))))
            {
                if let Some(v) = r.get(*s) {
                    if !reuse.contains(&Some(ai)) {
                        self.groups[gi].1[ai].update(std::slice::from_ref(v))?;
                        continue;
                    }
                }
            }
            self.args.clear();
            if call.count_star {
                self.args.push(Value::Bool(true));
            } else if let Some(Some(j)) = reuse.get(ai) {
                let v = self.shared.get(*j).cloned().unwrap_or(Value::Null);
                self.args.push(v);
            } else {
                for a in &call.args {
                    let v = match a {
                        // A variable (`count(b)`): read in place, without a call of `eval`.
                        PExpr::Slot(s) => r.get(*s).cloned().unwrap_or(Value::Null),
                        a => eval(a, r, ctx, g)?,
                    };
                    self.args.push(v);
                }
            }
            if reuse.contains(&Some(ai)) {
                if self.shared.len() < aggs.len() {
                    self.shared.resize(aggs.len(), Value::Null);
                }
                self.shared[ai] = self.args.first().cloned().unwrap_or(Value::Null);
            }
            self.groups[gi].1[ai].update(&self.args)?;
        }
        Ok(())
    }
}
