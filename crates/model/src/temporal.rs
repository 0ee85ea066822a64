//! Temporal and spatial value types.
//!
//! Wall-clock fields are kept as chrono values with nanosecond precision; dates as days since
//! the epoch, to reach Java's year range. Conversions to the Bolt
//! encodings (days, seconds since epoch, UTC vs legacy wall-clock) live in the `bolt` crate.

use std::sync::Arc;

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime};

/// A calendar date without a zone: days since 1970-01-01, over Java's `LocalDate` range (years
/// -999,999,999 to 999,999,999), as Neo4j supports.
///
/// chrono's `NaiveDate` stops at about ±262,000 years. The Gregorian calendar repeats every 400
/// years (146,097 days, a whole number of weeks), so a far date is handled in chrono as the same
/// calendar day moved by whole cycles into its range ([`Date::split`]), then moved back
/// ([`Date::join`]): month lengths, leap years, weekdays and ISO weeks all survive the move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(i64);

/// Days in 400 Gregorian years.
const CYCLE_DAYS: i64 = 146_097;
/// `NaiveDate::num_days_from_ce` of 1970-01-01.
const CE_TO_EPOCH: i64 = 719_163;
/// Java's `LocalDate` range in days since the epoch (-999999999-01-01 to +999999999-12-31).
pub const EPOCH_DAY_RANGE: (i64, i64) = (-365_243_219_162, 365_241_780_471);
/// Years that chrono holds with room to spare for offset and time arithmetic: dates of these
/// years convert to `NaiveDate` without a shift (the limit of times and datetimes too).
pub const MAX_YEAR: i32 = 262_000;
/// Java's year limit, the limit of dates.
pub const MAX_DATE_YEAR: i64 = 999_999_999;

impl Date {
    /// The date of a chrono date.
    pub fn from_naive(d: NaiveDate) -> Date {
        Date(i64::from(d.num_days_from_ce()) - CE_TO_EPOCH)
    }

    /// The date `days` after 1970-01-01, if inside Java's range.
    pub fn from_epoch_day(days: i64) -> Option<Date> {
        (EPOCH_DAY_RANGE.0..=EPOCH_DAY_RANGE.1).contains(&days).then_some(Date(days))
    }

    /// Days since 1970-01-01 (negative before).
    pub fn epoch_day(self) -> i64 {
        self.0
    }

    /// The chrono date, for dates of years within ±[`MAX_YEAR`].
    pub fn naive(self) -> Option<NaiveDate> {
        let d = i32::try_from(self.0 + CE_TO_EPOCH)
            .ok()
            .and_then(NaiveDate::from_num_days_from_ce_opt)?;
        (-MAX_YEAR..=MAX_YEAR).contains(&d.year()).then_some(d)
    }

    /// The same calendar day moved by whole 400-year cycles into chrono's range, and the years
    /// it was moved by (a multiple of 400; 0 for dates [`Date::naive`] holds):
    /// `year = base.year() + shift`.
    pub fn split(self) -> (NaiveDate, i64) {
        if let Some(d) = self.naive() {
            return (d, 0);
        }
        let cycles = self.0.div_euclid(CYCLE_DAYS);
        let base = self.0.rem_euclid(CYCLE_DAYS) + CE_TO_EPOCH;
        let base = i32::try_from(base)
            .ok()
            .and_then(NaiveDate::from_num_days_from_ce_opt)
            .unwrap_or(NaiveDate::MIN);
        (base, cycles * 400)
    }

    /// The date of `base` moved by `shift` years (a multiple of 400, as [`year_shift`] gives),
    /// if inside Java's range.
    pub fn join(base: NaiveDate, shift: i64) -> Option<Date> {
        debug_assert!(shift % 400 == 0, "a shift of whole cycles only");
        let days = (shift / 400).checked_mul(CYCLE_DAYS)?;
        Date::from_epoch_day(Date::from_naive(base).0.checked_add(days)?)
    }

    /// Year, month (1-12) and day of month (1-31).
    pub fn ymd(self) -> (i64, u32, u32) {
        let (base, shift) = self.split();
        (i64::from(base.year()) + shift, base.month(), base.day())
    }

    /// The year.
    pub fn year(self) -> i64 {
        self.ymd().0
    }
}

/// The whole 400-year cycles (in years) to take off `year` so that chrono holds it: 0 within
/// ±[`MAX_YEAR`], else a shift that lands in 1970..2370. Build the date of `year - shift` in
/// chrono, then [`Date::join`] it with `shift`.
pub fn year_shift(year: i64) -> i64 {
    if (-i64::from(MAX_YEAR)..=i64::from(MAX_YEAR)).contains(&year) {
        0
    } else {
        (year - 1970).div_euclid(400) * 400
    }
}

/// A time of day without a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalTime(pub NaiveTime);

/// A time of day with a fixed UTC offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Time {
    pub time: NaiveTime,
    pub offset_seconds: i32,
}

/// A date and time without a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalDateTime(pub NaiveDateTime);

/// An instant with the wall-clock reading at its offset, and optionally the IANA zone that offset
/// came from (`Europe/Stockholm`). When `zone` is set, `offset_seconds` is that zone's offset at
/// this instant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// Wall-clock date and time at `offset_seconds`.
    pub local: NaiveDateTime,
    pub offset_seconds: i32,
    pub zone: Option<Arc<str>>,
}

impl DateTime {
    /// The same instant in UTC. At chrono's outermost representable instants (far beyond the
    /// ±262,000 years values are limited to) the wall-clock reading is returned unchanged rather
    /// than panicking.
    pub fn utc(&self) -> NaiveDateTime {
        self.local
            .checked_sub_signed(chrono::TimeDelta::seconds(i64::from(self.offset_seconds)))
            .unwrap_or(self.local)
    }
}

/// A Cypher duration: months, days and seconds are kept apart because their lengths vary.
/// `nanos` is in `0..1_000_000_000` after normalization; `seconds` carries the sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Duration {
    pub months: i64,
    pub days: i64,
    pub seconds: i64,
    pub nanos: i32,
}

/// A spatial point. `srid` 7203 = cartesian 2D, 9157 = cartesian 3D, 4326 = WGS-84 2D,
/// 4979 = WGS-84 3D.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub srid: u32,
    pub x: f64,
    pub y: f64,
    pub z: Option<f64>,
}
