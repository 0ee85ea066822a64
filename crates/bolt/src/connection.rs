//! One Bolt connection: handshake, then the request/response state machine of
//! `appendix/version-5.adoc` over an engine session.
//!
//! Two threads serve a connection. This module's worker owns the session and the socket's write
//! side; a reader thread reassembles incoming messages into a bounded queue. When the reader sees
//! `RESET` it bumps `pending_resets` and raises the session's interrupt flag at once (the
//! "jump ahead"); the worker then answers every message queued in front of that `RESET` with
//! `IGNORED` (the INTERRUPTED state), and the `RESET` itself puts the session back to READY.

use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_engine::{
    AccessMode, Notification, PullOutcome, RunInfo, Session, Stats, Summary, TxConfig,
};
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use tracing::{debug, info, warn};

use crate::handshake::{self, Negotiated, Version};
use crate::message::{self, parse_request, peek_tag, tag, Request};
use crate::packstream::DecodeErrorKind;
use crate::tls::{Opening, Sock, TlsLevel, TlsSetup};
use crate::transport::{MessageReader, MessageWriter, ReadError};
use crate::values::Dialect;
use crate::AuthStore;
use arbor_engine::{CurrentUser, Login};

/// The server agent string. Drivers and tools check that it starts with `Neo4j/`.
pub(crate) const SERVER_AGENT: &str = "Neo4j/5.26.0";

/// Seconds a routing table stays valid in the driver.
const ROUTING_TTL_SECONDS: i64 = 300;

/// The engine operations the state machine needs. `arbor_engine::Session` is the real one;
/// tests plug in a scripted fake so the protocol can be checked without a query engine.
pub(crate) trait Backend {
    fn begin(&mut self, config: TxConfig) -> Result<()>;
    fn run(&mut self, query: &str, params: PropertyMap, config: TxConfig) -> Result<RunInfo>;
    fn pull(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<PullOutcome>;
    fn discard(&mut self, qid: Option<i64>, n: i64) -> Result<PullOutcome>;
    fn commit(&mut self) -> Result<String>;
    fn rollback(&mut self) -> Result<()>;
    fn reset(&mut self);
    fn interrupt_flag(&self) -> Arc<AtomicBool>;
    /// Who logged in (`None`: authentication disabled).
    fn set_user(&mut self, _user: Option<CurrentUser>) {}
}

impl Backend for Session {
    fn begin(&mut self, config: TxConfig) -> Result<()> {
        Session::begin(self, config)
    }
    fn run(&mut self, query: &str, params: PropertyMap, config: TxConfig) -> Result<RunInfo> {
        Session::run(self, query, params, config)
    }
    fn pull(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<PullOutcome> {
        Session::pull(self, qid, n, sink)
    }
    fn discard(&mut self, qid: Option<i64>, n: i64) -> Result<PullOutcome> {
        Session::discard(self, qid, n)
    }
    fn commit(&mut self) -> Result<String> {
        Session::commit(self)
    }
    fn rollback(&mut self) -> Result<()> {
        Session::rollback(self)
    }
    fn reset(&mut self) {
        Session::reset(self)
    }
    fn interrupt_flag(&self) -> Arc<AtomicBool> {
        Session::interrupt_flag(self)
    }
    fn set_user(&mut self, user: Option<CurrentUser>) {
        Session::set_user(self, user)
    }
}

/// Tunables that are not part of the public `ServerConfig`.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub max_message_bytes: usize,
    pub handshake_timeout: Duration,
    /// How often an idle reader checks for server shutdown.
    pub poll_interval: Duration,
    /// Output is written to the socket once this much is buffered (and at the end of a batch).
    pub flush_threshold: usize,
    /// Requests decoded ahead of the worker (pipelining depth before TCP back-pressure).
    pub queue_depth: usize,
    /// On shutdown, how long connections get to finish before their sockets are closed.
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: crate::transport::DEFAULT_MAX_MESSAGE_BYTES,
            handshake_timeout: Duration::from_secs(10),
            poll_interval: Duration::from_millis(200),
            flush_threshold: 64 * 1024,
            queue_depth: 16,
            shutdown_grace: Duration::from_secs(10),
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
}

enum Inbound {
    Message(Vec<u8>),
    /// The peer went away; `Some` carries why, when it was not a clean close.
    Closed(Option<String>),
    TooLarge(usize),
    /// Server shutdown, seen while the connection was idle.
    Stopped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Negotiation,
    Authentication,
    Ready,
    Streaming,
    TxReady,
    TxStreaming,
    Failed,
}

impl State {
    fn name(self) -> &'static str {
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
enum Flow {
    Continue,
    Close,
}

/// One open result: the id the client uses, the id the engine uses, and what the summary's
/// status needs to know.
struct OpenResult {
    key: i64,
    engine_qid: Option<i64>,
    has_fields: bool,
    records: u64,
}

/// Serves one accepted connection to the end. Never panics on client input; every way out
/// closes the socket.
pub(crate) fn run<B: Backend>(stream: TcpStream, backend: B, shared: &Shared, conn_no: u64) {
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into());
    let local = stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(shared.limits.handshake_timeout));
    let sock = match &shared.tls {
        None => Sock::Plain(stream),
        Some(tls) => match crate::tls::sniff(&stream) {
            Ok(Opening::Tls) => match Sock::tls(tls, stream) {
                Ok(s) => s,
                Err(e) => {
                    warn!(peer = %peer, "{e}");
                    return;
                }
            },
            Ok(Opening::Plain) if tls.level == TlsLevel::Optional => Sock::Plain(stream),
            Ok(Opening::Plain) => {
                info!(peer = %peer, "plaintext Bolt connection closed: this server requires TLS");
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
            Err(e) => {
                info!(peer = %peer, "Bolt connection closed before its handshake: {e}");
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
        },
    };
    let negotiated = match handshake::perform(&mut &sock) {
        Ok(n) => n,
        Err(e) => {
            info!(peer = %peer, tls = sock.is_tls(), "Bolt handshake failed: {e}");
            sock.shutdown();
            return;
        }
    };
    debug!(peer = %peer, conn = conn_no, tls = sock.is_tls(), "Bolt connection negotiated version {}", negotiated.version);

    // From here on the socket's read timeout is only a shutdown poll for the reader thread.
    let _ = sock.tcp().set_read_timeout(Some(shared.limits.poll_interval));
    let read_half = match sock.try_clone() {
        Ok(s) => s,
        Err(e) => {
            warn!(peer = %peer, "cannot clone the connection socket: {e}");
            return;
        }
    };
    let (tx, rx) = mpsc::sync_channel(shared.limits.queue_depth);
    let pending_resets = Arc::new(AtomicUsize::new(0));
    let interrupt = backend.interrupt_flag();
    let reader = {
        let pending_resets = pending_resets.clone();
        let interrupt = interrupt.clone();
        let shutdown = shared.shutdown.clone();
        let max = shared.limits.max_message_bytes;
        std::thread::Builder::new()
            .name(format!("bolt-read-{conn_no}"))
            .stack_size(256 * 1024)
            .spawn(move || read_loop(read_half, max, tx, pending_resets, interrupt, shutdown))
    };
    let reader = match reader {
        Ok(h) => h,
        Err(e) => {
            warn!(peer = %peer, "cannot start a reader thread: {e}");
            return;
        }
    };

    let writer = MessageWriter::new(&sock, shared.limits.flush_threshold);
    let mut conn = Conn {
        backend,
        writer,
        shared,
        negotiated,
        dialect: dialect_for(negotiated.version),
        state: State::Negotiation,
        conn_no,
        peer: peer.clone(),
        local,
        results: Vec::new(),
        last_key: None,
        next_key: 0,
        db: "neo4j".to_string(),
        hello_filter: NotificationFilter::default(),
        tx_filter: NotificationFilter::default(),
        pending_resets,
        interrupt,
    };
    conn.serve(rx);
    drop(conn);
    sock.shutdown();
    let _ = reader.join();
    debug!(peer = %peer, conn = conn_no, "Bolt connection closed");
}

fn dialect_for(v: Version) -> Dialect {
    if v.at_least(5, 0) {
        Dialect::V5
    } else {
        Dialect::V4_4
    }
}

/// The reader thread: reassembles messages and forwards them; handles the jump-ahead signals.
fn read_loop(
    stream: Sock,
    max_message: usize,
    tx: SyncSender<Inbound>,
    pending_resets: Arc<AtomicUsize>,
    interrupt: Arc<AtomicBool>,
    shutdown: Arc<AtomicBool>,
) {
    let mut reader = MessageReader::new(&stream, max_message);
    let stop = || shutdown.load(Ordering::Relaxed);
    loop {
        let event = match reader.read_message(&stop) {
            Ok(msg) => {
                let t = peek_tag(&msg);
                if t == Some(tag::RESET) {
                    // Count first, then interrupt: the worker clears the flag only when no
                    // RESET is pending.
                    pending_resets.fetch_add(1, Ordering::SeqCst);
                    interrupt.store(true, Ordering::SeqCst);
                } else if t == Some(tag::GOODBYE) {
                    interrupt.store(true, Ordering::SeqCst);
                }
                if tx.send(Inbound::Message(msg)).is_err() || t == Some(tag::GOODBYE) {
                    return;
                }
                continue;
            }
            Err(ReadError::Eof) => Inbound::Closed(None),
            Err(ReadError::Stopped) => Inbound::Stopped,
            Err(ReadError::TooLarge { max }) => Inbound::TooLarge(max),
            Err(ReadError::Truncated) => {
                Inbound::Closed(Some("connection closed in the middle of a message".into()))
            }
            Err(ReadError::Io(e)) => Inbound::Closed(Some(e.to_string())),
        };
        // The client is gone (nobody will read the results of whatever is running), or the
        // server is shutting down (which must not wait for a long query): stop it.
        interrupt.store(true, Ordering::SeqCst);
        let _ = tx.send(event);
        return;
    }
}

struct Conn<'a, B: Backend> {
    backend: B,
    writer: MessageWriter<&'a Sock>,
    shared: &'a Shared,
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
}

impl<B: Backend> Conn<'_, B> {
    fn version(&self) -> Version {
        self.negotiated.version
    }

    fn serve(&mut self, rx: Receiver<Inbound>) {
        let mut next: Option<Inbound> = None;
        loop {
            let event = match next.take() {
                Some(e) => e,
                None => match rx.recv() {
                    Ok(e) => e,
                    Err(_) => break,
                },
            };
            let flow = match event {
                Inbound::Message(bytes) => self.on_message(&bytes),
                Inbound::Closed(reason) => {
                    if let Some(reason) = reason {
                        info!(peer = %self.peer, "Bolt connection lost: {reason}");
                    }
                    Flow::Close
                }
                Inbound::Stopped => {
                    debug!(peer = %self.peer, "closing idle Bolt connection: server shutting down");
                    Flow::Close
                }
                Inbound::TooLarge(max) => {
                    warn!(peer = %self.peer, "closing Bolt connection: message larger than {max} bytes");
                    self.protocol_violation(&format!(
                        "Message exceeds the maximum size of {max} bytes"
                    ))
                }
            };
            if let Flow::Close = flow {
                let _ = self.writer.flush();
                break;
            }
            // Pipelined requests share one write: flush only when nothing else is waiting.
            match rx.try_recv() {
                Ok(e) => next = Some(e),
                Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => {
                    if let Err(e) = self.writer.flush() {
                        debug!(peer = %self.peer, "Bolt write failed: {e}");
                        break;
                    }
                }
            }
        }
    }

    fn on_message(&mut self, bytes: &[u8]) -> Flow {
        let t = peek_tag(bytes);
        let logged_in = !matches!(self.state, State::Negotiation | State::Authentication);
        if t == Some(tag::RESET) {
            let _ = self
                .pending_resets
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| Some(n.saturating_sub(1)));
        } else if logged_in && self.pending_resets.load(Ordering::SeqCst) > 0 {
            // Queued in front of a RESET that has already jumped ahead: INTERRUPTED.
            if t == Some(tag::GOODBYE) {
                return Flow::Close;
            }
            return self.ignored();
        }
        let request = match parse_request(bytes) {
            Ok(r) => r,
            Err(e) if e.kind == DecodeErrorKind::Malformed => {
                warn!(peer = %self.peer, "closing Bolt connection: malformed request: {e}");
                return self.protocol_violation(&e.message);
            }
            Err(e) => return self.failure(&Error::new(Status::RequestInvalid, e.message)),
        };
        self.dispatch(request)
    }

    fn dispatch(&mut self, request: Request) -> Flow {
        let v51 = self.version().at_least(5, 1);
        match (self.state, request) {
            (_, Request::Goodbye) => Flow::Close,
            (State::Negotiation, Request::Hello { extra }) => self.hello(extra),
            (State::Authentication, Request::Logon { auth }) if v51 => self.logon(auth),
            (State::Negotiation | State::Authentication, r) => self.protocol_violation(&format!(
                "Message '{}' cannot be handled by a session in the {} state.",
                r.name(),
                self.state.name()
            )),
            (_, r @ (Request::Hello { .. } | Request::Logon { .. })) => {
                self.protocol_violation(&format!(
                    "Message '{}' cannot be handled by a session in the {} state.",
                    r.name(),
                    self.state.name()
                ))
            }
            (_, Request::Logoff) if !v51 => {
                self.protocol_violation("LOGOFF is not part of this Bolt version")
            }
            (_, Request::Reset) => self.reset(),
            (State::Failed, _) => self.ignored(),
            (State::Ready, Request::Logoff) => {
                self.backend.reset();
                self.results.clear();
                self.state = State::Authentication;
                self.success(PropertyMap::new())
            }
            (State::Ready, Request::Run { query, params, extra }) => {
                self.run_auto(&query, params, extra)
            }
            (State::Ready, Request::Begin { extra }) => self.begin(extra),
            (State::Ready, Request::Route { routing, bookmarks: _, db }) => self.route(routing, db),
            (_, Request::Telemetry { api: _ }) => self.success(PropertyMap::new()),
            (State::Streaming | State::TxStreaming, Request::Pull { n, qid }) => {
                self.pull(n, qid, false)
            }
            (State::Streaming | State::TxStreaming, Request::Discard { n, qid }) => {
                self.pull(n, qid, true)
            }
            (State::TxReady | State::TxStreaming, Request::Run { query, params, extra: _ }) => {
                self.run_in_tx(&query, params)
            }
            // Neo4j lets a transaction end with results still open; so do we.
            (State::TxReady | State::TxStreaming, Request::Commit) => self.commit(),
            (State::TxReady | State::TxStreaming, Request::Rollback) => self.rollback(),
            (state, r) => self.failure(&Error::new(
                Status::RequestInvalid,
                format!(
                    "Message '{}' cannot be handled by a session in the {} state.",
                    r.name(),
                    state.name()
                ),
            )),
        }
    }

    // ---- responses ---------------------------------------------------------------------------

    fn success(&mut self, meta: PropertyMap) -> Flow {
        let d = self.dialect;
        match self.writer.message(|b| message::write_success(b, &meta, d)) {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Close,
        }
    }

    fn ignored(&mut self) -> Flow {
        match self.writer.message(message::write_ignored) {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Close,
        }
    }

    fn write_failure(&mut self, status: Status, message: &str) {
        let meta = failure_metadata(
            self.version(),
            status.code(),
            status.gql_status(),
            status.classification(),
            message,
        );
        let d = self.dialect;
        let _ = self.writer.message(|b| message::write_failure(b, &meta, d));
    }

    /// A request failed: FAILURE, then FAILED (or, before login, close).
    fn failure(&mut self, e: &Error) -> Flow {
        debug!(peer = %self.peer, "Bolt request failed: {e}");
        self.write_failure(e.status, &e.message);
        if matches!(self.state, State::Negotiation | State::Authentication) {
            return Flow::Close;
        }
        self.state = State::Failed;
        Flow::Continue
    }

    /// The client broke the protocol: FAILURE and close.
    fn protocol_violation(&mut self, message: &str) -> Flow {
        self.write_failure(Status::RequestInvalid, message);
        Flow::Close
    }

    /// An engine call failed. If a RESET is already on its way, the failure was (most likely)
    /// caused by it: answer as the INTERRUPTED state does, with IGNORED.
    fn engine_failure(&mut self, e: &Error) -> Flow {
        if self.pending_resets.load(Ordering::SeqCst) > 0 {
            self.state = State::Failed;
            return self.ignored();
        }
        self.failure(e)
    }

    // ---- connection setup --------------------------------------------------------------------

    fn hello(&mut self, extra: PropertyMap) -> Flow {
        self.hello_filter = NotificationFilter::from_extra(&extra);
        if let Some(Value::String(agent)) = extra.get("user_agent") {
            debug!(peer = %self.peer, conn = self.conn_no, "HELLO from {agent}");
        }
        let mut meta = PropertyMap::new();
        meta.insert("server".into(), Value::str(SERVER_AGENT));
        meta.insert("connection_id".into(), Value::from(format!("bolt-{}", self.conn_no)));
        // No `connection.recv_timeout_seconds`: we send no NOOPs during long queries, so a
        // driver-side read timeout would cut them off. `ssr.enabled` (5.8+): the server resolves
        // the home database itself (RUN/BEGIN report `db`), so routing drivers need no extra
        // ROUTE round trip per session.
        let mut hints = PropertyMap::new();
        if self.version().at_least(5, 8) {
            hints.insert("ssr.enabled".into(), Value::Bool(true));
        }
        meta.insert("hints".into(), Value::Map(hints));
        if self.negotiated.manifest {
            meta.insert("protocol_version".into(), Value::from(self.version().to_string()));
        }
        // Bolt 4.4 may ask for the 5.0 date-time encoding.
        let wants_utc = self.version() == Version::new(4, 4)
            && matches!(extra.get("patch_bolt"), Some(Value::List(p))
                if p.iter().any(|x| matches!(x, Value::String(s) if &**s == "utc")));
        if wants_utc {
            meta.insert("patch_bolt".into(), Value::List(vec![Value::str("utc")]));
        }
        if self.version().at_least(5, 1) {
            self.state = State::Authentication;
        } else {
            // Before 5.1 the credentials travel in HELLO.
            match self.authenticate(&extra) {
                Ok(user) => self.backend.set_user(user),
                Err(e) => return self.failure(&e),
            }
            self.state = State::Ready;
        }
        let flow = self.success(meta);
        if wants_utc {
            // Acknowledged above; from now on date-times use the UTC encoding.
            self.dialect.utc_datetime = true;
        }
        flow
    }

    fn logon(&mut self, auth: PropertyMap) -> Flow {
        match self.authenticate(&auth) {
            Ok(user) => self.backend.set_user(user),
            Err(e) => return self.failure(&e),
        }
        self.state = State::Ready;
        let mut meta = PropertyMap::new();
        if let (true, Some(addr)) = (self.version().at_least(5, 8), &self.shared.advertised_address)
        {
            meta.insert("advertised_address".into(), Value::str(addr));
        }
        self.success(meta)
    }

    /// Checks the auth token; returns who logged in (`None` with authentication disabled).
    fn authenticate(&self, token: &PropertyMap) -> Result<Option<CurrentUser>> {
        let scheme = match token.get("scheme") {
            None | Some(Value::Null) => "none",
            Some(Value::String(s)) => s,
            Some(_) => {
                return Err(Error::new(Status::Unauthorized, "The auth scheme must be a String."))
            }
        };
        let Some(store) = &self.shared.auth else {
            // Authentication disabled: every token is accepted, as in Neo4j.
            return Ok(None);
        };
        if scheme != "basic" {
            warn!(peer = %self.peer, "Bolt authentication failed: unsupported scheme '{scheme}'");
            return Err(Error::new(
                Status::Unauthorized,
                format!("Unsupported authentication token, scheme '{scheme}' is not supported."),
            ));
        }
        let principal = match token.get("principal") {
            Some(Value::String(s)) => s.to_string(),
            _ => String::new(),
        };
        let credentials = match token.get("credentials") {
            Some(Value::String(s)) => s.to_string(),
            _ => String::new(),
        };
        // A suspended user is rejected like a wrong password.
        if let Login::Accepted { password_change_required } = store.login(&principal, &credentials)
        {
            debug!(peer = %self.peer, user = %principal, "Bolt authentication succeeded");
            return Ok(Some(CurrentUser { name: principal, password_change_required }));
        }
        warn!(peer = %self.peer, user = %principal, "Bolt authentication failed");
        Err(Error::new(
            Status::Unauthorized,
            "The client is unauthorized due to authentication failure.",
        ))
    }

    fn reset(&mut self) -> Flow {
        self.backend.reset();
        self.results.clear();
        self.last_key = None;
        // The session clears the flag on reset; make sure of it, unless another RESET is
        // already queued (then its messages are being ignored anyway).
        self.interrupt.store(false, Ordering::SeqCst);
        if self.pending_resets.load(Ordering::SeqCst) > 0 {
            self.interrupt.store(true, Ordering::SeqCst);
        }
        self.state = State::Ready;
        self.success(PropertyMap::new())
    }

    // ---- queries -----------------------------------------------------------------------------

    fn run_auto(&mut self, query: &str, params: PropertyMap, extra: PropertyMap) -> Flow {
        let (db, db_given) = match resolve_db(extra.get("db")) {
            Ok(x) => x,
            Err(e) => return self.failure(&e),
        };
        let config = match tx_config(&extra, &db) {
            Ok(c) => c,
            Err(e) => return self.failure(&e),
        };
        let started = Instant::now();
        match self.backend.run(query, params, config) {
            Ok(info) => {
                let t_first = started.elapsed().as_millis() as i64;
                self.db = db.clone();
                self.tx_filter = self.hello_filter.overlay(NotificationFilter::from_extra(&extra));
                self.results = vec![OpenResult {
                    key: -1,
                    engine_qid: None,
                    has_fields: !info.fields.is_empty(),
                    records: 0,
                }];
                self.state = State::Streaming;
                let mut meta = run_metadata(&info, t_first);
                if !db_given && self.version().at_least(5, 8) {
                    meta.insert("db".into(), Value::from(db));
                }
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    fn begin(&mut self, extra: PropertyMap) -> Flow {
        let (db, db_given) = match resolve_db(extra.get("db")) {
            Ok(x) => x,
            Err(e) => return self.failure(&e),
        };
        let config = match tx_config(&extra, &db) {
            Ok(c) => c,
            Err(e) => return self.failure(&e),
        };
        match self.backend.begin(config) {
            Ok(()) => {
                self.db = db.clone();
                self.tx_filter = self.hello_filter.overlay(NotificationFilter::from_extra(&extra));
                self.results.clear();
                self.last_key = None;
                self.state = State::TxReady;
                let mut meta = PropertyMap::new();
                if !db_given && self.version().at_least(5, 8) {
                    meta.insert("db".into(), Value::from(db));
                }
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    fn run_in_tx(&mut self, query: &str, params: PropertyMap) -> Flow {
        let config = TxConfig { database: Some(self.db.clone()), ..TxConfig::default() };
        let started = Instant::now();
        match self.backend.run(query, params, config) {
            Ok(info) => {
                let t_first = started.elapsed().as_millis() as i64;
                let key = match info.qid {
                    Some(q) => q,
                    None => {
                        self.next_key += 1;
                        self.next_key
                    }
                };
                self.results.retain(|r| r.key != key);
                self.results.push(OpenResult {
                    key,
                    engine_qid: info.qid,
                    has_fields: !info.fields.is_empty(),
                    records: 0,
                });
                self.last_key = Some(key);
                self.state = State::TxStreaming;
                let mut meta = run_metadata(&info, t_first);
                meta.insert("qid".into(), Value::Int(key));
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    fn pull(&mut self, n: i64, qid: i64, discard: bool) -> Flow {
        if n == 0 || n < -1 {
            return self.failure(&Error::new(
                Status::RequestInvalid,
                format!("Invalid value {n} for n: expected a positive number, or -1 for all."),
            ));
        }
        let auto = self.state == State::Streaming;
        let index = if auto {
            Some(0)
        } else {
            let key = if qid == -1 { self.last_key } else { Some(qid) };
            key.and_then(|k| self.results.iter().position(|r| r.key == k))
        };
        let Some(index) = index.filter(|&i| i < self.results.len()) else {
            return self.failure(&Error::new(
                Status::RequestInvalid,
                format!("There is no open result with qid {qid}."),
            ));
        };
        let engine_qid = self.results[index].engine_qid;

        let mut io_error: Option<io::Error> = None;
        let mut sent = 0u64;
        let outcome = if discard {
            self.backend.discard(engine_qid, n)
        } else {
            let writer = &mut self.writer;
            let dialect = self.dialect;
            let mut sink = |record: Vec<Value>| -> Result<()> {
                writer
                    .message(|b| message::write_record(b, &record, dialect))
                    .map_err(|_| Error::internal("a record is too large for PackStream"))?;
                sent += 1;
                if let Err(e) = writer.maybe_flush() {
                    io_error = Some(e);
                    return Err(Error::new(Status::Io, "the client connection was lost"));
                }
                Ok(())
            };
            self.backend.pull(engine_qid, n, &mut sink)
        };
        if let Some(e) = io_error {
            debug!(peer = %self.peer, "Bolt write failed while streaming: {e}");
            return Flow::Close;
        }
        self.results[index].records += sent;
        match outcome {
            Ok(PullOutcome::HasMore) => {
                let mut meta = PropertyMap::new();
                meta.insert("has_more".into(), Value::Bool(true));
                self.success(meta)
            }
            Ok(PullOutcome::Done(summary)) => {
                let result = self.results.remove(index);
                if self.last_key == Some(result.key) {
                    self.last_key = None;
                }
                let meta = self.summary_metadata(&summary, &result, auto);
                self.state = if auto {
                    State::Ready
                } else if self.results.is_empty() {
                    State::TxReady
                } else {
                    State::TxStreaming
                };
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    fn commit(&mut self) -> Flow {
        match self.backend.commit() {
            Ok(bookmark) => {
                self.results.clear();
                self.last_key = None;
                self.state = State::Ready;
                let mut meta = PropertyMap::new();
                meta.insert("bookmark".into(), Value::from(bookmark));
                self.success(meta)
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    fn rollback(&mut self) -> Flow {
        match self.backend.rollback() {
            Ok(()) => {
                self.results.clear();
                self.last_key = None;
                self.state = State::Ready;
                self.success(PropertyMap::new())
            }
            Err(e) => self.engine_failure(&e),
        }
    }

    fn route(&mut self, routing: PropertyMap, db: Option<String>) -> Flow {
        let (db, _) = match resolve_db(db.map(Value::from).as_ref()) {
            Ok(x) => x,
            Err(e) => return self.failure(&e),
        };
        // A single server is writer, reader and router. Advertise what the operator configured,
        // else the address the client says it dialled (it resolves for that client), else ours.
        let address = match (&self.shared.advertised_address, routing.get("address")) {
            (Some(a), _) => a.clone(),
            (None, Some(Value::String(a))) if !a.is_empty() => a.to_string(),
            _ => self.local.clone(),
        };
        let servers = ["WRITE", "READ", "ROUTE"]
            .iter()
            .map(|role| {
                let mut s = PropertyMap::new();
                s.insert("addresses".into(), Value::List(vec![Value::str(&address)]));
                s.insert("role".into(), Value::str(role));
                Value::Map(s)
            })
            .collect();
        let mut rt = PropertyMap::new();
        rt.insert("ttl".into(), Value::Int(ROUTING_TTL_SECONDS));
        rt.insert("db".into(), Value::from(db));
        rt.insert("servers".into(), Value::List(servers));
        let mut meta = PropertyMap::new();
        meta.insert("rt".into(), Value::Map(rt));
        self.success(meta)
    }

    fn summary_metadata(&self, s: &Summary, result: &OpenResult, auto: bool) -> PropertyMap {
        let mut meta = PropertyMap::new();
        if auto {
            if let Some(b) = &s.bookmark {
                meta.insert("bookmark".into(), Value::str(b));
            }
        }
        meta.insert("db".into(), Value::str(&self.db));
        meta.insert("t_last".into(), Value::Int(i64::try_from(s.t_last_ms).unwrap_or(i64::MAX)));
        meta.insert("type".into(), Value::str(s.query_type.code()));
        let stats = stats_map(&s.stats);
        if !stats.is_empty() {
            meta.insert("stats".into(), Value::Map(stats));
        }
        if let Some(plan) = &s.plan {
            meta.insert(if s.profiled { "profile" } else { "plan" }.into(), plan.clone());
        }
        let notifications: Vec<&Notification> =
            s.notifications.iter().filter(|n| self.tx_filter.allows(n)).collect();
        if self.version().at_least(5, 6) {
            // The result's own status first, then notifications, as Neo4j orders them.
            let mut statuses = vec![result_status(result)];
            statuses.extend(notifications.iter().map(|n| status_object(n)));
            meta.insert("statuses".into(), Value::List(statuses));
        } else if !notifications.is_empty() {
            meta.insert(
                "notifications".into(),
                Value::List(notifications.iter().map(|n| notification_map(n)).collect()),
            );
        }
        meta
    }
}

/// Which notifications the client asked for (`notifications_minimum_severity` and
/// `notifications_disabled_classifications`, or its pre-5.6 name `..._categories`), from HELLO,
/// overridden per transaction by BEGIN or an auto-commit RUN.
#[derive(Clone, Debug, Default, PartialEq)]
struct NotificationFilter {
    /// `OFF`, `WARNING` or `INFORMATION`; `None` = server default (everything).
    min_severity: Option<String>,
    disabled: Option<Vec<String>>,
}

impl NotificationFilter {
    fn from_extra(extra: &PropertyMap) -> NotificationFilter {
        let min_severity = match extra.get("notifications_minimum_severity") {
            Some(Value::String(s)) => Some(s.to_uppercase()),
            _ => None,
        };
        let list = extra
            .get("notifications_disabled_classifications")
            .or_else(|| extra.get("notifications_disabled_categories"));
        let disabled = match list {
            Some(Value::List(items)) => Some(
                items
                    .iter()
                    .filter_map(|v| match v {
                        Value::String(s) => Some(s.to_uppercase()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        };
        NotificationFilter { min_severity, disabled }
    }

    /// `other`'s settings where it has them, ours elsewhere.
    fn overlay(&self, other: NotificationFilter) -> NotificationFilter {
        NotificationFilter {
            min_severity: other.min_severity.or_else(|| self.min_severity.clone()),
            disabled: other.disabled.or_else(|| self.disabled.clone()),
        }
    }

    fn allows(&self, n: &Notification) -> bool {
        match self.min_severity.as_deref() {
            Some("OFF") => return false,
            Some("WARNING") if !n.severity.eq_ignore_ascii_case("WARNING") => return false,
            _ => {}
        }
        match &self.disabled {
            Some(d) => !d.iter().any(|c| c == notification_category(&n.code)),
            None => true,
        }
    }
}

/// `fields` and `t_first` of a RUN's SUCCESS.
fn run_metadata(info: &RunInfo, t_first: i64) -> PropertyMap {
    let mut meta = PropertyMap::new();
    meta.insert("fields".into(), Value::List(info.fields.iter().map(|f| Value::str(f)).collect()));
    meta.insert("t_first".into(), Value::Int(t_first));
    meta
}

/// The database a request names: absent, null or `""` mean the default, `neo4j`.
fn resolve_db(v: Option<&Value>) -> Result<(String, bool)> {
    match v {
        None | Some(Value::Null) => Ok(("neo4j".into(), false)),
        Some(Value::String(s)) if s.is_empty() => Ok(("neo4j".into(), false)),
        Some(Value::String(s)) => {
            // Neo4j database names are case-insensitive.
            let lower = s.to_lowercase();
            if lower == "neo4j" || lower == "system" {
                Ok((lower, true))
            } else {
                Err(Error::new(
                    Status::DatabaseNotFound,
                    format!("Database does not exist. Database name: '{s}'."),
                ))
            }
        }
        Some(other) => Err(Error::new(
            Status::RequestInvalid,
            format!("The database name must be a String, got {}.", other.type_name()),
        )),
    }
}

/// Transaction settings from BEGIN/RUN extras.
fn tx_config(extra: &PropertyMap, db: &str) -> Result<TxConfig> {
    let invalid = |what: &str, v: &Value| {
        Error::new(Status::RequestInvalid, format!("Invalid {what}: got {}.", v.type_name()))
    };
    let mut config = TxConfig { database: Some(db.to_string()), ..TxConfig::default() };
    match extra.get("mode") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if &**m == "r" => config.mode = AccessMode::Read,
        Some(Value::String(m)) if &**m == "w" => config.mode = AccessMode::Write,
        Some(v) => return Err(invalid("access mode", v)),
    }
    match extra.get("tx_timeout") {
        None | Some(Value::Null) => {}
        Some(Value::Int(ms)) if *ms > 0 => config.timeout = Some(Duration::from_millis(*ms as u64)),
        // 0 means "no timeout" in Neo4j.
        Some(Value::Int(0)) => {}
        Some(v) => return Err(invalid("transaction timeout", v)),
    }
    match extra.get("tx_metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Map(m)) => config.metadata = m.clone(),
        Some(v) => return Err(invalid("transaction metadata", v)),
    }
    match extra.get("bookmarks") {
        None | Some(Value::Null) => {}
        Some(Value::List(items)) => {
            for item in items {
                match item {
                    Value::String(s) => config.bookmarks.push(s.to_string()),
                    v => return Err(invalid("bookmark", v)),
                }
            }
        }
        Some(v) => return Err(invalid("bookmarks", v)),
    }
    Ok(config)
}

/// Neo4j's counter names; only non-zero counters are sent, plus `contains-updates`.
fn stats_map(s: &Stats) -> PropertyMap {
    let counters = [
        ("nodes-created", s.nodes_created),
        ("nodes-deleted", s.nodes_deleted),
        ("relationships-created", s.relationships_created),
        ("relationships-deleted", s.relationships_deleted),
        ("properties-set", s.properties_set),
        ("labels-added", s.labels_added),
        ("labels-removed", s.labels_removed),
        ("indexes-added", s.indexes_added),
        ("indexes-removed", s.indexes_removed),
        ("constraints-added", s.constraints_added),
        ("constraints-removed", s.constraints_removed),
    ];
    let mut m = PropertyMap::new();
    for (k, v) in counters {
        if v > 0 {
            m.insert(k.into(), Value::Int(i64::try_from(v).unwrap_or(i64::MAX)));
        }
    }
    if !m.is_empty() {
        m.insert("contains-updates".into(), Value::Bool(true));
    }
    // User administration, as Neo4j reports changes to its system graph.
    if s.system_updates > 0 {
        let n = i64::try_from(s.system_updates).unwrap_or(i64::MAX);
        m.insert("system-updates".into(), Value::Int(n));
        m.insert("contains-system-updates".into(), Value::Bool(true));
    }
    m
}

fn default_diagnostic_record() -> PropertyMap {
    let mut d = PropertyMap::new();
    d.insert("OPERATION".into(), Value::str(""));
    d.insert("OPERATION_CODE".into(), Value::str("0"));
    d.insert("CURRENT_SCHEMA".into(), Value::str("/"));
    d
}

fn position_map(n: &Notification) -> Option<Value> {
    n.position.map(|(line, column, offset)| {
        let mut p = PropertyMap::new();
        p.insert("offset".into(), Value::Int(offset as i64));
        p.insert("line".into(), Value::Int(line as i64));
        p.insert("column".into(), Value::Int(column as i64));
        Value::Map(p)
    })
}

/// The notification category (5.6+: classification) Neo4j would give this code.
fn notification_category(code: &str) -> &'static str {
    if code.contains("CartesianProduct") || code.contains("Eager") || code.contains("Performance") {
        "PERFORMANCE"
    } else if code.contains("Unknown") || code.contains("Missing") {
        "UNRECOGNIZED"
    } else if code.contains("Deprecat") {
        "DEPRECATION"
    } else if code.contains("Hint") {
        "HINT"
    } else {
        "GENERIC"
    }
}

/// A notification as Bolt 4.4-5.4 send it.
fn notification_map(n: &Notification) -> Value {
    let mut m = PropertyMap::new();
    m.insert("code".into(), Value::str(&n.code));
    m.insert("title".into(), Value::str(&n.title));
    m.insert("description".into(), Value::str(&n.description));
    m.insert("severity".into(), Value::str(&n.severity));
    m.insert("category".into(), Value::str(notification_category(&n.code)));
    if let Some(p) = position_map(n) {
        m.insert("position".into(), p);
    }
    Value::Map(m)
}

/// A notification as a 5.6+ GQL status object.
fn status_object(n: &Notification) -> Value {
    let warning = n.severity.eq_ignore_ascii_case("WARNING");
    let mut diag = default_diagnostic_record();
    diag.insert("_severity".into(), Value::str(&n.severity));
    diag.insert("_classification".into(), Value::str(notification_category(&n.code)));
    if let Some(p) = position_map(n) {
        diag.insert("_position".into(), p);
    }
    let mut m = PropertyMap::new();
    let fallback = if warning { "01N00" } else { "03N00" };
    let gql_status = if n.gql_status.is_empty() { fallback } else { &n.gql_status };
    m.insert("gql_status".into(), Value::str(gql_status));
    m.insert(
        "status_description".into(),
        Value::from(format!("{}: {}", if warning { "warn" } else { "info" }, n.description)),
    );
    m.insert("neo4j_code".into(), Value::str(&n.code));
    m.insert("title".into(), Value::str(&n.title));
    m.insert("description".into(), Value::str(&n.description));
    m.insert("diagnostic_record".into(), Value::Map(diag));
    Value::Map(m)
}

/// The status every 5.6+ result ends with: success, no data, or omitted result.
fn result_status(r: &OpenResult) -> Value {
    let (code, description) = if r.records > 0 {
        ("00000", "note: successful completion")
    } else if r.has_fields {
        ("02000", "note: no data")
    } else {
        ("00001", "note: successful completion - omitted result")
    };
    let mut m = PropertyMap::new();
    m.insert("gql_status".into(), Value::str(code));
    m.insert("status_description".into(), Value::str(description));
    m.insert("diagnostic_record".into(), Value::Map(default_diagnostic_record()));
    Value::Map(m)
}

/// FAILURE metadata in the shape the negotiated version expects: `code` + `message` up to 5.6;
/// from 5.7 the GQL fields (`neo4j_code`, `gql_status`, `description`, `diagnostic_record`).
pub(crate) fn failure_metadata(
    version: Version,
    code: &str,
    gql_status: &str,
    classification: &str,
    message: &str,
) -> PropertyMap {
    let mut meta = PropertyMap::new();
    meta.insert("message".into(), Value::str(message));
    if !version.at_least(5, 7) {
        meta.insert("code".into(), Value::str(code));
        return meta;
    }
    let condition = match gql_status.get(..2) {
        Some("42") => "syntax error or access rule violation",
        Some("22") => "data exception",
        Some("25") => "invalid transaction state",
        Some("40") => "transaction rollback",
        Some("08") => "connection exception",
        Some("51") => "system configuration or operation exception",
        _ => "general processing exception",
    };
    let mut diag = default_diagnostic_record();
    diag.insert("_classification".into(), Value::str(classification));
    meta.insert("neo4j_code".into(), Value::str(code));
    meta.insert("gql_status".into(), Value::str(gql_status));
    meta.insert("description".into(), Value::from(format!("error: {condition}. {message}")));
    meta.insert("diagnostic_record".into(), Value::Map(diag));
    meta
}

/// Writes one message directly (used for refusing connections over the limit).
pub(crate) fn write_single_failure(
    mut out: impl Write,
    version: Version,
    code: &str,
    gql_status: &str,
    message: &str,
) -> io::Result<()> {
    let meta = failure_metadata(version, code, gql_status, "TRANSIENT_ERROR", message);
    let mut w = MessageWriter::new(&mut out, 1024);
    let _ = w.message(|b| message::write_failure(b, &meta, dialect_for(version)));
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(code: &str, severity: &str) -> Notification {
        Notification {
            code: code.into(),
            gql_status: String::new(),
            title: "t".into(),
            description: "d".into(),
            severity: severity.into(),
            position: Some((1, 2, 3)),
        }
    }

    fn extra(entries: &[(&str, Value)]) -> PropertyMap {
        entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn system_updates_are_counted_as_neo4j_does() {
        let m = stats_map(&Stats { system_updates: 1, ..Stats::default() });
        assert!(matches!(m.get("system-updates"), Some(Value::Int(1))));
        assert!(matches!(m.get("contains-system-updates"), Some(Value::Bool(true))));
        assert!(m.get("contains-updates").is_none());
        assert!(stats_map(&Stats::default()).is_empty());
    }

    #[test]
    fn notification_filters_follow_hello_and_per_transaction_settings() {
        let cartesian = note("Neo.ClientNotification.Statement.CartesianProduct", "INFORMATION");
        let unknown = note("Neo.ClientNotification.Statement.UnknownLabelWarning", "WARNING");
        let all = NotificationFilter::default();
        assert!(all.allows(&cartesian) && all.allows(&unknown));

        let hello = NotificationFilter::from_extra(&extra(&[(
            "notifications_minimum_severity",
            Value::str("WARNING"),
        )]));
        assert!(!hello.allows(&cartesian) && hello.allows(&unknown));
        // A transaction can switch notifications off entirely...
        let off = hello.overlay(NotificationFilter::from_extra(&extra(&[(
            "notifications_minimum_severity",
            Value::str("OFF"),
        )])));
        assert!(!off.allows(&unknown));
        // ...or disable a classification while keeping HELLO's severity.
        let tx = hello.overlay(NotificationFilter::from_extra(&extra(&[(
            "notifications_disabled_classifications",
            Value::List(vec![Value::str("unrecognized")]),
        )])));
        assert!(!tx.allows(&unknown) && !tx.allows(&cartesian));
        // The pre-5.6 name works too.
        let legacy = NotificationFilter::from_extra(&extra(&[(
            "notifications_disabled_categories",
            Value::List(vec![Value::str("PERFORMANCE")]),
        )]));
        assert!(!legacy.allows(&cartesian) && legacy.allows(&unknown));
    }

    #[test]
    fn failure_metadata_has_the_fields_of_each_version() {
        let old = failure_metadata(Version::new(5, 6), "Neo.X.Y.Z", "42001", "CLIENT_ERROR", "m");
        assert_eq!(old.keys().collect::<Vec<_>>(), vec!["code", "message"]);
        let new = failure_metadata(Version::new(5, 7), "Neo.X.Y.Z", "42001", "CLIENT_ERROR", "m");
        let mut keys: Vec<_> = new.keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            vec!["description", "diagnostic_record", "gql_status", "message", "neo4j_code"]
        );
        assert!(matches!(new.get("description"), Some(Value::String(d))
            if d.starts_with("error: syntax error or access rule violation")));
    }

    #[test]
    fn statuses_and_notifications_carry_positions_and_categories() {
        let n = note("Neo.ClientNotification.Statement.CartesianProduct", "WARNING");
        let Value::Map(m) = notification_map(&n) else { panic!() };
        assert!(matches!(m.get("category"), Some(Value::String(c)) if &**c == "PERFORMANCE"));
        let Some(Value::Map(p)) = m.get("position") else { panic!() };
        assert!(matches!(p.get("offset"), Some(Value::Int(3))));
        assert!(matches!(p.get("line"), Some(Value::Int(1))));
        let Value::Map(s) = status_object(&n) else { panic!() };
        assert!(matches!(s.get("gql_status"), Some(Value::String(g)) if g.starts_with("01")));
        assert!(matches!(s.get("neo4j_code"), Some(Value::String(_))));
        let r = OpenResult { key: -1, engine_qid: None, has_fields: true, records: 0 };
        let Value::Map(s) = result_status(&r) else { panic!() };
        assert!(matches!(s.get("gql_status"), Some(Value::String(g)) if &**g == "02000"));
    }

    #[test]
    fn databases_and_transaction_settings_are_validated() {
        assert_eq!(resolve_db(None).unwrap(), ("neo4j".to_string(), false));
        assert_eq!(resolve_db(Some(&Value::str(""))).unwrap(), ("neo4j".to_string(), false));
        assert_eq!(resolve_db(Some(&Value::str("SYSTEM"))).unwrap(), ("system".to_string(), true));
        assert_eq!(
            resolve_db(Some(&Value::str("x"))).unwrap_err().status,
            Status::DatabaseNotFound
        );
        assert_eq!(resolve_db(Some(&Value::Int(1))).unwrap_err().status, Status::RequestInvalid);

        let c = tx_config(
            &extra(&[
                ("mode", Value::str("r")),
                ("tx_timeout", Value::Int(1500)),
                ("bookmarks", Value::List(vec![Value::str("neo4j:3")])),
                ("tx_metadata", Value::Map(extra(&[("app", Value::str("x"))]))),
            ]),
            "neo4j",
        )
        .unwrap();
        assert_eq!(c.mode, AccessMode::Read);
        assert_eq!(c.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(c.bookmarks, vec!["neo4j:3".to_string()]);
        assert!(c.metadata.contains_key("app"));
        assert_eq!(c.database.as_deref(), Some("neo4j"));
        assert!(tx_config(&extra(&[("mode", Value::str("x"))]), "neo4j").is_err());
        assert!(tx_config(&extra(&[("tx_timeout", Value::Int(-1))]), "neo4j").is_err());
        assert!(
            tx_config(&extra(&[("bookmarks", Value::List(vec![Value::Int(1)]))]), "neo4j").is_err()
        );
    }

    #[test]
    fn stats_only_carry_nonzero_counters() {
        assert!(stats_map(&Stats::default()).is_empty());
        let s = Stats { labels_removed: 3, ..Stats::default() };
        let m = stats_map(&s);
        assert!(matches!(m.get("labels-removed"), Some(Value::Int(3))));
        assert!(matches!(m.get("contains-updates"), Some(Value::Bool(true))));
        assert_eq!(m.len(), 2);
    }
}
