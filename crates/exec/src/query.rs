//! A prepared query and one run of it: [`PreparedQuery`] binds and plans a statement once
//! (resolving functions from this crate's library and procedures from a registry);
//! [`Execution`] builds fresh operator state per run, pulls rows, and renders EXPLAIN/PROFILE.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arbor_cypher_plan::{IndexUse, Op, Plan, ProcSig, Resolver, ScalarFn};
use arbor_cypher_syntax::ast::Statement;
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::ctx::{Ctx, Operator};
#[cfg(test)]
use crate::eval;
use crate::procs::{Procedure, Registry};
use crate::runtime::Builder;
use crate::{functions, graph, interrupt, profile, runtime};

/// Resolves functions and procedures for the binder from this crate's function library and a
/// procedure registry, remembering the procedures the query uses.
struct ExecResolver<'a> {
    procs: &'a Registry,
    used: std::cell::RefCell<Vec<Procedure>>,
    indexes: &'a dyn Fn(&str) -> Vec<Vec<String>>,
    rel_indexes: &'a dyn Fn(&str) -> Vec<Vec<String>>,
    /// Whether an index of a kind covers `(rel, label or type, key)`.
    kind_indexes: &'a dyn Fn(IndexUse, bool, &str, &str) -> bool,
}

impl Resolver for ExecResolver<'_> {
    fn scalar(&self, lower_name: &str) -> Option<ScalarFn> {
        functions::lookup_scalar(lower_name)
    }
    fn procedure(&self, name: &str) -> Option<ProcSig> {
        let p = self.procs.get(name)?;
        let mut used = self.used.borrow_mut();
        if !used.iter().any(|u| u.sig.name == name) {
            used.push(p.clone());
        }
        Some(p.sig.clone())
    }
    fn scalar_arity(&self, lower_name: &str) -> Option<(usize, usize)> {
        functions::scalar_arity(lower_name)
    }
    fn indexes_on(&self, label: &str) -> Vec<Vec<String>> {
        (self.indexes)(label)
    }
    fn rel_indexes_on(&self, ty: &str) -> Vec<Vec<String>> {
        (self.rel_indexes)(ty)
    }
    fn has_kind_index(&self, kind: IndexUse, rel: bool, owner: &str, key: &str) -> bool {
        (self.kind_indexes)(kind, rel, owner, key)
    }
}

/// A bound and planned query; immutable, shareable between sessions.
#[derive(Debug)]
pub struct PreparedQuery {
    pub(crate) plan: Plan,
    /// The procedures the query calls, as resolved when it was prepared.
    pub(crate) procs: Arc<[Procedure]>,
}

impl PreparedQuery {
    /// As [`PreparedQuery::prepare`], resolving `CALL`s against `procedures`.
    pub fn prepare_with(
        stmt: &Statement,
        text: &str,
        procedures: &Registry,
    ) -> Result<PreparedQuery> {
        PreparedQuery::prepare_with_indexes(stmt, text, procedures, &|_| Vec::new(), &|_| {
            Vec::new()
        })
    }

    /// As [`PreparedQuery::prepare_with`], planning range, prefix, `IN` and composite
    /// equality predicates as index seeks where `indexes_on(label)` lists an index (its
    /// property keys), and relationship equality, range, prefix and `IN` predicates where
    /// `rel_indexes_on(type)` does. The plan stays correct if the index goes away later or is not online
    /// yet: the seek then scans.
    pub fn prepare_with_indexes(
        stmt: &Statement,
        text: &str,
        procedures: &Registry,
        indexes_on: &dyn Fn(&str) -> Vec<Vec<String>>,
        rel_indexes_on: &dyn Fn(&str) -> Vec<Vec<String>>,
    ) -> Result<PreparedQuery> {
        PreparedQuery::prepare_with_schema(
            stmt,
            text,
            procedures,
            indexes_on,
            rel_indexes_on,
            &|_, _, _, _| false,
        )
    }

    /// As [`PreparedQuery::prepare_with_indexes`], also planning `CONTAINS` and `ENDS WITH`
    /// predicates as text index scans and `point.distance` / `point.withinBBox` predicates as
    /// spatial seeks where `kind_indexed(kind, relationship, label or type, key)` says a TEXT
    /// or POINT index exists.
    pub fn prepare_with_schema(
        stmt: &Statement,
        text: &str,
        procedures: &Registry,
        indexes_on: &dyn Fn(&str) -> Vec<Vec<String>>,
        rel_indexes_on: &dyn Fn(&str) -> Vec<Vec<String>>,
        kind_indexed: &dyn Fn(IndexUse, bool, &str, &str) -> bool,
    ) -> Result<PreparedQuery> {
        let resolver = ExecResolver {
            procs: procedures,
            used: Default::default(),
            indexes: indexes_on,
            rel_indexes: rel_indexes_on,
            kind_indexes: kind_indexed,
        };
        let plan = arbor_cypher_plan::plan(stmt, text, &resolver)?;
        Ok(PreparedQuery { plan, procs: resolver.used.into_inner().into() })
    }

    pub fn columns(&self) -> &[String] {
        &self.plan.columns
    }

    /// Whether the query contains an updating clause or calls a writing procedure.
    pub fn is_write(&self) -> bool {
        self.plan.is_write || self.procs.iter().any(|p| p.writes)
    }

    /// Whether running the query again from scratch is invisible apart from its result: it
    /// commits nothing along the way (no `CALL { } IN TRANSACTIONS`, no writing procedure, not
    /// an administration command).
    pub fn rerunnable(&self) -> bool {
        fn batches(op: &Op) -> bool {
            matches!(op, Op::Apply { batch: Some(_), .. }) || op.children().into_iter().any(batches)
        }
        self.plan.admin.is_none()
            && !self.procs.iter().any(|p| p.writes)
            && !batches(&self.plan.root)
    }

    /// For an administration command (`SHOW USERS`, `CREATE USER`, `TERMINATE TRANSACTIONS`
    /// ...): the internal procedure it calls, which names the command.
    pub fn admin_command(&self) -> Option<&'static str> {
        self.plan.admin
    }

    /// Whether the query contains a reading clause (MATCH, MERGE, CALL ...).
    pub fn is_read(&self) -> bool {
        self.plan.is_read
    }

    pub fn is_explain(&self) -> bool {
        self.plan.explain
    }

    pub fn is_profile(&self) -> bool {
        self.plan.profile
    }

    /// The plan as a Bolt plan map: `{operatorType, args, identifiers, children}`.
    pub fn plan_description(&self) -> Value {
        self.describe_plan(None)
    }

    /// As [`PreparedQuery::plan_description`], with row estimates from `g`'s statistics
    /// (node and label counts) instead of defaults.
    pub fn plan_description_for(&self, g: &dyn graph::GraphRead) -> Value {
        self.describe_plan(Some(g))
    }

    fn estimates(&self, g: Option<&dyn graph::GraphRead>) -> Vec<f64> {
        let stats = profile::Stats {
            nodes: g.map(|g| g.count_nodes(None) as f64),
            rels: g.and_then(|g| g.count_rels(&[])).map(|r| r as f64),
        };
        let label_count = |l: &str| {
            let g = g?;
            Some(match g.token_id(graph::TokenKind::Label, l) {
                Some(t) => g.count_nodes(Some(t)) as f64,
                None => 0.0,
            })
        };
        profile::estimate(&self.plan.root, stats, &label_count)
    }

    fn describe_plan(&self, g: Option<&dyn graph::GraphRead>) -> Value {
        let mut id = 0;
        let estimates = self.estimates(g);
        let mut d = describe(&self.plan.root, &estimates, None, &mut id);
        if let Value::Map(m) = &mut d {
            if let Some(Value::Map(args)) = m.get_mut("args") {
                args.insert("planner".into(), Value::from("COST"));
                args.insert("runtime".into(), Value::from("SLOTTED"));
                args.insert("runtime-impl".into(), Value::from("ARBOR-INTERPRETED"));
                args.insert("version".into(), Value::from("CYPHER 5"));
            }
        }
        wrap_produce(d, &self.plan.columns)
    }
}

fn wrap_produce(child: Value, columns: &[String]) -> Value {
    let mut m = PropertyMap::new();
    m.insert("operatorType".into(), Value::from("ProduceResults"));
    let mut args = PropertyMap::new();
    args.insert("Details".into(), Value::from(columns.join(", ")));
    m.insert("args".into(), Value::Map(args));
    m.insert(
        "identifiers".into(),
        Value::List(columns.iter().map(|c| Value::from(c.as_str())).collect()),
    );
    m.insert("children".into(), Value::List(vec![child]));
    Value::Map(m)
}

fn op_details(op: &Op) -> String {
    match op {
        Op::NodeScan { label: Some(l), .. } => format!(":{l}"),
        Op::NodeIndexRangeSeek {
            label,
            seek:
                arbor_cypher_plan::ops::SeekRange::Composite { keys, .. }
                | arbor_cypher_plan::ops::SeekRange::CompositeRange { keys, .. },
            ..
        } => {
            let ks: Vec<&str> = keys.iter().map(|k| &**k).collect();
            format!(":{label}({})", ks.join(", "))
        }
        Op::NodeIndexSeek { label, key, .. } | Op::NodeIndexRangeSeek { label, key, .. } => {
            format!(":{label}({key})")
        }
        Op::RelIndexSeek { ty, keys, .. } => {
            let ks: Vec<&str> = keys.iter().map(|k| &**k).collect();
            format!(":{ty}({})", ks.join(", "))
        }
        Op::Expand { types, .. }
        | Op::VarExpand { types, .. }
        | Op::PruningVarExpand { types, .. }
        | Op::FrontierExpand { types, .. }
        | Op::VarExpandCount { types, .. }
            if !types.is_empty() =>
        {
            format!(":{}", types.iter().map(|t| t.to_string()).collect::<Vec<_>>().join("|"))
        }
        Op::ProcedureCall { name, .. } => name.to_string(),
        _ => String::new(),
    }
}

/// Per-operator measurements of a PROFILE run, indexed by pre-order number (the numbering the
/// runtime builder assigns). Hits and times include the operator's inputs.
struct Measured<'a> {
    rows: &'a [u64],
    hits: &'a [u64],
    time_ns: &'a [u64],
}

/// Pre-order description with `EstimatedRows` (and, when profiled, `Rows`, `DbHits`, `Time`
/// in nanoseconds, each the operator's own share).
fn describe(op: &Op, estimates: &[f64], measured: Option<&Measured>, id: &mut usize) -> Value {
    let my = *id;
    *id += 1;
    let mut m = PropertyMap::new();
    m.insert("operatorType".into(), Value::from(op.name()));
    let mut args = PropertyMap::new();
    let details = op_details(op);
    if !details.is_empty() {
        args.insert("Details".into(), Value::from(details));
    }
    let estimated = estimates.get(my).copied().unwrap_or(0.0);
    args.insert("EstimatedRows".into(), Value::Float(estimated));
    let mut child_ids = Vec::new();
    let children: Vec<Value> = op
        .children()
        .into_iter()
        .map(|c| {
            child_ids.push(*id);
            describe(c, estimates, measured, id)
        })
        .collect();
    if let Some(ms) = measured {
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        let own =
            |v: &[u64]| at(v, my).saturating_sub(child_ids.iter().map(|c| at(v, *c)).sum::<u64>());
        let rows = at(ms.rows, my) as i64;
        let hits = own(ms.hits) as i64;
        let time = own(ms.time_ns) as i64;
        args.insert("Rows".into(), Value::Int(rows));
        args.insert("DbHits".into(), Value::Int(hits));
        args.insert("Time".into(), Value::Int(time));
        args.insert("PageCacheHits".into(), Value::Int(0));
        args.insert("PageCacheMisses".into(), Value::Int(0));
        m.insert("rows".into(), Value::Int(rows));
        m.insert("dbHits".into(), Value::Int(hits));
        m.insert("time".into(), Value::Int(time));
        m.insert("pageCacheHits".into(), Value::Int(0));
        m.insert("pageCacheMisses".into(), Value::Int(0));
    }
    m.insert("args".into(), Value::Map(args));
    m.insert("identifiers".into(), Value::List(Vec::new()));
    m.insert("children".into(), Value::List(children));
    Value::Map(m)
}

fn count_ops(op: &Op) -> usize {
    1 + op.children().into_iter().map(count_ops).sum::<usize>()
}

/// One run of a prepared query.
pub struct Execution {
    q: Arc<PreparedQuery>,
    root: Box<dyn Operator>,
    ctx: Ctx,
    started: bool,
    done: bool,
    /// "Now" for every temporal function in this statement (Cypher pins the clock per statement).
    statement_time: chrono::NaiveDateTime,
}

impl Execution {
    /// Fails with ParameterMissing if a parameter the query uses is absent.
    pub fn start(q: Arc<PreparedQuery>, mut params: PropertyMap) -> Result<Execution> {
        let mut values = Vec::with_capacity(q.plan.params.len());
        let mut missing = Vec::new();
        // Moved, not cloned: a 10,000-row `$batch` is the whole request.
        for p in &q.plan.params {
            match params.remove(p) {
                Some(v) => values.push(v),
                None => missing.push(p.to_string()),
            }
        }
        if !missing.is_empty() && !q.plan.explain {
            return Err(Error::new(
                Status::ParameterMissing,
                format!("Expected parameter(s): {}", missing.join(", ")),
            )
            .with_detail("MissingParameter"));
        }
        let take_unwind = runtime::unwind_taking_param(&q.plan);
        let root = runtime::build(&q.plan.root, &mut Builder::new(0, !q.is_write(), take_unwind));
        let mut ctx = Ctx::new(values, q.plan.profile, runtime::build_subplan);
        ctx.procs = q.procs.clone();
        // PROFILE runs without the memo: it is the row-at-a-time reference in tests.
        ctx.read_only = !q.is_write() && !q.plan.profile;
        let n = count_ops(&q.plan.root);
        ctx.rows = vec![0; n];
        if q.plan.profile {
            ctx.hits = vec![0; n];
            ctx.time_ns = vec![0; n];
        }
        let statement_time = chrono::Utc::now().naive_utc();
        Ok(Execution { q, root, ctx, started: false, done: false, statement_time })
    }

    /// The next result row, with entities materialized (`Value::NodeData`/`RelData`/`PathData`,
    /// token names resolved), or `None` at the end: for this crate's tests only, which have no
    /// engine to write rows out (the engine's one way out is its record writer).
    #[cfg(test)]
    pub(crate) fn next(&mut self, g: &mut dyn graph::Graph) -> Result<Option<Vec<Value>>> {
        let mut out = Vec::with_capacity(self.q.plan.column_slots.len());
        if !self.next_raw(g, &mut out)? {
            return Ok(None);
        }
        let names = &mut eval::TokenNames::default();
        for v in &mut out {
            *v = eval::materialize(std::mem::replace(v, Value::Null), &*g, names);
        }
        Ok(Some(out))
    }

    /// The next result row as the operators produced it, into `out` (cleared first): entity
    /// references are *not* materialized, so the caller must resolve them against the same
    /// graph before the next call (the engine writes them straight into a result writer).
    /// Returns false at the end.
    pub fn next_raw(&mut self, g: &mut dyn graph::Graph, out: &mut Vec<Value>) -> Result<bool> {
        out.clear();
        if self.done || self.q.plan.explain {
            return Ok(false);
        }
        arbor_model::temporal_build::set_statement_time(Some(self.statement_time));
        // Another statement of the transaction may have written since the last call.
        self.ctx.last_prop = None;
        // A transaction that has written may write again between two calls.
        if g.committed_snapshot().is_none() {
            self.ctx.epoch = self.ctx.epoch.wrapping_add(1);
        }
        let _interrupt = interrupt::enter(self.ctx.interrupt.clone());
        let row = self.next_row(g, out);
        arbor_model::temporal_build::set_statement_time(None);
        row
    }

    fn next_row(&mut self, g: &mut dyn graph::Graph, out: &mut Vec<Value>) -> Result<bool> {
        if !self.started {
            self.started = true;
            if self.q.plan.profile {
                let read: &dyn graph::GraphRead = &*g;
                self.ctx.estimates = Some(self.q.estimates(Some(read)));
            }
            self.root.reset(&vec![Value::Null; self.q.plan.num_slots]);
        }
        loop {
            self.ctx.check_interrupt()?;
            let row = match self.root.next(&mut self.ctx, g) {
                Ok(r) => r,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            let Some(row) = row else {
                self.done = true;
                return Ok(false);
            };
            if self.q.plan.columns.is_empty() {
                // No RETURN: run to completion, yield nothing (the row's memory goes back to
                // the operators: a batched write produces a row per created entity).
                self.ctx.recycle(row);
                continue;
            }
            // The values move out of the row (a column slot may repeat: later ones copy), and
            // the row goes back to the operators for reuse.
            let mut row = row;
            let slots = &self.q.plan.column_slots;
            for (i, s) in slots.iter().enumerate() {
                out.push(if slots[i + 1..].contains(s) {
                    row[*s].clone()
                } else {
                    std::mem::replace(&mut row[*s], Value::Null)
                });
            }
            self.ctx.recycle(row);
            return Ok(true);
        }
    }

    /// Counters so far (`nodes_created`, `properties_set`, ...).
    pub fn stats(&self) -> graph::Stats {
        self.ctx.stats
    }

    /// Checked regularly; when set, `next` fails with `TransactionTerminated`.
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.ctx.interrupt = Some(flag);
    }

    /// The PROFILE plan with rows/dbHits per operator.
    pub fn profile(&self) -> Value {
        let mut id = 0;
        let estimates = match &self.ctx.estimates {
            Some(e) => e.clone(),
            None => self.q.estimates(None),
        };
        let measured =
            Measured { rows: &self.ctx.rows, hits: &self.ctx.hits, time_ns: &self.ctx.time_ns };
        let d = describe(&self.q.plan.root, &estimates, Some(&measured), &mut id);
        let total_hits: u64 = self.ctx.hits.first().copied().unwrap_or(0);
        let mut out = wrap_produce(d, &self.q.plan.columns);
        if let Value::Map(m) = &mut out {
            // ProduceResults passes every row through and reads nothing itself.
            let rows = self.ctx.rows.first().copied().unwrap_or(0) as i64;
            m.insert("rows".into(), Value::Int(rows));
            m.insert("dbHits".into(), Value::Int(0));
            m.insert("time".into(), Value::Int(0));
            m.insert("pageCacheHits".into(), Value::Int(0));
            m.insert("pageCacheMisses".into(), Value::Int(0));
            if let Some(Value::Map(args)) = m.get_mut("args") {
                args.insert("Rows".into(), Value::Int(rows));
                args.insert("DbHits".into(), Value::Int(0));
                args.insert("TotalDbHits".into(), Value::Int(total_hits as i64));
            }
        }
        out
    }
}
