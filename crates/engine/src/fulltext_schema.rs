//! The schema side of FULLTEXT indexes on a [`Database`]: `CREATE FULLTEXT INDEX` and `DROP
//! INDEX` of one (with Neo4j's `OPTIONS` checks and errors), and their rows in `SHOW INDEXES`.

use arbor_cypher_syntax::ast::{Expr, ExprKind, Ident, Literal, SchemaCommand};
use arbor_exec::graph::Stats;
use arbor_fulltext::{AnalyzerSpec, DEFAULT_ANALYZER};
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::fulltext::{create, default_name, name_exists};
use crate::fulltext_doc::FulltextDef;
use crate::fulltext_live::Phase;
use crate::session::Database;

/// Handles the schema commands that concern full-text indexes: `CREATE FULLTEXT INDEX`, `DROP
/// INDEX` of a full-text index, and (refused) other rules named like one. `None`: not ours.
pub(crate) fn schema_command(
    db: &Database,
    cmd: &SchemaCommand,
    params: &PropertyMap,
) -> Result<Option<Stats>> {
    let reg = db.fulltext();
    let mut stats = Stats::default();
    let name_taken = |name: &str| db.store().indexes().iter().any(|ix| ix.name == name);
    match cmd {
        SchemaCommand::CreateFulltextIndex {
            name,
            if_not_exists,
            relationship,
            labels,
            properties,
            options,
            ..
        } => {
            let (analyzer, eventually_consistent) =
                index_options(options.as_ref(), *relationship, params)?;
            let names = |v: &[Ident]| v.iter().map(|i| i.name.to_string()).collect::<Vec<_>>();
            let mut def = FulltextDef {
                name: String::new(),
                relationship: *relationship,
                labels: names(labels),
                properties: names(properties),
                analyzer,
                eventually_consistent,
            };
            def.name = match name {
                Some(n) => n.name.to_string(),
                None => default_name(&def),
            };
            if create(reg, def, *if_not_exists, &name_taken)? {
                stats.indexes_added += 1;
            }
        }
        SchemaCommand::DropIndex { name: Some(n), .. } if reg.get(&n.name).is_some() => {
            reg.change(|defs| {
                defs.retain(|d| *d.name != *n.name);
                Ok(())
            })?;
            stats.indexes_removed += 1;
        }
        SchemaCommand::CreateIndex { name: Some(n), if_not_exists, .. }
        | SchemaCommand::CreateVectorIndex { name: Some(n), if_not_exists, .. }
        | SchemaCommand::CreateConstraint { name: Some(n), if_not_exists, .. }
            if reg.get(&n.name).is_some() =>
        {
            if !*if_not_exists {
                return Err(name_exists(&n.name));
            }
        }
        _ => return Ok(None),
    }
    Ok(Some(stats))
}

/// The analyzer and eventual-consistency flag an `OPTIONS` map asks for, checked as Neo4j
/// checks them.
fn index_options(
    options: Option<&Expr>,
    relationship: bool,
    params: &PropertyMap,
) -> Result<(String, bool)> {
    let mut analyzer = DEFAULT_ANALYZER.to_string();
    let mut eventually = false;
    let Some(options) = options else { return Ok((analyzer, eventually)) };
    let kind = if relationship { "relationship" } else { "node" };
    let Value::Map(map) = literal(options, params)? else {
        return Err(Error::syntax(format!(
            "Failed to create fulltext {kind} index: the OPTIONS must be a map."
        )));
    };
    for (key, value) in map.iter() {
        match (&**key, value) {
            ("indexProvider", Value::String(p)) if &**p == "fulltext-1.0" => {}
            ("indexProvider", v) => {
                return Err(Error::new(
                    Status::InvalidArguments,
                    format!(
                        "Could not create fulltext index with specified index provider {}.\n\
                         The available index providers for the given type: ['fulltext-1.0'].",
                        quoted(v)
                    ),
                ))
            }
            ("indexConfig", Value::Map(config)) => {
                for (k, v) in config.iter() {
                    match (&**k, v) {
                        ("fulltext.analyzer", Value::String(a)) => {
                            if AnalyzerSpec::named(a).is_none() {
                                return Err(Error::new(
                                    Status::ExecutionFailed,
                                    format!("No such full-text analyzer: '{a}'."),
                                ));
                            }
                            analyzer = a.to_string();
                        }
                        ("fulltext.eventually_consistent", Value::Bool(b)) => eventually = *b,
                        ("fulltext.analyzer" | "fulltext.eventually_consistent", v) => {
                            let want = if k.ends_with("analyzer") { "String" } else { "Boolean" };
                            return Err(Error::new(
                                Status::ExecutionFailed,
                                format!(
                                    "Invalid value type for '{k}' setting. Expected a value of \
                                     type java.lang.{want}, but got value {} of type {}.",
                                    quoted(v),
                                    v.type_name()
                                ),
                            ));
                        }
                        _ => {
                            return Err(Error::new(
                                Status::ExecutionFailed,
                                format!(
                                    "Invalid index config key '{k}', it was not recognized as \
                                     an index setting."
                                ),
                            ))
                        }
                    }
                }
            }
            ("indexConfig", _) => {
                return Err(Error::syntax(format!(
                    "Failed to create fulltext {kind} index: Could not create index with \
                     specified index config, expected a map."
                )))
            }
            _ => {
                return Err(Error::syntax(format!(
                    "Failed to create fulltext {kind} index: Invalid option provided, valid \
                     options are `indexProvider` and `indexConfig`."
                )))
            }
        }
    }
    Ok((analyzer, eventually))
}

fn quoted(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => format!("{other:?}"),
    }
}

/// The value of a literal (maps, lists and scalars as written) or a parameter (`OPTIONS $map`,
/// as neo4j-graphrag sends it); `OPTIONS` takes no other expressions.
fn literal(e: &Expr, params: &PropertyMap) -> Result<Value> {
    Ok(match &e.kind {
        ExprKind::Literal(Literal::Null) => Value::Null,
        ExprKind::Literal(Literal::Bool(b)) => Value::Bool(*b),
        ExprKind::Literal(Literal::Int(i)) => Value::Int(*i),
        ExprKind::Literal(Literal::Float(f)) => Value::Float(*f),
        ExprKind::Literal(Literal::String(s)) => Value::from(&**s),
        ExprKind::List(items) => {
            Value::List(items.iter().map(|i| literal(i, params)).collect::<Result<_>>()?)
        }
        ExprKind::Parameter(name) => params.get(name).cloned().ok_or_else(|| {
            Error::new(Status::ParameterMissing, format!("Expected parameter(s): {name}"))
        })?,
        ExprKind::Map(entries) => {
            let mut m = PropertyMap::new();
            for (k, v) in entries {
                m.insert(k.name.to_string().into(), literal(v, params)?);
            }
            Value::Map(m)
        }
        _ => {
            return Err(Error::syntax(
                "Full-text index OPTIONS must be a literal map (parameters and expressions are \
                 not supported)",
            ))
        }
    })
}

/// The `SHOW INDEXES` rows of the FULLTEXT indexes (all columns), with ids after `first_id`.
pub(crate) fn show_rows(db: &Database, first_id: usize) -> Vec<Vec<Value>> {
    let strings = |v: &[String]| Value::List(v.iter().map(|x| Value::from(x.as_str())).collect());
    db.fulltext()
        .list()
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            let (state, progress) = match db.fulltext().live(&d.name) {
                Some(l) => match l.phase() {
                    Phase::Online => ("ONLINE", 100.0),
                    Phase::Populating => ("POPULATING", l.progress()),
                    Phase::Failed(_) => ("FAILED", l.progress()),
                },
                None => ("ONLINE", 100.0),
            };
            vec![
                Value::Int((first_id + i + 1) as i64),
                Value::from(d.name.as_str()),
                Value::from(state),
                Value::Float(progress),
                Value::from("FULLTEXT"),
                Value::from(if d.relationship { "RELATIONSHIP" } else { "NODE" }),
                strings(&d.labels),
                strings(&d.properties),
                Value::from("fulltext-1.0"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                d.options(),
                Value::from(""),
                Value::from(d.create_statement()),
            ]
        })
        .collect()
}
