//! The shared multi-version state: the current compact base (see `base.rs`) and the delta on
//! top of it (sparse sharded node and relationship tables with version chains and fresh
//! adjacency), tokens, label/type id sets, count histories, and the install (apply), base swap
//! and garbage collection (including folding the delta into the base) routines that mutate them.
//!
//! **Invariant:** every mutation of shared state (install, GC, schema change) happens while the
//! caller holds the commit mutex (`Core::commit`), so mutators never race each other; readers take
//! one short lock at a time and never nest locks, except `active` then `base` (registering a
//! transaction and swapping the base take both, always in that order).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status, Value};
use parking_lot::{Condvar, Mutex, RwLock};
use rustc_hash::FxHashMap;

use crate::base::{Base, NodeRef};
use crate::codec::MAX_ID;
use crate::idset::IdSet;
use crate::schema::{Schema, Target};
use crate::value::{target_key, IndexKey};
use crate::TokenKind;

/// A node's labels (sorted, unique) and properties (sorted by key, no nulls).
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeData {
    pub labels: Labels,
    pub props: Vec<(u32, Value)>,
}

/// A node's label tokens, sorted: up to four inline (nodes rarely have more), so a created node
/// costs no allocation for its labels (a bulk create makes hundreds of thousands).
pub(crate) type Labels = smallvec::SmallVec<[u32; 4]>;

/// A relationship; `start`, `end` and `ty` never change after creation.
#[derive(Clone, Debug)]
pub(crate) struct RelData {
    pub start: u64,
    pub end: u64,
    pub ty: u32,
    pub props: Vec<(u32, Value)>,
}

impl RelData {
    /// The index key of properties `keys` if the relationship has type `ty`.
    pub fn key_for(&self, ty: u32, keys: &[u32]) -> Option<IndexKey> {
        if self.ty != ty {
            return None;
        }
        target_key(keys, |k| prop_of(&self.props, k))
    }
}

pub(crate) fn prop_of(props: &[(u32, Value)], key: u32) -> Option<&Value> {
    props.binary_search_by_key(&key, |(k, _)| *k).ok().map(|i| &props[i].1)
}

/// Sets or (with `None`) removes a property in a sorted property list.
pub(crate) fn set_prop(props: &mut Vec<(u32, Value)>, key: u32, value: Option<Value>) {
    match (props.binary_search_by_key(&key, |(k, _)| *k), value) {
        (Ok(i), Some(v)) => props[i].1 = v,
        (Ok(i), None) => {
            props.remove(i);
        }
        (Err(i), Some(v)) => props.insert(i, (key, v)),
        (Err(_), None) => {}
    }
}

impl NodeData {
    pub fn has_label(&self, l: u32) -> bool {
        self.labels.binary_search(&l).is_ok()
    }
    pub fn prop(&self, key: u32) -> Option<&Value> {
        prop_of(&self.props, key)
    }
    /// The index key of properties `keys` if the node has label `label` (see
    /// [`crate::value::target_key`]).
    pub fn key_for(&self, label: u32, keys: &[u32]) -> Option<IndexKey> {
        if !self.has_label(label) {
            return None;
        }
        target_key(keys, |k| self.prop(k))
    }
}

/// Versions oldest first; `None` data is a deletion.
pub(crate) type Chain<T> = Vec<(u64, Option<Arc<T>>)>;

/// The version visible at snapshot `ts`.
#[cfg(test)]
pub(crate) fn visible_at<T>(chain: &Chain<T>, ts: u64) -> Option<&Arc<T>> {
    chain.iter().rev().find(|(t, _)| *t <= ts).and_then(|(_, d)| d.as_ref())
}

/// The delta's answer at snapshot `ts`: `None` if it holds no version that old (the base is
/// current for that snapshot), `Some(None)` for a deletion.
pub(crate) fn chain_at<T>(chain: &Chain<T>, ts: u64) -> Option<Option<Arc<T>>> {
    chain.iter().rev().find(|(t, _)| *t <= ts).map(|(_, d)| d.clone())
}

/// One delta adjacency entry (a relationship created after the base was built); visibility is
/// decided by the relationship's chain. `ts` is the creating commit: readers whose base is at
/// least that new find the relationship in the base CSR instead.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Adj {
    pub rel: u64,
    pub other: u64,
    pub ty: u32,
    pub ts: u64,
}

#[derive(Default)]
pub(crate) struct NodeSlot {
    pub chain: Chain<NodeData>,
    pub out: Vec<Adj>,
    pub inc: Vec<Adj>,
}

#[derive(Default)]
pub(crate) struct RelSlot {
    pub chain: Chain<RelData>,
}

const SHARDS: u64 = 64;

/// A shard holds blocks of `1 << BLOCK_BITS` consecutive ids (block `b` goes to shard
/// `b % SHARDS`), so a scan in id order (a fold reading every delta node, GC of sorted ids, a
/// commit installing a batch of new nodes) stays in one shard's table for a whole block. With
/// ids dealt round-robin over the shards (`id % SHARDS`), such a scan advanced 64 tables at
/// once, one entry each, and every step missed the cache (the hottest instruction of GC, of
/// the fold and of a bulk commit's install).
const BLOCK_BITS: u32 = 10;

/// The id's position within its shard: the shard bits taken out, so consecutive ids of a
/// block, and the blocks of one shard, are consecutive.
#[inline]
fn shard_key(id: u64) -> u64 {
    ((id >> (BLOCK_BITS + SHARDS.trailing_zeros())) << BLOCK_BITS) | (id & ((1 << BLOCK_BITS) - 1))
}

/// Hashes a `u64` id of a [`Table`] shard with a few multiplications (ids are dense; SipHash
/// would be wasted work), keeping neighbouring ids together: the table's bucket index comes
/// from the low bits, so ids whose [`shard_key`] `k` has the same `k / 16` take 16
/// consecutive buckets (one probe group), and those runs are scattered by a mixed hash of
/// `k / 16` (so strided id patterns do not collide). hashbrown's 7-bit tag (the top bits)
/// mixes the whole id. A scan in id order then touches memory sequentially within a run.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

const TAG_BITS: u64 = 0x7F << 57;

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        // Products mix upwards: fold the high half into the bucket bits.
        self.0 ^= self.0 >> 32;
    }
    fn write_u64(&mut self, id: u64) {
        const C: u64 = 0x9E37_79B9_7F4A_7C15;
        let k = shard_key(id);
        let run = (k >> 4).wrapping_mul(C);
        let run = run ^ (run >> 29);
        let tag = id.wrapping_mul(C) & TAG_BITS;
        self.0 = (((run << 4) | (k & 15)) & !TAG_BITS) | tag;
    }
}

pub(crate) type IdMap<S> = HashMap<u64, S, std::hash::BuildHasherDefault<IdHasher>>;

/// The delta's sparse id -> slot table, split into shards so that installs lock only a small
/// part of it. Only entities written since the base was built have slots.
pub(crate) struct Table<S> {
    shards: Vec<RwLock<IdMap<S>>>,
}

impl<S: Default> Table<S> {
    pub fn new() -> Table<S> {
        Table { shards: (0..SHARDS).map(|_| RwLock::new(IdMap::default())).collect() }
    }

    fn shard(id: u64) -> Option<usize> {
        (id < MAX_ID).then_some(((id >> BLOCK_BITS) % SHARDS) as usize)
    }

    pub fn read<R>(&self, id: u64, f: impl FnOnce(&S) -> R) -> Option<R> {
        let s = Self::shard(id)?;
        let shard = self.shards[s].read();
        shard.get(&id).map(f)
    }

    /// Runs `f` on the slot (`None` if missing; setting it to `None` removes the slot). `None`
    /// if the id is out of range.
    pub fn write<R>(&self, id: u64, f: impl FnOnce(&mut Option<S>) -> R) -> Option<R> {
        let s = Self::shard(id)?;
        let mut shard = self.shards[s].write();
        if let Some(slot) = shard.get_mut(&id) {
            let mut opt = Some(std::mem::take(slot));
            let r = f(&mut opt);
            match opt {
                Some(v) => *slot = v,
                None => {
                    shard.remove(&id);
                }
            }
            Some(r)
        } else {
            let mut opt = None;
            let r = f(&mut opt);
            if let Some(v) = opt {
                shard.insert(id, v);
            }
            Some(r)
        }
    }

    /// Every id that has a slot.
    pub fn ids(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for s in &self.shards {
            out.extend(s.read().keys().copied());
        }
        out.sort_unstable();
        out
    }

    /// Calls `f` on every slot (under each shard's read lock in turn).
    pub fn for_each(&self, mut f: impl FnMut(u64, &S)) {
        for s in &self.shards {
            for (id, slot) in s.read().iter() {
                f(*id, slot);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().len()).sum()
    }

    /// Returns memory of emptied shards to the allocator.
    pub fn shrink(&self) {
        for s in &self.shards {
            let mut m = s.write();
            if m.capacity() > 64 && m.len() < m.capacity() / 4 {
                m.shrink_to_fit();
            }
        }
    }
}

/// Name <-> id maps of one token kind.
#[derive(Default, Clone)]
pub(crate) struct TokenTable {
    pub names: Vec<Arc<str>>,
    pub ids: FxHashMap<Arc<str>, u32>,
}

#[derive(Default, Clone)]
pub(crate) struct Tokens {
    pub t: [TokenTable; 3],
}

/// The global token tables, copy-on-write: tokens are only ever added, so a transaction takes
/// an `Arc` snapshot when it begins and resolves names without touching the shared lock (a read
/// lock per property access made every query thread bounce one cache line). Creating a token
/// copies the tables only while snapshots of the old ones are alive; token creation is rare.
#[derive(Default)]
pub(crate) struct TokenRegistry {
    inner: RwLock<Arc<Tokens>>,
}

/// Write access to the token tables (clones them first if a snapshot still shares them).
pub(crate) struct TokensWrite<'a>(parking_lot::RwLockWriteGuard<'a, Arc<Tokens>>);

impl std::ops::Deref for TokensWrite<'_> {
    type Target = Tokens;
    fn deref(&self) -> &Tokens {
        &self.0
    }
}

impl std::ops::DerefMut for TokensWrite<'_> {
    fn deref_mut(&mut self) -> &mut Tokens {
        Arc::make_mut(&mut self.0)
    }
}

impl TokenRegistry {
    pub fn read(&self) -> parking_lot::RwLockReadGuard<'_, Arc<Tokens>> {
        self.inner.read()
    }
    pub fn write(&self) -> TokensWrite<'_> {
        TokensWrite(self.inner.write())
    }
    /// The current tables, for lock-free lookups of tokens that existed at this moment.
    pub fn snapshot(&self) -> Arc<Tokens> {
        self.inner.read().clone()
    }
}

impl Tokens {
    pub fn get(&self, kind: TokenKind, name: &str) -> Option<u32> {
        self.t[kind.index()].ids.get(name).copied()
    }
    pub fn name(&self, kind: TokenKind, id: u32) -> Option<Arc<str>> {
        self.t[kind.index()].names.get(id as usize).cloned()
    }
    pub fn create(&mut self, kind: TokenKind, name: &str) -> Result<u32> {
        let t = &mut self.t[kind.index()];
        if let Some(id) = t.ids.get(name) {
            return Ok(*id);
        }
        let id = u32::try_from(t.names.len())
            .map_err(|_| Error::new(Status::MemoryExhausted, "too many tokens"))?;
        let name: Arc<str> = Arc::from(name);
        t.names.push(name.clone());
        t.ids.insert(name, id);
        Ok(id)
    }
    /// Registers a token read from disk at its recorded id.
    pub fn ensure(&mut self, kind: TokenKind, id: u32, name: &str) -> Result<()> {
        let t = &self.t[kind.index()];
        match t.names.get(id as usize) {
            Some(n) if &**n == name => Ok(()),
            Some(n) => Err(crate::codec::corrupt(format!("token {id} is both `{n}` and `{name}`"))),
            None if id as usize == t.names.len() && !t.ids.contains_key(name) => {
                self.create(kind, name).map(|_| ())
            }
            None => Err(crate::codec::corrupt(format!("token `{name}` recorded out of order"))),
        }
    }
}

/// "Any label" / "any type" in a relationship count key.
pub(crate) const ANY: u32 = u32::MAX;

/// Node-count changes of one transaction (and, computed at commit, relationship counts).
#[derive(Clone, Debug, Default)]
pub(crate) struct CountDelta {
    pub total: i64,
    pub labels: FxHashMap<u32, i64>,
    /// `(start label, type, end label)` with [`ANY`] for "any"; at most one label is set.
    pub rels: FxHashMap<(u32, u32, u32), i64>,
}

impl CountDelta {
    pub fn label(&mut self, l: u32, d: i64) {
        *self.labels.entry(l).or_insert(0) += d;
    }

    fn rel_key(&mut self, k: (u32, u32, u32), d: i64) {
        *self.rels.entry(k).or_insert(0) += d;
    }

    /// One relationship of type `ty` from a node with labels `start` to one with `end`
    /// appears (`d = 1`) or disappears (`d = -1`) in every count key it matches.
    pub fn rel(&mut self, start: &[u32], ty: u32, end: &[u32], d: i64) {
        for t in [ty, ANY] {
            self.rel_key((ANY, t, ANY), d);
            for l in start {
                self.rel_key((*l, t, ANY), d);
            }
            for l in end {
                self.rel_key((ANY, t, *l), d);
            }
        }
    }
}

/// Count histories `(commit ts, count)`, so counts at any live snapshot are a binary search.
#[derive(Default)]
pub(crate) struct Counts {
    total: Vec<(u64, i64)>,
    labels: HashMap<u32, Vec<(u64, i64)>>,
    rels: HashMap<(u32, u32, u32), Vec<(u64, i64)>>,
}

fn hist_at(h: &[(u64, i64)], ts: u64) -> i64 {
    let p = h.partition_point(|(t, _)| *t <= ts);
    if p == 0 {
        0
    } else {
        h[p - 1].1
    }
}

fn hist_add(h: &mut Vec<(u64, i64)>, ts: u64, d: i64) {
    match h.last_mut() {
        Some(last) if last.0 == ts => last.1 += d,
        last => {
            let cur = last.map_or(0, |x| x.1);
            h.push((ts, cur + d));
        }
    }
}

fn hist_prune(h: &mut Vec<(u64, i64)>, horizon: u64) {
    let p = h.partition_point(|(t, _)| *t <= horizon);
    if p > 1 {
        h.drain(..p - 1);
    }
}

impl Counts {
    pub fn at(&self, label: Option<u32>, ts: u64) -> i64 {
        match label {
            None => hist_at(&self.total, ts),
            Some(l) => self.labels.get(&l).map_or(0, |h| hist_at(h, ts)),
        }
    }
    /// Relationships matching `(start label, type, end label)` ([`ANY`] = any) at `ts`.
    pub fn rels_at(&self, key: (u32, u32, u32), ts: u64) -> i64 {
        self.rels.get(&key).map_or(0, |h| hist_at(h, ts))
    }
    pub fn apply(&mut self, ts: u64, d: &CountDelta) {
        if d.total != 0 {
            hist_add(&mut self.total, ts, d.total);
        }
        for (l, n) in &d.labels {
            if *n != 0 {
                hist_add(self.labels.entry(*l).or_default(), ts, *n);
            }
        }
        for (k, n) in &d.rels {
            if *n != 0 {
                hist_add(self.rels.entry(*k).or_default(), ts, *n);
            }
        }
    }
    fn prune(&mut self, horizon: u64) {
        hist_prune(&mut self.total, horizon);
        for h in self.labels.values_mut().chain(self.rels.values_mut()) {
            hist_prune(h, horizon);
        }
    }
}

/// The commit clock: what new snapshots see, and whether the store can still commit.
///
/// A logged commit becomes visible once it is both durable (the log writer's fsync) and
/// applied (installed in memory by its committer): the committer hands its record to the log
/// writer before installing it, so the fsync runs while it installs, and whichever of the two
/// finishes last publishes. Both watermarks only rise in ts order: records reach the log and
/// installs happen under the commit mutex, in ts order.
pub(crate) struct Clock {
    visible: AtomicU64,
    /// `(durable, applied)` watermarks, guarded with the condition variable.
    lock: Mutex<(u64, u64)>,
    cv: Condvar,
    failed: Mutex<Option<String>>,
}

impl Clock {
    pub fn new(ts: u64) -> Clock {
        Clock {
            visible: AtomicU64::new(ts),
            lock: Mutex::new((ts, ts)),
            cv: Condvar::new(),
            failed: Mutex::new(None),
        }
    }
    /// The log writer made commits up to `ts` durable.
    pub fn durable(&self, ts: u64) {
        let mut g = self.lock.lock();
        g.0 = g.0.max(ts);
        self.visible.fetch_max(g.0.min(g.1), Ordering::AcqRel);
        self.cv.notify_all();
    }
    /// Commits up to `ts` are installed in memory (caller holds the commit mutex).
    pub fn applied(&self, ts: u64) {
        let mut g = self.lock.lock();
        g.1 = g.1.max(ts);
        self.visible.fetch_max(g.0.min(g.1), Ordering::AcqRel);
        self.cv.notify_all();
    }
    pub fn visible(&self) -> u64 {
        self.visible.load(Ordering::Acquire)
    }
    /// Makes commits up to `ts` visible to new snapshots.
    /// (Both durable and applied, e.g. an in-memory commit or recovery.)
    pub fn publish(&self, ts: u64) {
        let mut g = self.lock.lock();
        g.0 = g.0.max(ts);
        g.1 = g.1.max(ts);
        self.visible.fetch_max(ts, Ordering::AcqRel);
        self.cv.notify_all();
    }
    pub fn wait_for(&self, ts: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut g = self.lock.lock();
        while self.visible() < ts {
            if self.cv.wait_until(&mut g, deadline).timed_out() {
                return self.visible() >= ts;
            }
        }
        true
    }
    /// Marks the store as unable to commit (a failed write or fsync).
    pub fn fail(&self, msg: String) {
        let mut f = self.failed.lock();
        if f.is_none() {
            tracing::error!("storage failed, refusing further commits: {msg}");
            *f = Some(msg);
        }
    }
    pub fn check(&self) -> Result<()> {
        match &*self.failed.lock() {
            None => Ok(()),
            Some(m) => Err(Error::new(
                Status::Io,
                format!("the store cannot commit after an I/O failure: {m}"),
            )),
        }
    }
}

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
    pub wal: Option<crossbeam_channel::Sender<crate::wal::WalMsg>>,
    pub closed: bool,
    pub gc_queue: VecDeque<Dirty>,
    /// Versions installed since the current base was built (drives compaction).
    pub delta_versions: u64,
    /// The commit ts of the latest schema change. The schema is not versioned: a change is in
    /// `Core::schema` from the moment its ts is assigned, so a checkpoint of an older snapshot
    /// must not copy it (see `checkpoint_with`).
    pub last_schema_ts: u64,
}

/// Live transactions: their snapshot timestamps and the timestamps of the bases they read,
/// each with multiplicity.
#[derive(Default)]
pub(crate) struct Active {
    snaps: BTreeMap<u64, usize>,
    bases: BTreeMap<u64, usize>,
}

fn count_in(m: &mut BTreeMap<u64, usize>, k: u64) {
    *m.entry(k).or_insert(0) += 1;
}

fn count_out(m: &mut BTreeMap<u64, usize>, k: u64) {
    if let Some(n) = m.get_mut(&k) {
        *n -= 1;
        if *n == 0 {
            m.remove(&k);
        }
    }
}

/// Everything shared by the store handle, its transactions and its background threads.
pub(crate) struct Core {
    pub tokens: TokenRegistry,
    /// The compact committed state at some ts; swapped (under the commit mutex and the active
    /// lock) when a checkpoint or compaction builds a newer one.
    pub base: RwLock<Arc<Base>>,
    pub nodes: Table<NodeSlot>,
    pub rels: Table<RelSlot>,
    pub label_sets: RwLock<HashMap<u32, IdSet>>,
    pub type_sets: RwLock<HashMap<u32, IdSet>>,
    pub counts: RwLock<Counts>,
    pub schema: RwLock<Schema>,
    pub next_node: AtomicU64,
    pub next_rel: AtomicU64,
    pub clock: Arc<Clock>,
    /// Live transactions, for the GC horizons.
    pub active: Mutex<Active>,
    /// Serializes base rebuilds.
    pub rebuild: Mutex<()>,
    pub commit: Mutex<CommitState>,
    pub persist: Option<crate::store::Persist>,
}

impl Core {
    pub fn new(persist: Option<crate::store::Persist>) -> Core {
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
                wal: None,
                closed: false,
                gc_queue: VecDeque::new(),
                delta_versions: 0,
                last_schema_ts: 0,
            }),
            persist,
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

    /// Installs one commit's versions at `ts`. `nodes` and `rels` hold the final state of each
    /// written entity (`None` = deleted). Caller holds the commit mutex.
    pub fn apply(
        &self,
        cs: &mut CommitState,
        ts: u64,
        nodes: &[(u64, Option<Arc<NodeData>>)],
        rels: &[(u64, Option<Arc<RelData>>)],
    ) {
        let base = self.base();
        let mut delta = CountDelta::default();
        self.rel_count_delta(&base, nodes, rels, &mut delta);
        let mut label_adds: Vec<(u32, u64)> = Vec::new();
        let mut type_adds: Vec<(u32, u64)> = Vec::new();
        // Ids GC has to visit for this commit. A chain holding just this commit's version of
        // an existing entity (a created node, the first write of a base row since the last
        // fold) has nothing to prune until a later write or the next fold, and both queue the
        // id again; leaving them out saves a locked table lookup per node of a bulk load.
        let mut gc_nodes: Vec<u64> = Vec::with_capacity(nodes.len());
        let mut gc_rels: Vec<u64> = Vec::with_capacity(rels.len());
        let mut schema = self.schema.write();
        let pairs = schema.pairs();
        let mut put_node = |id: u64, data: &Option<Arc<NodeData>>, schema: &mut Schema| {
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
            delta.total += i64::from(data.is_some()) - i64::from(p.is_some());
            for l in &n.labels {
                if !p_ref.has_label(*l) {
                    delta.label(*l, 1);
                    label_adds.push((*l, id));
                }
            }
            for l in p_ref.labels() {
                if !n.has_label(*l) {
                    delta.label(*l, -1);
                }
            }
            for t in &pairs {
                if let Some(key) = n.key_for(t.0, &t.1) {
                    if p_ref.key_for(t.0, &t.1).as_ref() != Some(&key) {
                        schema.insert_entry(t, key, id);
                    }
                }
            }
            if !lone {
                gc_nodes.push(id);
            }
        };
        for (id, data) in nodes.iter().filter(|(_, d)| d.is_some()) {
            put_node(*id, data, &mut schema);
        }
        let rel_targets: Vec<Target> = schema.rel_maps.keys().cloned().collect();
        for (id, data) in rels {
            base.mark_rel(*id);
            let (chain_was_empty, prev) = self
                .rels
                .write(*id, |slot| {
                    let slot = slot.get_or_insert_with(RelSlot::default);
                    let new = slot.chain.is_empty();
                    let prev = slot.chain.last().and_then(|(_, d)| d.clone());
                    if new && slot.chain.capacity() == 0 {
                        slot.chain.reserve_exact(1);
                    }
                    slot.chain.push((ts, data.clone()));
                    (new, prev)
                })
                .unwrap_or((false, None));
            if !(chain_was_empty && data.is_some()) {
                gc_rels.push(*id);
            }
            let is_new = chain_was_empty && !base.has_rel(*id);
            if let (false, Some(r)) = (rel_targets.is_empty(), data) {
                // The previous state: the newest delta version, else the base row.
                let prev = prev.or_else(|| base.rel(*id).map(|b| Arc::new(b.to_data())));
                for t in &rel_targets {
                    if let Some(k) = r.key_for(t.0, &t.1) {
                        if prev.as_ref().and_then(|p| p.key_for(t.0, &t.1)).as_ref() != Some(&k) {
                            schema.rel_entry(t, k, *id, true);
                        }
                    }
                }
            }
            if let (true, Some(r)) = (is_new, data) {
                base.mark_node(r.start);
                base.mark_node(r.end);
                self.nodes.write(r.start, |s| {
                    s.get_or_insert_with(NodeSlot::default).out.push(Adj {
                        rel: *id,
                        other: r.end,
                        ty: r.ty,
                        ts,
                    })
                });
                self.nodes.write(r.end, |s| {
                    s.get_or_insert_with(NodeSlot::default).inc.push(Adj {
                        rel: *id,
                        other: r.start,
                        ty: r.ty,
                        ts,
                    })
                });
                type_adds.push((r.ty, *id));
            }
        }
        for (id, data) in nodes.iter().filter(|(_, d)| d.is_none()) {
            put_node(*id, data, &mut schema);
        }
        drop(schema);
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

    /// Relationship-count changes of a commit, from the newest committed state before it
    /// (caller holds the commit mutex, before installing): created relationships count with
    /// their endpoints' new labels, deleted ones with the old, and relationships that stay
    /// move between label keys when an endpoint gains or loses labels.
    fn rel_count_delta(
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
            base.edges(*id, true, true, |r, _, ty, out| {
                if seen.insert(r.wrapping_mul(2) + u64::from(out)) {
                    edges.push((r, ty, out));
                }
            });
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
    fn rel_newest(&self, id: u64) -> Option<(u64, u64, u32)> {
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
        for id in 0..base.rel_end {
            if let Some(r) = base.rel(id) {
                let k = (base.node_label_code(r.start()), r.ty(), base.node_label_code(r.end()));
                *by_sets.entry(k).or_insert(0) += 1;
            }
        }
        let mut d = CountDelta::default();
        for ((s, ty, e), n) in by_sets {
            d.rel(base.label_set(s), ty, base.label_set(e), n);
        }
        d
    }

    /// Prunes versions no live snapshot can see, folds versions every live base already holds,
    /// and drops the secondary entries only they justified. Caller holds the commit mutex.
    pub fn gc(&self, cs: &mut CommitState) {
        while self.gc_some(cs, usize::MAX) {}
    }

    /// One step of [`Core::gc`]: collects at most about `budget` queued ids (a queue entry
    /// larger than what is left of the budget is split, its rest stays queued). Returns whether
    /// eligible work is left. The background thread calls this with a bounded budget and
    /// releases the commit mutex between steps: a fold queues the whole delta at once
    /// (hundreds of thousands of ids during a bulk load), and collecting it in one go held the
    /// mutex, and so every commit, for that long.
    pub fn gc_some(&self, cs: &mut CommitState, budget: usize) -> bool {
        let (horizon, base_h) = self.horizons();
        let cur = self.base();
        let mut nodes = Vec::new();
        let mut rels = Vec::new();
        let mut folded = false;
        let eligible = |d: &Dirty| d.ts <= horizon && d.gate <= base_h;
        while cs.gc_queue.front().is_some_and(eligible) {
            let room = budget.saturating_sub(nodes.len() + rels.len());
            let Some(d) = cs.gc_queue.front_mut() else { break };
            if room == 0 {
                break;
            }
            if d.nodes.len() + d.rels.len() > room {
                // Ids of one entry are independent of each other: collecting part of them now
                // and the rest later (with horizons at least as new) is what a later GC would
                // have done. The entry's fold bookkeeping waits for its last part.
                let k = room.min(d.nodes.len());
                nodes.extend(d.nodes.drain(d.nodes.len() - k..));
                let r = (room - k).min(d.rels.len());
                rels.extend(d.rels.drain(d.rels.len() - r..));
                break;
            }
            if let Some(d) = cs.gc_queue.pop_front() {
                folded |= d.gate != 0 && d.gate >= cur.ts;
                nodes.extend(d.nodes);
                rels.extend(d.rels);
            }
        }
        let more = cs.gc_queue.front().is_some_and(eligible);
        if nodes.is_empty() && rels.is_empty() && !folded {
            // Commits that only create queue nothing (see `apply`); their count histories
            // still shrink here.
            self.counts.write().prune(horizon);
            return more;
        }
        nodes.sort_unstable();
        nodes.dedup();
        rels.sort_unstable();
        rels.dedup();
        let all_on_cur = base_h >= cur.ts;
        for id in rels {
            self.gc_rel(id, horizon, base_h, all_on_cur && !cur.has_rel(id), all_on_cur, &cur);
        }
        let pairs = self.schema.read().pairs();
        // Index entries of versions that only the base now holds may go if every live base
        // indexes the pair (otherwise the delta index is the only index of those rows).
        let base_indexed: Vec<Target> =
            pairs.iter().filter(|t| all_on_cur && cur.indexes(t)).cloned().collect();
        let mut label_drops: Vec<(u32, u64)> = Vec::new();
        for id in nodes {
            let absent = all_on_cur && !cur.has_node(id);
            self.gc_node(id, horizon, base_h, absent, &pairs, &base_indexed, &mut label_drops);
        }
        if !label_drops.is_empty() {
            // One write lock for the whole step, not one per node.
            let mut ls = self.label_sets.write();
            for (l, id) in label_drops {
                if let Some(set) = ls.get_mut(&l) {
                    set.remove(id);
                }
            }
        }
        self.counts.write().prune(horizon);
        if folded && all_on_cur {
            self.purge_secondary(&cur, &pairs);
        }
        more
    }

    /// After a fold: the delta's label, type and index sets keep only entities that still have
    /// delta slots (the base answers for the rest).
    fn purge_secondary(&self, cur: &Base, pairs: &[Target]) {
        let has_node = |id: &u64| self.nodes.read(*id, |_| ()).is_some();
        let has_rel = |id: &u64| self.rels.read(*id, |_| ()).is_some();
        {
            let mut ls = self.label_sets.write();
            for set in ls.values_mut() {
                set.retain(|id| has_node(&id));
            }
            ls.retain(|_, s| !s.is_empty());
        }
        {
            let mut ts = self.type_sets.write();
            for set in ts.values_mut() {
                set.retain(|id| has_rel(&id));
            }
            ts.retain(|_, s| !s.is_empty());
        }
        {
            let mut schema = self.schema.write();
            for t in pairs {
                if !cur.indexes(t) {
                    continue;
                }
                if let Some(m) = schema.maps.get_mut(t) {
                    m.retain(|_, set| {
                        set.retain(has_node);
                        !set.is_empty()
                    });
                }
            }
        }
        self.nodes.shrink();
        self.rels.shrink();
    }

    fn gc_rel(
        &self,
        id: u64,
        horizon: u64,
        base_h: u64,
        absent: bool,
        all_on_cur: bool,
        cur: &Base,
    ) {
        let removed = self
            .rels
            .write(id, |slot| {
                let Some(s) = slot.as_mut() else { return (Vec::new(), false, Vec::new()) };
                let removed = prune_chain(&mut s.chain, horizon, base_h, absent);
                let remaining: Vec<Arc<RelData>> =
                    s.chain.iter().filter_map(|(_, d)| d.clone()).collect();
                let gone = s.chain.is_empty();
                if gone {
                    *slot = None;
                }
                (removed, gone, remaining)
            })
            .unwrap_or_default();
        let (removed, gone, remaining) = removed;
        // Relationship index entries only dropped versions needed: readers (all on the
        // current base) see a remaining version or the current base row.
        if all_on_cur && !removed.is_empty() && !self.schema.read().rel_maps.is_empty() {
            let base_row = cur.rel(id).map(|b| b.to_data());
            let mut schema = self.schema.write();
            let targets: Vec<Target> = schema.rel_maps.keys().cloned().collect();
            for t in &targets {
                let keep = |k: &IndexKey| {
                    remaining.iter().any(|r| r.key_for(t.0, &t.1).as_ref() == Some(k))
                        || base_row.as_ref().and_then(|b| b.key_for(t.0, &t.1)).as_ref() == Some(k)
                };
                for d in removed.iter().flatten() {
                    if let Some(k) = d.key_for(t.0, &t.1) {
                        if !keep(&k) {
                            schema.rel_entry(t, k, id, false);
                        }
                    }
                }
            }
        }
        if !gone {
            return;
        }
        let Some(r) = removed.iter().flatten().next() else { return };
        let mut ts = self.type_sets.write();
        if let Some(set) = ts.get_mut(&r.ty) {
            set.remove(id);
        }
        drop(ts);
        if !absent {
            // Folded into every live base: its delta adjacency entries are at most `base_h`
            // old and `gc_node` drops them in one pass per node (detaching them one by one
            // here would be quadratic in the degree).
            return;
        }
        // Deleted and in no live base: drop its delta adjacency entries; a node slot left with
        // nothing at all goes too.
        let detach = |slot: &mut Option<NodeSlot>, out: bool| {
            if let Some(s) = slot.as_mut() {
                if out {
                    s.out.retain(|a| a.rel != id);
                } else {
                    s.inc.retain(|a| a.rel != id);
                }
                if s.chain.is_empty() && s.out.is_empty() && s.inc.is_empty() {
                    *slot = None;
                }
            }
        };
        self.nodes.write(r.start, |s| detach(s, true));
        self.nodes.write(r.end, |s| detach(s, false));
    }

    /// Prunes one node's chain and adjacency; label-set entries only the dropped versions
    /// needed are appended to `label_drops` (removed by the caller under one lock).
    #[allow(clippy::too_many_arguments)]
    fn gc_node(
        &self,
        id: u64,
        horizon: u64,
        base_h: u64,
        absent: bool,
        pairs: &[Target],
        base_indexed: &[Target],
        label_drops: &mut Vec<(u32, u64)>,
    ) {
        let Some((removed, remaining)) = self.nodes.write(id, |slot| {
            let Some(s) = slot.as_mut() else { return (Vec::new(), Vec::new()) };
            let removed = prune_chain(&mut s.chain, horizon, base_h, absent);
            // What is left only matters when something was dropped (most calls drop nothing,
            // or drop the one version of a node the base now holds, leaving nothing).
            let remaining: Vec<Arc<NodeData>> = if removed.iter().any(Option::is_some) {
                s.chain.iter().filter_map(|(_, d)| d.clone()).collect()
            } else {
                Vec::new()
            };
            // Relationships created at or before the base horizon are in every live base CSR.
            s.out.retain(|a| a.ts > base_h);
            s.inc.retain(|a| a.ts > base_h);
            if s.chain.is_empty() && s.out.is_empty() && s.inc.is_empty() {
                *slot = None;
            } else if s.out.capacity() > 2 * s.out.len() + 4
                || s.inc.capacity() > 2 * s.inc.len() + 4
            {
                s.out.shrink_to_fit();
                s.inc.shrink_to_fit();
            }
            (removed, remaining)
        }) else {
            return;
        };
        // Read in place (no second vector per collected node: a fold collects every node it
        // folded, hundreds of thousands during a bulk load).
        if removed.iter().all(Option::is_none) {
            return;
        }
        let removed = removed.iter().flatten();
        // Label sets: base rows are found through the base's label bitsets, so an entry only
        // a dropped version needed can always go. (A node has few labels and versions: plain
        // scans, no hash sets.)
        let first = label_drops.len();
        for d in removed.clone() {
            for l in &d.labels {
                let kept = remaining.iter().any(|r| r.labels.contains(l));
                if !kept && !label_drops[first..].iter().any(|(x, _)| x == l) {
                    label_drops.push((*l, id));
                }
            }
        }
        // Index entries: a reader that finds no delta version at its snapshot falls back to a
        // base, whose row is the newest dropped version; that may only be relied on when every
        // live base indexes the target (otherwise the entries stay, as a re-checked superset,
        // until a base indexes it).
        let mut stale: Vec<(Target, IndexKey)> = Vec::new();
        for t in pairs {
            if !absent && !base_indexed.contains(t) {
                continue;
            }
            for d in removed.clone() {
                if let Some(key) = d.key_for(t.0, &t.1) {
                    if !remaining.iter().any(|r| r.key_for(t.0, &t.1).as_ref() == Some(&key)) {
                        stale.push((t.clone(), key));
                    }
                }
            }
        }
        if !stale.is_empty() {
            let mut schema = self.schema.write();
            for (t, key) in stale {
                schema.remove_entry(&t, &key, id);
            }
        }
    }
}

/// Drops the versions no live reader needs and returns their data:
/// * versions at or below `base_h`: every live base already holds them (a reader that finds no
///   delta version at its snapshot reads its base, which then has the same state);
/// * versions older than the one visible at `horizon`;
/// * that one too if it is a deletion of an entity no live base has (`absent`).
fn prune_chain<T>(
    chain: &mut Chain<T>,
    horizon: u64,
    base_h: u64,
    absent: bool,
) -> Vec<Option<Arc<T>>> {
    let covered = chain.partition_point(|(t, _)| *t <= base_h);
    let mut removed: Vec<Option<Arc<T>>> = chain.drain(..covered).map(|(_, d)| d).collect();
    let p = chain.partition_point(|(t, _)| *t <= horizon);
    if p > 0 {
        let cut = if chain[p - 1].1.is_none() && absent { p } else { p - 1 };
        removed.extend(chain.drain(..cut).map(|(_, d)| d));
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_hash_keeps_runs_of_a_shard_together_and_spreads_the_rest() {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let h = |id: u64| BuildHasherDefault::<IdHasher>::default().hash_one(id);
        let low = |x: u64| x & ((1 << 40) - 1);
        // 16 consecutive ids of one block: consecutive buckets.
        for id in 33..48u64 {
            assert_eq!(low(h(id)), low(h(id - 1)) + 1);
        }
        // The last id of a shard's block and the first of its next block are neighbours too.
        let next_block = SHARDS << BLOCK_BITS;
        assert_eq!(shard_key(next_block), shard_key(next_block - (SHARDS - 1) * 1024 - 1) + 1);
        assert_eq!(Table::<NodeSlot>::shard(5), Table::<NodeSlot>::shard(1023));
        assert_ne!(Table::<NodeSlot>::shard(1023), Table::<NodeSlot>::shard(1024));
        assert_eq!(Table::<NodeSlot>::shard(0), Table::<NodeSlot>::shard(next_block));
        // Runs of one shard land far apart, and tags differ between neighbours.
        let of_shard_0 = |k: u64| ((k >> BLOCK_BITS) << (BLOCK_BITS + 6)) | (k & 1023);
        assert_eq!(shard_key(of_shard_0(5000)), 5000);
        let runs: HashSet<u64> = (0..1000u64).map(|r| low(h(of_shard_0(r * 16))) >> 4).collect();
        assert!(runs.len() > 990, "runs collide: {}", runs.len());
        let tags: HashSet<u64> = (0..64u64).map(|k| h(k) >> 57).collect();
        assert!(tags.len() > 20, "tags barely vary: {}", tags.len());
    }

    /// A logged commit is visible only once both durable and applied, in either order.
    #[test]
    fn clock_publishes_when_durable_and_applied() {
        let c = Clock::new(3);
        c.durable(4);
        assert_eq!(c.visible(), 3, "durable but not installed");
        c.applied(4);
        assert_eq!(c.visible(), 4);
        c.applied(5);
        assert_eq!(c.visible(), 4, "installed but not durable");
        c.applied(6);
        c.durable(5);
        assert_eq!(c.visible(), 5);
        c.durable(6);
        assert_eq!(c.visible(), 6);
        c.publish(8);
        assert_eq!(c.visible(), 8);
        c.durable(9);
        assert_eq!(c.visible(), 8);
        c.applied(9);
        assert_eq!(c.visible(), 9);
        assert!(c.wait_for(9, Duration::from_millis(1)));
    }

    #[test]
    fn chain_visibility_and_prune() {
        let d =
            |n: u32| Some(Arc::new(NodeData { labels: Labels::from_slice(&[n]), props: vec![] }));
        let mut c: Chain<NodeData> = vec![(1, d(1)), (3, d(3)), (5, None)];
        assert!(visible_at(&c, 0).is_none());
        assert_eq!(visible_at(&c, 2).map(|x| x.labels[0]), Some(1));
        assert_eq!(visible_at(&c, 4).map(|x| x.labels[0]), Some(3));
        assert!(visible_at(&c, 9).is_none());
        assert_eq!(prune_chain(&mut c, 3, 0, true).len(), 1);
        assert_eq!(c.len(), 2);
        // A deletion of something a live base still has must stay (it hides the base row)...
        assert_eq!(prune_chain(&mut c, 5, 0, false).len(), 1);
        assert_eq!(c.len(), 1);
        // ...until every live base is newer than it.
        assert_eq!(prune_chain(&mut c, 5, 5, false).len(), 1);
        assert!(c.is_empty());
        let mut c: Chain<NodeData> = vec![(1, d(1)), (3, d(3)), (5, d(5))];
        assert_eq!(chain_at(&c, 0).map(|x| x.is_some()), None);
        assert_eq!(chain_at(&c, 4).flatten().map(|x| x.labels[0]), Some(3));
        // Versions every live base holds go even if a snapshot could see them: it reads the base.
        assert_eq!(prune_chain(&mut c, 2, 3, false).len(), 2);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn count_histories() {
        let mut h = Vec::new();
        hist_add(&mut h, 2, 3);
        hist_add(&mut h, 2, 1);
        hist_add(&mut h, 5, -1);
        assert_eq!(hist_at(&h, 1), 0);
        assert_eq!(hist_at(&h, 2), 4);
        assert_eq!(hist_at(&h, 9), 3);
        hist_prune(&mut h, 9);
        assert_eq!(h, vec![(5, 3)]);
    }

    #[test]
    fn tokens_replay_in_order_only() {
        let mut t = Tokens::default();
        assert_eq!(t.create(TokenKind::Label, "A").unwrap(), 0);
        assert!(t.ensure(TokenKind::Label, 0, "A").is_ok());
        assert!(t.ensure(TokenKind::Label, 0, "B").is_err());
        assert!(t.ensure(TokenKind::Label, 5, "C").is_err());
        assert!(t.ensure(TokenKind::Label, 1, "C").is_ok());
        assert_eq!(t.get(TokenKind::Label, "C"), Some(1));
    }
}
