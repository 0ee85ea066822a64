//! Rewrite rule: `count(*)` over a label scan or one simple expansion answered from the count
//! store.

use arbor_cypher_syntax::ast::Direction;

use crate::expr::{PExpr, Slot};
use crate::ops::Op;
use crate::rewrite::{bottom_up, RewriteCtx, RewriteRule};

/// The rule, applied to every aggregation of the tree (bottom-up), also inside expression
/// subqueries.
pub struct CountStore;

impl RewriteRule for CountStore {
    fn name(&self) -> &'static str {
        "count_store"
    }

    fn in_subqueries(&self) -> bool {
        true
    }

    fn rewrite(&self, op: Op, _: &RewriteCtx) -> Op {
        bottom_up(op, &from_count_store)
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
                Op::Filter { input: e, pred: PExpr::HasLabels(b, ls), .. } if ls.len() == 1 => {
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
