//! `arbor backup` (online, over Bolt, incremental when the directory holds a backup),
//! `arbor restore`, and the offline one-file `arbor dump` / `arbor load` (`dump.rs`).
//!
//! A backup directory holds the store's files as the server's `dbms.backup.*` procedures hand
//! them out (`engine/src/backup.rs`: a manifest, its checkpoint and segment files, the log cut
//! at the backup's commit) and `backup.meta` (`meta.rs`), written last, which names each file
//! with its length and CRC32C. Every chunk is checked against the CRC the server computed, and
//! every file against `backup.meta` when restored, so a damaged byte is an error naming the file.
//!
//! `arbor backup` runs at the lowest CPU and I/O priority (`SCHED_IDLE` or nice 19, the idle
//! I/O class; the server streams from a thread at the same priority), so a backup takes only
//! what the live workload leaves; `--max-rate` caps its bandwidth as well. An incremental backup
//! that finds nothing new writes and syncs nothing; the users file is rewritten only when it
//! changed, and the directory is synced only when an entry was created.
//!
//! The users (`auth.toml`, hashes only) travel with the store: `arbor backup` takes them from
//! `dbms.backup.users()`, `arbor dump` from the data directory; `restore` and `load` put them
//! back unless `--skip-users`.

mod dump;
mod files;
mod meta;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use arbor_bolt::client::{Auth, Client, ClientConfig};
use arbor_model::{PropertyMap, Value};

pub use dump::{dump, load, DumpArgs, LoadArgs};
use files::{copy_checked, create_private, prepare_target, sync_dir, verify_restored};
use meta::{Meta, META};

/// The user store's file, in a data directory and in a backup.
pub(crate) const USERS_FILE: &str = "auth.toml";

/// Bytes asked for per `dbms.backup.read` call (the server's most).
const CHUNK: u64 = 4 << 20;
/// A progress line every this many bytes of one file.
const PROGRESS_EVERY: u64 = 64 << 20;

#[derive(clap::Args, Debug)]
pub struct BackupArgs {
    /// The server to back up: `bolt://HOST:PORT` (or `HOST:PORT`).
    #[arg(long)]
    from: String,
    /// The backup directory (created if missing; an existing backup in it is continued
    /// incrementally when the server's log still reaches back to it).
    #[arg(long)]
    to: PathBuf,
    /// User name. Default: neo4j
    #[arg(short = 'u', long, default_value = "neo4j")]
    username: String,
    /// Password (env NEO4J_PASSWORD); without one the backup logs in with scheme `none`.
    #[arg(short = 'p', long, env = "NEO4J_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// The most bytes a second to copy (e.g. 50m, 1g; default: no limit). The backup runs at
    /// the lowest CPU and I/O priority either way.
    #[arg(long, value_name = "SIZE")]
    max_rate: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// The backup directory.
    #[arg(long)]
    from: PathBuf,
    /// The data directory to create.
    #[arg(long)]
    to: PathBuf,
    /// Replace the contents of a non-empty data directory.
    #[arg(long)]
    force: bool,
    /// Leave the backup's users (auth.toml) out: the restored store starts with no users.
    #[arg(long)]
    skip_users: bool,
}

fn int(v: Option<&Value>, what: &str) -> anyhow::Result<i64> {
    match v {
        Some(Value::Int(n)) => Ok(*n),
        _ => bail!("the server's answer has no integer {what}"),
    }
}

fn params(pairs: &[(&str, i64)]) -> PropertyMap {
    let mut p = PropertyMap::new();
    for (k, v) in pairs {
        p.insert((*k).into(), Value::Int(*v));
    }
    p
}

/// A file of the snapshot the server pinned.
struct Remote {
    name: String,
    offset: u64,
    len: u64,
}

/// What `dbms.backup.begin` answered.
struct Begun {
    id: i64,
    meta: Meta,
    incremental: bool,
    files: Vec<Remote>,
}

fn begin(client: &mut Client, old: Option<&Meta>) -> anyhow::Result<Begun> {
    let since = match old {
        Some(m) => params(&[
            ("c", m.commit as i64),
            ("k", m.checkpoint as i64),
            ("m", i64::from(m.manifest_crc)),
        ]),
        None => params(&[("c", -1), ("k", -1), ("m", -1)]),
    };
    let r = client
        .run_all("CALL dbms.backup.begin($c, $k, $m)", &since)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("starting the backup on the server")?;
    let row = r.records.first().context("the server pinned no snapshot")?;
    let mut files = Vec::new();
    if let Some(Value::List(items)) = row.get(5) {
        for item in items {
            let Value::Map(m) = item else { bail!("the server's file list is malformed") };
            let name = match m.get("name") {
                Some(Value::String(s)) if meta::valid_name(s) => s.to_string(),
                other => bail!("the server named a bad backup file: {other:?}"),
            };
            let offset = int(m.get("offset"), "offset")?.max(0) as u64;
            let len = int(m.get("length"), "length")?.max(0) as u64;
            files.push(Remote { name, offset, len });
        }
    }
    Ok(Begun {
        id: int(row.first(), "backupId")?,
        meta: Meta {
            commit: int(row.get(1), "commit")? as u64,
            checkpoint: int(row.get(2), "checkpoint")? as u64,
            manifest_crc: u32::try_from(int(row.get(3), "manifestCrc")?)
                .context("manifestCrc out of range")?,
            files: Vec::new(),
        },
        incremental: matches!(row.get(4), Some(Value::Bool(true))),
        files,
    })
}

/// `--max-rate`: sleeps so that the bytes copied so far take at least `bytes / rate` seconds.
struct Pace {
    /// Bytes a second (`None`: no limit).
    rate: Option<u64>,
    started: Instant,
    bytes: u64,
}

impl Pace {
    fn new(max_rate: Option<&str>) -> anyhow::Result<Pace> {
        let rate = match max_rate {
            None => None,
            Some(text) => match arbor_engine::memory_limits::parse_size(text) {
                Ok(0) => None,
                Ok(n) => Some(n),
                Err(e) => bail!("--max-rate: {e}"),
            },
        };
        Ok(Pace { rate, started: Instant::now(), bytes: 0 })
    }

    /// How many bytes to ask for in one call: a tenth of a second's worth under a limit.
    fn chunk(&self) -> u64 {
        self.rate.map_or(CHUNK, |r| (r / 10).clamp(64 << 10, CHUNK))
    }

    fn copied(&mut self, n: u64) {
        self.bytes += n;
        if let Some(rate) = self.rate {
            let due = Duration::from_secs_f64(self.bytes as f64 / rate as f64);
            if let Some(wait) = due.checked_sub(self.started.elapsed()) {
                std::thread::sleep(wait);
            }
        }
    }
}

/// Copies file number `i` of backup `id` into `dir`, appending at its offset, and records its
/// new length and CRC in `meta`.
fn fetch(
    client: &mut Client,
    (id, i): (i64, usize),
    f: &Remote,
    dir: &Path,
    meta: &mut Meta,
    pace: &mut Pace,
) -> anyhow::Result<()> {
    let path = dir.join(&f.name);
    let entry = meta.entry_mut(&f.name);
    let (mut out, mut crc) = if f.offset == 0 {
        (create_private(&path)?, 0)
    } else {
        if entry.len != f.offset {
            bail!(
                "{} in the backup holds {} bytes but the server continues it at {}; start a \
                 new backup directory",
                path.display(),
                entry.len,
                f.offset
            );
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        // Bytes an interrupted backup appended are not part of the backup.
        file.set_len(entry.len).with_context(|| format!("truncating {}", path.display()))?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))?;
        (file, entry.crc)
    };
    let mut at = f.offset;
    let end = f.offset + f.len;
    let mut next_note = at + PROGRESS_EVERY;
    let mut err = None;
    while at < end {
        let mut got = false;
        let before = at;
        let max = pace.chunk() as i64;
        client
            .run_with(
                "CALL dbms.backup.read($id, $file, $max)",
                &params(&[("id", id), ("file", i as i64), ("max", max)]),
                |row| {
                    got = true;
                    if err.is_none() {
                        if let Err(e) = take_chunk(&row, &f.name, &mut at, &mut crc, &mut out) {
                            err = Some(e);
                        }
                    }
                    Ok(())
                },
            )
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("reading {} from the server", f.name))?;
        if let Some(e) = err.take() {
            return Err(e);
        }
        if !got {
            bail!("the server ended {} at byte {at}, expected {end}", f.name);
        }
        pace.copied(at - before);
        if at >= next_note && at < end {
            println!("backup:   {}: {} of {} MiB", f.name, (at - f.offset) >> 20, f.len >> 20);
            next_note = at + PROGRESS_EVERY;
        }
    }
    out.sync_data().with_context(|| format!("syncing {}", path.display()))?;
    *meta.entry_mut(&f.name) = meta::Entry { name: f.name.clone(), len: end, crc };
    Ok(())
}

/// Checks one chunk record (`offset`, `data`, `crc`) and appends it.
fn take_chunk(
    row: &[Value],
    name: &str,
    at: &mut u64,
    crc: &mut u32,
    out: &mut File,
) -> anyhow::Result<()> {
    let offset = int(row.first(), "offset")? as u64;
    let Some(Value::Bytes(data)) = row.get(1) else { bail!("chunk of {name} carries no bytes") };
    let sent = int(row.get(2), "crc")? as u32;
    if offset != *at {
        bail!("chunk of {name} starts at byte {offset}, expected {at}");
    }
    let got = crc32c::crc32c(data);
    if got != sent {
        bail!(
            "chunk at byte {offset} of {name} is corrupt: CRC32C {got:08x}, the server sent \
             {sent:08x}"
        );
    }
    out.write_all(data).with_context(|| format!("writing {name}"))?;
    // A second pass rather than `crc32c_combine`: combining costs ~130 k instructions a record
    // (callgrind), two hardware CRC passes over a 65,000-byte record about 40 k.
    *crc = crc32c::crc32c_append(*crc, data);
    *at += data.len() as u64;
    Ok(())
}

/// `arbor backup`.
pub fn backup(args: BackupArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    // First, before any work: the whole process yields to the server's queries.
    let priority = arbor_engine::backup::priority::lower_current_thread();
    let mut pace = Pace::new(args.max_rate.as_deref())?;
    crate::config::create_data_dir(&args.to)
        .with_context(|| format!("creating backup directory {}", args.to.display()))?;
    let old = Meta::read(&args.to)?;
    let auth = match &args.password {
        Some(p) => Auth::Basic { user: args.username.clone(), password: p.clone() },
        None => Auth::None,
    };
    let config = ClientConfig {
        auth,
        user_agent: format!("arbor-backup/{}", env!("CARGO_PKG_VERSION")),
        timeout: None,
    };
    let mut client = Client::connect(&args.from, &config)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("connecting to {}", args.from))?;
    let b = begin(&mut client, old.as_ref())?;
    let mut meta = match (&old, b.incremental) {
        (Some(old), true) => Meta { files: old.files.clone(), ..b.meta.clone() },
        _ => {
            // A full backup replaces whatever the directory held: the old description goes
            // first, so an interrupted run never looks like a finished one.
            if let Some(old) = &old {
                let _ = std::fs::remove_file(args.to.join(META));
                for f in &old.files {
                    let _ = std::fs::remove_file(args.to.join(&f.name));
                }
            }
            b.meta.clone()
        }
    };
    let total: u64 = b.files.iter().map(|f| f.len).sum();
    println!("backup: running at the lowest priority: {priority}");
    println!(
        "backup: {} backup of {} at commit {} (checkpoint {}): {} file(s), {} bytes",
        if b.incremental { "incremental" } else { "full" },
        args.from,
        b.meta.commit,
        b.meta.checkpoint,
        b.files.len(),
        total
    );
    for (i, f) in b.files.iter().enumerate() {
        println!(
            "backup: [{}/{}] {} ({} bytes from byte {})",
            i + 1,
            b.files.len(),
            f.name,
            f.len,
            f.offset
        );
        fetch(&mut client, (b.id, i), f, &args.to, &mut meta, &mut pace)?;
    }
    let _ = client.run_all("CALL dbms.backup.end($id)", &params(&[("id", b.id)]));
    let users_written = backup_users(&mut client, &args.to, &mut meta)?;
    // Nothing new since the backup in the directory: it stays as it is (no write, no sync).
    if b.incremental && old.as_ref() == Some(&meta) {
        println!(
            "backup: done: nothing new since commit {} in {} ({:.1} s)",
            meta.commit,
            args.to.display(),
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    // New directory entries must be durable before `backup.meta` names them.
    if !b.incremental || users_written || b.files.iter().any(|f| f.offset == 0) {
        sync_dir(&args.to)?;
    }
    meta.write(&args.to)?;
    println!(
        "backup: done: commit {} in {} ({} bytes copied, {} bytes in the backup) in {:.1} s",
        meta.commit,
        args.to.display(),
        total,
        meta.total_bytes(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Copies the server's users into `dir` (replacing those of an earlier backup there, unless
/// they are the same); returns whether the file was written.
fn backup_users(client: &mut Client, dir: &Path, meta: &mut Meta) -> anyhow::Result<bool> {
    let result = client
        .run_all("CALL dbms.backup.users() YIELD file RETURN file", &PropertyMap::new())
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("reading the server's users (dbms.backup.users)")?;
    let path = dir.join(USERS_FILE);
    let Some(Value::String(text)) = result.records.first().and_then(|r| r.first()) else {
        println!("backup: the server has no user store on disk: no users in this backup");
        let had = meta.files.iter().any(|f| f.name == USERS_FILE);
        meta.files.retain(|f| f.name != USERS_FILE);
        let _ = std::fs::remove_file(&path);
        return Ok(had);
    };
    let (len, crc) = (text.len() as u64, crc32c::crc32c(text.as_bytes()));
    let same = meta.files.iter().any(|f| f.name == USERS_FILE && f.len == len && f.crc == crc);
    // The copy a finished backup holds (restore checks it against `backup.meta`).
    if same && std::fs::metadata(&path).is_ok_and(|m| m.len() == len) {
        println!("backup: users: unchanged in {}", path.display());
        return Ok(false);
    }
    let mut f = create_private(&path)?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    let entry = meta.entry_mut(USERS_FILE);
    entry.len = len;
    entry.crc = crc;
    println!("backup: users: {} bytes into {}", text.len(), path.display());
    Ok(true)
}

/// Where a backed-up file goes in the restored directory (`None`: left out).
pub(crate) fn restored_path(to: &Path, name: &str, skip_users: bool) -> Option<PathBuf> {
    (!(skip_users && name == USERS_FILE)).then(|| to.join(name))
}
/// Copies every file of the backup in `from` into `to`, checking each against `meta`.
fn copy_backup(meta: &Meta, from: &Path, to: &Path, skip_users: bool) -> anyhow::Result<()> {
    for f in &meta.files {
        let src = from.join(&f.name);
        let mut file = File::open(&src)
            .with_context(|| format!("backup file {} is missing", src.display()))?;
        let origin = format!("backup file {}", src.display());
        let dest = restored_path(to, &f.name, skip_users);
        copy_checked(&mut file, dest.as_deref(), f.len, f.crc, &origin)?;
    }
    sync_dir(to)
}

/// `arbor restore`.
pub fn restore(args: RestoreArgs) -> anyhow::Result<()> {
    let meta = Meta::read(&args.from)?.with_context(|| {
        format!("no backup in {}: {META} is missing (an unfinished backup?)", args.from.display())
    })?;
    prepare_target(&args.to, args.force)?;
    if let Err(e) = copy_backup(&meta, &args.from, &args.to, args.skip_users) {
        let _ = std::fs::remove_dir_all(&args.to);
        return Err(e);
    }
    verify_restored(&args.to, meta.commit)
}
