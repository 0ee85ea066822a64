//! Type conversion functions: `toString`, `toInteger`, `toFloat`, `toBoolean`, their `OrNull`
//! variants and the list forms.
//!
//! The strict forms return null for unparsable strings but raise a TypeError for values of a type
//! they cannot convert at all (the TCK expects detail `InvalidArgumentValue`); the `OrNull` forms
//! return null instead.

use arbor_model::{format, Error, Result, Value};

use super::{arg, describe};

fn invalid(func: &str, v: &Value) -> Error {
    Error::type_error(format!("Invalid input for function '{func}()': got {}", describe(v)))
        .with_detail("InvalidArgumentValue")
}

/// `Some(converted)` (possibly null) when the type is convertible, `None` when it is not.
fn string_of(v: &Value) -> Option<Value> {
    match v {
        Value::Null => Some(Value::Null),
        other => format::cypher_to_string(other).map(Value::from),
    }
}

/// Parses an integer the way Neo4j's `toInteger(String)` does: an integer literal, or a float
/// literal truncated towards zero. Unparsable text gives null.
/// A string as `toInteger` reads it (Neo4j 5.26): an integer literal, else a decimal or exponent
/// number truncated towards zero; no surrounding blanks, no hex. A number outside the integer
/// range is a TypeError, anything else unreadable is null.
fn parse_integer(s: &str) -> Result<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if !body.is_empty() && body.bytes().all(|c| c.is_ascii_digit()) {
        // An integer literal that `i64` cannot hold (as a float it could round into range).
        return Err(Error::type_error(format!("integer, {s}, is too large"))
            .with_detail("NumberOutOfRange"));
    }
    if body.eq_ignore_ascii_case("nan") || body.eq_ignore_ascii_case("infinity") {
        return Ok(Value::Null);
    }
    match parse_java_double(s) {
        Some(_) if s.trim() != s => Ok(Value::Null),
        Some(f) => float_to_int(f).map(Value::Int).ok_or_else(|| {
            Error::type_error(format!("integer, {s}, is too large")).with_detail("NumberOutOfRange")
        }),
        None => Ok(Value::Null),
    }
}

/// Truncates a float towards zero; `None` when it does not fit in an i64.
fn float_to_int(f: f64) -> Option<i64> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    let t = f.trunc();
    if t.is_finite() && (-TWO_63..TWO_63).contains(&t) {
        Some(t as i64)
    } else {
        None
    }
}

/// Parses a float literal as Java's `Double.parseDouble` accepts it (decimal and exponent
/// forms, `NaN`, `Infinity`), rejecting Rust-only spellings such as `inf`.
fn parse_java_double(t: &str) -> Option<f64> {
    let t = t.trim();
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    if body == "NaN" || body == "Infinity" {
        return t.replace("Infinity", "inf").parse().ok();
    }
    if body.is_empty()
        || !body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    t.parse::<f64>().ok()
}

fn integer_of(v: &Value) -> Result<Option<Value>> {
    Ok(Some(match v {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Int(*i),
        // Java's float-to-long cast: saturating, NaN is 0 (Neo4j 5.26 answers so).
        Value::Float(f) => Value::Int(*f as i64),
        Value::Bool(b) => Value::Int(i64::from(*b)),
        Value::String(s) => parse_integer(s)?,
        _ => return Ok(None),
    }))
}

fn float_of(v: &Value) -> Option<Value> {
    Some(match v {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Float(*i as f64),
        Value::Float(f) => Value::Float(*f),
        Value::String(s) => parse_java_double(s).map_or(Value::Null, Value::Float),
        _ => return None,
    })
}

fn boolean_of(v: &Value) -> Option<Value> {
    Some(match v {
        Value::Null => Value::Null,
        Value::Bool(b) => Value::Bool(*b),
        Value::Int(i) => Value::Bool(*i != 0),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::Null,
        },
        _ => return None,
    })
}

pub fn to_string(args: &[Value]) -> Result<Value> {
    let v = arg(args, 0);
    string_of(v).ok_or_else(|| invalid("toString", v))
}

pub fn to_string_or_null(args: &[Value]) -> Result<Value> {
    Ok(string_of(arg(args, 0)).unwrap_or(Value::Null))
}

pub fn to_integer(args: &[Value]) -> Result<Value> {
    let v = arg(args, 0);
    integer_of(v)?.ok_or_else(|| invalid("toInteger", v))
}

pub fn to_integer_or_null(args: &[Value]) -> Result<Value> {
    Ok(integer_of(arg(args, 0)).ok().flatten().unwrap_or(Value::Null))
}

pub fn to_float(args: &[Value]) -> Result<Value> {
    let v = arg(args, 0);
    float_of(v).ok_or_else(|| invalid("toFloat", v))
}

pub fn to_float_or_null(args: &[Value]) -> Result<Value> {
    Ok(float_of(arg(args, 0)).unwrap_or(Value::Null))
}

pub fn to_boolean(args: &[Value]) -> Result<Value> {
    let v = arg(args, 0);
    boolean_of(v).ok_or_else(|| invalid("toBoolean", v))
}

pub fn to_boolean_or_null(args: &[Value]) -> Result<Value> {
    Ok(boolean_of(arg(args, 0)).unwrap_or(Value::Null))
}

/// Applies an element conversion to a list; null stays null; a non-list is a TypeError.
fn list_map(func: &str, args: &[Value], f: impl Fn(&Value) -> Value) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::List(items) => Ok(Value::List(items.iter().map(f).collect())),
        other => Err(Error::type_error(format!(
            "Invalid input for function '{func}()': Expected a List, got: {}",
            describe(other)
        ))
        .with_detail("InvalidArgumentType")),
    }
}

pub fn to_integer_list(args: &[Value]) -> Result<Value> {
    list_map("toIntegerList", args, |v| integer_of(v).ok().flatten().unwrap_or(Value::Null))
}

pub fn to_float_list(args: &[Value]) -> Result<Value> {
    list_map("toFloatList", args, |v| float_of(v).unwrap_or(Value::Null))
}

pub fn to_boolean_list(args: &[Value]) -> Result<Value> {
    list_map("toBooleanList", args, |v| boolean_of(v).unwrap_or(Value::Null))
}

pub fn to_string_list(args: &[Value]) -> Result<Value> {
    list_map("toStringList", args, |v| string_of(v).unwrap_or(Value::Null))
}
