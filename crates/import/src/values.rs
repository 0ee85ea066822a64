//! Field text -> property value, by column type, with neo4j-admin's rules: an empty unquoted
//! field means "no property"; a quoted empty string is `""` unless `--ignore-empty-strings`;
//! non-string values are trimmed, strings only with `--trim-strings`; arrays split on the array
//! delimiter; `boolean` is true exactly for `true` (any case), as in Neo4j. Temporal and duration
//! text goes through arbor-model's parsers (the same as Cypher's `date('...')` etc.), points are
//! map literals such as `{x: 1, y: 2, crs: 'cartesian'}` or `{latitude: 55.6, longitude: 12.9}`.
//!
//! Integers are range-checked against their declared width (`byte`, `short`, `int`) but stored
//! as Arbor's one integer type; `float` and `double` both become Arbor's float (so
//! `--normalize-types` has nothing left to do).

use std::sync::Arc;

use arbor_model::temporal_build::{parse_duration, parse_temporal, TemporalKind};
use arbor_model::{spatial, Value};

use crate::header::{BaseType, ValueType};

/// Options that change how field text becomes a value.
#[derive(Clone, Copy, Debug)]
pub struct ValueOptions {
    pub array_delimiter: u8,
    pub trim_strings: bool,
    pub ignore_empty_strings: bool,
}

impl Default for ValueOptions {
    fn default() -> Self {
        ValueOptions { array_delimiter: b';', trim_strings: false, ignore_empty_strings: false }
    }
}

/// Parses one field. `Ok(None)` = no property. Errors say what could not be parsed.
pub fn parse_field(
    ty: ValueType,
    text: &str,
    quoted: bool,
    opts: &ValueOptions,
) -> Result<Option<Value>, String> {
    if text.is_empty() && !quoted {
        return Ok(None);
    }
    if !ty.array {
        return parse_scalar(ty.base, text, opts);
    }
    let trimmed = text.trim();
    if trimmed.is_empty() && ty.base != BaseType::String {
        return Ok(None);
    }
    let mut items = Vec::new();
    for part in text.split(opts.array_delimiter as char) {
        match parse_scalar(ty.base, part, opts)? {
            Some(v) => items.push(v),
            None if ty.base == BaseType::String => {}
            None => return Err(format!("empty element in {} array `{text}`", name(ty.base))),
        }
    }
    if ty.base == BaseType::Byte {
        let bytes: Vec<u8> = items
            .iter()
            .map(|v| match v {
                Value::Int(i) => *i as i8 as u8,
                _ => 0,
            })
            .collect();
        return Ok(Some(Value::Bytes(Arc::from(bytes))));
    }
    Ok(Some(Value::List(items)))
}

fn name(t: BaseType) -> &'static str {
    match t {
        BaseType::String => "string",
        BaseType::Long => "long",
        BaseType::Int => "int",
        BaseType::Short => "short",
        BaseType::Byte => "byte",
        BaseType::Double => "double",
        BaseType::Float => "float",
        BaseType::Boolean => "boolean",
        BaseType::Char => "char",
        BaseType::Date => "date",
        BaseType::LocalTime => "localtime",
        BaseType::Time => "time",
        BaseType::LocalDateTime => "localdatetime",
        BaseType::DateTime => "datetime",
        BaseType::Duration => "duration",
        BaseType::Point => "point",
    }
}

fn parse_scalar(base: BaseType, text: &str, opts: &ValueOptions) -> Result<Option<Value>, String> {
    let bad = || format!("cannot parse `{text}` as {}", name(base));
    if base == BaseType::String {
        let s = if opts.trim_strings { text.trim() } else { text };
        if s.is_empty() && opts.ignore_empty_strings {
            return Ok(None);
        }
        return Ok(Some(Value::String(Arc::from(s))));
    }
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let int = |min: i64, max: i64| -> Result<Option<Value>, String> {
        let v: i64 = t.parse().map_err(|_| bad())?;
        if v < min || v > max {
            return Err(format!("`{text}` is out of range for {}", name(base)));
        }
        Ok(Some(Value::Int(v)))
    };
    let temporal = |k: TemporalKind| parse_temporal(k, t).map(Some).map_err(|e| e.message);
    match base {
        BaseType::String => Ok(None),
        BaseType::Long => int(i64::MIN, i64::MAX),
        BaseType::Int => int(i64::from(i32::MIN), i64::from(i32::MAX)),
        BaseType::Short => int(i64::from(i16::MIN), i64::from(i16::MAX)),
        BaseType::Byte => int(i64::from(i8::MIN), i64::from(u8::MAX)),
        BaseType::Double | BaseType::Float => {
            t.parse::<f64>().map(|f| Some(Value::Float(f))).map_err(|_| bad())
        }
        BaseType::Boolean => Ok(Some(Value::Bool(t.eq_ignore_ascii_case("true")))),
        BaseType::Char => {
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(Some(Value::String(Arc::from(c.to_string())))),
                _ => Err(format!("`{text}` is not a single character")),
            }
        }
        BaseType::Date => temporal(TemporalKind::Date),
        BaseType::LocalTime => temporal(TemporalKind::LocalTime),
        BaseType::Time => temporal(TemporalKind::Time),
        BaseType::LocalDateTime => temporal(TemporalKind::LocalDateTime),
        BaseType::DateTime => temporal(TemporalKind::DateTime),
        BaseType::Duration => {
            parse_duration(t).map(|d| Some(Value::Duration(d))).map_err(|e| e.message)
        }
        BaseType::Point => parse_point(t).map(Some),
    }
}

/// Parses a point map literal: `{key: number-or-'string', ...}` (keys may be quoted).
fn parse_point(t: &str) -> Result<Value, String> {
    let bad = |why: &str| format!("cannot parse `{t}` as point: {why}");
    let inner = t
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| bad("expected a map in braces"))?;
    let mut map = arbor_model::PropertyMap::new();
    for entry in inner.split(',') {
        if entry.trim().is_empty() {
            continue;
        }
        let (k, v) = entry.split_once(':').ok_or_else(|| bad("expected key: value"))?;
        let k = unquote(k.trim()).to_ascii_lowercase();
        let v = v.trim();
        let value = if v.starts_with(['\'', '"']) {
            Value::String(Arc::from(unquote(v)))
        } else if let Ok(i) = v.parse::<i64>() {
            if k == "srid" {
                Value::Int(i)
            } else {
                Value::Float(i as f64)
            }
        } else {
            Value::Float(v.parse::<f64>().map_err(|_| bad(&format!("`{v}` is not a number")))?)
        };
        map.insert(k.into(), value);
    }
    match spatial::point_from_map(&map) {
        Ok(Some(p)) => Ok(Value::Point(p)),
        Ok(None) => Err(bad("missing coordinates")),
        Err(e) => Err(bad(&e.message)),
    }
}

fn unquote(s: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(base: BaseType, array: bool, text: &str) -> Result<Option<Value>, String> {
        parse_field(ValueType { base, array }, text, false, &ValueOptions::default())
    }
    fn show(base: BaseType, array: bool, text: &str) -> String {
        match p(base, array, text) {
            Ok(Some(v)) => format!("{v:?}"),
            Ok(None) => "none".to_string(),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn numbers_and_ranges() {
        assert_eq!(show(BaseType::Long, false, " 42 "), "Int(42)");
        assert_eq!(show(BaseType::Int, false, "-2147483648"), "Int(-2147483648)");
        assert!(show(BaseType::Int, false, "2147483648").contains("out of range"));
        assert!(show(BaseType::Short, false, "40000").contains("out of range"));
        assert!(show(BaseType::Byte, false, "300").contains("out of range"));
        assert_eq!(show(BaseType::Double, false, "1.5"), "Float(1.5)");
        assert_eq!(show(BaseType::Float, false, "2"), "Float(2.0)");
        assert!(show(BaseType::Long, false, "12x").starts_with("error: cannot parse"));
    }

    #[test]
    fn empty_fields() {
        assert_eq!(show(BaseType::Long, false, ""), "none");
        assert_eq!(show(BaseType::String, false, ""), "none");
        let o = ValueOptions::default();
        let s = parse_field(ValueType::STRING, "", true, &o).unwrap();
        assert_eq!(format!("{s:?}"), "Some(String(\"\"))");
        let o = ValueOptions { ignore_empty_strings: true, ..o };
        assert!(parse_field(ValueType::STRING, "", true, &o).unwrap().is_none());
    }

    #[test]
    fn strings_trim_only_when_asked() {
        assert_eq!(show(BaseType::String, false, " a "), "String(\" a \")");
        let o = ValueOptions { trim_strings: true, ..ValueOptions::default() };
        let v = parse_field(ValueType::STRING, " a ", false, &o).unwrap();
        assert_eq!(format!("{v:?}"), "Some(String(\"a\"))");
    }

    #[test]
    fn booleans_and_chars() {
        assert_eq!(show(BaseType::Boolean, false, "TRUE"), "Bool(true)");
        assert_eq!(show(BaseType::Boolean, false, "no"), "Bool(false)");
        assert_eq!(show(BaseType::Char, false, "x"), "String(\"x\")");
        assert!(show(BaseType::Char, false, "xy").contains("single character"));
    }

    #[test]
    fn arrays() {
        assert_eq!(show(BaseType::Long, true, "1;2;3"), "List([Int(1), Int(2), Int(3)])");
        assert_eq!(show(BaseType::String, true, "a;b"), "List([String(\"a\"), String(\"b\")])");
        assert!(show(BaseType::Long, true, "1;;3").contains("empty element"));
        assert_eq!(show(BaseType::Byte, true, "1;255"), "Bytes([1, 255])");
        assert_eq!(show(BaseType::Boolean, true, "true;false"), "List([Bool(true), Bool(false)])");
    }

    #[test]
    fn temporal_duration_point() {
        assert!(show(BaseType::Date, false, "2024-02-29").starts_with("Date("));
        assert!(show(BaseType::Date, false, "2023-02-29").starts_with("error"));
        assert!(show(BaseType::LocalTime, false, "12:30:01").starts_with("LocalTime("));
        assert!(show(BaseType::Time, false, "12:30:01+01:00").starts_with("Time("));
        assert!(
            show(BaseType::LocalDateTime, false, "2020-01-01T10:00").starts_with("LocalDateTime(")
        );
        assert!(show(BaseType::DateTime, false, "2020-01-01T10:00Z").starts_with("DateTime("));
        assert!(show(BaseType::Duration, false, "P1Y2DT3H").starts_with("Duration("));
        assert!(show(BaseType::Date, true, "2020-01-01;2021-01-01").starts_with("List([Date("));
        let pt = show(BaseType::Point, false, "{x: 1, y: 2.5}");
        assert!(pt.contains("srid: 7203") && pt.contains("y: 2.5"), "{pt}");
        let pt = show(BaseType::Point, false, "{latitude: 55.6, longitude: 12.9, crs:'WGS-84'}");
        assert!(pt.contains("srid: 4326"), "{pt}");
        assert!(show(BaseType::Point, false, "{x: a}").starts_with("error"));
        assert!(show(BaseType::Point, false, "1,2").starts_with("error"));
    }
}
