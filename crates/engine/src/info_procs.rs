//! Procedures tools call to learn about the server and the data, with Neo4j 5.26's columns:
//! `db.info()`, `dbms.clientConfig()`, `dbms.listConfig(searchString)`,
//! `db.schema.nodeTypeProperties()` and `db.schema.relTypeProperties()`.
//! (`dbms.components()` lives with the exec built-ins.)

use std::collections::BTreeMap;

use arbor_cypher_plan::CypherType as T;
use arbor_exec::graph::{Graph, TokenKind};
use arbor_exec::procs::Procedure;
use arbor_model::{NodeId, RelId, Result, Value};

use crate::config_settings::{value_of, Setting, SETTINGS};

/// Nodes (and relationships) looked at by the schema procedures: a sample is what Neo4j's
/// statistics-based answer amounts to on big graphs, and it bounds the work.
const SAMPLE_MAX: usize = 100_000;

/// The settings `dbms.clientConfig()` shows (as in Neo4j: those meant for client tools).
const CLIENT_SETTINGS: &[&str] = &[
    "browser.post_connect_cmd",
    "browser.remote_content_hostname_whitelist",
    "client.allow_telemetry",
    "dbms.security.auth_enabled",
];

fn setting_row(s: &Setting) -> Vec<Value> {
    let value = value_of(s);
    let text = |v: Option<&str>| v.map_or(Value::Null, Value::from);
    vec![
        Value::from(s.name),
        Value::from(s.description),
        text(value.as_deref()),
        Value::Bool(s.dynamic),
        text(s.default),
        text(value.as_deref()),
        Value::Bool(value.is_some() && value.as_deref() != s.default),
        Value::from(s.valid),
    ]
}

fn config_columns() -> Vec<(String, T)> {
    [
        ("name", T::String),
        ("description", T::String),
        ("value", T::String),
        ("dynamic", T::Boolean),
        ("defaultValue", T::String),
        ("startupValue", T::String),
        ("explicitlySet", T::Boolean),
        ("validValues", T::String),
    ]
    .into_iter()
    .map(|(n, t)| (n.to_string(), t))
    .collect()
}

/// The procedures of this module. `db_id` and `created` identify the database for `db.info()`.
pub(crate) fn procedures(db_id: String, created: String) -> Vec<Procedure> {
    let info = Procedure::new(
        "db.info",
        vec![],
        vec![
            ("id".into(), T::String),
            ("name".into(), T::String),
            ("creationDate".into(), T::String),
        ],
        "Provides information regarding the database.",
        move |_, _| {
            Ok(vec![vec![
                Value::from(db_id.as_str()),
                Value::from("neo4j"),
                Value::from(created.as_str()),
            ]])
        },
    );
    let client = Procedure::new(
        "dbms.clientConfig",
        vec![],
        config_columns(),
        "List the currently active configuration settings of Neo4j that are relevant to the \
         client.",
        |_, _| {
            Ok(SETTINGS
                .iter()
                .filter(|s| CLIENT_SETTINGS.contains(&s.name))
                .map(setting_row)
                .collect())
        },
    );
    let mut list = Procedure::new(
        "dbms.listConfig",
        vec![("searchString".into(), T::String)],
        config_columns(),
        "List the currently active configuration settings of Neo4j.",
        |args, _| {
            let needle = match args.first() {
                Some(Value::String(s)) => s.to_lowercase(),
                _ => String::new(),
            };
            // Sorted by name, as the table is.
            Ok(SETTINGS
                .iter()
                .filter(|s| s.name.to_lowercase().contains(&needle))
                .map(setting_row)
                .collect())
        },
    );
    list.sig.optional = 1;
    let nodes = Procedure::new(
        "db.schema.nodeTypeProperties",
        vec![],
        vec![
            ("nodeType".into(), T::String),
            ("nodeLabels".into(), T::List(Box::new(T::String))),
            ("propertyName".into(), T::String),
            ("propertyTypes".into(), T::List(Box::new(T::String))),
            ("mandatory".into(), T::Boolean),
        ],
        "Show the derived property schema of the nodes in tabular form.",
        node_type_properties,
    );
    let rels = Procedure::new(
        "db.schema.relTypeProperties",
        vec![],
        vec![
            ("relType".into(), T::String),
            ("propertyName".into(), T::String),
            ("propertyTypes".into(), T::List(Box::new(T::String))),
            ("mandatory".into(), T::Boolean),
        ],
        "Show the derived property schema of the relationships in tabular form.",
        rel_type_properties,
    );
    vec![info, client, list, nodes, rels]
}

/// Neo4j's (Java) name of a property value's type, as `propertyTypes` lists them.
fn java_type(v: &Value) -> String {
    let name = match v {
        Value::Bool(_) => "Boolean",
        Value::Int(_) => "Long",
        Value::Float(_) => "Double",
        Value::String(_) => "String",
        Value::List(items) => {
            let inner = items.first().map_or("String".to_string(), java_type);
            return format!("{inner}Array");
        }
        Value::Point(_) => "Point",
        Value::Date(_) => "Date",
        Value::LocalTime(_) => "LocalTime",
        Value::Time(_) => "Time",
        Value::LocalDateTime(_) => "LocalDateTime",
        Value::DateTime(_) => "DateTime",
        Value::Duration(_) => "Duration",
        _ => "Any",
    };
    name.to_string()
}

/// What is known about one property key within one entity type: value types seen, and how
/// many of the type's entities have it.
#[derive(Default)]
struct PropStats {
    types: Vec<String>,
    count: usize,
}

/// One entity type (a label set, or a relationship type): how many entities, and per key.
#[derive(Default)]
struct TypeStats {
    count: usize,
    props: BTreeMap<String, PropStats>,
}

impl TypeStats {
    fn add(&mut self, g: &dyn Graph, props: Vec<(u32, Value)>) {
        self.count += 1;
        for (key, value) in props {
            let name = g.token_name(TokenKind::PropertyKey, key).unwrap_or_default();
            let p = self.props.entry(name).or_default();
            p.count += 1;
            let t = java_type(&value);
            if !p.types.contains(&t) {
                p.types.push(t);
            }
        }
    }

    /// Rows `(propertyName, propertyTypes, mandatory)`; one all-null row for a type without
    /// properties.
    fn rows(&self) -> Vec<[Value; 3]> {
        if self.props.is_empty() {
            return vec![[Value::Null, Value::Null, Value::Bool(false)]];
        }
        self.props
            .iter()
            .map(|(name, p)| {
                let types = p.types.iter().map(|t| Value::from(t.as_str())).collect();
                [Value::from(name.as_str()), Value::List(types), Value::Bool(p.count == self.count)]
            })
            .collect()
    }
}

fn quoted(name: &str) -> String {
    format!(":`{}`", name.replace('`', "``"))
}

fn node_type_properties(_: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let mut types: BTreeMap<Vec<String>, TypeStats> = BTreeMap::new();
    let mut cursor = NodeId(0);
    for _ in 0..SAMPLE_MAX {
        let Some(n) = g.next_node(None, cursor) else { break };
        cursor = NodeId(n.0 + 1);
        let mut labels: Vec<String> = g
            .node_labels(n)
            .into_iter()
            .filter_map(|l| g.token_name(TokenKind::Label, l))
            .collect();
        labels.sort();
        let props = g.node_properties(n);
        types.entry(labels).or_default().add(g, props);
    }
    let mut out = Vec::new();
    for (labels, stats) in &types {
        let node_type: String = labels.iter().map(|l| quoted(l)).collect();
        let label_list: Vec<Value> = labels.iter().map(|l| Value::from(l.as_str())).collect();
        for [name, types, mandatory] in stats.rows() {
            out.push(vec![
                Value::from(node_type.as_str()),
                Value::List(label_list.clone()),
                name,
                types,
                mandatory,
            ]);
        }
    }
    Ok(out)
}

fn rel_type_properties(_: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let mut types: BTreeMap<String, TypeStats> = BTreeMap::new();
    let mut cursor = RelId(0);
    for _ in 0..SAMPLE_MAX {
        let Some(r) = g.next_rel(&[], cursor) else { break };
        cursor = RelId(r.0 + 1);
        let Some((_, _, t)) = g.rel_info(r) else { continue };
        let name = g.token_name(TokenKind::RelType, t).unwrap_or_default();
        let props = g.rel_properties(r);
        types.entry(name).or_default().add(g, props);
    }
    let mut out = Vec::new();
    for (name, stats) in &types {
        for [prop, types, mandatory] in stats.rows() {
            out.push(vec![Value::from(quoted(name).as_str()), prop, types, mandatory]);
        }
    }
    Ok(out)
}
