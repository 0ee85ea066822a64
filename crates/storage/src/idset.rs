//! `IdSet`: an ordered set of entity ids as a chunked bitmap, for the delta's label and type
//! sets (the ids of entities that gained a label or type since the base was built).
//!
//! Those sets take every node of a bulk `UNWIND ... CREATE` (ten thousand inserts of ascending
//! ids per commit) and lose them again when GC collects a fold, so they were a `BTreeSet<u64>`
//! insert and remove per created node: a tree search each, and 16-odd bytes per id. Ids are
//! dense, so a bitmap in chunks of 4,096 ids (512 bytes, kept in a `BTreeMap` by chunk number)
//! makes both a bit operation after one short lookup, costs 1 bit per id when the ids are
//! dense, and at most one chunk per id when they are scattered. Iteration is in id order, like
//! the `BTreeSet` it replaces.

use std::collections::BTreeMap;

const CHUNK_BITS: u32 = 12;
const WORDS: usize = (1 << CHUNK_BITS) / 64;

type Chunk = Box<[u64; WORDS]>;

/// An ordered set of `u64` ids (see the module documentation).
#[derive(Clone, Default, Debug)]
pub(crate) struct IdSet {
    chunks: BTreeMap<u64, Chunk>,
    len: usize,
}

#[inline]
fn split(id: u64) -> (u64, usize, u64) {
    let bit = (id & ((1 << CHUNK_BITS) - 1)) as usize;
    (id >> CHUNK_BITS, bit / 64, 1 << (bit % 64))
}

impl IdSet {
    /// Adds `id`; returns whether it was new.
    pub fn insert(&mut self, id: u64) -> bool {
        let (c, w, m) = split(id);
        let chunk = self.chunks.entry(c).or_insert_with(|| Box::new([0; WORDS]));
        let new = chunk[w] & m == 0;
        chunk[w] |= m;
        self.len += usize::from(new);
        new
    }

    /// Removes `id`; returns whether it was there. An emptied chunk is dropped.
    pub fn remove(&mut self, id: u64) -> bool {
        let (c, w, m) = split(id);
        let Some(chunk) = self.chunks.get_mut(&c) else { return false };
        let had = chunk[w] & m != 0;
        chunk[w] &= !m;
        if had {
            self.len -= 1;
            if chunk.iter().all(|x| *x == 0) {
                self.chunks.remove(&c);
            }
        }
        had
    }

    #[cfg(test)]
    pub fn contains(&self, id: u64) -> bool {
        let (c, w, m) = split(id);
        self.chunks.get(&c).is_some_and(|chunk| chunk[w] & m != 0)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The smallest id `>= from`.
    pub fn first_from(&self, from: u64) -> Option<u64> {
        self.iter_from(from).next()
    }

    /// Every id in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0)
    }

    /// The ids `>= from` in ascending order.
    pub fn iter_from(&self, from: u64) -> Iter<'_> {
        let (c0, w0, _) = split(from);
        let bit = (from & 63) as u32;
        let mut chunks = self.chunks.range(c0..);
        let mut it = Iter { chunks: self.chunks.range(0..0), cur: None, word: 0, bits: 0 };
        if let Some((&c, chunk)) = chunks.next() {
            if c == c0 {
                // Start inside the chunk of `from`: mask off the ids below it.
                it.cur = Some((c, chunk));
                it.word = w0;
                it.bits = chunk[w0] & (u64::MAX << bit);
            } else {
                it.cur = Some((c, chunk));
                it.word = 0;
                it.bits = chunk[0];
            }
        }
        it.chunks = chunks;
        it
    }

    /// Keeps only the ids for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        let mut removed = 0;
        self.chunks.retain(|&c, chunk| {
            let mut any = false;
            for (w, word) in chunk.iter_mut().enumerate() {
                let mut bits = *word;
                while bits != 0 {
                    let b = bits.trailing_zeros();
                    bits &= bits - 1;
                    let id = (c << CHUNK_BITS) | (w as u64 * 64) | u64::from(b);
                    if !keep(id) {
                        *word &= !(1 << b);
                        removed += 1;
                    }
                }
                any |= *word != 0;
            }
            any
        });
        self.len -= removed;
    }
}

/// Ascending iterator over an [`IdSet`].
pub(crate) struct Iter<'a> {
    chunks: std::collections::btree_map::Range<'a, u64, Chunk>,
    cur: Option<(u64, &'a Chunk)>,
    word: usize,
    bits: u64,
}

impl Iterator for Iter<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        loop {
            let (c, chunk) = self.cur?;
            if self.bits != 0 {
                let b = self.bits.trailing_zeros();
                self.bits &= self.bits - 1;
                return Some((c << CHUNK_BITS) | (self.word as u64 * 64) | u64::from(b));
            }
            self.word += 1;
            if self.word < WORDS {
                self.bits = chunk[self.word];
                continue;
            }
            match self.chunks.next() {
                Some((&c2, next)) => {
                    self.cur = Some((c2, next));
                    self.word = 0;
                    self.bits = next[0];
                }
                None => {
                    self.cur = None;
                    return None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64),
        Remove(u64),
        Retain(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Ids around chunk and word edges, dense runs and a few far-off ones.
        let id = prop_oneof![0u64..10_000, 4090u64..4200, (0u64..4).prop_map(|k| k << 40)];
        prop_oneof![
            6 => id.clone().prop_map(Op::Insert),
            3 => id.prop_map(Op::Remove),
            1 => (2u64..7).prop_map(Op::Retain),
        ]
    }

    proptest! {
        /// Every operation and query agrees with `BTreeSet`.
        #[test]
        fn behaves_like_a_btreeset(ops in proptest::collection::vec(op(), 0..400), probes in proptest::collection::vec(0u64..12_000, 8)) {
            let mut a = IdSet::default();
            let mut b = BTreeSet::new();
            for o in ops {
                match o {
                    Op::Insert(id) => prop_assert_eq!(a.insert(id), b.insert(id)),
                    Op::Remove(id) => prop_assert_eq!(a.remove(id), b.remove(&id)),
                    Op::Retain(k) => {
                        a.retain(|id| id % k != 0);
                        b.retain(|id| id % k != 0);
                    }
                }
                prop_assert_eq!(a.len(), b.len());
            }
            prop_assert_eq!(a.iter().collect::<Vec<_>>(), b.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(a.is_empty(), b.is_empty());
            for p in probes.into_iter().chain([0, 4095, 4096, 4097, 1 << 40, (1 << 40) + 1]) {
                prop_assert_eq!(a.first_from(p), b.range(p..).next().copied());
                prop_assert_eq!(
                    a.iter_from(p).take(5).collect::<Vec<_>>(),
                    b.range(p..).take(5).copied().collect::<Vec<_>>()
                );
                prop_assert_eq!(a.contains(p), b.contains(&p));
            }
            // Emptied chunks are dropped.
            prop_assert!(a.chunks.values().all(|c| c.iter().any(|w| *w != 0)));
        }
    }

    #[test]
    fn dense_ids_cost_a_bit_each() {
        let mut s = IdSet::default();
        for id in 0..1_000_000 {
            s.insert(id);
        }
        assert_eq!(s.chunks.len(), 1_000_000usize.div_ceil(4096));
        assert_eq!(s.iter_from(999_990).count(), 10);
        for id in 0..1_000_000 {
            assert!(s.remove(id));
        }
        assert!(s.is_empty() && s.chunks.is_empty());
    }
}
