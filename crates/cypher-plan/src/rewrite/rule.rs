//! What a rewrite rule is: the [`RewriteRule`] trait, the [`RewriteCtx`] it may consult, and
//! [`bottom_up`], the traversal most rules use. A leaf below the rules themselves and below
//! `rewrite/mod.rs`, which lists them in order.

use crate::catalog::Resolver;
use crate::ops::Op;

/// What a rule may consult besides the tree.
pub struct RewriteCtx<'a> {
    pub resolver: &'a dyn Resolver,
}

/// One rewrite rule.
pub trait RewriteRule: Sync {
    /// A short name for tests and diagnostics.
    fn name(&self) -> &'static str;
    /// Whether the rule also runs on the plans of expression subqueries (`EXISTS { }`,
    /// `COUNT { }`, `COLLECT { }`), which are built before the enclosing query's tree.
    fn in_subqueries(&self) -> bool {
        false
    }
    /// Rewrites the whole tree rooted at `op`.
    fn rewrite(&self, op: Op, ctx: &RewriteCtx) -> Op;
}

/// Rebuilds the tree bottom-up, replacing each operator `o` by `f(o)` after its inputs were
/// rewritten (expression subqueries are left alone: their plans are rewritten when built).
pub fn bottom_up(mut op: Op, f: &dyn Fn(Op) -> Op) -> Op {
    for child in op.children_mut() {
        let c = std::mem::replace(child, Op::Argument);
        *child = bottom_up(c, f);
    }
    f(op)
}
