//! Where the shell sends statements: a Bolt server (the default, like cypher-shell) or a data
//! directory opened in process (`--data`).

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use arbor_bolt::client::{Auth, Client, ClientConfig};
use arbor_engine::{Database, DatabaseConfig, PullOutcome, TxConfig};
use arbor_model::{Error, PropertyMap, Value};

use super::format::Summary;

/// One statement's outcome: columns, rows and summary.
pub struct Outcome {
    pub fields: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    pub summary: Summary,
}

/// A connection the shell runs statements on.
pub trait Backend {
    /// Runs one statement (inside the open transaction, if any) and pulls all of its rows.
    fn run(&mut self, query: &str, params: &PropertyMap) -> Result<Outcome, Error>;
    fn begin(&mut self) -> Result<(), Error>;
    fn commit(&mut self) -> Result<(), Error>;
    fn rollback(&mut self) -> Result<(), Error>;
    /// Switches the database later statements go to (`None`: the server's default).
    fn use_database(&mut self, name: Option<String>);
    /// The database statements go to, as the prompt shows it.
    fn database(&self) -> String;
    /// One line saying what the shell is connected to.
    fn describe(&self) -> String;
    /// Ends the session (an in-process store is checkpointed and unlocked).
    fn close(self: Box<Self>) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A Bolt server.
pub struct BoltBackend {
    client: Client,
    address: String,
    user: String,
    database: Option<String>,
    in_tx: bool,
}

impl BoltBackend {
    pub fn connect(
        address: &str,
        user: &str,
        password: Option<&str>,
        database: Option<String>,
    ) -> anyhow::Result<BoltBackend> {
        let auth = match password {
            Some(p) => Auth::Basic { user: user.to_string(), password: p.to_string() },
            None => Auth::None,
        };
        let config = ClientConfig {
            auth,
            user_agent: format!("arbor-shell/{}", env!("CARGO_PKG_VERSION")),
            timeout: None,
        };
        let client = Client::connect(address, &config)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("connecting to {address}"))?;
        Ok(BoltBackend {
            client,
            address: address.to_string(),
            user: user.to_string(),
            database,
            in_tx: false,
        })
    }

    fn extra(&self) -> PropertyMap {
        let mut extra = PropertyMap::new();
        if let Some(db) = &self.database {
            extra.insert("db".into(), Value::str(db));
        }
        extra
    }
}

fn int(m: &PropertyMap, key: &str) -> Option<i64> {
    match m.get(key) {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

impl Backend for BoltBackend {
    fn run(&mut self, query: &str, params: &PropertyMap) -> Result<Outcome, Error> {
        let start = Instant::now();
        let mut rows = Vec::new();
        // Inside an explicit transaction the database was chosen by BEGIN.
        let extra = if self.in_tx { PropertyMap::new() } else { self.extra() };
        let (header, meta) = self.client.run_extra_with(query, params, &extra, |r| {
            rows.push(r);
            Ok(())
        })?;
        let elapsed = start.elapsed().as_millis() as i64;
        let available_ms = header.t_first.unwrap_or(elapsed);
        let consumed_ms = int(&meta, "t_last").unwrap_or((elapsed - available_ms).max(0));
        let stats = match meta.get("stats") {
            Some(Value::Map(m)) => m
                .iter()
                .filter_map(|(k, v)| match v {
                    Value::Int(n) => Some((k.as_str().to_string(), *n)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        Ok(Outcome {
            fields: header.fields,
            rows,
            summary: Summary { available_ms, consumed_ms, stats },
        })
    }

    fn begin(&mut self) -> Result<(), Error> {
        self.client.begin(self.extra())?;
        self.in_tx = true;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), Error> {
        self.in_tx = false;
        self.client.commit().map(|_| ())
    }

    fn rollback(&mut self) -> Result<(), Error> {
        self.in_tx = false;
        self.client.rollback()
    }

    fn use_database(&mut self, name: Option<String>) {
        self.database = name;
    }

    fn database(&self) -> String {
        self.database.clone().unwrap_or_else(|| "neo4j".into())
    }

    fn describe(&self) -> String {
        let v = self.client.version();
        format!(
            "Connected to {} using Bolt protocol version {}.{} at {} as user {}.",
            self.client.server_agent(),
            v.major,
            v.minor,
            self.address,
            self.user
        )
    }
}

/// A data directory opened in this process (nothing else may have it open).
pub struct LocalBackend {
    db: Database,
    session: arbor_engine::Session,
    database: Option<String>,
    path: String,
}

impl LocalBackend {
    pub fn open(path: &Path) -> anyhow::Result<LocalBackend> {
        let db = Database::open(path, DatabaseConfig::default())
            .with_context(|| format!("opening database at {}", path.display()))?;
        let session = db.session();
        Ok(LocalBackend { db, session, database: None, path: path.display().to_string() })
    }

    fn config(&self) -> TxConfig {
        TxConfig { database: self.database.clone(), ..TxConfig::default() }
    }
}

impl Backend for LocalBackend {
    fn run(&mut self, query: &str, params: &PropertyMap) -> Result<Outcome, Error> {
        let start = Instant::now();
        let info = self.session.run(query, params.clone(), self.config())?;
        let available_ms = start.elapsed().as_millis() as i64;
        let mut rows = Vec::new();
        let mut sink = |row: Vec<arbor_model::ResultValue>| {
            rows.push(row.into_iter().map(Value::from).collect::<Vec<_>>());
            Ok(())
        };
        let summary = loop {
            match self.session.pull(None, -1, &mut sink)? {
                PullOutcome::Done(s) => break s,
                PullOutcome::HasMore => continue,
            }
        };
        let stats = arbor_engine::update_counters(&summary.stats)
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (k.to_string(), n as i64))
            .collect();
        let total = start.elapsed().as_millis() as i64;
        Ok(Outcome {
            fields: info.fields,
            rows,
            summary: Summary { available_ms, consumed_ms: (total - available_ms).max(0), stats },
        })
    }

    fn begin(&mut self) -> Result<(), Error> {
        let config = self.config();
        self.session.begin(config)
    }

    fn commit(&mut self) -> Result<(), Error> {
        self.session.commit().map(|_| ())
    }

    fn rollback(&mut self) -> Result<(), Error> {
        self.session.rollback()
    }

    fn use_database(&mut self, name: Option<String>) {
        self.database = name;
    }

    fn database(&self) -> String {
        self.database.clone().unwrap_or_else(|| "neo4j".into())
    }

    fn describe(&self) -> String {
        format!("Opened {} in process.", self.path)
    }

    fn close(self: Box<Self>) -> anyhow::Result<()> {
        let LocalBackend { db, session, .. } = *self;
        drop(session);
        db.shutdown().context("closing the database")
    }
}
