//! Runs read queries in a loop against a store directory, in process, and prints the mean time
//! per query: a quick way to profile the executor (e.g. under `perf record`) without Bolt.
//!
//! Usage: `scan_loop <data-dir> <iterations> <query>...` (opens the store read-only).

use std::time::Instant;

use arbor_engine::Database;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: scan_loop <data-dir> <iterations> <query>...");
        std::process::exit(2);
    }
    let db = match Database::open_read_only(std::path::Path::new(&args[1])) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("cannot open {}: {e}", args[1]);
            std::process::exit(1);
        }
    };
    let iters: u32 = args[2].parse().unwrap_or(100);
    for q in &args[3..] {
        let mut rows = 0;
        let started = Instant::now();
        for _ in 0..iters {
            let mut tx = match db.begin_read() {
                Ok(tx) => tx,
                Err(e) => {
                    eprintln!("begin: {e}");
                    std::process::exit(1);
                }
            };
            match tx.execute(q, Default::default()).and_then(|r| r.collect::<Result<Vec<_>, _>>()) {
                Ok(r) => rows = r.len(),
                Err(e) => {
                    eprintln!("{q}: {e}");
                    std::process::exit(1);
                }
            }
        }
        let per = started.elapsed().as_secs_f64() * 1e6 / f64::from(iters.max(1));
        println!("{per:9.1} us/query  {rows:4} rows  {q}");
    }
}
