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
pub use index::{GcReport, IndexBuilder, IndexConfig, SearchParams, VectorIndex, MAX_DIMENSIONS};
pub use topk::{exact_top_k, merge_top_k, Hit};
