//! The embeddable database: [`Database`], [`Session`], transactions and result streams.
//!
//! **API Boundary:** this is Arbor's public face for embedding and the only thing the Bolt
//! server talks to. Results leave this crate materialized ([`arbor_model::Value::NodeData`] etc.),
//! so callers never need a transaction to read a record.
//!
//! **Architecture Invariant:** the engine glues parse → plan → execute over a storage snapshot;
//! it owns no query semantics itself (those live in `cypher-plan` and `exec`) and no file formats
//! (those live in `storage`).

mod apoc_schema;
pub mod backup;
mod config_settings;
mod db_stats;
mod deadline;
mod embedded;
mod fulltext;
mod fulltext_doc;
mod fulltext_live;
mod fulltext_schema;
mod graph_impl;
mod info_procs;
mod load_csv;
pub mod logins;
pub mod memory_limits;
pub mod metrics;
mod observe;
mod observer;
mod point_schema;
mod proc_registry;
mod procedures;
pub mod query_log;
mod schema;
mod session;
mod show;
mod show_indexes;
pub mod show_settings;
mod show_transactions;
mod tokens;
mod trail_count;
pub mod traversal;
mod txinfo;
mod users;
mod vector_schema;
mod warmup_procs;

/// This crate's test binary accounts its allocations, so the memory-limit tests see real ones.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOC: memory_limits::TrackingAlloc<std::alloc::System> =
    memory_limits::TrackingAlloc(std::alloc::System);

/// The user store (shared with the Bolt server's authentication).
pub use arbor_auth::{hash_password, Login, StoreError, User, UserStore};
pub use arbor_exec::graph::Stats;
pub use arbor_exec::procs::NEO4J_COMPAT_VERSION;
pub use arbor_model::graph::Edge;
pub use arbor_model::{CheckReport, SegmentReport};
pub use arbor_model::{Error, Result, Status, Value};
pub use arbor_model::{NodeData, NodeId, PathData, PropertyMap, RelData, RelId, ResultValue};
pub use embedded::{NodesWithLabel, Rows, Tx};
pub use procedures::{
    CypherType, ProcBody, Procedure, ProcedureSpec, TEST_PROCEDURES_ENV, TEST_REGISTRAR, TEST_RESET,
};
pub use session::update_counters;
pub use session::{
    AccessMode, CurrentUser, Database, DatabaseConfig, Durability, Notification, PullOutcome,
    QueryType, Record, RecordNames, RunInfo, Session, Summary, TxConfig,
};
pub use tokens::{Label, PropertyKey, RelInfo, RelType};
pub use traversal::{Direction, NodeRef};
