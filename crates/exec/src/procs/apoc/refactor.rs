//! `apoc.refactor.mergeNodes(nodes, config)`: merges nodes into the first one. Labels are
//! unioned; properties follow `config.properties` (`discard`: the first node's value wins,
//! `overwrite`/`override`: the last value wins, `combine`: differing values become a list);
//! relationships are moved onto the merged node and, with `mergeRels: true`, folded into an
//! existing relationship of the same type between the same nodes. The other nodes are deleted.

use arbor_cypher_plan::CypherType as T;
use arbor_model::{equals, NodeId, PropertyMap, Result, Value};

use super::{arg_error, col, map_arg, nodes_arg};
use crate::graph::{Direction, Edge, Graph, TokenId};
use crate::procs::Procedure;

const NAME: &str = "apoc.refactor.mergeNodes";

pub(super) fn procedures() -> Vec<Procedure> {
    let mut p = Procedure::new(
        NAME,
        vec![col("nodes", T::List(Box::new(T::Node))), col("config", T::Map)],
        vec![col("node", T::Node)],
        "Merges the given list of nodes onto the first node in the list.",
        merge_nodes,
    );
    p.writes = true;
    p.sig.optional = 1;
    vec![p]
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Policy {
    Discard,
    Overwrite,
    Combine,
}

fn policy(config: &PropertyMap) -> Result<Policy> {
    match config.get("properties") {
        None | Some(Value::Null) => Ok(Policy::Overwrite),
        Some(Value::String(s)) => match s.as_ref() {
            "discard" => Ok(Policy::Discard),
            "overwrite" | "override" => Ok(Policy::Overwrite),
            "combine" => Ok(Policy::Combine),
            other => Err(arg_error(NAME, &format!("unknown properties policy '{other}'"))),
        },
        Some(other) => {
            Err(arg_error(NAME, &format!("properties must be a string, got {}", other.type_name())))
        }
    }
}

/// The value `key` takes when `incoming` meets `current` under `policy`.
fn combined(policy: Policy, current: Option<Value>, incoming: Value) -> Option<Value> {
    match (policy, current) {
        (_, None) => Some(incoming),
        (Policy::Discard, Some(_)) => None,
        (Policy::Overwrite, Some(_)) => Some(incoming),
        (Policy::Combine, Some(cur)) => {
            if equals(&cur, &incoming) == Some(true) {
                return None;
            }
            let mut list = match cur {
                Value::List(l) => l,
                v => vec![v],
            };
            match incoming {
                Value::List(l) => list.extend(l),
                v => list.push(v),
            }
            Some(Value::List(list))
        }
    }
}

fn merge_nodes(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let mut nodes = nodes_arg(NAME, args.first(), "nodes")?;
    let config = map_arg(NAME, args.get(1), "config")?;
    let policy = policy(&config)?;
    let merge_rels = matches!(config.get("mergeRels"), Some(Value::Bool(true)));
    let mut seen = std::collections::HashSet::new();
    nodes.retain(|n| seen.insert(*n) && g.node_exists(*n));
    let Some((&target, others)) = nodes.split_first() else { return Ok(Vec::new()) };
    for &other in others {
        for l in g.node_labels(other) {
            g.add_label(target, l)?;
        }
        for (k, v) in g.node_properties(other) {
            if let Some(v) = combined(policy, g.node_property(target, k), v) {
                g.set_node_property(target, k, v)?;
            }
        }
        move_rels(g, other, target, policy, merge_rels)?;
        g.delete_node(other)?;
    }
    Ok(vec![vec![Value::Node(target)]])
}

/// Moves every relationship of `from` onto `to` (self-loops stay self-loops).
fn move_rels(
    g: &mut dyn Graph,
    from: NodeId,
    to: NodeId,
    policy: Policy,
    merge_rels: bool,
) -> Result<()> {
    let mut edges: Vec<Edge> = Vec::new();
    g.node_edges(from, Direction::Both, &[], &mut edges);
    for e in edges {
        let Some((s, t_end, ty)) = g.rel_info(e.rel) else { continue };
        let start = if s == from { to } else { s };
        let end = if t_end == from { to } else { t_end };
        let props = g.rel_properties(e.rel);
        g.delete_rel(e.rel)?;
        if merge_rels {
            if let Some(existing) = find_rel(g, start, end, ty) {
                for (k, v) in props {
                    if let Some(v) = combined(policy, g.rel_property(existing, k), v) {
                        g.set_rel_property(existing, k, v)?;
                    }
                }
                continue;
            }
        }
        g.create_rel(start, end, ty, props)?;
    }
    Ok(())
}

/// A relationship of type `ty` from `start` to `end`, if one exists.
fn find_rel(g: &dyn Graph, start: NodeId, end: NodeId, ty: TokenId) -> Option<arbor_model::RelId> {
    let mut edges: Vec<Edge> = Vec::new();
    g.node_edges(start, Direction::Outgoing, &[ty], &mut edges);
    edges.into_iter().find(|e| e.other == end).map(|e| e.rel)
}
