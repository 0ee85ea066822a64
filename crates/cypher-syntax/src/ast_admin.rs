//! AST of user administration commands (`CREATE USER`, `ALTER USER`, `ALTER CURRENT USER`,
//! `RENAME USER`, `DROP USER`, `SHOW USERS`, `SHOW CURRENT USER`) and transaction management
//! (`SHOW TRANSACTIONS`, `TERMINATE TRANSACTIONS`), as Neo4j 5 spells them.
//!
//! Only the syntax lives here: the engine checks the rules (password length, name characters,
//! existing users) and runs the commands against its user store without the planner.

use std::sync::Arc;

use crate::ast::{Clause, Expr, YieldSpec};

/// A name or secret given literally or as a `$parameter`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Argument {
    Literal(String),
    Parameter(Arc<str>),
}

/// `SET [PLAINTEXT | ENCRYPTED] PASSWORD 'pw' | $param`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswordSpec {
    /// `ENCRYPTED`: the value is a hash (`<version>,<hash>,<salt>[,<iterations>]`).
    pub encrypted: bool,
    pub value: Argument,
}

/// Settings shared by `CREATE USER` and `ALTER USER`; `None` leaves a setting alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserSettings {
    pub password: Option<PasswordSpec>,
    /// `CHANGE [NOT] REQUIRED`.
    pub change_required: Option<bool>,
    /// `SET STATUS SUSPENDED` (true) or `ACTIVE` (false).
    pub suspended: Option<bool>,
    /// `SET HOME DATABASE db` (`Some(Some)`) or `REMOVE HOME DATABASE` (`Some(None)`).
    pub home: Option<Option<Argument>>,
}

/// A user administration command.
#[derive(Clone, Debug, PartialEq)]
pub enum AdminCommand {
    CreateUser {
        name: Argument,
        or_replace: bool,
        if_not_exists: bool,
        settings: UserSettings,
    },
    AlterUser {
        name: Argument,
        if_exists: bool,
        settings: UserSettings,
    },
    /// `ALTER CURRENT USER SET PASSWORD FROM old TO new`.
    AlterCurrentUser {
        old: Argument,
        new: Argument,
    },
    RenameUser {
        from: Argument,
        to: Argument,
        if_exists: bool,
    },
    DropUser {
        name: Argument,
        if_exists: bool,
    },
    /// `SHOW USERS` / `SHOW CURRENT USER` with the usual `YIELD`/`WHERE`/`RETURN` tail.
    ShowUsers {
        current: bool,
        yield_: Option<YieldSpec>,
        where_: Option<Expr>,
        then: Vec<Clause>,
    },
    /// `SHOW TRANSACTION[S] [id, ...]` with the usual `YIELD`/`WHERE`/`RETURN` tail; ids are
    /// strings or parameters (a parameter may hold a list of ids).
    ShowTransactions {
        ids: Vec<Argument>,
        yield_: Option<YieldSpec>,
        where_: Option<Expr>,
        then: Vec<Clause>,
    },
    /// `TERMINATE TRANSACTION[S] id, ... [YIELD ...]`.
    TerminateTransactions {
        ids: Vec<Argument>,
        yield_: Option<YieldSpec>,
        where_: Option<Expr>,
        then: Vec<Clause>,
    },
}
