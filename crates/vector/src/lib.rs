//! Arbor's vector index: approximate nearest neighbours over f32 vectors for
//! `CREATE VECTOR INDEX` and `db.index.vector.queryNodes`, plus the similarity functions behind
//! `vector.similarity.cosine` / `vector.similarity.euclidean`.
//!
//! * [`distance`]: vectorised kernels, [`Similarity`], Neo4j's scores and the Cypher functions.
//! * [`VectorIndex`]: an HNSW graph whose entries carry commit timestamps; a search sees one
//!   snapshot (and an optional filter), [`VectorIndex::gc`] / [`VectorIndex::compact`] drop
//!   versions no snapshot can see, [`IndexBuilder`] builds in parallel.
//! * [`merge_top_k`] / [`exact_top_k`]: how the engine adds a transaction's own uncommitted
//!   vectors to an index answer.
//! * [`VectorIndex::write_to`] / [`VectorIndex::read_from`]: the checksummed file format.
//! * [`quantize`]: Neo4j's (Lucene's) int8 scalar quantization, so an index with
//!   `vector.quantization.enabled` ranks and scores as Neo4j's ([`quantized_top_k`]).
//!
//! **Architecture Invariant:** this crate knows nothing of nodes, properties, transactions or
//! Cypher values. Ids are opaque `u64`s and time is an opaque `u64` commit timestamp; the engine
//! maps errors to Neo4j status codes.
//!
//! # How the engine uses it
//!
//! * `CREATE VECTOR INDEX`: [`IndexConfig::new`]`(dims, `[`Similarity::parse`]`(fn)?)`, with
//!   Neo4j's `vector.hnsw.m` / `vector.hnsw.ef_construction` options mapped to `m` /
//!   `ef_construction` when given; populate with [`IndexBuilder::add`] (an `Err` means Neo4j
//!   would leave that node out: skip it) and [`IndexBuilder::build`].
//! * Commit: [`VectorIndex::insert`] (or [`VectorIndex::insert_batch`], which links on all
//!   threads) / [`VectorIndex::delete`] at the commit timestamp. They take
//!   `&mut self` (hold the index's write lock); searches take `&self` and run concurrently.
//! * `db.index.vector.queryNodes(name, k, q)`: [`VectorIndex::search`] at the transaction's
//!   snapshot, with a filter hiding the ids the transaction deleted or changed, then
//!   [`merge_top_k`] with [`exact_top_k`] over the transaction's own new vectors.
//! * Checkpoint: [`VectorIndex::gc`] with the oldest active snapshot, then
//!   [`VectorIndex::write_to`]; on open [`VectorIndex::read_from`] and replay later commits.
//!
//! # Parameters
//!
//! `m = 0` (the default) means [`DEFAULT_M`] = 16, with `4 * m` links on layer 0
//! ([`layer0_degree`]; the paper's `2 * m` needed a 3x wider beam on hard data) and
//! `ef_construction = 100`. A search with `ef = 0` uses the beam width the index measured on
//! its own data ([`VectorIndex::tuned_ef`], `tune.rs`). From [`CODES_FROM`] entries the graph
//! walks one-byte codes (`codes.rs`) and re-ranks exactly; with
//! [`IndexConfig::keep_vectors`] off (the engine) the f32 vectors are not held and come
//! through [`SearchParams::fetch`]: 0.80x the raw vectors at 128 dimensions. Measured results
//! are in `crates/vector/README.md`; the benchmark is `examples/vector_bench.rs`.
//!
mod codes;
pub mod distance;
mod error;
mod graph;
mod index;
mod persist;
pub mod quantize;
mod simd;
pub mod synthetic;
mod topk;
mod tune;

pub use distance::{cosine_score, euclidean_score, Similarity};
pub use error::{Result, VectorError};
pub use index::{
    layer0_degree, Fetch, GcReport, IndexBuilder, IndexConfig, SearchParams, VectorIndex,
    CODES_FROM, DEFAULT_M, MAX_DIMENSIONS,
};
pub use quantize::{quantized_top_k, Quantizer};
pub use topk::{exact_top_k, merge_top_k, Hit};
