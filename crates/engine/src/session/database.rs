//! [`Database`]: the shared handle to one store, its plan cache, procedures, users, deadlines
//! and memory pool.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arbor_exec::PreparedQuery;
use arbor_model::{Error, Result, Status};
use arbor_storage::Store;
use parking_lot::Mutex;

use super::Notification;

/// A cached plan with the notifications Neo4j would attach to it.
type CachedPlan = (Arc<PreparedQuery>, Arc<[Notification]>);

/// Plans kept per query text; drivers send the same parameterised text many times.
pub(super) const PLAN_CACHE_MAX: usize = 1000;

pub(crate) struct DbInner {
    pub(crate) store: Store,
    pub(super) path: Option<PathBuf>,
    pub(super) plans: Mutex<HashMap<String, CachedPlan>>,
    pub(super) closed: AtomicBool,
    // [procedures hook] registry consulted by `prepare` (see procedures.rs).
    pub(super) procedures: crate::proc_registry::Procedures,
    /// Reused memory of embedded traversals (see `traversal::WorkspacePool`).
    pub(super) traversal_pool: crate::traversal::WorkspacePool,
    /// Raises interrupt flags of transactions past their timeout.
    pub(super) deadlines: crate::deadline::Deadlines,
    /// The users Cypher administration commands manage (see users.rs).
    pub(super) users: parking_lot::RwLock<arbor_auth::UserStore>,
    /// The server-wide transaction timeout (`db.transaction.timeout`) in milliseconds, 0 for
    /// none.
    pub(super) tx_timeout_ms: std::sync::atomic::AtomicU64,
    /// Where `LOAD CSV` finds `file:///` URLs, when set (see [`Database::import_dir`]).
    pub(super) import_dir: parking_lot::RwLock<Option<Arc<Path>>>,
    /// Query memory limits (see memory_limits.rs).
    pub(super) memory: Arc<crate::memory_limits::MemoryPool>,
    /// FULLTEXT index definitions (see fulltext.rs).
    pub(super) fulltext: Arc<crate::fulltext::Registry>,
    /// Which LOOKUP indexes exist (see show_indexes.rs).
    pub(super) lookups: crate::show_indexes::Lookups,
}

/// An open database. Cheap to clone; all clones share one store.
#[derive(Clone)]
pub struct Database {
    pub(super) inner: Arc<DbInner>,
}

impl Database {
    pub(crate) fn traversal_pool(&self) -> &crate::traversal::WorkspacePool {
        &self.inner.traversal_pool
    }

    /// Sets the server-wide transaction timeout (Neo4j's `db.transaction.timeout`;
    /// `Duration::ZERO`: none) for transactions started from now on. A driver's smaller
    /// timeout wins.
    pub fn set_transaction_timeout(&self, timeout: Duration) {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self.inner.tx_timeout_ms.store(ms, Ordering::Relaxed);
    }

    /// Sets the directory `LOAD CSV` resolves `file:///` URLs in (Neo4j's
    /// `server.directories.import`); files outside it cannot be read.
    pub fn set_import_dir(&self, dir: &Path) {
        *self.inner.import_dir.write() = Some(Arc::from(dir));
    }

    /// The directory `LOAD CSV` reads from: the one set, else `<data>/import`; `None` for an
    /// in-memory database without one (then `LOAD CSV` of a file fails).
    pub fn import_dir(&self) -> Option<Arc<Path>> {
        if let Some(dir) = &*self.inner.import_dir.read() {
            return Some(dir.clone());
        }
        self.inner.path.as_deref().map(|p| Arc::from(p.join("import")))
    }

    /// Sets the query memory limits in bytes (0: none): `db.memory.transaction.total.max` for
    /// all transactions together and `db.memory.transaction.max` for each, for transactions
    /// started from now on. Counted only where the accounting allocator is installed (see
    /// `memory_limits`), apart from explicit checks before large allocations.
    pub fn set_memory_limits(&self, pool: u64, transaction: u64) {
        self.inner.memory.set_limits(pool, transaction);
    }

    /// The pool transactions reserve memory from (limits, bytes in use, peak).
    pub fn memory_pool(&self) -> &crate::memory_limits::MemoryPool {
        &self.inner.memory
    }

    /// Query memory and page-cache figures for the metrics page (`metrics::render`).
    pub fn gauges(&self) -> crate::metrics::Gauges {
        let pool = self.memory_pool();
        crate::metrics::Gauges {
            pool_used: pool.used(),
            pool_limit: pool.limit(),
            page_cache: self.store().page_cache_stats().map(|pc| (pc.hits, pc.misses)),
        }
    }

    /// The server-wide transaction timeout, if one is set.
    pub fn transaction_timeout(&self) -> Option<Duration> {
        match self.inner.tx_timeout_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    pub(crate) fn inner_users(&self) -> &parking_lot::RwLock<arbor_auth::UserStore> {
        &self.inner.users
    }

    pub(crate) fn transactions(&self) -> &crate::txinfo::Registry {
        self.inner.deadlines.transactions()
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The FULLTEXT index definitions.
    pub(crate) fn lookups(&self) -> &crate::show_indexes::Lookups {
        &self.inner.lookups
    }

    pub(crate) fn fulltext(&self) -> &crate::fulltext::Registry {
        &self.inner.fulltext
    }

    /// Verifies the store: checkpoint and WAL checksums, adjacency symmetry, counts, index
    /// consistency. Inconsistencies are listed in the report; `Err` only when the check itself
    /// could not run.
    pub fn check(&self) -> Result<arbor_model::CheckReport> {
        self.inner.store.check()
    }

    /// Writes a checkpoint now.
    pub fn checkpoint(&self) -> Result<()> {
        self.inner.store.checkpoint()
    }

    /// Checkpoints and stops background work. Further use of sessions fails.
    pub fn shutdown(&self) -> Result<()> {
        if self.inner.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.inner.store.close()
    }

    /// Simulates a crash for tests (`arbor-testkit`): stops background work and releases the
    /// directory without a checkpoint, leaving the files as a killed process would.
    #[doc(hidden)]
    pub fn crash_for_test(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.store.crash_for_test();
    }

    /// The names of the databases this server answers to: `neo4j` (default) and `system`.
    pub fn database_names(&self) -> &'static [&'static str] {
        &["neo4j", "system"]
    }

    // [procedures hook] accessors for procedures.rs.
    pub(crate) fn procedures_registry(&self) -> &crate::proc_registry::Procedures {
        &self.inner.procedures
    }

    pub(crate) fn clear_plan_cache(&self) {
        self.inner.plans.lock().clear();
    }

    /// A handle that does not keep the database alive (for procedures registered on it).
    pub(crate) fn downgrade(&self) -> std::sync::Weak<DbInner> {
        Arc::downgrade(&self.inner)
    }

    pub(crate) fn upgrade(weak: &std::sync::Weak<DbInner>) -> Option<Database> {
        weak.upgrade().map(|inner| Database { inner })
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(Error::new(
                Status::TransactionTerminated,
                "the database has been shut down",
            ));
        }
        Ok(())
    }
}

impl Database {
    /// Bytes the store's base columns hold in memory now (the store's share of the budget).
    pub fn store_memory_bytes(&self) -> u64 {
        let b = self.store().memory_stats().base;
        b.node_bytes
            + b.node_property_bytes
            + b.rel_bytes
            + b.rel_property_bytes
            + b.index_bytes
            + b.interned_strings
    }
}
