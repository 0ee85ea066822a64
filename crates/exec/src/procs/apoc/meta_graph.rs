//! `apoc.meta.graph(config)` and `apoc.meta.subGraph(config)`: the schema as a virtual graph,
//! one node per label (`{name, count}`) and one relationship per (start label, type, end label)
//! seen in a sample (`{type, count}`), as neo4j-graphrag and llama-index read it.
//!
//! Virtual entities have negative ids, as APOC's do (`-1`, `-2`, ...); they exist only in the
//! result. A relationship's `count` is the count store's number when it answers (the smaller
//! of the start-label and end-label counts for the type, an upper bound as APOC's is), else
//! the number sampled.

use std::collections::BTreeMap;
use std::sync::Arc;

use arbor_cypher_plan::CypherType as T;
use arbor_model::{NodeData, NodeId, PropertyMap, RelData, RelId, Result, Value};

use super::meta::Config;
use super::{col, list_of, map_arg, strings_arg};
use crate::graph::{Direction, Edge, Graph, TokenId, TokenKind};
use crate::procs::Procedure;

pub(super) fn procedures() -> Vec<Procedure> {
    let outputs =
        || vec![col("nodes", list_of(T::Node)), col("relationships", list_of(T::Relationship))];
    let mut graph = Procedure::new(
        "apoc.meta.graph",
        vec![col("config", T::Map)],
        outputs(),
        "Examines the full graph and returns a meta-graph.",
        |args, g| {
            let m = map_arg("apoc.meta.graph", args.first(), "config")?;
            meta_graph(&Config::parse(&m)?, g)
        },
    );
    graph.sig.optional = 1;
    let sub = Procedure::new(
        "apoc.meta.subGraph",
        vec![col("config", T::Map)],
        outputs(),
        "Examines a sub-graph and returns a meta-graph.",
        |args, g| meta_graph(&sub_graph_config(args.first())?, g),
    );
    vec![graph, sub]
}

/// `apoc.meta.subGraph`'s keys: `labels`, `rels`, `excludes` (labels and types), `sample`,
/// `maxRels`.
fn sub_graph_config(arg: Option<&Value>) -> Result<Config> {
    const NAME: &str = "apoc.meta.subGraph";
    let m = map_arg(NAME, arg, "config")?;
    let excludes = strings_arg(NAME, m.get("excludes"), "excludes")?;
    let mut cfg = Config::parse(&m)?;
    cfg.include_labels = strings_arg(NAME, m.get("labels"), "labels")?;
    cfg.include_rels = strings_arg(NAME, m.get("rels"), "rels")?;
    cfg.exclude_labels = excludes.clone();
    cfg.exclude_rels = excludes;
    Ok(cfg)
}

/// The `i`-th virtual id: -1, -2, ... as Bolt shows it.
fn virtual_id(i: usize) -> u64 {
    (-(i as i64) - 1) as u64
}

fn meta_graph(cfg: &Config, g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let labels: BTreeMap<TokenId, String> = g
        .tokens(TokenKind::Label)
        .into_iter()
        .filter(|(t, name)| cfg.label_wanted(name) && g.count_nodes(Some(*t)) > 0)
        .collect();
    let types: BTreeMap<TokenId, String> =
        g.tokens(TokenKind::RelType).into_iter().filter(|(_, n)| cfg.rel_wanted(n)).collect();
    let mut nodes = Vec::with_capacity(labels.len());
    let mut node_of: BTreeMap<TokenId, NodeId> = BTreeMap::new();
    for (i, (tok, name)) in labels.iter().enumerate() {
        let id = NodeId(virtual_id(i));
        node_of.insert(*tok, id);
        let mut props = PropertyMap::new();
        props.insert("name".into(), Value::str(name));
        props.insert("count".into(), Value::Int(g.count_nodes(Some(*tok)) as i64));
        let node = NodeData { id, labels: vec![name.clone()], properties: props };
        nodes.push(Value::NodeData(Arc::new(node)));
    }
    let sampled = sample_triples(cfg, g, &labels, &types)?;
    let mut rels = Vec::with_capacity(sampled.len());
    for (i, ((a, t, b), seen)) in sampled.into_iter().enumerate() {
        let by_store = g
            .count_rels_by_labels(Some(a), Some(t), None)
            .zip(g.count_rels_by_labels(None, Some(t), Some(b)))
            .map(|(x, y)| x.min(y));
        let mut props = PropertyMap::new();
        props.insert("type".into(), Value::str(&types[&t]));
        props.insert("count".into(), Value::Int(by_store.unwrap_or(seen) as i64));
        let rel = RelData {
            id: RelId(virtual_id(i)),
            start: node_of[&a],
            end: node_of[&b],
            rel_type: types[&t].clone(),
            properties: props,
        };
        rels.push(Value::RelData(Arc::new(rel)));
    }
    Ok(vec![vec![Value::List(nodes), Value::List(rels)]])
}

/// `(start label, type, end label)` seen from up to `sample` nodes per label and `maxRels`
/// outgoing relationships per node, with how often.
fn sample_triples(
    cfg: &Config,
    g: &dyn Graph,
    labels: &BTreeMap<TokenId, String>,
    types: &BTreeMap<TokenId, String>,
) -> Result<BTreeMap<(TokenId, TokenId, TokenId), u64>> {
    let mut out = BTreeMap::new();
    let mut edges: Vec<Edge> = Vec::new();
    for &a in labels.keys() {
        let (mut cursor, mut read) = (NodeId(0), 0usize);
        while let Some(n) = g.next_node(Some(a), cursor) {
            if read >= cfg.sample {
                break;
            }
            crate::interrupt::check()?;
            cursor = NodeId(n.0 + 1);
            read += 1;
            edges.clear();
            g.node_edges(n, Direction::Outgoing, &[], &mut edges);
            for e in edges.iter().take(cfg.max_rels) {
                let Some((_, _, t)) = g.rel_info(e.rel) else { continue };
                if !types.contains_key(&t) {
                    continue;
                }
                for b in g.node_labels(e.other) {
                    if labels.contains_key(&b) {
                        *out.entry((a, t, b)).or_insert(0) += 1;
                    }
                }
            }
        }
    }
    Ok(out)
}
