//! The cap on connections served at once (`ConnectionLimits::max_active`, Neo4j's
//! `server.bolt.thread_pool_max_size`): a burst beyond it waits for a thread, a request that
//! waits longer than `active_wait` gets `Neo.TransientError.Request.NoThreadsAvailable`, and
//! parked (idle) connections do not count against it.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_bolt::client::{Client, ClientConfig};
use arbor_bolt::{ConnectionLimits, ServerConfig};
use arbor_model::{PropertyMap, Value};

struct Server {
    addr: String,
    shutdown: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

/// A server with `max_active` threads for connections; connections park after `park_after`.
fn start(max_active: usize, active_wait: Duration, park_after: Duration) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let shutdown = Arc::new(AtomicBool::new(false));
    let config = ServerConfig {
        listen: listener.local_addr().unwrap(),
        auth: None,
        max_connections: 100,
        advertised_address: None,
        tls: None,
    };
    let limits = ConnectionLimits {
        max_active,
        active_wait,
        park_after,
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

fn config() -> ClientConfig {
    ClientConfig { timeout: Some(Duration::from_secs(20)), ..ClientConfig::default() }
}

fn return_one(client: &mut Client) -> arbor_model::Result<i64> {
    let result = client.run_all("RETURN 1 AS x", &PropertyMap::new())?;
    match &result.records[0][0] {
        Value::Int(n) => Ok(*n),
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn is_no_threads(e: &arbor_model::Error) -> bool {
    e.to_string().contains("Neo.TransientError.Request.NoThreadsAvailable")
}

/// A client that runs `CALL apoc.util.sleep(ms)` (holding its thread meanwhile), on a thread;
/// the client comes back, connected and idle.
fn sleeper(addr: &str, ms: i64) -> std::thread::JoinHandle<Client> {
    let addr = addr.to_string();
    std::thread::spawn(move || {
        let mut c = Client::connect(&addr, &config()).unwrap();
        c.run_all(&format!("CALL apoc.util.sleep({ms})"), &PropertyMap::new()).unwrap();
        c
    })
}

#[test]
fn a_request_beyond_the_pool_waits_then_is_refused_with_neo4j_code() {
    // Idle connections would keep their threads for a minute, were no one waiting.
    let server = start(2, Duration::from_secs(1), Duration::from_secs(60));
    let a = sleeper(&server.addr, 3000);
    let b = sleeper(&server.addr, 3000);
    std::thread::sleep(Duration::from_millis(500));

    let t = Instant::now();
    let Err(refused) = Client::connect(&server.addr, &config()) else {
        panic!("a third connection was served");
    };
    assert!(is_no_threads(&refused), "refused with {refused}");
    assert!(t.elapsed() >= Duration::from_millis(800), "refused before waiting");
    assert!(t.elapsed() < Duration::from_secs(10), "waited {:?}", t.elapsed());

    // Both are idle now but hold their threads; a new client makes them park at once.
    let (mut a, mut b) = (a.join().unwrap(), b.join().unwrap());
    let mut c = Client::connect(&server.addr, &config()).unwrap();
    assert_eq!(return_one(&mut c).unwrap(), 1);
    drop(c);
    assert_eq!(return_one(&mut a).unwrap(), 1);
    assert_eq!(return_one(&mut b).unwrap(), 1);
    drop((a, b));
    server.stop();
}

#[test]
fn a_burst_beyond_the_pool_is_served_in_turn() {
    // Each connection holds a thread until it has been idle 100 ms; 12 clients at once share 2.
    let server = start(2, Duration::from_secs(10), Duration::from_millis(100));
    let clients: Vec<_> = (0..12)
        .map(|_| {
            let addr = server.addr.clone();
            std::thread::spawn(move || {
                let mut c = Client::connect(&addr, &config())?;
                return_one(&mut c)
            })
        })
        .collect();
    for c in clients {
        assert_eq!(c.join().unwrap().unwrap(), 1);
    }
    server.stop();
}

#[test]
fn parked_connections_do_not_count_and_a_busy_pool_refuses_a_parked_one() {
    let server = start(1, Duration::from_millis(300), Duration::from_millis(100));
    // Three connections, one after the other, each parking before the next needs the thread.
    let mut parked: Vec<Client> = Vec::new();
    for _ in 0..3 {
        let mut c = Client::connect(&server.addr, &config()).unwrap();
        assert_eq!(return_one(&mut c).unwrap(), 1);
        parked.push(c);
        std::thread::sleep(Duration::from_millis(600));
    }
    // All parked: each is served again in turn.
    for c in &mut parked {
        assert_eq!(return_one(c).unwrap(), 1);
        std::thread::sleep(Duration::from_millis(600));
    }

    // One connection keeps the only thread busy for 2 s ...
    let busy = sleeper(&server.addr, 2000);
    std::thread::sleep(Duration::from_millis(500));
    // ... so a parked connection's request waits 300 ms, then is refused and closed.
    let Err(refused) = return_one(&mut parked[0]) else {
        panic!("served while the pool is busy");
    };
    assert!(is_no_threads(&refused), "refused with {refused}");
    let mut busy = busy.join().unwrap();
    assert_eq!(return_one(&mut busy).unwrap(), 1);
    // The other parked connections are served once the thread is free.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(return_one(&mut parked[1]).unwrap(), 1);
    drop((parked, busy));
    server.stop();
}

#[test]
fn parked_connections_hanging_up_at_once_take_no_threads() {
    // One thread: were each hang-up served by a thread, 90 of them at once would queue ahead
    // of the new client.
    let server = start(1, Duration::from_secs(1), Duration::from_millis(100));
    let mut parked = Vec::new();
    for _ in 0..90 {
        parked.push(Client::connect(&server.addr, &config()).unwrap());
    }
    std::thread::sleep(Duration::from_millis(1500));
    drop(parked);
    let mut c = Client::connect(&server.addr, &config()).unwrap();
    assert_eq!(return_one(&mut c).unwrap(), 1);
    drop(c);
    server.stop();
}
