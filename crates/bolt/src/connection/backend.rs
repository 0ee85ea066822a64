//! The engine operations a connection needs ([`Backend`]), implemented by the engine's
//! `Session` and, in tests, by a scripted fake.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arbor_engine::{CurrentUser, PullOutcome, Record, RunInfo, Session, TxConfig};
use arbor_model::{PropertyMap, Result};

/// The engine operations the state machine needs. `arbor_engine::Session` is the real one;
/// tests plug in a scripted fake so the protocol can be checked without a query engine.
pub(crate) trait Backend {
    fn begin(&mut self, config: TxConfig) -> Result<()>;
    fn run(&mut self, query: &str, params: PropertyMap, config: TxConfig) -> Result<RunInfo>;
    fn pull(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(&mut Record<'_>) -> Result<()>,
    ) -> Result<PullOutcome>;
    fn discard(&mut self, qid: Option<i64>, n: i64) -> Result<PullOutcome>;
    fn commit(&mut self) -> Result<String>;
    fn rollback(&mut self) -> Result<()>;
    fn reset(&mut self);
    fn interrupt_flag(&self) -> Arc<AtomicBool>;
    /// Who logged in (`None`: authentication disabled).
    fn set_user(&mut self, _user: Option<CurrentUser>) {}
    /// The connection id and client address `SHOW TRANSACTIONS` lists.
    fn set_client(&mut self, _connection_id: &str, _client_address: &str) {}
}

impl Backend for Session {
    fn begin(&mut self, config: TxConfig) -> Result<()> {
        Session::begin(self, config)
    }
    fn run(&mut self, query: &str, params: PropertyMap, config: TxConfig) -> Result<RunInfo> {
        Session::run(self, query, params, config)
    }
    fn pull(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(&mut Record<'_>) -> Result<()>,
    ) -> Result<PullOutcome> {
        Session::pull_records(self, qid, n, sink)
    }
    fn discard(&mut self, qid: Option<i64>, n: i64) -> Result<PullOutcome> {
        Session::discard(self, qid, n)
    }
    fn commit(&mut self) -> Result<String> {
        Session::commit(self)
    }
    fn rollback(&mut self) -> Result<()> {
        Session::rollback(self)
    }
    fn reset(&mut self) {
        Session::reset(self)
    }
    fn interrupt_flag(&self) -> Arc<AtomicBool> {
        Session::interrupt_flag(self)
    }
    fn set_user(&mut self, user: Option<CurrentUser>) {
        Session::set_user(self, user)
    }
    fn set_client(&mut self, connection_id: &str, client_address: &str) {
        Session::set_client(self, connection_id, client_address)
    }
}
