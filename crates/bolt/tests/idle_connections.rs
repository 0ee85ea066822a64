//! Idle connections hold no thread: 2,000 logged-in connections sit parked in the server's
//! readiness loop, the server's thread count stays small, a new client's `RETURN 1` is answered
//! promptly, and a parked connection answers again when it speaks. (The 10,000-connection run
//! with RSS figures is `scripts/idle_connections.py`, see BENCHMARKS.md.)

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_bolt::client::{Client, ClientConfig};
use arbor_bolt::{ConnectionLimits, ServerConfig};
use arbor_model::{PropertyMap, Value};

const IDLE: usize = 2_000;

/// The tests count this process's threads: they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The Bolt handshake proposing 4.4 only, then `HELLO {user_agent, scheme: "none"}`.
fn hello_bytes() -> Vec<u8> {
    let mut out = vec![0x60, 0x60, 0xB0, 0x17, 0, 0, 4, 4];
    out.extend_from_slice(&[0; 12]);
    let mut body = vec![0xB1, 0x01, 0xA2];
    for s in ["user_agent", "idle-test/1", "scheme", "none"] {
        body.push(0x80 | s.len() as u8);
        body.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&[0, 0]);
    out
}

/// Reads the 4-byte version answer and one whole reply message; returns the reply's tag.
fn read_hello_reply(s: &mut TcpStream) -> u8 {
    let mut version = [0u8; 4];
    s.read_exact(&mut version).unwrap();
    assert_eq!(version, [0, 0, 4, 4], "negotiated version");
    let mut msg = Vec::new();
    loop {
        let mut hdr = [0u8; 2];
        s.read_exact(&mut hdr).unwrap();
        let n = u16::from_be_bytes(hdr) as usize;
        if n == 0 {
            break;
        }
        let old = msg.len();
        msg.resize(old + n, 0);
        s.read_exact(&mut msg[old..]).unwrap();
    }
    msg[1]
}

fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Each connection takes two descriptors here (client and server side), plus one while active.
/// The one unsafe block: the C calls that read and raise this process's descriptor limit.
#[allow(unsafe_code)]
fn raise_fd_limit(need: u64) {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        if lim.rlim_cur < need {
            lim.rlim_cur = need.min(lim.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
        }
        assert!(
            lim.rlim_cur >= need,
            "this test needs {need} file descriptors (hard limit {})",
            lim.rlim_max
        );
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(n) => *n,
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn return_one(client: &mut Client) -> i64 {
    let result = client.run_all("RETURN 1 AS x", &PropertyMap::new()).unwrap();
    int(&result.records[0][0])
}

struct Server {
    addr: String,
    shutdown: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

fn start(max_connections: usize) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let shutdown = Arc::new(AtomicBool::new(false));
    let config = ServerConfig {
        listen: listener.local_addr().unwrap(),
        auth: None,
        max_connections,
        advertised_address: None,
        tls: None,
    };
    let limits = ConnectionLimits {
        park_after: Duration::from_millis(100),
        poll_interval: Duration::from_millis(20),
        shutdown_grace: Duration::from_secs(2),
        ..ConnectionLimits::default()
    };
    let flag = shutdown.clone();
    let db = arbor_engine::Database::in_memory();
    let handle = std::thread::spawn(move || {
        arbor_bolt::serve_listener_with_limits(listener, db, config, limits, flag).unwrap()
    });
    Server { addr, shutdown, handle }
}

impl Server {
    fn stop(self) {
        self.shutdown.store(true, Ordering::SeqCst);
        self.handle.join().unwrap();
    }
}

/// Long enough for a connection to park (park_after 100 ms, reader poll 20 ms), with room for
/// a loaded machine.
const PARK_WAIT: Duration = Duration::from_millis(600);

#[test]
fn an_open_transaction_and_an_open_stream_survive_parking() {
    let _serial = serial();
    let server = start(10);
    let mut c = Client::connect(&server.addr, &ClientConfig::default()).unwrap();
    c.begin(PropertyMap::new()).unwrap();
    c.run_all("CREATE (:OPS3_Parked {i: 1})", &PropertyMap::new()).unwrap();
    std::thread::sleep(PARK_WAIT);
    c.run_all("CREATE (:OPS3_Parked {i: 2})", &PropertyMap::new()).unwrap();
    std::thread::sleep(PARK_WAIT);
    c.commit().unwrap();
    let header = c.run("UNWIND range(1, 5) AS x RETURN x", &PropertyMap::new()).unwrap();
    assert_eq!(header.fields, vec!["x".to_string()]);
    let first = c.pull(2, -1).unwrap();
    assert_eq!(first.records.len(), 2);
    assert!(first.has_more);
    std::thread::sleep(PARK_WAIT);
    let rest = c.pull(-1, -1).unwrap();
    let rest: Vec<i64> = rest.records.iter().map(|r| int(&r[0])).collect();
    assert_eq!(rest, vec![3, 4, 5]);
    let n = c.run_all("MATCH (n:OPS3_Parked) RETURN count(n)", &PropertyMap::new()).unwrap();
    assert_eq!(int(&n.records[0][0]), 2);
    drop(c);
    server.stop();
}

#[test]
fn a_silent_connection_is_closed_at_the_handshake_deadline_without_a_thread() {
    let _serial = serial();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Arc::new(AtomicBool::new(false));
    let config = ServerConfig {
        listen: addr,
        auth: None,
        max_connections: 10,
        advertised_address: None,
        tls: None,
    };
    let limits = ConnectionLimits {
        handshake_timeout: Duration::from_millis(300),
        ..ConnectionLimits::default()
    };
    let flag = shutdown.clone();
    let db = arbor_engine::Database::in_memory();
    let before = threads();
    let handle = std::thread::spawn(move || {
        arbor_bolt::serve_listener_with_limits(listener, db, config, limits, flag).unwrap()
    });
    let mut silent: Vec<TcpStream> = (0..5).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(100));
    // The server's accept loop only: silent sockets wait in its readiness set.
    assert!(threads() <= before + 1 + 2, "silent connections hold threads");
    for s in &mut silent {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 1];
        let t = Instant::now();
        assert!(matches!(s.read(&mut buf), Ok(0) | Err(_)), "closed, not answered");
        assert!(t.elapsed() < Duration::from_secs(4));
    }
    shutdown.store(true, Ordering::SeqCst);
    handle.join().unwrap();
}

#[test]
fn two_thousand_idle_connections_hold_no_threads_and_starve_no_one() {
    let _serial = serial();
    raise_fd_limit(2 * IDLE as u64 + 512);
    let server = start(IDLE + 10);
    let addr = server.addr.clone();
    let before = threads();
    let mut first = Client::connect(&addr, &ClientConfig::default()).unwrap();
    assert_eq!(return_one(&mut first), 1);

    let hello = hello_bytes();
    let mut idle = Vec::with_capacity(IDLE);
    for _ in 0..IDLE {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(&hello).unwrap();
        assert_eq!(read_hello_reply(&mut s), 0x70, "HELLO answered with SUCCESS");
        idle.push(s);
    }
    // Everything parks within park_after plus a reader poll; allow for a loaded machine.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut now = threads();
    while now > before + 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        now = threads();
    }
    assert!(now <= before + 20, "{IDLE} idle connections hold {} threads", now - before);

    let t = Instant::now();
    let mut fresh = Client::connect(&addr, &ClientConfig::default()).unwrap();
    assert_eq!(return_one(&mut fresh), 1);
    let took = t.elapsed();
    assert!(took < Duration::from_secs(2), "a new client waited {took:?}");

    // A parked connection is woken by its next request, with its session intact.
    assert_eq!(return_one(&mut first), 1);
    drop(fresh);
    drop(first);

    drop(idle);
    server.stop();
}
