//! Making a replayed log tail durable without a checkpoint.
//!
//! What recovery replays comes from the page cache, which is not necessarily what is on disk:
//! after a failed fsync (of a process that then exited) the kernel may have dropped those
//! pages from the write-back and marked them clean, so they stay readable but no later fsync
//! writes them. Commits must not build on such records (a crash would leave a gap in the log).
//! Instead of writing a checkpoint of the whole store before the open returns (O(store)), each
//! log segment recovery read is written again, byte for byte, into a new file that is fsynced
//! and renamed over the old one (O(log tail): the checkpoint triggers bound it); the directory
//! is fsynced last. The full checkpoint then runs in the maintenance thread
//! ([`crate::durability::persist::Persist::recovery_checkpoint`]).
//!
//! A crash at any point leaves each segment either old (the same bytes) or new (fsynced before
//! its rename), so recovery reads the same records; a leftover `.tmp` file is removed by the
//! next open. A failure (a full disk) removes the temporary file and is returned: the caller
//! falls back to refusing commits until the maintenance thread's checkpoint is written.

use std::io::Write;
use std::path::{Path, PathBuf};

use arbor_model::Result;

use super::wal::{covered, io_err, sync_dir};
use crate::vfs::Vfs;

/// Rewrites every segment of `segments` that holds records after `checkpoint_ts` (see the
/// module docs). Returns the bytes written, or (inner `Err`) the write that failed; a segment
/// that cannot be read fails the open as recovery's own read would (outer `Err`).
pub(crate) fn rewrite_tail(
    vfs: &dyn Vfs,
    dir: &Path,
    segments: &[(u64, PathBuf)],
    checkpoint_ts: u64,
) -> Result<Result<u64>> {
    let mut written = 0;
    for i in 0..segments.len() {
        if covered(segments, i, checkpoint_ts) {
            continue;
        }
        let path = &segments[i].1;
        if !vfs.exists(path) {
            continue;
        }
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".resync.tmp");
        let tmp = path.with_file_name(name);
        let data = vfs.read(path).map_err(|e| io_err("cannot read", path, e))?;
        let copy = || -> Result<u64> {
            let mut f = vfs.create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
            f.write_all(&data).map_err(|e| io_err("cannot write", &tmp, e))?;
            f.sync_all().map_err(|e| io_err("cannot fsync", &tmp, e))?;
            drop(f);
            vfs.rename(&tmp, path).map_err(|e| io_err("cannot rename", &tmp, e))?;
            Ok(data.len() as u64)
        };
        match copy() {
            Ok(n) => written += n,
            Err(e) => {
                let _ = vfs.remove_file(&tmp);
                return Ok(Err(e));
            }
        }
    }
    Ok(sync_dir(vfs, dir).map(|()| written))
}
