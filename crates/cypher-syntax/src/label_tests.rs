//! Parser tests for label and type expressions (`:A|B`, `:!A`, `:%`, `IS A`, `:$(expr)`) and
//! Neo4j 5's errors for the old colon forms, with messages and positions taken from Neo4j 5.26.

use crate::ast::*;
use crate::tests::{clauses, err, ret_expr, sx};

/// A compact rendering of a label expression.
pub(crate) fn lx(e: &LabelExpr) -> String {
    let list = |v: &[LabelExpr]| v.iter().map(lx).collect::<Vec<_>>().join(" ");
    match e {
        LabelExpr::Name(n) => n.name.to_string(),
        LabelExpr::Wildcard(_) => "%".into(),
        LabelExpr::Not(x) => format!("(! {})", lx(x)),
        LabelExpr::And(v) => format!("(& {})", list(v)),
        LabelExpr::Or(v) => format!("(| {})", list(v)),
        LabelExpr::Dynamic { expr, any, .. } => {
            format!("(${} {})", if *any { "any" } else { "all" }, sx(expr))
        }
    }
}

/// The first node pattern of `MATCH <pattern> RETURN 1` as `labels / rest`.
fn node(pattern: &str) -> String {
    let text = format!("MATCH {pattern} RETURN 1");
    let Some(ClauseKind::Match { pattern, .. }) = clauses(&text).into_iter().next() else {
        panic!("expected MATCH for {text}")
    };
    let np = &pattern[0].element.start;
    let labels: Vec<_> = np.labels.iter().map(|l| l.name.to_string()).collect();
    format!("{} / {}", labels.join(" "), np.label_expr.as_ref().map_or("_".into(), lx))
}

/// The first relationship pattern of `MATCH ()-<rel>->() RETURN 1` as `types / rest`.
fn rel(rel: &str) -> String {
    let text = format!("MATCH ()-{rel}->() RETURN 1");
    let Some(ClauseKind::Match { pattern, .. }) = clauses(&text).into_iter().next() else {
        panic!("expected MATCH for {text}")
    };
    let rp = &pattern[0].element.chain[0].0;
    let types: Vec<_> = rp.types.iter().map(|l| l.name.to_string()).collect();
    format!("{} / {}", types.join(" "), rp.type_expr.as_ref().map_or("_".into(), lx))
}

#[test]
fn node_label_expressions() {
    let cases = [
        ("(n:A)", "A / _"),
        ("(n:A:B)", "A B / _"),
        ("(n:A&B)", "A B / _"),
        ("(n:A|B)", " / (| A B)"),
        ("(n:!A)", " / (! A)"),
        ("(n:%)", " / %"),
        ("(n:(A|B)&!C)", " / (& (| A B) (! C))"),
        ("(n:A&(B|C))", "A / (| B C)"),
        ("(n:A|B&C)", " / (| A (& B C))"),
        ("(n:!!A)", " / (! (! A))"),
        ("(n IS A)", "A / _"),
        ("(IS A)", "A / _"),
        ("(n IS A|B {k: 1})", " / (| A B)"),
        ("(n:$('A'))", " / ($all 'A')"),
        ("(n:A:$(x))", "A / ($all x)"),
        ("(n:$any(['A', 'B']))", " / ($any ['A' 'B'])"),
        ("(n:$all($p)|C)", " / (| ($all $p) C)"),
        ("(n:A WHERE n.x > 1)", "A / _"),
    ];
    for (pattern, want) in cases {
        assert_eq!(node(pattern), want, "{pattern}");
    }
}

#[test]
fn relationship_type_expressions() {
    let cases = [
        ("[:T]", "T / _"),
        ("[r:T|U]", "T U / _"),
        ("[:T|:U]", "T U / _"),
        ("[r:!T]", " / (! T)"),
        ("[:%]", " / %"),
        ("[r:A&B]", " / (& A B)"),
        ("[r IS T]", "T / _"),
        ("[:$('T')]", " / ($all 'T')"),
        ("[r:T*1..2]", "T / _"),
    ];
    for (r, want) in cases {
        assert_eq!(rel(r), want, "{r}");
    }
}

#[test]
fn label_checks_in_expressions() {
    let cases = [
        ("n:A", "(: n A)"),
        ("n:A:B", "(: n A B)"),
        ("n:A|B", "(:: n (| A B))"),
        ("n IS A", "(: n A)"),
        ("n IS A|B", "(:: n (| A B))"),
        ("n:%", "(:: n %)"),
        ("n IS NULL", "(isnull n)"),
        ("n IS NOT NULL", "(notnull n)"),
        ("n:A AND m:!B", "(and (: n A) (:: m (! B)))"),
        ("[x IN l WHERE x:A | x]", "(listcomp x l (: x A) x)"),
        ("[x IN l WHERE x:(A|B) | x]", "(listcomp x l (:: x (| A B)) x)"),
    ];
    for (e, want) in cases {
        assert_eq!(sx(&ret_expr(e)), want, "{e}");
    }
}

#[test]
fn set_and_remove_dynamic_labels() {
    let cs = clauses("MATCH (n) SET n:$(a):B, n:$(['C']) REMOVE n:$($p)");
    let ClauseKind::Set { items } = &cs[1] else { panic!("SET: {cs:?}") };
    assert!(matches!(&items[0], SetItem::Labels { labels, dynamic, .. }
        if labels.len() == 1 && dynamic.len() == 1));
    let ClauseKind::Remove { items } = &cs[2] else { panic!("REMOVE: {cs:?}") };
    assert!(matches!(&items[0], RemoveItem::Labels { labels, dynamic, .. }
        if labels.is_empty() && dynamic.len() == 1));
}

/// Messages and positions as Neo4j 5.26 reports them.
#[test]
fn old_colon_forms_mixed_with_symbols() {
    let mixing = "Mixing label expression symbols ('|', '&', '!', and '%') with colon (':') \
                  between labels is not allowed. Please only use one set of symbols. This \
                  expression could be expressed as ";
    let cases = [
        ("MATCH (n:A:B|C) RETURN n", format!("{mixing}:(A&B)|C."), 10),
        ("MATCH (n:A&B:C) RETURN n", format!("{mixing}:A&B&C."), 12),
        ("MATCH (n:!A:B) RETURN n", format!("{mixing}:!A&B."), 11),
        ("MATCH (n) WHERE n:A:B|C RETURN n", format!("{mixing}:(A&B)|C."), 19),
        (
            "MATCH (n IS A:B) RETURN n",
            "Mixing the IS keyword with colon (':') between labels is not allowed. This \
             expression could be expressed as IS A&B."
                .into(),
            13,
        ),
        (
            "MATCH (n:A|:B) RETURN n",
            "Label expressions are not allowed to contain '|:'.".into(),
            10,
        ),
        (
            "MATCH ()-[r:T1:T2]->() RETURN r",
            "Relationship types in a relationship type expressions may not be combined using ':'"
                .into(),
            14,
        ),
    ];
    for (q, msg, offset) in cases {
        let e = err(q);
        let text = e.to_string();
        assert!(text.contains(&msg), "{q}: {text}");
        assert!(text.contains(&format!("(offset: {offset})")), "{q}: {text}");
    }
    let e = err("MATCH ()-[r:T1|:T2]->() RETURN r").to_string();
    assert!(e.contains("no longer supported") && e.contains("(offset: 14)"), "{e}");
    err("MATCH (n) SET n:$any('A') RETURN n");
}

#[test]
fn optional_procedure_call() {
    let cs = clauses("OPTIONAL CALL db.labels() YIELD label RETURN label");
    assert!(matches!(&cs[0], ClauseKind::CallProcedure { optional: true, yield_: Some(_), .. }));
    let cs = clauses("OPTIONAL CALL (x) { RETURN 1 AS y } RETURN y");
    assert!(matches!(&cs[0], ClauseKind::CallSubquery { optional: true, .. }));
}
