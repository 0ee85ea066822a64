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

use std::collections::HashMap;

use arbor_model::{NodeId, PathRef, RelId};

use crate::graph::{Direction, Edge, Graph, TokenId};

/// One side of the search: distances and the predecessors at first discovery.
#[derive(Default)]
struct Side {
    depth: HashMap<NodeId, u64>,
    /// For a node, the `(node one level closer to this side's root, relationship)` pairs.
    preds: HashMap<NodeId, Vec<(NodeId, RelId)>>,
    frontier: Vec<NodeId>,
    level: u64,
}

impl Side {
    fn new(root: NodeId) -> Side {
        let mut s = Side::default();
        s.depth.insert(root, 0);
        s.frontier.push(root);
        s
    }

    /// Expands one whole level along `dir`.
    fn expand(&mut self, g: &dyn Graph, dir: Direction, types: &[TokenId], edges: &mut Vec<Edge>) {
        self.level += 1;
        let mut next = Vec::new();
        for &n in &self.frontier {
            edges.clear();
            g.node_edges(n, dir, types, edges);
            for e in edges.iter() {
                match self.depth.get(&e.other) {
                    Some(&l) if l == self.level => {
                        self.preds.entry(e.other).or_default().push((n, e.rel));
                    }
                    Some(_) => {}
                    None => {
                        self.depth.insert(e.other, self.level);
                        self.preds.entry(e.other).or_default().push((n, e.rel));
                        next.push(e.other);
                    }
                }
            }
        }
        self.frontier = next;
    }

    /// The paths from this side's root to `n` (root first), all of them or one.
    fn paths_to(&self, n: NodeId, all: bool) -> Vec<(Vec<NodeId>, Vec<RelId>)> {
        let mut partial = vec![(vec![n], Vec::new())];
        let mut done = Vec::new();
        while let Some((nodes, rels)) = partial.pop() {
            let head = nodes[nodes.len() - 1];
            if self.depth.get(&head) == Some(&0) {
                let mut nodes = nodes;
                nodes.reverse();
                let mut rels = rels;
                rels.reverse();
                done.push((nodes, rels));
                if !all {
                    break;
                }
                continue;
            }
            for &(p, r) in self.preds.get(&head).map(|v| v.as_slice()).unwrap_or(&[]) {
                let mut n2 = nodes.clone();
                n2.push(p);
                let mut r2 = rels.clone();
                r2.push(r);
                partial.push((n2, r2));
                if !all {
                    break;
                }
            }
        }
        done
    }
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
pub(super) fn bidirectional(
    g: &dyn Graph,
    a: NodeId,
    b: NodeId,
    dir: Direction,
    types: &[TokenId],
    max: u64,
    all: bool,
) -> Vec<PathRef> {
    let mut fwd = Side::new(a);
    let mut bwd = Side::new(b);
    let mut edges = Vec::new();
    let meeting = loop {
        if fwd.level + bwd.level >= max || fwd.frontier.is_empty() || bwd.frontier.is_empty() {
            return Vec::new();
        }
        // The intersection was empty; only the side just expanded added nodes, so the
        // meeting nodes are in its new frontier (at exactly both sides' levels).
        let mut meet: Vec<NodeId> = if fwd.frontier.len() <= bwd.frontier.len() {
            fwd.expand(g, dir, types, &mut edges);
            let at = bwd.level;
            fwd.frontier.iter().filter(|n| bwd.depth.get(n) == Some(&at)).copied().collect()
        } else {
            bwd.expand(g, flip(dir), types, &mut edges);
            let at = fwd.level;
            bwd.frontier.iter().filter(|n| fwd.depth.get(n) == Some(&at)).copied().collect()
        };
        if !meet.is_empty() {
            meet.sort_unstable();
            break meet;
        }
    };
    let mut out = Vec::new();
    for m in meeting {
        let heads = fwd.paths_to(m, all);
        let tails = bwd.paths_to(m, all);
        for (hn, hr) in &heads {
            for (tn, tr) in &tails {
                let mut nodes = hn.clone();
                nodes.extend(tn.iter().rev().skip(1));
                let mut rels = hr.clone();
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
