//! `CALL { ... } IN TRANSACTIONS` through the engine: each batch is an inner transaction that
//! the next batch and the rest of the statement see (Neo4j 5.26's answers, taken from the
//! shared Neo4j), `ON ERROR` and `REPORT STATUS`, the error in an explicit transaction, and
//! that what earlier batches committed survives a failed batch and a crash.

use arbor_engine::{Database, DatabaseConfig, PropertyMap, PullOutcome, Session, TxConfig, Value};
use arbor_model::{Error, Status};

/// Runs `query` and pulls all of it.
fn run(s: &mut Session, query: &str) -> Result<Vec<Vec<Value>>, Error> {
    s.run(query, PropertyMap::new(), TxConfig::default())?;
    let mut rows = Vec::new();
    loop {
        match s.pull(None, 100, &mut |r| {
            rows.push(r.into_iter().map(arbor_engine::Value::from).collect::<Vec<_>>());
            Ok(())
        })? {
            PullOutcome::HasMore => {}
            PullOutcome::Done(_) => return Ok(rows),
        }
    }
}

/// The single integer a query returns.
fn int(s: &mut Session, query: &str) -> i64 {
    match run(s, query).unwrap().as_slice() {
        [row] => match row.as_slice() {
            [Value::Int(n)] => *n,
            other => panic!("{query}: not one integer: {other:?}"),
        },
        other => panic!("{query}: not one row: {other:?}"),
    }
}

fn text(rows: &[Vec<Value>]) -> Vec<String> {
    rows.iter()
        .map(|r| r.iter().map(arbor_model::to_cypher_literal).collect::<Vec<_>>().join(" | "))
        .collect()
}

/// The bug of issue 18: a later batch deleted a relationship an earlier batch had already
/// deleted, because it read the statement's first snapshot (`Outdated`). Each batch must see
/// what the batches before it committed.
#[test]
fn detach_delete_one_row_per_batch_sees_earlier_batches() {
    let db = Database::in_memory();
    let mut s = db.session();
    run(&mut s, "CREATE (:U {id: 0})-[:R]->(:U {id: 2})").unwrap();
    run(&mut s, "MATCH (n:U) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 1 ROWS").unwrap();
    assert_eq!(int(&mut s, "MATCH (n:U) RETURN count(n)"), 0);
    assert_eq!(int(&mut s, "MATCH ()-[r:R]->() RETURN count(r)"), 0);
    // langchain's vector-store delete, default batch size; a chain of 10 nodes.
    run(&mut s, "UNWIND range(1, 10) AS i CREATE (:L {i: i})").unwrap();
    run(&mut s, "MATCH (a:L), (b:L {i: a.i + 1}) CREATE (a)-[:N]->(b)").unwrap();
    run(&mut s, "MATCH (n:L) CALL (n) { DETACH DELETE n } IN TRANSACTIONS").unwrap();
    assert_eq!(int(&mut s, "MATCH (n:L) RETURN count(n)"), 0);
}

/// What the outer part sees after an inner commit (Neo4j: the committed state). A node deleted
/// by an earlier batch reads as having no properties; a MATCH after the call sees every batch.
#[test]
fn outer_part_reads_what_the_batches_committed() {
    let db = Database::in_memory();
    let mut s = db.session();
    run(&mut s, "CREATE (:U {id: 0})-[:R]->(:U {id: 2})").unwrap();
    let rows = run(
        &mut s,
        "MATCH (n:U) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 1 ROWS \
         WITH n OPTIONAL MATCH (m:U) RETURN n.id, count(m)",
    )
    .unwrap();
    assert_eq!(text(&rows), ["null | 0"]);
    let rows = run(
        &mut s,
        "UNWIND [1, 2, 3] AS i CALL (i) { CREATE (:X {i: i}) } IN TRANSACTIONS OF 1 ROW \
         WITH i MATCH (x:X) RETURN i, count(x)",
    )
    .unwrap();
    assert_eq!(text(&rows), ["1 | 3", "2 | 3", "3 | 3"]);
    // MERGE in batches finds what an earlier batch created.
    run(
        &mut s,
        "UNWIND [1, 2, 3, 4] AS i CALL (i) { MERGE (m:M {k: i % 2}) ON CREATE SET m.c = 1 \
         ON MATCH SET m.c = m.c + 1 } IN TRANSACTIONS OF 1 ROWS",
    )
    .unwrap();
    let rows = run(&mut s, "MATCH (m:M) RETURN m.k, m.c ORDER BY m.k").unwrap();
    assert_eq!(text(&rows), ["0 | 2", "1 | 2"]);
}

/// ON ERROR FAIL (the default): the statement fails with the batch's error and the count of
/// committed inner transactions; what earlier batches committed stays committed, also after
/// a crash.
#[test]
fn failed_batch_keeps_earlier_batches_across_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        let mut s = db.session();
        let e = run(
            &mut s,
            "UNWIND [1, 2, 0, 3] AS i CALL (i) { CREATE (:N {v: 1 / i}) } IN TRANSACTIONS OF 1 ROW",
        )
        .unwrap_err();
        assert_eq!(e.status, Status::ArithmeticError);
        assert_eq!(e.message, "/ by zero (Transactions committed: 2)");
        assert_eq!(int(&mut s, "MATCH (n:N) RETURN count(n)"), 2);
        db.crash_for_test();
    }
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    assert_eq!(int(&mut s, "MATCH (n:N) RETURN sum(n.v)"), 1); // 1/1 + 1/2 (integer division)
}

/// ON ERROR CONTINUE / BREAK with REPORT STATUS: Neo4j 5.26's rows (transaction ids aside),
/// and only committed batches count in the statistics and in the graph.
#[test]
fn on_error_continue_and_break_report_each_batch() {
    let db = Database::in_memory();
    let mut s = db.session();
    let q = |mode: &str| {
        format!(
            "UNWIND [1, 2, 0, 3, 4] AS i CALL (i) {{ CREATE (:N {{v: 1 / i}}) UNWIND [1, 2] AS k \
             RETURN k }} IN TRANSACTIONS OF 2 ROWS ON ERROR {mode} REPORT STATUS AS s \
             RETURN i, k, s.started, s.committed, s.errorMessage, \
             s.transactionId STARTS WITH 'neo4j-transaction-'"
        )
    };
    let rows = run(&mut s, &q("CONTINUE")).unwrap();
    assert_eq!(
        text(&rows),
        [
            "1 | 1 | true | true | null | true",
            "1 | 2 | true | true | null | true",
            "2 | 1 | true | true | null | true",
            "2 | 2 | true | true | null | true",
            "0 | null | true | false | '/ by zero' | true",
            "3 | null | true | false | '/ by zero' | true",
            "4 | 1 | true | true | null | true",
            "4 | 2 | true | true | null | true",
        ]
    );
    assert_eq!(int(&mut s, "MATCH (n:N) RETURN count(n)"), 3);
    run(&mut s, "MATCH (n:N) DELETE n").unwrap();
    let rows = run(&mut s, &q("BREAK")).unwrap();
    assert_eq!(
        text(&rows)[4..],
        [
            "0 | null | true | false | '/ by zero' | true",
            "3 | null | true | false | '/ by zero' | true",
            "4 | null | false | false | null | null",
        ]
    );
    assert_eq!(int(&mut s, "MATCH (n:N) RETURN count(n)"), 2);
    // The statistics count only what committed.
    s.run(
        "UNWIND [1, 0, 3] AS i CALL (i) { CREATE (:S {v: 1 / i}) } IN TRANSACTIONS OF 1 ROWS \
         ON ERROR CONTINUE",
        PropertyMap::new(),
        TxConfig::default(),
    )
    .unwrap();
    let done = s.pull(None, -1, &mut |_| Ok(())).unwrap();
    let PullOutcome::Done(summary) = done else { panic!("not done") };
    assert_eq!(summary.stats.nodes_created, 2);
}

/// In an explicit transaction the statement fails with Neo4j's code and message, and an
/// empty input does not start an inner transaction (no error, as in Neo4j).
#[test]
fn explicit_transaction_is_refused() {
    let db = Database::in_memory();
    let mut s = db.session();
    s.begin(TxConfig::default()).unwrap();
    let e = run(&mut s, "UNWIND [1] AS i CALL (i) { CREATE (:Q) } IN TRANSACTIONS").unwrap_err();
    assert_eq!(e.status, Status::TransactionStartFailed);
    assert_eq!(e.status.code(), "Neo.DatabaseError.Transaction.TransactionStartFailed");
    assert_eq!(
        e.message,
        "A query with 'CALL { ... } IN TRANSACTIONS' can only be executed in an implicit \
         transaction, but tried to execute in an explicit transaction."
    );
    s.reset();
    s.begin(TxConfig::default()).unwrap();
    let rows = run(&mut s, "UNWIND [] AS i CALL (i) { CREATE (:Q) } IN TRANSACTIONS RETURN i");
    assert!(rows.unwrap().is_empty());
    s.reset();
    assert_eq!(int(&mut s, "MATCH (q:Q) RETURN count(q)"), 0);
}

/// `apoc.periodic.iterate`: the action runs for the rows of the first statement in batches of
/// inner transactions; a failing batch is rolled back and counted (APOC's columns).
#[test]
fn apoc_periodic_iterate_commits_batches() {
    let db = Database::in_memory();
    let mut s = db.session();
    run(&mut s, "UNWIND range(1, 10) AS i CREATE (:A {i: i})-[:R]->(:B)").unwrap();
    let rows = run(
        &mut s,
        "CALL apoc.periodic.iterate('MATCH (a:A) RETURN a', 'DETACH DELETE a', \
         {batchSize: 3, parallel: true}) \
         YIELD batches, total, committedOperations, failedOperations, failedBatches, \
         updateStatistics, errorMessages RETURN batches, total, committedOperations, \
         failedOperations, failedBatches, updateStatistics.nodesDeleted, \
         updateStatistics.relationshipsDeleted, errorMessages",
    )
    .unwrap();
    assert_eq!(text(&rows), ["4 | 10 | 10 | 0 | 0 | 10 | 10 | {}"]);
    assert_eq!(int(&mut s, "MATCH (a:A) RETURN count(a)"), 0);
    let rows = run(
        &mut s,
        "CALL apoc.periodic.iterate('UNWIND [1, 2, 0, 3] AS i RETURN i', \
         'CREATE (:C {v: 1 / $i})', {batchSize: 2}) \
         YIELD batches, failedBatches, committedOperations, errorMessages, batch \
         RETURN batches, failedBatches, committedOperations, errorMessages, batch.failed",
    )
    .unwrap();
    assert_eq!(text(&rows), ["2 | 1 | 2 | {`/ by zero`: 2} | 1"]);
    assert_eq!(int(&mut s, "MATCH (c:C) RETURN count(c)"), 2);
}

/// `apoc.periodic.commit`: reruns the statement, each time in a new transaction, until it
/// returns 0; a statement without LIMIT is refused.
#[test]
fn apoc_periodic_commit_runs_until_zero() {
    let db = Database::in_memory();
    let mut s = db.session();
    run(&mut s, "UNWIND range(1, 25) AS i CREATE (:D {i: i})").unwrap();
    let rows = run(
        &mut s,
        "CALL apoc.periodic.commit('MATCH (d:D) WITH d LIMIT $n DETACH DELETE d \
         RETURN count(*)', {n: 10}) YIELD updates, executions RETURN updates, executions",
    )
    .unwrap();
    assert_eq!(text(&rows), ["25 | 4"]);
    let e = run(&mut s, "CALL apoc.periodic.commit('MATCH (d:D) DELETE d RETURN count(*)')")
        .unwrap_err();
    assert_eq!(e.status, Status::ArgumentError);
}
