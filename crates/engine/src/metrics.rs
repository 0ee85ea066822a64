//! Server metrics: query and transaction counters kept by the engine, connection and login
//! counters the servers (`bolt`, `http`) bump, and [`render`], the Prometheus text format
//! (version 0.0.4) the HTTP port serves at `/metrics`, which also reads the storage counters
//! (`arbor_storage::metrics`), the query memory pool and the page cache.
//!
//! Counters are process-wide relaxed atomics: one `fetch_add` per event on the hot path, and a
//! scrape reads them without stopping anything. A small hand-written encoder instead of a
//! metrics crate: the set is fixed, the format is a few lines per family, and the atomics stay
//! the ones the hot path already touches.
//!
//! [`set_enabled`]`(false)` turns the per-query observation off (metrics, the `query` span;
//! the query log keeps it on while it is on), for an A/B of what observing costs
//! (`examples/observe_cost.rs`, BENCHMARKS.md "Cost of metrics and the query log").

use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

pub use arbor_model::histogram::{Histogram, BUCKET_BOUNDS_MICROS};
use arbor_storage::metrics::STORAGE;

use crate::session::config::QueryType;

/// What the engine counts about queries and transactions.
pub struct QueryMetrics {
    pub read: AtomicU64,
    pub write: AtomicU64,
    pub read_write: AtomicU64,
    pub schema: AtomicU64,
    /// Queries that ended with an error (compile or run time).
    pub failed: AtomicU64,
    /// From `RUN` to the last record (or the error).
    pub latency: Histogram,
    pub tx_started: AtomicU64,
    pub tx_committed: AtomicU64,
    /// Every transaction that did not commit (explicit rollback, error, reset, disconnect).
    pub tx_rolled_back: AtomicU64,
    /// Of those rolled back: lost a write conflict (`Neo.TransientError.Transaction.Outdated`).
    pub tx_conflicted: AtomicU64,
    /// Of those rolled back: terminated, timed out or interrupted.
    pub tx_terminated: AtomicU64,
    /// Auto-commit statements run again after losing a write conflict (session/retry.rs).
    pub tx_rerun: AtomicU64,
}

/// What the servers count about connections and logins.
pub struct ServerMetrics {
    pub bolt_opened: AtomicU64,
    pub bolt_closed: AtomicU64,
    /// Connections refused at accept (connection limit, too many unauthenticated).
    pub bolt_refused: AtomicU64,
    /// Failed or refused logins, Bolt and HTTP together.
    pub failed_logins: AtomicU64,
    pub http_requests: AtomicU64,
}

pub static QUERIES: QueryMetrics = QueryMetrics {
    read: AtomicU64::new(0),
    write: AtomicU64::new(0),
    read_write: AtomicU64::new(0),
    schema: AtomicU64::new(0),
    failed: AtomicU64::new(0),
    latency: Histogram::new(),
    tx_started: AtomicU64::new(0),
    tx_committed: AtomicU64::new(0),
    tx_rolled_back: AtomicU64::new(0),
    tx_conflicted: AtomicU64::new(0),
    tx_terminated: AtomicU64::new(0),
    tx_rerun: AtomicU64::new(0),
};

pub static SERVER: ServerMetrics = ServerMetrics {
    bolt_opened: AtomicU64::new(0),
    bolt_closed: AtomicU64::new(0),
    bolt_refused: AtomicU64::new(0),
    failed_logins: AtomicU64::new(0),
    http_requests: AtomicU64::new(0),
};

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns per-query observation on (the default) or off; set once at start (a transaction
/// running while it changes may be counted as started and never as ended).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether per-query observation is on (one relaxed load).
#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Counts one more of `counter` (relaxed: a monitoring counter orders nothing).
#[inline]
pub fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Counts a query that finished: by its type, or as failed; a query left unfinished (its
/// result dropped by a reset or a new statement) counts only its time.
#[inline]
pub(crate) fn query_finished(query_type: Option<QueryType>, failed: bool, elapsed: Duration) {
    let counter = match (failed, query_type) {
        (true, _) => Some(&QUERIES.failed),
        (false, Some(QueryType::Read)) => Some(&QUERIES.read),
        (false, Some(QueryType::Write)) => Some(&QUERIES.write),
        (false, Some(QueryType::ReadWrite)) => Some(&QUERIES.read_write),
        (false, Some(QueryType::Schema)) => Some(&QUERIES.schema),
        (false, None) => None,
    };
    if let Some(c) = counter {
        bump(c);
    }
    QUERIES.latency.observe(elapsed);
}

fn load(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

/// One metric family: `# HELP`, `# TYPE` and its samples.
fn family(out: &mut String, name: &str, kind: &str, help: &str, samples: &[(&str, u64)]) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    for (labels, v) in samples {
        let _ = writeln!(out, "{name}{labels} {v}");
    }
}

fn histogram(out: &mut String, name: &str, help: &str, h: &Histogram) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
    let (counts, sum_micros) = h.snapshot();
    let mut cumulative = 0;
    for (i, n) in counts.iter().enumerate() {
        cumulative += n;
        match BUCKET_BOUNDS_MICROS.get(i) {
            Some(b) => {
                let le = *b as f64 / 1e6;
                let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
            }
            None => {
                let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {cumulative}");
            }
        }
    }
    let _ = writeln!(out, "{name}_sum {}", sum_micros as f64 / 1e6);
    let _ = writeln!(out, "{name}_count {cumulative}");
}

/// What an open database adds to the metrics page (`Database::gauges`).
pub struct Gauges {
    /// Query memory reserved by running transactions, and the pool's limit (0: none).
    pub pool_used: u64,
    pub pool_limit: u64,
    /// Page-cache hits and misses, when the store reads segments through a pool.
    pub page_cache: Option<(u64, u64)>,
}

/// Every metric in Prometheus text format. `db` is `None` while the store is still opening
/// (then the memory and page-cache families are left out).
pub fn render(db: Option<Gauges>) -> String {
    let mut out = String::with_capacity(8 << 10);
    render_queries(&mut out);
    render_storage(&mut out, db);
    render_server(&mut out);
    out
}

/// Queries and transactions.
fn render_queries(out: &mut String) {
    let q = &QUERIES;
    family(
        out,
        "arbor_queries_total",
        "counter",
        "Queries that finished, by query type (failed: ended with an error).",
        &[
            ("{type=\"read\"}", load(&q.read)),
            ("{type=\"write\"}", load(&q.write)),
            ("{type=\"read_write\"}", load(&q.read_write)),
            ("{type=\"schema\"}", load(&q.schema)),
            ("{type=\"failed\"}", load(&q.failed)),
        ],
    );
    histogram(
        out,
        "arbor_query_duration_seconds",
        "Query time from RUN to the last record.",
        &q.latency,
    );
    let started = load(&q.tx_started);
    let ended = load(&q.tx_committed) + load(&q.tx_rolled_back);
    family(
        out,
        "arbor_transactions_open",
        "gauge",
        "Transactions open now.",
        &[("", started.saturating_sub(ended))],
    );
    family(
        out,
        "arbor_transactions_started_total",
        "counter",
        "Transactions started.",
        &[("", started)],
    );
    family(
        out,
        "arbor_transactions_committed_total",
        "counter",
        "Transactions committed.",
        &[("", load(&q.tx_committed))],
    );
    family(
        out,
        "arbor_transactions_rolled_back_total",
        "counter",
        "Transactions rolled back (explicitly, on error, reset or disconnect).",
        &[("", load(&q.tx_rolled_back))],
    );
    family(
        out,
        "arbor_transactions_conflicted_total",
        "counter",
        "Transactions rolled back after a write conflict (Outdated).",
        &[("", load(&q.tx_conflicted))],
    );
    family(
        out,
        "arbor_transactions_rerun_total",
        "counter",
        "Auto-commit statements run again in a fresh transaction after a write conflict.",
        &[("", load(&q.tx_rerun))],
    );
    family(
        out,
        "arbor_transactions_terminated_total",
        "counter",
        "Transactions terminated, timed out or interrupted.",
        &[("", load(&q.tx_terminated))],
    );
}

/// Commits, the WAL, checkpoints, the memory pool and the page cache.
fn render_storage(out: &mut String, db: Option<Gauges>) {
    histogram(
        out,
        "arbor_commit_duration_seconds",
        "Commit of a writing transaction until durable and visible.",
        &STORAGE.commit,
    );
    histogram(
        out,
        "arbor_wal_fsync_duration_seconds",
        "fdatasync of the write-ahead log (one per group commit).",
        &STORAGE.fsync,
    );
    family(
        out,
        "arbor_wal_bytes_total",
        "counter",
        "Bytes appended to the write-ahead log.",
        &[("", load(&STORAGE.wal_bytes))],
    );
    histogram(
        out,
        "arbor_checkpoint_duration_seconds",
        "Checkpoints written.",
        &STORAGE.checkpoint,
    );
    if let Some(db) = db {
        family(
            out,
            "arbor_memory_pool_used_bytes",
            "gauge",
            "Query memory reserved by running transactions.",
            &[("", db.pool_used)],
        );
        family(
            out,
            "arbor_memory_pool_limit_bytes",
            "gauge",
            "db.memory.transaction.total.max (0: none).",
            &[("", db.pool_limit)],
        );
        if let Some((hits, misses)) = db.page_cache {
            family(
                out,
                "arbor_page_cache_hits_total",
                "counter",
                "Page cache hits.",
                &[("", hits)],
            );
            family(
                out,
                "arbor_page_cache_misses_total",
                "counter",
                "Page cache misses (page reads).",
                &[("", misses)],
            );
        }
    }
}

/// Connections, logins and HTTP requests.
fn render_server(out: &mut String) {
    let s = &SERVER;
    let open = load(&s.bolt_opened).saturating_sub(load(&s.bolt_closed));
    family(
        out,
        "arbor_bolt_connections_open",
        "gauge",
        "Bolt connections open now.",
        &[("", open)],
    );
    family(
        out,
        "arbor_bolt_connections_opened_total",
        "counter",
        "Bolt connections accepted.",
        &[("", load(&s.bolt_opened))],
    );
    family(
        out,
        "arbor_bolt_connections_refused_total",
        "counter",
        "Bolt connections refused (connection limits).",
        &[("", load(&s.bolt_refused))],
    );
    family(
        out,
        "arbor_failed_logins_total",
        "counter",
        "Failed or refused logins (Bolt and HTTP).",
        &[("", load(&s.failed_logins))],
    );
    family(
        out,
        "arbor_http_requests_total",
        "counter",
        "HTTP requests served.",
        &[("", load(&s.http_requests))],
    );
}
