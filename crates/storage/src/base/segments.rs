//! The base's adjacency and label codes as segment columns: what a checkpoint writes
//! ([`Base::segment_columns`]), and reads of them through the buffer pool ([`SegGraph`]: label
//! sets, a node's relationships per direction) with a comparison against an in-memory base
//! (`arbor check`).
//!
//! Column ids: 1 label code per node, 2–5 outgoing CSR (offsets, neighbour, relationship,
//! type), 6–9 incoming CSR, 10 the label-set dictionary flattened (`n, label × n` per code).

use arbor_model::{Error, Result, Status};

use super::columns::{Packed, PackedView};
use super::graph::Base;
use crate::pager::pool::BufferPool;
use crate::pager::segment::{ColumnData, SegColumn, Segment};

const LABEL_CODE: u8 = 1;
const OUT: [u8; 4] = [2, 3, 4, 5];
const IN: [u8; 4] = [6, 7, 8, 9];
const LABEL_SETS: u8 = 10;

/// Entries decoded per pool round trip when reading a node's relationships: each chunk pins
/// one page per column, never one per entry.
const CHUNK: usize = 64;

fn data(p: &Packed) -> ColumnData<'_> {
    match p.view() {
        PackedView::Const(v, n) => ColumnData::Const(v, n),
        PackedView::Seq(v, n) => ColumnData::Seq(v, n),
        PackedView::U8(s) => ColumnData::U8(s),
        PackedView::U16(s) => ColumnData::U16(s),
        PackedView::U32(s) => ColumnData::U32(s),
        PackedView::U64(s) => ColumnData::U64(s),
    }
}

impl Base {
    /// The flattened label-set dictionary (column 10).
    pub(crate) fn label_set_words(&self) -> Vec<u32> {
        let mut w = Vec::new();
        for s in &self.label_sets {
            w.push(s.len() as u32);
            w.extend_from_slice(s);
        }
        w
    }

    /// The columns a checkpoint writes to its segment; `words` is [`Base::label_set_words`].
    pub(crate) fn segment_columns<'a>(&'a self, words: &'a [u32]) -> Vec<(u8, ColumnData<'a>)> {
        let out = [&self.out_off, &self.out_other, &self.out_rel, &self.out_type];
        let inc = [&self.in_off, &self.in_other, &self.in_rel, &self.in_type];
        let mut cols = vec![(LABEL_CODE, data(&self.label_code))];
        cols.extend(OUT.iter().zip(out).map(|(id, p)| (*id, data(p))));
        cols.extend(IN.iter().zip(inc).map(|(id, p)| (*id, data(p))));
        cols.push((LABEL_SETS, ColumnData::U32(words)));
        cols
    }
}

/// A segment read as a graph's topology: label sets and adjacency.
pub(crate) struct SegGraph<'a> {
    seg: &'a Segment,
    pool: &'a BufferPool,
    code: SegColumn,
    out: [SegColumn; 4],
    inc: [SegColumn; 4],
    label_sets: Vec<Vec<u32>>,
}

impl<'a> SegGraph<'a> {
    /// Looks up the columns (a segment missing one is corrupt) and reads the label-set
    /// dictionary.
    pub fn new(seg: &'a Segment, pool: &'a BufferPool) -> Result<SegGraph<'a>> {
        let col = |id: u8| {
            seg.column(id).ok_or_else(|| {
                Error::new(
                    Status::Corruption,
                    format!("segment file {} has no column {id}", seg.path().display()),
                )
            })
        };
        let four = |ids: [u8; 4]| -> Result<[SegColumn; 4]> {
            Ok([col(ids[0])?, col(ids[1])?, col(ids[2])?, col(ids[3])?])
        };
        let words = col(LABEL_SETS)?;
        let mut flat = vec![0u64; words.len() as usize];
        seg.fill(pool, words, 0, &mut flat)?;
        let mut label_sets = Vec::new();
        let mut i = 0;
        while i < flat.len() {
            let n = flat[i] as usize;
            let Some(s) = flat.get(i + 1..i + 1 + n) else {
                return Err(Error::new(
                    Status::Corruption,
                    format!("segment file {} has a cut label set", seg.path().display()),
                ));
            };
            label_sets.push(s.iter().map(|l| *l as u32).collect());
            i += 1 + n;
        }
        Ok(SegGraph {
            seg,
            pool,
            code: col(LABEL_CODE)?,
            out: four(OUT)?,
            inc: four(IN)?,
            label_sets,
        })
    }

    /// Node ids below this may be in the segment.
    pub fn node_end(&self) -> u64 {
        self.code.len()
    }

    /// The labels of node `id` (`None`: no node).
    pub fn labels(&self, id: u64) -> Result<Option<&[u32]>> {
        let code = self.seg.get(self.pool, self.code, id)? as usize;
        if code == 0 {
            return Ok(None);
        }
        Ok(Some(self.label_sets.get(code).map_or(&[][..], |s| &s[..])))
    }

    /// Calls `f(rel, other, type)` for the node's relationships in one direction, in CSR
    /// order, decoding a chunk of entries per pinned page of each column.
    pub fn edges(&self, node: u64, out: bool, mut f: impl FnMut(u64, u64, u32)) -> Result<()> {
        let [off, other, rel, ty] = if out { self.out } else { self.inc };
        let mut ab = [0u64; 2];
        self.seg.fill(self.pool, off, node, &mut ab)?;
        let (a, b) = (ab[0], ab[1]);
        if node + 1 >= off.len() || a >= b {
            return Ok(());
        }
        let (mut os, mut rs, mut ts) = ([0u64; CHUNK], [0u64; CHUNK], [0u64; CHUNK]);
        let mut p = a;
        while p < b {
            let k = ((b - p) as usize).min(CHUNK);
            self.seg.fill(self.pool, other, p, &mut os[..k])?;
            self.seg.fill(self.pool, rel, p, &mut rs[..k])?;
            self.seg.fill(self.pool, ty, p, &mut ts[..k])?;
            for i in 0..k {
                f(rs[i], os[i], ts[i] as u32);
            }
            p += k as u64;
        }
        Ok(())
    }
}

/// Compares a segment read through the pool with the in-memory base built from the same
/// checkpoint: every node's labels and both adjacency lists. Returns the differences found
/// (at most `max`), or the first read error (a corrupt page).
pub(crate) fn compare(g: &SegGraph<'_>, base: &Base, max: usize) -> Result<Vec<String>> {
    let mut diffs = Vec::new();
    if g.node_end() != base.node_end {
        diffs.push(format!("segment has {} node slots, the base {}", g.node_end(), base.node_end));
        return Ok(diffs);
    }
    let (mut seg, mut mem) = (Vec::new(), Vec::new());
    for id in 0..base.node_end {
        let want = base.has_node(id).then(|| base.node_labels(id));
        if g.labels(id)? != want {
            diffs.push(format!("node {id}: segment labels {:?}, base {want:?}", g.labels(id)?));
        }
        for out in [true, false] {
            seg.clear();
            mem.clear();
            g.edges(id, out, |r, o, t| seg.push((r, o, t)))?;
            base.edges(id, out, !out, |r, o, t, _| mem.push((r, o, t)));
            if seg != mem {
                diffs.push(format!("node {id}: segment and base adjacency differ (out: {out})"));
            }
        }
        if diffs.len() >= max {
            break;
        }
    }
    Ok(diffs)
}
