//! `apoc.date.*`: epoch numbers in a unit (`ms`, `s`, `m`, `h`, `d` or their long names)
//! formatted and parsed with Java `DateTimeFormatter` patterns (`yyyy-MM-dd HH:mm:ss`, the
//! default; translated to chrono's), in a time zone (UTC by default).

use arbor_model::temporal_ops::ZoneSpec;
use arbor_model::{Error, Result, Value};
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, Utc};

use super::super::{arg, type_err};

const DEFAULT_FORMAT: &str = "yyyy-MM-dd HH:mm:ss";

/// Milliseconds in one `unit`.
fn unit_ms(func: &str, v: &Value) -> Result<i64> {
    let name = match v {
        Value::Null => return Ok(1),
        Value::String(s) => s.to_lowercase(),
        other => return Err(type_err(func, "a String unit", other)),
    };
    Ok(match name.as_str() {
        "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "second" | "seconds" => 1_000,
        "m" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => return Err(Error::argument(format!("{func}: unsupported time unit `{name}`"))),
    })
}

fn zone(func: &str, v: &Value) -> Result<ZoneSpec> {
    match v {
        Value::Null => Ok(ZoneSpec::Offset(0)),
        Value::String(s) if s.is_empty() => Ok(ZoneSpec::Offset(0)),
        Value::String(s) => ZoneSpec::parse(s),
        other => Err(type_err(func, "a String time zone", other)),
    }
}

fn int(func: &str, v: &Value) -> Result<Option<i64>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i)),
        Value::Float(f) => Ok(Some(*f as i64)),
        other => Err(type_err(func, "an Integer", other)),
    }
}

/// A Java `DateTimeFormatter` pattern as a chrono format string. `X`/`XXX` (offset, `Z` for
/// UTC) come back as `\u{1}`, to be filled in by the caller.
fn chrono_pattern(func: &str, java: &str) -> Result<String> {
    let named = match java.to_ascii_uppercase().as_str() {
        "ISO_DATE" | "ISO_LOCAL_DATE" => Some("%Y-%m-%d"),
        "ISO_LOCAL_DATE_TIME" => Some("%Y-%m-%dT%H:%M:%S"),
        "ISO_DATE_TIME" | "ISO_INSTANT" => Some("%Y-%m-%dT%H:%M:%S\u{1}"),
        "ISO_LOCAL_TIME" | "ISO_TIME" => Some("%H:%M:%S"),
        _ => None,
    };
    if let Some(n) = named {
        return Ok(n.to_string());
    }
    let cs: Vec<char> = java.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        let mut n = 1;
        while i + n < cs.len() && cs[i + n] == c {
            n += 1;
        }
        if c == '\'' {
            // Quoted literal; '' is a quote.
            if n >= 2 && n % 2 == 0 {
                out.push_str(&"'".repeat(n / 2));
                i += n;
                continue;
            }
            let end = cs[i + 1..].iter().position(|&x| x == '\'').map(|p| i + 1 + p);
            let Some(end) = end else {
                return Err(Error::argument(format!("{func}: unterminated quote in `{java}`")));
            };
            for &x in &cs[i + 1..end] {
                if x == '%' {
                    out.push_str("%%");
                } else {
                    out.push(x);
                }
            }
            i = end + 1;
            continue;
        }
        let spec = match (c, n) {
            ('y' | 'u', 2) => "%y",
            ('y' | 'u', _) => "%Y",
            ('M', 1) => "%-m",
            ('M', 2) => "%m",
            ('M', 3) => "%b",
            ('M', _) => "%B",
            ('d', 1) => "%-d",
            ('d', _) => "%d",
            ('D', _) => "%j",
            ('H', 1) => "%-H",
            ('H', _) => "%H",
            ('h', 1) => "%-I",
            ('h', _) => "%I",
            ('m', 1) => "%-M",
            ('m', _) => "%M",
            ('s', 1) => "%-S",
            ('s', _) => "%S",
            ('S', _) => "%3f",
            ('E', 4..) => "%A",
            ('E', _) => "%a",
            ('a', _) => "%p",
            ('Z', _) => "%z",
            ('z', _) => "%Z",
            ('X' | 'x', _) => "\u{1}",
            ('%', _) => "%%",
            (c, _) if c.is_ascii_alphabetic() => {
                return Err(Error::argument(format!(
                    "{func}: unsupported pattern letter `{c}` in `{java}`"
                )))
            }
            _ => {
                out.extend(std::iter::repeat_n(c, n));
                i += n;
                continue;
            }
        };
        out.push_str(spec);
        i += n;
    }
    Ok(out)
}

fn format_arg(func: &str, v: &Value) -> Result<String> {
    match v {
        Value::Null => chrono_pattern(func, DEFAULT_FORMAT),
        Value::String(s) => chrono_pattern(func, s),
        other => Err(type_err(func, "a String format", other)),
    }
}

/// `apoc.date.format(time[, unit = 'ms', format = 'yyyy-MM-dd HH:mm:ss', timezone = 'UTC'])`.
pub fn format(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.date.format";
    let Some(t) = int(F, arg(args, 0))? else { return Ok(Value::Null) };
    let ms = t.checked_mul(unit_ms(F, arg(args, 1))?).ok_or_else(|| overflow(F))?;
    let pattern = format_arg(F, arg(args, 2))?;
    let z = zone(F, arg(args, 3))?;
    let utc = DateTime::<Utc>::from_timestamp_millis(ms).ok_or_else(|| overflow(F))?;
    let off = z.offset_at_utc(utc.naive_utc());
    let fixed = chrono::FixedOffset::east_opt(off).ok_or_else(|| overflow(F))?;
    let local = utc.with_timezone(&fixed);
    let offset_text = if off == 0 { "Z".to_string() } else { local.format("%:z").to_string() };
    let pattern = pattern.replace('\u{1}', &offset_text.replace('%', "%%"));
    let mut text = String::new();
    use std::fmt::Write;
    write!(text, "{}", local.format(&pattern))
        .map_err(|_| Error::argument(format!("{F}: cannot format with this pattern")))?;
    Ok(Value::String(text.into()))
}

fn overflow(func: &str) -> Error {
    Error::argument(format!("{func}: the time is out of range"))
}

/// `apoc.date.parse(text[, unit = 'ms', format = 'yyyy-MM-dd HH:mm:ss', timezone = 'UTC'])`:
/// the instant as a number of `unit`s since the epoch. A pattern without a time of day reads
/// midnight; one with an offset uses it instead of `timezone`.
pub fn parse(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.date.parse";
    let text = match arg(args, 0) {
        Value::Null => return Ok(Value::Null),
        Value::String(s) => s.to_string(),
        other => return Err(type_err(F, "a String", other)),
    };
    let unit = unit_ms(F, arg(args, 1))?;
    let pattern = format_arg(F, arg(args, 2))?.replace('\u{1}', "%:z");
    let z = zone(F, arg(args, 3))?;
    let bad = || Error::argument(format!("{F}: `{text}` does not match the format"));
    let ms = if pattern.contains("%z") || pattern.contains("%:z") {
        let t = if text.ends_with('Z') {
            format!("{}+00:00", &text[..text.len() - 1])
        } else {
            text.clone()
        };
        DateTime::parse_from_str(&t, &pattern).map_err(|_| bad())?.timestamp_millis()
    } else {
        let local = match NaiveDateTime::parse_from_str(&text, &pattern) {
            Ok(dt) => dt,
            Err(_) => NaiveDate::parse_from_str(&text, &pattern)
                .map_err(|_| bad())?
                .and_hms_opt(0, 0, 0)
                .ok_or_else(bad)?,
        };
        let dt = z.resolve_local(local, None)?;
        (dt.local - TimeDelta::seconds(i64::from(dt.offset_seconds))).and_utc().timestamp_millis()
    };
    Ok(Value::Int(ms.div_euclid(unit)))
}

/// `apoc.date.currentTimestamp()`: milliseconds since the epoch, now.
pub fn current_timestamp(_: &[Value]) -> Result<Value> {
    Ok(Value::Int(Utc::now().timestamp_millis()))
}

/// `apoc.date.convert(time, unit, toUnit)`.
pub fn convert(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.date.convert";
    let Some(t) = int(F, arg(args, 0))? else { return Ok(Value::Null) };
    let ms = t.checked_mul(unit_ms(F, arg(args, 1))?).ok_or_else(|| overflow(F))?;
    Ok(Value::Int(ms.div_euclid(unit_ms(F, arg(args, 2))?)))
}

/// `apoc.date.add(time, unit, addValue, addUnit)`: in `unit`.
pub fn add(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.date.add";
    let (Some(t), Some(a)) = (int(F, arg(args, 0))?, int(F, arg(args, 2))?) else {
        return Ok(Value::Null);
    };
    let unit = unit_ms(F, arg(args, 1))?;
    let extra = a.checked_mul(unit_ms(F, arg(args, 3))?).ok_or_else(|| overflow(F))?;
    let ms = t.checked_mul(unit).and_then(|m| m.checked_add(extra)).ok_or_else(|| overflow(F))?;
    Ok(Value::Int(ms.div_euclid(unit)))
}

/// `apoc.date.toISO8601(time[, unit = 'ms'])`: `2020-01-01T00:00:00.000Z`.
pub fn to_iso8601(args: &[Value]) -> Result<Value> {
    format(&[
        arg(args, 0).clone(),
        arg(args, 1).clone(),
        Value::from("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"),
    ])
}

/// `apoc.date.fromISO8601(text)`: milliseconds since the epoch.
pub fn from_iso8601(args: &[Value]) -> Result<Value> {
    const F: &str = "apoc.date.fromISO8601";
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::String(s) => DateTime::parse_from_rfc3339(s)
            .map(|d| Value::Int(d.timestamp_millis()))
            .map_err(|_| Error::argument(format!("{F}: `{s}` is not an ISO-8601 instant"))),
        other => Err(type_err(F, "a String", other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(f: fn(&[Value]) -> Result<Value>, args: &[Value]) -> String {
        arbor_model::to_cypher_literal(&f(args).unwrap())
    }

    #[test]
    fn format_and_parse_agree() {
        let t = Value::Int(1_577_934_245_123); // 2020-01-02T03:04:05.123Z
        assert_eq!(call(format, std::slice::from_ref(&t)), "'2020-01-02 03:04:05'");
        let iso = [t.clone(), Value::from("ms"), Value::from("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")];
        assert_eq!(call(format, &iso), "'2020-01-02T03:04:05.123Z'");
        let zoned = [t, Value::from("ms"), Value::from("dd/MM/yyyy HH:mm"), Value::from("+02:00")];
        assert_eq!(call(format, &zoned), "'02/01/2020 05:04'");
        let back = [Value::from("2020-01-02 03:04:05"), Value::from("s")];
        assert_eq!(call(parse, &back), "1577934245");
        let day = [Value::from("2020/01/02"), Value::from("d"), Value::from("yyyy/MM/dd")];
        assert_eq!(call(parse, &day), "18263");
        assert_eq!(call(from_iso8601, &[Value::from("2020-01-02T03:04:05.123Z")]), "1577934245123");
        assert!(parse(&[Value::from("nope")]).is_err());
        assert!(format(&[Value::Int(0), Value::from("ms"), Value::from("qqq")]).is_err());
    }
}
