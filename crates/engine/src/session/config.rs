//! The public settings and summaries of databases, transactions and results.

use std::time::Duration;

use arbor_exec::graph::Stats;
use arbor_model::{PropertyMap, Value};

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
    /// The page cache's budget in bytes (`--memory-limit`); `None`: half of the machine's
    /// memory.
    pub memory_limit: Option<u64>,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            durability: Durability::Sync,
            checkpoint_interval: Duration::from_secs(300),
            checkpoint_wal_bytes: 256 << 20,
            memory_limit: None,
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
    /// The GQLSTATUS code Bolt 5.6+ clients receive (`03N90` for a cartesian product).
    pub gql_status: String,
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

/// The logged-in user of a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurrentUser {
    pub name: String,
    /// Fixed at login, as in Neo4j: until the user logs in again after `ALTER CURRENT USER`,
    /// the session may run nothing else.
    pub password_change_required: bool,
}

/// The update counters of `s` under the names Neo4j gives them in a result summary
/// (`nodes-created`, ...), in Neo4j's order, zeros included (the Bolt server and the shell
/// both list them).
pub fn update_counters(s: &Stats) -> [(&'static str, u64); 11] {
    [
        ("nodes-created", s.nodes_created),
        ("nodes-deleted", s.nodes_deleted),
        ("relationships-created", s.relationships_created),
        ("relationships-deleted", s.relationships_deleted),
        ("properties-set", s.properties_set),
        ("labels-added", s.labels_added),
        ("labels-removed", s.labels_removed),
        ("indexes-added", s.indexes_added),
        ("indexes-removed", s.indexes_removed),
        ("constraints-added", s.constraints_added),
        ("constraints-removed", s.constraints_removed),
    ]
}
