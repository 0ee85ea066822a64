//! Complete segments (manifest version 5): a store opens from the manifest, the segment and a
//! checkpoint file without entity records; an old-format store (a bulk import's decoded
//! checkpoint) opens the old way and is migrated by its next checkpoint; damage to any part
//! the open reads is `Corruption` naming file and page; `check` compares the stored index
//! arrays and count store with ones derived again.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arbor_model::{NodeId, RelId, Status, Value};

use crate::bulk::{BulkHeader, BulkIndex, CheckpointWriter};
use crate::durability::checkpoint::read_manifest;
use crate::pager::pool::PAGE_SIZE;
use crate::{RealFs, Store, StoreConfig, TokenKind};

const NODES: u64 = 600;

fn cfg() -> StoreConfig {
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        ..StoreConfig::default()
    }
}

/// A bulk-imported store with one unique index: complete, or (`old_format`) a checkpoint with
/// every record and a manifest without segments, as imports wrote before complete segments.
fn import(dir: &Path, old_format: bool) {
    let header = BulkHeader {
        labels: vec!["CS_Person".into(), "CS_City".into()],
        rel_types: vec!["CS_KNOWS".into(), "CS_IN".into()],
        property_keys: vec!["name".into(), "age".into()],
        indexes: vec![BulkIndex { name: "cs_name".into(), label: 0, key: 0, unique: true }],
        next_node: NODES,
        next_rel: 2 * NODES,
    };
    let mut w = if old_format {
        CheckpointWriter::create_old_format(dir, &header, false, false).unwrap()
    } else {
        CheckpointWriter::create(dir, &header, false, false).unwrap()
    };
    for i in 0..NODES {
        let name = Value::String(Arc::from(format!("p{i}")));
        let city = u32::from(i % 10 == 0);
        w.node(i, &[city], &[(0, name), (1, Value::Int((i % 77) as i64))]).unwrap();
    }
    for r in 0..2 * NODES {
        let (a, b) = (r % NODES, (r * 7 + 3) % NODES);
        w.rel(r, a, b, (r % 2) as u32, &[(1, Value::Int(r as i64))]).unwrap();
    }
    w.finish().unwrap();
}

/// Labels, properties, edges, index seeks and counts, one line each.
fn answers(s: &Store) -> Vec<String> {
    let tx = s.begin(true);
    let mut out = Vec::new();
    for n in 0..NODES + 5 {
        let id = NodeId(n);
        let mut es = Vec::new();
        tx.node_edges(id, crate::Direction::Both, &[], &mut es);
        let es: Vec<_> = es.iter().map(|e| (e.rel.0, e.other.0)).collect();
        out.push(format!("{n}: {:?} {:?} {es:?}", tx.node_labels(id), tx.node_properties(id)));
    }
    for r in 0..2 * NODES + 5 {
        out.push(format!("r{r}: {:?} {:?}", tx.rel_info(RelId(r)), tx.rel_property(RelId(r), 1)));
    }
    for i in [0, 5, 599, 1000] {
        let seek = tx.index_seek(0, 0, &Value::String(Arc::from(format!("p{i}"))));
        out.push(format!("seek {i}: {seek:?}"));
    }
    for l in [None, Some(0), Some(1)] {
        out.push(format!("count {l:?}: {}", tx.count_nodes(l)));
        out.push(format!("rels {l:?}: {:?}", tx.count_rels(l, Some(1), None)));
    }
    assert!(tx.read_error().is_none(), "{:?}", tx.read_error());
    out
}

fn write_some(s: &Store) {
    let mut w = s.begin(false);
    w.set_node_property(NodeId(3), 1, Value::Int(1000)).unwrap();
    w.delete_rel(RelId(4)).unwrap();
    w.create_node(&[0], vec![(0, Value::String(Arc::from("p_new")))]).unwrap();
    w.commit().unwrap();
}

#[test]
fn an_old_format_store_opens_the_old_way_and_is_migrated_by_its_next_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    import(dir.path(), true);
    let m = read_manifest(&RealFs, dir.path()).unwrap().unwrap();
    assert!(!m.complete && m.segments.is_empty());
    let s = Store::open(dir.path(), cfg()).unwrap();
    write_some(&s);
    let want = answers(&s);
    s.checkpoint().unwrap();
    let m = read_manifest(&RealFs, dir.path()).unwrap().unwrap();
    assert!(m.complete && m.segments.len() == 1);
    // The checkpoint file keeps the header only: properties are no longer written twice.
    let ck = std::fs::metadata(dir.path().join(&m.name)).unwrap().len();
    assert!(ck < 512, "checkpoint file of {ck} bytes");
    assert_eq!(answers(&s), want);
    s.close().unwrap();
    drop(s);
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(answers(&s), want, "reopened from the complete segment");
    assert_eq!(s.token_id(TokenKind::Label, "CS_City"), Some(1));
    assert_eq!(s.indexes().len(), 1);
    let r = s.check().unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
    // Writes after the reopen, another checkpoint, another reopen.
    let mut w = s.begin(false);
    w.delete_node(NodeId(NODES)).unwrap();
    w.set_node_property(NodeId(8), 0, Value::String(Arc::from("renamed"))).unwrap();
    w.commit().unwrap();
    let want = answers(&s);
    s.close().unwrap();
    drop(s);
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(answers(&s), want, "after a second complete checkpoint");
}

/// An import writes the complete segment itself (its first open is a segment open), and the
/// store answers exactly as an old-format import does once decoded, and then checkpointed.
#[test]
fn an_import_is_complete_and_answers_as_a_checkpointed_one() {
    let (new, old) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    import(new.path(), false);
    import(old.path(), true);
    let m = read_manifest(&RealFs, new.path()).unwrap().unwrap();
    assert!(m.complete && m.segments.len() == 1, "{:?}", m.segments);
    let ck = std::fs::metadata(new.path().join(&m.name)).unwrap().len();
    assert!(ck < 512, "checkpoint file of {ck} bytes");
    let leftovers: Vec<_> = std::fs::read_dir(new.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") || n == crate::bulk::STAGING_DIR)
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let (a, b) = (Store::open(new.path(), cfg()).unwrap(), Store::open(old.path(), cfg()).unwrap());
    assert!(a.core_for_test().base().is_paged(), "the import's first open reads its segment");
    assert_eq!(answers(&a), answers(&b), "as imported");
    let r = a.check().unwrap();
    assert!(r.is_ok() && r.nodes == NODES && r.relationships == 2 * NODES, "{r:?}");
    for s in [&a, &b] {
        write_some(s);
        s.checkpoint().unwrap();
    }
    assert_eq!(answers(&a), answers(&b), "after a write and a checkpoint");
    for (s, dir) in [(a, new.path()), (b, old.path())] {
        s.close().unwrap();
        drop(s);
        let m = read_manifest(&RealFs, dir).unwrap().unwrap();
        assert!(m.complete);
    }
    let (a, b) = (Store::open(new.path(), cfg()).unwrap(), Store::open(old.path(), cfg()).unwrap());
    assert_eq!(answers(&a), answers(&b), "reopened");
}

/// A complete store with its segment's columns, closed.
fn complete_store(dir: &Path) -> (String, Arc<crate::pager::segment::Segment>) {
    import(dir, false);
    let s = Store::open(dir, cfg()).unwrap();
    write_some(&s);
    s.close().unwrap();
    drop(s);
    let m = read_manifest(&RealFs, dir).unwrap().unwrap();
    assert!(m.complete);
    let seg = crate::pager::open_segment(&RealFs, dir, &m.segments[0]).unwrap();
    (m.segments[0].clone(), seg)
}

/// Flips one byte in the first data page of column `id` of segment `name`.
pub(crate) fn flip_in_column(dir: &Path, name: &str, seg: &crate::pager::segment::Segment, id: u8) {
    let path = dir.join(name);
    let col = seg.column(id).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let header = bytes.len() - seg.pages() as usize * PAGE_SIZE;
    bytes[header + col.first_page() as usize * PAGE_SIZE + 3] ^= 0x08;
    std::fs::write(&path, &bytes).unwrap();
}

/// The first read error of every read [`answers`] makes.
fn read_error(s: &Store) -> Option<arbor_model::Error> {
    let tx = s.begin(true);
    for n in 0..NODES + 5 {
        let mut es = Vec::new();
        tx.node_edges(NodeId(n), crate::Direction::Both, &[], &mut es);
        tx.node_properties(NodeId(n));
    }
    for r in 0..2 * NODES + 5 {
        tx.rel_info(RelId(r));
    }
    for i in [0, 5, 599] {
        tx.index_seek(0, 0, &Value::String(Arc::from(format!("p{i}"))));
    }
    for label in [0, 1] {
        let mut cur = NodeId(0);
        while let Some(n) = tx.next_node(Some(label), cur) {
            cur = NodeId(n.0 + 1);
        }
    }
    tx.read_error().cloned()
}

/// Columns a paged open (every base of this crate's tests) leaves in the segment: label
/// codes, forward offsets, neighbours, relationship positions, label bitset words and index
/// words are read through the pool, so damage there fails the read that meets it, with the
/// same error.
#[test]
fn damage_to_a_paged_column_fails_the_read_naming_file_and_page() {
    for id in [1, 2, 3, 15, 17, 18] {
        let dir = tempfile::tempdir().unwrap();
        let (name, seg) = complete_store(dir.path());
        assert!(seg.column(id).unwrap().bytes() > 0, "column {id} has pages");
        flip_in_column(dir.path(), &name, &seg, id);
        drop(seg);
        let s = Store::open_read_only(dir.path()).unwrap();
        let e = read_error(&s).unwrap_or_else(|| panic!("column {id}: no read failed"));
        assert_eq!(e.status, Status::Corruption, "column {id}: {}", e.message);
        assert!(e.message.contains(&name) && e.message.contains("page"), "{}", e.message);
    }
}

#[test]
fn damage_to_any_part_the_open_reads_is_corruption_naming_file_and_page() {
    // Label sets, meta, counts.
    for id in [10, 16, 19] {
        let dir = tempfile::tempdir().unwrap();
        let (name, seg) = complete_store(dir.path());
        if seg.column(id).unwrap().bytes() == 0 {
            continue; // a computed column has no page
        }
        flip_in_column(dir.path(), &name, &seg, id);
        let Err(e) = Store::open(dir.path(), cfg()) else { panic!("the open fails") };
        assert_eq!(e.status, Status::Corruption, "column {id}: {}", e.message);
        assert!(e.message.contains(&name) && e.message.contains("page"), "{}", e.message);
        let Err(e) = Store::open_read_only(dir.path()) else { panic!("a read-only open fails") };
        assert_eq!(e.status, Status::Corruption);
    }
}

#[test]
fn a_complete_manifest_with_an_incomplete_segment_is_corruption_naming_it() {
    use crate::pager::segment::{write_segment, ColumnData};
    let dir = tempfile::tempdir().unwrap();
    let (name, seg) = complete_store(dir.path());
    // The first ten columns only, as a version-4 segment without properties had.
    let code = match seg.read_column(seg.column(1).unwrap()).unwrap() {
        crate::pager::segment::ColumnValues::U8(v) => v,
        other => panic!("label codes as {other:?}"),
    };
    let mut out = Vec::new();
    write_segment(&mut out, seg.ts, &[(1, ColumnData::U8(&code))]).unwrap();
    drop(seg);
    std::fs::write(dir.path().join(&name), &out).unwrap();
    let Err(e) = Store::open(dir.path(), cfg()) else { panic!("the open fails") };
    assert_eq!(e.status, Status::Corruption);
    assert!(e.message.contains(&name) && e.message.contains("missing"), "{}", e.message);
}

/// `check` derives the count store and index arrays again: a segment whose stored counts
/// (valid checksums, other numbers) differ from its graph is reported.
#[test]
fn check_compares_the_stored_counts_with_the_graph() {
    use crate::durability::checkpoint_segments::{counts_of, encode_counts};
    use crate::pager::segment::write_segment;
    let dir = tempfile::tempdir().unwrap();
    let (name, seg) = complete_store(dir.path());
    let pool = Arc::new(crate::pager::pool::BufferPool::new(1 << 20).unwrap());
    let (base, _) = crate::durability::checkpoint_segments::open_base(
        &seg,
        &pool,
        &[],
        crate::base::OpenMode::Resident,
    )
    .unwrap();
    let mut counts = counts_of(&base);
    counts.total += 1;
    let bad = encode_counts(&counts);
    let words = base.label_set_words();
    let extra = base.segment_extra().unwrap();
    let mut cols = base.segment_columns(&words);
    cols.extend(extra.columns(&base));
    cols.push((19, crate::pager::segment::ColumnData::U8(&bad)));
    let mut out = Vec::new();
    write_segment(&mut out, seg.ts, &cols).unwrap();
    drop(seg);
    std::fs::write(dir.path().join(&name), &out).unwrap();
    let s = Store::open_read_only(dir.path()).unwrap();
    let r = s.check().unwrap();
    assert!(r.problems.iter().any(|p| p.contains("count store differs")), "{:?}", r.problems);
}

/// The current segment of the store in `dir` (closed), opened.
fn current_segment(dir: &Path) -> (String, Arc<crate::pager::segment::Segment>) {
    let m = read_manifest(&RealFs, dir).unwrap().unwrap();
    assert!(m.complete);
    let seg = crate::pager::open_segment(&RealFs, dir, &m.segments[0]).unwrap();
    (m.segments[0].clone(), seg)
}

/// A segment of meta version 1 (index arrays ordered by `std`'s `DefaultHasher`, whose
/// algorithm may change between Rust releases) opens with its arrays rebuilt by the fixed
/// hash and answers seeks; its next checkpoint stores version 2.
#[test]
fn a_segment_ordered_by_the_old_hash_opens_with_rebuilt_arrays_and_is_converted() {
    use crate::base::meta_version;
    use crate::durability::checkpoint_segments::{encode_counts, open_base};
    use crate::pager::segment::{write_segment, ColumnData};
    let dir = tempfile::tempdir().unwrap();
    let (name, seg) = complete_store(dir.path());
    assert_eq!(meta_version(&seg).unwrap(), 2);
    let want = {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let want = answers(&s);
        s.close().unwrap();
        want
    };
    // Rewrite the segment as a version-1 build wrote it (same columns, old hash order).
    let pool = Arc::new(crate::pager::pool::BufferPool::new(1 << 20).unwrap());
    let (base, counts) = open_base(&seg, &pool, &[], crate::base::OpenMode::Resident).unwrap();
    let words = base.label_set_words();
    let extra = base.legacy_segment_extra().unwrap();
    let counts = encode_counts(&counts);
    let mut cols = base.segment_columns(&words);
    cols.extend(extra.columns(&base));
    cols.push((19, ColumnData::U8(&counts)));
    let mut out = Vec::new();
    write_segment(&mut out, seg.ts, &cols).unwrap();
    drop((seg, base));
    std::fs::write(dir.path().join(&name), &out).unwrap();
    let (_, seg) = current_segment(dir.path());
    assert_eq!(meta_version(&seg).unwrap(), 1);
    // The two hashes differ for the keys seeked (else this test would prove nothing).
    let k = crate::value::IndexKey::Str(Arc::from("p5"));
    assert_ne!(crate::base::key_hash(&k), crate::base::legacy_key_hash(&k));
    drop(seg);

    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(answers(&s), want, "seeks over a version-1 segment");
    let r = s.check().unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
    let mut w = s.begin(false);
    w.create_node(&[0], vec![(0, Value::String(Arc::from("p1000")))]).unwrap();
    w.commit().unwrap();
    let want = answers(&s);
    s.checkpoint().unwrap();
    s.close().unwrap();
    drop(s);
    let (_, seg) = current_segment(dir.path());
    assert_eq!(meta_version(&seg).unwrap(), 2, "the next checkpoint converts");
    drop(seg);
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(answers(&s), want, "reopened after the conversion");
    let r = s.check().unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
}

/// The newest log segment of `dir` and its length.
fn newest_wal(dir: &Path) -> (std::path::PathBuf, u64) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("wal-") && n.ends_with(".log"))
        .collect();
    names.sort();
    let path = dir.join(names.last().expect("a log segment"));
    let len = std::fs::metadata(&path).unwrap().len();
    (path, len)
}

/// The interleaving behind c259a1a, driven deterministically: a checkpoint's file takes the
/// schema with an index, the index is dropped before the fold finishes (so its segment lacks
/// the index), and the drop's log record is lost (an unsynced tail in a crash). The reopened
/// schema has the index, so the open builds it from the segment, and must do so after the
/// node properties are attached (built before, every key was missing and seeks missed).
#[test]
fn an_index_the_fold_no_longer_had_is_built_at_open_from_the_properties() {
    use crate::durability::checkpoint::BEFORE_FINISH;
    const N: i64 = 300;
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(Store::open(dir.path(), cfg()).unwrap());
    let l = s.get_or_create_token(TokenKind::Label, "CS_Item").unwrap();
    let k = s.get_or_create_token(TokenKind::PropertyKey, "key").unwrap();
    let mut w = s.begin(false);
    let ids: Vec<NodeId> =
        (0..N).map(|i| w.create_node(&[l], vec![(k, Value::Int(i * 7))]).unwrap()).collect();
    w.commit().unwrap();
    assert!(s.create_index(l, k, Some("cs_item_key")).unwrap());
    let cut = Arc::new(parking_lot::Mutex::new(None));
    let (s2, dir2, cut2) = (s.clone(), dir.path().to_path_buf(), cut.clone());
    BEFORE_FINISH.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            *cut2.lock() = Some(newest_wal(&dir2));
            assert!(s2.drop_index("cs_item_key").unwrap());
        }))
    });
    s.checkpoint().unwrap();
    BEFORE_FINISH.with(|h| h.borrow_mut().take());
    s.crash_for_test();
    drop(s);
    let (wal, len) = cut.lock().take().expect("the hook ran");
    let f = std::fs::OpenOptions::new().write(true).open(&wal).unwrap();
    f.set_len(len).unwrap();
    drop(f);

    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(s.indexes().len(), 1, "the drop's record was cut off");
    let tx = s.begin(true);
    for (i, id) in ids.iter().enumerate() {
        let seek = tx.index_seek(l, k, &Value::Int(i as i64 * 7));
        assert_eq!(seek, Some(vec![*id]), "seek of node {i}");
    }
    drop(tx);
    let r = s.check().unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
}

/// Labels of a 20,000-node graph (each bitset spans several chunks of words), with holes.
fn labelled(s: &Store) {
    let ls: Vec<u32> = ["LS_A", "LS_B", "LS_C"]
        .iter()
        .map(|n| s.get_or_create_token(TokenKind::Label, n).unwrap())
        .collect();
    let mut w = s.begin(false);
    for i in 0..20_000u64 {
        let mut l = Vec::new();
        if i % 3 == 0 {
            l.push(ls[0]);
        }
        if i % 7 == 1 || (9000..9100).contains(&i) {
            l.push(ls[1]);
        }
        if i == 19_999 {
            l.push(ls[2]);
        }
        w.create_node(&l, vec![]).unwrap();
    }
    w.commit().unwrap();
    let mut w = s.begin(false);
    for i in (0..20_000).step_by(11) {
        w.delete_node(NodeId(i)).unwrap();
    }
    w.commit().unwrap();
}

/// Every label scan (in batches and one by one) and a few existence and label checks.
fn scans(s: &Store) -> Vec<String> {
    let tx = s.begin(true);
    let mut out = Vec::new();
    let labels = ["LS_A", "LS_B", "LS_C"].map(|n| s.get_or_create_token(TokenKind::Label, n));
    let labels: Vec<Option<u32>> =
        std::iter::once(None).chain(labels.into_iter().map(|l| Some(l.unwrap()))).collect();
    for l in labels {
        let (mut batches, mut cur) = (Vec::new(), NodeId(5));
        loop {
            let before = batches.len();
            tx.next_nodes(l, cur, 97, &mut batches);
            let Some(last) = batches.last().filter(|_| batches.len() - before == 97) else { break };
            cur = NodeId(last.0 + 1);
        }
        let (mut one, mut cur) = (Vec::new(), NodeId(5));
        while let Some(n) = tx.next_node(l, cur) {
            one.push(n);
            cur = NodeId(n.0 + 1);
        }
        assert_eq!(batches, one, "label {l:?}: batches and single steps differ");
        out.push(format!("{l:?}: {} {:?}", one.len(), one.iter().map(|n| n.0).sum::<u64>()));
    }
    for n in [0, 1, 3, 9001, 19_998, 19_999, 20_000] {
        out.push(format!("{n}: {:?} {}", tx.node_labels(NodeId(n)), tx.node_exists(NodeId(n))));
    }
    assert!(tx.read_error().is_none(), "{:?}", tx.read_error());
    out
}

/// Label scans over label bitsets and label codes read through the pool find what an
/// in-memory store with the same history finds, clean and with writes in the delta.
#[test]
fn label_scans_over_paged_bitsets_find_what_memory_finds() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Store::in_memory();
    let s = Store::open(dir.path(), cfg()).unwrap();
    for st in [&mem, &s] {
        labelled(st);
    }
    mem.compact().unwrap();
    s.close().unwrap();
    drop(s);
    let tiny = crate::paged_test_util::cfg(Some(crate::paged_test_util::TINY));
    let s = Store::open(dir.path(), tiny).unwrap();
    assert!(s.core_for_test().base().labels_paged(), "label codes and bitsets are paged");
    assert!(!mem.core_for_test().base().labels_paged());
    assert_eq!(scans(&mem), scans(&s), "clean base");
    for st in [&mem, &s] {
        let b = st.get_or_create_token(TokenKind::Label, "LS_B").unwrap();
        let mut w = st.begin(false);
        for i in [2u64, 4, 9050, 19_997] {
            w.add_label(NodeId(i), b).unwrap();
        }
        w.delete_node(NodeId(1)).unwrap();
        w.commit().unwrap();
    }
    assert_eq!(scans(&mem), scans(&s), "with the delta");
}
