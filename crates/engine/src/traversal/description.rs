//! How to traverse: [`Order`], [`Uniqueness`] and the builder [`TraversalDescription`]
//! (order, expander, evaluator, uniqueness, maximum depth, breadth-first memory budget). It
//! only describes a traversal; running one is [`super::Traverser`]'s job.

use std::borrow::BorrowMut;

use arbor_model::graph::Edge;
use arbor_model::NodeId;
use arbor_storage::Transaction;

use super::depth_first::State;
use super::*;
use crate::embedded::Tx;
use crate::tokens::RelType;

/// In which order branches are visited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Pre-order depth-first: a path's children are visited (in expander order) before its
    /// siblings.
    #[default]
    DepthFirst,
    /// Level by level: all paths of length `n` before any of length `n + 1` (each level in queue
    /// order: parents in level order, each parent's children in expander order). Memory is
    /// bounded by [`TraversalDescription::memory_budget`] for the path-only uniqueness kinds.
    BreadthFirst,
}

/// Which paths the traversal may produce, as in Neo4j's `Uniqueness`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Uniqueness {
    /// Every path is followed; on a graph with cycles, use a maximum depth.
    None,
    /// A node is visited at most once in the whole traversal (the default, as in Neo4j).
    #[default]
    NodeGlobal,
    /// A relationship is followed at most once in the whole traversal.
    RelationshipGlobal,
    /// A node appears at most once in each path.
    NodePath,
    /// A relationship appears at most once in each path.
    RelationshipPath,
}

/// How to traverse: order, expander, evaluator, uniqueness and maximum depth. Reusable and
/// cheap to clone (if the expander and evaluator are).
#[derive(Clone, Debug)]
pub struct TraversalDescription<E = TypeExpander, V = IncludeAll> {
    pub(super) order: Order,
    pub(super) uniqueness: Uniqueness,
    pub(super) max_depth: Option<u32>,
    /// Breadth-first: bytes the branch arena may use before iterative deepening takes over.
    pub(super) memory_budget: usize,
    pub(super) expander: E,
    pub(super) evaluator: V,
}

/// The default of [`TraversalDescription::memory_budget`]: 480 KiB of arena (five chunks).
pub const DEFAULT_MEMORY_BUDGET: usize = 480 << 10;

impl Default for TraversalDescription {
    fn default() -> Self {
        TraversalDescription::new()
    }
}

impl TraversalDescription {
    /// Depth-first, node-global uniqueness, every relationship in both directions, every path
    /// included (Neo4j's defaults).
    pub fn new() -> TraversalDescription {
        TraversalDescription {
            order: Order::DepthFirst,
            uniqueness: Uniqueness::NodeGlobal,
            max_depth: None,
            memory_budget: DEFAULT_MEMORY_BUDGET,
            expander: TypeExpander::default(),
            evaluator: IncludeAll,
        }
    }
}

impl<V> TraversalDescription<TypeExpander, V> {
    /// Adds `rel_type` in `dir` to the type/direction expander.
    pub fn relationships(mut self, rel_type: RelType, dir: Direction) -> Self {
        self.expander = self.expander.add(rel_type, dir);
        self
    }
}

impl<E: Expander, V: Evaluator> TraversalDescription<E, V> {
    pub fn depth_first(mut self) -> Self {
        self.order = Order::DepthFirst;
        self
    }

    pub fn breadth_first(mut self) -> Self {
        self.order = Order::BreadthFirst;
        self
    }

    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    pub fn uniqueness(mut self, u: Uniqueness) -> Self {
        self.uniqueness = u;
        self
    }

    /// Paths longer than `depth` relationships are neither returned nor expanded.
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.max_depth = Some(depth.min(EXPAND_FLAG - 1));
        self
    }

    /// Breadth-first with [`Uniqueness::None`], [`Uniqueness::NodePath`] or
    /// [`Uniqueness::RelationshipPath`]: the bytes its branch arena may grow to (default
    /// [`DEFAULT_MEMORY_BUDGET`]). When the next branch would not fit, the traversal continues
    /// by iterative deepening (see the module documentation): same paths, same order, the
    /// evaluator still called once per path, but the expander called again on paths it already
    /// expanded. The arena grows in 96 KiB chunks; a budget below one chunk allows
    /// `bytes / 24` branches in one chunk, and 0 starts with iterative deepening right away.
    /// `usize::MAX` keeps every branch in the arena (no re-walks, memory proportional to the
    /// number of paths). Node-global and relationship-global uniqueness always use the arena.
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = bytes;
        self
    }

    /// Replaces the expander.
    pub fn expander<E2: Expander>(self, expander: E2) -> TraversalDescription<E2, V> {
        TraversalDescription {
            order: self.order,
            uniqueness: self.uniqueness,
            max_depth: self.max_depth,
            memory_budget: self.memory_budget,
            expander,
            evaluator: self.evaluator,
        }
    }

    /// Replaces the expander with a closure appending the relationships to follow.
    pub fn expand_with<F>(self, f: F) -> TraversalDescription<FnExpander<F>, V>
    where
        F: Fn(&Path<'_>, &mut Vec<Edge>),
    {
        self.expander(FnExpander(f))
    }

    /// Replaces the evaluator.
    pub fn evaluator<V2: Evaluator>(self, evaluator: V2) -> TraversalDescription<E, V2> {
        TraversalDescription {
            order: self.order,
            uniqueness: self.uniqueness,
            max_depth: self.max_depth,
            memory_budget: self.memory_budget,
            expander: self.expander,
            evaluator,
        }
    }

    /// Replaces the evaluator with a closure.
    pub fn evaluate_with<F>(self, f: F) -> TraversalDescription<E, FnEvaluator<F>>
    where
        F: Fn(&Path<'_>) -> Evaluation,
    {
        self.evaluator(FnEvaluator(f))
    }

    /// Starts a lazy traversal from `start` in a workspace borrowed from the database's pool
    /// (returned when the traverser is dropped).
    pub fn traverse<'a>(
        &'a self,
        tx: &'a Tx,
        start: NodeId,
    ) -> Traverser<'a, E, V, PooledWorkspace<'a>> {
        let pool = tx.database().traversal_pool();
        self.traverse_storage(tx.storage(), start, pool.take())
    }

    /// Starts a lazy traversal from `start` in a reused workspace.
    pub fn traverse_in<'a>(
        &'a self,
        tx: &'a Tx,
        start: NodeId,
        ws: &'a mut Workspace,
    ) -> Traverser<'a, E, V, &'a mut Workspace> {
        self.traverse_storage(tx.storage(), start, ws)
    }

    /// Starts a traversal on a raw storage transaction (for crates that hold one, such as the
    /// Cypher executor's graph seam).
    pub fn traverse_storage<'a, W: BorrowMut<Workspace>>(
        &'a self,
        tx: &'a Transaction,
        start: NodeId,
        mut ws: W,
    ) -> Traverser<'a, E, V, W> {
        ws.borrow_mut().reset();
        Traverser { td: self, tx, start, ws, state: State::Start, cursor: 0, target: 0 }
    }
}
