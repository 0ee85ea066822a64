//! Lazy result streams: rows from the executor or precomputed, and their summaries.
//!
//! **Invariant:** a row leaves the engine with its entities materialised, never as the
//! transaction-bound references (`Value::Node`/`Relationship`/`Path`) operators pass among
//! themselves. A streaming consumer (Bolt) receives a [`Record`], which it can only write into
//! a `ResultWriter` (no case for a reference: checked by the type system) or materialise; the
//! owned form (`Session::pull`, `Vec<Value>`) is materialised by the executor as it yields the
//! row, checked in debug builds here and by the tests below.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arbor_exec::graph::Stats;
use arbor_exec::Execution;
use arbor_model::{Result, Value};
use arbor_storage::{Store, Transaction};

use super::record::{Names, Record};
use super::{Notification, QueryType, Summary};
use crate::graph_impl::TxGraph;

/// Where pulled rows go.
pub(crate) enum Sink<'s> {
    /// Dropped, as DISCARD does (the query still runs).
    Discard,
    /// Owned rows, materialised by the executor.
    Values(&'s mut dyn FnMut(Vec<Value>) -> Result<()>),
    /// Records written straight from the executor's row and the graph.
    Records(&'s mut dyn FnMut(&mut Record<'_>) -> Result<()>),
}

impl Sink<'_> {
    /// The same sink, reborrowed (the auto-commit loop hands it to several attempts).
    pub(super) fn reborrow(&mut self) -> Sink<'_> {
        match self {
            Sink::Discard => Sink::Discard,
            Sink::Values(f) => Sink::Values(&mut **f),
            Sink::Records(f) => Sink::Records(&mut **f),
        }
    }
}

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
    /// Token names of the records written so far.
    names: Names,
    /// The executor's row, reused from record to record.
    row: Vec<Value>,
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
            names: Names::default(),
            row: Vec::new(),
        }
    }

    /// Produces up to `n` rows (`n < 0`: all) into `sink`. Returns true when the result is
    /// exhausted.
    pub(super) fn produce(
        &mut self,
        tx: &mut Transaction,
        batch_store: Option<&Store>,
        import_dir: Option<&Path>,
        n: i64,
        mut sink: Sink<'_>,
    ) -> Result<bool> {
        let mut produced: i64 = 0;
        while n < 0 || produced < n {
            let more = match (&mut self.source, &mut sink) {
                // Records, or none: the row is not materialised first.
                (Source::Exec(exec), Sink::Records(_) | Sink::Discard) => {
                    let mut g = TxGraph { tx, batch_store, import_dir };
                    let more = exec.next_raw(&mut g, &mut self.row)?;
                    check_read(g.tx)?;
                    if let (true, Sink::Records(f)) = (more, &mut sink) {
                        self.emitted += 1;
                        f(&mut Record::new(&self.row, &g, &mut self.names))?;
                        // A read made while writing the record failed: the record is wrong.
                        check_read(g.tx)?;
                    }
                    self.row.clear();
                    more
                }
                (Source::Exec(exec), sink) => {
                    let row = exec.next(&mut TxGraph { tx, batch_store, import_dir })?;
                    check_read(tx)?;
                    match row {
                        Some(row) => {
                            emit_owned(row, sink, &mut self.emitted)?;
                            true
                        }
                        None => false,
                    }
                }
                (Source::Rows(rows), sink) => match rows.pop_front() {
                    Some(row) => {
                        match sink {
                            Sink::Records(f) => {
                                self.emitted += 1;
                                let g = TxGraph { tx, batch_store, import_dir };
                                f(&mut Record::new(&row, &g, &mut self.names))?;
                            }
                            other => emit_owned(row, other, &mut self.emitted)?,
                        }
                        true
                    }
                    None => false,
                },
            };
            if !more {
                self.done = true;
                return Ok(true);
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

/// A base page that could not be read (I/O, checksum) left a read without its answer: the
/// query fails instead of returning rows computed without it.
fn check_read(tx: &Transaction) -> Result<()> {
    match tx.read_error() {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}

/// Hands an owned row to a `Values` sink (a `Records` sink gets a record of it).
fn emit_owned(row: Vec<Value>, sink: &mut Sink<'_>, emitted: &mut u64) -> Result<()> {
    debug_assert!(row.iter().all(materialised), "an entity reference leaves the engine");
    match sink {
        Sink::Discard => Ok(()),
        Sink::Values(f) => {
            *emitted += 1;
            f(row)
        }
        Sink::Records(f) => {
            *emitted += 1;
            f(&mut Record::detached(&row, &mut Names::default()))
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
