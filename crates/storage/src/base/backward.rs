//! The incoming (backward) CSR of a bulk-built base, produced while its segment is written
//! instead of being held whole: [`BackwardStream`] gives the neighbour, relationship and type
//! columns (segment columns 7–9) one after the other, each in windows of end nodes whose
//! entries fit the memory budget. Each window is one pass over the forward CSR that scatters
//! the entries ending in the window, in the order `RelCols::backward` (builder.rs) places them,
//! so the bytes are those of the base built whole.
//!
//! Only for relationships fed in start-node order (a bulk import's): the forward position of
//! a relationship is then its feed index, and the forward columns give its start (the owner of
//! the position), end, id and type. Memory: one window of values (8 bytes each) and one cursor
//! per end node of the window (8 bytes), against 9 to 17 bytes per relationship for the three
//! columns built whole. CPU: one scan of the forward neighbours per window and column.

use std::io;

use super::columns::Packed;
use super::graph::Base;
use super::segments::IN;
use crate::pager::segment::{ColumnData, Sink, Values};

/// Which incoming column a pass produces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Other,
    Rel,
    Type,
}

/// Produces the incoming neighbour, relationship and type columns of a base built by
/// [`BaseBuilder::finish_streamed`](super::BaseBuilder::finish_streamed), whose own
/// columns for them are empty.
pub(crate) struct BackwardStream {
    /// Bytes per value of the neighbour, relationship and type columns (type 0: the type
    /// column is a constant, in the base).
    widths: [usize; 3],
    len: usize,
    /// Most entries (and end nodes) one window holds.
    window: usize,
    /// Windows produced so far (all columns).
    pub(crate) passes: u64,
}

impl BackwardStream {
    pub(super) fn new(widths: [usize; 3], len: usize, window: usize) -> BackwardStream {
        BackwardStream { widths, len, window: window.max(1), passes: 0 }
    }

    /// The heap bytes the three columns would take built whole (the base's statistics).
    pub(super) fn bytes(&self) -> u64 {
        (self.len * self.widths.iter().sum::<usize>()) as u64
    }

    /// The segment columns this stream produces, to put in place of the base's.
    pub(crate) fn columns(&self) -> Vec<(u8, ColumnData<'static>)> {
        let parts = [IN[1], IN[2], IN[3]];
        (parts.iter().zip(self.widths))
            .filter(|(_, w)| *w > 0)
            .map(|(id, width)| (*id, ColumnData::Stream { width, len: self.len }))
            .collect()
    }

    /// Gives column `id`'s values (one of [`BackwardStream::columns`]) to `emit`, in order,
    /// a window at a time.
    pub(crate) fn produce(&mut self, base: &Base, id: u8, emit: &mut Sink<'_>) -> io::Result<()> {
        let part = match id {
            x if x == IN[1] => Part::Other,
            x if x == IN[2] => Part::Rel,
            x if x == IN[3] => Part::Type,
            _ => return Err(io::Error::other(format!("column {id} is not streamed"))),
        };
        let in_off = base.in_off.view();
        let n = base.node_end as usize;
        let mut lo = 0usize;
        while lo < n {
            // The window: end nodes lo..hi, at least one, their entries within the budget.
            let first = in_off.get(lo);
            let mut hi = lo + 1;
            while hi < n
                && hi - lo < self.window
                && in_off.get(hi + 1) - first <= self.window as u64
            {
                hi += 1;
            }
            let vals = self.window_values(base, part, lo, hi);
            self.passes += 1;
            emit(Values::U64(&vals))?;
            lo = hi;
        }
        Ok(())
    }

    /// The entries of end nodes `lo..hi`, scattered as the whole build places them: the
    /// relationships walked backwards, each put just before its end node's cursor (which
    /// starts at the end of the node's range).
    fn window_values(&self, base: &Base, part: Part, lo: usize, hi: usize) -> Vec<u64> {
        let in_off = base.in_off.view();
        let first = in_off.get(lo);
        let mut vals = vec![0u64; (in_off.get(hi) - first) as usize];
        let mut cursor: Vec<u64> = (lo..hi).map(|e| in_off.get(e + 1) - first).collect();
        let (out_off, other) = (base.out_off.view(), base.out_other.view());
        let value: &Packed = match part {
            Part::Rel => &base.out_rel,
            _ => &base.out_type,
        };
        let value = value.view();
        let mut owner = base.node_end as usize; // start node of position p (walks down)
        for p in (0..self.len).rev() {
            let e = other.get(p) as usize;
            if e < lo || e >= hi {
                continue;
            }
            let c = &mut cursor[e - lo];
            *c = c.saturating_sub(1);
            let v = match part {
                Part::Other => {
                    while owner > 0 && out_off.get(owner) > p as u64 {
                        owner -= 1;
                    }
                    owner as u64
                }
                Part::Rel | Part::Type => value.get(p),
            };
            if let Some(slot) = vals.get_mut(*c as usize) {
                *slot = v;
            }
        }
        vals
    }
}
