//! Bytes and allocations per result row of the Bolt record path, in process: the streamed
//! records (`Session::pull_records` + `message::write_record`, what the server sends) against
//! the owned rows (`Session::pull` + the value encoder, the server's path before records),
//! on the same store and queries, under a counting global allocator.
//!
//! Usage: `stream_alloc <data-dir> <runs>` (opens the store read-only; the mgBench queries
//! Q15, Q16, Q17, Q23 with ids 17, 4242, 9001, and a 200,000-row `UNWIND`).

// A global allocator is an `unsafe` trait; this one only forwards to `System` and counts.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use arbor_bolt::message::{tag, write_record};
use arbor_bolt::packstream as ps;
use arbor_bolt::values::{encode_value, Dialect};
use arbor_engine::{Database, PropertyMap, Record, TxConfig, Value};

/// Counts bytes and calls of every allocation (and growth by `realloc`).
struct Counting;

static BYTES: AtomicU64 = AtomicU64::new(0);
static CALLS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to `System` unchanged; the counters are atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add(new_size.saturating_sub(layout.size()) as u64, Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const QUERIES: [(&str, &str); 5] = [
    ("Q15", "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id, n"),
    ("Q16", "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id, n"),
    ("Q17", "MATCH (n:User {id: $id})-[e1]->(m)-[e2]->(n) RETURN e1, m, e2"),
    ("Q23", "MATCH (n:User {id : $id}) RETURN n"),
    ("UNWIND", "UNWIND range(1, 200000) AS i RETURN i, toString(i)"),
];

/// Runs `q` with each id, streaming or owned; returns (rows, bytes, allocations).
fn measure(db: &Database, q: &str, streamed: bool) -> (u64, u64, u64) {
    let mut s = db.session();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let ids: &[i64] = if q.contains("$id") { &[17, 4242, 9001] } else { &[0] };
    let (b0, c0) = (BYTES.load(Ordering::Relaxed), CALLS.load(Ordering::Relaxed));
    let mut rows = 0u64;
    for &id in ids {
        let mut params = PropertyMap::new();
        params.insert("id".into(), Value::Int(id));
        s.run(q, params, TxConfig::default()).expect("run");
        if streamed {
            s.pull_records(None, -1, &mut |r: &mut Record<'_>| {
                rows += 1;
                buf.clear();
                write_record(&mut buf, r, Dialect::V5)
            })
            .expect("pull");
        } else {
            s.pull(None, -1, &mut |row: Vec<arbor_model::ResultValue>| {
                let row: Vec<Value> = row.into_iter().map(Value::from).collect();
                rows += 1;
                buf.clear();
                ps::write_struct_header(&mut buf, 1, tag::RECORD);
                let _ = ps::write_list_header(&mut buf, row.len());
                for v in &row {
                    let _ = encode_value(&mut buf, v, Dialect::V5);
                }
                Ok(())
            })
            .expect("pull");
        }
    }
    let (b1, c1) = (BYTES.load(Ordering::Relaxed), CALLS.load(Ordering::Relaxed));
    (rows, b1 - b0, c1 - c0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: stream_alloc <data-dir> <runs>");
        std::process::exit(2);
    }
    let db = Database::open_read_only(std::path::Path::new(&args[1])).expect("open");
    let runs: u64 = args[2].parse().unwrap_or(3);
    println!("query\tpath\trows\tbytes/row\tallocations/row");
    for (name, q) in QUERIES {
        // Warm: plan cache, lazily built columns.
        measure(&db, q, true);
        for streamed in [false, true] {
            let (mut rows, mut bytes, mut calls) = (0, 0, 0);
            for _ in 0..runs {
                let (r, b, c) = measure(&db, q, streamed);
                rows += r;
                bytes += b;
                calls += c;
            }
            let per = |x: u64| x as f64 / rows.max(1) as f64;
            let path = if streamed { "records" } else { "owned" };
            println!("{name}\t{path}\t{}\t{:.1}\t{:.2}", rows / runs, per(bytes), per(calls));
        }
    }
}
