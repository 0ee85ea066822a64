//! `VarLengthExpand(Count)` ([`Op::VarExpandCount`]): the number of relationship-unique paths
//! of `min..=max` relationships whose end passes a filter, counted without producing a row per
//! path.
//!
//! The enumeration is `VarLengthExpand(All)`'s: depth-first over the shared path stack
//! ([`crate::traverse::DepthFirst`], reused across input rows and executions, so counting
//! allocates nothing per path), every relationship checked against the relationships of the
//! current path only (relationship isomorphism within one variable-length pattern needs no
//! more: two paths may share relationships, one path may not repeat one; the path mask makes
//! the check a bit test unless the relationship's bit is set). Per path, the end is written
//! into the working row (the input row) only when a filter reads it, the filter is tested,
//! and a counter is incremented: no row is handed on, no aggregation group is looked up.
//! Grouped (`per_row`), each input row with a nonzero count is handed on once, with it.
//!
//! Where the filter is absent or only tests the end's labels and one boolean property
//! (`b:B AND b.value`) in a read-only statement, the whole enumeration is handed to the graph
//! ([`Graph::count_trails`]): the engine runs the same depth-first loop over the same path
//! stack directly on its storage node handles (as its native traversal does), without a seam
//! call, a working row or a filter evaluation per path.
//! The planner's `var_count` rule explains why the count is the aggregation's.

use arbor_cypher_plan::expr::Slot;
use arbor_cypher_plan::ops::{Name, Op};
use arbor_model::{NodeId, Result, Value};

use super::builder::{build, Builder};
use super::resolve_types;
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::CompiledPred;
use crate::graph::{Direction, Edge, ExpandArgs, Graph, TokenId, TrailCount};
use crate::traverse::DepthFirst;

/// Builds the counting expansion (the builder's dispatch sends only [`Op::VarExpandCount`]).
pub(super) fn build_var_count(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    let Op::VarExpandCount { input, from, to, dir, types, min, max, pred, out, per_row } = op
    else {
        unreachable!("build_var_count on another operator")
    };
    Box::new(VarExpandCount {
        input: build(input, b),
        from: *from,
        to: *to,
        dir: *dir,
        types: types.clone(),
        min: *min,
        max: max.unwrap_or(u64::MAX),
        pred: pred.clone().map(CompiledPred::new),
        out: *out,
        per_row: *per_row,
        arg: Vec::new(),
        done: false,
        dfs: DepthFirst::default(),
        tok_types: Vec::new(),
        steps: 0,
    })
}

/// The counting expansion (see the module doc).
struct VarExpandCount {
    input: Box<dyn Operator>,
    from: Slot,
    to: Slot,
    dir: Direction,
    types: Vec<Name>,
    min: u64,
    max: u64,
    pred: Option<CompiledPred>,
    out: Slot,
    /// Each input row with a nonzero count is produced with it (else one total per argument).
    per_row: bool,
    /// The argument row: the one output row is it with the count in `out`.
    arg: Row,
    /// The output row of the current argument was produced.
    done: bool,
    /// The path stack, with relationship masks.
    dfs: DepthFirst<Edge, true>,
    tok_types: Vec<TokenId>,
    steps: u64,
}

impl VarExpandCount {
    /// Whether the path ending at `end` counts: the filter on the working row `row` with the
    /// end in `to`.
    #[inline(always)]
    fn passes(
        pred: &mut Option<CompiledPred>,
        to: Slot,
        end: NodeId,
        row: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<bool> {
        let Some(pred) = pred else { return Ok(true) };
        match &mut row[to] {
            // The common case: the previous end; no value to drop.
            Value::Node(n) => *n = end,
            slot => *slot = Value::Node(end),
        }
        pred.test(row, ctx, g)
    }

    /// The number of counted paths from the start node of input row `row`.
    fn count_row(&mut self, row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<u64> {
        let Value::Node(start) = row[self.from] else { return Ok(0) };
        let mut n = 0u64;
        if self.min == 0 && Self::passes(&mut self.pred, self.to, start, row, ctx, g)? {
            n += 1;
        }
        if self.max == 0 {
            return Ok(n);
        }
        // No such type: only the zero-length path could match.
        let Some(types) = resolve_types(g, &self.types) else { return Ok(n) };
        self.tok_types = types;
        if let Some(counted) = self.count_direct(start, ctx, &*g) {
            return Ok(n + counted?);
        }
        let (dir, min, max) = (self.dir, self.min, self.max);
        self.dfs.reset(start);
        {
            let (types, gr): (&[TokenId], &dyn Graph) = (&self.tok_types, g);
            self.dfs.expand_top(|_, out| gr.node_edges(start, dir, types, out));
        }
        while let Some(e) = self.dfs.next_edge() {
            self.steps += 1;
            if self.steps.is_multiple_of(1024) {
                ctx.check_interrupt()?;
            }
            if self.dfs.path_has_rel(e.rel) {
                continue;
            }
            self.dfs.push(e.other, e.rel);
            let depth = self.dfs.depth() as u64;
            if self.visit(e.other, depth < max, depth >= min, row, ctx, g)? {
                n += 1;
            }
        }
        Ok(n)
    }

    /// The trails from `start` counted by the graph in one call ([`Graph::count_trails`]:
    /// the engine's loop over its storage handles) when the filter is absent or tests only the
    /// end's labels and one boolean property, in a read-only statement; `None` where the
    /// graph has no such path (or gave up on a non-boolean value): then step by step below.
    fn count_direct(&mut self, start: NodeId, ctx: &Ctx, g: &dyn Graph) -> Option<Result<u64>> {
        if !ctx.read_only {
            return None;
        }
        let (labels, key): (&[TokenId], Option<TokenId>) = match &mut self.pred {
            None => (&[], None),
            Some(p) => {
                let (labels, key) = p.label_bool_form(self.to, ctx, g)?;
                (labels, Some(key))
            }
        };
        let q = TrailCount {
            start,
            dir: self.dir,
            types: &self.tok_types,
            min: self.min,
            max: self.max,
            labels,
            key,
        };
        g.count_trails(&q, &mut self.dfs, &mut || ctx.check_interrupt())
    }

    /// Visits `node`, just pushed as the end of the current path: appends its relationships
    /// to the path stack if `expand`, and if `test`, whether the path counts. The node is
    /// resolved once for both ([`Graph::node_expand_probe`]) when the filter starts with a
    /// probe of the end; otherwise the expansion and the filter read it separately.
    #[inline(always)]
    fn visit(
        &mut self,
        node: NodeId,
        expand: bool,
        test: bool,
        row: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<bool> {
        let (dir, to) = (self.dir, self.to);
        let probe = match &mut self.pred {
            Some(p) if test => p.probe_args(to, ctx, &*g),
            _ => None,
        };
        let Some((args, vals)) = probe else {
            if expand {
                let (types, gr): (&[TokenId], &dyn Graph) = (&self.tok_types, g);
                self.dfs.expand_top(|_, out| gr.node_edges(node, dir, types, out));
            }
            return Ok(test && Self::passes(&mut self.pred, to, node, row, ctx, g)?);
        };
        let passed = if expand {
            let (types, gr): (&[TokenId], &dyn Graph) = (&self.tok_types, g);
            let mut passed = false;
            self.dfs.expand_top(|_, edges| {
                let x = ExpandArgs { dir, types, edges };
                passed = gr.node_expand_probe(node, Some(x), Some(args), vals);
            });
            passed
        } else {
            g.node_expand_probe(node, None, Some(args), vals)
        };
        let Some(pred) = &mut self.pred else { return Ok(passed) };
        match &mut row[to] {
            Value::Node(n) => *n = node,
            slot => *slot = Value::Node(node),
        }
        pred.test_probed(passed, node, row, ctx, g)
    }
}

impl Operator for VarExpandCount {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.arg.clone_from(arg);
        self.done = false;
    }

    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.done {
            return Ok(None);
        }
        let mut total = 0u64;
        while let Some(mut r) = self.input.next(ctx, g)? {
            ctx.check_interrupt()?;
            let counted = self.count_row(&mut r, ctx, g);
            self.dfs.clear();
            let n = match counted {
                Ok(n) => n,
                Err(e) => {
                    ctx.recycle(r);
                    return Err(e);
                }
            };
            if self.per_row {
                if n == 0 {
                    ctx.recycle(r);
                    continue;
                }
                if let Some(slot) = r.get_mut(self.out) {
                    *slot = count_value(n);
                }
                return Ok(Some(r));
            }
            ctx.recycle(r);
            total += n;
        }
        self.done = true;
        if self.per_row {
            return Ok(None);
        }
        let mut row = self.arg.clone();
        if let Some(slot) = row.get_mut(self.out) {
            *slot = count_value(total);
        }
        Ok(Some(row))
    }
}

/// A count as Cypher's `count` returns it.
fn count_value(n: u64) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}
