//! Recall@10 of the HNSW search against exact search, at sizes CI can afford.

mod common;

use arbor_vector::{synthetic, IndexBuilder, IndexConfig, SearchParams, Similarity};
use common::recall;

fn mean_recall(data: &[f32], queries: &[f32], config: IndexConfig, ef: usize) -> f64 {
    mean_recalls(data, queries, config, [ef])[0]
}

/// Mean recall@10 of one index at each beam width in `efs`.
fn mean_recalls<const N: usize>(
    data: &[f32],
    queries: &[f32],
    config: IndexConfig,
    efs: [usize; N],
) -> [f64; N] {
    let dims = config.dims;
    let mut b = IndexBuilder::new(config).unwrap();
    for (i, v) in data.chunks_exact(dims).enumerate() {
        b.add(i as u64, v, 1).unwrap();
    }
    let index = b.build().unwrap();
    efs.map(|ef| {
        let params = SearchParams { snapshot: 1, ef, ..SearchParams::default() };
        let mut total = 0.0;
        for q in queries.chunks_exact(dims) {
            let approx = index.search(q, 10, &params).unwrap();
            let exact = index.exact_search(q, 10, &params).unwrap();
            assert_eq!(approx.len(), 10);
            assert!(approx.windows(2).all(|w| w[0].score >= w[1].score), "best first");
            total += recall(&approx, &exact);
        }
        total / (queries.len() / dims) as f64
    })
}

/// Embedding-like data (16 latent dimensions per cluster), built on all threads; the queries
/// are held out from the same clusters, as real queries resemble the indexed embeddings.
#[test]
fn recall_at_10_clustered_20k_x_64_cosine() {
    let (data, queries) = synthetic::clustered_with_queries(20_000, 200, 64, 40, 3);
    let mut config = IndexConfig::new(64, Similarity::Cosine);
    config.m = 16;
    let r = mean_recall(&data, &queries, config, 300);
    assert!(r >= 0.95, "recall@10 {r:.3} below 0.95");
}

/// Uniform random data has no low-dimensional structure, the hard case. The default config
/// (M = 16, M0 = 32, ef_construction 100) reaches 0.978 at ef 64 here (FAISS's `IndexHNSWFlat`
/// is within 0.02 of this index on such data); the old memory-budget default (m = 8 at 32
/// dimensions) reaches 0.898 and fails.
#[test]
fn default_config_reaches_textbook_recall() {
    let data = synthetic::uniform(10_000, 32, 1);
    let queries = synthetic::uniform(200, 32, 2);
    let config = IndexConfig::new(32, Similarity::Euclidean);
    let r = mean_recall(&data, &queries, config, 64);
    assert!(r >= 0.95, "recall@10 {r:.3} below 0.95");
}

/// Out-of-distribution queries (another seed draws other centres) are the hard case of
/// clustered data; a wider beam still finds their neighbours.
#[test]
fn recall_at_10_clustered_out_of_distribution_queries() {
    let data = synthetic::clustered(10_000, 64, 40, 5);
    let queries = synthetic::clustered(100, 64, 40, 6);
    let config = IndexConfig::new(64, Similarity::Cosine);
    let r = mean_recall(&data, &queries, config, 256);
    assert!(r >= 0.95, "recall@10 {r:.3} below 0.95");
}

/// The collapse of session 13: a fixed beam loses recall as hard (uniform, high intrinsic
/// dimension) data grows; the engine's old fixed ef 256 went from 0.96 at 10 k to 0.71 at
/// 100 k x 128. A search with `ef = 0` uses the width the index measured on its own data,
/// which must hold recall where a fixed width does not. To stay within a CI budget of about
/// a second the data is made hard by a sparse graph (m 6, ef_construction 40) instead of by
/// size: at 5 k x 128 the fixed default ef 100 finds ~0.86 of the top 10 here (asserted, so
/// a tuner that kept the floor fails), the measured width ~0.99. The same check at 20 k with
/// the default graph, where ef 100 finds ~0.77 (13-60 s on a loaded machine):
/// `cargo run --release -p arbor-vector --example vector_bench -- random --n 20000 --queries
/// 100 --ef 0 --min-recall 0.95` (exits with status 1 below 0.95).
#[test]
fn default_search_keeps_recall_as_hard_data_grows() {
    let dims = 128;
    let data = synthetic::uniform(5_000, dims, 41);
    let queries = synthetic::uniform(100, dims, 42);
    let mut config = IndexConfig::new(dims, Similarity::Euclidean);
    (config.m, config.ef_construction) = (6, 40);
    let fixed = config.ef_search;
    let [tuned, floor] = mean_recalls(&data, &queries, config, [0, fixed]);
    assert!(floor < 0.95, "recall@10 {floor:.3} at the fixed ef {fixed}: data not hard enough");
    assert!(tuned >= 0.95, "recall@10 {tuned:.3} below 0.95 at the index's default ef");
}

/// `codes_from = usize::MAX` walks the exact f32 vectors: they are kept even with
/// `keep_vectors` off, and every score a search returns is the exact one (over codes without
/// a fetch, scores come from the codes and differ).
#[test]
fn f32_walk_keeps_exact_vectors_and_scores() {
    let (dims, n) = (16, 3000);
    let data = synthetic::uniform(n, dims, 5);
    let queries = synthetic::uniform(20, dims, 6);
    let mut config = IndexConfig::new(dims, Similarity::Euclidean);
    config.keep_vectors = false;
    config.codes_from = usize::MAX;
    let mut b = IndexBuilder::new(config).unwrap();
    for (i, v) in data.chunks_exact(dims).enumerate() {
        b.add(i as u64, v, 1).unwrap();
    }
    let index = b.build().unwrap();
    assert!(index.has_vectors(), "the f32 vectors are kept");
    let params = SearchParams { snapshot: 1, ef: 64, ..SearchParams::default() };
    for q in queries.chunks_exact(dims) {
        for hit in index.search(q, 10, &params).unwrap() {
            let v = &data[hit.id as usize * dims..(hit.id as usize + 1) * dims];
            let sim = Similarity::Euclidean;
            let exact = sim.score_of_distance(arbor_vector::distance::l2_squared(q, v));
            assert_eq!(hit.score, exact, "id {}", hit.id);
        }
    }
}
