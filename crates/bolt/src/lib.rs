//! Arbor's Bolt server: lets the official Neo4j drivers (Python, Java, Go, JavaScript, ...)
//! connect and run Cypher unchanged.
//!
//! Layers, bottom up:
//! - `packstream`: PackStream v1 markers, a bounded decoder that never panics;
//! - `values`: Cypher values <-> Bolt structures (nodes, paths, temporal, spatial) per version;
//! - `transport`: chunked framing with a message size cap;
//! - `handshake`: magic, legacy version slots and manifest v1;
//! - `message`: request parsing and response encoding;
//! - `connection/`: the per-connection state machine over an engine [`arbor_engine::Session`];
//! - `server`: accept loop, connection limit, shutdown;
//! - `tls`: TLS with rustls (required or optional per server), sniffed per connection;
//! - authentication uses the engine's user store ([`AuthStore`], crate `arbor-auth`), which
//!   Cypher's `CREATE USER` etc. manage too.
//!
//! **Concurrency model.** One OS thread per connection runs the state machine and the query
//! (no hand-off: the engine's session is used where it was created), plus one small reader
//! thread per connection that reassembles messages into a bounded queue. The reader is what
//! makes `RESET` "jump ahead": it sets the session's interrupt flag the moment a `RESET` arrives,
//! while the worker may still be inside a long query. Blocking sockets keep the code simple and
//! the engine synchronous; the cost is two threads per connection, which is fine for the
//! connection counts Bolt drivers use (pools of tens per client) and is capped by
//! `ServerConfig::max_connections`.
//!
//! **Architecture Invariant:** this is the only crate that knows PackStream or Bolt. It calls the
//! engine only through `Session` and never interprets Cypher.
//!
//! **Protocol surface.** Bolt 4.4, 5.0-5.4, 5.6-5.8 and 6.0 (never 5.5), by the legacy four-slot
//! handshake or manifest v1. Element ids on the wire are `"n:<id>"` for nodes and `"r:<id>"` for
//! relationships (stable; drivers must not parse them). Incoming messages are capped at 64 MiB
//! and nesting at 64 levels; a protocol violation gets `Neo.ClientError.Request.Invalid` and
//! closes only that connection. Databases `neo4j` (default) and `system` exist; any other name
//! is `Neo.ClientError.Database.DatabaseNotFound`. The server agent is `Neo4j/5.26.30`
//! (`arbor_engine::NEO4J_COMPAT_VERSION`).

pub mod client;
mod connection;
pub mod handshake;
pub mod message;
pub mod packstream;
mod server;
pub mod tls;
pub mod transport;
pub mod values;
mod websocket;

#[cfg(test)]
mod record_tests;
#[cfg(test)]
mod tests;

pub use arbor_engine::logins::LoginGuard;
/// The argon2id user store for `basic` auth (shared with the engine's user administration).
pub use arbor_engine::UserStore as AuthStore;
pub use connection::{Limits as ConnectionLimits, LoginLimits};
pub use server::{bind, serve, serve_listener, serve_listener_shared, serve_listener_with_limits};

/// What the Bolt server needs to know at start-up.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub listen: std::net::SocketAddr,
    /// `None`: authentication disabled (any auth token is accepted).
    pub auth: Option<AuthStore>,
    /// Connections beyond this many are refused with `Neo.TransientError.Request.NoThreadsAvailable`.
    pub max_connections: usize,
    /// The `host:port` routing tables advertise (`neo4j://` URIs). Default: the address the
    /// client says it used, else the socket's local address.
    pub advertised_address: Option<String>,
    /// TLS (`bolt+s://`, `neo4j+s://`); `None` serves plaintext Bolt only.
    pub tls: Option<tls::TlsSetup>,
}

#[derive(Debug, thiserror::Error)]
pub enum BoltError {
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    AuthStore(#[from] arbor_engine::StoreError),
}
