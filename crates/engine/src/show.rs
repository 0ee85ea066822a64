//! `SHOW DATABASES|INDEXES|CONSTRAINTS|PROCEDURES|FUNCTIONS|SETTINGS` as internal procedures.
//!
//! The planner turns a `SHOW` command into a call of its procedure (named as the command, e.g.
//! `SHOW INDEXES`: `arbor_cypher_plan::show_procedure_name`) followed by the ordinary operators
//! of its `YIELD`/`WHERE`/`RETURN`. The procedures here compute the rows when called, with every
//! column of the command in Neo4j's order; their signature says how many columns the bare
//! command shows. They are registered on the database beside the other procedures but only
//! resolved while a `SHOW` is planned (`Procedures::for_show`): no user `CALL` reaches them.
//! Inputs: the command's filter word (`SHOW TEXT INDEXES`: `TEXT`) and the names it is narrowed
//! to (`SHOW SETTINGS 'a', $b`), as a one-item list of what was written, or null.

use arbor_cypher_plan::{show_procedure_name, CypherType};
use arbor_cypher_syntax::ast::ShowKind;
use arbor_exec::graph::Graph;
use arbor_exec::procs::Procedure;
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::session::Database;
use crate::show_indexes as indexes;
use crate::show_settings as settings;

type Rows = Vec<Vec<Value>>;

/// Every column of `SHOW DATABASES` (all of them shown by default).
const DATABASE_COLUMNS: [&str; 13] = [
    "name",
    "type",
    "aliases",
    "access",
    "address",
    "role",
    "writer",
    "requestedStatus",
    "currentStatus",
    "statusMessage",
    "default",
    "home",
    "constituents",
];

/// Every column of `SHOW PROCEDURES`.
const PROCEDURE_COLUMNS: [&str; 12] = [
    "name",
    "description",
    "mode",
    "worldAffecting",
    "signature",
    "argumentDescription",
    "returnDescription",
    "admin",
    "rolesExecution",
    "rolesBoostedExecution",
    "isDeprecated",
    "option",
];

/// Every column of `SHOW FUNCTIONS`.
const FUNCTION_COLUMNS: [&str; 11] = [
    "name",
    "category",
    "description",
    "signature",
    "isBuiltIn",
    "argumentDescription",
    "returnDescription",
    "aggregating",
    "rolesExecution",
    "rolesBoostedExecution",
    "isDeprecated",
];

/// Registers the `SHOW` and administration procedures on `db` (when it opens).
pub(crate) fn install(db: &Database) {
    let default_db = settings::default_database_only(
        DATABASE_COLUMNS.to_vec(),
        DATABASE_COLUMNS.to_vec(),
        Vec::new(),
    );
    let commands: [(ShowKind, bool, Vec<&'static str>, usize); 7] = [
        (ShowKind::Databases, false, DATABASE_COLUMNS.to_vec(), DATABASE_COLUMNS.len()),
        (ShowKind::Databases, true, default_db.0, default_db.1.len()),
        (ShowKind::Indexes, false, indexes::INDEX_COLUMNS.to_vec(), indexes::INDEX_DEFAULTS),
        (
            ShowKind::Constraints,
            false,
            indexes::CONSTRAINT_COLUMNS.to_vec(),
            indexes::CONSTRAINT_DEFAULTS,
        ),
        (ShowKind::Procedures, false, PROCEDURE_COLUMNS.to_vec(), 4),
        (ShowKind::Functions, false, FUNCTION_COLUMNS.to_vec(), 3),
        (ShowKind::Settings, false, settings::COLUMNS.to_vec(), settings::DEFAULT_COLUMNS),
    ];
    let mut procs: Vec<Procedure> = commands
        .into_iter()
        .map(|(kind, default_only, columns, defaults)| {
            procedure(db, kind, default_only, &columns, defaults)
        })
        .collect();
    // The administration commands' (users, transactions), planned the same way.
    procs.extend(crate::users::procedures(db));
    procs.extend(crate::show_transactions::procedures(db));
    db.procedures_registry().set_internal(procs);
}

/// The procedure of one command.
fn procedure(
    db: &Database,
    kind: ShowKind,
    default_only: bool,
    columns: &[&str],
    defaults: usize,
) -> Procedure {
    let name = show_procedure_name(kind, default_only);
    let weak = db.downgrade();
    let body = move |args: &[Value], _: &mut dyn Graph| -> Result<Rows> {
        let db = Database::upgrade(&weak).ok_or_else(|| {
            Error::new(Status::TransactionTerminated, "the database is shut down")
        })?;
        let filter = match args.first() {
            Some(Value::String(s)) => Some(s.to_string()),
            _ => None,
        };
        let mut rows = rows(&db, kind, filter.as_deref());
        if let Some(names) = args.get(1).filter(|v| !matches!(v, Value::Null)) {
            rows = settings::keep_named(rows, &names_of(names)?);
        }
        if default_only {
            let all = DATABASE_COLUMNS.to_vec();
            rows = settings::default_database_only(all, Vec::new(), rows).2;
        }
        Ok(rows)
    };
    let inputs =
        vec![("filter".to_string(), CypherType::Any), ("names".to_string(), CypherType::Any)];
    let outputs = columns.iter().map(|c| (c.to_string(), CypherType::Any)).collect();
    let mut p = Procedure::new(name, inputs, outputs, &format!("The rows of `{name}`."), body);
    p.sig.default_outputs = Some(defaults);
    p
}

/// The names a `SHOW SETTINGS` / `SHOW DATABASE` is narrowed to, from the one-item list of
/// what was written: strings, lists of strings (`'a', 'b'` or a list parameter).
fn names_of(written: &Value) -> Result<Vec<String>> {
    let bad =
        || Error::new(Status::TypeError, "Expected a String or a List of Strings as names to show");
    let Value::List(items) = written else { return Err(bad()) };
    crate::show_transactions::flat_strings(items).map_err(|_| bad())
}

/// The rows of a command, every column, before its names narrow them.
fn rows(db: &Database, kind: ShowKind, filter: Option<&str>) -> Rows {
    match kind {
        ShowKind::Databases => database_rows(db),
        ShowKind::Indexes => {
            let mut rows =
                indexes::index_rows(db.store(), &db.store_indexes(), db.lookups(), filter);
            // [fulltext hook] FULLTEXT indexes, numbered after the others, by name.
            if matches!(filter, None | Some("ALL" | "FULLTEXT")) {
                rows.extend(crate::fulltext_schema::show_rows(db, rows.len()));
                rows.sort_by_key(|r| match &r[1] {
                    Value::String(n) => n.to_string(),
                    _ => String::new(),
                });
            }
            rows
        }
        ShowKind::Constraints => indexes::constraint_rows(db.store(), &db.store_indexes()),
        ShowKind::Procedures => procedure_rows(db),
        ShowKind::Functions => function_rows(),
        ShowKind::Transactions | ShowKind::Servers => Vec::new(),
        ShowKind::Settings => settings::settings_rows(db).2,
    }
}

fn s(v: &str) -> Value {
    Value::str(v)
}

/// The rows of `SHOW DATABASES`.
fn database_rows(db: &Database) -> Rows {
    db.database_names()
        .iter()
        .map(|name| {
            let is_default = *name == "neo4j";
            vec![
                s(name),
                s(if is_default { "standard" } else { "system" }),
                Value::List(Vec::new()),
                s("read-write"),
                s(&settings::bolt_address()),
                s("primary"),
                Value::Bool(true),
                s("online"),
                s("online"),
                s(""),
                Value::Bool(is_default),
                Value::Bool(is_default),
                Value::List(Vec::new()),
            ]
        })
        .collect()
}

/// The rows of `SHOW PROCEDURES`: every procedure a `CALL` resolves, by name.
fn procedure_rows(db: &Database) -> Rows {
    let describe = |cols: &[(String, CypherType)]| {
        Value::List(
            cols.iter()
                .map(|(n, t)| {
                    let mut m = PropertyMap::new();
                    m.insert("name".into(), s(n));
                    m.insert("type".into(), s(&format!("{t}?")));
                    m.insert("description".into(), s(&format!("{n} :: {t}?")));
                    m.insert("isDeprecated".into(), Value::Bool(false));
                    Value::Map(m)
                })
                .collect(),
        )
    };
    db.procedures()
        .iter()
        .map(|p| {
            let mut option = PropertyMap::new();
            option.insert("deprecated".into(), Value::Bool(false));
            vec![
                s(&p.sig.name),
                s(&p.description),
                s(if p.writes { "WRITE" } else { "READ" }),
                Value::Bool(false),
                s(&p.sig.signature_text()),
                describe(&p.sig.inputs),
                describe(&p.sig.outputs),
                Value::Bool(false),
                Value::Null,
                Value::Null,
                Value::Bool(false),
                Value::Map(option),
            ]
        })
        .collect()
}

/// The rows of `SHOW FUNCTIONS`: the function library's catalogue, by name.
fn function_rows() -> Rows {
    let mut funcs: Vec<(&str, &str)> = arbor_exec::functions::CATALOG.to_vec();
    funcs.sort_by_key(|(n, _)| n.to_ascii_lowercase());
    funcs.dedup_by_key(|(n, _)| n.to_ascii_lowercase());
    funcs
        .into_iter()
        .map(|(name, category)| {
            vec![
                s(name),
                s(category),
                s(&format!("The {name}() function.")),
                s(&format!("{name}(...)")),
                Value::Bool(true),
                Value::List(Vec::new()),
                s("ANY?"),
                Value::Bool(category == "Aggregating"),
                Value::Null,
                Value::Null,
                Value::Bool(false),
            ]
        })
        .collect()
}
