//! Helpers the engine's tests share (`index_equivalence`, `text_index_equivalence`,
//! `point_index_equivalence`, `fulltext`): a query run to completion with its rows as Cypher
//! literals, the operators of an EXPLAIN plan, two fresh file-backed databases, a query list
//! compared between them, and a small deterministic random generator.
// Not every helper is used by every test module.
#![allow(dead_code)]

use arbor_engine::{Database, DatabaseConfig, PullOutcome, Session, TxConfig};
use arbor_model::{to_cypher_literal, Value};
use tempfile::TempDir;

/// Runs `q` in auto-commit (or the session's open transaction) and pulls every row, each as its
/// values' Cypher literals joined by ` | `; an error names the query.
pub fn run(s: &mut Session, q: &str) -> Result<Vec<String>, String> {
    s.run(q, Default::default(), TxConfig::default()).map_err(|e| format!("{q}: {e}"))?;
    let mut rows = Vec::new();
    let mut sink = |row: Vec<arbor_engine::ResultValue>| {
        let row: Vec<Value> = row.into_iter().map(Value::from).collect();
        rows.push(row.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | "));
        Ok(())
    };
    match s.pull(None, -1, &mut sink).map_err(|e| format!("{q}: {e}"))? {
        PullOutcome::Done(_) => Ok(rows),
        PullOutcome::HasMore => Err(format!("{q}: not exhausted")),
    }
}

/// [`run`], panicking with the query and the error on failure.
pub fn run_or_panic(s: &mut Session, q: &str) -> Vec<String> {
    run(s, q).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `query` with `config` and pulls all of it in batches of 100; the rows as values, or
/// the error's status.
pub fn all(
    s: &mut Session,
    query: &str,
    config: TxConfig,
) -> Result<Vec<Vec<Value>>, arbor_engine::Status> {
    s.run(query, arbor_engine::PropertyMap::new(), config).map_err(|e| e.status)?;
    let mut rows = Vec::new();
    loop {
        match s.pull(None, 100, &mut |r| {
            rows.push(r.into_iter().map(Value::from).collect::<Vec<_>>());
            Ok(())
        }) {
            Ok(PullOutcome::HasMore) => {}
            Ok(PullOutcome::Done(_)) => return Ok(rows),
            Err(e) => return Err(e.status),
        }
    }
}

/// Every operator of `EXPLAIN q`, root first, as `describe` writes its plan map.
fn plan_with(s: &mut Session, q: &str, describe: fn(&str, &Value) -> String) -> Vec<String> {
    s.run(&format!("EXPLAIN {q}"), Default::default(), TxConfig::default()).unwrap();
    let PullOutcome::Done(summary) = s.pull(None, -1, &mut |_| Ok(())).unwrap() else {
        panic!("EXPLAIN not exhausted")
    };
    fn walk(v: &Value, describe: fn(&str, &Value) -> String, out: &mut Vec<String>) {
        if let Value::Map(m) = v {
            if let Some(Value::String(t)) = m.get("operatorType") {
                out.push(describe(t, v));
            }
            if let Some(Value::List(c)) = m.get("children") {
                c.iter().for_each(|c| walk(c, describe, out));
            }
        }
    }
    let mut out = Vec::new();
    walk(summary.plan.as_ref().expect("EXPLAIN has a plan"), describe, &mut out);
    out
}

/// Operator names in an EXPLAIN plan.
pub fn plan_ops(s: &mut Session, q: &str) -> Vec<String> {
    plan_with(s, q, |t, _| t.to_string())
}

/// `operatorType details` of every operator in an EXPLAIN plan.
pub fn plan_details(s: &mut Session, q: &str) -> Vec<String> {
    plan_with(s, q, |t, v| {
        let details = match v {
            Value::Map(m) => match m.get("args") {
                Some(Value::Map(a)) => match a.get("Details") {
                    Some(Value::String(d)) => d.to_string(),
                    _ => String::new(),
                },
                _ => String::new(),
            },
            _ => String::new(),
        };
        format!("{t} {details}")
    })
}

/// Two fresh databases, each in its own temporary directory (kept alive with it): the plain
/// one and the one the test gives indexes, to compare.
pub fn two_databases() -> ((TempDir, Database), (TempDir, Database)) {
    let open = || {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        (dir, db)
    };
    (open(), open())
}

/// Runs every query on both sessions and asserts equal rows (in any order); `when` names the
/// state of the data in a failure.
pub fn compare(plain: &mut Session, indexed: &mut Session, qs: &[String], when: &str) {
    for q in qs {
        let mut a = run(plain, q).unwrap();
        let mut b = run(indexed, q).unwrap();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{when}: {q}");
    }
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A small linear congruential generator: the graphs are random but the same every run.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// `nodes` nodes with ids and `rels` relationships of types `R` (three in four) and `S`
/// between random nodes (so self-loops and parallel relationships occur); the graphs of
/// `qpp_equivalence` and `shortest_equivalence`.
pub fn random_rs_graph(s: &mut Session, seed: u64, nodes: u64, rels: u64) {
    exec(s, "MATCH (n) DETACH DELETE n");
    exec(s, &format!("UNWIND range(0, {}) AS i CREATE (:N {{id: i}})", nodes - 1));
    let mut rng = Lcg(seed);
    let mut edges = Vec::new();
    for _ in 0..rels {
        let (a, b) = (rng.below(nodes), rng.below(nodes));
        let ty = if rng.below(4) == 0 { "S" } else { "R" };
        edges.push(format!("{{a: {a}, b: {b}, t: '{ty}'}}"));
    }
    exec(
        s,
        &format!(
            "UNWIND [{}] AS e MATCH (a:N {{id: e.a}}), (b:N {{id: e.b}}) \
             FOREACH (_ IN CASE WHEN e.t = 'R' THEN [1] ELSE [] END | CREATE (a)-[:R]->(b)) \
             FOREACH (_ IN CASE WHEN e.t = 'S' THEN [1] ELSE [] END | CREATE (a)-[:S]->(b))",
            edges.join(", ")
        ),
    );
}

fn exec(s: &mut Session, q: &str) {
    run(s, q).unwrap_or_else(|e| panic!("{e}"));
}
