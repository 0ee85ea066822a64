//! Query execution: physical operators and expression evaluation over the [`graph::Graph`] seam.
//!
//! **Architecture Invariant:** this crate never sees the storage crate; it reads and writes the
//! graph only through [`graph::Graph`], which the engine implements over a storage transaction.

pub mod functions;
pub mod graph;
