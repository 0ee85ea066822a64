//! The production allocator: mimalloc as the global allocator, and [`tune`] to keep the kernel
//! from backing its arenas with transparent huge pages. (The counting allocator of the
//! benchmarks lives in the separate `arbor-bench` binary.)

// `prctl` is a foreign function, so calling it is `unsafe`; it only sets a flag on this
// process and is passed no memory.
#![allow(unsafe_code)]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for the process (`PR_SET_THP_DISABLE`, inherited by
/// children); `main` calls it first. mimalloc advises huge pages for its arenas, so every fresh
/// 2 MiB region was zeroed in the kernel on first touch, and a bulk `UNWIND ... CREATE`
/// connection thread spent a third of its time in `clear_page`. Returns whether the kernel
/// agreed.
pub fn tune() -> bool {
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
