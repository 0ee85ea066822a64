//! `apoc.periodic.iterate` and `apoc.periodic.commit`: Cypher run in batches, each batch in
//! its own inner transaction (the `Graph::batch_*` seam `CALL { } IN TRANSACTIONS` uses), with
//! APOC's result columns.
//!
//! `iterate` runs the first statement to the end, then the second for its rows in batches of
//! `batchSize` (each row's columns as parameters, plus `config.params`); a failing batch is
//! rolled back and counted, the others commit. `parallel: true` runs the batches one after
//! another, one of the orders parallel batches may take. `commit` reruns its statement (which
//! must have a LIMIT) in a new transaction each time until it returns 0. Both need an implicit
//! transaction, as `CALL { } IN TRANSACTIONS` does.

use std::sync::Arc;
use std::time::Instant;

use arbor_cypher_plan::CypherType as T;
use arbor_model::{Error, Key, PathRef, PropertyMap, Result, Status, Value};

use super::{arg_error, col, map_arg};
use crate::graph::{Graph, Stats};
use crate::procs::Procedure;
use crate::query::{Execution, PreparedQuery};

pub(super) fn procedures() -> Vec<Procedure> {
    let int = |n: &str| col(n, T::Integer);
    let map = |n: &str| col(n, T::Map);
    let mut iterate = Procedure::new(
        "apoc.periodic.iterate",
        vec![col("cypherIterate", T::String), col("cypherAction", T::String), map("config")],
        vec![
            int("batches"),
            int("total"),
            int("timeTaken"),
            int("committedOperations"),
            int("failedOperations"),
            int("failedBatches"),
            int("retries"),
            map("errorMessages"),
            map("batch"),
            map("operations"),
            col("wasTerminated", T::Boolean),
            map("failedParams"),
            map("updateStatistics"),
        ],
        "Runs the second statement for each item returned by the first statement, in batches \
         of separate transactions.",
        iterate,
    );
    iterate.writes = true;
    let mut commit = Procedure::new(
        "apoc.periodic.commit",
        vec![col("statement", T::String), map("params")],
        vec![
            int("updates"),
            int("executions"),
            int("runtime"),
            int("batches"),
            int("failedBatches"),
            map("batchErrors"),
            int("failedCommits"),
            map("commitErrors"),
            col("wasTerminated", T::Boolean),
        ],
        "Runs the given statement in separate batched transactions until it returns 0.",
        commit,
    );
    commit.writes = true;
    commit.sig.optional = 1;
    vec![iterate, commit]
}

/// Plans `text` with the built-in procedures.
pub(super) fn prepare(proc_name: &str, text: &str) -> Result<Arc<PreparedQuery>> {
    let stmt = arbor_cypher_syntax::parse(text).map_err(|e| {
        Error::new(e.status, format!("Failed to invoke procedure `{proc_name}`: {}", e.message))
    })?;
    Ok(Arc::new(PreparedQuery::prepare(&stmt, text)?))
}

/// Runs `q` with `params` to the end; its rows (entities as references into `g`, as
/// operators pass them) and statistics.
pub(super) fn run_all(
    q: &Arc<PreparedQuery>,
    params: PropertyMap,
    g: &mut dyn Graph,
) -> Result<(Vec<Vec<Value>>, Stats)> {
    let mut exec = Execution::start(q.clone(), params)?;
    let (mut rows, mut row) = (Vec::new(), Vec::new());
    while exec.next_raw(g, &mut row)? {
        rows.push(std::mem::take(&mut row));
    }
    Ok((rows, exec.stats()))
}

fn text_arg<'a>(proc_name: &str, args: &'a [Value], i: usize, what: &str) -> Result<&'a str> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(arg_error(proc_name, &format!("{what} must be a string"))),
    }
}

fn int_config(config: &PropertyMap, key: &str, default: i64) -> Result<i64> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Int(n)) if *n > 0 => Ok(*n),
        Some(other) => Err(arg_error(
            "apoc.periodic.iterate",
            &format!(
                "{key} must be a positive integer, got {}",
                arbor_model::to_cypher_literal(other)
            ),
        )),
    }
}

/// Error messages counted by text, as APOC's `errorMessages` maps them.
#[derive(Default)]
struct Errors(Vec<(String, i64)>);

impl Errors {
    fn add(&mut self, message: &str, n: i64) {
        match self.0.iter_mut().find(|(m, _)| m == message) {
            Some((_, c)) => *c += n,
            None => self.0.push((message.to_string(), n)),
        }
    }
    fn value(&self) -> Value {
        map(self.0.iter().map(|(m, c)| (m.as_str(), Value::Int(*c))).collect())
    }
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(PropertyMap::from_entries(
        entries.into_iter().map(|(k, v)| (Key::from(k), v)).collect(),
    ))
}

fn add_stats(total: &mut Stats, s: &Stats) {
    total.nodes_created += s.nodes_created;
    total.nodes_deleted += s.nodes_deleted;
    total.relationships_created += s.relationships_created;
    total.relationships_deleted += s.relationships_deleted;
    total.properties_set += s.properties_set;
    total.labels_added += s.labels_added;
    total.labels_removed += s.labels_removed;
}

/// Totals of committed and failed units (batches or operations), as APOC's `batch` and
/// `operations` maps.
fn totals(committed: i64, failed: i64, errors: &Errors) -> Value {
    map(vec![
        ("total", Value::Int(committed + failed)),
        ("committed", Value::Int(committed)),
        ("failed", Value::Int(failed)),
        ("errors", errors.value()),
    ])
}

fn iterate(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const NAME: &str = "apoc.periodic.iterate";
    let started = Instant::now();
    let outer = prepare(NAME, text_arg(NAME, args, 0, "cypherIterate")?)?;
    let config = map_arg(NAME, args.get(2), "config")?;
    let batch_size = usize::try_from(int_config(&config, "batchSize", 10_000)?).unwrap_or(1);
    let params = map_arg(NAME, config.get("params"), "config.params")?;
    let (rows, _) = run_all(&outer, params.clone(), g)?;
    let columns: Vec<Key> = outer.columns().iter().map(|c| Key::from(c.as_str())).collect();
    // The action sees each outer column as a variable (as APOC's batch mode binds them) and
    // as a parameter (as its single mode does).
    let imports: Vec<String> = columns
        .iter()
        .map(|c| {
            let c = c.replace('`', "``");
            format!("$`{c}` AS `{c}`")
        })
        .collect();
    let action = text_arg(NAME, args, 1, "cypherAction")?;
    let inner = prepare(NAME, &format!("WITH {} {action}", imports.join(", ")))?;
    let (mut batches, mut committed_ops, mut failed_ops, mut failed_batches) = (0, 0, 0, 0);
    let (mut batch_errors, mut op_errors) = (Errors::default(), Errors::default());
    let mut stats = Stats::default();
    for (b, chunk) in rows.chunks(batch_size).enumerate() {
        batches += 1;
        g.batch_begin()?;
        let mut batch_stats = Stats::default();
        let result = chunk.iter().enumerate().try_for_each(|(i, row)| {
            let mut p = params.clone();
            for (k, v) in columns.iter().zip(row) {
                p.insert(k.clone(), to_refs(v));
            }
            let count = i64::try_from(b * batch_size + i).unwrap_or(i64::MAX);
            p.insert(Key::from("_count"), Value::Int(count));
            let (_, s) = run_all(&inner, p, g)?;
            add_stats(&mut batch_stats, &s);
            Ok::<(), Error>(())
        });
        let n = i64::try_from(chunk.len()).unwrap_or(i64::MAX);
        match result.and_then(|()| g.batch_commit()) {
            Ok(()) => {
                committed_ops += n;
                add_stats(&mut stats, &batch_stats);
            }
            Err(e) if is_fatal(&e) => return Err(e),
            Err(e) => {
                g.batch_rollback()?;
                failed_ops += n;
                failed_batches += 1;
                batch_errors.add(&e.message, 1);
                op_errors.add(&e.message, n);
            }
        }
    }
    let total = committed_ops + failed_ops;
    let secs = i64::try_from(started.elapsed().as_secs()).unwrap_or(i64::MAX);
    Ok(vec![vec![
        Value::Int(batches),
        Value::Int(total),
        Value::Int(secs),
        Value::Int(committed_ops),
        Value::Int(failed_ops),
        Value::Int(failed_batches),
        Value::Int(0),
        op_errors.value(),
        totals(batches - failed_batches, failed_batches, &batch_errors),
        totals(committed_ops, failed_ops, &op_errors),
        Value::Bool(false),
        map(Vec::new()),
        update_statistics(&stats),
    ]])
}

/// `v` with materialized entities (as result rows carry them) turned back into references, so
/// the action can write to them.
fn to_refs(v: &Value) -> Value {
    match v {
        Value::NodeData(n) => Value::Node(n.id),
        Value::RelData(r) => Value::Relationship(r.id),
        Value::PathData(p) => Value::Path(Arc::new(PathRef {
            nodes: p.nodes.iter().map(|n| n.id).collect(),
            rels: p.rels.iter().map(|r| r.id).collect(),
        })),
        Value::List(items) => Value::List(items.iter().map(to_refs).collect()),
        Value::Map(m) => Value::Map(PropertyMap::from_entries(
            m.iter().map(|(k, v)| (k.clone(), to_refs(v))).collect(),
        )),
        other => other.clone(),
    }
}

fn update_statistics(s: &Stats) -> Value {
    let n = |x: u64| Value::Int(i64::try_from(x).unwrap_or(i64::MAX));
    map(vec![
        ("relationshipsDeleted", n(s.relationships_deleted)),
        ("relationshipsCreated", n(s.relationships_created)),
        ("nodesDeleted", n(s.nodes_deleted)),
        ("nodesCreated", n(s.nodes_created)),
        ("labelsRemoved", n(s.labels_removed)),
        ("labelsAdded", n(s.labels_added)),
        ("propertiesSet", n(s.properties_set)),
    ])
}

/// Errors that end the call instead of failing one batch.
fn is_fatal(e: &Error) -> bool {
    matches!(
        e.status,
        Status::TransactionTerminated
            | Status::TransactionTimedOut
            | Status::TransactionTimedOutClientConfiguration
            | Status::TransactionStartFailed
            | Status::Io
            | Status::Corruption
    )
}

fn commit(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const NAME: &str = "apoc.periodic.commit";
    let started = Instant::now();
    let text = text_arg(NAME, args, 0, "statement")?;
    if !text.to_ascii_lowercase().contains("limit") {
        return Err(arg_error(
            NAME,
            "the statement sent to apoc.periodic.commit must contain a `limit`",
        ));
    }
    let q = prepare(NAME, text)?;
    let params = map_arg(NAME, args.get(1), "params")?;
    let (mut updates, mut executions, mut failed) = (0i64, 0i64, 0i64);
    let mut errors = Errors::default();
    loop {
        g.batch_begin()?;
        executions += 1;
        let n = match run_all(&q, params.clone(), g) {
            Ok((rows, _)) => match rows.first().and_then(|r| r.first()) {
                Some(Value::Int(n)) => *n,
                _ => 0,
            },
            Err(e) if is_fatal(&e) => return Err(e),
            Err(e) => {
                g.batch_rollback()?;
                failed += 1;
                errors.add(&e.message, 1);
                break;
            }
        };
        g.batch_commit()?;
        updates += n;
        if n <= 0 {
            break;
        }
        crate::interrupt::check()?;
    }
    let secs = i64::try_from(started.elapsed().as_secs()).unwrap_or(i64::MAX);
    Ok(vec![vec![
        Value::Int(updates),
        Value::Int(executions),
        Value::Int(secs),
        Value::Int(executions),
        Value::Int(failed),
        errors.value(),
        Value::Int(0),
        map(Vec::new()),
        Value::Bool(false),
    ]])
}
