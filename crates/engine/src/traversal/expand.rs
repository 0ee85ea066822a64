//! What a traversal asks at each step: [`Evaluation`], the [`Expander`] and [`Evaluator`]
//! traits with their closure wrappers and defaults ([`TypeExpander`], [`IncludeAll`]). The
//! node view they read through, [`NodeRef`](super::NodeRef), is in `node.rs`. No traversal state lives here.

use arbor_model::graph::{Edge, TokenId};

use super::Path;
use crate::tokens::RelType;

/// What the evaluator says about a path: whether to return it and whether to look beyond it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    IncludeAndContinue,
    IncludeAndPrune,
    ExcludeAndContinue,
    ExcludeAndPrune,
}

impl Evaluation {
    /// Include or exclude; always continue.
    pub fn of_includes(include: bool) -> Evaluation {
        if include {
            Evaluation::IncludeAndContinue
        } else {
            Evaluation::ExcludeAndContinue
        }
    }

    /// Continue or prune; always include.
    pub fn of_continues(cont: bool) -> Evaluation {
        if cont {
            Evaluation::IncludeAndContinue
        } else {
            Evaluation::IncludeAndPrune
        }
    }

    pub fn of(include: bool, cont: bool) -> Evaluation {
        match (include, cont) {
            (true, true) => Evaluation::IncludeAndContinue,
            (true, false) => Evaluation::IncludeAndPrune,
            (false, true) => Evaluation::ExcludeAndContinue,
            (false, false) => Evaluation::ExcludeAndPrune,
        }
    }

    pub fn includes(self) -> bool {
        matches!(self, Evaluation::IncludeAndContinue | Evaluation::IncludeAndPrune)
    }

    pub fn continues(self) -> bool {
        matches!(self, Evaluation::IncludeAndContinue | Evaluation::ExcludeAndContinue)
    }
}

/// Decides which relationships to follow from the end of a path, by appending them to `out`.
/// `out` is a buffer the traversal reuses, so implementations must only append.
///
/// An expander may be called more than once for the same path: a breadth-first traversal that
/// outgrows its memory budget (see [`TraversalDescription::memory_budget`]) walks the paths it
/// already expanded again. It must therefore be deterministic for a snapshot: the same path
/// gives the same relationships in the same order. The built-in expanders ([`TypeExpander`],
/// and [`NodeRef::relationships`](super::NodeRef::relationships) for closures) are. If it is not, a bounded breadth-first
/// traversal's output is unspecified (it stays memory-safe and terminates as the graph allows).
pub trait Expander {
    fn expand(&self, path: &Path<'_>, out: &mut Vec<Edge>);
}

/// Decides whether a path is returned and whether the traversal goes beyond it.
pub trait Evaluator {
    fn evaluate(&self, path: &Path<'_>) -> Evaluation;
}

/// An expander made from a closure (see [`TraversalDescription::expand_with`]).
#[derive(Clone)]
pub struct FnExpander<F>(pub F);

// The closure wrappers are inlined, so the traversal loop calls the closure itself (one call
// per step, not two).
impl<F: Fn(&Path<'_>, &mut Vec<Edge>)> Expander for FnExpander<F> {
    #[inline(always)]
    fn expand(&self, path: &Path<'_>, out: &mut Vec<Edge>) {
        (self.0)(path, out)
    }
}

/// An evaluator made from a closure (see [`TraversalDescription::evaluate_with`]).
#[derive(Clone)]
pub struct FnEvaluator<F>(pub F);

impl<F: Fn(&Path<'_>) -> Evaluation> Evaluator for FnEvaluator<F> {
    #[inline(always)]
    fn evaluate(&self, path: &Path<'_>) -> Evaluation {
        (self.0)(path)
    }
}

/// Includes every path and always continues (the default evaluator).
#[derive(Clone, Copy, Debug, Default)]
pub struct IncludeAll;

impl Evaluator for IncludeAll {
    fn evaluate(&self, _path: &Path<'_>) -> Evaluation {
        Evaluation::IncludeAndContinue
    }
}

/// Follows relationships by type and direction. With no rule it follows every relationship in
/// both directions (the default expander). Rules are applied in order; overlapping rules list a
/// relationship twice.
#[derive(Clone, Debug, Default)]
pub struct TypeExpander {
    /// (direction, types); empty types = all types.
    pub(super) rules: Vec<(Direction, Vec<TokenId>)>,
}

impl TypeExpander {
    pub fn new() -> TypeExpander {
        TypeExpander::default()
    }

    /// Follows `rel_type` in `dir` (merged with an earlier rule of the same direction).
    pub fn add(mut self, rel_type: RelType, dir: Direction) -> TypeExpander {
        match self.rules.iter_mut().find(|(d, t)| *d == dir && !t.is_empty()) {
            Some((_, types)) => {
                if !types.contains(&rel_type.0) {
                    types.push(rel_type.0)
                }
            }
            None => self.rules.push((dir, vec![rel_type.0])),
        }
        self
    }

    /// Follows every relationship in `dir`.
    pub fn all(mut self, dir: Direction) -> TypeExpander {
        self.rules.push((dir, Vec::new()));
        self
    }
}

impl Expander for TypeExpander {
    fn expand(&self, path: &Path<'_>, out: &mut Vec<Edge>) {
        let end = path.end;
        if self.rules.is_empty() {
            end.edges_into(Direction::Both, &[], out);
            return;
        }
        for (dir, types) in &self.rules {
            end.edges_into(*dir, types, out);
        }
    }
}

pub use arbor_model::graph::Direction;
