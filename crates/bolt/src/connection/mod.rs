//! One Bolt connection: handshake, then the request/response state machine of
//! `appendix/version-5.adoc` over an engine session.
//!
//! Two threads serve an *active* connection. This module's worker owns the session and the
//! socket's write side; a reader thread reassembles incoming messages into a bounded queue.
//! A plaintext connection with nothing to do for `Limits::park_after` gives both threads back:
//! its state ([`Parked`]) waits in the server's readiness loop until the next byte arrives
//! (`server.rs`). When the reader sees
//! `RESET` it bumps `pending_resets` and raises the session's interrupt flag at once (the
//! "jump ahead"); the worker then answers every message queued in front of that `RESET` with
//! `IGNORED` (the INTERRUPTED state), and the `RESET` itself puts the session back to READY.
//!
//! Files by concern: `message_loop` (accept, reader thread, dispatch), `auth` (HELLO, LOGON),
//! `transaction` (RUN, BEGIN, COMMIT, ROLLBACK, RESET, ROUTE), `streaming` (PULL, DISCARD,
//! summaries, notifications), `errors` (FAILURE metadata and state), `backend` (the engine seam).

mod auth;
mod backend;
mod errors;
mod guard;
mod message_loop;
mod notify;
mod streaming;
mod transaction;

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;
use std::time::Duration;

use crate::handshake::{Negotiated, Version};
use crate::tls::{Sock, TlsSetup};
use crate::transport::MessageWriter;
use crate::values::Dialect;
use crate::AuthStore;

pub(crate) use arbor_engine::logins::LoginGuard;
pub use arbor_engine::logins::LoginLimits;
pub(crate) use backend::Backend;
pub(crate) use errors::write_single_failure;
pub(crate) use guard::{Deadlined, OpenTicket, PeerSlots, PreAuthSlot};
pub(crate) use message_loop::{resume, run, Parked};
use notify::NotificationFilter;

/// The server agent string (`Neo4j/5.26.30`). Drivers and tools check that it starts with
/// `Neo4j/`.
pub(crate) fn server_agent() -> String {
    format!("Neo4j/{}", arbor_engine::NEO4J_COMPAT_VERSION)
}

/// Seconds a routing table stays valid in the driver.
const ROUTING_TTL_SECONDS: i64 = 300;

/// Connection limits and timeouts (defaults suit a server; tests shorten them).
#[derive(Clone, Debug)]
pub struct Limits {
    /// A larger message gets a `FAILURE` and the connection is closed.
    pub max_message_bytes: usize,
    /// Total time from accept to the end of the version handshake (TLS included).
    pub handshake_timeout: Duration,
    /// Total time from accept (or `LOGOFF`) until the client has sent its credentials.
    pub login_timeout: Duration,
    /// Connections from one address that have not logged in yet; more are refused at once.
    pub max_unauthenticated_per_address: usize,
    /// Login lockout and the password-hashing pool.
    pub logins: LoginLimits,
    /// How often an idle reader checks for server shutdown.
    pub poll_interval: Duration,
    /// Output is written to the socket once this much is buffered (and at the end of a batch).
    pub flush_threshold: usize,
    /// Requests decoded ahead of the worker (pipelining depth before TCP back-pressure).
    pub queue_depth: usize,
    /// On shutdown, how long connections get to finish before their sockets are closed.
    pub shutdown_grace: Duration,
    /// A plaintext connection idle this long (nothing queued, nothing running) gives its
    /// threads back and waits in the readiness loop.
    pub park_after: Duration,
    /// Connections served by a thread at once (Neo4j's `server.bolt.thread_pool_max_size`);
    /// parked and fresh connections waiting in the readiness loop do not count. A connection
    /// with a request while all are busy waits for a thread.
    pub max_active: usize,
    /// How long a request waits for a thread before it gets
    /// `Neo.TransientError.Request.NoThreadsAvailable` and its connection is closed.
    pub active_wait: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: crate::transport::DEFAULT_MAX_MESSAGE_BYTES,
            handshake_timeout: Duration::from_secs(10),
            login_timeout: Duration::from_secs(20),
            max_unauthenticated_per_address: 256,
            logins: LoginLimits::default(),
            poll_interval: Duration::from_millis(200),
            flush_threshold: 64 * 1024,
            queue_depth: 16,
            shutdown_grace: Duration::from_secs(10),
            park_after: Duration::from_secs(1),
            max_active: 400,
            active_wait: Duration::from_secs(5),
        }
    }
}

/// What every connection of one server shares.
pub(crate) struct Shared {
    pub auth: Option<AuthStore>,
    pub tls: Option<TlsSetup>,
    pub advertised_address: Option<String>,
    pub limits: Limits,
    pub shutdown: Arc<AtomicBool>,
    pub logins: Arc<LoginGuard>,
    /// Set while connections queue for a thread (`Limits::max_active` reached): idle ones
    /// then park after one reader poll instead of `Limits::park_after`.
    pub pressure: Arc<AtomicBool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Negotiation,
    Authentication,
    Ready,
    Streaming,
    TxReady,
    TxStreaming,
    Failed,
}

impl State {
    pub(super) fn name(self) -> &'static str {
        match self {
            State::Negotiation => "NEGOTIATION",
            State::Authentication => "AUTHENTICATION",
            State::Ready => "READY",
            State::Streaming => "STREAMING",
            State::TxReady => "TX_READY",
            State::TxStreaming => "TX_STREAMING",
            State::Failed => "FAILED",
        }
    }
}

#[must_use]
pub(super) enum Flow {
    Continue,
    Close,
}

/// One open result: the id the client uses, the id the engine uses, and what the summary's
/// status needs to know.
pub(super) struct OpenResult {
    key: i64,
    engine_qid: Option<i64>,
    has_fields: bool,
    records: u64,
}

/// The write side of a connection's socket, owned so a parked connection can move between
/// threads.
pub(super) struct SockWriter(Arc<Sock>);

impl std::io::Write for SockWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (&mut &*self.0).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        (&mut &*self.0).flush()
    }
}

pub(super) struct Conn<B: Backend> {
    backend: B,
    writer: MessageWriter<SockWriter>,
    shared: Arc<Shared>,
    negotiated: Negotiated,
    dialect: Dialect,
    state: State,
    conn_no: u64,
    peer: String,
    local: String,
    /// Open results: the auto-commit one (key -1), or those of the explicit transaction.
    results: Vec<OpenResult>,
    /// The most recent result in the explicit transaction (`qid: -1`).
    last_key: Option<i64>,
    /// Our own qid counter, for when the engine does not number results.
    next_key: i64,
    /// The database of the current transaction.
    db: String,
    /// Notification settings from HELLO, and those in force for the current transaction.
    hello_filter: NotificationFilter,
    tx_filter: NotificationFilter,
    pending_resets: Arc<AtomicUsize>,
    interrupt: Arc<AtomicBool>,
    /// Held until the client has logged in (see `guard::PeerSlots`).
    pre_auth: Option<PreAuthSlot>,
    login_clock: Arc<guard::LoginClock>,
}

impl<B: Backend> Conn<B> {
    pub(super) fn version(&self) -> Version {
        self.negotiated.version
    }
}

/// The value dialect a negotiated protocol version speaks.
pub(super) fn dialect_for(v: Version) -> Dialect {
    if v.at_least(5, 0) {
        Dialect::V5
    } else {
        Dialect::V4_4
    }
}
