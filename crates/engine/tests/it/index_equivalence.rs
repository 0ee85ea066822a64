//! Index seeks must not change results: the same queries run against two databases with the
//! same data, one with indexes and one without, must return the same rows (as multisets, and in
//! the same order where the query orders). Data mixes types (ints, floats, NaN, strings,
//! booleans, temporals, lists, missing properties) and lives in the compact base (after a
//! checkpoint), in the delta (committed since) and in the open transaction's own writes.

use crate::common::{plan_details, plan_ops, run, two_databases};
use arbor_engine::{Database, DatabaseConfig, Session, TxConfig};

/// A deterministic mix of values for property `v`.
fn value_literal(i: u64) -> String {
    match i % 13 {
        0 => format!("{}", (i * 7919) % 100),
        1 => format!("{}.5", (i * 31) % 100),
        2 => format!("-{}", i % 50),
        3 => "0.0/0.0".to_string(),
        4 => format!("'s{}'", (i * 17) % 60),
        5 => format!("'{}'", ["", "a", "ab", "abc", "b", "ba", "é", "Z"][(i % 8) as usize]),
        6 => (if i.is_multiple_of(2) { "true" } else { "false" }).to_string(),
        7 => format!("date('2020-01-{:02}')", 1 + i % 28),
        8 => format!("datetime('2020-01-01T{:02}:00:00+0{}:00')", i % 24, i % 3),
        9 => format!("[{}, {}]", i % 3, i % 5),
        10 => "null".to_string(),
        11 => format!("{}.0", (i * 13) % 100),
        _ => format!("localdatetime('2021-03-{:02}T10:00')", 1 + i % 28),
    }
}

const QUERIES: &[&str] = &[
    "MATCH (n:P) WHERE n.v > 50 RETURN n.id",
    "MATCH (n:P) WHERE n.v >= 50 RETURN n.id",
    "MATCH (n:P) WHERE n.v < 10 RETURN n.id, n.v",
    "MATCH (n:P) WHERE n.v <= 10.5 RETURN n.id",
    "MATCH (n:P) WHERE 10 < n.v < 60 RETURN n.id",
    "MATCH (n:P) WHERE 10 <= n.v <= 60.0 RETURN n.id",
    "MATCH (n:P) WHERE n.v > 20 AND n.v < 30.5 RETURN n.id",
    "MATCH (n:P) WHERE n.v > 20 AND n.v < 'x' RETURN n.id",
    "MATCH (n:P) WHERE n.v > 0.0/0.0 RETURN n.id",
    "MATCH (n:P) WHERE n.v < null RETURN n.id",
    "MATCH (n:P) WHERE n.v >= 's3' RETURN n.id, n.v",
    "MATCH (n:P) WHERE n.v < 'b' RETURN n.id, n.v",
    "MATCH (n:P) WHERE n.v STARTS WITH 's1' RETURN n.id",
    "MATCH (n:P) WHERE n.v STARTS WITH '' RETURN n.id",
    "MATCH (n:P) WHERE n.v STARTS WITH 'a' RETURN n.id",
    "MATCH (n:P) WHERE n.v STARTS WITH null RETURN n.id",
    "MATCH (n:P) WHERE n.v IN [1, 2.5, 's3', true, null, 7.0] RETURN n.id",
    "MATCH (n:P) WHERE n.v IN [] RETURN n.id",
    "MATCH (n:P) WHERE n.v IN [[0, 0], [1, 1]] RETURN n.id",
    "MATCH (n:P) WHERE n.v = 42 RETURN n.id",
    "MATCH (n:P) WHERE n.v = 42.0 RETURN n.id",
    "MATCH (n:P) WHERE n.v > false RETURN n.id",
    "MATCH (n:P) WHERE n.v >= date('2020-01-10') RETURN n.id",
    "MATCH (n:P) WHERE n.v < datetime('2020-01-01T05:00:00Z') RETURN n.id",
    "MATCH (n:P) WHERE n.v > localdatetime('2021-03-15T00:00') RETURN n.id",
    "MATCH (n:P) WHERE n.v > [1, 2] RETURN n.id",
    "MATCH (n:P) WHERE n.v > 40 RETURN n.id ORDER BY n.v, n.id",
    "MATCH (n:P) WHERE n.v > 40 RETURN count(*)",
    "MATCH (n:P:Q) WHERE n.w > 5 RETURN n.id",
    "MATCH (n:Q:P) WHERE n.v > 5 RETURN n.id",
    "MATCH (n:Q:P) WHERE n.w > 5 RETURN n.id, labels(n)",
    "MATCH (n:Other:P) WHERE n.w > 5 RETURN n.id",
    "MATCH (m:P {id: 3}), (n:P) WHERE n.v > m.v RETURN n.id",
    "MATCH (n:P)-[:R]->(m:P) WHERE m.v > 50 RETURN n.id, m.id",
    "UNWIND [1, 30, 'a'] AS x MATCH (n:P) WHERE n.v < x RETURN x, n.id",
    "UNWIND [[1, 2], [3], null] AS xs MATCH (n:P) WHERE n.v IN xs RETURN n.id",
    "OPTIONAL MATCH (n:P) WHERE n.v > 1000 RETURN n",
    "MATCH (n:P) WHERE n.v > 90 OR n.v < -45 RETURN n.id",
    "MATCH (n:P) WHERE NOT n.v > 50 RETURN n.id",
    "MATCH (n:P {v: 42, w: 2}) RETURN n.id",
    "MATCH (n:P) WHERE n.w = 5 AND n.v = 's1' RETURN n.id",
    "MATCH (n:P) WHERE n.w = 5.0 AND n.v = 48.0 RETURN n.id",
    "MATCH (n:P) WHERE n.w = 1 AND n.v = [1, 1] RETURN n.id",
    "UNWIND [[0, 0], [1, 'x'], [null, 2]] AS p MATCH (n:P {w: p[0], v: p[1]}) RETURN n.id",
    "MATCH (n:P) WHERE n.w > 5 AND n.v IS NOT NULL RETURN n.id",
    "MATCH (n:P) WHERE n.w >= 5 AND n.w < 8 AND n.v > 3 RETURN n.id, n.w",
    "MATCH (n:P) WHERE n.w > 8 AND n.v < 0 RETURN n.id",
    "MATCH (n:P) WHERE n.w = 3 AND n.v > 10 RETURN n.id",
    "MATCH (n:P) WHERE n.w = 3 AND n.v STARTS WITH 's' RETURN n.id",
    "MATCH (n:P) WHERE n.w = 3.0 AND n.v <= 's5' RETURN n.id, n.v",
    "MATCH (n:P) WHERE n.w = 2 AND 10 <= n.v < 60.5 RETURN n.id",
    "MATCH (n:P) WHERE n.w >= 9 AND n.v = 1 RETURN n.id",
    "MATCH (n:P) WHERE n.w = null AND n.v > 1 RETURN n.id",
    "MATCH (n:P) WHERE n.w = 4 AND n.v > 0.0/0.0 RETURN n.id",
    "MATCH (n:P) WHERE n.w < 3 AND n.v < date('2020-01-15') RETURN n.id",
    "MATCH (n:P) WHERE n.w = 6 AND n.v > 'a' AND n.v < 5 RETURN n.id",
    "MATCH (n:P {w: 7}) WHERE n.v >= 20 RETURN n.id ORDER BY n.v, n.id",
    "UNWIND [1, 2, null] AS x MATCH (n:P) WHERE n.w = x AND n.v > 5 RETURN x, n.id",
];

/// Queries whose evaluation may fail; both databases must fail the same way.
const FAILING: &[&str] = &["MATCH (n:P) WHERE n.v IN 5 RETURN n.id"];

fn setup(s: &mut Session, from: u64, to: u64) {
    for i in from..to {
        let q = format!(
            "CREATE (n:P {{id: {i}, v: {}, w: {}}}) {}",
            value_literal(i),
            i % 11,
            if i % 4 == 0 { "SET n:Q" } else { "" }
        );
        run(s, &q).unwrap();
    }
    run(
        s,
        &format!(
            "MATCH (a:P), (b:P) WHERE a.id >= {from} AND b.id = a.id + 3 CREATE (a)-[:R]->(b)"
        ),
    )
    .unwrap();
    // Nodes that must never be found: other labels, no property.
    run(s, "CREATE (:Other {v: 50}), (:P {id: -1})").unwrap();
}

fn compare(plain: &mut Session, indexed: &mut Session, when: &str) {
    // (An error would roll back an explicit transaction.)
    let failing = if plain.in_transaction() { &[][..] } else { FAILING };
    for q in QUERIES {
        let mut a = run(plain, q).unwrap();
        let mut b = run(indexed, q).unwrap();
        if !q.contains("ORDER BY") {
            a.sort();
            b.sort();
        }
        assert_eq!(a, b, "{when}: {q}");
    }
    for q in failing {
        let a = run(plain, q).map(|_| ()).unwrap_err();
        let b = run(indexed, q).map(|_| ()).unwrap_err();
        assert_eq!(a.split(':').nth(1), b.split(':').nth(1), "{when}: {q}");
    }
}

#[test]
fn indexed_results_equal_scans() {
    let ((_dir_a, a), (_dir_b, b)) = two_databases();
    let (mut pa, mut pb) = (a.session(), b.session());
    run(&mut pb, "CREATE INDEX p_v FOR (n:P) ON (n.v)").unwrap();
    run(&mut pb, "CREATE INDEX FOR (n:Q) ON (n.v)").unwrap();
    run(&mut pb, "CREATE INDEX ON :P(w)").unwrap();
    run(&mut pb, "CREATE INDEX p_wv FOR (n:P) ON (n.w, n.v)").unwrap();
    // Base data.
    setup(&mut pa, 0, 150);
    setup(&mut pb, 0, 150);
    a.checkpoint().unwrap();
    b.checkpoint().unwrap();
    compare(&mut pa, &mut pb, "base");

    let ops = plan_ops(&mut pb, "MATCH (n:P) WHERE n.v > 5 RETURN n");
    assert!(ops.contains(&"NodeIndexSeekByRange".to_string()), "{ops:?}");
    let ops = plan_ops(&mut pb, "MATCH (n:P) WHERE n.v IN [1, 2] RETURN n");
    assert!(ops.contains(&"NodeIndexSeek".to_string()), "{ops:?}");
    let ops = plan_ops(&mut pb, "MATCH (n:P) WHERE n.v STARTS WITH 'a' RETURN n");
    assert!(ops.contains(&"NodeIndexSeekByRange".to_string()), "{ops:?}");
    let ops = plan_ops(&mut pa, "MATCH (n:P) WHERE n.v > 5 RETURN n");
    assert!(ops.contains(&"NodeByLabelScan".to_string()), "{ops:?}");
    // Composite (w, v): equality then range, or a range on w with v constrained.
    for q in [
        "MATCH (n:P) WHERE n.w = 3 AND n.v > 10 RETURN n",
        "MATCH (n:P) WHERE n.w >= 5 AND n.w < 8 AND n.v > 3 RETURN n",
        "MATCH (n:P) WHERE n.w = 3 AND n.v STARTS WITH 'a' RETURN n",
    ] {
        let ops = plan_details(&mut pb, q);
        assert!(ops.contains(&"NodeIndexSeek :P(w, v)".to_string()), "{q}: {ops:?}");
    }
    // v unconstrained, or only IS NOT NULL (NaN has no index key): nodes the composite index
    // lacks could match.
    for q in [
        "MATCH (n:P) WHERE n.w > 5 RETURN n",
        "MATCH (n:P) WHERE n.w > 5 AND n.v IS NOT NULL RETURN n",
    ] {
        let ops = plan_details(&mut pb, q);
        assert!(!ops.contains(&"NodeIndexSeek :P(w, v)".to_string()), "{q}: {ops:?}");
    }

    // Delta: new nodes, changed and removed values, removed labels, deletions.
    for s in [&mut pa, &mut pb] {
        setup(s, 150, 200);
        run(s, "MATCH (n:P) WHERE n.id % 5 = 0 SET n.v = n.id * 1.5").unwrap();
        run(s, "MATCH (n:P) WHERE n.id % 7 = 0 REMOVE n.v").unwrap();
        run(s, "MATCH (n:P) WHERE n.id % 9 = 0 REMOVE n:P").unwrap();
        run(s, "MATCH (n:P) WHERE n.id % 11 = 0 DETACH DELETE n").unwrap();
        run(s, "MATCH (n) WHERE n.id % 9 = 3 SET n:P").unwrap();
    }
    compare(&mut pa, &mut pb, "delta");

    // The open transaction's own writes.
    for s in [&mut pa, &mut pb] {
        s.begin(TxConfig::default()).unwrap();
        run(s, "MATCH (n:P) WHERE n.id % 6 = 1 SET n.v = 55").unwrap();
        run(s, "MATCH (n:P) WHERE n.id % 6 = 2 SET n.v = 'abz'").unwrap();
        run(s, "MATCH (n:P) WHERE n.id % 10 = 4 REMOVE n.v").unwrap();
        run(s, "CREATE (:P {id: 1000, v: 51}), (:P {id: 1001, v: 'a1'}), (:P:Q {id: 1002, v: 7})")
            .unwrap();
        run(s, "MATCH (n:P) WHERE n.id % 13 = 5 DETACH DELETE n").unwrap();
    }
    compare(&mut pa, &mut pb, "transaction");
    for s in [&mut pa, &mut pb] {
        s.commit().unwrap();
    }
    compare(&mut pa, &mut pb, "committed");
    a.checkpoint().unwrap();
    b.checkpoint().unwrap();
    compare(&mut pa, &mut pb, "rebuilt base");

    // An index created inside the life of an older transaction must not hide its writes.
    pa.begin(TxConfig::default()).unwrap();
    pb.begin(TxConfig::default()).unwrap();
    run(&mut pa, "CREATE (:P {id: 2000, k: 5})").unwrap();
    run(&mut pb, "CREATE (:P {id: 2000, k: 5})").unwrap();
    let mut other = b.session();
    run(&mut other, "CREATE INDEX FOR (n:P) ON (n.k)").unwrap();
    let q = "MATCH (n:P) WHERE n.k >= 5 RETURN n.id";
    assert_eq!(run(&mut pa, q).unwrap(), run(&mut pb, q).unwrap());
    assert_eq!(run(&mut pb, q).unwrap(), vec!["2000".to_string()]);
}

/// Counts from the count store equal counts by scanning, across label changes, deletions,
/// checkpoints and recovery.
#[test]
fn count_store_equals_scans() {
    let dir = tempfile::tempdir().unwrap();
    let counts = [
        ("MATCH (n:A) RETURN count(n)", "MATCH (n:A) WHERE n IS NOT NULL RETURN count(*)"),
        ("MATCH (n) RETURN count(*)", "MATCH (n) WHERE n IS NOT NULL RETURN count(*)"),
        (
            "MATCH (:A)-[:T]->() RETURN count(*)",
            "MATCH (:A)-[r:T]->() WHERE r IS NOT NULL RETURN count(*)",
        ),
        (
            "MATCH ()-[r:T]->(:B) RETURN count(r)",
            "MATCH ()-[r:T]->(:B) WHERE r IS NOT NULL RETURN count(*)",
        ),
        (
            "MATCH ()-[r]->(:A) RETURN count(*)",
            "MATCH ()-[r]->(:A) WHERE r IS NOT NULL RETURN count(*)",
        ),
        (
            "MATCH (:B)-[r]->() RETURN count(*)",
            "MATCH (:B)-[r]->() WHERE r IS NOT NULL RETURN count(*)",
        ),
        (
            "MATCH ()-[r:U]->() RETURN count(*)",
            "MATCH ()-[r:U]->() WHERE r IS NOT NULL RETURN count(*)",
        ),
        (
            "MATCH ()-[r]->() RETURN count(*)",
            "MATCH ()-[r]->() WHERE r IS NOT NULL RETURN count(*)",
        ),
    ];
    let check = |s: &mut Session, when: &str| {
        for (fast, slow) in counts {
            assert_eq!(run(s, fast).unwrap(), run(s, slow).unwrap(), "{when}: {fast}");
        }
    };
    {
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        let mut s = db.session();
        let ops = plan_ops(&mut s, "MATCH (:A)-[:T]->() RETURN count(*)");
        assert!(ops.contains(&"RelationshipCountFromCountStore".to_string()), "{ops:?}");
        let ops = plan_ops(&mut s, "MATCH (n:A) RETURN count(n)");
        assert!(ops.contains(&"NodeCountFromCountStore".to_string()), "{ops:?}");
        run(
            &mut s,
            "UNWIND range(0, 59) AS i CREATE (n {id: i}) WITH n, i WHERE i % 2 = 0 SET n:A",
        )
        .unwrap();
        run(&mut s, "MATCH (n) WHERE n.id % 3 = 0 SET n:B").unwrap();
        run(
            &mut s,
            "MATCH (a), (b) WHERE b.id = (a.id * 7 + 3) % 60 CREATE (a)-[:T]->(b), (b)-[:U]->(a)",
        )
        .unwrap();
        check(&mut s, "created");
        db.checkpoint().unwrap();
        check(&mut s, "checkpointed");
        run(&mut s, "MATCH (n) WHERE n.id % 5 = 0 REMOVE n:A SET n:B").unwrap();
        run(&mut s, "MATCH (n) WHERE n.id % 7 = 0 DETACH DELETE n").unwrap();
        run(&mut s, "MATCH (a {id: 1}), (b {id: 2}) CREATE (a)-[:T]->(a), (a)-[:T]->(b)").unwrap();
        check(&mut s, "changed");
        s.begin(TxConfig::default()).unwrap();
        run(&mut s, "MATCH (n) WHERE n.id % 4 = 1 SET n:A").unwrap();
        check(&mut s, "in transaction");
        s.commit().unwrap();
        check(&mut s, "committed");
    }
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    check(&mut s, "recovered");
    db.checkpoint().unwrap();
    drop(s);
    drop(db);
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    check(&mut db.session(), "recovered from checkpoint");
}

/// Relationship index seeks equal type scans, across updates (with GC running every 64
/// commits), deletions, checkpoints and recovery.
#[test]
fn relationship_index_results_equal_scans() {
    let dir_a = tempfile::tempdir().unwrap();
    let dir_b = tempfile::tempdir().unwrap();
    let queries = [
        "MATCH (x)-[r:T {p: 3}]->(y) RETURN x.id, y.id, r.q",
        "MATCH (x)-[r:T {p: 3.0}]-(y) RETURN x.id, y.id",
        "MATCH (x)<-[r:T]-(y) WHERE r.p = 'x' RETURN x.id, y.id",
        "MATCH (x)-[r:T {p: 7, q: 1}]->(y) RETURN x.id, y.id",
        "UNWIND [1, 2, 3, null] AS v MATCH (x)-[r:T {p: v}]->(y) RETURN v, x.id",
        "MATCH (x)-[r:T {p: 4}]->(y)-[s:T]->(z) RETURN x.id, z.id",
        "MATCH (x)-[r:T]->(y) WHERE r.p > 3 RETURN x.id, y.id, r.p",
        "MATCH (x)-[r:T]-(y) WHERE 2 <= r.p < 5.5 RETURN x.id, y.id",
        "MATCH (x)<-[r:T]-(y) WHERE r.p <= 2.0 RETURN x.id, y.id",
        "MATCH (x)-[r:T]->(y) WHERE r.p > 1 AND r.p <= 4 RETURN x.id, y.id",
        "MATCH (x)-[r:T]->(y) WHERE r.p >= 'a' RETURN x.id, r.p",
        "MATCH (x)-[r:T]->(y) WHERE r.p < null RETURN x.id",
        "MATCH (x)-[r:T]->(y) WHERE r.p > 0.0/0.0 RETURN x.id",
        "MATCH (x)-[r:T]->(y) WHERE r.p > 2 AND r.p < 'z' RETURN x.id",
        "MATCH (x)-[r:T]->(y) WHERE r.p STARTS WITH 'x' RETURN x.id",
        "MATCH (x)-[r:T]-(y) WHERE r.s STARTS WITH 'a' RETURN x.id, y.id, r.s",
        "MATCH (x)-[r:T]->(y) WHERE r.s STARTS WITH '' RETURN x.id",
        "MATCH (x)-[r:T]->(y) WHERE r.s STARTS WITH null RETURN x.id",
        "MATCH (x)-[r:T]->(y) WHERE r.s < 'ab' RETURN x.id, r.s",
        "MATCH (x)-[r:T]->(y) WHERE r.p IN [1, 2.0, 'x', null] RETURN x.id, y.id",
        "MATCH (x)-[r:T]-(y) WHERE r.p IN [] RETURN x.id",
        "UNWIND [1, 4, 'a'] AS v MATCH (x)<-[r:T]-(y) WHERE r.p > v RETURN v, x.id",
        "UNWIND [[1, 2], null, [3]] AS vs MATCH (x)-[r:T]->(y) WHERE r.p IN vs RETURN x.id",
        "MATCH (x)-[r:T]->(x) WHERE r.p >= 0 RETURN x.id",
        "MATCH (x)-[r:T]->(y) WHERE r.p > 6 RETURN x.id ORDER BY r.p, x.id, y.id",
    ];
    let run_all = |a: &mut Session, b: &mut Session, when: &str| {
        for q in queries {
            let mut x = run(a, q).unwrap();
            let mut y = run(b, q).unwrap();
            if !q.contains("ORDER BY") {
                x.sort();
                y.sort();
            }
            assert_eq!(x, y, "{when}: {q}");
        }
    };
    {
        let a = Database::open(dir_a.path(), DatabaseConfig::default()).unwrap();
        let b = Database::open(dir_b.path(), DatabaseConfig::default()).unwrap();
        let (mut pa, mut pb) = (a.session(), b.session());
        run(&mut pb, "CREATE INDEX FOR ()-[r:T]-() ON (r.p)").unwrap();
        run(&mut pb, "CREATE INDEX FOR ()-[r:T]-() ON (r.p, r.q)").unwrap();
        run(&mut pb, "CREATE INDEX FOR ()-[r:T]-() ON (r.s)").unwrap();
        let ops = plan_ops(&mut pb, "MATCH (x)-[r:T {p: 1}]->(y) RETURN x");
        assert!(ops.contains(&"DirectedRelationshipIndexSeek".to_string()), "{ops:?}");
        let ops = plan_ops(&mut pb, "MATCH (x)-[r:T {p: 1}]-(y) RETURN x");
        assert!(ops.contains(&"UndirectedRelationshipIndexSeek".to_string()), "{ops:?}");
        let ops = plan_ops(&mut pb, "MATCH (x)-[r:T]->(y) WHERE r.p > 1 RETURN x");
        assert!(ops.contains(&"DirectedRelationshipIndexSeekByRange".to_string()), "{ops:?}");
        let ops = plan_ops(&mut pb, "MATCH (x)-[r:T]-(y) WHERE r.s STARTS WITH 'a' RETURN x");
        assert!(ops.contains(&"UndirectedRelationshipIndexSeekByRange".to_string()), "{ops:?}");
        let ops = plan_ops(&mut pb, "MATCH (x)-[r:T]->(y) WHERE r.p IN [1, 2] RETURN x");
        assert!(ops.contains(&"DirectedRelationshipIndexSeek".to_string()), "{ops:?}");
        let ops = plan_ops(&mut pa, "MATCH (x)-[r:T]->(y) WHERE r.p > 1 RETURN x");
        assert!(!ops.iter().any(|o| o.contains("RelationshipIndexSeek")), "{ops:?}");
        for s in [&mut pa, &mut pb] {
            run(s, "UNWIND range(0, 39) AS i CREATE (:N {id: i})").unwrap();
            run(
                s,
                "MATCH (x:N), (y:N) WHERE y.id = (x.id * 3 + 1) % 40 OR y.id = x.id \
                 CREATE (x)-[:T {p: x.id % 9, q: x.id % 2, \
                 s: ['', 'a', 'ab', 'b', 'abc', 2.5][x.id % 6]}]->(y)",
            )
            .unwrap();
            run(s, "MATCH (x:N {id: 5})-[r:T]->() SET r.p = 'x'").unwrap();
            run(s, "MATCH (x:N {id: 6})-[r:T]->() SET r.p = 3.5, r.s = 'aa'").unwrap();
        }
        run_all(&mut pa, &mut pb, "created");
        // The open transaction's own writes.
        for s in [&mut pa, &mut pb] {
            s.begin(TxConfig::default()).unwrap();
            run(s, "MATCH (x:N {id: 7})-[r:T]->() SET r.p = 4, r.s = 'abz'").unwrap();
            run(s, "MATCH (x:N {id: 8})-[r:T]->() REMOVE r.p, r.s").unwrap();
            run(s, "MATCH (x:N {id: 9})-[r:T]->() DELETE r").unwrap();
            run(s, "MATCH (x:N {id: 10}) CREATE (x)-[:T {p: 5, s: 'a!'}]->(x)").unwrap();
        }
        run_all(&mut pa, &mut pb, "transaction");
        for s in [&mut pa, &mut pb] {
            s.commit().unwrap();
        }
        run_all(&mut pa, &mut pb, "committed");
        a.checkpoint().unwrap();
        b.checkpoint().unwrap();
        run_all(&mut pa, &mut pb, "base");
        for i in 0..150 {
            for s in [&mut pa, &mut pb] {
                run(s, &format!("MATCH (x:N {{id: {}}})-[r:T]->() SET r.p = {}", i % 40, i % 5))
                    .unwrap();
            }
            if i % 37 == 0 {
                run_all(&mut pa, &mut pb, &format!("update {i}"));
            }
        }
        for s in [&mut pa, &mut pb] {
            run(s, "MATCH ()-[r:T]->() WHERE r.q = 1 AND r.p = 3 DELETE r").unwrap();
        }
        run_all(&mut pa, &mut pb, "deleted");
        a.checkpoint().unwrap();
        run_all(&mut pa, &mut pb, "checkpointed");
    }
    let a = Database::open(dir_a.path(), DatabaseConfig::default()).unwrap();
    let b = Database::open(dir_b.path(), DatabaseConfig::default()).unwrap();
    run_all(&mut a.session(), &mut b.session(), "recovered");
}
