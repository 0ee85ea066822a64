//! Giving memory back after writes stop: the maintenance thread folds a leftover delta into the
//! base once commits have been quiet for [`QUIET_AFTER`] (a live load otherwise leaves up to half
//! the base's size in delta versions, at ~100-200 bytes per entity against ~10-20 in the base),
//! and after garbage collection freed memory in a quiet period it calls the process's release
//! hook ([`set_memory_release_hook`]; the `arbor` binary asks its allocator to return freed
//! pages to the OS), so resident memory follows the data after a load or a delete.
//!
//! Readers pay for a delta too: a scan reads a row newer than the base (or with a delta
//! version) through the version tables, one row at a time (hundreds of instructions), where
//! a base row is a slice of a column (a few). So once scans have read [`READ_FOLD_ROWS`]
//! delta rows since the last commit (and a quarter of the base's entities: a fold rebuilds
//! the base, which the reads should have paid for), the fold comes after [`READ_QUIET_AFTER`] instead of
//! [`QUIET_AFTER`]: a load over Bolt followed by analytical reads gets the base's column
//! reads after a scan or two instead of two seconds later. The fold would come anyway once
//! commits stay quiet; this only brings it forward when readers are paying for the delta.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Commits must have stopped this long before a quiet fold or a release.
pub(crate) const QUIET_AFTER: Duration = Duration::from_secs(2);
/// The smallest delta (in versions) a quiet fold is worth: a fold rebuilds the whole base.
pub(crate) const QUIET_FOLD_MIN: u64 = 20_000;
/// Delta rows scans must have read since the last commit to bring the fold forward, at
/// least; and at least the base's entities over [`READ_FOLD_SHARE`] (a fold rebuilds the
/// whole base, a cost the reads should have matched before it is brought forward).
pub(crate) const READ_FOLD_ROWS: u64 = 20_000;
pub(crate) const READ_FOLD_SHARE: u64 = 4;
/// Commits must have stopped this long before a fold that scans asked for (by reading
/// [`READ_FOLD_ROWS`] delta rows since the last commit). Short, so
/// the reads that follow a load get the base; long enough that a load's next batch, a few
/// milliseconds behind the previous one, is not cut by a fold.
pub(crate) const READ_QUIET_AFTER: Duration = Duration::from_millis(50);

static HOOK: OnceLock<fn()> = OnceLock::new();

/// Sets the function called when the store has freed a good deal of memory while writes are
/// quiet (the first call wins; later ones are ignored). The `arbor` binary passes one that
/// makes its allocator return free pages to the OS.
pub fn set_memory_release_hook(hook: fn()) {
    let _ = HOOK.set(hook);
}

/// Calls the release hook now (a bulk import, between freeing its linking buffers and
/// building the base: freed memory the allocator still holds would add to the peak).
pub(crate) fn release_now() {
    if let Some(hook) = HOOK.get() {
        hook();
    }
}

/// What the maintenance thread remembers between rounds about writes going quiet.
pub(crate) struct Quiet {
    /// The store's write progress last seen (the visible commit ts plus the ids handed out:
    /// `Core::write_progress`), and since when it has not moved.
    seen: u64,
    since: Instant,
    /// Whether the delta was folded since the last commit (so it is not folded again).
    folded: bool,
    /// The store's count of delta rows read by scans when the last commit was seen, and
    /// how many were read since (see the module doc).
    reads_at_commit: u64,
    delta_reads: u64,
    /// Whether memory was freed since the last release.
    freed: bool,
}

impl Quiet {
    pub(crate) fn new() -> Quiet {
        Quiet {
            seen: 0,
            since: Instant::now(),
            folded: false,
            reads_at_commit: 0,
            delta_reads: 0,
            freed: false,
        }
    }

    /// Notes the write progress of this round (see `seen`) and the store's count of delta
    /// rows read by scans ([`Core::delta_reads`](crate::mvcc::Core::delta_reads)); returns how
    /// long writes have been quiet (zero after a new commit or create).
    pub(crate) fn observe(&mut self, progress: u64, reads: u64) -> Duration {
        if progress != self.seen {
            self.seen = progress;
            self.since = Instant::now();
            self.folded = false;
            // (Reads before this commit, or overlapping it, do not count.)
            self.reads_at_commit = reads;
            self.delta_reads = 0;
            return Duration::ZERO;
        }
        self.delta_reads = reads.saturating_sub(self.reads_at_commit);
        self.since.elapsed()
    }

    /// Whether a round with commits quiet for `quiet` should fold a delta of
    /// `delta_versions` into a base of `base_entities` nodes and relationships (then it counts
    /// as done): after [`QUIET_AFTER`], or after [`READ_QUIET_AFTER`] once scans have read
    /// [`READ_FOLD_ROWS`] delta rows and `base_entities / READ_FOLD_SHARE`.
    pub(crate) fn should_fold(
        &mut self,
        quiet: Duration,
        delta_versions: u64,
        base_entities: u64,
    ) -> bool {
        let enough_reads = self.delta_reads >= READ_FOLD_ROWS.max(base_entities / READ_FOLD_SHARE);
        let wanted = quiet >= QUIET_AFTER || quiet >= READ_QUIET_AFTER && enough_reads;
        if wanted && !self.folded && delta_versions >= QUIET_FOLD_MIN {
            self.folded = true;
            return true;
        }
        false
    }

    /// Notes that garbage collection or a fold freed memory.
    pub(crate) fn freed(&mut self) {
        self.freed = true;
    }

    /// Calls the release hook if memory was freed and commits are quiet.
    pub(crate) fn release(&mut self, quiet: bool) {
        if quiet && self.freed {
            self.freed = false;
            if let Some(hook) = HOOK.get() {
                hook();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_fold_happens_once_per_quiet_period_and_only_for_a_real_delta() {
        let mut q = Quiet::new();
        assert_eq!(q.observe(5, 0), Duration::ZERO, "a new commit starts the wait");
        assert!(!q.should_fold(Duration::ZERO, 1_000_000, 0), "not quiet yet");
        assert!(!q.should_fold(QUIET_AFTER, QUIET_FOLD_MIN - 1, 0), "too small to be worth a fold");
        assert!(q.should_fold(QUIET_AFTER, QUIET_FOLD_MIN, 0));
        assert!(!q.should_fold(QUIET_AFTER, QUIET_FOLD_MIN, 0), "once per quiet period");
        q.observe(6, 0);
        assert!(q.should_fold(QUIET_AFTER, QUIET_FOLD_MIN, 0), "a later commit allows another");
    }

    #[test]
    fn scans_of_the_delta_bring_the_fold_forward() {
        let delta = QUIET_FOLD_MIN * 3;
        let before = READ_FOLD_ROWS * 10;
        let mut q = Quiet::new();
        q.observe(5, before);
        assert!(!q.should_fold(READ_QUIET_AFTER, delta, 0), "reads before the commit do not count");
        q.observe(5, before + READ_FOLD_ROWS - 1);
        assert!(!q.should_fold(READ_QUIET_AFTER, delta, 0), "too few delta rows read");
        q.observe(5, before + READ_FOLD_ROWS);
        assert!(!q.should_fold(READ_QUIET_AFTER / 2, delta, 0), "commits not quiet long enough");
        assert!(q.should_fold(READ_QUIET_AFTER, delta, 0), "enough delta rows read");
        assert!(!q.should_fold(QUIET_AFTER, delta, 0), "once per quiet period");
        let before = before + 2 * READ_FOLD_ROWS;
        q.observe(6, before);
        assert_eq!(q.delta_reads, 0, "a commit starts the count again");
        assert!(!q.should_fold(READ_QUIET_AFTER, delta, 0));
        q.observe(6, before + READ_FOLD_ROWS);
        assert!(!q.should_fold(READ_QUIET_AFTER, QUIET_FOLD_MIN - 1, 0), "too small a delta");
        let big = READ_FOLD_ROWS * READ_FOLD_SHARE * 3;
        assert!(!q.should_fold(READ_QUIET_AFTER, delta, big), "too few reads for a big base");
        assert!(q.should_fold(QUIET_AFTER, delta, big), "the plain quiet fold still comes");
        q.observe(7, before);
        q.observe(7, before + big / READ_FOLD_SHARE);
        assert!(q.should_fold(READ_QUIET_AFTER, delta, big), "reads matching the base");
    }
}
