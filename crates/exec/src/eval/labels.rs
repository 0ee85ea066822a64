//! Label expressions at run time: `n:%` (some label) and Neo4j 5.26's dynamic labels and types
//! (`n:$(names)`, `n:$any(names)`, `CREATE (n:$(names))`, `SET n:$(names)`), with Neo4j's
//! errors for names that are not strings or cannot be tokens.

use std::sync::Arc;

use arbor_cypher_plan::expr::{Builtin, PExpr};
use arbor_model::{Error, Result, Status, Value};

use super::seam::eval;
use crate::ctx::{Ctx, Row};
use crate::graph::{Graph, TokenKind};

/// What a dynamic name stands for, as Neo4j's messages name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameOf {
    NodeLabel,
    RelType,
}

/// The names a `$(expr)` value stands for: a string, or a list of strings.
pub(crate) fn dyn_names(v: &Value, of: NameOf) -> Result<Vec<Arc<str>>> {
    let bad = || {
        let what = match of {
            NameOf::NodeLabel => "node label",
            NameOf::RelType => "relationship type",
        };
        Error::type_error(format!("Expected {what} to be a string or list of strings."))
            .with_detail("InvalidArgumentType")
    };
    let name = |v: &Value| match v {
        Value::String(s) if s.is_empty() || s.contains('\0') => Err(Error::new(
            Status::TokenNameError,
            format!(
                "'{s}' is not a valid token name. Token names cannot be empty or contain any \
                 null-bytes."
            ),
        )),
        Value::String(s) => Ok(s.clone()),
        _ => Err(bad()),
    };
    match v {
        Value::List(items) => items.iter().map(name).collect(),
        other => Ok(vec![name(other)?]),
    }
}

/// `AnyLabel`, `DynLabelsAll` and `DynLabelsAny` on `args`.
pub(super) fn label_builtin(
    b: Builtin,
    args: &[PExpr],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<Value> {
    let Some(base) = args.first() else { return Ok(Value::Null) };
    let v = eval(base, row, ctx, g)?;
    let names = match (b, args.get(1)) {
        (Builtin::AnyLabel, _) | (_, None) => None,
        (_, Some(e)) => Some(eval(e, row, ctx, g)?),
    };
    let any = b == Builtin::DynLabelsAny;
    let test = |names: &[Arc<str>], has: &mut dyn FnMut(&str) -> bool| {
        if any {
            names.iter().any(|n| has(n))
        } else {
            names.iter().all(|n| has(n))
        }
    };
    Ok(match v {
        Value::Null => Value::Null,
        Value::Node(id) => match names {
            None => Value::Bool(!g.node_labels(id).is_empty()),
            Some(names) => {
                let names = dyn_names(&names, NameOf::NodeLabel)?;
                // Not through the context's token cache: it is keyed by the name's address,
                // and these names live for one row.
                Value::Bool(test(&names, &mut |n| {
                    g.token_id(TokenKind::Label, n).is_some_and(|t| g.node_has_label(id, t))
                }))
            }
        },
        Value::Relationship(id) => match names {
            None => Value::Bool(true),
            Some(names) => {
                let names = dyn_names(&names, NameOf::RelType)?;
                let t = g.rel_info(id).and_then(|(_, _, t)| g.token_name(TokenKind::RelType, t));
                Value::Bool(test(&names, &mut |n| t.as_deref() == Some(n)))
            }
        },
        other => {
            return Err(Error::type_error(format!(
                "Type mismatch: expected Node or Relationship but was {}",
                other.type_name()
            ))
            .with_detail("InvalidArgumentType"))
        }
    })
}
