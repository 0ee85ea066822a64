//! `VarLengthExpand(All)`: lazy depth-first enumeration of relationship-unique paths.

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::{Name, Op};
use arbor_model::{equals, NodeId, RelId, Result, Value};

use super::builder::{build, Builder};
use super::pump::Pump;
use super::{rel_used, resolve_types};
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::{eval, CompiledPred};
use crate::graph::{Direction, Edge, Graph, TokenId, TokenKind};
use crate::traverse::DepthFirst;

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
pub(super) struct VarExpand {
    input: Box<dyn Operator>,
    from: Slot,
    rel: Slot,
    to: Slot,
    dir: Direction,
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
    pub(super) fn new(op: &Op, b: &mut Builder, filter: Option<(PExpr, usize)>) -> VarExpand {
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
            dir: *dir,
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
                Direction::Outgoing if s == cur => e,
                Direction::Incoming if e == cur => s,
                Direction::Both if s == cur => e,
                Direction::Both if e == cur => s,
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
}

impl Pump for VarExpand {
    fn input(&mut self) -> &mut dyn Operator {
        &mut *self.input
    }

    fn reopen(&mut self) {
        self.cur = None;
        self.dfs.clear();
        self.zero_pending = false;
        self.bound_result = None;
    }

    #[inline(always)]
    fn is_open(&self) -> bool {
        self.cur.is_some()
    }

    #[inline(always)]
    fn open(&mut self, mut r: Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()> {
        let Value::Node(from) = r[self.from] else { return Ok(()) };
        self.dfs.clear();
        self.zero_pending = false;
        self.bound_result = None;
        if self.rel_bound {
            self.bound_result = self.follow(from, &r[self.rel], g);
            self.cur = Some(r);
            return Ok(());
        }
        let Some(types) = resolve_types(g, &self.types) else {
            // No such type: only the zero-length path can match.
            if self.min == 0 {
                self.zero_pending = true;
                self.cur = Some(r);
            }
            return Ok(());
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
            return Ok(());
        }
        self.zero_pending = self.min == 0;
        if self.max != Some(0) {
            self.dfs.reset(from);
            let (dir, types) = (self.dir, &self.tok_types);
            let gr: &dyn Graph = g;
            self.dfs.expand_top(|_, out| gr.node_edges(from, dir, types, out));
        }
        self.cur = Some(r);
        Ok(())
    }

    /// The zero-length path or the bound list's path if pending, then the paths of the
    /// depth-first search, each written into the working row by `output`.
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

    #[inline(always)]
    fn close(&mut self, _: &mut Ctx) {
        self.cur = None;
    }
}
