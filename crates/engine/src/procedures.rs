//! The per-database procedure registry: the built-ins plus whatever the embedder registers
//! (`Database::register_procedure`), consulted when a query is prepared.
//!
//! Registration is rare and preparation frequent, so the registry is copy-on-write: preparing a
//! query takes a cheap snapshot (`Arc`), registering builds a new registry and clears the plan
//! cache (a cached plan may have failed to resolve, or resolved an older body of, the name).

use std::sync::Arc;

use arbor_exec::procs::Registry;
use parking_lot::RwLock;

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

/// The registry a database consults; see the module docs.
pub(crate) struct Procedures {
    current: RwLock<Arc<Registry>>,
}

impl Default for Procedures {
    fn default() -> Self {
        Procedures { current: RwLock::new(Arc::new(Registry::with_builtins())) }
    }
}

impl Procedures {
    /// The registry as of now.
    pub(crate) fn snapshot(&self) -> Arc<Registry> {
        self.current.read().clone()
    }

    fn add(&self, p: Procedure) {
        let mut cur = self.current.write();
        let mut next = (**cur).clone();
        next.register(p);
        *cur = Arc::new(next);
    }
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
            let mut sink = |r: Vec<Value>| {
                out.push(r);
                Ok(())
            };
            if let crate::PullOutcome::Done(_) = s.pull(None, -1, &mut sink)? {
                return Ok(out);
            }
        }
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
        assert_eq!(rows(&db, q).unwrap(), vec![vec![Value::from("one")]]);
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
    fn builtin_procedures_answer() {
        let db = Database::in_memory();
        rows(&db, "CREATE (:A)-[:T]->(:B {k: 1})").unwrap();
        let r = rows(&db, "CALL db.labels() YIELD label RETURN label ORDER BY label").unwrap();
        assert_eq!(r, vec![vec![Value::from("A")], vec![Value::from("B")]]);
        let r = rows(&db, "CALL dbms.components() YIELD edition RETURN edition").unwrap();
        assert_eq!(r, vec![vec![Value::from("community")]]);
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
