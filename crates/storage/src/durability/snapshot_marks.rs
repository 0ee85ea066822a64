//! Where recent backup snapshots cut the log (`snapshot.rs`), so that the next snapshot starts
//! its scan of a segment there instead of at the segment's first byte. A leaf below
//! `persist.rs` (which holds the store's [`Marks`]) and `snapshot.rs` (which uses them).

use parking_lot::Mutex;

/// How many [`Mark`]s a store keeps.
const MARKS_KEPT: usize = 16;

/// Where an earlier snapshot cut a log segment: every record before `offset` has a ts `<=
/// commit`, every record from it on a larger one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The segment (its first ts, as in its name).
    pub segment: u64,
    pub commit: u64,
    pub offset: u64,
}

/// The cuts of the latest snapshots of a store, so that the next one does not scan the log
/// from a segment's start again (see the module docs). Held by `Persist`.
#[derive(Default)]
pub(crate) struct Marks(Mutex<Vec<Mark>>);

impl Marks {
    /// Where to start scanning `segment` (first ts `seg`) for the records in `(from, upto]`:
    /// `(position, start, end)` as `snapshot::scan` takes them.
    pub(crate) fn resume(&self, seg: u64, from: u64, upto: u64) -> (u64, u64, u64) {
        let marks = self.0.lock();
        let best = marks
            .iter()
            .filter(|m| m.segment == seg && m.commit <= upto)
            // Usable when nothing before the mark can be `<= from` (the whole segment is
            // newer) or when everything before it is.
            .filter(|m| m.commit <= from || seg > from)
            .max_by_key(|m| m.commit);
        match best {
            Some(m) if m.commit <= from => (m.offset, m.offset, m.offset),
            Some(m) => (m.offset, 0, m.offset),
            None => (0, 0, 0),
        }
    }

    pub(crate) fn remember(&self, mark: Mark, live: &[u64]) {
        let mut marks = self.0.lock();
        marks.retain(|m| m != &mark && live.contains(&m.segment));
        if marks.len() >= MARKS_KEPT {
            marks.remove(0);
        }
        marks.push(mark);
    }
}
