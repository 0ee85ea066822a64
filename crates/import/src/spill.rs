//! The relationships an import holds between reading and linking, within its memory budget.
//!
//! [`RelBuffer`] keeps `(start, end, type)` triples and their encoded properties in input order.
//! Whenever the buffer reaches its share of `--max-off-heap-memory`, it is handed to a spill
//! thread, which orders it by start node (stable, see [`RunOrder`]) and appends it to a work
//! file as one *run* of records coded compactly ([`put_record`]: varints of the start's step from the previous
//! record's, of the end's zigzag step from the previous end, of the type and of the properties'
//! length, then the properties: ~6 bytes a relationship without properties at B2B, against 13
//! for the fixed-width triple). Linking then
//! merges the runs with a heap (ties go to the earlier run, so the relationships of one node
//! keep their input order), which gives each relationship its id in start-node order, exactly
//! what the in-memory path's counting sort gives. When nothing was spilled, linking sorts the
//! buffer in memory (a stable counting sort by start node: one `u32` per node, scattered a
//! window of start nodes at a time into a buffer of about an eighth of the relationships).
//!
//! The reading goes on while a run is written: the spill thread takes the full buffer and the
//! reader fills a new one (one run in flight; the next spill waits for it). So that both fit
//! the share, each buffer may hold half of it.
//!
//! Memory: a buffer counts 20 bytes per relationship (the triple and, while its run is ordered,
//! 8 bytes of sort key or of position and count) plus its properties and 8 bytes of property
//! offset when any group has properties; the merge holds one read block per run, together at
//! most the share.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use arbor_model::{Error, Status};
use arbor_storage::bulk::{self, CheckpointWriter};

use crate::progress::Stage;
use crate::{arg_err, io_err};

/// Bytes the buffer counts per relationship (triple + sort key).
pub(crate) const BYTES_PER_REL: usize = 20;

/// The in-memory link scatters at most about `1 / WINDOW_SHARE` of the relationships at a
/// time (each window reads the whole buffer once).
const WINDOW_SHARE: usize = 8;
/// ... but windows of at least this many relationships (small imports take one pass; the
/// crate's tests use small windows so that their imports take several).
const MIN_WINDOW: usize = if cfg!(test) { 1000 } else { 1 << 20 };

/// One sorted run in the work file.
#[derive(Clone, Copy, Debug)]
struct Run {
    offset: u64,
    bytes: u64,
    count: u64,
}

/// Relationships between reading and linking (see the module doc).
pub(crate) struct RelBuffer {
    triples: Vec<[u32; 3]>,
    props: Vec<u8>,
    /// End offset in `props` per buffered relationship, once any group has properties.
    prop_ends: Option<Vec<u64>>,
    /// Bytes the buffer may hold before it is spilled as a run: half of `share`.
    cap: usize,
    /// The memory share of the relationships: two buffers while reading, the merge's blocks.
    share: usize,
    path: PathBuf,
    /// The work file, while no spill thread holds it.
    file: Option<BufWriter<File>>,
    /// The run being ordered and written on the spill thread: it gives the file back.
    pending: Option<JoinHandle<Written>>,
    written: u64,
    runs: Vec<Run>,
    spilled: u64,
}

/// What the spill thread gives back: the work file and the run it appended.
type Written = Result<(BufWriter<File>, Run), Error>;

/// A full buffer on its way to the work file.
struct Batch {
    triples: Vec<[u32; 3]>,
    props: Vec<u8>,
    prop_ends: Option<Vec<u64>>,
}

/// The properties of relationship `i` of a buffer: `props` sliced by the end offsets.
fn props_at<'a>(props: &'a [u8], ends: Option<&[u64]>, i: usize) -> &'a [u8] {
    match ends {
        Some(e) => {
            let a = if i == 0 { 0 } else { e[i - 1] as usize };
            &props[a..e[i] as usize]
        }
        None => &[],
    }
}

/// The order a run is written in: by start node, and by position among equal starts (what a
/// sort of `start << 32 | position` gives). Imports usually come grouped by start node, or with
/// few distinct ones per run (B2B's `WORKS_FOR` by individual, `TOUCHED` from 254 activities), so
/// the general sort is the last resort:
enum RunOrder {
    /// Starts never decrease in input order: the input order.
    Input,
    /// Starts within a span no larger than the run (or 65,536): positions by a counting sort.
    Counted(Vec<u32>),
    /// Otherwise the sorted keys, each `start << 32 | position`.
    Keys(Vec<u64>),
}

impl RunOrder {
    fn of(triples: &[[u32; 3]]) -> RunOrder {
        if triples.windows(2).all(|w| w[0][0] <= w[1][0]) {
            return RunOrder::Input;
        }
        let lo = triples.iter().map(|t| t[0]).min().unwrap_or(0);
        let hi = triples.iter().map(|t| t[0]).max().unwrap_or(0);
        let span = (hi - lo) as usize + 1;
        if span <= triples.len().max(1 << 16) {
            // Slot `s - lo` holds where start `s`'s positions begin, then the next free one.
            let mut at = vec![0u32; span + 1];
            for t in triples {
                at[(t[0] - lo) as usize + 1] += 1;
            }
            for i in 0..span {
                at[i + 1] += at[i];
            }
            let mut order = vec![0u32; triples.len()];
            for (i, t) in triples.iter().enumerate() {
                let c = &mut at[(t[0] - lo) as usize];
                order[*c as usize] = i as u32;
                *c += 1;
            }
            return RunOrder::Counted(order);
        }
        let mut keys: Vec<u64> =
            triples.iter().enumerate().map(|(i, t)| (u64::from(t[0]) << 32) | i as u64).collect();
        keys.sort_unstable();
        RunOrder::Keys(keys)
    }

    /// The positions in run order.
    fn positions(&self, n: usize) -> Box<dyn Iterator<Item = usize> + '_> {
        match self {
            RunOrder::Input => Box::new(0..n),
            RunOrder::Counted(o) => Box::new(o.iter().map(|&i| i as usize)),
            RunOrder::Keys(k) => Box::new(k.iter().map(|k| (k & 0xffff_ffff) as usize)),
        }
    }
}

/// Orders a full buffer by start node and appends it to the work file at `offset` (where the
/// previous run ended) as one run; gives the file back with the run.
fn write_run(b: Batch, mut file: BufWriter<File>, offset: u64, path: &Path) -> Written {
    let order = RunOrder::of(&b.triples);
    let mut block: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut prev = [0u32; 3];
    let mut bytes = 0u64;
    for i in order.positions(b.triples.len()) {
        put_record(
            &mut block,
            &mut prev,
            b.triples[i],
            props_at(&b.props, b.prop_ends.as_deref(), i),
        );
        if block.len() >= 1 << 16 {
            file.write_all(&block).map_err(|e| io_err("cannot write", path, e))?;
            bytes += block.len() as u64;
            block.clear();
        }
    }
    file.write_all(&block).map_err(|e| io_err("cannot write", path, e))?;
    bytes += block.len() as u64;
    Ok((file, Run { offset, bytes, count: b.triples.len() as u64 }))
}

impl RelBuffer {
    pub(crate) fn new(path: PathBuf, cap: usize) -> RelBuffer {
        RelBuffer {
            triples: Vec::new(),
            props: Vec::new(),
            prop_ends: None,
            cap: (cap / 2).max(1),
            share: cap.max(1),
            path,
            file: None,
            pending: None,
            written: 0,
            runs: Vec::new(),
            spilled: 0,
        }
    }

    /// Relationships added so far.
    pub(crate) fn count(&self) -> u64 {
        self.spilled + self.triples.len() as u64
    }

    /// Relationships written to runs on disk.
    pub(crate) fn spilled(&self) -> u64 {
        self.spilled
    }

    fn bytes(&self) -> usize {
        self.triples.len() * BYTES_PER_REL
            + self.props.len()
            + self.prop_ends.as_ref().map_or(0, |e| e.len() * 8)
    }

    /// Adds a parsed chunk: triples and, when its header has properties, their encodings
    /// back to back with one end offset per relationship.
    pub(crate) fn push(
        &mut self,
        rels: &[(u32, u32, u32)],
        props: &[u8],
        prop_ends: &[u32],
    ) -> Result<(), Error> {
        if self.count() + rels.len() as u64 > u64::from(u32::MAX) {
            return Err(arg_err("more than 4,294,967,295 relationships in one import"));
        }
        if !prop_ends.is_empty() && self.prop_ends.is_none() {
            self.prop_ends = Some(vec![0; self.triples.len()]);
        }
        self.triples.extend(rels.iter().map(|&(s, e, t)| [s, e, t]));
        if let Some(ends) = self.prop_ends.as_mut() {
            let base = self.props.len() as u64;
            if prop_ends.is_empty() {
                ends.extend(std::iter::repeat_n(base, rels.len()));
            } else {
                self.props.extend_from_slice(props);
                ends.extend(prop_ends.iter().map(|e| base + u64::from(*e)));
            }
        }
        if self.bytes() >= self.cap {
            self.spill()?;
        }
        Ok(())
    }

    fn props_of(&self, i: usize) -> &[u8] {
        props_at(&self.props, self.prop_ends.as_deref(), i)
    }

    /// Hands the buffer to the spill thread as one run (after the run in flight, if any, is
    /// written) and empties it.
    fn spill(&mut self) -> Result<(), Error> {
        if self.triples.is_empty() {
            return Ok(());
        }
        self.finish_pending()?;
        let file = match self.file.take() {
            Some(f) => f,
            None => {
                let f =
                    File::create(&self.path).map_err(|e| io_err("cannot create", &self.path, e))?;
                BufWriter::with_capacity(4 << 20, f)
            }
        };
        let batch = Batch {
            triples: std::mem::take(&mut self.triples),
            props: std::mem::take(&mut self.props),
            prop_ends: self.prop_ends.as_mut().map(std::mem::take),
        };
        self.spilled += batch.triples.len() as u64;
        let (offset, path) = (self.written, self.path.clone());
        let spawned = std::thread::Builder::new()
            .name("arbor-import-spill".into())
            .spawn(move || write_run(batch, file, offset, &path))
            .map_err(|e| Error::new(Status::Io, format!("cannot start a spill thread: {e}")))?;
        self.pending = Some(spawned);
        Ok(())
    }

    /// Waits for the run in flight: its file comes back and the run is recorded.
    fn finish_pending(&mut self) -> Result<(), Error> {
        let Some(h) = self.pending.take() else { return Ok(()) };
        let (file, run) = h.join().map_err(|_| {
            Error::new(Status::Internal, "the relationship spill thread panicked")
        })??;
        self.written = run.offset + run.bytes;
        self.runs.push(run);
        self.file = Some(file);
        Ok(())
    }

    /// Writes every relationship to `w` in start-node order (ids in that order) and removes
    /// the work file. Returns how many runs were merged (1 when everything fit in memory).
    pub(crate) fn link(
        mut self,
        node_count: u64,
        w: &mut CheckpointWriter,
        stage: &mut Stage,
    ) -> Result<u32, Error> {
        if self.spilled == 0 {
            self.link_in_memory(node_count, w, stage)?;
            return Ok(1);
        }
        self.spill()?;
        self.finish_pending()?;
        if let Some(mut f) = self.file.take() {
            f.flush().map_err(|e| io_err("cannot write", &self.path, e))?;
        }
        let r = self.merge(w, stage);
        let _ = std::fs::remove_file(&self.path);
        r?;
        Ok(self.runs.len() as u32)
    }

    /// The counting sort of the in-memory path, by windows of start nodes: each window's
    /// triples are scattered to their place in a buffer of about [`WINDOW_SHARE`] of the
    /// relationships (sequential reads of the whole buffer per window, random writes within
    /// the window), then written. The same order as one scatter into a full sorted copy, whose
    /// 12 bytes per relationship were the largest part of this stage's peak.
    fn link_in_memory(
        mut self,
        node_count: u64,
        w: &mut CheckpointWriter,
        stage: &mut Stage,
    ) -> Result<(), Error> {
        let n = node_count as usize;
        let mut cursor: Vec<u32> = vec![0; n + 1];
        for t in &self.triples {
            cursor[t[0] as usize + 1] += 1;
        }
        for i in 0..n {
            cursor[i + 1] += cursor[i];
        }
        let len = self.triples.len();
        let target = (len / WINDOW_SHARE).max(MIN_WINDOW);
        let mut sorted: Vec<[u32; 3]> = Vec::new();
        let mut order: Vec<u32> = Vec::new();
        let mut n0 = 0usize;
        let mut j = 0usize;
        while n0 < n {
            // The window [n0, n1): whole nodes, about `target` relationships (at least one node).
            let first = cursor[n0] as usize;
            let mut n1 = n0 + 1;
            while n1 < n && (cursor[n1 + 1] as usize) - first <= target {
                n1 += 1;
            }
            let size = cursor[n1] as usize - first;
            sorted.clear();
            sorted.resize(size, [0; 3]);
            order.clear();
            if self.prop_ends.is_some() {
                order.resize(size, 0);
            }
            for (i, t) in self.triples.iter().enumerate() {
                let s = t[0] as usize;
                if s < n0 || s >= n1 {
                    continue;
                }
                let c = &mut cursor[s];
                let at = *c as usize - first;
                sorted[at] = *t;
                if let Some(o) = order.get_mut(at) {
                    *o = i as u32;
                }
                *c += 1;
            }
            if n1 == n {
                // The last window: the unsorted triples are no longer needed.
                self.triples = Vec::new();
            }
            for (k, r) in sorted.iter().enumerate() {
                let props = match order.get(k) {
                    Some(&i) => self.props_of(i as usize),
                    None => &[],
                };
                let props = if props.is_empty() { bulk::NO_PROPS } else { props };
                w.rel_raw(j as u64, u64::from(r[0]), u64::from(r[1]), r[2], props)?;
                if j % 65536 == 65535 {
                    stage.advance(65536);
                }
                j += 1;
            }
            n0 = n1;
        }
        Ok(())
    }

    /// Merges the runs by start node, earlier runs first among equals.
    fn merge(&self, w: &mut CheckpointWriter, stage: &mut Stage) -> Result<(), Error> {
        let file = File::open(&self.path).map_err(|e| io_err("cannot read", &self.path, e))?;
        let block = (self.share / self.runs.len()).clamp(64 << 10, 8 << 20);
        let mut readers: Vec<RunReader> =
            self.runs.iter().map(|r| RunReader::new(*r, block)).collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (i, r) in readers.iter_mut().enumerate() {
            if r.next(&file, self)? {
                heap.push(Reverse((r.head[0], i as u32)));
            }
        }
        let mut id = 0u64;
        while let Some(Reverse((_, i))) = heap.pop() {
            let r = &mut readers[i as usize];
            let [s, e, t] = r.head;
            let props = if r.props.1 == 0 { bulk::NO_PROPS } else { r.props_bytes() };
            w.rel_raw(id, u64::from(s), u64::from(e), t, props)?;
            id += 1;
            if id.is_multiple_of(65536) {
                stage.advance(65536);
            }
            if r.next(&file, self)? {
                heap.push(Reverse((r.head[0], i)));
            }
        }
        if id != self.spilled {
            return Err(Error::new(
                Status::Io,
                format!(
                    "{}: the work file holds {id} relationships, {} were written to it",
                    self.path.display(),
                    self.spilled
                ),
            ));
        }
        Ok(())
    }
}

impl Drop for RelBuffer {
    /// A run still in flight (an import stopped by an error) is waited for, so that no thread
    /// writes to the work file after the import returned.
    fn drop(&mut self) {
        if let Some(h) = self.pending.take() {
            let _ = h.join();
        }
    }
}

/// Reads one run of the work file in blocks (`pread`: all runs share one file handle).
struct RunReader {
    run: Run,
    /// Bytes of the run consumed into `buf`.
    read: u64,
    buf: Vec<u8>,
    at: usize,
    block: usize,
    left: u64,
    head: [u32; 3],
    /// The head's properties: (offset in `buf`, length).
    props: (usize, usize),
}

/// Most bytes a record takes before its properties: four varints of at most 5 bytes.
const RECORD_HEAD_MAX: usize = 20;

/// Appends one run record after `prev` (the run's previous triple, updated): varints of
/// `start - prev start` (runs are sorted by start), of the zigzag step from the previous end,
/// of the type and of the properties' length, then the properties.
fn put_record(buf: &mut Vec<u8>, prev: &mut [u32; 3], t: [u32; 3], props: &[u8]) {
    put_var(buf, u64::from(t[0] - prev[0]));
    let step = i64::from(t[1]) - i64::from(prev[1]);
    put_var(buf, ((step << 1) ^ (step >> 63)) as u64);
    put_var(buf, u64::from(t[2]));
    put_var(buf, props.len() as u64);
    buf.extend_from_slice(props);
    *prev = t;
}

/// Decodes a record head [`put_record`] wrote after `prev`: the triple, the properties' length
/// and the bytes used; `None` when `b` is short or the values do not fit.
fn decode_record(b: &[u8], prev: &[u32; 3]) -> Option<([u32; 3], usize, usize)> {
    let mut at = 0;
    let mut next = || -> Option<u64> {
        let (v, n) = decode_var(b.get(at..)?)?;
        at += n;
        Some(v)
    };
    let start = u64::from(prev[0]).checked_add(next()?)?;
    let z = next()?;
    let step = (z >> 1) as i64 ^ -((z & 1) as i64);
    let end = i64::from(prev[1]).checked_add(step)?;
    let (ty, len) = (next()?, next()?);
    let t = [u32::try_from(start).ok()?, u32::try_from(end).ok()?, u32::try_from(ty).ok()?];
    Some((t, usize::try_from(len).ok()?, at))
}

impl RunReader {
    fn new(run: Run, block: usize) -> RunReader {
        RunReader {
            run,
            read: 0,
            buf: Vec::new(),
            at: 0,
            block,
            left: run.count,
            head: [0; 3],
            props: (0, 0),
        }
    }

    fn props_bytes(&self) -> &[u8] {
        &self.buf[self.props.0..self.props.0 + self.props.1]
    }

    /// Makes at least `n` unread bytes available; false at the end of the run.
    fn ensure(&mut self, n: usize, file: &File, owner: &RelBuffer) -> Result<bool, Error> {
        if self.buf.len() - self.at >= n {
            return Ok(true);
        }
        self.buf.drain(..self.at);
        self.at = 0;
        while self.buf.len() < n {
            let want = (self.run.bytes - self.read).min(self.block.max(n) as u64) as usize;
            if want == 0 {
                return Ok(false);
            }
            let old = self.buf.len();
            self.buf.resize(old + want, 0);
            file.read_exact_at(&mut self.buf[old..], self.run.offset + self.read)
                .map_err(|e| io_err("cannot read", &owner.path, e))?;
            self.read += want as u64;
        }
        Ok(true)
    }

    /// Reads the next record into `head`/`props`; false at the end of the run.
    fn next(&mut self, file: &File, owner: &RelBuffer) -> Result<bool, Error> {
        if self.left == 0 {
            return Ok(false);
        }
        let truncated = || Error::new(Status::Io, format!("{} is truncated", owner.path.display()));
        // A record is at least 4 bytes, its head at most RECORD_HEAD_MAX.
        let avail = (self.run.bytes - self.read) as usize + self.buf.len() - self.at;
        if !self.ensure(avail.min(RECORD_HEAD_MAX), file, owner)? || avail < 4 {
            return Err(truncated());
        }
        let Some((head, len, used)) = decode_record(&self.buf[self.at..], &self.head) else {
            return Err(truncated());
        };
        self.head = head;
        self.at += used;
        if !self.ensure(len, file, owner)? {
            return Err(truncated());
        }
        self.props = (self.at, len);
        self.at += len;
        self.left -= 1;
        Ok(true)
    }
}

pub(crate) fn put_var(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Decodes a LEB128 varint at the start of `b`: `(value, bytes used)`, `None` if incomplete.
pub(crate) fn decode_var(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way of ordering a run gives what sorting `start << 32 | position` gives: starts
    /// already in order, few distinct starts, a dense span, a sparse span (the general sort).
    #[test]
    fn run_order_is_the_stable_sort_by_start() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let cases: Vec<Vec<[u32; 3]>> = vec![
            vec![],
            vec![[7, 1, 0]],
            (0..500).map(|i| [i / 3, i, 0]).collect(),
            (0..5000).map(|i| [(rand(254) as u32) + 3, i, 1]).collect(),
            (0..5000).map(|i| [rand(4000) as u32, i, 2]).collect(),
            (0..5000).map(|i| [(rand(1 << 31) as u32) | 1, i, 3]).collect(),
            (0..5000).map(|i| [if i % 2 == 0 { 0 } else { u32::MAX }, i, 4]).collect(),
        ];
        let mut kinds = Vec::new();
        for triples in &cases {
            let mut want: Vec<u64> = triples
                .iter()
                .enumerate()
                .map(|(i, t)| (u64::from(t[0]) << 32) | i as u64)
                .collect();
            want.sort_unstable();
            let want: Vec<usize> = want.iter().map(|k| (k & 0xffff_ffff) as usize).collect();
            let order = RunOrder::of(triples);
            kinds.push(match order {
                RunOrder::Input => 'i',
                RunOrder::Counted(_) => 'c',
                RunOrder::Keys(_) => 'k',
            });
            assert_eq!(order.positions(triples.len()).collect::<Vec<_>>(), want);
        }
        assert_eq!(kinds.iter().collect::<String>(), "iiicckk");
    }

    /// Run records decode to what was written, at the extremes of every field: starts that
    /// stay or jump to `u32::MAX`, ends that step across the whole range both ways, long
    /// property lists; a cut record is `None`, not a wrong triple.
    #[test]
    fn records_round_trip_at_the_extremes() {
        let m = u32::MAX;
        let triples =
            [[0, 0, 0], [0, m, 1], [0, 0, m], [5, m - 1, 2], [5, 1, 0], [m, m, m], [m, 0, 7]];
        let props: Vec<Vec<u8>> = (0..triples.len()).map(|i| vec![i as u8; i * 40]).collect();
        let (mut buf, mut prev) = (Vec::new(), [0u32; 3]);
        for (t, p) in triples.iter().zip(&props) {
            put_record(&mut buf, &mut prev, *t, p);
        }
        let (mut at, mut prev) = (0, [0u32; 3]);
        for (t, p) in triples.iter().zip(&props) {
            let (got, len, used) = decode_record(&buf[at..], &prev).expect("a record");
            assert_eq!((got, len), (*t, p.len()));
            assert!(used <= RECORD_HEAD_MAX);
            assert_eq!(&buf[at + used..at + used + len], &p[..]);
            at += used + len;
            prev = got;
        }
        assert_eq!(at, buf.len());
        let mut one = Vec::new();
        put_record(&mut one, &mut [0; 3], [m, m, m], &[]);
        for cut in 0..one.len() - 1 {
            assert!(decode_record(&one[..cut], &[0; 3]).is_none(), "cut at {cut}");
        }
    }
}
