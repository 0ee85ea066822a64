//! Predicates and three-valued logic: `eval_pred`, AND/OR/XOR, comparisons, string
//! predicates, label tests, `IN`, `CASE`, and the ordering of sort keys.

use std::cmp::Ordering;
use std::sync::Arc;

use arbor_cypher_plan::expr::{PExpr, StringOp};
use arbor_cypher_syntax::ast::CompareOp;
use arbor_model::{compare_op, equals, CmpOp, Result, Value};

use super::entity::entity_property;
use super::seam::{eval, truth, type_err};
use crate::ctx::{Ctx, Row};
use crate::graph::{Graph, TokenKind};

/// Evaluates a predicate: only `true` passes.
pub(crate) fn eval_pred(
    e: &PExpr,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<bool> {
    Ok(pred3(e, None, row, ctx, g)? == Some(true))
}

/// A predicate's three-valued result, exactly as `truth(eval(e))` (with `what` naming the
/// operator whose operand it is; `None` at the top of a filter, where anything but `true`
/// simply fails). The shapes filters are made of (conjunctions, label tests and properties of
/// a variable) are answered here directly, without building intermediate values through the
/// general `eval`; everything else goes to `eval`.
pub(super) fn pred3(
    e: &PExpr,
    what: Option<&str>,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Option<bool>> {
    match e {
        PExpr::And(a, b) => {
            let x = pred3(a, Some("AND"), row, ctx, g)?;
            if x == Some(false) {
                return Ok(Some(false));
            }
            let y = pred3(b, Some("AND"), row, ctx, g)?;
            return Ok(match (x, y) {
                (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            });
        }
        PExpr::HasLabels(a, labels) => {
            if let PExpr::Slot(s) = **a {
                match row.get(s) {
                    Some(Value::Node(id)) => {
                        let id = *id;
                        return Ok(Some(labels.iter().all(|l| {
                            ctx.token(&*g, TokenKind::Label, l)
                                .is_some_and(|t| g.node_has_label(id, t))
                        })));
                    }
                    Some(Value::Null) | None => return Ok(None),
                    Some(_) => {}
                }
            }
        }
        PExpr::Property(a, key) => {
            if let PExpr::Slot(s) = **a {
                if let Some(b @ (Value::Node(_) | Value::Relationship(_))) = row.get(s) {
                    let b = b.clone();
                    let tok = ctx.token(&*g, TokenKind::PropertyKey, key);
                    let v = entity_property(&b, tok, g)?;
                    return pred_of(&v, what);
                }
            }
        }
        _ => {}
    }
    let v = eval(e, row, ctx, g)?;
    pred_of(&v, what)
}

pub(super) fn pred_of(v: &Value, what: Option<&str>) -> Result<Option<bool>> {
    match what {
        Some(w) => truth(v, w),
        None => Ok(match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }),
    }
}

/// The binary operators of three-valued logic.
#[derive(Clone, Copy)]
pub(super) enum BoolOp {
    And,
    Or,
    Xor,
}

/// `a AND b`, `a OR b`, `a XOR b`. `AND` and `OR` have a dominant value (false, true): on
/// either side it decides, and the right side is not evaluated (nor type-checked, as in Neo4j)
/// when the left side is dominant; two non-dominant sides give the other value. Else null.
pub(super) fn boolean(
    op: BoolOp,
    a: &PExpr,
    b: &PExpr,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    let (name, dominant) = match op {
        BoolOp::And => ("AND", Some(false)),
        BoolOp::Or => ("OR", Some(true)),
        BoolOp::Xor => ("XOR", None),
    };
    let x = truth(&eval(a, row, ctx, g)?, name)?;
    if let Some(d) = dominant.filter(|d| x == Some(*d)) {
        return Ok(Value::Bool(d));
    }
    let y = truth(&eval(b, row, ctx, g)?, name)?;
    Ok(match (dominant, x, y) {
        (Some(d), _, Some(v)) if v == d => Value::Bool(d),
        (Some(d), Some(_), Some(_)) => Value::Bool(!d),
        (None, Some(x), Some(y)) => Value::Bool(x != y),
        _ => Value::Null,
    })
}

/// `STARTS WITH`, `ENDS WITH`, `CONTAINS` and `=~`.
pub(super) fn string_op(
    op: &StringOp,
    a: &PExpr,
    b: &PExpr,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let x = eval(a, row, ctx, g)?;
        let y = eval(b, row, ctx, g)?;
        match (&x, &y) {
            (Value::String(s), Value::String(t)) => Value::Bool(match op {
                StringOp::StartsWith => s.starts_with(&**t),
                StringOp::EndsWith => s.ends_with(&**t),
                StringOp::Contains => s.contains(&**t),
                StringOp::Regex => ctx.regex(t)?.is_match(s),
            }),
            _ => Value::Null,
        }
    })
}

/// A chain of comparisons `a < b <= c`: each pair compared, the results and-ed.
pub(super) fn compare_chain(
    first: &PExpr,
    rest: &[(CompareOp, PExpr)],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let mut left = eval(first, row, ctx, g)?;
        let mut result = Some(true);
        for (op, x) in rest {
            let right = eval(x, row, ctx, g)?;
            let r = compare(*op, &left, &right);
            result = match (result, r) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            left = right;
        }
        result.map(Value::Bool).unwrap_or(Value::Null)
    })
}

/// `n:A:B` on a node, or `r:T` on a relationship.
pub(super) fn has_labels(
    a: &PExpr,
    labels: &[Arc<str>],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let v = eval(a, row, ctx, g)?;
        match v {
            Value::Null => Value::Null,
            Value::Node(id) => Value::Bool(labels.iter().all(|l| {
                ctx.token(&*g, TokenKind::Label, l).is_some_and(|t| g.node_has_label(id, t))
            })),
            Value::Relationship(id) => {
                let t = g.rel_info(id).and_then(|(_, _, t)| g.token_name(TokenKind::RelType, t));
                Value::Bool(labels.iter().all(|l| t.as_deref() == Some(&**l)))
            }
            other => {
                return Err(type_err(format!(
                    "Type mismatch: expected Node but was {}",
                    other.type_name()
                )))
            }
        }
    })
}

/// `CASE`, simple (with an operand) or generic.
pub(super) fn case(
    operand: &Option<Box<PExpr>>,
    whens: &[(PExpr, PExpr)],
    else_: &Option<Box<PExpr>>,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let op = match operand {
            Some(o) => Some(eval(o, row, ctx, g)?),
            None => None,
        };
        for (w, t) in whens {
            let wv = eval(w, row, ctx, g)?;
            let hit = match &op {
                Some(o) => equals(o, &wv) == Some(true),
                None => matches!(wv, Value::Bool(true)),
            };
            if hit {
                return eval(t, row, ctx, g);
            }
        }
        match else_ {
            Some(x) => eval(x, row, ctx, g)?,
            None => Value::Null,
        }
    })
}

/// `compare` on two integers.
#[inline]
pub(super) fn int_compare(op: CompareOp, a: i64, b: i64) -> bool {
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
    }
}

pub(super) fn compare(op: CompareOp, a: &Value, b: &Value) -> Option<bool> {
    match op {
        CompareOp::Eq => equals(a, b),
        CompareOp::Ne => equals(a, b).map(|x| !x),
        CompareOp::Lt => compare_op(CmpOp::Lt, a, b),
        CompareOp::Le => compare_op(CmpOp::Le, a, b),
        CompareOp::Gt => compare_op(CmpOp::Gt, a, b),
        CompareOp::Ge => compare_op(CmpOp::Ge, a, b),
    }
}

pub(super) fn in_list(x: &Value, l: &Value) -> Result<Value> {
    match l {
        Value::Null => Ok(Value::Null),
        Value::List(items) => {
            let mut saw_null = false;
            for it in items {
                match equals(x, it) {
                    Some(true) => return Ok(Value::Bool(true)),
                    Some(false) => {}
                    None => saw_null = true,
                }
            }
            Ok(if saw_null { Value::Null } else { Value::Bool(false) })
        }
        other => {
            Err(type_err(format!("Type mismatch: expected List but was {}", other.type_name())))
        }
    }
}

/// Total order for ORDER BY keys.
pub(crate) fn order_keys(a: &[Value], b: &[Value], desc: &[bool]) -> Ordering {
    for ((x, y), d) in a.iter().zip(b).zip(desc) {
        let o = arbor_model::order(x, y);
        let o = if *d { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}
