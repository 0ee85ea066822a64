//! The physical operators: a pull-based (Volcano) interpreter, one row at a time.
//!
//! Why row-at-a-time: it is the simplest model that supports suspending a result stream between
//! Bolt `PULL`s and interleaving writes with reads; vectorized execution can replace operators
//! one by one later behind the same [`Operator`](crate::ctx::Operator) trait.
//!
//! Every operator is re-openable with an argument row (`Operator::reset`), which makes nested
//! loops, OPTIONAL MATCH and subqueries plain "apply" compositions. Operators hold no borrow of
//! the graph: scans remember the last id they produced and ask the graph for the next one.
//!
//! Map (one file per operator family; the row, the context and the `Operator` trait live in
//! [`crate::ctx`], which the evaluator shares without depending on this module):
//!
//! - `builder`: [`Builder`] and [`build`], through which a family builds its inputs; `build`:
//!   the dispatch of plan operators to the families below, handed to each [`Builder`].
//! - `cursor`: [`Cursor`](cursor::Cursor), the loop of the operators that hand out a copy of
//!   an input row per item (`Expand`, `IndexSeek`, `ShortestPath`; the last item gets the row).
//! - `scan`: the argument row, label scans, index seeks, counts from the count store;
//!   `id_seek`: the seeks by id and element id.
//! - `shortest`: the bidirectional breadth-first search of `ShortestPath`.
//! - `expand`: `Expand`, `ShortestPath`, and the `Pump` driver of the variable-length
//!   expansions (`pump`), `var_expand` (`VarLengthExpand(All)`) and `pruning`
//!   (`VarLengthExpand(Pruning)`); `frontier`: `VarLengthExpand(Pruning,BFS)`, the directed
//!   multi-hop pruning expansion level by level over node sets; `pump` also holds the level
//!   and emission loops both share, with the end's properties read late in columns.
//! - `var_count`: `VarLengthExpand(Count)`, a keyless `count` of variable-length paths
//!   counted depth-first without a row per path.
//! - `groups`: the grouping state (`Groups`, `Grouping`) both aggregations share; `aggregate`:
//!   the `Aggregate` operator; `fused`: the fused scan aggregate (`FusedScan`) and its column
//!   mode (`ColumnAgg`); `aggregate_typed`: that column mode over integer batches
//!   (`TypedAgg`: selection vectors, direct group tables, per-batch summaries).
//! - `spill_file`: the scratch-file records and hash partitions of the operators that move state
//!   to disk past the query memory (`spill_codec`: the values' byte form); `agg_spill`: the
//!   aggregation's spilled rows; `distinct_spill`: the `Distinct` operator, spilling;
//!   `sort_spill`: `Sort`'s external merge sort.
//! - `distinct_ends`: `Distinct` over a one-key `Project` over a distinct-end expansion as
//!   one operator (the key deduplicated in the expansion's emission loop, no row per end).
//! - `relational`: filter, project, skip/limit, unwind, optional, apply,
//!   union, eager, procedure calls.
//! - `order`: ORDER BY: `Sort`, and `Top` (ORDER BY with LIMIT: a buffer of at most twice
//!   the rows kept, cut back by linear selection when full).
//! - `batched`: `TransactionApply`, the batches of `CALL { ... } IN TRANSACTIONS`.
//! - `load_csv`: `LoadCSV`, the rows of a CSV file.
//! - `qpp`: `Repeat(Trail)` (quantified path patterns) and `SelectPaths` (`SHORTEST k`,
//!   `ANY k`).
//! - `write`: create, merge, set, delete, foreach.

mod agg_spill;
mod aggregate;
mod aggregate_typed;
mod batched;
mod build;
mod builder;
mod cursor;
mod distinct_ends;
mod distinct_spill;
mod expand;
mod frontier;
mod fused;
mod groups;
mod id_seek;
mod load_csv;
mod order;
mod pruning;
mod pump;
mod qpp;
mod relational;
mod scan;
mod shortest;
mod sort_spill;
mod spill_codec;
mod spill_file;
mod var_count;
mod var_expand;
mod write;

pub(crate) use build::{build_subplan, unwind_taking_param};
pub(crate) use builder::{build, Builder};

use arbor_cypher_plan::expr::Slot;
use arbor_cypher_plan::ops::Name;
use arbor_model::{RelId, Value};

use crate::ctx::Row;
use crate::graph::{Graph, TokenId, TokenKind};

/// Resolves type names to tokens; `None` when none of the (non-empty) names exists.
pub(super) fn resolve_types(g: &dyn Graph, types: &[Name]) -> Option<Vec<TokenId>> {
    if types.is_empty() {
        return Some(Vec::new());
    }
    let toks: Vec<TokenId> =
        types.iter().filter_map(|t| g.token_id(TokenKind::RelType, t)).collect();
    if toks.is_empty() {
        None
    } else {
        Some(toks)
    }
}

pub(super) fn rel_used(row: &Row, slots: &[Slot], rel: RelId) -> bool {
    slots.iter().any(|s| match &row[*s] {
        Value::Relationship(r) => *r == rel,
        Value::List(items) => {
            items.iter().any(|v| matches!(v, Value::Relationship(r) if *r == rel))
        }
        _ => false,
    })
}
