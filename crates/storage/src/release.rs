//! Giving memory back after writes stop: the maintenance thread folds a leftover delta into the
//! base once commits have been quiet for [`QUIET_AFTER`] (a live load otherwise leaves up to half
//! the base's size in delta versions, at ~100-200 bytes per entity against ~10-20 in the base),
//! and after garbage collection freed memory in a quiet period it calls the process's release
//! hook ([`set_memory_release_hook`]; the `arbor` binary asks its allocator to return freed
//! pages to the OS), so resident memory follows the data after a load or a delete.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Commits must have stopped this long before a quiet fold or a release.
pub(crate) const QUIET_AFTER: Duration = Duration::from_secs(2);
/// The smallest delta (in versions) a quiet fold is worth: a fold rebuilds the whole base.
pub(crate) const QUIET_FOLD_MIN: u64 = 20_000;

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
    /// The visible commit ts last seen, and since when it has not moved.
    seen: u64,
    since: Instant,
    /// Whether the delta was folded since the last commit (so it is not folded again).
    folded: bool,
    /// Whether memory was freed since the last release.
    freed: bool,
}

impl Quiet {
    pub(crate) fn new() -> Quiet {
        Quiet { seen: 0, since: Instant::now(), folded: false, freed: false }
    }

    /// Notes the visible commit ts of this round; true once it has not moved for
    /// [`QUIET_AFTER`].
    pub(crate) fn observe(&mut self, visible: u64) -> bool {
        if visible != self.seen {
            self.seen = visible;
            self.since = Instant::now();
            self.folded = false;
        }
        self.since.elapsed() >= QUIET_AFTER
    }

    /// Whether a quiet round should fold a delta of `delta_versions` (then it counts as done).
    pub(crate) fn should_fold(&mut self, quiet: bool, delta_versions: u64) -> bool {
        if quiet && !self.folded && delta_versions >= QUIET_FOLD_MIN {
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
        assert!(!q.observe(5), "a new commit starts the wait");
        assert!(!q.should_fold(false, 1_000_000), "not quiet yet");
        assert!(!q.should_fold(true, QUIET_FOLD_MIN - 1), "too small to be worth a fold");
        assert!(q.should_fold(true, QUIET_FOLD_MIN));
        assert!(!q.should_fold(true, QUIET_FOLD_MIN), "once per quiet period");
        q.observe(6);
        assert!(q.should_fold(true, QUIET_FOLD_MIN), "a later commit allows another");
    }
}
