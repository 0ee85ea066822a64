//! User administration in Cypher (`CREATE USER`, `ALTER USER`, `ALTER CURRENT USER`,
//! `RENAME USER`, `DROP USER`, `SHOW USERS`, `SHOW CURRENT USER`, `CALL dbms.showCurrentUser()`)
//! over the shared [`UserStore`], with Neo4j 5.26's rules, messages and status codes.
//!
//! The planner turns each command into a call of an internal procedure (`admin.rs` in
//! cypher-plan; [`procedures`] here): `SHOW USERS` and `SHOW CURRENT USER` produce Neo4j's
//! columns and their `YIELD`/`WHERE`/`RETURN` tail is planned as in any query; the commands
//! that change users are void procedures taking a map that describes the command. They change
//! the store when the statement runs (at its first `PULL`), not at commit: they are not
//! transactional, as in Neo4j, where they run against the system graph. They count
//! `system-updates` and read the logged-in user through the session's published state
//! (`txinfo::add_system_updates`, `txinfo::current_user`).
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
use arbor_cypher_plan::CypherType;
use arbor_exec::graph::Graph;
use arbor_exec::procs::Procedure;
use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::session::{CurrentUser, Database};

/// Neo4j's default `dbms.security.auth_minimum_password_length`.
const MIN_PASSWORD_CHARS: usize = 8;

/// The columns of `SHOW USERS` in Neo4j 5 Community, all shown by default.
const SHOW_USERS_COLUMNS: [&str; 5] =
    ["user", "roles", "passwordChangeRequired", "suspended", "home"];

type Rows = Vec<Vec<Value>>;

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

/// The value of the name or secret `key` of a command's map (`admin.rs` in cypher-plan): the
/// literal, or the string parameter (`{key}Param` names it).
fn text(cmd: &PropertyMap, key: &str, what: &str) -> Result<String> {
    let value = cmd.get(key).unwrap_or(&Value::Null);
    if let Some(Value::String(p)) = cmd.get(format!("{key}Param").as_str()) {
        return match value {
            Value::String(s) => Ok(s.to_string()),
            v => Err(Error::type_error(format!(
                "Expected {what} parameter ${p} to have type String but was {}",
                v.type_name()
            ))),
        };
    }
    match value {
        Value::String(s) => Ok(s.to_string()),
        _ => Err(Error::internal(format!("administration command without `{key}`"))),
    }
}

/// A flag of a command's map; absent when the command leaves the setting alone.
fn flag(cmd: &PropertyMap, key: &str) -> Option<bool> {
    match cmd.get(key) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

/// The settings of `CREATE USER` / `ALTER USER`, from the command's map.
struct Settings {
    /// `SET [PLAINTEXT | ENCRYPTED] PASSWORD`: the value and whether it is `ENCRYPTED`.
    password: Option<(String, bool)>,
    change_required: Option<bool>,
    suspended: Option<bool>,
    /// `SET HOME DATABASE db` (`Some(Some)`) or `REMOVE HOME DATABASE` (`Some(None)`).
    home: Option<Option<String>>,
}

impl Settings {
    fn of(cmd: &PropertyMap) -> Result<Settings> {
        let password = if cmd.contains_key("password") || cmd.contains_key("passwordParam") {
            Some((text(cmd, "password", "password")?, flag(cmd, "encrypted") == Some(true)))
        } else {
            None
        };
        let home = if cmd.contains_key("home") || cmd.contains_key("homeParam") {
            Some(Some(text(cmd, "home", "database name")?))
        } else if flag(cmd, "removeHome") == Some(true) {
            Some(None)
        } else {
            None
        };
        Ok(Settings {
            password,
            change_required: flag(cmd, "changeRequired"),
            suspended: flag(cmd, "suspended"),
            home,
        })
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
fn password_hash(value: &str, encrypted: bool) -> Result<(String, Option<String>)> {
    let value = value.to_string();
    if encrypted {
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

/// The internal procedures the user administration commands are planned as (`admin.rs` in
/// cypher-plan): `SHOW USERS` and `SHOW CURRENT USER` with the inputs of every `SHOW`
/// procedure and Neo4j's columns, the others void with the command's map.
pub(crate) fn procedures(db: &Database) -> Vec<Procedure> {
    let mut out = Vec::new();
    for current_only in [false, true] {
        let weak = db.downgrade();
        let name = if current_only { "SHOW CURRENT USER" } else { "SHOW USERS" };
        let inputs =
            vec![("filter".to_string(), CypherType::Any), ("names".to_string(), CypherType::Any)];
        let outputs = SHOW_USERS_COLUMNS.iter().map(|c| (c.to_string(), CypherType::Any)).collect();
        out.push(Procedure::new(
            name,
            inputs,
            outputs,
            &format!("The rows of `{name}`."),
            move |_: &[Value], _: &mut dyn Graph| {
                let db = Database::upgrade(&weak).ok_or_else(closed)?;
                let me = crate::txinfo::current_user();
                let rows: Rows = db
                    .users()
                    .users()
                    .into_iter()
                    .filter(|(name, _)| !current_only || Some(name) == me.as_ref().map(|m| &m.name))
                    .map(|(name, u)| user_row(name, &u))
                    .collect();
                Ok(rows)
            },
        ));
    }
    type Change = fn(&UserStore, Option<&str>, &PropertyMap) -> Result<u64>;
    let changes: [(&str, Change); 5] = [
        ("CREATE USER", create_user),
        ("ALTER USER", alter_user),
        ("ALTER CURRENT USER", alter_current_user),
        ("RENAME USER", rename_user),
        ("DROP USER", drop_user),
    ];
    for (name, change) in changes {
        let weak = db.downgrade();
        out.push(Procedure::new(
            name,
            vec![("command".to_string(), CypherType::Map)],
            Vec::new(),
            &format!("Runs `{name}`."),
            move |args: &[Value], _: &mut dyn Graph| {
                let db = Database::upgrade(&weak).ok_or_else(closed)?;
                let Some(Value::Map(cmd)) = args.first() else {
                    return Err(Error::internal(format!("`{name}` without its command")));
                };
                let me = crate::txinfo::current_user();
                let updates = change(&db.users(), me.as_ref().map(|m| m.name.as_str()), cmd)?;
                crate::txinfo::add_system_updates(updates);
                Ok(Vec::new())
            },
        ));
    }
    out
}

fn closed() -> Error {
    Error::new(Status::TransactionTerminated, "the database is shut down")
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
    settings: &Settings,
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
        user.home_database = home.clone();
    }
    Ok(())
}

/// `CREATE [OR REPLACE] USER name [IF NOT EXISTS] SET PASSWORD ...`; returns the updates.
fn create_user(store: &UserStore, me: Option<&str>, cmd: &PropertyMap) -> Result<u64> {
    let name = text(cmd, "name", "username")?;
    let name = name.as_str();
    let (or_replace, if_not_exists) =
        (flag(cmd, "orReplace") == Some(true), flag(cmd, "ifNotExists") == Some(true));
    check_user_name(name)?;
    let settings = Settings::of(cmd)?;
    let new_hash = match &settings.password {
        Some((value, encrypted)) => password_hash(value, *encrypted)?,
        None => return Err(Error::syntax("CREATE USER needs SET PASSWORD")),
    };
    modify(store, |users| {
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
        apply_settings(&mut user, &settings, hash_only, "")?;
        users.insert(name.to_string(), user);
        // Neo4j counts a replacement as a drop and a create.
        Ok(if replaced { 2 } else { 1 })
    })
}

/// `ALTER USER name [IF EXISTS] SET ...`; returns the updates.
fn alter_user(store: &UserStore, me: Option<&str>, cmd: &PropertyMap) -> Result<u64> {
    let name = text(cmd, "name", "username")?;
    let name = name.as_str();
    let if_exists = flag(cmd, "ifExists") == Some(true);
    let settings = Settings::of(cmd)?;
    let prefix = format!("Failed to alter the specified user '{name}'");
    if settings.suspended.is_some() && me == Some(name) {
        return Err(argument_error(format!(
            "{prefix}: Changing your own activation status is not allowed."
        )));
    }
    let new_hash = settings
        .password
        .as_ref()
        .map(|(v, encrypted)| password_hash(v, *encrypted))
        .transpose()?;
    let changed = modify(store, |users| {
        let Some(user) = users.get_mut(name) else {
            if if_exists {
                return Ok(false);
            }
            return Err(argument_error(format!("{prefix}: User does not exist.")));
        };
        apply_settings(user, &settings, new_hash, &prefix)?;
        Ok(true)
    })?;
    Ok(changed.into())
}

/// `ALTER CURRENT USER SET PASSWORD FROM old TO new`; returns the updates.
fn alter_current_user(store: &UserStore, me: Option<&str>, cmd: &PropertyMap) -> Result<u64> {
    let old = text(cmd, "old", "password")?;
    let new = text(cmd, "new", "password")?;
    let (old, new) = (old.as_str(), new.as_str());
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
    Ok(1)
}

/// `RENAME USER from [IF EXISTS] TO to`; returns the updates.
fn rename_user(store: &UserStore, _me: Option<&str>, cmd: &PropertyMap) -> Result<u64> {
    let from = text(cmd, "from", "username")?;
    let to = text(cmd, "to", "username")?;
    let (from, to) = (from.as_str(), to.as_str());
    let if_exists = flag(cmd, "ifExists") == Some(true);
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
    Ok(changed.into())
}

/// `DROP USER name [IF EXISTS]`; returns the updates.
fn drop_user(store: &UserStore, me: Option<&str>, cmd: &PropertyMap) -> Result<u64> {
    let name = text(cmd, "name", "username")?;
    let name = name.as_str();
    let if_exists = flag(cmd, "ifExists") == Some(true);
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
    Ok(changed.into())
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
    let changes_password = matches!(
        prepared,
        Prepared::Query(q, _) if q.admin_command() == Some("ALTER CURRENT USER")
    );
    if current.is_some_and(|u| u.password_change_required) && !changes_password {
        return Err(credentials_expired(config.database.as_deref().unwrap_or("neo4j")));
    }
    Ok(())
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
