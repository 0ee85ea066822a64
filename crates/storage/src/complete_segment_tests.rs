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

#[test]
fn damage_to_any_part_the_open_reads_is_corruption_naming_file_and_page() {
    // Label codes, forward offsets, neighbours, types, label sets, relationship positions,
    // meta, label bitsets, index words, counts.
    for id in [1, 2, 3, 10, 15, 16, 17, 18, 19] {
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
    let (base, _) =
        crate::durability::checkpoint_segments::open_base(&seg, &pool, &[], true).unwrap();
    let mut counts = counts_of(&base);
    counts.total += 1;
    let bad = encode_counts(&counts);
    let words = base.label_set_words();
    let extra = base.segment_extra();
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
