//! Database, sessions, transactions and result streams.
//!
//! A [`Session`] holds at most one explicit transaction (with any number of open results,
//! addressed by `qid`) or one auto-commit result. Results are lazy: rows are computed only when
//! pulled, so `PULL n` never computes more than `n` rows ahead. An auto-commit transaction commits
//! when its result is exhausted or discarded; any error rolls the whole transaction back.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_cypher_syntax::ast::Statement;
use arbor_exec::graph::Stats;
use arbor_exec::{Execution, PreparedQuery};
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use arbor_storage::{Store, StoreConfig, Transaction};
use parking_lot::Mutex;

use crate::graph_impl::TxGraph;
use crate::schema;

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

/// A cached plan with the notifications Neo4j would attach to it.
type CachedPlan = (Arc<PreparedQuery>, Arc<[Notification]>);

/// Plans kept per query text; drivers send the same parameterised text many times.
const PLAN_CACHE_MAX: usize = 1000;

pub(crate) struct DbInner {
    pub(crate) store: Store,
    path: Option<PathBuf>,
    plans: Mutex<HashMap<String, CachedPlan>>,
    closed: AtomicBool,
    // [procedures hook] registry consulted by `prepare` (see procedures.rs).
    procedures: crate::procedures::Procedures,
    /// Reused memory of embedded traversals (see `traversal::WorkspacePool`).
    traversal_pool: crate::traversal::WorkspacePool,
    /// Raises interrupt flags of transactions past their timeout.
    deadlines: crate::deadline::Deadlines,
    /// The users Cypher administration commands manage (see users.rs).
    users: parking_lot::RwLock<arbor_auth::UserStore>,
    /// The server-wide transaction timeout (`db.transaction.timeout`) in milliseconds, 0 for
    /// none.
    tx_timeout_ms: std::sync::atomic::AtomicU64,
    /// Where `LOAD CSV` finds `file:///` URLs, when set (see [`Database::import_dir`]).
    import_dir: parking_lot::RwLock<Option<Arc<Path>>>,
    /// Query memory limits (see memory_limits.rs).
    memory: Arc<crate::memory_limits::MemoryPool>,
    /// FULLTEXT index definitions (see fulltext.rs).
    fulltext: Arc<crate::fulltext::Registry>,
}

/// An open database. Cheap to clone; all clones share one store.
#[derive(Clone)]
pub struct Database {
    inner: Arc<DbInner>,
}

impl Database {
    pub(crate) fn traversal_pool(&self) -> &crate::traversal::WorkspacePool {
        &self.inner.traversal_pool
    }

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
        let fulltext = Arc::new(fulltext); // [fulltext hook]
        let procedures = crate::procedures::Procedures::for_path(path.as_deref(), fulltext.clone());
        let db = Database {
            inner: Arc::new(DbInner {
                store,
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
    pub(crate) fn fulltext(&self) -> &crate::fulltext::Registry {
        &self.inner.fulltext
    }

    /// Opens a session: a sequence of transactions, one at a time.
    pub fn session(&self) -> Session {
        let interrupt = Arc::new(AtomicBool::new(false));
        Session {
            db: self.clone(),
            tx_meta: self.inner.deadlines.transactions().register(interrupt.clone()),
            interrupt,
            explicit: None,
            auto: None,
            timer: None,
            server_deadline: false,
            auto_mode: AccessMode::Write,
            user: None,
            mem: None,
            obs: Default::default(),
        }
    }

    /// Verifies the store: checkpoint and WAL checksums, adjacency symmetry, counts, index
    /// consistency. Inconsistencies are listed in the report; `Err` only when the check itself
    /// could not run.
    pub fn check(&self) -> Result<crate::CheckReport> {
        self.inner.store.check().map(Into::into)
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

    /// Parses and plans `text`, or returns the cached plan.
    pub(crate) fn prepare(&self, text: &str) -> Result<Prepared> {
        if let Some((p, n)) = self.inner.plans.lock().get(text) {
            return Ok(Prepared::Query(p.clone(), n.clone()));
        }
        let (stmt, graph) = arbor_cypher_syntax::parse_with_graph(text)?;
        if let Some(graph) = graph {
            check_graph(&graph, &stmt, text)?;
        }
        match stmt {
            // Neo4j plans these without running them: no rows, the command's query type.
            Statement::Explain(inner)
                if matches!(*inner, Statement::Schema(_) | Statement::Admin(_)) =>
            {
                Ok(Prepared::Explained(QueryType::Schema))
            }
            Statement::Explain(inner) if matches!(*inner, Statement::Show(_)) => {
                Ok(Prepared::Explained(QueryType::Read))
            }
            Statement::Schema(cmd) => Ok(Prepared::Schema(cmd)),
            Statement::Show(cmd) => Ok(Prepared::Show(cmd)),
            Statement::Admin(cmd) => Ok(Prepared::Admin(cmd)),
            other if crate::users::is_show_current_user_call(&other) => {
                Ok(Prepared::ShowCurrentUserCall)
            }
            other => {
                // [procedures hook] resolve CALLs against this database's registry.
                let procs = self.inner.procedures.snapshot();
                let indexed = self.indexed_names();
                let rel_indexed = self.rel_indexed_names();
                let rel_indexes_on = |t: &str| {
                    rel_indexed
                        .iter()
                        .filter(|(it, _)| it.as_str() == t)
                        .map(|(_, ks)| ks.clone())
                        .collect()
                };
                let indexes_on = |l: &str| {
                    indexed
                        .iter()
                        .filter(|(il, _)| il.as_str() == l)
                        .map(|(_, ks)| ks.clone())
                        .collect()
                };
                let prepared = Arc::new(PreparedQuery::prepare_with_indexes(
                    &other,
                    text,
                    &procs,
                    &indexes_on,
                    &rel_indexes_on,
                )?);
                let notes: Arc<[Notification]> = query_notifications(&other).into();
                let mut plans = self.inner.plans.lock();
                if plans.len() >= PLAN_CACHE_MAX {
                    plans.clear();
                }
                plans.insert(text.to_string(), (prepared.clone(), notes.clone()));
                Ok(Prepared::Query(prepared, notes))
            }
        }
    }

    // [procedures hook] accessors for procedures.rs.
    pub(crate) fn procedures_registry(&self) -> &crate::procedures::Procedures {
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

/// The graph a leading `USE` names must be this database (`neo4j`); `system` takes only
/// administration commands (here: `SHOW`), as in Neo4j.
fn check_graph(graph: &str, stmt: &Statement, text: &str) -> Result<()> {
    if graph.eq_ignore_ascii_case("neo4j") {
        return Ok(());
    }
    if graph.eq_ignore_ascii_case("system") {
        if matches!(stmt, Statement::Show(_)) {
            return Ok(());
        }
        return Err(Error::semantic(format!(
            "Not a recognised system command or procedure. This Cypher command can only be \
             executed in a user database: {text}"
        )));
    }
    Err(Error::new(Status::DatabaseNotFound, format!("Graph not found: {graph}")))
}

/// Notifications Neo4j attaches to a query (computed once per cached plan).
fn query_notifications(stmt: &Statement) -> Vec<Notification> {
    let mut out = Vec::new();
    if has_cartesian_product(stmt) {
        out.push(Notification {
            code: "Neo.ClientNotification.Statement.CartesianProduct".into(),
            gql_status: "03N90".into(),
            title: "This query builds a cartesian product between disconnected patterns.".into(),
            description: "If a part of a query contains multiple disconnected patterns, this will \
                build a cartesian product between all those parts. This may produce a large amount \
                of data and slow down query processing. While occasionally intended, it may often \
                be possible to reformulate the query that avoids the use of this cross product, \
                perhaps by adding a relationship between the different parts or by using OPTIONAL \
                MATCH."
                .into(),
            severity: "INFORMATION".into(),
            position: None,
        });
    }
    out
}

/// Whether some `MATCH` has pattern parts that share no variable (directly or through others).
fn has_cartesian_product(stmt: &Statement) -> bool {
    use arbor_cypher_syntax::ast::{ClauseKind, PatternPart};
    fn vars(part: &PatternPart) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        let nodes =
            std::iter::once(&part.element.start).chain(part.element.chain.iter().map(|(_, n)| n));
        for n in nodes {
            if let Some(id) = &n.variable {
                v.push(&id.name);
            }
        }
        v
    }
    fn disconnected(parts: &[PatternPart]) -> bool {
        if parts.len() < 2 {
            return false;
        }
        // Grow one component from the first part until nothing more joins it.
        let sets: Vec<Vec<&str>> = parts.iter().map(vars).collect();
        let mut joined = vec![false; sets.len()];
        joined[0] = true;
        let mut component: Vec<&str> = sets[0].clone();
        let mut changed = true;
        while changed {
            changed = false;
            for (i, set) in sets.iter().enumerate() {
                if !joined[i] && set.iter().any(|v| component.contains(v)) {
                    joined[i] = true;
                    component.extend(set.iter().copied());
                    changed = true;
                }
            }
        }
        joined.iter().any(|j| !j)
    }
    let query = match stmt {
        Statement::Query(q) => q,
        Statement::Explain(inner) | Statement::Profile(inner) => {
            return has_cartesian_product(inner)
        }
        _ => return false,
    };
    std::iter::once(&query.first).chain(query.unions.iter().map(|(_, q)| q)).any(|single| {
        single.clauses.iter().any(|c| match &c.kind {
            ClauseKind::Match { pattern, .. } => disconnected(pattern),
            _ => false,
        })
    })
}

pub(crate) enum Prepared {
    Query(Arc<PreparedQuery>, Arc<[Notification]>),
    Schema(arbor_cypher_syntax::ast::SchemaCommand),
    Show(arbor_cypher_syntax::ast::ShowCommand),
    Admin(arbor_cypher_syntax::ast_admin::AdminCommand),
    ShowCurrentUserCall,
    /// `EXPLAIN` of a schema, `SHOW` or administration command: runs nothing.
    Explained(QueryType),
}

/// Where a result's rows come from.
enum Source {
    Exec(Box<Execution>),
    /// Precomputed rows (schema and `SHOW` commands, `EXPLAIN`).
    Rows(VecDeque<Vec<Value>>),
}

pub(crate) struct OpenResult {
    source: Source,
    query_type: QueryType,
    /// Counters of work done outside the executor (schema commands).
    extra_stats: Stats,
    plan: Option<Value>,
    profile: bool,
    notifications: Arc<[Notification]>,
    started: Instant,
    done: bool,
}

impl OpenResult {
    fn rows(rows: Vec<Vec<Value>>, query_type: QueryType, stats: Stats) -> OpenResult {
        OpenResult {
            source: Source::Rows(rows.into()),
            query_type,
            extra_stats: stats,
            plan: None,
            profile: false,
            notifications: Arc::from(Vec::new()),
            started: Instant::now(),
            done: false,
        }
    }

    /// Produces up to `n` rows (`n < 0`: all) into `sink` (rows are dropped when `sink` is
    /// `None`, as DISCARD does). Returns true when the result is exhausted.
    fn produce(
        &mut self,
        tx: &mut Transaction,
        batch_store: Option<&Store>,
        import_dir: Option<&Path>,
        n: i64,
        mut sink: Option<&mut dyn FnMut(Vec<Value>) -> Result<()>>,
    ) -> Result<bool> {
        let mut produced: i64 = 0;
        while n < 0 || produced < n {
            let row = match &mut self.source {
                Source::Exec(exec) => exec.next(&mut TxGraph { tx, batch_store, import_dir })?,
                Source::Rows(rows) => rows.pop_front(),
            };
            let Some(row) = row else {
                self.done = true;
                return Ok(true);
            };
            if let Some(sink) = sink.as_mut() {
                sink(row)?;
            }
            produced += 1;
        }
        // Peek whether anything is left, so the last batch reports `has_more: false` correctly
        // without computing a row the client did not ask for: only precomputed sources know.
        if let Source::Rows(rows) = &self.source {
            if rows.is_empty() {
                self.done = true;
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn summary(&self, bookmark: Option<String>) -> Summary {
        let mut stats = self.extra_stats;
        let mut plan = self.plan.clone();
        if let Source::Exec(exec) = &self.source {
            add_stats(&mut stats, &exec.stats());
            if self.profile {
                plan = Some(exec.profile());
            }
        }
        Summary {
            stats,
            query_type: self.query_type,
            bookmark,
            notifications: self.notifications.to_vec(),
            t_last_ms: self.started.elapsed().as_millis() as u64,
            plan,
            profiled: self.profile,
        }
    }
}

fn add_stats(into: &mut Stats, s: &Stats) {
    into.nodes_created += s.nodes_created;
    into.nodes_deleted += s.nodes_deleted;
    into.relationships_created += s.relationships_created;
    into.relationships_deleted += s.relationships_deleted;
    into.properties_set += s.properties_set;
    into.labels_added += s.labels_added;
    into.labels_removed += s.labels_removed;
    into.indexes_added += s.indexes_added;
    into.indexes_removed += s.indexes_removed;
    into.constraints_added += s.constraints_added;
    into.constraints_removed += s.constraints_removed;
    into.system_updates += s.system_updates;
}

pub(crate) struct ExplicitTx {
    pub(crate) tx: Option<Transaction>,
    results: Vec<OpenResult>,
    /// Set when a statement failed: the transaction was rolled back and only ROLLBACK/RESET
    /// (or a new BEGIN after them) are meaningful.
    failed: bool,
    mode: AccessMode,
    /// Set when the transaction was rolled back because it ran past its timeout.
    timed_out: bool,
}

/// A session: at most one open transaction, explicit or auto-commit. Not thread-safe; one per
/// connection.
pub struct Session {
    db: Database,
    interrupt: Arc<AtomicBool>,
    pub(crate) explicit: Option<ExplicitTx>,
    pub(crate) auto: Option<(Transaction, OpenResult)>,
    /// The deadline of the current transaction (created on the first timeout).
    timer: Option<Arc<crate::deadline::Timer>>,
    /// Whether the current deadline is the server-wide timeout (not the client's), which
    /// Neo4j reports as `TransactionTimedOut`.
    server_deadline: bool,
    /// The metadata of the current transaction (`tx_metadata`, `tx.setMetaData`).
    pub(crate) tx_meta: crate::txinfo::TxMeta,
    pub(crate) obs: crate::observe::Observer,
    /// Access mode of the open auto-commit transaction.
    auto_mode: AccessMode,
    /// Who is logged in (`None`: authentication disabled); see users.rs.
    user: Option<crate::users::CurrentUser>,
    /// The memory account of the current transaction.
    mem: Option<Arc<crate::memory_limits::TxMemory>>,
}

/// What Neo4j answers when a transaction outlives the timeout its client set:
/// `Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration`, with Neo4j's message;
/// for the server-wide setting (`server`) `TransactionTimedOut`.
fn timed_out(server: bool) -> Error {
    if server {
        return Error::new(
            Status::TransactionTimedOut,
            "The transaction has been terminated. Retry your operation in a new transaction, and \
             you should see a successful result. The transaction has not completed within the \
             specified timeout (db.transaction.timeout). You may want to retry with a longer \
             timeout. ",
        );
    }
    Error::new(
        Status::TransactionTimedOutClientConfiguration,
        "The transaction has been terminated. Retry your operation in a new transaction, and you \
         should see a successful result. The transaction has not completed within the timeout \
         specified at its start by the client. You may want to retry with a longer timeout. ",
    )
}

/// `Neo.ClientError.Statement.AccessMode` with Neo4j's message.
fn access_mode_error() -> Error {
    Error::new(
        Status::AccessMode,
        "Writing in read access mode not allowed. Attempted write to neo4j",
    )
}

/// Refuses a writing statement in a READ transaction before it runs (the plan knows it
/// writes); `EXPLAIN` of one runs nothing and is allowed.
fn check_access(p: Prepared, mode: AccessMode) -> Result<Prepared> {
    if mode == AccessMode::Write {
        return Ok(p);
    }
    let writes = match &p {
        Prepared::Schema(_) => true,
        // User administration changes the user store, not the graph (Neo4j runs it on `system`).
        Prepared::Show(_) | Prepared::Admin(_) | Prepared::ShowCurrentUserCall => false,
        Prepared::Explained(_) => false,
        Prepared::Query(q, _) => q.is_write() && !q.is_explain(),
    };
    if writes {
        return Err(access_mode_error());
    }
    Ok(p)
}

fn bookmark_of(ts: u64) -> String {
    format!("arbor:{ts}")
}

fn check_config(config: &TxConfig) -> Result<()> {
    if let Some(db) = config.database.as_deref() {
        if !db.eq_ignore_ascii_case("neo4j") && !db.eq_ignore_ascii_case("system") {
            return Err(Error::new(
                Status::DatabaseNotFound,
                format!("Database does not exist. Database name: '{db}'."),
            ));
        }
    }
    for b in &config.bookmarks {
        let valid = b.strip_prefix("arbor:").is_some_and(|ts| ts.parse::<u64>().is_ok());
        if !valid {
            return Err(Error::new(
                Status::InvalidBookmark,
                format!("Supplied bookmark `{b}` was not issued by this server"),
            ));
        }
    }
    Ok(())
}

impl Session {
    /// Starts an explicit transaction (observed by `Session::begin`, observe.rs).
    pub(crate) fn begin_unobserved(&mut self, config: TxConfig) -> Result<()> {
        self.db.check_open()?;
        check_config(&config)?;
        if self.explicit.is_some() {
            return Err(Error::new(
                Status::RequestInvalid,
                "a transaction is already open in this session",
            ));
        }
        self.finish_auto()?;
        self.start_tx(&config);
        let tx = self.db.inner.store.begin(config.mode == AccessMode::Read);
        self.explicit = Some(ExplicitTx {
            tx: Some(tx),
            results: Vec::new(),
            failed: false,
            mode: config.mode,
            timed_out: false,
        });
        Ok(())
    }

    /// Takes a new transaction's metadata and arms its deadline (or disarms the last one).
    fn start_tx(&mut self, config: &TxConfig) {
        let server = self.db.transaction_timeout();
        // The smaller of the client's and the server's timeouts applies.
        let (timeout, server_deadline) = match (config.timeout, server) {
            (Some(c), Some(s)) if s < c => (Some(s), true),
            (None, Some(s)) => (Some(s), true),
            (c, _) => (c, false),
        };
        self.server_deadline = server_deadline;
        match timeout {
            Some(after) => {
                let timer = match &self.timer {
                    Some(t) => t.clone(),
                    None => {
                        let t = self.db.inner.deadlines.timer(self.interrupt.clone());
                        self.timer = Some(t.clone());
                        t
                    }
                };
                self.db.inner.deadlines.arm(&timer, after);
            }
            None => self.end_tx(),
        }
        // After `end_tx` above, which forgets the previous transaction.
        self.tx_meta.reset(config.metadata.clone());
        self.mem = Some(self.db.inner.memory.transaction());
    }

    /// Counts this thread's allocations against the current transaction until dropped.
    fn enter_memory(&self) -> Option<arbor_exec::memory::Scope> {
        self.mem.as_ref().map(arbor_exec::memory::enter)
    }

    /// Forgets the deadline of the transaction that just ended.
    fn end_tx(&mut self) {
        self.tx_meta.end();
        if let Some(t) = &self.timer {
            t.disarm();
        }
        self.mem = None;
    }

    /// The timeout error of the current transaction's deadline.
    fn timed_out(&self) -> Error {
        timed_out(self.server_deadline)
    }

    /// Whether the current transaction has run past its timeout.
    fn expired(&self) -> bool {
        self.timer.as_ref().is_some_and(|t| t.expired())
    }

    /// The error a failed statement reports: an interrupt caused by the deadline is a timeout,
    /// and the storage's read-only guard in a READ transaction is an access-mode error.
    fn classify(&self, e: Error, mode: AccessMode) -> Error {
        match e.status {
            Status::TransactionTerminated if self.expired() => self.timed_out(),
            Status::ForbiddenOnReadOnly if mode == AccessMode::Read => access_mode_error(),
            _ => e,
        }
    }

    /// `Session::run` (observe.rs) without the metrics and the query log.
    pub(crate) fn run_unobserved(
        &mut self,
        query: &str,
        params: PropertyMap,
        config: TxConfig,
    ) -> Result<RunInfo> {
        self.db.check_open()?;
        if self.explicit.is_none() {
            check_config(&config)?;
            self.finish_auto()?;
            self.start_tx(&config);
            self.auto_mode = config.mode;
        } else if self.expired() {
            self.fail_explicit_timed_out();
        }
        if self.explicit.is_some() && self.tx_meta.terminated() {
            // TERMINATE TRANSACTION (txinfo.rs) while the transaction was idle.
            self.fail_explicit();
            return Err(crate::txinfo::terminated_error());
        }
        self.tx_meta.set_query(query);
        // Only now: a deadline that fired before the check above must still be seen by it.
        self.interrupt.store(false, Ordering::SeqCst);
        let _mem = self.enter_memory();
        if let Some(ex) = &self.explicit {
            if ex.timed_out {
                return Err(self.timed_out());
            }
            if ex.failed || ex.tx.is_none() {
                return Err(Error::new(
                    Status::TransactionTerminated,
                    "the transaction has been rolled back because of an earlier error",
                ));
            }
        }
        let mode = self.explicit.as_ref().map_or(config.mode, |ex| ex.mode);
        // Parsing and planning a huge query is accounted too.
        let prepared = self
            .db
            .prepare(query)
            .and_then(|p| arbor_exec::memory::check().and_then(|()| check_access(p, mode)));
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) => {
                self.fail_explicit();
                return Err(e);
            }
        };
        if let Err(e) = crate::users::check_access(self.user.as_ref(), &prepared, &config) {
            self.fail_explicit();
            return Err(e);
        }
        let (fields, result) = match prepared {
            Prepared::Admin(_) | Prepared::ShowCurrentUserCall => {
                let out =
                    crate::users::run_prepared(&self.db, self.user.as_ref(), &prepared, &params)?;
                let stats = Stats { system_updates: out.updates, ..Stats::default() };
                (out.fields, OpenResult::rows(out.rows, QueryType::Schema, stats))
            }
            Prepared::Explained(query_type) => {
                (Vec::new(), OpenResult::rows(Vec::new(), query_type, Stats::default()))
            }
            Prepared::Schema(cmd) => {
                let (stats, fields, rows) = schema::run_schema(&self.db, &cmd, &params)?;
                (fields, OpenResult::rows(rows, QueryType::Schema, stats))
            }
            Prepared::Show(cmd) => {
                let mut tx = self.db.inner.store.begin(true);
                let shown = schema::run_show(&self.db, &mut tx, &cmd, &params);
                tx.rollback();
                let (fields, rows) = shown?;
                (fields, OpenResult::rows(rows, QueryType::Read, Stats::default()))
            }
            Prepared::Query(q, notes) => {
                // As Neo4j reports it: a writing query is `rw` if it returns rows, else `w`
                // (`MATCH (n) DETACH DELETE n` is `w`, `CREATE (n) RETURN n` is `rw`).
                let query_type = match (q.is_write(), !q.columns().is_empty()) {
                    (false, _) => QueryType::Read,
                    (true, false) => QueryType::Write,
                    (true, true) => QueryType::ReadWrite,
                };
                let fields = q.columns().to_vec();
                if q.is_explain() {
                    let mut r = OpenResult::rows(Vec::new(), query_type, Stats::default());
                    r.plan = Some(q.plan_description());
                    r.notifications = notes;
                    (fields, r)
                } else {
                    let profile = q.is_profile();
                    let mut exec = match Execution::start(q, params) {
                        Ok(e) => e,
                        Err(e) => {
                            self.fail_explicit();
                            return Err(e);
                        }
                    };
                    exec.set_interrupt(self.interrupt.clone());
                    let mut r = OpenResult::rows(Vec::new(), query_type, Stats::default());
                    r.source = Source::Exec(Box::new(exec));
                    r.profile = profile;
                    r.notifications = notes;
                    (fields, r)
                }
            }
        };
        if let Some(ex) = &mut self.explicit {
            ex.results.push(result);
            let qid = (ex.results.len() - 1) as i64;
            return Ok(RunInfo { fields, qid: Some(qid) });
        }
        let tx = self.db.inner.store.begin(config.mode == AccessMode::Read);
        self.auto = Some((tx, result));
        Ok(RunInfo { fields, qid: None })
    }

    pub(crate) fn pull_unobserved(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<PullOutcome> {
        self.advance(qid, n, Some(sink))
    }

    pub(crate) fn discard_unobserved(&mut self, qid: Option<i64>, n: i64) -> Result<PullOutcome> {
        self.advance(qid, n, None)
    }

    fn advance(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: Option<&mut dyn FnMut(Vec<Value>) -> Result<()>>,
    ) -> Result<PullOutcome> {
        if n == 0 {
            return Err(Error::new(Status::RequestInvalid, "PULL/DISCARD with n = 0"));
        }
        if let Some(ex) = &mut self.explicit {
            let idx = match qid {
                None | Some(-1) => ex.results.len().checked_sub(1),
                Some(q) if q >= 0 && (q as usize) < ex.results.len() => Some(q as usize),
                Some(_) => None,
            };
            if ex.timed_out {
                return Err(self.timed_out());
            }
            let (Some(idx), Some(_)) = (idx, ex.tx.as_ref()) else {
                return Err(Error::new(Status::RequestInvalid, "no such open result"));
            };
            if ex.results[idx].done {
                return Ok(PullOutcome::Done(ex.results[idx].summary(None)));
            }
            if self.expired() {
                self.fail_explicit_timed_out();
                return Err(self.timed_out());
            }
            let _meta = crate::txinfo::enter(&self.tx_meta);
            let import_dir = self.db.import_dir();
            let _mem = self.enter_memory();
            let Some(ex) = self.explicit.as_mut() else {
                return Err(Error::internal("explicit transaction vanished"));
            };
            let (Some(tx), mode) = (ex.tx.as_mut(), ex.mode) else {
                return Err(Error::internal("explicit transaction vanished"));
            };
            let result = &mut ex.results[idx];
            return match result.produce(tx, None, import_dir.as_deref(), n, sink) {
                Ok(true) => Ok(PullOutcome::Done(result.summary(None))),
                Ok(false) => Ok(PullOutcome::HasMore),
                Err(e) => {
                    let e = self.classify(e, mode);
                    if matches!(
                        e.status,
                        Status::TransactionTimedOutClientConfiguration
                            | Status::TransactionTimedOut
                    ) {
                        self.fail_explicit_timed_out();
                    } else {
                        self.fail_explicit();
                    }
                    Err(e)
                }
            };
        }
        if self.auto.is_none() {
            return Err(Error::new(Status::RequestInvalid, "there is no open result to pull from"));
        }
        if self.expired() {
            self.rollback_auto();
            return Err(self.timed_out());
        }
        let _meta = crate::txinfo::enter(&self.tx_meta);
        let _mem = self.enter_memory();
        let Some((tx, result)) = self.auto.as_mut() else {
            return Err(Error::internal("auto-commit result vanished"));
        };
        // Auto-commit: `CALL { ... } IN TRANSACTIONS` may commit batches along the way.
        let import_dir = self.db.import_dir();
        match result.produce(tx, Some(&self.db.inner.store), import_dir.as_deref(), n, sink) {
            Ok(false) => Ok(PullOutcome::HasMore),
            Ok(true) => {
                let Some((tx, result)) = self.auto.take() else {
                    return Err(Error::internal("auto-commit result vanished"));
                };
                self.end_tx();
                let ts = tx.commit()?;
                Ok(PullOutcome::Done(result.summary(Some(bookmark_of(ts)))))
            }
            Err(e) => {
                let e = self.classify(e, self.auto_mode);
                self.rollback_auto();
                Err(e)
            }
        }
    }

    fn rollback_auto(&mut self) {
        if let Some((tx, _)) = self.auto.take() {
            tx.rollback();
        }
        self.end_tx();
    }

    /// Rolls the explicit transaction back because its deadline passed.
    fn fail_explicit_timed_out(&mut self) {
        self.fail_explicit();
        if let Some(ex) = &mut self.explicit {
            ex.timed_out = true;
        }
    }

    /// Commits a pending auto-commit result by running it to completion (its rows are dropped).
    fn finish_auto(&mut self) -> Result<()> {
        if self.auto.is_some() {
            self.advance(None, -1, None)?;
        }
        Ok(())
    }

    fn fail_explicit(&mut self) {
        if let Some(ex) = &mut self.explicit {
            ex.failed = true;
            ex.results.clear();
            if let Some(tx) = ex.tx.take() {
                tx.rollback();
            }
        }
        self.end_tx();
    }

    /// `Session::commit` (observe.rs) without the metrics and the query log.
    pub(crate) fn commit_unobserved(&mut self) -> Result<String> {
        let Some(mut ex) = self.explicit.take() else {
            return Err(Error::new(
                Status::TransactionNotFound,
                "there is no open transaction to commit",
            ));
        };
        if ex.timed_out {
            return Err(self.timed_out());
        }
        let Some(mut tx) = ex.tx.take() else {
            return Err(Error::new(
                Status::TransactionTerminated,
                "the transaction has been rolled back because of an earlier error",
            ));
        };
        if self.expired() {
            tx.rollback();
            self.end_tx();
            return Err(self.timed_out());
        }
        if self.tx_meta.terminated() {
            tx.rollback();
            self.end_tx();
            return Err(crate::txinfo::terminated_error());
        }
        let meta = crate::txinfo::enter(&self.tx_meta);
        let import_dir = self.db.import_dir();
        let _mem = self.enter_memory();
        for result in &mut ex.results {
            if !result.done {
                if let Err(e) = result.produce(&mut tx, None, import_dir.as_deref(), -1, None) {
                    let e = self.classify(e, ex.mode);
                    tx.rollback();
                    self.end_tx();
                    return Err(e);
                }
            }
        }
        drop(meta);
        self.end_tx();
        let ts = tx.commit()?;
        Ok(bookmark_of(ts))
    }

    /// `Session::rollback` (observe.rs) without the metrics.
    pub(crate) fn rollback_unobserved(&mut self) -> Result<()> {
        match self.explicit.take() {
            Some(mut ex) => {
                if let Some(tx) = ex.tx.take() {
                    tx.rollback();
                }
                self.end_tx();
                Ok(())
            }
            None => Err(Error::new(
                Status::TransactionNotFound,
                "there is no open transaction to roll back",
            )),
        }
    }

    /// `Session::reset` (observe.rs) without the metrics.
    pub(crate) fn reset_unobserved(&mut self) {
        if let Some((tx, _)) = self.auto.take() {
            tx.rollback();
        }
        if let Some(mut ex) = self.explicit.take() {
            if let Some(tx) = ex.tx.take() {
                tx.rollback();
            }
        }
        self.end_tx();
        self.interrupt.store(false, Ordering::SeqCst);
    }

    pub fn in_transaction(&self) -> bool {
        self.explicit.is_some()
    }

    /// A flag another thread can set to interrupt the running query (Bolt `RESET` while
    /// streaming). The query fails with `TransactionTerminated`; the session clears the flag
    /// on `reset` and at the next `run`.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    /// Sets who is logged in on this session (the Bolt layer calls this after authentication;
    /// `None` when authentication is disabled).
    pub fn set_user(&mut self, user: Option<crate::users::CurrentUser>) {
        self.tx_meta.set_user(user.as_ref().map_or("", |u| u.name.as_str()));
        self.user = user;
    }

    /// Who this session serves, as `SHOW TRANSACTIONS` lists it (`connectionId`,
    /// `clientAddress`).
    pub fn set_client(&mut self, connection_id: &str, client_address: &str) {
        self.tx_meta.set_client(connection_id, client_address);
    }

    /// The database this session belongs to.
    pub fn database(&self) -> &Database {
        &self.db
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.reset();
    }
}
