//! A set of node ids for deduplication inside one query (`count(DISTINCT n)`, the pruning
//! expansion's visited and emitted ends): a bitset over the dense low ids (one bit each) and a
//! hash set above, so the common case costs a bit test instead of hashing. Clearing touches only
//! the words that were set, so a set reused per input row costs nothing for rows that add little.

use rustc_hash::FxHashSet;

#[derive(Default, Debug)]
pub(crate) struct NodeSet {
    bits: Vec<u64>,
    /// Indexes of the words of `bits` that are non-zero.
    touched: Vec<u32>,
    high: FxHashSet<u64>,
}

/// Ids below this go into the bitset (at most 16 MiB of bits).
const NODE_BITS_LIMIT: u64 = 1 << 27;

impl NodeSet {
    /// Adds `id`; returns whether it was new.
    #[inline]
    pub(crate) fn insert(&mut self, id: u64) -> bool {
        if id >= NODE_BITS_LIMIT {
            return self.high.insert(id);
        }
        let w = (id / 64) as usize;
        if w >= self.bits.len() {
            self.bits.resize((w + 1).next_power_of_two(), 0);
        }
        let word = &mut self.bits[w];
        let bit = 1u64 << (id % 64);
        if *word & bit != 0 {
            return false;
        }
        if *word == 0 {
            self.touched.push(w as u32);
        }
        *word |= bit;
        true
    }

    pub(crate) fn clear(&mut self) {
        if self.touched.len() * 4 >= self.bits.len() {
            self.bits.fill(0);
        } else {
            for &w in &self.touched {
                self.bits[w as usize] = 0;
            }
        }
        self.touched.clear();
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
                assert!(s.insert(id), "round {round}: {id} new");
                assert!(!s.insert(id), "round {round}: {id} again");
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
