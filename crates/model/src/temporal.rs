//! Temporal and spatial value types.
//!
//! Wall-clock fields are kept as chrono values with nanosecond precision. Conversions to the Bolt
//! encodings (days, seconds since epoch, UTC vs legacy wall-clock) live in the `bolt` crate.

use std::sync::Arc;

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

/// A calendar date without a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(pub NaiveDate);

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
