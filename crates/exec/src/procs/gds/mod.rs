//! Graph Data Science basics under GDS's names: a per-database catalog of in-memory named
//! projections (`gds.graph.project`/`drop`/`list`/`exists`) and, in [`algo`], Dijkstra
//! shortest paths, PageRank and weakly connected components over them, with GDS's
//! configuration keys, defaults and result columns.
//!
//! A projection is a snapshot, taken when projected, of the chosen nodes (by label, `'*'` for
//! all) and relationships (by type, each `NATURAL`, `REVERSE` or `UNDIRECTED`) with at most
//! one numeric relationship property (the weight; missing values read as its
//! `defaultValue`, else 1.0). Later writes to the database do not change it, as in GDS.
//! The catalog lives as long as the database's procedure registry (it is not persisted).

mod algo;
mod registry;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arbor_cypher_plan::CypherType as T;
use arbor_model::{Error, NodeId, PropertyMap, RelId, Result, Status, Value};

use crate::graph::{Direction, Graph, TokenKind};
use crate::procs::{col, Procedure};
pub(crate) use registry::procedures;

/// The database name GDS reports.
const DATABASE: &str = "neo4j";

/// One projected relationship, from the adjacency list's owner to `to`.
#[derive(Clone, Copy)]
pub(super) struct Arc2 {
    to: u32,
    weight: f64,
    rel: RelId,
}

/// A named in-memory projection.
pub(super) struct Projection {
    name: String,
    /// Projection index -> node id, ascending.
    nodes: Vec<NodeId>,
    index: HashMap<NodeId, u32>,
    /// Outgoing adjacency (after orientation) per projection index.
    out: Vec<Vec<Arc2>>,
    rel_count: usize,
    /// The weight property's name, if one was projected.
    weight: Option<String>,
    node_projection: PropertyMap,
    rel_projection: PropertyMap,
    config: PropertyMap,
    created: String,
}

type Catalog = Arc<Mutex<BTreeMap<String, Arc<Projection>>>>;

/// A ProcedureCallFailed naming the procedure, as GDS's Java exceptions surface.
pub(super) fn failed(proc_name: &str, what: &str) -> Error {
    Error::new(
        Status::ProcedureCallFailed,
        format!(
            "Failed to invoke procedure `{proc_name}`: Caused by: java.lang.IllegalArgumentException: {what}"
        ),
    )
}

fn info_columns() -> Vec<(String, T)> {
    vec![
        col("graphName", T::String),
        col("database", T::String),
        col("nodeCount", T::Integer),
        col("relationshipCount", T::Integer),
        col("configuration", T::Map),
        col("density", T::Float),
        col("creationTime", T::Any),
        col("nodeProjection", T::Map),
        col("relationshipProjection", T::Map),
    ]
}

fn info_row(p: &Projection) -> Vec<Value> {
    let n = p.nodes.len() as f64;
    let density = if n > 1.0 { p.rel_count as f64 / (n * (n - 1.0)) } else { 0.0 };
    vec![
        Value::from(p.name.as_str()),
        Value::from(DATABASE),
        Value::Int(p.nodes.len() as i64),
        Value::Int(p.rel_count as i64),
        Value::Map(p.config.clone()),
        Value::Float(density),
        Value::from(p.created.as_str()),
        Value::Map(p.node_projection.clone()),
        Value::Map(p.rel_projection.clone()),
    ]
}

fn name_arg(proc_name: &str, v: Option<&Value>) -> Result<String> {
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.to_string()),
        _ => Err(failed(proc_name, "`graphName` can not be null or blank, but it was `null`")),
    }
}

fn catalog_procedures(catalog: &Catalog) -> Vec<Procedure> {
    let (c1, c2, c3, c4) = (catalog.clone(), catalog.clone(), catalog.clone(), catalog.clone());
    let mut project = Procedure::new(
        "gds.graph.project",
        vec![
            col("graphName", T::String),
            col("nodeProjection", T::Any),
            col("relationshipProjection", T::Any),
            col("configuration", T::Map),
        ],
        vec![
            col("nodeProjection", T::Map),
            col("relationshipProjection", T::Map),
            col("graphName", T::String),
            col("nodeCount", T::Integer),
            col("relationshipCount", T::Integer),
            col("projectMillis", T::Integer),
        ],
        "Creates a named graph in the catalog for use by algorithms.",
        move |a, g| project(&c1, a, g),
    );
    project.sig.optional = 1;
    let mut drop = Procedure::new(
        "gds.graph.drop",
        vec![col("graphName", T::Any), col("failIfMissing", T::Boolean)],
        info_columns(),
        "Drops a named graph from the catalog and frees up the resources it occupies.",
        move |a, _| {
            let fail = !matches!(a.get(1), Some(Value::Bool(false)));
            let names: Vec<String> = match a.first() {
                Some(Value::List(items)) => items
                    .iter()
                    .map(|v| name_arg("gds.graph.drop", Some(v)))
                    .collect::<Result<_>>()?,
                v => vec![name_arg("gds.graph.drop", v)?],
            };
            let mut cat = c2.lock().unwrap_or_else(|e| e.into_inner());
            if fail {
                if let Some(missing) = names.iter().find(|n| !cat.contains_key(*n)) {
                    return Err(not_found("gds.graph.drop", missing));
                }
            }
            Ok(names.iter().filter_map(|n| cat.remove(n)).map(|p| info_row(&p)).collect())
        },
    );
    drop.sig.optional = 1;
    let mut list = Procedure::new(
        "gds.graph.list",
        vec![col("graphName", T::String)],
        info_columns(),
        "Lists information about named graphs stored in the catalog.",
        move |a, _| {
            let cat = c3.lock().unwrap_or_else(|e| e.into_inner());
            let only = match a.first() {
                Some(Value::String(s)) => Some(s.to_string()),
                _ => None,
            };
            Ok(cat
                .values()
                .filter(|p| only.as_ref().is_none_or(|o| *o == p.name))
                .map(|p| info_row(p))
                .collect())
        },
    );
    list.sig.optional = 1;
    let exists = Procedure::new(
        "gds.graph.exists",
        vec![col("graphName", T::String)],
        vec![col("graphName", T::String), col("exists", T::Boolean)],
        "Checks if a graph exists in the catalog.",
        move |a, _| {
            let name = name_arg("gds.graph.exists", a.first())?;
            let found = c4.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&name);
            Ok(vec![vec![Value::from(name), Value::Bool(found)]])
        },
    );
    vec![project, drop, list, exists]
}

fn not_found(proc_name: &str, name: &str) -> Error {
    Error::new(
        Status::ProcedureCallFailed,
        format!(
            "Failed to invoke procedure `{proc_name}`: Caused by: java.util.NoSuchElementException: \
             Graph with name `{name}` does not exist on database `{DATABASE}`. It might exist on \
             another database."
        ),
    )
}

/// The projection named by an algorithm's first argument.
pub(super) fn lookup(
    catalog: &Catalog,
    proc_name: &str,
    v: Option<&Value>,
) -> Result<Arc<Projection>> {
    let name = name_arg(proc_name, v)?;
    let cat = catalog.lock().unwrap_or_else(|e| e.into_inner());
    cat.get(&name).cloned().ok_or_else(|| not_found(proc_name, &name))
}

/// Node labels (`None`: all nodes) and the node projection map GDS reports.
fn parse_nodes(v: &Value) -> Result<(Option<Vec<String>>, PropertyMap)> {
    const P: &str = "gds.graph.project";
    let entry = |label: &str| {
        let mut m = PropertyMap::new();
        m.insert("label".into(), Value::from(label));
        m.insert("properties".into(), Value::Map(PropertyMap::new()));
        Value::Map(m)
    };
    let mut report = PropertyMap::new();
    let labels: Vec<String> = match v {
        Value::String(s) if &**s == "*" => {
            report.insert("__ALL__".into(), entry("*"));
            return Ok((None, report));
        }
        Value::String(s) => vec![s.to_string()],
        Value::List(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.to_string()),
                _ => Err(failed(P, "node labels must be strings")),
            })
            .collect::<Result<_>>()?,
        Value::Map(m) => {
            let mut out = Vec::new();
            for (alias, spec) in m.iter() {
                let label = match spec {
                    Value::String(s) => s.to_string(),
                    Value::Map(sm) => match sm.get("label") {
                        Some(Value::String(s)) => s.to_string(),
                        _ => alias.as_str().to_string(),
                    },
                    _ => return Err(failed(P, "a node projection entry must be a map")),
                };
                report.insert(alias.clone(), entry(&label));
                out.push(label);
            }
            if out.iter().any(|l| l == "*") {
                return Ok((None, report));
            }
            return Ok((Some(out), report));
        }
        _ => return Err(failed(P, "nodeProjection must be a string, list or map")),
    };
    if labels.iter().any(|l| l == "*") {
        report.insert("__ALL__".into(), entry("*"));
        return Ok((None, report));
    }
    for l in &labels {
        report.insert(l.as_str().into(), entry(l));
    }
    Ok((Some(labels), report))
}

/// One relationship projection entry: type (`None`: all), orientation, weight property and
/// its default.
struct RelSpec {
    ty: Option<String>,
    orientation: String,
    property: Option<(String, f64)>,
}

fn parse_properties(v: Option<&Value>) -> Result<Option<(String, f64)>> {
    const P: &str = "gds.graph.project";
    Ok(match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some((s.to_string(), 1.0)),
        Some(Value::List(items)) => match items.as_slice() {
            [] => None,
            [Value::String(s)] => Some((s.to_string(), 1.0)),
            _ => return Err(failed(P, "only one relationship property (the weight) is supported")),
        },
        Some(Value::Map(m)) => match m.iter().next() {
            None => None,
            Some(_) if m.len() > 1 => {
                return Err(failed(P, "only one relationship property (the weight) is supported"))
            }
            Some((alias, spec)) => {
                let (prop, default) = match spec {
                    Value::Map(sm) => (
                        match sm.get("property") {
                            Some(Value::String(s)) => s.to_string(),
                            _ => alias.as_str().to_string(),
                        },
                        match sm.get("defaultValue") {
                            Some(Value::Int(i)) => *i as f64,
                            Some(Value::Float(f)) => *f,
                            _ => 1.0,
                        },
                    ),
                    Value::String(s) => (s.to_string(), 1.0),
                    _ => (alias.as_str().to_string(), 1.0),
                };
                Some((prop, default))
            }
        },
        Some(_) => return Err(failed(P, "relationship properties must be a string, list or map")),
    })
}

fn parse_rels(v: &Value, cfg: &PropertyMap) -> Result<(Vec<RelSpec>, PropertyMap)> {
    const P: &str = "gds.graph.project";
    let default_prop = parse_properties(cfg.get("relationshipProperties"))?;
    let spec = |ty: &str, orientation: &str, property: Option<(String, f64)>| RelSpec {
        ty: (ty != "*").then(|| ty.to_string()),
        orientation: orientation.to_ascii_uppercase(),
        property,
    };
    let mut specs = Vec::new();
    let mut aliases = Vec::new();
    match v {
        Value::String(s) => {
            specs.push(spec(s, "NATURAL", default_prop.clone()));
            aliases.push(if &**s == "*" { "__ALL__".to_string() } else { s.to_string() });
        }
        Value::List(items) => {
            for i in items {
                let Value::String(s) = i else {
                    return Err(failed(P, "relationship types must be strings"));
                };
                specs.push(spec(s, "NATURAL", default_prop.clone()));
                aliases.push(s.to_string());
            }
        }
        Value::Map(m) => {
            for (alias, entry) in m.iter() {
                let (ty, orientation, prop) = match entry {
                    Value::String(s) => {
                        (s.to_string(), "NATURAL".to_string(), default_prop.clone())
                    }
                    Value::Map(em) => (
                        match em.get("type") {
                            Some(Value::String(s)) => s.to_string(),
                            _ => alias.as_str().to_string(),
                        },
                        match em.get("orientation") {
                            Some(Value::String(s)) => s.to_string(),
                            _ => "NATURAL".to_string(),
                        },
                        parse_properties(em.get("properties"))?.or(default_prop.clone()),
                    ),
                    _ => return Err(failed(P, "a relationship projection entry must be a map")),
                };
                specs.push(spec(&ty, &orientation, prop));
                aliases.push(alias.as_str().to_string());
            }
        }
        _ => return Err(failed(P, "relationshipProjection must be a string, list or map")),
    }
    let mut report = PropertyMap::new();
    for (s, alias) in specs.iter().zip(aliases) {
        if !["NATURAL", "REVERSE", "UNDIRECTED"].contains(&s.orientation.as_str()) {
            return Err(failed(P, &format!("Orientation `{}` is not supported.", s.orientation)));
        }
        let mut m = PropertyMap::new();
        m.insert("type".into(), Value::from(s.ty.as_deref().unwrap_or("*")));
        m.insert("orientation".into(), Value::from(s.orientation.as_str()));
        m.insert("aggregation".into(), Value::from("DEFAULT"));
        m.insert("indexInverse".into(), Value::Bool(false));
        let mut props = PropertyMap::new();
        if let Some((p, d)) = &s.property {
            let mut pm = PropertyMap::new();
            pm.insert("property".into(), Value::from(p.as_str()));
            pm.insert("defaultValue".into(), Value::Float(*d));
            pm.insert("aggregation".into(), Value::from("DEFAULT"));
            props.insert(p.as_str().into(), Value::Map(pm));
        }
        m.insert("properties".into(), Value::Map(props));
        report.insert(alias.into(), Value::Map(m));
    }
    let weights: Vec<&str> =
        specs.iter().filter_map(|s| s.property.as_ref().map(|p| p.0.as_str())).collect();
    if weights.windows(2).any(|w| w[0] != w[1]) {
        return Err(failed(P, "every relationship projection must use the same weight property"));
    }
    Ok((specs, report))
}

fn project(catalog: &Catalog, a: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const P: &str = "gds.graph.project";
    let started = Instant::now();
    let name = name_arg(P, a.first())?;
    let cfg = match a.get(3) {
        Some(Value::Map(m)) => m.clone(),
        _ => PropertyMap::new(),
    };
    let (labels, node_report) = parse_nodes(a.get(1).unwrap_or(&Value::Null))?;
    let (specs, rel_report) = parse_rels(a.get(2).unwrap_or(&Value::Null), &cfg)?;
    if catalog.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&name) {
        return Err(failed(P, &format!("A graph with name '{name}' already exists.")));
    }
    // Nodes, ascending by id.
    let mut nodes: Vec<NodeId> = Vec::new();
    let label_toks: Option<Vec<_>> = labels
        .as_ref()
        .map(|ls| ls.iter().filter_map(|l| g.token_id(TokenKind::Label, l)).collect());
    let mut cursor = NodeId(0);
    while let Some(n) = g.next_node(None, cursor) {
        cursor = NodeId(n.0 + 1);
        if nodes.len().is_multiple_of(4096) {
            crate::interrupt::check()?;
        }
        let keep = match &label_toks {
            None => true,
            Some(ts) => ts.iter().any(|t| g.node_has_label(n, *t)),
        };
        if keep {
            nodes.push(n);
        }
    }
    let index: HashMap<NodeId, u32> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i as u32)).collect();
    let mut out: Vec<Vec<Arc2>> = vec![Vec::new(); nodes.len()];
    let mut rel_count = 0usize;
    let mut weight = None;
    let mut edges = Vec::new();
    for s in &specs {
        let types = match &s.ty {
            None => Vec::new(),
            Some(t) => match g.token_id(TokenKind::RelType, t) {
                Some(tok) => vec![tok],
                None => continue,
            },
        };
        let key = s.property.as_ref().map(|(p, d)| (g.token_id(TokenKind::PropertyKey, p), *d));
        if let Some((p, _)) = &s.property {
            weight = Some(p.clone());
        }
        for (i, n) in nodes.iter().enumerate() {
            edges.clear();
            g.node_edges(*n, Direction::Outgoing, &types, &mut edges);
            for e in &edges {
                let Some(&j) = index.get(&e.other) else { continue };
                let w = match key {
                    Some((Some(k), d)) => match g.rel_property(e.rel, k) {
                        Some(Value::Int(x)) => x as f64,
                        Some(Value::Float(x)) => x,
                        _ => d,
                    },
                    Some((None, d)) => d,
                    None => 1.0,
                };
                let fwd = Arc2 { to: j, weight: w, rel: e.rel };
                let back = Arc2 { to: i as u32, weight: w, rel: e.rel };
                match s.orientation.as_str() {
                    "REVERSE" => out[j as usize].push(back),
                    "UNDIRECTED" => {
                        out[i].push(fwd);
                        out[j as usize].push(back);
                        rel_count += 1;
                    }
                    _ => out[i].push(fwd),
                }
                rel_count += 1;
            }
        }
    }
    let mut config = cfg.clone();
    config.insert("nodeProjection".into(), Value::Map(node_report.clone()));
    config.insert("relationshipProjection".into(), Value::Map(rel_report.clone()));
    let p = Projection {
        name: name.clone(),
        nodes,
        index,
        out,
        rel_count,
        weight,
        node_projection: node_report.clone(),
        rel_projection: rel_report.clone(),
        config,
        created: chrono::Utc::now().to_rfc3339(),
    };
    let row = vec![
        Value::Map(node_report),
        Value::Map(rel_report),
        Value::from(name.as_str()),
        Value::Int(p.nodes.len() as i64),
        Value::Int(p.rel_count as i64),
        Value::Int(started.elapsed().as_millis() as i64),
    ];
    let mut cat = catalog.lock().unwrap_or_else(|e| e.into_inner());
    if cat.contains_key(&name) {
        return Err(failed(P, &format!("A graph with name '{name}' already exists.")));
    }
    cat.insert(name, Arc::new(p));
    Ok(vec![row])
}
