//! Transaction deadlines (Bolt `tx_timeout`): one watcher thread per database raises a
//! session's interrupt flag when its transaction runs past its deadline.
//!
//! The executor already stops at the next interrupt check when that flag is set (the flag Bolt
//! `RESET` raises), so a timeout costs nothing per row. The session tells the two apart through
//! [`Timer::fired`] and reports `TransactionTimedOut` instead of `Terminated`.
//!
//! Ordering: the watcher decides and raises the flag while holding the timer's `armed` lock, and
//! a session disarms under that lock before it clears the flag for its next query, so a deadline
//! of a finished transaction can never interrupt a later one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// The longest the watcher sleeps before looking again (also bounds how long it outlives its
/// database).
const WATCH_MAX: Duration = Duration::from_secs(1);

/// The per-session part: the deadline of the current transaction, if any.
pub(crate) struct Timer {
    flag: Arc<AtomicBool>,
    armed: Mutex<Option<Instant>>,
    fired: AtomicBool,
}

impl Timer {
    /// Whether the current deadline has passed (fired by the watcher, or found past by a check).
    pub(crate) fn expired(&self) -> bool {
        if self.fired.load(Ordering::SeqCst) {
            return true;
        }
        matches!(*self.armed.lock(), Some(d) if d <= Instant::now())
    }

    /// Forgets the deadline (the transaction ended). The caller clears the interrupt flag
    /// itself, after this returns.
    pub(crate) fn disarm(&self) {
        *self.armed.lock() = None;
        self.fired.store(false, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Shared {
    timers: Mutex<Vec<Weak<Timer>>>,
    wake: Condvar,
    watching: AtomicBool,
}

/// The database's deadline watcher (started on first use), and its list of live transactions.
#[derive(Default)]
pub(crate) struct Deadlines {
    shared: Arc<Shared>,
    transactions: crate::txinfo::Registry,
}

impl Deadlines {
    /// Every session's transaction (see txinfo.rs).
    pub(crate) fn transactions(&self) -> &crate::txinfo::Registry {
        &self.transactions
    }

    /// A timer raising `flag` on expiry, registered with the watcher.
    pub(crate) fn timer(&self, flag: Arc<AtomicBool>) -> Arc<Timer> {
        let t = Arc::new(Timer { flag, armed: Mutex::new(None), fired: AtomicBool::new(false) });
        self.shared.timers.lock().push(Arc::downgrade(&t));
        t
    }

    /// Sets `timer` to expire `after` from now.
    pub(crate) fn arm(&self, timer: &Timer, after: Duration) {
        self.start_watcher();
        timer.fired.store(false, Ordering::SeqCst);
        *timer.armed.lock() = Some(Instant::now() + after);
        // Taking the list lock orders this with the watcher's scan: it either sees the new
        // deadline or is already waiting and gets woken.
        let _list = self.shared.timers.lock();
        self.shared.wake.notify_all();
    }

    fn start_watcher(&self) {
        if self.shared.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(&self.shared);
        let spawned =
            std::thread::Builder::new().name("arbor-deadlines".into()).spawn(move || watch(weak));
        if spawned.is_err() {
            // Without a watcher, deadlines are still checked at every RUN, PULL and COMMIT.
            self.shared.watching.store(false, Ordering::SeqCst);
        }
    }
}

fn watch(weak: Weak<Shared>) {
    while let Some(shared) = weak.upgrade() {
        let mut timers = shared.timers.lock();
        let now = Instant::now();
        let mut next = now + WATCH_MAX;
        timers.retain(|w| {
            let Some(t) = w.upgrade() else { return false };
            let mut armed = t.armed.lock();
            match *armed {
                Some(d) if d <= now => {
                    t.fired.store(true, Ordering::SeqCst);
                    t.flag.store(true, Ordering::SeqCst);
                    *armed = None;
                }
                Some(d) => next = next.min(d),
                None => {}
            }
            true
        });
        shared.wake.wait_for(&mut timers, next.saturating_duration_since(now));
    }
}
