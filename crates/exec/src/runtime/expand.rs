//! Single-hop `Expand`, `ShortestPath` and the builder of the expansion family (the
//! variable-length expansions run on the `Pump` driver of `pump`).

use std::collections::HashMap;
use std::sync::Arc;

use arbor_cypher_plan::expr::Slot;
use arbor_cypher_plan::ops::{Name, Op};
use arbor_model::{NodeId, PathRef, RelId, Result, Value};

use super::builder::{build, Builder};
use super::cursor::Cursor;
use super::pruning::PruningVarExpand;
use super::var_expand::VarExpand;
use super::{rel_used, resolve_types};
use crate::ctx::{Ctx, Operator, Row};
use crate::graph::{Direction, Edge, Graph, TokenId};

/// Builds an expansion operator (the builder's dispatch, [`super::build`], sends only those here).
pub(super) fn build_expand(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        // A filter right above a variable-length expansion runs inside it, on the expansion's
        // working row: a path the filter rejects then costs no row. The expansion keeps its
        // own PROFILE row count (its pre-order number is the next one).
        Op::Filter { input, pred, .. } if matches!(**input, Op::VarExpand { .. }) => {
            let id = b.next_id;
            b.next_id += 1;
            Box::new(VarExpand::new(input, b, Some((pred.clone(), id))))
        }
        // Likewise for the pruning expansion: an end the filter rejects costs no row.
        Op::Filter { input, pred, .. } if matches!(**input, Op::PruningVarExpand { .. }) => {
            let id = b.next_id;
            b.next_id += 1;
            Box::new(PruningVarExpand::new(input, b, Some((pred.clone(), id))))
        }
        Op::Expand { input, from, rel, to, dir, types, into, rel_bound, unique_with } => {
            Box::new(Expand {
                input: build(input, b),
                from: *from,
                rel: *rel,
                to: *to,
                dir: *dir,
                types: types.clone(),
                into: *into,
                rel_bound: *rel_bound,
                unique_with: unique_with.clone(),
                cursor: Cursor::new(),
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
                types: types.clone(),
                search: Search { dir: *dir, min: *min, max: *max, all: *all },
                scratch: Default::default(),
                cursor: Cursor::new(),
            })
        }
        _ => unreachable!("build_expand called on another operator"),
    }
}

struct Expand {
    input: Box<dyn Operator>,
    from: Slot,
    rel: Slot,
    to: Slot,
    dir: Direction,
    types: Vec<Name>,
    into: bool,
    rel_bound: bool,
    unique_with: Vec<Slot>,
    cursor: Cursor<Edge>,
}

impl Operator for Expand {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cursor.close();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let (from_slot, dir, types) = (self.from, self.dir, &self.types);
        let (rel, to, into, rel_bound) = (self.rel, self.to, self.into, self.rel_bound);
        let unique_with = &self.unique_with;
        self.cursor.next(
            &mut *self.input,
            ctx,
            g,
            |r, edges, _, g| {
                let Value::Node(from) = r[from_slot] else { return Ok(false) };
                let Some(types) = resolve_types(g, types) else { return Ok(false) };
                g.node_edges(from, dir, &types, edges);
                Ok(true)
            },
            |cur, e| {
                (!into || matches!(cur[to], Value::Node(n) if n == e.other))
                    && (!rel_bound || matches!(cur[rel], Value::Relationship(r) if r == e.rel))
                    && !rel_used(cur, unique_with, e.rel)
            },
            |row, e| {
                row[rel] = Value::Relationship(e.rel);
                row[to] = Value::Node(e.other);
            },
        )
    }
}

struct ShortestPath {
    input: Box<dyn Operator>,
    from: Slot,
    to: Slot,
    path: Slot,
    rel: Option<Slot>,
    types: Vec<Name>,
    search: Search,
    scratch: super::shortest::Scratch,
    cursor: Cursor<PathRef>,
}

/// What a shortest-path search looks for: direction, length bounds, one or all paths.
struct Search {
    dir: Direction,
    min: u64,
    max: Option<u64>,
    all: bool,
}

impl Search {
    /// Writes the shortest paths from `a` to `b` into `results` (empty on entry).
    fn run(
        &self,
        a: NodeId,
        b: NodeId,
        types: &[TokenId],
        g: &dyn Graph,
        results: &mut Vec<PathRef>,
        scratch: &mut super::shortest::Scratch,
    ) {
        let max = self.max.unwrap_or(u64::MAX);
        if a != b && self.min <= 1 {
            *results =
                super::shortest::bidirectional(scratch, g, a, b, self.dir, types, max, self.all);
            return;
        }
        // The same node at both ends, or a minimum length: one-sided, level by level.
        // Breadth-first by levels; every predecessor edge at the first level a node is reached
        // is kept, so all shortest paths can be rebuilt.
        let mut preds: HashMap<NodeId, Vec<(NodeId, RelId)>> = HashMap::new();
        let mut level: HashMap<NodeId, u64> = HashMap::new();
        level.insert(a, 0);
        let mut frontier = vec![a];
        let mut depth = 0u64;
        let mut found = a == b && self.min == 0;
        if found {
            results.push(PathRef { nodes: vec![a], rels: vec![] });
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
        *results = done;
    }
}

impl Operator for ShortestPath {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cursor.close();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let (from, to, rel, path) = (self.from, self.to, self.rel, self.path);
        let (types, search, scratch) = (&self.types, &self.search, &mut self.scratch);
        self.cursor.next(
            &mut *self.input,
            ctx,
            g,
            |r, results, _, g| {
                let (Value::Node(a), Value::Node(b)) = (&r[from], &r[to]) else { return Ok(false) };
                let Some(types) = resolve_types(g, types) else { return Ok(false) };
                search.run(*a, *b, &types, g, results, scratch);
                Ok(true)
            },
            |_, _| true,
            |row, p| {
                if let Some(rs) = rel {
                    row[rs] = Value::List(p.rels.iter().map(|r| Value::Relationship(*r)).collect());
                }
                // The item is not read again: the path moves into the row.
                let p = std::mem::replace(p, PathRef { nodes: Vec::new(), rels: Vec::new() });
                row[path] = Value::Path(Arc::new(p));
            },
        )
    }
}
