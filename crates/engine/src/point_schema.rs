//! POINT index settings: the `OPTIONS {indexConfig: {`spatial.cartesian.min`: [...], ...}}` of
//! `CREATE POINT INDEX`, checked as Neo4j 5.26 checks them, and the `indexConfig` that `SHOW
//! INDEXES` lists (every setting, the defaults where none was given).

use arbor_model::{Error, PropertyMap, Result, Status, Value};

const BIG: f64 = 1_000_000.0;

/// The settings in storage's order (`arbor_storage::POINT_SETTINGS` values): name, then the
/// default bounds of each coordinate (min first, then max, per CRS).
const SETTINGS: [(&str, &[f64]); 8] = [
    ("spatial.cartesian.min", &[-BIG, -BIG]),
    ("spatial.cartesian.max", &[BIG, BIG]),
    ("spatial.cartesian-3d.min", &[-BIG, -BIG, -BIG]),
    ("spatial.cartesian-3d.max", &[BIG, BIG, BIG]),
    ("spatial.wgs-84.min", &[-180.0, -90.0]),
    ("spatial.wgs-84.max", &[180.0, 90.0]),
    ("spatial.wgs-84-3d.min", &[-180.0, -90.0, -BIG]),
    ("spatial.wgs-84-3d.max", &[180.0, 90.0, BIG]),
];

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArguments, message)
}

fn failed(message: &str) -> Error {
    Error::new(Status::ExecutionFailed, message)
}

/// The settings of `CREATE POINT INDEX ... OPTIONS {...}` (`options` already evaluated):
/// `None` without an `indexConfig` (Neo4j's defaults), else every value, the given ones
/// replacing the defaults. `rel`: the index is on relationships (for the message).
pub(crate) fn settings(options: Option<&Value>, rel: bool) -> Result<Option<Vec<f64>>> {
    let Some(options) = options.filter(|o| !o.is_null()) else { return Ok(None) };
    let entity = if rel { "relationship" } else { "node" };
    let Value::Map(options) = options else {
        return Err(Error::new(
            Status::SyntaxError,
            format!("Failed to create point {entity} index: Invalid option provided, valid options are `indexProvider` and `indexConfig`."),
        ));
    };
    if options.iter().any(|(k, _)| &**k != "indexConfig" && &**k != "indexProvider") {
        return Err(Error::new(
            Status::SyntaxError,
            format!("Failed to create point {entity} index: Invalid option provided, valid options are `indexProvider` and `indexConfig`."),
        ));
    }
    match options.get("indexProvider") {
        None | Some(Value::Null) => {}
        Some(Value::String(p)) if &**p == "point-1.0" => {}
        Some(other) => {
            let p = match other {
                Value::String(s) => s.to_string(),
                v => arbor_model::to_cypher_literal(v),
            };
            let hint = match p.as_str() {
                "range-1.0" => "\nTo create range index, please use 'CREATE RANGE INDEX ...'.",
                "text-1.0" | "text-2.0" => {
                    "\nTo create text index, please use 'CREATE TEXT INDEX ...'."
                }
                _ => "",
            };
            return Err(invalid(format!(
                "Could not create point index with specified index provider '{p}'.{hint}\nThe available index providers for the given type: ['point-1.0']."
            )));
        }
    }
    let config = match options.get("indexConfig") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Map(m)) => m,
        Some(other) => return Err(not_a_config(other)),
    };
    let mut values: Vec<Vec<f64>> = SETTINGS.iter().map(|(_, d)| d.to_vec()).collect();
    for (key, value) in config.iter() {
        let Some(i) = SETTINGS.iter().position(|(n, _)| *n == &**key) else {
            return Err(failed(&format!(
                "Invalid index config key '{key}', it was not recognized as an index setting."
            )));
        };
        let Some(list) = numbers(value) else {
            return Err(not_a_config(&Value::Map(config.clone())));
        };
        values[i] = list;
    }
    for (i, (_, d)) in SETTINGS.iter().enumerate().step_by(2) {
        let (lo, hi) = (&values[i], &values[i + 1]);
        if lo.len() != d.len() || hi.len() != d.len() || lo.iter().zip(hi).any(|(a, b)| a >= b) {
            return Err(failed("Invalid spatial index settings."));
        }
    }
    Ok(Some(values.concat()))
}

/// A list of numbers as doubles (`None`: anything else).
fn numbers(v: &Value) -> Option<Vec<f64>> {
    let Value::List(items) = v else { return None };
    items
        .iter()
        .map(|x| match x {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) if f.is_finite() => Some(*f),
            _ => None,
        })
        .collect()
}

fn not_a_config(v: &Value) -> Error {
    let shown = match v {
        Value::Map(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => format!("\"{s}\""),
                        other => arbor_model::to_cypher_literal(other),
                    };
                    format!("{k}: {v}")
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => arbor_model::to_cypher_literal(other),
    };
    invalid(format!(
        "Could not create point index with specified index config '{shown}'. Expected a map from String to Double[]."
    ))
}

/// The `indexConfig` `SHOW INDEXES` lists for a POINT index with `settings` (`None`: the
/// defaults).
pub(crate) fn config(settings: Option<&[f64]>) -> PropertyMap {
    let f = |v: &[f64]| Value::List(v.iter().map(|x| Value::Float(*x)).collect());
    let mut m = PropertyMap::new();
    let mut at = 0;
    for (name, d) in SETTINGS {
        let v = match settings {
            Some(s) if s.len() >= at + d.len() => &s[at..at + d.len()],
            _ => d,
        };
        at += d.len();
        m.insert(name.into(), f(v));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(config: Vec<(&str, Value)>) -> Value {
        let mut c = PropertyMap::new();
        for (k, v) in config {
            c.insert(k.into(), v);
        }
        let mut o = PropertyMap::new();
        o.insert("indexConfig".into(), Value::Map(c));
        Value::Map(o)
    }

    fn floats(v: &[f64]) -> Value {
        Value::List(v.iter().map(|x| Value::Float(*x)).collect())
    }

    #[test]
    fn settings_are_checked_as_neo4j_does() {
        assert_eq!(settings(None, false).unwrap(), None);
        let s = settings(
            Some(&opts(vec![("spatial.cartesian.min", floats(&[-100.0, -100.0]))])),
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.len(), arbor_storage::POINT_SETTINGS);
        assert_eq!(&s[..4], &[-100.0, -100.0, BIG, BIG]);
        let listed = config(Some(&s));
        let lit = |k: &str| listed.get(k).map(arbor_model::to_cypher_literal);
        assert_eq!(lit("spatial.cartesian.min"), Some("[-100.0, -100.0]".to_string()));
        assert_eq!(lit("spatial.wgs-84.max"), Some("[180.0, 90.0]".to_string()));
        let ints = Value::List(vec![Value::Int(-5), Value::Int(-5)]);
        assert!(settings(Some(&opts(vec![("spatial.cartesian.min", ints)])), false).is_ok());
        let bad = [
            (vec![("spatial.cartesian.min", floats(&[-100.0]))], Status::ExecutionFailed),
            (vec![("spatial.cartesian.min", floats(&[2e6, 2e6]))], Status::ExecutionFailed),
            (vec![("spatial.foo.min", floats(&[1.0, 1.0]))], Status::ExecutionFailed),
            (vec![("spatial.cartesian.min", Value::str("x"))], Status::InvalidArguments),
        ];
        for (config, status) in bad {
            let e = settings(Some(&opts(config)), false).unwrap_err();
            assert_eq!(e.status, status, "{}", e.message);
        }
        let mut other = PropertyMap::new();
        other.insert("foo".into(), Value::Int(1));
        let e = settings(Some(&Value::Map(other)), false).unwrap_err();
        assert_eq!(e.status, Status::SyntaxError);
        let mut provider = PropertyMap::new();
        provider.insert("indexProvider".into(), Value::str("range-1.0"));
        let e = settings(Some(&Value::Map(provider)), false).unwrap_err();
        assert_eq!(e.status, Status::InvalidArguments);
    }
}
