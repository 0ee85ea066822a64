//! APOC's core procedures as the GraphRAG/OGM libraries call them (`apoc.meta.data`,
//! `apoc.merge.node`, `apoc.create.*`, ...), with APOC's signatures and column names.
//!
//! Split by APOC package: [`meta`] reads the schema from the data ([`meta_graph`] as a
//! virtual graph), [`write`] creates and merges entities, [`refactor`] merges nodes,
//! [`periodic`] runs Cypher in batches of transactions, [`util`] sleeps (interruptibly),
//! [`meta_schema`] maps the schema and property types, [`path`] expands paths and subgraphs,
//! [`cypher`] runs nested statements (`apoc.cypher.run`, `apoc.when`, `apoc.case`), [`create`]
//! sets dynamic properties and answers `apoc.help`.
//! Procedures that write are marked so: a query calling one is a write query, refused in read
//! transactions with `Neo.ClientError.Statement.AccessMode`.

mod create;
mod cypher;
mod meta;
mod meta_graph;
mod meta_schema;
mod path;
mod periodic;
mod refactor;
mod registry;
mod util;
mod write;

use arbor_cypher_plan::CypherType;
use arbor_model::{Error, NodeId, PropertyMap, RelId, Result, Status, Value};

use crate::graph::{Graph, TokenId, TokenKind};
use crate::procs::col;
pub(crate) use registry::procedures;

fn list_of(t: CypherType) -> CypherType {
    CypherType::List(Box::new(t))
}

/// An `ArgumentError` naming the procedure.
fn arg_error(proc_name: &str, what: &str) -> Error {
    Error::new(Status::ArgumentError, format!("Failed to invoke procedure `{proc_name}`: {what}"))
}

/// A map argument (null reads as the empty map).
fn map_arg(proc_name: &str, v: Option<&Value>, what: &str) -> Result<PropertyMap> {
    match v {
        None | Some(Value::Null) => Ok(PropertyMap::new()),
        Some(Value::Map(m)) => Ok(m.clone()),
        Some(other) => {
            Err(arg_error(proc_name, &format!("{what} must be a map, got {}", other.type_name())))
        }
    }
}

/// A list-of-strings argument (null reads as the empty list).
fn strings_arg(proc_name: &str, v: Option<&Value>, what: &str) -> Result<Vec<String>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.to_string()]),
        Some(Value::List(items)) => items
            .iter()
            .filter(|i| !matches!(i, Value::Null))
            .map(|i| match i {
                Value::String(s) => Ok(s.to_string()),
                other => Err(arg_error(
                    proc_name,
                    &format!("{what} must hold strings, got {}", other.type_name()),
                )),
            })
            .collect(),
        Some(other) => Err(arg_error(
            proc_name,
            &format!("{what} must be a list of strings, got {}", other.type_name()),
        )),
    }
}

/// A node argument: a node, or (as APOC accepts) a list of nodes or node ids.
fn nodes_arg(proc_name: &str, v: Option<&Value>, what: &str) -> Result<Vec<NodeId>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Node(id)) => Ok(vec![*id]),
        Some(Value::NodeData(n)) => Ok(vec![n.id]),
        Some(Value::Int(i)) if *i >= 0 => Ok(vec![NodeId(*i as u64)]),
        Some(Value::List(items)) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(nodes_arg(proc_name, Some(i), what)?);
            }
            Ok(out)
        }
        Some(other) => {
            Err(arg_error(proc_name, &format!("{what} must be a node, got {}", other.type_name())))
        }
    }
}

/// One node argument that must be present.
fn node_arg(proc_name: &str, v: Option<&Value>, what: &str) -> Result<NodeId> {
    match v {
        Some(Value::Node(id)) => Ok(*id),
        Some(Value::NodeData(n)) => Ok(n.id),
        None | Some(Value::Null) => Err(arg_error(proc_name, &format!("{what} is null"))),
        Some(other) => {
            Err(arg_error(proc_name, &format!("{what} must be a node, got {}", other.type_name())))
        }
    }
}

/// A relationship-type argument: a non-empty string.
fn rel_type_arg(proc_name: &str, v: Option<&Value>) -> Result<String> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(arg_error(proc_name, "It's not possible to create a relationship without a type")),
    }
}

/// Label names to tokens, creating missing ones (the labels are about to be written).
fn label_tokens(g: &mut dyn Graph, names: &[String]) -> Result<Vec<TokenId>> {
    names.iter().map(|n| g.get_or_create_token(TokenKind::Label, n)).collect()
}

/// Map entries to (key token, value), creating missing keys; null values are left out.
fn prop_tokens(g: &mut dyn Graph, m: &PropertyMap) -> Result<Vec<(TokenId, Value)>> {
    let mut out = Vec::with_capacity(m.len());
    for (k, v) in m.iter() {
        if matches!(v, Value::Null) {
            continue;
        }
        out.push((g.get_or_create_token(TokenKind::PropertyKey, k.as_str())?, v.clone()));
    }
    Ok(out)
}

/// Sets every entry of `m` on a node (null removes, as `SET n += m` does).
fn set_node_props(g: &mut dyn Graph, id: NodeId, m: &PropertyMap) -> Result<()> {
    for (k, v) in m.iter() {
        let key = g.get_or_create_token(TokenKind::PropertyKey, k.as_str())?;
        g.set_node_property(id, key, v.clone())?;
    }
    Ok(())
}

/// Sets every entry of `m` on a relationship.
fn set_rel_props(g: &mut dyn Graph, id: RelId, m: &PropertyMap) -> Result<()> {
    for (k, v) in m.iter() {
        let key = g.get_or_create_token(TokenKind::PropertyKey, k.as_str())?;
        g.set_rel_property(id, key, v.clone())?;
    }
    Ok(())
}
