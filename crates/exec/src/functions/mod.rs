//! The Cypher function library: scalar functions that need no graph access, and aggregations.
//!
//! Graph-dependent functions (`id`, `labels`, `type`, `properties` of entities, `startNode`,
//! `nodes`, ...) are evaluated by the expression evaluator, which has the graph at hand.

use arbor_model::{Result, Value};

/// A scalar function over evaluated arguments.
pub type ScalarFn = fn(&[Value]) -> Result<Value>;

/// Looks up a scalar function by name, case-insensitively (`toUpper`, `toupper`), including
/// namespaced ones (`date.truncate`).
pub fn lookup_scalar(name: &str) -> Option<ScalarFn> {
    let _ = name;
    None
}

/// Aggregation functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    Collect,
    StDev,
    StDevP,
    PercentileCont,
    PercentileDisc,
}

/// Looks up an aggregation function by name, case-insensitively.
pub fn lookup_aggregate(name: &str) -> Option<AggKind> {
    let _ = name;
    None
}

/// Accumulates one group's values. For `percentileCont`/`percentileDisc` the second argument
/// (the percentile) arrives with every row.
pub trait Accumulator: Send {
    fn update(&mut self, args: &[Value]) -> Result<()>;
    fn finish(&mut self) -> Result<Value>;
}
