//! The load driver, as mgBench's `client.cpp`: N worker threads, each with its own Bolt
//! connection opened *before* the start barrier, pulling queries from one shared list through
//! an atomic cursor; every query is an auto-commit `RUN` + `PULL` all; transient errors are
//! retried (up to 50 times). Each worker's duration runs from the barrier to when it finds the
//! list exhausted; throughput is `count / mean(durations)`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

use arbor_bolt::client::{decode_captured, is_transient, Client, ClientConfig};
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::metrics;
use crate::workload::Query;

/// Retries per query on a transient error, as mgBench's client.
pub const MAX_RETRIES: usize = 50;

/// The answer of one query, kept for verification after the timed run.
#[derive(Debug, Default)]
pub struct Answer {
    /// Decoded after the timed run from the captured RECORD messages (see [`run`]).
    pub rows: Vec<Vec<Value>>,
    /// The RECORD messages as received (`Client::capture_records`), until decoded into `rows`.
    pub raw: Vec<u8>,
    pub summary: PropertyMap,
    /// Set when the query failed even after retries.
    pub error: Option<String>,
}

/// What one execution of a query list produced.
#[derive(Debug, Default)]
pub struct Outcome {
    pub count: usize,
    pub workers: usize,
    /// Seconds per worker, barrier to exhaustion.
    pub worker_durations: Vec<f64>,
    pub wall_seconds: f64,
    pub throughput: f64,
    pub retries: usize,
    /// Per query (same order as the input): latency in seconds (retries included).
    pub latencies: Vec<f64>,
    pub answers: Vec<Answer>,
    /// CPU seconds this process used during the timed part.
    pub client_cpu_seconds: f64,
}

impl Outcome {
    pub fn failed(&self) -> usize {
        self.answers.iter().filter(|a| a.error.is_some()).count()
    }
}

/// Runs one query with retries on transient errors; returns the answer and the retry count.
/// Every record is decoded as a driver would, then dropped: the answer keeps the records'
/// bytes (`raw`; this turns the client's capture on) for [`decode_answers`]. Holding thousands of
/// decoded values per query instead grew the client's heap during the timed run, and the
/// page faults and allocator work of the first run of a process (Arbor's, in a default run)
/// took CPU from the server under test.
pub fn execute_one(client: &mut Client, q: &Query) -> (Answer, usize) {
    let params = q.params();
    let mut retries = 0;
    client.capture_records(true);
    loop {
        let _ = client.take_captured(); // a failed attempt's records
        match client.run_with(q.spec.cypher, &params, |_row| Ok(())) {
            Ok((_, summary)) => {
                let raw = client.take_captured();
                return (Answer { raw, summary, ..Answer::default() }, retries);
            }
            Err(e) if is_transient(&e) && retries < MAX_RETRIES && !client.is_broken() => {
                retries += 1;
            }
            Err(e) => {
                return (Answer { error: Some(e.to_string()), ..Answer::default() }, retries);
            }
        }
    }
}

/// Decodes the captured records of every answer into its `rows` (after the timed run).
/// Bytes that do not decode make the answer an error (they were decoded once already).
pub fn decode_answers(answers: &mut [Answer]) {
    for a in answers.iter_mut().filter(|a| a.error.is_none()) {
        match decode_captured(&std::mem::take(&mut a.raw)) {
            Ok(rows) => a.rows = rows,
            Err(e) => a.error = Some(format!("decoding the captured records: {e}")),
        }
    }
}

/// Executes `queries` with `workers` connections to `uri`.
pub fn run(uri: &str, config: &ClientConfig, queries: &[Query], workers: usize) -> Result<Outcome> {
    let workers = workers.max(1);
    let n = queries.len();
    let queries: Arc<Vec<Query>> = Arc::new(queries.to_vec());
    let cursor = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(workers + 1));
    let connect_error: Arc<Mutex<Option<Error>>> = Arc::new(Mutex::new(None));
    let mut handles = Vec::with_capacity(workers);
    for _ in 0..workers {
        let queries = queries.clone();
        let cursor = cursor.clone();
        let barrier = barrier.clone();
        let uri = uri.to_string();
        let config = config.clone();
        let connect_error = connect_error.clone();
        handles.push(std::thread::spawn(move || {
            let client = Client::connect(&uri, &config);
            let mut client = match client {
                Ok(c) => Some(c),
                Err(e) => {
                    if let Ok(mut slot) = connect_error.lock() {
                        slot.get_or_insert(e);
                    }
                    None
                }
            };
            barrier.wait();
            let start = Instant::now();
            let mut done: Vec<(usize, f64, Answer)> = Vec::new();
            let mut retries = 0;
            if let Some(c) = client.as_mut() {
                loop {
                    let i = cursor.fetch_add(1, Ordering::Relaxed);
                    let Some(q) = queries.get(i) else { break };
                    let t = Instant::now();
                    let (answer, r) = execute_one(c, q);
                    done.push((i, t.elapsed().as_secs_f64(), answer));
                    retries += r;
                }
            }
            (start.elapsed().as_secs_f64(), retries, done)
        }));
    }
    let cpu0 = metrics::self_cpu_seconds().unwrap_or(0.0);
    barrier.wait();
    let wall = Instant::now();
    let mut out = Outcome {
        count: n,
        workers,
        latencies: vec![0.0; n],
        answers: (0..n).map(|_| Answer::default()).collect(),
        ..Outcome::default()
    };
    for h in handles {
        let (duration, retries, done) =
            h.join().map_err(|_| Error::new(Status::Internal, "a benchmark worker panicked"))?;
        out.worker_durations.push(duration);
        out.retries += retries;
        for (i, lat, answer) in done {
            out.latencies[i] = lat;
            out.answers[i] = answer;
        }
    }
    out.wall_seconds = wall.elapsed().as_secs_f64();
    out.client_cpu_seconds = metrics::self_cpu_seconds().unwrap_or(0.0) - cpu0;
    decode_answers(&mut out.answers);
    if let Some(e) = connect_error.lock().ok().and_then(|mut s| s.take()) {
        return Err(Error::new(e.status, format!("a worker could not connect: {}", e.message)));
    }
    out.throughput = metrics::throughput(n, &out.worker_durations);
    Ok(out)
}
