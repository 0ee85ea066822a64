//! The typed column aggregation (integer batches read straight from the base's integer
//! columns, selection vectors, per-batch summaries merged into the accumulators) against the
//! row-at-a-time operators (`PROFILE`) on random data in every place a node can live: the
//! compact base, the delta (changed values, changed types, deletions, label changes; integer-only
//! changes, which the storage gather overlays on the base column), an open transaction's own
//! writes, another transaction's uncommitted writes, and a rebuilt base where a key is no longer
//! integer-only.

use arbor_engine::{Database, DatabaseConfig, PullOutcome, Session, TxConfig};
use arbor_model::{to_cypher_literal, Value};

fn answer(s: &mut Session, q: &str) -> Result<Vec<String>, String> {
    s.run(q, Default::default(), TxConfig::default()).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    let mut sink = |row: Vec<arbor_engine::ResultValue>| {
        let row: Vec<Value> = row.into_iter().map(Value::from).collect();
        rows.push(row.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | "));
        Ok(())
    };
    match s.pull(None, -1, &mut sink).map_err(|e| e.to_string())? {
        PullOutcome::Done(_) => {
            rows.sort();
            Ok(rows)
        }
        PullOutcome::HasMore => panic!("{q}: not exhausted"),
    }
}

fn run(s: &mut Session, q: &str) {
    answer(s, q).unwrap_or_else(|e| panic!("{q}: {e}"));
}

const QUERIES: &[&str] = &[
    "MATCH (n:P) RETURN n.k, count(*)",
    "MATCH (n) RETURN count(n), count(n.a)",
    "MATCH (n:P) WHERE n.a >= 18 RETURN n.k, count(*)",
    "MATCH (n) RETURN min(n.a), max(n.a), avg(n.a)",
    "MATCH (n:P) RETURN n.k, sum(n.a), avg(n.a), min(n.b), max(n.b), count(n.b)",
    "MATCH (n:P) WHERE n.k < 5 AND n.a <> 20 RETURN n.k, count(n), sum(n.b)",
    "MATCH (n:P) WHERE n.b = 3 RETURN sum(n.a), count(*)",
    "MATCH (n) WHERE n.big > 0 RETURN n.k, sum(n.big), avg(n.big)",
    "MATCH (n:P) RETURN sum(n.big), max(n.big), min(n.big)",
];

fn compare(s: &mut Session, when: &str) {
    for q in QUERIES {
        let plain = answer(s, q);
        let reference = answer(s, &format!("PROFILE {q}"));
        assert_eq!(plain, reference, "{when}: {q}");
    }
    assert_ne!(answer(s, "MATCH (n:P) RETURN count(*)"), Ok(vec!["0".to_string()]), "{when}");
}

/// Creates `n` random `:P` nodes from `seed` (`k` a small key or missing, `a` an age-like
/// integer or missing, `b` a tiny integer, `big` near the integer range's end on a few).
fn create(s: &mut Session, seed: u64, from: u64, n: u64) {
    run(
        s,
        &format!(
            "UNWIND range({from}, {}) AS i WITH i, (i * 2654435761 + {seed}) % 1000003 AS h \
             CREATE (p:P {{id: i}}) \
             SET p.k = CASE WHEN h % 9 = 0 THEN null WHEN h % 31 = 0 THEN 7000 + h % 3 \
                 ELSE h % 11 END, \
                 p.a = CASE WHEN h % 8 = 1 THEN null ELSE h % 90 END, \
                 p.b = h % 5, \
                 p.big = CASE WHEN h % 40 = 0 THEN 9223372036854775000 + h % 700 \
                 WHEN h % 40 = 1 THEN -9223372036854775000 - h % 700 ELSE null END",
            from + n - 1
        ),
    );
}

#[test]
fn typed_aggregation_equals_row_at_a_time_everywhere() {
    for seed in [1u64, 77, 4242] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        let mut s = db.session();
        create(&mut s, seed, 0, 900);
        run(&mut s, "UNWIND range(0, 40) AS i CREATE (:Q {a: i, k: i % 3})");
        compare(&mut s, "delta only");
        db.checkpoint().unwrap();
        compare(&mut s, "base");

        // Integer-only changes: batches holding them stay typed (the storage gather
        // overlays the changed rows), so these compare the overlay against the versions.
        run(&mut s, "MATCH (n:P) WHERE n.id % 7 = 2 SET n.a = n.a * 3 + 1, n.k = n.k + 1");
        run(&mut s, "MATCH (n:P) WHERE n.id % 9 = 4 REMOVE n.b, n.k");
        run(&mut s, "MATCH (n:P) WHERE n.id % 13 = 6 DETACH DELETE n");
        run(&mut s, "MATCH (n:P) WHERE n.id % 11 = 8 REMOVE n:P SET n:Q");
        run(&mut s, "UNWIND range(5000, 5060) AS i CREATE (:P {id: i, k: i % 3, a: i % 70, b: 1})");
        compare(&mut s, "integer delta");
        let mut other = db.session();
        other.begin(TxConfig::default()).unwrap();
        run(&mut other, "MATCH (n:P) WHERE n.id % 5 = 0 SET n.a = 5000 + n.id, n.k = 1");
        run(&mut other, "MATCH (n:P) WHERE n.id % 17 = 1 DETACH DELETE n");
        run(&mut other, "UNWIND range(6000, 6100) AS i CREATE (:P {id: i, k: 2, a: i, b: 2})");
        compare(&mut other, "integer own writes");
        compare(&mut s, "another transaction's uncommitted writes");
        other.rollback().unwrap();
        compare(&mut s, "rolled back");

        create(&mut s, seed, 900, 200);
        run(&mut s, "MATCH (n:P) WHERE n.id % 10 = 3 SET n.a = n.a + 0.5");
        run(&mut s, "MATCH (n:P) WHERE n.id % 12 = 5 SET n.k = 'k' + n.id");
        run(&mut s, "MATCH (n:P) WHERE n.id % 14 = 0 DETACH DELETE n");
        run(&mut s, "MATCH (n:P) WHERE n.id % 15 = 2 REMOVE n:P");
        run(&mut s, "MATCH (n:P) WHERE n.id % 16 = 6 REMOVE n.a");
        compare(&mut s, "delta");

        s.begin(TxConfig::default()).unwrap();
        run(&mut s, "MATCH (n:P) WHERE n.id % 6 = 1 SET n.a = 99");
        run(&mut s, "MATCH (n:P) WHERE n.id % 19 = 4 DETACH DELETE n");
        run(&mut s, "MATCH (n:Q) WHERE n.a % 2 = 0 SET n:P");
        run(&mut s, "UNWIND range(3000, 3100) AS i CREATE (:P {id: i, k: i % 4, a: i % 50})");
        compare(&mut s, "own writes");
        s.commit().unwrap();
        compare(&mut s, "committed");
        db.checkpoint().unwrap();
        compare(&mut s, "rebuilt base");
    }
}

/// Several 2,048-node batches where the changes sit in some batches only, so batches read
/// straight from the base column, batches with a few overlaid rows and batches wholly in the
/// delta come in one scan: after a load that is all delta, after the fold, with changes
/// confined to one id range, with another transaction's uncommitted writes and the reader's
/// own writes in yet another range, and after a second fold.
#[test]
fn typed_aggregation_equals_row_at_a_time_across_batches() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    create(&mut s, 9, 0, 7000);
    compare(&mut s, "loaded, all delta");
    db.checkpoint().unwrap();
    compare(&mut s, "folded");
    run(
        &mut s,
        "MATCH (n:P) WHERE n.id >= 2100 AND n.id < 2400 AND n.id % 3 = 0 SET n.a = -n.id, n.k = 3",
    );
    run(&mut s, "MATCH (n:P) WHERE n.id >= 2500 AND n.id < 2600 AND n.id % 4 = 1 DETACH DELETE n");
    run(&mut s, "MATCH (n:P) WHERE n.id >= 2600 AND n.id < 2700 AND n.id % 5 = 2 REMOVE n:P");
    run(&mut s, "MATCH (n:P) WHERE n.id >= 2700 AND n.id < 2800 AND n.id % 2 = 0 REMOVE n.a, n.k");
    run(&mut s, "UNWIND range(8000, 8500) AS i CREATE (:P {id: i, k: i % 5, a: i % 60, b: 0})");
    compare(&mut s, "changes in one batch");
    let mut other = db.session();
    other.begin(TxConfig::default()).unwrap();
    run(
        &mut other,
        "MATCH (n:P) WHERE n.id >= 4200 AND n.id < 4300 SET n.a = 1000 + n.id, n.k = 4",
    );
    run(&mut other, "MATCH (n:P) WHERE n.id >= 4300 AND n.id < 4400 DETACH DELETE n");
    run(&mut other, "MATCH (n:P) WHERE n.id >= 6000 AND n.id < 6100 SET n.big = 5");
    compare(&mut other, "own writes in another batch");
    compare(&mut s, "another transaction's uncommitted writes");
    other.commit().unwrap();
    compare(&mut s, "committed");
    db.checkpoint().unwrap();
    compare(&mut s, "folded again");
    run(&mut s, "MATCH (n:P) WHERE n.id = 6500 SET n.a = 'x'");
    compare(&mut s, "one string among the integers");
}
