//! Live transactions: what each session is running (for `SHOW TRANSACTIONS` and `TERMINATE
//! TRANSACTIONS`), transaction metadata (Bolt `tx_metadata`) and the procedures that read and
//! set it: `tx.getMetaData()` and `tx.setMetaData(map)`.
//!
//! Every session registers its [`TxMeta`] with the database's [`Registry`] (held weakly, so a
//! dropped session disappears from the list). Ids are Neo4j's: `neo4j-transaction-N`, and
//! `query-N` for the current query. Terminating raises the session's interrupt flag (the running
//! query stops at its next check) and marks the transaction, so its next statement or commit
//! fails with `Neo.ClientError.Transaction.Terminated`.
//!
//! Procedure bodies see only the graph, so the session publishes the metadata of the
//! transaction it is running in a thread-local for the duration of each `PULL`/`COMMIT`
//! ([`enter`]); a session runs on one thread at a time, and the guard restores the previous
//! value when dropped. The same published state tells the user administration procedures who
//! is logged in ([`current_user`]) and collects the `system-updates` they count
//! ([`add_system_updates`], taken into the result's summary by the session).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use arbor_cypher_plan::CypherType;
use arbor_exec::procs::Procedure;
use arbor_model::{Duration, Error, PropertyMap, Result, Status, Value};
use parking_lot::Mutex;

/// What SHOW TRANSACTIONS knows of one session's transaction.
#[derive(Default)]
struct TxState {
    metadata: PropertyMap,
    /// `None` while the session has no transaction open.
    id: Option<u64>,
    started: Option<(SystemTime, Instant)>,
    query: String,
    query_id: u64,
    username: String,
    /// Who is logged in (`None`: authentication disabled), for the user administration
    /// procedures (users.rs).
    user: Option<crate::session::config::CurrentUser>,
    /// `system-updates` counted by the administration procedures since the session last took
    /// them ([`TxMeta::take_system_updates`]).
    system_updates: u64,
    connection_id: String,
    client_address: String,
    terminated: bool,
    interrupt: Option<Arc<AtomicBool>>,
    /// The transaction's memory accounting (`currentQueryAllocatedBytes`,
    /// `estimatedUsedHeapMemory`).
    memory: Option<Arc<arbor_exec::memory::TxMemory>>,
}

/// The metadata and live state of a session's current transaction.
#[derive(Clone, Default)]
pub(crate) struct TxMeta {
    state: Arc<Mutex<TxState>>,
    registry: Arc<RegistryInner>,
}

impl TxMeta {
    /// Replaces the metadata: a new transaction starts.
    pub(crate) fn reset(&self, map: PropertyMap) {
        let id = self.registry.next_tx.fetch_add(1, Ordering::Relaxed) + 1;
        let mut s = self.state.lock();
        s.metadata = map;
        s.id = Some(id);
        s.started = Some((SystemTime::now(), Instant::now()));
        s.query.clear();
        s.terminated = false;
    }

    /// The memory accounting of the transaction that just started.
    pub(crate) fn set_memory(&self, memory: Option<Arc<arbor_exec::memory::TxMemory>>) {
        self.state.lock().memory = memory;
    }

    /// The transaction ended.
    pub(crate) fn end(&self) {
        let mut s = self.state.lock();
        s.id = None;
        s.memory = None;
        s.query.clear();
        s.terminated = false;
    }

    /// The statement the transaction is running now.
    pub(crate) fn set_query(&self, query: &str) {
        let qid = self.registry.next_query.fetch_add(1, Ordering::Relaxed) + 1;
        let mut s = self.state.lock();
        s.query = query.to_string();
        s.query_id = qid;
    }

    /// Who is logged in (`None`: authentication disabled).
    pub(crate) fn set_user(&self, user: Option<&crate::session::config::CurrentUser>) {
        let mut s = self.state.lock();
        s.username = user.map_or(String::new(), |u| u.name.clone());
        s.user = user.cloned();
    }

    /// The `system-updates` the administration procedures counted since the last call.
    pub(crate) fn take_system_updates(&self) -> u64 {
        std::mem::take(&mut self.state.lock().system_updates)
    }

    pub(crate) fn set_client(&self, connection_id: &str, client_address: &str) {
        let mut s = self.state.lock();
        s.connection_id = connection_id.to_string();
        s.client_address = client_address.to_string();
    }

    /// The session's user name and client address (for the query log).
    pub(crate) fn who(&self) -> (String, String) {
        let s = self.state.lock();
        (s.username.clone(), s.client_address.clone())
    }

    /// Whether `TERMINATE TRANSACTION` ended the current transaction.
    pub(crate) fn terminated(&self) -> bool {
        self.state.lock().terminated
    }
}

/// The error a terminated transaction's next statement gets, with Neo4j's message.
pub(crate) fn terminated_error() -> Error {
    Error::new(
        Status::TransactionTerminated,
        "The transaction has been terminated. Retry your operation in a new transaction, and you \
         should see a successful result. Explicitly terminated by the user. ",
    )
}

#[derive(Default)]
struct RegistryInner {
    next_tx: AtomicU64,
    next_query: AtomicU64,
    sessions: Mutex<Vec<Weak<Mutex<TxState>>>>,
}

/// Every session of one database.
#[derive(Default)]
pub(crate) struct Registry(Arc<RegistryInner>);

impl Registry {
    /// The live state of a new session whose queries `interrupt` stops.
    pub(crate) fn register(&self, interrupt: Arc<AtomicBool>) -> TxMeta {
        let state =
            Arc::new(Mutex::new(TxState { interrupt: Some(interrupt), ..TxState::default() }));
        let mut sessions = self.0.sessions.lock();
        sessions.retain(|w| w.strong_count() > 0);
        sessions.push(Arc::downgrade(&state));
        TxMeta { state, registry: self.0.clone() }
    }

    fn live(&self) -> Vec<Arc<Mutex<TxState>>> {
        self.0.sessions.lock().iter().filter_map(Weak::upgrade).collect()
    }
}

/// Neo4j's `SHOW TRANSACTIONS` columns; the first ten are shown without `YIELD`.
pub(crate) const COLUMNS: [&str; 39] = [
    "database",
    "transactionId",
    "currentQueryId",
    "connectionId",
    "clientAddress",
    "username",
    "currentQuery",
    "startTime",
    "status",
    "elapsedTime",
    "outerTransactionId",
    "metaData",
    "parameters",
    "planner",
    "runtime",
    "indexes",
    "currentQueryStartTime",
    "protocol",
    "requestUri",
    "currentQueryStatus",
    "statusDetails",
    "resourceInformation",
    "activeLockCount",
    "currentQueryActiveLockCount",
    "cpuTime",
    "waitTime",
    "idleTime",
    "currentQueryElapsedTime",
    "currentQueryCpuTime",
    "currentQueryWaitTime",
    "currentQueryIdleTime",
    "currentQueryAllocatedBytes",
    "allocatedDirectBytes",
    "estimatedUsedHeapMemory",
    "pageHits",
    "pageFaults",
    "currentQueryPageHits",
    "currentQueryPageFaults",
    "initializationStackTrace",
];
pub(crate) const DEFAULT_COLUMNS: usize = 10;
pub(crate) const TERMINATE_COLUMNS: [&str; 3] = ["transactionId", "username", "message"];

fn tx_id(n: u64) -> String {
    format!("neo4j-transaction-{n}")
}

/// `2026-11-26T18:14:33.562Z`, as Neo4j shows start times.
fn iso_millis(t: SystemTime) -> String {
    let ms = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

fn duration_of(d: std::time::Duration) -> Value {
    let ms = d.as_millis() as i64;
    Value::Duration(Duration {
        months: 0,
        days: 0,
        seconds: ms / 1000,
        nanos: ((ms % 1000) * 1_000_000) as i32,
    })
}

/// One row of every column, for an open transaction.
fn row(s: &TxState, id: u64) -> Vec<Value> {
    let (start_wall, start) = s.started.unwrap_or((SystemTime::now(), Instant::now()));
    let elapsed = duration_of(start.elapsed());
    let text = |t: &str| Value::from(t.to_string());
    let status = if s.terminated {
        "Terminated with reason: Status.Code[Neo.ClientError.Transaction.Terminated]"
    } else {
        "Running"
    };
    let query_id = if s.query.is_empty() { String::new() } else { format!("query-{}", s.query_id) };
    let zero = Value::Int(0);
    vec![
        text("neo4j"),
        text(&tx_id(id)),
        text(&query_id),
        text(&s.connection_id),
        text(&s.client_address),
        text(&s.username),
        text(&s.query),
        text(&iso_millis(start_wall)),
        text(status),
        elapsed.clone(),
        text(""),
        Value::Map(s.metadata.clone()),
        Value::Map(PropertyMap::new()),
        text("idp"),
        text("slotted"),
        Value::List(Vec::new()),
        text(&iso_millis(start_wall)),
        text(if s.connection_id.is_empty() { "embedded" } else { "bolt" }),
        text(""),
        text(if s.query.is_empty() { "" } else { "running" }),
        text(""),
        Value::Map(PropertyMap::new()),
        zero.clone(),
        zero.clone(),
        Value::Null,
        duration_of(std::time::Duration::ZERO),
        Value::Null,
        elapsed,
        Value::Null,
        duration_of(std::time::Duration::ZERO),
        Value::Null,
        // Bytes held now, and the most held at once, as the allocator counts them (in the
        // 64 KiB chunks reserved from the pool).
        Value::Int(s.memory.as_ref().map_or(0, |m| m.reserved() as i64)),
        zero.clone(),
        Value::Int(s.memory.as_ref().map_or(0, |m| m.peak() as i64)),
        zero.clone(),
        zero.clone(),
        zero.clone(),
        zero,
        text(""),
    ]
}

/// `neo4j-transaction-7` -> 7; anything else is Neo4j's `InvalidArguments`.
fn parse_id(id: &str) -> Result<u64> {
    let n = id.rsplit_once("-transaction-").and_then(|(db, n)| {
        (!db.is_empty()).then_some(())?;
        n.parse::<u64>().ok()
    });
    n.ok_or_else(|| {
        Error::new(
            Status::InvalidArguments,
            "Could not parse id (expected format: <databasename>-transaction-<id>)",
        )
    })
}

/// The rows of `SHOW TRANSACTIONS [ids]`, every column, by transaction id (ids that do not
/// parse match nothing).
pub(crate) fn show_rows(registry: &Registry, wanted: &[String]) -> Vec<Vec<Value>> {
    let wanted: Vec<u64> = wanted.iter().filter_map(|i| parse_id(i).ok()).collect();
    let mut rows = Vec::new();
    for state in registry.live() {
        let s = state.lock();
        let Some(id) = s.id else { continue };
        if !wanted.is_empty() && !wanted.contains(&id) {
            continue;
        }
        rows.push((id, row(&s, id)));
    }
    rows.sort_by_key(|(id, _)| *id);
    rows.into_iter().map(|(_, r)| r).collect()
}

/// `TERMINATE TRANSACTIONS ids`: terminates each live one; a row per id written.
pub(crate) fn terminate_rows(registry: &Registry, wanted: &[String]) -> Result<Vec<Vec<Value>>> {
    let parsed = wanted.iter().map(|i| parse_id(i)).collect::<Result<Vec<u64>>>()?;
    let live = registry.live();
    let rows = wanted
        .iter()
        .zip(parsed)
        .map(|(text, id)| {
            let found = live.iter().find(|s| s.lock().id == Some(id));
            let Some(state) = found else {
                return vec![
                    Value::from(text.clone()),
                    Value::Null,
                    Value::str("Transaction not found."),
                ];
            };
            let mut s = state.lock();
            s.terminated = true;
            if let Some(flag) = &s.interrupt {
                flag.store(true, Ordering::SeqCst);
            }
            vec![
                Value::from(text.clone()),
                Value::from(s.username.clone()),
                Value::str("Transaction terminated."),
            ]
        })
        .collect();
    Ok(rows)
}

thread_local! {
    static CURRENT: RefCell<Option<TxMeta>> = const { RefCell::new(None) };
}

/// While the guard lives, `tx.*` procedures on this thread see `meta`.
pub(crate) struct Entered(Option<TxMeta>);

pub(crate) fn enter(meta: &TxMeta) -> Entered {
    Entered(CURRENT.with(|c| c.replace(Some(meta.clone()))))
}

impl Drop for Entered {
    fn drop(&mut self) {
        let prev = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

/// Who the session running on this thread serves (`None`: authentication disabled, or no
/// session, as in embedded use).
pub(crate) fn current_user() -> Option<crate::session::config::CurrentUser> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|m| m.state.lock().user.clone()))
}

/// Counts `system-updates` for the session running on this thread (none outside a session).
pub(crate) fn add_system_updates(n: u64) {
    CURRENT.with(|c| {
        if let Some(m) = c.borrow().as_ref() {
            m.state.lock().system_updates += n;
        }
    });
}

fn current() -> Result<TxMeta> {
    CURRENT.with(|c| c.borrow().clone()).ok_or_else(|| {
        Error::new(
            Status::RequestInvalid,
            "transaction metadata is only available inside a session",
        )
    })
}

/// `tx.getMetaData()` and `tx.setMetaData(data)`, with Neo4j's signatures.
pub(crate) fn procedures() -> Vec<Procedure> {
    let get = Procedure::new(
        "tx.getMetaData",
        vec![],
        vec![("metadata".into(), CypherType::Map)],
        "Provides attached transaction metadata.",
        |_, _| Ok(vec![vec![Value::Map(current()?.state.lock().metadata.clone())]]),
    );
    let set = Procedure::new(
        "tx.setMetaData",
        vec![("data".into(), CypherType::Map)],
        vec![],
        "Attaches a map of data to the transaction. The data will be printed when listing \
         queries, and inserted into the query log.",
        |args, _| {
            let map = match args.first() {
                Some(Value::Map(m)) => m.clone(),
                Some(Value::Null) | None => PropertyMap::new(),
                Some(other) => {
                    return Err(Error::type_error(format!(
                        "tx.setMetaData expects a MAP, got {}",
                        other.type_name()
                    )))
                }
            };
            current()?.state.lock().metadata = map;
            Ok(Vec::new())
        },
    );
    vec![get, set]
}

/// `dbms.showCurrentUser()`: `username`, `roles` (null in Community), `flags`. With
/// authentication disabled Neo4j does not register it; Arbor's registry is the database's, so
/// the call fails as if it were missing.
pub(crate) fn show_current_user_proc() -> Procedure {
    let outputs = vec![
        ("username".to_string(), CypherType::String),
        ("roles".to_string(), CypherType::List(Box::new(CypherType::String))),
        ("flags".to_string(), CypherType::List(Box::new(CypherType::String))),
    ];
    Procedure::new(
        "dbms.showCurrentUser",
        Vec::new(),
        outputs,
        "Show the current user.",
        |_: &[Value], _: &mut dyn arbor_exec::graph::Graph| {
            let Some(me) = current_user() else {
                return Err(Error::new(
                    Status::ProcedureNotFound,
                    "There is no procedure with the name `dbms.showCurrentUser` registered for \
                     this database instance. Please ensure you've spelled the procedure name \
                     correctly and that the procedure is properly deployed.",
                ));
            };
            let mut flags = Vec::new();
            if me.password_change_required {
                flags.push(Value::str("password_change_required"));
            }
            Ok(vec![vec![Value::from(me.name), Value::Null, Value::List(flags)]])
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_are_iso_with_milliseconds() {
        let t = UNIX_EPOCH + std::time::Duration::from_millis(1_795_716_873_562);
        assert_eq!(iso_millis(t), "2026-11-26T18:14:33.562Z");
        assert_eq!(iso_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn ids_are_neo4js() {
        assert_eq!(parse_id("neo4j-transaction-42").unwrap(), 42);
        assert_eq!(parse_id("foo").unwrap_err().status, Status::InvalidArguments);
        assert!(parse_id("-transaction-1").is_err());
    }

    #[test]
    fn sessions_are_listed_and_terminated_by_id() {
        let registry = Registry::default();
        let flag = Arc::new(AtomicBool::new(false));
        let meta = registry.register(flag.clone());
        let idle = registry.register(Arc::new(AtomicBool::new(false)));
        let alice = crate::session::config::CurrentUser {
            name: "alice".into(),
            password_change_required: false,
        };
        meta.set_user(Some(&alice));
        meta.reset(PropertyMap::new());
        meta.set_query("RETURN 1");
        let rows = show_rows(&registry, &[]);
        assert_eq!(rows.len(), 1, "the idle session has no transaction");
        assert_eq!(rows[0].len(), COLUMNS.len());
        let id = match &rows[0][1] {
            Value::String(s) => s.to_string(),
            other => panic!("{other:?}"),
        };
        assert!(id.starts_with("neo4j-transaction-"));
        assert_eq!(show_rows(&registry, std::slice::from_ref(&id)).len(), 1);
        assert!(show_rows(&registry, &["neo4j-transaction-999".into()]).is_empty());
        let wanted = vec![id, "neo4j-transaction-999".to_string()];
        let rows = terminate_rows(&registry, &wanted).unwrap();
        let text = |v: &Value| match v {
            Value::String(s) => s.to_string(),
            other => format!("{other:?}"),
        };
        assert_eq!(text(&rows[0][2]), "Transaction terminated.");
        assert_eq!(text(&rows[0][1]), "alice");
        assert_eq!(text(&rows[1][2]), "Transaction not found.");
        assert!(matches!(rows[1][1], Value::Null));
        assert!(flag.load(Ordering::SeqCst) && meta.terminated());
        let bad = terminate_rows(&registry, &["foo".to_string()]).unwrap_err();
        assert_eq!(bad.status, Status::InvalidArguments);
        meta.end();
        assert!(!meta.terminated());
        drop(idle);
    }
}
