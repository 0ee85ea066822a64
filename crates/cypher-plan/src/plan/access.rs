//! Access-path selection: which index seek (node or relationship, equality, range, prefix,
//! `IN`, composite, text, spatial) can start a pattern, given the predicates and the indexes the [`crate::Resolver`]
//! reports. A seek only narrows candidates: the predicates stay in a `Filter` above it.
//!
//! It looks only at predicates and indexes (no scopes, no patterns): the planner asks it where
//! a pattern may start and which relationship seek to plan (`plan::matching`); the
//! `index_seek` rewrite rule (`rewrite::index_seek`) turns label scans into node seeks with it.

use std::collections::HashSet;

use arbor_cypher_syntax::ast::CompareOp;

use crate::catalog::{IndexUse, Resolver};
use crate::expr::{PExpr, Slot, StringOp};
use crate::ops::{Name, SeekRange};

/// The predicates of one property key of one entity that an index could answer (the first of
/// each kind found).
#[derive(Default)]
pub(crate) struct Preds {
    pub(crate) eq: Option<PExpr>,
    pub(crate) in_: Option<PExpr>,
    pub(crate) prefix: Option<PExpr>,
    pub(crate) contains: Option<PExpr>,
    pub(crate) ends: Option<PExpr>,
    pub(crate) lo: Option<(PExpr, bool)>,
    pub(crate) hi: Option<(PExpr, bool)>,
    /// `point.distance(p, point) <[=] distance`: `(point, distance, inclusive)`.
    pub(crate) near: Option<(PExpr, PExpr, bool)>,
    /// `point.withinBBox(p, lo, hi)`.
    pub(crate) bbox: Option<(PExpr, PExpr)>,
}

impl Preds {
    /// The best non-equality seek these predicates allow, ranked (lower is better): `IN`,
    /// two-sided range, `STARTS WITH`, one-sided range.
    pub(crate) fn range_seek(&self) -> Option<(u8, SeekRange)> {
        if let Some(e) = &self.in_ {
            Some((2, SeekRange::In(e.clone())))
        } else if let (Some(lo), Some(hi)) = (&self.lo, &self.hi) {
            Some((3, SeekRange::Range { lo: Some(lo.clone()), hi: Some(hi.clone()) }))
        } else if let Some(e) = &self.prefix {
            Some((4, SeekRange::Prefix(e.clone())))
        } else if self.lo.is_some() || self.hi.is_some() {
            Some((5, SeekRange::Range { lo: self.lo.clone(), hi: self.hi.clone() }))
        } else {
            None
        }
    }

    /// The seek a TEXT index adds (ranked after every other kind, as Neo4j prefers the others
    /// when an index answers them): `ENDS WITH`, then `CONTAINS`.
    pub(crate) fn text_seek(&self) -> Option<(u8, SeekRange)> {
        if let Some(e) = &self.ends {
            Some((7, SeekRange::EndsWith(e.clone())))
        } else {
            self.contains.as_ref().map(|e| (8, SeekRange::Contains(e.clone())))
        }
    }
}

impl Preds {
    /// The seek a POINT index adds: `point.withinBBox`, then `point.distance`.
    pub(crate) fn point_seek(&self) -> Option<(u8, SeekRange)> {
        if let Some((lo, hi)) = &self.bbox {
            Some((6, SeekRange::BBox { lo: lo.clone(), hi: hi.clone() }))
        } else {
            self.near.as_ref().map(|(p, d, inclusive)| {
                let seek = SeekRange::Distance {
                    point: p.clone(),
                    distance: d.clone(),
                    inclusive: *inclusive,
                };
                (6, seek)
            })
        }
    }
}

/// `Some((key, other point))` if `e` is `point.distance(slot.key, other)` or
/// `point.distance(other, slot.key)` with `other` reading only `bound` slots.
fn distance_of<'e>(
    e: &'e PExpr,
    slot: Slot,
    bound: &HashSet<Slot>,
) -> Option<(&'e Name, &'e PExpr)> {
    let PExpr::Scalar { name, args, .. } = e else { return None };
    if !(name.eq_ignore_ascii_case("point.distance") || name.eq_ignore_ascii_case("distance")) {
        return None;
    }
    let [a, b] = args.as_slice() else { return None };
    match (slot_prop(a, slot), slot_prop(b, slot)) {
        (Some(k), _) if deps_within(b, bound) => Some((k, b)),
        (_, Some(k)) if deps_within(a, bound) => Some((k, a)),
        _ => None,
    }
}

/// The indexable predicates on properties of `slot` (node or relationship) among the
/// conjuncts, per property key, whose other side depends only on `bound` slots.
pub(crate) fn gather_preds(
    conj: &[(PExpr, Option<Vec<Slot>>)],
    slot: Slot,
    bound: &HashSet<Slot>,
) -> Vec<(Name, Preds)> {
    let mut keys: Vec<(Name, Preds)> = Vec::new();
    let mut add = |key: &Name, f: &mut dyn FnMut(&mut Preds)| {
        let i = match keys.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                keys.push((key.clone(), Preds::default()));
                keys.len() - 1
            }
        };
        f(&mut keys[i].1);
    };
    let bound_op = |p: &mut Preds, op: CompareOp, e: &PExpr| match op {
        CompareOp::Eq => {
            p.eq.get_or_insert_with(|| e.clone());
        }
        CompareOp::Gt | CompareOp::Ge => {
            p.lo.get_or_insert_with(|| (e.clone(), op == CompareOp::Ge));
        }
        CompareOp::Lt | CompareOp::Le => {
            p.hi.get_or_insert_with(|| (e.clone(), op == CompareOp::Le));
        }
        CompareOp::Ne => {}
    };
    for (e, _) in conj {
        match e {
            PExpr::Compare(lhs, rest) if rest.len() == 1 => {
                let (op, rhs) = (rest[0].0, &rest[0].1);
                // `point.distance(n.p, c) < r` (or `r > point.distance(...)`).
                let near = match op {
                    CompareOp::Lt | CompareOp::Le => distance_of(lhs, slot, bound).zip(Some(rhs)),
                    CompareOp::Gt | CompareOp::Ge => {
                        distance_of(rhs, slot, bound).zip(Some(&**lhs))
                    }
                    _ => None,
                };
                if let Some(((k, c), d)) = near.filter(|(_, d)| deps_within(d, bound)) {
                    let inclusive = matches!(op, CompareOp::Le | CompareOp::Ge);
                    add(k, &mut |p| {
                        p.near.get_or_insert_with(|| (c.clone(), d.clone(), inclusive));
                    });
                } else if let Some(k) = slot_prop(lhs, slot).filter(|_| deps_within(rhs, bound)) {
                    add(k, &mut |p| bound_op(p, op, rhs));
                } else if let Some(k) = slot_prop(rhs, slot).filter(|_| deps_within(lhs, bound)) {
                    add(k, &mut |p| bound_op(p, flip_cmp(op), lhs));
                }
            }
            PExpr::Compare(a, rest) if rest.len() == 2 => {
                let ((op1, mid), (op2, c)) = ((rest[0].0, &rest[0].1), (rest[1].0, &rest[1].1));
                let ordering = |o: CompareOp| !matches!(o, CompareOp::Eq | CompareOp::Ne);
                if let Some(k) = slot_prop(mid, slot) {
                    if ordering(op1)
                        && ordering(op2)
                        && deps_within(a, bound)
                        && deps_within(c, bound)
                    {
                        add(k, &mut |p| {
                            bound_op(p, flip_cmp(op1), a);
                            bound_op(p, op2, c);
                        });
                    }
                }
            }
            PExpr::Str(StringOp::StartsWith, lhs, rhs) if deps_within(rhs, bound) => {
                if let Some(k) = slot_prop(lhs, slot) {
                    add(k, &mut |p| {
                        p.prefix.get_or_insert_with(|| (**rhs).clone());
                    });
                }
            }
            PExpr::Str(op @ (StringOp::Contains | StringOp::EndsWith), lhs, rhs)
                if deps_within(rhs, bound) =>
            {
                if let Some(k) = slot_prop(lhs, slot) {
                    let ends = *op == StringOp::EndsWith;
                    add(k, &mut |p| {
                        let at = if ends { &mut p.ends } else { &mut p.contains };
                        at.get_or_insert_with(|| (**rhs).clone());
                    });
                }
            }
            PExpr::Scalar { name, args, .. }
                if name.eq_ignore_ascii_case("point.withinbbox") && args.len() == 3 =>
            {
                if let Some(k) = slot_prop(&args[0], slot)
                    .filter(|_| deps_within(&args[1], bound) && deps_within(&args[2], bound))
                {
                    add(k, &mut |p| {
                        p.bbox.get_or_insert_with(|| (args[1].clone(), args[2].clone()));
                    });
                }
            }
            PExpr::In(lhs, rhs) if deps_within(rhs, bound) => {
                if let Some(k) = slot_prop(lhs, slot) {
                    add(k, &mut |p| {
                        p.in_.get_or_insert_with(|| (**rhs).clone());
                    });
                }
            }
            _ => {}
        }
    }
    keys
}

/// Whether `e` reads only slots in `bound` (and nothing whose slots are unknown, such as a
/// subquery).
pub(crate) fn deps_within(e: &PExpr, bound: &HashSet<Slot>) -> bool {
    let mut d = Vec::new();
    e.deps(&mut d) && d.iter().all(|s| bound.contains(s))
}

/// An indexable predicate found for a start node.
pub(crate) enum Found {
    /// `n.key = expr` in a WHERE: an exact equality seek.
    Eq(PExpr),
    Seek(SeekRange),
}

/// `Some(key)` if `e` is `slot.key`.
pub(crate) fn slot_prop(e: &PExpr, slot: Slot) -> Option<&Name> {
    match e {
        PExpr::Property(b, k) if matches!(**b, PExpr::Slot(s) if s == slot) => Some(k),
        _ => None,
    }
}

pub(crate) fn flip_cmp(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Lt => CompareOp::Gt,
        CompareOp::Le => CompareOp::Ge,
        CompareOp::Gt => CompareOp::Lt,
        CompareOp::Ge => CompareOp::Le,
        other => other,
    }
}

/// The best index seek for an unbound node `slot` with `labels`, from the conjuncts that
/// constrain its properties by values already bound: a composite index with an equality on
/// every key, then single-property equality, `IN`, two-sided ranges, `STARTS WITH`, one-sided
/// ranges. Only indexed `(label, keys)` are considered. Returns `(label, first key, seek)`.
pub(crate) fn index_seek_for(
    conj: &[(PExpr, Option<Vec<Slot>>)],
    slot: Slot,
    labels: &[Name],
    bound: &HashSet<Slot>,
    res: &dyn Resolver,
) -> Option<(Name, Name, Found)> {
    if labels.is_empty() {
        return None;
    }
    let keys = gather_preds(conj, slot, bound);
    let mut best: Option<(u8, Name, Name, Found)> = None;
    for l in labels {
        // A composite index whose every key has an equality.
        for ks in res.indexes_on(l).into_iter().filter(|ks| ks.len() > 1) {
            let values: Option<Vec<PExpr>> = ks
                .iter()
                .map(|k| keys.iter().find(|(n, _)| **n == **k).and_then(|(_, p)| p.eq.clone()))
                .collect();
            if let (Some(values), None) = (values, &best) {
                let names: Vec<Name> = ks.iter().map(|k| Name::from(k.as_str())).collect();
                let first = names[0].clone();
                let seek = SeekRange::Composite { keys: names, values };
                best = Some((0, l.clone(), first, Found::Seek(seek)));
            } else if let Some((rank, seek)) = composite_range(&ks, &keys) {
                // Neo4j's rule: equalities on a prefix of the keys, a range or prefix on the
                // next, and a predicate on every later key (the index has only nodes with
                // all of its keys).
                if best.as_ref().is_none_or(|b| rank < b.0) {
                    let first = Name::from(ks[0].as_str());
                    best = Some((rank, l.clone(), first, Found::Seek(seek)));
                }
            }
        }
        for (k, p) in &keys {
            let text = res.has_text_index(l, k);
            let point = res.has_kind_index(IndexUse::Point, false, l, k);
            if !text && !point && !res.has_index(l, k) {
                continue;
            }
            let cand = if let Some(e) = &p.eq {
                (1, Found::Eq(e.clone()))
            } else if let Some((rank, seek)) = p.range_seek() {
                (rank, Found::Seek(seek))
            } else if let Some((rank, seek)) = p.point_seek().filter(|_| point) {
                (rank, Found::Seek(seek))
            } else if let Some((rank, seek)) = p.text_seek().filter(|_| text) {
                (rank, Found::Seek(seek))
            } else {
                continue;
            };
            if best.as_ref().is_none_or(|b| cand.0 < b.0) {
                best = Some((cand.0, l.clone(), k.clone(), cand.1));
            }
        }
    }
    best.map(|(_, l, k, f)| (l, k, f))
}

/// A range seek on the composite index `ks` from the predicates per key, with its rank (as
/// `index_seek_for` ranks): `None` unless equalities cover a prefix of the keys, the next key
/// has a range or `STARTS WITH`, and every later key has a predicate that only an indexed
/// value can pass (not `IS NOT NULL`: NaN has no index key, so a node with a NaN is not in
/// the index although its property exists).
pub(crate) fn composite_range(ks: &[String], preds: &[(Name, Preds)]) -> Option<(u8, SeekRange)> {
    let pred = |k: &String| preds.iter().find(|(n, _)| **n == **k).map(|(_, p)| p);
    let n_eq = ks.iter().take_while(|k| pred(k).is_some_and(|p| p.eq.is_some())).count();
    let p = pred(ks.get(n_eq)?)?;
    let (rank, range) = match p.range_seek()? {
        (_, SeekRange::In(_)) => return None,
        other => other,
    };
    let later_exist = ks[n_eq + 1..].iter().all(|k| {
        pred(k).is_some_and(|p| {
            p.eq.is_some()
                || p.in_.is_some()
                || p.prefix.is_some()
                || p.lo.is_some()
                || p.hi.is_some()
        })
    });
    if !later_exist {
        return None;
    }
    let values = ks[..n_eq].iter().filter_map(|k| pred(k).and_then(|p| p.eq.clone())).collect();
    let keys = ks.iter().map(|k| Name::from(k.as_str())).collect();
    // Equalities in front make it about as selective as an equality seek.
    let rank = if n_eq > 0 { 1 } else { rank };
    Some((rank, SeekRange::CompositeRange { keys, values, range: Box::new(range) }))
}
