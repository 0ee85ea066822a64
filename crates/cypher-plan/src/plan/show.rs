//! `SHOW INDEXES|CONSTRAINTS|PROCEDURES|FUNCTIONS|SETTINGS|DATABASES|...` planned as a call of
//! an internal procedure, then the ordinary operators of its tail: as if the command were
//! `CALL <procedure>(filter, names) YIELD ... [WHERE ...] [RETURN ...]`.
//!
//! Each command has its own procedure ([`show_procedure_name`]), which the caller's
//! [`crate::Resolver`] supplies; its signature lists every column of the command, in Neo4j's
//! order, and [`crate::ProcSig::default_outputs`] says how many of them the bare command shows.
//! The names hold a space, which no registered procedure name may (they are dotted identifiers),
//! and the engine resolves them only while it plans a `SHOW`: no user `CALL` reaches them.

use std::sync::Arc;

use arbor_cypher_syntax::ast::{Clause, ClauseKind, Expr, ShowCommand, ShowKind, YieldSpec};
use arbor_model::{Error, Result, Status, Value};

use crate::bind::*;
use crate::expr::PExpr;
use crate::ops::Op;

/// The internal procedure a `SHOW` command of `kind` calls; `default_only` is `SHOW DEFAULT
/// DATABASE` / `SHOW HOME DATABASE` (the default database, without the `default` and `home`
/// columns).
pub fn show_procedure_name(kind: ShowKind, default_only: bool) -> &'static str {
    match kind {
        ShowKind::Databases if default_only => "SHOW DEFAULT DATABASE",
        ShowKind::Databases => "SHOW DATABASES",
        ShowKind::Indexes => "SHOW INDEXES",
        ShowKind::Constraints => "SHOW CONSTRAINTS",
        ShowKind::Functions => "SHOW FUNCTIONS",
        ShowKind::Procedures => "SHOW PROCEDURES",
        ShowKind::Transactions => "SHOW TRANSACTIONS",
        ShowKind::Settings => "SHOW SETTINGS",
        ShowKind::Servers => "SHOW SERVERS",
    }
}

/// What follows a `SHOW` procedure's call: `YIELD`, `WHERE` and the clauses after them.
#[derive(Clone, Copy)]
pub(crate) struct ShowTail<'a> {
    pub yield_: &'a Option<YieldSpec>,
    pub where_: &'a Option<Expr>,
    pub then: &'a [Clause],
}

impl Binder<'_> {
    /// Plans a `SHOW` command: the procedure call, the `WHERE` as a filter, then the clauses
    /// after `YIELD` as in any query. Returns the root and the result columns.
    pub(crate) fn plan_show(&mut self, cmd: &ShowCommand) -> Result<(Op, Cols)> {
        let name =
            show_procedure_name(cmd.kind, cmd.kind == ShowKind::Databases && cmd.filter.is_some());
        // Inputs: the filter word (`SHOW TEXT INDEXES`) and the names the command is narrowed
        // to (`SHOW SETTINGS 'a', $b`), as a list of what was written, or null.
        let filter = cmd.filter.as_deref().map_or(Value::Null, Value::str);
        let names = match &cmd.names {
            Some(e) => PExpr::List(vec![self.bind_expr(e, &Scope::default())?]),
            None => PExpr::Const(Value::Null),
        };
        let tail = ShowTail { yield_: &cmd.yield_, where_: &cmd.where_, then: &cmd.then };
        self.plan_show_call(name, vec![PExpr::Const(filter), names], tail)
    }

    /// Plans the call of the internal procedure `name` with the two inputs of a `SHOW`
    /// procedure (`args`: the filter word and the names), then `tail` over its columns.
    pub(crate) fn plan_show_call(
        &mut self,
        name: &'static str,
        args: Vec<PExpr>,
        tail: ShowTail<'_>,
    ) -> Result<(Op, Cols)> {
        let sig = self
            .res
            .procedure(name)
            .filter(|sig| sig.inputs.len() == args.len())
            .ok_or_else(|| Error::internal(format!("no procedure answers `{name}`")))?;
        self.read = true;
        let outs: Cols = sig.outputs.iter().map(|(o, _)| (o.clone(), self.slot())).collect();
        let mut op = Op::ProcedureCall {
            input: Box::new(Op::Argument),
            name: Arc::from(name),
            args,
            arg_types: sig.inputs.iter().map(|(_, t)| t.clone()).collect(),
            void: false,
            yields: outs.iter().enumerate().map(|(i, (_, s))| (i, *s)).collect(),
        };
        let ShowTail { yield_, where_, then } = tail;
        // YIELD picks and renames columns. Without it every column is in scope and the default
        // ones are shown (also under a WHERE, as Neo4j does); `YIELD *` shows them all.
        let mut scope = Scope::default();
        let mut yielded: Cols = Vec::new();
        match yield_ {
            Some(y) if !y.star => {
                for (col, alias) in &y.items {
                    let Some((_, slot)) = outs.iter().find(|(o, _)| **o == *col.name) else {
                        return Err(Error::new(
                            Status::SyntaxError,
                            format!("Trying to YIELD non-existing column: `{}`", col.name),
                        ));
                    };
                    let out = alias.as_ref().unwrap_or(col);
                    scope.bind(out.name.clone(), *slot, Kind::Any);
                    yielded.push((out.name.to_string(), *slot));
                }
            }
            star => {
                let shown = match star {
                    Some(_) => outs.len(),
                    None => sig.default_outputs.unwrap_or(outs.len()),
                };
                for (i, (o, s)) in outs.iter().enumerate() {
                    scope.bind(Arc::from(o.as_str()), *s, Kind::Any);
                    if i < shown {
                        yielded.push((o.clone(), *s));
                    }
                }
            }
        }
        let where_ = yield_.as_ref().and_then(|y| y.where_.as_ref()).or(where_.as_ref());
        if let Some(w) = where_ {
            let pred = self.bind_pred(w, &scope)?;
            op = Op::Filter { input: Box::new(op), pred, reads: false };
        }
        if then.is_empty() {
            return Ok((op, yielded));
        }
        let ends_in_return = matches!(then.last().map(|c| &c.kind), Some(ClauseKind::Return(_)));
        let (op, scope, cols) = self.plan_clauses(then, op, scope, ends_in_return)?;
        if let Some(cols) = cols {
            return Ok((op, cols));
        }
        // No RETURN (also `YIELD ... ORDER BY/SKIP/LIMIT`, which arrives as a trailing
        // `WITH *`): the yielded columns, in YIELD order.
        let cols = yielded
            .into_iter()
            .map(|(n, _)| match scope.get(&n) {
                Some((s, _)) => Ok((n, s)),
                None => Err(Error::internal(format!("SHOW column `{n}` left the scope"))),
            })
            .collect::<Result<Cols>>()?;
        Ok((op, cols))
    }
}
