//! `arbor serve --config FILE`: the TOML configuration file and defaults.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use arbor_engine::{DatabaseConfig, Durability};
use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    None,
    Basic,
}

/// `tls_level`: whether plaintext Bolt is still served next to TLS (Neo4j's
/// `server.bolt.tls_level`; without a certificate Bolt is plaintext only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TlsLevelArg {
    Required,
    Optional,
}

/// The configuration file. Every key is optional; flags override it.
///
/// ```toml
/// data = "./arbor-data"
/// listen = "127.0.0.1:7687"
/// auth = "none"                 # or "basic"
/// durability = "sync"           # or "async", "off"
/// checkpoint_interval_secs = 300
/// checkpoint_wal_mib = 256
/// max_connections = 1000           # open Bolt connections, idle ones included
/// "server.bolt.thread_pool_max_size" = 400  # connections served by a thread at once
/// advertised_address = "db.example.com:7687"
/// tls_cert = "/etc/arbor/bolt.crt"  # PEM chain; with tls_key enables bolt+s:// and neo4j+s://
/// tls_key = "/etc/arbor/bolt.key"   # PEM private key
/// tls_level = "required"            # or "optional" (plaintext Bolt too, same port)
/// transaction_timeout = "30s"       # server-wide; "0" = none; a driver's smaller one wins
/// handshake_timeout = "10s"         # total, from connect to the end of the Bolt handshake
/// login_timeout = "20s"             # total, from connect (or LOGOFF) to the credentials
/// auth_max_failed_attempts = 3      # dbms.security.auth_max_failed_attempts; 0 = no lock
/// auth_lock_time = "5s"             # dbms.security.auth_lock_time
/// memory_limit = "4GiB"             # page cache + query memory (a quarter, unless the pool is set)
/// import_dir = "/var/lib/arbor/import"  # LOAD CSV file:/// URLs; default <data>/import
/// "db.memory.transaction.total.max" = "2g"  # all transactions together; "0" = none
/// "db.memory.transaction.max" = "512m"      # one transaction; default: the whole pool
/// http_listen = "127.0.0.1:7474"            # Query API, health, /metrics; "off" disables
/// http_transaction_idle_timeout = "30s"     # server.http.transaction_idle_timeout
/// "db.logs.query.enabled" = "info"          # off | info | verbose
/// "db.logs.query.threshold" = "500ms"
/// "db.logs.query.parameter_logging_enabled" = true
/// "db.logs.query.path" = "/var/log/arbor/query.log"   # default <data>/logs/query.log
/// "db.logs.query.rotation.size" = "20m"
/// "db.logs.query.rotation.keep_number" = 7
/// ```
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub data: Option<PathBuf>,
    pub listen: Option<String>,
    pub auth: Option<AuthMode>,
    pub durability: Option<String>,
    pub checkpoint_interval_secs: Option<u64>,
    pub checkpoint_wal_mib: Option<u64>,
    pub max_connections: Option<usize>,
    /// Neo4j's `server.bolt.thread_pool_max_size` (also `bolt_thread_pool_max_size`).
    #[serde(rename = "server.bolt.thread_pool_max_size", alias = "bolt_thread_pool_max_size")]
    pub bolt_thread_pool_max_size: Option<usize>,
    pub advertised_address: Option<String>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub tls_level: Option<TlsLevelArg>,
    /// Neo4j's `db.transaction.timeout`: "30s", "500ms", "2m", "0" (none; the default).
    pub transaction_timeout: Option<String>,
    pub handshake_timeout: Option<String>,
    pub login_timeout: Option<String>,
    pub auth_max_failed_attempts: Option<u32>,
    pub auth_lock_time: Option<String>,
    /// The page cache's budget: "512MiB", "4g", "25%" of the machine; default half of RAM.
    pub memory_limit: Option<String>,
    /// Neo4j's `server.directories.import`: where `LOAD CSV` reads `file:///` URLs.
    pub import_dir: Option<PathBuf>,
    /// Neo4j's `db.memory.transaction.total.max` (also `memory_pool_max`): "2g", "512m", "0"
    /// (none). Default: a quarter of `memory_limit` when set, else 70 % of RAM minus the store's
    /// share.
    #[serde(rename = "db.memory.transaction.total.max", alias = "memory_pool_max")]
    pub memory_pool_max: Option<String>,
    /// Neo4j's `db.memory.transaction.max` (also `transaction_memory_max`). Default: none
    /// beyond the pool.
    #[serde(rename = "db.memory.transaction.max", alias = "transaction_memory_max")]
    pub transaction_memory_max: Option<String>,
    /// The HTTP port: "HOST:PORT" or "off"; default 127.0.0.1:7474.
    pub http_listen: Option<String>,
    /// Neo4j's `server.http.transaction_idle_timeout` for Query API transactions.
    #[serde(alias = "server.http.transaction_idle_timeout")]
    pub http_transaction_idle_timeout: Option<String>,
    #[serde(rename = "db.logs.query.enabled")]
    pub query_log_enabled: Option<String>,
    #[serde(rename = "db.logs.query.threshold")]
    pub query_log_threshold: Option<String>,
    #[serde(rename = "db.logs.query.parameter_logging_enabled")]
    pub query_log_parameters: Option<bool>,
    #[serde(rename = "db.logs.query.path")]
    pub query_log_path: Option<PathBuf>,
    #[serde(rename = "db.logs.query.rotation.size")]
    pub query_log_rotation_size: Option<String>,
    #[serde(rename = "db.logs.query.rotation.keep_number")]
    pub query_log_rotation_keep: Option<u32>,
}

pub fn default_data_dir() -> PathBuf {
    PathBuf::from("./arbor-data")
}

/// Creates the data directory (and missing parents) owner-only on Unix: it holds the database
/// and the users file.
pub(crate) fn create_data_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Parses a memory size setting (`name` for the error), e.g. `512m`, `2g`, `0`.
pub fn parse_memory(name: &str, text: &str) -> anyhow::Result<u64> {
    arbor_engine::memory_limits::parse_size(text).map_err(|e| anyhow::anyhow!("{name}: {e}"))
}

impl FileConfig {
    pub fn load(path: &Path) -> anyhow::Result<FileConfig> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config file {}", path.display()))?;
        toml::from_str(&text).with_context(|| format!("in config file {}", path.display()))
    }

    pub fn listen(&self) -> anyhow::Result<SocketAddr> {
        let text = self.listen.as_deref().unwrap_or("127.0.0.1:7687");
        text.parse().with_context(|| format!("config `listen`: `{text}` is not HOST:PORT"))
    }

    /// The engine configuration; `durability_flag` and `memory_flag` override the file's
    /// `durability` and `memory_limit`.
    pub fn database_config(
        &self,
        durability_flag: Option<&str>,
        memory_flag: Option<&str>,
    ) -> anyhow::Result<DatabaseConfig> {
        let mut config = DatabaseConfig::default();
        if let Some(m) = memory_flag.or(self.memory_limit.as_deref()) {
            config.memory_limit = Some(memory(m).with_context(|| format!("memory limit `{m}`"))?);
        }
        if let Some(d) = durability_flag.or(self.durability.as_deref()) {
            config.durability = match d {
                "sync" => Durability::Sync,
                "async" => Durability::Async,
                "off" => Durability::Off,
                other => bail!("durability `{other}` is not one of sync, async, off"),
            };
        }
        if let Some(s) = self.checkpoint_interval_secs {
            config.checkpoint_interval = Duration::from_secs(s.max(1));
        }
        if let Some(m) = self.checkpoint_wal_mib {
            config.checkpoint_wal_bytes = m.max(1) << 20;
        }
        Ok(config)
    }
}

/// Parses `2G`, `512m`, `1.5g`, `1000000`, `80%`.
pub(crate) fn memory(s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        let p: f64 = p.trim().parse().with_context(|| format!("bad percentage `{s}`"))?;
        let total = arbor_import::progress::machine_memory()
            .context("cannot read the machine's memory size for a percentage")?;
        return Ok((total as f64 * p / 100.0) as u64);
    }
    let lower = t.to_ascii_lowercase();
    let lower = lower.trim_end_matches(['b', 'i']);
    let (num, mult) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 1u64 << 10),
        Some('m') => (&lower[..lower.len() - 1], 1 << 20),
        Some('g') => (&lower[..lower.len() - 1], 1 << 30),
        Some('t') => (&lower[..lower.len() - 1], 1 << 40),
        _ => (lower, 1),
    };
    let v: f64 = num.trim().parse().with_context(|| format!("bad memory size `{s}`"))?;
    Ok((v * mult as f64) as u64)
}

/// Parses a timeout such as `30s`, `500ms`, `2m`, `1h` or `0` (a bare number is seconds).
pub(crate) fn parse_timeout(text: &str) -> anyhow::Result<std::time::Duration> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 =
        num.parse().with_context(|| format!("timeout `{text}`: expected e.g. 30s, 500ms, 2m"))?;
    let ms = match unit.trim() {
        "ms" => Some(n),
        "" | "s" => n.checked_mul(1000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        other => bail!("timeout `{text}`: unknown unit `{other}` (ms, s, m, h)"),
    };
    let ms = ms.with_context(|| format!("timeout `{text}` is too large"))?;
    Ok(std::time::Duration::from_millis(ms))
}
