//! The durability layer: the write-ahead log and its writer thread (`wal`), checkpoints, the
//! manifest and loading them (`checkpoint`), recovery (`recovery`), the bulk checkpoint writer
//! of the importer (`bulk`) and the offline/online consistency check (`check`).
//!
//! It sits on top of the multi-version layer: it plugs the WAL writer into commit as a
//! [`crate::mvcc::CommitSink`] and reads snapshots through [`crate::mvcc::Transaction`]; the
//! layers below never import it. Everything read from disk is input: lengths and checksums
//! are verified and bad bytes are `Corruption` errors, never panics.
//!
//! Files, lowest first: `persist` (the file-backed configuration), `wal`, `wal_group` (group
//! commit: committers lead the log writes in `sync` mode; the writer thread),
//! `checkpoint_segments` (the segment file of a checkpoint), `checkpoint`,
//! `recovery`, `resync` (the replayed log tail made durable without a checkpoint),
//! `populate_replayed` (the index rules recovery installed, filled after the open),
//! `warm_pool` (warm-up: the promotion, then the page cache filled in query order),
//! `promote` (the in-memory base that replaces a lazily opened one), `bulk`,
//! `check`, `snapshot` (the file set a backup copies).

pub mod bulk;
pub(crate) mod check;
pub(crate) mod checkpoint;
pub(crate) mod checkpoint_segments;
pub(crate) mod persist;
pub(crate) mod populate_replayed;
pub(crate) mod promote;
pub(crate) mod recovery;
pub(crate) mod resync;
pub mod snapshot;
mod snapshot_marks;
pub(crate) mod wal;
pub(crate) mod wal_group;
pub(crate) mod warm_pool;
