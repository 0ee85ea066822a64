//! [`Core`], the shared multi-version state: the current compact base (see `base/`) and the
//! delta on top of it (sparse sharded node and relationship tables with version chains and
//! fresh adjacency, see `versions.rs`), tokens, label/type id sets, count histories, the commit
//! state with its sink, and the install (apply) and base swap routines (GC is in `gc.rs`).
//! The fields are private to `mvcc/`; the layers above use the methods.
//!
//! **Invariant:** every mutation of shared state (install, GC, schema change) happens while the
//! caller holds the commit mutex (`Core::commit`), so mutators never race each other; readers take
//! one short lock at a time and never nest locks, except `active` then `base` (registering a
//! transaction and swapping the base take both, always in that order).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard, RwLock};
use rustc_hash::FxHashMap;

use crate::base::{Base, NodeRef};
use crate::codec::MAX_ID;
use crate::idset::IdSet;
use crate::records::{Labels, NodeData, RelData};
use crate::schema::{Schema, Target};
use crate::value::IndexKey;

use super::counts::{CountDelta, Counts, ANY};
use super::sink::CommitSink;
use super::tokens::TokenRegistry;
use super::versions::{chain_at, Adj, NodeSlot, RelSlot, Table};
use crate::clock::Clock;

/// Ids touched by one commit, for GC.
pub(crate) struct Dirty {
    pub ts: u64,
    /// Nonzero for the entry queued when a base at this ts was installed: it waits until every
    /// live transaction uses that base, then folds the whole delta into it.
    pub gate: u64,
    pub nodes: Vec<u64>,
    pub rels: Vec<u64>,
}

/// State guarded by the commit mutex.
pub(crate) struct CommitState {
    pub next_ts: u64,
    /// How many tokens of each kind are already in the WAL or a checkpoint.
    pub tokens_logged: [usize; 3],
    /// Where commit records go (`None` for an in-memory store, and once closed).
    pub sink: Option<Box<dyn CommitSink>>,
    pub closed: bool,
    pub gc_queue: VecDeque<Dirty>,
    /// Versions installed since the current base was built (drives compaction).
    pub delta_versions: u64,
    /// The commit ts of the latest schema change. The schema is not versioned: a change is in
    /// `Core::schema` from the moment its ts is assigned, so a checkpoint of an older snapshot
    /// must not copy it (see `checkpoint_with`).
    pub last_schema_ts: u64,
    /// Sees every commit's new versions (see `observer.rs`); `None`: nobody listens.
    pub observer: Option<std::sync::Arc<dyn super::CommitObserver>>,
}

/// Live transactions: their snapshot timestamps and the timestamps of the bases they read,
/// each with multiplicity.
#[derive(Default)]
pub(crate) struct Active {
    pub(super) snaps: BTreeMap<u64, usize>,
    pub(super) bases: BTreeMap<u64, usize>,
}

pub(super) fn count_in(m: &mut BTreeMap<u64, usize>, k: u64) {
    *m.entry(k).or_insert(0) += 1;
}

pub(super) fn count_out(m: &mut BTreeMap<u64, usize>, k: u64) {
    if let Some(n) = m.get_mut(&k) {
        *n -= 1;
        if *n == 0 {
            m.remove(&k);
        }
    }
}

/// Everything shared by the store handle, its transactions and its background threads.
pub(crate) struct Core {
    pub(super) tokens: TokenRegistry,
    /// The compact committed state at some ts; swapped (under the commit mutex and the active
    /// lock) when a checkpoint or compaction builds a newer one.
    pub(super) base: RwLock<Arc<Base>>,
    pub(super) nodes: Table<NodeSlot>,
    pub(super) rels: Table<RelSlot>,
    pub(super) label_sets: RwLock<HashMap<u32, IdSet>>,
    pub(super) type_sets: RwLock<HashMap<u32, IdSet>>,
    pub(super) counts: RwLock<Counts>,
    pub(super) schema: RwLock<Schema>,
    pub(super) next_node: AtomicU64,
    pub(super) next_rel: AtomicU64,
    pub(super) clock: Arc<Clock>,
    /// Live transactions, for the GC horizons.
    pub(super) active: Mutex<Active>,
    /// Serializes base rebuilds.
    pub(super) rebuild: Mutex<()>,
    pub(super) commit: Mutex<CommitState>,
    /// Whether commits are logged (a file-backed store): each one must then go to `sink`.
    pub(super) durable: bool,
    /// Rows scans have read from the delta (nodes newer than the base or with a delta
    /// version), ever (a counter that only grows): what the delta costs readers, which
    /// brings a quiet fold forward (see `release.rs`).
    pub(super) delta_reads: AtomicU64,
    /// The run buffer and scratch directory of index population (`index_part.rs`).
    pub(super) sort_budget: RwLock<crate::base::SortBudget>,
    /// Index parts built so far (`index_part.rs`; tests count rebuilds with it).
    pub(super) parts_built: AtomicU64,
    /// Index part files and their records (`part_files.rs`).
    pub(super) part_files: crate::base::PartFiles,
}

/// What installing one commit gathers on the way (see [`Core::apply`]).
struct Install<'a> {
    base: &'a Base,
    ts: u64,
    /// The node indexes' `(label, keys)`.
    pairs: Vec<Target>,
    delta: CountDelta,
    /// New `(label, node)` and `(type, relationship)` members of the id sets.
    label_adds: Vec<(u32, u64)>,
    type_adds: Vec<(u32, u64)>,
    /// Ids GC has to visit for this commit. A chain holding just this commit's version of an
    /// existing entity (a created node, the first write of a base row since the last fold) has
    /// nothing to prune until a later write or the next fold, and both queue the id again;
    /// leaving them out saves a locked table lookup per node of a bulk load.
    gc_nodes: Vec<u64>,
    gc_rels: Vec<u64>,
}

impl Core {
    pub fn new(durable: bool) -> Core {
        Core {
            tokens: TokenRegistry::default(),
            base: RwLock::new(Arc::new(Base::empty())),
            nodes: Table::new(),
            rels: Table::new(),
            label_sets: RwLock::new(HashMap::new()),
            type_sets: RwLock::new(HashMap::new()),
            counts: RwLock::new(Counts::default()),
            schema: RwLock::new(Schema::default()),
            next_node: AtomicU64::new(0),
            next_rel: AtomicU64::new(0),
            clock: Arc::new(Clock::new(0)),
            active: Mutex::new(Active::default()),
            rebuild: Mutex::new(()),
            commit: Mutex::new(CommitState {
                next_ts: 1,
                tokens_logged: [0; 3],
                sink: None,
                closed: false,
                gc_queue: VecDeque::new(),
                delta_versions: 0,
                last_schema_ts: 0,
                observer: None,
            }),
            durable,
            delta_reads: AtomicU64::new(0),
            sort_budget: RwLock::new(crate::base::SortBudget {
                run_bytes: usize::try_from(
                    crate::pager::default_memory_limit() / crate::base::RUN_SHARE,
                )
                .unwrap_or(usize::MAX),
                dir: None,
            }),
            parts_built: AtomicU64::new(0),
            part_files: Default::default(),
        }
    }

    /// Installs or removes the commit observer; the last commit timestamp assigned before.
    pub(crate) fn set_observer(&self, observer: Option<Arc<dyn super::CommitObserver>>) -> u64 {
        let mut cs = self.commit.lock();
        cs.observer = observer;
        cs.next_ts - 1
    }

    // ------------------------------------------------------------ the layers above
    // The fields stay private to the multi-version layer; durability and the store handle go
    // through these.

    /// How many delta rows scans have read so far (the `delta_reads` counter).
    pub(crate) fn delta_reads(&self) -> u64 {
        self.delta_reads.load(Ordering::Relaxed)
    }

    /// A number that moves with every commit and with every node or relationship id handed
    /// out, so also while a transaction still open creates entities: the maintenance thread's
    /// "writes are quiet" test (see `release.rs`) must not take a load's long batch, whose
    /// commit has not come yet, for a quiet store and fold or release in the middle of it.
    pub(crate) fn write_progress(&self) -> u64 {
        self.clock
            .visible()
            .wrapping_add(self.next_node.load(Ordering::Relaxed))
            .wrapping_add(self.next_rel.load(Ordering::Relaxed))
    }

    /// The commit clock (shared with the log writer).
    pub fn clock(&self) -> &Arc<Clock> {
        &self.clock
    }

    /// Takes the commit mutex: every mutation of shared state happens under it.
    pub fn lock_commit(&self) -> MutexGuard<'_, CommitState> {
        self.commit.lock()
    }

    /// Serializes base rebuilds (checkpoints and compactions).
    pub fn lock_rebuild(&self) -> MutexGuard<'_, ()> {
        self.rebuild.lock()
    }

    pub fn tokens(&self) -> &TokenRegistry {
        &self.tokens
    }

    /// The schema rules (not versioned: a change is in force from its commit ts on).
    pub fn schema(&self) -> &RwLock<Schema> {
        &self.schema
    }

    /// The ts of the current base.
    pub fn base_ts(&self) -> u64 {
        self.base.read().ts
    }

    /// The next node and relationship ids to be handed out.
    pub fn next_ids(&self) -> (u64, u64) {
        (self.next_node.load(Ordering::Acquire), self.next_rel.load(Ordering::Acquire))
    }

    /// Entities with delta entries: `(nodes, relationships)`.
    pub fn delta_len(&self) -> (usize, usize) {
        (self.nodes.len(), self.rels.len())
    }

    /// Installs the base loaded from a checkpoint at `ts` (recovery, nothing versioned yet):
    /// its node counts `counts`, relationship counts recomputed from it, and the id watermarks
    /// it recorded. Caller holds the commit mutex.
    pub fn load_base(
        &self,
        cs: &mut CommitState,
        base: Base,
        mut counts: CountDelta,
        ids: (u64, u64),
    ) {
        let ts = base.ts;
        debug_assert!(
            self.nodes.len() == 0 && self.rels.len() == 0,
            "a checkpoint loads into an empty delta"
        );
        // A complete segment brings its relationship counts; a decoded checkpoint does not.
        if counts.rels.is_empty() {
            counts.rels = Core::rel_counts_of(&base).rels;
        }
        *self.base.write() = Arc::new(base);
        self.rebuild_rel_indexes();
        self.counts.write().apply(ts, &counts);
        cs.gc_queue.clear();
        self.next_node.fetch_max(ids.0.min(MAX_ID), Ordering::AcqRel);
        self.next_rel.fetch_max(ids.1.min(MAX_ID), Ordering::AcqRel);
    }

    #[cfg(test)]
    pub fn label_sets_for_test(&self) -> &RwLock<HashMap<u32, IdSet>> {
        &self.label_sets
    }

    #[cfg(test)]
    pub fn nodes_for_test(&self) -> &Table<NodeSlot> {
        &self.nodes
    }

    /// Makes the base just loaded read its adjacency from its checkpoint's segment through
    /// `pool` (recovery, before anything else holds the base). Returns false, leaving the
    /// base as it is, if the base is already shared.
    pub fn attach_segment(
        &self,
        seg: Arc<crate::pager::segment::Segment>,
        pool: Arc<crate::pager::pool::BufferPool>,
    ) -> arbor_model::Result<bool> {
        let mut b = self.base.write();
        match Arc::get_mut(&mut b) {
            Some(base) => base.attach_segment(seg, pool).map(|()| true),
            None => Ok(false),
        }
    }

    /// The current base (what new transactions read under the delta).
    pub fn base(&self) -> Arc<Base> {
        self.base.read().clone()
    }

    /// The delta's node version at snapshot `ts` for a reader of `base`: `None` means "read the
    /// base" (also the fast path for base rows nobody wrote since the base was built).
    pub fn node_delta(&self, base: &Base, id: u64, ts: u64) -> Option<Option<Arc<NodeData>>> {
        if !base.node_dirty(id) {
            return None;
        }
        self.nodes.read(id, |s| chain_at(&s.chain, ts)).flatten()
    }

    pub fn rel_delta(&self, base: &Base, id: u64, ts: u64) -> Option<Option<Arc<RelData>>> {
        if !base.rel_dirty(id) {
            return None;
        }
        self.rels.read(id, |s| chain_at(&s.chain, ts)).flatten()
    }

    /// The commit ts of the newest delta version (0 when only the base has the node, whose
    /// versions are older than every live snapshot that could conflict).
    pub fn node_newest_ts(&self, id: u64) -> u64 {
        self.nodes.read(id, |s| s.chain.last().map_or(0, |v| v.0)).unwrap_or(0)
    }

    pub fn rel_newest_ts(&self, id: u64) -> u64 {
        self.rels.read(id, |s| s.chain.last().map_or(0, |v| v.0)).unwrap_or(0)
    }

    /// The newest version (committed, possibly not yet visible): `(ts, data)`.
    pub fn node_newest(&self, id: u64) -> (u64, Option<Arc<NodeData>>) {
        if let Some(v) = self.nodes.read(id, |s| s.chain.last().cloned()).flatten() {
            return v;
        }
        (0, self.base().node(id).map(|n| Arc::new(n.to_data())))
    }

    /// `f` of the newest committed state of node `id` (`None`: deleted or never existed),
    /// read in place: a base row's properties are decoded only as `f` asks for them, where
    /// [`Core::node_newest`] decodes every one into a copy (a rule's check over all rows of
    /// a label reads one key of each).
    pub fn with_node_newest<R>(&self, id: u64, f: impl FnOnce(NodeRef<'_>) -> R) -> Option<R> {
        if let Some((_, d)) = self.nodes.read(id, |s| s.chain.last().cloned()).flatten() {
            return d.map(|d| f(NodeRef::Data(&d)));
        }
        self.base().node(id).map(f)
    }

    /// The key of node `id`'s newest committed state for target `(label, keys)`.
    pub fn node_newest_key(&self, id: u64, label: u32, keys: &[u32]) -> Option<IndexKey> {
        self.with_node_newest(id, |d| d.key_for(label, keys)).flatten()
    }

    /// Whether the newest version of the node exists.
    pub fn node_newest_exists(&self, id: u64) -> bool {
        match self.nodes.read(id, |s| s.chain.last().map(|v| v.1.is_some())).flatten() {
            Some(e) => e,
            None => self.base().has_node(id),
        }
    }

    pub fn rel_newest_exists(&self, id: u64) -> bool {
        match self.rels.read(id, |s| s.chain.last().map(|v| v.1.is_some())).flatten() {
            Some(e) => e,
            None => self.base().has_rel(id),
        }
    }

    /// Registers a transaction: its snapshot ts and the base it reads. The base is taken before
    /// the ts, so `base.ts <= ts`.
    pub fn register(&self) -> (u64, Arc<Base>) {
        let mut a = self.active.lock();
        let base = self.base();
        let ts = self.clock.visible();
        count_in(&mut a.snaps, ts);
        count_in(&mut a.bases, base.ts);
        (ts, base)
    }

    pub fn unregister(&self, ts: u64, base_ts: u64) {
        let mut a = self.active.lock();
        count_out(&mut a.snaps, ts);
        count_out(&mut a.bases, base_ts);
    }

    /// `(horizon, base horizon)`: no live snapshot is older than the first, no live transaction
    /// reads a base older than the second.
    pub fn horizons(&self) -> (u64, u64) {
        let a = self.active.lock();
        let v = self.clock.visible();
        let cur = self.base.read().ts;
        (
            a.snaps.keys().next().map_or(v, |m| (*m).min(v)),
            a.bases.keys().next().map_or(cur, |m| (*m).min(cur)),
        )
    }

    /// Installs a newly built base (caller holds the commit mutex): marks the entities that have
    /// delta versions newer than it as dirty, swaps it in, and queues the whole delta for
    /// folding once no transaction reads an older base.
    pub fn install_base(&self, cs: &mut CommitState, base: Base) {
        let b = base.ts;
        self.nodes.for_each(|id, s| {
            if s.chain.last().is_some_and(|v| v.0 > b)
                || s.out.iter().chain(s.inc.iter()).any(|a| a.ts > b)
            {
                base.mark_node(id);
            }
        });
        self.rels.for_each(|id, s| {
            if s.chain.last().is_some_and(|v| v.0 > b) {
                base.mark_rel(id);
            }
        });
        {
            let _a = self.active.lock();
            *self.base.write() = Arc::new(base);
        }
        cs.delta_versions = 0;
        cs.gc_queue.push_back(Dirty {
            ts: b,
            gate: b.max(1),
            nodes: self.nodes.ids(),
            rels: self.rels.ids(),
        });
    }

    /// Replaces the current base, if it is still `old`, by `new`, a base of the same commit
    /// holding the same graph, read another way (a promotion of a lazily opened base). Caller
    /// holds the commit mutex, so no commit marks `old` dirty while its bits are copied.
    /// Returns whether `new` is now current; transactions already reading `old` keep it.
    pub fn replace_base(&self, _cs: &mut CommitState, old: &Arc<Base>, new: Base) -> bool {
        if new.ts != old.ts || !Arc::ptr_eq(&self.base.read(), old) {
            return false;
        }
        new.copy_dirty(old);
        let _a = self.active.lock();
        *self.base.write() = Arc::new(new);
        true
    }

    /// Installs one commit's versions at `ts`. `nodes` and `rels` hold the final state of each
    /// written entity (`None` = deleted). Caller holds the commit mutex.
    pub fn apply(
        &self,
        cs: &mut CommitState,
        ts: u64,
        nodes: &[(u64, Option<Arc<NodeData>>)],
        rels: &[(u64, Option<Arc<RelData>>)],
    ) {
        invariant!(ts > self.base.read().ts, "installing commit {ts} at or below the base");
        let base = self.base();
        let mut delta = CountDelta::default();
        self.rel_count_delta(&base, nodes, rels, &mut delta);
        let mut schema = self.schema.write();
        let mut x = Install {
            base: &base,
            ts,
            pairs: schema.pairs(),
            delta,
            label_adds: Vec::new(),
            type_adds: Vec::new(),
            gc_nodes: Vec::with_capacity(nodes.len()),
            gc_rels: Vec::with_capacity(rels.len()),
        };
        for (id, data) in nodes.iter().filter(|(_, d)| d.is_some()) {
            self.install_node(&mut x, *id, data, &mut schema);
        }
        let rel_targets: Vec<Target> = schema.rel_maps.keys().cloned().collect();
        for (id, data) in rels {
            self.install_rel(&mut x, *id, data, &mut schema, &rel_targets);
        }
        for (id, data) in nodes.iter().filter(|(_, d)| d.is_none()) {
            self.install_node(&mut x, *id, data, &mut schema);
        }
        drop(schema);
        let Install { delta, label_adds, type_adds, gc_nodes, gc_rels, .. } = x;
        self.add_set_members(label_adds, type_adds);
        self.counts.write().apply(ts, &delta);
        let bump = |a: &AtomicU64, id: u64| {
            a.fetch_max(id + 1, Ordering::AcqRel);
        };
        for (id, _) in nodes {
            bump(&self.next_node, *id);
        }
        for (id, _) in rels {
            bump(&self.next_rel, *id);
        }
        cs.delta_versions += (nodes.len() + rels.len()) as u64;
        if !gc_nodes.is_empty() || !gc_rels.is_empty() {
            cs.gc_queue.push_back(Dirty { ts, gate: 0, nodes: gc_nodes, rels: gc_rels });
        }
    }

    /// Installs one node version (`None`: deleted) of the commit: appends it to the node's
    /// chain and records its count changes, new label members and index entries.
    fn install_node(
        &self,
        x: &mut Install<'_>,
        id: u64,
        data: &Option<Arc<NodeData>>,
        schema: &mut Schema,
    ) {
        let (base, ts) = (x.base, x.ts);
        base.mark_node(id);
        // `None`: no delta version, the base row (if any) is the previous state.
        let mut lone = false;
        let prev: Option<Option<Arc<NodeData>>> = self
            .nodes
            .write(id, |slot| {
                let slot = slot.get_or_insert_with(NodeSlot::default);
                let prev = slot.chain.last().map(|(_, d)| d.clone());
                // Most slots only ever hold the one version of a created node until a fold
                // takes it: room for one (24 bytes), not `Vec`'s first growth to four. Only
                // for a new chain: later pushes keep `Vec`'s amortized doubling.
                if slot.chain.capacity() == 0 {
                    slot.chain.reserve_exact(1);
                }
                invariant!(
                    slot.chain.last().is_none_or(|(t, _)| *t < ts),
                    "version chain of {id} not sorted by commit ts (installing {ts})"
                );
                slot.chain.push((ts, data.clone()));
                lone = slot.chain.len() == 1 && data.is_some();
                prev
            })
            .flatten();
        let p: Option<NodeRef<'_>> = match &prev {
            Some(Some(d)) => Some(NodeRef::Data(d)),
            Some(None) => None,
            None => base.node(id),
        };
        let empty = NodeData::default();
        let p_ref = p.unwrap_or(NodeRef::Data(&empty));
        let n = data.as_deref().unwrap_or(&empty);
        x.delta.total += i64::from(data.is_some()) - i64::from(p.is_some());
        for l in &n.labels {
            if !p_ref.has_label(*l) {
                x.delta.label(*l, 1);
                x.label_adds.push((*l, id));
            }
        }
        for l in p_ref.labels() {
            if !n.has_label(*l) {
                x.delta.label(*l, -1);
            }
        }
        for t in &x.pairs {
            if let Some(key) = n.key_for(t.0, &t.1) {
                if p_ref.key_for(t.0, &t.1).as_ref() != Some(&key) {
                    schema.insert_entry(t, key, id);
                }
            }
        }
        if !lone {
            x.gc_nodes.push(id);
        }
    }

    /// Installs one relationship version (`None`: deleted) of the commit: appends it to the
    /// relationship's chain, records its index entries and, for a new relationship, its
    /// fresh adjacency at both nodes and its type member.
    fn install_rel(
        &self,
        x: &mut Install<'_>,
        id: u64,
        data: &Option<Arc<RelData>>,
        schema: &mut Schema,
        rel_targets: &[Target],
    ) {
        let (base, ts) = (x.base, x.ts);
        base.mark_rel(id);
        let (chain_was_empty, prev) = self
            .rels
            .write(id, |slot| {
                let slot = slot.get_or_insert_with(RelSlot::default);
                let new = slot.chain.is_empty();
                let prev = slot.chain.last().and_then(|(_, d)| d.clone());
                if new && slot.chain.capacity() == 0 {
                    slot.chain.reserve_exact(1);
                }
                invariant!(
                    slot.chain.last().is_none_or(|(t, _)| *t < ts),
                    "version chain of {id} not sorted by commit ts (installing {ts})"
                );
                slot.chain.push((ts, data.clone()));
                (new, prev)
            })
            .unwrap_or((false, None));
        if !(chain_was_empty && data.is_some()) {
            x.gc_rels.push(id);
        }
        let is_new = chain_was_empty && !base.has_rel(id);
        if let (false, Some(r)) = (rel_targets.is_empty(), data) {
            // The previous state: the newest delta version, else the base row.
            let prev = prev.or_else(|| base.rel(id).map(|b| Arc::new(b.to_data())));
            for t in rel_targets {
                if let Some(k) = r.key_for(t.0, &t.1) {
                    if prev.as_ref().and_then(|p| p.key_for(t.0, &t.1)).as_ref() != Some(&k) {
                        schema.rel_entry(t, k, id, true);
                    }
                }
            }
        }
        if let (true, Some(r)) = (is_new, data) {
            base.mark_node(r.start);
            base.mark_node(r.end);
            self.nodes.write(r.start, |s| {
                s.get_or_insert_with(NodeSlot::default).out.push(Adj {
                    rel: id,
                    other: r.end,
                    ty: r.ty,
                    ts,
                })
            });
            self.nodes.write(r.end, |s| {
                s.get_or_insert_with(NodeSlot::default).inc.push(Adj {
                    rel: id,
                    other: r.start,
                    ty: r.ty,
                    ts,
                })
            });
            x.type_adds.push((r.ty, id));
        }
    }

    /// Adds a commit's new members to the label and type id sets.
    fn add_set_members(&self, label_adds: Vec<(u32, u64)>, type_adds: Vec<(u32, u64)>) {
        if !label_adds.is_empty() {
            let mut ls = self.label_sets.write();
            // Ids of one label come in runs (a batch creates nodes of the same labels): one
            // map lookup per run.
            let mut i = 0;
            while let Some(&(l, _)) = label_adds.get(i) {
                let set = ls.entry(l).or_default();
                while let Some(&(l2, id)) = label_adds.get(i) {
                    if l2 != l {
                        break;
                    }
                    set.insert(id);
                    i += 1;
                }
            }
        }
        if !type_adds.is_empty() {
            let mut ts_ = self.type_sets.write();
            for (t, id) in type_adds {
                ts_.entry(t).or_default().insert(id);
            }
        }
    }

    /// Relationship-count changes of a commit, from the newest committed state before it
    /// (caller holds the commit mutex, before installing): created relationships count with
    /// their endpoints' new labels, deleted ones with the old, and relationships that stay
    /// move between label keys when an endpoint gains or loses labels.
    pub(super) fn rel_count_delta(
        &self,
        base: &Base,
        nodes: &[(u64, Option<Arc<NodeData>>)],
        rels: &[(u64, Option<Arc<RelData>>)],
        delta: &mut CountDelta,
    ) {
        // Labels of the newest committed version (no copy of the properties).
        let newest_labels = |id: u64| -> Option<Labels> {
            let delta = self
                .nodes
                .read(id, |s| s.chain.last().map(|v| v.1.as_ref().map(|d| d.labels.clone())))
                .flatten();
            match delta {
                Some(l) => l,
                None => base.has_node(id).then(|| Labels::from_slice(base.node_labels(id))),
            }
        };
        let old_labels = |id: u64| -> Labels { newest_labels(id).unwrap_or_default() };
        // Only created relationships need the new labels of their endpoints.
        let written: HashMap<u64, &Option<Arc<NodeData>>> = if rels.iter().any(|(_, d)| d.is_some())
        {
            nodes.iter().map(|(id, d)| (*id, d)).collect()
        } else {
            HashMap::new()
        };
        let new_labels = |id: u64| -> Labels {
            match written.get(&id) {
                Some(d) => d.as_ref().map(|d| d.labels.clone()).unwrap_or_default(),
                None => old_labels(id),
            }
        };
        let mut deleted: HashSet<u64> = HashSet::new();
        for (id, data) in rels {
            let old = self.rel_newest(*id);
            match (&old, data) {
                (Some(o), None) => {
                    deleted.insert(*id);
                    delta.rel(&old_labels(o.0), o.2, &old_labels(o.1), -1);
                }
                (None, Some(r)) => delta.rel(&new_labels(r.start), r.ty, &new_labels(r.end), 1),
                _ => {}
            }
        }
        for (id, data) in nodes {
            let Some(new) = data else { continue };
            let Some(old) = newest_labels(*id) else { continue };
            if old == new.labels {
                continue;
            }
            let added: Vec<u32> =
                new.labels.iter().copied().filter(|l| old.binary_search(l).is_err()).collect();
            let removed: Vec<u32> = old.iter().copied().filter(|l| !new.has_label(*l)).collect();
            // Relationships of the node as committed (base CSR plus delta adjacency).
            let mut seen: HashSet<u64> = HashSet::new();
            let mut edges: Vec<(u64, u32, bool)> = Vec::new();
            let read = base.edges(*id, true, true, |r, _, ty, out| {
                if seen.insert(r.wrapping_mul(2) + u64::from(out)) {
                    edges.push((r, ty, out));
                }
            });
            if let Err(e) = read {
                // The commit is already logged; its count changes for this node's base
                // relationships are lost until the next open recounts them.
                tracing::error!("relationship counts of node {id} not updated: {}", e.message);
            }
            self.nodes.read(*id, |s| {
                for (a, out) in
                    s.out.iter().map(|a| (a, true)).chain(s.inc.iter().map(|a| (a, false)))
                {
                    if seen.insert(a.rel.wrapping_mul(2) + u64::from(out)) {
                        edges.push((a.rel, a.ty, out));
                    }
                }
            });
            for (r, ty, out) in edges {
                if deleted.contains(&r) || !self.rel_newest_exists(r) {
                    continue;
                }
                for t in [ty, ANY] {
                    for (ls, d) in [(&added, 1), (&removed, -1)] {
                        for l in ls {
                            let k = if out { (*l, t, ANY) } else { (ANY, t, *l) };
                            delta.rel_key(k, d);
                        }
                    }
                }
            }
        }
    }

    /// `(start, end, type)` of the newest committed version of a relationship.
    pub(super) fn rel_newest(&self, id: u64) -> Option<(u64, u64, u32)> {
        match self.rels.read(id, |s| s.chain.last().map(|v| v.1.clone())).flatten() {
            Some(Some(r)) => Some((r.start, r.end, r.ty)),
            Some(None) => None,
            None => self.base().rel(id).map(|r| (r.start(), r.end(), r.ty())),
        }
    }

    /// Relationship counts of everything in `base` (at recovery, after loading a checkpoint).
    pub fn rel_counts_of(base: &Base) -> CountDelta {
        // Counted per (start label set, type, end label set) first: a graph has few such
        // combinations, so each relationship costs one small-map update instead of one per
        // count key it matches.
        let mut by_sets: FxHashMap<(usize, u32, usize), i64> = FxHashMap::default();
        // Runs of the same key are counted before the map is touched (a start node's
        // relationships often share type and end label set).
        let mut run: Option<((usize, u32, usize), i64)> = None;
        base.for_each_rel_forward(|s, ty, e| {
            let k = (base.node_label_code(s), ty, base.node_label_code(e));
            match &mut run {
                Some((rk, n)) if *rk == k => *n += 1,
                _ => {
                    if let Some((rk, n)) = run.replace((k, 1)) {
                        *by_sets.entry(rk).or_insert(0) += n;
                    }
                }
            }
        });
        if let Some((rk, n)) = run {
            *by_sets.entry(rk).or_insert(0) += n;
        }
        let mut d = CountDelta::default();
        for ((s, ty, e), n) in by_sets {
            d.rel(base.label_set(s), ty, base.label_set(e), n);
        }
        d
    }
}
