//! The segment files of checkpoints: writing the base's topology as `segment-<C>.arbor` next
//! to `checkpoint-<C>.arbor` (before the manifest that lists both), opening the segment the
//! manifest names, removing the ones no manifest names, and checking a segment page by page
//! and against the base.
//!
//! Crash safety follows the checkpoint file's: the segment is written to a `.tmp` file,
//! fsynced and renamed before the directory fsync that precedes the manifest switch, and
//! older segments are deleted only after the new manifest is durable. A crash in between
//! leaves the old manifest naming the old, still present segment; the new file is garbage
//! that the next open removes.

use std::path::Path;

use arbor_model::Result;

use super::wal::io_err;
use crate::base::{compare_segment, Base, SegGraph};
use crate::pager::pool::BufferPool;
use crate::pager::segment::{write_segment, Segment};
use crate::vfs::Vfs;

/// The version of the manifest that lists segment files (written after the sealed segments).
pub(crate) const MANIFEST_VERSION: u64 = 4;

pub(crate) fn segment_name(ts: u64) -> String {
    format!("segment-{ts:020}.arbor")
}

/// Whether `name` is a segment file name (no path separators).
pub(crate) fn is_segment_name(name: &str) -> bool {
    name.starts_with("segment-") && name.ends_with(".arbor") && !name.contains(['/', '\\'])
}

/// Writes the base's segment for checkpoint `ts` (tmp, fsync, rename; the caller fsyncs the
/// directory). Returns the file name.
pub(crate) fn write(vfs: &dyn Vfs, dir: &Path, base: &Base, ts: u64) -> Result<String> {
    use std::io::Write;
    let name = segment_name(ts);
    let tmp = dir.join(format!("{name}.tmp"));
    let file = vfs.create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let words = base.label_set_words();
    write_segment(&mut out, ts, &base.segment_columns(&words))
        .and_then(|()| out.flush())
        .map_err(|e| io_err("cannot write", &tmp, e))?;
    let mut file = out.into_inner().map_err(|e| io_err("cannot write", &tmp, e.into_error()))?;
    file.sync_all().map_err(|e| io_err("cannot fsync", &tmp, e))?;
    drop(file);
    vfs.rename(&tmp, &dir.join(&name)).map_err(|e| io_err("cannot rename", &tmp, e))?;
    Ok(name)
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
