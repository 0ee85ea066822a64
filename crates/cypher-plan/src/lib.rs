//! Semantic analysis and logical planning for Cypher.
//!
//! The pipeline: `bind` (scopes, variable kinds, semantic errors) and `plan` (clauses to an
//! operator tree) run together clause by clause; then the [`rewrite`] rules run over the
//! finished tree, each an `Op -> Op` function, in a fixed order.
//!
//! [`plan`] takes a parsed statement and produces a [`Plan`]: an operator tree ([`ops::Op`])
//! over slot-indexed rows with bound expressions ([`expr::PExpr`]). The binder resolves every
//! variable to a row slot, checks scoping and typing rules (reporting the Neo4j/TCK error
//! details) and extracts aggregates and implicit grouping keys; the `Eager` barriers that keep
//! a clause from observing its own or a later clause's writes are rewrite rules.
//!
//! **Architecture Invariant:** this crate knows no storage and evaluates nothing; names of
//! labels, types and property keys stay names (the executor resolves tokens), and functions are
//! resolved through the [`Resolver`] the caller supplies.

mod bind;
mod catalog;
mod explain;
pub mod expr;
pub mod ops;
mod plan;
pub mod rewrite;
pub mod types;

use arbor_cypher_syntax::ast::Statement;
use arbor_model::Result;

pub use catalog::{is_aggregate, IndexUse, ProcSig, Resolver};
pub use expr::{PExpr, ScalarFn, Slot};
pub use ops::Op;
pub use plan::admin::admin_procedure_name;
pub use plan::show::show_procedure_name;
pub use plan::Plan;
pub use types::CypherType;

/// Binds and plans a `Query`, `Show` or `Admin` statement, or an `Explain` or `Profile` of one. `text` is the query text the
/// statement was parsed from (for column names and error positions).
pub fn plan(stmt: &Statement, text: &str, resolver: &dyn Resolver) -> Result<Plan> {
    plan::plan_statement(stmt, text, resolver, rewrite::RULES)
}

/// [`plan`] with only the given rewrite rules (in the given order) instead of
/// [`rewrite::RULES`]: `&[]` gives the plan as built, before any rewrite, so a rule can be
/// tested alone.
pub fn plan_with_rules(
    stmt: &Statement,
    text: &str,
    resolver: &dyn Resolver,
    rules: &[&dyn rewrite::RewriteRule],
) -> Result<Plan> {
    plan::plan_statement(stmt, text, resolver, rules)
}

#[cfg(test)]
mod tests;
