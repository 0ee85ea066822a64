//! Snapshot export for backups: pins a set of the store's files that together hold exactly
//! the state at one commit `B`, and hands their bytes out in chunks.
//!
//! A full snapshot is the manifest (its bytes as on disk), the checkpoint file and the segment
//! files it names, the WAL segments holding commits after the checkpoint, each cut after the
//! last record with a ts `<= B`, and any extra whole files the caller names (say, the
//! engine's full-text definitions). Opening a directory of these files recovers to exactly `B`:
//! the checkpoint, then the log up to a clean end.
//!
//! An incremental snapshot (`since` names the previous backup's commit and checkpoint) holds
//! only the log bytes after the previous backup's commit, as `(file, offset)` ranges to append:
//! the previous backup's copy of a segment ends exactly where the next record starts, because
//! records are appended in commit order and never rewritten. When a checkpoint has been taken
//! since (or the log no longer reaches back), the snapshot is a full one.
//!
//! Consistency: everything is chosen under the checkpoint lock (no checkpoint can switch the
//! manifest or delete a file meanwhile), every file is opened before it is released (an open
//! handle survives a later deletion), and `B` is the newest *visible* commit: visible means
//! durable (per the durability mode) and installed, so every record up to `B` is completely
//! written to its segment. Writers are never blocked: the log is scanned for the cut after the
//! lock is released, through the handles opened under it. Nothing here writes to the directory.
//!
//! Cost: a snapshot reads only what it hands out, plus the log records it must step over to
//! find its cut. Files are read by position (`pread`), never skipped through. Each snapshot
//! leaves a mark (`snapshot_marks.rs`) (segment, commit, byte where the next record starts), so the next
//! one starts its scan there: an incremental backup reads only the records written since the
//! previous one, and one that finds nothing new reads nothing.

use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arbor_model::{Error, Result, Status};

use super::checkpoint::{read_manifest, MANIFEST};
use super::persist::Persist;
use super::snapshot_marks::Mark;
use super::wal::{self, io_err};
use crate::mvcc::Core;
use crate::pager::pool::{MemFile, PageFile};
use crate::vfs::Vfs;

/// The length bits of a log record's first word (the top two bits are `wal`'s marks).
const LEN_MASK: u32 = (1 << 30) - 1;
/// How long a pin waits for the commits of sealed segments to become visible.
const SEALED_WAIT: Duration = Duration::from_secs(10);

/// The previous backup an incremental snapshot continues.
#[derive(Clone, Copy, Debug)]
pub struct Since {
    /// The last commit the previous backup holds.
    pub commit: u64,
    /// The commit of the checkpoint it holds (0: none).
    pub checkpoint: u64,
    /// The CRC32C of the manifest it holds (0: none): tells another store's backup apart.
    pub manifest_crc: u32,
}

/// A pinned, consistent set of files (see the module docs).
pub struct BackupSnapshot {
    /// The last commit the snapshot holds.
    pub commit: u64,
    /// The commit of the checkpoint the snapshot's manifest names (0: no checkpoint).
    pub checkpoint: u64,
    /// The CRC32C of the manifest's bytes (0: no manifest).
    pub manifest_crc: u32,
    /// Only log bytes after `Since::commit`, to append to the previous backup.
    pub incremental: bool,
    pub files: Vec<SnapshotFile>,
}

/// The bytes `offset..offset + len` of one file, read in order.
pub struct SnapshotFile {
    pub name: String,
    pub offset: u64,
    pub len: u64,
    done: u64,
    source: Arc<dyn PageFile>,
}

impl SnapshotFile {
    /// Bytes not yet handed out.
    pub fn remaining(&self) -> u64 {
        self.len - self.done
    }

    /// Where in the file the next byte handed out comes from.
    pub fn position(&self) -> u64 {
        self.offset + self.done
    }

    /// Fills the start of `buf` with the next bytes (`pread`, no copy in between); returns
    /// how many (0 once all are out).
    pub fn read_into(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = usize::try_from(self.remaining()).unwrap_or(usize::MAX).min(buf.len());
        let at = self.position();
        let got = self.source.read_at(&mut buf[..n], at).map_err(|e| {
            Error::new(Status::Io, format!("cannot read {} at offset {at}: {e}", self.name))
        })?;
        if got < n {
            return Err(Error::new(
                Status::Io,
                format!(
                    "{} ends at byte {}, before the {} bytes pinned",
                    self.name,
                    at + got as u64,
                    self.offset + self.len
                ),
            ));
        }
        self.done += n as u64;
        Ok(n)
    }

    /// The next at most `max` bytes (empty once all are out).
    pub fn read_chunk(&mut self, max: usize) -> Result<Vec<u8>> {
        let n = usize::try_from(self.remaining()).unwrap_or(usize::MAX).min(max);
        let mut out = vec![0; n];
        self.read_into(&mut out)?;
        Ok(out)
    }
}

/// A log segment chosen under the lock, with its handle.
struct Chosen {
    seg: u64,
    name: String,
    file: Arc<dyn PageFile>,
    /// Its size when it is copied whole (sealed, and every commit in it is `<= B`).
    whole: Option<u64>,
}

/// Pins a snapshot of a file-backed store (see the module docs). `extras` are file names in the
/// store's directory copied whole when present.
pub(crate) fn pin(
    core: &Core,
    p: &Persist,
    since: Option<Since>,
    extras: &[&str],
) -> Result<BackupSnapshot> {
    let vfs = &*p.vfs;
    let no_checkpoint = p.checkpoint_lock.lock();
    let manifest = read_manifest(vfs, &p.dir)?;
    let mf_path = p.dir.join(MANIFEST);
    let mf_bytes = match &manifest {
        Some(_) => vfs.read(&mf_path).map_err(|e| io_err("cannot read", &mf_path, e))?,
        None => Vec::new(),
    };
    let manifest_crc = if mf_bytes.is_empty() { 0 } else { crc32c::crc32c(&mf_bytes) };
    let c = manifest.as_ref().map_or(0, |m| m.ts);
    let until = manifest.as_ref().map_or(0, |m| m.sealed.until);
    // Sealed segments are copied whole: their commits must be visible (they are durable; the
    // install follows within moments).
    core.clock().wait_for(until, SEALED_WAIT);
    let b = core.clock().visible();
    let segs = p.wal.segments.lock().clone();
    let reaches = |commit: u64| segs.first().is_some_and(|s| s.0 <= commit + 1) || commit == b;
    let since = since.filter(|s| {
        s.checkpoint == c
            && s.manifest_crc == manifest_crc
            && s.commit >= c
            && s.commit <= b
            && reaches(s.commit)
    });
    // Segments holding only commits up to `from` are left out; a full snapshot copies the others
    // from their first byte (recovery skips what the checkpoint covers), an incremental one from
    // the first record after the previous backup.
    let from = since.map_or(c, |s| s.commit);
    let keep_after = since.map_or(0, |s| s.commit);
    let mut files = Vec::new();
    if since.is_none() {
        if let Some(m) = &manifest {
            files.push(bytes_file(MANIFEST, mf_bytes));
            files.push(whole_file(vfs, &p.dir, &m.name)?);
            for s in &m.segments {
                files.push(whole_file(vfs, &p.dir, s)?);
            }
        }
        for name in extras {
            let path = p.dir.join(name);
            if vfs.exists(&path) {
                let bytes = vfs.read(&path).map_err(|e| io_err("cannot read", &path, e))?;
                files.push(bytes_file(name, bytes));
            }
        }
    }
    let mut chosen = Vec::new();
    for (i, (ts, path)) in segs.iter().enumerate() {
        let next = segs.get(i + 1).map(|s| s.0);
        // Records of a segment have ts in [ts, next).
        if next.is_some_and(|n| n <= from + 1) || *ts > b || !vfs.exists(path) {
            continue;
        }
        let interior = *ts > keep_after && next.is_some_and(|n| n <= b + 1);
        let whole = if interior { Some(file_size(vfs, path)?) } else { None };
        let file = vfs.open_pages(path).map_err(|e| io_err("cannot open", path, e))?;
        chosen.push(Chosen { seg: *ts, name: file_name(path)?, file, whole });
    }
    // Every file is open: checkpoints may go on while the cuts are found.
    drop(no_checkpoint);
    let live: Vec<u64> = segs.iter().map(|s| s.0).collect();
    for ch in chosen {
        let (start, end) = match ch.whole {
            Some(size) => (0, size),
            None => {
                let (pos, start, end) = p.backup_marks.resume(ch.seg, keep_after, b);
                let (start, end) = scan(&*ch.file, &ch.name, pos, start, end, keep_after, b);
                p.backup_marks.remember(Mark { segment: ch.seg, commit: b, offset: end }, &live);
                (start, end)
            }
        };
        if end > start {
            files.push(SnapshotFile {
                name: ch.name,
                offset: start,
                len: end - start,
                done: 0,
                source: ch.file,
            });
        }
    }
    Ok(BackupSnapshot {
        commit: b,
        checkpoint: c,
        manifest_crc,
        incremental: since.is_some(),
        files,
    })
}

fn file_name(path: &Path) -> Result<String> {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| Error::internal(format!("no file name in {}", path.display())))
}

fn file_size(vfs: &dyn Vfs, path: &Path) -> Result<u64> {
    vfs.open_read(path)
        .and_then(|f| f.size())
        .map_err(|e| io_err("cannot read the size of", path, e))
}

fn bytes_file(name: &str, bytes: Vec<u8>) -> SnapshotFile {
    SnapshotFile {
        name: name.to_string(),
        offset: 0,
        len: bytes.len() as u64,
        done: 0,
        source: Arc::new(MemFile(bytes)),
    }
}

fn whole_file(vfs: &dyn Vfs, dir: &Path, name: &str) -> Result<SnapshotFile> {
    let path = dir.join(name);
    let len = file_size(vfs, &path)?;
    let source = vfs.open_pages(&path).map_err(|e| io_err("cannot open", &path, e))?;
    Ok(SnapshotFile { name: name.to_string(), offset: 0, len, done: 0, source })
}

/// Reads a file from a position on (`pread`s through a buffer).
struct ReadAt<'a> {
    file: &'a dyn PageFile,
    pos: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The byte range of a segment holding its records with ts in `(from, upto]`, scanning from
/// byte `pos` with the range found so far `start..end` (all 0, or where a [`Mark`] says):
/// where the first record after `from` starts and where the last one up to `upto` ends. A torn
/// or damaged record ends the scan (nothing after it is visible); so does a read error, which
/// leaves the range found so far (the copy then reads the same bytes and reports it).
fn scan(
    file: &dyn PageFile,
    name: &str,
    mut pos: u64,
    mut start: u64,
    mut end: u64,
    from: u64,
    upto: u64,
) -> (u64, u64) {
    let mut r = BufReader::with_capacity(1 << 16, ReadAt { file, pos });
    let mut buf = Vec::new();
    loop {
        let mut head = [0u8; 8];
        if r.read_exact(&mut head).is_err() {
            break;
        }
        let len = (u32::from_le_bytes([head[0], head[1], head[2], head[3]]) & LEN_MASK) as usize;
        if !(8..=wal::MAX_RECORD).contains(&len) {
            break;
        }
        buf.clear();
        buf.extend_from_slice(&head);
        buf.resize(8 + len, 0);
        if r.read_exact(&mut buf[8..]).is_err() {
            break;
        }
        let Some((payload, _)) = wal::record_at(&buf, 0) else { break };
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&payload[..8]);
        let ts = u64::from_le_bytes(ts);
        let next = pos + 8 + len as u64;
        if ts <= from {
            (start, end) = (next, next);
        } else if ts <= upto {
            end = next;
        } else {
            break;
        }
        pos = next;
    }
    tracing::trace!(file = name, start, end, "backup cut");
    (start, end)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::{BackupSnapshot, Since};
    use crate::{Store, StoreConfig, TokenKind, Value};

    fn cfg(segment: u64) -> StoreConfig {
        StoreConfig {
            checkpoint_interval: Duration::from_secs(3600),
            checkpoint_wal_bytes: u64::MAX,
            wal_segment_bytes: segment,
            ..StoreConfig::default()
        }
    }

    fn add(s: &Store, n: i64) {
        let k = s.get_or_create_token(TokenKind::PropertyKey, "n").unwrap();
        let mut w = s.begin(false);
        w.create_node(&[], vec![(k, Value::Int(n))]).unwrap();
        w.commit().unwrap();
    }

    /// Writes a snapshot's bytes into `dir` (appending at the offsets of an incremental one).
    fn write(snap: &mut BackupSnapshot, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        for f in &mut snap.files {
            let path = dir.join(&f.name);
            let mut bytes = if f.offset == 0 { Vec::new() } else { std::fs::read(&path).unwrap() };
            assert_eq!(bytes.len() as u64, f.offset, "{} resumes where the copy ends", f.name);
            loop {
                let chunk = f.read_chunk(1000).unwrap();
                if chunk.is_empty() {
                    break;
                }
                bytes.extend_from_slice(&chunk);
            }
            std::fs::write(&path, bytes).unwrap();
        }
    }

    fn count(dir: &Path) -> u64 {
        let s = Store::open_read_only(dir).unwrap();
        assert!(s.check().unwrap().is_ok());
        let tx = s.begin(true);
        tx.count_nodes(None)
    }

    #[test]
    fn full_and_incremental_snapshots_restore_exactly_their_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let (data, backup) = (tmp.path().join("data"), tmp.path().join("backup"));
        // Small log segments: the snapshots span several, cut inside one.
        let s = Store::open(&data, cfg(300)).unwrap();
        for i in 0..20 {
            add(&s, i);
        }
        s.checkpoint().unwrap();
        for i in 20..30 {
            add(&s, i);
        }
        let mut full = s.backup_snapshot(None, &[]).unwrap();
        assert!(!full.incremental && full.checkpoint > 0 && full.commit > full.checkpoint);
        // Commits after the pin are not in it.
        add(&s, 30);
        write(&mut full, &backup);
        assert_eq!(count(&backup), 30);

        for round in 0..2 {
            for i in 0..7 {
                add(&s, 100 + i);
            }
            let since = Since {
                commit: full.commit,
                checkpoint: full.checkpoint,
                manifest_crc: full.manifest_crc,
            };
            let mut inc = s.backup_snapshot(Some(since), &[]).unwrap();
            assert!(inc.incremental, "round {round}");
            assert!(inc.files.iter().all(|f| f.name.starts_with("wal-")));
            write(&mut inc, &backup);
            assert_eq!(count(&backup), 31 + 7 * (round + 1));
            full = inc;
        }
        // After a checkpoint the snapshot is a full one again.
        s.checkpoint().unwrap();
        let since = Since {
            commit: full.commit,
            checkpoint: full.checkpoint,
            manifest_crc: full.manifest_crc,
        };
        let again = s.backup_snapshot(Some(since), &[]).unwrap();
        assert!(!again.incremental);
        assert!(again.files.iter().any(|f| f.name == "MANIFEST"));
        s.close().unwrap();
    }

    /// The cuts of one snapshot after another: each continues from the previous one's mark
    /// instead of scanning the segment again, and finds exactly what a scan from the start
    /// finds (a store without marks, reopened on the same files).
    #[test]
    fn marks_spare_the_rescan_and_cut_where_a_full_scan_cuts() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let s = Store::open(&data, cfg(1 << 20)).unwrap();
        for i in 0..50 {
            add(&s, i);
        }
        let first = s.backup_snapshot(None, &[]).unwrap();
        let since = |b: &BackupSnapshot| Since {
            commit: b.commit,
            checkpoint: b.checkpoint,
            manifest_crc: b.manifest_crc,
        };
        let p = s.persist_for_test().clone().unwrap();
        let (seg, last) = {
            let segs = p.wal.segments.lock();
            (segs[0].0, segs.len())
        };
        assert_eq!(last, 1, "one segment");
        let cut = first.files.iter().find(|f| f.name.starts_with("wal-")).unwrap().len;
        // The next scan of the segment starts at the first snapshot's cut.
        assert_eq!(p.backup_marks.resume(seg, first.commit, first.commit + 10), (cut, cut, cut));
        assert_eq!(p.backup_marks.resume(seg, 0, first.commit), (cut, 0, cut));
        // Nothing new: an empty incremental snapshot.
        let empty = s.backup_snapshot(Some(since(&first)), &[]).unwrap();
        assert!(empty.incremental && empty.files.is_empty() && empty.commit == first.commit);
        for i in 50..60 {
            add(&s, i);
        }
        let inc = s.backup_snapshot(Some(since(&first)), &[]).unwrap();
        let full = s.backup_snapshot(None, &[]).unwrap();
        let range = |b: &BackupSnapshot| {
            b.files.iter().map(|f| (f.name.clone(), f.offset, f.len)).collect::<Vec<_>>()
        };
        let (inc_r, full_r) = (range(&inc), range(&full));
        let (c0, c1) = (first.commit, full.commit);
        assert_eq!(inc.commit, c1);
        drop((first, empty, inc, full));
        s.close().unwrap();
        // What a scan from the segment's first byte (no marks) finds.
        let file = std::fs::File::open(data.join(&inc_r[0].0)).unwrap();
        let (start, end) = super::scan(&file, "wal", 0, 0, 0, c0, c1);
        assert_eq!(inc_r, vec![(inc_r[0].0.clone(), start, end - start)]);
        assert_eq!(start, cut, "the increment starts at the first cut");
        assert_eq!(super::scan(&file, "wal", 0, 0, 0, 0, c1), (0, end));
        assert_eq!(full_r.last().unwrap().2, inc_r[0].1 + inc_r[0].2, "both end at one cut");
    }
}
