//! Data-driven parser tests: many queries that must parse (with AST shape checks on a subset),
//! error cases with expected positions, and robustness against adversarial input.

use crate::ast::*;
use crate::{line_col, parse};
use arbor_model::Status;

fn query(text: &str) -> Query {
    match parse(text) {
        Ok(Statement::Query(q)) => q,
        other => panic!("expected a query for {text:?}, got {other:?}"),
    }
}

pub(crate) fn clauses(text: &str) -> Vec<ClauseKind> {
    query(text).first.clauses.into_iter().map(|c| c.kind).collect()
}

/// The single RETURN item's expression of `RETURN <expr>`.
pub(crate) fn ret_expr(expr_text: &str) -> Expr {
    let text = format!("RETURN {expr_text}");
    match clauses(&text).pop() {
        Some(ClauseKind::Return(p)) => p.items.into_iter().next().expect("one item").expr,
        other => panic!("expected RETURN, got {other:?}"),
    }
}

pub(crate) fn err(text: &str) -> arbor_model::Error {
    match parse(text) {
        Ok(s) => panic!("expected a syntax error for {text:?}, got {s:?}"),
        Err(e) => e,
    }
}

const MGBENCH: &[&str] = &[
    "MATCH (n:User) RETURN n.age, COUNT(*)",
    "MATCH (n) RETURN count(n), count(n.age)",
    "MATCH (s:User {id: $id})-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id",
    "MATCH (s:User {id: $id})-[*1..2]->(n:User) RETURN DISTINCT n.id, n",
    "MATCH (n:User {id: $id})-[e1]->(m)-[e2]->(n) RETURN e1, m, e2",
    "MATCH (n1:User {id: $id})-[e1]->(n2)-[e2]->(n3)-[e3]->(n4)<-[e4]-(n5) RETURN n5 LIMIT 1",
    "MATCH (n:User {id: $from}), (m:User {id: $to}) WITH n, m CREATE (n)-[e:Temp]->(m) RETURN e",
    "CREATE (n:UserTemp {id : $id}) RETURN n",
    "MATCH (n:User {id: $id}) SET n.property = -1",
    "MATCH (n:User {id: $id}) RETURN n",
    "MATCH (n:User {id: $id})-->(m) RETURN m.id",
    "MATCH (n:User) WHERE n.age >= 18 RETURN n.age",
    "MATCH (n:User {id: $id}) DETACH DELETE n",
    "MATCH (n:User) RETURN min(n.age), max(n.age), avg(n.age)",
    "MATCH (n:User) WHERE n.age >= 18 RETURN count(n)",
    "MATCH (s:User {id: $from}), (t:User {id: $to}) MATCH p = shortestPath((s)-[*]->(t)) RETURN p",
    "MATCH (n:User {id: $id})-[e]->(m) RETURN e",
    "UNWIND $batch AS row CREATE (n:User {id: row.id, age: row.age})",
    "MATCH (n:User {id: $id}) SET n += $props RETURN n",
    "MATCH (a:User {id: $from}), (b:User {id: $to}) CREATE (a)-[:Friend]->(b)",
    "MATCH (n:User {id: $id})-[*1..3]->(m) RETURN DISTINCT m.id",
    "MATCH (n:User) WITH n ORDER BY n.age DESC LIMIT 10 RETURN n.id",
    "MATCH (n:User {id: $id}) REMOVE n.age RETURN n",
];

#[test]
fn mgbench_queries_parse() {
    for q in MGBENCH {
        if let Err(e) = parse(q) {
            panic!("{q}: {e}");
        }
    }
}

#[test]
fn mgbench_shapes() {
    let cs = clauses(MGBENCH[0]);
    let ClauseKind::Match { pattern, .. } = &cs[0] else { panic!() };
    assert_eq!(&*pattern[0].element.start.labels[0].name, "User");
    let ClauseKind::Return(p) = &cs[1] else { panic!() };
    assert_eq!(p.items[0].text, "n.age");
    assert_eq!(p.items[1].text, "COUNT(*)");
    assert_eq!(p.items[1].expr.kind, ExprKind::CountStar);

    let cs = clauses(MGBENCH[3]);
    let ClauseKind::Match { pattern, .. } = &cs[0] else { panic!() };
    let (rel, _) = &pattern[0].element.chain[0];
    assert_eq!(rel.length, Some((Some(1), Some(2))));
    assert_eq!(rel.direction, Direction::Outgoing);
    let ClauseKind::Return(p) = &cs[1] else { panic!() };
    assert!(p.distinct);

    let cs = clauses(MGBENCH[5]);
    let ClauseKind::Match { pattern, .. } = &cs[0] else { panic!() };
    assert_eq!(pattern[0].element.chain.len(), 4);
    assert_eq!(pattern[0].element.chain[3].0.direction, Direction::Incoming);
    let ClauseKind::Return(p) = &cs[1] else { panic!() };
    assert!(matches!(p.limit.as_ref().map(|e| &e.kind), Some(ExprKind::Literal(Literal::Int(1)))));

    let cs = clauses(MGBENCH[8]);
    let ClauseKind::Set { items } = &cs[1] else { panic!() };
    let SetItem::Property { key, value, .. } = &items[0] else { panic!() };
    assert_eq!(&*key.name, "property");
    assert_eq!(value.kind, ExprKind::Literal(Literal::Int(-1)));
}

/// Runs `f` on a thread with a deliberately small stack, so that the depth limit is shown to
/// protect even threads smaller than the 2 MiB default.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("parser overflowed or panicked");
}

#[test]
fn deep_nesting_is_a_clean_error() {
    on_small_stack(|| {
        for open in ["(", "[", "{a:", "-", "NOT ", "[x IN ", "CALL { ", "EXISTS { MATCH (n) WHERE "]
        {
            let text = format!("RETURN {}", open.repeat(100_000));
            let e = err(&text);
            assert_eq!(e.status, Status::SyntaxError, "{open}");
            let text = format!("{} 1", open.repeat(100_000));
            assert_eq!(err(&text).status, Status::SyntaxError, "{open}");
        }
        let e = err(&"(".repeat(100_000));
        assert_eq!(e.status, Status::SyntaxError);
        let e = err(&"[".repeat(100_000));
        assert_eq!(e.status, Status::SyntaxError);
        // Closed nesting just past the limit, and long left-nested chains.
        let text = format!("RETURN {}1{}", "(".repeat(600), ")".repeat(600));
        assert!(err(&text).message.contains("too deeply nested"));
        let text = format!("RETURN 1{}", " + 1".repeat(100_000));
        assert!(err(&text).message.contains("too deeply nested"));
        let text = format!("RETURN x{}", "[0]".repeat(100_000));
        assert!(err(&text).message.contains("too deeply nested"));
        let text = format!("RETURN x{}", ".a".repeat(100_000));
        assert!(err(&text).message.contains("too deeply nested"));
    });
}

#[test]
fn nesting_within_the_limit_parses() {
    on_small_stack(|| {
        for (open, close) in [("(", ")"), ("[", "]"), ("{a: ", "}"), ("-", "")] {
            let text = format!("RETURN {}1{}", open.repeat(200), close.repeat(200));
            if let Err(e) = parse(&text) {
                panic!("{open}: {e}");
            }
        }
        let text = format!("RETURN 1{}", " + 1".repeat(500));
        assert!(parse(&text).is_ok());
    });
}

/// A compact S-expression rendering of an expression, so that expected trees fit in a table.
pub(crate) fn sx(e: &Expr) -> String {
    let list = |v: &[Expr]| v.iter().map(sx).collect::<Vec<_>>().join(" ");
    let opt = |o: &Option<Box<Expr>>| o.as_ref().map_or("_".to_string(), |e| sx(e));
    match &e.kind {
        ExprKind::Literal(Literal::Null) => "null".into(),
        ExprKind::Literal(Literal::Bool(b)) => b.to_string(),
        ExprKind::Literal(Literal::Int(i)) => i.to_string(),
        ExprKind::Literal(Literal::Float(f)) => format!("{f:?}"),
        ExprKind::Literal(Literal::String(s)) => format!("'{s}'"),
        ExprKind::Parameter(p) => format!("${p}"),
        ExprKind::Variable(v) => v.to_string(),
        ExprKind::Property(e, k) => format!("(. {} {})", sx(e), k.name),
        ExprKind::List(v) => format!("[{}]", list(v)),
        ExprKind::Map(m) => {
            let items: Vec<_> = m.iter().map(|(k, v)| format!("{}: {}", k.name, sx(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
        ExprKind::Unary(op, e) => {
            let op = match op {
                UnaryOp::Not => "not",
                UnaryOp::Neg => "neg",
                UnaryOp::Plus => "pos",
            };
            format!("({op} {})", sx(e))
        }
        ExprKind::Binary(op, a, b) => {
            let op = match op {
                BinaryOp::Or => "or",
                BinaryOp::Xor => "xor",
                BinaryOp::And => "and",
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
                BinaryOp::Mod => "%",
                BinaryOp::Pow => "^",
                BinaryOp::In => "in",
                BinaryOp::StartsWith => "starts",
                BinaryOp::EndsWith => "ends",
                BinaryOp::Contains => "contains",
                BinaryOp::RegexMatch => "=~",
            };
            format!("({op} {} {})", sx(a), sx(b))
        }
        ExprKind::Compare(first, rest) => {
            let mut s = format!("(cmp {}", sx(first));
            for (op, e) in rest {
                let op = match op {
                    CompareOp::Eq => "=",
                    CompareOp::Ne => "<>",
                    CompareOp::Lt => "<",
                    CompareOp::Le => "<=",
                    CompareOp::Gt => ">",
                    CompareOp::Ge => ">=",
                };
                s += &format!(" {op} {}", sx(e));
            }
            s + ")"
        }
        ExprKind::IsNull { expr, negated } => {
            format!("({} {})", if *negated { "notnull" } else { "isnull" }, sx(expr))
        }
        ExprKind::HasLabels(e, ls) => {
            let ls: Vec<_> = ls.iter().map(|l| l.name.to_string()).collect();
            format!("(: {} {})", sx(e), ls.join(" "))
        }
        ExprKind::HasLabelExpr(e, l) => format!("(:: {} {})", sx(e), crate::label_tests::lx(l)),
        ExprKind::Index(e, i) => format!("(idx {} {})", sx(e), sx(i)),
        ExprKind::Slice { expr, from, to } => {
            format!("(slice {} {} {})", sx(expr), opt(from), opt(to))
        }
        ExprKind::Function { name, distinct, args } => {
            let d = if *distinct { " distinct" } else { "" };
            let sep = if args.is_empty() { "" } else { " " };
            format!("(fn {}{d}{sep}{})", name.dotted(), list(args))
        }
        ExprKind::CountStar => "count(*)".into(),
        ExprKind::Case { operand, whens, else_ } => {
            let mut s = format!("(case {}", opt(operand));
            for (w, t) in whens {
                s += &format!(" (when {} {})", sx(w), sx(t));
            }
            s + &format!(" {})", opt(else_))
        }
        ExprKind::ListComprehension { variable, list, filter, map } => {
            format!("(listcomp {} {} {} {})", variable.name, sx(list), opt(filter), opt(map))
        }
        ExprKind::PatternComprehension { variable, pattern, filter, map } => format!(
            "(patcomp {} {} {} {})",
            variable.as_ref().map_or("_".to_string(), |v| v.name.to_string()),
            pattern.chain.len(),
            opt(filter),
            sx(map)
        ),
        ExprKind::Quantified { quantifier, variable, list, filter } => {
            let q = format!("{quantifier:?}").to_lowercase();
            format!("({q} {} {} {})", variable.name, sx(list), sx(filter))
        }
        ExprKind::Reduce { accumulator, init, variable, list, expr } => format!(
            "(reduce {} {} {} {} {})",
            accumulator.name,
            sx(init),
            variable.name,
            sx(list),
            sx(expr)
        ),
        ExprKind::PatternPredicate(p) => format!("(pattern {})", p.chain.len()),
        ExprKind::Exists(q) => format!("(exists {})", q.first.clauses.len()),
        ExprKind::CountSubquery(q) => format!("(countq {})", q.first.clauses.len()),
        ExprKind::CollectSubquery(q) => format!("(collectq {})", q.first.clauses.len()),
        ExprKind::MapProjection { variable, items } => {
            let items: Vec<_> = items
                .iter()
                .map(|i| match i {
                    MapProjectionItem::Property(k) => format!(".{}", k.name),
                    MapProjectionItem::Literal(k, e) => format!("{}: {}", k.name, sx(e)),
                    MapProjectionItem::Variable(v) => v.name.to_string(),
                    MapProjectionItem::AllProperties => ".*".into(),
                })
                .collect();
            format!("(mapproj {} {})", variable.name, items.join(", "))
        }
    }
}

#[test]
fn expressions() {
    let cases: &[(&str, &str)] = &[
        // literals
        ("1", "1"),
        ("-1", "-1"),
        ("0x1F", "31"),
        ("0o17", "15"),
        ("017", "15"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("9223372036854775807", "9223372036854775807"),
        ("-0x8000000000000000", "-9223372036854775808"),
        ("1.5", "1.5"),
        ("1e5", "100000.0"),
        ("1E-2", "0.01"),
        (".5", "0.5"),
        ("3.0e2", "300.0"),
        ("'a\\nb'", "'a\nb'"),
        ("\"it's\"", "'it's'"),
        ("'\\u00e9\\U0001F600'", "'é😀'"),
        ("'\\'\\\"\\\\\\t'", "''\"\\\t'"),
        ("TRUE", "true"),
        ("False", "false"),
        ("NULL", "null"),
        ("$p", "$p"),
        ("$0", "$0"),
        ("$`a b`", "$a b"),
        ("[]", "[]"),
        ("[1, 'a', [2]]", "[1 'a' [2]]"),
        ("{}", "{}"),
        ("{a: 1, `b c`: 2, order: 3}", "{a: 1, b c: 2, order: 3}"),
        // precedence
        ("1 + 2 * 3", "(+ 1 (* 2 3))"),
        ("(1 + 2) * 3", "(* (+ 1 2) 3)"),
        ("1 - 2 - 3", "(- (- 1 2) 3)"),
        ("2 ^ 3 ^ 2", "(^ (^ 2 3) 2)"),
        ("-2 ^ 2", "(^ -2 2)"),
        ("-x ^ 2", "(^ (neg x) 2)"),
        ("- - x", "(neg (neg x))"),
        ("+x", "(pos x)"),
        ("a OR b AND c", "(or a (and b c))"),
        ("a OR b XOR c", "(or a (xor b c))"),
        ("a XOR b AND c", "(xor a (and b c))"),
        ("NOT a AND b", "(and (not a) b)"),
        ("NOT a = b", "(not (cmp a = b))"),
        ("NOT NOT a", "(not (not a))"),
        ("a = b", "(cmp a = b)"),
        ("a < b <= c", "(cmp a < b <= c)"),
        ("1 < 2 = true", "(cmp 1 < 2 = true)"),
        ("a <> b", "(cmp a <> b)"),
        ("a != b", "(cmp a <> b)"),
        ("a + 1 IN [1]", "(in (+ a 1) [1])"),
        ("a IN b = c", "(cmp (in a b) = c)"),
        ("a STARTS WITH 'x' AND b ENDS WITH 'y'", "(and (starts a 'x') (ends b 'y'))"),
        ("a CONTAINS b OR a =~ 'r.*'", "(or (contains a b) (=~ a 'r.*'))"),
        ("a IS NULL", "(isnull a)"),
        ("a.b IS NOT NULL AND c", "(and (notnull (. a b)) c)"),
        ("a + b IS NULL", "(isnull (+ a b))"),
        ("NOT a IS NULL", "(not (isnull a))"),
        ("x % 2 * 3 / 4", "(/ (* (% x 2) 3) 4)"),
        ("a<-1", "(cmp a < -1)"),
        ("a--1", "(- a -1)"),
        // postfix
        ("n.name", "(. n name)"),
        ("n.count", "(. n count)"),
        ("n.`a b`.c", "(. (. n a b) c)"),
        ("list[0]", "(idx list 0)"),
        ("list[1..2]", "(slice list 1 2)"),
        ("list[..2]", "(slice list _ 2)"),
        ("list[1..]", "(slice list 1 _)"),
        ("list[-1]", "(idx list -1)"),
        ("n:A", "(: n A)"),
        ("n:A:B", "(: n A B)"),
        ("n:A AND m:B", "(and (: n A) (: m B))"),
        ("(n).x", "(. n x)"),
        ("[1,2][0].x", "(. (idx [1 2] 0) x)"),
        ("{a: 1}.a", "(. {a: 1} a)"),
        // functions
        ("count(*)", "count(*)"),
        ("count( * )", "count(*)"),
        ("COUNT(DISTINCT n)", "(fn COUNT distinct n)"),
        ("toUpper('a')", "(fn toUpper 'a')"),
        ("db.labels()", "(fn db.labels)"),
        ("apoc.coll.sum([1])", "(fn apoc.coll.sum [1])"),
        ("exists(n.p)", "(fn exists (. n p))"),
        ("`my fn`(1)", "(fn my fn 1)"),
        // case
        ("CASE WHEN a THEN 1 ELSE 2 END", "(case _ (when a 1) 2)"),
        ("CASE x WHEN 1 THEN 'a' WHEN 2 THEN 'b' END", "(case x (when 1 'a') (when 2 'b') _)"),
        // comprehensions and friends
        ("[x IN list WHERE x > 1 | x * 2]", "(listcomp x list (cmp x > 1) (* x 2))"),
        ("[x IN list]", "(listcomp x list _ _)"),
        ("[x IN range(1,3) | x]", "(listcomp x (fn range 1 3) _ x)"),
        ("[(a)-->(b) | b.name]", "(patcomp _ 1 _ (. b name))"),
        ("[p = (a)-[:R]->()<--(c) WHERE a.x | p]", "(patcomp p 2 (. a x) p)"),
        ("[(a)]", "[a]"),
        ("all(x IN l WHERE x > 0)", "(all x l (cmp x > 0))"),
        ("none(x IN l WHERE x)", "(none x l x)"),
        ("single(x IN l WHERE x)", "(single x l x)"),
        ("ANY(x IN l WHERE x)", "(any x l x)"),
        ("reduce(s = 0, x IN l | s + x)", "(reduce s 0 x l (+ s x))"),
        ("all(1, 2)", "(fn all 1 2)"),
        // patterns and subqueries
        ("(a)-->(b)", "(pattern 1)"),
        ("(a)<-[:R]-(b)--(c)", "(pattern 2)"),
        ("(a)-[*]-()", "(pattern 1)"),
        ("NOT (a)-->()", "(not (pattern 1))"),
        ("(a) - (b)", "(- a b)"),
        ("(a)-(-1)", "(- a -1)"),
        ("EXISTS { MATCH (n)-->(m) RETURN m }", "(exists 2)"),
        ("EXISTS { (n)-->(m) WHERE m.x = 1 }", "(exists 1)"),
        ("exists { (n)-->() }", "(exists 1)"),
        ("COUNT { (n)-->() }", "(countq 1)"),
        ("COLLECT { MATCH (n) RETURN n.x }", "(collectq 2)"),
        ("shortestPath((a)-[*]-(b))", "(fn shortestPath (pattern 1))"),
        // map projection
        ("n{.a, b: 1, c, .*}", "(mapproj n .a, b: 1, c, .*)"),
        ("n {}", "(mapproj n )"),
        // keywords as names
        ("order.limit", "(. order limit)"),
        ("`true`", "true"),
        ("n.`true`", "(. n true)"),
    ];
    let mut failures = Vec::new();
    for (text, want) in cases {
        match parse(&format!("RETURN {text}")) {
            Ok(Statement::Query(q)) => {
                let Some(ClauseKind::Return(p)) = q.first.clauses.first().map(|c| &c.kind) else {
                    failures.push(format!("{text}: not a RETURN"));
                    continue;
                };
                let got = if p.items.len() == 1 { sx(&p.items[0].expr) } else { "<many>".into() };
                if got != *want {
                    failures.push(format!("{text}: got {got}, want {want}"));
                }
            }
            Ok(other) => failures.push(format!("{text}: got {other:?}")),
            Err(e) => failures.push(format!("{text}: {e}")),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn queries_that_must_parse() {
    let queries = [
        "MATCH (n) RETURN n;",
        "match (n) return n",
        "MATCH (n) RETURN n // trailing comment",
        "MATCH /* c */ (n) RETURN n",
        "OPTIONAL MATCH (n:A:B {x: 1}) WHERE n.y > 2 RETURN n",
        "MATCH (n:A&B) RETURN n",
        "MATCH (n $props) RETURN n",
        "MATCH p = (a)-[:R|S]->(b) RETURN p",
        "MATCH (a)-[:R|:S]-(b) RETURN a",
        "MATCH (a)<-->(b) RETURN a",
        "MATCH (a)-[r*]->(b), (c)-[*2]-(d), (e)-[*..3]-(f), (g)-[*2..]-(h) RETURN a",
        "MATCH (a WHERE a.x > 1)-[r:T WHERE r.w < 2]->(b) RETURN a",
        "MATCH p = shortestPath((a)-[*]->(b)) RETURN p",
        "MATCH p = allShortestPaths((a)-[*]->(b)) RETURN p",
        "MATCH ((a)-->(b)) RETURN a",
        "WITH DISTINCT a, b AS c ORDER BY a DESC, c ASC SKIP 1 LIMIT 2 WHERE a > 1 RETURN *",
        "WITH * RETURN *",
        "WITH *, 1 AS x RETURN x",
        "UNWIND [1,2,3] AS x RETURN x ORDER BY x DESCENDING",
        "CREATE (a:A {x: 1})-[:R {w: 2}]->(b), (c)",
        "CREATE p = (a)-[:R]->(b) RETURN p",
        "MERGE (n:A {x: 1}) ON CREATE SET n.c = 1 ON MATCH SET n.m = 2, n.k = 3",
        "MERGE (a)-[:R]->(b)",
        "MATCH (n) SET n.x = 1, n = {a: 1}, n += {b: 2}, n:A:B, n :C",
        "MATCH (n) SET (n).x = 1",
        "MATCH (n) SET n.a.b = 1",
        "MATCH (n) REMOVE n.x, n:A:B",
        "MATCH (n) DELETE n",
        "MATCH (n) DETACH DELETE n, m",
        "MATCH (n) NODETACH DELETE n",
        "MATCH p = (n)-->() FOREACH (x IN nodes(p) | SET x.v = 1 CREATE (:Log))",
        "FOREACH (x IN [1] | FOREACH (y IN [2] | CREATE ({v: x + y})))",
        "CALL db.labels()",
        "CALL db.labels",
        "CALL db.labels() YIELD label WHERE label <> 'A' RETURN label",
        "CALL db.labels() YIELD *",
        "CALL test.my.proc('a', 1) YIELD out AS o RETURN o",
        "CALL { MATCH (n) RETURN n } RETURN n",
        "UNWIND [1] AS x CALL { WITH x CREATE (:A {x: x}) } IN TRANSACTIONS OF 100 ROWS",
        "CALL { CREATE (:A) } IN TRANSACTIONS",
        "CALL { RETURN 1 AS x UNION ALL RETURN 2 AS x } RETURN x",
        "RETURN 1 AS x UNION RETURN 2 AS x",
        "RETURN 1 AS x UNION ALL RETURN 2 AS x UNION ALL RETURN 3 AS x",
        "LOAD CSV FROM 'file:///x.csv' AS row RETURN row",
        "LOAD CSV WITH HEADERS FROM $url AS row FIELDTERMINATOR ';' CREATE (:R {v: row.v})",
        "MATCH (n) WHERE (n)-->() AND NOT (n)<-[:R]-(:X {a: 1}) RETURN n",
        "MATCH (n) WHERE EXISTS { MATCH (n)-->(m) WHERE m.x = 1 } RETURN n",
        "MATCH (n) RETURN n {.name, .*, friends: [(n)-->(f) | f.name]} AS m",
        "RETURN [x IN range(0, 10) WHERE x % 2 = 0 | x ^ 2] AS squares",
        "RETURN CASE WHEN true THEN 1 END AS x",
        "EXPLAIN MATCH (n) RETURN n",
        "PROFILE MATCH (n) RETURN n",
        "MATCH (`weird name`:`Label X`) RETURN `weird name`.`a prop`",
        "MATCH (n) RETURN n.order, n.limit, n.match, n.return",
        "MATCH (order:Order) RETURN order",
        "RETURN {order: 1, limit: 2, match: 3, where: 4}",
        "MATCH (n) WITH n, count(*) AS c WHERE c > 1 RETURN n",
        "RETURN 1.0e10, 1e-10, .5e3, 0.0",
        "MATCH (a), (b) MERGE (a)-[r:KNOWS]-(b) RETURN r",
        "MATCH (n) RETURN n SKIP $s LIMIT $l",
        "MATCH (n) RETURN n OFFSET 1",
        "RETURN 'a' + \"b\" AS s",
        "MATCH (n)\nWHERE n.x = 1\nRETURN n\n;\n",
        "UNWIND $rows AS row MERGE (n:U {id: row.id}) SET n += row.props",
        "MATCH (n) RETURN count{ (n)-->() } AS c",
        "MATCH (n) RETURN collect { MATCH (n)-->(m) RETURN m.x } AS xs",
        "MATCH (a)-[:R*1..3 {w: 1}]->(b) RETURN b",
        "MATCH (a)-[r:R*]->(b) RETURN r",
    ];
    let mut failures = Vec::new();
    for q in queries {
        if let Err(e) = parse(q) {
            failures.push(format!("{q}\n    {e}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn clause_shapes() {
    let cs = clauses("MATCH p = (a:A {x: 1})<-[r:R|S*1..3]-(b) WHERE a.y RETURN p");
    let ClauseKind::Match { optional: false, pattern, where_: Some(_) } = &cs[0] else {
        panic!("{cs:?}")
    };
    let part = &pattern[0];
    assert_eq!(part.variable.as_ref().map(|v| &*v.name), Some("p"));
    assert_eq!(part.selector, PathSelector::All);
    assert!(part.element.start.properties.is_some());
    let (rel, end) = &part.element.chain[0];
    assert_eq!(rel.variable.as_ref().map(|v| &*v.name), Some("r"));
    assert_eq!(rel.types.iter().map(|t| &*t.name).collect::<Vec<_>>(), ["R", "S"]);
    assert_eq!(rel.length, Some((Some(1), Some(3))));
    assert_eq!(rel.direction, Direction::Incoming);
    assert_eq!(end.variable.as_ref().map(|v| &*v.name), Some("b"));

    for (text, want) in [
        ("(a)-[*]->(b)", (None, None)),
        ("(a)-[*2]->(b)", (Some(2), Some(2))),
        ("(a)-[*..3]->(b)", (None, Some(3))),
        ("(a)-[*2..]->(b)", (Some(2), None)),
        ("(a)-[*0..1]->(b)", (Some(0), Some(1))),
    ] {
        let cs = clauses(&format!("MATCH {text} RETURN a"));
        let ClauseKind::Match { pattern, .. } = &cs[0] else { panic!() };
        assert_eq!(pattern[0].element.chain[0].0.length, Some(want), "{text}");
    }
    for (text, want) in [
        ("(a)-->(b)", Direction::Outgoing),
        ("(a)<--(b)", Direction::Incoming),
        ("(a)--(b)", Direction::Both),
        ("(a)<-->(b)", Direction::Both),
        ("(a)-[]->(b)", Direction::Outgoing),
        ("(a)<-[]-(b)", Direction::Incoming),
    ] {
        let cs = clauses(&format!("MATCH {text} RETURN a"));
        let ClauseKind::Match { pattern, .. } = &cs[0] else { panic!() };
        assert_eq!(pattern[0].element.chain[0].0.direction, want, "{text}");
        assert_eq!(pattern[0].element.chain[0].0.length, None, "{text}");
    }
}

#[test]
fn clause_shapes_projection_and_updates() {
    let cs = clauses("MATCH (n:A&B&C WHERE n.x = 1) RETURN n");
    let ClauseKind::Match { pattern, .. } = &cs[0] else { panic!() };
    let labels: Vec<_> = pattern[0].element.start.labels.iter().map(|l| &*l.name).collect();
    assert_eq!(labels, ["A", "B", "C"]);
    assert!(pattern[0].element.start.where_.is_some());

    let cs =
        clauses("WITH DISTINCT a, b + 1 AS c ORDER BY a DESC, c SKIP 1 LIMIT 2 WHERE a RETURN *");
    let ClauseKind::With(p) = &cs[0] else { panic!() };
    assert!(p.distinct && !p.star);
    assert_eq!(p.items[1].text, "b + 1");
    assert_eq!(p.items[1].alias.as_ref().map(|a| &*a.name), Some("c"));
    assert!(p.order_by[0].descending && !p.order_by[1].descending);
    assert!(p.skip.is_some() && p.limit.is_some() && p.where_.is_some());
    let ClauseKind::Return(p) = &cs[1] else { panic!() };
    assert!(p.star && p.items.is_empty());

    let cs = clauses("RETURN count( * ), n.name, (1 + 2) , [ 1 , 2 ]  AS l");
    let ClauseKind::Return(p) = &cs[0] else { panic!() };
    let texts: Vec<_> = p.items.iter().map(|i| i.text.as_str()).collect();
    assert_eq!(texts, ["count( * )", "n.name", "(1 + 2)", "[ 1 , 2 ]"]);

    let cs = clauses("MERGE (n:A) ON CREATE SET n.c = 1 ON MATCH SET n.m = 2, n += $p");
    let ClauseKind::Merge { actions, .. } = &cs[0] else { panic!() };
    assert!(matches!(&actions[0], MergeAction::OnCreate(v) if v.len() == 1));
    assert!(matches!(&actions[1], MergeAction::OnMatch(v) if v.len() == 2));

    let cs = clauses("MATCH (n) SET n.x = 1, n = {a: 1}, n += {b: 2}, n:A:B");
    let ClauseKind::Set { items } = &cs[1] else { panic!() };
    assert!(matches!(&items[0], SetItem::Property { key, .. } if &*key.name == "x"));
    assert!(matches!(&items[1], SetItem::Replace { variable, .. } if &*variable.name == "n"));
    assert!(matches!(&items[2], SetItem::Merge { .. }));
    assert!(matches!(&items[3], SetItem::Labels { labels, .. } if labels.len() == 2));

    let cs = clauses("MATCH (n) REMOVE n.x, n:A");
    let ClauseKind::Remove { items } = &cs[1] else { panic!() };
    assert!(matches!(&items[0], RemoveItem::Property { key, .. } if &*key.name == "x"));
    assert!(matches!(&items[1], RemoveItem::Labels { labels, .. } if labels.len() == 1));

    let cs = clauses("MATCH (n) DETACH DELETE n, m");
    assert!(matches!(&cs[1], ClauseKind::Delete { detach: true, exprs } if exprs.len() == 2));

    let cs = clauses("FOREACH (x IN [1] | CREATE (:A) SET a.x = 1)");
    assert!(matches!(&cs[0], ClauseKind::Foreach { clauses, .. } if clauses.len() == 2));

    let cs = clauses("CALL db.labels");
    assert!(matches!(&cs[0], ClauseKind::CallProcedure { args: None, yield_: None, .. }));
    let cs = clauses("CALL a.b.c(1, 2) YIELD x AS y, z WHERE y > 1 RETURN y");
    let ClauseKind::CallProcedure { name, args: Some(args), yield_: Some(y), optional: false } =
        &cs[0]
    else {
        panic!()
    };
    assert_eq!(name.dotted(), "a.b.c");
    assert_eq!(args.len(), 2);
    assert_eq!(y.items.len(), 2);
    assert_eq!(y.items[0].1.as_ref().map(|a| &*a.name), Some("y"));
    assert!(y.where_.is_some() && !y.star);

    let cs = clauses("CALL { CREATE (:A) } IN TRANSACTIONS OF 10 ROWS");
    let ClauseKind::CallSubquery { in_transactions: Some(t), .. } = &cs[0] else { panic!() };
    assert!(t.batch_rows.is_some());

    let cs = clauses("WITH 1 AS a, 2 AS b CALL (a, b) { RETURN a + b AS c } RETURN c");
    let ClauseKind::CallSubquery { scope: Some(CallScope::Vars(vs)), optional: false, .. } = &cs[1]
    else {
        panic!("{:?}", cs[1])
    };
    assert_eq!(vs.iter().map(|v| &*v.name).collect::<Vec<_>>(), ["a", "b"]);
    let cs = clauses("OPTIONAL CALL (*) { RETURN 1 AS c } IN TRANSACTIONS RETURN c");
    let ClauseKind::CallSubquery {
        scope: Some(CallScope::All),
        optional: true,
        in_transactions: Some(_),
        ..
    } = &cs[0]
    else {
        panic!("{:?}", cs[0])
    };
    let cs = clauses(
        "CALL () { CREATE () } IN 3 CONCURRENT TRANSACTIONS OF 2 ROWS ON ERROR CONTINUE \
         REPORT STATUS AS s RETURN s",
    );
    let ClauseKind::CallSubquery { in_transactions: Some(t), .. } = &cs[0] else { panic!() };
    assert!(matches!(t.concurrency, Some(Some(_))) && t.batch_rows.is_some());
    assert_eq!(t.on_error, Some(OnError::Continue));
    assert_eq!(t.report_status.as_ref().map(|s| &*s.name), Some("s"));
    let cs = clauses("CALL () { CREATE () } IN CONCURRENT TRANSACTIONS");
    let ClauseKind::CallSubquery { in_transactions: Some(t), .. } = &cs[0] else { panic!() };
    assert!(matches!(t.concurrency, Some(None)) && t.on_error.is_none());
    let cs = clauses("CALL () { RETURN 1 AS c } RETURN c");
    assert!(matches!(
        &cs[0],
        ClauseKind::CallSubquery { scope: Some(CallScope::Vars(vs)), .. } if vs.is_empty()
    ));
    let cs = clauses("CALL { RETURN 1 AS c } RETURN c");
    assert!(matches!(&cs[0], ClauseKind::CallSubquery { scope: None, optional: false, .. }));
    let err = parse("WITH 1 AS x CALL (x + 1) { RETURN 1 AS c } RETURN c").unwrap_err();
    assert!(err.message.contains("Invalid input '+': expected ')' or ','"), "{}", err.message);

    let cs = clauses("LOAD CSV WITH HEADERS FROM 'f' AS row FIELDTERMINATOR '\\t' RETURN row");
    let ClauseKind::LoadCsv { with_headers: true, field_terminator: Some(t), .. } = &cs[0] else {
        panic!()
    };
    assert_eq!(t, "\t");

    let q = query("RETURN 1 AS x UNION ALL RETURN 2 AS x UNION ALL RETURN 3 AS x");
    assert_eq!(q.unions.len(), 2);
    assert!(q.unions[0].0);

    // The bare-pattern EXISTS form becomes a query with one MATCH and no RETURN.
    let e = ret_expr("EXISTS { (n)-->(m) WHERE m.x = 1 }");
    let ExprKind::Exists(q) = e.kind else { panic!() };
    assert_eq!(q.first.clauses.len(), 1);
    assert!(matches!(
        &q.first.clauses[0].kind,
        ClauseKind::Match { optional: false, where_: Some(_), .. }
    ));

    let Ok(Statement::Explain(inner)) = parse("EXPLAIN MATCH (n) RETURN n") else { panic!() };
    assert!(matches!(*inner, Statement::Query(_)));
    let Ok(Statement::Profile(_)) = parse("profile RETURN 1") else { panic!() };
}

fn schema(text: &str) -> SchemaCommand {
    match parse(text) {
        Ok(Statement::Schema(s)) => s,
        other => panic!("expected a schema command for {text:?}, got {other:?}"),
    }
}

fn show(text: &str) -> ShowCommand {
    match parse(text) {
        Ok(Statement::Show(s)) => s,
        other => panic!("expected a SHOW command for {text:?}, got {other:?}"),
    }
}

fn names(v: &[Ident]) -> Vec<&str> {
    v.iter().map(|i| &*i.name).collect()
}

#[test]
fn schema_commands() {
    let SchemaCommand::CreateIndex { name, if_not_exists, kind, target, properties, .. } =
        schema("CREATE INDEX idx IF NOT EXISTS FOR (n:Person) ON (n.name, n.age)")
    else {
        panic!()
    };
    assert_eq!(name.map(|n| n.name.to_string()).as_deref(), Some("idx"));
    assert!(if_not_exists);
    assert_eq!(kind, IndexKind::Range);
    assert!(matches!(target, SchemaTarget::Node { label, .. } if &*label.name == "Person"));
    assert_eq!(names(&properties), ["name", "age"]);

    for (text, want) in [
        ("CREATE RANGE INDEX FOR (n:L) ON (n.p)", IndexKind::Range),
        ("CREATE TEXT INDEX t FOR (n:L) ON (n.p)", IndexKind::Text),
        ("CREATE POINT INDEX FOR (n:L) ON (n.p) OPTIONS {}", IndexKind::Point),
        ("CREATE LOOKUP INDEX FOR (n) ON EACH labels(n)", IndexKind::Lookup),
        ("CREATE LOOKUP INDEX FOR ()-[r]-() ON EACH type(r)", IndexKind::Lookup),
    ] {
        let SchemaCommand::CreateIndex { kind, .. } = schema(text) else { panic!("{text}") };
        assert_eq!(kind, want, "{text}");
    }
    let SchemaCommand::CreateIndex { name: None, target, properties, .. } =
        schema("CREATE INDEX FOR ()-[r:KNOWS]-() ON (r.since)")
    else {
        panic!()
    };
    assert!(
        matches!(target, SchemaTarget::Relationship { rel_type, .. } if &*rel_type.name == "KNOWS")
    );
    assert_eq!(names(&properties), ["since"]);

    let SchemaCommand::CreateIndex { name: None, target, properties, .. } =
        schema("CREATE INDEX ON :Person(name, age)")
    else {
        panic!()
    };
    assert!(matches!(target, SchemaTarget::Node { label, .. } if &*label.name == "Person"));
    assert_eq!(names(&properties), ["name", "age"]);

    let SchemaCommand::DropIndex { name: Some(n), if_exists: true, target: None, .. } =
        schema("DROP INDEX idx IF EXISTS")
    else {
        panic!()
    };
    assert_eq!(&*n.name, "idx");
    let SchemaCommand::DropIndex { name: None, target: Some((_, props)), .. } =
        schema("DROP INDEX ON :L(p)")
    else {
        panic!()
    };
    assert_eq!(names(&props), ["p"]);

    for (text, want, nprops) in [
        ("CREATE CONSTRAINT c FOR (n:L) REQUIRE n.p IS UNIQUE", ConstraintKind::Unique, 1),
        ("CREATE CONSTRAINT FOR (n:L) REQUIRE (n.p, n.q) IS NODE KEY", ConstraintKind::NodeKey, 2),
        (
            "CREATE CONSTRAINT IF NOT EXISTS FOR (n:L) REQUIRE n.p IS NOT NULL",
            ConstraintKind::Exists,
            1,
        ),
        ("CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE r.p IS NOT NULL", ConstraintKind::Exists, 1),
        ("CREATE CONSTRAINT ON (n:L) ASSERT n.p IS UNIQUE", ConstraintKind::Unique, 1),
        ("CREATE CONSTRAINT ON (n:L) ASSERT exists(n.p)", ConstraintKind::Exists, 1),
        ("CREATE CONSTRAINT ON (n:L) ASSERT (n.a, n.b) IS NODE KEY", ConstraintKind::NodeKey, 2),
        ("CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE r.p IS UNIQUE", ConstraintKind::Unique, 1),
        ("CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE r.p IS REL UNIQUE", ConstraintKind::Unique, 1),
        (
            "CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE (r.p, r.q) IS RELATIONSHIP KEY",
            ConstraintKind::NodeKey,
            2,
        ),
        ("CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE r.p IS REL KEY", ConstraintKind::NodeKey, 1),
        ("CREATE CONSTRAINT FOR (n:L) REQUIRE n.p IS NODE UNIQUE", ConstraintKind::Unique, 1),
    ] {
        let SchemaCommand::CreateConstraint { kind, properties, .. } = schema(text) else {
            panic!("{text}")
        };
        assert_eq!(kind, want, "{text}");
        assert_eq!(properties.len(), nprops, "{text}");
    }
    // The entity spelled in the kind must match the pattern (Neo4j: a syntax error at it).
    for (text, msg) in [
        (
            "CREATE CONSTRAINT bad FOR ()-[r:T]-() REQUIRE r.q IS NODE KEY",
            "'IS NODE KEY' does not allow relationship patterns",
        ),
        (
            "CREATE CONSTRAINT bad FOR (n:N) REQUIRE n.q IS REL KEY",
            "'IS RELATIONSHIP KEY' does not allow node patterns",
        ),
        (
            "CREATE CONSTRAINT bad FOR (n:N) REQUIRE n.q IS RELATIONSHIP UNIQUE",
            "'IS RELATIONSHIP UNIQUE' does not allow node patterns",
        ),
    ] {
        let e = parse(text).unwrap_err();
        assert!(e.message.contains(msg), "{text}: {}", e.message);
        assert!(e.message.contains("column 27"), "{text}: {}", e.message);
    }
    let SchemaCommand::DropConstraint { name: Some(_), if_exists: true, definition: None } =
        schema("DROP CONSTRAINT c IF EXISTS")
    else {
        panic!()
    };
    let SchemaCommand::DropConstraint { name: None, definition: Some((_, p, k)), .. } =
        schema("DROP CONSTRAINT ON (n:L) ASSERT n.p IS UNIQUE")
    else {
        panic!()
    };
    assert_eq!((names(&p), k), (vec!["p"], ConstraintKind::Unique));
    // `CREATE index = ...` is still a pattern with a path variable.
    assert!(matches!(parse("CREATE index = (a)-[:R]->(b)"), Ok(Statement::Query(_))));
}

#[test]
fn show_commands() {
    for (text, want) in [
        ("SHOW DATABASES", ShowKind::Databases),
        ("SHOW INDEXES", ShowKind::Indexes),
        ("show index", ShowKind::Indexes),
        ("SHOW ALL INDEXES", ShowKind::Indexes),
        ("SHOW RANGE INDEXES", ShowKind::Indexes),
        ("SHOW CONSTRAINTS", ShowKind::Constraints),
        ("SHOW UNIQUE CONSTRAINTS", ShowKind::Constraints),
        ("SHOW FUNCTIONS", ShowKind::Functions),
        ("SHOW BUILT IN FUNCTIONS EXECUTABLE BY CURRENT USER", ShowKind::Functions),
        ("SHOW PROCEDURES", ShowKind::Procedures),
    ] {
        assert_eq!(show(text).kind, want, "{text}");
    }
    let s = show("SHOW INDEXES WHERE name = 'x'");
    assert!(s.where_.is_some() && s.yield_.is_none());
    let s = show("SHOW INDEXES YIELD name, type AS t WHERE t = 'RANGE' RETURN name");
    let y = s.yield_.expect("yield");
    assert_eq!(y.items.len(), 2);
    assert!(y.where_.is_some());
    assert_eq!(s.then.len(), 1);
    assert!(matches!(s.then[0].kind, ClauseKind::Return(_)));
    let s = show("SHOW PROCEDURES YIELD * ORDER BY name LIMIT 3 WHERE name STARTS WITH 'db'");
    assert!(s.yield_.as_ref().is_some_and(|y| y.star && y.where_.is_none()));
    let ClauseKind::With(p) = &s.then[0].kind else { panic!() };
    assert!(p.star && p.limit.is_some() && p.where_.is_some() && p.order_by.len() == 1);
}

#[test]
fn errors_report_position() {
    let cases: &[(&str, (usize, usize), &str)] = &[
        ("MATCH (n) RETRUN n", (1, 11), "Invalid input 'RETRUN'"),
        ("MATCH (n)\nRETURN n.", (2, 10), "end of input"),
        ("MATCH (n\nRETURN n", (2, 1), "Invalid input 'RETURN'"),
        ("RETURN 1 +", (1, 11), "expected an expression"),
        ("RETURN [1, 2", (1, 13), "expected ']'"),
        ("  RETURN 'abc", (1, 10), "string literal"),
        ("RETURN 9223372036854775808", (1, 8), "integer is too large"),
        ("RETURN -9223372036854775809", (1, 8), "integer is too large"),
        ("RETURN 0x8000000000000000", (1, 8), "integer is too large"),
        ("RETURN 0x", (1, 8), "invalid number literal"),
        ("RETURN 0x1G", (1, 8), "invalid number literal"),
        ("RETURN 12abc", (1, 8), "invalid number literal"),
        ("RETURN 09", (1, 8), "invalid number literal"),
        ("RETURN 1.34E999", (1, 8), "too large"),
        ("RETURN '\\uZZZZ'", (1, 9), "unicode"),
        ("RETURN '\\uD800'", (1, 9), "unicode"),
        ("RETURN '\\U0011FFFF'", (1, 9), "unicode"),
        ("RETURN 1 /* open", (1, 10), "comment"),
        ("RETURN `abc", (1, 8), "quoted"),
        ("RETURN #", (1, 8), "Invalid input '#'"),
        ("RETURN $", (1, 9), "parameter"),
        ("", (1, 1), "end of input"),
        ("RETURN 1 UNION RETURN 2 UNION ALL RETURN 3", (1, 25), "UNION"),
        ("MATCH (n)-[:R*1..2.5]->(m) RETURN n", (1, 18), "Invalid input '2.5'"),
        ("RETURN {, }", (1, 9), "property key"),
        ("RETURN [, ]", (1, 9), "expression"),
        ("RETURN {k: {k: {}} AS literal", (1, 20), "'}'"),
        ("RETURN 1 RETURN 2;;", (1, 19), "Invalid input ';'"),
        ("MATCH (n) SET n + 1", (1, 15), "SET"),
        ("RETURN all(x IN l)", (1, 18), "WHERE"),
        ("RETURN éa +", (1, 12), "expression"),
        ("RETURN é€", (1, 9), "Invalid input '€'"),
    ];
    let mut failures = Vec::new();
    for (text, (line, col), fragment) in cases {
        let e = match parse(text) {
            Ok(s) => {
                failures.push(format!("{text:?}: parsed as {s:?}"));
                continue;
            }
            Err(e) => e,
        };
        let pos = format!("(line {line}, column {col} ");
        if e.status != Status::SyntaxError
            || !e.message.contains(&pos)
            || !e.message.contains(fragment)
        {
            failures.push(format!(
                "{text:?}: got {:?} {}, want {pos} and {fragment:?}",
                e.status, e.message
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn error_details_for_the_tck() {
    assert_eq!(err("RETURN 9223372036854775808").detail, Some("IntegerOverflow"));
    assert_eq!(err("RETURN 0x1A2b3j4D5E6f7").detail, Some("InvalidNumberLiteral"));
    assert_eq!(err("RETURN 1.34E999").detail, Some("FloatingPointOverflow"));
    assert_eq!(err("RETURN '\\u12'").detail, Some("InvalidUnicodeLiteral"));
    assert_eq!(err("RETURN [1,").detail, Some("UnexpectedSyntax"));
    assert_eq!(err("RETURN 9223372#54775808").detail, Some("UnexpectedSyntax"));
}

#[test]
fn line_col_counts_characters() {
    assert_eq!(line_col("abc", 0), (1, 1));
    assert_eq!(line_col("abc", 2), (1, 3));
    assert_eq!(line_col("a\nbc", 3), (2, 2));
    assert_eq!(line_col("é\nx", 3), (2, 1));
    assert_eq!(line_col("éa", 2), (1, 2));
    // Out of range and mid-character offsets are clamped instead of panicking.
    assert_eq!(line_col("é", 1), (1, 1));
    assert_eq!(line_col("ab", 99), (1, 3));
}

#[test]
fn offsets_in_messages_are_character_offsets() {
    let e = err("RETURN 'é' +");
    assert!(e.message.contains("(line 1, column 13 (offset: 12))\n"), "{}", e.message);
}

#[test]
fn messages_quote_the_line_with_a_caret() {
    let e = err("MATCH (n)\nRETRUN n");
    assert!(e.message.starts_with("Invalid input 'RETRUN': expected"), "{}", e.message);
    assert!(
        e.message.ends_with("(line 2, column 1 (offset: 10))\n\"RETRUN n\"\n ^"),
        "{}",
        e.message
    );
    let long = format!("RETURN {}#", "1 + ".repeat(100));
    let e = err(&long);
    let snippet = e.message.lines().nth(1).unwrap_or("");
    let caret = e.message.lines().nth(2).unwrap_or("");
    assert!(snippet.len() <= 2 * 60 + 2, "{snippet}");
    assert_eq!(snippet.chars().nth(caret.len() - 1), Some('#'), "{snippet}\n{caret}");
}

#[test]
fn recursion_estimate_ignores_binary_minus() {
    use crate::lexer::tokenize;
    let est = |t: &str| crate::parser::recursion_estimate(&tokenize(t).expect("lexes"));
    // Bracket depth 1 → 20; dashes of `<--` after the first count as possible prefixes (a
    // harmless overestimate, since `- -x` must count); `)-[`, `]->` and `a - b` do not.
    assert_eq!(est("MATCH (a)-[:R]->(b)<--(c) RETURN a - b - c"), 20 + 2);
    assert_eq!(est("MATCH (a)-[:R]->(b)-->(c) RETURN a - b - c"), 20 + 1);
    assert_eq!(est("RETURN - - -1"), 10 + 3);
    assert_eq!(est("RETURN NOT NOT [(x)]"), 30 + 2);
    for q in MGBENCH {
        assert!(est(q) <= 60, "{q}: {}", est(q));
    }
}

/// Worst case for the inline path: just under the estimate budget, with every precedence level
/// recursing at every bracket level, on a thread with a 1 MiB stack.
#[test]
fn inline_budget_fits_small_stacks() {
    on_small_stack(|| {
        let level = "a OR b XOR c AND NOT d = e IN f + g * h ^ (";
        let text = format!("RETURN {}1{}", level.repeat(12), ")".repeat(12));
        let est = crate::parser::recursion_estimate(&crate::lexer::tokenize(&text).expect("lexes"));
        assert!(est <= 150, "{est}");
        assert!(parse(&text).is_ok());
    });
}

/// Every prefix of every corpus query, and simple mutations of them, must produce a result
/// (Ok or a SyntaxError), never a panic.
#[test]
fn never_panics_on_truncated_or_mutated_input() {
    let mut corpus: Vec<String> = MGBENCH.iter().map(|s| s.to_string()).collect();
    corpus.extend(
        [
            "MATCH p = shortestPath((a:A {x: [1, 2.5e3, 'é\\u00e9']})-[r:R|S*1..3]->(b)) \
             WHERE a.x =~ 'x' AND NOT (a)-->() RETURN p, [x IN r | x.w], a{.x, y: 1}",
            "CALL { WITH x UNWIND $l AS y RETURN y UNION ALL RETURN 2 AS y } IN TRANSACTIONS OF 1 ROWS",
            "CREATE CONSTRAINT c IF NOT EXISTS FOR (n:L) REQUIRE (n.p, n.q) IS NODE KEY",
            "SHOW INDEXES YIELD name ORDER BY name LIMIT 1 WHERE name = 'x' RETURN name",
            "RETURN CASE x WHEN 1 THEN reduce(s = 0, y IN [1] | s + y) ELSE count{ (n)--() } END",
            "MERGE (n {a: $p}) ON CREATE SET n += {b: `x`.y} FOREACH (i IN [1] | REMOVE n:A)",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let inserts = [
        "(", ")", "[", "]", "{", "}", "'", "\"", "`", "-", "<", ">", ":", ".", "..", "*", "$",
        "/*", "\\", "é", " ", "0x", "1e",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for q in &corpus {
        let bounds: Vec<usize> = (0..=q.len()).filter(|i| q.is_char_boundary(*i)).collect();
        for &i in &bounds {
            let _ = parse(&q[..i]);
            let _ = parse(&q[i..]);
        }
        for _ in 0..300 {
            let at = bounds[(next() as usize) % bounds.len()];
            let ins = inserts[(next() as usize) % inserts.len()];
            let mutated = format!("{}{}{}", &q[..at], ins, &q[at..]);
            let _ = parse(&mutated);
            let end = bounds[(next() as usize) % bounds.len()].max(at);
            let deleted = format!("{}{}", &q[..at], &q[end..]);
            let _ = parse(&deleted);
        }
    }
}

#[test]
fn create_vector_index_forms() {
    let text = "CREATE VECTOR INDEX emb IF NOT EXISTS FOR (d:Doc) ON d.embedding \
                OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}";
    let SchemaCommand::CreateVectorIndex { name, if_not_exists, target, property, options, .. } =
        schema(text)
    else {
        panic!("{text}")
    };
    assert_eq!(name.map(|n| n.name.to_string()).as_deref(), Some("emb"));
    assert!(if_not_exists);
    assert!(matches!(target, SchemaTarget::Node { ref label, .. } if &*label.name == "Doc"));
    assert_eq!(&*property.name, "embedding");
    assert!(options.is_some());
    for text in [
        "CREATE VECTOR INDEX FOR (d:Doc) ON (d.e)",
        "CREATE VECTOR INDEX r FOR ()-[r:REL]-() ON r.e OPTIONS $opts",
    ] {
        let SchemaCommand::CreateVectorIndex { property, .. } = schema(text) else {
            panic!("{text}")
        };
        assert_eq!(&*property.name, "e");
    }
    for bad in [
        "CREATE VECTOR INDEX x FOR (d:Doc) ON (d.a, d.b)",
        "CREATE VECTOR INDEX x FOR (d:Doc) ON EACH labels(d)",
    ] {
        assert!(crate::parse(bad).is_err(), "{bad}");
    }
}
