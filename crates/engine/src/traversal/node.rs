//! [`NodeRef`]: a node seen through a transaction, the view expanders, evaluators and paths
//! read through.

use arbor_model::graph::{Direction, Edge, TokenId};
use arbor_model::{NodeId, Value};
use arbor_storage::{NodeHandle, Transaction};

use crate::tokens::{Label, PropertyKey, RelType};

/// A node seen through a transaction: cheap to copy, reads on demand. It is resolved once
/// (a storage [`NodeHandle`]), so repeated reads of one node do not repeat the lookup.
#[derive(Clone, Copy)]
pub struct NodeRef<'t> {
    pub(super) h: NodeHandle<'t>,
}

impl<'t> NodeRef<'t> {
    pub(crate) fn new(tx: &'t Transaction, id: NodeId) -> NodeRef<'t> {
        NodeRef { h: tx.node_handle(id) }
    }

    pub fn id(&self) -> NodeId {
        self.h.id()
    }

    #[inline]
    pub fn has_label(&self, label: Label) -> bool {
        self.h.has_label(label.0)
    }

    pub fn labels(&self) -> Vec<Label> {
        self.h.labels().into_iter().map(Label).collect()
    }

    /// The property's value; `None` if the node has no such property.
    #[inline]
    pub fn property(&self, key: PropertyKey) -> Option<Value> {
        self.h.property(key.0)
    }

    /// Appends the node's relationships in `dir` whose type is one of `types` (all if empty).
    #[inline]
    pub fn relationships(&self, dir: Direction, types: &[RelType], out: &mut Vec<Edge>) {
        // Not through `with_type_ids`: its closure would be an out-of-line call taking the
        // handle through memory (see `NodeHandle::edges_into`).
        // No type or one type (the usual expander) passes a slice of its own: no buffer to
        // clear and fill per node.
        const INLINE: usize = 8;
        match types {
            [] => self.h.edges_into(dir, &[], out),
            [t] => self.h.edges_into(dir, &[t.0], out),
            _ if types.len() > INLINE => {
                let ids: Vec<TokenId> = types.iter().map(|t| t.0).collect();
                self.h.edges_into(dir, &ids, out);
            }
            _ => {
                let mut buf = [0 as TokenId; INLINE];
                for (slot, t) in buf.iter_mut().zip(types) {
                    *slot = t.0;
                }
                self.h.edges_into(dir, &buf[..types.len()], out);
            }
        }
    }

    /// Number of relationships `relationships` would append.
    pub fn degree(&self, dir: Direction, types: &[RelType]) -> u64 {
        let mut n = 0;
        with_type_ids(types, |ids| self.h.for_each_edge(dir, ids, |_| n += 1));
        n
    }
}

impl std::fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeRef({})", self.h.id().0)
    }
}

/// Runs `f` on the raw token ids of `types` without allocating for the usual handful of types.
#[inline(always)]
pub(super) fn with_type_ids<R>(types: &[RelType], f: impl FnOnce(&[TokenId]) -> R) -> R {
    const INLINE: usize = 8;
    if types.len() <= INLINE {
        let mut buf = [0 as TokenId; INLINE];
        for (slot, t) in buf.iter_mut().zip(types) {
            *slot = t.0;
        }
        f(&buf[..types.len()])
    } else {
        let ids: Vec<TokenId> = types.iter().map(|t| t.0).collect();
        f(&ids)
    }
}
