//! Rewrite rule: a label scan under a filter that an index can answer becomes an index seek
//! (`NodeByLabelScan` + `Filter` -> `NodeIndexSeek` / `NodeIndexSeekByRange` + `Filter`).
//!
//! The candidate labels are the scanned one, then those of the filter's single-label checks on
//! the scanned node, in order; the predicates are the filter's conjuncts on the node's
//! properties whose other side does not read the node. The seek is the best one
//! [`index_seek_for`] ranks (composite equality, equality, `IN`, two-sided range, `STARTS
//! WITH`, one-sided range). A seek only narrows the candidates: every predicate stays in the
//! filter, so results are the scan's exactly. When the seek uses another label than the scan,
//! the filter checks the scanned label instead of the sought one.
//!
//! The planner still chooses where a pattern starts (a node an index can answer is preferred,
//! see `plan::matching`), and plans an inline property equality (`(n:L {k: $v})`) as an
//! equality seek itself (it needs no index: the seek scans when none answers).

use std::collections::HashSet;

use crate::catalog::Resolver;
use crate::expr::{PExpr, Slot};
use crate::ops::{Name, Op};
use crate::plan::access::{index_seek_for, Found};
use crate::rewrite::{bottom_up, RewriteCtx, RewriteRule};

/// The rule.
pub struct IndexSeek;

impl RewriteRule for IndexSeek {
    fn name(&self) -> &'static str {
        "index_seek"
    }

    /// Patterns inside `EXISTS { }` and the other expression subqueries start with seeks too.
    fn in_subqueries(&self) -> bool {
        true
    }

    fn rewrite(&self, op: Op, ctx: &RewriteCtx) -> Op {
        bottom_up(op, &|op| seek_instead_of_scan(op, ctx.resolver))
    }
}

/// `Filter(NodeScan)` becomes `Filter(seek)` when an index answers one of the filter's
/// predicates; anything else is returned as it is.
fn seek_instead_of_scan(op: Op, res: &dyn Resolver) -> Op {
    let Op::Filter { input, pred, reads } = op else { return op };
    let Op::NodeScan { input: arg, slot, label: Some(scanned) } = *input else {
        return Op::Filter { input, pred, reads };
    };
    let mut parts = Vec::new();
    pred.clone().conjuncts_into(&mut parts);
    let (conj, labels, bound) = seek_inputs(parts, slot, &scanned);
    let Some((label, key, found)) = index_seek_for(&conj, slot, &labels, &bound, res) else {
        let input = Box::new(Op::NodeScan { input: arg, slot, label: Some(scanned) });
        return Op::Filter { input, pred, reads };
    };
    let mut parts: Vec<PExpr> = conj.into_iter().map(|(e, _)| e).collect();
    if label != scanned {
        // The seek answers `label`: the filter checks the scanned label instead.
        if let Some(i) = parts.iter().position(|e| is_label_check(e, slot, &label)) {
            parts.remove(i);
        }
        parts.push(PExpr::HasLabels(Box::new(PExpr::Slot(slot)), vec![scanned]));
    }
    let seek = match found {
        Found::Eq(value) => Op::NodeIndexSeek { input: arg, slot, label, key, value },
        Found::Seek(seek) => Op::NodeIndexRangeSeek { input: arg, slot, label, key, seek },
    };
    let and = |a, b| PExpr::And(Box::new(a), Box::new(b));
    match parts.into_iter().reduce(and) {
        Some(pred) => Op::Filter { input: Box::new(seek), pred, reads },
        None => seek,
    }
}

/// Conjunct with the slots it reads, as [`index_seek_for`] takes them.
type Conj = (PExpr, Option<Vec<Slot>>);

/// What [`index_seek_for`] needs from a filter's conjuncts: the conjuncts with their slots,
/// the candidate labels (`scanned` first) and the slots bound below the scan (every slot the
/// conjuncts read but the scanned one: a filter right above a scan holds only predicates
/// whose slots are bound there).
fn seek_inputs(
    parts: Vec<PExpr>,
    slot: Slot,
    scanned: &Name,
) -> (Vec<Conj>, Vec<Name>, HashSet<Slot>) {
    let mut labels = vec![scanned.clone()];
    let mut bound = HashSet::new();
    let mut conj = Vec::with_capacity(parts.len());
    for e in parts {
        if let PExpr::HasLabels(b, ls) = &e {
            if matches!(**b, PExpr::Slot(s) if s == slot) && ls.len() == 1 {
                labels.push(ls[0].clone());
            }
        }
        let mut d = Vec::new();
        let ok = e.deps(&mut d);
        bound.extend(d.iter().copied().filter(|s| *s != slot));
        conj.push((e, ok.then_some(d)));
    }
    (conj, labels, bound)
}

fn is_label_check(e: &PExpr, slot: Slot, label: &Name) -> bool {
    matches!(e, PExpr::HasLabels(b, ls)
        if matches!(**b, PExpr::Slot(s) if s == slot) && ls.len() == 1 && ls[0] == *label)
}
