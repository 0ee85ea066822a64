//! The multi-version layer: the delta on top of the immutable base (version chains in sharded
//! id tables, fresh adjacency), tokens, count histories, the shared state [`Core`] with its
//! install, base swap and GC routines, schema operations, and [`Transaction`] (reads, index
//! seeks, writes, commit).
//!
//! Imports only from the base and the bottom layer (records, codec, value, clock, schema). A
//! commit hands its redo record to a [`CommitSink`] that the durability layer plugs in; this
//! layer never sees the log or any file.
//!
//! Files, lowest first: `versions`, `tokens`, `counts`, `sink`, `observer`, `state` (Core), `gc`,
//! `violations`, `schema_ops`, `tx` (the struct), `tx_read`, `tx_gather`, `tx_index`, `tx_write`,
//! `tx_commit`.

mod counts;
mod gc;
mod index_part;
mod observer;
mod part_files;
mod schema_ops;
mod sink;
mod state;
#[cfg(test)]
mod tests;
mod tokens;
mod tx;
mod tx_commit;
mod tx_gather;
mod tx_index;
mod tx_read;
mod tx_vector;
mod tx_write;
mod vector_ops;
mod versions;
mod violations;

pub(crate) use counts::CountDelta;
#[cfg(test)]
pub(crate) use index_part::CHECK_HASH_MASK;
pub use observer::{CommitChanges, CommitObserver, EntityVersion};
pub(crate) use sink::{AwaitDurable, CommitSink, Ticket};
pub(crate) use state::{CommitState, Core};
pub use tx::{Savepoint, Transaction};
pub use tx_read::NodeHandle;
pub use tx_vector::VectorEntity;
