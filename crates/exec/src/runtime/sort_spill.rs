//! ORDER BY without LIMIT past the query memory: an external merge sort.
//!
//! `Sort` buffers `(keys, row)` pairs; every [`CHECK`] rows it asks whether the buffer's next
//! rows still fit what the transaction may allocate ([`crate::memory::headroom`]). When they
//! would not, the buffer is sorted (stably) and written to a scratch file as a run (keys and
//! row values in the byte form of `spill_codec`) and emptied. At the end of the input the rest
//! is one more run, and the runs are merged while rows are handed up: a heap of the runs' head
//! rows ordered by keys, then by run number (runs are consecutive pieces of the input, so ties
//! keep input order, as the in-memory stable sort). More than [`MAX_FANIN`] runs are first
//! merged in groups of consecutive runs into longer ones, so the merge holds a bounded number
//! of read buffers. A graph without scratch files (an in-memory database) keeps everything in
//! memory and fails at the limit, as before; so does a row holding a value without a byte form.

use std::fs::File;

use arbor_model::{Result, Value};

use super::spill_codec::Reader;
use super::spill_file::{read_part, unspillable, Record, RunReader, RunWriter, BUFFER};
use crate::ctx::{Ctx, Row};
use crate::eval::order_keys;
use crate::graph::Graph;
use crate::memory;

/// The buffer asks whether it still fits every this many rows.
pub(super) const CHECK: usize = 1024;

/// Runs merged at once (each holds a read buffer and a head row).
const MAX_FANIN: usize = if cfg!(test) { 4 } else { 64 };

/// A buffered row: its sort keys and the row.
pub(super) type Keyed = (Vec<Value>, Row);

/// The runs written so far and what decides when to write one.
#[derive(Default)]
pub(super) struct SortSpill {
    runs: Vec<RunReader>,
    rec: Record,
    /// The transaction's memory in use when the first row was buffered.
    base_used: Option<u64>,
    /// No scratch file could be had: the buffer grows until the memory limit fails the query.
    no_spill: bool,
}

impl SortSpill {
    /// Notes the memory in use before the first row is buffered.
    pub(super) fn start(&mut self) {
        if self.base_used.is_none() {
            self.base_used = Some(memory::in_use().unwrap_or(0));
        }
    }

    /// A file for a run when `n` buffered rows and the next [`CHECK`] would not fit the memory
    /// left; `None` while they fit (or when there are no scratch files).
    pub(super) fn run_file(&mut self, n: usize, g: &mut dyn Graph) -> Option<File> {
        if self.no_spill {
            return None;
        }
        let (room, now) = (memory::headroom()?, memory::in_use()?);
        let held = now.saturating_sub(self.base_used.unwrap_or(0));
        let per_row = held / n.max(1) as u64;
        // The stable sort's scratch (half the buffer's pairs), the next rows, the run's buffer.
        let sort_scratch = (n * std::mem::size_of::<Keyed>() / 2) as u64;
        let need = held + per_row * CHECK as u64 + sort_scratch + 2 * BUFFER as u64;
        if room > need {
            return None;
        }
        let f = g.scratch_file();
        if f.is_none() {
            self.no_spill = true;
        }
        f
    }

    /// Writes the (sorted) buffer as a run and empties it.
    pub(super) fn write_run(&mut self, rows: &mut Vec<Keyed>, f: File) -> Result<()> {
        let mut w = RunWriter::new(f);
        for (k, r) in rows.drain(..) {
            self.rec.clear();
            if !self.rec.part(&k) || !self.rec.part(&r) {
                return Err(unspillable("sort"));
            }
            w.write(&mut self.rec)?;
        }
        tracing::debug!(runs = self.runs.len() + 1, rows = w.records(), "sort: run written");
        self.runs.push(w.finish()?);
        Ok(())
    }

    /// Whether a run was written.
    pub(super) fn spilled(&self) -> bool {
        !self.runs.is_empty()
    }

    /// The merge of all runs (the last buffer written as one more, into a scratch file from
    /// `g`).
    pub(super) fn merge(
        mut self,
        mut rest: Vec<Keyed>,
        desc: Vec<bool>,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<Merge> {
        if !rest.is_empty() {
            let f = g.scratch_file().ok_or_else(|| unspillable("sort"))?;
            self.write_run(&mut rest, f)?;
        }
        drop(rest);
        let mut runs = self.runs;
        while runs.len() > MAX_FANIN {
            let mut longer = Vec::with_capacity(runs.len().div_ceil(MAX_FANIN));
            let mut it = runs.into_iter();
            loop {
                let group: Vec<RunReader> = it.by_ref().take(MAX_FANIN).collect();
                if group.is_empty() {
                    break;
                }
                let mut m = Merge::new(group, desc.clone())?;
                let f = g.scratch_file().ok_or_else(|| unspillable("sort"))?;
                let mut w = RunWriter::new(f);
                while let Some((k, r)) = m.next()? {
                    ctx.tick()?;
                    self.rec.clear();
                    if !self.rec.part(&k) || !self.rec.part(&r) {
                        return Err(unspillable("sort"));
                    }
                    w.write(&mut self.rec)?;
                }
                longer.push(w.finish()?);
            }
            runs = longer;
        }
        Merge::new(runs, desc)
    }
}

/// The k-way merge of sorted runs (see the module doc).
pub(super) struct Merge {
    runs: Vec<RunReader>,
    /// Each run's next row, `None` once it is done.
    heads: Vec<Option<Keyed>>,
    /// A binary min-heap of the runs with a head.
    heap: Vec<usize>,
    desc: Vec<bool>,
    buf: Vec<u8>,
}

impl Merge {
    fn new(runs: Vec<RunReader>, desc: Vec<bool>) -> Result<Merge> {
        let n = runs.len();
        let mut m =
            Merge { runs, heads: Vec::with_capacity(n), heap: Vec::new(), desc, buf: Vec::new() };
        for i in 0..n {
            let h = m.read(i)?;
            m.heads.push(h);
        }
        m.heap = (0..n).filter(|i| m.heads[*i].is_some()).collect();
        for i in (0..m.heap.len() / 2).rev() {
            m.sift_down(i);
        }
        Ok(m)
    }

    /// Run `i`'s next row.
    fn read(&mut self, i: usize) -> Result<Option<Keyed>> {
        let Some(run) = self.runs.get_mut(i) else { return Ok(None) };
        if !run.next_into(&mut self.buf)? {
            return Ok(None);
        }
        let mut rd = Reader::new(&self.buf);
        let (mut k, mut r) = (Vec::new(), Vec::new());
        read_part(&mut rd, &mut k)?;
        read_part(&mut rd, &mut r)?;
        Ok(Some((k, r)))
    }

    /// Whether run `a`'s head comes before run `b`'s: by keys, then the earlier run.
    fn before(&self, a: usize, b: usize) -> bool {
        match (&self.heads[a], &self.heads[b]) {
            (Some(x), Some(y)) => order_keys(&x.0, &y.0, &self.desc).then(a.cmp(&b)).is_lt(),
            (x, _) => x.is_some(),
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < self.heap.len() && self.before(self.heap[l], self.heap[m]) {
                m = l;
            }
            if r < self.heap.len() && self.before(self.heap[r], self.heap[m]) {
                m = r;
            }
            if m == i {
                return;
            }
            self.heap.swap(i, m);
            i = m;
        }
    }

    /// The next row in order, `None` after the last.
    pub(super) fn next(&mut self) -> Result<Option<Keyed>> {
        let Some(&top) = self.heap.first() else { return Ok(None) };
        let next = self.read(top)?;
        let out = std::mem::replace(&mut self.heads[top], next);
        if self.heads[top].is_none() {
            let last = self.heap.len() - 1;
            self.heap.swap(0, last);
            self.heap.pop();
        }
        self.sift_down(0);
        Ok(out)
    }
}
