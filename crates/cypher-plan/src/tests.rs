//! Planner tests: plan shapes (operator names, outermost first) and compile-time errors.

use arbor_model::Status;

use crate::ops::Op;
use crate::{plan, ProcSig, Resolver, ScalarFn};

struct NoFunctions;

impl Resolver for NoFunctions {
    fn scalar(&self, _: &str) -> Option<ScalarFn> {
        None
    }
    fn procedure(&self, _: &str) -> Option<ProcSig> {
        None
    }
}

fn shape(op: &Op) -> String {
    let kids: Vec<String> = op.children().into_iter().map(shape).collect();
    if kids.is_empty() {
        op.name().to_string()
    } else {
        format!("{}({})", op.name(), kids.join(", "))
    }
}

fn plan_of(q: &str) -> crate::Plan {
    let stmt = arbor_cypher_syntax::parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    plan(&stmt, q, &NoFunctions).unwrap_or_else(|e| panic!("{q}: {e}"))
}

fn err_of(q: &str) -> arbor_model::Error {
    let stmt = arbor_cypher_syntax::parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    match plan(&stmt, q, &NoFunctions) {
        Ok(p) => panic!("{q}: expected an error, got {}", shape(&p.root)),
        Err(e) => e,
    }
}

#[test]
fn plan_shapes() {
    let cases = [
        ("RETURN 1", "Projection(Argument)"),
        (
            "MATCH (s:User {id: $id})-->(n:User) RETURN n.id",
            "Projection(Filter(Expand(All)(NodeIndexSeek(Argument))))",
        ),
        (
            "MATCH (n:User) WHERE n.age >= 18 RETURN n.age, count(*)",
            "EagerAggregation(Filter(NodeByLabelScan(Argument)))",
        ),
        (
            "MATCH (a) OPTIONAL MATCH (a)-->(b) RETURN b",
            "Apply(Optional)(AllNodesScan(Argument), Expand(All)(Argument))",
        ),
        ("MATCH (a) CREATE (b)", "Create(Eager(AllNodesScan(Argument)))"),
        ("CREATE (a) CREATE (b)", "Create(Create(Argument))"),
        (
            "MATCH (a)-->(b) WHERE b.x = 1 AND a.y = 2 RETURN a",
            "Filter(Expand(All)(Filter(AllNodesScan(Argument))))",
        ),
    ];
    for (q, want) in cases {
        assert_eq!(shape(&plan_of(q).root), want, "{q}");
    }
}

#[test]
fn columns_and_params() {
    let p = plan_of("MATCH (n) WHERE n.x = $a RETURN n.x AS x, n.y, count(*) ORDER BY x");
    assert_eq!(p.columns, vec!["x", "n.y", "count(*)"]);
    assert_eq!(p.params.iter().map(|s| s.to_string()).collect::<Vec<_>>(), vec!["a"]);
    assert!(p.is_read && !p.is_write);
}

#[test]
fn compile_errors() {
    let cases = [
        ("RETURN n", "UndefinedVariable"),
        ("MATCH (n) RETURN m", "UndefinedVariable"),
        ("MATCH (a) WITH a.x RETURN 1", "NoExpressionAlias"),
        ("MATCH (a)-[r]->(b) MATCH (r) RETURN r", "VariableTypeConflict"),
        ("WITH 1 AS n MATCH (n) RETURN n", "VariableTypeConflict"),
        ("MATCH (a) CREATE (a)", "VariableAlreadyBound"),
        ("CREATE (a)-[:T]-(b)", "RequiresDirectedRelationship"),
        ("CREATE (a)-[:T*]->(b)", "CreatingVarLength"),
        ("CREATE (a)-[:T|U]->(b)", "NoSingleRelationshipType"),
        ("RETURN 1 AS a UNION RETURN 1 AS b", "DifferentColumnsInUnion"),
        ("MATCH (n) WHERE count(n) > 0 RETURN n", "InvalidAggregation"),
        ("RETURN count(count(*))", "InvalidAggregation"),
        ("MATCH (n) RETURN n LIMIT n.x", "NonConstantExpression"),
        ("RETURN foo(1)", "UnknownFunction"),
        ("MATCH (n) RETURN n, n.x + count(*) + m", "UndefinedVariable"),
        ("MATCH (n) RETURN n.x AS a, n.y AS a", "ColumnNameConflict"),
        ("MATCH (n) WHERE (n)-->(m) RETURN n", "UndefinedVariable"),
        ("RETURN false AND 123", "InvalidArgumentType"),
        ("MATCH (n)", "InvalidClauseComposition"),
        ("RETURN none(x IN ['a'] WHERE x % 2 = 0)", "InvalidArgumentType"),
        ("RETURN single(x IN [true, false] WHERE x * 2 = 0)", "InvalidArgumentType"),
        ("RETURN 1 IN 123", "InvalidArgumentType"),
        ("RETURN 1 IN {x: []}", "InvalidArgumentType"),
        ("RETURN properties([true])", "InvalidArgumentType"),
        ("RETURN count(rand())", "NonConstantExpression"),
        ("MATCH ()-[r]->() CREATE ()-[r]->()", "VariableAlreadyBound"),
        ("MATCH ()-[r]->() MERGE ()-[r]->()", "VariableAlreadyBound"),
        (
            "MATCH (a)--(b) RETURN a.x + b.x, count(*) ORDER BY a.x + b.x + count(*)",
            "AmbiguousAggregationExpression",
        ),
        (
            "MATCH (a)--(b) WITH a.x + b.x, count(*) AS c ORDER BY a.x + b.x + count(*) RETURN c",
            "AmbiguousAggregationExpression",
        ),
        ("MATCH (a)--(b) RETURN count(*) AS c ORDER BY a.x + count(*)", "UndefinedVariable"),
    ];
    for (q, detail) in cases {
        let e = err_of(q);
        assert_eq!(e.status, Status::SyntaxError, "{q}: {e}");
        assert_eq!(e.detail, Some(detail), "{q}: {e}");
        assert!(e.message.contains("line 1, column"), "{q}: {}", e.message);
    }
}

#[test]
fn static_type_errors_and_allowed_neighbours() {
    // Property access on a variable known to hold a non-map is a compile-time TypeError.
    for q in
        ["WITH 123 AS x RETURN x.num", "WITH 'a' AS x RETURN x.num", "WITH [1] AS x RETURN x.n"]
    {
        let e = err_of(q);
        assert_eq!(e.status, Status::TypeError, "{q}: {e}");
        assert_eq!(e.detail, Some("InvalidArgumentType"), "{q}: {e}");
    }
    // Still fine: string concatenation, a projected property reused in an aggregating ORDER BY,
    // arithmetic on a list variable of unknown element type, IN over a list or null.
    plan_of("WITH 'a' AS x RETURN x + 1 AS y");
    plan_of("MATCH (a)--(b) WITH a.x AS ax, count(*) AS c ORDER BY a.x + count(*) RETURN ax");
    plan_of("UNWIND ['a'] AS x RETURN x % 2 AS y");
    plan_of("RETURN 1 IN [1] AS a, 1 IN null AS b");
}

#[test]
fn limit_over_writes_drains_its_input() {
    let p = plan_of("CREATE (n) RETURN n LIMIT 0");
    assert!(matches!(p.root, Op::Limit { exhaust: true, .. }), "{:?}", p.root);
    let p = plan_of("UNWIND [1] AS x RETURN x LIMIT 0");
    assert!(matches!(p.root, Op::Limit { exhaust: false, .. }), "{:?}", p.root);
}

#[test]
fn pruning_expansion_shapes() {
    let cases = [
        (
            "MATCH (s:User {id: $id})-->()-->()-->(n:User) RETURN DISTINCT n.id",
            "Distinct(Projection(Filter(VarLengthExpand(Pruning)(NodeIndexSeek(Argument)))))",
        ),
        (
            "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id",
            "Distinct(Projection(Filter(VarLengthExpand(Pruning,BFS)(NodeIndexSeek(Argument)))))",
        ),
        (
            "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id, n",
            "Distinct(Projection(Filter(VarLengthExpand(Pruning)(NodeIndexSeek(Argument)))))",
        ),
        (
            "MATCH (a)-[*1..3]->(b) RETURN count(DISTINCT b)",
            "EagerAggregation(VarLengthExpand(Pruning)(AllNodesScan(Argument)))",
        ),
        // The paths are read: plain expansions.
        (
            "MATCH (s:User {id: $id})-->()-[r]->(n:User) RETURN DISTINCT n.id, r",
            "Distinct(Projection(Filter(Expand(All)(Expand(All)(NodeIndexSeek(Argument))))))",
        ),
        (
            "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN n.id",
            "Projection(Filter(VarLengthExpand(All)(NodeIndexSeek(Argument))))",
        ),
    ];
    for (q, want) in cases {
        assert_eq!(shape(&plan_of(q).root), want, "{q}");
    }
}
