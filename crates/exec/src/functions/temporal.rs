//! Temporal functions: `date`, `localtime`, `time`, `localdatetime`, `datetime` (from strings,
//! maps, other temporals, or no argument for "now"), `duration`, `<type>.truncate`,
//! `datetime.fromepoch[millis]` and `duration.between`/`inMonths`/`inDays`/`inSeconds`.
//!
//! The parsing and construction rules live in `arbor_model::temporal_build`; these wrappers
//! only dispatch on argument types. "Now" is read from the clock at each call, so two calls in
//! one statement may differ slightly (Neo4j pins statement time; nothing in the TCK depends on
//! the difference beyond `x = x` on one evaluated value).

use arbor_model::temporal_build::{self as tb, BetweenUnit, TemporalKind};
use arbor_model::{Error, Result, Value};

use super::{arg, type_err};

fn construct(kind: TemporalKind, func: &str, args: &[Value]) -> Result<Value> {
    if args.is_empty() {
        return Ok(tb::now(kind, None));
    }
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::String(s) => tb::parse_temporal(kind, s),
        Value::Map(m) => tb::temporal_from_map(kind, m),
        v @ (Value::Date(_)
        | Value::Time(_)
        | Value::LocalTime(_)
        | Value::DateTime(_)
        | Value::LocalDateTime(_)) => tb::temporal_from_temporal(kind, v),
        other => Err(type_err(func, "a String, a Map or a temporal value", other)),
    }
}

pub fn date(args: &[Value]) -> Result<Value> {
    construct(TemporalKind::Date, "date", args)
}

pub fn localtime(args: &[Value]) -> Result<Value> {
    construct(TemporalKind::LocalTime, "localtime", args)
}

pub fn time(args: &[Value]) -> Result<Value> {
    construct(TemporalKind::Time, "time", args)
}

pub fn localdatetime(args: &[Value]) -> Result<Value> {
    construct(TemporalKind::LocalDateTime, "localdatetime", args)
}

pub fn datetime(args: &[Value]) -> Result<Value> {
    construct(TemporalKind::DateTime, "datetime", args)
}

fn truncate(kind: TemporalKind, func: &str, args: &[Value]) -> Result<Value> {
    let unit = match arg(args, 0) {
        Value::Null => return Ok(Value::Null),
        Value::String(s) => s.clone(),
        other => return Err(type_err(func, "a String unit", other)),
    };
    let value = arg(args, 1);
    if value.is_null() {
        return Ok(Value::Null);
    }
    let map = match arg(args, 2) {
        Value::Null => None,
        Value::Map(m) => Some(m),
        other => return Err(type_err(func, "a Map", other)),
    };
    tb::truncate(kind, &unit, value, map)
}

pub fn date_truncate(args: &[Value]) -> Result<Value> {
    truncate(TemporalKind::Date, "date.truncate", args)
}

pub fn localtime_truncate(args: &[Value]) -> Result<Value> {
    truncate(TemporalKind::LocalTime, "localtime.truncate", args)
}

pub fn time_truncate(args: &[Value]) -> Result<Value> {
    truncate(TemporalKind::Time, "time.truncate", args)
}

pub fn localdatetime_truncate(args: &[Value]) -> Result<Value> {
    truncate(TemporalKind::LocalDateTime, "localdatetime.truncate", args)
}

pub fn datetime_truncate(args: &[Value]) -> Result<Value> {
    truncate(TemporalKind::DateTime, "datetime.truncate", args)
}

fn int_arg(func: &str, args: &[Value], i: usize) -> Result<Option<i64>> {
    match arg(args, i) {
        Value::Null => Ok(None),
        Value::Int(n) => Ok(Some(*n)),
        other => Err(type_err(func, "an Integer", other)),
    }
}

pub fn datetime_from_epoch(args: &[Value]) -> Result<Value> {
    let (Some(s), Some(n)) =
        (int_arg("datetime.fromepoch", args, 0)?, int_arg("datetime.fromepoch", args, 1)?)
    else {
        return Ok(Value::Null);
    };
    Ok(Value::DateTime(tb::datetime_from_epoch(s, n)?))
}

pub fn datetime_from_epoch_millis(args: &[Value]) -> Result<Value> {
    let Some(ms) = int_arg("datetime.fromepochmillis", args, 0)? else { return Ok(Value::Null) };
    Ok(Value::DateTime(tb::datetime_from_epoch(
        ms.div_euclid(1000),
        ms.rem_euclid(1000) * 1_000_000,
    )?))
}

pub fn duration(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::String(s) => in_range(tb::parse_duration(s)?),
        Value::Map(m) => in_range(tb::duration_from_map(m)?),
        Value::Duration(d) => Ok(Value::Duration(*d)),
        other => Err(type_err("duration", "a String or a Map", other)),
    }
}

/// Neo4j (and its drivers, which would fail to decode it) refuse a duration whose length in
/// average seconds leaves the integer range.
fn in_range(d: arbor_model::Duration) -> Result<Value> {
    arbor_model::temporal_ops::duration_in_range(d).map(Value::Duration)
}

fn between(func: &str, unit: BetweenUnit, args: &[Value]) -> Result<Value> {
    let (a, b) = (arg(args, 0), arg(args, 1));
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    match tb::duration_between(a, b, unit)? {
        Some(d) => Ok(Value::Duration(d)),
        None => Err(Error::type_error(format!(
            "Invalid input for function '{func}()': Expected two temporal values, got {} and {}",
            a.type_name(),
            b.type_name()
        ))
        .with_detail("InvalidArgumentType")),
    }
}

pub fn duration_between(args: &[Value]) -> Result<Value> {
    between("duration.between", BetweenUnit::All, args)
}

pub fn duration_in_months(args: &[Value]) -> Result<Value> {
    between("duration.inMonths", BetweenUnit::Months, args)
}

pub fn duration_in_days(args: &[Value]) -> Result<Value> {
    between("duration.inDays", BetweenUnit::Days, args)
}

pub fn duration_in_seconds(args: &[Value]) -> Result<Value> {
    between("duration.inSeconds", BetweenUnit::Seconds, args)
}
