//! The file helpers backup, restore, dump and load share: private files, directory syncs, an
//! emptied target directory, a CRC-checked copy, and the check of a restored store. A leaf below
//! `mod.rs`, `meta.rs` and `dump.rs`.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use anyhow::{bail, Context};

/// Creates (truncating) a file readable by its owner only.
pub(crate) fn create_private(path: &Path) -> anyhow::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path).with_context(|| format!("creating {}", path.display()))
}

pub(crate) fn sync_dir(dir: &Path) -> anyhow::Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("syncing directory {}", dir.display()))
}

/// Refuses a non-empty `dir` without `force`; with it, empties it.
pub(crate) fn prepare_target(dir: &Path, force: bool) -> anyhow::Result<()> {
    let non_empty = std::fs::read_dir(dir).map(|mut d| d.next().is_some()).unwrap_or(false);
    if non_empty {
        if !force {
            bail!(
                "{} is not empty; pass --force to replace its contents (stop any server using \
                 it first)",
                dir.display()
            );
        }
        std::fs::remove_dir_all(dir).with_context(|| format!("emptying {}", dir.display()))?;
    }
    crate::config::create_data_dir(dir).with_context(|| format!("creating {}", dir.display()))
}

/// Copies `len` bytes from `src` into a new private file `dest` (`None`: reads and checks them
/// only), checking their CRC against `want`; `origin` names the source in errors.
pub(crate) fn copy_checked(
    src: &mut impl Read,
    dest: Option<&Path>,
    len: u64,
    want: u32,
    origin: &str,
) -> anyhow::Result<()> {
    let mut out = dest.map(create_private).transpose()?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut left, mut crc) = (len, 0u32);
    while left > 0 {
        let n = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
        let got = src.read(&mut buf[..n]).with_context(|| format!("reading {origin}"))?;
        if got == 0 {
            bail!("{origin} is truncated: {} of {len} bytes", len - left);
        }
        crc = crc32c::crc32c_append(crc, &buf[..got]);
        if let (Some(out), Some(dest)) = (out.as_mut(), dest) {
            out.write_all(&buf[..got]).with_context(|| format!("writing {}", dest.display()))?;
        }
        left -= got as u64;
    }
    if crc != want {
        bail!("{origin} is corrupt: CRC32C {crc:08x}, expected {want:08x}");
    }
    match (out, dest) {
        (Some(out), Some(dest)) => {
            out.sync_all().with_context(|| format!("syncing {}", dest.display()))
        }
        _ => Ok(()),
    }
}

/// Opens the restored directory read-only and checks it; prints what it holds.
pub(crate) fn verify_restored(dir: &Path, commit: u64) -> anyhow::Result<()> {
    let db = arbor_engine::Database::open_read_only(dir)
        .with_context(|| format!("opening the restored store in {}", dir.display()))?;
    let report = db.check().context("checking the restored store")?;
    db.shutdown().context("closing the restored store")?;
    if !report.is_ok() {
        for p in &report.problems {
            println!("PROBLEM: {p}");
        }
        bail!("the restored store in {} has {} problem(s)", dir.display(), report.problems.len());
    }
    println!(
        "restored commit {commit} into {}: {} nodes, {} relationships; check OK (last commit {})",
        dir.display(),
        report.nodes,
        report.relationships,
        report.last_commit()
    );
    Ok(())
}
