//! `MATCH` planning: the start of each pattern part, expansions, shortest paths, and placing
//! each predicate as low as its variables allow.

use std::collections::HashSet;

use arbor_cypher_syntax::ast::{
    self, CompareOp, Direction, Expr, PathSelector, PatternElement, PatternPart,
};
use arbor_model::Result;

use crate::bind::*;
use crate::catalog::{IndexUse, Resolver};
use crate::expr::{PExpr, PathStep, Slot};
use crate::ops::{Name, Op, SeekRange};
use crate::plan::access::*;

pub(crate) fn flip(d: Direction) -> Direction {
    match d {
        Direction::Outgoing => Direction::Incoming,
        Direction::Incoming => Direction::Outgoing,
        Direction::Both => Direction::Both,
    }
}

/// Removes the first conjunct matching `f` (it is implied by the chosen scan or seek).
pub(crate) fn take_conj(conj: &mut Vec<(PExpr, Option<Vec<Slot>>)>, f: impl Fn(&PExpr) -> bool) {
    if let Some(i) = conj.iter().position(|(e, _)| f(e)) {
        conj.remove(i);
    }
}

pub(crate) fn is_label_check(e: &PExpr, slot: Slot, label: &ast::Ident) -> bool {
    matches!(e, PExpr::HasLabels(b, ls)
        if matches!(**b, PExpr::Slot(s) if s == slot) && ls.len() == 1 && ls[0] == label.name)
}

pub(crate) fn is_prop_eq(e: &PExpr, slot: Slot, key: &Name) -> bool {
    match e {
        PExpr::Compare(lhs, rest) => {
            rest.len() == 1
                && rest[0].0 == CompareOp::Eq
                && matches!(&**lhs, PExpr::Property(b, k)
                    if k == key && matches!(**b, PExpr::Slot(s) if s == slot))
        }
        _ => false,
    }
}

/// Wraps `op` in a filter with every conjunct whose slots are all bound.
pub(crate) fn place(
    op: Op,
    conj: &mut Vec<(PExpr, Option<Vec<Slot>>)>,
    bound: &HashSet<Slot>,
) -> Op {
    let mut ready = Vec::new();
    let mut i = 0;
    while i < conj.len() {
        let ok = matches!(&conj[i].1, Some(d) if d.iter().all(|s| bound.contains(s)));
        if ok {
            ready.push(conj.remove(i).0);
        } else {
            i += 1;
        }
    }
    match ready.into_iter().reduce(and) {
        Some(pred) => Op::Filter { input: Box::new(op), pred, reads: true },
        None => op,
    }
}

pub(crate) fn path_expr(el: &PatternElement, ps: &PartSlots) -> PExpr {
    let mut steps = vec![PathStep::Node(ps.nodes[0])];
    for (i, (rp, _)) in el.chain.iter().enumerate() {
        if rp.length.is_some() || rp.quantified.is_some() {
            steps.push(PathStep::VarRel(ps.rels[i]));
        } else {
            steps.push(PathStep::Rel(ps.rels[i]));
        }
        steps.push(PathStep::Node(ps.nodes[i + 1]));
    }
    PExpr::Path(steps)
}

impl Binder<'_> {
    pub(crate) fn plan_match(
        &mut self,
        op: Op,
        scope: &mut Scope,
        parts: &[PatternPart],
        where_: Option<&Expr>,
    ) -> Result<Op> {
        let bound_before = scope.slots();
        let refs: Vec<&PatternPart> = parts.iter().collect();
        let slots = self.declare_match(scope, &refs)?;
        self.plan_match_declared(op, scope, &refs, &slots, where_, bound_before)
    }

    pub(crate) fn plan_match_declared(
        &mut self,
        mut op: Op,
        scope: &Scope,
        parts: &[&PatternPart],
        slots: &[PartSlots],
        where_: Option<&Expr>,
        mut bound: HashSet<Slot>,
    ) -> Result<Op> {
        let (mut conj, node_props, var_rel_props) =
            self.match_conjuncts(scope, parts, slots, where_)?;
        let mut match_rels: Vec<Slot> = Vec::new();
        // Relationships of the clause: each is kept distinct from the others (`unique_with`).
        let rels_in_clause: usize = parts.iter().map(|p| p.element.chain.len()).sum();
        op = place(op, &mut conj, &bound);
        for (pi, (part, ps)) in parts.iter().zip(slots).enumerate() {
            let el = &part.element;
            let node_pats: Vec<&ast::NodePattern> =
                std::iter::once(&el.start).chain(el.chain.iter().map(|(_, n)| n)).collect();
            if matches!(part.selector, PathSelector::Shortest { .. } | PathSelector::Any { .. }) {
                op = self.plan_selective(op, scope, part, ps, &mut bound)?;
                op = place(op, &mut conj, &bound);
                continue;
            }
            if part.selector != PathSelector::All {
                op = self.plan_shortest(op, part, ps, &mut bound, &mut conj, &node_pats)?;
                continue;
            }
            if crate::bind::qpp::has_qpp(el) {
                op = self.plan_qpp_part(
                    op,
                    scope,
                    el,
                    ps,
                    &node_pats,
                    &mut bound,
                    &mut conj,
                    &mut match_rels,
                )?;
                if let Some(p) = ps.path {
                    op = Op::Project { input: Box::new(op), items: vec![(p, path_expr(el, ps))] };
                    bound.insert(p);
                    op = place(op, &mut conj, &bound);
                }
                continue;
            }
            let (o, start, seeked_rel) = self.plan_part_start(
                op,
                el,
                ps,
                &node_pats,
                &node_props[pi],
                &mut bound,
                &mut conj,
                &mut match_rels,
            )?;
            op = o;
            let expansion = Expansion {
                el,
                ps,
                start,
                seeked_rel,
                rel_props: &var_rel_props[pi],
                rels_in_clause,
            };
            op = plan_expansions(op, &expansion, &mut bound, &mut conj, &mut match_rels);
            if let Some(p) = ps.path {
                op = Op::Project { input: Box::new(op), items: vec![(p, path_expr(el, ps))] };
                bound.insert(p);
                op = place(op, &mut conj, &bound);
            }
        }
        // Whatever is left (subqueries, or anything not yet placeable).
        let rest: Vec<PExpr> = conj.drain(..).map(|(e, _)| e).collect();
        if let Some(pred) = rest.into_iter().reduce(and) {
            op = Op::Filter { input: Box::new(op), pred, reads: true };
        }
        Ok(op)
    }

    /// The predicates of a MATCH clause split into conjuncts, each with the slots it needs
    /// (`None`: place last): inline labels and property maps, pattern WHEREs and the clause's
    /// WHERE. Also returns, per part and node, the inline property equalities (a start with
    /// one bound by the argument row is an equality seek), and per relationship the inline
    /// properties of variable-length relationships (checked on every hop).
    #[allow(clippy::type_complexity)]
    fn match_conjuncts(
        &mut self,
        scope: &Scope,
        parts: &[&PatternPart],
        slots: &[PartSlots],
        where_: Option<&Expr>,
    ) -> Result<(Vec<Conj>, Vec<Vec<Vec<(Name, PExpr)>>>, Vec<Vec<Vec<(Name, PExpr)>>>)> {
        // Conjuncts with the slots they need (None = place last).
        let mut conj: Vec<(PExpr, Option<Vec<Slot>>)> = Vec::new();
        // Per node: (label names, property equalities) so the start can use them.
        let mut node_props: Vec<Vec<Vec<(Name, PExpr)>>> = Vec::new();
        let mut var_rel_props: Vec<Vec<Vec<(Name, PExpr)>>> = Vec::new();
        for (part, ps) in parts.iter().zip(slots) {
            let el = &part.element;
            let mut np_list = Vec::new();
            for (np, &slot) in
                std::iter::once(&el.start).chain(el.chain.iter().map(|(_, n)| n)).zip(&ps.nodes)
            {
                let props = self.bind_pattern_props(np.properties.as_ref(), scope)?;
                for (k, v) in &props {
                    push(prop_eq(PExpr::Slot(slot), k.clone(), v.clone()), &mut conj);
                }
                np_list.push(props);
                for l in &np.labels {
                    push(PExpr::HasLabels(Box::new(PExpr::Slot(slot)), vec![name(l)]), &mut conj);
                }
                if let Some(le) = &np.label_expr {
                    push(self.lower_label_expr(&PExpr::Slot(slot), le, None, scope)?, &mut conj);
                }
                if let Some(w) = &np.where_ {
                    let e = self.bind_pred(w, scope)?;
                    push(e, &mut conj);
                }
            }
            node_props.push(np_list);
            if let Some(w) = &el.where_ {
                let e = self.bind_pred(w, scope)?;
                push(e, &mut conj);
            }
            let mut rp_list = Vec::new();
            for ((rp, _), &slot) in el.chain.iter().zip(&ps.rels) {
                let props = self.bind_pattern_props(rp.properties.as_ref(), scope)?;
                if rp.length.is_none() {
                    for (k, v) in &props {
                        push(prop_eq(PExpr::Slot(slot), k.clone(), v.clone()), &mut conj);
                    }
                }
                if let Some(te) = &rp.type_expr {
                    push(self.type_expr_pred(part, rp, te, slot, scope)?, &mut conj);
                }
                if let Some(w) = &rp.where_ {
                    let e = self.bind_pred(w, scope)?;
                    push(e, &mut conj);
                }
                rp_list.push(props);
            }
            var_rel_props.push(rp_list);
        }
        if let Some(w) = where_ {
            let e = self.bind_pred(w, scope)?;
            push(e, &mut conj);
        }

        Ok((conj, node_props, var_rel_props))
    }

    /// Chooses where an unbound pattern part starts (a bound node, an equality on an inline
    /// property, a node or relationship index seek, a label scan, else all nodes) and plans
    /// that start. Returns the plan, the start node's position, and the chain position of a
    /// relationship bound by a relationship index seek.
    #[allow(clippy::too_many_arguments)]
    fn plan_part_start(
        &mut self,
        mut op: Op,
        el: &PatternElement,
        ps: &PartSlots,
        node_pats: &[&ast::NodePattern],
        node_props: &[Vec<(Name, PExpr)>],
        bound: &mut HashSet<Slot>,
        conj: &mut Vec<Conj>,
        match_rels: &mut Vec<Slot>,
    ) -> Result<(Op, usize, Option<usize>)> {
        // Choose where to start.
        let node_start = ps
            .nodes
            .iter()
            .position(|s| bound.contains(s))
            .or_else(|| {
                (0..ps.nodes.len()).find(|&i| {
                    !node_pats[i].labels.is_empty()
                        && node_props[i].iter().any(|(_, v)| deps_within(v, bound))
                })
            })
            .or_else(|| {
                (0..ps.nodes.len()).find(|&i| {
                    let labels: Vec<Name> = node_pats[i].labels.iter().map(name).collect();
                    index_seek_for(conj, ps.nodes[i], &labels, bound, self.res).is_some()
                })
            });
        // Else a relationship index seek, which binds a relationship and its two nodes.
        let mut seeked_rel = None;
        if node_start.is_none() {
            if let Some((ri, ty, keys, values, range)) = rel_seek_for(conj, el, ps, bound, self.res)
            {
                let (a, b, r) = (ps.nodes[ri], ps.nodes[ri + 1], ps.rels[ri]);
                op = Op::RelIndexSeek {
                    input: Box::new(op),
                    rel: r,
                    start: a,
                    end: b,
                    dir: el.chain[ri].0.direction,
                    ty,
                    keys,
                    values,
                    range,
                };
                bound.insert(a);
                bound.insert(b);
                bound.insert(r);
                match_rels.push(r);
                op = place(op, conj, bound);
                seeked_rel = Some(ri);
            }
        }
        let start = match seeked_rel {
            Some(ri) => ri + 1,
            None => node_start
                .or_else(|| (0..ps.nodes.len()).find(|&i| !node_pats[i].labels.is_empty()))
                .unwrap_or(0),
        };
        let s_slot = ps.nodes[start];
        if !bound.contains(&s_slot) {
            let np = node_pats[start];
            let seek = node_props[start]
                .iter()
                .find(|(_, v)| deps_within(v, bound))
                .filter(|_| !np.labels.is_empty());
            if let Some(label) = np.labels.first() {
                take_conj(conj, |e| is_label_check(e, s_slot, label));
            }
            // An inline equality is an equality seek (it needs no index), unless a composite
            // index answers the node. Else a label scan, which the `index_seek` rule turns
            // into a seek when an index answers the filter placed above it.
            let labels: Vec<Name> = np.labels.iter().map(name).collect();
            let composite = matches!(
                index_seek_for(conj, s_slot, &labels, bound, self.res),
                Some((
                    _,
                    _,
                    Found::Seek(SeekRange::Composite { .. } | SeekRange::CompositeRange { .. })
                ))
            );
            let seek = seek.filter(|_| !composite);
            if let (Some((key, value)), Some(label)) = (seek, np.labels.first()) {
                take_conj(conj, |e| is_prop_eq(e, s_slot, key));
                op = Op::NodeIndexSeek {
                    input: Box::new(op),
                    slot: s_slot,
                    label: name(label),
                    key: key.clone(),
                    value: value.clone(),
                };
            } else {
                op = Op::NodeScan {
                    input: Box::new(op),
                    slot: s_slot,
                    label: np.labels.first().map(name),
                };
            }
            bound.insert(s_slot);
            op = place(op, conj, bound);
        }
        Ok((op, start, seeked_rel))
    }

    pub(crate) fn plan_shortest(
        &mut self,
        mut op: Op,
        part: &PatternPart,
        ps: &PartSlots,
        bound: &mut HashSet<Slot>,
        conj: &mut Vec<(PExpr, Option<Vec<Slot>>)>,
        node_pats: &[&ast::NodePattern],
    ) -> Result<Op> {
        let el = &part.element;
        if el.chain.len() != 1 {
            return Err(self.syntax(
                part.span,
                "InvalidArgumentType",
                "shortestPath(..) requires a pattern containing a single relationship",
            ));
        }
        for (i, &s) in ps.nodes.iter().enumerate() {
            if !bound.contains(&s) {
                op = Op::NodeScan {
                    input: Box::new(op),
                    slot: s,
                    label: node_pats[i].labels.first().map(name),
                };
                bound.insert(s);
                op = place(op, conj, bound);
            }
        }
        let rp = &el.chain[0].0;
        let (min, max) = rp.length.unwrap_or((Some(1), Some(1)));
        let path = match ps.path {
            Some(p) => p,
            None => self.slot(),
        };
        let rel = rp.variable.as_ref().map(|_| ps.rels[0]);
        op = Op::ShortestPath {
            input: Box::new(op),
            from: ps.nodes[0],
            to: ps.nodes[1],
            path,
            rel,
            dir: rp.direction,
            types: rp.types.iter().map(name).collect(),
            min: min.unwrap_or(1),
            max,
            all: part.selector == PathSelector::AllShortestPaths,
        };
        bound.insert(path);
        bound.insert(ps.rels[0]);
        Ok(place(op, conj, bound))
    }
}

/// A relationship index seek for a pattern part with nothing bound: the first single-type,
/// fixed-length relationship with an equality on every key of one of its type's indexes, else
/// the first with an `IN`, two-sided range, `STARTS WITH` or one-sided range on the key of a
/// single-property index of its type (in that order of preference). Returns `(chain position,
/// type, keys, equality values, range)`: with a range, `keys` is its one key and `values` is
/// empty.
#[allow(clippy::type_complexity)]
pub(crate) fn rel_seek_for(
    conj: &[(PExpr, Option<Vec<Slot>>)],
    el: &PatternElement,
    ps: &PartSlots,
    bound: &HashSet<Slot>,
    res: &dyn Resolver,
) -> Option<(usize, Name, Vec<Name>, Vec<PExpr>, Option<SeekRange>)> {
    let mut ranged: Option<(u8, usize, Name, Name, SeekRange)> = None;
    for (i, (rp, _)) in el.chain.iter().enumerate() {
        let slot = ps.rels[i];
        if rp.length.is_some() || rp.types.len() != 1 || ps.rels_pre[i] || bound.contains(&slot) {
            continue;
        }
        let preds = gather_preds(conj, slot, bound);
        let ty = &rp.types[0].name;
        let indexes = res.rel_indexes_on(ty);
        for ks in &indexes {
            let values: Option<Vec<PExpr>> = ks
                .iter()
                .map(|k| preds.iter().find(|(n, _)| **n == **k).and_then(|(_, p)| p.eq.clone()))
                .collect();
            if let Some(values) = values {
                let keys = ks.iter().map(|k| Name::from(k.as_str())).collect();
                return Some((i, ty.clone(), keys, values, None));
            }
        }
        for ks in indexes.iter().filter(|ks| ks.len() == 1) {
            let Some((_, p)) = preds.iter().find(|(n, _)| **n == *ks[0]) else { continue };
            let kind = |k| res.has_kind_index(k, true, ty, &ks[0]);
            let seek = p
                .range_seek()
                .or_else(|| p.point_seek().filter(|_| kind(IndexUse::Point)))
                .or_else(|| p.text_seek().filter(|_| kind(IndexUse::Text)));
            if let Some((rank, seek)) = seek {
                if ranged.as_ref().is_none_or(|b| rank < b.0) {
                    ranged = Some((rank, i, ty.clone(), Name::from(ks[0].as_str()), seek));
                }
            }
        }
    }
    ranged.map(|(_, i, ty, key, seek)| (i, ty, vec![key], Vec::new(), Some(seek)))
}

/// A predicate with the slots it needs before it can be placed (`None`: place last).
pub(crate) type Conj = (PExpr, Option<Vec<Slot>>);

/// Splits `e` into conjuncts and queues each with the slots it reads.
fn push(e: PExpr, conj: &mut Vec<Conj>) {
    let mut parts = Vec::new();
    e.conjuncts_into(&mut parts);
    for p in parts {
        let mut d = Vec::new();
        let ok = p.deps(&mut d);
        conj.push((p, ok.then_some(d)));
    }
}

/// One pattern part's expansions, from its planned start.
struct Expansion<'p> {
    el: &'p PatternElement,
    ps: &'p PartSlots,
    start: usize,
    seeked_rel: Option<usize>,
    rel_props: &'p [Vec<(Name, PExpr)>],
    /// Relationships in the whole clause (a lone var-length one may leave its list unbuilt).
    rels_in_clause: usize,
}

/// Expands from the start to the right, then to the left against the pattern direction,
/// placing each predicate as soon as its slots are bound.
fn plan_expansions(
    mut op: Op,
    x: &Expansion,
    bound: &mut HashSet<Slot>,
    conj: &mut Vec<Conj>,
    match_rels: &mut Vec<Slot>,
) -> Op {
    let Expansion { el, ps, start, seeked_rel, rel_props, rels_in_clause } = *x;
    // Expand to the right, then to the left (against the pattern direction).
    let order: Vec<(usize, bool)> = (start..el.chain.len())
        .map(|i| (i, false))
        .chain((0..start).rev().map(|i| (i, true)))
        .filter(|(i, _)| Some(*i) != seeked_rel)
        .collect();
    for (i, backwards) in order {
        let rp = &el.chain[i].0;
        let (from, to) =
            if backwards { (ps.nodes[i + 1], ps.nodes[i]) } else { (ps.nodes[i], ps.nodes[i + 1]) };
        let dir = if backwards { flip(rp.direction) } else { rp.direction };
        let rel = ps.rels[i];
        let types: Vec<Name> = rp.types.iter().map(name).collect();
        let into = bound.contains(&to);
        match rp.length {
            None => {
                op = Op::Expand {
                    input: Box::new(op),
                    from,
                    rel,
                    to,
                    dir,
                    types,
                    into,
                    rel_bound: ps.rels_pre[i],
                    unique_with: match_rels.clone(),
                };
            }
            Some((min, max)) => {
                op = Op::VarExpand {
                    input: Box::new(op),
                    from,
                    rel,
                    to,
                    dir,
                    types,
                    min: min.unwrap_or(1),
                    max,
                    into,
                    unique_with: match_rels.clone(),
                    rel_props: rel_props[i].clone(),
                    reversed: backwards,
                    rel_bound: ps.rels_pre[i],
                    list_unused: rp.variable.is_none()
                        && rp.type_expr.is_none()
                        && ps.path.is_none()
                        && rels_in_clause == 1,
                };
            }
        }
        match_rels.push(rel);
        bound.insert(rel);
        bound.insert(to);
        op = place(op, conj, bound);
    }
    op
}
