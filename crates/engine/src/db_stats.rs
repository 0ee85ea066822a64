//! Neo4j's `db.stats.*` procedures with 5.26's signatures and columns: `retrieve(section,
//! config)` answers `GRAPH COUNTS` (node and relationship counts per label and type, the
//! indexes and the constraints: what tools such as Neo4j's query analysers read) and
//! `TOKENS`; `collect`, `stop`, `clear` and `status` manage the `QUERIES` section.
//!
//! Arbor records no query statistics, so `QUERIES` is never collecting: `collect` answers that
//! collection is not offered, `stop` that none runs, `retrieve('QUERIES')` has no rows, and
//! `status` has no rows. Counts come from the transaction's count store, so they are exact
//! for the caller's snapshot.

use arbor_cypher_plan::CypherType;
use arbor_exec::graph::{Graph, TokenKind as GK};
use arbor_exec::procs::Procedure;
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use arbor_storage::{IndexInfo, IndexKind, Store, TokenKind as K};

use crate::session::Database;

const SECTIONS: &str = "[GRAPH COUNTS, TOKENS, QUERIES]";

fn map(entries: Vec<(&str, Value)>) -> Value {
    let mut m = PropertyMap::new();
    for (k, v) in entries {
        m.insert(k.into(), v);
    }
    Value::Map(m)
}

fn strings(items: Vec<String>) -> Value {
    Value::List(items.into_iter().map(|s| Value::str(&s)).collect())
}

fn invalid(msg: String) -> Error {
    Error::new(Status::InvalidArguments, msg)
}

/// The section argument, upper-cased as Neo4j compares it; unknown sections are refused.
fn section(args: &[Value]) -> Result<String> {
    let name = match args.first() {
        Some(Value::String(s)) => s.to_uppercase(),
        _ => String::new(),
    };
    match name.as_str() {
        "GRAPH COUNTS" | "TOKENS" | "QUERIES" => Ok(name),
        _ => Err(invalid(format!(
            "Unknown section '{}', known sections are {SECTIONS}",
            match args.first() {
                Some(Value::String(s)) => s.to_string(),
                _ => "null".to_string(),
            }
        ))),
    }
}

/// `collect`/`stop`/`clear` on a section that is always available.
fn not_collected(section: &str) -> Error {
    invalid(format!(
        "Section '{section}' does not have to be explicitly collected, it can always be directly \
         retrieved."
    ))
}

/// Registers the procedures on `db`.
pub(crate) fn install(db: &Database) {
    let result = || {
        vec![
            ("section".to_string(), CypherType::String),
            ("success".to_string(), CypherType::Boolean),
            ("message".to_string(), CypherType::String),
        ]
    };
    let section_arg = || vec![("section".to_string(), CypherType::String)];
    let config_arg = ("config".to_string(), CypherType::Map);
    let weak = db.downgrade();
    let mut retrieve = Procedure::new(
        "db.stats.retrieve",
        vec![section_arg()[0].clone(), config_arg.clone()],
        vec![("section".into(), CypherType::String), ("data".into(), CypherType::Map)],
        "Retrieve statistical data about the current database. Valid sections are 'GRAPH \
         COUNTS', 'TOKENS', 'QUERIES', 'META'.",
        move |args, g| {
            let db = Database::upgrade(&weak).ok_or_else(shut_down)?;
            let name = section(args)?;
            Ok(match name.as_str() {
                "GRAPH COUNTS" => vec![vec![Value::str(&name), graph_counts(db.store(), g)]],
                "TOKENS" => vec![vec![Value::str(&name), tokens(g)]],
                _ => Vec::new(),
            })
        },
    );
    retrieve.sig.optional = 1;
    let mut collect = Procedure::new(
        "db.stats.collect",
        vec![section_arg()[0].clone(), config_arg],
        result(),
        "Start data collection of a given data section. Valid sections are 'QUERIES'.",
        |args, _| {
            let name = section(args)?;
            if name != "QUERIES" {
                return Err(not_collected(&name));
            }
            Ok(vec![vec![
                Value::str(&name),
                Value::Bool(false),
                Value::str("Arbor does not collect query statistics."),
            ]])
        },
    );
    collect.sig.optional = 1;
    let stop = Procedure::new(
        "db.stats.stop",
        section_arg(),
        result(),
        "Stop data collection of a given data section. Valid sections are 'QUERIES'.",
        |args, _| {
            let name = section(args)?;
            if name != "QUERIES" {
                return Err(not_collected(&name));
            }
            Ok(vec![vec![Value::str(&name), Value::Bool(true), Value::str("Collection stopped.")]])
        },
    );
    let clear = Procedure::new(
        "db.stats.clear",
        section_arg(),
        result(),
        "Clear collected data of a given data section. Valid sections are 'QUERIES'.",
        |args, _| {
            let name = section(args)?;
            if name != "QUERIES" {
                return Err(not_collected(&name));
            }
            Ok(vec![vec![Value::str(&name), Value::Bool(true), Value::str("Data cleared.")]])
        },
    );
    let status = Procedure::new(
        "db.stats.status",
        vec![],
        vec![
            ("section".into(), CypherType::String),
            ("status".into(), CypherType::String),
            ("data".into(), CypherType::Map),
        ],
        "Retrieve the status of all available collector daemons, for this database.",
        |_, _| {
            Ok(vec![vec![
                Value::str("QUERIES"),
                Value::str("idle"),
                Value::Map(PropertyMap::new()),
            ]])
        },
    );
    for p in [retrieve, collect, stop, clear, status] {
        // The names are valid; registration only fails on an invalid name.
        let _ = db.register_procedure_fn(p);
    }
}

fn shut_down() -> Error {
    Error::new(Status::TransactionTerminated, "the database is shut down")
}

/// `{labels, relationshipTypes, propertyKeys}`: every token name.
fn tokens(g: &mut dyn Graph) -> Value {
    let names = |kind| strings(g.tokens(kind).into_iter().map(|(_, n)| n).collect());
    map(vec![
        ("labels", names(GK::Label)),
        ("relationshipTypes", names(GK::RelType)),
        ("propertyKeys", names(GK::PropertyKey)),
    ])
}

/// The `GRAPH COUNTS` section: `{nodes, relationships, indexes, constraints}`.
fn graph_counts(store: &Store, g: &mut dyn Graph) -> Value {
    let labels = g.tokens(GK::Label);
    let types = g.tokens(GK::RelType);
    let mut nodes = vec![map(vec![("count", count(g.count_nodes(None)))])];
    for (id, name) in &labels {
        let n = g.count_nodes(Some(*id));
        nodes.push(map(vec![("label", Value::str(name)), ("count", count(n))]));
    }
    let rel_count = |s, t, e| g.count_rels_by_labels(s, t, e).unwrap_or(0);
    let mut rels = vec![map(vec![("count", count(rel_count(None, None, None)))])];
    for (t, tname) in &types {
        let n = rel_count(None, Some(*t), None);
        rels.push(map(vec![("relationshipType", Value::str(tname)), ("count", count(n))]));
    }
    // Per type and start (or end) label, only where there are some, as Neo4j lists them.
    for (t, tname) in &types {
        for (l, lname) in &labels {
            for (side, key) in [(true, "startLabel"), (false, "endLabel")] {
                let n = if side {
                    rel_count(Some(*l), Some(*t), None)
                } else {
                    rel_count(None, Some(*t), Some(*l))
                };
                if n > 0 {
                    rels.push(map(vec![
                        ("relationshipType", Value::str(tname)),
                        (key, Value::str(lname)),
                        ("count", count(n)),
                    ]));
                }
            }
        }
    }
    let (indexes, constraints) = schema(store, g);
    map(vec![
        ("nodes", Value::List(nodes)),
        ("relationships", Value::List(rels)),
        ("indexes", Value::List(indexes)),
        ("constraints", Value::List(constraints)),
    ])
}

fn count(n: u64) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The index and constraint entries of `GRAPH COUNTS`: the two token lookup indexes first,
/// then each index (a constraint's backing index too), then each constraint.
fn schema(store: &Store, g: &mut dyn Graph) -> (Vec<Value>, Vec<Value>) {
    let lookup = |owner: &str| {
        map(vec![
            ("indexType", Value::str("LOOKUP")),
            ("indexProvider", Value::str("token-lookup-1.0")),
            (owner, Value::List(Vec::new())),
            ("properties", Value::List(Vec::new())),
            ("totalSize", Value::Int(0)),
            ("estimatedUniqueSize", Value::Int(0)),
            ("updatesSinceEstimation", Value::Int(0)),
        ])
    };
    let mut indexes = vec![lookup("labels"), lookup("relationshipTypes")];
    let mut constraints = Vec::new();
    let mut infos: Vec<IndexInfo> = store.indexes();
    infos.sort_by(|a, b| a.name.cmp(&b.name));
    for ix in &infos {
        let owner_kind = if ix.relationship { K::RelType } else { K::Label };
        let owner = store.token_name(owner_kind, ix.label).unwrap_or_default();
        let props: Vec<String> =
            ix.properties.iter().filter_map(|k| store.token_name(K::PropertyKey, *k)).collect();
        let owner_key = if ix.relationship { "relationshipTypes" } else { "labels" };
        if ix.kind.has_index() {
            let size = index_size(g, ix);
            let (index_type, provider) = match ix.kind {
                IndexKind::Vector => ("VECTOR", "vector-2.0"),
                _ => ("RANGE", "range-1.0"),
            };
            indexes.push(map(vec![
                ("indexType", Value::str(index_type)),
                ("indexProvider", Value::str(provider)),
                (owner_key, strings(vec![owner.clone()])),
                ("properties", strings(props.clone())),
                ("totalSize", count(size)),
                ("estimatedUniqueSize", count(size)),
                ("updatesSinceEstimation", Value::Int(0)),
            ]));
        }
        if ix.kind.is_constraint() {
            let kind = match ix.kind {
                IndexKind::Uniqueness => "Uniqueness constraint",
                IndexKind::NodeKey if ix.relationship => "Relationship Key constraint",
                IndexKind::NodeKey => "Node Key constraint",
                _ => "Existence constraint",
            };
            let owner_key = if ix.relationship { "relationshipType" } else { "label" };
            constraints.push(map(vec![
                (owner_key, Value::str(&owner)),
                ("type", Value::str(kind)),
                ("properties", strings(props)),
            ]));
        }
    }
    (indexes, constraints)
}

/// Entries of an index: the nodes (or relationships) with its label (type); exact for a
/// single-property index where every such entity has the property, an upper bound otherwise.
fn index_size(g: &mut dyn Graph, ix: &IndexInfo) -> u64 {
    if ix.relationship {
        g.count_rels_by_labels(None, Some(ix.label), None).unwrap_or(0)
    } else {
        g.count_nodes(Some(ix.label))
    }
}
