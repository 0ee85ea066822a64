//! `WITH` and `RETURN`: projection items, DISTINCT, aggregation, ORDER BY / SKIP / LIMIT and
//! their scoping rules.

use std::collections::HashSet;
use std::sync::Arc;

use arbor_cypher_syntax::ast::{Expr, ExprKind, Literal, Projection, Span};
use arbor_model::{Error, Result};

use crate::bind::ast_walk::*;
use crate::bind::*;
use crate::catalog::is_aggregate;
use crate::expr::{PExpr, Slot};
use crate::ops::Op;

pub(crate) enum ItemRef<'e> {
    Var(Slot, Kind),
    Expr(&'e Expr),
}

/// A projection planned up to its `ORDER BY`: the plan, the columns, the sort keys and the
/// `WHERE` predicate.
type ProjectionPlan = (Op, Cols, Vec<(PExpr, bool)>, Option<PExpr>);

impl Binder<'_> {
    pub(crate) fn plan_projection(
        &mut self,
        op: Op,
        scope: &Scope,
        p: &Projection,
        is_return: bool,
        span: Span,
    ) -> Result<(Op, Scope, Cols)> {
        let items = self.projection_items(scope, p, is_return, span)?;
        let aggregating =
            items.iter().any(|(_, it)| matches!(it, ItemRef::Expr(e) if contains_aggregate(e)));
        let mut new_scope = Scope::default();
        let (op, cols, sort_keys, where_pred) = if aggregating {
            let planned = self.plan_aggregating_projection(op, scope, p, &items, &mut new_scope)?;
            // Past an aggregation no row comes from one CSV record: `linenumber()` and
            // `file()` are null from here on, as in Neo4j.
            self.csv = None;
            planned
        } else {
            self.plan_plain_projection(op, scope, p, &items, &mut new_scope, is_return)?
        };
        let op = self.plan_order_skip_limit(op, p, sort_keys, where_pred)?;
        Ok((op, new_scope, cols))
    }

    /// The columns of a projection, named, in order: the scope's variables for `*` (sorted by
    /// name), then the items. Rejects `RETURN *` with nothing in scope, ambiguous `ORDER BY`,
    /// aggregations inside list expressions, unaliased `WITH` expressions and repeated columns.
    fn projection_items<'p>(
        &mut self,
        scope: &Scope,
        p: &'p Projection,
        is_return: bool,
        span: Span,
    ) -> Result<Vec<(String, ItemRef<'p>)>> {
        // (column name, expression) — star items are variables of the scope.
        let mut items: Vec<(String, ItemRef)> = Vec::new();
        if p.star {
            let mut vars: Vec<_> =
                scope.vars.iter().filter(|(n, _, _)| !n.starts_with("  ")).cloned().collect();
            vars.sort_by(|a, b| a.0.cmp(&b.0));
            if vars.is_empty() && p.items.is_empty() && is_return {
                return Err(self.syntax(
                    span,
                    "NoVariablesInScope",
                    format!(
                        "{} * is not allowed when there are no variables in scope",
                        if is_return { "RETURN" } else { "WITH" }
                    ),
                ));
            }
            for (n, s, k) in vars {
                items.push((n.to_string(), ItemRef::Var(s, k)));
            }
        }
        self.check_order_by_ambiguity(p, scope)?;
        let sorted = p.order_by.iter().map(|o| &o.expr);
        if let Some(span) =
            p.items.iter().map(|it| &it.expr).chain(sorted).find_map(aggregate_over_list)
        {
            return Err(self.syntax(
                span,
                "InvalidAggregation",
                "Can't use aggregating expressions inside of expressions executing over lists",
            ));
        }
        for it in &p.items {
            let col = match &it.alias {
                Some(a) => a.name.to_string(),
                None => {
                    // A map projection is named after its variable, as in Neo4j
                    // (`RETURN n {.a}` is column `n`), so it needs no alias in WITH either.
                    let named = matches!(
                        it.expr.kind,
                        ExprKind::Variable(_) | ExprKind::MapProjection { .. }
                    );
                    if !is_return && !named {
                        return Err(self.syntax(
                            it.expr.span,
                            "NoExpressionAlias",
                            "Expression in WITH must be aliased (use AS)",
                        ));
                    }
                    match &it.expr.kind {
                        ExprKind::Variable(v) => v.to_string(),
                        ExprKind::MapProjection { variable, .. } => variable.name.to_string(),
                        _ => it.text.clone(),
                    }
                }
            };
            if items.iter().any(|(n, _)| *n == col) {
                return Err(self.syntax(
                    it.expr.span,
                    "ColumnNameConflict",
                    format!(
                        "Multiple result columns with the same name are not supported: `{col}`"
                    ),
                ));
            }
            items.push((col, ItemRef::Expr(&it.expr)));
        }
        Ok(items)
    }

    /// A projection without aggregation: `Project` (for items that are not plain variables),
    /// then `DISTINCT`; binds the columns into `new_scope` and returns the plan, the columns, the
    /// sort keys and the `WHERE` (seeing the projected names and, unless `DISTINCT`, the earlier
    /// variables).
    fn plan_plain_projection(
        &mut self,
        mut op: Op,
        scope: &Scope,
        p: &Projection,
        items: &[(String, ItemRef)],
        new_scope: &mut Scope,
        is_return: bool,
    ) -> Result<ProjectionPlan> {
        let mut cols: Cols = Vec::new();
        let mut proj = Vec::new();
        for (col, it) in items {
            let (slot, kind) = match it {
                ItemRef::Var(s, k) => (*s, *k),
                ItemRef::Expr(e) => {
                    let b = self.bind_expr(e, scope)?;
                    match b {
                        PExpr::Slot(s) => {
                            let kind = match &e.kind {
                                ExprKind::Variable(v) => {
                                    scope.get(v).map(|x| x.1).unwrap_or(Kind::Any)
                                }
                                _ => Kind::Any,
                            };
                            (s, kind)
                        }
                        other => {
                            let s = self.slot();
                            let k = static_kind(&other, scope);
                            proj.push((s, other));
                            (s, k)
                        }
                    }
                }
            };
            new_scope.bind(Arc::from(col.as_str()), slot, kind);
            cols.push((col.clone(), slot));
        }
        if !proj.is_empty() {
            op = Op::Project { input: Box::new(op), items: proj };
        }
        // ORDER BY sees the projected names and, unless DISTINCT, the earlier variables.
        let mut sort_scope = if p.distinct { Scope::default() } else { scope.clone() };
        for (n, s, k) in &new_scope.vars {
            sort_scope.bind(n.clone(), *s, *k);
        }
        let item_texts: Vec<(String, Slot)> = items
            .iter()
            .zip(&cols)
            .filter_map(|((_, it), (_, s))| match it {
                ItemRef::Expr(e) => Some((self.norm(e.span), *s)),
                ItemRef::Var(..) => None,
            })
            .collect();
        let sort_keys = self.bind_sort_items(p, &item_texts, &sort_scope, scope, is_return)?;
        let mut where_pred = None;
        if let Some(w) = &p.where_ {
            let hidden = |e| if p.distinct { hidden_variable(e, scope) } else { e };
            where_pred = Some(self.bind_pred(w, &sort_scope).map_err(hidden)?);
        }
        if p.distinct {
            op = Op::Distinct { input: Box::new(op), slots: cols.iter().map(|c| c.1).collect() };
        }
        Ok((op, cols, sort_keys, where_pred))
    }

    /// A projection with aggregation: `Aggregate` (grouping keys and aggregates bound in an
    /// aggregation context), a `Project` of what is computed from them, then `DISTINCT`.
    /// Returns what [`Self::plan_plain_projection`] returns.
    fn plan_aggregating_projection(
        &mut self,
        op: Op,
        scope: &Scope,
        p: &Projection,
        items: &[(String, ItemRef)],
        new_scope: &mut Scope,
    ) -> Result<ProjectionPlan> {
        self.agg = Some(AggCtx {
            keys: Vec::new(),
            aggs: Vec::new(),
            agg_texts: Vec::new(),
            pre: scope.clone(),
        });
        let r = self.bind_aggregating(items, scope, p, new_scope);
        let ctx = self.agg.take();
        let (keys, post, cols, sort_keys, where_pred) = r?;
        let ctx = ctx.ok_or_else(|| Error::internal("aggregation context lost"))?;
        let mut op = Op::Aggregate { input: Box::new(op), keys, aggs: ctx.aggs };
        if !post.is_empty() {
            op = Op::Project { input: Box::new(op), items: post };
        }
        if p.distinct {
            op = Op::Distinct { input: Box::new(op), slots: cols.iter().map(|c| c.1).collect() };
        }
        Ok((op, cols, sort_keys, where_pred))
    }

    /// ORDER BY items of a non-aggregating projection: an item written like a projected
    /// expression reads its column; anything else is bound in `sort_scope`.
    fn bind_sort_items(
        &mut self,
        p: &Projection,
        item_texts: &[(String, Slot)],
        sort_scope: &Scope,
        before: &Scope,
        is_return: bool,
    ) -> Result<Vec<(PExpr, bool)>> {
        let clause = if is_return { "RETURN" } else { "WITH" };
        let mut sort_keys = Vec::new();
        for si in &p.order_by {
            let t = self.norm(si.expr.span);
            let e = match item_texts.iter().find(|(x, _)| !t.is_empty() && *x == t) {
                Some((_, s)) => PExpr::Slot(*s),
                None => self.bind_expr(&si.expr, sort_scope).map_err(|e| match e.detail {
                    Some("UndefinedVariable") if p.distinct => hidden_variable(e, before),
                    // No aggregate among the items: ORDER BY cannot aggregate either.
                    Some("InvalidAggregation") if e.message.starts_with("Invalid use of") => self
                        .syntax(
                            si.expr.span,
                            "InvalidAggregation",
                            format!(
                                "Cannot use aggregation in ORDER BY if there are no aggregate \
                                 expressions in the preceding {clause}"
                            ),
                        ),
                    _ => e,
                })?,
            };
            sort_keys.push((e, si.descending));
        }
        Ok(sort_keys)
    }

    /// ORDER BY, SKIP, LIMIT and the WHERE of a WITH, over a planned projection.
    fn plan_order_skip_limit(
        &mut self,
        mut op: Op,
        p: &Projection,
        sort_keys: Vec<(PExpr, bool)>,
        where_pred: Option<PExpr>,
    ) -> Result<Op> {
        if let (false, Some(l)) = (sort_keys.is_empty(), &p.limit) {
            // ORDER BY ... LIMIT: keep only the first rows while reading (Neo4j's `Top`).
            let skip = match &p.skip {
                Some(s) => Some(self.bind_constant(s, "SKIP")?),
                None => None,
            };
            let limit = self.bind_constant(l, "LIMIT")?;
            op = Op::Top { input: Box::new(op), keys: sort_keys, limit, skip };
            if let Some(w) = where_pred {
                op = Op::Filter { input: Box::new(op), pred: w, reads: false };
            }
            return Ok(op);
        }
        if !sort_keys.is_empty() {
            op = Op::Sort { input: Box::new(op), keys: sort_keys };
        }
        if let Some(s) = &p.skip {
            let count = self.bind_constant(s, "SKIP")?;
            op = Op::Skip { input: Box::new(op), count };
        }
        if let Some(l) = &p.limit {
            let count = self.bind_constant(l, "LIMIT")?;
            let exhaust = op.writes();
            op = Op::Limit { input: Box::new(op), count, exhaust };
        }
        if let Some(w) = where_pred {
            op = Op::Filter { input: Box::new(op), pred: w, reads: false };
        }
        Ok(op)
    }

    /// In an aggregating projection, an ORDER BY item that contains an aggregation may refer
    /// only to projected variables, never to expressions over the pre-projection variables
    /// (even when such an expression is itself projected): Neo4j reports
    /// `AmbiguousAggregationExpression`. Checked before the items are bound so it wins over
    /// other projection errors, as in Neo4j.
    pub(crate) fn check_order_by_ambiguity(&self, p: &Projection, scope: &Scope) -> Result<()> {
        if p.star || !p.items.iter().any(|it| contains_aggregate(&it.expr)) {
            return Ok(());
        }
        let projected: HashSet<&str> = p
            .items
            .iter()
            .filter_map(|it| match (&it.alias, &it.expr.kind) {
                (Some(a), _) => Some(&*a.name),
                (None, ExprKind::Variable(v)) => Some(&**v),
                _ => None,
            })
            .collect();
        // Projected property accesses (`me.age`) may be reused; variables that only occur
        // inside more complex projected expressions may not. A variable no item mentions is
        // left to the binder (UndefinedVariable).
        let mut item_props = HashSet::new();
        let mut item_vars: HashSet<Arc<str>> = HashSet::new();
        for it in p.items.iter().filter(|it| !contains_aggregate(&it.expr)) {
            if matches!(it.expr.kind, ExprKind::Property(..)) {
                item_props.insert(self.norm(it.expr.span));
            }
            walk_ast(&it.expr, &mut |x| {
                if let ExprKind::Variable(v) = &x.kind {
                    item_vars.insert(v.clone());
                }
                true
            });
        }
        for si in p.order_by.iter().filter(|si| contains_aggregate(&si.expr)) {
            let mut culprit = None;
            walk_ast(&si.expr, &mut |x| match &x.kind {
                ExprKind::Function { name, .. } if is_aggregate(&name.dotted().to_lowercase()) => {
                    false
                }
                ExprKind::Property(..) if item_props.contains(&self.norm(x.span)) => false,
                ExprKind::Variable(v) => {
                    if culprit.is_none()
                        && !projected.contains(&**v)
                        && item_vars.contains(v)
                        && scope.get(v).is_some()
                    {
                        culprit = Some((v.clone(), x.span));
                    }
                    false
                }
                _ => culprit.is_none(),
            });
            if let Some((v, span)) = culprit {
                return Err(self.syntax(
                    span,
                    "AmbiguousAggregationExpression",
                    format!(
                        "Order by column contains implicit grouping expressions referencing \
                         `{v}`. Aggregation expressions with implicit grouping keys are not \
                         supported."
                    ),
                ));
            }
        }
        Ok(())
    }

    /// SKIP/LIMIT: no variables allowed.
    pub(crate) fn bind_constant(&mut self, e: &Expr, what: &str) -> Result<PExpr> {
        let non_constant = |b: &Binder| {
            b.syntax(
                e.span,
                "NonConstantExpression",
                format!(
                    "It is not allowed to refer to variables in {what}, so that the value for \
                     {what} can be statically calculated."
                ),
            )
        };
        if has_subquery(e) {
            return Err(non_constant(self));
        }
        match &e.kind {
            ExprKind::Literal(Literal::Int(n)) if *n < 0 => {
                return Err(self.syntax(
                    e.span,
                    "NegativeIntegerArgument",
                    format!(
                    "Invalid input. '{n}' is not a valid value. Must be a non-negative integer."
                ),
                ))
            }
            ExprKind::Literal(Literal::Float(_) | Literal::String(_) | Literal::Bool(_))
            | ExprKind::List(_)
            | ExprKind::Map(_) => {
                return Err(self.syntax(
                    e.span,
                    "InvalidArgumentType",
                    format!(
                        "Invalid input. '{}' is not a valid value. Must be a non-negative integer.",
                        self.text.get(e.span.start..e.span.end).unwrap_or("")
                    ),
                ))
            }
            _ => {}
        }
        let saved = self.agg.take();
        let r = self.bind_expr(e, &Scope::default());
        self.agg = saved;
        r.map_err(
            |err| {
                if err.detail == Some("UndefinedVariable") {
                    non_constant(self)
                } else {
                    err
                }
            },
        )
    }
}

/// Neo4j's words for an `UndefinedVariable` error `e` about a variable of `before` (the scope
/// ahead of a DISTINCT or aggregating `WITH`/`RETURN`, which hides it from its `ORDER BY` and
/// `WHERE`); the position of `e` stays. Other errors pass unchanged.
pub(crate) fn hidden_variable(mut e: Error, before: &Scope) -> Error {
    if e.detail != Some("UndefinedVariable") {
        return e;
    }
    let Some(rest) = e.message.strip_prefix("Variable `") else { return e };
    let Some((name, tail)) = rest.split_once("` not defined") else { return e };
    if before.get(name).is_none() {
        return e;
    }
    e.message = format!(
        "In a WITH/RETURN with DISTINCT or an aggregation, it is not possible to access \
         variables declared before the WITH/RETURN: {name}{tail}"
    );
    e
}
