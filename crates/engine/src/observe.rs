//! What the engine observes about each query and transaction: the metrics (`metrics.rs`), the
//! query log (`query_log.rs`) and a `tracing` span per query (`query`, at debug level, entered
//! while the query runs and pulls).
//!
//! The public [`Session`] operations (`begin`, `run`, `pull`, `discard`, `commit`, `rollback`,
//! `reset`) are defined here as thin wrappers over the session's own (`*_unobserved` in
//! `session.rs`), so the session code carries no observation logic. A transaction's start and
//! end are found by comparing, after each operation, whether the session still holds a live
//! transaction with what the observer last saw; a query ends when its result is exhausted,
//! fails, or the session moves on.

use std::time::Instant;

use arbor_model::{Error, PropertyMap, Result, ResultValue};

use crate::metrics;
use crate::observer::Running;
use crate::query_log::{self, QueryLogLevel};
use crate::session::{PullOutcome, QueryType, Record, RunInfo, Session, TxConfig};

/// Whether queries are observed at all: metrics on (the default) or the query log on.
#[inline]
fn observing() -> bool {
    metrics::enabled() || query_log::level() != QueryLogLevel::Off
}

impl Session {
    /// Whether a transaction (explicit and not failed, or auto-commit) is live.
    fn tx_alive(&self) -> bool {
        self.auto.is_some() || self.explicit.as_ref().is_some_and(|ex| ex.tx.is_some())
    }

    /// Counts a transaction that started or ended during the last operation.
    fn observe_tx(&mut self, error: Option<&Error>, rolled_back: bool) {
        let alive = self.tx_alive();
        if self.obs.tx_open && !alive {
            self.obs.tx_ended(error, rolled_back);
        } else if !self.obs.tx_open && alive {
            self.obs.tx_started();
        }
    }

    /// Ends the running query: metrics, the query log, the span's last event.
    fn finish_query(&mut self, query_type: Option<QueryType>, error: Option<&Error>) {
        let Some(q) = self.obs.query.take() else { return };
        let elapsed = q.started.elapsed();
        metrics::query_finished(query_type, error.is_some(), elapsed);
        let elapsed_ms = elapsed.as_millis() as u64;
        tracing::debug!(parent: &q.span, elapsed_ms, rows = q.rows, failed = error.is_some(), "query finished");
        if query_log::should_log_end(elapsed, error.is_some()) {
            let (user, client) = self.tx_meta.who();
            query_log::write(&query_log::Entry {
                event: if error.is_some() { "failure" } else { "success" },
                elapsed,
                user: &user,
                client: &client,
                query: q.text.as_deref().unwrap_or(""),
                parameters: q.parameters.as_ref(),
                rows: q.rows,
                error,
            });
        }
    }

    /// Starts an explicit transaction.
    pub fn begin(&mut self, config: TxConfig) -> Result<()> {
        if !observing() {
            return self.begin_unobserved(config);
        }
        self.finish_query(None, None);
        let r = self.begin_unobserved(config);
        self.observe_tx(r.as_ref().err(), false);
        r
    }

    /// Runs a query: inside the explicit transaction if one is open, otherwise in a new
    /// auto-commit transaction that commits when its result is exhausted. Compile errors are
    /// returned here; runtime errors may surface on `pull`.
    pub fn run(&mut self, query: &str, params: PropertyMap, config: TxConfig) -> Result<RunInfo> {
        if !observing() {
            return self.run_unobserved(query, params, config);
        }
        // A result still open is finished (an auto-commit one commits) by the new run.
        self.finish_query(None, None);
        let level = query_log::level();
        let logged = level != QueryLogLevel::Off;
        let parameters = (logged && query_log::wants_parameters()).then(|| params.clone());
        let span = tracing::debug_span!("query", query);
        if level == QueryLogLevel::Verbose {
            let (user, client) = self.tx_meta.who();
            query_log::write(&query_log::Entry {
                event: "start",
                elapsed: std::time::Duration::ZERO,
                user: &user,
                client: &client,
                query,
                parameters: parameters.as_ref(),
                rows: 0,
                error: None,
            });
        }
        let started = Instant::now();
        let pending_auto = !self.in_transaction() && self.obs.tx_open;
        let r = {
            let _entered = span.enter();
            self.run_unobserved(query, params, config)
        };
        if pending_auto {
            // The earlier auto-commit transaction was finished by this run.
            self.obs.tx_ended(None, false);
        }
        self.observe_tx(r.as_ref().err(), false);
        self.obs.query = Some(Running {
            started,
            text: logged.then(|| query.to_string()),
            parameters,
            rows: 0,
            span,
        });
        if let Err(e) = &r {
            self.finish_query(None, Some(e));
        }
        r
    }

    /// Produces at most `n` records (`n < 0`: all) of the result `qid` (`None`/`-1`: the last one
    /// run) into `sink`, each an owned row of [`ResultValue`]s (entities materialised). Never
    /// computes more than `n` records ahead.
    pub fn pull(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(Vec<ResultValue>) -> Result<()>,
    ) -> Result<PullOutcome> {
        if !observing() {
            return self.pull_unobserved(qid, n, sink);
        }
        let span = self.obs.query.as_ref().map(|q| q.span.clone());
        let _entered = span.as_ref().map(|s| s.enter());
        let mut rows = 0u64;
        let r = self.pull_unobserved(qid, n, &mut |record| {
            rows += 1;
            sink(record)
        });
        if let Some(q) = &mut self.obs.query {
            q.rows += rows;
        }
        self.after_advance(&r);
        r
    }

    /// As [`Session::pull`], but each record is handed over as a [`Record`], written from the
    /// executor's row and the transaction's graph without an owned row in between (what the
    /// Bolt server streams from). The record is valid only during the call.
    pub fn pull_records(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(&mut Record<'_>) -> Result<()>,
    ) -> Result<PullOutcome> {
        if !observing() {
            return self.pull_records_unobserved(qid, n, sink);
        }
        let span = self.obs.query.as_ref().map(|q| q.span.clone());
        let _entered = span.as_ref().map(|s| s.enter());
        let mut rows = 0u64;
        let r = self.pull_records_unobserved(qid, n, &mut |record| {
            rows += 1;
            sink(record)
        });
        if let Some(q) = &mut self.obs.query {
            q.rows += rows;
        }
        self.after_advance(&r);
        r
    }

    /// Discards `n` records (`n < 0`: all) of result `qid`. The query still runs to completion
    /// of those rows, so its writes happen.
    pub fn discard(&mut self, qid: Option<i64>, n: i64) -> Result<PullOutcome> {
        if !observing() {
            return self.discard_unobserved(qid, n);
        }
        let span = self.obs.query.as_ref().map(|q| q.span.clone());
        let _entered = span.as_ref().map(|s| s.enter());
        let r = self.discard_unobserved(qid, n);
        self.after_advance(&r);
        r
    }

    fn after_advance(&mut self, r: &Result<PullOutcome>) {
        match r {
            Ok(PullOutcome::Done(summary)) => self.finish_query(Some(summary.query_type), None),
            Ok(PullOutcome::HasMore) => {}
            Err(e) => self.finish_query(None, Some(e)),
        }
        self.observe_tx(r.as_ref().err(), false);
    }

    /// Commits the explicit transaction; returns its bookmark. Results not yet consumed are run
    /// to completion first, so their writes are part of the commit.
    pub fn commit(&mut self) -> Result<String> {
        if !observing() {
            return self.commit_unobserved();
        }
        let r = self.commit_unobserved();
        self.finish_query(None, r.as_ref().err());
        self.observe_tx(r.as_ref().err(), false);
        r
    }

    /// Rolls the explicit transaction back.
    pub fn rollback(&mut self) -> Result<()> {
        if !observing() {
            return self.rollback_unobserved();
        }
        let r = self.rollback_unobserved();
        self.finish_query(None, None);
        self.observe_tx(None, true);
        r
    }

    /// Drops every open result and rolls back any open transaction (Bolt `RESET`).
    pub fn reset(&mut self) {
        self.reset_unobserved();
        if !observing() {
            return;
        }
        self.finish_query(None, None);
        self.observe_tx(None, true);
    }
}
