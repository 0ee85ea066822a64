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

mod breadth_first;
mod depth_first;
mod description;
mod expand;
mod node;
mod path;
#[cfg(test)]
mod tests;
mod workspace;

pub use depth_first::Traverser;
pub use description::{Order, TraversalDescription, Uniqueness, DEFAULT_MEMORY_BUDGET};
pub use expand::{
    Direction, Evaluation, Evaluator, Expander, FnEvaluator, FnExpander, IncludeAll, TypeExpander,
};
pub use node::NodeRef;
pub use path::{OwnedPath, Path, StepsRev};
pub(crate) use workspace::WorkspacePool;
pub use workspace::{PooledWorkspace, Workspace};

use path::{chain_path, frames_path, frames_path_to, Arena, Branch, CHUNK, EXPAND_FLAG, NO_PARENT};
use workspace::LevelBits;
