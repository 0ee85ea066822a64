//! `[OPTIONAL] CALL [(scope)] { ... } [IN TRANSACTIONS [OF n ROWS]]`: which outer variables
//! the body sees, the importing-`WITH` rules, and the operator that runs the body per row.
//!
//! Scoping follows Neo4j 5: the body of `CALL (a, b) { ... }` sees `a` and `b`, of `CALL (*)`
//! everything, of `CALL ()` nothing. The older `CALL { ... }` sees only what a leading
//! *importing* `WITH` (one that names an outer variable, or `WITH *`) imports, separately for
//! each branch of a UNION; any other name in the body is a new variable. Expression subqueries
//! (`EXISTS { }`, `COUNT { }`, `COLLECT { }`) are not planned here: they see the whole scope.

use arbor_cypher_syntax::ast::{
    CallScope, Clause, ClauseKind, Expr, ExprKind, Ident, InTransactions, Literal, OnError,
    Projection, Query, SingleQuery, Span,
};
use arbor_model::{Result, Status, Value};

use crate::bind::ast_walk::walk_ast;
use crate::bind::*;
use crate::expr::PExpr;
use crate::ops::Op;

/// One subquery call clause, as written.
pub(crate) struct SubqueryCall<'a> {
    /// The variable scope clause, `None` for `CALL { ... }`.
    pub(crate) vars: Option<&'a CallScope>,
    pub(crate) optional: bool,
    pub(crate) body: &'a Query,
    pub(crate) in_transactions: Option<&'a InTransactions>,
    pub(crate) span: Span,
}

impl Binder<'_> {
    /// Plans the call on top of `op`; the body's returned columns join `scope`.
    pub(crate) fn plan_call_subquery(
        &mut self,
        mut op: Op,
        scope: &mut Scope,
        call: &SubqueryCall<'_>,
        top: bool,
    ) -> Result<Op> {
        self.read = true;
        let batch = self.transaction_batch(call, top)?;
        if batch.is_some() {
            // The outer rows are read before the first batch commits.
            op = Op::Eager { input: Box::new(op) };
        }
        let outer = scope.clone();
        let (inner, _, inner_cols) = match call.vars {
            Some(vars) => {
                let start = self.scope_clause(vars, &outer)?;
                self.plan_query(call.body, &start, false)?
            }
            None => self.plan_query_parts(call.body, &outer, false, &mut |b, part| {
                b.importing_with(part, &outer)
            })?,
        };
        let Some(cols) = inner_cols else {
            // A unit subquery: OPTIONAL changes nothing, the input row passes through.
            return Ok(Op::Apply {
                input: Box::new(op),
                inner: Box::new(inner),
                unit: true,
                batch,
            });
        };
        for (n, s) in &cols {
            if scope.get(n).is_some() {
                return Err(self.syntax(
                    call.span,
                    "VariableAlreadyBound",
                    format!("Variable `{n}` already declared in outer scope"),
                ));
            }
            scope.bind(n.as_str().into(), *s, Kind::Any);
        }
        let slots = cols.iter().map(|(_, s)| *s).collect();
        Ok(match (call.optional, batch) {
            (false, batch) => {
                Op::Apply { input: Box::new(op), inner: Box::new(inner), unit: false, batch }
            }
            (true, None) => Op::Optional { input: Box::new(op), inner: Box::new(inner), slots },
            (true, Some(batch)) => {
                let inner =
                    Op::Optional { input: Box::new(Op::Argument), inner: Box::new(inner), slots };
                Op::Apply {
                    input: Box::new(op),
                    inner: Box::new(inner),
                    unit: false,
                    batch: Some(batch),
                }
            }
        })
    }

    /// The batch size of `IN TRANSACTIONS [OF n ROWS]`, if the call has it.
    fn transaction_batch(&mut self, call: &SubqueryCall<'_>, top: bool) -> Result<Option<PExpr>> {
        let Some(t) = call.in_transactions else { return Ok(None) };
        if !top {
            return Err(self.syntax(
                call.span,
                "InvalidClauseComposition",
                "CALL { ... } IN TRANSACTIONS cannot be nested in a subquery",
            ));
        }
        if let Some(s) = &t.report_status {
            if !matches!(t.on_error, Some(OnError::Continue | OnError::Break)) {
                return Err(self.syntax(
                    s.span,
                    "InvalidClauseComposition",
                    "REPORT STATUS can only be used when specifying ON ERROR CONTINUE or ON \
                     ERROR BREAK",
                ));
            }
        }
        if let Some(mode) = t.on_error.filter(|m| *m != OnError::Fail) {
            let what = if mode == OnError::Continue { "CONTINUE" } else { "BREAK" };
            return Err(self.err(
                call.span,
                Status::SemanticError,
                "UnsupportedClause",
                format!("CALL {{ ... }} IN TRANSACTIONS ON ERROR {what} is not supported"),
            ));
        }
        if let Some(Some(e)) = &t.concurrency {
            if let ExprKind::Literal(Literal::Int(n)) = e.kind {
                if n <= 0 {
                    return Err(self.syntax(
                        e.span,
                        "InvalidArgumentValue",
                        format!("Invalid input. '{n}' is not a valid value. Must be a positive integer."),
                    ));
                }
            }
            // Checked to be a constant; the batches run one after another, which is one of
            // the orders concurrent batches may take.
            self.bind_constant(e, "IN ... CONCURRENT TRANSACTIONS")?;
        }
        Ok(Some(match &t.batch_rows {
            Some(e) => {
                if let ExprKind::Literal(Literal::Int(n)) = e.kind {
                    if n <= 0 {
                        return Err(self.err(
                            e.span,
                            Status::ArgumentError,
                            "InvalidArgumentValue",
                            format!(
                                "Invalid input. '{n}' is not a valid value. Must be a positive integer."
                            ),
                        ));
                    }
                }
                self.bind_constant(e, "OF ... ROWS")?
            }
            // Neo4j's default batch size.
            None => PExpr::Const(Value::Int(1000)),
        }))
    }

    /// The scope a `CALL (a, b)` / `CALL (*)` / `CALL ()` body starts from.
    fn scope_clause(&self, vars: &CallScope, outer: &Scope) -> Result<Scope> {
        let names = match vars {
            CallScope::All => return Ok(outer.clone()),
            CallScope::Vars(names) => names,
        };
        let mut start = Scope::default();
        for v in names {
            let (slot, kind) = outer.get(&v.name).ok_or_else(|| self.undefined(v.span, &v.name))?;
            start.bind(v.name.clone(), slot, kind);
        }
        Ok(start)
    }

    /// The scope one branch of a `CALL { ... }` body starts from: what its leading importing
    /// `WITH` imports (nothing without one). An importing `WITH` may only list outer variables
    /// (`x` or `x AS x`) or be `WITH *`, with no DISTINCT, ORDER BY, SKIP, LIMIT or WHERE.
    fn importing_with(&self, part: &SingleQuery, outer: &Scope) -> Result<Scope> {
        let Some(Clause { kind: ClauseKind::With(p), span }) = part.clauses.first() else {
            return Ok(Scope::default());
        };
        if !(p.star || p.items.iter().any(|it| refers_to_any(&it.expr, outer))) {
            // A plain WITH that happens to come first (`WITH 2 AS q`).
            return Ok(Scope::default());
        }
        if let Some(what) = importing_with_violation(p) {
            return Err(self.syntax(
                *span,
                "InvalidImportingWith",
                format!(
                    "Importing WITH should consist only of simple references to outside \
                     variables. {what}"
                ),
            ));
        }
        if p.star {
            return Ok(outer.clone());
        }
        let mut start = Scope::default();
        for it in &p.items {
            if let ExprKind::Variable(v) = &it.expr.kind {
                // A name the outer scope lacks stays unbound: binding the WITH reports it.
                if let Some((slot, kind)) = outer.get(v) {
                    start.bind(v.clone(), slot, kind);
                }
            }
        }
        Ok(start)
    }
}

/// What makes `p`, an importing `WITH`, invalid (Neo4j's wording), if anything.
fn importing_with_violation(p: &Projection) -> Option<&'static str> {
    let simple = p.items.iter().all(|it| match &it.expr.kind {
        ExprKind::Variable(v) => it.alias.as_ref().is_none_or(|a| a.name == *v),
        _ => false,
    });
    if !simple || (p.star && !p.items.is_empty()) {
        Some("Aliasing or expressions are not supported.")
    } else if p.distinct {
        Some("DISTINCT is not allowed.")
    } else if !p.order_by.is_empty() {
        Some("ORDER BY is not allowed.")
    } else if p.skip.is_some() {
        Some("SKIP is not allowed.")
    } else if p.limit.is_some() {
        Some("LIMIT is not allowed.")
    } else if p.where_.is_some() {
        Some("WHERE is not allowed.")
    } else {
        None
    }
}

/// Whether `e` names a variable of `scope`, outside the inner scopes of list comprehensions,
/// quantifiers and `reduce` that shadow it.
fn refers_to_any(e: &Expr, scope: &Scope) -> bool {
    let mut found = false;
    walk_ast(e, &mut |x| {
        let (list, vars, bodies): (&Expr, Vec<&Ident>, Vec<&Expr>) = match &x.kind {
            ExprKind::Variable(v) => {
                found |= scope.get(v).is_some();
                return !found;
            }
            ExprKind::MapProjection { variable, .. } => {
                found |= scope.get(&variable.name).is_some();
                return !found;
            }
            ExprKind::ListComprehension { variable, list, filter, map } => {
                (list, vec![variable], filter.iter().chain(map.iter()).map(|b| &**b).collect())
            }
            ExprKind::Quantified { variable, list, filter, .. } => {
                (list, vec![variable], vec![&**filter])
            }
            ExprKind::Reduce { accumulator, init, variable, list, expr } => {
                found |= refers_to_any(init, scope);
                (list, vec![accumulator, variable], vec![&**expr])
            }
            _ => return !found,
        };
        let mut inner = scope.clone();
        inner.vars.retain(|(n, _, _)| !vars.iter().any(|v| v.name == *n));
        found |= refers_to_any(list, scope) || bodies.iter().any(|b| refers_to_any(b, &inner));
        false
    });
    found
}
