//! The search behind `shortestPath` / `allShortestPaths`: bidirectional breadth-first search.
//!
//! Both ends grow a breadth-first tree, one whole level at a time, always the end whose
//! frontier is smaller, until the two visited sets meet. Every predecessor reaching a node at
//! the level it is first seen is kept (forwards: towards `a`; backwards: towards `b`), so all
//! shortest paths can be rebuilt. When the sets first meet after the forward side finished
//! level `df` and the backward side level `db`, the shortest length is `df + db` (no shorter
//! path exists, or the sets would have met a level earlier), and each shortest path crosses
//! exactly one node at distance `df` from `a` and `db` from `b`: those meeting nodes split
//! the paths without counting one twice. A shortest path never repeats a node, so it is also
//! relationship-unique. The search visits about twice the neighbourhood of radius `d/2`
//! instead of one of radius `d`.
//!
//! `shortestPath` (one path) keeps only the first predecessor of each node and stops at the
//! first meeting node; `allShortestPaths` finishes the level so every predecessor is known.
//! Predecessors live in one arena per side as linked lists (no allocation per node), and the
//! sides are [`Scratch`] kept by the operator: their maps and vectors are cleared, not freed,
//! between input rows.

use rustc_hash::FxHashMap;

use arbor_model::{NodeId, PathRef, RelId};

use crate::graph::{Direction, Edge, Graph, TokenId};

/// The end of a predecessor list.
const NONE: u32 = u32::MAX;

/// One side of the search: distances and the predecessors at first discovery.
#[derive(Default)]
struct Side {
    /// Node → (distance from this side's root, first of its predecessors in `preds`, or
    /// [`NONE`] for the root).
    seen: FxHashMap<NodeId, (u32, u32)>,
    /// Linked predecessor lists: `(node one level closer to the root, relationship, next)`.
    preds: Vec<(NodeId, RelId, u32)>,
    frontier: Vec<NodeId>,
    next: Vec<NodeId>,
    level: u32,
}

impl Side {
    /// Starts a new search from `root`, keeping the allocations.
    fn reset(&mut self, root: NodeId) {
        self.seen.clear();
        self.preds.clear();
        self.frontier.clear();
        self.next.clear();
        self.level = 0;
        self.seen.insert(root, (0, NONE));
        self.frontier.push(root);
    }

    /// Expands one whole level along `dir`; the newly seen nodes that `other` has seen go to
    /// `meet`. With `all` unset it stops at the first such node and keeps one predecessor a
    /// node.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &mut self,
        other: &Side,
        g: &dyn Graph,
        dir: Direction,
        types: &[TokenId],
        edges: &mut Vec<Edge>,
        all: bool,
        meet: &mut Vec<NodeId>,
    ) {
        self.level += 1;
        let level = self.level;
        self.next.clear();
        'level: for i in 0..self.frontier.len() {
            let n = self.frontier[i];
            edges.clear();
            g.node_edges(n, dir, types, edges);
            for e in edges.iter() {
                let at = self.preds.len() as u32;
                match self.seen.entry(e.other) {
                    std::collections::hash_map::Entry::Occupied(mut o) => {
                        let (d, head) = *o.get();
                        if all && d == level {
                            self.preds.push((n, e.rel, head));
                            o.insert((d, at));
                        }
                    }
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert((level, at));
                        self.preds.push((n, e.rel, NONE));
                        self.next.push(e.other);
                        if other.seen.contains_key(&e.other) {
                            meet.push(e.other);
                            if !all {
                                break 'level;
                            }
                        }
                    }
                }
            }
        }
        std::mem::swap(&mut self.frontier, &mut self.next);
    }

    /// Appends the paths from this side's root to `n` (root first) to `out`: all of them, or
    /// the first one.
    fn paths_to(&self, n: NodeId, all: bool, out: &mut Vec<(Vec<NodeId>, Vec<RelId>)>) {
        let at = |x: &NodeId| self.seen.get(x).copied().unwrap_or((0, NONE));
        let (depth, head) = at(&n);
        if depth == 0 {
            out.push((vec![n], Vec::new()));
            return;
        }
        // `stack[i]` is the predecessor chosen for `nodes[i]` (`NONE`: all tried); `rels[i]`
        // joins `nodes[i]` to `nodes[i + 1]`.
        let (mut nodes, mut rels, mut stack) = (vec![n], Vec::new(), vec![head]);
        while let Some(&p) = stack.last() {
            if p == NONE {
                stack.pop();
                nodes.pop();
                rels.pop();
                if let Some(q) = stack.last_mut() {
                    *q = self.preds[*q as usize].2;
                }
                continue;
            }
            let (m, r, next) = self.preds[p as usize];
            nodes.push(m);
            rels.push(r);
            let (dm, hm) = at(&m);
            if dm > 0 {
                stack.push(hm);
                continue;
            }
            out.push((nodes.iter().rev().copied().collect(), rels.iter().rev().copied().collect()));
            if !all {
                return;
            }
            nodes.pop();
            rels.pop();
            if let Some(q) = stack.last_mut() {
                *q = next;
            }
        }
    }
}

/// The state of one search, kept by the operator and reused for every input row.
#[derive(Default)]
pub(super) struct Scratch {
    fwd: Side,
    bwd: Side,
    edges: Vec<Edge>,
    meet: Vec<NodeId>,
}

fn flip(d: Direction) -> Direction {
    match d {
        Direction::Outgoing => Direction::Incoming,
        Direction::Incoming => Direction::Outgoing,
        Direction::Both => Direction::Both,
    }
}

/// The shortest paths from `a` to `b` (`a != b`) of at most `max` relationships along `dir`:
/// all of them with `all`, else one.
#[allow(clippy::too_many_arguments)]
pub(super) fn bidirectional(
    s: &mut Scratch,
    g: &dyn Graph,
    a: NodeId,
    b: NodeId,
    dir: Direction,
    types: &[TokenId],
    max: u64,
    all: bool,
) -> Vec<PathRef> {
    let Scratch { fwd, bwd, edges, meet } = s;
    fwd.reset(a);
    bwd.reset(b);
    meet.clear();
    while meet.is_empty() {
        if u64::from(fwd.level) + u64::from(bwd.level) >= max
            || fwd.frontier.is_empty()
            || bwd.frontier.is_empty()
        {
            return Vec::new();
        }
        // The visited sets were apart; only the side expanded now adds nodes, so the meeting
        // nodes are among its new ones (at exactly the other side's level).
        if fwd.frontier.len() <= bwd.frontier.len() {
            fwd.expand(bwd, g, dir, types, edges, all, meet);
        } else {
            bwd.expand(fwd, g, flip(dir), types, edges, all, meet);
        }
    }
    meet.sort_unstable();
    let mut out = Vec::new();
    let (mut heads, mut tails) = (Vec::new(), Vec::new());
    for &m in meet.iter() {
        heads.clear();
        tails.clear();
        fwd.paths_to(m, all, &mut heads);
        bwd.paths_to(m, all, &mut tails);
        for (hn, hr) in &heads {
            for (tn, tr) in &tails {
                let mut nodes = Vec::with_capacity(hn.len() + tn.len() - 1);
                nodes.extend_from_slice(hn);
                nodes.extend(tn.iter().rev().skip(1));
                let mut rels = Vec::with_capacity(hr.len() + tr.len());
                rels.extend_from_slice(hr);
                rels.extend(tr.iter().rev());
                out.push(PathRef { nodes, rels });
                if !all {
                    return out;
                }
            }
        }
    }
    out
}
