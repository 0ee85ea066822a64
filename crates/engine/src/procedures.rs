//! Registering procedures on a [`Database`]: what the embedder registers
//! (`Database::register_procedure`), the procedures that need the database itself (warm-up,
//! APOC schema, `db.stats.*`, the TCK's test registrar), installed when it opens.
//!
//! The registry itself sits below the database (`proc_registry.rs`); registering adds to it
//! and clears the plan cache (a cached plan may have failed to resolve, or resolved an older
//! body of, the name).

pub use arbor_cypher_plan::CypherType;
pub use arbor_exec::procs::{ProcBody, Procedure};
use arbor_model::{Error, Result, Status, Value};

use crate::session::Database;

/// A procedure defined by a table, as the openCypher TCK declares test procedures:
/// `rows[i]` holds the input values followed by the output values; a call returns the outputs of
/// the rows whose inputs equal its arguments (null matches null).
#[derive(Clone, Debug)]
pub struct ProcedureSpec {
    /// Dotted name, e.g. `test.my.proc`.
    pub name: String,
    pub inputs: Vec<(String, CypherType)>,
    /// No outputs makes a `VOID` procedure.
    pub outputs: Vec<(String, CypherType)>,
    pub rows: Vec<Vec<Value>>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
}

impl Database {
    /// Registers (or replaces) a table-defined procedure; see [`ProcedureSpec`].
    pub fn register_procedure(&self, spec: ProcedureSpec) -> Result<()> {
        let p = Procedure::from_table(&spec.name, spec.inputs, spec.outputs, spec.rows)?;
        self.register_procedure_fn(p)
    }

    /// Registers (or replaces) a procedure with an arbitrary body.
    pub fn register_procedure_fn(&self, p: Procedure) -> Result<()> {
        if !valid_name(&p.sig.name) {
            return Err(Error::new(
                Status::ArgumentError,
                format!("`{}` is not a valid procedure name", p.sig.name),
            ));
        }
        self.procedures_registry().add(p);
        self.clear_plan_cache();
        Ok(())
    }

    /// Every procedure `CALL` can resolve, sorted by name (for `SHOW PROCEDURES`).
    pub fn procedures(&self) -> Vec<Procedure> {
        self.procedures_registry().snapshot().iter().cloned().collect()
    }
}

/// The environment variable that enables [`TEST_REGISTRAR`] (set by the TCK harness when it
/// starts a server for its Bolt run).
pub const TEST_PROCEDURES_ENV: &str = "ARBOR_TCK_PROCEDURES";

/// `CALL arbor.test.registerProcedure(name, inputs, outputs, rows)`: registers a table-defined
/// procedure over a connection, so the TCK's `there exists a procedure` step also works against
/// a server. `inputs`/`outputs` are lists of `"name :: TYPE"` strings. Only present when
/// [`TEST_PROCEDURES_ENV`] is `1`: it lets any client add procedures.
pub const TEST_REGISTRAR: &str = "arbor.test.registerProcedure";

/// `CALL arbor.test.resetProcedures()`: drops every registered procedure (the built-ins and
/// the two test procedures stay), so scenarios sharing a server do not see each other's.
pub const TEST_RESET: &str = "arbor.test.resetProcedures";

/// Installs the warm-up and APOC schema procedures, and [`TEST_REGISTRAR`] when the environment asks for it.
pub(crate) fn install_test_hooks(db: &Database) {
    crate::warmup_procs::install(db);
    crate::show::install(db);
    crate::apoc_schema::install(db);
    crate::db_stats::install(db);
    crate::backup::install(db);
    if std::env::var(TEST_PROCEDURES_ENV).is_ok_and(|v| v == "1") {
        db.enable_test_procedures();
    }
}

impl Database {
    /// Offers [`TEST_REGISTRAR`] on this database (what [`TEST_PROCEDURES_ENV`]`=1` does for
    /// databases opened by a server). For test servers only: any client can then add
    /// procedures.
    pub fn enable_test_procedures(&self) {
        let db = self;
        let weak = db.downgrade();
        let columns = |list: &Value| -> Result<Vec<(String, CypherType)>> {
            let Value::List(items) = list else { return Ok(Vec::new()) };
            items
                .iter()
                .map(|it| {
                    let parsed = match it {
                        Value::String(s) => s
                            .split_once("::")
                            .and_then(|(n, t)| Some((n.trim().to_string(), CypherType::parse(t)?))),
                        _ => None,
                    };
                    parsed.ok_or_else(|| {
                        Error::new(Status::ArgumentError, format!("bad column `{it:?}`"))
                    })
                })
                .collect()
        };
        let body = move |args: &[Value], _: &mut dyn arbor_exec::graph::Graph| {
            let db = Database::upgrade(&weak).ok_or_else(|| {
                Error::new(Status::TransactionTerminated, "the database is shut down")
            })?;
            let name = match args.first() {
                Some(Value::String(s)) => s.to_string(),
                _ => return Err(Error::new(Status::ArgumentError, "a procedure name is needed")),
            };
            let null = Value::Null;
            let rows = match args.get(3).unwrap_or(&null) {
                Value::List(rows) => rows
                    .iter()
                    .map(|r| match r {
                        Value::List(vals) => Ok(vals.clone()),
                        _ => Err(Error::new(Status::ArgumentError, "each row must be a list")),
                    })
                    .collect::<Result<Vec<_>>>()?,
                _ => Vec::new(),
            };
            db.register_procedure(ProcedureSpec {
                name,
                inputs: columns(args.get(1).unwrap_or(&null))?,
                outputs: columns(args.get(2).unwrap_or(&null))?,
                rows,
            })?;
            Ok(Vec::new())
        };
        let list = |t: CypherType| CypherType::List(Box::new(t));
        let mut p = Procedure::new(
            TEST_REGISTRAR,
            vec![
                ("name".into(), CypherType::String),
                ("inputs".into(), list(CypherType::String)),
                ("outputs".into(), list(CypherType::String)),
                ("rows".into(), list(list(CypherType::Any))),
            ],
            vec![],
            "Registers a table-defined procedure (openCypher TCK support; test servers only).",
            body,
        );
        p.writes = true;
        // The name is valid, so registration cannot fail.
        let _ = db.register_procedure_fn(p);
        let weak = db.downgrade();
        let reset = move |_: &[Value], _: &mut dyn arbor_exec::graph::Graph| {
            if let Some(db) = Database::upgrade(&weak) {
                db.procedures_registry().reset();
                db.clear_plan_cache();
                crate::warmup_procs::install(&db);
                crate::apoc_schema::install(&db);
                crate::db_stats::install(&db);
                db.enable_test_procedures();
            }
            Ok(Vec::new())
        };
        let mut p = Procedure::new(
            TEST_RESET,
            vec![],
            vec![],
            "Removes every registered procedure (openCypher TCK support; test servers only).",
            reset,
        );
        p.writes = true;
        let _ = db.register_procedure_fn(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TxConfig;
    use arbor_model::PropertyMap;

    fn rows(db: &Database, q: &str) -> Result<Vec<Vec<Value>>> {
        let mut s = db.session();
        s.run(q, PropertyMap::new(), TxConfig::default())?;
        let mut out = Vec::new();
        loop {
            let mut sink = |r: Vec<arbor_model::ResultValue>| {
                out.push(r.into_iter().map(Value::from).collect());
                Ok(())
            };
            if let crate::PullOutcome::Done(_) = s.pull(None, -1, &mut sink)? {
                return Ok(out);
            }
        }
    }

    /// `Value` has no `PartialEq` (Cypher equality is three-valued); compare renderings.
    fn dbg(rows: &[Vec<Value>]) -> String {
        format!("{rows:?}")
    }

    #[test]
    fn registered_procedures_are_callable_and_replace_cached_failures() {
        let db = Database::in_memory();
        let q = "CALL test.answer(1) YIELD out RETURN out";
        let e = rows(&db, q).unwrap_err();
        assert_eq!(e.status, Status::ProcedureNotFound);
        db.register_procedure(ProcedureSpec {
            name: "test.answer".into(),
            inputs: vec![("in".into(), CypherType::Integer)],
            outputs: vec![("out".into(), CypherType::String)],
            rows: vec![
                vec![Value::Int(1), Value::from("one")],
                vec![Value::Int(2), Value::from("two")],
            ],
        })
        .unwrap();
        assert_eq!(dbg(&rows(&db, q).unwrap()), dbg(&[vec![Value::from("one")]]));
        // A literal of the wrong type is a compile-time error.
        let e = rows(&db, "CALL test.answer('x')").unwrap_err();
        assert_eq!(e.detail, Some("InvalidArgumentType"));
        assert!(db.procedures().iter().any(|p| p.sig.name == "db.labels"));
        assert!(db
            .register_procedure(ProcedureSpec {
                name: "bad name".into(),
                inputs: vec![],
                outputs: vec![],
                rows: vec![],
            })
            .is_err());
    }

    #[test]
    fn show_procedures_and_functions_list_the_catalog() {
        let db = Database::in_memory();
        db.register_procedure(ProcedureSpec {
            name: "test.void".into(),
            inputs: vec![],
            outputs: vec![],
            rows: vec![],
        })
        .unwrap();
        let r = rows(&db, "SHOW PROCEDURES YIELD name, signature RETURN name, signature").unwrap();
        let text = dbg(&r);
        assert!(text.contains("db.schema.visualization"), "{text}");
        assert!(text.contains("test.void() :: VOID"), "{text}");
        let r = rows(&db, "SHOW FUNCTIONS YIELD name, aggregating WHERE name = 'count' RETURN *")
            .unwrap();
        assert_eq!(dbg(&r), dbg(&[vec![Value::Bool(true), Value::from("count")]]));
    }

    #[test]
    fn warmup_procedures_report_counts() {
        let db = Database::in_memory();
        rows(&db, "CREATE (:A {name: 'x', tags: ['a']})-[:R {w: 1}]->(:B), (:C)").unwrap();
        // Property values are counted in the base (as of the last checkpoint or compaction).
        db.store().compact().unwrap();
        let r = rows(&db, "CALL db.warmup()").unwrap();
        assert_eq!(dbg(&[r[0][..3].to_vec()]), "[[Int(3), Int(1), Int(3)]]");
        assert!(matches!(r[0][3], Value::Int(b) if b > 0));
        let r = rows(&db, "CALL apoc.warmup.run() YIELD nodesTotal, relsTotal, propertiesLoaded, propRecordsTotal \
             RETURN propertiesLoaded, propRecordsTotal, relsTotal, nodesTotal").unwrap();
        assert_eq!(dbg(&r), "[[Bool(false), Int(0), Int(1), Int(3)]]");
        let r = rows(&db, "CALL apoc.warmup.run(true, true, false) YIELD propRecordsTotal, stringPropRecordsTotal, arrayPropRecordsTotal RETURN propRecordsTotal, stringPropRecordsTotal, arrayPropRecordsTotal").unwrap();
        // Strings and arrays are inline in the property blobs: no records of their own.
        assert_eq!(dbg(&r), "[[Int(3), Int(0), Int(0)]]");
        assert!(rows(&db, "CALL apoc.warmup.run(true, true, true, true)").is_err());
        let r = rows(&db, "CALL apoc.warmup.run()").unwrap();
        assert_eq!(r[0].len(), 32);
    }

    #[test]
    fn builtin_procedures_answer() {
        let db = Database::in_memory();
        rows(&db, "CREATE (:A)-[:T]->(:B {k: 1})").unwrap();
        let r = rows(&db, "CALL db.labels() YIELD label RETURN label ORDER BY label").unwrap();
        assert_eq!(dbg(&r), dbg(&[vec![Value::from("A")], vec![Value::from("B")]]));
        let r = rows(&db, "CALL dbms.components() YIELD edition RETURN edition").unwrap();
        assert_eq!(dbg(&r), dbg(&[vec![Value::from("community")]]));
        let r = rows(&db, "CALL db.schema.visualization()").unwrap();
        match &r[0][..] {
            [Value::List(nodes), Value::List(rels)] => {
                assert_eq!(nodes.len(), 2);
                assert_eq!(rels.len(), 1);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
