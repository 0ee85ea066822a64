//! The binder: scopes, variable resolution, semantic checks and plan construction, in one pass
//! over the AST (clause by clause, each clause extending the operator tree built so far).

use std::collections::HashSet;
use std::sync::Arc;

use arbor_cypher_syntax::ast::{
    self, BinaryOp, Clause, ClauseKind, CompareOp, Direction, Expr, ExprKind, Literal,
    MapProjectionItem, PathSelector, PatternElement, PatternPart, Projection, Query, RemoveItem,
    SetItem, Span, Statement, UnaryOp,
};
use arbor_model::{Error, Result, Status, Value};

use crate::expr::{
    AggCall, ArithOp, Builtin, MapProjItem, PExpr, PathStep, Slot, StringOp, SubqueryKind,
};
use crate::ops::{CreateStep, Name, Op, SeekRange, SetOp};
use crate::{is_aggregate, Plan, Resolver};

/// What the binder knows about a variable's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Node,
    Rel,
    RelList,
    Path,
    /// A value known not to be a node, relationship or path (a literal, arithmetic, ...).
    Value,
    /// A list (possibly of relationships, usable as a bound variable-length relationship).
    List,
    /// Known statically to be a string (a literal), a boolean, or a number: property access or
    /// arithmetic on them can be rejected at compile time, as Neo4j's semantic analysis does.
    Str,
    Bool,
    Num,
    /// A computed value whose type is unknown at compile time.
    Any,
}

/// What the binder can tell about an expression's type without running it.
fn static_kind(e: &PExpr, scope: &Scope) -> Kind {
    match e {
        PExpr::Slot(s) => {
            scope.vars.iter().rev().find(|(_, x, _)| x == s).map(|v| v.2).unwrap_or(Kind::Any)
        }
        PExpr::Const(Value::Null) => Kind::Any,
        PExpr::Const(Value::String(_)) => Kind::Str,
        PExpr::Const(Value::Bool(_)) => Kind::Bool,
        PExpr::Const(Value::Int(_) | Value::Float(_)) => Kind::Num,
        PExpr::Compare(..)
        | PExpr::Not(_)
        | PExpr::And(..)
        | PExpr::Or(..)
        | PExpr::Xor(..)
        | PExpr::IsNull(..)
        | PExpr::Str(..)
        | PExpr::HasLabels(..) => Kind::Bool,
        PExpr::Const(_)
        | PExpr::Map(_)
        | PExpr::In(..)
        | PExpr::Arith(..)
        | PExpr::ListComp { .. }
        | PExpr::MapProjection { .. } => Kind::Value,
        PExpr::Path(_) => Kind::Path,
        PExpr::List(_) => Kind::List,
        _ => Kind::Any,
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Node => "Node",
        Kind::Rel => "Relationship",
        Kind::RelList => "List<Relationship>",
        Kind::Path => "Path",
        Kind::Value => "a value",
        Kind::List => "List",
        Kind::Str => "String",
        Kind::Bool => "Boolean",
        Kind::Num => "Number",
        Kind::Any => "Any",
    }
}

/// The kind every element of a literal list shares, if they all share one (for the variable of
/// a quantifier or comprehension over it).
fn element_kind(list: &PExpr, scope: &Scope) -> Kind {
    let PExpr::List(items) = list else { return Kind::Any };
    let mut kinds = items.iter().map(|i| match i {
        PExpr::Const(_) => static_kind(i, scope),
        _ => Kind::Any,
    });
    let Some(first) = kinds.next() else { return Kind::Any };
    if matches!(first, Kind::Str | Kind::Bool | Kind::Num) && kinds.all(|k| k == first) {
        first
    } else {
        Kind::Any
    }
}

#[derive(Clone, Default, Debug)]
struct Scope {
    vars: Vec<(Arc<str>, Slot, Kind)>,
}

impl Scope {
    fn get(&self, name: &str) -> Option<(Slot, Kind)> {
        self.vars.iter().rev().find(|(n, _, _)| &**n == name).map(|(_, s, k)| (*s, *k))
    }

    fn bind(&mut self, name: Arc<str>, slot: Slot, kind: Kind) {
        self.vars.retain(|(n, _, _)| *n != name);
        self.vars.push((name, slot, kind));
    }

    fn slots(&self) -> HashSet<Slot> {
        self.vars.iter().map(|(_, s, _)| *s).collect()
    }
}

/// Aggregate extraction state while binding an aggregating projection.
struct AggCtx {
    /// Normalized expression text of each grouping key (and projected aggregate item).
    keys: Vec<(String, Slot)>,
    aggs: Vec<(Slot, AggCall)>,
    agg_texts: Vec<(String, Slot)>,
    /// The scope before the projection, where aggregate arguments are bound.
    pre: Scope,
}

pub(crate) fn plan_statement(stmt: &Statement, text: &str, res: &dyn Resolver) -> Result<Plan> {
    let (query, explain, profile) = match stmt {
        Statement::Query(q) => (q, false, false),
        Statement::Explain(inner) => match &**inner {
            Statement::Query(q) => (q, true, false),
            _ => return Err(Error::syntax("EXPLAIN needs a query")),
        },
        Statement::Profile(inner) => match &**inner {
            Statement::Query(q) => (q, false, true),
            _ => return Err(Error::syntax("PROFILE needs a query")),
        },
        Statement::Schema(_) | Statement::Show(_) | Statement::Admin(_) => {
            return Err(Error::internal("schema and SHOW commands are not planned by cypher-plan"))
        }
    };
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
    };
    let (root, _, cols) = b.plan_query(query, &Scope::default(), true)?;
    let root = crate::prune::rewrite(root);
    let cols = cols.unwrap_or_default();
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
    })
}

struct Binder<'a> {
    text: &'a str,
    res: &'a dyn Resolver,
    nslots: usize,
    params: Vec<Arc<str>>,
    /// How many parameter expressions were bound per parameter (see [`Plan::param_uses`]).
    param_uses: Vec<u32>,
    write: bool,
    read: bool,
    agg: Option<AggCtx>,
    /// Whether a pattern predicate is allowed at this point (WHERE, under boolean operators).
    pred_ctx: bool,
}

/// Node and relationship slots of one declared pattern part.
struct PartSlots {
    nodes: Vec<Slot>,
    rels: Vec<Slot>,
    /// Whether each node slot was bound before the clause.
    nodes_pre: Vec<bool>,
    rels_pre: Vec<bool>,
    path: Option<Slot>,
}

type Cols = Vec<(String, Slot)>;

fn name(id: &ast::Ident) -> Name {
    id.name.clone()
}

fn and(a: PExpr, b: PExpr) -> PExpr {
    PExpr::And(Box::new(a), Box::new(b))
}

fn prop_eq(target: PExpr, key: Name, value: PExpr) -> PExpr {
    PExpr::Compare(Box::new(PExpr::Property(Box::new(target), key)), vec![(CompareOp::Eq, value)])
}

/// Visits `e` and its sub-expressions (not entering subqueries); `f` returns false to stop
/// descending below a node.
fn walk_ast(e: &Expr, f: &mut dyn FnMut(&Expr) -> bool) {
    if !f(e) {
        return;
    }
    let mut go = |x: &Expr| walk_ast(x, f);
    match &e.kind {
        ExprKind::Literal(_)
        | ExprKind::Parameter(_)
        | ExprKind::Variable(_)
        | ExprKind::CountStar
        | ExprKind::PatternPredicate(_)
        | ExprKind::Exists(_)
        | ExprKind::CountSubquery(_)
        | ExprKind::CollectSubquery(_) => {}
        ExprKind::Property(a, _)
        | ExprKind::Unary(_, a)
        | ExprKind::IsNull { expr: a, .. }
        | ExprKind::HasLabels(a, _) => go(a),
        ExprKind::List(xs) => xs.iter().for_each(go),
        ExprKind::Function { args, .. } => args.iter().for_each(go),
        ExprKind::Map(xs) => xs.iter().for_each(|(_, x)| go(x)),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            go(a);
            go(b);
        }
        ExprKind::Compare(a, rest) => {
            go(a);
            rest.iter().for_each(|(_, x)| go(x));
        }
        ExprKind::Slice { expr, from, to } => {
            go(expr);
            if let Some(x) = from {
                go(x);
            }
            if let Some(x) = to {
                go(x);
            }
        }
        ExprKind::Case { operand, whens, else_ } => {
            if let Some(x) = operand {
                go(x);
            }
            for (w, t) in whens {
                go(w);
                go(t);
            }
            if let Some(x) = else_ {
                go(x);
            }
        }
        ExprKind::ListComprehension { list, filter, map, .. } => {
            go(list);
            if let Some(x) = filter {
                go(x);
            }
            if let Some(x) = map {
                go(x);
            }
        }
        ExprKind::PatternComprehension { filter, map, .. } => {
            if let Some(x) = filter {
                go(x);
            }
            go(map);
        }
        ExprKind::Quantified { list, filter, .. } => {
            go(list);
            go(filter);
        }
        ExprKind::Reduce { init, list, expr, .. } => {
            go(init);
            go(list);
            go(expr);
        }
        ExprKind::MapProjection { items, .. } => {
            for it in items {
                if let MapProjectionItem::Literal(_, x) = it {
                    go(x);
                }
            }
        }
    }
}

fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    walk_ast(e, &mut |x| {
        match &x.kind {
            ExprKind::CountStar => found = true,
            ExprKind::Function { name, .. } if is_aggregate(&name.dotted().to_lowercase()) => {
                found = true
            }
            _ => {}
        }
        !found
    });
    found
}

fn has_subquery(e: &Expr) -> bool {
    let mut found = false;
    walk_ast(e, &mut |x| {
        match &x.kind {
            ExprKind::PatternPredicate(_)
            | ExprKind::PatternComprehension { .. }
            | ExprKind::Exists(_)
            | ExprKind::CountSubquery(_)
            | ExprKind::CollectSubquery(_) => found = true,
            _ => {}
        }
        !found
    });
    found
}

/// Whether the plan so far reads the graph (above the last `Eager`).
fn reads_graph(op: &Op) -> bool {
    match op {
        Op::Eager { .. } => false,
        Op::NodeScan { .. }
        | Op::NodeIndexSeek { .. }
        | Op::NodeIndexRangeSeek { .. }
        | Op::RelIndexSeek { .. }
        | Op::NodeCountFromCountStore { .. }
        | Op::RelationshipCountFromCountStore { .. }
        | Op::Expand { .. }
        | Op::VarExpand { .. }
        | Op::PruningVarExpand { .. }
        | Op::ShortestPath { .. }
        | Op::Merge { .. }
        | Op::ProcedureCall { .. }
        | Op::Optional { .. }
        | Op::Apply { .. }
        | Op::Union { .. } => true,
        _ => op.children().into_iter().any(reads_graph),
    }
}

fn eager(op: Op) -> Op {
    if reads_graph(&op) {
        Op::Eager { input: Box::new(op) }
    } else {
        op
    }
}

fn is_updating(kind: &ClauseKind) -> bool {
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

fn is_reading(kind: &ClauseKind) -> bool {
    matches!(
        kind,
        ClauseKind::Match { .. }
            | ClauseKind::Merge { .. }
            | ClauseKind::CallProcedure { .. }
            | ClauseKind::CallSubquery { .. }
    )
}

impl<'a> Binder<'a> {
    fn slot(&mut self) -> Slot {
        self.nslots += 1;
        self.nslots - 1
    }

    fn err(
        &self,
        span: Span,
        status: Status,
        detail: &'static str,
        msg: impl Into<String>,
    ) -> Error {
        let offset = span.start.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
        Error::new(status, format!("{} (line {line}, column {col} (offset: {offset}))", msg.into()))
            .with_detail(detail)
    }

    fn syntax(&self, span: Span, detail: &'static str, msg: impl Into<String>) -> Error {
        self.err(span, Status::SyntaxError, detail, msg)
    }

    /// The expression's text without whitespace, for matching ORDER BY/aggregate expressions
    /// against projection items.
    fn norm(&self, span: Span) -> String {
        self.text
            .get(span.start..span.end)
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    }

    fn param(&mut self, name: &Arc<str>) -> usize {
        if let Some(i) = self.params.iter().position(|p| p == name) {
            if let Some(u) = self.param_uses.get_mut(i) {
                *u += 1;
            }
            return i;
        }
        self.params.push(name.clone());
        self.param_uses.push(1);
        self.params.len() - 1
    }

    // ------------------------------------------------------------------ queries and clauses

    /// Plans a (possibly UNION) query whose argument rows carry `scope`.
    fn plan_query(
        &mut self,
        q: &Query,
        scope: &Scope,
        top: bool,
    ) -> Result<(Op, Scope, Option<Cols>)> {
        if q.unions.is_empty() {
            return self.plan_clauses(&q.first.clauses, Op::Argument, scope.clone(), top);
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
            let (op, _, cols) =
                self.plan_clauses(&part.clauses, Op::Argument, scope.clone(), top)?;
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

    fn plan_clauses(
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
            let next_reads = clauses[i + 1..].iter().any(|c| is_reading(&c.kind));
            match &clause.kind {
                ClauseKind::Match { optional, pattern, where_ } => {
                    self.read = true;
                    if *optional {
                        let mut inner_scope = scope.clone();
                        let inner = self.plan_match(
                            Op::Argument,
                            &mut inner_scope,
                            pattern,
                            where_.as_ref(),
                        )?;
                        let before = scope.slots();
                        let mut slots: Vec<Slot> = inner_scope
                            .vars
                            .iter()
                            .map(|(_, s, _)| *s)
                            .filter(|s| !before.contains(s))
                            .collect();
                        slots.sort_unstable();
                        op = Op::Optional { input: Box::new(op), inner: Box::new(inner), slots };
                        scope = inner_scope;
                    } else {
                        op = self.plan_match(op, &mut scope, pattern, where_.as_ref())?;
                    }
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
                    op = eager(op);
                    let steps = self.plan_create(&mut scope, pattern, None)?;
                    op = Op::Create { input: Box::new(op), steps };
                }
                ClauseKind::Merge { pattern, actions } => {
                    self.write = true;
                    self.read = true;
                    op = eager(op);
                    op = self.plan_merge(op, &mut scope, pattern, actions)?;
                }
                ClauseKind::Set { items } => {
                    self.write = true;
                    op = eager(op);
                    let items = self.bind_set_items(items, &scope)?;
                    op = Op::Set { input: Box::new(op), items };
                }
                ClauseKind::Remove { items } => {
                    self.write = true;
                    op = eager(op);
                    let items = self.bind_remove_items(items, &scope)?;
                    op = Op::Set { input: Box::new(op), items };
                }
                ClauseKind::Delete { detach, exprs } => {
                    self.write = true;
                    op = eager(op);
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
                        bound.push(self.bind_expr(e, &scope)?);
                    }
                    op = Op::Delete { input: Box::new(op), exprs: bound, detach: *detach };
                }
                ClauseKind::Foreach { variable, list, clauses } => {
                    self.write = true;
                    op = eager(op);
                    let l = self.bind_expr(list, &scope)?;
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
                }
                ClauseKind::CallProcedure { name, args, yield_ } => {
                    self.read = true;
                    let standalone = top && clauses.len() == 1;
                    let (o, c) =
                        self.plan_call(op, &mut scope, name, args.as_deref(), yield_, standalone)?;
                    op = o;
                    if standalone {
                        cols = Some(c);
                    }
                }
                ClauseKind::CallSubquery { body, in_transactions } => {
                    self.read = true;
                    let batch = match in_transactions {
                        None => None,
                        Some(_) if !top => {
                            return Err(self.syntax(
                                clause.span,
                                "InvalidClauseComposition",
                                "CALL { ... } IN TRANSACTIONS cannot be nested in a subquery",
                            ))
                        }
                        Some(t) => Some(match &t.batch_rows {
                            Some(e) => {
                                if let ExprKind::Literal(Literal::Int(n)) = e.kind {
                                    if n <= 0 {
                                        return Err(self.err(
                                            e.span,
                                            Status::ArgumentError,
                                            "InvalidArgumentValue",
                                            format!("Invalid input. '{n}' is not a valid value. Must be a positive integer."),
                                        ));
                                    }
                                }
                                self.bind_constant(e, "OF ... ROWS")?
                            }
                            // Neo4j's default batch size.
                            None => PExpr::Const(Value::Int(1000)),
                        }),
                    };
                    if batch.is_some() {
                        // The outer rows are read before the first batch commits.
                        op = Op::Eager { input: Box::new(op) };
                    }
                    let (inner, inner_scope, inner_cols) = self.plan_query(body, &scope, false)?;
                    let _ = inner_scope;
                    match inner_cols {
                        Some(c) => {
                            for (n, s) in &c {
                                if scope.get(n).is_some() {
                                    return Err(self.syntax(
                                        clause.span,
                                        "VariableAlreadyBound",
                                        format!("Variable `{n}` already declared in outer scope"),
                                    ));
                                }
                                scope.bind(Arc::from(n.as_str()), *s, Kind::Any);
                            }
                            op = Op::Apply {
                                input: Box::new(op),
                                inner: Box::new(inner),
                                unit: false,
                                batch,
                            };
                        }
                        None => {
                            op = Op::Apply {
                                input: Box::new(op),
                                inner: Box::new(inner),
                                unit: true,
                                batch,
                            };
                        }
                    }
                }
                ClauseKind::LoadCsv { .. } => {
                    return Err(self.err(
                        clause.span,
                        Status::SemanticError,
                        "UnsupportedClause",
                        "LOAD CSV is not supported",
                    ))
                }
            }
            if is_updating(&clause.kind) && next_reads {
                op = Op::Eager { input: Box::new(op) };
            }
        }
        if top && cols.is_none() {
            if let Some(last) = clauses.last() {
                let ok = is_updating(&last.kind)
                    || matches!(
                        last.kind,
                        ClauseKind::CallProcedure { .. } | ClauseKind::CallSubquery { .. }
                    );
                if !ok {
                    let what = match &last.kind {
                        ClauseKind::Match { optional: true, .. } => "OPTIONAL MATCH",
                        ClauseKind::Match { .. } => "MATCH",
                        ClauseKind::With(_) => "WITH",
                        ClauseKind::Unwind { .. } => "UNWIND",
                        _ => "this clause",
                    };
                    return Err(self.syntax(
                        last.span,
                        "InvalidClauseComposition",
                        format!(
                            "Query cannot conclude with {what} (must be a RETURN clause, an \
                             update clause, a unit subquery call, or a procedure call with no \
                             YIELD)"
                        ),
                    ));
                }
            }
        }
        Ok((op, scope, cols))
    }

    fn already_bound(&self, v: &ast::Ident) -> Error {
        self.syntax(
            v.span,
            "VariableAlreadyBound",
            format!("Variable `{}` already declared", v.name),
        )
    }

    // ------------------------------------------------------------------ projections

    fn plan_projection(
        &mut self,
        mut op: Op,
        scope: &Scope,
        p: &Projection,
        is_return: bool,
        span: Span,
    ) -> Result<(Op, Scope, Cols)> {
        // (column name, expression) — star items are variables of the scope.
        enum Item<'e> {
            Var(Slot, Kind),
            Expr(&'e Expr),
        }
        let mut items: Vec<(String, Item)> = Vec::new();
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
                items.push((n.to_string(), Item::Var(s, k)));
            }
        }
        self.check_order_by_ambiguity(p, scope)?;
        for it in &p.items {
            let col = match &it.alias {
                Some(a) => a.name.to_string(),
                None => {
                    if !is_return && !matches!(it.expr.kind, ExprKind::Variable(_)) {
                        return Err(self.syntax(
                            it.expr.span,
                            "NoExpressionAlias",
                            "Expression in WITH must be aliased (use AS)",
                        ));
                    }
                    match &it.expr.kind {
                        ExprKind::Variable(v) => v.to_string(),
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
            items.push((col, Item::Expr(&it.expr)));
        }
        let aggregating =
            items.iter().any(|(_, it)| matches!(it, Item::Expr(e) if contains_aggregate(e)));

        let mut new_scope = Scope::default();
        let mut cols: Cols = Vec::new();
        let mut sort_keys = Vec::new();
        let mut where_pred = None;

        if !aggregating {
            let mut proj = Vec::new();
            for (col, it) in &items {
                let (slot, kind) = match it {
                    Item::Var(s, k) => (*s, *k),
                    Item::Expr(e) => {
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
                    Item::Expr(e) => Some((self.norm(e.span), *s)),
                    Item::Var(..) => None,
                })
                .collect();
            for si in &p.order_by {
                let t = self.norm(si.expr.span);
                let e = match item_texts.iter().find(|(x, _)| !t.is_empty() && *x == t) {
                    Some((_, s)) => PExpr::Slot(*s),
                    None => self.bind_expr(&si.expr, &sort_scope).map_err(|e| {
                        if p.distinct && e.detail == Some("UndefinedVariable") {
                            self.syntax(
                                si.expr.span,
                                "UndefinedVariable",
                                "In a WITH/RETURN with DISTINCT or an aggregation, it is not \
                                 possible to access variables declared before the WITH/RETURN",
                            )
                        } else {
                            e
                        }
                    })?,
                };
                sort_keys.push((e, si.descending));
            }
            if let Some(w) = &p.where_ {
                where_pred = Some(self.bind_pred(w, &sort_scope)?);
            }
            if p.distinct {
                op =
                    Op::Distinct { input: Box::new(op), slots: cols.iter().map(|c| c.1).collect() };
            }
        } else {
            self.agg = Some(AggCtx {
                keys: Vec::new(),
                aggs: Vec::new(),
                agg_texts: Vec::new(),
                pre: scope.clone(),
            });
            let r = self.bind_aggregating(&items_to_exprs(&items), scope, p, &mut new_scope);
            let ctx = self.agg.take();
            let (keys, post, c, sk, wp) = r?;
            let ctx = ctx.ok_or_else(|| Error::internal("aggregation context lost"))?;
            cols = c;
            sort_keys = sk;
            where_pred = wp;
            op = from_count_store(Op::Aggregate { input: Box::new(op), keys, aggs: ctx.aggs });
            if !post.is_empty() {
                op = Op::Project { input: Box::new(op), items: post };
            }
            if p.distinct {
                op =
                    Op::Distinct { input: Box::new(op), slots: cols.iter().map(|c| c.1).collect() };
            }
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
            op = Op::Filter { input: Box::new(op), pred: w };
        }
        return Ok((op, new_scope, cols));

        fn items_to_exprs<'e>(items: &[(String, Item<'e>)]) -> Vec<(String, ItemRef<'e>)> {
            items
                .iter()
                .map(|(n, it)| {
                    (
                        n.clone(),
                        match it {
                            Item::Var(s, k) => ItemRef::Var(*s, *k),
                            Item::Expr(e) => ItemRef::Expr(e),
                        },
                    )
                })
                .collect()
        }
    }

    /// In an aggregating projection, an ORDER BY item that contains an aggregation may refer
    /// only to projected variables, never to expressions over the pre-projection variables
    /// (even when such an expression is itself projected): Neo4j reports
    /// `AmbiguousAggregationExpression`. Checked before the items are bound so it wins over
    /// other projection errors, as in Neo4j.
    fn check_order_by_ambiguity(&self, p: &Projection, scope: &Scope) -> Result<()> {
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

    #[allow(clippy::type_complexity)]
    fn bind_aggregating(
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
            let e = self.bind_expr(&si.expr, new_scope)?;
            sort_keys.push((e, si.descending));
        }
        let mut where_pred = None;
        if let Some(w) = &p.where_ {
            let saved = self.agg.take();
            let r = self.bind_pred(w, new_scope);
            self.agg = saved;
            where_pred = Some(r?);
        }
        Ok((keys, post, cols, sort_keys, where_pred))
    }

    /// SKIP/LIMIT: no variables allowed.
    fn bind_constant(&mut self, e: &Expr, what: &str) -> Result<PExpr> {
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
            ExprKind::Literal(Literal::Float(f)) => {
                return Err(self.syntax(
                    e.span,
                    "InvalidArgumentType",
                    format!(
                    "Invalid input. '{f}' is not a valid value. Must be a non-negative integer."
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

    // ------------------------------------------------------------------ patterns

    /// Declares the variables of pattern parts in `scope` (MATCH semantics), returning slots.
    fn declare_match(
        &mut self,
        scope: &mut Scope,
        parts: &[&PatternPart],
    ) -> Result<Vec<PartSlots>> {
        let pre = scope.slots();
        let mut rels_here: HashSet<Arc<str>> = HashSet::new();
        let mut out = Vec::new();
        for part in parts {
            let el = &part.element;
            let mut ps = PartSlots {
                nodes: Vec::new(),
                rels: Vec::new(),
                nodes_pre: Vec::new(),
                rels_pre: Vec::new(),
                path: None,
            };
            for np in std::iter::once(&el.start).chain(el.chain.iter().map(|(_, n)| n)) {
                let slot = match &np.variable {
                    Some(v) => match scope.get(&v.name) {
                        Some((s, k)) => {
                            if !matches!(k, Kind::Node | Kind::Any) {
                                return Err(self.type_conflict(v, k, "Node"));
                            }
                            s
                        }
                        None => {
                            let s = self.slot();
                            scope.bind(v.name.clone(), s, Kind::Node);
                            s
                        }
                    },
                    None => self.slot(),
                };
                ps.nodes_pre.push(pre.contains(&slot));
                ps.nodes.push(slot);
            }
            for (rp, _) in &el.chain {
                let want = if rp.length.is_some() { Kind::RelList } else { Kind::Rel };
                let slot = match &rp.variable {
                    Some(v) => {
                        if !rels_here.insert(v.name.clone()) {
                            return Err(self.syntax(
                                v.span,
                                "RelationshipUniquenessViolation",
                                format!("Cannot use the same relationship variable '{}' for multiple relationships", v.name),
                            ));
                        }
                        match scope.get(&v.name) {
                            Some((s, k)) => {
                                let ok = if rp.length.is_some() {
                                    matches!(k, Kind::RelList | Kind::List | Kind::Any)
                                } else {
                                    matches!(k, Kind::Rel | Kind::Any)
                                };
                                if !ok {
                                    return Err(self.type_conflict(v, k, "Relationship"));
                                }
                                s
                            }
                            None => {
                                let s = self.slot();
                                scope.bind(v.name.clone(), s, want);
                                s
                            }
                        }
                    }
                    None => self.slot(),
                };
                ps.rels_pre.push(pre.contains(&slot));
                ps.rels.push(slot);
            }
            if let Some(v) = &part.variable {
                if scope.get(&v.name).is_some() {
                    return Err(self.already_bound(v));
                }
                let s = self.slot();
                scope.bind(v.name.clone(), s, Kind::Path);
                ps.path = Some(s);
            }
            out.push(ps);
        }
        Ok(out)
    }

    fn type_conflict(&self, v: &ast::Ident, k: Kind, want: &str) -> Error {
        let have = kind_name(k);
        self.syntax(
            v.span,
            "VariableTypeConflict",
            format!(
                "Type mismatch: `{}` defined with conflicting type {have} (expected {want})",
                v.name
            ),
        )
    }

    fn plan_match(
        &mut self,
        op: Op,
        scope: &mut Scope,
        parts: &[PatternPart],
        where_: Option<&Expr>,
    ) -> Result<Op> {
        let bound_before = scope.slots();
        let refs: Vec<&PatternPart> = parts.iter().collect();
        let slots = self.declare_match(scope, &refs)?;
        self.plan_match_declared(op, scope, &refs, &slots, where_, bound_before)
    }

    fn plan_match_declared(
        &mut self,
        mut op: Op,
        scope: &Scope,
        parts: &[&PatternPart],
        slots: &[PartSlots],
        where_: Option<&Expr>,
        mut bound: HashSet<Slot>,
    ) -> Result<Op> {
        // Conjuncts with the slots they need (None = place last).
        let mut conj: Vec<(PExpr, Option<Vec<Slot>>)> = Vec::new();
        let push = |e: PExpr, conj: &mut Vec<(PExpr, Option<Vec<Slot>>)>| {
            let mut parts = Vec::new();
            e.conjuncts_into(&mut parts);
            for p in parts {
                let mut d = Vec::new();
                let ok = p.deps(&mut d);
                conj.push((p, ok.then_some(d)));
            }
        };
        // Per node: (label names, property equalities) so the start can use them.
        let mut node_props: Vec<Vec<Vec<(Name, PExpr)>>> = Vec::new();
        let mut var_rel_props: Vec<Vec<Vec<(Name, PExpr)>>> = Vec::new();
        for (part, ps) in parts.iter().zip(slots) {
            let el = &part.element;
            let mut np_list = Vec::new();
            for (np, &slot) in
                std::iter::once(&el.start).chain(el.chain.iter().map(|(_, n)| n)).zip(&ps.nodes)
            {
                let props = self.bind_pattern_props(np.properties.as_ref(), scope)?;
                for (k, v) in &props {
                    push(prop_eq(PExpr::Slot(slot), k.clone(), v.clone()), &mut conj);
                }
                np_list.push(props);
                for l in &np.labels {
                    push(PExpr::HasLabels(Box::new(PExpr::Slot(slot)), vec![name(l)]), &mut conj);
                }
                if let Some(w) = &np.where_ {
                    let e = self.bind_pred(w, scope)?;
                    push(e, &mut conj);
                }
            }
            node_props.push(np_list);
            let mut rp_list = Vec::new();
            for ((rp, _), &slot) in el.chain.iter().zip(&ps.rels) {
                let props = self.bind_pattern_props(rp.properties.as_ref(), scope)?;
                if rp.length.is_none() {
                    for (k, v) in &props {
                        push(prop_eq(PExpr::Slot(slot), k.clone(), v.clone()), &mut conj);
                    }
                }
                if let Some(w) = &rp.where_ {
                    let e = self.bind_pred(w, scope)?;
                    push(e, &mut conj);
                }
                rp_list.push(props);
            }
            var_rel_props.push(rp_list);
        }
        if let Some(w) = where_ {
            let e = self.bind_pred(w, scope)?;
            push(e, &mut conj);
        }

        let mut match_rels: Vec<Slot> = Vec::new();
        // Relationships of the clause: each is kept distinct from the others (`unique_with`).
        let rels_in_clause: usize = parts.iter().map(|p| p.element.chain.len()).sum();
        op = place(op, &mut conj, &bound);
        for (pi, (part, ps)) in parts.iter().zip(slots).enumerate() {
            let el = &part.element;
            let node_pats: Vec<&ast::NodePattern> =
                std::iter::once(&el.start).chain(el.chain.iter().map(|(_, n)| n)).collect();
            if part.selector != PathSelector::All {
                op = self.plan_shortest(op, part, ps, &mut bound, &mut conj, &node_pats)?;
                continue;
            }
            // Choose where to start.
            let node_start = ps
                .nodes
                .iter()
                .position(|s| bound.contains(s))
                .or_else(|| {
                    (0..ps.nodes.len()).find(|&i| {
                        !node_pats[i].labels.is_empty()
                            && node_props[pi][i].iter().any(|(_, v)| deps_within(v, &bound))
                    })
                })
                .or_else(|| {
                    (0..ps.nodes.len()).find(|&i| {
                        index_seek_for(&conj, ps.nodes[i], &node_pats[i].labels, &bound, self.res)
                            .is_some()
                    })
                });
            // Else a relationship index seek, which binds a relationship and its two nodes.
            let mut seeked_rel = None;
            if node_start.is_none() {
                if let Some((ri, ty, keys, values, range)) =
                    rel_seek_for(&conj, el, ps, &bound, self.res)
                {
                    let (a, b, r) = (ps.nodes[ri], ps.nodes[ri + 1], ps.rels[ri]);
                    op = Op::RelIndexSeek {
                        input: Box::new(op),
                        rel: r,
                        start: a,
                        end: b,
                        dir: el.chain[ri].0.direction,
                        ty,
                        keys,
                        values,
                        range,
                    };
                    bound.insert(a);
                    bound.insert(b);
                    bound.insert(r);
                    match_rels.push(r);
                    op = place(op, &mut conj, &bound);
                    seeked_rel = Some(ri);
                }
            }
            let start = match seeked_rel {
                Some(ri) => ri + 1,
                None => node_start
                    .or_else(|| (0..ps.nodes.len()).find(|&i| !node_pats[i].labels.is_empty()))
                    .unwrap_or(0),
            };
            let s_slot = ps.nodes[start];
            if !bound.contains(&s_slot) {
                let np = node_pats[start];
                let seek = node_props[pi][start]
                    .iter()
                    .find(|(_, v)| deps_within(v, &bound))
                    .filter(|_| !np.labels.is_empty());
                if let Some(label) = np.labels.first() {
                    take_conj(&mut conj, |e| is_label_check(e, s_slot, label));
                }
                let found = index_seek_for(&conj, s_slot, &np.labels, &bound, self.res);
                let composite = matches!(
                    &found,
                    Some((
                        _,
                        _,
                        Found::Seek(SeekRange::Composite { .. } | SeekRange::CompositeRange { .. })
                    ))
                );
                let seek = seek.filter(|_| !composite);
                if let (Some((key, value)), Some(label)) = (seek, np.labels.first()) {
                    take_conj(&mut conj, |e| is_prop_eq(e, s_slot, key));
                    op = Op::NodeIndexSeek {
                        input: Box::new(op),
                        slot: s_slot,
                        label: name(label),
                        key: key.clone(),
                        value: value.clone(),
                    };
                } else if let Some((label, key, found)) = found {
                    // The predicates stay in `conj` (placed as a filter right above): the seek
                    // only narrows the candidates, so results are the scan's exactly.
                    if label != np.labels[0].name {
                        take_conj(&mut conj, |e| {
                            matches!(e, PExpr::HasLabels(b, ls)
                                if matches!(**b, PExpr::Slot(x) if x == s_slot)
                                    && ls.len() == 1 && ls[0] == label)
                        });
                        push(
                            PExpr::HasLabels(
                                Box::new(PExpr::Slot(s_slot)),
                                vec![np.labels[0].name.clone()],
                            ),
                            &mut conj,
                        );
                    }
                    op = match found {
                        Found::Eq(value) => Op::NodeIndexSeek {
                            input: Box::new(op),
                            slot: s_slot,
                            label,
                            key,
                            value,
                        },
                        Found::Seek(seek) => Op::NodeIndexRangeSeek {
                            input: Box::new(op),
                            slot: s_slot,
                            label,
                            key,
                            seek,
                        },
                    };
                } else {
                    op = Op::NodeScan {
                        input: Box::new(op),
                        slot: s_slot,
                        label: np.labels.first().map(name),
                    };
                }
                bound.insert(s_slot);
                op = place(op, &mut conj, &bound);
            }
            // Expand to the right, then to the left (against the pattern direction).
            let order: Vec<(usize, bool)> = (start..el.chain.len())
                .map(|i| (i, false))
                .chain((0..start).rev().map(|i| (i, true)))
                .filter(|(i, _)| Some(*i) != seeked_rel)
                .collect();
            for (i, backwards) in order {
                let rp = &el.chain[i].0;
                let (from, to) = if backwards {
                    (ps.nodes[i + 1], ps.nodes[i])
                } else {
                    (ps.nodes[i], ps.nodes[i + 1])
                };
                let dir = if backwards { flip(rp.direction) } else { rp.direction };
                let rel = ps.rels[i];
                let types: Vec<Name> = rp.types.iter().map(name).collect();
                let into = bound.contains(&to);
                match rp.length {
                    None => {
                        op = Op::Expand {
                            input: Box::new(op),
                            from,
                            rel,
                            to,
                            dir,
                            types,
                            into,
                            rel_bound: ps.rels_pre[i],
                            unique_with: match_rels.clone(),
                        };
                    }
                    Some((min, max)) => {
                        op = Op::VarExpand {
                            input: Box::new(op),
                            from,
                            rel,
                            to,
                            dir,
                            types,
                            min: min.unwrap_or(1),
                            max,
                            into,
                            unique_with: match_rels.clone(),
                            rel_props: var_rel_props[pi][i].clone(),
                            reversed: backwards,
                            rel_bound: ps.rels_pre[i],
                            list_unused: rp.variable.is_none()
                                && ps.path.is_none()
                                && rels_in_clause == 1,
                        };
                    }
                }
                match_rels.push(rel);
                bound.insert(rel);
                bound.insert(to);
                op = place(op, &mut conj, &bound);
            }
            if let Some(p) = ps.path {
                op = Op::Project { input: Box::new(op), items: vec![(p, path_expr(el, ps))] };
                bound.insert(p);
                op = place(op, &mut conj, &bound);
            }
        }
        // Whatever is left (subqueries, or anything not yet placeable).
        let rest: Vec<PExpr> = conj.drain(..).map(|(e, _)| e).collect();
        if let Some(pred) = rest.into_iter().reduce(and) {
            op = Op::Filter { input: Box::new(op), pred };
        }
        Ok(op)
    }

    fn plan_shortest(
        &mut self,
        mut op: Op,
        part: &PatternPart,
        ps: &PartSlots,
        bound: &mut HashSet<Slot>,
        conj: &mut Vec<(PExpr, Option<Vec<Slot>>)>,
        node_pats: &[&ast::NodePattern],
    ) -> Result<Op> {
        let el = &part.element;
        if el.chain.len() != 1 {
            return Err(self.syntax(
                part.span,
                "InvalidArgumentType",
                "shortestPath(..) requires a pattern containing a single relationship",
            ));
        }
        for (i, &s) in ps.nodes.iter().enumerate() {
            if !bound.contains(&s) {
                op = Op::NodeScan {
                    input: Box::new(op),
                    slot: s,
                    label: node_pats[i].labels.first().map(name),
                };
                bound.insert(s);
                op = place(op, conj, bound);
            }
        }
        let rp = &el.chain[0].0;
        let (min, max) = rp.length.unwrap_or((Some(1), Some(1)));
        let path = match ps.path {
            Some(p) => p,
            None => self.slot(),
        };
        let rel = rp.variable.as_ref().map(|_| ps.rels[0]);
        op = Op::ShortestPath {
            input: Box::new(op),
            from: ps.nodes[0],
            to: ps.nodes[1],
            path,
            rel,
            dir: rp.direction,
            types: rp.types.iter().map(name).collect(),
            min: min.unwrap_or(1),
            max,
            all: part.selector == PathSelector::AllShortestPaths,
        };
        bound.insert(path);
        bound.insert(ps.rels[0]);
        Ok(place(op, conj, bound))
    }

    fn bind_pattern_props(
        &mut self,
        props: Option<&Expr>,
        scope: &Scope,
    ) -> Result<Vec<(Name, PExpr)>> {
        let Some(p) = props else { return Ok(Vec::new()) };
        match &p.kind {
            ExprKind::Map(entries) => {
                let mut out = Vec::new();
                for (k, v) in entries {
                    out.push((name(k), self.bind_expr(v, scope)?));
                }
                Ok(out)
            }
            ExprKind::Parameter(_) => Err(self.syntax(
                p.span,
                "InvalidParameterUse",
                "Parameter maps cannot be used in MATCH patterns (use a literal map instead, e.g. {id: $param.id})",
            )),
            _ => Err(self.syntax(p.span, "InvalidArgumentType", "Expected a map of properties")),
        }
    }

    /// CREATE (and MERGE's create half). With `declared`, variables were declared by MERGE's
    /// matcher and their slots are reused.
    fn plan_create(
        &mut self,
        scope: &mut Scope,
        parts: &[PatternPart],
        declared: Option<(&[PartSlots], &Scope)>,
    ) -> Result<Vec<CreateStep>> {
        let mut steps = Vec::new();
        let pre = scope.clone();
        for (pi, part) in parts.iter().enumerate() {
            let el = &part.element;
            let mut nodes = Vec::new();
            let mut created: HashSet<Slot> = HashSet::new();
            for (ni, np) in
                std::iter::once(&el.start).chain(el.chain.iter().map(|(_, n)| n)).enumerate()
            {
                let existing = np.variable.as_ref().and_then(|v| scope.get(&v.name));
                let slot = match existing {
                    Some((s, k)) => {
                        let v = np.variable.as_ref().ok_or_else(|| Error::internal("var"))?;
                        let was_pre = pre.get(&v.name).is_some()
                            && declared.map(|(_, ms)| ms.get(&v.name).is_some()).unwrap_or(true);
                        if !matches!(k, Kind::Node | Kind::Any) {
                            return Err(self.type_conflict(v, k, "Node"));
                        }
                        let fresh_in_merge =
                            declared.map(|(d, _)| !d[pi].nodes_pre[ni]).unwrap_or(false);
                        if fresh_in_merge {
                            if created.insert(s) {
                                steps.push(self.create_node_step(s, np, scope)?);
                            }
                        } else if (!np.labels.is_empty()
                            || np.properties.is_some()
                            || el.chain.is_empty())
                            && was_pre
                        {
                            return Err(self.already_bound(v));
                        }
                        s
                    }
                    None => {
                        let s = match declared {
                            Some((d, _)) => d[pi].nodes[ni],
                            None => self.slot(),
                        };
                        if let Some(v) = &np.variable {
                            scope.bind(v.name.clone(), s, Kind::Node);
                        }
                        created.insert(s);
                        steps.push(self.create_node_step(s, np, scope)?);
                        s
                    }
                };
                nodes.push(slot);
            }
            let mut rels = Vec::new();
            for (ri, (rp, _)) in el.chain.iter().enumerate() {
                // A bound relationship variable is reported before any other problem of the
                // relationship pattern (as Neo4j does).
                if let (Some(v), None) = (&rp.variable, declared) {
                    if scope.get(&v.name).is_some() {
                        return Err(self.already_bound(v));
                    }
                }
                if rp.length.is_some() {
                    return Err(self.syntax(
                        rp.span,
                        "CreatingVarLength",
                        "Variable length relationships cannot be used in CREATE",
                    ));
                }
                if rp.types.len() != 1 {
                    return Err(self.syntax(
                        rp.span,
                        "NoSingleRelationshipType",
                        "A single relationship type must be specified for CREATE",
                    ));
                }
                if rp.direction == Direction::Both && declared.is_none() {
                    return Err(self.syntax(
                        rp.span,
                        "RequiresDirectedRelationship",
                        "Only directed relationships are supported in CREATE",
                    ));
                }
                let slot = match (&rp.variable, declared) {
                    (_, Some((d, _))) => {
                        if d[pi].rels_pre[ri] {
                            let v = rp.variable.as_ref().ok_or_else(|| Error::internal("rel"))?;
                            return Err(self.already_bound(v));
                        }
                        d[pi].rels[ri]
                    }
                    (Some(v), None) => {
                        if scope.get(&v.name).is_some() {
                            return Err(self.already_bound(v));
                        }
                        let s = self.slot();
                        scope.bind(v.name.clone(), s, Kind::Rel);
                        s
                    }
                    (None, None) => self.slot(),
                };
                let props = match &rp.properties {
                    Some(p) => Some(self.bind_expr(p, scope)?),
                    None => None,
                };
                let (from, to) = if rp.direction == Direction::Incoming {
                    (nodes[ri + 1], nodes[ri])
                } else {
                    (nodes[ri], nodes[ri + 1])
                };
                steps.push(CreateStep::Rel { slot, from, to, rel_type: name(&rp.types[0]), props });
                rels.push(slot);
            }
            if let Some(v) = &part.variable {
                let slot = match declared {
                    Some((d, _)) => d[pi].path.ok_or_else(|| Error::internal("path"))?,
                    None => {
                        if scope.get(&v.name).is_some() {
                            return Err(self.already_bound(v));
                        }
                        let s = self.slot();
                        scope.bind(v.name.clone(), s, Kind::Path);
                        s
                    }
                };
                let ps = PartSlots {
                    nodes,
                    rels,
                    nodes_pre: vec![],
                    rels_pre: vec![],
                    path: Some(slot),
                };
                steps.push(CreateStep::Path { slot, expr: path_expr(el, &ps) });
            }
        }
        Ok(steps)
    }

    fn create_node_step(
        &mut self,
        slot: Slot,
        np: &ast::NodePattern,
        scope: &Scope,
    ) -> Result<CreateStep> {
        let props = match &np.properties {
            Some(p) => Some(self.bind_expr(p, scope)?),
            None => None,
        };
        Ok(CreateStep::Node { slot, labels: np.labels.iter().map(name).collect(), props })
    }

    fn plan_merge(
        &mut self,
        op: Op,
        scope: &mut Scope,
        part: &PatternPart,
        actions: &[ast::MergeAction],
    ) -> Result<Op> {
        let before = scope.clone();
        let bound = scope.slots();
        for (rp, _) in &part.element.chain {
            if let Some(v) = &rp.variable {
                if before.get(&v.name).is_some() {
                    return Err(self.already_bound(v));
                }
            }
        }
        for (rp, _) in &part.element.chain {
            if rp.length.is_some() {
                return Err(self.syntax(
                    rp.span,
                    "CreatingVarLength",
                    "Variable length relationships cannot be used in MERGE",
                ));
            }
            if rp.types.len() != 1 {
                return Err(self.syntax(
                    rp.span,
                    "NoSingleRelationshipType",
                    "A single relationship type must be specified for MERGE",
                ));
            }
        }
        for np in
            std::iter::once(&part.element.start).chain(part.element.chain.iter().map(|(_, n)| n))
        {
            if let (Some(v), Some(_)) =
                (&np.variable, before.get(np.variable.as_ref().map(|v| &*v.name).unwrap_or("")))
            {
                if part.element.chain.is_empty() {
                    return Err(self.already_bound(v));
                }
            }
        }
        let refs = [part];
        let slots = self.declare_match(scope, &refs)?;
        let matcher = self.plan_match_declared(Op::Argument, scope, &refs, &slots, None, bound)?;
        let mut create_scope = before.clone();
        let create = self.plan_create(
            &mut create_scope,
            std::slice::from_ref(part),
            Some((&slots, &before)),
        )?;
        let mut on_create = Vec::new();
        let mut on_match = Vec::new();
        for a in actions {
            match a {
                ast::MergeAction::OnCreate(items) => {
                    on_create.extend(self.bind_set_items(items, scope)?)
                }
                ast::MergeAction::OnMatch(items) => {
                    on_match.extend(self.bind_set_items(items, scope)?)
                }
            }
        }
        Ok(Op::Merge {
            input: Box::new(op),
            matcher: Box::new(matcher),
            create,
            on_create,
            on_match,
            null_checks: Vec::new(),
        })
    }

    fn bind_set_items(&mut self, items: &[SetItem], scope: &Scope) -> Result<Vec<SetOp>> {
        let mut out = Vec::new();
        for it in items {
            out.push(match it {
                SetItem::Property { target, key, value } => SetOp::Property {
                    target: self.bind_expr(target, scope)?,
                    key: name(key),
                    value: self.bind_expr(value, scope)?,
                },
                SetItem::Replace { variable, value } => SetOp::Replace {
                    target: self.bind_var(variable, scope)?,
                    value: self.bind_expr(value, scope)?,
                },
                SetItem::Merge { variable, value } => SetOp::Merge {
                    target: self.bind_var(variable, scope)?,
                    value: self.bind_expr(value, scope)?,
                },
                SetItem::Labels { variable, labels } => SetOp::Labels {
                    target: self.bind_var(variable, scope)?,
                    labels: labels.iter().map(name).collect(),
                },
            });
        }
        Ok(out)
    }

    fn bind_remove_items(&mut self, items: &[RemoveItem], scope: &Scope) -> Result<Vec<SetOp>> {
        let mut out = Vec::new();
        for it in items {
            out.push(match it {
                RemoveItem::Property { target, key } => {
                    SetOp::RemoveProperty { target: self.bind_expr(target, scope)?, key: name(key) }
                }
                RemoveItem::Labels { variable, labels } => SetOp::RemoveLabels {
                    target: self.bind_var(variable, scope)?,
                    labels: labels.iter().map(name).collect(),
                },
            });
        }
        Ok(out)
    }

    fn bind_var(&mut self, v: &ast::Ident, scope: &Scope) -> Result<PExpr> {
        match scope.get(&v.name) {
            Some((s, _)) => Ok(PExpr::Slot(s)),
            None => Err(self.undefined(v.span, &v.name)),
        }
    }

    fn undefined(&self, span: Span, n: &str) -> Error {
        self.syntax(span, "UndefinedVariable", format!("Variable `{n}` not defined"))
    }

    fn plan_call(
        &mut self,
        op: Op,
        scope: &mut Scope,
        qn: &ast::QualifiedName,
        args: Option<&[Expr]>,
        yield_: &Option<ast::YieldSpec>,
        standalone: bool,
    ) -> Result<(Op, Cols)> {
        let dotted = qn.dotted();
        let sig = self.res.procedure(&dotted).ok_or_else(|| {
            self.err(
                qn.span,
                Status::ProcedureNotFound,
                "ProcedureNotFound",
                format!("There is no procedure with the name `{dotted}` registered for this database instance. Please ensure you've spelled the procedure name correctly and that the procedure is properly deployed."),
            )
        })?;
        let mut bargs = Vec::new();
        match args {
            Some(a) => {
                let required = sig.inputs.len().saturating_sub(sig.optional);
                if a.len() > sig.inputs.len() || a.len() < required {
                    return Err(self.syntax(
                        qn.span,
                        "InvalidNumberOfArguments",
                        format!(
                            "Procedure call does not provide the required number of arguments: got {} expected {} (signature: {})",
                            a.len(),
                            sig.inputs.len(),
                            sig.signature_text()
                        ),
                    ));
                }
                for (e, (input, ty)) in a.iter().zip(&sig.inputs) {
                    let b = self.bind_expr(e, scope)?;
                    // Literal arguments are type-checked now; others when the call runs.
                    if let PExpr::Const(v) = &b {
                        if !ty.accepts(v) {
                            return Err(self.syntax(
                                e.span,
                                "InvalidArgumentType",
                                format!(
                                    "Type mismatch for procedure argument `{input}`: expected {ty} but was {}",
                                    v.type_name()
                                ),
                            ));
                        }
                    }
                    bargs.push(b);
                }
                // Left-out optional inputs.
                while bargs.len() < sig.inputs.len() {
                    bargs.push(PExpr::Const(Value::Null));
                }
            }
            None => {
                if !standalone && !sig.inputs.is_empty() {
                    return Err(self.syntax(
                        qn.span,
                        "InvalidArgumentPassingMode",
                        "Procedure call inside a query does not support passing arguments implicitly",
                    ));
                }
                // Standalone calls without parentheses take their arguments from the
                // parameters of the same names.
                for (i, _) in &sig.inputs {
                    let idx = self.param(&Arc::from(i.as_str()));
                    bargs.push(PExpr::Param(idx));
                }
            }
        }
        let mut yields = Vec::new();
        let mut cols = Vec::new();
        let mut where_ = None;
        match yield_ {
            None => {
                // Standalone: every output is a column. In a query, outputs are not bound
                // implicitly (Neo4j asks for an explicit YIELD), so naming one is an error.
                if standalone {
                    for (i, (o, _)) in sig.outputs.iter().enumerate() {
                        let s = self.slot();
                        yields.push((i, s));
                        cols.push((o.clone(), s));
                    }
                }
            }
            Some(y) => {
                if y.star && !standalone {
                    return Err(self.syntax(
                        qn.span,
                        "UnexpectedSyntax",
                        "Procedure call inside a query does not support YIELD *",
                    ));
                }
                let items: Vec<(String, Option<&ast::Ident>, Span)> = if y.star {
                    sig.outputs.iter().map(|(o, _)| (o.clone(), None, qn.span)).collect()
                } else {
                    y.items.iter().map(|(o, a)| (o.name.to_string(), a.as_ref(), o.span)).collect()
                };
                for (o, alias, span) in items {
                    let idx = sig.outputs.iter().position(|(x, _)| *x == o).ok_or_else(|| {
                        self.syntax(
                            span,
                            "UndefinedVariable",
                            format!("Unknown procedure output: `{o}`"),
                        )
                    })?;
                    let n: Arc<str> =
                        alias.map(|a| a.name.clone()).unwrap_or_else(|| Arc::from(o.as_str()));
                    if scope.get(&n).is_some() {
                        return Err(self.syntax(
                            span,
                            "VariableAlreadyBound",
                            format!("Variable `{n}` already declared"),
                        ));
                    }
                    let s = self.slot();
                    scope.bind(n.clone(), s, Kind::Any);
                    yields.push((idx, s));
                    cols.push((n.to_string(), s));
                }
                if let Some(w) = &y.where_ {
                    where_ = Some(self.bind_pred(w, scope)?);
                }
            }
        }
        let mut op = Op::ProcedureCall {
            input: Box::new(op),
            name: Arc::from(dotted.as_str()),
            args: bargs,
            arg_types: sig.inputs.iter().map(|(_, t)| t.clone()).collect(),
            void: sig.outputs.is_empty(),
            yields,
        };
        if let Some(w) = where_ {
            op = Op::Filter { input: Box::new(op), pred: w };
        }
        Ok((op, cols))
    }

    // ------------------------------------------------------------------ expressions

    fn bind_exprs(&mut self, es: &[Expr], scope: &Scope) -> Result<Vec<PExpr>> {
        es.iter().map(|e| self.bind_expr(e, scope)).collect()
    }

    fn bx(&mut self, e: &Expr, scope: &Scope) -> Result<Box<PExpr>> {
        Ok(Box::new(self.bind_expr(e, scope)?))
    }

    /// Binds a WHERE predicate (pattern predicates allowed).
    fn bind_pred(&mut self, e: &Expr, scope: &Scope) -> Result<PExpr> {
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
    fn check_bool_operand(&self, e: &Expr, b: &PExpr) -> Result<()> {
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

    fn bind_expr(&mut self, e: &Expr, scope: &Scope) -> Result<PExpr> {
        let pred = std::mem::replace(&mut self.pred_ctx, false);
        let r = self.bind_expr_inner(e, scope, pred);
        self.pred_ctx = false;
        r
    }

    fn bind_expr_inner(&mut self, e: &Expr, scope: &Scope, pred: bool) -> Result<PExpr> {
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
            ExprKind::Property(base, key) => {
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
                PExpr::Property(b, name(key))
            }
            ExprKind::List(xs) => PExpr::List(self.bind_exprs(xs, scope)?),
            ExprKind::Map(xs) => {
                let mut out = Vec::new();
                for (k, v) in xs {
                    out.push((name(k), self.bind_expr(v, scope)?));
                }
                PExpr::Map(out)
            }
            ExprKind::Unary(op, a) => {
                let ast_a = a;
                self.pred_ctx = pred && *op == UnaryOp::Not;
                let a = self.bx(a, scope)?;
                match op {
                    UnaryOp::Not => {
                        self.check_bool_operand(ast_a, &a)?;
                        PExpr::Not(a)
                    }
                    UnaryOp::Neg => match *a {
                        PExpr::Const(Value::Int(i)) => PExpr::Const(Value::Int(i.wrapping_neg())),
                        PExpr::Const(Value::Float(f)) => {
                            PExpr::Const(Value::Float(if f == 0.0 { 0.0 } else { -f }))
                        }
                        other => PExpr::Neg(Box::new(other)),
                    },
                    UnaryOp::Plus => PExpr::Plus(a),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let boolean = matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor);
                let (ast_a, ast_b) = (a, b);
                self.pred_ctx = pred && boolean;
                let a = self.bx(a, scope)?;
                self.pred_ctx = pred && boolean;
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
                if *op == BinaryOp::In {
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
                match op {
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
                }
            }
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
            ExprKind::Function { name: qn, distinct, args } => {
                let lower = qn.dotted().to_lowercase();
                if is_aggregate(&lower) {
                    return self.bind_aggregate(e, &lower, *distinct, args, false);
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
                        && !matches!(
                            args[0].kind,
                            ExprKind::Property(..) | ExprKind::PatternPredicate(_)
                        )
                    {
                        return Err(self.syntax(
                            e.span,
                            "InvalidArgumentType",
                            "Argument to exists(...) is not a property or pattern",
                        ));
                    }
                    self.pred_ctx = b == Builtin::Exists;
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
                            format!(
                                "Type mismatch: invalid argument for function '{}'",
                                qn.dotted()
                            ),
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
                match self.res.scalar(&lower) {
                    Some(func) => {
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
                }
            }
            ExprKind::Case { operand, whens, else_ } => {
                let operand = match operand {
                    Some(o) => Some(self.bx(o, scope)?),
                    None => None,
                };
                let mut ws = Vec::new();
                for (w, t) in whens {
                    ws.push((self.bind_expr(w, scope)?, self.bind_expr(t, scope)?));
                }
                let else_ = match else_ {
                    Some(x) => Some(self.bx(x, scope)?),
                    None => None,
                };
                PExpr::Case { operand, whens: ws, else_ }
            }
            ExprKind::ListComprehension { variable, list, filter, map } => {
                let list = self.bx(list, scope)?;
                let slot = self.slot();
                let mut inner = scope.clone();
                inner.bind(variable.name.clone(), slot, Kind::Any);
                let filter = match filter {
                    Some(f) => Some(self.bx(f, &inner)?),
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
                let filter = self.bx(filter, &inner)?;
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
            ExprKind::PatternPredicate(pe) => {
                if !pred {
                    return Err(self.syntax(
                        e.span,
                        "UnexpectedSyntax",
                        "A pattern expression should only be used in order to test the existence of a pattern",
                    ));
                }
                if pe.chain.is_empty() {
                    return Err(self.syntax(
                        e.span,
                        "InvalidArgumentType",
                        "Type mismatch: a single node pattern is not a predicate",
                    ));
                }
                for np in std::iter::once(&pe.start).chain(pe.chain.iter().map(|(_, n)| n)) {
                    if let Some(v) = &np.variable {
                        if scope.get(&v.name).is_none() {
                            return Err(self.undefined(v.span, &v.name));
                        }
                    }
                }
                for (rp, _) in &pe.chain {
                    if let Some(v) = &rp.variable {
                        if scope.get(&v.name).is_none() {
                            return Err(self.undefined(v.span, &v.name));
                        }
                    }
                }
                let saved = self.agg.take();
                let r = self.pattern_subplan(pe, None, scope, None, None);
                self.agg = saved;
                let (plan, _) = r?;
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
                PExpr::Subquery { kind, plan: Arc::new(plan) }
            }
            ExprKind::MapProjection { variable, items } => {
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
                PExpr::MapProjection { base, items: out }
            }
        })
    }

    fn bind_aggregate(
        &mut self,
        e: &Expr,
        lower: &str,
        distinct: bool,
        args: &[Expr],
        count_star: bool,
    ) -> Result<PExpr> {
        let Some(mut ctx) = self.agg.take() else {
            return Err(self.syntax(
                e.span,
                "InvalidAggregation",
                "Aggregation functions are not allowed in this context",
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

    /// A sub-plan matching `pe` on the argument row; with `map`, projects it into a new slot.
    fn pattern_subplan(
        &mut self,
        pe: &PatternElement,
        path_var: Option<&ast::Ident>,
        scope: &Scope,
        filter: Option<&Expr>,
        map: Option<&Expr>,
    ) -> Result<(Op, Slot)> {
        let part = PatternPart {
            variable: path_var.cloned(),
            selector: PathSelector::All,
            element: pe.clone(),
            span: Span::default(),
        };
        let mut inner = scope.clone();
        let bound = scope.slots();
        let refs = [&part];
        let slots = self.declare_match(&mut inner, &refs)?;
        let mut op =
            self.plan_match_declared(Op::Argument, &inner, &refs, &slots, filter, bound)?;
        let slot = self.slot();
        if let Some(m) = map {
            let e = self.bind_expr(m, &inner)?;
            op = Op::Project { input: Box::new(op), items: vec![(slot, e)] };
        }
        Ok((op, slot))
    }
}

enum ItemRef<'e> {
    Var(Slot, Kind),
    Expr(&'e Expr),
}

fn flip(d: Direction) -> Direction {
    match d {
        Direction::Outgoing => Direction::Incoming,
        Direction::Incoming => Direction::Outgoing,
        Direction::Both => Direction::Both,
    }
}

/// Removes the first conjunct matching `f` (it is implied by the chosen scan or seek).
fn take_conj(conj: &mut Vec<(PExpr, Option<Vec<Slot>>)>, f: impl Fn(&PExpr) -> bool) {
    if let Some(i) = conj.iter().position(|(e, _)| f(e)) {
        conj.remove(i);
    }
}

fn is_label_check(e: &PExpr, slot: Slot, label: &ast::Ident) -> bool {
    matches!(e, PExpr::HasLabels(b, ls)
        if matches!(**b, PExpr::Slot(s) if s == slot) && ls.len() == 1 && ls[0] == label.name)
}

fn is_prop_eq(e: &PExpr, slot: Slot, key: &Name) -> bool {
    match e {
        PExpr::Compare(lhs, rest) => {
            rest.len() == 1
                && rest[0].0 == CompareOp::Eq
                && matches!(&**lhs, PExpr::Property(b, k)
                    if k == key && matches!(**b, PExpr::Slot(s) if s == slot))
        }
        _ => false,
    }
}

/// Answers `count(*)` (or `count(v)` of a pattern variable, never null) over a plain label
/// scan, or over one single-type directed expansion from a scan with at most one label on
/// either end, from the count store instead of scanning. Anything else is left as it is.
fn from_count_store(op: Op) -> Op {
    let Op::Aggregate { input, keys, aggs } = op else { return op };
    let counted = |vars: &[Slot]| -> Option<Slot> {
        match &aggs[..] {
            [(out, call)] if keys.is_empty() && &*call.name == "count" && !call.distinct => {
                let ok = call.count_star
                    || matches!(&call.args[..], [PExpr::Slot(s)] if vars.contains(s));
                ok.then_some(*out)
            }
            _ => None,
        }
    };
    match &*input {
        Op::NodeScan { input: arg, slot, label } if matches!(**arg, Op::Argument) => {
            if let Some(out) = counted(&[*slot]) {
                return Op::NodeCountFromCountStore {
                    input: Box::new(Op::Argument),
                    slot: out,
                    label: label.clone(),
                };
            }
        }
        Op::Expand { .. } | Op::Filter { .. } => {
            let (expand, end_label) = match &*input {
                Op::Filter { input: e, pred: PExpr::HasLabels(b, ls) } if ls.len() == 1 => {
                    match (&**e, &**b) {
                        (Op::Expand { to, .. }, PExpr::Slot(s)) if s == to => {
                            (&**e, Some(ls[0].clone()))
                        }
                        _ => return Op::Aggregate { input, keys, aggs },
                    }
                }
                other => (other, None),
            };
            if let Op::Expand {
                input: scan,
                from,
                rel,
                to,
                dir,
                types,
                into: false,
                rel_bound: false,
                unique_with,
            } = expand
            {
                if let Op::NodeScan { input: arg, slot, label } = &**scan {
                    let simple = matches!(**arg, Op::Argument)
                        && slot == from
                        && unique_with.is_empty()
                        && types.len() <= 1
                        && *dir != Direction::Both
                        && !(label.is_some() && end_label.is_some());
                    if let (true, Some(out)) = (simple, counted(&[*from, *rel, *to])) {
                        let (start, end) = if *dir == Direction::Outgoing {
                            (label.clone(), end_label)
                        } else {
                            (end_label, label.clone())
                        };
                        return Op::RelationshipCountFromCountStore {
                            input: Box::new(Op::Argument),
                            slot: out,
                            start,
                            ty: types.first().cloned(),
                            end,
                        };
                    }
                }
            }
        }
        _ => {}
    }
    Op::Aggregate { input, keys, aggs }
}

/// A relationship index seek for a pattern part with nothing bound: the first single-type,
/// fixed-length relationship with an equality on every key of one of its type's indexes, else
/// the first with an `IN`, two-sided range, `STARTS WITH` or one-sided range on the key of a
/// single-property index of its type (in that order of preference). Returns `(chain position,
/// type, keys, equality values, range)`: with a range, `keys` is its one key and `values` is
/// empty.
#[allow(clippy::type_complexity)]
fn rel_seek_for(
    conj: &[(PExpr, Option<Vec<Slot>>)],
    el: &PatternElement,
    ps: &PartSlots,
    bound: &HashSet<Slot>,
    res: &dyn Resolver,
) -> Option<(usize, Name, Vec<Name>, Vec<PExpr>, Option<SeekRange>)> {
    let mut ranged: Option<(u8, usize, Name, Name, SeekRange)> = None;
    for (i, (rp, _)) in el.chain.iter().enumerate() {
        let slot = ps.rels[i];
        if rp.length.is_some() || rp.types.len() != 1 || ps.rels_pre[i] || bound.contains(&slot) {
            continue;
        }
        let preds = gather_preds(conj, slot, bound);
        let ty = &rp.types[0].name;
        let indexes = res.rel_indexes_on(ty);
        for ks in &indexes {
            let values: Option<Vec<PExpr>> = ks
                .iter()
                .map(|k| preds.iter().find(|(n, _)| **n == **k).and_then(|(_, p)| p.eq.clone()))
                .collect();
            if let Some(values) = values {
                let keys = ks.iter().map(|k| Name::from(k.as_str())).collect();
                return Some((i, ty.clone(), keys, values, None));
            }
        }
        for ks in indexes.iter().filter(|ks| ks.len() == 1) {
            let Some((_, p)) = preds.iter().find(|(n, _)| **n == *ks[0]) else { continue };
            if let Some((rank, seek)) = p.range_seek() {
                if ranged.as_ref().is_none_or(|b| rank < b.0) {
                    ranged = Some((rank, i, ty.clone(), Name::from(ks[0].as_str()), seek));
                }
            }
        }
    }
    ranged.map(|(_, i, ty, key, seek)| (i, ty, vec![key], Vec::new(), Some(seek)))
}

/// The predicates of one property key of one entity that an index could answer (the first of
/// each kind found).
#[derive(Default)]
struct Preds {
    eq: Option<PExpr>,
    in_: Option<PExpr>,
    prefix: Option<PExpr>,
    lo: Option<(PExpr, bool)>,
    hi: Option<(PExpr, bool)>,
}

impl Preds {
    /// The best non-equality seek these predicates allow, ranked (lower is better): `IN`,
    /// two-sided range, `STARTS WITH`, one-sided range.
    fn range_seek(&self) -> Option<(u8, SeekRange)> {
        if let Some(e) = &self.in_ {
            Some((2, SeekRange::In(e.clone())))
        } else if let (Some(lo), Some(hi)) = (&self.lo, &self.hi) {
            Some((3, SeekRange::Range { lo: Some(lo.clone()), hi: Some(hi.clone()) }))
        } else if let Some(e) = &self.prefix {
            Some((4, SeekRange::Prefix(e.clone())))
        } else if self.lo.is_some() || self.hi.is_some() {
            Some((5, SeekRange::Range { lo: self.lo.clone(), hi: self.hi.clone() }))
        } else {
            None
        }
    }
}

/// The indexable predicates on properties of `slot` (node or relationship) among the
/// conjuncts, per property key, whose other side depends only on `bound` slots.
fn gather_preds(
    conj: &[(PExpr, Option<Vec<Slot>>)],
    slot: Slot,
    bound: &HashSet<Slot>,
) -> Vec<(Name, Preds)> {
    let mut keys: Vec<(Name, Preds)> = Vec::new();
    let mut add = |key: &Name, f: &mut dyn FnMut(&mut Preds)| {
        let i = match keys.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                keys.push((key.clone(), Preds::default()));
                keys.len() - 1
            }
        };
        f(&mut keys[i].1);
    };
    let bound_op = |p: &mut Preds, op: CompareOp, e: &PExpr| match op {
        CompareOp::Eq => {
            p.eq.get_or_insert_with(|| e.clone());
        }
        CompareOp::Gt | CompareOp::Ge => {
            p.lo.get_or_insert_with(|| (e.clone(), op == CompareOp::Ge));
        }
        CompareOp::Lt | CompareOp::Le => {
            p.hi.get_or_insert_with(|| (e.clone(), op == CompareOp::Le));
        }
        CompareOp::Ne => {}
    };
    for (e, _) in conj {
        match e {
            PExpr::Compare(lhs, rest) if rest.len() == 1 => {
                let (op, rhs) = (rest[0].0, &rest[0].1);
                if let Some(k) = slot_prop(lhs, slot).filter(|_| deps_within(rhs, bound)) {
                    add(k, &mut |p| bound_op(p, op, rhs));
                } else if let Some(k) = slot_prop(rhs, slot).filter(|_| deps_within(lhs, bound)) {
                    add(k, &mut |p| bound_op(p, flip_cmp(op), lhs));
                }
            }
            PExpr::Compare(a, rest) if rest.len() == 2 => {
                let ((op1, mid), (op2, c)) = ((rest[0].0, &rest[0].1), (rest[1].0, &rest[1].1));
                let ordering = |o: CompareOp| !matches!(o, CompareOp::Eq | CompareOp::Ne);
                if let Some(k) = slot_prop(mid, slot) {
                    if ordering(op1)
                        && ordering(op2)
                        && deps_within(a, bound)
                        && deps_within(c, bound)
                    {
                        add(k, &mut |p| {
                            bound_op(p, flip_cmp(op1), a);
                            bound_op(p, op2, c);
                        });
                    }
                }
            }
            PExpr::Str(StringOp::StartsWith, lhs, rhs) if deps_within(rhs, bound) => {
                if let Some(k) = slot_prop(lhs, slot) {
                    add(k, &mut |p| {
                        p.prefix.get_or_insert_with(|| (**rhs).clone());
                    });
                }
            }
            PExpr::In(lhs, rhs) if deps_within(rhs, bound) => {
                if let Some(k) = slot_prop(lhs, slot) {
                    add(k, &mut |p| {
                        p.in_.get_or_insert_with(|| (**rhs).clone());
                    });
                }
            }
            _ => {}
        }
    }
    keys
}

/// An indexable predicate found for a start node.
enum Found {
    /// `n.key = expr` in a WHERE: an exact equality seek.
    Eq(PExpr),
    Seek(SeekRange),
}

/// `Some(key)` if `e` is `slot.key`.
fn slot_prop(e: &PExpr, slot: Slot) -> Option<&Name> {
    match e {
        PExpr::Property(b, k) if matches!(**b, PExpr::Slot(s) if s == slot) => Some(k),
        _ => None,
    }
}

fn flip_cmp(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Lt => CompareOp::Gt,
        CompareOp::Le => CompareOp::Ge,
        CompareOp::Gt => CompareOp::Lt,
        CompareOp::Ge => CompareOp::Le,
        other => other,
    }
}

/// The best index seek for an unbound node `slot` with `labels`, from the conjuncts that
/// constrain its properties by values already bound: a composite index with an equality on
/// every key, then single-property equality, `IN`, two-sided ranges, `STARTS WITH`, one-sided
/// ranges. Only indexed `(label, keys)` are considered. Returns `(label, first key, seek)`.
fn index_seek_for(
    conj: &[(PExpr, Option<Vec<Slot>>)],
    slot: Slot,
    labels: &[ast::Ident],
    bound: &HashSet<Slot>,
    res: &dyn Resolver,
) -> Option<(Name, Name, Found)> {
    if labels.is_empty() {
        return None;
    }
    let keys = gather_preds(conj, slot, bound);
    let mut best: Option<(u8, Name, Name, Found)> = None;
    for l in labels {
        // A composite index whose every key has an equality.
        for ks in res.indexes_on(&l.name).into_iter().filter(|ks| ks.len() > 1) {
            let values: Option<Vec<PExpr>> = ks
                .iter()
                .map(|k| keys.iter().find(|(n, _)| **n == **k).and_then(|(_, p)| p.eq.clone()))
                .collect();
            if let (Some(values), None) = (values, &best) {
                let names: Vec<Name> = ks.iter().map(|k| Name::from(k.as_str())).collect();
                let first = names[0].clone();
                let seek = SeekRange::Composite { keys: names, values };
                best = Some((0, l.name.clone(), first, Found::Seek(seek)));
            } else if let Some((rank, seek)) = composite_range(&ks, &keys) {
                // Neo4j's rule: equalities on a prefix of the keys, a range or prefix on the
                // next, and a predicate on every later key (the index has only nodes with
                // all of its keys).
                if best.as_ref().is_none_or(|b| rank < b.0) {
                    let first = Name::from(ks[0].as_str());
                    best = Some((rank, l.name.clone(), first, Found::Seek(seek)));
                }
            }
        }
        for (k, p) in &keys {
            if !res.has_index(&l.name, k) {
                continue;
            }
            let cand = if let Some(e) = &p.eq {
                (1, Found::Eq(e.clone()))
            } else if let Some((rank, seek)) = p.range_seek() {
                (rank, Found::Seek(seek))
            } else {
                continue;
            };
            if best.as_ref().is_none_or(|b| cand.0 < b.0) {
                best = Some((cand.0, l.name.clone(), k.clone(), cand.1));
            }
        }
    }
    best.map(|(_, l, k, f)| (l, k, f))
}

/// A range seek on the composite index `ks` from the predicates per key, with its rank (as
/// `index_seek_for` ranks): `None` unless equalities cover a prefix of the keys, the next key
/// has a range or `STARTS WITH`, and every later key has a predicate that only an indexed
/// value can pass (not `IS NOT NULL`: NaN has no index key, so a node with a NaN is not in
/// the index although its property exists).
fn composite_range(ks: &[String], preds: &[(Name, Preds)]) -> Option<(u8, SeekRange)> {
    let pred = |k: &String| preds.iter().find(|(n, _)| **n == **k).map(|(_, p)| p);
    let n_eq = ks.iter().take_while(|k| pred(k).is_some_and(|p| p.eq.is_some())).count();
    let p = pred(ks.get(n_eq)?)?;
    let (rank, range) = match p.range_seek()? {
        (_, SeekRange::In(_)) => return None,
        other => other,
    };
    let later_exist = ks[n_eq + 1..].iter().all(|k| {
        pred(k).is_some_and(|p| {
            p.eq.is_some()
                || p.in_.is_some()
                || p.prefix.is_some()
                || p.lo.is_some()
                || p.hi.is_some()
        })
    });
    if !later_exist {
        return None;
    }
    let values = ks[..n_eq].iter().filter_map(|k| pred(k).and_then(|p| p.eq.clone())).collect();
    let keys = ks.iter().map(|k| Name::from(k.as_str())).collect();
    // Equalities in front make it about as selective as an equality seek.
    let rank = if n_eq > 0 { 1 } else { rank };
    Some((rank, SeekRange::CompositeRange { keys, values, range: Box::new(range) }))
}

fn deps_within(e: &PExpr, bound: &HashSet<Slot>) -> bool {
    let mut d = Vec::new();
    e.deps(&mut d) && d.iter().all(|s| bound.contains(s))
}

/// Wraps `op` in a filter with every conjunct whose slots are all bound.
fn place(op: Op, conj: &mut Vec<(PExpr, Option<Vec<Slot>>)>, bound: &HashSet<Slot>) -> Op {
    let mut ready = Vec::new();
    let mut i = 0;
    while i < conj.len() {
        let ok = matches!(&conj[i].1, Some(d) if d.iter().all(|s| bound.contains(s)));
        if ok {
            ready.push(conj.remove(i).0);
        } else {
            i += 1;
        }
    }
    match ready.into_iter().reduce(and) {
        Some(pred) => Op::Filter { input: Box::new(op), pred },
        None => op,
    }
}

fn path_expr(el: &PatternElement, ps: &PartSlots) -> PExpr {
    let mut steps = vec![PathStep::Node(ps.nodes[0])];
    for (i, (rp, _)) in el.chain.iter().enumerate() {
        if rp.length.is_some() {
            steps.push(PathStep::VarRel(ps.rels[i]));
        } else {
            steps.push(PathStep::Rel(ps.rels[i]));
        }
        steps.push(PathStep::Node(ps.nodes[i + 1]));
    }
    PExpr::Path(steps)
}
