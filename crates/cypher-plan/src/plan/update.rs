//! Updating clauses: `CREATE`, `MERGE`, `SET` and `REMOVE`.

use std::collections::HashSet;

use arbor_cypher_syntax::ast::{self, Direction, PatternPart, RemoveItem, SetItem};
use arbor_model::{Error, Result};

use crate::bind::*;
use crate::expr::{PExpr, Slot};
use crate::ops::{CreateStep, Op, SetOp};
use crate::plan::matching::*;

impl Binder<'_> {
    /// CREATE (and MERGE's create half). With `declared`, variables were declared by MERGE's
    /// matcher and their slots are reused.
    pub(crate) fn plan_create(
        &mut self,
        scope: &mut Scope,
        parts: &[PatternPart],
        declared: Option<(&[PartSlots], &Scope)>,
    ) -> Result<Vec<CreateStep>> {
        let mut steps = Vec::new();
        let pre = scope.clone();
        let clause = if declared.is_some() { "MERGE" } else { "CREATE" };
        for (pi, part) in parts.iter().enumerate() {
            let el = &part.element;
            let mut nodes = Vec::new();
            let mut created: HashSet<Slot> = HashSet::new();
            for (ni, np) in
                std::iter::once(&el.start).chain(el.chain.iter().map(|(_, n)| n)).enumerate()
            {
                let existing = np.variable.as_ref().and_then(|v| scope.get(&v.name));
                let slot = match existing {
                    Some((s, k)) => {
                        let v = np.variable.as_ref().ok_or_else(|| Error::internal("var"))?;
                        let was_pre = pre.get(&v.name).is_some()
                            && declared.map(|(_, ms)| ms.get(&v.name).is_some()).unwrap_or(true);
                        if !matches!(k, Kind::Node | Kind::Any) {
                            return Err(self.type_conflict(v, k, "Node"));
                        }
                        let fresh_in_merge =
                            declared.map(|(d, _)| !d[pi].nodes_pre[ni]).unwrap_or(false);
                        if fresh_in_merge {
                            if created.insert(s) {
                                steps.push(self.create_node_step(s, np, clause, scope)?);
                            }
                        } else if ((was_pre || declared.is_none())
                            && (!np.labels.is_empty()
                                || np.label_expr.is_some()
                                || np.properties.is_some()))
                            || (was_pre && el.chain.is_empty())
                        {
                            // Labels or properties on a node declared before (in an earlier
                            // clause, or earlier in this CREATE) would re-create it.
                            return Err(self.already_bound(v));
                        }
                        s
                    }
                    None => {
                        let s = match declared {
                            Some((d, _)) => d[pi].nodes[ni],
                            None => self.slot(),
                        };
                        if let Some(v) = &np.variable {
                            scope.bind(v.name.clone(), s, Kind::Node);
                        }
                        created.insert(s);
                        steps.push(self.create_node_step(s, np, clause, scope)?);
                        s
                    }
                };
                nodes.push(slot);
            }
            let mut rels = Vec::new();
            for (ri, (rp, _)) in el.chain.iter().enumerate() {
                // A bound relationship variable is reported before any other problem of the
                // relationship pattern (as Neo4j does).
                if let (Some(v), None) = (&rp.variable, declared) {
                    if scope.get(&v.name).is_some() {
                        return Err(self.already_bound(v));
                    }
                }
                if rp.length.is_some() {
                    return Err(self.syntax(
                        rp.span,
                        "CreatingVarLength",
                        "Variable length relationships cannot be used in CREATE",
                    ));
                }
                let dyn_type = match &rp.type_expr {
                    Some(te) => Some(self.create_dyn_type(te, clause, scope)?),
                    None => None,
                };
                if rp.types.len() != 1 && dyn_type.is_none() {
                    return Err(self.syntax(
                        rp.span,
                        "NoSingleRelationshipType",
                        "A single relationship type must be specified for CREATE",
                    ));
                }
                if rp.direction == Direction::Both && declared.is_none() {
                    return Err(self.syntax(
                        rp.span,
                        "RequiresDirectedRelationship",
                        "Only directed relationships are supported in CREATE",
                    ));
                }
                let slot = match (&rp.variable, declared) {
                    (_, Some((d, _))) => {
                        if d[pi].rels_pre[ri] {
                            let v = rp.variable.as_ref().ok_or_else(|| Error::internal("rel"))?;
                            return Err(self.already_bound(v));
                        }
                        d[pi].rels[ri]
                    }
                    (Some(v), None) => {
                        if scope.get(&v.name).is_some() {
                            return Err(self.already_bound(v));
                        }
                        let s = self.slot();
                        scope.bind(v.name.clone(), s, Kind::Rel);
                        s
                    }
                    (None, None) => self.slot(),
                };
                let props = match &rp.properties {
                    Some(p) => Some(self.bind_expr(p, scope)?),
                    None => None,
                };
                let (from, to) = if rp.direction == Direction::Incoming {
                    (nodes[ri + 1], nodes[ri])
                } else {
                    (nodes[ri], nodes[ri + 1])
                };
                let rel_type = rp.types.first().map(name).unwrap_or_else(|| "".into());
                steps.push(CreateStep::Rel { slot, from, to, rel_type, dyn_type, props });
                rels.push(slot);
            }
            if let Some(v) = &part.variable {
                let slot = match declared {
                    Some((d, _)) => d[pi].path.ok_or_else(|| Error::internal("path"))?,
                    None => {
                        if scope.get(&v.name).is_some() {
                            return Err(self.already_bound(v));
                        }
                        let s = self.slot();
                        scope.bind(v.name.clone(), s, Kind::Path);
                        s
                    }
                };
                let ps = PartSlots {
                    nodes,
                    rels,
                    nodes_pre: vec![],
                    rels_pre: vec![],
                    path: Some(slot),
                    groups: vec![],
                };
                steps.push(CreateStep::Path { slot, expr: path_expr(el, &ps) });
            }
        }
        Ok(steps)
    }

    pub(crate) fn create_node_step(
        &mut self,
        slot: Slot,
        np: &ast::NodePattern,
        clause: &str,
        scope: &Scope,
    ) -> Result<CreateStep> {
        let props = match &np.properties {
            Some(p) => Some(self.bind_expr(p, scope)?),
            None => None,
        };
        let dyn_labels = self.create_dyn_labels(np.label_expr.as_ref(), clause, scope)?;
        let labels = np.labels.iter().map(name).collect();
        Ok(CreateStep::Node { slot, labels, dyn_labels, props })
    }

    pub(crate) fn plan_merge(
        &mut self,
        op: Op,
        scope: &mut Scope,
        part: &PatternPart,
        actions: &[ast::MergeAction],
    ) -> Result<Op> {
        let before = scope.clone();
        let bound = scope.slots();
        for (rp, _) in &part.element.chain {
            if let Some(v) = &rp.variable {
                if before.get(&v.name).is_some() {
                    return Err(self.already_bound(v));
                }
            }
        }
        for (rp, _) in &part.element.chain {
            if rp.length.is_some() {
                return Err(self.syntax(
                    rp.span,
                    "CreatingVarLength",
                    "Variable length relationships cannot be used in MERGE",
                ));
            }
            if rp.types.len() != 1 && rp.type_expr.is_none() {
                return Err(self.syntax(
                    rp.span,
                    "NoSingleRelationshipType",
                    "A single relationship type must be specified for MERGE",
                ));
            }
        }
        for np in
            std::iter::once(&part.element.start).chain(part.element.chain.iter().map(|(_, n)| n))
        {
            if let (Some(v), Some(_)) =
                (&np.variable, before.get(np.variable.as_ref().map(|v| &*v.name).unwrap_or("")))
            {
                if part.element.chain.is_empty() {
                    return Err(self.already_bound(v));
                }
            }
        }
        let refs = [part];
        let slots = self.declare_match(scope, &refs)?;
        let matcher = self.plan_match_declared(Op::Argument, scope, &refs, &slots, None, bound)?;
        let mut create_scope = before.clone();
        let create = self.plan_create(
            &mut create_scope,
            std::slice::from_ref(part),
            Some((&slots, &before)),
        )?;
        let mut on_create = Vec::new();
        let mut on_match = Vec::new();
        for a in actions {
            match a {
                ast::MergeAction::OnCreate(items) => {
                    on_create.extend(self.bind_set_items(items, scope)?)
                }
                ast::MergeAction::OnMatch(items) => {
                    on_match.extend(self.bind_set_items(items, scope)?)
                }
            }
        }
        Ok(Op::Merge {
            input: Box::new(op),
            matcher: Box::new(matcher),
            create,
            on_create,
            on_match,
            null_checks: Vec::new(),
        })
    }

    pub(crate) fn bind_set_items(
        &mut self,
        items: &[SetItem],
        scope: &Scope,
    ) -> Result<Vec<SetOp>> {
        let mut out = Vec::new();
        for it in items {
            out.push(match it {
                SetItem::Property { target, key, value } => SetOp::Property {
                    target: self.bind_expr(target, scope)?,
                    key: name(key),
                    value: self.bind_expr(value, scope)?,
                },
                SetItem::Replace { variable, value } => SetOp::Replace {
                    target: self.bind_var(variable, scope)?,
                    value: self.bind_expr(value, scope)?,
                },
                SetItem::Merge { variable, value } => SetOp::Merge {
                    target: self.bind_var(variable, scope)?,
                    value: self.bind_expr(value, scope)?,
                },
                SetItem::Labels { variable, labels, dynamic } => SetOp::Labels {
                    target: self.bind_var(variable, scope)?,
                    labels: labels.iter().map(name).collect(),
                    dynamic: self.bind_set_dyn(dynamic, variable.span, scope)?,
                },
                SetItem::DynamicProperty { target, key, value } => SetOp::DynamicProperty {
                    target: self.bind_expr(target, scope)?,
                    key: self.bind_expr(key, scope)?,
                    value: self.bind_expr(value, scope)?,
                },
            });
        }
        Ok(out)
    }

    pub(crate) fn bind_remove_items(
        &mut self,
        items: &[RemoveItem],
        scope: &Scope,
    ) -> Result<Vec<SetOp>> {
        let mut out = Vec::new();
        for it in items {
            out.push(match it {
                RemoveItem::Property { target, key } => {
                    SetOp::RemoveProperty { target: self.bind_expr(target, scope)?, key: name(key) }
                }
                RemoveItem::Labels { variable, labels, dynamic } => SetOp::RemoveLabels {
                    target: self.bind_var(variable, scope)?,
                    labels: labels.iter().map(name).collect(),
                    dynamic: self.bind_set_dyn(dynamic, variable.span, scope)?,
                },
                RemoveItem::DynamicProperty { target, key } => SetOp::RemoveDynamicProperty {
                    target: self.bind_expr(target, scope)?,
                    key: self.bind_expr(key, scope)?,
                },
            });
        }
        Ok(out)
    }

    /// The `$(expr)` labels of a SET or REMOVE item (Neo4j points at the variable for a null).
    fn bind_set_dyn(
        &mut self,
        dynamic: &[ast::Expr],
        at: ast::Span,
        scope: &Scope,
    ) -> Result<Vec<PExpr>> {
        dynamic.iter().map(|e| self.bind_dyn_labels(e, at, scope)).collect()
    }
}
