//! Transaction metadata (Bolt `tx_metadata`) and the procedures that read and set it:
//! `tx.getMetaData()` and `tx.setMetaData(map)`.
//!
//! Procedure bodies see only the graph, so the session publishes the metadata of the
//! transaction it is running in a thread-local for the duration of each `PULL`/`COMMIT`
//! ([`enter`]); a session runs on one thread at a time, and the guard restores the previous
//! value when dropped.

use std::cell::RefCell;
use std::sync::Arc;

use arbor_cypher_plan::CypherType;
use arbor_exec::procs::Procedure;
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use parking_lot::Mutex;

/// The metadata of a session's current transaction.
#[derive(Clone, Default)]
pub(crate) struct TxMeta(Arc<Mutex<PropertyMap>>);

impl TxMeta {
    /// Replaces the metadata (a new transaction starts).
    pub(crate) fn reset(&self, map: PropertyMap) {
        *self.0.lock() = map;
    }
}

thread_local! {
    static CURRENT: RefCell<Option<TxMeta>> = const { RefCell::new(None) };
}

/// While the guard lives, `tx.*` procedures on this thread see `meta`.
pub(crate) struct Entered(Option<TxMeta>);

pub(crate) fn enter(meta: &TxMeta) -> Entered {
    Entered(CURRENT.with(|c| c.replace(Some(meta.clone()))))
}

impl Drop for Entered {
    fn drop(&mut self) {
        let prev = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

fn current() -> Result<TxMeta> {
    CURRENT.with(|c| c.borrow().clone()).ok_or_else(|| {
        Error::new(
            Status::RequestInvalid,
            "transaction metadata is only available inside a session",
        )
    })
}

/// `tx.getMetaData()` and `tx.setMetaData(data)`, with Neo4j's signatures.
pub(crate) fn procedures() -> Vec<Procedure> {
    let get = Procedure::new(
        "tx.getMetaData",
        vec![],
        vec![("metadata".into(), CypherType::Map)],
        "Provides attached transaction metadata.",
        |_, _| Ok(vec![vec![Value::Map(current()?.0.lock().clone())]]),
    );
    let set = Procedure::new(
        "tx.setMetaData",
        vec![("data".into(), CypherType::Map)],
        vec![],
        "Attaches a map of data to the transaction. The data will be printed when listing \
         queries, and inserted into the query log.",
        |args, _| {
            let map = match args.first() {
                Some(Value::Map(m)) => m.clone(),
                Some(Value::Null) | None => PropertyMap::new(),
                Some(other) => {
                    return Err(Error::type_error(format!(
                        "tx.setMetaData expects a MAP, got {}",
                        other.type_name()
                    )))
                }
            };
            current()?.reset(map);
            Ok(Vec::new())
        },
    );
    vec![get, set]
}
