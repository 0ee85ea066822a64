//! The maintained FULLTEXT indexes: one tantivy corpus per index (`arbor_fulltext::Corpus`, in
//! RAM), populated in the background after `CREATE` and after every open (POPULATING →
//! ONLINE, with `populationPercent`), then kept up to date from storage's commit observer: each
//! commit's new versions go to the [`Feed`] (an `Arc` clone per entity, under the commit
//! mutex), and only those entities are re-indexed, in commit order, tagged with the commit
//! timestamp the corpus has applied. Nothing here is persisted: ARCHITECTURE.md says why.
//!
//! A query stays transactional. Its transaction reads snapshot `S` and has written entities
//! `W`; the corpus has applied every commit up to `A`. The entities whose committed version
//! may differ between `S` and `A` are those written by the commits in `(min(A,S), max(A,S)]`
//! (the feed keeps recent applied commits for this). Those, plus `W`, are the *dirty* set: the
//! corpus answers for every other entity, and the dirty ones are read through the
//! transaction (snapshot plus own writes) into a small corpus scored with the large one's
//! statistics. If the feed no longer holds `(min(A,S), …]` (a very old snapshot), or the index
//! is still populating, the query falls back to reading every entity of the index through the
//! transaction (`fulltext::documents`), which gives the same answers.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arbor_exec::graph::Graph;
use arbor_fulltext::{AnalyzerSpec, Corpus, Document, Node};
use arbor_storage::{CommitChanges, CommitObserver, EntityVersion, Store, TokenKind};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::fulltext_doc::{push_strings, FulltextDef};

/// Applied commits the feed keeps for snapshots older than an index's applied timestamp:
/// at most this many commits, and at most [`RETAIN_ENTITIES`] entity versions.
const RETAIN_COMMITS: usize = 4096;
const RETAIN_ENTITIES: usize = 100_000;

/// The commits since the observer was installed, not yet applied by every index or kept for
/// older snapshots.
#[derive(Default)]
pub(crate) struct Feed {
    state: Mutex<FeedState>,
    wake: Condvar,
}

#[derive(Default)]
struct FeedState {
    entries: VecDeque<Entry>,
    /// Every commit with writes after this timestamp is in `entries`.
    complete_after: u64,
    /// The newest commit timestamp seen (or `complete_after`).
    newest: u64,
    enabled: bool,
    /// Entity versions in `entries`.
    versions: usize,
    kicked: bool,
}

struct Entry {
    ts: u64,
    nodes: Arc<[EntityVersion]>,
    rels: Arc<[EntityVersion]>,
}

impl Entry {
    fn of(&self, rels: bool) -> &Arc<[EntityVersion]> {
        if rels {
            &self.rels
        } else {
            &self.nodes
        }
    }
}

impl CommitObserver for Feed {
    fn committed(&self, ts: u64, changes: &CommitChanges<'_>) {
        let nodes: Arc<[EntityVersion]> = changes.nodes().collect();
        let rels: Arc<[EntityVersion]> = changes.rels().collect();
        let mut st = self.state.lock();
        st.versions += nodes.len() + rels.len();
        st.newest = st.newest.max(ts);
        st.entries.push_back(Entry { ts, nodes, rels });
        st.kicked = true;
        self.wake.notify_one();
    }
}

impl Feed {
    /// Starts (if stopped) a feed complete after commit `last`.
    fn enable(&self, last: u64) {
        let mut st = self.state.lock();
        if !st.enabled {
            st.enabled = true;
            st.complete_after = last;
            st.newest = st.newest.max(last);
            st.entries.retain(|e| e.ts > last);
            st.versions = st.entries.iter().map(|e| e.nodes.len() + e.rels.len()).sum();
        }
    }

    /// Stops the feed and forgets its entries (the observer has been removed).
    pub fn disable(&self) {
        let mut st = self.state.lock();
        *st = FeedState { kicked: st.kicked, ..FeedState::default() };
    }

    /// Wakes the worker.
    pub fn kick(&self) {
        self.state.lock().kicked = true;
        self.wake.notify_one();
    }

    /// Waits until kicked or `timeout` passes.
    pub fn wait(&self, timeout: Duration) {
        let mut st = self.state.lock();
        if !st.kicked {
            self.wake.wait_for(&mut st, timeout);
        }
        st.kicked = false;
    }

    /// The entries after `after` up to `upto`, of nodes or `rels`, and the newest timestamp
    /// they cover (`None` if the feed does not hold all of them).
    fn since(&self, after: u64, upto: u64, rels: bool) -> Option<(Vec<Arc<[EntityVersion]>>, u64)> {
        let st = self.state.lock();
        if !st.enabled || after < st.complete_after {
            return None;
        }
        let out = st
            .entries
            .iter()
            .filter(|e| e.ts > after && e.ts <= upto)
            .map(|e| e.of(rels).clone())
            .collect();
        Some((out, st.newest.min(upto).max(after)))
    }

    /// Forgets entries every index has applied, beyond the ones kept for older snapshots.
    fn trim(&self, min_applied: u64) {
        let mut st = self.state.lock();
        while let Some(e) = st.entries.front() {
            let applied = st.entries.iter().take_while(|e| e.ts <= min_applied).count();
            if e.ts > min_applied || (applied <= RETAIN_COMMITS && st.versions <= RETAIN_ENTITIES) {
                break;
            }
            let n = e.nodes.len() + e.rels.len();
            let ts = e.ts;
            st.entries.pop_front();
            st.versions -= n;
            st.complete_after = ts;
        }
    }
}

/// Where an index is in its life.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Phase {
    Populating,
    Online,
    Failed(String),
}

/// One maintained index.
pub(crate) struct Live {
    pub def: FulltextDef,
    state: RwLock<LiveState>,
    /// Population progress in percent, as `f64` bits.
    progress: AtomicU64,
}

struct LiveState {
    phase: Phase,
    corpus: Option<Corpus>,
    /// Every commit up to this timestamp is in `corpus`.
    applied: u64,
    /// The ids with a document in `corpus`.
    docs: HashSet<u64>,
}

impl Live {
    pub fn new(def: FulltextDef) -> Live {
        Live {
            def,
            state: RwLock::new(LiveState {
                phase: Phase::Populating,
                corpus: None,
                applied: 0,
                docs: HashSet::new(),
            }),
            progress: AtomicU64::new(0f64.to_bits()),
        }
    }

    pub fn phase(&self) -> Phase {
        self.state.read().phase.clone()
    }

    pub fn progress(&self) -> f64 {
        f64::from_bits(self.progress.load(Ordering::Relaxed))
    }

    /// The applied timestamp, if online.
    pub fn applied(&self) -> Option<u64> {
        let st = self.state.read();
        (st.phase == Phase::Online).then_some(st.applied)
    }

    fn analyzer(&self) -> Result<&'static AnalyzerSpec, String> {
        AnalyzerSpec::named(&self.def.analyzer)
            .ok_or_else(|| format!("unknown analyzer {}", self.def.analyzer))
    }

    /// Builds the corpus from a snapshot, then applies what committed since. Runs on the
    /// worker thread; a failure leaves the index FAILED with the reason.
    pub fn populate(&self, store: &Store, feed: &Arc<Feed>) {
        if let Err(e) = self.try_populate(store, feed) {
            self.state.write().phase = Phase::Failed(e);
        }
    }

    fn try_populate(&self, store: &Store, feed: &Arc<Feed>) -> Result<(), String> {
        let last = store.set_commit_observer(Some(feed.clone() as Arc<dyn CommitObserver>));
        feed.enable(last);
        // Every commit after `last` reaches the feed; the snapshot must include the others.
        store.wait_for_commit(last, Duration::from_secs(3600));
        let mut tx = store.begin(true);
        let snapshot = tx.start_ts();
        let mut g = crate::graph_impl::TxGraph {
            tx: &mut tx,
            batch_store: None,
            import_dir: None,
            data_dir: None,
        };
        let ids = crate::fulltext_doc::entity_ids(&self.def, &mut g);
        let keys = crate::fulltext_doc::property_keys(&self.def, &g);
        let mut corpus = Corpus::maintained(&self.def.properties, self.analyzer()?)
            .map_err(|e| e.to_string())?;
        let mut docs = HashSet::new();
        for (i, &id) in ids.iter().enumerate() {
            if let Some(d) = crate::fulltext_doc::document(&self.def, &mut g, id, &keys) {
                docs.insert(id);
                corpus.insert(d).map_err(|e| e.to_string())?;
            }
            if i % 1024 == 0 {
                let pct = 100.0 * i as f64 / ids.len() as f64;
                self.progress.store(pct.to_bits(), Ordering::Relaxed);
            }
        }
        corpus.commit().map_err(|e| e.to_string())?;
        drop(tx);
        {
            let mut st = self.state.write();
            *st = LiveState { phase: Phase::Online, corpus: Some(corpus), applied: snapshot, docs };
        }
        self.progress.store(100f64.to_bits(), Ordering::Relaxed);
        self.catch_up(store, feed, u64::MAX)
    }

    /// Applies the committed changes after the applied timestamp up to `upto`.
    pub fn catch_up(&self, store: &Store, feed: &Feed, upto: u64) -> Result<(), String> {
        let mut guard = self.state.write();
        let st = &mut *guard;
        if st.phase != Phase::Online || st.applied >= upto {
            return Ok(());
        }
        let Some((entries, newest)) = feed.since(st.applied, upto, self.def.relationship) else {
            // The feed lost commits this index needs (it was stopped): populate again.
            st.phase = Phase::Populating;
            feed.kick();
            return Ok(());
        };
        let (tokens, keys) = resolve(store, &self.def);
        let Some(corpus) = st.corpus.as_mut() else { return Ok(()) };
        let mut changed = false;
        for v in entries.iter().flat_map(|e| e.iter()) {
            let id = v.id();
            if !st.docs.contains(&id) && !tokens.iter().any(|t| v.has_token(*t)) {
                continue;
            }
            changed = true;
            match version_document(v, &tokens, &keys) {
                Some(d) => {
                    st.docs.insert(id);
                    corpus.put(d).map_err(|e| e.to_string())?;
                }
                None => {
                    if st.docs.remove(&id) {
                        corpus.remove(id).map_err(|e| e.to_string())?;
                    }
                }
            }
        }
        if changed {
            corpus.commit().map_err(|e| e.to_string())?;
        }
        st.applied = newest;
        Ok(())
    }

    /// The hits of `query` as the transaction of `g` sees the index (see the module docs), or
    /// `None` when this index cannot answer for it (the caller then scans).
    pub fn query(
        &self,
        store: &Store,
        feed: &Feed,
        g: &mut dyn Graph,
        query: &Node,
        analyzer: &AnalyzerSpec,
    ) -> Option<Result<Vec<(u64, f64)>, arbor_fulltext::Error>> {
        let (snapshot, own) = g.snapshot_with_writes(self.def.relationship)?;
        if !self.def.eventually_consistent {
            // As if the index were updated inside each commit: everything the snapshot
            // sees is applied first.
            self.catch_up(store, feed, snapshot).ok()?;
        }
        let st = self.state.read();
        if st.phase != Phase::Online {
            return None;
        }
        let corpus = st.corpus.as_ref()?;
        let (lo, hi) = (st.applied.min(snapshot), st.applied.max(snapshot));
        let mut dirty: HashSet<u64> = own.into_iter().collect();
        if lo < hi {
            let (entries, _) = feed.since(lo, hi, self.def.relationship)?;
            let (tokens, _) = resolve(store, &self.def);
            // Behind the snapshot, `docs` (the corpus's state at `A`) tells which older
            // versions were indexed; ahead of it, it does not (an entity may have left the
            // index since the snapshot), so every entity changed since counts.
            let behind = st.applied < snapshot;
            for v in entries.iter().flat_map(|e| e.iter()) {
                let id = v.id();
                if !behind || st.docs.contains(&id) || tokens.iter().any(|t| v.has_token(*t)) {
                    dirty.insert(id);
                }
            }
        }
        Some(answer(&self.def, corpus, &dirty, g, query, analyzer))
    }
}

/// The corpus's hits for every entity not in `dirty`, plus the dirty ones read through `g`.
fn answer(
    def: &FulltextDef,
    corpus: &Corpus,
    dirty: &HashSet<u64>,
    g: &mut dyn Graph,
    query: &Node,
    analyzer: &AnalyzerSpec,
) -> Result<Vec<(u64, f64)>, arbor_fulltext::Error> {
    let mut hits = corpus.hits(query, analyzer, None)?;
    if dirty.is_empty() {
        return Ok(hits);
    }
    hits.retain(|(id, _)| !dirty.contains(id));
    let keys = crate::fulltext_doc::property_keys(def, g);
    let mut ids: Vec<u64> = dirty.iter().copied().collect();
    ids.sort_unstable();
    let docs: Vec<Document> =
        ids.into_iter().filter_map(|id| crate::fulltext_doc::document(def, g, id, &keys)).collect();
    if docs.is_empty() {
        return Ok(hits);
    }
    let index_analyzer = AnalyzerSpec::named(&def.analyzer).ok_or_else(|| {
        arbor_fulltext::Error::Search(format!("unknown analyzer {}", def.analyzer))
    })?;
    let overlay = Corpus::build(&def.properties, index_analyzer, docs)?;
    hits.extend(overlay.hits(query, analyzer, Some(corpus))?);
    Ok(hits)
}

/// The label (type) tokens and `(position, key token)` of the properties of `def` that exist.
fn resolve(store: &Store, def: &FulltextDef) -> (Vec<u32>, Vec<(usize, u32)>) {
    let owner = if def.relationship { TokenKind::RelType } else { TokenKind::Label };
    let tokens = def.labels.iter().filter_map(|l| store.token_id(owner, l)).collect();
    let keys = def
        .properties
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, store.token_id(TokenKind::PropertyKey, p)?)))
        .collect();
    (tokens, keys)
}

/// The document of a committed version: `None` if deleted, without the index's labels
/// (type), or without string values among its properties.
fn version_document(v: &EntityVersion, tokens: &[u32], keys: &[(usize, u32)]) -> Option<Document> {
    if !tokens.iter().any(|t| v.has_token(*t)) {
        return None;
    }
    let mut values = Vec::new();
    for &(i, key) in keys {
        if let Some(value) = v.prop(key) {
            push_strings(&mut values, i, value);
        }
    }
    (!values.is_empty()).then_some(Document { id: v.id(), values })
}

/// Forgets what every index has applied (beyond the entries kept for older snapshots).
pub(crate) fn trim(feed: &Feed, live: &[Arc<Live>]) {
    if live.iter().any(|l| l.phase() == Phase::Populating) {
        return;
    }
    if let Some(min) = live.iter().filter_map(|l| l.applied()).min() {
        feed.trim(min);
    }
}
