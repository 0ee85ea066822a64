//! The rows of `SHOW [ALL|RANGE|VECTOR|...] INDEXES` and `SHOW CONSTRAINTS`, with every column
//! Neo4j 5.26 has (and its default columns), including `options` and `createStatement`.

use arbor_model::{PropertyMap, Value};
use arbor_storage::{IndexInfo, IndexKind, TokenKind as K, Transaction};

use crate::vector_schema;

type Rows = Vec<Vec<Value>>;

/// Every column of `SHOW INDEXES`, in Neo4j's order.
pub(crate) const INDEX_COLUMNS: [&str; 16] = [
    "id",
    "name",
    "state",
    "populationPercent",
    "type",
    "entityType",
    "labelsOrTypes",
    "properties",
    "indexProvider",
    "owningConstraint",
    "lastRead",
    "readCount",
    "trackedSince",
    "options",
    "failureMessage",
    "createStatement",
];

/// The columns `SHOW INDEXES` prints without `YIELD`.
pub(crate) const INDEX_DEFAULTS: usize = 12;

/// Every column of `SHOW CONSTRAINTS`.
pub(crate) const CONSTRAINT_COLUMNS: [&str; 10] = [
    "id",
    "name",
    "type",
    "entityType",
    "labelsOrTypes",
    "properties",
    "ownedIndex",
    "propertyType",
    "options",
    "createStatement",
];

/// The columns `SHOW CONSTRAINTS` prints without `YIELD`.
pub(crate) const CONSTRAINT_DEFAULTS: usize = 8;

fn s(v: &str) -> Value {
    Value::str(v)
}

fn strings(items: Vec<String>) -> Value {
    Value::List(items.into_iter().map(Value::from).collect())
}

/// Names of a rule's label or type and properties.
struct Names {
    owner: String,
    properties: Vec<String>,
}

fn names(tx: &Transaction, ix: &IndexInfo) -> Names {
    let owner_kind = if ix.relationship { K::RelType } else { K::Label };
    Names {
        owner: tx.token_name(owner_kind, ix.label).unwrap_or_default(),
        properties: ix
            .properties
            .iter()
            .map(|p| tx.token_name(K::PropertyKey, *p).unwrap_or_default())
            .collect(),
    }
}

/// The type an index lists as, or `None` for a rule without an index.
fn index_type(ix: &IndexInfo) -> Option<&'static str> {
    match ix.kind {
        IndexKind::Vector => Some("VECTOR"),
        k if k.has_index() => Some("RANGE"),
        _ => None,
    }
}

/// Whether `SHOW <filter> INDEXES` lists an index of type `ty` (`ALL` or none: every one).
fn type_matches(filter: Option<&str>, ty: &str) -> bool {
    match filter.map(str::to_ascii_uppercase).as_deref() {
        None | Some("ALL") => true,
        Some("BTREE") => ty == "RANGE",
        Some(f) => f == ty,
    }
}

/// `FOR (n:`L`) ON (n.`a`, n.`b`)` or the relationship form.
fn pattern(rel: bool, n: &Names, keyword: &str) -> String {
    let var = if rel { "r" } else { "n" };
    let props: Vec<String> = n.properties.iter().map(|p| format!("{var}.`{p}`")).collect();
    let entity =
        if rel { format!("()-[r:`{}`]-()", n.owner) } else { format!("(n:`{}`)", n.owner) };
    format!("FOR {entity} {keyword} ({})", props.join(", "))
}

fn range_options() -> Value {
    let mut m = PropertyMap::new();
    m.insert("indexProvider".into(), s("range-1.0"));
    m.insert("indexConfig".into(), Value::Map(PropertyMap::new()));
    Value::Map(m)
}

/// The `createStatement` of a constraint.
fn constraint_statement(ix: &IndexInfo, n: &Names) -> String {
    let rel = ix.relationship;
    let what = match ix.kind {
        IndexKind::Uniqueness if rel => "IS RELATIONSHIP UNIQUE",
        IndexKind::Uniqueness => "IS UNIQUE",
        IndexKind::NodeKey if rel => "IS RELATIONSHIP KEY",
        IndexKind::NodeKey => "IS NODE KEY",
        _ => "IS NOT NULL",
    };
    format!("CREATE CONSTRAINT `{}` {} {what}", ix.name, pattern(rel, n, "REQUIRE"))
}

/// All rows of `SHOW [filter] INDEXES`, one per index, in name order.
pub(crate) fn index_rows(tx: &Transaction, indexes: &[IndexInfo], filter: Option<&str>) -> Rows {
    let mut rows = Vec::new();
    for (i, ix) in indexes.iter().filter(|ix| index_type(ix).is_some()).enumerate() {
        let ty = index_type(ix).unwrap_or("RANGE");
        if !type_matches(filter, ty) {
            continue;
        }
        let n = names(tx, ix);
        let (provider, options, statement, read_count) = match &ix.vector {
            Some(v) => (
                "vector-2.0",
                vector_schema::options(v),
                vector_schema::create_statement(
                    &ix.name,
                    ix.relationship,
                    &n.owner,
                    n.properties.first().map_or("", String::as_str),
                    v,
                ),
                Value::Null,
            ),
            None if ix.kind.is_constraint() => {
                ("range-1.0", range_options(), constraint_statement(ix, &n), Value::Int(0))
            }
            None => (
                "range-1.0",
                range_options(),
                format!("CREATE RANGE INDEX `{}` {}", ix.name, pattern(ix.relationship, &n, "ON")),
                Value::Int(0),
            ),
        };
        rows.push(vec![
            Value::Int(i as i64 + 1),
            s(&ix.name),
            s(ix.state),
            Value::Float(ix.population_percent),
            s(ty),
            s(if ix.relationship { "RELATIONSHIP" } else { "NODE" }),
            strings(vec![n.owner.clone()]),
            strings(n.properties.clone()),
            s(provider),
            if ix.kind.is_constraint() { s(&ix.name) } else { Value::Null },
            Value::Null,
            read_count,
            Value::Null,
            options,
            s(&ix.failure),
            s(&statement),
        ]);
    }
    rows
}

/// All rows of `SHOW CONSTRAINTS`, one per constraint, in name order.
pub(crate) fn constraint_rows(tx: &Transaction, indexes: &[IndexInfo]) -> Rows {
    indexes
        .iter()
        .filter(|ix| ix.kind.is_constraint())
        .enumerate()
        .map(|(i, ix)| {
            let n = names(tx, ix);
            vec![
                Value::Int(i as i64 + 1),
                s(&ix.name),
                s(if ix.relationship { ix.kind.rel_type_name() } else { ix.kind.type_name() }),
                s(if ix.relationship { "RELATIONSHIP" } else { "NODE" }),
                strings(vec![n.owner.clone()]),
                strings(n.properties.clone()),
                if ix.kind.has_index() { s(&ix.name) } else { Value::Null },
                Value::Null,
                if ix.kind.has_index() { range_options() } else { Value::Null },
                s(&constraint_statement(ix, &n)),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_filter_filters() {
        assert!(type_matches(None, "VECTOR"));
        assert!(type_matches(Some("all"), "RANGE"));
        assert!(type_matches(Some("VECTOR"), "VECTOR"));
        assert!(!type_matches(Some("VECTOR"), "RANGE"));
        assert!(!type_matches(Some("TEXT"), "RANGE"));
        assert!(!type_matches(Some("POINT"), "RANGE"));
        assert!(!type_matches(Some("LOOKUP"), "VECTOR"));
    }
}
