//! Database, sessions, transactions and result streams.
//!
//! A [`Session`] holds at most one explicit transaction (with any number of open results,
//! addressed by `qid`) or one auto-commit result. Results are lazy: rows are computed only when
//! pulled, so `PULL n` never computes more than `n` rows ahead. An auto-commit transaction commits
//! when its result is exhausted or discarded; any error rolls the whole transaction back.
//!
//! The parts: [`config`] (the public settings and summaries), [`database`] (the shared
//! [`Database`] handle), [`dispatch`] (parse, plan and route a statement), [`run`] (`RUN`,
//! `PULL`, `DISCARD`), [`transaction`] (explicit and auto-commit transaction life cycle,
//! deadlines, memory scope; its state in [`explicit`]), [`open`] (opening a database),
//! [`prepared`] (a statement as dispatch routes it), [`result`] (lazy result streams and their summaries)
//! and [`record`] (a row as a streaming consumer receives it, written without references).

pub(crate) mod config;
pub(crate) mod database;
mod dispatch;
mod explicit;
mod open;
mod prepared;
mod record;
#[cfg(test)]
mod record_tests;
mod result;
mod retry;
mod run;
mod transaction;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arbor_storage::Transaction;

pub use config::update_counters;
pub use config::{
    AccessMode, CurrentUser, DatabaseConfig, Durability, Notification, PullOutcome, QueryType,
    RunInfo, Summary, TxConfig,
};
pub use database::Database;
pub(crate) use prepared::Prepared;
pub use record::{Names as RecordNames, Record};

use explicit::ExplicitTx;
use result::OpenResult;

/// A session: at most one open transaction, explicit or auto-commit. Not thread-safe; one per
/// connection.
pub struct Session {
    db: Database,
    interrupt: Arc<AtomicBool>,
    pub(crate) explicit: Option<ExplicitTx>,
    pub(crate) auto: Option<(Transaction, OpenResult)>,
    /// The deadline of the current transaction (created on the first timeout).
    timer: Option<Arc<crate::deadline::Timer>>,
    /// Whether the current deadline is the server-wide timeout (not the client's), which
    /// Neo4j reports as `TransactionTimedOut`.
    server_deadline: bool,
    /// The metadata of the current transaction (`tx_metadata`, `tx.setMetaData`).
    pub(crate) tx_meta: crate::txinfo::TxMeta,
    pub(crate) obs: crate::observer::Observer,
    /// Access mode of the open auto-commit transaction.
    auto_mode: AccessMode,
    /// Who is logged in (`None`: authentication disabled); see users.rs.
    user: Option<CurrentUser>,
    /// The memory account of the current transaction.
    mem: Option<Arc<crate::memory_limits::TxMemory>>,
}

impl Session {
    pub fn in_transaction(&self) -> bool {
        self.explicit.is_some()
    }

    /// A flag another thread can set to interrupt the running query (Bolt `RESET` while
    /// streaming). The query fails with `TransactionTerminated`; the session clears the flag
    /// on `reset` and at the next `run`.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    /// Sets who is logged in on this session (the Bolt layer calls this after authentication;
    /// `None` when authentication is disabled).
    pub fn set_user(&mut self, user: Option<CurrentUser>) {
        self.tx_meta.set_user(user.as_ref());
        self.user = user;
    }

    /// Who this session serves, as `SHOW TRANSACTIONS` lists it (`connectionId`,
    /// `clientAddress`).
    pub fn set_client(&mut self, connection_id: &str, client_address: &str) {
        self.tx_meta.set_client(connection_id, client_address);
    }

    /// The database this session belongs to.
    pub fn database(&self) -> &Database {
        &self.db
    }
}

impl Database {
    /// Opens a session: a sequence of transactions, one at a time.
    pub fn session(&self) -> Session {
        let interrupt = Arc::new(AtomicBool::new(false));
        Session {
            db: self.clone(),
            tx_meta: self.inner.deadlines.transactions().register(interrupt.clone()),
            interrupt,
            explicit: None,
            auto: None,
            timer: None,
            server_deadline: false,
            auto_mode: AccessMode::Write,
            user: None,
            mem: None,
            obs: Default::default(),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.reset();
    }
}
