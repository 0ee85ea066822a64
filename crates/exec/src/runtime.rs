//! The physical operators: a pull-based (Volcano) interpreter, one row at a time.
//!
//! Why row-at-a-time: it is the simplest model that supports suspending a result stream between
//! Bolt `PULL`s and interleaving writes with reads; vectorized execution can replace operators
//! one by one later behind the same [`Operator`] trait.
//!
//! Every operator is re-openable with an argument row ([`Operator::reset`]), which makes nested
//! loops, OPTIONAL MATCH and subqueries plain "apply" compositions. Operators hold no borrow of
//! the graph: scans remember the last id they produced and ask the graph for the next one.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::nodeset::NodeSet;

use arbor_cypher_plan::expr::{AggCall, PExpr, Slot, SubqueryKind};
use arbor_cypher_plan::ops::{CreateStep, Name, Op, SeekRange, SetOp};
use arbor_cypher_syntax::ast::Direction;
use arbor_model::{
    equals, group_key, Error, GroupKey, NodeId, PathRef, RelId, Result, Status, Value,
};

use crate::eval::{self, eval, CompiledPred};
use crate::functions::{self, Accumulator, AggKind};
use crate::graph::{Dir, Edge, Graph, Stats, TokenId, TokenKind, ValueRange};
use crate::procs;
use crate::traverse::DepthFirst;

pub(crate) type Row = Vec<Value>;

/// Per-execution state shared by all operators.
pub(crate) struct Ctx {
    pub params: Vec<Value>,
    pub stats: Stats,
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Operator trees of subquery expressions, keyed by the address of their plan.
    subplans: HashMap<usize, Box<dyn Operator>>,
    regexes: HashMap<String, regex::Regex>,
    /// Rows produced per operator (indexed by the operator's pre-order number), for PROFILE.
    pub rows: Vec<u64>,
    pub profile: bool,
    /// Types of relationships this statement deleted: `type(r)` still answers for them (the
    /// graph no longer shows a deleted relationship, but Neo4j keeps its type readable).
    pub deleted_rel_types: HashMap<RelId, TokenId>,
    /// The procedures the query was bound to.
    pub procs: Arc<[procs::Procedure]>,
    /// PROFILE: db hits and nanoseconds per operator, each including its inputs'.
    pub hits: Vec<u64>,
    pub time_ns: Vec<u64>,
    /// PROFILE: row estimates per operator, computed at the first pull (needs the graph).
    pub estimates: Option<Vec<f64>>,
    /// Token ids of names in the plan, by the address of the plan's `Arc<str>` (see
    /// [`Ctx::token`]).
    tokens: Vec<(usize, TokenKind, TokenId, Arc<str>)>,
    /// Rows consumed by an operator, kept for reuse (see [`Ctx::row_like`]).
    spare_rows: Vec<Row>,
    /// Set for statements that never write: the graph then cannot change during one call of
    /// `Execution::next` (another statement of the transaction may run between calls, so
    /// each call starts with `last_prop` cleared), and the last node property read may be
    /// answered again from `last_prop` (a filter and a grouping key, or several aggregates,
    /// reading the same `n.key` of one row).
    pub read_only: bool,
    pub last_prop: Option<(NodeId, TokenId, Value)>,
    /// Set while a column aggregation runs (see [`ColumnAgg`]): the property columns of the
    /// current batch, which answer reads of `n.key` on the batch's current node.
    pub(crate) scan_cols: Option<ScanCols>,
}

/// The property columns of one batch of a column aggregation's scan, and the node of the
/// batch being processed (`node`, at index `pos`).
pub(crate) struct ScanCols {
    node: NodeId,
    pos: usize,
    /// Per column, the property key (`None`: no such token, so the column is all null).
    toks: Vec<Option<TokenId>>,
    cols: Vec<Vec<Value>>,
}

impl ScanCols {
    /// The column of property `key` for the whole batch.
    #[inline]
    pub(crate) fn column(&self, key: TokenId) -> Option<&[Value]> {
        let c = self.toks.iter().position(|k| *k == Some(key))?;
        self.cols.get(c).map(|c| &c[..])
    }

    /// The value of `id.key` if `id` is the current node and a column holds `key`.
    #[inline]
    pub(crate) fn get(&self, id: NodeId, key: TokenId) -> Option<&Value> {
        if self.node != id {
            return None;
        }
        let c = self.toks.iter().position(|k| *k == Some(key))?;
        self.cols.get(c)?.get(self.pos)
    }
}

/// Spare rows kept for reuse.
const SPARE_ROWS: usize = 16;
/// Names cached per execution; queries name few tokens, so a short linear scan beats hashing.
const TOKEN_CACHE: usize = 16;

impl Ctx {
    pub fn new(params: Vec<Value>, profile: bool) -> Ctx {
        Ctx {
            params,
            stats: Stats::default(),
            interrupt: None,
            subplans: HashMap::new(),
            regexes: HashMap::new(),
            rows: Vec::new(),
            profile,
            deleted_rel_types: HashMap::new(),
            procs: Arc::from(Vec::new()),
            hits: Vec::new(),
            time_ns: Vec::new(),
            estimates: None,
            tokens: Vec::new(),
            spare_rows: Vec::new(),
            read_only: false,
            last_prop: None,
            scan_cols: None,
        }
    }

    /// A copy of `row`, in the memory of a row consumed earlier if there is one: an operator
    /// producing many rows that are consumed at once (by an aggregation) then allocates no row
    /// per result.
    #[inline]
    pub fn row_like(&mut self, row: &Row) -> Row {
        match self.spare_rows.pop() {
            Some(mut r) => {
                r.clone_from(row);
                r
            }
            None => row.clone(),
        }
    }

    /// Gives back a row that is no longer needed (see [`Ctx::row_like`]).
    #[inline]
    pub fn recycle(&mut self, row: Row) {
        if self.spare_rows.len() < SPARE_ROWS && row.capacity() > 0 {
            self.spare_rows.push(row);
        }
    }

    /// The token id of a name held by the plan, looked up in the graph once per execution
    /// instead of once per row. Only found tokens are cached: a token never changes its id or
    /// disappears, but a missing one may be created later in the statement. Entries are keyed
    /// by the address of the plan's string and keep a reference to it, so the address cannot
    /// be reused by another string while cached.
    #[inline]
    pub fn token(&mut self, g: &dyn Graph, kind: TokenKind, name: &Arc<str>) -> Option<TokenId> {
        let addr = Arc::as_ptr(name) as *const u8 as usize;
        if let Some(e) = self.tokens.iter().find(|e| e.0 == addr && e.1 == kind) {
            return Some(e.2);
        }
        let t = g.token_id(kind, name)?;
        if self.tokens.len() < TOKEN_CACHE {
            self.tokens.push((addr, kind, t, name.clone()));
        }
        Some(t)
    }

    /// [`Ctx::token`] for writes: creates the token when it does not exist yet (tokens are
    /// global and survive a rollback, so caching a created id is safe).
    pub fn token_or_create(
        &mut self,
        g: &mut dyn Graph,
        kind: TokenKind,
        name: &Arc<str>,
    ) -> Result<TokenId> {
        if let Some(t) = self.token(g, kind, name) {
            return Ok(t);
        }
        let t = g.get_or_create_token(kind, name)?;
        let addr = Arc::as_ptr(name) as *const u8 as usize;
        if self.tokens.len() < TOKEN_CACHE {
            self.tokens.push((addr, kind, t, name.clone()));
        }
        Ok(t)
    }

    pub fn check_interrupt(&self) -> Result<()> {
        if let Some(f) = &self.interrupt {
            if f.load(AtomicOrdering::Relaxed) {
                return Err(Error::new(
                    Status::TransactionTerminated,
                    "The transaction has been terminated.",
                ));
            }
        }
        Ok(())
    }

    pub fn regex(&mut self, pattern: &str) -> Result<&regex::Regex> {
        if !self.regexes.contains_key(pattern) {
            let re = regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
                Error::new(Status::ArgumentError, format!("Invalid regex '{pattern}': {e}"))
            })?;
            self.regexes.insert(pattern.to_string(), re);
        }
        self.regexes.get(pattern).ok_or_else(|| Error::internal("regex cache"))
    }

    pub fn run_subquery(
        &mut self,
        kind: SubqueryKind,
        plan: &Arc<Op>,
        row: &Row,
        g: &mut dyn Graph,
    ) -> Result<Value> {
        let key = Arc::as_ptr(plan) as usize;
        let mut op = match self.subplans.remove(&key) {
            Some(op) => op,
            None => build(
                plan,
                &mut Builder { next_id: usize::MAX / 2, read_only: false, take_unwind: None },
            ),
        };
        op.reset(row);
        let r = {
            let ctx: &mut Ctx = self;
            let mut pull = || op.next(ctx, g);
            eval::subquery_result(kind, &mut pull)
        };
        self.subplans.insert(key, op);
        r
    }
}

/// A physical operator.
pub(crate) trait Operator: Send {
    /// (Re)opens the operator with an argument row.
    fn reset(&mut self, arg: &Row);
    /// The next row, or `None` when exhausted (until the next `reset`).
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>>;
    /// Hands every remaining row, in the order `next` would produce them, to `sink`, which
    /// may read and change the row only while it is called. For a consumer of the whole input
    /// (an aggregation): an operator that builds its rows in a working row of its own
    /// (`VarLengthExpand`) passes that row instead of copying it once per result. The
    /// default pulls `next`.
    fn drain(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, sink: &mut Sink<'_>) -> Result<()> {
        while let Some(mut r) = self.next(ctx, g)? {
            sink(&mut r, ctx, g)?;
            ctx.recycle(r);
        }
        Ok(())
    }
}

/// The consumer [`Operator::drain`] feeds.
pub(crate) type Sink<'a> = dyn FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<()> + 'a;

pub(crate) struct Builder {
    pub next_id: usize,
    /// The statement never writes, so the graph cannot change while one call of
    /// `Execution::next` runs (another statement of the same transaction may run between two
    /// calls): an aggregation, which consumes its whole input in one call, may then drive a
    /// node scan itself with ids fetched in batches ([`Graph::next_nodes`]). Subquery plans
    /// are built with `false` (conservatively, they are not checked separately).
    pub read_only: bool,
    /// Address of the one `Unwind` allowed to move its parameter list out of the execution's
    /// parameters instead of copying it (see [`unwind_taking_param`]).
    pub take_unwind: Option<usize>,
}

/// Finds the `UNWIND $list` whose list may be moved out of the parameters rather than copied:
/// the parameter is read nowhere else in the plan, and the `Unwind` runs exactly once (it sits
/// on the root's input chain, where no operator resets its input, directly over the top-level
/// `Argument`, which yields one row). This is the batched-write shape
/// `UNWIND $batch AS r CREATE ...`, where copying the list would copy the whole request.
pub(crate) fn unwind_taking_param(plan: &arbor_cypher_plan::Plan) -> Option<usize> {
    let mut op = &plan.root;
    loop {
        if let Op::Unwind { input, expr: PExpr::Param(i), .. } = op {
            let once = plan.param_uses.get(*i) == Some(&1);
            return (once && matches!(**input, Op::Argument)).then_some(op as *const Op as usize);
        }
        if matches!(op, Op::Union { .. } | Op::Argument) {
            return None;
        }
        // The first child is always the operator's input stream, pulled once from start to end.
        op = op.children().into_iter().next()?;
    }
}

/// Node ids a fused scan fetches per call.
const SCAN_BATCH: usize = 256;
/// Integer grouping keys below this are looked up in a direct table (see `Groups::small_ints`).
const SMALL_INTS: usize = 4096;
/// `count(*)`'s argument for a whole batch (see [`Accumulator::update_many`]).
static STARS: [Value; SCAN_BATCH] = [const { Value::Bool(true) }; SCAN_BATCH];

/// Builds the operator tree for a plan. Operators get pre-order numbers for PROFILE.
pub(crate) fn build(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    let id = b.next_id;
    b.next_id += 1;
    let inner: Box<dyn Operator> = build_inner(op, b);
    Box::new(Counted { id, inner })
}

/// Counts rows per operator when profiling.
struct Counted {
    id: usize,
    inner: Box<dyn Operator>,
}

impl Operator for Counted {
    fn reset(&mut self, arg: &Row) {
        self.inner.reset(arg)
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if !ctx.profile {
            return self.inner.next(ctx, g);
        }
        let started = std::time::Instant::now();
        let mut counting = crate::profile::Counting { inner: g, hits: std::cell::Cell::new(0) };
        let r = self.inner.next(ctx, &mut counting);
        let hits = counting.hits.get();
        let elapsed = started.elapsed().as_nanos() as u64;
        if let Some(c) = ctx.hits.get_mut(self.id) {
            *c += hits;
        }
        if let Some(c) = ctx.time_ns.get_mut(self.id) {
            *c += elapsed;
        }
        let r = r?;
        if r.is_some() {
            if let Some(c) = ctx.rows.get_mut(self.id) {
                *c += 1;
            }
        }
        Ok(r)
    }
    fn drain(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, sink: &mut Sink<'_>) -> Result<()> {
        if !ctx.profile {
            return self.inner.drain(ctx, g, sink);
        }
        // PROFILE counts rows and time per `next` call: pulled one at a time.
        while let Some(mut r) = self.next(ctx, g)? {
            sink(&mut r, ctx, g)?;
            ctx.recycle(r);
        }
        Ok(())
    }
}

fn build_inner(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        // A filter right above a variable-length expansion runs inside it, on the expansion's
        // working row: a path the filter rejects then costs no row. The expansion keeps its
        // own PROFILE row count (its pre-order number is the next one).
        Op::Filter { input, pred } if matches!(**input, Op::VarExpand { .. }) => {
            let id = b.next_id;
            b.next_id += 1;
            Box::new(VarExpand::new(input, b, Some((pred.clone(), id))))
        }
        // Likewise for the pruning expansion: an end the filter rejects costs no row.
        Op::Filter { input, pred } if matches!(**input, Op::PruningVarExpand { .. }) => {
            let id = b.next_id;
            b.next_id += 1;
            Box::new(PruningVarExpand::new(input, b, Some((pred.clone(), id))))
        }
        Op::Argument => Box::new(Argument { row: None }),
        Op::NodeScan { input, slot, label } => Box::new(NodeScan {
            input: build(input, b),
            slot: *slot,
            label: label.clone(),
            cur: None,
            next_id: 0,
            tok: None,
        }),
        Op::NodeIndexSeek { input, slot, label, key, value } => Box::new(IndexSeek {
            input: build(input, b),
            slot: *slot,
            label: label.clone(),
            key: key.clone(),
            value: value.clone(),
            cur: None,
            ids: Vec::new(),
            pos: 0,
        }),
        Op::NodeIndexRangeSeek { input, slot, label, key, seek } => Box::new(IndexRangeSeek {
            input: build(input, b),
            slot: *slot,
            label: label.clone(),
            key: key.clone(),
            seek: seek.clone(),
            cur: None,
            ids: Vec::new(),
            pos: 0,
            scan: None,
        }),
        Op::RelIndexSeek { input, rel, start, end, dir, ty, keys, values, range } => {
            Box::new(RelIndexSeek {
                input: build(input, b),
                rel: *rel,
                start: *start,
                end: *end,
                dir: graph_dir(*dir),
                ty: ty.clone(),
                keys: keys.clone(),
                values: values.clone(),
                range: range.clone(),
                cur: None,
                found: Vec::new(),
                pos: 0,
            })
        }
        Op::NodeCountFromCountStore { input, slot, label } => Box::new(CountFromStore {
            input: build(input, b),
            slot: *slot,
            what: CountWhat::Nodes(label.clone()),
        }),
        Op::RelationshipCountFromCountStore { input, slot, start, ty, end } => {
            Box::new(CountFromStore {
                input: build(input, b),
                slot: *slot,
                what: CountWhat::Rels(start.clone(), ty.clone(), end.clone()),
            })
        }
        Op::Expand { input, from, rel, to, dir, types, into, rel_bound, unique_with } => {
            Box::new(Expand {
                input: build(input, b),
                from: *from,
                rel: *rel,
                to: *to,
                dir: graph_dir(*dir),
                types: types.clone(),
                into: *into,
                rel_bound: *rel_bound,
                unique_with: unique_with.clone(),
                cur: None,
                edges: Vec::new(),
                pos: 0,
            })
        }
        Op::VarExpand { .. } => Box::new(VarExpand::new(op, b, None)),
        Op::PruningVarExpand { .. } => Box::new(PruningVarExpand::new(op, b, None)),
        Op::ShortestPath { input, from, to, path, rel, dir, types, min, max, all } => {
            Box::new(ShortestPath {
                input: build(input, b),
                from: *from,
                to: *to,
                path: *path,
                rel: *rel,
                dir: graph_dir(*dir),
                types: types.clone(),
                min: *min,
                max: *max,
                all: *all,
                cur: None,
                results: Vec::new(),
                pos: 0,
            })
        }
        Op::Filter { input, pred } => {
            Box::new(Filter { input: build(input, b), pred: CompiledPred::new(pred.clone()) })
        }
        Op::Project { input, items } => {
            Box::new(Project { input: build(input, b), items: items.clone() })
        }
        Op::Aggregate { input, keys, aggs } => Box::new(Aggregate {
            scan: if b.read_only {
                FusedScan::of(input).map(|mut f| {
                    f.cols = ColumnAgg::of(f.slot, f.pred.as_ref(), keys, aggs);
                    f
                })
            } else {
                None
            },
            reuse: reused_args(aggs),
            input: build(input, b),
            keys: keys.clone(),
            aggs: aggs.clone(),
            arg: Vec::new(),
            out: None,
        }),
        Op::Distinct { input, slots } => Box::new(Distinct {
            input: build(input, b),
            slots: slots.clone(),
            seen: FxHashSet::default(),
            key: Vec::new(),
        }),
        Op::Sort { input, keys } => {
            Box::new(Sort { input: build(input, b), keys: keys.clone(), out: None })
        }
        Op::Skip { input, count } => Box::new(SkipLimit {
            input: build(input, b),
            count: count.clone(),
            skip: true,
            exhaust: false,
            drained: false,
            n: None,
            seen: 0,
            arg: Vec::new(),
        }),
        Op::Limit { input, count, exhaust } => Box::new(SkipLimit {
            input: build(input, b),
            count: count.clone(),
            skip: false,
            exhaust: *exhaust,
            drained: false,
            n: None,
            seen: 0,
            arg: Vec::new(),
        }),
        Op::Unwind { input, expr, slot } => Box::new(Unwind {
            take: match expr {
                PExpr::Param(i) if b.take_unwind == Some(op as *const Op as usize) => Some(*i),
                _ => None,
            },
            input: build(input, b),
            expr: expr.clone(),
            slot: *slot,
            cur: None,
            items: Vec::new().into_iter(),
        }),
        Op::Optional { input, inner, slots } => Box::new(Optional {
            input: build(input, b),
            inner: build(inner, b),
            slots: slots.clone(),
            cur: None,
            produced: false,
        }),
        Op::Apply { input, inner, unit, batch } => Box::new(Apply {
            input: build(input, b),
            inner: build(inner, b),
            unit: *unit,
            cur: None,
            batch: batch.clone(),
            batch_size: None,
            in_batch: 0,
            arg: Vec::new(),
        }),
        Op::Union { branches, out } => Box::new(Union {
            branches: branches.iter().map(|(op, slots)| (build(op, b), slots.clone())).collect(),
            out: out.clone(),
            arg: Vec::new(),
            pos: 0,
        }),
        Op::Create { input, steps } => {
            Box::new(Create { input: build(input, b), steps: steps.clone() })
        }
        Op::Merge { input, matcher, create, on_create, on_match, .. } => Box::new(Merge {
            input: build(input, b),
            matcher: build(matcher, b),
            create: create.clone(),
            on_create: on_create.clone(),
            on_match: on_match.clone(),
            pending: Vec::new(),
        }),
        Op::Set { input, items } => {
            Box::new(SetOpr { input: build(input, b), items: items.clone() })
        }
        Op::Delete { input, exprs, detach } => Box::new(Delete {
            input: build(input, b),
            exprs: exprs.clone(),
            detach: *detach,
            out: None,
        }),
        Op::Foreach { input, slot, list, body } => Box::new(Foreach {
            input: build(input, b),
            slot: *slot,
            list: list.clone(),
            body: build(body, b),
        }),
        Op::ProcedureCall { input, name, args, arg_types, void, yields } => Box::new(ProcCall {
            input: build(input, b),
            name: name.clone(),
            args: args.clone(),
            arg_types: arg_types.clone(),
            void: *void,
            yields: yields.clone(),
            cur: None,
            rows: Vec::new().into_iter(),
        }),
        Op::Eager { input } => Box::new(Eager { input: build(input, b), out: None }),
    }
}

fn graph_dir(d: Direction) -> Dir {
    match d {
        Direction::Outgoing => Dir::Outgoing,
        Direction::Incoming => Dir::Incoming,
        Direction::Both => Dir::Both,
    }
}

/// Resolves type names to tokens; `None` when none of the (non-empty) names exists.
fn resolve_types(g: &dyn Graph, types: &[Name]) -> Option<Vec<TokenId>> {
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

fn rel_used(row: &Row, slots: &[Slot], rel: RelId) -> bool {
    slots.iter().any(|s| match &row[*s] {
        Value::Relationship(r) => *r == rel,
        Value::List(items) => {
            items.iter().any(|v| matches!(v, Value::Relationship(r) if *r == rel))
        }
        _ => false,
    })
}

// ------------------------------------------------------------------------------------ leaves

struct Argument {
    row: Option<Row>,
}

impl Operator for Argument {
    fn reset(&mut self, arg: &Row) {
        self.row = Some(arg.clone());
    }
    fn next(&mut self, _: &mut Ctx, _: &mut dyn Graph) -> Result<Option<Row>> {
        Ok(self.row.take())
    }
}

struct NodeScan {
    input: Box<dyn Operator>,
    slot: Slot,
    label: Option<Name>,
    cur: Option<Row>,
    next_id: u64,
    tok: Option<TokenId>,
}

impl Operator for NodeScan {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if self.cur.is_none() {
                let Some(r) = self.input.next(ctx, g)? else { return Ok(None) };
                self.next_id = 0;
                self.tok = None;
                if let Some(l) = &self.label {
                    match g.token_id(TokenKind::Label, l) {
                        Some(t) => self.tok = Some(t),
                        None => continue,
                    }
                }
                self.cur = Some(r);
            }
            ctx.check_interrupt()?;
            match g.next_node(self.tok, NodeId(self.next_id)) {
                Some(id) => {
                    self.next_id = id.0 + 1;
                    // Reuses a row an aggregation consumed (no allocation per scanned node).
                    let mut row = match &self.cur {
                        Some(c) => ctx.row_like(c),
                        None => Row::default(),
                    };
                    row[self.slot] = Value::Node(id);
                    return Ok(Some(row));
                }
                None => self.cur = None,
            }
        }
    }
}

struct IndexSeek {
    input: Box<dyn Operator>,
    slot: Slot,
    label: Name,
    key: Name,
    value: PExpr,
    cur: Option<Row>,
    ids: Vec<NodeId>,
    pos: usize,
}

impl Operator for IndexSeek {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                if let Some(id) = self.ids.get(self.pos) {
                    self.pos += 1;
                    let mut row = cur.clone();
                    row[self.slot] = Value::Node(*id);
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            ctx.check_interrupt()?;
            self.ids.clear();
            self.pos = 0;
            let v = eval(&self.value, &mut r, ctx, g)?;
            let (Some(l), Some(k)) = (
                g.token_id(TokenKind::Label, &self.label),
                g.token_id(TokenKind::PropertyKey, &self.key),
            ) else {
                continue;
            };
            if v.is_null() {
                continue;
            }
            match g.index_seek(l, k, &v) {
                Some(ids) => self.ids = ids,
                None => {
                    // No usable index: scan the label and compare.
                    let mut from = NodeId(0);
                    while let Some(id) = g.next_node(Some(l), from) {
                        from = NodeId(id.0 + 1);
                        if let Some(p) = g.node_property(id, k) {
                            if equals(&p, &v) == Some(true) {
                                self.ids.push(id);
                            }
                        }
                    }
                }
            }
            self.cur = Some(r);
        }
    }
}

/// Candidates for range, prefix and `IN` predicates from an index (a superset of the rows the
/// filter above keeps), or every node with the label when no index answers.
struct IndexRangeSeek {
    input: Box<dyn Operator>,
    slot: Slot,
    label: Name,
    key: Name,
    seek: SeekRange,
    cur: Option<Row>,
    ids: Vec<NodeId>,
    pos: usize,
    /// Falling back to a label scan: `(label, next id)`.
    scan: Option<(TokenId, u64)>,
}

/// What one input row's seek resolved to.
enum SeekPlan {
    /// Nothing can match (a null bound, a missing token).
    Empty,
    Ids(Vec<NodeId>),
    Scan,
}

impl IndexRangeSeek {
    fn resolve(&self, r: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<SeekPlan> {
        let (Some(l), Some(k)) = (
            g.token_id(TokenKind::Label, &self.label),
            g.token_id(TokenKind::PropertyKey, &self.key),
        ) else {
            return Ok(SeekPlan::Empty);
        };
        let range = match &self.seek {
            SeekRange::Range { .. } | SeekRange::Prefix(_) => {
                match eval_value_range(&self.seek, r, ctx, g)? {
                    Some(Some(range)) => range,
                    Some(None) => return Ok(SeekPlan::Empty),
                    None => return Ok(SeekPlan::Scan),
                }
            }
            SeekRange::Composite { keys, values } => {
                let mut toks = Vec::with_capacity(keys.len());
                for k in keys {
                    match g.token_id(TokenKind::PropertyKey, k) {
                        Some(t) => toks.push(t),
                        None => return Ok(SeekPlan::Empty),
                    }
                }
                let mut vals = Vec::with_capacity(values.len());
                for e in values {
                    match eval(e, r, ctx, g)? {
                        Value::Null => return Ok(SeekPlan::Empty),
                        v => vals.push(v),
                    }
                }
                return Ok(match g.index_seek_composite(l, &toks, &vals) {
                    Some(ids) => SeekPlan::Ids(ids),
                    None => SeekPlan::Scan,
                });
            }
            SeekRange::CompositeRange { keys, values, range } => {
                let mut toks = Vec::with_capacity(keys.len());
                for k in keys {
                    match g.token_id(TokenKind::PropertyKey, k) {
                        Some(t) => toks.push(t),
                        None => return Ok(SeekPlan::Empty),
                    }
                }
                let mut vals = Vec::with_capacity(values.len());
                for e in values {
                    match eval(e, r, ctx, g)? {
                        Value::Null => return Ok(SeekPlan::Empty),
                        v => vals.push(v),
                    }
                }
                let range = match eval_value_range(range, r, ctx, g)? {
                    Some(Some(range)) => range,
                    Some(None) => return Ok(SeekPlan::Empty),
                    None => return Ok(SeekPlan::Scan),
                };
                return Ok(match g.index_seek_composite_range(l, &toks, &vals, &range) {
                    Some(ids) => SeekPlan::Ids(ids),
                    None => SeekPlan::Scan,
                });
            }
            SeekRange::In(e) => {
                return Ok(match eval(e, r, ctx, g)? {
                    Value::Null => SeekPlan::Empty,
                    Value::List(items) => {
                        let mut ids = Vec::new();
                        for v in items.iter().filter(|v| !v.is_null()) {
                            match g.index_seek(l, k, v) {
                                Some(found) => ids.extend(found),
                                None => return Ok(SeekPlan::Scan),
                            }
                        }
                        ids.sort_unstable();
                        ids.dedup();
                        SeekPlan::Ids(ids)
                    }
                    // Not a list: the filter reports the type error.
                    _ => SeekPlan::Scan,
                });
            }
        };
        Ok(match g.index_seek_range(l, k, &range) {
            Some(ids) => SeekPlan::Ids(ids),
            None => SeekPlan::Scan,
        })
    }
}

/// The value range of a `Range` or `Prefix` seek for one row: `Some(None)` when nothing can
/// match (a null bound: the comparison is null), `None` when no index can answer it (a prefix
/// that is not a string, or another kind of seek: the caller scans and the filter decides).
fn eval_value_range(
    seek: &SeekRange,
    r: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Option<Option<ValueRange>>> {
    Ok(match seek {
        SeekRange::Range { lo, hi } => {
            let mut bound = |b: &Option<(PExpr, bool)>| -> Result<Option<Option<(Value, bool)>>> {
                match b {
                    None => Ok(Some(None)),
                    Some((e, incl)) => match eval(e, r, ctx, g)? {
                        // A comparison with null is null: no row passes the filter.
                        Value::Null => Ok(None),
                        v => Ok(Some(Some((v, *incl)))),
                    },
                }
            };
            let (Some(lo), Some(hi)) = (bound(lo)?, bound(hi)?) else {
                return Ok(Some(None));
            };
            Some(Some(ValueRange::Between { lo, hi }))
        }
        SeekRange::Prefix(e) => match eval(e, r, ctx, g)? {
            Value::Null => Some(None),
            Value::String(p) => Some(Some(ValueRange::Prefix(p.to_string()))),
            _ => None,
        },
        SeekRange::In(_) | SeekRange::Composite { .. } | SeekRange::CompositeRange { .. } => None,
    })
}

impl Operator for IndexRangeSeek {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
        self.scan = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                let next = match &mut self.scan {
                    Some((tok, from)) => {
                        let n = g.next_node(Some(*tok), NodeId(*from));
                        if let Some(id) = n {
                            *from = id.0 + 1;
                        }
                        n
                    }
                    None => {
                        let n = self.ids.get(self.pos).copied();
                        self.pos += 1;
                        n
                    }
                };
                if let Some(id) = next {
                    let mut row = cur.clone();
                    row[self.slot] = Value::Node(id);
                    return Ok(Some(row));
                }
                self.cur = None;
                self.scan = None;
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            ctx.check_interrupt()?;
            self.ids.clear();
            self.pos = 0;
            self.scan = None;
            match self.resolve(&mut r, ctx, g)? {
                SeekPlan::Empty => continue,
                SeekPlan::Ids(ids) => self.ids = ids,
                SeekPlan::Scan => match g.token_id(TokenKind::Label, &self.label) {
                    Some(t) => self.scan = Some((t, 0)),
                    None => continue,
                },
            }
            self.cur = Some(r);
        }
    }
}

/// Relationships found by equality on their properties (a relationship index, else a scan
/// of the type), each bound with its nodes in the pattern's orientation.
struct RelIndexSeek {
    input: Box<dyn Operator>,
    rel: Slot,
    start: Slot,
    end: Slot,
    dir: Dir,
    ty: Name,
    keys: Vec<Name>,
    values: Vec<PExpr>,
    /// A range, prefix or `IN` seek on the single key instead of equalities (candidates: the
    /// filter above keeps the matching ones).
    range: Option<SeekRange>,
    cur: Option<Row>,
    /// `(relationship, start-slot node, end-slot node)` for the current input row.
    found: Vec<(RelId, NodeId, NodeId)>,
    pos: usize,
}

impl RelIndexSeek {
    fn resolve(&mut self, r: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()> {
        self.found.clear();
        self.pos = 0;
        let Some(ty) = g.token_id(TokenKind::RelType, &self.ty) else { return Ok(()) };
        let mut keys = Vec::with_capacity(self.keys.len());
        for k in &self.keys {
            match g.token_id(TokenKind::PropertyKey, k) {
                Some(t) => keys.push(t),
                None => return Ok(()),
            }
        }
        let mut vals = Vec::with_capacity(self.values.len());
        for e in &self.values {
            match eval(e, r, ctx, g)? {
                Value::Null => return Ok(()),
                v => vals.push(v),
            }
        }
        let seeked = match (&self.range, keys.first()) {
            (None, _) => g.rel_index_seek(ty, &keys, &vals),
            (Some(SeekRange::In(e)), Some(k)) => match eval(e, r, ctx, g)? {
                Value::Null => return Ok(()),
                Value::List(items) => {
                    let mut ids = Some(Vec::new());
                    for v in items.iter().filter(|v| !v.is_null()) {
                        match (g.rel_index_seek(ty, &[*k], std::slice::from_ref(v)), &mut ids) {
                            (Some(found), Some(ids)) => ids.extend(found),
                            _ => {
                                ids = None;
                                break;
                            }
                        }
                    }
                    ids.map(|mut ids| {
                        ids.sort_unstable();
                        ids.dedup();
                        ids
                    })
                }
                // Not a list: the filter above reports the type error.
                _ => None,
            },
            (Some(seek), Some(k)) => match eval_value_range(seek, r, ctx, g)? {
                Some(Some(range)) => g.rel_index_seek_range(ty, *k, &range),
                Some(None) => return Ok(()),
                None => None,
            },
            (Some(_), None) => None,
        };
        let rels = match seeked {
            Some(rels) => rels,
            // No index answers a range: every relationship of the type is a candidate.
            None if self.range.is_some() => {
                let mut out = Vec::new();
                let mut from = RelId(0);
                while let Some(id) = g.next_rel(&[ty], from) {
                    from = RelId(id.0 + 1);
                    ctx.check_interrupt()?;
                    out.push(id);
                }
                out
            }
            None => {
                let mut out = Vec::new();
                let mut from = RelId(0);
                while let Some(id) = g.next_rel(&[ty], from) {
                    from = RelId(id.0 + 1);
                    ctx.check_interrupt()?;
                    let all = keys.iter().zip(&vals).all(|(k, v)| {
                        g.rel_property(id, *k).is_some_and(|p| equals(&p, v) == Some(true))
                    });
                    if all {
                        out.push(id);
                    }
                }
                out
            }
        };
        for id in rels {
            let Some((s, e, _)) = g.rel_info(id) else { continue };
            let mut push = |a: NodeId, b: NodeId| {
                if self.start != self.end || a == b {
                    self.found.push((id, a, b));
                }
            };
            match self.dir {
                Dir::Outgoing => push(s, e),
                Dir::Incoming => push(e, s),
                Dir::Both => {
                    push(s, e);
                    // A self-loop matches an undirected pattern once.
                    if s != e {
                        push(e, s);
                    }
                }
            }
        }
        Ok(())
    }
}

impl Operator for RelIndexSeek {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                if let Some((r, a, b)) = self.found.get(self.pos).copied() {
                    self.pos += 1;
                    let mut row = cur.clone();
                    row[self.rel] = Value::Relationship(r);
                    row[self.start] = Value::Node(a);
                    row[self.end] = Value::Node(b);
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            ctx.check_interrupt()?;
            self.resolve(&mut r, ctx, g)?;
            self.cur = Some(r);
        }
    }
}

enum CountWhat {
    Nodes(Option<Name>),
    Rels(Option<Name>, Option<Name>, Option<Name>),
}

/// A count answered by the graph's count store, one row per input row.
struct CountFromStore {
    input: Box<dyn Operator>,
    slot: Slot,
    what: CountWhat,
}

impl CountFromStore {
    fn count(&self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<u64> {
        // A name without a token matches nothing.
        let tok = |kind: TokenKind, n: &Option<Name>| -> Option<Option<TokenId>> {
            match n {
                None => Some(None),
                Some(n) => g.token_id(kind, n).map(Some),
            }
        };
        match &self.what {
            CountWhat::Nodes(l) => Ok(tok(TokenKind::Label, l).map_or(0, |l| g.count_nodes(l))),
            CountWhat::Rels(s, t, e) => {
                let (Some(s), Some(t), Some(e)) = (
                    tok(TokenKind::Label, s),
                    tok(TokenKind::RelType, t),
                    tok(TokenKind::Label, e),
                ) else {
                    return Ok(0);
                };
                if let Some(n) = g.count_rels_by_labels(s, t, e) {
                    return Ok(n);
                }
                // No count available (e.g. this transaction wrote): count the relationships.
                let types: Vec<TokenId> = t.into_iter().collect();
                let mut n = 0;
                let mut from = RelId(0);
                while let Some(r) = g.next_rel(&types, from) {
                    from = RelId(r.0 + 1);
                    ctx.check_interrupt()?;
                    let Some((a, b, _)) = g.rel_info(r) else { continue };
                    if s.is_none_or(|l| g.node_has_label(a, l))
                        && e.is_none_or(|l| g.node_has_label(b, l))
                    {
                        n += 1;
                    }
                }
                Ok(n)
            }
        }
    }
}

impl Operator for CountFromStore {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        let n = self.count(ctx, g)?;
        r[self.slot] = Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        Ok(Some(r))
    }
}

// ------------------------------------------------------------------------------------ expand

struct Expand {
    input: Box<dyn Operator>,
    from: Slot,
    rel: Slot,
    to: Slot,
    dir: Dir,
    types: Vec<Name>,
    into: bool,
    rel_bound: bool,
    unique_with: Vec<Slot>,
    cur: Option<Row>,
    edges: Vec<Edge>,
    pos: usize,
}

impl Operator for Expand {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                while let Some(e) = self.edges.get(self.pos).copied() {
                    self.pos += 1;
                    if self.into && !matches!(cur[self.to], Value::Node(n) if n == e.other) {
                        continue;
                    }
                    if self.rel_bound
                        && !matches!(cur[self.rel], Value::Relationship(r) if r == e.rel)
                    {
                        continue;
                    }
                    if rel_used(cur, &self.unique_with, e.rel) {
                        continue;
                    }
                    let mut row = cur.clone();
                    row[self.rel] = Value::Relationship(e.rel);
                    row[self.to] = Value::Node(e.other);
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(r) = self.input.next(ctx, g)? else { return Ok(None) };
            ctx.check_interrupt()?;
            let Value::Node(from) = r[self.from] else { continue };
            let Some(types) = resolve_types(g, &self.types) else { continue };
            self.edges.clear();
            self.pos = 0;
            g.node_edges(from, self.dir, &types, &mut self.edges);
            self.cur = Some(r);
        }
    }
}

/// `VarLengthExpand(All)`: every relationship-unique path of `min..=max` relationships from
/// the node in `from`, produced lazily in depth-first pre-order over the shared path stack
/// ([`crate::traverse::DepthFirst`]). Relationship isomorphism is checked against the frames
/// of the current path (O(depth), skipped when the path's relationship mask says the
/// relationship is not on it); the relationship list is built only for a result that is
/// produced and only when something reads it (`list_unused`); results are written into the
/// input row in place and the row is cloned only when it leaves the operator through `next`
/// (after a fused filter, if any), never through `drain`, which hands the working row itself to
/// the consumer. Its buffers are reused across input rows, so expansion allocates nothing per
/// step.
struct VarExpand {
    input: Box<dyn Operator>,
    from: Slot,
    rel: Slot,
    to: Slot,
    dir: Dir,
    types: Vec<Name>,
    min: u64,
    max: Option<u64>,
    into: bool,
    unique_with: Vec<Slot>,
    rel_props: Vec<(Name, PExpr)>,
    reversed: bool,
    rel_bound: bool,
    list_unused: bool,
    /// A filter fused into the expansion, and the expansion's own PROFILE operator number.
    filter: Option<(CompiledPred, usize)>,
    /// The input row being expanded; each result is written into it.
    cur: Option<Row>,
    /// The path stack, with relationship masks (isomorphism is checked at every step).
    dfs: DepthFirst<Edge, true>,
    /// Resolved relationship types and property equalities for the current input row.
    tok_types: Vec<TokenId>,
    props: Vec<(TokenId, Value)>,
    /// The zero-length path (`min == 0`) is still to be produced for the current input row.
    zero_pending: bool,
    /// `rel_bound`: the one path the bound list describes, still to be produced.
    bound_result: Option<(Vec<RelId>, NodeId)>,
    steps: u64,
}

impl VarExpand {
    fn new(op: &Op, b: &mut Builder, filter: Option<(PExpr, usize)>) -> VarExpand {
        let Op::VarExpand {
            input,
            from,
            rel,
            to,
            dir,
            types,
            min,
            max,
            into,
            unique_with,
            rel_props,
            reversed,
            rel_bound,
            list_unused,
        } = op
        else {
            unreachable!("VarExpand::new is only called on Op::VarExpand")
        };
        VarExpand {
            input: build(input, b),
            from: *from,
            rel: *rel,
            to: *to,
            dir: graph_dir(*dir),
            types: types.clone(),
            min: *min,
            max: *max,
            into: *into,
            unique_with: unique_with.clone(),
            rel_props: rel_props.clone(),
            reversed: *reversed,
            rel_bound: *rel_bound,
            list_unused: *list_unused,
            filter: filter.map(|(p, id)| (CompiledPred::new(p), id)),
            cur: None,
            dfs: DepthFirst::default(),
            tok_types: Vec::new(),
            props: Vec::new(),
            zero_pending: false,
            bound_result: None,
            steps: 0,
        }
    }

    /// Follows a bound list of relationships from `start` (as `expand` would have found it).
    fn follow(&self, start: NodeId, list: &Value, g: &dyn Graph) -> Option<(Vec<RelId>, NodeId)> {
        let Value::List(items) = list else { return None };
        let mut rels: Vec<RelId> = items
            .iter()
            .map(|v| match v {
                Value::Relationship(r) => Some(*r),
                _ => None,
            })
            .collect::<Option<_>>()?;
        if self.reversed {
            rels.reverse();
        }
        let n = rels.len() as u64;
        if n < self.min || self.max.is_some_and(|m| n > m) {
            return None;
        }
        let types: Vec<TokenId> =
            self.types.iter().filter_map(|t| g.token_id(TokenKind::RelType, t)).collect();
        let mut cur = start;
        for r in &rels {
            let (s, e, t) = g.rel_info(*r)?;
            if !self.types.is_empty() && !types.contains(&t) {
                return None;
            }
            cur = match self.dir {
                Dir::Outgoing if s == cur => e,
                Dir::Incoming if e == cur => s,
                Dir::Both if s == cur => e,
                Dir::Both if e == cur => s,
                _ => return None,
            };
        }
        // In traversal order; `list_value` restores pattern order.
        Some((rels, cur))
    }

    /// The relationship list of a result, in pattern order.
    fn list_value(&self, rels: impl DoubleEndedIterator<Item = RelId>) -> Value {
        let mut list: Vec<Value> = rels.map(Value::Relationship).collect();
        if self.reversed {
            list.reverse();
        }
        Value::List(list)
    }

    /// Writes a result (end node, relationship list unless unused) into the working row;
    /// whether it is a result to produce (`false` if `into` or the fused filter rejects it).
    #[inline(always)]
    fn output(
        &mut self,
        end: NodeId,
        list: Option<Value>,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<bool> {
        let Some(row) = self.cur.as_mut() else { return Ok(false) };
        if self.into && !matches!(row[self.to], Value::Node(n) if n == end) {
            return Ok(false);
        }
        match &mut row[self.to] {
            // The common case: the previous result's node; no value to drop.
            Value::Node(n) => *n = end,
            slot => *slot = Value::Node(end),
        }
        if let Some(l) = list {
            row[self.rel] = l;
        }
        if let Some((pred, id)) = &mut self.filter {
            if ctx.profile {
                if let Some(c) = ctx.rows.get_mut(*id) {
                    *c += 1;
                }
            }
            if !pred.test(row, ctx, g)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Hands the working row, holding a result, to `emit`; whether `emit` says stop.
    #[inline(always)]
    fn emit<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
    {
        match self.cur.as_mut() {
            Some(row) => emit(row, ctx, g),
            None => Ok(false),
        }
    }

    /// Runs the expansion of the current input row, handing each result to `emit` until it
    /// says stop (`true`, returned) or the results are exhausted (`false`).
    #[inline(always)]
    fn advance<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
    {
        if let Some((rels, end)) = self.bound_result.take() {
            let list = (!self.list_unused).then(|| self.list_value(rels.iter().copied()));
            if self.output(end, list, ctx, g)? && self.emit(ctx, g, emit)? {
                return Ok(true);
            }
            return Ok(false);
        }
        if self.zero_pending {
            self.zero_pending = false;
            let start = match self.cur.as_ref().map(|r| &r[self.from]) {
                Some(Value::Node(n)) => *n,
                _ => return Ok(false),
            };
            let list = (!self.list_unused).then(|| Value::List(Vec::new()));
            if self.output(start, list, ctx, g)? && self.emit(ctx, g, emit)? {
                return Ok(true);
            }
        }
        let max = self.max.unwrap_or(u64::MAX);
        while let Some(e) = self.dfs.next_edge() {
            self.steps += 1;
            if self.steps.is_multiple_of(1024) {
                ctx.check_interrupt()?;
            }
            if self.dfs.path_has_rel(e.rel) {
                continue;
            }
            if !self.unique_with.is_empty()
                && self.cur.as_ref().is_some_and(|r| rel_used(r, &self.unique_with, e.rel))
            {
                continue;
            }
            if !self.props.iter().all(|(k, v)| {
                g.rel_property(e.rel, *k).is_some_and(|p| equals(&p, v) == Some(true))
            }) {
                continue;
            }
            self.dfs.push(e.other, e.rel);
            let depth = self.dfs.depth() as u64;
            if depth < max {
                let (dir, types) = (self.dir, &self.tok_types);
                let gr: &dyn Graph = g;
                // Appended straight onto the pending stack: one graph call per node.
                self.dfs.expand_top(|_, out| gr.node_edges(e.other, dir, types, out));
            }
            if depth >= self.min {
                let list = (!self.list_unused).then(|| self.list_value(self.dfs.rels()));
                if self.output(e.other, list, ctx, g)? && self.emit(ctx, g, emit)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Expands input rows one after the other, handing each result to `emit` (see
    /// [`Self::advance`]); whether `emit` said stop (`false`: the input is exhausted).
    #[inline(always)]
    fn pump<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
    {
        loop {
            if self.cur.is_some() {
                if self.advance(ctx, g, emit)? {
                    return Ok(true);
                }
                self.cur = None;
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(false) };
            ctx.check_interrupt()?;
            let Value::Node(from) = r[self.from] else { continue };
            self.dfs.clear();
            self.zero_pending = false;
            self.bound_result = None;
            if self.rel_bound {
                self.bound_result = self.follow(from, &r[self.rel], g);
                self.cur = Some(r);
                continue;
            }
            let Some(types) = resolve_types(g, &self.types) else {
                // No such type: only the zero-length path can match.
                if self.min == 0 {
                    self.zero_pending = true;
                    self.cur = Some(r);
                }
                continue;
            };
            self.tok_types = types;
            self.props.clear();
            let mut impossible = false;
            for i in 0..self.rel_props.len() {
                let v = eval(&self.rel_props[i].1, &mut r, ctx, g)?;
                match g.token_id(TokenKind::PropertyKey, &self.rel_props[i].0) {
                    Some(t) => self.props.push((t, v)),
                    None => impossible = true,
                }
            }
            if impossible {
                continue;
            }
            self.zero_pending = self.min == 0;
            if self.max != Some(0) {
                self.dfs.reset(from);
                let (dir, types) = (self.dir, &self.tok_types);
                let gr: &dyn Graph = g;
                self.dfs.expand_top(|_, out| gr.node_edges(from, dir, types, out));
            }
            self.cur = Some(r);
        }
    }
}

impl Operator for VarExpand {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
        self.dfs.clear();
        self.zero_pending = false;
        self.bound_result = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let mut out = None;
        // The row leaves the operator: a copy of the working row (which the expansion keeps).
        self.pump(ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, _: &mut dyn Graph| {
            out = Some(ctx.row_like(row));
            Ok(true)
        })?;
        Ok(out)
    }
    fn drain(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, sink: &mut Sink<'_>) -> Result<()> {
        // Each result is consumed in the working row itself: no copy per path.
        self.pump(ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph| {
            sink(row, ctx, g)?;
            Ok(false)
        })?;
        Ok(())
    }
}

/// `VarLengthExpand(Pruning)`: the distinct end nodes of the relationship-unique paths
/// (trails) of `min..=max` relationships from `from`, each once per input row (planned by the
/// planner's `prune` pass only where nothing above reads more than the end node).
///
/// Two strategies, both exact under trail semantics:
///
/// - **Breadth-first** (one direction, `min <= 1`, any `max`): a node other than the start is
///   the end of a trail of at most `max` relationships iff its distance is at most `max` (a
///   shortest walk repeats no node, so no relationship); the start is an end iff `min == 0` or
///   a relationship leads back to it from a node at distance below `max` (a closed walk
///   through the start contains a directed cycle through it, which is a trail). O(V + E).
/// - **Depth-first with last-hop pruning** (otherwise, `max` bounded): the trails of up to
///   `max - 1` relationships are enumerated, but the last hop is not. Whether relationship
///   `e` out of node `c` extends the current trail depends only on whether `e` is on it, so
///   per node the relationships not yet followed are remembered: the first visit of `c`
///   emits every end except over the (at most `max - 1`) relationships on the current trail,
///   which stay pending; a later visit only retries the pending ones. Q11-style 4-hop
///   patterns then cost the 3-hop trails plus one pass over each reached node's
///   relationships instead of one row per 4-hop trail.
///
/// Ends are collected per input row and produced from a buffer.
struct PruningVarExpand {
    input: Box<dyn Operator>,
    from: Slot,
    to: Slot,
    dir: Dir,
    types: Vec<Name>,
    min: u64,
    max: Option<u64>,
    unique_with: Vec<Slot>,
    /// A `Filter` right above, evaluated on the working row (see `build_inner`).
    filter: Option<(CompiledPred, usize)>,
    cur: Option<Row>,
    ends: Vec<NodeId>,
    pos: usize,
    emitted: NodeSet,
    /// Depth-first mode: per node whose last hop was taken, the relationships (and their
    /// ends) not followed yet because the trail visiting it used them.
    pending: FxHashMap<NodeId, Vec<Edge>>,
    dfs: DepthFirst<Edge>,
    frontier: Vec<NodeId>,
    next_frontier: Vec<NodeId>,
    visited: NodeSet,
    steps: u64,
    /// Reachability mode (one direction, `min <= 1`, no upper bound): the nodes still to
    /// expand, depth-first. Ends stream out as they are found (`ends` then holds only the
    /// newly reached neighbours of one node), so memory is the visited set plus this stack,
    /// not a level of the graph. `None` in the other modes.
    stack: Option<Vec<NodeId>>,
    /// The relationship types of the current input row, resolved.
    types_buf: Vec<TokenId>,
    /// Reachability mode: the relationships of the node being expanded (reused; bounded by
    /// the largest degree).
    edge_buf: Vec<Edge>,
}

impl PruningVarExpand {
    fn new(op: &Op, b: &mut Builder, filter: Option<(PExpr, usize)>) -> PruningVarExpand {
        let Op::PruningVarExpand { input, from, to, dir, types, min, max, unique_with } = op else {
            unreachable!("PruningVarExpand::new on another operator")
        };
        PruningVarExpand {
            input: build(input, b),
            from: *from,
            to: *to,
            dir: graph_dir(*dir),
            types: types.clone(),
            min: *min,
            max: *max,
            unique_with: unique_with.clone(),
            filter: filter.map(|(p, id)| (CompiledPred::new(p), id)),
            cur: None,
            ends: Vec::new(),
            pos: 0,
            emitted: NodeSet::default(),
            pending: FxHashMap::default(),
            dfs: DepthFirst::default(),
            frontier: Vec::new(),
            next_frontier: Vec::new(),
            visited: NodeSet::default(),
            steps: 0,
            stack: None,
            types_buf: Vec::new(),
            edge_buf: Vec::new(),
        }
    }

    /// Reachability mode applies: ends are exactly the nodes reachable in one or more hops
    /// (every reachable node has a simple path to it, which is a trail), plus the start if a
    /// cycle leads back to it, so a depth-first search over nodes finds them, in any order.
    fn streams(&self) -> bool {
        self.dir != Dir::Both && self.min <= 1 && self.max.is_none()
    }

    /// Reachability mode: expands the next node of the stack into `ends`; false when done.
    fn stream_step(&mut self, ctx: &mut Ctx, g: &dyn Graph) -> Result<bool> {
        let (Some(cur), Some(stack)) = (&self.cur, &mut self.stack) else { return Ok(false) };
        let Value::Node(s) = cur[self.from] else { return Ok(false) };
        let Some(u) = stack.pop() else { return Ok(false) };
        self.steps += 1;
        if self.steps.is_multiple_of(1024) {
            ctx.check_interrupt()?;
        }
        self.ends.clear();
        self.pos = 0;
        // The node's relationships in one `node_edges` call (the graph's bulk path) into a
        // reused buffer, instead of one call of a callback per relationship.
        self.edge_buf.clear();
        g.node_edges(u, self.dir, &self.types_buf, &mut self.edge_buf);
        let (visited, emitted, ends, outer) =
            (&mut self.visited, &mut self.emitted, &mut self.ends, &self.unique_with);
        for e in &self.edge_buf {
            if !outer.is_empty() && rel_used(cur, outer, e.rel) {
                continue;
            }
            if e.other == s {
                // A cycle back to the start.
                Self::emit(emitted, ends, s);
            } else if visited.insert(e.other.0) {
                ends.push(e.other);
                stack.push(e.other);
            }
        }
        Ok(true)
    }

    fn emit(emitted: &mut NodeSet, ends: &mut Vec<NodeId>, n: NodeId) {
        if emitted.insert(n.0) {
            ends.push(n);
        }
    }

    /// Fills `ends` for the start node `s` of input row `row`.
    fn compute(
        &mut self,
        s: NodeId,
        row: &Row,
        types: &[TokenId],
        ctx: &mut Ctx,
        g: &dyn Graph,
    ) -> Result<()> {
        self.ends.clear();
        self.pos = 0;
        self.emitted.clear();
        if self.min == 0 {
            Self::emit(&mut self.emitted, &mut self.ends, s);
        }
        if self.max == Some(0) {
            return Ok(());
        }
        // Usually empty (no allocation): a copy frees `self` for the helpers below.
        let outer = self.unique_with.clone();
        let excluded = |r: RelId| !outer.is_empty() && rel_used(row, &outer, r);
        if self.dir != Dir::Both && self.min <= 1 {
            // Breadth-first: level by level up to `max`.
            self.visited.clear();
            self.visited.insert(s.0);
            self.frontier.clear();
            self.frontier.push(s);
            let mut depth = 0u64;
            while !self.frontier.is_empty() && self.max.is_none_or(|m| depth < m) {
                depth += 1;
                self.next_frontier.clear();
                for i in 0..self.frontier.len() {
                    self.steps += 1;
                    if self.steps.is_multiple_of(1024) {
                        ctx.check_interrupt()?;
                    }
                    let u = self.frontier[i];
                    let (visited, next, emitted, ends) = (
                        &mut self.visited,
                        &mut self.next_frontier,
                        &mut self.emitted,
                        &mut self.ends,
                    );
                    g.for_each_edge(u, self.dir, types, &mut |e: Edge| {
                        if excluded(e.rel) {
                            return;
                        }
                        if e.other == s {
                            // A cycle back to the start of at most `depth` relationships.
                            Self::emit(emitted, ends, s);
                        } else if visited.insert(e.other.0) {
                            // First visit: not emitted before (only the start, which is
                            // visited from the outset, goes through `emitted`).
                            ends.push(e.other);
                            next.push(e.other);
                        }
                    });
                }
                std::mem::swap(&mut self.frontier, &mut self.next_frontier);
            }
            return Ok(());
        }
        let Some(max) = self.max else {
            return Err(Error::internal("pruning expansion without a bound in depth-first mode"));
        };
        self.pending.clear();
        self.dfs.reset(s);
        let min = self.min;
        // Whether a node at depth `d` takes last hops / is expanded further.
        let last_hop = |d: u64| d < max && d + 1 >= min;
        if last_hop(0) {
            self.take_last_hop(s, types, &excluded, g);
        }
        if max > 1 {
            let (dir, dfs) = (self.dir, &mut self.dfs);
            dfs.expand_top(|_, out| g.node_edges(s, dir, types, out));
        }
        while let Some(e) = self.dfs.next_edge() {
            self.steps += 1;
            if self.steps.is_multiple_of(1024) {
                ctx.check_interrupt()?;
            }
            if self.dfs.path_has_rel(e.rel) || excluded(e.rel) {
                continue;
            }
            self.dfs.push(e.other, e.rel);
            let d = self.dfs.depth() as u64;
            if last_hop(d) {
                self.take_last_hop(e.other, types, &excluded, g);
            }
            if d + 1 < max {
                let (dir, dfs) = (self.dir, &mut self.dfs);
                dfs.expand_top(|_, out| g.node_edges(e.other, dir, types, out));
            }
        }
        Ok(())
    }

    /// Emits the ends of the current trail extended by one relationship out of `c` (the
    /// trail's end), skipping what an earlier visit of `c` already emitted.
    fn take_last_hop(
        &mut self,
        c: NodeId,
        types: &[TokenId],
        excluded: &dyn Fn(RelId) -> bool,
        g: &dyn Graph,
    ) {
        let (dfs, emitted, ends) = (&self.dfs, &mut self.emitted, &mut self.ends);
        match self.pending.get_mut(&c) {
            Some(left) => left.retain(|e| {
                if dfs.path_has_rel(e.rel) {
                    true
                } else {
                    Self::emit(emitted, ends, e.other);
                    false
                }
            }),
            None => {
                let mut left = Vec::new();
                g.for_each_edge(c, self.dir, types, &mut |e: Edge| {
                    if excluded(e.rel) {
                        // Outside the path's control: never usable.
                    } else if dfs.path_has_rel(e.rel) {
                        left.push(e);
                    } else {
                        Self::emit(emitted, ends, e.other);
                    }
                });
                self.pending.insert(c, left);
            }
        }
    }
}

impl Operator for PruningVarExpand {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
        self.ends.clear();
        self.pos = 0;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let mut out = None;
        // The row leaves the operator: a copy of the working row (which the expansion keeps).
        self.pump(ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, _: &mut dyn Graph| {
            out = Some(ctx.row_like(row));
            Ok(true)
        })?;
        Ok(out)
    }
    fn drain(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, sink: &mut Sink<'_>) -> Result<()> {
        // Each end is consumed in the working row itself: no copy per result.
        self.pump(ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph| {
            sink(row, ctx, g)?;
            Ok(false)
        })?;
        Ok(())
    }
}

impl PruningVarExpand {
    /// Produces the ends of input row after input row, handing the working row, holding an
    /// end that passed the fused filter, to `emit` until it says stop (`true`, returned) or
    /// the input is exhausted (`false`). As `VarExpand::pump`.
    #[inline(always)]
    fn pump<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
    {
        loop {
            if let Some(cur) = &mut self.cur {
                while let Some(&end) = self.ends.get(self.pos) {
                    self.pos += 1;
                    match &mut cur[self.to] {
                        Value::Node(n) => *n = end,
                        slot => *slot = Value::Node(end),
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
                if self.stream_step(ctx, &*g)? {
                    continue;
                }
                if let Some(r) = self.cur.take() {
                    ctx.recycle(r);
                }
            }
            let Some(r) = self.input.next(ctx, g)? else { return Ok(false) };
            ctx.check_interrupt()?;
            let Value::Node(from) = r[self.from] else { continue };
            let types = resolve_types(g, &self.types);
            if let (Some(types), true) = (&types, self.streams()) {
                self.types_buf.clear();
                self.types_buf.extend_from_slice(types);
                self.ends.clear();
                self.pos = 0;
                self.emitted.clear();
                if self.min == 0 {
                    Self::emit(&mut self.emitted, &mut self.ends, from);
                }
                self.visited.clear();
                self.visited.insert(from.0);
                let stack = self.stack.get_or_insert_with(Vec::new);
                stack.clear();
                stack.push(from);
                self.cur = Some(r);
                continue;
            }
            if let Some(stack) = &mut self.stack {
                stack.clear();
            }
            match types {
                Some(types) => self.compute(from, &r, &types, ctx, g)?,
                None => {
                    // No such type: only the zero-length path can match.
                    self.ends.clear();
                    self.pos = 0;
                    if self.min == 0 {
                        self.ends.push(from);
                    }
                }
            }
            self.cur = Some(r);
        }
    }
}

struct ShortestPath {
    input: Box<dyn Operator>,
    from: Slot,
    to: Slot,
    path: Slot,
    rel: Option<Slot>,
    dir: Dir,
    types: Vec<Name>,
    min: u64,
    max: Option<u64>,
    all: bool,
    cur: Option<Row>,
    results: Vec<PathRef>,
    pos: usize,
}

impl ShortestPath {
    fn search(&mut self, a: NodeId, b: NodeId, types: &[TokenId], g: &dyn Graph) {
        let max = self.max.unwrap_or(u64::MAX);
        // Breadth-first by levels; every predecessor edge at the first level a node is reached
        // is kept, so all shortest paths can be rebuilt.
        let mut preds: HashMap<NodeId, Vec<(NodeId, RelId)>> = HashMap::new();
        let mut level: HashMap<NodeId, u64> = HashMap::new();
        level.insert(a, 0);
        let mut frontier = vec![a];
        let mut depth = 0u64;
        let mut found = a == b && self.min == 0;
        if found {
            self.results.push(PathRef { nodes: vec![a], rels: vec![] });
            return;
        }
        let mut edges = Vec::new();
        while !frontier.is_empty() && depth < max && !found {
            depth += 1;
            let mut next = Vec::new();
            for &n in &frontier {
                edges.clear();
                g.node_edges(n, self.dir, types, &mut edges);
                for e in &edges {
                    match level.get(&e.other) {
                        Some(&l) if l == depth => {
                            preds.entry(e.other).or_default().push((n, e.rel));
                        }
                        Some(_) => {}
                        None => {
                            level.insert(e.other, depth);
                            preds.entry(e.other).or_default().push((n, e.rel));
                            next.push(e.other);
                        }
                    }
                }
            }
            if level.get(&b) == Some(&depth) && depth >= self.min {
                found = true;
            }
            frontier = next;
        }
        if !found {
            return;
        }
        // Rebuild paths backwards from b.
        let mut partial: Vec<(Vec<NodeId>, Vec<RelId>)> = vec![(vec![b], vec![])];
        let mut done = Vec::new();
        while let Some((nodes, rels)) = partial.pop() {
            let head = nodes[nodes.len() - 1];
            if head == a {
                let mut n = nodes.clone();
                n.reverse();
                let mut r = rels.clone();
                r.reverse();
                done.push(PathRef { nodes: n, rels: r });
                if !self.all {
                    break;
                }
                continue;
            }
            for (p, r) in preds.get(&head).map(|v| v.as_slice()).unwrap_or(&[]) {
                let mut n2 = nodes.clone();
                n2.push(*p);
                let mut r2 = rels.clone();
                r2.push(*r);
                partial.push((n2, r2));
                if !self.all {
                    break;
                }
            }
        }
        self.results = done;
    }
}

impl Operator for ShortestPath {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                if let Some(p) = self.results.get(self.pos) {
                    self.pos += 1;
                    let mut row = cur.clone();
                    if let Some(rs) = self.rel {
                        row[rs] =
                            Value::List(p.rels.iter().map(|r| Value::Relationship(*r)).collect());
                    }
                    row[self.path] = Value::Path(Arc::new(p.clone()));
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(r) = self.input.next(ctx, g)? else { return Ok(None) };
            ctx.check_interrupt()?;
            let (Value::Node(a), Value::Node(b)) = (&r[self.from], &r[self.to]) else { continue };
            let (a, b) = (*a, *b);
            self.results.clear();
            self.pos = 0;
            let Some(types) = resolve_types(g, &self.types) else { continue };
            self.search(a, b, &types, g);
            self.cur = Some(r);
        }
    }
}

// ------------------------------------------------------------------------------------ rows

struct Filter {
    input: Box<dyn Operator>,
    pred: CompiledPred,
}

impl Operator for Filter {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        while let Some(mut r) = self.input.next(ctx, g)? {
            if self.pred.test(&mut r, ctx, g)? {
                return Ok(Some(r));
            }
            ctx.recycle(r);
        }
        Ok(None)
    }
}

struct Project {
    input: Box<dyn Operator>,
    items: Vec<(Slot, PExpr)>,
}

impl Operator for Project {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        if self.items.len() == 1 {
            let v = eval(&self.items[0].1, &mut r, ctx, g)?;
            r[self.items[0].0] = v;
            return Ok(Some(r));
        }
        // All items see the input row, not each other's results.
        let mut vals = Vec::with_capacity(self.items.len());
        for (_, e) in &self.items {
            vals.push(eval(e, &mut r, ctx, g)?);
        }
        for ((s, _), v) in self.items.iter().zip(vals) {
            r[*s] = v;
        }
        Ok(Some(r))
    }
}

struct Aggregate {
    input: Box<dyn Operator>,
    /// Set when the input is a node scan (with an optional filter) of the argument row in a
    /// read-only statement: the aggregation then drives the scan itself (see [`FusedScan`]).
    scan: Option<FusedScan>,
    /// Per aggregate: the earlier aggregate whose (single) argument is the same property read
    /// (`min(n.x), max(n.x)`), evaluated once per row and shared.
    reuse: Vec<Option<usize>>,
    keys: Vec<(Slot, PExpr)>,
    aggs: Vec<(Slot, AggCall)>,
    arg: Row,
    out: Option<std::vec::IntoIter<Row>>,
}

/// A node scan, optionally filtered, feeding an aggregation directly: ids are fetched in
/// batches and each node is written into one working row that is filtered and aggregated in
/// place, so no row is copied, produced or recycled per node and no operator is called per
/// node. Equivalent to `Aggregate(Filter(NodeScan(Argument)))` pulled row by row, which still
/// runs under PROFILE (it counts rows per operator).
struct FusedScan {
    slot: Slot,
    label: Option<Name>,
    pred: Option<PExpr>,
    /// Set when the grouping key and every aggregate argument are columns of the scan (see
    /// [`ColumnAgg`]).
    cols: Option<ColumnAgg>,
}

/// Where a column aggregation takes one aggregate's argument from.
#[derive(Clone, Copy)]
enum ColArg {
    /// The scanned node itself (`collect(n)`).
    Node,
    /// `count(*)`, or `count(n)` of the scanned node (never null).
    Star,
    /// A property of the scanned node: index into [`ColumnAgg::keys`].
    Prop(usize),
}

/// A fused scan's aggregation when its grouping key (at most one) and each aggregate's single
/// argument are properties of the scanned node (or the node itself, or `count(*)`): per batch
/// of ids each property is read for the whole batch at once ([`Graph::node_property_batch`],
/// a column lookup per node in the engine for base rows), and rows are grouped and aggregated
/// straight from those columns, with no expression evaluated per node and integer keys looked
/// up without hashing a generic key. The filter's leading `n.key <op> integer` conjuncts are
/// decided for the whole batch from the columns; the rest of it runs per node where needed,
/// its reads of the scanned node's properties answered from the same columns
/// (`Ctx::scan_cols`), which also hold the properties only the filter reads.
struct ColumnAgg {
    /// The property keys read, one column each.
    keys: Vec<Name>,
    /// The column of the grouping key, if there is one.
    group: Option<usize>,
    args: Vec<ColArg>,
}

impl ColumnAgg {
    fn of(
        slot: Slot,
        pred: Option<&PExpr>,
        keys: &[(Slot, PExpr)],
        aggs: &[(Slot, AggCall)],
    ) -> Option<ColumnAgg> {
        let mut cols: Vec<Name> = Vec::new();
        let mut col = |k: &Name| match cols.iter().position(|c| c == k) {
            Some(i) => i,
            None => {
                cols.push(k.clone());
                cols.len() - 1
            }
        };
        fn prop(e: &PExpr, slot: Slot) -> Option<&Name> {
            match e {
                PExpr::Property(b, k) if matches!(**b, PExpr::Slot(s) if s == slot) => Some(k),
                _ => None,
            }
        }
        let group = match keys {
            [] => None,
            [(_, e)] => Some(col(prop(e, slot)?)),
            _ => return None,
        };
        let mut args = Vec::with_capacity(aggs.len());
        for (_, call) in aggs {
            let kind = functions::lookup_aggregate(&call.name)?;
            args.push(match call.args.as_slice() {
                _ if call.count_star => ColArg::Star,
                // The scanned node is never null: counting it counts rows.
                [PExpr::Slot(s)] if *s == slot && kind == AggKind::Count && !call.distinct => {
                    ColArg::Star
                }
                [PExpr::Slot(s)] if *s == slot => ColArg::Node,
                [e] => ColArg::Prop(col(prop(e, slot)?)),
                _ => return None,
            });
        }
        if let Some(p) = pred {
            filter_props(p, slot, &mut col);
        }
        Some(ColumnAgg { keys: cols, group, args })
    }
}

/// Adds to the columns the properties of `slot` that `e` reads through the operators a filter
/// is usually made of (others are read from the graph as usual).
fn filter_props(e: &PExpr, slot: Slot, col: &mut dyn FnMut(&Name) -> usize) {
    match e {
        PExpr::Property(b, k) if matches!(**b, PExpr::Slot(s) if s == slot) => {
            col(k);
        }
        PExpr::Not(a) | PExpr::IsNull(a, _) | PExpr::Neg(a) => filter_props(a, slot, col),
        PExpr::And(a, b)
        | PExpr::Or(a, b)
        | PExpr::Xor(a, b)
        | PExpr::Arith(_, a, b)
        | PExpr::In(a, b)
        | PExpr::Str(_, a, b) => {
            filter_props(a, slot, col);
            filter_props(b, slot, col);
        }
        PExpr::Compare(a, rest) => {
            filter_props(a, slot, col);
            rest.iter().for_each(|(_, e)| filter_props(e, slot, col));
        }
        _ => {}
    }
}

impl FusedScan {
    fn of(input: &Op) -> Option<FusedScan> {
        let (scan, pred) = match input {
            Op::Filter { input, pred } => (&**input, Some(pred.clone())),
            other => (other, None),
        };
        match scan {
            Op::NodeScan { input, slot, label } if matches!(**input, Op::Argument) => {
                Some(FusedScan { slot: *slot, label: label.clone(), pred, cols: None })
            }
            _ => None,
        }
    }
}

/// For each aggregate, the first earlier one whose single argument is the same property read of
/// the same slot. Only property reads are shared: they give the same value twice within a row,
/// which a general expression (`rand()`) need not.
fn reused_args(aggs: &[(Slot, AggCall)]) -> Vec<Option<usize>> {
    let prop = |c: &AggCall| match c.args.as_slice() {
        [PExpr::Property(b, k)] if !c.count_star => match **b {
            PExpr::Slot(s) => Some((s, k.clone())),
            _ => None,
        },
        _ => None,
    };
    let props: Vec<_> = aggs.iter().map(|(_, c)| prop(c)).collect();
    props
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let p = p.as_ref()?;
            props[..i].iter().position(|q| q.as_ref() == Some(p))
        })
        .collect()
}

/// One group: its key values and one accumulator per aggregate.
type Group = (Vec<Value>, Vec<Box<dyn Accumulator>>);

fn new_acc(call: &AggCall) -> Result<Box<dyn Accumulator>> {
    let kind = functions::lookup_aggregate(&call.name)
        .ok_or_else(|| Error::internal(format!("unknown aggregate {}", call.name)))?;
    Ok(functions::new_accumulator(kind, call.distinct))
}

fn new_accs(aggs: &[(Slot, AggCall)]) -> Result<Vec<Box<dyn Accumulator>>> {
    let mut accs = Vec::with_capacity(aggs.len());
    for (_, call) in aggs {
        accs.push(new_acc(call)?);
    }
    Ok(accs)
}

/// The groups of one aggregation run. Buffers are reused across rows: a key is only allocated
/// when it starts a new group, and one grouping key (the common case) is hashed on its own,
/// not as a one-element vector.
#[derive(Default)]
struct Groups {
    index: FxHashMap<Vec<GroupKey>, usize>,
    index1: FxHashMap<GroupKey, usize>,
    /// With one grouping key, the groups of integer key values seen so far: a lookup by the
    /// integer, no `GroupKey` built or hashed. Filled from `index1`, which stays the
    /// authority (so `1` and `1.0` still share a group); small ones are in `small_ints`.
    int_index: FxHashMap<i64, usize>,
    /// The same for integers in `0..SMALL_INTS` (ages, years, counts): `group + 1` by value,
    /// 0 for none yet; grown to the largest such key seen.
    small_ints: Vec<u32>,
    /// Per batch of a column aggregation: `(row, group)` of the rows that passed the filter.
    sel: Vec<(u32, u32)>,
    /// Per batch of a column aggregation: rows per group.
    counts: Vec<u32>,
    /// Per batch of a filtered column aggregation: the rows the filter's integer
    /// comparisons decide (see `CompiledPred::decide_batch`).
    decided: Vec<Option<bool>>,
    groups: Vec<Group>,
    args: Vec<Value>,
    /// Each aggregate's argument in the current row, kept where a later one reuses it.
    shared: Vec<Value>,
    kv: Vec<Value>,
    gk: Vec<GroupKey>,
}

impl Groups {
    /// The group of one grouping key value, created if new (with a copy of `v` as its key).
    #[inline]
    fn group_of(&mut self, v: &Value, aggs: &[(Slot, AggCall)]) -> Result<usize> {
        if let Value::Int(i) = v {
            let small = usize::try_from(*i).ok().and_then(|x| self.small_ints.get(x));
            if let Some(&gi) = small.filter(|g| **g != 0) {
                return Ok(gi as usize - 1);
            }
            if let Some(gi) = self.int_index.get(i) {
                return Ok(*gi);
            }
        }
        let k = group_key(v);
        let gi = match self.index1.get(&k) {
            Some(i) => *i,
            None => {
                self.groups.push((vec![v.clone()], new_accs(aggs)?));
                self.index1.insert(k, self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        if let Value::Int(i) = v {
            match (usize::try_from(*i), u32::try_from(gi + 1)) {
                (Ok(x), Ok(code)) if x < SMALL_INTS => {
                    if self.small_ints.len() <= x {
                        self.small_ints.resize(x + 1, 0);
                    }
                    self.small_ints[x] = code;
                }
                _ => {
                    self.int_index.insert(*i, gi);
                }
            }
        }
        Ok(gi)
    }

    fn add(
        &mut self,
        keys: &[(Slot, PExpr)],
        aggs: &[(Slot, AggCall)],
        reuse: &[Option<usize>],
        r: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let gi = match keys {
            [] => {
                // Global aggregation: one group, no hashing.
                if self.groups.is_empty() {
                    self.groups.push((Vec::new(), new_accs(aggs)?));
                }
                0
            }
            [(_, e)] => {
                let v = eval(e, r, ctx, g)?;
                self.group_of(&v, aggs)?
            }
            _ => {
                self.kv.clear();
                for (_, e) in keys {
                    let v = eval(e, r, ctx, g)?;
                    self.kv.push(v);
                }
                self.gk.clear();
                self.gk.extend(self.kv.iter().map(group_key));
                match self.index.get(&self.gk) {
                    Some(i) => *i,
                    None => {
                        self.groups.push((std::mem::take(&mut self.kv), new_accs(aggs)?));
                        self.index.insert(std::mem::take(&mut self.gk), self.groups.len() - 1);
                        self.groups.len() - 1
                    }
                }
            }
        };
        for (ai, (_, call)) in aggs.iter().enumerate() {
            // One variable as the argument (`count(b)`, `collect(DISTINCT n)`), not shared with
            // a later aggregate: the accumulator reads it in the row, no copy made and dropped.
            if let ([PExpr::Slot(s)], false, false) =
                (call.args.as_slice(), call.count_star, matches!(reuse.get(ai), Some(Some(_))))
            {
                if let Some(v) = r.get(*s) {
                    if !reuse.iter().any(|j| *j == Some(ai)) {
                        self.groups[gi].1[ai].update(std::slice::from_ref(v))?;
                        continue;
                    }
                }
            }
            self.args.clear();
            if call.count_star {
                self.args.push(Value::Bool(true));
            } else if let Some(Some(j)) = reuse.get(ai) {
                let v = self.shared.get(*j).cloned().unwrap_or(Value::Null);
                self.args.push(v);
            } else {
                for a in &call.args {
                    let v = match a {
                        // A variable (`count(b)`): read in place, without a call of `eval`.
                        PExpr::Slot(s) => r.get(*s).cloned().unwrap_or(Value::Null),
                        a => eval(a, r, ctx, g)?,
                    };
                    self.args.push(v);
                }
            }
            if reuse.iter().any(|j| *j == Some(ai)) {
                if self.shared.len() < aggs.len() {
                    self.shared.resize(aggs.len(), Value::Null);
                }
                self.shared[ai] = self.args.first().cloned().unwrap_or(Value::Null);
            }
            self.groups[gi].1[ai].update(&self.args)?;
        }
        Ok(())
    }
}

impl Aggregate {
    /// Runs the fused scan into `groups` (see [`FusedScan`]).
    fn scan_into(
        &self,
        scan: &FusedScan,
        groups: &mut Groups,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let tok = match &scan.label {
            None => None,
            Some(l) => match g.token_id(TokenKind::Label, l) {
                Some(t) => Some(t),
                // No such label: the scan is empty.
                None => return Ok(()),
            },
        };
        let mut pred = scan.pred.clone().map(CompiledPred::new);
        let mut row = self.arg.clone();
        let mut ids = Vec::with_capacity(SCAN_BATCH);
        if let Some(cols) = &scan.cols {
            let toks = cols.keys.iter().map(|k| g.token_id(TokenKind::PropertyKey, k)).collect();
            // A column aggregation may run inside another one's filter (a subquery): the
            // outer one's columns are put back afterwards.
            let outer = ctx.scan_cols.take();
            ctx.scan_cols = Some(ScanCols {
                node: NodeId(u64::MAX),
                pos: 0,
                toks,
                cols: vec![Vec::with_capacity(SCAN_BATCH); cols.keys.len()],
            });
            let r = self.scan_columns(scan, cols, tok, pred.as_mut(), &mut row, groups, ctx, g);
            ctx.scan_cols = outer;
            return r;
        }
        let mut from = NodeId(0);
        loop {
            ctx.check_interrupt()?;
            ids.clear();
            g.next_nodes(tok, from, SCAN_BATCH, &mut ids);
            for id in &ids {
                row[scan.slot] = Value::Node(*id);
                if let Some(p) = &mut pred {
                    if !p.test(&mut row, ctx, g)? {
                        continue;
                    }
                }
                groups.add(&self.keys, &self.aggs, &self.reuse, &mut row, ctx, g)?;
            }
            match ids.last() {
                Some(last) if ids.len() == SCAN_BATCH => from = NodeId(last.0 + 1),
                _ => return Ok(()),
            }
        }
    }
}

impl Aggregate {
    /// The fused scan as a column aggregation (see [`ColumnAgg`]); `ctx.scan_cols` is set up
    /// by the caller.
    #[allow(clippy::too_many_arguments)]
    fn scan_columns(
        &self,
        scan: &FusedScan,
        cols: &ColumnAgg,
        label: Option<TokenId>,
        mut pred: Option<&mut CompiledPred>,
        row: &mut Row,
        groups: &mut Groups,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let mut ids = Vec::with_capacity(SCAN_BATCH);
        let mut from = NodeId(0);
        loop {
            ctx.check_interrupt()?;
            ids.clear();
            g.next_nodes(label, from, SCAN_BATCH, &mut ids);
            if let Some(sc) = &mut ctx.scan_cols {
                for (c, tok) in sc.cols.iter_mut().zip(&sc.toks) {
                    // Scalars own nothing: forgetting them skips a call of the drop glue per
                    // value that `clear` would make (others are dropped as usual).
                    for v in c.drain(..) {
                        if matches!(
                            v,
                            Value::Int(_) | Value::Null | Value::Bool(_) | Value::Float(_)
                        ) {
                            std::mem::forget(v);
                        }
                    }
                    match tok {
                        Some(t) => g.node_property_batch(&ids, *t, c),
                        None => c.resize(ids.len(), Value::Null),
                    }
                }
            }
            if pred.is_none() && cols.group.is_none() {
                self.aggregate_batch(cols, &ids, groups, ctx)?;
            } else {
                self.aggregate_rows(scan, cols, &ids, pred.as_deref_mut(), row, groups, ctx, g)?;
            }
            match ids.last() {
                Some(last) if ids.len() == SCAN_BATCH => from = NodeId(last.0 + 1),
                _ => return Ok(()),
            }
        }
    }

    /// One batch of an unfiltered global column aggregation: each aggregate takes its whole
    /// column at once ([`Accumulator::update_many`]). The error reported is the one the row
    /// at a time order meets first: the earliest failing row, and on it the first aggregate.
    fn aggregate_batch(
        &self,
        cols: &ColumnAgg,
        ids: &[NodeId],
        groups: &mut Groups,
        ctx: &mut Ctx,
    ) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        if groups.groups.is_empty() {
            groups.groups.push((Vec::new(), new_accs(&self.aggs)?));
        }
        let Some(sc) = &ctx.scan_cols else {
            return Err(Error::internal("column aggregation without its columns"));
        };
        let mut nodes = Vec::new();
        if cols.args.iter().any(|a| matches!(a, ColArg::Node)) {
            nodes.extend(ids.iter().map(|id| Value::Node(*id)));
        }
        let mut first_err: Option<(usize, Error)> = None;
        for (acc, arg) in groups.groups[0].1.iter_mut().zip(&cols.args) {
            let vals: &[Value] = match arg {
                ColArg::Star => STARS.get(..ids.len()).unwrap_or(&[]),
                ColArg::Node => &nodes,
                ColArg::Prop(c) => sc.cols.get(*c).map_or(&[], |c| &c[..]),
            };
            if let Err((row, e)) = acc.update_many(vals) {
                if first_err.as_ref().is_none_or(|(r, _)| row < *r) {
                    first_err = Some((row, e));
                }
            }
        }
        match first_err {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }

    /// One batch of a column aggregation with a filter or a grouping key, in two passes:
    /// first each row is filtered and its group found (groups are created in row order, as
    /// the row-at-a-time operators create them), then each aggregate takes its rows in order,
    /// `count(*)` as one count per group. The error reported is the one the row-at-a-time
    /// order meets first: the earliest row where the filter or an aggregate fails, and on an
    /// aggregate's row the first aggregate.
    #[allow(clippy::too_many_arguments)]
    fn aggregate_rows(
        &self,
        scan: &FusedScan,
        cols: &ColumnAgg,
        ids: &[NodeId],
        mut pred: Option<&mut CompiledPred>,
        row: &mut Row,
        groups: &mut Groups,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let mut sel = std::mem::take(&mut groups.sel);
        sel.clear();
        let mut filter_err = None;
        let mut decided = std::mem::take(&mut groups.decided);
        if let Some(p) = pred.as_deref_mut() {
            p.decide_batch(ctx, &*g, scan.slot, ids.len(), &mut decided);
        }
        // Whether no row needs the general filter: then one tight pass over the grouping
        // column finds the groups, small integer keys straight from the direct table.
        let tight =
            cols.group.is_some()
                && (pred.is_none() || decided.iter().all(Option::is_some))
                && ctx.scan_cols.as_ref().zip(cols.group).is_some_and(|(sc, c)| {
                    sc.cols.get(c).is_some_and(|col| col.len() == ids.len())
                });
        if tight {
            let col = match (cols.group, &ctx.scan_cols) {
                (Some(c), Some(sc)) => sc.cols.get(c).map_or(&[][..], |c| &c[..]),
                _ => &[],
            };
            for (i, v) in col.iter().enumerate() {
                if decided.get(i) == Some(&Some(false)) {
                    continue;
                }
                let small = match v {
                    Value::Int(x) => usize::try_from(*x)
                        .ok()
                        .and_then(|x| groups.small_ints.get(x))
                        .filter(|g| **g != 0),
                    _ => None,
                };
                let gi = match small {
                    Some(g) => *g as usize - 1,
                    None => groups.group_of(v, &self.aggs)?,
                };
                sel.push((i as u32, gi as u32));
            }
        }
        let rows = if tight { &[][..] } else { ids };
        for (i, id) in rows.iter().enumerate() {
            let undecided = match decided.get(i) {
                Some(Some(false)) => continue,
                Some(Some(true)) => None,
                _ => pred.as_deref_mut(),
            };
            if let Some(p) = undecided {
                // (In place when the slot already holds a node: no drop of the old value.)
                match row.get_mut(scan.slot) {
                    Some(Value::Node(n)) => *n = *id,
                    Some(v) => *v = Value::Node(*id),
                    None => return Err(Error::internal("fused scan slot out of range")),
                }
                if let Some(sc) = &mut ctx.scan_cols {
                    sc.node = *id;
                    sc.pos = i;
                }
                match p.test(row, ctx, g) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        filter_err = Some(e);
                        break;
                    }
                }
            }
            let gi = match cols.group {
                None => {
                    if groups.groups.is_empty() {
                        groups.groups.push((Vec::new(), new_accs(&self.aggs)?));
                    }
                    0
                }
                Some(c) => {
                    let v = ctx.scan_cols.as_ref().and_then(|sc| sc.cols.get(c)?.get(i));
                    groups.group_of(v.unwrap_or(&Value::Null), &self.aggs)?
                }
            };
            sel.push((i as u32, gi as u32));
        }
        let Some(sc) = &ctx.scan_cols else {
            return Err(Error::internal("column aggregation without its columns"));
        };
        // (row, error) of the earliest failing row so far.
        let mut first_err: Option<(u32, Error)> = None;
        for (ai, arg) in cols.args.iter().enumerate() {
            match arg {
                ColArg::Star => {
                    let counts = &mut groups.counts;
                    counts.clear();
                    counts.resize(groups.groups.len(), 0);
                    for (_, gi) in &sel {
                        counts[*gi as usize] += 1;
                    }
                    for (gi, n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
                        let stars = STARS.get(..*n as usize).unwrap_or(&[]);
                        if let Some(acc) = groups.groups.get_mut(gi).and_then(|g| g.1.get_mut(ai)) {
                            // (Counting cannot fail; an error would be reported at row 0.)
                            if let Err((_, e)) = acc.update_many(stars) {
                                first_err = Some((0, e));
                            }
                        }
                    }
                }
                ColArg::Node | ColArg::Prop(_) => {
                    for (i, gi) in &sel {
                        if first_err.as_ref().is_some_and(|(r, _)| i >= r) {
                            break;
                        }
                        let node;
                        let v = match arg {
                            ColArg::Prop(c) => sc
                                .cols
                                .get(*c)
                                .and_then(|c| c.get(*i as usize))
                                .unwrap_or(&Value::Null),
                            _ => {
                                node = Value::Node(ids[*i as usize]);
                                &node
                            }
                        };
                        let Some(acc) =
                            groups.groups.get_mut(*gi as usize).and_then(|g| g.1.get_mut(ai))
                        else {
                            continue;
                        };
                        if let Err(e) = acc.update(std::slice::from_ref(v)) {
                            first_err = Some((*i, e));
                            break;
                        }
                    }
                }
            }
        }
        groups.sel = sel;
        groups.decided = decided;
        match (first_err, filter_err) {
            (Some((_, e)), _) | (None, Some(e)) => Err(e),
            (None, None) => Ok(()),
        }
    }
}

impl Operator for Aggregate {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.arg = arg.clone();
        self.out = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            let mut groups = Groups::default();
            match &self.scan {
                Some(scan) if !ctx.profile => self.scan_into(scan, &mut groups, ctx, g)?,
                _ => {
                    let (keys, aggs, reuse) = (&self.keys, &self.aggs, &self.reuse);
                    let gr = &mut groups;
                    self.input
                        .drain(ctx, g, &mut |r, ctx, g| gr.add(keys, aggs, reuse, r, ctx, g))?;
                }
            }
            let mut groups = groups.groups;
            if groups.is_empty() && self.keys.is_empty() {
                groups.push((Vec::new(), new_accs(&self.aggs)?));
            }
            let mut rows = Vec::with_capacity(groups.len());
            for (kv, mut accs) in groups {
                let mut row = self.arg.clone();
                for ((s, _), v) in self.keys.iter().zip(kv) {
                    row[*s] = v;
                }
                for ((s, _), acc) in self.aggs.iter().zip(accs.iter_mut()) {
                    row[*s] = acc.finish()?;
                }
                rows.push(row);
            }
            self.out = Some(rows.into_iter());
        }
        Ok(self.out.as_mut().and_then(|o| o.next()))
    }
}

struct Distinct {
    input: Box<dyn Operator>,
    slots: Vec<Slot>,
    seen: FxHashSet<Vec<GroupKey>>,
    /// The current row's key, reused: only new keys are copied into `seen`.
    key: Vec<GroupKey>,
}

impl Operator for Distinct {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.seen.clear();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        while let Some(r) = self.input.next(ctx, g)? {
            self.key.clear();
            self.key.extend(self.slots.iter().map(|s| group_key(&r[*s])));
            if !self.seen.contains(&self.key) {
                self.seen.insert(self.key.clone());
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

struct Sort {
    input: Box<dyn Operator>,
    keys: Vec<(PExpr, bool)>,
    out: Option<std::vec::IntoIter<Row>>,
}

impl Operator for Sort {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.out = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            let mut rows: Vec<(Vec<Value>, Row)> = Vec::new();
            while let Some(mut r) = self.input.next(ctx, g)? {
                let mut k = Vec::with_capacity(self.keys.len());
                for (e, _) in &self.keys {
                    k.push(eval(e, &mut r, ctx, g)?);
                }
                rows.push((k, r));
            }
            let desc: Vec<bool> = self.keys.iter().map(|k| k.1).collect();
            rows.sort_by(|a, b| eval::order_keys(&a.0, &b.0, &desc));
            self.out = Some(rows.into_iter().map(|x| x.1).collect::<Vec<_>>().into_iter());
        }
        Ok(self.out.as_mut().and_then(|o| o.next()))
    }
}

struct SkipLimit {
    input: Box<dyn Operator>,
    count: PExpr,
    skip: bool,
    /// LIMIT over writes: drain the input once the limit is reached.
    exhaust: bool,
    drained: bool,
    n: Option<u64>,
    seen: u64,
    /// The argument row, so the count expression has a full-width row to evaluate in.
    arg: Row,
}

impl Operator for SkipLimit {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.n = None;
        self.seen = 0;
        self.drained = false;
        self.arg = arg.clone();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let n = match self.n {
            Some(n) => n,
            None => {
                let mut row = self.arg.clone();
                let v = eval(&self.count, &mut row, ctx, g)?;
                let what = if self.skip { "SKIP" } else { "LIMIT" };
                let n = match v {
                    Value::Int(i) if i >= 0 => i as u64,
                    Value::Int(i) => {
                        return Err(Error::syntax(format!(
                            "Invalid input. '{i}' is not a valid value. Must be a non-negative integer. ({what})"
                        ))
                        .with_detail("NegativeIntegerArgument"))
                    }
                    other => {
                        return Err(Error::syntax(format!(
                            "Invalid input. '{}' is not a valid value. Must be a non-negative integer. ({what})",
                            arbor_model::to_cypher_literal(&other)
                        ))
                        .with_detail("InvalidArgumentType"))
                    }
                };
                self.n = Some(n);
                n
            }
        };
        if self.skip {
            while self.seen < n {
                if self.input.next(ctx, g)?.is_none() {
                    return Ok(None);
                }
                self.seen += 1;
            }
            self.input.next(ctx, g)
        } else {
            if self.seen >= n {
                if self.exhaust && !self.drained {
                    while self.input.next(ctx, g)?.is_some() {}
                    self.drained = true;
                }
                return Ok(None);
            }
            self.seen += 1;
            self.input.next(ctx, g)
        }
    }
}

struct Unwind {
    input: Box<dyn Operator>,
    /// The parameter to move out of `Ctx::params` instead of evaluating (copying) `expr`.
    take: Option<usize>,
    expr: PExpr,
    slot: Slot,
    cur: Option<Row>,
    items: std::vec::IntoIter<Value>,
}

impl Operator for Unwind {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                if let Some(v) = self.items.next() {
                    let mut row = ctx.row_like(cur);
                    row[self.slot] = v;
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            let v = match self.take.and_then(|i| ctx.params.get_mut(i)) {
                Some(p) => std::mem::replace(p, Value::Null),
                None => eval(&self.expr, &mut r, ctx, g)?,
            };
            self.items = match v {
                Value::List(items) => items.into_iter(),
                Value::Null => Vec::new().into_iter(),
                other => vec![other].into_iter(),
            };
            self.cur = Some(r);
        }
    }
}

struct Optional {
    input: Box<dyn Operator>,
    inner: Box<dyn Operator>,
    slots: Vec<Slot>,
    cur: Option<Row>,
    produced: bool,
}

impl Operator for Optional {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if self.cur.is_some() {
                if let Some(r) = self.inner.next(ctx, g)? {
                    self.produced = true;
                    return Ok(Some(r));
                }
                let Some(mut cur) = self.cur.take() else { continue };
                if !self.produced {
                    for s in &self.slots {
                        cur[*s] = Value::Null;
                    }
                    return Ok(Some(cur));
                }
            }
            let Some(r) = self.input.next(ctx, g)? else { return Ok(None) };
            self.inner.reset(&r);
            self.produced = false;
            self.cur = Some(r);
        }
    }
}

struct Apply {
    input: Box<dyn Operator>,
    inner: Box<dyn Operator>,
    unit: bool,
    cur: Option<Row>,
    /// `IN TRANSACTIONS`: the batch size expression, its value, and input rows in this batch.
    batch: Option<PExpr>,
    batch_size: Option<u64>,
    in_batch: u64,
    arg: Row,
}

impl Apply {
    /// Before taking the next input row: commit when the current batch is full.
    fn batch_boundary(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()> {
        let Some(expr) = &self.batch else { return Ok(()) };
        let size = match self.batch_size {
            Some(n) => n,
            None => {
                let mut row = self.arg.clone();
                let n = match eval(expr, &mut row, ctx, g)? {
                    Value::Int(n) if n > 0 => n as u64,
                    other => {
                        return Err(Error::new(
                            Status::ArgumentError,
                            format!(
                            "Invalid input. '{}' is not a valid value. Must be a positive integer.",
                            arbor_model::to_cypher_literal(&other)
                        ),
                        )
                        .with_detail("InvalidArgumentValue"))
                    }
                };
                self.batch_size = Some(n);
                n
            }
        };
        if self.in_batch >= size {
            g.commit_batch()?;
            self.in_batch = 0;
        }
        self.in_batch += 1;
        Ok(())
    }
}

impl Operator for Apply {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
        self.in_batch = 0;
        self.arg = arg.clone();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if self.cur.is_some() {
                if self.unit {
                    while self.inner.next(ctx, g)?.is_some() {}
                    return Ok(self.cur.take());
                }
                if let Some(r) = self.inner.next(ctx, g)? {
                    return Ok(Some(r));
                }
                self.cur = None;
            }
            let Some(r) = self.input.next(ctx, g)? else { return Ok(None) };
            self.batch_boundary(ctx, g)?;
            self.inner.reset(&r);
            self.cur = Some(r);
        }
    }
}

struct Union {
    branches: Vec<(Box<dyn Operator>, Vec<Slot>)>,
    out: Vec<Slot>,
    arg: Row,
    pos: usize,
}

impl Operator for Union {
    fn reset(&mut self, arg: &Row) {
        self.arg = arg.clone();
        self.pos = 0;
        for (b, _) in &mut self.branches {
            b.reset(arg);
        }
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        while let Some((b, slots)) = self.branches.get_mut(self.pos) {
            if let Some(r) = b.next(ctx, g)? {
                let mut row = self.arg.clone();
                for (o, s) in self.out.iter().zip(slots.iter()) {
                    row[*o] = r[*s].clone();
                }
                return Ok(Some(row));
            }
            self.pos += 1;
        }
        Ok(None)
    }
}

struct Eager {
    input: Box<dyn Operator>,
    out: Option<std::vec::IntoIter<Row>>,
}

impl Operator for Eager {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.out = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            let mut rows = Vec::new();
            while let Some(r) = self.input.next(ctx, g)? {
                rows.push(r);
            }
            self.out = Some(rows.into_iter());
        }
        Ok(self.out.as_mut().and_then(|o| o.next()))
    }
}

struct ProcCall {
    input: Box<dyn Operator>,
    name: Name,
    args: Vec<PExpr>,
    arg_types: Vec<arbor_cypher_plan::CypherType>,
    void: bool,
    yields: Vec<(usize, Slot)>,
    cur: Option<Row>,
    rows: std::vec::IntoIter<Vec<Value>>,
}

impl Operator for ProcCall {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cur = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(cur) = &self.cur {
                if let Some(out) = self.rows.next() {
                    let mut row = cur.clone();
                    for (i, s) in &self.yields {
                        row[*s] = out.get(*i).cloned().unwrap_or(Value::Null);
                    }
                    return Ok(Some(row));
                }
                self.cur = None;
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            let mut args = Vec::new();
            for a in &self.args {
                args.push(eval(a, &mut r, ctx, g)?);
            }
            let args = procs::check_args(&self.name, &self.arg_types, args)?;
            let Some(p) = ctx.procs.iter().find(|p| *p.sig.name == *self.name) else {
                return Err(Error::new(
                    Status::ProcedureNotFound,
                    format!("There is no procedure with the name `{}` registered", self.name),
                ));
            };
            let body = p.body.clone();
            let rows = body(&args, g)?;
            if self.void {
                // A VOID procedure runs for its effect; the row passes through once.
                return Ok(Some(r));
            }
            self.rows = rows.into_iter();
            self.cur = Some(r);
        }
    }
}

// ------------------------------------------------------------------------------------ writes

/// Checks a value can be stored as a property and returns it (lists must be homogeneous).
fn storable(v: Value) -> Result<Value> {
    let bad = |v: &Value| {
        Error::type_error(format!(
            "Property values can only be of primitive types or arrays thereof. Encountered: {}",
            v.type_name()
        ))
        .with_detail("InvalidPropertyType")
    };
    match &v {
        Value::Map(_)
        | Value::Node(_)
        | Value::Relationship(_)
        | Value::Path(_)
        | Value::NodeData(_)
        | Value::RelData(_)
        | Value::PathData(_) => Err(bad(&v)),
        Value::List(items) => {
            let mut ty = None;
            for it in items {
                match it {
                    Value::List(_) | Value::Map(_) | Value::Null => return Err(bad(it)),
                    Value::Node(_) | Value::Relationship(_) | Value::Path(_) => {
                        return Err(bad(it))
                    }
                    _ => {}
                }
                let t = it.type_name();
                if *ty.get_or_insert(t) != t {
                    return Err(bad(&v));
                }
            }
            Ok(v)
        }
        _ => Ok(v),
    }
}

/// Evaluates a property map for CREATE/MERGE.
fn prop_list(
    e: Option<&PExpr>,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
    merge: bool,
) -> Result<Vec<(TokenId, Value)>> {
    let Some(e) = e else { return Ok(Vec::new()) };
    if let PExpr::Map(items) = e {
        // A map literal (`CREATE (:L {a: r.a, ...})`): evaluate each value straight into the
        // property list, with the key tokens cached per execution, instead of building a map
        // with owned keys and looking every key up by name for every row. MERGE keeps the
        // map path (its null error names the first null key in key order), and so does a
        // literal repeating a key (the map keeps the last value, nulls included).
        let distinct =
            items.iter().enumerate().all(|(i, (k, _))| items[..i].iter().all(|(o, _)| o != k));
        if !merge && distinct {
            let mut out = Vec::with_capacity(items.len());
            for (k, x) in items {
                let v = eval(x, row, ctx, g)?;
                if v.is_null() {
                    continue;
                }
                let t = ctx.token_or_create(g, TokenKind::PropertyKey, k)?;
                out.push((t, storable(v)?));
            }
            return Ok(out);
        }
    }
    let m = match eval(e, row, ctx, g)? {
        Value::Map(m) => m,
        Value::Null => return Ok(Vec::new()),
        other => {
            return Err(Error::type_error(format!(
                "Expected a map of properties but got {}",
                other.type_name()
            ))
            .with_detail("InvalidArgumentType"))
        }
    };
    let mut out = Vec::with_capacity(m.len());
    for (k, v) in m {
        if v.is_null() {
            if merge {
                return Err(Error::semantic(format!(
                    "Cannot merge the following node because of null property value for '{k}'"
                ))
                .with_detail("MergeReadOwnWrites"));
            }
            continue;
        }
        let t = g.get_or_create_token(TokenKind::PropertyKey, &k)?;
        out.push((t, storable(v)?));
    }
    Ok(out)
}

fn run_create(
    steps: &[CreateStep],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
    merge: bool,
) -> Result<()> {
    for step in steps {
        match step {
            CreateStep::Node { slot, labels, props } => {
                // The label tokens on the stack for the usual few labels: no allocation per
                // created node (batched writes create tens of thousands per statement).
                let mut inline = [TokenId::default(); 8];
                let mut spilled = Vec::new();
                let mut n_toks = 0;
                for l in labels {
                    let t = ctx.token_or_create(g, TokenKind::Label, l)?;
                    if inline[..n_toks].contains(&t) || spilled.contains(&t) {
                        continue;
                    }
                    if n_toks < inline.len() {
                        inline[n_toks] = t;
                        n_toks += 1;
                    } else {
                        spilled.push(t);
                    }
                }
                if !spilled.is_empty() {
                    spilled.splice(0..0, inline.iter().copied());
                }
                let toks: &[TokenId] =
                    if spilled.is_empty() { &inline[..n_toks] } else { &spilled };
                let props = prop_list(props.as_ref(), row, ctx, g, merge)?;
                let n = props.len() as u64;
                let id = g.create_node(toks, props)?;
                ctx.stats.nodes_created += 1;
                ctx.stats.labels_added += toks.len() as u64;
                ctx.stats.properties_set += n;
                row[*slot] = Value::Node(id);
            }
            CreateStep::Rel { slot, from, to, rel_type, props } => {
                let (Value::Node(a), Value::Node(b)) = (&row[*from], &row[*to]) else {
                    let bad = if row[*from].is_node() { &row[*to] } else { &row[*from] };
                    return Err(Error::semantic(format!(
                        "Failed to create relationship, node is {}",
                        if bad.is_null() { "missing (null)" } else { bad.type_name() }
                    ))
                    .with_detail("CreateRelationshipWithNull"));
                };
                let (a, b) = (*a, *b);
                let t = g.get_or_create_token(TokenKind::RelType, rel_type)?;
                let props = prop_list(props.as_ref(), row, ctx, g, merge)?;
                let n = props.len() as u64;
                let id = g.create_rel(a, b, t, props)?;
                ctx.stats.relationships_created += 1;
                ctx.stats.properties_set += n;
                row[*slot] = Value::Relationship(id);
            }
            CreateStep::Path { slot, expr } => {
                let v = eval(expr, row, ctx, g)?;
                row[*slot] = v;
            }
        }
    }
    Ok(())
}

trait IsNode {
    fn is_node(&self) -> bool;
}
impl IsNode for Value {
    fn is_node(&self) -> bool {
        matches!(self, Value::Node(_))
    }
}

enum Entity {
    Node(NodeId),
    Rel(RelId),
}

fn entity(v: &Value, what: &str) -> Result<Option<Entity>> {
    match v {
        Value::Node(n) => Ok(Some(Entity::Node(*n))),
        Value::Relationship(r) => Ok(Some(Entity::Rel(*r))),
        Value::Null => Ok(None),
        other => Err(Error::type_error(format!(
            "Type mismatch: expected Node or Relationship but was {} ({what})",
            other.type_name()
        ))
        .with_detail("InvalidArgumentType")),
    }
}

fn set_prop(g: &mut dyn Graph, ent: &Entity, key: TokenId, v: Value) -> Result<()> {
    match ent {
        Entity::Node(n) => g.set_node_property(*n, key, v),
        Entity::Rel(r) => g.set_rel_property(*r, key, v),
    }
}

fn get_props(g: &dyn Graph, ent: &Entity) -> Vec<(TokenId, Value)> {
    match ent {
        Entity::Node(n) => g.node_properties(*n),
        Entity::Rel(r) => g.rel_properties(*r),
    }
}

fn get_prop(g: &dyn Graph, ent: &Entity, k: TokenId) -> Option<Value> {
    match ent {
        Entity::Node(n) => g.node_property(*n, k),
        Entity::Rel(r) => g.rel_property(*r, k),
    }
}

fn check_alive(g: &dyn Graph, ent: &Entity) -> Result<()> {
    let dead = match ent {
        Entity::Node(n) => g.node_deleted_in_tx(*n),
        Entity::Rel(r) => g.rel_deleted_in_tx(*r),
    };
    if dead {
        return Err(Error::new(
            Status::EntityNotFound,
            "The entity has been deleted in this transaction",
        )
        .with_detail("DeletedEntityAccess"));
    }
    Ok(())
}

/// Property map from a SET source value (a map, node or relationship).
fn source_map(v: Value, g: &dyn Graph) -> Result<Vec<(arbor_model::Key, Value)>> {
    match v {
        Value::Map(m) => Ok(m.into_iter().collect()),
        Value::Null => Ok(Vec::new()),
        Value::Node(_) | Value::Relationship(_) => match eval::properties(&v, g)? {
            Value::Map(m) => Ok(m.into_iter().collect()),
            _ => Ok(Vec::new()),
        },
        other => Err(Error::type_error(format!(
            "Expected a map of properties but got {}",
            other.type_name()
        ))
        .with_detail("InvalidArgumentType")),
    }
}

fn run_set(items: &[SetOp], row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()> {
    for it in items {
        match it {
            SetOp::Property { target, key, value } => {
                let t = eval(target, row, ctx, g)?;
                let Some(ent) = entity(&t, "SET")? else { continue };
                check_alive(g, &ent)?;
                let v = storable(eval(value, row, ctx, g)?)?;
                let k = g.get_or_create_token(TokenKind::PropertyKey, key)?;
                if v.is_null() && get_prop(g, &ent, k).is_none() {
                    continue;
                }
                set_prop(g, &ent, k, v)?;
                ctx.stats.properties_set += 1;
            }
            SetOp::Replace { target, value } | SetOp::Merge { target, value } => {
                let replace = matches!(it, SetOp::Replace { .. });
                let t = eval(target, row, ctx, g)?;
                let Some(ent) = entity(&t, "SET")? else { continue };
                check_alive(g, &ent)?;
                let src = eval(value, row, ctx, g)?;
                let new = source_map(src, g)?;
                if replace {
                    for (k, _) in get_props(g, &ent) {
                        let name = g.token_name(TokenKind::PropertyKey, k).unwrap_or_default();
                        if !new.iter().any(|(n, v)| *n == name && !v.is_null()) {
                            set_prop(g, &ent, k, Value::Null)?;
                            ctx.stats.properties_set += 1;
                        }
                    }
                }
                for (k, v) in new {
                    let tok = g.get_or_create_token(TokenKind::PropertyKey, &k)?;
                    if v.is_null() {
                        if get_prop(g, &ent, tok).is_some() {
                            set_prop(g, &ent, tok, Value::Null)?;
                            ctx.stats.properties_set += 1;
                        }
                        continue;
                    }
                    set_prop(g, &ent, tok, storable(v)?)?;
                    ctx.stats.properties_set += 1;
                }
            }
            SetOp::Labels { target, labels } => {
                let t = eval(target, row, ctx, g)?;
                match t {
                    Value::Node(n) => {
                        for l in labels {
                            let tok = g.get_or_create_token(TokenKind::Label, l)?;
                            if g.add_label(n, tok)? {
                                ctx.stats.labels_added += 1;
                            }
                        }
                    }
                    Value::Null => {}
                    other => {
                        return Err(Error::type_error(format!(
                            "Type mismatch: expected Node but was {}",
                            other.type_name()
                        ))
                        .with_detail("InvalidArgumentType"))
                    }
                }
            }
            SetOp::RemoveProperty { target, key } => {
                let t = eval(target, row, ctx, g)?;
                let Some(ent) = entity(&t, "REMOVE")? else { continue };
                check_alive(g, &ent)?;
                let Some(k) = g.token_id(TokenKind::PropertyKey, key) else { continue };
                if get_prop(g, &ent, k).is_some() {
                    set_prop(g, &ent, k, Value::Null)?;
                    ctx.stats.properties_set += 1;
                }
            }
            SetOp::RemoveLabels { target, labels } => {
                let t = eval(target, row, ctx, g)?;
                match t {
                    Value::Node(n) => {
                        for l in labels {
                            if let Some(tok) = g.token_id(TokenKind::Label, l) {
                                if g.remove_label(n, tok)? {
                                    ctx.stats.labels_removed += 1;
                                }
                            }
                        }
                    }
                    Value::Null => {}
                    other => {
                        return Err(Error::type_error(format!(
                            "Type mismatch: expected Node but was {}",
                            other.type_name()
                        ))
                        .with_detail("InvalidArgumentType"))
                    }
                }
            }
        }
    }
    Ok(())
}

struct Create {
    input: Box<dyn Operator>,
    steps: Vec<CreateStep>,
}

impl Operator for Create {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        run_create(&self.steps, &mut r, ctx, g, false)?;
        Ok(Some(r))
    }
}

struct Merge {
    input: Box<dyn Operator>,
    matcher: Box<dyn Operator>,
    create: Vec<CreateStep>,
    on_create: Vec<SetOp>,
    on_match: Vec<SetOp>,
    pending: Vec<Row>,
}

impl Operator for Merge {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.pending.clear();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop() {
                return Ok(Some(r));
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            self.matcher.reset(&r);
            let mut found = Vec::new();
            while let Some(m) = self.matcher.next(ctx, g)? {
                found.push(m);
            }
            if found.is_empty() {
                run_create(&self.create, &mut r, ctx, g, true)?;
                run_set(&self.on_create, &mut r, ctx, g)?;
                return Ok(Some(r));
            }
            for m in &mut found {
                run_set(&self.on_match, m, ctx, g)?;
            }
            found.reverse();
            self.pending = found;
        }
    }
}

struct SetOpr {
    input: Box<dyn Operator>,
    items: Vec<SetOp>,
}

impl Operator for SetOpr {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        run_set(&self.items, &mut r, ctx, g)?;
        Ok(Some(r))
    }
}

/// Deletes after reading all input rows: relationships first, then nodes, so a clause like
/// `DELETE a, r, b` succeeds regardless of the order rows arrive in.
struct Delete {
    input: Box<dyn Operator>,
    exprs: Vec<PExpr>,
    detach: bool,
    out: Option<std::vec::IntoIter<Row>>,
}

impl Delete {
    fn collect(v: &Value, nodes: &mut Vec<NodeId>, rels: &mut Vec<RelId>) -> Result<()> {
        match v {
            Value::Null => {}
            Value::Node(n) => nodes.push(*n),
            Value::Relationship(r) => rels.push(*r),
            Value::Path(p) => {
                nodes.extend(p.nodes.iter().copied());
                rels.extend(p.rels.iter().copied());
            }
            Value::List(items) => {
                for it in items {
                    Self::collect(it, nodes, rels)?;
                }
            }
            other => {
                return Err(Error::type_error(format!(
                    "Expected a Node, Relationship or Path, but got a {}",
                    other.type_name()
                ))
                .with_detail("InvalidArgumentType"))
            }
        }
        Ok(())
    }
}

impl Operator for Delete {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.out = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            let mut rows = Vec::new();
            let mut nodes = Vec::new();
            let mut rels = Vec::new();
            while let Some(mut r) = self.input.next(ctx, g)? {
                for e in &self.exprs {
                    let v = eval(e, &mut r, ctx, g)?;
                    Self::collect(&v, &mut nodes, &mut rels)?;
                }
                rows.push(r);
            }
            if self.detach {
                let mut edges = Vec::new();
                for n in &nodes {
                    edges.clear();
                    g.node_edges(*n, Dir::Both, &[], &mut edges);
                    rels.extend(edges.iter().map(|e| e.rel));
                }
            }
            let mut seen = HashSet::new();
            for r in rels {
                if seen.insert(r) && !g.rel_deleted_in_tx(r) && g.rel_exists(r) {
                    if let Some((_, _, t)) = g.rel_info(r) {
                        ctx.deleted_rel_types.insert(r, t);
                    }
                    g.delete_rel(r)?;
                    ctx.stats.relationships_deleted += 1;
                }
            }
            let mut seen = HashSet::new();
            for n in nodes {
                if seen.insert(n) && !g.node_deleted_in_tx(n) && g.node_exists(n) {
                    g.delete_node(n).map_err(|e| {
                        if e.status == Status::DeleteNodeWithRelationships && e.detail.is_none() {
                            e.with_detail("DeleteConnectedNode")
                        } else {
                            e
                        }
                    })?;
                    ctx.stats.nodes_deleted += 1;
                }
            }
            self.out = Some(rows.into_iter());
        }
        Ok(self.out.as_mut().and_then(|o| o.next()))
    }
}

struct Foreach {
    input: Box<dyn Operator>,
    slot: Slot,
    list: PExpr,
    body: Box<dyn Operator>,
}

impl Operator for Foreach {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        let items = match eval(&self.list, &mut r, ctx, g)? {
            Value::List(items) => items,
            Value::Null => Vec::new(),
            other => {
                return Err(Error::type_error(format!(
                    "Type mismatch: expected List but was {}",
                    other.type_name()
                ))
                .with_detail("InvalidArgumentType"))
            }
        };
        for it in items {
            let mut inner = r.clone();
            inner[self.slot] = it;
            self.body.reset(&inner);
            while self.body.next(ctx, g)?.is_some() {}
        }
        Ok(Some(r))
    }
}
