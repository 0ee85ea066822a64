//! The writing APOC procedures: `apoc.merge.node`/`relationship` (MERGE with dynamic labels and
//! types), `apoc.create.node`/`relationship`, and `apoc.create.addLabels`/`setLabels`/
//! `removeLabels`. All are WRITE procedures.

use arbor_cypher_plan::CypherType as T;
use arbor_model::{equals, Error, NodeId, PropertyMap, RelId, Result, Status, Value};

use super::{
    col, label_tokens, list_of, map_arg, node_arg, nodes_arg, prop_tokens, rel_type_arg,
    set_node_props, set_rel_props, strings_arg,
};
use crate::graph::{Direction, Edge, Graph, TokenKind};
use crate::procs::Procedure;

type Body = fn(&[Value], &mut dyn Graph) -> Result<Vec<Vec<Value>>>;

fn writing(
    name: &str,
    inputs: Vec<(String, T)>,
    optional: usize,
    output: (String, T),
    description: &str,
    body: Body,
) -> Procedure {
    let mut p = Procedure::new(name, inputs, vec![output], description, body);
    p.writes = true;
    p.sig.optional = optional;
    p
}

pub(super) fn procedures() -> Vec<Procedure> {
    let labels = || col("labels", list_of(T::String));
    let nodes = || col("nodes", T::Any);
    vec![
        writing(
            "apoc.merge.node",
            vec![
                labels(),
                col("identProps", T::Map),
                col("onCreateProps", T::Map),
                col("onMatchProps", T::Map),
            ],
            2,
            col("node", T::Node),
            "Merges the given node with the given dynamic labels and identifying properties.",
            merge_node,
        ),
        writing(
            "apoc.merge.relationship",
            vec![
                col("startNode", T::Node),
                col("relType", T::String),
                col("identProps", T::Map),
                col("onCreateProps", T::Map),
                col("endNode", T::Node),
                col("onMatchProps", T::Map),
            ],
            1,
            col("rel", T::Relationship),
            "Merges the given relationship with the given dynamic type and identifying properties.",
            merge_relationship,
        ),
        writing(
            "apoc.create.node",
            vec![labels(), col("props", T::Map)],
            0,
            col("node", T::Node),
            "Creates a node with the given dynamic labels and properties.",
            create_node,
        ),
        writing(
            "apoc.create.relationship",
            vec![
                col("from", T::Node),
                col("relType", T::String),
                col("props", T::Map),
                col("to", T::Node),
            ],
            0,
            col("rel", T::Relationship),
            "Creates a relationship with the given dynamic type and properties.",
            create_relationship,
        ),
        writing(
            "apoc.create.addLabels",
            vec![nodes(), col("labels", list_of(T::String))],
            0,
            col("node", T::Node),
            "Adds the given labels to the given nodes.",
            |a, g| relabel("apoc.create.addLabels", a, g, Relabel::Add),
        ),
        writing(
            "apoc.create.setLabels",
            vec![nodes(), col("labels", list_of(T::String))],
            0,
            col("node", T::Node),
            "Sets the given labels to the given nodes. Labels not in the list are removed.",
            |a, g| relabel("apoc.create.setLabels", a, g, Relabel::Set),
        ),
        writing(
            "apoc.create.removeLabels",
            vec![nodes(), col("labels", list_of(T::String))],
            0,
            col("node", T::Node),
            "Removes the given labels from the given nodes.",
            |a, g| relabel("apoc.create.removeLabels", a, g, Relabel::Remove),
        ),
    ]
}

/// Whether every entry of `want` equals the property of that name (`get` reads one by name).
fn props_match(want: &PropertyMap, get: impl Fn(&str) -> Option<Value>) -> bool {
    want.iter().all(|(k, v)| match get(k.as_str()) {
        Some(have) => equals(&have, v) == Some(true),
        None => false,
    })
}

fn merge_node(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const NAME: &str = "apoc.merge.node";
    let labels = strings_arg(NAME, args.first(), "labels")?;
    let ident = map_arg(NAME, args.get(1), "identProps")?;
    let on_create = map_arg(NAME, args.get(2), "onCreateProps")?;
    let on_match = map_arg(NAME, args.get(3), "onMatchProps")?;
    if ident.is_empty() {
        return Err(super::arg_error(
            NAME,
            "you need to supply at least one identifying property for a merge",
        ));
    }
    if let Some((k, _)) = ident.iter().find(|(_, v)| matches!(v, Value::Null)) {
        return Err(Error::new(
            Status::SemanticError,
            format!(
                "Cannot merge the following node because of null property value for '{}'",
                k.as_str()
            ),
        ));
    }
    let found = find_nodes(g, &labels, &ident);
    if found.is_empty() {
        let toks = label_tokens(g, &labels)?;
        let props = prop_tokens(g, &ident)?;
        let id = g.create_node(&toks, props)?;
        set_node_props(g, id, &on_create)?;
        return Ok(vec![vec![Value::Node(id)]]);
    }
    let mut out = Vec::with_capacity(found.len());
    for id in found {
        set_node_props(g, id, &on_match)?;
        out.push(vec![Value::Node(id)]);
    }
    Ok(out)
}

/// The nodes carrying every label and every identifying property.
fn find_nodes(g: &dyn Graph, labels: &[String], ident: &PropertyMap) -> Vec<NodeId> {
    let mut toks = Vec::with_capacity(labels.len());
    for l in labels {
        match g.token_id(TokenKind::Label, l) {
            Some(t) => toks.push(t),
            None => return Vec::new(),
        }
    }
    let mut keys = Vec::with_capacity(ident.len());
    for (k, v) in ident.iter() {
        match g.token_id(TokenKind::PropertyKey, k.as_str()) {
            Some(t) => keys.push((t, v)),
            None => return Vec::new(),
        }
    }
    let matches = |id: NodeId| {
        toks.iter().all(|t| g.node_has_label(id, *t))
            && keys.iter().all(|(k, v)| {
                g.node_property(id, *k).is_some_and(|have| equals(&have, v) == Some(true))
            })
    };
    // An index on the first label and key answers directly; else scan the label.
    if let (Some(&label), Some(&(key, value))) = (toks.first(), keys.first()) {
        if let Some(ids) = g.index_seek(label, key, value) {
            return ids.into_iter().filter(|id| matches(*id)).collect();
        }
    }
    let mut out = Vec::new();
    let mut cursor = NodeId(0);
    while let Some(n) = g.next_node(toks.first().copied(), cursor) {
        cursor = NodeId(n.0 + 1);
        if matches(n) {
            out.push(n);
        }
    }
    out
}

fn merge_relationship(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const NAME: &str = "apoc.merge.relationship";
    let start = node_arg(NAME, args.first(), "startNode")?;
    let ty = rel_type_arg(NAME, args.get(1))?;
    let ident = map_arg(NAME, args.get(2), "identProps")?;
    let on_create = map_arg(NAME, args.get(3), "onCreateProps")?;
    let end = node_arg(NAME, args.get(4), "endNode")?;
    let on_match = map_arg(NAME, args.get(5), "onMatchProps")?;
    let mut found: Vec<RelId> = Vec::new();
    if let Some(t) = g.token_id(TokenKind::RelType, &ty) {
        let mut edges: Vec<Edge> = Vec::new();
        g.node_edges(start, Direction::Outgoing, &[t], &mut edges);
        for e in edges.iter().filter(|e| e.other == end) {
            let get = |k: &str| {
                g.token_id(TokenKind::PropertyKey, k).and_then(|key| g.rel_property(e.rel, key))
            };
            if props_match(&ident, get) {
                found.push(e.rel);
            }
        }
    }
    if found.is_empty() {
        let t = g.get_or_create_token(TokenKind::RelType, &ty)?;
        let props = prop_tokens(g, &ident)?;
        let id = g.create_rel(start, end, t, props)?;
        set_rel_props(g, id, &on_create)?;
        return Ok(vec![vec![Value::Relationship(id)]]);
    }
    let mut out = Vec::with_capacity(found.len());
    for id in found {
        set_rel_props(g, id, &on_match)?;
        out.push(vec![Value::Relationship(id)]);
    }
    Ok(out)
}

fn create_node(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const NAME: &str = "apoc.create.node";
    let labels = strings_arg(NAME, args.first(), "labels")?;
    let props = map_arg(NAME, args.get(1), "props")?;
    let toks = label_tokens(g, &labels)?;
    let props = prop_tokens(g, &props)?;
    Ok(vec![vec![Value::Node(g.create_node(&toks, props)?)]])
}

fn create_relationship(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const NAME: &str = "apoc.create.relationship";
    let from = node_arg(NAME, args.first(), "from")?;
    let ty = rel_type_arg(NAME, args.get(1))?;
    let props = map_arg(NAME, args.get(2), "props")?;
    let to = node_arg(NAME, args.get(3), "to")?;
    let t = g.get_or_create_token(TokenKind::RelType, &ty)?;
    let props = prop_tokens(g, &props)?;
    Ok(vec![vec![Value::Relationship(g.create_rel(from, to, t, props)?)]])
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Relabel {
    Add,
    Set,
    Remove,
}

fn relabel(name: &str, args: &[Value], g: &mut dyn Graph, how: Relabel) -> Result<Vec<Vec<Value>>> {
    let nodes = nodes_arg(name, args.first(), "nodes")?;
    let labels = strings_arg(name, args.get(1), "labels")?;
    let toks = label_tokens(g, &labels)?;
    let mut out = Vec::with_capacity(nodes.len());
    for n in nodes {
        if how == Relabel::Set {
            for old in g.node_labels(n) {
                if !toks.contains(&old) {
                    g.remove_label(n, old)?;
                }
            }
        }
        for &t in &toks {
            if how == Relabel::Remove {
                g.remove_label(n, t)?;
            } else {
                g.add_label(n, t)?;
            }
        }
        out.push(vec![Value::Node(n)]);
    }
    Ok(out)
}
