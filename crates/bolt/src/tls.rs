//! TLS for Bolt (`bolt+s://`, `bolt+ssc://`, `neo4j+s://`, `neo4j+ssc://`), with rustls.
//!
//! The server reads a PEM certificate chain and private key at start-up. Per connection it peeks
//! at the first byte: `0x16` starts a TLS handshake record, `0x60` the Bolt magic. With
//! [`TlsLevel::Required`] a plaintext connection is closed; with [`TlsLevel::Optional`] both are
//! served on the same port (Neo4j's `server.bolt.tls_level`).
//!
//! A connection has two threads (see the crate docs): the reader reassembles messages while the
//! worker writes results. Both share one rustls session behind a mutex: the reader reads raw
//! bytes from the socket *without* the lock, then feeds them to the session under the lock; the
//! worker encrypts and writes under the lock. So a long result never blocks the reader from
//! seeing `RESET`, except while a socket write itself is blocked by a client that does not read.

use std::fs;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConnection;

/// Whether plaintext connections are still accepted when TLS is configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsLevel {
    /// Only TLS connections (plaintext ones are closed right after accept).
    Required,
    /// TLS and plaintext on the same port.
    Optional,
}

/// The server's TLS set-up: certificate, key and level.
#[derive(Clone, Debug)]
pub struct TlsSetup {
    pub config: Arc<rustls::ServerConfig>,
    pub level: TlsLevel,
}

impl TlsSetup {
    /// Loads a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or SEC1). Errors name
    /// the file and what is wrong with it.
    pub fn from_pem_files(cert: &Path, key: &Path, level: TlsLevel) -> Result<TlsSetup, String> {
        let cert_pem = fs::read(cert)
            .map_err(|e| format!("cannot read TLS certificate {}: {e}", cert.display()))?;
        let key_pem =
            fs::read(key).map_err(|e| format!("cannot read TLS key {}: {e}", key.display()))?;
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("TLS certificate {} is not valid PEM: {e}", cert.display()))?;
        if certs.is_empty() {
            return Err(format!("TLS certificate {} holds no certificate", cert.display()));
        }
        let key_der = PrivateKeyDer::from_pem_slice(&key_pem)
            .map_err(|e| format!("TLS key {} holds no usable private key: {e}", key.display()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS set-up: {e}"))?
            .with_no_client_auth()
            .with_single_cert(certs, key_der)
            .map_err(|e| {
                format!(
                    "TLS certificate {} and key {} do not fit: {e}",
                    cert.display(),
                    key.display()
                )
            })?;
        Ok(TlsSetup { config: Arc::new(config), level })
    }
}

/// A TLS session over a socket, shared by a connection's reader and worker threads.
pub(crate) struct TlsConn {
    session: Mutex<ServerConnection>,
    sock: TcpStream,
}

impl TlsConn {
    fn write_pending(session: &mut ServerConnection, mut sock: &TcpStream) -> io::Result<()> {
        while session.wants_write() {
            session.write_tls(&mut sock)?;
        }
        Ok(())
    }
}

/// A connection's byte stream: plain TCP or TLS. Both threads of a connection hold one (the
/// TLS session is shared); `&Sock` reads and writes like `&TcpStream`.
pub(crate) enum Sock {
    Plain(TcpStream),
    Tls(Arc<TlsConn>),
    /// Bolt inside WebSocket frames, over a plain or TLS socket.
    Ws(Arc<crate::websocket::WsConn<Sock>>),
}

/// What the first byte of a new connection says.
pub(crate) enum Opening {
    Tls,
    Plain,
}

/// Peeks at the first byte (the caller has set a read timeout) to tell TLS from plaintext Bolt.
pub(crate) fn sniff(stream: &TcpStream) -> io::Result<Opening> {
    let mut first = [0u8; 1];
    match stream.peek(&mut first)? {
        0 => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed before the handshake")),
        _ if first[0] == 0x16 => Ok(Opening::Tls),
        _ => Ok(Opening::Plain),
    }
}

impl Sock {
    pub(crate) fn tls(setup: &TlsSetup, stream: TcpStream) -> io::Result<Sock> {
        let session = ServerConnection::new(setup.config.clone())
            .map_err(|e| io::Error::other(format!("TLS session: {e}")))?;
        Ok(Sock::Tls(Arc::new(TlsConn { session: Mutex::new(session), sock: stream })))
    }

    /// A second handle on the same stream (for the reader thread).
    pub(crate) fn try_clone(&self) -> io::Result<Sock> {
        Ok(match self {
            Sock::Plain(s) => Sock::Plain(s.try_clone()?),
            Sock::Tls(t) => Sock::Tls(t.clone()),
            Sock::Ws(w) => Sock::Ws(w.clone()),
        })
    }

    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Sock::Plain(s) => s,
            Sock::Tls(t) => &t.sock,
            Sock::Ws(w) => w.inner().tcp(),
        }
    }

    pub(crate) fn is_tls(&self) -> bool {
        match self {
            Sock::Plain(_) => false,
            Sock::Tls(_) => true,
            Sock::Ws(w) => w.inner().is_tls(),
        }
    }

    /// Ends the connection: a TLS `close_notify` first (best effort), then the socket.
    pub(crate) fn shutdown(&self) {
        if let Sock::Ws(w) = self {
            w.close();
            w.inner().shutdown();
            return;
        }
        if let Sock::Tls(t) = self {
            if let Some(mut session) = t.session.try_lock() {
                session.send_close_notify();
                let _ = TlsConn::write_pending(&mut session, &t.sock);
            }
        }
        let _ = self.tcp().shutdown(Shutdown::Both);
    }
}

impl Read for &Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let t = match self {
            Sock::Plain(s) => return (&*s).read(buf),
            Sock::Ws(w) => return w.read(buf),
            Sock::Tls(t) => t,
        };
        let mut raw = [0u8; 16 * 1024];
        loop {
            {
                let mut session = t.session.lock();
                match session.reader().read(buf) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            // No plaintext buffered: wait for bytes without holding the session, so the worker
            // can keep writing. A read timeout surfaces to the caller as usual.
            let n = (&t.sock).read(&mut raw)?;
            if n == 0 {
                return Ok(0);
            }
            let mut session = t.session.lock();
            let mut fed = &raw[..n];
            while !fed.is_empty() {
                session.read_tls(&mut fed)?;
                if let Err(e) = session.process_new_packets() {
                    // Tell the peer why (the alert is queued by rustls), then give up.
                    let _ = TlsConn::write_pending(&mut session, &t.sock);
                    return Err(io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}")));
                }
            }
            // Handshake flights, session tickets, key updates.
            TlsConn::write_pending(&mut session, &t.sock)?;
        }
    }
}

impl Write for &Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Plain(s) => (&*s).write(buf),
            Sock::Ws(w) => w.write(buf),
            Sock::Tls(t) => {
                let mut session = t.session.lock();
                let n = session.writer().write(buf)?;
                TlsConn::write_pending(&mut session, &t.sock)?;
                Ok(n)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sock::Plain(s) => (&*s).flush(),
            Sock::Ws(_) => Ok(()),
            Sock::Tls(t) => {
                let mut session = t.session.lock();
                session.writer().flush()?;
                TlsConn::write_pending(&mut session, &t.sock)?;
                (&t.sock).flush()
            }
        }
    }
}
