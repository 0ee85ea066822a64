//! Storage's configuration vocabulary: durability modes and the store configuration. The graph
//! vocabulary (token ids and kinds, directions, edges) is `arbor_model::graph`'s, re-exported.

pub use arbor_model::graph::{Direction, Edge, TokenId, TokenKind};
use std::time::Duration;

/// When a commit is acknowledged relative to its WAL record reaching the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// fdatasync before success; concurrent commits share one fdatasync (group commit).
    #[default]
    Sync,
    /// Acknowledge after `write()`; fdatasync in the background about every 10 ms.
    Async,
    /// Never fsync (ephemeral use).
    Off,
}

/// Configuration of a file-backed store.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub durability: Durability,
    /// Checkpoint when this much time has passed since the last checkpoint...
    pub checkpoint_interval: Duration,
    /// ...or when this many WAL bytes were written since the last checkpoint.
    pub checkpoint_wal_bytes: u64,
    /// A WAL segment is closed and a new one started once it exceeds this size.
    pub wal_segment_bytes: u64,
    /// The page cache's budget in bytes (segment pages); `None`: half of the machine's memory.
    pub memory_limit: Option<u64>,
    /// After the open (which leaves every large column in the segment file, read through the
    /// page cache), read the parts that fit their share of `memory_limit` into memory in a
    /// background thread (`durability/promote.rs`). Off in the crate's own tests, so their
    /// small stores keep covering the reads through the pool.
    pub promote_at_open: bool,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            durability: Durability::Sync,
            checkpoint_interval: Duration::from_secs(300),
            checkpoint_wal_bytes: 256 << 20,
            wal_segment_bytes: 64 << 20,
            memory_limit: None,
            promote_at_open: !cfg!(test),
        }
    }
}
