//! An event counter that many threads bump without a shared read-modify-write: each thread
//! leases a slot of its own (a cache line) while it lives and adds to it with a plain relaxed
//! load and store; the total is the sum of the slots. The buffer pool counts its hits with it,
//! so readers on different cores never write the same cache line.
//!
//! A slot has one writer at a time: leases are handed out from a free list and returned when
//! the thread exits (the slot keeps its count, so the sum stays exact). When more threads live
//! at once than there are slots, the extra threads share slot 0 (never leased) with an atomic
//! add instead, so the total is exact in every case.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// Slots per counter (threads that can count without an atomic read-modify-write at once).
const SLOTS: usize = 64;

/// One slot on a cache line of its own.
#[repr(align(64))]
struct Slot(AtomicU64);

/// The counter (see the module docs).
pub(crate) struct Counter {
    slots: Box<[Slot]>,
}

/// Slot indices not leased by a living thread, and the next never-leased index.
static FREE: Mutex<(Vec<usize>, usize)> = Mutex::new((Vec::new(), 0));

/// A thread's lease: its slot index and whether it holds it alone.
struct Lease {
    index: Cell<usize>,
    alone: Cell<bool>,
}

impl Lease {
    fn take() -> Lease {
        let mut free = FREE.lock();
        let (index, alone) = match free.0.pop() {
            Some(i) => (i, true),
            // Slot 0 is never leased: it is the shared one.
            None if free.1 + 1 < SLOTS => {
                free.1 += 1;
                (free.1, true)
            }
            None => (0, false),
        };
        Lease { index: Cell::new(index), alone: Cell::new(alone) }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.alone.get() {
            FREE.lock().0.push(self.index.get());
        }
    }
}

thread_local! {
    static LEASE: Lease = Lease::take();
}

impl Counter {
    pub fn new() -> Counter {
        Counter { slots: (0..SLOTS).map(|_| Slot(AtomicU64::new(0))).collect() }
    }

    /// Adds one.
    #[inline]
    pub fn add1(&self) {
        // A thread being torn down (its lease already gone) counts in slot 0, atomically.
        let (i, alone) = LEASE.try_with(|l| (l.index.get(), l.alone.get())).unwrap_or((0, false));
        let s = &self.slots[i % SLOTS].0;
        if alone {
            // The only writer of this slot (see the module docs): no read-modify-write needed.
            s.store(s.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
        } else {
            s.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The total so far.
    pub fn sum(&self) -> u64 {
        self.slots.iter().map(|s| s.0.load(Ordering::Relaxed)).fold(0, u64::wrapping_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn counts_from_many_more_threads_than_slots_add_up_exactly() {
        let c = Arc::new(Counter::new());
        let threads: Vec<_> = (0..3 * SLOTS)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || (0..1000).for_each(|_| c.add1()))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(c.sum(), 3 * SLOTS as u64 * 1000);
    }
}
