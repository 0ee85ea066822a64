//! Entities: property access (with the read-only memo and the column aggregation's
//! columns), built-in functions on graph entities and paths (and, for this crate's tests, the
//! materialization of entities in rows).

use std::sync::Arc;

use arbor_cypher_plan::expr::{Builtin, PExpr, PathStep};
use arbor_model::{Error, NodeId, PathRef, PropertyMap, RelId, Result, Status, Value};

use super::seam::{eval, type_err};
use crate::ctx::{Ctx, Row};
#[cfg(test)]
use crate::graph::TokenId;
use crate::graph::{Graph, TokenKind};

/// `base.key`: a property of a node, relationship or map.
#[inline]
pub(super) fn property_of(
    base: &PExpr,
    key: &Arc<str>,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    Ok({
        // `n.key` on a node or relationship in a slot (the common case): read the id in
        // place, without copying the value or recursing.
        if let PExpr::Slot(s) = *base {
            match row.get(s) {
                Some(&Value::Node(id)) => {
                    let tok = ctx.token(&*g, TokenKind::PropertyKey, key);
                    if !ctx.read_only {
                        return entity_property(&Value::Node(id), tok, g);
                    }
                    let Some(t) = tok else {
                        return entity_property(&Value::Node(id), tok, g);
                    };
                    if let Some(v) = ctx.scan_cols.as_ref().and_then(|c| c.get(id, t)) {
                        return Ok(v.clone());
                    }
                    if let Some((n, k, v)) = &ctx.last_prop {
                        if *n == id && *k == t {
                            return Ok(v.clone());
                        }
                    }
                    let v = entity_property(&Value::Node(id), tok, g)?;
                    // Only values that are cheap to copy are remembered.
                    if memo_worthy(&v) {
                        ctx.last_prop = Some((id, t, v.clone()));
                    }
                    return Ok(v);
                }
                Some(&Value::Relationship(id)) => {
                    let tok = ctx.token(&*g, TokenKind::PropertyKey, key);
                    return entity_property(&Value::Relationship(id), tok, g);
                }
                // `r.key` on a map (or materialized entity): read it in place, as cloning
                // the whole map for one of its values costs a map per access.
                Some(b @ (Value::Map(_) | Value::NodeData(_) | Value::RelData(_))) => {
                    return property(b, key, g);
                }
                _ => {}
            }
        }
        let b = eval(base, row, ctx, g)?;
        match b {
            Value::Node(_) | Value::Relationship(_) => {
                let tok = ctx.token(&*g, TokenKind::PropertyKey, key);
                entity_property(&b, tok, g)?
            }
            _ => property(&b, key, g)?,
        }
    })
}

/// Whether a property value is cheap enough to copy to keep in the one-entry memo
/// `Ctx::last_prop` (scalars and shared strings; not lists or maps).
#[inline]
pub(super) fn memo_worthy(v: &Value) -> bool {
    matches!(v, Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::String(_))
}

pub(super) fn deleted_err() -> Error {
    Error::new(Status::EntityNotFound, "The entity has been deleted in this transaction")
        .with_detail("DeletedEntityAccess")
}

/// `base.key` for a node or relationship whose key token (`None`: no such key) is known.
pub(super) fn entity_property(base: &Value, tok: Option<u32>, g: &dyn Graph) -> Result<Value> {
    Ok(match base {
        Value::Node(id) => match tok {
            None => {
                if g.node_deleted_in_tx(*id) {
                    return Err(deleted_err());
                }
                Value::Null
            }
            Some(t) => match g.node_property(*id, t) {
                Some(v) => v,
                None => {
                    if g.node_deleted_in_tx(*id) {
                        return Err(deleted_err());
                    }
                    Value::Null
                }
            },
        },
        Value::Relationship(id) => match tok {
            None => Value::Null,
            Some(t) => match g.rel_property(*id, t) {
                Some(v) => v,
                None => {
                    if g.rel_deleted_in_tx(*id) {
                        return Err(deleted_err());
                    }
                    Value::Null
                }
            },
        },
        _ => Value::Null,
    })
}

/// `base.key` for any value.
pub(super) fn property(base: &Value, key: &str, g: &dyn Graph) -> Result<Value> {
    Ok(match base {
        Value::Null => Value::Null,
        Value::Node(_) | Value::Relationship(_) => {
            return entity_property(base, g.token_id(TokenKind::PropertyKey, key), g)
        }
        Value::Map(m) => m.get(key).cloned().unwrap_or(Value::Null),
        Value::NodeData(n) => n.properties.get(key).cloned().unwrap_or(Value::Null),
        Value::RelData(r) => r.properties.get(key).cloned().unwrap_or(Value::Null),
        Value::Point(p) => match arbor_model::spatial::point_component(p, key) {
            Some(v) => v,
            None => return Err(type_err(format!("No such field: {key}"))),
        },
        Value::Date(_)
        | Value::Time(_)
        | Value::LocalTime(_)
        | Value::DateTime(_)
        | Value::LocalDateTime(_)
        | Value::Duration(_) => match crate::temporal_access::component(base, key) {
            Some(v) => v,
            None => return Err(type_err(format!("No such field: {key}"))),
        },
        other => {
            return Err(type_err(format!(
                "Type mismatch: expected a map but was {}",
                other.type_name()
            )))
        }
    })
}

/// `properties(x)`.
pub(crate) fn properties(v: &Value, g: &dyn Graph) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Node(id) => {
            let mut m = PropertyMap::new();
            for (k, val) in g.node_properties(*id) {
                if let Some(n) = g.token_name(TokenKind::PropertyKey, k) {
                    m.insert(n.into(), val);
                }
            }
            Value::Map(m)
        }
        Value::Relationship(id) => {
            let mut m = PropertyMap::new();
            for (k, val) in g.rel_properties(*id) {
                if let Some(n) = g.token_name(TokenKind::PropertyKey, k) {
                    m.insert(n.into(), val);
                }
            }
            Value::Map(m)
        }
        Value::Map(m) => Value::Map(m.clone()),
        Value::NodeData(n) => Value::Map(n.properties.clone()),
        Value::RelData(r) => Value::Map(r.properties.clone()),
        other => {
            return Err(type_err(format!(
                "Invalid input for function 'properties()': Expected a node, a relationship or a map, got: {}",
                other.type_name()
            )))
        }
    })
}

pub(super) fn builtin(
    b: Builtin,
    args: &[PExpr],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    if matches!(b, Builtin::AnyLabel | Builtin::DynLabelsAll | Builtin::DynLabelsAny) {
        return super::labels::label_builtin(b, args, row, ctx, g);
    }
    if b == Builtin::Coalesce {
        for a in args {
            let v = eval(a, row, ctx, g)?;
            if !v.is_null() {
                return Ok(v);
            }
        }
        return Ok(Value::Null);
    }
    let Some(a) = args.first() else { return Ok(Value::Null) };
    let v = eval(a, row, ctx, g)?;
    let bad = |f: &str, v: &Value| {
        type_err(format!("Invalid input for function '{f}()': got: {}", v.type_name()))
    };
    Ok(match (b, &v) {
        (Builtin::Exists, v) => Value::Bool(!v.is_null()),
        (_, Value::Null) => Value::Null,
        (Builtin::Id, Value::Node(id)) => Value::Int(id.0 as i64),
        (Builtin::Id, Value::Relationship(id)) => Value::Int(id.0 as i64),
        (Builtin::ElementId, Value::Node(id)) => Value::String(Arc::from(format!("n:{}", id.0))),
        (Builtin::ElementId, Value::Relationship(id)) => {
            Value::String(Arc::from(format!("r:{}", id.0)))
        }
        (Builtin::Labels, Value::Node(id)) => {
            if g.node_deleted_in_tx(*id) {
                return Err(deleted_err());
            }
            let mut names: Vec<String> = g
                .node_labels(*id)
                .into_iter()
                .filter_map(|t| g.token_name(TokenKind::Label, t))
                .collect();
            names.sort();
            Value::List(names.into_iter().map(Value::from).collect())
        }
        (Builtin::Type, Value::Relationship(id)) => match g.rel_info(*id) {
            Some((_, _, t)) => {
                g.token_name(TokenKind::RelType, t).map(Value::from).unwrap_or(Value::Null)
            }
            None => match ctx.deleted_rel_types.get(id) {
                Some(t) => {
                    g.token_name(TokenKind::RelType, *t).map(Value::from).unwrap_or(Value::Null)
                }
                None => return Err(deleted_err()),
            },
        },
        // Materialised entities (APOC's virtual nodes and relationships).
        (Builtin::Id, Value::NodeData(n)) => Value::Int(n.id.0 as i64),
        (Builtin::Id, Value::RelData(r)) => Value::Int(r.id.0 as i64),
        (Builtin::ElementId, Value::NodeData(n)) => {
            Value::String(Arc::from(format!("n:{}", n.id.0 as i64)))
        }
        (Builtin::ElementId, Value::RelData(r)) => {
            Value::String(Arc::from(format!("r:{}", r.id.0 as i64)))
        }
        (Builtin::Labels, Value::NodeData(n)) => {
            Value::List(n.labels.iter().map(|l| Value::str(l)).collect())
        }
        (Builtin::Type, Value::RelData(r)) => Value::str(&r.rel_type),
        (Builtin::Properties, v) => properties(v, g)?,
        (Builtin::Keys, v) => match properties(v, g) {
            // A LOAD CSV row lists its header's order, a `.*` projection the projected keys
            // first, as Neo4j does.
            Ok(Value::Map(m)) => {
                Value::List(m.keys_ordered().map(|k| Value::from(k.clone())).collect())
            }
            _ => return Err(bad("keys", v)),
        },
        (Builtin::StartNode, Value::Relationship(id)) => match g.rel_info(*id) {
            Some((s, _, _)) => Value::Node(s),
            None => Value::Null,
        },
        (Builtin::EndNode, Value::Relationship(id)) => match g.rel_info(*id) {
            Some((_, e, _)) => Value::Node(e),
            None => Value::Null,
        },
        (Builtin::Nodes, Value::Path(p)) => {
            Value::List(p.nodes.iter().map(|n| Value::Node(*n)).collect())
        }
        (Builtin::Relationships, Value::Path(p)) => {
            Value::List(p.rels.iter().map(|r| Value::Relationship(*r)).collect())
        }
        (Builtin::Length, Value::Path(p)) => Value::Int(p.rels.len() as i64),
        (Builtin::Length, Value::String(s)) => Value::Int(s.chars().count() as i64),
        (Builtin::Length, Value::List(l)) => Value::Int(l.len() as i64),
        (b, v) => {
            let name = match b {
                Builtin::Id => "id",
                Builtin::ElementId => "elementId",
                Builtin::Labels => "labels",
                Builtin::Type => "type",
                Builtin::Properties => "properties",
                Builtin::Keys => "keys",
                Builtin::StartNode => "startNode",
                Builtin::EndNode => "endNode",
                Builtin::Nodes => "nodes",
                Builtin::Relationships => "relationships",
                Builtin::Length => "length",
                Builtin::Exists => "exists",
                Builtin::Coalesce => "coalesce",
                Builtin::AnyLabel | Builtin::DynLabelsAll | Builtin::DynLabelsAny => "labels",
            };
            if matches!(b, Builtin::Labels | Builtin::Type) {
                // The TCK classifies a non-entity argument of these as a bad value.
                return Err(Error::type_error(format!(
                    "Invalid input for function '{name}()': got: {}",
                    v.type_name()
                ))
                .with_detail("InvalidArgumentValue"));
            }
            return Err(bad(name, v));
        }
    })
}

/// The other end of `rel` seen from `node`.
pub(super) fn other_end(g: &dyn Graph, rel: RelId, node: NodeId) -> Option<NodeId> {
    let (s, e, _) = g.rel_info(rel)?;
    Some(if s == node { e } else { s })
}

pub(super) fn build_path(steps: &[PathStep], row: &Row, g: &dyn Graph) -> Result<Value> {
    let mut nodes = Vec::new();
    let mut rels = Vec::new();
    for step in steps {
        match step {
            PathStep::Node(s) => match &row[*s] {
                Value::Node(id) => {
                    if nodes.is_empty() {
                        nodes.push(*id);
                    }
                }
                Value::Null => return Ok(Value::Null),
                other => {
                    return Err(type_err(format!("Expected a node, got {}", other.type_name())))
                }
            },
            PathStep::Rel(s) => match &row[*s] {
                Value::Relationship(r) => {
                    let cur = *nodes.last().ok_or_else(|| Error::internal("path start"))?;
                    let next = other_end(g, *r, cur).ok_or_else(deleted_err)?;
                    rels.push(*r);
                    nodes.push(next);
                }
                Value::Null => return Ok(Value::Null),
                other => {
                    return Err(type_err(format!(
                        "Expected a relationship, got {}",
                        other.type_name()
                    )))
                }
            },
            PathStep::VarRel(s) => match &row[*s] {
                Value::List(items) => {
                    for it in items {
                        if let Value::Relationship(r) = it {
                            let cur = *nodes.last().ok_or_else(|| Error::internal("path start"))?;
                            let next = other_end(g, *r, cur).ok_or_else(deleted_err)?;
                            rels.push(*r);
                            nodes.push(next);
                        }
                    }
                }
                Value::Null => return Ok(Value::Null),
                other => {
                    return Err(type_err(format!("Expected a list, got {}", other.type_name())))
                }
            },
        }
    }
    Ok(Value::Path(Arc::new(PathRef { nodes, rels })))
}

/// Token names seen while materializing rows for this crate's tests (the engine writes result
/// rows out itself; its record writer caches names the same way).
#[cfg(test)]
#[derive(Default)]
pub(crate) struct TokenNames {
    by_kind: [Vec<Option<String>>; 3],
}

/// Token ids above this are resolved without caching (the cache is a dense vector).
#[cfg(test)]
const MAX_CACHED_TOKEN: usize = 1 << 16;

#[cfg(test)]
impl TokenNames {
    fn name(&mut self, g: &dyn Graph, kind: TokenKind, t: TokenId) -> Option<String> {
        let i = t as usize;
        if i >= MAX_CACHED_TOKEN {
            return g.token_name(kind, t);
        }
        let names = &mut self.by_kind[match kind {
            TokenKind::Label => 0,
            TokenKind::RelType => 1,
            TokenKind::PropertyKey => 2,
        }];
        if let Some(Some(n)) = names.get(i) {
            return Some(n.clone());
        }
        let n = g.token_name(kind, t)?;
        if names.len() <= i {
            names.resize(i + 1, None);
        }
        names[i] = Some(n.clone());
        Some(n)
    }
}

/// Converts entity references (also inside lists, maps and paths) into materialized values:
/// for this crate's tests only (see `Execution::next`).
#[cfg(test)]
pub(crate) fn materialize(v: Value, g: &dyn Graph, names: &mut TokenNames) -> Value {
    match v {
        Value::Node(id) => Value::NodeData(Arc::new(node_data(id, g, names))),
        Value::Relationship(id) => Value::RelData(Arc::new(rel_data(id, g, names))),
        Value::Path(p) => Value::PathData(Arc::new(arbor_model::PathData {
            nodes: p.nodes.iter().map(|n| node_data(*n, g, names)).collect(),
            rels: p.rels.iter().map(|r| rel_data(*r, g, names)).collect(),
        })),
        Value::List(items) => {
            Value::List(items.into_iter().map(|x| materialize(x, g, names)).collect())
        }
        Value::Map(mut m) => {
            // In place: the map keeps its display order (`LOAD CSV` headers, `.*` projections).
            for (_, x) in &mut m {
                *x = materialize(std::mem::replace(x, Value::Null), g, names);
            }
            Value::Map(m)
        }
        other => other,
    }
}

#[cfg(test)]
fn node_data(id: NodeId, g: &dyn Graph, names: &mut TokenNames) -> arbor_model::NodeData {
    let mut labels: Vec<String> =
        g.node_labels(id).into_iter().filter_map(|t| names.name(g, TokenKind::Label, t)).collect();
    labels.sort();
    // Inserted one by one: for the few properties of a node this is cheaper than `collect`,
    // which buffers, sorts and bulk-builds (keys are distinct, so the result is the same).
    let mut properties = PropertyMap::new();
    for (k, v) in g.node_properties(id) {
        if let Some(n) = names.name(g, TokenKind::PropertyKey, k) {
            properties.insert(n.into(), v);
        }
    }
    arbor_model::NodeData { id, labels, properties }
}

#[cfg(test)]
fn rel_data(id: RelId, g: &dyn Graph, names: &mut TokenNames) -> arbor_model::RelData {
    let (start, end, t) = g.rel_info(id).unwrap_or((NodeId(0), NodeId(0), 0));
    let properties = g
        .rel_properties(id)
        .into_iter()
        .filter_map(|(k, v)| names.name(g, TokenKind::PropertyKey, k).map(|n| (n, v)))
        .collect();
    arbor_model::RelData {
        id,
        start,
        end,
        rel_type: names.name(g, TokenKind::RelType, t).unwrap_or_default(),
        properties,
    }
}
