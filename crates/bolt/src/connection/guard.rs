//! What keeps one connection from holding resources it has not earned: a total deadline for
//! the handshake ([`Deadlined`]), a total deadline from accept until the client has sent its
//! credentials ([`LoginClock`]), a cap on connections per client address that have not logged in
//! yet ([`PeerSlots`]), and reading off the rest of an oversized message ([`drain`]) so the
//! client sees its `FAILURE` instead of hanging on a full socket.
//!
//! Deadlines are totals, not per read: a peer trickling one byte just inside every read timeout
//! is cut off like a silent one.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::tls::Sock;

/// A socket whose reads all end by one instant (the read timeout is set to what is left before
/// each read), for the handshake.
pub(crate) struct Deadlined<'a> {
    pub sock: &'a Sock,
    pub deadline: Instant,
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "handshake deadline passed"));
        }
        let _ = self.sock.tcp().set_read_timeout(Some(left.max(Duration::from_millis(1))));
        (&mut &*self.sock).read(buf)
    }
}

impl Write for Deadlined<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&mut &*self.sock).write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        (&mut &*self.sock).flush()
    }
}

/// The login deadline of one connection, shared by its reader (which checks it after every
/// read) and its worker (which re-arms it on `LOGOFF`).
pub(crate) struct LoginClock {
    opened: Instant,
    /// Milliseconds after `opened`; `u64::MAX` once the credentials have arrived.
    deadline_ms: AtomicU64,
}

impl LoginClock {
    pub(crate) fn new(opened: Instant, timeout: Duration) -> LoginClock {
        LoginClock { opened, deadline_ms: AtomicU64::new(millis(timeout)) }
    }

    pub(crate) fn expired(&self) -> bool {
        let deadline = self.deadline_ms.load(Ordering::Relaxed);
        deadline != u64::MAX && millis(self.opened.elapsed()) > deadline
    }

    /// The credentials arrived: no deadline while the connection is logged in.
    pub(crate) fn disarm(&self) {
        self.deadline_ms.store(u64::MAX, Ordering::Relaxed);
    }

    /// Logged off: the next login must come within `timeout`.
    pub(crate) fn rearm(&self, timeout: Duration) {
        let at = millis(self.opened.elapsed()).saturating_add(millis(timeout));
        self.deadline_ms.store(at.min(u64::MAX - 1), Ordering::Relaxed);
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX - 1)
}

/// Connections per client address that have not logged in yet, with a cap, so sockets that
/// only complete the handshake cannot take every connection slot from other clients.
pub(crate) struct PeerSlots {
    max_per_peer: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One not-yet-authenticated connection's place in [`PeerSlots`]; freed on drop.
pub(crate) struct PreAuthSlot {
    slots: Arc<PeerSlots>,
    peer: IpAddr,
}

impl PeerSlots {
    pub(crate) fn new(max_per_peer: usize) -> Arc<PeerSlots> {
        Arc::new(PeerSlots { max_per_peer, open: Mutex::new(HashMap::new()) })
    }

    /// A slot for `peer`, or `None` when it already has `max_per_peer` connections waiting to
    /// log in.
    pub(crate) fn acquire(self: &Arc<Self>, peer: IpAddr) -> Option<PreAuthSlot> {
        let mut open = self.open.lock();
        let n = open.entry(peer).or_insert(0);
        if *n >= self.max_per_peer {
            return None;
        }
        *n += 1;
        Some(PreAuthSlot { slots: self.clone(), peer })
    }

    #[cfg(test)]
    pub(crate) fn held(&self, peer: IpAddr) -> usize {
        self.open.lock().get(&peer).copied().unwrap_or(0)
    }
}

impl Drop for PreAuthSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock();
        if let Some(n) = open.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.peer);
            }
        }
    }
}

/// One open connection's place in the server's count (`ServerConfig::max_connections`): it
/// travels with the connection through its threads and the readiness loop, and frees the place
/// when the connection is dropped, wherever that happens.
pub(crate) struct OpenTicket {
    open: Arc<AtomicUsize>,
}

impl OpenTicket {
    pub(crate) fn new(open: Arc<AtomicUsize>) -> OpenTicket {
        open.fetch_add(1, Ordering::SeqCst);
        arbor_engine::metrics::bump(&arbor_engine::metrics::SERVER.bolt_opened);
        OpenTicket { open }
    }
}

impl Drop for OpenTicket {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::SeqCst);
        arbor_engine::metrics::bump(&arbor_engine::metrics::SERVER.bolt_closed);
    }
}

/// After answering an oversized message: stop writing (the client reads its `FAILURE` and the
/// end of the stream) and read off what it is still sending, at most `max_bytes` for at most
/// `max_wait`, so a client blocked writing the rest of its message gets unstuck.
pub(crate) fn drain(sock: &Sock, max_bytes: usize, max_wait: Duration) {
    let _ = sock.tcp().shutdown(std::net::Shutdown::Write);
    let deadline = Instant::now() + max_wait;
    let mut buf = vec![0u8; 64 * 1024];
    let mut read = 0usize;
    let mut tcp = sock.tcp();
    while read < max_bytes {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || tcp.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match tcp.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => read += n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_auth_slots_are_capped_per_peer_and_freed_on_drop() {
        let slots = PeerSlots::new(2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = slots.acquire(a).unwrap();
        let _second = slots.acquire(a).unwrap();
        assert!(slots.acquire(a).is_none(), "a third waiting connection from one peer");
        assert!(slots.acquire(b).is_some(), "another peer is not affected");
        drop(first);
        assert_eq!(slots.held(a), 1);
        assert!(slots.acquire(a).is_some());
    }

    #[test]
    fn the_login_clock_is_a_total_deadline_until_disarmed() {
        let long_ago = Instant::now() - Duration::from_secs(5);
        let clock = LoginClock::new(long_ago, Duration::from_secs(2));
        assert!(clock.expired());
        clock.disarm();
        assert!(!clock.expired());
        clock.rearm(Duration::from_secs(60));
        assert!(!clock.expired());
        clock.rearm(Duration::ZERO);
        std::thread::sleep(Duration::from_millis(5));
        assert!(clock.expired());
    }
}
