//! Filling, after the open, the index rules recovery installed unbuilt (`recovery.rs`).
//!
//! One thread fills them with [`Core::populate`], as an online `CREATE INDEX` fills its rule:
//! the rules list as POPULATING with progress in `SHOW INDEXES` and queries plan around them
//! (scans) until they are ONLINE. Uniqueness rules come first, and the thread holds the commit
//! mutex while it fills them: a commit validates its keys against the rule's index
//! (`validate_unique`), which is complete only once filled, so commits wait for it instead of
//! letting a duplicate of an existing row in; a statement writing a key of such a rule waits
//! too (`Core::await_replayed_unique`), so a duplicate fails at its statement, as against the
//! ONLINE rule, and any other write goes through once the rule is filled. (An online `CREATE CONSTRAINT` lets commits go on
//! and re-checks the whole rule at the end, failing the rule; a logged rule cannot fail.)
//! Reads do not take the commit mutex and go on meanwhile. The open returns only once the
//! thread holds the mutex, so no commit slips in before it. The other rules fill after the
//! mutex is released, with commits going on.

use std::sync::Arc;

use arbor_model::{Error, Result, Status};

use crate::mvcc::{CommitState, Core};
use crate::schema::IndexDef;

/// Test hooks: the names of the rules this module filled, and rules whose filling waits
/// while their name is listed.
#[cfg(test)]
pub(crate) static FILLED: parking_lot::Mutex<Vec<String>> = parking_lot::Mutex::new(Vec::new());
#[cfg(test)]
pub(crate) static HOLD: parking_lot::Mutex<Vec<String>> = parking_lot::Mutex::new(Vec::new());

fn fill(core: &Core, cs: Option<&mut CommitState>, d: &IndexDef) {
    #[cfg(test)]
    {
        FILLED.lock().push(d.name.clone());
        while HOLD.lock().contains(&d.name) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    core.populate_in(cs, &d.target(), &d.progress, d.rel);
}

/// Starts filling `rules` (see the module docs); returns once uniqueness rules, if any, are
/// guarded (the thread holds the commit mutex).
pub(crate) fn start(core: &Arc<Core>, rules: Vec<IndexDef>) -> Result<()> {
    if rules.is_empty() {
        return Ok(());
    }
    let (unique, other): (Vec<IndexDef>, Vec<IndexDef>) =
        rules.into_iter().partition(|d| d.kind.unique());
    let names: Vec<&str> = unique.iter().chain(&other).map(|d| d.name.as_str()).collect();
    tracing::info!(
        "filling {} index rule(s) replayed from the log: {}",
        names.len(),
        names.join(", ")
    );
    let (held_tx, held_rx) = crossbeam_channel::bounded::<()>(1);
    let core = core.clone();
    let run = move || {
        {
            let mut commits_wait = (!unique.is_empty()).then(|| core.lock_commit());
            let _ = held_tx.send(());
            for d in &unique {
                fill(&core, commits_wait.as_deref_mut(), d);
                tracing::info!("replayed uniqueness rule {} is online", d.name);
            }
        }
        for d in &other {
            fill(&core, None, d);
            tracing::info!("replayed index {} is online", d.name);
        }
    };
    let spawned = std::thread::Builder::new().name("arbor-index-population".into()).spawn(run);
    if let Err(e) = spawned {
        return Err(Error::new(
            Status::Internal,
            format!("cannot start the index population thread: {e}"),
        ));
    }
    // The thread sends once it holds the mutex (or dropped the sender by panicking).
    let _ = held_rx.recv();
    Ok(())
}
