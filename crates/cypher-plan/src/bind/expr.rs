//! Binding expressions: names to slots, parameters to indexes, functions through the
//! [`crate::Resolver`], with the static type checks Neo4j makes at compile time.

use std::sync::Arc;

use arbor_cypher_syntax::ast::{
    BinaryOp, Expr, ExprKind, Ident, Literal, MapProjectionItem, QualifiedName, UnaryOp,
};
use arbor_model::{Error, Result, Status, Value};

use crate::bind::*;
use crate::catalog::is_aggregate;
use crate::expr::{ArithOp, Builtin, MapProjItem, PExpr, StringOp, SubqueryKind};
use crate::rewrite::{self, RewriteCtx};

impl Binder<'_> {
    pub(crate) fn bind_exprs(&mut self, es: &[Expr], scope: &Scope) -> Result<Vec<PExpr>> {
        es.iter().map(|e| self.bind_expr(e, scope)).collect()
    }

    pub(crate) fn bx(&mut self, e: &Expr, scope: &Scope) -> Result<Box<PExpr>> {
        Ok(Box::new(self.bind_expr(e, scope)?))
    }

    /// Binds a WHERE predicate (pattern predicates allowed).
    pub(crate) fn bind_pred(&mut self, e: &Expr, scope: &Scope) -> Result<PExpr> {
        self.pred_ctx = true;
        let r = self.bind_expr(e, scope);
        self.pred_ctx = false;
        let r = r?;
        if matches!(static_kind(&r, scope), Kind::Node | Kind::Rel | Kind::Path | Kind::RelList) {
            return Err(self.syntax(
                e.span,
                "InvalidArgumentType",
                "Type mismatch: expected Boolean",
            ));
        }
        Ok(r)
    }

    /// Boolean operands must not be non-boolean literals.
    pub(crate) fn check_bool_operand(&self, e: &Expr, b: &PExpr) -> Result<()> {
        let bad = match b {
            PExpr::Const(v) => !matches!(v, Value::Bool(_) | Value::Null),
            PExpr::List(_) | PExpr::Map(_) => true,
            _ => false,
        };
        if bad {
            return Err(self.syntax(
                e.span,
                "InvalidArgumentType",
                "Type mismatch: expected Boolean",
            ));
        }
        Ok(())
    }

    /// Binds an operand in a boolean position (an operand of NOT, AND, OR, XOR, a searched
    /// CASE's WHEN, a list filter): Neo4j 5 takes a pattern there as an existence test.
    pub(crate) fn bind_bool(&mut self, e: &Expr, scope: &Scope) -> Result<Box<PExpr>> {
        self.pred_ctx = true;
        self.bx(e, scope)
    }

    pub(crate) fn bind_expr(&mut self, e: &Expr, scope: &Scope) -> Result<PExpr> {
        let pred = std::mem::replace(&mut self.pred_ctx, false);
        let r = self.bind_expr_inner(e, scope, pred);
        self.pred_ctx = false;
        r
    }

    pub(crate) fn bind_expr_inner(&mut self, e: &Expr, scope: &Scope, pred: bool) -> Result<PExpr> {
        if let Some(ctx) = &self.agg {
            if !ctx.keys.is_empty() || !ctx.agg_texts.is_empty() {
                let t = self.norm(e.span);
                if !t.is_empty() {
                    if let Some((_, s)) = ctx.keys.iter().find(|(k, _)| *k == t) {
                        return Ok(PExpr::Slot(*s));
                    }
                }
            }
        }
        Ok(match &e.kind {
            ExprKind::Literal(l) => PExpr::Const(match l {
                Literal::Null => Value::Null,
                Literal::Bool(b) => Value::Bool(*b),
                Literal::Int(i) => Value::Int(*i),
                // Neo4j folds `-0.0` to `0.0`.
                Literal::Float(f) => Value::Float(if *f == 0.0 { 0.0 } else { *f }),
                Literal::String(s) => Value::String(s.clone()),
            }),
            ExprKind::Parameter(p) => PExpr::Param(self.param(p)),
            ExprKind::Variable(v) => match scope.get(v) {
                Some((s, _)) => PExpr::Slot(s),
                None => {
                    if let Some(ctx) = &self.agg {
                        if ctx.pre.get(v).is_some() {
                            return Err(self.syntax(
                                e.span,
                                "AmbiguousAggregationExpression",
                                format!("Aggregation column contains implicit grouping expressions referencing `{v}`. Aggregation expressions with implicit grouping keys are not supported."),
                            ));
                        }
                    }
                    return Err(self.undefined(e.span, v));
                }
            },
            ExprKind::Property(base, key) => self.bind_property(base, key, scope)?,
            ExprKind::List(xs) => PExpr::List(self.bind_exprs(xs, scope)?),
            ExprKind::Map(xs) => {
                let mut out = Vec::new();
                for (k, v) in xs {
                    out.push((name(k), self.bind_expr(v, scope)?));
                }
                PExpr::Map(out)
            }
            ExprKind::Unary(op, a) => self.bind_unary(*op, a, scope)?,
            ExprKind::Binary(op, a, b) => self.bind_binary(*op, a, b, scope)?,
            ExprKind::Compare(a, rest) => {
                let a = self.bx(a, scope)?;
                let mut r = Vec::new();
                for (op, x) in rest {
                    r.push((*op, self.bind_expr(x, scope)?));
                }
                PExpr::Compare(a, r)
            }
            ExprKind::IsNull { expr, negated } => PExpr::IsNull(self.bx(expr, scope)?, *negated),
            ExprKind::HasLabels(a, labels) => {
                PExpr::HasLabels(self.bx(a, scope)?, labels.iter().map(name).collect())
            }
            ExprKind::HasLabelExpr(a, labels) => {
                let base = self.bind_expr(a, scope)?;
                self.check_label_base(&base, a.span, scope)?;
                self.lower_label_expr(&base, labels, Some(e.span), scope)?
            }
            ExprKind::Index(a, b) => PExpr::Index(self.bx(a, scope)?, self.bx(b, scope)?),
            ExprKind::Slice { expr, from, to } => {
                let a = self.bx(expr, scope)?;
                let f = match from {
                    Some(x) => Some(self.bx(x, scope)?),
                    None => None,
                };
                let t = match to {
                    Some(x) => Some(self.bx(x, scope)?),
                    None => None,
                };
                PExpr::Slice(a, f, t)
            }
            ExprKind::CountStar => self.bind_aggregate(e, "count", false, &[], true)?,
            ExprKind::Function { name: qn, args, .. }
                if args.is_empty() && qn.parts.len() == 1 && self.is_csv_function(qn) =>
            {
                self.csv_function(qn)
            }
            ExprKind::Function { name: qn, distinct, args } => {
                self.bind_function(e, qn, *distinct, args, scope)?
            }
            ExprKind::Case { operand, whens, else_ } => {
                let operand = match operand {
                    Some(o) => Some(self.bx(o, scope)?),
                    None => None,
                };
                let mut ws = Vec::new();
                for (w, t) in whens {
                    // A searched CASE's conditions are predicates; a simple CASE's are values.
                    self.pred_ctx = operand.is_none();
                    ws.push((self.bind_expr(w, scope)?, self.bind_expr(t, scope)?));
                }
                let else_ = match else_ {
                    Some(x) => Some(self.bx(x, scope)?),
                    None => None,
                };
                PExpr::Case { operand, whens: ws, else_ }
            }
            ExprKind::ListComprehension { .. }
            | ExprKind::Quantified { .. }
            | ExprKind::Reduce { .. } => self.bind_list_expr(e, scope)?,
            ExprKind::PatternPredicate(_)
            | ExprKind::PatternComprehension { .. }
            | ExprKind::Exists(_)
            | ExprKind::CountSubquery(_)
            | ExprKind::CollectSubquery(_) => self.bind_subquery_expr(e, scope, pred)?,
            ExprKind::MapProjection { variable, items } => {
                self.bind_map_projection(variable, items, scope)?
            }
        })
    }

    /// `base.key`, rejecting statically known non-maps (paths, literals, lists).
    fn bind_property(&mut self, base: &Expr, key: &Ident, scope: &Scope) -> Result<PExpr> {
        let b = self.bx(base, scope)?;
        if static_kind(&b, scope) == Kind::Path
            || matches!(&*b, PExpr::Const(v) if !v.is_null())
            || matches!(&*b, PExpr::List(_))
        {
            return Err(self.syntax(
                base.span,
                "InvalidArgumentType",
                "Type mismatch: expected Map, Node, Relationship, Point, Duration, Date, Time, LocalTime, LocalDateTime or DateTime",
            ));
        }
        // A variable statically known to hold a non-map (`WITH 123 AS x RETURN x.num`):
        // Neo4j's semantic analysis rejects this as a type error before running.
        let k = static_kind(&b, scope);
        if matches!(&*b, PExpr::Slot(_))
            && matches!(k, Kind::Str | Kind::Bool | Kind::Num | Kind::List)
        {
            return Err(self.err(
                base.span,
                Status::TypeError,
                "InvalidArgumentType",
                format!(
                    "Type mismatch: expected Map, Node, Relationship, Point, Duration, \
                     Date, Time, LocalTime, LocalDateTime or DateTime but was {}",
                    kind_name(k)
                ),
            ));
        }
        Ok(PExpr::Property(b, name(key)))
    }

    /// `NOT a`, `-a`, `+a` (folding negative literals).
    fn bind_unary(&mut self, op: UnaryOp, a: &Expr, scope: &Scope) -> Result<PExpr> {
        let ast_a = a;
        let a = if op == UnaryOp::Not { self.bind_bool(a, scope)? } else { self.bx(a, scope)? };
        Ok(match op {
            UnaryOp::Not => {
                self.check_bool_operand(ast_a, &a)?;
                PExpr::Not(a)
            }
            UnaryOp::Neg => match *a {
                // -i64::MIN overflows: left to run time, which reports it.
                PExpr::Const(Value::Int(i)) if i != i64::MIN => PExpr::Const(Value::Int(-i)),
                PExpr::Const(Value::Float(f)) => {
                    PExpr::Const(Value::Float(if f == 0.0 { 0.0 } else { -f }))
                }
                other => PExpr::Neg(Box::new(other)),
            },
            UnaryOp::Plus => PExpr::Plus(a),
        })
    }

    /// Boolean, arithmetic, string and `IN` operators, with their static operand checks.
    fn bind_binary(&mut self, op: BinaryOp, a: &Expr, b: &Expr, scope: &Scope) -> Result<PExpr> {
        let boolean = matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor);
        let (ast_a, ast_b) = (a, b);
        self.pred_ctx = boolean;
        let a = self.bx(a, scope)?;
        self.pred_ctx = boolean;
        let b = self.bx(b, scope)?;
        if boolean {
            self.check_bool_operand(ast_a, &a)?;
            self.check_bool_operand(ast_b, &b)?;
        }
        if matches!(
            op,
            BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod | BinaryOp::Pow
        ) {
            // Strings and booleans never take part in these operators (unlike `+`,
            // which concatenates strings): reject statically known cases up front.
            for (ast_x, x) in [(ast_a, &a), (ast_b, &b)] {
                let k = static_kind(x, scope);
                if matches!(k, Kind::Str | Kind::Bool) {
                    return Err(self.syntax(
                        ast_x.span,
                        "InvalidArgumentType",
                        format!(
                            "Type mismatch: expected Integer, Float or Duration but was {}",
                            kind_name(k)
                        ),
                    ));
                }
            }
        }
        if op == BinaryOp::In {
            let bad = match &*b {
                PExpr::Const(v) => !matches!(v, Value::Null | Value::List(_)),
                PExpr::Map(_) => true,
                _ => false,
            };
            if bad {
                return Err(self.syntax(
                    ast_b.span,
                    "InvalidArgumentType",
                    "Type mismatch: expected List<T> but was a non-list literal",
                ));
            }
        }
        Ok(match op {
            BinaryOp::Or => PExpr::Or(a, b),
            BinaryOp::Xor => PExpr::Xor(a, b),
            BinaryOp::And => PExpr::And(a, b),
            BinaryOp::Add => PExpr::Arith(ArithOp::Add, a, b),
            BinaryOp::Sub => PExpr::Arith(ArithOp::Sub, a, b),
            BinaryOp::Mul => PExpr::Arith(ArithOp::Mul, a, b),
            BinaryOp::Div => PExpr::Arith(ArithOp::Div, a, b),
            BinaryOp::Mod => PExpr::Arith(ArithOp::Mod, a, b),
            BinaryOp::Pow => PExpr::Arith(ArithOp::Pow, a, b),
            BinaryOp::In => PExpr::In(a, b),
            BinaryOp::StartsWith => PExpr::Str(StringOp::StartsWith, a, b),
            BinaryOp::EndsWith => PExpr::Str(StringOp::EndsWith, a, b),
            BinaryOp::Contains => PExpr::Str(StringOp::Contains, a, b),
            BinaryOp::RegexMatch => PExpr::Str(StringOp::Regex, a, b),
        })
    }

    /// A function call: aggregates, built-ins (arity and argument kinds checked here), then the
    /// resolver's scalar functions.
    fn bind_function(
        &mut self,
        e: &Expr,
        qn: &QualifiedName,
        distinct: bool,
        args: &[Expr],
        scope: &Scope,
    ) -> Result<PExpr> {
        let lower = qn.dotted().to_lowercase();
        // APOC's `apoc.any.property(x, key)` is Cypher's dynamic property access `x[key]`
        // (nodes, relationships and maps; null for a null container or key).
        if lower == "apoc.any.property" && args.len() == 2 {
            return Ok(PExpr::Index(self.bx(&args[0], scope)?, self.bx(&args[1], scope)?));
        }
        if is_aggregate(&lower) {
            return self.bind_aggregate(e, &lower, distinct, args, false);
        }
        if let Some(b) = Builtin::lookup(&lower) {
            if let Some(n) = b.arity() {
                if args.len() != n {
                    return Err(self.syntax(
                        e.span,
                        "InvalidNumberOfArguments",
                        format!("Insufficient parameters for function '{}'", qn.dotted()),
                    ));
                }
            }
            if b == Builtin::Exists
                && !matches!(args[0].kind, ExprKind::Property(..) | ExprKind::PatternPredicate(_))
            {
                return Err(self.syntax(
                    e.span,
                    "InvalidArgumentType",
                    "Argument to exists(...) is not a property or pattern",
                ));
            }
            if b == Builtin::Exists && matches!(args[0].kind, ExprKind::PatternPredicate(_)) {
                // `exists((a)-->())` is the pattern's existence test itself.
                return self.bind_subquery_expr(&args[0], scope, true);
            }
            let bargs = self.bind_exprs(args, scope)?;
            let k = bargs.first().map(|a| static_kind(a, scope)).unwrap_or(Kind::Any);
            let bad = match b {
                Builtin::Type => matches!(k, Kind::Node | Kind::Path | Kind::RelList),
                Builtin::Length => matches!(k, Kind::Node | Kind::Rel),
                Builtin::Labels => matches!(k, Kind::Rel | Kind::Path),
                Builtin::Properties => {
                    matches!(k, Kind::Str | Kind::Bool | Kind::Num | Kind::List)
                }
                _ => false,
            };
            if bad {
                return Err(self.syntax(
                    e.span,
                    "InvalidArgumentType",
                    format!("Type mismatch: invalid argument for function '{}'", qn.dotted()),
                ));
            }
            return Ok(PExpr::Builtin(b, bargs));
        }
        if let Some((lo, hi)) = self.res.scalar_arity(&lower) {
            if args.len() < lo || args.len() > hi {
                return Err(self.syntax(
                    e.span,
                    "InvalidNumberOfArguments",
                    format!(
                        "Wrong number of arguments for function '{}': {} given",
                        qn.dotted(),
                        args.len()
                    ),
                ));
            }
        }
        Ok(match self.res.scalar(&lower) {
            Some(func) => {
                if lower == "size" && matches!(args[0].kind, ExprKind::PatternPredicate(_)) {
                    return Err(self.syntax(
                        args[0].span,
                        "UnexpectedSyntax",
                        "A pattern expression should only be used in order to test the existence \
                         of a pattern. It can no longer be used inside the function size(), an \
                         alternative is to replace size() with COUNT {}.",
                    ));
                }
                let bargs = self.bind_exprs(args, scope)?;
                if lower == "size"
                    && bargs.first().is_some_and(|a| static_kind(a, scope) == Kind::Path)
                {
                    return Err(self.syntax(
                        e.span,
                        "InvalidArgumentType",
                        "Type mismatch: expected String or List<T> but was Path",
                    ));
                }
                PExpr::Scalar { name: Arc::from(qn.dotted().as_str()), func, args: bargs }
            }
            None => {
                return Err(self.syntax(
                    qn.span,
                    "UnknownFunction",
                    format!("Unknown function '{}'", qn.dotted()),
                ))
            }
        })
    }

    /// List comprehensions, quantifiers and `reduce`: the element (and accumulator) variables
    /// live in an inner scope.
    fn bind_list_expr(&mut self, e: &Expr, scope: &Scope) -> Result<PExpr> {
        Ok(match &e.kind {
            ExprKind::ListComprehension { variable, list, filter, map } => {
                let list = self.bx(list, scope)?;
                let slot = self.slot();
                let mut inner = scope.clone();
                inner.bind(variable.name.clone(), slot, Kind::Any);
                let filter = match filter {
                    Some(f) => Some(self.bind_bool(f, &inner)?),
                    None => None,
                };
                let map = match map {
                    Some(m) => Some(self.bx(m, &inner)?),
                    None => None,
                };
                PExpr::ListComp { slot, list, filter, map }
            }
            ExprKind::Quantified { quantifier, variable, list, filter } => {
                let list = self.bx(list, scope)?;
                let slot = self.slot();
                let mut inner = scope.clone();
                inner.bind(variable.name.clone(), slot, element_kind(&list, scope));
                let filter = self.bind_bool(filter, &inner)?;
                PExpr::Quantified { quantifier: *quantifier, slot, list, filter }
            }
            ExprKind::Reduce { accumulator, init, variable, list, expr } => {
                let init = self.bx(init, scope)?;
                let list = self.bx(list, scope)?;
                let acc = self.slot();
                let slot = self.slot();
                let mut inner = scope.clone();
                inner.bind(accumulator.name.clone(), acc, Kind::Any);
                inner.bind(variable.name.clone(), slot, Kind::Any);
                let expr = self.bx(expr, &inner)?;
                PExpr::Reduce { acc, init, slot, list, expr }
            }
            _ => return Err(Error::internal("bind_list_expr: not a list expression")),
        })
    }

    /// Pattern predicates, pattern comprehensions and `EXISTS` / `COUNT` / `COLLECT`
    /// subqueries: planned as sub-plans run per row.
    fn bind_subquery_expr(&mut self, e: &Expr, scope: &Scope, pred: bool) -> Result<PExpr> {
        Ok(match &e.kind {
            ExprKind::PatternPredicate(pe) => {
                let nodes = std::iter::once(&pe.start).chain(pe.chain.iter().map(|(_, n)| n));
                let vars = nodes
                    .map(|n| &n.variable)
                    .chain(pe.chain.iter().map(|(r, _)| &r.variable))
                    .flatten();
                if let Some(v) =
                    vars.filter(|v| scope.get(&v.name).is_none()).min_by_key(|v| v.span.start)
                {
                    return Err(self.syntax(
                        v.span,
                        "UndefinedVariable",
                        format!(
                            "PatternExpressions are not allowed to introduce new variables: '{}'.",
                            v.name
                        ),
                    ));
                }
                if !pred {
                    return Err(self.syntax(
                        e.span,
                        "UnexpectedSyntax",
                        "A pattern expression should only be used in order to test the existence \
                         of a pattern. It should therefore only be used in contexts that evaluate \
                         to a boolean, e.g. inside the function exists() or in a WHERE-clause. No \
                         other uses are allowed, instead they should be replaced by a pattern \
                         comprehension",
                    ));
                }
                if pe.chain.is_empty() {
                    return Err(self.syntax(
                        e.span,
                        "InvalidArgumentType",
                        "Type mismatch: a single node pattern is not a predicate",
                    ));
                }
                let saved = self.agg.take();
                let r = self.pattern_subplan(pe, None, scope, None, None);
                self.agg = saved;
                let (plan, _) = r?;
                let ctx = RewriteCtx { resolver: self.res };
                let plan = rewrite::apply_subquery(self.rules, plan, &ctx);
                PExpr::Subquery { kind: SubqueryKind::Exists, plan: Arc::new(plan) }
            }
            ExprKind::PatternComprehension { variable, pattern, filter, map } => {
                let saved = self.agg.take();
                let r = self.pattern_subplan(
                    pattern,
                    variable.as_ref(),
                    scope,
                    filter.as_deref(),
                    Some(map),
                );
                self.agg = saved;
                let (plan, slot) = r?;
                // Rewritten like the other expression subqueries: a comprehension's pattern
                // starts with an index seek too (`[(a:P)-->(b) WHERE a.id = x.id | b]` per
                // row was a label scan, the 40x `allShortestPaths` case of issue 18).
                let ctx = RewriteCtx { resolver: self.res };
                let plan = rewrite::apply_subquery(self.rules, plan, &ctx);
                PExpr::Subquery { kind: SubqueryKind::Collect(slot), plan: Arc::new(plan) }
            }
            ExprKind::Exists(q) | ExprKind::CountSubquery(q) | ExprKind::CollectSubquery(q) => {
                let saved = self.agg.take();
                let (w, r) = (self.write, self.plan_query(q, scope, false));
                self.agg = saved;
                let (plan, _, cols) = r?;
                if self.write != w {
                    return Err(self.syntax(
                        e.span,
                        "InvalidClauseComposition",
                        "An expression subquery cannot contain updating clauses",
                    ));
                }
                let kind = match &e.kind {
                ExprKind::Exists(_) => SubqueryKind::Exists,
                ExprKind::CountSubquery(_) => SubqueryKind::Count,
                _ => match cols.as_deref() {
                    Some([(_, s)]) => SubqueryKind::Collect(*s),
                    _ => {
                        return Err(self.syntax(
                            e.span,
                            "InvalidClauseComposition",
                            "A COLLECT subquery must end with a RETURN clause with exactly one column",
                        ))
                    }
                },
            };
                let ctx = RewriteCtx { resolver: self.res };
                PExpr::Subquery {
                    kind,
                    plan: Arc::new(rewrite::apply_subquery(self.rules, plan, &ctx)),
                }
            }
            _ => return Err(Error::internal("bind_subquery_expr: not a subquery expression")),
        })
    }

    /// `v {.key, key: expr, other, .*}`.
    fn bind_map_projection(
        &mut self,
        variable: &Ident,
        items: &[MapProjectionItem],
        scope: &Scope,
    ) -> Result<PExpr> {
        let base = Box::new(match scope.get(&variable.name) {
            Some((s, _)) => PExpr::Slot(s),
            None => return Err(self.undefined(variable.span, &variable.name)),
        });
        let mut out = Vec::new();
        for it in items {
            out.push(match it {
                MapProjectionItem::Property(k) => MapProjItem::Property(name(k)),
                MapProjectionItem::Literal(k, x) => {
                    MapProjItem::Literal(name(k), self.bind_expr(x, scope)?)
                }
                MapProjectionItem::Variable(v) => match scope.get(&v.name) {
                    Some((s, _)) => MapProjItem::Literal(name(v), PExpr::Slot(s)),
                    None => return Err(self.undefined(v.span, &v.name)),
                },
                MapProjectionItem::AllProperties => MapProjItem::AllProperties,
            });
        }
        Ok(PExpr::MapProjection { base, items: out })
    }
}
