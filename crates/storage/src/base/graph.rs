//! The [`Base`] itself: its columns, read-only views of one node or relationship
//! ([`NodeRef`], [`RelRef`]), and every read (labels, properties, adjacency, scans, index seeks).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use arbor_model::{Error, NodeId, Result, Value};
use rustc_hash::FxHashMap;

use crate::records::{Labels, NodeData, RelData};
use crate::schema::Target;
use crate::value::{target_key, IndexKey, KeyRange};

use super::adjacency::{edge_run, push_edges};
use super::columns::{AtomicBits, Bits, Packed, PackedView};
use super::index::{key_hash, BaseIndex};
use super::paged::{PagedAdj, PagedFwd, PagedNodes, PagedProps};
use super::props::{blob_all, blob_get, blob_has, blob_int, IntColumn, PropCol};
use crate::pager::segment::SegColumn;

/// Byte counts of the base's parts (for the memory benchmark and `Store::memory_stats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BaseStats {
    pub nodes: u64,
    pub relationships: u64,
    pub node_properties: u64,
    pub rel_properties: u64,
    pub node_bytes: u64,
    pub node_property_bytes: u64,
    pub rel_bytes: u64,
    pub rel_property_bytes: u64,
    /// Hash-ordered index id arrays; in [`crate::Store::memory_stats`] also the value-ordered
    /// arrays range seeks have built so far (8 B per entry).
    pub index_bytes: u64,
    pub interned_strings: u64,
}

/// `(start, end, type, properties)` of a relationship read by a scan.
pub(crate) type ScannedRel = (u64, u64, u32, Vec<(u32, Value)>);

/// The immutable compact snapshot at `ts` (see the module docs).
pub(crate) struct Base {
    pub ts: u64,
    /// Node ids `< node_end` may be in the base.
    pub node_end: u64,
    pub(super) label_code: Packed,
    pub(super) label_sets: Vec<Box<[u32]>>,
    pub(super) label_bits: FxHashMap<u32, Bits>,
    pub(super) node_props: PropCol,
    /// Relationship ids `< rel_end` may be in the base.
    pub rel_end: u64,
    pub(super) rel_count: u64,
    /// Forward position of each relationship id; `rel_count` marks a hole.
    pub(super) rel_pos: Packed,
    pub(super) rel_props: PropCol,
    pub(super) out_off: Packed,
    pub(super) out_other: Packed,
    pub(super) out_rel: Packed,
    pub(super) out_type: Packed,
    pub(super) in_off: Packed,
    pub(super) in_other: Packed,
    pub(super) in_rel: Packed,
    pub(super) in_type: Packed,
    /// The distinct relationship types present.
    pub(super) rel_types: Vec<u32>,
    pub(super) strings: Vec<Arc<str>>,
    /// Property keys whose string values are not interned (see [`Interner`]).
    pub(super) inline_keys: Vec<u32>,
    pub(super) indexes: FxHashMap<Target, BaseIndex>,
    /// Per indexed pair, node ids in key order; built lazily by the first range seek (most
    /// indexes only ever serve equality seeks, which the hash order answers).
    pub(super) ordered: FxHashMap<Target, OnceLock<Box<[u64]>>>,
    /// Per indexed pair with a TEXT seek so far, its trigram postings (`crate::text_index`);
    /// built by the first `CONTAINS` / `ENDS WITH` seek of the pair.
    pub(super) texts: parking_lot::Mutex<FxHashMap<Target, Arc<crate::text_index::BaseText>>>,
    /// Per node property key, its values as an [`IntColumn`] (`None`: some base node holds a
    /// value of another type); built lazily by the first batch read of the key
    /// ([`Base::int_column`]).
    pub(super) int_cols: parking_lot::Mutex<FxHashMap<u32, Option<Arc<IntColumn>>>>,
    pub(super) node_dirty: AtomicBits,
    pub(super) rel_dirty: AtomicBits,
    pub(super) stats: BaseStats,
    /// Set when the adjacency is read from the checkpoint's segment through the buffer pool
    /// ([`Base::attach_segment`]); the in-memory incoming CSR and forward relationship ids are
    /// then dropped.
    pub(super) paged: Option<PagedAdj>,
    /// Set with `paged` when the base was opened from a complete segment: the forward
    /// offsets, neighbours and types and the relationship positions are read from the
    /// segment too ([`Base::fwd_get`]); their in-memory columns are then empty.
    pub(super) fwd: Option<PagedFwd>,
    /// Node and relationship property blobs read from the segment through the buffer pool
    /// ([`Base::attach_segment`]); the in-memory [`PropCol`]s are then empty.
    pub(super) paged_props: [Option<PagedProps>; 2],
    /// Set when the label codes and label bitsets are read from the segment through the
    /// buffer pool ([`Base::code`]); `label_code` is then empty and each bitset paged.
    pub(super) paged_nodes: Option<PagedNodes>,
    /// The first failed read of a paged property blob, and how many failed: such reads have
    /// no `Result` to carry the error (a property reads as missing), so every transaction on
    /// this base that was open when one failed reports it ([`Base::failure_since`]).
    pub(super) failure: OnceLock<Error>,
    pub(super) failures: AtomicU64,
}

/// A read-only view of one node, either a delta version or a base row.
#[derive(Clone, Copy)]
pub(crate) enum NodeRef<'a> {
    Data(&'a NodeData),
    Base(&'a Base, u64),
}

impl NodeRef<'_> {
    pub fn labels(&self) -> &[u32] {
        match self {
            NodeRef::Data(d) => &d.labels,
            NodeRef::Base(b, id) => b.labels_of(*id),
        }
    }
    pub fn has_label(&self, l: u32) -> bool {
        self.labels().binary_search(&l).is_ok()
    }
    pub fn prop(&self, key: u32) -> Option<Value> {
        match self {
            NodeRef::Data(d) => d.prop(key).cloned(),
            // A resident blob is read in place: no `Cow` to build and drop per read (the
            // traversal tree's evaluator reads one property per path).
            NodeRef::Base(b, id) => match &b.paged_props[0] {
                None => blob_get(b.node_props.blob(*id), key, &b.strings),
                Some(_) => blob_get(&b.node_blob(*id), key, &b.strings),
            },
        }
    }
    pub fn has_prop(&self, key: u32) -> bool {
        match self {
            NodeRef::Data(d) => d.prop(key).is_some(),
            NodeRef::Base(b, id) => blob_has(&b.node_blob(*id), key),
        }
    }
    pub fn props(&self) -> Vec<(u32, Value)> {
        match self {
            NodeRef::Data(d) => d.props.clone(),
            NodeRef::Base(b, id) => blob_all(&b.node_blob(*id), &b.strings),
        }
    }
    pub fn key_for(&self, label: u32, keys: &[u32]) -> Option<IndexKey> {
        if !self.has_label(label) {
            return None;
        }
        target_key(keys, |k| self.prop(k))
    }
    pub fn to_data(self) -> NodeData {
        match self {
            NodeRef::Data(d) => d.clone(),
            NodeRef::Base(..) => {
                NodeData { labels: Labels::from_slice(self.labels()), props: self.props() }
            }
        }
    }
    /// [`NodeRef::to_data`] for a copy a write installs: a base row whose paged property
    /// blob fails to read is that error (naming file and page), never a row without
    /// properties, and the failure is not noted on the base (nothing was answered from it).
    pub fn try_to_data(self) -> Result<NodeData> {
        match self {
            NodeRef::Data(d) => Ok(d.clone()),
            NodeRef::Base(b, id) => {
                let blob = b.try_blob(false, id)?;
                let props = blob_all(&blob, &b.strings);
                Ok(NodeData { labels: Labels::from_slice(self.labels()), props })
            }
        }
    }
}

/// A read-only view of one relationship.
#[derive(Clone, Copy)]
pub(crate) enum RelRef<'a> {
    Data(&'a RelData),
    /// Base, relationship id, forward position.
    Base(&'a Base, u64, u64),
}

impl RelRef<'_> {
    pub fn start(&self) -> u64 {
        match self {
            RelRef::Data(r) => r.start,
            RelRef::Base(b, _, pos) => b.out_owner(*pos),
        }
    }
    pub fn end(&self) -> u64 {
        match self {
            RelRef::Data(r) => r.end,
            RelRef::Base(b, _, pos) => b.fwd_get(&b.out_other, |f| f.other, *pos, u64::MAX),
        }
    }
    pub fn ty(&self) -> u32 {
        match self {
            RelRef::Data(r) => r.ty,
            RelRef::Base(b, _, pos) => b.fwd_get(&b.out_type, |f| f.ty, *pos, u64::MAX) as u32,
        }
    }
    pub fn prop(&self, key: u32) -> Option<Value> {
        match self {
            RelRef::Data(r) => crate::records::prop_of(&r.props, key).cloned(),
            RelRef::Base(b, id, _) => blob_get(&b.rel_blob(*id), key, &b.strings),
        }
    }
    pub fn props(&self) -> Vec<(u32, Value)> {
        match self {
            RelRef::Data(r) => r.props.clone(),
            RelRef::Base(b, id, _) => blob_all(&b.rel_blob(*id), &b.strings),
        }
    }
    pub fn to_data(self) -> RelData {
        RelData { start: self.start(), end: self.end(), ty: self.ty(), props: self.props() }
    }
    /// [`RelRef::to_data`] for a copy a write installs (see [`NodeRef::try_to_data`]).
    pub fn try_to_data(self) -> Result<RelData> {
        let props = match self {
            RelRef::Data(r) => r.props.clone(),
            RelRef::Base(b, id, _) => blob_all(&b.try_blob(true, id)?, &b.strings),
        };
        Ok(RelData { start: self.start(), end: self.end(), ty: self.ty(), props })
    }
}

impl Base {
    pub fn stats(&self) -> &BaseStats {
        &self.stats
    }

    /// The property blob of base node `id`: borrowed from memory, or read from the segment
    /// (a failed read is [noted](Base::note_failure) and reads as no properties).
    #[inline]
    pub(super) fn node_blob(&self, id: u64) -> Cow<'_, [u8]> {
        match &self.paged_props[0] {
            None => Cow::Borrowed(self.node_props.blob(id)),
            Some(p) => self.paged_blob(p, id),
        }
    }

    /// The property blob of base relationship `id` (see [`Base::node_blob`]).
    #[inline]
    pub(super) fn rel_blob(&self, id: u64) -> Cow<'_, [u8]> {
        match &self.paged_props[1] {
            None => Cow::Borrowed(self.rel_props.blob(id)),
            Some(p) => self.paged_blob(p, id),
        }
    }

    /// The property blob of base node (or, with `rel`, relationship) `id`, a failed read
    /// returned rather than noted.
    fn try_blob(&self, rel: bool, id: u64) -> Result<Cow<'_, [u8]>> {
        match &self.paged_props[usize::from(rel)] {
            None if rel => Ok(Cow::Borrowed(self.rel_props.blob(id))),
            None => Ok(Cow::Borrowed(self.node_props.blob(id))),
            Some(p) => {
                let mut buf = Vec::new();
                p.blob_into(id, &mut buf)?;
                Ok(Cow::Owned(buf))
            }
        }
    }

    #[inline(never)]
    fn paged_blob(&self, p: &PagedProps, id: u64) -> Cow<'_, [u8]> {
        let mut buf = Vec::new();
        if let Err(e) = p.blob_into(id, &mut buf) {
            self.note_failure(e);
            buf.clear();
        }
        Cow::Owned(buf)
    }

    /// Value `i` of forward column `mem`, or of its segment column `col` when the forward
    /// columns are paged; a failed read is [noted](Base::note_failure) and reads as `failed`.
    #[inline]
    pub(super) fn fwd_get(
        &self,
        mem: &Packed,
        col: impl Fn(&PagedFwd) -> SegColumn,
        i: u64,
        failed: u64,
    ) -> u64 {
        match &self.fwd {
            None => mem.get(i as usize),
            Some(f) => self.paged_value(f, col(f), i, failed),
        }
    }

    #[inline(never)]
    fn paged_value(&self, f: &PagedFwd, col: SegColumn, i: u64, failed: u64) -> u64 {
        f.get(col, i).unwrap_or_else(|e| {
            self.note_failure(e);
            failed
        })
    }

    /// Keeps the first failed read of a paged blob and counts it.
    #[cold]
    fn note_failure(&self, e: Error) {
        tracing::error!("{}", e.message);
        let _ = self.failure.set(e);
        self.failures.fetch_add(1, Ordering::AcqRel);
    }

    /// How many reads of paged blobs have failed so far (a transaction takes this at its start).
    #[inline]
    pub fn failures(&self) -> u64 {
        let bits = self.paged_nodes.as_ref().map_or(0, |p| p.note.count());
        self.failures.load(Ordering::Acquire) + bits
    }

    /// The first failed read of a paged blob, if any failed after `seen` had (see
    /// [`Base::failures`]): a transaction open at that time may have read a property as
    /// missing, so it must fail rather than answer.
    #[inline]
    pub fn failure_since(&self, seen: u64) -> Option<&Error> {
        if self.failures() > seen {
            self.failure.get().or_else(|| self.paged_nodes.as_ref()?.note.first())
        } else {
            None
        }
    }

    /// Bytes of the value-ordered id arrays built so far (each on its index's first range
    /// seek; not in `stats`, which is fixed when the base is built).
    pub fn ordered_bytes(&self) -> u64 {
        self.ordered.values().filter_map(|c| c.get()).map(|ids| ids.len() as u64 * 8).sum()
    }

    /// Bytes of the integer columns batch reads have built so far (see [`Base::int_column`]).
    pub fn int_column_bytes(&self) -> u64 {
        self.int_cols.lock().values().flatten().map(|c| c.codes.bytes() as u64).sum()
    }

    /// The base nodes' values of property `key` as one integer column, if every base node
    /// holding the key holds an integer (so a batch read of a clean base row is an array
    /// lookup instead of a blob decode). Built on the first call for the key and kept: the
    /// base is immutable. Bulk-loaded numeric properties (ages, years, counters) are the case
    /// this serves; a key with any other value type answers `None` (also kept) and is read
    /// from the blobs.
    pub fn int_column(&self, key: u32) -> Option<Arc<IntColumn>> {
        let mut cols = self.int_cols.lock();
        if let Some(c) = cols.get(&key) {
            return c.clone();
        }
        let c = self.build_int_column(key).map(Arc::new);
        cols.insert(key, c.clone());
        c
    }

    pub(super) fn build_int_column(&self, key: u32) -> Option<IntColumn> {
        let n = self.node_end;
        let (mut min, mut max) = (i64::MAX, i64::MIN);
        for id in 0..n {
            if let Some(v) = blob_int(&self.node_blob(id), key)? {
                min = min.min(v);
                max = max.max(v);
            }
        }
        if min > max {
            // No base node has the key.
            return Some(IntColumn { min: 0, codes: Packed::Const { v: 0, n: n as usize } });
        }
        // Codes are `value - min + 1`; they must fit below u64::MAX.
        if (max as i128 - min as i128) >= i128::from(u64::MAX) {
            return None;
        }
        let mut codes = Vec::with_capacity(n as usize);
        for id in 0..n {
            let code = match blob_int(&self.node_blob(id), key)? {
                Some(v) => (v as i128 - min as i128 + 1) as u64,
                None => 0,
            };
            codes.push(code);
        }
        Some(IntColumn { min, codes: Packed::from_u64(codes) })
    }

    /// The label code of base node slot `id` (0: no node), from memory or through the pool
    /// (a failed read is [noted](Base::note_failure) and reads as no node).
    #[inline]
    pub(super) fn code(&self, id: u64) -> u64 {
        match &self.paged_nodes {
            None => self.label_code.get(id as usize),
            Some(p) => self.paged_code(p, id),
        }
    }

    #[inline(never)]
    fn paged_code(&self, p: &PagedNodes, id: u64) -> u64 {
        p.code(id).unwrap_or_else(|e| {
            self.note_failure(e);
            0
        })
    }

    pub(super) fn labels_of(&self, id: u64) -> &[u32] {
        let code = self.code(id) as usize;
        self.label_sets.get(code).map_or(&[], |s| &s[..])
    }

    /// The code of a base node's label set (`usize::MAX` past the end); see [`Base::label_set`].
    pub(crate) fn node_label_code(&self, id: u64) -> usize {
        if id >= self.node_end {
            return usize::MAX;
        }
        self.code(id) as usize
    }

    /// The label set a [`Base::node_label_code`] stands for (empty for an unknown code).
    pub(crate) fn label_set(&self, code: usize) -> &[u32] {
        self.label_sets.get(code).map_or(&[], |s| &s[..])
    }

    /// Labels of a base node (empty for a hole).
    pub fn node_labels(&self, id: u64) -> &[u32] {
        if id >= self.node_end {
            return &[];
        }
        self.labels_of(id)
    }

    pub fn has_node(&self, id: u64) -> bool {
        id < self.node_end && self.code(id) != 0
    }

    /// Appends to `out` the base nodes with ids in `from..end` (and below the base's end), at
    /// most `max` of them, matching the label codes' packing once; the next id to look at.
    pub fn extend_nodes(&self, from: u64, end: u64, max: usize, out: &mut Vec<NodeId>) -> u64 {
        let stop = end.min(self.node_end);
        if let Some(p) = &self.paged_nodes {
            return self.extend_paged_nodes(p, from, stop, max, out);
        }
        let codes = self.label_code.view();
        let (mut cur, mut left) = (from, max);
        if let PackedView::Const(code, n) = codes {
            // Every slot holds a node of the one label set (or none does): a run of ids.
            let to = stop.min(n as u64).min(cur.saturating_add(max as u64));
            if code != 0 && cur < to {
                out.extend((cur..to).map(NodeId));
                return to;
            }
        }
        while cur < stop && left > 0 {
            if codes.get(cur as usize) != 0 {
                out.push(NodeId(cur));
                left -= 1;
            }
            cur += 1;
        }
        cur
    }

    /// [`Base::extend_nodes`] over label codes read through the pool a chunk at a time.
    #[inline(never)]
    fn extend_paged_nodes(
        &self,
        p: &PagedNodes,
        from: u64,
        stop: u64,
        max: usize,
        out: &mut Vec<NodeId>,
    ) -> u64 {
        let (mut cur, mut left) = (from, max);
        let mut codes = [0u64; super::paged::CHUNK];
        while cur < stop && left > 0 {
            let k = ((stop - cur) as usize).min(codes.len());
            if let Err(e) = p.codes(cur, &mut codes[..k]) {
                self.note_failure(e);
                return stop;
            }
            for c in &codes[..k] {
                if left == 0 {
                    break;
                }
                if *c != 0 {
                    out.push(NodeId(cur));
                    left -= 1;
                }
                cur += 1;
            }
        }
        cur
    }

    pub fn node(&self, id: u64) -> Option<NodeRef<'_>> {
        self.has_node(id).then_some(NodeRef::Base(self, id))
    }

    /// Forward position of a base relationship.
    pub(super) fn pos_of(&self, id: u64) -> Option<u64> {
        if id >= self.rel_end {
            return None;
        }
        let p = self.fwd_get(&self.rel_pos, |f| f.pos, id, self.rel_count);
        (p < self.rel_count).then_some(p)
    }

    pub fn has_rel(&self, id: u64) -> bool {
        self.pos_of(id).is_some()
    }

    pub fn rel(&self, id: u64) -> Option<RelRef<'_>> {
        self.pos_of(id).map(|p| RelRef::Base(self, id, p))
    }

    /// Calls `f(start, type, end)` for every base relationship, in forward (CSR) order: one
    /// walk of the offsets, where [`Base::rel`] finds each start node by a binary search (the
    /// count store of a 21.8 M-relationship import spent most of its time there).
    pub(crate) fn for_each_rel_forward(&self, mut f: impl FnMut(u64, u32, u64)) {
        let off = |n: u64| self.fwd_get(&self.out_off, |f| f.off, n, u64::MAX);
        let mut end = off(0);
        for n in 0..self.node_end {
            let (start, next) = (end, off(n + 1));
            end = next;
            if next == u64::MAX || start == u64::MAX {
                continue; // a failed page read, noted by `fwd_get`
            }
            for pos in start..next.min(self.rel_count) {
                let other = self.fwd_get(&self.out_other, |f| f.other, pos, u64::MAX);
                let ty = self.fwd_get(&self.out_type, |f| f.ty, pos, u64::MAX) as u32;
                f(n, ty, other);
            }
        }
    }

    /// The node whose forward range contains `pos`.
    pub(super) fn out_owner(&self, pos: u64) -> u64 {
        // Largest n with out_off[n] <= pos (empty ranges share offsets; pick the last one).
        let (mut lo, mut hi) = (0u64, self.node_end);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.fwd_get(&self.out_off, |f| f.off, mid, u64::MAX) <= pos {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// `(start, end, type, properties)` of a base relationship. `hint` carries the previous
    /// start node between calls so that a scan in forward order finds start nodes in O(1).
    pub fn rel_scan(&self, id: u64, hint: &mut u64) -> Option<ScannedRel> {
        let pos = self.pos_of(id)?;
        let mut start = None;
        let mut n = *hint;
        let off = |n: u64| self.fwd_get(&self.out_off, |f| f.off, n, u64::MAX);
        if n < self.node_end && off(n) <= pos {
            for _ in 0..16 {
                if pos < off(n + 1) {
                    start = Some(n);
                    break;
                }
                n += 1;
                if n >= self.node_end {
                    break;
                }
            }
        }
        let start = start.unwrap_or_else(|| self.out_owner(pos));
        *hint = start;
        let props = blob_all(&self.rel_blob(id), &self.strings);
        let other = self.fwd_get(&self.out_other, |f| f.other, pos, u64::MAX);
        let ty = self.fwd_get(&self.out_type, |f| f.ty, pos, u64::MAX) as u32;
        Some((start, other, ty, props))
    }

    /// The labels of a base node that no delta version or adjacency shadows (`None`: missing
    /// from the base or dirty), in one lookup of its label code.
    #[inline]
    pub fn clean_node_labels(&self, id: u64) -> Option<&[u32]> {
        if id >= self.node_end || self.node_dirty.get(id) {
            return None;
        }
        let code = self.code(id) as usize;
        if code == 0 {
            return None;
        }
        self.label_sets.get(code).map(|s| &s[..])
    }

    /// Whether any base node may have a delta version (false: every base row is current,
    /// for this snapshot and every later one that reads this answer first).
    #[inline]
    pub fn any_node_dirty(&self) -> bool {
        self.node_dirty.any()
    }

    /// Whether a delta version may exist for the node (otherwise the base row is current).
    pub fn node_dirty(&self, id: u64) -> bool {
        id >= self.node_end || self.node_dirty.get(id)
    }
    pub fn rel_dirty(&self, id: u64) -> bool {
        id >= self.rel_end || self.rel_dirty.get(id)
    }
    pub fn mark_node(&self, id: u64) {
        self.node_dirty.set(id);
    }
    pub fn mark_rel(&self, id: u64) {
        self.rel_dirty.set(id);
    }

    /// Whether no base relationship has a delta version (so every base relationship is
    /// current for any snapshot; the flag only ever goes from false to true).
    #[inline]
    pub fn rels_all_clean(&self) -> bool {
        !self.rel_dirty.any.load(Ordering::Acquire)
    }

    /// Calls `f(rel, other)` for the node's base relationships in one direction whose type is
    /// one of `types` (all if empty): the hot loop of traversals. The columns are decoded a
    /// chunk of entries at a time ([`PackedView::fill`]), so each column's representation is
    /// matched once per chunk instead of once per entry, and a type column that is constant
    /// over the node's range (one relationship type in the base) decides the filter once.
    #[inline]
    pub fn edges_one_dir(
        &self,
        node: u64,
        out: bool,
        types: &[u32],
        f: impl FnMut(u64, u64),
    ) -> Result<()> {
        if let Some(p) = &self.paged {
            return paged_edges(p, node, out, types, f);
        }
        if node >= self.node_end {
            return Ok(());
        }
        let n = node as usize;
        let (off, other, rel, ty) = if out {
            (&self.out_off, &self.out_other, &self.out_rel, &self.out_type)
        } else {
            (&self.in_off, &self.in_other, &self.in_rel, &self.in_type)
        };
        let off = off.view();
        let (a, b) = (off.get(n) as usize, off.get(n + 1) as usize);
        if a >= b {
            return Ok(());
        }
        let (other, rel, ty) = (other.view(), rel.view(), ty.view());
        match (types, ty) {
            ([], _) => edge_run::<false>(a, b, other, rel, ty, |_| true, f),
            (ts, PackedView::Const(t, len)) if b <= len => {
                if ts.contains(&(t as u32)) {
                    edge_run::<false>(a, b, other, rel, ty, |_| true, f)
                }
            }
            ([t], _) => edge_run::<true>(a, b, other, rel, ty, |x| x == u64::from(*t), f),
            (ts, _) => edge_run::<true>(a, b, other, rel, ty, |x| ts.contains(&(x as u32)), f),
        }
        Ok(())
    }

    /// Appends `make(rel, other)` to `dst` for the node's base relationships in one direction
    /// whose type is one of `types` (all if empty), in CSR order: what [`Base::edges_one_dir`]
    /// reports, for callers that collect the entries anyway (a traversal's pending stack).
    /// The columns are read through loops specialised for their usual representations
    /// ([`push_edges`]), so an entry costs a few loads and a store instead of a
    /// representation match per column and entry.
    #[inline]
    pub fn edges_into<T>(
        &self,
        node: u64,
        out: bool,
        types: &[u32],
        dst: &mut Vec<T>,
        make: impl Fn(u64, u64) -> T + Copy,
    ) -> Result<()> {
        if let Some(p) = &self.paged {
            // Out of line, so the resident walk below stays small enough to inline into the
            // traversal loop (the paged branch inlined here cost the tree 4 % instructions).
            return paged_edges(p, node, out, types, |r, o| dst.push(make(r, o)));
        }
        if node >= self.node_end {
            return Ok(());
        }
        let n = node as usize;
        let (off, other, rel, ty) = if out {
            (&self.out_off, &self.out_other, &self.out_rel, &self.out_type)
        } else {
            (&self.in_off, &self.in_other, &self.in_rel, &self.in_type)
        };
        let off = off.view();
        let (a, b) = (off.get(n) as usize, off.get(n + 1) as usize);
        if a >= b {
            return Ok(());
        }
        dst.reserve(b - a);
        push_edges(other.view(), rel.view(), ty.view(), types, a, b, dst, make);
        Ok(())
    }

    /// Calls `f(rel, other, type, outgoing)` for the node's base relationships.
    pub fn edges(
        &self,
        node: u64,
        out: bool,
        inc: bool,
        mut f: impl FnMut(u64, u64, u32, bool),
    ) -> Result<()> {
        if let Some(p) = &self.paged {
            if out {
                p.edges(node, true, true, |r, o, t| f(r, o, t as u32, true))?;
            }
            if inc {
                p.edges(node, false, true, |r, o, t| f(r, o, t as u32, false))?;
            }
            return Ok(());
        }
        if node >= self.node_end {
            return Ok(());
        }
        let n = node as usize;
        if out {
            for p in self.out_off.get(n) as usize..self.out_off.get(n + 1) as usize {
                f(self.out_rel.get(p), self.out_other.get(p), self.out_type.get(p) as u32, true);
            }
        }
        if inc {
            for p in self.in_off.get(n) as usize..self.in_off.get(n + 1) as usize {
                f(self.in_rel.get(p), self.in_other.get(p), self.in_type.get(p) as u32, false);
            }
        }
        Ok(())
    }

    /// The first base node `>= from` that has `label` in the base.
    pub fn next_with_label(&self, label: u32, from: u64) -> Option<u64> {
        self.label_bits.get(&label)?.next_from(from).filter(|id| *id < self.node_end)
    }

    /// The base nodes that have `label` in the base (a superset of the visible ones: dirty
    /// rows must still be checked), and the end of the base's id range; for scans that walk
    /// the bits themselves instead of looking the label up per node.
    pub fn label_bits(&self, label: u32) -> Option<(&Bits, u64)> {
        self.label_bits.get(&label).map(|b| (b, self.node_end))
    }

    /// The first base relationship `>= from` whose type is one of `types`.
    pub fn next_rel_of_types(&self, types: &[u32], from: u64) -> Option<u64> {
        if !types.iter().any(|t| self.rel_types.contains(t)) {
            return None;
        }
        (from..self.rel_end).find(|id| {
            self.pos_of(*id).is_some_and(|p| {
                types.contains(&(self.fwd_get(&self.out_type, |f| f.ty, p, u64::MAX) as u32))
            })
        })
    }

    /// Whether this base has an index on `(label, key)`.
    pub fn indexes(&self, t: &Target) -> bool {
        self.indexes.contains_key(t)
    }

    /// Base nodes whose `(label, key)` value may equal `k` (a superset: hash matches).
    pub fn index_lookup(&self, t: &Target, k: &IndexKey, out: &mut Vec<u64>) {
        let Some(ix) = self.indexes.get(t) else { return };
        if let Err(e) = ix.lookup(key_hash(k), out) {
            self.note_failure(e);
        }
    }

    /// Base nodes whose `(label, key)` value is a string matching `m` (appended to `out`,
    /// unsorted), through the pair's TEXT postings (built here on first use).
    pub fn text_match(&self, t: &Target, m: &crate::text_index::TextMatch, out: &mut Vec<u64>) {
        if !self.indexes.contains_key(t) {
            return;
        }
        let text = self
            .texts
            .lock()
            .entry(t.clone())
            .or_insert_with(|| {
                let (label, key) = (t.0, &t.1[..]);
                let mut pairs = Vec::new();
                let mut cur = 0;
                while let Some(id) = self.next_with_label(label, cur) {
                    if let Some(IndexKey::Str(s)) =
                        self.node(id).and_then(|n| n.key_for(label, key))
                    {
                        pairs.push((s, id));
                    }
                    cur = id + 1;
                }
                Arc::new(crate::text_index::BaseText::build(pairs.into_iter()))
            })
            .clone();
        text.matching(m, out);
    }

    /// The ids of target `t`'s base nodes in key order (built on first use), with a function
    /// giving a node's key.
    fn value_ordered(&self, t: &Target) -> Option<(&[u64], impl Fn(u64) -> Option<IndexKey> + '_)> {
        let cell = self.ordered.get(t)?;
        let (label, key) = (t.0, t.1.clone());
        let key_of = move |id: u64| self.node(id).and_then(|n| n.key_for(label, &key));
        let ids = cell.get_or_init(|| {
            let mut v: Vec<(IndexKey, u64)> = Vec::new();
            let mut cur = 0;
            while let Some(id) = self.next_with_label(label, cur) {
                if let Some(k) = key_of(id) {
                    v.push((k, id));
                }
                cur = id + 1;
            }
            v.sort_unstable();
            v.into_iter().map(|(_, id)| id).collect()
        });
        Some((ids, key_of))
    }

    /// Base nodes whose `(label, key)` value lies in `r` (appended to `out`, in key order).
    pub fn index_range(&self, t: &Target, r: &KeyRange, out: &mut Vec<u64>) {
        let Some((ids, key_of)) = self.value_ordered(t) else { return };
        let start = r.start();
        let from = ids.partition_point(|id| key_of(*id).is_some_and(|k| k < start));
        for &id in &ids[from..] {
            let Some(k) = key_of(id) else { continue };
            if r.past_end(&k) {
                break;
            }
            if r.contains(&k) {
                out.push(id);
            }
        }
    }

    /// Base nodes whose `(label, key)` value is a point inside one of `boxes` (appended to
    /// `out`), walking the value-ordered ids along their Z-order (`crate::point_index`).
    pub fn index_points(
        &self,
        t: &Target,
        boxes: &[crate::point_index::PointBox],
        out: &mut Vec<u64>,
    ) {
        let Some((ids, key_of)) = self.value_ordered(t) else { return };
        for b in boxes {
            crate::point_index::sorted_ids(ids, &key_of, b, out);
        }
    }
}

/// [`Base::edges_one_dir`] and [`Base::edges_into`] on a paged adjacency: the entries of
/// `node` in one direction whose type is one of `types` (all if empty), read through the pool.
#[cold]
#[inline(never)]
fn paged_edges(
    p: &PagedAdj,
    node: u64,
    out: bool,
    types: &[u32],
    mut f: impl FnMut(u64, u64),
) -> Result<()> {
    p.edges(node, out, !types.is_empty(), |r, o, t| {
        if types.is_empty() || types.contains(&(t as u32)) {
            f(r, o)
        }
    })
}
