//! Promotion of a lazily opened base: a store opens its complete segment in
//! [`OpenMode::Lazy`] (every column of O(nodes or relationships) read through the page cache,
//! so the open reads O(header + meta + tokens) bytes at any budget), and afterwards a
//! promotion opens the same segment again in [`OpenMode::Budget`] (the parts the promotion
//! plan keeps, in order and together within three quarters of the budget, read whole, as a
//! checkpoint's base keeps them; `base/segments.rs`) and swaps that base in for new
//! transactions. The promoted bytes are taken from the pool's budget before they are read
//! ([`crate::pager::pool::BufferPool::set_reserved`]), so pool and promoted parts together
//! stay within it. Reads then take the in-memory paths; transactions
//! already running keep the paged base.
//!
//! A file-backed store promotes when it opens ([`start`]): at once when the promotion reads at
//! most [`PROMOTE_AT_ONCE`] bytes (a small store: its open stays well under a second and its
//! first query takes the in-memory paths), otherwise in a thread of its own while queries
//! read through the page cache. A read-only open (`arbor check`, the profiling examples)
//! promotes a small store only. `db.warmup()` and `apoc.warmup.run()` promote at once
//! ([`crate::Store::warm_base`]). A promotion that would keep nothing more in memory (a store
//! too large for the budget) reads nothing beyond the meta. A checkpoint or compaction that
//! installs a newer base first makes the promotion a no-op: the new base is already what a
//! checkpoint keeps resident. A read error (a corrupt page) ends the promotion with the
//! error; the paged base stays, and reads meeting the page report it. Closing the store stops
//! a background promotion before it swaps (the thread is not waited for: it finishes its
//! current read and drops the base it built).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use arbor_model::Result;

use super::persist::Persist;
use crate::base::{Base, OpenMode};
use crate::mvcc::Core;
use crate::schema::Target;

/// Decoded bytes up to which the promotion at open runs before the open returns (about
/// 30 ms of sequential reads from the OS cache): above, it runs in the background.
pub(crate) const PROMOTE_AT_ONCE: u64 = 32 << 20;

/// Replaces the current base by its promotion if it is a lazily opened base of the current
/// segment and a promotion keeps more of it in memory (see the module docs). Returns whether
/// a promoted base was installed. Promotions of one store run one at a time.
pub(crate) fn promote(core: &Core, persist: &Persist, stop: &AtomicBool) -> Result<bool> {
    let _one = persist.promote_lock.lock();
    let Some(seg) = persist.pager.current()? else { return Ok(false) };
    let pool = persist.pager.pool.clone();
    let old = core.base();
    if stop.load(Ordering::Acquire) || old.promotion_bytes(&seg, pool.budget())? == 0 {
        return Ok(false);
    }
    // The promoted parts are taken from the pool before they are read, so the pool never
    // fills the memory they will hold.
    let before = pool.reserved();
    pool.set_reserved(Base::promoted_bytes(&seg, pool.budget())?);
    // The indexes the lazy open built because the segment lacked them are built again.
    let pairs: Vec<Target> = old.index_targets();
    let new = Base::from_segment(&seg, &pool, &pairs, OpenMode::Budget);
    let new: Base = new.inspect_err(|_| pool.set_reserved(before))?;
    if stop.load(Ordering::Acquire) {
        return Ok(false);
    }
    let mut cs = core.lock_commit();
    Ok(core.replace_base(&mut cs, &old, new))
}

/// The promotion of a just opened store (see the module docs): done before this returns, or
/// (with `background`) started in a thread whose stop flag and handle are returned. Failures
/// are logged: the store keeps reading through the page cache.
pub(crate) fn start(
    core: &Arc<Core>,
    persist: &Arc<Persist>,
    background: bool,
) -> Option<(Arc<AtomicBool>, JoinHandle<()>)> {
    let pending = || -> Result<u64> {
        let Some(seg) = persist.pager.current()? else { return Ok(0) };
        core.base().promotion_bytes(&seg, persist.pager.pool.budget())
    };
    let stop = Arc::new(AtomicBool::new(false));
    let report = |r: Result<bool>, dir: &std::path::Path| match r {
        Ok(true) => tracing::info!("{}: base promoted to memory", dir.display()),
        Ok(false) => {}
        Err(e) => tracing::warn!("the base stays paged: {}", e.message),
    };
    match pending() {
        Ok(0) => return None,
        Ok(n) if n <= PROMOTE_AT_ONCE => {
            report(promote(core, persist, &stop), &persist.dir);
            return None;
        }
        Ok(_) if background => {}
        Ok(_) => return None,
        Err(e) => {
            report(Err(e), &persist.dir);
            return None;
        }
    }
    let (core, persist, flag) = (core.clone(), persist.clone(), stop.clone());
    let run = move || report(promote(&core, &persist, &flag), &persist.dir);
    match std::thread::Builder::new().name("arbor-promote".into()).spawn(run) {
        Ok(h) => Some((stop, h)),
        Err(e) => {
            tracing::warn!("cannot start the promotion thread: {e}");
            None
        }
    }
}
