//! Process-wide storage counters for monitoring (Prometheus `/metrics` on the HTTP port reads
//! them): WAL bytes written, fsync, commit and checkpoint latencies.
//!
//! Every update is one or two relaxed atomic adds, so the hot path (commits, WAL writes) pays
//! almost nothing; a reader may see counters a few updates apart, which monitoring tolerates.
//! The counters are per process, not per store: a server opens one store.

use std::sync::atomic::AtomicU64;

// The histogram is model's: the engine shows it in its public metrics without naming storage.
pub use arbor_model::histogram::{Histogram, BUCKET_BOUNDS_MICROS};

/// Observes the time from [`Timer::start`] to its drop into a histogram (any return path).
pub struct Timer<'a> {
    histogram: &'a Histogram,
    started: std::time::Instant,
}

impl<'a> Timer<'a> {
    #[inline]
    pub fn start(histogram: &'a Histogram) -> Timer<'a> {
        Timer { histogram, started: std::time::Instant::now() }
    }
}

impl Drop for Timer<'_> {
    fn drop(&mut self) {
        self.histogram.observe(self.started.elapsed());
    }
}

/// The storage counters.
pub struct StorageMetrics {
    /// Bytes appended to the write-ahead log.
    pub wal_bytes: AtomicU64,
    /// `fdatasync` of the WAL (one per group-commit batch).
    pub fsync: Histogram,
    /// `Transaction::commit` of a writing transaction, from the call to durable and visible.
    pub commit: Histogram,
    /// Checkpoints written (snapshot, segment file, manifest switch).
    pub checkpoint: Histogram,
}

/// This process's storage counters.
pub static STORAGE: StorageMetrics = StorageMetrics {
    wal_bytes: AtomicU64::new(0),
    fsync: Histogram::new(),
    commit: Histogram::new(),
    checkpoint: Histogram::new(),
};
