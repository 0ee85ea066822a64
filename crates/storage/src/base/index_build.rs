//! Index population as an external sort: `(key_hash, id)` entries (no keys kept) collected
//! into a run buffer of a fixed number of bytes, each full run sorted and spilled to a scratch
//! file, the runs then k-way merged into the hash order [`BaseIndex`] uses (packed
//! `hash << 32 | id`, or wide `(hash, id)` once ids need more than 32 bits).
//!
//! The scratch file is created in the store directory (the system's temporary directory for
//! an in-memory store) and unlinked at once, so a crash leaves nothing behind. The merge
//! reads each run through a window of `run buffer / runs` entries (at least
//! [`MIN_WINDOW`]), so the sort's own allocation stays at the run buffer's size plus those
//! windows; the merged output is either streamed to a sink (a uniqueness check) or collected
//! into the index array (an [`IndexPart`]: the index of one base's rows of one target,
//! attached to the schema until a base indexes the target natively).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use arbor_model::{Error, Result, Status};

use super::index::{key_hash, BaseIndex};
use crate::value::IndexKey;

/// The fewest entries a merge window reads at once.
/// The run buffer's share of the memory budget: `budget / RUN_SHARE` bytes (an index
/// population beside the pool, the delta and the queries; see `mvcc/index_part.rs`).
pub(crate) const RUN_SHARE: u64 = 8;

const MIN_WINDOW: usize = 64;

/// Names the scratch files of concurrent sorts apart.
static SCRATCH_SEQ: AtomicU64 = AtomicU64::new(0);

/// One entry: `(hash, id)` ordered by hash, then id.
type Entry = (u32, u64);

/// Where a sort may spill and how many bytes its run buffer may hold.
#[derive(Clone, Debug)]
pub(crate) struct SortBudget {
    pub run_bytes: usize,
    pub dir: Option<PathBuf>,
}

/// What a finished sort cost (the memory test and the log read it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SortStats {
    pub entries: u64,
    pub runs: u64,
    /// The largest number of bytes the sort itself held at once (run buffer, or merge windows).
    pub peak_bytes: u64,
}

/// An external sort of `(hash, id)` entries (see the module docs).
pub(crate) struct HashSorter {
    wide: bool,
    cap: usize,
    /// Packed words (`wide` false) or hash/id word pairs.
    buf: Vec<u64>,
    dir: Option<PathBuf>,
    scratch: Option<File>,
    /// `(first word, words)` of each spilled run.
    runs: Vec<(u64, u64)>,
    written: u64,
    stats: SortStats,
}

impl HashSorter {
    /// A sorter for ids below `id_end` (wide entries when they exceed 32 bits).
    pub(crate) fn new(id_end: u64, budget: &SortBudget) -> HashSorter {
        let wide = id_end > u64::from(u32::MAX);
        let per = if wide { 16 } else { 8 };
        let cap = (budget.run_bytes / per).max(MIN_WINDOW) * (per / 8);
        HashSorter {
            wide,
            cap,
            buf: Vec::new(),
            dir: budget.dir.clone(),
            scratch: None,
            runs: Vec::new(),
            written: 0,
            stats: SortStats::default(),
        }
    }

    /// Whether entries are `(hash, id)` word pairs (ids beyond 32 bits).
    pub(crate) fn wide(&self) -> bool {
        self.wide
    }

    /// Entries pushed so far.
    pub(crate) fn entries(&self) -> u64 {
        self.stats.entries
    }

    /// Adds the entry of `key` for `id`.
    pub(crate) fn push_key(&mut self, key: &IndexKey, id: u64) -> Result<()> {
        self.push(key_hash(key), id)
    }

    pub(crate) fn push(&mut self, h: u32, id: u64) -> Result<()> {
        if self.buf.len() >= self.cap {
            self.spill()?;
        }
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(self.cap);
        }
        if self.wide {
            self.buf.push(u64::from(h));
            self.buf.push(id);
        } else {
            self.buf.push(u64::from(h) << 32 | id);
        }
        self.stats.entries += 1;
        Ok(())
    }

    fn sort_buf(&mut self) {
        if self.wide {
            let mut pairs: Vec<Entry> =
                self.buf.chunks_exact(2).map(|c| (c[0] as u32, c[1])).collect();
            pairs.sort_unstable();
            self.buf.clear();
            pairs.iter().for_each(|(h, id)| self.buf.extend([u64::from(*h), *id]));
        } else {
            self.buf.sort_unstable();
        }
    }

    /// Sorts the run buffer and appends it to the scratch file as a run.
    fn spill(&mut self) -> Result<()> {
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.buf.capacity() as u64 * 8);
        self.sort_buf();
        if self.scratch.is_none() {
            self.scratch = Some(open_scratch(self.dir.as_deref())?);
        }
        let Some(file) = &self.scratch else { return Ok(()) };
        // Through a small stack buffer: the run buffer is the sort's only large allocation.
        let mut bytes = [0u8; 4096];
        for (i, chunk) in self.buf.chunks(bytes.len() / 8).enumerate() {
            for (w, b) in chunk.iter().zip(bytes.chunks_exact_mut(8)) {
                b.copy_from_slice(&w.to_le_bytes());
            }
            let at = (self.written + (i * bytes.len() / 8) as u64) * 8;
            file.write_all_at(&bytes[..chunk.len() * 8], at).map_err(scratch_err)?;
        }
        self.runs.push((self.written, self.buf.len() as u64));
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Merges every entry in hash order into `sink`; returns what the sort cost.
    pub(crate) fn finish(
        mut self,
        sink: &mut dyn FnMut(u32, u64) -> Result<()>,
    ) -> Result<SortStats> {
        let step = if self.wide { 2 } else { 1 };
        if self.runs.is_empty() {
            self.stats.peak_bytes = self.stats.peak_bytes.max(self.buf.capacity() as u64 * 8);
            self.sort_buf();
            for c in self.buf.chunks_exact(step) {
                let (h, id) = self.decode(c);
                sink(h, id)?;
            }
            return Ok(self.stats);
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        self.buf = Vec::new();
        let Some(file) = self.scratch.take() else { return Ok(self.stats) };
        self.stats.runs = self.runs.len() as u64;
        // Each merge reads its runs through windows of at least `MIN_WINDOW` entries that
        // together fit the run buffer; more runs than that are first merged in groups into
        // longer runs at the end of the scratch file (one window kept for the output).
        let least = MIN_WINDOW * step;
        let fan = (self.cap / least).saturating_sub(1).max(2);
        let mut runs = std::mem::take(&mut self.runs);
        while runs.len() > fan + 1 {
            let group: Vec<(u64, u64)> = runs.drain(..fan).collect();
            let words: u64 = group.iter().map(|r| r.1).sum();
            let mut out = RunWriter { at: self.written, buf: Vec::with_capacity(least * 8) };
            self.stats.peak_bytes = self.stats.peak_bytes.max(((fan + 1) * least * 8) as u64);
            merge(&file, &group, least, self.wide, &mut |h, id| out.push(&file, h, id, self.wide))?;
            out.flush(&file)?;
            runs.push((self.written, words));
            self.written += words;
        }
        let window = (self.cap / runs.len() / step).max(MIN_WINDOW) * step;
        self.stats.peak_bytes = self.stats.peak_bytes.max((window * runs.len() * 8) as u64);
        merge(&file, &runs, window, self.wide, sink)?;
        Ok(self.stats)
    }

    fn decode(&self, c: &[u64]) -> Entry {
        if self.wide {
            (c[0] as u32, c[1])
        } else {
            ((c[0] >> 32) as u32, c[0] & 0xffff_ffff)
        }
    }

    /// Sorts everything into an index array of the layout [`BaseIndex::build`] gives.
    fn into_index(self) -> Result<(BaseIndex, SortStats)> {
        let wide = self.wide;
        let n = self.stats.entries as usize;
        let mut packed: Vec<u64> = Vec::with_capacity(if wide { 0 } else { n });
        let mut pairs: Vec<Entry> = Vec::with_capacity(if wide { n } else { 0 });
        let stats = self.finish(&mut |h, id| {
            if wide {
                pairs.push((h, id));
            } else {
                packed.push(u64::from(h) << 32 | id);
            }
            Ok(())
        })?;
        let ix = if wide {
            BaseIndex::Wide(pairs.into_boxed_slice())
        } else {
            BaseIndex::Packed(packed.into_boxed_slice())
        };
        Ok((ix, stats))
    }
}

/// Merges `runs` of the scratch file into `sink` in order, reading `window` words at a time.
fn merge(
    file: &File,
    runs: &[(u64, u64)],
    window: usize,
    wide: bool,
    sink: &mut dyn FnMut(u32, u64) -> Result<()>,
) -> Result<()> {
    let mut readers: Vec<RunReader> = runs
        .iter()
        .map(|&(from, n)| RunReader { next: from, end: from + n, buf: Vec::new(), at: 0 })
        .collect();
    let mut heap = BinaryHeap::with_capacity(readers.len());
    for (i, r) in readers.iter_mut().enumerate() {
        if let Some(e) = r.next_entry(file, window, wide)? {
            heap.push(Reverse((e, i)));
        }
    }
    while let Some(Reverse(((h, id), i))) = heap.pop() {
        sink(h, id)?;
        if let Some(e) = readers[i].next_entry(file, window, wide)? {
            heap.push(Reverse((e, i)));
        }
    }
    Ok(())
}

/// Appends a merged run to the scratch file through a buffer of fixed capacity.
struct RunWriter {
    /// The word the buffer starts at.
    at: u64,
    buf: Vec<u8>,
}

impl RunWriter {
    fn push(&mut self, file: &File, h: u32, id: u64, wide: bool) -> Result<()> {
        if wide {
            self.buf.extend_from_slice(&u64::from(h).to_le_bytes());
            self.buf.extend_from_slice(&id.to_le_bytes());
        } else {
            self.buf.extend_from_slice(&(u64::from(h) << 32 | id).to_le_bytes());
        }
        if self.buf.len() + 16 > self.buf.capacity() {
            self.flush(file)?;
        }
        Ok(())
    }

    fn flush(&mut self, file: &File) -> Result<()> {
        file.write_all_at(&self.buf, self.at * 8).map_err(scratch_err)?;
        self.at += self.buf.len() as u64 / 8;
        self.buf.clear();
        Ok(())
    }
}

/// A window over one spilled run.
struct RunReader {
    /// The next word of the run not yet in `buf`, and the run's end (in words).
    next: u64,
    end: u64,
    /// Bytes of the window, and the next word's index in it.
    buf: Vec<u8>,
    at: usize,
}

impl RunReader {
    fn next_entry(&mut self, file: &File, window: usize, wide: bool) -> Result<Option<Entry>> {
        if self.at * 8 == self.buf.len() {
            let n = (self.end - self.next).min(window as u64) as usize;
            if n == 0 {
                return Ok(None);
            }
            self.buf.resize(n * 8, 0);
            file.read_exact_at(&mut self.buf, self.next * 8).map_err(scratch_err)?;
            self.next += n as u64;
            self.at = 0;
        }
        let e = if wide {
            let e = (self.word(self.at) as u32, self.word(self.at + 1));
            self.at += 2;
            e
        } else {
            let w = self.word(self.at);
            self.at += 1;
            ((w >> 32) as u32, w & 0xffff_ffff)
        };
        Ok(Some(e))
    }

    fn word(&self, i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.buf[i * 8..i * 8 + 8]);
        u64::from_le_bytes(w)
    }
}

/// A new scratch file in `dir` (or the temporary directory), unlinked at once.
fn open_scratch(dir: Option<&Path>) -> Result<File> {
    let dir = dir.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    let seq = SCRATCH_SEQ.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("index-run-{}-{seq}.tmp", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(scratch_err)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

fn scratch_err(e: std::io::Error) -> Error {
    Error::new(Status::Io, format!("cannot write the index population's scratch file: {e}"))
}

/// The index of one base's rows of one target, built by a [`HashSorter`]: seeks read it
/// beside the delta index until a base indexes the target itself. Held in memory, or (a
/// file-backed store) in a part file read through the buffer pool (`part_file.rs`).
pub(crate) struct IndexPart {
    index: BaseIndex,
    pub stats: SortStats,
    /// The part file it reads, if paged.
    file: Option<String>,
}

impl IndexPart {
    /// A part held in memory.
    pub(crate) fn new(sorter: HashSorter) -> Result<IndexPart> {
        let (index, stats) = sorter.into_index()?;
        Ok(IndexPart { index, stats, file: None })
    }

    pub(super) fn from_index(index: BaseIndex, stats: SortStats, file: Option<String>) -> Self {
        IndexPart { index, stats, file }
    }

    /// Appends the ids whose key may equal `k` (hash matches: a superset). `false` if a page
    /// of a paged part could not be read (logged): the caller must then take every base row
    /// of the target's label as a candidate.
    #[must_use]
    pub(crate) fn lookup(&self, k: &IndexKey, out: &mut Vec<u64>) -> bool {
        match self.index.lookup(key_hash(k), out) {
            Ok(()) => true,
            Err(e) => {
                tracing::error!("index part lookup failed, scanning instead: {}", e.message);
                false
            }
        }
    }

    /// Bytes it holds in memory (0 when paged: its pages are the pool's).
    pub(crate) fn bytes(&self) -> usize {
        self.index.bytes()
    }

    /// The part file it reads, if paged.
    #[cfg(test)]
    pub(crate) fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
}

impl Drop for IndexPart {
    /// A paged part's cached pages go with it (the file stays until a checkpoint or an open
    /// removes it: a replay may still name it).
    fn drop(&mut self) {
        if let BaseIndex::Paged(p) = &self.index {
            p.seg.forget(&p.pool);
        }
        if let Some(f) = &self.file {
            tracing::debug!("index part file {f} detached");
        }
    }
}
