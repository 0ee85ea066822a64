//! Component access on temporal values (`d.year`, `t.hour`, `dur.minutes`, ...).

use chrono::{Datelike, NaiveDate, NaiveTime, Timelike};

use arbor_model::format::format_offset;
use arbor_model::Value;

/// A date component of `d` moved by `shift` years (whole 400-year cycles: see
/// `arbor_model::Date::split`); only the year fields see the shift.
fn date_part(d: &NaiveDate, shift: i64, key: &str) -> Option<Value> {
    let v = match key {
        "year" => d.year() as i64 + shift,
        "quarter" => (d.month0() / 3 + 1) as i64,
        "month" => d.month() as i64,
        "week" => d.iso_week().week() as i64,
        "weekyear" => d.iso_week().year() as i64 + shift,
        "day" => d.day() as i64,
        "ordinalday" => d.ordinal() as i64,
        "dayofweek" | "weekday" => d.weekday().number_from_monday() as i64,
        "dayofquarter" => {
            let q0 = d.month0() / 3 * 3 + 1;
            let start = NaiveDate::from_ymd_opt(d.year(), q0, 1)?;
            (*d - start).num_days() + 1
        }
        _ => return None,
    };
    Some(Value::Int(v))
}

fn time_part(t: &NaiveTime, key: &str) -> Option<Value> {
    let nanos = t.nanosecond() as i64 % 1_000_000_000;
    let v = match key {
        "hour" => t.hour() as i64,
        "minute" => t.minute() as i64,
        "second" => t.second() as i64,
        "millisecond" => nanos / 1_000_000,
        "microsecond" => nanos / 1_000,
        "nanosecond" => nanos,
        _ => return None,
    };
    Some(Value::Int(v))
}

fn offset_part(offset: i32, zone: Option<&str>, key: &str) -> Option<Value> {
    Some(match key {
        "timezone" => {
            Value::from(zone.map(str::to_string).unwrap_or_else(|| format_offset(offset)))
        }
        "offset" => Value::from(format_offset(offset)),
        "offsetminutes" => Value::Int(offset as i64 / 60),
        "offsetseconds" => Value::Int(offset as i64),
        _ => return None,
    })
}

/// `v.key` for a temporal value; `None` when the value has no such component.
pub(crate) fn component(v: &Value, key: &str) -> Option<Value> {
    let k = key.to_ascii_lowercase();
    let k = k.as_str();
    match v {
        Value::Date(d) => {
            let (base, shift) = d.split();
            date_part(&base, shift, k)
        }
        Value::LocalTime(t) => time_part(&t.0, k),
        Value::Time(t) => time_part(&t.time, k).or_else(|| offset_part(t.offset_seconds, None, k)),
        Value::LocalDateTime(t) => {
            date_part(&t.0.date(), 0, k).or_else(|| time_part(&t.0.time(), k))
        }
        Value::DateTime(t) => date_part(&t.local.date(), 0, k)
            .or_else(|| time_part(&t.local.time(), k))
            .or_else(|| offset_part(t.offset_seconds, t.zone.as_deref(), k))
            .or_else(|| {
                let utc = t.utc().and_utc();
                match k {
                    "epochseconds" => Some(Value::Int(utc.timestamp())),
                    "epochmillis" => Some(Value::Int(utc.timestamp_millis())),
                    _ => None,
                }
            }),
        Value::Duration(d) => {
            let total_secs = d.seconds;
            let v = match k {
                "years" => d.months / 12,
                "quarters" => d.months / 3,
                "months" => d.months,
                "weeks" => d.days / 7,
                "days" => d.days,
                "hours" => total_secs / 3600,
                "minutes" => total_secs / 60,
                "seconds" => total_secs,
                "milliseconds" => total_secs * 1000 + d.nanos as i64 / 1_000_000,
                "microseconds" => total_secs * 1_000_000 + d.nanos as i64 / 1000,
                "nanoseconds" => total_secs * 1_000_000_000 + d.nanos as i64,
                "quartersofyear" => (d.months % 12) / 3,
                "monthsofquarter" => d.months % 3,
                "monthsofyear" => d.months % 12,
                "daysofweek" => d.days % 7,
                "minutesofhour" => (total_secs / 60) % 60,
                "secondsofminute" => total_secs % 60,
                "millisecondsofsecond" => d.nanos as i64 / 1_000_000,
                "microsecondsofsecond" => d.nanos as i64 / 1000,
                "nanosecondsofsecond" => d.nanos as i64,
                _ => return None,
            };
            Some(Value::Int(v))
        }
        _ => None,
    }
}
