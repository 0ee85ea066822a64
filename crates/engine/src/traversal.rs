//! Native graph traversals in the spirit of Neo4j's Traversal Framework: depth-first or
//! breadth-first, an [`Expander`] choosing which relationships to follow from a path's end, an
//! [`Evaluator`] deciding include/exclude and continue/prune per path, a [`Uniqueness`] rule,
//! an optional maximum depth, and lazy iteration of paths or end nodes.
//!
//! Traversals run directly on a read snapshot (a storage transaction), without the Cypher
//! executor. Tokens are resolved once up front (see [`crate::Tx::label`] and friends), so a step
//! costs only the storage reads the expander and evaluator ask for.
//!
//! **Allocation:** a traversal allocates nothing per step beyond what it must remember:
//! * depth-first keeps one stack of frames and one stack of pending relationships (both bounded
//!   by depth × fanout): the path stack [`arbor_exec::traverse::DepthFirst`], the same machinery
//!   Cypher's variable-length expansion runs on;
//! * breadth-first keeps its branches (end node, relationship, parent: 24 bytes each, in 96 KiB
//!   chunks) in an arena that doubles as the queue, up to a memory budget
//!   ([`TraversalDescription::memory_budget`], default [`DEFAULT_MEMORY_BUDGET`] = 480 KiB);
//! * when the next branch would not fit, breadth-first goes on by **iterative deepening**: for
//!   each further level `d`, it walks depth-first (on the same path stack as depth-first order)
//!   from the start down to level `d`, descending only into paths the evaluator said "continue"
//!   for, and evaluates only the paths at level `d` it has not seen. Pre-order reaches a
//!   level's paths in exactly the order the queue would (parents in level order, children in
//!   expander order), so the output order is unchanged, and the `j`-th path a walk reaches at
//!   level `k` is the `j`-th path ever reached there. That ordinal indexes one bit per path and
//!   level holding its continue decision (the arena's branches are turned into those bits at
//!   the switch), so the evaluator is called exactly once per path, as in the arena; a level
//!   whose bits are all equal (everything continues, or nothing, as at the maximum depth) takes
//!   no memory. The expander is called again for every re-walked path, so it must be
//!   deterministic for a snapshot (see [`Expander`]). A new path that continues is expanded
//!   once right away to see whether it has a child at all (one that passes uniqueness); if not,
//!   it is recorded as not continuing, so the traversal ends after the last level that has
//!   children instead of walking the whole tree once more to find that it has none. The cost
//!   is the re-walks: the walk for level `d` visits and expands again the continuing paths of
//!   levels `< d` (on a tree of fanout `f`, about `1 / (f - 1)` more visits than the arena, and
//!   each continuing path expanded at least twice). On the traversal benchmark's tree (when
//!   introduced): +10 % instructions over the arena, 497 kB allocated by a cold traversal
//!   instead of 33.8 MB.
//!   Only [`Uniqueness::None`], [`Uniqueness::NodePath`] and [`Uniqueness::RelationshipPath`]
//!   are bounded: their decisions depend on the path alone, so a re-walk replays them. The
//!   global kinds depend on every earlier path and keep the whole arena;
//! * node-global / relationship-global uniqueness use a bitset over the dense ids (one bit per id);
//!   path uniqueness checks the current path and needs no memory.
//!
//! Storage reads allocate nothing either: a step resolves its end node once into a storage
//! [`NodeHandle`](arbor_storage::NodeHandle) (a clean base row is then read straight from the
//! base columns) and relationships are appended by the storage straight into the pending stack
//! ([`NodeRef::relationships`], `NodeHandle::edges_into`, which takes the handle's id and
//! clean flag: a handle passed whole to an out-of-line call was copied through memory by wide
//! loads that the CPU could not forward from the scalar stores that built the path, a stall
//! per expansion). The visit steps and the closure wrappers ([`FnExpander`], [`FnEvaluator`])
//! are inlined into the traversal loops.
//!
//! All of that lives in a [`Workspace`]. [`TraversalDescription::traverse`] borrows one from the
//! database's pool and gives it back when the traverser is dropped, so an application running
//! many traversals (one per web request, say) reaches a steady state with no allocation at all;
//! [`TraversalDescription::traverse_in`] uses a caller's own workspace instead.
//!
//! # Example: the traversal benchmark's traversal
//!
//! ```
//! use arbor_engine::traversal::{Evaluation, Path, TraversalDescription, Uniqueness};
//! use arbor_engine::{Database, Direction, Edge, Value};
//!
//! let db = Database::in_memory();
//! // (:Root:A)-[:HAS_B]->(:B {value: true})-[:HAS_A]->(:A)-[:HAS_B]->(:B {value: false})
//! db.write(|tx| {
//!     let root = tx.create_node(&["Root", "A"], [("value", Value::Bool(false))])?;
//!     let b1 = tx.create_node(&["B"], [("value", Value::Bool(true))])?;
//!     let a1 = tx.create_node(&["A"], [("value", Value::Bool(true))])?;
//!     let b2 = tx.create_node(&["B"], [("value", Value::Bool(false))])?;
//!     tx.create_relationship(root, b1, "HAS_B", [])?;
//!     tx.create_relationship(b1, a1, "HAS_A", [])?;
//!     tx.create_relationship(a1, b2, "HAS_B", [])?;
//!     Ok(())
//! })?;
//!
//! let tx = db.begin_read()?;
//! // Resolve tokens once; a missing token means no node can match.
//! let (a, b) = (tx.label("A").unwrap(), tx.label("B").unwrap());
//! let (has_a, has_b) = (tx.rel_type("HAS_A").unwrap(), tx.rel_type("HAS_B").unwrap());
//! let value = tx.property_key("value").unwrap();
//! let root = tx.find_nodes(tx.label("Root").unwrap()).next().unwrap();
//!
//! let td = TraversalDescription::new()
//!     .depth_first()
//!     .uniqueness(Uniqueness::None)
//!     // Follow HAS_B out of :A nodes and HAS_A out of :B nodes.
//!     .expand_with(move |path: &Path<'_>, out: &mut Vec<Edge>| {
//!         let end = path.end_node();
//!         if end.has_label(a) {
//!             end.relationships(Direction::Outgoing, &[has_b], out);
//!         } else if end.has_label(b) {
//!             end.relationships(Direction::Outgoing, &[has_a], out);
//!         }
//!     })
//!     // Include paths ending on a :B whose `value` is true; always continue.
//!     .evaluate_with(move |path: &Path<'_>| {
//!         let end = path.end_node();
//!         Evaluation::of_includes(
//!             end.has_label(b) && matches!(end.property(value), Some(Value::Bool(true))),
//!         )
//!     });
//! assert_eq!(td.traverse(&tx, root).count(), 1);
//! // The same description, breadth-first, reusing a workspace across runs:
//! let bfs = td.clone().breadth_first();
//! let mut ws = arbor_engine::traversal::Workspace::default();
//! for _ in 0..3 {
//!     assert_eq!(bfs.traverse_in(&tx, root, &mut ws).count(), 1);
//! }
//! # Ok::<(), arbor_engine::Error>(())
//! ```

use std::borrow::{Borrow, BorrowMut};

use arbor_exec::traverse::{DepthFirst, Frame};
use arbor_model::{NodeId, RelId, Value};
use arbor_storage::{Dir, Edge, NodeHandle, TokenId, Transaction};

use crate::embedded::{Label, PropertyKey, RelType, Tx};

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

/// What the evaluator says about a path: whether to return it and whether to look beyond it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    IncludeAndContinue,
    IncludeAndPrune,
    ExcludeAndContinue,
    ExcludeAndPrune,
}

impl Evaluation {
    /// Include or exclude; always continue.
    pub fn of_includes(include: bool) -> Evaluation {
        if include {
            Evaluation::IncludeAndContinue
        } else {
            Evaluation::ExcludeAndContinue
        }
    }

    /// Continue or prune; always include.
    pub fn of_continues(cont: bool) -> Evaluation {
        if cont {
            Evaluation::IncludeAndContinue
        } else {
            Evaluation::IncludeAndPrune
        }
    }

    pub fn of(include: bool, cont: bool) -> Evaluation {
        match (include, cont) {
            (true, true) => Evaluation::IncludeAndContinue,
            (true, false) => Evaluation::IncludeAndPrune,
            (false, true) => Evaluation::ExcludeAndContinue,
            (false, false) => Evaluation::ExcludeAndPrune,
        }
    }

    pub fn includes(self) -> bool {
        matches!(self, Evaluation::IncludeAndContinue | Evaluation::IncludeAndPrune)
    }

    pub fn continues(self) -> bool {
        matches!(self, Evaluation::IncludeAndContinue | Evaluation::ExcludeAndContinue)
    }
}

/// Decides which relationships to follow from the end of a path, by appending them to `out`.
/// `out` is a buffer the traversal reuses, so implementations must only append.
///
/// An expander may be called more than once for the same path: a breadth-first traversal that
/// outgrows its memory budget (see [`TraversalDescription::memory_budget`]) walks the paths it
/// already expanded again. It must therefore be deterministic for a snapshot: the same path
/// gives the same relationships in the same order. The built-in expanders ([`TypeExpander`],
/// and [`NodeRef::relationships`] for closures) are. If it is not, a bounded breadth-first
/// traversal's output is unspecified (it stays memory-safe and terminates as the graph allows).
pub trait Expander {
    fn expand(&self, path: &Path<'_>, out: &mut Vec<Edge>);
}

/// Decides whether a path is returned and whether the traversal goes beyond it.
pub trait Evaluator {
    fn evaluate(&self, path: &Path<'_>) -> Evaluation;
}

/// An expander made from a closure (see [`TraversalDescription::expand_with`]).
#[derive(Clone)]
pub struct FnExpander<F>(pub F);

// The closure wrappers are inlined, so the traversal loop calls the closure itself (one call
// per step, not two).
impl<F: Fn(&Path<'_>, &mut Vec<Edge>)> Expander for FnExpander<F> {
    #[inline(always)]
    fn expand(&self, path: &Path<'_>, out: &mut Vec<Edge>) {
        (self.0)(path, out)
    }
}

/// An evaluator made from a closure (see [`TraversalDescription::evaluate_with`]).
#[derive(Clone)]
pub struct FnEvaluator<F>(pub F);

impl<F: Fn(&Path<'_>) -> Evaluation> Evaluator for FnEvaluator<F> {
    #[inline(always)]
    fn evaluate(&self, path: &Path<'_>) -> Evaluation {
        (self.0)(path)
    }
}

/// Includes every path and always continues (the default evaluator).
#[derive(Clone, Copy, Debug, Default)]
pub struct IncludeAll;

impl Evaluator for IncludeAll {
    fn evaluate(&self, _path: &Path<'_>) -> Evaluation {
        Evaluation::IncludeAndContinue
    }
}

/// Follows relationships by type and direction. With no rule it follows every relationship in
/// both directions (the default expander). Rules are applied in order; overlapping rules list a
/// relationship twice.
#[derive(Clone, Debug, Default)]
pub struct TypeExpander {
    /// (direction, types); empty types = all types.
    rules: Vec<(Dir, Vec<TokenId>)>,
}

impl TypeExpander {
    pub fn new() -> TypeExpander {
        TypeExpander::default()
    }

    /// Follows `rel_type` in `dir` (merged with an earlier rule of the same direction).
    pub fn add(mut self, rel_type: RelType, dir: Direction) -> TypeExpander {
        match self.rules.iter_mut().find(|(d, t)| *d == dir && !t.is_empty()) {
            Some((_, types)) => {
                if !types.contains(&rel_type.0) {
                    types.push(rel_type.0)
                }
            }
            None => self.rules.push((dir, vec![rel_type.0])),
        }
        self
    }

    /// Follows every relationship in `dir`.
    pub fn all(mut self, dir: Direction) -> TypeExpander {
        self.rules.push((dir, Vec::new()));
        self
    }
}

impl Expander for TypeExpander {
    fn expand(&self, path: &Path<'_>, out: &mut Vec<Edge>) {
        let end = path.end;
        if self.rules.is_empty() {
            end.edges_into(Dir::Both, &[], out);
            return;
        }
        for (dir, types) in &self.rules {
            end.edges_into(*dir, types, out);
        }
    }
}

pub use arbor_storage::Dir as Direction;

/// A node seen through a transaction: cheap to copy, reads on demand. It is resolved once
/// (a storage [`NodeHandle`]), so repeated reads of one node do not repeat the lookup.
#[derive(Clone, Copy)]
pub struct NodeRef<'t> {
    h: NodeHandle<'t>,
}

impl<'t> NodeRef<'t> {
    pub(crate) fn new(tx: &'t Transaction, id: NodeId) -> NodeRef<'t> {
        NodeRef { h: tx.node_handle(id) }
    }

    pub fn id(&self) -> NodeId {
        self.h.id()
    }

    #[inline]
    pub fn has_label(&self, label: Label) -> bool {
        self.h.has_label(label.0)
    }

    pub fn labels(&self) -> Vec<Label> {
        self.h.labels().into_iter().map(Label).collect()
    }

    /// The property's value; `None` if the node has no such property.
    #[inline]
    pub fn property(&self, key: PropertyKey) -> Option<Value> {
        self.h.property(key.0)
    }

    /// Appends the node's relationships in `dir` whose type is one of `types` (all if empty).
    #[inline]
    pub fn relationships(&self, dir: Direction, types: &[RelType], out: &mut Vec<Edge>) {
        // Not through `with_type_ids`: its closure would be an out-of-line call taking the
        // handle through memory (see `NodeHandle::edges_into`).
        const INLINE: usize = 8;
        if types.len() > INLINE {
            let ids: Vec<TokenId> = types.iter().map(|t| t.0).collect();
            self.h.edges_into(dir, &ids, out);
            return;
        }
        let mut buf = [0 as TokenId; INLINE];
        for (slot, t) in buf.iter_mut().zip(types) {
            *slot = t.0;
        }
        self.h.edges_into(dir, &buf[..types.len()], out);
    }

    /// Number of relationships `relationships` would append.
    pub fn degree(&self, dir: Direction, types: &[RelType]) -> u64 {
        let mut n = 0;
        with_type_ids(types, |ids| self.h.for_each_edge(dir, ids, |_| n += 1));
        n
    }
}

impl std::fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeRef({})", self.h.id().0)
    }
}

/// Runs `f` on the raw token ids of `types` without allocating for the usual handful of types.
#[inline(always)]
fn with_type_ids<R>(types: &[RelType], f: impl FnOnce(&[TokenId]) -> R) -> R {
    const INLINE: usize = 8;
    if types.len() <= INLINE {
        let mut buf = [0 as TokenId; INLINE];
        for (slot, t) in buf.iter_mut().zip(types) {
            *slot = t.0;
        }
        f(&buf[..types.len()])
    } else {
        let ids: Vec<TokenId> = types.iter().map(|t| t.0).collect();
        f(&ids)
    }
}

// ------------------------------------------------------------------------------------ paths

/// One breadth-first branch: its end node, the relationship to it and its parent branch.
#[derive(Clone, Copy, Debug)]
struct Branch {
    node: u64,
    rel: u64,
    parent: u32,
    /// Depth in the low 31 bits; the top bit says "expand this branch when dequeued".
    depth_flags: u32,
}

const EXPAND_FLAG: u32 = 1 << 31;
const NO_PARENT: u32 = u32::MAX;

/// Branches per arena chunk (96 KiB, so a memory budget is met in steps of 96 KiB).
const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;

/// The breadth-first arena: branches in fixed-size chunks, so growing it never copies what
/// is there (a doubling vector would allocate about twice its final size over a traversal and
/// briefly hold old and new buffers together); chunks are kept across `clear`.
#[derive(Default, Debug)]
struct Arena {
    chunks: Vec<Box<[Branch]>>,
    len: usize,
}

impl Arena {
    #[inline]
    fn get(&self, idx: usize) -> Option<&Branch> {
        if idx >= self.len {
            return None;
        }
        self.chunks.get(idx >> CHUNK_BITS)?.get(idx & (CHUNK - 1))
    }

    #[inline]
    fn get_mut(&mut self, idx: usize) -> Option<&mut Branch> {
        if idx >= self.len {
            return None;
        }
        self.chunks.get_mut(idx >> CHUNK_BITS)?.get_mut(idx & (CHUNK - 1))
    }

    fn push(&mut self, b: Branch) {
        let (c, i) = (self.len >> CHUNK_BITS, self.len & (CHUNK - 1));
        if c == self.chunks.len() {
            self.chunks.push(vec![b; CHUNK].into_boxed_slice());
        }
        self.chunks[c][i] = b;
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    fn capacity_bytes(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<Branch>()
    }
}

#[derive(Clone, Copy)]
enum PathRepr<'a> {
    /// Depth-first: the frames from the start node to the end node.
    Frames(&'a [Frame]),
    /// Breadth-first: branch `idx` of the arena and its ancestors.
    Chain { arena: &'a Arena, idx: u32 },
}

/// A path from the traversal's start node to the node it is at, borrowed from the traversal:
/// no allocation. Use [`Path::to_owned_path`] to keep it.
#[derive(Clone, Copy)]
pub struct Path<'a> {
    tx: &'a Transaction,
    start: NodeId,
    /// The end node, resolved once for the evaluator and the expander.
    end: NodeHandle<'a>,
    len: u32,
    repr: PathRepr<'a>,
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

enum StepsInner<'a> {
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

// ------------------------------------------------------------------------------- workspace

/// A growable bitset over dense ids.
#[derive(Default, Debug)]
struct BitSet {
    words: Vec<u64>,
    /// Words written since the last clear (so clearing costs what was used, not the capacity).
    dirty: Vec<u32>,
    sparse_clear: bool,
}

impl BitSet {
    /// Sets bit `id`; returns whether it was clear.
    fn insert(&mut self, id: u64) -> bool {
        let w = (id / 64) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1 + w / 4, 0);
        }
        let bit = 1u64 << (id % 64);
        let limit = self.words.len() / 16;
        let word = &mut self.words[w];
        if *word & bit != 0 {
            return false;
        }
        if *word == 0 && self.sparse_clear {
            if self.dirty.len() < limit {
                self.dirty.push(w as u32);
            } else {
                // Too many words touched to track them: clear everything next time.
                self.sparse_clear = false;
            }
        }
        *word |= bit;
        true
    }

    fn clear(&mut self) {
        if self.sparse_clear {
            for &w in &self.dirty {
                self.words[w as usize] = 0;
            }
        } else {
            self.words.iter_mut().for_each(|w| *w = 0);
        }
        self.dirty.clear();
        self.sparse_clear = true;
    }
}

/// The continue decisions of one breadth-first level, one bit per path in level order (bit `j`
/// for the `j`-th path of the level). A level whose bits are all equal (every path continues,
/// or none does, as at the maximum depth) is kept as a count, with no memory.
#[derive(Default, Debug)]
struct LevelBits {
    len: u64,
    ones: u64,
    /// With `dense`, the bits; otherwise all `len` bits equal `uniform`.
    words: Vec<u64>,
    dense: bool,
    uniform: bool,
}

impl LevelBits {
    fn clear(&mut self) {
        self.len = 0;
        self.ones = 0;
        self.words.clear();
        self.dense = false;
    }

    #[inline(always)]
    fn push(&mut self, bit: bool) {
        if !self.dense && (self.len == 0 || bit == self.uniform) {
            self.uniform = bit;
            self.len += 1;
            self.ones += bit as u64;
            return;
        }
        self.push_dense(bit);
    }

    /// `push` once the bits differ (kept out of line: the uniform case is the hot one).
    #[inline(never)]
    fn push_dense(&mut self, bit: bool) {
        if !self.dense {
            // The first differing bit: spell out the uniform prefix.
            let fill = if self.uniform { u64::MAX } else { 0 };
            self.words.clear();
            self.words.resize((self.len / 64) as usize + 1, fill);
            if let Some(last) = self.words.last_mut() {
                // Bits at and beyond `len` start clear.
                *last &= (1u64 << (self.len % 64)) - 1;
            }
            self.dense = true;
        }
        let (w, b) = ((self.len / 64) as usize, self.len % 64);
        if w == self.words.len() {
            self.words.push(0);
        }
        if bit {
            self.words[w] |= 1 << b;
            self.ones += 1;
        }
        self.len += 1;
    }

    /// Bit `j` (`j < len`).
    #[inline]
    fn get(&self, j: u64) -> bool {
        if !self.dense {
            return self.uniform;
        }
        self.words.get((j / 64) as usize).is_some_and(|w| w & (1 << (j % 64)) != 0)
    }
}

/// Memory a traversal works in. Reusing one across traversals (with
/// [`TraversalDescription::traverse_in`]) avoids all allocation once it has grown to size.
#[derive(Default, Debug)]
pub struct Workspace {
    /// Depth-first: the path stack.
    dfs: DepthFirst<Edge>,
    /// Breadth-first: the children of the branch being expanded.
    edges: Vec<Edge>,
    branches: Arena,
    seen_nodes: BitSet,
    seen_rels: BitSet,
    /// Bounded breadth-first: per level, the continue decision of each path.
    levels: Vec<LevelBits>,
    /// Bounded breadth-first: per level, paths reached so far in the current walk.
    ordinals: Vec<u64>,
}

impl Workspace {
    fn reset(&mut self) {
        self.dfs.clear();
        self.edges.clear();
        self.branches.clear();
        self.seen_nodes.clear();
        self.seen_rels.clear();
        self.levels.iter_mut().for_each(LevelBits::clear);
        self.ordinals.clear();
    }

    /// Bytes of memory currently reserved (for reporting).
    pub fn capacity_bytes(&self) -> usize {
        self.dfs.capacity_bytes()
            + self.edges.capacity() * std::mem::size_of::<Edge>()
            + self.branches.capacity_bytes()
            + (self.seen_nodes.words.capacity() + self.seen_rels.words.capacity()) * 8
            + (self.seen_nodes.dirty.capacity() + self.seen_rels.dirty.capacity()) * 4
            + self.levels.capacity() * std::mem::size_of::<LevelBits>()
            + self.levels.iter().map(|l| l.words.capacity() * 8).sum::<usize>()
            + self.ordinals.capacity() * 8
    }
}

/// Workspaces a database keeps for [`TraversalDescription::traverse`], so that repeated
/// traversals reuse their memory (a breadth-first arena can be tens of MB) instead of
/// allocating and freeing it per call. Bounded: at most [`POOL_MAX`] idle workspaces, and a
/// workspace that grew past [`POOL_KEEP_BYTES`] is freed rather than kept.
#[derive(Default)]
pub(crate) struct WorkspacePool {
    idle: parking_lot::Mutex<Vec<Workspace>>,
}

const POOL_MAX: usize = 16;
const POOL_KEEP_BYTES: usize = 256 << 20;

impl WorkspacePool {
    fn take(&self) -> PooledWorkspace<'_> {
        let ws = self.idle.lock().pop().unwrap_or_default();
        PooledWorkspace { ws, pool: self }
    }

    /// Idle workspaces and the bytes they hold.
    #[cfg(test)]
    pub(crate) fn idle(&self) -> (usize, usize) {
        let idle = self.idle.lock();
        (idle.len(), idle.iter().map(Workspace::capacity_bytes).sum())
    }
}

/// A workspace on loan from a database's pool; it goes back when dropped.
pub struct PooledWorkspace<'a> {
    ws: Workspace,
    pool: &'a WorkspacePool,
}

impl Borrow<Workspace> for PooledWorkspace<'_> {
    fn borrow(&self) -> &Workspace {
        &self.ws
    }
}

impl BorrowMut<Workspace> for PooledWorkspace<'_> {
    fn borrow_mut(&mut self) -> &mut Workspace {
        &mut self.ws
    }
}

impl Drop for PooledWorkspace<'_> {
    fn drop(&mut self) {
        if self.ws.capacity_bytes() > POOL_KEEP_BYTES {
            return;
        }
        let ws = std::mem::take(&mut self.ws);
        let mut idle = self.pool.idle.lock();
        if idle.len() < POOL_MAX {
            idle.push(ws);
        }
    }
}

// ----------------------------------------------------------------------------- description

/// How to traverse: order, expander, evaluator, uniqueness and maximum depth. Reusable and
/// cheap to clone (if the expander and evaluator are).
#[derive(Clone, Debug)]
pub struct TraversalDescription<E = TypeExpander, V = IncludeAll> {
    order: Order,
    uniqueness: Uniqueness,
    max_depth: Option<u32>,
    /// Breadth-first: bytes the branch arena may use before iterative deepening takes over.
    memory_budget: usize,
    expander: E,
    evaluator: V,
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

// ------------------------------------------------------------------------------- traverser

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
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
/// yields the paths themselves (borrowed, valid until the next call).
pub struct Traverser<'a, E, V, W> {
    td: &'a TraversalDescription<E, V>,
    tx: &'a Transaction,
    start: NodeId,
    ws: W,
    state: State,
    /// Breadth-first: the arena index of the branch being expanded next.
    cursor: usize,
    /// Bounded breadth-first: the level the current walk evaluates.
    target: u32,
}

impl<'a, E: Expander, V: Evaluator, W: BorrowMut<Workspace>> Traverser<'a, E, V, W> {
    /// The next included path, or `None` when the traversal is exhausted.
    pub fn next_path(&mut self) -> Option<Path<'_>> {
        let found = match self.td.order {
            Order::DepthFirst => self.advance_dfs(),
            Order::BreadthFirst => self.advance_bfs(),
        };
        if !found {
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

    /// Counts the remaining included paths.
    pub fn count_paths(mut self) -> u64 {
        let mut n = 0;
        loop {
            let found = match self.td.order {
                Order::DepthFirst => self.advance_dfs(),
                Order::BreadthFirst => self.advance_bfs(),
            };
            if !found {
                return n;
            }
            n += 1;
        }
    }

    fn max_depth(&self) -> u32 {
        self.td.max_depth.unwrap_or(EXPAND_FLAG - 1)
    }

    /// Breadth-first: how many branches the arena may hold (see
    /// [`TraversalDescription::memory_budget`]); unbounded for the global uniqueness kinds,
    /// whose decisions depend on every earlier path and cannot be replayed by a re-walk.
    fn arena_limit(&self) -> usize {
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
    fn start_deepening(&mut self, target: u32) {
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
    fn advance_walk(&mut self) -> bool {
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

    /// Depth-first: moves to the next included path (the path stack then holds it).
    fn advance_dfs(&mut self) -> bool {
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

    /// Breadth-first: moves to the next included path (the last branch of the arena holds it).
    fn advance_bfs(&mut self) -> bool {
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
fn visit_level<E: Expander, V: Evaluator>(
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

/// Evaluates the path ending at the deepest frame; expands it if the evaluation continues.
/// Returns whether the path is included.
#[inline(always)]
fn visit_top<E: Expander, V: Evaluator>(
    td: &TraversalDescription<E, V>,
    tx: &Transaction,
    start: NodeId,
    dfs: &mut DepthFirst<Edge>,
    max: u32,
) -> bool {
    let depth = dfs.depth() as u32;
    // The end node is resolved once, for the evaluator and the expander.
    let end = tx.node_handle(dfs.end().unwrap_or(start));
    let ev = td.evaluator.evaluate(&frames_path_to(tx, start, dfs.frames(), end));
    if ev.continues() && depth < max {
        dfs.expand_top(|frames, out| {
            td.expander.expand(&frames_path_to(tx, start, frames, end), out)
        });
    }
    ev.includes()
}

fn frames_path<'a>(tx: &'a Transaction, start: NodeId, frames: &'a [Frame]) -> Path<'a> {
    frames_path_to(tx, start, frames, tx.node_handle(frames.last().map_or(start, |f| f.node)))
}

/// The path of `frames`, whose last node is already resolved as `end`.
#[inline]
fn frames_path_to<'a>(
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

fn chain_path<'a>(tx: &'a Transaction, start: NodeId, arena: &'a Arena, idx: u32) -> Path<'a> {
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

impl<E: Expander, V: Evaluator, W: BorrowMut<Workspace>> Iterator for Traverser<'_, E, V, W> {
    type Item = NodeId;

    /// The end node of the next included path.
    fn next(&mut self) -> Option<NodeId> {
        self.next_path().map(|p| p.end.id())
    }
}
