//! Vector indexes in the engine: `CREATE VECTOR INDEX ... OPTIONS {indexConfig: {...}}` and
//! `db.index.vector.createNodeIndex` (settings checked with Neo4j 5.26's codes and messages),
//! and what `SHOW INDEXES` lists for a vector index (`options`, `createStatement`).
//!
//! The ANN index itself lives in storage (`arbor_storage`'s vector module, on
//! `arbor-vector`), maintained at commit like every index; ARCHITECTURE.md says why.

use arbor_cypher_syntax::ast::{Expr, ExprKind, Literal, SchemaTarget, UnaryOp};
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use arbor_storage::{Store, TokenKind, Transaction, VectorSettings, VectorSimilarity};

const SETTINGS: &str = "vector.dimensions, vector.hnsw.ef_construction, vector.hnsw.m, \
                        vector.quantization.enabled, vector.similarity_function";

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArguments, message)
}

/// The settings of an `OPTIONS` map (`None`: no OPTIONS), checked as Neo4j 5.26 checks them.
pub(crate) fn settings_from_options(options: Option<&Value>) -> Result<VectorSettings> {
    let mut settings = VectorSettings::default();
    let Some(options) = options else { return Ok(settings) };
    let Value::Map(options) = options else {
        return Err(invalid(format!(
            "Could not create vector index with specified options: {options:?}"
        )));
    };
    for (key, _) in options.iter() {
        if &**key != "indexConfig" && &**key != "indexProvider" {
            return Err(invalid(format!(
                "Could not create vector index with unrecognised option: '{key}'. Expected \
                 'indexConfig', 'indexProvider'."
            )));
        }
    }
    match options.get("indexProvider") {
        None | Some(Value::Null) => {}
        Some(Value::String(p)) if &**p == "vector-2.0" || &**p == "vector-1.0" => {}
        Some(other) => {
            return Err(invalid(format!(
                "Could not create vector index with specified index provider '{}'.",
                show_value(other)
            )))
        }
    }
    let config = match options.get("indexConfig") {
        None | Some(Value::Null) => return Ok(settings),
        Some(Value::Map(m)) => m,
        Some(other) => {
            return Err(invalid(format!(
                "Could not create vector index with specified index config '{}'. Expected a map.",
                show_value(other)
            )))
        }
    };
    for (key, value) in config.iter() {
        apply_setting(&mut settings, key, value, config)?;
    }
    Ok(settings)
}

/// One `indexConfig` entry.
fn apply_setting(
    settings: &mut VectorSettings,
    key: &str,
    value: &Value,
    config: &PropertyMap,
) -> Result<()> {
    let expected = |what: &str| {
        invalid(format!(
            "Could not create vector index with specified index config '{key}'. Expected {what}."
        ))
    };
    let int = |lo: i64, hi: i64| match value {
        Value::Int(n) if (lo..=hi).contains(n) => Ok(*n as u32),
        Value::Int(_) => Err(Error::new(
            Status::ExecutionFailed,
            format!("'{key}' must be between {lo} and {hi} inclusively"),
        )),
        _ => Err(expected("an Integer")),
    };
    match key {
        "vector.dimensions" => settings.dimensions = Some(int(1, 4096)?),
        "vector.hnsw.m" => settings.m = int(2, 127)?,
        "vector.hnsw.ef_construction" => settings.ef_construction = int(1, 3200)?,
        "vector.quantization.enabled" => match value {
            Value::Bool(b) => settings.quantization = *b,
            _ => return Err(expected("a Boolean")),
        },
        "vector.similarity_function" => match value {
            Value::String(s) => {
                settings.similarity = VectorSimilarity::parse(s).ok_or_else(|| {
                    Error::new(
                        Status::ExecutionFailed,
                        format!(
                            "'\"{s}\"' is an unsupported 'vector.similarity_function'. \
                             Supported: [COSINE, EUCLIDEAN]"
                        ),
                    )
                })?
            }
            _ => return Err(expected("a String")),
        },
        _ => {
            let shown: Vec<String> =
                config.iter().map(|(k, v)| format!("{k}: {}", show_value(v))).collect();
            return Err(invalid(format!(
                "Could not create vector index with specified index config '{{{}}}'. '{key}' is \
                 an unrecognized setting. Supported: [{SETTINGS}]",
                shown.join(", ")
            )));
        }
    }
    Ok(())
}

fn show_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        other => arbor_model::to_cypher_literal(other),
    }
}

/// The value of an `OPTIONS` expression: literals, lists, maps and parameters.
pub(crate) fn constant(e: &Expr, params: &PropertyMap) -> Result<Value> {
    Ok(match &e.kind {
        ExprKind::Literal(l) => match l {
            Literal::Null => Value::Null,
            Literal::Bool(b) => Value::Bool(*b),
            Literal::Int(i) => Value::Int(*i),
            Literal::Float(f) => Value::Float(*f),
            Literal::String(s) => Value::String(s.clone()),
        },
        ExprKind::Parameter(p) => params.get(p).cloned().ok_or_else(|| {
            Error::new(Status::ParameterMissing, format!("Expected parameter(s): {p}"))
        })?,
        ExprKind::List(items) => {
            Value::List(items.iter().map(|i| constant(i, params)).collect::<Result<_>>()?)
        }
        ExprKind::Map(entries) => {
            let mut m = PropertyMap::new();
            for (k, v) in entries {
                m.insert(k.name.to_string().into(), constant(v, params)?);
            }
            Value::Map(m)
        }
        ExprKind::Unary(UnaryOp::Neg, inner) => match constant(inner, params)? {
            Value::Int(i) => Value::Int(
                i.checked_neg()
                    .ok_or_else(|| Error::new(Status::ArithmeticError, "integer overflow"))?,
            ),
            Value::Float(f) => Value::Float(-f),
            other => other,
        },
        ExprKind::Function { name, args, .. } if args.len() == 1 => {
            convert(&name.dotted(), constant(&args[0], params)?)?
        }
        _ => {
            return Err(invalid(
                "Could not create vector index: OPTIONS must be a map of literal values".into(),
            ))
        }
    })
}

/// The conversion functions clients wrap option values in (`toInteger($dimensions)`).
fn convert(function: &str, v: Value) -> Result<Value> {
    Ok(match (function.to_ascii_lowercase().as_str(), v) {
        (_, Value::Null) => Value::Null,
        ("tointeger", Value::Int(i)) => Value::Int(i),
        ("tointeger", Value::Float(f)) if f.is_finite() => Value::Int(f.trunc() as i64),
        ("tointeger", Value::String(s)) => {
            s.trim().parse::<i64>().map(Value::Int).unwrap_or(Value::Null)
        }
        ("tofloat", Value::Int(i)) => Value::Float(i as f64),
        ("tofloat", Value::Float(f)) => Value::Float(f),
        ("tofloat", Value::String(s)) => {
            s.trim().parse::<f64>().map(Value::Float).unwrap_or(Value::Null)
        }
        ("toboolean", Value::Bool(b)) => Value::Bool(b),
        ("tostring", Value::String(s)) => Value::String(s),
        (f, other) => {
            return Err(invalid(format!(
                "Could not create vector index: cannot evaluate {f}({}) in OPTIONS",
                other.type_name()
            )))
        }
    })
}

/// `CREATE VECTOR INDEX`: `Ok(false)` when an equivalent index exists (or, with
/// `if_not_exists`, any index on that property).
pub(crate) fn create(
    store: &Store,
    tx: &Transaction,
    name: Option<&str>,
    if_not_exists: bool,
    target: &SchemaTarget,
    property: &str,
    options: Option<&Value>,
) -> Result<bool> {
    let settings = settings_from_options(options)?;
    let key = tx.get_or_create_token(TokenKind::PropertyKey, property)?;
    let (rel, owner) = match target {
        SchemaTarget::Node { label, .. } => {
            (false, tx.get_or_create_token(TokenKind::Label, &label.name)?)
        }
        SchemaTarget::Relationship { rel_type, .. } => {
            (true, tx.get_or_create_token(TokenKind::RelType, &rel_type.name)?)
        }
    };
    match store.create_vector_index(name, rel, owner, key, settings) {
        Err(e)
            if if_not_exists
                && matches!(
                    e.status,
                    Status::IndexAlreadyExists | Status::IndexWithNameAlreadyExists
                ) =>
        {
            Ok(false)
        }
        other => other,
    }
}

/// `db.index.vector.createNodeIndex(name, label, property, dimensions, similarity)`.
pub(crate) fn create_node_index(
    tx: &Transaction,
    name: &str,
    label: &str,
    property: &str,
    dimensions: i64,
    similarity: &str,
) -> Result<()> {
    let mut config = PropertyMap::new();
    config.insert("vector.dimensions".into(), Value::Int(dimensions));
    config.insert("vector.similarity_function".into(), Value::str(similarity));
    let mut options = PropertyMap::new();
    options.insert("indexConfig".into(), Value::Map(config));
    let settings = settings_from_options(Some(&Value::Map(options)))?;
    let owner = tx.get_or_create_token(TokenKind::Label, label)?;
    let key = tx.get_or_create_token(TokenKind::PropertyKey, property)?;
    if !tx.create_vector_index(Some(name), false, owner, key, settings)? {
        return Err(Error::new(
            Status::EquivalentSchemaRule,
            format!("An equivalent index already exists, '{name}'."),
        ));
    }
    Ok(())
}

/// The `indexConfig` entries of a vector index, in Neo4j's `createStatement` order.
fn config_entries(s: &VectorSettings) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    if let Some(d) = s.dimensions {
        out.push(("vector.dimensions", Value::Int(i64::from(d))));
    }
    out.push(("vector.hnsw.ef_construction", Value::Int(i64::from(s.ef_construction))));
    out.push(("vector.hnsw.m", Value::Int(i64::from(s.m))));
    out.push(("vector.quantization.enabled", Value::Bool(s.quantization)));
    out.push(("vector.similarity_function", Value::str(s.similarity.name())));
    out
}

/// The `options` column of a vector index.
pub(crate) fn options(s: &VectorSettings) -> Value {
    let mut config = PropertyMap::new();
    for (k, v) in config_entries(s) {
        config.insert(k.into(), v);
    }
    let mut m = PropertyMap::new();
    m.insert("indexProvider".into(), Value::str("vector-2.0"));
    m.insert("indexConfig".into(), Value::Map(config));
    Value::Map(m)
}

/// The `createStatement` column of a vector index.
pub(crate) fn create_statement(
    name: &str,
    rel: bool,
    owner: &str,
    property: &str,
    s: &VectorSettings,
) -> String {
    let config: Vec<String> = config_entries(s)
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(t) => format!("`{k}`: '{t}'"),
            other => format!("`{k}`: {}", arbor_model::to_cypher_literal(&other)),
        })
        .collect();
    let pattern = if rel {
        format!("()-[r:`{owner}`]-() ON (r.`{property}`)")
    } else {
        format!("(n:`{owner}`) ON (n.`{property}`)")
    };
    format!(
        "CREATE VECTOR INDEX `{name}` FOR {pattern} OPTIONS {{indexConfig: {{{}}}}}",
        config.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(config: Vec<(&str, Value)>) -> Value {
        let mut c = PropertyMap::new();
        for (k, v) in config {
            c.insert(k.into(), v);
        }
        let mut m = PropertyMap::new();
        m.insert("indexConfig".into(), Value::Map(c));
        Value::Map(m)
    }

    #[test]
    fn options_are_checked_as_neo4j_does() {
        let s = settings_from_options(Some(&opts(vec![
            ("vector.dimensions", Value::Int(3)),
            ("vector.similarity_function", Value::str("euclidean")),
        ])))
        .unwrap();
        assert_eq!(s.dimensions, Some(3));
        assert_eq!(s.similarity, VectorSimilarity::Euclidean);
        let err = |o| settings_from_options(Some(&o)).unwrap_err();
        let e = err(opts(vec![("vector.dimensions", Value::Int(5000))]));
        assert_eq!(e.status, Status::ExecutionFailed);
        assert_eq!(e.message, "'vector.dimensions' must be between 1 and 4096 inclusively");
        let e = err(opts(vec![("vector.similarity_function", Value::str("dot"))]));
        assert!(e.message.starts_with("'\"dot\"' is an unsupported"), "{}", e.message);
        let e = err(opts(vec![("vector.foo", Value::Int(1))]));
        assert_eq!(e.status, Status::InvalidArguments);
        assert!(e.message.contains("'{vector.foo: 1}'. 'vector.foo' is an unrecognized"));
        let e = err(opts(vec![("vector.dimensions", Value::str("3"))]));
        assert!(e.message.ends_with("'vector.dimensions'. Expected an Integer."), "{}", e.message);
    }

    #[test]
    fn create_statement_matches_neo4j() {
        let s = VectorSettings { dimensions: Some(2), ..VectorSettings::default() };
        assert_eq!(
            create_statement("i", false, "Doc", "emb", &s),
            "CREATE VECTOR INDEX `i` FOR (n:`Doc`) ON (n.`emb`) OPTIONS {indexConfig: \
             {`vector.dimensions`: 2,`vector.hnsw.ef_construction`: 100,`vector.hnsw.m`: 16,\
             `vector.quantization.enabled`: true,`vector.similarity_function`: 'COSINE'}}"
        );
    }
}
