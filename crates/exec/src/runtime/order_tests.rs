//! `Top` against `Sort`: ORDER BY ... SKIP s LIMIT l must give exactly the rows `s..s + l` of
//! the same ORDER BY without SKIP and LIMIT (a full stable sort), ties in input order, over
//! random rows with duplicate, null, mixed-type and multi-column keys, and with more input rows
//! than the buffer so it is cut back many times. Then the edges a `Limit` over a `Sort` had:
//! LIMIT 0 reads nothing (or drains the input when it writes), LIMIT's count is checked before
//! SKIP's, a key's error surfaces even for rows that would not be kept.

use std::sync::Arc;

use arbor_model::{to_cypher_literal, PropertyMap, Status, Value};

use crate::testing::MemGraph;
use crate::{Execution, PreparedQuery};

fn rows(g: &mut MemGraph, q: &str, params: &[(&str, Value)]) -> arbor_model::Result<Vec<String>> {
    let stmt = arbor_cypher_syntax::parse(q)?;
    let pq = Arc::new(PreparedQuery::prepare(&stmt, q)?);
    let params: PropertyMap = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let mut ex = Execution::start(pq, params)?;
    let mut out = Vec::new();
    while let Some(r) = ex.next(g)? {
        out.push(r.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | "));
    }
    g.commit();
    Ok(out)
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A key value: mostly small integers (many ties), some nulls, floats equal to integers,
/// strings and booleans (Cypher orders across types).
fn key(r: &mut Lcg, distinct: u64) -> Value {
    match r.next(16) {
        0 => Value::Null,
        1 => Value::Float(r.next(distinct) as f64),
        2 => Value::Float(r.next(distinct) as f64 + 0.5),
        3 => Value::str(&format!("s{}", r.next(distinct))),
        4 => Value::Bool(r.next(2) == 0),
        _ => Value::Int(r.next(distinct) as i64),
    }
}

#[test]
fn top_equals_a_slice_of_the_full_sort() {
    let mut g = MemGraph::new();
    let orders = ["a DESC, b", "a, b DESC", "a", "b DESC", "a DESC"];
    let slices: [(Option<u64>, u64); 9] = [
        (None, 0),
        (None, 1),
        (None, 10),
        (Some(3), 10),
        (Some(0), 5),
        (Some(2000), 7),
        (None, 1500),
        (Some(100), 2500),
        (Some(4990), 100),
    ];
    for (seed, n, distinct) in [(1u64, 5000usize, 40u64), (2, 3000, 3), (3, 200, 1000), (4, 0, 5)] {
        let mut r = Lcg(seed);
        let items: Vec<Value> = (0..n)
            .map(|i| {
                let mut m = PropertyMap::new();
                m.insert("i".into(), Value::Int(i as i64));
                m.insert("a".into(), key(&mut r, distinct));
                m.insert("b".into(), key(&mut r, distinct));
                Value::Map(m)
            })
            .collect();
        let params = [("rows", Value::List(items))];
        for order in orders {
            let base = format!("UNWIND $rows AS r WITH r.i AS i, r.a AS a, r.b AS b RETURN i, a, b ORDER BY {order}");
            let all = rows(&mut g, &base, &params).expect("full sort");
            assert_eq!(all.len(), n);
            for (skip, limit) in slices {
                let tail = match skip {
                    Some(s) => format!(" SKIP {s} LIMIT {limit}"),
                    None => format!(" LIMIT {limit}"),
                };
                let q = format!("{base}{tail}");
                let got = rows(&mut g, &q, &params).expect("top");
                let s = skip.unwrap_or(0) as usize;
                let want: Vec<String> = all.iter().skip(s).take(limit as usize).cloned().collect();
                assert_eq!(got, want, "seed {seed}, n {n}: {q}");
            }
        }
    }
}

#[test]
fn top_plans_as_neo4j_names_it() {
    let q = "UNWIND [3, 1, 2] AS x RETURN x ORDER BY x SKIP 1 LIMIT 1";
    let stmt = arbor_cypher_syntax::parse(q).expect("parse");
    let pq = PreparedQuery::prepare(&stmt, q).expect("plan");
    let text = to_cypher_literal(&pq.plan_description());
    assert!(text.contains("'Top'") && !text.contains("'Sort'"), "{text}");
    assert!(!text.contains("'Limit'") && !text.contains("'Skip'"), "{text}");
}

#[test]
fn top_keeps_the_edges_of_limit_over_sort() {
    let mut g = MemGraph::new();
    // LIMIT 0 over a read: the input is never read, so its error never happens.
    let q = "UNWIND [1, 0] AS x RETURN 1 / x AS y ORDER BY y LIMIT 0";
    assert_eq!(rows(&mut g, q, &[]).expect("limit 0"), Vec::<String>::new());
    // LIMIT 0 over a write: every write still happens.
    let q = "UNWIND range(1, 3) AS i CREATE (n:T {i: i}) RETURN n.i AS i ORDER BY i LIMIT 0";
    assert!(rows(&mut g, q, &[]).expect("limit 0 write").is_empty());
    let n = rows(&mut g, "MATCH (n:T) RETURN count(n) AS c", &[]).expect("count");
    assert_eq!(n, vec!["3"]);
    // A key's error on a row that would not be kept still fails the query (as under Sort).
    let q = "UNWIND [2, 1, 0] AS x RETURN x ORDER BY 6 / x LIMIT 1";
    let e = rows(&mut g, q, &[]).expect_err("division by zero");
    assert_eq!(e.status, Status::ArithmeticError, "{e}");
    // LIMIT's count is checked before SKIP's.
    let q = "UNWIND [1] AS x RETURN x ORDER BY x SKIP $s LIMIT $l";
    let params = [("s", Value::Int(-1)), ("l", Value::Int(-2))];
    let e = rows(&mut g, q, &params).expect_err("negative counts");
    assert!(e.message.contains("'-2'") && e.message.contains("(LIMIT)"), "{e}");
    let params = [("s", Value::Int(-1)), ("l", Value::Int(2))];
    let e = rows(&mut g, q, &params).expect_err("negative skip");
    assert!(e.message.contains("'-1'") && e.message.contains("(SKIP)"), "{e}");
}
