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
//! written to its segment. Writers are never blocked. Nothing here writes to the directory.

use std::io::{BufReader, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status};

use super::checkpoint::{read_manifest, MANIFEST};
use super::persist::Persist;
use super::wal::{self, io_err};
use crate::mvcc::Core;
use crate::vfs::{Vfs, VfsRead};

/// The length bits of a log record's first word (the top two bits are `wal`'s marks).
const LEN_MASK: u32 = (1 << 30) - 1;

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
    source: Source,
}

enum Source {
    Bytes(Vec<u8>),
    File(Box<dyn VfsRead>),
}

impl SnapshotFile {
    /// Bytes not yet handed out.
    pub fn remaining(&self) -> u64 {
        self.len - self.done
    }

    /// The next at most `max` bytes (empty once all are out).
    pub fn read_chunk(&mut self, max: usize) -> Result<Vec<u8>> {
        let n = usize::try_from(self.remaining()).unwrap_or(usize::MAX).min(max);
        let mut out = vec![0; n];
        match &mut self.source {
            Source::Bytes(b) => {
                let at = self.done as usize;
                out.copy_from_slice(&b[at..at + n]);
            }
            Source::File(f) => f.read_exact(&mut out).map_err(|e| {
                Error::new(
                    Status::Io,
                    format!("cannot read {} at offset {}: {e}", self.name, self.offset + self.done),
                )
            })?,
        }
        self.done += n as u64;
        Ok(out)
    }
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
    let _no_checkpoint = p.checkpoint_lock.lock();
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
    let started = Instant::now();
    let mut b = core.clock().visible();
    while b < until && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
        b = core.clock().visible();
    }
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
    for (i, (ts, path)) in segs.iter().enumerate() {
        let next = segs.get(i + 1).map(|s| s.0);
        // Records of a segment have ts in [ts, next).
        if next.is_some_and(|n| n <= from + 1) || *ts > b || !vfs.exists(path) {
            continue;
        }
        let interior = *ts > keep_after && next.is_some_and(|n| n <= b + 1);
        let (start, end) = if interior {
            (
                0,
                vfs.open_read(path)
                    .and_then(|f| f.size())
                    .map_err(|e| io_err("cannot open", path, e))?,
            )
        } else {
            scan(vfs, path, keep_after, b)?
        };
        if end > start {
            let name = file_name(path)?;
            let mut f = vfs.open_read(path).map_err(|e| io_err("cannot open", path, e))?;
            std::io::copy(&mut (&mut f).take(start), &mut std::io::sink())
                .map_err(|e| io_err("cannot read", path, e))?;
            files.push(SnapshotFile {
                name,
                offset: start,
                len: end - start,
                done: 0,
                source: Source::File(f),
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

fn bytes_file(name: &str, bytes: Vec<u8>) -> SnapshotFile {
    SnapshotFile {
        name: name.to_string(),
        offset: 0,
        len: bytes.len() as u64,
        done: 0,
        source: Source::Bytes(bytes),
    }
}

fn whole_file(vfs: &dyn Vfs, dir: &Path, name: &str) -> Result<SnapshotFile> {
    let path = dir.join(name);
    let f = vfs.open_read(&path).map_err(|e| io_err("cannot open", &path, e))?;
    let len = f.size().map_err(|e| io_err("cannot read the size of", &path, e))?;
    Ok(SnapshotFile { name: name.to_string(), offset: 0, len, done: 0, source: Source::File(f) })
}

/// The byte range of a segment holding its records with ts in `(from, upto]`: where the first
/// record after `from` starts and where the last one up to `upto` ends. A torn or damaged
/// record ends the scan (nothing after it is visible).
fn scan(vfs: &dyn Vfs, path: &Path, from: u64, upto: u64) -> Result<(u64, u64)> {
    let f = vfs.open_read(path).map_err(|e| io_err("cannot open", path, e))?;
    let mut r = BufReader::with_capacity(1 << 16, f);
    let (mut pos, mut start, mut end) = (0u64, 0u64, 0u64);
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
    Ok((start, end))
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
}
