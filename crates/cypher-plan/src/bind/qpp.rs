//! Variables of quantified path patterns: each variable inside `((x)-[r]->(y)){1,3}` is a
//! group variable outside it (a list, one value per iteration), and may not also be used
//! outside the group in the same pattern.

use std::collections::HashSet;
use std::sync::Arc;

use arbor_cypher_syntax::ast::{self, PatternElement};
use arbor_model::{Error, Result};

use crate::bind::*;

/// Whether a pattern element holds a quantified path pattern.
pub(crate) fn has_qpp(el: &PatternElement) -> bool {
    el.chain.iter().any(|(rp, _)| rp.quantified.is_some())
}

/// The variables declared inside a quantified path pattern's element, in order.
pub(crate) fn inner_vars(el: &PatternElement) -> Vec<&ast::Ident> {
    let mut out: Vec<&ast::Ident> = Vec::new();
    out.extend(el.start.variable.as_ref());
    for (rp, np) in &el.chain {
        out.extend(rp.variable.as_ref());
        out.extend(np.variable.as_ref());
    }
    out
}

impl Binder<'_> {
    /// Declares the group variables of every quantified path pattern in `el` (as lists).
    pub(crate) fn declare_groups(
        &mut self,
        scope: &mut Scope,
        el: &PatternElement,
        ps: &mut PartSlots,
        groups_here: &mut HashSet<Arc<str>>,
    ) -> Result<()> {
        for (rp, _) in &el.chain {
            let Some(q) = &rp.quantified else { continue };
            for v in inner_vars(&q.element) {
                if groups_here.contains(&v.name) {
                    // The same name twice in one group (`((x)-->(x))`) names one variable.
                    if scope.get(&v.name).is_some_and(|(s, _)| ps.groups.contains(&s)) {
                        continue;
                    }
                    return Err(self.group_outside(v));
                }
                if scope.get(&v.name).is_some() {
                    return Err(self.group_outside(v));
                }
                let s = self.slot();
                scope.bind(v.name.clone(), s, Kind::List);
                ps.groups.push(s);
                groups_here.insert(v.name.clone());
            }
        }
        Ok(())
    }

    /// Neo4j's error for a variable used both inside and outside a quantified path pattern.
    pub(crate) fn group_outside(&self, v: &ast::Ident) -> Error {
        self.syntax(
            v.span,
            "VariableAlreadyBound",
            format!(
                "The variable `{}` occurs both inside and outside a quantified path pattern and \
                 needs to be renamed.",
                v.name
            ),
        )
    }
}
