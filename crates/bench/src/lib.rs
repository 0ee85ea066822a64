//! Arbor's benchmarks as a library, driven by `arbor bench ...`: the traversal benchmark's tree
//! builder ([`tree`]), a bit-exact `java.util.Random` ([`java_random`]) for its flags, the
//! runner and reports ([`traversal`]), a counting global allocator ([`alloc`]), the small
//! statistics and JSON helpers they share, and the B2B import data generator ([`gen_b2b`]).

pub mod alloc;
pub mod gen_b2b;
pub mod java_random;
pub mod stats;
pub mod traversal;
pub mod tree;

pub use alloc::{tune_allocator, CountingAlloc};
