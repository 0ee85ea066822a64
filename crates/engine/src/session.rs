//! Database, sessions, transactions and result streams (API; implementation in progress).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use arbor_exec::graph::Stats;
use arbor_model::{Error, PropertyMap, Result, Status, Value};

/// When a commit is acknowledged relative to its WAL record reaching the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// fsync before success (group commit: concurrent commits share one fsync). The default.
    #[default]
    Sync,
    /// Acknowledge after write(); fsync in the background every few milliseconds.
    Async,
    /// No fsync at all (ephemeral use).
    Off,
}

#[derive(Clone, Debug)]
pub struct DatabaseConfig {
    pub durability: Durability,
    /// Checkpoint when this much time has passed since the last one...
    pub checkpoint_interval: Duration,
    /// ...or when the WAL has grown past this many bytes.
    pub checkpoint_wal_bytes: u64,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            durability: Durability::Sync,
            checkpoint_interval: Duration::from_secs(300),
            checkpoint_wal_bytes: 256 << 20,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AccessMode {
    Read,
    #[default]
    Write,
}

/// Per-transaction settings from Bolt `BEGIN`/`RUN` extras.
#[derive(Clone, Debug, Default)]
pub struct TxConfig {
    pub mode: AccessMode,
    pub timeout: Option<Duration>,
    pub metadata: PropertyMap,
    /// Bookmarks the transaction must see (`"<db>:<commit_ts>"`).
    pub bookmarks: Vec<String>,
    /// Database name; `None`, `"neo4j"` and `"system"` are accepted.
    pub database: Option<String>,
}

/// What `RUN` returns before any record is pulled.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// Column names.
    pub fields: Vec<String>,
    /// Query id within an explicit transaction (`None` in auto-commit).
    pub qid: Option<i64>,
}

/// `r`, `w`, `rw` or `s` as Bolt summaries report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryType {
    Read,
    Write,
    ReadWrite,
    Schema,
}

impl QueryType {
    pub fn code(self) -> &'static str {
        match self {
            QueryType::Read => "r",
            QueryType::Write => "w",
            QueryType::ReadWrite => "rw",
            QueryType::Schema => "s",
        }
    }
}

/// A notification as Neo4j attaches to summaries (e.g. a cartesian product warning).
#[derive(Clone, Debug)]
pub struct Notification {
    pub code: String,
    pub title: String,
    pub description: String,
    pub severity: String,
    /// 1-based line/column and 0-based offset into the query, if it points somewhere.
    pub position: Option<(usize, usize, usize)>,
}

/// What a finished (or discarded) result reports.
#[derive(Clone, Debug)]
pub struct Summary {
    pub stats: Stats,
    pub query_type: QueryType,
    /// Set when an auto-commit transaction committed at the end of this result.
    pub bookmark: Option<String>,
    pub notifications: Vec<Notification>,
    /// Milliseconds from start of execution to the last record.
    pub t_last_ms: u64,
    /// `EXPLAIN`/`PROFILE` plan description as a Bolt-ready map (`operatorType`, `args`,
    /// `identifiers`, `children`, and for PROFILE `rows`, `dbHits`).
    pub plan: Option<Value>,
    pub profiled: bool,
}

/// The result of pulling records.
#[derive(Clone, Debug)]
pub enum PullOutcome {
    /// More records are available.
    HasMore,
    /// The result is exhausted (or discarded).
    Done(Summary),
}

/// An open database.
#[derive(Clone)]
pub struct Database {
    path: Option<PathBuf>,
}

impl Database {
    /// Opens (creating if needed) the database in `path`, recovering from its checkpoint and WAL.
    pub fn open(path: &Path, config: DatabaseConfig) -> Result<Database> {
        let _ = config;
        Ok(Database { path: Some(path.to_path_buf()) })
    }

    /// A database with no files, for tests and embedding.
    pub fn in_memory() -> Database {
        Database { path: None }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Opens a session: a sequence of transactions, one at a time.
    pub fn session(&self) -> Session {
        Session { db: self.clone(), interrupt: Arc::new(AtomicBool::new(false)) }
    }

    /// Writes a checkpoint now.
    pub fn checkpoint(&self) -> Result<()> {
        Ok(())
    }

    /// Checkpoints and stops background work. Further use of sessions fails.
    pub fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    /// The names of the databases this server answers to: `neo4j` (default) and `system`.
    pub fn database_names(&self) -> &'static [&'static str] {
        &["neo4j", "system"]
    }
}

/// A session: at most one open transaction, explicit or auto-commit. Not thread-safe; one per
/// connection.
pub struct Session {
    db: Database,
    interrupt: Arc<AtomicBool>,
}

impl Session {
    /// Starts an explicit transaction.
    pub fn begin(&mut self, config: TxConfig) -> Result<()> {
        let _ = (config, &self.db);
        Err(Error::new(Status::Internal, "not built yet"))
    }

    /// Runs a query: inside the explicit transaction if one is open, otherwise in a new
    /// auto-commit transaction that commits when its result is exhausted. Compile errors are
    /// returned here; runtime errors may surface on `pull`.
    pub fn run(&mut self, query: &str, params: PropertyMap, config: TxConfig) -> Result<RunInfo> {
        let _ = (query, params, config);
        Err(Error::new(Status::Internal, "not built yet"))
    }

    /// Produces at most `n` records (`n < 0`: all) of the result `qid` (`None`/`-1`: the last one
    /// run) into `sink`. Never computes more than `n` records ahead.
    pub fn pull(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<PullOutcome> {
        let _ = (qid, n, sink);
        Err(Error::new(Status::Internal, "not built yet"))
    }

    /// Discards `n` records (`n < 0`: all) of result `qid`.
    pub fn discard(&mut self, qid: Option<i64>, n: i64) -> Result<PullOutcome> {
        let _ = (qid, n);
        Err(Error::new(Status::Internal, "not built yet"))
    }

    /// Commits the explicit transaction; returns its bookmark.
    pub fn commit(&mut self) -> Result<String> {
        Err(Error::new(Status::Internal, "not built yet"))
    }

    /// Rolls the explicit transaction back.
    pub fn rollback(&mut self) -> Result<()> {
        Ok(())
    }

    /// Drops every open result and rolls back any open transaction (Bolt `RESET`).
    pub fn reset(&mut self) {}

    pub fn in_transaction(&self) -> bool {
        false
    }

    /// A flag another thread can set to interrupt the running query (Bolt `RESET` while
    /// streaming). The query fails with `TransactionTerminated`; the session clears the flag
    /// on `reset`.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }
}
