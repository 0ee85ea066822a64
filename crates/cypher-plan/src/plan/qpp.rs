//! Planning GQL path patterns: a pattern part holding quantified path patterns (expanded
//! left to right from its first node, each group a [`Repeat`]), and selective path patterns
//! (`SHORTEST k`, `ANY k`: the part planned on the argument row under a
//! [`Op::SelectPaths`]).

use std::collections::HashSet;

use arbor_cypher_syntax::ast::{self, PathSelector, PatternElement, PatternPart, Quantified};
use arbor_model::Result;

use crate::bind::qpp::inner_vars;
use crate::bind::*;
use crate::expr::{PExpr, Slot};
use crate::ops::{Name, Op, Repeat, RepeatHop};
use crate::plan::matching::{is_label_check, place, take_conj, Conj};

/// Where one quantified path pattern runs: its boundary nodes and its trail list.
struct Ends {
    from: Slot,
    to: Slot,
    into: bool,
    rels: Slot,
    unique_with: Vec<Slot>,
}

impl Binder<'_> {
    /// Plans a pattern part with quantified path patterns: its first node (a label scan when
    /// not bound), then every step to the right (`Expand`, `VarExpand` or `Repeat`), placing
    /// each predicate as soon as its slots are bound.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn plan_qpp_part(
        &mut self,
        mut op: Op,
        scope: &Scope,
        el: &PatternElement,
        ps: &PartSlots,
        node_pats: &[&ast::NodePattern],
        bound: &mut HashSet<Slot>,
        conj: &mut Vec<Conj>,
        match_rels: &mut Vec<Slot>,
    ) -> Result<Op> {
        let s0 = ps.nodes[0];
        if !bound.contains(&s0) {
            let np = node_pats[0];
            if let Some(label) = np.labels.first() {
                take_conj(conj, |e| is_label_check(e, s0, label));
            }
            op = Op::NodeScan { input: Box::new(op), slot: s0, label: np.labels.first().map(name) };
            bound.insert(s0);
            op = place(op, conj, bound);
        }
        for (i, (rp, _)) in el.chain.iter().enumerate() {
            let (from, to, rel) = (ps.nodes[i], ps.nodes[i + 1], ps.rels[i]);
            let into = bound.contains(&to);
            let types: Vec<Name> = rp.types.iter().map(name).collect();
            if let Some(q) = &rp.quantified {
                let ends = Ends { from, to, into, rels: rel, unique_with: match_rels.clone() };
                let (o, groups) = self.repeat_op(op, scope, q, ends)?;
                op = o;
                bound.extend(groups);
            } else if let Some((min, max)) = rp.length {
                let rel_props = self.bind_pattern_props(rp.properties.as_ref(), scope)?;
                op = Op::VarExpand {
                    input: Box::new(op),
                    from,
                    rel,
                    to,
                    dir: rp.direction,
                    types,
                    min: min.unwrap_or(1),
                    max,
                    into,
                    unique_with: match_rels.clone(),
                    rel_props,
                    reversed: false,
                    rel_bound: ps.rels_pre[i],
                    list_unused: false,
                };
            } else {
                op = Op::Expand {
                    input: Box::new(op),
                    from,
                    rel,
                    to,
                    dir: rp.direction,
                    types,
                    into,
                    rel_bound: ps.rels_pre[i],
                    unique_with: match_rels.clone(),
                };
            }
            match_rels.push(rel);
            bound.insert(rel);
            bound.insert(to);
            op = place(op, conj, bound);
        }
        Ok(op)
    }

    /// The `Repeat` of one quantified path pattern: singleton slots for its inner variables
    /// (bound, shadowing the group variables, in the scope its predicates see), its hops, and
    /// its predicates. Returns it with the group slots it binds.
    fn repeat_op(
        &mut self,
        input: Op,
        scope: &Scope,
        q: &Quantified,
        ends: Ends,
    ) -> Result<(Op, Vec<Slot>)> {
        let el = &q.element;
        let mut inner = scope.clone();
        let mut groups: Vec<(Slot, Slot)> = Vec::new();
        for v in inner_vars(el) {
            let Some((g, _)) = scope.get(&v.name) else { continue };
            if groups.iter().any(|(_, gs)| *gs == g) {
                continue;
            }
            let s = self.slot();
            groups.push((s, g));
        }
        let single = |b: &mut Self, v: Option<&ast::Ident>, kind: Kind, inner: &mut Scope| {
            let found = v.and_then(|v| {
                let g = scope.get(&v.name)?.0;
                groups.iter().find(|(_, gs)| *gs == g).map(|(s, _)| (v, *s))
            });
            match found {
                Some((v, s)) => {
                    inner.bind(v.name.clone(), s, kind);
                    s
                }
                None => b.slot(),
            }
        };
        let first = single(self, el.start.variable.as_ref(), Kind::Node, &mut inner);
        let mut hops = Vec::new();
        let mut node_slots = vec![(first, &el.start)];
        for (rp, np) in &el.chain {
            let rel = single(self, rp.variable.as_ref(), Kind::Rel, &mut inner);
            let node = single(self, np.variable.as_ref(), Kind::Node, &mut inner);
            node_slots.push((node, np));
            hops.push(RepeatHop {
                dir: rp.direction,
                types: rp.types.iter().map(name).collect(),
                rel,
                node,
            });
        }
        let mut preds: Vec<PExpr> = Vec::new();
        for (slot, np) in node_slots {
            let base = PExpr::Slot(slot);
            for l in &np.labels {
                preds.push(PExpr::HasLabels(Box::new(base.clone()), vec![name(l)]));
            }
            if let Some(le) = &np.label_expr {
                preds.push(self.lower_label_expr(&base, le, None, &inner)?);
            }
            for (k, v) in self.bind_pattern_props(np.properties.as_ref(), &inner)? {
                preds.push(prop_eq(base.clone(), k, v));
            }
            if let Some(w) = &np.where_ {
                preds.push(self.bind_pred(w, &inner)?);
            }
        }
        for ((rp, _), hop) in el.chain.iter().zip(&hops) {
            let base = PExpr::Slot(hop.rel);
            if let Some(te) = &rp.type_expr {
                preds.push(self.lower_label_expr(&base, te, None, &inner)?);
            }
            for (k, v) in self.bind_pattern_props(rp.properties.as_ref(), &inner)? {
                preds.push(prop_eq(base.clone(), k, v));
            }
            if let Some(w) = &rp.where_ {
                preds.push(self.bind_pred(w, &inner)?);
            }
        }
        if let Some(w) = &el.where_ {
            preds.push(self.bind_pred(w, &inner)?);
        }
        let group_slots = groups.iter().map(|(_, g)| *g).collect();
        let op = Op::Repeat(Box::new(Repeat {
            input,
            from: ends.from,
            to: ends.to,
            into: ends.into,
            first,
            hops,
            pred: preds.into_iter().reduce(and),
            min: q.min,
            max: q.max,
            groups,
            rels: ends.rels,
            unique_with: ends.unique_with,
        }));
        Ok((op, group_slots))
    }

    /// A selective path pattern: the part (its own predicates included) planned on the
    /// argument row, under a `SelectPaths` that keeps the selected paths per pair of ends.
    pub(crate) fn plan_selective(
        &mut self,
        op: Op,
        scope: &Scope,
        part: &PatternPart,
        ps: &PartSlots,
        bound: &mut HashSet<Slot>,
    ) -> Result<Op> {
        let (k, groups, any) = match part.selector {
            PathSelector::Shortest { k, groups } => (k, groups, false),
            PathSelector::Any { k } => (k, false, true),
            _ => (1, false, false),
        };
        let mut slots = ps.clone();
        let path = match ps.path {
            Some(p) => p,
            None => {
                let p = self.slot();
                slots.path = Some(p);
                p
            }
        };
        let all = PatternPart { selector: PathSelector::All, ..part.clone() };
        let inner =
            self.plan_match_declared(Op::Argument, scope, &[&all], &[slots], None, bound.clone())?;
        bound.extend(ps.nodes.iter().chain(&ps.rels).chain(&ps.groups).copied());
        bound.insert(path);
        let end = *ps.nodes.last().unwrap_or(&ps.nodes[0]);
        Ok(Op::SelectPaths {
            input: Box::new(op),
            inner: Box::new(inner),
            start: ps.nodes[0],
            end,
            path,
            k,
            groups,
            any,
        })
    }
}
