//! Deterministic synthetic datasets for the tests and the benchmark example: uniform random
//! vectors (the hard case for graph indexes) and Gaussian clusters (closer to real embeddings).

/// A small deterministic generator (SplitMix64), so datasets do not depend on a crate version.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`.
    pub fn uniform(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// Approximately standard normal (sum of four uniforms, rescaled).
    pub fn normal(&mut self) -> f32 {
        let s: f32 = (0..4).map(|_| self.uniform()).sum();
        s * (3.0f32 / 4.0).sqrt()
    }
}

/// `n` vectors of `dims` coordinates, uniform in `[-1, 1)`, flat.
pub fn uniform(n: usize, dims: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n * dims).map(|_| rng.uniform()).collect()
}

/// `n` embedding-like vectors and `queries` held-out queries drawn from the *same* clusters.
///
/// Queries for clustered data must come from the data's own distribution: `clustered` with
/// another seed draws other centres, so every query lies far from every cluster (an
/// out-of-distribution query, where any graph index degrades as the index grows). That mistake
/// made the benchmark report a recall collapse on clustered 768-d data.
pub fn clustered_with_queries(
    n: usize,
    queries: usize,
    dims: usize,
    clusters: usize,
    seed: u64,
) -> (Vec<f32>, Vec<f32>) {
    let mut data = clustered(n + queries, dims, clusters, seed);
    let held_out = data.split_off(n * dims);
    (data, held_out)
}

/// `n` embedding-like vectors, flat: `clusters` random centres (spread 1 per coordinate); each
/// cluster varies along its own 16 random directions (scale 0.3) plus small isotropic noise
/// (0.02), so neighbourhoods have a low intrinsic dimension, as real embeddings do.
pub fn clustered(n: usize, dims: usize, clusters: usize, seed: u64) -> Vec<f32> {
    const LATENT: usize = 16;
    let clusters = clusters.max(1);
    let mut rng = Rng::new(seed);
    let centres: Vec<f32> = (0..clusters * dims).map(|_| rng.normal()).collect();
    let bases: Vec<f32> = (0..clusters * LATENT * dims).map(|_| rng.normal() * 0.3).collect();
    let mut out = Vec::with_capacity(n * dims);
    let mut z = [0.0f32; LATENT];
    for _ in 0..n {
        let c = (rng.next_u64() % clusters as u64) as usize;
        z.iter_mut().for_each(|x| *x = rng.normal());
        let basis = &bases[c * LATENT * dims..(c + 1) * LATENT * dims];
        for d in 0..dims {
            let along: f32 = (0..LATENT).map(|l| z[l] * basis[l * dims + d]).sum();
            out.push(centres[c * dims + d] + along + 0.02 * rng.normal());
        }
    }
    out
}
