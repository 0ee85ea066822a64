//! What a procedure is: its body type, [`Procedure`] (signature, description, body), the
//! [`Registry`] by name, and the checks of arguments known only at run time. A leaf: the runtime,
//! the context and every procedure package look down to it; `procs.rs` fills the registry.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use arbor_cypher_plan::{CypherType, ProcSig};
use arbor_model::{Error, Result, Status, Value};

use crate::graph::Graph;

/// A procedure body: arguments (checked against the signature, INTEGER converted to FLOAT where
/// declared) to rows with one value per output column, in signature order.
pub type ProcBody = dyn Fn(&[Value], &mut dyn Graph) -> Result<Vec<Vec<Value>>> + Send + Sync;

/// A callable procedure.
#[derive(Clone)]
pub struct Procedure {
    pub sig: ProcSig,
    pub description: String,
    /// Whether the body writes (reported by `SHOW PROCEDURES` as mode WRITE).
    pub writes: bool,
    pub body: Arc<ProcBody>,
}

impl fmt::Debug for Procedure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Procedure").field("sig", &self.sig).finish_non_exhaustive()
    }
}

impl Procedure {
    /// A read-only procedure.
    pub fn new(
        name: &str,
        inputs: Vec<(String, CypherType)>,
        outputs: Vec<(String, CypherType)>,
        description: &str,
        body: impl Fn(&[Value], &mut dyn Graph) -> Result<Vec<Vec<Value>>> + Send + Sync + 'static,
    ) -> Procedure {
        Procedure {
            sig: ProcSig {
                name: name.to_string(),
                inputs,
                outputs,
                optional: 0,
                default_outputs: None,
            },
            description: description.to_string(),
            writes: false,
            body: Arc::new(body),
        }
    }

    /// A procedure answering from a fixed table, as the TCK's `there exists a procedure` step
    /// defines one: each row holds the input values followed by the output values; a call
    /// returns the outputs of the rows whose inputs equal the arguments (null matches null).
    pub fn from_table(
        name: &str,
        inputs: Vec<(String, CypherType)>,
        outputs: Vec<(String, CypherType)>,
        rows: Vec<Vec<Value>>,
    ) -> Result<Procedure> {
        let (ni, no) = (inputs.len(), outputs.len());
        if let Some(bad) = rows.iter().find(|r| r.len() != ni + no) {
            return Err(Error::new(
                Status::ArgumentError,
                format!(
                    "procedure `{name}`: a row has {} values, the signature {}",
                    bad.len(),
                    ni + no
                ),
            ));
        }
        let body = move |args: &[Value], _: &mut dyn Graph| {
            Ok(rows
                .iter()
                .filter(|r| r[..ni].iter().zip(args).all(|(a, b)| same_value(a, b)))
                .map(|r| r[ni..].to_vec())
                .collect())
        };
        Ok(Procedure::new(name, inputs, outputs, "", body))
    }
}

/// Equality for matching table rows: Cypher equality, except that null matches null.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        _ => arbor_model::equals(a, b) == Some(true),
    }
}

/// Procedures by exact (case-sensitive, dotted) name.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    pub(super) procs: BTreeMap<String, Procedure>,
}

impl Registry {
    /// Adds (or replaces) a procedure.
    pub fn register(&mut self, p: Procedure) {
        self.procs.insert(p.sig.name.clone(), p);
    }

    pub fn get(&self, name: &str) -> Option<&Procedure> {
        self.procs.get(name)
    }

    /// All procedures, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &Procedure> {
        self.procs.values()
    }
}

/// An input or output column of a signature.
pub(crate) fn col(name: &str, ty: CypherType) -> (String, CypherType) {
    (name.to_string(), ty)
}

/// Checks and converts arguments against the declared types (for arguments only known at run
/// time: parameters, variables, expressions).
pub fn check_args(name: &str, types: &[CypherType], args: Vec<Value>) -> Result<Vec<Value>> {
    args.into_iter()
        .zip(types)
        .enumerate()
        .map(|(i, (v, t))| {
            if t.accepts(&v) {
                Ok(t.coerce(v))
            } else {
                Err(Error::type_error(format!(
                    "Wrong argument type for procedure `{name}`: argument {} expected {t} but was {}",
                    i + 1,
                    v.type_name()
                ))
                .with_detail("InvalidArgumentType"))
            }
        })
        .collect()
}
