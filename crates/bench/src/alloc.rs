//! A counting global allocator: wraps mimalloc and counts bytes and calls per
//! thread (thread-local `Cell`s, so the hot path adds two non-atomic increments) and in total
//! (one relaxed atomic add). A binary opts in with
//! `#[global_allocator] static A: arbor_bench::CountingAlloc = arbor_bench::CountingAlloc;`.
//!
//! Counting is off until a benchmark asks for it ([`is_installed`] or [`start_counting`]):
//! until then an allocation costs one relaxed load of a flag that never changes, so a server
//! (`arbor serve`) pays nothing measurable for having the counting allocator linked in (the
//! shared atomic total alone cost a few percent of allocation-heavy query paths).
//!
//! A `realloc` counts its full new size, the way a garbage-collected runtime allocates a new
//! array when a list grows: "bytes allocated" is comparable to the JVM's garbage per request.

// A global allocator cannot be written without `unsafe`: the trait's methods are unsafe and
// hand raw pointers through. Everything here only forwards to mimalloc (named `System` below) and counts.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};

use mimalloc::MiMalloc as System;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

thread_local! {
    static THREAD_BYTES: Cell<u64> = const { Cell::new(0) };
    static THREAD_CALLS: Cell<u64> = const { Cell::new(0) };
}

static TOTAL_BYTES: AtomicU64 = AtomicU64::new(0);

/// Whether allocations are being counted (off until a benchmark turns it on).
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Turns counting on for the rest of the process (benchmarks call it before measuring).
pub fn start_counting() {
    COUNTING.store(true, Ordering::Relaxed);
}

/// The counting allocator (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAlloc;

#[inline]
fn record(bytes: usize) {
    if !COUNTING.load(Ordering::Relaxed) {
        return;
    }
    // `try_with`: a thread's locals may already be gone while it frees its last memory.
    let _ = THREAD_BYTES.try_with(|c| c.set(c.get().wrapping_add(bytes as u64)));
    let _ = THREAD_CALLS.try_with(|c| c.set(c.get().wrapping_add(1)));
    TOTAL_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is exactly `System`'s; counting touches no allocated memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: forwarded unchanged (see above).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Tunes memory for this process; the binary calls it first thing in `main`. Transparent huge
/// pages are turned off for the process (`PR_SET_THP_DISABLE`, inherited by children):
/// mimalloc advises huge pages for its arenas (already at its start, before `main`), so every
/// fresh 2 MiB region was zeroed in the kernel on first touch, and a bulk `UNWIND ... CREATE`
/// connection thread spent a third of its time in `clear_page`. glibc's malloc never asked for
/// huge pages, so this keeps the page size Arbor always had. Returns whether the kernel agreed.
pub fn tune_allocator() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)` only sets a flag on this process;
        // no memory is passed.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// Allocation counters at one moment; subtract two to get what happened in between.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocCount {
    pub bytes: u64,
    pub calls: u64,
}

impl AllocCount {
    pub fn since(self, earlier: AllocCount) -> AllocCount {
        AllocCount {
            bytes: self.bytes.wrapping_sub(earlier.bytes),
            calls: self.calls.wrapping_sub(earlier.calls),
        }
    }
}

/// What the current thread has allocated so far while counting was on (zero unless
/// [`CountingAlloc`] is installed).
pub fn thread_allocated() -> AllocCount {
    AllocCount {
        bytes: THREAD_BYTES.try_with(Cell::get).unwrap_or(0),
        calls: THREAD_CALLS.try_with(Cell::get).unwrap_or(0),
    }
}

/// Bytes allocated by all threads so far.
pub fn total_allocated_bytes() -> u64 {
    TOTAL_BYTES.load(Ordering::Relaxed)
}

/// Turns counting on ([`start_counting`]) and reports whether [`CountingAlloc`] is the
/// process's global allocator (an allocation moves the counter).
pub fn is_installed() -> bool {
    start_counting();
    let before = thread_allocated();
    let probe = std::hint::black_box(vec![0u8; 64]);
    drop(probe);
    thread_allocated().bytes > before.bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static GLOBAL: CountingAlloc = CountingAlloc;

    #[test]
    fn huge_pages_are_turned_off() {
        assert!(tune_allocator());
        #[cfg(target_os = "linux")]
        // SAFETY: reads this process's flag.
        unsafe {
            assert_eq!(libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0), 1);
        }
    }

    #[test]
    fn counts_this_threads_allocations() {
        // Off by default: nothing is counted before a benchmark asks (tests in this binary
        // run in parallel, so only check that while no test has turned counting on).
        if !COUNTING.load(Ordering::Relaxed) {
            let before = thread_allocated();
            drop(std::hint::black_box(vec![0u8; 4096]));
            let after = thread_allocated().since(before);
            assert!(after.bytes < 4096 || COUNTING.load(Ordering::Relaxed), "{after:?}");
        }
        assert!(is_installed());
        let before = thread_allocated();
        let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(1000));
        let after = thread_allocated().since(before);
        assert!(after.bytes >= 8000, "{after:?}");
        assert!(after.calls >= 1);
        drop(v);
        // Another thread's allocations are not this thread's.
        let before = thread_allocated();
        std::thread::spawn(|| std::hint::black_box(vec![0u8; 1 << 20])).join().ok();
        assert!(thread_allocated().since(before).bytes < 1 << 20);
    }
}
