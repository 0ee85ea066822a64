//! Decoding of the values servers send in replies, entities included: nodes, relationships
//! and paths (which the server-side decoder rightly refuses as parameters), and the captured
//! `RECORD` messages of [`Client::take_captured`](super::Client::take_captured).

use std::sync::Arc;

use arbor_model::{NodeData, NodeId, PathData, PropertyMap, RelData, RelId, Result, Value};

use super::{decode_err, protocol_error};
use crate::message::tag;
use crate::packstream::{DecodeError, Decoder, Header};
use crate::values;

/// Decodes the RECORD messages of [`Client::take_captured`] into rows.
pub fn decode_captured(mut bytes: &[u8]) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    while !bytes.is_empty() {
        let Some((len, rest)) = bytes.split_first_chunk::<4>() else {
            return Err(protocol_error("captured records: truncated length"));
        };
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return Err(protocol_error("captured records: truncated message"));
        }
        let (msg, rest) = rest.split_at(len);
        bytes = rest;
        let mut dec = Decoder::new(msg);
        match dec.header().map_err(decode_err)? {
            Header::Struct { tag: tag::RECORD, .. } => {}
            other => return Err(protocol_error(format!("captured a {}", other.type_name()))),
        }
        match decode_result_value(&mut dec).map_err(decode_err)? {
            Value::List(v) => rows.push(v),
            other => return Err(protocol_error(format!("RECORD holds a {}", other.type_name()))),
        }
    }
    Ok(rows)
}

/// Decodes one value of a reply: like [`values::decode_value`] but also nodes, relationships
/// and paths, which servers send in records.
pub fn decode_result_value(dec: &mut Decoder<'_>) -> std::result::Result<Value, DecodeError> {
    values::decode_value_with(dec, decode_result_struct)
}

fn want_fields(what: &str, got: usize, allowed: &[usize]) -> std::result::Result<(), DecodeError> {
    if allowed.contains(&got) {
        Ok(())
    } else {
        Err(DecodeError::malformed(format!("{what} structure with {got} fields")))
    }
}

fn entity_id(v: i64, what: &str) -> std::result::Result<u64, DecodeError> {
    u64::try_from(v).map_err(|_| DecodeError::invalid(format!("negative {what} id {v}")))
}

fn result_props(dec: &mut Decoder<'_>) -> std::result::Result<PropertyMap, DecodeError> {
    match decode_result_value(dec)? {
        Value::Map(m) => Ok(m),
        other => Err(DecodeError::malformed(format!("properties are a {}", other.type_name()))),
    }
}

fn decode_node(dec: &mut Decoder<'_>, fields: usize) -> std::result::Result<NodeData, DecodeError> {
    want_fields("Node", fields, &[3, 4])?;
    let id = entity_id(dec.int()?, "node")?;
    // Labels straight into strings (no intermediate list of values).
    let labels = match dec.header()? {
        Header::List(len) => {
            let mut labels = Vec::with_capacity(len);
            for _ in 0..len {
                match dec.header()? {
                    Header::String(n) => labels.push(dec.string_body(n)?.to_owned()),
                    other => {
                        return Err(DecodeError::malformed(format!(
                            "Node labels must contain Strings, got {}",
                            other.type_name()
                        )))
                    }
                }
            }
            labels
        }
        other => return Err(DecodeError::malformed(format!("labels are a {}", other.type_name()))),
    };
    let properties = result_props(dec)?;
    if fields == 4 {
        dec.skip()?; // element id: opaque
    }
    Ok(NodeData { id: NodeId(id), labels, properties })
}

/// An unbound relationship: id, type, properties (endpoints come from the path).
fn decode_unbound(
    dec: &mut Decoder<'_>,
    fields: usize,
) -> std::result::Result<(u64, String, PropertyMap), DecodeError> {
    want_fields("UnboundRelationship", fields, &[3, 4])?;
    let id = entity_id(dec.int()?, "relationship")?;
    let rel_type = dec.string()?.to_owned();
    let props = result_props(dec)?;
    if fields == 4 {
        dec.skip()?;
    }
    Ok((id, rel_type, props))
}

fn decode_result_struct(
    dec: &mut Decoder<'_>,
    fields: usize,
    t: u8,
) -> std::result::Result<Value, DecodeError> {
    match t {
        values::tag::NODE => Ok(Value::NodeData(Arc::new(decode_node(dec, fields)?))),
        values::tag::RELATIONSHIP => {
            want_fields("Relationship", fields, &[5, 8])?;
            let id = entity_id(dec.int()?, "relationship")?;
            let start = entity_id(dec.int()?, "node")?;
            let end = entity_id(dec.int()?, "node")?;
            let rel_type = dec.string()?.to_owned();
            let properties = result_props(dec)?;
            for _ in 5..fields {
                dec.skip()?;
            }
            Ok(Value::RelData(Arc::new(RelData {
                id: RelId(id),
                start: NodeId(start),
                end: NodeId(end),
                rel_type,
                properties,
            })))
        }
        values::tag::UNBOUND_RELATIONSHIP => {
            // Only meaningful inside a path; standing alone, keep what we know.
            let (id, rel_type, properties) = decode_unbound(dec, fields)?;
            Ok(Value::RelData(Arc::new(RelData {
                id: RelId(id),
                start: NodeId(0),
                end: NodeId(0),
                rel_type,
                properties,
            })))
        }
        values::tag::PATH => decode_path(dec, fields),
        // Temporal and spatial values: as the server reads them.
        _ => values::decode_struct(dec, fields, t),
    }
}

fn decode_path(dec: &mut Decoder<'_>, fields: usize) -> std::result::Result<Value, DecodeError> {
    want_fields("Path", fields, &[3])?;
    let distinct_nodes = match dec.header()? {
        Header::List(n) => {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                match dec.header()? {
                    Header::Struct { fields, tag } if tag == values::tag::NODE => {
                        v.push(decode_node(dec, fields)?)
                    }
                    _ => return Err(DecodeError::malformed("Path nodes must be Nodes")),
                }
            }
            v
        }
        _ => return Err(DecodeError::malformed("Path nodes must be a List")),
    };
    let rels = match dec.header()? {
        Header::List(n) => {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                match dec.header()? {
                    Header::Struct { fields, tag } if tag == values::tag::UNBOUND_RELATIONSHIP => {
                        v.push(decode_unbound(dec, fields)?)
                    }
                    _ => return Err(DecodeError::malformed("Path rels must be Relationships")),
                }
            }
            v
        }
        _ => return Err(DecodeError::malformed("Path relationships must be a List")),
    };
    let indices = match decode_result_value(dec)? {
        Value::List(items) => items
            .into_iter()
            .map(|v| match v {
                Value::Int(i) => Ok(i),
                _ => Err(DecodeError::malformed("Path indices must be Integers")),
            })
            .collect::<std::result::Result<Vec<i64>, _>>()?,
        _ => return Err(DecodeError::malformed("Path indices must be a List")),
    };
    if indices.len() % 2 != 0 {
        return Err(DecodeError::malformed("Path index list has odd length"));
    }
    let Some(first) = distinct_nodes.first() else {
        return Err(DecodeError::malformed("Path without nodes"));
    };
    let mut nodes = vec![first.clone()];
    let mut path_rels = Vec::with_capacity(indices.len() / 2);
    for pair in indices.chunks(2) {
        let (ri, ni) = (pair[0], pair[1]);
        let rel = usize::try_from(ri.unsigned_abs())
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| rels.get(i))
            .ok_or_else(|| DecodeError::malformed("Path relationship index out of range"))?;
        let next = usize::try_from(ni)
            .ok()
            .and_then(|i| distinct_nodes.get(i))
            .ok_or_else(|| DecodeError::malformed("Path node index out of range"))?;
        let prev = nodes.last().map(|n| n.id).unwrap_or(NodeId(0));
        let (start, end) = if ri > 0 { (prev, next.id) } else { (next.id, prev) };
        path_rels.push(RelData {
            id: RelId(rel.0),
            start,
            end,
            rel_type: rel.1.clone(),
            properties: rel.2.clone(),
        });
        nodes.push(next.clone());
    }
    Ok(Value::PathData(Arc::new(PathData { nodes, rels: path_rels })))
}
