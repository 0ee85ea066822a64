//! Differential tests of the pruning expansion (`VarLengthExpand(Pruning)`, planned by the
//! planner's `prune` pass): on random small graphs with cycles, self-loops, parallel
//! relationships and many trails to the same end, every rewritten query must give exactly the
//! answers of the same query made unprunable by a path variable (which reads every
//! relationship, so the plain trail-by-trail plan runs).

use std::sync::Arc;

use arbor_model::{to_cypher_literal, PropertyMap, Value};

use crate::testing::MemGraph;
use crate::{Execution, PreparedQuery};

pub(crate) fn prepare(q: &str) -> Arc<PreparedQuery> {
    let stmt = arbor_cypher_syntax::parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    Arc::new(PreparedQuery::prepare(&stmt, q).unwrap_or_else(|e| panic!("{q}: {e}")))
}

/// Sorted result rows.
pub(crate) fn rows(g: &mut MemGraph, q: &str, id: i64) -> Vec<String> {
    let pq = prepare(q);
    let params: PropertyMap = [("id".to_string(), Value::Int(id))].into_iter().collect();
    let mut ex = Execution::start(pq, params).unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut out = Vec::new();
    while let Some(r) = ex.next(g).unwrap_or_else(|e| panic!("{q}: {e}")) {
        out.push(r.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | "));
    }
    g.commit();
    out.sort();
    out
}

/// Operator names of a plan description, pre-order.
pub(crate) fn operators(v: &Value, out: &mut Vec<String>) {
    if let Value::Map(m) = v {
        if let Some(Value::String(s)) = m.get("operatorType") {
            out.push(s.to_string());
        }
        if let Some(Value::List(children)) = m.get("children") {
            for c in children {
                operators(c, out);
            }
        }
    }
}

fn is_pruned(q: &str) -> bool {
    let mut ops = Vec::new();
    operators(&prepare(q).plan_description(), &mut ops);
    // Either form: depth-first / breadth-first (`Pruning`) or frontier (`Pruning,BFS`).
    ops.iter().any(|o| o.starts_with("VarLengthExpand(Pruning"))
}

/// A small xorshift generator: the graphs are reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

pub(crate) fn random_graph(seed: u64, nodes: u64, rels: u64) -> MemGraph {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut g = MemGraph::new();
    let mut q = String::from("CREATE ");
    for i in 0..nodes {
        if i > 0 {
            q.push_str(", ");
        }
        // Two nodes may share an `x`: DISTINCT over values, not nodes.
        q.push_str(&format!("(n{i}:N {{id: {i}, x: {}}})", rng.below(4)));
    }
    for _ in 0..rels {
        let a = rng.below(nodes);
        // Self-loops and parallel relationships on purpose.
        let b = if rng.below(6) == 0 { a } else { rng.below(nodes) };
        let t = if rng.below(3) == 0 { "B" } else { "A" };
        q.push_str(&format!(", (n{a})-[:{t}]->(n{b})"));
    }
    let stmt = arbor_cypher_syntax::parse(&q).unwrap_or_else(|e| panic!("{q}: {e}"));
    let pq = Arc::new(PreparedQuery::prepare(&stmt, &q).unwrap_or_else(|e| panic!("{e}")));
    let mut ex = Execution::start(pq, PropertyMap::new()).unwrap_or_else(|e| panic!("{e}"));
    while ex.next(&mut g).unwrap_or_else(|e| panic!("{e}")).is_some() {}
    g.commit();
    g
}

/// `(pattern after the start node, RETURN clause)`; the start is `(s:N {id: $id})`.
const CASES: &[(&str, &str)] = &[
    ("-->()-->(n)", "RETURN DISTINCT n.id"),
    ("-->()-->()-->(n)", "RETURN DISTINCT n.id"),
    ("-->()-->()-->()-->(n:N)", "WITH n WHERE n.x >= 2 RETURN DISTINCT n.id"),
    ("-->()-->()-->()-->(n)", "RETURN DISTINCT n.x"),
    ("<--()<--()<--(n)", "RETURN DISTINCT n.id"),
    ("--()--()--(n)", "RETURN DISTINCT n.id"),
    ("-[:A]->()-[:A]->()-[:A]->(n)", "RETURN DISTINCT n.id, n.x"),
    ("-[:B]->()-[:B]->(n)", "RETURN DISTINCT n"),
    ("-->()-->()-->(n)", "RETURN count(DISTINCT n.x), min(n.id), max(n.id)"),
    ("-[*1..3]->(n)", "RETURN DISTINCT n.id"),
    ("-[*1..2]->(n:N)", "WITH n WHERE n.x >= 1 RETURN DISTINCT n.id, n"),
    // mgBench Q15: the node and a property of it (distinct per end node).
    ("-[*1..2]->(n:N)", "RETURN DISTINCT n.id, n"),
    ("-->()-->(n:N)", "RETURN DISTINCT n, n.x, n.id + 1"),
    ("-[*0..2]->(n)", "RETURN DISTINCT n.id"),
    ("-[*2..3]->(n)", "RETURN DISTINCT n.id"),
    ("-[*3..3]-(n)", "RETURN DISTINCT n.id"),
    ("-[*1..3]-(n)", "RETURN DISTINCT n.id"),
    ("-[*0..3]-(n)", "RETURN DISTINCT n.id"),
    ("<-[:A*]-(n)", "RETURN DISTINCT n.id"),
    ("-[:A*]->(n)", "RETURN count(DISTINCT n)"),
    ("-[*]->(n)", "RETURN DISTINCT n.x"),
    ("-[:A*0..]->(n)", "RETURN DISTINCT n.id"),
    ("-[:NONE*0..2]->(n)", "RETURN DISTINCT n.id"),
    ("-[:NONE]->()-[:NONE]->(n)", "RETURN DISTINCT n.id"),
];

#[test]
fn pruned_plans_answer_like_plain_plans() {
    let mut checked = 0;
    for seed in 1..=24u64 {
        let nodes = 5 + seed % 6;
        let mut g = random_graph(seed, nodes, nodes * 2 + seed % 5);
        for (pattern, ret) in CASES {
            let pruned = format!("MATCH (s:N {{id: $id}}){pattern} {ret}");
            let plain = format!("MATCH p = (s:N {{id: $id}}){pattern} {ret}");
            assert!(is_pruned(&pruned), "not rewritten: {pruned}");
            assert!(!is_pruned(&plain), "rewritten despite the path: {plain}");
            for id in 0..nodes as i64 {
                let want = rows(&mut g, &plain, id);
                let got = rows(&mut g, &pruned, id);
                assert_eq!(got, want, "seed {seed}, id {id}: {pruned}");
                checked += 1;
            }
        }
    }
    assert!(checked > 1000);
}

/// Relationships of the same MATCH outside the rewritten part stay excluded, and a chain
/// spanning two MATCH clauses (no uniqueness between them) is not one trail.
#[test]
fn uniqueness_with_the_rest_of_the_match() {
    for seed in 1..=12u64 {
        let nodes = 5 + seed % 4;
        let mut g = random_graph(seed + 100, nodes, nodes * 2);
        let pairs = [
            (
                "MATCH (s:N {id: $id})-[r]->(m)-->()-->(n) RETURN DISTINCT n.id",
                "MATCH p = (s:N {id: $id})-[r]->(m)-->()-->(n) RETURN DISTINCT n.id",
            ),
            (
                "MATCH (s:N {id: $id})-->(m)-->()-->(n) RETURN DISTINCT n.id, m.id",
                "MATCH p = (s:N {id: $id})-->(m)-->()-->(n) RETURN DISTINCT n.id, m.id",
            ),
            (
                "MATCH (s:N {id: $id})-[r]->(m), (m)-[*1..2]->(n) RETURN DISTINCT n.id",
                "MATCH (s:N {id: $id})-[r]->(m), p = (m)-[*1..2]->(n) RETURN DISTINCT n.id",
            ),
            (
                "MATCH (s:N {id: $id})-->(m) MATCH (m)-->()-->(n) RETURN DISTINCT n.id",
                "MATCH (s:N {id: $id})-->(m) MATCH p = (m)-->()-->(n) RETURN DISTINCT n.id",
            ),
            (
                "MATCH (s:N {id: $id})-->(m) WITH DISTINCT m MATCH (m)-->()-->(n) RETURN count(DISTINCT n)",
                "MATCH (s:N {id: $id})-->(m) WITH DISTINCT m MATCH p = (m)-->()-->(n) RETURN count(DISTINCT n)",
            ),
        ];
        for (pruned, plain) in pairs {
            for id in 0..nodes as i64 {
                assert_eq!(rows(&mut g, pruned, id), rows(&mut g, plain, id), "{pruned}");
            }
        }
    }
}

/// What must keep the plain plan: reads of intermediate nodes or relationships, labels on
/// intermediate nodes, non-distinct results.
#[test]
fn rewrite_only_where_nothing_else_is_read() {
    for q in [
        "MATCH (s:N {id: $id})-->(m)-->(n) RETURN DISTINCT n.id, m.id",
        "MATCH (s:N {id: $id})-[r]->()-->(n) RETURN DISTINCT n.id, type(r)",
        "MATCH (s:N {id: $id})-->(:N)-->(n) RETURN DISTINCT n.id",
        "MATCH (s:N {id: $id})-->()-->(n) RETURN n.id",
        "MATCH (s:N {id: $id})-->()-->(n) RETURN count(n)",
        "MATCH (s:N {id: $id})-[rs*1..2]->(n) RETURN DISTINCT n.id, size(rs)",
        "MATCH (s:N {id: $id})-[*1..2 {w: 1}]->(n) RETURN DISTINCT n.id",
        "MATCH (s:N {id: $id})-[*2..]->(n) RETURN DISTINCT n.id",
        "MATCH (s:N {id: $id})-[*]-(n) RETURN DISTINCT n.id",
        "MATCH (s:N {id: $id})-->()<--(n) RETURN DISTINCT n.id",
        "MATCH (s:N {id: $id})-->()-->(n) WHERE n.x < rand() * 4 RETURN DISTINCT n.id",
    ] {
        assert!(!is_pruned(q), "rewritten: {q}");
    }
}
