//! `RUN`, `PULL` and `DISCARD`: a statement routed to its runner, and rows pulled from the
//! open result of the explicit or auto-commit transaction.

use std::sync::atomic::Ordering;

use arbor_exec::graph::Stats;
use arbor_exec::Execution;
use arbor_model::{Error, PropertyMap, Result, ResultValue, Status};

use super::dispatch::check_access;
use super::record::Record;
use super::result::{OpenResult, Sink, Source};
use super::transaction::{bookmark_of, check_config};
use super::{AccessMode, Prepared, PullOutcome, QueryType, RunInfo, Session, TxConfig};
use crate::schema;

impl Session {
    /// `Session::run` (observe.rs) without the metrics and the query log.
    pub(crate) fn run_unobserved(
        &mut self,
        query: &str,
        params: PropertyMap,
        config: TxConfig,
    ) -> Result<RunInfo> {
        self.db.check_open()?;
        if self.explicit.is_none() {
            check_config(&config)?;
            self.finish_auto()?;
            self.start_tx(&config);
            self.auto_mode = config.mode;
        } else if self.expired() {
            self.fail_explicit_timed_out();
        }
        if self.explicit.is_some() && self.tx_meta.terminated() {
            // TERMINATE TRANSACTION (txinfo.rs) while the transaction was idle.
            self.fail_explicit();
            return Err(crate::txinfo::terminated_error());
        }
        self.tx_meta.set_query(query);
        // Only now: a deadline that fired before the check above must still be seen by it.
        self.interrupt.store(false, Ordering::SeqCst);
        let _mem = self.enter_memory();
        if let Some(ex) = &self.explicit {
            if ex.timed_out {
                return Err(self.timed_out());
            }
            if ex.failed || ex.tx.is_none() {
                return Err(Error::new(
                    Status::TransactionTerminated,
                    "the transaction has been rolled back because of an earlier error",
                ));
            }
        }
        let mode = self.explicit.as_ref().map_or(config.mode, |ex| ex.mode);
        // Parsing and planning a huge query is accounted too.
        let prepared = self
            .db
            .prepare(query)
            .and_then(|p| arbor_exec::memory::check().and_then(|()| check_access(p, mode)));
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) => {
                self.fail_explicit();
                return Err(e);
            }
        };
        if let Err(e) = crate::users::check_access(self.user.as_ref(), &prepared, &config) {
            self.fail_explicit();
            return Err(e);
        }
        let (fields, result) = match prepared {
            Prepared::Explained(query_type) => {
                (Vec::new(), OpenResult::rows(Vec::new(), query_type, Stats::default()))
            }
            Prepared::Schema(cmd) => {
                let (stats, fields, rows) = schema::run_schema(&self.db, &cmd, &params)?;
                (fields, OpenResult::rows(rows, QueryType::Schema, stats))
            }
            Prepared::Query(q, notes) => {
                // As Neo4j reports it: a writing query is `rw` if it returns rows, else `w`
                // (`MATCH (n) DETACH DELETE n` is `w`, `CREATE (n) RETURN n` is `rw`); user
                // administration is `s` (`SHOW|TERMINATE TRANSACTIONS` is `r`).
                let query_type = match (q.is_write(), !q.columns().is_empty()) {
                    _ if q.admin_command().is_some_and(|c| c.contains("USER")) => QueryType::Schema,
                    (false, _) => QueryType::Read,
                    (true, false) => QueryType::Write,
                    (true, true) => QueryType::ReadWrite,
                };
                let fields = q.columns().to_vec();
                if q.is_explain() {
                    let mut r = OpenResult::rows(Vec::new(), query_type, Stats::default());
                    r.plan = Some(q.plan_description());
                    r.notifications = notes;
                    (fields, r)
                } else {
                    let profile = q.is_profile();
                    let retry = match self.explicit {
                        None => super::retry::Retry::for_statement(&q, &params),
                        Some(_) => None,
                    };
                    let mut exec = match Execution::start(q, params) {
                        Ok(e) => e,
                        Err(e) => {
                            self.fail_explicit();
                            return Err(e);
                        }
                    };
                    exec.set_interrupt(self.interrupt.clone());
                    let mut r = OpenResult::rows(Vec::new(), query_type, Stats::default());
                    r.source = Source::Exec(Box::new(exec));
                    r.profile = profile;
                    r.notifications = notes;
                    r.retry = retry;
                    (fields, r)
                }
            }
        };
        if let Some(ex) = &mut self.explicit {
            ex.results.push(result);
            let qid = (ex.results.len() - 1) as i64;
            return Ok(RunInfo { fields, qid: Some(qid) });
        }
        let tx = self.db.inner.store.begin(config.mode == AccessMode::Read);
        self.auto = Some((tx, result));
        Ok(RunInfo { fields, qid: None })
    }

    pub(crate) fn pull_unobserved(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(Vec<ResultValue>) -> Result<()>,
    ) -> Result<PullOutcome> {
        self.advance(qid, n, Sink::Records(&mut |record| sink(record.to_values()?)))
    }

    pub(crate) fn pull_records_unobserved(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(&mut Record<'_>) -> Result<()>,
    ) -> Result<PullOutcome> {
        self.advance(qid, n, Sink::Records(sink))
    }

    pub(crate) fn discard_unobserved(&mut self, qid: Option<i64>, n: i64) -> Result<PullOutcome> {
        self.advance(qid, n, Sink::Discard)
    }

    pub(super) fn advance(
        &mut self,
        qid: Option<i64>,
        n: i64,
        mut sink: Sink<'_>,
    ) -> Result<PullOutcome> {
        if n == 0 {
            return Err(Error::new(Status::RequestInvalid, "PULL/DISCARD with n = 0"));
        }
        if let Some(ex) = &mut self.explicit {
            let idx = match qid {
                None | Some(-1) => ex.results.len().checked_sub(1),
                Some(q) if q >= 0 && (q as usize) < ex.results.len() => Some(q as usize),
                Some(_) => None,
            };
            if ex.timed_out {
                return Err(self.timed_out());
            }
            let (Some(idx), Some(_)) = (idx, ex.tx.as_ref()) else {
                return Err(Error::new(Status::RequestInvalid, "no such open result"));
            };
            if ex.results[idx].done {
                return Ok(PullOutcome::Done(ex.results[idx].summary(None)));
            }
            if self.expired() {
                self.fail_explicit_timed_out();
                return Err(self.timed_out());
            }
            let _meta = crate::txinfo::enter(&self.tx_meta);
            let import_dir = self.db.import_dir();
            let _mem = self.enter_memory();
            let Some(ex) = self.explicit.as_mut() else {
                return Err(Error::internal("explicit transaction vanished"));
            };
            let (Some(tx), mode) = (ex.tx.as_mut(), ex.mode) else {
                return Err(Error::internal("explicit transaction vanished"));
            };
            let result = &mut ex.results[idx];
            let produced = result.produce(tx, None, import_dir.as_deref(), self.db.path(), n, sink);
            // What administration procedures changed (users.rs) counts as `system-updates`.
            result.extra_stats.system_updates += self.tx_meta.take_system_updates();
            return match produced {
                Ok(true) => Ok(PullOutcome::Done(result.summary(None))),
                Ok(false) => Ok(PullOutcome::HasMore),
                Err(e) => {
                    let e = self.classify(e, mode);
                    if matches!(
                        e.status,
                        Status::TransactionTimedOutClientConfiguration
                            | Status::TransactionTimedOut
                    ) {
                        self.fail_explicit_timed_out();
                    } else {
                        self.fail_explicit();
                    }
                    Err(e)
                }
            };
        }
        if self.auto.is_none() {
            return Err(Error::new(Status::RequestInvalid, "there is no open result to pull from"));
        }
        if self.expired() {
            self.rollback_auto();
            return Err(self.timed_out());
        }
        let _meta = crate::txinfo::enter(&self.tx_meta);
        let _mem = self.enter_memory();
        // Auto-commit: `CALL { ... } IN TRANSACTIONS` may commit batches along the way. A
        // statement that loses a write conflict before sending a row runs again (retry.rs).
        let import_dir = self.db.import_dir();
        loop {
            let Some((tx, result)) = self.auto.as_mut() else {
                return Err(Error::internal("auto-commit result vanished"));
            };
            let this_sink = sink.reborrow();
            let store = Some(&self.db.inner.store);
            let produced =
                result.produce(tx, store, import_dir.as_deref(), self.db.path(), n, this_sink);
            result.extra_stats.system_updates += self.tx_meta.take_system_updates();
            let failed = match produced {
                Ok(false) => return Ok(PullOutcome::HasMore),
                Ok(true) => {
                    let Some((tx, result)) = self.auto.take() else {
                        return Err(Error::internal("auto-commit result vanished"));
                    };
                    match tx.commit() {
                        Ok(ts) => {
                            self.end_tx();
                            return Ok(PullOutcome::Done(result.summary(Some(bookmark_of(ts)))));
                        }
                        Err(e) => (e, result),
                    }
                }
                Err(e) => {
                    let Some((tx, result)) = self.auto.take() else {
                        return Err(Error::internal("auto-commit result vanished"));
                    };
                    tx.rollback();
                    (e, result)
                }
            };
            let (e, mut result) = failed;
            if !self.rerun_auto(&e, &mut result) {
                let e = self.classify(e, self.auto_mode);
                self.end_tx();
                return Err(e);
            }
            let tx = self.db.inner.store.begin(self.auto_mode == AccessMode::Read);
            self.auto = Some((tx, result));
        }
    }
}

impl Session {
    /// After the auto-commit statement of `result` failed with `e` (its transaction already
    /// rolled back or failed to commit): restarts it in place for a fresh transaction and
    /// returns true, or false when it cannot be re-run (retry.rs says when it can).
    fn rerun_auto(&mut self, e: &Error, result: &mut OpenResult) -> bool {
        if e.status != Status::TransactionOutdated || result.emitted > 0 || self.expired() {
            return false;
        }
        let spread = (self as *const Session as usize) >> 6;
        let interrupt = self.interrupt.clone();
        let Some(retry) = result.retry.as_mut() else { return false };
        match retry.next_attempt(spread, interrupt) {
            Some(exec) => {
                result.source = Source::Exec(Box::new(exec));
                result.done = false;
                true
            }
            None => false,
        }
    }
}
