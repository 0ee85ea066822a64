//! The logical plan: a tree of operators over slot-indexed rows.
//!
//! Every operator except [`Op::Argument`] and [`Op::Union`] has an input and works "per input
//! row" (Neo4j's apply style): a `NodeScan` yields, for each input row, that row extended with
//! each node. The leaf [`Op::Argument`] yields the argument row once (an all-null row at the top
//! of a query; the outer row inside sub-plans), so nested loops, OPTIONAL MATCH and subqueries
//! need no special join operators.

use std::sync::Arc;

use arbor_cypher_syntax::ast::Direction;

use crate::expr::{AggCall, PExpr, Slot};
use crate::types::CypherType;

/// Label / type / key names as written; the executor resolves them to tokens at run time
/// (tokens may be created by the query itself).
pub type Name = Arc<str>;

/// How a by-id seek reads its ids: integers (`id()`) or element id strings (`elementId()`),
/// one value (`=`) or a list (`IN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdSeek {
    pub element: bool,
    pub list: bool,
}

#[derive(Clone, Debug)]
pub enum Op {
    Argument,
    NodeScan {
        input: Box<Op>,
        slot: Slot,
        label: Option<Name>,
    },
    /// Nodes with `label` whose `key` equals `value`: uses `Graph::index_seek` when it answers,
    /// else scans the label and compares.
    NodeIndexSeek {
        input: Box<Op>,
        slot: Slot,
        label: Name,
        key: Name,
        value: PExpr,
    },
    /// Nodes with `label` whose `key` may satisfy `seek` (a superset: the predicates it came
    /// from stay in a `Filter` above). Uses `Graph::index_seek_range`/`index_seek` when they
    /// answer, else yields every node with the label. Planned only when an index exists on
    /// `(label, key)` at planning time.
    NodeIndexRangeSeek {
        input: Box<Op>,
        slot: Slot,
        label: Name,
        key: Name,
        seek: SeekRange,
    },
    /// Relationships of type `ty` whose `keys` equal `values` (a relationship index, else a
    /// scan of the type), binding `rel` and its two nodes as the pattern orients them
    /// (`start` is the pattern's left node; `Both` yields each orientation). With `range`
    /// (`Range`, `Prefix` or `In`; never `Composite`), `keys` is its single key, `values` is
    /// empty, and the seek yields a superset the predicates in a `Filter` above narrow down.
    RelIndexSeek {
        input: Box<Op>,
        rel: Slot,
        start: Slot,
        end: Slot,
        dir: Direction,
        ty: Name,
        keys: Vec<Name>,
        values: Vec<PExpr>,
        range: Option<SeekRange>,
    },
    /// Nodes by id (`id(n) = e`, `id(n) IN list`, `elementId(n) ...`): `ids` is evaluated per
    /// input row to one id (`list` false) or a list of them; each visible node it names is
    /// bound to `slot` (a superset: the predicates it came from stay in a `Filter` above).
    NodeByIdSeek {
        input: Box<Op>,
        slot: Slot,
        ids: PExpr,
        seek: IdSeek,
    },
    /// Relationships by id, binding `rel` and its two nodes as the pattern orients them
    /// (`start` is the pattern's left node; `Both` yields each orientation). Types and end
    /// labels are checked by a `Filter` above.
    RelByIdSeek {
        input: Box<Op>,
        rel: Slot,
        start: Slot,
        end: Slot,
        dir: Direction,
        ids: PExpr,
        seek: IdSeek,
    },
    /// `count(*)` of nodes (with the label, if given) from the count store, into `slot`: one
    /// row per input row (replaces an aggregation over a label scan).
    NodeCountFromCountStore {
        input: Box<Op>,
        slot: Slot,
        label: Option<Name>,
    },
    /// `count(*)` of relationships `(:start)-[:ty]->(:end)` (each part optional, at most one
    /// label) from the count store, into `slot`.
    RelationshipCountFromCountStore {
        input: Box<Op>,
        slot: Slot,
        start: Option<Name>,
        ty: Option<Name>,
        end: Option<Name>,
    },
    Expand {
        input: Box<Op>,
        from: Slot,
        rel: Slot,
        to: Slot,
        dir: Direction,
        types: Vec<Name>,
        /// `to` is already bound: only edges reaching it.
        into: bool,
        /// `rel` is already bound: only that relationship.
        rel_bound: bool,
        /// Relationship slots (single or list) of the same MATCH the new one must differ from.
        unique_with: Vec<Slot>,
    },
    VarExpand {
        input: Box<Op>,
        from: Slot,
        rel: Slot,
        to: Slot,
        dir: Direction,
        types: Vec<Name>,
        min: u64,
        max: Option<u64>,
        into: bool,
        unique_with: Vec<Slot>,
        /// Property equalities every relationship on the path must satisfy.
        rel_props: Vec<(Name, PExpr)>,
        /// The expansion runs against the pattern's direction: reverse the list it stores.
        reversed: bool,
        /// `rel` is already bound to a list of relationships: follow exactly those.
        rel_bound: bool,
        /// Nothing reads the relationship list (an anonymous relationship, no path variable,
        /// no other relationship in the clause to stay distinct from), so the expansion need
        /// not build it; `rel` is then left as it was.
        list_unused: bool,
    },
    /// The distinct end nodes of the relationship-unique paths of `min..=max` relationships
    /// from `from` (Neo4j's pruning `VarLengthExpand`): each end node once per input row, in
    /// `to`. Planned by [`crate::prune`] in place of a variable-length expansion or a chain of
    /// anonymous single-hop expansions when nothing above reads the paths, only values of the
    /// end node that a `Distinct` deduplicates, so trails need not be enumerated one by one.
    PruningVarExpand {
        input: Box<Op>,
        from: Slot,
        to: Slot,
        dir: Direction,
        types: Vec<Name>,
        min: u64,
        max: Option<u64>,
        /// Relationship slots (single or list) of the same MATCH outside the expansion: no
        /// path may use them.
        unique_with: Vec<Slot>,
    },
    /// The same answer as a directed [`Op::PruningVarExpand`] with `min >= 2` and a bound
    /// `max` (the distinct ends of the trails of `min..=max` relationships from `from`, each
    /// once per input row), computed level by level over node sets instead of trail by trail
    /// (Neo4j's `VarLengthExpand(Pruning,BFS)`). Planned by [`crate::rewrite::frontier`], whose
    /// doc gives the argument why the answers are the same.
    FrontierExpand {
        input: Box<Op>,
        from: Slot,
        to: Slot,
        dir: Direction,
        types: Vec<Name>,
        min: u64,
        max: u64,
        /// Relationship slots of the same MATCH outside the expansion: no path may use them.
        unique_with: Vec<Slot>,
    },
    /// The number of relationship-unique paths of `min..=max` relationships from the node in
    /// `from` whose end passes `pred` (evaluated with the end in `to`), into `out`: summed over
    /// the input rows, one row per argument row (the keyless aggregation it replaces), or, with
    /// `per_row`, each input row with at least one such path, with its own count (under a
    /// grouping aggregation that sums them). Planned by [`crate::rewrite::var_count`] in place
    /// of `count` over a (filtered) [`Op::VarExpand`] whose relationship list nothing reads;
    /// the paths are counted, never produced as rows.
    VarExpandCount {
        input: Box<Op>,
        from: Slot,
        to: Slot,
        dir: Direction,
        types: Vec<Name>,
        min: u64,
        max: Option<u64>,
        /// The `Filter` that sat between the expansion and the aggregation.
        pred: Option<PExpr>,
        out: Slot,
        per_row: bool,
    },
    /// Shortest path(s) between two bound nodes.
    ShortestPath {
        input: Box<Op>,
        from: Slot,
        to: Slot,
        path: Slot,
        rel: Option<Slot>,
        dir: Direction,
        types: Vec<Name>,
        min: u64,
        max: Option<u64>,
        all: bool,
    },
    /// A quantified path pattern (Neo4j's `Repeat(Trail)`): see [`Repeat`].
    Repeat(Box<Repeat>),
    /// A selective path pattern (`SHORTEST k [GROUPS]`, `ANY k`): per input row, the rows of
    /// `inner` (the pattern planned on the argument row, its own predicates included) grouped
    /// by the nodes in `start` and `end`; of each group, the `k` shortest by the length of the
    /// path in `path` (`groups`: every row whose length is among the `k` smallest lengths;
    /// `any`: any `k`, here the first found). Groups come in the order their first row came.
    SelectPaths {
        input: Box<Op>,
        inner: Box<Op>,
        start: Slot,
        end: Slot,
        path: Slot,
        k: u64,
        groups: bool,
        any: bool,
    },
    Filter {
        input: Box<Op>,
        pred: PExpr,
        /// The filter is part of a `MATCH` (a reading clause): it reads the graph even where
        /// the pattern was bound before (`MATCH (a:L)`, `a` bound), which the `Eager` rule
        /// (`rewrite::eager_after`) must know. `false` for `WITH ... WHERE` and `YIELD ... WHERE`.
        reads: bool,
    },
    Project {
        input: Box<Op>,
        items: Vec<(Slot, PExpr)>,
    },
    /// Groups by `keys` and computes `aggs`; output rows hold only those slots.
    Aggregate {
        input: Box<Op>,
        keys: Vec<(Slot, PExpr)>,
        aggs: Vec<(Slot, AggCall)>,
    },
    Distinct {
        input: Box<Op>,
        slots: Vec<Slot>,
    },
    Sort {
        input: Box<Op>,
        keys: Vec<(PExpr, bool)>,
    },
    /// ORDER BY with a LIMIT (and maybe a SKIP): the first `skip + limit` rows in key order,
    /// kept in a buffer of at most twice that many rows instead of sorting the whole input,
    /// then the first `skip` of them dropped. The input is still pulled to its end (its
    /// writes all happen, its errors all surface), as under a `Sort`.
    Top {
        input: Box<Op>,
        keys: Vec<(PExpr, bool)>,
        limit: PExpr,
        skip: Option<PExpr>,
    },
    Skip {
        input: Box<Op>,
        count: PExpr,
    },
    Limit {
        input: Box<Op>,
        count: PExpr,
        /// The input performs writes: once the limit is reached, pull (and drop) the rest of
        /// the input so every update still happens (a LIMIT only cuts the result).
        exhaust: bool,
    },
    Unwind {
        input: Box<Op>,
        expr: PExpr,
        slot: Slot,
    },
    /// Left outer apply: for each input row, the rows of `inner` (argument = input row), or the
    /// input row with `slots` set to null when there are none.
    Optional {
        input: Box<Op>,
        inner: Box<Op>,
        slots: Vec<Slot>,
    },
    /// For each input row, the rows of `inner` run with it as argument (`CALL {..}`).
    /// With `unit`, the input row passes through once after `inner` is drained.
    Apply {
        input: Box<Op>,
        inner: Box<Op>,
        unit: bool,
        /// `IN TRANSACTIONS`: the input rows run in batches, each in its own inner
        /// transaction (`Graph::batch_commit`).
        batch: Option<Box<TxBatch>>,
    },
    /// `LOAD CSV [WITH HEADERS] FROM url AS slot [FIELDTERMINATOR c]`: per input row, one row
    /// per record of the file, read as it streams. `line` and `file` hold what `linenumber()`
    /// and `file()` return.
    LoadCsv {
        input: Box<Op>,
        url: PExpr,
        slot: Slot,
        headers: bool,
        terminator: u8,
        line: Slot,
        file: Slot,
    },
    /// Rows of each branch in turn, mapped onto `out` (on top of the argument row).
    Union {
        branches: Vec<(Op, Vec<Slot>)>,
        out: Vec<Slot>,
    },
    Create {
        input: Box<Op>,
        steps: Vec<CreateStep>,
    },
    Merge {
        input: Box<Op>,
        /// Matches the pattern (argument = input row).
        matcher: Box<Op>,
        create: Vec<CreateStep>,
        /// Slots the pattern binds (reset before creating).
        on_create: Vec<SetOp>,
        on_match: Vec<SetOp>,
        /// Node/rel property maps that must not contain null (checked before creating).
        null_checks: Vec<PExpr>,
    },
    Set {
        input: Box<Op>,
        items: Vec<SetOp>,
    },
    Delete {
        input: Box<Op>,
        exprs: Vec<PExpr>,
        detach: bool,
    },
    Foreach {
        input: Box<Op>,
        slot: Slot,
        list: PExpr,
        body: Box<Op>,
    },
    ProcedureCall {
        input: Box<Op>,
        name: Name,
        args: Vec<PExpr>,
        /// Declared argument types: arguments are checked and converted (INTEGER to FLOAT)
        /// before the call.
        arg_types: Vec<CypherType>,
        /// The procedure has no outputs: each input row passes through once.
        void: bool,
        /// `(output column index, slot)`.
        yields: Vec<(usize, Slot)>,
    },
    /// Materializes all input rows before yielding any (write/read isolation between clauses).
    Eager {
        input: Box<Op>,
    },
}

/// `((x)-[r:R]->(y) WHERE p){min,max}` from the node in `from` to the node in `to`: every
/// trail of `min..=max` iterations of the inner pattern (no relationship twice, none of those
/// in `unique_with`), each iteration starting where the previous one ended.
#[derive(Clone, Debug)]
pub struct Repeat {
    pub input: Op,
    pub from: Slot,
    pub to: Slot,
    /// `to` is already bound: only trails ending there.
    pub into: bool,
    /// The inner pattern's first node (a singleton slot, set per iteration).
    pub first: Slot,
    /// The inner pattern's relationships in order, each with the node it reaches.
    pub hops: Vec<RepeatHop>,
    /// The inner predicates (labels, properties, WHEREs) over the singleton slots, checked
    /// once per iteration.
    pub pred: Option<PExpr>,
    pub min: u64,
    pub max: Option<u64>,
    /// `(singleton slot, group slot)`: the group variable is the list of the singleton's
    /// values, one per iteration.
    pub groups: Vec<(Slot, Slot)>,
    /// Every relationship of the trail in order (for the path and for uniqueness).
    pub rels: Slot,
    pub unique_with: Vec<Slot>,
}

/// One relationship of a quantified path pattern's inner pattern.
#[derive(Clone, Debug)]
pub struct RepeatHop {
    pub dir: Direction,
    pub types: Vec<Name>,
    pub rel: Slot,
    pub node: Slot,
}

/// How `CALL { ... } IN TRANSACTIONS` runs its batches.
#[derive(Clone, Debug)]
pub struct TxBatch {
    /// `OF n ROWS` (a constant or parameter; 1000 when not written).
    pub rows: PExpr,
    pub on_error: TxOnError,
    /// `REPORT STATUS AS s`: the slot of `s`.
    pub status: Option<Slot>,
    /// The slots the body returns: null in the rows of a failed batch.
    pub returned: Vec<Slot>,
}

/// `ON ERROR`: what a failed inner transaction does to the statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxOnError {
    /// The statement fails (what committed before stays committed).
    Fail,
    /// The failed batch is rolled back; its rows pass with nulls and the next batch runs.
    Continue,
    /// Like `Continue`, but no later batch runs (their rows pass with nulls).
    Break,
}

#[derive(Clone, Debug)]
pub enum CreateStep {
    Node {
        slot: Slot,
        labels: Vec<Name>,
        /// `$(expr)` labels: each a string or a list of strings, evaluated per row.
        dyn_labels: Vec<PExpr>,
        props: Option<PExpr>,
    },
    Rel {
        slot: Slot,
        from: Slot,
        to: Slot,
        rel_type: Name,
        /// `[:$(expr)]`: the type, evaluated per row (then `rel_type` is unused).
        dyn_type: Option<PExpr>,
        props: Option<PExpr>,
    },
    /// A named path built from created/bound entities.
    Path { slot: Slot, expr: PExpr },
}

#[derive(Clone, Debug)]
pub enum SetOp {
    Property {
        target: PExpr,
        key: Name,
        value: PExpr,
    },
    Replace {
        target: PExpr,
        value: PExpr,
    },
    Merge {
        target: PExpr,
        value: PExpr,
    },
    /// `n:A:$(expr)`: static labels and dynamic ones (each a string or a list of strings).
    Labels {
        target: PExpr,
        labels: Vec<Name>,
        dynamic: Vec<PExpr>,
    },
    RemoveProperty {
        target: PExpr,
        key: Name,
    },
    /// `n[key] = value`: the key is evaluated per row and must be a string.
    DynamicProperty {
        target: PExpr,
        key: PExpr,
        value: PExpr,
    },
    /// `REMOVE n[key]`.
    RemoveDynamicProperty {
        target: PExpr,
        key: PExpr,
    },
    RemoveLabels {
        target: PExpr,
        labels: Vec<Name>,
        dynamic: Vec<PExpr>,
    },
}

/// What a [`Op::NodeIndexRangeSeek`] looks up.
#[derive(Clone, Debug)]
pub enum SeekRange {
    /// Bounds `(expr, inclusive)`; at least one is present.
    Range { lo: Option<(PExpr, bool)>, hi: Option<(PExpr, bool)> },
    /// `STARTS WITH expr`.
    Prefix(PExpr),
    /// `CONTAINS expr`, answered by a TEXT index (`NodeIndexContainsScan`).
    Contains(PExpr),
    /// `ENDS WITH expr`, answered by a TEXT index (`NodeIndexEndsWithScan`).
    EndsWith(PExpr),
    /// `IN expr` (a list: one equality seek per element).
    In(PExpr),
    /// `point.distance(p, point) < distance` (`<=` with `inclusive`), answered by a POINT
    /// index: the points in the boxes around `point` (the filter above checks the distance).
    Distance { point: PExpr, distance: PExpr, inclusive: bool },
    /// `point.withinBBox(p, lo, hi)`, answered by a POINT index.
    BBox { lo: PExpr, hi: PExpr },
    /// Equality on every key of a composite index (`keys` in the index's order).
    Composite { keys: Vec<Name>, values: Vec<PExpr> },
    /// A composite index (`keys` in its order): equality on the first `values.len()` keys and
    /// `range` (`Range` or `Prefix`) on the next; every later key has some predicate in the
    /// filter above (the index holds only nodes with all its keys).
    CompositeRange { keys: Vec<Name>, values: Vec<PExpr>, range: Box<SeekRange> },
}

impl Op {
    /// The operator's name as EXPLAIN/PROFILE show it.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Argument => "Argument",
            Op::NodeScan { label: Some(_), .. } => "NodeByLabelScan",
            Op::NodeScan { label: None, .. } => "AllNodesScan",
            Op::NodeIndexSeek { .. } => "NodeIndexSeek",
            Op::NodeIndexRangeSeek { seek: SeekRange::In(_), .. } => "NodeIndexSeek",
            Op::NodeIndexRangeSeek {
                seek: SeekRange::Composite { .. } | SeekRange::CompositeRange { .. },
                ..
            } => "NodeIndexSeek",
            Op::NodeIndexRangeSeek { seek: SeekRange::Contains(_), .. } => "NodeIndexContainsScan",
            Op::NodeIndexRangeSeek { seek: SeekRange::EndsWith(_), .. } => "NodeIndexEndsWithScan",
            Op::NodeIndexRangeSeek { .. } => "NodeIndexSeekByRange",
            Op::RelIndexSeek {
                dir: Direction::Both,
                range:
                    Some(
                        SeekRange::Range { .. }
                        | SeekRange::Prefix(_)
                        | SeekRange::Distance { .. }
                        | SeekRange::BBox { .. },
                    ),
                ..
            } => "UndirectedRelationshipIndexSeekByRange",
            Op::RelIndexSeek {
                range:
                    Some(
                        SeekRange::Range { .. }
                        | SeekRange::Prefix(_)
                        | SeekRange::Distance { .. }
                        | SeekRange::BBox { .. },
                    ),
                ..
            } => "DirectedRelationshipIndexSeekByRange",
            Op::RelIndexSeek {
                dir: Direction::Both, range: Some(SeekRange::Contains(_)), ..
            } => "UndirectedRelationshipIndexContainsScan",
            Op::RelIndexSeek { range: Some(SeekRange::Contains(_)), .. } => {
                "DirectedRelationshipIndexContainsScan"
            }
            Op::RelIndexSeek {
                dir: Direction::Both, range: Some(SeekRange::EndsWith(_)), ..
            } => "UndirectedRelationshipIndexEndsWithScan",
            Op::RelIndexSeek { range: Some(SeekRange::EndsWith(_)), .. } => {
                "DirectedRelationshipIndexEndsWithScan"
            }
            Op::RelIndexSeek { dir: Direction::Both, .. } => "UndirectedRelationshipIndexSeek",
            Op::RelIndexSeek { .. } => "DirectedRelationshipIndexSeek",
            Op::NodeByIdSeek { seek, .. } if seek.element => "NodeByElementIdSeek",
            Op::NodeByIdSeek { .. } => "NodeByIdSeek",
            Op::RelByIdSeek { seek, dir: Direction::Both, .. } if seek.element => {
                "UndirectedRelationshipByElementIdSeek"
            }
            Op::RelByIdSeek { seek, .. } if seek.element => "DirectedRelationshipByElementIdSeek",
            Op::RelByIdSeek { dir: Direction::Both, .. } => "UndirectedRelationshipByIdSeek",
            Op::RelByIdSeek { .. } => "DirectedRelationshipByIdSeek",
            Op::NodeCountFromCountStore { .. } => "NodeCountFromCountStore",
            Op::RelationshipCountFromCountStore { .. } => "RelationshipCountFromCountStore",
            Op::Expand { into: true, .. } => "Expand(Into)",
            Op::Expand { .. } => "Expand(All)",
            Op::VarExpand { .. } => "VarLengthExpand(All)",
            Op::PruningVarExpand { .. } => "VarLengthExpand(Pruning)",
            Op::FrontierExpand { .. } => "VarLengthExpand(Pruning,BFS)",
            Op::VarExpandCount { .. } => "VarLengthExpand(Count)",
            Op::ShortestPath { .. } => "ShortestPath",
            Op::Repeat(_) => "Repeat(Trail)",
            Op::SelectPaths { .. } => "StatefulShortestPath(All)",
            Op::Filter { .. } => "Filter",
            Op::Project { .. } => "Projection",
            Op::Aggregate { keys, .. } if keys.is_empty() => "EagerAggregation",
            Op::Aggregate { .. } => "EagerAggregation",
            Op::Distinct { .. } => "Distinct",
            Op::Sort { .. } => "Sort",
            Op::Top { .. } => "Top",
            Op::Skip { .. } => "Skip",
            Op::Limit { .. } => "Limit",
            Op::Unwind { .. } => "Unwind",
            Op::Optional { .. } => "Apply(Optional)",
            Op::Apply { batch: Some(_), .. } => "TransactionApply",
            Op::Apply { .. } => "Apply",
            Op::Union { .. } => "Union",
            Op::Create { .. } => "Create",
            Op::Merge { .. } => "Merge",
            Op::Set { .. } => "SetProperty",
            Op::Delete { detach: true, .. } => "DetachDelete",
            Op::Delete { .. } => "Delete",
            Op::Foreach { .. } => "Foreach",
            Op::ProcedureCall { .. } => "ProcedureCall",
            Op::Eager { .. } => "Eager",
            Op::LoadCsv { .. } => "LoadCSV",
        }
    }

    /// Whether this operator or one below it writes to the graph.
    pub fn writes(&self) -> bool {
        match self {
            Op::Create { .. }
            | Op::Merge { .. }
            | Op::Set { .. }
            | Op::Delete { .. }
            | Op::Foreach { .. } => true,
            _ => self.children().into_iter().any(Op::writes),
        }
    }

    /// The operator's inputs, mutably (same order as [`Op::children`]).
    pub fn children_mut(&mut self) -> Vec<&mut Op> {
        match self {
            Op::Argument => vec![],
            Op::Union { branches, .. } => branches.iter_mut().map(|(b, _)| b).collect(),
            Op::Optional { input, inner, .. } | Op::Apply { input, inner, .. } => {
                vec![&mut **input, &mut **inner]
            }
            Op::Merge { input, matcher, .. } => vec![&mut **input, &mut **matcher],
            Op::SelectPaths { input, inner, .. } => vec![&mut **input, &mut **inner],
            Op::Repeat(r) => vec![&mut r.input],
            Op::Foreach { input, body, .. } => vec![&mut **input, &mut **body],
            Op::NodeScan { input, .. }
            | Op::NodeIndexSeek { input, .. }
            | Op::NodeIndexRangeSeek { input, .. }
            | Op::NodeCountFromCountStore { input, .. }
            | Op::RelIndexSeek { input, .. }
            | Op::NodeByIdSeek { input, .. }
            | Op::RelByIdSeek { input, .. }
            | Op::RelationshipCountFromCountStore { input, .. }
            | Op::Expand { input, .. }
            | Op::VarExpand { input, .. }
            | Op::PruningVarExpand { input, .. }
            | Op::FrontierExpand { input, .. }
            | Op::VarExpandCount { input, .. }
            | Op::ShortestPath { input, .. }
            | Op::Filter { input, .. }
            | Op::Project { input, .. }
            | Op::Aggregate { input, .. }
            | Op::Distinct { input, .. }
            | Op::Sort { input, .. }
            | Op::Top { input, .. }
            | Op::Skip { input, .. }
            | Op::Limit { input, .. }
            | Op::Unwind { input, .. }
            | Op::Create { input, .. }
            | Op::Set { input, .. }
            | Op::Delete { input, .. }
            | Op::ProcedureCall { input, .. }
            | Op::LoadCsv { input, .. }
            | Op::Eager { input } => vec![&mut **input],
        }
    }

    /// The operator's inputs (children in a plan description).
    pub fn children(&self) -> Vec<&Op> {
        match self {
            Op::Argument => vec![],
            Op::Union { branches, .. } => branches.iter().map(|(b, _)| b).collect(),
            Op::Optional { input, inner, .. } | Op::Apply { input, inner, .. } => {
                vec![input, inner]
            }
            Op::Merge { input, matcher, .. } => vec![input, matcher],
            Op::SelectPaths { input, inner, .. } => vec![input, inner],
            Op::Repeat(r) => vec![&r.input],
            Op::Foreach { input, body, .. } => vec![input, body],
            Op::NodeScan { input, .. }
            | Op::NodeIndexSeek { input, .. }
            | Op::NodeIndexRangeSeek { input, .. }
            | Op::NodeCountFromCountStore { input, .. }
            | Op::RelIndexSeek { input, .. }
            | Op::NodeByIdSeek { input, .. }
            | Op::RelByIdSeek { input, .. }
            | Op::RelationshipCountFromCountStore { input, .. }
            | Op::Expand { input, .. }
            | Op::VarExpand { input, .. }
            | Op::PruningVarExpand { input, .. }
            | Op::FrontierExpand { input, .. }
            | Op::VarExpandCount { input, .. }
            | Op::ShortestPath { input, .. }
            | Op::Filter { input, .. }
            | Op::Project { input, .. }
            | Op::Aggregate { input, .. }
            | Op::Distinct { input, .. }
            | Op::Sort { input, .. }
            | Op::Top { input, .. }
            | Op::Skip { input, .. }
            | Op::Limit { input, .. }
            | Op::Unwind { input, .. }
            | Op::Create { input, .. }
            | Op::Set { input, .. }
            | Op::Delete { input, .. }
            | Op::ProcedureCall { input, .. }
            | Op::LoadCsv { input, .. }
            | Op::Eager { input } => vec![input],
        }
    }
}
