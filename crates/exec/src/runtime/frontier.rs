//! `VarLengthExpand(Pruning,BFS)` ([`Op::FrontierExpand`]): the distinct ends of the trails of
//! `min..=max` relationships (directed, `min >= 2`, bounded), level by level over node sets.
//!
//! Per input row the operator builds the levels `L_1 ..= L_max` of nodes at the end of a walk
//! of exactly `i` relationships: each node of a level is expanded once, and the next level is
//! deduplicated by a node set, so the work is the sum of the degrees of the levels' nodes
//! instead of one step per trail. Each node of a level remembers, of the walk it was first
//! reached by (its witness walk), whether it is a trail and a 64-bit mask of its
//! relationships.
//!
//! The candidates (the nodes of `L_min ..= L_max`) become ends only with a trail to them. A
//! new node's witness walk is a trail when its parent's is and the new relationship's mask bit
//! is clear (`O(1)`, no graph access): the usual case, proven while the level is built. The
//! others (a repeat, or two relationships sharing a bit) get a backward search through the
//! levels for a walk without a repeated relationship, exhaustively. The planner's `frontier`
//! rule explains why this is exactly the answer of the trail-by-trail plan. The ends of a row
//! are all proven before the fused filter (`WHERE` on the end) sees any, so a filter that
//! fails on a node that is no end raises no error.

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::{Name, Op};
use arbor_model::{NodeId, RelId, Result, Value};

use super::builder::{build, Builder};
use super::pump::Pump;
use super::{rel_used, resolve_types};
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::CompiledPred;
use crate::graph::{Direction, Edge, Graph, TokenId};
use crate::nodeset::NodeSet;

/// Builds a frontier expansion, with the filter right above it fused when `op` is that filter
/// (the dispatch in `build` sends only these here).
pub(super) fn build_frontier(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        Op::Filter { input, pred } => {
            // The expansion keeps its own PROFILE row count (the next pre-order number).
            let id = b.next_id;
            b.next_id += 1;
            Box::new(FrontierExpand::new(input, b, Some((pred.clone(), id))))
        }
        _ => Box::new(FrontierExpand::new(op, b, None)),
    }
}

/// One node of a level (below the last): the node, whether its witness walk is a trail
/// (`clean`), and a mask of the walk's relationships (bit `id % 64` of each).
#[derive(Clone, Copy)]
struct Step {
    node: NodeId,
    clean: bool,
    mask: u64,
}

/// The frontier expansion (see the module doc).
struct FrontierExpand {
    input: Box<dyn Operator>,
    from: Slot,
    to: Slot,
    dir: Direction,
    types: Vec<Name>,
    min: usize,
    max: usize,
    unique_with: Vec<Slot>,
    /// A `Filter` right above, evaluated on the working row for each end.
    filter: Option<(CompiledPred, usize)>,
    /// The working row (the input row with `to` overwritten per end); `None` when closed.
    cur: Option<Row>,
    start: NodeId,
    /// `levels[i]` for `i < max`: the nodes at the end of a walk of `i` relationships, each
    /// once (the last level is not kept: its nodes are only candidates).
    levels: Vec<Vec<Step>>,
    /// `sets[i]`: the nodes of level `i`.
    sets: Vec<NodeSet>,
    /// The proven ends of the open row, and the next one to produce.
    ends: Vec<NodeId>,
    pos: usize,
    /// Ends produced so far (only when `min < max`: a node may be a candidate on several
    /// levels; one level's nodes are distinct by construction).
    emitted: NodeSet,
    /// Candidates whose witness walk may repeat a relationship: node and level.
    unproven: Vec<(NodeId, usize)>,
    types_buf: Vec<TokenId>,
    /// Backward search: the relationships of the partial trail, and one edge buffer per depth.
    used: Vec<RelId>,
    bufs: Vec<Vec<Edge>>,
    steps: u64,
}

impl FrontierExpand {
    fn new(op: &Op, b: &mut Builder, filter: Option<(PExpr, usize)>) -> FrontierExpand {
        let Op::FrontierExpand { input, from, to, dir, types, min, max, unique_with } = op else {
            unreachable!("FrontierExpand::new on another operator")
        };
        let max = *max as usize;
        FrontierExpand {
            input: build(input, b),
            from: *from,
            to: *to,
            dir: *dir,
            types: types.clone(),
            min: (*min as usize).clamp(1, max + 1),
            max,
            unique_with: unique_with.clone(),
            filter: filter.map(|(p, id)| (CompiledPred::new(p), id)),
            cur: None,
            start: NodeId(0),
            levels: (0..=max).map(|_| Vec::new()).collect(),
            sets: (0..=max).map(|_| NodeSet::default()).collect(),
            ends: Vec::new(),
            pos: 0,
            emitted: NodeSet::default(),
            unproven: Vec::new(),
            types_buf: Vec::new(),
            used: Vec::new(),
            bufs: (0..=max).map(|_| Vec::new()).collect(),
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

    /// Builds the levels of start node `s` for input row `row`, and the ends: a candidate
    /// whose witness walk is a trail at once, the others after a backward search.
    fn expand_levels(&mut self, s: NodeId, row: &Row, ctx: &Ctx, g: &dyn Graph) -> Result<()> {
        for (level, set) in self.levels.iter_mut().zip(&mut self.sets) {
            level.clear();
            set.clear();
        }
        self.ends.clear();
        self.pos = 0;
        self.emitted.clear();
        self.unproven.clear();
        self.levels[0].push(Step { node: s, clean: true, mask: 0 });
        self.sets[0].insert(s.0);
        let outer = &self.unique_with;
        let single = self.min == self.max;
        for i in 1..=self.max {
            let (before, after) = self.levels.split_at_mut(i);
            let (prev, next, set) = (&before[i - 1], &mut after[0], &mut self.sets[i]);
            let (ends, emitted, unproven) = (&mut self.ends, &mut self.emitted, &mut self.unproven);
            let (keep, candidate) = (i < self.max, i >= self.min);
            if prev.is_empty() {
                break;
            }
            for step in prev {
                self.steps += 1;
                if self.steps.is_multiple_of(1024) {
                    ctx.check_interrupt()?;
                }
                g.for_each_edge(step.node, self.dir, &self.types_buf, &mut |e: Edge| {
                    if !outer.is_empty() && rel_used(row, outer, e.rel) {
                        return;
                    }
                    if !set.insert(e.other.0) {
                        return;
                    }
                    let bit = 1u64 << (e.rel.0 % 64);
                    // A clear bit proves the relationship is not on the parent's walk; a set
                    // one (a repeat, or another relationship with the same bit) leaves the
                    // node to the exact search.
                    let clean = step.clean && step.mask & bit == 0;
                    if keep {
                        next.push(Step { node: e.other, clean, mask: step.mask | bit });
                    }
                    if candidate {
                        if !clean {
                            unproven.push((e.other, i));
                        } else if single || emitted.insert(e.other.0) {
                            ends.push(e.other);
                        }
                    }
                });
            }
        }
        for k in 0..self.unproven.len() {
            let (t, level) = self.unproven[k];
            if !single && self.emitted.contains(t.0) {
                continue;
            }
            self.used.clear();
            if self.trail_back(t, level, row, ctx, g)? {
                if !single {
                    self.emitted.insert(t.0);
                }
                self.ends.push(t);
            }
        }
        Ok(())
    }

    /// Backward search: whether a trail of `j` relationships, none in `used`, leads from the
    /// start to `v` with its `k`-th node in level `k`. Exhaustive (every trail's `k`-th node is
    /// in level `k`), depth at most `max`.
    fn trail_back(
        &mut self,
        v: NodeId,
        j: usize,
        row: &Row,
        ctx: &Ctx,
        g: &dyn Graph,
    ) -> Result<bool> {
        if j == 0 {
            return Ok(v == self.start);
        }
        let mut edges = std::mem::take(&mut self.bufs[j]);
        edges.clear();
        g.node_edges(v, self.dir.reverse(), &self.types_buf, &mut edges);
        let mut found = Ok(false);
        for e in &edges {
            if let Err(err) = self.tick(ctx) {
                found = Err(err);
                break;
            }
            if self.used.contains(&e.rel)
                || !self.sets[j - 1].contains(e.other.0)
                || (!self.unique_with.is_empty() && rel_used(row, &self.unique_with, e.rel))
            {
                continue;
            }
            self.used.push(e.rel);
            let ok = self.trail_back(e.other, j - 1, row, ctx, g);
            self.used.pop();
            if !matches!(ok, Ok(false)) {
                found = ok;
                break;
            }
        }
        self.bufs[j] = edges;
        found
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
        let built = self.expand_levels(s, &r, ctx, &*g);
        if let Err(e) = built {
            ctx.recycle(r);
            return Err(e);
        }
        self.cur = Some(r);
        Ok(())
    }

    /// Hands each end, in the working row, to `emit` if it passes the fused filter.
    fn advance<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
    {
        let Some(cur) = &mut self.cur else { return Ok(false) };
        while let Some(&t) = self.ends.get(self.pos) {
            self.pos += 1;
            match &mut cur[self.to] {
                Value::Node(n) => *n = t,
                slot => *slot = Value::Node(t),
            }
            if let Some((pred, id)) = &mut self.filter {
                if ctx.profile {
                    if let Some(c) = ctx.rows.get_mut(*id) {
                        *c += 1;
                    }
                }
                if !pred.test(cur, ctx, g)? {
                    continue;
                }
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
