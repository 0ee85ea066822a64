//! The readiness loop (mio/epoll): it accepts connections up to `max_connections` (a clean
//! refusal beyond), keeps every connection that has nothing to do (accepted but silent, or
//! parked after `Limits::park_after` idle) without a thread, and starts a thread for one when
//! its bytes arrive, up to `Limits::max_active` at once (beyond, the connection waits in a
//! queue for a thread, at most `Limits::active_wait`, then its request is refused with
//! `NoThreadsAvailable`, as Neo4j's bounded Bolt thread pool refuses; meanwhile idle active
//! connections park at their reader's next poll instead of after `Limits::park_after`). It also enforces the handshake and login deadlines of waiting connections,
//! and stops in order (stop accepting, close idle connections; each active connection's reader
//! sees the shutdown within a poll interval and interrupts its running query; close what is
//! left after a grace period).

use std::collections::{HashMap, VecDeque};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use tracing::{info, warn};

use crate::connection::Deadlined;
use crate::connection::{self, Backend, Limits, LoginGuard, OpenTicket, Parked, PeerSlots};
use crate::connection::{PreAuthSlot, Shared};
use crate::handshake;
use crate::transport::MessageReader;
use crate::{BoltError, ServerConfig};
use arbor_engine::metrics::{bump, SERVER};

/// How long the accept loop waits for a connection before it looks at the shutdown flag again.
/// Waiting is readiness-based (epoll via mio), so a connecting driver is accepted at once and an
/// idle server does not wake up hundreds of times a second.
const ACCEPT_WAIT: Duration = Duration::from_millis(200);

/// At most this many refusals are answered at once; beyond that, excess connections are just
/// closed, so a connection flood cannot make us spawn threads without bound.
const MAX_CONCURRENT_REFUSALS: usize = 8;

/// Total time a refused connection gets to say HELLO and read why it is refused.
const REFUSAL_WAIT: Duration = Duration::from_secs(2);

/// Stack for connection threads: queries are evaluated on them, and parsing and evaluation
/// recurse over the query's structure.
const CONNECTION_STACK_BYTES: usize = 16 << 20;

/// Binds the listening socket (so the caller can report the real port before serving).
pub fn bind(config: &ServerConfig) -> std::io::Result<TcpListener> {
    TcpListener::bind(config.listen)
}

/// Binds and serves until `shutdown` becomes true.
pub fn serve(
    db: arbor_engine::Database,
    config: ServerConfig,
    shutdown: Arc<AtomicBool>,
) -> Result<(), BoltError> {
    let listener = bind(&config)?;
    serve_listener(listener, db, config, shutdown)
}

/// Serves on an already bound listener until `shutdown` becomes true, then stops accepting,
/// lets connections finish their current message, and returns.
pub fn serve_listener(
    listener: TcpListener,
    db: arbor_engine::Database,
    config: ServerConfig,
    shutdown: Arc<AtomicBool>,
) -> Result<(), BoltError> {
    // Cypher user administration and Bolt authentication share one store (attached below).
    serve_listener_with_limits(listener, db, config, Limits::default(), shutdown)
}

/// [`serve_listener`] with explicit connection limits and timeouts.
pub fn serve_listener_with_limits(
    listener: TcpListener,
    db: arbor_engine::Database,
    config: ServerConfig,
    limits: Limits,
    shutdown: Arc<AtomicBool>,
) -> Result<(), BoltError> {
    let logins = Arc::new(LoginGuard::new(limits.logins.clone()));
    serve_listener_shared(listener, db, config, limits, logins, shutdown)
}

/// [`serve_listener_with_limits`] with a login limiter shared with another server (the HTTP
/// port), so lockouts and the hashing pool span both.
pub fn serve_listener_shared(
    listener: TcpListener,
    db: arbor_engine::Database,
    config: ServerConfig,
    limits: Limits,
    logins: Arc<LoginGuard>,
    shutdown: Arc<AtomicBool>,
) -> Result<(), BoltError> {
    if let Some(store) = &config.auth {
        db.attach_users(store.clone());
    }
    serve_with(listener, move || db.session(), config, limits, logins, shutdown)
}

struct Live {
    handle: JoinHandle<()>,
    /// A second handle on the socket, to close it if the connection outstays the grace period.
    socket: TcpStream,
}

/// A connection that holds no thread: waiting in the readiness loop for its next bytes.
enum Waiting<B: Backend> {
    /// Accepted, nothing received yet; closed if the handshake has not started by `deadline`.
    Fresh { stream: TcpStream, slot: PreAuthSlot, ticket: OpenTicket, id: u64, deadline: Instant },
    /// Idle between requests (see `connection::Parked`).
    Parked(Box<Parked<B>>),
}

impl<B: Backend> Waiting<B> {
    fn tcp(&self) -> &TcpStream {
        match self {
            Waiting::Fresh { stream, .. } => stream,
            Waiting::Parked(p) => p.tcp(),
        }
    }

    /// Why it must be closed now, if it must.
    fn overdue(&self) -> Option<&'static str> {
        match self {
            Waiting::Fresh { deadline, .. } if Instant::now() >= *deadline => {
                Some("no Bolt handshake within the handshake timeout")
            }
            Waiting::Parked(p) if p.login_expired() => {
                Some("no credentials within the login timeout")
            }
            _ => None,
        }
    }
}

const LISTENER: mio::Token = mio::Token(0);
const WAKER: mio::Token = mio::Token(1);

/// The readiness loop's state: the listener, the connections waiting without a thread, and
/// the threads of active ones.
struct Server<B: Backend, F> {
    poll: mio::Poll,
    listener: TcpListener,
    factory: Arc<F>,
    shared: Arc<Shared>,
    max_connections: usize,
    peers: Arc<PeerSlots>,
    refusals: Arc<AtomicUsize>,
    /// Connections open (waiting or active), for `max_connections`.
    open: Arc<AtomicUsize>,
    /// Connections being served by a thread, for `Limits::max_active`.
    active: Arc<AtomicUsize>,
    /// Connections with bytes to serve while `max_active` are served, oldest first, with
    /// when they started waiting (not registered for readiness meanwhile).
    queued: VecDeque<(Instant, Waiting<B>)>,
    live: Vec<Live>,
    waiting: HashMap<usize, Waiting<B>>,
    next_token: usize,
    next_id: u64,
    /// Activations that end idle send their connection back here, then wake the loop.
    parked_tx: mpsc::Sender<Parked<B>>,
    waker: Arc<mio::Waker>,
}

/// The server loop over any session factory (tests use a scripted backend).
pub(crate) fn serve_with<B, F>(
    listener: TcpListener,
    factory: F,
    config: ServerConfig,
    limits: Limits,
    logins: Arc<LoginGuard>,
    shutdown: Arc<AtomicBool>,
) -> Result<(), BoltError>
where
    B: Backend + Send + 'static,
    F: Fn() -> B + Send + Sync + 'static,
{
    listener.set_nonblocking(true)?;
    let poll = mio::Poll::new()?;
    let mut events = mio::Events::with_capacity(256);
    let listener_fd = listener.as_raw_fd();
    poll.registry().register(&mut SourceFd(&listener_fd), LISTENER, mio::Interest::READABLE)?;
    let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER)?);
    let grace = limits.shutdown_grace;
    let (parked_tx, parked_rx) = mpsc::channel();
    let mut server = Server {
        poll,
        listener,
        factory: Arc::new(factory),
        peers: PeerSlots::new(limits.max_unauthenticated_per_address),
        shared: Arc::new(Shared {
            logins,
            auth: config.auth.clone(),
            tls: config.tls.clone(),
            advertised_address: config.advertised_address.clone(),
            limits,
            shutdown: shutdown.clone(),
            pressure: Arc::new(AtomicBool::new(false)),
        }),
        max_connections: config.max_connections,
        refusals: Arc::new(AtomicUsize::new(0)),
        open: Arc::new(AtomicUsize::new(0)),
        active: Arc::new(AtomicUsize::new(0)),
        queued: VecDeque::new(),
        live: Vec::new(),
        waiting: HashMap::new(),
        next_token: 2,
        next_id: 0,
        parked_tx,
        waker,
    };
    let mut last_sweep = Instant::now();
    while !shutdown.load(Ordering::SeqCst) {
        if let Err(e) = server.poll.poll(&mut events, Some(ACCEPT_WAIT)) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                warn!("waiting for Bolt connections failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        for event in events.iter() {
            match event.token() {
                LISTENER => server.accept_pending(),
                WAKER => {}
                mio::Token(t) => server.activate_waiting(t, event.is_read_closed()),
            }
        }
        while let Ok(p) = parked_rx.try_recv() {
            server.wait(Waiting::Parked(Box::new(p)));
        }
        server.serve_queued();
        if last_sweep.elapsed() >= ACCEPT_WAIT {
            last_sweep = Instant::now();
            server.sweep();
        }
    }
    server.stop(grace);
    drop(parked_rx);
    Ok(())
}

impl<B, F> Server<B, F>
where
    B: Backend + Send + 'static,
    F: Fn() -> B + Send + Sync + 'static,
{
    /// Accepts every pending connection (the listener's readiness is edge-triggered).
    fn accept_pending(&mut self) {
        loop {
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // E.g. out of file descriptors: keep serving the connections we have.
                    warn!("accepting a Bolt connection failed: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                    return;
                }
            };
            self.next_id += 1;
            if stream.set_nonblocking(false).is_err() {
                continue;
            }
            let open = self.open.load(Ordering::SeqCst);
            if open >= self.max_connections {
                warn!(peer = %peer, "refusing Bolt connection: {open} connections already open (--max-connections)");
                bump(&SERVER.bolt_refused);
                refuse(stream, &self.refusals, FULL);
                continue;
            }
            let Some(slot) = self.peers.acquire(peer.ip()) else {
                warn!(peer = %peer, "refusing Bolt connection: too many connections from this address have not logged in");
                bump(&SERVER.bolt_refused);
                refuse(stream, &self.refusals, FULL);
                continue;
            };
            let ticket = OpenTicket::new(self.open.clone());
            let deadline = Instant::now() + self.shared.limits.handshake_timeout;
            self.wait(Waiting::Fresh { stream, slot, ticket, id: self.next_id, deadline });
        }
    }

    /// Registers a connection for readiness; it holds no thread until its next bytes arrive.
    fn wait(&mut self, w: Waiting<B>) {
        let token = self.next_token;
        self.next_token += 1;
        let fd = w.tcp().as_raw_fd();
        let registered = self.poll.registry().register(
            &mut SourceFd(&fd),
            mio::Token(token),
            mio::Interest::READABLE,
        );
        match registered {
            Ok(()) => {
                self.waiting.insert(token, w);
            }
            // Serve it on a thread rather than lose it.
            Err(e) => {
                warn!("cannot wait for a Bolt connection's readiness: {e}");
                self.activate(w);
            }
        }
    }

    /// A waiting connection's bytes arrived (or its peer hung up: `closed`).
    fn activate_waiting(&mut self, token: usize, closed: bool) {
        if let Some(w) = self.waiting.remove(&token) {
            let fd = w.tcp().as_raw_fd();
            let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
            // A peer that hung up with nothing left to read needs no thread to notice: dropping
            // closes the socket and ends the session (rolling back an open transaction), so
            // thousands of parked clients going away at once cannot queue ahead of new ones.
            let mut byte = [0u8; 1];
            if closed && matches!(w.tcp().peek(&mut byte), Ok(0)) {
                return;
            }
            self.activate(w);
        }
    }

    /// Serves a connection on a thread until it ends or parks again; queues it when
    /// `Limits::max_active` connections hold threads already.
    fn activate(&mut self, w: Waiting<B>) {
        if self.active.load(Ordering::SeqCst) >= self.shared.limits.max_active {
            self.queued.push_back((Instant::now(), w));
        } else {
            self.start_thread(w);
        }
    }

    /// Starts threads for queued connections while there is room, and refuses the requests
    /// of those that have waited `Limits::active_wait`.
    fn serve_queued(&mut self) {
        while !self.queued.is_empty()
            && self.active.load(Ordering::SeqCst) < self.shared.limits.max_active
        {
            if let Some((_, w)) = self.queued.pop_front() {
                self.start_thread(w);
            }
        }
        let wait = self.shared.limits.active_wait;
        while self.queued.front().is_some_and(|(since, _)| since.elapsed() >= wait) {
            let Some((_, w)) = self.queued.pop_front() else { break };
            warn!(
                "refusing a Bolt request: {} connections are being served (--bolt-thread-pool-max-size)",
                self.active.load(Ordering::SeqCst)
            );
            bump(&SERVER.bolt_refused);
            match w {
                Waiting::Fresh { stream, .. } => refuse(stream, &self.refusals, BUSY),
                Waiting::Parked(p) => refuse_parked(*p, &self.refusals),
            }
        }
        self.shared.pressure.store(!self.queued.is_empty(), Ordering::Relaxed);
    }

    fn start_thread(&mut self, w: Waiting<B>) {
        let socket = match w.tcp().try_clone() {
            Ok(s) => s,
            Err(e) => {
                warn!("cannot use a Bolt connection's socket: {e}");
                return;
            }
        };
        let id = match &w {
            Waiting::Fresh { id, .. } => *id,
            Waiting::Parked(p) => p.conn_no(),
        };
        let shared = self.shared.clone();
        let factory = self.factory.clone();
        let back = self.parked_tx.clone();
        let waker = self.waker.clone();
        let slot = ActiveSlot::take(&self.active, &self.waker);
        let spawned = std::thread::Builder::new()
            .name(format!("bolt-conn-{id}"))
            .stack_size(CONNECTION_STACK_BYTES)
            .spawn(move || {
                let parked = match w {
                    Waiting::Fresh { stream, slot, ticket, id, .. } => {
                        connection::run(stream, factory(), &shared, id, Some(slot), ticket)
                    }
                    Waiting::Parked(p) => connection::resume(*p),
                };
                // Free the thread's place before the loop can see the connection again.
                drop(slot);
                if let Some(p) = parked {
                    if back.send(p).is_ok() {
                        let _ = waker.wake();
                    }
                }
            });
        match spawned {
            Ok(handle) => self.live.push(Live { handle, socket }),
            Err(e) => warn!("cannot start a Bolt connection thread: {e}"),
        }
    }

    /// Closes waiting connections past their deadlines and forgets finished threads.
    fn sweep(&mut self) {
        self.live.retain(|c| !c.handle.is_finished());
        let overdue: Vec<usize> = self
            .waiting
            .iter()
            .filter_map(|(t, w)| w.overdue().map(|why| (t, why)))
            .map(|(t, why)| {
                info!("closing Bolt connection: {why}");
                *t
            })
            .collect();
        for t in overdue {
            if let Some(w) = self.waiting.remove(&t) {
                let fd = w.tcp().as_raw_fd();
                let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
                let _ = w.tcp().shutdown(Shutdown::Both);
            }
        }
    }

    /// Stops accepting, closes idle connections, gives active ones `grace` to finish.
    fn stop(self, grace: Duration) {
        let Server { listener, waiting, queued, mut live, .. } = self;
        drop(listener);
        drop(waiting);
        drop(queued);
        live.retain(|c| !c.handle.is_finished());
        if !live.is_empty() {
            info!("Bolt server stopping: waiting for {} open connections", live.len());
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && live.iter().any(|c| !c.handle.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
        }
        for c in &live {
            if !c.handle.is_finished() {
                // Unblocks its reader and writer; the reader then interrupts any running query.
                let _ = c.socket.shutdown(Shutdown::Both);
            }
        }
        for c in live {
            if c.handle.join().is_err() {
                warn!("a Bolt connection thread panicked");
            }
        }
    }
}

/// One connection's place among those served by a thread (`Limits::max_active`), given back
/// when dropped (the thread may end by a panic too).
/// The readiness loop is woken then, for the queued connections.
struct ActiveSlot(Arc<AtomicUsize>, Option<Arc<mio::Waker>>);

impl ActiveSlot {
    fn take(active: &Arc<AtomicUsize>, waker: &Arc<mio::Waker>) -> ActiveSlot {
        active.fetch_add(1, Ordering::SeqCst);
        ActiveSlot(active.clone(), Some(waker.clone()))
    }
}

impl Drop for ActiveSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
        if let Some(waker) = &self.1 {
            let _ = waker.wake();
        }
    }
}

/// The refusal for a connection over `max_connections` (or the per-address limit).
const FULL: &str =
    "The server has reached its maximum number of Bolt connections. Try again later.";

/// The refusal for a request while `Limits::max_active` connections hold threads (Neo4j's
/// wording for an exhausted Bolt thread pool).
const BUSY: &str = "There are no available threads to serve this request at the moment. You can \
                    retry at a later time or consider increasing --bolt-thread-pool-max-size.";

const NO_THREADS: &str = "Neo.TransientError.Request.NoThreadsAvailable";

/// Takes one of the `MAX_CONCURRENT_REFUSALS` places; `None` when all are taken (then the
/// connection is just closed, so a flood cannot make us spawn threads without bound).
fn refusal_slot(refusals: &Arc<AtomicUsize>) -> Option<ActiveSlot> {
    if refusals.fetch_add(1, Ordering::SeqCst) >= MAX_CONCURRENT_REFUSALS {
        refusals.fetch_sub(1, Ordering::SeqCst);
        return None;
    }
    Some(ActiveSlot(refusals.clone(), None))
}

/// Refuses the request of a parked connection (its session is dropped and the socket closed).
fn refuse_parked<B: Backend + Send + 'static>(p: Parked<B>, refusals: &Arc<AtomicUsize>) {
    let Some(slot) = refusal_slot(refusals) else {
        return;
    };
    let _ = std::thread::Builder::new().name("bolt-refuse".into()).stack_size(256 * 1024).spawn(
        move || {
            p.refuse(NO_THREADS, BUSY, REFUSAL_WAIT);
            drop(slot);
        },
    );
}

/// Answers a connection over a limit properly: handshake, then a transient FAILURE to its
/// HELLO, so drivers report a clear, retryable error instead of a broken connection.
fn refuse(stream: TcpStream, refusals: &Arc<AtomicUsize>, why: &'static str) {
    let Some(slot) = refusal_slot(refusals) else {
        let _ = stream.shutdown(Shutdown::Both);
        return;
    };
    let _ = std::thread::Builder::new().name("bolt-refuse".into()).stack_size(128 * 1024).spawn(
        move || {
            // One total deadline for the whole exchange, however slowly the peer sends.
            let deadline = Instant::now() + REFUSAL_WAIT;
            let _ = stream.set_read_timeout(Some(REFUSAL_WAIT));
            let _ = stream.set_write_timeout(Some(REFUSAL_WAIT));
            let sock = crate::tls::Sock::Plain(stream);
            if let Ok(n) = handshake::perform(&mut Deadlined { sock: &sock, deadline }) {
                let mut reader = MessageReader::new(Deadlined { sock: &sock, deadline }, 1 << 20);
                if reader.read_message(&|| true).is_ok() {
                    let _ = connection::write_single_failure(
                        sock.tcp(),
                        n.version,
                        NO_THREADS,
                        "50N00",
                        why,
                    );
                }
            }
            sock.shutdown();
            drop(slot);
        },
    );
}
