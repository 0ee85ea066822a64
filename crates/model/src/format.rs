//! Printing values: Cypher `toString()` (Neo4j's formats, which follow Java's `Double.toString`
//! and `java.time` `toString`) and the TCK's literal syntax for result comparison and display.

use std::fmt::Write;

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use crate::temporal::{DateTime, Duration, Point, Time};
use crate::value::{NodeData, PathData, RelData, Value};

/// Formats a float as Java's `Double.toString` does: plain notation with at least one fraction
/// digit for magnitudes in `[1e-3, 1e7)`, else `d.dddE[-]n`; shortest round-trip digits;
/// `NaN`, `Infinity`, `-Infinity`.
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // `{:e}` yields the shortest round-trip digits as `d.ddde<exp>`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    let abs = f.abs();
    if (1e-3..1e7).contains(&abs) {
        let mut out = String::from(sign);
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.push_str(&"0".repeat(int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.push_str(&"0".repeat((-exp - 1) as usize));
            out.push_str(&digits);
        }
        out
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

/// Cypher `toString()`: `Some` for strings, numbers, booleans, temporals, durations and points;
/// `None` for null and for types `toString()` rejects (lists, maps, entities, paths).
pub fn to_string_value(v: &Value) -> Option<String> {
    Some(match v {
        Value::String(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format_float(*f),
        Value::Bool(b) => b.to_string(),
        Value::Date(d) => {
            let (y, m, day) = d.ymd();
            format_ymd(y, m, day)
        }
        Value::LocalTime(t) => format_local_time(&t.0),
        Value::Time(t) => format_time(t),
        Value::LocalDateTime(t) => format_local_datetime(&t.0),
        Value::DateTime(t) => format_datetime(t),
        Value::Duration(d) => format_duration(d),
        Value::Point(p) => format_point(p),
        _ => return None,
    })
}

/// The Cypher function `toString()`: as [`to_string_value`], except that times print the way
/// Neo4j's `toString` does (`DateTimeFormatter.ISO_*`): seconds always, the fraction without
/// trailing zeros (`12:00:00Z`, `12:00:00.5Z`), where result display keeps Java's `toString`
/// (`12:00Z`, `12:00:00.500Z`) as the TCK writes values.
pub fn cypher_to_string(v: &Value) -> Option<String> {
    Some(match v {
        Value::LocalTime(t) => iso_local_time(&t.0),
        Value::Time(t) => format!("{}{}", iso_local_time(&t.time), format_offset(t.offset_seconds)),
        Value::LocalDateTime(t) => iso_local_datetime(&t.0),
        Value::DateTime(t) => {
            let mut out =
                format!("{}{}", iso_local_datetime(&t.local), format_offset(t.offset_seconds));
            if let Some(z) = &t.zone {
                let _ = write!(out, "[{z}]");
            }
            out
        }
        other => return to_string_value(other),
    })
}

/// `HH:mm:ss`, then the nanoseconds with trailing zeros dropped (`ISO_LOCAL_TIME`).
fn iso_local_time(t: &NaiveTime) -> String {
    let mut out = format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
    let nanos = t.nanosecond() % 1_000_000_000;
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        let _ = write!(out, ".{}", frac.trim_end_matches('0'));
    }
    out
}

fn iso_local_datetime(t: &NaiveDateTime) -> String {
    format!("{}T{}", format_date(&t.date()), iso_local_time(&t.time()))
}

/// `yyyy-MM-dd`, with Java's sign/padding rules for years outside 0000..=9999.
pub fn format_date(d: &NaiveDate) -> String {
    format_ymd(i64::from(d.year()), d.month(), d.day())
}

/// [`format_date`] of a year, month and day (years up to Java's ±999,999,999).
pub fn format_ymd(y: i64, month: u32, day: u32) -> String {
    let year = if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    };
    format!("{year}-{month:02}-{day:02}")
}

/// `HH:mm`, then `:ss` when seconds or nanos are set, then the fraction in groups of 3, 6 or 9
/// digits (Java's `LocalTime.toString`).
pub fn format_local_time(t: &NaiveTime) -> String {
    let mut out = format!("{:02}:{:02}", t.hour(), t.minute());
    // chrono encodes a leap second as nanos >= 1e9; fold it into the fraction range.
    let nanos = t.nanosecond() % 1_000_000_000;
    let sec = t.second();
    if sec != 0 || nanos != 0 {
        let _ = write!(out, ":{sec:02}");
        if nanos != 0 {
            if nanos.is_multiple_of(1_000_000) {
                let _ = write!(out, ".{:03}", nanos / 1_000_000);
            } else if nanos.is_multiple_of(1_000) {
                let _ = write!(out, ".{:06}", nanos / 1_000);
            } else {
                let _ = write!(out, ".{nanos:09}");
            }
        }
    }
    out
}

/// A UTC offset as Java prints it: `Z`, `+01:00`, `-11:59`, `+00:53:28`.
pub fn format_offset(offset_seconds: i32) -> String {
    if offset_seconds == 0 {
        return "Z".into();
    }
    let sign = if offset_seconds < 0 { '-' } else { '+' };
    let a = offset_seconds.unsigned_abs();
    let (h, m, s) = (a / 3600, (a / 60) % 60, a % 60);
    if s == 0 {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}:{m:02}:{s:02}")
    }
}

pub fn format_time(t: &Time) -> String {
    format!("{}{}", format_local_time(&t.time), format_offset(t.offset_seconds))
}

pub fn format_local_datetime(t: &NaiveDateTime) -> String {
    format!("{}T{}", format_date(&t.date()), format_local_time(&t.time()))
}

/// `2015-07-21T21:40:32.142+01:00[Europe/Stockholm]`; the zone suffix only for named zones.
pub fn format_datetime(t: &DateTime) -> String {
    let mut out = format!("{}{}", format_local_datetime(&t.local), format_offset(t.offset_seconds));
    if let Some(z) = &t.zone {
        let _ = write!(out, "[{z}]");
    }
    out
}

/// ISO-8601 duration as Neo4j prints it: `P1Y2M3DT4H5M6.7S`, every component carrying its own
/// sign (`PT-1H-30M`), seconds never folded into days, `PT0S` for zero.
pub fn format_duration(d: &Duration) -> String {
    let mut out = String::from("P");
    let (years, months) = (d.months / 12, d.months % 12);
    if years != 0 {
        let _ = write!(out, "{years}Y");
    }
    if months != 0 {
        let _ = write!(out, "{months}M");
    }
    if d.days != 0 {
        let _ = write!(out, "{}D", d.days);
    }
    let total = i128::from(d.seconds) * 1_000_000_000 + i128::from(d.nanos);
    if total != 0 {
        out.push('T');
        let neg = total < 0;
        let sign = if neg { "-" } else { "" };
        let abs = total.unsigned_abs();
        let secs = abs / 1_000_000_000;
        let nanos = abs % 1_000_000_000;
        let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
        if h != 0 {
            let _ = write!(out, "{sign}{h}H");
        }
        if m != 0 {
            let _ = write!(out, "{sign}{m}M");
        }
        if s != 0 || nanos != 0 {
            let _ = write!(out, "{sign}{s}");
            if nanos != 0 {
                let frac = format!("{nanos:09}");
                let _ = write!(out, ".{}", frac.trim_end_matches('0'));
            }
            out.push('S');
        }
    }
    if out.len() == 1 {
        return "PT0S".into();
    }
    out
}

/// `point({x: 1.0, y: 2.0, crs: 'cartesian'})`, as Neo4j prints points.
pub fn format_point(p: &Point) -> String {
    let crs = crate::spatial::crs_name(p.srid);
    if matches!(p.srid, 4326 | 4979) {
        match p.z {
            Some(z) => format!(
                "point({{longitude: {}, latitude: {}, height: {}, crs: '{crs}'}})",
                format_float(p.x),
                format_float(p.y),
                format_float(z)
            ),
            None => format!(
                "point({{longitude: {}, latitude: {}, crs: '{crs}'}})",
                format_float(p.x),
                format_float(p.y)
            ),
        }
    } else {
        match p.z {
            Some(z) => format!(
                "point({{x: {}, y: {}, z: {}, crs: '{crs}'}})",
                format_float(p.x),
                format_float(p.y),
                format_float(z)
            ),
            None => {
                format!(
                    "point({{x: {}, y: {}, crs: '{crs}'}})",
                    format_float(p.x),
                    format_float(p.y)
                )
            }
        }
    }
}

/// Quotes a string the way the TCK writes string literals: `'it\'s'`.
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A map key or label as written in Cypher: bare when it is an identifier, else backticked.
fn symbolic_name(s: &str) -> String {
    let mut chars = s.chars();
    let ok = match chars.next() {
        Some(c) if c.is_alphabetic() || c == '_' => chars.all(|c| c.is_alphanumeric() || c == '_'),
        _ => false,
    };
    if ok {
        s.to_string()
    } else {
        format!("`{}`", s.replace('`', "``"))
    }
}

fn write_props(out: &mut String, props: &crate::value::PropertyMap, leading_space: bool) {
    if props.is_empty() {
        return;
    }
    if leading_space {
        out.push(' ');
    }
    out.push('{');
    for (i, (k, v)) in props.iter_ordered().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}: {}", symbolic_name(k), to_cypher_literal(v));
    }
    out.push('}');
}

fn write_node(out: &mut String, n: &NodeData) {
    out.push('(');
    for l in &n.labels {
        let _ = write!(out, ":{}", symbolic_name(l));
    }
    write_props(out, &n.properties, !n.labels.is_empty());
    out.push(')');
}

fn write_rel(out: &mut String, r: &RelData) {
    let _ = write!(out, "[:{}", symbolic_name(&r.rel_type));
    write_props(out, &r.properties, true);
    out.push(']');
}

fn write_path(out: &mut String, p: &PathData) {
    out.push('<');
    for (i, n) in p.nodes.iter().enumerate() {
        if i > 0 {
            if let Some(r) = p.rels.get(i - 1) {
                // Forward when the relationship starts at the previous node.
                let forward = p.nodes.get(i - 1).is_some_and(|prev| prev.id == r.start);
                out.push_str(if forward { "-" } else { "<-" });
                write_rel(out, r);
                out.push_str(if forward { "->" } else { "-" });
            }
        }
        write_node(out, n);
    }
    out.push('>');
}

/// A value in the TCK's literal syntax: `1`, `1.0`, `'str'`, `[1, 2]`, `{a: 1}`, `(:A {p: 1})`,
/// `[:T {p: 1}]`, `<(:A)-[:T]->(:B)>`; temporals as quoted `toString()` text. Unmaterialized
/// entity references print with their ids (`(#3)`, `[#5]`), which the TCK never expects.
pub fn to_cypher_literal(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&format_float(*f)),
        Value::String(s) => out.push_str(&quote_string(s)),
        Value::Bytes(b) => {
            out.push_str("bytes(");
            for x in b.iter() {
                let _ = write!(out, "{x:02x}");
            }
            out.push(')');
        }
        Value::List(l) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&to_cypher_literal(x));
            }
            out.push(']');
        }
        Value::Map(m) => write_props_always(&mut out, m),
        Value::Node(id) => {
            let _ = write!(out, "(#{})", id.0);
        }
        Value::Relationship(id) => {
            let _ = write!(out, "[#{}]", id.0);
        }
        Value::Path(p) => {
            out.push('<');
            for (i, n) in p.nodes.iter().enumerate() {
                if i > 0 {
                    if let Some(r) = p.rels.get(i - 1) {
                        let _ = write!(out, "-[#{}]-", r.0);
                    }
                }
                let _ = write!(out, "(#{})", n.0);
            }
            out.push('>');
        }
        Value::NodeData(n) => write_node(&mut out, n),
        Value::RelData(r) => write_rel(&mut out, r),
        Value::PathData(p) => write_path(&mut out, p),
        Value::Point(p) => out.push_str(&format_point(p)),
        other => out.push_str(&quote_string(&to_string_value(other).unwrap_or_default())),
    }
    out
}

fn write_props_always(out: &mut String, m: &crate::value::PropertyMap) {
    if m.is_empty() {
        out.push_str("{}");
    } else {
        write_props(out, m, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{NodeId, PropertyMap, RelId};
    use std::sync::Arc;

    #[test]
    fn floats_like_java() {
        let cases = [
            (1.0, "1.0"),
            (2.3, "2.3"),
            (-0.5, "-0.5"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1.5e10, "1.5E10"),
            (1e7, "1.0E7"),
            (9999999.0, "9999999.0"),
            (123456.789, "123456.789"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            (0.0, "0.0"),
            (1.2345e-7, "1.2345E-7"),
            (100.0, "100.0"),
        ];
        for (f, want) in cases {
            assert_eq!(format_float(f), want, "{f}");
        }
    }

    #[test]
    fn durations_like_neo4j() {
        let d = |months, days, seconds, nanos| Duration { months, days, seconds, nanos };
        let cases = [
            (d(0, 0, 0, 0), "PT0S"),
            (d(0, 0, -1, 999_000_000), "PT-0.001S"),
            (d(149, 14, 58390, 1), "P12Y5M14DT16H13M10.000000001S"),
            (d(-154, -43, -65344, 499_999_997), "P-12Y-10M-43DT-18H-9M-3.500000003S"),
            (d(2, -28, 113900, 0), "P2M-28DT31H38M20S"),
            (d(0, 1, 0, 1_000_000), "P1DT0.001S"),
            (d(0, 0, -52200, 0), "PT-14H-30M"),
        ];
        for (dur, want) in cases {
            assert_eq!(format_duration(&dur), want);
        }
    }

    #[test]
    fn to_string_function_like_neo4j() {
        let t = |h, m, s, n| NaiveTime::from_hms_nano_opt(h, m, s, n).unwrap();
        let f = |v: Value| cypher_to_string(&v).unwrap();
        let time = |tm, off| Value::Time(Time { time: tm, offset_seconds: off });
        assert_eq!(f(time(t(12, 0, 0, 0), 0)), "12:00:00Z");
        assert_eq!(f(time(t(12, 0, 0, 500_000_000), 3600)), "12:00:00.5+01:00");
        assert_eq!(
            f(Value::LocalTime(crate::temporal::LocalTime(t(12, 0, 0, 120_000_000)))),
            "12:00:00.12"
        );
        assert_eq!(
            f(Value::LocalTime(crate::temporal::LocalTime(t(0, 0, 0, 2)))),
            "00:00:00.000000002"
        );
        let day = NaiveDate::from_ymd_opt(2020, 1, 1).unwrap();
        let ldt = crate::temporal::LocalDateTime(day.and_time(t(12, 0, 0, 0)));
        assert_eq!(f(Value::LocalDateTime(ldt)), "2020-01-01T12:00:00");
        let dt = DateTime {
            local: day.and_time(t(12, 0, 0, 0)),
            offset_seconds: 3600,
            zone: Some(Arc::from("Europe/Paris")),
        };
        assert_eq!(f(Value::DateTime(dt)), "2020-01-01T12:00:00+01:00[Europe/Paris]");
        // Result display keeps Java's toString.
        assert_eq!(to_string_value(&time(t(12, 0, 0, 0), 0)).unwrap(), "12:00Z");
        assert_eq!(f(Value::Int(3)), "3");
    }

    #[test]
    fn temporals_like_java() {
        let t = |h, m, s, n| NaiveTime::from_hms_nano_opt(h, m, s, n).unwrap();
        assert_eq!(format_local_time(&t(12, 0, 0, 0)), "12:00");
        assert_eq!(format_local_time(&t(12, 31, 14, 0)), "12:31:14");
        assert_eq!(format_local_time(&t(12, 31, 14, 645_000_000)), "12:31:14.645");
        assert_eq!(format_local_time(&t(12, 31, 14, 645_876_000)), "12:31:14.645876");
        assert_eq!(format_local_time(&t(0, 0, 0, 2)), "00:00:00.000000002");
        assert_eq!(format_offset(3600), "+01:00");
        assert_eq!(format_offset(-(11 * 3600 + 59 * 60)), "-11:59");
        assert_eq!(format_offset(53 * 60 + 28), "+00:53:28");
        assert_eq!(format_offset(0), "Z");
        let dt = DateTime {
            local: NaiveDate::from_ymd_opt(2015, 7, 21).unwrap().and_time(t(
                21,
                40,
                32,
                142_000_000,
            )),
            offset_seconds: 3600,
            zone: Some(Arc::from("Europe/Stockholm")),
        };
        assert_eq!(format_datetime(&dt), "2015-07-21T21:40:32.142+01:00[Europe/Stockholm]");
        assert_eq!(format_date(&NaiveDate::from_ymd_opt(1, 1, 1).unwrap()), "0001-01-01");
        assert_eq!(format_date(&NaiveDate::from_ymd_opt(-1, 1, 1).unwrap()), "-0001-01-01");
    }

    #[test]
    fn literals() {
        let mut props = PropertyMap::new();
        props.insert("p".into(), Value::Int(1));
        let a = NodeData {
            id: NodeId(1),
            labels: vec!["A".into(), "B".into()],
            properties: props.clone(),
        };
        let b = NodeData { id: NodeId(2), labels: vec![], properties: PropertyMap::new() };
        let r = RelData {
            id: RelId(1),
            start: NodeId(2),
            end: NodeId(1),
            rel_type: "T".into(),
            properties: props,
        };
        assert_eq!(to_cypher_literal(&Value::NodeData(Arc::new(a.clone()))), "(:A:B {p: 1})");
        assert_eq!(to_cypher_literal(&Value::NodeData(Arc::new(b.clone()))), "()");
        assert_eq!(to_cypher_literal(&Value::RelData(Arc::new(r.clone()))), "[:T {p: 1}]");
        let p = PathData { nodes: vec![a, b], rels: vec![r] };
        assert_eq!(
            to_cypher_literal(&Value::PathData(Arc::new(p))),
            "<(:A:B {p: 1})<-[:T {p: 1}]-()>"
        );
        let v =
            Value::List(vec![Value::Int(1), Value::Float(1.0), Value::str("it's"), Value::Null]);
        assert_eq!(to_cypher_literal(&v), "[1, 1.0, 'it\\'s', null]");
        let mut m = PropertyMap::new();
        m.insert("a".into(), Value::Int(1));
        m.insert("b".into(), Value::str("x"));
        assert_eq!(to_cypher_literal(&Value::Map(m)), "{a: 1, b: 'x'}");
        assert_eq!(to_cypher_literal(&Value::Map(PropertyMap::new())), "{}");
        assert_eq!(to_string_value(&Value::List(vec![])), None);
    }
}
