//! The accept loop: one thread per connection up to `max_connections`, clean refusal beyond
//! that, and an orderly shutdown (stop accepting; each connection's reader sees the shutdown
//! within a poll interval and interrupts its running query; close what is left after a grace
//! period).

use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tracing::{info, warn};

use crate::connection::Deadlined;
use crate::connection::{self, Backend, Limits, LoginGuard, PeerSlots, Shared};
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
    B: Backend + 'static,
    F: Fn() -> B + Send + Sync + 'static,
{
    listener.set_nonblocking(true)?;
    let mut poll = mio::Poll::new()?;
    let mut events = mio::Events::with_capacity(8);
    let listener_fd = std::os::fd::AsRawFd::as_raw_fd(&listener);
    poll.registry().register(
        &mut mio::unix::SourceFd(&listener_fd),
        mio::Token(0),
        mio::Interest::READABLE,
    )?;
    let grace = limits.shutdown_grace;
    let peers = PeerSlots::new(limits.max_unauthenticated_per_address);
    let shared = Arc::new(Shared {
        logins,
        auth: config.auth.clone(),
        tls: config.tls.clone(),
        advertised_address: config.advertised_address.clone(),
        limits,
        shutdown: shutdown.clone(),
    });
    let factory = Arc::new(factory);
    let refusals = Arc::new(AtomicUsize::new(0));
    let mut live: Vec<Live> = Vec::new();
    let mut next_id: u64 = 0;

    while !shutdown.load(Ordering::SeqCst) {
        let (stream, peer) = match listener.accept() {
            Ok(x) => x,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                // Edge-triggered readiness: every pending connection was accepted before this
                // WouldBlock, so the next event means a new one. Finished connections are
                // reaped here too, so their sockets close even when no one else connects.
                live.retain(|c| !c.handle.is_finished());
                if let Err(e) = poll.poll(&mut events, Some(ACCEPT_WAIT)) {
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        warn!("waiting for Bolt connections failed: {e}");
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // E.g. out of file descriptors: keep serving the connections we have.
                warn!("accepting a Bolt connection failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        live.retain(|c| !c.handle.is_finished());
        next_id += 1;
        if stream.set_nonblocking(false).is_err() {
            continue;
        }
        if live.len() >= config.max_connections {
            warn!(peer = %peer, "refusing Bolt connection: {} connections already open", live.len());
            bump(&SERVER.bolt_refused);
            refuse(stream, &refusals);
            continue;
        }
        let Some(slot) = peers.acquire(peer.ip()) else {
            warn!(peer = %peer, "refusing Bolt connection: too many connections from this address have not logged in");
            bump(&SERVER.bolt_refused);
            refuse(stream, &refusals);
            continue;
        };
        let socket = match stream.try_clone() {
            Ok(s) => s,
            Err(e) => {
                warn!(peer = %peer, "cannot use the accepted socket: {e}");
                continue;
            }
        };
        let shared = shared.clone();
        let factory = factory.clone();
        let id = next_id;
        let spawned = std::thread::Builder::new()
            .name(format!("bolt-conn-{id}"))
            .stack_size(CONNECTION_STACK_BYTES)
            .spawn(move || {
                bump(&SERVER.bolt_opened);
                let backend = factory();
                connection::run(stream, backend, &shared, id, Some(slot));
                bump(&SERVER.bolt_closed);
            });
        match spawned {
            Ok(handle) => live.push(Live { handle, socket }),
            Err(e) => warn!(peer = %peer, "cannot start a Bolt connection thread: {e}"),
        }
    }

    drop(listener);
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
    Ok(())
}

/// Answers a connection over the limit properly: handshake, then a transient FAILURE to its
/// HELLO, so drivers report a clear, retryable error instead of a broken connection.
fn refuse(stream: TcpStream, refusals: &Arc<AtomicUsize>) {
    if refusals.fetch_add(1, Ordering::SeqCst) >= MAX_CONCURRENT_REFUSALS {
        refusals.fetch_sub(1, Ordering::SeqCst);
        let _ = stream.shutdown(Shutdown::Both);
        return;
    }
    let refusals_done = refusals.clone();
    let spawned = std::thread::Builder::new().name("bolt-refuse".into()).stack_size(128 * 1024).spawn(
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
                        "Neo.TransientError.Request.NoThreadsAvailable",
                        "50N00",
                        "The server has reached its maximum number of Bolt connections. Try again later.",
                    );
                }
            }
            sock.shutdown();
            refusals_done.fetch_sub(1, Ordering::SeqCst);
        },
    );
    if spawned.is_err() {
        refusals.fetch_sub(1, Ordering::SeqCst);
    }
}
