//! The shadowing rule of scoped subqueries: inside `CALL (a, b) { ... }` or `CALL (*) { ... }`
//! no clause of the body may declare a new variable under an imported name (`WITH 2 AS a`,
//! `UNWIND ... AS a`, `LOAD CSV ... AS a`, `YIELD ... AS a`), as Neo4j 5 refuses; passing the
//! variable on unchanged (`WITH a`, `WITH a AS a`) is allowed. Nested subqueries and `FOREACH`
//! open their own scopes and are checked when they are planned, not here.

use arbor_cypher_syntax::ast::{CallScope, ClauseKind, ExprKind, Ident, Query};
use arbor_model::Result;

use crate::bind::{Binder, Scope};

impl Binder<'_> {
    /// Fails on the first clause of `body` (each UNION branch in order) that declares a name
    /// `vars` imports from `outer`. Checked before the body is planned (whose own checks would
    /// report a plainer error), except when the body returns a name `outer` has: Neo4j reports
    /// that first, after planning.
    pub(crate) fn check_no_shadowing(
        &self,
        body: &Query,
        vars: &CallScope,
        outer: &Scope,
    ) -> Result<()> {
        let imported: Vec<&str> = match vars {
            CallScope::All => outer.vars.iter().map(|(n, _, _)| &**n).collect(),
            CallScope::Vars(names) => names.iter().map(|v| &*v.name).collect(),
        };
        if imported.is_empty() || returns_outer_name(body, outer) {
            return Ok(());
        }
        let parts = std::iter::once(&body.first).chain(body.unions.iter().map(|(_, q)| q));
        for clause in parts.flat_map(|p| &p.clauses) {
            let mut declared: Vec<&Ident> = Vec::new();
            match &clause.kind {
                ClauseKind::With(p) => {
                    for it in &p.items {
                        let Some(alias) = &it.alias else { continue };
                        let same =
                            matches!(&it.expr.kind, ExprKind::Variable(v) if *v == alias.name);
                        if !same {
                            declared.push(alias);
                        }
                    }
                }
                ClauseKind::Unwind { variable, .. } | ClauseKind::LoadCsv { variable, .. } => {
                    declared.push(variable);
                }
                ClauseKind::CallProcedure { yield_: Some(y), .. } => {
                    declared
                        .extend(y.items.iter().map(|(name, alias)| alias.as_ref().unwrap_or(name)));
                }
                _ => {}
            }
            if let Some(v) = declared.into_iter().find(|v| imported.contains(&&*v.name)) {
                return Err(self.syntax(
                    v.span,
                    "VariableShadowing",
                    format!(
                        "The variable `{}` is shadowing an imported variable with the same name \
                         and needs to be renamed",
                        v.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Whether a branch of `body` ends in a RETURN naming a column `outer` already has.
fn returns_outer_name(body: &Query, outer: &Scope) -> bool {
    let parts = std::iter::once(&body.first).chain(body.unions.iter().map(|(_, q)| q));
    parts.filter_map(|p| p.clauses.last()).any(|c| match &c.kind {
        ClauseKind::Return(p) => p.items.iter().any(|it| {
            let name = match (&it.alias, &it.expr.kind) {
                (Some(a), _) => &*a.name,
                (None, ExprKind::Variable(v)) => &**v,
                (None, _) => it.text.as_str(),
            };
            outer.get(name).is_some()
        }),
        _ => false,
    })
}
