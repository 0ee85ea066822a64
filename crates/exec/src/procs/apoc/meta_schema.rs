//! `apoc.meta.schema` (the schema as one map), `apoc.meta.nodeTypeProperties` /
//! `relTypeProperties` (per label set or type and key: the value types seen and how often),
//! and `apoc.schema.properties.distinct` / `distinctCount`, all read by sampling the data
//! with `apoc.meta.data`'s config (`sample` nodes per label, `maxRels` relationships each).
//!
//! `apoc.meta.schema`'s map: per label `{type: 'node', count, labels (the other labels its
//! nodes carry), properties: {key: {type, array, indexed, unique, existence}},
//! relationships: {TYPE: {direction: 'out'|'in', count, labels (other end), properties}}}`,
//! and per relationship type `{type: 'relationship', count, properties}`. Index and
//! constraint flags are false: the sampled data does not say.

use std::collections::{BTreeMap, BTreeSet};

use arbor_cypher_plan::CypherType as T;
use arbor_model::{Key, NodeId, PropertyMap, Result, Value};

use super::meta::{apoc_type, Config};
use super::{col, list_of, map_arg};
use crate::graph::{Direction, Edge, Graph, TokenId, TokenKind};
use crate::procs::Procedure;

/// The output columns of `apoc.meta.nodeTypeProperties` / `relTypeProperties`: the ones that
/// name the node or relationship type (`lead`), then the property columns both share.
fn property_columns(lead: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut out = lead;
    out.extend([
        col("propertyName", T::String),
        col("propertyTypes", list_of(T::String)),
        col("mandatory", T::Boolean),
        col("propertyObservations", T::Integer),
        col("totalObservations", T::Integer),
    ]);
    out
}

pub(super) fn procedures() -> Vec<Procedure> {
    let s = T::String;
    let strings = || list_of(T::String);
    let mut schema = Procedure::new(
        "apoc.meta.schema",
        vec![col("config", T::Map)],
        vec![col("value", T::Map)],
        "Examines the given sub-graph and returns metadata as a MAP.",
        meta_schema,
    );
    let mut nodes = Procedure::new(
        "apoc.meta.nodeTypeProperties",
        vec![col("config", T::Map)],
        property_columns(vec![col("nodeType", s.clone()), col("nodeLabels", strings())]),
        "Examines the full graph and returns a table of metadata with information about the \
         NODE values therein.",
        |a, g| type_properties(a, g, false),
    );
    let mut rels = Procedure::new(
        "apoc.meta.relTypeProperties",
        vec![col("config", T::Map)],
        property_columns(vec![
            col("relType", s.clone()),
            col("sourceNodeLabels", strings()),
            col("targetNodeLabels", strings()),
        ]),
        "Examines the full graph and returns a table of metadata with information about the \
         RELATIONSHIP values therein.",
        |a, g| type_properties(a, g, true),
    );
    for p in [&mut schema, &mut nodes, &mut rels] {
        p.sig.optional = 1;
    }
    let mut distinct = Procedure::new(
        "apoc.schema.properties.distinct",
        vec![col("label", s.clone()), col("key", s.clone())],
        vec![col("value", list_of(T::Any))],
        "Returns all distinct NODE property values for the given key.",
        properties_distinct,
    );
    distinct.sig.optional = 0;
    let mut counts = Procedure::new(
        "apoc.schema.properties.distinctCount",
        vec![col("label", s.clone()), col("key", s.clone())],
        vec![
            col("label", s.clone()),
            col("key", s),
            col("value", T::Any),
            col("count", T::Integer),
        ],
        "Returns all distinct property values and counts for the given key.",
        properties_distinct_count,
    );
    counts.sig.optional = 2;
    vec![schema, nodes, rels, distinct, counts]
}

fn names(g: &dyn Graph, kind: TokenKind) -> BTreeMap<TokenId, String> {
    g.tokens(kind).into_iter().collect()
}

/// The first `cfg.sample` nodes with `label`.
fn sample_nodes(g: &dyn Graph, label: TokenId, sample: usize) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut cursor = NodeId(0);
    while out.len() < sample {
        let Some(n) = g.next_node(Some(label), cursor) else { break };
        out.push(n);
        cursor = NodeId(n.0 + 1);
    }
    out
}

fn prop_entry(v: &Value, node: bool) -> Value {
    let (t, array) = apoc_type(v);
    let mut m = PropertyMap::new();
    m.insert("type".into(), Value::from(t));
    m.insert("array".into(), Value::Bool(array));
    m.insert("existence".into(), Value::Bool(false));
    if node {
        m.insert("indexed".into(), Value::Bool(false));
        m.insert("unique".into(), Value::Bool(false));
    }
    Value::Map(m)
}

fn put_props(
    keys: &BTreeMap<TokenId, String>,
    props: Vec<(TokenId, Value)>,
    into: &mut PropertyMap,
    node: bool,
) {
    for (k, v) in props {
        if let Some(name) = keys.get(&k) {
            if into.get(name.as_str()).is_none() {
                into.insert(name.as_str().into(), prop_entry(&v, node));
            }
        }
    }
}

fn meta_schema(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let cfg = Config::parse(&map_arg("apoc.meta.schema", args.first(), "config")?)?;
    let (labels, types, keys) = (
        names(g, TokenKind::Label),
        names(g, TokenKind::RelType),
        names(g, TokenKind::PropertyKey),
    );
    let mut out = PropertyMap::new();
    let mut rel_entries: BTreeMap<String, (PropertyMap, u64)> = BTreeMap::new();
    let mut edges: Vec<Edge> = Vec::new();
    for (&tok, label) in &labels {
        let count = g.count_nodes(Some(tok));
        if !cfg.label_wanted(label) || count == 0 {
            continue;
        }
        let mut props = PropertyMap::new();
        let mut others: BTreeSet<String> = BTreeSet::new();
        // (type, direction) -> (count, other-end labels, properties)
        let mut rels: BTreeMap<(String, &str), (u64, BTreeSet<String>, PropertyMap)> =
            BTreeMap::new();
        for n in sample_nodes(g, tok, cfg.sample) {
            put_props(&keys, g.node_properties(n), &mut props, true);
            others.extend(
                g.node_labels(n)
                    .iter()
                    .filter(|l| **l != tok)
                    .filter_map(|l| labels.get(l).cloned()),
            );
            edges.clear();
            g.node_edges(n, Direction::Both, &[], &mut edges);
            for e in edges.iter().take(cfg.max_rels) {
                let Some((_, _, t)) = g.rel_info(e.rel) else { continue };
                let Some(ty) = types.get(&t).filter(|ty| cfg.rel_wanted(ty)) else { continue };
                let dir = if e.dir == Direction::Incoming { "in" } else { "out" };
                let entry = rels.entry((ty.clone(), dir)).or_default();
                entry.0 += 1;
                entry
                    .1
                    .extend(g.node_labels(e.other).iter().filter_map(|l| labels.get(l).cloned()));
                put_props(&keys, g.rel_properties(e.rel), &mut entry.2, false);
                let global = rel_entries.entry(ty.clone()).or_default();
                put_props(&keys, g.rel_properties(e.rel), &mut global.0, false);
            }
        }
        let mut rel_map = PropertyMap::new();
        // Reversed so that a type's `out` entry comes before (and wins over) its `in` one.
        for ((ty, dir), (n, ends, p)) in rels.into_iter().rev() {
            if rel_map.get(ty.as_str()).is_some() {
                continue;
            }
            let mut m = PropertyMap::new();
            m.insert("direction".into(), Value::from(dir));
            m.insert("count".into(), Value::Int(n as i64));
            m.insert("labels".into(), strings(ends));
            m.insert("properties".into(), Value::Map(p));
            rel_map.insert(ty.as_str().into(), Value::Map(m));
        }
        let mut m = PropertyMap::new();
        m.insert("type".into(), Value::from("node"));
        m.insert("count".into(), Value::Int(count as i64));
        m.insert("labels".into(), strings(others));
        m.insert("properties".into(), Value::Map(props));
        m.insert("relationships".into(), Value::Map(rel_map));
        out.insert(label.as_str().into(), Value::Map(m));
    }
    for (&tok, ty) in &types {
        let Some((props, _)) = rel_entries.remove(ty) else { continue };
        let count = g.count_rels(&[tok]).unwrap_or_else(|| count_rels(g, tok));
        let mut m = PropertyMap::new();
        m.insert("type".into(), Value::from("relationship"));
        m.insert("count".into(), Value::Int(count as i64));
        m.insert("properties".into(), Value::Map(props));
        let key = if out.get(ty.as_str()).is_some() {
            format!("{ty} (relationship)")
        } else {
            ty.clone()
        };
        out.insert(Key::from(key), Value::Map(m));
    }
    Ok(vec![vec![Value::Map(out)]])
}

fn count_rels(g: &dyn Graph, ty: TokenId) -> u64 {
    let mut n = 0;
    let mut cursor = arbor_model::RelId(0);
    while let Some(r) = g.next_rel(&[ty], cursor) {
        n += 1;
        cursor = arbor_model::RelId(r.0 + 1);
    }
    n
}

fn strings(s: BTreeSet<String>) -> Value {
    Value::List(s.into_iter().map(Value::from).collect())
}

/// Neo4j's (Java) type name of a property value, as `propertyTypes` lists them.
fn java_type(v: &Value) -> String {
    match v {
        Value::Bool(_) => "Boolean".into(),
        Value::Int(_) => "Long".into(),
        Value::Float(_) => "Double".into(),
        Value::String(_) => "String".into(),
        Value::List(items) => format!("{}Array", items.first().map_or("String".into(), java_type)),
        Value::Point(_) => "Point".into(),
        Value::Date(_) => "Date".into(),
        Value::LocalTime(_) => "LocalTime".into(),
        Value::Time(_) => "Time".into(),
        Value::LocalDateTime(_) => "LocalDateTime".into(),
        Value::DateTime(_) => "DateTime".into(),
        Value::Duration(_) => "Duration".into(),
        _ => "Any".into(),
    }
}

/// Per entity type (a sorted label set, or a relationship type with its end labels): how
/// many were seen, and per key the types and the count of entities having it.
#[derive(Default)]
struct Observed {
    total: i64,
    props: BTreeMap<String, (BTreeSet<String>, i64)>,
    starts: BTreeSet<String>,
    ends: BTreeSet<String>,
}

impl Observed {
    fn add(&mut self, keys: &BTreeMap<TokenId, String>, props: Vec<(TokenId, Value)>) {
        self.total += 1;
        for (k, v) in props {
            if let Some(name) = keys.get(&k) {
                let e = self.props.entry(name.clone()).or_default();
                e.0.insert(java_type(&v));
                e.1 += 1;
            }
        }
    }
}

fn label_names(g: &dyn Graph, n: NodeId, labels: &BTreeMap<TokenId, String>) -> Vec<String> {
    let mut v: Vec<String> =
        g.node_labels(n).iter().filter_map(|l| labels.get(l).cloned()).collect();
    v.sort();
    v
}

/// `apoc.meta.nodeTypeProperties` (`rels` false) and `apoc.meta.relTypeProperties`.
fn type_properties(args: &[Value], g: &mut dyn Graph, rels: bool) -> Result<Vec<Vec<Value>>> {
    let cfg = Config::parse(&map_arg("apoc.meta.nodeTypeProperties", args.first(), "config")?)?;
    let (labels, types, keys) = (
        names(g, TokenKind::Label),
        names(g, TokenKind::RelType),
        names(g, TokenKind::PropertyKey),
    );
    let mut by: BTreeMap<Vec<String>, Observed> = BTreeMap::new();
    let mut seen_nodes = std::collections::HashSet::new();
    let mut edges = Vec::new();
    for (&tok, label) in &labels {
        if !cfg.label_wanted(label) {
            continue;
        }
        for n in sample_nodes(g, tok, cfg.sample) {
            if !seen_nodes.insert(n) {
                continue;
            }
            let ls = label_names(g, n, &labels);
            if !rels {
                by.entry(ls).or_default().add(&keys, g.node_properties(n));
                continue;
            }
            edges.clear();
            g.node_edges(n, Direction::Outgoing, &[], &mut edges);
            for e in edges.iter().take(cfg.max_rels) {
                let Some((_, end, t)) = g.rel_info(e.rel) else { continue };
                let Some(ty) = types.get(&t).filter(|ty| cfg.rel_wanted(ty)) else { continue };
                let o = by.entry(vec![ty.clone()]).or_default();
                o.add(&keys, g.rel_properties(e.rel));
                o.starts.extend(ls.iter().cloned());
                o.ends.extend(label_names(g, end, &labels));
            }
        }
    }
    let mut out = Vec::new();
    for (names, o) in by {
        let ty = names.iter().map(|l| format!(":`{l}`")).collect::<String>();
        let list = |v: &[String]| Value::List(v.iter().map(|s| Value::from(s.as_str())).collect());
        let head = |out: &mut Vec<Vec<Value>>,
                    prop: Value,
                    types: Value,
                    mandatory: bool,
                    n: i64| {
            let mut row = vec![Value::from(ty.as_str())];
            if rels {
                row.push(list(&o.starts.iter().cloned().collect::<Vec<_>>()));
                row.push(list(&o.ends.iter().cloned().collect::<Vec<_>>()));
            } else {
                row.push(list(&names));
            }
            row.extend([prop, types, Value::Bool(mandatory), Value::Int(n), Value::Int(o.total)]);
            out.push(row);
        };
        if o.props.is_empty() {
            head(&mut out, Value::Null, Value::Null, false, 0);
        }
        for (key, (ts, n)) in &o.props {
            let ts: Vec<String> = ts.iter().cloned().collect();
            head(&mut out, Value::from(key.as_str()), list(&ts), *n == o.total, *n);
        }
    }
    Ok(out)
}

/// The distinct values of `key` on nodes with `label` (every node if empty), in first-seen
/// order, with their counts.
fn distinct_values(g: &dyn Graph, label: &str, key: &str) -> Vec<(Value, i64)> {
    let Some(k) = g.token_id(TokenKind::PropertyKey, key) else { return Vec::new() };
    let l = if label.is_empty() {
        None
    } else {
        match g.token_id(TokenKind::Label, label) {
            Some(t) => Some(t),
            None => return Vec::new(),
        }
    };
    let mut out: Vec<(Value, i64)> = Vec::new();
    let mut cursor = NodeId(0);
    while let Some(n) = g.next_node(l, cursor) {
        cursor = NodeId(n.0 + 1);
        if let Some(v) = g.node_property(n, k) {
            match out.iter_mut().find(|(x, _)| arbor_model::equals(x, &v) == Some(true)) {
                Some(e) => e.1 += 1,
                None => out.push((v, 1)),
            }
        }
    }
    out
}

fn text_arg(args: &[Value], i: usize) -> String {
    match args.get(i) {
        Some(Value::String(s)) => s.to_string(),
        _ => String::new(),
    }
}

/// `apoc.schema.properties.distinct(label, key)`: one row, the list of distinct values.
fn properties_distinct(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let vals = distinct_values(g, &text_arg(args, 0), &text_arg(args, 1));
    Ok(vec![vec![Value::List(vals.into_iter().map(|(v, _)| v).collect())]])
}

/// `apoc.schema.properties.distinctCount(label = '', key = '')`: a row per (label, key,
/// value); an empty label or key means every one.
fn properties_distinct_count(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let (label, key) = (text_arg(args, 0), text_arg(args, 1));
    let labels: Vec<String> = if label.is_empty() {
        g.tokens(TokenKind::Label).into_iter().map(|(_, n)| n).collect()
    } else {
        vec![label]
    };
    let keys: Vec<String> = if key.is_empty() {
        g.tokens(TokenKind::PropertyKey).into_iter().map(|(_, n)| n).collect()
    } else {
        vec![key]
    };
    let mut out = Vec::new();
    for l in &labels {
        for k in &keys {
            for (v, n) in distinct_values(g, l, k) {
                out.push(vec![Value::from(l.as_str()), Value::from(k.as_str()), v, Value::Int(n)]);
            }
        }
    }
    Ok(out)
}
