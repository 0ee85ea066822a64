//! Stores with segment files: a checkpoint writes the topology as a segment the manifest
//! lists; a reopened store with a page cache far smaller than its segments reads the same
//! topology through it; a crash at any step of a checkpoint leaves the old segment in use;
//! a flipped byte in a segment page is a `Corruption` naming file and page.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arbor_model::{NodeId, Status, Value};

use crate::base::{compare_segment, SegGraph};
use crate::durability::checkpoint;
use crate::pager::pool::{MIN_FRAMES, PAGE_SIZE};
use crate::simfs::{FaultKind, SimFs};
use crate::{Direction, Edge, Store, StoreConfig, TokenKind};

const TINY: u64 = (MIN_FRAMES * PAGE_SIZE) as u64;

fn cfg(memory_limit: Option<u64>) -> StoreConfig {
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        memory_limit,
        ..StoreConfig::default()
    }
}

/// `nodes` nodes with one of three label sets and `rels` relationships of three types between
/// pseudo-random nodes, in batches.
fn fill(s: &Store, nodes: u64, rels: u64, seed: u64) {
    let ls: Vec<_> = ["SEG_A", "SEG_B"]
        .iter()
        .map(|n| s.get_or_create_token(TokenKind::Label, n).unwrap())
        .collect();
    let ts: Vec<_> = ["R0", "R1", "R2"]
        .iter()
        .map(|n| s.get_or_create_token(TokenKind::RelType, n).unwrap())
        .collect();
    let k = s.get_or_create_token(TokenKind::PropertyKey, "k").unwrap();
    let mut w = s.begin(false);
    let first = w.create_node(&[], vec![]).unwrap().0;
    for i in 1..nodes {
        let labels = match i % 3 {
            0 => vec![ls[0]],
            1 => vec![ls[0], ls[1]],
            _ => vec![],
        };
        w.create_node(&labels, vec![(k, Value::Int(i as i64))]).unwrap();
    }
    w.commit().unwrap();
    let mut x = seed;
    for chunk in 0..rels.div_ceil(5000) {
        let mut w = s.begin(false);
        for _ in 0..5000.min(rels - chunk * 5000) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let a = first + (x >> 33) % nodes;
            let b = first + (x >> 13) % nodes;
            w.create_rel(NodeId(a), NodeId(b), ts[(x >> 60) as usize % 3], vec![]).unwrap();
        }
        w.commit().unwrap();
    }
}

/// Compares the store's current segment, read through its page cache, with its base.
fn segment_matches_base(s: &Store) -> u64 {
    let p = s.persist_for_test().as_ref().unwrap();
    let seg = p.pager.current().unwrap().expect("the store has a current segment");
    let base = s.core_for_test().base();
    assert_eq!(seg.ts, base.ts);
    let g = SegGraph::new(&seg, &p.pager.pool).unwrap();
    let diffs = compare_segment(&g, &base, 10).unwrap();
    assert!(diffs.is_empty(), "{diffs:?}");
    seg.pages()
}

fn edges(s: &Store, n: u64, dir: Direction) -> Vec<Edge> {
    let mut out = Vec::new();
    s.begin(true).node_edges(NodeId(n), dir, &[], &mut out);
    out
}

#[test]
fn a_store_reopened_with_a_tiny_page_cache_reads_its_larger_segment_correctly() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg(None)).unwrap();
    fill(&s, 3000, 80_000, 1);
    s.checkpoint().unwrap();
    let m = checkpoint::read_manifest(&crate::RealFs, dir.path()).unwrap().unwrap();
    assert_eq!(m.segments, vec![format!("segment-{:020}.arbor", m.ts)]);
    let before: Vec<_> = (0..3000).map(|n| edges(&s, n, Direction::Both)).collect();
    s.close().unwrap();
    drop(s);

    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let pages = segment_matches_base(&s);
    assert!(pages > 8 * MIN_FRAMES as u64, "the segment has only {pages} pages");
    let st = s.page_cache_stats().unwrap();
    assert_eq!(st.frames, MIN_FRAMES as u64);
    assert!(st.evictions > 0, "{st:?}");
    let after: Vec<_> = (0..3000).map(|n| edges(&s, n, Direction::Both)).collect();
    assert!(before == after);
    let r = s.check().unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
    assert_eq!(r.segment_pages, pages);
    // Writes after the reopen go to the delta; the next checkpoint writes a new segment and
    // removes the old one.
    fill(&s, 10, 100, 2);
    s.checkpoint().unwrap();
    segment_matches_base(&s);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("segment-"))
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(Store::open(dir.path(), cfg(Some(TINY - 1))).is_err());
}

#[test]
fn a_flipped_byte_in_a_segment_page_is_corruption_naming_file_and_page() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg(None)).unwrap();
    fill(&s, 500, 5000, 3);
    s.close().unwrap();
    drop(s);
    let m = checkpoint::read_manifest(&crate::RealFs, dir.path()).unwrap().unwrap();
    let path = dir.path().join(&m.segments[0]);
    let clean = std::fs::read(&path).unwrap();
    // The last page is data (label sets); flip a byte in the one before it.
    let mut bytes = clean.clone();
    let at = bytes.len() - PAGE_SIZE - 10;
    bytes[at] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    // A page the open reads whole fails the open; any other, the check.
    let page = (clean.len() / PAGE_SIZE) - 2; // counting the header page(s) as well
    let problems = match Store::open_read_only(dir.path()) {
        Ok(s) => s.check().unwrap().problems,
        Err(e) => vec![e.message],
    };
    assert!(
        problems.iter().any(|p| p.contains(&m.segments[0]) && p.contains("page")),
        "{problems:?} (around file page {page})"
    );
    // A damaged header: the open fails, naming the file.
    let mut bytes = clean;
    bytes[20] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let e = Store::open(dir.path(), cfg(None)).err().unwrap();
    assert_eq!(e.status, Status::Corruption);
    assert!(e.message.contains(&m.segments[0]), "{}", e.message);
}

const DIR: &str = "/segdata";

fn open_sim(fs: &SimFs) -> Store {
    Store::open_with_vfs(Path::new(DIR), cfg(Some(TINY)), Arc::new(fs.clone())).unwrap()
}

/// A crash at every mutating step of a checkpoint: the store reopens with the segment its
/// manifest names (the old one until the manifest switch), holding everything committed.
#[test]
fn a_crash_during_a_checkpoint_leaves_the_old_segment_in_use() {
    for skip in 0.. {
        let fs = SimFs::new(11);
        let s = open_sim(&fs);
        fill(&s, 200, 2000, 4);
        s.checkpoint().unwrap();
        let old = checkpoint::read_manifest(&fs, Path::new(DIR)).unwrap().unwrap();
        fill(&s, 50, 500, 5);
        let want: Vec<_> = (0..250).map(|n| edges(&s, n, Direction::Both)).collect();
        fs.arm(FaultKind::Crash, skip);
        let done = s.checkpoint().is_ok() && !fs.crashed();
        fs.disarm();
        s.crash_for_test();
        drop(s);
        fs.restart();
        let s = open_sim(&fs);
        let m = checkpoint::read_manifest(&fs, Path::new(DIR)).unwrap().unwrap();
        assert_eq!(m.segments.len(), 1);
        let p = s.persist_for_test().as_ref().unwrap();
        let cur = p.pager.current().unwrap().unwrap();
        assert!(cur.path().ends_with(&m.segments[0]));
        if m.ts == old.ts {
            assert_eq!(m.segments, old.segments, "crash at step {skip}");
        }
        let got: Vec<_> = (0..250).map(|n| edges(&s, n, Direction::Both)).collect();
        assert!(got == want, "crash at step {skip}");
        let r = s.check().unwrap();
        assert!(r.is_ok(), "crash at step {skip}: {:?}", r.problems);
        s.crash_for_test();
        if done {
            assert!(skip > 3, "the checkpoint took only {skip} steps");
            break;
        }
    }
}
