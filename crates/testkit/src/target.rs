//! The [`Target`] a golden file runs against, and its in-process implementation
//! ([`InProcess`]: an `arbor_engine::Database` on a temporary data directory, one `Session` per
//! named connection). The Bolt implementation is in [`crate::bolt`].

use std::collections::HashMap;

use arbor_engine::{Database, DatabaseConfig, Durability, PullOutcome, Session, TxConfig};
use arbor_model::{Error, PropertyMap, Result, ResultValue, Status, Value};

/// What one statement answered.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    pub rows: Vec<Vec<Value>>,
    /// The EXPLAIN/PROFILE plan map from the summary, if any.
    pub plan: Option<Value>,
}

/// A database a golden file can drive. Connections are created on first use by name.
pub trait Target {
    /// `in-process` or `bolt`, for messages.
    fn name(&self) -> &'static str;
    /// Runs `query` on `connection` (auto-commit unless it has an explicit transaction) and
    /// pulls every row. A failure inside an explicit transaction rolls it back and leaves it
    /// *failed*, as the engine's sessions and the official drivers do: further statements and
    /// `commit` fail with `TransactionTerminated`, `rollback` succeeds.
    fn execute(&mut self, connection: &str, query: &str, params: &PropertyMap) -> Result<Reply>;
    fn begin(&mut self, connection: &str) -> Result<()>;
    fn commit(&mut self, connection: &str) -> Result<()>;
    fn rollback(&mut self, connection: &str) -> Result<()>;
    /// Clean shutdown and reopen of the same data directory; closes every connection.
    fn restart(&mut self) -> Result<()>;
    /// Stop as a kill would (no checkpoint) and reopen the same directory.
    fn crash(&mut self) -> Result<()>;
}

/// Commits are acknowledged once written to the OS (not fsynced): a process crash keeps them,
/// and a machine shared by many builds is not made to wait for the disk on every statement.
const DURABILITY: Durability = Durability::Async;

/// `arbor_engine::Database` on a temporary directory.
pub struct InProcess {
    dir: tempfile::TempDir,
    db: Option<Database>,
    sessions: HashMap<String, Session>,
}

impl InProcess {
    /// A fresh, empty database in a new temporary directory.
    pub fn new() -> Result<InProcess> {
        let dir = tempfile::Builder::new()
            .prefix("arbor-golden-")
            .tempdir()
            .map_err(|e| Error::new(Status::Io, format!("creating a temporary directory: {e}")))?;
        let db = open(dir.path())?;
        Ok(InProcess { dir, db: Some(db), sessions: HashMap::new() })
    }

    fn session(&mut self, name: &str) -> Result<&mut Session> {
        let Some(db) = &self.db else {
            return Err(Error::new(Status::Internal, "the database is not open"));
        };
        Ok(self.sessions.entry(name.to_string()).or_insert_with(|| db.session()))
    }

    fn reopen(&mut self) -> Result<()> {
        self.db = Some(open(self.dir.path())?);
        Ok(())
    }
}

fn open(path: &std::path::Path) -> Result<Database> {
    let config = DatabaseConfig { durability: DURABILITY, ..DatabaseConfig::default() };
    let db = Database::open(path, config)?;
    db.set_import_dir(std::path::Path::new(IMPORT_DIR));
    Ok(db)
}

/// The files golden `LOAD CSV` queries read (`file:///name.csv`), for both targets.
pub const IMPORT_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/cypher/import");

impl Target for InProcess {
    fn name(&self) -> &'static str {
        "in-process"
    }

    fn execute(&mut self, connection: &str, query: &str, params: &PropertyMap) -> Result<Reply> {
        let session = self.session(connection)?;
        session.run(query, params.clone(), TxConfig::default())?;
        let mut rows = Vec::new();
        let mut sink = |r: Vec<ResultValue>| {
            rows.push(r.into_iter().map(|v| by_key(Value::from(v))).collect());
            Ok(())
        };
        match session.pull(None, -1, &mut sink) {
            Ok(PullOutcome::Done(summary)) => Ok(Reply { rows, plan: summary.plan }),
            Ok(PullOutcome::HasMore) => {
                Err(Error::new(Status::Internal, "result not exhausted by a PULL of all records"))
            }
            Err(e) => Err(e),
        }
    }

    fn begin(&mut self, connection: &str) -> Result<()> {
        self.session(connection)?.begin(TxConfig::default())
    }

    fn commit(&mut self, connection: &str) -> Result<()> {
        self.session(connection)?.commit().map(|_| ())
    }

    fn rollback(&mut self, connection: &str) -> Result<()> {
        self.session(connection)?.rollback()
    }

    fn restart(&mut self) -> Result<()> {
        self.sessions.clear();
        if let Some(db) = self.db.take() {
            db.shutdown()?;
        }
        self.reopen()
    }

    fn crash(&mut self) -> Result<()> {
        // Sessions go first: an open transaction simply vanishes, as in a killed process.
        self.sessions.clear();
        if let Some(db) = self.db.take() {
            db.crash_for_test();
        }
        self.reopen()
    }
}

/// `v` with every map's display order dropped: golden files show maps by key (over Bolt the
/// decoded maps come out that way too), and order is checked through `keys()`.
fn by_key(v: Value) -> Value {
    match v {
        Value::Map(m) => Value::Map(PropertyMap::from_entries(
            m.into_iter().map(|(k, x)| (k, by_key(x))).collect(),
        )),
        Value::List(items) => Value::List(items.into_iter().map(by_key).collect()),
        other => other,
    }
}
