//! Administration commands (users and transactions) planned as calls of internal procedures,
//! as `SHOW` commands are (`show.rs`).
//!
//! `SHOW USERS`, `SHOW CURRENT USER`, `SHOW TRANSACTIONS` and `TERMINATE TRANSACTIONS` call a
//! procedure with the two inputs of a `SHOW` procedure (filter word: null; names: the listed
//! transaction ids, a one-item-per-id list, or null) whose outputs are Neo4j's columns; their
//! `YIELD`/`WHERE`/`RETURN` tail is planned by the ordinary planner. The commands that change
//! users (`CREATE USER`, `ALTER USER`, `ALTER CURRENT USER`, `RENAME USER`, `DROP USER`) call a
//! void procedure with one input, a map describing the command ([`command_map`]): no columns,
//! no rows. The engine supplies the procedures ([`admin_procedure_name`] names them) and knows
//! who is logged in and how to count `system-updates`; the planner only marks the plan as an
//! administration command ([`crate::Plan::admin`]).

use std::sync::Arc;

use arbor_cypher_syntax::ast_admin::{AdminCommand, Argument, UserSettings};
use arbor_model::{Error, Result, Value};

use crate::bind::*;
use crate::expr::PExpr;
use crate::ops::Op;
use crate::plan::show::ShowTail;

/// The internal procedure an administration command calls (its name holds a space, so no user
/// `CALL` reaches it).
pub fn admin_procedure_name(cmd: &AdminCommand) -> &'static str {
    match cmd {
        AdminCommand::CreateUser { .. } => "CREATE USER",
        AdminCommand::AlterUser { .. } => "ALTER USER",
        AdminCommand::AlterCurrentUser { .. } => "ALTER CURRENT USER",
        AdminCommand::RenameUser { .. } => "RENAME USER",
        AdminCommand::DropUser { .. } => "DROP USER",
        AdminCommand::ShowUsers { current: false, .. } => "SHOW USERS",
        AdminCommand::ShowUsers { current: true, .. } => "SHOW CURRENT USER",
        AdminCommand::ShowTransactions { .. } => "SHOW TRANSACTIONS",
        AdminCommand::TerminateTransactions { .. } => "TERMINATE TRANSACTIONS",
    }
}

impl Binder<'_> {
    /// Plans an administration command; returns the root and the result columns.
    pub(crate) fn plan_admin(&mut self, cmd: &AdminCommand) -> Result<(Op, Cols)> {
        let name = admin_procedure_name(cmd);
        let (ids, yield_, where_, then) = match cmd {
            AdminCommand::ShowUsers { yield_, where_, then, .. } => (None, yield_, where_, then),
            AdminCommand::ShowTransactions { ids, yield_, where_, then }
            | AdminCommand::TerminateTransactions { ids, yield_, where_, then } => {
                (Some(ids), yield_, where_, then)
            }
            _ => return self.plan_user_change(name, cmd),
        };
        let names = match ids {
            Some(ids) if !ids.is_empty() => {
                PExpr::List(ids.iter().map(|a| self.argument(a)).collect())
            }
            _ => PExpr::Const(Value::Null),
        };
        let tail = ShowTail { yield_, where_, then };
        self.plan_show_call(name, vec![PExpr::Const(Value::Null), names], tail)
    }

    /// A command that changes users: a void call of its procedure with the command's map.
    fn plan_user_change(&mut self, name: &'static str, cmd: &AdminCommand) -> Result<(Op, Cols)> {
        let sig = self
            .res
            .procedure(name)
            .filter(|sig| sig.inputs.len() == 1 && sig.outputs.is_empty())
            .ok_or_else(|| Error::internal(format!("no procedure answers `{name}`")))?;
        let map = self.command_map(cmd);
        let op = Op::ProcedureCall {
            input: Box::new(Op::Argument),
            name: Arc::from(name),
            args: vec![PExpr::Map(map)],
            arg_types: sig.inputs.iter().map(|(_, t)| t.clone()).collect(),
            void: true,
            yields: Vec::new(),
        };
        Ok((op, Vec::new()))
    }

    /// A literal or parameter name or secret.
    fn argument(&mut self, a: &Argument) -> PExpr {
        match a {
            Argument::Literal(s) => PExpr::Const(Value::from(s.clone())),
            Argument::Parameter(p) => PExpr::Param(self.param(p)),
        }
    }

    /// The map a user-changing command's procedure receives. Each name or secret `k` is the
    /// entry `k` (its value) with, when it came from a parameter, `kParam` (the parameter's
    /// name, for messages): `name`, `password`, `home`, `old`, `new`, `from`, `to`. Flags:
    /// `orReplace`, `ifNotExists`, `ifExists`, `encrypted` (booleans); settings left alone are
    /// absent: `changeRequired`, `suspended` (booleans), `removeHome` (true for `REMOVE HOME
    /// DATABASE`).
    fn command_map(&mut self, cmd: &AdminCommand) -> Vec<(Arc<str>, PExpr)> {
        let mut m: Vec<(Arc<str>, PExpr)> = Vec::new();
        let flag = |m: &mut Vec<(Arc<str>, PExpr)>, k: &str, v: bool| {
            m.push((Arc::from(k), PExpr::Const(Value::Bool(v))));
        };
        match cmd {
            AdminCommand::CreateUser { name, or_replace, if_not_exists, settings } => {
                self.put(&mut m, "name", name);
                flag(&mut m, "orReplace", *or_replace);
                flag(&mut m, "ifNotExists", *if_not_exists);
                self.put_settings(&mut m, settings);
            }
            AdminCommand::AlterUser { name, if_exists, settings } => {
                self.put(&mut m, "name", name);
                flag(&mut m, "ifExists", *if_exists);
                self.put_settings(&mut m, settings);
            }
            AdminCommand::AlterCurrentUser { old, new } => {
                self.put(&mut m, "old", old);
                self.put(&mut m, "new", new);
            }
            AdminCommand::RenameUser { from, to, if_exists } => {
                self.put(&mut m, "from", from);
                self.put(&mut m, "to", to);
                flag(&mut m, "ifExists", *if_exists);
            }
            AdminCommand::DropUser { name, if_exists } => {
                self.put(&mut m, "name", name);
                flag(&mut m, "ifExists", *if_exists);
            }
            AdminCommand::ShowUsers { .. }
            | AdminCommand::ShowTransactions { .. }
            | AdminCommand::TerminateTransactions { .. } => {}
        }
        m
    }

    fn put(&mut self, m: &mut Vec<(Arc<str>, PExpr)>, key: &str, a: &Argument) {
        m.push((Arc::from(key), self.argument(a)));
        if let Argument::Parameter(p) = a {
            m.push((Arc::from(format!("{key}Param")), PExpr::Const(Value::from(p.to_string()))));
        }
    }

    fn put_settings(&mut self, m: &mut Vec<(Arc<str>, PExpr)>, s: &UserSettings) {
        let flag = |m: &mut Vec<(Arc<str>, PExpr)>, k: &str, v: Option<bool>| {
            if let Some(v) = v {
                m.push((Arc::from(k), PExpr::Const(Value::Bool(v))));
            }
        };
        if let Some(p) = &s.password {
            self.put(m, "password", &p.value);
            flag(m, "encrypted", Some(p.encrypted));
        }
        flag(m, "changeRequired", s.change_required);
        flag(m, "suspended", s.suspended);
        match &s.home {
            Some(Some(db)) => self.put(m, "home", db),
            Some(None) => flag(m, "removeHome", Some(true)),
            None => {}
        }
    }
}
