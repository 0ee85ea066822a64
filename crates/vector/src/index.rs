//! The versioned vector index: HNSW over prepared vectors, each entry visible to snapshots in
//! `[created, deleted)`, with search under a snapshot, garbage collection and compaction.
//!
//! Slots are numbered in insertion order. A bulk build sorts its entries by id, so the slots
//! `0..sorted_len` can be found by binary search over `ids` and need no map (this keeps the
//! memory within 1.2x of the raw vectors); later inserts go to the small `recent` map. A
//! deleted entry stays in the graph as a routing node until [`VectorIndex::compact`].
//!
//! From [`CODES_FROM`] entries on (or [`IndexConfig::codes_from`], never below it), the graph walks one-byte codes (`crate::codes`: a quarter
//! of the bytes per distance) and the best candidates are ranked again by exact f32
//! distances. The f32 vectors come from the index itself when it keeps them
//! ([`IndexConfig::keep_vectors`], the default), else from the caller's
//! [`SearchParams::fetch`] (the engine reads them from the property store, so they are not held
//! twice).

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::codes::Codebook;
use crate::distance::Similarity;
use crate::error::{Result, VectorError};
use crate::graph::{Cand, Graph, Query, Space, Stored, Visited, MAX_LEVEL};
use crate::quantize::Quantizer;
use crate::topk::{check_len, hit_order, Hit};

/// Largest supported vector length (Neo4j's `vector.dimensions` limit).
pub const MAX_DIMENSIONS: usize = 4096;
/// Links per node when the config says `m = 0`. An earlier default sized `m` to a memory
/// budget (9 at 128 dimensions), which halved recall on hard data; the regression test
/// `default_config_reaches_textbook_recall` guards against that.
pub const DEFAULT_M: usize = 16;
/// Slots sampled to estimate how many entries a snapshot and filter accept.
const SAMPLE: usize = 256;
/// Below this accepted fraction, search scans exactly instead of walking the graph.
const EXACT_FRACTION: f64 = 0.05;
/// Entries from which the graph walks codes instead of f32 vectors (below, the search scans
/// exactly anyway by default, and the codebook is fitted on this many vectors).
pub const CODES_FROM: usize = 1024;
/// Candidates beyond `k` (at least) that a search over codes ranks again exactly.
const RERANK_EXTRA: usize = 16;

/// Settings of an index. [`IndexConfig::new`] gives the defaults for a dimension and function.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexConfig {
    pub dims: usize,
    pub similarity: Similarity,
    /// Links per node on upper layers; layer 0 gets [`layer0_degree`]`(m)`. `0` means [`DEFAULT_M`] (16, the
    /// paper's and Neo4j's default; fewer links cost recall, see the crate docs).
    pub m: usize,
    pub ef_construction: usize,
    /// Default beam width of a search (raised to `k` when smaller) until the index has
    /// measured its own (`crate::tune`, from `exact_below` entries on).
    pub ef_search: usize,
    /// Threads of a bulk build.
    pub threads: usize,
    /// Seed of the level draw, so builds are reproducible.
    pub seed: u64,
    /// Indexes with fewer entries are searched exactly (a scan is cheaper than the walk).
    pub exact_below: usize,
    /// Whether the index keeps the f32 vectors beside the codes (exact re-ranking without a
    /// fetch). The engine turns it off and passes [`SearchParams::fetch`] instead.
    pub keep_vectors: bool,
    /// Entries from which the graph walks one-byte codes ([`CODES_FROM`]; `usize::MAX`: never,
    /// the graph walks the f32 vectors, which are then always kept). Not persisted: a loaded
    /// index gets the default.
    pub codes_from: usize,
}

impl IndexConfig {
    pub fn new(dims: usize, similarity: Similarity) -> IndexConfig {
        IndexConfig {
            dims,
            similarity,
            m: 0,
            ef_construction: 100,
            ef_search: 100,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            seed: 0x5eed_a7b0,
            exact_below: 1024,
            keep_vectors: true,
            codes_from: CODES_FROM,
        }
    }

    /// Checks the settings and resolves `m = 0`.
    fn resolved(mut self) -> Result<IndexConfig> {
        if self.dims == 0 || self.dims > MAX_DIMENSIONS {
            return Err(VectorError::BadDimensions { got: self.dims, max: MAX_DIMENSIONS });
        }
        if self.m == 0 {
            self.m = DEFAULT_M;
        }
        if !(2..=127).contains(&self.m) {
            return Err(bad("m", format!("must be in 2..=127, got {}", self.m)));
        }
        if self.ef_construction == 0 || self.ef_search == 0 {
            return Err(bad("ef", "ef_construction and ef_search must be positive".into()));
        }
        Ok(self)
    }
}

fn bad(name: &'static str, reason: String) -> VectorError {
    VectorError::BadConfig { name, reason }
}

/// Writes the f32 vector (as given, not prepared) of an id at the search's snapshot into the
/// buffer; false when it has none.
pub type Fetch<'f> = &'f (dyn Fn(u64, &mut Vec<f32>) -> bool + Sync);

/// How to search: the snapshot, the beam width, an extra filter on ids and where exact
/// vectors come from.
#[derive(Clone, Copy, Default)]
pub struct SearchParams<'f> {
    /// Entries committed at or before this timestamp and not deleted at or before it are seen.
    pub snapshot: u64,
    /// Beam width; `0` uses the index's `ef_search`.
    pub ef: usize,
    /// Rejects ids the caller hides (a transaction's own deletes); `None` accepts all.
    pub filter: Option<&'f (dyn Fn(u64) -> bool + Sync)>,
    /// The exact vectors of an index that does not keep them (candidates found over codes are
    /// ranked again with these); without it such an index scores by its codes.
    pub fetch: Option<Fetch<'f>>,
}

/// What [`VectorIndex::gc`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcReport {
    /// Entries no snapshot can see any more.
    pub dead: usize,
    /// Whether the index was rebuilt without them.
    pub compacted: bool,
}

/// A vector index over entity ids.
pub struct VectorIndex {
    pub(crate) config: IndexConfig,
    pub(crate) graph: Graph,
    /// Prepared vectors, `dims` per slot; empty when only codes are kept.
    pub(crate) data: Vec<f32>,
    /// The codes' scale, once fitted (at [`CODES_FROM`] entries).
    pub(crate) book: Option<Codebook>,
    /// One-byte codes, `dims` per slot, and each code's norm term (with a codebook).
    pub(crate) codes: Vec<u8>,
    pub(crate) norms: Vec<f32>,
    pub(crate) ids: Vec<u64>,
    pub(crate) created: Vec<u64>,
    /// Deletion timestamps; `deleted_bits` marks which slots have one.
    pub(crate) deleted: FxHashMap<u32, u64>,
    pub(crate) deleted_bits: Vec<u64>,
    /// Slots `0..sorted_len` are ordered by (id, created).
    pub(crate) sorted_len: usize,
    /// Newest slot of each id inserted after the sorted prefix.
    pub(crate) recent: FxHashMap<u64, u32>,
    pub(crate) max_created: u64,
    visited: Mutex<Vec<Visited>>,
    /// The default beam width measured on the data (`crate::tune`; 0: not yet) and the live
    /// entries it was measured at.
    pub(crate) tuned_ef: usize,
    pub(crate) tuned_at: usize,
    /// The quantizer fitted on the live entries, keyed by (entries, deleted) when fitted.
    quantizer: Mutex<FittedQuantizer>,
}

/// A quantizer fitted on the live entries, keyed by (entries, deleted) when it was fitted.
type FittedQuantizer = Option<((usize, usize), Option<Quantizer>)>;

/// Collects entries for a bulk build, which links them on several threads.
pub struct IndexBuilder {
    config: IndexConfig,
    entries: Vec<(u64, u64)>,
    data: Vec<f32>,
}

impl IndexBuilder {
    pub fn new(config: IndexConfig) -> Result<IndexBuilder> {
        Ok(IndexBuilder { config: config.resolved()?, entries: Vec::new(), data: Vec::new() })
    }

    /// Adds `id` with vector `v`, created at `created`. An invalid vector is an error and is not
    /// added; the engine skips such entities, as Neo4j leaves them out of the index.
    pub fn add(&mut self, id: u64, v: &[f32], created: u64) -> Result<()> {
        check_len(self.config.dims, v)?;
        let v = self.config.similarity.prepare(v)?;
        self.data.extend_from_slice(&v);
        self.entries.push((id, created));
        Ok(())
    }

    /// Builds the index. Two entries for one id are an error.
    pub fn build(self) -> Result<VectorIndex> {
        let dims = self.config.dims;
        let n = self.entries.len();
        if u32::try_from(n).is_err() {
            return Err(VectorError::Full { what: "entries", max: u64::from(u32::MAX) - 1 });
        }
        let mut order: Vec<u32> = (0..n).map(|i| i as u32).collect();
        order.sort_unstable_by_key(|&i| self.entries[i as usize]);
        let mut index = VectorIndex::empty(self.config);
        index.reserve(order.len());
        for (n, &i) in order.iter().enumerate() {
            let (id, created) = self.entries[i as usize];
            if n > 0 && index.ids[n - 1] == id {
                return Err(bad("entries", format!("id {id} added twice to a bulk build")));
            }
            let at = i as usize * dims;
            index.data.extend_from_slice(&self.data[at..at + dims]);
            index.push_entry(id, created)?;
        }
        index.sorted_len = index.len();
        index.fit_codes();
        index.link_everything();
        index.settle();
        index.retune();
        Ok(index)
    }
}

impl VectorIndex {
    /// An empty index; fails on invalid settings.
    pub fn new(config: IndexConfig) -> Result<VectorIndex> {
        Ok(VectorIndex::empty(config.resolved()?))
    }

    fn empty(config: IndexConfig) -> VectorIndex {
        let m = config.m;
        VectorIndex {
            config,
            graph: Graph::new(m, layer0_degree(m)),
            data: Vec::new(),
            book: None,
            codes: Vec::new(),
            norms: Vec::new(),
            ids: Vec::new(),
            created: Vec::new(),
            deleted: FxHashMap::default(),
            deleted_bits: Vec::new(),
            sorted_len: 0,
            recent: FxHashMap::default(),
            max_created: 0,
            visited: Mutex::new(Vec::new()),
            tuned_ef: 0,
            tuned_at: 0,
            quantizer: Mutex::new(None),
        }
    }

    pub fn config(&self) -> &IndexConfig {
        &self.config
    }

    /// Entries stored, including deleted ones not compacted away yet.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Entries not deleted (visible to a snapshot taken now).
    pub fn live_len(&self) -> usize {
        self.len() - self.deleted.len()
    }

    /// The graph's view: codes once fitted, else the f32 vectors; the f32 vectors (when
    /// kept) as the exact vectors of every slot.
    pub(crate) fn space(&self) -> Space<'_> {
        let stored = match &self.book {
            Some(book) => Stored::Codes { book, codes: &self.codes, norms: &self.norms },
            None => Stored::F32(&self.data),
        };
        let raw = self.has_vectors().then_some((0, self.data.as_slice()));
        Space { similarity: self.config.similarity, dims: self.config.dims, stored, raw }
    }

    /// The beam width a search with `ef = 0` uses: the config's `ef_search`, raised to the
    /// width measured on the data (see `crate::tune`) where that is larger. The floor stays
    /// because the measurement queries with stored vectors, and real queries may lie
    /// farther from the data (out-of-distribution queries need a wider beam).
    pub fn tuned_ef(&self) -> usize {
        self.tuned_ef.max(self.config.ef_search)
    }

    /// Measures the default beam width again when the index doubled since the last time.
    fn retune(&mut self) {
        if self.needs_tuning() {
            self.tune_ef();
        }
    }

    /// Whether the f32 vectors of every slot are held.
    pub fn has_vectors(&self) -> bool {
        self.data.len() == self.len() * self.config.dims
    }

    /// Fits the codebook once there are [`CODES_FROM`] entries and encodes them all (the f32
    /// vectors are still held: [`Self::settle`] drops them).
    fn fit_codes(&mut self) {
        if self.book.is_some()
            || self.len() < self.config.codes_from.max(CODES_FROM)
            || !self.has_vectors()
        {
            return;
        }
        let dims = self.config.dims;
        let data = &self.data;
        let Some(book) = Codebook::fit(dims, self.len(), |i| &data[i * dims..(i + 1) * dims])
        else {
            return;
        };
        self.codes = vec![0; self.len() * dims];
        crate::simd::advise_huge_pages(&self.codes);
        self.norms = Vec::with_capacity(self.len());
        let sim = self.config.similarity;
        for (v, code) in data.chunks_exact(dims).zip(self.codes.chunks_exact_mut(dims)) {
            self.norms.push(book.encode(sim, v, code));
        }
        self.book = Some(book);
    }

    /// Drops the f32 vectors when the codes stand in for them and the config does not keep
    /// them.
    fn settle(&mut self) {
        if self.book.is_some() && !self.config.keep_vectors && !self.data.is_empty() {
            self.data = Vec::new();
        }
    }

    /// Appends the stored form of a prepared vector: its code (with a codebook) and the
    /// vector itself unless only codes are kept.
    fn push_vector(&mut self, v: &[f32]) {
        if let Some(book) = &self.book {
            let (at, capacity) = (self.codes.len(), self.codes.capacity());
            self.codes.resize(at + v.len(), 0);
            if self.codes.capacity() != capacity {
                crate::simd::advise_huge_pages(&self.codes);
            }
            self.norms.push(book.encode(self.config.similarity, v, &mut self.codes[at..]));
        }
        if self.book.is_none() || self.config.keep_vectors {
            self.data.extend_from_slice(v);
        }
    }

    /// Removes what [`Self::push_vector`] appended for slots from `len` on.
    fn truncate_vectors(&mut self, len: usize) {
        let dims = self.config.dims;
        if self.data.len() > len * dims {
            self.data.truncate(len * dims);
        }
        self.codes.truncate(len * dims);
        self.norms.truncate(len);
    }

    fn reserve(&mut self, n: usize) {
        if self.book.is_none() || self.config.keep_vectors {
            self.data.reserve_exact(n * self.config.dims);
            crate::simd::advise_huge_pages(&self.data);
        }
        if self.book.is_some() {
            self.codes.reserve_exact(n * self.config.dims);
            self.norms.reserve_exact(n);
            crate::simd::advise_huge_pages(&self.codes);
        }
        self.ids.reserve_exact(n);
        self.created.reserve_exact(n);
        self.deleted_bits.reserve_exact(n.div_ceil(64));
        self.graph.reserve(n);
    }

    /// Links every pushed node (bulk build and compaction), in parallel.
    fn link_everything(&mut self) {
        let (ef, threads) = (self.config.ef_construction, self.config.threads);
        // Link on a graph taken out, so the space can borrow the vectors meanwhile.
        let mut graph = std::mem::replace(&mut self.graph, Graph::new(2, 2));
        graph.link_range(self.space(), 0, ef, threads);
        self.graph = graph;
    }

    /// Appends the metadata of a slot whose vector is already in `data`; returns the slot, or
    /// an error (changing nothing) when the index is full.
    fn push_entry(&mut self, id: u64, created: u64) -> Result<u32> {
        let slot =
            self.graph.push_node(level_of(self.config.seed, self.ids.len(), self.config.m))?;
        self.ids.push(id);
        self.created.push(created);
        self.max_created = self.max_created.max(created);
        if self.deleted_bits.len() * 64 <= slot as usize {
            self.deleted_bits.push(0);
        }
        Ok(slot)
    }

    pub(crate) fn is_deleted(&self, slot: u32) -> bool {
        self.deleted_bits[slot as usize / 64] & (1 << (slot % 64)) != 0
    }

    fn visible(&self, slot: u32, snapshot: u64) -> bool {
        self.created[slot as usize] <= snapshot
            && (!self.is_deleted(slot) || self.deleted.get(&slot).is_none_or(|&d| snapshot < d))
    }

    /// The slot of the live (not deleted) entry of `id`, if any.
    fn live_slot(&self, id: u64) -> Option<u32> {
        if let Some(&slot) = self.recent.get(&id) {
            return (!self.is_deleted(slot)).then_some(slot);
        }
        let sorted = &self.ids[..self.sorted_len];
        let start = sorted.partition_point(|&x| x < id);
        (start..self.sorted_len)
            .take_while(|&s| sorted[s] == id)
            .map(|s| s as u32)
            .find(|&s| !self.is_deleted(s))
    }

    /// Makes `v` the vector of `id` from commit `ts` on. A live earlier entry of `id` is
    /// deleted at `ts` (a property update). An invalid vector is an error and changes nothing.
    pub fn insert(&mut self, id: u64, v: &[f32], ts: u64) -> Result<()> {
        check_len(self.config.dims, v)?;
        let v = self.config.similarity.prepare(v)?;
        let before = self.len();
        self.push_vector(&v);
        let slot = match self.push_entry(id, ts) {
            Ok(slot) => slot,
            Err(e) => {
                self.truncate_vectors(before);
                return Err(e);
            }
        };
        // The new slot is not in `recent` yet, so this ends the previous entry only.
        self.delete(id, ts);
        self.recent.insert(id, slot);
        self.fit_codes();
        let mut visited = self.take_visited();
        let mut space = self.space();
        if space.raw.is_none() {
            space.raw = Some((slot, &v));
        }
        self.graph.insert(space, slot, self.config.ef_construction, &mut visited);
        self.give_visited(visited);
        self.graph.promote(slot);
        self.settle();
        self.retune();
        Ok(())
    }

    /// Inserts many entries committed at `ts`, linking them on the configured threads (a
    /// transaction that sets thousands of embeddings). All vectors are checked first: on an
    /// error (naming the entry's position in `entries`) nothing changes. Two entries for one id
    /// are an error; a live earlier entry of an id is deleted at `ts`, as in [`Self::insert`].
    pub fn insert_batch(&mut self, entries: &[(u64, &[f32])], ts: u64) -> Result<()> {
        let (seed, m) = (self.config.seed, self.config.m);
        self.graph
            .check_room((self.len()..self.len() + entries.len()).map(|s| level_of(seed, s, m)))?;
        let mut prepared = Vec::with_capacity(entries.len() * self.config.dims);
        let mut seen = rustc_hash::FxHashSet::default();
        for (at, &(id, v)) in entries.iter().enumerate() {
            let checked =
                check_len(self.config.dims, v).and_then(|()| self.config.similarity.prepare(v));
            let v = checked.map_err(|e| bad("entries", format!("entry {at} (id {id}): {e}")))?;
            if !seen.insert(id) {
                return Err(bad("entries", format!("id {id} appears twice in one batch")));
            }
            prepared.extend_from_slice(&v);
        }
        let start = self.len();
        self.reserve(entries.len());
        for (&(id, _), v) in entries.iter().zip(prepared.chunks_exact(self.config.dims)) {
            self.push_vector(v);
            // Cannot fail: `check_room` accepted these slots above.
            let slot = self.push_entry(id, ts)?;
            self.delete(id, ts);
            self.recent.insert(id, slot);
        }
        self.fit_codes();
        let (ef, threads) = (self.config.ef_construction, self.config.threads);
        let mut graph = std::mem::replace(&mut self.graph, Graph::new(2, 2));
        let mut space = self.space();
        if space.raw.is_none() {
            space.raw = Some((start as u32, &prepared));
        }
        graph.link_range(space, start, ef, threads);
        self.graph = graph;
        self.settle();
        self.retune();
        Ok(())
    }

    /// Ends the live entry of `id` at commit `ts`; false when `id` has none.
    pub fn delete(&mut self, id: u64, ts: u64) -> bool {
        let Some(slot) = self.live_slot(id) else {
            return false;
        };
        self.deleted.insert(slot, ts);
        self.deleted_bits[slot as usize / 64] |= 1 << (slot % 64);
        true
    }

    fn take_visited(&self) -> Visited {
        self.visited.lock().pop().unwrap_or_default()
    }

    fn give_visited(&self, v: Visited) {
        self.visited.lock().push(v);
    }

    /// The `k` entries nearest to `query` among those `params` sees, best first.
    ///
    /// Entries the snapshot or filter hides still route the graph walk. When a sample shows
    /// that few entries are visible the search widens its beam, and below 5% it scans exactly,
    /// so hidden entries never cost recall; a walk that finds fewer than `k` falls back to the
    /// exact scan too.
    pub fn search(&self, query: &[f32], k: usize, params: &SearchParams<'_>) -> Result<Vec<Hit>> {
        check_len(self.config.dims, query)?;
        let query = self.config.similarity.prepare(query)?;
        // A `k` beyond the entry count (even `usize::MAX` from a query) must not size buffers.
        let k = k.min(self.len());
        if k == 0 {
            return Ok(Vec::new());
        }
        let snapshot = params.snapshot;
        let accept = |slot: u32| {
            self.visible(slot, snapshot) && params.filter.is_none_or(|f| f(self.ids[slot as usize]))
        };
        let everything =
            params.filter.is_none() && self.deleted.is_empty() && self.max_created <= snapshot;
        let fraction = if everything { 1.0 } else { self.sample_fraction(&accept) };
        if self.len() < self.config.exact_below || fraction < EXACT_FRACTION {
            return Ok(self.exact(&query, k, &accept, params.fetch));
        }
        let ef = if params.ef == 0 { self.tuned_ef() } else { params.ef };
        let ef = ((ef.max(k) as f64 / fraction).ceil() as usize).min(self.len());
        let space = self.space();
        let mut prepared = Query::default();
        space.prepare(&query, &mut prepared);
        let mut visited = self.take_visited();
        let found = if everything {
            self.graph.search(space, &prepared, ef, &mut visited, None)
        } else {
            self.graph.search(space, &prepared, ef, &mut visited, Some(&accept))
        };
        self.give_visited(visited);
        if found.len() < k {
            return Ok(self.exact(&query, k, &accept, params.fetch));
        }
        Ok(self.rerank(&query, found, k, params.fetch))
    }

    /// The best `k` of `found` (closest first by the graph's distance): over codes the first
    /// `k + max(k, RERANK_EXTRA)` are measured again exactly (from the kept vectors, else
    /// through `fetch`; a candidate `fetch` has no vector for is left out).
    fn rerank(
        &self,
        query: &[f32],
        mut found: Vec<Cand>,
        k: usize,
        fetch: Option<Fetch<'_>>,
    ) -> Vec<Hit> {
        if self.book.is_none() {
            return self.hits(found, k);
        }
        found.truncate(k.saturating_add(k.max(RERANK_EXTRA)));
        let sim = self.config.similarity;
        let dims = self.config.dims;
        if self.has_vectors() {
            for c in &mut found {
                let at = c.slot as usize * dims;
                c.dist = sim.distance(query, &self.data[at..at + dims]);
            }
        } else if let Some(fetch) = fetch {
            let mut buf = Vec::with_capacity(dims);
            found.retain_mut(|c| {
                buf.clear();
                if !fetch(self.ids[c.slot as usize], &mut buf) || buf.len() != dims {
                    return false;
                }
                match sim.prepare(&buf) {
                    Ok(v) => {
                        c.dist = sim.distance(query, &v);
                        true
                    }
                    Err(_) => false,
                }
            });
        }
        self.hits(found, k)
    }

    /// Exact search over the entries `params` sees (the reference for recall, and the fallback).
    pub fn exact_search(
        &self,
        query: &[f32],
        k: usize,
        params: &SearchParams<'_>,
    ) -> Result<Vec<Hit>> {
        check_len(self.config.dims, query)?;
        let query = self.config.similarity.prepare(query)?;
        let accept = |slot: u32| {
            self.visible(slot, params.snapshot)
                && params.filter.is_none_or(|f| f(self.ids[slot as usize]))
        };
        Ok(self.exact(&query, k, &accept, params.fetch))
    }

    /// A scan over every accepted entry: exact over the kept vectors; over codes only, the
    /// best by code distance are ranked again as in [`Self::search`].
    fn exact(
        &self,
        query: &[f32],
        k: usize,
        accept: &dyn Fn(u32) -> bool,
        fetch: Option<Fetch<'_>>,
    ) -> Vec<Hit> {
        let k = k.min(self.len());
        let mut space = self.space();
        let exact = self.has_vectors();
        if exact {
            space.stored = Stored::F32(&self.data);
        }
        let keep = if exact { k } else { k.saturating_add(k.max(RERANK_EXTRA)) };
        let mut prepared = Query::default();
        space.prepare(query, &mut prepared);
        let mut best: std::collections::BinaryHeap<Cand> = std::collections::BinaryHeap::new();
        for slot in 0..self.len() as u32 {
            if !accept(slot) {
                continue;
            }
            let dist = space.distance(&prepared, slot);
            if best.len() < keep {
                best.push(Cand { dist, slot });
            } else if best.peek().is_some_and(|w| dist < w.dist) {
                best.pop();
                best.push(Cand { dist, slot });
            }
        }
        if exact {
            self.hits(best.into_sorted_vec(), k)
        } else {
            self.rerank(query, best.into_sorted_vec(), k, fetch)
        }
    }

    fn hits(&self, found: Vec<Cand>, k: usize) -> Vec<Hit> {
        let sim = self.config.similarity;
        let mut hits: Vec<Hit> = found
            .into_iter()
            .map(|c| Hit { id: self.ids[c.slot as usize], score: sim.score_of_distance(c.dist) })
            .collect();
        hits.sort_by(hit_order);
        hits.truncate(k);
        hits
    }

    /// The prepared (for cosine: unit-length) vector of the live entry of `id`, when the
    /// index keeps its vectors.
    pub fn prepared_vector(&self, id: u64) -> Option<&[f32]> {
        let slot = self.live_slot(id)? as usize;
        let dims = self.config.dims;
        self.data.get(slot * dims..(slot + 1) * dims)
    }

    /// Whether the live entry of `id` holds `prepared` (a prepared vector): equal f32 vectors
    /// when they are kept, else equal codes (a change below a code's resolution only costs
    /// navigation: exact scores come from the fetched vectors).
    pub fn same_vector(&self, id: u64, prepared: &[f32]) -> bool {
        if let Some(v) = self.prepared_vector(id) {
            return v == prepared;
        }
        let (Some(slot), Some(book)) = (self.live_slot(id), &self.book) else {
            return false;
        };
        let dims = self.config.dims;
        let mut code = vec![0u8; dims];
        book.encode(self.config.similarity, prepared, &mut code);
        let at = slot as usize * dims;
        prepared.len() == dims && self.codes[at..at + dims] == code[..]
    }

    /// Ids of the live (not deleted) entries, in slot order.
    pub fn live_ids(&self) -> Vec<u64> {
        (0..self.len() as u32)
            .filter(|&slot| !self.is_deleted(slot))
            .map(|slot| self.ids[slot as usize])
            .collect()
    }

    /// Makes every live entry visible from commit `ts` on and every deleted one invisible to
    /// every snapshot: for an index read from a file, whose timestamps belong to the process
    /// that wrote it.
    pub fn rebase(&mut self, ts: u64) {
        self.created.iter_mut().for_each(|c| *c = ts);
        self.deleted.values_mut().for_each(|d| *d = 0);
        self.max_created = ts;
    }

    /// Neo4j's scalar quantizer fitted on the live entries in slot order (see
    /// [`crate::quantize`]); refitted when entries were added or deleted since the last fit
    /// (as Lucene refits a segment's quantiles when it writes one). `None`: nothing to fit.
    pub fn quantizer(&self) -> Option<Quantizer> {
        let key = (self.len(), self.deleted.len());
        let mut cached = self.quantizer.lock();
        if let Some((k, q)) = &*cached {
            if *k == key {
                return *q;
            }
        }
        let mut live: Vec<u32> =
            (0..self.len() as u32).filter(|&slot| !self.is_deleted(slot)).collect();
        let dims = self.config.dims;
        let q = if self.has_vectors() {
            Quantizer::fit(dims, live.len(), |i| {
                let slot = live[i] as usize;
                &self.data[slot * dims..(slot + 1) * dims]
            })
        } else {
            // Only codes: fit on the decoded vectors of the slots the fit would sample.
            let sample = live.len().min(crate::quantize::QUANTIZATION_SAMPLE);
            let n = live.len();
            live = (0..sample)
                .map(|i| live[(i as u128 * n as u128 / sample as u128) as usize])
                .collect();
            let space = self.space();
            let mut flat = Vec::with_capacity(live.len() * dims);
            let mut buf = Vec::with_capacity(dims);
            for &slot in &live {
                space.vector_into(slot, &mut buf);
                flat.extend_from_slice(&buf);
            }
            Quantizer::fit(dims, live.len(), |i| &flat[i * dims..(i + 1) * dims])
        };
        *cached = Some((key, q));
        q
    }

    /// Fraction of a spread sample of slots that `accept` takes.
    fn sample_fraction(&self, accept: &dyn Fn(u32) -> bool) -> f64 {
        let n = self.len();
        let step = (n / SAMPLE).max(1);
        let picks: Vec<u32> = (0..n).step_by(step).take(SAMPLE).map(|s| s as u32).collect();
        let taken = picks.iter().filter(|&&s| accept(s)).count();
        taken as f64 / picks.len().max(1) as f64
    }

    /// Forgets versions that no snapshot at or after `oldest_active` can see, and compacts
    /// when they are more than a fifth of the entries.
    pub fn gc(&mut self, oldest_active: u64) -> GcReport {
        let dead = self.deleted.values().filter(|&&d| d <= oldest_active).count();
        let compacted = dead > 0 && dead * 5 > self.len();
        if compacted {
            self.compact(oldest_active);
        }
        GcReport { dead, compacted }
    }

    /// Rebuilds the graph from the entries some snapshot at or after `oldest_active` can still
    /// see, keeping their versions. The rebuild is a parallel bulk build.
    pub fn compact(&mut self, oldest_active: u64) {
        // Fewer entries than the index holds now always fit; on the impossible error the
        // index stays as it is (correct, only larger).
        let mut keep: Vec<u32> = (0..self.len() as u32)
            .filter(|s| self.deleted.get(s).is_none_or(|&d| d > oldest_active))
            .collect();
        keep.sort_unstable_by_key(|&s| (self.ids[s as usize], self.created[s as usize]));
        let mut fresh = VectorIndex::empty(self.config.clone());
        fresh.book = self.book.clone();
        let had_vectors = self.has_vectors();
        if !had_vectors {
            fresh.config.keep_vectors = false;
        }
        fresh.reserve(keep.len());
        let dims = self.config.dims;
        for &s in &keep {
            let at = s as usize * dims;
            if had_vectors {
                fresh.data.extend_from_slice(&self.data[at..at + dims]);
            }
            if self.book.is_some() {
                fresh.codes.extend_from_slice(&self.codes[at..at + dims]);
                fresh.norms.push(self.norms[s as usize]);
            }
            let Ok(slot) = fresh.push_entry(self.ids[s as usize], self.created[s as usize]) else {
                return;
            };
            if let Some(&d) = self.deleted.get(&s) {
                fresh.deleted.insert(slot, d);
                fresh.deleted_bits[slot as usize / 64] |= 1 << (slot % 64);
            }
        }
        fresh.sorted_len = fresh.len();
        fresh.fit_codes();
        fresh.link_everything();
        fresh.config.keep_vectors = self.config.keep_vectors;
        fresh.settle();
        fresh.tune_ef();
        *self = fresh;
    }

    /// How many layer-0 link lists hold each entry, by id (for diagnostics and tests).
    pub fn in_degrees(&self) -> Vec<(u64, u32)> {
        self.ids.iter().copied().zip(self.graph.in_degrees()).collect()
    }

    /// Heap bytes held (vectors, links, versions, maps), for the memory target and metrics.
    pub fn memory_bytes(&self) -> usize {
        self.data.capacity() * 4
            + self.codes.capacity()
            + self.norms.capacity() * 4
            + self.book.as_ref().map_or(0, |b| b.dims() * 8)
            + self.graph.memory_bytes()
            + self.ids.capacity() * 8
            + self.created.capacity() * 8
            + self.deleted_bits.capacity() * 8
            + self.deleted.capacity() * 13
            + self.recent.capacity() * 13
    }

    /// Rebuilds the derived parts after [`crate::persist`] read the stored ones.
    #[allow(clippy::too_many_arguments)] // the persisted parts, each checked by the reader
    pub(crate) fn from_parts(
        config: IndexConfig,
        graph: Graph,
        data: Vec<f32>,
        codes: Option<(Codebook, Vec<u8>, Vec<f32>)>,
        ids: Vec<u64>,
        created: Vec<u64>,
        deleted: FxHashMap<u32, u64>,
        sorted_len: usize,
    ) -> VectorIndex {
        let mut index = VectorIndex::empty(config);
        index.max_created = created.iter().copied().max().unwrap_or(0);
        index.deleted_bits = vec![0; ids.len().div_ceil(64)];
        for &slot in deleted.keys() {
            index.deleted_bits[slot as usize / 64] |= 1 << (slot % 64);
        }
        for (slot, &id) in ids.iter().enumerate().skip(sorted_len) {
            index.recent.insert(id, slot as u32);
        }
        index.graph = graph;
        index.data = data;
        if let Some((book, codes, norms)) = codes {
            index.book = Some(book);
            index.codes = codes;
            index.norms = norms;
        }
        index.ids = ids;
        index.created = created;
        index.deleted = deleted;
        index.sorted_len = sorted_len;
        index
    }
}

/// Links per node on layer 0 for `m` (Neo4j's `vector.hnsw.m`): `4 m`, at most 255.
///
/// The paper and FAISS use `2 m`. On hard data (100 k uniform 128-d vectors) `4 m` reaches
/// the same recall at a third of the beam: recall@10 0.956 at ef 512 against 0.959 at ef
/// 2 048, 2.7 against 4.5 ms CPU per query, for 1.5x the build CPU and 128 more bytes per
/// vector (0.80x the raw vectors with codes only, within the 1.2x target).
pub fn layer0_degree(m: usize) -> usize {
    (4 * m).min(255)
}

/// The layer of a slot: a geometric draw with ratio `1/m` from a hash of (seed, slot), so a
/// slot gets the same layer in every build.
pub(crate) fn level_of(seed: u64, slot: usize, m: usize) -> u8 {
    let mut z = seed ^ (slot as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let u = ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let level = (-u.ln() / (m as f64).ln()).floor();
    (level as u8).min(MAX_LEVEL)
}
