//! Expression evaluation over slot-indexed rows, with Cypher's three-valued logic.
//!
//! `eval` takes the row mutably only so comprehensions can bind their local variable in its
//! slot while they iterate (restoring it afterwards); it never changes other slots.
//!
//! Map: [`eval`] (defined in `seam`, the leaf every family imports) comes to `dispatch` here,
//! which answers the hot shapes and sends every other expression to its family:
//! `logic` (predicates, three-valued logic, comparisons, `CASE`), `lists` (comprehensions,
//! quantifiers, `reduce`, map projections, indexing), `entity` (properties, built-ins on
//! entities, paths, materialization). `compiled` holds [`CompiledPred`], the filter compiled
//! once for per-row loops.

mod compiled;
mod entity;
mod labels;
mod lists;
mod logic;
mod seam;

use arbor_cypher_plan::expr::{ArithOp, PExpr};
use arbor_model::ops as vops;
use arbor_model::{PropertyMap, Result, Value};

use crate::ctx::{Ctx, Row};
use crate::graph::Graph;

pub(crate) use compiled::CompiledPred;
#[cfg(test)]
pub(crate) use compiled::GENERAL_PREDICATES;
pub(crate) use entity::properties;
#[cfg(test)]
pub(crate) use entity::{materialize, TokenNames};
pub(crate) use labels::{dyn_names, NameOf};
pub(crate) use lists::int32_range_message;
pub(crate) use logic::order_keys;
use logic::BoolOp;
pub(crate) use seam::eval;
use seam::{truth, type_err, Evaluate};

impl Evaluate for Ctx {
    #[inline(always)]
    fn evaluate(&mut self, e: &PExpr, row: &mut Row, g: &mut dyn Graph) -> Result<Value> {
        dispatch(e, row, self, g)
    }
}

/// Evaluates an expression on a row. The commonest shapes (constants, parameters, slots,
/// properties) are answered here; each other family has its own function. Subexpressions go
/// through [`eval`] (the seam), which comes back here.
fn dispatch(e: &PExpr, row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Value> {
    Ok(match e {
        PExpr::Const(v) => v.clone(),
        PExpr::Param(i) => ctx.params.get(*i).cloned().unwrap_or(Value::Null),
        PExpr::Slot(s) => row.get(*s).cloned().unwrap_or(Value::Null),
        PExpr::Property(base, key) => return entity::property_of(base, key, row, ctx, g),
        PExpr::List(xs) => {
            let mut out = Vec::with_capacity(xs.len());
            for x in xs {
                out.push(eval(x, row, ctx, g)?);
            }
            Value::List(out)
        }
        PExpr::Map(xs) => {
            let mut out = PropertyMap::new();
            for (k, x) in xs {
                let v = eval(x, row, ctx, g)?;
                out.insert(arbor_model::Key::from(&**k), v);
            }
            Value::Map(out)
        }
        PExpr::Not(a) => match truth(&eval(a, row, ctx, g)?, "NOT")? {
            Some(b) => Value::Bool(!b),
            None => Value::Null,
        },
        PExpr::Neg(a) => vops::negate(&eval(a, row, ctx, g)?)?,
        PExpr::Plus(a) => {
            let v = eval(a, row, ctx, g)?;
            match v {
                Value::Int(_) | Value::Float(_) | Value::Null | Value::Duration(_) => v,
                other => {
                    return Err(type_err(format!(
                        "Type mismatch: expected a number but was {}",
                        other.type_name()
                    )))
                }
            }
        }
        PExpr::And(a, b) => logic::boolean(BoolOp::And, a, b, row, ctx, g)?,
        PExpr::Or(a, b) => logic::boolean(BoolOp::Or, a, b, row, ctx, g)?,
        PExpr::Xor(a, b) => logic::boolean(BoolOp::Xor, a, b, row, ctx, g)?,
        PExpr::Arith(op, a, b) => {
            let x = eval(a, row, ctx, g)?;
            let y = eval(b, row, ctx, g)?;
            match op {
                ArithOp::Add => vops::add(&x, &y)?,
                ArithOp::Sub => vops::sub(&x, &y)?,
                ArithOp::Mul => vops::mul(&x, &y)?,
                ArithOp::Div => vops::div(&x, &y)?,
                ArithOp::Mod => vops::modulo(&x, &y)?,
                ArithOp::Pow => vops::pow(&x, &y)?,
            }
        }
        PExpr::In(a, b) => {
            let x = eval(a, row, ctx, g)?;
            let l = eval(b, row, ctx, g)?;
            logic::in_list(&x, &l)?
        }
        PExpr::Str(op, a, b) => logic::string_op(op, a, b, row, ctx, g)?,
        PExpr::Compare(first, rest) => logic::compare_chain(first, rest, row, ctx, g)?,
        PExpr::IsNull(a, negated) => {
            let v = eval(a, row, ctx, g)?;
            Value::Bool(v.is_null() != *negated)
        }
        PExpr::HasLabels(a, labels) => logic::has_labels(a, labels, row, ctx, g)?,
        PExpr::Index(a, i) => {
            let base = eval(a, row, ctx, g)?;
            let idx = eval(i, row, ctx, g)?;
            lists::index(&base, &idx, g)?
        }
        PExpr::Slice(a, from, to) => lists::slice_of(a, from, to, row, ctx, g)?,
        PExpr::Scalar { func, args, .. } => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, row, ctx, g)?);
            }
            func(&vals)?
        }
        PExpr::Builtin(b, args) => entity::builtin(*b, args, row, ctx, g)?,
        PExpr::Case { operand, whens, else_ } => logic::case(operand, whens, else_, row, ctx, g)?,
        PExpr::ListComp { slot, list, filter, map } => {
            lists::list_comp(slot, list, filter, map, row, ctx, g)?
        }
        PExpr::Quantified { quantifier, slot, list, filter } => {
            lists::quantified(quantifier, slot, list, filter, row, ctx, g)?
        }
        PExpr::Reduce { acc, init, slot, list, expr } => {
            lists::reduce(acc, init, slot, list, expr, row, ctx, g)?
        }
        PExpr::Subquery { kind, plan } => ctx.run_subquery(*kind, plan, row, g)?,
        PExpr::MapProjection { base, items } => lists::map_projection(base, items, row, ctx, g)?,
        PExpr::Path(steps) => entity::build_path(steps, row, g)?,
    })
}
