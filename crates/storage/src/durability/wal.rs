//! The write-ahead log: the writer (framing, segment files, fsync; its rounds are run by
//! committers or the writer thread, see `wal_group`), and the recovery-time reader that replays
//! records and handles torn tails.
//!
//! Record format (little-endian): `[len u32][crc32c u32][payload; len]`, the payload starting with
//! the commit ts (`u64`) followed by redo operations (see `codec`). Segments are named
//! `wal-<first ts, 20 digits>.log`; every record in a segment has a ts `>=` its name and `<` the
//! next segment's name.
//!
//! Records written since the durability watermark was introduced set the top bit of `len`
//! ([`DURABLE_MARK`]; their CRC then covers the length word as well) and carry, right after the ts, the last commit ts this log had made durable
//! (fsynced) when the record was written. Recovery needs it to tell the two kinds of damage
//! apart: the page cache writes a batch's pages back in any order, so after a power loss the
//! unsynced tail may have a hole (a bad record followed by intact ones), which is simply the end
//! of the log; whereas a bad record that a later intact record declares durable was damaged
//! after its fsync, and that is corruption.
//!
//! Records written since version 3 of the format also set the next bit ([`TIMED_MARK`], only
//! together with the durable mark) and carry, after the watermark, the wall-clock time of the
//! commit (Unix milliseconds), so that start-up and `arbor check` can say when the last commit
//! found was made. Older records are read as they are (without a time).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status};
use crossbeam_channel::Sender;
use parking_lot::Mutex;

use crate::clock::Clock;
use crate::codec::corrupt;
use crate::types::Durability;
use crate::vfs::{Vfs, VfsFile};

/// Largest record accepted when reading (a cap on allocations driven by file content).
pub(crate) const MAX_RECORD: usize = (1 << 30) - 1;
/// Top bit of a record's `len`: the payload carries the durability watermark after the ts.
const DURABLE_MARK: u32 = 1 << 31;
/// Next bit: the payload carries the commit's wall-clock time after the watermark.
const TIMED_MARK: u32 = 1 << 30;
pub(super) const ASYNC_SYNC_EVERY: Duration = Duration::from_millis(10);

pub(crate) enum WalMsg {
    /// A record to append; `ack` receives the outcome once durable (per the durability mode;
    /// `None` in `sync` mode, where committers wait on the log's watermark, see `wal_group`).
    Commit { ts: u64, header: Vec<u8>, body: Vec<u8>, ack: Option<Sender<Result<()>>> },
    /// Write out (and in `sync` mode fsync) what is queued: a ticket dropped unwaited, or a
    /// full disk whose retries the writer thread takes over.
    Nudge,
    /// Write out and fsync everything queued, then exit.
    Stop(Sender<Result<()>>),
}

/// Writer state shared with checkpoints and statistics.
#[derive(Default)]
pub(crate) struct WalShared {
    /// All segments, oldest first; the last one is being appended to.
    pub segments: Mutex<Vec<(u64, PathBuf)>>,
    pub bytes_since_checkpoint: AtomicU64,
    pub syncs: AtomicU64,
    /// Test hook: the next fsync fails.
    #[cfg(test)]
    pub fail_next_sync: std::sync::atomic::AtomicBool,
}

pub(crate) fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::new(Status::Io, format!("{what} {}: {e}", path.display()))
}

pub(crate) fn segment_name(ts: u64) -> String {
    format!("wal-{ts:020}.log")
}

fn parse_segment_name(name: &str) -> Option<u64> {
    name.strip_prefix("wal-")?.strip_suffix(".log")?.parse().ok()
}

pub(crate) fn sync_dir(vfs: &dyn Vfs, dir: &Path) -> Result<()> {
    vfs.sync_dir(dir).map_err(|e| io_err("cannot sync directory", dir, e))
}

/// The WAL segments in `dir`, oldest first.
pub(crate) fn list_segments(vfs: &dyn Vfs, dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for name in vfs.list_dir(dir).map_err(|e| io_err("cannot list", dir, e))? {
        if let Some(ts) = parse_segment_name(&name) {
            out.push((ts, dir.join(name)));
        }
    }
    out.sort();
    Ok(out)
}

/// Parses the record at `pos`: `Some((payload, next pos))` if it is complete and its CRC holds.
pub(crate) fn record_at(data: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let head = data.get(pos..pos.checked_add(8)?)?;
    let raw = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let len = (raw & !(DURABLE_MARK | TIMED_MARK)) as usize;
    if raw & TIMED_MARK != 0 && raw & DURABLE_MARK == 0 {
        return None;
    }
    let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if !(8..=MAX_RECORD).contains(&len) {
        return None;
    }
    let payload = data.get(pos + 8..(pos + 8).checked_add(len)?)?;
    // A marked record's CRC covers its length word too, so losing the mark (a torn write
    // ending inside the header) cannot turn it into an intact unmarked record.
    let want = if raw & DURABLE_MARK != 0 {
        crc32c::crc32c_append(crc32c::crc32c(&head[..4]), payload)
    } else {
        crc32c::crc32c(payload)
    };
    (want == crc).then_some((payload, pos + 8 + len))
}

/// One intact log record.
pub(crate) struct Record<'a> {
    pub ts: u64,
    /// The last commit ts already durable when this record was written (`u64::MAX` for records
    /// from before the watermark: damage before one of them is always corruption).
    pub durable: u64,
    /// The commit's wall-clock time, Unix milliseconds (records from before version 3: none).
    pub time_ms: Option<u64>,
    /// The redo operations.
    pub ops: &'a [u8],
    /// Where the next record starts.
    pub next: usize,
}

/// Parses the record at `pos` (see [`record_at`]) into its fields.
pub(crate) fn parse_record(data: &[u8], pos: usize) -> Option<Record<'_>> {
    let (payload, next) = record_at(data, pos)?;
    let (marked, timed) = (data[pos + 3] & 0x80 != 0, data[pos + 3] & 0x40 != 0);
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(payload.get(at..at + 8)?.try_into().ok()?))
    };
    let ts = word(0)?;
    if timed {
        let (durable, time_ms) = (word(8)?, Some(word(16)?));
        Some(Record { ts, durable, time_ms, ops: &payload[24..], next })
    } else if marked {
        Some(Record { ts, durable: word(8)?, time_ms: None, ops: &payload[16..], next })
    } else {
        Some(Record { ts, durable: u64::MAX, time_ms: None, ops: &payload[8..], next })
    }
}

/// After a bad record at `pos` of `segments[i]` (whose content is `data`), where the commit
/// `missing` should have been: whether an intact record after it, in this segment or a later
/// one, says that `missing` had been made durable (then the damage is corruption, not a torn
/// unsynced tail). Every byte offset is tried, as a hole hides where the next record starts.
pub(crate) fn durable_claimed_after(
    vfs: &dyn Vfs,
    segments: &[(u64, PathBuf)],
    i: usize,
    data: &[u8],
    pos: usize,
    missing: u64,
) -> Result<bool> {
    let claims = |d: &[u8], from: usize| {
        (from..d.len()).any(|p| parse_record(d, p).is_some_and(|r| r.durable >= missing))
    };
    if claims(data, pos + 1) {
        return Ok(true);
    }
    for (_, path) in &segments[i + 1..] {
        let d = vfs.read(path).map_err(|e| io_err("cannot read", path, e))?;
        if claims(&d, 0) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether every record of `segments[i]` has a ts `<= upto` (the next segment starts at or
/// before `upto + 1`); the last segment never is.
pub(crate) fn covered(segments: &[(u64, PathBuf)], i: usize, upto: u64) -> bool {
    segments.get(i + 1).is_some_and(|next| next.0 <= upto.saturating_add(1))
}

/// Where a replayed log ends.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LogEnd {
    /// The last commit ts replayed (0: none), and its wall-clock time (records from before
    /// version 3 have none).
    pub last_ts: u64,
    pub last_time_ms: Option<u64>,
    /// Records replayed.
    pub records: u64,
}

/// Intact records in `data` from `pos` on, found by trying every byte offset past a bad one
/// (a hole in an unsynced tail hides where the next record starts).
fn count_records(data: &[u8], mut pos: usize) -> u64 {
    let mut n = 0;
    while pos < data.len() {
        match parse_record(data, pos) {
            Some(r) => {
                n += 1;
                pos = r.next;
            }
            None => pos += 1,
        }
    }
    n
}

/// What the manifest says about sealed segments: when its checkpoint was taken, the segments
/// named `segments` (first ts each) were sealed (fsynced before the log moved on, their names
/// made durable when created) and held every commit up to `until`. Losing any of that is
/// corruption, not an unsynced tail. Empty when not known (`Durability::Off`, older manifests).
#[derive(Clone, Debug, Default)]
pub(crate) struct Sealed {
    pub until: u64,
    pub segments: Vec<u64>,
}

impl Sealed {
    /// The error for a log that ends at commit `from - 1` although the sealed segments reach
    /// `until`: names the sealed segments that are gone, or else the one cut short.
    pub fn lost(&self, from: u64, present: &[(u64, PathBuf)], dir: &Path) -> Error {
        let gone: Vec<String> = self
            .segments
            .iter()
            .filter(|ts| !present.iter().any(|p| p.0 == **ts))
            .map(|ts| segment_name(*ts))
            .collect();
        let what = if gone.is_empty() {
            let cut = self.segments.iter().rev().find(|ts| **ts <= from).copied();
            format!("{} was truncated", segment_name(cut.unwrap_or(from)))
        } else {
            format!("{} missing", gone.join(", "))
        };
        corrupt(format!(
            "the log in {} lacks commits {from} to {}, which the manifest says are in sealed \
             (fsynced) segments: {what}",
            dir.display(),
            self.until
        ))
    }
}

/// Replays every intact record of every segment not [`covered`] by `checkpoint_ts`, in order,
/// through `f(ts, ops)`. The first bad record ends the log unless a later intact record declares
/// it durable (see [`durable_claimed_after`]), which is a `Corruption` error naming the file and
/// byte offset. With `repair` the end is made real: the segment is truncated there and later
/// segments (which hold only commits that never became durable) are deleted; a read-only open
/// only stops there. Covered segments are not read: they are garbage whose deletion may not
/// have been durable, and one may end in a torn write (a segment whose unsynced tail was lost,
/// then covered by the checkpoint taken at recovery). A log ending before `sealed.until` is a
/// `Corruption` error naming the lost segment, before anything is repaired. Returns the
/// segments that remain (covered ones included) and where the log ends.
pub(crate) fn replay(
    vfs: &dyn Vfs,
    dir: &Path,
    repair: bool,
    (checkpoint_ts, sealed): (u64, &Sealed),
    mut f: impl FnMut(u64, &[u8]) -> Result<()>,
) -> Result<(Vec<(u64, PathBuf)>, LogEnd)> {
    let mut segments = list_segments(vfs, dir)?;
    let mut end = LogEnd::default();
    let mut last_ts = 0u64;
    for i in 0..segments.len() {
        if covered(&segments, i, checkpoint_ts) {
            continue;
        }
        let (first_ts, path) = &segments[i];
        let data = vfs.read(path).map_err(|e| io_err("cannot read", path, e))?;
        let mut pos = 0usize;
        while pos < data.len() {
            let ctx = |msg: &str| {
                corrupt(format!("WAL file {} is corrupt at byte {pos}: {msg}", path.display()))
            };
            let Some(rec) = parse_record(&data, pos) else {
                let missing = (last_ts + 1).max(*first_ts);
                if durable_claimed_after(vfs, &segments, i, &data, pos, missing)? {
                    return Err(ctx(&format!(
                        "a bad record where commit {missing} was, which later records say was \
                         durable"
                    )));
                }
                if missing <= sealed.until {
                    return Err(sealed.lost(missing, &segments, dir));
                }
                end_log(vfs, dir, &mut segments, i, (&data, pos), repair)?;
                return Ok((segments, end));
            };
            if rec.ts <= last_ts {
                return Err(ctx(&format!("commit ts {} after {last_ts}", rec.ts)));
            }
            // Commit timestamps are dense: a gap is a lost segment (one whose directory entry
            // never became durable, say). Lost before it was durable, it is the end of the log;
            // otherwise replaying past it would mix states.
            let expected = last_ts.max(checkpoint_ts) + 1;
            if rec.ts > expected {
                if rec.durable >= expected
                    || durable_claimed_after(vfs, &segments, i, &data, pos, expected)?
                {
                    return Err(ctx(&format!(
                        "commits {expected} to {} are missing from the log (a lost or truncated \
                         segment, {} or before?)",
                        rec.ts - 1,
                        segment_name(expected)
                    )));
                }
                if expected <= sealed.until {
                    return Err(sealed.lost(expected, &segments, dir));
                }
                end_log(vfs, dir, &mut segments, i, (&data, pos), repair)?;
                return Ok((segments, end));
            }
            f(rec.ts, rec.ops).map_err(|e| ctx(&e.message))?;
            last_ts = rec.ts;
            end = LogEnd { last_ts, last_time_ms: rec.time_ms, records: end.records + 1 };
            pos = rec.next;
        }
    }
    if last_ts.max(checkpoint_ts) < sealed.until {
        return Err(sealed.lost(last_ts.max(checkpoint_ts) + 1, &segments, dir));
    }
    Ok((segments, end))
}

/// The log ends at byte `pos` of `segments[i]` (a torn or lost unsynced tail): with `repair`
/// the segment is truncated there and later segments are deleted (and dropped from the list).
fn end_log(
    vfs: &dyn Vfs,
    dir: &Path,
    segments: &mut Vec<(u64, PathBuf)>,
    i: usize,
    (data, pos): (&[u8], usize),
    repair: bool,
) -> Result<()> {
    let path = segments[i].1.clone();
    let later = segments.len() - i - 1;
    // What is discarded, for the warning: intact records past the end were commits written
    // but never acknowledged as durable.
    let (mut commits, mut bytes) = (count_records(data, pos), (data.len() - pos) as u64);
    for (_, p) in &segments[i + 1..] {
        let d = vfs.read(p).map_err(|e| io_err("cannot read", p, e))?;
        commits += count_records(&d, 0);
        bytes += d.len() as u64;
    }
    tracing::warn!(
        "the log ends in an unsynced tail at byte {pos} of {}: discarding {bytes} bytes holding \
         {commits} intact commit record(s) not known to be durable, {later} later segment(s) \
         included",
        path.display(),
    );
    if !repair {
        return Ok(());
    }
    // A segment left with no record goes too: its name would set the next commit ts past
    // the end of the log (a gap the next recovery would see).
    let first_gone = if pos == 0 { i } else { i + 1 };
    if pos > 0 {
        let mut file = vfs.open_append(&path).map_err(|e| io_err("cannot open", &path, e))?;
        file.set_len(pos as u64).map_err(|e| io_err("cannot truncate", &path, e))?;
        file.sync_all().map_err(|e| io_err("cannot sync", &path, e))?;
    }
    if first_gone < segments.len() {
        for (_, p) in segments.drain(first_gone..) {
            vfs.remove_file(&p).map_err(|e| io_err("cannot remove", &p, e))?;
        }
        sync_dir(vfs, dir)?;
    }
    Ok(())
}

/// Deletes segments whose records all have ts `<= upto` (never the active one).
pub(crate) fn delete_covered(vfs: &dyn Vfs, shared: &WalShared, upto: u64) {
    let mut segs = shared.segments.lock();
    while segs.len() >= 2 && segs[1].0 <= upto.saturating_add(1) {
        let (_, path) = segs.remove(0);
        if let Err(e) = vfs.remove_file(&path) {
            tracing::warn!("cannot delete WAL segment {}: {e}", path.display());
        }
    }
}

pub(super) struct Writer {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    pub(super) durability: Durability,
    segment_bytes: u64,
    /// The segment being appended to; `None` until its first write creates it (a full disk
    /// must not keep the store from opening, nor a rotation from being retried).
    file: Option<Box<dyn VfsFile>>,
    path: PathBuf,
    file_len: u64,
    /// Framed records not yet written, and where in it a new segment starts (offset, its ts).
    buf: Vec<u8>,
    rotate_at: Vec<(usize, u64)>,
    /// Written but not yet fsynced.
    pub(super) unsynced: bool,
    pub(super) last_sync: Instant,
    pub(super) failed: Option<Error>,
    /// A write (or a segment's creation) found the disk full before anything of it was
    /// fsynced: the unwritten records stay in `buf`, their commits wait in `held`, new commits
    /// are refused (the clock is paused), and the write is retried every `retry_wait`.
    pub(super) stalled: bool,
    pub(super) retry_wait: Duration,
    /// Acks of commits appended but not yet answered, and the newest such ts.
    held: Vec<Sender<Result<()>>>,
    held_ts: Option<u64>,
    shared: Arc<WalShared>,
    pub(super) clock: Arc<Clock>,
    /// The last commit ts appended, and the last one an fsync has made durable (written into
    /// every record as the watermark).
    appended_ts: u64,
    pub(super) durable_ts: u64,
}

/// The first and the longest wait between retries of a write that found the disk full.
pub(super) const RETRY_FIRST: Duration = Duration::from_millis(10);
pub(super) const RETRY_MAX: Duration = Duration::from_secs(1);

/// The wall-clock time in Unix milliseconds (0 before 1970).
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Whether `e` says the disk (or the quota) is full: nothing of the failed write was made
/// durable, so it may be retried once space returns.
pub(crate) fn no_space(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded)
}

/// The writer that appends from `next_ts` on in a new segment named after it (created by the
/// first write); `wal_group::start` runs it.
pub(super) fn writer(
    vfs: Arc<dyn Vfs>,
    dir: &Path,
    durability: Durability,
    segment_bytes: u64,
    next_ts: u64,
    shared: Arc<WalShared>,
    clock: Arc<Clock>,
) -> Result<Writer> {
    // A segment named `next_ts` holds no valid record (it would have a ts >= `next_ts`), but
    // its directory entry may never have become durable (a process that crashed before the
    // directory fsync, or whose directory fsync failed): appending to it would put acknowledged
    // commits into a file that can vanish. Start it afresh instead.
    let path = dir.join(segment_name(next_ts));
    if vfs.exists(&path) {
        vfs.remove_file(&path).map_err(|e| io_err("cannot remove", &path, e))?;
    }
    {
        let mut segs = shared.segments.lock();
        if segs.last().map(|s| &s.1) != Some(&path) {
            segs.push((next_ts, path.clone()));
        }
    }
    Ok(Writer {
        vfs,
        dir: dir.to_path_buf(),
        durability,
        segment_bytes: segment_bytes.max(1),
        file: None,
        path,
        file_len: 0,
        buf: Vec::new(),
        rotate_at: Vec::new(),
        unsynced: false,
        last_sync: Instant::now(),
        failed: None,
        stalled: false,
        retry_wait: RETRY_FIRST,
        held: Vec::new(),
        held_ts: None,
        shared,
        clock,
        appended_ts: next_ts.saturating_sub(1),
        // Everything recovery found is durable (it rewrites and fsyncs the log tail it replayed,
        // or checkpoints it, before commits are accepted: `resync.rs`), except without fsyncs
        // at all.
        durable_ts: if durability == Durability::Off { 0 } else { next_ts.saturating_sub(1) },
    })
}

impl Writer {
    /// Writes a batch (and what a full disk held back) with one fsync; returns true when asked
    /// to stop.
    pub(super) fn process(&mut self, batch: Vec<WalMsg>) -> bool {
        let mut stop = None;
        let mut res = self.failed.clone().map_or(Ok(()), Err);
        for m in batch {
            match m {
                WalMsg::Commit { ts, header, body, ack } => {
                    if res.is_ok() {
                        res = self.append(ts, &header, &body);
                        // A record that cannot be framed is final, stalled or not (a retry
                        // would acknowledge a commit that is not in the log).
                        self.stalled &= res.is_ok();
                    }
                    self.held_ts = Some(ts);
                    self.held.extend(ack);
                }
                WalMsg::Stop(a) => stop = Some(a),
                WalMsg::Nudge => {}
            }
        }
        if res.is_ok() {
            res = self.flush_buf();
        }
        if let Err(e) = &res {
            if self.stalled && stop.is_none() {
                // Nothing of the held records was made durable: keep them, refuse new commits
                // and retry (see `run`). Closing on a full disk ends here for good.
                self.clock.pause(format!("the disk is full: {}", e.message));
                return false;
            }
        }
        let want_sync = match self.durability {
            Durability::Sync => self.held_ts.is_some() || stop.is_some(),
            Durability::Async => stop.is_some() || self.last_sync.elapsed() >= ASYNC_SYNC_EVERY,
            Durability::Off => false,
        };
        if res.is_ok() && want_sync && self.unsynced {
            res = self.sync();
        }
        match &res {
            Ok(()) => {
                if let Some(ts) = self.held_ts.take() {
                    self.clock.durable(ts);
                }
                if self.stalled {
                    self.stalled = false;
                    self.retry_wait = RETRY_FIRST;
                    tracing::info!("the log writer could write again after the disk was full");
                    self.clock.resume();
                }
            }
            Err(e) => {
                self.stalled = false;
                self.clock.fail(e.message.clone());
                self.failed = Some(e.clone());
            }
        }
        for a in self.held.drain(..) {
            let _ = a.send(res.clone());
        }
        if let Some(a) = stop {
            let _ = a.send(res);
            return true;
        }
        false
    }

    /// Frames a record into the buffer (no I/O: a record that cannot be written yet stays
    /// there, in order).
    fn append(&mut self, ts: u64, header: &[u8], body: &[u8]) -> Result<()> {
        // `header` starts with the ts; the watermark goes right after it.
        let (ts_bytes, tokens) = header.split_at_checked(8).ok_or_else(|| {
            Error::internal(format!("log record header of {} bytes", header.len()))
        })?;
        let len = header.len() + 16 + body.len();
        if len > MAX_RECORD {
            return Err(Error::new(Status::MemoryExhausted, "transaction too large for the log"));
        }
        // Bytes of the segment this record would go to.
        let pending = match self.rotate_at.last() {
            Some(&(at, _)) => (self.buf.len() - at) as u64,
            None => self.file_len + self.buf.len() as u64,
        };
        if pending > 0 && pending + 8 + len as u64 > self.segment_bytes {
            self.rotate_at.push((self.buf.len(), ts));
        }
        let durable = self.durable_ts.to_le_bytes();
        let time_ms = now_ms();
        let time = time_ms.to_le_bytes();
        let head = (len as u32 | DURABLE_MARK | TIMED_MARK).to_le_bytes();
        let mut crc = crc32c::crc32c(&head);
        for part in [ts_bytes, &durable[..], &time[..], tokens, body] {
            crc = crc32c::crc32c_append(crc, part);
        }
        invariant!(ts > self.appended_ts, "log records are appended in commit-ts order");
        let start = self.buf.len();
        self.buf.extend_from_slice(&head);
        self.buf.extend_from_slice(&crc.to_le_bytes());
        for part in [ts_bytes, &durable[..], &time[..], tokens, body] {
            self.buf.extend_from_slice(part);
        }
        // Pair assertion: the framed record reads back as what was encoded (on reading, the
        // CRC and length checks of `record_at` are the other half).
        invariant!(
            parse_record(&self.buf, start).is_some_and(|r| r.ts == ts
                && r.durable == self.durable_ts
                && r.time_ms == Some(time_ms)
                && r.next == self.buf.len()
                && r.ops.len() == tokens.len() + body.len()
                && r.ops.starts_with(tokens)
                && r.ops.ends_with(body)),
            "log record of commit {ts} does not read back as written"
        );
        self.appended_ts = ts;
        Ok(())
    }

    /// Writes the buffer out, switching segments where `append` decided to.
    fn flush_buf(&mut self) -> Result<()> {
        loop {
            let end = self.rotate_at.first().map_or(self.buf.len(), |r| r.0);
            if end > 0 {
                self.write_out(end)?;
            }
            let Some(&(_, ts)) = self.rotate_at.first() else { return Ok(()) };
            self.rotate(ts)?;
            self.rotate_at.remove(0);
        }
    }

    /// Writes `buf[..end]` to the current segment (creating it first if needed). A full disk
    /// sets `stalled` when the segment could be cut back to what it held before (so a retry
    /// appends the records exactly once).
    fn write_out(&mut self, end: usize) -> Result<()> {
        if self.file.is_none() {
            let existed = self.vfs.exists(&self.path);
            let file = self.vfs.open_append(&self.path).map_err(|e| {
                self.stalled = no_space(&e);
                io_err("cannot create", &self.path, e)
            })?;
            self.file_len = file.size().map_err(|e| io_err("cannot stat", &self.path, e))?;
            self.file = Some(file);
            if !existed && self.durability != Durability::Off {
                sync_dir(&*self.vfs, &self.dir)?;
            }
        }
        let Some(file) = self.file.as_mut() else { return Ok(()) };
        if let Err(e) = file.write_all(&self.buf[..end]) {
            self.stalled = no_space(&e) && file.set_len(self.file_len).is_ok();
            return Err(io_err("cannot write", &self.path, e));
        }
        let n = end as u64;
        self.file_len += n;
        self.shared.bytes_since_checkpoint.fetch_add(n, Ordering::Relaxed);
        crate::metrics::STORAGE.wal_bytes.fetch_add(n, Ordering::Relaxed);
        self.buf.drain(..end);
        for r in &mut self.rotate_at {
            r.0 -= end;
        }
        self.unsynced = true;
        Ok(())
    }

    pub(super) fn sync(&mut self) -> Result<()> {
        #[cfg(test)]
        if self.shared.fail_next_sync.swap(false, Ordering::Relaxed) {
            return Err(Error::new(
                Status::Io,
                format!("cannot fsync {}: injected", self.path.display()),
            ));
        }
        if let Some(file) = self.file.as_mut() {
            let _timer = crate::metrics::Timer::start(&crate::metrics::STORAGE.fsync);
            file.sync_data().map_err(|e| io_err("cannot fsync", &self.path, e))?;
        }
        // Only what was written out is synced (`flush_buf` runs before every sync).
        if self.buf.is_empty() {
            self.durable_ts = self.appended_ts;
        }
        self.shared.syncs.fetch_add(1, Ordering::Relaxed);
        self.unsynced = false;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Seals the current segment (fsynced) and makes the next write create the one for `ts`.
    fn rotate(&mut self, ts: u64) -> Result<()> {
        if self.durability != Durability::Off && self.unsynced {
            self.sync()?;
        }
        let path = self.dir.join(segment_name(ts));
        self.shared.segments.lock().push((ts, path.clone()));
        self.file = None;
        self.path = path;
        self.file_len = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ts: u64, extra: &[u8]) -> Vec<u8> {
        let mut payload = ts.to_le_bytes().to_vec();
        payload.extend_from_slice(extra);
        let mut out = (payload.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// A record with the durability watermark, as the writer makes them.
    fn rec2(ts: u64, durable: u64, extra: &[u8]) -> Vec<u8> {
        let mut payload = ts.to_le_bytes().to_vec();
        payload.extend_from_slice(&durable.to_le_bytes());
        payload.extend_from_slice(extra);
        let mut out = (payload.len() as u32 | DURABLE_MARK).to_le_bytes().to_vec();
        let crc = crc32c::crc32c_append(crc32c::crc32c(&out), &payload);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    fn replayed(dir: &Path, repair: bool) -> Result<Vec<u64>> {
        let mut seen = Vec::new();
        replay(&crate::vfs::RealFs, dir, repair, (0, &Sealed::default()), |ts, ops| {
            assert_eq!(ops, b"x");
            seen.push(ts);
            Ok(())
        })?;
        Ok(seen)
    }

    #[test]
    fn a_hole_in_the_unsynced_tail_ends_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let (p1, p2) = (dir.path().join(segment_name(1)), dir.path().join(segment_name(5)));
        // Commits 1-2 synced; 3 lost (zeros) while 4 reached the disk; the next segment has 5
        // and 6, written before any further fsync.
        let mut data = rec2(1, 0, b"x");
        data.extend(rec2(2, 0, b"x"));
        let hole = data.len();
        data.extend(vec![0u8; rec2(3, 2, b"x").len()]);
        data.extend(rec2(4, 2, b"x"));
        std::fs::write(&p1, &data).unwrap();
        std::fs::write(&p2, [rec2(5, 2, b"x"), rec2(6, 2, b"x")].concat()).unwrap();
        // A read-only replay stops at the hole and changes nothing.
        assert_eq!(replayed(dir.path(), false).unwrap(), vec![1, 2]);
        assert!(p2.exists());
        // Repair makes that the end: truncated at the hole, later segment gone.
        assert_eq!(replayed(dir.path(), true).unwrap(), vec![1, 2]);
        assert_eq!(std::fs::metadata(&p1).unwrap().len() as usize, hole);
        assert!(!p2.exists());
        assert_eq!(replayed(dir.path(), true).unwrap(), vec![1, 2]);
    }

    #[test]
    fn a_lost_segment_ends_the_log_unless_later_records_say_it_was_durable() {
        let dir = tempfile::tempdir().unwrap();
        let (p1, p5) = (dir.path().join(segment_name(1)), dir.path().join(segment_name(5)));
        std::fs::write(&p1, [rec2(1, 0, b"x"), rec2(2, 0, b"x")].concat()).unwrap();
        // The segment with commits 3 and 4 never reached the disk (no fsync at all).
        std::fs::write(&p5, [rec2(5, 0, b"x"), rec2(6, 0, b"x")].concat()).unwrap();
        assert_eq!(replayed(dir.path(), false).unwrap(), vec![1, 2]);
        assert_eq!(replayed(dir.path(), true).unwrap(), vec![1, 2]);
        assert!(!p5.exists());
        // Commit 6 was written after an fsync covering 4: the gap is a lost durable segment.
        std::fs::write(&p5, [rec2(5, 0, b"x"), rec2(6, 4, b"x")].concat()).unwrap();
        let err = replayed(dir.path(), true).unwrap_err();
        assert_eq!(err.status, Status::Corruption);
        assert!(err.message.contains("commits 3 to 4 are missing"), "{}", err.message);
        assert!(p5.exists());
    }

    #[test]
    fn damage_to_a_record_declared_durable_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(segment_name(1));
        let mut data = rec2(1, 0, b"x");
        let second = data.len();
        data.extend(rec2(2, 1, b"x"));
        // Written after an fsync that covered commit 2.
        data.extend(rec2(3, 2, b"x"));
        data[second + 12] ^= 0x55;
        std::fs::write(&path, &data).unwrap();
        for repair in [false, true] {
            let err = replayed(dir.path(), repair).unwrap_err();
            assert_eq!(err.status, Status::Corruption);
            assert!(err.message.contains(&format!("byte {second}")), "{}", err.message);
        }
        assert_eq!(std::fs::read(&path).unwrap(), data, "a failed recovery changed the log");
    }

    #[test]
    fn losing_a_sealed_segment_is_corruption_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = |ts| dir.path().join(segment_name(ts));
        let write_all = || {
            std::fs::write(p(1), [rec2(1, 0, b"x"), rec2(2, 1, b"x")].concat()).unwrap();
            std::fs::write(p(3), [rec2(3, 2, b"x"), rec2(4, 3, b"x")].concat()).unwrap();
            std::fs::write(p(5), rec2(5, 4, b"x")).unwrap();
        };
        // The manifest's checkpoint (at 0) saw segments 1 and 3 sealed, up to commit 4.
        let sealed = Sealed { until: 4, segments: vec![1, 3] };
        let run =
            |repair| replay(&crate::vfs::RealFs, dir.path(), repair, (0, &sealed), |_, _| Ok(()));
        write_all();
        assert_eq!(run(true).unwrap().1.last_ts, 5);
        // The segment being written may go (its commits were not known durable).
        std::fs::remove_file(p(5)).unwrap();
        assert_eq!(run(true).unwrap().1.last_ts, 4);
        // A sealed segment deleted with everything after it.
        std::fs::remove_file(p(3)).unwrap();
        for repair in [false, true] {
            let err = run(repair).unwrap_err();
            assert_eq!(err.status, Status::Corruption);
            assert!(err.message.contains(&segment_name(3)), "{}", err.message);
            assert!(err.message.contains("commits 3 to 4"), "{}", err.message);
        }
        // Cut at a record boundary, or inside a record: nothing is repaired away.
        for cut in [rec2(3, 2, b"x").len(), rec2(3, 2, b"x").len() + 5] {
            let mut data = [rec2(3, 2, b"x"), rec2(4, 3, b"x")].concat();
            data.truncate(cut);
            std::fs::write(p(3), &data).unwrap();
            let err = run(true).unwrap_err();
            assert!(err.message.contains("truncated"), "{}", err.message);
            assert_eq!(std::fs::read(p(3)).unwrap(), data, "a failed recovery changed the log");
        }
    }

    #[test]
    fn timed_records_carry_their_time_and_old_ones_still_read() {
        let mut w = rec2(9, 8, b"ops");
        assert_eq!(parse_record(&w, 0).map(|r| (r.ts, r.time_ms)), Some((9, None)));
        // A version-3 record: the time after the watermark, flagged in the length word.
        let mut payload = 9u64.to_le_bytes().to_vec();
        payload.extend_from_slice(&8u64.to_le_bytes());
        payload.extend_from_slice(&1_700_000_000_000u64.to_le_bytes());
        payload.extend_from_slice(b"ops");
        w = (payload.len() as u32 | DURABLE_MARK | TIMED_MARK).to_le_bytes().to_vec();
        let crc = crc32c::crc32c_append(crc32c::crc32c(&w), &payload);
        w.extend_from_slice(&crc.to_le_bytes());
        w.extend_from_slice(&payload);
        let r = parse_record(&w, 0).unwrap();
        assert_eq!(
            (r.ts, r.durable, r.time_ms, r.ops),
            (9, 8, Some(1_700_000_000_000), &b"ops"[..])
        );
        // The time flag without the durable mark is no record of ours.
        w[3] &= 0x7f;
        assert!(parse_record(&w, 0).is_none());
    }

    #[test]
    fn record_parsing_checks_everything() {
        let r = rec(7, b"abc");
        assert_eq!(record_at(&r, 0).map(|(p, n)| (p.len(), n)), Some((11, r.len())));
        assert!(record_at(&r[..r.len() - 1], 0).is_none());
        let mut bad = r.clone();
        bad[10] ^= 1;
        assert!(record_at(&bad, 0).is_none());
        assert!(record_at(&r, r.len()).is_none());
        assert!(record_at(&[0xff; 8], 0).is_none());
    }

    #[test]
    fn segment_names_sort_and_parse() {
        assert_eq!(parse_segment_name(&segment_name(42)), Some(42));
        assert!(segment_name(9) < segment_name(10));
        assert_eq!(parse_segment_name("wal-x.log"), None);
    }

    #[test]
    fn replay_cuts_torn_tail_but_rejects_middle_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(segment_name(1));
        let mut data = rec(1, b"a");
        data.extend(rec(2, b"b"));
        let full = rec(3, b"c");
        data.extend(&full[..full.len() - 2]);
        std::fs::write(&path, &data).unwrap();
        let mut seen = Vec::new();
        let (_, end) =
            replay(&crate::vfs::RealFs, dir.path(), true, (0, &Sealed::default()), |ts, _| {
                seen.push(ts);
                Ok(())
            })
            .unwrap();
        assert_eq!((seen, end.last_ts, end.records), (vec![1, 2], 2, 2));
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, data.len() - full.len() + 2);

        let mut data = rec(1, b"a");
        let second = data.len();
        data.extend(rec(2, b"b"));
        data.extend(rec(3, b"c"));
        data[second + 9] ^= 0x55;
        std::fs::write(&path, &data).unwrap();
        let err =
            replay(&crate::vfs::RealFs, dir.path(), true, (0, &Sealed::default()), |_, _| Ok(()))
                .unwrap_err();
        assert_eq!(err.status, Status::Corruption);
        assert!(err.message.contains(&format!("byte {second}")), "{}", err.message);
    }
}
