//! The user store: user names with argon2id password hashes and account flags, kept in a small
//! TOML file in the data directory (`DIR/auth.toml`).
//!
//! ```toml
//! [users.neo4j]
//! password_hash = "$argon2id$v=19$m=19456,t=2,p=1$..."
//! password_change_required = true   # omitted when false
//! suspended = true                  # omitted when false
//! home_database = "neo4j"           # omitted when unset
//! ```
//!
//! Both the Bolt server (authentication) and the engine (Cypher user administration such as
//! `CREATE USER`) use one shared [`UserStore`]; a change is visible to the next login at once.
//! This crate knows hashing and the file format only: the rules of the Cypher commands (name and
//! password policy, error codes) live in the engine.
//!
//! Passwords are never stored or logged. Writes go to a temporary file that is renamed into place,
//! so a crash leaves either the old or the new file, and memory changes only after the file did.
//! Verification of an unknown user still runs one argon2 verification, so response time does not
//! reveal which user names exist.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

/// A failure to read, parse or write the user store, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("user store {}: {message}", path.display())]
pub struct StoreError {
    pub path: PathBuf,
    pub message: String,
}

#[derive(Serialize, Deserialize, Default)]
struct AuthFile {
    #[serde(default)]
    users: BTreeMap<String, User>,
}

/// One user as stored.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// The argon2id PHC string (`$argon2id$...`); never the password.
    pub password_hash: String,
    /// The user may log in but must change the password before running anything else.
    #[serde(default, skip_serializing_if = "is_false")]
    pub password_change_required: bool,
    /// The user cannot log in.
    #[serde(default, skip_serializing_if = "is_false")]
    pub suspended: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home_database: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl User {
    /// A new active user with `password` (hashed here).
    pub fn with_password(password: &str) -> Result<User, String> {
        Ok(User {
            password_hash: hash_password(password)?,
            password_change_required: false,
            suspended: false,
            home_database: None,
        })
    }

    /// Whether `password` is this user's password.
    pub fn password_is(&self, password: &str) -> bool {
        verify_hash(&self.password_hash, password)
    }
}

/// What a login attempt found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Login {
    /// Name and password match; `password_change_required` restricts what the session may run.
    Accepted { password_change_required: bool },
    /// Unknown user, wrong password, or a suspended user (indistinguishable to the client).
    Rejected,
}

/// Users, their argon2id password hashes and flags. Cheap to clone; clones share the same users.
#[derive(Clone)]
pub struct UserStore {
    /// `None`: an in-memory store (tests, embedded databases without a directory).
    path: Option<PathBuf>,
    users: Arc<RwLock<BTreeMap<String, User>>>,
}

impl fmt::Debug for UserStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print hashes.
        f.debug_struct("UserStore")
            .field("path", &self.path)
            .field("users", &self.users.read().len())
            .finish()
    }
}

fn store_error(path: &Path, message: impl Into<String>) -> StoreError {
    StoreError { path: path.to_path_buf(), message: message.into() }
}

impl UserStore {
    /// Opens the store at `path`; a missing file is an empty store (created on the first change).
    pub fn open(path: &Path) -> Result<UserStore, StoreError> {
        let users = match std::fs::read_to_string(path) {
            Ok(text) => {
                let file: AuthFile =
                    toml::from_str(&text).map_err(|e| store_error(path, e.to_string()))?;
                for (name, user) in &file.users {
                    PasswordHash::new(&user.password_hash).map_err(|e| {
                        store_error(
                            path,
                            format!("user '{name}' has an invalid password hash: {e}"),
                        )
                    })?;
                }
                file.users
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(store_error(path, e.to_string())),
        };
        Ok(UserStore { path: Some(path.to_path_buf()), users: Arc::new(RwLock::new(users)) })
    }

    /// An empty store that lives in memory only.
    pub fn in_memory() -> UserStore {
        UserStore { path: None, users: Arc::default() }
    }

    /// The file behind this store (`None` for an in-memory store).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn is_empty(&self) -> bool {
        self.users.read().is_empty()
    }

    /// Sets (or creates) a user's password, clearing "change required", and writes the store to
    /// disk (`arbor passwd`, the initial password).
    pub fn set_password(&mut self, user: &str, password: &str) -> Result<(), StoreError> {
        if user.is_empty() || user.chars().any(char::is_control) {
            return Err(self.error("user names must be non-empty, without control characters"));
        }
        if password.is_empty() {
            return Err(self.error("passwords must not be empty"));
        }
        let hash = hash_password(password).map_err(|e| self.error(e))?;
        self.modify(|users| {
            let entry = users.entry(user.to_string()).or_insert_with(|| User {
                password_hash: String::new(),
                password_change_required: false,
                suspended: false,
                home_database: None,
            });
            entry.password_hash = hash;
            entry.password_change_required = false;
            Ok::<_, StoreError>(())
        })?
    }

    /// Checks a user's password (true also for a suspended user or one who must change it).
    pub fn verify(&self, user: &str, password: &str) -> bool {
        let stored = self.users.read().get(user).map(|u| u.password_hash.clone());
        match stored {
            Some(hash) => verify_hash(&hash, password),
            None => {
                // Spend the same time as for a real user, then fail.
                let _ = verify_hash(dummy_hash(), password);
                false
            }
        }
    }

    /// A login attempt: the password must match and the user must not be suspended.
    pub fn login(&self, user: &str, password: &str) -> Login {
        let stored = self.get(user);
        if !self.verify(user, password) {
            return Login::Rejected;
        }
        match stored {
            Some(u) if !u.suspended => {
                Login::Accepted { password_change_required: u.password_change_required }
            }
            _ => Login::Rejected,
        }
    }

    /// One user, as stored now.
    pub fn get(&self, user: &str) -> Option<User> {
        self.users.read().get(user).cloned()
    }

    /// All users in name order.
    pub fn users(&self) -> Vec<(String, User)> {
        self.users.read().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Applies `change` to a copy of the users and, unless it fails, writes the result to disk and
    /// makes it current. Changes are serialized; a failed write changes nothing. The outer error is
    /// the write's, the inner one `change`'s.
    pub fn modify<R, E>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, User>) -> Result<R, E>,
    ) -> Result<Result<R, E>, StoreError> {
        let mut users = self.users.write();
        let mut next = users.clone();
        let out = match change(&mut next) {
            Ok(r) => r,
            Err(e) => return Ok(Err(e)),
        };
        if next != *users {
            self.persist(&next)?;
            *users = next;
        }
        Ok(Ok(out))
    }

    fn error(&self, message: impl Into<String>) -> StoreError {
        store_error(self.path.as_deref().unwrap_or(Path::new("(in memory)")), message)
    }

    /// The store as its file holds it (hashes, never passwords), for backups: `arbor backup`
    /// writes this as `auth.toml`, and [`UserStore::open`] reads it back.
    pub fn export(&self) -> Result<String, StoreError> {
        file_text(&self.users.read()).map_err(|e| self.error(e))
    }

    fn persist(&self, users: &BTreeMap<String, User>) -> Result<(), StoreError> {
        let Some(path) = self.path.as_deref() else {
            return Ok(());
        };
        let text = file_text(users).map_err(|e| store_error(path, e))?;
        write_atomically(path, &text).map_err(|e| store_error(path, e.to_string()))
    }
}

/// The file's text for `users`.
fn file_text(users: &BTreeMap<String, User>) -> Result<String, String> {
    let file = AuthFile { users: users.clone() };
    let body = toml::to_string(&file).map_err(|e| e.to_string())?;
    Ok(format!(
        "# Arbor users for Bolt basic auth (argon2id). Manage with `arbor passwd` or Cypher \
         (CREATE USER ...) on the system database.\n{body}"
    ))
}

/// Writes `text` to a temporary file beside `path` (mode 0600), syncs it and renames it into place.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("toml.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        // Make the rename durable; not all platforms can open a directory.
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// Hashes a password with argon2id and a fresh random salt (PHC string).
pub fn hash_password(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("hashing the password failed: {e}"))
}

/// Whether `hash` is an argon2 PHC string this store can verify against (`SET ENCRYPTED PASSWORD`).
pub fn is_argon2_hash(hash: &str) -> bool {
    hash.starts_with("$argon2") && PasswordHash::new(hash).is_ok()
}

fn verify_hash(hash: &str, password: &str) -> bool {
    match PasswordHash::new(hash) {
        Ok(parsed) => Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    }
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| hash_password("arbor-dummy-password").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_persist_hashed_and_verify() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        let mut store = UserStore::open(&path).unwrap();
        assert!(store.is_empty());
        store.set_password("neo4j", "s3cret!").unwrap();
        assert!(!store.is_empty());
        assert!(store.verify("neo4j", "s3cret!"));
        assert!(!store.verify("neo4j", "wrong"));
        assert!(!store.verify("nobody", "s3cret!"));

        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("$argon2id$"), "{text}");
        assert!(!text.contains("s3cret!"));

        let reopened = UserStore::open(&path).unwrap();
        assert!(reopened.verify("neo4j", "s3cret!"));
        let mut reopened = reopened;
        reopened.set_password("neo4j", "other").unwrap();
        assert!(UserStore::open(&path).unwrap().verify("neo4j", "other"));
        assert!(!format!("{reopened:?}").contains("argon2"));
    }

    #[test]
    fn an_exported_store_reopens_with_the_same_users() {
        let mut store = UserStore::in_memory();
        store.set_password("alice", "wonderland").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        std::fs::write(&path, store.export().unwrap()).unwrap();
        let back = UserStore::open(&path).unwrap();
        assert!(back.verify("alice", "wonderland"));
        assert!(!back.verify("alice", "other"));
        assert_eq!(back.users().len(), 1);
    }

    #[test]
    fn bad_input_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        let mut store = UserStore::open(&path).unwrap();
        assert!(store.set_password("", "x").is_err());
        assert!(store.set_password("a\nb", "x").is_err());
        assert!(store.set_password("a", "").is_err());
        std::fs::write(&path, "[users.x]\npassword_hash = \"plaintext\"\n").unwrap();
        assert!(UserStore::open(&path).is_err());
        std::fs::write(&path, "not toml [").unwrap();
        assert!(UserStore::open(&path).is_err());
    }

    #[test]
    fn flags_persist_and_govern_login() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        let store = UserStore::open(&path).unwrap();
        store
            .modify(|users| {
                let mut u = User::with_password("pw-one-1")?;
                u.password_change_required = true;
                users.insert("a".into(), u);
                let mut s = User::with_password("pw-two-2")?;
                s.suspended = true;
                s.home_database = Some("neo4j".into());
                users.insert("s".into(), s);
                Ok::<_, String>(())
            })
            .unwrap()
            .unwrap();
        let reopened = UserStore::open(&path).unwrap();
        assert_eq!(
            reopened.login("a", "pw-one-1"),
            Login::Accepted { password_change_required: true }
        );
        assert_eq!(reopened.login("a", "wrong"), Login::Rejected);
        assert_eq!(reopened.login("s", "pw-two-2"), Login::Rejected);
        assert_eq!(reopened.get("s").unwrap().home_database.as_deref(), Some("neo4j"));
        // A failing change leaves memory and disk alone.
        let before = std::fs::read_to_string(&path).unwrap();
        let failed = reopened.modify(|users| {
            users.clear();
            Err::<(), _>("no")
        });
        assert_eq!(failed.unwrap(), Err("no"));
        assert_eq!(reopened.users().len(), 2);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }

    #[test]
    fn in_memory_store_writes_nothing() {
        let mut store = UserStore::in_memory();
        store.set_password("x", "y").unwrap();
        assert!(store.verify("x", "y"));
        assert!(store.path().is_none());
    }
}
