//! Login throttling, as Neo4j does it: after `dbms.security.auth_max_failed_attempts` (3)
//! failed logins in a row a user is locked for `dbms.security.auth_lock_time` (5 s), and every
//! attempt in that time fails with `Neo.ClientError.Security.AuthenticationRateLimit` without
//! checking the password. A success clears the count; a failure after the lock ends locks again.
//!
//! Password hashing (argon2id, about 19 MiB each) runs under a bounded pool: at most `permits`
//! at once, at most `queue` waiting; a login beyond that is refused at once with the same
//! transient-looking code instead of piling up memory and delaying everyone.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status};
use parking_lot::{Condvar, Mutex};

/// Settings (Neo4j's names in the docs of each field).
#[derive(Clone, Debug)]
pub struct LoginLimits {
    /// `dbms.security.auth_max_failed_attempts`; 0 disables the lock.
    pub max_failed_attempts: u32,
    /// `dbms.security.auth_lock_time`.
    pub lock_time: Duration,
    /// Password checks running at once.
    pub hash_permits: usize,
    /// Password checks waiting for a permit; beyond this a login is refused at once.
    pub hash_queue: usize,
}

impl Default for LoginLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        LoginLimits {
            max_failed_attempts: 3,
            lock_time: Duration::from_secs(5),
            hash_permits: cores.clamp(2, 8),
            hash_queue: 64,
        }
    }
}

/// Tracked users at most; beyond this, entries that are not locked are forgotten.
const MAX_TRACKED: usize = 10_000;

struct Failures {
    count: u32,
    locked_until: Option<Instant>,
}

struct Pool {
    running: usize,
    waiting: usize,
}

/// The server-wide login state.
pub(crate) struct LoginGuard {
    limits: LoginLimits,
    failures: Mutex<HashMap<String, Failures>>,
    pool: Mutex<Pool>,
    freed: Condvar,
}

pub(crate) fn rate_limited() -> Error {
    Error::new(
        Status::AuthenticationRateLimit,
        "The client has provided incorrect authentication details too many times in a row.",
    )
}

impl LoginGuard {
    pub(crate) fn new(limits: LoginLimits) -> LoginGuard {
        LoginGuard {
            limits,
            failures: Mutex::new(HashMap::new()),
            pool: Mutex::new(Pool { running: 0, waiting: 0 }),
            freed: Condvar::new(),
        }
    }

    /// Checks `user`'s password with `verify` (true: accepted), unless the user is locked or the
    /// hashing pool is full; records the outcome.
    pub(crate) fn attempt(&self, user: &str, verify: impl FnOnce() -> bool) -> Result<bool> {
        if self.locked(user) {
            return Err(rate_limited());
        }
        let accepted = self.with_permit(verify)?;
        self.record(user, accepted);
        Ok(accepted)
    }

    fn locked(&self, user: &str) -> bool {
        let failures = self.failures.lock();
        failures.get(user).and_then(|f| f.locked_until).is_some_and(|until| Instant::now() < until)
    }

    fn record(&self, user: &str, accepted: bool) {
        let mut failures = self.failures.lock();
        if accepted {
            failures.remove(user);
            return;
        }
        if self.limits.max_failed_attempts == 0 {
            return;
        }
        if failures.len() >= MAX_TRACKED && !failures.contains_key(user) {
            let now = Instant::now();
            failures.retain(|_, f| f.locked_until.is_some_and(|u| u > now));
        }
        let f =
            failures.entry(user.to_string()).or_insert(Failures { count: 0, locked_until: None });
        f.count = f.count.saturating_add(1);
        if f.count >= self.limits.max_failed_attempts {
            f.locked_until = Some(Instant::now() + self.limits.lock_time);
        }
    }

    fn with_permit<T>(&self, work: impl FnOnce() -> T) -> Result<T> {
        {
            let mut pool = self.pool.lock();
            if pool.running >= self.limits.hash_permits {
                if pool.waiting >= self.limits.hash_queue {
                    return Err(Error::new(
                        Status::AuthenticationRateLimit,
                        "Too many concurrent authentication attempts; try again later.",
                    ));
                }
                pool.waiting += 1;
                while pool.running >= self.limits.hash_permits {
                    self.freed.wait(&mut pool);
                }
                pool.waiting -= 1;
            }
            pool.running += 1;
        }
        // Released even if `work` panics (it never should: it hashes a password).
        struct Release<'a>(&'a LoginGuard);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.pool.lock().running -= 1;
                self.0.freed.notify_one();
            }
        }
        let _release = Release(self);
        Ok(work())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn guard(lock_ms: u64) -> LoginGuard {
        LoginGuard::new(LoginLimits {
            max_failed_attempts: 3,
            lock_time: Duration::from_millis(lock_ms),
            hash_permits: 2,
            hash_queue: 4,
        })
    }

    #[test]
    fn three_failures_lock_the_user_and_skip_the_password_check() {
        let g = guard(200);
        for _ in 0..3 {
            assert!(!g.attempt("neo4j", || false).unwrap());
        }
        let checked = AtomicUsize::new(0);
        let e = g
            .attempt("neo4j", || {
                checked.fetch_add(1, Ordering::SeqCst);
                true
            })
            .unwrap_err();
        assert_eq!(e.status, Status::AuthenticationRateLimit);
        assert_eq!(checked.load(Ordering::SeqCst), 0, "no hashing while locked");
        // Other users are not affected.
        assert!(g.attempt("alice", || true).unwrap());
        std::thread::sleep(Duration::from_millis(250));
        // After the lock time the right password works and clears the count.
        assert!(g.attempt("neo4j", || true).unwrap());
        assert!(!g.attempt("neo4j", || false).unwrap());
        assert!(g.attempt("neo4j", || true).unwrap());
    }

    #[test]
    fn a_failure_after_the_lock_ends_locks_again() {
        let g = guard(50);
        for _ in 0..3 {
            let _ = g.attempt("u", || false);
        }
        std::thread::sleep(Duration::from_millis(80));
        assert!(!g.attempt("u", || false).unwrap());
        assert!(g.attempt("u", || true).is_err());
    }

    #[test]
    fn hashing_runs_under_a_bounded_pool() {
        let g = Arc::new(guard(1000));
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let refused = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let (g, running, peak, refused) =
                    (g.clone(), running.clone(), peak.clone(), refused.clone());
                std::thread::spawn(move || {
                    let r = g.attempt(&format!("user{i}"), || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(30));
                        running.fetch_sub(1, Ordering::SeqCst);
                        false
                    });
                    if r.is_err() {
                        refused.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(peak.load(Ordering::SeqCst) <= 2, "at most two hashes at once");
        // 16 at once with 2 running and 4 waiting: the rest are refused, not queued.
        assert!(refused.load(Ordering::SeqCst) >= 1);
    }
}
