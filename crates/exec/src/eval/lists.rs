//! Lists and maps: comprehensions, quantifiers, `reduce`, map projections, indexing and
//! slicing.

use arbor_cypher_plan::expr::{MapProjItem, PExpr, Slot};
use arbor_cypher_syntax::ast::Quantifier;
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use super::entity::{properties, property};
use super::logic::eval_pred;
use super::seam::{eval, truth, type_err};
use crate::ctx::{Ctx, Row};
use crate::graph::Graph;

/// The items of a list operand (`None` for null), or the type error naming what it was.
/// Inlined: a call per list costs ~50 instructions per row in `reduce` and the quantifiers.
#[inline(always)]
fn list_items(v: Value) -> Result<Option<Vec<Value>>> {
    match v {
        Value::Null => Ok(None),
        Value::List(items) => Ok(Some(items)),
        other => {
            Err(type_err(format!("Type mismatch: expected List but was {}", other.type_name())))
        }
    }
}

/// A quantifier's answer from the counts of true, false and null predicate results: a count
/// that settles it wins, else null if any result was null.
#[inline(always)]
fn verdict(quantifier: &Quantifier, trues: usize, falses: usize, nulls: usize) -> Option<bool> {
    // (settled, its answer, the answer when nothing settled it and nothing was null)
    let (settled, answer, otherwise) = match quantifier {
        Quantifier::All => (falses > 0, false, true),
        Quantifier::Any => (trues > 0, true, false),
        Quantifier::None => (trues > 0, false, true),
        Quantifier::Single => (trues > 1, false, trues == 1),
    };
    if settled {
        Some(answer)
    } else if nulls > 0 {
        None
    } else {
        Some(otherwise)
    }
}

/// `[x IN list WHERE filter | map]`, binding `x` in its slot while it iterates.
pub(super) fn list_comp(
    slot: &Slot,
    list: &PExpr,
    filter: &Option<Box<PExpr>>,
    map: &Option<Box<PExpr>>,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let l = eval(list, row, ctx, g)?;
        let Some(items) = list_items(l)? else { return Ok(Value::Null) };
        let saved = row[*slot].clone();
        let mut out = Vec::with_capacity(items.len());
        let r: Result<()> = (|| {
            for x in items {
                ctx.tick()?;
                row[*slot] = x.clone();
                if let Some(f) = filter {
                    if !eval_pred(f, row, ctx, g)? {
                        continue;
                    }
                }
                out.push(match map {
                    Some(m) => eval(m, row, ctx, g)?,
                    None => x,
                });
            }
            Ok(())
        })();
        row[*slot] = saved;
        r?;
        Value::List(out)
    })
}

/// `all`, `any`, `none` and `single` over a list.
pub(super) fn quantified(
    quantifier: &Quantifier,
    slot: &Slot,
    list: &PExpr,
    filter: &PExpr,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let l = eval(list, row, ctx, g)?;
        let Some(items) = list_items(l)? else { return Ok(Value::Null) };
        let saved = row[*slot].clone();
        let (mut trues, mut falses, mut nulls) = (0usize, 0usize, 0usize);
        let r: Result<()> = (|| {
            for x in items {
                ctx.tick()?;
                row[*slot] = x;
                match truth(&eval(filter, row, ctx, g)?, "quantifier")? {
                    Some(true) => trues += 1,
                    Some(false) => falses += 1,
                    None => nulls += 1,
                }
            }
            Ok(())
        })();
        row[*slot] = saved;
        r?;
        let res = verdict(quantifier, trues, falses, nulls);
        res.map(Value::Bool).unwrap_or(Value::Null)
    })
}

/// `reduce(acc = init, x IN list | expr)`.
#[allow(clippy::too_many_arguments)]
pub(super) fn reduce(
    acc: &Slot,
    init: &PExpr,
    slot: &Slot,
    list: &PExpr,
    expr: &PExpr,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let mut a = eval(init, row, ctx, g)?;
        let l = eval(list, row, ctx, g)?;
        let Some(items) = list_items(l)? else { return Ok(Value::Null) };
        let (sa, sx) = (row[*acc].clone(), row[*slot].clone());
        let r: Result<()> = (|| {
            for x in items {
                // Every step: `acc + [x]` makes a step cost as much as the list so far.
                ctx.check_interrupt()?;
                row[*acc] = std::mem::replace(&mut a, Value::Null);
                row[*slot] = x;
                a = eval(expr, row, ctx, g)?;
            }
            Ok(())
        })();
        row[*acc] = sa;
        row[*slot] = sx;
        r?;
        a
    })
}

/// `base {.key, key: expr, .*}`.
pub(super) fn map_projection(
    base: &PExpr,
    items: &[MapProjItem],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let b = eval(base, row, ctx, g)?;
        if b.is_null() {
            return Ok(Value::Null);
        }
        let mut out = PropertyMap::new();
        // With `.*`, Neo4j sends the named items before the entity's own keys (graphrag's
        // `node {.*, embedding: null}` is read by position), while its `keys()` lists the
        // entity's keys first, then the named items it lacks: the map carries both orders.
        let mut all_keys = None;
        for it in items {
            match it {
                MapProjItem::Property(k) => {
                    out.insert(arbor_model::Key::from(&**k), property(&b, k, g)?);
                }
                MapProjItem::Literal(k, x) => {
                    let v = eval(x, row, ctx, g)?;
                    out.insert(arbor_model::Key::from(&**k), v);
                }
                MapProjItem::AllProperties => {
                    if let Value::Map(m) = properties(&b, g)? {
                        all_keys = Some(m.keys_ordered().cloned().collect::<Vec<_>>());
                        out.extend(m);
                    }
                }
            }
        }
        match all_keys {
            Some(base) if items.len() > 1 => {
                let mut named: Vec<arbor_model::Key> = items
                    .iter()
                    .filter_map(|it| match it {
                        MapProjItem::Property(k) | MapProjItem::Literal(k, _) => {
                            Some(arbor_model::Key::from(&**k))
                        }
                        MapProjItem::AllProperties => None,
                    })
                    .collect();
                named.sort();
                named.dedup();
                let mut shown = named.clone();
                shown.extend(base.iter().filter(|k| !named.contains(k)).cloned());
                let extra: Vec<_> = named.into_iter().filter(|k| !base.contains(k)).collect();
                let mut listed = base;
                listed.extend(extra);
                let order = arbor_model::KeyOrder { shown, listed };
                Value::Map(out.with_order(std::sync::Arc::new(order)))
            }
            _ => Value::Map(out),
        }
    })
}

/// `list[from..to]`.
pub(super) fn slice_of(
    a: &PExpr,
    from: &Option<Box<PExpr>>,
    to: &Option<Box<PExpr>>,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        let base = eval(a, row, ctx, g)?;
        let f = match from {
            Some(x) => Some(eval(x, row, ctx, g)?),
            None => None,
        };
        let t = match to {
            Some(x) => Some(eval(x, row, ctx, g)?),
            None => None,
        };
        slice(base, f, t)?
    })
}

pub(super) fn index(base: &Value, idx: &Value, g: &dyn Graph) -> Result<Value> {
    Ok(match (base, idx) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::List(items), Value::Int(i)) => {
            let n = items.len() as i64;
            let j = if *i < 0 { n + *i } else { *i };
            if j < 0 || j >= n {
                Value::Null
            } else {
                items[j as usize].clone()
            }
        }
        (Value::List(_), other) => {
            return Err(type_err(format!(
                "Type mismatch: expected Integer but was {}",
                other.type_name()
            )))
        }
        (
            Value::Map(_)
            | Value::Node(_)
            | Value::Relationship(_)
            | Value::NodeData(_)
            | Value::RelData(_),
            Value::String(k),
        ) => property(base, k, g)?,
        (
            Value::Map(_)
            | Value::Node(_)
            | Value::Relationship(_)
            | Value::NodeData(_)
            | Value::RelData(_),
            other,
        ) => {
            return Err(Error::type_error(format!(
                "Type mismatch: expected String but was {}",
                other.type_name()
            ))
            .with_detail("MapElementAccessByNonString"))
        }
        (other, _) => {
            return Err(type_err(format!(
                "Type mismatch: expected List or Map but was {}",
                other.type_name()
            )))
        }
    })
}

pub(super) fn slice(base: Value, from: Option<Value>, to: Option<Value>) -> Result<Value> {
    let items = match base {
        Value::Null => return Ok(Value::Null),
        Value::List(items) => items,
        other => {
            return Err(type_err(format!(
                "Type mismatch: expected List but was {}",
                other.type_name()
            )))
        }
    };
    let n = items.len() as i64;
    let bound = |v: Option<Value>, default: i64| -> Result<Option<i64>> {
        match v {
            None => Ok(Some(default)),
            Some(Value::Null) => Ok(None),
            // Neo4j reads a slice bound as a Java `int` and fails (a database error) past it.
            Some(Value::Int(i)) if i32::try_from(i).is_err() => {
                Err(Error::new(Status::ExecutionFailed, int32_range_message(i)))
            }
            Some(Value::Int(i)) => Ok(Some(if i < 0 { (n + i).max(0) } else { i.min(n) })),
            Some(other) => Err(type_err(format!(
                "Type mismatch: expected Integer but was {}",
                other.type_name()
            ))),
        }
    };
    let (Some(f), Some(t)) = (bound(from, 0)?, bound(to, n)?) else {
        return Ok(Value::Null);
    };
    if f >= t {
        return Ok(Value::List(Vec::new()));
    }
    Ok(Value::List(items[f as usize..t as usize].to_vec()))
}

/// Neo4j's words for an integer that had to fit a Java `int` and does not.
pub(crate) fn int32_range_message(n: i64) -> String {
    format!("Expected an integer between {} and {}, but got: {n}", i32::MIN, i32::MAX)
}
