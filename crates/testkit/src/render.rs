//! Turning outcomes into the text golden files hold: rows as Cypher literals, EXPLAIN plans as
//! numbered operator lines, errors as (full Neo4j code, message); and `params` map literals
//! into values. Both targets go through these, so a difference between them is a difference
//! in what the database answered, never in how it was printed.

use arbor_engine::{Database, PullOutcome, TxConfig};
use arbor_model::{to_cypher_literal, Error, PropertyMap, ResultValue, Value};

/// A row as a golden line: values as Cypher literals joined by ` | `.
pub fn row(values: &[Value]) -> String {
    values.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | ")
}

/// A Bolt plan map (`operatorType`, `args.Details`, `children`) as lines
/// `01)ProduceResults: n`, `02)--NodeByLabelScan: n:A`, depth-first, `--` per level.
pub fn plan(plan: &Value) -> Vec<String> {
    let mut out = Vec::new();
    plan_lines(plan, 0, &mut out);
    out
}

fn plan_lines(op: &Value, depth: usize, out: &mut Vec<String>) {
    let Value::Map(m) = op else {
        out.push(format!("{:02})<not a plan map: {}>", out.len() + 1, to_cypher_literal(op)));
        return;
    };
    let name = match m.get("operatorType") {
        Some(Value::String(s)) => s.to_string(),
        _ => "?".to_string(),
    };
    let details = match m.get("args") {
        Some(Value::Map(args)) => match args.get("Details") {
            Some(Value::String(d)) if !d.is_empty() => format!(": {d}"),
            _ => String::new(),
        },
        _ => String::new(),
    };
    out.push(format!("{:02}){}{name}{details}", out.len() + 1, "--".repeat(depth)));
    if let Some(Value::List(children)) = m.get("children") {
        for c in children.iter() {
            plan_lines(c, depth + 1, out);
        }
    }
}

/// The full Neo4j status code and the message of an error. Over Bolt the client keeps a code
/// it has no exact status for at the front of the message (`[Neo.ClientError...] text`); that
/// code is the one the server sent, so it wins.
pub fn error_code(e: &Error) -> (String, String) {
    if let Some(rest) = e.message.strip_prefix('[') {
        if let Some((code, msg)) = rest.split_once("] ") {
            if code.starts_with("Neo.") {
                return (code.to_string(), msg.to_string());
            }
        }
    }
    (e.status.code().to_string(), e.message.clone())
}

/// Evaluates a `params` map literal (`{k: v, ...}`) by running `RETURN <literal>` on a scratch
/// in-memory database, so every Cypher value constructor is available.
pub fn params(literal: &str) -> Result<PropertyMap, String> {
    let db = Database::in_memory();
    let mut session = db.session();
    let fail = |e: Error| format!("params {literal}: {e}");
    session
        .run(&format!("RETURN {literal} AS params"), PropertyMap::new(), TxConfig::default())
        .map_err(fail)?;
    let mut rows = Vec::new();
    let mut sink = |r: Vec<ResultValue>| {
        rows.push(r);
        Ok(())
    };
    match session.pull(None, -1, &mut sink).map_err(fail)? {
        PullOutcome::Done(_) => {}
        PullOutcome::HasMore => return Err(format!("params {literal}: result not exhausted")),
    }
    match rows.pop().and_then(|mut r| r.pop()).map(Value::from) {
        Some(Value::Map(m)) => Ok(m),
        other => Err(format!("params {literal}: not a map literal (got {other:?})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_model::Status;

    // Goal: codes the Bolt client could not map exactly are recovered from the message.
    #[test]
    fn error_code_prefers_the_servers_code() {
        let e = Error::new(Status::RequestInvalid, "[Neo.ClientError.Schema.IndexAlreadyExists] x");
        assert_eq!(
            error_code(&e),
            ("Neo.ClientError.Schema.IndexAlreadyExists".into(), "x".into())
        );
        let e = Error::new(Status::SyntaxError, "[bad] y");
        assert_eq!(error_code(&e).0, "Neo.ClientError.Statement.SyntaxError");
    }

    // Goal: params of nested and constructed types come back as values; junk is an error.
    #[test]
    fn params_are_evaluated_as_a_map_literal() {
        let p = params("{a: [1, 2.5, 'x'], b: {c: null}, d: date('2020-01-02')}").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(to_cypher_literal(p.get("a").unwrap()), "[1, 2.5, 'x']");
        assert!(params("[1, 2]").is_err());
        assert!(params("{a: }").is_err());
    }

    // Goal: plan lines number operators depth-first and indent children.
    #[test]
    fn plan_renders_nested_operators() {
        let leaf =
            Value::Map([("operatorType", Value::from("AllNodesScan"))].into_iter().collect());
        let mut args = PropertyMap::new();
        args.insert("Details".into(), Value::from("n"));
        let root = Value::Map(
            [
                ("operatorType", Value::from("ProduceResults")),
                ("args", Value::Map(args)),
                ("children", Value::List(vec![leaf])),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(plan(&root), vec!["01)ProduceResults: n", "02)--AllNodesScan"]);
    }
}
