//! Arbor's storage engine: an in-memory, multi-versioned property graph with snapshot isolation,
//! a redo-only write-ahead log with group commit, checkpoints and crash recovery.
//!
//! # Design (v1)
//!
//! * **Tables.** Nodes and relationships live in sharded tables (`id % 64` picks a shard, each
//!   shard a `RwLock<Vec<Option<Slot>>>`). A slot holds a short *version chain*
//!   `Vec<(commit_ts, Option<Arc<Data>>)>` (oldest first; `None` is a tombstone). Node slots also
//!   hold append-only adjacency lists (outgoing, incoming) of `(rel, other node, type)`; whether an
//!   entry is visible is decided by the relationship's own chain, so creating relationships on the
//!   same node never conflicts and never versions the node.
//! * **Snapshots.** A global clock: `visible_ts` is the newest commit that new snapshots may see.
//!   A transaction reads versions with `ts <= start_ts`, overlaid by its private write set. Locks
//!   are only held for the duration of a single read or a single version install.
//! * **Commit.** Under one commit mutex: validate write-write conflicts (first committer wins:
//!   a node/relationship written by this transaction whose newest version is newer than the
//!   snapshot fails with `TransactionOutdated`), check unique constraints against the newest state,
//!   assign the commit ts, install the versions (invisible until published), and hand the redo
//!   record to the single WAL writer thread. The writer writes a batch, issues one fdatasync for
//!   the batch (group commit), then advances `visible_ts` (commits become visible in ts order and,
//!   in `Sync` mode, only once durable) and acknowledges the waiters.
//! * **Secondary structures** (per-label and per-type id sets, equality indexes) are unversioned
//!   supersets: readers re-check visibility and values. Node counts are kept as short per-label
//!   histories `(ts, count)` so `count_nodes` is O(log n) at any snapshot.
//! * **GC.** Each commit queues the ids it touched; versions older than the oldest active snapshot
//!   are pruned (and stale label/type/index entries and adjacency entries dropped). GC runs under
//!   the commit mutex, which makes it race-free against installs without extra latches.
//! * **Durability.** WAL records are `[len u32][crc32c u32][payload]` (little-endian), the payload
//!   starting with the commit ts and carrying logical full-image redo (put/delete node or
//!   relationship, schema operations, newly created tokens). Checkpoints serialize a snapshot
//!   transaction's view into `checkpoint-<ts>.arbor` (tmp + fsync + rename + directory fsync), then
//!   an atomic `MANIFEST`; covered WAL segments are deleted. Recovery loads the manifest's
//!   checkpoint and replays newer WAL records; a torn tail is truncated, corruption elsewhere is an
//!   error.
//!
//! The [`Transaction`] API is the stable boundary: a later phase replaces the table layout with
//! CSR segments without changing it.

mod base;
mod checkpoint;
mod codec;
mod mvcc;
mod schema;
mod store;
mod tx;
mod value;
mod wal;

#[cfg(test)]
mod base_tests;
#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use base::BaseStats;
pub use schema::{IndexInfo, IndexKind};
pub use store::{MemoryStats, Store};
pub use tx::{Savepoint, Transaction};
pub use value::check_storable;

pub use arbor_model::{Error, NodeId, RelId, Result, Status, Value};

/// Token ids for labels, relationship types and property keys (same shape as `arbor_exec`'s).
pub type TokenId = u32;

/// Direction of an expansion, as seen from the expanded node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Outgoing,
    Incoming,
    Both,
}

/// One relationship seen from a node: the relationship, the node at its other end and which way
/// it points (`Outgoing` if the expanded node is its start). A self-loop expanded with `Both`
/// appears once, as `Outgoing`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub rel: RelId,
    pub other: NodeId,
    pub dir: Dir,
}

/// Which kind of token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Label,
    RelType,
    PropertyKey,
}

impl TokenKind {
    pub(crate) fn index(self) -> usize {
        match self {
            TokenKind::Label => 0,
            TokenKind::RelType => 1,
            TokenKind::PropertyKey => 2,
        }
    }

    pub(crate) fn from_index(i: u8) -> Option<TokenKind> {
        match i {
            0 => Some(TokenKind::Label),
            1 => Some(TokenKind::RelType),
            2 => Some(TokenKind::PropertyKey),
            _ => None,
        }
    }
}

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
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            durability: Durability::Sync,
            checkpoint_interval: Duration::from_secs(300),
            checkpoint_wal_bytes: 256 << 20,
            wal_segment_bytes: 64 << 20,
        }
    }
}
