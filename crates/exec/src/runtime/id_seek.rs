//! By-id seeks: `NodeByIdSeek` / `NodeByElementIdSeek` and the relationship forms
//! (`DirectedRelationshipByIdSeek`, ...). The id expression is evaluated per input row; each
//! id it names that is visible to the transaction (its own writes included, its deletes and
//! other transactions' uncommitted writes not) yields a row. `id()` seeks take integers (and
//! integral floats, which compare equal), `elementId()` seeks Arbor's element ids (`n:<id>`,
//! `r:<id>`); each id once, as the predicate (Neo4j 5.26 repeats an element id listed twice
//! when it plans the seek, but not when it scans: we follow the predicate). Anything else
//! (null, a malformed or foreign element id, a value of another type) names nothing. The
//! filter above re-checks the predicate, so a candidate here is never more than a candidate.
use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::{IdSeek, Op};
use arbor_model::{NodeId, RelId, Result, Value};

use super::builder::{build, Builder};
use super::cursor::Cursor;
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::eval;
use crate::graph::{Direction, Graph};

/// Builds a by-id seek (the builder's dispatch sends only those here).
pub(super) fn build_id_seek(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        Op::NodeByIdSeek { input, slot, ids, seek } => Box::new(NodeByIdSeek {
            input: build(input, b),
            slot: *slot,
            ids: ids.clone(),
            seek: *seek,
            cursor: Cursor::new(),
        }),
        Op::RelByIdSeek { input, rel, start, end, dir, ids, seek } => Box::new(RelByIdSeek {
            input: build(input, b),
            rel: *rel,
            start: *start,
            end: *end,
            dir: *dir,
            ids: ids.clone(),
            seek: *seek,
            cursor: Cursor::new(),
        }),
        _ => unreachable!("build_id_seek called on another operator"),
    }
}

/// The ids `value` names, in order: one value, or each element of a list.
pub(crate) fn ids_named(value: &Value, seek: IdSeek, prefix: &str, out: &mut Vec<u64>) {
    let one = |v: &Value| -> Option<u64> {
        match (v, seek.element) {
            (Value::Int(i), false) => u64::try_from(*i).ok(),
            (Value::Float(f), false) if f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19 => {
                Some(*f as u64)
            }
            (Value::String(s), true) => parse_element_id(s, prefix),
            _ => None,
        }
    };
    match (value, seek.list) {
        (Value::List(items), true) => out.extend(items.iter().filter_map(one)),
        (v, false) => out.extend(one(v)),
        _ => {}
    }
    if out.len() > 1 {
        // `id(x) IN [1, 1]` matches `x` once (a dedup keeping the first occurrence).
        let mut seen = std::collections::HashSet::with_capacity(out.len());
        out.retain(|id| seen.insert(*id));
    }
}

/// The id of an element id `"<prefix>:<digits>"` as `elementId()` writes it.
pub(crate) fn parse_element_id(s: &str, prefix: &str) -> Option<u64> {
    let digits = s.strip_prefix(prefix)?.strip_prefix(':')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn eval_ids(
    ids: &PExpr,
    seek: IdSeek,
    prefix: &str,
    r: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Vec<u64>> {
    let v = eval(ids, r, ctx, g)?;
    let mut out = Vec::new();
    ids_named(&v, seek, prefix, &mut out);
    Ok(out)
}

struct NodeByIdSeek {
    input: Box<dyn Operator>,
    slot: Slot,
    ids: PExpr,
    seek: IdSeek,
    cursor: Cursor<NodeId>,
}

impl Operator for NodeByIdSeek {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cursor.close();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let (ids, seek, slot) = (&self.ids, self.seek, self.slot);
        self.cursor.next(
            &mut *self.input,
            ctx,
            g,
            |r, found, ctx, g| {
                for id in eval_ids(ids, seek, "n", r, ctx, g)? {
                    let id = NodeId(id);
                    if g.node_exists(id) && !g.node_deleted_in_tx(id) {
                        found.push(id);
                    }
                }
                Ok(!found.is_empty())
            },
            |_, _| true,
            |row, id| row[slot] = Value::Node(*id),
        )
    }
}

struct RelByIdSeek {
    input: Box<dyn Operator>,
    rel: Slot,
    start: Slot,
    end: Slot,
    dir: Direction,
    ids: PExpr,
    seek: IdSeek,
    /// `(relationship, start-slot node, end-slot node)` for the open input row.
    cursor: Cursor<(RelId, NodeId, NodeId)>,
}

impl Operator for RelByIdSeek {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cursor.close();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let (ids, seek, dir) = (&self.ids, self.seek, self.dir);
        let (rel, start, end) = (self.rel, self.start, self.end);
        self.cursor.next(
            &mut *self.input,
            ctx,
            g,
            |r, found, ctx, g| {
                for id in eval_ids(ids, seek, "r", r, ctx, g)? {
                    let id = RelId(id);
                    if g.rel_deleted_in_tx(id) {
                        continue;
                    }
                    let Some((s, e, _)) = g.rel_info(id) else { continue };
                    let mut push = |a: NodeId, b: NodeId| {
                        // `(x)-[r]-(x)`: only a self-loop binds both ends to one node.
                        if start != end || a == b {
                            found.push((id, a, b));
                        }
                    };
                    match dir {
                        Direction::Outgoing => push(s, e),
                        Direction::Incoming => push(e, s),
                        Direction::Both => {
                            push(s, e);
                            // A self-loop matches an undirected pattern once, as `Expand`.
                            if s != e {
                                push(e, s);
                            }
                        }
                    }
                }
                Ok(!found.is_empty())
            },
            |_, _| true,
            |row, &mut (id, a, b)| {
                row[rel] = Value::Relationship(id);
                row[start] = Value::Node(a);
                row[end] = Value::Node(b);
            },
        )
    }
}
