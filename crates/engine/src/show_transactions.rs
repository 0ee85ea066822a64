//! `SHOW TRANSACTIONS` and `TERMINATE TRANSACTIONS` as internal procedures: the planner turns
//! each command into a call of its procedure (`admin.rs` in cypher-plan) followed by the
//! ordinary operators of its `YIELD`/`WHERE`/`RETURN`. The rows come from the database's
//! session registry (`txinfo.rs`).

use arbor_cypher_plan::CypherType;
use arbor_exec::graph::Graph;
use arbor_exec::procs::Procedure;
use arbor_model::{Error, Result, Status, Value};

use crate::session::Database;
use crate::txinfo;

/// The internal procedures `SHOW TRANSACTIONS` and `TERMINATE TRANSACTIONS` are planned as
/// (`admin.rs` in cypher-plan): inputs as every `SHOW` procedure's (filter word, names), outputs
/// Neo4j's columns; `SHOW TRANSACTIONS` shows the first ten without `YIELD`.
pub(crate) fn procedures(db: &Database) -> Vec<Procedure> {
    let inputs =
        || vec![("filter".to_string(), CypherType::Any), ("names".to_string(), CypherType::Any)];
    let outputs = |cols: &[&str]| cols.iter().map(|c| (c.to_string(), CypherType::Any)).collect();
    let weak = db.downgrade();
    let show = Procedure::new(
        "SHOW TRANSACTIONS",
        inputs(),
        outputs(&txinfo::COLUMNS),
        "The rows of `SHOW TRANSACTIONS`.",
        move |args: &[Value], _: &mut dyn Graph| {
            let db = Database::upgrade(&weak).ok_or_else(closed)?;
            Ok(txinfo::show_rows(db.transactions(), &ids(args.get(1))?))
        },
    );
    let weak = db.downgrade();
    let terminate = Procedure::new(
        "TERMINATE TRANSACTIONS",
        inputs(),
        outputs(&txinfo::TERMINATE_COLUMNS),
        "The rows of `TERMINATE TRANSACTIONS`.",
        move |args: &[Value], _: &mut dyn Graph| {
            let db = Database::upgrade(&weak).ok_or_else(closed)?;
            txinfo::terminate_rows(db.transactions(), &ids(args.get(1))?)
        },
    );
    let mut show = show;
    show.sig.default_outputs = Some(txinfo::DEFAULT_COLUMNS);
    vec![show, terminate]
}

fn closed() -> Error {
    Error::new(Status::TransactionTerminated, "the database is shut down")
}

/// The ids a command names, as the planner passes them (`admin.rs` in cypher-plan): null, or a
/// list with one item per id written, each a string or a list of strings (a parameter).
fn ids(names: Option<&Value>) -> Result<Vec<String>> {
    match names {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::List(items)) => flat_strings(items).map_err(bad_id_type),
        Some(other) => Err(bad_id_type(other)),
    }
}

/// The strings of a list of strings and lists of strings (`'a', 'b'` written, or a list
/// parameter), flattened one level, as the SHOW and TERMINATE commands take names and ids;
/// else the first item that is neither.
pub(crate) fn flat_strings(items: &[Value]) -> std::result::Result<Vec<String>, &Value> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Value::String(s) => out.push(s.to_string()),
            Value::List(list) => {
                for v in list {
                    match v {
                        Value::String(s) => out.push(s.to_string()),
                        other => return Err(other),
                    }
                }
            }
            other => return Err(other),
        }
    }
    Ok(out)
}

fn bad_id_type(v: &Value) -> Error {
    Error::type_error(format!("Expected a string or a list of strings, got {}", v.type_name()))
}
