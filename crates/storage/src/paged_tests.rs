//! A base that reads its adjacency through the buffer pool: a store reopened with a page
//! cache many times smaller than its segment answers every expansion (each direction, type
//! filters, degrees) as an in-memory store with the same history does, with self-loops,
//! parallel relationships and deletes and creations in the delta; a corrupt segment page is a
//! read error the transaction keeps (naming file and page) and that refuses its commit.

use arbor_model::{NodeId, RelId, Status};

use crate::paged_test_util::{
    assert_check_finds, cfg, filled_and_closed, lcg, write_segment_file, TINY,
};
use crate::pager::pool::{MIN_FRAMES, PAGE_SIZE};
use crate::{Direction, Edge, Store, TokenKind};

const NODES: u64 = 2500;

/// Nodes, then relationships between random nodes (an eighth self-loops, a tenth repeated
/// as parallel relationships) of four types.
fn fill(s: &Store, seed: u64, rels: u64) {
    let ts: Vec<_> = ["P0", "P1", "P2", "P3"]
        .iter()
        .map(|n| s.get_or_create_token(TokenKind::RelType, n).unwrap())
        .collect();
    let mut w = s.begin(false);
    for _ in 0..NODES {
        w.create_node(&[], vec![]).unwrap();
    }
    w.commit().unwrap();
    let mut x = seed;
    let mut w = s.begin(false);
    let mut last = (0, 0);
    for i in 0..rels {
        let a = lcg(&mut x) % NODES;
        let (a, b) = match lcg(&mut x) % 10 {
            0 => last,
            1 => (a, a),
            _ => (a, lcg(&mut x) % NODES),
        };
        last = (a, b);
        let t = ts[(lcg(&mut x) % 4) as usize];
        w.create_rel(NodeId(a), NodeId(b), t, vec![]).unwrap();
        if i % 10_000 == 9_999 {
            w.commit().unwrap();
            w = s.begin(false);
        }
    }
    w.commit().unwrap();
}

/// Deletes some relationships, detaches and deletes some nodes, and creates new
/// relationships, the same in any store with the same history.
fn churn(s: &Store, seed: u64) {
    let t = s.get_or_create_token(TokenKind::RelType, "P1").unwrap();
    let mut x = seed;
    let mut w = s.begin(false);
    for _ in 0..300 {
        let n = NodeId(lcg(&mut x) % NODES);
        let mut es = Vec::new();
        w.node_edges(n, Direction::Both, &[], &mut es);
        if let Some(e) = es.get((lcg(&mut x) % 4) as usize) {
            w.delete_rel(e.rel).unwrap();
        }
    }
    for _ in 0..20 {
        let n = NodeId(lcg(&mut x) % NODES);
        let mut es = Vec::new();
        w.node_edges(n, Direction::Both, &[], &mut es);
        if !w.node_exists(n) {
            continue;
        }
        for e in es {
            w.delete_rel(e.rel).unwrap();
        }
        w.delete_node(n).unwrap();
    }
    for _ in 0..200 {
        let (a, b) = (NodeId(lcg(&mut x) % NODES), NodeId(lcg(&mut x) % NODES));
        if w.node_exists(a) && w.node_exists(b) {
            w.create_rel(a, b, t, vec![]).unwrap();
        }
    }
    w.commit().unwrap();
}

/// Every node's expansions in each direction, unfiltered and by one and two types, and its
/// degrees.
fn answers(s: &Store) -> Vec<(Vec<Edge>, u64)> {
    let types: Vec<u32> = ["P0", "P1", "P2", "P3"]
        .iter()
        .map(|n| s.get_or_create_token(TokenKind::RelType, n).unwrap())
        .collect();
    let filters: [&[u32]; 3] = [&[], &types[2..3], &types[0..2]];
    let tx = s.begin(true);
    let mut all = Vec::new();
    for n in 0..NODES {
        for dir in [Direction::Outgoing, Direction::Incoming, Direction::Both] {
            for f in filters {
                let mut out = Vec::new();
                tx.node_edges(NodeId(n), dir, f, &mut out);
                let mut each = Vec::new();
                tx.for_each_edge(NodeId(n), dir, f, |e| each.push(e));
                assert!(out == each, "node {n} {dir:?}: edges_into and for_each_edge differ");
                all.push((out, tx.degree(NodeId(n), dir, f)));
            }
        }
    }
    assert!(tx.read_error().is_none());
    all
}

/// Asserts the two answer lists are equal, naming the first node that differs.
fn same(a: &[(Vec<Edge>, u64)], b: &[(Vec<Edge>, u64)], what: &str) {
    assert_eq!(a.len(), b.len());
    if let Some(i) = (0..a.len()).find(|i| a[*i] != b[*i]) {
        panic!("{what}: node {} (query {}): {:?} vs {:?}", i / 9, i % 9, a[i], b[i]);
    }
}

#[test]
fn a_graph_8x_larger_than_the_pool_expands_as_the_in_memory_base_does() {
    for seed in [1u64, 2] {
        // `mem` is an in-memory store whose compactions build the same bases in memory; `s`
        // is reopened and reads its base through a pool far smaller than its segment.
        let d2 = tempfile::tempdir().unwrap();
        let mem = Store::in_memory();
        let s = Store::open(d2.path(), cfg(None)).unwrap();
        fill(&mem, seed, 60_000);
        mem.compact().unwrap();
        fill(&s, seed, 60_000);
        s.checkpoint().unwrap();
        assert!(!mem.core_for_test().base().is_paged());
        s.close().unwrap();
        drop(s);
        let s = Store::open(d2.path(), cfg(Some(TINY))).unwrap();
        assert!(s.core_for_test().base().is_paged(), "the reopened base reads the segment");
        let p = s.persist_for_test().as_ref().unwrap();
        let pages = p.pager.current().unwrap().unwrap().pages();
        assert!(pages >= 8 * MIN_FRAMES as u64, "the segment has only {pages} pages");
        same(&answers(&mem), &answers(&s), &format!("seed {seed}: clean base"));
        for st in [&mem, &s] {
            churn(st, seed + 10);
        }
        same(&answers(&mem), &answers(&s), &format!("seed {seed}: with the delta"));
        let st = s.page_cache_stats().unwrap();
        assert!(st.evictions > 0 && st.resident <= MIN_FRAMES as u64, "{st:?}");
        // A checkpoint folds the delta into a new segment; a reopen reads that one. (`mem`
        // folds too: a relationship in the delta is listed after the base's, so the order of
        // an expansion follows where the relationships live.)
        mem.compact().unwrap();
        s.close().unwrap();
        drop(s);
        let s = Store::open(d2.path(), cfg(Some(TINY))).unwrap();
        same(&answers(&mem), &answers(&s), &format!("seed {seed}: after a second checkpoint"));
    }
}

#[test]
fn a_corrupt_segment_page_is_a_read_error_naming_file_and_page() {
    let (dir, m) = filled_and_closed(|s| fill(s, 3, 20_000));
    let path = dir.path().join(&m.segments[0]);
    let mut bytes = std::fs::read(&path).unwrap();
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let seg = s.persist_for_test().as_ref().unwrap().pager.current().unwrap().unwrap();
    let data_pages = seg.pages();
    // Flip a byte in every page of the paged adjacency columns (the open reads the others
    // whole, and would fail): any adjacency read meets a bad page.
    let header = bytes.len() - data_pages as usize * PAGE_SIZE;
    for id in [4, 6, 7, 8, 9] {
        let c = seg.column(id).unwrap();
        let first = c.first_page() as usize;
        for p in first..first + c.bytes().div_ceil(PAGE_SIZE as u64) as usize {
            bytes[header + p * PAGE_SIZE + 17] ^= 0x20;
        }
    }
    drop(seg);
    drop(s);
    std::fs::write(&path, &bytes).unwrap();
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let tx = s.begin(true);
    let mut out = Vec::new();
    tx.node_edges(NodeId(7), Direction::Outgoing, &[], &mut out);
    let e = tx.read_error().expect("the bad page is reported").clone();
    assert_eq!(e.status, Status::Corruption);
    assert!(e.message.contains(&m.segments[0]) && e.message.contains("page"), "{}", e.message);
    assert_eq!(tx.degree(NodeId(7), Direction::Both, &[]), 0);
    drop(tx);
    // A write that read a bad page cannot commit (it may have decided on a partial answer).
    let mut w = s.begin(false);
    let _ = w.delete_node(NodeId(7));
    let _ = w.delete_rel(RelId(0));
    let e = w.commit().expect_err("the commit is refused");
    assert_eq!(e.status, Status::Corruption);
    assert_eq!(s.begin(true).read_error(), None);
}

#[test]
fn an_open_after_a_crash_replays_only_the_log_tail_onto_the_paged_base() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg(None)).unwrap();
    fill(&s, 4, 20_000);
    s.checkpoint().unwrap();
    let ckpt = s.core_for_test().base().ts;
    let t = s.get_or_create_token(TokenKind::RelType, "P2").unwrap();
    for i in 0..5u64 {
        let mut w = s.begin(false);
        w.create_rel(NodeId(i), NodeId(i + 1), t, vec![]).unwrap();
        w.commit().unwrap();
    }
    let want = answers(&s);
    s.crash_for_test();
    drop(s);
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    // The open loaded the checkpoint and replayed the five commits on top; the maintenance
    // thread checkpoints them soon after: the base then moves to that checkpoint's segment.
    {
        let p = s.persist_for_test().as_ref().unwrap();
        let start = std::time::Instant::now();
        while p.recovery_checkpoint.load(std::sync::atomic::Ordering::Acquire) {
            assert!(start.elapsed() < std::time::Duration::from_secs(60), "no checkpoint");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    let base = s.core_for_test().base();
    assert!(base.is_paged());
    assert_eq!(base.ts, ckpt + 5);
    let p = s.persist_for_test().as_ref().unwrap();
    assert_eq!(p.pager.current().unwrap().unwrap().ts, base.ts);
    // The order of a node's relationships follows where they live (the five were in the delta
    // and are in the base now), so the lists are compared as sets.
    let sorted = |mut a: Vec<(Vec<Edge>, u64)>| {
        a.iter_mut().for_each(|(es, _)| es.sort_by_key(|e| (e.rel.0, e.other.0)));
        a
    };
    same(&sorted(want), &sorted(answers(&s)), "after the crash");
}

/// A checkpoint of a running store moves its base to the new segment: the old one, already
/// unlinked, is closed as soon as no transaction reads the old base (it no longer holds its
/// disk space until a restart), and expansions answer as before.
#[test]
fn a_checkpoint_moves_the_base_to_its_new_segment_and_releases_the_old() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let mem = Store::in_memory();
    fill(&s, 5, 20_000);
    fill(&mem, 5, 20_000);
    s.checkpoint().unwrap();
    mem.compact().unwrap();
    let p = s.persist_for_test().as_ref().unwrap();
    let first = p.pager.current().unwrap().unwrap();
    assert!(s.core_for_test().base().is_paged(), "a checkpoint's base reads its segment");
    let old = std::sync::Arc::downgrade(&first);
    drop(first);
    let reader = s.begin(true);
    churn(&s, 6);
    churn(&mem, 6);
    s.checkpoint().unwrap();
    mem.compact().unwrap();
    let base = s.core_for_test().base();
    assert!(base.is_paged());
    assert_eq!(p.pager.current().unwrap().unwrap().ts, base.ts);
    assert!(old.upgrade().is_some(), "a reader of the old base still reads the old segment");
    let mut out = Vec::new();
    reader.node_edges(NodeId(3), Direction::Both, &[], &mut out);
    assert!(reader.read_error().is_none());
    drop(reader);
    drop(base);
    assert!(old.upgrade().is_none(), "the old segment is closed once nobody reads it");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("segment-"))
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    same(&answers(&mem), &answers(&s), "after the second checkpoint");
    let r = s.check().unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
}

/// `check` of a complete segment compares its outgoing and incoming adjacency: a segment with
/// valid page checksums whose outgoing neighbours were changed is reported.
#[test]
fn check_compares_the_segment_with_the_decoded_checkpoint() {
    use crate::pager::segment::ColumnData;
    let (dir, m) = filled_and_closed(|s| fill(s, 7, 20_000));
    let base = resident_base(dir.path(), &m.segments[0]);
    let words = base.label_set_words();
    let extra = base.segment_extra().unwrap();
    let mut cols = base.segment_columns(&words);
    cols.extend(extra.columns(&base));
    let seg = crate::pager::open_segment(&crate::RealFs, dir.path(), &m.segments[0]).unwrap();
    let crate::pager::segment::ColumnValues::U8(counts) =
        seg.read_column(seg.column(19).unwrap()).unwrap()
    else {
        panic!("the count store is bytes")
    };
    drop(seg);
    cols.push((19, ColumnData::U8(&counts)));
    // The outgoing neighbours (column 3), reversed: the same length, other answers.
    let (_, c) = cols.iter().find(|(id, _)| *id == 3).copied().unwrap();
    let mut v: Vec<u64> = match c {
        ColumnData::U8(x) => x.iter().map(|y| u64::from(*y)).collect(),
        ColumnData::U16(x) => x.iter().map(|y| u64::from(*y)).collect(),
        ColumnData::U32(x) => x.iter().map(|y| u64::from(*y)).collect(),
        ColumnData::U64(x) => x.to_vec(),
        other => panic!("neighbours stored as {other:?}"),
    };
    v.reverse();
    for c in cols.iter_mut().filter(|(id, _)| *id == 3) {
        c.1 = ColumnData::U64(&v);
    }
    write_segment_file(dir.path(), &m, &cols);
    assert_check_finds(dir.path(), "outgoing and incoming adjacency differ");
}

/// The base of segment `name` in `dir`, opened whole into memory.
pub(crate) fn resident_base(dir: &std::path::Path, name: &str) -> crate::base::Base {
    let seg = crate::pager::open_segment(&crate::RealFs, dir, name).unwrap();
    let pool = std::sync::Arc::new(crate::pager::pool::BufferPool::new(1 << 20).unwrap());
    crate::durability::checkpoint_segments::open_base(
        &seg,
        &pool,
        &[],
        crate::base::OpenMode::Resident,
    )
    .unwrap()
    .0
}
