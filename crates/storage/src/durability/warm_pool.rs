//! Warm-up within the memory budget (`db.warmup()`, `apoc.warmup.run()`): first the
//! promotion the open would run (`promote.rs`: the parts of the base that fit three quarters
//! of the budget, read whole, their bytes taken from the pool's budget), then the page cache
//! is filled with the pages of what stays paged, part by part in the promotion's order and
//! within a part in the order queries read its columns (`base/warm_order.rs`), until it holds
//! as many pages as its limit allows: pool and promoted parts together stay within the budget,
//! and nothing read is evicted again by the warm-up itself. [`WARM_THREADS`] threads read
//! chunks of [`CHUNK_PAGES`] pages from a shared cursor (the reads are `pread`s of distinct
//! pages: they overlap on the disk and in the CRC checks). Progress is logged through
//! `tracing` at every tenth of the pages planned. A read error (a corrupt page) ends the
//! warm-up with the error; what was read stays cached.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use arbor_model::Result;
use parking_lot::Mutex;

use super::persist::Persist;
use super::promote;
use crate::mvcc::Core;
use crate::pager::pool::PAGE_SIZE;

/// Reader threads of the page-cache fill.
pub(crate) const WARM_THREADS: usize = 2;

/// Pages per unit of work of one reader thread (1 MiB).
pub(crate) const CHUNK_PAGES: u64 = 256;

/// What a warm-up read, per part of the base in the promotion's order: label codes and
/// bitsets, index arrays, adjacency, node property blobs, relationship property blobs.
#[derive(Clone, Debug, Default)]
pub struct WarmUp {
    /// Whether the promotion installed a base holding more in memory.
    pub promoted: bool,
    /// Per part, its bytes held in memory (decoded, promoted) after the warm-up.
    pub in_memory: [u64; 5],
    /// Per part, the pages of its paged columns read into the page cache.
    pub pages_read: [u64; 5],
    /// Per part, the milliseconds its page reads took (summed over the reader threads).
    pub millis: [u64; 5],
    /// The page cache's frames in use and its limit after the warm-up (4 KiB each).
    pub pool_resident: u64,
    pub pool_limit: u64,
}

/// One chunk of work: part, segment column id, first page, pages.
type Chunk = (usize, u8, u64, u64);

/// Runs the warm-up of a file-backed store (see the module docs); without `props` the pages
/// of the property blobs are not read into the page cache (the promotion still keeps them in
/// memory if they fit).
pub(crate) fn warm_up(core: &Core, persist: &Persist, props: bool) -> Result<WarmUp> {
    let mut out = WarmUp {
        promoted: promote::promote(core, persist, &AtomicBool::new(false))?,
        ..WarmUp::default()
    };
    let pool = persist.pager.pool.clone();
    let base = core.base();
    let s = base.stats();
    out.in_memory =
        [s.node_bytes, s.index_bytes, s.rel_bytes, s.node_property_bytes, s.rel_property_bytes];
    let seg = match persist.pager.current()? {
        Some(seg) if seg.ts == base.ts => seg,
        _ => {
            let st = pool.stats();
            (out.pool_resident, out.pool_limit) = (st.resident, st.limit);
            return Ok(out);
        }
    };
    let mut chunks: Vec<Chunk> = Vec::new();
    for (part, ids) in base.paged_part_columns().iter().enumerate() {
        if part >= 3 && !props {
            continue;
        }
        for &id in ids {
            let Some(col) = seg.column(id) else { continue };
            let pages = col.bytes().div_ceil(PAGE_SIZE as u64);
            let mut first = 0;
            while first < pages {
                let n = CHUNK_PAGES.min(pages - first);
                chunks.push((part, id, first, n));
                first += n;
            }
        }
    }
    let start = pool.stats();
    let room = start.limit.saturating_sub(start.resident);
    let planned: u64 = chunks.iter().map(|c| c.3).sum::<u64>().min(room);
    tracing::info!(
        "warm-up: reading up to {planned} pages ({} MiB) into the page cache, {WARM_THREADS} threads",
        (planned * PAGE_SIZE as u64) >> 20
    );
    let next = AtomicUsize::new(0);
    let read = AtomicU64::new(0);
    let per_part = Mutex::new(([0u64; 5], [0u64; 5]));
    let failed: Mutex<Option<arbor_model::Error>> = Mutex::new(None);
    let step = (planned / 10).max(1);
    let work = || loop {
        if failed.lock().is_some() {
            return;
        }
        let Some(&(part, id, first, n)) = chunks.get(next.fetch_add(1, Ordering::AcqRel)) else {
            return;
        };
        // Stop once the pages read fill the room the pool had (pages already cached are
        // counted too: a conservative stop).
        let before = read.fetch_add(n, Ordering::AcqRel);
        if before >= planned {
            return;
        }
        let Some(col) = seg.column(id) else { continue };
        let per = (PAGE_SIZE as u64 * col.len()).checked_div(col.bytes()).unwrap_or(1).max(1);
        let t = Instant::now();
        for page in first..first + n {
            if let Err(e) = seg.get(&pool, col, page * per) {
                failed.lock().get_or_insert(e);
                return;
            }
        }
        {
            let mut p = per_part.lock();
            p.0[part] += n;
            p.1[part] += t.elapsed().as_millis() as u64;
        }
        let done = before + n;
        if done / step != before / step {
            tracing::info!("warm-up: {} of {planned} pages read", done.min(planned));
        }
    };
    std::thread::scope(|sc| {
        for _ in 1..WARM_THREADS {
            sc.spawn(work);
        }
        work();
    });
    if let Some(e) = failed.into_inner() {
        return Err(e);
    }
    (out.pages_read, out.millis) = per_part.into_inner();
    let end = pool.stats();
    (out.pool_resident, out.pool_limit) = (end.resident, end.limit);
    tracing::info!(
        "warm-up done: {} MiB held in memory, page cache {} of {} pages",
        out.in_memory.iter().sum::<u64>() >> 20,
        out.pool_resident,
        out.pool_limit
    );
    Ok(out)
}
