//! The running traversal ([`Traverser`]) and its depth-first order: the path stack of
//! [`arbor_exec::traverse::DepthFirst`], one evaluation and at most one expansion per path.
//! Breadth-first (arena and iterative deepening) is in `breadth_first.rs`.

use std::borrow::BorrowMut;

use arbor_exec::traverse::DepthFirst;
use arbor_model::graph::Edge;
use arbor_model::{Error, NodeId};
use arbor_storage::Transaction;

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// The start path has not been evaluated yet.
    Start,
    Running,
    /// Bounded breadth-first, iterative deepening: walking depth-first down to level `target`.
    /// The root of the walk has not been visited yet.
    WalkStart,
    /// Walking (the depth-first path stack holds the current path).
    Walking,
    Done,
}

/// A running traversal. Iterating yields the end nodes of included paths; [`Traverser::next_path`]
/// yields the paths themselves (borrowed, valid until the next call). Both stop at a failed
/// storage read: check [`Traverser::error`] (or use [`Traverser::try_count_paths`]) when the
/// store reads its base through the page cache.
pub struct Traverser<'a, E, V, W> {
    pub(super) td: &'a TraversalDescription<E, V>,
    pub(super) tx: &'a Transaction,
    pub(super) start: NodeId,
    pub(super) ws: W,
    pub(super) state: State,
    /// Breadth-first: the arena index of the branch being expanded next.
    pub(super) cursor: usize,
    /// Bounded breadth-first: the level the current walk evaluates.
    pub(super) target: u32,
}

impl<'a, E: Expander, V: Evaluator, W: BorrowMut<Workspace>> Traverser<'a, E, V, W> {
    /// The next included path, or `None` when the traversal is exhausted or a storage read
    /// failed (then [`Traverser::error`] says why).
    pub fn next_path(&mut self) -> Option<Path<'_>> {
        if !self.advance() {
            return None;
        }
        let ws: &Workspace = self.ws.borrow();
        Some(match self.td.order {
            Order::DepthFirst => frames_path(self.tx, self.start, ws.dfs.frames()),
            Order::BreadthFirst if self.state == State::Walking => {
                frames_path(self.tx, self.start, ws.dfs.frames())
            }
            Order::BreadthFirst => {
                chain_path(self.tx, self.start, &ws.branches, ws.branches.len() as u32 - 1)
            }
        })
    }

    /// Counts the remaining included paths (up to a failed storage read: see
    /// [`Traverser::try_count_paths`]).
    pub fn count_paths(mut self) -> u64 {
        let mut n = 0;
        while self.advance() {
            n += 1;
        }
        n
    }

    /// Counts the remaining included paths, or fails with the storage read error that ended
    /// the traversal early.
    pub fn try_count_paths(mut self) -> Result<u64, Error> {
        let mut n = 0;
        while self.advance() {
            n += 1;
        }
        self.check().map(|()| n)
    }

    /// The error of a storage read this traversal's transaction failed (a segment page that
    /// could not be read or failed its checksum, naming file and page), if any. The traversal
    /// stops at such an error instead of going on over a partial expansion: an iteration that
    /// ended is complete only if this is `None`. The transaction keeps the error, and a write
    /// transaction that saw it cannot commit.
    pub fn error(&self) -> Option<&Error> {
        self.tx.read_error()
    }

    /// `Err` with [`Traverser::error`], if any.
    pub fn check(&self) -> Result<(), Error> {
        self.error().map_or(Ok(()), |e| Err(e.clone()))
    }

    /// Moves to the next included path in the traversal's order; false when exhausted or when
    /// a storage read failed (every path from then on could rest on a partial expansion).
    ///
    /// The error is checked once per step, after it: a read that failed before this call (in
    /// the caller's code, or before the traversal began) is seen here as well, before any
    /// path is returned, so checking before the step too would only cost a second look.
    fn advance(&mut self) -> bool {
        let found = match self.td.order {
            Order::DepthFirst => self.advance_dfs(),
            Order::BreadthFirst => self.advance_bfs(),
        };
        if self.tx.read_error().is_some() {
            self.state = State::Done;
            return false;
        }
        found
    }

    pub(super) fn max_depth(&self) -> u32 {
        self.td.max_depth.unwrap_or(EXPAND_FLAG - 1)
    }

    /// Depth-first: moves to the next included path (the path stack then holds it).
    pub(super) fn advance_dfs(&mut self) -> bool {
        let max = self.max_depth();
        let tx = self.tx;
        let td = self.td;
        let ws: &mut Workspace = self.ws.borrow_mut();
        if self.state == State::Done {
            return false;
        }
        if self.state == State::Start {
            self.state = State::Running;
            ws.dfs.reset(self.start);
            if td.uniqueness == Uniqueness::NodeGlobal {
                ws.seen_nodes.insert(self.start.0);
            }
            if visit_top(td, tx, self.start, &mut ws.dfs, max) {
                return true;
            }
        }
        while let Some(e) = ws.dfs.next_edge() {
            let ok = match td.uniqueness {
                Uniqueness::None => true,
                Uniqueness::NodeGlobal => ws.seen_nodes.insert(e.other.0),
                Uniqueness::RelationshipGlobal => ws.seen_rels.insert(e.rel.0),
                Uniqueness::NodePath => !ws.dfs.path_has_node(e.other),
                Uniqueness::RelationshipPath => !ws.dfs.path_has_rel(e.rel),
            };
            if !ok {
                continue;
            }
            ws.dfs.push(e.other, e.rel);
            if visit_top(td, tx, self.start, &mut ws.dfs, max) {
                return true;
            }
        }
        self.state = State::Done;
        false
    }
}

/// Evaluates the path ending at the deepest frame; expands it if the evaluation continues.
/// Returns whether the path is included.
#[inline(always)]
pub(super) fn visit_top<E: Expander, V: Evaluator>(
    td: &TraversalDescription<E, V>,
    tx: &Transaction,
    start: NodeId,
    dfs: &mut DepthFirst<Edge>,
    max: u32,
) -> bool {
    let depth = dfs.depth() as u32;
    // The end node is resolved and the path built once, for the evaluator and the expander
    // (a path that is not expanded gets an empty pending range, as `push` left it).
    let end = tx.node_handle(dfs.end().unwrap_or(start));
    let mut include = false;
    dfs.expand_top(|frames, out| {
        let path = frames_path_to(tx, start, frames, end);
        let ev = td.evaluator.evaluate(&path);
        if ev.continues() && depth < max {
            td.expander.expand(&path, out);
        }
        include = ev.includes();
    });
    include
}

impl<E: Expander, V: Evaluator, W: BorrowMut<Workspace>> Iterator for Traverser<'_, E, V, W> {
    type Item = NodeId;

    /// The end node of the next included path.
    fn next(&mut self) -> Option<NodeId> {
        self.next_path().map(|p| p.end.id())
    }
}
