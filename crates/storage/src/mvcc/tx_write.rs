//! Transaction writes (create, set, label, delete) with statement-time unique checks, and
//! savepoints.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use arbor_model::{Error, NodeId, RelId, Result, Status, Value};

use crate::codec::MAX_ID;
use crate::records::{set_prop, Labels, NodeData, RelData};
use crate::types::{Direction, TokenId};
use crate::value::check_storable;

use super::tx::{
    node_not_found, normalize_props, outdated, rel_not_found, NodeWrite, RelWrite, Savepoint,
    Transaction, TxAdj, Undo,
};

impl Transaction {
    // ---------------------------------------------------------------- writes

    pub(super) fn writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::new(
                Status::ForbiddenOnReadOnly,
                "Writing in read access mode not allowed.",
            ));
        }
        Ok(())
    }

    /// The node's current state for an update, failing if a concurrent commit changed it.
    pub(super) fn node_for_write(&self, id: u64) -> Result<Arc<NodeData>> {
        if let Some(w) = self.nodes.get(&id) {
            return w.data.clone().ok_or_else(|| node_not_found(id));
        }
        // A base row whose properties fail to read fails the write: nothing is installed.
        let data = self.with_node(id, |n| n.try_to_data()).ok_or_else(|| node_not_found(id))??;
        if self.core.node_newest_ts(id) > self.start_ts {
            return Err(outdated("Node", id));
        }
        Ok(Arc::new(data))
    }

    pub(super) fn rel_for_write(&self, id: u64) -> Result<Arc<RelData>> {
        if let Some(w) = self.rels.get(&id) {
            return w.data.clone().ok_or_else(|| rel_not_found(id));
        }
        let data = self.with_rel(id, |r| r.try_to_data()).ok_or_else(|| rel_not_found(id))??;
        if self.core.rel_newest_ts(id) > self.start_ts {
            return Err(outdated("Relationship", id));
        }
        Ok(Arc::new(data))
    }

    pub(super) fn put_node(&mut self, id: u64, data: Option<Arc<NodeData>>, created: bool) {
        // A node created just now has a fresh id: nothing of it in the write set yet.
        let prev = if created { None } else { self.nodes.get(&id).cloned() };
        let created = created || prev.as_ref().is_some_and(|p| p.created);
        if let Some(d) = &data {
            self.track_index(id, d);
        }
        self.undo.push(Undo::Node(id, prev));
        self.nodes.insert(id, NodeWrite { data, created });
    }

    pub(super) fn put_rel(&mut self, id: u64, data: Option<Arc<RelData>>, created: bool) {
        let prev = self.rels.get(&id).cloned();
        let created = created || prev.as_ref().is_some_and(|p| p.created);
        self.undo.push(Undo::Rel(id, prev));
        self.rels.insert(id, RelWrite { data, created });
    }

    /// Remembers this transaction's index keys so `index_seek` finds its own writes.
    pub(super) fn track_index(&mut self, id: u64, d: &NodeData) {
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
    pub(super) fn check_unique(&self, id: u64, d: &NodeData) -> Result<()> {
        let targets = {
            let schema = self.core.schema.read();
            if !schema.has_unique() {
                return Ok(());
            }
            schema.unique_targets()
        };
        for t in targets {
            if let Some(key) = d.key_for(t.0, &t.1) {
                self.core.await_replayed_unique(false, &t);
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
        // Only a removal asks first (a set copies the row, failing on a bad page).
        if value.is_none()
            && !self.with_node(id.0, |d| d.has_prop(key)).ok_or_else(|| node_not_found(id.0))?
        {
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
        if value.is_none()
            && !self.with_rel(id.0, |r| r.prop(key).is_some()).ok_or_else(|| rel_not_found(id.0))?
        {
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
        if self.degree(id, Direction::Both, &[]) > 0 {
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
}
