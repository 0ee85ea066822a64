//! The accept loop: a tokio runtime of its own (two async workers; queries run on its blocking
//! pool), HTTP/1.1 connections served by hyper with a header-read timeout, TLS (tokio-rustls)
//! when configured, an expiry sweep for idle explicit transactions, and an orderly stop.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use arbor_engine::Database;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::watch;

use crate::routes::{self, Peer};
use crate::{AppState, HttpConfig};

/// Time a client gets to send a request's headers (also bounds idle keep-alive connections).
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// Time a client gets for the TLS handshake.
const TLS_TIMEOUT: Duration = Duration::from_secs(10);
/// Queries (and password checks) running at once on the blocking pool; more wait their turn.
const MAX_BLOCKING: usize = 256;

/// A running HTTP server.
pub struct HttpServer {
    local: SocketAddr,
    state: Arc<AppState>,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Starts serving on `listener` (already bound, so the caller knows the port). Requests
    /// that need the database answer 503 until [`HttpServer::set_database`].
    pub fn start(
        listener: std::net::TcpListener,
        config: HttpConfig,
    ) -> std::io::Result<HttpServer> {
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let state = Arc::new(AppState::new(&config, local));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(MAX_BLOCKING)
            .thread_name("http")
            .thread_stack_size(16 << 20)
            .enable_all()
            .build()?;
        let (stop, stopped) = watch::channel(false);
        let app = routes::router(state.clone(), config.max_body_bytes);
        let tls = config.tls.map(tokio_rustls::TlsAcceptor::from);
        let st = state.clone();
        let thread = std::thread::Builder::new().name("http-server".into()).spawn(move || {
            runtime.block_on(accept_loop(listener, app, tls, st, stopped));
            runtime.shutdown_timeout(Duration::from_secs(5));
        })?;
        Ok(HttpServer { local, state, stop, thread: Some(thread) })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The store is open and recovered: the Query API serves, `/health/ready` answers 200.
    pub fn set_database(&self, db: Database) {
        let _ = self.state.db.set(db);
    }

    /// Stops accepting, rolls back open explicit transactions and waits (a few seconds at
    /// most) for running requests.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.state.stopping.store(true, Ordering::SeqCst);
        let _ = self.stop.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        for tx in self.state.txns.expired_all() {
            drop(tx);
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

async fn accept_loop(
    listener: std::net::TcpListener,
    app: axum::Router,
    tls: Option<tokio_rustls::TlsAcceptor>,
    state: Arc<AppState>,
    mut stopped: watch::Receiver<bool>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("HTTP server cannot use its socket: {e}");
            return;
        }
    };
    let sweeper = state.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        loop {
            every.tick().await;
            let expired = sweeper.txns.expired();
            if !expired.is_empty() {
                tracing::debug!("rolling back {} idle Query API transactions", expired.len());
                // Dropping a session rolls its transaction back (blocking work).
                let _ = tokio::task::spawn_blocking(move || drop(expired)).await;
            }
        }
    });
    loop {
        let (sock, peer) = tokio::select! {
            _ = stopped.changed() => break,
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!("accepting an HTTP connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let _ = sock.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone().layer(axum::Extension(Peer(peer))));
        let tls = tls.clone();
        let mut stop = stopped.clone();
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
            let served = match tls {
                Some(acceptor) => {
                    let Ok(Ok(stream)) =
                        tokio::time::timeout(TLS_TIMEOUT, acceptor.accept(sock)).await
                    else {
                        return;
                    };
                    let conn = http.serve_connection(TokioIo::new(stream), service);
                    tokio::select! { r = conn => r, _ = stop.changed() => Ok(()) }
                }
                None => {
                    let conn = http.serve_connection(TokioIo::new(sock), service);
                    tokio::select! { r = conn => r, _ = stop.changed() => Ok(()) }
                }
            };
            if let Err(e) = served {
                tracing::debug!(peer = %peer, "HTTP connection ended: {e}");
            }
        });
    }
}
