//! Measures a store's open: CPU time, peak RSS and wall time from process start to the answer
//! of a first read (the node count), then again after the promotion (`Store::warm_base`).
//!
//! Usage: `open_probe <data-dir> [memory-limit-bytes]` (promotion at open off, so the first
//! line is the lazy open alone; the second adds the promotion). Reads only.

use std::time::Instant;

use arbor_storage::{Store, StoreConfig};

/// User + system CPU seconds of this process so far (`/proc/self/stat`, clock ticks of 10 ms).
fn cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// `VmRSS` and `VmHWM` (peak) in MiB.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |key: &str| {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (kb("VmRSS:") >> 10, kb("VmHWM:") >> 10)
}

fn report(what: &str, started: Instant, extra: &str) {
    let (now, peak) = rss();
    println!(
        "{what}: {:.2} s CPU, {:.2} s wall, RSS {now} MiB (peak {peak} MiB){extra}",
        cpu(),
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: open_probe <data-dir> [memory-limit-bytes]");
        std::process::exit(2);
    };
    let memory_limit = args.get(2).and_then(|v| v.parse().ok());
    let started = Instant::now();
    let config = StoreConfig { memory_limit, promote_at_open: false, ..StoreConfig::default() };
    let store = match Store::open(std::path::Path::new(dir), config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot open {dir}: {e}");
            std::process::exit(1);
        }
    };
    let n = store.begin(true).count_nodes(None);
    report("open + first read", started, &format!(", {n} nodes"));
    match store.warm_base() {
        Ok(promoted) => report("after the promotion", started, &format!(", promoted: {promoted}")),
        Err(e) => println!("promotion failed: {e}"),
    }
    drop(store);
}
