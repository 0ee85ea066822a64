//! The `Distinct` operator, which moves rows to scratch files when its set of keys would pass
//! the query memory.
//!
//! Rows are handed on as they come while their key is new. Every [`CHECK`] new keys the set
//! asks whether it still fits what the transaction may allocate ([`crate::memory::headroom`]);
//! when its next growth would not, it is frozen: a later row whose key is in it is a duplicate
//! of a row already handed on and is dropped; any other row is written whole to one of the
//! [`Partitions`] by its key's hash (its duplicates, later, go to the same file). After the
//! input, each partition is read back under a fresh set (which may freeze and split again,
//! one level deeper with another hash) and its new rows handed on. Each key comes out once,
//! with the first row of it in input order; only the order between keys changes (Cypher gives
//! DISTINCT none). Without scratch files (an in-memory database), or for a row holding a value
//! without a byte form, the set grows and the memory limit fails the query as before.

use rustc_hash::FxHashSet;

use arbor_cypher_plan::expr::Slot;
use arbor_model::{group_key, GroupKey, Result, Value};

use super::distinct_ends::KeySet;
use super::spill_codec::Reader;
use super::spill_file::{read_part, unspillable, Part, Partitions, Record, MAX_DEPTH, SPILL_BYTES};
use crate::ctx::{Ctx, Operator, Row};
use crate::graph::Graph;
use crate::memory;

/// The set asks whether it still fits every this many new keys.
const CHECK: usize = 1024;

/// The keys of one pass (the input, or one partition read back).
#[derive(Default)]
struct Seen {
    many: FxHashSet<Vec<GroupKey>>,
    /// The keys seen when there is one slot (most `DISTINCT`s: no key vector per row).
    one: KeySet,
    /// The current row's key, reused: only new keys are copied into `many`.
    key: Vec<GroupKey>,
    len: usize,
    /// The transaction's memory in use when the first key was added.
    base_used: u64,
    /// Frozen: rows of new keys go here.
    spill: Option<Partitions>,
    /// No scratch file could be had, or the depth is the last: the set grows.
    no_spill: bool,
    depth: u8,
    rec: Record,
    kv: Vec<Value>,
}

impl Seen {
    fn at_depth(depth: u8) -> Seen {
        Seen { depth, ..Seen::default() }
    }

    /// Whether `r` is to be handed on: its key is new and the set takes it. A row of a new key
    /// under a frozen set is written to its partition (and not handed on now).
    fn offer(&mut self, r: &Row, slots: &[Slot], g: &mut dyn Graph) -> Result<bool> {
        if self.spill.is_none() {
            if self.len == 0 {
                self.base_used = memory::in_use().unwrap_or(0);
            }
            let new = if let [s] = slots[..] {
                self.one.insert(&r[s])
            } else {
                self.key.clear();
                self.key.extend(slots.iter().map(|s| group_key(&r[*s])));
                !self.many.contains(&self.key) && self.many.insert(self.key.clone())
            };
            if new {
                self.len += 1;
                if self.len.is_multiple_of(CHECK) {
                    self.maybe_freeze(g);
                }
            }
            return Ok(new);
        }
        let seen = if let [s] = slots[..] {
            self.one.contains(&r[s])
        } else {
            self.key.clear();
            self.key.extend(slots.iter().map(|s| group_key(&r[*s])));
            self.many.contains(&self.key)
        };
        if !seen {
            self.kv.clear();
            self.kv.extend(slots.iter().map(|s| r[*s].clone()));
            self.rec.clear();
            if !self.rec.part(r) {
                return Err(unspillable("DISTINCT's set of rows"));
            }
            if let Some(p) = self.spill.as_mut() {
                p.write(&self.kv, &mut self.rec)?;
            }
        }
        Ok(false)
    }

    /// Freezes the set when its next growth would not fit the memory the transaction has left.
    fn maybe_freeze(&mut self, g: &mut dyn Graph) {
        if self.no_spill {
            return;
        }
        let (Some(room), Some(now)) = (memory::headroom(), memory::in_use()) else { return };
        let held = now.saturating_sub(self.base_used);
        let per_key = held / self.len.max(1) as u64;
        // A hash set grows by allocating a table twice its size while the old one still lives.
        let need = 2 * held + per_key * CHECK as u64 + SPILL_BYTES as u64;
        if room > need {
            return;
        }
        if self.depth >= MAX_DEPTH {
            self.no_spill = true;
            return;
        }
        match Partitions::new(self.depth, || g.scratch_file()) {
            Some(p) => {
                tracing::debug!(keys = self.len, room, depth = self.depth, "distinct: set frozen");
                self.spill = Some(p);
            }
            None => self.no_spill = true,
        }
    }
}

/// Where the rows come from now.
enum Source {
    Input,
    Part(Part),
    Done,
}

pub(super) struct Distinct {
    input: Box<dyn Operator>,
    slots: Vec<Slot>,
    seen: Seen,
    source: Source,
    /// Partitions not read yet (a stack: a partition's own partitions are read next).
    parts: Vec<Part>,
    buf: Vec<u8>,
}

impl Distinct {
    pub(super) fn new(input: Box<dyn Operator>, slots: Vec<Slot>) -> Distinct {
        Distinct {
            input,
            slots,
            seen: Seen::default(),
            source: Source::Input,
            parts: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// The current source is exhausted: the pass's partitions are queued and the next one
    /// becomes the source, under a fresh set.
    fn next_source(&mut self) -> Result<()> {
        if let Some(p) = self.seen.spill.take() {
            let mut deeper = p.finish()?;
            deeper.reverse();
            self.parts.extend(deeper);
        }
        self.source = match self.parts.pop() {
            Some(p) => {
                self.seen = Seen::at_depth(p.depth);
                Source::Part(p)
            }
            None => {
                self.seen = Seen::default();
                Source::Done
            }
        };
        Ok(())
    }
}

impl Operator for Distinct {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.seen = Seen::default();
        self.source = Source::Input;
        self.parts.clear();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            let r = match &mut self.source {
                Source::Input => self.input.next(ctx, g)?,
                Source::Part(p) => {
                    if p.run.next_into(&mut self.buf)? {
                        let mut r = Vec::new();
                        read_part(&mut Reader::new(&self.buf), &mut r)?;
                        Some(r)
                    } else {
                        None
                    }
                }
                Source::Done => return Ok(None),
            };
            let Some(r) = r else {
                self.next_source()?;
                continue;
            };
            ctx.tick()?;
            if self.seen.offer(&r, &self.slots, g)? {
                return Ok(Some(r));
            }
            ctx.recycle(r);
        }
    }
}
