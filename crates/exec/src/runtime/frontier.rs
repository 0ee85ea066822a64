//! `VarLengthExpand(Pruning,BFS)` ([`Op::FrontierExpand`]): the distinct ends of the trails of
//! `min..=max` relationships (directed, `min >= 2`, bounded), level by level over node sets.
//!
//! Per input row the operator builds the levels `L_1 ..= L_max` of nodes at the end of a walk
//! of exactly `i` relationships: each node of a level is expanded once, and the next level is
//! deduplicated by a node set, so the work is the sum of the degrees of the levels' nodes
//! instead of one step per trail. Each node of a level remembers the node of the previous
//! level and the relationship it was first reached by (its witness walk).
//!
//! The candidates (the nodes of `L_min ..= L_max`) are then produced lazily, each at most
//! once: a candidate is an end only with a trail to it. Its witness walk is one when its
//! relationships are pairwise distinct (the usual case, checked in `O(i^2)` without touching
//! the graph); otherwise a backward search through the levels looks for another walk without
//! a repeated relationship, exhaustively. The planner's `frontier` rule explains why this is
//! exactly the answer of the trail-by-trail plan. The fused filter (`WHERE` on the end) runs
//! after the proof, so a filter that fails on a node that is no end raises no error.

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::{Name, Op};
use arbor_model::{NodeId, RelId, Result, Value};

use super::builder::{build, Builder};
use super::pump::{each_level_edge, EndLoop, Pump};
use super::{rel_used, resolve_types};
use crate::ctx::{Ctx, Operator, Row};
use crate::graph::{Direction, Edge, Graph, TokenId};
use crate::nodeset::NodeSet;

/// Builds a frontier expansion, with the filter right above it fused when `op` is that filter
/// (the dispatch in `build` sends only these here).
pub(super) fn build_frontier(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        Op::Filter { input, pred, .. } => {
            // The expansion keeps its own PROFILE row count (the next pre-order number).
            let id = b.next_id;
            b.next_id += 1;
            Box::new(FrontierExpand::new(input, b, Some((pred.clone(), id))))
        }
        _ => Box::new(FrontierExpand::new(op, b, None)),
    }
}

/// One node of a level: the node, the index of its witness parent in the previous level, and
/// the relationship from that parent.
#[derive(Clone, Copy)]
struct Step {
    node: NodeId,
    parent: u32,
    rel: RelId,
}

/// The frontier expansion (see the module doc).
pub(super) struct FrontierExpand {
    input: Box<dyn Operator>,
    from: Slot,
    dir: Direction,
    types: Vec<Name>,
    min: usize,
    max: usize,
    unique_with: Vec<Slot>,
    /// The end slot, the `Filter` right above (evaluated on the working row for each proven
    /// end) and the late columns.
    out: EndLoop,
    /// The working row (the input row with `to` overwritten per end); `None` when closed.
    cur: Option<Row>,
    start: NodeId,
    /// `levels[i]`: the nodes at the end of a walk of `i` relationships, each once.
    levels: Vec<Vec<Step>>,
    /// `sets[i]`: the nodes of `levels[i]`.
    sets: Vec<NodeSet>,
    /// The next candidate: level and index in it.
    level: usize,
    pos: usize,
    /// Candidates already produced or rejected by the filter.
    done: NodeSet,
    types_buf: Vec<TokenId>,
    /// The witness walk being checked (relationships, end first).
    walk: Vec<RelId>,
    /// Backward search: the relationships of the partial trail, and one edge buffer per depth.
    used: Vec<RelId>,
    bufs: Vec<Vec<Edge>>,
    /// The relationships of the node being expanded while the levels are built (reused).
    edge_buf: Vec<Edge>,
    steps: u64,
}

impl FrontierExpand {
    pub(super) fn new(op: &Op, b: &mut Builder, filter: Option<(PExpr, usize)>) -> FrontierExpand {
        let Op::FrontierExpand { input, from, to, dir, types, min, max, unique_with } = op else {
            unreachable!("FrontierExpand::new on another operator")
        };
        let max = *max as usize;
        let above = std::mem::take(&mut b.late_reads);
        FrontierExpand {
            out: EndLoop::new(*to, filter, &above),
            input: build(input, b),
            from: *from,
            dir: *dir,
            types: types.clone(),
            min: (*min as usize).min(max + 1),
            max,
            unique_with: unique_with.clone(),
            cur: None,
            start: NodeId(0),
            levels: (0..=max).map(|_| Vec::new()).collect(),
            sets: (0..=max).map(|_| NodeSet::default()).collect(),
            level: 0,
            pos: 0,
            done: NodeSet::default(),
            types_buf: Vec::new(),
            walk: Vec::new(),
            used: Vec::new(),
            bufs: (0..=max).map(|_| Vec::new()).collect(),
            edge_buf: Vec::new(),
            steps: 0,
        }
    }

    fn tick(&mut self, ctx: &Ctx) -> Result<()> {
        self.steps += 1;
        if self.steps.is_multiple_of(1024) {
            ctx.check_interrupt()?;
        }
        Ok(())
    }

    /// Builds the levels of start node `s` for input row `row`.
    fn expand_levels(&mut self, s: NodeId, row: &Row, ctx: &Ctx, g: &dyn Graph) -> Result<()> {
        for (level, set) in self.levels.iter_mut().zip(&mut self.sets) {
            level.clear();
            set.clear();
        }
        self.levels[0].push(Step { node: s, parent: u32::MAX, rel: RelId(u64::MAX) });
        self.sets[0].insert(s.0);
        let outer = &self.unique_with;
        for i in 1..=self.max {
            let (before, after) = self.levels.split_at_mut(i);
            let (prev, next, set) = (&before[i - 1], &mut after[0], &mut self.sets[i]);
            if prev.is_empty() {
                break;
            }
            let excluded = |r: RelId| !outer.is_empty() && rel_used(row, outer, r);
            let nodes = prev.iter().map(|s| s.node);
            let dir = self.dir;
            each_level_edge(
                nodes,
                dir,
                &self.types_buf,
                excluded,
                &mut self.steps,
                ctx,
                g,
                &mut self.edge_buf,
                |p, e| {
                    if set.insert(e.other.0) {
                        next.push(Step { node: e.other, parent: p as u32, rel: e.rel });
                    }
                },
            )?;
        }
        Ok(())
    }

    /// Whether a trail of `level` relationships leads to the candidate `levels[level][index]`.
    fn proven(&mut self, level: usize, index: usize, ctx: &Ctx, g: &dyn Graph) -> Result<bool> {
        // The witness walk, end first.
        self.walk.clear();
        let (mut l, mut i) = (level, index);
        while l > 0 {
            let step = self.levels[l][i];
            self.walk.push(step.rel);
            i = step.parent as usize;
            l -= 1;
        }
        let w = &self.walk;
        if (1..w.len()).all(|j| !w[..j].contains(&w[j])) {
            return Ok(true);
        }
        let t = self.levels[level][index].node;
        self.used.clear();
        self.trail_back(t, level, ctx, g)
    }

    /// Backward search: whether a trail of `j` relationships, none in `used`, leads from the
    /// start to `v` with its `k`-th node in level `k`. Exhaustive (every trail's `k`-th node is
    /// in level `k`), depth at most `max`.
    fn trail_back(&mut self, v: NodeId, j: usize, ctx: &Ctx, g: &dyn Graph) -> Result<bool> {
        if j == 0 {
            return Ok(v == self.start);
        }
        let mut edges = std::mem::take(&mut self.bufs[j]);
        edges.clear();
        g.node_edges(v, self.dir.reverse(), &self.types_buf, &mut edges);
        let mut found = false;
        for e in &edges {
            self.tick(ctx)?;
            if self.used.contains(&e.rel) || !self.sets[j - 1].contains(e.other.0) {
                continue;
            }
            if let Some(row) = &self.cur {
                if !self.unique_with.is_empty() && rel_used(row, &self.unique_with, e.rel) {
                    continue;
                }
            }
            self.used.push(e.rel);
            let ok = self.trail_back(e.other, j - 1, ctx, g);
            self.used.pop();
            if ok? {
                found = true;
                break;
            }
        }
        self.bufs[j] = edges;
        Ok(found)
    }
}

impl Pump for FrontierExpand {
    fn input(&mut self) -> &mut dyn Operator {
        &mut *self.input
    }

    fn reopen(&mut self) {
        self.cur = None;
    }

    #[inline(always)]
    fn is_open(&self) -> bool {
        self.cur.is_some()
    }

    /// Builds the levels of the row's start node (a row without one, or with none of the
    /// relationship types, has no ends and is dropped).
    fn open(&mut self, r: Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()> {
        let Value::Node(s) = r[self.from] else {
            ctx.recycle(r);
            return Ok(());
        };
        let Some(types) = resolve_types(g, &self.types) else {
            ctx.recycle(r);
            return Ok(());
        };
        self.types_buf = types;
        self.start = s;
        self.expand_levels(s, &r, ctx, &*g)?;
        self.out.late.open();
        self.done.clear();
        self.level = self.min;
        self.pos = 0;
        self.cur = Some(r);
        Ok(())
    }

    /// Proves the remaining candidates one by one; each end goes into the working row and, if
    /// it passes the fused filter, to `emit`.
    fn advance<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
    {
        while self.level <= self.max {
            let Some(step) = self.levels[self.level].get(self.pos).copied() else {
                self.level += 1;
                self.pos = 0;
                continue;
            };
            let (level, index) = (self.level, self.pos);
            self.pos += 1;
            let t = step.node;
            if self.done.contains(t.0) || !self.proven(level, index, ctx, &*g)? {
                continue;
            }
            self.done.insert(t.0);
            let Some(cur) = &mut self.cur else { return Ok(false) };
            let steps = &self.levels[level];
            let lated = self.out.late.ensure(level, index, ctx, &*g, |from, n, out| {
                out.extend(steps.iter().skip(from).take(n).map(|s| s.node))
            });
            if !self.out.pass(t, index, lated, cur, ctx, g)? {
                continue;
            }
            if emit(cur, ctx, g)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn close(&mut self, ctx: &mut Ctx) {
        if let Some(r) = self.cur.take() {
            ctx.recycle(r);
        }
    }
}
