//! Cypher 25 conditional queries (`WHEN p THEN q [WHEN ...] [ELSE q]`), desugared while parsing
//! into clauses the planner already knows. The branch is chosen once per incoming row, before
//! any branch runs, so a branch's writes cannot make a later predicate true as well:
//!
//! ```text
//! WITH *, CASE WHEN p0 THEN 0 WHEN p1 THEN 1 ELSE 2 END AS `  when`
//! CALL (*) { WITH * WHERE `  when` = 0 CALL (*) { q0 } RETURN <q0's columns>  UNION ALL ... }
//! RETURN <q0's columns>
//! ```
//!
//! The hidden variable (two leading spaces) never shows in `*`. Each branch runs as its own
//! `CALL (*) { }`, so a branch not taken produces no row even when it aggregates. Branches
//! must return the same columns (the `UNION` check says so); without an `ELSE` and with no
//! true predicate the row produces nothing.
//! Braces around a branch are optional; a conditional query followed by `UNION` must be braced
//! (`{ WHEN ... } UNION { WHEN ... }`), as in Neo4j.

use std::sync::Arc;

use crate::ast::*;

use super::linear::star_with;
use super::{PResult, Parser};

/// The hidden variable holding the chosen branch's number.
const BRANCH: &str = "  when";

impl Parser<'_> {
    /// `WHEN ... [ELSE ...]` at the start of a query part, as that part's clauses.
    pub(crate) fn conditional_query(&mut self) -> PResult<SingleQuery> {
        self.nested(|p| {
            let start = p.cur_span().start;
            let mut branches = Vec::new();
            while p.eat_kw("WHEN") {
                let pred = p.expr()?;
                p.expect_kw("THEN")?;
                branches.push((pred, p.branch_body()?));
            }
            let else_ = if p.eat_kw("ELSE") { Some(p.branch_body()?) } else { None };
            if p.is_kw("UNION") {
                return Err(p.error_at(
                    p.cur_span().start,
                    "A conditional query combined with UNION must be enclosed in braces: \
                     { WHEN ... } UNION { ... }",
                ));
            }
            Ok(desugar(branches, else_, p.span_from(start)))
        })
    }

    /// One branch: `{ query }` or a single query without `UNION`.
    fn branch_body(&mut self) -> PResult<Query> {
        if self.eat_sym("{") {
            let q = self.query()?;
            self.expect_sym("}")?;
            return Ok(q);
        }
        let first = self.single_query()?;
        let span = first.span;
        Ok(Query { first, unions: Vec::new(), span })
    }

    /// A part of a `UNION`: a conditional query, a braced query, or plain clauses.
    pub(crate) fn union_part(&mut self) -> PResult<SingleQuery> {
        if self.is_kw("WHEN") {
            return self.conditional_query();
        }
        if self.is_sym("{") {
            self.bump();
            let q = self.nested(|p| p.query())?;
            self.expect_sym("}")?;
            return Ok(as_single(q));
        }
        self.single_query()
    }
}

fn var(name: &str, span: Span) -> Expr {
    Expr { kind: ExprKind::Variable(Arc::from(name)), span }
}

fn int(i: i64, span: Span) -> Expr {
    Expr { kind: ExprKind::Literal(Literal::Int(i)), span }
}

/// The clauses a conditional query stands for (see the module documentation).
fn desugar(branches: Vec<(Expr, Query)>, else_: Option<Query>, span: Span) -> SingleQuery {
    let n = branches.len() as i64;
    let mut whens = Vec::new();
    let mut bodies = Vec::new();
    for (i, (pred, body)) in branches.into_iter().enumerate() {
        whens.push((pred, int(i as i64, span)));
        bodies.push(body);
    }
    let else_expr = else_.as_ref().map(|_| Box::new(int(n, span)));
    bodies.extend(else_);
    let case = Expr { kind: ExprKind::Case { operand: None, whens, else_: else_expr }, span };
    let pick = ProjectionItem {
        expr: case,
        alias: Some(Ident { name: Arc::from(BRANCH), span }),
        text: BRANCH.to_string(),
    };
    let columns = bodies.first().and_then(result_columns);
    let mut parts = bodies.into_iter().enumerate().map(|(i, q)| guarded(q, i as i64, span));
    let first = parts.next().unwrap_or(SingleQuery { clauses: Vec::new(), span });
    let union = Query { first, unions: parts.map(|p| (true, p)).collect(), span };
    let mut clauses =
        vec![Clause { kind: star_with(vec![pick], None), span }, call_all(union, span)];
    clauses.extend(columns.map(|c| return_columns(c, span)));
    SingleQuery { clauses, span }
}

/// `CALL (*) { q }`.
fn call_all(q: Query, span: Span) -> Clause {
    let kind = ClauseKind::CallSubquery {
        scope: Some(CallScope::All),
        optional: false,
        body: Box::new(q),
        in_transactions: None,
    };
    Clause { kind, span }
}

/// Branch `i`'s query, run (as a subquery, so an aggregation in it sees only this row) only
/// when the hidden variable says `i`.
fn guarded(q: Query, i: i64, span: Span) -> SingleQuery {
    let cond = Expr {
        kind: ExprKind::Compare(Box::new(var(BRANCH, span)), vec![(CompareOp::Eq, int(i, span))]),
        span,
    };
    let columns = result_columns(&q);
    let mut clauses =
        vec![Clause { kind: star_with(Vec::new(), Some(cond)), span }, call_all(q, span)];
    clauses.extend(columns.map(|c| return_columns(c, span)));
    SingleQuery { clauses, span }
}

/// A braced query as one union part: itself when it has no `UNION`, else run as a subquery.
fn as_single(q: Query) -> SingleQuery {
    if q.unions.is_empty() {
        return q.first;
    }
    let span = q.span;
    let columns = result_columns(&q);
    let mut clauses = vec![call_all(q, span)];
    clauses.extend(columns.map(|c| return_columns(c, span)));
    SingleQuery { clauses, span }
}

/// The column names of `q`'s final `RETURN` (`Some(None)` for `RETURN *`); `None` when it ends
/// without one.
fn result_columns(q: &Query) -> Option<Option<Vec<Arc<str>>>> {
    let Some(Clause { kind: ClauseKind::Return(p), .. }) = q.first.clauses.last() else {
        return None;
    };
    if p.star {
        return Some(None);
    }
    let names = p
        .items
        .iter()
        .map(|it| match (&it.alias, &it.expr.kind) {
            (Some(a), _) => a.name.clone(),
            (None, ExprKind::Variable(v)) => v.clone(),
            (None, _) => Arc::from(it.text.as_str()),
        })
        .collect();
    Some(Some(names))
}

/// `RETURN a, b, ...` over the given columns (`RETURN *` for `None`).
fn return_columns(columns: Option<Vec<Arc<str>>>, span: Span) -> Clause {
    let items = columns
        .unwrap_or_default()
        .into_iter()
        .map(|c| ProjectionItem { expr: var(&c, span), alias: None, text: c.to_string() })
        .collect::<Vec<_>>();
    let star = items.is_empty();
    let kind = ClauseKind::Return(Projection {
        distinct: false,
        star,
        items,
        order_by: Vec::new(),
        skip: None,
        limit: None,
        where_: None,
    });
    Clause { kind, span }
}
