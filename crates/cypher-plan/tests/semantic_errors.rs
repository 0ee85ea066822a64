//! Runs `semantic_errors.txt`: each query must bind and plan (`ok`) or fail at compile time
//! with the given Neo4j status code and TCK detail name.

use arbor_cypher_plan::{plan, ProcSig, Resolver, ScalarFn};

/// Knows no procedures and only `rand()` as a (non-deterministic) scalar function.
struct NoFunctions;

impl Resolver for NoFunctions {
    fn scalar(&self, _: &str) -> Option<ScalarFn> {
        None
    }
    fn procedure(&self, _: &str) -> Option<ProcSig> {
        None
    }
}

/// `None` if `query` plans, else `"<status code> <detail>"`.
fn outcome(query: &str) -> Result<Option<String>, String> {
    let stmt = arbor_cypher_syntax::parse(query).map_err(|e| format!("does not parse: {e}"))?;
    Ok(plan(&stmt, query, &NoFunctions)
        .err()
        .map(|e| format!("{} {}", e.status.code(), e.detail.unwrap_or("(no detail)"))))
}

#[test]
fn semantic_errors_file() {
    let text = include_str!("semantic_errors.txt");
    let mut failures = Vec::new();
    let mut cases = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((query, want)) = line.rsplit_once(" | ") else {
            panic!("line {}: expected `query | expected`", i + 1);
        };
        cases += 1;
        let got = match outcome(query) {
            Ok(None) => "ok".to_string(),
            Ok(Some(e)) => e,
            Err(e) => e,
        };
        if got != want.trim() {
            failures.push(format!("line {}: {query}\n  want {want}\n  got  {got}", i + 1));
        }
    }
    assert!(cases > 50, "only {cases} cases read");
    assert!(failures.is_empty(), "{} of {cases} failed:\n{}", failures.len(), failures.join("\n"));
}
