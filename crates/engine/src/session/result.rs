//! Lazy result streams: rows from the executor or precomputed, and their summaries.
//!
//! **Invariant:** a row leaves the engine with its entities materialised, never as the
//! transaction-bound references (`Value::Node`/`Relationship`/`Path`) operators pass among
//! themselves. Every row, computed or precomputed, is handed out as a [`Record`], which a
//! consumer can only write into a `ResultWriter` (no case for a reference: checked by the type
//! system); the owned form (`Session::pull`, `Vec<ResultValue>`) is that record written into a
//! `ResultBuilder`, and `ResultValue` has no reference variant.

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
    /// Records written straight from the executor's row and the graph.
    Records(&'s mut dyn FnMut(&mut Record<'_>) -> Result<()>),
}

impl Sink<'_> {
    /// The same sink, reborrowed (the auto-commit loop hands it to several attempts).
    pub(super) fn reborrow(&mut self) -> Sink<'_> {
        match self {
            Sink::Discard => Sink::Discard,
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
        data_dir: Option<&Path>,
        n: i64,
        mut sink: Sink<'_>,
    ) -> Result<bool> {
        let mut produced: i64 = 0;
        while n < 0 || produced < n {
            let mut g = TxGraph { tx, batch_store, import_dir, data_dir };
            let more = match &mut self.source {
                // The row is written from the executor's own, never materialised first.
                Source::Exec(exec) => {
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
                Source::Rows(rows) => match rows.pop_front() {
                    Some(row) => {
                        if let Sink::Records(f) = &mut sink {
                            self.emitted += 1;
                            f(&mut Record::new(&row, &g, &mut self.names))?;
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

#[cfg(test)]
mod tests {
    use arbor_model::{PropertyMap, ResultValue};

    use crate::{Database, PullOutcome, TxConfig};

    /// Every value `query` returns.
    fn values(db: &Database, query: &str) -> Vec<ResultValue> {
        let mut s = db.session();
        s.run(query, PropertyMap::new(), TxConfig::default()).unwrap();
        let mut out = Vec::new();
        let mut sink = |row: Vec<ResultValue>| {
            out.extend(row);
            Ok(())
        };
        assert!(matches!(s.pull(None, -1, &mut sink).unwrap(), PullOutcome::Done(_)));
        out
    }

    /// `ResultValue` cannot hold a reference; what is checked here is that every entity comes
    /// out whole (labels, type, properties, a path's parts), nested ones included.
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
        assert!(matches!(&created[0], ResultValue::Node(n)
            if n.labels == ["A"] && n.properties.get("x").is_some()));
        assert!(matches!(&created[1], ResultValue::Relationship(r)
            if r.rel_type == "R" && r.properties.len() == 1));
        assert!(matches!(&matched[2], ResultValue::Path(p)
            if p.nodes.len() == 2 && p.nodes[1].labels == ["B"] && p.rels[0].rel_type == "R"));
        assert!(matches!(&created[3], ResultValue::List(l)
            if matches!(&l[1], ResultValue::List(b) if matches!(&b[0], ResultValue::Node(n) if n.labels == ["B"]))));
        let r = created[4].get("m").and_then(|m| m.get("r"));
        assert!(matches!(r, Some(ResultValue::Relationship(r)) if r.rel_type == "R"));
        assert!(matched[3].is_null());
        assert!(
            matches!(&matched[4], ResultValue::List(bs) if matches!(&bs[0], ResultValue::Node(_)))
        );
    }
}
