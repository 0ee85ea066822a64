//! `invariant!`: assertions on what storage relies on (watermark order, commit timestamps
//! increasing, version chains sorted, CSR offsets monotonic, records that decode to what was
//! encoded), in the TigerBeetle manner: a broken invariant stops the program instead of
//! corrupting data.
//!
//! They run in debug builds and in this crate's own tests (which CI runs with the release
//! profile, so `debug_assert!` alone would never fire there), and compile to nothing in release
//! binaries, so the tuned read paths pay nothing. Cheap checks that guard the disk use plain
//! `assert!` instead. Never for input: bad bytes from disk are `Corruption` errors.

/// `assert!` in debug builds and in this crate's tests; nothing in release binaries.
macro_rules! invariant {
    ($cond:expr, $($msg:tt)+) => {
        if cfg!(any(test, debug_assertions)) {
            assert!($cond, $($msg)+);
        }
    };
}
