//! The commit clock and its watermarks (durable, applied, visible), and the store's failed
//! state.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status};
use parking_lot::{Condvar, Mutex};

/// The commit clock: what new snapshots see, and whether the store can still commit.
///
/// A logged commit becomes visible once it is both durable (the log writer's fsync) and
/// applied (installed in memory by its committer): the committer hands its record to the log
/// writer before installing it, so the fsync runs while it installs, and whichever of the two
/// finishes last publishes. Both watermarks only rise in ts order: records reach the log and
/// installs happen under the commit mutex, in ts order.
pub(crate) struct Clock {
    visible: AtomicU64,
    /// `(durable, applied)` watermarks, guarded with the condition variable.
    lock: Mutex<(u64, u64)>,
    cv: Condvar,
    failed: Mutex<Option<String>>,
    /// A condition that refuses commits until it clears (a full disk: the log writer holds
    /// records it could not write yet, or recovery's checkpoint is still to be taken).
    paused: Mutex<Option<String>>,
}

impl Clock {
    pub fn new(ts: u64) -> Clock {
        Clock {
            visible: AtomicU64::new(ts),
            lock: Mutex::new((ts, ts)),
            cv: Condvar::new(),
            failed: Mutex::new(None),
            paused: Mutex::new(None),
        }
    }
    /// The log writer made commits up to `ts` durable.
    pub fn durable(&self, ts: u64) {
        let mut g = self.lock.lock();
        g.0 = g.0.max(ts);
        self.visible.fetch_max(g.0.min(g.1), Ordering::AcqRel);
        self.check_order(&g);
        self.cv.notify_all();
    }
    /// Commits up to `ts` are installed in memory (caller holds the commit mutex).
    pub fn applied(&self, ts: u64) {
        let mut g = self.lock.lock();
        g.1 = g.1.max(ts);
        self.visible.fetch_max(g.0.min(g.1), Ordering::AcqRel);
        self.check_order(&g);
        self.cv.notify_all();
    }
    /// The watermark order: nothing is visible before it is both durable and applied.
    fn check_order(&self, g: &(u64, u64)) {
        invariant!(
            self.visible() <= g.0.min(g.1),
            "visible ts {} ahead of the durable ({}) or applied ({}) watermark",
            self.visible(),
            g.0,
            g.1
        );
    }
    pub fn visible(&self) -> u64 {
        self.visible.load(Ordering::Acquire)
    }
    /// Makes commits up to `ts` visible to new snapshots.
    /// (Both durable and applied, e.g. an in-memory commit or recovery.)
    pub fn publish(&self, ts: u64) {
        let mut g = self.lock.lock();
        g.0 = g.0.max(ts);
        g.1 = g.1.max(ts);
        self.visible.fetch_max(ts, Ordering::AcqRel);
        self.check_order(&g);
        self.cv.notify_all();
    }
    pub fn wait_for(&self, ts: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut g = self.lock.lock();
        while self.visible() < ts {
            if self.cv.wait_until(&mut g, deadline).timed_out() {
                return self.visible() >= ts;
            }
        }
        true
    }
    /// Marks the store as unable to commit (a failed write or fsync).
    pub fn fail(&self, msg: String) {
        let mut f = self.failed.lock();
        if f.is_none() {
            tracing::error!("storage failed, refusing further commits: {msg}");
            *f = Some(msg);
        }
    }
    /// Refuses commits until [`Clock::resume`] (a condition expected to clear, such as a full
    /// disk); unlike [`Clock::fail`], nothing was lost.
    pub fn pause(&self, msg: String) {
        let mut p = self.paused.lock();
        if p.is_none() {
            tracing::warn!("refusing commits until this clears: {msg}");
            *p = Some(msg);
        }
    }
    /// Ends a [`Clock::pause`].
    pub fn resume(&self) {
        if self.paused.lock().take().is_some() {
            tracing::info!("commits are accepted again");
        }
    }
    /// Whether the store can commit: not failed and not paused.
    pub fn check(&self) -> Result<()> {
        self.check_failed()?;
        match &*self.paused.lock() {
            None => Ok(()),
            Some(m) => Err(Error::new(
                Status::Io,
                format!("the store cannot commit now (retried in the background): {m}"),
            )),
        }
    }
    /// Whether the store has failed for good (a pause does not count).
    pub fn check_failed(&self) -> Result<()> {
        match &*self.failed.lock() {
            None => Ok(()),
            Some(m) => Err(Error::new(
                Status::Io,
                format!("the store cannot commit after an I/O failure: {m}"),
            )),
        }
    }
}
