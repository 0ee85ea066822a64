//! Building temporal values the way Cypher's temporal functions do: parsing ISO-8601 strings
//! (calendar, week and ordinal dates, compact forms, offsets and `[Zone/Name]` suffixes, durations),
//! constructing from maps (`{year, month, day}`, `{year, week, dayOfWeek}`, `{date: other, ...}`
//! selection), truncation, `duration.between`, and component accessors.
//!
//! The default time zone is UTC: values constructed without a zone get offset `Z`.

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike, Weekday};

use crate::error::{Error, Result};
use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use crate::temporal_ops::{
    duration_from_parts, nanos_of_day, time_from_nanos, DurationBuilder, ZoneSpec, NANOS_PER_SECOND,
};
use crate::value::{PropertyMap, Value};

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
    fn name(self) -> &'static str {
        match self {
            TemporalKind::Date => "date",
            TemporalKind::LocalTime => "localtime",
            TemporalKind::Time => "time",
            TemporalKind::LocalDateTime => "localdatetime",
            TemporalKind::DateTime => "datetime",
        }
    }

    fn has_date(self) -> bool {
        matches!(self, TemporalKind::Date | TemporalKind::LocalDateTime | TemporalKind::DateTime)
    }

    fn has_time(self) -> bool {
        !matches!(self, TemporalKind::Date)
    }
}

/// The largest year accepted, kept inside chrono's range with room for offset arithmetic.
pub const MAX_YEAR: i32 = 262_000;

fn bad(msg: impl Into<String>) -> Error {
    Error::argument(msg).with_detail("InvalidArgumentValue")
}

fn bad_text(kind: &str, s: &str) -> Error {
    bad(format!("Text cannot be parsed to a {kind}: \"{s}\""))
}

// ---------------------------------------------------------------------------------------------
// String parsing
// ---------------------------------------------------------------------------------------------

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
pub fn parse_date_str(s: &str) -> Result<NaiveDate> {
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
    let year: i32 = num::<i32>(&body[..year_len]).ok_or_else(err)? * sign;
    if !(-MAX_YEAR..=MAX_YEAR).contains(&year) {
        return Err(err());
    }
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
    date.ok_or_else(err)
}

fn iso_week_date(year: i32, week: u32, dow: u32) -> Option<NaiveDate> {
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
        TemporalKind::Date => Ok(Value::Date(Date(parse_date_str(s)?))),
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
            let date = parse_date_str(d)?;
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
            let date = parse_date_str(d)?;
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

// ---------------------------------------------------------------------------------------------
// Map construction
// ---------------------------------------------------------------------------------------------

const DATE_KEYS: &[&str] =
    &["year", "month", "day", "week", "dayOfWeek", "ordinalDay", "quarter", "dayOfQuarter"];
const TIME_KEYS: &[&str] =
    &["hour", "minute", "second", "millisecond", "microsecond", "nanosecond"];

fn get_key<'a>(map: &'a PropertyMap, key: &str) -> Option<&'a Value> {
    map.get(key).or_else(|| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v))
}

fn get_int(map: &PropertyMap, key: &str) -> Result<Option<i64>> {
    match get_key(map, key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Int(i)) => Ok(Some(*i)),
        Some(other) => {
            Err(Error::type_error(format!("`{key}` must be an Integer, got {}", other.type_name()))
                .with_detail("InvalidArgumentType"))
        }
    }
}

fn get_u32(map: &PropertyMap, key: &str) -> Result<Option<u32>> {
    match get_int(map, key)? {
        None => Ok(None),
        Some(i) => {
            u32::try_from(i).map(Some).map_err(|_| bad(format!("Invalid value for {key}: {i}")))
        }
    }
}

fn get_year(map: &PropertyMap) -> Result<Option<i32>> {
    match get_int(map, "year")? {
        None => Ok(None),
        Some(i) => i32::try_from(i)
            .ok()
            .filter(|y| (-MAX_YEAR..=MAX_YEAR).contains(y))
            .map(Some)
            .ok_or_else(|| bad(format!("Invalid value for year: {i}"))),
    }
}

fn quarter_of(d: &NaiveDate) -> u32 {
    (d.month0() / 3) + 1
}

fn quarter_start(year: i32, q: u32) -> Option<NaiveDate> {
    if !(1..=4).contains(&q) {
        return None;
    }
    NaiveDate::from_ymd_opt(year, (q - 1) * 3 + 1, 1)
}

fn day_of_quarter(d: &NaiveDate) -> u32 {
    quarter_start(d.year(), quarter_of(d))
        .map_or(1, |s| (d.signed_duration_since(s).num_days() + 1) as u32)
}

/// The date described by the date fields of `map` over an optional base date.
fn resolve_date(map: &PropertyMap, base: Option<NaiveDate>) -> Result<Option<NaiveDate>> {
    let year = get_year(map)?;
    let has = |k: &str| get_key(map, k).is_some_and(|v| !v.is_null());
    let invalid = || bad("Invalid date fields");
    if has("week") || (has("dayOfWeek") && !has("month") && !has("day")) {
        let wy = match (year, base) {
            (Some(y), _) => y,
            (None, Some(b)) => b.iso_week().year(),
            (None, None) => return Err(bad("A week-based date needs a year")),
        };
        let week = match (get_u32(map, "week")?, base) {
            (Some(w), _) => w,
            (None, Some(b)) => b.iso_week().week(),
            (None, None) => 1,
        };
        let dow = match (get_u32(map, "dayOfWeek")?, base) {
            (Some(d), _) => d,
            (None, Some(b)) => b.weekday().number_from_monday(),
            (None, None) => 1,
        };
        return iso_week_date(wy, week, dow).map(Some).ok_or_else(invalid);
    }
    if has("ordinalDay") {
        let y =
            year.or(base.map(|b| b.year())).ok_or_else(|| bad("An ordinal date needs a year"))?;
        let o = get_u32(map, "ordinalDay")?.unwrap_or(1);
        return NaiveDate::from_yo_opt(y, o).map(Some).ok_or_else(invalid);
    }
    if has("quarter") || has("dayOfQuarter") {
        let y =
            year.or(base.map(|b| b.year())).ok_or_else(|| bad("A quarter date needs a year"))?;
        let q = match (get_u32(map, "quarter")?, base) {
            (Some(q), _) => q,
            (None, Some(b)) => quarter_of(&b),
            (None, None) => 1,
        };
        let doq = match (get_u32(map, "dayOfQuarter")?, base) {
            (Some(d), _) => d,
            (None, Some(b)) => day_of_quarter(&b),
            (None, None) => 1,
        };
        let start = quarter_start(y, q).ok_or_else(invalid)?;
        let d = start
            .checked_add_signed(TimeDelta::days(i64::from(doq) - 1))
            .filter(|d| doq >= 1 && quarter_of(d) == q && d.year() == y)
            .ok_or_else(invalid)?;
        return Ok(Some(d));
    }
    if year.is_none() && base.is_none() && !has("month") && !has("day") {
        return Ok(None);
    }
    let y = year.or(base.map(|b| b.year())).ok_or_else(|| bad("A date needs a year"))?;
    let m = get_u32(map, "month")?.or(base.map(|b| b.month())).unwrap_or(1);
    match get_u32(map, "day")? {
        Some(d) => NaiveDate::from_ymd_opt(y, m, d).map(Some).ok_or_else(invalid),
        None => {
            // A day inherited from the base is clamped to the month's end, as java.time does.
            let mut d = base.map_or(1, |b| b.day());
            loop {
                if let Some(x) = NaiveDate::from_ymd_opt(y, m, d) {
                    return Ok(Some(x));
                }
                if d <= 28 {
                    return Err(invalid());
                }
                d -= 1;
            }
        }
    }
}

/// The time of day described by the time fields of `map` over an optional base time.
fn resolve_time(map: &PropertyMap, base: Option<NaiveTime>) -> Result<Option<NaiveTime>> {
    let any = TIME_KEYS.iter().any(|k| get_key(map, k).is_some_and(|v| !v.is_null()));
    if !any {
        return Ok(base);
    }
    let h = get_u32(map, "hour")?.or(base.map(|b| b.hour())).unwrap_or(0);
    let m = get_u32(map, "minute")?.or(base.map(|b| b.minute())).unwrap_or(0);
    let s = get_u32(map, "second")?.or(base.map(|b| b.second())).unwrap_or(0);
    let ms = get_u32(map, "millisecond")?;
    let us = get_u32(map, "microsecond")?;
    let ns = get_u32(map, "nanosecond")?;
    let nanos = match base {
        // Over a base time, a sub-second field replaces only its own digits (milli, micro or
        // nano part), unless it is too large for that part and so means the whole fraction.
        Some(b) if ms.is_some() || us.is_some() || ns.is_some() => {
            let bn = u64::from(b.nanosecond() % 1_000_000_000);
            match (ms, us, ns) {
                (None, None, Some(n)) if n >= 1_000 => u64::from(n),
                (None, Some(u), n) if u >= 1_000 => {
                    u64::from(u) * 1_000 + n.map_or(bn % 1_000, u64::from)
                }
                _ => {
                    ms.map_or(bn / 1_000_000, u64::from) * 1_000_000
                        + us.map_or(bn / 1_000 % 1_000, u64::from) * 1_000
                        + ns.map_or(bn % 1_000, u64::from)
                }
            }
        }
        _ if ms.is_some() || us.is_some() || ns.is_some() => {
            let (ms, us, ns) = (ms.unwrap_or(0), us.unwrap_or(0), ns.unwrap_or(0));
            if ms > 999 || us > 999_999 || ns > 999_999_999 {
                return Err(bad("Invalid sub-second fields"));
            }
            u64::from(ms) * 1_000_000 + u64::from(us) * 1_000 + u64::from(ns)
        }
        _ => u64::from(base.map_or(0, |b| b.nanosecond() % 1_000_000_000)),
    };
    if nanos >= 1_000_000_000 {
        return Err(bad("Invalid sub-second fields"));
    }
    NaiveTime::from_hms_nano_opt(h, m, s, nanos as u32)
        .map(Some)
        .ok_or_else(|| bad(format!("Invalid time fields: {h}:{m}:{s}")))
}

/// The zone of a source temporal: fixed offset, or named zone with its current offset.
#[derive(Clone, Debug)]
struct SourceZone {
    spec: ZoneSpec,
    offset: i32,
}

/// What a temporal value contributes when used as a `date`/`time`/`datetime` source.
struct Parts {
    date: Option<NaiveDate>,
    time: Option<NaiveTime>,
    zone: Option<SourceZone>,
}

fn parts_of(v: &Value) -> Option<Parts> {
    Some(match v {
        Value::Date(d) => Parts { date: Some(d.0), time: None, zone: None },
        Value::LocalTime(t) => Parts { date: None, time: Some(t.0), zone: None },
        Value::Time(t) => Parts {
            date: None,
            time: Some(t.time),
            zone: Some(SourceZone {
                spec: ZoneSpec::Offset(t.offset_seconds),
                offset: t.offset_seconds,
            }),
        },
        Value::LocalDateTime(t) => {
            Parts { date: Some(t.0.date()), time: Some(t.0.time()), zone: None }
        }
        Value::DateTime(t) => Parts {
            date: Some(t.local.date()),
            time: Some(t.local.time()),
            zone: Some(SourceZone {
                spec: match &t.zone {
                    Some(z) => ZoneSpec::parse(z).unwrap_or(ZoneSpec::Offset(t.offset_seconds)),
                    None => ZoneSpec::Offset(t.offset_seconds),
                },
                offset: t.offset_seconds,
            }),
        },
        _ => return None,
    })
}

fn source(map: &PropertyMap, key: &str) -> Result<Option<Parts>> {
    match get_key(map, key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => parts_of(v)
            .map(Some)
            .ok_or_else(|| bad(format!("`{key}` must be a temporal value, got {}", v.type_name()))),
    }
}

fn get_timezone(map: &PropertyMap) -> Result<Option<ZoneSpec>> {
    match get_key(map, "timezone") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => ZoneSpec::parse(s).map(Some),
        Some(other) => Err(Error::type_error(format!(
            "`timezone` must be a String, got {}",
            other.type_name()
        ))
        .with_detail("InvalidArgumentType")),
    }
}

thread_local! {
    /// The statement clock: when set, "now" reads it, so every `date()`, `datetime()`, ... of one
    /// statement sees the same instant, as Cypher requires.
    static STATEMENT_TIME: std::cell::Cell<Option<NaiveDateTime>> =
        const { std::cell::Cell::new(None) };
}

/// Pins "now" for temporal functions on this thread (call at statement start with the current
/// UTC time; `None` to unpin). Unpinned, every call reads the system clock.
pub fn set_statement_time(utc: Option<NaiveDateTime>) {
    STATEMENT_TIME.with(|c| c.set(utc));
}

/// The current instant in UTC: the pinned statement time, else the system clock.
pub fn now_utc() -> NaiveDateTime {
    STATEMENT_TIME.with(|c| c.get()).unwrap_or_else(|| chrono::Utc::now().naive_utc())
}

/// The current value of a temporal type in the given zone (UTC when `None`).
pub fn now(kind: TemporalKind, zone: Option<&ZoneSpec>) -> Value {
    let utc = now_utc();
    let dt = zone.unwrap_or(&ZoneSpec::Offset(0)).at_utc(utc);
    match kind {
        TemporalKind::Date => Value::Date(Date(dt.local.date())),
        TemporalKind::LocalTime => Value::LocalTime(LocalTime(dt.local.time())),
        TemporalKind::Time => {
            Value::Time(Time { time: dt.local.time(), offset_seconds: dt.offset_seconds })
        }
        TemporalKind::LocalDateTime => Value::LocalDateTime(LocalDateTime(dt.local)),
        TemporalKind::DateTime => Value::DateTime(dt),
    }
}

/// Builds a temporal from a map: component fields, `date`/`time`/`datetime` sources to select
/// from, and `timezone`. A map holding only `timezone` gives the current time in that zone.
pub fn temporal_from_map(kind: TemporalKind, map: &PropertyMap) -> Result<Value> {
    for k in map.keys() {
        let known = DATE_KEYS
            .iter()
            .chain(TIME_KEYS)
            .chain(&["timezone", "date", "time", "datetime"])
            .any(|x| x.eq_ignore_ascii_case(k));
        if !known {
            return Err(bad(format!("No such field for {}: `{k}`", kind.name())));
        }
    }
    let tz = get_timezone(map)?;
    if map.keys().all(|k| k.eq_ignore_ascii_case("timezone")) {
        return Ok(now(kind, tz.as_ref()));
    }
    let dt_src = source(map, "datetime")?;
    let date_src = source(map, "date")?;
    let time_src = source(map, "time")?;
    let base_date = date_src.as_ref().and_then(|p| p.date).or(dt_src.as_ref().and_then(|p| p.date));
    let (base_time, src_zone) = match (&time_src, &dt_src) {
        (Some(t), _) => (t.time, t.zone.clone()),
        (None, Some(d)) => (d.time, d.zone.clone()),
        (None, None) => (None, None),
    };
    let date = if kind.has_date() { resolve_date(map, base_date)? } else { None };
    let time = if kind.has_time() { resolve_time(map, base_time)? } else { None };
    match kind {
        TemporalKind::Date => {
            let d = date.ok_or_else(|| bad("date() needs date fields"))?;
            Ok(Value::Date(Date(d)))
        }
        TemporalKind::LocalTime => {
            let t = time.ok_or_else(|| bad("localtime() needs time fields"))?;
            Ok(Value::LocalTime(LocalTime(t)))
        }
        TemporalKind::Time => {
            let t = time.ok_or_else(|| bad("time() needs time fields"))?;
            let (t, offset) = match (&tz, &src_zone) {
                (Some(new), Some(src)) => {
                    let new_off = new.offset_at_utc(now_utc());
                    let nanos = i128::from(nanos_of_day(&t))
                        + i128::from(new_off - src.offset) * NANOS_PER_SECOND;
                    (time_from_nanos(nanos), new_off)
                }
                (Some(new), None) => (t, new.offset_at_utc(now_utc())),
                (None, Some(src)) => (t, src.offset),
                (None, None) => (t, 0),
            };
            Ok(Value::Time(Time { time: t, offset_seconds: offset }))
        }
        TemporalKind::LocalDateTime => {
            let d = date.ok_or_else(|| bad("localdatetime() needs date fields"))?;
            Ok(Value::LocalDateTime(LocalDateTime(d.and_time(time.unwrap_or(NaiveTime::MIN)))))
        }
        TemporalKind::DateTime => {
            let d = date.ok_or_else(|| bad("datetime() needs date fields"))?;
            let local = d.and_time(time.unwrap_or(NaiveTime::MIN));
            let dt = match (&tz, &src_zone) {
                (Some(new), Some(src)) => {
                    let inst = src.spec.resolve_local(local, Some(src.offset))?;
                    new.at_utc(inst.utc())
                }
                (Some(new), None) => new.resolve_local(local, None)?,
                (None, Some(src)) => src.spec.resolve_local(local, Some(src.offset))?,
                (None, None) => DateTime { local, offset_seconds: 0, zone: None },
            };
            Ok(Value::DateTime(dt))
        }
    }
}

/// `date(x)`, `datetime(x)`, ... applied to another temporal: selects the parts the target has.
pub fn temporal_from_temporal(kind: TemporalKind, v: &Value) -> Result<Value> {
    let key = match (kind, v) {
        (TemporalKind::Date, _) => "date",
        (TemporalKind::LocalTime | TemporalKind::Time, _) => "time",
        (_, Value::Date(_)) => "date",
        (_, Value::LocalTime(_) | Value::Time(_)) => {
            return Err(bad(format!("Cannot construct a {} from a {}", kind.name(), v.type_name())))
        }
        _ => "datetime",
    };
    let parts = parts_of(v).ok_or_else(|| bad("not a temporal value"))?;
    if (kind.has_date() && parts.date.is_none()) || (key == "time" && parts.time.is_none()) {
        return Err(bad(format!("Cannot construct a {} from a {}", kind.name(), v.type_name())));
    }
    let mut map = PropertyMap::new();
    map.insert(crate::propmap::Key::from(&*key), v.clone());
    temporal_from_map(kind, &map)
}

/// `duration({years, months, weeks, days, hours, minutes, seconds, milliseconds, ...})`.
pub fn duration_from_map(map: &PropertyMap) -> Result<Duration> {
    let mut b = DurationBuilder::default();
    for (k, v) in map {
        let key = k.to_ascii_lowercase();
        let (int, float) = match v {
            Value::Null => continue,
            Value::Int(i) => (Some(*i), *i as f64),
            Value::Float(f) => (None, *f),
            other => {
                return Err(Error::type_error(format!(
                    "Duration field `{k}` must be a number, got {}",
                    other.type_name()
                ))
                .with_detail("InvalidArgumentType"))
            }
        };
        let overflow = || bad("duration out of range");
        match key.as_str() {
            "years" | "quarters" | "months" => {
                let unit = match key.as_str() {
                    "years" => 12,
                    "quarters" => 3,
                    _ => 1,
                };
                match int {
                    Some(i) => b.months_int(i.checked_mul(unit).ok_or_else(overflow)?)?,
                    None => b.months(float * unit as f64)?,
                }
            }
            "weeks" | "days" => {
                let unit = if key == "weeks" { 7 } else { 1 };
                match int {
                    Some(i) => b.days_int(i.checked_mul(unit).ok_or_else(overflow)?)?,
                    None => b.days(float * unit as f64)?,
                }
            }
            "hours" | "minutes" | "seconds" | "milliseconds" | "microseconds" | "nanoseconds" => {
                let unit: i128 = match key.as_str() {
                    "hours" => 3_600_000_000_000,
                    "minutes" => 60_000_000_000,
                    "seconds" => 1_000_000_000,
                    "milliseconds" => 1_000_000,
                    "microseconds" => 1_000,
                    _ => 1,
                };
                match int {
                    Some(i) => b.nanos(i128::from(i) * unit),
                    None => {
                        let n = float * unit as f64;
                        if !n.is_finite() || n.abs() > 1e38 {
                            return Err(overflow());
                        }
                        b.nanos(n.round() as i128)
                    }
                }
            }
            _ => return Err(bad(format!("No such field for duration: `{k}`"))),
        }
    }
    b.build()
}

/// `datetime.fromepoch(seconds, nanos)` in UTC.
pub fn datetime_from_epoch(seconds: i64, nanos: i64) -> Result<DateTime> {
    let total = i128::from(seconds) * NANOS_PER_SECOND + i128::from(nanos);
    let secs =
        i64::try_from(total.div_euclid(NANOS_PER_SECOND)).map_err(|_| bad("epoch out of range"))?;
    let sub = total.rem_euclid(NANOS_PER_SECOND) as u32;
    let utc =
        chrono::DateTime::from_timestamp(secs, sub).ok_or_else(|| bad("epoch out of range"))?;
    Ok(DateTime { local: utc.naive_utc(), offset_seconds: 0, zone: None })
}

// ---------------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------------

/// `<kind>.truncate(unit, value[, map])`: truncates to the unit, applies the map's fields, and
/// for zoned targets attaches the map's `timezone` (without converting) or keeps the value's.
pub fn truncate(
    kind: TemporalKind,
    unit: &str,
    v: &Value,
    map: Option<&PropertyMap>,
) -> Result<Value> {
    let parts = parts_of(v).ok_or_else(|| {
        Error::type_error(format!("Cannot truncate a {}", v.type_name()))
            .with_detail("InvalidArgumentType")
    })?;
    let unit_l = unit.to_ascii_lowercase();
    let date_unit = matches!(
        unit_l.as_str(),
        "millennium"
            | "century"
            | "decade"
            | "year"
            | "weekyear"
            | "quarter"
            | "month"
            | "week"
            | "day"
    );
    let time_unit =
        matches!(unit_l.as_str(), "hour" | "minute" | "second" | "millisecond" | "microsecond");
    if !date_unit && !time_unit {
        return Err(bad(format!("Unknown truncation unit: `{unit}`")));
    }
    if kind == TemporalKind::Date && time_unit {
        return Err(bad(format!("Cannot truncate a date to `{unit}`")));
    }
    if !kind.has_date() && date_unit && unit_l != "day" {
        return Err(bad(format!("Cannot truncate a time to `{unit}`")));
    }
    let date = match parts.date {
        Some(d) if kind.has_date() => {
            let y = d.year();
            let trunc_year = |n: i32| NaiveDate::from_ymd_opt(y.div_euclid(n) * n, 1, 1);
            Some(
                match unit_l.as_str() {
                    "millennium" => trunc_year(1000),
                    "century" => trunc_year(100),
                    "decade" => trunc_year(10),
                    "year" => trunc_year(1),
                    "weekyear" => NaiveDate::from_isoywd_opt(d.iso_week().year(), 1, Weekday::Mon),
                    "quarter" => quarter_start(y, quarter_of(&d)),
                    "month" => NaiveDate::from_ymd_opt(y, d.month(), 1),
                    "week" => d.checked_sub_signed(TimeDelta::days(i64::from(
                        d.weekday().num_days_from_monday(),
                    ))),
                    _ => Some(d),
                }
                .ok_or_else(|| bad("date out of range"))?,
            )
        }
        Some(_) => None,
        None if kind.has_date() => {
            return Err(bad(format!("Cannot truncate a {} to a {}", v.type_name(), kind.name())))
        }
        None => None,
    };
    let time = if kind.has_time() {
        let t = parts.time.unwrap_or(NaiveTime::MIN);
        let n = nanos_of_day(&t);
        let unit_nanos: i64 = match unit_l.as_str() {
            "hour" => 3_600_000_000_000,
            "minute" => 60_000_000_000,
            "second" => 1_000_000_000,
            "millisecond" => 1_000_000,
            "microsecond" => 1_000,
            _ => 86_400_000_000_000,
        };
        Some(time_from_nanos(i128::from(n - n.rem_euclid(unit_nanos))))
    } else {
        None
    };
    let empty = PropertyMap::new();
    let map = map.unwrap_or(&empty);
    let date = match date {
        Some(d) => resolve_date(map, Some(d))?,
        None => None,
    };
    let time = match time {
        Some(t) => resolve_time(map, Some(t))?,
        None => None,
    };
    let map_zone = get_timezone(map)?;
    let src_offset = parts.zone.as_ref().map(|z| z.offset);
    let zone = match map_zone {
        Some(z) => Some(z),
        None => parts.zone.map(|z| z.spec),
    };
    Ok(match kind {
        TemporalKind::Date => Value::Date(Date(date.ok_or_else(|| bad("missing date"))?)),
        TemporalKind::LocalTime => Value::LocalTime(LocalTime(time.unwrap_or(NaiveTime::MIN))),
        TemporalKind::Time => {
            let offset = match &zone {
                Some(ZoneSpec::Offset(o)) => *o,
                Some(z @ ZoneSpec::Named(_)) => match (src_offset, get_key(map, "timezone")) {
                    (Some(o), None) => o,
                    _ => z.offset_at_utc(now_utc()),
                },
                None => 0,
            };
            Value::Time(Time { time: time.unwrap_or(NaiveTime::MIN), offset_seconds: offset })
        }
        TemporalKind::LocalDateTime => Value::LocalDateTime(LocalDateTime(
            date.ok_or_else(|| bad("missing date"))?.and_time(time.unwrap_or(NaiveTime::MIN)),
        )),
        TemporalKind::DateTime => {
            let local =
                date.ok_or_else(|| bad("missing date"))?.and_time(time.unwrap_or(NaiveTime::MIN));
            Value::DateTime(zone.unwrap_or(ZoneSpec::Offset(0)).resolve_local(local, None)?)
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Durations between temporals
// ---------------------------------------------------------------------------------------------

/// Which `duration.between` flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BetweenUnit {
    /// `duration.between`: months, days and seconds.
    All,
    Months,
    Days,
    Seconds,
}

/// Months from `a` to `b` on the wall clock, as java.time's `LocalDateTime.until(MONTHS)`.
fn months_until(a: &NaiveDateTime, b: &NaiveDateTime) -> i64 {
    let end = adjusted_end(a, b);
    let packed = |d: &NaiveDate| {
        (i64::from(d.year()) * 12 + i64::from(d.month0())) * 32 + i64::from(d.day())
    };
    (packed(&end) - packed(&a.date())) / 32
}

/// Days from `a` to `b` on the wall clock, as `LocalDateTime.until(DAYS)`.
fn days_until(a: &NaiveDateTime, b: &NaiveDateTime) -> i64 {
    adjusted_end(a, b).signed_duration_since(a.date()).num_days()
}

/// The end date, moved one day towards the start when its time of day has not yet been reached.
fn adjusted_end(a: &NaiveDateTime, b: &NaiveDateTime) -> NaiveDate {
    let end = b.date();
    if end > a.date() && b.time() < a.time() {
        end.pred_opt().unwrap_or(end)
    } else if end < a.date() && b.time() > a.time() {
        end.succ_opt().unwrap_or(end)
    } else {
        end
    }
}

fn add_months_local(dt: &NaiveDateTime, months: i64) -> Result<NaiveDateTime> {
    let m =
        chrono::Months::new(u32::try_from(months.unsigned_abs()).map_err(|_| bad("out of range"))?);
    let d = if months >= 0 { dt.checked_add_months(m) } else { dt.checked_sub_months(m) };
    d.ok_or_else(|| bad("out of range"))
}

/// `duration.between(a, b)` and its `inMonths`/`inDays`/`inSeconds` variants. `Ok(None)` when an
/// argument is not a temporal instant.
///
/// A side without a date borrows the other side's date, and then only the time difference counts.
/// Both sides are placed in the zone of the first zoned side: a zoned end is converted to it (same
/// instant), an unzoned one is read as wall-clock time in it.
pub fn duration_between(a: &Value, b: &Value, unit: BetweenUnit) -> Result<Option<Duration>> {
    let (Some(pa), Some(pb)) = (parts_of(a), parts_of(b)) else { return Ok(None) };
    let both_dates = pa.date.is_some() && pb.date.is_some();
    let fallback = pa.date.or(pb.date).or(NaiveDate::from_ymd_opt(1970, 1, 1)).unwrap_or_default();
    let from_local0 = pa.date.unwrap_or(fallback).and_time(pa.time.unwrap_or(NaiveTime::MIN));
    let to_local0 = pb.date.unwrap_or(fallback).and_time(pb.time.unwrap_or(NaiveTime::MIN));
    let zone: Option<ZoneSpec> = pa.zone.as_ref().or(pb.zone.as_ref()).map(|z| z.spec.clone());
    let from_pref = pa.zone.as_ref().map(|z| z.offset);
    let (to_local, to_pref) = match (&zone, &pb.zone) {
        (Some(z), Some(src)) => {
            let inst = src.spec.resolve_local(to_local0, Some(src.offset))?.utc();
            let dt = z.at_utc(inst);
            (dt.local, Some(dt.offset_seconds))
        }
        _ => (to_local0, None),
    };
    let instant = |local: NaiveDateTime, pref: Option<i32>| -> Result<NaiveDateTime> {
        Ok(match &zone {
            Some(z) => z.resolve_local(local, pref)?.utc(),
            None => local,
        })
    };
    let mut from_local = from_local0;
    let mut months = 0;
    let mut days = 0;
    if both_dates {
        if matches!(unit, BetweenUnit::All | BetweenUnit::Months) {
            months = months_until(&from_local, &to_local);
            from_local = add_months_local(&from_local, months)?;
        }
        if matches!(unit, BetweenUnit::All | BetweenUnit::Days) {
            days = days_until(&from_local, &to_local);
            from_local = from_local
                .checked_add_signed(TimeDelta::days(days))
                .ok_or_else(|| bad("out of range"))?;
        }
    }
    let nanos = if matches!(unit, BetweenUnit::All | BetweenUnit::Seconds) {
        let d = instant(to_local, to_pref)? - instant(from_local, from_pref)?;
        i128::from(d.num_seconds()) * NANOS_PER_SECOND + i128::from(d.subsec_nanos())
    } else {
        0
    };
    duration_from_parts(months, days, nanos).map(Some)
}

// ---------------------------------------------------------------------------------------------
// Accessors
// ---------------------------------------------------------------------------------------------

/// A component of a temporal, duration or point value (`d.year`, `t.offsetSeconds`,
/// `dur.minutesOfHour`, `p.x`); `None` when the value has no such component.
pub fn temporal_component(v: &Value, name: &str) -> Option<Value> {
    if let Value::Point(p) = v {
        return crate::spatial::point_component(p, name);
    }
    if let Value::Duration(d) = v {
        return duration_component(d, name);
    }
    let parts = parts_of(v)?;
    let key = name.to_ascii_lowercase();
    if let Some(d) = parts.date {
        let r = match key.as_str() {
            "year" => Some(i64::from(d.year())),
            "quarter" => Some(i64::from(quarter_of(&d))),
            "month" => Some(i64::from(d.month())),
            "week" => Some(i64::from(d.iso_week().week())),
            "weekyear" => Some(i64::from(d.iso_week().year())),
            "day" => Some(i64::from(d.day())),
            "ordinalday" => Some(i64::from(d.ordinal())),
            "weekday" | "dayofweek" => Some(i64::from(d.weekday().number_from_monday())),
            "dayofquarter" => Some(i64::from(day_of_quarter(&d))),
            _ => None,
        };
        if let Some(r) = r {
            return Some(Value::Int(r));
        }
    }
    if let (Some(t), false) = (parts.time, matches!(v, Value::Date(_))) {
        let nanos = i64::from(t.nanosecond() % 1_000_000_000);
        let r = match key.as_str() {
            "hour" => Some(i64::from(t.hour())),
            "minute" => Some(i64::from(t.minute())),
            "second" => Some(i64::from(t.second())),
            "millisecond" => Some(nanos / 1_000_000),
            "microsecond" => Some(nanos / 1_000),
            "nanosecond" => Some(nanos),
            _ => None,
        };
        if let Some(r) = r {
            return Some(Value::Int(r));
        }
    }
    if let Some(z) = &parts.zone {
        match key.as_str() {
            "timezone" => {
                return Some(Value::from(match &z.spec {
                    ZoneSpec::Named(tz) => tz.name().to_string(),
                    ZoneSpec::Offset(o) => crate::format::format_offset(*o),
                }))
            }
            "offset" => return Some(Value::from(crate::format::format_offset(z.offset))),
            "offsetminutes" => return Some(Value::Int(i64::from(z.offset / 60))),
            "offsetseconds" => return Some(Value::Int(i64::from(z.offset))),
            _ => {}
        }
    }
    if let Value::DateTime(dt) = v {
        let utc = dt.utc().and_utc();
        match key.as_str() {
            "epochseconds" => return Some(Value::Int(utc.timestamp())),
            "epochmillis" => return Some(Value::Int(utc.timestamp_millis())),
            _ => {}
        }
    }
    None
}

fn duration_component(d: &Duration, name: &str) -> Option<Value> {
    let secs = d.seconds;
    let nanos = i64::from(d.nanos);
    Some(Value::Int(match name.to_ascii_lowercase().as_str() {
        "years" => d.months / 12,
        "quarters" => d.months / 3,
        "months" => d.months,
        "monthsofyear" => d.months % 12,
        "monthsofquarter" => d.months % 3,
        "quartersofyear" => (d.months / 3) % 4,
        "weeks" => d.days / 7,
        "days" => d.days,
        "daysofweek" => d.days % 7,
        "hours" => secs / 3600,
        "minutes" => secs / 60,
        "seconds" => secs,
        "minutesofhour" => (secs / 60) % 60,
        "secondsofminute" => secs % 60,
        "milliseconds" => secs.checked_mul(1_000)?.checked_add(nanos / 1_000_000)?,
        "microseconds" => secs.checked_mul(1_000_000)?.checked_add(nanos / 1_000)?,
        "nanoseconds" => secs.checked_mul(1_000_000_000)?.checked_add(nanos)?,
        "millisecondsofsecond" => nanos / 1_000_000,
        "microsecondsofsecond" => nanos / 1_000,
        "nanosecondsofsecond" => nanos,
        _ => return None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::to_string_value;

    #[test]
    fn hostile_strings_fail_cleanly() {
        let inputs = [
            "",
            "T",
            "2015-",
            "2015-W",
            "2015-W5",
            "201é-01-01",
            "2015-01-01Té",
            "12:3é",
            "P",
            "PT",
            "P1",
            "P1.S",
            "P-",
            "99999999-01-01",
            "2015-01-01T25:00",
            "2015-01-01T12:00+19:00",
            "12:00[",
            "12:00[]",
            "P9223372036854775807Y",
            "PT99999999999999999999H",
            "-",
            "+1000000-01-01",
        ];
        for s in inputs {
            for kind in [
                TemporalKind::Date,
                TemporalKind::LocalTime,
                TemporalKind::Time,
                TemporalKind::LocalDateTime,
                TemporalKind::DateTime,
            ] {
                let _ = parse_temporal(kind, s);
            }
            let _ = parse_duration(s);
        }
        assert!(parse_temporal(TemporalKind::Date, "201é-01-01").is_err());
        assert!(parse_duration("P9223372036854775807Y").is_err());
        assert!(parse_temporal(TemporalKind::Date, "+1000000-01-01").is_err());
    }

    #[test]
    fn statement_time_pins_now() {
        let t = NaiveDate::from_ymd_opt(2020, 2, 29).and_then(|d| d.and_hms_opt(23, 30, 0));
        set_statement_time(t);
        let d = now(TemporalKind::Date, None);
        let tokyo = ZoneSpec::parse("Asia/Tokyo").ok();
        let d_tokyo = now(TemporalKind::Date, tokyo.as_ref());
        set_statement_time(None);
        assert_eq!(to_string_value(&d).as_deref(), Some("2020-02-29"));
        assert_eq!(to_string_value(&d_tokyo).as_deref(), Some("2020-03-01"));
    }

    #[test]
    fn epoch_and_components() {
        let dt = datetime_from_epoch(0, -1).map(Value::DateTime);
        assert_eq!(
            dt.as_ref().ok().and_then(to_string_value).as_deref(),
            Some("1969-12-31T23:59:59.999999999Z")
        );
        let v = dt.unwrap_or(Value::Null);
        assert!(matches!(temporal_component(&v, "epochMillis"), Some(Value::Int(-1))));
        assert!(temporal_component(&v, "noSuchField").is_none());
        let d = Value::Duration(Duration { months: 0, days: 0, seconds: -1, nanos: 700_000_000 });
        assert!(matches!(
            temporal_component(&d, "nanosecondsOfSecond"),
            Some(Value::Int(700_000_000))
        ));
    }
}
