//! `apoc.meta.data`: the schema as APOC reads it from the data, one row per (label, property)
//! and per (label, outgoing relationship type), plus one row per (relationship type, property).
//!
//! Rows follow APOC's documented semantics: property rows have `count` 0 and `type` the APOC
//! type name of the first value seen (`STRING`, `INTEGER`, `LIST`, ...); relationship rows from a
//! label have `type` `RELATIONSHIP`, `property` the relationship type, `count` the number of such
//! relationships seen, and `other` the labels found at their end nodes. Sampling reads at most
//! `sample` nodes per label (every node when `sample` is -1) and `maxRels` relationships per node.

use std::collections::{BTreeMap, BTreeSet};

use arbor_cypher_plan::CypherType as T;
use arbor_model::{NodeId, PropertyMap, RelId, Result, Value};

use super::{col, list_of, map_arg, strings_arg};
use crate::graph::{Direction, Edge, Graph, TokenId, TokenKind};
use crate::procs::Procedure;

const NAME: &str = "apoc.meta.data";

pub(super) fn procedures() -> Vec<Procedure> {
    let mut p = Procedure::new(
        NAME,
        vec![col("config", T::Map)],
        vec![
            col("label", T::String),
            col("property", T::String),
            col("count", T::Integer),
            col("unique", T::Boolean),
            col("index", T::Boolean),
            col("existence", T::Boolean),
            col("type", T::String),
            col("array", T::Boolean),
            col("sample", list_of(T::Any)),
            col("left", T::Integer),
            col("right", T::Integer),
            col("other", list_of(T::String)),
            col("otherLabels", list_of(T::String)),
            col("elementType", T::String),
        ],
        "Examines the full graph and returns a table of metadata.",
        meta_data,
    );
    p.sig.optional = 1;
    vec![p]
}

/// The config keys the libraries pass.
pub(super) struct Config {
    /// Nodes read per label (APOC's default 1000; -1 reads all).
    pub(super) sample: usize,
    /// Relationships read per sampled node.
    pub(super) max_rels: usize,
    pub(super) include_labels: Vec<String>,
    pub(super) include_rels: Vec<String>,
    pub(super) exclude_labels: Vec<String>,
    pub(super) exclude_rels: Vec<String>,
}

impl Config {
    pub(super) fn parse(m: &PropertyMap) -> Result<Config> {
        let int = |k: &str, default: usize| match m.get(k) {
            Some(Value::Int(n)) if *n < 0 => usize::MAX,
            Some(Value::Int(n)) => (*n as usize).max(1),
            _ => default,
        };
        Ok(Config {
            sample: int("sample", 1000),
            max_rels: int("maxRels", 100),
            include_labels: strings_arg(NAME, m.get("includeLabels"), "includeLabels")?,
            include_rels: strings_arg(NAME, m.get("includeRels"), "includeRels")?,
            exclude_labels: strings_arg(NAME, m.get("excludeLabels"), "excludeLabels")?,
            exclude_rels: strings_arg(NAME, m.get("excludeRels"), "excludeRels")?,
        })
    }

    pub(super) fn label_wanted(&self, name: &str) -> bool {
        (self.include_labels.is_empty() || self.include_labels.iter().any(|l| l == name))
            && !self.exclude_labels.iter().any(|l| l == name)
    }

    pub(super) fn rel_wanted(&self, name: &str) -> bool {
        (self.include_rels.is_empty() || self.include_rels.iter().any(|l| l == name))
            && !self.exclude_rels.iter().any(|l| l == name)
    }
}

/// APOC's type name of a property value, and whether it is an array.
pub(super) fn apoc_type(v: &Value) -> (&'static str, bool) {
    let t = match v {
        Value::Null => "NULL",
        Value::Bool(_) => "BOOLEAN",
        Value::Int(_) => "INTEGER",
        Value::Float(_) => "FLOAT",
        Value::String(_) => "STRING",
        Value::Bytes(_) => "BYTE_ARRAY",
        Value::List(_) => return ("LIST", true),
        Value::Map(_) => "MAP",
        Value::Node(_) | Value::NodeData(_) => "NODE",
        Value::Relationship(_) | Value::RelData(_) => "RELATIONSHIP",
        Value::Path(_) | Value::PathData(_) => "PATH",
        Value::Date(_) => "DATE",
        Value::Time(_) => "TIME",
        Value::LocalTime(_) => "LOCAL_TIME",
        Value::DateTime(_) => "DATE_TIME",
        Value::LocalDateTime(_) => "LOCAL_DATE_TIME",
        Value::Duration(_) => "DURATION",
        Value::Point(_) => "POINT",
    };
    (t, false)
}

/// What sampling found for one label or relationship type.
#[derive(Default)]
struct Seen {
    /// Property key -> APOC type of the first value seen.
    props: BTreeMap<String, (&'static str, bool)>,
    /// Outgoing relationship type -> (count, end labels).
    rels: BTreeMap<(TokenId, String), (u64, BTreeSet<String>)>,
}

fn meta_data(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let cfg = Config::parse(&map_arg(NAME, args.first(), "config")?)?;
    let names =
        |g: &dyn Graph, kind| -> BTreeMap<TokenId, String> { g.tokens(kind).into_iter().collect() };
    let label_names = names(g, TokenKind::Label);
    let type_names = names(g, TokenKind::RelType);
    let key_names = names(g, TokenKind::PropertyKey);
    // Keyed by (token, name): rows come in token-creation order, as APOC lists labels and
    // types (langchain-neo4j compares the relationship list in that order).
    let mut by_label: BTreeMap<(TokenId, String), Seen> = BTreeMap::new();
    let mut by_type: BTreeMap<(TokenId, String), Seen> = BTreeMap::new();
    let mut edges: Vec<Edge> = Vec::new();
    for (&tok, label) in &label_names {
        if !cfg.label_wanted(label) || g.count_nodes(Some(tok)) == 0 {
            continue;
        }
        let seen = by_label.entry((tok, label.clone())).or_default();
        let mut cursor = NodeId(0);
        let mut read = 0usize;
        while let Some(n) = g.next_node(Some(tok), cursor) {
            cursor = NodeId(n.0 + 1);
            if read >= cfg.sample {
                break;
            }
            read += 1;
            for (k, v) in g.node_properties(n) {
                if let Some(key) = key_names.get(&k) {
                    seen.props.entry(key.clone()).or_insert_with(|| apoc_type(&v));
                }
            }
            edges.clear();
            g.node_edges(n, Direction::Outgoing, &[], &mut edges);
            for e in edges.iter().take(cfg.max_rels) {
                sample_rel(g, e, &cfg, &label_names, &type_names, &key_names, seen, &mut by_type);
            }
        }
    }
    Ok(rows(by_label, by_type))
}

/// Records one outgoing relationship: its type and end labels on the start label, its
/// properties on the type.
#[allow(clippy::too_many_arguments)]
fn sample_rel(
    g: &dyn Graph,
    e: &Edge,
    cfg: &Config,
    label_names: &BTreeMap<TokenId, String>,
    type_names: &BTreeMap<TokenId, String>,
    key_names: &BTreeMap<TokenId, String>,
    seen: &mut Seen,
    by_type: &mut BTreeMap<(TokenId, String), Seen>,
) {
    let Some((_, end, t)) = g.rel_info(e.rel) else { return };
    let Some(ty) = type_names.get(&t) else { return };
    if !cfg.rel_wanted(ty) {
        return;
    }
    let entry = seen.rels.entry((t, ty.clone())).or_default();
    entry.0 += 1;
    for l in g.node_labels(end) {
        if let Some(name) = label_names.get(&l) {
            if cfg.label_wanted(name) {
                entry.1.insert(name.clone());
            }
        }
    }
    let tseen = by_type.entry((t, ty.clone())).or_default();
    for (k, v) in g.rel_properties(RelId(e.rel.0)) {
        if let Some(key) = key_names.get(&k) {
            tseen.props.entry(key.clone()).or_insert_with(|| apoc_type(&v));
        }
    }
}

/// One output row in signature order.
#[allow(clippy::too_many_arguments)]
fn row(
    label: &str,
    property: &str,
    count: u64,
    ty: &str,
    array: bool,
    left: u64,
    other: Vec<Value>,
    element: &str,
) -> Vec<Value> {
    vec![
        Value::from(label),
        Value::from(property),
        Value::Int(count as i64),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(false),
        Value::from(ty),
        Value::Bool(array),
        Value::Null,
        Value::Int(left as i64),
        Value::Int(0),
        Value::List(other),
        Value::List(Vec::new()),
        Value::from(element),
    ]
}

type ByToken = BTreeMap<(TokenId, String), Seen>;

fn rows(by_label: ByToken, by_type: ByToken) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for ((_, label), seen) in &by_label {
        for ((_, ty), (count, ends)) in &seen.rels {
            let other = ends.iter().map(|s| Value::from(s.as_str())).collect();
            out.push(row(label, ty, *count, "RELATIONSHIP", true, *count, other, "node"));
        }
        for (key, (t, array)) in &seen.props {
            out.push(row(label, key, 0, t, *array, 0, Vec::new(), "node"));
        }
    }
    for ((_, ty), seen) in &by_type {
        for (key, (t, array)) in &seen.props {
            out.push(row(ty, key, 0, t, *array, 0, Vec::new(), "relationship"));
        }
    }
    out
}
