//! What the planner knows of the functions and procedures it does not implement: the
//! [`Resolver`] the caller supplies, procedure signatures ([`ProcSig`]), and which function names
//! are aggregations. A leaf: binding, planning and the rewrite rules all look down to it.

use crate::expr::ScalarFn;
use crate::types::CypherType;

/// A procedure's signature: its inputs and output columns with their declared types.
/// A procedure without outputs is `VOID`: in a query it passes each input row through once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcSig {
    pub name: String,
    pub inputs: Vec<(String, CypherType)>,
    pub outputs: Vec<(String, CypherType)>,
    /// How many trailing inputs a call may leave out (they are passed as null).
    pub optional: usize,
    /// For the internal procedures `SHOW` commands are planned as: how many leading outputs
    /// the command lists when it has no `YIELD`, `WHERE` or `RETURN` (`None`: all of them).
    pub default_outputs: Option<usize>,
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
        self.has_kind_index(IndexUse::Text, false, label, key)
    }
    /// Whether an index of `kind` on `(owner, key)` exists (`rel`: on relationships of type
    /// `owner`, else on nodes with label `owner`): TEXT indexes answer `CONTAINS` / `ENDS
    /// WITH`, POINT indexes `point.distance` / `point.withinBBox`.
    fn has_kind_index(&self, kind: IndexUse, rel: bool, owner: &str, key: &str) -> bool {
        let _ = (kind, rel, owner, key);
        false
    }
}

/// The index kinds that answer predicates a RANGE index does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexUse {
    /// A TEXT index: `CONTAINS`, `ENDS WITH`.
    Text,
    /// A POINT index: `point.distance(p, c) < r`, `point.withinBBox(p, lo, hi)`.
    Point,
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
