//! Each rewrite rule run alone: the plan as built (no rules) and after the one rule, as
//! EXPLAIN-style text (`Op::render`), so a rule change shows up as a readable diff.

use arbor_cypher_plan::expr::PExpr;
use arbor_cypher_plan::ops::Op;
use arbor_cypher_plan::rewrite::eager::EagerBeforeWrites;
use arbor_cypher_plan::rewrite::eager_after::EagerAfterWrites;
use arbor_cypher_plan::rewrite::index_seek::IndexSeek;
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

/// Indexes on `:Account(id)`, `:Tag(name)` and `:Person(first, last)` (composite).
struct Indexes;

impl Resolver for Indexes {
    fn scalar(&self, _: &str) -> Option<ScalarFn> {
        None
    }
    fn procedure(&self, _: &str) -> Option<ProcSig> {
        None
    }
    fn indexes_on(&self, label: &str) -> Vec<Vec<String>> {
        let keys: &[&[&str]] = match label {
            "Account" => &[&["id"]],
            "Tag" => &[&["name"]],
            "Person" => &[&["first", "last"]],
            _ => &[],
        };
        keys.iter().map(|ks| ks.iter().map(|k| k.to_string()).collect()).collect()
    }
}

/// The plan of `query` without rewrites and after `rule` alone, with the indexes of `res`.
fn plans(query: &str, rule: &dyn RewriteRule, res: &dyn Resolver) -> (Op, Op) {
    let stmt = arbor_cypher_syntax::parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let plain =
        plan_with_rules(&stmt, query, res, &[]).unwrap_or_else(|e| panic!("{query}: {e}")).root;
    let after = rule.rewrite(plain.clone(), &RewriteCtx { resolver: res });
    // The planner running only this rule must give the same tree.
    let planned = plan_with_rules(&stmt, query, res, &[rule]).unwrap().root;
    assert_eq!(planned.render(), after.render(), "{query}");
    (plain, after)
}

/// `before:` the plan without rewrites, `after:` the same tree after `rule` alone.
fn before_after(query: &str, rule: &dyn RewriteRule, res: &dyn Resolver) -> String {
    let (plain, after) = plans(query, rule, res);
    format!("before:\n{}after:\n{}", plain.render(), after.render())
}

fn check(query: &str, rule: &dyn RewriteRule, want: &str) {
    check_with(query, rule, &NoFunctions, want);
}

fn check_with(query: &str, rule: &dyn RewriteRule, res: &dyn Resolver, want: &str) {
    let got = before_after(query, rule, res);
    assert_eq!(got.trim(), want.trim(), "{query} ({}):\n{got}", rule.name());
}

#[test]
fn rules_run_in_a_fixed_order() {
    let names: Vec<&str> = RULES.iter().map(|r| r.name()).collect();
    assert_eq!(
        names,
        [
            "id_seek",
            "index_seek",
            "eager_after_writes",
            "eager_before_writes",
            "count_store",
            "prune_var_expand",
            "frontier_expand",
            "var_expand_count"
        ]
    );
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
    SetProperty
      Create
        AllNodesScan s0
          Argument
after:
Delete
  Eager
    AllNodesScan s2
      SetProperty
        Create
          Eager
            AllNodesScan s0
              Argument
",
    );
}

// Goal: a `CALL { }` whose body writes reads all its driving rows first (Neo4j's Eager before
// the Apply), so the outer scan does not see the nodes the subquery creates; a reading-only
// `CALL { }` streams.
#[test]
fn eager_before_a_writing_call_subquery() {
    let (_, after) = plans(
        "MATCH (n) CALL (n) { MERGE (f {name: 'Peter'}) RETURN f } RETURN f",
        &EagerBeforeWrites,
        &NoFunctions,
    );
    let text = after.render();
    let apply = text.find("Apply").expect("an Apply");
    let eager = text[apply..].find("Eager").map(|i| i + apply);
    let scan = text.rfind("AllNodesScan").expect("the outer scan");
    assert!(matches!(eager, Some(e) if e < scan), "no Eager over the outer scan:\n{text}");
    let (_, read_only) = plans(
        "MATCH (n) CALL (n) { MATCH (n)-->(m) RETURN m } RETURN m",
        &EagerBeforeWrites,
        &NoFunctions,
    );
    assert!(!read_only.render().contains("Eager"), "{}", read_only.render());
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

#[test]
fn index_seek_for_a_range_under_a_label_scan() {
    check_with(
        "MATCH (a:Account) WHERE a.id > 1 RETURN a.id AS id",
        &IndexSeek,
        &Indexes,
        "
before:
Projection s1
  Filter
    NodeByLabelScan s0:Account
      Argument
after:
Projection s1
  Filter
    NodeIndexSeekByRange s0:Account(id)
      Argument
",
    );
}

#[test]
fn index_seek_for_an_equality_on_a_bound_value() {
    check_with(
        "MATCH (x) WITH x.v AS v MATCH (t:Tag) WHERE t.name = v RETURN t",
        &IndexSeek,
        &Indexes,
        "
before:
Filter
  NodeByLabelScan s2:Tag
    Projection s1
      AllNodesScan s0
        Argument
after:
Filter
  NodeIndexSeek s2:Tag(name)
    Projection s1
      AllNodesScan s0
        Argument
",
    );
}

#[test]
fn index_seek_for_a_composite_index() {
    check_with(
        "MATCH (p:Person) WHERE p.first = 'A' AND p.last = 'B' RETURN p",
        &IndexSeek,
        &Indexes,
        "
before:
Filter
  NodeByLabelScan s0:Person
    Argument
after:
Filter
  NodeIndexSeek s0:Person(first)
    Argument
",
    );
}

#[test]
fn index_seek_needs_an_index_and_a_value_known_before_the_node() {
    for query in [
        "MATCH (a:Other) WHERE a.id = 1 RETURN a",
        "MATCH (a:Account) WHERE a.id = a.other RETURN a",
        "MATCH (a:Account) WHERE a.other = 1 RETURN a",
        "MATCH (p:Person) WHERE p.first = 'A' RETURN p",
    ] {
        let (plain, after) = plans(query, &IndexSeek, &Indexes);
        assert_eq!(plain.render(), after.render(), "{query}");
        assert!(after.render().contains("NodeByLabelScan"), "{query}");
    }
}

#[test]
fn index_seek_on_another_label_checks_the_scanned_one() {
    let (_, after) =
        plans("MATCH (n:Person:Account) WHERE n.id = 7 RETURN n", &IndexSeek, &Indexes);
    let Op::Filter { input, pred, .. } = &after else { panic!("{}", after.render()) };
    assert!(
        matches!(&**input, Op::NodeIndexSeek { label, .. } if &**label == "Account"),
        "{}",
        after.render()
    );
    let mut parts = Vec::new();
    pred.clone().conjuncts_into(&mut parts);
    let checked: Vec<String> = parts
        .iter()
        .filter_map(|e| match e {
            PExpr::HasLabels(_, ls) => Some(ls.join(":")),
            _ => None,
        })
        .collect();
    assert_eq!(checked, ["Person"], "{}", after.render());
    assert_eq!(parts.len(), 2, "the equality stays in the filter: {parts:?}");
}

#[test]
fn eager_after_a_write_a_later_match_reads_past() {
    check(
        "CREATE (a) WITH a MATCH (b) RETURN b",
        &EagerAfterWrites,
        "
before:
AllNodesScan s1
  Create
    Argument
after:
AllNodesScan s1
  Eager
    Create
      Argument
",
    );
}

#[test]
fn no_eager_after_a_write_nothing_reads_past() {
    check(
        "MATCH (a) CREATE (b) WITH b UNWIND [1] AS x RETURN b, x",
        &EagerAfterWrites,
        "
before:
Unwind
  Create
    AllNodesScan s0
      Argument
after:
Unwind
  Create
    AllNodesScan s0
      Argument
",
    );
}

#[test]
fn eager_after_each_write_a_later_clause_reads_past() {
    check(
        "CREATE (a) SET a.x = 1 WITH a MATCH (c) RETURN c",
        &EagerAfterWrites,
        "
before:
AllNodesScan s1
  SetProperty
    Create
      Argument
after:
AllNodesScan s1
  Eager
    SetProperty
      Eager
        Create
          Argument
",
    );
}

#[test]
fn eager_after_call_in_transactions_a_later_match_reads_past() {
    check(
        "UNWIND [1] AS i CALL (i) { CREATE ({i: i}) } IN TRANSACTIONS MATCH (m) RETURN m",
        &EagerAfterWrites,
        "
before:
AllNodesScan s2
  TransactionApply
    Unwind
      Argument
    Create
      Argument
after:
AllNodesScan s2
  Eager
    TransactionApply
      Unwind
        Argument
      Create
        Argument
",
    );
}

#[test]
fn no_eager_after_call_in_transactions_nothing_reads_past() {
    check(
        "UNWIND [1] AS i CALL (i) { CREATE ({i: i}) } IN TRANSACTIONS RETURN i",
        &EagerAfterWrites,
        "
before:
TransactionApply
  Unwind
    Argument
  Create
    Argument
after:
TransactionApply
  Unwind
    Argument
  Create
    Argument
",
    );
}

#[test]
fn eager_after_write_inside_a_subquery_body_only() {
    check(
        "MATCH (a) CALL (a) { CREATE (b) WITH b MATCH (c) RETURN c } RETURN c",
        &EagerAfterWrites,
        "
before:
Apply
  AllNodesScan s0
    Argument
  AllNodesScan s2
    Create
      Argument
after:
Apply
  AllNodesScan s0
    Argument
  AllNodesScan s2
    Eager
      Create
        Argument
",
    );
}

#[test]
fn no_eager_across_union_branches() {
    check(
        "CREATE (a) RETURN 1 AS x UNION MATCH (b) RETURN 2 AS x",
        &EagerAfterWrites,
        "
before:
Distinct s4
  Union
    Projection s1
      Create
        Argument
    Projection s3
      AllNodesScan s2
        Argument
after:
Distinct s4
  Union
    Projection s1
      Create
        Argument
    Projection s3
      AllNodesScan s2
        Argument
",
    );
}

#[test]
fn eager_after_a_write_before_merge() {
    check(
        "CREATE (a) MERGE (b:B) RETURN b",
        &EagerAfterWrites,
        "
before:
Merge
  Create
    Argument
  NodeByLabelScan s1:B
    Argument
after:
Merge
  Eager
    Create
      Argument
  NodeByLabelScan s1:B
    Argument
",
    );
}

#[test]
fn eager_after_a_write_a_bound_match_filter_reads_past() {
    check(
        "MATCH (a) SET a:L WITH a MATCH (a:L) RETURN a",
        &EagerAfterWrites,
        "
before:
Filter
  SetProperty
    AllNodesScan s0
      Argument
after:
Filter
  Eager
    SetProperty
      AllNodesScan s0
        Argument
",
    );
}

#[test]
fn no_eager_after_a_write_with_where_reads_past() {
    check(
        "MATCH (a) SET a:L WITH a WHERE a:L RETURN a",
        &EagerAfterWrites,
        "
before:
Filter
  SetProperty
    AllNodesScan s0
      Argument
after:
Filter
  SetProperty
    AllNodesScan s0
      Argument
",
    );
}
