//! Grouping state shared by the aggregation operators: [`Groups`] (the groups of one run,
//! keyed by their grouping values), accumulators, and [`Grouping`] (what one aggregation
//! groups by and computes), so that the row-at-a-time `Aggregate` and the fused scan both
//! sit above it.

use rustc_hash::FxHashMap;

use arbor_cypher_plan::expr::{AggCall, PExpr, Slot};
use arbor_model::{group_key, Error, GroupKey, Result, Value};

use super::agg_spill::AggSpill;
use super::spill_file::{unspillable, MAX_DEPTH, SPILL_BYTES};
use crate::ctx::{Ctx, Row};
use crate::eval::eval;
use crate::functions::{self, Accumulator, AggKind};
use crate::graph::Graph;
use crate::memory;

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
/// The row-at-a-time aggregation asks whether its table still fits every this many new groups.
const FREEZE_CHECK: usize = 1024;
/// Integer grouping keys below this are looked up in a direct table (see `Groups::small_ints`).
const SMALL_INTS: usize = 4096;
/// `count(*)`'s argument for a whole batch (see [`Accumulator::update_many`]).
pub(super) static STARS: [Value; SCAN_BATCH] = [const { Value::Bool(true) }; SCAN_BATCH];

/// The groups of one aggregation run. Buffers are reused across rows: a key is only copied
/// when it starts a new group, and one grouping key (the common case) is hashed on its own,
/// not as a one-element vector.
///
/// Groups are stored flat, to keep a group small when there are millions (B2B's top-k:
/// ~1.1 M groups of an integer key and a count): group `g`'s key values are
/// `keys[g * nkeys..]`, its accumulators `accs[g * naggs..]`, no vector per group. One
/// integer key is indexed by the integer alone (`int_index`, `small_ints`) until the first key
/// whose grouping key is not an integer; then the integer groups move into `index1`, which
/// holds every single-key group from then on (so `1` and `1.0` still share a group).
#[derive(Default)]
pub(super) struct Groups {
    index: FxHashMap<Vec<GroupKey>, u32>,
    index1: FxHashMap<GroupKey, u32>,
    /// With one grouping key and no non-integer key seen yet (`!mixed`): the groups of integer
    /// key values outside `0..SMALL_INTS`.
    int_index: FxHashMap<i64, u32>,
    /// The same for integers in `0..SMALL_INTS` (ages, years, counts): `group + 1` by value,
    /// 0 for none yet; grown to the largest such key seen. Kept (as a cache over `index1`)
    /// once mixed.
    pub(super) small_ints: Vec<u32>,
    /// A single-key group's key was not an integer: `index1` is the authority.
    mixed: bool,
    /// Per batch of a column aggregation: `(row, group)` of the rows that passed the filter.
    pub(super) sel: Vec<(u32, u32)>,
    /// Per batch of a column aggregation: rows per group.
    pub(super) counts: Vec<u32>,
    /// Per batch of a filtered column aggregation: the rows the filter's integer
    /// comparisons decide (see `CompiledPred::decide_batch`).
    pub(super) decided: Vec<Option<bool>>,
    /// Every group's key values, `nkeys` per group.
    keys: Vec<Value>,
    /// Every group's accumulators, `naggs` per group.
    accs: Vec<Box<dyn Accumulator>>,
    nkeys: usize,
    naggs: usize,
    len: usize,
    pub(super) args: Vec<Value>,
    /// Each aggregate's argument in the current row, kept where a later one reuses it.
    pub(super) shared: Vec<Value>,
    pub(super) kv: Vec<Value>,
    pub(super) gk: Vec<GroupKey>,
    /// Each aggregate's kind and DISTINCT flag, looked up by name once per run instead of once
    /// per new group (see [`Groups::push`]).
    kinds: Vec<(AggKind, bool)>,
    /// The table may not grow (it would pass the query memory): rows of new groups go to
    /// `spill` (see `agg_spill`).
    frozen: bool,
    spill: Option<AggSpill>,
    /// No scratch file could be had: the table grows until the memory limit fails the query.
    no_spill: bool,
    /// A spilled row's aggregate arguments.
    spill_args: Vec<Vec<Value>>,
    /// The transaction's memory in use when the first group was made.
    base_used: u64,
    /// The partitioning depth this table's spill writes at (0: the input's table; a
    /// partition read back is aggregated at its own depth).
    depth: u8,
}

/// The groups of a finished run, handed out one at a time (see [`Groups::into_output`]).
pub(super) struct GroupOutput {
    keys: std::vec::IntoIter<Value>,
    accs: std::vec::IntoIter<Box<dyn Accumulator>>,
    nkeys: usize,
    naggs: usize,
    left: usize,
}

impl GroupOutput {
    /// The next group: its key values (in `kv`, replaced) and its accumulators (in `accs`).
    pub(super) fn next_into(
        &mut self,
        kv: &mut Vec<Value>,
        accs: &mut Vec<Box<dyn Accumulator>>,
    ) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        kv.clear();
        kv.extend(self.keys.by_ref().take(self.nkeys));
        accs.clear();
        accs.extend(self.accs.by_ref().take(self.naggs));
        true
    }
}

impl Groups {
    /// An empty table for a spilled partition read back at partitioning `depth`.
    pub(super) fn at_depth(depth: u8) -> Groups {
        Groups { depth, ..Groups::default() }
    }

    /// Adds a group with these key values and fresh accumulators (the aggregates' kinds
    /// resolved once per run); its number.
    pub(super) fn push(
        &mut self,
        keys: impl IntoIterator<Item = Value>,
        aggs: &[(Slot, AggCall)],
    ) -> Result<usize> {
        if self.kinds.len() != aggs.len() {
            self.kinds.clear();
            for (_, call) in aggs {
                let kind = functions::lookup_aggregate(&call.name)
                    .ok_or_else(|| Error::internal(format!("unknown aggregate {}", call.name)))?;
                self.kinds.push((kind, call.distinct));
            }
        }
        if u32::try_from(self.len).is_err() {
            return Err(Error::internal("an aggregation has more than 4,294,967,295 groups"));
        }
        if self.len == 0 {
            self.base_used = memory::in_use().unwrap_or(0);
        }
        let before = self.keys.len();
        self.keys.extend(keys);
        self.nkeys = self.keys.len() - before;
        self.naggs = aggs.len();
        self.accs.extend(self.kinds.iter().map(|(k, d)| functions::new_accumulator(*k, *d)));
        self.len += 1;
        Ok(self.len - 1)
    }

    /// How many groups there are.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The one group of an aggregation without grouping keys, made if there is none yet.
    pub(super) fn ensure_global(&mut self, aggs: &[(Slot, AggCall)]) -> Result<()> {
        if self.len == 0 {
            self.push(std::iter::empty(), aggs)?;
        }
        Ok(())
    }

    /// Group `gi`'s accumulators (none for a group that does not exist).
    pub(super) fn accs_mut(&mut self, gi: usize) -> &mut [Box<dyn Accumulator>] {
        let n = self.naggs;
        self.accs.get_mut(gi * n..gi * n + n).unwrap_or(&mut [])
    }

    /// Group `gi`'s accumulator of aggregate `ai`.
    pub(super) fn acc_mut(&mut self, gi: usize, ai: usize) -> Option<&mut Box<dyn Accumulator>> {
        self.accs_mut(gi).get_mut(ai)
    }

    /// The groups, one at a time, their memory given back as they go.
    pub(super) fn into_output(self) -> GroupOutput {
        GroupOutput {
            keys: self.keys.into_iter(),
            accs: self.accs.into_iter(),
            nkeys: self.nkeys,
            naggs: self.naggs,
            left: self.len,
        }
    }

    /// The group of one grouping key value, if there is one (never creates it).
    fn find1(&self, v: &Value) -> Option<usize> {
        let k = match v {
            Value::Int(i) => GroupKey::Int(*i),
            v => group_key(v),
        };
        if let GroupKey::Int(i) = k {
            let small = usize::try_from(i).ok().and_then(|x| self.small_ints.get(x));
            if let Some(&gi) = small.filter(|g| **g != 0) {
                return Some(gi as usize - 1);
            }
            if !self.mixed {
                return self.int_index.get(&i).map(|g| *g as usize);
            }
        }
        if !self.mixed {
            return None;
        }
        self.index1.get(&k).map(|g| *g as usize)
    }

    /// Freezes the table and starts spilling when its next growth would not fit the memory
    /// the transaction has left (asked every [`FREEZE_CHECK`] new groups).
    fn maybe_freeze(&mut self, g: &mut dyn Graph) {
        if self.needs_spill() {
            self.freeze(g);
        }
    }

    /// Whether the table's next growth would not fit the memory the transaction has left and
    /// it may still spill (not frozen, not at the last depth, scratch files not refused).
    pub(super) fn needs_spill(&mut self) -> bool {
        if self.frozen || self.no_spill || self.len == 0 {
            return false;
        }
        let (Some(room), Some(now)) = (memory::headroom(), memory::in_use()) else { return false };
        // What the table holds (all the transaction gained since its first group: keys,
        // accumulators with their sets and lists, index) may double when its vectors grow,
        // and the next groups until the next look come on top.
        let table = now.saturating_sub(self.base_used);
        let per_group = table / self.len.max(1) as u64;
        let need = table + per_group * FREEZE_CHECK as u64 + SPILL_BYTES as u64;
        if room > need {
            return false;
        }
        if self.depth >= MAX_DEPTH {
            // Split as often as allowed: the table grows until the memory limit fails it.
            self.no_spill = true;
            return false;
        }
        true
    }

    /// Freezes the table: rows of groups not in it go to scratch files from now on. `false`
    /// (and the table grows on) when no scratch file can be had.
    pub(super) fn freeze(&mut self, g: &mut dyn Graph) -> bool {
        match AggSpill::new(self.depth, || g.scratch_file()) {
            Some(s) => {
                tracing::debug!(
                    groups = self.len,
                    depth = self.depth,
                    "aggregation: table frozen, spilling new groups"
                );
                self.spill = Some(s);
                self.frozen = true;
                true
            }
            None => {
                self.no_spill = true;
                false
            }
        }
    }

    /// Takes the spilled rows (none if the table never froze).
    pub(super) fn take_spill(&mut self) -> Option<AggSpill> {
        self.spill.take()
    }

    /// Writes the current row of a group not in the frozen table (its key values in `kv`).
    fn spill_row(
        &mut self,
        aggs: &[(Slot, AggCall)],
        r: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        self.spill_args.resize_with(aggs.len(), Vec::new);
        for ((_, call), a) in aggs.iter().zip(self.spill_args.iter_mut()) {
            a.clear();
            if call.count_star {
                continue;
            }
            for e in &call.args {
                a.push(match e {
                    PExpr::Slot(s) => r.get(*s).cloned().unwrap_or(Value::Null),
                    e => eval(e, r, ctx, g)?,
                });
            }
        }
        let Some(spill) = self.spill.as_mut() else {
            return Err(Error::internal("an aggregation row spilled without a spill"));
        };
        if spill.write(&self.kv, &self.spill_args)? {
            return Ok(());
        }
        Err(unspillable("aggregation's group table"))
    }

    /// Adds one spilled row read back: its key values and each aggregate's arguments. A
    /// frozen table (this partition did not fit either) writes the rows of its new groups to
    /// the next level's partitions.
    pub(super) fn add_values(
        &mut self,
        kv: &mut Vec<Value>,
        args: &[Vec<Value>],
        aggs: &[(Slot, AggCall)],
        g: &mut dyn Graph,
    ) -> Result<()> {
        let before = self.len;
        let gi = match kv.as_slice() {
            [] => {
                self.ensure_global(aggs)?;
                0
            }
            [v] if !self.frozen => self.group_of(v, aggs)?,
            [v] => match self.find1(v) {
                Some(gi) => gi,
                None => return self.spill_values(kv, args),
            },
            _ => {
                self.gk.clear();
                self.gk.extend(kv.iter().map(group_key));
                match self.index.get(&self.gk) {
                    Some(i) => *i as usize,
                    None if self.frozen => return self.spill_values(kv, args),
                    None => {
                        let gi = self.push(kv.drain(..), aggs)?;
                        self.index.insert(std::mem::take(&mut self.gk), gi as u32);
                        gi
                    }
                }
            }
        };
        if self.len != before && self.len.is_multiple_of(FREEZE_CHECK) {
            self.maybe_freeze(g);
        }
        for (ai, (_, call)) in aggs.iter().enumerate() {
            let star = [Value::Bool(true)];
            let a: &[Value] = if call.count_star { &star } else { args.get(ai).map_or(&[], |a| a) };
            if let Some(acc) = self.acc_mut(gi, ai) {
                acc.update(a)?;
            }
        }
        Ok(())
    }

    /// Writes a spilled row read back whose group is not in this (frozen) table.
    fn spill_values(&mut self, kv: &[Value], args: &[Vec<Value>]) -> Result<()> {
        let Some(spill) = self.spill.as_mut() else {
            return Err(Error::internal("an aggregation row spilled without a spill"));
        };
        if spill.write(kv, args)? {
            return Ok(());
        }
        Err(unspillable("aggregation's group table"))
    }

    /// Moves the integer-keyed groups into `index1` (the first key that is not an integer).
    fn mix(&mut self) {
        self.mixed = true;
        self.index1.extend(self.int_index.drain().map(|(i, g)| (GroupKey::Int(i), g)));
        for (i, g) in self.small_ints.iter().enumerate().filter(|(_, g)| **g != 0) {
            self.index1.insert(GroupKey::Int(i as i64), g - 1);
        }
        self.int_index = FxHashMap::default();
    }

    /// The group of one grouping key value, created if new (with a copy of `v` as its key).
    #[inline]
    pub(super) fn group_of(&mut self, v: &Value, aggs: &[(Slot, AggCall)]) -> Result<usize> {
        match self.find1(v) {
            Some(gi) => Ok(gi),
            None => self.insert1(v, aggs),
        }
    }

    /// A new group for key value `v`, which [`Groups::find1`] did not find.
    fn insert1(&mut self, v: &Value, aggs: &[(Slot, AggCall)]) -> Result<usize> {
        let k = match v {
            Value::Int(i) => GroupKey::Int(*i),
            v => group_key(v),
        };
        let gi = self.push([v.clone()], aggs)?;
        match k {
            // While every key is an integer (a float with an integral value included), the
            // integer alone indexes the group.
            GroupKey::Int(i) if !self.mixed => {
                if !self.remember_small(i, gi) {
                    self.int_index.insert(i, gi as u32);
                }
            }
            k => {
                if !self.mixed {
                    self.mix();
                }
                self.index1.insert(k, gi as u32);
                if let Value::Int(i) = v {
                    self.remember_small(*i, gi);
                }
            }
        }
        Ok(gi)
    }

    /// Puts group `gi` of integer key `i` in the direct table if `i` is small; whether it was.
    fn remember_small(&mut self, i: i64, gi: usize) -> bool {
        match (usize::try_from(i), u32::try_from(gi + 1)) {
            (Ok(x), Ok(code)) if x < SMALL_INTS => {
                if self.small_ints.len() <= x {
                    self.small_ints.resize(x + 1, 0);
                }
                self.small_ints[x] = code;
                true
            }
            _ => false,
        }
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
        let before = self.len;
        let gi = match keys {
            [] => {
                // Global aggregation: one group, no hashing.
                self.ensure_global(aggs)?;
                0
            }
            [(_, e)] => {
                let v = eval(e, r, ctx, g)?;
                if !self.frozen {
                    self.group_of(&v, aggs)?
                } else if let Some(gi) = self.find1(&v) {
                    gi
                } else {
                    self.kv.clear();
                    self.kv.push(v);
                    return self.spill_row(aggs, r, ctx, g);
                }
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
                    Some(i) => *i as usize,
                    None if self.frozen => return self.spill_row(aggs, r, ctx, g),
                    None => {
                        let mut kv = std::mem::take(&mut self.kv);
                        let gi = self.push(kv.drain(..), aggs)?;
                        self.kv = kv;
                        self.index.insert(std::mem::take(&mut self.gk), gi as u32);
                        gi
                    }
                }
            }
        };
        if self.len != before && self.len.is_multiple_of(FREEZE_CHECK) {
            self.maybe_freeze(g);
        }
        for (ai, (_, call)) in aggs.iter().enumerate() {
            // One variable as the argument (`count(b)`, `collect(DISTINCT n)`), not shared with
            // a later aggregate: the accumulator reads it in the row, no copy made and dropped.
            if let ([PExpr::Slot(s)], false, false) =
                (call.args.as_slice(), call.count_star, matches!(reuse.get(ai), Some(Some(_))))
            {
                if let Some(v) = r.get(*s) {
                    if !reuse.contains(&Some(ai)) {
                        if let Some(acc) = self.acc_mut(gi, ai) {
                            acc.update(std::slice::from_ref(v))?;
                        }
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
            let n = self.naggs;
            if let Some(acc) = self.accs.get_mut(gi * n + ai) {
                acc.update(&self.args)?;
            }
        }
        Ok(())
    }
}
