//! The seam between the MVCC core and durability: commit hands its redo record to a
//! [`CommitSink`] (the WAL writer of a file-backed store, see `durability/wal.rs`) and waits on
//! the [`Ticket`] it gets back. The core never sees the log, its files or its threads.

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

/// Resolves once a submitted record is durable (per the durability mode) or has failed.
pub(crate) struct Ticket(Receiver<Result<()>>);

impl Ticket {
    pub fn new(rx: Receiver<Result<()>>) -> Ticket {
        Ticket(rx)
    }

    /// Waits for the record's outcome; a sink that went away without answering is an I/O error.
    pub fn wait(self) -> Result<()> {
        match self.0.recv() {
            Ok(r) => r,
            Err(_) => Err(Error::new(Status::Io, "the log writer has stopped")),
        }
    }
}
