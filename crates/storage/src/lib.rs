//! Arbor's storage engine: an in-memory, multi-versioned property graph with snapshot isolation,
//! a compact columnar base under a small versioned delta, a redo-only write-ahead log with group
//! commit, checkpoints and crash recovery.
//!
//! # Design
//!
//! Committed data lives in two layers: a compact, immutable **base** (everything committed up
//! to the base timestamp, see `base.rs`) and a small versioned **delta** (what was written
//! since). Readers consult the delta first and fall back to the base.
//!
//! * **Base** (`base.rs`). Dense integer columns, each stored as a constant, an arithmetic
//!   sequence or the narrowest of u8/u16/u32/u64: per node a label-set code into a dictionary of
//!   label sets (code 0 = no node) and per-label bitsets for scans; node and relationship
//!   properties as typed, packed blobs (`varint(key << 3 | tag)` + value; zig-zag varint ints,
//!   strings interned where repetition pays) in one arena with per-entity offsets; relationships
//!   as CSR in both directions (offsets per node + neighbour, relationship id and type per
//!   entry) plus a relationship id -> forward position column (start node by binary search over
//!   the offsets, end and type read at that position). Relationships bulk-created in start-node
//!   order have identity id columns, which cost nothing; one relationship type costs nothing per
//!   entry. Equality indexes: `hash(key) << 32 | node id`, sorted (8 bytes per entry). Measured
//!   on synthetic Pokec: ~12.6 bytes per relationship (both directions), ~3.4 per property
//!   (see `BENCHMARKS.md`, section Memory).
//! * **Delta** (`mvcc.rs`). Sparse sharded hash tables `id -> slot` holding only entities
//!   written since the base was built: a version chain `Vec<(commit_ts, Option<Arc<Data>>)>`
//!   (`None` = deletion, also of a base row) and, for nodes, append-only lists of relationships
//!   created since the base (`(rel, other, type, creating ts)`), so creating relationships on
//!   one node never conflicts. Label/type id sets and equality-index maps of the delta are
//!   unversioned supersets; readers re-check.
//! * **Dirty bits.** The base has one atomic bit per node and relationship, set (before the
//!   commit becomes visible) when the delta gets a version or an adjacency entry for it. A read
//!   of a clean base row never touches the delta tables.
//! * **Snapshots.** A global clock: `visible_ts` is the newest commit that new snapshots may see.
//!   A transaction pins the current base (an `Arc`, with `base.ts <= start_ts`) and reads: own
//!   write set, else the newest delta version `<= start_ts`, else its base. Base CSR entries are
//!   filtered by the relationship's visibility (dirty bit fast path); delta adjacency entries
//!   created at or before the transaction's base ts are skipped (its CSR has them). Edge
//!   iteration (`Transaction::for_each_edge`) streams CSR entries to the caller without
//!   allocating, and a `NodeHandle` resolves a node once, so repeated reads of a clean base row
//!   (labels, a property, relationships) touch only the base columns.
//! * **Rebuild (fold).** At every checkpoint (file-backed) or [`Store::compact`] (also triggered
//!   in the background when the delta exceeds ~200 k versions and a quarter of the base), a new
//!   base is built from a read-only snapshot while readers and writers continue, then swapped in
//!   under the commit mutex (an `Arc` swap; old transactions keep their base). The new base's
//!   dirty bits are set for entities with delta versions newer than it.
//! * **GC.** Two horizons: the oldest live snapshot and the oldest base any live transaction
//!   reads. Delta versions at or below the base horizon are dropped (every live base holds
//!   them: a reader that finds no delta version reads a base with the same state), older
//!   versions are pruned as usual, and a final deletion is only dropped once no live base has the
//!   entity. After a rebuild, the whole delta is queued behind a gate that opens when no
//!   transaction reads an older base; then the delta folds away and the delta's label, type and
//!   index sets are purged of rows the base now answers for. GC runs under the commit mutex,
//!   which makes it race-free against installs.
//! * **Commit.** Under one commit mutex: validate write-write conflicts (first committer wins:
//!   an entity written by this transaction whose newest delta version is newer than the
//!   snapshot fails with `TransactionOutdated`; base rows count as old), check unique
//!   constraints against the newest state (delta + current base index), assign the commit ts,
//!   install the versions (invisible until published), and hand the redo record to the single
//!   WAL writer thread. The writer writes a batch, issues one fdatasync for the batch (group
//!   commit), then advances `visible_ts` (commits become visible in ts order and, in `Sync`
//!   mode, only once durable) and acknowledges the waiters. Node counts are short per-label
//!   histories `(ts, count)`, so `count_nodes` is O(log n) at any snapshot.
//! * **Durability.** WAL records are `[len u32][crc32c u32][payload]` (little-endian), the payload
//!   starting with the commit ts and carrying logical full-image redo (put/delete node or
//!   relationship, schema operations, newly created tokens). Checkpoints serialize a snapshot
//!   into `checkpoint-<ts>.arbor` (tmp + fsync + rename + directory fsync) while building the
//!   new base from the same scan, then an atomic `MANIFEST`; covered WAL segments are deleted.
//!   Recovery streams the manifest's checkpoint (1 MiB chunks, CRC checked incrementally)
//!   straight into a base builder (no per-entity objects, nothing versioned) and replays newer
//!   WAL records into the delta; a torn tail is truncated, corruption elsewhere is an error.
//!
//! Not yet (see the design memo §2): segment-local bases (a rebuild is O(graph), so it runs at
//! checkpoints, not per commit), delta-encoded/bitpacked neighbour lists, columnar dense
//! property keys, and a checkpoint format that *is* the base columns (recovery currently
//! re-encodes records into columns).
//!
//! The [`Transaction`] API is the stable boundary; the layout above is private.

mod base;
mod check;
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
pub use check::CheckReport;
pub use schema::{IndexInfo, IndexKind};
pub use store::{MemoryStats, Store};
pub use tx::{NodeHandle, Savepoint, Transaction};
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
