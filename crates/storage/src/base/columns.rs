//! Integer columns and bitsets of the base: [`Packed`] (constant, arithmetic sequence or the
//! narrowest of u8/u16/u32/u64), its builders, and plain and atomic (dirty-bit) bitsets.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use arbor_model::NodeId;

use super::paged::PagedWords;

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

    pub(super) fn shape(
        n: usize,
        first: u64,
        mut it: impl Iterator<Item = u64>,
    ) -> (bool, bool, u64) {
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
    pub(super) run: Option<(u64, u64, usize)>,
    pub(super) small: Vec<u32>,
    pub(super) big: Option<Vec<u64>>,
}

impl Default for PackedBuilder {
    fn default() -> Self {
        PackedBuilder { run: Some((0, 2, 0)), small: Vec::new(), big: None }
    }
}

impl PackedBuilder {
    pub(super) fn push_val(&mut self, x: u64) {
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
pub(super) enum Wide {
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

impl Wide {
    pub(super) fn new(n: usize, fill: u64, max: u64) -> Wide {
        match Wide::width(max) {
            2 => Wide::U16(vec![fill as u16; n]),
            4 => Wide::U32(vec![fill as u32; n]),
            _ => Wide::U64(vec![fill; n]),
        }
    }
    /// Bytes per value of a column holding values up to `max` (2, 4 or 8).
    pub(super) fn width(max: u64) -> usize {
        if max <= u64::from(u16::MAX) {
            2
        } else if max <= u64::from(u32::MAX) {
            4
        } else {
            8
        }
    }
    pub(super) fn get(&self, i: usize) -> u64 {
        match self {
            Wide::U16(v) => v.get(i).map_or(0, |x| u64::from(*x)),
            Wide::U32(v) => v.get(i).map_or(0, |x| u64::from(*x)),
            Wide::U64(v) => v.get(i).copied().unwrap_or(0),
        }
    }
    pub(super) fn set(&mut self, i: usize, x: u64) {
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
    pub(super) fn len(&self) -> usize {
        match self {
            Wide::U16(v) => v.len(),
            Wide::U32(v) => v.len(),
            Wide::U64(v) => v.len(),
        }
    }
    /// Turns per-node counts (`self[s]`, last entry 0) into inclusive prefix sums (the end of
    /// each node's range), widening first if the total needs it. Returns the total.
    pub(super) fn prefix_inclusive(&mut self, total: u64) -> u64 {
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
    pub(super) fn finish(self) -> Packed {
        match self {
            Wide::U16(v) => Packed::U16(v.into_boxed_slice()),
            Wide::U32(v) => Packed::U32(v.into_boxed_slice()),
            Wide::U64(v) => Packed::U64(v.into_boxed_slice()),
        }
    }
}

// ------------------------------------------------------------------------------ bitsets

/// A plain bitset: its words in memory, or (a label's bitset of a base opened from a segment
/// under a budget that does not hold it) read from the segment through the pool.
#[derive(Default)]
pub(crate) struct Bits {
    pub(super) words: Vec<u64>,
    /// Set when the words are read from the segment (`words` is then empty).
    pub(super) paged: Option<Box<PagedWords>>,
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
    /// Every word (read from the segment when paged; a failed read returned).
    pub fn all_words(&self) -> arbor_model::Result<std::borrow::Cow<'_, [u64]>> {
        match &self.paged {
            None => Ok(std::borrow::Cow::Borrowed(&self.words)),
            Some(p) => Ok(std::borrow::Cow::Owned(p.all()?)),
        }
    }
    /// The first set bit `>= from` (when paged, `None` also after a failed read, which the
    /// base then reports).
    pub fn next_from(&self, from: u64) -> Option<u64> {
        let mut mask = !0u64 << (from % 64);
        if let Some(p) = &self.paged {
            let mut found = None;
            p.scan(from / 64, |w, word| {
                let x = word & std::mem::replace(&mut mask, !0);
                if x != 0 {
                    found = Some(w * 64 + u64::from(x.trailing_zeros()));
                }
                found.is_none()
            });
            return found;
        }
        let mut w = (from / 64) as usize;
        let mut word = *self.words.get(w)? & mask;
        loop {
            if word != 0 {
                return Some(w as u64 * 64 + u64::from(word.trailing_zeros()));
            }
            w += 1;
            word = *self.words.get(w)?;
        }
    }
    /// Appends to `out` the set bits `>= from` and `< end`, in order, at most `max` of them:
    /// a word at a time, the set bits of a word taken lowest first.
    pub fn extend_ids(&self, from: u64, end: u64, max: usize, out: &mut Vec<NodeId>) {
        let mut left = max;
        let mut mask = !0u64 << (from % 64);
        // Takes the set bits of word `w`; false once the scan is done.
        let mut take = |w: u64, word: u64| {
            let mut x = word & std::mem::replace(&mut mask, !0);
            let first = w * 64;
            if x == !0 && left >= 64 && first + 64 <= end {
                // A full word (a dense label): its 64 ids are one run, written without a
                // bit scan.
                out.extend((first..first + 64).map(NodeId));
                left -= 64;
                return left > 0 && first + 64 < end;
            }
            while x != 0 && left > 0 {
                let id = w * 64 + u64::from(x.trailing_zeros());
                if id >= end {
                    return false;
                }
                out.push(NodeId(id));
                left -= 1;
                x &= x - 1;
            }
            left > 0 && (w + 1) * 64 < end
        };
        match &self.paged {
            Some(p) => p.scan(from / 64, take),
            None => {
                for w in (from / 64) as usize..self.words.len() {
                    if !take(w as u64, self.words[w]) {
                        return;
                    }
                }
            }
        }
    }
    /// Bytes held in memory.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// Words per lazily allocated chunk of an [`AtomicBits`] (32 KiB, 262,144 bits).
const DIRTY_CHUNK: usize = 4096;

/// A bitset that can be set concurrently (dirty bits). Its words are allocated a chunk at a
/// time on the first bit set in the chunk, so a base opened at any size holds no dirty bits
/// until writes touch it (no O(nodes + relationships) zeroed memory at open).
pub(crate) struct AtomicBits {
    chunks: Box<[OnceLock<Box<[AtomicU64]>>]>,
    /// Whether any bit was ever set. A freshly loaded base has none, and then every read is
    /// answered by this one flag (shared, never written again once set) instead of a load from
    /// the bit array per node or relationship on the traversal hot path.
    pub(super) any: AtomicBool,
}

impl AtomicBits {
    pub(super) fn new(n: u64) -> AtomicBits {
        let words = n.div_ceil(64) as usize;
        AtomicBits {
            chunks: (0..words.div_ceil(DIRTY_CHUNK)).map(|_| OnceLock::new()).collect(),
            any: AtomicBool::new(false),
        }
    }
    pub fn set(&self, i: u64) {
        let w = (i / 64) as usize;
        if let Some(c) = self.chunks.get(w / DIRTY_CHUNK) {
            let c = c.get_or_init(|| (0..DIRTY_CHUNK).map(|_| AtomicU64::new(0)).collect());
            // The flag is raised before the bit (both Release, and before the commit that needs
            // them becomes visible), so a reader that sees the commit sees the flag.
            if !self.any.load(Ordering::Relaxed) {
                self.any.store(true, Ordering::Release);
            }
            c[w % DIRTY_CHUNK].fetch_or(1 << (i % 64), Ordering::Release);
        }
    }
    /// Sets every bit set in `other` (of the same length).
    pub fn copy_from(&self, other: &AtomicBits) {
        if !other.any() {
            return;
        }
        for (ci, c) in other.chunks.iter().enumerate() {
            let Some(c) = c.get() else { continue };
            for (wi, word) in c.iter().enumerate() {
                let mut bits = word.load(Ordering::Acquire);
                let base = ((ci * DIRTY_CHUNK + wi) * 64) as u64;
                while bits != 0 {
                    self.set(base + u64::from(bits.trailing_zeros()));
                    bits &= bits - 1;
                }
            }
        }
    }
    /// Whether any bit was ever set.
    #[inline]
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }
    #[inline]
    pub fn get(&self, i: u64) -> bool {
        if !self.any.load(Ordering::Acquire) {
            return false;
        }
        let w = (i / 64) as usize;
        self.chunks
            .get(w / DIRTY_CHUNK)
            .and_then(OnceLock::get)
            .is_some_and(|c| c[w % DIRTY_CHUNK].load(Ordering::Acquire) & (1 << (i % 64)) != 0)
    }
}
