//! A latency histogram with fixed buckets, lock-free: storage fills its own (fsync, commit,
//! checkpoint), the engine its query latency, and the engine's Prometheus encoder reads both.
//! Updating it is two relaxed atomic adds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency buckets, in microseconds (the last bucket is `+Inf`).
pub const BUCKET_BOUNDS_MICROS: [u64; 14] = [
    100, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
    5_000_000, 30_000_000,
];

/// A latency histogram with fixed buckets ([`BUCKET_BOUNDS_MICROS`]), lock-free.
pub struct Histogram {
    buckets: [AtomicU64; BUCKET_BOUNDS_MICROS.len() + 1],
    sum_micros: AtomicU64,
}

impl Histogram {
    pub const fn new() -> Histogram {
        Histogram {
            buckets: [const { AtomicU64::new(0) }; BUCKET_BOUNDS_MICROS.len() + 1],
            sum_micros: AtomicU64::new(0),
        }
    }

    /// Counts one observation.
    #[inline]
    pub fn observe(&self, d: Duration) {
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let i = BUCKET_BOUNDS_MICROS
            .iter()
            .position(|&b| micros <= b)
            .unwrap_or(BUCKET_BOUNDS_MICROS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Observations per bucket (not cumulative; the last is over every bound) and the sum of
    /// all observations in microseconds.
    pub fn snapshot(&self) -> (Vec<u64>, u64) {
        let counts = self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        (counts, self.sum_micros.load(Ordering::Relaxed))
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_first_bucket_that_holds_them() {
        let h = Histogram::new();
        h.observe(Duration::from_micros(50));
        h.observe(Duration::from_micros(100));
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_secs(3600));
        let (counts, sum) = h.snapshot();
        assert_eq!(counts[0], 2);
        assert_eq!(counts[4], 1, "3 ms is in the 5 ms bucket");
        assert_eq!(counts[BUCKET_BOUNDS_MICROS.len()], 1, "an hour is over every bound");
        assert_eq!(sum, 50 + 100 + 3_000 + 3_600_000_000);
    }
}
