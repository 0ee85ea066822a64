//! Version chains and the delta's sharded id tables (`Table`, keyed by a shard-friendly id
//! hash), with the visibility and pruning rules of a chain.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::codec::MAX_ID;
use crate::records::{NodeData, RelData};

/// Versions oldest first; `None` data is a deletion.
pub(crate) type Chain<T> = Vec<(u64, Option<Arc<T>>)>;

/// The version visible at snapshot `ts`.
#[cfg(test)]
pub(crate) fn visible_at<T>(chain: &Chain<T>, ts: u64) -> Option<&Arc<T>> {
    chain.iter().rev().find(|(t, _)| *t <= ts).and_then(|(_, d)| d.as_ref())
}

/// The delta's answer at snapshot `ts`: `None` if it holds no version that old (the base is
/// current for that snapshot), `Some(None)` for a deletion.
pub(crate) fn chain_at<T>(chain: &Chain<T>, ts: u64) -> Option<Option<Arc<T>>> {
    chain.iter().rev().find(|(t, _)| *t <= ts).map(|(_, d)| d.clone())
}

/// One delta adjacency entry (a relationship created after the base was built); visibility is
/// decided by the relationship's chain. `ts` is the creating commit: readers whose base is at
/// least that new find the relationship in the base CSR instead.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Adj {
    pub rel: u64,
    pub other: u64,
    pub ty: u32,
    pub ts: u64,
}

#[derive(Default)]
pub(crate) struct NodeSlot {
    pub chain: Chain<NodeData>,
    pub out: Vec<Adj>,
    pub inc: Vec<Adj>,
}

#[derive(Default)]
pub(crate) struct RelSlot {
    pub chain: Chain<RelData>,
}

pub(super) const SHARDS: u64 = 64;

/// A shard holds blocks of `1 << BLOCK_BITS` consecutive ids (block `b` goes to shard
/// `b % SHARDS`), so a scan in id order (a fold reading every delta node, GC of sorted ids, a
/// commit installing a batch of new nodes) stays in one shard's table for a whole block. With
/// ids dealt round-robin over the shards (`id % SHARDS`), such a scan advanced 64 tables at
/// once, one entry each, and every step missed the cache (the hottest instruction of GC, of
/// the fold and of a bulk commit's install).
pub(super) const BLOCK_BITS: u32 = 10;

/// The id's position within its shard: the shard bits taken out, so consecutive ids of a
/// block, and the blocks of one shard, are consecutive.
#[inline]
pub(super) fn shard_key(id: u64) -> u64 {
    ((id >> (BLOCK_BITS + SHARDS.trailing_zeros())) << BLOCK_BITS) | (id & ((1 << BLOCK_BITS) - 1))
}

/// Hashes a `u64` id of a [`Table`] shard with a few multiplications (ids are dense; SipHash
/// would be wasted work), keeping neighbouring ids together: the table's bucket index comes
/// from the low bits, so ids whose [`shard_key`] `k` has the same `k / 16` take 16
/// consecutive buckets (one probe group), and those runs are scattered by a mixed hash of
/// `k / 16` (so strided id patterns do not collide). hashbrown's 7-bit tag (the top bits)
/// mixes the whole id. A scan in id order then touches memory sequentially within a run.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

pub(super) const TAG_BITS: u64 = 0x7F << 57;

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        // Products mix upwards: fold the high half into the bucket bits.
        self.0 ^= self.0 >> 32;
    }
    fn write_u64(&mut self, id: u64) {
        const C: u64 = 0x9E37_79B9_7F4A_7C15;
        let k = shard_key(id);
        let run = (k >> 4).wrapping_mul(C);
        let run = run ^ (run >> 29);
        let tag = id.wrapping_mul(C) & TAG_BITS;
        self.0 = (((run << 4) | (k & 15)) & !TAG_BITS) | tag;
    }
}

pub(crate) type IdMap<S> = HashMap<u64, S, std::hash::BuildHasherDefault<IdHasher>>;

/// The delta's sparse id -> slot table, split into shards so that installs lock only a small
/// part of it. Only entities written since the base was built have slots.
pub(crate) struct Table<S> {
    pub(super) shards: Vec<RwLock<IdMap<S>>>,
}

impl<S: Default> Table<S> {
    pub fn new() -> Table<S> {
        Table { shards: (0..SHARDS).map(|_| RwLock::new(IdMap::default())).collect() }
    }

    pub(super) fn shard(id: u64) -> Option<usize> {
        (id < MAX_ID).then_some(((id >> BLOCK_BITS) % SHARDS) as usize)
    }

    pub fn read<R>(&self, id: u64, f: impl FnOnce(&S) -> R) -> Option<R> {
        let s = Self::shard(id)?;
        let shard = self.shards[s].read();
        shard.get(&id).map(f)
    }

    /// Runs `f` on the slot (`None` if missing; setting it to `None` removes the slot). `None`
    /// if the id is out of range.
    pub fn write<R>(&self, id: u64, f: impl FnOnce(&mut Option<S>) -> R) -> Option<R> {
        let s = Self::shard(id)?;
        let mut shard = self.shards[s].write();
        if let Some(slot) = shard.get_mut(&id) {
            let mut opt = Some(std::mem::take(slot));
            let r = f(&mut opt);
            match opt {
                Some(v) => *slot = v,
                None => {
                    shard.remove(&id);
                }
            }
            Some(r)
        } else {
            let mut opt = None;
            let r = f(&mut opt);
            if let Some(v) = opt {
                shard.insert(id, v);
            }
            Some(r)
        }
    }

    /// Every id that has a slot.
    pub fn ids(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for s in &self.shards {
            out.extend(s.read().keys().copied());
        }
        out.sort_unstable();
        out
    }

    /// Calls `f` on every slot (under each shard's read lock in turn).
    pub fn for_each(&self, mut f: impl FnMut(u64, &S)) {
        for s in &self.shards {
            for (id, slot) in s.read().iter() {
                f(*id, slot);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().len()).sum()
    }

    /// Returns memory of emptied shards to the allocator.
    pub fn shrink(&self) {
        for s in &self.shards {
            let mut m = s.write();
            if m.capacity() > 64 && m.len() < m.capacity() / 4 {
                m.shrink_to_fit();
            }
        }
    }
}

/// Drops the versions no live reader needs and returns their data:
/// * versions at or below `base_h`: every live base already holds them (a reader that finds no
///   delta version at its snapshot reads its base, which then has the same state);
/// * versions older than the one visible at `horizon`;
/// * that one too if it is a deletion of an entity no live base has (`absent`).
pub(super) fn prune_chain<T>(
    chain: &mut Chain<T>,
    horizon: u64,
    base_h: u64,
    absent: bool,
) -> Vec<Option<Arc<T>>> {
    let covered = chain.partition_point(|(t, _)| *t <= base_h);
    let mut removed: Vec<Option<Arc<T>>> = chain.drain(..covered).map(|(_, d)| d).collect();
    let p = chain.partition_point(|(t, _)| *t <= horizon);
    if p > 0 {
        let cut = if chain[p - 1].1.is_none() && absent { p } else { p - 1 };
        removed.extend(chain.drain(..cut).map(|(_, d)| d));
    }
    removed
}
