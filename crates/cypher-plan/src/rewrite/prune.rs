//! Rewrite rule: pruning expansions under a `Distinct` (or distinct aggregates).
//!
//! `MATCH (s {id: $id})-->()-->()-->(n) RETURN DISTINCT n.id` and
//! `MATCH (s)-[*1..2]->(n) RETURN DISTINCT n` read nothing of the paths but their end nodes, and
//! only to deduplicate values computed from them. Enumerating every relationship-unique path
//! (trail) and materialising a row per trail is then wasted work: hundreds of thousands of
//! 4-hop trails collapse into a few thousand end nodes. This pass replaces such an expansion
//! with [`Op::PruningVarExpand`], which yields each end node once per input row (the runtime
//! prunes the last hop of the trails; see `PruningVarExpand` in the exec crate).
//!
//! The rewrite is sound because everything between the `Distinct` and the expansion is a
//! `Filter` or `Projection` whose expressions read neither the relationships nor the anonymous
//! intermediate nodes: the values the `Distinct` sees for a trail are a function of the input
//! row and the end node, so one row per (input row, end node) yields the same distinct values.
//! Patterns it applies to:
//!
//! - a variable-length expansion whose relationship list nothing reads (`list_unused`), without
//!   relationship property predicates or bound ends;
//! - a chain of two or more single-hop expansions in one direction with the same types, each
//!   required to differ from the chain's earlier relationships (one MATCH: trail semantics),
//!   whose relationship and intermediate node slots nothing above reads. It becomes an
//!   expansion of exactly `k` relationships.
//!
//! Anything else (a label or property predicate on an intermediate node sits in a `Filter`
//! between the hops and stops the chain; a named path reads every slot) keeps the plain plan.

use crate::expr::{MapProjItem, PExpr, Slot};
use crate::ops::Op;
use crate::rewrite::{RewriteCtx, RewriteRule};
use arbor_cypher_syntax::ast::Direction;

/// The rule: applies the rewrite everywhere in the operator tree (not inside expression
/// subqueries, whose plans are shared behind `Arc`s and run per row).
pub struct PruneVarExpand;

impl RewriteRule for PruneVarExpand {
    fn name(&self) -> &'static str {
        "prune_var_expand"
    }

    fn rewrite(&self, mut op: Op, _: &RewriteCtx) -> Op {
        walk(&mut op);
        op
    }
}

fn walk(op: &mut Op) {
    match op {
        Op::Distinct { input, slots } => {
            let used = slots.clone();
            try_prune(input, used);
        }
        Op::Aggregate { input, keys, aggs } => {
            // Aggregates that ignore duplicates of their argument: the per-row multiplicity
            // of an end node does not change them.
            let insensitive = aggs.iter().all(|(_, a)| {
                !a.count_star
                    && (a.distinct && matches!(&*a.name, "count" | "sum" | "avg" | "min" | "max")
                        || matches!(&*a.name, "min" | "max"))
            });
            if insensitive && !aggs.is_empty() {
                let mut used = Vec::new();
                let mut ok = true;
                for (_, e) in keys.iter() {
                    ok &= !random(e) && e.deps(&mut used);
                }
                for (_, a) in aggs.iter() {
                    for e in &a.args {
                        ok &= !random(e) && e.deps(&mut used);
                    }
                }
                if ok {
                    try_prune(input, used);
                }
            }
        }
        _ => {}
    }
    for child in op.children_mut() {
        walk(child);
    }
}

/// Below a deduplicating operator that reads `used`: skips filters and projections (adding
/// what they read) and rewrites the expansion found under them, if it qualifies.
fn try_prune(mut op: &mut Op, mut used: Vec<Slot>) {
    loop {
        match op {
            Op::Filter { input, pred, .. } => {
                if random(pred) || !pred.deps(&mut used) {
                    return;
                }
                op = input;
            }
            Op::Project { input, items } => {
                for (_, e) in items.iter() {
                    if random(e) || !e.deps(&mut used) {
                        return;
                    }
                }
                op = input;
            }
            _ => break,
        }
    }
    if let Some(new) = prune_var_expand(op, &used).or_else(|| prune_chain(op, &used)) {
        *op = new;
    }
}

fn prune_var_expand(op: &mut Op, used: &[Slot]) -> Option<Op> {
    let Op::VarExpand {
        input,
        from,
        rel,
        to,
        dir,
        types,
        min,
        max,
        into: false,
        unique_with,
        rel_props,
        rel_bound: false,
        list_unused: true,
        ..
    } = op
    else {
        return None;
    };
    if !rel_props.is_empty() || used.contains(rel) {
        return None;
    }
    // Unbounded paths are only pruned where a breadth-first search answers exactly (directed,
    // `min <= 1`); otherwise the runtime would still enumerate every trail.
    if max.is_none() && (*dir == Direction::Both || *min > 1) {
        return None;
    }
    Some(Op::PruningVarExpand {
        input: Box::new(std::mem::replace(&mut **input, Op::Argument)),
        from: *from,
        to: *to,
        dir: *dir,
        types: types.clone(),
        min: *min,
        max: *max,
        unique_with: unique_with.clone(),
    })
}

fn prune_chain(op: &mut Op, used: &[Slot]) -> Option<Op> {
    let (dir0, types0) = match op {
        Op::Expand { dir, types, .. } => (*dir, types.clone()),
        _ => return None,
    };
    // Collect the chain top-down: each hop's `to` is the `from` of the hop above it, its
    // relationship must be in the uniqueness set of every hop above (one MATCH: the chain
    // is one trail), and its slots must be unread above.
    let mut rels: Vec<Slot> = Vec::new();
    let mut outer: Vec<Slot> = Vec::new();
    let mut above: Option<Slot> = None;
    let mut uniques: Vec<&Vec<Slot>> = Vec::new();
    let (mut start, mut end) = (0, 0);
    let mut cur: &Op = op;
    while let Op::Expand { input, from, rel, to, dir, types, into, rel_bound, unique_with } = cur {
        if *into || *rel_bound || *dir != dir0 || *types != types0 || used.contains(rel) {
            break;
        }
        match above {
            None => end = *to,
            Some(above_from) => {
                if above_from != *to || used.contains(to) {
                    break;
                }
                if !uniques.iter().all(|u| u.contains(rel)) {
                    break;
                }
            }
        }
        rels.push(*rel);
        uniques.push(unique_with);
        above = Some(*from);
        start = *from;
        cur = input;
    }
    let k = rels.len();
    if k < 2 {
        return None;
    }
    // Relationships of the MATCH outside the chain: no trail may use them.
    for u in &uniques {
        for s in u.iter() {
            if !rels.contains(s) && !outer.contains(s) {
                outer.push(*s);
            }
        }
    }
    // Detach the input below the bottom hop.
    let mut bottom: &mut Op = op;
    for _ in 1..k {
        let Op::Expand { input, .. } = bottom else { return None };
        bottom = input;
    }
    let Op::Expand { input, .. } = bottom else { return None };
    let input = std::mem::replace(&mut **input, Op::Argument);
    Some(Op::PruningVarExpand {
        input: Box::new(input),
        from: start,
        to: end,
        dir: dir0,
        types: types0,
        min: k as u64,
        max: Some(k as u64),
        unique_with: outer,
    })
}

/// Whether `e` calls a random function: evaluated once per end node instead of once per
/// path, it would draw differently (e.g. `WHERE n.x < rand()` keeps an end reached by many
/// paths more often in the plain plan), so such expressions keep the plain plan.
pub(crate) fn random(e: &PExpr) -> bool {
    let any = |es: &[PExpr]| es.iter().any(random);
    match e {
        PExpr::Const(_) | PExpr::Param(_) | PExpr::Slot(_) | PExpr::Path(_) => false,
        // Sub-plans are not analysed; `deps` already refuses them.
        PExpr::Subquery { .. } => true,
        PExpr::Scalar { name, args, .. } => {
            name.eq_ignore_ascii_case("rand")
                || name.eq_ignore_ascii_case("randomuuid")
                || any(args)
        }
        PExpr::Property(a, _)
        | PExpr::Not(a)
        | PExpr::Neg(a)
        | PExpr::Plus(a)
        | PExpr::IsNull(a, _)
        | PExpr::HasLabels(a, _) => random(a),
        PExpr::List(es) | PExpr::Builtin(_, es) => any(es),
        PExpr::Map(es) => es.iter().any(|(_, e)| random(e)),
        PExpr::And(a, b)
        | PExpr::Or(a, b)
        | PExpr::Xor(a, b)
        | PExpr::Arith(_, a, b)
        | PExpr::In(a, b)
        | PExpr::Str(_, a, b)
        | PExpr::Index(a, b) => random(a) || random(b),
        PExpr::Compare(a, rest) => random(a) || rest.iter().any(|(_, e)| random(e)),
        PExpr::Slice(a, b, c) => {
            random(a) || b.as_deref().is_some_and(random) || c.as_deref().is_some_and(random)
        }
        PExpr::Case { operand, whens, else_ } => {
            operand.as_deref().is_some_and(random)
                || whens.iter().any(|(w, t)| random(w) || random(t))
                || else_.as_deref().is_some_and(random)
        }
        PExpr::ListComp { list, filter, map, .. } => {
            random(list)
                || filter.as_deref().is_some_and(random)
                || map.as_deref().is_some_and(random)
        }
        PExpr::Quantified { list, filter, .. } => random(list) || random(filter),
        PExpr::Reduce { init, list, expr, .. } => random(init) || random(list) || random(expr),
        PExpr::MapProjection { base, items } => {
            random(base)
                || items.iter().any(|i| matches!(i, MapProjItem::Literal(_, e) if random(e)))
        }
    }
}
