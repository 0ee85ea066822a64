//! Schema commands (`CREATE INDEX`, `CREATE CONSTRAINT`, `DROP ...`), and the index names the
//! planner is given. `SHOW` commands are planned as procedure calls (`show.rs`).

use arbor_cypher_syntax::ast::{ConstraintKind, Ident, SchemaCommand, SchemaTarget, Span};
use arbor_exec::graph::Stats;
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use arbor_storage::{IndexKind, Store, Transaction};

use crate::session::Database;

type Rows = Vec<Vec<Value>>;

/// Property tokens of a rule, created if missing.
fn property_tokens(tx: &Transaction, props: &[Ident]) -> Result<Vec<u32>> {
    props
        .iter()
        .map(|p| tx.get_or_create_token(arbor_storage::TokenKind::PropertyKey, &p.name))
        .collect()
}

fn rule_kind(kind: ConstraintKind) -> IndexKind {
    match kind {
        ConstraintKind::Unique => IndexKind::Uniqueness,
        ConstraintKind::NodeKey => IndexKind::NodeKey,
        ConstraintKind::Exists => IndexKind::Existence,
        ConstraintKind::PropertyType(_) => IndexKind::PropertyType,
    }
}

/// The storage rule kind of an index kind (LOOKUP indexes are not storage rules).
fn index_rule_kind(kind: arbor_cypher_syntax::ast::IndexKind) -> IndexKind {
    use arbor_cypher_syntax::ast::IndexKind as A;
    match kind {
        A::Text => IndexKind::Text,
        A::Point => IndexKind::Point,
        A::Range | A::Lookup => IndexKind::Range,
    }
}

/// Runs a schema command directly against the store (schema changes commit on their own).
/// Cached plans are dropped afterwards: they were planned against the old set of indexes.
pub(crate) fn run_schema(
    db: &Database,
    cmd: &SchemaCommand,
    params: &PropertyMap,
) -> Result<(Stats, Vec<String>, Rows)> {
    // [fulltext hook] FULLTEXT indexes, and other rules named like one. A `$name` is resolved
    // here, so the full-text module sees a literal name.
    let named;
    let cmd = match cmd {
        SchemaCommand::CreateFulltextIndex { name_param: Some(p), .. } => {
            let mut c = cmd.clone();
            if let SchemaCommand::CreateFulltextIndex { name, name_param, .. } = &mut c {
                *name = Some(Ident {
                    name: name_param_value(p, params)?.into(),
                    span: Span::default(),
                });
                *name_param = None;
            }
            named = c;
            &named
        }
        _ => cmd,
    };
    if let Some(stats) = crate::fulltext_schema::schema_command(db, cmd, params)? {
        db.clear_plan_cache();
        return Ok((stats, Vec::new(), Vec::new()));
    }
    let mut stats = Stats::default();
    if lookup_command(db, cmd, params, &mut stats)? {
        return Ok((stats, Vec::new(), Vec::new()));
    }
    let store = db.store();
    let mut tx = store.begin(false);
    let result = schema_in(store, &mut tx, cmd, params, &mut stats);
    tx.rollback();
    db.clear_plan_cache();
    result?;
    Ok((stats, Vec::new(), Vec::new()))
}

/// `CREATE LOOKUP INDEX` and `DROP INDEX` of a LOOKUP index (see `show_indexes::Lookups`):
/// `true` if `cmd` was one of them.
fn lookup_command(
    db: &Database,
    cmd: &SchemaCommand,
    params: &PropertyMap,
    stats: &mut Stats,
) -> Result<bool> {
    match cmd {
        SchemaCommand::CreateIndex { name, if_not_exists, target, kind, .. }
            if *kind == arbor_cypher_syntax::ast::IndexKind::Lookup =>
        {
            let name = name.as_ref().map(|n| &*n.name);
            if db.lookups().create(name, *if_not_exists, target)? {
                stats.indexes_added += 1;
            }
            Ok(true)
        }
        SchemaCommand::DropIndex { name, param, .. } => {
            let name = match (param, name) {
                (Some(p), _) => name_param_value(p, params)?,
                (None, Some(n)) => n.name.to_string(),
                (None, None) => return Ok(false),
            };
            let dropped = db.lookups().drop(&name)?;
            if dropped {
                stats.indexes_removed += 1;
            }
            Ok(dropped)
        }
        _ => Ok(false),
    }
}

fn schema_in(
    store: &Store,
    tx: &mut Transaction,
    cmd: &SchemaCommand,
    params: &PropertyMap,
    stats: &mut Stats,
) -> Result<()> {
    use arbor_storage::TokenKind as K;
    match cmd {
        SchemaCommand::CreateIndex { name, if_not_exists, target, properties, kind, options } => {
            let keys = property_tokens(tx, properties)?;
            let name = name.as_ref().map(|n| &*n.name);
            let rule = index_rule_kind(*kind);
            let rel = matches!(target, SchemaTarget::Relationship { .. });
            // A POINT index's settings (other kinds keep ignoring their OPTIONS).
            let point = match (rule, options) {
                (IndexKind::Point, Some(o)) => {
                    let o = crate::vector_schema::constant(o, params)?;
                    crate::point_schema::settings(Some(&o), rel)?
                }
                _ => None,
            };
            let created = match target {
                SchemaTarget::Relationship { rel_type, .. } => {
                    let ty = tx.get_or_create_token(K::RelType, &rel_type.name)?;
                    match (rule, keys.as_slice()) {
                        (IndexKind::Point, [k]) => {
                            store.create_point_index(true, ty, *k, name, point.as_deref())
                        }
                        _ => store.create_rel_constraint(rule, ty, &keys, name),
                    }
                }
                SchemaTarget::Node { label, .. } => {
                    let label = tx.get_or_create_token(K::Label, &label.name)?;
                    match (rule, keys.as_slice()) {
                        (IndexKind::Point, [k]) => {
                            store.create_point_index(false, label, *k, name, point.as_deref())
                        }
                        _ => store.create_rule(rule, label, &keys, name),
                    }
                }
            };
            let created = match created {
                // Neo4j: IF NOT EXISTS also accepts an index a constraint already provides.
                Err(e)
                    if *if_not_exists
                        && matches!(
                            e.status,
                            Status::ConstraintAlreadyExists | Status::IndexAlreadyExists
                        ) =>
                {
                    false
                }
                other => other?,
            };
            if created {
                stats.indexes_added += 1;
            } else if !if_not_exists {
                return Err(already_exists(store, name, false, target, properties));
            }
        }
        SchemaCommand::CreateVectorIndex { .. } => create_vector(store, tx, cmd, params, stats)?,
        SchemaCommand::CreateFulltextIndex { .. } => {
            return Err(Error::internal("CREATE FULLTEXT INDEX reached the storage rules"));
        }
        SchemaCommand::DropIndex { name, param, if_exists, target } => {
            let name = match param {
                Some(p) => {
                    Some(Ident { name: name_param_value(p, params)?.into(), span: Span::default() })
                }
                None => name.clone(),
            };
            let dropped = match (&name, target) {
                (Some(n), _) => store.drop_index(&n.name)?,
                (None, Some((t, props))) => drop_on_target(store, tx, t, props, IndexKind::Range)?,
                (None, None) => false,
            };
            if dropped {
                stats.indexes_removed += 1;
            } else if !if_exists {
                return Err(match &name {
                    Some(n) => Error::new(
                        Status::IndexDropFailed,
                        format!(
                            "Unable to drop index called `{}`. There is no such index.",
                            n.name
                        ),
                    ),
                    None => {
                        Error::new(Status::IndexDropFailed, "Unable to drop index: No such index.")
                    }
                });
            }
        }
        SchemaCommand::CreateConstraint { name, if_not_exists, target, properties, kind } => {
            let mut keys = property_tokens(tx, properties)?;
            if let ConstraintKind::PropertyType(types) = kind {
                // The allowed types travel as the rule's second key (see `IndexKind`).
                keys.push(types.0);
            }
            let name = name.as_ref().map(|n| &*n.name);
            let created = match target {
                SchemaTarget::Relationship { rel_type, .. } => {
                    let ty = tx.get_or_create_token(K::RelType, &rel_type.name)?;
                    store.create_rel_constraint(rule_kind(*kind), ty, &keys, name)?
                }
                SchemaTarget::Node { label, .. } => {
                    let label = tx.get_or_create_token(K::Label, &label.name)?;
                    store.create_rule(rule_kind(*kind), label, &keys, name)?
                }
            };
            if created {
                stats.constraints_added += 1;
            } else if !if_not_exists {
                return Err(already_exists(store, name, true, target, properties));
            }
        }
        SchemaCommand::DropConstraint { name, if_exists, definition } => {
            let dropped = match (name, definition) {
                (Some(n), _) => store.drop_constraint(&n.name)?,
                (None, Some((t, props, kind))) => {
                    drop_on_target(store, tx, t, props, rule_kind(*kind))?
                }
                (None, None) => false,
            };
            if dropped {
                stats.constraints_removed += 1;
            } else if !if_exists {
                return Err(match name {
                    Some(n) => Error::new(
                        Status::ConstraintDropFailed,
                        format!("Unable to drop constraint `{0}`: No such constraint {0}.", n.name),
                    ),
                    None => Error::new(
                        Status::ConstraintDropFailed,
                        "Unable to drop constraint: No such constraint.",
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Drops the rule of `kind` on a target and properties given by their schema (`DROP INDEX ON`,
/// `DROP CONSTRAINT ON`); false when the tokens or the rule do not exist.
fn drop_on_target(
    store: &Store,
    tx: &Transaction,
    t: &SchemaTarget,
    props: &[Ident],
    kind: IndexKind,
) -> Result<bool> {
    use arbor_storage::TokenKind as K;
    let (label, rel) = match t {
        SchemaTarget::Node { label, .. } => (tx.token_id(K::Label, &label.name), false),
        SchemaTarget::Relationship { rel_type, .. } => {
            (tx.token_id(K::RelType, &rel_type.name), true)
        }
    };
    let keys: Option<Vec<u32>> =
        props.iter().map(|p| tx.token_id(K::PropertyKey, &p.name)).collect();
    match (label, keys) {
        (Some(l), Some(k)) => drop_on(store, l, &k, kind, rel),
        _ => Ok(false),
    }
}

/// `CREATE VECTOR INDEX`, with its name and options possibly from parameters.
fn create_vector(
    store: &Store,
    tx: &Transaction,
    cmd: &SchemaCommand,
    params: &PropertyMap,
    stats: &mut Stats,
) -> Result<()> {
    let SchemaCommand::CreateVectorIndex {
        name,
        name_param,
        if_not_exists,
        target,
        property,
        options,
    } = cmd
    else {
        return Ok(());
    };
    let options = options.as_ref().map(|o| crate::vector_schema::constant(o, params));
    let name = match name_param {
        Some(p) => Some(name_param_value(p, params)?),
        None => name.as_ref().map(|n| n.name.to_string()),
    };
    let name = name.as_deref();
    let created = crate::vector_schema::create(
        store,
        tx,
        name,
        *if_not_exists,
        target,
        &property.name,
        options.transpose()?.as_ref(),
    )?;
    if created {
        stats.indexes_added += 1;
    } else if !if_not_exists {
        return Err(already_exists(store, name, false, target, std::slice::from_ref(property)));
    }
    Ok(())
}

/// The string a `$name` schema name stands for.
fn name_param_value(p: &str, params: &PropertyMap) -> Result<String> {
    match params.get(p) {
        Some(Value::String(s)) => Ok(s.to_string()),
        Some(other) => Err(Error::type_error(format!(
            "Expected the index name parameter ${p} to be a String, got {}",
            other.type_name()
        ))),
        None => Err(Error::new(Status::ParameterMissing, format!("Expected parameter(s): {p}"))),
    }
}

/// The error for creating a rule equivalent to an existing one without `IF NOT EXISTS`, as
/// Neo4j words it: `EquivalentSchemaRuleAlreadyExists` when the existing rule has the name
/// asked for (or none was given), else `IndexAlreadyExists` / `ConstraintAlreadyExists`.
fn already_exists(
    store: &Store,
    name: Option<&str>,
    constraint: bool,
    target: &SchemaTarget,
    properties: &[Ident],
) -> Error {
    let what = if constraint { "constraint" } else { "index" };
    let named_other = name.is_some_and(|n| !store.indexes().iter().any(|ix| ix.name == n));
    if !named_other {
        return Error::new(
            Status::EquivalentSchemaRule,
            format!("An equivalent {what} already exists."),
        );
    }
    let props: Vec<&str> = properties.iter().map(|p| &*p.name).collect();
    let schema = match target {
        SchemaTarget::Node { label, .. } => format!("(:{} {{{}}})", label.name, props.join(", ")),
        SchemaTarget::Relationship { rel_type, .. } => {
            format!("()-[:{} {{{}}}]-()", rel_type.name, props.join(", "))
        }
    };
    if constraint {
        Error::new(
            Status::ConstraintAlreadyExists,
            format!("Constraint already exists on {schema}."),
        )
    } else {
        Error::new(Status::IndexAlreadyExists, format!("There already exists an index {schema}."))
    }
}

/// Drops the index or constraint of `kind` on `(label, keys)`, found by its definition (the
/// pre-5 `DROP INDEX ON :L(p)` / `DROP CONSTRAINT ON (n:L) ASSERT ...` forms).
fn drop_on(store: &Store, label: u32, keys: &[u32], kind: IndexKind, rel: bool) -> Result<bool> {
    let found = store.indexes().into_iter().find(|ix| {
        ix.kind == kind && ix.relationship == rel && ix.label == label && ix.properties == keys
    });
    match found {
        Some(ix) if kind.is_constraint() => store.drop_constraint(&ix.name),
        Some(ix) => store.drop_index(&ix.name),
        None => Ok(false),
    }
}

impl Database {
    pub(crate) fn store_indexes(&self) -> Vec<arbor_storage::IndexInfo> {
        self.store().indexes()
    }

    /// `(label, property keys)` names of every index, populating or online (for the planner:
    /// seeks fall back to scans until an index is online).
    pub(crate) fn indexed_names(&self) -> Vec<(String, Vec<String>)> {
        self.index_names(false)
    }

    /// `(type, property keys)` names of every relationship index (for the planner).
    pub(crate) fn rel_indexed_names(&self) -> Vec<(String, Vec<String>)> {
        self.index_names(true)
    }

    /// `(kind, relationship, label or type, property key)` names of every TEXT and POINT
    /// index (for the planner's text scans and spatial seeks).
    pub(crate) fn kind_indexed_names(
        &self,
    ) -> Vec<(arbor_cypher_plan::IndexUse, bool, String, String)> {
        use arbor_cypher_plan::IndexUse;
        use arbor_storage::{IndexKind, TokenKind as K};
        let store = self.store();
        store
            .indexes()
            .iter()
            .filter_map(|ix| {
                let kind = match ix.kind {
                    IndexKind::Text => IndexUse::Text,
                    IndexKind::Point => IndexUse::Point,
                    _ => return None,
                };
                let k = store.token_name(K::PropertyKey, *ix.properties.first()?)?;
                let owner = if ix.relationship { K::RelType } else { K::Label };
                Some((kind, ix.relationship, store.token_name(owner, ix.label)?, k))
            })
            .collect()
    }

    fn index_names(&self, rel: bool) -> Vec<(String, Vec<String>)> {
        use arbor_storage::TokenKind as K;
        let store = self.store();
        let owner = if rel { K::RelType } else { K::Label };
        store
            .indexes()
            .iter()
            .filter(|ix| ix.kind.has_index() && ix.relationship == rel)
            .filter_map(|ix| {
                let ks: Option<Vec<String>> =
                    ix.properties.iter().map(|k| store.token_name(K::PropertyKey, *k)).collect();
                Some((store.token_name(owner, ix.label)?, ks?))
            })
            .collect()
    }
}
