//! Choosing the beam width (`ef`) of a search from the indexed data itself.
//!
//! Why: how wide a beam must be for a given recall depends on the data and grows with the
//! index. On clustered, embedding-like data ef 32 finds 0.96 of the true top 10 at 100 k
//! vectors; on uniform random 128-d data ef 256 finds 0.93 at 20 k but 0.71 at 100 k, and
//! ef 2 048 is needed there for 0.97 (the same holds for FAISS's HNSW: the graph is not at
//! fault, the data's intrinsic dimension is). A fixed default is therefore either too slow
//! for easy data or, as the engine's fixed ef 256 was, collapses on hard data as it grows.
//!
//! How: a sample of stored vectors serves as queries; their exact top 10 among the other live
//! entries is found by a scan over the graph's own distances (codes or f32), and the graph is
//! searched at growing ef, as if each sample's own node were not in it (its links would lead
//! the search straight to its neighbours, so a stored vector is an easier query than a fresh
//! one), until the sample's mean recall reaches [`TARGET_RECALL`]. The
//! result is the index's default ef ([`VectorIndex::tuned_ef`]); it is measured again when
//! the index has doubled since (amortised: a scan of `SAMPLE_QUERIES · n` distances per
//! doubling) and after a compaction.

use std::collections::BinaryHeap;

use crate::graph::{Cand, Query, Visited};
use crate::index::VectorIndex;

/// Mean recall@10 the sample must reach (above the 0.95: the sample is small and
/// real queries are not stored vectors).
pub(crate) const TARGET_RECALL: f64 = 0.97;
/// Stored vectors used as queries.
const SAMPLE_QUERIES: usize = 40;
/// Neighbours per sample query.
const K: usize = 10;
/// Beam widths tried, in order (the last one is used when none reaches the target).
const LADDER: [usize; 16] =
    [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096];

impl VectorIndex {
    /// Whether the default ef should be measured (again): a graph is searched at all
    /// (`exact_below` entries) and the index has doubled since the last measurement.
    pub(crate) fn needs_tuning(&self) -> bool {
        let n = self.live_len();
        n >= self.config.exact_below.max(2 * K) && n >= 2 * self.tuned_at
    }

    /// Measures the default ef (see the module docs).
    pub(crate) fn tune_ef(&mut self) {
        let live: Vec<u32> = (0..self.len() as u32).filter(|&s| !self.is_deleted(s)).collect();
        if live.len() < 2 * K {
            return;
        }
        let step = (live.len() / SAMPLE_QUERIES).max(1);
        let picks: Vec<u32> = live.iter().copied().step_by(step).take(SAMPLE_QUERIES).collect();
        let space = self.space();
        let mut queries = Vec::with_capacity(picks.len());
        let mut truths = Vec::with_capacity(picks.len());
        let mut buf = Vec::new();
        for &pick in &picks {
            let mut q = Query::default();
            space.vector_into(pick, &mut buf);
            space.prepare(&buf, &mut q);
            let mut best: BinaryHeap<Cand> = BinaryHeap::with_capacity(K + 1);
            for &slot in &live {
                if slot == pick {
                    continue;
                }
                let dist = space.distance(&q, slot);
                if best.len() < K {
                    best.push(Cand { dist, slot });
                } else if best.peek().is_some_and(|w| dist < w.dist) {
                    best.pop();
                    best.push(Cand { dist, slot });
                }
            }
            truths.push(best.into_iter().map(|c| c.slot).collect::<Vec<u32>>());
            queries.push(q);
        }
        let mut visited = Visited::default();
        let mut chosen = LADDER[LADDER.len() - 1];
        for ef in LADDER {
            let mut found = 0usize;
            for ((q, truth), &pick) in queries.iter().zip(&truths).zip(&picks) {
                let accept = |s: u32| s != pick && !self.is_deleted(s);
                let got =
                    self.graph.search_without(space, q, ef, &mut visited, Some(&accept), pick);
                found += got.iter().take(K).filter(|c| truth.contains(&c.slot)).count();
            }
            let recall = found as f64 / (K * queries.len()) as f64;
            if recall >= TARGET_RECALL {
                chosen = ef;
                break;
            }
        }
        self.tuned_ef = chosen;
        self.tuned_at = live.len();
    }
}
