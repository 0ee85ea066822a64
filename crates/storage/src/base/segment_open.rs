//! A complete segment: the rest of the base beyond adjacency, label codes and properties,
//! which a checkpoint writes to its segment (relationship-id positions, relationship types,
//! interned strings, per-label node bitsets, the hash-ordered index arrays, statistics), and
//! [`Base::from_segment`], which opens a base from the segment alone: its header and meta,
//! then per part (label codes and bitsets, adjacency, index arrays, property blobs) either
//! the column read whole (sequential reads, no decoding) or left in the segment and read
//! through the page cache, as the [`OpenMode`] says. A store opens lazily (everything of
//! O(nodes or relationships) paged) and promotes afterwards (`durability/promote.rs`).
//!
//! Column ids (1–14 in `segments.rs`): 15 relationship-id positions, 16 the meta bytes
//! (below), 17 label bitset words, 18 index words. The value-ordered index arrays, TEXT
//! postings and integer columns are built lazily on first use, as for any base.
//!
//! Meta bytes: version (var, 1); `node_end`, `rel_end`, `rel_count` (u64); relationship
//! types, interned strings, inline keys (counted lists); the ten [`BaseStats`] (var); label
//! bitsets (count, then label, first word, words); indexes (count, then label, key count,
//! keys, kind 0 packed / 1 wide, first word, entries).

use std::sync::{Arc, OnceLock};

use arbor_model::{Error, Result, Status};
use rustc_hash::FxHashMap;

use super::columns::{AtomicBits, Bits, Packed};
use super::graph::{Base, BaseStats};
use super::index::{BaseIndex, PagedIndex};
use super::paged::{PagedAdj, PagedFwd, PagedNodes, PagedProps};
use super::props::PropCol;
use super::segments::{promotion_plan, promotion_room, FWD, IN, LABEL_CODE, LABEL_SETS, OUT};
use super::segments::{LABEL_BITS, NODE_PROPS, REL_POS, REL_PROPS};
use crate::codec::{Dec, Enc};
use crate::pager::pool::BufferPool;
use crate::pager::segment::{ColumnData, ColumnValues, SegColumn, Segment};
use crate::schema::Target;

pub(crate) const META: u8 = 16;
const INDEX_WORDS: u8 = 18;
/// 2: index arrays ordered by the fixed [`super::index::key_hash`]; 1 (read, never written):
/// ordered by `std`'s `DefaultHasher`, so rebuilt at open.
const META_VERSION: u64 = 2;
/// The meta version whose index arrays are ordered by a hash this build no longer uses.
const META_LEGACY_HASH: u64 = 1;

/// What a checkpoint writes for the base beyond [`Base::segment_columns`]' first fourteen
/// columns (owned here, borrowed by the writer).
pub(crate) struct SegExtra {
    meta: Vec<u8>,
    bits: Vec<u64>,
    index: Vec<u64>,
}

impl SegExtra {
    /// Columns 15–18 (`rel_pos` is the base's).
    pub(crate) fn columns<'a>(&'a self, base: &'a Base) -> Vec<(u8, ColumnData<'a>)> {
        vec![
            (REL_POS, super::segments::data(&base.rel_pos)),
            (META, ColumnData::U8(&self.meta)),
            (LABEL_BITS, ColumnData::U64(&self.bits)),
            (INDEX_WORDS, ColumnData::U64(&self.index)),
        ]
    }
}

fn bad(seg: &Segment, what: impl std::fmt::Display) -> Error {
    Error::new(
        Status::Corruption,
        format!("segment file {} is corrupt: {what}", seg.path().display()),
    )
}

fn packed(v: ColumnValues) -> Packed {
    match v {
        ColumnValues::Const(v, n) => Packed::Const { v, n },
        ColumnValues::Seq(first, n) => Packed::Seq { first, n },
        ColumnValues::U8(v) => Packed::U8(v.into_boxed_slice()),
        ColumnValues::U16(v) => Packed::U16(v.into_boxed_slice()),
        ColumnValues::U32(v) => Packed::U32(v.into_boxed_slice()),
        ColumnValues::U64(v) => Packed::U64(v.into_boxed_slice()),
    }
}

fn stats_fields(s: &mut BaseStats) -> [&mut u64; 10] {
    [
        &mut s.nodes,
        &mut s.relationships,
        &mut s.node_properties,
        &mut s.rel_properties,
        &mut s.node_bytes,
        &mut s.node_property_bytes,
        &mut s.rel_bytes,
        &mut s.rel_property_bytes,
        &mut s.index_bytes,
        &mut s.interned_strings,
    ]
}

/// What [`Base::from_segment`] reads whole and what it leaves in the segment, read through
/// the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpenMode {
    /// A store's open: every column of O(nodes or relationships) stays in the segment, so the
    /// open reads the header, the meta, the label-set dictionary and the counts only, whatever
    /// the budget.
    Lazy,
    /// A promotion after the open: the parts the [promotion plan](promotion_plan) keeps
    /// under the pool's budget are read whole, the rest paged.
    Budget,
    /// `arbor check`: everything read whole.
    Resident,
}

/// Which parts of a base [`Base::from_segment`] reads whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Keep {
    pub nodes: bool,
    pub index: bool,
    pub rels: bool,
    pub node_props: bool,
    pub rel_props: bool,
}

/// The decoded sizes of a base's parts in the order a promotion takes them: label codes and
/// bitsets (small, read by every label check and scan), index arrays (every seek), adjacency
/// (every expand), node property blobs, relationship property blobs (the largest, each read
/// touching one entity).
fn part_sizes(s: &BaseStats) -> [u64; 5] {
    [s.node_bytes, s.index_bytes, s.rel_bytes, s.node_property_bytes, s.rel_property_bytes]
}

impl OpenMode {
    /// The parts read whole for a base of (full, in-memory) sizes `s` under a pool of
    /// `budget` bytes.
    pub(crate) fn keeps(self, s: &BaseStats, budget: u64) -> Keep {
        let k = match self {
            OpenMode::Lazy => [false; 5],
            OpenMode::Budget => promotion_plan(part_sizes(s), promotion_room(budget)),
            OpenMode::Resident => [true; 5],
        };
        Keep { nodes: k[0], index: k[1], rels: k[2], node_props: k[3], rel_props: k[4] }
    }
}

impl Keep {
    fn parts(&self) -> [bool; 5] {
        [self.nodes, self.index, self.rels, self.node_props, self.rel_props]
    }

    /// The decoded bytes of the parts kept, of a base of sizes `s`.
    pub(crate) fn bytes(&self, s: &BaseStats) -> u64 {
        part_sizes(s).iter().zip(self.parts()).filter(|(_, k)| *k).map(|(b, _)| b).sum()
    }
}

/// Whether `seg` is complete: a base opens from it without the decoded checkpoint.
pub(crate) fn is_complete(seg: &Segment) -> bool {
    [REL_POS, META, LABEL_BITS, INDEX_WORDS, NODE_PROPS[1], REL_PROPS[1]]
        .iter()
        .all(|c| seg.column(*c).is_some())
}

impl Base {
    /// How many label sets the dictionary holds (code 0, no node, included).
    pub(crate) fn label_set_count(&self) -> usize {
        self.label_sets.len()
    }

    /// The meta bytes, bitset words and index words of this base.
    pub(crate) fn segment_extra(&self) -> Result<SegExtra> {
        self.extra_with(META_VERSION, None)
    }

    /// [`Base::segment_extra`] as meta version 1 wrote it: index arrays ordered by `std`'s
    /// `DefaultHasher` (tests of the conversion).
    #[cfg(test)]
    pub(crate) fn legacy_segment_extra(&self) -> Result<SegExtra> {
        let legacy = super::index::legacy_key_hash;
        let rebuilt: FxHashMap<Target, BaseIndex> = (self.indexes.keys())
            .map(|t| (t.clone(), BaseIndex::build_with(self, t.0, &t.1, legacy)))
            .collect();
        self.extra_with(META_LEGACY_HASH, Some(&rebuilt))
    }

    /// The meta of `version`, with the index arrays of `arrays` in place of the base's own.
    fn extra_with(
        &self,
        version: u64,
        arrays: Option<&FxHashMap<Target, BaseIndex>>,
    ) -> Result<SegExtra> {
        let mut e = Enc::new();
        e.var(version);
        e.u64(self.node_end);
        e.u64(self.rel_end);
        e.u64(self.rel_count);
        for list in [&self.rel_types, &self.inline_keys] {
            e.var(list.len() as u64);
            list.iter().for_each(|t| e.var(u64::from(*t)));
        }
        e.var(self.strings.len() as u64);
        self.strings.iter().for_each(|s| e.str(s));
        let mut stats = self.stats.clone();
        stats_fields(&mut stats).into_iter().for_each(|v| e.var(*v));
        let mut bits = Vec::new();
        let mut labels: Vec<_> = self.label_bits.iter().collect();
        labels.sort_unstable_by_key(|(l, _)| **l);
        e.var(labels.len() as u64);
        for (l, b) in labels {
            e.var(u64::from(*l));
            e.var(bits.len() as u64);
            let words = b.all_words()?;
            e.var(words.len() as u64);
            bits.extend_from_slice(&words);
        }
        let mut index = Vec::new();
        let mut targets: Vec<_> = self.indexes.iter().collect();
        targets.sort_unstable_by(|a, b| a.0.cmp(b.0));
        e.var(targets.len() as u64);
        for (t, ix) in targets {
            let ((label, keys), ix) = (t, arrays.and_then(|a| a.get(t)).unwrap_or(ix));
            e.var(u64::from(*label));
            e.var(keys.len() as u64);
            keys.iter().for_each(|k| e.var(u64::from(*k)));
            e.var(index.len() as u64);
            match ix {
                BaseIndex::Packed(v) => {
                    e.u8(0);
                    e.var(v.len() as u64);
                    index.extend_from_slice(v);
                }
                BaseIndex::Wide(v) => {
                    e.u8(1);
                    e.var(v.len() as u64);
                    v.iter().for_each(|(h, id)| index.extend([u64::from(*h), *id]));
                }
                BaseIndex::Paged(p) => {
                    e.u8(u8::from(p.wide));
                    e.var(p.n);
                    index.extend(p.words()?);
                }
            }
        }
        Ok(SegExtra { meta: e.buf, bits, index })
    }

    /// Opens the base of complete segment `seg` (see the module docs). The label-set
    /// dictionary, strings, relationship types and the meta are read whole; what else is read
    /// whole and what stays in the segment, read through `pool`, `mode` decides per part
    /// (label codes and bitsets, adjacency with relationship positions, index arrays, property
    /// blobs). Indexes of `pairs` the segment lacks are built. Every page read is verified;
    /// damage is `Corruption` naming file and page.
    pub(crate) fn from_segment(
        seg: &Arc<Segment>,
        pool: &Arc<BufferPool>,
        pairs: &[Target],
        mode: OpenMode,
    ) -> Result<Base> {
        let col = |id: u8| seg.column(id).ok_or_else(|| bad(seg, format!("no column {id}")));
        let read = |id: u8| -> Result<Packed> { Ok(packed(seg.read_column(col(id)?)?)) };
        let m = read_meta(seg)?;
        let mut stats = m.stats.clone();
        let keep = mode.keeps(&m.stats, pool.budget());
        let page_nodes = !keep.nodes;
        let (label_code, label_bits, paged_nodes) = if page_nodes {
            let (bits, nodes) = paged_labels(seg, pool, &m)?;
            stats.node_bytes = stats.node_bytes.saturating_sub(col(LABEL_CODE)?.bytes());
            let words: u64 = m.bits.iter().map(|b| b.2 as u64 * 8).sum();
            stats.node_bytes = stats.node_bytes.saturating_sub(words);
            (Packed::default(), bits, Some(nodes))
        } else {
            let (code, bits) = resident_labels(seg, &m)?;
            (code, bits, None)
        };
        let (page_adj, page_ix) = (!keep.rels, !keep.index);
        let [out_off, out_other, out_type, rel_pos] = if page_adj {
            Default::default()
        } else {
            [read(FWD[0])?, read(FWD[1])?, read(FWD[2])?, read(FWD[3])?]
        };
        let mut base = Base {
            ts: seg.ts,
            node_end: m.node_end,
            label_code,
            label_sets: label_sets(seg, &read(LABEL_SETS)?)?,
            label_bits,
            node_props: PropCol::default(),
            rel_end: m.rel_end,
            rel_count: m.rel_count,
            rel_pos,
            rel_props: PropCol::default(),
            out_off,
            out_other,
            out_rel: Packed::default(),
            out_type,
            in_off: Packed::default(),
            in_other: Packed::default(),
            in_rel: Packed::default(),
            in_type: Packed::default(),
            rel_types: m.rel_types.clone(),
            strings: m.strings.clone(),
            inline_keys: m.inline_keys.clone(),
            indexes: FxHashMap::default(),
            ordered: FxHashMap::default(),
            texts: Default::default(),
            int_cols: parking_lot::Mutex::new(FxHashMap::default()),
            node_dirty: AtomicBits::new(m.node_end),
            rel_dirty: AtomicBits::new(m.rel_end),
            stats: BaseStats::default(),
            paged: None,
            fwd: None,
            paged_props: [None, None],
            paged_nodes,
            failure: OnceLock::new(),
            failures: std::sync::atomic::AtomicU64::new(0),
        };
        let words = col(INDEX_WORDS)?;
        let idx = if page_ix { Vec::new() } else { read_words(seg, words)? };
        // Arrays ordered by the old hash are left out: the indexes of `pairs` are then
        // rebuilt below, and the next checkpoint stores them in this version.
        let stored = if m.version == META_LEGACY_HASH { &[][..] } else { &m.indexes[..] };
        for (target, wide, from, n) in stored {
            let ix = if page_ix {
                paged_index(seg, pool, words, *wide, *from, *n)
            } else {
                index_of(&idx, *wide, *from, *n)
            };
            let ix = ix.ok_or_else(|| bad(seg, "a cut index"))?;
            base.indexes.insert(target.clone(), ix);
            base.ordered.insert(target.clone(), OnceLock::new());
        }
        if page_ix {
            stats.index_bytes = 0;
        }
        if !page_adj {
            base.out_rel = read(OUT[2])?;
            [base.in_off, base.in_other, base.in_rel, base.in_type] =
                [read(IN[0])?, read(IN[1])?, read(IN[2])?, read(IN[3])?];
        } else {
            let freed: u64 = [OUT[2], IN[0], IN[1], IN[2], IN[3]]
                .iter()
                .chain(&FWD)
                .map(|c| col(*c).map(|c| c.bytes()))
                .sum::<Result<u64>>()?;
            stats.rel_bytes = stats.rel_bytes.saturating_sub(freed);
            let (nodes, rels) = (base.node_end, base.rel_count);
            base.paged = Some(PagedAdj::new(seg.clone(), pool.clone(), (OUT, IN), nodes, rels)?);
            let fwd = PagedFwd::new(seg.clone(), pool.clone(), FWD, nodes, rels)?;
            base.fwd = Some(fwd.ok_or_else(|| bad(seg, "no relationship positions"))?);
        }
        for (i, ids) in [NODE_PROPS, REL_PROPS].into_iter().enumerate() {
            if [keep.node_props, keep.rel_props][i] {
                let ColumnValues::U8(arena) = seg.read_column(col(ids[1])?)? else {
                    return Err(bad(seg, "property bytes of another width"));
                };
                let p = PropCol { off: read(ids[0])?, arena: arena.into_boxed_slice() };
                *[&mut base.node_props, &mut base.rel_props][i] = p;
            } else {
                let (off, arena) = (col(ids[0])?.len(), col(ids[1])?.len());
                let p = PagedProps::new(seg.clone(), pool.clone(), ids, off, arena)?;
                base.paged_props[i] = Some(p.ok_or_else(|| bad(seg, "no property columns"))?);
                let freed = col(ids[0])?.bytes() + col(ids[1])?.bytes();
                if i == 1 {
                    stats.rel_property_bytes = 0;
                } else {
                    stats.node_property_bytes = stats.node_property_bytes.saturating_sub(freed);
                }
            }
        }
        // Indexes the segment lacks (its checkpoint's schema had a rule its fold no longer
        // had, or a version-1 segment's) are built last: they read every node's properties,
        // which must be attached (in memory or paged) by now.
        let missing: Vec<&Target> =
            pairs.iter().filter(|t| !base.indexes.contains_key(*t)).collect();
        for t in missing {
            let ix = BaseIndex::build(&base, t.0, &t.1);
            base.indexes.insert(t.clone(), ix);
            base.ordered.insert(t.clone(), OnceLock::new());
        }
        base.stats = stats;
        Ok(base)
    }

    /// The decoded bytes an open of complete segment `seg` in [`OpenMode::Budget`] under
    /// `budget` would read whole that this base pages (0: a promotion changes nothing;
    /// [`crate::durability::promote`]).
    pub(crate) fn promotion_bytes(&self, seg: &Segment, budget: u64) -> Result<u64> {
        if seg.ts != self.ts {
            return Ok(0);
        }
        let s = read_meta(seg)?.stats;
        let keep = OpenMode::Budget.keeps(&s, budget);
        let index_paged = self.indexes.values().any(|ix| matches!(ix, BaseIndex::Paged(_)));
        let paged = Keep {
            nodes: self.paged_nodes.is_some(),
            index: index_paged,
            rels: self.paged.is_some(),
            node_props: self.paged_props[0].is_some(),
            rel_props: self.paged_props[1].is_some(),
        };
        let parts = part_sizes(&s).into_iter().zip(keep.parts()).zip(paged.parts());
        Ok(parts.filter(|((_, k), p)| *k && *p).map(|((b, _), _)| b).sum())
    }

    /// The decoded bytes of the parts an open of complete segment `seg` in
    /// [`OpenMode::Budget`] under `budget` reads whole: what its promotion holds in memory.
    /// The statistics of the whole base `seg` holds (a lazily opened or paged base's own
    /// [`Base::stats`] count only what it keeps in memory).
    pub(crate) fn segment_stats(seg: &Segment) -> Result<BaseStats> {
        Ok(read_meta(seg)?.stats)
    }

    pub(crate) fn promoted_bytes(seg: &Segment, budget: u64) -> Result<u64> {
        let s = read_meta(seg)?.stats;
        Ok(OpenMode::Budget.keeps(&s, budget).bytes(&s))
    }

    /// The `(label, keys)` of every index this base holds.
    pub(crate) fn index_targets(&self) -> Vec<Target> {
        self.indexes.keys().cloned().collect()
    }

    /// Copies the dirty bits of `other` (a base of the same commit this one replaces).
    pub(crate) fn copy_dirty(&self, other: &Base) {
        self.node_dirty.copy_from(&other.node_dirty);
        self.rel_dirty.copy_from(&other.rel_dirty);
    }

    /// `arbor check` of a base opened whole from its segment: the stored index arrays and
    /// label bitsets against ones rebuilt from the base's own labels and properties.
    pub(crate) fn check_derived(&self, max: usize) -> Vec<String> {
        let mut diffs = Vec::new();
        for ((label, keys), ix) in &self.indexes {
            let again = BaseIndex::build(self, *label, keys);
            if !same_index(ix, &again) {
                diffs.push(format!("index on label {label} keys {keys:?} differs from its data"));
            }
        }
        for (l, b) in &self.label_bits {
            let words = match b.all_words() {
                Ok(w) => w,
                Err(e) => {
                    diffs.push(e.message);
                    continue;
                }
            };
            let mut want = Bits::default();
            (0..self.node_end)
                .filter(|id| self.has_node(*id) && self.node_labels(*id).contains(l))
                .for_each(|id| want.set(id));
            let trim = |w: &[u64]| w.len() - w.iter().rev().take_while(|x| **x == 0).count();
            if words[..trim(&words)] != want.words[..trim(&want.words)] {
                diffs.push(format!("label {l}: node bitset differs from the label codes"));
            }
        }
        if let Err(e) = self.check_directions(&mut diffs) {
            diffs.push(e.message);
        }
        diffs.truncate(max);
        diffs
    }

    /// Outgoing and incoming adjacency list the same relationships, each where its
    /// relationship-id position says.
    fn check_directions(&self, diffs: &mut Vec<String>) -> Result<()> {
        let (mut fwd, mut bwd) = (Vec::new(), Vec::new());
        for id in 0..self.node_end {
            self.edges(id, true, false, |r, o, t, _| fwd.push((r, id, o, t)))?;
            self.edges(id, false, true, |r, o, t, _| bwd.push((r, o, id, t)))?;
        }
        fwd.sort_unstable();
        bwd.sort_unstable();
        if fwd != bwd {
            diffs.push("outgoing and incoming adjacency differ".to_string());
        }
        if let Some((r, ..)) = fwd.iter().find(|(r, a, b, t)| {
            self.rel(*r).map(|x| (x.start(), x.end(), x.ty())) != Some((*a, *b, *t))
        }) {
            diffs.push(format!("relationship {r}: its position differs from the adjacency"));
        }
        Ok(())
    }
}

/// The decoded meta column of complete segment `seg`, its version checked.
fn read_meta(seg: &Segment) -> Result<Meta> {
    let col = seg.column(META).ok_or_else(|| bad(seg, "no meta"))?;
    let ColumnValues::U8(meta) = seg.read_column(col)? else {
        return Err(bad(seg, "meta column of another width"));
    };
    let m = decode_meta(&meta).map_err(|e| bad(seg, format!("meta: {}", e.message)))?;
    if m.version != META_VERSION && m.version != META_LEGACY_HASH {
        return Err(bad(seg, format!("meta version {} (this build reads 1 and 2)", m.version)));
    }
    Ok(m)
}

/// The label codes and label bitsets of complete segment `seg` (meta `m`), read whole.
fn resident_labels(seg: &Segment, m: &Meta) -> Result<(Packed, FxHashMap<u32, Bits>)> {
    let col = |id: u8| seg.column(id).ok_or_else(|| bad(seg, format!("no column {id}")));
    let label_code = packed(seg.read_column(col(LABEL_CODE)?)?);
    if label_code.len() as u64 != m.node_end {
        return Err(bad(seg, "label codes do not match the node count"));
    }
    let words = read_words(seg, col(LABEL_BITS)?)?;
    let mut label_bits = FxHashMap::default();
    for (l, from, n) in &m.bits {
        let w = words.get(*from..from + n).ok_or_else(|| bad(seg, "a cut label bitset"))?;
        label_bits.insert(*l, Bits { words: w.to_vec(), paged: None });
    }
    Ok((label_code, label_bits))
}

/// The meta version of complete segment `seg` (tests of the conversion).
#[cfg(test)]
pub(crate) fn meta_version(seg: &Segment) -> Result<u64> {
    let c = seg.column(META).ok_or_else(|| bad(seg, "no meta"))?;
    let ColumnValues::U8(meta) = seg.read_column(c)? else {
        return Err(bad(seg, "meta column of another width"));
    };
    Ok(decode_meta(&meta)?.version)
}

fn same_index(a: &BaseIndex, b: &BaseIndex) -> bool {
    match (a, b) {
        (BaseIndex::Packed(x), BaseIndex::Packed(y)) => x == y,
        (BaseIndex::Wide(x), BaseIndex::Wide(y)) => x == y,
        _ => false,
    }
}

fn read_words(seg: &Segment, c: SegColumn) -> Result<Vec<u64>> {
    Ok(match seg.read_column(c)? {
        ColumnValues::U64(v) => v,
        ColumnValues::Const(_, 0) | ColumnValues::Seq(_, 0) => Vec::new(),
        _ => return Err(bad(seg, "a word column of another width")),
    })
}

fn index_of(words: &[u64], wide: bool, from: usize, n: usize) -> Option<BaseIndex> {
    if wide {
        let w = words.get(from..from.checked_add(n.checked_mul(2)?)?)?;
        let v = w.chunks_exact(2).map(|p| (p[0] as u32, p[1])).collect();
        Some(BaseIndex::Wide(v))
    } else {
        Some(BaseIndex::Packed(words.get(from..from.checked_add(n)?)?.into()))
    }
}

/// Entries `from..from + n` of index words column `col`, left in the segment (`None`: past
/// the column's end).
fn paged_index(
    seg: &Arc<Segment>,
    pool: &Arc<BufferPool>,
    col: SegColumn,
    wide: bool,
    from: usize,
    n: usize,
) -> Option<BaseIndex> {
    let words = if wide { n.checked_mul(2)? } else { n };
    if from.checked_add(words)? as u64 > col.len() {
        return None;
    }
    let (seg, pool, from, n) = (seg.clone(), pool.clone(), from as u64, n as u64);
    Some(BaseIndex::Paged(PagedIndex { seg, pool, col, from, n, wide }))
}

/// The label codes and label bitsets of complete segment `seg` (meta `m`), left in the
/// segment and read through `pool`.
fn paged_labels(
    seg: &Arc<Segment>,
    pool: &Arc<BufferPool>,
    m: &Meta,
) -> Result<(FxHashMap<u32, Bits>, PagedNodes)> {
    let nodes = PagedNodes::new(seg.clone(), pool.clone(), LABEL_CODE, m.node_end)?;
    let col = seg.column(LABEL_BITS).ok_or_else(|| bad(seg, "no label bitsets"))?;
    let mut label_bits = FxHashMap::default();
    for (l, from, n) in &m.bits {
        let w = nodes.words(col, *from as u64, *n as u64);
        let w = w.ok_or_else(|| bad(seg, "a cut label bitset"))?;
        label_bits.insert(*l, Bits { words: Vec::new(), paged: Some(Box::new(w)) });
    }
    Ok((label_bits, nodes))
}

/// The label-set dictionary from column 10's flattened words.
fn label_sets(seg: &Segment, flat: &Packed) -> Result<Vec<Box<[u32]>>> {
    let mut sets = Vec::new();
    let (mut i, len) = (0, flat.len());
    while i < len {
        let n = flat.get(i) as usize;
        if n > len - i - 1 {
            return Err(bad(seg, "a cut label set"));
        }
        sets.push((i + 1..i + 1 + n).map(|k| flat.get(k) as u32).collect());
        i += 1 + n;
    }
    Ok(sets)
}

type IndexEntry = (Target, bool, usize, usize);

struct Meta {
    version: u64,
    node_end: u64,
    rel_end: u64,
    rel_count: u64,
    rel_types: Vec<u32>,
    inline_keys: Vec<u32>,
    strings: Vec<Arc<str>>,
    stats: BaseStats,
    bits: Vec<(u32, usize, usize)>,
    indexes: Vec<IndexEntry>,
}

fn decode_meta(b: &[u8]) -> Result<Meta> {
    let mut d = Dec::new(b);
    let version = d.var()?;
    let (node_end, rel_end, rel_count) = (d.u64()?, d.u64()?, d.u64()?);
    let mut lists = [Vec::new(), Vec::new()];
    for l in &mut lists {
        for _ in 0..d.count(1)? {
            l.push(d.var_u32()?);
        }
    }
    let [rel_types, inline_keys] = lists;
    let mut strings = Vec::new();
    for _ in 0..d.count(1)? {
        strings.push(Arc::from(d.str()?));
    }
    let mut stats = BaseStats::default();
    for v in stats_fields(&mut stats) {
        *v = d.var()?;
    }
    let mut bits = Vec::new();
    for _ in 0..d.count(3)? {
        bits.push((d.var_u32()?, d.var()? as usize, d.var()? as usize));
    }
    let mut indexes = Vec::new();
    for _ in 0..d.count(5)? {
        let label = d.var_u32()?;
        let mut keys = Vec::new();
        for _ in 0..d.count(1)? {
            keys.push(d.var_u32()?);
        }
        let from = d.var()? as usize;
        let wide = d.u8()? != 0;
        indexes.push(((label, keys), wide, from, d.var()? as usize));
    }
    Ok(Meta {
        version,
        node_end,
        rel_end,
        rel_count,
        rel_types,
        inline_keys,
        strings,
        stats,
        bits,
        indexes,
    })
}
