//! Rewrite rules: `Op -> Op` functions over a finished operator tree, applied by one driver
//! ([`apply`]) in a fixed order ([`RULES`]).
//!
//! A rule sees only the operator tree (and the [`RewriteCtx`]), never the AST or scopes: what
//! it needs to know about the query is carried in the operators themselves. Each rule is
//! tested alone in `tests/rewrite_rules.rs`, as a plan before and after in EXPLAIN-style text
//! ([`crate::ops::Op::render`]).
//!
//! Not rules: where a pattern starts (join order, not a local rewrite) is chosen while
//! planning, preferring a node an index answers (`plan::access`); the seek itself is the
//! [`index_seek`] rule.

pub mod count_store;
pub mod eager;
pub mod eager_after;
pub mod frontier;
pub mod id_seek;
pub mod index_seek;
pub mod prune;
mod rule;
pub mod var_count;

use crate::ops::Op;
pub use rule::{bottom_up, RewriteCtx, RewriteRule};

/// The rules, in the order they run: by-id seeks for scans, index seeks for label scans, `Eager` barriers over
/// updating clauses a later clause reads past, then under writes, count store (it needs the plain
/// expansion), then pruning of expansions under deduplication, then the frontier expansion of the
/// directed multi-hop ones among those, then the counting of variable-length paths under a plain
/// `count`. (The barriers depend only on which operators read the
/// graph, which the later rules do not change.)
pub static RULES: &[&dyn RewriteRule] = &[
    &id_seek::IdSeekRule,
    &index_seek::IndexSeek,
    &eager_after::EagerAfterWrites,
    &eager::EagerBeforeWrites,
    &count_store::CountStore,
    &prune::PruneVarExpand,
    &frontier::FrontierExpand,
    &var_count::VarExpandCount,
];

/// Runs `rules` over a query's tree, in order (the planner passes [`RULES`]).
pub fn apply(rules: &[&dyn RewriteRule], op: Op, ctx: &RewriteCtx) -> Op {
    rules.iter().fold(op, |op, rule| rule.rewrite(op, ctx))
}

/// Runs those of `rules` that apply to expression subqueries over a subquery's plan.
pub(crate) fn apply_subquery(rules: &[&dyn RewriteRule], op: Op, ctx: &RewriteCtx) -> Op {
    rules.iter().filter(|r| r.in_subqueries()).fold(op, |op, rule| rule.rewrite(op, ctx))
}
