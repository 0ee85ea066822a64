//! Query execution: physical operators and expression evaluation over the [`graph::Graph`] seam.
//!
//! **Architecture Invariant:** this crate never sees the storage crate; it reads and writes the
//! graph only through [`graph::Graph`], which the engine implements over a storage transaction.
//!
//! Flow: [`PreparedQuery::prepare`] binds and plans a parsed statement (via `arbor-cypher-plan`)
//! once; the engine caches it and starts an [`Execution`] per run, which builds fresh operator
//! state (see `runtime`) and pulls rows one at a time.

mod ctx;
mod eval;
pub mod functions;
pub mod graph;
mod interrupt;
mod load_csv;
pub mod memory;
mod nodeset;
pub mod procs;
mod profile;
mod query;
mod runtime;
mod temporal_access;
/// In-memory graph double for tests; compiled only for this crate's tests or with the
/// `testing` feature (a dev-dependency feature of crates that test against it).
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod traverse;

/// This crate's test binary accounts its allocations, so the memory-limit tests see real ones.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOC: memory::TrackingAlloc<std::alloc::System> =
    memory::TrackingAlloc(std::alloc::System);

#[cfg(test)]
mod ends_tests;
#[cfg(test)]
mod frontier_tests;
#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod prune_tests;
#[cfg(test)]
mod tests;

pub use query::{Execution, PreparedQuery};

use arbor_cypher_syntax::ast::Statement;
use arbor_model::Result;

/// The convenience constructor over the built-in procedures, here at the top because the
/// registry it uses holds procedures (`apoc.periodic.*`, `apoc.cypher.*`) that prepare queries.
impl PreparedQuery {
    /// Binds and plans a Query / Explain / Profile statement (Schema and Show statements are the
    /// engine's), with the built-in procedures only.
    pub fn prepare(stmt: &Statement, text: &str) -> Result<PreparedQuery> {
        PreparedQuery::prepare_with(stmt, text, procs::Registry::builtins())
    }
}
