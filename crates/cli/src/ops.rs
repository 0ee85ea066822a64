//! `arbor serve`'s operations surface: the HTTP port (`--http-listen`: Query API, health,
//! Prometheus metrics; crate `arbor-http`) and the query log (`--query-log*`, Neo4j's
//! `db.logs.query.*`), from flags over the configuration file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use arbor_engine::query_log::{QueryLogConfig, QueryLogLevel};

use crate::config::FileConfig;

#[derive(clap::Args, Default)]
pub struct OpsArgs {
    /// Address of the HTTP port (Query API, /health/live, /health/ready, /metrics), or `off`.
    /// Default: 127.0.0.1:7474.
    #[arg(long, value_name = "HOST:PORT|off")]
    pub http_listen: Option<String>,
    /// Query log (db.logs.query.enabled): `off` (default), `info` (queries over the threshold
    /// and failures), `verbose` (every query's start and end).
    #[arg(long, value_name = "off|info|verbose")]
    pub query_log: Option<String>,
    /// Queries faster than this are not logged at `info` (db.logs.query.threshold), e.g.
    /// `500ms`, `2s`. Default: 0 (all).
    #[arg(long)]
    pub query_log_threshold: Option<String>,
    /// Log query parameters (db.logs.query.parameter_logging_enabled). Default: true.
    #[arg(long)]
    pub query_log_parameters: Option<bool>,
    /// Query log file. Default: <data>/logs/query.log.
    #[arg(long)]
    pub query_log_path: Option<PathBuf>,
}

/// Where the HTTP port listens.
pub struct HttpListen {
    pub addr: SocketAddr,
    /// Set by a flag or the file (a failure to bind it stops the start); the default address
    /// is given up with a warning when taken, so several servers can run on one machine.
    pub explicit: bool,
}

/// The HTTP listen address, `None` when disabled.
pub fn http_listen(args: &OpsArgs, file: &FileConfig) -> anyhow::Result<Option<HttpListen>> {
    let configured = args.http_listen.as_deref().or(file.http_listen.as_deref());
    let text = configured.unwrap_or("127.0.0.1:7474");
    if text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let addr: SocketAddr = text
        .parse()
        .with_context(|| format!("http listen address `{text}` is not HOST:PORT or off"))?;
    Ok(Some(HttpListen { addr, explicit: configured.is_some() }))
}

/// Binds and starts the HTTP port (before the store opens: `/health/ready` answers 503 until
/// the database is handed over).
pub fn start_http(
    listen: HttpListen,
    file: &FileConfig,
    mut config: arbor_http::HttpConfig,
) -> anyhow::Result<Option<arbor_http::HttpServer>> {
    let HttpListen { addr: listen, explicit } = listen;
    if !listen.ip().is_loopback() && config.auth.is_none() {
        bail!(
            "refusing to serve HTTP on {listen} without authentication: use --auth basic or a \
             loopback --http-listen address"
        );
    }
    if let Some(t) = file.http_transaction_idle_timeout.as_deref() {
        config.transaction_idle_timeout = crate::config::parse_timeout(t)?;
    }
    let listener = match std::net::TcpListener::bind(listen) {
        Ok(l) => l,
        Err(e) if !explicit => {
            tracing::warn!(
                "HTTP port off: cannot bind the default {listen} ({e}); set --http-listen"
            );
            return Ok(None);
        }
        Err(e) => return Err(e).with_context(|| format!("binding the HTTP port {listen}")),
    };
    let https = config.tls.is_some();
    let server = arbor_http::HttpServer::start(listener, config)
        .with_context(|| format!("starting the HTTP server on {listen}"))?;
    let scheme = if https { "https" } else { "http" };
    tracing::info!("HTTP server listening on {scheme}://{}", server.local_addr());
    Ok(Some(server))
}

/// The HTTP configuration shared with Bolt: users, login limiter, TLS.
pub fn http_config(
    auth: Option<arbor_bolt::AuthStore>,
    logins: Arc<arbor_engine::logins::LoginGuard>,
    tls: Option<&arbor_bolt::tls::TlsSetup>,
    bolt_address: String,
) -> arbor_http::HttpConfig {
    let mut c = arbor_http::HttpConfig::new(logins);
    c.auth = auth;
    c.tls = tls.map(|t| t.config.clone());
    c.bolt_address = Some(bolt_address);
    c
}

/// Installs the query log's settings.
pub fn configure_query_log(args: &OpsArgs, file: &FileConfig, data: &Path) -> anyhow::Result<()> {
    let mut c = QueryLogConfig::for_data_dir(data);
    if let Some(level) = args.query_log.as_deref().or(file.query_log_enabled.as_deref()) {
        c.level =
            QueryLogLevel::parse(level).map_err(|e| anyhow::anyhow!("query log level: {e}"))?;
    }
    if let Some(t) = args.query_log_threshold.as_deref().or(file.query_log_threshold.as_deref()) {
        c.threshold = crate::config::parse_timeout(t)?;
    }
    if let Some(p) = args.query_log_parameters.or(file.query_log_parameters) {
        c.parameters = p;
    }
    if let Some(p) = args.query_log_path.clone().or(file.query_log_path.clone()) {
        c.path = p;
    }
    if let Some(s) = file.query_log_rotation_size.as_deref() {
        c.rotation_size = crate::config::parse_memory("db.logs.query.rotation.size", s)?.max(1);
    }
    if let Some(n) = file.query_log_rotation_keep {
        c.rotation_keep = n;
    }
    if c.level != QueryLogLevel::Off {
        tracing::info!(path = %c.path.display(), level = ?c.level, threshold = ?c.threshold, "query log on");
    }
    arbor_engine::query_log::configure(c.clone())
        .with_context(|| format!("creating the query log directory for {}", c.path.display()))
}
