//! Scaffolding the paged-base tests share (`paged_tests`, adjacency; `paged_props_tests`,
//! properties): the store configuration with a tiny page cache, the pseudo-random sequence,
//! a store filled and closed (so its checkpoint and segment are on disk), a segment file
//! rewritten from edited columns, and the check's verdict.

use std::path::Path;
use std::time::Duration;

use tempfile::TempDir;

use crate::durability::checkpoint::{self, Manifest};
use crate::pager::pool::{MIN_FRAMES, PAGE_SIZE};
use crate::pager::segment::{write_segment, ColumnData};
use crate::{RealFs, Store, StoreConfig};

/// A page cache of the fewest frames the pool accepts.
pub(crate) const TINY: u64 = (MIN_FRAMES * PAGE_SIZE) as u64;

/// A store that never checkpoints on its own, with the given page-cache limit.
pub(crate) fn cfg(memory_limit: Option<u64>) -> StoreConfig {
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        memory_limit,
        ..StoreConfig::default()
    }
}

/// The next number of a linear congruential sequence (the same in every run).
pub(crate) fn lcg(x: &mut u64) -> u64 {
    *x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *x >> 11
}

/// A fresh directory with a store `fill` wrote, closed (its checkpoint and segment written),
/// and the manifest naming them.
pub(crate) fn filled_and_closed(fill: impl FnOnce(&Store)) -> (TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg(None)).unwrap();
    fill(&s);
    s.close().unwrap();
    drop(s);
    let m = checkpoint::read_manifest(&RealFs, dir.path()).unwrap().unwrap();
    (dir, m)
}

/// Replaces the segment file `m` names with one written from `cols`.
pub(crate) fn write_segment_file(dir: &Path, m: &Manifest, cols: &[(u8, ColumnData)]) {
    let mut out = Vec::new();
    write_segment(&mut out, m.ts, cols).unwrap();
    std::fs::write(dir.join(&m.segments[0]), &out).unwrap();
}

/// Asserts that `check` of a read-only open of `dir` reports a problem containing `what`.
pub(crate) fn assert_check_finds(dir: &Path, what: &str) {
    let s = Store::open_read_only(dir).unwrap();
    let r = s.check().unwrap();
    assert!(r.problems.iter().any(|p| p.contains(what)), "{:?}", r.problems);
}
