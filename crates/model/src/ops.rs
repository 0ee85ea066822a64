//! Cypher value semantics: equality (three-valued), comparison, the global sort order, grouping
//! equivalence and arithmetic.
//!
//! These are pure functions on [`Value`]. Entity references and materialized entities are
//! compared by id only, so a `Value::Node` and a `Value::NodeData` of the same node are equal.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result, Status};
use crate::temporal::{Duration, Point};
use crate::temporal_ops;
use crate::value::{NodeId, RelId, Value};

// ---------------------------------------------------------------------------------------------
// Equality
// ---------------------------------------------------------------------------------------------

/// Cypher `=`: `None` is null. Numbers compare across Int/Float; NaN equals nothing; lists and
/// maps compare elementwise where any definite difference wins over a null.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    use Value::*;
    match (a, b) {
        (Null, _) | (_, Null) => None,
        (Bool(x), Bool(y)) => Some(x == y),
        (Int(x), Int(y)) => Some(x == y),
        (Float(x), Float(y)) => Some(x == y),
        (Int(i), Float(f)) | (Float(f), Int(i)) => {
            Some(cmp_int_float(*i, *f) == Some(Ordering::Equal))
        }
        (String(x), String(y)) => Some(x == y),
        (Bytes(x), Bytes(y)) => Some(x == y),
        (List(x), List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            all_equal(x.iter().zip(y.iter()))
        }
        (Map(x), Map(y)) => {
            if x.len() != y.len() || x.keys().zip(y.keys()).any(|(k1, k2)| k1 != k2) {
                return Some(false);
            }
            all_equal(x.values().zip(y.values()))
        }
        (Date(x), Date(y)) => Some(x == y),
        (LocalTime(x), LocalTime(y)) => Some(x == y),
        (Time(x), Time(y)) => Some(x == y),
        (LocalDateTime(x), LocalDateTime(y)) => Some(x == y),
        (DateTime(x), DateTime(y)) => Some(x == y),
        (Duration(x), Duration(y)) => Some(x == y),
        (Point(x), Point(y)) => Some(point_eq(x, y)),
        _ => {
            if let (Some(x), Some(y)) = (node_id(a), node_id(b)) {
                return Some(x == y);
            }
            if let (Some(x), Some(y)) = (rel_id(a), rel_id(b)) {
                return Some(x == y);
            }
            if let (Some(x), Some(y)) = (path_ids(a), path_ids(b)) {
                return Some(x == y);
            }
            Some(false)
        }
    }
}

/// Combines pairwise equalities: any `false` wins, else any null gives null, else true.
fn all_equal<'a>(pairs: impl Iterator<Item = (&'a Value, &'a Value)>) -> Option<bool> {
    let mut saw_null = false;
    for (x, y) in pairs {
        match equals(x, y) {
            Some(false) => return Some(false),
            None => saw_null = true,
            Some(true) => {}
        }
    }
    if saw_null {
        None
    } else {
        Some(true)
    }
}

fn point_eq(x: &Point, y: &Point) -> bool {
    x.srid == y.srid && x.x == y.x && x.y == y.y && x.z == y.z
}

/// The node id of a node reference or materialized node.
pub fn node_id(v: &Value) -> Option<NodeId> {
    match v {
        Value::Node(id) => Some(*id),
        Value::NodeData(n) => Some(n.id),
        _ => None,
    }
}

/// The relationship id of a relationship reference or materialized relationship.
pub fn rel_id(v: &Value) -> Option<RelId> {
    match v {
        Value::Relationship(id) => Some(*id),
        Value::RelData(r) => Some(r.id),
        _ => None,
    }
}

/// The node and relationship ids of a path, in traversal order.
pub fn path_ids(v: &Value) -> Option<(Vec<NodeId>, Vec<RelId>)> {
    match v {
        Value::Path(p) => Some((p.nodes.clone(), p.rels.clone())),
        Value::PathData(p) => {
            Some((p.nodes.iter().map(|n| n.id).collect(), p.rels.iter().map(|r| r.id).collect()))
        }
        _ => None,
    }
}

/// Exact comparison of an integer with a float (no precision loss for large integers).
/// `None` when the float is NaN.
pub fn cmp_int_float(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // 2^63 as f64; every float at or above it exceeds every i64.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_63 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    // In range, so the cast is exact.
    let ti = t as i64;
    match i.cmp(&ti) {
        Ordering::Equal => 0.0f64.partial_cmp(&(f - t)),
        o => Some(o),
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

/// The comparison operators `<`, `<=`, `>`, `>=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
}

/// Cypher `<`/`<=`/`>`/`>=`: null when either side is null or the values are incomparable,
/// `false` when a NaN is involved (as Neo4j does), else the comparison.
pub fn compare_op(op: CmpOp, a: &Value, b: &Value) -> Option<bool> {
    if is_nan(a) || is_nan(b) {
        return if is_number(a) && is_number(b) { Some(false) } else { None };
    }
    let o = compare(a, b)?;
    Some(match op {
        CmpOp::Lt => o == Ordering::Less,
        CmpOp::Le => o != Ordering::Greater,
        CmpOp::Gt => o == Ordering::Greater,
        CmpOp::Ge => o != Ordering::Less,
    })
}

fn is_nan(v: &Value) -> bool {
    matches!(v, Value::Float(f) if f.is_nan())
}

fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Float(_))
}

/// Comparability ordering for `<, <=, >, >=`. `None` when null, NaN or incomparable (different
/// types other than Int/Float, maps, entities, durations, points). Lists compare
/// lexicographically; an incomparable element pair makes the whole comparison null.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Float(x), Float(y)) => x.partial_cmp(y),
        (Int(i), Float(f)) => cmp_int_float(*i, *f),
        (Float(f), Int(i)) => cmp_int_float(*i, *f).map(Ordering::reverse),
        (String(x), String(y)) => Some(x.as_ref().cmp(y.as_ref())),
        (Bool(x), Bool(y)) => Some(x.cmp(y)),
        (Date(x), Date(y)) => Some(x.cmp(y)),
        (LocalTime(x), LocalTime(y)) => Some(x.cmp(y)),
        (LocalDateTime(x), LocalDateTime(y)) => Some(x.cmp(y)),
        (Time(x), Time(y)) => {
            Some(temporal_ops::time_utc_nanos(x).cmp(&temporal_ops::time_utc_nanos(y)))
        }
        (DateTime(x), DateTime(y)) => Some(x.utc().cmp(&y.utc())),
        (List(x), List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                match compare(p, q)? {
                    Ordering::Equal => {}
                    o => return Some(o),
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Global sort order (ORDER BY)
// ---------------------------------------------------------------------------------------------

/// Rank of a value's type in the openCypher global sort order (ascending).
fn order_rank(v: &Value) -> u8 {
    use Value::*;
    match v {
        Map(_) => 0,
        Node(_) | NodeData(_) => 1,
        Relationship(_) | RelData(_) => 2,
        List(_) => 3,
        Path(_) | PathData(_) => 4,
        Point(_) => 5,
        DateTime(_) => 6,
        LocalDateTime(_) => 7,
        Date(_) => 8,
        Time(_) => 9,
        LocalTime(_) => 10,
        Duration(_) => 11,
        String(_) => 12,
        Bool(_) => 13,
        Int(_) | Float(_) => 14,
        Bytes(_) => 15,
        Null => 16,
    }
}

/// Total order for ORDER BY, following openCypher's global sort order: MAP < NODE <
/// RELATIONSHIP < LIST < PATH < POINT < DATETIME < LOCALDATETIME < DATE < TIME < LOCALTIME <
/// DURATION < STRING < BOOLEAN < NUMBER < NULL. NaN sorts after all other numbers; Int and Float
/// compare numerically (equal values are `Equal`).
pub fn order(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    let (ra, rb) = (order_rank(a), order_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Map(x), Map(y)) => {
            for ((k1, v1), (k2, v2)) in x.iter().zip(y.iter()) {
                let o = k1.cmp(k2).then_with(|| order(v1, v2));
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (List(x), List(y)) => order_lists(x, y),
        (Int(x), Int(y)) => x.cmp(y),
        (Float(x), Float(y)) => order_floats(*x, *y),
        (Int(i), Float(f)) => cmp_int_float(*i, *f).unwrap_or(Ordering::Less),
        (Float(f), Int(i)) => {
            cmp_int_float(*i, *f).map(Ordering::reverse).unwrap_or(Ordering::Greater)
        }
        (String(x), String(y)) => x.as_ref().cmp(y.as_ref()),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (LocalTime(x), LocalTime(y)) => x.cmp(y),
        (LocalDateTime(x), LocalDateTime(y)) => x.cmp(y),
        (Time(x), Time(y)) => temporal_ops::time_utc_nanos(x)
            .cmp(&temporal_ops::time_utc_nanos(y))
            .then(x.offset_seconds.cmp(&y.offset_seconds)),
        (DateTime(x), DateTime(y)) => x
            .utc()
            .cmp(&y.utc())
            .then(x.offset_seconds.cmp(&y.offset_seconds))
            .then_with(|| x.zone.cmp(&y.zone)),
        (Duration(x), Duration(y)) => order_durations(x, y),
        (Point(x), Point(y)) => x
            .srid
            .cmp(&y.srid)
            .then(order_floats(x.x, y.x))
            .then(order_floats(x.y, y.y))
            .then(order_floats(x.z.unwrap_or(0.0), y.z.unwrap_or(0.0))),
        _ => {
            if let (Some(x), Some(y)) = (node_id(a), node_id(b)) {
                return x.cmp(&y);
            }
            if let (Some(x), Some(y)) = (rel_id(a), rel_id(b)) {
                return x.cmp(&y);
            }
            if let (Some(x), Some(y)) = (path_ids(a), path_ids(b)) {
                return x.cmp(&y);
            }
            Ordering::Equal
        }
    }
}

fn order_lists(x: &[Value], y: &[Value]) -> Ordering {
    for (p, q) in x.iter().zip(y.iter()) {
        let o = order(p, q);
        if o != Ordering::Equal {
            return o;
        }
    }
    x.len().cmp(&y.len())
}

/// Float order with NaN after every number (and NaN equal to NaN).
fn order_floats(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// Durations order by their approximate length (months at the average month length), then by
/// components, so the order is total and deterministic.
fn order_durations(x: &Duration, y: &Duration) -> Ordering {
    fn approx(d: &Duration) -> i128 {
        (i128::from(d.months) * 2_629_746 + i128::from(d.days) * 86_400 + i128::from(d.seconds))
            * 1_000_000_000
            + i128::from(d.nanos)
    }
    approx(x)
        .cmp(&approx(y))
        .then(x.months.cmp(&y.months))
        .then(x.days.cmp(&y.days))
        .then(x.seconds.cmp(&y.seconds))
        .then(x.nanos.cmp(&y.nanos))
}

// ---------------------------------------------------------------------------------------------
// Grouping equivalence
// ---------------------------------------------------------------------------------------------

/// A hashable key under which values are equivalent for grouping and DISTINCT: null equals null,
/// `1` equals `1.0`, NaN equals NaN, lists and maps structurally, entities by id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupKey {
    Null,
    Bool(bool),
    Int(i64),
    /// A float that is not an integral value within i64 range; bits of the canonical NaN for NaN.
    Float(u64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Vec<GroupKey>),
    Map(Vec<(crate::propmap::Key, GroupKey)>),
    Node(u64),
    Rel(u64),
    Path(Vec<u64>, Vec<u64>),
    Date(crate::temporal::Date),
    LocalTime(crate::temporal::LocalTime),
    /// Time of day (nanos), offset.
    Time(i64, i32),
    LocalDateTime(crate::temporal::LocalDateTime),
    /// Wall clock, offset, zone.
    DateTime(chrono::NaiveDateTime, i32, Option<Arc<str>>),
    Duration(i64, i64, i64, i32),
    Point(u32, u64, u64, Option<u64>),
}

/// The grouping key of a value (see [`GroupKey`]).
pub fn group_key(v: &Value) -> GroupKey {
    use Value::*;
    match v {
        Null => GroupKey::Null,
        Bool(b) => GroupKey::Bool(*b),
        Int(i) => GroupKey::Int(*i),
        Float(f) => float_key(*f),
        String(s) => GroupKey::String(s.clone()),
        Bytes(b) => GroupKey::Bytes(b.clone()),
        List(l) => GroupKey::List(l.iter().map(group_key).collect()),
        Map(m) => GroupKey::Map(m.iter().map(|(k, v)| (k.clone(), group_key(v))).collect()),
        Node(id) => GroupKey::Node(id.0),
        NodeData(n) => GroupKey::Node(n.id.0),
        Relationship(id) => GroupKey::Rel(id.0),
        RelData(r) => GroupKey::Rel(r.id.0),
        Path(_) | PathData(_) => {
            let (n, r) = path_ids(v).unwrap_or_default();
            GroupKey::Path(n.iter().map(|x| x.0).collect(), r.iter().map(|x| x.0).collect())
        }
        Date(d) => GroupKey::Date(*d),
        LocalTime(t) => GroupKey::LocalTime(*t),
        Time(t) => GroupKey::Time(temporal_ops::nanos_of_day(&t.time), t.offset_seconds),
        LocalDateTime(t) => GroupKey::LocalDateTime(*t),
        DateTime(t) => GroupKey::DateTime(t.local, t.offset_seconds, t.zone.clone()),
        Duration(d) => GroupKey::Duration(d.months, d.days, d.seconds, d.nanos),
        Point(p) => GroupKey::Point(
            p.srid,
            canon_float_bits(p.x),
            canon_float_bits(p.y),
            p.z.map(canon_float_bits),
        ),
    }
}

fn canon_float_bits(f: f64) -> u64 {
    if f.is_nan() {
        f64::NAN.to_bits()
    } else if f == 0.0 {
        0.0f64.to_bits()
    } else {
        f.to_bits()
    }
}

fn float_key(f: f64) -> GroupKey {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_finite() && f.fract() == 0.0 && (-TWO_63..TWO_63).contains(&f) {
        GroupKey::Int(f as i64)
    } else {
        GroupKey::Float(canon_float_bits(f))
    }
}

// ---------------------------------------------------------------------------------------------
// Arithmetic
// ---------------------------------------------------------------------------------------------

fn overflow() -> Error {
    Error::new(Status::ArithmeticError, "long overflow")
}

fn div_by_zero() -> Error {
    Error::new(Status::ArithmeticError, "/ by zero")
}

fn type_mismatch(op: &str, a: &Value, b: &Value) -> Error {
    Error::type_error(format!("Cannot {op} `{}` and `{}`", a.type_name(), b.type_name()))
        .with_detail("InvalidArgumentType")
}

/// `a + b`: numbers, string concatenation (strings with strings or numbers), list concatenation
/// and append/prepend, temporal + duration, duration + duration. Null in, null out.
pub fn add(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x.checked_add(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 + y),
        (Float(x), Int(y)) => Float(x + *y as f64),
        (Float(x), Float(y)) => Float(x + y),
        (String(x), String(y)) => Value::from(format!("{x}{y}")),
        (String(x), Int(_) | Float(_)) => {
            Value::from(format!("{x}{}", crate::format::to_string_value(b).unwrap_or_default()))
        }
        (Int(_) | Float(_), String(y)) => {
            Value::from(format!("{}{y}", crate::format::to_string_value(a).unwrap_or_default()))
        }
        (List(x), List(y)) => {
            let mut out = x.clone();
            out.extend(y.iter().cloned());
            List(out)
        }
        (List(x), _) => {
            let mut out = x.clone();
            out.push(b.clone());
            List(out)
        }
        (_, List(y)) => {
            let mut out = Vec::with_capacity(y.len() + 1);
            out.push(a.clone());
            out.extend(y.iter().cloned());
            List(out)
        }
        (Duration(x), Duration(y)) => Duration(temporal_ops::duration_add(x, y)?),
        (Duration(d), t) | (t, Duration(d)) if temporal_ops::is_temporal_instant(t) => {
            temporal_ops::add_duration(t, d)?
        }
        _ => return Err(type_mismatch("add", a, b)),
    })
}

/// `a - b`: numbers, temporal - duration, duration - duration.
pub fn sub(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x.checked_sub(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 - y),
        (Float(x), Int(y)) => Float(x - *y as f64),
        (Float(x), Float(y)) => Float(x - y),
        (Duration(x), Duration(y)) => Duration(temporal_ops::duration_sub(x, y)?),
        (t, Duration(d)) if temporal_ops::is_temporal_instant(t) => {
            temporal_ops::add_duration(t, &temporal_ops::duration_neg(d)?)?
        }
        _ => return Err(type_mismatch("subtract", a, b)),
    })
}

/// `a * b`: numbers, duration * number.
pub fn mul(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(x), Int(y)) => Int(x.checked_mul(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 * y),
        (Float(x), Int(y)) => Float(x * *y as f64),
        (Float(x), Float(y)) => Float(x * y),
        (Duration(d), Int(n)) | (Int(n), Duration(d)) => {
            Duration(temporal_ops::duration_mul_int(d, *n)?)
        }
        (Duration(d), Float(f)) | (Float(f), Duration(d)) => {
            Duration(temporal_ops::duration_mul_float(d, *f)?)
        }
        _ => return Err(type_mismatch("multiply", a, b)),
    })
}

/// `a / b`: integer division truncates and fails on zero; float division follows IEEE;
/// duration / number.
pub fn div(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(_), Int(0)) => return Err(div_by_zero()),
        (Int(x), Int(y)) => Int(x.checked_div(*y).ok_or_else(overflow)?),
        (Int(x), Float(y)) => Float(*x as f64 / y),
        (Float(x), Int(y)) => Float(x / *y as f64),
        (Float(x), Float(y)) => Float(x / y),
        (Duration(d), Int(n)) => {
            if *n == 0 {
                return Err(div_by_zero());
            }
            Duration(temporal_ops::duration_div_int(d, *n)?)
        }
        (Duration(d), Float(f)) => Duration(temporal_ops::duration_div_float(d, *f)?),
        _ => return Err(type_mismatch("divide", a, b)),
    })
}

/// `a % b`: remainder with the sign of the dividend (as Java); integer modulo by zero fails.
pub fn modulo(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    Ok(match (a, b) {
        (Null, _) | (_, Null) => Null,
        (Int(_), Int(0)) => return Err(div_by_zero()),
        // i64::MIN % -1 is mathematically 0; checked_rem reports it as overflow.
        (Int(x), Int(y)) => Int(x.checked_rem(*y).unwrap_or(0)),
        (Int(x), Float(y)) => Float(*x as f64 % y),
        (Float(x), Int(y)) => Float(x % *y as f64),
        (Float(x), Float(y)) => Float(x % y),
        _ => return Err(type_mismatch("calculate the modulo of", a, b)),
    })
}

/// `a ^ b`: always a float.
pub fn pow(a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    let x = match a {
        Null => return Ok(Null),
        Int(i) => *i as f64,
        Float(f) => *f,
        _ => return Err(type_mismatch("raise", a, b)),
    };
    let y = match b {
        Null => return Ok(Null),
        Int(i) => *i as f64,
        Float(f) => *f,
        _ => return Err(type_mismatch("raise", a, b)),
    };
    Ok(Float(x.powf(y)))
}

/// Unary `-`.
pub fn negate(a: &Value) -> Result<Value> {
    use Value::*;
    Ok(match a {
        Null => Null,
        Int(i) => Int(i.checked_neg().ok_or_else(overflow)?),
        Float(f) => Float(-f),
        Duration(d) => Duration(temporal_ops::duration_neg(d)?),
        _ => {
            return Err(Error::type_error(format!("Cannot negate `{}`", a.type_name()))
                .with_detail("InvalidArgumentType"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::PropertyMap;

    fn l(v: Vec<Value>) -> Value {
        Value::List(v)
    }
    fn m(kv: &[(&str, Value)]) -> Value {
        Value::Map(kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<PropertyMap>())
    }
    const N: Value = Value::Null;

    #[test]
    fn equality_table() {
        let i = Value::Int;
        let f = Value::Float;
        let s = Value::str;
        let cases: Vec<(Value, Value, Option<bool>)> = vec![
            (i(1), i(1), Some(true)),
            (i(1), f(1.0), Some(true)),
            (f(1.5), i(1), Some(false)),
            (f(f64::NAN), f(f64::NAN), Some(false)),
            (f(f64::NAN), i(1), Some(false)),
            (N, N, None),
            (i(1), N, None),
            (s("1"), i(1), Some(false)),
            (s("a"), s("a"), Some(true)),
            (l(vec![i(1), i(2)]), l(vec![i(1)]), Some(false)),
            (l(vec![N]), l(vec![i(1)]), None),
            (l(vec![s("a")]), l(vec![i(1)]), Some(false)),
            (l(vec![l(vec![i(1)])]), l(vec![l(vec![i(1)]), l(vec![N])]), Some(false)),
            (l(vec![l(vec![i(1)]), l(vec![i(2)])]), l(vec![l(vec![i(1)]), l(vec![N])]), None),
            (
                l(vec![l(vec![i(1)]), l(vec![i(2), i(3)])]),
                l(vec![l(vec![i(1)]), l(vec![N])]),
                Some(false),
            ),
            (m(&[("k", i(1))]), m(&[("k", i(1))]), Some(true)),
            (m(&[]), m(&[("k", N)]), Some(false)),
            (m(&[("k", N)]), m(&[("k", N), ("l", N)]), Some(false)),
            (m(&[("k", i(1))]), m(&[("k", N)]), None),
            (m(&[("k", i(1)), ("l", N)]), m(&[("k", N), ("l", i(1))]), None),
            (Value::Node(NodeId(1)), Value::Node(NodeId(1)), Some(true)),
            (Value::Node(NodeId(1)), Value::Relationship(RelId(1)), Some(false)),
            (i(i64::MAX), f(9.223372036854776e18), Some(false)),
        ];
        for (a, b, want) in cases {
            assert_eq!(equals(&a, &b), want, "{a:?} = {b:?}");
            assert_eq!(equals(&b, &a), want, "{b:?} = {a:?}");
        }
    }

    #[test]
    fn comparison_table() {
        let i = Value::Int;
        let f = Value::Float;
        let s = Value::str;
        use CmpOp::*;
        let cases: Vec<(CmpOp, Value, Value, Option<bool>)> = vec![
            (Lt, i(1), f(2.5), Some(true)),
            (Ge, f(2.5), i(1), Some(true)),
            (Lt, s("1"), i(1), None),
            (Lt, s("a"), s("b"), Some(true)),
            (Lt, Value::Bool(false), Value::Bool(true), Some(true)),
            (Lt, f(f64::NAN), i(1), Some(false)),
            (Ge, f(f64::NAN), f(1.0), Some(false)),
            (Ge, l(vec![i(1), i(0)]), l(vec![i(1)]), Some(true)),
            (Ge, l(vec![i(1), N]), l(vec![i(1)]), Some(true)),
            (Ge, l(vec![i(1), i(2)]), l(vec![i(1), N]), None),
            (Ge, l(vec![i(1), s("a")]), l(vec![i(1), N]), None),
            (Lt, m(&[]), m(&[]), None),
            (Lt, Value::Node(NodeId(1)), Value::Node(NodeId(2)), None),
            (Lt, N, i(1), None),
        ];
        for (op, a, b, want) in cases {
            assert_eq!(compare_op(op, &a, &b), want, "{a:?} {op:?} {b:?}");
        }
    }

    #[test]
    fn global_order() {
        use std::sync::Arc;
        let path = Value::Path(Arc::new(crate::value::PathRef {
            nodes: vec![NodeId(0), NodeId(1)],
            rels: vec![RelId(0)],
        }));
        let sorted = vec![
            m(&[("a", Value::str("map"))]),
            Value::Node(NodeId(0)),
            Value::Relationship(RelId(0)),
            l(vec![Value::str("list")]),
            path,
            Value::str("text"),
            Value::Bool(false),
            Value::Int(1),
            Value::Float(1.5),
            Value::Float(f64::NAN),
            N,
        ];
        let mut shuffled = sorted.clone();
        shuffled.reverse();
        shuffled.swap(2, 7);
        shuffled.sort_by(order);
        let got: Vec<String> = shuffled.iter().map(|v| format!("{v:?}")).collect();
        let want: Vec<String> = sorted.iter().map(|v| format!("{v:?}")).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn grouping_keys() {
        assert_eq!(group_key(&Value::Int(1)), group_key(&Value::Float(1.0)));
        assert_eq!(group_key(&Value::Float(f64::NAN)), group_key(&Value::Float(-f64::NAN)));
        assert_eq!(group_key(&Value::Float(0.0)), group_key(&Value::Float(-0.0)));
        assert_ne!(group_key(&Value::Int(1)), group_key(&Value::Float(1.5)));
        assert_eq!(group_key(&N), group_key(&N));
        assert_eq!(
            group_key(&l(vec![Value::Int(1), N])),
            group_key(&l(vec![Value::Float(1.0), N]))
        );
        assert_ne!(group_key(&Value::str("1")), group_key(&Value::Int(1)));
    }

    #[test]
    fn arithmetic_table() {
        let i = Value::Int;
        let f = Value::Float;
        let s = Value::str;
        type Op = fn(&Value, &Value) -> Result<Value>;
        let cases: Vec<(Op, Value, Value, std::result::Result<Value, Status>)> = vec![
            (add, i(1), i(2), Ok(i(3))),
            (add, i(1), f(0.5), Ok(f(1.5))),
            (add, s("a"), s("b"), Ok(s("ab"))),
            (add, s("a"), i(1), Ok(s("a1"))),
            (add, f(1.0), s("a"), Ok(s("1.0a"))),
            (add, l(vec![i(1)]), l(vec![i(2)]), Ok(l(vec![i(1), i(2)]))),
            (add, l(vec![i(1)]), i(2), Ok(l(vec![i(1), i(2)]))),
            (add, i(0), l(vec![i(1)]), Ok(l(vec![i(0), i(1)]))),
            (add, i(i64::MAX), i(1), Err(Status::ArithmeticError)),
            (add, i(1), N, Ok(N)),
            (add, Value::Bool(true), i(1), Err(Status::TypeError)),
            (sub, i(1), i(3), Ok(i(-2))),
            (sub, i(i64::MIN), i(1), Err(Status::ArithmeticError)),
            (mul, i(3), i(4), Ok(i(12))),
            (mul, i(i64::MAX), i(2), Err(Status::ArithmeticError)),
            (div, i(7), i(2), Ok(i(3))),
            (div, i(-7), i(2), Ok(i(-3))),
            (div, i(1), i(0), Err(Status::ArithmeticError)),
            (div, i(i64::MIN), i(-1), Err(Status::ArithmeticError)),
            (div, f(1.0), i(0), Ok(f(f64::INFINITY))),
            (modulo, i(-7), i(2), Ok(i(-1))),
            (modulo, i(7), i(0), Err(Status::ArithmeticError)),
            (modulo, f(7.5), i(2), Ok(f(1.5))),
            (pow, i(2), i(3), Ok(f(8.0))),
            (pow, s("a"), i(3), Err(Status::TypeError)),
        ];
        for (op, a, b, want) in cases {
            let got = op(&a, &b);
            match (&got, &want) {
                (Ok(g), Ok(w)) => {
                    assert!(
                        g.is_null() && w.is_null() || equals(g, w) == Some(true),
                        "{a:?} op {b:?} = {g:?}, want {w:?}"
                    );
                    assert_eq!(g.type_name(), w.type_name());
                }
                (Err(e), Err(st)) => assert_eq!(e.status, *st, "{a:?} op {b:?}"),
                _ => panic!("{a:?} op {b:?} = {got:?}, want {want:?}"),
            }
        }
        assert_eq!(negate(&i(i64::MIN)).err().map(|e| e.status), Some(Status::ArithmeticError));
        assert!(matches!(negate(&f(1.5)), Ok(Value::Float(x)) if x == -1.5));
    }
}
