//! The warm-up procedures `db.warmup()` and `apoc.warmup.run([loadProperties,
//! loadDynamicProperties, loadIndexes])` (APOC's output columns), over
//! [`arbor_storage::Store::warm_up`]: the parts of the base that fit three quarters of the
//! memory limit read into memory, then the page cache filled with the pages of the rest in
//! query order until it is full, so the process stays within the budget whatever the store's
//! size. Counts come from the count store (nodes, relationships) and the base's statistics
//! (property values as of the last checkpoint); "pages" are 8 KiB, Neo4j's page size, of
//! what is now in memory (promoted parts and page-cache pages) per part; times are the page
//! reads' per part.

use std::time::Instant;

use arbor_cypher_plan::CypherType;
use arbor_exec::procs::Procedure;
use arbor_model::{Error, Result, Status, Value};
use arbor_storage::WarmUp;

use crate::session::Database;

/// The unit `apoc.warmup.run` reports in: Neo4j's page size (Arbor's page cache pages are
/// 4 KiB).
const PAGE: u64 = 8192;

/// Part indexes of [`WarmUp`]'s arrays.
const NODES: usize = 0;
const INDEX: usize = 1;
const RELS: usize = 2;
const NODE_PROPS: usize = 3;
const REL_PROPS: usize = 4;

/// Bytes of part `i` now in memory: promoted, or read into the page cache.
fn resident(w: &WarmUp, i: usize) -> u64 {
    w.in_memory[i] + w.pages_read[i] * 4096
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

/// The totals a warm-up reports: nodes and relationships of the snapshot, property values of
/// the base.
fn totals(db: &Database, g: &mut dyn arbor_exec::graph::Graph) -> (u64, u64, u64) {
    let s = db.store().memory_stats().base;
    let nodes = g.count_nodes(None);
    let rels = g.count_rels(&[]).unwrap_or(s.relationships);
    (nodes, rels, s.node_properties + s.rel_properties)
}

fn alive(db: Option<Database>) -> Result<Database> {
    db.ok_or_else(|| Error::new(Status::TransactionTerminated, "the database is shut down"))
}

/// Registers both procedures (see the module docs).
pub(crate) fn install(db: &Database) {
    install_apoc(db);
    let weak = db.downgrade();
    let body = move |_: &[Value], g: &mut dyn arbor_exec::graph::Graph| {
        let db = alive(Database::upgrade(&weak))?;
        let t = Instant::now();
        let w = db.store().warm_up(true)?;
        let (nodes, rels, props) = totals(&db, g);
        let bytes: u64 = (0..5).map(|i| resident(&w, i)).sum();
        let i = |v: u64| Value::Int(v as i64);
        Ok(vec![vec![i(nodes), i(rels), i(props), i(bytes), i(t.elapsed().as_millis() as u64)]])
    };
    let int = |n: &str| (n.to_string(), CypherType::Integer);
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
        "Reads into memory the parts of the store that fit three quarters of the memory limit, \
         then fills the page cache with the pages of the rest in query order until it is full; \
         reports the nodes, relationships and property values, the bytes now in memory and the \
         time taken.",
        body,
    );
    let _ = db.register_procedure_fn(p);
}

fn install_apoc(db: &Database) {
    let int = |n: &str| (n.to_string(), CypherType::Integer);
    let boolean = |n: &str| (n.to_string(), CypherType::Boolean);
    let weak = db.downgrade();
    let body = move |args: &[Value], g: &mut dyn arbor_exec::graph::Graph| {
        let db = alive(Database::upgrade(&weak))?;
        let load_props = flag_arg(args, 0)?;
        let load_dynamic = flag_arg(args, 1)? && load_props;
        let load_indexes = flag_arg(args, 2)?;
        let t = Instant::now();
        let w = db.store().warm_up(load_props)?;
        let (nodes, rels, props) = totals(&db, g);
        let i = |v: u64| Value::Int(v as i64);
        let (np, rp) = (resident(&w, NODES), resident(&w, RELS));
        let pp = if load_props { resident(&w, NODE_PROPS) + resident(&w, REL_PROPS) } else { 0 };
        let props = if load_props { props } else { 0 };
        let props_ms = if load_props { w.millis[NODE_PROPS] + w.millis[REL_PROPS] } else { 0 };
        let row = vec![
            i(PAGE),
            i(t.elapsed().as_millis() as u64),
            Value::Bool(false),
            Value::Int(per_page(nodes, np)),
            i(nodes),
            Value::Int(pages(np)),
            i(w.millis[NODES]),
            Value::Int(per_page(rels, rp)),
            i(rels),
            Value::Int(pages(rp)),
            i(w.millis[RELS]),
            // Arbor has no relationship-group records (adjacency is CSR).
            i(0),
            i(0),
            i(0),
            i(0),
            Value::Bool(load_props),
            Value::Bool(load_dynamic),
            Value::Int(per_page(props, pp)),
            i(props),
            Value::Int(pages(pp)),
            i(props_ms),
            // Strings and arrays are stored inline in the property blobs: no records of their
            // own (the blobs' pages are the property pages above).
            i(0),
            i(0),
            i(0),
            i(0),
            i(0),
            i(0),
            i(0),
            i(0),
            Value::Bool(load_indexes),
            Value::Int(if load_indexes { pages(resident(&w, INDEX)) } else { 0 }),
            i(if load_indexes { w.millis[INDEX] } else { 0 }),
        ];
        Ok(vec![row])
    };
    let names = [
        "pageSize",
        "totalTime",
        "transactionWasTerminated",
        "nodesPerPage",
        "nodesTotal",
        "nodePages",
        "nodesTime",
        "relsPerPage",
        "relsTotal",
        "relPages",
        "relsTime",
        "relGroupsPerPage",
        "relGroupsTotal",
        "relGroupPages",
        "relGroupsTime",
        "propertiesLoaded",
        "dynamicPropertiesLoaded",
        "propsPerPage",
        "propRecordsTotal",
        "propPages",
        "propsTime",
        "stringPropsPerPage",
        "stringPropRecordsTotal",
        "stringPropPages",
        "stringPropsTime",
        "arrayPropsPerPage",
        "arrayPropRecordsTotal",
        "arrayPropPages",
        "arrayPropsTime",
        "indexesLoaded",
        "indexPages",
        "indexTime",
    ];
    let bools = [
        "transactionWasTerminated",
        "propertiesLoaded",
        "dynamicPropertiesLoaded",
        "indexesLoaded",
    ];
    let outputs =
        names.iter().map(|n| if bools.contains(n) { boolean(n) } else { int(n) }).collect();
    let mut p = Procedure::new(
        "apoc.warmup.run",
        vec![boolean("loadProperties"), boolean("loadDynamicProperties"), boolean("loadIndexes")],
        outputs,
        "Reads into memory the parts of the store that fit three quarters of the memory limit, \
         then fills the page cache with the pages of the rest (property pages only with \
         loadProperties) in query order until it is full; reports APOC's columns, with pages \
         meaning 8 KiB of what is now in memory.",
        body,
    );
    p.sig.optional = 3;
    let _ = db.register_procedure_fn(p);
}
