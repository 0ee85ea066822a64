//! The segment files of checkpoints: writing the whole base as `segment-<C>.arbor` next to
//! `checkpoint-<C>.arbor` (before the manifest that lists both), opening a base from the
//! segment the manifest names, removing the ones no manifest names, and checking a segment
//! page by page and against the base.
//!
//! Since manifest version 5 the segment is *complete*: besides adjacency, label codes and
//! property blobs it holds the rest of the base (`base::segment_open`) and the count store
//! (column 19, [`encode_counts`]); the checkpoint file then holds only the next ids, tokens
//! and schema (no entity records), and a store opens from the manifest, the segment's
//! header and in-memory columns, that small file and the WAL tail. A version-4 store (or an
//! import) opens the old way and is migrated by its next checkpoint.
//!
//! Crash safety follows the checkpoint file's: the segment is written to a `.tmp` file,
//! fsynced and renamed before the directory fsync that precedes the manifest switch, and
//! older segments are deleted only after the new manifest is durable. A crash in between
//! leaves the old manifest naming the old, still present segment; the new file is garbage
//! that the next open removes.

use std::path::Path;

use std::sync::Arc;

use arbor_model::{Error, Result, Status};

use super::wal::io_err;
use crate::base::{compare_segment, is_complete, Base, OpenMode, SegGraph, SegmentStreams};
use crate::codec::{Dec, Enc};
use crate::mvcc::{Core, CountDelta};
use crate::pager::pool::BufferPool;
use crate::pager::segment::{write_segment_streaming, ColumnData, ColumnValues, Segment, Sink};
use crate::schema::Target;
use crate::vfs::Vfs;

/// The version of the manifest this build writes: 4 listed segment files (after the sealed
/// log segments), 5 marks the segment complete (see the module docs), 6 its index arrays
/// ordered by the fixed key hash (segment meta version 2; a version-5 store's arrays are
/// rebuilt at open, and older builds refuse version 6 rather than seek with another hash).
pub(crate) const MANIFEST_VERSION: u64 = 6;
/// The first manifest version whose segment is complete.
pub(crate) const COMPLETE_SINCE: u64 = 5;
/// The count store's column.
const COUNTS: u8 = 19;

/// The count store of `base`: nodes in all and per label, relationships per count key.
pub(crate) fn counts_of(base: &Base) -> CountDelta {
    let mut c = Core::rel_counts_of(base);
    add_node_counts(base, &mut c);
    c
}

/// Adds `base`'s nodes to `c`: the total and per label (one pass over the label codes).
pub(crate) fn add_node_counts(base: &Base, c: &mut CountDelta) {
    let mut per_code = vec![0i64; base.label_set_count()];
    for id in 0..base.node_end {
        if let Some(n) = per_code.get_mut(base.node_label_code(id)) {
            *n += 1;
        }
    }
    for (code, n) in per_code.into_iter().enumerate().skip(1).filter(|(_, n)| *n > 0) {
        c.total += n;
        base.label_set(code).iter().for_each(|l| c.label(*l, n));
    }
}

/// The count store as bytes: total, then `(label, n)` and `((a, t, b), n)`, sorted.
pub(crate) fn encode_counts(c: &CountDelta) -> Vec<u8> {
    let mut e = Enc::new();
    e.ivar(c.total);
    let mut labels: Vec<_> = c.labels.iter().filter(|(_, n)| **n != 0).collect();
    labels.sort_unstable();
    e.var(labels.len() as u64);
    for (l, n) in labels {
        e.var(u64::from(*l));
        e.ivar(*n);
    }
    let mut rels: Vec<_> = c.rels.iter().filter(|(_, n)| **n != 0).collect();
    rels.sort_unstable();
    e.var(rels.len() as u64);
    for ((a, t, b), n) in rels {
        [a, t, b].iter().for_each(|x| e.var(u64::from(**x)));
        e.ivar(*n);
    }
    e.buf
}

fn decode_counts(b: &[u8]) -> Result<CountDelta> {
    let mut d = Dec::new(b);
    let mut c = CountDelta { total: d.ivar()?, ..Default::default() };
    for _ in 0..d.count(2)? {
        let l = d.var_u32()?;
        c.label(l, d.ivar()?);
    }
    for _ in 0..d.count(4)? {
        let k = (d.var_u32()?, d.var_u32()?, d.var_u32()?);
        c.rels.insert(k, d.ivar()?);
    }
    if !d.is_empty() {
        return Err(crate::codec::corrupt("trailing bytes"));
    }
    Ok(c)
}

/// Whether `seg` holds the whole base and its counts.
pub(crate) fn complete(seg: &Segment) -> bool {
    is_complete(seg) && seg.column(COUNTS).is_some()
}

/// The base and count store of complete segment `seg` (see [`Base::from_segment`]).
pub(crate) fn open_base(
    seg: &Arc<Segment>,
    pool: &Arc<BufferPool>,
    pairs: &[Target],
    mode: OpenMode,
) -> Result<(Base, CountDelta)> {
    let bad = |what: &str| {
        Error::new(
            Status::Corruption,
            format!("segment file {} is corrupt: {what}", seg.path().display()),
        )
    };
    if !complete(seg) {
        return Err(bad("the manifest says complete, but columns are missing"));
    }
    let col = seg.column(COUNTS).ok_or_else(|| bad("no count store"))?;
    let ColumnValues::U8(bytes) = seg.read_column(col)? else {
        return Err(bad("count store of another width"));
    };
    let counts = decode_counts(&bytes).map_err(|e| bad(&format!("count store: {}", e.message)))?;
    let base = Base::from_segment(seg, pool, pairs, mode)?;
    Ok((base, counts))
}

pub(crate) fn segment_name(ts: u64) -> String {
    format!("segment-{ts:020}.arbor")
}

/// Whether `name` is a segment file name (no path separators).
pub(crate) fn is_segment_name(name: &str) -> bool {
    name.starts_with("segment-") && name.ends_with(".arbor") && !name.contains(['/', '\\'])
}

/// Writes the base's segment for checkpoint `ts` (tmp, fsync, rename; the caller fsyncs the
/// directory). Returns the file name. A failed write removes its tmp file at once: on a full
/// disk the half-written segment would otherwise hold the space the log needs until a restart.
pub(crate) fn write(
    vfs: &dyn Vfs,
    dir: &Path,
    base: &Base,
    ts: u64,
    counts: &CountDelta,
) -> Result<String> {
    write_streamed(vfs, dir, base, ts, counts, None)
}

/// [`write`] of a base built by `BaseBuilder::finish_streamed`: its incoming columns and
/// spilled node property bytes come from `streams` as the writer reaches them (the same bytes
/// as the base built whole).
pub(crate) fn write_streamed(
    vfs: &dyn Vfs,
    dir: &Path,
    base: &Base,
    ts: u64,
    counts: &CountDelta,
    stream: Option<&mut SegmentStreams>,
) -> Result<String> {
    let name = segment_name(ts);
    let tmp = dir.join(format!("{name}.tmp"));
    let file = vfs.create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
    if let Err(e) = write_tmp(file, &tmp, base, ts, counts, stream) {
        let _ = vfs.remove_file(&tmp);
        return Err(e);
    }
    vfs.rename(&tmp, &dir.join(&name)).map_err(|e| io_err("cannot rename", &tmp, e))?;
    Ok(name)
}

/// The segment's bytes into the created tmp file, flushed and fsynced.
fn write_tmp(
    file: Box<dyn crate::vfs::VfsFile>,
    tmp: &Path,
    base: &Base,
    ts: u64,
    counts: &CountDelta,
    mut stream: Option<&mut SegmentStreams>,
) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let words = base.label_set_words();
    let extra = base.segment_extra()?;
    let counts = encode_counts(counts);
    let mut cols = base.segment_columns(&words);
    if let Some(s) = stream.as_deref() {
        for (id, c) in s.columns() {
            if let Some(slot) = cols.iter_mut().find(|(i, _)| *i == id) {
                slot.1 = c;
            }
        }
    }
    cols.extend(extra.columns(base));
    cols.push((COUNTS, ColumnData::U8(&counts)));
    if let Some(s) = stream.as_deref_mut() {
        s.place(tmp.to_path_buf(), crate::pager::segment::column_offsets(&cols));
    }
    let rewind = |o: &mut std::io::BufWriter<Box<dyn crate::vfs::VfsFile>>| {
        o.flush()?;
        o.get_mut().rewind()
    };
    let mut produce = |id: u8, emit: &mut Sink<'_>| match stream.as_deref_mut() {
        Some(s) => s.produce(base, id, emit),
        None => Err(std::io::Error::other("a streamed segment column without a producer")),
    };
    write_segment_streaming(&mut out, ts, &cols, rewind, &mut produce)
        .and_then(|()| out.flush())
        .map_err(|e| io_err("cannot write", tmp, e))?;
    let mut file = out.into_inner().map_err(|e| io_err("cannot write", tmp, e.into_error()))?;
    file.sync_all().map_err(|e| io_err("cannot fsync", tmp, e))?;
    Ok(())
}

/// Removes segment files other than `keep` (replaced, or written by a checkpoint that never
/// reached its manifest).
pub(crate) fn remove_others(vfs: &dyn Vfs, dir: &Path, keep: &[String]) {
    if let Ok(names) = vfs.list_dir(dir) {
        for s in names.iter().filter(|s| is_segment_name(s) && !keep.contains(s)) {
            let _ = vfs.remove_file(&dir.join(s));
        }
    }
}

/// `arbor check` of one segment: every page's checksum, then (when `base` was built from the
/// same checkpoint) its topology read through `pool` against the base's. Returns problems.
pub(crate) fn check(seg: &Segment, pool: &BufferPool, base: Option<&Base>) -> Vec<String> {
    if let Err(e) = seg.verify_pages() {
        return vec![e.message];
    }
    let Some(base) = base else { return Vec::new() };
    let run = || -> Result<Vec<String>> { compare_segment(&SegGraph::new(seg, pool)?, base, 10) };
    run().unwrap_or_else(|e| vec![e.message])
}

/// `arbor check` of a complete segment (pages verified already): the base opens from it
/// whole, and its index arrays, label bitsets and count store match ones derived again.
pub(crate) fn check_complete(seg: &Arc<Segment>, pool: &Arc<BufferPool>) -> Vec<String> {
    let (base, counts) = match open_base(seg, pool, &[], OpenMode::Resident) {
        Ok(x) => x,
        Err(e) => return vec![e.message],
    };
    let mut problems = base.check_derived(10);
    if encode_counts(&counts) != encode_counts(&counts_of(&base)) {
        problems.push(format!(
            "segment file {}: the count store differs from the counts of its graph",
            seg.path().display()
        ));
    }
    problems
}
