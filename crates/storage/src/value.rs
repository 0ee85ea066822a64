//! Which values can be stored as properties, the normalized equality key used by indexes and
//! unique constraints, and value formatting for error messages.

use std::sync::Arc;

use arbor_model::{Error, Result, Value};
use chrono::{Datelike, Timelike};

/// Checks that `v` may be stored as a property value: a scalar, temporal or point, or a
/// homogeneous list of those without nulls. `Null` itself is not storable (it means "remove").
pub fn check_storable(v: &Value) -> Result<()> {
    match v {
        Value::List(items) => {
            let mut first: Option<&'static str> = None;
            for item in items {
                if item.is_null() {
                    return Err(Error::type_error(
                        "Collections containing null values can not be stored in properties.",
                    ));
                }
                if matches!(item, Value::List(_)) || !is_scalar(item) {
                    return Err(not_storable(v));
                }
                match first {
                    None => first = Some(item.type_name()),
                    Some(t) if t != item.type_name() => {
                        return Err(Error::type_error(
                            "Collections containing mixed types can not be stored in properties.",
                        ))
                    }
                    Some(_) => {}
                }
            }
            Ok(())
        }
        v if is_scalar(v) => Ok(()),
        v => Err(not_storable(v)),
    }
}

fn not_storable(v: &Value) -> Error {
    Error::type_error(format!(
        "Property values can only be of primitive types or arrays thereof. Encountered: {}.",
        v.type_name()
    ))
}

fn is_scalar(v: &Value) -> bool {
    matches!(
        v,
        Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::String(_)
            | Value::Bytes(_)
            | Value::Date(_)
            | Value::Time(_)
            | Value::LocalTime(_)
            | Value::DateTime(_)
            | Value::LocalDateTime(_)
            | Value::Duration(_)
            | Value::Point(_)
    )
}

/// A hashable key with Cypher equality: `Int(1)` and `Float(1.0)` have the same key, a
/// `DateTime` is keyed by its instant. Values that equal nothing (NaN, null) have no key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum IndexKey {
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Vec<IndexKey>),
    /// Days since the epoch.
    Date(i64),
    LocalTime(u32, u32),
    Time(u32, u32, i32),
    LocalDateTime(i32, u32, u32),
    DateTime(i32, u32, u32),
    Duration(i64, i64, i64, i32),
    Point(u32, u64, u64, Option<u64>),
}

impl IndexKey {
    /// The key's group: keys of one group are mutually comparable in Cypher (`<`, `>`, ...),
    /// keys of different groups never are. Int and Float share the number group.
    pub(crate) fn group(&self) -> u8 {
        match self {
            IndexKey::Bool(_) => 0,
            IndexKey::Int(_) | IndexKey::Float(_) => 1,
            IndexKey::Str(_) => 2,
            IndexKey::Bytes(_) => 3,
            IndexKey::List(_) => 4,
            IndexKey::Date(_) => 5,
            IndexKey::LocalTime(..) => 6,
            IndexKey::Time(..) => 7,
            IndexKey::LocalDateTime(..) => 8,
            IndexKey::DateTime(..) => 9,
            IndexKey::Duration(..) => 10,
            IndexKey::Point(..) => 11,
        }
    }

    /// Whether range scans over this key's group answer Cypher's `<`/`>` exactly: booleans,
    /// numbers, strings and temporals whose key order is their chronological order. (Times with
    /// offsets compare by UTC instant but are keyed by their local value; lists, durations and
    /// points are left to scans.)
    pub(crate) fn rangeable(&self) -> bool {
        matches!(self.group(), 0 | 1 | 2 | 5 | 6 | 8 | 9)
    }

    /// The smallest key of a rangeable group.
    pub(crate) fn group_min(group: u8) -> Option<IndexKey> {
        Some(match group {
            0 => IndexKey::Bool(false),
            1 => IndexKey::Float(f64::NEG_INFINITY.to_bits()),
            2 => IndexKey::Str(Arc::from("")),
            5 => IndexKey::Date(i64::MIN),
            6 => IndexKey::LocalTime(0, 0),
            8 => IndexKey::LocalDateTime(i32::MIN, 0, 0),
            9 => IndexKey::DateTime(i32::MIN, 0, 0),
            _ => return None,
        })
    }
}

/// Keys are ordered by group, then within a group in Cypher's comparison order (numbers
/// numerically across Int and Float, strings by code point, temporals chronologically); groups
/// without a Cypher order (lists, ...) get an arbitrary but total structural order; points
/// order by CRS, then along a Z-order curve (`crate::point_index`), so spatial seeks walk them.
/// Consistent with `Eq` because equal numbers share one normalized key.
impl Ord for IndexKey {
    /// Integers first and inline: the ordered delta index is searched with this per seek (a
    /// relationship load seeks twice per row, most keys integer ids), and the full match as
    /// a call was ~23 instructions per comparison.
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (IndexKey::Int(a), IndexKey::Int(b)) => a.cmp(b),
            _ => self.cmp_any(other),
        }
    }
}

impl IndexKey {
    /// [`Ord::cmp`] of any two keys (see the `Ord` impl).
    #[inline(never)]
    fn cmp_any(&self, other: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        use IndexKey as K;
        match (self, other) {
            (K::Int(a), K::Int(b)) => a.cmp(b),
            (K::Float(a), K::Float(b)) => {
                f64::from_bits(*a).partial_cmp(&f64::from_bits(*b)).unwrap_or(Ordering::Equal)
            }
            (K::Int(i), K::Float(f)) => {
                arbor_model::ops::cmp_int_float(*i, f64::from_bits(*f)).unwrap_or(Ordering::Equal)
            }
            (K::Float(f), K::Int(i)) => arbor_model::ops::cmp_int_float(*i, f64::from_bits(*f))
                .unwrap_or(Ordering::Equal)
                .reverse(),
            (K::Bool(a), K::Bool(b)) => a.cmp(b),
            (K::Str(a), K::Str(b)) => a.cmp(b),
            (K::Bytes(a), K::Bytes(b)) => a.cmp(b),
            (K::List(a), K::List(b)) => a.cmp(b),
            (K::Date(a), K::Date(b)) => a.cmp(b),
            (K::LocalTime(a, b), K::LocalTime(c, d)) => (a, b).cmp(&(c, d)),
            (K::Time(a, b, c), K::Time(d, e, f)) => (a, b, c).cmp(&(d, e, f)),
            (K::LocalDateTime(a, b, c), K::LocalDateTime(d, e, f)) => (a, b, c).cmp(&(d, e, f)),
            (K::DateTime(a, b, c), K::DateTime(d, e, f)) => (a, b, c).cmp(&(d, e, f)),
            (K::Duration(a, b, c, d), K::Duration(e, f, g, h)) => (a, b, c, d).cmp(&(e, f, g, h)),
            (K::Point(a, b, c, d), K::Point(e, f, g, h)) => {
                crate::zorder::cmp_points((*a, *b, *c, *d), (*e, *f, *g, *h))
            }
            _ => self.group().cmp(&other.group()),
        }
    }
}

impl PartialOrd for IndexKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A range of index keys inside one rangeable group, as a seek asks for it: `lo`/`hi` bounds
/// (`None` = open to that end of the group) or a string prefix. With a non-empty `eq` it is a
/// range over composite keys: the first `eq.len()` values equal `eq` and the next one lies in
/// the range (composite keys are lists ordered element by element, so these are contiguous);
/// `Some(vec![])` is a range on a composite key's first value.
#[derive(Clone, Debug)]
pub(crate) struct KeyRange {
    pub group: u8,
    pub lo: Option<(IndexKey, bool)>,
    pub hi: Option<(IndexKey, bool)>,
    pub prefix: Option<Arc<str>>,
    pub eq: Option<Vec<IndexKey>>,
}

impl KeyRange {
    /// `lo`/`hi` as values (`bool` = inclusive). `None` if an index cannot answer the range
    /// exactly (unrangeable types, NaN, bounds of different groups: the caller scans); an empty
    /// range when no stored value can satisfy it.
    pub fn between(lo: Option<(&Value, bool)>, hi: Option<(&Value, bool)>) -> Option<KeyRange> {
        let conv = |b: Option<(&Value, bool)>| -> Option<Option<(IndexKey, bool)>> {
            match b {
                None => Some(None),
                Some((v, incl)) => {
                    let k = index_key(v)?;
                    if !k.rangeable() {
                        return None;
                    }
                    Some(Some((k, incl)))
                }
            }
        };
        let lo = conv(lo)?;
        let hi = conv(hi)?;
        let group = match (&lo, &hi) {
            (Some((a, _)), Some((b, _))) if a.group() != b.group() => return None,
            (Some((a, _)), _) => a.group(),
            (_, Some((b, _))) => b.group(),
            (None, None) => return None,
        };
        Some(KeyRange { group, lo, hi, prefix: None, eq: None })
    }

    /// Strings starting with `prefix`.
    pub fn prefix(prefix: &str) -> KeyRange {
        let p: Arc<str> = Arc::from(prefix);
        KeyRange {
            group: 2,
            lo: Some((IndexKey::Str(p.clone()), true)),
            hi: None,
            prefix: Some(p),
            eq: None,
        }
    }

    /// This range on the element after `eq` of composite keys (see the type's doc).
    pub fn after(mut self, eq: Vec<IndexKey>) -> KeyRange {
        self.eq = Some(eq);
        self
    }

    /// The smallest key the range may contain.
    pub fn start(&self) -> IndexKey {
        let first = match &self.lo {
            Some((k, _)) => k.clone(),
            None => IndexKey::group_min(self.group).unwrap_or(IndexKey::Bool(false)),
        };
        let Some(eq) = &self.eq else { return first };
        // A list sorts after every proper prefix of it.
        let mut v = eq.clone();
        v.push(first);
        IndexKey::List(v)
    }

    /// For a composite range: the element of `k` the range applies to, `None` when `k` does
    /// not start with `eq` (past the end, since iteration starts at `start`).
    fn element<'k>(&self, k: &'k IndexKey, eq: &[IndexKey]) -> Option<&'k IndexKey> {
        match k {
            IndexKey::List(v) if v.len() > eq.len() && v[..eq.len()] == *eq => v.get(eq.len()),
            _ => None,
        }
    }

    /// Whether `k` lies past the end of the range (keys iterated in order from `start`).
    pub fn past_end(&self, k: &IndexKey) -> bool {
        match &self.eq {
            None => self.past_end_of(k),
            Some(eq) => self.element(k, eq).is_none_or(|e| self.past_end_of(e)),
        }
    }

    pub fn contains(&self, k: &IndexKey) -> bool {
        match &self.eq {
            None => self.contains_value(k),
            Some(eq) => self.element(k, eq).is_some_and(|e| self.contains_value(e)),
        }
    }

    fn past_end_of(&self, k: &IndexKey) -> bool {
        if k.group() != self.group {
            return true;
        }
        if let (Some(p), IndexKey::Str(s)) = (&self.prefix, k) {
            if !s.starts_with(&**p) {
                return true;
            }
        }
        match &self.hi {
            Some((h, true)) => k > h,
            Some((h, false)) => k >= h,
            None => false,
        }
    }

    fn contains_value(&self, k: &IndexKey) -> bool {
        let above_lo = match &self.lo {
            Some((l, true)) => k >= l,
            Some((l, false)) => k > l,
            None => true,
        };
        above_lo && !self.past_end_of(k)
    }
}

fn float_bits(f: f64) -> u64 {
    // -0.0 == 0.0 in Cypher.
    if f == 0.0 {
        0
    } else {
        f.to_bits()
    }
}

/// The equality key of a value, `None` if it can never equal anything stored.
pub(crate) fn index_key(v: &Value) -> Option<IndexKey> {
    Some(match v {
        Value::Bool(b) => IndexKey::Bool(*b),
        Value::Int(i) => IndexKey::Int(*i),
        Value::Float(f) => {
            if f.is_nan() {
                return None;
            }
            // Integral floats in i64 range compare equal to the integer.
            if f.fract() == 0.0 && *f >= -9.223_372_036_854_776e18 && *f < 9.223_372_036_854_776e18
            {
                IndexKey::Int(*f as i64)
            } else {
                IndexKey::Float(float_bits(*f))
            }
        }
        Value::String(s) => IndexKey::Str(s.clone()),
        Value::Bytes(b) => IndexKey::Bytes(b.clone()),
        Value::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for i in items {
                out.push(index_key(i)?);
            }
            IndexKey::List(out)
        }
        Value::Date(d) => IndexKey::Date(d.epoch_day()),
        Value::LocalTime(t) => {
            IndexKey::LocalTime(t.0.num_seconds_from_midnight(), t.0.nanosecond())
        }
        Value::Time(t) => IndexKey::Time(
            t.time.num_seconds_from_midnight(),
            t.time.nanosecond(),
            t.offset_seconds,
        ),
        Value::LocalDateTime(t) => IndexKey::LocalDateTime(
            t.0.date().num_days_from_ce(),
            t.0.time().num_seconds_from_midnight(),
            t.0.time().nanosecond(),
        ),
        Value::DateTime(t) => {
            let u = t.utc();
            IndexKey::DateTime(
                u.date().num_days_from_ce(),
                u.time().num_seconds_from_midnight(),
                u.time().nanosecond(),
            )
        }
        Value::Duration(d) => IndexKey::Duration(d.months, d.days, d.seconds, d.nanos),
        Value::Point(p) => {
            if p.x.is_nan() || p.y.is_nan() || p.z.is_some_and(f64::is_nan) {
                return None;
            }
            IndexKey::Point(p.srid, float_bits(p.x), float_bits(p.y), p.z.map(float_bits))
        }
        _ => return None,
    })
}

/// The index key of a node's values for the keys of a target: the value's key for one
/// property, the list of the values' keys for a composite (`None` if any is missing).
pub(crate) fn target_key<V: std::borrow::Borrow<Value>>(
    keys: &[u32],
    mut prop: impl FnMut(u32) -> Option<V>,
) -> Option<IndexKey> {
    match keys {
        [k] => index_key(prop(*k)?.borrow()),
        _ => {
            let mut out = Vec::with_capacity(keys.len());
            for k in keys {
                out.push(index_key(prop(*k)?.borrow())?);
            }
            Some(IndexKey::List(out))
        }
    }
}

/// Cypher equality of two stored values (`false` when either has no key).
#[cfg(test)]
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (index_key(a), index_key(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Formats a value the way Neo4j's constraint messages do (`'Alice'`, `42`, `[1, 2]`).
pub(crate) fn fmt_value(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::String(s) => format!("'{s}'"),
        Value::List(items) => {
            let parts: Vec<String> = items.iter().map(fmt_value).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Date(_) => arbor_model::to_string_value(v).unwrap_or_default(),
        Value::LocalTime(t) => t.0.to_string(),
        Value::LocalDateTime(t) => t.0.format("%Y-%m-%dT%H:%M:%S%.f").to_string(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storable_values() {
        assert!(check_storable(&Value::Int(1)).is_ok());
        assert!(check_storable(&Value::List(vec![Value::Int(1), Value::Int(2)])).is_ok());
        assert!(check_storable(&Value::List(vec![])).is_ok());
        let e = check_storable(&Value::Map(arbor_model::PropertyMap::new())).unwrap_err();
        assert_eq!(e.status, arbor_model::Status::TypeError);
        assert!(e.message.contains("primitive types or arrays thereof"));
        assert!(check_storable(&Value::List(vec![Value::Int(1), Value::Null])).is_err());
        assert!(check_storable(&Value::List(vec![Value::Int(1), Value::str("a")])).is_err());
        assert!(check_storable(&Value::List(vec![Value::List(vec![])])).is_err());
        assert!(check_storable(&Value::Node(arbor_model::NodeId(1))).is_err());
    }

    #[test]
    fn numeric_keys_unify() {
        assert_eq!(index_key(&Value::Int(5)), index_key(&Value::Float(5.0)));
        assert_ne!(index_key(&Value::Int(5)), index_key(&Value::Float(5.5)));
        assert_eq!(index_key(&Value::Float(-0.0)), index_key(&Value::Int(0)));
        assert_eq!(index_key(&Value::Float(f64::NAN)), None);
        assert!(values_equal(
            &Value::List(vec![Value::Int(1)]),
            &Value::List(vec![Value::Float(1.0)])
        ));
        assert_ne!(index_key(&Value::Float(1e300)), index_key(&Value::Int(i64::MAX)));
    }
}
