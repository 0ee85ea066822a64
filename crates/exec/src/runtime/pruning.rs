//! `VarLengthExpand(Pruning)`: the distinct end nodes of trails, breadth-first, depth-first
//! with last-hop pruning, or streaming reachability.

use rustc_hash::FxHashMap;

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::{Name, Op};
use arbor_model::{Error, NodeId, RelId, Result, Value};

use super::builder::{build, Builder};
use super::pump::{each_level_edge, EndLoop, Pump};
use super::{rel_used, resolve_types};
use crate::ctx::{Ctx, Operator, Row};
use crate::graph::{Direction, Edge, Graph, TokenId};
use crate::nodeset::NodeSet;
use crate::traverse::DepthFirst;

/// Streamed ends gathered before they are handed on: one chunk of the late columns.
const STREAM_BATCH: usize = super::pump::CHUNK;

/// `VarLengthExpand(Pruning)`: the distinct end nodes of the relationship-unique paths
/// (trails) of `min..=max` relationships from `from`, each once per input row (planned by the
/// planner's `prune` pass only where nothing above reads more than the end node).
///
/// Two strategies, both exact under trail semantics:
///
/// - **Breadth-first** (one direction, `min <= 1`, any `max`): a node other than the start is
///   the end of a trail of at most `max` relationships iff its distance is at most `max` (a
///   shortest walk repeats no node, so no relationship); the start is an end iff `min == 0` or
///   a relationship leads back to it from a node at distance below `max` (a closed walk
///   through the start contains a directed cycle through it, which is a trail). O(V + E).
/// - **Depth-first with last-hop pruning** (otherwise, `max` bounded): the trails of up to
///   `max - 1` relationships are enumerated, but the last hop is not. Whether relationship
///   `e` out of node `c` extends the current trail depends only on whether `e` is on it, so
///   per node the relationships not yet followed are remembered: the first visit of `c`
///   emits every end except over the (at most `max - 1`) relationships on the current trail,
///   which stay pending; a later visit only retries the pending ones. Q11-style 4-hop
///   patterns then cost the 3-hop trails plus one pass over each reached node's
///   relationships instead of one row per 4-hop trail.
///
/// Ends are collected per input row and produced from a buffer.
pub(super) struct PruningVarExpand {
    input: Box<dyn Operator>,
    from: Slot,
    dir: Direction,
    types: Vec<Name>,
    min: u64,
    max: Option<u64>,
    unique_with: Vec<Slot>,
    /// The end slot, the `Filter` right above (see `build_expand`) and the late columns.
    out: EndLoop,
    cur: Option<Row>,
    ends: Vec<NodeId>,
    pos: usize,
    emitted: NodeSet,
    /// Depth-first mode: per node whose last hop was taken, the relationships (and their
    /// ends) not followed yet because the trail visiting it used them.
    pending: FxHashMap<NodeId, Vec<Edge>>,
    dfs: DepthFirst<Edge>,
    frontier: Vec<NodeId>,
    next_frontier: Vec<NodeId>,
    visited: NodeSet,
    steps: u64,
    /// Reachability mode (one direction, `min <= 1`, no upper bound): the nodes still to
    /// expand, depth-first. Ends stream out as they are found (`ends` then holds only the
    /// newly reached neighbours of one node), so memory is the visited set plus this stack,
    /// not a level of the graph. `None` in the other modes.
    stack: Option<Vec<NodeId>>,
    /// The relationship types of the current input row, resolved.
    types_buf: Vec<TokenId>,
    /// Reachability and breadth-first modes: the relationships of the node being expanded
    /// (reused; bounded by the largest degree).
    edge_buf: Vec<Edge>,
}

impl PruningVarExpand {
    pub(super) fn new(
        op: &Op,
        b: &mut Builder,
        filter: Option<(PExpr, usize)>,
    ) -> PruningVarExpand {
        let Op::PruningVarExpand { input, from, to, dir, types, min, max, unique_with } = op else {
            unreachable!("PruningVarExpand::new on another operator")
        };
        let above = std::mem::take(&mut b.late_reads);
        PruningVarExpand {
            out: EndLoop::new(*to, filter, &above),
            input: build(input, b),
            from: *from,
            dir: *dir,
            types: types.clone(),
            min: *min,
            max: *max,
            unique_with: unique_with.clone(),
            cur: None,
            ends: Vec::new(),
            pos: 0,
            emitted: NodeSet::default(),
            pending: FxHashMap::default(),
            dfs: DepthFirst::default(),
            frontier: Vec::new(),
            next_frontier: Vec::new(),
            visited: NodeSet::default(),
            steps: 0,
            stack: None,
            types_buf: Vec::new(),
            edge_buf: Vec::new(),
        }
    }

    /// Reachability mode applies: ends are exactly the nodes reachable in one or more hops
    /// (every reachable node has a simple path to it, which is a trail), plus the start if a
    /// cycle leads back to it, so a depth-first search over nodes finds them, in any order.
    fn streams(&self) -> bool {
        self.dir != Direction::Both && self.min <= 1 && self.max.is_none()
    }

    /// Reachability mode: expands the next node of the stack, appending its new ends to
    /// `ends`; false when done.
    fn stream_step(&mut self, ctx: &mut Ctx, g: &dyn Graph) -> Result<bool> {
        let (Some(cur), Some(stack)) = (&self.cur, &mut self.stack) else { return Ok(false) };
        let Value::Node(s) = cur[self.from] else { return Ok(false) };
        let Some(u) = stack.pop() else { return Ok(false) };
        self.steps += 1;
        if self.steps.is_multiple_of(1024) {
            ctx.check_interrupt()?;
        }
        // The node's relationships in one `node_edges` call (the graph's bulk path) into a
        // reused buffer, instead of one call of a callback per relationship.
        self.edge_buf.clear();
        g.node_edges(u, self.dir, &self.types_buf, &mut self.edge_buf);
        let (visited, emitted, ends, outer) =
            (&mut self.visited, &mut self.emitted, &mut self.ends, &self.unique_with);
        for e in &self.edge_buf {
            if !outer.is_empty() && rel_used(cur, outer, e.rel) {
                continue;
            }
            if e.other == s {
                // A cycle back to the start.
                Self::emit(emitted, ends, s);
            } else if visited.insert(e.other.0) {
                ends.push(e.other);
                stack.push(e.other);
            }
        }
        Ok(true)
    }

    fn emit(emitted: &mut NodeSet, ends: &mut Vec<NodeId>, n: NodeId) {
        if emitted.insert(n.0) {
            ends.push(n);
        }
    }

    /// Fills `ends` for the start node `s` of input row `row`.
    fn compute(
        &mut self,
        s: NodeId,
        row: &Row,
        types: &[TokenId],
        ctx: &mut Ctx,
        g: &dyn Graph,
    ) -> Result<()> {
        self.ends.clear();
        self.pos = 0;
        self.out.late.invalidate();
        self.emitted.clear();
        if self.min == 0 {
            Self::emit(&mut self.emitted, &mut self.ends, s);
        }
        if self.max == Some(0) {
            return Ok(());
        }
        // Usually empty (no allocation): a copy frees `self` for the helpers below.
        let outer = self.unique_with.clone();
        let excluded = |r: RelId| !outer.is_empty() && rel_used(row, &outer, r);
        if self.dir != Direction::Both && self.min <= 1 {
            // Breadth-first: level by level up to `max`.
            self.visited.clear();
            self.visited.insert(s.0);
            self.frontier.clear();
            self.frontier.push(s);
            let mut depth = 0u64;
            while !self.frontier.is_empty() && self.max.is_none_or(|m| depth < m) {
                depth += 1;
                self.next_frontier.clear();
                let (frontier, visited, next, emitted, ends) = (
                    &self.frontier,
                    &mut self.visited,
                    &mut self.next_frontier,
                    &mut self.emitted,
                    &mut self.ends,
                );
                let nodes = frontier.iter().copied();
                each_level_edge(
                    nodes,
                    self.dir,
                    types,
                    excluded,
                    &mut self.steps,
                    ctx,
                    g,
                    &mut self.edge_buf,
                    |_, e| {
                        if e.other == s {
                            // A cycle back to the start of at most `depth` relationships.
                            Self::emit(emitted, ends, s);
                        } else if visited.insert(e.other.0) {
                            // First visit: not emitted before (only the start, which is visited
                            // from the outset, goes through `emitted`).
                            ends.push(e.other);
                            next.push(e.other);
                        }
                    },
                )?;
                std::mem::swap(&mut self.frontier, &mut self.next_frontier);
            }
            return Ok(());
        }
        let Some(max) = self.max else {
            return Err(Error::internal("pruning expansion without a bound in depth-first mode"));
        };
        self.pending.clear();
        self.dfs.reset(s);
        let min = self.min;
        // Whether a node at depth `d` takes last hops / is expanded further.
        let last_hop = |d: u64| d < max && d + 1 >= min;
        if last_hop(0) {
            self.take_last_hop(s, types, &excluded, g);
        }
        if max > 1 {
            let (dir, dfs) = (self.dir, &mut self.dfs);
            dfs.expand_top(|_, out| g.node_edges(s, dir, types, out));
        }
        while let Some(e) = self.dfs.next_edge() {
            self.steps += 1;
            if self.steps.is_multiple_of(1024) {
                ctx.check_interrupt()?;
            }
            if self.dfs.path_has_rel(e.rel) || excluded(e.rel) {
                continue;
            }
            self.dfs.push(e.other, e.rel);
            let d = self.dfs.depth() as u64;
            if last_hop(d) {
                self.take_last_hop(e.other, types, &excluded, g);
            }
            if d + 1 < max {
                let (dir, dfs) = (self.dir, &mut self.dfs);
                dfs.expand_top(|_, out| g.node_edges(e.other, dir, types, out));
            }
        }
        Ok(())
    }

    /// Emits the ends of the current trail extended by one relationship out of `c` (the
    /// trail's end), skipping what an earlier visit of `c` already emitted.
    fn take_last_hop(
        &mut self,
        c: NodeId,
        types: &[TokenId],
        excluded: &dyn Fn(RelId) -> bool,
        g: &dyn Graph,
    ) {
        let (dfs, emitted, ends) = (&self.dfs, &mut self.emitted, &mut self.ends);
        match self.pending.get_mut(&c) {
            Some(left) => left.retain(|e| {
                if dfs.path_has_rel(e.rel) {
                    true
                } else {
                    Self::emit(emitted, ends, e.other);
                    false
                }
            }),
            None => {
                let mut left = Vec::new();
                g.for_each_edge(c, self.dir, types, &mut |e: Edge| {
                    if excluded(e.rel) {
                        // Outside the path's control: never usable.
                    } else if dfs.path_has_rel(e.rel) {
                        left.push(e);
                    } else {
                        Self::emit(emitted, ends, e.other);
                    }
                });
                self.pending.insert(c, left);
            }
        }
    }
}

impl Pump for PruningVarExpand {
    fn input(&mut self) -> &mut dyn Operator {
        &mut *self.input
    }

    fn reopen(&mut self) {
        self.cur = None;
        self.ends.clear();
        self.pos = 0;
    }

    #[inline(always)]
    fn is_open(&self) -> bool {
        self.cur.is_some()
    }

    /// Computes the ends of `r` into `ends`, or, in reachability mode, starts the search
    /// that `stream_step` continues.
    #[inline(always)]
    fn open(&mut self, r: Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()> {
        let Value::Node(from) = r[self.from] else { return Ok(()) };
        self.out.late.open();
        let types = resolve_types(g, &self.types);
        if let (Some(types), true) = (&types, self.streams()) {
            self.types_buf.clear();
            self.types_buf.extend_from_slice(types);
            self.ends.clear();
            self.pos = 0;
            self.emitted.clear();
            if self.min == 0 {
                Self::emit(&mut self.emitted, &mut self.ends, from);
            }
            self.visited.clear();
            self.visited.insert(from.0);
            let stack = self.stack.get_or_insert_with(Vec::new);
            stack.clear();
            stack.push(from);
            self.cur = Some(r);
            return Ok(());
        }
        if let Some(stack) = &mut self.stack {
            stack.clear();
        }
        match types {
            Some(types) => self.compute(from, &r, &types, ctx, g)?,
            None => {
                // No such type: only the zero-length path can match.
                self.ends.clear();
                self.pos = 0;
                if self.min == 0 {
                    self.ends.push(from);
                }
            }
        }
        self.cur = Some(r);
        Ok(())
    }

    /// Writes each end into the working row and hands it, if it passes the fused filter, to
    /// `emit`; in reachability mode the search goes on until it is exhausted.
    #[inline(always)]
    fn advance<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
    {
        loop {
            let Some(cur) = &mut self.cur else { return Ok(false) };
            while let Some(&end) = self.ends.get(self.pos) {
                let i = self.pos;
                self.pos += 1;
                let ends = &self.ends;
                let lated = self.out.late.ensure(0, i, ctx, &*g, |from, n, out| {
                    out.extend(ends.iter().skip(from).take(n))
                });
                if !self.out.pass(end, i, lated, cur, ctx, g)? {
                    continue;
                }
                if emit(cur, ctx, g)? {
                    return Ok(true);
                }
            }
            // The next batch of streamed ends: whole steps until it holds a chunk's worth
            // (one late-column read per chunk, not per step; the order of the ends is the
            // order the steps find them in either way).
            self.ends.clear();
            self.pos = 0;
            self.out.late.invalidate();
            let mut stepped = false;
            while self.ends.len() < STREAM_BATCH && self.stream_step(ctx, &*g)? {
                stepped = true;
            }
            if !stepped {
                return Ok(false);
            }
        }
    }

    #[inline(always)]
    fn close(&mut self, ctx: &mut Ctx) {
        if let Some(r) = self.cur.take() {
            ctx.recycle(r);
        }
    }
}
