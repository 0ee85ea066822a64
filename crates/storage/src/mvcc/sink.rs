//! The seam between the MVCC core and durability: commit hands its redo record to a
//! [`CommitSink`] (the WAL writer of a file-backed store, see `durability/wal.rs`) and waits on
//! the [`Ticket`] it gets back. The core never sees the log, its files or its threads.

use std::sync::Arc;

use arbor_model::{Error, Result, Status};
use crossbeam_channel::Receiver;

/// Where commit and schema records go. Records arrive in commit-ts order: the caller holds the
/// commit mutex while submitting.
pub(crate) trait CommitSink: Send + Sync {
    /// Hands over the record of commit `ts` (`header` then `body`, see `durability/wal.rs`);
    /// `None` if the sink has stopped (the caller then marks the clock failed).
    fn submit(&self, ts: u64, header: Vec<u8>, body: Vec<u8>) -> Option<Ticket>;
    /// Stops the sink once everything submitted before is written (and synced per the
    /// durability mode); the error of that last flush, if any.
    fn stop(&self) -> Result<()>;
}

/// A sink whose committers make their own records durable (the log's group commit in `sync`
/// mode: the first waiter writes and syncs what is queued, the others wait for it).
pub(crate) trait AwaitDurable: Send + Sync {
    /// Returns once commit `ts` is durable, or its error.
    fn wait(&self, ts: u64) -> Result<()>;
    /// Commit `ts`'s ticket was dropped unwaited: its record must still be written and synced.
    fn abandon(&self, ts: u64);
}

enum Kind {
    Channel(Receiver<Result<()>>),
    Await(u64, Arc<dyn AwaitDurable>),
}

/// Resolves once a submitted record is durable (per the durability mode) or has failed.
pub(crate) struct Ticket {
    kind: Kind,
    waited: bool,
}

impl Ticket {
    /// A ticket the sink answers through `rx`.
    pub fn new(rx: Receiver<Result<()>>) -> Ticket {
        Ticket { kind: Kind::Channel(rx), waited: false }
    }

    /// A ticket whose waiter asks `on` for commit `ts` (see [`AwaitDurable`]).
    pub fn awaiting(ts: u64, on: Arc<dyn AwaitDurable>) -> Ticket {
        Ticket { kind: Kind::Await(ts, on), waited: false }
    }

    /// Waits for the record's outcome; a sink that went away without answering is an I/O error.
    pub fn wait(mut self) -> Result<()> {
        self.waited = true;
        match &self.kind {
            Kind::Channel(rx) => match rx.recv() {
                Ok(r) => r,
                Err(_) => Err(Error::new(Status::Io, "the log writer has stopped")),
            },
            Kind::Await(ts, on) => on.wait(*ts),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let (false, Kind::Await(ts, on)) = (self.waited, &self.kind) {
            on.abandon(*ts);
        }
    }
}
