//! What a FULLTEXT index is and what it holds: its definition ([`FulltextDef`]) and the
//! documents of a graph it indexes (entity ids, the property keys, one document per entity).
//! The registry (`fulltext.rs`) and the live maintenance (`fulltext_live.rs`) both build on it.

use arbor_exec::graph::{Graph, TokenKind};
use arbor_fulltext::Document;
use arbor_model::{NodeId, PropertyMap, RelId, Value};

/// One FULLTEXT index.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FulltextDef {
    pub name: String,
    pub relationship: bool,
    /// Labels (or relationship types), in definition order.
    pub labels: Vec<String>,
    pub properties: Vec<String>,
    pub analyzer: String,
    pub eventually_consistent: bool,
}

impl FulltextDef {
    /// Neo4j's `options` column: `{indexConfig: {...}, indexProvider: 'fulltext-1.0'}`.
    pub fn options(&self) -> Value {
        let mut config = PropertyMap::new();
        config.insert("fulltext.analyzer".into(), Value::from(self.analyzer.as_str()));
        config.insert(
            "fulltext.eventually_consistent".into(),
            Value::Bool(self.eventually_consistent),
        );
        let mut m = PropertyMap::new();
        m.insert("indexConfig".into(), Value::Map(config));
        m.insert("indexProvider".into(), Value::from("fulltext-1.0"));
        Value::Map(m)
    }

    /// The statement that recreates the index, as `SHOW INDEXES` prints it.
    pub fn create_statement(&self) -> String {
        let labels: Vec<String> = self.labels.iter().map(|l| format!("`{l}`")).collect();
        let v = if self.relationship { "r" } else { "n" };
        let target = if self.relationship {
            format!("()-[r:{}]-()", labels.join("|"))
        } else {
            format!("(n:{})", labels.join("|"))
        };
        let props: Vec<String> = self.properties.iter().map(|p| format!("{v}.`{p}`")).collect();
        format!(
            "CREATE FULLTEXT INDEX `{}` FOR {target} ON EACH [{}] OPTIONS {{indexConfig: \
             {{`fulltext.analyzer`: '{}',`fulltext.eventually_consistent`: {}}}}}",
            self.name,
            props.join(", "),
            self.analyzer,
            self.eventually_consistent
        )
    }

    /// The schema as Neo4j's messages print it: `(:A:B {p, q})` / `()-[:T1:T2 {p}]-()`.
    pub(crate) fn schema_text(&self) -> String {
        let labels: String = self.labels.iter().map(|l| format!(":{l}")).collect();
        let props = self.properties.join(", ");
        if self.relationship {
            format!("()-[{labels} {{{props}}}]-()")
        } else {
            format!("({labels} {{{props}}})")
        }
    }

    pub(crate) fn same_schema(&self, o: &FulltextDef) -> bool {
        self.relationship == o.relationship
            && self.labels == o.labels
            && self.properties == o.properties
    }
}

/// The index's documents as the transaction sees them: every entity with one of the labels
/// (types) and at least one string (or string-list) value among the properties, in id order.
pub(crate) fn documents(def: &FulltextDef, g: &mut dyn Graph) -> Vec<Document> {
    let keys = property_keys(def, g);
    if keys.is_empty() {
        return Vec::new();
    }
    entity_ids(def, g).into_iter().filter_map(|id| document(def, g, id, &keys)).collect()
}

/// `(position, key token)` of the properties of `def` that exist.
pub(crate) fn property_keys(def: &FulltextDef, g: &dyn Graph) -> Vec<(usize, u32)> {
    def.properties
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, g.token_id(TokenKind::PropertyKey, p)?)))
        .collect()
}

fn owner_tokens(def: &FulltextDef, g: &dyn Graph) -> Vec<u32> {
    let owner = if def.relationship { TokenKind::RelType } else { TokenKind::Label };
    def.labels.iter().filter_map(|l| g.token_id(owner, l)).collect()
}

/// The ids of the entities with one of the labels (types) of `def`, ascending.
pub(crate) fn entity_ids(def: &FulltextDef, g: &mut dyn Graph) -> Vec<u64> {
    let tokens = owner_tokens(def, g);
    let mut ids: Vec<u64> = Vec::new();
    if tokens.is_empty() {
        return ids;
    }
    if def.relationship {
        let mut from = RelId(0);
        while let Some(r) = g.next_rel(&tokens, from) {
            ids.push(r.0);
            from = RelId(r.0 + 1);
        }
    } else {
        for &label in &tokens {
            let mut from = NodeId(0);
            while let Some(n) = g.next_node(Some(label), from) {
                ids.push(n.0);
                from = NodeId(n.0 + 1);
            }
        }
        ids.sort_unstable();
        ids.dedup();
    }
    ids
}

/// The document of entity `id` as the transaction sees it: `None` if it does not exist, lacks
/// the labels (type) of `def`, or has no string values among `keys`.
pub(crate) fn document(
    def: &FulltextDef,
    g: &mut dyn Graph,
    id: u64,
    keys: &[(usize, u32)],
) -> Option<Document> {
    let tokens = owner_tokens(def, g);
    let member = if def.relationship {
        g.rel_info(RelId(id)).is_some_and(|(_, _, ty)| tokens.contains(&ty))
    } else {
        g.node_exists(NodeId(id)) && tokens.iter().any(|&l| g.node_has_label(NodeId(id), l))
    };
    if !member {
        return None;
    }
    let mut values = Vec::new();
    for &(i, key) in keys {
        let v = if def.relationship {
            g.rel_property(RelId(id), key)
        } else {
            g.node_property(NodeId(id), key)
        };
        if let Some(v) = v {
            push_strings(&mut values, i, &v);
        }
    }
    (!values.is_empty()).then_some(Document { id, values })
}

/// The string (or string-list) values of property `i` as document values.
pub(crate) fn push_strings(values: &mut Vec<(usize, String)>, i: usize, v: &Value) {
    match v {
        Value::String(s) => values.push((i, s.to_string())),
        Value::List(items) => {
            for item in items {
                if let Value::String(s) = item {
                    values.push((i, s.to_string()));
                }
            }
        }
        _ => {}
    }
}
