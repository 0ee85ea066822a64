//! Cypher 25 linear composition, desugared while parsing into clauses the planner already
//! knows: `LET x = e, y = f` becomes one `WITH *, e AS x` per binding (so a binding sees the
//! ones before it), `FILTER [WHERE] p` becomes `WITH * WHERE p`, and `q1 NEXT q2` feeds q1's
//! `RETURN` columns into q2 (q1's `RETURN` turns into a `WITH`; a q1 with `UNION` or without
//! `RETURN` runs as a `CALL { }` subquery first), and `FOR x IN list` is `UNWIND list AS x`. Nothing in Cypher 5 uses these words as
//! clause keywords, so they are accepted with or without a `CYPHER 25` prefix.
//!
//! Not covered: a `UNION` right after `NEXT` (the parts before `NEXT` may use it); it is
//! refused with a syntax error rather than guessed at.

use std::sync::Arc;

use crate::ast::*;

use super::{PResult, Parser};

/// `WITH *[, items] [WHERE where_]`.
pub(super) fn star_with(items: Vec<ProjectionItem>, where_: Option<Expr>) -> ClauseKind {
    ClauseKind::With(Projection {
        distinct: false,
        star: true,
        items,
        order_by: Vec::new(),
        skip: None,
        limit: None,
        where_,
    })
}

impl Parser<'_> {
    /// `LET name = ...` (a name followed by `=`, so `let` stays usable as a variable).
    pub(crate) fn at_let(&self) -> bool {
        self.is_kw("LET") && self.is_name_n(1) && self.is_sym_n(2, "=")
    }

    /// `LET x = e [, y = f ...]`: one `WITH *, e AS x` clause per binding.
    pub(crate) fn let_clauses(&mut self) -> PResult<Vec<Clause>> {
        self.bump(); // LET
        let mut out = Vec::new();
        loop {
            let start = self.cur_span().start;
            let variable = self.ident("a variable name")?;
            self.expect_sym("=")?;
            let expr = self.expr()?;
            let text = variable.name.to_string();
            let item = ProjectionItem { expr, alias: Some(variable), text };
            out.push(Clause { kind: star_with(vec![item], None), span: self.span_from(start) });
            if !self.eat_sym(",") {
                break;
            }
        }
        Ok(out)
    }

    /// `FOR name IN ...` (so `for` stays usable as a variable elsewhere).
    pub(crate) fn at_for(&self) -> bool {
        self.is_kw("FOR") && self.is_name_n(1) && self.is_kw_n(2, "IN")
    }

    /// `FOR x IN list`: Cypher 25's synonym of `UNWIND list AS x`.
    pub(crate) fn for_rest(&mut self) -> PResult<ClauseKind> {
        self.bump(); // FOR
        let variable = self.ident("a variable name")?;
        self.expect_kw("IN")?;
        let expr = self.expr()?;
        Ok(ClauseKind::Unwind { expr, variable })
    }

    /// `FILTER [WHERE] predicate` (after the `FILTER` keyword).
    pub(crate) fn filter_rest(&mut self) -> PResult<ClauseKind> {
        self.eat_kw("WHERE");
        Ok(star_with(Vec::new(), Some(self.expr()?)))
    }

    /// `q NEXT q2 [NEXT q3 ...]` after `first` was parsed.
    pub(crate) fn next_chain(&mut self, first: Query) -> PResult<Query> {
        let mut q = first;
        while self.is_kw("NEXT") {
            let at = self.cur_span().start;
            self.bump();
            let next = self.union_query()?;
            if !next.unions.is_empty() {
                return Err(self.error_at(
                    at,
                    "UNION directly after NEXT is not supported; wrap the union in CALL { ... }",
                ));
            }
            let span = self.span_from(q.span.start);
            q = compose(q, next.first, span);
        }
        Ok(q)
    }
}

/// The clauses of `first NEXT second` as one query.
fn compose(first: Query, second: SingleQuery, span: Span) -> Query {
    let mut clauses = feed(first);
    clauses.extend(second.clauses);
    Query { first: SingleQuery { clauses, span }, unions: Vec::new(), span }
}

/// `q` as leading clauses whose variables are q's result columns.
fn feed(q: Query) -> Vec<Clause> {
    let ends_in_return =
        matches!(q.first.clauses.last(), Some(Clause { kind: ClauseKind::Return(_), .. }));
    if q.unions.is_empty() && ends_in_return {
        let mut clauses = q.first.clauses;
        if let Some(Clause { kind: ClauseKind::Return(p), span }) = clauses.pop() {
            clauses.push(Clause { kind: ClauseKind::With(aliased(p)), span });
        }
        return clauses;
    }
    let span = q.span;
    let kind = ClauseKind::CallSubquery {
        scope: None,
        optional: false,
        body: Box::new(q),
        in_transactions: None,
    };
    vec![Clause { kind, span }]
}

/// A `RETURN` body as a `WITH` body: items that are not plain variables get their column
/// name as alias, since `WITH` requires one.
fn aliased(mut p: Projection) -> Projection {
    for item in &mut p.items {
        if item.alias.is_none() && !matches!(item.expr.kind, ExprKind::Variable(_)) {
            let name = Arc::from(item.text.as_str());
            item.alias = Some(Ident { name, span: item.expr.span });
        }
    }
    p
}
