//! The production allocator: mimalloc as the global allocator (wrapped by the query memory
//! accounting), [`tune`] to keep the kernel from backing its arenas with transparent huge
//! pages and to batch its purges, and [`release`] to give free memory back to the OS. (The
//! counting allocator of the benchmarks lives in the separate `arbor-bench` binary.)

// `prctl` and `mi_collect` are foreign functions, so calling them is `unsafe`; neither is
// passed any memory.
#![allow(unsafe_code)]

/// mimalloc, with every allocation counted against the transaction running on the thread (the
/// query memory limits, `arbor_engine::memory_limits`).
#[global_allocator]
static GLOBAL: arbor_engine::memory_limits::TrackingAlloc<mimalloc::MiMalloc> =
    arbor_engine::memory_limits::TrackingAlloc(mimalloc::MiMalloc);

/// mimalloc's `mi_option_purge_delay` (its index in `mi_option_t`, the same in v2 and v3).
const MI_OPTION_PURGE_DELAY: i32 = 15;

extern "C" {
    /// Sets a mimalloc option (`mi_option_t` is a C enum, passed as an `int`).
    fn mi_option_set(option: i32, value: std::ffi::c_long);
    /// mimalloc's "eagerly free memory" (in the library `libmimalloc-sys` builds; declared
    /// here so that no binding feature is needed). `force`: also collect pages of threads that
    /// have exited and return free memory to the OS now instead of after its purge delay.
    fn mi_collect(force: bool);
}

/// Returns the allocator's free memory to the OS; the store calls it after garbage collection
/// freed memory once writes are quiet (`arbor_engine::memory_limits::set_memory_release_hook`),
/// so resident memory comes back after a live load or a delete.
pub fn release() {
    // SAFETY: `mi_collect` takes no pointers and may be called from any thread at any time.
    unsafe { mi_collect(true) }
}

/// How long freed memory stays committed before mimalloc may return it to the OS (the server).
/// Memory freed and reused within this time costs no system call; what stays free longer is
/// purged by whichever thread allocates next, or by the janitor thread.
const SERVER_PURGE_DELAY_MS: std::ffi::c_long = 100;
/// How often the janitor thread lets mimalloc purge memory whose delay has expired.
const JANITOR_PERIOD: std::time::Duration = std::time::Duration::from_millis(250);

/// Tunes mimalloc for the server (`server`: a purge delay of [`SERVER_PURGE_DELAY_MS`] and a
/// janitor thread), and turns transparent huge pages off for the process
/// (`PR_SET_THP_DISABLE`, inherited by children); `main` calls it once the command line is
/// parsed. mimalloc advises huge pages for its arenas, so every fresh 2 MiB region was zeroed
/// in the kernel on first touch, and a bulk `UNWIND ... CREATE` connection thread spent a third
/// of its time in `clear_page`. Returns whether the kernel agreed.
pub fn tune(server: bool) -> bool {
    // mimalloc (v3) waits 1 s before it returns freed memory to the OS, and only a thread that
    // allocates runs the purge: memory freed by a connection thread that then went idle or
    // ended stayed resident (Pokec medium loaded over Bolt: 195 MiB resident after the load
    // settled, 71 MiB with purges at once). Purging at once costs more: every free of a large
    // block `madvise`s, and each `madvise` interrupts the other core to flush its TLB (25 % of
    // the server's time in the kernel on mgBench Q15 with 12 clients). So the server purges
    // after a short delay, and a janitor thread runs the expired purges when nothing else does.
    if server {
        // SAFETY: sets an integer option; mimalloc reads it on every purge decision.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, SERVER_PURGE_DELAY_MS) };
        let started = std::thread::Builder::new().name("alloc-janitor".into()).spawn(|| loop {
            std::thread::sleep(JANITOR_PERIOD);
            // SAFETY: `mi_collect` takes no pointers and may be called from any thread at
            // any time; without `force` it only runs the purges whose delay has expired.
            unsafe { mi_collect(false) }
        });
        if let Err(e) = started {
            tracing::warn!("cannot start the allocator janitor thread: {e}");
        }
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)` only sets a flag on this process.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}
