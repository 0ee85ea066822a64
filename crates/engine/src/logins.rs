//! Login throttling for every protocol (Bolt and the HTTP Query API share one [`LoginGuard`]),
//! as Neo4j does it: after `dbms.security.auth_max_failed_attempts` (3)
//! failed logins in a row a user is locked for `dbms.security.auth_lock_time` (5 s), and every
//! attempt in that time fails with `Neo.ClientError.Security.AuthenticationRateLimit` without
//! checking the password. A success clears the count; a failure after the lock ends locks again.
//! Client addresses are limited the same way with a larger allowance
//! ([`LoginLimits::max_failed_per_address`], counted within one lock time), so a flood of wrong
//! logins for many user names from one address stops being hashed after a few rounds; the
//! checks are repeated once a hashing permit is granted, so queued attempts from a locked
//! address or user leave the queue without hashing.
//!
//! Password hashing (argon2id, about 19 MiB each) runs under a bounded, fair pool: at most
//! `hash_permits` at once, at most `hash_queue` waiting (beyond that a login is refused at once),
//! and a freed permit goes to the address with the fewest attempts in the pool, so a flood from
//! some addresses neither exhausts memory nor delays a valid login from another by more than
//! about one hash.

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
    /// Password checks waiting for a permit (a waiting check holds no hashing memory); beyond
    /// this a login is refused at once.
    pub hash_queue: usize,
    /// Failed logins from one address within `lock_time` before it is locked; 0 = no limit.
    pub max_failed_per_address: u32,
}

impl Default for LoginLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        LoginLimits {
            max_failed_attempts: 3,
            lock_time: Duration::from_secs(5),
            hash_permits: cores.clamp(2, 8),
            hash_queue: 1024,
            max_failed_per_address: 30,
        }
    }
}

/// Tracked users at most; beyond this, entries that are not locked are forgotten.
const MAX_TRACKED: usize = 10_000;

struct Failures {
    count: u32,
    locked_until: Option<Instant>,
    last: Option<Instant>,
}

struct Pool {
    running: usize,
    /// `(ticket, address)` of each attempt waiting for a permit.
    waiters: Vec<(u64, String)>,
    next_ticket: u64,
    /// Attempts running or waiting, per address.
    load: HashMap<String, usize>,
}

/// The server-wide login state.
pub struct LoginGuard {
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
    pub fn new(limits: LoginLimits) -> LoginGuard {
        LoginGuard {
            limits,
            failures: Mutex::new(HashMap::new()),
            pool: Mutex::new(Pool {
                running: 0,
                waiters: Vec::new(),
                next_ticket: 0,
                load: HashMap::new(),
            }),
            freed: Condvar::new(),
        }
    }

    /// Checks `user`'s password with `verify` (true: accepted), unless the user is locked or the
    /// hashing pool is full; records the outcome.
    pub fn attempt(
        &self,
        user: &str,
        address: &str,
        verify: impl FnOnce() -> bool,
    ) -> Result<bool> {
        let user_key = format!("user:{user}");
        let address_key = format!("address:{address}");
        let locked = || self.locked(&user_key) || self.locked(&address_key);
        if locked() {
            crate::metrics::bump(&crate::metrics::SERVER.failed_logins);
            return Err(rate_limited());
        }
        // An address with a recent failure gets at most an eighth of the queue (and at least
        // `hash_permits`) in the pool at once, so a flood from a few addresses cannot fill the
        // queue in front of others, while an application opening a few connections at once from
        // a host where a login just failed still waits its turn instead of being refused.
        let suspect = self.failed_recently(&address_key);
        let accepted =
            self.with_permit(
                &address_key,
                suspect,
                || if locked() { None } else { Some(verify()) },
            )?;
        let Some(accepted) = accepted else {
            crate::metrics::bump(&crate::metrics::SERVER.failed_logins);
            return Err(rate_limited());
        };
        self.record(&user_key, accepted, self.limits.max_failed_attempts, false);
        if !accepted {
            crate::metrics::bump(&crate::metrics::SERVER.failed_logins);
            self.record(&address_key, false, self.limits.max_failed_per_address, true);
        }
        Ok(accepted)
    }

    fn failed_recently(&self, key: &str) -> bool {
        let failures = self.failures.lock();
        failures.get(key).and_then(|f| f.last).is_some_and(|t| t.elapsed() < self.limits.lock_time)
    }

    fn locked(&self, key: &str) -> bool {
        let failures = self.failures.lock();
        failures.get(key).and_then(|f| f.locked_until).is_some_and(|until| Instant::now() < until)
    }

    /// Counts a failure of `key` (a success clears it); `max` failures lock it. With `decay`,
    /// failures older than the lock time are forgotten first.
    fn record(&self, key: &str, accepted: bool, max: u32, decay: bool) {
        let mut failures = self.failures.lock();
        if accepted {
            failures.remove(key);
            return;
        }
        if max == 0 {
            return;
        }
        if failures.len() >= MAX_TRACKED && !failures.contains_key(key) {
            let now = Instant::now();
            failures.retain(|_, f| f.locked_until.is_some_and(|u| u > now));
        }
        let now = Instant::now();
        let f = failures.entry(key.to_string()).or_insert(Failures {
            count: 0,
            locked_until: None,
            last: None,
        });
        if decay && f.last.is_some_and(|t| now.duration_since(t) > self.limits.lock_time) {
            f.count = 0;
        }
        f.last = Some(now);
        f.count = f.count.saturating_add(1);
        if f.count >= max {
            f.locked_until = Some(now + self.limits.lock_time);
        }
    }

    /// Runs `work` under a hashing permit. Waiters are served fairly across addresses: a freed
    /// permit goes to the waiter whose address has the fewest attempts in the pool (then the
    /// oldest), so a valid login waits about one hash however many others one address queued.
    /// A `suspect` address (recent failures) may have at most `hash_queue / 8` (at least
    /// `hash_permits`) in the pool.
    fn with_permit<T>(&self, address: &str, suspect: bool, work: impl FnOnce() -> T) -> Result<T> {
        let permits = self.limits.hash_permits;
        {
            let mut pool = self.pool.lock();
            let load = pool.load.get(address).copied().unwrap_or(0);
            let full = pool.running >= permits && pool.waiters.len() >= self.limits.hash_queue;
            let suspect_cap = (self.limits.hash_queue / 8).max(permits);
            if full || (suspect && load >= suspect_cap) {
                crate::metrics::bump(&crate::metrics::SERVER.failed_logins);
                return Err(Error::new(
                    Status::AuthenticationRateLimit,
                    "Too many concurrent authentication attempts; try again later.",
                ));
            }
            *pool.load.entry(address.to_string()).or_insert(0) += 1;
            let ticket = pool.next_ticket;
            pool.next_ticket += 1;
            pool.waiters.push((ticket, address.to_string()));
            while pool.running >= permits || pool.next_up() != Some(ticket) {
                self.freed.wait(&mut pool);
            }
            pool.waiters.retain(|(t, _)| *t != ticket);
            pool.running += 1;
        }
        // The head of the queue changed: let the next waiter look (a permit may be free).
        self.freed.notify_all();
        // Released even if `work` panics (it never should: it hashes a password).
        struct Release<'a>(&'a LoginGuard, &'a str);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                let mut pool = self.0.pool.lock();
                pool.running -= 1;
                if let Some(n) = pool.load.get_mut(self.1) {
                    *n -= 1;
                    if *n == 0 {
                        pool.load.remove(self.1);
                    }
                }
                drop(pool);
                self.0.freed.notify_all();
            }
        }
        let _release = Release(self, address);
        Ok(work())
    }
}

impl Pool {
    /// The waiter a free permit goes to.
    fn next_up(&self) -> Option<u64> {
        let load = |a: &String| self.load.get(a).copied().unwrap_or(0);
        self.waiters.iter().min_by_key(|(t, a)| (load(a), *t)).map(|(t, _)| *t)
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
            max_failed_per_address: 5,
        })
    }

    #[test]
    fn an_address_failing_for_many_users_is_locked_too() {
        let g = guard(200);
        for i in 0..5 {
            assert!(!g.attempt(&format!("user{i}"), "10.0.0.9", || false).unwrap());
        }
        let e = g.attempt("someone", "10.0.0.9", || true).unwrap_err();
        assert_eq!(e.status, Status::AuthenticationRateLimit);
        // Another address is served.
        assert!(g.attempt("someone", "10.0.0.8", || true).unwrap());
    }

    #[test]
    fn three_failures_lock_the_user_and_skip_the_password_check() {
        let g = guard(200);
        for _ in 0..3 {
            assert!(!g.attempt("neo4j", "a", || false).unwrap());
        }
        let checked = AtomicUsize::new(0);
        let e = g
            .attempt("neo4j", "a", || {
                checked.fetch_add(1, Ordering::SeqCst);
                true
            })
            .unwrap_err();
        assert_eq!(e.status, Status::AuthenticationRateLimit);
        assert_eq!(checked.load(Ordering::SeqCst), 0, "no hashing while locked");
        // Other users are not affected.
        assert!(g.attempt("alice", "a", || true).unwrap());
        std::thread::sleep(Duration::from_millis(250));
        // After the lock time the right password works and clears the count.
        assert!(g.attempt("neo4j", "a", || true).unwrap());
        assert!(!g.attempt("neo4j", "a", || false).unwrap());
        assert!(g.attempt("neo4j", "a", || true).unwrap());
    }

    #[test]
    fn a_failure_after_the_lock_ends_locks_again() {
        let g = guard(50);
        for _ in 0..3 {
            let _ = g.attempt("u", "a", || false);
        }
        std::thread::sleep(Duration::from_millis(80));
        assert!(!g.attempt("u", "a", || false).unwrap());
        assert!(g.attempt("u", "a", || true).is_err());
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
                    let r = g.attempt(&format!("user{i}"), &format!("a{i}"), || {
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
    #[test]
    fn concurrent_logins_after_a_failure_wait_instead_of_being_refused() {
        // neomodel's parallel-transactions test: a wrong password, then four connections
        // logging in at once from the same address.
        let g = Arc::new(LoginGuard::new(LoginLimits {
            max_failed_attempts: 3,
            lock_time: Duration::from_secs(5),
            hash_permits: 2,
            hash_queue: 1024,
            max_failed_per_address: 30,
        }));
        assert!(!g.attempt("other", "10.0.0.7", || false).unwrap());
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let g = g.clone();
                std::thread::spawn(move || {
                    g.attempt(&format!("user{i}"), "10.0.0.7", || {
                        std::thread::sleep(Duration::from_millis(20));
                        true
                    })
                })
            })
            .collect();
        for t in threads {
            assert!(t.join().unwrap().unwrap(), "a valid login was refused");
        }
    }
}
