//! Each rewrite rule run alone: the plan as built (no rules) and after the one rule, as
//! EXPLAIN-style text (`Op::render`), so a rule change shows up as a readable diff.

use arbor_cypher_plan::rewrite::eager::EagerBeforeWrites;
use arbor_cypher_plan::rewrite::{count_store::CountStore, prune::PruneVarExpand};
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

/// `before:` the plan without rewrites, `after:` the same tree after `rule` alone.
fn before_after(query: &str, rule: &dyn RewriteRule) -> String {
    let stmt = arbor_cypher_syntax::parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let plain = plan_with_rules(&stmt, query, &NoFunctions, &[])
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .root;
    let after = rule.rewrite(plain.clone(), &RewriteCtx { resolver: &NoFunctions });
    // The planner running only this rule must give the same tree.
    let planned = plan_with_rules(&stmt, query, &NoFunctions, &[rule]).unwrap().root;
    assert_eq!(planned.render(), after.render(), "{query}");
    format!("before:\n{}after:\n{}", plain.render(), after.render())
}

fn check(query: &str, rule: &dyn RewriteRule, want: &str) {
    let got = before_after(query, rule);
    assert_eq!(got.trim(), want.trim(), "{query} ({}):\n{got}", rule.name());
}

#[test]
fn rules_run_in_a_fixed_order() {
    let names: Vec<&str> = RULES.iter().map(|r| r.name()).collect();
    assert_eq!(names, ["eager_before_writes", "count_store", "prune_var_expand"]);
}

#[test]
fn count_store_label_scan() {
    check(
        "MATCH (n:User) RETURN count(*) AS c",
        &CountStore,
        "
before:
EagerAggregation keys=[] aggs=[s1=count(*)]
  NodeByLabelScan s0:User
    Argument
after:
NodeCountFromCountStore s1 = count((:User))
  Argument
",
    );
}

#[test]
fn count_store_single_expansion() {
    check(
        "MATCH (:A)-[r:T]->() RETURN count(r) AS c",
        &CountStore,
        "
before:
EagerAggregation keys=[] aggs=[s3=count(..)]
  Expand(All) (s0)-[:T]->(s1) rel=s2
    NodeByLabelScan s0:A
      Argument
after:
RelationshipCountFromCountStore s3 = count((:A)-[:T]->())
  Argument
",
    );
}

#[test]
fn count_store_leaves_grouping_alone() {
    check(
        "MATCH (n:User) RETURN n.x AS x, count(*) AS c",
        &CountStore,
        "
before:
EagerAggregation keys=[s1] aggs=[s2=count(*)]
  NodeByLabelScan s0:User
    Argument
after:
EagerAggregation keys=[s1] aggs=[s2=count(*)]
  NodeByLabelScan s0:User
    Argument
",
    );
}

#[test]
fn count_store_leaves_two_end_labels_alone() {
    check(
        "MATCH (:A)-[:T]->(:B) RETURN count(*) AS c",
        &CountStore,
        "
before:
EagerAggregation keys=[] aggs=[s3=count(*)]
  Filter
    Expand(All) (s0)-[:T]->(s1) rel=s2
      NodeByLabelScan s0:A
        Argument
after:
EagerAggregation keys=[] aggs=[s3=count(*)]
  Filter
    Expand(All) (s0)-[:T]->(s1) rel=s2
      NodeByLabelScan s0:A
        Argument
",
    );
}

#[test]
fn prune_var_length_under_distinct_aggregate() {
    check(
        "MATCH (a)-[*1..3]->(b) RETURN count(DISTINCT b) AS c",
        &PruneVarExpand,
        "
before:
EagerAggregation keys=[] aggs=[s3=count(DISTINCT ..)]
  VarLengthExpand(All) (s0)-[]->(s1) *1..3 rel=s2
    AllNodesScan s0
      Argument
after:
EagerAggregation keys=[] aggs=[s3=count(DISTINCT ..)]
  VarLengthExpand(Pruning) (s0)-[]->(s1) *1..3
    AllNodesScan s0
      Argument
",
    );
}

#[test]
fn prune_chain_of_anonymous_hops_under_distinct() {
    check(
        "MATCH (s:User)-->()-->()-->(n:User) RETURN DISTINCT n.id AS id",
        &PruneVarExpand,
        "
before:
Distinct s7
  Projection s7
    Filter
      Expand(All) (s2)-[]->(s3) rel=s6
        Expand(All) (s1)-[]->(s2) rel=s5
          Expand(All) (s0)-[]->(s1) rel=s4
            NodeByLabelScan s0:User
              Argument
after:
Distinct s7
  Projection s7
    Filter
      VarLengthExpand(Pruning) (s0)-[]->(s3) *3..3
        NodeByLabelScan s0:User
          Argument
",
    );
}

#[test]
fn prune_needs_deduplication() {
    check(
        "MATCH (s:User)-[*1..2]->(n:User) RETURN n.id AS id",
        &PruneVarExpand,
        "
before:
Projection s3
  Filter
    VarLengthExpand(All) (s0)-[]->(s1) *1..2 rel=s2
      NodeByLabelScan s0:User
        Argument
after:
Projection s3
  Filter
    VarLengthExpand(All) (s0)-[]->(s1) *1..2 rel=s2
      NodeByLabelScan s0:User
        Argument
",
    );
}

#[test]
fn prune_leaves_read_relationships_alone() {
    check(
        "MATCH (s)-->()-[r]->(n) RETURN DISTINCT n.id AS id, r",
        &PruneVarExpand,
        "
before:
Distinct s5,s4
  Projection s5
    Expand(All) (s1)-[]->(s2) rel=s4
      Expand(All) (s0)-[]->(s1) rel=s3
        AllNodesScan s0
          Argument
after:
Distinct s5,s4
  Projection s5
    Expand(All) (s1)-[]->(s2) rel=s4
      Expand(All) (s0)-[]->(s1) rel=s3
        AllNodesScan s0
          Argument
",
    );
}

#[test]
fn eager_under_a_write_that_reads() {
    check(
        "MATCH (a) CREATE (b)",
        &EagerBeforeWrites,
        "
before:
Create
  AllNodesScan s0
    Argument
after:
Create
  Eager
    AllNodesScan s0
      Argument
",
    );
}

#[test]
fn eager_once_between_consecutive_writes() {
    check(
        "MATCH (a) CREATE (b) SET b.x = 1 WITH b MATCH (c) DELETE c",
        &EagerBeforeWrites,
        "
before:
Delete
  AllNodesScan s2
    Eager
      SetProperty
        Eager
          Create
            AllNodesScan s0
              Argument
after:
Delete
  Eager
    AllNodesScan s2
      Eager
        SetProperty
          Eager
            Create
              Eager
                AllNodesScan s0
                  Argument
",
    );
}

#[test]
fn no_eager_when_nothing_is_read() {
    check(
        "CREATE (a) CREATE (b)",
        &EagerBeforeWrites,
        "
before:
Create
  Create
    Argument
after:
Create
  Create
    Argument
",
    );
}
