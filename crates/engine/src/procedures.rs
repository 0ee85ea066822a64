//! Registering procedures on a [`Database`]: what the embedder registers
//! (`Database::register_procedure`), the procedures that need the database itself (warm-up,
//! APOC schema, `db.stats.*`, the TCK's test registrar), installed when it opens.
//!
//! The registry itself sits below the database (`proc_registry.rs`); registering adds to it
//! and clears the plan cache (a cached plan may have failed to resolve, or resolved an older
//! body of, the name).

pub use arbor_cypher_plan::CypherType;
pub use arbor_exec::procs::{ProcBody, Procedure};
use arbor_model::{Error, Result, Status, Value};

use crate::session::Database;

/// A procedure defined by a table, as the openCypher TCK declares test procedures:
/// `rows[i]` holds the input values followed by the output values; a call returns the outputs of
/// the rows whose inputs equal its arguments (null matches null).
#[derive(Clone, Debug)]
pub struct ProcedureSpec {
    /// Dotted name, e.g. `test.my.proc`.
    pub name: String,
    pub inputs: Vec<(String, CypherType)>,
    /// No outputs makes a `VOID` procedure.
    pub outputs: Vec<(String, CypherType)>,
    pub rows: Vec<Vec<Value>>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
}

impl Database {
    /// Registers (or replaces) a table-defined procedure; see [`ProcedureSpec`].
    pub fn register_procedure(&self, spec: ProcedureSpec) -> Result<()> {
        let p = Procedure::from_table(&spec.name, spec.inputs, spec.outputs, spec.rows)?;
        self.register_procedure_fn(p)
    }

    /// Registers (or replaces) a procedure with an arbitrary body.
    pub fn register_procedure_fn(&self, p: Procedure) -> Result<()> {
        if !valid_name(&p.sig.name) {
            return Err(Error::new(
                Status::ArgumentError,
                format!("`{}` is not a valid procedure name", p.sig.name),
            ));
        }
        self.procedures_registry().add(p);
        self.clear_plan_cache();
        Ok(())
    }

    /// Every procedure `CALL` can resolve, sorted by name (for `SHOW PROCEDURES`).
    pub fn procedures(&self) -> Vec<Procedure> {
        self.procedures_registry().snapshot().iter().cloned().collect()
    }
}

/// The environment variable that enables [`TEST_REGISTRAR`] (set by the TCK harness when it
/// starts a server for its Bolt run).
pub const TEST_PROCEDURES_ENV: &str = "ARBOR_TCK_PROCEDURES";

/// `CALL arbor.test.registerProcedure(name, inputs, outputs, rows)`: registers a table-defined
/// procedure over a connection, so the TCK's `there exists a procedure` step also works against
/// a server. `inputs`/`outputs` are lists of `"name :: TYPE"` strings. Only present when
/// [`TEST_PROCEDURES_ENV`] is `1`: it lets any client add procedures.
pub const TEST_REGISTRAR: &str = "arbor.test.registerProcedure";

/// `CALL arbor.test.resetProcedures()`: drops every registered procedure (the built-ins and
/// the two test procedures stay), so scenarios sharing a server do not see each other's.
pub const TEST_RESET: &str = "arbor.test.resetProcedures";

/// Installs the warm-up and APOC schema procedures, and [`TEST_REGISTRAR`] when the environment asks for it.
pub(crate) fn install_test_hooks(db: &Database) {
    install_warmup(db);
    crate::show::install(db);
    crate::apoc_schema::install(db);
    crate::db_stats::install(db);
    crate::backup::install(db);
    if std::env::var(TEST_PROCEDURES_ENV).is_ok_and(|v| v == "1") {
        db.enable_test_procedures();
    }
}

impl Database {
    /// Offers [`TEST_REGISTRAR`] on this database (what [`TEST_PROCEDURES_ENV`]`=1` does for
    /// databases opened by a server). For test servers only: any client can then add
    /// procedures.
    pub fn enable_test_procedures(&self) {
        let db = self;
        let weak = db.downgrade();
        let columns = |list: &Value| -> Result<Vec<(String, CypherType)>> {
            let Value::List(items) = list else { return Ok(Vec::new()) };
            items
                .iter()
                .map(|it| {
                    let parsed = match it {
                        Value::String(s) => s
                            .split_once("::")
                            .and_then(|(n, t)| Some((n.trim().to_string(), CypherType::parse(t)?))),
                        _ => None,
                    };
                    parsed.ok_or_else(|| {
                        Error::new(Status::ArgumentError, format!("bad column `{it:?}`"))
                    })
                })
                .collect()
        };
        let body = move |args: &[Value], _: &mut dyn arbor_exec::graph::Graph| {
            let db = Database::upgrade(&weak).ok_or_else(|| {
                Error::new(Status::TransactionTerminated, "the database is shut down")
            })?;
            let name = match args.first() {
                Some(Value::String(s)) => s.to_string(),
                _ => return Err(Error::new(Status::ArgumentError, "a procedure name is needed")),
            };
            let null = Value::Null;
            let rows = match args.get(3).unwrap_or(&null) {
                Value::List(rows) => rows
                    .iter()
                    .map(|r| match r {
                        Value::List(vals) => Ok(vals.clone()),
                        _ => Err(Error::new(Status::ArgumentError, "each row must be a list")),
                    })
                    .collect::<Result<Vec<_>>>()?,
                _ => Vec::new(),
            };
            db.register_procedure(ProcedureSpec {
                name,
                inputs: columns(args.get(1).unwrap_or(&null))?,
                outputs: columns(args.get(2).unwrap_or(&null))?,
                rows,
            })?;
            Ok(Vec::new())
        };
        let list = |t: CypherType| CypherType::List(Box::new(t));
        let mut p = Procedure::new(
            TEST_REGISTRAR,
            vec![
                ("name".into(), CypherType::String),
                ("inputs".into(), list(CypherType::String)),
                ("outputs".into(), list(CypherType::String)),
                ("rows".into(), list(list(CypherType::Any))),
            ],
            vec![],
            "Registers a table-defined procedure (openCypher TCK support; test servers only).",
            body,
        );
        p.writes = true;
        // The name is valid, so registration cannot fail.
        let _ = db.register_procedure_fn(p);
        let weak = db.downgrade();
        let reset = move |_: &[Value], _: &mut dyn arbor_exec::graph::Graph| {
            if let Some(db) = Database::upgrade(&weak) {
                db.procedures_registry().reset();
                db.clear_plan_cache();
                install_warmup(&db);
                crate::apoc_schema::install(&db);
                crate::db_stats::install(&db);
                db.enable_test_procedures();
            }
            Ok(Vec::new())
        };
        let mut p = Procedure::new(
            TEST_RESET,
            vec![],
            vec![],
            "Removes every registered procedure (openCypher TCK support; test servers only).",
            reset,
        );
        p.writes = true;
        let _ = db.register_procedure_fn(p);
    }
}

// ------------------------------------------------------------------------------ warm-up

/// The unit `apoc.warmup.run` reports in: Neo4j's page size. Arbor's page cache pages are
/// 4 KiB; a "page" here is 8 KiB of its in-memory columns.
const PAGE: u64 = 8192;

/// What one warm-up pass read.
#[derive(Default)]
struct Warmed {
    nodes: u64,
    rels: u64,
    props: u64,
    string_props: u64,
    array_props: u64,
    nodes_ms: u64,
    rels_ms: u64,
    props_ms: u64,
}

/// Touches every node (labels and adjacency in both directions) and relationship (ends and
/// type), and with `props` every property value, through the transaction's snapshot; logs
/// progress for large stores.
fn warm(g: &mut dyn arbor_exec::graph::Graph, props: bool) -> Warmed {
    use arbor_exec::graph::Direction;
    use arbor_model::{NodeId, RelId};
    use std::time::Instant;
    let mut w = Warmed::default();
    let total_nodes = g.count_nodes(None);
    let count_value = |v: &Value, w: &mut Warmed| match v {
        Value::String(_) => w.string_props += 1,
        Value::List(_) | Value::Bytes(_) => w.array_props += 1,
        _ => {}
    };
    let mut prop_time = std::time::Duration::ZERO;
    let t = Instant::now();
    let mut edges = Vec::new();
    let mut next = 0;
    let mut sink = 0u64;
    while let Some(NodeId(id)) = g.next_node(None, NodeId(next)) {
        next = id + 1;
        sink = sink.wrapping_add(g.node_labels(NodeId(id)).len() as u64);
        edges.clear();
        g.node_edges(NodeId(id), Direction::Both, &[], &mut edges);
        sink = sink.wrapping_add(edges.len() as u64);
        if props {
            let p = Instant::now();
            for (_, v) in g.node_properties(NodeId(id)) {
                w.props += 1;
                count_value(&v, &mut w);
            }
            prop_time += p.elapsed();
        }
        w.nodes += 1;
        if w.nodes % 1_000_000 == 0 {
            tracing::info!("warm-up: {} of {} nodes", w.nodes, total_nodes);
        }
    }
    w.nodes_ms = (t.elapsed() - prop_time).as_millis() as u64;
    let t = Instant::now();
    let before = prop_time;
    let mut next = 0;
    while let Some(RelId(id)) = g.next_rel(&[], RelId(next)) {
        next = id + 1;
        if let Some((a, b, ty)) = g.rel_info(RelId(id)) {
            sink = sink.wrapping_add(a.0 ^ b.0 ^ u64::from(ty));
        }
        if props {
            let p = Instant::now();
            for (_, v) in g.rel_properties(RelId(id)) {
                w.props += 1;
                count_value(&v, &mut w);
            }
            prop_time += p.elapsed();
        }
        w.rels += 1;
        if w.rels % 5_000_000 == 0 {
            tracing::info!("warm-up: {} relationships", w.rels);
        }
    }
    w.rels_ms = (t.elapsed() - (prop_time - before)).as_millis() as u64;
    w.props_ms = prop_time.as_millis() as u64;
    std::hint::black_box(sink);
    w
}

fn per_page(count: u64, bytes: u64) -> i64 {
    count.saturating_mul(PAGE).checked_div(bytes).unwrap_or(0) as i64
}

fn pages(bytes: u64) -> i64 {
    bytes.div_ceil(PAGE) as i64
}

fn flag_arg(args: &[Value], i: usize) -> Result<bool> {
    match args.get(i) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(Error::new(
            Status::ArgumentError,
            format!("warm-up flags are booleans, got {}", v.type_name()),
        )),
    }
}

/// Registers `db.warmup()` and `apoc.warmup.run([loadProperties, loadDynamicProperties,
/// loadIndexes])` (APOC's output columns; see `docs` in the README for what the numbers mean).
fn install_warmup(db: &Database) {
    use std::time::Instant;
    let int = |n: &str| (n.to_string(), CypherType::Integer);
    let boolean = |n: &str| (n.to_string(), CypherType::Boolean);
    let weak = db.downgrade();
    let body = move |args: &[Value], g: &mut dyn arbor_exec::graph::Graph| {
        let db = Database::upgrade(&weak).ok_or_else(|| {
            Error::new(Status::TransactionTerminated, "the database is shut down")
        })?;
        let load_props = flag_arg(args, 0)?;
        let load_dynamic = flag_arg(args, 1)? && load_props;
        let load_indexes = flag_arg(args, 2)?;
        let t = Instant::now();
        db.store().warm_base()?;
        let stats = db.store().memory_stats().base;
        let w = warm(g, load_props);
        let prop_bytes = stats.node_property_bytes + stats.rel_property_bytes;
        let i = |v: u64| Value::Int(v as i64);
        let (np, rp, pp) =
            (stats.node_bytes, stats.rel_bytes, if load_props { prop_bytes } else { 0 });
        let dynamic = |count: u64| if load_dynamic { i(count) } else { i(0) };
        let row = vec![
            i(PAGE),
            i(t.elapsed().as_millis() as u64),
            Value::Bool(false),
            Value::Int(per_page(w.nodes, np)),
            i(w.nodes),
            Value::Int(pages(np)),
            i(w.nodes_ms),
            Value::Int(per_page(w.rels, rp)),
            i(w.rels),
            Value::Int(pages(rp)),
            i(w.rels_ms),
            // Arbor has no relationship-group records (adjacency is CSR).
            i(0),
            i(0),
            i(0),
            i(0),
            Value::Bool(load_props),
            Value::Bool(load_dynamic),
            Value::Int(per_page(w.props, pp)),
            i(w.props),
            Value::Int(pages(pp)),
            i(w.props_ms),
            // Strings and arrays are stored inline in the property blobs: counted, no own pages.
            i(0),
            dynamic(w.string_props),
            i(0),
            i(0),
            i(0),
            dynamic(w.array_props),
            i(0),
            i(0),
            Value::Bool(load_indexes),
            Value::Int(if load_indexes { pages(stats.index_bytes) } else { 0 }),
            i(0),
        ];
        Ok(vec![row])
    };
    let outputs = vec![
        int("pageSize"),
        int("totalTime"),
        boolean("transactionWasTerminated"),
        int("nodesPerPage"),
        int("nodesTotal"),
        int("nodePages"),
        int("nodesTime"),
        int("relsPerPage"),
        int("relsTotal"),
        int("relPages"),
        int("relsTime"),
        int("relGroupsPerPage"),
        int("relGroupsTotal"),
        int("relGroupPages"),
        int("relGroupsTime"),
        boolean("propertiesLoaded"),
        boolean("dynamicPropertiesLoaded"),
        int("propsPerPage"),
        int("propRecordsTotal"),
        int("propPages"),
        int("propsTime"),
        int("stringPropsPerPage"),
        int("stringPropRecordsTotal"),
        int("stringPropPages"),
        int("stringPropsTime"),
        int("arrayPropsPerPage"),
        int("arrayPropRecordsTotal"),
        int("arrayPropPages"),
        int("arrayPropsTime"),
        boolean("indexesLoaded"),
        int("indexPages"),
        int("indexTime"),
    ];
    let mut p = Procedure::new(
        "apoc.warmup.run",
        vec![boolean("loadProperties"), boolean("loadDynamicProperties"), boolean("loadIndexes")],
        outputs,
        "Reads into memory the parts of the store that fit the memory limit, then every node \
         and relationship (and, if asked, every property) of the store once; \
         reports APOC's columns, with pages meaning 8 KiB of Arbor's in-memory columns.",
        body,
    );
    p.sig.optional = 3;
    let _ = db.register_procedure_fn(p);

    let weak = db.downgrade();
    let body = move |_: &[Value], g: &mut dyn arbor_exec::graph::Graph| {
        let db = Database::upgrade(&weak).ok_or_else(|| {
            Error::new(Status::TransactionTerminated, "the database is shut down")
        })?;
        let t = Instant::now();
        db.store().warm_base()?;
        let s = db.store().memory_stats().base;
        let w = warm(g, true);
        let bytes = s.node_bytes
            + s.node_property_bytes
            + s.rel_bytes
            + s.rel_property_bytes
            + s.index_bytes;
        let i = |v: u64| Value::Int(v as i64);
        Ok(vec![vec![
            i(w.nodes),
            i(w.rels),
            i(w.props),
            i(bytes),
            i(t.elapsed().as_millis() as u64),
        ]])
    };
    let p = Procedure::new(
        "db.warmup",
        vec![],
        vec![
            int("nodes"),
            int("relationships"),
            int("properties"),
            int("bytes"),
            int("timeMillis"),
        ],
        "Reads into memory the parts of the store that fit the memory limit (a store opens \
         with them in its segment file), then every node, relationship and property once; \
         reports how many, the store's in-memory size and the time taken.",
        body,
    );
    let _ = db.register_procedure_fn(p);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TxConfig;
    use arbor_model::PropertyMap;

    fn rows(db: &Database, q: &str) -> Result<Vec<Vec<Value>>> {
        let mut s = db.session();
        s.run(q, PropertyMap::new(), TxConfig::default())?;
        let mut out = Vec::new();
        loop {
            let mut sink = |r: Vec<arbor_model::ResultValue>| {
                out.push(r.into_iter().map(Value::from).collect());
                Ok(())
            };
            if let crate::PullOutcome::Done(_) = s.pull(None, -1, &mut sink)? {
                return Ok(out);
            }
        }
    }

    /// `Value` has no `PartialEq` (Cypher equality is three-valued); compare renderings.
    fn dbg(rows: &[Vec<Value>]) -> String {
        format!("{rows:?}")
    }

    #[test]
    fn registered_procedures_are_callable_and_replace_cached_failures() {
        let db = Database::in_memory();
        let q = "CALL test.answer(1) YIELD out RETURN out";
        let e = rows(&db, q).unwrap_err();
        assert_eq!(e.status, Status::ProcedureNotFound);
        db.register_procedure(ProcedureSpec {
            name: "test.answer".into(),
            inputs: vec![("in".into(), CypherType::Integer)],
            outputs: vec![("out".into(), CypherType::String)],
            rows: vec![
                vec![Value::Int(1), Value::from("one")],
                vec![Value::Int(2), Value::from("two")],
            ],
        })
        .unwrap();
        assert_eq!(dbg(&rows(&db, q).unwrap()), dbg(&[vec![Value::from("one")]]));
        // A literal of the wrong type is a compile-time error.
        let e = rows(&db, "CALL test.answer('x')").unwrap_err();
        assert_eq!(e.detail, Some("InvalidArgumentType"));
        assert!(db.procedures().iter().any(|p| p.sig.name == "db.labels"));
        assert!(db
            .register_procedure(ProcedureSpec {
                name: "bad name".into(),
                inputs: vec![],
                outputs: vec![],
                rows: vec![],
            })
            .is_err());
    }

    #[test]
    fn show_procedures_and_functions_list_the_catalog() {
        let db = Database::in_memory();
        db.register_procedure(ProcedureSpec {
            name: "test.void".into(),
            inputs: vec![],
            outputs: vec![],
            rows: vec![],
        })
        .unwrap();
        let r = rows(&db, "SHOW PROCEDURES YIELD name, signature RETURN name, signature").unwrap();
        let text = dbg(&r);
        assert!(text.contains("db.schema.visualization"), "{text}");
        assert!(text.contains("test.void() :: VOID"), "{text}");
        let r = rows(&db, "SHOW FUNCTIONS YIELD name, aggregating WHERE name = 'count' RETURN *")
            .unwrap();
        assert_eq!(dbg(&r), dbg(&[vec![Value::Bool(true), Value::from("count")]]));
    }

    #[test]
    fn warmup_procedures_report_counts() {
        let db = Database::in_memory();
        rows(&db, "CREATE (:A {name: 'x', tags: ['a']})-[:R {w: 1}]->(:B), (:C)").unwrap();
        let r = rows(&db, "CALL db.warmup()").unwrap();
        assert_eq!(dbg(&[r[0][..3].to_vec()]), "[[Int(3), Int(1), Int(3)]]");
        assert!(matches!(r[0][3], Value::Int(b) if b > 0));
        let r = rows(&db, "CALL apoc.warmup.run() YIELD nodesTotal, relsTotal, propertiesLoaded, propRecordsTotal \
             RETURN propertiesLoaded, propRecordsTotal, relsTotal, nodesTotal").unwrap();
        assert_eq!(dbg(&r), "[[Bool(false), Int(0), Int(1), Int(3)]]");
        let r = rows(&db, "CALL apoc.warmup.run(true, true, false) YIELD propRecordsTotal, stringPropRecordsTotal, arrayPropRecordsTotal RETURN propRecordsTotal, stringPropRecordsTotal, arrayPropRecordsTotal").unwrap();
        assert_eq!(dbg(&r), "[[Int(3), Int(1), Int(1)]]");
        assert!(rows(&db, "CALL apoc.warmup.run(true, true, true, true)").is_err());
        let r = rows(&db, "CALL apoc.warmup.run()").unwrap();
        assert_eq!(r[0].len(), 32);
    }

    #[test]
    fn builtin_procedures_answer() {
        let db = Database::in_memory();
        rows(&db, "CREATE (:A)-[:T]->(:B {k: 1})").unwrap();
        let r = rows(&db, "CALL db.labels() YIELD label RETURN label ORDER BY label").unwrap();
        assert_eq!(dbg(&r), dbg(&[vec![Value::from("A")], vec![Value::from("B")]]));
        let r = rows(&db, "CALL dbms.components() YIELD edition RETURN edition").unwrap();
        assert_eq!(dbg(&r), dbg(&[vec![Value::from("community")]]));
        let r = rows(&db, "CALL db.schema.visualization()").unwrap();
        match &r[0][..] {
            [Value::List(nodes), Value::List(rels)] => {
                assert_eq!(nodes.len(), 2);
                assert_eq!(rels.len(), 1);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
