//! The argument helpers every function family shares: the `i`-th argument, and the TypeError and
//! ArgumentError texts Neo4j gives. A leaf below `mod.rs` (the catalogue) and the families.

use arbor_model::{Error, Value};

static NULL: Value = Value::Null;

/// The `i`-th argument, or null when absent.
pub(super) fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&NULL)
}

/// A TypeError for an argument of the wrong type, as Neo4j words it.
pub(super) fn type_err(func: &str, expected: &str, got: &Value) -> Error {
    Error::type_error(format!(
        "Invalid input for function '{func}()': Expected {expected}, got: {}",
        describe(got)
    ))
    .with_detail("InvalidArgumentType")
}

/// An ArgumentError for an argument of the right type but an invalid value.
pub(super) fn value_err(func: &str, msg: &str) -> Error {
    Error::argument(format!("Invalid input for function '{func}()': {msg}"))
        .with_detail("InvalidArgumentValue")
}

/// A short description of a value for error messages: `String("a")`, `Long(1)`, `List`.
pub(super) fn describe(v: &Value) -> String {
    match v {
        Value::Int(i) => format!("Long({i})"),
        Value::Float(f) => format!("Double({})", arbor_model::format::format_float(*f)),
        Value::String(s) => format!("String(\"{s}\")"),
        Value::Bool(b) => format!("Boolean({b})"),
        other => other.type_name().to_string(),
    }
}
