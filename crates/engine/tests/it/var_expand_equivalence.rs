//! Variable-length expansions feeding an aggregation hand each path's working row straight to
//! it (`Operator::drain`), and a filter's label tests and property reads of the end node go
//! through one `Graph::node_probe` (a storage node handle in the engine): neither may change
//! results. Every query runs plainly and under `PROFILE`, which pulls rows one at a time and
//! reads through the per-call `node_has_label` / `node_property` (its hit-counting graph keeps
//! the trait's default `node_probe`). Data lives in the compact base, in the delta (labels and
//! values changed, nodes deleted, relationships added since), and in an open transaction's own
//! writes.

use arbor_engine::{Database, DatabaseConfig, Session, TxConfig};

use crate::common::run_or_panic as run;

const QUERIES: &[&str] = &[
    "MATCH (:Root)-[:HAS_B|HAS_A*]->(b:B) WHERE b.value RETURN count(b)",
    "MATCH (:Root)-[:HAS_B|HAS_A*]->(b:B) WHERE b.value RETURN count(DISTINCT b)",
    "MATCH (:Root)-[r:HAS_B|HAS_A*2..4]->(b) WHERE b:B AND b.value RETURN size(r), count(*)",
    "MATCH (:Root)-[:HAS_B|HAS_A*]->(b) WHERE b:A:C AND b.w > 2 RETURN b.w, count(*)",
    "MATCH (:Root)-[:HAS_B|HAS_A*0..3]->(b) WHERE b:A AND b.w = 1 AND b.value \
     RETURN count(*), collect(b.id)",
    "MATCH p = (:Root)-[:HAS_A|HAS_B*]->(b:B) WHERE b.value AND b.id % 3 = 0 \
     RETURN length(p), count(*), min(b.id)",
    "MATCH (b:B)<-[:HAS_B|HAS_A*]-(a) WHERE a:A AND a.value RETURN b.id % 4, count(a)",
    // Both directions, so paths turn back and relationship isomorphism matters.
    "MATCH (x:Root)-[*1..4]-(b) WHERE b:B AND b.value RETURN count(*), count(DISTINCT b)",
    "MATCH (x:Root)-[r*..5]-(b:A) WHERE b.w >= 1 RETURN size(r), count(*)",
    "MATCH (:Root)-[:HAS_B|HAS_A*]->(b:B) WHERE b.missing RETURN count(b)",
    "MATCH (:Root)-[:HAS_B|HAS_A*]->(b:NoSuchLabel) WHERE b.value RETURN count(b)",
];

fn compare(s: &mut Session, when: &str) {
    for q in QUERIES {
        let mut plain = run(s, q);
        let mut reference = run(s, &format!("PROFILE {q}"));
        plain.sort();
        reference.sort();
        assert_eq!(plain, reference, "{when}: {q}");
    }
    // The data really is there (a comparison of two empty answers proves nothing).
    assert_ne!(run(s, QUERIES[0]), vec!["0".to_string()], "{when}");
}

/// A tree of alternating `:A` and `:B` levels (fanout 3, depth 6) under one `:Root`, as the
/// traversal benchmark builds it, with a few cross relationships making cycles.
fn setup(s: &mut Session) {
    run(s, "CREATE (:Root:A {id: 0, value: false, w: 0})");
    for depth in 1..=6 {
        let (from, to, ty) = if depth % 2 == 1 { ("A", "B", "HAS_B") } else { ("B", "A", "HAS_A") };
        run(
            s,
            &format!(
                "MATCH (p:{from}) WHERE p.depth = {} OR (p:Root AND {depth} = 1) \
                 UNWIND range(1, 3) AS k \
                 CREATE (p)-[:{ty}]->(c:{to} {{id: p.id * 3 + k, depth: {depth}, \
                 value: (p.id * 3 + k) % 4 <> 1, w: (p.id + k) % 5}})",
                depth - 1
            ),
        );
    }
    run(s, "MATCH (a:A) WHERE a.id % 7 = 2 SET a:C");
    run(s, "MATCH (a:A), (b:B) WHERE a.id % 29 = 3 AND b.id = a.id + 40 CREATE (b)-[:HAS_A]->(a)");
}

#[test]
fn expansions_into_aggregations_equal_row_at_a_time_expansions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    setup(&mut s);
    compare(&mut s, "delta only");
    db.checkpoint().unwrap();
    compare(&mut s, "base");

    // Committed since the base: labels and values changed, nodes deleted, relationships added.
    run(&mut s, "MATCH (b:B) WHERE b.id % 5 = 0 SET b.value = NOT b.value");
    run(&mut s, "MATCH (b:B) WHERE b.id % 11 = 0 REMOVE b:B SET b:A");
    run(&mut s, "MATCH (b:B) WHERE b.id % 13 = 0 REMOVE b.value");
    run(&mut s, "MATCH (n) WHERE n.id % 17 = 0 AND NOT n:Root DETACH DELETE n");
    run(
        &mut s,
        "MATCH (a:A), (b:B) WHERE a.id % 31 = 4 AND b.id = a.id + 9 CREATE (a)-[:HAS_B]->(b)",
    );
    compare(&mut s, "delta");

    // An open transaction's own writes.
    s.begin(TxConfig::default()).unwrap();
    run(&mut s, "MATCH (b:B) WHERE b.id % 6 = 1 SET b.value = true");
    run(&mut s, "MATCH (a:A) WHERE a.id % 8 = 3 SET a:B, a.value = true");
    run(&mut s, "MATCH (n) WHERE n.id % 19 = 5 AND NOT n:Root DETACH DELETE n");
    run(
        &mut s,
        "MATCH (a:A) WHERE a.id % 23 = 1 CREATE (a)-[:HAS_B]->(:B {id: 5000 + a.id, value: true})",
    );
    compare(&mut s, "own writes");
    s.commit().unwrap();
    compare(&mut s, "committed");
}
