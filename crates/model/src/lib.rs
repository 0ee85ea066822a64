//! Arbor's value model: what a Cypher value is, independent of storage, wire format and query engine.
//!
//! **Architecture Invariant:** this crate does no I/O and knows nothing of Bolt, PackStream, storage
//! layout or Cypher syntax. Every other crate speaks in these types.
//!
//! Entities appear in two forms. Inside the engine a node is a reference, [`Value::Node`] (an id
//! resolved against a transaction); results leaving the engine are materialized into
//! [`Value::NodeData`] with labels and properties, so a client never needs the transaction.

mod error;
mod temporal;
mod value;

pub use error::{Error, Result, Status};
pub use temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time};
pub use value::{NodeData, NodeId, PathData, PathRef, PropertyMap, RelData, RelId, Value};
