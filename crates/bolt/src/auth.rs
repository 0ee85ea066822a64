//! The user store for Bolt `basic` authentication: user names with argon2id password hashes, kept
//! in a small TOML file in the data directory.
//!
//! ```toml
//! [users.neo4j]
//! password_hash = "$argon2id$v=19$m=19456,t=2,p=1$..."
//! ```
//!
//! Passwords are never stored or logged. Writes go to a temporary file that is renamed into place,
//! so a crash leaves either the old or the new file. Verification of an unknown user still runs
//! one argon2 verification, so response time does not reveal which user names exist.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::BoltError;

#[derive(Serialize, Deserialize, Default)]
struct AuthFile {
    #[serde(default)]
    users: BTreeMap<String, UserEntry>,
}

#[derive(Serialize, Deserialize, Clone)]
struct UserEntry {
    password_hash: String,
}

/// Users and their argon2id password hashes. Cheap to clone; clones share the same users.
#[derive(Clone)]
pub struct AuthStore {
    path: PathBuf,
    users: Arc<RwLock<BTreeMap<String, String>>>,
}

impl fmt::Debug for AuthStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print hashes.
        f.debug_struct("AuthStore")
            .field("path", &self.path)
            .field("users", &self.users.read().len())
            .finish()
    }
}

fn store_error(path: &Path, message: impl Into<String>) -> BoltError {
    BoltError::AuthStore { path: path.to_path_buf(), message: message.into() }
}

impl AuthStore {
    /// Opens the store at `path`; a missing file is an empty store (created on the first
    /// `set_password`).
    pub fn open(path: &Path) -> Result<AuthStore, BoltError> {
        let users = match std::fs::read_to_string(path) {
            Ok(text) => {
                let file: AuthFile =
                    toml::from_str(&text).map_err(|e| store_error(path, e.to_string()))?;
                let mut users = BTreeMap::new();
                for (name, entry) in file.users {
                    PasswordHash::new(&entry.password_hash).map_err(|e| {
                        store_error(
                            path,
                            format!("user '{name}' has an invalid password hash: {e}"),
                        )
                    })?;
                    users.insert(name, entry.password_hash);
                }
                users
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(store_error(path, e.to_string())),
        };
        Ok(AuthStore { path: path.to_path_buf(), users: Arc::new(RwLock::new(users)) })
    }

    pub fn is_empty(&self) -> bool {
        self.users.read().is_empty()
    }

    /// Sets (or creates) a user's password and writes the store to disk.
    pub fn set_password(&mut self, user: &str, password: &str) -> Result<(), BoltError> {
        if user.is_empty() || user.chars().any(char::is_control) {
            return Err(store_error(
                &self.path,
                "user names must be non-empty, without control characters",
            ));
        }
        if password.is_empty() {
            return Err(store_error(&self.path, "passwords must not be empty"));
        }
        let hash = hash_password(password).map_err(|e| store_error(&self.path, e))?;
        let mut users = self.users.write();
        let previous = users.insert(user.to_string(), hash);
        if let Err(e) = self.persist(&users) {
            // Keep memory and disk in agreement.
            match previous {
                Some(p) => users.insert(user.to_string(), p),
                None => users.remove(user),
            };
            return Err(e);
        }
        Ok(())
    }

    /// Checks a user's password.
    pub fn verify(&self, user: &str, password: &str) -> bool {
        let stored = self.users.read().get(user).cloned();
        match stored {
            Some(hash) => verify_hash(&hash, password),
            None => {
                // Spend the same time as for a real user, then fail.
                let _ = verify_hash(dummy_hash(), password);
                false
            }
        }
    }

    fn persist(&self, users: &BTreeMap<String, String>) -> Result<(), BoltError> {
        let file = AuthFile {
            users: users
                .iter()
                .map(|(k, v)| (k.clone(), UserEntry { password_hash: v.clone() }))
                .collect(),
        };
        let body = toml::to_string(&file).map_err(|e| store_error(&self.path, e.to_string()))?;
        let text = format!(
            "# Arbor users for Bolt basic auth (argon2id). Manage with `arbor passwd`.\n{body}"
        );
        let tmp = self.path.with_extension("toml.tmp");
        let write = || -> std::io::Result<()> {
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
            std::fs::rename(&tmp, &self.path)?;
            if let Some(dir) = self.path.parent() {
                // Make the rename durable; not all platforms can open a directory.
                if let Ok(d) = std::fs::File::open(if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                }) {
                    let _ = d.sync_all();
                }
            }
            Ok(())
        };
        write().map_err(|e| store_error(&self.path, e.to_string()))
    }
}

fn hash_password(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("hashing the password failed: {e}"))
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
        let mut store = AuthStore::open(&path).unwrap();
        assert!(store.is_empty());
        store.set_password("neo4j", "s3cret!").unwrap();
        assert!(!store.is_empty());
        assert!(store.verify("neo4j", "s3cret!"));
        assert!(!store.verify("neo4j", "wrong"));
        assert!(!store.verify("nobody", "s3cret!"));

        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("$argon2id$"), "{text}");
        assert!(!text.contains("s3cret!"));

        let reopened = AuthStore::open(&path).unwrap();
        assert!(reopened.verify("neo4j", "s3cret!"));
        let mut reopened = reopened;
        reopened.set_password("neo4j", "other").unwrap();
        assert!(AuthStore::open(&path).unwrap().verify("neo4j", "other"));
        assert!(!format!("{reopened:?}").contains("argon2"));
    }

    #[test]
    fn bad_input_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.toml");
        let mut store = AuthStore::open(&path).unwrap();
        assert!(store.set_password("", "x").is_err());
        assert!(store.set_password("a\nb", "x").is_err());
        assert!(store.set_password("a", "").is_err());
        std::fs::write(&path, "[users.x]\npassword_hash = \"plaintext\"\n").unwrap();
        assert!(AuthStore::open(&path).is_err());
        std::fs::write(&path, "not toml [").unwrap();
        assert!(AuthStore::open(&path).is_err());
    }
}
