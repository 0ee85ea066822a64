//! The depth-first expansion core shared by Cypher's variable-length expansion
//! (`VarLengthExpand`, in `runtime`) and the engine's native traversal framework
//! (`arbor_engine::traversal`, depth-first order).
//!
//! It is a path stack: one [`Frame`] per node on the current path (the start node first), and
//! one stack of pending relationships that holds, for every frame, the relationships still to
//! be tried from its node. A step pops the next pending relationship of the deepest frame
//! ([`DepthFirst::next_edge`]); the caller decides whether to follow it (uniqueness, filters),
//! [`push`](DepthFirst::push)es the node it leads to, and, if it wants to go deeper, appends
//! that node's relationships with [`expand_top`](DepthFirst::expand_top). Exhausted frames are
//! popped lazily, so results come out in pre-order, one at a time, and the current path is
//! always the frames themselves: checking relationship isomorphism or node-path uniqueness is
//! a scan of at most `depth` frames, and nothing is materialized per step.
//!
//! **Allocation:** both stacks are bounded by depth × fanout and keep their capacity across
//! [`reset`](DepthFirst::reset)s, so an owner that reuses one `DepthFirst` allocates nothing
//! per step and, once warm, nothing per traversal. Edge lists are written straight into the
//! pending stack by the graph (`Graph::node_edges`, which the engine implements by streaming
//! the storage CSR, or a storage callback); no per-node buffer exists.
//!
//! The pending stack is generic over the edge type, so the engine stores its storage edges and
//! `VarLengthExpand` stores [`crate::graph::Edge`]s; frames keep only what a path is made of.

use arbor_model::{NodeId, RelId};

/// One node of the current path, with the range of its pending relationships.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The node reached.
    pub node: NodeId,
    /// The relationship that reached it (`RelId(u64::MAX)` for the start node).
    pub rel: RelId,
    /// Next pending relationship of this node (index into the pending stack).
    cursor: u32,
    /// End of this node's range in the pending stack.
    edge_end: u32,
}

/// The relationship id a start frame carries.
pub const NO_REL: RelId = RelId(u64::MAX);

/// A depth-first path stack (see the module documentation).
///
/// With `RELS`, it also keeps one 64-bit mask per frame with a bit set for each relationship
/// of the path up to it (bit `rel % 64`), so [`path_has_rel`](Self::path_has_rel) scans the
/// frames only when the relationship's bit is set: for a Cypher variable-length expansion,
/// which checks every step, that is a handful of instructions instead of a scan of the whole
/// path. Without it (the traversal framework, which checks relationships only under
/// `RelationshipPath` uniqueness) a step costs nothing extra.
#[derive(Debug)]
pub struct DepthFirst<E, const RELS: bool = false> {
    frames: Vec<Frame>,
    edges: Vec<E>,
    /// With `RELS`: per frame, the mask of its path's relationships.
    masks: Vec<u64>,
}

impl<E, const RELS: bool> Default for DepthFirst<E, RELS> {
    fn default() -> Self {
        DepthFirst { frames: Vec::new(), edges: Vec::new(), masks: Vec::new() }
    }
}

/// The bit of a path mask that stands for `rel`.
#[inline]
fn rel_bit(rel: RelId) -> u64 {
    1u64 << (rel.0 & 63)
}

impl<E: Copy, const RELS: bool> DepthFirst<E, RELS> {
    /// Starts over at `start` (depth 0, nothing pending), keeping the memory.
    pub fn reset(&mut self, start: NodeId) {
        self.frames.clear();
        self.edges.clear();
        self.frames.push(Frame { node: start, rel: NO_REL, cursor: 0, edge_end: 0 });
        if RELS {
            self.masks.clear();
            self.masks.push(0);
        }
    }

    /// Empties the stack (the traversal is over until the next `reset`).
    pub fn clear(&mut self) {
        self.frames.clear();
        self.edges.clear();
        self.masks.clear();
    }

    /// Whether the traversal is over (no frame left).
    pub fn is_done(&self) -> bool {
        self.frames.is_empty()
    }

    /// Sets the pending relationships of the deepest node (once per node): `fill` sees the
    /// current path and pushes them onto the pending stack (only push; they are tried in push
    /// order).
    #[inline]
    pub fn expand_top(&mut self, fill: impl FnOnce(&[Frame], &mut Vec<E>)) {
        let before = self.edges.len();
        fill(&self.frames, &mut self.edges);
        if let Some(top) = self.frames.last_mut() {
            // Frames pushed since the top's own range are gone, so its range ends here.
            top.cursor = before as u32;
            top.edge_end = self.edges.len() as u32;
        } else {
            self.edges.truncate(before);
        }
    }

    /// The next relationship to try from the deepest node that still has one (popping the
    /// exhausted frames above it); `None` when the traversal is over.
    #[inline]
    pub fn next_edge(&mut self) -> Option<E> {
        loop {
            let top = self.frames.last_mut()?;
            if top.cursor < top.edge_end {
                let e = self.edges[top.cursor as usize];
                top.cursor += 1;
                return Some(e);
            }
            self.pop();
        }
    }

    /// Makes `node`, reached over `rel`, the end of the path (depth + 1). It has no pending
    /// relationships until [`expand_top`](Self::expand_top).
    #[inline]
    pub fn push(&mut self, node: NodeId, rel: RelId) {
        let at = self.edges.len() as u32;
        self.frames.push(Frame { node, rel, cursor: at, edge_end: at });
        if RELS {
            let m = self.masks.last().map_or(0, |m| *m) | rel_bit(rel);
            self.masks.push(m);
        }
    }

    /// Drops the deepest node and its pending relationships.
    pub fn pop(&mut self) {
        if RELS {
            self.masks.pop();
        }
        if let Some(top) = self.frames.pop() {
            // Its range is the tail of the pending stack; the parent's range ends before it.
            if let Some(parent) = self.frames.last() {
                self.edges.truncate(parent.edge_end as usize);
            } else {
                self.edges.clear();
            }
            let _ = top;
        }
    }

    /// Number of relationships on the current path.
    #[inline]
    pub fn depth(&self) -> usize {
        self.frames.len().saturating_sub(1)
    }

    /// The node at the end of the current path.
    pub fn end(&self) -> Option<NodeId> {
        self.frames.last().map(|f| f.node)
    }

    /// The current path, start node first.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The relationships of the current path, first step first.
    pub fn rels(&self) -> impl DoubleEndedIterator<Item = RelId> + ExactSizeIterator + '_ {
        self.frames.iter().skip(1).map(|f| f.rel)
    }

    /// Whether `rel` is on the current path (O(depth)).
    #[inline]
    pub fn path_has_rel(&self, rel: RelId) -> bool {
        if RELS && self.masks.last().is_some_and(|m| m & rel_bit(rel) == 0) {
            return false;
        }
        self.frames.iter().skip(1).any(|f| f.rel == rel)
    }

    /// Whether `node` is on the current path (O(depth)).
    #[inline]
    pub fn path_has_node(&self, node: NodeId) -> bool {
        self.frames.iter().any(|f| f.node == node)
    }

    /// Bytes reserved (for reporting).
    pub fn capacity_bytes(&self) -> usize {
        self.frames.capacity() * std::mem::size_of::<Frame>()
            + self.edges.capacity() * std::mem::size_of::<E>()
            + self.masks.capacity() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small directed graph as adjacency lists: node -> [(rel, other)].
    fn graph() -> Vec<Vec<(u64, u64)>> {
        // 0 -> 1 (r0), 0 -> 2 (r1), 1 -> 3 (r2), 2 -> 3 (r3), 3 -> 0 (r4): a cycle through 0.
        vec![vec![(0, 1), (1, 2)], vec![(2, 3)], vec![(3, 3)], vec![(4, 0)]]
    }

    /// Every relationship-unique path from 0, as (rels, end), in the order the core yields.
    fn all_paths(max: usize) -> Vec<(Vec<u64>, u64)> {
        let g = graph();
        let mut dfs: DepthFirst<(u64, u64)> = DepthFirst::default();
        let mut out = Vec::new();
        for _round in 0..2 {
            out.clear();
            dfs.reset(NodeId(0));
            dfs.expand_top(|_, v| v.extend(g[0].iter().copied()));
            while let Some((rel, other)) = dfs.next_edge() {
                if dfs.path_has_rel(RelId(rel)) {
                    continue;
                }
                dfs.push(NodeId(other), RelId(rel));
                out.push((dfs.rels().map(|r| r.0).collect(), other));
                if dfs.depth() < max {
                    dfs.expand_top(|_, v| v.extend(g[other as usize].iter().copied()));
                }
            }
            assert!(dfs.is_done());
        }
        out
    }

    #[test]
    fn yields_relationship_unique_paths_in_pre_order() {
        let got = all_paths(10);
        let want: Vec<(Vec<u64>, u64)> = vec![
            (vec![0], 1),
            (vec![0, 2], 3),
            (vec![0, 2, 4], 0),
            (vec![0, 2, 4, 1], 2),
            (vec![0, 2, 4, 1, 3], 3),
            (vec![1], 2),
            (vec![1, 3], 3),
            (vec![1, 3, 4], 0),
            (vec![1, 3, 4, 0], 1),
            (vec![1, 3, 4, 0, 2], 3),
        ];
        assert_eq!(got, want);
    }

    /// The same paths as [`all_paths`], on a `DepthFirst` with relationship masks, and with
    /// relationship ids 64 apart so that different relationships share a mask bit: the
    /// masks may only skip the scan of the path, never decide a repeat on their own.
    fn all_paths_masked(max: usize, rel_offset: u64) -> Vec<(Vec<u64>, u64)> {
        let g = graph();
        let rel = |r: u64| r * rel_offset;
        let mut dfs: DepthFirst<(u64, u64), true> = DepthFirst::default();
        let mut out = Vec::new();
        dfs.reset(NodeId(0));
        dfs.expand_top(|_, v| v.extend(g[0].iter().map(|(r, o)| (rel(*r), *o))));
        while let Some((r, other)) = dfs.next_edge() {
            if dfs.path_has_rel(RelId(r)) {
                continue;
            }
            dfs.push(NodeId(other), RelId(r));
            out.push((dfs.rels().map(|r| r.0 / rel_offset).collect(), other));
            if dfs.depth() < max {
                dfs.expand_top(|_, v| {
                    v.extend(g[other as usize].iter().map(|(r, o)| (rel(*r), *o)))
                });
            }
        }
        assert!(dfs.is_done());
        out
    }

    #[test]
    fn relationship_masks_give_the_same_paths() {
        for max in [2, 10] {
            let want = all_paths(max);
            // Distinct bits (1 apart), all on one bit (64 apart), pairs sharing bits (32).
            for offset in [1, 64, 32] {
                assert_eq!(all_paths_masked(max, offset), want, "max {max}, offset {offset}");
            }
        }
        // The masks follow pops: after a branch is left, its relationship is off the path.
        let mut dfs: DepthFirst<u64, true> = DepthFirst::default();
        dfs.reset(NodeId(0));
        dfs.expand_top(|_, v| v.extend([5, 6]));
        assert_eq!(dfs.next_edge(), Some(5));
        dfs.push(NodeId(1), RelId(5));
        assert!(dfs.path_has_rel(RelId(5)) && !dfs.path_has_rel(RelId(69)));
        assert_eq!(dfs.next_edge(), Some(6));
        assert!(!dfs.path_has_rel(RelId(5)));
        dfs.push(NodeId(2), RelId(6));
        assert!(dfs.path_has_rel(RelId(6)) && !dfs.path_has_rel(RelId(5)));
    }

    #[test]
    fn respects_a_maximum_depth() {
        let got = all_paths(2);
        let lens: Vec<usize> = got.iter().map(|(r, _)| r.len()).collect();
        assert_eq!(lens, vec![1, 2, 1, 2]);
    }

    #[test]
    fn node_path_checks_see_the_current_path_only() {
        let mut dfs: DepthFirst<u64> = DepthFirst::default();
        dfs.reset(NodeId(7));
        dfs.expand_top(|_, v| v.push(1));
        assert_eq!(dfs.next_edge(), Some(1));
        dfs.push(NodeId(8), RelId(1));
        assert!(dfs.path_has_node(NodeId(7)) && dfs.path_has_node(NodeId(8)));
        assert!(dfs.path_has_rel(RelId(1)) && !dfs.path_has_rel(NO_REL));
        assert_eq!(dfs.next_edge(), None);
        assert!(dfs.is_done() && !dfs.path_has_node(NodeId(7)));
    }
}
