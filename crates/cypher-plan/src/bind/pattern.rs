//! Pattern variables: declaring the nodes, relationships and paths of a MATCH pattern (with the
//! rebinding rules), inline property maps, and pattern subplans of expressions.

use std::collections::HashSet;
use std::sync::Arc;

use arbor_cypher_syntax::ast::{
    self, Expr, ExprKind, PathSelector, PatternElement, PatternPart, Span,
};
use arbor_model::Result;

use crate::bind::*;
use crate::expr::{PExpr, Slot};
use crate::ops::{Name, Op};

impl Binder<'_> {
    /// Declares the variables of pattern parts in `scope` (MATCH semantics), returning slots.
    pub(crate) fn declare_match(
        &mut self,
        scope: &mut Scope,
        parts: &[&PatternPart],
    ) -> Result<Vec<PartSlots>> {
        let pre = scope.slots();
        let mut rels_here: HashSet<Arc<str>> = HashSet::new();
        // Group variables declared so far: a later use outside their group is an error.
        let mut groups_here: HashSet<Arc<str>> = HashSet::new();
        let mut out = Vec::new();
        for part in parts {
            let el = &part.element;
            let mut ps = PartSlots {
                nodes: Vec::new(),
                rels: Vec::new(),
                nodes_pre: Vec::new(),
                rels_pre: Vec::new(),
                path: None,
                groups: Vec::new(),
            };
            self.declare_groups(scope, el, &mut ps, &mut groups_here)?;
            for np in std::iter::once(&el.start).chain(el.chain.iter().map(|(_, n)| n)) {
                if let Some(v) = np.variable.as_ref().filter(|v| groups_here.contains(&v.name)) {
                    return Err(self.group_outside(v));
                }
                let slot = match &np.variable {
                    Some(v) => match scope.get(&v.name) {
                        Some((s, k)) => {
                            if !matches!(k, Kind::Node | Kind::Any) {
                                return Err(self.type_conflict(v, k, "Node"));
                            }
                            s
                        }
                        None => {
                            let s = self.slot();
                            scope.bind(v.name.clone(), s, Kind::Node);
                            s
                        }
                    },
                    None => self.slot(),
                };
                ps.nodes_pre.push(pre.contains(&slot));
                ps.nodes.push(slot);
            }
            for (rp, _) in &el.chain {
                if rp.quantified.is_some() {
                    // The trail's relationship list (hidden): for the path and uniqueness.
                    ps.rels_pre.push(false);
                    ps.rels.push(self.slot());
                    continue;
                }
                if let Some(v) = rp.variable.as_ref().filter(|v| groups_here.contains(&v.name)) {
                    return Err(self.group_outside(v));
                }
                let want = if rp.length.is_some() { Kind::RelList } else { Kind::Rel };
                let slot = match &rp.variable {
                    Some(v) => {
                        if !rels_here.insert(v.name.clone()) {
                            return Err(self.syntax(
                                v.span,
                                "RelationshipUniquenessViolation",
                                format!("Cannot use the same relationship variable '{}' for multiple relationships", v.name),
                            ));
                        }
                        match scope.get(&v.name) {
                            Some((s, k)) => {
                                let ok = if rp.length.is_some() {
                                    matches!(k, Kind::RelList | Kind::List | Kind::Any)
                                } else {
                                    matches!(k, Kind::Rel | Kind::Any)
                                };
                                if !ok {
                                    return Err(self.type_conflict(v, k, "Relationship"));
                                }
                                s
                            }
                            None => {
                                let s = self.slot();
                                scope.bind(v.name.clone(), s, want);
                                s
                            }
                        }
                    }
                    None => self.slot(),
                };
                ps.rels_pre.push(pre.contains(&slot));
                ps.rels.push(slot);
            }
            if let Some(v) = &part.variable {
                if scope.get(&v.name).is_some() {
                    return Err(self.already_bound(v));
                }
                let s = self.slot();
                scope.bind(v.name.clone(), s, Kind::Path);
                ps.path = Some(s);
            }
            out.push(ps);
        }
        Ok(out)
    }

    pub(crate) fn bind_pattern_props(
        &mut self,
        props: Option<&Expr>,
        scope: &Scope,
    ) -> Result<Vec<(Name, PExpr)>> {
        let Some(p) = props else { return Ok(Vec::new()) };
        match &p.kind {
            ExprKind::Map(entries) => {
                let mut out = Vec::new();
                for (k, v) in entries {
                    out.push((name(k), self.bind_expr(v, scope)?));
                }
                Ok(out)
            }
            ExprKind::Parameter(_) => Err(self.syntax(
                p.span,
                "InvalidParameterUse",
                "Parameter maps cannot be used in MATCH patterns (use a literal map instead, e.g. {id: $param.id})",
            )),
            _ => Err(self.syntax(p.span, "InvalidArgumentType", "Expected a map of properties")),
        }
    }

    /// A sub-plan matching `pe` on the argument row; with `map`, projects it into a new slot.
    pub(crate) fn pattern_subplan(
        &mut self,
        pe: &PatternElement,
        path_var: Option<&ast::Ident>,
        scope: &Scope,
        filter: Option<&Expr>,
        map: Option<&Expr>,
    ) -> Result<(Op, Slot)> {
        let part = PatternPart {
            variable: path_var.cloned(),
            selector: PathSelector::All,
            element: pe.clone(),
            span: Span::default(),
        };
        let mut inner = scope.clone();
        let bound = scope.slots();
        let refs = [&part];
        let slots = self.declare_match(&mut inner, &refs)?;
        let mut op =
            self.plan_match_declared(Op::Argument, &inner, &refs, &slots, filter, bound)?;
        let slot = self.slot();
        if let Some(m) = map {
            let e = self.bind_expr(m, &inner)?;
            op = Op::Project { input: Box::new(op), items: vec![(slot, e)] };
        }
        Ok((op, slot))
    }
}
