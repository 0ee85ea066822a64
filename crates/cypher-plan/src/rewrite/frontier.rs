//! Rewrite rule: set-at-a-time multi-hop expansion ([`Op::FrontierExpand`]).
//!
//! The [`prune`](super::prune) rule has already replaced the expansions whose paths nothing
//! reads but the end node, under a deduplication (`RETURN DISTINCT n.id`, `count(DISTINCT n)`),
//! by [`Op::PruningVarExpand`]: the distinct ends of the trails (relationship-unique paths) of
//! `min..=max` relationships. That operator answers a directed `min <= 1` expansion
//! breadth-first, but anything else (the fixed-length chains `()-->()-->()-->(n)` become
//! `*3..3`) depth-first, enumerating every trail one hop short of `max`. This rule hands the
//! directed, bounded `min >= 2`, `max >= 4` case to a frontier operator instead, which expands
//! level by level over node sets: each node of a level is expanded once, however many trails
//! reach it.
//!
//! Why `max >= 4` ([`MIN_MAX_LEVELS`]): up to `max = 3` the depth-first operator enumerates at
//! most the trails of two relationships, which costs what expanding levels 1 and 2 as sets
//! costs, and its last-hop pruning already handles each node once; measured on mgBench's
//! Pokec (callgrind), the frontier then only added bookkeeping (+4 to +8 % instructions on
//! expansion_2/3). From four relationships on, it saves the enumeration of the 3-relationship
//! trails (about `d^3` steps for degree `d`) against `|L_2| * d`.
//!
//! # Why the answers are the same
//!
//! Let `L_i` be the set of nodes at the end of a *walk* (relationships may repeat) of exactly
//! `i` relationships from the start, over the relationships the expansion may use (its types,
//! its direction, none of the MATCH's other relationships); `L_0 = {s}` and `L_i` is the set of
//! neighbours of `L_{i-1}`, which is what the operator computes. The answer is the set `T` of
//! nodes `t` with a *trail* of `i` relationships to `t` for some `i` in `min..=max`.
//!
//! - Every trail is a walk, so `T` is contained in the union of `L_min ..= L_max`: no end is
//!   missed by looking only at those candidates.
//! - A candidate is produced only with a proof: the operator keeps, for each node of a level,
//!   the node of the previous level and the relationship it was first reached by. Following
//!   those back from `t` in `L_i` gives a walk of `i` relationships from `s` to `t`; when its
//!   relationships are pairwise distinct it is a trail, and `t` is in `T`.
//! - When that walk repeats a relationship (in Pokec-like graphs: `s->x->s->x` over one
//!   relationship `s->x` twice), the operator searches backwards from `t` for a trail of `i`
//!   relationships whose `j`-th node lies in `L_j` (every trail's nodes do, so the search
//!   misses none) and whose relationships are pairwise distinct. It is exhaustive, so a
//!   candidate without any trail is rejected, and one with a trail is found.
//!
//! So the operator produces exactly `T`, once per input row. The backward search costs at most
//! the walks into `t` through the levels, only for candidates whose first walk repeats a
//! relationship; in a directed graph a repeat needs a cycle of the walk, so it is rare.
//! Undirected expansions are left depth-first: there every walk can go back and forth over one
//! relationship (`a-b-a`), so nearly every candidate would need the search. `max` is bounded
//! by [`MAX_LEVELS`] (one node set per level).
//!
//! The operator reads no more than the pruning expansion did (the end node in `to`), so the
//! operators above it, which the prune rule checked, see the same rows.

use crate::ops::Op;
use crate::rewrite::{bottom_up, RewriteCtx, RewriteRule};
use arbor_cypher_syntax::ast::Direction;

/// The largest `max` the rule takes (one node set per level in the operator).
pub const MAX_LEVELS: u64 = 16;

/// The smallest `max` the rule takes (see the module doc).
pub const MIN_MAX_LEVELS: u64 = 4;

/// The rule (runs after [`super::prune::PruneVarExpand`]).
pub struct FrontierExpand;

impl RewriteRule for FrontierExpand {
    fn name(&self) -> &'static str {
        "frontier_expand"
    }

    fn rewrite(&self, op: Op, _: &RewriteCtx) -> Op {
        bottom_up(op, &frontier)
    }
}

/// Rewrites one operator: a directed pruning expansion of `min >= 2` and `max` in
/// [`MIN_MAX_LEVELS`]`..=`[`MAX_LEVELS`] becomes
/// a frontier expansion; anything else is returned as it was.
pub fn frontier(op: Op) -> Op {
    match op {
        Op::PruningVarExpand { input, from, to, dir, types, min, max: Some(max), unique_with }
            if dir != Direction::Both
                && min >= 2
                && max >= min
                && (MIN_MAX_LEVELS..=MAX_LEVELS).contains(&max) =>
        {
            Op::FrontierExpand { input, from, to, dir, types, min, max, unique_with }
        }
        op => op,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::prune::PruneVarExpand;
    use crate::{plan_with_rules, ProcSig, Resolver, ScalarFn};

    struct NoFunctions;

    impl Resolver for NoFunctions {
        fn scalar(&self, _: &str) -> Option<ScalarFn> {
            None
        }
        fn procedure(&self, _: &str) -> Option<ProcSig> {
            None
        }
    }

    /// The plan after the prune rule, and after it and this rule.
    fn plans(q: &str) -> (String, String) {
        let stmt = arbor_cypher_syntax::parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        let pruned = plan_with_rules(&stmt, q, &NoFunctions, &[&PruneVarExpand]).unwrap().root;
        let after = FrontierExpand.rewrite(pruned.clone(), &RewriteCtx { resolver: &NoFunctions });
        let planned =
            plan_with_rules(&stmt, q, &NoFunctions, &[&PruneVarExpand, &FrontierExpand]).unwrap();
        assert_eq!(planned.root.render(), after.render(), "{q}");
        (pruned.render(), after.render())
    }

    #[test]
    fn fixed_length_chain_becomes_a_frontier_expansion() {
        let (before, after) = plans(
            "MATCH (s:User)-->()-->()-->()-->(n:User) WHERE n.age >= 18 RETURN DISTINCT n.id",
        );
        assert!(before.contains("VarLengthExpand(Pruning) (s0)-[]->(s4) *4..4"), "{before}");
        assert!(after.contains("VarLengthExpand(Pruning,BFS) (s0)-[]->(s4) *4..4"), "{after}");
        assert_eq!(after.replace("(Pruning,BFS)", "(Pruning)"), before);
    }

    #[test]
    fn directed_var_length_from_two_and_distinct_aggregates() {
        let (_, after) = plans("MATCH (a)<-[:T*2..4]-(b) RETURN count(DISTINCT b) AS c");
        assert!(after.contains("VarLengthExpand(Pruning,BFS) (s0)<-[:T]-(s1) *2..4"), "{after}");
        let (_, after) =
            plans("MATCH (s)-[r]->(m)-->()-->()-->()-->(n) RETURN DISTINCT n.id, m.id, r.w");
        assert!(after.contains("VarLengthExpand(Pruning,BFS) (s1)-[]->(s5) *4..4"), "{after}");
    }

    #[test]
    fn breadth_first_short_undirected_unbounded_and_plain_expansions_stay() {
        for q in [
            // Already breadth-first in the pruning expansion.
            "MATCH (s)-[*1..4]->(n) RETURN DISTINCT n.id",
            "MATCH (s)-->(n) RETURN DISTINCT n.id",
            // Fewer than four relationships: depth-first is as cheap.
            "MATCH (s)-->()-->()-->(n) RETURN DISTINCT n.id",
            "MATCH (s)-[*2..3]->(n) RETURN DISTINCT n.id",
            // Undirected: walks turn back over one relationship.
            "MATCH (s)--()--()--()--(n) RETURN DISTINCT n.id",
            "MATCH (s)-[*2..4]-(n) RETURN DISTINCT n.id",
            // Unbounded, or more levels than the operator keeps.
            "MATCH (s)-[*2..]->(n) RETURN DISTINCT n.id",
            "MATCH (s)-[*2..17]->(n) RETURN DISTINCT n.id",
            // Paths read: no pruning expansion to start from.
            "MATCH p = (s)-->()-->()-->()-->(n) RETURN DISTINCT n.id",
            "MATCH (s)-->()-->()-->()-->(n) RETURN n.id",
        ] {
            let (before, after) = plans(q);
            assert_eq!(before, after, "{q}");
            assert!(!after.contains("Pruning,BFS"), "{q}");
        }
    }
}
