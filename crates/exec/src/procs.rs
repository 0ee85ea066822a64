//! Procedures: the built-ins (`db.labels()`, `dbms.components()`, ...) and a [`Registry`] that
//! embedders (and the TCK harness) extend with their own.
//!
//! A procedure is a signature plus a body over evaluated, type-checked arguments. The binder
//! resolves `CALL name(...)` against a registry when the query is prepared; the prepared query
//! keeps the procedures it uses, so a cached plan runs the body it was bound to.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use arbor_cypher_plan::CypherType;
use arbor_model::{Error, NodeData, NodeId, PropertyMap, RelData, RelId, Result, Status, Value};

use crate::graph::{Graph, TokenKind};

mod apoc;
mod gds;
mod procedure;
mod vector;

pub(crate) use procedure::col;
pub use procedure::{check_args, ProcBody, Procedure, Registry};

impl Registry {
    /// A registry holding the built-in procedures, with a fresh (empty) GDS graph catalog:
    /// each database builds its own.
    pub fn with_builtins() -> Registry {
        let mut r = Registry::default();
        let all = builtins().into_iter().chain(apoc::procedures()).chain(vector::procedures());
        for p in all.chain(gds::procedures()) {
            r.procs.insert(p.sig.name.clone(), p);
        }
        r
    }

    /// The shared built-ins-only registry.
    pub fn builtins() -> &'static Registry {
        static REG: OnceLock<Registry> = OnceLock::new();
        REG.get_or_init(Registry::with_builtins)
    }
}

fn s(v: &str) -> Value {
    Value::from(v)
}

fn builtins() -> Vec<Procedure> {
    use CypherType as T;
    let list_of = |t: T| T::List(Box::new(t));
    vec![
        Procedure::new(
            "db.labels",
            vec![],
            vec![col("label", T::String)],
            "List all labels attached to nodes within a database.",
            |_, g| {
                // Labels in use, in token-creation order (as Neo4j lists them).
                Ok(g.tokens(TokenKind::Label)
                    .into_iter()
                    .filter(|(t, _)| g.count_nodes(Some(*t)) > 0)
                    .map(|(_, n)| vec![Value::from(n)])
                    .collect())
            },
        ),
        Procedure::new(
            "db.relationshipTypes",
            vec![],
            vec![col("relationshipType", T::String)],
            "List all types attached to relationships within a database.",
            |_, g| {
                Ok(g.tokens(TokenKind::RelType)
                    .into_iter()
                    .filter(|(t, _)| g.next_rel(&[*t], RelId(0)).is_some())
                    .map(|(_, n)| vec![Value::from(n)])
                    .collect())
            },
        ),
        Procedure::new(
            "db.propertyKeys",
            vec![],
            vec![col("propertyKey", T::String)],
            "List all property keys in the database.",
            |_, g| {
                Ok(g.tokens(TokenKind::PropertyKey)
                    .into_iter()
                    .map(|(_, n)| vec![Value::from(n)])
                    .collect())
            },
        ),
        Procedure::new(
            "dbms.components",
            vec![],
            vec![
                col("name", T::String),
                col("versions", list_of(T::String)),
                col("edition", T::String),
            ],
            "List DBMS components and their versions.",
            |_, _| {
                Ok(vec![vec![
                    s("Neo4j Kernel"),
                    Value::List(vec![s(NEO4J_COMPAT_VERSION)]),
                    s("community"),
                ]])
            },
        ),
        Procedure::new(
            "db.schema.visualization",
            vec![],
            vec![col("nodes", list_of(T::Node)), col("relationships", list_of(T::Relationship))],
            "Visualizes the schema of the data based on available statistics.",
            schema_visualization,
        ),
        {
            let mut p = Procedure::new(
                "db.awaitIndexes",
                vec![col("timeOutSeconds", T::Integer)],
                vec![],
                "Wait for all indexes to come online (for example: CALL db.awaitIndexes(300)).",
                |args, g| {
                    g.await_indexes(None, timeout_arg(args.first())?)?;
                    Ok(Vec::new())
                },
            );
            p.sig.optional = 1;
            p
        },
        {
            let mut p = Procedure::new(
                "db.awaitIndex",
                vec![col("indexName", T::String), col("timeOutSeconds", T::Integer)],
                vec![],
                "Wait for an index to come online (for example: CALL db.awaitIndex(\"MyIndex\", 300)).",
                |args, g| {
                    let name = match args.first() {
                        Some(Value::String(s)) => s.to_string(),
                        _ => {
                            return Err(Error::new(
                                Status::ArgumentError,
                                "db.awaitIndex needs an index name",
                            ))
                        }
                    };
                    g.await_indexes(Some(&name), timeout_arg(args.get(1))?)?;
                    Ok(Vec::new())
                },
            );
            p.sig.optional = 1;
            p
        },
        Procedure::new(
            "db.ping",
            vec![],
            vec![col("success", T::Boolean)],
            "This procedure can be used by client side tooling to test whether they are correctly connected to a database.",
            |_, _| Ok(vec![vec![Value::Bool(true)]]),
        ),
    ]
}

/// The `timeOutSeconds` argument of the await procedures (default 300 s, as in Neo4j).
pub fn timeout_arg(v: Option<&Value>) -> Result<std::time::Duration> {
    match v {
        None | Some(Value::Null) => Ok(std::time::Duration::from_secs(300)),
        Some(Value::Int(n)) if *n >= 0 => Ok(std::time::Duration::from_secs(*n as u64)),
        Some(other) => Err(Error::new(
            Status::ArgumentError,
            format!("timeOutSeconds must be a non-negative integer, got {other:?}"),
        )),
    }
}

/// The Neo4j version drivers and tools are told they talk to: `dbms.components()`, the Bolt
/// server agent (`Neo4j/<version>`) and the HTTP discovery document all read it. The Bolt and
/// Cypher features Arbor implements are those of this release (the Neo4j 5.26 the answers are
/// compared with reports 5.26.30).
pub const NEO4J_COMPAT_VERSION: &str = "5.26.30";

/// `db.schema.visualization()`: one virtual node per label in use (named after it) and one
/// virtual relationship per (start label, type, end label) combination that occurs. Virtual
/// entities get ids from the top of the id space so they never collide with real ones.
fn schema_visualization(_: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const VIRTUAL_BASE: u64 = u64::MAX / 2;
    let labels: Vec<(u32, String)> = g
        .tokens(TokenKind::Label)
        .into_iter()
        .filter(|(t, _)| g.count_nodes(Some(*t)) > 0)
        .collect();
    let mut nodes = Vec::new();
    let mut index = BTreeMap::new();
    for (i, (tok, name)) in labels.iter().enumerate() {
        let id = NodeId(VIRTUAL_BASE + i as u64);
        index.insert(*tok, id);
        let mut props = PropertyMap::new();
        props.insert("name".into(), Value::from(name.as_str()));
        props.insert("indexes".into(), Value::List(Vec::new()));
        props.insert("constraints".into(), Value::List(Vec::new()));
        nodes.push(Value::NodeData(Arc::new(NodeData {
            id,
            labels: vec![name.clone()],
            properties: props,
        })));
    }
    // (start label, type, end label) triples, found by walking every relationship once.
    let mut triples = std::collections::BTreeSet::new();
    let mut cursor = RelId(0);
    let mut seen = 0usize;
    while let Some(r) = g.next_rel(&[], cursor) {
        cursor = RelId(r.0 + 1);
        seen += 1;
        // Bounded work: a schema sample is enough for a visualization.
        if seen > 100_000 {
            break;
        }
        let Some((a, b, t)) = g.rel_info(r) else { continue };
        for la in g.node_labels(a) {
            for lb in g.node_labels(b) {
                triples.insert((la, t, lb));
            }
        }
    }
    let mut rels = Vec::new();
    for (i, (la, t, lb)) in triples.into_iter().enumerate() {
        let (Some(start), Some(end)) = (index.get(&la), index.get(&lb)) else { continue };
        let rel_type = g.token_name(TokenKind::RelType, t).unwrap_or_default();
        rels.push(Value::RelData(Arc::new(RelData {
            id: RelId(VIRTUAL_BASE + i as u64),
            start: *start,
            end: *end,
            rel_type,
            properties: PropertyMap::new(),
        })));
    }
    Ok(vec![vec![Value::List(nodes), Value::List(rels)]])
}
