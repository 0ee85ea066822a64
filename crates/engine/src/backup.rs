//! Online backup over Bolt: the `dbms.backup.*` procedures that hand a pinned snapshot of the
//! store's files ([`BackupSnapshot`]) to `arbor backup` in checksummed chunks.
//!
//! - `dbms.backup.begin(sinceCommit, sinceCheckpoint, manifestCrc)` pins a snapshot (an
//!   incremental one when the three values name the previous backup and the log still reaches
//!   back to it; pass `-1`s for a full one) and yields its id, commit, checkpoint, manifest CRC,
//!   whether it is incremental, and its files as maps `{name, offset, length}`.
//! - `dbms.backup.read(backupId, file, maxBytes)` yields the next chunk of file number `file`
//!   (files are read in order, each from its start): `offset` (in the file), `data` (bytes) and
//!   `crc` (CRC32C of `data`), or no row at the file's end.
//! - `dbms.backup.end(backupId)` releases the snapshot (its open files). A snapshot nobody has
//!   read for [`IDLE_EXPIRY`] is released by the next `begin`.
//!
//! Why Bolt and not the HTTP port: the backup client reuses the Bolt client, its TLS and its
//! authentication exactly as `arbor shell` does, so a backup needs only the address users
//! already have, and works when the HTTP port is off. A chunk is one record (≤ 4 MiB), well
//! under Bolt's message limit; pulling chunk by chunk keeps the server's memory per backup to
//! one chunk. With authentication on, only a logged-in user reaches the procedures; Arbor, like
//! Neo4j Community, has no roles, so every user is an administrator.
//!
//! Writers are never blocked: pinning takes the checkpoint lock only while choosing and opening
//! files, and reading goes through file handles opened then.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_cypher_plan::CypherType as T;
use arbor_exec::procs::Procedure;
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use parking_lot::Mutex;

use crate::session::Database;

/// A pinned snapshot nobody reads for this long is released.
pub const IDLE_EXPIRY: Duration = Duration::from_secs(600);
/// The largest chunk `dbms.backup.read` hands out.
pub const MAX_CHUNK: usize = 4 << 20;
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

struct Pinned {
    snap: BackupSnapshot,
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
            b.open.lock().retain(|_, p| p.used.elapsed() < IDLE_EXPIRY);
            let snap = db.backup_snapshot(since)?;
            let id = b.next.fetch_add(1, Ordering::Relaxed) + 1;
            let row = vec![
                Value::Int(id as i64),
                Value::Int(snap.commit as i64),
                Value::Int(snap.checkpoint as i64),
                Value::Int(i64::from(snap.manifest_crc)),
                Value::Bool(snap.incremental),
                Value::List(snap.files.iter().map(file_map).collect()),
            ];
            b.open.lock().insert(id, Pinned { snap, used: Instant::now() });
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
        "The next chunk of one file of a pinned backup snapshot.",
        move |args, _| {
            let id = int_arg(args, 0, "backupId")?;
            let file = int_arg(args, 1, "file")?;
            let max = int_arg(args, 2, "maxBytes")?.clamp(1, MAX_CHUNK as i64) as usize;
            let mut open = b.open.lock();
            let pinned = u64::try_from(id)
                .ok()
                .and_then(|id| open.get_mut(&id))
                .ok_or_else(|| failed(format!("no backup with id {id} is open (expired?)")))?;
            pinned.used = Instant::now();
            let n = pinned.snap.files.len();
            let f = usize::try_from(file)
                .ok()
                .and_then(|i| pinned.snap.files.get_mut(i))
                .ok_or_else(|| failed(format!("backup {id} has no file {file} (it has {n})")))?;
            let at = f.offset + (f.len - f.remaining());
            let data = f.read_chunk(max)?;
            if data.is_empty() {
                return Ok(Vec::new());
            }
            let crc = crc32c::crc32c(&data);
            Ok(vec![vec![Value::Int(at as i64), Value::Bytes(data.into()), Value::Int(crc.into())]])
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
