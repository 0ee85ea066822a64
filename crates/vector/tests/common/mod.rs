//! Helpers shared by the integration tests: building an index from a flat dataset and recall.

#![allow(dead_code)]

use arbor_vector::{Hit, IndexBuilder, IndexConfig, SearchParams, Similarity, VectorIndex};

pub fn build(data: &[f32], dims: usize, sim: Similarity, ts: u64) -> VectorIndex {
    let mut b = IndexBuilder::new(IndexConfig::new(dims, sim)).unwrap();
    for (i, v) in data.chunks_exact(dims).enumerate() {
        b.add(i as u64, v, ts).unwrap();
    }
    b.build().unwrap()
}

pub fn at(snapshot: u64) -> SearchParams<'static> {
    SearchParams { snapshot, ..SearchParams::default() }
}

/// Fraction of the exact top-k ids that the approximate answer contains.
pub fn recall(approx: &[Hit], exact: &[Hit]) -> f64 {
    let hit = exact.iter().filter(|e| approx.iter().any(|a| a.id == e.id)).count();
    hit as f64 / exact.len().max(1) as f64
}
