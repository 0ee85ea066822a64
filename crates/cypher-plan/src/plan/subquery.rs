//! `[OPTIONAL] CALL [(scope)] { ... } [IN TRANSACTIONS [OF n ROWS] [ON ERROR ...] [REPORT
//! STATUS AS s]]`: which outer variables the body sees, the importing-`WITH` rules, and the
//! operator that runs the body per row (in batches of inner transactions for `IN TRANSACTIONS`).
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
use arbor_model::{Result, Value};

use crate::bind::ast_walk::walk_ast;
use crate::bind::*;
use crate::expr::PExpr;
use crate::expr::Slot;
use crate::ops::{Op, TxBatch, TxOnError};

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
        op: Op,
        scope: &mut Scope,
        call: &SubqueryCall<'_>,
        top: bool,
    ) -> Result<Op> {
        self.read = true;
        let mut batch = self.transaction_batch(call, top)?;
        // Outer rows read from the graph are all read before the first batch commits, and a
        // later clause reads only after the last one: the `Eager` rules place both barriers.
        if batch.is_some() && op.writes() {
            return Err(self.syntax(
                call.span,
                "InvalidClauseComposition",
                "CALL { ... } IN TRANSACTIONS after a write clause is not supported",
            ));
        }
        let outer = scope.clone();
        if let Some(vars) = call.vars {
            self.check_no_shadowing(call.body, vars, &outer)?;
        }
        // `linenumber()` / `file()` reach into a body that imports something, as in Neo4j
        // (`CALL (row) { RETURN linenumber() }`); in one that imports nothing they are null.
        let csv = self.csv;
        let (inner, _, inner_cols) = match call.vars {
            Some(vars) => {
                let start = self.scope_clause(vars, &outer)?;
                self.csv = csv.filter(|_| !start.vars.is_empty());
                self.plan_query(call.body, &start, false)?
            }
            None => {
                let first = self.importing_with(&call.body.first, &outer)?;
                self.csv = csv.filter(|_| !first.vars.is_empty());
                self.plan_query_parts(call.body, &outer, false, &mut |b, part| {
                    b.importing_with(part, &outer)
                })?
            }
        };
        self.csv = csv;
        let cols = inner_cols.unwrap_or_default();
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
        let slots: Vec<_> = cols.iter().map(|(_, s)| *s).collect();
        if let Some(b) = &mut batch {
            b.returned.clone_from(&slots);
            b.status = self.report_status(call, scope)?;
        }
        // A unit subquery (no RETURN): OPTIONAL changes nothing, the input row passes through.
        let unit = slots.is_empty();
        Ok(match (call.optional && !unit, batch) {
            (false, batch) => {
                Op::Apply { input: Box::new(op), inner: Box::new(inner), unit, batch }
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

    /// Binds the variable of `REPORT STATUS AS s`, if written, to a new slot.
    fn report_status(
        &mut self,
        call: &SubqueryCall<'_>,
        scope: &mut Scope,
    ) -> Result<Option<Slot>> {
        let Some(v) = call.in_transactions.and_then(|t| t.report_status.as_ref()) else {
            return Ok(None);
        };
        if scope.get(&v.name).is_some() {
            return Err(self.syntax(
                v.span,
                "VariableAlreadyBound",
                format!("Variable `{}` already declared", v.name),
            ));
        }
        let slot = self.slot();
        scope.bind(v.name.clone(), slot, Kind::Any);
        Ok(Some(slot))
    }

    /// How `IN TRANSACTIONS [OF n ROWS] [ON ERROR ...]` batches, if the call has it. The
    /// returned and status slots are filled in once the body is planned.
    fn transaction_batch(
        &mut self,
        call: &SubqueryCall<'_>,
        top: bool,
    ) -> Result<Option<Box<TxBatch>>> {
        let Some(t) = call.in_transactions else { return Ok(None) };
        if !top {
            return Err(self.syntax(
                call.span,
                "InvalidClauseComposition",
                "CALL { ... } IN TRANSACTIONS nested in a regular CALL is not supported",
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
        let on_error = match t.on_error {
            None | Some(OnError::Fail) => TxOnError::Fail,
            Some(OnError::Continue) => TxOnError::Continue,
            Some(OnError::Break) => TxOnError::Break,
        };
        if let Some(Some(e)) = &t.concurrency {
            self.check_positive(e)?;
            // Checked to be a constant; the batches run one after another, which is one of
            // the orders concurrent batches may take.
            self.bind_constant(e, "IN ... CONCURRENT TRANSACTIONS")?;
        }
        let rows = match &t.batch_rows {
            Some(e) => {
                self.check_positive(e)?;
                self.bind_constant(e, "OF ... ROWS")?
            }
            // Neo4j's default batch size.
            None => PExpr::Const(Value::Int(1000)),
        };
        Ok(Some(Box::new(TxBatch { rows, on_error, status: None, returned: Vec::new() })))
    }

    /// A literal batch size or concurrency must be a positive integer (a syntax error in Neo4j).
    fn check_positive(&self, e: &Expr) -> Result<()> {
        let shown = match &e.kind {
            ExprKind::Literal(Literal::Int(n)) if *n <= 0 => n.to_string(),
            ExprKind::Literal(Literal::String(s)) => s.to_string(),
            ExprKind::Literal(Literal::Bool(b)) => b.to_string(),
            _ => return Ok(()),
        };
        Err(self.syntax(
            e.span,
            "InvalidArgumentValue",
            format!("Invalid input. '{shown}' is not a valid value. Must be a positive integer."),
        ))
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
