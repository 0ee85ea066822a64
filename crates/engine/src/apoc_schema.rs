//! APOC's schema procedures, which need the store's schema and not only a transaction:
//! `apoc.schema.assert(indexes, constraints[, dropExisting])` (what langchain-neo4j calls to
//! reset a schema) and `apoc.schema.nodes()` (what neo4j-graphrag and llama-index read to find
//! RANGE indexes and their selectivity), with APOC 5's columns.
//!
//! Like schema commands, the changes `apoc.schema.assert` makes commit on their own, outside
//! the calling transaction.

use std::collections::HashSet;

use arbor_cypher_plan::CypherType;
use arbor_exec::graph::{Graph, TokenKind as GK};
use arbor_exec::procs::Procedure;
use arbor_model::{Error, GroupKey, Result, Status, Value};
use arbor_storage::{IndexInfo, IndexKind, Store, TokenKind as K};

use crate::session::Database;

/// Registers the procedures on `db`.
pub(crate) fn install(db: &Database) {
    let weak = db.downgrade();
    let assert = Procedure {
        writes: true,
        ..Procedure::new(
            "apoc.schema.assert",
            vec![
                ("indexes".into(), CypherType::Map),
                ("constraints".into(), CypherType::Map),
                ("dropExisting".into(), CypherType::Boolean),
            ],
            result_columns(),
            "Drops all other existing indexes and constraints when `dropExisting` is true \
             (default), and ensures the given indexes and unique constraints exist.",
            move |args, _g| {
                let db = Database::upgrade(&weak).ok_or_else(shut_down)?;
                let out = schema_assert(&db, args);
                db.clear_plan_cache();
                out
            },
        )
    };
    let mut assert = assert;
    assert.sig.optional = 1;
    let weak = db.downgrade();
    let nodes = Procedure::new(
        "apoc.schema.nodes",
        vec![("config".into(), CypherType::Map)],
        vec![
            ("name".into(), CypherType::String),
            ("label".into(), CypherType::Any),
            ("properties".into(), CypherType::List(Box::new(CypherType::String))),
            ("status".into(), CypherType::String),
            ("type".into(), CypherType::String),
            ("failure".into(), CypherType::String),
            ("populationProgress".into(), CypherType::Float),
            ("size".into(), CypherType::Integer),
            ("valuesSelectivity".into(), CypherType::Float),
            ("userDescription".into(), CypherType::String),
        ],
        "Returns all node labels' indexes and constraints.",
        move |_args, g| {
            let db = Database::upgrade(&weak).ok_or_else(shut_down)?;
            schema_nodes(db.store(), g)
        },
    );
    let mut nodes = nodes;
    nodes.sig.optional = 1;
    for p in [assert, nodes] {
        // Both names are valid; registration only fails on an invalid name.
        let _ = db.register_procedure_fn(p);
    }
}

fn shut_down() -> Error {
    Error::new(Status::TransactionTerminated, "the database is shut down")
}

fn result_columns() -> Vec<(String, CypherType)> {
    vec![
        ("label".into(), CypherType::Any),
        ("key".into(), CypherType::String),
        ("keys".into(), CypherType::List(Box::new(CypherType::String))),
        ("unique".into(), CypherType::Boolean),
        ("action".into(), CypherType::String),
    ]
}

/// One asserted rule: a label and its keys (one key, or several for a composite rule).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Wanted {
    label: String,
    keys: Vec<String>,
}

/// `{Label: ['a', ['b', 'c']]}` to rules; anything else is an argument error naming the part.
fn wanted(arg: Option<&Value>, what: &str) -> Result<Vec<Wanted>> {
    let bad = |m: String| {
        Error::new(
            Status::ArgumentError,
            format!("Failed to invoke procedure `apoc.schema.assert`: {what}: {m}"),
        )
    };
    let map = match arg {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Map(m)) => m,
        Some(other) => return Err(bad(format!("expected a map, got {}", other.type_name()))),
    };
    let mut out = Vec::new();
    for (label, entries) in map.iter() {
        let Value::List(entries) = entries else {
            return Err(bad(format!("the value of `{}` must be a list", label.as_str())));
        };
        for e in entries {
            let keys = match e {
                Value::String(k) => vec![k.to_string()],
                Value::List(ks) => ks
                    .iter()
                    .map(|k| match k {
                        Value::String(k) => Ok(k.to_string()),
                        other => {
                            Err(bad(format!("a key must be a string, got {}", other.type_name())))
                        }
                    })
                    .collect::<Result<_>>()?,
                other => {
                    return Err(bad(format!("a key must be a string, got {}", other.type_name())))
                }
            };
            out.push(Wanted { label: label.as_str().to_string(), keys });
        }
    }
    Ok(out)
}

fn row(w: &Wanted, unique: bool, action: &str) -> Vec<Value> {
    let key = if w.keys.len() == 1 { Value::str(&w.keys[0]) } else { Value::Null };
    vec![
        Value::str(&w.label),
        key,
        Value::List(w.keys.iter().map(|k| Value::str(k)).collect()),
        Value::Bool(unique),
        Value::str(action),
    ]
}

/// The rule an existing node index or constraint stands for (`None` for relationship rules
/// whose type has no name, which cannot happen for a live rule).
fn existing(store: &Store, ix: &IndexInfo) -> Option<Wanted> {
    let owner = if ix.relationship { K::RelType } else { K::Label };
    let keys: Option<Vec<String>> =
        ix.properties.iter().map(|k| store.token_name(K::PropertyKey, *k)).collect();
    Some(Wanted { label: store.token_name(owner, ix.label)?, keys: keys? })
}

fn schema_assert(db: &Database, args: &[Value]) -> Result<Vec<Vec<Value>>> {
    let indexes = wanted(args.first(), "indexes")?;
    let constraints = wanted(args.get(1), "constraints")?;
    let drop_existing = !matches!(args.get(2), Some(Value::Bool(false)));
    let store = db.store();
    let mut rows = Vec::new();
    for unique in [false, true] {
        let asserted = if unique { &constraints } else { &indexes };
        let mut missing: Vec<&Wanted> = Vec::new();
        let mut seen = HashSet::new();
        for w in asserted {
            if seen.insert(w) {
                missing.push(w);
            }
        }
        for ix in store.indexes() {
            if ix.kind.is_constraint() != unique {
                continue;
            }
            let Some(have) = existing(store, &ix) else { continue };
            if let Some(pos) = missing.iter().position(|w| **w == have && !ix.relationship) {
                missing.remove(pos);
                rows.push(row(&have, unique, "KEPT"));
            } else if drop_existing {
                let dropped = if unique {
                    store.drop_constraint(&ix.name)?
                } else {
                    store.drop_index(&ix.name)?
                };
                if dropped {
                    rows.push(row(&have, unique, "DROPPED"));
                }
            }
        }
        for w in missing {
            create(store, w, unique)?;
            rows.push(row(w, unique, "CREATED"));
        }
    }
    Ok(rows)
}

/// Creates a RANGE index, a uniqueness constraint (one key) or a node key (several keys).
fn create(store: &Store, w: &Wanted, unique: bool) -> Result<()> {
    let tx = store.begin(false);
    let tokens = (|| -> Result<_> {
        let label = tx.get_or_create_token(K::Label, &w.label)?;
        let keys: Vec<u32> = w
            .keys
            .iter()
            .map(|k| tx.get_or_create_token(K::PropertyKey, k))
            .collect::<Result<_>>()?;
        Ok((label, keys))
    })();
    tx.rollback();
    let (label, keys) = tokens?;
    let kind = match (unique, keys.len()) {
        (false, _) => IndexKind::Range,
        (true, 1) => IndexKind::Uniqueness,
        (true, _) => IndexKind::NodeKey,
    };
    store.create_rule(kind, label, &keys, None).map(|_| ())
}

/// One row per node constraint and node index (in APOC's order), with the index's size and selectivity
/// computed from the data the calling transaction sees.
fn schema_nodes(store: &Store, g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for ix in store.indexes().into_iter().filter(|ix| !ix.relationship) {
        let Some(w) = existing(store, &ix) else { continue };
        let (size, selectivity) =
            if ix.kind.is_constraint() { (0, 0.0) } else { size_and_selectivity(g, &w)? };
        let props = w.keys.join(", ");
        let description = format!(
            "Index( name='{}', type='{}', schema=(:{} {{{props}}}) )",
            ix.name,
            ix.kind.type_name(),
            w.label
        );
        rows.push((
            !ix.kind.is_constraint(),
            w.label.clone(),
            vec![
                Value::str(&ix.name),
                Value::str(&w.label),
                Value::List(w.keys.iter().map(|k| Value::str(k)).collect()),
                Value::str(ix.state),
                Value::str(ix.kind.type_name()),
                Value::str("NO FAILURE"),
                Value::Float(ix.population_percent),
                Value::Int(size),
                Value::Float(selectivity),
                Value::str(&description),
            ],
        ));
    }
    // APOC lists constraints, then indexes, each group stably sorted by label.
    rows.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    Ok(rows.into_iter().map(|(_, _, row)| row).collect())
}

/// Entries of the index (nodes of the label with every key present) and distinct entries
/// over entries (1.0 for an empty index, as Neo4j reports).
fn size_and_selectivity(g: &mut dyn Graph, w: &Wanted) -> Result<(i64, f64)> {
    let Some(label) = g.token_id(GK::Label, &w.label) else { return Ok((0, 1.0)) };
    let keys: Option<Vec<_>> = w.keys.iter().map(|k| g.token_id(GK::PropertyKey, k)).collect();
    let Some(keys) = keys else { return Ok((0, 1.0)) };
    let mut distinct: HashSet<Vec<GroupKey>> = HashSet::new();
    let (mut size, mut at) = (0i64, arbor_model::NodeId(0));
    while let Some(id) = g.next_node(Some(label), at) {
        at = arbor_model::NodeId(id.0 + 1);
        let vals: Option<Vec<Value>> = keys.iter().map(|k| g.node_property(id, *k)).collect();
        if let Some(vals) = vals {
            size += 1;
            distinct.insert(vals.iter().map(arbor_model::group_key).collect());
        }
    }
    let selectivity = if size == 0 { 1.0 } else { distinct.len() as f64 / size as f64 };
    Ok((size, selectivity))
}
