//! Seeks by id must not change results: on a random graph with deletions (committed, in the
//! compact base after a checkpoint and in the delta) and inside a transaction with its own
//! creations and deletions, every `id()` / `elementId()` seek query returns the rows of the same
//! query written so that it scans (`id(n) + 0 = i`). A seek that returned a deleted node or
//! relationship, or missed one the transaction created, fails here.

use crate::common::{plan_ops, run, Rng};
use arbor_engine::{Database, DatabaseConfig, Session, TxConfig};

/// `(seek form, scan form, operator the seek form must plan)`.
fn queries(max: u64) -> Vec<(String, String, &'static str)> {
    let r = format!("UNWIND range(-1, {max}) AS i");
    let pairs: &[(&str, &str, &str)] = &[
        ("MATCH (n) WHERE id(n) = i", "MATCH (n) WHERE id(n) + 0 = i", "NodeByIdSeek"),
        ("MATCH (n:A) WHERE i = id(n)", "MATCH (n:A) WHERE i = id(n) + 0", "NodeByIdSeek"),
        (
            "MATCH (n) WHERE id(n) IN [i, i + 1, i, null]",
            "MATCH (n) WHERE id(n) + 0 IN [i, i + 1, i, null]",
            "NodeByIdSeek",
        ),
        (
            "WITH i, 'n:' + toString(i) AS e MATCH (n) WHERE elementId(n) = e",
            "WITH i, 'n:' + toString(i) AS e MATCH (n) WHERE elementId(n) + '' = e",
            "NodeByElementIdSeek",
        ),
        (
            "WITH i, ['n:' + toString(i), 'r:' + toString(i), 'x'] AS e \
             MATCH (n:B) WHERE elementId(n) IN e",
            "WITH i, ['n:' + toString(i), 'r:' + toString(i), 'x'] AS e \
             MATCH (n:B) WHERE elementId(n) + '' IN e",
            "NodeByElementIdSeek",
        ),
        (
            "MATCH (a)-[r]->(b) WHERE id(r) = i",
            "MATCH (a)-[r]->(b) WHERE id(r) + 0 = i",
            "DirectedRelationshipByIdSeek",
        ),
        (
            "MATCH (a:A)<-[r:T]-(b) WHERE id(r) = i",
            "MATCH (a:A)<-[r:T]-(b) WHERE id(r) + 0 = i",
            "DirectedRelationshipByIdSeek",
        ),
        (
            "MATCH (a)-[r:T|U]-(b:B) WHERE id(r) IN [i, i]",
            "MATCH (a)-[r:T|U]-(b:B) WHERE id(r) + 0 IN [i, i]",
            "UndirectedRelationshipByIdSeek",
        ),
        (
            "WITH i, 'r:' + toString(i) AS e MATCH (a)-[r]->(b) WHERE elementId(r) = e",
            "WITH i, 'r:' + toString(i) AS e MATCH (a)-[r]->(b) WHERE elementId(r) + '' = e",
            "DirectedRelationshipByElementIdSeek",
        ),
    ];
    pairs
        .iter()
        .map(|(seek, scan, op)| {
            (ret_all(&format!("{r} {seek}")), ret_all(&format!("{r} {scan}")), *op)
        })
        .collect()
}

/// Appends the columns a query returns.
fn ret_all(q: &str) -> String {
    let cols = if q.contains("-[r") { "id(r), type(r), a.k, b.k" } else { "n.k, labels(n)" };
    format!("{q} RETURN i, {cols}")
}

fn check(s: &mut Session, max: u64, when: &str) {
    for (seek, scan, op) in queries(max) {
        let ops = plan_ops(s, &seek);
        assert!(ops.iter().any(|o| o == op), "{when}: {seek} plans {ops:?}");
        let mut a = run(s, &seek).unwrap();
        let mut b = run(s, &scan).unwrap();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{when}: {seek}");
    }
}

fn count(s: &mut Session, q: &str) -> usize {
    run(s, q).unwrap().len()
}

// Goal: seeks by id answer exactly what the scans do, through deletions, a checkpoint and a
// transaction's own writes. Method: a random graph of 60 nodes and ~120 relationships; each
// state compared query by query against the scan form.
#[test]
fn id_seeks_equal_scans() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    let mut rng = Rng(0x001d_5ee7);
    run(&mut s, "UNWIND range(0, 59) AS k CREATE (n {k: k}) WITH n, k WHERE k % 2 = 0 SET n:A")
        .unwrap();
    run(&mut s, "MATCH (n) WHERE n.k % 3 = 0 SET n:B").unwrap();
    for _ in 0..120 {
        let (a, b) = (rng.below(60), rng.below(60));
        let ty = if rng.below(3) == 0 { "U" } else { "T" };
        run(&mut s, &format!("MATCH (a {{k: {a}}}), (b {{k: {b}}}) CREATE (a)-[:{ty}]->(b)"))
            .unwrap();
    }
    let max = 200;
    check(&mut s, max, "created");
    run(&mut s, "MATCH (n) WHERE n.k % 7 = 0 DETACH DELETE n").unwrap();
    run(&mut s, "MATCH ()-[r:U]->() WITH r LIMIT 10 DELETE r").unwrap();
    check(&mut s, max, "deleted");
    db.checkpoint().unwrap();
    check(&mut s, max, "checkpointed");
    run(&mut s, "MATCH (n) WHERE n.k % 11 = 1 DETACH DELETE n").unwrap();
    check(&mut s, max, "deleted after checkpoint");

    s.begin(TxConfig::default()).unwrap();
    run(&mut s, "UNWIND range(100, 104) AS k CREATE (:A:B {k: k})-[:T]->(:B {k: k + 10})").unwrap();
    run(&mut s, "MATCH (n) WHERE n.k % 5 = 2 DETACH DELETE n").unwrap();
    check(&mut s, max, "in transaction");
    // The transaction's own node is found, and its deleted ones are not.
    let own = run(&mut s, "MATCH (n {k: 100}) RETURN id(n)").unwrap();
    let q = format!("MATCH (n) WHERE id(n) = {} RETURN n.k", own[0]);
    assert_eq!(run(&mut s, &q).unwrap(), vec!["100".to_string()]);
    let q = format!("MATCH (n) WHERE elementId(n) = 'n:{}' RETURN n.k", own[0]);
    assert_eq!(run(&mut s, &q).unwrap(), vec!["100".to_string()]);
    let gone =
        run(&mut s, "MATCH (n {k: 103}) WITH n, id(n) AS i DETACH DELETE n RETURN i").unwrap();
    assert_eq!(count(&mut s, &format!("MATCH (n) WHERE id(n) = {} RETURN n", gone[0])), 0);

    // Another session's uncommitted node is not visible.
    let mut other = db.session();
    other.begin(TxConfig::default()).unwrap();
    let theirs = run(&mut other, "CREATE (n:A {k: 999}) RETURN id(n)").unwrap();
    assert_eq!(count(&mut s, &format!("MATCH (n) WHERE id(n) = {} RETURN n", theirs[0])), 0);
    other.rollback().unwrap();
    s.commit().unwrap();
    check(&mut s, max, "committed");
}
