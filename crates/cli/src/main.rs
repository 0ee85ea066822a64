//! The `arbor` binary: `serve` (Bolt server over an embedded data directory), `shell` (run Cypher
//! against a data directory in process), `passwd` (manage users for basic auth), `import` (bulk
//! CSV import, neo4j-admin compatible), `check`, `bench`, `backup`/`restore`/`dump`/`load`.
//!
//! **Architecture Invariant:** this is the only crate that uses clap, anyhow and
//! tracing-subscriber; everything it does is a thin call into `engine` and `bolt`.

mod alloc;
mod backup;
mod bench;
mod config;
mod import;
mod ops;
mod shell;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};

use crate::config::{create_data_dir, parse_timeout, AuthMode, FileConfig};

#[derive(Parser)]
#[command(
    name = "arbor",
    version,
    about = "Arbor: a property-graph database that speaks Cypher over Bolt"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the Bolt server on an embedded data directory.
    Serve(Box<ServeArgs>),
    /// A Cypher shell like cypher-shell: over Bolt (`-a bolt://...`), or in process with `--data DIR`.
    Shell(shell::ShellArgs),
    /// Set a user's password for basic auth (stored argon2id-hashed in the data directory).
    Passwd(PasswdArgs),
    /// Verify a data directory: checksums, adjacency symmetry, counts, index consistency.
    Check(CheckArgs),
    /// Bulk-import neo4j-admin style CSV files (plain, .gz, .zip) into a new data directory.
    Import(Box<import::ImportArgs>),
    /// Run a benchmark (`traversal`, `mgbench`, `copy`) with the `arbor-bench` binary.
    Bench(bench::BenchArgs),
    /// Back up a running server over Bolt (incremental when the directory holds a backup).
    Backup(backup::BackupArgs),
    /// Restore a backup directory into a new data directory.
    Restore(backup::RestoreArgs),
    /// Write a stopped database into one checksummed file.
    Dump(backup::DumpArgs),
    /// Load a dump file into a new data directory.
    Load(backup::LoadArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Data directory (created if missing). Default: ./arbor-data
    #[arg(long)]
    data: Option<PathBuf>,
    /// Address to listen on for Bolt. Default: 127.0.0.1:7687
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// TOML configuration file; command-line flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Authentication: `none` (default on loopback) or `basic` (required off loopback).
    #[arg(long, value_enum)]
    auth: Option<AuthMode>,
    /// Initial password for user `neo4j` when the user store is empty (basic auth).
    #[arg(long, env = "ARBOR_INITIAL_PASSWORD", hide_env_values = true)]
    initial_password: Option<String>,
    /// Commit durability: `sync` (fsync before success, group commit; default), `async`, `off`.
    #[arg(long)]
    durability: Option<String>,
    /// Address advertised in routing tables (neo4j:// URIs). Default: the listen address.
    #[arg(long)]
    advertised_address: Option<String>,
    /// PEM certificate chain for TLS (bolt+s://, neo4j+s://); needs --tls-key.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key for TLS; needs --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// With TLS: `required` (default; plaintext connections are closed) or `optional`.
    #[arg(long, value_enum)]
    tls_level: Option<config::TlsLevelArg>,
    /// Server-wide transaction timeout (Neo4j's db.transaction.timeout), e.g. `30s`, `500ms`,
    /// `2m`; `0` (default): none. A driver's smaller timeout wins.
    #[arg(long)]
    transaction_timeout: Option<String>,
    /// Memory all running transactions may hold together (Neo4j's
    /// db.memory.transaction.total.max), e.g. `2g`, `512m`; `0`: none. Default: 70 % of RAM
    /// minus the store's share. A query over it fails with MemoryPoolOutOfMemoryError.
    #[arg(long, value_name = "SIZE")]
    memory_pool_max: Option<String>,
    /// Memory one transaction may hold (Neo4j's db.memory.transaction.max); `0` (default):
    /// the whole pool. A query over it fails with TransactionOutOfMemoryError.
    #[arg(long, value_name = "SIZE")]
    transaction_memory_max: Option<String>,
    /// Where LOAD CSV reads `file:///` URLs (Neo4j's server.directories.import); default
    /// `<data>/import`. Files outside it cannot be read.
    #[arg(long)]
    import_dir: Option<PathBuf>,
    /// Memory budget for segment pages and, unless `--memory-pool-max` is given, query memory
    /// (a quarter of it from 256 MiB), e.g. `512MiB`, `4g`, `25%`. Default: half of RAM for the
    /// page cache. A budget too small to run is refused at start with the minimum named.
    #[arg(long)]
    memory_limit: Option<String>,
    /// Bolt connections open at once, idle ones included (each idle one costs ~10 KiB and no
    /// thread); more are refused at once with Neo.TransientError.Request.NoThreadsAvailable.
    /// Default: 1000.
    #[arg(long)]
    max_connections: Option<usize>,
    /// Bolt connections served by a thread at once (Neo4j's server.bolt.thread_pool_max_size);
    /// idle connections do not count. A request beyond waits up to 5s for a thread, then
    /// fails with Neo.TransientError.Request.NoThreadsAvailable. Default: 400.
    #[arg(long)]
    bolt_thread_pool_max_size: Option<usize>,
    /// Total time a new connection gets for its Bolt handshake. Default: 10s.
    #[arg(long)]
    handshake_timeout: Option<String>,
    /// Total time from connecting (or LOGOFF) until the credentials must have arrived.
    /// Default: 20s.
    #[arg(long)]
    login_timeout: Option<String>,
    /// Failed logins in a row before a user is locked (dbms.security.auth_max_failed_attempts;
    /// 0 = never). Default: 3.
    #[arg(long)]
    auth_max_failed_attempts: Option<u32>,
    /// How long a user stays locked (dbms.security.auth_lock_time). Default: 5s.
    #[arg(long)]
    auth_lock_time: Option<String>,
    #[command(flatten)]
    ops: ops::OpsArgs,
}

/// Connection limits from flags, else the config file, else the defaults.
fn connection_limits(
    args: &ServeArgs,
    file: &FileConfig,
) -> anyhow::Result<arbor_bolt::ConnectionLimits> {
    let mut limits = arbor_bolt::ConnectionLimits::default();
    if let Some(t) = args.handshake_timeout.as_deref().or(file.handshake_timeout.as_deref()) {
        limits.handshake_timeout = parse_timeout(t)?;
    }
    if let Some(t) = args.login_timeout.as_deref().or(file.login_timeout.as_deref()) {
        limits.login_timeout = parse_timeout(t)?;
    }
    if let Some(n) = args.auth_max_failed_attempts.or(file.auth_max_failed_attempts) {
        limits.logins.max_failed_attempts = n;
    }
    if let Some(t) = args.auth_lock_time.as_deref().or(file.auth_lock_time.as_deref()) {
        limits.logins.lock_time = parse_timeout(t)?;
    }
    if let Some(n) = args.bolt_thread_pool_max_size.or(file.bolt_thread_pool_max_size) {
        anyhow::ensure!(n > 0, "--bolt-thread-pool-max-size must be at least 1");
        limits.max_active = n;
    }
    Ok(limits)
}

/// Applies `--memory-pool-max` / `--transaction-memory-max` (over the file's settings) and the
/// default pool: `split_pool` when a memory limit was split (`split_memory_limit`), else 70 %
/// of RAM minus what the store holds in memory.
fn set_memory_limits(
    db: &arbor_engine::Database,
    (pool_flag, tx_flag): (Option<&str>, Option<&str>),
    file: &FileConfig,
    split_pool: Option<u64>,
) -> anyhow::Result<()> {
    use arbor_engine::memory_limits as m;
    let pool = match (pool_flag.or(file.memory_pool_max.as_deref()), split_pool) {
        (Some(t), _) => config::parse_memory("--memory-pool-max", t)?,
        (None, Some(p)) => p,
        (None, None) => {
            m::physical_memory().map_or(0, |ram| m::default_pool(ram, db.store_memory_bytes()))
        }
    };
    let tx = match tx_flag.or(file.transaction_memory_max.as_deref()) {
        Some(t) => config::parse_memory("--transaction-memory-max", t)?,
        None => 0,
    };
    let show = |n: u64| if n == 0 { "none".to_string() } else { m::format_bytes(n) };
    tracing::info!(pool = %show(pool), transaction = %show(tx), "query memory limits");
    db.set_memory_limits(pool, tx);
    Ok(())
}

/// With an explicit memory limit and no query pool setting, the limit is one budget: the page
/// cache gets `split_limit`'s first part (written into `config`), the pool the second
/// (returned).
fn split_memory_limit(config: &mut arbor_engine::DatabaseConfig, pool_set: bool) -> Option<u64> {
    let limit = config.memory_limit.filter(|_| !pool_set)?;
    let (cache, pool) = arbor_engine::memory_limits::split_limit(limit);
    config.memory_limit = Some(cache);
    tracing::info!(
        page_cache = %arbor_engine::memory_limits::format_bytes(cache),
        queries = %arbor_engine::memory_limits::format_bytes(pool),
        "memory limit split between the page cache and query memory"
    );
    Some(pool)
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Data directory. Default: ./arbor-data
    #[arg(long)]
    data: Option<PathBuf>,
}

#[derive(clap::Args)]
struct PasswdArgs {
    /// Data directory. Default: ./arbor-data
    #[arg(long)]
    data: Option<PathBuf>,
    /// User name.
    #[arg(long, default_value = "neo4j")]
    user: String,
    /// New password (or env ARBOR_PASSWORD).
    #[arg(long, env = "ARBOR_PASSWORD", hide_env_values = true)]
    password: String,
}

fn main() {
    // The old `--nodes:Label files` spelling of `arbor import` is rewritten before clap sees it.
    let cli = Cli::parse_from(import::normalize_argv(std::env::args_os().collect()));
    // Only a server purges freed memory at once (resident size after a load or a delete); a
    // bulk import frees and reallocates large buffers all the time, and eager purging cost it a
    // fifth of its wall time in `madvise` (B2B scale 0.01: 2.2 s of system time).
    alloc::tune(matches!(cli.command, Command::Serve(_)));
    arbor_engine::memory_limits::set_memory_release_hook(alloc::release);
    init_logging();
    let result = match cli.command {
        Command::Serve(args) => serve(*args),
        Command::Shell(args) => shell::run(args),
        Command::Passwd(args) => passwd(args),
        Command::Check(args) => check(args),
        Command::Import(args) => import::run(*args),
        Command::Bench(args) => bench::run(args),
        Command::Backup(args) => backup::backup(args),
        Command::Restore(args) => backup::restore(args),
        Command::Dump(args) => backup::dump(args),
        Command::Load(args) => backup::load(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ARBOR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let file = match &args.config {
        Some(path) => FileConfig::load(path)?,
        None => FileConfig::default(),
    };
    let limits = connection_limits(&args, &file)?;
    let tls = tls_setup(&args, &file)?;
    let data = args.data.or(file.data.clone()).unwrap_or_else(config::default_data_dir);
    let listen = match args.listen {
        Some(l) => l,
        None => file.listen()?,
    };
    let auth_mode = args.auth.or(file.auth).unwrap_or(if listen.ip().is_loopback() {
        AuthMode::None
    } else {
        AuthMode::Basic
    });
    if auth_mode == AuthMode::None && !listen.ip().is_loopback() {
        bail!(
            "refusing to listen on {listen} without authentication: use --auth basic (with \
             --initial-password or ARBOR_INITIAL_PASSWORD) or listen on a loopback address"
        );
    }
    let mut db_config =
        file.database_config(args.durability.as_deref(), args.memory_limit.as_deref())?;
    let pool_set = args.memory_pool_max.is_some() || file.memory_pool_max.is_some();
    let split_pool = split_memory_limit(&mut db_config, pool_set);
    let tx_timeout =
        match args.transaction_timeout.as_deref().or(file.transaction_timeout.as_deref()) {
            Some(t) => parse_timeout(t)?,
            None => std::time::Duration::ZERO,
        };

    create_data_dir(&data)
        .with_context(|| format!("creating data directory {}", data.display()))?;
    let logins = Arc::new(arbor_bolt::LoginGuard::new(limits.logins.clone()));
    let auth = match auth_mode {
        AuthMode::None => None,
        AuthMode::Basic => {
            let mut store = arbor_bolt::AuthStore::open(&data.join("auth.toml"))
                .with_context(|| format!("opening user store in {}", data.display()))?;
            if store.is_empty() {
                let Some(pw) = args.initial_password.as_deref() else {
                    bail!(
                        "basic auth needs an initial password for user `neo4j`: pass \
                         --initial-password or set ARBOR_INITIAL_PASSWORD"
                    );
                };
                store.set_password("neo4j", pw).context("storing the initial password")?;
            }
            Some(store)
        }
    };

    let http = match ops::http_listen(&args.ops, &file)? {
        Some(addr) => {
            let bolt = args.advertised_address.clone().unwrap_or_else(|| listen.to_string());
            let c = ops::http_config(auth.clone(), logins.clone(), tls.as_ref(), bolt);
            ops::start_http(addr, &file, c)?
        }
        None => None,
    };
    let db = arbor_engine::Database::open(&data, db_config)
        .with_context(|| format!("opening database at {}", data.display()))?;
    ops::configure_query_log(&args.ops, &file, &data)?;
    if auth.is_none() {
        // Without authentication Cypher's CREATE USER etc. still manage the stored users, as in
        // Neo4j (with basic auth the server attaches the store it authenticates against).
        match arbor_bolt::AuthStore::open(&data.join("auth.toml")) {
            Ok(store) => db.attach_users(store),
            Err(e) => tracing::warn!("user administration works in memory only: {e}"),
        }
    }
    db.set_transaction_timeout(tx_timeout);
    set_memory_limits(
        &db,
        (args.memory_pool_max.as_deref(), args.transaction_memory_max.as_deref()),
        &file,
        split_pool,
    )?;
    if let Some(dir) = args.import_dir.as_ref().or(file.import_dir.as_ref()) {
        db.set_import_dir(dir);
    }
    let config = arbor_bolt::ServerConfig {
        listen,
        auth,
        max_connections: args.max_connections.or(file.max_connections).unwrap_or(1000),
        advertised_address: args.advertised_address.or(file.advertised_address.clone()),
        tls,
    };
    let listener = arbor_bolt::bind(&config).with_context(|| format!("binding {listen}"))?;
    let shutdown = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        // The first signal starts the shutdown (running queries are interrupted, the store is
        // checkpointed and its lock released); a second one exits at once.
        signal_hook::flag::register_conditional_shutdown(signal, 1, shutdown.clone())
            .context("installing signal handler")?;
        signal_hook::flag::register(signal, shutdown.clone())
            .context("installing signal handler")?;
    }
    let local = listener.local_addr().context("reading the bound address")?;
    report_settings(&config, &local, &limits);
    tracing::info!(data = %data.display(), "Bolt server listening on {local}");
    if let Some(h) = &http {
        h.set_database(db.clone());
    }
    arbor_bolt::serve_listener_shared(
        listener,
        db.clone(),
        config,
        limits,
        logins,
        shutdown.clone(),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(h) = http {
        h.stop();
    }
    if shutdown.load(Ordering::SeqCst) {
        tracing::info!("shutting down: writing a checkpoint");
    }
    db.shutdown().context("checkpointing on shutdown")?;
    tracing::info!("stopped cleanly");
    Ok(())
}

/// Tells the engine the server-level values `SHOW SETTINGS` lists under Neo4j's names.
fn report_settings(
    config: &arbor_bolt::ServerConfig,
    local: &std::net::SocketAddr,
    limits: &arbor_bolt::ConnectionLimits,
) {
    use arbor_engine::show_settings::report;
    let listen = local.to_string();
    report("server.bolt.listen_address", &listen);
    report(
        "server.bolt.advertised_address",
        config.advertised_address.as_deref().unwrap_or(&listen),
    );
    report("dbms.security.auth_enabled", if config.auth.is_some() { "true" } else { "false" });
    report("server.bolt.thread_pool_max_size", &limits.max_active.to_string());
    let logins = &limits.logins;
    report("dbms.security.auth_max_failed_attempts", &logins.max_failed_attempts.to_string());
    let lock_ms = logins.lock_time.as_millis();
    let lock = if lock_ms.is_multiple_of(1000) {
        format!("{}s", lock_ms / 1000)
    } else {
        format!("{lock_ms}ms")
    };
    report("dbms.security.auth_lock_time", &lock);
}

/// TLS from `--tls-cert`/`--tls-key`/`--tls-level` over the file's settings (Bolt, and the
/// HTTP port).
fn tls_setup(
    args: &ServeArgs,
    file: &FileConfig,
) -> anyhow::Result<Option<arbor_bolt::tls::TlsSetup>> {
    Ok(
        match (
            args.tls_cert.clone().or(file.tls_cert.clone()),
            args.tls_key.clone().or(file.tls_key.clone()),
        ) {
            (Some(cert), Some(key)) => {
                let level = match args
                    .tls_level
                    .or(file.tls_level)
                    .unwrap_or(config::TlsLevelArg::Required)
                {
                    config::TlsLevelArg::Required => arbor_bolt::tls::TlsLevel::Required,
                    config::TlsLevelArg::Optional => arbor_bolt::tls::TlsLevel::Optional,
                };
                let setup = arbor_bolt::tls::TlsSetup::from_pem_files(&cert, &key, level)
                    .map_err(|e| anyhow::anyhow!(e))?;
                tracing::info!(cert = %cert.display(), ?level, "TLS enabled for Bolt");
                Some(setup)
            }
            (None, None) => {
                if args.tls_level.or(file.tls_level).is_some() {
                    bail!("tls_level needs a certificate: set --tls-cert and --tls-key");
                }
                None
            }
            _ => bail!(
            "TLS needs both a certificate (--tls-cert / tls_cert) and a key (--tls-key / tls_key)"
        ),
        },
    )
}

fn check(args: CheckArgs) -> anyhow::Result<()> {
    let data = args.data.unwrap_or_else(config::default_data_dir);
    if !data.is_dir() {
        bail!("no data directory at {}", data.display());
    }
    // Read-only: checking must not change what it checks (no torn-tail repair, no new log
    // segment, no checkpoint on close).
    let db = arbor_engine::Database::open_read_only(&data)
        .with_context(|| format!("opening database at {} (recovery failed)", data.display()))?;
    let report = db.check().context("checking the store")?;
    match &report.checkpoint {
        Some(name) => println!("checkpoint: {name} (commit {})", report.checkpoint_ts),
        None => println!("checkpoint: (none)"),
    }
    for name in &report.segment_files {
        println!("page file: {name} ({} pages, every checksum verified)", report.segment_pages);
    }
    println!("wal: {} segments, {} records", report.wal_segments, report.wal_records);
    for seg in &report.segments {
        println!(
            "segment {}: {} records, commits {} to {}, {} bytes",
            seg.name, seg.records, seg.first_ts, seg.last_ts, seg.bytes
        );
    }
    println!("last commit: {}", report.last_commit());
    for note in &report.notes {
        println!("note: {note}");
    }
    println!(
        "snapshot: {} nodes, {} relationships, {} index entries",
        report.nodes, report.relationships, report.index_entries
    );
    db.shutdown().context("closing the database")?;
    if report.is_ok() {
        println!("OK: no problems found");
        Ok(())
    } else {
        for p in &report.problems {
            println!("PROBLEM: {p}");
        }
        bail!("{} problem(s) found in {}", report.problems.len(), data.display())
    }
}

fn passwd(args: PasswdArgs) -> anyhow::Result<()> {
    let data = args.data.unwrap_or_else(config::default_data_dir);
    create_data_dir(&data)
        .with_context(|| format!("creating data directory {}", data.display()))?;
    let mut store = arbor_bolt::AuthStore::open(&data.join("auth.toml"))?;
    store.set_password(&args.user, &args.password)?;
    println!("password set for user {}", args.user);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_timeout;
    use std::time::Duration;

    #[test]
    fn timeouts_parse_with_units() {
        assert_eq!(parse_timeout("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_timeout("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_timeout("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_timeout("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_timeout("7").unwrap(), Duration::from_secs(7));
        assert!(parse_timeout("5 parsecs").is_err());
        assert!(parse_timeout("s").is_err());
    }
}
