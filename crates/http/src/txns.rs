//! Explicit transactions of the Query API (`/db/{name}/query/v2/tx...`): each open transaction
//! owns an engine session, is found by a random id, belongs to the user who opened it, and is
//! rolled back when it stays idle past the idle timeout (Neo4j's
//! `server.http.transaction_idle_timeout`, 30 s by default). Every request to it extends the
//! expiry, which the response reports as `transaction.expires`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use arbor_engine::Session;
use arbor_model::{Error, Status};
use parking_lot::Mutex;
use rand::Rng;

/// Open transactions at most; beyond this, opening one is refused (transient).
const MAX_OPEN: usize = 10_000;

pub struct OpenTx {
    pub session: Session,
    /// The user who opened it (`""` without authentication).
    pub user: String,
    pub database: String,
    expires: Instant,
    expires_wall: SystemTime,
}

impl OpenTx {
    /// When the transaction expires, as the Query API prints it (`2024-10-22T15:48:29Z`).
    pub fn expires_text(&self) -> String {
        chrono::DateTime::<chrono::Utc>::from(self.expires_wall)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }
}

/// The open transactions.
pub struct Registry {
    open: Mutex<HashMap<String, Arc<Mutex<OpenTx>>>>,
    idle_timeout: Duration,
}

/// Neo4j's answer for an unknown or expired transaction id.
pub fn not_found(id: &str) -> Error {
    Error::new(
        Status::TransactionNotFound,
        format!(
            "Transaction with Id: \"{id}\" was not found. It may have timed out and therefore \
             rolled back or the routing header 'neo4j-cluster-affinity' was not provided."
        ),
    )
}

impl Registry {
    pub fn new(idle_timeout: Duration) -> Registry {
        Registry { open: Mutex::new(HashMap::new()), idle_timeout }
    }

    /// Registers a session whose transaction has begun; returns its id.
    pub fn insert(
        &self,
        session: Session,
        user: String,
        database: String,
    ) -> Result<(String, Arc<Mutex<OpenTx>>), Error> {
        let mut open = self.open.lock();
        if open.len() >= MAX_OPEN {
            return Err(Error::new(
                Status::TransactionStartFailed,
                "too many open Query API transactions; commit or roll some back",
            ));
        }
        let id: String = rand::thread_rng()
            .sample_iter(&rand::distributions::Alphanumeric)
            .take(16)
            .map(char::from)
            .collect();
        let tx = Arc::new(Mutex::new(OpenTx {
            session,
            user,
            database,
            expires: Instant::now(),
            expires_wall: SystemTime::now(),
        }));
        self.touch(&mut tx.lock());
        open.insert(id.clone(), tx.clone());
        Ok((id, tx))
    }

    /// Extends the transaction's expiry by the idle timeout from now.
    pub fn touch(&self, tx: &mut OpenTx) {
        tx.expires = Instant::now() + self.idle_timeout;
        tx.expires_wall = SystemTime::now() + self.idle_timeout;
    }

    /// The open transaction `id` of `user` on `database`.
    pub fn get(&self, id: &str, user: &str, database: &str) -> Result<Arc<Mutex<OpenTx>>, Error> {
        let tx = self.open.lock().get(id).cloned().ok_or_else(|| not_found(id))?;
        {
            let t = tx.lock();
            if t.user != user
                || !t.database.eq_ignore_ascii_case(database)
                || Instant::now() >= t.expires
            {
                return Err(not_found(id));
            }
        }
        Ok(tx)
    }

    /// Forgets `id` (after commit, rollback or an error).
    pub fn remove(&self, id: &str) -> Option<Arc<Mutex<OpenTx>>> {
        self.open.lock().remove(id)
    }

    /// Removes the expired transactions and returns them (dropping one rolls it back).
    pub fn expired(&self) -> Vec<Arc<Mutex<OpenTx>>> {
        let now = Instant::now();
        let mut open = self.open.lock();
        let ids: Vec<String> = open
            .iter()
            .filter(|(_, t)| t.try_lock().is_some_and(|t| now >= t.expires))
            .map(|(id, _)| id.clone())
            .collect();
        ids.iter().filter_map(|id| open.remove(id)).collect()
    }

    /// Removes every open transaction (shutdown).
    pub fn expired_all(&self) -> Vec<Arc<Mutex<OpenTx>>> {
        self.open.lock().drain().map(|(_, t)| t).collect()
    }
}
