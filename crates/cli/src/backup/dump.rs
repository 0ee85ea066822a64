//! `arbor dump` / `arbor load`: a stopped database as one checksummed file, and back.
//!
//! The dump holds the same file set an online backup copies (the store is opened read-only,
//! which also refuses a directory a server has open), in one file:
//! `"ARBORDUMP1\n"`, the files' bytes one after another, the description (`meta.rs`, which
//! lists the files in that order with their lengths and CRC32Cs), the description's length
//! (u64 LE) and the CRC32C of everything before it (u32 LE). `load` checks the whole file's CRC
//! before writing anything, then each file's CRC as it extracts it. The data directory's users
//! (`auth.toml`) are the dump's last file when there are any.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};

use super::meta::{Entry, Meta};

const MAGIC: &[u8; 11] = b"ARBORDUMP1\n";
/// The description's length and the file's CRC.
const TRAILER: u64 = 12;

#[derive(clap::Args, Debug)]
pub struct DumpArgs {
    /// The data directory (no server may have it open). Default: ./arbor-data
    #[arg(long)]
    data: Option<PathBuf>,
    /// The dump file to write.
    #[arg(long)]
    to: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// The dump file.
    #[arg(long)]
    from: PathBuf,
    /// The data directory to create.
    #[arg(long)]
    to: PathBuf,
    /// Replace the contents of a non-empty data directory.
    #[arg(long)]
    force: bool,
    /// Leave the dump's users (auth.toml) out: the loaded store starts with no users.
    #[arg(long)]
    skip_users: bool,
}

/// Writes while computing the CRC of everything written.
struct CrcOut {
    out: BufWriter<File>,
    crc: u32,
}

impl CrcOut {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.out.write_all(bytes)
    }
}

/// `arbor dump`.
pub fn dump(args: DumpArgs) -> anyhow::Result<()> {
    let data = args.data.unwrap_or_else(crate::config::default_data_dir);
    if !data.is_dir() {
        bail!("no data directory at {}", data.display());
    }
    let db = arbor_engine::Database::open_read_only(&data)
        .with_context(|| format!("opening {} (is a server running on it?)", data.display()))?;
    let mut snap = db.backup_snapshot(None).context("pinning the store's files")?;
    let tmp = args.to.with_extension("tmp");
    let mut w =
        CrcOut { out: BufWriter::with_capacity(1 << 20, super::create_private(&tmp)?), crc: 0 };
    let io = |e: std::io::Error| anyhow::anyhow!("writing {}: {e}", tmp.display());
    w.put(MAGIC).map_err(io)?;
    let mut meta = Meta {
        commit: snap.commit,
        checkpoint: snap.checkpoint,
        manifest_crc: snap.manifest_crc,
        files: Vec::new(),
    };
    for f in &mut snap.files {
        let mut crc = 0u32;
        loop {
            let chunk = f.read_chunk(1 << 20)?;
            if chunk.is_empty() {
                break;
            }
            crc = crc32c::crc32c_append(crc, &chunk);
            w.put(&chunk).map_err(io)?;
        }
        meta.files.push(Entry { name: f.name.clone(), len: f.len, crc });
    }
    // The users, last: read while the store is open, so no `arbor passwd` runs meanwhile.
    let users = data.join(super::USERS_FILE);
    match std::fs::read(&users) {
        Ok(bytes) => {
            w.put(&bytes).map_err(io)?;
            let crc = crc32c::crc32c(&bytes);
            meta.files.push(Entry { name: super::USERS_FILE.into(), len: bytes.len() as u64, crc });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", users.display())),
    }
    let text = meta.render();
    w.put(text.as_bytes()).map_err(io)?;
    w.put(&(text.len() as u64).to_le_bytes()).map_err(io)?;
    let crc = w.crc;
    w.out.write_all(&crc.to_le_bytes()).map_err(io)?;
    let file = w.out.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    drop(snap);
    db.shutdown().context("closing the database")?;
    std::fs::rename(&tmp, &args.to).with_context(|| format!("renaming {}", tmp.display()))?;
    println!(
        "dump: commit {} of {} into {}: {} file(s), {} bytes",
        meta.commit,
        data.display(),
        args.to.display(),
        meta.files.len(),
        meta.total_bytes()
    );
    Ok(())
}

/// Reads and checks a dump's trailer and description; leaves `f` at the first file's bytes.
fn read_index(f: &mut File, origin: &str) -> anyhow::Result<Meta> {
    let size = f.metadata().with_context(|| format!("reading {origin}"))?.len();
    let corrupt = |what: &str| anyhow::anyhow!("{origin} is corrupt: {what}");
    if size < MAGIC.len() as u64 + TRAILER {
        return Err(corrupt("too short for a dump"));
    }
    let mut magic = [0u8; 11];
    f.read_exact(&mut magic)?;
    if &magic != MAGIC {
        bail!("{origin} is not an Arbor dump");
    }
    // The whole file's CRC first: nothing is written from a damaged dump.
    f.seek(SeekFrom::Start(0))?;
    let mut r = BufReader::with_capacity(1 << 20, (&mut *f).take(size - 4));
    let mut crc = 0u32;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = r.read(&mut buf).with_context(|| format!("reading {origin}"))?;
        if n == 0 {
            break;
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
    }
    let mut tail = [0u8; 12];
    f.seek(SeekFrom::Start(size - TRAILER))?;
    f.read_exact(&mut tail)?;
    let text_len = u64::from_le_bytes(tail[..8].try_into().expect("8 bytes"));
    let want = u32::from_le_bytes(tail[8..].try_into().expect("4 bytes"));
    if crc != want {
        return Err(corrupt(&format!("CRC32C {crc:08x}, expected {want:08x}")));
    }
    let files_end = (size - TRAILER)
        .checked_sub(text_len)
        .filter(|&e| e >= MAGIC.len() as u64)
        .ok_or_else(|| corrupt("bad description length"))?;
    f.seek(SeekFrom::Start(files_end))?;
    let mut text = String::new();
    f.take(text_len).read_to_string(&mut text).map_err(|_| corrupt("bad description"))?;
    let meta = Meta::parse(&text, origin)?;
    if MAGIC.len() as u64 + meta.total_bytes() != files_end {
        return Err(corrupt("the file lengths do not add up"));
    }
    f.seek(SeekFrom::Start(MAGIC.len() as u64))?;
    Ok(meta)
}

/// Writes the dump's files (`f` at the first one's bytes) into `to`, checking each.
fn extract(
    f: &mut File,
    meta: &Meta,
    origin: &str,
    to: &std::path::Path,
    skip_users: bool,
) -> anyhow::Result<()> {
    let mut r = BufReader::with_capacity(1 << 20, f);
    for e in &meta.files {
        let what = format!("{} in {origin}", e.name);
        let dest = super::restored_path(to, &e.name, skip_users);
        super::copy_checked(&mut r, dest.as_deref(), e.len, e.crc, &what)?;
    }
    super::sync_dir(to)
}

/// `arbor load`.
pub fn load(args: LoadArgs) -> anyhow::Result<()> {
    let origin = format!("dump {}", args.from.display());
    let mut f = File::open(&args.from).with_context(|| format!("opening {origin}"))?;
    let meta = read_index(&mut f, &origin)?;
    super::prepare_target(&args.to, args.force)?;
    if let Err(e) = extract(&mut f, &meta, &origin, &args.to, args.skip_users) {
        let _ = std::fs::remove_dir_all(&args.to);
        return Err(e);
    }
    super::verify_restored(&args.to, meta.commit)
}
