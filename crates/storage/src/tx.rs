//! Transactions: a snapshot of the committed store plus a private write set, savepoints, and the
//! commit protocol (conflict validation, unique constraints, install, WAL hand-off).
//!
//! A transaction owns everything it needs (an `Arc` of the store core and its write set), so it is
//! `Send` and can live in a session across network round trips. No lock is held between calls.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use arbor_model::{Error, NodeId, RelId, Result, Status, Value};

use crate::base::{Base, NodeRef, RelRef};
use crate::codec::{entity_size_hint, Enc, MAX_ID};
use crate::idset::IdSet;
use crate::mvcc::{set_prop, Core, CountDelta, Labels, NodeData, RelData};
use crate::schema::{IndexKind, Target};
use crate::value::{check_storable, fmt_value, index_key, target_key, IndexKey, KeyRange};
use crate::wal::WalMsg;
use crate::{Dir, Edge, TokenId, TokenKind};

#[derive(Clone)]
struct NodeWrite {
    /// `None`: deleted by this transaction.
    data: Option<Arc<NodeData>>,
    /// Created by this transaction (so no conflict check and no redo if also deleted).
    created: bool,
}

#[derive(Clone)]
struct RelWrite {
    data: Option<Arc<RelData>>,
    created: bool,
}

/// A relationship created by this transaction, seen from one of its nodes.
#[derive(Clone, Copy)]
struct TxAdj {
    rel: u64,
    other: u64,
    ty: u32,
    out: bool,
}

/// How to restore the write set to an earlier point.
enum Undo {
    Node(u64, Option<NodeWrite>),
    Rel(u64, Option<RelWrite>),
    /// Pop the last entry of this node's transaction-local adjacency.
    Adj(u64),
}

/// A point in a transaction to roll back to (see [`Transaction::rollback_to`]).
#[derive(Clone, Debug)]
pub struct Savepoint {
    undo_len: usize,
    delta: CountDelta,
}

/// A snapshot-isolated transaction. Dropping it without [`commit`](Transaction::commit) rolls
/// it back.
pub struct Transaction {
    core: Arc<Core>,
    /// The compact base this transaction reads under the delta (`base.ts <= start_ts`).
    base: Arc<Base>,
    start_ts: u64,
    read_only: bool,
    /// Schema version when the transaction started: indexes created later did not track this
    /// transaction's writes in `tx_index`.
    schema_version: u64,
    nodes: BTreeMap<u64, NodeWrite>,
    rels: BTreeMap<u64, RelWrite>,
    adj: HashMap<u64, Vec<TxAdj>>,
    /// Supersets (never undone; readers re-check): nodes given a label, rels of a type, and
    /// index keys written by this transaction.
    tx_labels: HashMap<u32, IdSet>,
    tx_types: HashMap<u32, IdSet>,
    tx_index: BTreeMap<(Target, IndexKey), Vec<u64>>,
    undo: Vec<Undo>,
    delta: CountDelta,
    /// Token tables as of `begin` (tokens are never removed): lookups need no shared lock.
    tokens: Arc<crate::mvcc::Tokens>,
}

/// The smaller of two optional ids, `None` only if both are.
#[inline]
fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn outdated(kind: &str, id: u64) -> Error {
    Error::new(
        Status::TransactionOutdated,
        format!(
            "{kind}({id}) was changed by a concurrent transaction that committed first; \
             the transaction can be retried"
        ),
    )
}

fn node_not_found(id: u64) -> Error {
    Error::new(
        Status::EntityNotFound,
        format!("Node with id {id} has been deleted or does not exist"),
    )
}

fn rel_not_found(id: u64) -> Error {
    Error::new(
        Status::EntityNotFound,
        format!("Relationship with id {id} has been deleted or does not exist"),
    )
}

/// Validates, drops nulls, sorts by key; a repeated key keeps its last value.
fn normalize_props(props: Vec<(u32, Value)>) -> Result<Vec<(u32, Value)>> {
    // The common case (keys already ascending and distinct, no nulls) keeps the caller's
    // vector: no second allocation per created entity.
    if props.iter().all(|(_, v)| !v.is_null()) && props.windows(2).all(|w| w[0].0 < w[1].0) {
        for (_, v) in &props {
            check_storable(v)?;
        }
        return Ok(props);
    }
    let mut out: Vec<(u32, Value)> = Vec::with_capacity(props.len());
    for (k, v) in props {
        if v.is_null() {
            set_prop(&mut out, k, None);
        } else {
            check_storable(&v)?;
            set_prop(&mut out, k, Some(v));
        }
    }
    Ok(out)
}

impl Transaction {
    pub(crate) fn new(core: Arc<Core>, read_only: bool) -> Transaction {
        let (start_ts, base) = core.register();
        let schema_version = core.schema.read().version;
        let tokens = core.tokens.snapshot();
        Transaction {
            tokens,
            core,
            base,
            start_ts,
            read_only,
            schema_version,
            nodes: BTreeMap::new(),
            rels: BTreeMap::new(),
            adj: HashMap::new(),
            tx_labels: HashMap::new(),
            tx_types: HashMap::new(),
            tx_index: BTreeMap::new(),
            undo: Vec::new(),
            delta: CountDelta::default(),
        }
    }

    /// The base this transaction reads under the delta.
    pub(crate) fn base(&self) -> &Arc<Base> {
        &self.base
    }

    /// The snapshot timestamp (the newest commit this transaction sees).
    pub fn start_ts(&self) -> u64 {
        self.start_ts
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether the transaction has written anything (still pending).
    pub fn has_writes(&self) -> bool {
        !self.nodes.is_empty() || !self.rels.is_empty()
    }

    // ---------------------------------------------------------------- tokens

    pub fn token_id(&self, kind: TokenKind, name: &str) -> Option<TokenId> {
        // A token created after `begin` (by anyone) is only in the shared tables.
        self.tokens.get(kind, name).or_else(|| self.core.tokens.read().get(kind, name))
    }

    pub fn token_name(&self, kind: TokenKind, id: TokenId) -> Option<String> {
        match self.tokens.name(kind, id) {
            Some(n) => Some(n.to_string()),
            None => self.core.tokens.read().name(kind, id).map(|n| n.to_string()),
        }
    }

    /// Finds or creates a token. Tokens are global and survive a rollback.
    pub fn get_or_create_token(&self, kind: TokenKind, name: &str) -> Result<TokenId> {
        if let Some(id) = self.token_id(kind, name) {
            return Ok(id);
        }
        self.core.tokens.write().create(kind, name)
    }

    /// All tokens of a kind, in id order.
    pub fn tokens(&self, kind: TokenKind) -> Vec<(TokenId, String)> {
        let t = self.core.tokens.read();
        t.t[kind.index()].names.iter().enumerate().map(|(i, n)| (i as u32, n.to_string())).collect()
    }

    // ---------------------------------------------------------------- reads

    /// Runs `f` on the node as this transaction sees it: own write, else the delta version
    /// at the snapshot, else the base row.
    pub(crate) fn with_node<R>(&self, id: u64, f: impl FnOnce(NodeRef<'_>) -> R) -> Option<R> {
        match self.nodes.get(&id) {
            Some(w) => w.data.as_deref().map(|d| f(NodeRef::Data(d))),
            None => match self.core.node_delta(&self.base, id, self.start_ts) {
                Some(Some(d)) => Some(f(NodeRef::Data(&d))),
                Some(None) => None,
                None => self.base.node(id).map(f),
            },
        }
    }

    pub(crate) fn with_rel<R>(&self, id: u64, f: impl FnOnce(RelRef<'_>) -> R) -> Option<R> {
        match self.rels.get(&id) {
            Some(w) => w.data.as_deref().map(|d| f(RelRef::Data(d))),
            None => match self.core.rel_delta(&self.base, id, self.start_ts) {
                Some(Some(d)) => Some(f(RelRef::Data(&d))),
                Some(None) => None,
                None => self.base.rel(id).map(f),
            },
        }
    }

    fn rel_visible(&self, id: u64) -> bool {
        self.with_rel(id, |_| ()).is_some()
    }

    /// The first visible node with id `>= from` (and the label, if given), in id order.
    pub fn next_node(&self, label: Option<TokenId>, from: NodeId) -> Option<NodeId> {
        let mut cur = from.0;
        match label {
            None => {
                let max = self.core.next_node.load(Ordering::Acquire);
                while cur < max {
                    if self.node_exists(NodeId(cur)) {
                        return Some(NodeId(cur));
                    }
                    cur += 1;
                }
                None
            }
            Some(l) => loop {
                let committed = {
                    let sets = self.core.label_sets.read();
                    sets.get(&l).and_then(|s| s.first_from(cur))
                };
                let own = self.tx_labels.get(&l).and_then(|s| s.first_from(cur));
                let based = self.base.next_with_label(l, cur);
                let cand = [committed, own, based].into_iter().flatten().min()?;
                if self.node_has_label(NodeId(cand), l) {
                    return Some(NodeId(cand));
                }
                cur = cand + 1;
            },
        }
    }

    /// Appends to `out` the visible nodes with id `>= from` (and the label, if given), in id
    /// order, stopping after `max` of them; fewer than `max` appended means the scan is
    /// complete. Gives exactly what repeated [`next_node`](Self::next_node) calls give, but
    /// takes the committed label set's lock and looks the label up once per batch instead of
    /// once per node.
    pub fn next_nodes(
        &self,
        label: Option<TokenId>,
        from: NodeId,
        max: usize,
        out: &mut Vec<NodeId>,
    ) {
        let mut cur = from.0;
        let mut left = max;
        let Some(l) = label else {
            let end = self.core.next_node.load(Ordering::Acquire);
            // With no delta version of any base row and no own writes, a base id exists iff
            // the base has a row for it (what `node_exists` finds, without its lookups).
            let clean = self.nodes.is_empty() && !self.base.any_node_dirty();
            while cur < end && left > 0 {
                let exists = if clean && cur < self.base.node_end {
                    self.base.has_node(cur)
                } else {
                    self.node_exists(NodeId(cur))
                };
                if exists {
                    out.push(NodeId(cur));
                    left -= 1;
                }
                cur += 1;
            }
            return;
        };
        // Candidates come from three sorted sources: nodes labelled by commits after the base
        // (copied out in chunks, so no lock is held while rows are checked), this
        // transaction's own labels, and the base's label bits. Each candidate is then checked
        // against the version this transaction sees, as `next_node` does.
        let own = self.tx_labels.get(&l);
        let bits = self.base.label_bits(l);
        let own_writes = !self.nodes.is_empty();
        if own.is_none()
            && self.core.label_sets.read().get(&l).is_none_or(|s| s.first_from(cur).is_none())
        {
            // Only the base's label bits propose candidates (no commit since the base and no
            // own write labelled a node `l` at or past `cur`): the loop below reduced to them.
            let Some((b, end)) = bits else { return };
            let mut next = b.next_from(cur);
            while left > 0 {
                let Some(cand) = next.filter(|id| *id < end) else { return };
                next = b.next_from(cand + 1);
                let clean =
                    !self.base.node_dirty(cand) && !(own_writes && self.nodes.contains_key(&cand));
                if clean || self.node_has_label(NodeId(cand), l) {
                    out.push(NodeId(cand));
                    left -= 1;
                }
            }
            return;
        }
        let mut committed: Vec<u64> = Vec::new();
        let mut ci = 0;
        // Whether `committed` may be missing ids past its last one (it was cut at `max`).
        let mut committed_more = true;
        let mut own_next = own.and_then(|s| s.first_from(cur));
        let mut base_next = bits.and_then(|(b, end)| b.next_from(cur).filter(|id| *id < end));
        while left > 0 {
            if ci == committed.len() && committed_more {
                committed.clear();
                ci = 0;
                let sets = self.core.label_sets.read();
                if let Some(s) = sets.get(&l) {
                    committed.extend(s.iter_from(cur).take(max));
                }
                committed_more = committed.len() == max;
            }
            let c = committed.get(ci).copied();
            // (Plain comparisons: collecting the three into an array and taking its minimum
            // costs a store-forwarding stall per node.)
            let Some(cand) = min_opt(min_opt(c, own_next), base_next) else {
                return;
            };
            if c == Some(cand) {
                ci += 1;
            }
            if own_next == Some(cand) {
                own_next = own.and_then(|s| s.first_from(cand + 1));
            }
            let base_next_was = base_next;
            if base_next == Some(cand) {
                base_next = bits.and_then(|(b, end)| b.next_from(cand + 1).filter(|id| *id < end));
            }
            cur = cand + 1;
            // A clean base row is current, so the base's label bits that proposed it are the
            // answer; anything else is checked against the visible version.
            let clean_base = base_next_was == Some(cand)
                && !self.base.node_dirty(cand)
                && !(own_writes && self.nodes.contains_key(&cand));
            if clean_base || self.node_has_label(NodeId(cand), l) {
                out.push(NodeId(cand));
                left -= 1;
            }
        }
    }

    pub fn node_exists(&self, id: NodeId) -> bool {
        self.with_node(id.0, |_| ()).is_some()
    }

    pub fn node_labels(&self, id: NodeId) -> Vec<TokenId> {
        self.node_handle(id).labels()
    }

    #[inline]
    pub fn node_has_label(&self, id: NodeId, label: TokenId) -> bool {
        self.node_handle(id).has_label(label)
    }

    /// `None` if the node has no such property (or does not exist).
    #[inline]
    pub fn node_property(&self, id: NodeId, key: TokenId) -> Option<Value> {
        self.node_handle(id).property(key)
    }

    /// Appends to `out` the value of property `key` of each node in `ids` (`Value::Null` where
    /// a node lacks it), as `node_property` reads them. Clean base rows are read from the
    /// base's integer column for the key when it has one (`Base::int_column`, built on the
    /// first batch read of the key), so a scan's property read costs an array lookup per
    /// node, not a blob decode; other rows go through `node_property`.
    pub fn node_property_batch(&self, ids: &[NodeId], key: TokenId, out: &mut Vec<Value>) {
        out.reserve(ids.len());
        let col = self.base.int_column(key);
        let own = !self.nodes.is_empty();
        if let Some(c) = &col {
            // Every row of the batch clean (no base row has a delta version, none is this
            // transaction's, all are in the base): straight from the column.
            let end = self.base.node_end;
            if !own && !self.base.any_node_dirty() && ids.iter().all(|id| id.0 < end) {
                c.extend_values(ids, out);
                return;
            }
        }
        for id in ids {
            // (A base hole reads as missing from the column, as from `node_property`.)
            let clean = || !self.base.node_dirty(id.0) && !(own && self.nodes.contains_key(&id.0));
            let v = match &col {
                Some(c) if clean() => c.get(id.0).map(Value::Int),
                _ => self.node_property(*id, key),
            };
            // (Not `unwrap_or`: that builds and drops a `Value::Null` per node.)
            out.push(match v {
                Some(v) => v,
                None => Value::Null,
            });
        }
    }

    /// Properties in key order.
    pub fn node_properties(&self, id: NodeId) -> Vec<(TokenId, Value)> {
        self.with_node(id.0, |d| d.props()).unwrap_or_default()
    }

    /// A handle on the node for repeated reads (labels, properties, relationships) that
    /// resolves once where the node is: a clean base row is then read straight from the base
    /// columns. Never fails: a missing node gives a handle whose reads find nothing.
    #[inline]
    pub fn node_handle(&self, id: NodeId) -> NodeHandle<'_> {
        // Clean: in this transaction's base, no delta version (dirty bits are set before a
        // commit becomes visible, so a clean bit now is clean for this snapshot) and not
        // written by this transaction. The handle borrows the transaction, so the last part
        // cannot change while it lives.
        let labels = self
            .base
            .clean_node_labels(id.0)
            .filter(|_| self.nodes.is_empty() || !self.nodes.contains_key(&id.0));
        NodeHandle { tx: self, id: id.0, clean: labels }
    }

    /// Calls `f` for every relationship of `node` in `dir` whose type is in `types` (all if
    /// empty), without allocating: base CSR entries first (outgoing, then incoming), then
    /// relationships committed after this transaction's base, then its own. With `Dir::Both`
    /// a self-loop is reported once, as outgoing.
    pub fn for_each_edge(
        &self,
        node: NodeId,
        dir: Dir,
        types: &[TokenId],
        mut f: impl FnMut(Edge),
    ) {
        self.edges_of(self.node_handle(node), dir, types, &mut f);
    }

    #[inline]
    fn edges_of(&self, h: NodeHandle<'_>, dir: Dir, types: &[TokenId], f: &mut impl FnMut(Edge)) {
        let node = h.id;
        // The hot path of traversals: a clean base node (no delta version, not written by this
        // transaction: so no relationship of it is newer than the base either) while no base
        // relationship has a delta version and this transaction wrote none: every base entry
        // is visible as it is, and there is nothing else to list. Kept small so that it is
        // inlined into the caller's loop; everything else is `edges_general`.
        if h.clean.is_some()
            && self.rels.is_empty()
            && self.adj.is_empty()
            && self.base.rels_all_clean()
        {
            let edge = |rel: u64, other: u64, d: Dir| Edge {
                rel: RelId(rel),
                other: NodeId(other),
                dir: d,
            };
            match dir {
                Dir::Outgoing => self.base.edges_one_dir(node, true, types, |rel, other| {
                    f(edge(rel, other, Dir::Outgoing))
                }),
                Dir::Incoming => self.base.edges_one_dir(node, false, types, |rel, other| {
                    f(edge(rel, other, Dir::Incoming))
                }),
                Dir::Both => {
                    self.base.edges_one_dir(node, true, types, |rel, other| {
                        f(edge(rel, other, Dir::Outgoing))
                    });
                    // A self-loop is in both lists; it is reported once, as outgoing.
                    self.base.edges_one_dir(node, false, types, |rel, other| {
                        if other != node {
                            f(edge(rel, other, Dir::Incoming))
                        }
                    });
                }
            }
            return;
        }
        self.edges_general(h.id, h.clean.is_some(), dir, types, f);
    }

    /// Appends `make(edge)` for the relationships `edges_of` reports, in the same order. On the
    /// clean fast path the base writes the entries straight into `dst`
    /// ([`crate::base::Base::edges_into`]: no per-entry callback or representation match).
    #[inline]
    ///
    /// Takes the handle's id and clean flag rather than the handle: a handle passed to an
    /// out-of-line call is copied through memory, and on the traversal hot path that copy
    /// stalled on store forwarding.
    fn edges_into<T>(
        &self,
        node: u64,
        clean: bool,
        dir: Dir,
        types: &[TokenId],
        dst: &mut Vec<T>,
        make: impl Fn(Edge) -> T + Copy,
    ) {
        if clean
            && dir != Dir::Both
            && self.rels.is_empty()
            && self.adj.is_empty()
            && self.base.rels_all_clean()
        {
            let out = dir == Dir::Outgoing;
            self.base.edges_into(node, out, types, dst, move |rel, other| {
                make(Edge { rel: RelId(rel), other: NodeId(other), dir })
            });
            return;
        }
        self.edges_general(node, clean, dir, types, &mut |e| dst.push(make(e)));
    }

    /// `edges_of` for everything but a clean base node of an unwritten store: base entries
    /// checked against the delta, then newer and own relationships.
    #[inline(never)]
    fn edges_general(
        &self,
        node: u64,
        clean: bool,
        dir: Dir,
        types: &[TokenId],
        f: &mut impl FnMut(Edge),
    ) {
        if !clean && self.with_node(node, |_| ()).is_none() {
            return;
        }
        let want = |t: u32| types.is_empty() || types.contains(&t);
        let (want_out, want_in) = match dir {
            Dir::Outgoing => (true, false),
            Dir::Incoming => (false, true),
            Dir::Both => (true, true),
        };
        let edge = |rel: u64, other: u64, out: bool| Edge {
            rel: RelId(rel),
            other: NodeId(other),
            dir: if out { Dir::Outgoing } else { Dir::Incoming },
        };
        // A self-loop is in both lists; with `Both` it is reported once, as outgoing.
        let skip_in = |other: u64| dir == Dir::Both && other == node;
        let base = &*self.base;
        let rels_written = !self.rels.is_empty();
        base.edges(node, want_out, want_in, |rel, other, ty, out| {
            if want(ty) && (out || !skip_in(other)) {
                // A base relationship with no delta version that this transaction did not
                // write is visible as the base has it: no lookup needed.
                let clean =
                    !base.rel_dirty(rel) && (!rels_written || !self.rels.contains_key(&rel));
                if clean || self.rel_visible(rel) {
                    f(edge(rel, other, out));
                }
            }
        });
        if base.node_dirty(node) {
            // Relationships created after this transaction's base (older ones are in its CSR).
            // They are copied out under the shard lock and checked after it is released (the
            // check takes other locks, and `f` may read the store). The buffer is per thread
            // and taken out while in use, so a nested call simply gets a fresh one.
            thread_local! {
                static DELTA_ADJ: std::cell::Cell<Vec<(u64, u64, bool)>> =
                    const { std::cell::Cell::new(Vec::new()) };
            }
            let mut cands = DELTA_ADJ.try_with(|c| c.take()).unwrap_or_default();
            cands.clear();
            let (b, s) = (base.ts, self.start_ts);
            let fresh = |a: &&crate::mvcc::Adj| a.ts > b && a.ts <= s && want(a.ty);
            self.core.nodes.read(node, |slot| {
                if want_out {
                    cands.extend(slot.out.iter().filter(fresh).map(|a| (a.rel, a.other, true)));
                }
                if want_in {
                    cands.extend(
                        slot.inc
                            .iter()
                            .filter(fresh)
                            .filter(|a| !skip_in(a.other))
                            .map(|a| (a.rel, a.other, false)),
                    );
                }
            });
            for &(rel, other, out) in &cands {
                if self.rel_visible(rel) {
                    f(edge(rel, other, out));
                }
            }
            let _ = DELTA_ADJ.try_with(|c| c.set(cands));
        }
        if let Some(own) = self.adj.get(&node) {
            for a in own {
                let dir_ok = if a.out { want_out } else { want_in && !skip_in(a.other) };
                if dir_ok && want(a.ty) && self.rel_visible(a.rel) {
                    f(edge(a.rel, a.other, a.out));
                }
            }
        }
    }

    /// Relationships of `node` in `dir` whose type is in `types` (all if empty), appended to
    /// `out`. With `Dir::Both`, outgoing ones come first.
    pub fn node_edges(&self, node: NodeId, dir: Dir, types: &[TokenId], out: &mut Vec<Edge>) {
        self.for_each_edge(node, dir, types, |e| out.push(e));
    }

    /// Number of relationships as `node_edges` would list them.
    pub fn degree(&self, node: NodeId, dir: Dir, types: &[TokenId]) -> u64 {
        let mut n = 0;
        self.for_each_edge(node, dir, types, |_| n += 1);
        n
    }

    /// Nodes with `label` whose property `key` equals `value` (Cypher equality, so `Int(5)`
    /// matches `Float(5.0)`), in id order; `None` if no index covers `(label, key)`.
    pub fn index_seek(&self, label: TokenId, key: TokenId, value: &Value) -> Option<Vec<NodeId>> {
        self.seek_exact(&(label, vec![key]), index_key(value))
    }

    /// Nodes with `label` whose properties `keys` equal `values` (pairwise), in id order;
    /// `None` if no composite index covers exactly `(label, keys)` in that order.
    pub fn index_seek_composite(
        &self,
        label: TokenId,
        keys: &[TokenId],
        values: &[Value],
    ) -> Option<Vec<NodeId>> {
        if keys.len() != values.len() || keys.is_empty() {
            return None;
        }
        let key = target_key(keys, |k| keys.iter().position(|x| *x == k).map(|i| &values[i]));
        self.seek_exact(&(label, keys.to_vec()), key)
    }

    /// Relationships of type `ty` whose properties `keys` equal `values` pairwise (Cypher
    /// equality), in id order; `None` if no relationship index covers exactly `(ty, keys)`.
    pub fn rel_index_seek(
        &self,
        ty: TokenId,
        keys: &[TokenId],
        values: &[Value],
    ) -> Option<Vec<RelId>> {
        if keys.len() != values.len() || keys.is_empty() {
            return None;
        }
        let schema = self.core.schema.read();
        if !schema.rel_indexed(ty, keys) {
            return None;
        }
        drop(schema);
        let key = target_key(keys, |k| keys.iter().position(|x| *x == k).map(|i| &values[i]));
        let Some(key) = key else { return Some(Vec::new()) };
        Some(self.rel_seek_key(&(ty, keys.to_vec()), &key).into_iter().map(RelId).collect())
    }

    /// Visible relationships whose key for the relationship index `t` is `key`, in id order.
    fn rel_seek_key(&self, t: &Target, key: &IndexKey) -> Vec<u64> {
        let mut cands = self.core.schema.read().rel_lookup(t, key);
        // This transaction's own writes are not in the shared index: all are candidates.
        cands.extend(self.rels.keys().copied());
        cands.sort_unstable();
        cands.dedup();
        cands.retain(|id| {
            self.with_rel(*id, |r| r.to_data().key_for(t.0, &t.1).as_ref() == Some(key))
                == Some(true)
        });
        cands
    }

    /// Fails if giving relationship `id` the state `r` would duplicate a key of a relationship
    /// uniqueness or key constraint visible to this transaction (so the statement fails, as in
    /// Neo4j; commit re-checks against the newest committed state).
    fn check_rel_unique(&self, id: u64, r: &RelData) -> Result<()> {
        let targets = self.core.schema.read().rel_unique_targets();
        for t in targets.iter().filter(|t| t.0 == r.ty) {
            if let Some(key) = r.key_for(t.0, &t.1) {
                if let Some(other) = self.rel_seek_key(t, &key).into_iter().find(|o| *o != id) {
                    return Err(self.core.rel_unique_violation(other, t, r));
                }
            }
        }
        Ok(())
    }

    /// Relationships of type `ty` whose property `key` lies between the bounds (same
    /// semantics as [`Transaction::index_range`]), in id order; `None` if no online
    /// relationship index covers exactly `(ty, [key])` or the bounds are not of one type an
    /// index orders (then the caller scans the type).
    pub fn rel_index_range(
        &self,
        ty: TokenId,
        key: TokenId,
        lo: Option<(&Value, bool)>,
        hi: Option<(&Value, bool)>,
    ) -> Option<Vec<RelId>> {
        let r = KeyRange::between(lo, hi)?;
        self.rel_range_seek(ty, key, &r)
    }

    /// Relationships of type `ty` whose property `key` is a string starting with `prefix`, in
    /// id order; `None` if no online relationship index covers exactly `(ty, [key])`.
    pub fn rel_index_prefix(&self, ty: TokenId, key: TokenId, prefix: &str) -> Option<Vec<RelId>> {
        self.rel_range_seek(ty, key, &KeyRange::prefix(prefix))
    }

    fn rel_range_seek(&self, ty: TokenId, key: TokenId, r: &KeyRange) -> Option<Vec<RelId>> {
        let keys = [key];
        let schema = self.core.schema.read();
        if !schema.rel_indexed(ty, &keys) {
            return None;
        }
        let mut cands = Vec::new();
        schema.rel_lookup_range(&(ty, keys.to_vec()), r, &mut cands);
        drop(schema);
        // This transaction's own writes are not in the shared index: all are candidates.
        cands.extend(self.rels.keys().copied());
        cands.sort_unstable();
        cands.dedup();
        cands.retain(|id| {
            self.with_rel(*id, |rel| {
                rel.to_data().key_for(ty, &keys).is_some_and(|k| r.contains(&k))
            }) == Some(true)
        });
        Some(cands.into_iter().map(RelId).collect())
    }

    /// Visible nodes whose key for `t` is `k` (`None` key: nothing can match).
    pub(crate) fn seek_exact(&self, t: &Target, k: Option<IndexKey>) -> Option<Vec<NodeId>> {
        let schema = self.core.schema.read();
        let since = schema.indexed_since(t.0, &t.1)?;
        let Some(k) = k else { return Some(Vec::new()) };
        let mut cands = schema.lookup(t, &k);
        drop(schema);
        self.base.index_lookup(t, &k, &mut cands);
        if since > self.schema_version {
            cands.extend(self.nodes.keys().copied());
        } else if self.tx_index.is_empty() {
            // Nothing written under an index (the common read-only case): no lookup needed.
        } else if let Some(own) = self.tx_index.get(&(t.clone(), k.clone())) {
            cands.extend(own.iter().copied());
        }
        cands.sort_unstable();
        cands.dedup();
        cands.retain(|id| {
            self.with_node(*id, |d| d.key_for(t.0, &t.1) == Some(k.clone())) == Some(true)
        });
        Some(cands.into_iter().map(NodeId).collect())
    }

    /// Nodes with `label` whose property `key` lies between the bounds (`(value, inclusive)`,
    /// `None` = unbounded; Cypher comparison semantics: numbers compare across Int and Float,
    /// values of other types than the bounds' never match, NaN never matches), in id order.
    /// `None` if no index covers `(label, key)` or the bounds are not of one type an index
    /// orders (then the caller scans).
    pub fn index_range(
        &self,
        label: TokenId,
        key: TokenId,
        lo: Option<(&Value, bool)>,
        hi: Option<(&Value, bool)>,
    ) -> Option<Vec<NodeId>> {
        let r = KeyRange::between(lo, hi)?;
        self.range_seek(&(label, vec![key]), &r)
    }

    /// Nodes with `label` whose property `key` is a string starting with `prefix`, in id
    /// order; `None` if no index covers `(label, key)`.
    pub fn index_prefix(&self, label: TokenId, key: TokenId, prefix: &str) -> Option<Vec<NodeId>> {
        self.range_seek(&(label, vec![key]), &KeyRange::prefix(prefix))
    }

    /// Nodes with `label` whose composite index on exactly `keys` holds values equal to `eq`
    /// (pairwise) for the first `eq.len()` keys and, for the next key, a value between the
    /// bounds (as [`Transaction::index_range`]) or, with `prefix`, a string starting with it;
    /// in id order. `None` if no such index is online, `eq` leaves no key for the range, or
    /// the bounds are not of one type an index orders (the caller scans).
    pub fn index_composite_range(
        &self,
        label: TokenId,
        keys: &[TokenId],
        eq: &[Value],
        lo: Option<(&Value, bool)>,
        hi: Option<(&Value, bool)>,
        prefix: Option<&str>,
    ) -> Option<Vec<NodeId>> {
        if keys.len() < 2 || eq.len() >= keys.len() {
            return None;
        }
        let r = match prefix {
            Some(p) => KeyRange::prefix(p),
            None => KeyRange::between(lo, hi)?,
        };
        let t: Target = (label, keys.to_vec());
        let eq: Option<Vec<IndexKey>> = eq.iter().map(index_key).collect();
        let Some(eq) = eq else {
            // An equality value nothing stored can equal (null, NaN).
            return self.core.schema.read().indexed_since(label, keys).map(|_| Vec::new());
        };
        self.range_seek(&t, &r.after(eq))
    }

    fn range_seek(&self, t: &Target, r: &KeyRange) -> Option<Vec<NodeId>> {
        let schema = self.core.schema.read();
        let since = schema.indexed_since(t.0, &t.1)?;
        let mut cands = Vec::new();
        schema.lookup_range(t, r, &mut cands);
        drop(schema);
        self.base.index_range(t, r, &mut cands);
        if since > self.schema_version {
            cands.extend(self.nodes.keys().copied());
        } else {
            for ((tt, k), ids) in self.tx_index.range((t.clone(), r.start())..) {
                if tt != t || r.past_end(k) {
                    break;
                }
                cands.extend(ids.iter().copied());
            }
        }
        cands.sort_unstable();
        cands.dedup();
        cands.retain(|id| {
            self.with_node(*id, |d| d.key_for(t.0, &t.1).is_some_and(|k| r.contains(&k)))
                == Some(true)
        });
        Some(cands.into_iter().map(NodeId).collect())
    }

    /// Waits until the named index (or every index) is online (see [`crate::Store::await_indexes`]).
    /// Schema rules are not transactional, so this does not depend on the snapshot.
    pub fn await_indexes(&self, name: Option<&str>, timeout: std::time::Duration) -> Result<()> {
        self.core.await_indexes(name, timeout)
    }

    /// The targets (label, property keys) with index data.
    pub(crate) fn indexed_targets(&self) -> Vec<Target> {
        let mut v = self.core.schema.read().pairs();
        v.sort_unstable();
        v
    }

    /// Number of visible relationships of type `ty` (any if `None`) from a node with label
    /// `start` to one with `end` (any if `None`; at most one of the two labels may be given),
    /// from the count store in O(log n). `None` when this transaction has written anything
    /// (its own changes are not in the store's counts; the caller counts by scanning) or both
    /// labels are given.
    pub fn count_rels(
        &self,
        start: Option<TokenId>,
        ty: Option<TokenId>,
        end: Option<TokenId>,
    ) -> Option<u64> {
        if start.is_some() && end.is_some() {
            return None;
        }
        if !self.nodes.is_empty() || !self.rels.is_empty() {
            return None;
        }
        let any = crate::mvcc::ANY;
        let key = (start.unwrap_or(any), ty.unwrap_or(any), end.unwrap_or(any));
        let n = self.core.counts.read().rels_at(key, self.start_ts);
        Some(n.max(0) as u64)
    }

    /// Number of visible nodes (with the label, if given).
    pub fn count_nodes(&self, label: Option<TokenId>) -> u64 {
        let committed = self.core.counts.read().at(label, self.start_ts);
        let own = match label {
            None => self.delta.total,
            Some(l) => self.delta.labels.get(&l).copied().unwrap_or(0),
        };
        (committed + own).max(0) as u64
    }

    pub fn rel_exists(&self, id: RelId) -> bool {
        self.rel_visible(id.0)
    }

    /// `(start, end, type)` of a visible relationship.
    pub fn rel_info(&self, id: RelId) -> Option<(NodeId, NodeId, TokenId)> {
        self.with_rel(id.0, |r| (NodeId(r.start()), NodeId(r.end()), r.ty()))
    }

    pub fn rel_property(&self, id: RelId, key: TokenId) -> Option<Value> {
        self.with_rel(id.0, |r| r.prop(key)).flatten()
    }

    pub fn rel_properties(&self, id: RelId) -> Vec<(TokenId, Value)> {
        self.with_rel(id.0, |r| r.props()).unwrap_or_default()
    }

    /// The first visible relationship with id `>= from` (and one of the types, if non-empty).
    pub fn next_rel(&self, types: &[TokenId], from: RelId) -> Option<RelId> {
        let mut cur = from.0;
        if types.is_empty() {
            let max = self.core.next_rel.load(Ordering::Acquire);
            while cur < max {
                if self.rel_visible(cur) {
                    return Some(RelId(cur));
                }
                cur += 1;
            }
            return None;
        }
        loop {
            let mut best: Option<u64> = None;
            {
                let sets = self.core.type_sets.read();
                for t in types {
                    if let Some(c) = sets.get(t).and_then(|s| s.first_from(cur)) {
                        best = Some(best.map_or(c, |b| b.min(c)));
                    }
                }
            }
            for t in types {
                if let Some(c) = self.tx_types.get(t).and_then(|s| s.first_from(cur)).as_ref() {
                    best = Some(best.map_or(*c, |b| b.min(*c)));
                }
            }
            if let Some(c) = self.base.next_rel_of_types(types, cur) {
                best = Some(best.map_or(c, |b| b.min(c)));
            }
            let cand = best?;
            if self.with_rel(cand, |r| types.contains(&r.ty())) == Some(true) {
                return Some(RelId(cand));
            }
            cur = cand + 1;
        }
    }

    /// Whether this transaction deleted the node.
    pub fn node_deleted_in_tx(&self, id: NodeId) -> bool {
        self.nodes.get(&id.0).is_some_and(|w| w.data.is_none())
    }

    /// Whether this transaction deleted the relationship.
    pub fn rel_deleted_in_tx(&self, id: RelId) -> bool {
        self.rels.get(&id.0).is_some_and(|w| w.data.is_none())
    }

    // ---------------------------------------------------------------- writes

    fn writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::new(
                Status::ForbiddenOnReadOnly,
                "Writing in read access mode not allowed.",
            ));
        }
        Ok(())
    }

    /// The node's current state for an update, failing if a concurrent commit changed it.
    fn node_for_write(&self, id: u64) -> Result<Arc<NodeData>> {
        if let Some(w) = self.nodes.get(&id) {
            return w.data.clone().ok_or_else(|| node_not_found(id));
        }
        let data = self.with_node(id, |n| n.to_data()).ok_or_else(|| node_not_found(id))?;
        if self.core.node_newest_ts(id) > self.start_ts {
            return Err(outdated("Node", id));
        }
        Ok(Arc::new(data))
    }

    fn rel_for_write(&self, id: u64) -> Result<Arc<RelData>> {
        if let Some(w) = self.rels.get(&id) {
            return w.data.clone().ok_or_else(|| rel_not_found(id));
        }
        let data = self.with_rel(id, |r| r.to_data()).ok_or_else(|| rel_not_found(id))?;
        if self.core.rel_newest_ts(id) > self.start_ts {
            return Err(outdated("Relationship", id));
        }
        Ok(Arc::new(data))
    }

    fn put_node(&mut self, id: u64, data: Option<Arc<NodeData>>, created: bool) {
        // A node created just now has a fresh id: nothing of it in the write set yet.
        let prev = if created { None } else { self.nodes.get(&id).cloned() };
        let created = created || prev.as_ref().is_some_and(|p| p.created);
        if let Some(d) = &data {
            self.track_index(id, d);
        }
        self.undo.push(Undo::Node(id, prev));
        self.nodes.insert(id, NodeWrite { data, created });
    }

    fn put_rel(&mut self, id: u64, data: Option<Arc<RelData>>, created: bool) {
        let prev = self.rels.get(&id).cloned();
        let created = created || prev.as_ref().is_some_and(|p| p.created);
        self.undo.push(Undo::Rel(id, prev));
        self.rels.insert(id, RelWrite { data, created });
    }

    /// Remembers this transaction's index keys so `index_seek` finds its own writes.
    fn track_index(&mut self, id: u64, d: &NodeData) {
        let schema = self.core.schema.read();
        if schema.maps.is_empty() {
            return;
        }
        for t in schema.maps.keys() {
            if let Some(key) = d.key_for(t.0, &t.1) {
                self.tx_index.entry((t.clone(), key)).or_default().push(id);
            }
        }
    }

    /// Fails if giving node `id` the state `d` would duplicate a unique key visible to this
    /// transaction. (Commit re-checks against the newest committed state.)
    fn check_unique(&self, id: u64, d: &NodeData) -> Result<()> {
        let targets = {
            let schema = self.core.schema.read();
            if !schema.has_unique() {
                return Ok(());
            }
            schema.unique_targets()
        };
        for t in targets {
            if let Some(key) = d.key_for(t.0, &t.1) {
                let others = self.seek_exact(&t, Some(key)).unwrap_or_default();
                if let Some(other) = others.into_iter().find(|o| o.0 != id) {
                    return Err(self.core.unique_violation(other.0, &t, d));
                }
            }
        }
        Ok(())
    }

    pub fn create_node(
        &mut self,
        labels: &[TokenId],
        props: Vec<(TokenId, Value)>,
    ) -> Result<NodeId> {
        self.writable()?;
        let props = normalize_props(props)?;
        let mut labels = Labels::from_slice(labels);
        labels.sort_unstable();
        labels.dedup();
        let data = NodeData { labels, props };
        let id = self.core.next_node.fetch_add(1, Ordering::AcqRel);
        if id >= MAX_ID {
            return Err(Error::new(Status::MemoryExhausted, "node id space exhausted"));
        }
        self.check_unique(id, &data)?;
        self.delta.total += 1;
        for l in &data.labels {
            self.delta.label(*l, 1);
            self.tx_labels.entry(*l).or_default().insert(id);
        }
        self.put_node(id, Some(Arc::new(data)), true);
        Ok(NodeId(id))
    }

    pub fn create_rel(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: TokenId,
        props: Vec<(TokenId, Value)>,
    ) -> Result<RelId> {
        self.writable()?;
        let props = normalize_props(props)?;
        for n in [start.0, end.0] {
            if !self.node_exists(NodeId(n)) {
                return Err(node_not_found(n));
            }
        }
        let id = self.core.next_rel.fetch_add(1, Ordering::AcqRel);
        if id >= MAX_ID {
            return Err(Error::new(Status::MemoryExhausted, "relationship id space exhausted"));
        }
        let data = RelData { start: start.0, end: end.0, ty: rel_type, props };
        self.check_rel_unique(id, &data)?;
        self.put_rel(id, Some(Arc::new(data)), true);
        self.adj.entry(start.0).or_default().push(TxAdj {
            rel: id,
            other: end.0,
            ty: rel_type,
            out: true,
        });
        self.undo.push(Undo::Adj(start.0));
        self.adj.entry(end.0).or_default().push(TxAdj {
            rel: id,
            other: start.0,
            ty: rel_type,
            out: false,
        });
        self.undo.push(Undo::Adj(end.0));
        self.tx_types.entry(rel_type).or_default().insert(id);
        Ok(RelId(id))
    }

    /// Sets (or with `Value::Null`, removes) a node property.
    pub fn set_node_property(&mut self, id: NodeId, key: TokenId, value: Value) -> Result<()> {
        self.writable()?;
        let value = if value.is_null() { None } else { Some(value) };
        if let Some(v) = &value {
            check_storable(v)?;
        }
        let has = self.with_node(id.0, |d| d.has_prop(key)).ok_or_else(|| node_not_found(id.0))?;
        if value.is_none() && !has {
            return Ok(());
        }
        let cur = self.node_for_write(id.0)?;
        let mut d = (*cur).clone();
        set_prop(&mut d.props, key, value);
        self.check_unique(id.0, &d)?;
        self.put_node(id.0, Some(Arc::new(d)), false);
        Ok(())
    }

    /// Sets (or with `Value::Null`, removes) a relationship property.
    pub fn set_rel_property(&mut self, id: RelId, key: TokenId, value: Value) -> Result<()> {
        self.writable()?;
        let value = if value.is_null() { None } else { Some(value) };
        if let Some(v) = &value {
            check_storable(v)?;
        }
        let has =
            self.with_rel(id.0, |r| r.prop(key).is_some()).ok_or_else(|| rel_not_found(id.0))?;
        if value.is_none() && !has {
            return Ok(());
        }
        let cur = self.rel_for_write(id.0)?;
        let mut r = (*cur).clone();
        set_prop(&mut r.props, key, value);
        self.check_rel_unique(id.0, &r)?;
        self.put_rel(id.0, Some(Arc::new(r)), false);
        Ok(())
    }

    /// Returns whether the label was newly added.
    pub fn add_label(&mut self, id: NodeId, label: TokenId) -> Result<bool> {
        self.writable()?;
        let has =
            self.with_node(id.0, |d| d.has_label(label)).ok_or_else(|| node_not_found(id.0))?;
        if has {
            return Ok(false);
        }
        let cur = self.node_for_write(id.0)?;
        let mut d = (*cur).clone();
        if let Err(pos) = d.labels.binary_search(&label) {
            d.labels.insert(pos, label);
        }
        self.check_unique(id.0, &d)?;
        self.delta.label(label, 1);
        self.tx_labels.entry(label).or_default().insert(id.0);
        self.put_node(id.0, Some(Arc::new(d)), false);
        Ok(true)
    }

    /// Returns whether the label was present.
    pub fn remove_label(&mut self, id: NodeId, label: TokenId) -> Result<bool> {
        self.writable()?;
        let has =
            self.with_node(id.0, |d| d.has_label(label)).ok_or_else(|| node_not_found(id.0))?;
        if !has {
            return Ok(false);
        }
        let cur = self.node_for_write(id.0)?;
        let mut d = (*cur).clone();
        d.labels.retain(|l| *l != label);
        self.delta.label(label, -1);
        self.put_node(id.0, Some(Arc::new(d)), false);
        Ok(true)
    }

    /// Deletes a node; fails with `DeleteNodeWithRelationships` if it still has relationships
    /// (including ones this transaction created). Deleting it twice is a no-op.
    pub fn delete_node(&mut self, id: NodeId) -> Result<()> {
        self.writable()?;
        if self.node_deleted_in_tx(id) {
            return Ok(());
        }
        let cur = self.node_for_write(id.0)?;
        if self.degree(id, Dir::Both, &[]) > 0 {
            return Err(Error::new(
                Status::DeleteNodeWithRelationships,
                format!(
                    "Cannot delete node<{}>, because it still has relationships. To delete this \
                     node, you must first delete its relationships.",
                    id.0
                ),
            ));
        }
        self.delta.total -= 1;
        for l in &cur.labels {
            self.delta.label(*l, -1);
        }
        self.put_node(id.0, None, false);
        Ok(())
    }

    /// Deletes a relationship. Deleting it twice is a no-op.
    pub fn delete_rel(&mut self, id: RelId) -> Result<()> {
        self.writable()?;
        if self.rel_deleted_in_tx(id) {
            return Ok(());
        }
        self.rel_for_write(id.0)?;
        self.put_rel(id.0, None, false);
        Ok(())
    }

    // ---------------------------------------------------------------- savepoints

    /// Marks the current state of the write set.
    pub fn savepoint(&self) -> Savepoint {
        Savepoint { undo_len: self.undo.len(), delta: self.delta.clone() }
    }

    /// Undoes every write made after `sp` was taken (a savepoint taken after `sp` becomes
    /// invalid; rolling back to it is a no-op).
    pub fn rollback_to(&mut self, sp: &Savepoint) {
        if sp.undo_len > self.undo.len() {
            return;
        }
        while self.undo.len() > sp.undo_len {
            match self.undo.pop() {
                Some(Undo::Node(id, prev)) => match prev {
                    Some(w) => {
                        self.nodes.insert(id, w);
                    }
                    None => {
                        self.nodes.remove(&id);
                    }
                },
                Some(Undo::Rel(id, prev)) => match prev {
                    Some(w) => {
                        self.rels.insert(id, w);
                    }
                    None => {
                        self.rels.remove(&id);
                    }
                },
                Some(Undo::Adj(n)) => {
                    if let Some(v) = self.adj.get_mut(&n) {
                        v.pop();
                    }
                }
                None => break,
            }
        }
        self.delta = sp.delta.clone();
    }

    // ---------------------------------------------------------------- commit

    /// Discards all writes.
    pub fn rollback(self) {}

    /// Commits; returns the commit timestamp (usable as a bookmark: it is visible to every
    /// transaction begun after this returns). A transaction without writes returns its
    /// snapshot timestamp.
    pub fn commit(self) -> Result<u64> {
        let nodes: Vec<(u64, Option<Arc<NodeData>>)> = self
            .nodes
            .iter()
            .filter(|(_, w)| !(w.created && w.data.is_none()))
            .map(|(id, w)| (*id, w.data.clone()))
            .collect();
        let rels: Vec<(u64, Option<Arc<RelData>>)> = self
            .rels
            .iter()
            .filter(|(_, w)| !(w.created && w.data.is_none()))
            .map(|(id, w)| (*id, w.data.clone()))
            .collect();
        if nodes.is_empty() && rels.is_empty() {
            return Ok(self.start_ts);
        }
        let core = self.core.clone();
        let durable = core.persist.is_some();
        let body = if durable { encode_body(&nodes, &rels) } else { Vec::new() };
        let (ts, ack) = {
            let mut cs = core.commit.lock();
            core.clock.check()?;
            if cs.closed {
                return Err(Error::new(Status::Io, "the store is closed"));
            }
            self.validate()?;
            self.validate_unique()?;
            self.validate_required()?;
            let ts = cs.next_ts;
            cs.next_ts += 1;
            let header = if durable { core.record_header(&mut cs, ts) } else { Vec::new() };
            // The record goes to the log writer first, so that its write and fsync run while
            // this thread installs the versions; the commit becomes visible when both are done
            // (see `Clock`). (A batch of 10,000 nodes takes a few milliseconds to install and
            // about as long to sync: done one after the other they were two thirds of a
            // batched bulk write's latency.)
            let ack = match &cs.wal {
                Some(wal) => {
                    let (atx, arx) = crossbeam_channel::bounded(1);
                    if wal.send(WalMsg::Commit { ts, header, body, ack: Some(atx) }).is_err() {
                        core.clock.fail("the log writer has stopped".into());
                        return Err(Error::new(Status::Io, "the log writer has stopped"));
                    }
                    Some(arx)
                }
                None => {
                    if durable {
                        return Err(Error::new(Status::Io, "the log writer has stopped"));
                    }
                    None
                }
            };
            core.apply(&mut cs, ts, &nodes, &rels);
            if ack.is_some() {
                core.clock.applied(ts);
            } else {
                core.clock.publish(ts);
            }
            if ts.is_multiple_of(64) {
                core.gc(&mut cs);
            }
            (ts, ack)
        };
        if let Some(arx) = ack {
            match arx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(Error::new(Status::Io, "the log writer has stopped")),
            }
        }
        Ok(ts)
    }

    /// First committer wins: anything this transaction updates or deletes must not have a newer
    /// committed version than the snapshot; relationships it creates need live endpoints, and
    /// nodes it deletes must not have gained relationships. Caller holds the commit mutex.
    fn validate(&self) -> Result<()> {
        let core = &self.core;
        for (id, w) in &self.nodes {
            if w.created {
                continue;
            }
            if core.node_newest_ts(*id) > self.start_ts {
                return Err(outdated("Node", *id));
            }
            if w.data.is_none() {
                let mut rels: Vec<u64> = core
                    .nodes
                    .read(*id, |s| s.out.iter().chain(s.inc.iter()).map(|a| a.rel).collect())
                    .unwrap_or_default();
                core.base().edges(*id, true, true, |r, _, _, _| rels.push(r));
                for r in rels {
                    if self.rels.get(&r).is_some_and(|w| w.data.is_none()) {
                        continue;
                    }
                    if core.rel_newest_exists(r) {
                        return Err(outdated("Node", *id));
                    }
                }
            }
        }
        for (id, w) in &self.rels {
            if w.created {
                if let Some(r) = &w.data {
                    for n in [r.start, r.end] {
                        let alive = match self.nodes.get(&n) {
                            Some(nw) => nw.data.is_some(),
                            None => core.node_newest_exists(n),
                        };
                        if !alive {
                            return Err(outdated("Node", n));
                        }
                    }
                }
                continue;
            }
            if core.rel_newest_ts(*id) > self.start_ts {
                return Err(outdated("Relationship", *id));
            }
        }
        Ok(())
    }

    /// Unique constraints against the newest committed state (not the snapshot), so two
    /// concurrent transactions cannot both insert the same key. Caller holds the commit mutex.
    fn validate_unique(&self) -> Result<()> {
        self.validate_rel_unique()?;
        let targets = self.core.schema.read().unique_targets();
        if targets.is_empty() {
            return Ok(());
        }
        let mut seen: HashMap<(Target, IndexKey), u64> = HashMap::new();
        for (id, w) in &self.nodes {
            let Some(d) = &w.data else { continue };
            for t in &targets {
                let Some(key) = d.key_for(t.0, &t.1) else { continue };
                if let Some(other) = seen.insert((t.clone(), key.clone()), *id) {
                    return Err(self.core.unique_violation(other, t, d));
                }
                let mut cands = self.core.schema.read().lookup(t, &key);
                self.core.base().index_lookup(t, &key, &mut cands);
                for c in cands {
                    if c == *id || self.nodes.contains_key(&c) {
                        continue;
                    }
                    let (_, nd) = self.core.node_newest(c);
                    if nd.is_some_and(|nd| nd.key_for(t.0, &t.1).as_ref() == Some(&key)) {
                        return Err(self.core.unique_violation(c, t, d));
                    }
                }
            }
        }
        Ok(())
    }

    /// Relationship uniqueness and key constraints against the newest committed state (as
    /// `validate_unique` for nodes). Caller holds the commit mutex.
    fn validate_rel_unique(&self) -> Result<()> {
        let targets = self.core.schema.read().rel_unique_targets();
        if targets.is_empty() {
            return Ok(());
        }
        let mut seen: HashMap<(Target, IndexKey), u64> = HashMap::new();
        for (id, w) in &self.rels {
            let Some(r) = &w.data else { continue };
            for t in targets.iter().filter(|t| t.0 == r.ty) {
                let Some(key) = r.key_for(t.0, &t.1) else { continue };
                if let Some(other) = seen.insert((t.clone(), key.clone()), *id) {
                    return Err(self.core.rel_unique_violation(other, t, r));
                }
                let cands = self.core.schema.read().rel_lookup(t, &key);
                for c in cands {
                    if c == *id || self.rels.contains_key(&c) {
                        continue;
                    }
                    let newest = self.core.rel_newest_data(c);
                    if newest.is_some_and(|o| o.key_for(t.0, &t.1).as_ref() == Some(&key)) {
                        return Err(self.core.rel_unique_violation(c, t, r));
                    }
                }
            }
        }
        Ok(())
    }

    /// Existence and node-key constraints: every node this transaction leaves with a
    /// constrained label has the required properties. Caller holds the commit mutex (so a
    /// constraint created concurrently is either checked here or saw this commit's data).
    fn validate_required(&self) -> Result<()> {
        let (required, rel_required) = {
            let s = self.core.schema.read();
            (s.required_targets(), s.rel_required())
        };
        for (id, w) in &self.rels {
            let Some(r) = &w.data else { continue };
            for ((ty, keys), kind) in &rel_required {
                if r.ty == *ty && keys.iter().any(|k| crate::mvcc::prop_of(&r.props, *k).is_none())
                {
                    return Err(self.core.missing_rel_property(*id, *ty, keys, *kind));
                }
            }
        }
        if required.is_empty() {
            return Ok(());
        }
        for (id, w) in &self.nodes {
            let Some(d) = &w.data else { continue };
            for ((label, keys), kind) in &required {
                if d.has_label(*label) && keys.iter().any(|k| d.prop(*k).is_none()) {
                    return Err(self.core.missing_property(*id, *label, keys, *kind));
                }
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("start_ts", &self.start_ts)
            .field("read_only", &self.read_only)
            .field("nodes_written", &self.nodes.len())
            .field("rels_written", &self.rels.len())
            .finish()
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.core.unregister(self.start_ts, self.base.ts);
    }
}

/// Redo operations of a commit (full images of every written entity).
fn encode_body(
    nodes: &[(u64, Option<Arc<NodeData>>)],
    rels: &[(u64, Option<Arc<RelData>>)],
) -> Vec<u8> {
    let hint: usize = nodes
        .iter()
        .map(|(_, d)| d.as_ref().map_or(11, |d| entity_size_hint(d.labels.len(), &d.props)))
        .chain(rels.iter().map(|(_, r)| r.as_ref().map_or(11, |r| entity_size_hint(0, &r.props))))
        .sum();
    let mut e = Enc::with_capacity(hint);
    for (id, d) in nodes {
        match d {
            Some(d) => e.op_put_node(*id, &d.labels, &d.props),
            None => e.op_del_node(*id),
        }
    }
    for (id, r) in rels {
        match r {
            Some(r) => e.op_put_rel(*id, r.start, r.end, r.ty, &r.props),
            None => e.op_del_rel(*id),
        }
    }
    e.buf
}

impl Core {
    fn names(&self, label: u32, keys: &[u32]) -> (String, Vec<String>) {
        let t = self.tokens.read();
        let l = t.name(TokenKind::Label, label).map(|s| s.to_string()).unwrap_or_default();
        let ks = keys
            .iter()
            .map(|k| t.name(TokenKind::PropertyKey, *k).map(|s| s.to_string()).unwrap_or_default())
            .collect();
        (l, ks)
    }

    /// The constraint error Neo4j reports for a duplicate key (`d`: the offending node).
    pub(crate) fn unique_violation(&self, existing: u64, t: &Target, d: &NodeData) -> Error {
        let (l, ks) = self.names(t.0, &t.1);
        let v = |k: u32| d.prop(k).map_or_else(|| "NULL".to_string(), fmt_value);
        let what = if ks.len() == 1 {
            format!("property `{}` = {}", ks[0], v(t.1[0]))
        } else {
            let parts: Vec<String> =
                ks.iter().zip(&t.1).map(|(n, k)| format!("`{n}` = {}", v(*k))).collect();
            format!("properties {}", parts.join(", "))
        };
        Error::new(
            Status::ConstraintValidationFailed,
            format!("Node({existing}) already exists with label `{l}` and {what}"),
        )
    }

    /// The constraint error Neo4j reports for a duplicate relationship key (`r`: the
    /// offending relationship).
    pub(crate) fn rel_unique_violation(&self, existing: u64, t: &Target, r: &RelData) -> Error {
        let tn = {
            let tokens = self.tokens.read();
            tokens.name(TokenKind::RelType, t.0).map(|s| s.to_string()).unwrap_or_default()
        };
        let (_, ks) = self.names(t.0, &t.1);
        let v = |k: u32| {
            crate::mvcc::prop_of(&r.props, k).map_or_else(|| "NULL".to_string(), fmt_value)
        };
        let what = if ks.len() == 1 {
            format!("property `{}` = {}", ks[0], v(t.1[0]))
        } else {
            let parts: Vec<String> =
                ks.iter().zip(&t.1).map(|(n, k)| format!("`{n}` = {}", v(*k))).collect();
            format!("properties {}", parts.join(", "))
        };
        Error::new(
            Status::ConstraintValidationFailed,
            format!("Relationship({existing}) already exists with type `{tn}` and {what}"),
        )
    }

    /// The constraint error Neo4j reports for a relationship lacking a required property
    /// (`keys`: the constraint's keys; a key constraint names them all).
    pub(crate) fn missing_rel_property(
        &self,
        id: u64,
        ty: u32,
        keys: &[u32],
        kind: IndexKind,
    ) -> Error {
        let tn = {
            let tokens = self.tokens.read();
            tokens.name(TokenKind::RelType, ty).map(|s| s.to_string()).unwrap_or_default()
        };
        let (_, ks) = self.names(ty, keys);
        let what = if kind == IndexKind::Existence && ks.len() == 1 {
            format!("property `{}`", ks[0])
        } else {
            let q: Vec<String> = ks.iter().map(|k| format!("`{k}`")).collect();
            format!("properties ({})", q.join(", "))
        };
        Error::new(
            Status::ConstraintValidationFailed,
            format!("Relationship({id}) with type `{tn}` must have the {what}"),
        )
    }

    /// The constraint error Neo4j reports for a node lacking a required property.
    pub(crate) fn missing_property(
        &self,
        id: u64,
        label: u32,
        keys: &[u32],
        kind: IndexKind,
    ) -> Error {
        let (l, ks) = self.names(label, keys);
        let what = if kind == IndexKind::Existence && ks.len() == 1 {
            format!("property `{}`", ks[0])
        } else {
            let q: Vec<String> = ks.iter().map(|k| format!("`{k}`")).collect();
            format!("properties ({})", q.join(", "))
        };
        Error::new(
            Status::ConstraintValidationFailed,
            format!("Node({id}) with label `{l}` must have the {what}"),
        )
    }

    /// The start of a WAL record: commit ts and tokens not yet logged. Caller holds the commit
    /// mutex (which orders records and token logging).
    pub(crate) fn record_header(&self, cs: &mut crate::mvcc::CommitState, ts: u64) -> Vec<u8> {
        let mut e = Enc::new();
        e.u64(ts);
        let t = self.tokens.read();
        for kind in [TokenKind::Label, TokenKind::RelType, TokenKind::PropertyKey] {
            let names = &t.t[kind.index()].names;
            let from = cs.tokens_logged[kind.index()];
            for (i, n) in names.iter().enumerate().skip(from) {
                e.op_token(kind, i as u32, n);
            }
            cs.tokens_logged[kind.index()] = names.len();
        }
        e.buf
    }
}

/// A node of a transaction's snapshot, resolved once (see [`Transaction::node_handle`]).
/// Reading a clean base row through it costs no delta or write-set lookup; anything else goes
/// through the full lookup (own write, delta version, base row). The transaction's
/// `node_has_label`, `node_property` and `node_labels` read through a handle too.
#[derive(Clone, Copy)]
pub struct NodeHandle<'t> {
    tx: &'t Transaction,
    id: u64,
    /// For a base row untouched by the delta and by this transaction (so it exists): its
    /// labels, read once.
    clean: Option<&'t [TokenId]>,
}

impl NodeHandle<'_> {
    pub fn id(&self) -> NodeId {
        NodeId(self.id)
    }

    pub fn exists(&self) -> bool {
        self.clean.is_some() || self.tx.node_exists(NodeId(self.id))
    }

    #[inline]
    pub fn has_label(&self, label: TokenId) -> bool {
        if let Some(labels) = self.clean {
            // Label sets are sorted; most are a handful of labels, where a scan beats halving.
            if labels.len() <= 8 {
                labels.contains(&label)
            } else {
                labels.binary_search(&label).is_ok()
            }
        } else {
            self.tx.with_node(self.id, |d| d.has_label(label)).unwrap_or(false)
        }
    }

    pub fn labels(&self) -> Vec<TokenId> {
        if let Some(labels) = self.clean {
            labels.to_vec()
        } else {
            self.tx.with_node(self.id, |d| d.labels().to_vec()).unwrap_or_default()
        }
    }

    /// `None` if the node has no such property (or does not exist).
    #[inline]
    pub fn property(&self, key: TokenId) -> Option<Value> {
        if self.clean.is_some() {
            NodeRef::Base(&self.tx.base, self.id).prop(key)
        } else {
            self.tx.with_node(self.id, |d| d.prop(key)).flatten()
        }
    }

    /// As [`Transaction::for_each_edge`].
    #[inline]
    pub fn for_each_edge(&self, dir: Dir, types: &[TokenId], mut f: impl FnMut(Edge)) {
        self.tx.edges_of(*self, dir, types, &mut f);
    }

    /// Appends the relationships [`for_each_edge`](Self::for_each_edge) reports to `out`, in
    /// the same order; cheaper for a clean base node, whose entries the base writes straight
    /// into `out`.
    #[inline]
    pub fn edges_into(&self, dir: Dir, types: &[TokenId], out: &mut Vec<Edge>) {
        self.tx.edges_into(self.id, self.clean.is_some(), dir, types, out, |e| e);
    }

    /// As [`edges_into`](Self::edges_into), appending `make(edge)`.
    #[inline]
    pub fn edges_into_with<T>(
        &self,
        dir: Dir,
        types: &[TokenId],
        out: &mut Vec<T>,
        make: impl Fn(Edge) -> T + Copy,
    ) {
        self.tx.edges_into(self.id, self.clean.is_some(), dir, types, out, make);
    }
}

impl std::fmt::Debug for NodeHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeHandle({}{})", self.id, if self.clean.is_some() { ", clean" } else { "" })
    }
}
