//! Paths as a traversal sees them, borrowed and allocation-free: [`Path`] over either the
//! depth-first frames or a breadth-first arena chain ([`Arena`], [`Branch`]), [`OwnedPath`]
//! when a caller keeps one. Nothing here decides which paths exist.

use arbor_exec::traverse::Frame;
use arbor_model::{NodeId, RelId};
use arbor_storage::{NodeHandle, Transaction};

use super::node::NodeRef;

/// One breadth-first branch: its end node, the relationship to it and its parent branch.
#[derive(Clone, Copy, Debug)]
pub(super) struct Branch {
    pub(super) node: u64,
    pub(super) rel: u64,
    pub(super) parent: u32,
    /// Depth in the low 31 bits; the top bit says "expand this branch when dequeued".
    pub(super) depth_flags: u32,
}

pub(super) const EXPAND_FLAG: u32 = 1 << 31;
pub(super) const NO_PARENT: u32 = u32::MAX;

/// Branches per arena chunk (96 KiB, so a memory budget is met in steps of 96 KiB).
pub(super) const CHUNK_BITS: u32 = 12;
pub(super) const CHUNK: usize = 1 << CHUNK_BITS;

/// The breadth-first arena: branches in fixed-size chunks, so growing it never copies what
/// is there (a doubling vector would allocate about twice its final size over a traversal and
/// briefly hold old and new buffers together); chunks are kept across `clear`.
#[derive(Default, Debug)]
pub(super) struct Arena {
    pub(super) chunks: Vec<Box<[Branch]>>,
    pub(super) len: usize,
}

impl Arena {
    #[inline]
    pub(super) fn get(&self, idx: usize) -> Option<&Branch> {
        if idx >= self.len {
            return None;
        }
        self.chunks.get(idx >> CHUNK_BITS)?.get(idx & (CHUNK - 1))
    }

    #[inline]
    pub(super) fn get_mut(&mut self, idx: usize) -> Option<&mut Branch> {
        if idx >= self.len {
            return None;
        }
        self.chunks.get_mut(idx >> CHUNK_BITS)?.get_mut(idx & (CHUNK - 1))
    }

    pub(super) fn push(&mut self, b: Branch) {
        let (c, i) = (self.len >> CHUNK_BITS, self.len & (CHUNK - 1));
        if c == self.chunks.len() {
            self.chunks.push(vec![b; CHUNK].into_boxed_slice());
        }
        self.chunks[c][i] = b;
        self.len += 1;
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    pub(super) fn capacity_bytes(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<Branch>()
    }
}

#[derive(Clone, Copy)]
pub(super) enum PathRepr<'a> {
    /// Depth-first: the frames from the start node to the end node.
    Frames(&'a [Frame]),
    /// Breadth-first: branch `idx` of the arena and its ancestors.
    Chain { arena: &'a Arena, idx: u32 },
}

/// A path from the traversal's start node to the node it is at, borrowed from the traversal:
/// no allocation. Use [`Path::to_owned_path`] to keep it.
#[derive(Clone, Copy)]
pub struct Path<'a> {
    pub(super) tx: &'a Transaction,
    pub(super) start: NodeId,
    /// The end node, resolved once for the evaluator and the expander.
    pub(super) end: NodeHandle<'a>,
    pub(super) len: u32,
    pub(super) repr: PathRepr<'a>,
}

/// A path copied out of a traversal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedPath {
    /// Start node first; `nodes.len() == rels.len() + 1`.
    pub nodes: Vec<NodeId>,
    pub rels: Vec<RelId>,
}

impl<'a> Path<'a> {
    pub fn start_node(&self) -> NodeRef<'a> {
        NodeRef::new(self.tx, self.start)
    }

    #[inline]
    pub fn end_node(&self) -> NodeRef<'a> {
        NodeRef { h: self.end }
    }

    /// Number of relationships.
    pub fn length(&self) -> usize {
        self.len as usize
    }

    /// The relationship leading to the end node (`None` for the start path).
    pub fn last_relationship(&self) -> Option<RelId> {
        self.steps_rev().next().map(|(r, _)| r)
    }

    /// `(relationship, node it leads to)` from the end back to the first step, without allocating.
    pub fn steps_rev(&self) -> StepsRev<'a> {
        match self.repr {
            PathRepr::Frames(f) => {
                StepsRev(StepsInner::Frames(f.get(1..).unwrap_or(&[]).iter().rev()))
            }
            PathRepr::Chain { arena, idx } => StepsRev(StepsInner::Chain { arena, idx }),
        }
    }

    /// Whether `node` is on the path.
    pub fn contains_node(&self, node: NodeId) -> bool {
        self.start == node || self.steps_rev().any(|(_, n)| n == node)
    }

    /// Whether `rel` is on the path.
    pub fn contains_relationship(&self, rel: RelId) -> bool {
        self.steps_rev().any(|(r, _)| r == rel)
    }

    /// Copies the path out (allocates).
    pub fn to_owned_path(&self) -> OwnedPath {
        let mut nodes = Vec::with_capacity(self.len as usize + 1);
        let mut rels = Vec::with_capacity(self.len as usize);
        for (r, n) in self.steps_rev() {
            rels.push(r);
            nodes.push(n);
        }
        nodes.push(self.start);
        nodes.reverse();
        rels.reverse();
        OwnedPath { nodes, rels }
    }
}

impl std::fmt::Debug for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.to_owned_path();
        f.debug_struct("Path").field("nodes", &p.nodes).field("rels", &p.rels).finish()
    }
}

/// Iterator of [`Path::steps_rev`].
pub struct StepsRev<'a>(StepsInner<'a>);

pub(super) enum StepsInner<'a> {
    Frames(std::iter::Rev<std::slice::Iter<'a, Frame>>),
    Chain { arena: &'a Arena, idx: u32 },
}

impl Iterator for StepsRev<'_> {
    type Item = (RelId, NodeId);
    fn next(&mut self) -> Option<(RelId, NodeId)> {
        match &mut self.0 {
            StepsInner::Frames(it) => it.next().map(|f| (f.rel, f.node)),
            StepsInner::Chain { arena, idx } => {
                let b = arena.get(*idx as usize)?;
                if b.parent == NO_PARENT {
                    return None;
                }
                *idx = b.parent;
                Some((RelId(b.rel), NodeId(b.node)))
            }
        }
    }
}

// ------------------------------------------------------------------------- constructors

pub(super) fn frames_path<'a>(tx: &'a Transaction, start: NodeId, frames: &'a [Frame]) -> Path<'a> {
    frames_path_to(tx, start, frames, tx.node_handle(frames.last().map_or(start, |f| f.node)))
}

/// The path of `frames`, whose last node is already resolved as `end`.
#[inline]
pub(super) fn frames_path_to<'a>(
    tx: &'a Transaction,
    start: NodeId,
    frames: &'a [Frame],
    end: NodeHandle<'a>,
) -> Path<'a> {
    Path {
        tx,
        start,
        end,
        len: frames.len().saturating_sub(1) as u32,
        repr: PathRepr::Frames(frames),
    }
}

pub(super) fn chain_path<'a>(
    tx: &'a Transaction,
    start: NodeId,
    arena: &'a Arena,
    idx: u32,
) -> Path<'a> {
    let b = arena.get(idx as usize).copied().unwrap_or(Branch {
        node: start.0,
        rel: u64::MAX,
        parent: NO_PARENT,
        depth_flags: 0,
    });
    Path {
        tx,
        start,
        end: tx.node_handle(NodeId(b.node)),
        len: b.depth_flags & !EXPAND_FLAG,
        repr: PathRepr::Chain { arena, idx },
    }
}
