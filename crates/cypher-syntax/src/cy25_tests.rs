//! Parser tests for issue 18's additions: `FINISH`, dynamic property keys in SET / REMOVE,
//! Cypher 25's `LET` / `FILTER` / `NEXT` (checked by the clauses they desugar to), and the
//! SHOW SETTINGS / SHOW DATABASE forms.

use crate::ast::*;
use crate::parse;
use crate::tests::{clauses, err};

fn kinds(text: &str) -> Vec<&'static str> {
    clauses(text)
        .iter()
        .map(|c| match c {
            ClauseKind::Match { .. } => "MATCH",
            ClauseKind::Unwind { .. } => "UNWIND",
            ClauseKind::With(p) if p.star => "WITH*",
            ClauseKind::With(_) => "WITH",
            ClauseKind::Return(_) => "RETURN",
            ClauseKind::Set { .. } => "SET",
            ClauseKind::Remove { .. } => "REMOVE",
            ClauseKind::CallSubquery { .. } => "CALL{}",
            ClauseKind::Finish => "FINISH",
            _ => "other",
        })
        .collect()
}

fn show(text: &str) -> ShowCommand {
    match parse(text) {
        Ok(Statement::Show(cmd)) => cmd,
        other => panic!("expected a SHOW command for {text:?}, got {other:?}"),
    }
}

// Goal: the new clauses parse to the clauses the planner knows, in order.
#[test]
fn linear_composition_desugars() {
    assert_eq!(kinds("FINISH"), ["FINISH"]);
    assert_eq!(kinds("MATCH (n) SET n.x = 1 FINISH"), ["MATCH", "SET", "FINISH"]);
    assert_eq!(kinds("LET x = 1, y = x RETURN y"), ["WITH*", "WITH*", "RETURN"]);
    assert_eq!(kinds("UNWIND [1] AS x FILTER WHERE x > 0 RETURN x"), ["UNWIND", "WITH*", "RETURN"]);
    assert_eq!(kinds("UNWIND [1] AS x FILTER x > 0 RETURN x"), ["UNWIND", "WITH*", "RETURN"]);
    assert_eq!(kinds("RETURN 1 AS a NEXT RETURN a"), ["WITH", "RETURN"]);
    assert_eq!(kinds("RETURN 1 AS a UNION RETURN 2 AS a NEXT RETURN a"), ["CALL{}", "RETURN"]);
    assert_eq!(kinds("CREATE () NEXT RETURN 1 AS a"), ["CALL{}", "RETURN"]);
    // `let` stays a variable name where no `=` follows.
    assert_eq!(kinds("WITH 1 AS let RETURN let"), ["WITH", "RETURN"]);
    // A RETURN item without alias becomes a WITH item named by its text.
    let ClauseKind::With(p) = &clauses("RETURN 1 + 1 NEXT RETURN `1 + 1`")[0] else { panic!() };
    assert_eq!(p.items[0].alias.as_ref().map(|a| &*a.name), Some("1 + 1"));
    assert!(err("RETURN 1 AS a NEXT RETURN 1 AS b UNION RETURN 2 AS b").message.contains("UNION"));
}

// Goal: `n[key]` in SET and REMOVE, and Neo4j's error for a literal key that is no string.
#[test]
fn dynamic_property_keys() {
    let ClauseKind::Set { items } = &clauses("MATCH (n) SET n[$k] = 1")[1] else { panic!() };
    assert!(matches!(items[0], SetItem::DynamicProperty { .. }));
    let ClauseKind::Remove { items } = &clauses("MATCH (n) REMOVE n['a' + 'b']")[1] else {
        panic!()
    };
    assert!(matches!(items[0], RemoveItem::DynamicProperty { .. }));
    let e = err("MATCH (n) SET n[1] = 2");
    assert!(e.message.starts_with(
        "Type mismatch: node or relationship property key must be given as String, but was \
         Integer (line 1, column 17"
    ));
}

// Goal: the SHOW forms record what they are narrowed to.
#[test]
fn show_settings_and_databases() {
    let cmd = show("SHOW SETTINGS");
    assert_eq!((cmd.kind, cmd.names.is_none()), (ShowKind::Settings, true));
    let cmd = show("SHOW SETTINGS 'a', 'b' YIELD name");
    assert!(matches!(cmd.names, Some(Expr { kind: ExprKind::List(ref l), .. }) if l.len() == 2));
    assert!(cmd.yield_.is_some());
    assert!(matches!(
        show("SHOW SETTING $p").names,
        Some(Expr { kind: ExprKind::Parameter(_), .. })
    ));
    let cmd = show("SHOW DEFAULT DATABASE");
    assert_eq!((cmd.kind, cmd.filter.as_deref()), (ShowKind::Databases, Some("DEFAULT")));
    assert_eq!(show("SHOW HOME DATABASE YIELD name").filter.as_deref(), Some("HOME"));
    let cmd = show("SHOW DATABASE neo4j YIELD name");
    assert!(
        matches!(cmd.names, Some(Expr { kind: ExprKind::Literal(Literal::String(ref s)), .. }) if &**s == "neo4j")
    );
    assert!(show("SHOW DATABASE YIELD name").names.is_none());
    assert_eq!(show("SHOW SERVERS").kind, ShowKind::Servers);
}

// Goal: WHEN picks its branch once (a hidden CASE), then runs the branches as a UNION ALL inside
// CALL (*), and returns the first branch's columns; FOR is UNWIND.
#[test]
fn conditional_queries_and_for_desugar() {
    assert_eq!(
        kinds("WHEN true THEN RETURN 1 AS x ELSE RETURN 2 AS x"),
        ["WITH*", "CALL{}", "RETURN"]
    );
    assert_eq!(kinds("WHEN true THEN CREATE ()"), ["WITH*", "CALL{}"]);
    assert_eq!(kinds("FOR x IN [1, 2] RETURN x"), ["UNWIND", "RETURN"]);
    assert_eq!(kinds("WITH 1 AS for RETURN for"), ["WITH", "RETURN"]);
    let cs =
        clauses("WHEN $a THEN RETURN 1 AS x WHEN $b THEN { RETURN 2 AS x } ELSE RETURN 3 AS x");
    let ClauseKind::CallSubquery { body, scope: Some(CallScope::All), .. } = &cs[1] else {
        panic!("expected CALL (*) {{ }}, got {:?}", cs[1]);
    };
    assert_eq!(body.unions.len(), 2);
    assert!(body.unions.iter().all(|(all, _)| *all));
    let ClauseKind::Return(p) = &cs[2] else { panic!("expected RETURN") };
    assert_eq!(p.items.len(), 1);
    assert_eq!(p.items[0].text, "x");
    // Inside subqueries and braced UNION parts.
    assert!(parse("MATCH (n) CALL (n) { WHEN n.x > 1 THEN RETURN 1 AS y } RETURN y").is_ok());
    assert!(parse("MATCH (n) WHERE EXISTS { WHEN true THEN RETURN 1 AS y } RETURN n").is_ok());
    assert!(parse("{ WHEN true THEN RETURN 1 AS x } UNION { RETURN 2 AS x }").is_ok());
    assert!(parse("EXISTS { FOR x IN [1] RETURN x }").is_err());
    assert!(parse("RETURN EXISTS { FOR x IN [1] RETURN x } AS e").is_ok());
    // Not a regular clause; UNION needs braces.
    err("MATCH (n) WHEN true THEN RETURN 1 AS x");
    err("WHEN true THEN RETURN 1 AS x UNION RETURN 2 AS x");
    err("WHEN true RETURN 1 AS x");
}

// Goal: `IS [NOT] LABELED` is the colon form, negated as a whole; `IS NOT NULL` is untouched.
#[test]
fn is_labeled_predicate() {
    let ret = |text: &str| match &clauses(text)[0] {
        ClauseKind::Return(p) => p.items[0].expr.kind.clone(),
        other => panic!("expected RETURN, got {other:?}"),
    };
    assert!(matches!(ret("RETURN n IS LABELED A AS x"), ExprKind::HasLabels(_, l) if l.len() == 1));
    assert!(matches!(ret("RETURN n IS LABELED A|B AS x"), ExprKind::HasLabelExpr(..)));
    let ExprKind::Unary(UnaryOp::Not, inner) = ret("RETURN n IS NOT LABELED A&B AS x") else {
        panic!("expected NOT");
    };
    assert!(matches!(inner.kind, ExprKind::HasLabels(_, ref l) if l.len() == 2));
    assert!(matches!(ret("RETURN n IS NOT NULL AS x"), ExprKind::IsNull { negated: true, .. }));
}

// Goal: a label literally named `LABELED` in the old `IS` form reads as Neo4j 5.26 reads it:
// `n IS LABELED AS x`, `WHERE n IS LABELED RETURN ...`, `n IS LABELED|A`.
#[test]
fn is_labeled_label_named_labeled() {
    let ret = |text: &str| match &clauses(text)[0] {
        ClauseKind::Return(p) => p.items[0].expr.kind.clone(),
        other => panic!("expected RETURN, got {other:?}"),
    };
    let ExprKind::HasLabels(_, l) = ret("RETURN n IS LABELED AS x") else {
        panic!("expected a label test");
    };
    assert_eq!(l.len(), 1);
    assert_eq!(&*l[0].name, "LABELED");
    assert!(matches!(ret("RETURN n IS LABELED|A AS x"), ExprKind::HasLabelExpr(..)));
    assert!(matches!(ret("RETURN n IS LABELED AND true AS x"), ExprKind::Binary(..)));
    let ClauseKind::Match { where_: Some(w), .. } =
        &clauses("MATCH (n) WHERE n IS LABELED RETURN n")[0]
    else {
        panic!("expected MATCH ... WHERE");
    };
    assert!(matches!(&w.kind, ExprKind::HasLabels(_, l) if &*l[0].name == "LABELED"));
}
