//! Data-driven tests of the function library: (function, arguments) -> expected literal or error.

use super::*;
use arbor_model::{to_cypher_literal, PropertyMap, Status};

fn i(n: i64) -> Value {
    Value::Int(n)
}
fn f(x: f64) -> Value {
    Value::Float(x)
}
fn s(x: &str) -> Value {
    Value::str(x)
}
fn l(v: Vec<Value>) -> Value {
    Value::List(v)
}
fn m(kv: &[(&str, Value)]) -> Value {
    Value::Map(kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<PropertyMap>())
}
const N: Value = Value::Null;

/// Expected outcome: the result printed as a TCK literal, or an error status.
enum Want {
    Lit(&'static str),
    Err(Status),
}
use Want::{Err as E, Lit as L};

fn run(cases: Vec<(&str, Vec<Value>, Want)>) {
    for (name, args, want) in cases {
        let func = lookup_scalar(name).unwrap_or_else(|| panic!("no function {name}"));
        let (min, max) = scalar_arity(name).unwrap_or((0, 0));
        assert!(args.len() >= min && args.len() <= max, "{name}: arity {}", args.len());
        let got = func(&args);
        match (&got, &want) {
            (Ok(v), L(lit)) => assert_eq!(&to_cypher_literal(v), lit, "{name}({args:?})"),
            (Result::Err(e), E(st)) => assert_eq!(e.status, *st, "{name}({args:?}): {e}"),
            _ => panic!(
                "{name}({args:?}) = {got:?}, want {}",
                match want {
                    L(x) => x.to_string(),
                    E(st) => format!("{st:?}"),
                }
            ),
        }
    }
}

#[test]
fn string_functions() {
    run(vec![
        ("toUpper", vec![s("abc")], L("'ABC'")),
        ("TOUPPER", vec![N], L("null")),
        ("toUpper", vec![i(1)], E(Status::TypeError)),
        ("toLower", vec![s("AbC")], L("'abc'")),
        ("trim", vec![s("  a b \n")], L("'a b'")),
        ("ltrim", vec![s("  a ")], L("'a '")),
        ("rtrim", vec![s("  a ")], L("'  a'")),
        ("btrim", vec![s("xxaxx"), s("x")], L("'a'")),
        ("replace", vec![s("hello"), s("l"), s("L")], L("'heLLo'")),
        ("replace", vec![s("hello"), N, s("L")], L("null")),
        ("substring", vec![s("0123456789"), i(1)], L("'123456789'")),
        ("substring", vec![s("0123456789"), i(1), i(3)], L("'123'")),
        ("substring", vec![s("abc"), i(10)], L("''")),
        ("substring", vec![s("abc"), i(-1)], E(Status::ExecutionFailed)),
        ("left", vec![s("hello"), i(3)], L("'hel'")),
        ("left", vec![s("hello"), i(30)], L("'hello'")),
        ("left", vec![N, i(3)], L("null")),
        ("right", vec![s("hello"), i(3)], L("'llo'")),
        ("right", vec![s("hello"), i(-3)], E(Status::ExecutionFailed)),
        ("split", vec![s("a,b,,c"), s(",")], L("['a', 'b', '', 'c']")),
        ("split", vec![s("a,b;c"), l(vec![s(","), s(";")])], L("['a', 'b', 'c']")),
        ("split", vec![s("abc"), s("")], L("['a', 'b', 'c']")),
        ("split", vec![s("a,"), s(",")], L("['a', '']")),
        ("split", vec![N, s(",")], L("null")),
        ("reverse", vec![s("raksO")], L("'Oskar'")),
        ("reverse", vec![l(vec![i(1), i(2)])], L("[2, 1]")),
        ("size", vec![s("héllo")], L("5")),
        ("size", vec![l(vec![i(1), N])], L("2")),
        ("size", vec![N], L("null")),
        ("size", vec![i(1)], E(Status::TypeError)),
    ]);
}

#[test]
fn conversion_functions() {
    run(vec![
        ("toString", vec![i(42)], L("'42'")),
        ("toString", vec![f(2.3)], L("'2.3'")),
        ("toString", vec![f(1.0)], L("'1.0'")),
        ("toString", vec![Value::Bool(true)], L("'true'")),
        ("toString", vec![N], L("null")),
        ("toString", vec![l(vec![])], E(Status::TypeError)),
        ("toString", vec![m(&[])], E(Status::TypeError)),
        ("toStringOrNull", vec![l(vec![])], L("null")),
        ("toInteger", vec![f(2.9)], L("2")),
        ("toInteger", vec![f(-2.9)], L("-2")),
        ("toInteger", vec![s("1.7")], L("1")),
        ("toInteger", vec![s("foo")], L("null")),
        // Neo4j 5.26: no blanks around the number, a float converts saturating.
        ("toInteger", vec![s(" 42 ")], L("null")),
        ("toInteger", vec![Value::Bool(true)], L("1")),
        ("toInteger", vec![l(vec![])], E(Status::TypeError)),
        ("toInteger", vec![f(1e30)], L("9223372036854775807")),
        ("toInteger", vec![s("1e30")], E(Status::TypeError)),
        ("toIntegerOrNull", vec![m(&[])], L("null")),
        ("toFloat", vec![i(3)], L("3.0")),
        ("toFloat", vec![s("5")], L("5.0")),
        ("toFloat", vec![s("")], L("null")),
        ("toFloat", vec![s("inf")], L("null")),
        ("toFloat", vec![s("1e3")], L("1000.0")),
        ("toFloat", vec![Value::Bool(true)], E(Status::TypeError)),
        ("toFloatOrNull", vec![Value::Bool(true)], L("null")),
        ("toBoolean", vec![s("true")], L("true")),
        ("toBoolean", vec![s("FALSE")], L("false")),
        ("toBoolean", vec![s("yes")], L("null")),
        ("toBoolean", vec![i(0)], L("false")),
        ("toBoolean", vec![f(1.0)], E(Status::TypeError)),
        ("toBooleanOrNull", vec![f(1.0)], L("null")),
        ("toIntegerList", vec![l(vec![s("1"), f(2.5), s("x"), N])], L("[1, 2, null, null]")),
        ("toFloatList", vec![l(vec![i(1), s("2")])], L("[1.0, 2.0]")),
        ("toBooleanList", vec![l(vec![s("true"), i(1), f(1.0)])], L("[true, true, null]")),
        ("toStringList", vec![l(vec![i(1), l(vec![])])], L("['1', null]")),
        ("toStringList", vec![i(1)], E(Status::TypeError)),
    ]);
}

#[test]
fn math_functions() {
    run(vec![
        ("abs", vec![i(-3)], L("3")),
        ("abs", vec![f(-3.5)], L("3.5")),
        ("abs", vec![i(i64::MIN)], E(Status::ArithmeticError)),
        ("abs", vec![s("x")], E(Status::TypeError)),
        ("ceil", vec![f(1.2)], L("2.0")),
        ("ceil", vec![i(1)], L("1.0")),
        ("floor", vec![f(-1.2)], L("-2.0")),
        ("round", vec![f(2.5)], L("3.0")),
        ("round", vec![f(-2.5)], L("-2.0")),
        ("round", vec![f(1.23456), i(3)], L("1.235")),
        ("round", vec![f(2.675), i(2)], L("2.68")),
        ("round", vec![f(-1.5), i(0)], L("-2.0")),
        ("round", vec![f(-1.5), i(0), s("HALF_EVEN")], L("-2.0")),
        ("round", vec![f(2.5), i(0), s("HALF_EVEN")], L("2.0")),
        ("round", vec![f(2.5), i(0), s("HALF_DOWN")], L("2.0")),
        ("round", vec![f(1.21), i(1), s("CEILING")], L("1.3")),
        ("round", vec![f(-1.21), i(1), s("CEILING")], L("-1.2")),
        ("round", vec![f(9.99), i(1)], L("10.0")),
        ("round", vec![f(1234.5), i(-2)], L("1200.0")),
        ("round", vec![f(0.004), i(2), s("UP")], L("0.01")),
        ("round", vec![f(1.5), i(0), s("WRONG")], E(Status::ArgumentError)),
        ("sign", vec![f(-0.5)], L("-1")),
        ("sign", vec![i(0)], L("0")),
        ("sqrt", vec![i(16)], L("4.0")),
        ("sqrt", vec![i(-1)], L("NaN")),
        ("log", vec![i(0)], L("-Infinity")),
        ("log10", vec![i(100)], L("2.0")),
        ("exp", vec![i(0)], L("1.0")),
        ("e", vec![], L("2.718281828459045")),
        ("pi", vec![], L("3.141592653589793")),
        ("atan2", vec![i(0), i(1)], L("0.0")),
        ("degrees", vec![f(std::f64::consts::PI)], L("180.0")),
        ("haversin", vec![i(0)], L("0.0")),
        ("isNaN", vec![f(f64::NAN)], L("true")),
        ("isNaN", vec![i(1)], L("false")),
        ("isNaN", vec![N], L("null")),
    ]);
    for _ in 0..100 {
        match lookup_scalar("rand").map(|r| r(&[])) {
            Some(Ok(Value::Float(x))) => assert!((0.0..1.0).contains(&x)),
            other => panic!("rand() = {other:?}"),
        }
    }
}

#[test]
fn list_and_misc_functions() {
    run(vec![
        ("head", vec![l(vec![i(1), i(2)])], L("1")),
        ("head", vec![l(vec![])], L("null")),
        ("head", vec![N], L("null")),
        ("head", vec![i(1)], E(Status::TypeError)),
        ("last", vec![l(vec![i(1), i(2)])], L("2")),
        ("tail", vec![l(vec![i(1), i(2)])], L("[2]")),
        ("tail", vec![l(vec![])], L("[]")),
        ("range", vec![i(0), i(3)], L("[0, 1, 2, 3]")),
        ("range", vec![i(0), i(10), i(3)], L("[0, 3, 6, 9]")),
        ("range", vec![i(5), i(1), i(-2)], L("[5, 3, 1]")),
        ("range", vec![i(2), i(1)], L("[]")),
        ("range", vec![i(2), i(8), i(0)], E(Status::ArgumentError)),
        ("range", vec![f(0.0), i(1), i(1)], E(Status::ArgumentError)),
        ("range", vec![i(0), i(1), Value::Bool(true)], E(Status::ArgumentError)),
        ("range", vec![i(0), i64::MAX.into()], E(Status::MemoryExhausted)),
        ("coalesce", vec![N, N, i(3), i(4)], L("3")),
        ("coalesce", vec![N], L("null")),
        ("isEmpty", vec![s("")], L("true")),
        ("isEmpty", vec![l(vec![i(1)])], L("false")),
        ("isEmpty", vec![m(&[])], L("true")),
        ("isEmpty", vec![i(1)], E(Status::TypeError)),
        ("keys", vec![m(&[("b", i(1)), ("a", N)])], L("['a', 'b']")),
        ("valueType", vec![i(1)], L("'INTEGER NOT NULL'")),
        ("valueType", vec![N], L("'NULL'")),
        (
            "valueType",
            vec![l(vec![i(1), s("a")])],
            L("'LIST<INTEGER NOT NULL | STRING NOT NULL> NOT NULL'"),
        ),
        ("nullIf", vec![i(1), f(1.0)], L("null")),
        ("nullIf", vec![i(1), i(2)], L("1")),
    ]);
    let uuid = lookup_scalar("randomUUID").map(|u| u(&[]));
    match uuid {
        Some(Ok(Value::String(u))) => {
            assert_eq!(u.len(), 36);
            assert_eq!(&u[14..15], "4");
        }
        other => panic!("randomUUID() = {other:?}"),
    }
}

#[test]
fn spatial_functions() {
    let p1 = lookup_scalar("point").map(|p| p(&[m(&[("x", i(0)), ("y", i(0))])]));
    let p2 = lookup_scalar("point").map(|p| p(&[m(&[("x", i(3)), ("y", i(4))])]));
    let (Some(Ok(a)), Some(Ok(b))) = (p1, p2) else { panic!("point() failed") };
    run(vec![
        ("distance", vec![a.clone(), b.clone()], L("5.0")),
        ("point.distance", vec![a.clone(), N], L("null")),
        (
            "point",
            vec![m(&[("x", i(1)), ("y", f(2.5))])],
            L("point({x: 1.0, y: 2.5, crs: 'cartesian'})"),
        ),
        ("point", vec![m(&[("x", N), ("y", i(1))])], L("null")),
        ("point", vec![i(1)], E(Status::TypeError)),
        // Neo4j 5.26 answers null for a value that is not a point.
        ("point.withinBBox", vec![m(&[]), a.clone(), b.clone()], L("null")),
        ("point.distance", vec![Value::Int(5), b.clone()], L("null")),
    ]);
}

#[test]
fn registry() {
    assert!(lookup_scalar("nosuchfunction").is_none());
    assert!(lookup_scalar("Date.Truncate").is_some());
    assert_eq!(scalar_arity("coalesce"), Some((1, usize::MAX)));
    assert_eq!(lookup_aggregate("COLLECT"), Some(AggKind::Collect));
    assert_eq!(lookup_aggregate("percentileDisc"), Some(AggKind::PercentileDisc));
    assert_eq!(lookup_aggregate("toUpper"), None);
    assert!(is_nondeterministic("rand"));
    assert!(!is_nondeterministic("toUpper"));
}

/// Runs one aggregation over rows of arguments.
fn agg(kind: AggKind, distinct: bool, rows: Vec<Vec<Value>>) -> Result<Value> {
    let mut acc = new_accumulator(kind, distinct);
    for r in rows {
        acc.update(&r)?;
    }
    acc.finish()
}

fn single(values: &[Value]) -> Vec<Vec<Value>> {
    values.iter().map(|v| vec![v.clone()]).collect()
}

#[test]
fn aggregations() {
    use AggKind::*;
    let cases: Vec<(AggKind, bool, Vec<Vec<Value>>, Want)> = vec![
        (Count, false, single(&[i(1), N, i(2)]), L("2")),
        (Count, true, single(&[i(1), f(1.0), i(2), N]), L("2")),
        (Count, false, vec![], L("0")),
        (Sum, false, single(&[i(1), i(2), N]), L("3")),
        (Sum, false, single(&[i(1), f(0.5)]), L("1.5")),
        (Sum, false, vec![], L("0")),
        // Neo4j 5.26 carries on as a float past the integer range.
        (Sum, false, single(&[i(i64::MAX), i(1)]), L("9.223372036854776E18")),
        (Sum, false, single(&[s("a")]), E(Status::TypeError)),
        (Sum, true, single(&[i(2), i(2), i(3)]), L("5")),
        (Avg, false, single(&[i(1), i(2)]), L("1.5")),
        (Avg, false, single(&[N]), L("null")),
        (Min, false, single(&[i(1), f(0.5), N]), L("0.5")),
        (Max, false, single(&[i(1), f(2.0), i(5), N, f(3.2)]), L("5")),
        (Max, false, single(&[s("a"), s("b"), s("B")]), L("'b'")),
        (Min, false, single(&[s("a"), s("b"), s("B")]), L("'B'")),
        (Max, false, single(&[l(vec![i(1)]), l(vec![i(2)]), l(vec![i(2), i(1)])]), L("[2, 1]")),
        (Max, false, single(&[i(1), s("a"), N, l(vec![i(1)]), f(0.2)]), L("1")),
        (Min, false, single(&[i(1), s("a"), N, l(vec![i(1)]), f(0.2)]), L("[1]")),
        (Min, false, vec![], L("null")),
        (Collect, false, single(&[i(1), N, i(1)]), L("[1, 1]")),
        (Collect, true, single(&[N, i(1), N, i(1)]), L("[1]")),
        (
            StDev,
            false,
            single(&[i(2), i(4), i(4), i(4), i(5), i(5), i(7), i(9)]),
            L("2.138089935299395"),
        ),
        (StDevP, false, single(&[i(2), i(4), i(4), i(4), i(5), i(5), i(7), i(9)]), L("2.0")),
        (StDev, false, single(&[i(1)]), L("0.0")),
        (
            PercentileDisc,
            false,
            vec![vec![f(10.0), f(0.5)], vec![f(20.0), f(0.5)], vec![f(30.0), f(0.5)]],
            L("20.0"),
        ),
        (PercentileDisc, false, vec![vec![i(10), f(0.0)], vec![i(20), f(0.0)]], L("10")),
        (PercentileCont, false, vec![vec![f(10.0), f(0.5)], vec![f(20.0), f(0.5)]], L("15.0")),
        (PercentileCont, false, vec![vec![f(10.0), i(1)], vec![f(30.0), i(1)]], L("30.0")),
        (PercentileCont, false, vec![vec![f(10.0), f(1.1)]], E(Status::ArgumentError)),
        (PercentileDisc, false, vec![vec![f(10.0), i(-1)]], E(Status::ArgumentError)),
        (PercentileDisc, false, vec![], L("null")),
    ];
    for (kind, distinct, rows, want) in cases {
        let desc = format!("{kind:?} distinct={distinct} {rows:?}");
        match (agg(kind, distinct, rows), want) {
            (Ok(v), L(lit)) => assert_eq!(to_cypher_literal(&v), lit, "{desc}"),
            (Result::Err(e), E(st)) => assert_eq!(e.status, st, "{desc}"),
            (got, _) => panic!("{desc}: got {got:?}"),
        }
    }
}

#[test]
fn round_decimal_edges() {
    use super::scalar::round_decimal_for_tests as r;
    assert_eq!(r(0.5, 0, "HALF_UP"), 1.0);
    assert_eq!(r(0.05, 0, "HALF_UP"), 0.0);
    assert_eq!(r(0.004, -1, "UP"), 10.0);
    assert_eq!(r(-0.004, 2, "HALF_UP"), -0.0);
    assert_eq!(r(123.456, 5, "HALF_UP"), 123.456);
}
