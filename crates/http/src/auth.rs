//! Basic authentication for the Query API, against the user store and login limiter the Bolt
//! server uses (so a user locked over Bolt is locked over HTTP too, and a wrong password here
//! counts there).
//!
//! Each request carries its credentials (`Authorization: Basic ...`). Hashing argon2id per
//! request would cost ~20 ms and ~19 MiB each, so a verified `(user, password)` is remembered
//! for [`CACHE_TTL`] as a SHA-256 of both (never the password itself), like Neo4j's auth cache;
//! a changed password or a suspended user takes effect once the entry expires.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use arbor_auth::{Login, UserStore};
use arbor_engine::logins::LoginGuard;
use arbor_engine::CurrentUser;
use arbor_model::{Error, Status};
use base64::Engine as _;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};

/// How long a verified login is remembered.
pub const CACHE_TTL: Duration = Duration::from_secs(10);
/// Remembered logins at most (beyond this the cache is cleared).
const CACHE_MAX: usize = 10_000;

/// The HTTP side of authentication.
pub struct Authenticator {
    /// `None`: authentication disabled (every request is accepted, as over Bolt).
    store: Option<UserStore>,
    logins: std::sync::Arc<LoginGuard>,
    cache: Mutex<HashMap<[u8; 32], (CurrentUser, Instant)>>,
}

fn unauthorized() -> Error {
    Error::new(Status::Unauthorized, "The client is unauthorized due to authentication failure.")
}

impl Authenticator {
    pub fn new(store: Option<UserStore>, logins: std::sync::Arc<LoginGuard>) -> Authenticator {
        Authenticator { store, logins, cache: Mutex::new(HashMap::new()) }
    }

    /// Who sent the request (`None` with authentication disabled). Blocks while a password is
    /// hashed: call it off the async runtime.
    pub fn authenticate(
        &self,
        header: Option<&str>,
        peer: IpAddr,
    ) -> Result<Option<CurrentUser>, Error> {
        let Some(store) = &self.store else { return Ok(None) };
        let Some(header) = header else {
            return Err(Error::new(Status::Unauthorized, "No authentication header supplied."));
        };
        let (user, password) = parse_basic(header)?;
        let key: [u8; 32] = Sha256::new()
            .chain_update(user.as_bytes())
            .chain_update([0])
            .chain_update(password.as_bytes())
            .finalize()
            .into();
        if let Some((u, at)) = self.cache.lock().get(&key) {
            if at.elapsed() < CACHE_TTL {
                return Ok(Some(u.clone()));
            }
        }
        let mut accepted = None;
        self.logins.attempt(&user, &peer.to_string(), || {
            if let Login::Accepted { password_change_required } = store.login(&user, &password) {
                accepted = Some(password_change_required);
            }
            accepted.is_some()
        })?;
        let Some(password_change_required) = accepted else {
            tracing::warn!(peer = %peer, user = %user, "HTTP authentication failed");
            return Err(unauthorized());
        };
        let current = CurrentUser { name: user, password_change_required };
        let mut cache = self.cache.lock();
        if cache.len() >= CACHE_MAX {
            cache.clear();
        }
        cache.insert(key, (current.clone(), Instant::now()));
        Ok(Some(current))
    }
}

/// `Basic base64(user:password)`.
fn parse_basic(header: &str) -> Result<(String, String), Error> {
    let invalid = || Error::new(Status::Unauthorized, "Invalid authentication header.");
    let (scheme, rest) = header.trim().split_once(' ').ok_or_else(invalid)?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(Error::new(
            Status::Unauthorized,
            format!("Unsupported authentication token, scheme '{scheme}' is not supported."),
        ));
    }
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(rest.trim()).map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let (user, password) = text.split_once(':').ok_or_else(invalid)?;
    Ok((user.to_string(), password.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_headers_parse() {
        // The header Neo4j's documentation shows: neo4j / verysecret.
        let (u, p) = parse_basic("Basic bmVvNGo6dmVyeXNlY3JldA==").unwrap();
        assert_eq!((u.as_str(), p.as_str()), ("neo4j", "verysecret"));
        assert_eq!(parse_basic("Bearer x").unwrap_err().status, Status::Unauthorized);
        assert!(parse_basic("Basic !!!").is_err());
    }
}
