//! Differential tests of the typed column aggregation ([`super::TypedAgg`]): random graphs
//! (small and large integer keys, missing values, integers near the range's ends so sums
//! overflow into floats, and in some graphs floats, strings and booleans among the integers)
//! answered by the fused scan (typed batches where they are all integers, `Value` batches
//! elsewhere) and by the row-at-a-time operators (`PROFILE`), which must agree, errors
//! included.

use std::sync::Arc;

use arbor_model::{to_cypher_literal, PropertyMap, Value};

use crate::testing::MemGraph;
use crate::{Execution, PreparedQuery};

/// Rows (sorted: groups come in no fixed order) or the error of `q`.
fn answer(g: &mut MemGraph, q: &str, params: &[(&str, Value)]) -> Result<Vec<String>, String> {
    let run = |g: &mut MemGraph| -> arbor_model::Result<Vec<String>> {
        let stmt = arbor_cypher_syntax::parse(q)?;
        let pq = Arc::new(PreparedQuery::prepare(&stmt, q)?);
        let params: PropertyMap = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let mut ex = Execution::start(pq, params)?;
        let mut rows = Vec::new();
        while let Some(r) = ex.next(g)? {
            rows.push(r.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | "));
        }
        Ok(rows)
    };
    let out = run(g).map_err(|e| e.to_string());
    g.commit();
    out.map(|mut rows| {
        rows.sort();
        rows
    })
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A random graph of `n` nodes; `mixed`: some values are floats, strings or booleans.
fn graph(seed: u64, n: usize, mixed: bool) -> MemGraph {
    let mut r = Lcg(seed);
    let mut g = MemGraph::new();
    let mut rows = Vec::new();
    for i in 0..n {
        let mut m = PropertyMap::new();
        m.insert("id".into(), Value::Int(i as i64));
        let k = match r.next(20) {
            0 => None,
            1 => Some(Value::Int(5000 + r.next(3) as i64)),
            2 => Some(Value::Int(-(r.next(4) as i64) - 1)),
            3 if mixed => Some(Value::Float(r.next(5) as f64)),
            4 if mixed => Some(Value::str(&format!("s{}", r.next(3)))),
            _ => Some(Value::Int(r.next(12) as i64)),
        };
        let a = match r.next(25) {
            0 | 1 => None,
            2 => Some(Value::Int(i64::MAX - r.next(100) as i64)),
            3 => Some(Value::Int(i64::MIN + r.next(100) as i64)),
            4 if mixed => Some(Value::Float(r.next(1000) as f64 / 8.0)),
            5 if mixed && seed.is_multiple_of(2) => Some(Value::Bool(true)),
            _ => Some(Value::Int(r.next(200) as i64 - 50)),
        };
        let b = match r.next(6) {
            0 => None,
            _ => Some(Value::Int(r.next(1000) as i64)),
        };
        for (key, v) in [("k", k), ("a", a), ("b", b)] {
            if let Some(v) = v {
                m.insert(key.into(), v);
            }
        }
        rows.push(Value::Map(m));
    }
    let q = "UNWIND $rows AS r CREATE (n:T) SET n = r";
    answer(&mut g, q, &[("rows", Value::List(rows))]).expect("setup");
    // Some nodes without the label, some deleted (holes in the id space).
    answer(&mut g, "MATCH (n:T) WHERE n.id % 7 = 3 REMOVE n:T", &[]).expect("setup");
    answer(&mut g, "MATCH (n:T) WHERE n.id % 11 = 5 DELETE n", &[]).expect("setup");
    g
}

const QUERIES: &[&str] = &[
    "MATCH (n:T) RETURN n.k, count(*)",
    "MATCH (n) RETURN count(n), count(n.a)",
    "MATCH (n:T) WHERE n.b >= 300 RETURN n.k, count(*)",
    "MATCH (n) RETURN min(n.b), max(n.b), avg(n.b)",
    "MATCH (n) RETURN min(n.a), max(n.a), count(n.a)",
    "MATCH (n:T) RETURN n.k, sum(n.b), avg(n.b), min(n.b), max(n.b), count(n.b)",
    "MATCH (n:T) WHERE n.k < 6 AND n.b <> 17 RETURN n.k, count(n), sum(n.b), max(n.k)",
    "MATCH (n:T) WHERE n.k = 4 RETURN sum(n.b), count(*), avg(n.k)",
    "MATCH (n:T) WHERE n.b < $p RETURN n.k, count(*), min(n.b)",
    "MATCH (n) WHERE n.k > $p AND n.b > $p RETURN count(*), sum(n.k)",
    "MATCH (n:T) RETURN n.b % 3, count(*)",
    "MATCH (n:T) RETURN n.nokey, count(*), sum(n.nokey), avg(n.nokey)",
    "MATCH (n:T) WHERE n.nokey > 1 RETURN count(*)",
    "MATCH (n:T) RETURN n.k, collect(n.b), count(DISTINCT n.b)",
    // Counts only (merged once at the end of the scan), with and without a key or a filter.
    "MATCH (n:T) WHERE n.b >= 300 RETURN count(*), count(n.a)",
    "MATCH (n:T) RETURN n.k, count(n.a), count(*), count(n.b)",
    "MATCH (n) WHERE n.b < $p RETURN n.k, count(n)",
    // Summaries that keep only some of sum, min and max per column.
    "MATCH (n:T) RETURN n.k, min(n.b), max(n.a), avg(n.k)",
    "MATCH (n) RETURN max(n.b), sum(n.k), min(n.k)",
    // Sums that overflow into floats, and errors (booleans in some graphs).
    "MATCH (n:T) RETURN n.k, sum(n.a), avg(n.a)",
    "MATCH (n) RETURN sum(n.a), avg(n.a), min(n.a), max(n.a)",
    "MATCH (n:T) WHERE n.b > 100 RETURN sum(n.a), count(*)",
];

fn compare(g: &mut MemGraph, when: &str) {
    for q in QUERIES {
        for p in [Value::Int(500), Value::Int(3), Value::Float(2.5), Value::Null] {
            let params = [("p", p.clone())];
            let plain = answer(g, q, &params);
            let reference = answer(g, &format!("PROFILE {q}"), &params);
            assert_eq!(plain, reference, "{when}: {q} with $p = {p:?}");
            if !q.contains('$') {
                break;
            }
        }
    }
}

#[test]
fn typed_aggregation_equals_row_at_a_time() {
    super::TYPED_BATCHES.with(|c| c.set(0));
    for seed in 0..10u64 {
        let mixed = seed % 4 >= 2 || seed == 9;
        // The last two span several typed batches (`TYPED_BATCH` ids each).
        let n = if seed >= 8 { 2 * super::super::groups::TYPED_BATCH + 700 } else { 300 };
        let mut g = graph(seed, n + 97 * seed as usize, mixed);
        compare(&mut g, &format!("seed {seed}"));
        // Later writes: values change type, nodes go, new ones come.
        let writes = [
            "MATCH (n:T) WHERE n.id % 13 = 1 SET n.b = toFloat(n.b)",
            "MATCH (n:T) WHERE n.id % 17 = 2 SET n.k = 'late'",
            "MATCH (n:T) WHERE n.id % 5 = 0 DETACH DELETE n",
            "UNWIND range(1, 50) AS i CREATE (:T {k: i % 4, b: i * 1000000007})",
        ];
        for w in writes {
            answer(&mut g, w, &[]).expect(w);
        }
        compare(&mut g, &format!("seed {seed} after writes"));
    }
    // The typed form did run (graphs without mixed values are all integers).
    assert!(super::TYPED_BATCHES.with(|c| c.get()) > 100);
}
