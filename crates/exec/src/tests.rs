//! End-to-end tests: query text → parse → plan → execute against [`MemGraph`], with results
//! printed in TCK literal syntax. Cases are data: (setup, query, params, expected rows).

use std::sync::Arc;

use arbor_model::{to_cypher_literal, PropertyMap, Status, Value};

use crate::graph::Stats;
use crate::testing::MemGraph;
use crate::{Execution, PreparedQuery};

fn run_q(
    g: &mut MemGraph,
    q: &str,
    params: &[(&str, Value)],
) -> arbor_model::Result<(Vec<String>, Vec<String>, Stats)> {
    let stmt = arbor_cypher_syntax::parse(q)?;
    let pq = Arc::new(PreparedQuery::prepare(&stmt, q)?);
    let params: PropertyMap = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let mut ex = Execution::start(pq.clone(), params)?;
    let mut rows = Vec::new();
    while let Some(r) = ex.next(g)? {
        rows.push(r.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | "));
    }
    g.commit();
    Ok((pq.columns().to_vec(), rows, ex.stats()))
}

fn exec(g: &mut MemGraph, q: &str) {
    if let Err(e) = run_q(g, q, &[]) {
        panic!("setup query failed: {q}\n{e}");
    }
}

/// Runs `q` and compares rows in order.
fn check(g: &mut MemGraph, q: &str, params: &[(&str, Value)], expected: &[&str]) {
    let (_, rows, _) = run_q(g, q, params).unwrap_or_else(|e| panic!("query failed: {q}\n{e}"));
    let exp: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    assert_eq!(rows, exp, "query: {q}");
}

/// Runs `q` and compares rows as a multiset.
fn check_any(g: &mut MemGraph, q: &str, params: &[(&str, Value)], expected: &[&str]) {
    let (_, mut rows, _) = run_q(g, q, params).unwrap_or_else(|e| panic!("query failed: {q}\n{e}"));
    let mut exp: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    rows.sort();
    exp.sort();
    assert_eq!(rows, exp, "query: {q}");
}

fn check_err(g: &mut MemGraph, q: &str, status: Status, detail: Option<&str>) {
    match run_q(g, q, &[]) {
        Ok((_, rows, _)) => panic!("expected error for {q}, got rows {rows:?}"),
        Err(e) => {
            assert_eq!(e.status, status, "query: {q}: {e}");
            if detail.is_some() {
                assert_eq!(e.detail, detail, "query: {q}: {e}");
            }
        }
    }
}

fn cols(g: &mut MemGraph, q: &str) -> Vec<String> {
    run_q(g, q, &[]).unwrap_or_else(|e| panic!("query failed: {q}\n{e}")).0
}

#[test]
fn return_literals() {
    let mut g = MemGraph::new();
    check(&mut g, "RETURN 1", &[], &["1"]);
    check(&mut g, "RETURN 1 + 2 AS x, 'a' + 'b', [1, 2][-1], {a: 1}.a", &[], &["3 | 'ab' | 2 | 1"]);
    assert_eq!(cols(&mut g, "RETURN 1 + 2 AS x, 'a' + 'b'"), vec!["x", "'a' + 'b'"]);
    check(
        &mut g,
        "RETURN null AND false, null OR true, null XOR true, NOT null",
        &[],
        &["false | true | null | null"],
    );
    check(
        &mut g,
        "RETURN 2 IN [1, null], 1 IN [1, null], null IN []",
        &[],
        &["null | true | false"],
    );
    check(
        &mut g,
        "RETURN 'abc' STARTS WITH 'a', 'abc' =~ 'a.*', 'abc' CONTAINS 'x'",
        &[],
        &["true | true | false"],
    );
    check(
        &mut g,
        "RETURN [x IN range(1, 5) WHERE x % 2 = 1 | x * 10] AS l",
        &[],
        &["[10, 30, 50]"],
    );
    check(&mut g, "RETURN reduce(s = 0, x IN [1, 2, 3] | s + x) AS s", &[], &["6"]);
    check(
        &mut g,
        "RETURN all(x IN [1, 2] WHERE x > 0), any(x IN [1, 2] WHERE x > 1)",
        &[],
        &["true | true"],
    );
    check(&mut g, "RETURN CASE 1 WHEN 1 THEN 'one' ELSE 'other' END", &[], &["'one'"]);
    check(&mut g, "RETURN CASE WHEN 1 > 2 THEN 'a' END", &[], &["null"]);
    check(&mut g, "RETURN [1, 2, 3, 4][1..3], [1, 2, 3][-2..]", &[], &["[2, 3] | [2, 3]"]);
    check(&mut g, "RETURN 1 < 2 < 3, 3 > 2 > 2", &[], &["true | false"]);
    check(&mut g, "RETURN $x + 1 AS y", &[("x", Value::Int(41))], &["42"]);
    check(&mut g, "RETURN toUpper('abc') AS u, size([1, 2])", &[], &["'ABC' | 2"]);
}

#[test]
fn unwind_with_order_skip_limit() {
    let mut g = MemGraph::new();
    check(&mut g, "UNWIND [3, 1, 2] AS x RETURN x ORDER BY x", &[], &["1", "2", "3"]);
    check(&mut g, "UNWIND [3, 1, 2] AS x RETURN x ORDER BY x DESC SKIP 1 LIMIT 1", &[], &["2"]);
    check(&mut g, "UNWIND [1, 1, 2] AS x RETURN DISTINCT x ORDER BY x", &[], &["1", "2"]);
    check(&mut g, "UNWIND [1, 2, 3] AS x WITH x WHERE x > 1 RETURN sum(x)", &[], &["5"]);
    check(
        &mut g,
        "UNWIND [1, 2, 3] AS x WITH x AS y ORDER BY x DESC RETURN y",
        &[],
        &["3", "2", "1"],
    );
    check(&mut g, "UNWIND [] AS x RETURN count(*), collect(x)", &[], &["0 | []"]);
    check(&mut g, "UNWIND null AS x RETURN x", &[], &[]);
    check(&mut g, "WITH [1, 2] AS l UNWIND l AS x RETURN x, l", &[], &["1 | [1, 2]", "2 | [1, 2]"]);
}

#[test]
fn aggregation() {
    let mut g = MemGraph::new();
    check(
        &mut g,
        "UNWIND [1, 2, 2, 3] AS x RETURN x % 2 AS k, count(*) AS c, sum(x) ORDER BY k",
        &[],
        &["0 | 2 | 4", "1 | 2 | 4"],
    );
    check(&mut g, "UNWIND [1, 2, 3] AS x RETURN count(*) + 1 AS c", &[], &["4"]);
    check(
        &mut g,
        "UNWIND [1, 2, 2] AS x RETURN count(DISTINCT x), collect(DISTINCT x)",
        &[],
        &["2 | [1, 2]"],
    );
    check(&mut g, "UNWIND [1, 2, 3] AS x RETURN min(x), max(x), avg(x)", &[], &["1 | 3 | 2.0"]);
    check(
        &mut g,
        "UNWIND [1, 2, 3] AS x WITH x % 2 AS k, count(*) AS c ORDER BY c DESC RETURN k, c",
        &[],
        &["1 | 2", "0 | 1"],
    );
    check(
        &mut g,
        "UNWIND [1, 2, 3] AS x RETURN x, count(*) * x AS y ORDER BY x",
        &[],
        &["1 | 1", "2 | 2", "3 | 3"],
    );
    check(&mut g, "UNWIND [1, 2, 3] AS x RETURN count(*) ORDER BY count(*)", &[], &["3"]);
}

fn social() -> MemGraph {
    let mut g = MemGraph::new();
    exec(
        &mut g,
        "CREATE (a:User {id: 1, age: 20}), (b:User {id: 2, age: 15}), (c:User {id: 3, age: 30}), \
         (d:User {id: 4, age: 40}), (e:User {id: 5}), \
         (a)-[:Friend]->(b), (a)-[:Friend]->(c), (b)-[:Friend]->(d), (c)-[:Friend]->(d), \
         (d)-[:Friend]->(e), (e)-[:Friend]->(a), (c)-[:Friend]->(a)",
    );
    g
}

#[test]
fn mgbench_aggregates() {
    let mut g = social();
    check_any(
        &mut g,
        "MATCH (n:User) RETURN n.age, COUNT(*)",
        &[],
        &["20 | 1", "15 | 1", "30 | 1", "40 | 1", "null | 1"],
    );
    check(&mut g, "MATCH (n) RETURN count(n), count(n.age)", &[], &["5 | 4"]);
    check_any(
        &mut g,
        "MATCH (n:User) WHERE n.age >= 18 RETURN n.age, COUNT(*)",
        &[],
        &["20 | 1", "30 | 1", "40 | 1"],
    );
    check(&mut g, "MATCH (n) RETURN min(n.age), max(n.age), avg(n.age)", &[], &["15 | 40 | 26.25"]);
}

#[test]
fn mgbench_traversals() {
    let mut g = social();
    g.add_index("User", "id");
    let id = |i| vec![("id", Value::Int(i))];
    check_any(&mut g, "MATCH (s:User {id: $id})-->(n:User) RETURN n.id", &id(1), &["2", "3"]);
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-->(n:User) WHERE n.age >= 18 RETURN n.id",
        &id(1),
        &["3"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-->()-->(n:User) RETURN DISTINCT n.id",
        &id(1),
        &["4", "1"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id",
        &id(1),
        &["4", "1"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-->()-->()-->(n:User) RETURN DISTINCT n.id",
        &id(1),
        &["5", "2"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id",
        &id(3),
        &["1", "4"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) RETURN DISTINCT n.id",
        &id(1),
        &["1", "4"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id",
        &id(1),
        &["1", "4"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id",
        &id(1),
        &["2", "3", "4", "1"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id",
        &id(1),
        &["3", "4", "1"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id, n",
        &id(2),
        &["4 | (:User {age: 40, id: 4})", "5 | (:User {id: 5})"],
    );
    check_any(
        &mut g,
        "MATCH (s:User {id: $id})-[*1..2]->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id, n",
        &id(2),
        &["4 | (:User {age: 40, id: 4})"],
    );
    check_any(
        &mut g,
        "MATCH (n:User {id: $id})-[e1]->(m)-[e2]->(n) RETURN e1, m, e2",
        &id(1),
        &["[:Friend] | (:User {age: 30, id: 3}) | [:Friend]"],
    );
    check_any(
        &mut g,
        "MATCH (n1:User {id: $id})-[e1]->(n2)-[e2]->(n3)-[e3]->(n4)<-[e4]-(n5) RETURN n5 LIMIT 1",
        &id(5),
        &["(:User {age: 30, id: 3})"],
    );
    check_any(
        &mut g,
        "MATCH (n:User {id: $id})-[e]->(m) RETURN m LIMIT 1",
        &id(4),
        &["(:User {id: 5})"],
    );
    check(&mut g, "MATCH (n:User {id : $id}) RETURN n", &id(2), &["(:User {age: 15, id: 2})"]);
}

#[test]
fn mgbench_writes() {
    let mut g = social();
    let (_, rows, stats) = run_q(
        &mut g,
        "MATCH (n:User {id: $from}), (m:User {id: $to}) WITH n, m CREATE (n)-[e:Temp]->(m) RETURN e",
        &[("from", Value::Int(1)), ("to", Value::Int(5))],
    )
    .unwrap();
    assert_eq!(rows, vec!["[:Temp]"]);
    assert_eq!(stats.relationships_created, 1);
    let (_, rows, stats) =
        run_q(&mut g, "CREATE (n:UserTemp {id : $id}) RETURN n", &[("id", Value::Int(9))]).unwrap();
    assert_eq!(rows, vec!["(:UserTemp {id: 9})"]);
    assert_eq!((stats.nodes_created, stats.labels_added, stats.properties_set), (1, 1, 1));
    let (cols, rows, stats) =
        run_q(&mut g, "MATCH (n:User {id: $id}) SET n.property = -1", &[("id", Value::Int(3))])
            .unwrap();
    assert!(cols.is_empty() && rows.is_empty());
    assert_eq!(stats.properties_set, 1);
    check(&mut g, "MATCH (n:User {id: 3}) RETURN n.property", &[], &["-1"]);
}

#[test]
fn match_shapes() {
    let mut g = social();
    check(&mut g, "MATCH (a:User {id: 1})<--(b) RETURN b.id ORDER BY b.id", &[], &["3", "5"]);
    check(&mut g, "MATCH (a:User {id: 1})--(b) RETURN count(b)", &[], &["4"]);
    check(&mut g, "MATCH ()-[r:Friend|Nope]->() RETURN count(r)", &[], &["7"]);
    check(&mut g, "MATCH (a {id: 1}), (b {id: 2}) RETURN a.id, b.id", &[], &["1 | 2"]);
    check(
        &mut g,
        "MATCH p = (a {id: 1})-->(b {id: 2}) RETURN length(p), nodes(p)[1].id",
        &[],
        &["1 | 2"],
    );
    check(
        &mut g,
        "MATCH (a {id: 1})-[r*2]->(b) RETURN b.id, size(r) ORDER BY b.id",
        &[],
        &["1 | 2", "4 | 2", "4 | 2"],
    );
    check(
        &mut g,
        "MATCH (a {id: 1})-[*0..1]->(b) RETURN b.id ORDER BY b.id",
        &[],
        &["1", "2", "3"],
    );
    // Relationship isomorphism: the cycle a->c->a can't reuse a relationship.
    check(&mut g, "MATCH (a {id: 1})-[r1]-(b)-[r2]-(a) RETURN count(*)", &[], &["2"]);
    check(
        &mut g,
        "MATCH (a:User) WHERE a.id IN [1, 2] AND NOT (a)-->(:User {id: 3}) RETURN a.id",
        &[],
        &["2"],
    );
    check(
        &mut g,
        "MATCH (a:User {id: 1}) RETURN [(a)-->(b) | b.id] AS ids, size([(a)<--(c) | c]) AS n",
        &[],
        &["[2, 3] | 2"],
    );
    check(
        &mut g,
        "MATCH (a:User {id: 5}) RETURN exists { (a)-->() } AS e, count { (a)--() } AS c",
        &[],
        &["true | 2"],
    );
    check(
        &mut g,
        "MATCH p = shortestPath((a:User {id: 2})-[*]->(b:User {id: 3})) RETURN length(p)",
        &[],
        &["4"],
    );
}

#[test]
fn optional_match() {
    let mut g = social();
    check(
        &mut g,
        "MATCH (a:User) OPTIONAL MATCH (a)-[:Friend]->(b:User {id: 3}) RETURN a.id, b.id ORDER BY a.id",
        &[],
        &["1 | 3", "2 | null", "3 | null", "4 | null", "5 | null"],
    );
    check(&mut g, "OPTIONAL MATCH (n:Nope) RETURN n", &[], &["null"]);
    check(
        &mut g,
        "MATCH (a:User {id: 2}) OPTIONAL MATCH (a)-->(b) WHERE b.age > 100 RETURN a.id, b",
        &[],
        &["2 | null"],
    );
}

#[test]
fn writes() {
    let mut g = MemGraph::new();
    exec(&mut g, "CREATE (:A {x: 1})-[:R {w: 2}]->(:B)");
    check(
        &mut g,
        "MATCH (a:A)-[r:R]->(b:B) RETURN a.x, r.w, labels(b), type(r)",
        &[],
        &["1 | 2 | ['B'] | 'R'"],
    );
    // MERGE matches or creates.
    let (_, _, s) = run_q(&mut g, "MERGE (a:A {x: 1}) RETURN a", &[]).unwrap();
    assert_eq!(s.nodes_created, 0);
    let (_, _, s) =
        run_q(&mut g, "MERGE (a:A {x: 2}) ON CREATE SET a.new = true RETURN a", &[]).unwrap();
    assert_eq!(s.nodes_created, 1);
    check(&mut g, "MATCH (a:A) RETURN a.x, a.new ORDER BY a.x", &[], &["1 | null", "2 | true"]);
    let (_, _, s) = run_q(&mut g, "UNWIND [1, 1, 2] AS i MERGE (:C {i: i})", &[]).unwrap();
    assert_eq!(s.nodes_created, 2);
    exec(&mut g, "MATCH (a:A {x: 1}), (c:C {i: 1}) MERGE (a)-[:T]->(c)");
    exec(&mut g, "MATCH (a:A {x: 1}), (c:C {i: 1}) MERGE (a)-[:T]->(c) ON MATCH SET a.m = 1");
    check(&mut g, "MATCH (:A)-[t:T]->(:C) RETURN count(t)", &[], &["1"]);
    check(&mut g, "MATCH (a:A {x: 1}) RETURN a.m", &[], &["1"]);
    // SET / REMOVE.
    exec(&mut g, "MATCH (a:A {x: 1}) SET a:L, a += {y: 5}, a.x = a.x + 10 REMOVE a.m");
    check(
        &mut g,
        "MATCH (a:L) RETURN a",
        &[],
        &["(:A:L {new: null, x: 11, y: 5})".replace("new: null, ", "").as_str()],
    );
    exec(&mut g, "MATCH (a:L) SET a = {z: 1} REMOVE a:L");
    check(&mut g, "MATCH (a {z: 1}) RETURN a", &[], &["(:A {z: 1})"]);
    // DELETE.
    check_err(&mut g, "MATCH (a:A {z: 1}) DELETE a", Status::DeleteNodeWithRelationships, None);
    let (_, _, s) = run_q(&mut g, "MATCH (a:A {z: 1}) DETACH DELETE a", &[]).unwrap();
    assert_eq!((s.nodes_deleted, s.relationships_deleted), (1, 2));
    let (_, _, s) = run_q(&mut g, "MATCH (n) DETACH DELETE n", &[]).unwrap();
    assert_eq!(s.nodes_deleted, 4);
    assert_eq!(g.sizes(), (0, 0));
    // Writes of a clause are not seen by its own reads.
    exec(&mut g, "CREATE (:X), (:X)");
    let (_, _, s) = run_q(&mut g, "MATCH (x:X) CREATE (:X)", &[]).unwrap();
    assert_eq!(s.nodes_created, 2);
    check(&mut g, "UNWIND [1, 2] AS i CREATE (:Y) WITH i MATCH (y:Y) RETURN count(*)", &[], &["4"]);
    exec(&mut g, "FOREACH (i IN [1, 2, 3] | CREATE (:F {i: i}))");
    check(&mut g, "MATCH (f:F) RETURN sum(f.i)", &[], &["6"]);
}

#[test]
fn union_and_subqueries() {
    let mut g = MemGraph::new();
    check_any(&mut g, "RETURN 1 AS x UNION RETURN 1 AS x UNION RETURN 2 AS x", &[], &["1", "2"]);
    check_any(&mut g, "RETURN 1 AS x UNION ALL RETURN 1 AS x", &[], &["1", "1"]);
    check(
        &mut g,
        "UNWIND [1, 2] AS x CALL { WITH x RETURN x * 10 AS y } RETURN x, y",
        &[],
        &["1 | 10", "2 | 20"],
    );
    check(&mut g, "RETURN COLLECT { UNWIND [1, 2] AS z RETURN z } AS c", &[], &["[1, 2]"]);
}

#[test]
fn procedures() {
    let mut g = social();
    check(&mut g, "CALL db.labels()", &[], &["'User'"]);
    check(
        &mut g,
        "CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t",
        &[],
        &["'Friend'"],
    );
    check(&mut g, "CALL db.propertyKeys() YIELD propertyKey RETURN count(*)", &[], &["2"]);
}

#[test]
fn map_projection_and_functions() {
    let mut g = social();
    check(
        &mut g,
        "MATCH (n:User {id: 1}) RETURN n {.id, .age, x: 1} AS m",
        &[],
        &["{age: 20, id: 1, x: 1}"],
    );
    check(
        &mut g,
        "MATCH (n:User {id: 1}) RETURN keys(n), properties(n).age, id(n) >= 0",
        &[],
        &["['age', 'id'] | 20 | true"],
    );
    check(
        &mut g,
        "MATCH (n:User {id: 1})-[r]->(m {id: 2}) RETURN startNode(r).id, endNode(r).id",
        &[],
        &["1 | 2"],
    );
    check(
        &mut g,
        "MATCH (n:User {id: 5}) RETURN n.age IS NULL, coalesce(n.age, 7)",
        &[],
        &["true | 7"],
    );
}

#[test]
fn errors() {
    let mut g = MemGraph::new();
    check_err(&mut g, "RETURN x", Status::SyntaxError, Some("UndefinedVariable"));
    check_err(
        &mut g,
        "MATCH (a) WITH a.x RETURN 1",
        Status::SyntaxError,
        Some("NoExpressionAlias"),
    );
    check_err(
        &mut g,
        "RETURN 1 AS a UNION RETURN 2 AS b",
        Status::SyntaxError,
        Some("DifferentColumnsInUnion"),
    );
    check_err(
        &mut g,
        "MATCH (a) WHERE count(a) > 1 RETURN a",
        Status::SyntaxError,
        Some("InvalidAggregation"),
    );
    check_err(
        &mut g,
        "MATCH (a) RETURN a LIMIT a.x",
        Status::SyntaxError,
        Some("NonConstantExpression"),
    );
    check_err(
        &mut g,
        "CREATE (a)-[:R]-(b)",
        Status::SyntaxError,
        Some("RequiresDirectedRelationship"),
    );
    check_err(&mut g, "CREATE (a)-[:R*2]->(b)", Status::SyntaxError, Some("CreatingVarLength"));
    check_err(&mut g, "CREATE (a)-[]->(b)", Status::SyntaxError, Some("NoSingleRelationshipType"));
    check_err(&mut g, "RETURN nope(1)", Status::SyntaxError, Some("UnknownFunction"));
    check_err(
        &mut g,
        "MATCH (a)-[r]->(a) MATCH (r) RETURN r",
        Status::SyntaxError,
        Some("VariableTypeConflict"),
    );
    check_err(
        &mut g,
        "CREATE (a:A) CREATE (a:B)",
        Status::SyntaxError,
        Some("VariableAlreadyBound"),
    );
    check_err(
        &mut g,
        "MATCH (n) RETURN n.x, n.x + count(*) + m",
        Status::SyntaxError,
        Some("UndefinedVariable"),
    );
    check_err(&mut g, "CALL nope.nothing()", Status::ProcedureNotFound, None);
    check_err(&mut g, "RETURN 1 / 0", Status::ArithmeticError, None);
    check_err(&mut g, "RETURN $missing", Status::ParameterMissing, None);
    check_err(&mut g, "WITH 'a' AS s RETURN s AND true", Status::TypeError, None);
    check_err(
        &mut g,
        "MATCH (a) RETURN a AS x, a AS x",
        Status::SyntaxError,
        Some("ColumnNameConflict"),
    );
}

fn prepare(q: &str) -> Arc<PreparedQuery> {
    let stmt = arbor_cypher_syntax::parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    Arc::new(PreparedQuery::prepare(&stmt, q).unwrap_or_else(|e| panic!("{q}: {e}")))
}

fn op_type(v: &Value) -> String {
    match v {
        Value::Map(m) => match m.get("operatorType") {
            Some(Value::String(s)) => s.to_string(),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

#[test]
fn explain_profile_and_flags() {
    let mut g = social();
    let q = prepare("EXPLAIN MATCH (n:User) RETURN n.id");
    assert!(q.is_explain() && q.is_read() && !q.is_write());
    assert_eq!(q.columns(), ["n.id"]);
    let mut ex = Execution::start(q.clone(), PropertyMap::new()).unwrap();
    assert!(ex.next(&mut g).unwrap().is_none(), "EXPLAIN yields no rows");
    assert_eq!(op_type(&q.plan_description()), "ProduceResults");

    let q = prepare("PROFILE MATCH (n:User) RETURN n.id");
    assert!(q.is_profile());
    let mut ex = Execution::start(q, PropertyMap::new()).unwrap();
    let mut n = 0;
    while ex.next(&mut g).unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 5);
    let Value::Map(p) = ex.profile() else { panic!("profile is a map") };
    let Some(Value::List(children)) = p.get("children") else { panic!("children") };
    let Value::Map(top) = &children[0] else { panic!("child") };
    assert_eq!(top.get("rows").map(to_cypher_literal), Some("5".to_string()));

    let q = prepare("CREATE (n) RETURN n");
    assert!(q.is_write() && !q.is_read());
}

#[test]
fn interrupt_stops_execution() {
    let mut g = social();
    let q = prepare("MATCH (a), (b), (c) RETURN a, b, c");
    let mut ex = Execution::start(q, PropertyMap::new()).unwrap();
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    ex.set_interrupt(flag.clone());
    assert!(ex.next(&mut g).unwrap().is_some());
    flag.store(true, std::sync::atomic::Ordering::Relaxed);
    let err = ex.next(&mut g).unwrap_err();
    assert_eq!(err.status, Status::TransactionTerminated);
}

#[test]
fn null_semantics_and_parameters() {
    let mut g = social();
    check(
        &mut g,
        "MATCH (n:User) WHERE n.age > 25 OR n.age IS NULL RETURN n.id ORDER BY n.id",
        &[],
        &["3", "4", "5"],
    );
    check(&mut g, "MATCH (n:User) WHERE NOT n.age > 25 RETURN count(*)", &[], &["2"]);
    check(&mut g, "MATCH (n:User) RETURN n.id ORDER BY n.age DESC, n.id LIMIT 2", &[], &["5", "4"]);
    check(
        &mut g,
        "MATCH (n:User) WHERE n.id IN $ids RETURN collect(n.id) AS ids",
        &[("ids", Value::List(vec![Value::Int(2), Value::Int(4)]))],
        &["[2, 4]"],
    );
    check(
        &mut g,
        "MATCH (n:User {id: $p.id}) RETURN n.age",
        &[("p", Value::Map([("id".to_string(), Value::Int(4))].into_iter().collect()))],
        &["40"],
    );
    check(
        &mut g,
        "RETURN null = null, null <> 1, [1, null] = [1, null], {a: null} = {a: 1}",
        &[],
        &["null | null | null | null"],
    );
    check(&mut g, "WITH 1 AS x LIMIT size([y IN [1, 2] | y]) RETURN x", &[], &["1"]);
}

#[test]
fn api_types_are_thread_safe() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<PreparedQuery>();
    send::<Execution>();
}

/// PROFILE: per-operator rows, own db hits and times, and estimates from the graph's counts.
#[test]
fn profile_reports_rows_db_hits_and_estimates() {
    let mut g = MemGraph::new();
    exec(&mut g, "UNWIND range(1, 10) AS i CREATE (:A {i: i})-[:T]->(:B)");
    let q = "PROFILE MATCH (a:A)-[:T]->(b) RETURN b";
    let stmt = arbor_cypher_syntax::parse(q).unwrap();
    let pq = Arc::new(PreparedQuery::prepare(&stmt, q).unwrap());
    let mut ex = Execution::start(pq, PropertyMap::new()).unwrap();
    let mut n = 0;
    while ex.next(&mut g).unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 10);
    let get = |v: &Value, k: &str| match v {
        Value::Map(m) => m.get(k).cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let child = |v: &Value| match get(v, "children") {
        Value::List(c) => c.into_iter().next().unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let root = ex.profile();
    assert!(matches!(get(&root, "rows"), Value::Int(10)));
    // ProduceResults -> Expand(All) -> NodeByLabelScan -> Argument.
    let expand = child(&root);
    assert!(matches!(get(&expand, "operatorType"), Value::String(s) if &*s == "Expand(All)"));
    assert!(matches!(get(&expand, "rows"), Value::Int(10)));
    assert!(matches!(get(&expand, "dbHits"), Value::Int(h) if h >= 10), "{expand:?}");
    let scan = child(&expand);
    assert!(matches!(get(&scan, "rows"), Value::Int(10)));
    let args = get(&scan, "args");
    // 10 nodes labelled A: the estimate comes from the label count, not a default.
    assert!(matches!(get(&args, "EstimatedRows"), Value::Float(f) if f == 10.0), "{args:?}");
    assert!(matches!(get(&scan, "time"), Value::Int(t) if t >= 0));
}

/// `CALL { ... } IN TRANSACTIONS`: every row is processed; the batch size must be positive.
#[test]
fn call_in_transactions_runs_every_batch() {
    let mut g = MemGraph::new();
    exec(
        &mut g,
        "UNWIND range(1, 5) AS i CALL { WITH i CREATE (:N {i: i}) } IN TRANSACTIONS OF 2 ROWS",
    );
    check(&mut g, "MATCH (n:N) RETURN count(n)", &[], &["5"]);
    check_err(
        &mut g,
        "UNWIND [1] AS i CALL { WITH i CREATE (:N) } IN TRANSACTIONS OF 0 ROWS",
        Status::SyntaxError,
        Some("InvalidArgumentValue"),
    );
}

/// A LIMIT cuts the result, never the writes before it.
#[test]
fn limit_after_writes_keeps_every_write() {
    let mut g = MemGraph::new();
    check(&mut g, "UNWIND range(1, 4) AS i CREATE (n:L) RETURN n LIMIT 1", &[], &["(:L)"]);
    check(&mut g, "MATCH (n:L) RETURN count(n)", &[], &["4"]);
    check(&mut g, "MATCH (n:L) SET n.x = 1 RETURN n.x LIMIT 0", &[], &[]);
    check(&mut g, "MATCH (n:L) WHERE n.x = 1 RETURN count(n)", &[], &["4"]);
}

/// Variable-length expansion on the shared path stack: relationship isomorphism on cycles,
/// the anonymous form (no list built) against the named one, a filter fused into the
/// expansion, bounds, `count(DISTINCT)` over nodes as ids and materialized, and PROFILE rows
/// of the fused expansion.
#[test]
fn var_length_expansion_lazily_on_the_path_stack() {
    let mut g = MemGraph::new();
    // A triangle a -> b -> c -> a plus a tail c -> d; `v` marks b and d.
    exec(
        &mut g,
        "CREATE (a:N {n: 'a'})-[:T]->(b:N {n: 'b', v: true})-[:T]->(c:N {n: 'c'})-[:T]->(a), \
         (c)-[:T]->(d:N {n: 'd', v: true})",
    );
    // Every relationship-unique path from a: 4 of them end on b, c, a and d.
    check_any(
        &mut g,
        "MATCH (:N {n: 'a'})-[:T*]->(x) RETURN x.n",
        &[],
        &["'b'", "'c'", "'a'", "'d'"],
    );
    // The named form returns the same paths with their lists, in pattern order.
    check_any(
        &mut g,
        "MATCH (:N {n: 'a'})-[r:T*]->(x) RETURN x.n, size(r)",
        &[],
        &["'b' | 1", "'c' | 2", "'a' | 3", "'d' | 3"],
    );
    // A filter on the end node (fused into the expansion), also with bounds and zero length.
    check(&mut g, "MATCH (:N {n: 'a'})-[:T*]->(x) WHERE x.v RETURN count(x)", &[], &["2"]);
    check(&mut g, "MATCH (:N {n: 'a'})-[:T*2..3]->(x:N) WHERE x.v RETURN x.n", &[], &["'d'"]);
    check_any(&mut g, "MATCH (:N {n: 'a'})-[:T*0..1]->(x) RETURN x.n", &[], &["'a'", "'b'"]);
    // Backwards (the planner starts at the labelled end) keeps the list in pattern order.
    check(
        &mut g,
        "MATCH (x)-[r:T*2]->(:N {n: 'd'}) RETURN x.n, [rel IN r | startNode(rel).n]",
        &[],
        &["'b' | ['b', 'c']"],
    );
    // Aggregations consume the expansion's working row in place (`Operator::drain`): the
    // relationship list, the end node and the grouping are those of each path.
    check_any(
        &mut g,
        "MATCH (:N {n: 'a'})-[r:T*]->(x) RETURN size(r), collect(x.n)",
        &[],
        &["1 | ['b']", "2 | ['c']", "3 | ['a', 'd']"],
    );
    check_any(
        &mut g,
        "MATCH p = (:N {n: 'a'})-[:T*]->(x) WHERE x.v \
         RETURN x.n, count(*), collect([n IN nodes(p) | n.n])",
        &[],
        &["'b' | 1 | [['a', 'b']]", "'d' | 1 | [['a', 'b', 'c', 'd']]"],
    );
    check(
        &mut g,
        "MATCH (s:N)-[:T*]-(x) RETURN count(*), count(DISTINCT x), min(s.n)",
        &[],
        &["32 | 4 | 'a'"],
    );
    // A second relationship in the clause must stay distinct from the expansion's.
    check(&mut g, "MATCH (:N {n: 'a'})-[:T*]->(x)-[:T]->(y) RETURN count(*)", &[], &["3"]);
    // DISTINCT over node ids and over materialized nodes agree.
    check(&mut g, "MATCH (s:N)-[:T*]->(x) RETURN count(x), count(DISTINCT x)", &[], &["13 | 4"]);
    check(
        &mut g,
        "MATCH (s:N)-[:T*]->(x) WITH collect(x) + collect(x) AS xs \
         UNWIND xs AS x RETURN count(DISTINCT x)",
        &[],
        &["4"],
    );
    // PROFILE: the fused filter keeps its own rows and the expansion reports its own.
    let q = "PROFILE MATCH (:N {n: 'a'})-[:T*]->(x) WHERE x.v RETURN x";
    let stmt = arbor_cypher_syntax::parse(q).unwrap();
    let pq = Arc::new(PreparedQuery::prepare(&stmt, q).unwrap());
    let mut ex = Execution::start(pq, PropertyMap::new()).unwrap();
    while ex.next(&mut g).unwrap().is_some() {}
    let get = |v: &Value, k: &str| match v {
        Value::Map(m) => m.get(k).cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let mut rows = Vec::new();
    let mut op = ex.profile();
    loop {
        if let Value::String(t) = get(&op, "operatorType") {
            rows.push((t.to_string(), get(&op, "rows")));
        }
        op = match get(&op, "children") {
            Value::List(c) if !c.is_empty() => c[0].clone(),
            _ => break,
        };
    }
    let find = |t: &str| rows.iter().find(|(n, _)| n == t).map(|(_, r)| r.clone());
    assert!(matches!(find("Filter"), Some(Value::Int(2))), "{rows:?}");
    assert!(matches!(find("VarLengthExpand(All)"), Some(Value::Int(4))), "{rows:?}");
}

fn batch_param(n: i64) -> Value {
    let rows = (1..=n)
        .map(|i| {
            let mut m = PropertyMap::new();
            m.insert("id".into(), Value::Int(i));
            m.insert("name".into(), Value::str(&format!("n{i}")));
            m.insert("gone".into(), Value::Null);
            Value::Map(m)
        })
        .collect();
    Value::List(rows)
}

#[test]
fn batched_create_moves_the_list_and_keeps_its_values() {
    let mut g = MemGraph::new();
    let b = batch_param(3);
    // The batch shape: the UNWIND takes `$batch` out of the parameters.
    let (_, _, stats) = run_q(
        &mut g,
        "UNWIND $batch AS r CREATE (:I {id: r.id, name: r.name, gone: r.gone})",
        &[("batch", b.clone())],
    )
    .unwrap();
    assert_eq!(stats.nodes_created, 3);
    assert_eq!(stats.properties_set, 6, "null values are not set");
    check(
        &mut g,
        "MATCH (n:I) RETURN n.id, n.name, keys(n) ORDER BY n.id",
        &[],
        &["1 | 'n1' | ['id', 'name']", "2 | 'n2' | ['id', 'name']", "3 | 'n3' | ['id', 'name']"],
    );
    // The same parameter read again after the UNWIND must still be there.
    let (_, rows, _) = run_q(
        &mut g,
        "UNWIND $batch AS r CREATE (:J {id: r.id}) RETURN size($batch) AS s",
        &[("batch", b.clone())],
    )
    .unwrap();
    assert_eq!(rows, vec!["3", "3", "3"]);
    // An UNWIND that runs once per outer row must see the whole list every time.
    let (_, _, stats) = run_q(
        &mut g,
        "UNWIND [1, 2] AS x CALL { WITH x UNWIND $batch AS r CREATE (:K {id: r.id, x: x}) }",
        &[("batch", b)],
    )
    .unwrap();
    assert_eq!(stats.nodes_created, 6);
    check(&mut g, "MATCH (n:K) RETURN count(*), sum(n.id), sum(n.x)", &[], &["6 | 12 | 9"]);
}

#[test]
fn map_literal_properties_keep_map_semantics() {
    let mut g = MemGraph::new();
    // A repeated key keeps its last value, a null one included.
    exec(&mut g, "CREATE (:D {a: 1, a: 2}), (:E {a: 1, a: null})");
    check(&mut g, "MATCH (n:D) RETURN n.a", &[], &["2"]);
    check(&mut g, "MATCH (n:E) RETURN keys(n)", &[], &["[]"]);
    // Values that cannot be stored are still refused.
    check_err(&mut g, "CREATE (:F {a: {b: 1}})", Status::TypeError, None);
}

/// Filters (plain, fused into expansions, fused into scans) run through `CompiledPred`; each
/// case is checked against the general evaluator (`eval_pred` on the whole filter), results
/// and errors alike.
#[test]
fn compiled_filters_agree_with_the_general_evaluator() {
    let mut g = MemGraph::new();
    exec(
        &mut g,
        "CREATE (r:Root {id: 0})-[:T]->(a:B:C {id: 1, v: true, s: 'x'})-[:T]->(b:B {id: 2, v: false}),
                (a)-[:T]->(c:A {id: 3, v: true}), (c)-[:T]->(d:B {id: 4}), (c)-[:T]->(e:B:C {id: 5, v: true, n: 7})",
    );
    let preds = [
        "b:B",
        "b:B AND b.v",
        "b.v AND b:B",
        "b:B:C AND b.v",
        "b:Missing AND b.v",
        "b.v AND b:Missing",
        "b:B AND b.missing",
        "b.missing",
        "b.s",
        "b:B AND b.n",
        "b.n AND b:Missing",
        "b:B AND (b.v OR b.id > 3)",
        "b:B AND b.id >= 2 AND NOT b.v",
        "b.v AND b.id < 5 AND b:B",
        "b.id >= 2",
        "b.id >= $p AND b:B",
        "b.id <> 2 AND b.id = 5",
        "b.s = 'x'",
        "b.s > 1",
        "b.missing < 3 AND b:B",
        "b.id > 1 > 0",
        // Label tests then property reads of one node: one `Graph::node_probe`.
        "b:B AND b.id = $p",
        "b:B AND b.s > 1",
        "b:B:C AND b.v AND b.n",
        "b:B AND b.v AND b:C",
        "b:B AND b:C AND b.s = 'x'",
        "b:C AND b.n = 7 AND b.v",
        "b:B AND b.missing = 1 AND b.v",
    ];
    let patterns = [
        "MATCH (:Root)-[:T*]->(b) WHERE {p} RETURN b.id ORDER BY b.id",
        "MATCH (:Root)-[:T*1..3]->(b) WHERE {p} RETURN b.id ORDER BY b.id",
        "MATCH (:Root)-[*]->(b) WHERE {p} RETURN DISTINCT b.id ORDER BY b.id",
        "MATCH (:Root)-[:T]->()-[:T]->(b) WHERE {p} RETURN b.id ORDER BY b.id",
        "MATCH (b) WHERE {p} RETURN b.id ORDER BY b.id",
        "MATCH (b) WHERE {p} RETURN count(*)",
        "MATCH (b:B) WHERE {p} RETURN count(b.id)",
        "MATCH (:Root)-[:T*]->(b) WITH b, 1 AS one WHERE {p} RETURN b.id ORDER BY b.id",
    ];
    let params = [("p", Value::Int(3))];
    for p in preds {
        for pattern in patterns {
            let q = pattern.replace("{p}", p);
            let compiled = run_q(&mut g, &q, &params);
            crate::eval::GENERAL_PREDICATES.with(|f| f.set(true));
            let general = run_q(&mut g, &q, &params);
            crate::eval::GENERAL_PREDICATES.with(|f| f.set(false));
            match (compiled, general) {
                (Ok((_, x, _)), Ok((_, y, _))) => assert_eq!(x, y, "{q}"),
                (Err(x), Err(y)) => assert_eq!((x.status, x.message), (y.status, y.message), "{q}"),
                (x, y) => panic!("{q}: compiled {x:?} vs general {y:?}"),
            }
        }
    }
    // A non-boolean property inside a conjunction is a type error; alone it only fails.
    check_err(
        &mut g,
        "MATCH (:Root)-[:T*]->(b) WHERE b:B AND b.n RETURN b.id",
        Status::TypeError,
        None,
    );
    check(&mut g, "MATCH (:Root)-[:T*]->(b) WHERE b.n RETURN b.id", &[], &[]);
    check_any(&mut g, "MATCH (:Root)-[:T*]->(b) WHERE b:B AND b.v RETURN b.id", &[], &["1", "5"]);
    check_any(&mut g, "MATCH (b) WHERE b.id >= 4 RETURN b.id", &[], &["4", "5"]);
}

/// `DISTINCT` on one key (its own key set) and on several agree with Neo4j 5.26: 1 and 1.0 are
/// one value, null is one value; a column read twice is moved out of the row once and copied
/// once; seeks and expansions reuse their rows across input rows.
#[test]
fn distinct_keys_repeated_columns_and_reused_rows() {
    let mut g = MemGraph::new();
    check(
        &mut g,
        "UNWIND [1, 1.0, null, null, 2, 'a', 'a', [1], [1.0], 2.5] AS x RETURN DISTINCT x",
        &[],
        &["1", "null", "2", "'a'", "[1]", "2.5"],
    );
    check(
        &mut g,
        "UNWIND [1, 1.0, null, null, 1] AS x UNWIND [null, 'a', null] AS y RETURN DISTINCT x, y",
        &[],
        &["1 | null", "1 | 'a'", "null | null", "null | 'a'"],
    );
    check(&mut g, "UNWIND [1, 2] AS x RETURN x AS a, x AS b, x", &[], &["1 | 1 | 1", "2 | 2 | 2"]);
    exec(&mut g, "UNWIND range(1, 6) AS i CREATE (:U {id: i % 3})");
    g.add_index("U", "id");
    exec(&mut g, "MATCH (a:U), (b:U) WHERE a.id = (b.id + 1) % 3 CREATE (a)-[:R]->(b)");
    // Each id has two nodes, each with two relationships out: the seek's rows and the
    // expansion's rows come from the same spare rows, and none may leak into another.
    check_any(
        &mut g,
        "UNWIND [0, 2, 5, 1] AS k MATCH (a:U {id: k})-[:R]->(b) RETURN k, b.id, count(*)",
        &[],
        &["0 | 2 | 4", "2 | 1 | 4", "1 | 0 | 4"],
    );
    check(
        &mut g,
        "UNWIND [0, 2, 5, 1] AS k MATCH (a:U {id: k})-[:R]->(b)-[:R]->(c) \
         WHERE c.id <> k RETURN DISTINCT k, c.id",
        &[],
        &["0 | 1", "2 | 0", "1 | 2"],
    );
}
