//! [`Persist`]: the configuration and shared state of a file-backed store (file system,
//! directory, WAL bookkeeping, the checkpoint lock), held by the store handle and handed to
//! checkpoints, recovery and the check, and the page cache of segment files; the MVCC core
//! never holds it.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use super::wal::WalShared;
use crate::pager::Pager;
use crate::types::StoreConfig;
use crate::vfs::Vfs;

/// File-backed configuration and state.
pub(crate) struct Persist {
    pub vfs: Arc<dyn Vfs>,
    /// Opened by [`Store::open_read_only`]: nothing in `dir` is ever written.
    pub read_only: bool,
    pub dir: PathBuf,
    pub config: StoreConfig,
    pub wal: Arc<WalShared>,
    /// Serializes checkpoints; holds the ts of the last one.
    pub checkpoint_lock: Mutex<u64>,
    pub last_checkpoint_at: Mutex<Instant>,
    /// Recovery replayed log records that no checkpoint holds yet: the maintenance thread
    /// takes that checkpoint (`resync.rs`). When the replayed log tail could not be made
    /// durable either (a full disk), commits are refused (the clock is paused) until then.
    pub recovery_checkpoint: AtomicBool,
    /// The page cache and the current checkpoint's segment.
    pub pager: Pager,
    /// Where recent backup snapshots cut the log (`snapshot.rs`).
    pub backup_marks: super::snapshot_marks::Marks,
    /// Held by a promotion of the lazily opened base (`promote.rs`): one at a time.
    pub promote_lock: Mutex<()>,
}
