//! The HNSW graph (Malkov & Yashunin): layered proximity graphs over slot numbers, flat link arrays.
//!
//! Layer 0 holds every node with up to `m0` links in one flat `u32` array (stride `m0`) and a
//! one-byte count per node; the few nodes on upper layers (a `1/m` fraction per layer) keep
//! `m` links per layer in a second flat array found through a small map. Links are atomics so
//! the bulk build can insert from several threads: a writer takes the stripe lock of the one
//! node whose list it changes (never two at once, so no deadlock), readers take no lock and may
//! see a list mid-update, which only costs a little accuracy, never safety (every stored id is a
//! valid slot). The graph knows nothing of versions or ids: visibility is a predicate the caller
//! passes to [`Graph::search`].

use std::cmp::{Ordering as CmpOrdering, Reverse};
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, AtomicU8, AtomicUsize, Ordering};

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::codes::{CodeQuery, Codebook};
use crate::distance::Similarity;
use crate::error::{Result, VectorError};

/// Highest layer a node may get; with `m >= 4` layer 16 is never reached in practice.
pub(crate) const MAX_LEVEL: u8 = 16;
/// Number of lock stripes for concurrent link updates.
const STRIPES: usize = 1024;
/// Marks "no entry point yet".
const NO_NODE: u32 = u32::MAX;

/// A candidate: a slot and its distance to the query (smaller is closer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cand {
    pub dist: f32,
    pub slot: u32,
}

impl Eq for Cand {}

impl Cand {
    /// The order key: `f32::total_cmp`'s order of the distance in the high half (its bits
    /// mapped to an unsigned integer of the same order), the slot in the low half, so a
    /// heap's comparison is one integer compare instead of two branches.
    #[inline]
    fn key(&self) -> u64 {
        let bits = self.dist.to_bits();
        let ordered = bits ^ (((bits as i32 >> 31) as u32) >> 1) ^ 0x8000_0000;
        (u64::from(ordered) << 32) | u64::from(self.slot)
    }
}

impl Ord for Cand {
    /// By distance (`f32::total_cmp`), then by slot.
    #[inline]
    fn cmp(&self, other: &Self) -> CmpOrdering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for Cand {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

/// What the graph measures distances to: the prepared f32 vectors, or their one-byte codes
/// (`crate::codes`) with each code's norm term.
#[derive(Clone, Copy)]
pub(crate) enum Stored<'a> {
    F32(&'a [f32]),
    Codes { book: &'a Codebook, codes: &'a [u8], norms: &'a [f32] },
}

/// The stored vectors as the graph sees them, plus (`raw`) the exact prepared vectors of the
/// slots from a first one on, when the caller has them (a build or a batch being linked):
/// the nodes being linked then choose their links from exact query vectors.
#[derive(Clone, Copy)]
pub(crate) struct Space<'a> {
    pub similarity: Similarity,
    pub dims: usize,
    pub stored: Stored<'a>,
    pub raw: Option<(u32, &'a [f32])>,
}

/// A query prepared for a [`Space`]: its f32 vector and, over codes, its code weights.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query {
    pub vector: Vec<f32>,
    code: CodeQuery,
}

impl Space<'_> {
    /// The prepared vector of `slot` into `out`: exact when known, else decoded.
    pub fn vector_into(&self, slot: u32, out: &mut Vec<f32>) {
        let (at, dims) = (slot as usize * self.dims, self.dims);
        if let Some((first, raw)) = self.raw {
            if slot >= first {
                let at = (slot - first) as usize * dims;
                out.clear();
                out.extend_from_slice(&raw[at..at + dims]);
                return;
            }
        }
        match self.stored {
            Stored::F32(data) => {
                out.clear();
                out.extend_from_slice(&data[at..at + dims]);
            }
            Stored::Codes { book, codes, .. } => book.decode(&codes[at..at + dims], out),
        }
    }

    /// Prepares `v` (a prepared vector) as a query into `out`.
    pub fn prepare(&self, v: &[f32], out: &mut Query) {
        out.vector.clear();
        out.vector.extend_from_slice(v);
        if let Stored::Codes { book, .. } = self.stored {
            book.query(self.similarity, v, &mut out.code);
        }
    }

    /// Prepares the vector of `slot` as a query: over codes from its exact vector when known,
    /// else straight from its code (no decoded copy); no allocation once `out` has room.
    fn prepare_slot(&self, slot: u32, out: &mut Query) {
        if let Stored::Codes { book, codes, .. } = self.stored {
            out.vector.clear();
            let (at, dims) = (slot as usize * self.dims, self.dims);
            match self.raw {
                Some((first, raw)) if slot >= first => {
                    let at = (slot - first) as usize * dims;
                    book.query(self.similarity, &raw[at..at + dims], &mut out.code);
                }
                _ => book.query_code(self.similarity, &codes[at..at + dims], &mut out.code),
            }
            return;
        }
        let mut v = std::mem::take(&mut out.vector);
        self.vector_into(slot, &mut v);
        if let Stored::Codes { book, .. } = self.stored {
            book.query(self.similarity, &v, &mut out.code);
        }
        out.vector = v;
    }

    /// Asks the CPU to start loading what [`Space::distance`] will read for `slot` (the first
    /// two cache lines: a search computes a node's fresh neighbours one after another, and
    /// at a million entries nearly every one is a cache miss).
    #[inline]
    fn prefetch(&self, slot: u32) {
        let at = slot as usize * self.dims;
        match self.stored {
            Stored::F32(data) => crate::simd::prefetch(data[at..].as_ptr().cast()),
            Stored::Codes { codes, norms, .. } => {
                crate::simd::prefetch(codes[at..].as_ptr());
                crate::simd::prefetch_line(norms[slot as usize..].as_ptr().cast());
            }
        }
    }

    /// [`Space::distance`] to each of `slots` into `out`, the slots' data prefetched first;
    /// `dots` is a buffer. Over codes one kernel call measures them all.
    fn distances(&self, query: &Query, slots: &[u32], (dots, out): (&mut Vec<i32>, &mut Vec<f32>)) {
        for &n in slots {
            self.prefetch(n);
        }
        match self.stored {
            Stored::F32(_) => {
                out.clear();
                out.extend(slots.iter().map(|&s| self.distance(query, s)));
            }
            Stored::Codes { codes, norms, .. } => {
                query.code.distances((codes, norms, self.dims), slots, dots, out)
            }
        }
    }

    /// Whether some query of `queries` is not farther than `bound` from `slot` (the
    /// heuristic's test; a NaN distance counts as not farther, as `!(d > bound)`), stopping
    /// at the first such query. Over codes one kernel call runs them all.
    fn any_within(&self, queries: &[Query], slot: u32, bound: f32) -> bool {
        let within = |d: f32| d.partial_cmp(&bound) != Some(CmpOrdering::Greater);
        if let Stored::Codes { codes, norms, .. } = self.stored {
            let at = slot as usize * self.dims;
            let (code, norm) = (&codes[at..at + self.dims], norms[slot as usize]);
            #[cfg(target_arch = "x86_64")]
            if queries.first().is_some_and(|q| q.code.simd) {
                fn weights(q: &Query) -> &[i16] {
                    &q.code.weights
                }
                return crate::simd::any_dot(code, queries, weights, |q, dot| {
                    within(q.code.base + q.code.mul * dot as f32 + norm)
                });
            }
            return queries.iter().any(|q| within(q.code.distance(code, norm)));
        }
        queries.iter().any(|q| within(self.distance(q, slot)))
    }

    /// The distance the graph walks by (approximate over codes).
    #[inline]
    pub fn distance(&self, query: &Query, slot: u32) -> f32 {
        let at = slot as usize * self.dims;
        match self.stored {
            Stored::F32(data) => self.similarity.distance(&query.vector, &data[at..at + self.dims]),
            Stored::Codes { codes, norms, .. } => {
                query.code.distance(&codes[at..at + self.dims], norms[slot as usize])
            }
        }
    }
}

/// Visited marks for one search, reused across searches through a generation counter, and
/// the buffers an insert reuses (so linking a node allocates almost nothing).
///
/// A mark is one byte (the generation modulo 255, all cleared when it wraps, once every 255
/// searches): a search reads the mark of every link it expands, at random slots, so the
/// array's size decides whether those reads hit L1 (20 KB at 20 k entries) or miss.
#[derive(Default)]
pub(crate) struct Visited {
    marks: Vec<u8>,
    epoch: u8,
    /// Prepared queries for the neighbour heuristic ([`Graph::select`]).
    pool: Vec<Query>,
    /// Distances of a batch of fresh neighbours, and their integer dot products.
    dists: Vec<f32>,
    dots: Vec<i32>,
    link: LinkScratch,
    /// A layer search's frontier and expanded links, and the prepared vector of the node
    /// being linked (kept for their allocations).
    todo: BinaryHeap<Reverse<Cand>>,
    buf: Vec<u32>,
    query: Query,
}

impl Visited {
    fn reset(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks.resize(n, 0);
            crate::simd::advise_huge_pages(&self.marks);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.fill(0);
            self.epoch = 1;
        }
    }

    /// Marks `slot`; true when it was not marked yet.
    #[inline]
    fn insert(&mut self, slot: u32) -> bool {
        let mark = &mut self.marks[slot as usize];
        let fresh = *mark != self.epoch;
        *mark = self.epoch;
        fresh
    }
}

/// Buffers one inserting thread reuses across its link updates.
#[derive(Default)]
struct LinkScratch {
    links: Vec<u32>,
    dists: Vec<f32>,
    dots: Vec<i32>,
    order: Vec<usize>,
    base: Query,
    /// The links closer to the list's owner than the newcomer, and their distances to it.
    near: Vec<u32>,
    near_dists: Vec<f32>,
}

/// The layered link structure.
pub(crate) struct Graph {
    pub m: usize,
    pub m0: usize,
    pub levels: Vec<u8>,
    count0: Vec<AtomicU8>,
    links0: Vec<AtomicU32>,
    /// For a node on layer >= 1: where its upper lists start in `upper` (`m + 1` words per
    /// layer: the count, then the links).
    upper_at: FxHashMap<u32, u32>,
    upper: Vec<AtomicU32>,
    pub entry: u32,
    pub max_level: u8,
    locks: Vec<Mutex<()>>,
}

impl Graph {
    /// An empty graph with the given degrees (`m` on upper layers, `m0` on layer 0).
    pub fn new(m: usize, m0: usize) -> Graph {
        assert!(m >= 2 && m0 >= m && m0 <= 255, "degrees checked by the config");
        Graph {
            m,
            m0,
            levels: Vec::new(),
            count0: Vec::new(),
            links0: Vec::new(),
            upper_at: FxHashMap::default(),
            upper: Vec::new(),
            entry: NO_NODE,
            max_level: 0,
            locks: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.levels.len()
    }

    /// Reserves room for `n` more nodes, so a bulk build does not over-allocate.
    pub fn reserve(&mut self, n: usize) {
        self.levels.reserve_exact(n);
        self.count0.reserve_exact(n);
        self.links0.reserve_exact(n * self.m0);
        crate::simd::advise_huge_pages(&self.links0);
    }

    /// Checks that nodes with these layers fit after the current ones: slots and offsets into
    /// the upper link array are `u32`, so an index past about four billion entries (or links)
    /// is refused with an error instead of wrapping or panicking.
    pub fn check_room(&self, levels: impl IntoIterator<Item = u8>) -> Result<()> {
        let mut upper = self.upper.len();
        for (slot, level) in (self.levels.len()..).zip(levels) {
            if slot >= NO_NODE as usize {
                return Err(VectorError::Full { what: "entries", max: u64::from(NO_NODE) });
            }
            if level > 0 {
                if upper > u32::MAX as usize {
                    return Err(VectorError::Full { what: "links", max: u64::from(u32::MAX) });
                }
                upper += usize::from(level) * (self.m + 1);
            }
        }
        Ok(())
    }

    /// Adds an unlinked node on layers `0..=level`; returns its slot, or an error (changing
    /// nothing) when the graph is full (see [`Graph::check_room`]).
    pub fn push_node(&mut self, level: u8) -> Result<u32> {
        let full = |what| VectorError::Full { what, max: u64::from(u32::MAX) };
        let slot = u32::try_from(self.levels.len())
            .ok()
            .filter(|&s| s != NO_NODE)
            .ok_or(full("entries"))?;
        let at = if level > 0 {
            Some(u32::try_from(self.upper.len()).map_err(|_| full("links"))?)
        } else {
            None
        };
        self.levels.push(level);
        self.count0.push(AtomicU8::new(0));
        let capacity = self.links0.capacity();
        self.links0.extend((0..self.m0).map(|_| AtomicU32::new(0)));
        if self.links0.capacity() != capacity {
            crate::simd::advise_huge_pages(&self.links0);
        }
        if let Some(at) = at {
            self.upper_at.insert(slot, at);
            let words = usize::from(level) * (self.m + 1);
            self.upper.extend((0..words).map(|_| AtomicU32::new(0)));
        }
        Ok(slot)
    }

    /// Copies the links of `slot` on `level` into `out`.
    #[inline]
    pub fn neighbours(&self, slot: u32, level: u8, out: &mut Vec<u32>) {
        out.clear();
        if level == 0 {
            let n = usize::from(self.count0[slot as usize].load(Ordering::Acquire)).min(self.m0);
            let at = slot as usize * self.m0;
            out.extend(self.links0[at..at + n].iter().map(|l| l.load(Ordering::Relaxed)));
        } else if let Some(base) = self.upper_index(slot, level) {
            let n = (self.upper[base].load(Ordering::Acquire) as usize).min(self.m);
            let links = &self.upper[base + 1..base + 1 + n];
            out.extend(links.iter().map(|l| l.load(Ordering::Relaxed)));
        }
    }

    /// The links of `slot` on `level` that `visited` has not seen, marked as seen, into `out`
    /// (one pass: a copy then a `retain` was 6% of a build's instructions).
    #[inline]
    fn fresh_neighbours(&self, slot: u32, level: u8, visited: &mut Visited, out: &mut Vec<u32>) {
        out.clear();
        if level == 0 {
            let n = usize::from(self.count0[slot as usize].load(Ordering::Acquire)).min(self.m0);
            let at = slot as usize * self.m0;
            // Branch-free: every link is written and the length advances only past fresh
            // ones. A branch here mispredicts about every other link and each miss throws
            // away the mark loads started behind it; without it the loads overlap.
            out.resize(n, 0);
            let mut kept = 0;
            for cell in &self.links0[at..at + n] {
                let link = cell.load(Ordering::Relaxed);
                out[kept] = link;
                kept += usize::from(visited.insert(link));
            }
            out.truncate(kept);
        } else if let Some(base) = self.upper_index(slot, level) {
            let n = (self.upper[base].load(Ordering::Acquire) as usize).min(self.m);
            for cell in &self.upper[base + 1..base + 1 + n] {
                let link = cell.load(Ordering::Relaxed);
                if visited.insert(link) {
                    out.push(link);
                }
            }
        }
    }

    /// Asks the CPU to start loading the layer-0 link list of `slot` (its count and every
    /// line of its links), which a search reads when it expands `slot` next.
    #[inline]
    fn prefetch_links0(&self, slot: u32) {
        let at = slot as usize * self.m0;
        if let Some(links) = self.links0.get(at..at + self.m0) {
            crate::simd::prefetch_all(links);
        }
        if let Some(count) = self.count0.get(slot as usize..slot as usize + 1) {
            crate::simd::prefetch_all(count);
        }
    }

    fn upper_index(&self, slot: u32, level: u8) -> Option<usize> {
        if level == 0 || level > self.levels[slot as usize] {
            return None;
        }
        let at = *self.upper_at.get(&slot)? as usize;
        Some(at + usize::from(level - 1) * (self.m + 1))
    }

    /// Replaces the links of `slot` on `level`; the caller holds the slot's stripe lock.
    fn set_neighbours(&self, slot: u32, level: u8, links: &[u32]) {
        if level == 0 {
            let n = links.len().min(self.m0);
            let at = slot as usize * self.m0;
            for (cell, &l) in self.links0[at..at + n].iter().zip(links) {
                cell.store(l, Ordering::Relaxed);
            }
            self.count0[slot as usize].store(n as u8, Ordering::Release);
        } else if let Some(base) = self.upper_index(slot, level) {
            let n = links.len().min(self.m);
            for (cell, &l) in self.upper[base + 1..base + 1 + n].iter().zip(links) {
                cell.store(l, Ordering::Relaxed);
            }
            self.upper[base].store(n as u32, Ordering::Release);
        }
    }

    fn lock(&self, slot: u32) -> parking_lot::MutexGuard<'_, ()> {
        self.locks[slot as usize % STRIPES].lock()
    }

    /// Greedy walk on one layer towards `query` (ef = 1).
    fn greedy(&self, space: Space<'_>, query: &Query, best: Cand, level: u8) -> Cand {
        self.greedy_skipping(space, query, best, level, None)
    }

    /// [`Graph::greedy`] that never steps onto `skip`.
    fn greedy_skipping(
        &self,
        space: Space<'_>,
        query: &Query,
        mut best: Cand,
        level: u8,
        skip: Option<u32>,
    ) -> Cand {
        let mut buf = Vec::with_capacity(self.m);
        loop {
            let mut moved = false;
            self.neighbours(best.slot, level, &mut buf);
            for &n in &buf {
                if Some(n) == skip {
                    continue;
                }
                let d = space.distance(query, n);
                if d < best.dist {
                    best = Cand { dist: d, slot: n };
                    moved = true;
                }
            }
            if !moved {
                return best;
            }
        }
    }

    /// Best-first search on one layer; returns up to `ef` accepted candidates, closest first.
    /// Nodes the predicate rejects still route the search but never enter the result.
    #[allow(clippy::too_many_arguments)] // the hot loop's inputs; a struct would only rename them
    pub fn search_layer(
        &self,
        space: Space<'_>,
        query: &Query,
        entries: &[Cand],
        ef: usize,
        level: u8,
        visited: &mut Visited,
        accept: Option<&dyn Fn(u32) -> bool>,
    ) -> Vec<Cand> {
        self.search_layer_skipping(space, query, entries, ef, level, visited, accept, None)
    }

    /// [`Graph::search_layer`] that neither enters nor expands `skip` (marked visited first).
    #[allow(clippy::too_many_arguments)] // search_layer's inputs plus the node to keep out
    fn search_layer_skipping(
        &self,
        space: Space<'_>,
        query: &Query,
        entries: &[Cand],
        ef: usize,
        level: u8,
        visited: &mut Visited,
        accept: Option<&dyn Fn(u32) -> bool>,
        skip: Option<u32>,
    ) -> Vec<Cand> {
        visited.reset(self.len());
        if let Some(s) = skip {
            visited.insert(s);
        }
        let accepts = |slot: u32| accept.is_none_or(|f| f(slot));
        let mut todo = std::mem::take(&mut visited.todo);
        todo.clear();
        let mut found: BinaryHeap<Cand> = BinaryHeap::with_capacity(ef + 1);
        for &e in entries {
            if visited.insert(e.slot) {
                todo.push(Reverse(e));
                if accepts(e.slot) {
                    found.push(e);
                }
            }
        }
        while found.len() > ef {
            found.pop();
        }
        let mut buf = std::mem::take(&mut visited.buf);
        while let Some(Reverse(c)) = todo.pop() {
            if found.len() >= ef && found.peek().is_some_and(|w| c.dist > w.dist) {
                break;
            }
            self.fresh_neighbours(c.slot, level, visited, &mut buf);
            space.distances(query, &buf, (&mut visited.dots, &mut visited.dists));
            for (&n, &d) in buf.iter().zip(&visited.dists) {
                let full = found.len() >= ef;
                if full && found.peek().is_some_and(|w| d >= w.dist) {
                    continue;
                }
                let cand = Cand { dist: d, slot: n };
                todo.push(Reverse(cand));
                if level == 0 {
                    self.prefetch_links0(n);
                }
                if accepts(n) {
                    if !full {
                        found.push(cand);
                    } else if let Some(mut worst) = found.peek_mut() {
                        // Closer than the worst (checked above): it takes the worst's place,
                        // one sift instead of a push and a pop.
                        *worst = cand;
                    }
                }
            }
        }
        visited.todo = todo;
        visited.buf = buf;
        found.into_sorted_vec()
    }

    /// The `k` nearest accepted slots to `query`, searching layer 0 with beam width `ef`.
    pub fn search(
        &self,
        space: Space<'_>,
        query: &Query,
        ef: usize,
        visited: &mut Visited,
        accept: Option<&dyn Fn(u32) -> bool>,
    ) -> Vec<Cand> {
        self.search_skipping(space, query, ef, visited, accept, None)
    }

    /// [`Graph::search`] for a query that is the stored vector of node `skip`, as if that node
    /// were not in the graph: it is neither entered nor expanded, so the search has to reach
    /// the neighbourhood by other routes, as a fresh query does (the ef tuner's sample; through
    /// its own links a stored vector finds its neighbours too easily). Returns nothing if the
    /// graph's only way in is `skip`.
    pub(crate) fn search_without(
        &self,
        space: Space<'_>,
        query: &Query,
        ef: usize,
        visited: &mut Visited,
        accept: Option<&dyn Fn(u32) -> bool>,
        skip: u32,
    ) -> Vec<Cand> {
        self.search_skipping(space, query, ef, visited, accept, Some(skip))
    }

    /// The upper layers greedily, then layer 0 at width `ef`, never entering `skip`.
    fn search_skipping(
        &self,
        space: Space<'_>,
        query: &Query,
        ef: usize,
        visited: &mut Visited,
        accept: Option<&dyn Fn(u32) -> bool>,
        skip: Option<u32>,
    ) -> Vec<Cand> {
        if self.entry == NO_NODE || Some(self.entry) == skip {
            return Vec::new();
        }
        let mut best = Cand { dist: space.distance(query, self.entry), slot: self.entry };
        for level in (1..=self.max_level).rev() {
            best = self.greedy_skipping(space, query, best, level, skip);
        }
        self.search_layer_skipping(space, query, &[best], ef, 0, visited, accept, skip)
    }

    /// Keeps the closest candidates that are not closer to an already kept one than to the
    /// base node (the paper's heuristic), so links spread in all directions.
    /// A kept node is prepared as a query once, and a candidate's distance to it is measured
    /// from the kept side (at most `m` preparations instead of one per candidate).
    /// `pool` holds the prepared queries, reused across calls.
    fn select(
        &self,
        space: Space<'_>,
        sorted: &[Cand],
        m: usize,
        pool: &mut Vec<Query>,
    ) -> Vec<Cand> {
        let mut kept: Vec<Cand> = Vec::with_capacity(m);
        for &c in sorted {
            if kept.len() >= m {
                break;
            }
            if !space.any_within(&pool[..kept.len()], c.slot, c.dist) {
                if pool.len() == kept.len() {
                    pool.push(Query::default());
                }
                space.prepare_slot(c.slot, &mut pool[kept.len()]);
                kept.push(c);
            }
        }
        kept
    }

    /// Links the already pushed node `slot` into the graph.
    pub fn insert(
        &self,
        space: Space<'_>,
        slot: u32,
        ef_construction: usize,
        visited: &mut Visited,
    ) {
        if self.entry == NO_NODE || self.entry == slot {
            return;
        }
        let level = self.levels[slot as usize];
        let mut prepared = std::mem::take(&mut visited.query);
        space.prepare_slot(slot, &mut prepared);
        let query = &prepared;
        let mut best = Cand { dist: space.distance(query, self.entry), slot: self.entry };
        for l in (level.saturating_add(1)..=self.max_level).rev() {
            best = self.greedy(space, query, best, l);
        }
        // Choose the links of every layer first and publish them bottom-up afterwards: once a
        // concurrent insert can reach `slot` on some layer, `slot` already has its links on
        // every layer below, so no walk gets stuck on a node without links.
        let mut entries = vec![best];
        let mut per_level = Vec::with_capacity(usize::from(level) + 1);
        for l in (0..=level.min(self.max_level)).rev() {
            let found =
                self.search_layer(space, query, &entries, ef_construction, l, visited, None);
            let found: Vec<Cand> = found.into_iter().filter(|c| c.slot != slot).collect();
            let cap = if l == 0 { self.m0 } else { self.m };
            per_level.push((l, self.select(space, &found, cap, &mut visited.pool)));
            if !found.is_empty() {
                entries = found;
            }
        }
        {
            let _g = self.lock(slot);
            let mut links = Vec::with_capacity(self.m0);
            for (l, chosen) in &per_level {
                links.clear();
                links.extend(chosen.iter().map(|c| c.slot));
                self.set_neighbours(slot, *l, &links);
            }
        }
        let scratch = &mut visited.link;
        for (l, chosen) in per_level.iter().rev() {
            let cap = if *l == 0 { self.m0 } else { self.m };
            for &other in chosen {
                self.link_back(space, other, (slot, query), *l, cap, scratch);
            }
        }
        visited.query = prepared;
    }

    /// Adds `slot` to the links of `other.slot` (`other.dist` is their distance). A full list
    /// gives up one link, chosen incrementally as Lucene's HNSW does: only the newcomer's
    /// relations are checked, not every pair again (which was half of a build's instructions
    /// at 128 dimensions, where the heuristic rarely prunes and so ran at nearly every link).
    /// The newcomer is dropped when a closer link covers it (is closer to it than `other`
    /// is); otherwise it replaces the farthest link it covers, or else the farthest link when
    /// it is closer than that one.
    fn link_back(
        &self,
        space: Space<'_>,
        other: Cand,
        (slot, new): (u32, &Query),
        level: u8,
        cap: usize,
        scratch: &mut LinkScratch,
    ) {
        let _g = self.lock(other.slot);
        let links = &mut scratch.links;
        self.neighbours(other.slot, level, links);
        if links.contains(&slot) {
            return;
        }
        if links.len() < cap {
            links.push(slot);
            self.set_neighbours(other.slot, level, links);
            return;
        }
        space.prepare_slot(other.slot, &mut scratch.base);
        let base = &scratch.base;
        let dist_new = other.dist;
        space.distances(base, links, (&mut scratch.dots, &mut scratch.dists));
        let dists = &scratch.dists;
        // Covered by a closer link: the list stays as it is. The links closer than the
        // newcomer are measured from it in one batch (the four-wide kernel), not one call each.
        let near = &mut scratch.near;
        near.clear();
        near.extend(links.iter().zip(dists.iter()).filter(|(_, &d)| d < dist_new).map(|(&s, _)| s));
        space.distances(new, near, (&mut scratch.dots, &mut scratch.near_dists));
        if scratch.near_dists.iter().any(|&d| d < dist_new) {
            return;
        }
        // The farthest link the newcomer covers, else the farthest link if farther than it:
        // only links farther than the newcomer qualify, so only those are sorted.
        let order = &mut scratch.order;
        order.clear();
        order.extend((0..links.len()).filter(|&i| dists[i] > dist_new));
        order.sort_unstable_by(|&a, &b| dists[b].total_cmp(&dists[a]).then(a.cmp(&b)));
        let victim = order
            .iter()
            .copied()
            .find(|&i| space.distance(new, links[i]) < dists[i])
            .or_else(|| order.first().copied());
        if let Some(i) = victim {
            links[i] = slot;
            self.set_neighbours(other.slot, level, links);
        }
    }

    /// Makes `slot` the entry point when it reaches above the current top layer.
    pub fn promote(&mut self, slot: u32) {
        let level = self.levels[slot as usize];
        if self.entry == NO_NODE || level > self.max_level {
            self.entry = slot;
            self.max_level = level;
        }
    }

    /// Links the pushed but unlinked nodes `start..len` on `threads` threads (a bulk build is
    /// `start = 0`). The highest of them goes first when it would raise the top layer, so every
    /// parallel insert sees a fixed entry point.
    pub fn link_range(
        &mut self,
        space: Space<'_>,
        start: usize,
        ef_construction: usize,
        threads: usize,
    ) {
        let n = self.len();
        let top = (start as u32..n as u32).max_by_key(|&s| (self.levels[s as usize], Reverse(s)));
        let Some(top) = top else { return };
        let first = self.entry == NO_NODE || self.levels[top as usize] > self.max_level;
        if first {
            self.insert(space, top, ef_construction, &mut Visited::default());
            self.promote(top);
        }
        let next = AtomicUsize::new(start);
        let graph = &*self;
        std::thread::scope(|scope| {
            for _ in 0..threads.clamp(1, (n - start).div_ceil(64)) {
                scope.spawn(|| {
                    let mut visited = Visited::default();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        if !(first && i == top as usize) {
                            graph.insert(space, i as u32, ef_construction, &mut visited);
                        }
                    }
                });
            }
        });
    }

    /// How many layer-0 lists hold each slot (a node no list holds is found only as the
    /// entry point).
    pub fn in_degrees(&self) -> Vec<u32> {
        let mut deg = vec![0u32; self.len()];
        let mut buf = Vec::with_capacity(self.m0);
        for slot in 0..self.len() as u32 {
            self.neighbours(slot, 0, &mut buf);
            for &n in &buf {
                deg[n as usize] += 1;
            }
        }
        deg
    }

    /// Heap bytes held by the links.
    pub fn memory_bytes(&self) -> usize {
        self.levels.capacity()
            + self.count0.capacity()
            + self.links0.capacity() * 4
            + self.upper.capacity() * 4
            + self.upper_at.capacity() * 9
    }

    /// Raw parts for persistence: (levels, layer-0 counts, layer-0 links, upper words).
    pub fn export(&self) -> (&[u8], Vec<u8>, Vec<u32>, Vec<u32>) {
        let counts = self.count0.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let links = self.links0.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let upper = self.upper.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        (&self.levels, counts, links, upper)
    }

    /// Rebuilds a graph from [`Graph::export`]ed parts; checks every count and link so a search
    /// over the result can never index out of bounds.
    pub fn import(
        m: usize,
        m0: usize,
        levels: Vec<u8>,
        counts: Vec<u8>,
        links0: Vec<u32>,
        upper: Vec<u32>,
    ) -> Result<Graph, String> {
        let n = levels.len();
        if counts.len() != n || links0.len() != n * m0 {
            return Err("layer-0 arrays do not match the node count".into());
        }
        let mut g = Graph::new(m, m0);
        for &level in &levels {
            if level > MAX_LEVEL {
                return Err(format!("node level {level} above {MAX_LEVEL}"));
            }
            g.push_node(level).map_err(|e| e.to_string())?;
        }
        if g.upper.len() != upper.len() {
            return Err("upper-layer link array has the wrong length".into());
        }
        let in_range = |l: &u32| (*l as usize) < n;
        for (slot, &c) in counts.iter().enumerate() {
            let links = &links0[slot * m0..slot * m0 + usize::from(c).min(m0)];
            if usize::from(c) > m0 || !links.iter().all(in_range) {
                return Err(format!("layer-0 links of slot {slot} are out of range"));
            }
        }
        for (&slot, &at) in &g.upper_at {
            for l in 0..usize::from(levels[slot as usize]) {
                let base = at as usize + l * (m + 1);
                let c = upper[base] as usize;
                if c > m || !upper[base + 1..base + 1 + c].iter().all(in_range) {
                    return Err(format!("upper links of slot {slot} are out of range"));
                }
            }
        }
        for (cell, v) in g.count0.iter().zip(counts) {
            cell.store(v, Ordering::Relaxed);
        }
        for (cell, v) in g.links0.iter().zip(links0) {
            cell.store(v, Ordering::Relaxed);
        }
        for (cell, v) in g.upper.iter().zip(upper) {
            cell.store(v, Ordering::Relaxed);
        }
        g.levels = levels;
        if let Some(top) = (0..n as u32).max_by_key(|&s| (g.levels[s as usize], Reverse(s))) {
            g.promote(top);
        }
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic;

    /// Builds a graph over `data` on `threads` threads with the paper's settings.
    fn build(data: &[f32], dims: usize, threads: usize) -> Graph {
        let n = data.len() / dims;
        let mut g = Graph::new(16, 32);
        for slot in 0..n {
            g.push_node(crate::index::level_of(7, slot, 16)).unwrap();
        }
        let space =
            Space { similarity: Similarity::Euclidean, dims, stored: Stored::F32(data), raw: None };
        g.link_range(space, 0, 100, threads);
        g
    }

    /// Layer-0 slots reachable from the entry point.
    fn reachable(g: &Graph) -> usize {
        let mut seen = vec![false; g.len()];
        let mut todo = vec![g.entry];
        seen[g.entry as usize] = true;
        let mut buf = Vec::new();
        let mut count = 1;
        while let Some(s) = todo.pop() {
            g.neighbours(s, 0, &mut buf);
            for &n in &buf {
                if !std::mem::replace(&mut seen[n as usize], true) {
                    count += 1;
                    todo.push(n);
                }
            }
        }
        count
    }

    /// A parallel build must not lose links to races: every node keeps valid, distinct,
    /// non-self links on each of its layers and the whole layer 0 is reachable from the entry.
    #[test]
    fn parallel_build_keeps_every_node_linked_and_reachable() {
        let dims = 16;
        let data = synthetic::uniform(6000, dims, 31);
        for threads in [1, 4] {
            let g = build(&data, dims, threads);
            let mut buf = Vec::new();
            for slot in 0..g.len() as u32 {
                for level in 0..=g.levels[slot as usize] {
                    g.neighbours(slot, level, &mut buf);
                    assert!(!buf.is_empty(), "slot {slot} has no links on layer {level}");
                    assert!(!buf.contains(&slot), "slot {slot} links to itself");
                    let mut sorted = buf.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    assert_eq!(sorted.len(), buf.len(), "slot {slot} has a duplicate link");
                    assert!(buf.iter().all(|&n| g.levels[n as usize] >= level));
                }
            }
            assert_eq!(reachable(&g), g.len(), "unreachable nodes with {threads} threads");
        }
    }

    /// A search for a stored vector without its node never returns that node (even with no
    /// filter), still finds most of its true neighbours, and does the same when the node is
    /// the entry point's only way in (no result rather than a wrong one).
    #[test]
    fn search_without_keeps_the_query_node_out() {
        let dims = 16;
        let n = 3000;
        let data = synthetic::uniform(n, dims, 41);
        let g = build(&data, dims, 1);
        let space = Space {
            similarity: Similarity::Euclidean,
            dims,
            stored: Stored::F32(&data),
            raw: None,
        };
        let mut visited = Visited::default();
        let mut found = 0;
        for pick in (0..n as u32).step_by(97) {
            let mut q = Query::default();
            space.prepare_slot(pick, &mut q);
            let with = g.search(space, &q, 64, &mut visited, None);
            assert_eq!(with[0].slot, pick, "a stored vector's own node is its nearest");
            let got = g.search_without(space, &q, 64, &mut visited, None, pick);
            assert!(got.iter().all(|c| c.slot != pick), "slot {pick} came back");
            let truth: Vec<u32> = with.iter().skip(1).take(10).map(|c| c.slot).collect();
            found += got.iter().take(10).filter(|c| truth.contains(&c.slot)).count();
        }
        let samples = (0..n).step_by(97).count();
        assert!(found * 10 >= samples * 10 * 8, "{found} of {} neighbours found", samples * 10);
        let lone = g.search_without(space, &Query::default(), 8, &mut visited, None, g.entry);
        assert!(lone.is_empty());
    }

    /// The branch-free `fresh_neighbours` returns a node's links that were not visited, in
    /// list order, and marks them all, as the plain filter over `neighbours` does.
    #[test]
    fn fresh_neighbours_are_the_unvisited_links_in_order() {
        let dims = 8;
        let data = synthetic::uniform(800, dims, 5);
        let g = build(&data, dims, 1);
        let (mut visited, mut all, mut fresh) = (Visited::default(), Vec::new(), Vec::new());
        for slot in 0..g.len() as u32 {
            visited.reset(g.len());
            let marked = |s: u32| (s ^ slot).is_multiple_of(3);
            for s in (0..g.len() as u32).filter(|&s| marked(s)) {
                visited.insert(s);
            }
            for level in 0..=g.levels[slot as usize] {
                g.neighbours(slot, level, &mut all);
                g.fresh_neighbours(slot, level, &mut visited, &mut fresh);
                let want: Vec<u32> = all.iter().copied().filter(|&s| !marked(s)).collect();
                assert_eq!(fresh, want, "slot {slot}, layer {level}");
                assert!(all.iter().all(|&s| !visited.insert(s)), "a link left unmarked");
                for &s in &want {
                    visited.marks[s as usize] = 0;
                }
            }
        }
    }

    /// The one-compare order of candidates is `total_cmp` on the distance, then the slot,
    /// over signed zeros, infinities, NaNs and subnormals.
    #[test]
    fn candidate_order_is_total_cmp_then_slot() {
        let dists = [
            f32::NEG_INFINITY,
            -3.5,
            -f32::MIN_POSITIVE,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            f32::MIN_POSITIVE,
            0.25,
            7.0,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        let cands: Vec<Cand> = dists
            .iter()
            .flat_map(|&dist| [0, 1, u32::MAX].map(|slot| Cand { dist, slot }))
            .collect();
        for a in &cands {
            for b in &cands {
                let want = a.dist.total_cmp(&b.dist).then(a.slot.cmp(&b.slot));
                assert_eq!(a.cmp(b), want, "{a:?} against {b:?}");
            }
        }
    }

    /// One-byte marks: a slot marked in one search is fresh in every later one, across the
    /// generation's wrap (every 255 searches), and slots added between searches are fresh.
    #[test]
    fn visited_marks_are_fresh_in_every_new_search() {
        let mut v = Visited::default();
        v.reset(4);
        assert!(v.insert(0) && !v.insert(0), "a mark holds within its search");
        for search in 1..1000u32 {
            let n = 4 + (search % 7) as usize;
            v.reset(n);
            assert_ne!(v.marks[0], v.epoch, "slot 0 (marked in search 0) stale in {search}");
            let slot = 1 + search % (n as u32 - 1);
            assert!(v.insert(slot), "slot {slot} stale in search {search}");
            assert!(!v.insert(slot), "slot {slot} not marked in search {search}");
        }
    }

    /// Level draws follow the paper's `mL = 1 / ln(M)`: about `n / M` nodes above layer 0.
    #[test]
    fn levels_thin_out_by_m() {
        let n = 200_000usize;
        let above = (0..n).filter(|&s| crate::index::level_of(3, s, 16) > 0).count();
        let want = n / 16;
        assert!(above.abs_diff(want) < want / 10, "{above} nodes above layer 0, want ~{want}");
    }
}
