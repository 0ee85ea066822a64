//! Query memory limits, as Neo4j names them: one [`MemoryPool`] per database
//! (`db.memory.transaction.total.max`) and a [`TxMemory`] per transaction
//! (`db.memory.transaction.max`).
//!
//! Accounting is done by the allocator, so it covers everything a transaction's thread holds:
//! parsing and planning, sort and aggregation buffers, `collect`, lists and strings being built,
//! expansion state, write sets and result rows. [`TrackingAlloc`] wraps the process's
//! allocator; while a transaction is *entered* on a thread ([`enter`]), every allocation and
//! free on that thread moves a thread-local byte count, and only when the count passes what the
//! transaction has reserved does it reserve another [`CHUNK`] (an atomic add on the pool). So the
//! hot path costs a thread-local add and compare per allocation, and the shared pool is touched
//! once per 64 KiB of growth.
//!
//! An allocator cannot fail politely, so a reservation over a limit still succeeds and only marks
//! the transaction; the running query fails at its next look ([`check`], made by the operators
//! with the interrupt check every 1,024 rows and by functions that build big values between
//! chunks), with `Neo.ClientError.General.TransactionOutOfMemoryError` (the transaction's limit)
//! or `Neo.TransientError.General.MemoryPoolOutOfMemoryError` (the pool's), and a message naming
//! the setting. Code that is about to make one large allocation whose size it knows asks first
//! ([`reserve`]), so a `range()` over the limit fails before it allocates.
//!
//! Without [`TrackingAlloc`] installed (an embedding application with its own allocator) only the
//! explicit [`reserve`] calls are accounted.
//!
//! Memory allocated while a transaction is entered and freed after it (or the reverse) moves
//! the count of whichever transaction is entered when it happens; a transaction's count never
//! outlives it: dropping a [`TxMemory`] returns its whole reservation to the pool.

// The `GlobalAlloc` implementation is the one unsafe part: it forwards every call unchanged to
// the wrapped allocator, so its contract is the wrapped allocator's.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use arbor_model::{Error, Result, Status};

/// Bytes a transaction reserves from its pool at a time.
pub const CHUNK: i64 = 64 << 10;

/// The setting that limits all transactions together.
pub const POOL_SETTING: &str = "db.memory.transaction.total.max";
/// The setting that limits one transaction.
pub const TX_SETTING: &str = "db.memory.transaction.max";

/// The memory all transactions of a database share. Limits are bytes, 0 for none.
#[derive(Debug, Default)]
pub struct MemoryPool {
    limit: AtomicU64,
    tx_limit: AtomicU64,
    /// Bytes reserved by live transactions.
    used: AtomicU64,
    /// Bytes reserved at the most.
    peak: AtomicU64,
}

impl MemoryPool {
    /// A pool with the given limits (bytes, 0: unlimited).
    pub fn new(limit: u64, tx_limit: u64) -> MemoryPool {
        let p = MemoryPool::default();
        p.set_limits(limit, tx_limit);
        p
    }

    /// Changes the limits for reservations from now on (`db.memory.transaction.total.max`,
    /// `db.memory.transaction.max`; 0: unlimited).
    pub fn set_limits(&self, limit: u64, tx_limit: u64) {
        self.limit.store(limit, Ordering::Relaxed);
        self.tx_limit.store(tx_limit, Ordering::Relaxed);
    }

    /// The pool's limit in bytes (0: none).
    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// The per-transaction limit in bytes (0: none but the pool's).
    pub fn transaction_limit(&self) -> u64 {
        self.tx_limit.load(Ordering::Relaxed)
    }

    /// Bytes live transactions hold now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes live transactions held at once.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Starts the accounting of a new transaction.
    pub fn transaction(self: &Arc<Self>) -> Arc<TxMemory> {
        Arc::new(TxMemory {
            pool: self.clone(),
            limit: self.transaction_limit(),
            used: AtomicI64::new(0),
            reserved: AtomicI64::new(0),
            peak: AtomicI64::new(0),
            exceeded: AtomicU8::new(NOT_EXCEEDED),
            failed_extra: AtomicU64::new(0),
            failed_used: AtomicU64::new(0),
        })
    }
}

const NOT_EXCEEDED: u8 = 0;
const TX_EXCEEDED: u8 = 1;
const POOL_EXCEEDED: u8 = 2;

/// The memory of one transaction: bytes in use, reserved from the pool in [`CHUNK`]s.
#[derive(Debug)]
pub struct TxMemory {
    pool: Arc<MemoryPool>,
    /// Bytes this transaction may reserve (0: as much as the pool gives).
    limit: u64,
    /// Bytes in use, as of the last time the transaction left a thread.
    used: AtomicI64,
    /// Bytes reserved from the pool (a multiple of [`CHUNK`]).
    reserved: AtomicI64,
    /// The most bytes reserved at once (Neo4j's `estimatedUsedHeapMemory`).
    peak: AtomicI64,
    exceeded: AtomicU8,
    /// The reservation that went over a limit, and what was reserved before it.
    failed_extra: AtomicU64,
    failed_used: AtomicU64,
}

impl TxMemory {
    /// Bytes the transaction holds now (as of its last reservation on the current thread).
    pub fn reserved(&self) -> u64 {
        self.reserved.load(Ordering::Relaxed).max(0) as u64
    }

    /// The most bytes the transaction held at once.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed).max(0) as u64
    }

    /// Reserves `extra` more bytes (reserved so far: `reserved`): from the pool, always, and
    /// marks the transaction if a limit is passed. Returns the new reservation.
    fn grow(&self, reserved: i64, extra: i64) -> i64 {
        let now = reserved + extra;
        let tx_over = self.limit > 0 && now > self.limit as i64;
        let pool_now = self.pool.used.fetch_add(extra as u64, Ordering::Relaxed) + extra as u64;
        self.pool.peak.fetch_max(pool_now, Ordering::Relaxed);
        let pool_limit = self.pool.limit();
        let pool_over = pool_limit > 0 && pool_now > pool_limit;
        if (tx_over || pool_over) && self.exceeded.load(Ordering::Relaxed) == NOT_EXCEEDED {
            let (kind, used) = if tx_over {
                (TX_EXCEEDED, reserved.max(0) as u64)
            } else {
                (POOL_EXCEEDED, pool_now - extra as u64)
            };
            self.failed_extra.store(extra as u64, Ordering::Relaxed);
            self.failed_used.store(used, Ordering::Relaxed);
            self.exceeded.store(kind, Ordering::Relaxed);
        }
        self.reserved.store(now, Ordering::Relaxed);
        self.peak.fetch_max(now, Ordering::Relaxed);
        now
    }

    /// Gives `bytes` of the reservation back to the pool.
    fn shrink(&self, reserved: i64, bytes: i64) -> i64 {
        self.pool.used.fetch_sub(bytes as u64, Ordering::Relaxed);
        let now = reserved - bytes;
        self.reserved.store(now, Ordering::Relaxed);
        now
    }

    /// The error a query of this transaction fails with once a limit was passed.
    pub fn error(&self) -> Option<Error> {
        let (status, setting, limit) = match self.exceeded.load(Ordering::Relaxed) {
            TX_EXCEEDED => (Status::TransactionOutOfMemory, TX_SETTING, self.limit),
            POOL_EXCEEDED => (Status::MemoryExhausted, POOL_SETTING, self.pool.limit()),
            _ => return None,
        };
        let extra = self.failed_extra.load(Ordering::Relaxed);
        let used = self.failed_used.load(Ordering::Relaxed);
        Some(limit_error(status, setting, extra, limit, used))
    }
}

impl Drop for TxMemory {
    fn drop(&mut self) {
        let r = self.reserved.load(Ordering::Relaxed);
        if r > 0 {
            self.pool.used.fetch_sub(r as u64, Ordering::Relaxed);
        }
    }
}

/// Neo4j's message: "The allocation of an extra 64.0 KiB would use more than the limit
/// 10.0 MiB. Currently using 10.0 MiB. db.memory.transaction.max threshold reached".
fn limit_error(status: Status, setting: &str, extra: u64, limit: u64, used: u64) -> Error {
    Error::new(
        status,
        format!(
            "The allocation of an extra {} would use more than the limit {}. Currently using {}. \
             {setting} threshold reached",
            format_bytes(extra),
            format_bytes(limit),
            format_bytes(used)
        ),
    )
}

/// Bytes as Neo4j prints them: `512 B`, `64.0 KiB`, `1.5 GiB`.
pub fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Parses a size as Neo4j's settings take it: bytes, or a number with `k`, `m`, `g` or `t`
/// (optionally followed by `b` or `ib`; powers of 1,024), e.g. `512m`, `2GiB`, `0` (no limit).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim().to_ascii_lowercase();
    let digits = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let shift = match unit.trim() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => return Err(format!("unknown unit `{other}` in size `{text}`")),
    };
    let n: f64 = num.parse().map_err(|_| format!("`{text}` is not a size (e.g. 512m, 2g)"))?;
    let bytes = n * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("size `{text}` is out of range"));
    }
    Ok(bytes as u64)
}

/// What a thread accounts while a transaction is entered on it.
struct Local {
    /// The entered transaction (null: none); valid while its [`Scope`] lives.
    tx: Cell<*const TxMemory>,
    /// Bytes in use (allocated minus freed) by the transaction.
    used: Cell<i64>,
    /// Bytes reserved from the pool for it.
    reserved: Cell<i64>,
    /// Whether the entered transaction passed a limit (a copy of its mark, so that [`check`],
    /// called per row by some operators, is one thread-local load).
    exceeded: Cell<bool>,
}

thread_local! {
    static LOCAL: Local = const {
        Local {
            tx: Cell::new(std::ptr::null()),
            used: Cell::new(0),
            reserved: Cell::new(0),
            exceeded: Cell::new(false),
        }
    };
}

/// Makes `tx` the transaction the thread's allocations count against until the guard drops
/// (which restores the previous one, so scopes nest).
pub fn enter(tx: &Arc<TxMemory>) -> Scope {
    let tx = tx.clone();
    let prev = LOCAL.with(|l| {
        let prev = (l.tx.get(), l.used.get(), l.reserved.get(), l.exceeded.get());
        l.used.set(tx.used.load(Ordering::Relaxed));
        l.reserved.set(tx.reserved.load(Ordering::Relaxed));
        l.exceeded.set(tx.exceeded.load(Ordering::Relaxed) != NOT_EXCEEDED);
        l.tx.set(Arc::as_ptr(&tx));
        prev
    });
    Scope { tx, prev }
}

/// Restores the previously entered transaction on drop, saving this one's counts.
pub struct Scope {
    tx: Arc<TxMemory>,
    prev: (*const TxMemory, i64, i64, bool),
}

impl Drop for Scope {
    fn drop(&mut self) {
        let (ptr, used, reserved, exceeded) = self.prev;
        LOCAL.with(|l| {
            self.tx.used.store(l.used.get(), Ordering::Relaxed);
            self.tx.reserved.store(l.reserved.get(), Ordering::Relaxed);
            l.tx.set(ptr);
            l.used.set(used);
            l.reserved.set(reserved);
            l.exceeded.set(exceeded);
        });
    }
}

/// Fails with the transaction's memory error once the entered transaction passed a limit.
#[inline]
pub fn check() -> Result<()> {
    let tx = LOCAL.with(|l| if l.exceeded.get() { l.tx.get() } else { std::ptr::null() });
    if tx.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null pointer is the entered transaction, kept alive by its `Scope`.
    match unsafe { &*tx }.error() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Asks, before allocating `bytes` at once, whether the entered transaction may: fails with its
/// memory error if that would pass a limit (nothing is reserved: the allocation itself is
/// accounted when it happens).
pub fn reserve(bytes: u64) -> Result<()> {
    check()?;
    let (tx, used) = LOCAL.with(|l| (l.tx.get(), l.used.get()));
    if tx.is_null() {
        return Ok(());
    }
    // SAFETY: as in `check`.
    let tx = unsafe { &*tx };
    let extra = bytes.min(i64::MAX as u64) as i64;
    let want = used.max(0).saturating_add(extra);
    if tx.limit > 0 && want > tx.limit as i64 {
        return Err(limit_error(
            Status::TransactionOutOfMemory,
            TX_SETTING,
            bytes,
            tx.limit,
            used.max(0) as u64,
        ));
    }
    let pool_limit = tx.pool.limit();
    let pool_used = tx.pool.used();
    if pool_limit > 0 && pool_used.saturating_add(bytes) > pool_limit {
        return Err(limit_error(
            Status::MemoryExhausted,
            POOL_SETTING,
            bytes,
            pool_limit,
            pool_used,
        ));
    }
    Ok(())
}

/// Bytes the entered transaction holds now (allocated minus freed on this thread), `None`
/// when none is entered.
pub fn in_use() -> Option<u64> {
    let (tx, used) = LOCAL.with(|l| (l.tx.get(), l.used.get()));
    (!tx.is_null()).then_some(used.max(0) as u64)
}

/// Bytes the entered transaction may still allocate before it passes its own limit or its
/// pool's: `None` when no transaction is entered or neither has a limit. Operators that can
/// move state to disk (aggregation) ask this before their state grows.
pub fn headroom() -> Option<u64> {
    let (tx, used) = LOCAL.with(|l| (l.tx.get(), l.used.get()));
    if tx.is_null() {
        return None;
    }
    // SAFETY: as in `check`.
    let tx = unsafe { &*tx };
    let own = (tx.limit > 0).then(|| tx.limit.saturating_sub(used.max(0) as u64));
    let pool_limit = tx.pool.limit();
    let pool = (pool_limit > 0).then(|| pool_limit.saturating_sub(tx.pool.used()));
    match (own, pool) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Counts `bytes` allocated (`grow`) or freed on this thread.
#[inline]
fn account(bytes: usize, grow: bool) {
    let _ = LOCAL.try_with(|l| {
        let tx = l.tx.get();
        if tx.is_null() {
            return;
        }
        let bytes = bytes as i64;
        if grow {
            let used = l.used.get() + bytes;
            l.used.set(used);
            let reserved = l.reserved.get();
            if used > reserved {
                let extra = (used - reserved + CHUNK - 1) / CHUNK * CHUNK;
                // SAFETY: as in `check`.
                let tx = unsafe { &*tx };
                l.reserved.set(tx.grow(reserved, extra));
                if tx.exceeded.load(Ordering::Relaxed) != NOT_EXCEEDED {
                    l.exceeded.set(true);
                }
            }
        } else {
            let used = l.used.get() - bytes;
            l.used.set(used);
            let reserved = l.reserved.get();
            let keep = (used.max(0) + CHUNK - 1) / CHUNK * CHUNK + CHUNK;
            if reserved - keep >= 2 * CHUNK {
                // SAFETY: as in `check`.
                l.reserved.set(unsafe { &*tx }.shrink(reserved, reserved - keep));
            }
        }
    });
}

/// The accounting allocator: `A` with every allocation and free counted against the
/// transaction entered on the thread (see the module doc). The `arbor` binary installs it over
/// mimalloc; test binaries install it over the system allocator.
pub struct TrackingAlloc<A>(pub A);

// SAFETY: every method forwards to `A` with the same arguments and returns its result; the
// accounting touches only thread-locals (const-initialised, no destructor, so it never
// allocates) and atomics.
unsafe impl<A: GlobalAlloc> GlobalAlloc for TrackingAlloc<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        account(layout.size(), true);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { self.0.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        account(layout.size(), true);
        // SAFETY: as above.
        unsafe { self.0.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        account(layout.size(), false);
        // SAFETY: as above.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            account(new_size - layout.size(), true);
        } else {
            account(layout.size() - new_size, false);
        }
        // SAFETY: as above.
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print_as_neo4j_writes_them() {
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size(" 0 "), Ok(0));
        assert!(parse_size("12x").is_err());
        assert!(parse_size("m").is_err());
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_bytes(64 << 10), "64.0 KiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn allocations_in_scope_reserve_chunks_and_a_limit_fails_the_next_check() {
        // The unit-test binary runs on `TrackingAlloc` (see lib.rs), so real allocations count.
        let pool = Arc::new(MemoryPool::new(0, 1 << 20));
        let tx = pool.transaction();
        {
            let _s = enter(&tx);
            let small = vec![0u8; 100 << 10];
            assert!(check().is_ok());
            assert!(pool.used() >= 100 << 10, "the allocation reserved chunks from the pool");
            assert_eq!(pool.used() % CHUNK as u64, 0);
            let big: Vec<u8> = Vec::with_capacity(2 << 20);
            let e = check().unwrap_err();
            assert_eq!(e.status, Status::TransactionOutOfMemory);
            assert!(e.message.contains("db.memory.transaction.max threshold reached"), "{e}");
            assert!(e.message.contains("the limit 1.0 MiB"), "{e}");
            drop((small, big));
        }
        assert!(check().is_ok(), "outside the scope nothing is checked");
        drop(tx);
        assert_eq!(pool.used(), 0, "a finished transaction gives everything back");
        assert!(pool.peak() >= 2 << 20);
    }

    #[test]
    fn the_pool_limit_holds_across_transactions() {
        let pool = Arc::new(MemoryPool::new(1 << 20, 0));
        let a = pool.transaction();
        let b = pool.transaction();
        let held = {
            let _s = enter(&a);
            vec![0u8; 700 << 10]
        };
        {
            let _s = enter(&b);
            assert_eq!(reserve(500 << 10).unwrap_err().status, Status::MemoryExhausted);
            let more = vec![0u8; 500 << 10];
            let e = check().unwrap_err();
            assert_eq!(e.status, Status::MemoryExhausted);
            assert!(e.message.contains("db.memory.transaction.total.max"), "{e}");
            drop(more);
        }
        drop(held);
        drop((a, b));
        assert_eq!(pool.used(), 0);
    }

    #[test]
    fn freeing_gives_chunks_back_and_scopes_nest() {
        let pool = Arc::new(MemoryPool::new(0, 0));
        let outer = pool.transaction();
        let inner = pool.transaction();
        let _o = enter(&outer);
        let v = vec![0u8; 1 << 20];
        let with_v = outer_reserved();
        {
            let _i = enter(&inner);
            let w = vec![0u8; 1 << 20];
            drop(w);
        }
        assert_eq!(outer_reserved(), with_v, "the inner scope did not count against the outer");
        assert_eq!(inner.reserved() as i64 % CHUNK, 0);
        assert!(inner.reserved() <= 3 * CHUNK as u64, "freed chunks went back");
        drop(v);
        assert!(outer_reserved() <= 3 * CHUNK, "freed chunks went back");
    }

    fn outer_reserved() -> i64 {
        LOCAL.with(|l| l.reserved.get())
    }
}
