//! `apoc.create.nodes` and the dynamic-key property setters `apoc.create.setProperty`/
//! `setProperties`/`setRelProperty`/`setRelProperties`/`removeProperties` (WRITE), and
//! `apoc.help(text)`: the APOC (and GDS) procedures and functions whose name or description
//! contains the text.

use arbor_cypher_plan::CypherType as T;
use arbor_model::{PropertyMap, RelId, Result, Value};

use super::{arg_error, col, label_tokens, list_of, map_arg, nodes_arg, prop_tokens, strings_arg};
use crate::graph::{Graph, TokenKind};
use crate::procs::{Procedure, Registry};

pub(super) fn procedures() -> Vec<Procedure> {
    let node_out = || vec![col("node", T::Node)];
    let rel_out = || vec![col("rel", T::Relationship)];
    let mut out = vec![
        Procedure::new(
            "apoc.create.nodes",
            vec![col("labels", list_of(T::String)), col("props", list_of(T::Map))],
            node_out(),
            "Creates NODE values with the given dynamic labels.",
            create_nodes,
        ),
        Procedure::new(
            "apoc.create.setProperty",
            vec![col("nodes", T::Any), col("key", T::String), col("value", T::Any)],
            node_out(),
            "Sets the given property to the given NODE values.",
            |a, g| set_node("apoc.create.setProperty", a, g, one_prop(a)),
        ),
        Procedure::new(
            "apoc.create.setProperties",
            vec![
                col("nodes", T::Any),
                col("keys", list_of(T::String)),
                col("values", list_of(T::Any)),
            ],
            node_out(),
            "Sets the given properties to the given NODE values.",
            |a, g| set_node("apoc.create.setProperties", a, g, zip_props(a)),
        ),
        Procedure::new(
            "apoc.create.removeProperties",
            vec![col("nodes", T::Any), col("keys", list_of(T::String))],
            node_out(),
            "Removes the given properties from the given NODE values.",
            |a, g| set_node("apoc.create.removeProperties", a, g, null_props(a)),
        ),
        Procedure::new(
            "apoc.create.setRelProperty",
            vec![col("rels", T::Any), col("key", T::String), col("value", T::Any)],
            rel_out(),
            "Sets the given property on the RELATIONSHIP values.",
            |a, g| set_rel("apoc.create.setRelProperty", a, g, one_prop(a)),
        ),
        Procedure::new(
            "apoc.create.setRelProperties",
            vec![
                col("rels", T::Any),
                col("keys", list_of(T::String)),
                col("values", list_of(T::Any)),
            ],
            rel_out(),
            "Sets the given properties on the RELATIONSHIP values.",
            |a, g| set_rel("apoc.create.setRelProperties", a, g, zip_props(a)),
        ),
    ];
    for p in &mut out {
        p.writes = true;
    }
    out.push(Procedure::new(
        "apoc.help",
        vec![col("proc", T::String)],
        vec![
            col("type", T::String),
            col("name", T::String),
            col("text", T::String),
            col("signature", T::String),
            col("roles", list_of(T::String)),
            col("writes", T::Boolean),
            col("core", T::Boolean),
            col("isDeprecated", T::Boolean),
        ],
        "Returns descriptions of the available APOC procedures and functions. If a keyword is \
         provided, it will return only those procedures and functions that have the keyword in \
         their name.",
        help,
    ));
    out
}

fn create_nodes(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    const NAME: &str = "apoc.create.nodes";
    let labels = strings_arg(NAME, args.first(), "labels")?;
    let toks = label_tokens(g, &labels)?;
    let props = match args.get(1) {
        Some(Value::List(items)) => items.clone(),
        None | Some(Value::Null) => Vec::new(),
        Some(other) => {
            return Err(arg_error(
                NAME,
                &format!("props must be a list of maps, got {}", other.type_name()),
            ))
        }
    };
    let mut out = Vec::with_capacity(props.len());
    for p in &props {
        let m = map_arg(NAME, Some(p), "props")?;
        let p = prop_tokens(g, &m)?;
        out.push(vec![Value::Node(g.create_node(&toks, p)?)]);
    }
    Ok(out)
}

/// The (key, value) pairs to set, or the argument error.
type Props = std::result::Result<PropertyMap, String>;

fn one_prop(a: &[Value]) -> Props {
    match a.get(1) {
        Some(Value::String(k)) => {
            let mut m = PropertyMap::new();
            m.insert(k.to_string().into(), a.get(2).cloned().unwrap_or(Value::Null));
            Ok(m)
        }
        _ => Err("key must be a string".into()),
    }
}

fn zip_props(a: &[Value]) -> Props {
    let keys = match a.get(1) {
        Some(Value::List(k)) => k.as_slice(),
        _ => return Err("keys must be a list of strings".into()),
    };
    let values = match a.get(2) {
        Some(Value::List(v)) => v.as_slice(),
        _ => return Err("values must be a list".into()),
    };
    if keys.len() != values.len() {
        return Err(format!("{} keys and {} values", keys.len(), values.len()));
    }
    let mut m = PropertyMap::new();
    for (k, v) in keys.iter().zip(values) {
        match k {
            Value::String(k) => {
                m.insert(k.to_string().into(), v.clone());
            }
            _ => return Err("keys must be strings".into()),
        }
    }
    Ok(m)
}

fn null_props(a: &[Value]) -> Props {
    let keys = match a.get(1) {
        Some(Value::List(k)) => k.clone(),
        Some(Value::String(k)) => vec![Value::String(k.clone())],
        _ => return Err("keys must be a list of strings".into()),
    };
    let values = vec![Value::Null; keys.len()];
    zip_props(&[Value::Null, Value::List(keys), Value::List(values)])
}

fn set_node(name: &str, a: &[Value], g: &mut dyn Graph, props: Props) -> Result<Vec<Vec<Value>>> {
    let props = props.map_err(|e| arg_error(name, &e))?;
    let nodes = nodes_arg(name, a.first(), "nodes")?;
    let mut out = Vec::with_capacity(nodes.len());
    for n in nodes {
        for (k, v) in props.iter() {
            let key = g.get_or_create_token(TokenKind::PropertyKey, k.as_str())?;
            g.set_node_property(n, key, v.clone())?;
        }
        out.push(vec![Value::Node(n)]);
    }
    Ok(out)
}

fn rels_arg(name: &str, v: Option<&Value>, out: &mut Vec<RelId>) -> Result<()> {
    match v {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Relationship(r)) => {
            out.push(*r);
            Ok(())
        }
        Some(Value::RelData(r)) => {
            out.push(r.id);
            Ok(())
        }
        Some(Value::Int(i)) if *i >= 0 => {
            out.push(RelId(*i as u64));
            Ok(())
        }
        Some(Value::List(items)) => items.iter().try_for_each(|i| rels_arg(name, Some(i), out)),
        Some(other) => {
            Err(arg_error(name, &format!("rels must be relationships, got {}", other.type_name())))
        }
    }
}

fn set_rel(name: &str, a: &[Value], g: &mut dyn Graph, props: Props) -> Result<Vec<Vec<Value>>> {
    let props = props.map_err(|e| arg_error(name, &e))?;
    let mut rels = Vec::new();
    rels_arg(name, a.first(), &mut rels)?;
    let mut out = Vec::with_capacity(rels.len());
    for r in rels {
        for (k, v) in props.iter() {
            let key = g.get_or_create_token(TokenKind::PropertyKey, k.as_str())?;
            g.set_rel_property(r, key, v.clone())?;
        }
        out.push(vec![Value::Relationship(r)]);
    }
    Ok(out)
}

/// `apoc.help(text)`: procedures then functions, by name, whose name (or description)
/// contains `text` case-insensitively.
fn help(args: &[Value], _: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let needle = match args.first() {
        Some(Value::String(s)) => s.to_lowercase(),
        _ => String::new(),
    };
    let wanted = |name: &str, text: &str| {
        (name.starts_with("apoc.") || name.starts_with("gds."))
            && (name.to_lowercase().contains(&needle) || text.to_lowercase().contains(&needle))
    };
    let mut out = Vec::new();
    for p in Registry::builtins().iter() {
        if !wanted(&p.sig.name, &p.description) {
            continue;
        }
        let sig = |cols: &[(String, T)]| {
            cols.iter().map(|(n, t)| format!("{n} :: {t}")).collect::<Vec<_>>().join(", ")
        };
        let signature =
            format!("{}({}) :: ({})", p.sig.name, sig(&p.sig.inputs), sig(&p.sig.outputs));
        out.push(vec![
            Value::from("procedure"),
            Value::from(p.sig.name.as_str()),
            Value::from(p.description.as_str()),
            Value::from(signature),
            Value::Null,
            Value::Bool(p.writes),
            Value::Bool(true),
            Value::Bool(false),
        ]);
    }
    for (name, _) in crate::functions::CATALOG {
        if wanted(name, "") {
            out.push(vec![
                Value::from("function"),
                Value::from(*name),
                Value::from(""),
                Value::from(format!("{name}(...)")),
                Value::Null,
                Value::Null,
                Value::Bool(true),
                Value::Bool(false),
            ]);
        }
    }
    Ok(out)
}
