//! The row and per-execution context every operator and the evaluator share: [`Row`],
//! [`Ctx`] (parameters, statistics, caches, PROFILE counters), the [`Operator`] trait and the
//! [`Sink`] an aggregation drains into. It depends on neither the evaluator nor the runtime:
//! subquery operator trees are built through the function the runtime hands to [`Ctx::new`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use arbor_cypher_plan::expr::SubqueryKind;
use arbor_cypher_plan::ops::Op;
use arbor_model::{Error, NodeId, RelId, Result, Status, Value};

use crate::graph::{Graph, Stats, TokenId, TokenKind};
use crate::procs::Procedure;

pub(crate) type Row = Vec<Value>;

/// Per-execution state shared by all operators.
pub(crate) struct Ctx {
    pub params: Vec<Value>,
    pub stats: Stats,
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Calls of [`Ctx::tick`] so far.
    ticks: u32,
    /// Operator trees of subquery expressions, keyed by the address of their plan.
    subplans: HashMap<usize, Box<dyn Operator>>,
    /// Builds the operator tree of a subquery plan (the runtime's builder, handed in so that
    /// this module does not depend on the runtime).
    build_subplan: BuildFn,
    regexes: HashMap<String, regex::Regex>,
    /// Rows produced per operator (indexed by the operator's pre-order number), for PROFILE.
    pub rows: Vec<u64>,
    pub profile: bool,
    /// Types of relationships this statement deleted: `type(r)` still answers for them (the
    /// graph no longer shows a deleted relationship, but Neo4j keeps its type readable).
    pub deleted_rel_types: HashMap<RelId, TokenId>,
    /// The procedures the query was bound to.
    pub procs: Arc<[Procedure]>,
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
    /// Incremented by each `Execution::next` call unless the transaction has written nothing
    /// (`committed_snapshot`): what an operator read in an earlier call with another epoch
    /// may be stale (another statement of the transaction may have written since).
    pub(crate) epoch: u64,
}

/// The property columns of one batch of a column aggregation's scan, and the node of the
/// batch being processed (`node`, at index `pos`).
pub(crate) struct ScanCols {
    pub(crate) node: NodeId,
    pub(crate) pos: usize,
    /// Per column, the property key (`None`: no such token, so the column is all null).
    pub(crate) toks: Vec<Option<TokenId>>,
    pub(crate) cols: Vec<Vec<Value>>,
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
    pub fn new(params: Vec<Value>, profile: bool, build_subplan: BuildFn) -> Ctx {
        Ctx {
            params,
            stats: Stats::default(),
            interrupt: None,
            ticks: 0,
            subplans: HashMap::new(),
            build_subplan,
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
            epoch: 0,
        }
    }

    /// A copy of `row`, in the memory of a row consumed earlier if there is one: an operator
    /// producing many rows that are consumed at once (by an aggregation) then allocates no row
    /// per result.
    #[inline]
    pub fn row_like(&mut self, row: &Row) -> Row {
        match self.spare_rows.pop() {
            Some(mut r) => {
                copy_row(&mut r, row);
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

    /// [`Ctx::check_interrupt`] every [`crate::interrupt::EVERY`] calls: for loops over data
    /// (one relaxed load per that many items).
    #[inline]
    pub fn tick(&mut self) -> Result<()> {
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks & (crate::interrupt::EVERY - 1) == 0 {
            self.check_interrupt()
        } else {
            Ok(())
        }
    }

    /// Fails if the execution was interrupted or its transaction passed a memory limit.
    pub fn check_interrupt(&self) -> Result<()> {
        if let Some(f) = &self.interrupt {
            if f.load(AtomicOrdering::Relaxed) {
                return Err(crate::interrupt::terminated());
            }
        }
        crate::memory::check()
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
            None => (self.build_subplan)(plan),
        };
        op.reset(row);
        let r = {
            let ctx: &mut Ctx = self;
            let mut pull = || op.next(ctx, g);
            subquery_result(kind, &mut pull)
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

/// Builds the operator tree of a subquery plan (see [`Ctx::new`]).
pub(crate) type BuildFn = fn(&Op) -> Box<dyn Operator>;

/// The consumer [`Operator::drain`] feeds.
pub(crate) type Sink<'a> = dyn FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<()> + 'a;

/// Collects a sub-query's rows for `SubqueryKind`.
fn subquery_result(
    kind: SubqueryKind,
    rows: &mut dyn FnMut() -> Result<Option<Row>>,
) -> Result<Value> {
    match kind {
        SubqueryKind::Exists => Ok(Value::Bool(rows()?.is_some())),
        SubqueryKind::Count => {
            let mut n = 0i64;
            while rows()?.is_some() {
                n += 1;
            }
            Ok(Value::Int(n))
        }
        SubqueryKind::Collect(slot) => {
            let mut out = Vec::new();
            while let Some(r) = rows()? {
                out.push(r.get(slot).cloned().unwrap_or(Value::Null));
            }
            Ok(Value::List(out))
        }
    }
}

/// `dst.clone_from(src)`, except that a slot holding the same kind of plain value in both rows
/// (null, boolean, number, node, relationship) is overwritten in place: no drop and clone call
/// per slot. A recycled row usually has the shape of the rows copied into it (the same
/// operators filled it), so copying a result row costs a few loads and stores per slot.
#[inline]
fn copy_row(dst: &mut Row, src: &Row) {
    if dst.len() != src.len() {
        dst.clone_from(src);
        return;
    }
    for (d, s) in dst.iter_mut().zip(src) {
        match (d, s) {
            (Value::Null, Value::Null) => {}
            (Value::Node(a), Value::Node(b)) => *a = *b,
            (Value::Relationship(a), Value::Relationship(b)) => *a = *b,
            (Value::Int(a), Value::Int(b)) => *a = *b,
            (Value::Float(a), Value::Float(b)) => *a = *b,
            (Value::Bool(a), Value::Bool(b)) => *a = *b,
            (d, s) => d.clone_from(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_row;
    use arbor_model::{NodeId, RelId, Value};

    /// Whatever the recycled row held, the copy equals the source, slot for slot.
    #[test]
    fn copy_row_equals_the_source_whatever_the_recycled_row_held() {
        let kinds = [
            Value::Null,
            Value::Bool(true),
            Value::Int(7),
            Value::Float(1.5),
            Value::Node(NodeId(3)),
            Value::Relationship(RelId(9)),
            Value::String("s".into()),
            Value::List(vec![Value::Int(1), Value::Null]),
        ];
        for a in &kinds {
            for b in &kinds {
                let src = vec![a.clone(), b.clone(), Value::Node(NodeId(1))];
                for (old, len) in [(b, 3), (a, 3), (a, 2), (b, 4)] {
                    let mut dst = vec![old.clone(); len];
                    copy_row(&mut dst, &src);
                    assert_eq!(format!("{dst:?}"), format!("{src:?}"), "{old:?} x {len}");
                }
            }
        }
    }
}
