//! Commit observers: a layer above storage (the engine's full-text indexes) sees each commit's
//! new entity versions, in commit-timestamp order, so it can maintain its own index data
//! without scanning. The observer runs under the commit mutex: it must only queue the versions
//! (cheap `Arc` clones) and return; the work happens elsewhere.

use std::sync::Arc;

use arbor_model::Value;

use crate::records::{prop_of, NodeData, RelData};
use crate::types::TokenId;

/// Receives every commit with writes while it is installed (see `Store::set_commit_observer`).
pub trait CommitObserver: Send + Sync {
    /// Commit `ts` installed `changes`. Called under the commit mutex, in timestamp order,
    /// before the commit becomes visible; must not call back into the store.
    fn committed(&self, ts: u64, changes: &CommitChanges<'_>);
}

/// The entity versions one commit installed.
pub struct CommitChanges<'a> {
    pub(crate) nodes: &'a [(u64, Option<Arc<NodeData>>)],
    pub(crate) rels: &'a [(u64, Option<Arc<RelData>>)],
}

impl CommitChanges<'_> {
    /// The new versions of the nodes the commit wrote (created, changed or deleted).
    pub fn nodes(&self) -> impl Iterator<Item = EntityVersion> + '_ {
        self.nodes.iter().map(|(id, d)| EntityVersion { id: *id, data: d.clone().map(Data::Node) })
    }

    /// The new versions of the relationships the commit wrote.
    pub fn rels(&self) -> impl Iterator<Item = EntityVersion> + '_ {
        self.rels.iter().map(|(id, d)| EntityVersion { id: *id, data: d.clone().map(Data::Rel) })
    }
}

/// One committed version of a node or relationship (`None` data: deleted).
#[derive(Clone, Debug)]
pub struct EntityVersion {
    id: u64,
    data: Option<Data>,
}

#[derive(Clone, Debug)]
enum Data {
    Node(Arc<NodeData>),
    Rel(Arc<RelData>),
}

impl EntityVersion {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether the entity exists after the commit.
    pub fn exists(&self) -> bool {
        self.data.is_some()
    }

    /// Whether a node has label `token`, or a relationship has type `token`.
    pub fn has_token(&self, token: TokenId) -> bool {
        match &self.data {
            Some(Data::Node(n)) => n.has_label(token),
            Some(Data::Rel(r)) => r.ty == token,
            None => false,
        }
    }

    /// The value of property `key`, if the entity exists and has it.
    pub fn prop(&self, key: TokenId) -> Option<&Value> {
        match &self.data {
            Some(Data::Node(n)) => n.prop(key),
            Some(Data::Rel(r)) => prop_of(&r.props, key),
            None => None,
        }
    }
}
