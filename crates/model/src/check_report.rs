//! [`CheckReport`] and [`SegmentReport`]: the shape of what a consistency check of a database
//! found (`arbor check`, `Database::check`). The storage layer fills it; the engine and the
//! CLI read it. Also how a commit is described to a person ([`describe_commit`], [`utc`]).

/// At most this many problems are listed (the counts keep going).
const MAX_PROBLEMS: usize = 100;

/// What a consistency check of a store found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// The checkpoint file the manifest names (file-backed stores), and its commit ts.
    pub checkpoint: Option<String>,
    pub checkpoint_ts: u64,
    pub wal_segments: u64,
    pub wal_records: u64,
    /// The log segments read (those not covered by the checkpoint), oldest first.
    pub segments: Vec<SegmentReport>,
    /// The last commit found (checkpoint or log; 0: none) and, when a log record carries it,
    /// its wall-clock time (Unix milliseconds).
    pub last_commit_ts: u64,
    pub last_commit_time_ms: Option<u64>,
    /// Observations that are not problems, such as an unsynced tail recovery would discard.
    pub notes: Vec<String>,
    /// Entities seen in the checked snapshot.
    pub nodes: u64,
    pub relationships: u64,
    /// Index entries verified (node, indexed value) pairs.
    pub index_entries: u64,
    /// The checkpoint's segment files and their data pages (each checksum verified).
    pub segment_files: Vec<String>,
    pub segment_pages: u64,
    /// Human-readable descriptions of every inconsistency found (empty when healthy).
    pub problems: Vec<String>,
}

/// One log segment as the check found it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentReport {
    pub name: String,
    pub bytes: u64,
    /// Intact records read, and the first and last commit ts among them (0 when none).
    pub records: u64,
    pub first_ts: u64,
    pub last_ts: u64,
}

impl CheckReport {
    /// `"<ts> (made at <UTC time>)"` for the last commit, as `arbor check` prints it.
    pub fn last_commit(&self) -> String {
        describe_commit(self.last_commit_ts, self.last_commit_time_ms)
    }

    /// Whether no inconsistency was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// Records an inconsistency (only the first hundred are kept).
    pub fn problem(&mut self, msg: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(msg);
        }
    }
}

/// `"<ts> (made at <UTC time>)"`, or the ts alone when its time is unknown (a commit of a
/// checkpoint, or a log record from before version 3).
pub fn describe_commit(ts: u64, time_ms: Option<u64>) -> String {
    match time_ms {
        Some(ms) => format!("{ts} (made at {})", utc(ms)),
        None => format!("{ts}"),
    }
}

/// Unix milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn utc(ms: u64) -> String {
    match chrono::DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(i64::MAX)) {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => format!("{ms} ms after 1970"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_stop_at_the_limit_and_commits_read_as_utc() {
        let mut r = CheckReport::default();
        assert!(r.is_ok());
        for i in 0..MAX_PROBLEMS + 5 {
            r.problem(format!("p{i}"));
        }
        assert_eq!(r.problems.len(), MAX_PROBLEMS);
        assert!(!r.is_ok());
        r.last_commit_ts = 9;
        assert_eq!(r.last_commit(), "9");
        r.last_commit_time_ms = Some(951_782_400_123);
        assert_eq!(r.last_commit(), "9 (made at 2000-02-29T00:00:00.123Z)");
        assert_eq!(utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(1_795_000_000_000), "2026-11-18T11:06:40.000Z");
        assert_eq!(describe_commit(7, None), "7");
    }
}
