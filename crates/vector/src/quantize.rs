//! Neo4j's `vector.quantization.enabled` scores: the int8 (7-bit) scalar quantization of the
//! Lucene HNSW index under Neo4j 5.26's vector indexes, reproduced so that a quantized index
//! ranks and scores as Neo4j's does.
//!
//! Lucene quantizes each segment's vectors (normalised first for cosine) to `0..=127` between
//! two quantiles of their components, keeps per vector a float correction, and scores a query
//! (quantized the same way) from the integer dot product or squared distance plus the
//! corrections. Neo4j returns those scores and ranks by them, so with quantization on (its
//! default) its order can differ from the exact one (`tests/libraries/RESULTS.md`: langchain's
//! vector-store tests encode it).
//!
//! How the quantiles are chosen (`Quantizer::fit`): the confidence interval is
//! `max(0.9, 1 - 1/(dims + 1))`; vectors are taken in chunks of `min(20, n)` (a final partial
//! chunk is ignored), each chunk's lower and upper quantiles are the values `⌊len·(1-ci)/2 +
//! 0.5⌋` from either end of its sorted components, and the quantiles are the chunk averages.
//! Lucene samples 25,000 vectors at random from a larger segment; we take an even stride.
//! Arbor's index is one "segment": Neo4j's answers match exactly when its data sits in one
//! Lucene segment (data written in one transaction, or merged), and approximately otherwise.

use crate::distance::Similarity;
use crate::error::Result;
use crate::topk::{hit_order, Hit};

/// Vectors a quantizer is fitted on at most (Lucene's sample size).
pub const QUANTIZATION_SAMPLE: usize = 25_000;
/// Vectors per quantile chunk (Lucene's scratch size).
const CHUNK: usize = 20;
/// Quantized levels: 7 bits.
const LEVELS: f32 = 127.0;

/// The quantiles a set of prepared vectors is quantized between.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantizer {
    min: f32,
    max: f32,
    scale: f32,
    alpha: f32,
}

/// A quantized vector: its levels and its score correction.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    levels: Vec<u8>,
    correction: f32,
}

impl Quantizer {
    /// Fits the quantiles on `n` prepared vectors of `dims` components given in index order
    /// (`vector(i)` for `i < n`). `None` when there are none or all components are equal (no
    /// range to quantize in: scores stay exact).
    pub fn fit<'a>(
        dims: usize,
        n: usize,
        vector: impl Fn(usize) -> &'a [f32],
    ) -> Option<Quantizer> {
        if n == 0 || dims == 0 {
            return None;
        }
        let ci = confidence_interval(dims);
        let sample = n.min(QUANTIZATION_SAMPLE);
        let per_chunk = sample.min(CHUNK);
        let mut scratch: Vec<f32> = Vec::with_capacity(per_chunk * dims);
        let (mut lower, mut upper, mut chunks) = (0f64, 0f64, 0u32);
        for i in 0..sample {
            // An even stride over a larger index (Lucene draws a random sample).
            let at = if n > sample { (i as u128 * n as u128 / sample as u128) as usize } else { i };
            scratch.extend_from_slice(vector(at));
            if scratch.len() == per_chunk * dims {
                let (lo, hi) = quantiles(&mut scratch, ci);
                lower += f64::from(lo);
                upper += f64::from(hi);
                chunks += 1;
                scratch.clear();
            }
        }
        let min = (lower / f64::from(chunks)) as f32;
        let max = (upper / f64::from(chunks)) as f32;
        Quantizer::new(min, max)
    }

    /// A quantizer between `min` and `max`; `None` unless `min < max`, both finite.
    pub fn new(min: f32, max: f32) -> Option<Quantizer> {
        if !(min.is_finite() && max.is_finite() && min < max) {
            return None;
        }
        Some(Quantizer { min, max, scale: LEVELS / (max - min), alpha: (max - min) / LEVELS })
    }

    /// `v` (prepared) quantized, with Lucene's correction term (zero for euclidean).
    pub fn quantize(&self, v: &[f32], similarity: Similarity) -> Quantized {
        let mut q = Quantized { levels: Vec::with_capacity(v.len()), correction: 0.0 };
        self.quantize_into(v, similarity, &mut q);
        q
    }

    /// [`Quantizer::quantize`] into `out`, reusing its buffer (a query ranks dozens of
    /// candidates; one allocation serves them all).
    pub fn quantize_into(&self, v: &[f32], similarity: Similarity, out: &mut Quantized) {
        let (min, max) = (self.min, self.max);
        out.levels.clear();
        if similarity == Similarity::Euclidean {
            // No correction term: the levels alone, a loop the compiler vectorises.
            let level = |x: f32| java_round(self.scale * (x.clamp(min, max) - min));
            out.levels.extend(v.iter().map(|&x| level(x).clamp(0, LEVELS as i32) as u8));
            out.correction = 0.0;
            return;
        }
        let mut correction = 0f32;
        out.levels.extend(v.iter().map(|&x| {
            let dx = x - min;
            let dxc = x.clamp(min, max) - min;
            let dxs = self.scale * dxc;
            let level = java_round(dxs);
            let dxq = level as f32 * self.alpha;
            correction += min * (x - min / 2.0) + (dx - dxq) * dxq;
            level.clamp(0, LEVELS as i32) as u8
        }));
        out.correction = correction;
    }

    /// Neo4j's score of `doc` for `query`, both quantized by this quantizer.
    pub fn score(&self, similarity: Similarity, query: &Quantized, doc: &Quantized) -> f32 {
        let multiplier = self.alpha * self.alpha;
        let pairs = query.levels.iter().zip(&doc.levels);
        match similarity {
            Similarity::Cosine => {
                let dot: i32 = pairs.map(|(&a, &b)| i32::from(a) * i32::from(b)).sum();
                let adjusted = dot as f32 * multiplier + query.correction + doc.correction;
                ((1.0 + adjusted) / 2.0).clamp(0.0, 1.0)
            }
            Similarity::Euclidean => {
                let sq: i32 = pairs
                    .map(|(&a, &b)| {
                        let d = i32::from(a) - i32::from(b);
                        d * d
                    })
                    .sum();
                1.0 / (1.0 + sq as f32 * multiplier)
            }
        }
    }
}

/// The best `k` of `candidates` (id and *prepared* vector) for `query` (as given) by Neo4j's
/// quantized scores, best first. Candidates of another length are skipped; an invalid query
/// is an error. The engine calls this on a pool of exact nearest candidates larger than `k`.
pub fn quantized_top_k<'a>(
    similarity: Similarity,
    quantizer: &Quantizer,
    query: &[f32],
    candidates: impl IntoIterator<Item = (u64, &'a [f32])>,
    k: usize,
) -> Result<Vec<Hit>> {
    let query = quantizer.quantize(&similarity.prepare(query)?, similarity);
    let mut doc = Quantized { levels: Vec::with_capacity(query.levels.len()), correction: 0.0 };
    let mut hits: Vec<Hit> = candidates
        .into_iter()
        .filter(|(_, v)| v.len() == query.levels.len())
        .map(|(id, v)| {
            quantizer.quantize_into(v, similarity, &mut doc);
            Hit { id, score: quantizer.score(similarity, &query, &doc) }
        })
        .collect();
    hits.sort_by(hit_order);
    hits.truncate(k);
    Ok(hits)
}

/// Lucene's default confidence interval for `dims` dimensions, in f32 as Lucene computes it.
fn confidence_interval(dims: usize) -> f32 {
    0.9f32.max(1.0 - 1.0 / (dims as f32 + 1.0))
}

/// Java's `Math.round(float)`: the nearest integer, halves up.
///
/// For `x >= 0` (every level [`Quantizer::quantize`] rounds) truncation equals the floor, so
/// the hot path is one conversion; `floor` is a libm call on the baseline x86-64 target
/// (no SSE4.1), which made it a quarter of a query's instructions.
#[inline]
fn java_round(x: f32) -> i32 {
    if x >= 0.0 {
        (x + 0.5) as i32
    } else if x.is_nan() {
        0
    } else {
        (x + 0.5).floor() as i32
    }
}

/// The lower and upper quantile of `values` for confidence interval `ci` (reorders `values`).
fn quantiles(values: &mut [f32], ci: f32) -> (f32, f32) {
    let n = values.len();
    if n <= 2 {
        let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        return (lo, hi);
    }
    let sel = ((n as f32 * (1.0 - ci)) / 2.0 + 0.5) as usize;
    let sel = sel.min((n - 1) / 2);
    let (_, hi, _) = values.select_nth_unstable_by(n - 1 - sel, f32::total_cmp);
    let hi = *hi;
    let (_, lo, _) = values.select_nth_unstable_by(sel, f32::total_cmp);
    (*lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(sim: Similarity, vs: &[Vec<f32>]) -> Vec<Vec<f32>> {
        vs.iter().map(|v| sim.prepare(v).unwrap()).collect()
    }

    fn scores(sim: Similarity, docs: &[Vec<f32>], query: &[f32]) -> Vec<f32> {
        let docs = prepared(sim, docs);
        let dims = docs[0].len();
        let q = Quantizer::fit(dims, docs.len(), |i| &docs[i]).unwrap();
        let query = q.quantize(&sim.prepare(query).unwrap(), sim);
        docs.iter().map(|d| q.score(sim, &query, &q.quantize(d, sim))).collect()
    }

    /// Neo4j 5.26.30's scores (quantization on, the default), data written in one transaction.
    #[test]
    fn cosine_scores_equal_neo4j() {
        let docs: Vec<Vec<f32>> = (0..4)
            .map(|i| {
                let mut v = vec![1.0f32; 1536];
                v[1535] = 100.0 * (i + 1) as f32;
                v
            })
            .collect();
        let got = scores(Similarity::Cosine, &docs, &docs[0]);
        let neo4j =
            [0.9993920922279358, 0.9739261865615845, 0.9758886098861694, 0.9761228561401367];
        for (g, n) in got.iter().zip(neo4j) {
            assert!((f64::from(*g) - n).abs() < 1e-6, "{got:?}");
        }
        // graphrag-style 3-d vectors: Neo4j scores the first 0.997361 (exact: 0.997519).
        let docs3 =
            [vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![1.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]];
        let got = scores(Similarity::Cosine, &docs3, &[1.0, 0.1, 0.0]);
        assert!((f64::from(got[0]) - 0.997361).abs() < 1e-6, "{got:?}");
    }

    #[test]
    fn quantiles_skip_the_tails_and_degenerate_sets_stay_exact() {
        let mut v: Vec<f32> = (0..100).map(|i| i as f32).collect();
        // ci 0.9: 5 values from each end.
        assert_eq!(quantiles(&mut v, 0.9), (5.0, 94.0));
        let same = [vec![1.0f32, 1.0]];
        assert_eq!(Quantizer::fit(2, 1, |i| &same[i]), None);
        assert_eq!(Quantizer::fit(2, 0, |i| &same[i]), None);
        assert_eq!(Quantizer::new(f32::NAN, 1.0), None);
    }

    /// The fast path must round exactly as Java's `Math.round(float)` does.
    #[test]
    fn java_round_matches_the_floor_definition() {
        let cases =
            [0.0f32, 0.49999997, 0.5, 1.5, 2.5, 126.5, 127.0, -0.5, -1.5, -2.7, 3.999_999_8];
        for x in cases {
            assert_eq!(java_round(x), (x + 0.5).floor() as i32, "{x}");
        }
        assert_eq!(java_round(f32::NAN), 0);
    }

    /// The euclidean fast path (no correction) must give the levels the general one gives.
    #[test]
    fn euclidean_levels_equal_the_general_path() {
        let q = Quantizer::new(-0.8, 0.9).unwrap();
        let v: Vec<f32> = (0..131).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
        let e = q.quantize(&v, Similarity::Euclidean);
        let c = q.quantize(&v, Similarity::Cosine);
        assert_eq!(e.levels, c.levels);
        assert_eq!(e.correction, 0.0);
        assert!(e.levels.contains(&0) && e.levels.contains(&127), "clamped at both ends");
    }

    #[test]
    fn euclidean_identical_vectors_score_one() {
        let docs = [vec![1.0, 2.0, 3.0], vec![3.0, 1.0, 0.5], vec![0.0, 4.0, 1.0]];
        let got = scores(Similarity::Euclidean, &docs, &[1.0, 2.0, 3.0]);
        assert_eq!(got[0], 1.0);
        assert!(got[1] < got[0] && got[2] < got[0], "{got:?}");
    }
}
