//! Rewrite rule: `count` of variable-length paths counted, not produced
//! ([`Op::VarExpandCount`]).
//!
//! `MATCH (:Root)-[:HAS_B|HAS_A*]->(b:B) WHERE b.value RETURN count(b)` reads nothing of a
//! path but whether its end passes the filter: the keyless aggregation counts one per path.
//! Producing a row per path (writing the end into it, handing it to the aggregation, which
//! finds its one group and updates the accumulator) costs more than finding the path. This
//! rule replaces
//!
//! ```text
//! EagerAggregation keys=[] aggs=[c=count(*) | count(b)]
//!   [Filter pred]
//!     VarLengthExpand(All) (a)-[types*min..max]->(b)
//! ```
//!
//! by one operator that enumerates the same paths depth-first and counts those whose end
//! passes `pred`.
//!
//! # Why the answers are the same
//!
//! - The expansion's relationship list is unread (`list_unused`: an anonymous relationship, no
//!   path variable, no other relationship of the MATCH to stay distinct from, so no
//!   `unique_with`), it has no relationship property predicates, no bound end (`into`) and no
//!   bound list (`rel_bound`): the paths are exactly the trails of `min..=max` relationships of
//!   the types, in the direction, from the start, which the counting operator enumerates with
//!   the same relationship-isomorphism check (a relationship may not repeat within a path).
//! - The filter reads the input row and the end (nothing else exists in the row: the list is
//!   unread), so evaluating it on the input row with the end written in is what the `Filter`
//!   evaluated; it runs on the paths in the same (depth-first) order, so the same first error
//!   is raised.
//! - `count(*)` counts rows; `count(b)` (or `count(a)`) counts non-null values, and a pattern
//!   node is never null: both are the number of rows that passed the filter. The aggregation
//!   has no keys, so it produced exactly one row per argument row, holding the argument row and
//!   the count, which is what the operator produces.
//!
//! The grouping form `RETURN a, count(b)` (keys that read neither the end nor the relationship
//! list, and call no random function, which would draw once per path) becomes
//!
//! ```text
//! EagerAggregation keys=[..] aggs=[c=sum(c)]
//!   VarLengthExpand(Count) c = count(...) per row
//! ```
//!
//! the operator producing each input row that has at least one counted path, with its count in
//! `c`, and the aggregation summing them per group. The keys evaluate to the same values on
//! such a row as on each of its paths' rows (they read only the input row), so every group gets
//! the same total; a group whose rows have no counted path had no row before and gets none now
//! (rows with a zero count are dropped); groups appear in the order of their first row with a
//! path, as before. The sum of integers is an integer, as the count was.
//!
//! `count(DISTINCT b)` and every other aggregate keep the plain plan (the distinct form is the
//! [`prune`](super::prune) rule's).

use crate::expr::{AggCall, PExpr};
use crate::ops::Op;
use crate::rewrite::prune::random;
use crate::rewrite::{bottom_up, RewriteCtx, RewriteRule};

/// The rule (runs last: it needs the plain expansion, which no earlier rule changes under a
/// non-distinct `count`).
pub struct VarExpandCount;

impl RewriteRule for VarExpandCount {
    fn name(&self) -> &'static str {
        "var_expand_count"
    }

    fn rewrite(&self, op: Op, _: &RewriteCtx) -> Op {
        bottom_up(op, &count_paths)
    }
}

/// Rewrites one operator: a `count` over a (filtered) variable-length expansion whose paths
/// nothing reads becomes [`Op::VarExpandCount`] (under a `sum` per group when grouped);
/// anything else is returned as it was.
pub fn count_paths(op: Op) -> Op {
    if !applies(&op) {
        return op;
    }
    let Op::Aggregate { input, keys, mut aggs } = op else { return op };
    let out = aggs[0].0;
    let per_row = !keys.is_empty();
    let (expand, pred) = match *input {
        Op::Filter { input, pred, .. } => (*input, Some(pred)),
        other => (other, None),
    };
    let Op::VarExpand { input, from, to, dir, types, min, max, .. } = expand else {
        // `applies` checked the shape.
        return Op::Aggregate { input: Box::new(expand), keys, aggs };
    };
    let count = Op::VarExpandCount { input, from, to, dir, types, min, max, pred, out, per_row };
    if !per_row {
        return count;
    }
    aggs[0].1 = AggCall {
        name: "sum".into(),
        distinct: false,
        args: vec![PExpr::Slot(out)],
        count_star: false,
    };
    Op::Aggregate { input: Box::new(count), keys, aggs }
}

/// Whether `op` has the shape the rule replaces (see the module doc).
fn applies(op: &Op) -> bool {
    let Op::Aggregate { input, keys, aggs } = op else { return false };
    let [(_, call)] = &aggs[..] else { return false };
    if &*call.name != "count" || call.distinct {
        return false;
    }
    let expand = match &**input {
        Op::Filter { input, .. } => &**input,
        other => other,
    };
    let Op::VarExpand {
        from,
        rel,
        to,
        into: false,
        unique_with,
        rel_props,
        rel_bound: false,
        list_unused: true,
        ..
    } = expand
    else {
        return false;
    };
    let counted =
        call.count_star || matches!(&call.args[..], [PExpr::Slot(s)] if s == to || s == from);
    let mut read = Vec::new();
    let keys_ok = keys.iter().all(|(_, e)| !random(e) && e.deps(&mut read))
        && !read.contains(to)
        && !read.contains(rel);
    counted && keys_ok && unique_with.is_empty() && rel_props.is_empty()
}
