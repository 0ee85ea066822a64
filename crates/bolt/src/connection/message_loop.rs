//! The message loop: accepting a connection (TLS sniff, handshake), the reader thread that
//! reassembles messages and makes `RESET` jump ahead, and the worker loop that dispatches each
//! request by state.

use std::io::Read;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_model::{Error, PropertyMap, Status};
use tracing::{debug, info, warn};

use super::guard::{drain, Deadlined, LoginClock, OpenTicket};
use super::*;
use crate::handshake::{self, Negotiated};
use crate::message::{self, parse_request, peek_tag, tag, Request};
use crate::packstream::DecodeErrorKind;
use crate::tls::{Opening, Sock, TlsLevel};
use crate::transport::{MessageReader, MessageWriter, ReadError};

/// How a connection's activation ended, for what `resume` does next.
pub(super) enum Ending {
    Normal,
    /// The client is probably still sending the rest of an oversized message.
    Oversized,
    /// Idle: the connection waits in the readiness loop, holding no thread.
    Park,
}

pub(super) enum Inbound {
    Message(Vec<u8>),
    /// The peer went away; `Some` carries why, when it was not a clean close.
    Closed(Option<String>),
    TooLarge(usize),
    /// Server shutdown, seen while the connection was idle.
    Stopped,
    /// The reader saw the connection idle for `Limits::park_after` with everything answered,
    /// and has ended.
    Park,
}

/// A connection between activations: its whole state (session, state machine, socket), with
/// no thread. Only plaintext connections park (TLS and WebSocket may hold decoded bytes the
/// socket's readiness does not show).
pub(crate) struct Parked<B: Backend> {
    conn: Conn<B>,
    sock: Arc<Sock>,
    _ticket: OpenTicket,
}

impl<B: Backend> Parked<B> {
    /// The socket, to wait for its readiness.
    pub(crate) fn tcp(&self) -> &TcpStream {
        self.sock.tcp()
    }

    pub(crate) fn conn_no(&self) -> u64 {
        self.conn.conn_no
    }

    /// Answers the request that woke this connection with a transient `FAILURE` (read within
    /// `wait`, so the reply is not lost to a reset), then closes it: for a server whose
    /// threads are all busy.
    pub(crate) fn refuse(self, code: &str, message: &str, wait: Duration) {
        let deadline = Instant::now() + wait;
        let _ = self.sock.tcp().set_write_timeout(Some(wait));
        let sock: &Sock = &self.sock;
        let max = self.conn.shared.limits.max_message_bytes;
        let mut reader = MessageReader::new(Deadlined { sock, deadline }, max);
        if reader.read_message(&|| true).is_ok() {
            let version = self.conn.negotiated.version;
            let _ = super::write_single_failure(sock.tcp(), version, code, "50N00", message);
        }
    }

    /// Past the login deadline (a connection that has not logged in is closed then).
    pub(crate) fn login_expired(&self) -> bool {
        self.conn.login_clock.expired()
    }
}

impl<B: Backend> Drop for Parked<B> {
    fn drop(&mut self) {
        self.sock.shutdown();
    }
}

/// Serves one accepted connection until it ends (`None`) or parks. Never panics on client
/// input; every way out but parking closes the socket. `pre_auth` is the connection's place
/// among those not yet logged in.
pub(crate) fn run<B: Backend>(
    stream: TcpStream,
    backend: B,
    shared: &Arc<Shared>,
    conn_no: u64,
    pre_auth: Option<PreAuthSlot>,
    ticket: OpenTicket,
) -> Option<Parked<B>> {
    let opened = Instant::now();
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into());
    let local = stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let (sock, negotiated) = open(stream, shared, &peer, opened)?;
    debug!(peer = %peer, conn = conn_no, tls = sock.is_tls(), "Bolt connection negotiated version {}", negotiated.version);

    // From here on the socket's read timeout is only a shutdown poll for the reader thread.
    let _ = sock.tcp().set_read_timeout(Some(shared.limits.poll_interval));
    let sock = Arc::new(sock);
    let interrupt = backend.interrupt_flag();
    let mut conn = Conn {
        backend,
        writer: MessageWriter::new(SockWriter(sock.clone()), shared.limits.flush_threshold),
        shared: shared.clone(),
        negotiated,
        dialect: dialect_for(negotiated.version),
        state: State::Negotiation,
        conn_no,
        peer,
        local,
        results: Vec::new(),
        last_key: None,
        next_key: 0,
        db: "neo4j".to_string(),
        hello_filter: NotificationFilter::default(),
        tx_filter: NotificationFilter::default(),
        pending_resets: Arc::new(AtomicUsize::new(0)),
        interrupt,
        pre_auth,
        login_clock: Arc::new(LoginClock::new(opened, shared.limits.login_timeout)),
    };
    conn.backend.set_client(&format!("bolt-{conn_no}"), &conn.peer);
    resume(Parked { conn, sock, _ticket: ticket })
}

/// One activation of a connection: a reader thread feeds the worker (this thread) until the
/// connection ends (`None`) or has been idle long enough to park (`Some`).
pub(crate) fn resume<B: Backend>(parked: Parked<B>) -> Option<Parked<B>> {
    let conn_no = parked.conn.conn_no;
    let peer = parked.conn.peer.clone();
    let read_half = match parked.sock.try_clone() {
        Ok(s) => s,
        Err(e) => {
            warn!(peer = %peer, "cannot clone the connection socket: {e}");
            return None;
        }
    };
    let shared = parked.conn.shared.clone();
    let (tx, rx) = mpsc::sync_channel(shared.limits.queue_depth);
    let done = Arc::new(AtomicU64::new(0));
    let reader = {
        let negotiated = parked.conn.negotiated;
        let signals = ReaderSignals {
            pending_resets: parked.conn.pending_resets.clone(),
            interrupt: parked.conn.interrupt.clone(),
            shutdown: shared.shutdown.clone(),
            login_clock: parked.conn.login_clock.clone(),
            // Before 5.1 the credentials travel in HELLO, from 5.1 in LOGON.
            credentials_tag: if negotiated.version.at_least(5, 1) {
                tag::LOGON
            } else {
                tag::HELLO
            },
            park_after: matches!(*parked.sock, Sock::Plain(_)).then_some(shared.limits.park_after),
            pressure: shared.pressure.clone(),
            done: done.clone(),
        };
        let max = shared.limits.max_message_bytes;
        std::thread::Builder::new()
            .name(format!("bolt-read-{conn_no}"))
            .stack_size(256 * 1024)
            .spawn(move || read_loop(read_half, max, tx, signals))
    };
    let reader = match reader {
        Ok(h) => h,
        Err(e) => {
            warn!(peer = %peer, "cannot start a reader thread: {e}");
            return None;
        }
    };
    let mut parked = parked;
    match parked.conn.serve(rx, &done) {
        // The reader has ended already: it asked for the park.
        Ending::Park if !shared.shutdown.load(Ordering::SeqCst) => {
            let _ = reader.join();
            return Some(parked);
        }
        Ending::Park | Ending::Normal => {}
        Ending::Oversized => drain(&parked.sock, shared.limits.max_message_bytes, DRAIN_WAIT),
    }
    // Unblocks the reader if it is still waiting for bytes.
    parked.sock.shutdown();
    let _ = reader.join();
    drop(parked);
    debug!(peer = %peer, conn = conn_no, "Bolt connection closed");
    None
}

/// How long a client that sent an oversized message gets to finish sending it (and read the
/// `FAILURE`) before the socket is closed.
const DRAIN_WAIT: Duration = Duration::from_secs(5);

/// TLS sniffing and the version handshake, all within the handshake deadline.
fn open(
    stream: TcpStream,
    shared: &Shared,
    peer: &str,
    opened: Instant,
) -> Option<(Sock, Negotiated)> {
    let deadline = opened + shared.limits.handshake_timeout;
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(shared.limits.handshake_timeout));
    let sock = match &shared.tls {
        None => Sock::Plain(stream),
        Some(tls) => match crate::tls::sniff(&stream) {
            Ok(Opening::Tls) => match Sock::tls(tls, stream) {
                Ok(s) => s,
                Err(e) => {
                    warn!(peer = %peer, "{e}");
                    return None;
                }
            },
            Ok(Opening::Plain) if tls.level == TlsLevel::Optional => Sock::Plain(stream),
            Ok(Opening::Plain) => {
                info!(peer = %peer, "plaintext Bolt connection closed: this server requires TLS");
                let _ = stream.shutdown(Shutdown::Both);
                return None;
            }
            Err(e) => {
                info!(peer = %peer, "Bolt connection closed before its handshake: {e}");
                let _ = stream.shutdown(Shutdown::Both);
                return None;
            }
        },
    };
    let (sock, result) = bolt_or_websocket(sock, deadline, peer);
    match result {
        Ok(n) => Some((sock, n)),
        Err(e) => {
            info!(peer = %peer, tls = sock.is_tls(), "Bolt handshake failed: {e}");
            sock.shutdown();
            None
        }
    }
}

/// Reads the first four bytes: the Bolt magic starts the version handshake; `GET ` is a
/// WebSocket upgrade, after which the handshake runs inside frames.
fn bolt_or_websocket(
    sock: Sock,
    deadline: Instant,
    peer: &str,
) -> (Sock, Result<handshake::Negotiated, handshake::HandshakeError>) {
    let mut first = [0u8; 4];
    let read = (Deadlined { sock: &sock, deadline }).read_exact(&mut first);
    if let Err(e) = read {
        return (sock, Err(e.into()));
    }
    if first != crate::websocket::GET {
        let result =
            handshake::perform_after_magic(&mut Deadlined { sock: &sock, deadline }, first);
        return (sock, result);
    }
    match crate::websocket::upgrade(&mut Deadlined { sock: &sock, deadline }) {
        Ok(true) => {
            debug!(peer = %peer, "WebSocket upgrade");
            let ws = Sock::Ws(Arc::new(crate::websocket::WsConn::new(sock)));
            let result = handshake::perform(&mut Deadlined { sock: &ws, deadline });
            (ws, result)
        }
        Ok(false) => (sock, Err(handshake::HandshakeError::BadMagic(first))),
        Err(e) => (sock, Err(e.into())),
    }
}

/// What the reader thread signals through, besides its queue.
struct ReaderSignals {
    pending_resets: Arc<AtomicUsize>,
    interrupt: Arc<AtomicBool>,
    shutdown: Arc<AtomicBool>,
    login_clock: Arc<LoginClock>,
    /// The message carrying credentials (HELLO before 5.1, LOGON after): it stops the clock.
    credentials_tag: u8,
    /// Park after this long idle (`None`: this connection never parks).
    park_after: Option<Duration>,
    /// While set (connections wait for a thread), park as soon as idle.
    pressure: Arc<AtomicBool>,
    /// Messages the worker has finished; parking waits until it has finished all sent.
    done: Arc<AtomicU64>,
}

/// The reader thread: reassembles messages and forwards them; handles the jump-ahead signals
/// and the login deadline.
fn read_loop(stream: Sock, max_message: usize, tx: SyncSender<Inbound>, signals: ReaderSignals) {
    let ReaderSignals {
        pending_resets,
        interrupt,
        shutdown,
        login_clock,
        credentials_tag,
        park_after,
        pressure,
        done,
    } = signals;
    let mut reader = MessageReader::new(&stream, max_message);
    let expired = || login_clock.expired();
    let mut sent = 0u64;
    let mut last = Instant::now();
    loop {
        let mut msg = Vec::new();
        // Asked only between messages with nothing buffered (see `MessageReader`), so parking
        // never strands bytes read ahead.
        let idle = |since: Instant| {
            park_after
                .is_some_and(|after| since.elapsed() >= after || pressure.load(Ordering::Relaxed))
                && done.load(Ordering::SeqCst) == sent
        };
        let stop = || shutdown.load(Ordering::Relaxed) || idle(last);
        let event = match reader.read_message_until(&mut msg, &stop, &expired) {
            Ok(()) => {
                let t = peek_tag(&msg);
                if t == Some(credentials_tag) {
                    login_clock.disarm();
                }
                if t == Some(tag::RESET) {
                    // Count first, then interrupt: the worker clears the flag only when no
                    // RESET is pending.
                    pending_resets.fetch_add(1, Ordering::SeqCst);
                    interrupt.store(true, Ordering::SeqCst);
                } else if t == Some(tag::GOODBYE) {
                    interrupt.store(true, Ordering::SeqCst);
                }
                sent += 1;
                last = Instant::now();
                if tx.send(Inbound::Message(msg)).is_err() || t == Some(tag::GOODBYE) {
                    return;
                }
                continue;
            }
            Err(ReadError::Stopped) if !shutdown.load(Ordering::Relaxed) => {
                // Idle with every request answered: hand the connection to the readiness loop.
                let _ = tx.send(Inbound::Park);
                return;
            }
            Err(ReadError::Expired) => {
                Inbound::Closed(Some("no credentials within the login timeout".into()))
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

impl<B: Backend> Conn<B> {
    /// Answers requests until the connection is to close; says whether the client was cut off
    /// in the middle of an oversized message.
    pub(super) fn serve(&mut self, rx: Receiver<Inbound>, done: &AtomicU64) -> Ending {
        let mut next: Option<Inbound> = None;
        let mut ending = Ending::Normal;
        loop {
            let event = match next.take() {
                Some(e) => e,
                None => match rx.recv() {
                    Ok(e) => e,
                    Err(_) => break,
                },
            };
            let flow = match event {
                Inbound::Message(bytes) => {
                    let flow = self.on_message(&bytes);
                    done.fetch_add(1, Ordering::SeqCst);
                    flow
                }
                Inbound::Park => {
                    if self.writer.flush().is_err() {
                        break;
                    }
                    return Ending::Park;
                }
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
                    ending = Ending::Oversized;
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
        ending
    }

    pub(super) fn on_message(&mut self, bytes: &[u8]) -> Flow {
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

    pub(super) fn dispatch(&mut self, request: Request) -> Flow {
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
                self.login_clock.rearm(self.shared.limits.login_timeout);
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

    pub(super) fn success(&mut self, meta: PropertyMap) -> Flow {
        let d = self.dialect;
        match self.writer.message(|b| message::write_success(b, &meta, d)) {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Close,
        }
    }

    pub(super) fn ignored(&mut self) -> Flow {
        match self.writer.message(message::write_ignored) {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Close,
        }
    }
}
