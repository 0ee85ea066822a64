//! Opening a [`Database`]: the store, then the registries it holds (full-text indexes,
//! procedures), then the procedures that need the database itself, installed from here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arbor_model::Result;
use arbor_storage::{Store, StoreConfig};
use parking_lot::Mutex;

use super::database::DbInner;
use super::{Database, DatabaseConfig, Durability};

impl Database {
    /// Opens (creating if needed) the database in `path`, recovering from its checkpoint and WAL.
    pub fn open(path: &Path, config: DatabaseConfig) -> Result<Database> {
        let store_config = StoreConfig {
            durability: match config.durability {
                Durability::Sync => arbor_storage::Durability::Sync,
                Durability::Async => arbor_storage::Durability::Async,
                Durability::Off => arbor_storage::Durability::Off,
            },
            checkpoint_interval: config.checkpoint_interval,
            checkpoint_wal_bytes: config.checkpoint_wal_bytes,
            memory_limit: config.memory_limit,
            ..StoreConfig::default()
        };
        let store = Store::open(path, store_config)?;
        let fulltext = crate::fulltext::Registry::open(Some(path))?; // [fulltext hook]
        Ok(Database::with_store(store, Some(path.to_path_buf()), fulltext))
    }

    /// Opens the database in `path` for reading only (`arbor check`): recovery happens in
    /// memory, nothing in the directory is written, and writes fail.
    pub fn open_read_only(path: &Path) -> Result<Database> {
        let store = Store::open_read_only(path)?;
        let fulltext = crate::fulltext::Registry::open(Some(path))?; // [fulltext hook]
        Ok(Database::with_store(store, Some(path.to_path_buf()), fulltext))
    }

    /// A database with no files, for tests and embedding.
    pub fn in_memory() -> Database {
        Database::with_store(Store::in_memory(), None, crate::fulltext::Registry::in_memory())
    }

    fn with_store(
        store: Store,
        path: Option<PathBuf>,
        fulltext: crate::fulltext::Registry,
    ) -> Database {
        let fulltext = crate::fulltext::Registry::attached(fulltext, &store); // [fulltext hook]
        let procedures =
            crate::proc_registry::Procedures::for_path(path.as_deref(), fulltext.clone());
        let lookups = crate::show_indexes::Lookups::open(path.as_deref());
        let db = Database {
            inner: Arc::new(DbInner {
                store,
                lookups,
                path,
                plans: Mutex::new(HashMap::new()),
                closed: AtomicBool::new(false),
                procedures, // [procedures hook]
                fulltext,   // [fulltext hook]
                traversal_pool: Default::default(),
                deadlines: Default::default(),
                users: parking_lot::RwLock::new(arbor_auth::UserStore::in_memory()),
                tx_timeout_ms: Default::default(),
                import_dir: parking_lot::RwLock::new(None),
                memory: Default::default(),
            }),
        };
        crate::procedures::install_test_hooks(&db); // [procedures hook]
        db
    }
}
