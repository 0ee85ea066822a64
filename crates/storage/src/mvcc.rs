//! The shared multi-version state: sharded node and relationship tables with version chains,
//! adjacency, tokens, label/type id sets, count histories, and the install (apply) and garbage
//! collection routines that mutate them.
//!
//! **Invariant:** every mutation of shared state (install, GC, schema change) happens while the
//! caller holds the commit mutex (`Core::commit`), so mutators never race each other; readers take
//! one short lock at a time and never nest locks.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status, Value};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::codec::MAX_ID;
use crate::schema::Schema;
use crate::value::{index_key, IndexKey};
use crate::TokenKind;

/// A node's labels (sorted, unique) and properties (sorted by key, no nulls).
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeData {
    pub labels: Vec<u32>,
    pub props: Vec<(u32, Value)>,
}

/// A relationship; `start`, `end` and `ty` never change after creation.
#[derive(Clone, Debug)]
pub(crate) struct RelData {
    pub start: u64,
    pub end: u64,
    pub ty: u32,
    pub props: Vec<(u32, Value)>,
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
    /// The index key of property `key` if the node has label `label`.
    pub fn key_for(&self, label: u32, key: u32) -> Option<IndexKey> {
        if !self.has_label(label) {
            return None;
        }
        self.prop(key).and_then(index_key)
    }
}

/// Versions oldest first; `None` data is a deletion.
pub(crate) type Chain<T> = Vec<(u64, Option<Arc<T>>)>;

/// The version visible at snapshot `ts`.
pub(crate) fn visible_at<T>(chain: &Chain<T>, ts: u64) -> Option<&Arc<T>> {
    chain.iter().rev().find(|(t, _)| *t <= ts).and_then(|(_, d)| d.as_ref())
}

/// One adjacency entry; visibility is decided by the relationship's chain.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Adj {
    pub rel: u64,
    pub other: u64,
    pub ty: u32,
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

/// A dense-id table split into shards so that installs lock only a small part of it.
pub(crate) struct Table<S> {
    shards: Vec<RwLock<Vec<Option<S>>>>,
}

impl<S> Table<S> {
    pub fn new() -> Table<S> {
        Table { shards: (0..SHARDS).map(|_| RwLock::new(Vec::new())).collect() }
    }

    fn loc(id: u64) -> Option<(usize, usize)> {
        (id < MAX_ID).then_some(((id % SHARDS) as usize, (id / SHARDS) as usize))
    }

    pub fn read<R>(&self, id: u64, f: impl FnOnce(&S) -> R) -> Option<R> {
        let (s, i) = Self::loc(id)?;
        let shard = self.shards[s].read();
        shard.get(i).and_then(Option::as_ref).map(f)
    }

    /// Runs `f` on the slot (created empty if missing). `None` if the id is out of range.
    pub fn write<R>(&self, id: u64, f: impl FnOnce(&mut Option<S>) -> R) -> Option<R> {
        let (s, i) = Self::loc(id)?;
        let mut shard = self.shards[s].write();
        if shard.len() <= i {
            shard.resize_with(i + 1, || None);
        }
        Some(f(&mut shard[i]))
    }
}

/// Name <-> id maps of one token kind.
#[derive(Default)]
pub(crate) struct TokenTable {
    pub names: Vec<Arc<str>>,
    pub ids: HashMap<Arc<str>, u32>,
}

#[derive(Default)]
pub(crate) struct Tokens {
    pub t: [TokenTable; 3],
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

/// Node-count changes of one transaction.
#[derive(Clone, Debug, Default)]
pub(crate) struct CountDelta {
    pub total: i64,
    pub labels: HashMap<u32, i64>,
}

impl CountDelta {
    pub fn label(&mut self, l: u32, d: i64) {
        *self.labels.entry(l).or_insert(0) += d;
    }
}

/// Count histories `(commit ts, count)`, so counts at any live snapshot are a binary search.
#[derive(Default)]
pub(crate) struct Counts {
    total: Vec<(u64, i64)>,
    labels: HashMap<u32, Vec<(u64, i64)>>,
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
    fn apply(&mut self, ts: u64, d: &CountDelta) {
        if d.total != 0 {
            hist_add(&mut self.total, ts, d.total);
        }
        for (l, n) in &d.labels {
            if *n != 0 {
                hist_add(self.labels.entry(*l).or_default(), ts, *n);
            }
        }
    }
    fn prune(&mut self, horizon: u64) {
        hist_prune(&mut self.total, horizon);
        for h in self.labels.values_mut() {
            hist_prune(h, horizon);
        }
    }
}

/// The commit clock: what new snapshots see, and whether the store can still commit.
pub(crate) struct Clock {
    visible: AtomicU64,
    lock: Mutex<()>,
    cv: Condvar,
    failed: Mutex<Option<String>>,
}

impl Clock {
    pub fn new(ts: u64) -> Clock {
        Clock {
            visible: AtomicU64::new(ts),
            lock: Mutex::new(()),
            cv: Condvar::new(),
            failed: Mutex::new(None),
        }
    }
    pub fn visible(&self) -> u64 {
        self.visible.load(Ordering::Acquire)
    }
    /// Makes commits up to `ts` visible to new snapshots.
    pub fn publish(&self, ts: u64) {
        let _g = self.lock.lock();
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
}

/// Everything shared by the store handle, its transactions and its background threads.
pub(crate) struct Core {
    pub tokens: RwLock<Tokens>,
    pub nodes: Table<NodeSlot>,
    pub rels: Table<RelSlot>,
    pub label_sets: RwLock<HashMap<u32, BTreeSet<u64>>>,
    pub type_sets: RwLock<HashMap<u32, BTreeSet<u64>>>,
    pub counts: RwLock<Counts>,
    pub schema: RwLock<Schema>,
    pub next_node: AtomicU64,
    pub next_rel: AtomicU64,
    pub clock: Arc<Clock>,
    /// Start timestamps of live transactions (with multiplicity), for the GC horizon.
    pub active: Mutex<BTreeMap<u64, usize>>,
    pub commit: Mutex<CommitState>,
    pub persist: Option<crate::store::Persist>,
}

impl Core {
    pub fn new(persist: Option<crate::store::Persist>) -> Core {
        Core {
            tokens: RwLock::new(Tokens::default()),
            nodes: Table::new(),
            rels: Table::new(),
            label_sets: RwLock::new(HashMap::new()),
            type_sets: RwLock::new(HashMap::new()),
            counts: RwLock::new(Counts::default()),
            schema: RwLock::new(Schema::default()),
            next_node: AtomicU64::new(0),
            next_rel: AtomicU64::new(0),
            clock: Arc::new(Clock::new(0)),
            active: Mutex::new(BTreeMap::new()),
            commit: Mutex::new(CommitState {
                next_ts: 1,
                tokens_logged: [0; 3],
                wal: None,
                closed: false,
                gc_queue: VecDeque::new(),
            }),
            persist,
        }
    }

    pub fn node_at(&self, id: u64, ts: u64) -> Option<Arc<NodeData>> {
        self.nodes.read(id, |s| visible_at(&s.chain, ts).cloned()).flatten()
    }

    pub fn rel_at(&self, id: u64, ts: u64) -> Option<Arc<RelData>> {
        self.rels.read(id, |s| visible_at(&s.chain, ts).cloned()).flatten()
    }

    /// The newest version (committed, possibly not yet visible): `(ts, data)`.
    pub fn node_newest(&self, id: u64) -> (u64, Option<Arc<NodeData>>) {
        self.nodes.read(id, |s| s.chain.last().cloned()).flatten().unwrap_or((0, None))
    }

    pub fn rel_newest(&self, id: u64) -> (u64, Option<Arc<RelData>>) {
        self.rels.read(id, |s| s.chain.last().cloned()).flatten().unwrap_or((0, None))
    }

    pub fn register(&self) -> u64 {
        let mut a = self.active.lock();
        let ts = self.clock.visible();
        *a.entry(ts).or_insert(0) += 1;
        ts
    }

    pub fn unregister(&self, ts: u64) {
        let mut a = self.active.lock();
        if let Some(n) = a.get_mut(&ts) {
            *n -= 1;
            if *n == 0 {
                a.remove(&ts);
            }
        }
    }

    /// No live snapshot is older than this.
    pub fn horizon(&self) -> u64 {
        let a = self.active.lock();
        let v = self.clock.visible();
        a.keys().next().map_or(v, |m| (*m).min(v))
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
        let mut delta = CountDelta::default();
        let mut label_adds: Vec<(u32, u64)> = Vec::new();
        let mut type_adds: Vec<(u32, u64)> = Vec::new();
        let mut schema = self.schema.write();
        let pairs = schema.pairs();
        let mut put_node = |id: u64, data: &Option<Arc<NodeData>>, schema: &mut Schema| {
            let prev = self
                .nodes
                .write(id, |slot| {
                    let slot = slot.get_or_insert_with(NodeSlot::default);
                    let prev = slot.chain.last().and_then(|(_, d)| d.clone());
                    slot.chain.push((ts, data.clone()));
                    prev
                })
                .flatten();
            let empty = NodeData::default();
            let p = prev.as_deref().unwrap_or(&empty);
            let n = data.as_deref().unwrap_or(&empty);
            delta.total += i64::from(data.is_some()) - i64::from(prev.is_some());
            for l in &n.labels {
                if !p.has_label(*l) {
                    delta.label(*l, 1);
                    label_adds.push((*l, id));
                }
            }
            for l in &p.labels {
                if !n.has_label(*l) {
                    delta.label(*l, -1);
                }
            }
            for (l, k) in &pairs {
                if let Some(key) = n.key_for(*l, *k) {
                    if p.key_for(*l, *k).as_ref() != Some(&key) {
                        schema.insert_entry(*l, *k, key, id);
                    }
                }
            }
        };
        for (id, data) in nodes.iter().filter(|(_, d)| d.is_some()) {
            put_node(*id, data, &mut schema);
        }
        for (id, data) in rels {
            let is_new = self
                .rels
                .write(*id, |slot| {
                    let slot = slot.get_or_insert_with(RelSlot::default);
                    let new = slot.chain.is_empty();
                    slot.chain.push((ts, data.clone()));
                    new
                })
                .unwrap_or(false);
            if let (true, Some(r)) = (is_new, data) {
                self.nodes.write(r.start, |s| {
                    s.get_or_insert_with(NodeSlot::default).out.push(Adj {
                        rel: *id,
                        other: r.end,
                        ty: r.ty,
                    })
                });
                self.nodes.write(r.end, |s| {
                    s.get_or_insert_with(NodeSlot::default).inc.push(Adj {
                        rel: *id,
                        other: r.start,
                        ty: r.ty,
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
            for (l, id) in label_adds {
                ls.entry(l).or_default().insert(id);
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
        cs.gc_queue.push_back(Dirty {
            ts,
            nodes: nodes.iter().map(|(id, _)| *id).collect(),
            rels: rels.iter().map(|(id, _)| *id).collect(),
        });
    }

    /// Prunes versions no live snapshot can see, and the secondary entries only they justified.
    /// Caller holds the commit mutex.
    pub fn gc(&self, cs: &mut CommitState) {
        let horizon = self.horizon();
        let mut nodes = Vec::new();
        let mut rels = Vec::new();
        while cs.gc_queue.front().is_some_and(|d| d.ts <= horizon) {
            if let Some(d) = cs.gc_queue.pop_front() {
                nodes.extend(d.nodes);
                rels.extend(d.rels);
            }
        }
        if nodes.is_empty() && rels.is_empty() {
            return;
        }
        nodes.sort_unstable();
        nodes.dedup();
        rels.sort_unstable();
        rels.dedup();
        for id in rels {
            self.gc_rel(id, horizon);
        }
        let pairs = self.schema.read().pairs();
        for id in nodes {
            self.gc_node(id, horizon, &pairs);
        }
        self.counts.write().prune(horizon);
    }

    fn gc_rel(&self, id: u64, horizon: u64) {
        let removed = self
            .rels
            .write(id, |slot| {
                let Some(s) = slot.as_mut() else { return (Vec::new(), false) };
                let removed = prune_chain(&mut s.chain, horizon);
                let gone = s.chain.is_empty();
                if gone {
                    *slot = None;
                }
                (removed, gone)
            })
            .unwrap_or_default();
        let (removed, gone) = removed;
        if !gone {
            return;
        }
        let Some(r) = removed.iter().flatten().next() else { return };
        // Drop the adjacency entries; a node slot left with nothing at all goes too.
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
        let mut ts = self.type_sets.write();
        if let Some(set) = ts.get_mut(&r.ty) {
            set.remove(&id);
        }
    }

    fn gc_node(&self, id: u64, horizon: u64, pairs: &[(u32, u32)]) {
        let Some((removed, remaining)) = self.nodes.write(id, |slot| {
            let Some(s) = slot.as_mut() else { return (Vec::new(), Vec::new()) };
            let removed = prune_chain(&mut s.chain, horizon);
            let remaining: Vec<Arc<NodeData>> =
                s.chain.iter().filter_map(|(_, d)| d.clone()).collect();
            if s.chain.is_empty() && s.out.is_empty() && s.inc.is_empty() {
                *slot = None;
            }
            (removed, remaining)
        }) else {
            return;
        };
        let removed: Vec<Arc<NodeData>> = removed.into_iter().flatten().collect();
        if removed.is_empty() {
            return;
        }
        let keep_labels: HashSet<u32> =
            remaining.iter().flat_map(|d| d.labels.iter().copied()).collect();
        let drop_labels: HashSet<u32> = removed
            .iter()
            .flat_map(|d| d.labels.iter().copied())
            .filter(|l| !keep_labels.contains(l))
            .collect();
        if !drop_labels.is_empty() {
            let mut ls = self.label_sets.write();
            for l in drop_labels {
                if let Some(set) = ls.get_mut(&l) {
                    set.remove(&id);
                }
            }
        }
        let mut stale: Vec<(u32, u32, IndexKey)> = Vec::new();
        for (l, k) in pairs {
            for d in &removed {
                if let Some(key) = d.key_for(*l, *k) {
                    if !remaining.iter().any(|r| r.key_for(*l, *k).as_ref() == Some(&key)) {
                        stale.push((*l, *k, key));
                    }
                }
            }
        }
        if !stale.is_empty() {
            let mut schema = self.schema.write();
            for (l, k, key) in stale {
                schema.remove_entry(l, k, &key, id);
            }
        }
    }
}

/// Drops versions older than the one visible at `horizon` (and that one too if it is a
/// deletion), returning the dropped data.
fn prune_chain<T>(chain: &mut Chain<T>, horizon: u64) -> Vec<Option<Arc<T>>> {
    let p = chain.partition_point(|(t, _)| *t <= horizon);
    if p == 0 {
        return Vec::new();
    }
    let cut = if chain[p - 1].1.is_none() { p } else { p - 1 };
    chain.drain(..cut).map(|(_, d)| d).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_visibility_and_prune() {
        let d = |n: u32| Some(Arc::new(NodeData { labels: vec![n], props: vec![] }));
        let mut c: Chain<NodeData> = vec![(1, d(1)), (3, d(3)), (5, None)];
        assert!(visible_at(&c, 0).is_none());
        assert_eq!(visible_at(&c, 2).map(|x| x.labels[0]), Some(1));
        assert_eq!(visible_at(&c, 4).map(|x| x.labels[0]), Some(3));
        assert!(visible_at(&c, 9).is_none());
        assert_eq!(prune_chain(&mut c, 3).len(), 1);
        assert_eq!(c.len(), 2);
        assert_eq!(prune_chain(&mut c, 5).len(), 2);
        assert!(c.is_empty());
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
