//! The rows of `SHOW [ALL|RANGE|VECTOR|...] INDEXES` and `SHOW CONSTRAINTS`, with every column
//! Neo4j 5.26 has (and its default columns), including `options` and `createStatement`.

use arbor_cypher_syntax::ast::SchemaTarget;
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use arbor_storage::{IndexInfo, IndexKind, Store, TokenKind as K};

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

fn names(store: &Store, ix: &IndexInfo) -> Names {
    let owner_kind = if ix.relationship { K::RelType } else { K::Label };
    Names {
        owner: store.token_name(owner_kind, ix.label).unwrap_or_default(),
        properties: ix
            .properties
            .iter()
            .map(|p| store.token_name(K::PropertyKey, *p).unwrap_or_default())
            .collect(),
    }
}

/// The type an index lists as, or `None` for a rule without an index.
fn index_type(ix: &IndexInfo) -> Option<&'static str> {
    ix.kind.index_type()
}

/// The default names of Neo4j 5's two token lookup indexes (nodes, relationships), which a
/// new database has.
const LOOKUPS: [&str; 2] = ["index_343aff4e", "index_f7700477"];

/// The file recording the LOOKUP indexes of a database once one was dropped or created.
const LOOKUP_FILE: &str = "lookup-indexes";

/// Which of the two LOOKUP indexes exist (by name; nodes, relationships). Arbor's label and
/// type scans are built in and work without them (as Neo4j's answers do without its
/// indexes); dropping and re-creating them is recorded for `SHOW INDEXES`, in
/// `DIR/lookup-indexes` (written atomically) for a database with a directory.
pub(crate) struct Lookups {
    names: parking_lot::RwLock<[Option<String>; 2]>,
    file: Option<std::path::PathBuf>,
}

impl Lookups {
    /// The LOOKUP indexes recorded in `dir` (both defaults when nothing is recorded; a file
    /// that cannot be read is reported and the defaults used: the indexes are listings only).
    pub(crate) fn open(dir: Option<&std::path::Path>) -> Lookups {
        let file = dir.map(|d| d.join(LOOKUP_FILE));
        let mut names = LOOKUPS.map(|n| Some(n.to_string()));
        if let Some(f) = file.as_ref().filter(|f| f.exists()) {
            match std::fs::read_to_string(f) {
                Ok(text) => {
                    for (i, line) in text.lines().take(2).enumerate() {
                        names[i] = (line != "-").then(|| line.to_string());
                    }
                }
                Err(e) => tracing::warn!(file = %f.display(), error = %e, "reading LOOKUP indexes"),
            }
        }
        Lookups { names: parking_lot::RwLock::new(names), file }
    }

    fn save(&self, names: &[Option<String>; 2]) -> Result<()> {
        let Some(f) = &self.file else { return Ok(()) };
        let text: Vec<&str> = names.iter().map(|n| n.as_deref().unwrap_or("-")).collect();
        crate::fulltext::persist(f, &format!("{}\n", text.join("\n")))
    }

    /// `DROP INDEX name` of a LOOKUP index: `true` if it was one (now dropped).
    pub(crate) fn drop(&self, name: &str) -> Result<bool> {
        let mut names = self.names.write();
        let Some(i) = names.iter().position(|n| n.as_deref() == Some(name)) else {
            return Ok(false);
        };
        let mut next = names.clone();
        next[i] = None;
        self.save(&next)?;
        *names = next;
        Ok(true)
    }

    /// `CREATE LOOKUP INDEX [name] [IF NOT EXISTS] FOR (n) ON EACH labels(n)` (or the
    /// relationship form): `true` if created; when one exists, `false` with `IF NOT EXISTS`,
    /// else Neo4j's error.
    pub(crate) fn create(
        &self,
        name: Option<&str>,
        if_not_exists: bool,
        target: &SchemaTarget,
    ) -> Result<bool> {
        let rel = matches!(target, SchemaTarget::Relationship { .. });
        let i = usize::from(rel);
        let mut names = self.names.write();
        let schema = if rel { "()-[:<any-types>]-()" } else { "(:<any-labels>)" };
        if let Some(existing) = &names[i] {
            if if_not_exists {
                return Ok(false);
            }
            return Err(match name {
                Some(n) if n != existing => Error::new(
                    Status::IndexAlreadyExists,
                    format!("There already exists an index {schema}."),
                ),
                _ => Error::new(
                    Status::EquivalentSchemaRule,
                    format!(
                        "An equivalent index already exists, 'Index( id={}, name='{existing}', \
                         type='LOOKUP', schema={schema}, indexProvider='token-lookup-1.0' )'.",
                        i + 1
                    ),
                ),
            });
        }
        let mut next = names.clone();
        next[i] = Some(name.unwrap_or(LOOKUPS[i]).to_string());
        self.save(&next)?;
        *names = next;
        Ok(true)
    }

    /// The rows of the LOOKUP indexes that exist.
    fn rows(&self) -> Rows {
        let names = self.names.read();
        let mut rows = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let Some(name) = name else { continue };
            let rel = i == 1;
            let statement = if rel {
                format!("CREATE LOOKUP INDEX `{name}` FOR ()-[r]-() ON EACH type(r)")
            } else {
                format!("CREATE LOOKUP INDEX `{name}` FOR (n) ON EACH labels(n)")
            };
            rows.push(vec![
                Value::Int(i as i64 + 1),
                s(name),
                s("ONLINE"),
                Value::Float(100.0),
                s("LOOKUP"),
                s(if rel { "RELATIONSHIP" } else { "NODE" }),
                Value::Null,
                Value::Null,
                s("token-lookup-1.0"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                provider_options("token-lookup-1.0", PropertyMap::new()),
                s(""),
                s(&statement),
            ]);
        }
        rows
    }
}

/// A time of the usage statistics as a UTC datetime.
fn utc_millis(ms: Option<i64>) -> Value {
    let Some(t) = ms.and_then(chrono::DateTime::from_timestamp_millis) else {
        return Value::Null;
    };
    Value::DateTime(arbor_model::DateTime { local: t.naive_utc(), offset_seconds: 0, zone: None })
}

/// `OPTIONS {indexConfig: {...}}` as Neo4j writes it in a `createStatement` (keys sorted,
/// entries joined by a bare comma).
fn config_text(config: &PropertyMap) -> String {
    let mut entries: Vec<(String, String)> =
        config.iter().map(|(k, v)| (k.to_string(), arbor_model::to_cypher_literal(v))).collect();
    entries.sort();
    let parts: Vec<String> = entries.iter().map(|(k, v)| format!("`{k}`: {v}")).collect();
    format!(" OPTIONS {{indexConfig: {{{}}}}}", parts.join(","))
}

/// The `options` column: `{indexProvider, indexConfig}`.
fn provider_options(provider: &str, config: PropertyMap) -> Value {
    let mut m = PropertyMap::new();
    m.insert("indexProvider".into(), s(provider));
    m.insert("indexConfig".into(), Value::Map(config));
    Value::Map(m)
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
    provider_options("range-1.0", PropertyMap::new())
}

/// The `createStatement` of a constraint.
fn constraint_statement(ix: &IndexInfo, n: &Names) -> String {
    let rel = ix.relationship;
    let what = match ix.kind {
        IndexKind::Uniqueness if rel => "IS RELATIONSHIP UNIQUE",
        IndexKind::Uniqueness => "IS UNIQUE",
        IndexKind::NodeKey if rel => "IS RELATIONSHIP KEY",
        IndexKind::NodeKey => "IS NODE KEY",
        IndexKind::PropertyType => {
            let types = ix.property_type.map(|t| t.name()).unwrap_or_default();
            return format!(
                "CREATE CONSTRAINT `{}` {} IS :: {types}",
                ix.name,
                pattern(rel, n, "REQUIRE")
            );
        }
        _ => "IS NOT NULL",
    };
    format!("CREATE CONSTRAINT `{}` {} {what}", ix.name, pattern(rel, n, "REQUIRE"))
}

/// All rows of `SHOW [filter] INDEXES`, one per index, in name order.
pub(crate) fn index_rows(
    store: &Store,
    indexes: &[IndexInfo],
    lookups: &Lookups,
    filter: Option<&str>,
) -> Rows {
    let mut rows = if type_matches(filter, "LOOKUP") { lookups.rows() } else { Vec::new() };
    for ix in indexes.iter().filter(|ix| index_type(ix).is_some()) {
        let ty = index_type(ix).unwrap_or("RANGE");
        if !type_matches(filter, ty) {
            continue;
        }
        let n = names(store, ix);
        let (provider, options, statement) = match &ix.vector {
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
            ),
            None if ix.kind.is_constraint() => {
                ("range-1.0", range_options(), constraint_statement(ix, &n))
            }
            None => {
                let (provider, config) = match ix.kind {
                    IndexKind::Text => ("text-2.0", PropertyMap::new()),
                    IndexKind::Point => {
                        ("point-1.0", crate::point_schema::config(ix.point_config.as_deref()))
                    }
                    _ => ("range-1.0", PropertyMap::new()),
                };
                let options_text =
                    if config.is_empty() { String::new() } else { config_text(&config) };
                let statement = format!(
                    "CREATE {ty} INDEX `{}` {}{options_text}",
                    ix.name,
                    pattern(ix.relationship, &n, "ON")
                );
                (provider, provider_options(provider, config), statement)
            }
        };
        // Usage statistics: none until the first read (as Neo4j before its first sample).
        let read_count = match ix.read_count {
            0 => Value::Null,
            c => Value::Int(c as i64),
        };
        rows.push(vec![
            // Neo4j numbers schema rules in creation order, after the two LOOKUP indexes.
            Value::Int(ix.id as i64 + 3),
            s(&ix.name),
            s(ix.state),
            Value::Float(ix.population_percent),
            s(ty),
            s(if ix.relationship { "RELATIONSHIP" } else { "NODE" }),
            strings(vec![n.owner.clone()]),
            strings(n.properties.clone()),
            s(provider),
            if ix.kind.is_constraint() { s(&ix.name) } else { Value::Null },
            utc_millis(ix.last_read_ms),
            read_count,
            utc_millis(ix.tracked_since_ms),
            options,
            s(&ix.failure),
            s(&statement),
        ]);
    }
    rows.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    rows
}

fn name_of(row: &[Value]) -> &str {
    match &row[1] {
        Value::String(n) => n,
        _ => "",
    }
}

/// All rows of `SHOW CONSTRAINTS`, one per constraint, in name order.
pub(crate) fn constraint_rows(store: &Store, indexes: &[IndexInfo]) -> Rows {
    indexes
        .iter()
        .filter(|ix| ix.kind.is_constraint())
        .enumerate()
        .map(|(i, ix)| {
            let n = names(store, ix);
            vec![
                Value::Int(i as i64 + 1),
                s(&ix.name),
                s(if ix.relationship { ix.kind.rel_type_name() } else { ix.kind.type_name() }),
                s(if ix.relationship { "RELATIONSHIP" } else { "NODE" }),
                strings(vec![n.owner.clone()]),
                strings(n.properties.clone()),
                if ix.kind.has_index() { s(&ix.name) } else { Value::Null },
                ix.property_type.map_or(Value::Null, |t| s(&t.name())),
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
