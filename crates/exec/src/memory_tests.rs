//! Memory limits per operator: each query below holds a large intermediate result (a sort
//! buffer, a group table, a `collect`, a DISTINCT set, an Eager buffer, a cartesian product, a
//! var-length expansion's paths, a `range()`, a string built by `reduce`, a huge parsed query).
//! Without a limit it runs; under a 1 MiB transaction limit it fails with
//! `TransactionOutOfMemoryError`, and under a 1 MiB pool with `MemoryPoolOutOfMemoryError`.
//! The unit-test binary runs on the accounting allocator (see lib.rs).

use std::sync::Arc;

use arbor_model::{PropertyMap, Result, Status};

use crate::memory::{self, MemoryPool};
use crate::testing::MemGraph;
use crate::{Execution, PreparedQuery};

/// Parses, plans and runs `q` to the end inside a transaction of `pool`; returns the rows.
fn run_in(pool: &Arc<MemoryPool>, g: &mut MemGraph, q: &str) -> Result<usize> {
    let tx = pool.transaction();
    let _scope = memory::enter(&tx);
    let stmt = arbor_cypher_syntax::parse(q)?;
    let pq = Arc::new(PreparedQuery::prepare(&stmt, q)?);
    memory::check()?;
    let mut ex = Execution::start(pq, PropertyMap::new())?;
    let mut n = 0;
    while ex.next(g)?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// 200 × 200 rows from two small ranges.
const ROWS: &str = "UNWIND range(1, 200) AS x UNWIND range(1, 200) AS y ";

fn graph() -> MemGraph {
    let mut g = MemGraph::default();
    let q = "UNWIND range(1, 300) AS i CREATE (:N {i: i})-[:R]->(:M {i: i})";
    run_in(&Arc::new(MemoryPool::default()), &mut g, q).expect("setup");
    g.commit();
    g
}

/// Each accounted operator, as a query that runs without a limit and fails under 1 MiB.
const CASES: &[(&str, &str)] = &[
    ("sort", "RETURN x, y ORDER BY x * y DESC, y"),
    ("group table", "RETURN x, y, count(*) AS c"),
    ("collect", "RETURN size(collect([x, y])) AS n"),
    ("count DISTINCT", "RETURN count(DISTINCT [x, y]) AS n"),
    ("DISTINCT", "WITH DISTINCT x, y RETURN count(*) AS n"),
    ("UNWIND of a collected list", "WITH collect(x) AS c UNWIND c AS z RETURN count(z) AS n"),
    ("list building", "RETURN size(collect(toString(x) + ':' + toString(y))) AS n"),
];

#[test]
fn each_operator_fails_with_the_transaction_code_under_a_small_limit() {
    let mut g = graph();
    let free = Arc::new(MemoryPool::default());
    let tight = Arc::new(MemoryPool::new(0, 1 << 20));
    for (what, tail) in CASES {
        let q = format!("{ROWS}{tail}");
        assert!(run_in(&free, &mut g, &q).is_ok(), "{what}: runs without a limit");
        let e = run_in(&tight, &mut g, &q).expect_err(what);
        assert_eq!(e.status, Status::TransactionOutOfMemory, "{what}: {e}");
        assert!(e.message.contains("db.memory.transaction.max threshold reached"), "{e}");
        assert_eq!(tight.used(), 0, "{what}: the failed transaction gave its memory back");
    }
}

#[test]
fn graph_shaped_intermediates_are_limited_too() {
    let mut g = graph();
    let free = Arc::new(MemoryPool::default());
    let tight = Arc::new(MemoryPool::new(0, 1 << 20));
    let cases = [
        ("cartesian product", "MATCH (a:N), (b:M) RETURN size(collect([a, b])) AS n"),
        ("var-length paths", "MATCH p = (a)-[*0..1]-(b), (c:N) RETURN size(collect([p, c])) AS n"),
        ("Eager buffer", "MATCH (a:N), (b:M) CREATE (:C) RETURN count(*) AS n"),
        ("range()", "RETURN size(range(1, 1000000)) AS n"),
        ("reduce string", "RETURN size(reduce(s = 'ab', i IN range(1, 20) | s + s)) AS n"),
    ];
    for (what, q) in cases {
        assert!(run_in(&free, &mut g, q).is_ok(), "{what}: runs without a limit");
        let e = run_in(&tight, &mut g, q).expect_err(what);
        assert_eq!(e.status, Status::TransactionOutOfMemory, "{what}: {e}");
    }
}

#[test]
fn parsing_a_huge_query_is_limited_and_the_pool_has_its_own_code() {
    let mut g = MemGraph::default();
    let branches: Vec<String> = (0..2000).map(|i| format!("RETURN {i} AS x")).collect();
    let q = branches.join(" UNION ");
    assert_eq!(run_in(&Arc::new(MemoryPool::default()), &mut g, &q).ok(), Some(2000));
    let e = run_in(&Arc::new(MemoryPool::new(0, 1 << 20)), &mut g, &q).unwrap_err();
    assert_eq!(e.status, Status::TransactionOutOfMemory, "{e}");
    let pool = Arc::new(MemoryPool::new(1 << 20, 0));
    let e = run_in(&pool, &mut g, &format!("{ROWS}RETURN size(collect([x, y])) AS n")).unwrap_err();
    assert_eq!(e.status, Status::MemoryExhausted, "{e}");
    assert_eq!(e.status.code(), "Neo.TransientError.General.MemoryPoolOutOfMemoryError");
    assert!(e.message.contains("db.memory.transaction.total.max threshold reached"), "{e}");
}

/// ORDER BY with a LIMIT keeps only the rows it returns (plus a bounded buffer): the top 10 of
/// the 40,000 rows that a full sort cannot hold under 1 MiB fit.
#[test]
fn order_by_with_a_limit_holds_only_the_rows_it_keeps() {
    let mut g = graph();
    let tight = Arc::new(MemoryPool::new(0, 1 << 20));
    let q = format!("{ROWS}RETURN x, y ORDER BY x * y DESC, y LIMIT 10");
    assert_eq!(run_in(&tight, &mut g, &q).ok(), Some(10), "top 10 of 40,000 rows");
    let q = format!("{ROWS}RETURN x, y ORDER BY x * y DESC, y");
    let e = run_in(&tight, &mut g, &q).expect_err("a full sort does not fit");
    assert_eq!(e.status, Status::TransactionOutOfMemory, "{e}");
}
