//! Parsing the ISO-8601 text forms of Cypher's temporal values: calendar, week and ordinal
//! dates, compact forms, times with fractions, offsets and `[Zone/Name]` suffixes, and durations
//! (`P1Y2M3DT4H5M6.5S` and the alternative `P0001-02-03T04:05:06` form). Construction from maps,
//! truncation and accessors are in `temporal_build`, which re-exports these entry points.

use chrono::{NaiveDate, NaiveTime, Weekday};

use crate::error::{Error, Result};
use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use crate::temporal_ops::{
    duration_from_parts, now_utc, year_shift, DurationBuilder, ZoneSpec, MAX_DATE_YEAR,
    NANOS_PER_SECOND,
};
use crate::value::Value;

/// The five temporal instant types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemporalKind {
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
}

impl TemporalKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            TemporalKind::Date => "date",
            TemporalKind::LocalTime => "localtime",
            TemporalKind::Time => "time",
            TemporalKind::LocalDateTime => "localdatetime",
            TemporalKind::DateTime => "datetime",
        }
    }

    pub(crate) fn has_date(self) -> bool {
        matches!(self, TemporalKind::Date | TemporalKind::LocalDateTime | TemporalKind::DateTime)
    }

    pub(crate) fn has_time(self) -> bool {
        !matches!(self, TemporalKind::Date)
    }
}

pub(crate) fn bad(msg: impl Into<String>) -> Error {
    Error::argument(msg).with_detail("InvalidArgumentValue")
}

/// Text that is no temporal of `kind`: a syntax error in Neo4j, which names the type
/// (`Text cannot be parsed to a Date`).
pub(crate) fn bad_text(kind: &str, s: &str) -> Error {
    let kind = match kind {
        "date" => "Date",
        "time" => "Time",
        "local time" => "LocalTime",
        "local datetime" => "LocalDateTime",
        "datetime" => "DateTime",
        "duration" => "Duration",
        other => other,
    };
    Error::syntax(format!("Text cannot be parsed to a {kind}: \"{s}\""))
        .with_detail("InvalidArgumentValue")
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
    if all_digits(s) {
        s.parse().ok()
    } else {
        None
    }
}

/// Parses the date part: `2015-07-21`, `20150721`, `2015-07`, `2015-W30-2`, `2015W302`,
/// `2015-W30`, `2015-202`, `2015202`, `2015`, and signed years (`-0001-01-01`, `+10000-01-01`).
pub fn parse_date_str(s: &str) -> Result<Date> {
    let err = || bad_text("date", s);
    // Only ASCII is valid, and checking it up front keeps the byte slicing below safe.
    if !s.is_ascii() {
        return Err(err());
    }
    let (sign, body) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => (1, s),
    };
    let year_len = if sign == 1 && !s.starts_with('+') {
        4
    } else {
        body.bytes().take_while(u8::is_ascii_digit).count()
    };
    if year_len < 4 || body.len() < year_len {
        return Err(err());
    }
    let full_year: i64 = num::<i64>(&body[..year_len]).ok_or_else(err)? * sign;
    if year_len > 9 || full_year.abs() > MAX_DATE_YEAR {
        return Err(err());
    }
    // The calendar is built on chrono for a year moved into its range by whole 400-year cycles.
    let shift = year_shift(full_year);
    let year = i32::try_from(full_year - shift).map_err(|_| err())?;
    let mut rest = &body[year_len..];
    let dashed = rest.starts_with('-');
    if dashed {
        rest = &rest[1..];
        if rest.is_empty() {
            return Err(err());
        }
    }
    let date = if rest.is_empty() {
        NaiveDate::from_ymd_opt(year, 1, 1)
    } else if let Some(w) = rest.strip_prefix('W') {
        let (week, dow) = if dashed {
            match w.split_once('-') {
                Some((wk, d)) if d.len() == 1 => (num::<u32>(wk), num::<u32>(d)),
                Some(_) => return Err(err()),
                None => (num::<u32>(w), Some(1)),
            }
        } else {
            match w.len() {
                2 => (num::<u32>(w), Some(1)),
                3 => (num::<u32>(&w[..2]), num::<u32>(&w[2..])),
                _ => return Err(err()),
            }
        };
        let (Some(week), Some(dow)) = (week, dow) else { return Err(err()) };
        if w.len() < 2 {
            return Err(err());
        }
        if week == 53 && (1..=7).contains(&dow) && iso_week_date(year, 53, dow).is_none() {
            return Err(bad(format!("Year {full_year} does not contain 53 weeks.")));
        }
        iso_week_date(year, week, dow)
    } else if dashed {
        match rest.split_once('-') {
            Some((m, d)) if m.len() == 2 && d.len() == 2 => {
                NaiveDate::from_ymd_opt(year, num(m).ok_or_else(err)?, num(d).ok_or_else(err)?)
            }
            None if rest.len() == 2 => NaiveDate::from_ymd_opt(year, num(rest).ok_or_else(err)?, 1),
            None if rest.len() == 3 => NaiveDate::from_yo_opt(year, num(rest).ok_or_else(err)?),
            _ => return Err(err()),
        }
    } else {
        match rest.len() {
            4 => NaiveDate::from_ymd_opt(
                year,
                num(&rest[..2]).ok_or_else(err)?,
                num(&rest[2..]).ok_or_else(err)?,
            ),
            3 => NaiveDate::from_yo_opt(year, num(rest).ok_or_else(err)?),
            2 => NaiveDate::from_ymd_opt(year, num(rest).ok_or_else(err)?, 1),
            _ => return Err(err()),
        }
    };
    date.and_then(|d| Date::join(d, shift)).ok_or_else(err)
}

pub(crate) fn iso_week_date(year: i32, week: u32, dow: u32) -> Option<NaiveDate> {
    let wd = weekday_from_number(dow)?;
    NaiveDate::from_isoywd_opt(year, week, wd)
}

fn weekday_from_number(dow: u32) -> Option<Weekday> {
    Some(match dow {
        1 => Weekday::Mon,
        2 => Weekday::Tue,
        3 => Weekday::Wed,
        4 => Weekday::Thu,
        5 => Weekday::Fri,
        6 => Weekday::Sat,
        7 => Weekday::Sun,
        _ => return None,
    })
}

/// Parses a fraction of a second (digits after `.`/`,`, up to 9) into nanoseconds.
fn parse_fraction(digits: &str) -> Option<u32> {
    if digits.is_empty() || digits.len() > 9 || !all_digits(digits) {
        return None;
    }
    let mut n: u32 = digits.parse().ok()?;
    for _ in digits.len()..9 {
        n *= 10;
    }
    Some(n)
}

/// Parses a local time: `21:40:32.142`, `214032.142`, `21:40`, `2140`, `21`.
fn parse_local_time_str(s: &str) -> Result<NaiveTime> {
    let err = || bad_text("time", s);
    if !s.is_ascii() {
        return Err(err());
    }
    let (main, frac) = match s.find(['.', ',']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let parts: Vec<&str> = if main.contains(':') {
        main.split(':').collect()
    } else {
        if main.len() % 2 != 0 || main.len() > 6 {
            return Err(err());
        }
        (0..main.len() / 2).map(|i| &main[2 * i..2 * i + 2]).collect()
    };
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.len() != 2) {
        return Err(err());
    }
    let h: u32 = num(parts[0]).ok_or_else(err)?;
    let m: u32 = parts.get(1).map_or(Some(0), |p| num(p)).ok_or_else(err)?;
    let sec: u32 = parts.get(2).map_or(Some(0), |p| num(p)).ok_or_else(err)?;
    let nanos = match frac {
        Some(f) if parts.len() == 3 => parse_fraction(f).ok_or_else(err)?,
        Some(_) => return Err(err()),
        None => 0,
    };
    NaiveTime::from_hms_nano_opt(h, m, sec, nanos).ok_or_else(err)
}

/// A time-zone suffix of a time or datetime string.
#[derive(Debug, Clone)]
struct ZoneSuffix {
    offset: Option<i32>,
    name: Option<String>,
}

/// Splits `21:40:32+01:00[Europe/Stockholm]` into the time text and its zone suffix.
fn split_zone(s: &str) -> Result<(&str, ZoneSuffix)> {
    let (s, name) = match s.strip_suffix(']').and_then(|x| x.rsplit_once('[')) {
        Some((rest, name)) => (rest, Some(name.to_string())),
        None => (s, None),
    };
    if let Some(rest) = s.strip_suffix(['Z', 'z']) {
        return Ok((rest, ZoneSuffix { offset: Some(0), name }));
    }
    match s.rfind(['+', '-']) {
        Some(i) => {
            let offset = crate::temporal_ops::parse_offset(&s[i..])?;
            Ok((&s[..i], ZoneSuffix { offset: Some(offset), name }))
        }
        None => Ok((s, ZoneSuffix { offset: None, name })),
    }
}

/// Parses a string into the given temporal type.
pub fn parse_temporal(kind: TemporalKind, s: &str) -> Result<Value> {
    let s = s.trim();
    match kind {
        TemporalKind::Date => Ok(Value::Date(parse_date_str(s)?)),
        TemporalKind::LocalTime => {
            let (t, zone) = split_zone(s)?;
            if zone.offset.is_some() || zone.name.is_some() {
                return Err(bad_text("local time", s));
            }
            Ok(Value::LocalTime(LocalTime(parse_local_time_str(t)?)))
        }
        TemporalKind::Time => {
            let (t, zone) = split_zone(s)?;
            let time = parse_local_time_str(t)?;
            let offset = match (zone.offset, zone.name) {
                (Some(o), _) => o,
                (None, Some(name)) => ZoneSpec::parse(&name)?.offset_at_utc(now_utc()),
                (None, None) => 0,
            };
            Ok(Value::Time(Time { time, offset_seconds: offset }))
        }
        TemporalKind::LocalDateTime => {
            let (d, t) = split_datetime(s);
            let date = parse_date_str(d)?.naive().ok_or_else(|| bad_text("local datetime", s))?;
            let time = match t {
                Some(t) => {
                    let (t, zone) = split_zone(t)?;
                    if zone.offset.is_some() || zone.name.is_some() {
                        return Err(bad_text("local datetime", s));
                    }
                    parse_local_time_str(t)?
                }
                None => NaiveTime::MIN,
            };
            Ok(Value::LocalDateTime(LocalDateTime(date.and_time(time))))
        }
        TemporalKind::DateTime => {
            let (d, t) = split_datetime(s);
            let date = parse_date_str(d)?.naive().ok_or_else(|| bad_text("datetime", s))?;
            let (time, zone) = match t {
                Some(t) => {
                    let (t, zone) = split_zone(t)?;
                    (parse_local_time_str(t)?, zone)
                }
                None => (NaiveTime::MIN, ZoneSuffix { offset: None, name: None }),
            };
            let local = date.and_time(time);
            let dt = match (zone.name, zone.offset) {
                (Some(name), offset) => ZoneSpec::parse(&name)?.resolve_local(local, offset)?,
                (None, Some(o)) => DateTime { local, offset_seconds: o, zone: None },
                (None, None) => DateTime { local, offset_seconds: 0, zone: None },
            };
            Ok(Value::DateTime(dt))
        }
    }
}

fn split_datetime(s: &str) -> (&str, Option<&str>) {
    match s.find(['T', 't']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

/// A number in a duration string: sign, integer part, fraction digits.
struct DurNum {
    negative: bool,
    int: i64,
    frac: String,
}

impl DurNum {
    fn as_f64(&self) -> f64 {
        let v = format!("{}.{}", self.int, if self.frac.is_empty() { "0" } else { &self.frac })
            .parse::<f64>()
            .unwrap_or(0.0);
        if self.negative {
            -v
        } else {
            v
        }
    }

    /// The value times `unit_nanos`, exactly for the integer part and seconds fractions.
    fn nanos(&self, unit_nanos: i128) -> i128 {
        let mut n = i128::from(self.int) * unit_nanos;
        if !self.frac.is_empty() {
            let digits = &self.frac[..self.frac.len().min(18)];
            let scale = 10i128.pow(digits.len() as u32);
            let f: i128 = digits.parse().unwrap_or(0);
            n += f * unit_nanos / scale;
        }
        if self.negative {
            -n
        } else {
            n
        }
    }
}

/// Parses an ISO-8601 duration: `P1Y2M3W4DT5H6M7.8S` (any component may be negative or
/// fractional), `-P...`, and the alternative `P2012-02-02T14:37:21.545` form.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let err = || bad_text("duration", s);
    let t = s.trim();
    if !t.is_ascii() {
        return Err(err());
    }
    let (negate, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let body = t.strip_prefix(['P', 'p']).ok_or_else(err)?;
    if body.is_empty() {
        return Err(err());
    }
    let d = if body.len() >= 5 && body.as_bytes()[4] == b'-' && all_digits(&body[..4]) {
        parse_alt_duration(body).ok_or_else(err)?
    } else {
        let mut b = DurationBuilder::default();
        let mut in_time = false;
        let mut rest = body;
        let mut any = false;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix(['T', 't']) {
                if in_time {
                    return Err(err());
                }
                in_time = true;
                rest = r;
                continue;
            }
            let (n, unit, r) = take_dur_num(rest).ok_or_else(err)?;
            rest = r;
            any = true;
            match (in_time, unit.to_ascii_uppercase()) {
                (false, 'Y') => dur_months(&mut b, &n, 12)?,
                (false, 'M') => dur_months(&mut b, &n, 1)?,
                (false, 'W') => dur_days(&mut b, &n, 7)?,
                (false, 'D') => dur_days(&mut b, &n, 1)?,
                (true, 'H') => b.nanos(n.nanos(3600 * NANOS_PER_SECOND)),
                (true, 'M') => b.nanos(n.nanos(60 * NANOS_PER_SECOND)),
                (true, 'S') => b.nanos(n.nanos(NANOS_PER_SECOND)),
                _ => return Err(err()),
            }
        }
        if !any {
            return Err(err());
        }
        b.build()?
    };
    if negate {
        crate::temporal_ops::duration_neg(&d)
    } else {
        Ok(d)
    }
}

fn dur_months(b: &mut DurationBuilder, n: &DurNum, unit: i64) -> Result<()> {
    if n.frac.is_empty() {
        let v = if n.negative { -n.int } else { n.int };
        b.months_int(v.checked_mul(unit).ok_or_else(|| bad("duration out of range"))?)
    } else {
        b.months(n.as_f64() * unit as f64)
    }
}

fn dur_days(b: &mut DurationBuilder, n: &DurNum, unit: i64) -> Result<()> {
    if n.frac.is_empty() {
        let v = if n.negative { -n.int } else { n.int };
        b.days_int(v.checked_mul(unit).ok_or_else(|| bad("duration out of range"))?)
    } else {
        b.days(n.as_f64() * unit as f64)
    }
}

/// Reads `-12.5X` from the front of `s`: the number, its unit letter, and the rest.
fn take_dur_num(s: &str) -> Option<(DurNum, char, &str)> {
    let (negative, r) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let int_len = r.bytes().take_while(u8::is_ascii_digit).count();
    if int_len == 0 {
        return None;
    }
    let int: i64 = r[..int_len].parse().ok()?;
    let mut r = &r[int_len..];
    let mut frac = String::new();
    if let Some(x) = r.strip_prefix(['.', ',']) {
        let n = x.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        frac = x[..n].to_string();
        r = &x[n..];
    }
    let unit = r.chars().next()?;
    Some((DurNum { negative, int, frac }, unit, &r[unit.len_utf8()..]))
}

/// `YYYY-MM-DDTHH:MM:SS(.fff)` after the `P`.
fn parse_alt_duration(body: &str) -> Option<Duration> {
    let (d, t) = match body.split_once(['T', 't']) {
        Some((d, t)) => (d, Some(t)),
        None => (body, None),
    };
    let dp: Vec<&str> = d.split('-').collect();
    if dp.len() != 3 {
        return None;
    }
    let (y, m, dd): (i64, i64, i64) = (num(dp[0])?, num(dp[1])?, num(dp[2])?);
    let mut nanos: i128 = 0;
    if let Some(t) = t {
        let (main, frac) = match t.find(['.', ',']) {
            Some(i) => (&t[..i], Some(&t[i + 1..])),
            None => (t, None),
        };
        let tp: Vec<&str> = main.split(':').collect();
        if tp.len() != 3 {
            return None;
        }
        let (h, mi, s): (i128, i128, i128) = (num(tp[0])?, num(tp[1])?, num(tp[2])?);
        nanos = ((h * 60 + mi) * 60 + s) * NANOS_PER_SECOND;
        if let Some(f) = frac {
            nanos += i128::from(parse_fraction(f)?);
        }
    }
    duration_from_parts(y * 12 + m, dd, nanos).ok()
}
