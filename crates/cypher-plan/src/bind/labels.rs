//! Label and type expressions in bound form: `n:A|!B` becomes boolean checks of single labels
//! (`HasLabels`, `Not`, `And`, `Or`), `%` and dynamic labels `$(expr)` become builtins. Also the
//! checks Neo4j 5.26 makes at compile time: dynamic labels only in MATCH, CREATE, MERGE, SET and
//! REMOVE, literal dynamic labels that cannot be names, and label expressions where a CREATE or
//! MERGE needs plain labels.

use arbor_cypher_syntax::ast::{
    Expr, ExprKind, LabelExpr, Literal, PathSelector, PatternPart, Quantifier, RelPattern, Span,
};
use arbor_model::Result;

use crate::bind::*;
use crate::expr::{Builtin, PExpr, Slot};

/// A message Neo4j gives for a dynamic label or type that cannot be a name.
const TOKEN_NAME: &str = "is not a valid token name. Token names cannot be empty or contain any \
                          null-bytes.";

impl Binder<'_> {
    /// The check that `base` satisfies `e`. `dynamic`: `None` where `$(expr)` may stand (a
    /// pattern of MATCH or MERGE), else where Neo4j's error points (the whole label check).
    pub(crate) fn lower_label_expr(
        &mut self,
        base: &PExpr,
        e: &LabelExpr,
        dynamic: Option<Span>,
        scope: &Scope,
    ) -> Result<PExpr> {
        let fold = |b: &mut Self, xs: &[LabelExpr], f: fn(Box<PExpr>, Box<PExpr>) -> PExpr| {
            let mut out: Option<PExpr> = None;
            for x in xs {
                let p = b.lower_label_expr(base, x, dynamic, scope)?;
                out = Some(match out {
                    Some(acc) => f(Box::new(acc), Box::new(p)),
                    None => p,
                });
            }
            Ok::<_, arbor_model::Error>(out.unwrap_or(PExpr::Const(arbor_model::Value::Bool(true))))
        };
        Ok(match e {
            LabelExpr::Name(n) => PExpr::HasLabels(Box::new(base.clone()), vec![name(n)]),
            LabelExpr::Wildcard(_) => PExpr::Builtin(Builtin::AnyLabel, vec![base.clone()]),
            LabelExpr::Not(x) => {
                PExpr::Not(Box::new(self.lower_label_expr(base, x, dynamic, scope)?))
            }
            LabelExpr::And(xs) => fold(self, xs, PExpr::And)?,
            LabelExpr::Or(xs) => fold(self, xs, PExpr::Or)?,
            LabelExpr::Dynamic { expr, any, span } => {
                if let Some(at) = dynamic {
                    return Err(self.syntax(
                        at,
                        "InvalidDynamicLabel",
                        "Dynamic Label and Types are only allowed in MATCH, CREATE, MERGE, SET \
                         and REMOVE clauses.",
                    ));
                }
                let names = self.bind_dyn_labels(expr, *span, scope)?;
                let b = if *any { Builtin::DynLabelsAny } else { Builtin::DynLabelsAll };
                PExpr::Builtin(b, vec![base.clone(), names])
            }
        })
    }

    /// The predicate a relationship's type expression puts on its slot: on the relationship,
    /// or on every relationship of a variable-length one (the list in `slot`), where Neo4j
    /// takes only a dynamic type (`[:$any(types)*]`).
    pub(crate) fn type_expr_pred(
        &mut self,
        part: &PatternPart,
        rp: &RelPattern,
        te: &LabelExpr,
        slot: Slot,
        scope: &Scope,
    ) -> Result<PExpr> {
        if rp.length.is_some() && !matches!(te, LabelExpr::Dynamic { .. }) {
            let at = op_offset(te);
            return Err(self.syntax(
                Span { start: at, end: at },
                "InvalidRelationshipPattern",
                "Variable length relationships must not use relationship type expressions.",
            ));
        }
        if matches!(part.selector, PathSelector::ShortestPath | PathSelector::AllShortestPaths) {
            return Err(self.syntax(
                rp.span,
                "UnsupportedFeature",
                "Type expressions other than alternatives (`:A|B`) are not supported in \
                 shortestPath and allShortestPaths yet",
            ));
        }
        if rp.length.is_none() {
            return self.lower_label_expr(&PExpr::Slot(slot), te, None, scope);
        }
        let each = self.slot();
        let filter = self.lower_label_expr(&PExpr::Slot(each), te, None, scope)?;
        Ok(PExpr::Quantified {
            quantifier: Quantifier::All,
            slot: each,
            list: Box::new(PExpr::Slot(slot)),
            filter: Box::new(filter),
        })
    }

    /// Neo4j's compile-time error for a label check on a value known not to be an entity.
    pub(crate) fn check_label_base(&self, base: &PExpr, at: Span, scope: &Scope) -> Result<()> {
        let type_name = match (static_kind(base, scope), base) {
            (Kind::Str, _) => "String",
            (Kind::Bool, _) => "Boolean",
            (_, PExpr::Const(arbor_model::Value::Int(_))) => "Integer",
            (_, PExpr::Const(arbor_model::Value::Float(_))) => "Float",
            _ => return Ok(()),
        };
        Err(self.syntax(
            at,
            "InvalidArgumentType",
            format!("Type mismatch: expected Node or Relationship but was {type_name}"),
        ))
    }

    /// Binds the expression of `$(expr)`, rejecting the literals Neo4j rejects before running.
    pub(crate) fn bind_dyn_labels(
        &mut self,
        expr: &Expr,
        span: Span,
        scope: &Scope,
    ) -> Result<PExpr> {
        let literal = match &expr.kind {
            ExprKind::Literal(l) => l,
            _ => return self.bind_expr(expr, scope),
        };
        let type_name = match literal {
            Literal::Null => {
                return Err(self.syntax(span, "InvalidDynamicLabel", format!("Null {TOKEN_NAME}")))
            }
            Literal::String(s) if s.is_empty() => {
                return Err(self.syntax(span, "InvalidDynamicLabel", format!("'' {TOKEN_NAME}")))
            }
            Literal::String(_) => return self.bind_expr(expr, scope),
            Literal::Bool(_) => "Boolean",
            Literal::Int(_) => "Integer",
            Literal::Float(_) => "Float",
        };
        Err(self.syntax(
            expr.span,
            "InvalidArgumentType",
            format!("Type mismatch: expected String or List<String> but was {type_name}"),
        ))
    }

    /// The dynamic labels of a CREATE or MERGE node (`(n:A:$(x))`), or Neo4j's error if its
    /// label expression is more than a conjunction of names and `$(expr)`.
    pub(crate) fn create_dyn_labels(
        &mut self,
        e: Option<&LabelExpr>,
        clause: &str,
        scope: &Scope,
    ) -> Result<Vec<PExpr>> {
        let Some(e) = e else { return Ok(Vec::new()) };
        let items = match e {
            LabelExpr::And(xs) => xs.as_slice(),
            other => std::slice::from_ref(other),
        };
        let mut out = Vec::new();
        for x in items {
            match x {
                LabelExpr::Dynamic { expr, any: false, span } => {
                    out.push(self.bind_dyn_labels(expr, *span, scope)?)
                }
                LabelExpr::Dynamic { any: true, span, .. } => {
                    return Err(self.syntax(
                        *span,
                        "InvalidDynamicLabel",
                        "Dynamic labels using `$any()` are not allowed in CREATE or MERGE.",
                    ))
                }
                _ => {
                    return Err(self.syntax(
                        Span { start: op_offset(e), end: op_offset(e) },
                        "InvalidLabelExpression",
                        format!(
                            "Label expressions in patterns are not allowed in a {clause} clause, \
                             but only in a MATCH clause and in expressions"
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }

    /// The dynamic type of a CREATE or MERGE relationship (`[:$(x)]`), or Neo4j's error if its
    /// type expression is anything else.
    pub(crate) fn create_dyn_type(
        &mut self,
        e: &LabelExpr,
        clause: &str,
        scope: &Scope,
    ) -> Result<PExpr> {
        match e {
            LabelExpr::Dynamic { expr, any: false, span } => {
                if let ExprKind::List(items) = &expr.kind {
                    if items.len() != 1 {
                        return Err(self.syntax(
                            *span,
                            "NoSingleRelationshipType",
                            format!("A single relationship type must be specified for {clause}"),
                        ));
                    }
                }
                self.bind_dyn_labels(expr, *span, scope)
            }
            LabelExpr::Dynamic { any: true, span, .. } => Err(self.syntax(
                *span,
                "InvalidDynamicLabel",
                "Dynamic labels using `$any()` are not allowed in CREATE or MERGE.",
            )),
            _ => Err(self.syntax(
                Span { start: op_offset(e), end: op_offset(e) },
                "InvalidLabelExpression",
                format!(
                    "Relationship type expressions in patterns are not allowed in a {clause} \
                     clause, but only in a MATCH clause"
                ),
            )),
        }
    }
}

/// Where a label expression's operator stands, as Neo4j points at it: the `!`, `%`, or the
/// first `|` / `&`.
fn op_offset(e: &LabelExpr) -> usize {
    match e {
        LabelExpr::Name(n) => n.span.start,
        LabelExpr::Wildcard(s) | LabelExpr::Dynamic { span: s, .. } => s.start,
        LabelExpr::Not(x) => start(x).saturating_sub(1),
        LabelExpr::And(xs) | LabelExpr::Or(xs) => xs.first().map_or(0, end),
    }
}

fn start(e: &LabelExpr) -> usize {
    match e {
        LabelExpr::Name(n) => n.span.start,
        LabelExpr::Wildcard(s) | LabelExpr::Dynamic { span: s, .. } => s.start,
        LabelExpr::Not(x) => start(x).saturating_sub(1),
        LabelExpr::And(xs) | LabelExpr::Or(xs) => xs.first().map_or(0, start),
    }
}

fn end(e: &LabelExpr) -> usize {
    match e {
        LabelExpr::Name(n) => n.span.end,
        LabelExpr::Wildcard(s) | LabelExpr::Dynamic { span: s, .. } => s.end,
        LabelExpr::Not(x) => end(x),
        LabelExpr::And(xs) | LabelExpr::Or(xs) => xs.last().map_or(0, end),
    }
}
