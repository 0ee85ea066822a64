//! The running execution's interrupt flag, for code that has no [`Ctx`](crate::ctx::Ctx) at
//! hand (functions building big values: `range()`, list functions). `Execution::next` makes
//! its flag current on the thread for the duration of the call ([`enter`]); such loops call
//! [`check`] per chunk of work. Outside an execution it is a no-op. Operators, which have a
//! `Ctx`, use `Ctx::tick` (a relaxed load every [`EVERY`] items) instead.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arbor_model::{Error, Result, Status};

/// Items between two looks at the flag in `Ctx::tick` (a power of two).
pub(crate) const EVERY: u32 = 1024;

thread_local! {
    static FLAG: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// The error an interrupted execution ends with (the session turns it into a timeout when
/// a deadline raised the flag).
pub(crate) fn terminated() -> Error {
    Error::new(Status::TransactionTerminated, "The transaction has been terminated.")
}

/// Makes `flag` the thread's current interrupt flag until the guard drops (which restores the
/// previous one, so nested executions nest).
pub(crate) fn enter(flag: Option<Arc<AtomicBool>>) -> Scope {
    Scope(FLAG.with(|f| f.replace(flag)))
}

/// Restores the previously current flag on drop.
pub(crate) struct Scope(Option<Arc<AtomicBool>>);

impl Drop for Scope {
    fn drop(&mut self) {
        let prev = self.0.take();
        FLAG.with(|f| *f.borrow_mut() = prev);
    }
}

/// Fails with [`terminated`] if the current flag is raised, or with the memory error once the
/// transaction passed a memory limit (see [`crate::memory`]).
pub(crate) fn check() -> Result<()> {
    let raised = FLAG.with(|f| f.borrow().as_ref().is_some_and(|f| f.load(Ordering::Relaxed)));
    if raised {
        return Err(terminated());
    }
    crate::memory::check()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_sees_the_current_flag_and_scopes_nest() {
        let flag = Arc::new(AtomicBool::new(true));
        assert!(check().is_ok(), "no execution: no interrupt");
        {
            let _s = enter(Some(flag.clone()));
            assert_eq!(check().unwrap_err().status, Status::TransactionTerminated);
            {
                let _inner = enter(None);
                assert!(check().is_ok());
            }
            assert!(check().is_err(), "the outer flag is current again");
        }
        assert!(check().is_ok());
    }
}
