//! The `var_expand_count` rewrite rule alone: which `count`s over variable-length expansions
//! become `VarLengthExpand(Count)` (plans before and after as EXPLAIN-style text), and which
//! keep the plain plan.

use arbor_cypher_plan::rewrite::var_count::VarExpandCount;
use arbor_cypher_plan::rewrite::{RewriteCtx, RewriteRule, RULES};
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

/// The plan of `query` without rewrites and after the rule alone (the planner running it
/// must agree), as `before:` / `after:` text.
fn before_after(query: &str) -> (String, String) {
    let stmt = arbor_cypher_syntax::parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let plain = plan_with_rules(&stmt, query, &NoFunctions, &[]).unwrap().root;
    let after = VarExpandCount.rewrite(plain.clone(), &RewriteCtx { resolver: &NoFunctions });
    let planned = plan_with_rules(&stmt, query, &NoFunctions, &[&VarExpandCount]).unwrap().root;
    assert_eq!(planned.render(), after.render(), "{query}");
    (plain.render(), after.render())
}

fn check(query: &str, want: &str) {
    let (before, after) = before_after(query);
    let got = format!("before:\n{before}after:\n{after}");
    assert_eq!(got.trim(), want.trim(), "{query}:\n{got}");
}

#[test]
fn traversal_tree_count_is_counted() {
    check(
        "MATCH (:Root)-[:HAS_B|HAS_A*]->(b:B) WHERE b.value RETURN count(b) AS c",
        "
before:
EagerAggregation keys=[] aggs=[s3=count(..)]
  Filter
    VarLengthExpand(All) (s0)-[:HAS_B|:HAS_A]->(s1) *1.. rel=s2
      NodeByLabelScan s0:Root
        Argument
after:
VarLengthExpand(Count) s3 = count((s0)-[:HAS_B|:HAS_A]->(s1) *1..)
  NodeByLabelScan s0:Root
    Argument
",
    );
}

#[test]
fn count_star_undirected_bounded_and_zero_length() {
    check(
        "MATCH (a {id: 1})-[:T*2..3]-(b) RETURN count(*) AS c",
        "
before:
EagerAggregation keys=[] aggs=[s3=count(*)]
  VarLengthExpand(All) (s0)-[:T]-(s1) *2..3 rel=s2
    Filter
      AllNodesScan s0
        Argument
after:
VarLengthExpand(Count) s3 = count((s0)-[:T]-(s1) *2..3)
  Filter
    AllNodesScan s0
      Argument
",
    );
    check(
        "MATCH (a:A)<-[*0..2]-(b) RETURN count(a) AS c",
        "
before:
EagerAggregation keys=[] aggs=[s3=count(..)]
  VarLengthExpand(All) (s0)<-[]-(s1) *0..2 rel=s2
    NodeByLabelScan s0:A
      Argument
after:
VarLengthExpand(Count) s3 = count((s0)<-[]-(s1) *0..2)
  NodeByLabelScan s0:A
    Argument
",
    );
}

#[test]
fn grouped_counts_are_counted_per_row_and_summed() {
    check(
        "MATCH (a:A)-[:T*..3]->(b:B) RETURN a.name AS n, count(b) AS c",
        "
before:
EagerAggregation keys=[s3] aggs=[s4=count(..)]
  Filter
    VarLengthExpand(All) (s0)-[:T]->(s1) *1..3 rel=s2
      NodeByLabelScan s0:A
        Argument
after:
EagerAggregation keys=[s3] aggs=[s4=sum(..)]
  VarLengthExpand(Count) s4 = count((s0)-[:T]->(s1) *1..3) per row
    NodeByLabelScan s0:A
      Argument
",
    );
}

#[test]
fn the_rule_runs_last() {
    assert_eq!(RULES.last().map(|r| r.name()), Some("var_expand_count"));
}

#[test]
fn paths_read_or_other_aggregates_keep_the_plain_plan() {
    for q in [
        // Distinct ends: the prune rule's.
        "MATCH (a:A)-[*]->(b) RETURN count(DISTINCT b) AS c",
        // Grouping keys that read the end.
        "MATCH (a:A)-[*]->(b) RETURN b.x AS x, count(*) AS c",
        "MATCH (a:A)-[*]->(b) RETURN a.x + b.x AS x, count(*) AS c",
        // Another aggregate beside it, or another one alone.
        "MATCH (a:A)-[*]->(b) RETURN count(b) AS c, sum(b.x) AS s",
        "MATCH (a:A)-[*]->(b) RETURN sum(b.x) AS s",
        // A value that may be null.
        "MATCH (a:A)-[*]->(b) RETURN count(b.x) AS c",
        // The relationship list or the path is read.
        "MATCH (a:A)-[r*]->(b) RETURN count(r) AS c",
        "MATCH (a:A)-[r*]->(b) WHERE r IS NOT NULL RETURN count(*) AS c",
        "MATCH p = (a:A)-[*]->(b) RETURN count(p) AS c",
        // Relationship property predicates.
        "MATCH (a:A)-[:T* {w: 1}]->(b) RETURN count(*) AS c",
        // Another relationship of the MATCH to stay distinct from.
        "MATCH (a:A)-[:T*]->(b)-[:T]->(d) RETURN count(*) AS c",
        // A bound end.
        "MATCH (a:A), (b:B) MATCH (a)-[*]->(b) RETURN count(*) AS c",
    ] {
        let (before, after) = before_after(q);
        assert_eq!(before, after, "{q}");
        assert!(!after.contains("(Count)"), "{q}:\n{after}");
    }
}
