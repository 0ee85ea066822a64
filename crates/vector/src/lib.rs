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
//! `m = 0` (the default) sizes the links to 20% of the vector bytes: 9 at 128 dimensions
//! (1.19x the raw vectors), 24 from 256 up (1.07x at 768). That budget costs recall on hard
//! data: on uniform random 20 k x 128, recall@10 at `ef = 256` is 0.75 with the default `m`,
//! 0.90 with `m = 16` (1.30x) and 0.98 with `m = 32` (1.55x). See `examples/vector_bench.rs`.
//!
pub mod distance;
mod error;
mod graph;
mod index;
mod persist;
mod simd;
pub mod synthetic;
mod topk;

pub use distance::{cosine_score, euclidean_score, Similarity};
pub use error::{Result, VectorError};
pub use index::{
    GcReport, IndexBuilder, IndexConfig, SearchParams, VectorIndex, DEFAULT_M, MAX_DIMENSIONS,
};
pub use topk::{exact_top_k, merge_top_k, Hit};
