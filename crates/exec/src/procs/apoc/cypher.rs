//! `apoc.cypher.run`/`doIt` and the conditionals `apoc.when`/`apoc.do.when`/`apoc.case`/
//! `apoc.do.case`: a nested statement run to the end in the caller's transaction, with the
//! given map as its parameters; each of its rows comes back as one `value` map keyed by its
//! columns. The read forms refuse a statement that writes
//! (`Neo.ClientError.Statement.AccessMode`), as APOC does.

use arbor_cypher_plan::CypherType as T;
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use super::periodic::{prepare, run_all};
use super::{arg_error, col, map_arg};
use crate::graph::Graph;
use crate::procs::Procedure;

pub(super) fn procedures() -> Vec<Procedure> {
    let value = || vec![col("value", T::Map)];
    let run_in = || vec![col("statement", T::String), col("params", T::Map)];
    let when_in = || {
        vec![
            col("condition", T::Boolean),
            col("ifQuery", T::String),
            col("elseQuery", T::String),
            col("params", T::Map),
        ]
    };
    let case_in = || {
        vec![
            col("conditionals", T::List(Box::new(T::Any))),
            col("elseQuery", T::String),
            col("params", T::Map),
        ]
    };
    let mut out = vec![
        Procedure::new(
            "apoc.cypher.run",
            run_in(),
            value(),
            "Runs a dynamically constructed read-only statement with the given parameters.",
            |a, g| run_statement("apoc.cypher.run", a.first(), a.get(1), false, g),
        ),
        Procedure::new(
            "apoc.cypher.doIt",
            run_in(),
            value(),
            "Runs a dynamically constructed statement with the given parameters.",
            |a, g| run_statement("apoc.cypher.doIt", a.first(), a.get(1), true, g),
        ),
        Procedure::new(
            "apoc.when",
            when_in(),
            value(),
            "Runs the given read-only ifQuery if the condition is true, otherwise runs the \
             elseQuery.",
            |a, g| when("apoc.when", a, false, g),
        ),
        Procedure::new(
            "apoc.do.when",
            when_in(),
            value(),
            "Runs the given read/write ifQuery if the condition is true, otherwise runs the \
             elseQuery.",
            |a, g| when("apoc.do.when", a, true, g),
        ),
        Procedure::new(
            "apoc.case",
            case_in(),
            value(),
            "For each pair of conditional and read-only queries in the given LIST, this \
             procedure runs the first query for which the conditional is evaluated to true. If \
             none of the conditionals are true, the ELSE query will run instead.",
            |a, g| case("apoc.case", a, false, g),
        ),
        Procedure::new(
            "apoc.do.case",
            case_in(),
            value(),
            "For each pair of conditional queries in the given LIST, this procedure runs the \
             first one evaluated to true. If none of the conditionals are true, the ELSE query \
             will run instead.",
            |a, g| case("apoc.do.case", a, true, g),
        ),
    ];
    for p in &mut out {
        p.writes = p.sig.name.contains(".do");
        // params (and elseQuery) may be left out.
        p.sig.optional = if p.sig.name.ends_with("when") { 2 } else { 1 };
        if p.sig.name.ends_with("case") {
            p.sig.optional = 2;
        }
    }
    out
}

/// Runs `statement` with `params`; one `{column: value}` map per row.
fn run_statement(
    name: &str,
    statement: Option<&Value>,
    params: Option<&Value>,
    may_write: bool,
    g: &mut dyn Graph,
) -> Result<Vec<Vec<Value>>> {
    let text = match statement {
        Some(Value::String(s)) => s.to_string(),
        None | Some(Value::Null) => return Err(arg_error(name, "the statement is null")),
        Some(other) => {
            return Err(arg_error(
                name,
                &format!("the statement must be a string, got {}", other.type_name()),
            ))
        }
    };
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let params = map_arg(name, params, "params")?;
    let q = prepare(name, &text)?;
    if !may_write && q.is_write() {
        return Err(Error::new(
            Status::AccessMode,
            format!(
                "Failed to invoke procedure `{name}`: Write operations are not allowed here; \
                 use the `.do` form (apoc.cypher.doIt, apoc.do.when, apoc.do.case)"
            ),
        ));
    }
    let (rows, _) = run_all(&q, params, g)?;
    let cols = q.columns().to_vec();
    Ok(rows
        .into_iter()
        .map(|r| {
            let m: PropertyMap = cols.iter().map(arbor_model::Key::from).zip(r).collect();
            vec![Value::Map(m)]
        })
        .collect())
}

fn truthy(name: &str, v: Option<&Value>) -> Result<bool> {
    match v {
        Some(Value::Bool(b)) => Ok(*b),
        None | Some(Value::Null) => Ok(false),
        Some(other) => Err(arg_error(
            name,
            &format!("a condition must be a boolean, got {}", other.type_name()),
        )),
    }
}

/// `apoc.when(condition, ifQuery, elseQuery = '', params = {})`.
fn when(name: &str, a: &[Value], may_write: bool, g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let chosen = if truthy(name, a.first())? { a.get(1) } else { a.get(2) };
    match chosen {
        None | Some(Value::Null) => Ok(Vec::new()),
        q => run_statement(name, q, a.get(3), may_write, g),
    }
}

/// `apoc.case([condition, query, condition, query, ...], elseQuery = '', params = {})`.
fn case(name: &str, a: &[Value], may_write: bool, g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let pairs = match a.first() {
        Some(Value::List(items)) => items.as_slice(),
        None | Some(Value::Null) => &[],
        Some(other) => {
            return Err(arg_error(
                name,
                &format!("conditionals must be a list, got {}", other.type_name()),
            ))
        }
    };
    if pairs.len() % 2 != 0 {
        return Err(arg_error(name, "conditionals must hold [condition, query] pairs"));
    }
    for pair in pairs.chunks(2) {
        if truthy(name, Some(&pair[0]))? {
            return run_statement(name, Some(&pair[1]), a.get(2), may_write, g);
        }
    }
    match a.get(1) {
        None | Some(Value::Null) => Ok(Vec::new()),
        q => run_statement(name, q, a.get(2), may_write, g),
    }
}
