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
mod explain;
pub mod expr;
pub mod ops;
mod plan;
pub mod rewrite;
pub mod types;

use std::sync::Arc;

use arbor_cypher_syntax::ast::Statement;
use arbor_model::Result;

pub use expr::{PExpr, ScalarFn, Slot};
pub use ops::Op;
pub use types::CypherType;

/// A procedure's signature: its inputs and output columns with their declared types.
/// A procedure without outputs is `VOID`: in a query it passes each input row through once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcSig {
    pub name: String,
    pub inputs: Vec<(String, CypherType)>,
    pub outputs: Vec<(String, CypherType)>,
    /// How many trailing inputs a call may leave out (they are passed as null).
    pub optional: usize,
}

impl ProcSig {
    /// `name(in :: INTEGER, ...) :: (out :: STRING, ...)` as `SHOW PROCEDURES` prints it.
    pub fn signature_text(&self) -> String {
        let list = |xs: &[(String, CypherType)]| {
            xs.iter().map(|(n, t)| format!("{n} :: {t}")).collect::<Vec<_>>().join(", ")
        };
        let outputs = if self.outputs.is_empty() {
            "VOID".to_string()
        } else {
            format!("({})", list(&self.outputs))
        };
        format!("{}({}) :: {outputs}", self.name, list(&self.inputs))
    }
}

/// What the binder needs to know about functions and procedures it does not implement.
pub trait Resolver {
    /// A scalar function by lower-cased (possibly dotted) name.
    fn scalar(&self, lower_name: &str) -> Option<ScalarFn>;
    /// A procedure by its exact dotted name.
    fn procedure(&self, name: &str) -> Option<ProcSig>;
    /// Accepted argument counts `(min, max)` of a scalar function, if known.
    fn scalar_arity(&self, lower_name: &str) -> Option<(usize, usize)> {
        let _ = lower_name;
        None
    }
    /// The property-key lists of the indexes on `label` (one key, or several for a composite
    /// index, in definition order), so range, prefix, `IN` and composite equality predicates
    /// may be planned as index seeks (single-property equality seeks are always planned: they
    /// fall back to a scan at run time).
    fn indexes_on(&self, label: &str) -> Vec<Vec<String>> {
        let _ = label;
        Vec::new()
    }
    /// The property-key lists of the relationship indexes on type `ty`.
    fn rel_indexes_on(&self, ty: &str) -> Vec<Vec<String>> {
        let _ = ty;
        Vec::new()
    }
    /// Whether a single-property index on `(label, key)` exists.
    fn has_index(&self, label: &str, key: &str) -> bool {
        self.indexes_on(label).iter().any(|ks| ks.len() == 1 && ks[0] == key)
    }
    /// Whether a TEXT index on `(label, key)` exists, so `CONTAINS` and `ENDS WITH` predicates
    /// may be planned as text index scans.
    fn has_text_index(&self, label: &str, key: &str) -> bool {
        let _ = (label, key);
        false
    }
}

/// A planned query.
#[derive(Clone, Debug)]
pub struct Plan {
    pub root: Op,
    pub columns: Vec<String>,
    /// The slot holding each column's value in the root's rows.
    pub column_slots: Vec<Slot>,
    /// Row width.
    pub num_slots: usize,
    /// Parameter names the query uses, indexed by [`PExpr::Param`].
    pub params: Vec<Arc<str>>,
    /// Per parameter, how many `PExpr::Param` the binder made for it. A parameter used once
    /// can be moved out of the execution's parameters by its only reader (the executor does
    /// this for a top-level `UNWIND $list`, so a batch is not copied).
    pub param_uses: Vec<u32>,
    pub is_write: bool,
    pub is_read: bool,
    pub explain: bool,
    pub profile: bool,
}

/// The aggregation functions (lower-cased names).
pub fn is_aggregate(lower_name: &str) -> bool {
    matches!(
        lower_name,
        "count"
            | "sum"
            | "avg"
            | "min"
            | "max"
            | "collect"
            | "stdev"
            | "stdevp"
            | "percentilecont"
            | "percentiledisc"
    )
}

/// Binds and plans a `Query`, `Explain` or `Profile` statement. `text` is the query text the
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
