//! [`CompiledPred`]: a filter compiled once per operator for per-row hot loops, with label
//! and property conjuncts of one node answered by one graph probe ([`NodeGroup`]).

use std::sync::Arc;

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_syntax::ast::CompareOp;
use arbor_model::{NodeId, Result, Value};

use super::entity::{deleted_err, memo_worthy};
use super::logic::{compare, int_compare, pred3};
use super::seam::eval;
use crate::ctx::{Ctx, Row};
use crate::graph::{Graph, ProbeArgs, TokenId, TokenKind};

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
pub(super) struct NodeGroup {
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

pub(super) enum ConjKind {
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

pub(super) struct Conj {
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
            return super::logic::eval_pred(&self.whole, row, ctx, g);
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

    /// The probe [`Self::test`] would make first for a row whose slot `slot` holds a node (the
    /// filter's leading node group is on `slot`, its tokens resolved, the statement read-only,
    /// no scan columns), and the buffer its values go to (emptied): a caller that reads the
    /// node anyway makes that probe in the same call
    /// ([`Graph::node_expand_probe`](crate::graph::GraphRead::node_expand_probe)) and finishes
    /// with [`Self::test_probed`]. `None`: the caller calls `test`.
    #[inline]
    pub(crate) fn probe_args(
        &mut self,
        slot: Slot,
        ctx: &Ctx,
        g: &dyn Graph,
    ) -> Option<(ProbeArgs<'_>, &mut Vec<Value>)> {
        #[cfg(test)]
        if GENERAL_PREDICATES.with(|f| f.get()) {
            return None;
        }
        let gp = self.group.as_mut()?;
        if gp.slot != slot || !ctx.read_only || ctx.scan_cols.is_some() || !gp.resolve(g) {
            return None;
        }
        if !gp.vals.is_empty() {
            gp.vals.clear();
        }
        Some((ProbeArgs { labels: &gp.label_toks, keys: &gp.key_toks }, &mut gp.vals))
    }

    /// The filter as a test of the node in `slot` alone, for [`Graph::count_trails`]: its
    /// labels and the key of the one property it reads as a boolean, when it is exactly
    /// `slot:L... AND slot.key` (a group of labels then one boolean property, nothing after)
    /// and could be probed ([`Self::probe_args`]'s conditions). Counting the ends with every
    /// label and `key` true is then the filter's answer (a null is not true, and a value of
    /// another type makes the count give up, so that the filter raises its error).
    pub(crate) fn label_bool_form(
        &mut self,
        slot: Slot,
        ctx: &Ctx,
        g: &dyn Graph,
    ) -> Option<(&[TokenId], TokenId)> {
        #[cfg(test)]
        if GENERAL_PREDICATES.with(|f| f.get()) {
            return None;
        }
        let gp = self.group.as_mut()?;
        let one_prop = gp.end == self.conj.len()
            && gp.end == gp.labels_end + 1
            && matches!(self.conj.get(gp.labels_end)?.kind, ConjKind::Prop { .. });
        if !one_prop || gp.slot != slot || !ctx.read_only || ctx.scan_cols.is_some() {
            return None;
        }
        if !gp.resolve(g) {
            return None;
        }
        let [key] = gp.key_toks[..] else { return None };
        Some((&gp.label_toks, key))
    }

    /// [`Self::test`] of a row whose slot given to [`Self::probe_args`] holds node `id`, once
    /// the probe those arguments describe was made (`passed`: its answer, the values in the
    /// buffer): the same answer and errors as `test`.
    #[inline(always)]
    pub(crate) fn test_probed(
        &mut self,
        passed: bool,
        id: NodeId,
        row: &mut Row,
        ctx: &mut Ctx,
        g: &mut dyn Graph,
    ) -> Result<bool> {
        if !passed {
            return Ok(false);
        }
        self.after_probe(id, row, ctx, g)
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
pub(super) fn has_label(g: &dyn Graph, id: NodeId, name: &str, tok: &mut Option<u32>) -> bool {
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
pub(super) fn node_prop(
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
