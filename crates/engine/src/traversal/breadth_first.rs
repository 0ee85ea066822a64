//! Breadth-first order for [`Traverser`]: branches in the arena (which doubles as the queue)
//! up to the memory budget, then bounded iterative deepening over per-level continue bits
//! (see the module documentation of [`crate::traversal`]).

use std::borrow::BorrowMut;

use arbor_model::NodeId;
use arbor_storage::Transaction;

use super::depth_first::State;
use super::*;

impl<'a, E: Expander, V: Evaluator, W: BorrowMut<Workspace>> Traverser<'a, E, V, W> {
    /// Breadth-first: how many branches the arena may hold (see
    /// [`TraversalDescription::memory_budget`]); unbounded for the global uniqueness kinds,
    /// whose decisions depend on every earlier path and cannot be replayed by a re-walk.
    pub(super) fn arena_limit(&self) -> usize {
        match self.td.uniqueness {
            Uniqueness::NodeGlobal | Uniqueness::RelationshipGlobal => usize::MAX,
            Uniqueness::None | Uniqueness::NodePath | Uniqueness::RelationshipPath => {
                let branches = self.td.memory_budget / std::mem::size_of::<Branch>();
                if branches >= CHUNK {
                    branches & !(CHUNK - 1)
                } else {
                    branches
                }
            }
        }
    }

    /// Bounded breadth-first: turns the arena into per-level continue bits (its branches are in
    /// level order, so a branch's position within its level is its ordinal) and starts the
    /// iterative-deepening walk of level `target`, whose first paths the arena may already hold.
    pub(super) fn start_deepening(&mut self, target: u32) {
        let ws: &mut Workspace = self.ws.borrow_mut();
        for i in 0..ws.branches.len() {
            let Some(b) = ws.branches.get(i).copied() else { break };
            let depth = (b.depth_flags & !EXPAND_FLAG) as usize;
            if ws.levels.len() <= depth {
                ws.levels.resize_with(depth + 1, LevelBits::default);
            }
            ws.levels[depth].push(b.depth_flags & EXPAND_FLAG != 0);
        }
        ws.branches.clear();
        ws.edges.clear();
        self.target = target;
        self.state = State::WalkStart;
    }

    /// Bounded breadth-first: moves to the next included path by iterative deepening. Each walk
    /// goes depth-first from the start down to level `target`, descending only into paths
    /// recorded as "continue", and evaluates the paths at level `target` it has not seen yet;
    /// depth-first pre-order reaches a level's paths in the order the queue would (parents in
    /// level order, each one's children in expander order). The traversal ends after a walk in
    /// which no path of level `target` continues.
    pub(super) fn advance_walk(&mut self) -> bool {
        let max = self.max_depth();
        let (tx, td, start) = (self.tx, self.td, self.start);
        let ws: &mut Workspace = self.ws.borrow_mut();
        loop {
            match self.state {
                State::WalkStart => {
                    let d = self.target as usize;
                    ws.dfs.reset(start);
                    ws.ordinals.clear();
                    ws.ordinals.resize(d + 1, 0);
                    if ws.levels.len() <= d {
                        ws.levels.resize_with(d + 1, LevelBits::default);
                    }
                    self.state = State::Walking;
                    if visit_level(td, tx, start, ws, self.target, max) {
                        return true;
                    }
                }
                State::Walking => {}
                State::Start | State::Running | State::Done => return false,
            }
            while let Some(e) = ws.dfs.next_edge() {
                let ok = match td.uniqueness {
                    Uniqueness::NodePath => !ws.dfs.path_has_node(e.other),
                    Uniqueness::RelationshipPath => !ws.dfs.path_has_rel(e.rel),
                    // The global kinds never walk (see `arena_limit`).
                    Uniqueness::None | Uniqueness::NodeGlobal | Uniqueness::RelationshipGlobal => {
                        true
                    }
                };
                if !ok {
                    continue;
                }
                ws.dfs.push(e.other, e.rel);
                if visit_level(td, tx, start, ws, self.target, max) {
                    return true;
                }
            }
            // Level `target` is complete; go one deeper only if some path there continues.
            let d = self.target as usize;
            if ws.levels.get(d).map_or(0, |l| l.ones) == 0 {
                self.state = State::Done;
                ws.dfs.clear();
                return false;
            }
            self.target += 1;
            self.state = State::WalkStart;
        }
    }

    /// Breadth-first: moves to the next included path (the last branch of the arena holds it).
    pub(super) fn advance_bfs(&mut self) -> bool {
        let max = self.max_depth();
        let tx = self.tx;
        let td = self.td;
        let limit = self.arena_limit();
        let ws: &mut Workspace = self.ws.borrow_mut();
        match self.state {
            State::Done => return false,
            State::WalkStart | State::Walking => return self.advance_walk(),
            State::Start if limit == 0 => {
                // No room for even the start branch: iterative deepening from level 0.
                self.start_deepening(0);
                return self.advance_walk();
            }
            State::Start => {
                self.state = State::Running;
                if td.uniqueness == Uniqueness::NodeGlobal {
                    ws.seen_nodes.insert(self.start.0);
                }
                ws.branches.push(Branch {
                    node: self.start.0,
                    rel: u64::MAX,
                    parent: NO_PARENT,
                    depth_flags: 0,
                });
                let ev = td.evaluator.evaluate(&chain_path(tx, self.start, &ws.branches, 0));
                if ev.continues() && max > 0 {
                    if let Some(b) = ws.branches.get_mut(0) {
                        b.depth_flags |= EXPAND_FLAG;
                    }
                }
                // The edges of the branch at `cursor` are expanded lazily below.
                self.cursor = 0;
                ws.edges.clear();
                if ev.includes() {
                    return true;
                }
            }
            State::Running => {}
        }
        // `ws.edges` holds the children of branch `cursor - 1` not yet created, in reverse.
        loop {
            if let Some(e) = ws.edges.pop() {
                let parent = (self.cursor - 1) as u32;
                let depth =
                    ws.branches.get(parent as usize).map_or(0, |b| b.depth_flags & !EXPAND_FLAG)
                        + 1;
                let ok = match td.uniqueness {
                    Uniqueness::None => true,
                    Uniqueness::NodeGlobal => ws.seen_nodes.insert(e.other.0),
                    Uniqueness::RelationshipGlobal => ws.seen_rels.insert(e.rel.0),
                    Uniqueness::NodePath => {
                        !chain_path(tx, self.start, &ws.branches, parent).contains_node(e.other)
                    }
                    Uniqueness::RelationshipPath => {
                        !chain_path(tx, self.start, &ws.branches, parent)
                            .contains_relationship(e.rel)
                    }
                };
                if !ok {
                    continue;
                }
                if ws.branches.len() >= limit {
                    // The budget is spent: levels `..depth` are complete in the arena and level
                    // `depth` holds its first paths; iterative deepening goes on from there.
                    self.start_deepening(depth);
                    return self.advance_walk();
                }
                let Ok(idx) = u32::try_from(ws.branches.len()) else {
                    // More than 4 billion live branches: memory would be gone long before.
                    self.state = State::Done;
                    return false;
                };
                ws.branches.push(Branch {
                    node: e.other.0,
                    rel: e.rel.0,
                    parent,
                    depth_flags: depth,
                });
                let ev = td.evaluator.evaluate(&chain_path(tx, self.start, &ws.branches, idx));
                if ev.continues() && depth < max {
                    if let Some(b) = ws.branches.get_mut(idx as usize) {
                        b.depth_flags |= EXPAND_FLAG;
                    }
                }
                if ev.includes() {
                    return true;
                }
                continue;
            }
            // Dequeue the next branch to expand.
            loop {
                let Some(b) = ws.branches.get(self.cursor) else {
                    self.state = State::Done;
                    return false;
                };
                self.cursor += 1;
                if b.depth_flags & EXPAND_FLAG != 0 {
                    break;
                }
            }
            let idx = (self.cursor - 1) as u32;
            let path = chain_path(tx, self.start, &ws.branches, idx);
            td.expander.expand(&path, &mut ws.edges);
            // Children are popped from the back; reverse so they are created in expander order.
            ws.edges.reverse();
        }
    }
}

/// Bounded breadth-first: visits the path ending at the deepest frame during a walk down to
/// level `target`. A path seen before (its ordinal within its level is below the level's
/// recorded length) keeps its recorded decision and is not evaluated again; a new path (only
/// at level `target`) is evaluated and its decision recorded: "continue" only if the evaluator
/// says so, the maximum depth allows it, and the path has a child (the expander is asked right
/// away, so the walk after the last level with children is not needed to find that it has
/// none). Paths above `target` whose decision was "continue" are expanded. Returns whether a
/// newly evaluated path is included.
#[inline(always)]
pub(super) fn visit_level<E: Expander, V: Evaluator>(
    td: &TraversalDescription<E, V>,
    tx: &Transaction,
    start: NodeId,
    ws: &mut Workspace,
    target: u32,
    max: u32,
) -> bool {
    let k = ws.dfs.depth();
    let (Some(ordinal), Some(level)) = (ws.ordinals.get_mut(k), ws.levels.get_mut(k)) else {
        return false;
    };
    let j = *ordinal;
    *ordinal += 1;
    let depth = k as u32;
    let (cont, include) = if j < level.len {
        (level.get(j), false)
    } else if depth == target {
        let end = tx.node_handle(ws.dfs.end().unwrap_or(start));
        let path = frames_path_to(tx, start, ws.dfs.frames(), end);
        let ev = td.evaluator.evaluate(&path);
        let cont = ev.continues() && depth < max && {
            ws.edges.clear();
            td.expander.expand(&path, &mut ws.edges);
            let dfs = &ws.dfs;
            let has_child = match td.uniqueness {
                Uniqueness::NodePath => ws.edges.iter().any(|e| !dfs.path_has_node(e.other)),
                Uniqueness::RelationshipPath => ws.edges.iter().any(|e| !dfs.path_has_rel(e.rel)),
                Uniqueness::None | Uniqueness::NodeGlobal | Uniqueness::RelationshipGlobal => {
                    !ws.edges.is_empty()
                }
            };
            ws.edges.clear();
            has_child
        };
        level.push(cont);
        (cont, ev.includes())
    } else {
        // More paths above `target` than the first walk found: only a non-deterministic
        // expander gets here; those paths are not part of the traversal.
        (false, false)
    };
    if cont && depth < target {
        let end = tx.node_handle(ws.dfs.end().unwrap_or(start));
        ws.dfs.expand_top(|frames, out| {
            td.expander.expand(&frames_path_to(tx, start, frames, end), out)
        });
    }
    include
}
