//! User administration in Cypher (`CREATE USER`, `ALTER USER`, `ALTER CURRENT USER`,
//! `RENAME USER`, `DROP USER`, `SHOW USERS`, `SHOW CURRENT USER`, `CALL dbms.showCurrentUser()`)
//! over the shared [`UserStore`], with Neo4j 5.26's rules, messages and status codes.
//!
//! The commands run without the planner (like schema commands) and change the store at once, not
//! at commit: they are not transactional, as in Neo4j, where they run against the system graph.
//! Neo4j accepts them on any database, and so does Arbor. Who is logged in comes from the Bolt
//! layer ([`crate::Session::set_user`]); with authentication disabled there is no current user,
//! so `SHOW CURRENT USER` is empty and `ALTER CURRENT USER` fails, as in Neo4j.
//!
//! `CALL dbms.backup.users()` hands the store's file (hashes, never passwords) to `arbor backup`;
//! like every administration command here, any logged-in user may run it (Arbor has no roles).
//!
//! Differences from Neo4j Community: `SET STATUS` and `SET HOME DATABASE` are supported (Community
//! refuses them as Enterprise features), so `SHOW USERS` reports `suspended` and `home`.
//! `SET ENCRYPTED PASSWORD` accepts Arbor's own argon2id hashes only; Neo4j's SHA-256 format is
//! recognized and refused with a message saying so.

use std::collections::BTreeMap;

use arbor_auth::{User, UserStore};
use arbor_cypher_syntax::ast::{ShowCommand, ShowKind, Statement};
use arbor_cypher_syntax::ast_admin::{AdminCommand, Argument, PasswordSpec, UserSettings};
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::session::{CurrentUser, Database};

/// Neo4j's default `dbms.security.auth_minimum_password_length`.
const MIN_PASSWORD_CHARS: usize = 8;

/// The columns of `SHOW USERS` in Neo4j 5 Community, all shown by default.
const SHOW_USERS_COLUMNS: [&str; 5] =
    ["user", "roles", "passwordChangeRequired", "suspended", "home"];

type Rows = Vec<Vec<Value>>;

/// What an administration command produced.
pub(crate) struct AdminOutcome {
    pub fields: Vec<String>,
    pub rows: Rows,
    /// Changes to the store as Neo4j counts them (`system-updates`; replacing a user is two).
    pub updates: u64,
}

impl AdminOutcome {
    fn changed(changed: bool) -> AdminOutcome {
        AdminOutcome::updates(changed.into())
    }

    fn updates(updates: u64) -> AdminOutcome {
        AdminOutcome { fields: Vec::new(), rows: Vec::new(), updates }
    }
}

impl Database {
    /// Makes `store` the user store that Cypher administration commands manage (the Bolt server
    /// authenticates against the same store). Without this call a database has an empty
    /// in-memory store.
    pub fn attach_users(&self, store: UserStore) {
        *self.inner_users().write() = store;
    }

    /// The user store Cypher commands manage (a shared handle).
    pub fn users(&self) -> UserStore {
        self.inner_users().read().clone()
    }
}

fn argument_error(message: impl Into<String>) -> Error {
    Error::new(Status::ArgumentError, message)
}

fn store_failure(e: arbor_auth::StoreError) -> Error {
    Error::new(Status::Io, e.to_string())
}

/// The value of a name or secret: the literal, or the string parameter.
fn resolve(arg: &Argument, params: &PropertyMap, what: &str) -> Result<String> {
    match arg {
        Argument::Literal(s) => Ok(s.clone()),
        Argument::Parameter(p) => match params.get(p) {
            Some(Value::String(s)) => Ok(s.to_string()),
            Some(v) => Err(Error::type_error(format!(
                "Expected {what} parameter ${p} to have type String but was {}",
                v.type_name()
            ))),
            None => {
                Err(Error::new(Status::ParameterMissing, format!("Expected parameter(s): {p}")))
            }
        },
    }
}

/// Neo4j's user name rule: ASCII without `,`, `:` or whitespace.
fn check_user_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(argument_error("The provided username is empty."));
    }
    if name.chars().any(|c| !c.is_ascii() || c == ',' || c == ':' || c.is_ascii_whitespace()) {
        return Err(argument_error(format!(
            "Username '{name}' contains illegal characters.\nUse ascii characters that are not \
             ',', ':' or whitespaces."
        )));
    }
    Ok(())
}

fn check_password(password: &str) -> Result<()> {
    if password.is_empty() {
        return Err(argument_error("A password cannot be empty."));
    }
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(argument_error(format!(
            "A password must be at least {MIN_PASSWORD_CHARS} characters."
        )));
    }
    Ok(())
}

/// A new password hash from a `SET [PLAINTEXT | ENCRYPTED] PASSWORD` clause.
fn password_hash(spec: &PasswordSpec, params: &PropertyMap) -> Result<(String, Option<String>)> {
    let value = resolve(&spec.value, params, "password")?;
    if spec.encrypted {
        if arbor_auth::is_argon2_hash(&value) {
            return Ok((value, None));
        }
        let parts: Vec<&str> = value.split(',').collect();
        if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
            return Err(argument_error(
                "Incorrect format of encrypted password. Correct format is \
                 '<encryption-version>,<hash>,<salt>'.",
            ));
        }
        return Err(argument_error(
            "SET ENCRYPTED PASSWORD with a Neo4j SHA-256 hash ('<version>,<hash>,<salt>') is not \
             supported by Arbor, which stores argon2id hashes: use SET PASSWORD with the \
             plaintext password, or an Arbor argon2id hash ('$argon2id$...')",
        ));
    }
    check_password(&value)?;
    let hash = arbor_auth::hash_password(&value).map_err(Error::internal)?;
    Ok((hash, Some(value)))
}

/// Runs one administration command for `current` (None: authentication disabled).
pub(crate) fn run_admin(
    db: &Database,
    current: Option<&CurrentUser>,
    cmd: &AdminCommand,
    params: &PropertyMap,
) -> Result<AdminOutcome> {
    let store = db.users();
    let me = current.map(|c| c.name.as_str());
    match cmd {
        AdminCommand::CreateUser { name, or_replace, if_not_exists, settings } => {
            let name = resolve(name, params, "username")?;
            create_user(&store, me, &name, *or_replace, *if_not_exists, settings, params)
        }
        AdminCommand::AlterUser { name, if_exists, settings } => {
            let name = resolve(name, params, "username")?;
            alter_user(&store, me, &name, *if_exists, settings, params)
        }
        AdminCommand::AlterCurrentUser { old, new } => {
            let old = resolve(old, params, "password")?;
            let new = resolve(new, params, "password")?;
            alter_current_user(&store, me, &old, &new)
        }
        AdminCommand::RenameUser { from, to, if_exists } => {
            let from = resolve(from, params, "username")?;
            let to = resolve(to, params, "username")?;
            rename_user(&store, &from, &to, *if_exists)
        }
        AdminCommand::DropUser { name, if_exists } => {
            let name = resolve(name, params, "username")?;
            drop_user(&store, me, &name, *if_exists)
        }
        AdminCommand::ShowTransactions { .. } | AdminCommand::TerminateTransactions { .. } => {
            run_transaction_command(db, cmd, params)
        }
        AdminCommand::ShowUsers { current: only_me, yield_, where_, then } => {
            let rows: Rows = store
                .users()
                .into_iter()
                .filter(|(name, _)| !*only_me || Some(name.as_str()) == me)
                .map(|(name, u)| user_row(name, &u))
                .collect();
            let show = ShowCommand {
                kind: ShowKind::Databases,
                filter: None,
                names: None,
                yield_: yield_.clone(),
                where_: where_.clone(),
                then: then.clone(),
            };
            let (fields, rows) =
                if show.yield_.is_none() && show.where_.is_none() && show.then.is_empty() {
                    (SHOW_USERS_COLUMNS.iter().map(|c| c.to_string()).collect(), rows)
                } else {
                    let mut tx = db.store().begin(true);
                    let out =
                        crate::show::over_rows(&mut tx, &show, &SHOW_USERS_COLUMNS, rows, params);
                    tx.rollback();
                    out?
                };
            Ok(AdminOutcome { fields, rows, updates: 0 })
        }
    }
}

/// Runs `SHOW TRANSACTIONS` or `TERMINATE TRANSACTIONS` with its `YIELD`/`WHERE`/`RETURN` tail.
fn run_transaction_command(
    db: &Database,
    cmd: &AdminCommand,
    params: &PropertyMap,
) -> Result<AdminOutcome> {
    use arbor_cypher_syntax::ast::{ShowCommand, ShowKind};
    let (columns, rows) = crate::txinfo::run_command(db.transactions(), cmd, params)?;
    let (yield_, where_, then) = match cmd {
        AdminCommand::ShowTransactions { yield_, where_, then, .. }
        | AdminCommand::TerminateTransactions { yield_, where_, then, .. } => {
            (yield_, where_, then)
        }
        _ => return Err(Error::internal("not a transaction command")),
    };
    let (fields, rows) = if yield_.is_none() && where_.is_none() && then.is_empty() {
        (columns.iter().map(|c| c.to_string()).collect(), rows)
    } else {
        let show = ShowCommand {
            kind: ShowKind::Transactions,
            filter: None,
            names: None,
            yield_: yield_.clone(),
            where_: where_.clone(),
            then: then.clone(),
        };
        let mut tx = db.store().begin(true);
        let out = crate::show::over_rows(&mut tx, &show, &columns, rows, params);
        tx.rollback();
        out?
    };
    Ok(AdminOutcome { fields, rows, updates: 0 })
}

fn user_row(name: String, u: &User) -> Vec<Value> {
    vec![
        Value::from(name),
        Value::Null,
        Value::Bool(u.password_change_required),
        Value::Bool(u.suspended),
        u.home_database.clone().map(Value::from).unwrap_or(Value::Null),
    ]
}

/// Applies `change` to the store, mapping a failed write to an I/O error.
fn modify<R>(
    store: &UserStore,
    change: impl FnOnce(&mut BTreeMap<String, User>) -> Result<R>,
) -> Result<R> {
    store.modify(change).map_err(store_failure)?
}

/// Applies the optional settings to `user`; `prefix` starts every rule violation's message.
fn apply_settings(
    user: &mut User,
    settings: &UserSettings,
    params: &PropertyMap,
    new_hash: Option<(String, Option<String>)>,
    prefix: &str,
) -> Result<()> {
    if let Some((hash, plain)) = new_hash {
        if let Some(plain) = plain {
            if user.password_is(&plain) {
                return Err(argument_error(format!(
                    "{prefix}: Old password and new password cannot be the same."
                )));
            }
        }
        user.password_hash = hash;
    }
    if let Some(required) = settings.change_required {
        user.password_change_required = required;
    }
    if let Some(suspended) = settings.suspended {
        user.suspended = suspended;
    }
    if let Some(home) = &settings.home {
        user.home_database = match home {
            Some(db) => Some(resolve(db, params, "database name")?),
            None => None,
        };
    }
    Ok(())
}

fn create_user(
    store: &UserStore,
    me: Option<&str>,
    name: &str,
    or_replace: bool,
    if_not_exists: bool,
    settings: &UserSettings,
    params: &PropertyMap,
) -> Result<AdminOutcome> {
    check_user_name(name)?;
    let new_hash = match &settings.password {
        Some(spec) => password_hash(spec, params)?,
        None => return Err(Error::syntax("CREATE USER needs SET PASSWORD")),
    };
    let updates = modify(store, |users| {
        let replaced = users.contains_key(name);
        if replaced {
            if if_not_exists {
                return Ok(0);
            }
            if !or_replace {
                return Err(argument_error(format!(
                    "Failed to create the specified user '{name}': User already exists."
                )));
            }
            if me == Some(name) {
                return Err(argument_error(format!(
                    "Failed to replace the specified user '{name}': Deleting yourself is not \
                     allowed."
                )));
            }
        }
        let mut user = User {
            password_hash: String::new(),
            password_change_required: true,
            suspended: false,
            home_database: None,
        };
        // A new user: no old password to compare with.
        let hash_only = Some((new_hash.0.clone(), None));
        apply_settings(&mut user, settings, params, hash_only, "")?;
        users.insert(name.to_string(), user);
        // Neo4j counts a replacement as a drop and a create.
        Ok(if replaced { 2 } else { 1 })
    })?;
    Ok(AdminOutcome::updates(updates))
}

fn alter_user(
    store: &UserStore,
    me: Option<&str>,
    name: &str,
    if_exists: bool,
    settings: &UserSettings,
    params: &PropertyMap,
) -> Result<AdminOutcome> {
    let prefix = format!("Failed to alter the specified user '{name}'");
    if settings.suspended.is_some() && me == Some(name) {
        return Err(argument_error(format!(
            "{prefix}: Changing your own activation status is not allowed."
        )));
    }
    let new_hash =
        settings.password.as_ref().map(|spec| password_hash(spec, params)).transpose()?;
    let changed = modify(store, |users| {
        let Some(user) = users.get_mut(name) else {
            if if_exists {
                return Ok(false);
            }
            return Err(argument_error(format!("{prefix}: User does not exist.")));
        };
        apply_settings(user, settings, params, new_hash, &prefix)?;
        Ok(true)
    })?;
    Ok(AdminOutcome::changed(changed))
}

fn alter_current_user(
    store: &UserStore,
    me: Option<&str>,
    old: &str,
    new: &str,
) -> Result<AdminOutcome> {
    let Some(me) = me else {
        return Err(Error::new(
            Status::ExecutionFailed,
            "User failed to alter their own password: Command not available with auth disabled.",
        ));
    };
    check_password(new)?;
    let prefix = format!("User '{me}' failed to alter their own password");
    let hash = arbor_auth::hash_password(new).map_err(Error::internal)?;
    modify(store, |users| {
        let user = match users.get_mut(me) {
            Some(u) if u.password_is(old) => u,
            _ => {
                return Err(argument_error(format!("{prefix}: Invalid principal or credentials.")))
            }
        };
        if old == new {
            return Err(argument_error(format!(
                "{prefix}: Old password and new password cannot be the same."
            )));
        }
        user.password_hash = hash;
        user.password_change_required = false;
        Ok(())
    })?;
    Ok(AdminOutcome::changed(true))
}

fn rename_user(store: &UserStore, from: &str, to: &str, if_exists: bool) -> Result<AdminOutcome> {
    let prefix = format!("Failed to rename the specified user '{from}' to '{to}'");
    check_user_name(to)?;
    let changed = modify(store, |users| {
        let Some(user) = users.get(from).cloned() else {
            if if_exists {
                return Ok(false);
            }
            return Err(argument_error(format!("{prefix}: The user '{from}' does not exist.")));
        };
        if from != to {
            if users.contains_key(to) {
                return Err(argument_error(format!("{prefix}: User '{to}' already exists.")));
            }
            users.remove(from);
            users.insert(to.to_string(), user);
        }
        Ok(true)
    })?;
    Ok(AdminOutcome::changed(changed))
}

fn drop_user(
    store: &UserStore,
    me: Option<&str>,
    name: &str,
    if_exists: bool,
) -> Result<AdminOutcome> {
    let prefix = format!("Failed to delete the specified user '{name}'");
    if me == Some(name) {
        return Err(argument_error(format!("{prefix}: Deleting yourself is not allowed.")));
    }
    let changed = modify(store, |users| {
        if users.remove(name).is_some() {
            return Ok(true);
        }
        if if_exists {
            return Ok(false);
        }
        Err(argument_error(format!("{prefix}: User does not exist.")))
    })?;
    Ok(AdminOutcome::changed(changed))
}

/// Whether `stmt` is exactly `CALL dbms.showCurrentUser()` (answered by the session, which knows
/// the user; with authentication disabled Neo4j does not register the procedure).
pub(crate) fn is_show_current_user_call(stmt: &Statement) -> bool {
    use arbor_cypher_syntax::ast::ClauseKind;
    let Statement::Query(q) = stmt else {
        return false;
    };
    if !q.unions.is_empty() || q.first.clauses.len() != 1 {
        return false;
    }
    match &q.first.clauses[0].kind {
        ClauseKind::CallProcedure { name, args, yield_: None, .. } => {
            let parts: Vec<&str> = name.parts.iter().map(|p| &*p.name).collect();
            parts.len() == 2
                && parts[0].eq_ignore_ascii_case("dbms")
                && parts[1] == "showCurrentUser"
                && args.as_ref().is_none_or(|a| a.is_empty())
        }
        _ => false,
    }
}

/// `CALL dbms.showCurrentUser()`: `username`, `roles` (null in Community), `flags`.
pub(crate) fn show_current_user_call(current: Option<&CurrentUser>) -> Result<AdminOutcome> {
    let Some(me) = current else {
        return Err(Error::new(
            Status::ProcedureNotFound,
            "There is no procedure with the name `dbms.showCurrentUser` registered for this \
             database instance. Please ensure you've spelled the procedure name correctly and \
             that the procedure is properly deployed.",
        ));
    };
    let mut flags = Vec::new();
    if me.password_change_required {
        flags.push(Value::str("password_change_required"));
    }
    Ok(AdminOutcome {
        fields: vec!["username".into(), "roles".into(), "flags".into()],
        rows: vec![vec![Value::from(me.name.clone()), Value::Null, Value::List(flags)]],
        updates: 0,
    })
}

/// The error for anything but `ALTER CURRENT USER` from a user who must change the password.
pub(crate) fn credentials_expired(database: &str) -> Error {
    let head = if database.eq_ignore_ascii_case("system") {
        "Permission denied.".to_string()
    } else {
        format!("ACCESS on database '{database}' is not allowed.")
    };
    Error::new(
        Status::CredentialsExpired,
        format!(
            "{head}\n\nThe credentials you provided were valid, but must be changed before you \
             can use this instance. If this is the first time you are using Neo4j, this is to \
             ensure you are not using the default credentials in production. If you are not \
             using default credentials, you are getting this message because an administrator \
             requires a password change.\nTo change your password, issue an `ALTER CURRENT USER \
             SET PASSWORD FROM 'current password' TO 'new password'` statement against the \
             system database."
        ),
    )
}

/// Refuses everything but `ALTER CURRENT USER` to a user who must change the password.
pub(crate) fn check_access(
    current: Option<&CurrentUser>,
    prepared: &crate::session::Prepared,
    config: &crate::session::TxConfig,
) -> Result<()> {
    use crate::session::Prepared;
    if current.is_some_and(|u| u.password_change_required)
        && !matches!(prepared, Prepared::Admin(AdminCommand::AlterCurrentUser { .. }))
    {
        return Err(credentials_expired(config.database.as_deref().unwrap_or("neo4j")));
    }
    Ok(())
}

/// Runs a prepared administration command or `CALL dbms.showCurrentUser()`.
pub(crate) fn run_prepared(
    db: &Database,
    current: Option<&CurrentUser>,
    prepared: &crate::session::Prepared,
    params: &PropertyMap,
) -> Result<AdminOutcome> {
    use crate::session::Prepared;
    match prepared {
        Prepared::Admin(cmd) => run_admin(db, current, cmd, params),
        Prepared::ShowCurrentUserCall => show_current_user_call(current),
        _ => Err(Error::internal("not an administration command")),
    }
}

/// `dbms.backup.users()`: the user store's file text for `arbor backup` (`null` when the
/// database has no user store on disk, e.g. in memory).
pub(crate) fn backup_users_proc(db: &Database) -> arbor_exec::procs::Procedure {
    let weak = db.downgrade();
    arbor_exec::procs::Procedure::new(
        "dbms.backup.users",
        vec![],
        vec![("file".into(), arbor_cypher_plan::CypherType::String)],
        "The user store (auth.toml: user names and argon2id hashes) for `arbor backup`.",
        move |_, _| {
            let db = Database::upgrade(&weak)
                .ok_or_else(|| Error::new(Status::ProcedureCallFailed, "the database is closed"))?;
            let store = db.users();
            if store.path().is_none() {
                return Ok(vec![vec![Value::Null]]);
            }
            let text = store.export().map_err(store_failure)?;
            Ok(vec![vec![Value::from(text)]])
        },
    )
}
