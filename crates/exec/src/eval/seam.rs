//! The recursion seam of expression evaluation: [`Evaluate`], the one operation a family of
//! expressions (`logic`, `lists`, `entity`, `labels`, `compiled`) needs to evaluate its
//! subexpressions, and [`eval`], its entry point. `mod.rs` implements the trait with the
//! dispatcher, so the families import only this leaf and never the dispatcher that calls
//! them (no import cycle between the files of `eval/`). The call is static: `Ctx` has one
//! implementation, which the compiler sees and inlines as it did the direct call.
//!
//! Also the two helpers every family shares: [`type_err`] and [`truth`].

use arbor_cypher_plan::expr::PExpr;
use arbor_model::{Error, Result, Value};

use crate::ctx::{Ctx, Row};
use crate::graph::Graph;

/// Evaluates one expression on a row: implemented for [`Ctx`] by the dispatcher in `mod.rs`.
pub(crate) trait Evaluate {
    fn evaluate(&mut self, e: &PExpr, row: &mut Row, g: &mut dyn Graph) -> Result<Value>;
}

/// Evaluates an expression on a row (see `mod.rs` for the dispatch over expression kinds).
#[inline(always)]
pub(crate) fn eval(e: &PExpr, row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Value> {
    ctx.evaluate(e, row, g)
}

pub(crate) fn type_err(msg: impl Into<String>) -> Error {
    Error::type_error(msg).with_detail("InvalidArgumentType")
}

pub(crate) fn truth(v: &Value, what: &str) -> Result<Option<bool>> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Null => Ok(None),
        other => Err(type_err(format!(
            "Type mismatch: expected Boolean but was {} ({what})",
            other.type_name()
        ))),
    }
}
