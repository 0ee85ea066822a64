//! The `id_seek` rewrite rule alone: which scans become seeks by id (plans before and after as
//! EXPLAIN-style text), and which stay scans.

use arbor_cypher_plan::rewrite::id_seek::IdSeekRule;
use arbor_cypher_plan::rewrite::{RewriteCtx, RewriteRule};
use arbor_cypher_plan::{plan_with_rules, ProcSig, Resolver, ScalarFn};

struct NoFunctions;

impl Resolver for NoFunctions {
    fn scalar(&self, _: &str) -> Option<ScalarFn> {
        None
    }
    fn procedure(&self, _: &str) -> Option<ProcSig> {
        None
    }
}

/// The plan of `query` after the rule alone (the planner running it must agree).
fn after(query: &str) -> String {
    let stmt = arbor_cypher_syntax::parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let plain = plan_with_rules(&stmt, query, &NoFunctions, &[]).unwrap().root;
    let after = IdSeekRule.rewrite(plain, &RewriteCtx { resolver: &NoFunctions });
    let planned = plan_with_rules(&stmt, query, &NoFunctions, &[&IdSeekRule]).unwrap().root;
    assert_eq!(planned.render(), after.render(), "{query}");
    after.render()
}

fn check(query: &str, want: &str) {
    let got = after(query);
    assert_eq!(got.trim(), want.trim(), "{query}:\n{got}");
}

#[test]
fn node_seeks_for_id_and_element_id() {
    check("MATCH (n:L) WHERE id(n) = $id RETURN n", "Filter\n  NodeByIdSeek s0\n    Argument");
    check(
        "MATCH (n) WHERE $id = elementId(n) RETURN n",
        "Filter\n  NodeByElementIdSeek s0\n    Argument",
    );
    check(
        "MATCH (n) WHERE n.x = 1 AND id(n) IN [1, 2] RETURN n",
        "Filter\n  NodeByIdSeek s0\n    Argument",
    );
}

#[test]
fn relationship_seeks_keep_direction() {
    check(
        "MATCH (a)-[r:T]->(b) WHERE id(r) = $id RETURN r",
        "Filter\n  DirectedRelationshipByIdSeek (s0)-[]->(s1) rel=s2\n    Argument",
    );
    check(
        "MATCH (a)-[r]-(b) WHERE elementId(r) IN $ids RETURN r",
        "Filter\n  UndirectedRelationshipByElementIdSeek (s0)-[]-(s1) rel=s2\n    Argument",
    );
}

#[test]
fn scans_stay_when_the_id_depends_on_the_node() {
    check("MATCH (n) WHERE id(n) = n.other RETURN n", "Filter\n  AllNodesScan s0\n    Argument");
    check("MATCH (n) WHERE id(n) + 0 = 1 RETURN n", "Filter\n  AllNodesScan s0\n    Argument");
    check(
        "MATCH (n) WHERE id(n) = 1 OR n.x = 2 RETURN n",
        "Filter\n  AllNodesScan s0\n    Argument",
    );
}

#[test]
fn seeks_inside_optional_match_and_exists() {
    let got = after("MATCH (a) OPTIONAL MATCH (n) WHERE id(n) = id(a) + 1 RETURN n");
    assert!(got.contains("NodeByIdSeek"), "{got}");
    // The subquery's plan is built (and rewritten) apart; the outer plan only holds it.
    let q = "MATCH (a:L) WHERE EXISTS { MATCH (n) WHERE elementId(n) = $e } RETURN a";
    let stmt = arbor_cypher_syntax::parse(q).unwrap();
    let plan = plan_with_rules(&stmt, q, &NoFunctions, &[&IdSeekRule]).unwrap().root;
    assert!(format!("{plan:?}").contains("NodeByIdSeek"), "{plan:?}");
}
