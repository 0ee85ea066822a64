//! The transaction life cycle of a session: explicit `BEGIN`/`COMMIT`/`ROLLBACK`, the
//! auto-commit transaction, deadlines and timeouts, and the memory scope of a transaction.

use std::sync::atomic::Ordering;

use arbor_model::{Error, Result, Status};

use super::explicit::ExplicitTx;
use super::result::Sink;
use super::{AccessMode, Session, TxConfig};

/// What Neo4j answers when a transaction outlives the timeout its client set:
/// `Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration`, with Neo4j's message;
/// for the server-wide setting (`server`) `TransactionTimedOut`.
fn timed_out(server: bool) -> Error {
    if server {
        return Error::new(
            Status::TransactionTimedOut,
            "The transaction has been terminated. Retry your operation in a new transaction, and \
             you should see a successful result. The transaction has not completed within the \
             specified timeout (db.transaction.timeout). You may want to retry with a longer \
             timeout. ",
        );
    }
    Error::new(
        Status::TransactionTimedOutClientConfiguration,
        "The transaction has been terminated. Retry your operation in a new transaction, and you \
         should see a successful result. The transaction has not completed within the timeout \
         specified at its start by the client. You may want to retry with a longer timeout. ",
    )
}

/// `Neo.ClientError.Statement.AccessMode` with Neo4j's message.
pub(super) fn access_mode_error() -> Error {
    Error::new(
        Status::AccessMode,
        "Writing in read access mode not allowed. Attempted write to neo4j",
    )
}

pub(super) fn bookmark_of(ts: u64) -> String {
    format!("arbor:{ts}")
}

pub(super) fn check_config(config: &TxConfig) -> Result<()> {
    if let Some(db) = config.database.as_deref() {
        if !db.eq_ignore_ascii_case("neo4j") && !db.eq_ignore_ascii_case("system") {
            return Err(Error::new(
                Status::DatabaseNotFound,
                format!("Database does not exist. Database name: '{db}'."),
            ));
        }
    }
    for b in &config.bookmarks {
        let valid = b.strip_prefix("arbor:").is_some_and(|ts| ts.parse::<u64>().is_ok());
        if !valid {
            return Err(Error::new(
                Status::InvalidBookmark,
                format!("Supplied bookmark `{b}` was not issued by this server"),
            ));
        }
    }
    Ok(())
}

impl Session {
    /// Starts an explicit transaction (observed by `Session::begin`, observe.rs).
    pub(crate) fn begin_unobserved(&mut self, config: TxConfig) -> Result<()> {
        self.db.check_open()?;
        check_config(&config)?;
        if self.explicit.is_some() {
            return Err(Error::new(
                Status::RequestInvalid,
                "a transaction is already open in this session",
            ));
        }
        self.finish_auto()?;
        self.start_tx(&config);
        let tx = self.db.inner.store.begin(config.mode == AccessMode::Read);
        self.explicit = Some(ExplicitTx {
            tx: Some(tx),
            results: Vec::new(),
            failed: false,
            mode: config.mode,
            timed_out: false,
        });
        Ok(())
    }

    /// Takes a new transaction's metadata and arms its deadline (or disarms the last one).
    pub(super) fn start_tx(&mut self, config: &TxConfig) {
        let server = self.db.transaction_timeout();
        // The smaller of the client's and the server's timeouts applies.
        let (timeout, server_deadline) = match (config.timeout, server) {
            (Some(c), Some(s)) if s < c => (Some(s), true),
            (None, Some(s)) => (Some(s), true),
            (c, _) => (c, false),
        };
        self.server_deadline = server_deadline;
        match timeout {
            Some(after) => {
                let timer = match &self.timer {
                    Some(t) => t.clone(),
                    None => {
                        let t = self.db.inner.deadlines.timer(self.interrupt.clone());
                        self.timer = Some(t.clone());
                        t
                    }
                };
                self.db.inner.deadlines.arm(&timer, after);
            }
            None => self.end_tx(),
        }
        // After `end_tx` above, which forgets the previous transaction.
        self.tx_meta.reset(config.metadata.clone());
        self.mem = Some(self.db.inner.memory.transaction());
        self.tx_meta.set_memory(self.mem.clone());
    }

    /// Counts this thread's allocations against the current transaction until dropped.
    pub(super) fn enter_memory(&self) -> Option<arbor_exec::memory::Scope> {
        self.mem.as_ref().map(arbor_exec::memory::enter)
    }

    /// Forgets the deadline of the transaction that just ended.
    pub(super) fn end_tx(&mut self) {
        self.tx_meta.end();
        if let Some(t) = &self.timer {
            t.disarm();
        }
        self.mem = None;
    }

    /// The timeout error of the current transaction's deadline.
    pub(super) fn timed_out(&self) -> Error {
        timed_out(self.server_deadline)
    }

    /// Whether the current transaction has run past its timeout.
    pub(super) fn expired(&self) -> bool {
        self.timer.as_ref().is_some_and(|t| t.expired())
    }

    /// The error a failed statement reports: an interrupt caused by the deadline is a timeout,
    /// and the storage's read-only guard in a READ transaction is an access-mode error.
    pub(super) fn classify(&self, e: Error, mode: AccessMode) -> Error {
        match e.status {
            Status::TransactionTerminated if self.expired() => self.timed_out(),
            Status::ForbiddenOnReadOnly if mode == AccessMode::Read => access_mode_error(),
            _ => e,
        }
    }
    pub(super) fn rollback_auto(&mut self) {
        if let Some((tx, _)) = self.auto.take() {
            tx.rollback();
        }
        self.end_tx();
    }

    /// Rolls the explicit transaction back because its deadline passed.
    pub(super) fn fail_explicit_timed_out(&mut self) {
        self.fail_explicit();
        if let Some(ex) = &mut self.explicit {
            ex.timed_out = true;
        }
    }

    /// Commits a pending auto-commit result by running it to completion (its rows are dropped).
    pub(super) fn finish_auto(&mut self) -> Result<()> {
        if self.auto.is_some() {
            self.advance(None, -1, Sink::Discard)?;
        }
        Ok(())
    }

    pub(super) fn fail_explicit(&mut self) {
        if let Some(ex) = &mut self.explicit {
            ex.failed = true;
            ex.results.clear();
            if let Some(tx) = ex.tx.take() {
                tx.rollback();
            }
        }
        self.end_tx();
    }

    /// `Session::commit` (observe.rs) without the metrics and the query log.
    pub(crate) fn commit_unobserved(&mut self) -> Result<String> {
        let Some(mut ex) = self.explicit.take() else {
            return Err(Error::new(
                Status::TransactionNotFound,
                "there is no open transaction to commit",
            ));
        };
        if ex.timed_out {
            return Err(self.timed_out());
        }
        let Some(mut tx) = ex.tx.take() else {
            return Err(Error::new(
                Status::TransactionTerminated,
                "the transaction has been rolled back because of an earlier error",
            ));
        };
        if self.expired() {
            tx.rollback();
            self.end_tx();
            return Err(self.timed_out());
        }
        if self.tx_meta.terminated() {
            tx.rollback();
            self.end_tx();
            return Err(crate::txinfo::terminated_error());
        }
        let meta = crate::txinfo::enter(&self.tx_meta);
        let import_dir = self.db.import_dir();
        let _mem = self.enter_memory();
        for result in &mut ex.results {
            if !result.done {
                if let Err(e) = result.produce(
                    &mut tx,
                    None,
                    import_dir.as_deref(),
                    self.db.path(),
                    -1,
                    Sink::Discard,
                ) {
                    let e = self.classify(e, ex.mode);
                    tx.rollback();
                    self.end_tx();
                    return Err(e);
                }
            }
        }
        drop(meta);
        self.end_tx();
        let ts = tx.commit()?;
        Ok(bookmark_of(ts))
    }

    /// `Session::rollback` (observe.rs) without the metrics.
    pub(crate) fn rollback_unobserved(&mut self) -> Result<()> {
        match self.explicit.take() {
            Some(mut ex) => {
                if let Some(tx) = ex.tx.take() {
                    tx.rollback();
                }
                self.end_tx();
                Ok(())
            }
            None => Err(Error::new(
                Status::TransactionNotFound,
                "there is no open transaction to roll back",
            )),
        }
    }

    /// `Session::reset` (observe.rs) without the metrics.
    pub(crate) fn reset_unobserved(&mut self) {
        if let Some((tx, _)) = self.auto.take() {
            tx.rollback();
        }
        if let Some(mut ex) = self.explicit.take() {
            if let Some(tx) = ex.tx.take() {
                tx.rollback();
            }
        }
        self.end_tx();
        self.interrupt.store(false, Ordering::SeqCst);
    }
}
