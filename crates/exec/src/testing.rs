//! A small in-memory graph ([`GraphRead`] + [`GraphWrite`]) for this crate's tests (and, with
//! the `testing` feature, other crates'): no MVCC, no durability, linear scans for
//! relationships. Property-equality indexes can be declared with [`MemGraph::add_index`] so
//! `index_seek` answers.

use std::collections::{BTreeMap, HashSet};

use arbor_model::{equals, Error, NodeId, RelId, Result, Status, Value};

use crate::graph::{Direction, Edge, GraphRead, GraphWrite, TokenId, TokenKind};

#[derive(Clone, Debug, Default)]
struct MemNode {
    labels: Vec<TokenId>,
    props: BTreeMap<TokenId, Value>,
}

#[derive(Clone, Debug)]
struct MemRel {
    start: NodeId,
    end: NodeId,
    rel_type: TokenId,
    props: BTreeMap<TokenId, Value>,
}

/// An in-memory graph.
#[derive(Clone, Debug, Default)]
pub struct MemGraph {
    tokens: [Vec<String>; 3],
    nodes: BTreeMap<u64, MemNode>,
    rels: BTreeMap<u64, MemRel>,
    next_node: u64,
    next_rel: u64,
    deleted_nodes: HashSet<u64>,
    deleted_rels: HashSet<u64>,
    indexes: HashSet<(TokenId, TokenId)>,
    /// When set, writes fail with `ForbiddenOnReadOnly`.
    pub read_only: bool,
    /// Calls of `node_property_batch` so far (tests count the late column reads).
    pub batch_reads: std::cell::Cell<u64>,
    /// Where `scratch_file` makes its files (`None`: it has none, as a graph without a disk).
    pub scratch_dir: Option<std::path::PathBuf>,
    /// Scratch files handed out so far.
    pub scratch_files: std::cell::Cell<u64>,
}

fn kind_ix(k: TokenKind) -> usize {
    match k {
        TokenKind::Label => 0,
        TokenKind::RelType => 1,
        TokenKind::PropertyKey => 2,
    }
}

impl MemGraph {
    pub fn new() -> MemGraph {
        MemGraph::default()
    }

    /// Declares an index on `(label, key)` so `index_seek` answers for it.
    pub fn add_index(&mut self, label: &str, key: &str) {
        let l = self.intern(TokenKind::Label, label);
        let k = self.intern(TokenKind::PropertyKey, key);
        self.indexes.insert((l, k));
    }

    fn intern(&mut self, kind: TokenKind, name: &str) -> TokenId {
        let v = &mut self.tokens[kind_ix(kind)];
        match v.iter().position(|n| n == name) {
            Some(i) => i as TokenId,
            None => {
                v.push(name.to_string());
                (v.len() - 1) as TokenId
            }
        }
    }

    /// Number of live nodes and relationships.
    pub fn sizes(&self) -> (usize, usize) {
        (self.nodes.len(), self.rels.len())
    }

    /// Forgets which entities were deleted (as a commit would).
    pub fn commit(&mut self) {
        self.deleted_nodes.clear();
        self.deleted_rels.clear();
    }

    fn writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::new(Status::ForbiddenOnReadOnly, "read-only transaction"));
        }
        Ok(())
    }

    fn matches(&self, r: &MemRel, node: NodeId, dir: Direction, types: &[TokenId]) -> Option<Edge> {
        if !types.is_empty() && !types.contains(&r.rel_type) {
            return None;
        }
        None.or_else(|| {
            (matches!(dir, Direction::Outgoing | Direction::Both) && r.start == node)
                .then_some((r.end, Direction::Outgoing))
        })
        .or_else(|| {
            (matches!(dir, Direction::Incoming | Direction::Both) && r.end == node)
                .then_some((r.start, Direction::Incoming))
        })
        .map(|(other, d)| Edge { rel: RelId(0), other, dir: d })
    }
}

impl GraphRead for MemGraph {
    /// A graph made read-only cannot change any more: it reads like a committed snapshot
    /// (so an execution's late property columns stay valid across `next` calls).
    fn committed_snapshot(&self) -> Option<u64> {
        self.read_only.then_some(0)
    }
    fn node_property_batch(&self, ids: &[NodeId], key: TokenId, out: &mut Vec<Value>) {
        self.batch_reads.set(self.batch_reads.get() + 1);
        out.extend(ids.iter().map(|id| self.node_property(*id, key).unwrap_or(Value::Null)));
    }
    fn token_id(&self, kind: TokenKind, name: &str) -> Option<TokenId> {
        self.tokens[kind_ix(kind)].iter().position(|n| n == name).map(|i| i as TokenId)
    }
    fn token_name(&self, kind: TokenKind, id: TokenId) -> Option<String> {
        self.tokens[kind_ix(kind)].get(id as usize).cloned()
    }
    fn tokens(&self, kind: TokenKind) -> Vec<(TokenId, String)> {
        self.tokens[kind_ix(kind)]
            .iter()
            .enumerate()
            .map(|(i, n)| (i as TokenId, n.clone()))
            .collect()
    }
    fn next_node(&self, label: Option<TokenId>, from: NodeId) -> Option<NodeId> {
        self.nodes
            .range(from.0..)
            .find(|(_, n)| label.is_none_or(|l| n.labels.contains(&l)))
            .map(|(id, _)| NodeId(*id))
    }
    fn node_exists(&self, id: NodeId) -> bool {
        self.nodes.contains_key(&id.0)
    }
    fn node_labels(&self, id: NodeId) -> Vec<TokenId> {
        self.nodes.get(&id.0).map(|n| n.labels.clone()).unwrap_or_default()
    }
    fn node_has_label(&self, id: NodeId, label: TokenId) -> bool {
        self.nodes.get(&id.0).is_some_and(|n| n.labels.contains(&label))
    }
    fn node_property(&self, id: NodeId, key: TokenId) -> Option<Value> {
        self.nodes.get(&id.0)?.props.get(&key).cloned()
    }
    fn node_properties(&self, id: NodeId) -> Vec<(TokenId, Value)> {
        self.nodes
            .get(&id.0)
            .map(|n| n.props.iter().map(|(k, v)| (*k, v.clone())).collect())
            .unwrap_or_default()
    }
    fn node_edges(&self, node: NodeId, dir: Direction, types: &[TokenId], out: &mut Vec<Edge>) {
        for (id, r) in &self.rels {
            if let Some(mut e) = self.matches(r, node, dir, types) {
                e.rel = RelId(*id);
                out.push(e);
            }
        }
    }
    fn degree(&self, node: NodeId, dir: Direction, types: &[TokenId]) -> u64 {
        let mut v = Vec::new();
        self.node_edges(node, dir, types, &mut v);
        v.len() as u64
    }
    fn index_seek(&self, label: TokenId, key: TokenId, value: &Value) -> Option<Vec<NodeId>> {
        if !self.indexes.contains(&(label, key)) {
            return None;
        }
        Some(
            self.nodes
                .iter()
                .filter(|(_, n)| n.labels.contains(&label))
                .filter(|(_, n)| n.props.get(&key).is_some_and(|v| equals(v, value) == Some(true)))
                .map(|(id, _)| NodeId(*id))
                .collect(),
        )
    }
    fn count_nodes(&self, label: Option<TokenId>) -> u64 {
        self.nodes.values().filter(|n| label.is_none_or(|l| n.labels.contains(&l))).count() as u64
    }
    fn rel_exists(&self, id: RelId) -> bool {
        self.rels.contains_key(&id.0)
    }
    fn rel_info(&self, id: RelId) -> Option<(NodeId, NodeId, TokenId)> {
        self.rels.get(&id.0).map(|r| (r.start, r.end, r.rel_type))
    }
    fn rel_property(&self, id: RelId, key: TokenId) -> Option<Value> {
        self.rels.get(&id.0)?.props.get(&key).cloned()
    }
    fn rel_properties(&self, id: RelId) -> Vec<(TokenId, Value)> {
        self.rels
            .get(&id.0)
            .map(|r| r.props.iter().map(|(k, v)| (*k, v.clone())).collect())
            .unwrap_or_default()
    }
    fn next_rel(&self, types: &[TokenId], from: RelId) -> Option<RelId> {
        self.rels
            .range(from.0..)
            .find(|(_, r)| types.is_empty() || types.contains(&r.rel_type))
            .map(|(id, _)| RelId(*id))
    }
    fn node_deleted_in_tx(&self, id: NodeId) -> bool {
        self.deleted_nodes.contains(&id.0)
    }
    fn rel_deleted_in_tx(&self, id: RelId) -> bool {
        self.deleted_rels.contains(&id.0)
    }
}

impl GraphWrite for MemGraph {
    fn get_or_create_token(&mut self, kind: TokenKind, name: &str) -> Result<TokenId> {
        Ok(self.intern(kind, name))
    }
    fn scratch_file(&mut self) -> Option<std::fs::File> {
        let dir = self.scratch_dir.as_ref()?;
        let n = self.scratch_files.get();
        self.scratch_files.set(n + 1);
        let path = dir.join(format!("scratch-{}-{n}", std::process::id()));
        let f =
            std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).ok()?;
        std::fs::remove_file(&path).ok()?;
        Some(f)
    }
    fn create_node(&mut self, labels: &[TokenId], props: Vec<(TokenId, Value)>) -> Result<NodeId> {
        self.writable()?;
        let id = self.next_node;
        self.next_node += 1;
        self.nodes.insert(
            id,
            MemNode {
                labels: labels.to_vec(),
                props: props.into_iter().filter(|(_, v)| !v.is_null()).collect(),
            },
        );
        Ok(NodeId(id))
    }
    fn create_rel(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: TokenId,
        props: Vec<(TokenId, Value)>,
    ) -> Result<RelId> {
        self.writable()?;
        if !self.node_exists(start) || !self.node_exists(end) {
            return Err(Error::new(Status::EntityNotFound, "node does not exist"));
        }
        let id = self.next_rel;
        self.next_rel += 1;
        self.rels.insert(
            id,
            MemRel {
                start,
                end,
                rel_type,
                props: props.into_iter().filter(|(_, v)| !v.is_null()).collect(),
            },
        );
        Ok(RelId(id))
    }
    fn set_node_property(&mut self, id: NodeId, key: TokenId, value: Value) -> Result<()> {
        self.writable()?;
        let n = self
            .nodes
            .get_mut(&id.0)
            .ok_or_else(|| Error::new(Status::EntityNotFound, "node does not exist"))?;
        if value.is_null() {
            n.props.remove(&key);
        } else {
            n.props.insert(key, value);
        }
        Ok(())
    }
    fn set_rel_property(&mut self, id: RelId, key: TokenId, value: Value) -> Result<()> {
        self.writable()?;
        let r = self
            .rels
            .get_mut(&id.0)
            .ok_or_else(|| Error::new(Status::EntityNotFound, "relationship does not exist"))?;
        if value.is_null() {
            r.props.remove(&key);
        } else {
            r.props.insert(key, value);
        }
        Ok(())
    }
    fn add_label(&mut self, id: NodeId, label: TokenId) -> Result<bool> {
        self.writable()?;
        let n = self
            .nodes
            .get_mut(&id.0)
            .ok_or_else(|| Error::new(Status::EntityNotFound, "node does not exist"))?;
        if n.labels.contains(&label) {
            return Ok(false);
        }
        n.labels.push(label);
        Ok(true)
    }
    fn remove_label(&mut self, id: NodeId, label: TokenId) -> Result<bool> {
        self.writable()?;
        let n = self
            .nodes
            .get_mut(&id.0)
            .ok_or_else(|| Error::new(Status::EntityNotFound, "node does not exist"))?;
        let before = n.labels.len();
        n.labels.retain(|l| *l != label);
        Ok(n.labels.len() != before)
    }
    fn delete_node(&mut self, id: NodeId) -> Result<()> {
        self.writable()?;
        if self.rels.values().any(|r| r.start == id || r.end == id) {
            return Err(Error::new(
                Status::DeleteNodeWithRelationships,
                format!(
                    "Cannot delete node<{}>, because it still has relationships. To delete this \
                     node, you must first delete its relationships.",
                    id.0
                ),
            ));
        }
        if self.nodes.remove(&id.0).is_some() {
            self.deleted_nodes.insert(id.0);
        }
        Ok(())
    }
    fn delete_rel(&mut self, id: RelId) -> Result<()> {
        self.writable()?;
        if self.rels.remove(&id.0).is_some() {
            self.deleted_rels.insert(id.0);
        }
        Ok(())
    }
}
