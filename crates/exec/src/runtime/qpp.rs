//! GQL path patterns: `Repeat(Trail)`, the trails of a quantified path pattern, and
//! `SelectPaths`, the path selectors `SHORTEST k [GROUPS]` and `ANY k`.
//!
//! `Repeat` enumerates, per input row, every trail of `min..=max` iterations of the inner
//! pattern depth-first (an iteration is a depth-first walk of the inner hops; its predicates
//! are tested once it is complete, over the singleton slots of the working row), keeping no
//! relationship twice and none the rest of the clause already holds. A trail uses each
//! relationship at most once, so the enumeration ends on any graph; its depth is bounded by
//! [`MAX_TRAIL`] so a huge unbounded pattern fails cleanly instead of exhausting the stack.

use std::collections::{HashMap, VecDeque};

use arbor_cypher_plan::expr::Slot;
use arbor_cypher_plan::ops::{Op, Repeat};
use arbor_model::{Error, NodeId, RelId, Result, Status, Value};

use super::builder::{build, Builder};
use super::{rel_used, resolve_types};
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::CompiledPred;
use crate::graph::{Direction, Edge, Graph, TokenId};

/// The longest trail a quantified path pattern may follow (in relationships).
const MAX_TRAIL: usize = 100_000;

/// Builds `Repeat` and `SelectPaths`.
pub(super) fn build_qpp(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        Op::Repeat(r) => Box::new(RepeatOp {
            input: build(&r.input, b),
            pred: r.pred.clone().map(CompiledPred::new),
            spec: r.clone(),
            out: VecDeque::new(),
        }),
        Op::SelectPaths { input, inner, start, end, path, k, groups, .. } => {
            Box::new(SelectPaths {
                input: build(input, b),
                inner: build(inner, b),
                start: *start,
                end: *end,
                path: *path,
                k: *k,
                groups: *groups,
                out: VecDeque::new(),
            })
        }
        _ => unreachable!("build_qpp is only called on Repeat and SelectPaths"),
    }
}

struct RepeatOp {
    input: Box<dyn Operator>,
    spec: Box<Repeat>,
    pred: Option<CompiledPred>,
    /// The results of the current input row still to hand out.
    out: VecDeque<Row>,
}

/// The state of one depth-first enumeration.
struct Walk {
    /// Each hop's direction and resolved types (`None`: a type no relationship has).
    hops: Vec<(Direction, Option<Vec<TokenId>>)>,
    /// The trail so far.
    used: Vec<RelId>,
    /// Per group variable, its values so far.
    groups: Vec<Vec<Value>>,
    iterations: u64,
}

impl RepeatOp {
    /// Every trail from `start` for the input row `row` (used as the working row).
    fn expand(
        &mut self,
        row: &mut Row,
        start: NodeId,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        let hops = self.spec.hops.iter().map(|h| (h.dir, resolve_types(g, &h.types))).collect();
        let mut w = Walk {
            hops,
            used: Vec::new(),
            groups: vec![Vec::new(); self.spec.groups.len()],
            iterations: 0,
        };
        self.iterate(row, start, &mut w, ctx, g)
    }

    /// At `node` after `w.iterations` iterations: emits the trail if long enough, then tries
    /// one more iteration.
    fn iterate(
        &mut self,
        row: &mut Row,
        node: NodeId,
        w: &mut Walk,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        ctx.check_interrupt()?;
        let s = &self.spec;
        if w.iterations >= s.min && (!s.into || matches!(row[s.to], Value::Node(n) if n == node)) {
            let mut r = row.clone();
            r[s.to] = Value::Node(node);
            r[s.rels] = Value::List(w.used.iter().map(|r| Value::Relationship(*r)).collect());
            for ((_, gs), vals) in s.groups.iter().zip(&w.groups) {
                r[*gs] = Value::List(vals.clone());
            }
            self.out.push_back(r);
        }
        if s.max.is_some_and(|m| w.iterations >= m) {
            return Ok(());
        }
        if w.used.len() > MAX_TRAIL {
            return Err(Error::new(
                Status::MemoryExhausted,
                format!("A quantified path pattern reached more than {MAX_TRAIL} relationships"),
            ));
        }
        self.hop(row, 0, node, node, w, ctx, g)
    }

    /// Follows inner hop `i` from `cur` (the iteration began at `first`).
    #[allow(clippy::too_many_arguments)]
    fn hop(
        &mut self,
        row: &mut Row,
        i: usize,
        first: NodeId,
        cur: NodeId,
        w: &mut Walk,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<()> {
        if i == w.hops.len() {
            row[self.spec.first] = Value::Node(first);
            if let Some(p) = &mut self.pred {
                if !p.test(row, ctx, g)? {
                    return Ok(());
                }
            }
            for ((s, _), vals) in self.spec.groups.iter().zip(&mut w.groups) {
                vals.push(row[*s].clone());
            }
            w.iterations += 1;
            let r = self.iterate(row, cur, w, ctx, g);
            w.iterations -= 1;
            for vals in &mut w.groups {
                vals.pop();
            }
            return r;
        }
        let (dir, types) = &w.hops[i];
        let Some(types) = types else { return Ok(()) };
        let mut edges: Vec<Edge> = Vec::new();
        g.node_edges(cur, *dir, types, &mut edges);
        let (rel_slot, node_slot) = (self.spec.hops[i].rel, self.spec.hops[i].node);
        for e in edges {
            if w.used.contains(&e.rel) || rel_used(row, &self.spec.unique_with, e.rel) {
                continue;
            }
            w.used.push(e.rel);
            row[rel_slot] = Value::Relationship(e.rel);
            row[node_slot] = Value::Node(e.other);
            let r = self.hop(row, i + 1, first, e.other, w, ctx, g);
            w.used.pop();
            r?;
        }
        Ok(())
    }
}

impl Operator for RepeatOp {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.out.clear();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.out.pop_front() {
                return Ok(Some(r));
            }
            let Some(mut row) = self.input.next(ctx, g)? else { return Ok(None) };
            let Value::Node(start) = row[self.spec.from] else { continue };
            self.expand(&mut row, start, ctx, g)?;
        }
    }
}

/// A partition of selected paths: its start and end nodes.
type Ends = (Option<NodeId>, Option<NodeId>);

fn node_of(v: &Value) -> Option<NodeId> {
    match v {
        Value::Node(n) => Some(*n),
        _ => None,
    }
}

/// `SHORTEST k [GROUPS]` / `ANY k` over the rows of the planned pattern.
///
/// Which paths, when several are valid: per pair of end nodes, the shortest first, and of one
/// length the one the depth-first expansion meets first (it follows each node's relationships
/// in the order they were created; `ANY` takes the shortest too, as Neo4j's breadth-first
/// search does). The selected rows of all pairs come out by path length, then by the order
/// their end nodes were first reached, as Neo4j emits them level by level. Neo4j breaks ties
/// by its own store's relationship order, so between equal-length paths it may pick another.
struct SelectPaths {
    input: Box<dyn Operator>,
    inner: Box<dyn Operator>,
    start: Slot,
    end: Slot,
    path: Slot,
    k: u64,
    groups: bool,
    out: VecDeque<Row>,
}

impl SelectPaths {
    /// Keeps, of one partition's rows, those the selector selects (in order of length; rows
    /// of one length keep the order they were found in).
    fn select(&self, mut rows: Vec<(usize, Row)>) -> Vec<(usize, Row)> {
        let k = usize::try_from(self.k).unwrap_or(usize::MAX);
        // Stable: paths of one length keep the order the expansion found them in.
        rows.sort_by_key(|(len, _)| *len);
        if !self.groups {
            rows.truncate(k);
            return rows;
        }
        let mut lengths = 0;
        let mut last = None;
        let mut out = Vec::new();
        for (len, r) in rows {
            if last != Some(len) {
                lengths += 1;
                last = Some(len);
            }
            if lengths > k {
                break;
            }
            out.push((len, r));
        }
        out
    }
}

impl Operator for SelectPaths {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.out.clear();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.out.pop_front() {
                return Ok(Some(r));
            }
            let Some(row) = self.input.next(ctx, g)? else { return Ok(None) };
            self.inner.reset(&row);
            // Partitions by (start, end) in the order they were first seen.
            let mut order: Vec<Ends> = Vec::new();
            let mut parts: HashMap<Ends, Vec<(usize, Row)>> = HashMap::new();
            while let Some(r) = self.inner.next(ctx, g)? {
                let key = (node_of(&r[self.start]), node_of(&r[self.end]));
                let len = match &r[self.path] {
                    Value::Path(p) => p.rels.len(),
                    _ => 0,
                };
                let entry = parts.entry(key).or_default();
                if entry.is_empty() {
                    order.push(key);
                }
                entry.push((len, r));
            }
            let mut selected = Vec::new();
            for key in order {
                if let Some(rows) = parts.remove(&key) {
                    selected.extend(self.select(rows));
                }
            }
            selected.sort_by_key(|(len, _)| *len);
            self.out.extend(selected.into_iter().map(|(_, r)| r));
        }
    }
}
