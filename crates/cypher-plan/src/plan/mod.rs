//! Planning: the clauses of a query, in order, each extending the operator tree built so far.
//!
//! [`plan_statement`] is the pipeline: bind and plan the query (this module and `bind`), then
//! run the rewrite rules ([`crate::rewrite`]) over the finished tree. A `SHOW` command is planned
//! as a call of its internal procedure (`show.rs`), and so is an administration command
//! (`admin.rs`).

pub(crate) mod access;
pub(crate) mod admin;
pub(crate) mod call;
pub(crate) mod load_csv;
pub(crate) mod matching;
pub(crate) mod projection;
pub(crate) mod qpp;
pub(crate) mod show;
pub(crate) mod subquery;
pub(crate) mod update;

use std::sync::Arc;

use arbor_cypher_syntax::ast::{
    self, Clause, ClauseKind, Expr, ExprKind, Literal, PatternPart, Query, SingleQuery, Statement,
};
use arbor_model::{Error, Result};

use crate::bind::*;
use crate::catalog::Resolver;
use crate::expr::Slot;
use crate::ops::Op;
use crate::rewrite::{self, RewriteCtx, RewriteRule};
use subquery::SubqueryCall;

/// A planned query.
#[derive(Clone, Debug)]
pub struct Plan {
    pub root: Op,
    pub columns: Vec<String>,
    /// The slot holding each column's value in the root's rows.
    pub column_slots: Vec<Slot>,
    /// Row width.
    pub num_slots: usize,
    /// Parameter names the query uses, indexed by [`PExpr::Param`].
    pub params: Vec<Arc<str>>,
    /// Per parameter, how many `PExpr::Param` the binder made for it. A parameter used once
    /// can be moved out of the execution's parameters by its only reader (the executor does
    /// this for a top-level `UNWIND $list`, so a batch is not copied).
    pub param_uses: Vec<u32>,
    pub is_write: bool,
    pub is_read: bool,
    pub explain: bool,
    pub profile: bool,
    /// An administration command (`SHOW USERS`, `CREATE USER`, `TERMINATE TRANSACTIONS` ...):
    /// the internal procedure it calls ([`admin::admin_procedure_name`]).
    pub admin: Option<&'static str>,
}

pub(crate) fn plan_statement(
    stmt: &Statement,
    text: &str,
    res: &dyn Resolver,
    rules: &[&dyn RewriteRule],
) -> Result<Plan> {
    let (inner, explain, profile) = match stmt {
        Statement::Explain(inner) => (&**inner, true, false),
        Statement::Profile(inner) => (&**inner, false, true),
        other => (other, false, false),
    };
    match inner {
        Statement::Query(_) | Statement::Show(_) | Statement::Admin(_) => {}
        _ if explain => return Err(Error::syntax("EXPLAIN needs a query")),
        _ if profile => return Err(Error::syntax("PROFILE needs a query")),
        _ => return Err(Error::internal("schema commands are not planned")),
    }
    let mut b = Binder {
        text,
        res,
        nslots: 0,
        params: Vec::new(),
        param_uses: Vec::new(),
        write: false,
        read: false,
        agg: None,
        pred_ctx: false,
        rules,
        csv: None,
    };
    let (root, cols) = match inner {
        Statement::Show(cmd) => b.plan_show(cmd)?,
        Statement::Admin(cmd) => b.plan_admin(cmd)?,
        Statement::Query(q) => {
            let (root, _, cols) = b.plan_query(q, &Scope::default(), true)?;
            (root, cols.unwrap_or_default())
        }
        _ => return Err(Error::internal("not a query")),
    };
    let root = rewrite::apply(rules, root, &RewriteCtx { resolver: res });
    Ok(Plan {
        root,
        columns: cols.iter().map(|(n, _)| n.clone()).collect(),
        column_slots: cols.iter().map(|(_, s)| *s).collect(),
        num_slots: b.nslots,
        params: b.params,
        param_uses: b.param_uses,
        is_write: b.write,
        is_read: b.read,
        explain,
        profile,
        admin: match inner {
            Statement::Admin(cmd) => Some(admin::admin_procedure_name(cmd)),
            _ => None,
        },
    })
}

pub(crate) fn is_updating(kind: &ClauseKind) -> bool {
    matches!(
        kind,
        ClauseKind::Create { .. }
            | ClauseKind::Merge { .. }
            | ClauseKind::Set { .. }
            | ClauseKind::Remove { .. }
            | ClauseKind::Delete { .. }
            | ClauseKind::Foreach { .. }
    )
}

impl Binder<'_> {
    /// Plans a (possibly UNION) query whose argument rows carry `scope`.
    pub(crate) fn plan_query(
        &mut self,
        q: &Query,
        scope: &Scope,
        top: bool,
    ) -> Result<(Op, Scope, Option<Cols>)> {
        self.plan_query_parts(q, scope, top, &mut |_, _| Ok(scope.clone()))
    }

    /// [`Binder::plan_query`] where each single query of a UNION starts from its own scope
    /// (`scope_of`; a subquery's branches each import their own variables). `scope` is the
    /// one the union's columns are added to.
    pub(crate) fn plan_query_parts(
        &mut self,
        q: &Query,
        scope: &Scope,
        top: bool,
        scope_of: &mut dyn FnMut(&Self, &SingleQuery) -> Result<Scope>,
    ) -> Result<(Op, Scope, Option<Cols>)> {
        if q.unions.is_empty() {
            let start = scope_of(self, &q.first)?;
            return self.plan_clauses(&q.first.clauses, Op::Argument, start, top);
        }
        let all = q.unions[0].0;
        if q.unions.iter().any(|(a, _)| *a != all) {
            return Err(self.syntax(
                q.span,
                "InvalidClauseComposition",
                "Invalid combination of UNION and UNION ALL",
            ));
        }
        let mut branches = Vec::new();
        let mut names: Option<Vec<String>> = None;
        for part in std::iter::once(&q.first).chain(q.unions.iter().map(|(_, p)| p)) {
            let start = scope_of(self, part)?;
            let (op, _, cols) = self.plan_clauses(&part.clauses, Op::Argument, start, top)?;
            let Some(cols) = cols else {
                return Err(self.syntax(
                    part.span,
                    "InvalidClauseComposition",
                    "All sub queries in an UNION must end with a RETURN clause",
                ));
            };
            let these: Vec<String> = cols.iter().map(|(n, _)| n.clone()).collect();
            if let Some(prev) = &names {
                if *prev != these {
                    return Err(self.syntax(
                        part.span,
                        "DifferentColumnsInUnion",
                        "All sub queries in an UNION must have the same return column names",
                    ));
                }
            } else {
                names = Some(these);
            }
            branches.push((op, cols.iter().map(|(_, s)| *s).collect::<Vec<_>>()));
        }
        let names = names.unwrap_or_default();
        let out: Vec<Slot> = names.iter().map(|_| self.slot()).collect();
        let mut op = Op::Union { branches, out: out.clone() };
        if !all {
            op = Op::Distinct { input: Box::new(op), slots: out.clone() };
        }
        let cols: Cols = names.into_iter().zip(out).collect();
        let mut new_scope = scope.clone();
        for (n, s) in &cols {
            new_scope.bind(Arc::from(n.as_str()), *s, Kind::Any);
        }
        Ok((op, new_scope, Some(cols)))
    }

    pub(crate) fn plan_clauses(
        &mut self,
        clauses: &[Clause],
        mut op: Op,
        mut scope: Scope,
        top: bool,
    ) -> Result<(Op, Scope, Option<Cols>)> {
        let mut cols = None;
        for (i, clause) in clauses.iter().enumerate() {
            if cols.is_some() {
                return Err(self.syntax(
                    clause.span,
                    "InvalidClauseComposition",
                    "RETURN can only be used at the end of the query",
                ));
            }
            match &clause.kind {
                ClauseKind::Match { optional, pattern, where_ } => {
                    op = self.plan_match_clause(
                        op,
                        &mut scope,
                        *optional,
                        pattern,
                        where_.as_ref(),
                    )?;
                }
                ClauseKind::Unwind { expr, variable } => {
                    let e = self.bind_expr(expr, &scope)?;
                    if scope.get(&variable.name).is_some() {
                        return Err(self.already_bound(variable));
                    }
                    let slot = self.slot();
                    op = Op::Unwind { input: Box::new(op), expr: e, slot };
                    scope.bind(variable.name.clone(), slot, Kind::Any);
                }
                ClauseKind::With(p) => {
                    let (o, s, _) = self.plan_projection(op, &scope, p, false, clause.span)?;
                    op = o;
                    scope = s;
                }
                ClauseKind::Return(p) => {
                    let (o, s, c) = self.plan_projection(op, &scope, p, true, clause.span)?;
                    op = o;
                    scope = s;
                    cols = Some(c);
                }
                ClauseKind::Create { pattern } => {
                    self.write = true;
                    let steps = self.plan_create(&mut scope, pattern, None)?;
                    op = Op::Create { input: Box::new(op), steps };
                }
                ClauseKind::Merge { pattern, actions } => {
                    self.write = true;
                    self.read = true;
                    op = self.plan_merge(op, &mut scope, pattern, actions)?;
                }
                ClauseKind::Set { items } => {
                    self.write = true;
                    let items = self.bind_set_items(items, &scope)?;
                    op = Op::Set { input: Box::new(op), items };
                }
                ClauseKind::Remove { items } => {
                    self.write = true;
                    let items = self.bind_remove_items(items, &scope)?;
                    op = Op::Set { input: Box::new(op), items };
                }
                ClauseKind::Delete { detach, exprs } => {
                    op = self.plan_delete(op, &scope, *detach, exprs)?;
                }
                ClauseKind::Foreach { variable, list, clauses } => {
                    op = self.plan_foreach(op, &scope, variable, list, clauses)?;
                }
                ClauseKind::CallProcedure { name, args, yield_, optional: true }
                    if !(top && clauses.len() == 1 && yield_.is_none()) =>
                {
                    // Nulls for the yielded columns when the call yields no row (a standalone
                    // call streams its rows as they are).
                    self.read = true;
                    let (inner, c) = self.plan_call(
                        Op::Argument,
                        &mut scope,
                        name,
                        args.as_deref(),
                        yield_,
                        false,
                    )?;
                    let slots = c.iter().map(|(_, s)| *s).collect();
                    op = Op::Optional { input: Box::new(op), inner: Box::new(inner), slots };
                }
                ClauseKind::CallProcedure { name, args, yield_, .. } => {
                    self.read = true;
                    let standalone = top && clauses.len() == 1;
                    let (o, c) =
                        self.plan_call(op, &mut scope, name, args.as_deref(), yield_, standalone)?;
                    op = o;
                    if standalone {
                        cols = Some(c);
                    }
                }
                ClauseKind::CallSubquery { scope: vars, optional, body, in_transactions } => {
                    let call = SubqueryCall {
                        vars: vars.as_ref(),
                        optional: *optional,
                        body,
                        in_transactions: in_transactions.as_ref(),
                        span: clause.span,
                    };
                    op = self.plan_call_subquery(op, &mut scope, &call, top)?;
                }
                ClauseKind::Finish => {
                    if i + 1 < clauses.len() {
                        return Err(self.syntax(
                            clause.span,
                            "InvalidClauseComposition",
                            "FINISH can only be used at the end of the query.",
                        ));
                    }
                }
                ClauseKind::LoadCsv { with_headers, url, variable, field_terminator } => {
                    let load = load_csv::LoadCsvClause {
                        headers: *with_headers,
                        url,
                        variable,
                        terminator: field_terminator.as_deref(),
                        span: clause.span,
                    };
                    op = self.plan_load_csv(op, &mut scope, &load)?;
                }
            }
        }
        if top && cols.is_none() {
            self.check_query_end(clauses)?;
        }
        Ok((op, scope, cols))
    }

    /// `MATCH` or `OPTIONAL MATCH` (an `Optional` over the pattern planned on the argument row).
    fn plan_match_clause(
        &mut self,
        mut op: Op,
        scope: &mut Scope,
        optional: bool,
        pattern: &[PatternPart],
        where_: Option<&Expr>,
    ) -> Result<Op> {
        self.read = true;
        if optional {
            let mut inner_scope = scope.clone();
            let inner = self.plan_match(Op::Argument, &mut inner_scope, pattern, where_)?;
            let before = scope.slots();
            let mut slots: Vec<Slot> = inner_scope
                .vars
                .iter()
                .map(|(_, s, _)| *s)
                .filter(|s| !before.contains(s))
                .collect();
            slots.sort_unstable();
            op = Op::Optional { input: Box::new(op), inner: Box::new(inner), slots };
            *scope = inner_scope;
        } else {
            op = self.plan_match(op, scope, pattern, where_)?;
        }
        Ok(op)
    }

    /// `[DETACH] DELETE`: only expressions that can denote an entity (or null).
    fn plan_delete(
        &mut self,
        mut op: Op,
        scope: &Scope,
        detach: bool,
        exprs: &[Expr],
    ) -> Result<Op> {
        self.write = true;
        let mut bound = Vec::new();
        for e in exprs {
            if !matches!(
                e.kind,
                ExprKind::Variable(_)
                    | ExprKind::Property(..)
                    | ExprKind::Index(..)
                    | ExprKind::Function { .. }
                    | ExprKind::Literal(Literal::Null)
                    | ExprKind::Parameter(_)
            ) {
                return Err(self.syntax(
                    e.span,
                    "InvalidDelete",
                    "Type mismatch: expected Node, Path or Relationship",
                ));
            }
            if let ExprKind::Variable(v) = &e.kind {
                if let Some((_, k)) = scope.get(v) {
                    if k == Kind::RelList {
                        // Deleting a list of relationships is allowed.
                    }
                }
            }
            bound.push(self.bind_expr(e, scope)?);
        }
        op = Op::Delete { input: Box::new(op), exprs: bound, detach };
        Ok(op)
    }

    /// `FOREACH (v IN list | updates)`: only updating clauses in the body.
    fn plan_foreach(
        &mut self,
        mut op: Op,
        scope: &Scope,
        variable: &ast::Ident,
        list: &Expr,
        clauses: &[Clause],
    ) -> Result<Op> {
        self.write = true;
        let l = self.bind_expr(list, scope)?;
        let slot = self.slot();
        let mut inner = scope.clone();
        inner.bind(variable.name.clone(), slot, Kind::Any);
        for c in clauses {
            if !is_updating(&c.kind) {
                return Err(self.syntax(
                    c.span,
                    "InvalidClauseComposition",
                    "Only updating clauses are allowed in FOREACH",
                ));
            }
        }
        let (body, _, _) = self.plan_clauses(clauses, Op::Argument, inner, false)?;
        op = Op::Foreach { input: Box::new(op), slot, list: l, body: Box::new(body) };
        Ok(op)
    }

    /// A top-level query without RETURN must end with an update, a unit subquery or a
    /// procedure call.
    fn check_query_end(&self, clauses: &[Clause]) -> Result<()> {
        if let Some(last) = clauses.last() {
            // An OPTIONAL CALL with YIELD is never a standalone call (Neo4j 5.26).
            let ok = is_updating(&last.kind)
                || matches!(
                    last.kind,
                    ClauseKind::CallProcedure { optional: false, .. }
                        | ClauseKind::CallProcedure { yield_: None, .. }
                        | ClauseKind::CallSubquery { .. }
                        | ClauseKind::Finish
                );
            if !ok {
                let what = match &last.kind {
                    ClauseKind::Match { optional: true, .. } => "OPTIONAL MATCH",
                    ClauseKind::Match { .. } => "MATCH",
                    ClauseKind::With(_) => "WITH",
                    ClauseKind::Unwind { .. } => "UNWIND",
                    ClauseKind::LoadCsv { .. } => "LOAD CSV",
                    ClauseKind::CallProcedure { .. } => "CALL",
                    _ => "this clause",
                };
                return Err(self.syntax(
                    last.span,
                    "InvalidClauseComposition",
                    format!(
                        "Query cannot conclude with {what} (must be a RETURN clause, a FINISH \
                         clause, an update clause, a unit subquery call, or a procedure call \
                         with no YIELD)."
                    ),
                ));
            }
        }
        Ok(())
    }
}
