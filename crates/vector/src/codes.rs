//! The graph's navigation codes: every stored vector as one byte per dimension (a per-dimension
//! affine scale fitted on the data), and distances from an f32 query to such codes.
//!
//! A coordinate `x_d` is stored as `c_d = round((x_d - lo_d) / step_d)` in `0..=255`, read
//! back as `lo_d + step_d * c_d`. The distance from a query `q` to a code is computed without
//! decoding, from one integer dot product:
//!
//! * euclidean: `|q - x̂|² = Σ a_d² - 2 Σ (a_d step_d) c_d + Σ (step_d c_d)²` with `a = q - lo`;
//!   the last sum is stored per vector ([`Codebook::encode`] returns it);
//! * cosine (prepared unit vectors): `1 - q·x̂ = 1 - Σ q_d lo_d - Σ (q_d step_d) c_d`.
//!
//! The weights `a_d step_d` (or `q_d step_d`) are scaled to `i16` in `±2047` once per query
//! ([`Codebook::query`]), so the dot product is exact integer arithmetic in `i32`: its
//! magnitude is at most `255 · 2047 · 4096 < 2^31` at the largest dimension count. Search walks the graph on these distances and ranks its best candidates again
//! with exact f32 distances (the index's own vectors, or the caller's through a fetch), so a
//! code's error only costs navigation, never a score.

use crate::distance::Similarity;

/// Largest query weight after scaling (see the module docs for the overflow bound).
const WEIGHT_MAX: f32 = 2047.0;
/// Vectors the ranges are fitted on at most (an even stride over larger sets).
const FIT_SAMPLE: usize = 20_000;

/// The per-dimension scale of an index's codes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Codebook {
    pub lo: Vec<f32>,
    pub step: Vec<f32>,
}

/// A query prepared against a [`Codebook`]: `distance = base + mul * dot(weights, code) +
/// norm(code)`.
#[derive(Clone, Debug, Default)]
pub(crate) struct CodeQuery {
    pub weights: Vec<i16>,
    pub base: f32,
    pub mul: f32,
    /// The unscaled weights and a decoded code (buffers reused across preparations).
    real: Vec<f32>,
    decoded: Vec<f32>,
    /// Whether the AVX2 kernel may be used (checked once per preparation, not per distance).
    pub simd: bool,
}

impl Codebook {
    /// Fits the ranges on `n` prepared vectors (`vector(i)`, `i < n`), widened by a margin of
    /// 1/16 of each range on both sides so that later vectors of the same distribution are
    /// rarely clamped. `None` when there are no vectors.
    pub fn fit<'a>(dims: usize, n: usize, vector: impl Fn(usize) -> &'a [f32]) -> Option<Self> {
        if n == 0 {
            return None;
        }
        let mut lo = vec![f32::INFINITY; dims];
        let mut hi = vec![f32::NEG_INFINITY; dims];
        let sample = n.min(FIT_SAMPLE);
        for i in 0..sample {
            let at = (i as u128 * n as u128 / sample as u128) as usize;
            for ((l, h), &x) in lo.iter_mut().zip(hi.iter_mut()).zip(vector(at)) {
                *l = l.min(x);
                *h = h.max(x);
            }
        }
        Some(Codebook::from_ranges(&lo, &hi))
    }

    /// A codebook over `[lo_d, hi_d]` per dimension (widened by the fit's margin).
    pub fn from_ranges(lo: &[f32], hi: &[f32]) -> Codebook {
        let mut book = Codebook { lo: Vec::with_capacity(lo.len()), step: Vec::new() };
        for (&l, &h) in lo.iter().zip(hi) {
            let width = (h - l).max(0.0);
            let margin = width / 16.0;
            let (l, width) = (l - margin, width + 2.0 * margin);
            // A constant dimension still gets a positive step so decoding is exact there.
            let step = if width > 0.0 { width / 255.0 } else { f32::MIN_POSITIVE.max(l.abs()) };
            book.lo.push(l);
            book.step.push(step);
        }
        book
    }

    pub fn dims(&self) -> usize {
        self.lo.len()
    }

    /// Writes the code of `v` into `out` (`dims` bytes) and returns its stored norm term
    /// (`Σ (step_d c_d)²` for euclidean, 0 for cosine).
    pub fn encode(&self, similarity: Similarity, v: &[f32], out: &mut [u8]) -> f32 {
        let mut norm = 0f32;
        for (((o, &x), &l), &s) in out.iter_mut().zip(v).zip(&self.lo).zip(&self.step) {
            let c = ((x - l) / s).round().clamp(0.0, 255.0);
            *o = c as u8;
            norm += (s * c) * (s * c);
        }
        match similarity {
            Similarity::Euclidean => norm,
            Similarity::Cosine => 0.0,
        }
    }

    /// The vector a code stands for, into `out`.
    pub fn decode(&self, code: &[u8], out: &mut Vec<f32>) {
        out.clear();
        out.extend(
            code.iter().zip(&self.lo).zip(&self.step).map(|((&c, &l), &s)| l + s * f32::from(c)),
        );
    }

    /// Prepares `q` (a prepared vector) for distances to codes, reusing `out`'s buffers (no
    /// allocation once they are large enough: a build prepares dozens of stored vectors per
    /// insert for its neighbour heuristic). Every step is element-wise or a vectorised
    /// kernel, so this costs a few distances, not a few hundred.
    pub fn query(&self, similarity: Similarity, q: &[f32], out: &mut CodeQuery) {
        out.real.clear();
        let terms = q.iter().zip(&self.lo).zip(&self.step);
        let base = match similarity {
            Similarity::Euclidean => {
                out.real.extend(terms.map(|((&x, &l), &s)| (x - l) * s));
                crate::distance::l2_squared(q, &self.lo)
            }
            Similarity::Cosine => {
                out.real.extend(terms.map(|((&x, _), &s)| x * s));
                crate::distance::dot(q, &self.lo)
            }
        };
        out.finish(similarity, base);
    }

    /// Prepares the vector a code stands for, as [`Codebook::query`] of its decoding does.
    pub fn query_code(&self, similarity: Similarity, code: &[u8], out: &mut CodeQuery) {
        if let Similarity::Euclidean = similarity {
            // `a_d = x̂_d - lo_d = step_d c_d`, so the weights and `Σ a_d²` need no decoding.
            out.real.clear();
            out.real.extend(code.iter().zip(&self.step).map(|(&c, &s)| s * f32::from(c)));
            let mut lanes = [0f32; 8];
            let chunks = out.real.chunks_exact(8);
            let rest: f32 = chunks.remainder().iter().map(|a| a * a).sum();
            for c in chunks {
                for (l, &a) in lanes.iter_mut().zip(c) {
                    *l += a * a;
                }
            }
            let base = lanes.iter().sum::<f32>() + rest;
            for (w, &s) in out.real.iter_mut().zip(&self.step) {
                *w *= s;
            }
            out.finish(similarity, base);
            return;
        }
        let mut decoded = std::mem::take(&mut out.decoded);
        self.decode(code, &mut decoded);
        self.query(similarity, &decoded, out);
        out.decoded = decoded;
    }
}

impl CodeQuery {
    /// Scales the unscaled weights in `real` to `i16` (see the module docs) and sets the
    /// constant terms from `base` (`Σ a_d²` for euclidean, `Σ q_d lo_d` for cosine).
    fn finish(&mut self, similarity: Similarity, base: f32) {
        let mut lanes = [0f32; 8];
        let chunks = self.real.chunks_exact(8);
        let rest = chunks.remainder().iter().fold(0f32, |m, &w| m.max(w.abs()));
        for c in chunks {
            for (m, &w) in lanes.iter_mut().zip(c) {
                *m = m.max(w.abs());
            }
        }
        let wmax = lanes.iter().fold(rest, |m, &w| m.max(w));
        let scale = if wmax > 0.0 { wmax / WEIGHT_MAX } else { 1.0 };
        let inv = 1.0 / scale;
        self.weights.clear();
        // Round to nearest by adding 1.5 · 2^23 (the sum's last bit is then the units digit)
        // and reading the integer back from the bits: exact for |w · inv| <= 2047.x < 2^22,
        // and element-wise (`f32::round` is a library call on x86-64 without SSE4.1).
        const MAGIC: f32 = 12_582_912.0;
        self.weights.extend(
            self.real.iter().map(|&w| ((w * inv + MAGIC).to_bits() as i32 - 0x4B40_0000) as i16),
        );
        (self.base, self.mul) = match similarity {
            Similarity::Euclidean => (base, -2.0 * scale),
            Similarity::Cosine => (1.0 - base, -scale),
        };
        self.simd = crate::simd::avx2_fma();
    }

    /// The approximate distances to the codes of `slots` (`dims` bytes each in `codes`, norm
    /// terms in `norms`) into `out`; `dots` is a buffer.
    pub fn distances(
        &self,
        (codes, norms, dims): (&[u8], &[f32], usize),
        slots: &[u32],
        dots: &mut Vec<i32>,
        out: &mut Vec<f32>,
    ) {
        out.clear();
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            crate::simd::dots_u8_i16(codes, dims, slots, &self.weights, dots);
            out.extend(
                dots.iter()
                    .zip(slots)
                    .map(|(&d, &s)| self.base + self.mul * d as f32 + norms[s as usize]),
            );
            return;
        }
        out.extend(slots.iter().map(|&s| {
            let at = s as usize * dims;
            self.distance(&codes[at..at + dims], norms[s as usize])
        }));
    }

    /// The approximate distance to a code with stored norm term `norm`.
    #[inline]
    pub fn distance(&self, code: &[u8], norm: f32) -> f32 {
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            let dot = crate::simd::dot_u8_i16(code, &self.weights);
            return self.base + self.mul * dot as f32 + norm;
        }
        self.base + self.mul * dot_u8_i16_portable(code, &self.weights) as f32 + norm
    }
}

/// `Σ code_d · weight_d` in `i32`: the AVX2 kernel when the CPU has it, else the portable one.
#[cfg(test)]
#[inline]
pub(crate) fn dot_u8_i16(code: &[u8], weights: &[i16]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx2_fma() {
        return crate::simd::dot_u8_i16(code, weights);
    }
    dot_u8_i16_portable(code, weights)
}

/// The portable kernel: 16 independent `i32` lanes, which the compiler vectorises.
#[inline]
pub(crate) fn dot_u8_i16_portable(code: &[u8], weights: &[i16]) -> i32 {
    let n = code.len().min(weights.len());
    let (code, weights) = (&code[..n], &weights[..n]);
    let mut acc = [0i32; 16];
    let (cc, wc) = (code.chunks_exact(16), weights.chunks_exact(16));
    let tail: i32 =
        cc.remainder().iter().zip(wc.remainder()).map(|(&c, &w)| i32::from(c) * i32::from(w)).sum();
    for (c, w) in cc.zip(wc) {
        for i in 0..16 {
            acc[i] += i32::from(c[i]) * i32::from(w[i]);
        }
    }
    acc.iter().sum::<i32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic;

    #[test]
    fn kernels_agree_at_every_tail_length_and_at_the_extremes() {
        for n in 0..80 {
            let c: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
            let w: Vec<i16> = (0..n).map(|i| ((i * 911 % 4095) as i16) - 2047).collect();
            let want: i32 = c.iter().zip(&w).map(|(&a, &b)| i32::from(a) * i32::from(b)).sum();
            assert_eq!(dot_u8_i16(&c, &w), want, "dispatched n={n}");
            assert_eq!(dot_u8_i16_portable(&c, &w), want, "portable n={n}");
        }
        let c = vec![255u8; 4096];
        for w in [2047i16, -2047] {
            let want = 255 * i32::from(w) * 4096;
            assert_eq!(dot_u8_i16(&c, &vec![w; 4096]), want, "no overflow at 4096 dimensions");
        }
    }

    /// The code distance must track the exact one closely: for uniform data the error is a
    /// small fraction of the gap between a query's neighbours.
    #[test]
    fn code_distances_track_exact_distances() {
        let dims = 64;
        let data = synthetic::uniform(500, dims, 4);
        let vectors: Vec<&[f32]> = data.chunks_exact(dims).collect();
        for sim in [Similarity::Euclidean, Similarity::Cosine] {
            let prepared: Vec<Vec<f32>> = vectors.iter().map(|v| sim.prepare(v).unwrap()).collect();
            let book = Codebook::fit(dims, prepared.len(), |i| &prepared[i]).unwrap();
            let mut q = CodeQuery::default();
            book.query(sim, &prepared[0], &mut q);
            let mut code = vec![0u8; dims];
            let mut back = Vec::new();
            for v in &prepared[1..] {
                let norm = book.encode(sim, v, &mut code);
                book.decode(&code, &mut back);
                let exact = sim.distance(&prepared[0], v);
                let approx = q.distance(&code, norm);
                let decoded = sim.distance(&prepared[0], &back);
                let scale = exact.abs().max(0.1);
                assert!((approx - exact).abs() < 0.02 * scale, "{sim:?}: {approx} vs {exact}");
                assert!((approx - decoded).abs() < 0.005 * scale, "{sim:?}: {approx} vs {decoded}");
            }
        }
    }

    /// Preparing a code directly gives the distances of preparing its decoded vector.
    #[test]
    fn code_queries_match_decoded_queries() {
        let dims = 37;
        let data = synthetic::uniform(50, dims, 9);
        for sim in [Similarity::Euclidean, Similarity::Cosine] {
            let prepared: Vec<Vec<f32>> =
                data.chunks_exact(dims).map(|v| sim.prepare(v).unwrap()).collect();
            let book = Codebook::fit(dims, prepared.len(), |i| &prepared[i]).unwrap();
            let mut codes = vec![0u8; dims * prepared.len()];
            let norms: Vec<f32> = prepared
                .iter()
                .zip(codes.chunks_exact_mut(dims))
                .map(|(v, c)| book.encode(sim, v, c))
                .collect();
            let (mut direct, mut decoded, mut back) =
                (CodeQuery::default(), CodeQuery::default(), Vec::new());
            for q in codes.chunks_exact(dims) {
                book.query_code(sim, q, &mut direct);
                book.decode(q, &mut back);
                book.query(sim, &back, &mut decoded);
                for (c, &norm) in codes.chunks_exact(dims).zip(&norms) {
                    let (a, b) = (direct.distance(c, norm), decoded.distance(c, norm));
                    assert!((a - b).abs() <= 1e-3 * b.abs().max(1.0), "{sim:?}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn constant_dimensions_and_outliers_stay_finite() {
        let data = [vec![1.0f32, 5.0], vec![1.0, 6.0]];
        let book = Codebook::fit(2, 2, |i| &data[i]).unwrap();
        let mut code = [0u8; 2];
        let mut back = Vec::new();
        book.encode(Similarity::Euclidean, &[1.0, 5.5], &mut code);
        book.decode(&code, &mut back);
        assert!((back[0] - 1.0).abs() < 1e-6 && (back[1] - 5.5).abs() < 0.01, "{back:?}");
        // Far outside the fitted range: clamped, never a wrapped byte.
        book.encode(Similarity::Euclidean, &[1e9, -1e9], &mut code);
        assert_eq!(code, [255, 0]);
        assert_eq!(Codebook::fit(2, 0, |i| &data[i]), None);
    }
}
