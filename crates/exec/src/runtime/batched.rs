//! `CALL { ... } IN TRANSACTIONS`: the body runs for the input rows in batches of `OF n ROWS`,
//! each batch in its own inner transaction (`Graph::batch_begin/commit/rollback`).
//!
//! A batch runs to its commit before any of its rows leave the operator, so a batch that
//! fails is rolled back whole and its rows can still be reported (`ON ERROR CONTINUE |
//! BREAK`, `REPORT STATUS AS s`). After a commit, the next batch and everything above this
//! operator read a snapshot that includes it, as in Neo4j (whose outer transaction sees what
//! inner transactions committed). The input is read to the end before the first batch (the
//! planner puts an `Eager` below). `IN n CONCURRENT TRANSACTIONS` runs here one batch after
//! another: one of the orders concurrent batches may take.

use std::collections::VecDeque;

use arbor_cypher_plan::ops::{TxBatch, TxOnError};
use arbor_model::{Error, Key, PropertyMap, Result, Status, Value};

use crate::ctx::{Ctx, Operator, Row};
use crate::eval::eval;
use crate::graph::Graph;

/// The `TransactionApply` operator.
pub(super) struct TransactionApply {
    pub(super) input: Box<dyn Operator>,
    pub(super) inner: Box<dyn Operator>,
    /// A body without RETURN: each input row passes once after the body ran for it.
    pub(super) unit: bool,
    pub(super) cfg: TxBatch,
    pub(super) arg: Row,
    /// `OF n ROWS`, evaluated at the first batch.
    pub(super) size: Option<usize>,
    /// Rows of the last batch, ready to leave.
    pub(super) out: VecDeque<Row>,
    pub(super) input_done: bool,
    /// `ON ERROR BREAK` after a failure: no later batch runs.
    pub(super) broken: bool,
    pub(super) committed: u64,
}

impl TransactionApply {
    pub(super) fn new(
        input: Box<dyn Operator>,
        inner: Box<dyn Operator>,
        unit: bool,
        cfg: TxBatch,
    ) -> TransactionApply {
        TransactionApply {
            input,
            inner,
            unit,
            cfg,
            arg: Vec::new(),
            size: None,
            out: VecDeque::new(),
            input_done: false,
            broken: false,
            committed: 0,
        }
    }

    fn batch_size(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<usize> {
        if let Some(n) = self.size {
            return Ok(n);
        }
        let mut row = self.arg.clone();
        let n = match eval(&self.cfg.rows, &mut row, ctx, g)? {
            Value::Int(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX),
            other => {
                let shown = match &other {
                    Value::String(s) => s.to_string(),
                    v => arbor_model::to_cypher_literal(v),
                };
                return Err(Error::new(
                    Status::ArgumentError,
                    format!(
                        "OF ... ROWS: Invalid input. '{shown}' is not a valid value. Must be a \
                         positive integer. (Transactions committed: {})",
                        self.committed
                    ),
                )
                .with_detail("InvalidArgumentValue"));
            }
        };
        self.size = Some(n);
        Ok(n)
    }

    /// Runs the body for `rows` and commits; the rows it produced go to `out` (a unit body
    /// produces nothing there: its input rows themselves leave, without a copy each).
    fn run_batch(
        &mut self,
        rows: &[Row],
        ctx: &mut Ctx,
        g: &mut dyn Graph,
        out: &mut Vec<Row>,
    ) -> Result<()> {
        for r in rows {
            ctx.check_interrupt()?;
            self.inner.reset(r);
            if self.unit {
                while let Some(o) = self.inner.next(ctx, g)? {
                    ctx.recycle(o);
                }
            } else {
                while let Some(o) = self.inner.next(ctx, g)? {
                    out.push(o);
                }
            }
        }
        g.batch_commit()
    }

    /// Reads the next batch of input rows and runs it; `false` when the input is exhausted.
    fn next_batch(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<bool> {
        let size = self.batch_size(ctx, g)?;
        let mut rows = Vec::with_capacity(size.min(4096));
        while rows.len() < size {
            match self.input.next(ctx, g)? {
                Some(r) => rows.push(r),
                None => {
                    self.input_done = true;
                    break;
                }
            }
        }
        if rows.is_empty() {
            return Ok(false);
        }
        if self.broken {
            let status = status_map(false, false, None, None);
            self.queue_failed(rows, status);
            return Ok(true);
        }
        let tx_id = g.batch_begin()?;
        let stats_before = ctx.stats;
        let mut produced = Vec::new();
        match self.run_batch(&rows, ctx, g, &mut produced) {
            Ok(()) => {
                self.committed += 1;
                if self.unit {
                    produced = rows;
                }
                let status = status_map(true, true, Some(&tx_id), None);
                for mut r in produced {
                    if let Some(s) = self.cfg.status {
                        r[s] = status.clone();
                    }
                    self.out.push_back(r);
                }
            }
            Err(e) if self.cfg.on_error == TxOnError::Fail || is_fatal(&e) => {
                return Err(Error {
                    message: format!("{} (Transactions committed: {})", e.message, self.committed),
                    ..e
                });
            }
            Err(e) => {
                g.batch_rollback()?;
                ctx.stats = stats_before;
                let status = status_map(true, false, Some(&tx_id), Some(&e.message));
                self.queue_failed(rows, status);
                self.broken = self.cfg.on_error == TxOnError::Break;
            }
        }
        Ok(true)
    }

    /// Queues the input rows of a batch that did not commit: the returned columns are null.
    fn queue_failed(&mut self, rows: Vec<Row>, status: Value) {
        for mut r in rows {
            for s in &self.cfg.returned {
                r[*s] = Value::Null;
            }
            if let Some(s) = self.cfg.status {
                r[s] = status.clone();
            }
            self.out.push_back(r);
        }
    }
}

impl Operator for TransactionApply {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.arg = arg.clone();
        self.out.clear();
        self.input_done = false;
        self.broken = false;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.out.pop_front() {
                return Ok(Some(r));
            }
            if self.input_done || !self.next_batch(ctx, g)? {
                return Ok(None);
            }
        }
    }
}

/// Errors `ON ERROR CONTINUE | BREAK` does not swallow: the statement was stopped, or the
/// store failed.
fn is_fatal(e: &Error) -> bool {
    matches!(
        e.status,
        Status::TransactionTerminated
            | Status::TransactionTimedOut
            | Status::TransactionTimedOutClientConfiguration
            | Status::Io
            | Status::Corruption
            | Status::TransactionStartFailed
    )
}

/// The value of `REPORT STATUS AS s` (Neo4j's keys and types).
fn status_map(started: bool, committed: bool, tx_id: Option<&str>, error: Option<&str>) -> Value {
    let text = |t: Option<&str>| t.map_or(Value::Null, |t| Value::String(t.into()));
    Value::Map(PropertyMap::from_entries(vec![
        (Key::from("started"), Value::Bool(started)),
        (Key::from("committed"), Value::Bool(committed)),
        (Key::from("transactionId"), text(tx_id)),
        (Key::from("errorMessage"), text(error)),
    ]))
}
