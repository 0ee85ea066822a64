//! A base that reads its property blobs through the buffer pool: a store reopened with a page
//! cache many times smaller than its properties answers every property, label, label scan and
//! relationship read as an in-memory store with the same history does, with updates and
//! deletes in the delta; a corrupt property page is a `Corruption` read error naming file and
//! page, reported by every transaction open when it was read, and never checkpointed.

use arbor_model::{NodeId, RelId, Status, Value};

use crate::paged_test_util::{cfg, filled_and_closed, lcg, TINY};
use crate::pager::pool::{MIN_FRAMES, PAGE_SIZE};
use crate::{Direction, Store, TokenKind};

const NODES: u64 = 4000;
const RELS: u64 = 8000;
const KEYS: [&str; 5] = ["age", "name", "city", "score", "tags"];

fn tok(s: &Store, kind: TokenKind, name: &str) -> u32 {
    s.get_or_create_token(kind, name).unwrap()
}

/// A value for key `k` of entity `i`: integers, distinct (inline) and repeated (interned)
/// strings, floats and lists; some keys missing.
fn value(k: usize, i: u64, x: &mut u64) -> Option<Value> {
    let r = lcg(x);
    match k {
        0 => Some(Value::Int((r % 100) as i64 - 10)),
        1 => Some(Value::String(format!("person number {i} of the paged graph").into())),
        2 => (!r.is_multiple_of(3)).then(|| Value::String(format!("city{}", r % 7).into())),
        3 => r.is_multiple_of(2).then(|| Value::Float((r % 1000) as f64 / 7.0)),
        _ => r
            .is_multiple_of(5)
            .then(|| Value::List(vec![Value::Int(i as i64), Value::Int((r % 10) as i64)])),
    }
}

/// Nodes with labels and properties, then relationships with properties.
fn fill(s: &Store, seed: u64) {
    let keys: Vec<u32> = KEYS.iter().map(|k| tok(s, TokenKind::PropertyKey, k)).collect();
    let labels: Vec<u32> =
        ["PL0", "PL1", "PL2"].iter().map(|l| tok(s, TokenKind::Label, l)).collect();
    let ty = tok(s, TokenKind::RelType, "PR");
    let mut x = seed;
    let mut w = s.begin(false);
    for i in 0..NODES {
        let props = (0..KEYS.len()).filter_map(|k| value(k, i, &mut x).map(|v| (keys[k], v)));
        let props: Vec<_> = props.collect();
        let ls: Vec<u32> =
            labels.iter().copied().filter(|_| lcg(&mut x).is_multiple_of(2)).collect();
        w.create_node(&ls, props).unwrap();
    }
    w.commit().unwrap();
    let mut w = s.begin(false);
    for i in 0..RELS {
        let (a, b) = (NodeId(lcg(&mut x) % NODES), NodeId(lcg(&mut x) % NODES));
        let props = (0..3).filter_map(|k| value(k, i, &mut x).map(|v| (keys[k], v))).collect();
        w.create_rel(a, b, ty, props).unwrap();
    }
    w.commit().unwrap();
}

/// Updates, removes and adds properties and labels, deletes relationships and nodes, and
/// creates relationships with properties: the same in any store with the same history.
fn churn(s: &Store, seed: u64) {
    let keys: Vec<u32> = KEYS.iter().map(|k| tok(s, TokenKind::PropertyKey, k)).collect();
    let l1 = tok(s, TokenKind::Label, "PL1");
    let ty = tok(s, TokenKind::RelType, "PR");
    let mut x = seed;
    let mut w = s.begin(false);
    for i in 0..400 {
        let n = NodeId(lcg(&mut x) % NODES);
        if !w.node_exists(n) {
            continue;
        }
        let k = (lcg(&mut x) % KEYS.len() as u64) as usize;
        let v = value(k, i, &mut x).unwrap_or(Value::Null);
        w.set_node_property(n, keys[k], v).unwrap();
        if i % 3 == 0 {
            w.add_label(n, l1).unwrap();
        } else if i % 3 == 1 {
            w.remove_label(n, l1).unwrap();
        }
        let r = RelId(lcg(&mut x) % RELS);
        if w.rel_exists(r) {
            if i % 2 == 0 {
                w.set_rel_property(r, keys[0], Value::Int(i as i64)).unwrap();
            } else {
                w.delete_rel(r).unwrap();
            }
        }
    }
    for _ in 0..30 {
        let n = NodeId(lcg(&mut x) % NODES);
        if !w.node_exists(n) {
            continue;
        }
        let mut es = Vec::new();
        w.node_edges(n, Direction::Both, &[], &mut es);
        for e in es {
            w.delete_rel(e.rel).unwrap();
        }
        w.delete_node(n).unwrap();
    }
    for i in 0..200 {
        let (a, b) = (NodeId(lcg(&mut x) % NODES), NodeId(lcg(&mut x) % NODES));
        if w.node_exists(a) && w.node_exists(b) {
            w.create_rel(a, b, ty, vec![(keys[1], Value::String(format!("new {i}").into()))])
                .unwrap();
        }
    }
    w.commit().unwrap();
}

type Answers = Vec<String>;

/// Every node's labels and properties (whole and per key, batched too), each label's scan,
/// and every relationship's endpoints, type and properties, one line per entity.
fn answers(s: &Store) -> Answers {
    let keys: Vec<u32> = KEYS.iter().map(|k| tok(s, TokenKind::PropertyKey, k)).collect();
    let labels: Vec<u32> =
        ["PL0", "PL1", "PL2"].iter().map(|l| tok(s, TokenKind::Label, l)).collect();
    let tx = s.begin(true);
    let mut out = Vec::new();
    let ids: Vec<NodeId> = (0..NODES).map(NodeId).collect();
    let mut batch = Vec::new();
    tx.node_property_batch(&ids, keys[0], &mut batch);
    let (mut vals, mut present) = (Vec::new(), Vec::new());
    let typed = tx.node_int_gather(&ids, keys[0], &mut vals, &mut present);
    out.push(format!("gather {typed} {vals:?} {present:?}"));
    if typed {
        for (i, v) in batch.iter().enumerate() {
            let want = if let Value::Int(x) = v { Some(*x) } else { None };
            assert_eq!(present[i].then_some(vals[i]), want, "gather of node {i}");
        }
    }
    for n in 0..NODES {
        let id = NodeId(n);
        let each: Vec<_> = keys.iter().map(|k| tx.node_property(id, *k)).collect();
        let has: Vec<_> = labels.iter().map(|l| tx.node_has_label(id, *l)).collect();
        out.push(format!(
            "node {n}: {} {:?} {:?} {each:?} {has:?} batch {:?}",
            tx.node_exists(id),
            tx.node_labels(id),
            tx.node_properties(id),
            batch[n as usize]
        ));
    }
    for l in &labels {
        let (mut scan, mut at) = (Vec::new(), NodeId(0));
        while let Some(n) = tx.next_node(Some(*l), at) {
            scan.push(n.0);
            at = NodeId(n.0 + 1);
        }
        out.push(format!("label {l}: {scan:?}"));
    }
    for r in 0..RELS + 300 {
        let id = RelId(r);
        let props: Vec<_> = keys.iter().map(|k| tx.rel_property(id, *k)).collect();
        out.push(format!("rel {r}: {:?} {props:?}", tx.rel_info(id)));
    }
    assert!(tx.read_error().is_none(), "{:?}", tx.read_error());
    out
}

fn same(a: &Answers, b: &Answers, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    if let Some(i) = (0..a.len()).find(|i| a[*i] != b[*i]) {
        panic!("{what}:\n  in memory: {}\n  paged:     {}", a[i], b[i]);
    }
}

#[test]
fn a_graph_8x_larger_than_the_pool_reads_properties_as_the_in_memory_base_does() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Store::in_memory();
    let s = Store::open(dir.path(), cfg(None)).unwrap();
    for st in [&mem, &s] {
        fill(st, 11);
    }
    mem.compact().unwrap();
    s.close().unwrap();
    drop(s);
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let p = s.persist_for_test().as_ref().unwrap();
    let seg = p.pager.current().unwrap().unwrap();
    let arena = seg.column(12).expect("node property bytes in the segment");
    let rel_arena = seg.column(14).expect("relationship property bytes in the segment");
    let prop_pages = (arena.len() + rel_arena.len()) / PAGE_SIZE as u64;
    assert!(prop_pages >= 8 * MIN_FRAMES as u64, "only {prop_pages} property pages");
    {
        let base = s.core_for_test().base();
        assert!(base.props_paged(), "the properties are read through the pool");
    }
    same(&answers(&mem), &answers(&s), "clean base");
    for st in [&mem, &s] {
        churn(st, 12);
    }
    same(&answers(&mem), &answers(&s), "with the delta");
    let st = s.page_cache_stats().unwrap();
    assert!(st.evictions > 0 && st.resident <= MIN_FRAMES as u64, "{st:?}");
    // A checkpoint writes the folded properties to a new segment; a reopen reads that one.
    mem.compact().unwrap();
    s.close().unwrap();
    drop(s);
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    same(&answers(&mem), &answers(&s), "after a second checkpoint");
    let r = s.check().unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
}

#[test]
fn a_corrupt_property_page_is_a_read_error_naming_file_and_page() {
    let (dir, m) = filled_and_closed(|s| fill(s, 13));
    let path = dir.path().join(&m.segments[0]);
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let seg = s.persist_for_test().as_ref().unwrap().pager.current().unwrap().unwrap();
    let (arena, data_pages) = (seg.column(12).unwrap(), seg.pages());
    drop(seg);
    drop(s);
    // Flip a byte in every page of the node property bytes.
    let mut bytes = std::fs::read(&path).unwrap();
    let header = bytes.len() - data_pages as usize * PAGE_SIZE;
    let pages = arena.len().div_ceil(PAGE_SIZE as u64);
    for p in arena.first_page()..arena.first_page() + pages {
        bytes[header + p as usize * PAGE_SIZE + 100] ^= 0x04;
    }
    std::fs::write(&path, &bytes).unwrap();
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let key = tok(&s, TokenKind::PropertyKey, "name");
    let earlier = s.begin(true);
    let tx = s.begin(true);
    assert!(tx.node_property(NodeId(5), key).is_none());
    let e = tx.read_error().expect("the bad page is reported").clone();
    assert_eq!(e.status, Status::Corruption);
    assert!(e.message.contains(&m.segments[0]) && e.message.contains("page"), "{}", e.message);
    // A transaction open meanwhile may have read a property as missing too: it fails as well;
    // one begun afterwards answers (until it reads a bad page itself).
    assert!(earlier.read_error().is_some());
    let later = s.begin(true);
    assert!(later.read_error().is_none());
    // A write cannot commit after such a read, and no checkpoint is made of it.
    let mut w = s.begin(false);
    let _ = w.node_property(NodeId(9), key);
    let _ = w.set_node_property(NodeId(9), key, Value::Int(1));
    assert_eq!(w.commit().expect_err("the commit is refused").status, Status::Corruption);
    let mut w = s.begin(false);
    w.create_node(&[], vec![]).unwrap();
    w.commit().unwrap();
    let before = std::fs::read(dir.path().join("MANIFEST")).unwrap();
    let e = s.checkpoint().expect_err("a checkpoint reading a bad page fails");
    assert_eq!(e.status, Status::Corruption);
    assert_eq!(std::fs::read(dir.path().join("MANIFEST")).unwrap(), before);
}

/// A write that copies a base row whose property page is corrupt fails with the read error
/// (file and page) and installs nothing: the node has no delta version, later reads of other
/// nodes and later writes answer, and no transaction is poisoned by the failed copy.
#[test]
fn a_write_copying_a_corrupt_row_fails_and_installs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg(None)).unwrap();
    fill(&s, 16);
    s.close().unwrap();
    drop(s);
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let p = s.persist_for_test().as_ref().unwrap();
    let seg = p.pager.current().unwrap().unwrap();
    let (off, arena, data_pages) = (seg.column(11).unwrap(), seg.column(12).unwrap(), seg.pages());
    let pool = &p.pager.pool;
    // A node whose blob lies in the arena's first page, and one wholly past it.
    let start = |i: u64| seg.get(pool, off, i).unwrap();
    let bad = (0..NODES).find(|i| start(*i + 1) > start(*i) && start(*i + 1) <= 4096).unwrap();
    let good = (0..NODES).find(|i| start(*i) >= 2 * PAGE_SIZE as u64).unwrap();
    let path = seg.path().to_path_buf();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    drop(seg);
    drop(s);
    let mut bytes = std::fs::read(&path).unwrap();
    let header = bytes.len() - data_pages as usize * PAGE_SIZE;
    bytes[header + arena.first_page() as usize * PAGE_SIZE + 7] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();

    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let key = tok(&s, TokenKind::PropertyKey, "x");
    let name_key = tok(&s, TokenKind::PropertyKey, "name");
    let mut w = s.begin(false);
    let e = w.set_node_property(NodeId(bad), key, Value::Int(1)).expect_err("the copy fails");
    assert_eq!(e.status, Status::Corruption);
    assert!(e.message.contains(&name) && e.message.contains("page"), "{}", e.message);
    w.commit().unwrap();
    assert_eq!(s.core_for_test().node_newest_ts(bad), 0, "no version of the node installed");
    let tx = s.begin(true);
    assert!(tx.node_property(NodeId(good), name_key).is_some());
    assert!(tx.read_error().is_none(), "{:?}", tx.read_error());
    let mut w = s.begin(false);
    w.set_node_property(NodeId(good), key, Value::Int(2)).unwrap();
    w.commit().unwrap();
    let v = s.begin(true).node_property(NodeId(good), key);
    assert!(matches!(v, Some(Value::Int(2))), "{v:?}");
}

/// A property read of a base row is answered from its blob alone when the row is clean: a
/// hole of the base, a row deleted in the delta, one this transaction deleted or wrote, and
/// ids past the base each read as the visible version has it.
#[test]
fn a_property_read_of_a_hole_or_a_written_base_row_is_the_visible_versions() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg(None)).unwrap();
    let k = tok(&s, TokenKind::PropertyKey, "k");
    let mut w = s.begin(false);
    let ids: Vec<NodeId> =
        (0..6).map(|i| w.create_node(&[], vec![(k, Value::Int(i))]).unwrap()).collect();
    w.commit().unwrap();
    let mut w = s.begin(false);
    w.delete_node(ids[1]).unwrap();
    w.commit().unwrap();
    s.close().unwrap();
    drop(s);
    let s = Store::open(dir.path(), cfg(Some(TINY))).unwrap();
    let mut w = s.begin(false);
    w.delete_node(ids[2]).unwrap();
    w.commit().unwrap();
    let mut w = s.begin(false);
    w.delete_node(ids[3]).unwrap();
    w.set_node_property(ids[4], k, Value::Int(40)).unwrap();
    let extra = w.create_node(&[], vec![(k, Value::Int(99))]).unwrap();
    let int = |v: Option<Value>| match v {
        Some(Value::Int(x)) => Some(x),
        None => None,
        Some(other) => panic!("{other:?}"),
    };
    let got: Vec<_> = ids.iter().chain([&extra]).map(|n| int(w.node_property(*n, k))).collect();
    assert_eq!(got, vec![Some(0), None, None, None, Some(40), Some(5), Some(99)]);
    drop(w);
    let r = s.begin(true);
    let got: Vec<_> = ids.iter().map(|n| int(r.node_property(*n, k))).collect();
    assert_eq!(got, vec![Some(0), None, None, Some(3), Some(4), Some(5)]);
    assert_eq!(int(r.node_property(NodeId(1 << 20), k)), None);
}
