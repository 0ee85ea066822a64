//! The segment of a bulk-built base whose incoming adjacency is produced while it is written
//! (`BaseBuilder::finish_streamed`, `checkpoint_segments::write_streamed`) and whose node
//! property blobs and forward neighbour and type columns were spilled to scratch files
//! (`BaseBuilder::spill_node_blobs`, `BaseBuilder::spill_forward`, which spills the degree
//! counts and CSR offsets too): the same bytes as the base
//! built whole, whatever the window and chunk, and a write that fails half way (of the segment
//! or of a scratch file) leaves no segment file and no scratch file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_model::Value;

use crate::base::BaseBuilder;
use crate::durability::bulk::counts_streamed;
use crate::durability::checkpoint_segments::{counts_of, write, write_streamed};
use crate::simfs::{FaultKind, Rng, SimFs};
use crate::vfs::{RealFs, Vfs};

/// Where and how [`build_spilled`] spills the node blobs: the file system, the scratch file
/// and the chunk.
type Spill = (Arc<dyn Vfs>, PathBuf, usize);

/// A graph fed in start order: `n` nodes (some without labels or properties, a hole),
/// relationships of `types` types from a pseudo-random start walk, a hub that many end at, and
/// nodes that none ends at.
fn build(n: u64, rels: u64, types: u32, seed: u64) -> BaseBuilder {
    build_spilled(n, rels, types, seed, None)
}

/// [`build`] with the node blobs spilled as `spill` says.
fn build_spilled(n: u64, rels: u64, types: u32, seed: u64, spill: Option<Spill>) -> BaseBuilder {
    build_with(n, rels, types, seed, spill, None)
}

/// [`build_spilled`] with the forward columns also spilled, as `fwd` says (the file system,
/// the directory of the two scratch files, the chunk).
fn build_with(
    n: u64,
    rels: u64,
    types: u32,
    seed: u64,
    spill: Option<Spill>,
    fwd: Option<Spill>,
) -> BaseBuilder {
    let mut b = BaseBuilder::new(1);
    if let Some((vfs, path, chunk)) = spill {
        b.spill_node_blobs(vfs, path, chunk).unwrap();
    }
    if let Some((vfs, dir, chunk)) = fwd {
        b.spill_forward(vfs, [dir.join("fwd-other.scratch"), dir.join("fwd-type.scratch")], chunk)
            .unwrap();
    }
    let mut rng = Rng::new(seed);
    for id in 0..n {
        if id == 3 {
            continue; // a hole
        }
        let labels: Vec<u32> = (0..(id % 3) as u32).collect();
        let props = match id % 4 {
            0 => vec![],
            1 => vec![(0, Value::Int(id as i64))],
            _ => vec![(1, Value::String(Arc::from(format!("name {}", id % 17))))],
        };
        if !b.node(id, &labels, &props) {
            assert!(b.spill_error().is_some(), "node {id}");
        }
    }
    let mut start = 0u64;
    for id in 0..rels {
        if rng.one_in(3) {
            start = (start + rng.below(4)).min(n - 1);
        }
        if start == 3 {
            start = 4;
        }
        let end = match rng.below(5) {
            0 => 7,                    // the hub
            _ => rng.below(n / 2) * 2, // odd nodes get nothing
        };
        let end = if end == 3 { 4 } else { end };
        let ty = if types == 1 { 5 } else { (rng.below(u64::from(types)) as u32) * 3 };
        let props = if id % 5 == 0 { vec![(2, Value::Int(id as i64))] } else { vec![] };
        if !b.rel(id, start, end, ty, &props) {
            assert!(b.spill_error().is_some(), "rel {id} {start} {end}");
        }
    }
    b
}

/// The segment bytes of the base built whole.
fn whole(dir: &Path, b: BaseBuilder) -> Vec<u8> {
    let base = b.finish(&[]);
    let counts = counts_of(&base);
    let name = write(&RealFs, dir, &base, 1, &counts).unwrap();
    std::fs::read(dir.join(name)).unwrap()
}

/// The segment bytes written streamed with `window`, and the windows produced.
fn streamed(dir: &Path, b: BaseBuilder, window: usize) -> (Vec<u8>, u64) {
    let (base, mut streams) = b.finish_streamed(&[], Some(window));
    assert!(streams.backward.is_some(), "relationships in start order stream");
    let counts = counts_of(&base);
    let name = write_streamed(&RealFs, dir, &base, 1, &counts, Some(&mut streams)).unwrap();
    (std::fs::read(dir.join(name)).unwrap(), streams.backward_passes())
}

#[test]
fn a_streamed_backward_csr_writes_the_bytes_of_the_whole_one() {
    // One type (constant type columns), a few (one byte), many (two bytes), and enough nodes
    // and relationships for four-byte neighbours and relationship ids.
    for (n, rels, types) in [(40, 300, 1), (500, 4_000, 3), (300, 2_000, 400), (70_000, 70_000, 2)]
    {
        let tmp = tempfile::tempdir().unwrap();
        let expect = whole(tmp.path(), build(n, rels, types, 7));
        // Windows of a few entries cost a scan of every relationship each: small graphs only.
        let windows: &[usize] =
            if n > 1_000 { &[1_000, usize::MAX] } else { &[1, 2, 7, 1_000, usize::MAX] };
        for &window in windows {
            let d = tmp.path().join(format!("w{window}"));
            std::fs::create_dir(&d).unwrap();
            let (got, passes) = streamed(&d, build(n, rels, types, 7), window);
            assert!(got == expect, "n {n}, types {types}, window {window}: other bytes");
            let columns = if types == 1 { 2 } else { 3 };
            if window == usize::MAX {
                assert_eq!(passes, columns, "one window per column");
            } else if window <= 7 {
                assert!(passes >= columns * n / 7, "{passes} windows for window {window}");
            }
        }
    }
}

#[test]
fn relationships_out_of_start_order_are_built_whole() {
    let mut b = BaseBuilder::new(1);
    for id in 0..4 {
        assert!(b.node(id, &[0], &[]));
    }
    assert!(b.rel(0, 2, 0, 0, &[]));
    assert!(b.rel(1, 1, 3, 0, &[]));
    let (_, streams) = b.finish_streamed(&[], Some(1));
    assert!(streams.backward.is_none() && streams.node_blobs.is_none());
}

/// A write that fails anywhere in the segment (out of space half way through a page of the
/// streamed columns, or anywhere else) returns the error and leaves neither the segment nor
/// its tmp file.
#[test]
fn a_failed_streamed_write_leaves_no_segment() {
    let dir = Path::new("/db");
    let mut failures = 0;
    for skip in 0..12 {
        let fs = SimFs::new(skip);
        fs.create_dir_all(dir).unwrap();
        let (base, mut streams) = build(2_000, 300_000, 3, 11).finish_streamed(&[], Some(5_000));
        let counts = counts_of(&base);
        fs.arm(FaultKind::NoSpace, skip);
        let r = write_streamed(&fs, dir, &base, 1, &counts, Some(&mut streams));
        fs.disarm();
        let names = fs.list_dir(dir).unwrap();
        match r {
            Err(e) => {
                failures += 1;
                assert!(e.message.contains("cannot write"), "{}", e.message);
                assert!(names.is_empty(), "skip {skip}: {names:?}");
            }
            Ok(name) => assert_eq!(names, vec![name]),
        }
    }
    assert!(failures >= 4, "the faults struck {failures} times");
}

/// Node blobs (and their offsets) and forward columns spilled in chunks of 1 byte (a write per
/// row or value), 100 bytes and more than all of them, with or without the incoming adjacency streamed: the
/// segment (its count store included) of the base built whole. The graphs re-code their blobs
/// (few nodes: the sampled strings go inline, so the scratch file is rewritten) or keep them
/// (many); the scratch files are gone once the streams are.
#[test]
fn spilled_node_blobs_write_the_bytes_of_the_whole_build() {
    let (mut recoded, mut kept) = (0, 0);
    for (n, rels, types) in [(40, 300, 1), (500, 4_000, 3), (6_000, 20_000, 2)] {
        let tmp = tempfile::tempdir().unwrap();
        let expect = whole(tmp.path(), build(n, rels, types, 7));
        for (chunk, window) in [(1, 7), (100, usize::MAX), (1 << 30, 1_000)] {
            let d = tmp.path().join(format!("c{chunk}w{window}"));
            std::fs::create_dir(&d).unwrap();
            let scratch = d.join("blobs.scratch");
            let spill = (Arc::new(RealFs) as Arc<dyn Vfs>, scratch.clone(), chunk);
            let fwd = (Arc::new(RealFs) as Arc<dyn Vfs>, d.clone(), chunk);
            let b = build_with(n, rels, types, 7, Some(spill), Some(fwd));
            let (base, mut streams) = b.finish_streamed(&[], Some(window));
            let blobs = streams.node_blobs.as_ref().expect("node blobs spilled");
            // The neighbours always (not a run), the types when there are several; the CSR
            // offsets always (`base/degree_spill.rs`).
            assert_eq!(streams.forward.spilled(), (true, types > 1));
            assert!(streams.offsets.is_some(), "n {n}: CSR offsets in memory");
            assert!(chunk > 1 || blobs.writes >= n / 2, "{} writes", blobs.writes);
            if d.join("blobs.recoded.0").exists() {
                recoded += 1;
                let first = d.join("blobs.scratch.0");
                assert!(!first.exists(), "the first scratch file is gone once re-coded");
                // Re-coded blobs get new offsets, in memory.
                assert!(streams.node_offsets.is_none(), "n {n}: offsets spilled");
                assert!(!d.join("blobs.offsets").exists(), "offsets scratch file left");
            } else {
                kept += 1;
                assert!(streams.node_offsets.is_some(), "n {n}: offsets in memory");
                assert!(d.join("blobs.offsets").exists(), "no offsets scratch file");
            }
            let counts = counts_streamed(&base, &streams, &d).unwrap();
            let name = write_streamed(&RealFs, &d, &base, 1, &counts, Some(&mut streams)).unwrap();
            let got = std::fs::read(d.join(&name)).unwrap();
            assert!(got == expect, "n {n}, chunk {chunk}, window {window}: other bytes");
            // Each scratch file went after its last reader, before the streams are dropped
            // (the incoming windows read the forward columns and offsets from the segment).
            let left: Vec<_> =
                std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
            assert_eq!(left, vec![std::ffi::OsString::from(name)], "scratch files left");
            drop(streams);
        }
    }
    assert!(recoded > 0 && kept > 0, "re-coded {recoded}, kept {kept}");
}

/// A named graph: node count and `(start, end, type)` relationships in feed order.
type Feed = (&'static str, u64, Vec<(u64, u64, u32)>);

/// Spilled forward columns where the spill must stop or cannot apply: types past a byte (the
/// type column comes back into memory and widens), end nodes past two bytes (four-byte
/// neighbours), relationships out of start order (both columns come back, nothing streams), a
/// neighbour column that stays a run (never written), no relationship, and no window given
/// (the incoming columns still stream, a window per column): the bytes of the whole build.
#[test]
fn spilled_forward_columns_fall_back_where_they_must() {
    let fs: Arc<dyn Vfs> = Arc::new(RealFs);
    let feeds: [Feed; 5] = [
        ("types past a byte", 6, vec![(0, 1, 3), (0, 2, 4), (1, 5, 300), (2, 2, 3), (4, 0, 0)]),
        ("out of start order", 5, vec![(1, 0, 1), (1, 4, 2), (3, 3, 1), (0, 2, 2), (4, 1, 1)]),
        ("a run of ends", 5, vec![(0, 1, 1), (0, 2, 2), (1, 3, 1), (2, 4, 2)]),
        ("one end", 5, vec![(0, 2, 1), (1, 2, 1), (3, 2, 1)]),
        ("none", 3, vec![]),
    ];
    for (what, n, rels) in feeds {
        let feed = |fwd: Option<&Path>, window: Option<usize>| {
            let mut b = BaseBuilder::new(1);
            if let Some(d) = fwd {
                let paths = [d.join("o.scratch"), d.join("t.scratch")];
                b.spill_forward(fs.clone(), paths, 1).unwrap();
            }
            (0..n).for_each(|id| assert!(b.node(id, &[(id % 2) as u32], &[])));
            for (i, (s, e, t)) in rels.iter().enumerate() {
                assert!(b.rel(i as u64, *s, *e, *t, &[]), "{what}: rel {i}");
            }
            b.finish_streamed(&[], window)
        };
        let tmp = tempfile::tempdir().unwrap();
        let expect = whole(tmp.path(), {
            let mut b = BaseBuilder::new(1);
            (0..n).for_each(|id| assert!(b.node(id, &[(id % 2) as u32], &[])));
            for (i, (s, e, t)) in rels.iter().enumerate() {
                assert!(b.rel(i as u64, *s, *e, *t, &[]));
            }
            b
        });
        for window in [None, Some(2)] {
            let d = tmp.path().join(format!("{window:?}"));
            std::fs::create_dir(&d).unwrap();
            let (base, mut streams) = feed(Some(&d), window);
            let spilled = streams.forward.spilled();
            let want = match what {
                "types past a byte" => (true, false),
                "a run of ends" => (false, true),
                "out of start order" | "one end" | "none" => (false, false),
                _ => unreachable!(),
            };
            assert_eq!(spilled, want, "{what}");
            // The degree counts stay spilled while relationships come in start order.
            let offsets = !matches!(what, "out of start order" | "none");
            assert_eq!(streams.offsets.is_some(), offsets, "{what}: CSR offsets spilled");
            let counts = counts_streamed(&base, &streams, &d).unwrap();
            let name = write_streamed(&RealFs, &d, &base, 1, &counts, Some(&mut streams)).unwrap();
            let got = std::fs::read(d.join(&name)).unwrap();
            assert!(got == expect, "{what}, window {window:?}: other bytes");
            let left: Vec<_> =
                std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
            assert_eq!(left, vec![std::ffi::OsString::from(name)], "{what}: scratch files left");
            drop(streams);
        }
    }
    // Four-byte end nodes and many types, spilled and streamed in small windows.
    let tmp = tempfile::tempdir().unwrap();
    for (n, rels, types) in [(70_000, 70_000, 2), (300, 2_000, 400)] {
        let expect = whole(tmp.path(), build(n, rels, types, 5));
        let d = tmp.path().join(format!("n{n}"));
        std::fs::create_dir(&d).unwrap();
        let b = build_with(n, rels, types, 5, None, Some((fs.clone(), d.clone(), 1_000)));
        let (base, mut streams) = b.finish_streamed(&[], Some(5_000));
        assert!(streams.forward_spilled());
        let counts = counts_streamed(&base, &streams, &d).unwrap();
        let name = write_streamed(&RealFs, &d, &base, 1, &counts, Some(&mut streams)).unwrap();
        assert!(std::fs::read(d.join(name)).unwrap() == expect, "n {n}: other bytes");
    }
}

/// A disk that fills while the blobs or forward columns are spilled, re-coded or read back:
/// the builder reports the error (or the count store or segment write does), no segment file
/// is written and the scratch files are removed.
#[test]
fn a_failed_blob_spill_leaves_no_segment_and_no_scratch() {
    let dir = Path::new("/db");
    // `Some(at build)` for a fault at operation `skip` that failed the import, `None` for one
    // past the last operation.
    let run = |skip: u64| -> Option<bool> {
        let fs = SimFs::new(skip);
        fs.create_dir_all(dir).unwrap();
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        fs.arm(FaultKind::NoSpace, skip);
        let blobs = Some((vfs.clone(), dir.join("blobs.scratch"), 1));
        let b = build_with(60, 400, 2, 3, blobs, Some((vfs, dir.to_path_buf(), 1)));
        let failed = b.spill_error().is_some();
        let (base, mut streams) = b.finish_streamed(&[], Some(50));
        let r = counts_streamed(&base, &streams, dir)
            .and_then(|counts| write_streamed(&fs, dir, &base, 1, &counts, Some(&mut streams)));
        fs.disarm();
        drop(streams);
        let names = fs.list_dir(dir).unwrap();
        match r {
            Err(e) => {
                let m = &e.message;
                assert!(m.contains("cannot write") || m.contains("cannot read"), "{m}");
                assert!(names.is_empty(), "skip {skip}: {names:?}");
                Some(failed)
            }
            Ok(name) => {
                assert!(!failed, "skip {skip}: a failed spill gave a segment");
                assert_eq!(names, vec![name]);
                None
            }
        }
    };
    // Every operation of the first 80, then every 23rd until a fault strikes none, then every
    // operation since the last one that struck (the segment write's few operations).
    let mut outcomes: Vec<Option<bool>> = (0..80).map(run).collect();
    let mut last_struck = 79;
    let mut skip = 80;
    loop {
        let o = run(skip);
        outcomes.push(o);
        if o.is_none() {
            break;
        }
        last_struck = skip;
        skip += 23;
        assert!(skip < 100_000, "faults strike forever");
    }
    outcomes.extend((last_struck + 1..skip).map(run));
    let at_build = outcomes.iter().filter(|o| **o == Some(true)).count();
    let at_write = outcomes.iter().filter(|o| **o == Some(false)).count();
    assert!(at_build >= 3 && at_write >= 1, "failed building {at_build}, writing {at_write}");
}
