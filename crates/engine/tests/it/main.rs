//! The engine's integration tests as one test binary (one link and one build of the shared
//! helpers instead of one per file, in CI's release build). Each module is one former file;
//! `tests/observe.rs` stays apart (it reads process-wide counters).

mod common;

mod apoc;
mod backup_stream;
mod bounded_bfs;
mod cancel;
mod distinct_ends_equivalence;
mod fulltext;
mod id_seek_equivalence;
mod in_transactions;
mod index_equivalence;
mod load_csv;
mod neo4j5_session;
mod point_index_equivalence;
mod qpp_equivalence;
mod scan_equivalence;
mod shortest_equivalence;
mod text_index_equivalence;
mod traversal_counts_equivalence;
mod typed_agg_equivalence;
mod users;
mod var_count_equivalence;
mod var_expand_equivalence;
mod vector_index;
