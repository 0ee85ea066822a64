//! A set of node ids for deduplication inside one query (`count(DISTINCT n)`, the pruning
//! expansion's visited and emitted ends): a bitset over the dense low ids (one bit each) and a
//! hash set above, so the common case costs a bit test instead of hashing. Clearing touches only
//! the chunks that were used, so a set reused per input row costs nothing for rows that add little.

use rustc_hash::FxHashSet;

#[derive(Default, Debug)]
pub(crate) struct NodeSet {
    /// The bitset in chunks of [`CHUNK_WORDS`] words, allocated on first use: growing never
    /// copies, and only the id ranges in use cost memory (a traversal over 1.4 M nodes needs
    /// 22 chunks, 176 KiB).
    chunks: Vec<Option<Box<[u64; CHUNK_WORDS]>>>,
    /// Chunks with bits set since the last `clear` (only these are zeroed).
    used: Vec<u32>,
    dirty: Vec<bool>,
    high: FxHashSet<u64>,
}

const CHUNK_WORDS: usize = 1024;

/// Ids below this go into the bitset (at most 16 MiB of bits).
const NODE_BITS_LIMIT: u64 = 1 << 27;

impl NodeSet {
    /// Adds `id`; returns whether it was new.
    #[inline(always)]
    pub(crate) fn insert(&mut self, id: u64) -> bool {
        // The common case inline: a low id in a chunk this round already touched.
        if id < NODE_BITS_LIMIT {
            let w = (id / 64) as usize;
            let c = w / CHUNK_WORDS;
            if let (Some(Some(chunk)), Some(true)) = (self.chunks.get_mut(c), self.dirty.get(c)) {
                let word = &mut chunk[w % CHUNK_WORDS];
                let bit = 1u64 << (id % 64);
                let new = *word & bit == 0;
                *word |= bit;
                return new;
            }
        }
        self.insert_slow(id)
    }

    /// [`Self::insert`] for a high id or a chunk not touched since the last `clear`.
    #[inline(never)]
    fn insert_slow(&mut self, id: u64) -> bool {
        if id >= NODE_BITS_LIMIT {
            return self.high.insert(id);
        }
        let w = (id / 64) as usize;
        let c = w / CHUNK_WORDS;
        if c >= self.chunks.len() {
            self.chunks.resize_with(c + 1, || None);
            self.dirty.resize(c + 1, false);
        }
        let chunk = self.chunks[c].get_or_insert_with(|| Box::new([0; CHUNK_WORDS]));
        let word = &mut chunk[w % CHUNK_WORDS];
        let bit = 1u64 << (id % 64);
        if *word & bit != 0 {
            return false;
        }
        *word |= bit;
        if !self.dirty[c] {
            self.dirty[c] = true;
            self.used.push(c as u32);
        }
        true
    }

    /// Whether `id` was inserted since the last `clear`.
    #[inline(always)]
    pub(crate) fn contains(&self, id: u64) -> bool {
        if id >= NODE_BITS_LIMIT {
            return self.high.contains(&id);
        }
        let w = (id / 64) as usize;
        let c = w / CHUNK_WORDS;
        match (self.chunks.get(c), self.dirty.get(c)) {
            (Some(Some(chunk)), Some(true)) => chunk[w % CHUNK_WORDS] & (1u64 << (id % 64)) != 0,
            _ => false,
        }
    }

    pub(crate) fn clear(&mut self) {
        for &c in &self.used {
            let c = c as usize;
            if let Some(Some(chunk)) = self.chunks.get_mut(c) {
                chunk.fill(0);
            }
            self.dirty[c] = false;
        }
        self.used.clear();
        self.high.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::NodeSet;

    #[test]
    fn inserts_and_clears_low_and_high_ids() {
        let mut s = NodeSet::default();
        for round in 0..3 {
            for id in [0, 1, 63, 64, 5000, 1 << 27, u64::MAX] {
                assert!(!s.contains(id), "round {round}: {id} before");
                assert!(s.insert(id), "round {round}: {id} new");
                assert!(!s.insert(id), "round {round}: {id} again");
                assert!(s.contains(id), "round {round}: {id} after");
            }
            s.clear();
        }
        // Many words touched: cleared by filling.
        for id in 0..10_000 {
            assert!(s.insert(id * 3));
        }
        s.clear();
        assert!(s.insert(3) && s.insert(29_997));
    }
}
