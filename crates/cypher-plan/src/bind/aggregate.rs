//! Aggregating projections: grouping keys, aggregate calls and the rules for where an aggregate
//! may appear.

use std::sync::Arc;

use arbor_cypher_syntax::ast::{Expr, ExprKind, Projection};
use arbor_model::{Error, Result};

use crate::bind::ast_walk::*;
use crate::bind::*;
use crate::expr::{AggCall, PExpr, Slot};
use crate::plan::projection::*;

impl Binder<'_> {
    #[allow(clippy::type_complexity)]
    pub(crate) fn bind_aggregating(
        &mut self,
        items: &[(String, ItemRef)],
        scope: &Scope,
        p: &Projection,
        new_scope: &mut Scope,
    ) -> Result<(Vec<(Slot, PExpr)>, Vec<(Slot, PExpr)>, Cols, Vec<(PExpr, bool)>, Option<PExpr>)>
    {
        let mut keys = Vec::new();
        let mut col_slots: Vec<Option<(Slot, Kind)>> = vec![None; items.len()];
        // Grouping keys first, so aggregate items can refer to them.
        for (i, (_, it)) in items.iter().enumerate() {
            match it {
                ItemRef::Var(s, k) => {
                    keys.push((*s, PExpr::Slot(*s)));
                    col_slots[i] = Some((*s, *k));
                    if let Some(ctx) = &mut self.agg {
                        ctx.keys.push((String::new(), *s));
                    }
                }
                ItemRef::Expr(e) if !contains_aggregate(e) => {
                    let saved = self.agg.take();
                    let b = self.bind_expr(e, scope);
                    self.agg = saved;
                    let b = b?;
                    let (slot, kind) = match (&b, &e.kind) {
                        (PExpr::Slot(s), ExprKind::Variable(v)) => {
                            (*s, scope.get(v).map(|x| x.1).unwrap_or(Kind::Any))
                        }
                        _ => (self.slot(), static_kind(&b, scope)),
                    };
                    keys.push((slot, b));
                    col_slots[i] = Some((slot, kind));
                    let t = self.norm(e.span);
                    if let Some(ctx) = &mut self.agg {
                        ctx.keys.push((t, slot));
                    }
                }
                ItemRef::Expr(_) => {}
            }
        }
        let mut post = Vec::new();
        let empty = Scope::default();
        for (i, (_, it)) in items.iter().enumerate() {
            if let ItemRef::Expr(e) = it {
                if col_slots[i].is_none() {
                    let b = self.bind_expr(e, &empty)?;
                    let slot = match b {
                        PExpr::Slot(s) if !keys.iter().any(|(k, _)| *k == s) => s,
                        other => {
                            let s = self.slot();
                            post.push((s, other));
                            s
                        }
                    };
                    col_slots[i] = Some((slot, Kind::Any));
                }
            }
        }
        let mut cols = Vec::new();
        for ((n, it), cs) in items.iter().zip(&col_slots) {
            let (slot, kind) = cs.ok_or_else(|| Error::internal("unbound projection item"))?;
            new_scope.bind(Arc::from(n.as_str()), slot, kind);
            cols.push((n.clone(), slot));
            if let ItemRef::Expr(e) = it {
                let t = self.norm(e.span);
                if let Some(ctx) = &mut self.agg {
                    ctx.keys.push((t, slot));
                }
            }
        }
        let mut sort_keys = Vec::new();
        if let Some(ctx) = &mut self.agg {
            // Aggregates in ORDER BY only see the projected columns.
            ctx.pre = new_scope.clone();
        }
        for si in &p.order_by {
            let e = self.bind_expr(&si.expr, new_scope).map_err(|e| hidden_variable(e, scope))?;
            sort_keys.push((e, si.descending));
        }
        let mut where_pred = None;
        if let Some(w) = &p.where_ {
            let saved = self.agg.take();
            let r = self.bind_pred(w, new_scope);
            self.agg = saved;
            where_pred = Some(r.map_err(|e| hidden_variable(e, scope))?);
        }
        Ok((keys, post, cols, sort_keys, where_pred))
    }

    pub(crate) fn bind_aggregate(
        &mut self,
        e: &Expr,
        lower: &str,
        distinct: bool,
        args: &[Expr],
        count_star: bool,
    ) -> Result<PExpr> {
        let Some(mut ctx) = self.agg.take() else {
            // As written (`sum`, `COUNT`), as Neo4j names it.
            let text = self.text.get(e.span.start..e.span.end).unwrap_or(lower);
            let name = text.split('(').next().unwrap_or(lower).trim();
            return Err(self.syntax(
                e.span,
                "InvalidAggregation",
                format!("Invalid use of aggregating function {name}(...) in this context"),
            ));
        };
        let t = self.norm(e.span);
        if let Some((_, s)) = ctx.agg_texts.iter().find(|(k, _)| *k == t && !t.is_empty()) {
            let s = *s;
            self.agg = Some(ctx);
            return Ok(PExpr::Slot(s));
        }
        let expected = match lower {
            "percentilecont" | "percentiledisc" => 2,
            _ => 1,
        };
        if !count_star && args.len() != expected {
            self.agg = Some(ctx);
            return Err(self.syntax(
                e.span,
                "InvalidNumberOfArguments",
                format!("Wrong number of arguments for function '{lower}'"),
            ));
        }
        let mut bargs = Vec::new();
        for a in args {
            let mut random = false;
            walk_ast(a, &mut |x| {
                if let ExprKind::Function { name, .. } = &x.kind {
                    random |= name.dotted().eq_ignore_ascii_case("rand");
                }
                !random
            });
            if random {
                self.agg = Some(ctx);
                return Err(self.syntax(
                    a.span,
                    "NonConstantExpression",
                    "Can't use non-deterministic (random) functions inside of aggregate functions.",
                ));
            }
            if contains_aggregate(a) {
                self.agg = Some(ctx);
                return Err(self
                    .syntax(
                        a.span,
                        "NestedAggregation",
                        "Can't use aggregate functions inside of aggregate functions.",
                    )
                    .with_detail("InvalidAggregation"));
            }
            match self.bind_expr(a, &ctx.pre) {
                Ok(b) => bargs.push(b),
                Err(err) => {
                    self.agg = Some(ctx);
                    return Err(err);
                }
            }
        }
        let slot = self.slot();
        ctx.aggs
            .push((slot, AggCall { name: Arc::from(lower), distinct, args: bargs, count_star }));
        ctx.agg_texts.push((t, slot));
        self.agg = Some(ctx);
        Ok(PExpr::Slot(slot))
    }
}
