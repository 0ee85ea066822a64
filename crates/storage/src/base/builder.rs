//! [`BaseBuilder`]: builds a [`Base`] from entities fed in ascending id order (nodes, then
//! relationships), choosing column representations and interned strings at the end.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arbor_model::Value;
use rustc_hash::FxHashMap;

use crate::schema::Target;

use super::backward::BackwardStream;
use super::blob_spill::{BlobArena, SpilledBlobs};
use super::columns::{AtomicBits, Bits, Packed, PackedBuilder, Wide};
use super::degree_spill::{CsrOffsets, DegreeSpill};
use super::fwd_spill::{ColSpill, EndCol, ForwardSpill, SpilledCol};
use super::graph::{Base, BaseStats};
use super::index::{key_hash, BaseIndex};
use super::node_cols::{LabelCodes, NodeOffsets, SpilledOffsets};
use super::streams::SegmentStreams;
use crate::codec::Dec;
use crate::vfs::Vfs;

use super::props::{blob_entries, put_encoded_props, put_props, rewrite_blob, Interner, PropCol};

// ------------------------------------------------------------------------------ building

/// Builds a [`Base`] from entities fed in ascending id order (nodes first, then relationships).
pub(crate) struct BaseBuilder {
    pub(super) ts: u64,
    /// The ts of the base this builder extends ([`BaseBuilder::extending`]).
    pub(super) extends_ts: Option<u64>,
    pub(super) interner: Interner,
    pub(super) label_code: LabelCodes,
    /// Some id below the last node's has no node (a 0 code): only then does a relationship's
    /// end check read the code column (at random for the ends: a cache miss per relationship
    /// at B2B 1.0, most of linking's time).
    node_holes: bool,
    pub(super) set_ids: FxHashMap<Vec<u32>, u32>,
    pub(super) sets: Vec<Box<[u32]>>,
    pub(super) label_bits: FxHashMap<u32, Bits>,
    pub(super) node_off: NodeOffsets,
    pub(super) node_arena: BlobArena,
    pub(super) node_count: u64,
    pub(super) node_props: u64,
    pub(super) rel_ids: PackedBuilder,
    /// Start nodes, only materialized once relationships stop arriving in start order
    /// (until then `out_count` alone describes them).
    pub(super) rel_start: Option<PackedBuilder>,
    pub(super) last_start: u64,
    pub(super) rel_endp: EndCol,
    pub(super) rel_type: TypeCol,
    /// Per-node relationship counts by direction (allocated at the first relationship).
    pub(super) out_count: Option<Wide>,
    pub(super) in_count: Option<Wide>,
    /// The out-degrees in a scratch file instead (`degree_spill.rs`; the counts are `None`).
    pub(super) degrees: Option<DegreeSpill>,
    pub(super) rel_off: PackedBuilder,
    pub(super) rel_arena: Vec<u8>,
    pub(super) rel_props: u64,
    /// A label list being decoded ([`BaseBuilder::node_encoded`]).
    scratch: Vec<u32>,
    /// The first error reading spilled forward columns back (`fwd_spill.rs`).
    fwd_error: Option<(PathBuf, io::Error)>,
}

/// Reads a label list in checkpoint encoding (ascending) into `out`.
fn read_labels(d: &mut Dec<'_>, out: &mut Vec<u32>) -> bool {
    let Ok(n) = d.count(1) else { return false };
    for _ in 0..n {
        match d.var_u32() {
            Ok(l) if out.last().is_none_or(|p| *p < l) => out.push(l),
            _ => return false,
        }
    }
    true
}

impl BaseBuilder {
    pub fn new(ts: u64) -> BaseBuilder {
        let mut node_off = NodeOffsets::default();
        node_off.push(0);
        let mut rel_off = PackedBuilder::default();
        rel_off.push(0);
        BaseBuilder {
            ts,
            extends_ts: None,
            interner: Interner::default(),
            label_code: LabelCodes::default(),
            node_holes: false,
            set_ids: FxHashMap::default(),
            sets: vec![Box::new([])],
            label_bits: FxHashMap::default(),
            node_off,
            node_arena: BlobArena::default(),
            node_count: 0,
            node_props: 0,
            rel_ids: PackedBuilder::default(),
            rel_start: None,
            last_start: 0,
            rel_endp: EndCol::default(),
            rel_type: TypeCol::default(),
            out_count: None,
            in_count: None,
            degrees: None,
            rel_off,
            rel_arena: Vec::new(),
            rel_props: 0,
            scratch: Vec::new(),
            fwd_error: None,
        }
    }

    /// A builder for a base that extends `old` (an incremental fold): it starts with `old`'s
    /// label sets and string table at the same codes and indexes, so that rows of `old` that
    /// nobody wrote since can be copied as they are ([`BaseBuilder::node_copy`]) instead of
    /// being decoded into values and encoded again.
    pub fn extending(ts: u64, old: &Base) -> BaseBuilder {
        let mut b = BaseBuilder::new(ts);
        b.interner = Interner::extending(old);
        b.extends_ts = Some(old.ts);
        b.sets = old.label_sets.clone();
        b.set_ids =
            b.sets.iter().enumerate().skip(1).map(|(i, s)| (s.to_vec(), i as u32)).collect();
        b
    }

    /// Whether this builder was made by [`BaseBuilder::extending`] from `old`.
    pub fn extends(&self, old: &Base) -> bool {
        self.extends_ts == Some(old.ts)
    }

    /// Adds node `id` exactly as `old` holds it (its label code and property blob, copied as
    /// bytes). Only for a builder made by [`BaseBuilder::extending`] from `old`, and only for a
    /// node `old` has; the same ordering rules as [`BaseBuilder::node`].
    pub fn node_copy(&mut self, id: u64, old: &Base) -> bool {
        let next = self.label_code.len() as u64;
        if id < next || self.out_count.is_some() || !old.has_node(id) {
            return false;
        }
        for _ in next..id {
            self.label_code.push(0);
            self.node_off.push(self.node_arena.len());
            self.node_holes = true;
        }
        let code = old.label_code.get(id as usize);
        self.label_code.push(code);
        for l in old.label_sets.get(code as usize).map_or(&[][..], |s| &s[..]) {
            self.label_bits.entry(*l).or_default().set(id);
        }
        let blob = old.node_blob(id);
        self.node_arena.buf.extend_from_slice(&blob);
        self.node_end_row(blob_entries(&blob));
        true
    }

    /// Adds a node before any relationship; ids must ascend. Returns `false` (ignoring it)
    /// otherwise.
    pub fn node(&mut self, id: u64, labels: &[u32], props: &[(u32, Value)]) -> bool {
        if !self.node_head(id, labels) {
            return false;
        }
        put_props(&mut self.node_arena.buf, props, &mut self.interner);
        self.node_end_row(props.len() as u64);
        true
    }

    /// [`BaseBuilder::node`] of a record in checkpoint encoding (a label list, then a property
    /// list: what `bulk::encode_labels` and `bulk::encode_props` write), transcoded to the blob
    /// without building values. Returns `false` (ignoring the rest) for a record that does not
    /// decode, or the ordering rules of [`BaseBuilder::node`].
    pub fn node_encoded(&mut self, id: u64, rec: &[u8]) -> bool {
        let mut d = Dec::new(rec);
        let mut labels = std::mem::take(&mut self.scratch);
        labels.clear();
        let ok = read_labels(&mut d, &mut labels) && self.node_head(id, &labels);
        self.scratch = labels;
        if !ok {
            return false;
        }
        let arena_len = self.node_arena.len();
        match put_encoded_props(&mut self.node_arena.buf, &mut d, &mut self.interner) {
            Some(n) if d.is_empty() => {
                self.node_end_row(n);
                true
            }
            _ => {
                // Leave a well-formed row behind (the caller fails the import on `false`).
                self.node_arena.truncate(arena_len);
                self.node_end_row(0);
                false
            }
        }
    }

    /// The row of node `id` but its properties: holes before it, its label code and bits.
    fn node_head(&mut self, id: u64, labels: &[u32]) -> bool {
        let next = self.label_code.len() as u64;
        if id < next || self.out_count.is_some() {
            return false;
        }
        for _ in next..id {
            self.label_code.push(0);
            self.node_off.push(self.node_arena.len());
            self.node_holes = true;
        }
        let code = match self.set_ids.get(labels) {
            Some(c) => *c,
            None => {
                let c = self.sets.len() as u32;
                self.sets.push(labels.into());
                self.set_ids.insert(labels.to_vec(), c);
                c
            }
        };
        self.label_code.push(u64::from(code));
        for l in labels {
            self.label_bits.entry(*l).or_default().set(id);
        }
        true
    }

    fn node_end_row(&mut self, props: u64) {
        self.node_off.push(self.node_arena.len());
        self.node_arena.row_end();
        self.node_count += 1;
        self.node_props += props;
    }

    /// Writes the node property blobs to a new scratch file at `path` as they are built, a
    /// `chunk` of bytes at a time, instead of holding them (`base/blob_spill.rs`); before any
    /// node only. The base must then be finished by [`BaseBuilder::finish_streamed`] and
    /// written with its streams. Their offsets go to a second scratch file beside it
    /// (`path` with the extension `offsets`; `base/node_cols.rs`) unless the blobs are
    /// re-coded (the offsets then come back into memory).
    pub fn spill_node_blobs(
        &mut self,
        vfs: Arc<dyn Vfs>,
        path: PathBuf,
        chunk: usize,
    ) -> io::Result<()> {
        if self.label_code.len() != 0 {
            return Err(io::Error::other("node blobs spill only from the first node"));
        }
        self.node_off.spill_to(vfs.clone(), path.with_extension("offsets"), chunk)?;
        self.node_arena.spill_to(vfs, path, chunk)
    }

    /// The scratch file of the node blobs and the first error writing it (the build has
    /// failed: later blobs were dropped).
    pub fn spill_error(&self) -> Option<(&Path, &io::Error)> {
        (self.node_arena.error())
            .or(self.node_off.error())
            .or(self.fwd_error.as_ref().map(|(p, e)| (p.as_path(), e)))
            .or(self.rel_endp.error())
            .or(self.rel_type.spill.as_ref().and_then(ColSpill::error))
            .or(self.degrees.as_ref().and_then(DegreeSpill::error))
    }

    /// Writes the forward neighbour and type columns to new scratch files at `paths` as
    /// relationships are fed, `chunk` bytes at a time, instead of holding them
    /// (`base/fwd_spill.rs`); before any relationship only. The base must then be finished
    /// by [`BaseBuilder::finish_streamed`] and written with its streams. The degree counts
    /// and CSR offsets go to two more scratch files beside the first (extensions
    /// `out-degrees` and `in-degrees`; `base/degree_spill.rs`). Relationships fed out of start
    /// order bring the columns and counts back into memory.
    pub fn spill_forward(
        &mut self,
        vfs: Arc<dyn Vfs>,
        paths: [PathBuf; 2],
        chunk: usize,
    ) -> io::Result<()> {
        if self.rel_ids.len() != 0 || self.rel_type.spill.is_some() {
            return Err(io::Error::other("forward columns spill only from the first relationship"));
        }
        let [other, ty] = paths;
        let (out_deg, in_deg) =
            (other.with_extension("out-degrees"), other.with_extension("in-degrees"));
        self.degrees = Some(DegreeSpill::create(vfs.clone(), out_deg, in_deg, chunk)?);
        self.rel_endp.spill_to(vfs.clone(), other, chunk)?;
        self.rel_type.spill = Some(ColSpill::create(vfs, ty, 1, chunk)?);
        Ok(())
    }

    /// Whether the forward neighbours and the degree counts are in scratch files now (spilled
    /// and still in start order): the segment stage then holds little per relationship.
    pub fn forward_spilled(&self) -> bool {
        self.rel_endp.is_spilled() && self.degrees.is_some()
    }

    /// Adds a relationship after all nodes; ids must ascend and both ends must have been added.
    /// Returns `false` (ignoring it) otherwise.
    pub fn rel(&mut self, id: u64, start: u64, end: u64, ty: u32, props: &[(u32, Value)]) -> bool {
        if !self.rel_head(id, start, end, ty) {
            return false;
        }
        put_props(&mut self.rel_arena, props, &mut self.interner);
        self.rel_off.push(self.rel_arena.len() as u64);
        self.rel_props += props.len() as u64;
        true
    }

    /// [`BaseBuilder::rel`] with the properties in checkpoint encoding (see
    /// [`BaseBuilder::node_encoded`]).
    pub fn rel_encoded(&mut self, id: u64, start: u64, end: u64, ty: u32, props: &[u8]) -> bool {
        if !self.rel_head(id, start, end, ty) {
            return false;
        }
        let mut d = Dec::new(props);
        let arena_len = self.rel_arena.len();
        let n = match put_encoded_props(&mut self.rel_arena, &mut d, &mut self.interner) {
            Some(n) if d.is_empty() => n,
            _ => {
                self.rel_arena.truncate(arena_len);
                self.rel_off.push(arena_len as u64);
                return false;
            }
        };
        self.rel_off.push(self.rel_arena.len() as u64);
        self.rel_props += n;
        true
    }

    /// The row of relationship `id` but its properties.
    fn rel_head(&mut self, id: u64, start: u64, end: u64, ty: u32) -> bool {
        let next = self.rel_ids.last().map_or(0, |l| l + 1);
        let nodes = self.label_code.len();
        let holes = self.node_holes;
        let has = |n: u64| (n as usize) < nodes && (!holes || self.label_code.get(n as usize) != 0);
        if id < next || !has(start) || !has(end) {
            return false;
        }
        let counted = match &mut self.degrees {
            Some(d)
                if start >= self.last_start
                    && (self.rel_ids.len() as u64) < u64::from(u32::MAX) =>
            {
                self.last_start = start;
                d.add(start)
            }
            _ => self.unspill_degrees(nodes) && self.count_in_memory(start, end, nodes),
        };
        if !counted {
            return false;
        }
        for _ in next..id {
            self.rel_off.push(self.rel_arena.len() as u64);
        }
        self.rel_ids.push(id);
        if let Err(e) = self.rel_endp.push(end).and_then(|()| self.rel_type.push(ty)) {
            self.fwd_error = Some((PathBuf::from("forward column scratch file"), e));
            return false;
        }
        true
    }

    /// Brings spilled degree counts back into memory (relationships out of start order, or
    /// too many for the spill); `false` when reading them back failed.
    fn unspill_degrees(&mut self, nodes: usize) -> bool {
        let Some(d) = self.degrees.take() else { return true };
        let fed = self.rel_ids.len();
        let counts = match self.rel_endp.unspill() {
            Ok(()) => d.into_counts(nodes, (0..fed).map(|i| self.rel_endp.get(i))),
            Err(e) => Err(e),
        };
        match counts {
            Ok((o, i)) => {
                (self.out_count, self.in_count) = (Some(o), Some(i));
                true
            }
            Err(e) => {
                self.fwd_error = Some((PathBuf::from("degree scratch file"), e));
                false
            }
        }
    }

    /// Counts relationship `start -> end` in the degree counts in memory (allocated at the
    /// first); `false` when a count would pass `u32::MAX` or spilled columns did not come back.
    fn count_in_memory(&mut self, start: u64, end: u64, nodes: usize) -> bool {
        let (out_count, in_count) = match (&mut self.out_count, &mut self.in_count) {
            (Some(o), Some(i)) => (o, i),
            _ => {
                // Counts start narrow; prefix sums widen them if the totals need it.
                self.out_count = Some(Wide::new(nodes + 1, 0, u64::from(u32::MAX)));
                self.in_count = Some(Wide::new(nodes + 1, 0, u64::from(u32::MAX)));
                match (&mut self.out_count, &mut self.in_count) {
                    (Some(o), Some(i)) => (o, i),
                    _ => return false,
                }
            }
        };
        if self.rel_start.is_none() && start < self.last_start {
            // No longer in start order: the fed columns are not the forward ones, so spilled
            // ones come back into memory (the forward CSR is scattered from them) ...
            for r in [self.rel_endp.unspill(), self.rel_type.unspill()] {
                if let Err(e) = r {
                    self.fwd_error = Some((PathBuf::from("forward column scratch file"), e));
                    return false;
                }
            }
            // ... and the starts seen so far are materialized from the counts.
            let mut s = PackedBuilder::default();
            for n in 0..nodes {
                for _ in 0..out_count.get(n) {
                    s.push(n as u64);
                }
            }
            self.rel_start = Some(s);
        }
        self.last_start = start;
        if let Some(s) = &mut self.rel_start {
            s.push(start);
        }
        for (c, n) in [(&mut *out_count, start), (&mut *in_count, end)] {
            let v = c.get(n as usize) + 1;
            if v > u64::from(u32::MAX) {
                return false;
            }
            c.set(n as usize, v);
        }
        true
    }

    /// Finishes the base, building the node indexes for `pairs` (a builder that does not
    /// spill its node blobs: [`BaseBuilder::spill_node_blobs`]).
    pub fn finish(self, pairs: &[Target]) -> Base {
        self.finish_streamed(pairs, None).0
    }

    /// [`BaseBuilder::finish`] for a base that is only written to a segment: with a `window`
    /// and relationships fed in start-node order, the incoming neighbour, relationship and
    /// type columns are not built; the returned [`BackwardStream`] produces them while the
    /// segment is written, in windows of at most `window` entries (the base holds empty
    /// columns in their place, its statistics count them as built). Likewise spilled node
    /// blobs ([`BaseBuilder::spill_node_blobs`]) come from their scratch file (the base
    /// holds their offsets; `pairs` must then be empty, as an index reads the blobs), and
    /// spilled forward columns ([`BaseBuilder::spill_forward`]) from theirs (the incoming
    /// columns then stream too, in one window per column without a `window`).
    /// Otherwise the base is whole and there are no streams.
    pub fn finish_streamed(
        self,
        pairs: &[Target],
        window: Option<usize>,
    ) -> (Base, SegmentStreams) {
        let BaseBuilder {
            ts,
            extends_ts,
            interner,
            label_code,
            sets,
            label_bits,
            node_off,
            node_arena,
            node_count,
            node_props,
            rel_ids,
            rel_start,
            rel_endp,
            rel_type,
            out_count,
            in_count,
            degrees,
            rel_off,
            rel_arena,
            rel_props,
            ..
        } = self;
        let node_end = label_code.len() as u64;
        let n = node_end as usize;
        let rel_count = rel_ids.len() as u64;
        let rel_end = rel_ids.last().map_or(0, |l| l + 1);

        // Only a fresh build keeps strings that would go inline: an extending build's table is
        // pinned by the next one, so singletons kept at every fold would accumulate.
        let keep_under = match extends_ts {
            None => node_arena.len() as usize + rel_arena.len(),
            Some(_) => 0,
        };
        let (remap, strings) = string_table(&interner, keep_under);
        let identity = remap.iter().enumerate().all(|(i, r)| *r == Some(i as u32));
        let recode = |off, arena| recode_props(off, arena, identity, &remap, &interner.strs);
        let (node_props_col, node_blobs, node_offsets) =
            node_prop_col(node_arena, node_off, identity, &remap, &interner.strs);
        let rel_props_col = recode(rel_off, rel_arena);
        let inline_keys = interner.inline_keys;

        let rel_types = rel_type.order.clone();
        let max_type = rel_types.iter().copied().max().map_or(0, u64::from);
        // Spilled degrees (relationships fed in start order) become offsets in scratch files
        // below; the counts in memory are then none.
        let degrees = degrees.filter(|_| rel_count > 0);
        let len = if degrees.is_some() { 0 } else { n + 1 };
        let counts = |c: Option<Wide>| c.unwrap_or_else(|| Wide::new(len, 0, 0));
        let (mut out_off, mut in_off) = (counts(out_count), counts(in_count));
        out_off.prefix_inclusive(rel_count);
        in_off.prefix_inclusive(rel_count);
        let rels = RelCols {
            ids: &rel_ids,
            start: rel_start.as_ref(),
            endp: &rel_endp,
            ty: &rel_type,
            n,
            node_end,
            count: rel_count,
            end: rel_end,
            several_types: rel_types.len() > 1,
            max_type,
        };
        let (out_other, out_rel, out_type, rel_pos) = rels.forward(&mut out_off);
        // Spilled forward columns are never read whole: their base streams (one window per
        // column at most).
        let spilled = rel_endp.is_spilled() || rel_type.spilled || degrees.is_some();
        let window = window.or(spilled.then_some(usize::MAX));
        let stream = window
            .filter(|_| rel_start.is_none() && rel_count > 0)
            .map(|w| rels.backward_stream(&mut in_off, w));
        let (in_other, in_rel, in_type) = match &stream {
            Some(_) => (Packed::default(), Packed::default(), None),
            None => rels.backward(&mut in_off, &out_off),
        };
        drop(rel_start);
        let len = rel_count as usize;
        let no_rels = rel_count == 0;
        let konst = || Packed::Const { v: max_type, n: len };
        let out_rel = out_rel.unwrap_or_else(|| rel_ids.finish());
        let several = rel_types.len() > 1;
        let (out_other, out_type, fwd) =
            fed_forward((out_other, out_type), rel_endp, rel_type, several, konst());
        let in_window = window.unwrap_or(usize::MAX);
        let offsets = degrees
            .map(|d| d.finish(node_end, rel_count, in_window, &|| fwd.others_of(&out_other)));
        let in_type = match &stream {
            Some(_) if rel_types.len() > 1 => Packed::default(),
            _ => in_type.map_or_else(konst, TypeScatter::finish),
        };

        let mut base = Base {
            ts,
            node_end,
            label_code: label_code.finish(),
            label_sets: sets,
            label_bits,
            node_props: node_props_col,
            rel_end,
            rel_count,
            rel_pos,
            rel_props: rel_props_col,
            out_off: if no_rels { Packed::Const { v: 0, n: n + 1 } } else { out_off.finish() },
            out_other,
            out_rel,
            out_type,
            in_off: if no_rels { Packed::Const { v: 0, n: n + 1 } } else { in_off.finish() },
            in_other,
            in_rel,
            in_type,
            rel_types,
            strings,
            inline_keys,
            indexes: FxHashMap::default(),
            ordered: FxHashMap::default(),
            texts: Default::default(),
            int_cols: parking_lot::Mutex::new(FxHashMap::default()),
            node_dirty: AtomicBits::new(node_end),
            rel_dirty: AtomicBits::new(rel_end),
            stats: BaseStats::default(),
            paged: None,
            fwd: None,
            paged_props: [None, None],
            paged_nodes: None,
            failure: OnceLock::new(),
            failures: std::sync::atomic::AtomicU64::new(0),
        };
        for t in pairs {
            let ix = BaseIndex::build(&base, t.0, &t.1);
            base.indexes.insert(t.clone(), ix);
            base.ordered.insert(t.clone(), OnceLock::new());
        }
        base.stats = base_stats(&base, node_count, node_props, rel_props);
        base.stats.rel_bytes += stream.as_ref().map_or(0, BackwardStream::bytes) + fwd.bytes();
        base.stats.node_property_bytes += node_blobs.as_ref().map_or(0, |b| b.len())
            + node_offsets.as_ref().map_or(0, SpilledOffsets::bytes);
        base.stats.rel_bytes += offsets.as_ref().map_or(0, CsrOffsets::bytes);
        let bad = offsets.is_none() && !csr_well_formed(&base);
        invariant!(!bad, "CSR offsets of the base at {} not monotonic", base.ts);
        let forward = fwd;
        (base, SegmentStreams::new(stream, node_blobs, node_offsets, forward, offsets))
    }
}

/// The node property column of a finished build, from its blob arena and offsets: in memory,
/// or (spilled blobs) empty, with the blobs' scratch file and, unless the blobs are re-coded
/// (`identity` false: new offsets, in memory), the offsets' one. A read error bringing the
/// offsets back fails the blobs' column when the segment is written.
fn node_prop_col(
    arena: BlobArena,
    off: NodeOffsets,
    identity: bool,
    remap: &[Option<u32>],
    strs: &[(Arc<str>, u64)],
) -> (PropCol, Option<SpilledBlobs>, Option<SpilledOffsets>) {
    match (arena.finish(), off.finish()) {
        (Err(spilled), _) if spilled.len() == 0 => (PropCol::default(), None, None),
        (Err(spilled), Err(off)) if identity => (PropCol::default(), Some(spilled), Some(off)),
        (arena, off) => {
            let (off, err) = match off {
                Ok(mem) => (mem, None),
                Err(file) => file.into_mem(),
            };
            match arena {
                Ok(arena) => {
                    // Offsets spill only beside spilled blobs.
                    debug_assert!(err.is_none(), "offsets spilled without their blobs");
                    (recode_props(off, arena, identity, remap, strs), None, None)
                }
                Err(spilled) if identity => {
                    let s = spilled.with_error(err);
                    (PropCol { off: off.finish(), arena: Box::default() }, Some(s), None)
                }
                Err(spilled) => {
                    let (off, s) = spilled.with_error(err).recode(&off, remap, strs);
                    (PropCol { off, arena: Box::default() }, Some(s), None)
                }
            }
        }
    }
}

/// The forward neighbour and type columns: `scattered` (by `RelCols::forward`) where given,
/// else the fed columns `endp` and `types` (`several` types, else the constant `konst`), in
/// memory or, spilled, as empty columns and the [`ForwardSpill`] that streams them.
fn fed_forward(
    scattered: (Option<Packed>, Option<Packed>),
    endp: EndCol,
    types: TypeCol,
    several: bool,
    konst: Packed,
) -> (Packed, Packed, ForwardSpill) {
    let mut fwd = ForwardSpill::default();
    let other = match scattered.0.map(Ok).unwrap_or_else(|| endp.finish()) {
        Ok(p) => p,
        Err(spilled) => {
            fwd.other = Some(spilled);
            Packed::default()
        }
    };
    let ty = match scattered.1 {
        Some(t) => t,
        None if several => types.finish_spilled().unwrap_or_else(|spilled| {
            fwd.ty = Some(spilled);
            Packed::default()
        }),
        None => konst,
    };
    (other, ty, fwd)
}

/// The string table of a finished base: `remap` gives each interned string's index in it, or
/// `None` for a string that stays inline. Strings pay for a table entry (~48 bytes) when
/// repeated enough; strings of the extended base keep their index (blobs copied from it use
/// them). When the strings that would go inline are few against the blobs (their entries
/// take at most 1/64 of `blob_bytes`, 0 for an extending build), every string keeps its
/// entry: the table is then the interner's, and the blobs need no re-coding (a copy of all of
/// them: a bulk import's sampled strings, ~140 MB of node blobs for B2B 0.01).
fn string_table(interner: &Interner, blob_bytes: usize) -> (Vec<Option<u32>>, Vec<Arc<str>>) {
    let mut remap: Vec<Option<u32>> = Vec::with_capacity(interner.strs.len());
    let mut strings: Vec<Arc<str>> = Vec::new();
    let mut inline_cost = 0usize;
    for (i, (s, count)) in interner.strs.iter().enumerate() {
        let saved = (*count as usize).saturating_sub(1) * s.len();
        if i < interner.pinned || (*count >= 2 && saved > 48) {
            remap.push(Some(strings.len() as u32));
            strings.push(s.clone());
        } else {
            remap.push(None);
            inline_cost += s.len() + 48;
        }
    }
    if inline_cost > 0 && inline_cost.saturating_mul(64) <= blob_bytes {
        let all = interner.strs.iter().map(|(s, _)| s.clone()).collect();
        return ((0..interner.strs.len() as u32).map(Some).collect(), all);
    }
    (remap, strings)
}

/// A property column with each blob's interned strings re-coded by `remap` (`identity`: the
/// table is unchanged, so the column is kept as it is).
fn recode_props(
    off: PackedBuilder,
    arena: Vec<u8>,
    identity: bool,
    remap: &[Option<u32>],
    strs: &[(Arc<str>, u64)],
) -> PropCol {
    if arena.is_empty() {
        return PropCol::default();
    }
    if identity {
        return PropCol { off: off.finish(), arena: arena.into_boxed_slice() };
    }
    let mut out = Vec::with_capacity(arena.len());
    let mut noff = PackedBuilder::default();
    noff.push(0);
    for i in 0..off.len().saturating_sub(1) {
        let (a, b) = (off.get(i) as usize, off.get(i + 1) as usize);
        if let Some(blob) = arena.get(a..b) {
            rewrite_blob(&mut out, blob, remap, strs);
        }
        noff.push(out.len() as u64);
    }
    PropCol { off: noff.finish(), arena: out.into_boxed_slice() }
}

/// The type column while relationships are fed: a constant while one type has been seen, then
/// one byte per relationship while every type fits in a byte (the common case: B2B's 21.8 M
/// relationships take 22 MB instead of 87), else a [`PackedBuilder`].
#[derive(Default)]
pub(super) struct TypeCol {
    first: u32,
    /// Relationships fed while only `first` was seen.
    n: usize,
    bytes: Option<Vec<u8>>,
    wide: Option<PackedBuilder>,
    /// The types present, in order of first appearance.
    order: Vec<u32>,
    /// Bit `t` set once type `t` (below [`SEEN_BITS`]) is in `order`: B2B's relationships
    /// alternate among 250 types, and a scan of `order` at each change was 11 % of an
    /// import's CPU (perf).
    seen: Vec<u64>,
    /// The scratch file the bytes go to instead of `bytes` (`fwd_spill.rs`), and whether they
    /// do (`bytes` is then empty).
    spill: Option<ColSpill>,
    spilled: bool,
}

/// Types tracked by [`TypeCol::seen`] (8 KiB of bits); larger ones scan `order`.
const SEEN_BITS: u32 = 1 << 16;

impl TypeCol {
    /// Appends `t`; an error only reading back spilled bytes ([`TypeCol::unspill`]).
    fn push(&mut self, t: u32) -> io::Result<()> {
        if self.order.last() != Some(&t) {
            let (w, b) = ((t / 64) as usize, 1u64 << (t % 64));
            let new = if t < SEEN_BITS {
                if self.seen.len() <= w {
                    self.seen.resize(w + 1, 0);
                }
                let new = self.seen[w] & b == 0;
                self.seen[w] |= b;
                new
            } else {
                !self.order.contains(&t)
            };
            if new {
                self.order.push(t);
            }
        }
        if let Some(w) = &mut self.wide {
            w.push(u64::from(t));
            return Ok(());
        }
        if self.spilled {
            match &mut self.spill {
                Some(s) if s.fits(u64::from(t)) => {
                    s.push(u64::from(t));
                    return Ok(());
                }
                _ => self.unspill()?,
            }
        }
        if let Some(b) = &mut self.bytes {
            match u8::try_from(t) {
                Ok(x) => b.push(x),
                Err(_) => {
                    let mut w = PackedBuilder::default();
                    b.iter().for_each(|x| w.push(u64::from(*x)));
                    w.push(u64::from(t));
                    self.bytes = None;
                    self.wide = Some(w);
                }
            }
            return Ok(());
        }
        if self.n == 0 || t == self.first {
            self.first = t;
            self.n += 1;
            return Ok(());
        }
        match (u8::try_from(self.first), u8::try_from(t)) {
            (Ok(f), Ok(x)) => match &mut self.spill {
                Some(s) => {
                    (0..self.n).for_each(|_| s.push(u64::from(f)));
                    s.push(u64::from(x));
                    self.bytes = Some(Vec::new());
                    self.spilled = true;
                }
                None => {
                    let mut b = vec![f; self.n];
                    b.push(x);
                    self.bytes = Some(b);
                }
            },
            _ => {
                let mut w = PackedBuilder::default();
                (0..self.n).for_each(|_| w.push(u64::from(self.first)));
                w.push(u64::from(t));
                self.wide = Some(w);
            }
        }
        Ok(())
    }

    /// Brings spilled bytes back into `bytes` and stops spilling (the file is removed).
    fn unspill(&mut self) -> io::Result<()> {
        let Some(s) = self.spill.take() else { return Ok(()) };
        if std::mem::take(&mut self.spilled) {
            self.bytes = Some(s.read_all()?.into_iter().map(|v| v as u8).collect());
        }
        Ok(())
    }

    /// [`TypeCol::finish`], or the closed scratch file of spilled bytes.
    fn finish_spilled(mut self) -> Result<Packed, SpilledCol> {
        match (self.spill.take(), self.spilled) {
            (Some(s), true) => Err(s.close()),
            _ => Ok(self.finish()),
        }
    }

    fn get(&self, i: usize) -> u64 {
        match (&self.bytes, &self.wide) {
            (Some(b), _) => b.get(i).map_or(0, |x| u64::from(*x)),
            (None, Some(w)) => w.get(i),
            (None, None) => u64::from(self.first) * u64::from(i < self.n),
        }
    }

    fn finish(self) -> Packed {
        match (self.bytes, self.wide) {
            (Some(b), _) => Packed::U8(b.into_boxed_slice()),
            (None, Some(w)) => w.finish(),
            (None, None) if self.n == 0 => Packed::default(),
            (None, None) => Packed::Const { v: u64::from(self.first), n: self.n },
        }
    }
}

/// A type column being scattered into CSR order: one byte per entry when every type fits.
enum TypeScatter {
    U8(Vec<u8>),
    Wide(Wide),
}

impl TypeScatter {
    fn set(&mut self, i: usize, t: u64) {
        match self {
            TypeScatter::U8(v) => {
                if let Some(s) = v.get_mut(i) {
                    *s = t as u8;
                }
            }
            TypeScatter::Wide(w) => w.set(i, t),
        }
    }

    fn finish(self) -> Packed {
        match self {
            TypeScatter::U8(v) => Packed::U8(v.into_boxed_slice()),
            TypeScatter::Wide(w) => w.finish(),
        }
    }
}

/// The relationship columns as fed (in relationship id order) and the sizes the adjacency
/// (CSR) is built for.
struct RelCols<'a> {
    ids: &'a PackedBuilder,
    /// Start nodes; `None` while relationships arrived in start order.
    start: Option<&'a PackedBuilder>,
    endp: &'a EndCol,
    ty: &'a TypeCol,
    /// Node count (`node_end` as an index).
    n: usize,
    node_end: u64,
    /// Relationship count, and one past the largest relationship id.
    count: u64,
    end: u64,
    /// More than one relationship type (else the type columns are a constant), and the largest.
    several_types: bool,
    max_type: u64,
}

impl RelCols<'_> {
    /// An empty type column of `len` entries, if types must be stored.
    fn type_col(&self, len: usize) -> Option<TypeScatter> {
        self.several_types.then(|| {
            if self.max_type <= u64::from(u8::MAX) {
                TypeScatter::U8(vec![0; len])
            } else {
                TypeScatter::Wide(Wide::new(len, 0, self.max_type))
            }
        })
    }

    /// The forward CSR: turns `out_off` (inclusive per-node ends) into start offsets and
    /// returns the `(other node, relationship, type)` columns (`None` where the fed columns
    /// already are them: relationships created in start order) and each relationship's
    /// position. Entries are placed by walking relationships backwards and decrementing each
    /// node's end position, which leaves the start positions behind (no cursor copy).
    fn forward(
        &self,
        out_off: &mut Wide,
    ) -> (Option<Packed>, Option<Packed>, Option<Packed>, Packed) {
        let (n, rel_count) = (self.n, self.count);
        match self.start {
            None => {
                // Creation order is forward order: the columns are already CSR-ordered, and
                // the inclusive ends shift into exclusive starts.
                for i in (1..=n).rev() {
                    out_off.set(i, out_off.get(i - 1));
                }
                out_off.set(0, 0);
                let rel_pos = if self.end == rel_count {
                    Packed::Seq { first: 0, n: rel_count as usize }
                } else {
                    let mut p = Wide::new(self.end as usize, rel_count, rel_count);
                    for i in 0..self.ids.len() {
                        p.set(self.ids.get(i) as usize, i as u64);
                    }
                    p.finish()
                };
                (None, None, None, rel_pos)
            }
            Some(starts) => {
                let len = rel_count as usize;
                let mut other = Wide::new(len, 0, self.node_end);
                let mut rel = Wide::new(len, 0, self.end);
                let mut ty = self.type_col(len);
                let mut pos = Wide::new(self.end as usize, rel_count, rel_count);
                for i in (0..len).rev() {
                    let s = starts.get(i) as usize;
                    let p = out_off.get(s).saturating_sub(1);
                    out_off.set(s, p);
                    let p = p as usize;
                    other.set(p, self.endp.get(i));
                    rel.set(p, self.ids.get(i));
                    if let Some(t) = &mut ty {
                        t.set(p, self.ty.get(i));
                    }
                    pos.set(self.ids.get(i) as usize, p as u64);
                }
                out_off.set(n, rel_count);
                (
                    Some(other.finish()),
                    Some(rel.finish()),
                    ty.map(TypeScatter::finish),
                    pos.finish(),
                )
            }
        }
    }

    /// The backward CSR's offsets only (`in_off`'s inclusive ends turned into starts, as
    /// [`Self::backward`] leaves them) and a [`BackwardStream`] for the rest, in windows of
    /// at most `window` entries. Relationships must have been fed in start order.
    fn backward_stream(&self, in_off: &mut Wide, window: usize) -> BackwardStream {
        for i in (1..=self.n).rev() {
            in_off.set(i, in_off.get(i - 1));
        }
        in_off.set(0, 0);
        let ty = match self.several_types {
            false => 0,
            true if self.max_type <= u64::from(u8::MAX) => 1,
            true => Wide::width(self.max_type),
        };
        let widths = [Wide::width(self.node_end), Wide::width(self.end), ty];
        BackwardStream::new(widths, self.count as usize, window)
    }

    /// The backward CSR, the same way as [`Self::forward`], from the finished forward offsets
    /// `out_off` (which give each entry's start node when start nodes were not stored):
    /// `(other node, relationship, type)` columns.
    fn backward(&self, in_off: &mut Wide, out_off: &Wide) -> (Packed, Packed, Option<TypeScatter>) {
        let len = self.count as usize;
        let mut in_other = Wide::new(len, 0, self.node_end);
        let mut in_rel = Wide::new(len, 0, self.end);
        let mut in_type = self.type_col(len);
        let mut owner = self.n; // start node of entry i when `start` is None (walks down)
        for i in (0..len).rev() {
            let s = match self.start {
                Some(st) => st.get(i),
                None => {
                    while owner > 0 && out_off.get(owner) > i as u64 {
                        owner -= 1;
                    }
                    owner as u64
                }
            };
            let e = self.endp.get(i) as usize;
            let p = in_off.get(e).saturating_sub(1);
            in_off.set(e, p);
            let p = p as usize;
            in_other.set(p, s);
            in_rel.set(p, self.ids.get(i));
            if let Some(t) = &mut in_type {
                t.set(p, self.ty.get(i));
            }
        }
        in_off.set(self.n, self.count);
        (in_other.finish(), in_rel.finish(), in_type)
    }
}

/// The sizes of a finished base (its indexes built).
fn base_stats(base: &Base, node_count: u64, node_props: u64, rel_props: u64) -> BaseStats {
    BaseStats {
        nodes: node_count,
        relationships: base.rel_count,
        node_properties: node_props,
        rel_properties: rel_props,
        node_bytes: (base.label_code.bytes()
            + base.label_sets.iter().map(|s| s.len() * 4 + 16).sum::<usize>()
            + base.label_bits.values().map(Bits::bytes).sum::<usize>()
            + base.node_end.div_ceil(8) as usize) as u64,
        node_property_bytes: (base.node_props.bytes()
            + base.strings.iter().map(|s| s.len() + 32).sum::<usize>())
            as u64,
        rel_bytes: (base.rel_pos.bytes()
            + base.out_off.bytes()
            + base.out_other.bytes()
            + base.out_rel.bytes()
            + base.out_type.bytes()
            + base.in_off.bytes()
            + base.in_other.bytes()
            + base.in_rel.bytes()
            + base.in_type.bytes()
            + base.rel_end.div_ceil(8) as usize) as u64,
        rel_property_bytes: base.rel_props.bytes() as u64,
        index_bytes: base.indexes.values().map(BaseIndex::bytes).sum::<usize>() as u64,
        interned_strings: base.strings.len() as u64,
    }
}

// The constructors below build from a finished base, so they live with the builder (the
// column, blob and index files stay below `graph.rs`).

impl Base {
    /// An empty base at ts 0.
    pub fn empty() -> Base {
        BaseBuilder::new(0).finish(&[])
    }
}

impl BaseIndex {
    pub(super) fn build(base: &Base, l: u32, k: &[u32]) -> BaseIndex {
        BaseIndex::build_with(base, l, k, key_hash)
    }

    /// [`BaseIndex::build`] ordered by another hash (tests write older segment versions).
    pub(super) fn build_with(
        base: &Base,
        l: u32,
        k: &[u32],
        key_hash: fn(&crate::value::IndexKey) -> u32,
    ) -> BaseIndex {
        let keys = |f: &mut dyn FnMut(u32, u64)| {
            let mut cur = 0;
            while let Some(id) = base.next_with_label(l, cur) {
                if let Some(key) = base.node(id).and_then(|n| n.key_for(l, k)) {
                    f(key_hash(&key), id);
                }
                cur = id + 1;
            }
        };
        if base.node_end <= u64::from(u32::MAX) {
            let mut v: Vec<u64> = Vec::new();
            keys(&mut |h, id| v.push(u64::from(h) << 32 | id));
            v.sort_unstable();
            BaseIndex::Packed(v.into_boxed_slice())
        } else {
            let mut v: Vec<(u32, u64)> = Vec::new();
            keys(&mut |h, id| v.push((h, id)));
            v.sort_unstable();
            BaseIndex::Wide(v.into_boxed_slice())
        }
    }
}

impl Interner {
    /// An interner that extends `base`'s string table and inherits its inline keys.
    pub(super) fn extending(base: &Base) -> Interner {
        let mut ids = FxHashMap::default();
        ids.reserve(base.strings.len());
        let mut strs = Vec::with_capacity(base.strings.len());
        for (i, s) in base.strings.iter().enumerate() {
            ids.insert(s.clone(), i as u32);
            strs.push((s.clone(), 0));
        }
        Interner {
            ids,
            pinned: strs.len(),
            strs,
            sample: FxHashMap::default(),
            inline_keys: base.inline_keys.clone(),
        }
    }
}

/// Both CSR offset columns start at 0, never decrease and end at the relationship count (what
/// every range read `off[n]..off[n + 1]` relies on).
fn csr_well_formed(base: &Base) -> bool {
    [&base.out_off, &base.in_off].into_iter().all(|off| {
        let n = off.len();
        let off = off.view();
        n > 0
            && off.get(0) == 0
            && (1..n).all(|i| off.get(i - 1) <= off.get(i))
            && off.get(n - 1) == base.rel_count
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a base of `n` nodes from `(start, end, type)` relationships fed in start order and
    /// returns its forward and backward type columns, position by position.
    fn type_columns(n: u64, rels: &[(u64, u64, u32)]) -> (Packed, Packed, Vec<u32>) {
        let mut b = BaseBuilder::new(1);
        for id in 0..n {
            assert!(b.node(id, &[0], &[]));
        }
        for (i, (s, e, t)) in rels.iter().enumerate() {
            assert!(b.rel(i as u64, *s, *e, *t, &[]));
        }
        let base = b.finish(&[]);
        (base.out_type, base.in_type, base.rel_types)
    }

    /// The type of each entry of both CSRs, derived naively: forward in feed order, backward
    /// by end node (stable).
    fn expected(rels: &[(u64, u64, u32)]) -> (Vec<u64>, Vec<u64>) {
        let fwd = rels.iter().map(|r| u64::from(r.2)).collect();
        let mut back: Vec<_> = rels.iter().enumerate().map(|(i, r)| (r.1, i, r.2)).collect();
        back.sort_unstable();
        (fwd, back.iter().map(|r| u64::from(r.2)).collect())
    }

    fn values(p: &Packed) -> Vec<u64> {
        (0..p.len()).map(|i| p.view().get(i)).collect()
    }

    #[test]
    fn type_columns_take_one_byte_while_types_fit_and_widen_after() {
        let small = [(0, 1, 0), (0, 2, 200), (1, 2, 0), (2, 0, 5), (3, 3, 0)];
        let (out, inc, order) = type_columns(4, &small);
        assert!(matches!(out, Packed::U8(_)) && matches!(inc, Packed::U8(_)));
        assert_eq!((values(&out), values(&inc)), expected(&small));
        assert_eq!(order, vec![0, 200, 5]);

        let wide = [(0, 1, 0), (0, 2, 300), (1, 2, 0), (2, 0, 5), (3, 3, 0)];
        let (out, inc, order) = type_columns(4, &wide);
        assert!(!matches!(out, Packed::U8(_)) && !matches!(inc, Packed::U8(_)));
        assert_eq!((values(&out), values(&inc)), expected(&wide));
        assert_eq!(order, vec![0, 300, 5]);

        // One type: constant columns; a type past a byte first, then small ones.
        let one = [(0, 1, 7), (1, 0, 7), (1, 1, 7)];
        let (out, inc, order) = type_columns(2, &one);
        assert!(matches!(out, Packed::Const { v: 7, n: 3 }), "{:?}", values(&out));
        assert_eq!(values(&inc), vec![7, 7, 7]);
        assert_eq!(order, vec![7]);
        let first_wide = [(0, 1, 1000), (0, 0, 1000), (1, 0, 2)];
        let (out, inc, _) = type_columns(2, &first_wide);
        assert_eq!((values(&out), values(&inc)), expected(&first_wide));
    }

    #[test]
    fn type_col_reads_back_what_was_pushed() {
        for seq in [vec![], vec![3u32], vec![3, 3, 3], vec![3, 3, 9, 3], vec![1, 2, 256, 2, 70000]]
        {
            let mut c = TypeCol::default();
            seq.iter().for_each(|t| c.push(*t).unwrap());
            let got: Vec<u64> = (0..seq.len()).map(|i| c.get(i)).collect();
            assert_eq!(got, seq.iter().map(|t| u64::from(*t)).collect::<Vec<_>>());
            let p = c.finish();
            assert_eq!(values(&p), seq.iter().map(|t| u64::from(*t)).collect::<Vec<_>>());
        }
    }
}
