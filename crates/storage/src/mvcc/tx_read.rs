//! Transaction reads: nodes, labels, properties, relationships and edge iteration (the hot
//! paths), and [`NodeHandle`].

use std::sync::atomic::Ordering;

use arbor_model::{NodeId, RelId, Value};

use crate::base::{NodeRef, RelRef};
use crate::types::{Direction, Edge, TokenId};

use super::tx::{min_opt, Transaction};

impl Transaction {
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

    pub(super) fn rel_visible(&self, id: u64) -> bool {
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
    /// once per node. The rows read from the delta are counted for the maintenance thread
    /// (see `release.rs`: a delta scans keep paying for is folded soon after commits stop).
    pub fn next_nodes(
        &self,
        label: Option<TokenId>,
        from: NodeId,
        max: usize,
        out: &mut Vec<NodeId>,
    ) {
        let before = out.len();
        self.scan_nodes(label, from, max, out);
        self.note_delta_rows(&out[before..]);
    }

    /// Adds to the store's count of delta rows read those of `ids` (in id order) that are not
    /// current base rows: one binary search for the ids past the base, and a dirty-bit test
    /// per id only while some base row has a delta version.
    fn note_delta_rows(&self, ids: &[NodeId]) {
        let end = self.base.node_end;
        let in_base = ids.partition_point(|id| id.0 < end);
        let mut n = ids.len() - in_base;
        if self.base.any_node_dirty() {
            n += ids[..in_base].iter().filter(|id| self.base.node_dirty(id.0)).count();
        }
        if n > 0 {
            self.core.delta_reads.fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    /// [`next_nodes`](Self::next_nodes) without the count.
    fn scan_nodes(&self, label: Option<TokenId>, from: NodeId, max: usize, out: &mut Vec<NodeId>) {
        let mut cur = from.0;
        let mut left = max;
        let Some(l) = label else {
            let end = self.core.next_node.load(Ordering::Acquire);
            // With no delta version of any base row and no own writes, a base id exists iff
            // the base has a row for it (what `node_exists` finds, without its lookups).
            let clean = self.nodes.is_empty() && !self.base.any_node_dirty();
            if clean {
                let before = out.len();
                cur = self.base.extend_nodes(cur, end, left, out);
                left -= out.len() - before;
            }
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
            if !own_writes && !self.base.any_node_dirty() {
                // Every base row is current: the label bits are the answer, a word at a time.
                b.extend_ids(cur, end, left, out);
                return;
            }
            let mut next = b.next_from(cur);
            while left > 0 {
                let Some(cand) = next.filter(|id| *id < end) else { return };
                next = b.next_from(cand + 1);
                let clean =
                    !(self.base.node_dirty(cand) || own_writes && self.nodes.contains_key(&cand));
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

    /// `None` if the node has no such property (or does not exist). A clean base row (see
    /// [`Transaction::node_handle`]) is answered from its property blob alone: a hole's blob
    /// is empty, so its label code (a second random read per row, all a handle needs it
    /// for here) is not looked up.
    #[inline]
    pub fn node_property(&self, id: NodeId, key: TokenId) -> Option<Value> {
        if !self.base.node_dirty(id.0) && (self.nodes.is_empty() || !self.nodes.contains_key(&id.0))
        {
            return NodeRef::Base(&self.base, id.0).prop(key);
        }
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
            let clean = || !(self.base.node_dirty(id.0) || own && self.nodes.contains_key(&id.0));
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
    /// relationships committed after this transaction's base, then its own. With `Direction::Both`
    /// a self-loop is reported once, as outgoing.
    pub fn for_each_edge(
        &self,
        node: NodeId,
        dir: Direction,
        types: &[TokenId],
        mut f: impl FnMut(Edge),
    ) {
        self.edges_of(self.node_handle(node), dir, types, &mut f);
    }

    #[inline]
    pub(super) fn edges_of(
        &self,
        h: NodeHandle<'_>,
        dir: Direction,
        types: &[TokenId],
        f: &mut impl FnMut(Edge),
    ) {
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
            let edge = |rel: u64, other: u64, d: Direction| Edge {
                rel: RelId(rel),
                other: NodeId(other),
                dir: d,
            };
            let r = match dir {
                Direction::Outgoing => self.base.edges_one_dir(node, true, types, |rel, other| {
                    f(edge(rel, other, Direction::Outgoing))
                }),
                Direction::Incoming => self.base.edges_one_dir(node, false, types, |rel, other| {
                    f(edge(rel, other, Direction::Incoming))
                }),
                Direction::Both => self
                    .base
                    .edges_one_dir(node, true, types, |rel, other| {
                        f(edge(rel, other, Direction::Outgoing))
                    })
                    .and_then(|()| {
                        // A self-loop is in both lists; it is reported once, as outgoing.
                        self.base.edges_one_dir(node, false, types, |rel, other| {
                            if other != node {
                                f(edge(rel, other, Direction::Incoming))
                            }
                        })
                    }),
            };
            if let Err(e) = r {
                self.note_read_error(e);
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
    pub(super) fn edges_into<T>(
        &self,
        node: u64,
        clean: bool,
        dir: Direction,
        types: &[TokenId],
        dst: &mut Vec<T>,
        make: impl Fn(Edge) -> T + Copy,
    ) {
        if clean
            && dir != Direction::Both
            && self.rels.is_empty()
            && self.adj.is_empty()
            && self.base.rels_all_clean()
        {
            let out = dir == Direction::Outgoing;
            let r = self.base.edges_into(node, out, types, dst, move |rel, other| {
                make(Edge { rel: RelId(rel), other: NodeId(other), dir })
            });
            if let Err(e) = r {
                self.note_read_error(e);
            }
            return;
        }
        self.edges_general(node, clean, dir, types, &mut |e| dst.push(make(e)));
    }

    /// `edges_of` for everything but a clean base node of an unwritten store: base entries
    /// checked against the delta, then newer and own relationships.
    #[inline(never)]
    pub(super) fn edges_general(
        &self,
        node: u64,
        clean: bool,
        dir: Direction,
        types: &[TokenId],
        f: &mut impl FnMut(Edge),
    ) {
        if !clean && self.with_node(node, |_| ()).is_none() {
            return;
        }
        let want = |t: u32| types.is_empty() || types.contains(&t);
        let (want_out, want_in) = match dir {
            Direction::Outgoing => (true, false),
            Direction::Incoming => (false, true),
            Direction::Both => (true, true),
        };
        let edge = |rel: u64, other: u64, out: bool| Edge {
            rel: RelId(rel),
            other: NodeId(other),
            dir: if out { Direction::Outgoing } else { Direction::Incoming },
        };
        // A self-loop is in both lists; with `Both` it is reported once, as outgoing.
        let skip_in = |other: u64| dir == Direction::Both && other == node;
        let base = &*self.base;
        let rels_written = !self.rels.is_empty();
        let r = base.edges(node, want_out, want_in, |rel, other, ty, out| {
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
        if let Err(e) = r {
            self.note_read_error(e);
        }
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
            let fresh = |a: &&super::versions::Adj| a.ts > b && a.ts <= s && want(a.ty);
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
    /// `out`. With `Direction::Both`, outgoing ones come first.
    pub fn node_edges(&self, node: NodeId, dir: Direction, types: &[TokenId], out: &mut Vec<Edge>) {
        self.for_each_edge(node, dir, types, |e| out.push(e));
    }

    /// Number of relationships as `node_edges` would list them.
    pub fn degree(&self, node: NodeId, dir: Direction, types: &[TokenId]) -> u64 {
        let mut n = 0;
        self.for_each_edge(node, dir, types, |_| n += 1);
        n
    }
}

/// A node of a transaction's snapshot, resolved once (see [`Transaction::node_handle`]).
/// Reading a clean base row through it costs no delta or write-set lookup; anything else goes
/// through the full lookup (own write, delta version, base row). The transaction's
/// `node_has_label`, `node_property` and `node_labels` read through a handle too.
#[derive(Clone, Copy)]
pub struct NodeHandle<'t> {
    pub(super) tx: &'t Transaction,
    pub(super) id: u64,
    /// For a base row untouched by the delta and by this transaction (so it exists): its
    /// labels, read once.
    pub(super) clean: Option<&'t [TokenId]>,
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
    pub fn for_each_edge(&self, dir: Direction, types: &[TokenId], mut f: impl FnMut(Edge)) {
        self.tx.edges_of(*self, dir, types, &mut f);
    }

    /// Appends the relationships [`for_each_edge`](Self::for_each_edge) reports to `out`, in
    /// the same order; cheaper for a clean base node, whose entries the base writes straight
    /// into `out`.
    #[inline]
    pub fn edges_into(&self, dir: Direction, types: &[TokenId], out: &mut Vec<Edge>) {
        self.tx.edges_into(self.id, self.clean.is_some(), dir, types, out, |e| e);
    }
}

impl std::fmt::Debug for NodeHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeHandle({}{})", self.id, if self.clean.is_some() { ", clean" } else { "" })
    }
}
