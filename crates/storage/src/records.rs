//! Record types shared by every layer: a node's labels and properties ([`NodeData`]), a
//! relationship ([`RelData`]), and sorted property-list helpers.

use arbor_model::Value;

use crate::value::{target_key, IndexKey};

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
