//! [`CheckReport`]: what `Database::check` found, the embedding API's own copy of storage's
//! report.

/// What [`crate::Database::check`] found: the embedding API's own copy of storage's report, so the
/// public API names no `arbor_storage` type.
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
    /// its wall-clock time (Unix milliseconds), with [`CheckReport::last_commit`] as text.
    pub last_commit_ts: u64,
    pub last_commit_time_ms: Option<u64>,
    last_commit_text: String,
    /// Observations that are not problems, such as an unsynced tail recovery would discard.
    pub notes: Vec<String>,
    /// Entities seen in the checked snapshot.
    pub nodes: u64,
    pub relationships: u64,
    /// Index entries verified (node, indexed value) pairs.
    pub index_entries: u64,
    /// The checkpoint's segment files and their data pages (every page checksum verified).
    pub segment_files: Vec<String>,
    pub segment_pages: u64,
    /// Human-readable descriptions of every inconsistency found (empty when healthy).
    pub problems: Vec<String>,
}

/// One log segment as [`Database::check`] found it.
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
    /// Whether no inconsistency was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// `"<ts> (made at <UTC time>)"` for the last commit, as `arbor check` prints it.
    pub fn last_commit(&self) -> String {
        self.last_commit_text.clone()
    }
}

impl From<arbor_storage::CheckReport> for CheckReport {
    fn from(r: arbor_storage::CheckReport) -> CheckReport {
        let last_commit_text = r.last_commit();
        let arbor_storage::CheckReport {
            checkpoint,
            checkpoint_ts,
            wal_segments,
            wal_records,
            segments,
            last_commit_ts,
            last_commit_time_ms,
            notes,
            nodes,
            relationships,
            index_entries,
            segment_files,
            segment_pages,
            problems,
        } = r;
        let segments = segments
            .into_iter()
            .map(|s| SegmentReport {
                name: s.name,
                bytes: s.bytes,
                records: s.records,
                first_ts: s.first_ts,
                last_ts: s.last_ts,
            })
            .collect();
        CheckReport {
            checkpoint,
            checkpoint_ts,
            wal_segments,
            wal_records,
            segments,
            last_commit_ts,
            last_commit_time_ms,
            last_commit_text,
            notes,
            segment_files,
            segment_pages,
            nodes,
            relationships,
            index_entries,
            problems,
        }
    }
}
