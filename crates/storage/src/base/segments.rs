//! The base's adjacency and label codes as segment columns: what a checkpoint writes
//! ([`Base::segment_columns`]), and reads of them through the buffer pool ([`SegGraph`]: label
//! sets, a node's relationships per direction) with a comparison against an in-memory base
//! (`arbor check`).
//!
//! A base loaded from a checkpoint with a segment, or built by a checkpoint that wrote one,
//! reads its adjacency from it ([`Base::attach_segment`]).
//!
//! Column ids: 1 label code per node, 2–5 outgoing CSR (offsets, neighbour, relationship,
//! type), 6–9 incoming CSR, 10 the label-set dictionary flattened (`n, label × n` per code),
//! 11–12 node property blobs (offsets by node id, then the bytes), 13–14 relationship
//! property blobs (by relationship id). A segment written before 11–14 existed attaches
//! its adjacency only; the properties stay in memory.

use std::sync::Arc;

use arbor_model::{Error, Result, Status};

use super::columns::{Bits, Packed, PackedView};
use super::graph::Base;
use super::paged::{read_blob, read_edges, PagedAdj, PagedFwd, PagedNodes, PagedProps};
use crate::pager::pool::{BufferPool, MIN_FRAMES, PAGE_SIZE};
use crate::pager::segment::{ColumnData, SegColumn, Segment};

pub(super) const LABEL_CODE: u8 = 1;
pub(super) const OUT: [u8; 4] = [2, 3, 4, 5];
pub(super) const IN: [u8; 4] = [6, 7, 8, 9];
pub(super) const LABEL_SETS: u8 = 10;
pub(super) const NODE_PROPS: [u8; 2] = [11, 12];
pub(super) const REL_PROPS: [u8; 2] = [13, 14];
/// Relationship-id positions (a complete segment's, `segment_open.rs`).
pub(crate) const REL_POS: u8 = 15;
/// Label bitset words (a complete segment's, `segment_open.rs`).
pub(super) const LABEL_BITS: u8 = 17;
/// The forward columns a paged base reads through the pool besides its adjacency
/// ([`PagedFwd`]): offsets, neighbour, type, relationship positions.
pub(super) const FWD: [u8; 4] = [OUT[0], OUT[1], OUT[3], REL_POS];

pub(super) fn data(p: &Packed) -> ColumnData<'_> {
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
        for (ids, p) in [(NODE_PROPS, &self.node_props), (REL_PROPS, &self.rel_props)] {
            cols.push((ids[0], data(&p.off)));
            cols.push((ids[1], ColumnData::U8(&p.arena)));
        }
        cols
    }

    /// Makes this base (just loaded from checkpoint `seg.ts`, or built by that checkpoint and
    /// not yet installed) read from `seg` through `pool` the parts the
    /// [promotion plan](promotion_plan) does not keep in memory (label codes and bitsets, then
    /// adjacency, node property blobs, relationship property blobs; the index arrays, which a
    /// built base holds in memory, count first), dropping their in-memory columns, and takes
    /// what stays in memory from the pool's budget ([`BufferPool::set_reserved`]). Paged
    /// adjacency drops the incoming CSR and the forward relationship ids; with a complete
    /// segment also the forward offsets, neighbours, types and relationship positions
    /// ([`PagedFwd`]); otherwise those stay, as relationship lookups by id read them. A
    /// segment of another checkpoint or whose columns do not fit the base is `Corruption`.
    /// The crate's own tests page every part, so the crash and model suites keep covering
    /// reads through the pool with their small graphs.
    pub(crate) fn attach_segment(
        &mut self,
        seg: Arc<Segment>,
        pool: Arc<BufferPool>,
    ) -> Result<()> {
        if seg.ts != self.ts {
            return Err(Error::new(
                Status::Corruption,
                format!(
                    "segment file {} is of commit {}, its checkpoint of commit {}",
                    seg.path().display(),
                    seg.ts,
                    self.ts
                ),
            ));
        }
        let index = self.stats.index_bytes;
        let sizes = [
            self.stats.node_bytes,
            self.stats.rel_bytes,
            self.node_props.bytes() as u64,
            self.rel_props.bytes() as u64,
        ];
        let room = promotion_room(pool.budget()).saturating_sub(index);
        let keep = if cfg!(test) { [false; 4] } else { promotion_plan(sizes, room) };
        let (nodes, rels) = (self.node_end, self.rel_count);
        let paged = PagedAdj::new(seg.clone(), pool.clone(), (OUT, IN), nodes, rels)?;
        // Checked before anything is dropped: a mismatch leaves the base whole.
        let fwd = PagedFwd::new(seg.clone(), pool.clone(), FWD, nodes, rels)?;
        self.attach_props(&seg, &pool, [!keep[2], !keep[3]])?;
        if !keep[0] {
            self.attach_labels(&seg, &pool)?;
        }
        if !keep[1] {
            self.page_adjacency(paged, fwd);
        }
        if !cfg!(test) {
            let paged = [
                self.paged_nodes.is_some(),
                self.paged.is_some(),
                self.paged_props[0].is_some(),
                self.paged_props[1].is_some(),
            ];
            let kept: u64 = sizes.iter().zip(paged).filter(|(_, p)| !p).map(|(s, _)| s).sum();
            pool.set_reserved(index + kept);
        }
        Ok(())
    }

    /// [`Base::attach_segment`]'s adjacency: read through `paged` (and `fwd`, a complete
    /// segment's forward columns), the in-memory columns those replace dropped.
    fn page_adjacency(&mut self, paged: PagedAdj, fwd: Option<PagedFwd>) {
        let mut freed = 0;
        for c in [&mut self.in_off, &mut self.in_other, &mut self.in_rel, &mut self.in_type] {
            freed += c.bytes();
            *c = Packed::default();
        }
        freed += self.out_rel.bytes();
        self.out_rel = Packed::default();
        // A complete segment has the positions too: relationship lookups read it as well.
        if let Some(f) = fwd {
            let fwd = [&mut self.out_off, &mut self.out_other, &mut self.out_type];
            for c in fwd.into_iter().chain([&mut self.rel_pos]) {
                freed += c.bytes();
                *c = Packed::default();
            }
            self.fwd = Some(f);
        }
        self.stats.rel_bytes = self.stats.rel_bytes.saturating_sub(freed as u64);
        self.paged = Some(paged);
    }

    /// [`Base::attach_segment`] for the label codes and label bitsets of a complete segment:
    /// they are read from `seg` (the bitsets at the places [`Base::segment_extra`] wrote them:
    /// by label, one after the other) and the in-memory ones are dropped. A segment without
    /// bitsets leaves them in memory.
    fn attach_labels(&mut self, seg: &Arc<Segment>, pool: &Arc<BufferPool>) -> Result<()> {
        let Some(col) = seg.column(LABEL_BITS) else {
            return Ok(());
        };
        if self.paged_nodes.is_some() {
            return Ok(());
        }
        let nodes = PagedNodes::new(seg.clone(), pool.clone(), LABEL_CODE, self.node_end)?;
        let mut labels: Vec<u32> = self.label_bits.keys().copied().collect();
        labels.sort_unstable();
        let (mut paged, mut from) = (Vec::new(), 0u64);
        for l in labels {
            let n = self.label_bits[&l].words.len() as u64;
            let words = nodes.words(col, from, n).ok_or_else(|| {
                Error::new(
                    Status::Corruption,
                    format!("segment file {} has a cut label bitset", seg.path().display()),
                )
            })?;
            paged.push((l, words));
            from += n;
        }
        if from != col.len() {
            return Err(Error::new(
                Status::Corruption,
                format!(
                    "segment file {} does not match its base: {} label bitset words, the base {from}",
                    seg.path().display(),
                    col.len()
                ),
            ));
        }
        let mut freed = self.label_code.bytes();
        self.label_code = Packed::default();
        for (l, words) in paged {
            if let Some(b) = self.label_bits.get_mut(&l) {
                freed += b.bytes();
                *b = Bits { words: Vec::new(), paged: Some(Box::new(words)) };
            }
        }
        self.stats.node_bytes = self.stats.node_bytes.saturating_sub(freed as u64);
        self.paged_nodes = Some(nodes);
        Ok(())
    }

    /// [`Base::attach_segment`] for the property blobs: the node (`page[0]`) and relationship
    /// (`page[1]`) ones to page are read from `seg`, which must hold them as this base does,
    /// and their in-memory columns are dropped. A segment without property columns leaves
    /// both in memory. Strings interned in the base stay in memory.
    fn attach_props(
        &mut self,
        seg: &Arc<Segment>,
        pool: &Arc<BufferPool>,
        page: [bool; 2],
    ) -> Result<()> {
        let mut paged = [None, None];
        for (i, (ids, col)) in
            [(NODE_PROPS, &self.node_props), (REL_PROPS, &self.rel_props)].into_iter().enumerate()
        {
            let (offsets, arena) = (col.off.len() as u64, col.arena.len() as u64);
            match PagedProps::new(seg.clone(), pool.clone(), ids, offsets, arena)? {
                Some(p) => paged[i] = page[i].then_some(p),
                None => return Ok(()),
            }
        }
        if let Some(p) = paged[0].take() {
            let node = self.node_props.bytes() as u64;
            self.node_props = Default::default();
            self.stats.node_property_bytes = self.stats.node_property_bytes.saturating_sub(node);
            self.paged_props[0] = Some(p);
        }
        if let Some(p) = paged[1].take() {
            self.rel_props = Default::default();
            self.stats.rel_property_bytes = 0;
            self.paged_props[1] = Some(p);
        }
        Ok(())
    }

    /// Whether the property blobs are read through the buffer pool.
    #[cfg(test)]
    pub(crate) fn props_paged(&self) -> bool {
        self.paged_props.iter().all(Option::is_some)
    }

    /// Whether the label codes and bitsets are read through the buffer pool.
    #[cfg(test)]
    pub(crate) fn labels_paged(&self) -> bool {
        self.paged_nodes.is_some() && self.label_bits.values().all(|b| b.paged.is_some())
    }

    /// Whether the adjacency is read through the buffer pool.
    pub(crate) fn is_paged(&self) -> bool {
        self.paged.is_some()
    }
}

/// Eighths of the page cache budget that the parts of a base kept in memory (promoted) may
/// take together. The rest is the pool's (at least a quarter of the budget, for the pages of
/// what stays paged, the count store and the segment's own reads), and the promoted bytes are
/// taken from the pool ([`BufferPool::set_reserved`]), so pool and promoted parts together
/// stay within the budget. The delta, query memory and interned strings are outside it (query
/// memory has its own limits). A quarter for the pool: at 10 % of B2B 0.01 it keeps the
/// label codes promoted and leaves the pool ~38 MiB for the property and adjacency pages.
pub(crate) const PROMOTED_EIGHTHS: u64 = 6;

/// The bytes promoted parts may take together under a page cache of `budget` bytes: their
/// share, and never what the pool's [`MIN_FRAMES`] need.
pub(crate) fn promotion_room(budget: u64) -> u64 {
    let min_pool = (MIN_FRAMES * PAGE_SIZE) as u64;
    (budget / 8 * PROMOTED_EIGHTHS).min(budget.saturating_sub(min_pool))
}

/// Which of the parts of (decoded) `sizes`, in the order a promotion takes them, are kept in
/// memory when they share `room` bytes: each part in turn if it fits what the ones before it
/// left (one that does not fit is skipped; a smaller one after it may still fit).
pub(crate) fn promotion_plan<const N: usize>(sizes: [u64; N], mut room: u64) -> [bool; N] {
    sizes.map(|s| {
        let fits = s <= room;
        if fits {
            room -= s;
        }
        fits
    })
}

/// A segment read as a graph's topology: label sets and adjacency.
pub(crate) struct SegGraph<'a> {
    seg: &'a Segment,
    pool: &'a BufferPool,
    code: SegColumn,
    out: [SegColumn; 4],
    inc: [SegColumn; 4],
    label_sets: Vec<Vec<u32>>,
    /// Node and relationship property columns (`None`: a segment written before them).
    props: Option<[[SegColumn; 2]; 2]>,
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
            props: (|| {
                let c = |ids: [u8; 2]| Some([seg.column(ids[0])?, seg.column(ids[1])?]);
                Some([c(NODE_PROPS)?, c(REL_PROPS)?])
            })(),
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
        let cols = if out { self.out } else { self.inc };
        read_edges(self.seg, self.pool, cols, node, true, |r, o, t| f(r, o, t as u32))
    }

    /// The property blob of node (or, with `rel`, relationship) `i` into `buf`; `false` when
    /// the segment holds no properties.
    pub fn blob(&self, rel: bool, i: u64, buf: &mut Vec<u8>) -> Result<bool> {
        let Some(props) = &self.props else { return Ok(false) };
        read_blob(self.seg, self.pool, props[usize::from(rel)], i, buf)?;
        Ok(true)
    }
}

/// Compares a segment read through the pool with the in-memory base built from the same
/// checkpoint: every node's labels, property blob and both adjacency lists, and every
/// relationship's property blob. Returns the differences found (at most `max`), or the first
/// read error (a corrupt page).
pub(crate) fn compare(g: &SegGraph<'_>, base: &Base, max: usize) -> Result<Vec<String>> {
    let mut diffs = Vec::new();
    if g.node_end() != base.node_end {
        diffs.push(format!("segment has {} node slots, the base {}", g.node_end(), base.node_end));
        return Ok(diffs);
    }
    let (mut seg, mut mem, mut buf) = (Vec::new(), Vec::new(), Vec::new());
    for id in 0..base.node_end {
        let want = base.has_node(id).then(|| base.node_labels(id));
        if g.labels(id)? != want {
            diffs.push(format!("node {id}: segment labels {:?}, base {want:?}", g.labels(id)?));
        }
        for out in [true, false] {
            seg.clear();
            mem.clear();
            g.edges(id, out, |r, o, t| seg.push((r, o, t)))?;
            base.edges(id, out, !out, |r, o, t, _| mem.push((r, o, t)))?;
            if seg != mem {
                diffs.push(format!("node {id}: segment and base adjacency differ (out: {out})"));
            }
        }
        if g.blob(false, id, &mut buf)? && buf[..] != base.node_blob(id)[..] {
            diffs.push(format!("node {id}: segment and base properties differ"));
        }
        if diffs.len() >= max {
            return Ok(diffs);
        }
    }
    for id in 0..base.rel_end {
        if g.blob(true, id, &mut buf)? && buf[..] != base.rel_blob(id)[..] {
            diffs.push(format!("relationship {id}: segment and base properties differ"));
            if diffs.len() >= max {
                break;
            }
        }
    }
    Ok(diffs)
}

#[cfg(test)]
mod plan_tests {
    use super::{promotion_plan, promotion_room};

    #[test]
    fn parts_are_kept_in_order_while_they_fit_together() {
        assert_eq!(promotion_room(1 << 20), 768 << 10);
        // The pool's sixteen frames come first.
        assert_eq!(promotion_room(64 << 10), 0);
        assert_eq!(promotion_room(128 << 10), 64 << 10);
        assert_eq!(promotion_plan([10, 20, 30], 60), [true, true, true]);
        assert_eq!(promotion_plan([10, 20, 31], 60), [true, true, false]);
        // A part too large is skipped; a smaller one after it still fits.
        assert_eq!(promotion_plan([10, 60, 30, 25], 60), [true, false, true, false]);
        assert_eq!(promotion_plan([0, u64::MAX, 0], 0), [true, false, true]);
    }
}
