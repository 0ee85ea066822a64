//! `GraphRead::count_trails` over a storage transaction: the depth-first trail count of Cypher's
//! `VarLengthExpand(Count)` (`MATCH (:Root)-[:HAS_B|HAS_A*]->(b:B) WHERE b.value RETURN
//! count(b)`) run as the native traversal runs, on storage node handles.
//!
//! Through the `Graph` seam each reached node costs a virtual `node_expand_probe` call, its
//! arguments packed and its probe's values pushed into a buffer, the end written into the
//! working row and the remaining filter evaluated on it. Here the same enumeration (the same
//! [`DepthFirst`] path stack with relationship masks, the same order) resolves each reached
//! node once into a [`NodeHandle`], appends its relationships straight from the storage CSR
//! (`NodeHandle::edges_into`: the clean-base fast path where the node and the store are
//! unwritten, the general delta-aware read otherwise), and tests the end's labels and boolean
//! property on that handle.
//!
//! Why the count is the operator's: `TxGraph::node_edges` and `node_probe` are these same
//! handle reads (`edges_into`, `has_label`, `property`), the relationship check is the
//! operator's (`path_has_rel` on the current path only), and the filter `b:L... AND b.key` is
//! true exactly when every label is present and the value is `true` (a missing property or a
//! null is not true). A value of another type would make the filter raise an error: the
//! count gives up (`None`) and the operator counts step by step, raising it.

use arbor_exec::graph::{TrailCount, TrailStack};
use arbor_model::{Result, Value};
use arbor_storage::Transaction;

/// How many steps between two calls of the interrupt check.
const CHECK_EVERY: u64 = 1024;

/// The count [`TrailCount`] describes, on `tx`'s snapshot (see the module doc).
pub(crate) fn count_trails(
    tx: &Transaction,
    q: &TrailCount<'_>,
    dfs: &mut TrailStack,
    check: &mut dyn FnMut() -> Result<()>,
) -> Option<Result<u64>> {
    let counted = walk(tx, q, dfs, check);
    dfs.clear();
    counted
}

/// The enumeration of [`count_trails`] (the stack is left for the caller to clear).
fn walk(
    tx: &Transaction,
    q: &TrailCount<'_>,
    dfs: &mut TrailStack,
    check: &mut dyn FnMut() -> Result<()>,
) -> Option<Result<u64>> {
    let (dir, types, min, max) = (q.dir, q.types, q.min, q.max);
    let mut n = 0u64;
    if max == 0 {
        return Some(Ok(0));
    }
    dfs.reset(q.start);
    let h = tx.node_handle(q.start);
    dfs.expand_top(|_, out| h.edges_into(dir, types, out));
    let mut steps = 0u64;
    while let Some(e) = dfs.next_edge() {
        steps += 1;
        if steps.is_multiple_of(CHECK_EVERY) {
            if let Err(err) = check() {
                return Some(Err(err));
            }
        }
        if dfs.path_has_rel(e.rel) {
            continue;
        }
        dfs.push(e.other, e.rel);
        let depth = dfs.depth() as u64;
        let h = tx.node_handle(e.other);
        if depth < max {
            dfs.expand_top(|_, out| h.edges_into(dir, types, out));
        }
        if depth < min || !q.labels.iter().all(|l| h.has_label(*l)) {
            continue;
        }
        let Some(key) = q.key else {
            n += 1;
            continue;
        };
        match h.property(key) {
            Some(Value::Bool(true)) => n += 1,
            None | Some(Value::Null | Value::Bool(false)) => {}
            // The filter's error is the operator's to raise.
            Some(_) => return None,
        }
    }
    Some(Ok(n))
}
