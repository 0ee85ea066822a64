//! Typed batch reads for scans: a batch of visible nodes' values of one integer property as
//! plain integers and a presence mask ([`Transaction::node_int_gather`]), read from the
//! base's integer column in one pass and overlaid, row by row, only where this transaction's
//! view differs from the base (a delta version, an own write, a node newer than the base).

use arbor_model::{NodeId, Value};

use crate::types::TokenId;

use super::tx::Transaction;

impl Transaction {
    /// Appends to `vals` each node's value of property `key` (`0` where it lacks it) and to
    /// `present` whether it has one, exactly as [`node_property`](Self::node_property) reads
    /// them, and returns `true`; or returns `false` with nothing appended when the batch
    /// cannot be read as integers: the base has no integer column for the key (some base node
    /// holds another type), or a node this transaction sees in another version than the base
    /// row holds a non-integer value.
    ///
    /// The clean rows (no delta version at any snapshot, not written by this transaction) are
    /// the base column's values (`IntColumn::gather`, one
    /// slice when the ids are a run). The others are overwritten with their visible version's
    /// value; with no delta version in the base and no own write, only ids past the base are.
    /// `ids` should be visible nodes (a scan's); an invisible one reads as missing.
    pub fn node_int_gather(
        &self,
        ids: &[NodeId],
        key: TokenId,
        vals: &mut Vec<i64>,
        present: &mut Vec<bool>,
    ) -> bool {
        let Some(col) = self.base.int_column(key) else { return false };
        let start = vals.len();
        col.gather(ids, vals, present);
        let own = !self.nodes.is_empty();
        let end = self.base.node_end;
        let ok = if !own && !self.base.any_node_dirty() {
            // Only nodes newer than the base differ from it.
            ids.iter().all(|id| id.0 < end)
                || self.overlay(ids, key, start, vals, present, |id| id >= end)
        } else {
            self.overlay(ids, key, start, vals, present, |id| {
                self.base.node_dirty(id) || own && self.nodes.contains_key(&id)
            })
        };
        if !ok {
            vals.truncate(start);
            present.truncate(start);
        }
        ok
    }

    /// Overwrites the entries (from `start` on) of the ids `touched` picks with their visible
    /// version's value; `false` at the first non-integer one.
    #[inline(never)]
    fn overlay(
        &self,
        ids: &[NodeId],
        key: TokenId,
        start: usize,
        vals: &mut [i64],
        present: &mut [bool],
        touched: impl Fn(u64) -> bool,
    ) -> bool {
        let (vals, present) = (&mut vals[start..], &mut present[start..]);
        for ((id, v), p) in ids.iter().zip(vals.iter_mut()).zip(present.iter_mut()) {
            if !touched(id.0) {
                continue;
            }
            match self.node_property(*id, key) {
                Some(Value::Int(x)) => (*v, *p) = (x, true),
                None => (*v, *p) = (0, false),
                Some(_) => return false,
            }
        }
        true
    }
}
