//! Bad entries: counted, written to the report file (`file:line: reason`, one per line), and
//! turned into a fatal error past `--bad-tolerance` or when the flags say a kind is not skipped.
//!
//! Kinds, as neo4j-admin treats them: a duplicate node id is fatal unless
//! `--skip-duplicate-nodes`; a relationship with a missing or unknown end node (or no type) is
//! fatal unless `--skip-bad-relationships`; both, when skipped, count against the tolerance.
//! Rows that cannot be parsed at all (extra columns without `--ignore-extra-columns`,
//! unparsable values, broken quoting, invalid UTF-8) are always skipped and counted.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use arbor_model::{Error, Status};

/// Why a row was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadKind {
    DuplicateNode,
    BadRelationship,
    BadRow,
}

/// The report file and the running count.
pub struct BadLog {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    pub count: u64,
    /// `None` = unlimited.
    tolerance: Option<u64>,
    skip_duplicates: bool,
    skip_bad_relationships: bool,
    log_entries: bool,
}

impl BadLog {
    pub fn create(
        path: &Path,
        tolerance: Option<u64>,
        skip_duplicates: bool,
        skip_bad_relationships: bool,
        log_entries: bool,
    ) -> Result<BadLog, Error> {
        let file = File::create(path).map_err(|e| {
            Error::new(Status::Io, format!("cannot create report file {}: {e}", path.display()))
        })?;
        Ok(BadLog {
            path: path.to_path_buf(),
            out: Some(BufWriter::new(file)),
            count: 0,
            tolerance,
            skip_duplicates,
            skip_bad_relationships,
            log_entries,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records one bad entry; `Err` when it must stop the import.
    pub fn record(
        &mut self,
        kind: BadKind,
        file: &str,
        line: u64,
        reason: &str,
    ) -> Result<(), Error> {
        let entry = format!("{file}:{line}: {reason}");
        let skipped = match kind {
            BadKind::DuplicateNode => self.skip_duplicates,
            BadKind::BadRelationship => self.skip_bad_relationships,
            BadKind::BadRow => true,
        };
        self.write(&entry)?;
        if !skipped {
            let hint = match kind {
                BadKind::DuplicateNode => {
                    " (use --skip-duplicate-nodes=true to skip duplicates, or separate id groups)"
                }
                _ => " (use --skip-bad-relationships=true to skip such relationships)",
            };
            let _ = self.flush();
            return Err(Error::new(Status::ArgumentError, format!("{entry}{hint}")));
        }
        self.count += 1;
        if let Some(t) = self.tolerance {
            if self.count > t {
                let _ = self.flush();
                return Err(Error::new(
                    Status::ArgumentError,
                    format!(
                        "too many bad entries: {} (more than --bad-tolerance={t}), where the last \
                         one was: {entry}; see {}",
                        self.count,
                        self.path.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn write(&mut self, entry: &str) -> Result<(), Error> {
        if !self.log_entries {
            return Ok(());
        }
        if let Some(out) = self.out.as_mut() {
            writeln!(out, "{entry}").map_err(|e| {
                Error::new(Status::Io, format!("cannot write {}: {e}", self.path.display()))
            })?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), Error> {
        if let Some(out) = self.out.as_mut() {
            out.flush().map_err(|e| {
                Error::new(Status::Io, format!("cannot write {}: {e}", self.path.display()))
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.report");
        let mut log = BadLog::create(&p, Some(2), true, false, true).unwrap();
        log.record(BadKind::DuplicateNode, "n.csv", 3, "dup").unwrap();
        log.record(BadKind::BadRow, "n.csv", 4, "bad value").unwrap();
        let e = log.record(BadKind::BadRow, "n.csv", 5, "third").unwrap_err();
        assert!(e.message.contains("too many bad entries: 3"), "{}", e.message);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text, "n.csv:3: dup\nn.csv:4: bad value\nn.csv:5: third\n");

        let mut log = BadLog::create(&p, None, false, false, true).unwrap();
        let e = log.record(BadKind::BadRelationship, "r.csv", 9, "missing node").unwrap_err();
        assert!(e.message.contains("r.csv:9: missing node"));
        assert!(e.message.contains("--skip-bad-relationships"));
        let e = log.record(BadKind::DuplicateNode, "n.csv", 2, "dup").unwrap_err();
        assert!(e.message.contains("--skip-duplicate-nodes"));
    }
}
