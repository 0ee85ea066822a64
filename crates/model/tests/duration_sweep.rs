//! A sweep over the extremes of duration and temporal arithmetic (every pair of a grid of
//! extreme durations, factors and temporals): no operation panics, every duration result is in
//! range, and every error is of the class Neo4j 5.26 answers with (`ArgumentError` for a
//! duration that overflows, `ArithmeticError` for a date or time pushed out of range or a
//! division by zero).

use arbor_model::ops::{add, div, mul, sub};
use arbor_model::{Date, DateTime, Duration, LocalDateTime, LocalTime, Status, Time, Value};
use chrono::{NaiveDate, NaiveTime};

const BIG: [i64; 12] = [
    0,
    1,
    -1,
    1_000_000_007,
    106_751_991_167_300,
    -106_751_991_167_300,
    3_507_324_295_084,
    i64::MAX / 2,
    i64::MIN / 2,
    i64::MAX,
    i64::MIN,
    i64::MIN + 1,
];

fn durations() -> Vec<Duration> {
    let mut out = Vec::new();
    for &m in &[0, 1, -1, 3_507_324_295_084, i64::MAX, i64::MIN] {
        for &d in &[0, 1, -106_751_991_167_300, i64::MAX] {
            for &s in &BIG {
                for &n in &[0, 999_999_999] {
                    out.push(Duration { months: m, days: d, seconds: s, nanos: n });
                }
            }
        }
    }
    out
}

fn temporals() -> Vec<Value> {
    let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).expect("a valid date");
    let noon = NaiveTime::from_hms_opt(12, 0, 0).expect("noon");
    let mut out = Vec::new();
    for date in [day(2020, 1, 1), day(262_000, 12, 31), day(-262_000, 1, 1), day(2020, 12, 31)] {
        out.push(Value::Date(Date::from_naive(date)));
        out.push(Value::LocalDateTime(LocalDateTime(date.and_time(noon))));
        out.push(Value::DateTime(DateTime {
            local: date.and_time(noon),
            offset_seconds: 3600,
            zone: None,
        }));
    }
    out.push(Value::LocalTime(LocalTime(noon)));
    out.push(Value::Time(Time { time: noon, offset_seconds: -7200 }));
    out
}

fn check(what: &str, r: arbor_model::Result<Value>, allowed: &[Status]) {
    match r {
        Ok(Value::Duration(d)) => {
            let secs = i128::from(d.months) * 2_629_746 + i128::from(d.days) * 86_400;
            let range = i128::from(i64::MIN)..=i128::from(i64::MAX);
            assert!(range.contains(&(secs + i128::from(d.seconds))), "{what}: out of range {d:?}");
            assert!((0..1_000_000_000).contains(&d.nanos), "{what}: nanos {d:?}");
        }
        Ok(_) => {}
        Err(e) => assert!(allowed.contains(&e.status), "{what}: {e}"),
    }
}

#[test]
fn duration_arithmetic_never_panics_and_fails_as_neo4j() {
    let durs = durations();
    let arg = [Status::ArgumentError];
    let div_arg = [Status::ArgumentError, Status::ArithmeticError];
    for a in &durs {
        let va = Value::Duration(*a);
        for b in durs.iter().step_by(7) {
            let vb = Value::Duration(*b);
            check(&format!("{a:?} + {b:?}"), add(&va, &vb), &arg);
            check(&format!("{a:?} - {b:?}"), sub(&va, &vb), &arg);
        }
        for &n in &BIG {
            check(&format!("{a:?} * {n}"), mul(&va, &Value::Int(n)), &arg);
            check(&format!("{a:?} / {n}"), div(&va, &Value::Int(n)), &div_arg);
        }
        for f in [0.0, -0.0, 1e-300, 0.5, 1.5, -2.5, 1e30, -1e30, f64::NAN, f64::INFINITY] {
            check(&format!("{a:?} * {f}"), mul(&va, &Value::Float(f)), &arg);
            check(&format!("{a:?} / {f}"), div(&va, &Value::Float(f)), &arg);
        }
    }
}

#[test]
fn temporal_plus_duration_never_panics_and_fails_as_neo4j() {
    // Only durations Neo4j can hold (the others are refused when built).
    let durs: Vec<Duration> = durations()
        .into_iter()
        .filter(|d| arbor_model::temporal_ops::duration_in_range(*d).is_ok())
        .collect();
    assert!(durs.len() > 20, "{}", durs.len());
    // A duration that cannot be negated (a component at i64::MIN) fails `t - d` with
    // Neo4j's ArithmeticError ("long overflow") too.
    for t in temporals() {
        for d in &durs {
            let vd = Value::Duration(*d);
            check(&format!("{t:?} + {d:?}"), add(&t, &vd), &[Status::ArithmeticError]);
            check(&format!("{t:?} - {d:?}"), sub(&t, &vd), &[Status::ArithmeticError]);
        }
    }
}
