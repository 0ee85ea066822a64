//! Expression evaluation over slot-indexed rows, with Cypher's three-valued logic.
//!
//! `eval` takes the row mutably only so comprehensions can bind their local variable in its
//! slot while they iterate (restoring it afterwards); it never changes other slots.

use std::cmp::Ordering;
use std::sync::Arc;

use arbor_cypher_plan::expr::{ArithOp, Builtin, MapProjItem, PExpr, PathStep, Slot, StringOp};
use arbor_cypher_syntax::ast::{CompareOp, Quantifier};
use arbor_model::ops as vops;
use arbor_model::{
    compare_op, equals, CmpOp, Error, NodeId, PathRef, PropertyMap, RelId, Result, Status, Value,
};

use crate::ctx::{Ctx, Row};
use crate::graph::{Graph, TokenId, TokenKind};

fn type_err(msg: impl Into<String>) -> Error {
    Error::type_error(msg).with_detail("InvalidArgumentType")
}

fn truth(v: &Value, what: &str) -> Result<Option<bool>> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Null => Ok(None),
        other => Err(type_err(format!(
            "Type mismatch: expected Boolean but was {} ({what})",
            other.type_name()
        ))),
    }
}

/// Evaluates a predicate: only `true` passes.
pub(crate) fn eval_pred(
    e: &PExpr,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<bool> {
    Ok(pred3(e, None, row, ctx, g)? == Some(true))
}

/// A predicate's three-valued result, exactly as `truth(eval(e))` (with `what` naming the
/// operator whose operand it is; `None` at the top of a filter, where anything but `true`
/// simply fails). The shapes filters are made of (conjunctions, label tests and properties of
/// a variable) are answered here directly, without building intermediate values through the
/// general `eval`; everything else goes to `eval`.
fn pred3(
    e: &PExpr,
    what: Option<&str>,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Option<bool>> {
    match e {
        PExpr::And(a, b) => {
            let x = pred3(a, Some("AND"), row, ctx, g)?;
            if x == Some(false) {
                return Ok(Some(false));
            }
            let y = pred3(b, Some("AND"), row, ctx, g)?;
            return Ok(match (x, y) {
                (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            });
        }
        PExpr::HasLabels(a, labels) => {
            if let PExpr::Slot(s) = **a {
                match row.get(s) {
                    Some(Value::Node(id)) => {
                        let id = *id;
                        return Ok(Some(labels.iter().all(|l| {
                            ctx.token(&*g, TokenKind::Label, l)
                                .is_some_and(|t| g.node_has_label(id, t))
                        })));
                    }
                    Some(Value::Null) | None => return Ok(None),
                    Some(_) => {}
                }
            }
        }
        PExpr::Property(a, key) => {
            if let PExpr::Slot(s) = **a {
                if let Some(b @ (Value::Node(_) | Value::Relationship(_))) = row.get(s) {
                    let b = b.clone();
                    let tok = ctx.token(&*g, TokenKind::PropertyKey, key);
                    let v = entity_property(&b, tok, g)?;
                    return pred_of(&v, what);
                }
            }
        }
        _ => {}
    }
    let v = eval(e, row, ctx, g)?;
    pred_of(&v, what)
}

/// A filter compiled once per operator for per-row hot loops (the filters fused into
/// expansions): its conjuncts in source order, with the shapes such filters are made of
/// (`n:L`, `n.key` used as a boolean) answered with token ids resolved once, and everything
/// else handed to `pred3`. Same results and the same errors as [`eval_pred`]: a conjunct is
/// evaluated only if none before it was false, and a value of another type than expected
/// falls back to `pred3` on that conjunct.
pub(crate) struct CompiledPred {
    /// The filter as written: the reference `test` is checked against.
    #[cfg(test)]
    whole: PExpr,
    conj: Vec<Conj>,
    /// The operator the conjuncts are operands of, for type errors (`None` for one conjunct,
    /// as at the top of a filter).
    what: Option<&'static str>,
    /// The leading conjuncts answered by one `Graph::node_probe` (see [`NodeGroup`]).
    group: Option<NodeGroup>,
}

/// Leading conjuncts of a filter that test labels of one node and then read its properties
/// (`b:B AND b.value`, `n:L AND n.age > $min`): all label conjuncts come first, then at least
/// one `n.key` or `n.key <op> literal-or-parameter`. In a read-only statement they are
/// answered by one [`Graph::node_probe`], which resolves the node once, instead of one
/// graph call (and node lookup) per label and per property. Same answers as the conjuncts one
/// by one: a failed label makes the filter false before any property is looked at, the
/// properties are then evaluated in source order from the values read, and a value of
/// another type than a conjunct expects falls back to the conjunct's general evaluation.
/// Reads have no effect in a read-only statement (nothing can be deleted there, so no read
/// fails), which is what allows reading them together.
struct NodeGroup {
    slot: Slot,
    /// Conjuncts `[0, labels_end)` are label tests, `[labels_end, end)` property tests.
    labels_end: usize,
    end: usize,
    label_names: Vec<Arc<str>>,
    key_names: Vec<Arc<str>>,
    /// Tokens, once every one of them exists (until then the conjuncts run one by one:
    /// they look missing tokens up again, as a token may be created during the statement).
    label_toks: Vec<TokenId>,
    key_toks: Vec<TokenId>,
    resolved: bool,
    /// The property values of the current node (reused).
    vals: Vec<Value>,
}

impl NodeGroup {
    /// The group of `conj`, if it starts with one (see the type's documentation).
    fn of(conj: &[Conj]) -> Option<NodeGroup> {
        let slot = match conj.first()?.kind {
            ConjKind::Label { slot, .. } | ConjKind::Labels { slot, .. } => slot,
            _ => return None,
        };
        let mut label_names = Vec::new();
        let mut i = 0;
        while let Some(c) = conj.get(i) {
            match &c.kind {
                ConjKind::Label { slot: s, name, .. } if *s == slot => {
                    label_names.push(name.clone())
                }
                ConjKind::Labels { slot: s, labels } if *s == slot => {
                    label_names.extend(labels.iter().map(|(n, _)| n.clone()))
                }
                _ => break,
            }
            i += 1;
        }
        let labels_end = i;
        let mut key_names = Vec::new();
        while let Some(c) = conj.get(i) {
            match &c.kind {
                ConjKind::Prop { slot: s, key, .. } | ConjKind::Cmp { slot: s, key, .. }
                    if *s == slot =>
                {
                    key_names.push(key.clone())
                }
                _ => break,
            }
            i += 1;
        }
        if key_names.is_empty() {
            return None;
        }
        Some(NodeGroup {
            slot,
            labels_end,
            end: i,
            label_names,
            key_names,
            label_toks: Vec::new(),
            key_toks: Vec::new(),
            resolved: false,
            vals: Vec::new(),
        })
    }

    /// Whether every token exists (looked up until they all do, then kept).
    #[inline]
    fn resolve(&mut self, g: &dyn Graph) -> bool {
        self.resolved || self.resolve_slow(g)
    }

    /// The lookups of [`Self::resolve`], out of line (once per execution).
    #[inline(never)]
    fn resolve_slow(&mut self, g: &dyn Graph) -> bool {
        let labels: Option<Vec<TokenId>> =
            self.label_names.iter().map(|n| g.token_id(TokenKind::Label, n)).collect();
        let keys: Option<Vec<TokenId>> =
            self.key_names.iter().map(|n| g.token_id(TokenKind::PropertyKey, n)).collect();
        if let (Some(l), Some(k)) = (labels, keys) {
            (self.label_toks, self.key_toks, self.resolved) = (l, k, true);
        }
        self.resolved
    }
}

#[cfg(test)]
thread_local! {
    /// Tests set this to run every compiled filter through the general evaluator instead.
    pub(crate) static GENERAL_PREDICATES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

enum ConjKind {
    /// `slot:L` (the common case, without a loop); a token is cached once found (tokens are
    /// never removed).
    Label {
        slot: Slot,
        name: Arc<str>,
        tok: Option<u32>,
    },
    /// `slot:L1:L2...`.
    Labels {
        slot: Slot,
        labels: Vec<(Arc<str>, Option<u32>)>,
    },
    /// `slot.key <op> c` with `c` a literal or a parameter (`n.age >= 18`).
    Cmp {
        slot: Slot,
        key: Arc<str>,
        tok: Option<u32>,
        op: CompareOp,
        rhs: PExpr,
    },
    /// `slot.key` as a boolean.
    Prop {
        slot: Slot,
        key: Arc<str>,
        tok: Option<u32>,
    },
    Other,
}

struct Conj {
    kind: ConjKind,
    expr: PExpr,
}

impl CompiledPred {
    pub(crate) fn new(e: PExpr) -> CompiledPred {
        #[cfg(test)]
        let whole = e.clone();
        let mut parts = Vec::new();
        e.conjuncts_into(&mut parts);
        let what = (parts.len() > 1).then_some("AND");
        let conj: Vec<Conj> = parts
            .into_iter()
            .map(|expr| {
                let kind = match &expr {
                    PExpr::HasLabels(a, labels) => match **a {
                        PExpr::Slot(slot) if labels.len() == 1 => {
                            ConjKind::Label { slot, name: labels[0].clone(), tok: None }
                        }
                        PExpr::Slot(slot) => ConjKind::Labels {
                            slot,
                            labels: labels.iter().map(|l| (l.clone(), None)).collect(),
                        },
                        _ => ConjKind::Other,
                    },
                    PExpr::Property(a, key) => match **a {
                        PExpr::Slot(slot) => ConjKind::Prop { slot, key: key.clone(), tok: None },
                        _ => ConjKind::Other,
                    },
                    PExpr::Compare(a, rest) => match (&**a, rest.as_slice()) {
                        (
                            PExpr::Property(b, key),
                            [(op, rhs @ (PExpr::Const(_) | PExpr::Param(_)))],
                        ) => match **b {
                            PExpr::Slot(slot) => ConjKind::Cmp {
                                slot,
                                key: key.clone(),
                                tok: None,
                                op: *op,
                                rhs: rhs.clone(),
                            },
                            _ => ConjKind::Other,
                        },
                        _ => ConjKind::Other,
                    },
                    _ => ConjKind::Other,
                };
                Conj { kind, expr }
            })
            .collect();
        CompiledPred {
            #[cfg(test)]
            whole,
            group: NodeGroup::of(&conj),
            conj,
            what,
        }
    }

    /// For a batch of a column aggregation whose scan binds `slot`: per row, the filter's
    /// answer where its leading conjuncts of the form `n.key <op> integer` decide it from the
    /// batch's columns (`Some(false)`: one of them is false and all before it true;
    /// `Some(true)`: every conjunct is one of them and true), `None` where [`Self::test`]
    /// must run. The same answers as `test`, which evaluates conjuncts in order and stops at
    /// the first false one; a null or another type leaves the row to `test`.
    pub(crate) fn decide_batch(
        &mut self,
        ctx: &Ctx,
        g: &dyn Graph,
        slot: Slot,
        n: usize,
        out: &mut Vec<Option<bool>>,
    ) {
        out.clear();
        out.resize(n, Some(true));
        #[cfg(test)]
        if GENERAL_PREDICATES.with(|f| f.get()) {
            out.iter_mut().for_each(|d| *d = None);
            return;
        }
        let Some(sc) = ctx.scan_cols.as_ref() else {
            out.iter_mut().for_each(|d| *d = None);
            return;
        };
        for c in &mut self.conj {
            let cmp = match &mut c.kind {
                ConjKind::Cmp { slot: s, key, tok, op, rhs } if *s == slot => {
                    if tok.is_none() {
                        *tok = g.token_id(TokenKind::PropertyKey, key);
                    }
                    let k = match rhs {
                        PExpr::Const(Value::Int(k)) => Some(*k),
                        PExpr::Param(i) => match ctx.params.get(*i) {
                            Some(Value::Int(k)) => Some(*k),
                            _ => None,
                        },
                        _ => None,
                    };
                    match (tok.and_then(|t| sc.column(t)), k) {
                        (Some(col), Some(k)) if col.len() == n => Some((col, *op, k)),
                        _ => None,
                    }
                }
                _ => None,
            };
            match cmp {
                Some((col, op, k)) => {
                    for (d, v) in out.iter_mut().zip(col) {
                        if *d == Some(true) {
                            *d = match v {
                                Value::Int(x) => Some(int_compare(op, *x, k)),
                                _ => None,
                            };
                        }
                    }
                }
                None => {
                    // Not decidable here: the rows still open go to `test`.
                    for d in out.iter_mut() {
                        if *d == Some(true) {
                            *d = None;
                        }
                    }
                    return;
                }
            }
        }
    }

    /// Whether the row passes (only `true` does).
    ///
    /// Inline, it is only the common start of a filter with a [`NodeGroup`] whose tokens are
    /// resolved: the one `node_probe` call, and the return when the labels reject the node
    /// (most nodes an expansion's filter sees); everything else is out of line
    /// ([`Self::test_general`], [`Self::after_probe`]), so a rejected node costs the caller
    /// no call into a large function.
    #[inline(always)]
    pub(crate) fn test(&mut self, row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<bool> {
        #[cfg(test)]
        if GENERAL_PREDICATES.with(|f| f.get()) {
            return eval_pred(&self.whole, row, ctx, g);
        }
        if let Some(gp) = &mut self.group {
            if let (true, true, None, Some(&Value::Node(id))) =
                (gp.resolved, ctx.read_only, &ctx.scan_cols, row.get(gp.slot))
            {
                // Almost always empty already (`after_probe` pops the one value of a
                // single-key group): skip the out-of-line drop of an empty slice.
                if !gp.vals.is_empty() {
                    gp.vals.clear();
                }
                if !g.node_probe(id, &gp.label_toks, &gp.key_toks, &mut gp.vals) {
                    return Ok(false);
                }
                return self.after_probe(id, row, ctx, g);
            }
        }
        self.test_general(row, ctx, g)
    }

    /// [`Self::test`] from the start (resolving the group's tokens if they are not yet).
    #[inline(never)]
    fn test_general(&mut self, row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<bool> {
        if let Some(gp) = &mut self.group {
            if let (true, None, Some(&Value::Node(id))) =
                (ctx.read_only, &ctx.scan_cols, row.get(gp.slot))
            {
                if gp.resolve(g) {
                    gp.vals.clear();
                    if !g.node_probe(id, &gp.label_toks, &gp.key_toks, &mut gp.vals) {
                        return Ok(false);
                    }
                    return self.after_probe(id, row, ctx, g);
                }
            }
        }
        self.test_from(0, true, row, ctx, g)
    }

    /// [`Self::test`] once the group's `node_probe` of node `id` has passed: its property
    /// conjuncts from the values read, then the conjuncts after the group.
    #[inline(never)]
    fn after_probe(
        &mut self,
        id: NodeId,
        row: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<bool> {
        let what = self.what;
        let mut all_true = true;
        let mut from = 0;
        if let Some(gp) = &mut self.group {
            let props = self.conj.get_mut(gp.labels_end..gp.end).unwrap_or_default();
            for (c, v) in props.iter_mut().zip(&gp.vals) {
                let r = match (&c.kind, v) {
                    (ConjKind::Prop { .. }, Value::Bool(b)) => Some(*b),
                    (ConjKind::Prop { .. } | ConjKind::Cmp { .. }, Value::Null) => None,
                    (ConjKind::Cmp { op, rhs: PExpr::Const(k), .. }, v) => compare(*op, v, k),
                    (ConjKind::Cmp { op, rhs: PExpr::Param(i), .. }, v) => {
                        compare(*op, v, ctx.params.get(*i).unwrap_or(&Value::Null))
                    }
                    // Another type: the conjunct's own evaluation (and its error).
                    _ => c.test_other(what, row, ctx, g)?,
                };
                match r {
                    Some(false) => return Ok(false),
                    Some(true) => {}
                    None => all_true = false,
                }
            }
            // The one-entry memo `node_prop` keeps: the last property read.
            if let (Some(v), Some(&t)) = (gp.vals.pop(), gp.key_toks.last()) {
                if memo_worthy(&v) {
                    // Updated in place: building the whole `Option` and copying it over the
                    // old one stalled on store forwarding (`perf annotate`).
                    match &mut ctx.last_prop {
                        Some((n, k, old)) => (*n, *k, *old) = (id, t, v),
                        memo => *memo = Some((id, t, v)),
                    }
                }
            }
            from = gp.end;
        }
        self.test_from(from, all_true, row, ctx, g)
    }

    /// The conjuncts from `from` on, one by one (`all_true`: every one before was true).
    fn test_from(
        &mut self,
        from: usize,
        mut all_true: bool,
        row: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<bool> {
        let what = self.what;
        for c in self.conj.iter_mut().skip(from) {
            // The common shapes on a node (or null) inline; the rest, and these on other
            // values, in `test_other`.
            let fast = match &mut c.kind {
                ConjKind::Label { slot, name, tok } => match row.get(*slot) {
                    Some(Value::Node(id)) => Some(Some(has_label(g, *id, name, tok))),
                    Some(Value::Null) | None => Some(None),
                    Some(_) => None,
                },
                // `n.key <op> integer` (literal or parameter) on an integer (or missing) value
                // of the current node of a column aggregation: compared in place, no value
                // copied.
                ConjKind::Cmp { slot, tok: Some(t), op, rhs, .. } => {
                    let c = match rhs {
                        PExpr::Const(Value::Int(c)) => Some(*c),
                        PExpr::Param(i) => match ctx.params.get(*i) {
                            Some(Value::Int(c)) => Some(*c),
                            _ => None,
                        },
                        _ => None,
                    };
                    match (row.get(*slot), c) {
                        (Some(Value::Node(id)), Some(c)) => {
                            match ctx.scan_cols.as_ref().and_then(|sc| sc.get(*id, *t)) {
                                Some(Value::Int(x)) => Some(Some(int_compare(*op, *x, c))),
                                Some(Value::Null) => Some(None),
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                }
                ConjKind::Prop { slot, key, tok } => match row.get(*slot) {
                    Some(Value::Node(id)) => match node_prop(ctx, g, *id, key, tok)? {
                        Value::Bool(b) => Some(Some(b)),
                        Value::Null => Some(None),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            };
            let r = match fast {
                Some(r) => r,
                None => c.test_other(what, row, ctx, g)?,
            };
            match r {
                Some(false) => return Ok(false),
                Some(true) => {}
                None => all_true = false,
            }
        }
        Ok(all_true)
    }
}

impl Conj {
    /// The conjuncts `CompiledPred::test` does not answer inline (kept out of its loop so the
    /// common ones stay small).
    #[inline(never)]
    fn test_other(
        &mut self,
        what: Option<&str>,
        row: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<Option<bool>> {
        Ok(match &mut self.kind {
            ConjKind::Labels { slot, labels } => match row.get(*slot) {
                Some(Value::Node(id)) => {
                    let (id, gr): (NodeId, &dyn Graph) = (*id, g);
                    Some(labels.iter_mut().all(|(name, tok)| has_label(gr, id, name, tok)))
                }
                Some(Value::Null) | None => None,
                Some(_) => pred3(&self.expr, what, row, ctx, g)?,
            },
            ConjKind::Cmp { slot, key, tok, op, rhs } => match row.get(*slot) {
                Some(Value::Node(id)) => {
                    let left = node_prop(ctx, g, *id, key, tok)?;
                    match rhs {
                        PExpr::Const(v) => compare(*op, &left, v),
                        rhs => compare(*op, &left, &eval(rhs, row, ctx, g)?),
                    }
                }
                _ => pred3(&self.expr, what, row, ctx, g)?,
            },
            _ => pred3(&self.expr, what, row, ctx, g)?,
        })
    }
}

/// `id:name`, the token looked up until found and then kept (tokens are never removed).
#[inline]
fn has_label(g: &dyn Graph, id: NodeId, name: &str, tok: &mut Option<u32>) -> bool {
    if tok.is_none() {
        *tok = g.token_id(TokenKind::Label, name);
    }
    tok.is_some_and(|t| g.node_has_label(id, t))
}

/// `id.key` as `eval` reads it (null when missing, an error when the node was deleted in this
/// transaction, from the batch columns of a column aggregation (`ctx.scan_cols`) when they
/// hold it, and through the same one-entry memo `ctx.last_prop` in read-only statements,
/// so a filter and a grouping key on `n.key` read it once), the token cached as in
/// [`has_label`].
#[inline]
fn node_prop(
    ctx: &mut Ctx,
    g: &dyn Graph,
    id: NodeId,
    key: &str,
    tok: &mut Option<u32>,
) -> Result<Value> {
    if tok.is_none() {
        *tok = g.token_id(TokenKind::PropertyKey, key);
    }
    let Some(t) = *tok else {
        return if g.node_deleted_in_tx(id) { Err(deleted_err()) } else { Ok(Value::Null) };
    };
    if ctx.read_only {
        if let Some(v) = ctx.scan_cols.as_ref().and_then(|c| c.get(id, t)) {
            return Ok(v.clone());
        }
        if let Some((n, k, v)) = &ctx.last_prop {
            if *n == id && *k == t {
                return Ok(v.clone());
            }
        }
    }
    let v = match g.node_property(id, t) {
        Some(v) => v,
        None if g.node_deleted_in_tx(id) => return Err(deleted_err()),
        None => Value::Null,
    };
    if ctx.read_only
        && matches!(
            v,
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::String(_)
        )
    {
        ctx.last_prop = Some((id, t, v.clone()));
    }
    Ok(v)
}

fn pred_of(v: &Value, what: Option<&str>) -> Result<Option<bool>> {
    match what {
        Some(w) => truth(v, w),
        None => Ok(match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }),
    }
}

pub(crate) fn eval(e: &PExpr, row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Value> {
    Ok(match e {
        PExpr::Const(v) => v.clone(),
        PExpr::Param(i) => ctx.params.get(*i).cloned().unwrap_or(Value::Null),
        PExpr::Slot(s) => row.get(*s).cloned().unwrap_or(Value::Null),
        PExpr::Property(base, key) => {
            // `n.key` on a node or relationship in a slot (the common case): read the id in
            // place, without copying the value or recursing.
            if let PExpr::Slot(s) = **base {
                match row.get(s) {
                    Some(&Value::Node(id)) => {
                        let tok = ctx.token(&*g, TokenKind::PropertyKey, key);
                        if !ctx.read_only {
                            return entity_property(&Value::Node(id), tok, g);
                        }
                        let Some(t) = tok else {
                            return entity_property(&Value::Node(id), tok, g);
                        };
                        if let Some(v) = ctx.scan_cols.as_ref().and_then(|c| c.get(id, t)) {
                            return Ok(v.clone());
                        }
                        if let Some((n, k, v)) = &ctx.last_prop {
                            if *n == id && *k == t {
                                return Ok(v.clone());
                            }
                        }
                        let v = entity_property(&Value::Node(id), tok, g)?;
                        // Only values that are cheap to copy are remembered.
                        if memo_worthy(&v) {
                            ctx.last_prop = Some((id, t, v.clone()));
                        }
                        return Ok(v);
                    }
                    Some(&Value::Relationship(id)) => {
                        let tok = ctx.token(&*g, TokenKind::PropertyKey, key);
                        return entity_property(&Value::Relationship(id), tok, g);
                    }
                    // `r.key` on a map (or materialized entity): read it in place, as cloning
                    // the whole map for one of its values costs a map per access.
                    Some(b @ (Value::Map(_) | Value::NodeData(_) | Value::RelData(_))) => {
                        return property(b, key, g);
                    }
                    _ => {}
                }
            }
            let b = eval(base, row, ctx, g)?;
            match b {
                Value::Node(_) | Value::Relationship(_) => {
                    let tok = ctx.token(&*g, TokenKind::PropertyKey, key);
                    entity_property(&b, tok, g)?
                }
                _ => property(&b, key, g)?,
            }
        }
        PExpr::List(xs) => {
            let mut out = Vec::with_capacity(xs.len());
            for x in xs {
                out.push(eval(x, row, ctx, g)?);
            }
            Value::List(out)
        }
        PExpr::Map(xs) => {
            let mut out = PropertyMap::new();
            for (k, x) in xs {
                let v = eval(x, row, ctx, g)?;
                out.insert(arbor_model::Key::from(&**k), v);
            }
            Value::Map(out)
        }
        PExpr::Not(a) => match truth(&eval(a, row, ctx, g)?, "NOT")? {
            Some(b) => Value::Bool(!b),
            None => Value::Null,
        },
        PExpr::Neg(a) => vops::negate(&eval(a, row, ctx, g)?)?,
        PExpr::Plus(a) => {
            let v = eval(a, row, ctx, g)?;
            match v {
                Value::Int(_) | Value::Float(_) | Value::Null | Value::Duration(_) => v,
                other => {
                    return Err(type_err(format!(
                        "Type mismatch: expected a number but was {}",
                        other.type_name()
                    )))
                }
            }
        }
        PExpr::And(a, b) => {
            let x = truth(&eval(a, row, ctx, g)?, "AND")?;
            if x == Some(false) {
                // Still type-check the right side as Neo4j does only when evaluated; short-circuit.
                return Ok(Value::Bool(false));
            }
            let y = truth(&eval(b, row, ctx, g)?, "AND")?;
            match (x, y) {
                (_, Some(false)) => Value::Bool(false),
                (Some(true), Some(true)) => Value::Bool(true),
                _ => Value::Null,
            }
        }
        PExpr::Or(a, b) => {
            let x = truth(&eval(a, row, ctx, g)?, "OR")?;
            if x == Some(true) {
                return Ok(Value::Bool(true));
            }
            let y = truth(&eval(b, row, ctx, g)?, "OR")?;
            match (x, y) {
                (_, Some(true)) => Value::Bool(true),
                (Some(false), Some(false)) => Value::Bool(false),
                _ => Value::Null,
            }
        }
        PExpr::Xor(a, b) => {
            let x = truth(&eval(a, row, ctx, g)?, "XOR")?;
            let y = truth(&eval(b, row, ctx, g)?, "XOR")?;
            match (x, y) {
                (Some(x), Some(y)) => Value::Bool(x != y),
                _ => Value::Null,
            }
        }
        PExpr::Arith(op, a, b) => {
            let x = eval(a, row, ctx, g)?;
            let y = eval(b, row, ctx, g)?;
            match op {
                ArithOp::Add => vops::add(&x, &y)?,
                ArithOp::Sub => vops::sub(&x, &y)?,
                ArithOp::Mul => vops::mul(&x, &y)?,
                ArithOp::Div => vops::div(&x, &y)?,
                ArithOp::Mod => vops::modulo(&x, &y)?,
                ArithOp::Pow => vops::pow(&x, &y)?,
            }
        }
        PExpr::In(a, b) => {
            let x = eval(a, row, ctx, g)?;
            let l = eval(b, row, ctx, g)?;
            in_list(&x, &l)?
        }
        PExpr::Str(op, a, b) => {
            let x = eval(a, row, ctx, g)?;
            let y = eval(b, row, ctx, g)?;
            match (&x, &y) {
                (Value::String(s), Value::String(t)) => Value::Bool(match op {
                    StringOp::StartsWith => s.starts_with(&**t),
                    StringOp::EndsWith => s.ends_with(&**t),
                    StringOp::Contains => s.contains(&**t),
                    StringOp::Regex => ctx.regex(t)?.is_match(s),
                }),
                _ => Value::Null,
            }
        }
        PExpr::Compare(first, rest) => {
            let mut left = eval(first, row, ctx, g)?;
            let mut result = Some(true);
            for (op, x) in rest {
                let right = eval(x, row, ctx, g)?;
                let r = compare(*op, &left, &right);
                result = match (result, r) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                left = right;
            }
            result.map(Value::Bool).unwrap_or(Value::Null)
        }
        PExpr::IsNull(a, negated) => {
            let v = eval(a, row, ctx, g)?;
            Value::Bool(v.is_null() != *negated)
        }
        PExpr::HasLabels(a, labels) => {
            let v = eval(a, row, ctx, g)?;
            match v {
                Value::Null => Value::Null,
                Value::Node(id) => Value::Bool(labels.iter().all(|l| {
                    ctx.token(&*g, TokenKind::Label, l).is_some_and(|t| g.node_has_label(id, t))
                })),
                Value::Relationship(id) => {
                    let t =
                        g.rel_info(id).and_then(|(_, _, t)| g.token_name(TokenKind::RelType, t));
                    Value::Bool(labels.iter().all(|l| t.as_deref() == Some(&**l)))
                }
                other => {
                    return Err(type_err(format!(
                        "Type mismatch: expected Node but was {}",
                        other.type_name()
                    )))
                }
            }
        }
        PExpr::Index(a, i) => {
            let base = eval(a, row, ctx, g)?;
            let idx = eval(i, row, ctx, g)?;
            index(&base, &idx, g)?
        }
        PExpr::Slice(a, from, to) => {
            let base = eval(a, row, ctx, g)?;
            let f = match from {
                Some(x) => Some(eval(x, row, ctx, g)?),
                None => None,
            };
            let t = match to {
                Some(x) => Some(eval(x, row, ctx, g)?),
                None => None,
            };
            slice(base, f, t)?
        }
        PExpr::Scalar { func, args, .. } => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(eval(a, row, ctx, g)?);
            }
            func(&vals)?
        }
        PExpr::Builtin(b, args) => builtin(*b, args, row, ctx, g)?,
        PExpr::Case { operand, whens, else_ } => {
            let op = match operand {
                Some(o) => Some(eval(o, row, ctx, g)?),
                None => None,
            };
            for (w, t) in whens {
                let wv = eval(w, row, ctx, g)?;
                let hit = match &op {
                    Some(o) => equals(o, &wv) == Some(true),
                    None => matches!(wv, Value::Bool(true)),
                };
                if hit {
                    return eval(t, row, ctx, g);
                }
            }
            match else_ {
                Some(x) => eval(x, row, ctx, g)?,
                None => Value::Null,
            }
        }
        PExpr::ListComp { slot, list, filter, map } => {
            let l = eval(list, row, ctx, g)?;
            let items = match l {
                Value::Null => return Ok(Value::Null),
                Value::List(items) => items,
                other => {
                    return Err(type_err(format!(
                        "Type mismatch: expected List but was {}",
                        other.type_name()
                    )))
                }
            };
            let saved = row[*slot].clone();
            let mut out = Vec::with_capacity(items.len());
            let r: Result<()> = (|| {
                for x in items {
                    row[*slot] = x.clone();
                    if let Some(f) = filter {
                        if !eval_pred(f, row, ctx, g)? {
                            continue;
                        }
                    }
                    out.push(match map {
                        Some(m) => eval(m, row, ctx, g)?,
                        None => x,
                    });
                }
                Ok(())
            })();
            row[*slot] = saved;
            r?;
            Value::List(out)
        }
        PExpr::Quantified { quantifier, slot, list, filter } => {
            let l = eval(list, row, ctx, g)?;
            let items = match l {
                Value::Null => return Ok(Value::Null),
                Value::List(items) => items,
                other => {
                    return Err(type_err(format!(
                        "Type mismatch: expected List but was {}",
                        other.type_name()
                    )))
                }
            };
            let saved = row[*slot].clone();
            let (mut trues, mut falses, mut nulls) = (0usize, 0usize, 0usize);
            let r: Result<()> = (|| {
                for x in items {
                    row[*slot] = x;
                    match truth(&eval(filter, row, ctx, g)?, "quantifier")? {
                        Some(true) => trues += 1,
                        Some(false) => falses += 1,
                        None => nulls += 1,
                    }
                }
                Ok(())
            })();
            row[*slot] = saved;
            r?;
            let res = match quantifier {
                Quantifier::All => {
                    if falses > 0 {
                        Some(false)
                    } else if nulls > 0 {
                        None
                    } else {
                        Some(true)
                    }
                }
                Quantifier::Any => {
                    if trues > 0 {
                        Some(true)
                    } else if nulls > 0 {
                        None
                    } else {
                        Some(false)
                    }
                }
                Quantifier::None => {
                    if trues > 0 {
                        Some(false)
                    } else if nulls > 0 {
                        None
                    } else {
                        Some(true)
                    }
                }
                Quantifier::Single => {
                    if trues > 1 {
                        Some(false)
                    } else if nulls > 0 {
                        None
                    } else {
                        Some(trues == 1)
                    }
                }
            };
            res.map(Value::Bool).unwrap_or(Value::Null)
        }
        PExpr::Reduce { acc, init, slot, list, expr } => {
            let mut a = eval(init, row, ctx, g)?;
            let l = eval(list, row, ctx, g)?;
            let items = match l {
                Value::Null => return Ok(Value::Null),
                Value::List(items) => items,
                other => {
                    return Err(type_err(format!(
                        "Type mismatch: expected List but was {}",
                        other.type_name()
                    )))
                }
            };
            let (sa, sx) = (row[*acc].clone(), row[*slot].clone());
            let r: Result<()> = (|| {
                for x in items {
                    row[*acc] = std::mem::replace(&mut a, Value::Null);
                    row[*slot] = x;
                    a = eval(expr, row, ctx, g)?;
                }
                Ok(())
            })();
            row[*acc] = sa;
            row[*slot] = sx;
            r?;
            a
        }
        PExpr::Subquery { kind, plan } => ctx.run_subquery(*kind, plan, row, g)?,
        PExpr::MapProjection { base, items } => {
            let b = eval(base, row, ctx, g)?;
            if b.is_null() {
                return Ok(Value::Null);
            }
            let mut out = PropertyMap::new();
            for it in items {
                match it {
                    MapProjItem::Property(k) => {
                        out.insert(arbor_model::Key::from(&**k), property(&b, k, g)?);
                    }
                    MapProjItem::Literal(k, x) => {
                        let v = eval(x, row, ctx, g)?;
                        out.insert(arbor_model::Key::from(&**k), v);
                    }
                    MapProjItem::AllProperties => {
                        if let Value::Map(m) = properties(&b, g)? {
                            out.extend(m);
                        }
                    }
                }
            }
            Value::Map(out)
        }
        PExpr::Path(steps) => build_path(steps, row, g)?,
    })
}

/// `compare` on two integers.
#[inline]
fn int_compare(op: CompareOp, a: i64, b: i64) -> bool {
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
    }
}

fn compare(op: CompareOp, a: &Value, b: &Value) -> Option<bool> {
    match op {
        CompareOp::Eq => equals(a, b),
        CompareOp::Ne => equals(a, b).map(|x| !x),
        CompareOp::Lt => compare_op(CmpOp::Lt, a, b),
        CompareOp::Le => compare_op(CmpOp::Le, a, b),
        CompareOp::Gt => compare_op(CmpOp::Gt, a, b),
        CompareOp::Ge => compare_op(CmpOp::Ge, a, b),
    }
}

fn in_list(x: &Value, l: &Value) -> Result<Value> {
    match l {
        Value::Null => Ok(Value::Null),
        Value::List(items) => {
            let mut saw_null = false;
            for it in items {
                match equals(x, it) {
                    Some(true) => return Ok(Value::Bool(true)),
                    Some(false) => {}
                    None => saw_null = true,
                }
            }
            Ok(if saw_null { Value::Null } else { Value::Bool(false) })
        }
        other => {
            Err(type_err(format!("Type mismatch: expected List but was {}", other.type_name())))
        }
    }
}

fn deleted_err() -> Error {
    Error::new(Status::EntityNotFound, "The entity has been deleted in this transaction")
        .with_detail("DeletedEntityAccess")
}

/// `base.key` for a node or relationship whose key token (`None`: no such key) is known.
fn entity_property(base: &Value, tok: Option<u32>, g: &dyn Graph) -> Result<Value> {
    Ok(match base {
        Value::Node(id) => match tok {
            None => {
                if g.node_deleted_in_tx(*id) {
                    return Err(deleted_err());
                }
                Value::Null
            }
            Some(t) => match g.node_property(*id, t) {
                Some(v) => v,
                None => {
                    if g.node_deleted_in_tx(*id) {
                        return Err(deleted_err());
                    }
                    Value::Null
                }
            },
        },
        Value::Relationship(id) => match tok {
            None => Value::Null,
            Some(t) => match g.rel_property(*id, t) {
                Some(v) => v,
                None => {
                    if g.rel_deleted_in_tx(*id) {
                        return Err(deleted_err());
                    }
                    Value::Null
                }
            },
        },
        _ => Value::Null,
    })
}

/// `base.key` for any value.
pub(crate) fn property(base: &Value, key: &str, g: &dyn Graph) -> Result<Value> {
    Ok(match base {
        Value::Null => Value::Null,
        Value::Node(_) | Value::Relationship(_) => {
            return entity_property(base, g.token_id(TokenKind::PropertyKey, key), g)
        }
        Value::Map(m) => m.get(key).cloned().unwrap_or(Value::Null),
        Value::NodeData(n) => n.properties.get(key).cloned().unwrap_or(Value::Null),
        Value::RelData(r) => r.properties.get(key).cloned().unwrap_or(Value::Null),
        Value::Point(p) => match arbor_model::spatial::point_component(p, key) {
            Some(v) => v,
            None => return Err(type_err(format!("No such field: {key}"))),
        },
        Value::Date(_)
        | Value::Time(_)
        | Value::LocalTime(_)
        | Value::DateTime(_)
        | Value::LocalDateTime(_)
        | Value::Duration(_) => match crate::temporal_access::component(base, key) {
            Some(v) => v,
            None => return Err(type_err(format!("No such field: {key}"))),
        },
        other => {
            return Err(type_err(format!(
                "Type mismatch: expected a map but was {}",
                other.type_name()
            )))
        }
    })
}

/// `properties(x)`.
pub(crate) fn properties(v: &Value, g: &dyn Graph) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Node(id) => {
            let mut m = PropertyMap::new();
            for (k, val) in g.node_properties(*id) {
                if let Some(n) = g.token_name(TokenKind::PropertyKey, k) {
                    m.insert(n.into(), val);
                }
            }
            Value::Map(m)
        }
        Value::Relationship(id) => {
            let mut m = PropertyMap::new();
            for (k, val) in g.rel_properties(*id) {
                if let Some(n) = g.token_name(TokenKind::PropertyKey, k) {
                    m.insert(n.into(), val);
                }
            }
            Value::Map(m)
        }
        Value::Map(m) => Value::Map(m.clone()),
        Value::NodeData(n) => Value::Map(n.properties.clone()),
        Value::RelData(r) => Value::Map(r.properties.clone()),
        other => {
            return Err(type_err(format!(
                "Invalid input for function 'properties()': Expected a node, a relationship or a map, got: {}",
                other.type_name()
            )))
        }
    })
}

fn index(base: &Value, idx: &Value, g: &dyn Graph) -> Result<Value> {
    Ok(match (base, idx) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::List(items), Value::Int(i)) => {
            let n = items.len() as i64;
            let j = if *i < 0 { n + *i } else { *i };
            if j < 0 || j >= n {
                Value::Null
            } else {
                items[j as usize].clone()
            }
        }
        (Value::List(_), other) => {
            return Err(type_err(format!(
                "Type mismatch: expected Integer but was {}",
                other.type_name()
            )))
        }
        (Value::Map(_) | Value::Node(_) | Value::Relationship(_), Value::String(k)) => {
            property(base, k, g)?
        }
        (Value::Map(_) | Value::Node(_) | Value::Relationship(_), other) => {
            return Err(Error::type_error(format!(
                "Type mismatch: expected String but was {}",
                other.type_name()
            ))
            .with_detail("MapElementAccessByNonString"))
        }
        (other, _) => {
            return Err(type_err(format!(
                "Type mismatch: expected List or Map but was {}",
                other.type_name()
            )))
        }
    })
}

fn slice(base: Value, from: Option<Value>, to: Option<Value>) -> Result<Value> {
    let items = match base {
        Value::Null => return Ok(Value::Null),
        Value::List(items) => items,
        other => {
            return Err(type_err(format!(
                "Type mismatch: expected List but was {}",
                other.type_name()
            )))
        }
    };
    let n = items.len() as i64;
    let bound = |v: Option<Value>, default: i64| -> Result<Option<i64>> {
        match v {
            None => Ok(Some(default)),
            Some(Value::Null) => Ok(None),
            Some(Value::Int(i)) => Ok(Some(if i < 0 { (n + i).max(0) } else { i.min(n) })),
            Some(other) => Err(type_err(format!(
                "Type mismatch: expected Integer but was {}",
                other.type_name()
            ))),
        }
    };
    let (Some(f), Some(t)) = (bound(from, 0)?, bound(to, n)?) else {
        return Ok(Value::Null);
    };
    if f >= t {
        return Ok(Value::List(Vec::new()));
    }
    Ok(Value::List(items[f as usize..t as usize].to_vec()))
}

fn builtin(
    b: Builtin,
    args: &[PExpr],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    if b == Builtin::Coalesce {
        for a in args {
            let v = eval(a, row, ctx, g)?;
            if !v.is_null() {
                return Ok(v);
            }
        }
        return Ok(Value::Null);
    }
    let Some(a) = args.first() else { return Ok(Value::Null) };
    let v = eval(a, row, ctx, g)?;
    let bad = |f: &str, v: &Value| {
        type_err(format!("Invalid input for function '{f}()': got: {}", v.type_name()))
    };
    Ok(match (b, &v) {
        (Builtin::Exists, v) => Value::Bool(!v.is_null()),
        (_, Value::Null) => Value::Null,
        (Builtin::Id, Value::Node(id)) => Value::Int(id.0 as i64),
        (Builtin::Id, Value::Relationship(id)) => Value::Int(id.0 as i64),
        (Builtin::ElementId, Value::Node(id)) => Value::String(Arc::from(format!("n:{}", id.0))),
        (Builtin::ElementId, Value::Relationship(id)) => {
            Value::String(Arc::from(format!("r:{}", id.0)))
        }
        (Builtin::Labels, Value::Node(id)) => {
            if g.node_deleted_in_tx(*id) {
                return Err(deleted_err());
            }
            let mut names: Vec<String> = g
                .node_labels(*id)
                .into_iter()
                .filter_map(|t| g.token_name(TokenKind::Label, t))
                .collect();
            names.sort();
            Value::List(names.into_iter().map(Value::from).collect())
        }
        (Builtin::Type, Value::Relationship(id)) => match g.rel_info(*id) {
            Some((_, _, t)) => {
                g.token_name(TokenKind::RelType, t).map(Value::from).unwrap_or(Value::Null)
            }
            None => match ctx.deleted_rel_types.get(id) {
                Some(t) => {
                    g.token_name(TokenKind::RelType, *t).map(Value::from).unwrap_or(Value::Null)
                }
                None => return Err(deleted_err()),
            },
        },
        (Builtin::Properties, v) => properties(v, g)?,
        (Builtin::Keys, v) => match properties(v, g) {
            Ok(Value::Map(m)) => Value::List(m.into_keys().map(Value::from).collect()),
            _ => return Err(bad("keys", v)),
        },
        (Builtin::StartNode, Value::Relationship(id)) => match g.rel_info(*id) {
            Some((s, _, _)) => Value::Node(s),
            None => Value::Null,
        },
        (Builtin::EndNode, Value::Relationship(id)) => match g.rel_info(*id) {
            Some((_, e, _)) => Value::Node(e),
            None => Value::Null,
        },
        (Builtin::Nodes, Value::Path(p)) => {
            Value::List(p.nodes.iter().map(|n| Value::Node(*n)).collect())
        }
        (Builtin::Relationships, Value::Path(p)) => {
            Value::List(p.rels.iter().map(|r| Value::Relationship(*r)).collect())
        }
        (Builtin::Length, Value::Path(p)) => Value::Int(p.rels.len() as i64),
        (Builtin::Length, Value::String(s)) => Value::Int(s.chars().count() as i64),
        (Builtin::Length, Value::List(l)) => Value::Int(l.len() as i64),
        (b, v) => {
            let name = match b {
                Builtin::Id => "id",
                Builtin::ElementId => "elementId",
                Builtin::Labels => "labels",
                Builtin::Type => "type",
                Builtin::Properties => "properties",
                Builtin::Keys => "keys",
                Builtin::StartNode => "startNode",
                Builtin::EndNode => "endNode",
                Builtin::Nodes => "nodes",
                Builtin::Relationships => "relationships",
                Builtin::Length => "length",
                Builtin::Exists => "exists",
                Builtin::Coalesce => "coalesce",
            };
            if matches!(b, Builtin::Labels | Builtin::Type) {
                // The TCK classifies a non-entity argument of these as a bad value.
                return Err(Error::type_error(format!(
                    "Invalid input for function '{name}()': got: {}",
                    v.type_name()
                ))
                .with_detail("InvalidArgumentValue"));
            }
            return Err(bad(name, v));
        }
    })
}

/// The other end of `rel` seen from `node`.
fn other_end(g: &dyn Graph, rel: RelId, node: NodeId) -> Option<NodeId> {
    let (s, e, _) = g.rel_info(rel)?;
    Some(if s == node { e } else { s })
}

fn build_path(steps: &[PathStep], row: &Row, g: &dyn Graph) -> Result<Value> {
    let mut nodes = Vec::new();
    let mut rels = Vec::new();
    for step in steps {
        match step {
            PathStep::Node(s) => match &row[*s] {
                Value::Node(id) => {
                    if nodes.is_empty() {
                        nodes.push(*id);
                    }
                }
                Value::Null => return Ok(Value::Null),
                other => {
                    return Err(type_err(format!("Expected a node, got {}", other.type_name())))
                }
            },
            PathStep::Rel(s) => match &row[*s] {
                Value::Relationship(r) => {
                    let cur = *nodes.last().ok_or_else(|| Error::internal("path start"))?;
                    let next = other_end(g, *r, cur).ok_or_else(deleted_err)?;
                    rels.push(*r);
                    nodes.push(next);
                }
                Value::Null => return Ok(Value::Null),
                other => {
                    return Err(type_err(format!(
                        "Expected a relationship, got {}",
                        other.type_name()
                    )))
                }
            },
            PathStep::VarRel(s) => match &row[*s] {
                Value::List(items) => {
                    for it in items {
                        if let Value::Relationship(r) = it {
                            let cur = *nodes.last().ok_or_else(|| Error::internal("path start"))?;
                            let next = other_end(g, *r, cur).ok_or_else(deleted_err)?;
                            rels.push(*r);
                            nodes.push(next);
                        }
                    }
                }
                Value::Null => return Ok(Value::Null),
                other => {
                    return Err(type_err(format!("Expected a list, got {}", other.type_name())))
                }
            },
        }
    }
    Ok(Value::Path(Arc::new(PathRef { nodes, rels })))
}

/// Total order for ORDER BY keys.
pub(crate) fn order_keys(a: &[Value], b: &[Value], desc: &[bool]) -> Ordering {
    for ((x, y), d) in a.iter().zip(b).zip(desc) {
        let o = arbor_model::order(x, y);
        let o = if *d { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Token names seen while materializing one execution's results. A row of whole nodes names
/// the same few labels and property keys over and over; asking the graph each time takes the
/// store's token lock (shared by every connection) per property. Token ids are never reused
/// and a token's name never changes, so a name once found stays right for the execution.
#[derive(Default)]
pub(crate) struct TokenNames {
    by_kind: [Vec<Option<String>>; 3],
}

/// Token ids above this are resolved without caching (the cache is a dense vector).
const MAX_CACHED_TOKEN: usize = 1 << 16;

impl TokenNames {
    fn name(&mut self, g: &dyn Graph, kind: TokenKind, t: TokenId) -> Option<String> {
        let i = t as usize;
        if i >= MAX_CACHED_TOKEN {
            return g.token_name(kind, t);
        }
        let names = &mut self.by_kind[match kind {
            TokenKind::Label => 0,
            TokenKind::RelType => 1,
            TokenKind::PropertyKey => 2,
        }];
        if let Some(Some(n)) = names.get(i) {
            return Some(n.clone());
        }
        let n = g.token_name(kind, t)?;
        if names.len() <= i {
            names.resize(i + 1, None);
        }
        names[i] = Some(n.clone());
        Some(n)
    }
}

/// Converts entity references (also inside lists, maps and paths) into materialized values.
pub(crate) fn materialize(v: Value, g: &dyn Graph, names: &mut TokenNames) -> Value {
    match v {
        Value::Node(id) => Value::NodeData(Arc::new(node_data(id, g, names))),
        Value::Relationship(id) => Value::RelData(Arc::new(rel_data(id, g, names))),
        Value::Path(p) => Value::PathData(Arc::new(arbor_model::PathData {
            nodes: p.nodes.iter().map(|n| node_data(*n, g, names)).collect(),
            rels: p.rels.iter().map(|r| rel_data(*r, g, names)).collect(),
        })),
        Value::List(items) => {
            Value::List(items.into_iter().map(|x| materialize(x, g, names)).collect())
        }
        Value::Map(m) => {
            Value::Map(m.into_iter().map(|(k, x)| (k, materialize(x, g, names))).collect())
        }
        other => other,
    }
}

fn node_data(id: NodeId, g: &dyn Graph, names: &mut TokenNames) -> arbor_model::NodeData {
    let mut labels: Vec<String> =
        g.node_labels(id).into_iter().filter_map(|t| names.name(g, TokenKind::Label, t)).collect();
    labels.sort();
    // Inserted one by one: for the few properties of a node this is cheaper than `collect`,
    // which buffers, sorts and bulk-builds (keys are distinct, so the result is the same).
    let mut properties = PropertyMap::new();
    for (k, v) in g.node_properties(id) {
        if let Some(n) = names.name(g, TokenKind::PropertyKey, k) {
            properties.insert(n.into(), v);
        }
    }
    arbor_model::NodeData { id, labels, properties }
}

fn rel_data(id: RelId, g: &dyn Graph, names: &mut TokenNames) -> arbor_model::RelData {
    let (start, end, t) = g.rel_info(id).unwrap_or((NodeId(0), NodeId(0), 0));
    let properties = g
        .rel_properties(id)
        .into_iter()
        .filter_map(|(k, v)| names.name(g, TokenKind::PropertyKey, k).map(|n| (n, v)))
        .collect();
    arbor_model::RelData {
        id,
        start,
        end,
        rel_type: names.name(g, TokenKind::RelType, t).unwrap_or_default(),
        properties,
    }
}

/// Whether a property value is cheap enough to copy to keep in the one-entry memo
/// `Ctx::last_prop` (scalars and shared strings; not lists or maps).
#[inline]
fn memo_worthy(v: &Value) -> bool {
    matches!(v, Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::String(_))
}
