//! Arbor's HTTP port: Neo4j's Query API v2 (`/db/{name}/query/v2`, explicit transactions under
//! `/tx`), the discovery document (`GET /`), health (`/health/live`, `/health/ready`) and
//! Prometheus metrics (`/metrics`), on one port (`--http-listen`, default 127.0.0.1:7474).
//!
//! Layers: `server` (accept loop on a small tokio runtime, optional TLS with tokio-rustls,
//! HTTP/1.1 with hyper), `routes` (the axum router and handlers), `query_api` (requests,
//! running a statement, the answer's JSON), `txns` (open explicit transactions and their
//! expiry), `json` (values ↔ plain and typed JSON), `auth` (basic auth against the Bolt
//! server's user store and login limiter), `browser` (the embedded Arbor Browser page at
//! `/browser/`).
//!
//! **Concurrency model.** Two async worker threads parse requests and write answers; the engine
//! is synchronous, so every query (and every password check) runs on tokio's blocking pool,
//! in a session of its own (an explicit transaction keeps its session between requests).
//!
//! **Architecture Invariant:** like `bolt`, this crate calls the engine only through `Session`
//! and the metrics/query-log modules, and never interprets Cypher. Engine types are converted
//! here; they are never made serialisable. Health and metrics need no authentication (as
//! Neo4j's Prometheus endpoint); the Query API does when `--auth basic` is on.

mod auth;
mod browser;
pub mod json;
pub mod query_api;
mod routes;
mod server;
mod txns;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use arbor_auth::UserStore;
use arbor_engine::logins::LoginGuard;
use arbor_engine::Database;
use arbor_model::Error;

pub use server::HttpServer;

/// What the HTTP server needs at start-up.
#[derive(Clone)]
pub struct HttpConfig {
    /// TLS (https) with the Bolt server's certificate; `None`: plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// `None`: authentication disabled.
    pub auth: Option<UserStore>,
    /// The login limiter shared with Bolt.
    pub logins: Arc<LoginGuard>,
    /// Neo4j's `server.http.transaction_idle_timeout` (default 30 s).
    pub transaction_idle_timeout: Duration,
    /// The Bolt address the discovery document names (`host:port`).
    pub bolt_address: Option<String>,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
}

impl HttpConfig {
    pub fn new(logins: Arc<LoginGuard>) -> HttpConfig {
        HttpConfig {
            tls: None,
            auth: None,
            logins,
            transaction_idle_timeout: Duration::from_secs(30),
            bolt_address: None,
            max_body_bytes: 64 << 20,
        }
    }
}

/// State shared by every request.
pub(crate) struct AppState {
    /// Set once the store is open and recovered (`/health/ready` answers 200 from then on).
    db: OnceLock<Database>,
    auth: auth::Authenticator,
    txns: txns::Registry,
    bolt_address: Option<String>,
    https: bool,
    stopping: AtomicBool,
    connections: AtomicU64,
    /// The `neo4j-cluster-affinity` header's value: base64 of this server's address.
    affinity: String,
}

impl AppState {
    fn new(config: &HttpConfig, local: SocketAddr) -> AppState {
        use base64::Engine as _;
        AppState {
            db: OnceLock::new(),
            auth: auth::Authenticator::new(config.auth.clone(), config.logins.clone()),
            txns: txns::Registry::new(config.transaction_idle_timeout),
            bolt_address: config.bolt_address.clone(),
            https: config.tls.is_some(),
            stopping: AtomicBool::new(false),
            connections: AtomicU64::new(0),
            affinity: base64::engine::general_purpose::STANDARD.encode(local.to_string()),
        }
    }

    /// The database, once ready.
    pub(crate) fn database(&self) -> Result<&Database, ApiError> {
        let unavailable = |message: &str| ApiError {
            code: "Neo.TransientError.General.DatabaseUnavailable".into(),
            message: message.into(),
        };
        match self.db.get() {
            Some(db) if !self.stopping.load(Ordering::Relaxed) => Ok(db),
            Some(_) => Err(unavailable("The server is shutting down.")),
            None => Err(unavailable("The database is starting (recovery is not done yet).")),
        }
    }

    pub(crate) fn next_connection(&self) -> u64 {
        self.connections.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// A failure as the Query API reports it: Neo4j's status code and a message.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub code: String,
    pub message: String,
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        ApiError { code: e.status.code().to_string(), message: e.message }
    }
}
