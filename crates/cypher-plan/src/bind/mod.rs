//! Binding: variable kinds, scopes and the [`Binder`] state shared by every stage of turning an
//! AST into an operator tree (slots, parameters, error construction with positions).
//!
//! The submodules bind one family each: expressions (`expr`), aggregates and grouping keys
//! (`aggregate`), and pattern variables (`pattern`); `ast_walk` holds the syntactic queries
//! (does this expression aggregate, hold a subquery, ...) the semantic checks are built on.

pub(crate) mod aggregate;
pub(crate) mod ast_walk;
pub(crate) mod expr;
pub(crate) mod labels;
pub(crate) mod pattern;
pub(crate) mod qpp;
pub(crate) mod shadow;

use std::collections::HashSet;
use std::sync::Arc;

use arbor_cypher_syntax::ast::{self, CompareOp, Span};
use arbor_model::{Error, Result, Status, Value};

use crate::catalog::Resolver;
use crate::expr::{AggCall, PExpr, Slot};
use crate::ops::Name;
use crate::rewrite::RewriteRule;

/// What the binder knows about a variable's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
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
pub(crate) fn static_kind(e: &PExpr, scope: &Scope) -> Kind {
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

pub(crate) fn kind_name(k: Kind) -> &'static str {
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
pub(crate) fn element_kind(list: &PExpr, scope: &Scope) -> Kind {
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
pub(crate) struct Scope {
    pub(crate) vars: Vec<(Arc<str>, Slot, Kind)>,
}

impl Scope {
    pub(crate) fn get(&self, name: &str) -> Option<(Slot, Kind)> {
        self.vars.iter().rev().find(|(n, _, _)| &**n == name).map(|(_, s, k)| (*s, *k))
    }

    pub(crate) fn bind(&mut self, name: Arc<str>, slot: Slot, kind: Kind) {
        self.vars.retain(|(n, _, _)| *n != name);
        self.vars.push((name, slot, kind));
    }

    pub(crate) fn slots(&self) -> HashSet<Slot> {
        self.vars.iter().map(|(_, s, _)| *s).collect()
    }
}

/// Aggregate extraction state while binding an aggregating projection.
pub(crate) struct AggCtx {
    /// Normalized expression text of each grouping key (and projected aggregate item).
    pub(crate) keys: Vec<(String, Slot)>,
    pub(crate) aggs: Vec<(Slot, AggCall)>,
    pub(crate) agg_texts: Vec<(String, Slot)>,
    /// The scope before the projection, where aggregate arguments are bound.
    pub(crate) pre: Scope,
}

pub(crate) struct Binder<'a> {
    pub(crate) text: &'a str,
    pub(crate) res: &'a dyn Resolver,
    pub(crate) nslots: usize,
    pub(crate) params: Vec<Arc<str>>,
    /// How many parameter expressions were bound per parameter (see [`Plan::param_uses`]).
    pub(crate) param_uses: Vec<u32>,
    pub(crate) write: bool,
    pub(crate) read: bool,
    pub(crate) agg: Option<AggCtx>,
    /// Whether a pattern predicate is allowed at this point (WHERE, under boolean operators).
    pub(crate) pred_ctx: bool,
    /// The rewrite rules to run (on expression subqueries as they are built, and on the tree).
    pub(crate) rules: &'a [&'a dyn RewriteRule],
    /// The slots `linenumber()` and `file()` read, once a `LOAD CSV` was planned.
    pub(crate) csv: Option<(Slot, Slot)>,
}

/// Node and relationship slots of one declared pattern part.
#[derive(Clone)]
pub(crate) struct PartSlots {
    pub(crate) nodes: Vec<Slot>,
    pub(crate) rels: Vec<Slot>,
    /// Whether each node slot was bound before the clause.
    pub(crate) nodes_pre: Vec<bool>,
    pub(crate) rels_pre: Vec<bool>,
    pub(crate) path: Option<Slot>,
    /// The group variables its quantified path patterns declare.
    pub(crate) groups: Vec<Slot>,
}

pub(crate) type Cols = Vec<(String, Slot)>;

pub(crate) fn name(id: &ast::Ident) -> Name {
    id.name.clone()
}

pub(crate) fn and(a: PExpr, b: PExpr) -> PExpr {
    PExpr::And(Box::new(a), Box::new(b))
}

pub(crate) fn prop_eq(target: PExpr, key: Name, value: PExpr) -> PExpr {
    PExpr::Compare(Box::new(PExpr::Property(Box::new(target), key)), vec![(CompareOp::Eq, value)])
}

impl Binder<'_> {
    pub(crate) fn slot(&mut self) -> Slot {
        self.nslots += 1;
        self.nslots - 1
    }

    pub(crate) fn err(
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

    pub(crate) fn syntax(&self, span: Span, detail: &'static str, msg: impl Into<String>) -> Error {
        self.err(span, Status::SyntaxError, detail, msg)
    }

    /// The expression's text without whitespace, for matching ORDER BY/aggregate expressions
    /// against projection items.
    pub(crate) fn norm(&self, span: Span) -> String {
        self.text
            .get(span.start..span.end)
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    }

    pub(crate) fn param(&mut self, name: &Arc<str>) -> usize {
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

    pub(crate) fn already_bound(&self, v: &ast::Ident) -> Error {
        self.syntax(
            v.span,
            "VariableAlreadyBound",
            format!("Variable `{}` already declared", v.name),
        )
    }

    pub(crate) fn type_conflict(&self, v: &ast::Ident, k: Kind, want: &str) -> Error {
        let have = kind_name(k);
        self.syntax(
            v.span,
            "VariableTypeConflict",
            format!(
                "Type mismatch: {} defined with conflicting type {have} (expected {want})",
                v.name
            ),
        )
    }

    pub(crate) fn bind_var(&mut self, v: &ast::Ident, scope: &Scope) -> Result<PExpr> {
        match scope.get(&v.name) {
            Some((s, _)) => Ok(PExpr::Slot(s)),
            None => Err(self.undefined(v.span, &v.name)),
        }
    }

    pub(crate) fn undefined(&self, span: Span, n: &str) -> Error {
        self.syntax(span, "UndefinedVariable", format!("Variable `{n}` not defined"))
    }
}
