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
//! columns built whole. CPU: one scan of the forward neighbours per window and column. The
//! offsets are read in order, from the base or from their scratch files (`degree_spill.rs`).

use std::io;

use super::degree_spill::{offsets, CsrOffsets};
use super::fwd_spill::{ForwardSpill, FwdSource};
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
        // A window's end nodes are numbered from 0 in 32 bits while they are placed.
        let window = window.clamp(1, u32::MAX as usize);
        BackwardStream { widths, len, window, passes: 0 }
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
    /// a window at a time; the forward columns come from `fwd` and the offsets from `offs`
    /// where they were spilled.
    pub(crate) fn produce(
        &mut self,
        base: &Base,
        fwd: &ForwardSpill,
        offs: Option<&CsrOffsets>,
        id: u8,
        emit: &mut Sink<'_>,
    ) -> io::Result<()> {
        let part = match id {
            x if x == IN[1] => Part::Other,
            x if x == IN[2] => Part::Rel,
            x if x == IN[3] => Part::Type,
            _ => return Err(io::Error::other(format!("column {id} is not streamed"))),
        };
        let mut in_off = offsets(base, offs, false)?;
        let n = base.node_end as usize;
        let (mut lo, mut first) = (0usize, in_off.get(0)?);
        // The offsets of the window's end nodes and of the one after it (read in order).
        let mut starts = Vec::new();
        while lo < n {
            // The window: end nodes lo..hi, at least one, their entries within the budget.
            starts.clear();
            starts.push(first);
            let mut hi = lo + 1;
            starts.push(self.checked(hi, first, in_off.get(hi)?)?);
            while hi < n && hi - lo < self.window {
                let next = self.checked(hi + 1, starts[starts.len() - 1], in_off.get(hi + 1)?)?;
                if next - first > self.window as u64 {
                    break;
                }
                hi += 1;
                starts.push(next);
            }
            let vals = self.window_values(base, fwd, offs, part, lo, &starts)?;
            self.passes += 1;
            emit(Values::U64(&vals))?;
            first = starts[hi - lo];
            lo = hi;
        }
        Ok(())
    }

    /// `next`, the offset of end node `at` read back, if it follows `prev` within the column
    /// (the read-back is checked: a damaged scratch or segment page must not size a window).
    fn checked(&self, at: usize, prev: u64, next: u64) -> io::Result<u64> {
        if next < prev || next > self.len as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "incoming offset of node {at} read back as {next}, after {prev} \
                     (of {} relationships)",
                    self.len
                ),
            ));
        }
        Ok(next)
    }

    /// The entries of the end nodes from `lo` whose offsets are `starts` (and the end's),
    /// placed as the whole build places them: by end node, in forward order within one (the
    /// whole build walks the relationships backwards from the end of each node's range; this
    /// walks them forwards from its start).
    fn window_values(
        &self,
        base: &Base,
        fwd: &ForwardSpill,
        offs: Option<&CsrOffsets>,
        part: Part,
        lo: usize,
        starts: &[u64],
    ) -> io::Result<Vec<u64>> {
        let hi = lo + starts.len() - 1;
        let first = starts[0];
        let mut vals = vec![0u64; (starts[starts.len() - 1] - first) as usize];
        let mut cursor: Vec<u64> = starts[..starts.len() - 1].iter().map(|s| s - first).collect();
        let mut out_off = match part {
            Part::Other => Some(offsets(base, offs, true)?),
            Part::Rel | Part::Type => None,
        };
        let mut others = fwd.others(base)?;
        let mut values = match part {
            Part::Other => None,
            Part::Rel => Some(FwdSource::Mem { view: base.out_rel.view(), at: 0, len: self.len }),
            Part::Type => Some(fwd.types(base)?),
        };
        let n = base.node_end as usize;
        let mut scatter = Scatter::new(hi - lo, vals.len());
        let (mut ob, mut vb) = (Vec::new(), Vec::new());
        let (mut pos, mut owner) = (0u64, 0usize); // owner: start node of position `pos`
        while others.fill(&mut ob)? > 0 {
            if let Some(v) = values.as_mut() {
                if v.fill(&mut vb)? != ob.len() {
                    return Err(io::Error::other("a forward column is short"));
                }
            }
            for (j, e) in ob.iter().enumerate() {
                let p = pos + j as u64;
                let e = *e as usize;
                if e < lo || e >= hi {
                    continue;
                }
                let v = match out_off.as_mut() {
                    Some(off) => {
                        while owner < n && off.get(owner + 1)? <= p {
                            owner += 1;
                        }
                        owner as u64
                    }
                    None => vb.get(j).copied().unwrap_or(0),
                };
                scatter.put(e - lo, v, &mut cursor, &mut vals);
            }
            pos += ob.len() as u64;
        }
        scatter.flush_all(&mut cursor, &mut vals);
        Ok(vals)
    }
}

/// Buckets a window's entries by end node before they are placed: an entry goes to its bucket's
/// small buffer (a sequential append), and a full buffer is placed at once, its end nodes'
/// cursors and slots in one small range of the window (in cache). Placed straight away, each
/// entry was a cache and TLB miss in a window of gigabytes (B2B 1.0: ~100 ns an entry, most of
/// the import's last stage). Entries keep their order within a bucket, so each end node's
/// entries stay in forward order: the same bytes.
struct Scatter {
    /// End node (relative to the window) to bucket.
    shift: u32,
    bufs: Vec<Vec<(u32, u64)>>,
    /// Entries a buffer holds before it is placed.
    cap: usize,
}

/// Most buckets per window.
const BUCKETS: usize = 1024;

impl Scatter {
    /// For a window of `nodes` end nodes and `entries` entries: the buffers together hold at
    /// most about an eighth of the window's values (16 bytes an entry against its 8 + 8).
    fn new(nodes: usize, entries: usize) -> Scatter {
        let bits = usize::BITS - nodes.saturating_sub(1).leading_zeros();
        let shift = bits.saturating_sub(BUCKETS.trailing_zeros());
        let buckets = (nodes.saturating_sub(1) >> shift) + 1;
        let cap = (entries / (8 * BUCKETS)).clamp(16, 4096);
        Scatter { shift, bufs: (0..buckets).map(|_| Vec::new()).collect(), cap }
    }

    /// Adds value `v` of end node `e` (relative to the window).
    fn put(&mut self, e: usize, v: u64, cursor: &mut [u64], vals: &mut [u64]) {
        let Some(b) = self.bufs.get_mut(e >> self.shift) else { return };
        if b.capacity() == 0 {
            b.reserve_exact(self.cap);
        }
        b.push((e as u32, v));
        if b.len() >= self.cap {
            place(b, cursor, vals);
        }
    }

    fn flush_all(&mut self, cursor: &mut [u64], vals: &mut [u64]) {
        for b in &mut self.bufs {
            place(b, cursor, vals);
        }
    }
}

/// Places a bucket's entries in order and empties it.
fn place(b: &mut Vec<(u32, u64)>, cursor: &mut [u64], vals: &mut [u64]) {
    for &(e, v) in b.iter() {
        if let Some(c) = cursor.get_mut(e as usize) {
            if let Some(slot) = vals.get_mut(*c as usize) {
                *slot = v;
            }
            *c += 1;
        }
    }
    b.clear();
}

#[cfg(test)]
mod tests {
    use super::{BackwardStream, Scatter};

    /// Entries placed through the buckets land where placing each at once puts them (each end
    /// node's entries in arrival order), for windows of one node up to many more than the
    /// buckets, with buffers that fill many times or never.
    #[test]
    fn bucketed_placement_equals_direct_placement() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |m: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % m as u64) as usize
        };
        for (nodes, entries) in
            [(1, 0), (1, 50), (3, 1000), (1000, 5000), (5000, 200_000), (70_000, 300_000)]
        {
            let ends: Vec<usize> = (0..entries).map(|_| rand(nodes)).collect();
            let mut starts = vec![0u64; nodes + 1];
            for e in &ends {
                starts[e + 1] += 1;
            }
            for i in 0..nodes {
                starts[i + 1] += starts[i];
            }
            let (mut c1, mut want) = (starts[..nodes].to_vec(), vec![0u64; entries]);
            for (i, e) in ends.iter().enumerate() {
                want[c1[*e] as usize] = i as u64 + 1;
                c1[*e] += 1;
            }
            let (mut c2, mut got) = (starts[..nodes].to_vec(), vec![0u64; entries]);
            let mut sc = Scatter::new(nodes, entries);
            for (i, e) in ends.iter().enumerate() {
                sc.put(*e, i as u64 + 1, &mut c2, &mut got);
            }
            sc.flush_all(&mut c2, &mut got);
            assert_eq!(got, want, "{nodes} nodes, {entries} entries");
            assert_eq!(c2, c1);
        }
    }

    #[test]
    fn an_offset_read_back_out_of_order_or_past_the_column_is_an_error() {
        let s = BackwardStream::new([4, 4, 1], 100, 10);
        assert_eq!(s.checked(3, 40, 40).unwrap(), 40);
        assert_eq!(s.checked(3, 40, 100).unwrap(), 100);
        let back = s.checked(7, 40, 39).unwrap_err();
        assert_eq!(back.kind(), std::io::ErrorKind::InvalidData);
        assert!(back.to_string().contains("node 7 read back as 39, after 40"), "{back}");
        assert!(s.checked(7, 40, 101).is_err());
        // A wrapped (damaged) value far past the column.
        assert!(s.checked(7, 0, u64::MAX).is_err());
    }
}
