//! The compact, immutable *base* of the store: every node and relationship committed up to the
//! base timestamp, laid out in dense columns instead of per-entity objects.
//!
//! * Nodes (indexed by id, holes allowed): a label-set code column (code 0 = no node) into a
//!   dictionary of label sets, per-label bitsets for label scans, and property blobs in one
//!   contiguous arena with per-node offsets.
//! * Relationships: CSR per direction (offsets per node + neighbour, relationship id and type per
//!   entry), a relationship-id -> forward-position column (the start node is found by binary
//!   search over the forward offsets, the end node and type are read at that position), and
//!   property blobs by relationship id.
//! * Indexes: per indexed `(label, key)`, node ids sorted by a 32-bit hash of the key (equality
//!   seeks), and, built on the first range or prefix seek, the same ids sorted by key value
//!   (binary-searched by decoding the keyed property).
//!
//! Every integer column is [`Packed`]: constant, arithmetic sequence, or the narrowest of
//! u8/u16/u32/u64. Bulk-loaded relationships created in start-node order therefore cost no bytes
//! for their id columns, and a single relationship type costs nothing per entry.
//!
//! Property blob: per property `varint(key << 3 | tag)` then the payload: tags 0/1 false/true,
//! 2 zig-zag varint int, 3 f64, 4 inline string (varint length + bytes), 5 interned string
//! (varint index into the base's string table), 6 any other value in the WAL encoding. Strings
//! are interned only where it pays (repeated often enough to amortize the table entry).
//!
//! A base is never modified after it is built, except for its *dirty bits*: a bit per entity that
//! is set (before the commit becomes visible) when a newer version is installed in the delta, so
//! readers of clean entities skip the delta lookup entirely.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use arbor_model::{NodeId, Value};
use rustc_hash::FxHashMap;

use crate::codec::{Dec, Enc};
use crate::mvcc::{Labels, NodeData, RelData};
use crate::schema::Target;
#[cfg(test)]
use crate::value::index_key;
use crate::value::{target_key, IndexKey, KeyRange};

// ------------------------------------------------------------------------------ packed integers

/// A borrowed [`Packed`] column with its representation already chosen (see [`Packed::view`]).
#[derive(Clone, Copy)]
pub(crate) enum PackedView<'a> {
    Const(u64, usize),
    Seq(u64, usize),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

impl PackedView<'_> {
    /// As [`Packed::get`]: 0 out of range.
    #[inline(always)]
    pub fn get(self, i: usize) -> u64 {
        match self {
            PackedView::Const(v, n) => {
                if i < n {
                    v
                } else {
                    0
                }
            }
            PackedView::Seq(first, n) => {
                if i < n {
                    first + i as u64
                } else {
                    0
                }
            }
            PackedView::U8(v) => v.get(i).map_or(0, |x| u64::from(*x)),
            PackedView::U16(v) => v.get(i).map_or(0, |x| u64::from(*x)),
            PackedView::U32(v) => v.get(i).map_or(0, |x| u64::from(*x)),
            PackedView::U64(v) => v.get(i).copied().unwrap_or(0),
        }
    }

    /// Writes the values at `from..from + dst.len()` into `dst` (0 out of range, as `get`),
    /// matching the representation once for the whole run instead of once per value.
    #[inline(always)]
    pub fn fill(self, from: usize, dst: &mut [u64]) {
        fn widen<T: Copy + Into<u64>>(v: &[T], from: usize, dst: &mut [u64]) {
            match v.get(from..from + dst.len()) {
                Some(src) => dst.iter_mut().zip(src).for_each(|(d, s)| *d = (*s).into()),
                None => dst
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, d)| *d = v.get(from + i).map_or(0, |s| (*s).into())),
            }
        }
        match self {
            PackedView::Const(v, n) => {
                dst.iter_mut().enumerate().for_each(|(i, d)| *d = if from + i < n { v } else { 0 })
            }
            PackedView::Seq(first, n) => dst
                .iter_mut()
                .enumerate()
                .for_each(|(i, d)| *d = if from + i < n { first + (from + i) as u64 } else { 0 }),
            PackedView::U8(v) => widen(v, from, dst),
            PackedView::U16(v) => widen(v, from, dst),
            PackedView::U32(v) => widen(v, from, dst),
            PackedView::U64(v) => widen(v, from, dst),
        }
    }
}

/// An immutable integer column stored as compactly as its values allow.
#[derive(Debug)]
pub(crate) enum Packed {
    Const { v: u64, n: usize },
    Seq { first: u64, n: usize },
    U8(Box<[u8]>),
    U16(Box<[u16]>),
    U32(Box<[u32]>),
    U64(Box<[u64]>),
}

impl Default for Packed {
    fn default() -> Self {
        Packed::Const { v: 0, n: 0 }
    }
}

impl Packed {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        match self {
            Packed::Const { n, .. } | Packed::Seq { n, .. } => *n,
            Packed::U8(v) => v.len(),
            Packed::U16(v) => v.len(),
            Packed::U32(v) => v.len(),
            Packed::U64(v) => v.len(),
        }
    }

    /// The value at `i`; 0 when out of range (callers check ranges; this never panics).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        self.view().get(i)
    }

    /// A borrowed view for a loop of reads: the representation is matched when the view is
    /// taken; reads through it are then a bounds-checked slice access (or arithmetic).
    #[inline]
    pub fn view(&self) -> PackedView<'_> {
        match self {
            Packed::Const { v, n } => PackedView::Const(*v, *n),
            Packed::Seq { first, n } => PackedView::Seq(*first, *n),
            Packed::U8(v) => PackedView::U8(v),
            Packed::U16(v) => PackedView::U16(v),
            Packed::U32(v) => PackedView::U32(v),
            Packed::U64(v) => PackedView::U64(v),
        }
    }

    /// Heap bytes used.
    pub fn bytes(&self) -> usize {
        match self {
            Packed::Const { .. } | Packed::Seq { .. } => 0,
            Packed::U8(v) => v.len(),
            Packed::U16(v) => v.len() * 2,
            Packed::U32(v) => v.len() * 4,
            Packed::U64(v) => v.len() * 8,
        }
    }

    fn shape(n: usize, first: u64, mut it: impl Iterator<Item = u64>) -> (bool, bool, u64) {
        let (mut konst, mut seq, mut max) = (true, true, 0u64);
        let mut i = 0u64;
        for x in &mut it {
            konst &= x == first;
            seq &= x == first.wrapping_add(i);
            max = max.max(x);
            i += 1;
        }
        debug_assert_eq!(i as usize, n);
        (konst, seq, max)
    }

    pub fn from_u32(v: Vec<u32>) -> Packed {
        let n = v.len();
        let Some(&first) = v.first() else { return Packed::default() };
        let (konst, seq, max) = Self::shape(n, u64::from(first), v.iter().map(|x| u64::from(*x)));
        if konst {
            Packed::Const { v: u64::from(first), n }
        } else if seq {
            Packed::Seq { first: u64::from(first), n }
        } else if max <= u64::from(u8::MAX) {
            Packed::U8(v.iter().map(|x| *x as u8).collect())
        } else if max <= u64::from(u16::MAX) {
            Packed::U16(v.iter().map(|x| *x as u16).collect())
        } else {
            Packed::U32(v.into_boxed_slice())
        }
    }

    pub fn from_u64(v: Vec<u64>) -> Packed {
        if v.iter().all(|x| *x <= u64::from(u32::MAX)) {
            return Packed::from_u32(v.into_iter().map(|x| x as u32).collect());
        }
        let n = v.len();
        let first = v[0];
        let (konst, seq, _) = Self::shape(n, first, v.iter().copied());
        if konst {
            Packed::Const { v: first, n }
        } else if seq {
            Packed::Seq { first, n }
        } else {
            Packed::U64(v.into_boxed_slice())
        }
    }
}

/// A growable integer column. While the values form a constant run or a `+1` sequence nothing
/// is stored (bulk-loaded ids and single relationship types cost no memory even while
/// building); otherwise u32 until a value needs more, then u64.
pub(crate) struct PackedBuilder {
    /// `(first, step, n)` while in run mode; `step` 2 means "not known yet" (`n <= 1`).
    run: Option<(u64, u64, usize)>,
    small: Vec<u32>,
    big: Option<Vec<u64>>,
}

impl Default for PackedBuilder {
    fn default() -> Self {
        PackedBuilder { run: Some((0, 2, 0)), small: Vec::new(), big: None }
    }
}

impl PackedBuilder {
    fn push_val(&mut self, x: u64) {
        if let Some(b) = &mut self.big {
            b.push(x);
        } else if let Ok(s) = u32::try_from(x) {
            self.small.push(s);
        } else {
            let mut b: Vec<u64> = Vec::with_capacity(self.small.len() * 2 + 1);
            b.extend(self.small.iter().map(|v| u64::from(*v)));
            b.push(x);
            self.small = Vec::new();
            self.big = Some(b);
        }
    }

    pub fn push(&mut self, x: u64) {
        if let Some((first, step, n)) = &mut self.run {
            if *n == 0 {
                *first = x;
                *n = 1;
                return;
            }
            if *step == 2 {
                if x == *first || x == first.wrapping_add(1) {
                    *step = x.wrapping_sub(*first);
                    *n += 1;
                    return;
                }
            } else if x == first.wrapping_add(*step * *n as u64) {
                *n += 1;
                return;
            }
            // The run ends: materialize it.
            let (f, s, len) = (*first, if *step == 2 { 0 } else { *step }, *n);
            self.run = None;
            for i in 0..len {
                self.push_val(f.wrapping_add(s * i as u64));
            }
        }
        self.push_val(x);
    }

    pub fn len(&self) -> usize {
        match self.run {
            Some((_, _, n)) => n,
            None => self.big.as_ref().map_or(self.small.len(), Vec::len),
        }
    }

    pub fn get(&self, i: usize) -> u64 {
        match self.run {
            Some((first, step, n)) => {
                if i < n {
                    first.wrapping_add(if step == 2 { 0 } else { step } * i as u64)
                } else {
                    0
                }
            }
            None => match &self.big {
                Some(b) => b.get(i).copied().unwrap_or(0),
                None => self.small.get(i).map_or(0, |x| u64::from(*x)),
            },
        }
    }

    pub fn last(&self) -> Option<u64> {
        let n = self.len();
        (n > 0).then(|| self.get(n - 1))
    }

    pub fn finish(self) -> Packed {
        match self.run {
            Some((_, _, 0)) => Packed::default(),
            Some((first, 1, n)) => Packed::Seq { first, n },
            Some((v, _, n)) => Packed::Const { v, n },
            None => match self.big {
                Some(b) => Packed::from_u64(b),
                None => Packed::from_u32(self.small),
            },
        }
    }
}

/// A fixed-length mutable integer column used while building, as wide as `max` needs; it
/// becomes a [`Packed`] without copying.
enum Wide {
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

impl Wide {
    fn new(n: usize, fill: u64, max: u64) -> Wide {
        if max <= u64::from(u16::MAX) {
            Wide::U16(vec![fill as u16; n])
        } else if max <= u64::from(u32::MAX) {
            Wide::U32(vec![fill as u32; n])
        } else {
            Wide::U64(vec![fill; n])
        }
    }
    fn get(&self, i: usize) -> u64 {
        match self {
            Wide::U16(v) => v.get(i).map_or(0, |x| u64::from(*x)),
            Wide::U32(v) => v.get(i).map_or(0, |x| u64::from(*x)),
            Wide::U64(v) => v.get(i).copied().unwrap_or(0),
        }
    }
    fn set(&mut self, i: usize, x: u64) {
        match self {
            Wide::U16(v) => {
                if let Some(s) = v.get_mut(i) {
                    *s = x as u16;
                }
            }
            Wide::U32(v) => {
                if let Some(s) = v.get_mut(i) {
                    *s = x as u32;
                }
            }
            Wide::U64(v) => {
                if let Some(s) = v.get_mut(i) {
                    *s = x;
                }
            }
        }
    }
    fn len(&self) -> usize {
        match self {
            Wide::U16(v) => v.len(),
            Wide::U32(v) => v.len(),
            Wide::U64(v) => v.len(),
        }
    }
    /// Turns per-node counts (`self[s]`, last entry 0) into inclusive prefix sums (the end of
    /// each node's range), widening first if the total needs it. Returns the total.
    fn prefix_inclusive(&mut self, total: u64) -> u64 {
        if total > u64::from(u32::MAX) && !matches!(self, Wide::U64(_)) {
            let n = self.len();
            let mut v = Vec::with_capacity(n);
            v.extend((0..n).map(|i| self.get(i)));
            *self = Wide::U64(v);
        } else if total > u64::from(u16::MAX) && matches!(self, Wide::U16(_)) {
            let n = self.len();
            let mut v = Vec::with_capacity(n);
            v.extend((0..n).map(|i| self.get(i) as u32));
            *self = Wide::U32(v);
        }
        let mut acc = 0u64;
        for i in 0..self.len() {
            acc += self.get(i);
            self.set(i, acc);
        }
        acc
    }
    fn finish(self) -> Packed {
        match self {
            Wide::U16(v) => Packed::U16(v.into_boxed_slice()),
            Wide::U32(v) => Packed::U32(v.into_boxed_slice()),
            Wide::U64(v) => Packed::U64(v.into_boxed_slice()),
        }
    }
}

// ------------------------------------------------------------------------------ bitsets

/// A plain bitset.
#[derive(Default, Debug)]
pub(crate) struct Bits {
    words: Vec<u64>,
}

impl Bits {
    pub fn set(&mut self, i: u64) {
        let w = (i / 64) as usize;
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (i % 64);
    }
    #[cfg(test)]
    pub fn get(&self, i: u64) -> bool {
        self.words.get((i / 64) as usize).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    /// The first set bit `>= from`.
    pub fn next_from(&self, from: u64) -> Option<u64> {
        let mut w = (from / 64) as usize;
        let mut word = *self.words.get(w)? & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                return Some(w as u64 * 64 + u64::from(word.trailing_zeros()));
            }
            w += 1;
            word = *self.words.get(w)?;
        }
    }
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// A bitset that can be set concurrently (dirty bits).
pub(crate) struct AtomicBits {
    words: Box<[AtomicU64]>,
    /// Whether any bit was ever set. A freshly loaded base has none, and then every read is
    /// answered by this one flag (shared, never written again once set) instead of a load from
    /// the bit array per node or relationship on the traversal hot path.
    any: AtomicBool,
}

impl AtomicBits {
    fn new(n: u64) -> AtomicBits {
        AtomicBits {
            words: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            any: AtomicBool::new(false),
        }
    }
    pub fn set(&self, i: u64) {
        if let Some(w) = self.words.get((i / 64) as usize) {
            // The flag is raised before the bit (both Release, and before the commit that needs
            // them becomes visible), so a reader that sees the commit sees the flag.
            if !self.any.load(Ordering::Relaxed) {
                self.any.store(true, Ordering::Release);
            }
            w.fetch_or(1 << (i % 64), Ordering::Release);
        }
    }
    /// Whether any bit was ever set.
    #[inline]
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }
    #[inline]
    pub fn get(&self, i: u64) -> bool {
        self.any.load(Ordering::Acquire)
            && self
                .words
                .get((i / 64) as usize)
                .is_some_and(|w| w.load(Ordering::Acquire) & (1 << (i % 64)) != 0)
    }
}

// ------------------------------------------------------------------------------ property blobs

const T_FALSE: u64 = 0;
const T_TRUE: u64 = 1;
const T_INT: u64 = 2;
const T_FLOAT: u64 = 3;
const T_STR: u64 = 4;
const T_ISTR: u64 = 5;
const T_OTHER: u64 = 6;

/// Strings at most this long are interning candidates (longer ones are rarely repeated).
const INTERN_MAX_LEN: usize = 64;
/// Distinct strings tracked while building; beyond this new strings stay inline.
const INTERN_MAX_DISTINCT: usize = 1 << 18;

/// Interning attempts of one property key after which its hit rate is judged (see
/// [`Interner::intern`]).
const INTERN_SAMPLE: u32 = 4096;

/// String interning while building: every candidate gets an index and a use count; at the end
/// only the strings that pay for their table entry are kept.
///
/// Like a columnar format's dictionary encoding, interning falls back to plain (inline)
/// strings for a property key whose values are nearly all distinct (names, ids, free text):
/// after [`INTERN_SAMPLE`] attempts for a key, if more than 90 % of them were new strings the
/// key stops being interned. Interning such a key only cost a hash insert per value and, at
/// the end, a rewrite of every blob (its strings do not pay for a table entry). The decision
/// is carried into the next base built on top of this one (`Base::inline_keys`), so the
/// incremental folds of a bulk load do not learn it again.
#[derive(Default)]
struct Interner {
    /// Fx, not SipHash: every string property of every row is looked up here at each rebuild
    /// (SipHash was ~8 % of a rebuild's CPU when bulk-loading distinct strings).
    ids: FxHashMap<Arc<str>, u32>,
    strs: Vec<(Arc<str>, u64)>,
    /// The first `pinned` strings are the table of the base this build extends (blobs copied
    /// from it refer to them by index): they keep their index whatever their count.
    pinned: usize,
    /// Per property key: `(attempts, new strings)` until judged.
    sample: FxHashMap<u32, (u32, u32)>,
    /// Property keys whose strings stay inline (sorted).
    inline_keys: Vec<u32>,
}

impl Interner {
    /// An interner that extends `base`'s string table and inherits its inline keys.
    fn extending(base: &Base) -> Interner {
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

    fn intern(&mut self, key: u32, s: &Arc<str>) -> Option<u32> {
        if s.len() > INTERN_MAX_LEN || self.inline_keys.binary_search(&key).is_ok() {
            return None;
        }
        let hit = self.ids.get(&**s).copied();
        if let Some(e) = self.sample.get_mut(&key) {
            e.0 += 1;
            e.1 += u32::from(hit.is_none());
            if e.0 >= INTERN_SAMPLE {
                let (tries, new) = *e;
                self.sample.remove(&key);
                if u64::from(new) * 10 > u64::from(tries) * 9 {
                    if let Err(i) = self.inline_keys.binary_search(&key) {
                        self.inline_keys.insert(i, key);
                    }
                }
            }
        } else {
            self.sample.insert(key, (1, u32::from(hit.is_none())));
        }
        if let Some(i) = hit {
            self.strs[i as usize].1 += 1;
            return Some(i);
        }
        if self.strs.len() >= INTERN_MAX_DISTINCT {
            return None;
        }
        let i = self.strs.len() as u32;
        self.ids.insert(s.clone(), i);
        self.strs.push((s.clone(), 1));
        Some(i)
    }
}

fn put_var(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn put_props(buf: &mut Vec<u8>, props: &[(u32, Value)], interner: &mut Interner) {
    for (k, v) in props {
        let k_id = *k;
        let k = u64::from(*k) << 3;
        match v {
            Value::Null => {}
            Value::Bool(b) => put_var(buf, k | if *b { T_TRUE } else { T_FALSE }),
            Value::Int(i) => {
                put_var(buf, k | T_INT);
                put_var(buf, ((i << 1) ^ (i >> 63)) as u64);
            }
            Value::Float(f) => {
                put_var(buf, k | T_FLOAT);
                buf.extend_from_slice(&f.to_le_bytes());
            }
            Value::String(s) => match interner.intern(k_id, s) {
                Some(i) => {
                    put_var(buf, k | T_ISTR);
                    put_var(buf, u64::from(i));
                }
                None => {
                    put_var(buf, k | T_STR);
                    put_var(buf, s.len() as u64);
                    buf.extend_from_slice(s.as_bytes());
                }
            },
            other => {
                put_var(buf, k | T_OTHER);
                let mut e = Enc::new();
                e.value(other);
                buf.extend_from_slice(&e.buf);
            }
        }
    }
}

/// Reads the next property header: `(key, tag)`.
fn prop_header(d: &mut Dec<'_>) -> Option<(u32, u64)> {
    let h = d.var().ok()?;
    Some(((h >> 3) as u32, h & 7))
}

fn prop_value(d: &mut Dec<'_>, tag: u64, strings: &[Arc<str>]) -> Option<Value> {
    Some(match tag {
        T_FALSE => Value::Bool(false),
        T_TRUE => Value::Bool(true),
        T_INT => Value::Int(d.ivar().ok()?),
        T_FLOAT => Value::Float(d.f64().ok()?),
        T_STR => Value::String(Arc::from(d.str().ok()?)),
        T_ISTR => Value::String(strings.get(d.var().ok()? as usize)?.clone()),
        T_OTHER => d.value().ok()?,
        _ => return None,
    })
}

fn skip_value(d: &mut Dec<'_>, tag: u64) -> Option<()> {
    match tag {
        T_FALSE | T_TRUE => {}
        T_INT | T_ISTR => {
            d.var().ok()?;
        }
        T_FLOAT => {
            d.f64().ok()?;
        }
        T_STR => {
            d.bytes().ok()?;
        }
        T_OTHER => {
            d.value().ok()?;
        }
        _ => return None,
    }
    Some(())
}

/// Property blobs of one entity kind: `arena[off[i]..off[i + 1]]` for entity `i`.
#[derive(Default)]
struct PropCol {
    off: Packed,
    arena: Box<[u8]>,
}

impl PropCol {
    #[inline]
    fn blob(&self, i: u64) -> &[u8] {
        if self.arena.is_empty() {
            return &[];
        }
        // One representation match for both offsets.
        let off = self.off.view();
        let (a, b) = (off.get(i as usize) as usize, off.get(i as usize + 1) as usize);
        self.arena.get(a..b).unwrap_or(&[])
    }
    fn bytes(&self) -> usize {
        self.off.bytes() + self.arena.len()
    }
}

/// Entries of a CSR range decoded per chunk by [`Base::edges_one_dir`] (small, so the stack
/// buffers cost little for the usual handful of relationships).
const EDGE_CHUNK: usize = 8;

/// Calls `f(rel, other)` for the CSR entries `a..b` whose type passes `keep` (tested only with
/// `TYPED`), decoding the columns a chunk at a time.
#[inline(always)]
fn edge_run<const TYPED: bool>(
    a: usize,
    b: usize,
    other: PackedView<'_>,
    rel: PackedView<'_>,
    ty: PackedView<'_>,
    keep: impl Fn(u64) -> bool,
    mut f: impl FnMut(u64, u64),
) {
    let (mut os, mut rs, mut ts) = ([0u64; EDGE_CHUNK], [0u64; EDGE_CHUNK], [0u64; EDGE_CHUNK]);
    let mut p = a;
    while p < b {
        let k = (b - p).min(EDGE_CHUNK);
        other.fill(p, &mut os[..k]);
        rel.fill(p, &mut rs[..k]);
        if TYPED {
            ty.fill(p, &mut ts[..k]);
        }
        for i in 0..k {
            if !TYPED || keep(ts[i]) {
                f(rs[i], os[i]);
            }
        }
        p += k;
    }
}

/// Appends `make(rel, other)` for the CSR entries `a..e` whose type is one of `types` (all if
/// empty), with the loop specialised for the columns' usual representations: neighbours and
/// relationships as u32 or u64 slices or an id sequence, types as a constant (decided once) or
/// a u8/u16 slice. Other representations go through [`PackedView::get`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn push_edges<T>(
    other: PackedView<'_>,
    rel: PackedView<'_>,
    ty: PackedView<'_>,
    types: &[u32],
    a: usize,
    e: usize,
    dst: &mut Vec<T>,
    make: impl Fn(u64, u64) -> T + Copy,
) {
    let keep = |t: u64| types.iter().any(|x| u64::from(*x) == t);
    let all = std::iter::repeat(0u64);
    match (types, ty) {
        ([], _) => push_with(other, rel, all, |_| true, a, e, dst, make),
        (_, PackedView::Const(t, len)) if e <= len => {
            if keep(t) {
                push_with(other, rel, all, |_| true, a, e, dst, make)
            }
        }
        ([t], PackedView::U8(s)) if e <= s.len() => {
            let ts = s[a..e].iter().map(|x| u64::from(*x));
            push_with(other, rel, ts, |x| x == u64::from(*t), a, e, dst, make)
        }
        ([t], PackedView::U16(s)) if e <= s.len() => {
            let ts = s[a..e].iter().map(|x| u64::from(*x));
            push_with(other, rel, ts, |x| x == u64::from(*t), a, e, dst, make)
        }
        _ => push_with(other, rel, (a..e).map(|p| ty.get(p)), keep, a, e, dst, make),
    }
}

/// [`push_edges`] once the type column is chosen (`ts`, one value per entry of `a..e`, and
/// the test `keep`): specialises the neighbour and relationship columns.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn push_with<T>(
    other: PackedView<'_>,
    rel: PackedView<'_>,
    ts: impl Iterator<Item = u64>,
    keep: impl Fn(u64) -> bool,
    a: usize,
    e: usize,
    dst: &mut Vec<T>,
    make: impl Fn(u64, u64) -> T + Copy,
) {
    #[inline(always)]
    fn run<T>(
        os: impl Iterator<Item = u64>,
        rs: impl Iterator<Item = u64>,
        ts: impl Iterator<Item = u64>,
        keep: impl Fn(u64) -> bool,
        dst: &mut Vec<T>,
        make: impl Fn(u64, u64) -> T,
    ) {
        for ((o, r), t) in os.zip(rs).zip(ts) {
            if keep(t) {
                dst.push(make(r, o));
            }
        }
    }
    fn wide(s: &[u32]) -> impl Iterator<Item = u64> + '_ {
        s.iter().map(|x| u64::from(*x))
    }
    let seq = |first: u64| (first + a as u64)..;
    match (other, rel) {
        (PackedView::U32(o), PackedView::U32(r)) if e <= o.len() && e <= r.len() => {
            run(wide(&o[a..e]), wide(&r[a..e]), ts, keep, dst, make)
        }
        (PackedView::U32(o), PackedView::Seq(f, n)) if e <= o.len() && e <= n => {
            run(wide(&o[a..e]), seq(f), ts, keep, dst, make)
        }
        (PackedView::U64(o), PackedView::U64(r)) if e <= o.len() && e <= r.len() => {
            run(o[a..e].iter().copied(), r[a..e].iter().copied(), ts, keep, dst, make)
        }
        (PackedView::U64(o), PackedView::Seq(f, n)) if e <= o.len() && e <= n => {
            run(o[a..e].iter().copied(), seq(f), ts, keep, dst, make)
        }
        _ => run((a..e).map(|p| other.get(p)), (a..e).map(|p| rel.get(p)), ts, keep, dst, make),
    }
}

fn blob_get(blob: &[u8], key: u32, strings: &[Arc<str>]) -> Option<Value> {
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let (k, tag) = prop_header(&mut d)?;
        if k == key {
            // Booleans carry no payload: answered here, without the general decoder.
            return match tag {
                T_FALSE => Some(Value::Bool(false)),
                T_TRUE => Some(Value::Bool(true)),
                _ => prop_value(&mut d, tag, strings),
            };
        }
        if k > key {
            return None;
        }
        skip_value(&mut d, tag)?;
    }
    None
}

/// The integer value of `key` in a blob: `Some(None)` when the key is missing, `None` when it
/// holds another type (or the blob does not decode).
fn blob_int(blob: &[u8], key: u32) -> Option<Option<i64>> {
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let (k, tag) = prop_header(&mut d)?;
        if k == key {
            return if tag == T_INT { Some(Some(d.ivar().ok()?)) } else { None };
        }
        if k > key {
            return Some(None);
        }
        skip_value(&mut d, tag)?;
    }
    Some(None)
}

/// One node property key's values over the base's node ids, for keys every base node holds
/// as an integer or not at all: per node `value - min + 1`, or 0 where the node lacks the key,
/// packed as narrow as the value range allows (one byte per node for ages).
pub(crate) struct IntColumn {
    min: i64,
    codes: Packed,
}

impl IntColumn {
    /// The value of base node `id` (`None`: it has no such property). Valid for clean base
    /// rows only; the caller checks that.
    #[inline]
    pub fn get(&self, id: u64) -> Option<i64> {
        match self.codes.get(id as usize) {
            0 => None,
            c => Some(self.min.wrapping_add((c - 1) as i64)),
        }
    }

    /// Appends the values of `ids` (all clean base rows) as `Value`s, `Null` where missing:
    /// one match on the packing per batch instead of one per node.
    pub fn extend_values(&self, ids: &[NodeId], out: &mut Vec<Value>) {
        let min = self.min;
        let conv = move |c: u64| match c {
            0 => Value::Null,
            c => Value::Int(min.wrapping_add((c - 1) as i64)),
        };
        let at = |i: NodeId| i.0 as usize;
        match &self.codes {
            Packed::U8(v) => {
                out.extend(ids.iter().map(|i| conv(v.get(at(*i)).map_or(0, |x| u64::from(*x)))))
            }
            Packed::U16(v) => {
                out.extend(ids.iter().map(|i| conv(v.get(at(*i)).map_or(0, |x| u64::from(*x)))))
            }
            Packed::U32(v) => {
                out.extend(ids.iter().map(|i| conv(v.get(at(*i)).map_or(0, |x| u64::from(*x)))))
            }
            codes => out.extend(ids.iter().map(|i| conv(codes.get(at(*i))))),
        }
    }
}

fn blob_has(blob: &[u8], key: u32) -> bool {
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let Some((k, tag)) = prop_header(&mut d) else { return false };
        if k >= key {
            return k == key;
        }
        if skip_value(&mut d, tag).is_none() {
            return false;
        }
    }
    false
}

fn blob_all(blob: &[u8], strings: &[Arc<str>]) -> Vec<(u32, Value)> {
    let mut out = Vec::new();
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let Some((k, tag)) = prop_header(&mut d) else { break };
        let Some(v) = prop_value(&mut d, tag, strings) else { break };
        out.push((k, v));
    }
    out
}

/// How many properties a blob holds.
fn blob_entries(blob: &[u8]) -> u64 {
    let mut d = Dec::new(blob);
    let mut n = 0;
    while !d.is_empty() {
        let Some((_, tag)) = prop_header(&mut d) else { break };
        if skip_value(&mut d, tag).is_none() {
            break;
        }
        n += 1;
    }
    n
}

/// Re-encodes a blob with a new string table: kept strings get their new index, dropped ones
/// are written inline.
fn rewrite_blob(out: &mut Vec<u8>, blob: &[u8], remap: &[Option<u32>], old: &[(Arc<str>, u64)]) {
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let start = d.pos();
        let Some((k, tag)) = prop_header(&mut d) else { break };
        if tag == T_ISTR {
            let Ok(i) = d.var() else { break };
            let i = i as usize;
            let k = u64::from(k) << 3;
            match (remap.get(i).copied().flatten(), old.get(i)) {
                (Some(n), _) => {
                    put_var(out, k | T_ISTR);
                    put_var(out, u64::from(n));
                }
                (None, Some((s, _))) => {
                    put_var(out, k | T_STR);
                    put_var(out, s.len() as u64);
                    out.extend_from_slice(s.as_bytes());
                }
                (None, None) => {}
            }
        } else {
            if skip_value(&mut d, tag).is_none() {
                break;
            }
            out.extend_from_slice(&blob[start..d.pos()]);
        }
    }
}

// ------------------------------------------------------------------------------ the base

/// One indexed `(label, key)`: node ids ordered by a 32-bit hash of their key, packed as
/// `hash << 32 | id` (8 bytes per entry) while ids fit in 32 bits.
enum BaseIndex {
    Packed(Box<[u64]>),
    Wide(Box<[(u32, u64)]>),
}

impl BaseIndex {
    fn build(base: &Base, l: u32, k: &[u32]) -> BaseIndex {
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

    fn lookup(&self, h: u32, out: &mut Vec<u64>) {
        match self {
            BaseIndex::Packed(v) => {
                let lo = v.partition_point(|x| (x >> 32) < u64::from(h));
                let hi = v.partition_point(|x| (x >> 32) <= u64::from(h));
                out.extend(v[lo..hi].iter().map(|x| x & 0xffff_ffff));
            }
            BaseIndex::Wide(v) => {
                let lo = v.partition_point(|x| x.0 < h);
                let hi = v.partition_point(|x| x.0 <= h);
                out.extend(v[lo..hi].iter().map(|x| x.1));
            }
        }
    }

    fn bytes(&self) -> usize {
        match self {
            BaseIndex::Packed(v) => v.len() * 8,
            BaseIndex::Wide(v) => v.len() * 16,
        }
    }
}

fn key_hash(k: &IndexKey) -> u32 {
    let mut h = std::hash::DefaultHasher::new();
    k.hash(&mut h);
    h.finish() as u32
}

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
    label_code: Packed,
    label_sets: Vec<Box<[u32]>>,
    label_bits: HashMap<u32, Bits>,
    node_props: PropCol,
    /// Relationship ids `< rel_end` may be in the base.
    pub rel_end: u64,
    rel_count: u64,
    /// Forward position of each relationship id; `rel_count` marks a hole.
    rel_pos: Packed,
    rel_props: PropCol,
    out_off: Packed,
    out_other: Packed,
    out_rel: Packed,
    out_type: Packed,
    in_off: Packed,
    in_other: Packed,
    in_rel: Packed,
    in_type: Packed,
    /// The distinct relationship types present.
    rel_types: Vec<u32>,
    strings: Vec<Arc<str>>,
    /// Property keys whose string values are not interned (see [`Interner`]).
    inline_keys: Vec<u32>,
    indexes: HashMap<Target, BaseIndex>,
    /// Per indexed pair, node ids in key order; built lazily by the first range seek (most
    /// indexes only ever serve equality seeks, which the hash order answers).
    ordered: HashMap<Target, OnceLock<Box<[u64]>>>,
    /// Per node property key, its values as an [`IntColumn`] (`None`: some base node holds a
    /// value of another type); built lazily by the first batch read of the key
    /// ([`Base::int_column`]).
    int_cols: parking_lot::Mutex<FxHashMap<u32, Option<Arc<IntColumn>>>>,
    node_dirty: AtomicBits,
    rel_dirty: AtomicBits,
    stats: BaseStats,
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
            NodeRef::Base(b, id) => blob_get(b.node_props.blob(*id), key, &b.strings),
        }
    }
    pub fn has_prop(&self, key: u32) -> bool {
        match self {
            NodeRef::Data(d) => d.prop(key).is_some(),
            NodeRef::Base(b, id) => blob_has(b.node_props.blob(*id), key),
        }
    }
    pub fn props(&self) -> Vec<(u32, Value)> {
        match self {
            NodeRef::Data(d) => d.props.clone(),
            NodeRef::Base(b, id) => blob_all(b.node_props.blob(*id), &b.strings),
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
            RelRef::Base(b, _, pos) => b.out_other.get(*pos as usize),
        }
    }
    pub fn ty(&self) -> u32 {
        match self {
            RelRef::Data(r) => r.ty,
            RelRef::Base(b, _, pos) => b.out_type.get(*pos as usize) as u32,
        }
    }
    pub fn prop(&self, key: u32) -> Option<Value> {
        match self {
            RelRef::Data(r) => crate::mvcc::prop_of(&r.props, key).cloned(),
            RelRef::Base(b, id, _) => blob_get(b.rel_props.blob(*id), key, &b.strings),
        }
    }
    pub fn props(&self) -> Vec<(u32, Value)> {
        match self {
            RelRef::Data(r) => r.props.clone(),
            RelRef::Base(b, id, _) => blob_all(b.rel_props.blob(*id), &b.strings),
        }
    }
    pub fn to_data(self) -> RelData {
        RelData { start: self.start(), end: self.end(), ty: self.ty(), props: self.props() }
    }
}

impl Base {
    /// An empty base at ts 0.
    pub fn empty() -> Base {
        BaseBuilder::new(0).finish(&[])
    }

    pub fn stats(&self) -> &BaseStats {
        &self.stats
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

    fn build_int_column(&self, key: u32) -> Option<IntColumn> {
        let n = self.node_end;
        let (mut min, mut max) = (i64::MAX, i64::MIN);
        for id in 0..n {
            if let Some(v) = blob_int(self.node_props.blob(id), key)? {
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
            let code = match blob_int(self.node_props.blob(id), key)? {
                Some(v) => (v as i128 - min as i128 + 1) as u64,
                None => 0,
            };
            codes.push(code);
        }
        Some(IntColumn { min, codes: Packed::from_u64(codes) })
    }

    fn labels_of(&self, id: u64) -> &[u32] {
        let code = self.label_code.get(id as usize) as usize;
        self.label_sets.get(code).map_or(&[], |s| &s[..])
    }

    /// The code of a base node's label set (`usize::MAX` past the end); see [`Base::label_set`].
    pub(crate) fn node_label_code(&self, id: u64) -> usize {
        if id >= self.node_end {
            return usize::MAX;
        }
        self.label_code.get(id as usize) as usize
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
        id < self.node_end && self.label_code.get(id as usize) != 0
    }

    pub fn node(&self, id: u64) -> Option<NodeRef<'_>> {
        self.has_node(id).then_some(NodeRef::Base(self, id))
    }

    /// Forward position of a base relationship.
    fn pos_of(&self, id: u64) -> Option<u64> {
        if id >= self.rel_end {
            return None;
        }
        let p = self.rel_pos.get(id as usize);
        (p < self.rel_count).then_some(p)
    }

    pub fn has_rel(&self, id: u64) -> bool {
        self.pos_of(id).is_some()
    }

    pub fn rel(&self, id: u64) -> Option<RelRef<'_>> {
        self.pos_of(id).map(|p| RelRef::Base(self, id, p))
    }

    /// The node whose forward range contains `pos`.
    fn out_owner(&self, pos: u64) -> u64 {
        // Largest n with out_off[n] <= pos (empty ranges share offsets; pick the last one).
        let (mut lo, mut hi) = (0u64, self.node_end);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.out_off.get(mid as usize) <= pos {
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
        if n < self.node_end && self.out_off.get(n as usize) <= pos {
            for _ in 0..16 {
                if pos < self.out_off.get(n as usize + 1) {
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
        let p = pos as usize;
        let props = blob_all(self.rel_props.blob(id), &self.strings);
        Some((start, self.out_other.get(p), self.out_type.get(p) as u32, props))
    }

    /// The labels of a base node that no delta version or adjacency shadows (`None`: missing
    /// from the base or dirty), in one lookup of its label code.
    #[inline]
    pub fn clean_node_labels(&self, id: u64) -> Option<&[u32]> {
        if id >= self.node_end || self.node_dirty.get(id) {
            return None;
        }
        let code = self.label_code.get(id as usize) as usize;
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
    pub fn edges_one_dir(&self, node: u64, out: bool, types: &[u32], f: impl FnMut(u64, u64)) {
        if node >= self.node_end {
            return;
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
            return;
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
    ) {
        if node >= self.node_end {
            return;
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
            return;
        }
        dst.reserve(b - a);
        push_edges(other.view(), rel.view(), ty.view(), types, a, b, dst, make);
    }

    /// Calls `f(rel, other, type, outgoing)` for the node's base relationships.
    pub fn edges(&self, node: u64, out: bool, inc: bool, mut f: impl FnMut(u64, u64, u32, bool)) {
        if node >= self.node_end {
            return;
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
            self.pos_of(*id)
                .is_some_and(|p| types.contains(&(self.out_type.get(p as usize) as u32)))
        })
    }

    /// Whether this base has an index on `(label, key)`.
    pub fn indexes(&self, t: &Target) -> bool {
        self.indexes.contains_key(t)
    }

    /// Base nodes whose `(label, key)` value may equal `k` (a superset: hash matches).
    pub fn index_lookup(&self, t: &Target, k: &IndexKey, out: &mut Vec<u64>) {
        let Some(ix) = self.indexes.get(t) else { return };
        ix.lookup(key_hash(k), out);
    }

    /// Base nodes whose `(label, key)` value lies in `r` (appended to `out`, in key order).
    pub fn index_range(&self, t: &Target, r: &KeyRange, out: &mut Vec<u64>) {
        let Some(cell) = self.ordered.get(t) else { return };
        let (label, key) = (t.0, &t.1[..]);
        let ids = cell.get_or_init(|| {
            let mut v: Vec<(IndexKey, u64)> = Vec::new();
            let mut cur = 0;
            while let Some(id) = self.next_with_label(label, cur) {
                if let Some(k) = self.node(id).and_then(|n| n.key_for(label, key)) {
                    v.push((k, id));
                }
                cur = id + 1;
            }
            v.sort_unstable();
            v.into_iter().map(|(_, id)| id).collect()
        });
        let key_of = |id: u64| self.node(id).and_then(|n| n.key_for(label, key));
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
}

// ------------------------------------------------------------------------------ building

/// Builds a [`Base`] from entities fed in ascending id order (nodes first, then relationships).
pub(crate) struct BaseBuilder {
    ts: u64,
    /// The ts of the base this builder extends ([`BaseBuilder::extending`]).
    extends_ts: Option<u64>,
    interner: Interner,
    label_code: PackedBuilder,
    set_ids: FxHashMap<Vec<u32>, u32>,
    sets: Vec<Box<[u32]>>,
    label_bits: HashMap<u32, Bits>,
    node_off: PackedBuilder,
    node_arena: Vec<u8>,
    node_count: u64,
    node_props: u64,
    rel_ids: PackedBuilder,
    /// Start nodes, only materialized once relationships stop arriving in start order
    /// (until then `out_count` alone describes them).
    rel_start: Option<PackedBuilder>,
    last_start: u64,
    rel_endp: PackedBuilder,
    rel_type: PackedBuilder,
    /// Per-node relationship counts by direction (allocated at the first relationship).
    out_count: Option<Wide>,
    in_count: Option<Wide>,
    rel_off: PackedBuilder,
    rel_arena: Vec<u8>,
    rel_props: u64,
}

impl BaseBuilder {
    pub fn new(ts: u64) -> BaseBuilder {
        let mut node_off = PackedBuilder::default();
        node_off.push(0);
        let mut rel_off = PackedBuilder::default();
        rel_off.push(0);
        BaseBuilder {
            ts,
            extends_ts: None,
            interner: Interner::default(),
            label_code: PackedBuilder::default(),
            set_ids: FxHashMap::default(),
            sets: vec![Box::new([])],
            label_bits: HashMap::new(),
            node_off,
            node_arena: Vec::new(),
            node_count: 0,
            node_props: 0,
            rel_ids: PackedBuilder::default(),
            rel_start: None,
            last_start: 0,
            rel_endp: PackedBuilder::default(),
            rel_type: PackedBuilder::default(),
            out_count: None,
            in_count: None,
            rel_off,
            rel_arena: Vec::new(),
            rel_props: 0,
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
            self.node_off.push(self.node_arena.len() as u64);
        }
        let code = old.label_code.get(id as usize);
        self.label_code.push(code);
        for l in old.label_sets.get(code as usize).map_or(&[][..], |s| &s[..]) {
            self.label_bits.entry(*l).or_default().set(id);
        }
        let blob = old.node_props.blob(id);
        self.node_arena.extend_from_slice(blob);
        self.node_off.push(self.node_arena.len() as u64);
        self.node_count += 1;
        self.node_props += blob_entries(blob);
        true
    }

    /// Adds a node before any relationship; ids must ascend. Returns `false` (ignoring it)
    /// otherwise.
    pub fn node(&mut self, id: u64, labels: &[u32], props: &[(u32, Value)]) -> bool {
        let next = self.label_code.len() as u64;
        if id < next || self.out_count.is_some() {
            return false;
        }
        for _ in next..id {
            self.label_code.push(0);
            self.node_off.push(self.node_arena.len() as u64);
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
        put_props(&mut self.node_arena, props, &mut self.interner);
        self.node_off.push(self.node_arena.len() as u64);
        self.node_count += 1;
        self.node_props += props.len() as u64;
        true
    }

    /// Adds a relationship after all nodes; ids must ascend and both ends must have been added.
    /// Returns `false` (ignoring it) otherwise.
    pub fn rel(&mut self, id: u64, start: u64, end: u64, ty: u32, props: &[(u32, Value)]) -> bool {
        let next = self.rel_ids.last().map_or(0, |l| l + 1);
        let nodes = self.label_code.len();
        let has = |n: u64| (n as usize) < nodes && self.label_code.get(n as usize) != 0;
        if id < next || !has(start) || !has(end) {
            return false;
        }
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
            // No longer in start order: materialize the starts seen so far from the counts.
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
        for _ in next..id {
            self.rel_off.push(self.rel_arena.len() as u64);
        }
        self.rel_ids.push(id);
        self.rel_endp.push(end);
        self.rel_type.push(u64::from(ty));
        put_props(&mut self.rel_arena, props, &mut self.interner);
        self.rel_off.push(self.rel_arena.len() as u64);
        self.rel_props += props.len() as u64;
        true
    }

    /// Finishes the base, building the node indexes for `pairs`.
    pub fn finish(self, pairs: &[Target]) -> Base {
        let BaseBuilder {
            ts,
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
            rel_off,
            rel_arena,
            rel_props,
            ..
        } = self;
        let node_end = label_code.len() as u64;
        let n = node_end as usize;
        let rel_count = rel_ids.len() as u64;
        let rel_end = rel_ids.last().map_or(0, |l| l + 1);

        // Strings pay for a table entry (~48 bytes) when repeated enough.
        let mut remap: Vec<Option<u32>> = Vec::with_capacity(interner.strs.len());
        let mut strings: Vec<Arc<str>> = Vec::new();
        for (i, (s, count)) in interner.strs.iter().enumerate() {
            let saved = (*count as usize).saturating_sub(1) * s.len();
            // Strings of the extended base keep their index: blobs copied from it use them.
            if i < interner.pinned || (*count >= 2 && saved > 48) {
                remap.push(Some(strings.len() as u32));
                strings.push(s.clone());
            } else {
                remap.push(None);
            }
        }
        let identity = remap.iter().enumerate().all(|(i, r)| *r == Some(i as u32));
        let rewrite = |off: PackedBuilder, arena: Vec<u8>| -> PropCol {
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
                    rewrite_blob(&mut out, blob, &remap, &interner.strs);
                }
                noff.push(out.len() as u64);
            }
            PropCol { off: noff.finish(), arena: out.into_boxed_slice() }
        };
        let node_props_col = rewrite(node_off, node_arena);
        let rel_props_col = rewrite(rel_off, rel_arena);
        let inline_keys = interner.inline_keys;

        let mut rel_types: Vec<u32> = Vec::new();
        for i in 0..rel_type.len() {
            let t = rel_type.get(i) as u32;
            if rel_types.last() != Some(&t) && !rel_types.contains(&t) {
                rel_types.push(t);
            }
        }
        let max_type = rel_types.iter().copied().max().map_or(0, u64::from);
        let typed = |len: usize| (rel_types.len() > 1).then(|| Wide::new(len, 0, max_type));
        let mut out_off = out_count.unwrap_or_else(|| Wide::new(n + 1, 0, 0));
        let mut in_off = in_count.unwrap_or_else(|| Wide::new(n + 1, 0, 0));
        out_off.prefix_inclusive(rel_count);
        in_off.prefix_inclusive(rel_count);

        // Forward CSR. Entries are placed by walking relationships backwards and decrementing
        // each node's end position, which leaves the start positions behind (no cursor copy).
        let no_rels = rel_count == 0;
        let (out_other, out_rel, out_type, rel_pos);
        match &rel_start {
            None => {
                // Creation order is forward order: the columns are already CSR-ordered, and
                // the inclusive ends shift into exclusive starts.
                for i in (1..=n).rev() {
                    out_off.set(i, out_off.get(i - 1));
                }
                out_off.set(0, 0);
                rel_pos = if rel_end == rel_count {
                    Packed::Seq { first: 0, n: rel_count as usize }
                } else {
                    let mut p = Wide::new(rel_end as usize, rel_count, rel_count);
                    for i in 0..rel_ids.len() {
                        p.set(rel_ids.get(i) as usize, i as u64);
                    }
                    p.finish()
                };
                out_other = None;
                out_rel = None;
                out_type = None;
            }
            Some(starts) => {
                let len = rel_count as usize;
                let mut other = Wide::new(len, 0, node_end);
                let mut rel = Wide::new(len, 0, rel_end);
                let mut ty = typed(len);
                let mut pos = Wide::new(rel_end as usize, rel_count, rel_count);
                for i in (0..len).rev() {
                    let s = starts.get(i) as usize;
                    let p = out_off.get(s).saturating_sub(1);
                    out_off.set(s, p);
                    let p = p as usize;
                    other.set(p, rel_endp.get(i));
                    rel.set(p, rel_ids.get(i));
                    if let Some(t) = &mut ty {
                        t.set(p, rel_type.get(i));
                    }
                    pos.set(rel_ids.get(i) as usize, p as u64);
                }
                out_off.set(n, rel_count);
                out_other = Some(other.finish());
                out_rel = Some(rel.finish());
                out_type = ty.map(Wide::finish);
                rel_pos = pos.finish();
            }
        }
        // Backward CSR, the same way.
        let len = rel_count as usize;
        let mut in_other = Wide::new(len, 0, node_end);
        let mut in_rel = Wide::new(len, 0, rel_end);
        let mut in_type = typed(len);
        let mut owner = n; // start node of entry i when `rel_start` is None (walks down)
        for i in (0..len).rev() {
            let s = match &rel_start {
                Some(st) => st.get(i),
                None => {
                    while owner > 0 && out_off.get(owner) > i as u64 {
                        owner -= 1;
                    }
                    owner as u64
                }
            };
            let e = rel_endp.get(i) as usize;
            let p = in_off.get(e).saturating_sub(1);
            in_off.set(e, p);
            let p = p as usize;
            in_other.set(p, s);
            in_rel.set(p, rel_ids.get(i));
            if let Some(t) = &mut in_type {
                t.set(p, rel_type.get(i));
            }
        }
        in_off.set(n, rel_count);
        drop(rel_start);
        let konst = || Packed::Const { v: max_type, n: len };
        let out_other = out_other.unwrap_or_else(|| rel_endp.finish());
        let out_rel = out_rel.unwrap_or_else(|| rel_ids.finish());
        let out_type = match out_type {
            Some(t) => t,
            None if rel_types.len() > 1 => rel_type.finish(),
            None => konst(),
        };
        let in_type = in_type.map_or_else(konst, Wide::finish);

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
            in_other: in_other.finish(),
            in_rel: in_rel.finish(),
            in_type,
            rel_types,
            strings,
            inline_keys,
            indexes: HashMap::new(),
            ordered: HashMap::new(),
            int_cols: parking_lot::Mutex::new(FxHashMap::default()),
            node_dirty: AtomicBits::new(node_end),
            rel_dirty: AtomicBits::new(rel_end),
            stats: BaseStats::default(),
        };
        for t in pairs {
            let ix = BaseIndex::build(&base, t.0, &t.1);
            base.indexes.insert(t.clone(), ix);
            base.ordered.insert(t.clone(), OnceLock::new());
        }
        base.stats = BaseStats {
            nodes: node_count,
            relationships: rel_count,
            node_properties: node_props,
            rel_properties: rel_props,
            node_bytes: (base.label_code.bytes()
                + base.label_sets.iter().map(|s| s.len() * 4 + 16).sum::<usize>()
                + base.label_bits.values().map(Bits::bytes).sum::<usize>()
                + node_end.div_ceil(8) as usize) as u64,
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
                + rel_end.div_ceil(8) as usize) as u64,
            rel_property_bytes: base.rel_props.bytes() as u64,
            index_bytes: base.indexes.values().map(BaseIndex::bytes).sum::<usize>() as u64,
            interned_strings: base.strings.len() as u64,
        };
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dbg_v(v: Option<Value>) -> String {
        format!("{v:?}")
    }

    #[test]
    fn packed_picks_the_narrowest_shape() {
        assert!(matches!(Packed::from_u32(vec![7; 10]), Packed::Const { v: 7, n: 10 }));
        assert!(matches!(Packed::from_u32(vec![3, 4, 5]), Packed::Seq { first: 3, n: 3 }));
        assert!(matches!(Packed::from_u32(vec![1, 300, 2]), Packed::U16(_)));
        assert!(matches!(Packed::from_u32(vec![1, 200, 2]), Packed::U8(_)));
        let p = Packed::from_u64(vec![1, u64::MAX, 2]);
        assert!(matches!(p, Packed::U64(_)));
        assert_eq!(p.get(1), u64::MAX);
        assert_eq!(p.get(9), 0);
        let mut b = PackedBuilder::default();
        b.push(1);
        b.push(1 << 40);
        assert_eq!(b.get(1), 1 << 40);
        assert!(matches!(b.finish(), Packed::U64(_)));
    }

    #[test]
    fn builder_runs_cost_nothing_until_broken() {
        let mut b = PackedBuilder::default();
        for i in 5..9 {
            b.push(i);
        }
        assert!(b.small.is_empty() && b.big.is_none());
        assert_eq!((b.len(), b.get(3), b.last()), (4, 8, Some(8)));
        b.push(3);
        assert_eq!((b.len(), b.get(0), b.get(3), b.get(4)), (5, 5, 8, 3));
        let p = b.finish();
        assert!(matches!(p, Packed::U8(_)));
        assert_eq!((p.len(), p.get(4)), (5, 3));
        let mut c = PackedBuilder::default();
        c.push(7);
        c.push(7);
        assert!(matches!(c.finish(), Packed::Const { v: 7, n: 2 }));
        let mut d = PackedBuilder::default();
        d.push(7);
        assert!(matches!(d.finish(), Packed::Const { v: 7, n: 1 }));
        assert!(matches!(PackedBuilder::default().finish(), Packed::Const { n: 0, .. }));
    }

    #[test]
    fn bits_find_next() {
        let mut b = Bits::default();
        for i in [3u64, 64, 200] {
            b.set(i);
        }
        assert_eq!(b.next_from(0), Some(3));
        assert_eq!(b.next_from(4), Some(64));
        assert_eq!(b.next_from(65), Some(200));
        assert_eq!(b.next_from(201), None);
        assert!(b.get(64) && !b.get(65));
    }

    fn sample(sorted: bool) -> Base {
        let mut b = BaseBuilder::new(5);
        let man: Arc<str> = Arc::from("a fairly long repeated string value for interning");
        for id in [0u64, 1, 3] {
            b.node(
                id,
                &[1],
                &[
                    (0, Value::Int(id as i64 * 1000)),
                    (2, Value::String(man.clone())),
                    (3, Value::String(Arc::from(format!("u{id}")))),
                    (4, Value::Float(1.5)),
                    (5, Value::List(vec![Value::Bool(true)])),
                ],
            );
        }
        assert!(!b.node(2, &[], &[]));
        b.node(4, &[1, 2], &[]);
        let rels: Vec<(u64, u64, u64, u32)> = if sorted {
            vec![(0, 0, 1, 7), (1, 0, 3, 7), (2, 1, 0, 7), (4, 3, 3, 7)]
        } else {
            vec![(0, 3, 1, 7), (1, 0, 3, 8), (2, 1, 0, 7), (4, 0, 3, 7)]
        };
        for (id, s, e, t) in rels {
            b.rel(id, s, e, t, if id == 2 { &[(9, Value::Bool(false))] } else { &[] });
        }
        b.finish(&[(1, vec![0]), (1, vec![3])])
    }

    #[test]
    fn base_round_trips_nodes_rels_and_indexes() {
        for sorted in [true, false] {
            let b = sample(sorted);
            assert!(b.has_node(0) && b.has_node(1) && !b.has_node(2) && b.has_node(4));
            assert!(!b.has_node(99));
            let n = b.node(3).unwrap();
            assert_eq!(n.labels(), &[1]);
            assert_eq!(dbg_v(n.prop(0)), "Some(Int(3000))");
            assert_eq!(dbg_v(n.prop(3)), dbg_v(Some(Value::str("u3"))));
            assert!(n.prop(1).is_none());
            assert!(n.has_prop(4) && !n.has_prop(1));
            assert_eq!(n.props().len(), 5);
            assert_eq!(b.node(4).unwrap().labels(), &[1, 2]);
            assert_eq!(b.strings.len(), 1, "only the repeated long string is interned");
            assert!(b.has_rel(0) && !b.has_rel(3) && b.has_rel(4) && !b.has_rel(5));
            let r = b.rel(2).unwrap();
            assert_eq!((r.start(), r.end(), r.ty()), (1, 0, 7));
            assert_eq!(dbg_v(r.prop(9)), "Some(Bool(false))");
            let r = b.rel(0).unwrap();
            let want = if sorted { (0, 1) } else { (3, 1) };
            assert_eq!((r.start(), r.end()), want);
            let mut out = Vec::new();
            b.edges(0, true, true, |rel, other, ty, o| out.push((rel, other, ty, o)));
            let mut in3 = Vec::new();
            b.edges(3, false, true, |rel, other, _, _| in3.push((rel, other)));
            if sorted {
                assert_eq!(out, vec![(0, 1, 7, true), (1, 3, 7, true), (2, 1, 7, false)]);
                assert_eq!(in3, vec![(1, 0), (4, 3)]);
            } else {
                assert_eq!(out, vec![(1, 3, 8, true), (4, 3, 7, true), (2, 1, 7, false)]);
                assert_eq!(in3, vec![(1, 0), (4, 0)]);
            }
            assert_eq!(b.next_with_label(2, 0), Some(4));
            assert_eq!(b.next_with_label(1, 2), Some(3));
            let mut c = Vec::new();
            b.index_lookup(&(1, vec![0]), &index_key(&Value::Float(1000.0)).unwrap(), &mut c);
            assert_eq!(c, vec![1]);
            c.clear();
            b.index_lookup(&(1, vec![3]), &index_key(&Value::str("u0")).unwrap(), &mut c);
            assert_eq!(c, vec![0]);
        }
    }

    #[test]
    fn dirty_bits() {
        let b = sample(true);
        assert!(!b.node_dirty(1));
        b.mark_node(1);
        assert!(b.node_dirty(1) && !b.node_dirty(0));
        assert!(b.node_dirty(100), "ids beyond the base always consult the delta");
        assert!(!b.rel_dirty(4));
        b.mark_rel(4);
        assert!(b.rel_dirty(4));
    }
}
