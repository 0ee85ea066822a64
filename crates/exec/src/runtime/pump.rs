//! The [`Pump`] driver shared by the variable-length expansions (`var_expand`, `pruning`,
//! `frontier`): one generic `next`/`drain` pair for every expansion that works in a row of its
//! own; and what the two distinct-end expansions (`VarLengthExpand(Pruning)` and
//! `(Pruning,BFS)`) share: [`each_level_edge`], their breadth-first level loop, and
//! [`EndLoop`], their emission loop (write the end into the working row, count it for PROFILE,
//! test the fused filter, memoise the projected property, hand the row on) with
//! [`LateCols`], which reads the end's properties that the projection right above reads once
//! per chunk of ends through [`Graph::node_property_batch`] (a column lookup per node in the
//! engine, no property blob decoded) instead of one `node_property` per end and key.
//!
//! The fused filter reads the end's properties from the columns (through `ctx.scan_cols`)
//! only while every column read holds integers and nulls (the engine's integer columns);
//! the first other value turns that off and the filter runs as written, its leading label
//! and property conjuncts one `node_probe` per end (a boolean key has no integer column: fed
//! from columns, each end was read twice and the probe lost, the 2x regression of the
//! traversal tree's `count(DISTINCT b)`). Streamed ends are read per chunk, not per step.
//!
//! Why the late columns give the same answers: they hold exactly what `node_property` reads,
//! and they are only used where such a read may be answered again from a memo
//! (`ctx.read_only`: the statement never writes, so nothing changes during one
//! `Execution::next` call; a chunk read in an earlier call of a transaction that has written
//! (`ctx.epoch`) is not used: the rest of its ends are read one by one). The filter reads
//! them through `ctx.scan_cols` (swapped in around each test, so an enclosing column
//! aggregation keeps its own), the projection through the one-entry memo `ctx.last_prop`.
//! Property reads of a node raise no error, so reading a chunk ahead of the rows that use it
//! changes no outcome.

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::Name;
use arbor_model::{NodeId, RelId, Result, Value};

use super::fused::filter_props;

use crate::ctx::{Ctx, Operator, Row, ScanCols, Sink};
use crate::eval::CompiledPred;
use crate::graph::{Direction, Edge, Graph, TokenId, TokenKind};

/// A variable-length expansion that writes each result into a working row of its own
/// (`VarLengthExpand`, `VarLengthExpand(Pruning)`): one input row is opened, its results are
/// handed on one by one in the working row, then it is closed and the next input row opened.
///
/// Every `Pump` is an [`Operator`] through one generic driver ([`pump`]): `next` copies the
/// working row out, `drain` hands it to the consuming aggregation in place (no copy per
/// result). The methods are only ever called from that generic code, monomorphized per
/// expansion and per consumer and inlined, so a result costs no virtual call beyond the sink
/// the aggregation passes to `drain`.
pub(super) trait Pump: Send {
    /// The operator's input.
    fn input(&mut self) -> &mut dyn Operator;
    /// Forgets the input row being expanded (the rest of [`Operator::reset`]).
    fn reopen(&mut self);
    /// Whether an input row is open.
    fn is_open(&self) -> bool;
    /// Opens input row `row` (kept as the working row), unless it cannot produce any result
    /// (no start node, no such property key), in which case it is dropped.
    fn open(&mut self, row: Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()>;
    /// Hands the open row's remaining results, each in the working row, to `emit` until it
    /// says stop (`true`, returned) or they are exhausted (`false`).
    fn advance<E>(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
    where
        E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>;
    /// Closes the exhausted input row.
    fn close(&mut self, ctx: &mut Ctx);
}

/// Expands input row after input row, handing each result to `emit` until it says stop
/// (`true`, returned) or the input is exhausted (`false`).
#[inline(always)]
pub(super) fn pump<P, E>(p: &mut P, ctx: &mut Ctx, g: &mut dyn Graph, emit: &mut E) -> Result<bool>
where
    P: Pump,
    E: FnMut(&mut Row, &mut Ctx, &mut dyn Graph) -> Result<bool>,
{
    loop {
        if p.is_open() {
            if p.advance(ctx, g, emit)? {
                return Ok(true);
            }
            p.close(ctx);
        }
        let Some(r) = p.input().next(ctx, g)? else { return Ok(false) };
        ctx.check_interrupt()?;
        p.open(r, ctx, g)?;
    }
}

impl<P: Pump> Operator for P {
    fn reset(&mut self, arg: &Row) {
        self.input().reset(arg);
        self.reopen();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let mut out = None;
        // The row leaves the operator: a copy of the working row (which the expansion keeps).
        pump(self, ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, _: &mut dyn Graph| {
            out = Some(ctx.row_like(row));
            Ok(true)
        })?;
        Ok(out)
    }
    fn drain(&mut self, ctx: &mut Ctx, g: &mut dyn Graph, sink: &mut Sink<'_>) -> Result<()> {
        // Each result is consumed in the working row itself: no copy per result.
        pump(self, ctx, g, &mut |row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph| {
            sink(row, ctx, g)?;
            Ok(false)
        })?;
        Ok(())
    }
}

/// Ends per column read.
pub(super) const CHUNK: usize = 256;

/// The property columns of the current chunk of ends (see the module doc).
#[derive(Default)]
pub(super) struct LateCols {
    /// The keys read, one column each (empty: nothing to read late).
    keys: Vec<Name>,
    /// The column of the key the projection above reads of the end, if any.
    above: Option<usize>,
    /// The columns of the chunk (`node`/`pos` set per end while the filter runs).
    cols: Option<ScanCols>,
    /// Which ends the columns hold: the list (`seg`), its version (`gen`), the chunk's
    /// first index in it, and the `Execution::next` call they were read in.
    seg: usize,
    gen: u64,
    start: usize,
    epoch: u64,
    /// Whether `cols` matches (`seg`, `gen`, `start`, `epoch`).
    valid: bool,
    /// Whether `cols.toks` holds the keys' tokens, resolved once per input row
    /// ([`Self::open`]) rather than once per chunk.
    toks_set: bool,
    ids: Vec<NodeId>,
    /// How many of `keys` the projection reads (the filter's own keys follow).
    n_above: usize,
    /// Whether the fused filter reads the end's properties from the columns: only while every
    /// column read so far held integers and nulls (the engine then answers a chunk from its
    /// integer columns, cheaper than a probe per end); the first other value (a key without
    /// an integer column: every end read one by one, and read again by the filter) turns it
    /// off for the operator's life, and the filter runs as written, one `node_probe` per end.
    filter_late: bool,
    /// How many chunks have been read since the operator was built (tests count them).
    pub(super) reads: u64,
}

impl LateCols {
    /// The columns for an expansion binding `to` under the projection items `above` (what
    /// `Builder::late_reads` handed over): the end's properties the projection reads. The
    /// fused filter's reads are not among them: the filter runs as written, where its
    /// label-and-property conjuncts are one `node_probe` per end (no column of a key can be
    /// cheaper than that probe, and a column of a non-integer key is one `node_property` per
    /// end on top of it).
    pub(super) fn new(to: Slot, pred: Option<&PExpr>, above: &[PExpr]) -> LateCols {
        fn col(keys: &mut Vec<Name>, k: &Name) -> usize {
            match keys.iter().position(|c| c == k) {
                Some(i) => i,
                None => {
                    keys.push(k.clone());
                    keys.len() - 1
                }
            }
        }
        let mut keys: Vec<Name> = Vec::new();
        let mut first_above = None;
        for e in above {
            if let PExpr::Property(b, k) = e {
                if matches!(**b, PExpr::Slot(s) if s == to) {
                    let i = col(&mut keys, k);
                    first_above.get_or_insert(i);
                }
            }
        }
        let n_above = keys.len();
        let mut filter_late = false;
        if let Some(p) = pred {
            filter_props(p, to, &mut |k: &Name| {
                filter_late = true;
                col(&mut keys, k)
            });
        }
        LateCols { keys, above: first_above, n_above, filter_late, ..LateCols::default() }
    }

    /// A new input row: the list of ends changes and the keys' tokens are resolved again on
    /// the next read (a statement that wrote in an earlier call may have created one).
    #[inline]
    pub(super) fn open(&mut self) {
        self.invalidate();
        self.toks_set = false;
    }

    /// The list of ends changed (a new batch of streamed ends).
    #[inline]
    pub(super) fn invalidate(&mut self) {
        self.gen = self.gen.wrapping_add(1);
        self.valid = false;
    }

    /// Makes the columns hold the chunk of list `seg` that contains index `i`; `fill` appends
    /// to its argument the ids of the list from the given index on, at most the given number.
    /// False when nothing is read late (no keys, or a statement that may write).
    #[inline]
    pub(super) fn ensure(
        &mut self,
        seg: usize,
        i: usize,
        ctx: &Ctx,
        g: &dyn Graph,
        fill: impl FnOnce(usize, usize, &mut Vec<NodeId>),
    ) -> bool {
        if self.keys.is_empty() || !ctx.read_only {
            return false;
        }
        let start = i - i % CHUNK;
        if self.valid && self.seg == seg && self.start == start {
            // Read in an earlier `Execution::next` call of a transaction that writes: the
            // rest of this chunk is read per end, as without columns.
            return self.epoch == ctx.epoch;
        }
        self.ids.clear();
        fill(start, CHUNK, &mut self.ids);
        let sc = self.cols.get_or_insert_with(|| ScanCols {
            node: NodeId(u64::MAX),
            pos: 0,
            toks: Vec::new(),
            cols: Vec::new(),
        });
        if !self.toks_set {
            sc.toks.clear();
            sc.toks.extend(self.keys.iter().map(|k| g.token_id(TokenKind::PropertyKey, k)));
            self.toks_set = true;
        }
        self.reads += 1;
        sc.cols.resize_with(self.keys.len(), Vec::new);
        for (c, tok) in sc.cols.iter_mut().zip(&sc.toks) {
            c.clear();
            match tok {
                Some(t) => g.node_property_batch(&self.ids, *t, c),
                None => c.resize(self.ids.len(), Value::Null),
            }
        }
        (self.seg, self.start, self.epoch, self.valid) = (seg, start, ctx.epoch, true);
        if self.filter_late
            && sc.cols.iter().flatten().any(|v| !matches!(v, Value::Int(_) | Value::Null))
        {
            // The filter's own columns are not read again (tokens resolved anew for the
            // shorter list at the next chunk; this chunk keeps the longer one).
            self.filter_late = false;
            self.keys.truncate(self.n_above);
            self.toks_set = false;
        }
        true
    }

    /// `pred` on `row`, whose end `end` is index `i` of the list the columns were read from
    /// (after a true [`Self::ensure`]), reading the end's properties from the columns while
    /// they serve the filter, else as written.
    #[inline]
    pub(super) fn test(
        &mut self,
        pred: &mut CompiledPred,
        i: usize,
        end: NodeId,
        row: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<bool> {
        if !self.filter_late {
            return pred.test(row, ctx, g);
        }
        let Some(mut sc) = self.cols.take() else { return pred.test(row, ctx, g) };
        sc.node = end;
        sc.pos = i - self.start;
        let outer = ctx.scan_cols.replace(sc);
        let r = pred.test(row, ctx, g);
        self.cols = std::mem::replace(&mut ctx.scan_cols, outer);
        r
    }

    /// Leaves the projected property of end `end` (index `i`) in the memo the projection
    /// above reads it from (after a true [`Self::ensure`]).
    #[inline]
    pub(super) fn memo(&self, i: usize, end: NodeId, ctx: &mut Ctx) {
        let (Some(c), Some(sc)) = (self.above, &self.cols) else { return };
        let (Some(Some(t)), Some(v)) =
            (sc.toks.get(c), sc.cols.get(c).and_then(|c| c.get(i - self.start)))
        else {
            return;
        };
        if matches!(
            v,
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::String(_)
        ) {
            ctx.last_prop = Some((end, *t, v.clone()));
        }
    }
}

/// The part of a distinct-end expansion that hands its ends on (see the module doc).
pub(super) struct EndLoop {
    pub(super) to: Slot,
    /// A `Filter` right above, evaluated on the working row, and its PROFILE operator id.
    pub(super) filter: Option<(CompiledPred, usize)>,
    pub(super) late: LateCols,
}

impl EndLoop {
    /// The loop for an expansion binding `to`, with the fused filter `filter` and the
    /// projection items above it that the builder handed over.
    pub(super) fn new(to: Slot, filter: Option<(PExpr, usize)>, above: &[PExpr]) -> EndLoop {
        let late = LateCols::new(to, filter.as_ref().map(|f| &f.0), above);
        EndLoop { to, filter: filter.map(|(p, id)| (CompiledPred::new(p), id)), late }
    }

    /// Puts end `end` into `row` and tells whether it passes the fused filter; `lated`: the
    /// late columns hold it at index `i` (a true [`LateCols::ensure`]). On a pass, the
    /// projected property is left in the memo.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pass(
        &mut self,
        end: NodeId,
        i: usize,
        lated: bool,
        row: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<bool> {
        match &mut row[self.to] {
            Value::Node(n) => *n = end,
            slot => *slot = Value::Node(end),
        }
        if let Some((pred, id)) = &mut self.filter {
            if ctx.profile {
                if let Some(c) = ctx.rows.get_mut(*id) {
                    *c += 1;
                }
            }
            let ok = if lated {
                self.late.test(pred, i, end, row, ctx, g)?
            } else {
                pred.test(row, ctx, g)?
            };
            if !ok {
                return Ok(false);
            }
        }
        if lated {
            self.late.memo(i, end, ctx);
        }
        Ok(true)
    }
}

/// One breadth-first level of both distinct-end expansions: calls `f(i, e)` for each
/// relationship `e` (in `dir`, of `types`, not `excluded`) of the `i`-th node of `nodes`,
/// counting one step per node and checking for an interrupt every 1,024 steps. Each node's
/// relationships are read in one `node_edges` call into `buf` (reused): the engine's base
/// writes them straight into it, cheaper than one callback per relationship.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn each_level_edge(
    nodes: impl Iterator<Item = NodeId>,
    dir: Direction,
    types: &[TokenId],
    excluded: impl Fn(RelId) -> bool,
    steps: &mut u64,
    ctx: &Ctx,
    g: &dyn Graph,
    buf: &mut Vec<Edge>,
    mut f: impl FnMut(usize, Edge),
) -> Result<()> {
    for (i, u) in nodes.enumerate() {
        *steps += 1;
        if steps.is_multiple_of(1024) {
            ctx.check_interrupt()?;
        }
        buf.clear();
        g.node_edges(u, dir, types, buf);
        for e in buf.iter() {
            if !excluded(e.rel) {
                f(i, *e);
            }
        }
    }
    Ok(())
}
