//! The TCK steps, executed in-process against one fresh [`Database::in_memory`] per scenario.
//!
//! What each step checks (see `/work/shared/tck/README.md` for the TCK's own definition):
//!
//! * `an empty graph` / `any graph`: nothing (the database is fresh and empty).
//! * `the <name> graph`: runs `graphs/<name>/<name>.cypher`, split on `;`; every part must succeed.
//! * `having executed:`: runs the doc string; it must succeed.
//! * `parameters are:`: `name | value` rows in TCK value syntax become the query parameters.
//! * `there exists a procedure name(in :: T, ...) :: (out :: T, ...):` registers a table-defined
//!   procedure (`Database::register_procedure`): the table's header names the inputs then the
//!   outputs; a call returns the outputs of the rows whose inputs equal its arguments.
//! * `executing query:`: snapshots the graph (via `MATCH (n) RETURN n` and
//!   `MATCH ()-[r]->() RETURN r`), runs the query pulling every row, snapshots again.
//!   `executing control query:` runs without snapshots.
//! * `the result should be, in any order:` / `in order:` / `(ignoring element order for lists)` /
//!   `the result should be empty`: column names must match in order; rows compare as a multiset
//!   (or in sequence for `in order`) using [`crate::values::canonical`].
//! * `no side effects` / `the side effects should be:`: the difference of the two snapshots,
//!   as the README defines it: nodes and relationships by id, labels as the set of distinct labels
//!   present, properties as `(entity, key, value)` triples (a changed value is one `-` and one
//!   `+`). The engine's `Stats` counters are not used: they count writes, not net state change.
//! * `a <Type> should be raised at <phase>: <Detail>`: see [`check_error`].

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use arbor_engine::{
    CypherType, Database, ProcedureSpec, PullOutcome, Session, TxConfig, TEST_REGISTRAR,
};
use arbor_model::{Error, PropertyMap, Value};

use crate::gherkin::{Step, StepArg, TestCase};
use crate::values::{canonical, from_actual, parse_value, to_param, TValue};

/// What a running scenario shares with the watchdog: the session's interrupt flag (set on
/// timeout so a runaway query stops) and the query currently running (for the report).
#[derive(Default)]
pub struct Shared {
    pub interrupt: Option<Arc<AtomicBool>>,
    pub current_query: Option<String>,
}

/// Where the error of a failed query surfaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Returned by `Session::run` (parse, bind, plan), before any row is produced.
    Compile,
    /// Returned by `Session::pull` while producing rows.
    Runtime,
}

impl Phase {
    fn describe(self) -> &'static str {
        match self {
            Phase::Compile => "compile time",
            Phase::Runtime => "runtime",
        }
    }
}

type Rows = (Vec<String>, Vec<Vec<Value>>);

/// The state of the graph as the TCK measures side effects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    nodes: BTreeSet<u64>,
    rels: BTreeSet<u64>,
    labels: BTreeSet<String>,
    /// `(entity, key, canonical value)`; entity is `n<id>` or `r<id>`.
    props: BTreeSet<(String, String, String)>,
}

/// `+nodes -nodes +relationships -relationships +labels -labels +properties -properties`.
pub const SIDE_EFFECT_KEYS: [&str; 8] = [
    "+nodes",
    "-nodes",
    "+relationships",
    "-relationships",
    "+labels",
    "-labels",
    "+properties",
    "-properties",
];

fn diff_count<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> i64 {
    a.difference(b).count() as i64
}

/// The side effects between two snapshots, in [`SIDE_EFFECT_KEYS`] order.
pub fn side_effects(before: &Snapshot, after: &Snapshot) -> [i64; 8] {
    [
        diff_count(&after.nodes, &before.nodes),
        diff_count(&before.nodes, &after.nodes),
        diff_count(&after.rels, &before.rels),
        diff_count(&before.rels, &after.rels),
        diff_count(&after.labels, &before.labels),
        diff_count(&before.labels, &after.labels),
        diff_count(&after.props, &before.props),
        diff_count(&before.props, &after.props),
    ]
}

fn describe_effects(e: &[i64; 8]) -> String {
    let parts: Vec<String> = SIDE_EFFECT_KEYS
        .iter()
        .zip(e)
        .filter(|(_, n)| **n != 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

struct Executed {
    query: String,
    outcome: Result<Rows, (Phase, Error)>,
    /// Before/after snapshots (measured queries only).
    effects: Option<Result<[i64; 8], String>>,
}

/// Where a scenario's queries go.
#[derive(Clone)]
pub enum Target {
    /// A fresh `Database::in_memory()` per scenario.
    InProcess,
    /// A running server (see [`crate::bolt`]).
    Bolt(std::sync::Arc<crate::bolt::BoltTarget>),
}

/// A scenario's connection to the engine.
enum Backend {
    Local(Box<Session>),
    Bolt(Box<arbor_bolt::client::Client>),
}

impl Backend {
    /// Runs `query` and pulls every row; an error from RUN is a compile-time error, one from
    /// PULL a runtime error.
    fn run(&mut self, query: &str, params: &PropertyMap) -> Result<Rows, (Phase, Error)> {
        match self {
            Backend::Local(session) => {
                let info = session
                    .run(query, params.clone(), TxConfig::default())
                    .map_err(|e| (Phase::Compile, e))?;
                let mut rows = Vec::new();
                loop {
                    let mut sink = |r: Vec<arbor_model::ResultValue>| {
                        rows.push(r.into_iter().map(Value::from).collect());
                        Ok(())
                    };
                    match session.pull(None, -1, &mut sink) {
                        Ok(PullOutcome::Done(_)) => break,
                        Ok(PullOutcome::HasMore) => continue,
                        Err(e) => return Err((Phase::Runtime, e)),
                    }
                }
                Ok((info.fields, rows))
            }
            Backend::Bolt(client) => {
                let header = client.run(query, params).map_err(|e| (Phase::Compile, e))?;
                let mut rows = Vec::new();
                loop {
                    let batch = client.pull(-1, -1).map_err(|e| (Phase::Runtime, e))?;
                    rows.extend(batch.records);
                    if !batch.has_more {
                        break;
                    }
                }
                Ok((header.fields, rows))
            }
        }
    }

    fn register_procedure(&mut self, spec: ProcedureSpec) -> Result<(), String> {
        match self {
            Backend::Local(session) => session
                .database()
                .register_procedure(spec)
                .map_err(|e| format!("cannot register procedure: {}", describe_error(&e))),
            Backend::Bolt(_) => {
                let cols = |c: &[(String, CypherType)]| {
                    Value::List(c.iter().map(|(n, t)| Value::from(format!("{n} :: {t}"))).collect())
                };
                let mut params = PropertyMap::new();
                params.insert("name".into(), Value::from(spec.name.as_str()));
                params.insert("inputs".into(), cols(&spec.inputs));
                params.insert("outputs".into(), cols(&spec.outputs));
                params.insert(
                    "rows".into(),
                    Value::List(spec.rows.into_iter().map(Value::List).collect()),
                );
                let q = format!("CALL {TEST_REGISTRAR}($name, $inputs, $outputs, $rows)");
                self.run(&q, &params).map(|_| ()).map_err(|(_, e)| {
                    format!("cannot register procedure over Bolt: {}", describe_error(&e))
                })
            }
        }
    }
}

struct World<'a> {
    backend: Backend,
    params: PropertyMap,
    tck_dir: &'a Path,
    shared: &'a Mutex<Shared>,
    last: Option<Executed>,
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The error's Neo4j status code. Over Bolt, a code the client could not map exactly is kept
/// at the front of the message as `[code] message`.
fn code_of(e: &Error) -> &str {
    e.message
        .strip_prefix('[')
        .and_then(|m| m.split_once("] "))
        .map(|(code, _)| code)
        .filter(|code| code.starts_with("Neo."))
        .unwrap_or(e.status.code())
}

fn describe_error(e: &Error) -> String {
    match e.detail {
        Some(d) => format!("{} ({d}): {}", code_of(e), first_line(&e.message)),
        None => format!("{}: {}", code_of(e), first_line(&e.message)),
    }
}

impl World<'_> {
    fn set_current(&self, q: Option<&str>) {
        if let Ok(mut s) = self.shared.lock() {
            s.current_query = q.map(str::to_string);
        }
    }

    /// Runs `query` and pulls every row.
    fn run(&mut self, query: &str, params: &PropertyMap) -> Result<Rows, (Phase, Error)> {
        self.set_current(Some(query));
        self.backend.run(query, params)
    }

    fn run_setup(&mut self, query: &str, what: &str) -> Result<(), String> {
        let params = self.params.clone();
        self.run(query, &params)
            .map(|_| ())
            .map_err(|(_, e)| format!("{what} failed: {}\n  query: {query}", describe_error(&e)))
    }

    fn snapshot(&mut self) -> Result<Snapshot, String> {
        let empty = PropertyMap::new();
        let mut snap = Snapshot::default();
        let (_, nodes) = self
            .run("MATCH (n) RETURN n", &empty)
            .map_err(|(_, e)| format!("snapshot query failed: {}", describe_error(&e)))?;
        for row in nodes {
            match row.first() {
                Some(Value::NodeData(n)) => {
                    snap.nodes.insert(n.id.0);
                    snap.labels.extend(n.labels.iter().cloned());
                    for (k, v) in &n.properties {
                        let v = canonical(&from_actual(v), false);
                        snap.props.insert((format!("n{}", n.id.0), k.to_string(), v));
                    }
                }
                other => return Err(format!("snapshot: MATCH (n) RETURN n gave {other:?}")),
            }
        }
        let (_, rels) = self
            .run("MATCH ()-[r]->() RETURN r", &empty)
            .map_err(|(_, e)| format!("snapshot query failed: {}", describe_error(&e)))?;
        for row in rels {
            match row.first() {
                Some(Value::RelData(r)) => {
                    snap.rels.insert(r.id.0);
                    for (k, v) in &r.properties {
                        let v = canonical(&from_actual(v), false);
                        snap.props.insert((format!("r{}", r.id.0), k.to_string(), v));
                    }
                }
                other => return Err(format!("snapshot: MATCH ()-[r]->() RETURN r gave {other:?}")),
            }
        }
        Ok(snap)
    }

    fn execute(&mut self, query: &str, measured: bool) {
        let before = if measured { Some(self.snapshot()) } else { None };
        let params = self.params.clone();
        let outcome = self.run(query, &params);
        let effects = match before {
            None => None,
            Some(Err(e)) => Some(Err(e)),
            Some(Ok(b)) => Some(self.snapshot().map(|a| side_effects(&b, &a))),
        };
        self.set_current(None);
        self.last = Some(Executed { query: query.to_string(), outcome, effects });
    }

    fn last(&self) -> Result<&Executed, String> {
        self.last.as_ref().ok_or_else(|| "no query was executed before this step".to_string())
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        let text = step.text.as_str();
        match text {
            "an empty graph" | "any graph" => return Ok(()),
            "having executed:" => {
                let q = doc(step)?;
                return self.run_setup(&q, "setup query (having executed)");
            }
            "parameters are:" => return self.parameters(step),
            "executing query:" => {
                let q = doc(step)?;
                self.execute(&q, true);
                return Ok(());
            }
            "executing control query:" => {
                let q = doc(step)?;
                self.execute(&q, false);
                return Ok(());
            }
            "no side effects" => return self.check_effects(&[0; 8]),
            "the side effects should be:" => {
                let mut want = [0i64; 8];
                for row in table(step)? {
                    let [k, v] = row.as_slice() else {
                        return Err(format!("bad side effects row {row:?}"));
                    };
                    let Some(i) = SIDE_EFFECT_KEYS.iter().position(|x| x == k) else {
                        return Err(format!("unknown side effect `{k}`"));
                    };
                    want[i] = v.parse().map_err(|_| format!("bad side effect count `{v}`"))?;
                }
                return self.check_effects(&want);
            }
            "the result should be empty" => return self.check_rows(None, false, false),
            _ => {}
        }
        if let Some(name) = text.strip_prefix("the ").and_then(|t| t.strip_suffix(" graph")) {
            return self.load_graph(name);
        }
        if let Some(sig) = text.strip_prefix("there exists a procedure ") {
            return self.register_procedure(sig, step);
        }
        if let Some(rest) = text.strip_prefix("the result should be") {
            let ordered = rest.contains("in order");
            let sort_lists = rest.contains("ignoring element order for lists");
            return self.check_rows(Some(table(step)?), ordered, sort_lists);
        }
        if let Some(rest) = text.strip_prefix("a ").or_else(|| text.strip_prefix("an ")) {
            if let Some((ty, rest)) = rest.split_once(" should be raised at ") {
                let (phase, detail) = rest.split_once(':').unwrap_or((rest, ""));
                return self.check_error(ty.trim(), phase.trim(), detail.trim());
            }
        }
        Err(format!("unsupported step: {} {}", step.keyword, step.text))
    }

    fn load_graph(&mut self, name: &str) -> Result<(), String> {
        if name.is_empty() || name.contains(['/', '\\', '.']) {
            return Err(format!("bad graph name `{name}`"));
        }
        let path = self.tck_dir.join("graphs").join(name).join(format!("{name}.cypher"));
        let script = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read graph {}: {e}", path.display()))?;
        for part in script.split(';') {
            if !part.trim().is_empty() {
                self.run_setup(part.trim(), &format!("graph `{name}`"))?;
            }
        }
        Ok(())
    }

    /// `there exists a procedure name(in :: TYPE, ...) :: (out :: TYPE, ...):` with a table whose
    /// header names the inputs then the outputs, and whose rows map inputs to outputs.
    fn register_procedure(&mut self, signature: &str, step: &Step) -> Result<(), String> {
        let (name, inputs, outputs) = parse_procedure_signature(signature)?;
        let table = table(step)?;
        let (header, body) = match table.split_first() {
            Some((h, b)) => (h.clone(), b),
            None => (Vec::new(), &[][..]),
        };
        let names: Vec<&String> = inputs.iter().chain(&outputs).map(|(n, _)| n).collect();
        if header.len() != names.len() || header.iter().zip(&names).any(|(h, n)| h != *n) {
            return Err(format!("procedure table header {header:?} does not match {names:?}"));
        }
        let mut rows = Vec::new();
        for row in body {
            if row.len() != header.len() {
                return Err(format!("malformed procedure row {row:?}"));
            }
            let vals = row
                .iter()
                .map(|c| parse_value(c).and_then(|v| to_param(&v)))
                .collect::<Result<Vec<_>, _>>()?;
            rows.push(vals);
        }
        self.backend.register_procedure(ProcedureSpec { name, inputs, outputs, rows })
    }

    fn parameters(&mut self, step: &Step) -> Result<(), String> {
        for row in table(step)? {
            let [name, value] = row.as_slice() else {
                return Err(format!("bad parameter row {row:?}"));
            };
            let v = parse_value(value).and_then(|v| to_param(&v))?;
            self.params.insert(name.clone().into(), v);
        }
        Ok(())
    }

    fn check_effects(&self, want: &[i64; 8]) -> Result<(), String> {
        let last = self.last()?;
        if last.outcome.is_err() {
            // The result step (or error step) reports the failure itself.
            return Ok(());
        }
        match &last.effects {
            None => Err("side effects asked of a control query".into()),
            Some(Err(e)) => Err(e.clone()),
            Some(Ok(got)) if got == want => Ok(()),
            Some(Ok(got)) => Err(format!(
                "side effects differ: expected {}, got {}",
                describe_effects(want),
                describe_effects(got)
            )),
        }
    }

    fn check_rows(
        &self,
        expected: Option<Vec<Vec<String>>>,
        ordered: bool,
        sort_lists: bool,
    ) -> Result<(), String> {
        let last = self.last()?;
        let (columns, rows) = match &last.outcome {
            Ok(r) => r,
            Err((phase, e)) => {
                return Err(format!(
                    "query failed at {}: {}\n  query: {}",
                    phase.describe(),
                    describe_error(e),
                    last.query
                ))
            }
        };
        let actual: Vec<String> = rows.iter().map(|r| render_row(r, sort_lists)).collect();
        let Some(table) = expected else {
            if rows.is_empty() {
                return Ok(());
            }
            return Err(format!(
                "wrong result: expected no rows, got {}\n{}",
                rows.len(),
                listing("actual", &actual)
            ));
        };
        let Some((header, body)) = table.split_first() else {
            return Err("result table has no header".into());
        };
        if header != columns {
            return Err(format!(
                "wrong columns: expected {header:?}, got {columns:?}\n  query: {}",
                last.query
            ));
        }
        let mut want = Vec::with_capacity(body.len());
        for row in body {
            if row.len() != header.len() {
                return Err(format!("malformed expected row {row:?}"));
            }
            let vals: Vec<TValue> = row
                .iter()
                .map(|c| parse_value(c))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("cannot parse expected value: {e}"))?;
            let parts: Vec<String> = vals.iter().map(|v| canonical(v, sort_lists)).collect();
            want.push(format!("| {} |", parts.join(" | ")));
        }
        let (mut a, mut w) = (actual.clone(), want.clone());
        if !ordered {
            a.sort();
            w.sort();
        }
        if a == w {
            return Ok(());
        }
        let what = if a.len() != w.len() {
            format!("expected {} rows, got {}", w.len(), a.len())
        } else if ordered && {
            let (mut a2, mut w2) = (a.clone(), w.clone());
            a2.sort();
            w2.sort();
            a2 == w2
        } {
            "rows in the wrong order".to_string()
        } else {
            "rows differ".to_string()
        };
        Err(format!(
            "wrong result: {what}\n  query: {}\n{}\n{}",
            last.query.replace('\n', "\n         "),
            listing("expected", &want),
            listing("actual", &actual)
        ))
    }

    /// Checks an expected error:
    /// 1. the query must have failed;
    /// 2. `compile time` requires the error to come from `Session::run`, before any row;
    ///    `runtime` and `any time` accept either phase (an implementation may legitimately
    ///    detect a runtime error early, e.g. by constant folding);
    /// 3. the error's Neo4j status code must belong to `<Type>` ([`status_matches`]);
    /// 4. when the engine attaches a TCK detail name, it must equal `<Detail>` (an error without
    ///    a detail is accepted: most engines only report codes; `*` in the TCK accepts any);
    /// 5. the graph must be unchanged (no side effects), as the README requires.
    fn check_error(&self, ty: &str, phase: &str, detail: &str) -> Result<(), String> {
        let last = self.last()?;
        let expected = format!("{ty} at {phase}: {detail}");
        let (got_phase, err) = match &last.outcome {
            Ok((_, rows)) => {
                return Err(format!(
                    "expected {expected}, but the query succeeded ({} rows)\n  query: {}",
                    rows.len(),
                    last.query
                ))
            }
            Err((p, e)) => (*p, e),
        };
        if !status_matches(ty, code_of(err)) {
            return Err(format!(
                "wrong error: expected {expected}, got {}\n  query: {}",
                describe_error(err),
                last.query
            ));
        }
        if phase == "compile time" && got_phase != Phase::Compile {
            return Err(format!(
                "wrong error phase: expected {expected}, got it at runtime: {}",
                describe_error(err)
            ));
        }
        if let Some(d) = err.detail {
            if !detail.is_empty() && detail != "*" && d != detail {
                return Err(format!(
                    "wrong error detail: expected {expected}, got {}",
                    describe_error(err)
                ));
            }
        }
        if strict() {
            if err.detail.is_none() && detail != "*" {
                return Err(format!("strict: error has no detail, expected {expected}"));
            }
            if phase == "runtime" && got_phase != Phase::Runtime {
                return Err(format!("strict: expected {expected}, got it at compile time"));
            }
        }
        match &last.effects {
            Some(Ok(e)) if *e != [0; 8] => Err(format!(
                "failed query left side effects: {}\n  query: {}",
                describe_effects(e),
                last.query
            )),
            Some(Err(e)) => Err(e.clone()),
            _ => Ok(()),
        }
    }
}

/// `ARBOR_TCK_STRICT=1` turns the leniencies of [`World::check_error`] off (an error must carry
/// its detail; a `runtime` error must surface while pulling). Diagnostic only: not the CI gate.
fn strict() -> bool {
    std::env::var("ARBOR_TCK_STRICT").is_ok_and(|v| v == "1")
}

/// Whether a Neo4j status `code` belongs to the TCK error type `ty`:
///
/// | TCK type | accepted codes |
/// | --- | --- |
/// | `SyntaxError` | `Neo.ClientError.Statement.SyntaxError` |
/// | `SemanticError` | `Neo.ClientError.Statement.SemanticError` |
/// | `TypeError` | `Neo.ClientError.Statement.TypeError` |
/// | `ArgumentError` | `Neo.ClientError.Statement.ArgumentError` |
/// | `ArithmeticError` | `Neo.ClientError.Statement.ArithmeticError` |
/// | `ParameterMissing` | `Neo.ClientError.Statement.ParameterMissing` |
/// | `EntityNotFound` | `Neo.ClientError.Statement.EntityNotFound` |
/// | `ConstraintVerificationFailed`, `ConstraintValidationFailed` | `Neo.ClientError.Schema.ConstraintValidationFailed` |
/// | `ProcedureError` | any `Neo.ClientError.Procedure.*` |
/// | anything else `X` | a code ending in `.X` |
pub fn status_matches(ty: &str, code: &str) -> bool {
    match ty {
        "SyntaxError" | "SemanticError" | "TypeError" | "ArgumentError" | "ArithmeticError"
        | "ParameterMissing" | "EntityNotFound" => {
            code.strip_prefix("Neo.ClientError.Statement.") == Some(ty)
        }
        "ConstraintVerificationFailed" | "ConstraintValidationFailed" => {
            code == "Neo.ClientError.Schema.ConstraintValidationFailed"
        }
        "ProcedureError" => code.starts_with("Neo.ClientError.Procedure."),
        other => code.rsplit('.').next() == Some(other),
    }
}

fn render_row(row: &[Value], sort_lists: bool) -> String {
    let parts: Vec<String> = row.iter().map(|v| canonical(&from_actual(v), sort_lists)).collect();
    format!("| {} |", parts.join(" | "))
}

/// At most this many rows are listed in a failure message.
const LISTED_ROWS: usize = 12;

fn listing(title: &str, rows: &[String]) -> String {
    let mut out = format!("  {title} ({} rows):", rows.len());
    for r in rows.iter().take(LISTED_ROWS) {
        out.push_str("\n    ");
        out.push_str(r);
    }
    if rows.len() > LISTED_ROWS {
        out.push_str(&format!("\n    ... {} more", rows.len() - LISTED_ROWS));
    }
    out
}

type Columns = Vec<(String, CypherType)>;

/// Parses `test.my.proc(name :: STRING?, in :: INTEGER?) :: (out :: INTEGER?):` (the trailing
/// colon is optional; `:: VOID` or `:: ()` means no outputs).
pub fn parse_procedure_signature(text: &str) -> Result<(String, Columns, Columns), String> {
    let bad = || format!("bad procedure signature `{text}`");
    let t = text.trim().trim_end_matches(':').trim();
    let open = t.find('(').ok_or_else(bad)?;
    let name = t[..open].trim().to_string();
    let close = open + t[open..].find(')').ok_or_else(bad)?;
    let inputs = parse_columns(&t[open + 1..close]).ok_or_else(bad)?;
    let rest = t[close + 1..].trim().strip_prefix("::").ok_or_else(bad)?.trim();
    let outputs = if rest.eq_ignore_ascii_case("VOID") {
        Vec::new()
    } else {
        let inner = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')).ok_or_else(bad)?;
        parse_columns(inner).ok_or_else(bad)?
    };
    if name.is_empty() {
        return Err(bad());
    }
    Ok((name, inputs, outputs))
}

fn parse_columns(list: &str) -> Option<Columns> {
    if list.trim().is_empty() {
        return Some(Vec::new());
    }
    list.split(',')
        .map(|item| {
            let (n, ty) = item.split_once("::")?;
            Some((n.trim().to_string(), CypherType::parse(ty)?))
        })
        .collect()
}

fn doc(step: &Step) -> Result<String, String> {
    match &step.arg {
        StepArg::DocString(d) => Ok(d.clone()),
        _ => Err(format!("step `{}` needs a doc string", step.text)),
    }
}

fn table(step: &Step) -> Result<Vec<Vec<String>>, String> {
    match &step.arg {
        StepArg::Table(t) => Ok(t.clone()),
        _ => Err(format!("step `{}` needs a table", step.text)),
    }
}

/// Runs one scenario against a fresh in-memory database. `Err` carries the failure reason; its
/// first line is the summary used for clustering and for `expected-failures.txt`.
pub fn run_case(case: &TestCase, tck_dir: &Path, shared: &Mutex<Shared>) -> Result<(), String> {
    run_case_on(case, tck_dir, shared, &Target::InProcess)
}

/// Runs one scenario against `target` (in process: a fresh database; over Bolt: a pooled
/// connection to a database cleared first).
pub fn run_case_on(
    case: &TestCase,
    tck_dir: &Path,
    shared: &Mutex<Shared>,
    target: &Target,
) -> Result<(), String> {
    let backend = match target {
        Target::InProcess => {
            let session = Database::in_memory().session();
            if let Ok(mut s) = shared.lock() {
                s.interrupt = Some(session.interrupt_flag());
            }
            Backend::Local(Box::new(session))
        }
        Target::Bolt(t) => Backend::Bolt(Box::new(t.checkout()?)),
    };
    let mut world = World { backend, params: PropertyMap::new(), tck_dir, shared, last: None };
    let mut result = Ok(());
    for step in &case.steps {
        result = world.step(step);
        if result.is_err() {
            break;
        }
    }
    if let (Backend::Bolt(client), Target::Bolt(t)) = (world.backend, target) {
        t.checkin(*client);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gherkin::{expand, parse_feature};

    #[test]
    fn status_mapping() {
        assert!(status_matches("SyntaxError", "Neo.ClientError.Statement.SyntaxError"));
        assert!(!status_matches("SyntaxError", "Neo.ClientError.Statement.SemanticError"));
        assert!(status_matches("ProcedureError", "Neo.ClientError.Procedure.ProcedureNotFound"));
        assert!(status_matches(
            "ConstraintVerificationFailed",
            "Neo.ClientError.Schema.ConstraintValidationFailed"
        ));
        assert!(!status_matches("TypeError", "Neo.ClientError.Statement.ArgumentError"));
    }

    #[test]
    fn effects_follow_the_readme() {
        let mut before = Snapshot::default();
        before.nodes.insert(1);
        before.labels.insert("A".into());
        before.props.insert(("n1".into(), "p".into(), "1".into()));
        let mut after = before.clone();
        after.props.clear();
        after.props.insert(("n1".into(), "p".into(), "2".into()));
        after.nodes.insert(2);
        after.labels.insert("A".into());
        // A changed value is one removal plus one addition; a label already present is no +label.
        assert_eq!(side_effects(&before, &after), [1, 0, 0, 0, 0, 0, 1, 1]);
    }

    fn run_text(feature: &str) -> Vec<Result<(), String>> {
        let f = parse_feature(feature).unwrap();
        let shared = Mutex::new(Shared::default());
        expand(&f, "x/X.feature")
            .iter()
            .map(|c| run_case(c, Path::new("/nonexistent"), &shared))
            .collect()
    }

    /// One scenario: `setup` (may be empty), the query, then the `then` lines verbatim.
    fn scenario(setup: &str, query: &str, then: &str) -> Result<(), String> {
        let mut f = String::from("Feature: f\n Scenario: s\n  Given an empty graph\n");
        if !setup.is_empty() {
            f.push_str(&format!("  And having executed:\n   \"\"\"\n   {setup}\n   \"\"\"\n"));
        }
        f.push_str(&format!("  When executing query:\n   \"\"\"\n   {query}\n   \"\"\"\n"));
        f.push_str(then);
        let mut r = run_text(&f);
        assert_eq!(r.len(), 1);
        r.remove(0)
    }

    #[test]
    fn results_are_compared_strictly() {
        let any = "  Then the result should be, in any order:\n";
        let ordered = "  Then the result should be, in order:\n";
        assert_eq!(scenario("", "RETURN 1 AS x", &format!("{any}   | x |\n   | 1 |\n")), Ok(()));
        // Integers and floats never compare equal.
        let e = scenario("", "RETURN 1.0 AS x", &format!("{any}   | x |\n   | 1 |\n"));
        assert!(e.unwrap_err().starts_with("wrong result: rows differ"));
        let q = "UNWIND [2, 1] AS x RETURN x";
        assert_eq!(scenario("", q, &format!("{any}   | x |\n   | 1 |\n   | 2 |\n")), Ok(()));
        let e = scenario("", q, &format!("{ordered}   | x |\n   | 1 |\n   | 2 |\n"));
        assert!(e.unwrap_err().starts_with("wrong result: rows in the wrong order"));
        let e = scenario("", q, &format!("{any}   | x |\n   | 1 |\n"));
        assert!(e.unwrap_err().starts_with("wrong result: expected 1 rows, got 2"));
        // List order matters unless the step says otherwise.
        let lists = "   | l |\n   | [2, 1] |\n";
        let e = scenario("", "RETURN [1, 2] AS l", &format!("{any}{lists}"));
        assert!(e.is_err());
        let ignoring = "  Then the result should be (ignoring element order for lists):\n";
        assert_eq!(scenario("", "RETURN [1, 2] AS l", &format!("{ignoring}{lists}")), Ok(()));
        let e = scenario("", "RETURN 1 AS x", "  Then the result should be empty\n");
        assert!(e.unwrap_err().starts_with("wrong result: expected no rows"));
        let node = "   | n |\n   | (:A {p: 1}) |\n";
        assert_eq!(
            scenario("CREATE (:A {p: 1})", "MATCH (n) RETURN n", &format!("{any}{node}")),
            Ok(())
        );
    }

    #[test]
    fn side_effects_and_errors_are_checked() {
        let none = "  Then the result should be empty\n  And no side effects\n";
        let e = scenario("", "CREATE (:A {p: 1})", none);
        assert_eq!(
            e.unwrap_err(),
            "side effects differ: expected none, got +nodes 1, +labels 1, +properties 1"
        );
        let want = "  Then the result should be empty\n  And the side effects should be:\n   | +properties | 1 |\n   | -properties | 1 |\n";
        assert_eq!(scenario("CREATE (:A {p: 1})", "MATCH (n) SET n.p = 2", want), Ok(()));
        let syntax = "  Then a SyntaxError should be raised at compile time: UnexpectedSyntax\n";
        assert_eq!(scenario("", "RETURN (", syntax), Ok(()));
        let e = scenario("", "RETURN 1", syntax);
        assert!(e.unwrap_err().contains("but the query succeeded"));
        let type_err = "  Then a TypeError should be raised at compile time: *\n";
        let e = scenario("", "RETURN (", type_err);
        assert!(e.unwrap_err().starts_with("wrong error: expected TypeError"));
        let e = scenario(
            "",
            "RETURN 1",
            "  Then the result should be, in any order:\n   | y |\n   | 1 |\n",
        );
        assert!(e.unwrap_err().starts_with("wrong columns"));
    }

    #[test]
    fn unsupported_steps_fail_and_procedures_register() {
        let r = run_text(
            "Feature: f\n Scenario: a\n  Given something odd\n Scenario: b\n  Given an empty graph\n  And there exists a procedure test.x() :: ():\n   |\n  When executing query:\n   \"\"\"\n   CALL test.x()\n   \"\"\"\n  Then the result should be empty\n",
        );
        assert!(r[0].as_ref().unwrap_err().starts_with("unsupported step"));
        assert_eq!(r[1], Ok(()));
        let proc_step = "  And there exists a procedure test.p(in :: INTEGER?) :: (out :: STRING?):\n   | in | out |\n   | 1  | 'a' |\n   | 2  | 'b' |\n";
        let f = format!(
            "Feature: f\n Scenario: s\n  Given an empty graph\n{proc_step}  When executing query:\n   \"\"\"\n   CALL test.p(2) YIELD out RETURN out\n   \"\"\"\n  Then the result should be, in order:\n   | out |\n   | 'a' |\n"
        );
        // Wrong expectation on purpose: the row for 2 is 'b'.
        assert!(run_text(&f)[0].as_ref().unwrap_err().starts_with("wrong result"));
        let (name, ins, outs) = parse_procedure_signature(
            "test.my.proc(a :: STRING?, b :: FLOAT?) :: (c :: NUMBER?) :",
        )
        .unwrap();
        assert_eq!(name, "test.my.proc");
        assert_eq!(ins, vec![("a".into(), CypherType::String), ("b".into(), CypherType::Float)]);
        assert_eq!(outs, vec![("c".into(), CypherType::Number)]);
        assert!(parse_procedure_signature("nope").is_err());
    }
}
