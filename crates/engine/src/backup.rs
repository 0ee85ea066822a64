//! Online backup over Bolt: the `dbms.backup.*` procedures that hand a pinned snapshot of the
//! store's files ([`BackupSnapshot`]) to `arbor backup` in checksummed chunks.
//!
//! - `dbms.backup.begin(sinceCommit, sinceCheckpoint, manifestCrc)` pins a snapshot (an
//!   incremental one when the three values name the previous backup and the log still reaches
//!   back to it; pass `-1`s for a full one) and yields its id, commit, checkpoint, manifest CRC,
//!   whether it is incremental, and its files as maps `{name, offset, length}`.
//! - `dbms.backup.read(backupId, file, maxBytes)` yields the next at most `maxBytes` of file
//!   number `file` (files are read in order, each from its start) as records of at most
//!   [`ROW_BYTES`]: `offset` (in the file), `data` (bytes) and `crc` (CRC32C of `data`); no
//!   record at the file's end.
//! - `dbms.backup.end(backupId)` releases the snapshot (its open files). A snapshot nobody has
//!   read for [`IDLE_EXPIRY`] is released by the next `begin`.
//!
//! Why Bolt and not the HTTP port: the backup client reuses the Bolt client, its TLS and its
//! authentication exactly as `arbor shell` does, so a backup needs only the address users
//! already have, and works when the HTTP port is off. A record fits one Bolt chunk (no copy to
//! split it); pulling call by call keeps the server's memory per backup to one call's records.
//! With authentication on, only a logged-in user reaches the procedures; Arbor, like Neo4j
//! Community, has no roles, so every user is an administrator.
//!
//! A backup costs the live workload as little as possible: each pinned snapshot has its own
//! thread, which pins it (at normal priority, since pinning takes the store's checkpoint and
//! log locks for a moment) and then drops to the lowest CPU and I/O priority
//! ([`priority`]: `SCHED_IDLE`, the idle I/O class) to find the log's cut and read, checksum
//! and package every chunk; the connection's thread only waits for it. The chunks' buffers are
//! reused once the connection has sent them, so a backup does not churn the allocator (whose
//! purges interrupt the other cores). Writers are never blocked.

pub mod priority;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_cypher_plan::CypherType as T;
use arbor_exec::procs::Procedure;
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use parking_lot::Mutex;

use crate::session::Database;

/// A pinned snapshot nobody reads for this long is released.
pub const IDLE_EXPIRY: Duration = Duration::from_secs(600);
/// The most bytes one `dbms.backup.read` call hands out.
pub const MAX_CHUNK: usize = 4 << 20;
/// The most bytes of one record: with its framing it stays within one Bolt chunk (65,535).
pub const ROW_BYTES: usize = 65_000;
/// The most snapshots pinned at once (each has a thread and open files).
pub const MAX_OPEN: usize = 16;
/// Files of the data directory that are not the store's but belong in a backup.
const EXTRA_FILES: &[&str] = &["fulltext-indexes"];

/// The previous backup an incremental one continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Since {
    /// The last commit the previous backup holds.
    pub commit: u64,
    /// The commit of the checkpoint it holds (0: none).
    pub checkpoint: u64,
    /// The CRC32C of the manifest it holds (0: none): tells another store's backup apart.
    pub manifest_crc: u32,
}

/// A pinned, consistent set of the database's files: the manifest, the checkpoint it names and
/// the log after it (only the log after [`Since::commit`] when incremental). Holding it keeps
/// those files readable; dropping it releases them.
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

/// The bytes `offset..offset + len` of one file of a [`BackupSnapshot`], read in order.
pub struct SnapshotFile {
    pub name: String,
    pub offset: u64,
    pub len: u64,
    inner: arbor_storage::SnapshotFile,
}

impl SnapshotFile {
    /// Bytes not yet handed out.
    pub fn remaining(&self) -> u64 {
        self.inner.remaining()
    }

    /// The next at most `max` bytes (empty once all are out); a failed read names the file
    /// and offset.
    pub fn read_chunk(&mut self, max: usize) -> Result<Vec<u8>> {
        self.inner.read_chunk(max)
    }

    /// Where in the file the next byte comes from.
    pub fn position(&self) -> u64 {
        self.inner.position()
    }

    /// Fills the start of `buf` with the next bytes; returns how many (0 once all are out).
    pub fn read_into(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.inner.read_into(buf)
    }
}

impl Database {
    /// Pins a snapshot of this database's files; also what `arbor dump` copies from a
    /// directory opened read-only.
    pub fn backup_snapshot(&self, since: Option<Since>) -> Result<BackupSnapshot> {
        let since = since.map(|s| arbor_storage::Since {
            commit: s.commit,
            checkpoint: s.checkpoint,
            manifest_crc: s.manifest_crc,
        });
        let snap = self.store().backup_snapshot(since, EXTRA_FILES)?;
        let files = snap
            .files
            .into_iter()
            .map(|f| SnapshotFile { name: f.name.clone(), offset: f.offset, len: f.len, inner: f })
            .collect();
        Ok(BackupSnapshot {
            commit: snap.commit,
            checkpoint: snap.checkpoint,
            manifest_crc: snap.manifest_crc,
            incremental: snap.incremental,
            files,
        })
    }
}

/// What one `dbms.backup.read` call yields.
type Rows = Vec<Vec<Value>>;

/// A read for a backup's thread: file, most bytes, where to answer.
struct ReadReq {
    file: i64,
    max: usize,
    reply: Sender<Result<Rows>>,
}

struct Pinned {
    /// To the backup's thread; dropping it ends the thread and releases the snapshot.
    reads: Sender<ReadReq>,
    used: Instant,
}

#[derive(Default)]
struct Backups {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Pinned>>,
}

fn failed(msg: impl Into<String>) -> Error {
    Error::new(Status::ProcedureCallFailed, msg.into())
}

fn int_arg(args: &[Value], i: usize, name: &str) -> Result<i64> {
    match args.get(i) {
        Some(Value::Int(n)) => Ok(*n),
        other => Err(Error::new(
            Status::ArgumentError,
            format!(
                "{name} must be an integer, got {}",
                other.map_or("nothing", |v| v.type_name())
            ),
        )),
    }
}

fn since_of(args: &[Value]) -> Result<Option<Since>> {
    let (commit, checkpoint, crc) = (
        int_arg(args, 0, "sinceCommit")?,
        int_arg(args, 1, "sinceCheckpoint")?,
        int_arg(args, 2, "manifestCrc")?,
    );
    if commit < 0 || checkpoint < 0 || crc < 0 {
        return Ok(None);
    }
    Ok(Some(Since {
        commit: commit as u64,
        checkpoint: checkpoint as u64,
        manifest_crc: u32::try_from(crc).map_err(|_| failed("manifestCrc is out of range"))?,
    }))
}

fn file_map(f: &SnapshotFile) -> Value {
    let mut m = PropertyMap::new();
    m.insert("name".into(), Value::str(&f.name));
    m.insert("offset".into(), Value::Int(f.offset as i64));
    m.insert("length".into(), Value::Int(f.len as i64));
    Value::Map(m)
}

/// The row `dbms.backup.begin` yields for snapshot `id`.
fn begin_row(id: u64, snap: &BackupSnapshot) -> Vec<Value> {
    vec![
        Value::Int(id as i64),
        Value::Int(snap.commit as i64),
        Value::Int(snap.checkpoint as i64),
        Value::Int(i64::from(snap.manifest_crc)),
        Value::Bool(snap.incremental),
        Value::List(snap.files.iter().map(file_map).collect()),
    ]
}

/// The full-size chunk buffers of one backup, reused once the connection has sent (and
/// dropped) the rows holding them.
#[derive(Default)]
struct Buffers(Vec<Arc<[u8]>>);

/// At most this many buffers are kept: one call's worth.
const BUFFERS_KEPT: usize = MAX_CHUNK / ROW_BYTES + 1;

impl Buffers {
    /// `n` bytes filled by `fill`: in a free kept buffer when `n` is the full row size.
    fn fill(&mut self, n: usize, fill: impl FnOnce(&mut [u8]) -> Result<()>) -> Result<Arc<[u8]>> {
        let free = if n == ROW_BYTES {
            match self.0.iter_mut().position(|b| Arc::get_mut(b).is_some()) {
                Some(i) => Some(i),
                None if self.0.len() < BUFFERS_KEPT => {
                    self.0.push(std::iter::repeat_n(0u8, n).collect());
                    Some(self.0.len() - 1)
                }
                None => None,
            }
        } else {
            None
        };
        let mut fresh;
        let buf = match free {
            Some(i) => &mut self.0[i],
            None => {
                fresh = std::iter::repeat_n(0u8, n).collect::<Arc<[u8]>>();
                &mut fresh
            }
        };
        fill(Arc::get_mut(buf).ok_or_else(|| Error::internal("a backup buffer is shared"))?)?;
        Ok(buf.clone())
    }
}

/// Reads the next at most `max` bytes of `f` as records of at most [`ROW_BYTES`].
fn read_rows(f: &mut SnapshotFile, max: usize, bufs: &mut Buffers) -> Result<Rows> {
    let mut rows = Vec::new();
    let mut left = usize::try_from(f.remaining()).unwrap_or(usize::MAX).min(max);
    while left > 0 {
        let n = left.min(ROW_BYTES);
        let at = f.position();
        let mut crc = 0;
        let data = bufs.fill(n, |buf| {
            f.read_into(buf)?;
            crc = crc32c::crc32c(buf);
            Ok(())
        })?;
        rows.push(vec![Value::Int(at as i64), Value::Bytes(data), Value::Int(crc.into())]);
        left -= n;
    }
    Ok(rows)
}

/// A backup's thread: pins the snapshot, answers `begin` through `begun`, lowers its
/// priority, then serves reads until its [`Pinned`] is dropped.
fn serve(
    db: Database,
    since: Option<Since>,
    id: u64,
    begun: Sender<Result<Vec<Value>>>,
    reads: Receiver<ReadReq>,
) {
    let snap = db.backup_snapshot(since);
    drop(db);
    let mut snap = match snap {
        Ok(s) => s,
        Err(e) => {
            let _ = begun.send(Err(e));
            return;
        }
    };
    let row = begin_row(id, &snap);
    priority::lower_current_thread();
    if begun.send(Ok(row)).is_err() {
        return;
    }
    let mut bufs = Buffers::default();
    for req in reads {
        let n = snap.files.len();
        let rows = usize::try_from(req.file)
            .ok()
            .and_then(|i| snap.files.get_mut(i))
            .ok_or_else(|| failed(format!("backup {id} has no file {} (it has {n})", req.file)))
            .and_then(|f| read_rows(f, req.max, &mut bufs));
        let _ = req.reply.send(rows);
    }
}

fn begin_proc(db: &Database, b: Arc<Backups>) -> Procedure {
    let weak = db.downgrade();
    Procedure::new(
        "dbms.backup.begin",
        vec![
            ("sinceCommit".into(), T::Integer),
            ("sinceCheckpoint".into(), T::Integer),
            ("manifestCrc".into(), T::Integer),
        ],
        vec![
            ("backupId".into(), T::Integer),
            ("commit".into(), T::Integer),
            ("checkpoint".into(), T::Integer),
            ("manifestCrc".into(), T::Integer),
            ("incremental".into(), T::Boolean),
            ("files".into(), T::List(Box::new(T::Map))),
        ],
        "Pins a consistent snapshot of the database files for `arbor backup` (incremental \
         after the backup named by the arguments; -1s for a full one).",
        move |args, _| {
            let db = Database::upgrade(&weak).ok_or_else(|| failed("the database is closed"))?;
            let since = since_of(args)?;
            {
                let mut open = b.open.lock();
                open.retain(|_, p| p.used.elapsed() < IDLE_EXPIRY);
                if open.len() >= MAX_OPEN {
                    return Err(failed(format!(
                        "{MAX_OPEN} backups are in progress; end one (dbms.backup.end) or wait \
                         {} s for an abandoned one to expire",
                        IDLE_EXPIRY.as_secs()
                    )));
                }
            }
            let id = b.next.fetch_add(1, Ordering::Relaxed) + 1;
            let (begun_tx, begun) = channel();
            let (reads, reads_rx) = channel();
            std::thread::Builder::new()
                .name(format!("arbor-backup-{id}"))
                .spawn(move || serve(db, since, id, begun_tx, reads_rx))
                .map_err(|e| failed(format!("cannot start the backup's thread: {e}")))?;
            let row = begun.recv().map_err(|_| failed("the backup's thread ended"))??;
            b.open.lock().insert(id, Pinned { reads, used: Instant::now() });
            Ok(vec![row])
        },
    )
}

fn read_proc(b: Arc<Backups>) -> Procedure {
    Procedure::new(
        "dbms.backup.read",
        vec![
            ("backupId".into(), T::Integer),
            ("file".into(), T::Integer),
            ("maxBytes".into(), T::Integer),
        ],
        vec![("offset".into(), T::Integer), ("data".into(), T::Any), ("crc".into(), T::Integer)],
        "The next chunks of one file of a pinned backup snapshot.",
        move |args, _| {
            let id = int_arg(args, 0, "backupId")?;
            let file = int_arg(args, 1, "file")?;
            let max = int_arg(args, 2, "maxBytes")?.clamp(1, MAX_CHUNK as i64) as usize;
            let reads = {
                let mut open = b.open.lock();
                let pinned = u64::try_from(id)
                    .ok()
                    .and_then(|id| open.get_mut(&id))
                    .ok_or_else(|| failed(format!("no backup with id {id} is open (expired?)")))?;
                pinned.used = Instant::now();
                pinned.reads.clone()
            };
            let (reply, answer) = channel();
            let gone = || failed(format!("backup {id} was released"));
            reads.send(ReadReq { file, max, reply }).map_err(|_| gone())?;
            answer.recv().map_err(|_| gone())?
        },
    )
}

fn end_proc(b: Arc<Backups>) -> Procedure {
    Procedure::new(
        "dbms.backup.end",
        vec![("backupId".into(), T::Integer)],
        vec![("released".into(), T::Boolean)],
        "Releases a pinned backup snapshot.",
        move |args, _| {
            let id = int_arg(args, 0, "backupId")?;
            let gone = u64::try_from(id).ok().and_then(|id| b.open.lock().remove(&id)).is_some();
            Ok(vec![vec![Value::Bool(gone)]])
        },
    )
}

/// Registers the backup procedures on `db` (file-backed or not: an in-memory database answers
/// `begin` with an error saying it has no files).
pub(crate) fn install(db: &Database) {
    let b = Arc::new(Backups::default());
    let users = crate::users::backup_users_proc(db);
    for p in [begin_proc(db, b.clone()), read_proc(b.clone()), end_proc(b), users] {
        // Names are valid; registration cannot fail.
        let _ = db.register_procedure_fn(p);
    }
}
