//! Rewrite rule: a scan under a filter that names the node or relationship by id becomes a
//! by-id seek (`AllNodesScan`/`NodeByLabelScan` + `Filter` -> `NodeByIdSeek` /
//! `NodeByElementIdSeek` + `Filter`; a single `Expand` from a scanned node + `Filter` ->
//! `DirectedRelationshipByIdSeek` / `UndirectedRelationshipByIdSeek` (and the element-id
//! forms) + `Filter`).
//!
//! The predicates answered are `id(x) = e`, `e = id(x)`, `id(x) IN list` and the same with
//! `elementId(x)`, where `e` does not read `x` (a parameter, a literal, an outer variable).
//! A seek only narrows the candidates: every predicate stays in the filter, and the scanned
//! label, the expansion's types and the far node's label checks move into it, so results are
//! the scan's exactly (the seek yields each id once, however often the list names it).

use arbor_cypher_syntax::ast::CompareOp;
use arbor_model::Value;

use crate::expr::{Builtin, PExpr, Slot};
use crate::ops::{IdSeek, Op};
use crate::rewrite::{bottom_up, RewriteCtx, RewriteRule};

/// The rule.
pub struct IdSeekRule;

impl RewriteRule for IdSeekRule {
    fn name(&self) -> &'static str {
        "id_seek"
    }

    /// Patterns inside `EXISTS { }` and the other expression subqueries seek by id too.
    fn in_subqueries(&self) -> bool {
        true
    }

    fn rewrite(&self, op: Op, _: &RewriteCtx) -> Op {
        bottom_up(op, &seek_instead_of_scan)
    }
}

fn seek_instead_of_scan(op: Op) -> Op {
    let Op::Filter { input, pred, reads } = op else { return op };
    match *input {
        Op::NodeScan { input: arg, slot, label } => {
            let Some((ids, seek)) = id_predicate(&pred, slot) else {
                let input = Box::new(Op::NodeScan { input: arg, slot, label });
                return Op::Filter { input, pred, reads };
            };
            let mut pred = pred;
            if let Some(l) = label {
                pred = and(PExpr::HasLabels(Box::new(PExpr::Slot(slot)), vec![l]), pred);
            }
            let input = Box::new(Op::NodeByIdSeek { input: arg, slot, ids, seek });
            Op::Filter { input, pred, reads }
        }
        Op::Expand { .. } => rel_seek(*input, pred, reads),
        other => Op::Filter { input: Box::new(other), pred, reads },
    }
}

/// `Filter(Expand(NodeScan))` (the scan perhaps under its own filter) of a single fresh
/// relationship becomes `Filter(RelByIdSeek)` when the filter names the relationship by id.
fn rel_seek(expand: Op, pred: PExpr, reads: bool) -> Op {
    let keep = |expand: Op, pred: PExpr| Op::Filter { input: Box::new(expand), pred, reads };
    let Op::Expand { input, from, rel, to, dir, types, into, rel_bound, unique_with } = expand
    else {
        return keep(expand, pred);
    };
    let fresh = !into && !rel_bound && unique_with.is_empty();
    let scan_ok = match &*input {
        Op::NodeScan { slot, .. } => *slot == from,
        Op::Filter { input: i, .. } => matches!(&**i, Op::NodeScan { slot, .. } if *slot == from),
        _ => false,
    };
    let found = if fresh && scan_ok { id_predicate(&pred, rel) } else { None };
    let Some((ids, seek)) = found else {
        let expand = Op::Expand { input, from, rel, to, dir, types, into, rel_bound, unique_with };
        return keep(expand, pred);
    };
    // The checks the scan, its filter and the expansion made move into the filter.
    let mut checks = Vec::new();
    let scan = match *input {
        Op::Filter { input, pred, .. } => {
            checks.push(pred);
            *input
        }
        scan => scan,
    };
    let Op::NodeScan { input: arg, label, .. } = scan else { unreachable!("checked above") };
    if let Some(l) = label {
        checks.push(PExpr::HasLabels(Box::new(PExpr::Slot(from)), vec![l]));
    }
    if !types.is_empty() {
        let names = types.iter().map(|t| Value::String(t.clone())).collect();
        let ty = PExpr::Builtin(Builtin::Type, vec![PExpr::Slot(rel)]);
        checks.push(PExpr::In(Box::new(ty), Box::new(PExpr::Const(Value::List(names)))));
    }
    checks.push(pred);
    let pred = checks.into_iter().reduce(and).unwrap_or(PExpr::Const(Value::Bool(true)));
    let seek = Op::RelByIdSeek { input: arg, rel, start: from, end: to, dir, ids, seek };
    keep(seek, pred)
}

fn and(a: PExpr, b: PExpr) -> PExpr {
    PExpr::And(Box::new(a), Box::new(b))
}

/// The first conjunct of `pred` that names `slot` by id: the id expression and how to read it.
fn id_predicate(pred: &PExpr, slot: Slot) -> Option<(PExpr, IdSeek)> {
    let mut parts = Vec::new();
    pred.clone().conjuncts_into(&mut parts);
    parts.into_iter().find_map(|c| match c {
        PExpr::Compare(a, mut rest) if rest.len() == 1 && rest[0].0 == CompareOp::Eq => {
            let (_, b) = rest.pop()?;
            let seek = |element| IdSeek { element, list: false };
            if let Some(element) = id_of(&a, slot) {
                independent(&b, slot).then(|| (b, seek(element)))
            } else {
                let element = id_of(&b, slot)?;
                independent(&a, slot).then(|| (*a, seek(element)))
            }
        }
        PExpr::In(a, list) => {
            let element = id_of(&a, slot)?;
            independent(&list, slot).then_some((*list, IdSeek { element, list: true }))
        }
        _ => None,
    })
}

/// `Some(false)` for `id(slot)`, `Some(true)` for `elementId(slot)`.
fn id_of(e: &PExpr, slot: Slot) -> Option<bool> {
    match e {
        PExpr::Builtin(b @ (Builtin::Id | Builtin::ElementId), args) if matches!(args.as_slice(), [PExpr::Slot(s)] if *s == slot) => {
            Some(*b == Builtin::ElementId)
        }
        _ => None,
    }
}

/// Whether `e` can be evaluated before `slot` is bound (reads neither it nor a subquery).
fn independent(e: &PExpr, slot: Slot) -> bool {
    let mut deps = Vec::new();
    e.deps(&mut deps) && !deps.contains(&slot)
}
