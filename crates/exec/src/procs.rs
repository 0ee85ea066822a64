//! Built-in procedures (`CALL db.labels()` ...), answered from the graph's tokens.

use arbor_cypher_plan::ProcSig;
use arbor_model::{Error, Result, Status, Value};

use crate::graph::{Graph, TokenKind};

/// The signature of a built-in procedure.
pub fn signature(name: &str) -> Option<ProcSig> {
    let (inputs, outputs): (&[&str], &[&str]) = match name {
        "db.labels" => (&[], &["label"]),
        "db.relationshipTypes" => (&[], &["relationshipType"]),
        "db.propertyKeys" => (&[], &["propertyKey"]),
        _ => return None,
    };
    Some(ProcSig {
        name: name.to_string(),
        inputs: inputs.iter().map(|s| s.to_string()).collect(),
        outputs: outputs.iter().map(|s| s.to_string()).collect(),
    })
}

/// Runs a procedure; each returned row has one value per output column.
///
/// Labels and relationship types are listed when in use (as Neo4j does), property keys all, each
/// in token-creation order.
pub fn call(name: &str, _args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let rows = match name {
        "db.labels" => g
            .tokens(TokenKind::Label)
            .into_iter()
            .filter(|(t, _)| g.count_nodes(Some(*t)) > 0)
            .map(|(_, n)| vec![Value::from(n)])
            .collect(),
        "db.relationshipTypes" => g
            .tokens(TokenKind::RelType)
            .into_iter()
            .filter(|(t, _)| g.next_rel(&[*t], arbor_model::RelId(0)).is_some())
            .map(|(_, n)| vec![Value::from(n)])
            .collect(),
        "db.propertyKeys" => g
            .tokens(TokenKind::PropertyKey)
            .into_iter()
            .map(|(_, n)| vec![Value::from(n)])
            .collect(),
        _ => {
            return Err(Error::new(
                Status::ProcedureNotFound,
                format!("There is no procedure with the name `{name}` registered"),
            ))
        }
    };
    Ok(rows)
}
