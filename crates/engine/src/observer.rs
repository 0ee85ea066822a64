//! [`Observer`]: what a session remembers for observation (whether a transaction was counted
//! as started, the query whose result is open); `observe.rs` drives it around each session
//! operation.

use std::time::Instant;

use arbor_model::{Error, PropertyMap, Status};

use crate::metrics::{self, QUERIES};

/// Per-session observation state.
#[derive(Default)]
pub(crate) struct Observer {
    /// A transaction was counted as started and not yet as ended.
    pub(crate) tx_open: bool,
    /// The query whose result is open.
    pub(crate) query: Option<Running>,
}

pub(crate) struct Running {
    pub(crate) started: Instant,
    /// Kept only while the query log is on.
    pub(crate) text: Option<String>,
    pub(crate) parameters: Option<PropertyMap>,
    pub(crate) rows: u64,
    pub(crate) span: tracing::Span,
}

impl Observer {
    pub(crate) fn tx_started(&mut self) {
        self.tx_open = true;
        metrics::bump(&QUERIES.tx_started);
    }

    /// The open transaction ended: committed unless `error` or `rolled_back`.
    pub(crate) fn tx_ended(&mut self, error: Option<&Error>, rolled_back: bool) {
        self.tx_open = false;
        if error.is_none() && !rolled_back {
            metrics::bump(&QUERIES.tx_committed);
            return;
        }
        metrics::bump(&QUERIES.tx_rolled_back);
        match error.map(|e| e.status) {
            Some(Status::TransactionOutdated) => metrics::bump(&QUERIES.tx_conflicted),
            Some(
                Status::TransactionTerminated
                | Status::TransactionTimedOut
                | Status::TransactionTimedOutClientConfiguration,
            ) => metrics::bump(&QUERIES.tx_terminated),
            _ => {}
        }
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        // The session is going away (a closed connection): its transaction was rolled back.
        if self.tx_open {
            self.tx_ended(None, true);
        }
    }
}
