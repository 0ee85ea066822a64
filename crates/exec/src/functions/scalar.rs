//! String, math, list and spatial scalar functions.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use arbor_model::spatial;
use arbor_model::{Error, Result, Status, Value};

use super::{arg, type_err, value_err};

// ---------------------------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------------------------

/// The string argument `i`, `None` for null, TypeError otherwise.
fn str_arg<'a>(func: &str, args: &'a [Value], i: usize) -> Result<Option<&'a str>> {
    match arg(args, i) {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        other => Err(type_err(func, "a String", other)),
    }
}

/// The integer argument `i`, `None` for null, TypeError otherwise.
fn int_arg(func: &str, args: &[Value], i: usize) -> Result<Option<i64>> {
    match arg(args, i) {
        Value::Null => Ok(None),
        Value::Int(n) => Ok(Some(*n)),
        other => Err(type_err(func, "an Integer", other)),
    }
}

pub fn to_upper(args: &[Value]) -> Result<Value> {
    Ok(str_arg("toUpper", args, 0)?.map_or(Value::Null, |s| Value::from(s.to_uppercase())))
}

pub fn to_lower(args: &[Value]) -> Result<Value> {
    Ok(str_arg("toLower", args, 0)?.map_or(Value::Null, |s| Value::from(s.to_lowercase())))
}

pub fn trim(args: &[Value]) -> Result<Value> {
    Ok(str_arg("trim", args, 0)?.map_or(Value::Null, |s| Value::str(s.trim())))
}

/// The optional trim-character argument: `None` means whitespace.
fn trim_chars(func: &str, args: &[Value]) -> Result<Option<Option<Vec<char>>>> {
    if args.len() < 2 {
        return Ok(Some(None));
    }
    Ok(str_arg(func, args, 1)?.map(|s| Some(s.chars().collect())))
}

fn trim_with(func: &str, args: &[Value], start: bool, end: bool) -> Result<Value> {
    let Some(s) = str_arg(func, args, 0)? else { return Ok(Value::Null) };
    let Some(chars) = trim_chars(func, args)? else { return Ok(Value::Null) };
    let matches = |c: char| match &chars {
        None => c.is_whitespace(),
        Some(set) => set.contains(&c),
    };
    let mut out = s;
    if start {
        out = out.trim_start_matches(matches);
    }
    if end {
        out = out.trim_end_matches(matches);
    }
    Ok(Value::str(out))
}

pub fn ltrim(args: &[Value]) -> Result<Value> {
    trim_with("ltrim", args, true, false)
}

pub fn rtrim(args: &[Value]) -> Result<Value> {
    trim_with("rtrim", args, false, true)
}

pub fn btrim(args: &[Value]) -> Result<Value> {
    trim_with("btrim", args, true, true)
}

pub fn replace(args: &[Value]) -> Result<Value> {
    let s = str_arg("replace", args, 0)?;
    let from = str_arg("replace", args, 1)?;
    let to = str_arg("replace", args, 2)?;
    match (s, from, to) {
        (Some(s), Some(from), Some(to)) => Ok(Value::from(s.replace(from, to))),
        _ => Ok(Value::Null),
    }
}

/// Neo4j's error for a negative `substring()` / `left()` position (a database error there).
fn negative_position() -> Error {
    Error::new(Status::ExecutionFailed, "Cannot handle negative start index nor negative length")
}

/// `substring()`'s start and length must fit a Java `int`, as in Neo4j (checked before the sign).
fn int32_arg(what: &str, n: i64) -> Result<i64> {
    if i32::try_from(n).is_err() {
        return Err(Error::new(
            Status::ExecutionFailed,
            format!(
                "Invalid input for {what} value in function 'substring()': {}",
                crate::eval::int32_range_message(n)
            ),
        ));
    }
    Ok(n)
}

pub fn substring(args: &[Value]) -> Result<Value> {
    let s = str_arg("substring", args, 0)?;
    let start = int_arg("substring", args, 1)?;
    let len = if args.len() > 2 { int_arg("substring", args, 2)? } else { Some(i64::MAX) };
    let (Some(s), Some(start), Some(len)) = (s, start, len) else { return Ok(Value::Null) };
    let start = int32_arg("start", start)?;
    let len = if args.len() > 2 { int32_arg("length", len)? } else { len };
    if start < 0 || len < 0 {
        return Err(negative_position());
    }
    let out: String = s.chars().skip(start as usize).take(len as usize).collect();
    Ok(Value::from(out))
}

/// `left(s, n)`: null when either is null; any non-negative length (no `int` limit here).
pub fn left(args: &[Value]) -> Result<Value> {
    let s = str_arg("left", args, 0)?;
    let n = int_arg("left", args, 1)?;
    let (Some(s), Some(n)) = (s, n) else { return Ok(Value::Null) };
    if n < 0 {
        return Err(negative_position());
    }
    Ok(Value::from(s.chars().take(n as usize).collect::<String>()))
}

/// `right(s, n)`: null when either is null; any non-negative length.
pub fn right(args: &[Value]) -> Result<Value> {
    let s = str_arg("right", args, 0)?;
    let n = int_arg("right", args, 1)?;
    let (Some(s), Some(n)) = (s, n) else { return Ok(Value::Null) };
    if n < 0 {
        return Err(Error::new(Status::ExecutionFailed, "negative length"));
    }
    let count = s.chars().count();
    let skip = count.saturating_sub(n as usize);
    Ok(Value::from(s.chars().skip(skip).collect::<String>()))
}

/// `split(s, delimiter)`; the delimiter may be a list of strings (split on any). Empty pieces are
/// kept; an empty delimiter splits into characters.
pub fn split(args: &[Value]) -> Result<Value> {
    let Some(s) = str_arg("split", args, 0)? else { return Ok(Value::Null) };
    let delims: Vec<&str> = match arg(args, 1) {
        Value::Null => return Ok(Value::Null),
        Value::String(d) => vec![d.as_ref()],
        Value::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for it in items {
                match it {
                    Value::String(d) => out.push(d.as_ref()),
                    Value::Null => return Ok(Value::Null),
                    other => return Err(type_err("split", "a String or a List<String>", other)),
                }
            }
            out
        }
        other => return Err(type_err("split", "a String or a List<String>", other)),
    };
    if delims.iter().all(|d| d.is_empty()) {
        return Ok(Value::List(s.chars().map(|c| Value::from(c.to_string())).collect()));
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let bytes = s.as_bytes();
    while i < bytes.len() {
        if !s.is_char_boundary(i) {
            i += 1;
            continue;
        }
        if let Some(d) = delims.iter().find(|d| !d.is_empty() && s[i..].starts_with(**d)) {
            pieces.push(Value::str(&s[start..i]));
            i += d.len();
            start = i;
        } else {
            i += 1;
        }
    }
    pieces.push(Value::str(&s[start..]));
    Ok(Value::List(pieces))
}

pub fn reverse(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::String(s) => Ok(Value::from(s.chars().rev().collect::<String>())),
        Value::List(l) => Ok(Value::List(l.iter().rev().cloned().collect())),
        other => Err(type_err("reverse", "a String or a List", other)),
    }
}

/// `size()` of a string (in characters) or a list.
pub fn size(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::String(s) => Ok(Value::Int(s.chars().count() as i64)),
        Value::List(l) => Ok(Value::Int(l.len() as i64)),
        other => Err(type_err("size", "a String or a List", other)),
    }
}

pub fn char_length(args: &[Value]) -> Result<Value> {
    Ok(str_arg("char_length", args, 0)?
        .map_or(Value::Null, |s| Value::Int(s.chars().count() as i64)))
}

// ---------------------------------------------------------------------------------------------
// Math
// ---------------------------------------------------------------------------------------------

/// The numeric argument as f64, `None` for null.
fn num_arg(func: &str, args: &[Value], i: usize) -> Result<Option<f64>> {
    match arg(args, i) {
        Value::Null => Ok(None),
        Value::Int(n) => Ok(Some(*n as f64)),
        Value::Float(f) => Ok(Some(*f)),
        other => Err(type_err(func, "a number", other)),
    }
}

fn float_fn(func: &str, args: &[Value], f: impl Fn(f64) -> f64) -> Result<Value> {
    Ok(num_arg(func, args, 0)?.map_or(Value::Null, |x| Value::Float(f(x))))
}

pub fn abs(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Int(i) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| Error::new(Status::ArithmeticError, "long overflow")),
        Value::Float(f) => Ok(Value::Float(f.abs())),
        other => Err(type_err("abs", "a number", other)),
    }
}

pub fn ceil(args: &[Value]) -> Result<Value> {
    float_fn("ceil", args, f64::ceil)
}

pub fn floor(args: &[Value]) -> Result<Value> {
    float_fn("floor", args, f64::floor)
}

/// Rounding modes of `round(x, precision, mode)`, as `java.math.RoundingMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RoundMode {
    Up,
    Down,
    Ceiling,
    Floor,
    HalfUp,
    HalfDown,
    HalfEven,
}

/// `round(x)` rounds half towards positive infinity (Java `Math.round`); `round(x, precision
/// [, mode])` rounds the shortest decimal form of `x` (Java `BigDecimal.valueOf`) with the mode,
/// `HALF_UP` by default.
pub fn round(args: &[Value]) -> Result<Value> {
    let Some(x) = num_arg("round", args, 0)? else { return Ok(Value::Null) };
    if args.len() == 1 {
        if !x.is_finite() {
            return Ok(Value::Float(x));
        }
        return Ok(Value::Float((x + 0.5).floor()));
    }
    let Some(precision) = int_arg("round", args, 1)? else { return Ok(Value::Null) };
    let mode = if args.len() > 2 {
        match arg(args, 2) {
            Value::Null => return Ok(Value::Null),
            Value::String(s) => match s.to_ascii_uppercase().as_str() {
                "UP" => RoundMode::Up,
                "DOWN" => RoundMode::Down,
                "CEILING" => RoundMode::Ceiling,
                "FLOOR" => RoundMode::Floor,
                "HALF_UP" => RoundMode::HalfUp,
                "HALF_DOWN" => RoundMode::HalfDown,
                "HALF_EVEN" => RoundMode::HalfEven,
                _ => return Err(value_err("round", &format!("unknown rounding mode `{s}`"))),
            },
            other => return Err(type_err("round", "a String", other)),
        }
    } else {
        RoundMode::HalfUp
    };
    if !x.is_finite() {
        return Ok(Value::Float(x));
    }
    Ok(Value::Float(round_decimal(x, precision, mode)))
}

/// Rounds the shortest decimal representation of `x` to `precision` fraction digits.
fn round_decimal(x: f64, precision: i64, mode: RoundMode) -> f64 {
    if x == 0.0 {
        return x;
    }
    // Digits d1 d2 ... dn with value 0.d1d2...dn * 10^(exp+1).
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
    let negative = x < 0.0;
    // Number of digits kept: those before the decimal point (exp + 1) plus `precision`.
    let keep = exp.saturating_add(1).saturating_add(precision);
    if keep >= digits.len() as i64 {
        return x;
    }
    let keep_n = keep.max(0) as usize;
    let mut kept: Vec<u8> = digits[..keep_n].to_vec();
    let dropped: &[u8] = if keep < 0 { &digits } else { &digits[keep_n..] };
    // Compare the dropped part with one half. When keep < 0 the dropped part is below 0.1 of the
    // unit, so it is below half.
    let first = if keep < 0 { 0 } else { dropped.first().copied().unwrap_or(0) };
    let rest_nonzero = if keep < 0 { true } else { dropped.iter().skip(1).any(|d| *d != 0) };
    let half = match first.cmp(&5) {
        std::cmp::Ordering::Less => std::cmp::Ordering::Less,
        std::cmp::Ordering::Greater => std::cmp::Ordering::Greater,
        std::cmp::Ordering::Equal if rest_nonzero => std::cmp::Ordering::Greater,
        std::cmp::Ordering::Equal => std::cmp::Ordering::Equal,
    };
    let any_dropped = dropped.iter().any(|d| *d != 0);
    let last_odd = kept.last().is_some_and(|d| d % 2 == 1);
    let away = match mode {
        RoundMode::Up => any_dropped,
        RoundMode::Down => false,
        RoundMode::Ceiling => any_dropped && !negative,
        RoundMode::Floor => any_dropped && negative,
        RoundMode::HalfUp => half != std::cmp::Ordering::Less,
        RoundMode::HalfDown => half == std::cmp::Ordering::Greater,
        RoundMode::HalfEven => {
            half == std::cmp::Ordering::Greater || (half == std::cmp::Ordering::Equal && last_odd)
        }
    };
    // The kept digits as an integer scaled by 10^(exp + 1 - keep).
    let mut scale_exp = exp + 1 - keep;
    if away {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, 1);
                break;
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    if kept.is_empty() {
        kept.push(0);
        scale_exp = 0;
    }
    let text = format!(
        "{}{}e{}",
        if negative { "-" } else { "" },
        kept.iter().map(|d| char::from(b'0' + d)).collect::<String>(),
        scale_exp
    );
    let out = text.parse::<f64>().unwrap_or(x);
    if out == 0.0 && negative {
        -0.0
    } else {
        out
    }
}

pub fn sign(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Int(i) => Ok(Value::Int(i.signum())),
        Value::Float(f) => Ok(Value::Int(if *f > 0.0 {
            1
        } else if *f < 0.0 {
            -1
        } else {
            0
        })),
        other => Err(type_err("sign", "a number", other)),
    }
}

pub fn sqrt(args: &[Value]) -> Result<Value> {
    float_fn("sqrt", args, f64::sqrt)
}
pub fn exp(args: &[Value]) -> Result<Value> {
    float_fn("exp", args, f64::exp)
}
pub fn log(args: &[Value]) -> Result<Value> {
    float_fn("log", args, f64::ln)
}
pub fn log10(args: &[Value]) -> Result<Value> {
    float_fn("log10", args, f64::log10)
}
pub fn sin(args: &[Value]) -> Result<Value> {
    float_fn("sin", args, f64::sin)
}
pub fn cos(args: &[Value]) -> Result<Value> {
    float_fn("cos", args, f64::cos)
}
pub fn tan(args: &[Value]) -> Result<Value> {
    float_fn("tan", args, f64::tan)
}
pub fn cot(args: &[Value]) -> Result<Value> {
    float_fn("cot", args, |x| 1.0 / x.tan())
}
pub fn asin(args: &[Value]) -> Result<Value> {
    float_fn("asin", args, f64::asin)
}
pub fn acos(args: &[Value]) -> Result<Value> {
    float_fn("acos", args, f64::acos)
}
pub fn atan(args: &[Value]) -> Result<Value> {
    float_fn("atan", args, f64::atan)
}
pub fn sinh(args: &[Value]) -> Result<Value> {
    float_fn("sinh", args, f64::sinh)
}
pub fn cosh(args: &[Value]) -> Result<Value> {
    float_fn("cosh", args, f64::cosh)
}
pub fn tanh(args: &[Value]) -> Result<Value> {
    float_fn("tanh", args, f64::tanh)
}
pub fn coth(args: &[Value]) -> Result<Value> {
    float_fn("coth", args, |x| 1.0 / x.tanh())
}
pub fn degrees(args: &[Value]) -> Result<Value> {
    float_fn("degrees", args, f64::to_degrees)
}
pub fn radians(args: &[Value]) -> Result<Value> {
    float_fn("radians", args, f64::to_radians)
}
pub fn haversin(args: &[Value]) -> Result<Value> {
    float_fn("haversin", args, |x| (1.0 - x.cos()) / 2.0)
}

pub fn atan2(args: &[Value]) -> Result<Value> {
    let y = num_arg("atan2", args, 0)?;
    let x = num_arg("atan2", args, 1)?;
    Ok(match (y, x) {
        (Some(y), Some(x)) => Value::Float(y.atan2(x)),
        _ => Value::Null,
    })
}

pub fn is_nan(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Int(_) => Ok(Value::Bool(false)),
        Value::Float(f) => Ok(Value::Bool(f.is_nan())),
        other => Err(type_err("isNaN", "a number", other)),
    }
}

pub fn e(_args: &[Value]) -> Result<Value> {
    Ok(Value::Float(std::f64::consts::E))
}

pub fn pi(_args: &[Value]) -> Result<Value> {
    Ok(Value::Float(std::f64::consts::PI))
}

/// A process-wide random stream: seeded from the OS-randomized std hasher, advanced with
/// splitmix64. Not cryptographic; `rand()` and `randomUUID()` need only uniqueness/spread.
fn next_random() -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    if STATE.load(Ordering::Relaxed) == 0 {
        let mut h = RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        // Only the first thread's seed wins; a lost race just keeps the other seed.
        let _ = STATE.compare_exchange(0, h.finish() | 1, Ordering::Relaxed, Ordering::Relaxed);
    }
    let mut z = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniformly distributed float in `[0, 1)`.
pub fn rand(_args: &[Value]) -> Result<Value> {
    Ok(Value::Float((next_random() >> 11) as f64 / (1u64 << 53) as f64))
}

/// A random (version 4) UUID.
pub fn random_uuid(_args: &[Value]) -> Result<Value> {
    let hi = next_random();
    let lo = next_random();
    let hi = (hi & !0xF000) | 0x4000; // version 4
    let lo = (lo & !(0xC000_0000_0000_0000)) | 0x8000_0000_0000_0000; // RFC 4122 variant
    Ok(Value::from(format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )))
}

/// Milliseconds since the Unix epoch, on the statement clock (see
/// `arbor_model::temporal_build::set_statement_time`).
pub fn timestamp(_args: &[Value]) -> Result<Value> {
    Ok(Value::Int(arbor_model::temporal_build::now_utc().and_utc().timestamp_millis()))
}

// ---------------------------------------------------------------------------------------------
// Lists, maps, misc
// ---------------------------------------------------------------------------------------------

fn list_arg<'a>(func: &str, args: &'a [Value]) -> Result<Option<&'a [Value]>> {
    match arg(args, 0) {
        Value::Null => Ok(None),
        Value::List(l) => Ok(Some(l)),
        other => Err(type_err(func, "a List", other)),
    }
}

pub fn head(args: &[Value]) -> Result<Value> {
    Ok(list_arg("head", args)?.and_then(|l| l.first().cloned()).unwrap_or(Value::Null))
}

pub fn last(args: &[Value]) -> Result<Value> {
    Ok(list_arg("last", args)?.and_then(|l| l.last().cloned()).unwrap_or(Value::Null))
}

pub fn tail(args: &[Value]) -> Result<Value> {
    Ok(list_arg("tail", args)?
        .map_or(Value::Null, |l| Value::List(l.iter().skip(1).cloned().collect())))
}

/// The largest list `range()` may build, to fail cleanly instead of exhausting memory.
const MAX_RANGE_LEN: i128 = 100_000_000;
/// Elements `range()` builds between two looks at the interrupt flag.
const RANGE_CHUNK: i128 = 4096;

pub fn range(args: &[Value]) -> Result<Value> {
    let int = |i: usize| -> Result<Option<i64>> {
        match arg(args, i) {
            Value::Null => Ok(None),
            Value::Int(n) => Ok(Some(*n)),
            other => Err(Error::argument(format!(
                "Invalid input for function 'range()': Expected an Integer, got: {}",
                super::describe(other)
            ))
            .with_detail("InvalidArgumentType")),
        }
    };
    let start = int(0)?;
    let end = int(1)?;
    let step = if args.len() > 2 { int(2)? } else { Some(1) };
    let (Some(start), Some(end), Some(step)) = (start, end, step) else {
        return Ok(Value::Null);
    };
    if step == 0 {
        return Err(Error::argument(
            "Invalid input for function 'range()': step argument must not be zero",
        )
        .with_detail("NumberOutOfRange"));
    }
    let (s, e, st) = (i128::from(start), i128::from(end), i128::from(step));
    let len = if (st > 0 && e < s) || (st < 0 && e > s) { 0 } else { (e - s) / st + 1 };
    if len > MAX_RANGE_LEN {
        return Err(Error::new(
            Status::MemoryExhausted,
            "range() would create a list that is too large",
        ));
    }
    // Asked first: the list is allocated at once, before any chunk could look at the limit.
    crate::memory::reserve((len as u64).saturating_mul(std::mem::size_of::<Value>() as u64))?;
    // Built in chunks with a look at the interrupt flag between them (a long range is slow).
    let mut out = Vec::with_capacity(len as usize);
    let mut i = 0;
    while i < len {
        crate::interrupt::check()?;
        let end = len.min(i + RANGE_CHUNK);
        out.extend((i..end).map(|i| Value::Int((s + i * st) as i64)));
        i = end;
    }
    Ok(Value::List(out))
}

pub fn coalesce(args: &[Value]) -> Result<Value> {
    Ok(args.iter().find(|v| !v.is_null()).cloned().unwrap_or(Value::Null))
}

pub fn null_if(args: &[Value]) -> Result<Value> {
    let v = arg(args, 0);
    if arbor_model::equals(v, arg(args, 1)) == Some(true) {
        Ok(Value::Null)
    } else {
        Ok(v.clone())
    }
}

pub fn is_empty(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::String(s) => Ok(Value::Bool(s.is_empty())),
        Value::List(l) => Ok(Value::Bool(l.is_empty())),
        Value::Map(m) => Ok(Value::Bool(m.is_empty())),
        other => Err(type_err("isEmpty", "a String, a List or a Map", other)),
    }
}

/// `keys()` of a map; entities are the evaluator's (they need the graph).
pub fn keys(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Map(m) => Ok(Value::List(m.keys_ordered().map(|k| Value::str(k)).collect())),
        Value::NodeData(n) => Ok(Value::List(n.properties.keys().map(|k| Value::str(k)).collect())),
        Value::RelData(r) => Ok(Value::List(r.properties.keys().map(|k| Value::str(k)).collect())),
        other => Err(type_err("keys", "a Map, a Node or a Relationship", other)),
    }
}

/// The value's type as Neo4j's `valueType()` names it.
pub fn value_type(args: &[Value]) -> Result<Value> {
    Ok(Value::from(type_string(arg(args, 0))))
}

fn base_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL",
        Value::Bool(_) => "BOOLEAN",
        Value::Int(_) => "INTEGER",
        Value::Float(_) => "FLOAT",
        Value::String(_) => "STRING",
        Value::Bytes(_) => "BYTE ARRAY",
        Value::List(_) => "LIST",
        Value::Map(_) => "MAP",
        Value::Node(_) | Value::NodeData(_) => "NODE",
        Value::Relationship(_) | Value::RelData(_) => "RELATIONSHIP",
        Value::Path(_) | Value::PathData(_) => "PATH",
        Value::Date(_) => "DATE",
        Value::Time(_) => "ZONED TIME",
        Value::LocalTime(_) => "LOCAL TIME",
        Value::DateTime(_) => "ZONED DATETIME",
        Value::LocalDateTime(_) => "LOCAL DATETIME",
        Value::Duration(_) => "DURATION",
        Value::Point(_) => "POINT",
    }
}

fn type_string(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::List(items) => {
            let mut inner: Vec<String> = Vec::new();
            let mut has_null = false;
            for it in items {
                if it.is_null() {
                    has_null = true;
                    continue;
                }
                let t = match it {
                    Value::List(_) => type_string(it).trim_end_matches(" NOT NULL").to_string(),
                    other => base_type(other).to_string(),
                };
                if !inner.contains(&t) {
                    inner.push(t);
                }
            }
            let suffix = if has_null { "" } else { " NOT NULL" };
            let body = if inner.is_empty() {
                if has_null {
                    "NULL".to_string()
                } else {
                    "NOTHING".to_string()
                }
            } else {
                inner.iter().map(|t| format!("{t}{suffix}")).collect::<Vec<_>>().join(" | ")
            };
            format!("LIST<{body}> NOT NULL")
        }
        other => format!("{} NOT NULL", base_type(other)),
    }
}

// ---------------------------------------------------------------------------------------------
// Spatial
// ---------------------------------------------------------------------------------------------

pub fn point(args: &[Value]) -> Result<Value> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Map(m) => Ok(spatial::point_from_map(m)?.map_or(Value::Null, Value::Point)),
        other => Err(type_err("point", "a Map", other)),
    }
}

/// `point.distance(a, b)`: null unless both are points of one CRS (Neo4j 5.26 answers null,
/// not an error, for any other value).
pub fn distance(args: &[Value]) -> Result<Value> {
    match (arg(args, 0), arg(args, 1)) {
        (Value::Point(a), Value::Point(b)) => {
            Ok(spatial::distance(a, b).map_or(Value::Null, Value::Float))
        }
        _ => Ok(Value::Null),
    }
}

/// `point.withinBBox(p, lowerLeft, upperRight)`: null unless all three are points (Neo4j
/// 5.26 answers null, not an error, for any other value).
pub fn within_bbox(args: &[Value]) -> Result<Value> {
    let pts: Vec<Option<&arbor_model::Point>> = (0..3)
        .map(|i| match arg(args, i) {
            Value::Point(p) => Some(p),
            _ => None,
        })
        .collect();
    let (Some(p), Some(lo), Some(hi)) = (pts[0], pts[1], pts[2]) else { return Ok(Value::Null) };
    if p.srid != lo.srid || p.srid != hi.srid {
        return Ok(Value::Null);
    }
    // Only geographic boxes wrap (across the dateline), as in Neo4j; a cartesian box whose
    // lower x is above its upper x holds nothing.
    let geographic = matches!(p.srid, 4326 | 4979);
    let in_x = if lo.x <= hi.x {
        p.x >= lo.x && p.x <= hi.x
    } else {
        geographic && (p.x >= lo.x || p.x <= hi.x)
    };
    let in_y = p.y >= lo.y && p.y <= hi.y;
    let in_z = match (p.z, lo.z, hi.z) {
        (Some(z), Some(a), Some(b)) => z >= a && z <= b,
        _ => true,
    };
    Ok(Value::Bool(in_x && in_y && in_z))
}

#[cfg(test)]
pub(super) fn round_decimal_for_tests(x: f64, precision: i64, mode: &str) -> f64 {
    let mode = match mode {
        "UP" => RoundMode::Up,
        "DOWN" => RoundMode::Down,
        "CEILING" => RoundMode::Ceiling,
        "FLOOR" => RoundMode::Floor,
        "HALF_DOWN" => RoundMode::HalfDown,
        "HALF_EVEN" => RoundMode::HalfEven,
        _ => RoundMode::HalfUp,
    };
    round_decimal(x, precision, mode)
}
