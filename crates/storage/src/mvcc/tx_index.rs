//! Transaction reads through indexes (equality, range, prefix, composite, text, spatial;
//! nodes and relationships), counts and relationship reads/scans.

use std::sync::atomic::Ordering;

use arbor_model::{NodeId, RelId, Result, Value};

use crate::point_index::PointQuery;
use crate::records::RelData;
use crate::schema::{IndexKind, Target};
use crate::text_index::TextMatch;
use crate::types::TokenId;
use crate::value::{index_key, target_key, IndexKey, KeyRange};

use super::tx::Transaction;

impl Transaction {
    /// Nodes with `label` whose property `key` equals `value` (Cypher equality, so `Int(5)`
    /// matches `Float(5.0)`), in id order; `None` if no index covers `(label, key)`.
    pub fn index_seek(&self, label: TokenId, key: TokenId, value: &Value) -> Option<Vec<NodeId>> {
        let mut out = Vec::new();
        self.index_seek_into(label, key, value, &mut out).then_some(out)
    }

    /// [`Transaction::index_seek`] into `out` (cleared first; `false`: no index, `out` left
    /// empty), reusing its allocation: a seek per row (a relationship load does two) then
    /// allocates nothing but its target.
    pub fn index_seek_into(
        &self,
        label: TokenId,
        key: TokenId,
        value: &Value,
        out: &mut Vec<NodeId>,
    ) -> bool {
        let k = index_key(value);
        let point = matches!(k, Some(IndexKey::Point(..)));
        self.seek_into(&(label, vec![key]), k, Some(point), out)
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
        let point = matches!(key, Some(IndexKey::Point(..)));
        let mut out = Vec::new();
        self.seek_into(&(label, keys.to_vec()), key, Some(point), &mut out).then_some(out)
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
        let key = target_key(keys, |k| keys.iter().position(|x| *x == k).map(|i| &values[i]));
        let point = matches!(key, Some(IndexKey::Point(..)));
        schema.note_read(true, ty, keys, false, point);
        drop(schema);
        let Some(key) = key else { return Some(Vec::new()) };
        Some(self.rel_seek_key(&(ty, keys.to_vec()), &key).into_iter().map(RelId).collect())
    }

    /// Visible relationships whose key for the relationship index `t` is `key`, in id order.
    pub(super) fn rel_seek_key(&self, t: &Target, key: &IndexKey) -> Vec<u64> {
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
    pub(super) fn check_rel_unique(&self, id: u64, r: &RelData) -> Result<()> {
        let targets = self.core.schema.read().rel_unique_targets();
        for t in targets.iter().filter(|t| t.0 == r.ty) {
            if let Some(key) = r.key_for(t.0, &t.1) {
                self.core.await_replayed_unique(true, t);
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

    pub(super) fn rel_range_seek(
        &self,
        ty: TokenId,
        key: TokenId,
        r: &KeyRange,
    ) -> Option<Vec<RelId>> {
        let keys = [key];
        let schema = self.core.schema.read();
        if !schema.rel_indexed(ty, &keys) {
            return None;
        }
        schema.note_read(true, ty, &keys, r.group == 2, false);
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
        let mut out = Vec::new();
        self.seek_into(t, k, None, &mut out).then_some(out)
    }

    /// Visible nodes whose key for `t` is `k`, in id order, into `out` (cleared first, its
    /// allocation reused); `false` if no online index covers `t`. `note`: a user seek, counted
    /// on the index it uses (`Some(point)`: the key is a point), under the same schema read
    /// that checks the index and looks the key up in the delta index.
    fn seek_into(
        &self,
        t: &Target,
        k: Option<IndexKey>,
        note: Option<bool>,
        out: &mut Vec<NodeId>,
    ) -> bool {
        out.clear();
        // The caller's buffer as ids (same layout: collected in place, no allocation).
        let mut cands: Vec<u64> = std::mem::take(out).into_iter().map(|n| n.0).collect();
        let since = {
            let schema = self.core.schema.read();
            let since = match note {
                Some(point) => schema.seek_since(t.0, &t.1, point),
                None => schema.indexed_since(t.0, &t.1),
            };
            let (Some(since), Some(k)) = (since, &k) else {
                *out = cands.into_iter().map(NodeId).collect();
                return since.is_some();
            };
            if !schema.lookup_into(t, k, &mut cands) {
                super::index_part::label_rows(&self.base, t.0, &mut cands);
            }
            since
        };
        let Some(k) = k else { return true };
        self.base.index_lookup(t, &k, &mut cands);
        if since > self.schema_version {
            cands.extend(self.nodes.keys().copied());
        } else if self.tx_index.is_empty() {
            // Nothing written under an index (the common read-only case): no lookup needed.
        } else if let Some(own) = self.tx_index.get(&(t.clone(), k.clone())) {
            cands.extend(own.iter().copied());
        }
        if cands.len() > 1 {
            cands.sort_unstable();
            cands.dedup();
        }
        cands.retain(|id| {
            self.with_node(*id, |d| d.key_for(t.0, &t.1).as_ref() == Some(&k)) == Some(true)
        });
        *out = cands.into_iter().map(NodeId).collect();
        true
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

    /// Nodes with `label` whose property `key` is a string containing `needle` (or, with
    /// `ends`, ending with it), in id order, through the TEXT index's trigram postings; `None`
    /// if no online TEXT index covers `(label, key)` (the caller scans).
    pub fn index_text(
        &self,
        label: TokenId,
        key: TokenId,
        needle: &str,
        ends: bool,
    ) -> Option<Vec<NodeId>> {
        let m = match ends {
            true => TextMatch::EndsWith(needle.into()),
            false => TextMatch::Contains(needle.into()),
        };
        let t: Target = (label, vec![key]);
        let schema = self.core.schema.read();
        if !schema.text_indexed(label, key) {
            return None;
        }
        let since = schema.indexed_since(label, &t.1)?;
        schema.note_read(false, label, &t.1, true, false);
        let mut cands = Vec::new();
        schema.text_lookup(&t, &m, &mut cands);
        drop(schema);
        self.base.text_match(&t, &m, &mut cands);
        if since > self.schema_version {
            cands.extend(self.nodes.keys().copied());
        } else {
            let strings = KeyRange::prefix("");
            for ((tt, k), ids) in self.tx_index.range((t.clone(), strings.start())..) {
                if *tt != t || strings.past_end(k) {
                    break;
                }
                if matches!(k, IndexKey::Str(s) if m.matches(s)) {
                    cands.extend(ids.iter().copied());
                }
            }
        }
        cands.sort_unstable();
        cands.dedup();
        let hit = |k: Option<IndexKey>| matches!(k, Some(IndexKey::Str(s)) if m.matches(&s));
        cands.retain(|id| self.with_node(*id, |d| hit(d.key_for(label, &t.1))) == Some(true));
        Some(cands.into_iter().map(NodeId).collect())
    }

    /// Nodes with `label` whose property `key` is a point `q` may accept (a superset inside
    /// `q`'s boxes: the caller checks the predicate), in id order, through the POINT index's
    /// Z-order; `None` if no online POINT index covers `(label, key)` (the caller scans).
    pub fn index_point(&self, label: TokenId, key: TokenId, q: &PointQuery) -> Option<Vec<NodeId>> {
        let t: Target = (label, vec![key]);
        let schema = self.core.schema.read();
        if !schema.kind_indexed(IndexKind::Point, false, label, key) {
            return None;
        }
        let since = schema.indexed_since(label, &t.1)?;
        schema.note_read(false, label, &t.1, false, true);
        let boxes = q.boxes();
        let mut cands = Vec::new();
        schema.point_lookup(false, &t, &boxes, &mut cands);
        drop(schema);
        self.base.index_points(&t, &boxes, &mut cands);
        let inside = |k: &IndexKey| boxes.iter().any(|b| b.contains(k));
        if since > self.schema_version {
            cands.extend(self.nodes.keys().copied());
        } else {
            for b in &boxes {
                for ((tt, k), ids) in self.tx_index.range((t.clone(), b.start())..) {
                    if *tt != t || *k > b.end() {
                        break;
                    }
                    if b.contains(k) {
                        cands.extend(ids.iter().copied());
                    }
                }
            }
        }
        cands.sort_unstable();
        cands.dedup();
        cands.retain(|id| {
            self.with_node(*id, |d| d.key_for(label, &t.1).is_some_and(|k| inside(&k)))
                == Some(true)
        });
        Some(cands.into_iter().map(NodeId).collect())
    }

    /// Relationships of type `ty` whose property `key` is a point `q` may accept (as
    /// [`Transaction::index_point`]); `None` if no online POINT index covers `(ty, key)`.
    pub fn rel_index_point(&self, ty: TokenId, key: TokenId, q: &PointQuery) -> Option<Vec<RelId>> {
        let t: Target = (ty, vec![key]);
        let schema = self.core.schema.read();
        if !schema.kind_indexed(IndexKind::Point, true, ty, key) {
            return None;
        }
        schema.note_read(true, ty, &t.1, false, true);
        let boxes = q.boxes();
        let mut cands = Vec::new();
        schema.point_lookup(true, &t, &boxes, &mut cands);
        drop(schema);
        let inside = |k: &IndexKey| boxes.iter().any(|b| b.contains(k));
        Some(self.rel_candidates(cands, &t, inside))
    }

    /// Relationships of type `ty` whose property `key` is a string containing `needle` (or,
    /// with `ends`, ending with it), in id order; `None` if no online TEXT index covers
    /// `(ty, key)` (the caller scans).
    pub fn rel_index_text(
        &self,
        ty: TokenId,
        key: TokenId,
        needle: &str,
        ends: bool,
    ) -> Option<Vec<RelId>> {
        let m = match ends {
            true => TextMatch::EndsWith(needle.into()),
            false => TextMatch::Contains(needle.into()),
        };
        let t: Target = (ty, vec![key]);
        let schema = self.core.schema.read();
        if !schema.kind_indexed(IndexKind::Text, true, ty, key) {
            return None;
        }
        schema.note_read(true, ty, &t.1, true, false);
        let mut cands = Vec::new();
        schema.rel_text_lookup(&t, &m, &mut cands);
        drop(schema);
        let hit = |k: &IndexKey| matches!(k, IndexKey::Str(s) if m.matches(s));
        Some(self.rel_candidates(cands, &t, hit))
    }

    /// The visible relationships among `cands` and this transaction's own writes whose key
    /// for `t` passes `keep`, in id order.
    fn rel_candidates(
        &self,
        mut cands: Vec<u64>,
        t: &Target,
        keep: impl Fn(&IndexKey) -> bool,
    ) -> Vec<RelId> {
        // This transaction's own writes are not in the shared index: all are candidates.
        cands.extend(self.rels.keys().copied());
        cands.sort_unstable();
        cands.dedup();
        cands.retain(|id| {
            self.with_rel(*id, |r| r.to_data().key_for(t.0, &t.1).is_some_and(|k| keep(&k)))
                == Some(true)
        });
        cands.into_iter().map(RelId).collect()
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

    pub(super) fn range_seek(&self, t: &Target, r: &KeyRange) -> Option<Vec<NodeId>> {
        let schema = self.core.schema.read();
        let since = schema.indexed_since(t.0, &t.1)?;
        if schema.parts.contains_key(t) && !self.base.indexes(t) {
            // The base rows' entries are hash-ordered only (`Schema::parts`): the caller
            // scans until a base indexes the target.
            return None;
        }
        schema.note_read(false, t.0, &t.1, r.group == 2, false);
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
        let any = super::counts::ANY;
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
}
