//! Lazy result streams: rows from the executor or precomputed, and their summaries.
//!
//! **Invariant:** a row leaves the engine with its entities materialised
//! (`Value::NodeData`/`RelData`/`PathData`, done once by the executor as it yields the row),
//! never as the transaction-bound references (`Value::Node`/`Relationship`/`Path`) operators
//! pass among themselves; checked in debug builds here and by the tests below, and relied on
//! by the Bolt encoder, which has no case for references.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arbor_exec::graph::Stats;
use arbor_exec::Execution;
use arbor_model::{Result, Value};
use arbor_storage::{Store, Transaction};

use super::{Notification, QueryType, Summary};
use crate::graph_impl::TxGraph;

/// Where a result's rows come from.
pub(super) enum Source {
    Exec(Box<Execution>),
    /// Precomputed rows (schema and `SHOW` commands, `EXPLAIN`).
    Rows(VecDeque<Vec<Value>>),
}

pub(crate) struct OpenResult {
    pub(super) source: Source,
    pub(super) query_type: QueryType,
    /// Counters of work done outside the executor (schema commands).
    pub(super) extra_stats: Stats,
    pub(super) plan: Option<Value>,
    pub(super) profile: bool,
    pub(super) notifications: Arc<[Notification]>,
    pub(super) started: Instant,
    pub(super) done: bool,
    /// Rows handed to the client so far (a statement that sent none may be re-run).
    pub(super) emitted: u64,
    /// How to re-run the statement after a write conflict (auto-commit only; retry.rs).
    pub(super) retry: Option<super::retry::Retry>,
}

impl OpenResult {
    pub(super) fn rows(rows: Vec<Vec<Value>>, query_type: QueryType, stats: Stats) -> OpenResult {
        OpenResult {
            source: Source::Rows(rows.into()),
            query_type,
            extra_stats: stats,
            plan: None,
            profile: false,
            notifications: Arc::from(Vec::new()),
            started: Instant::now(),
            done: false,
            emitted: 0,
            retry: None,
        }
    }

    /// Produces up to `n` rows (`n < 0`: all) into `sink` (rows are dropped when `sink` is
    /// `None`, as DISCARD does). Returns true when the result is exhausted.
    pub(super) fn produce(
        &mut self,
        tx: &mut Transaction,
        batch_store: Option<&Store>,
        import_dir: Option<&Path>,
        n: i64,
        mut sink: Option<&mut dyn FnMut(Vec<Value>) -> Result<()>>,
    ) -> Result<bool> {
        let mut produced: i64 = 0;
        while n < 0 || produced < n {
            let row = match &mut self.source {
                Source::Exec(exec) => exec.next(&mut TxGraph { tx, batch_store, import_dir })?,
                Source::Rows(rows) => rows.pop_front(),
            };
            // A base page that could not be read (I/O, checksum) left a read without its
            // answer: the query fails instead of returning rows computed without it.
            if let Some(e) = tx.read_error() {
                return Err(e.clone());
            }
            let Some(row) = row else {
                self.done = true;
                return Ok(true);
            };
            debug_assert!(row.iter().all(materialised), "an entity reference leaves the engine");
            if let Some(sink) = sink.as_mut() {
                self.emitted += 1;
                sink(row)?;
            }
            produced += 1;
        }
        // Peek whether anything is left, so the last batch reports `has_more: false` correctly
        // without computing a row the client did not ask for: only precomputed sources know.
        if let Source::Rows(rows) = &self.source {
            if rows.is_empty() {
                self.done = true;
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub(super) fn summary(&self, bookmark: Option<String>) -> Summary {
        let mut stats = self.extra_stats;
        let mut plan = self.plan.clone();
        if let Source::Exec(exec) = &self.source {
            add_stats(&mut stats, &exec.stats());
            if self.profile {
                plan = Some(exec.profile());
            }
        }
        Summary {
            stats,
            query_type: self.query_type,
            bookmark,
            notifications: self.notifications.to_vec(),
            t_last_ms: self.started.elapsed().as_millis() as u64,
            plan,
            profiled: self.profile,
        }
    }
}

fn add_stats(into: &mut Stats, s: &Stats) {
    into.nodes_created += s.nodes_created;
    into.nodes_deleted += s.nodes_deleted;
    into.relationships_created += s.relationships_created;
    into.relationships_deleted += s.relationships_deleted;
    into.properties_set += s.properties_set;
    into.labels_added += s.labels_added;
    into.labels_removed += s.labels_removed;
    into.indexes_added += s.indexes_added;
    into.indexes_removed += s.indexes_removed;
    into.constraints_added += s.constraints_added;
    into.constraints_removed += s.constraints_removed;
    into.system_updates += s.system_updates;
}

/// Whether `v` holds no transaction-bound entity reference, at any depth.
fn materialised(v: &Value) -> bool {
    match v {
        Value::Node(_) | Value::Relationship(_) | Value::Path(_) => false,
        Value::List(items) => items.iter().all(materialised),
        Value::Map(m) => m.values().all(materialised),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use arbor_model::{PropertyMap, Value};

    use super::materialised;
    use crate::{Database, PullOutcome, TxConfig};

    /// Every value `query` returns.
    fn values(db: &Database, query: &str) -> Vec<Value> {
        let mut s = db.session();
        s.run(query, PropertyMap::new(), TxConfig::default()).unwrap();
        let mut out = Vec::new();
        let mut sink = |row: Vec<Value>| {
            out.extend(row);
            Ok(())
        };
        assert!(matches!(s.pull(None, -1, &mut sink).unwrap(), PullOutcome::Done(_)));
        out
    }

    #[test]
    fn results_leave_the_engine_materialised() {
        let db = Database::in_memory();
        let created = values(
            &db,
            "CREATE p = (a:A {x: 1})-[r:R {w: 2}]->(b:B) \
             RETURN a, r, p, [a, [b]] AS l, {n: a, m: {r: r}} AS m",
        );
        let matched = values(
            &db,
            "MATCH p = (a)-[r]->(b) OPTIONAL MATCH (b)-[q]->() \
             RETURN a, r, p, q, collect(b) AS bs, nodes(p) AS ns, relationships(p) AS rs",
        );
        for v in created.iter().chain(&matched) {
            assert!(materialised(v), "{v:?}");
        }
        assert!(matches!(&created[0], Value::NodeData(n) if n.labels.len() == 1));
        assert!(matches!(&matched[2], Value::PathData(_)));
        assert!(!materialised(&Value::List(vec![Value::Map(
            [("n", Value::Node(arbor_model::NodeId(0)))].into_iter().collect()
        )])));
    }
}
