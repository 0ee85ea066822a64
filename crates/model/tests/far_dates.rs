//! Dates over Java's whole year range (-999,999,999 to 999,999,999), far past chrono's: parsing,
//! printing, the day count Bolt and storage carry, calendar fields and arithmetic.

use arbor_model::temporal_build::{parse_temporal, temporal_component, TemporalKind};
use arbor_model::temporal_ops::add_duration;
use arbor_model::{to_string_value, Date, Duration, Value};

fn date(s: &str) -> Date {
    match parse_temporal(TemporalKind::Date, s) {
        Ok(Value::Date(d)) => d,
        other => panic!("{s}: {other:?}"),
    }
}

// Goal: Java's whole year range holds, at its ends and far from chrono's, and the calendar
// of a far date is the calendar of the near date 400·k years away.
#[test]
fn far_dates() {
    assert_eq!(date("1970-01-01").epoch_day(), 0);
    assert_eq!(date("2020-01-01").epoch_day(), 18_262);
    assert_eq!(date("+999999999-12-31").epoch_day(), 365_241_780_471);
    assert_eq!(date("-999999999-01-01").epoch_day(), -365_243_219_162);
    assert!(parse_temporal(TemporalKind::Date, "+1000000000-01-01").is_err());
    for s in
        ["+999999999-12-31", "-999999999-01-01", "+300000-02-29", "-0001-01-01", "+262001-03-01"]
    {
        let d = date(s);
        assert_eq!(to_string_value(&Value::Date(d)).as_deref(), Some(s));
        assert_eq!(Date::from_epoch_day(d.epoch_day()), Some(d));
        // The weekday from the day count (1970-01-01 was a Thursday).
        let dow = temporal_component(&Value::Date(d), "dayOfWeek");
        assert!(
            matches!(dow, Some(Value::Int(w)) if w == (d.epoch_day() + 3).rem_euclid(7) + 1),
            "{s}"
        );
    }
    assert!(parse_temporal(TemporalKind::Date, "+300001-02-29").is_err(), "not a leap year");
    let far = date("+300000-06-15");
    assert!(far > date("2020-01-01") && date("-300000-06-15") < date("-0001-01-01"));
    let plus = |d: Date, months: i64, days: i64| {
        let dur = Duration { months, days, seconds: 0, nanos: 0 };
        match add_duration(&Value::Date(d), &dur) {
            Ok(Value::Date(x)) => to_string_value(&Value::Date(x)),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(plus(far, 0, 20).as_deref(), Some("+300000-07-05"));
    assert_eq!(plus(date("+300000-01-31"), 1, 0).as_deref(), Some("+300000-02-29"));
    assert_eq!(plus(date("2020-01-01"), 12 * 299_980, 0).as_deref(), Some("+302000-01-01"));
    let over = add_duration(
        &Value::Date(date("+999999999-12-31")),
        &Duration { days: 1, ..Duration::default() },
    );
    assert!(over.is_err());
    assert_eq!(
        temporal_component(&Value::Date(far), "year").map(|v| format!("{v:?}")),
        Some("Int(300000)".into())
    );
}
