//! `backup.meta`: what a backup directory (or a dump's trailer) holds: the commit it ends at,
//! the checkpoint and manifest it continues from, and each file's length and CRC32C.
//!
//! Text, one item a line, ending with `end <crc32c of the lines before, hex>`:
//! ```text
//! arbor-backup 1
//! commit 1234
//! checkpoint 1200
//! manifest-crc 3735928559
//! file MANIFEST 97 1a2b3c4d
//! file wal-00000000000000001201.log 5120 0badf00d
//! end 89abcdef
//! ```
//! A file's bytes beyond its recorded length (an interrupted incremental backup appended them)
//! are not part of the backup.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context};

pub const META: &str = "backup.meta";
const HEADER: &str = "arbor-backup 1";

/// One file of a backup.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub len: u64,
    pub crc: u32,
}

/// A backup's description (see the module docs).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Meta {
    pub commit: u64,
    pub checkpoint: u64,
    pub manifest_crc: u32,
    pub files: Vec<Entry>,
}

/// Whether `name` may be a file of a backup: a plain name in the directory.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != META
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0', '\n', ' '])
}

impl Meta {
    pub fn render(&self) -> String {
        let mut s = format!(
            "{HEADER}\ncommit {}\ncheckpoint {}\nmanifest-crc {}\n",
            self.commit, self.checkpoint, self.manifest_crc
        );
        for f in &self.files {
            s.push_str(&format!("file {} {} {:08x}\n", f.name, f.len, f.crc));
        }
        let crc = crc32c::crc32c(s.as_bytes());
        s.push_str(&format!("end {crc:08x}\n"));
        s
    }

    /// Parses a description read from `origin` (named in errors).
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Meta> {
        let bad = |what: &str| anyhow::anyhow!("{origin} is corrupt: {what}");
        let body_end = text.rfind("end ").ok_or_else(|| bad("no end line"))?;
        let (body, end) = text.split_at(body_end);
        let want = u32::from_str_radix(end.trim_end().trim_start_matches("end "), 16)
            .map_err(|_| bad("bad end line"))?;
        if crc32c::crc32c(body.as_bytes()) != want {
            bail!("{origin} is corrupt: its checksum does not match its contents");
        }
        let mut lines = body.lines();
        if lines.next() != Some(HEADER) {
            return Err(bad("not an Arbor backup description (or a newer version)"));
        }
        let mut m = Meta::default();
        let num = |v: Option<&str>, what: &str| -> anyhow::Result<u64> {
            v.and_then(|v| v.parse().ok()).ok_or_else(|| bad(&format!("bad {what}")))
        };
        for line in lines {
            let mut parts = line.split(' ');
            match parts.next() {
                Some("commit") => m.commit = num(parts.next(), "commit")?,
                Some("checkpoint") => m.checkpoint = num(parts.next(), "checkpoint")?,
                Some("manifest-crc") => {
                    m.manifest_crc = u32::try_from(num(parts.next(), "manifest-crc")?)
                        .map_err(|_| bad("bad manifest-crc"))?
                }
                Some("file") => {
                    let name = parts.next().unwrap_or_default().to_string();
                    if !valid_name(&name) {
                        return Err(bad(&format!("bad file name {name:?}")));
                    }
                    let len = num(parts.next(), "file length")?;
                    let crc = parts
                        .next()
                        .and_then(|c| u32::from_str_radix(c, 16).ok())
                        .ok_or_else(|| bad("bad file checksum"))?;
                    m.files.push(Entry { name, len, crc });
                }
                _ => return Err(bad(&format!("unexpected line {line:?}"))),
            }
        }
        Ok(m)
    }

    /// The description in `dir`, `None` when there is none.
    pub fn read(dir: &Path) -> anyhow::Result<Option<Meta>> {
        let path = dir.join(META);
        match std::fs::read_to_string(&path) {
            Ok(text) => Meta::parse(&text, &path.display().to_string()).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Writes the description into `dir` atomically (temporary file, fsync, rename, directory
    /// fsync).
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let tmp = dir.join(format!("{META}.tmp"));
        let mut f = super::create_private(&tmp)?;
        f.write_all(self.render().as_bytes())
            .and_then(|()| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, dir.join(META))
            .with_context(|| format!("renaming {}", tmp.display()))?;
        super::sync_dir(dir)
    }

    /// The entry for `name`, added (empty) if missing.
    pub fn entry_mut(&mut self, name: &str) -> &mut Entry {
        let i = match self.files.iter().position(|f| f.name == name) {
            Some(i) => i,
            None => {
                self.files.push(Entry { name: name.to_string(), len: 0, crc: 0 });
                self.files.len() - 1
            }
        };
        &mut self.files[i]
    }

    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Meta {
        Meta {
            commit: 42,
            checkpoint: 40,
            manifest_crc: 0xdead_beef,
            files: vec![
                Entry { name: "MANIFEST".into(), len: 97, crc: 1 },
                Entry { name: "wal-00000000000000000041.log".into(), len: 512, crc: 0xffff_ffff },
            ],
        }
    }

    #[test]
    fn round_trips_and_detects_damage() {
        let m = sample();
        let text = m.render();
        assert_eq!(Meta::parse(&text, "x").unwrap(), m);
        let damaged = text.replace("commit 42", "commit 43");
        let e = Meta::parse(&damaged, "DIR/backup.meta").unwrap_err().to_string();
        assert!(e.contains("DIR/backup.meta is corrupt"), "{e}");
        assert!(Meta::parse("hello", "x").is_err());
    }

    #[test]
    fn refuses_names_outside_the_directory() {
        let mut m = sample();
        m.files[0].name = "../etc/passwd".into();
        let e = Meta::parse(&m.render(), "x").unwrap_err().to_string();
        assert!(e.contains("bad file name"), "{e}");
    }
}
