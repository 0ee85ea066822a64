//! The distinct-end expansions (`VarLengthExpand(Pruning)`: depth-first with last-hop pruning
//! or breadth-first; `VarLengthExpand(Pruning,BFS)`: the frontier expansion level by level
//! over node sets) against the plain trail-by-trail expansion, on random graphs dense in
//! 2-cycles, with self-loops, parallel relationships, two types and both directions, for 1 to
//! 5 hops, with and without a predicate on the end. The plain plan is forced by a path variable
//! (`MATCH p = ...`), which nothing may prune. Data lives in the delta only, in the compact
//! base, in the delta over the base (relationships deleted and added, labels and values
//! changed, nodes deleted) and in an open transaction's own writes.

use crate::common::{plan_ops, run};
use arbor_engine::{Database, DatabaseConfig, Session, TxConfig};

/// `(pattern after the start node, the rest of the query)`; the start is `(s:N {id: ID})`.
const CASES: &[(&str, &str)] = &[
    ("-[*1..1]->(n)", "RETURN DISTINCT n.id"),
    ("-->()-->(n)", "RETURN DISTINCT n.id"),
    ("-->()-->(n:N)", "WHERE n.x >= 2 RETURN DISTINCT n.id"),
    ("-->()-->()-->(n:N)", "RETURN DISTINCT n.id"),
    ("<-[:A]-()<-[:A]-()<-[:A]-(n)", "WHERE n.x <> 1 RETURN DISTINCT n.id"),
    ("-->()-->()-->()-->(n:N)", "RETURN DISTINCT n.id"),
    ("-->()-->()-->()-->(n:N)", "WHERE n.x >= 2 RETURN DISTINCT n.id"),
    ("-[:B]->()-[:B]->()-[:B]->()-[:B]->(n)", "RETURN count(DISTINCT n)"),
    ("-->()-->()-->()-->()-->(n)", "RETURN DISTINCT n.id, n.x"),
    ("-[*1..2]->(n:N)", "RETURN DISTINCT n.id"),
    ("-[*1..2]->(n:N)", "WHERE n.x >= 2 RETURN DISTINCT n.id"),
    ("-[*2..4]->(n)", "RETURN DISTINCT n.id"),
    ("<-[:A|B*3..5]-(n)", "RETURN count(DISTINCT n.id)"),
    ("-[*0..3]-(n)", "RETURN DISTINCT n.id"),
    ("--()--()--(n)", "WHERE n:N RETURN DISTINCT n.id"),
    // Keys shared by several ends (`n.x` is `id % 4`), of mixed types (integers, then strings
    // and nulls), and the end node itself: the fused `Distinct` over the expansion
    // deduplicates the key, not the end.
    ("-->()-->(n)", "RETURN DISTINCT n.x"),
    ("<-[:A]-()<-[:A]-()<-[:A]-(n)", "RETURN DISTINCT n.x + 1 AS y"),
    ("-->()-->()-->()-->(n:N)", "WHERE n.id <> 3 RETURN DISTINCT n.x"),
    (
        "-[*1..2]->(n)",
        "RETURN DISTINCT CASE WHEN n.id % 3 = 0 THEN n.x WHEN n.id % 3 = 1 THEN toString(n.x) END",
    ),
    ("-->()-->(n:N)", "WITH DISTINCT n RETURN n.id"),
];

/// Several start rows into one `DISTINCT`, and one `DISTINCT` per outer row (a subquery, whose
/// operators are reset per row): the keys are shared across the start rows, and cleared for
/// each outer row.
const MANY_STARTS: &[&str] = &[
    "MATCH (s:N) WHERE s.id < 6 MATCH (s)-->()-->(n) RETURN DISTINCT n.x",
    "MATCH (s:N) MATCH (s)-->()-->()-->()-->(n:N) WHERE n.x >= 1 RETURN DISTINCT n.id",
    "MATCH (s:N) CALL { WITH s MATCH (s)-->()-->(n) RETURN DISTINCT n.x AS x } RETURN s.id, x",
    "MATCH (s:N) CALL { WITH s MATCH (s)-[*1..2]->(n) RETURN DISTINCT n.id AS i } RETURN s.id, i",
];

/// Operator names that answer distinct ends.
const DISTINCT_ENDS: &[&str] = &["VarLengthExpand(Pruning)", "VarLengthExpand(Pruning,BFS)"];

/// A random graph of `nodes` `:N` nodes (`id`, `x`): relationships of types `A` and `B`
/// between random nodes (self-loops and parallel ones included), a third of them with a
/// reverse relationship too (2-cycles), from a fixed generator seeded by `seed`.
fn create_graph(s: &mut Session, seed: u64, nodes: u64) {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = |m: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % m
    };
    ok(s, &format!("UNWIND range(0, {}) AS i CREATE (:N {{id: i, x: i % 4}})", nodes - 1));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..nodes * 2 {
        let (x, y) = (next(nodes), if next(8) == 0 { u64::MAX } else { next(nodes) });
        let y = if y == u64::MAX { x } else { y };
        let list = if next(2) == 0 { &mut a } else { &mut b };
        list.push(format!("[{x},{y}]"));
        if next(3) == 0 {
            list.push(format!("[{y},{x}]"));
        }
    }
    for (ty, list) in [("A", a), ("B", b)] {
        ok(
            s,
            &format!(
                "UNWIND [{}] AS e MATCH (a:N {{id: e[0]}}), (b:N {{id: e[1]}}) \
                 CREATE (a)-[:{ty}]->(b)",
                list.join(",")
            ),
        );
    }
}

fn ok(s: &mut Session, q: &str) {
    run(s, q).unwrap_or_else(|e| panic!("{e}"));
}

fn sorted(s: &mut Session, q: &str) -> Vec<String> {
    let mut rows = run(s, q).unwrap_or_else(|e| panic!("{e}"));
    rows.sort();
    rows
}

/// Every case from every start node: the distinct-end plan answers like the plain one.
/// Returns how many answers were non-empty.
fn compare(s: &mut Session, nodes: u64, when: &str) -> usize {
    let mut non_empty = 0;
    for (pattern, rest) in CASES {
        let fast = format!("MATCH (s:N {{id: $ID}}){pattern} {rest}");
        let ops = plan_ops(s, &fast.replace("$ID", "0"));
        assert!(ops.iter().any(|o| DISTINCT_ENDS.contains(&o.as_str())), "{fast}: {ops:?}");
        for id in 0..nodes {
            let fast = fast.replace("$ID", &id.to_string());
            let plain = fast.replacen("MATCH (s", "MATCH p = (s", 1);
            let want = sorted(s, &plain);
            assert_eq!(sorted(s, &fast), want, "{when}: {fast}");
            non_empty += usize::from(!want.is_empty() && want != ["0"]);
        }
    }
    non_empty
}

#[test]
fn distinct_end_expansions_answer_like_trail_by_trail_expansions() {
    let mut non_empty = 0;
    for seed in 1..=4u64 {
        let nodes = 7 + seed * 2;
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        let mut s = db.session();
        create_graph(&mut s, seed, nodes);
        non_empty += compare(&mut s, nodes, &format!("seed {seed}, delta only"));
        db.checkpoint().unwrap();
        non_empty += compare(&mut s, nodes, &format!("seed {seed}, base"));

        // Committed since the base.
        ok(&mut s, "MATCH (a:N)-[r]->(b) WHERE (a.id + 2 * b.id) % 5 = 0 DELETE r");
        ok(&mut s, "MATCH (a:N), (b:N) WHERE (3 * a.id + b.id) % 13 = 1 CREATE (a)-[:A]->(b)");
        ok(&mut s, "MATCH (a:N) WHERE a.id % 4 = 2 CREATE (a)-[:B]->(a)");
        ok(&mut s, "MATCH (n:N) WHERE n.id % 7 = 3 SET n.x = n.x + 1");
        ok(&mut s, "MATCH (n:N) WHERE n.id % 6 = 4 REMOVE n:N SET n:M");
        ok(&mut s, "MATCH (n) WHERE n.id % 9 = 5 DETACH DELETE n");
        non_empty += compare(&mut s, nodes, &format!("seed {seed}, delta"));

        // An open transaction's own writes.
        s.begin(TxConfig::default()).unwrap();
        ok(&mut s, "MATCH (a:N)-[r:A]->(b) WHERE (a.id + b.id) % 4 = 1 DELETE r");
        ok(&mut s, "MATCH (a:N), (b:N) WHERE (a.id + 5 * b.id) % 11 = 2 CREATE (b)-[:B]->(a)");
        ok(&mut s, "MATCH (n:M) WHERE n.id % 2 = 0 REMOVE n:M SET n:N, n.x = 3");
        ok(&mut s, "MATCH (n:N) WHERE n.id % 8 = 7 DETACH DELETE n");
        non_empty += compare(&mut s, nodes, &format!("seed {seed}, own writes"));
        s.commit().unwrap();
        non_empty += compare(&mut s, nodes, &format!("seed {seed}, committed"));
    }
    // The comparisons are not of empty answers only.
    assert!(non_empty > 500, "{non_empty} non-empty answers");
}

#[test]
fn distinct_keys_are_shared_by_start_rows_and_cleared_per_outer_row() {
    for seed in 5..=8u64 {
        let nodes = 9 + seed;
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        let mut s = db.session();
        create_graph(&mut s, seed, nodes);
        for when in ["delta only", "base"] {
            if when == "base" {
                db.checkpoint().unwrap();
            }
            for q in MANY_STARTS {
                let ops = plan_ops(&mut s, q);
                assert!(ops.iter().any(|o| DISTINCT_ENDS.contains(&o.as_str())), "{q}: {ops:?}");
                let plain = q
                    .replacen("MATCH (s)", "MATCH p = (s)", 1)
                    .replace("WITH s MATCH (s)", "WITH s MATCH p = (s)");
                assert_ne!(&plain, q);
                let want = sorted(&mut s, &plain);
                assert!(want.len() > 1, "seed {seed}, {when}: {q}: {want:?}");
                assert_eq!(sorted(&mut s, q), want, "seed {seed}, {when}: {q}");
            }
        }
    }
}
