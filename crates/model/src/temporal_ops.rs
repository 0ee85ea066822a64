//! Temporal arithmetic: durations (normalization, sums, scaling), temporal + duration, time-zone
//! resolution through the IANA database (chrono-tz), and small helpers shared by parsing and
//! construction.

use chrono::{
    Datelike, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeDelta, TimeZone, Timelike,
};
use chrono_tz::Tz;

use crate::error::{Error, Result, Status};
use crate::temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
use crate::value::Value;

pub use crate::temporal::{year_shift, MAX_DATE_YEAR, MAX_YEAR};

pub const NANOS_PER_SECOND: i128 = 1_000_000_000;
pub const NANOS_PER_DAY: i128 = 86_400 * NANOS_PER_SECOND;
/// Average Gregorian month (365.2425 / 12 days) in seconds, used to cascade fractional months.
pub const AVG_SECONDS_PER_MONTH: i64 = 2_629_746;

/// Nanoseconds since midnight.
pub fn nanos_of_day(t: &NaiveTime) -> i64 {
    i64::from(t.num_seconds_from_midnight()) * 1_000_000_000
        + i64::from(t.nanosecond() % 1_000_000_000)
}

/// A `Time` as nanoseconds since midnight UTC (may be outside one day), for comparisons.
pub fn time_utc_nanos(t: &Time) -> i64 {
    nanos_of_day(&t.time) - i64::from(t.offset_seconds) * 1_000_000_000
}

/// The time of day `nanos` (taken modulo one day) after midnight.
pub fn time_from_nanos(nanos: i128) -> NaiveTime {
    let n = nanos.rem_euclid(NANOS_PER_DAY);
    let secs = (n / NANOS_PER_SECOND) as u32;
    let sub = (n % NANOS_PER_SECOND) as u32;
    NaiveTime::from_num_seconds_from_midnight_opt(secs, sub).unwrap_or(NaiveTime::MIN)
}

/// Is this a date, time or datetime (something a duration can be added to)?
pub fn is_temporal_instant(v: &Value) -> bool {
    matches!(
        v,
        Value::Date(_)
            | Value::Time(_)
            | Value::LocalTime(_)
            | Value::DateTime(_)
            | Value::LocalDateTime(_)
    )
}

fn overflow() -> Error {
    Error::new(Status::ArithmeticError, "long overflow")
}

fn out_of_range(what: &str) -> Error {
    Error::argument(format!("{what} is out of the supported range"))
        .with_detail("InvalidArgumentValue")
}

// ---------------------------------------------------------------------------------------------
// Durations
// ---------------------------------------------------------------------------------------------

/// Builds a duration from months, days and a signed number of nanoseconds.
pub fn duration_from_parts(months: i64, days: i64, nanos: i128) -> Result<Duration> {
    let seconds = nanos.div_euclid(NANOS_PER_SECOND);
    let sub = nanos.rem_euclid(NANOS_PER_SECOND) as i32;
    let seconds = i64::try_from(seconds).map_err(|_| overflow())?;
    Ok(Duration { months, days, seconds, nanos: sub })
}

/// The seconds-and-nanos part of a duration as nanoseconds.
pub fn duration_nanos(d: &Duration) -> i128 {
    i128::from(d.seconds) * NANOS_PER_SECOND + i128::from(d.nanos)
}

/// Neo4j refuses (and its drivers could not decode) a duration whose length in average seconds
/// (a month is 2,629,746 s, a day 86,400 s) leaves the integer range.
pub fn duration_in_range(d: Duration) -> Result<Duration> {
    let total = d
        .months
        .checked_mul(AVG_SECONDS_PER_MONTH)
        .and_then(|m| d.days.checked_mul(86_400).and_then(|s| m.checked_add(s)))
        .and_then(|s| s.checked_add(d.seconds));
    if total.is_none() {
        return Err(Error::argument(format!(
            "Invalid value for duration, will cause overflow. Value was months={}, days={}, \
             seconds={}, nanos={}",
            d.months, d.days, d.seconds, d.nanos
        ))
        .with_detail("InvalidArgumentValue"));
    }
    Ok(d)
}

/// Neo4j's error for an operation on a duration whose components overflow:
/// `Can not add duration PT1S and PT2S without causing overflow.`
fn cannot(op: &str, d: &Duration, joiner: &str, other: &str) -> Error {
    Error::argument(format!(
        "Can not {op} duration {} {joiner} {other} without causing overflow.",
        crate::format::format_duration(d)
    ))
    .with_detail("InvalidArgumentValue")
}

/// A float as Java's `%e` prints it (Neo4j names a `Double(1.000000e+30)` operand so).
fn java_e(f: f64) -> String {
    let s = format!("{f:.6e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mant}e{sign}{:02}", exp.unsigned_abs())
}

/// Components combined with `op`, checked; seconds and nanoseconds renormalised.
fn combine(a: &Duration, b: &Duration, op: fn(i64, i64) -> Option<i64>) -> Option<Duration> {
    let nanos = op(i64::from(a.nanos), i64::from(b.nanos))?;
    let seconds = op(a.seconds, b.seconds)?.checked_add(nanos.div_euclid(1_000_000_000))?;
    Some(Duration {
        months: op(a.months, b.months)?,
        days: op(a.days, b.days)?,
        seconds,
        nanos: nanos.rem_euclid(1_000_000_000) as i32,
    })
}

pub fn duration_add(a: &Duration, b: &Duration) -> Result<Duration> {
    let sum = combine(a, b, i64::checked_add)
        .ok_or_else(|| cannot("add", a, "and", &crate::format::format_duration(b)))?;
    duration_in_range(sum)
}

pub fn duration_sub(a: &Duration, b: &Duration) -> Result<Duration> {
    let diff = combine(a, b, i64::checked_sub)
        .ok_or_else(|| cannot("subtract", a, "and", &crate::format::format_duration(b)))?;
    duration_in_range(diff)
}

pub fn duration_neg(d: &Duration) -> Result<Duration> {
    duration_from_parts(
        d.months.checked_neg().ok_or_else(overflow)?,
        d.days.checked_neg().ok_or_else(overflow)?,
        -duration_nanos(d),
    )
}

pub fn duration_mul_int(d: &Duration, n: i64) -> Result<Duration> {
    let fail = || cannot("multiply", d, "with", &format!("Long({n})"));
    let nanos = duration_nanos(d).checked_mul(i128::from(n)).ok_or_else(fail)?;
    let out = duration_from_parts(
        d.months.checked_mul(n).ok_or_else(fail)?,
        d.days.checked_mul(n).ok_or_else(fail)?,
        nanos,
    )
    .map_err(|_| fail())?;
    duration_in_range(out)
}

/// Accumulates a duration from possibly fractional components; fractions cascade down (months
/// to days at the average month length, days to seconds, seconds to nanos) as Neo4j does.
#[derive(Default, Debug, Clone, Copy)]
pub struct DurationBuilder {
    months: i64,
    days: i64,
    nanos: i128,
}

impl DurationBuilder {
    /// Adds `amount` months.
    pub fn months(&mut self, amount: f64) -> Result<()> {
        let whole = amount.trunc();
        self.months = self.months.checked_add(f64_to_i64(whole)?).ok_or_else(overflow)?;
        let frac = amount - whole;
        if frac != 0.0 {
            let nanos = frac * (AVG_SECONDS_PER_MONTH as f64) * 1e9;
            self.add_day_nanos(nanos.round() as i128)?;
        }
        Ok(())
    }

    /// Adds whole months exactly.
    pub fn months_int(&mut self, amount: i64) -> Result<()> {
        self.months = self.months.checked_add(amount).ok_or_else(overflow)?;
        Ok(())
    }

    pub fn days(&mut self, amount: f64) -> Result<()> {
        let whole = amount.trunc();
        self.days = self.days.checked_add(f64_to_i64(whole)?).ok_or_else(overflow)?;
        let frac = amount - whole;
        if frac != 0.0 {
            self.nanos += (frac * 86_400e9).round() as i128;
        }
        Ok(())
    }

    pub fn days_int(&mut self, amount: i64) -> Result<()> {
        self.days = self.days.checked_add(amount).ok_or_else(overflow)?;
        Ok(())
    }

    pub fn nanos(&mut self, amount: i128) {
        self.nanos += amount;
    }

    /// Splits nanoseconds from a month fraction into whole days and the rest.
    fn add_day_nanos(&mut self, nanos: i128) -> Result<()> {
        let days = nanos / NANOS_PER_DAY;
        self.days = self.days.checked_add(days as i64).ok_or_else(overflow)?;
        self.nanos += nanos % NANOS_PER_DAY;
        Ok(())
    }

    pub fn build(self) -> Result<Duration> {
        duration_from_parts(self.months, self.days, self.nanos)
    }
}

fn f64_to_i64(f: f64) -> Result<i64> {
    if f.is_finite() && f.abs() < 9.2e18 {
        Ok(f as i64)
    } else {
        Err(overflow())
    }
}

/// Multiplies a duration by a float; fractions cascade down. A factor that is not finite gives
/// the zero duration, as in Neo4j.
pub fn duration_mul_float(d: &Duration, f: f64) -> Result<Duration> {
    let fail = || cannot("multiply", d, "with", &format!("Double({})", java_e(f)));
    duration_in_range(scale(d, f).ok_or_else(fail)?)
}

/// Divides a duration by a float (`d / 0.0` is the zero duration, as in Neo4j).
pub fn duration_div_float(d: &Duration, f: f64) -> Result<Duration> {
    let fail = || cannot("divide", d, "with", &format!("Double({})", java_e(f)));
    duration_in_range(scale(d, 1.0 / f).ok_or_else(fail)?)
}

/// Divides a duration by a non-zero integer.
pub fn duration_div_int(d: &Duration, n: i64) -> Result<Duration> {
    let fail = || cannot("divide", d, "with", &format!("Long({n})"));
    duration_in_range(scale(d, 1.0 / n as f64).ok_or_else(fail)?)
}

/// `d * f` with fractions cascading down; `None` when a component leaves its range.
fn scale(d: &Duration, f: f64) -> Option<Duration> {
    if !f.is_finite() {
        return Some(Duration { months: 0, days: 0, seconds: 0, nanos: 0 });
    }
    let mut b = DurationBuilder::default();
    b.months(d.months as f64 * f).ok()?;
    b.days(d.days as f64 * f).ok()?;
    let nanos = duration_nanos(d) as f64 * f;
    if !nanos.is_finite() || nanos.abs() > 1.7e38 {
        return None;
    }
    b.nanos(nanos.trunc() as i128);
    b.build().ok()
}

// ---------------------------------------------------------------------------------------------
// Temporal + duration
// ---------------------------------------------------------------------------------------------

fn year_error(year: i64) -> Error {
    let msg = if year.abs() > MAX_DATE_YEAR {
        format!("Invalid value for Year (valid values -999999999 - 999999999): {year}")
    } else {
        format!("Invalid value for Year (Arbor supports -{MAX_YEAR} - {MAX_YEAR}): {year}")
    };
    Error::new(Status::ArithmeticError, msg)
}

/// The chrono date of `d`, for values with a time part (limited to ±[`MAX_YEAR`]).
pub(crate) fn naive_date(d: Date) -> Result<NaiveDate> {
    d.naive().ok_or_else(|| year_error(d.year()))
}

/// The date of year `year` built by `make` on chrono (`make` gets the year moved into chrono's
/// range by whole 400-year cycles; see [`year_shift`]), moved back.
pub(crate) fn date_of_year(year: i64, make: impl FnOnce(i32) -> Option<NaiveDate>) -> Option<Date> {
    if year.abs() > MAX_DATE_YEAR {
        return None;
    }
    let shift = year_shift(year);
    let base = make(i32::try_from(year - shift).ok()?)?;
    Date::join(base, shift)
}

/// `date` plus `months` as Java's `LocalDate.plusMonths` (the day clamped to the month's end).
fn plus_months(date: Date, months: i64) -> Result<Date> {
    if months == 0 {
        return Ok(date);
    }
    let (y, m, d) = date.ymd();
    let calc = i128::from(y) * 12 + i128::from(m - 1) + i128::from(months);
    let year = i64::try_from(calc.div_euclid(12)).unwrap_or(i64::MAX);
    let month = calc.rem_euclid(12) as u32 + 1;
    date_of_year(year, |by| {
        (28.min(d)..=d).rev().find_map(|x| NaiveDate::from_ymd_opt(by, month, x))
    })
    .ok_or_else(|| year_error(year))
}

/// `date` plus `days` as Java's `LocalDate.plusDays`: past the year range within the next
/// month it names the year, otherwise the epoch day.
fn plus_days(date: Date, days: i64) -> Result<Date> {
    if days == 0 {
        return Ok(date);
    }
    let (y, m, d) = date.ymd();
    let dom = i64::from(d).saturating_add(days);
    if m == 12 && (32..=59).contains(&dom) && y + 1 > MAX_DATE_YEAR {
        return Err(year_error(y + 1));
    }
    let epoch = date.epoch_day().checked_add(days).ok_or_else(overflow)?;
    Date::from_epoch_day(epoch).ok_or_else(|| {
        Error::new(
            Status::ArithmeticError,
            format!(
                "Invalid value for EpochDay (valid values -365243219162 - 365241780471): {epoch}"
            ),
        )
    })
}

fn add_months_days(date: Date, months: i64, days: i64) -> Result<Date> {
    plus_days(plus_months(date, months)?, days)
}

/// [`add_months_days`] for the date part of a value with a time part.
fn add_months_days_naive(date: NaiveDate, months: i64, days: i64) -> Result<NaiveDate> {
    naive_date(add_months_days(Date::from_naive(date), months, days)?)
}

/// A date and time plus nanoseconds: whole days through [`plus_days`], the rest on the clock.
fn add_nanos(dt: NaiveDateTime, nanos: i128) -> Result<NaiveDateTime> {
    let total = i128::from(nanos_of_day(&dt.time())) + nanos;
    let days = i64::try_from(total.div_euclid(NANOS_PER_DAY)).map_err(|_| overflow())?;
    let date = naive_date(plus_days(Date::from_naive(dt.date()), days)?)?;
    Ok(date.and_time(time_from_nanos(total.rem_euclid(NANOS_PER_DAY))))
}

/// `temporal + duration`. Dates take months, days and whole days of the time part; times take
/// only the time part (wrapping around midnight); datetimes take everything, months and days on
/// the wall clock and the time part on the instant line (relevant across DST changes).
pub fn add_duration(t: &Value, d: &Duration) -> Result<Value> {
    let nanos = duration_nanos(d);
    Ok(match t {
        Value::Date(x) => {
            // Months, days, then the whole days of the time part, each step as Java takes it.
            let extra_days = (nanos / NANOS_PER_DAY) as i64;
            let date = add_months_days(*x, d.months, d.days)?;
            Value::Date(plus_days(date, extra_days)?)
        }
        Value::LocalTime(x) => {
            Value::LocalTime(LocalTime(time_from_nanos(i128::from(nanos_of_day(&x.0)) + nanos)))
        }
        Value::Time(x) => Value::Time(Time {
            time: time_from_nanos(i128::from(nanos_of_day(&x.time)) + nanos),
            offset_seconds: x.offset_seconds,
        }),
        Value::LocalDateTime(x) => {
            let date = add_months_days_naive(x.0.date(), d.months, d.days)?;
            Value::LocalDateTime(LocalDateTime(add_nanos(date.and_time(x.0.time()), nanos)?))
        }
        Value::DateTime(x) => {
            let date = add_months_days_naive(x.local.date(), d.months, d.days)?;
            let local = date.and_time(x.local.time());
            match &x.zone {
                Some(z) => {
                    let zone = ZoneSpec::parse(z)?;
                    let resolved = zone.resolve_local(local, Some(x.offset_seconds))?;
                    let utc = add_nanos(resolved.utc(), nanos)?;
                    Value::DateTime(zone.at_utc(utc))
                }
                None => Value::DateTime(DateTime {
                    local: add_nanos(local, nanos)?,
                    offset_seconds: x.offset_seconds,
                    zone: None,
                }),
            }
        }
        other => {
            return Err(Error::type_error(format!(
                "Cannot add a Duration to `{}`",
                other.type_name()
            ))
            .with_detail("InvalidArgumentType"))
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Time zones
// ---------------------------------------------------------------------------------------------

/// A time zone: a fixed offset or a named IANA zone.
#[derive(Clone, Debug)]
pub enum ZoneSpec {
    Offset(i32),
    Named(Tz),
}

impl ZoneSpec {
    /// Parses `Z`, `+01:00`, `-0530`, `+01`, `UTC`, or an IANA name such as `Europe/Stockholm`.
    pub fn parse(s: &str) -> Result<ZoneSpec> {
        if s == "Z" || s == "z" {
            return Ok(ZoneSpec::Offset(0));
        }
        if s.starts_with('+') || s.starts_with('-') {
            return parse_offset(s).map(ZoneSpec::Offset);
        }
        match s.parse::<Tz>() {
            Ok(tz) => Ok(ZoneSpec::Named(tz)),
            Err(_) => Err(Error::argument(format!("Invalid time zone: `{s}`"))
                .with_detail("InvalidArgumentValue")),
        }
    }

    /// The offset in seconds of this zone at the given UTC instant.
    pub fn offset_at_utc(&self, utc: NaiveDateTime) -> i32 {
        match self {
            ZoneSpec::Offset(o) => *o,
            ZoneSpec::Named(tz) => tz.offset_from_utc_datetime(&utc).fix().local_minus_utc(),
        }
    }

    /// The datetime at a UTC instant in this zone.
    pub fn at_utc(&self, utc: NaiveDateTime) -> DateTime {
        let off = self.offset_at_utc(utc);
        DateTime {
            // Offsets are below a day and years are kept far from chrono's limits, so this only
            // saturates on values no constructor produces.
            local: utc.checked_add_signed(TimeDelta::seconds(i64::from(off))).unwrap_or(utc),
            offset_seconds: off,
            zone: match self {
                ZoneSpec::Offset(_) => None,
                ZoneSpec::Named(tz) => Some(std::sync::Arc::from(tz.name())),
            },
        }
    }

    /// Resolves a wall-clock reading in this zone as Java's `ZonedDateTime.ofLocal` does: an
    /// ambiguous reading takes `preferred` if valid, else the earlier offset; a reading in a gap
    /// moves forward by the gap's length.
    pub fn resolve_local(&self, local: NaiveDateTime, preferred: Option<i32>) -> Result<DateTime> {
        match self {
            ZoneSpec::Offset(o) => Ok(DateTime { local, offset_seconds: *o, zone: None }),
            ZoneSpec::Named(tz) => {
                use chrono::LocalResult;
                let offset = match tz.offset_from_local_datetime(&local) {
                    LocalResult::Single(o) => o.fix().local_minus_utc(),
                    LocalResult::Ambiguous(a, b) => {
                        let (a, b) = (a.fix().local_minus_utc(), b.fix().local_minus_utc());
                        match preferred {
                            Some(p) if p == a || p == b => p,
                            _ => a.max(b),
                        }
                    }
                    LocalResult::None => {
                        // In a gap: interpret with the offset in force before it.
                        let day_before =
                            local.checked_sub_signed(TimeDelta::days(1)).unwrap_or(local);
                        let before =
                            tz.offset_from_utc_datetime(&day_before).fix().local_minus_utc();
                        let utc = local
                            .checked_sub_signed(TimeDelta::seconds(i64::from(before)))
                            .ok_or_else(|| out_of_range("datetime"))?;
                        return Ok(self.at_utc(utc));
                    }
                };
                Ok(DateTime {
                    local,
                    offset_seconds: offset,
                    zone: Some(std::sync::Arc::from(tz.name())),
                })
            }
        }
    }
}

/// Parses a UTC offset: `+01:00`, `+0100`, `+01`, `-11:59`, `+00:53:28`.
pub fn parse_offset(s: &str) -> Result<i32> {
    let bad =
        || Error::argument(format!("Invalid offset: `{s}`")).with_detail("InvalidArgumentValue");
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => return Err(bad()),
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) || !matches!(digits.len(), 2 | 4 | 6) {
        return Err(bad());
    }
    let num =
        |r: std::ops::Range<usize>| digits.get(r).and_then(|x| x.parse::<i32>().ok()).unwrap_or(0);
    let (h, m, sec) = (num(0..2), num(2..4), num(4..6));
    if h > 18 || m > 59 || sec > 59 {
        return Err(bad());
    }
    Ok(sign * (h * 3600 + m * 60 + sec))
}

/// Java's `Year`-based helpers: the ISO week-based year and week of a date.
pub fn iso_week(d: &NaiveDate) -> (i32, u32) {
    let w = d.iso_week();
    (w.year(), w.week())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{format_datetime, to_string_value};

    fn dur(months: i64, days: i64, secs: i64, nanos: i32) -> Duration {
        Duration { months, days, seconds: secs, nanos }
    }

    #[test]
    fn fractional_durations_cascade() {
        let mut b = DurationBuilder::default();
        b.months(0.75).unwrap();
        assert_eq!(crate::format::format_duration(&b.build().unwrap()), "P22DT19H51M49.5S");
        let mut b = DurationBuilder::default();
        b.days(1.5).unwrap();
        b.months(5.0).unwrap();
        assert_eq!(crate::format::format_duration(&b.build().unwrap()), "P5M1DT12H");
    }

    #[test]
    fn duration_scaling() {
        let d = dur(149, 14, 58390, 1);
        let half = duration_mul_float(&d, 0.5).unwrap();
        assert_eq!(crate::format::format_duration(&half), "P6Y2M22DT13H21M8S");
        let twice = duration_mul_int(&d, 2).unwrap();
        assert_eq!(crate::format::format_duration(&twice), "P24Y10M28DT32H26M20.000000002S");
    }

    #[test]
    fn add_to_temporals() {
        let d = dur(149, 14, 58390, 2);
        let date = Value::Date(Date::from_naive(NaiveDate::from_ymd_opt(1984, 10, 11).unwrap()));
        let sum = add_duration(&date, &d).unwrap();
        assert_eq!(to_string_value(&sum).unwrap(), "1997-03-25");
        let diff = add_duration(&date, &duration_neg(&d).unwrap()).unwrap();
        assert_eq!(to_string_value(&diff).unwrap(), "1972-04-27");
        let t = Value::LocalTime(LocalTime(NaiveTime::from_hms_nano_opt(12, 31, 14, 1).unwrap()));
        assert_eq!(to_string_value(&add_duration(&t, &d).unwrap()).unwrap(), "04:44:24.000000003");
        assert_eq!(
            to_string_value(&add_duration(&t, &duration_neg(&d).unwrap()).unwrap()).unwrap(),
            "20:18:03.999999999"
        );
    }

    #[test]
    fn zones_resolve() {
        let z = ZoneSpec::parse("Europe/Stockholm").unwrap();
        let local = NaiveDate::from_ymd_opt(2015, 7, 21).unwrap().and_hms_opt(21, 40, 32).unwrap();
        let dt = z.resolve_local(local, None).unwrap();
        assert_eq!(format_datetime(&dt), "2015-07-21T21:40:32+02:00[Europe/Stockholm]");
        // 2018-03-25 02:30 does not exist in Stockholm: it moves to 03:30 +02:00.
        let gap = NaiveDate::from_ymd_opt(2018, 3, 25).unwrap().and_hms_opt(2, 30, 0).unwrap();
        let dt = z.resolve_local(gap, None).unwrap();
        assert_eq!(format_datetime(&dt), "2018-03-25T03:30+02:00[Europe/Stockholm]");
        assert_eq!(parse_offset("+01:00").unwrap(), 3600);
        assert_eq!(parse_offset("-0530").unwrap(), -(5 * 3600 + 30 * 60));
        assert!(parse_offset("+1").is_err());
        assert!(ZoneSpec::parse("Mars/Olympus").is_err());
    }
}
