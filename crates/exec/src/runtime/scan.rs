//! Leaf and seek operators: the argument row, label scans, index seeks (equality, range,
//! relationship) and counts answered from the count store.

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::{Name, Op, SeekRange};
use arbor_model::{equals, NodeId, RelId, Result, Value};

use super::builder::{build, Builder};
use super::cursor::Cursor;
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::eval;
use crate::graph::{Direction, Graph, TokenId, TokenKind, ValueRange};

/// Builds a leaf or seek operator (the builder's dispatch, [`super::build`], sends only those here).
pub(super) fn build_scan(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
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
            cursor: Cursor::new(),
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
                dir: *dir,
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
        _ => unreachable!("build_scan called on another operator"),
    }
}

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
    cursor: Cursor<NodeId>,
}

impl Operator for IndexSeek {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.cursor.close();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let (label, key, value, slot) = (&self.label, &self.key, &self.value, self.slot);
        self.cursor.next(
            &mut *self.input,
            ctx,
            g,
            |r, ids, ctx, g| {
                let v = eval(value, r, ctx, g)?;
                // Cached per execution: a seek per row would otherwise hash both names.
                let (Some(l), Some(k)) = (
                    ctx.token(&*g, TokenKind::Label, label),
                    ctx.token(&*g, TokenKind::PropertyKey, key),
                ) else {
                    return Ok(false);
                };
                if v.is_null() {
                    return Ok(false);
                }
                // Into the cursor's item buffer: no vector per seek.
                if !g.index_seek_into(l, k, &v, ids) {
                    // No usable index: scan the label and compare.
                    let mut from = NodeId(0);
                    while let Some(id) = g.next_node(Some(l), from) {
                        from = NodeId(id.0 + 1);
                        if let Some(p) = g.node_property(id, k) {
                            if equals(&p, &v) == Some(true) {
                                ids.push(id);
                            }
                        }
                    }
                }
                Ok(true)
            },
            |_, _| true,
            |row, id| row[slot] = Value::Node(*id),
        )
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
            SeekRange::Range { .. }
            | SeekRange::Prefix(_)
            | SeekRange::Contains(_)
            | SeekRange::EndsWith(_)
            | SeekRange::Distance { .. }
            | SeekRange::BBox { .. } => match eval_value_range(&self.seek, r, ctx, g)? {
                Some(Some(range)) => range,
                Some(None) => return Ok(SeekPlan::Empty),
                None => return Ok(SeekPlan::Scan),
            },
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

/// The value range of a `Range`, `Prefix`, `Contains` or `EndsWith` seek for one row: `Some(None)` when nothing can
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
        SeekRange::Contains(e) | SeekRange::EndsWith(e) => match eval(e, r, ctx, g)? {
            Value::Null => Some(None),
            Value::String(p) if matches!(seek, SeekRange::Contains(_)) => {
                Some(Some(ValueRange::Contains(p.to_string())))
            }
            Value::String(p) => Some(Some(ValueRange::EndsWith(p.to_string()))),
            _ => None,
        },
        // A centre or corner that is not a point finds nothing, as Neo4j's POINT index
        // answers; a distance that is not a number leaves it to the filter.
        SeekRange::Distance { point, distance, .. } => {
            match (eval(point, r, ctx, g)?, eval(distance, r, ctx, g)?) {
                (Value::Point(center), Value::Int(d)) => {
                    Some(Some(ValueRange::Near { center, distance: d as f64 }))
                }
                (Value::Point(center), Value::Float(d)) if !d.is_nan() => {
                    Some(Some(ValueRange::Near { center, distance: d }))
                }
                (Value::Point(_), Value::Float(_) | Value::String(_) | Value::Bool(_)) => None,
                _ => Some(None),
            }
        }
        SeekRange::BBox { lo, hi } => match (eval(lo, r, ctx, g)?, eval(hi, r, ctx, g)?) {
            (Value::Point(lo), Value::Point(hi)) => Some(Some(ValueRange::Within { lo, hi })),
            _ => Some(None),
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
    dir: Direction,
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
                Direction::Outgoing => push(s, e),
                Direction::Incoming => push(e, s),
                Direction::Both => {
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
