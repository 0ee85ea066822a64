//! Index part files: the `(key_hash, id)` words of an [`IndexPart`] written in the segment
//! page format (`pager/segment.rs`: one column, [`PART_COLUMN`], a CRC32C per 4 KiB page) to
//! `index-<nanos>-<seq>.arbor` in the store directory, and read back through the buffer pool
//! ([`BaseIndex::Paged`](super::index::BaseIndex), the reader of a segment's index arrays).
//!
//! The header's timestamp is the ts of the base whose rows the part indexes; the words are
//! the hash order an in-memory part holds (packed `hash << 32 | id`, or `hash, id` word pairs
//! when `wide`). A file is written to `<name>.tmp`, fsynced, renamed and the directory
//! fsynced before anything names it; what names it is a [`PartRef`] in a WAL record
//! (`mvcc/part_files.rs`). Writing streams the sort's merge into pages: the part's words are
//! never held in memory.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arbor_model::{Error, Result, Status};
use parking_lot::{Mutex, RwLock};

use super::index::{BaseIndex, PagedIndex};
use super::index_build::{HashSorter, IndexPart, SortStats};
use crate::pager::open_segment;
use crate::pager::pool::BufferPool;
use crate::pager::segment::{write_segment_streaming, ColumnData, Segment, Sink, Values};
use crate::vfs::{Vfs, VfsFile};

/// The column id of a part file's words.
pub(crate) const PART_COLUMN: u8 = 1;

/// Words handed to the segment writer at once.
const CHUNK: usize = 1024;

/// Names the files of parts written in one process apart.
static PART_SEQ: AtomicU64 = AtomicU64::new(0);

/// Where a file-backed store keeps its part files and the pool that reads them.
#[derive(Clone)]
pub(crate) struct PartStore {
    pub vfs: Arc<dyn Vfs>,
    pub dir: PathBuf,
    pub pool: Arc<BufferPool>,
    /// False for a read-only open: parts are then built in memory and nothing is written.
    pub writable: bool,
}

/// The part files of a store: where they go, and which records name them
/// (`mvcc/part_files.rs` keeps them).
#[derive(Default)]
pub(crate) struct PartFiles {
    pub store: RwLock<Option<PartStore>>,
    pub inner: Mutex<PartFilesInner>,
}

#[derive(Default)]
pub(crate) struct PartFilesInner {
    /// The last attach record replayed per rule name, not yet attached.
    pub replayed: HashMap<String, PartRef>,
    /// Files logged records name, with the record's ts.
    pub logged: Vec<(String, u64)>,
    /// Files written for rules whose record is still to come, by rule name.
    pub unlogged: HashMap<String, PartRef>,
}

/// A part file as a WAL record names it (`OP_ATTACH_PART`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PartRef {
    /// The rule the part was built for (its target is the rule's).
    pub rule: String,
    pub file: String,
    pub entries: u64,
    pub wide: bool,
    /// The ts of the base whose rows the part indexes.
    pub base_ts: u64,
    /// CRC32C of the file's header (which holds every data page's CRC).
    pub crc: u32,
}

/// Whether `name` is a part file name (no path separators).
pub(crate) fn is_part_name(name: &str) -> bool {
    name.starts_with("index-") && name.ends_with(".arbor") && !name.contains(['/', '\\'])
}

/// A name no other part file of this directory has.
fn fresh_name(vfs: &dyn Vfs, dir: &Path) -> String {
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let seq = PART_SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("index-{nanos:016x}-{seq}.arbor");
        if !vfs.exists(&dir.join(&name)) && !vfs.exists(&dir.join(format!("{name}.tmp"))) {
            return name;
        }
    }
}

fn io_err(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(Status::Io, format!("{what} index part file {}: {e}", path.display()))
}

/// Sorts `sorter`'s entries into a new part file of `store` for the rows of base `base_ts`
/// (see the module docs) and opens it as a paged part. A failed write removes its tmp file.
/// `open` is asked before the file is created and before it is renamed: a store closed
/// meanwhile (its population thread still running) gets no file.
pub(crate) fn write_part(
    store: &PartStore,
    sorter: HashSorter,
    base_ts: u64,
    rule: &str,
    open: &dyn Fn() -> bool,
) -> Result<(IndexPart, PartRef)> {
    let (vfs, dir) = (&*store.vfs, &store.dir);
    let closed = || Error::new(Status::Io, "the store closed during the index population");
    let name = fresh_name(vfs, dir);
    let tmp = dir.join(format!("{name}.tmp"));
    let (wide, entries) = (sorter.wide(), sorter.entries());
    if !open() {
        return Err(closed());
    }
    let file = vfs.create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
    let stats = match write_tmp(file, &tmp, sorter, base_ts) {
        Ok(s) if open() => s,
        Ok(_) => return Err(closed()),
        Err(e) => {
            let _ = vfs.remove_file(&tmp);
            return Err(e);
        }
    };
    let path = dir.join(&name);
    vfs.rename(&tmp, &path).map_err(|e| io_err("cannot rename", &tmp, e))?;
    vfs.sync_dir(dir).map_err(|e| io_err("cannot fsync the directory of", &path, e))?;
    let seg = open_segment(vfs, dir, &name)?;
    let r = PartRef { rule: rule.to_string(), file: name, entries, wide, base_ts, crc: seg.crc() };
    let part = paged(seg, store.pool.clone(), &r, stats)?;
    Ok((part, r))
}

/// The merged words into the created tmp file, flushed and fsynced.
fn write_tmp(
    file: Box<dyn VfsFile>,
    tmp: &Path,
    sorter: HashSorter,
    base_ts: u64,
) -> Result<SortStats> {
    let wide = sorter.wide();
    let words = sorter.entries() as usize * if wide { 2 } else { 1 };
    let mut out = io::BufWriter::with_capacity(1 << 20, file);
    let cols = [(PART_COLUMN, ColumnData::Stream { width: 8, len: words })];
    let rewind = |o: &mut io::BufWriter<Box<dyn VfsFile>>| {
        o.flush()?;
        o.get_mut().rewind()
    };
    let mut sorter = Some(sorter);
    let mut stats = SortStats::default();
    let mut produce = |_: u8, emit: &mut Sink<'_>| -> io::Result<()> {
        let Some(sorter) = sorter.take() else { return Ok(()) };
        let mut buf: Vec<u64> = Vec::with_capacity(CHUNK + 2);
        let to_arbor = |e: io::Error| Error::new(Status::Io, e.to_string());
        stats = sorter
            .finish(&mut |h, id| {
                if wide {
                    buf.extend([u64::from(h), id]);
                } else {
                    buf.push(u64::from(h) << 32 | id);
                }
                if buf.len() >= CHUNK {
                    emit(Values::U64(&buf)).map_err(to_arbor)?;
                    buf.clear();
                }
                Ok(())
            })
            .map_err(|e| io::Error::other(e.message))?;
        emit(Values::U64(&buf))
    };
    write_segment_streaming(&mut out, base_ts, &cols, rewind, &mut produce)
        .and_then(|()| out.flush())
        .map_err(|e| io_err("cannot write", tmp, e))?;
    let mut file = out.into_inner().map_err(|e| io_err("cannot write", tmp, e.into_error()))?;
    file.sync_all().map_err(|e| io_err("cannot fsync", tmp, e))?;
    Ok(stats)
}

/// A part reading `seg`'s words through `pool`, after checking the file is the one `r` names.
fn paged(
    seg: Arc<Segment>,
    pool: Arc<BufferPool>,
    r: &PartRef,
    stats: SortStats,
) -> Result<IndexPart> {
    let bad = |what: String| {
        Error::new(
            Status::Corruption,
            format!("index part file {} is not the one logged: {what}", seg.path().display()),
        )
    };
    if seg.crc() != r.crc {
        return Err(bad(format!("header checksum {:08x}, logged {:08x}", seg.crc(), r.crc)));
    }
    if seg.ts != r.base_ts {
        return Err(bad(format!("base {}, logged {}", seg.ts, r.base_ts)));
    }
    let col = seg.column(PART_COLUMN).ok_or_else(|| bad("no index column".into()))?;
    let per = if r.wide { 2 } else { 1 };
    if Some(col.len()) != r.entries.checked_mul(per) {
        return Err(bad(format!("{} words for {} entries", col.len(), r.entries)));
    }
    let index =
        BaseIndex::Paged(PagedIndex { seg, pool, col, from: 0, n: r.entries, wide: r.wide });
    Ok(IndexPart::from_index(index, stats, Some(r.file.clone())))
}

/// Opens the part file `r` names: its header checked against `r`, then every data page read
/// and verified (bypassing the pool), so a part that attaches answers from intact pages.
pub(crate) fn open_part(store: &PartStore, r: &PartRef) -> Result<IndexPart> {
    let seg = open_segment(&*store.vfs, &store.dir, &r.file)?;
    seg.verify_pages()?;
    let stats = SortStats { entries: r.entries, ..SortStats::default() };
    paged(seg, store.pool.clone(), r, stats)
}

/// Removes part files of `dir` (and their tmp files) other than `keep`.
pub(crate) fn remove_unnamed(vfs: &dyn Vfs, dir: &Path, keep: &[String]) {
    let Ok(names) = vfs.list_dir(dir) else { return };
    for s in names {
        let base = s.strip_suffix(".tmp").unwrap_or(&s);
        if is_part_name(base) && (s.ends_with(".tmp") || !keep.contains(&s)) {
            tracing::info!("removing index part file {s}: nothing names it");
            let _ = vfs.remove_file(&dir.join(&s));
        }
    }
}

/// Removes the part files `names` of `dir` (a checkpoint folded their parts into its base).
pub(crate) fn remove(vfs: &dyn Vfs, dir: &Path, names: &[String]) {
    for n in names {
        let _ = vfs.remove_file(&dir.join(n));
    }
}
