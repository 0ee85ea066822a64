//! Arbor's storage engine: an in-memory, multi-versioned property graph with snapshot isolation,
//! a compact columnar base under a small versioned delta, a redo-only write-ahead log with group
//! commit, checkpoints and crash recovery.
//!
//! # Layers
//!
//! The folders are the layers; a file imports only from its own layer or lower ones, and no
//! two files import each other (`farm-studio look crates/storage` draws it: no circle).
//!
//! | layer | files | holds |
//! |---|---|---|
//! | store | `store.rs` | [`Store`]: open (with recovery), schema operations, maintenance thread, shutdown |
//! | durability | `durability/` | `wal` (log writer and reader), `wal_group` (group commit led by committers, the writer thread, the commit sink), `checkpoint` (+ manifest, load), `recovery`, `bulk` (importer's checkpoint writer), `check`, `persist` (file-backed state) |
//! | multi-version | `mvcc/` | `versions` (chains, sharded tables), `tokens`, `counts`, `sink` (the `CommitSink` seam), `state` (`Core`), `gc`, `violations`, `schema_ops`, `tx` + `tx_read`/`tx_index`/`tx_write`/`tx_commit` ([`Transaction`], [`NodeHandle`]) |
//! | pager | `pager/` | `pool` (the buffer pool: fixed budget, `pread` misses, clock eviction, pins; the only `unsafe`), `segment` (page-aligned, checksummed column files) |
//! | base | `base/` | `columns` (packed ints, bitsets), `props` (blobs, interning), `adjacency` (CSR decoding), `index`, `graph` (the `Base` and its reads), `builder` |
//! | bottom | `records`, `types`, `clock`, `codec`, `value`, `idset`, `schema`, `invariant`, `vfs`, `simfs` | record types, public vocabulary, the commit clock, encodings, index keys, id sets, schema rules, assertions, the file-system seam |
//!
//! What is deliberately absent: the multi-version core does not own durability. `Core` holds
//! no file, log or configuration; commit hands its redo record to a `CommitSink` that the store
//! plugs in (the WAL writer's queue) and waits on the returned `Ticket`. Checkpoints, recovery
//! and the check get the file-backed state (`Persist`) from the store handle. `Core`'s fields
//! are private to `mvcc/`; the layers above use its methods.
//!
//! Invariants are asserted where they are relied on (`invariant!`, on in debug builds and in
//! this crate's tests): the clock's watermark order (visible <= durable, applied), version
//! chains sorted by commit ts and installs above the base, CSR offsets monotonic, log records
//! appended in ts order, and pair assertions before anything goes to disk (a WAL record parses
//! back to what was framed, a checkpoint record decodes and re-encodes to the same bytes). On
//! the way back in, lengths and CRCs (WAL records, checkpoint chunks, the manifest) and the
//! decoder's bounds checks are the other half: bad bytes are `Corruption`, never a panic.
//!
//! # Design
//!
//! Committed data lives in two layers: a compact, immutable **base** (everything committed up
//! to the base timestamp, see `base/`) and a small versioned **delta** (what was written
//! since). Readers consult the delta first and fall back to the base.
//!
//! * **Base** (`base/`). Dense integer columns, each stored as a constant, an arithmetic
//!   sequence or the narrowest of u8/u16/u32/u64: per node a label-set code into a dictionary of
//!   label sets (code 0 = no node) and per-label bitsets for scans; node and relationship
//!   properties as typed, packed blobs (`varint(key << 3 | tag)` + value; zig-zag varint ints,
//!   strings interned where repetition pays) in one arena with per-entity offsets; relationships
//!   as CSR in both directions (offsets per node + neighbour, relationship id and type per
//!   entry) plus a relationship id -> forward position column (start node by binary search over
//!   the offsets, end and type read at that position). Relationships bulk-created in start-node
//!   order have identity id columns, which cost nothing; one relationship type costs nothing per
//!   entry. Node indexes: `hash(key) << 32 | node id`, sorted (8 bytes per entry) for equality
//!   seeks, plus, built lazily at the first range/prefix seek, the ids sorted by key value
//!   (8 bytes per entry, binary-searched by decoding the keyed property). Measured on synthetic
//!   Pokec: ~12.6 bytes per relationship (both directions), ~3.4 per property (see
//!   `BENCHMARKS.md`, section Memory).
//! * **Delta** (`mvcc/`). Sparse sharded hash tables `id -> slot` holding only entities
//!   written since the base was built: a version chain `Vec<(commit_ts, Option<Arc<Data>>)>`
//!   (`None` = deletion, also of a base row) and, for nodes, append-only lists of relationships
//!   created since the base (`(rel, other, type, creating ts)`), so creating relationships on
//!   one node never conflicts. Label/type id sets and index maps of the delta are unversioned
//!   supersets; readers re-check.
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
//!   (labels, a property, relationships) touch only the base columns. While no base
//!   relationship has a delta version (one flag) and the transaction wrote none, the
//!   relationships of a clean node are its CSR range as it is: no per-entry visibility check,
//!   and each column's representation is chosen once per node, not once per entry
//!   (`NodeHandle::edges_into` appends them to the caller's vector through loops specialised
//!   for the usual representations; `for_each_edge` decodes the columns a chunk at a time).
//! * **Rebuild (fold).** At every checkpoint (file-backed) or [`Store::compact`] (also triggered
//!   in the background when the delta exceeds ~200 k versions and half the base; that fold
//!   writes no checkpoint file, checkpoints follow the log size and the interval), a new
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
//!   constraints against the newest state (delta + current base index) and existence/node-key
//!   constraints on the written nodes, compute relationship-count changes, assign the commit ts,
//!   install the versions (invisible until published), and hand the redo record to the
//!   commit sink (`mvcc/sink.rs`; for a file-backed store the single WAL writer thread). The writer writes a batch, issues one fdatasync for the batch (group
//!   commit), then advances `visible_ts` (commits become visible in ts order and, in `Sync`
//!   mode, only once durable) and acknowledges the waiters.
//! * **Count store.** Node counts (total, per label) and relationship counts per
//!   `(start label | any, type | any, end label | any)` (at most one label) are short histories
//!   `(ts, count)`, so a count at any snapshot is a binary search. Relationship counts change
//!   at commit (`Core::rel_count_delta`, from the newest state before the install): created
//!   relationships count with their endpoints' new labels, deleted ones with the old, and a
//!   node gaining or losing labels moves its surviving relationships between keys (O(degree)).
//!   Recovery recomputes relationship counts from the loaded base. A transaction with own
//!   writes gets `None` from `count_rels` (callers count by scanning).
//! * **Schema** (`schema.rs`). Rules on a label (or relationship type) and one or more
//!   property keys: plain indexes (`RANGE`), uniqueness, key (unique + required) and existence
//!   constraints, on nodes and on relationships. Index keys (`value.rs`) normalize Cypher
//!   equality (`1 == 1.0`) and
//!   order within a type the way Cypher compares (numbers across Int/Float, strings by code
//!   point, temporals chronologically), so one ordered map answers equality, range, prefix and
//!   `IN`; a composite key is the list of its values' keys (all present). Node index data lives
//!   in the delta (`BTreeMap<key, ids>` per target, every retained version's key) and the base
//!   (above); relationship indexes (plain or backing a constraint) live only in the delta
//!   (`rel_maps`, the same ordered maps, complete, pruned by relationship GC). Seeks return
//!   exact, id-ordered results: delta ∪ base candidates ∪ this transaction's own writes,
//!   re-checked against the snapshot. One index-backed rule per schema, as in Neo4j: an index
//!   next to a uniqueness/key constraint (`ConstraintAlreadyExists`), a constraint next to an
//!   index (`IndexAlreadyExists`), a key next to a uniqueness constraint are refused. Unique
//!   keys are checked when a statement writes them (against the snapshot and own writes) and
//!   again at commit against the newest committed state, under the commit mutex, so concurrent
//!   transactions cannot both insert a key. Schema changes are WAL records
//!   ordered with data commits under the commit mutex. Constraints are validated against all
//!   data before they are logged (`ConstraintCreationFailed`, the rule removed): installed
//!   and enforced on commits under the mutex, their index filled and the data checked by the
//!   creating thread without it (writers go on), then under the mutex again the keys the
//!   complete index holds more than once are re-checked (a duplicate of an existing row can
//!   slip past a commit while the index fills) and the record is logged; until then
//!   checkpoints leave the rule out. A plain index (node or relationship) on existing data
//!   starts `POPULATING`: its (empty) map is installed at once, so later commits add their
//!   entries, and a thread registered as a reader (pinning what it scans) adds the existing
//!   rows, then flips it `ONLINE`; seeks ignore it until then. Recovery and checkpoint loading
//!   build every index synchronously, so a crash during population recovers a complete index.
//! * **Durability.** WAL records are `[len u32][crc32c u32][payload]` (little-endian), the payload
//!   starting with the commit ts and the durability watermark (see `durability/wal.rs`), then logical
//!   full-image redo (put/delete node or
//!   relationship, schema operations, newly created tokens). Checkpoints serialize a snapshot
//!   into `checkpoint-<ts>.arbor` (tmp + fsync + rename + directory fsync) while building the
//!   new base from the same scan, then an atomic `MANIFEST`; covered WAL segments are deleted.
//!   Recovery streams the manifest's checkpoint (1 MiB chunks, CRC checked incrementally)
//!   straight into a base builder (no per-entity objects, nothing versioned) and replays newer
//!   WAL records into the delta; a torn unsynced tail (even one with a hole) is truncated,
//!   damage to a record declared durable is an error.
//!   Commit timestamps in the log are dense, so a gap (a lost segment) is an error too;
//!   segments wholly covered by the checkpoint are not read (their deletion is not fsynced).
//!   If anything was replayed, a writable open then takes a checkpoint and starts a fresh
//!   segment before accepting commits (see *Failure rules*). [`Store::open_read_only`] (for
//!   `arbor check`) recovers in memory and writes nothing: no truncation, no segment, no
//!   checkpoint, a shared lock.
//! * **File system seam** (`vfs.rs`). All file I/O goes through [`Vfs`] (`Arc<dyn Vfs>`; the
//!   WAL writes a batch per call, checkpoints go through a 1 MiB buffer, so dynamic dispatch
//!   costs nothing measurable). [`RealFs`] is `std::fs`; [`Store::open_with_vfs`] takes another.
//!
//! # Failure rules
//!
//! Learned from the fault tests (`fault_tests.rs` over the page-cache model in `simfs.rs`:
//! crashes keeping a random prefix of unsynced writes with a torn last one, unsynced directory
//! entries lost, failing fsyncs that drop the dirty data for good, `ENOSPC` after a partial
//! write, failing renames and directory fsyncs, faults during recovery, and process restarts
//! without power loss):
//!
//! * **A failed log write or fsync is final** (Linux drops the dirty pages and marks them clean
//!   after a failed fsync, so a retry "succeeds" without the data): the waiting commits fail,
//!   the clock is marked failed, and every later commit and schema change fails until the store
//!   is reopened. This includes the `Async` writer's idle-timer fsync, whose error used to be
//!   ignored (and the fsync retried).
//! * **Recovery checkpoints what it replayed.** After such a failure the process may restart
//!   while the machine stays up; recovery then reads the page cache, which still shows pages
//!   the disk lost. Commits acknowledged after the restart build on that state, yet a power
//!   loss would have dropped the replayed part under them (found by the tests: acknowledged
//!   commits on top of a hole). Checkpointing the replayed state into a new, fsynced file
//!   fixes it; it costs one checkpoint per open after a crash (a clean close leaves nothing
//!   to replay).
//! * **A new process never appends to an old segment.** A segment whose directory entry never
//!   became durable (the creating process crashed before, or failed, the directory fsync) is
//!   still listed by the restarted process; appending acknowledged commits to it lost them at
//!   the next power loss (found by the tests). The writer always starts a new segment, replacing
//!   a leftover of that name (which holds no valid record by construction), and fsyncs the
//!   directory.
//! * **A failed directory fsync is final too** (`vfs::StickyDirSync`): it may have dropped an
//!   entry change made by another thread, such as the checkpoint's rename pending while the log
//!   writer's fsync of a new segment's entry failed, and a later fsync on a fresh descriptor
//!   then succeeds without it. The checkpoint went on to publish a manifest naming a file whose
//!   entry never reached the disk (found by the tests: a store that no longer opens). Every
//!   later directory fsync of that store now fails, so no manifest is written after it.
//! * **A rebuild's snapshot stays registered until its base is installed.** Dropping it right
//!   after the scan let GC prune the whole version chain of a node created before and deleted
//!   after the snapshot (the current base lacking it); the installed base had the node and no
//!   dirty bit for it, so the deleted node came back, and the next checkpoint made that
//!   durable (found by the tests under load: a deleted node present after recovery).
//! * Also found by the tests, not a durability rule: creating an index after a rebuild missed
//!   the newer delta versions of nodes whose label was already in the base.
//! * Not handled: a crash that persists the pages of the last unsynced batch out of order
//!   (a hole followed by a valid record) makes recovery report corruption rather than cut the
//!   tail, because it cannot tell that from damage to acknowledged data; the store then does
//!   not open until the operator decides. The model only persists unsynced writes in order.
//!
//! Not yet (see the design memo §2): segment-local bases (a rebuild is O(graph), so it runs at
//! checkpoints, not per commit), delta-encoded/bitpacked neighbour lists, columnar dense
//! property keys, and a checkpoint format that *is* the base columns (recovery currently
//! re-encodes records into columns).
//!
//! The [`Transaction`] API is the stable boundary; the layout above is private.

// Layers, lowest first; a file imports only from its own layer or lower ones.
// Bottom: records and vocabulary.
#[macro_use]
mod invariant;
mod clock;
mod codec;
mod idset;
pub mod metrics;
mod point_index;
mod progress;
mod records;
mod release;
mod schema;
mod text_index;
mod types;
mod value;
mod vector;
pub mod vfs;
mod zorder;
// The immutable base, the multi-version delta with transactions, durability, the store API.
mod base;
mod durability;
mod mvcc;
mod pager;
mod store;

pub use durability::bulk;
pub use durability::snapshot::{BackupSnapshot, Since, SnapshotFile};
pub use durability::warm_pool::WarmUp;

#[cfg(test)]
mod base_tests;
#[cfg(test)]
mod complete_segment_tests;
#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod index_part_tests;
#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod paged_props_tests;
#[cfg(test)]
mod paged_test_util;
#[cfg(test)]
mod paged_tests;
#[cfg(test)]
mod part_file_tests;
#[cfg(test)]
mod replay_schema_tests;
#[cfg(test)]
mod segment_tests;
#[cfg(test)]
mod simfs;
#[cfg(test)]
mod streamed_segment_tests;
#[cfg(test)]
mod tests;

pub use base::BaseStats;
pub use mvcc::{
    CommitChanges, CommitObserver, EntityVersion, NodeHandle, Savepoint, Transaction, VectorEntity,
};
pub use pager::default_memory_limit;
pub use pager::pool::{MemFile, PageFile, PoolStats};
pub use point_index::PointQuery;
pub use release::set_memory_release_hook;
pub use schema::{IndexInfo, IndexKind, PropertyTypes, POINT_SETTINGS};
pub use store::{MemoryStats, Store};
pub use value::check_storable;
pub use vector::{VectorSettings, VectorSimilarity};
pub use vfs::{RealFs, Vfs, VfsFile, VfsRead};

pub use arbor_model::{Error, NodeId, RelId, Result, Status, Value};
pub use types::{Direction, Durability, Edge, StoreConfig, TokenId, TokenKind};
