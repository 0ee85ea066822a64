//! Search results and the helpers to combine them: exact top-k over a caller's own vectors and
//! merging two top-k lists (the index's answer with a transaction's uncommitted vectors).

use std::cmp::Ordering;

use crate::distance::Similarity;
use crate::error::{Result, VectorError};

/// One search result: the entity id the vector was indexed under and Neo4j's score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub id: u64,
    pub score: f32,
}

/// Result order: higher score first, then lower id (so ties are deterministic).
pub fn hit_order(a: &Hit, b: &Hit) -> Ordering {
    b.score.total_cmp(&a.score).then(a.id.cmp(&b.id))
}

/// Merges two result lists into the best `k`, keeping one hit per id (the higher score).
///
/// The engine calls this with the index's answer and [`exact_top_k`] over the vectors the
/// transaction wrote itself (after filtering its own deletes out of the index search).
pub fn merge_top_k(a: &[Hit], b: &[Hit], k: usize) -> Vec<Hit> {
    let mut all: Vec<Hit> = a.iter().chain(b).copied().collect();
    all.sort_by(hit_order);
    let mut seen = rustc_hash::FxHashSet::default();
    all.retain(|h| seen.insert(h.id));
    all.truncate(k);
    all
}

/// Exact top `k` of `candidates` against `query`. Candidates that the index would not accept
/// (wrong length, non-finite, zero for cosine) are skipped, as Neo4j leaves such nodes out of
/// a vector index; an invalid query is an error.
pub fn exact_top_k<'a>(
    similarity: Similarity,
    query: &[f32],
    candidates: impl IntoIterator<Item = (u64, &'a [f32])>,
    k: usize,
) -> Result<Vec<Hit>> {
    let query = similarity.prepare(query)?;
    let mut hits = Vec::new();
    for (id, v) in candidates {
        if v.len() != query.len() {
            continue;
        }
        let Ok(v) = similarity.prepare(v) else {
            continue;
        };
        let score = similarity.score_of_distance(similarity.distance(&query, &v));
        hits.push(Hit { id, score });
    }
    hits.sort_by(hit_order);
    hits.truncate(k);
    Ok(hits)
}

pub(crate) fn check_len(expected: usize, v: &[f32]) -> Result<()> {
    if v.len() != expected {
        return Err(VectorError::DimensionMismatch { expected, got: v.len() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(id: u64, score: f32) -> Hit {
        Hit { id, score }
    }

    #[test]
    fn merge_keeps_best_per_id_and_order() {
        let a = [h(1, 0.9), h(2, 0.5)];
        let b = [h(3, 0.7), h(2, 0.8), h(4, 0.5)];
        let got = merge_top_k(&a, &b, 3);
        assert_eq!(got, vec![h(1, 0.9), h(2, 0.8), h(3, 0.7)]);
        let got = merge_top_k(&a, &b, 10);
        assert_eq!(got.len(), 4);
        assert_eq!(got[3], h(4, 0.5), "ties on score break by id");
    }

    #[test]
    fn exact_skips_invalid_candidates() {
        let vs: Vec<(u64, Vec<f32>)> =
            vec![(1, vec![1.0, 0.0]), (2, vec![0.0, 0.0]), (3, vec![0.0, 1.0]), (4, vec![1.0])];
        let got = exact_top_k(
            Similarity::Cosine,
            &[1.0, 0.0],
            vs.iter().map(|(i, v)| (*i, v.as_slice())),
            10,
        )
        .unwrap();
        assert_eq!(got, vec![h(1, 1.0), h(3, 0.5)]);
        assert!(exact_top_k(Similarity::Cosine, &[0.0, 0.0], [], 1).is_err());
    }
}
