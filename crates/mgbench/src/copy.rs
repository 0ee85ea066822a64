//! The data-copy benchmark (after the Neo4j 4.1 reactive-driver study): copy N nodes from one
//! running server to another over Bolt with three strategies, verify the target (count and an
//! order-independent checksum of every property), and report the time and the client's peak
//! memory.
//!
//! Strategies:
//! - `single`: one thread with two connections; reads the source result (`RUN` + `PULL` all)
//!   and writes it in `UNWIND $batch CREATE` batches pipelined on the target's connection (two
//!   writes sent before the first reply is awaited; the next batch is read from the source
//!   stream while they run). Client memory: three batches (TCP flow control holds the source
//!   back).
//! - `reader-writers`: one reader streams the source result (`PULL` all, record by record) into
//!   a bounded queue of batches; N writer threads, each with its own connection, drain it.
//! - `streaming`: the reader asks for exactly one batch at a time (`PULL n`) and only when the
//!   bounded queue has room, so neither the server nor the client ever holds more than
//!   (queue + writers + 1) batches: memory bounded by the batch size, not by N.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use arbor_bolt::client::{is_transient, Client, ClientConfig};
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::metrics;
use crate::server::{Server, ServerKind};
use serde_json::{json, Value as Json};

/// Which strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Single,
    ReaderWriters,
    Streaming,
}

impl Strategy {
    /// Run order: the bounded strategies first, because freed heap is not always returned to
    /// the OS, so a later strategy's peak RSS can never be lower than an earlier one's.
    pub const ALL: [Strategy; 3] = [Strategy::Streaming, Strategy::ReaderWriters, Strategy::Single];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Single => "single",
            Strategy::ReaderWriters => "reader-writers",
            Strategy::Streaming => "streaming",
        }
    }

    pub fn parse(s: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|x| x.name() == s)
    }
}

#[derive(Clone, Debug)]
pub struct CopyOptions {
    pub nodes: usize,
    pub batch: usize,
    pub writers: usize,
    /// Bounded queue capacity, in batches.
    pub queue: usize,
    pub strategies: Vec<Strategy>,
    pub targets: Vec<ServerKind>,
    pub work_dir: PathBuf,
    pub start_timeout: Duration,
    pub verbose: bool,
}

#[derive(Clone, Debug)]
pub struct CopyRecord {
    pub target: String,
    pub strategy: Strategy,
    pub nodes: usize,
    pub seconds: f64,
    /// Peak RSS of this process during the copy, and its RSS just before.
    pub client_peak_rss_kib: u64,
    pub client_base_rss_kib: u64,
    pub client_cpu_seconds: f64,
    /// CPU seconds the source and the target server used during the copy (what the servers
    /// cost, independent of how loaded the machine was).
    pub source_cpu_seconds: f64,
    pub target_cpu_seconds: f64,
    pub copied: usize,
    pub checksum_ok: bool,
    pub error: Option<String>,
}

impl CopyRecord {
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.checksum_ok && self.copied == self.nodes
    }
}

const READ: &str = "MATCH (n:Item) RETURN n.id AS id, n.name AS name, n.value AS value, \
                    n.score AS score, n.flag AS flag";
const WRITE: &str = "UNWIND $batch AS r CREATE (:Item {id: r.id, name: r.name, value: r.value, \
                     score: r.score, flag: r.flag})";

/// The generated properties of source node `i`.
fn item(i: i64) -> [Value; 5] {
    [
        Value::Int(i),
        Value::String(format!("item-{i:08}").into()),
        Value::Int((i * 7919) % 100_003),
        Value::Float(i as f64 * 0.25),
        Value::Bool(i % 3 == 0),
    ]
}

/// FNV-1a of one row's canonical form; rows are summed, so the order of rows does not matter.
fn row_hash(row: &[Value]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h ^= u64::from(x);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for v in row {
        match v {
            Value::Int(i) => eat(&i.to_le_bytes()),
            Value::Float(f) => eat(&f.to_bits().to_le_bytes()),
            Value::String(s) => eat(s.as_bytes()),
            Value::Bool(b) => eat(&[u8::from(*b)]),
            Value::Null => eat(b"null"),
            other => eat(format!("{other:?}").as_bytes()),
        }
        eat(&[0xff]);
    }
    h
}

fn expected_checksum(n: usize) -> u64 {
    (1..=n as i64).fold(0u64, |acc, i| acc.wrapping_add(row_hash(&item(i))))
}

/// The target's parameter: `$batch`, a list of maps with these keys (in `READ`'s column
/// order), encoded straight from the records (`Client::send_run_rows`).
const KEYS: [&str; 5] = ["id", "name", "value", "score", "flag"];

type Rows = Vec<Vec<Value>>;

/// Writes the `single` strategy keeps on the target's connection at once.
const SINGLE_IN_FLIGHT: usize = 2;

/// Sends one batch write without waiting for its reply.
fn send_write(c: &mut Client, rows: &[Vec<Value>]) -> Result<()> {
    c.send_run_rows(WRITE, "batch", &KEYS, rows)
}

/// Waits for the write sent by [`send_write`], sending it again on a transient error.
fn finish_write(c: &mut Client, rows: &[Vec<Value>]) -> Result<()> {
    let mut tries = 0;
    loop {
        match c.finish_run_all() {
            Ok(_) => return Ok(()),
            Err(e) if is_transient(&e) && tries < 50 && !c.is_broken() => {
                tries += 1;
                send_write(c, rows)?;
            }
            Err(e) => return Err(e),
        }
    }
}

fn write_batch(c: &mut Client, rows: &[Vec<Value>]) -> Result<()> {
    send_write(c, rows)?;
    finish_write(c, rows)
}

/// Creates the source nodes (1..=n) in batches.
pub fn populate(c: &mut Client, n: usize, batch: usize) -> Result<()> {
    let mut i = 1i64;
    while i <= n as i64 {
        let hi = (i + batch as i64 - 1).min(n as i64);
        let rows: Rows = (i..=hi).map(|j| item(j).to_vec()).collect();
        write_batch(c, &rows)?;
        i = hi + 1;
    }
    Ok(())
}

/// Counts and checksums what the target holds (streamed, constant memory).
pub fn check_target(uri: &str) -> Result<(usize, u64)> {
    let mut c = Client::connect(uri, &ClientConfig::default())?;
    let (mut count, mut sum) = (0usize, 0u64);
    c.run_with(READ, &PropertyMap::new(), |row| {
        count += 1;
        sum = sum.wrapping_add(row_hash(&row));
        Ok(())
    })?;
    Ok((count, sum))
}

fn spawn_writers(
    uri: &str,
    writers: usize,
    rx: crossbeam_channel::Receiver<Rows>,
) -> Result<Vec<std::thread::JoinHandle<Result<()>>>> {
    let mut handles = Vec::new();
    for _ in 0..writers.max(1) {
        let mut c = Client::connect(uri, &ClientConfig::default())?;
        let rx = rx.clone();
        handles.push(std::thread::spawn(move || {
            for batch in rx.iter() {
                write_batch(&mut c, &batch)?;
            }
            Ok(())
        }));
    }
    Ok(handles)
}

fn join_all(handles: Vec<std::thread::JoinHandle<Result<()>>>) -> Result<()> {
    let mut first = Ok(());
    for h in handles {
        let r = h.join().unwrap_or_else(|_| Err(Error::new(Status::Internal, "writer panicked")));
        if first.is_ok() {
            first = r;
        }
    }
    first
}

/// Runs one strategy from `src` to `dst`.
pub fn copy(strategy: Strategy, src: &str, dst: &str, o: &CopyOptions) -> Result<()> {
    let batch = o.batch.max(1);
    let mut reader = Client::connect(src, &ClientConfig::default())?;
    match strategy {
        Strategy::Single => {
            // One thread, two connections, pipelined: up to `SINGLE_IN_FLIGHT` writes are on
            // the target's connection (it executes and commits one while the next is already
            // in its socket, so it never waits for this thread), and while they run this
            // thread decodes the next batch from the source's PULL-all stream.
            let mut w = Client::connect(dst, &ClientConfig::default())?;
            reader.open_stream(READ, &PropertyMap::new())?;
            let mut in_flight: VecDeque<Rows> = VecDeque::new();
            let mut source_done = false;
            let mut tries = 0;
            loop {
                while !source_done && in_flight.len() < SINGLE_IN_FLIGHT {
                    let mut rows = Vec::with_capacity(batch);
                    while rows.len() < batch {
                        match reader.next_record()? {
                            Some(r) => rows.push(r),
                            None => break,
                        }
                    }
                    if rows.is_empty() {
                        source_done = true;
                    } else {
                        send_write(&mut w, &rows)?;
                        in_flight.push_back(rows);
                    }
                }
                if in_flight.is_empty() {
                    return Ok(());
                }
                match w.finish_run_all() {
                    Ok(_) => {
                        in_flight.pop_front();
                    }
                    Err(e) if is_transient(&e) && tries < 50 && !w.is_broken() => {
                        // The server ignored what was pipelined after the failure and the
                        // client has reset the connection: send all of it again, in order.
                        tries += 1;
                        for rows in &in_flight {
                            send_write(&mut w, rows)?;
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Strategy::ReaderWriters => {
            let (tx, rx) = crossbeam_channel::bounded::<Rows>(o.queue.max(1));
            let handles = spawn_writers(dst, o.writers, rx)?;
            let mut rows = Vec::with_capacity(batch);
            let read = reader.run_with(READ, &PropertyMap::new(), |r| {
                rows.push(r);
                if rows.len() == batch {
                    tx.send(std::mem::replace(&mut rows, Vec::with_capacity(batch)))
                        .map_err(|_| Error::new(Status::Internal, "all writers stopped"))?;
                }
                Ok(())
            });
            if read.is_ok() && !rows.is_empty() {
                let _ = tx.send(rows);
            }
            drop(tx);
            let written = join_all(handles);
            read.and(written)
        }
        Strategy::Streaming => {
            let (tx, rx) = crossbeam_channel::bounded::<Rows>(o.queue.max(1));
            let handles = spawn_writers(dst, o.writers, rx)?;
            let result = (|| {
                reader.run(READ, &PropertyMap::new())?;
                loop {
                    // `send` blocks while the queue is full, so the next PULL (and the server's
                    // work for it) waits for the writers: back-pressure end to end.
                    let b = reader.pull(batch as i64, -1)?;
                    let rows = b.records;
                    if !rows.is_empty() {
                        tx.send(rows)
                            .map_err(|_| Error::new(Status::Internal, "all writers stopped"))?;
                    }
                    if !b.has_more {
                        return Ok(());
                    }
                }
            })();
            drop(tx);
            let written = join_all(handles);
            result.and(written)
        }
    }
}

fn log(o: &CopyOptions, m: &str) {
    if o.verbose {
        eprintln!("[copy] {m}");
    }
}

/// Runs every strategy against every target kind.
pub fn run(o: &CopyOptions, mut on_record: impl FnMut(&CopyRecord)) -> Result<Vec<CopyRecord>> {
    let want = expected_checksum(o.nodes);
    let mut out = Vec::new();
    for kind in &o.targets {
        let base = o.work_dir.join(format!("copy-{}-{}", kind.name(), o.nodes));
        let src_dir = base.join("source");
        let marker = base.join("source.ok");
        let fresh = std::fs::read_to_string(&marker).ok().as_deref() != Some("ok");
        if fresh && src_dir.exists() {
            std::fs::remove_dir_all(&src_dir)
                .map_err(|e| Error::new(Status::Io, format!("{}: {e}", src_dir.display())))?;
        }
        std::fs::create_dir_all(&base)
            .map_err(|e| Error::new(Status::Io, format!("{}: {e}", base.display())))?;
        let source = Server::start(kind, &src_dir, o.start_timeout)?;
        if fresh {
            log(o, &format!("{}: generating {} source nodes", kind.name(), o.nodes));
            let mut c = Client::connect(&source.uri, &ClientConfig::default())?;
            populate(&mut c, o.nodes, o.batch.max(1000))?;
            std::fs::write(&marker, "ok")
                .map_err(|e| Error::new(Status::Io, format!("{}: {e}", marker.display())))?;
        }
        for &s in &o.strategies {
            let dst_dir = base.join(format!("target-{}", s.name()));
            if dst_dir.exists() {
                std::fs::remove_dir_all(&dst_dir)
                    .map_err(|e| Error::new(Status::Io, format!("{}: {e}", dst_dir.display())))?;
            }
            let target = match Server::start(kind, &dst_dir, o.start_timeout) {
                Ok(t) => t,
                // Another process on this machine can take the free port we picked before the
                // server binds it (seen with Neo4j's 17687-17699 range): start once more afresh.
                Err(e) => {
                    log(o, &format!("{}: target did not start ({e}); retrying", kind.name()));
                    let _ = std::fs::remove_dir_all(&dst_dir);
                    Server::start(kind, &dst_dir, o.start_timeout)?
                }
            };
            log(o, &format!("{}: {}", kind.name(), s.name()));
            let base_rss = metrics::rss_kib(std::process::id()).unwrap_or(0);
            metrics::reset_self_peak_rss();
            let cpu0 = metrics::self_cpu_seconds().unwrap_or(0.0);
            let (src0, dst0) = (source.stats().cpu_seconds, target.stats().cpu_seconds);
            let t = Instant::now();
            let res = copy(s, &source.uri, &target.uri, o);
            let seconds = t.elapsed().as_secs_f64();
            let cpu = metrics::self_cpu_seconds().unwrap_or(0.0) - cpu0;
            let (src1, dst1) = (source.stats().cpu_seconds, target.stats().cpu_seconds);
            let peak = metrics::self_peak_rss_kib().unwrap_or(0);
            let (copied, sum) = match &res {
                Ok(()) => check_target(&target.uri)?,
                Err(_) => (0, 0),
            };
            target.stop()?;
            let _ = std::fs::remove_dir_all(&dst_dir);
            let r = CopyRecord {
                target: kind.name().into(),
                strategy: s,
                nodes: o.nodes,
                seconds,
                client_peak_rss_kib: peak,
                client_base_rss_kib: base_rss,
                client_cpu_seconds: cpu,
                source_cpu_seconds: src1 - src0,
                target_cpu_seconds: dst1 - dst0,
                copied,
                checksum_ok: sum == want,
                error: res.err().map(|e| e.to_string()),
            };
            on_record(&r);
            out.push(r);
        }
        source.stop()?;
    }
    Ok(out)
}

pub fn to_json(records: &[CopyRecord], meta: Json) -> String {
    let runs = records
        .iter()
        .map(|r| {
            json!({
                "target": r.target.as_str(),
                "strategy": r.strategy.name(),
                "nodes": r.nodes,
                "seconds": r.seconds,
                "nodes_per_second": r.nodes as f64 / r.seconds.max(1e-9),
                "client_peak_rss_mib": r.client_peak_rss_kib as f64 / 1024.0,
                "client_base_rss_mib": r.client_base_rss_kib as f64 / 1024.0,
                "client_cpu_seconds": r.client_cpu_seconds,
                "source_cpu_seconds": r.source_cpu_seconds,
                "target_cpu_seconds": r.target_cpu_seconds,
                "copied": r.copied,
                "checksum_ok": r.checksum_ok,
                "error": r.error.clone(),
            })
        })
        .collect::<Vec<_>>();
    crate::json::render(&json!({
        "meta": meta,
        "runs": runs,
    }))
}

pub fn to_markdown(records: &[CopyRecord], header: &str) -> String {
    use std::fmt::Write;
    let mut s = format!("{header}\n\n");
    let both =
        records.iter().any(|r| r.target == "arbor") && records.iter().any(|r| r.target == "neo4j");
    if both {
        s.push_str("| strategy | Arbor s | Neo4j s | speed-up | Arbor client peak / base RSS MiB | Neo4j client peak / base RSS MiB | server CPU s source + target (A / N) | verified (A / N) | goal (>= 5x) |\n|---|---|---|---|---|---|---|---|---|\n");
        for st in Strategy::ALL {
            let a = records.iter().find(|r| r.target == "arbor" && r.strategy == st);
            let n = records.iter().find(|r| r.target == "neo4j" && r.strategy == st);
            let (Some(a), Some(n)) = (a, n) else { continue };
            let ratio = n.seconds / a.seconds.max(1e-9);
            let _ = writeln!(
                s,
                "| {} | {:.2} | {:.2} | {ratio:.1}x | {:.0} / {:.0} | {:.0} / {:.0} | {:.1} + {:.1} / {:.1} + {:.1} | {} / {} | {} |",
                st.name(),
                a.seconds,
                n.seconds,
                a.client_peak_rss_kib as f64 / 1024.0,
                a.client_base_rss_kib as f64 / 1024.0,
                n.client_peak_rss_kib as f64 / 1024.0,
                n.client_base_rss_kib as f64 / 1024.0,
                a.source_cpu_seconds,
                a.target_cpu_seconds,
                n.source_cpu_seconds,
                n.target_cpu_seconds,
                if a.ok() { "ok" } else { "**FAIL**" },
                if n.ok() { "ok" } else { "**FAIL**" },
                if ratio >= 5.0 && a.ok() { "met" } else { "**missed**" },
            );
        }
    } else {
        s.push_str("| target | strategy | seconds | nodes/s | client peak / base RSS MiB | verified |\n|---|---|---|---|---|---|\n");
        for r in records {
            let _ = writeln!(
                s,
                "| {} | {} | {:.2} | {:.0} | {:.0} / {:.0} | {} |",
                r.target,
                r.strategy.name(),
                r.seconds,
                r.nodes as f64 / r.seconds.max(1e-9),
                r.client_peak_rss_kib as f64 / 1024.0,
                r.client_base_rss_kib as f64 / 1024.0,
                if r.ok() { "ok".to_string() } else { format!("**FAIL** {:?}", r.error) }
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_is_order_independent_and_sensitive() {
        let a = row_hash(&item(1)).wrapping_add(row_hash(&item(2)));
        let b = row_hash(&item(2)).wrapping_add(row_hash(&item(1)));
        assert_eq!(a, b);
        assert_eq!(a, expected_checksum(2));
        let mut changed = item(2);
        changed[2] = Value::Int(0);
        assert_ne!(row_hash(&item(1)).wrapping_add(row_hash(&changed)), a);
    }
}
