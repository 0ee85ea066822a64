//! An auto-commit statement that loses a write conflict runs again in a fresh transaction.
//!
//! Neo4j takes write locks: two auto-commit `MATCH (n {id: 1}) SET n.x = ...` at once both
//! succeed, the second after waiting for the first. Arbor's snapshot isolation detects the
//! conflict instead (first committer wins) and the loser fails with
//! `Neo.TransientError.Transaction.Outdated`; drivers retry that only inside managed
//! transactions, so an application that relied on Neo4j's locks would see errors it never saw.
//! The server therefore re-runs such a statement itself, from a new snapshot — what the lock
//! wait would have given — as long as doing so is invisible to the client:
//! - the statement runs in an auto-commit transaction (an explicit transaction's earlier
//!   statements cannot be re-run),
//! - no row has reached the client yet,
//! - nothing was committed along the way (no `CALL { } IN TRANSACTIONS`, no writing procedure,
//!   which may commit batches of its own),
//! - its parameters are small enough to keep a copy (a large `$batch` is moved into the
//!   execution, not copied),
//! - the transaction's deadline has not passed, and at most [`MAX_ATTEMPTS`] times, with a
//!   short growing back-off; after that the conflict is reported as before.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use arbor_exec::{Execution, PreparedQuery};
use arbor_model::{PropertyMap, Value};

/// Re-runs of one statement before the conflict is reported.
pub(super) const MAX_ATTEMPTS: u32 = 100;
/// Parameter values (list items, map entries, string bytes / 16) kept for a re-run at most.
const PARAM_BUDGET: usize = 4096;

/// What a re-run needs: the statement and a copy of its parameters.
pub(crate) struct Retry {
    query: Arc<PreparedQuery>,
    params: PropertyMap,
    attempts: u32,
}

impl Retry {
    /// The re-run of an auto-commit statement, if it may be re-run (see the module doc).
    pub(super) fn for_statement(query: &Arc<PreparedQuery>, params: &PropertyMap) -> Option<Retry> {
        if !query.is_write() || !query.rerunnable() {
            return None;
        }
        let mut budget = PARAM_BUDGET;
        if !params.values().all(|v| fits(v, &mut budget)) {
            return None;
        }
        Some(Retry { query: query.clone(), params: params.clone(), attempts: 0 })
    }
}

/// Whether `v` fits in what is left of `budget` (and takes its share).
fn fits(v: &Value, budget: &mut usize) -> bool {
    let cost = match v {
        Value::String(s) => 1 + s.len() / 16,
        Value::List(items) => 1 + items.len(),
        Value::Map(m) => 1 + m.len(),
        _ => 1,
    };
    if cost > *budget {
        return false;
    }
    *budget -= cost;
    match v {
        Value::List(items) => items.iter().all(|i| fits(i, budget)),
        Value::Map(m) => m.values().all(|i| fits(i, budget)),
        _ => true,
    }
}

impl Retry {
    /// The execution of the next attempt after a lost conflict, after a short back-off; `None`
    /// when the attempts are used up (or the statement no longer starts). `spread` (any value
    /// that differs between sessions) staggers the sessions that lost the same conflict.
    pub(super) fn next_attempt(
        &mut self,
        spread: usize,
        interrupt: Arc<AtomicBool>,
    ) -> Option<Execution> {
        if self.attempts >= MAX_ATTEMPTS {
            return None;
        }
        self.attempts += 1;
        // Let the winner finish: 1, 2, ... up to 8 ms, plus up to 0.5 ms of spread.
        let wait =
            Duration::from_micros(u64::from(self.attempts.min(8)) * 1000 + (spread % 500) as u64);
        std::thread::sleep(wait);
        let mut exec = Execution::start(self.query.clone(), self.params.clone()).ok()?;
        exec.set_interrupt(interrupt);
        tracing::debug!(
            attempt = self.attempts,
            "auto-commit statement re-run after a write conflict"
        );
        crate::metrics::bump(&crate::metrics::QUERIES.tx_rerun);
        Some(exec)
    }
}
