//! Differential tests of the frontier expansion (`VarLengthExpand(Pruning,BFS)`, planned by
//! the planner's `frontier` rule): on random graphs dense in 2-cycles (so that walks repeating
//! a relationship are common and the backward search runs), with self-loops, parallel
//! relationships and two types, every rewritten query must answer exactly like the same query
//! made unprunable by a path variable (the plain trail-by-trail plan), per start node.

use crate::prune_tests::{operators, prepare, random_graph, rows};
use crate::testing::MemGraph;

fn is_frontier(q: &str) -> bool {
    let mut ops = Vec::new();
    operators(&prepare(q).plan_description(), &mut ops);
    ops.iter().any(|o| o == "VarLengthExpand(Pruning,BFS)")
}

/// A graph of `nodes` nodes: `rels` random relationships, and for a third of them the
/// reverse one too (2-cycles).
fn cyclic_graph(seed: u64, nodes: u64, rels: u64) -> MemGraph {
    let mut g = random_graph(seed, nodes, rels);
    let back = format!(
        "MATCH (a:N)-[r]->(b:N) WHERE (a.id * 7 + b.id * 3 + {seed}) % 3 = 0 \
         CREATE (b)-[:A]->(a)"
    );
    rows(&mut g, &back, 0);
    g
}

/// `(pattern after the start node, the rest)`; the start is `(s:N {id: $id})`.
const CASES: &[(&str, &str)] = &[
    ("-->()-->()-->()-->(n)", "RETURN DISTINCT n.id"),
    ("-->()-->()-->()-->(n)", "RETURN DISTINCT n.id, n.x"),
    ("-->()-->()-->()-->(n:N)", "WHERE n.x >= 2 RETURN DISTINCT n.id"),
    ("<--()<--()<--()<--(n)", "RETURN count(DISTINCT n)"),
    ("-[:A]->()-[:A]->()-[:A]->()-[:A]->(n)", "RETURN DISTINCT n"),
    ("-[:B]->()-[:B]->()-[:B]->()-[:B]->(n)", "RETURN DISTINCT n.id"),
    ("-->()-->()-->()-->()-->(n)", "RETURN count(DISTINCT n.x), min(n.id), max(n.id)"),
    ("-[*4..4]->(n)", "RETURN DISTINCT n.id"),
    ("-[*2..4]->(n)", "RETURN DISTINCT n.id"),
    ("<-[:A*2..4]-(n)", "RETURN DISTINCT n.id"),
    ("-[*3..5]->(n)", "WITH n WHERE n.x <> 1 RETURN DISTINCT n.x"),
    ("-[:A|B*2..6]->(n)", "RETURN DISTINCT n.id"),
    ("-[:NONE*2..4]->(n)", "RETURN DISTINCT n.id"),
];

#[test]
fn frontier_plans_answer_like_plain_plans() {
    let mut checked = 0;
    for seed in 1..=32u64 {
        let nodes = 4 + seed % 9;
        let mut g = cyclic_graph(seed, nodes, nodes * 3 / 2 + seed % 6);
        for (pattern, rest) in CASES {
            let fast = format!("MATCH (s:N {{id: $id}}){pattern} {rest}");
            let plain = format!("MATCH p = (s:N {{id: $id}}){pattern} {rest}");
            assert!(is_frontier(&fast), "not rewritten: {fast}");
            assert!(!is_frontier(&plain), "rewritten despite the path: {plain}");
            for id in 0..nodes as i64 {
                let want = rows(&mut g, &plain, id);
                assert_eq!(rows(&mut g, &fast, id), want, "seed {seed}, id {id}: {fast}");
                checked += 1;
            }
        }
    }
    assert!(checked > 1000);
}

/// A relationship of the same MATCH outside the chain stays excluded; the chain starts below
/// another hop, so the operator runs once per input row.
#[test]
fn uniqueness_with_the_rest_of_the_match() {
    for seed in 1..=10u64 {
        let nodes = 4 + seed % 5;
        let mut g = cyclic_graph(seed + 50, nodes, nodes + 2);
        for (fast, plain) in [
            (
                "MATCH (s:N {id: $id})-[r]->(m)-->()-->()-->()-->(n) RETURN DISTINCT n.id, m.id",
                "MATCH p = (s:N {id: $id})-[r]->(m)-->()-->()-->()-->(n) RETURN DISTINCT n.id, m.id",
            ),
            (
                "MATCH (s:N {id: $id})<-[r:A]-(m)-->()-->()-->()-->(n) RETURN count(DISTINCT n)",
                "MATCH p = (s:N {id: $id})<-[r:A]-(m)-->()-->()-->()-->(n) RETURN count(DISTINCT n)",
            ),
            (
                "MATCH (s:N) WHERE s.id <= $id MATCH (s)-->()-->()-->()-->(n) RETURN DISTINCT n.id",
                "MATCH (s:N) WHERE s.id <= $id MATCH p = (s)-->()-->()-->()-->(n) RETURN DISTINCT n.id",
            ),
        ] {
            assert!(is_frontier(fast), "not rewritten: {fast}");
            for id in 0..nodes as i64 {
                assert_eq!(rows(&mut g, fast, id), rows(&mut g, plain, id), "{fast}");
            }
        }
    }
}

/// The cases where the first walk to an end repeats a relationship, by hand (answers taken
/// from Neo4j 5.26): a 2-cycle `a->b`, `b->a` returns to `a` in four hops only over a
/// relationship twice, unless both directions have two relationships; self-loops likewise.
#[test]
fn repeated_relationships_are_not_trails() {
    let q = "MATCH (s:N {id: $id})-->()-->()-->()-->(n) RETURN DISTINCT n.id";
    let cases: &[(&str, &[&str])] = &[
        ("CREATE (a:N {id: 0})-[:A]->(b:N {id: 1})-[:A]->(a)", &[]),
        ("CREATE (a:N {id: 0})-[:A]->(b:N {id: 1})-[:A]->(a), (a)-[:A]->(b)", &[]),
        (
            "CREATE (a:N {id: 0})-[:A]->(b:N {id: 1})-[:A]->(a), (a)-[:A]->(b), (b)-[:A]->(a)",
            &["0"],
        ),
        ("CREATE (a:N {id: 0})-[:A]->(a), (a)-[:A]->(a), (a)-[:A]->(a)", &[]),
        ("CREATE (a:N {id: 0})-[:A]->(a), (a)-[:A]->(a), (a)-[:A]->(a), (a)-[:A]->(a)", &["0"]),
        ("CREATE (a:N {id: 0})-[:A]->(b:N {id: 1})-[:A]->(b), (b)-[:A]->(b)", &[]),
        (
            "CREATE (a:N {id: 0})-[:A]->(b:N {id: 1})-[:A]->(b), (b)-[:A]->(b), (b)-[:A]->(b)",
            &["1"],
        ),
    ];
    for (create, want) in cases {
        let mut g = MemGraph::new();
        rows(&mut g, create, 0);
        assert!(is_frontier(q));
        assert_eq!(rows(&mut g, q, 0), *want, "{create}");
    }
}
