//! Progress of a background index population and a schema rule's usage statistics, shared by
//! the rule (a schema `IndexDef`, a vector index's `VectorState`) and its builder thread.
//!
//! Its own file so the two rule modules that hold one (`schema.rs`, `vector.rs`) do not import
//! each other for it.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

/// Progress of a background index population, shared by the rule and its builder thread, and
/// the rule's usage statistics (relaxed atomics: seeks only add to them).
#[derive(Debug, Default)]
pub(crate) struct Progress {
    pub online: AtomicBool,
    pub done: AtomicU64,
    pub total: AtomicU64,
    /// Reads through the index (seeks and scans).
    pub reads: AtomicU64,
    /// Milliseconds since the epoch of the first and the last read (0: none yet).
    pub first_read_ms: AtomicI64,
    pub last_read_ms: AtomicI64,
}

impl Progress {
    /// Counts one read through the index now.
    pub fn note_read(&self) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.last_read_ms.store(now, Ordering::Relaxed);
        let _ = self.first_read_ms.compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
    }

    pub fn online() -> Arc<Progress> {
        let p = Progress::default();
        p.online.store(true, Ordering::Release);
        Arc::new(p)
    }
    pub fn is_online(&self) -> bool {
        self.online.load(Ordering::Acquire)
    }
    pub fn percent(&self) -> f64 {
        if self.is_online() {
            return 100.0;
        }
        let total = self.total.load(Ordering::Acquire);
        if total == 0 {
            return 0.0;
        }
        (self.done.load(Ordering::Acquire) as f64 * 100.0 / total as f64).min(99.9)
    }
}
