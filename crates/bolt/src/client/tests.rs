//! Tests of the Bolt client against Arbor's own server on loopback: handshake, queries,
//! entity decoding, streaming, transactions, errors and auth.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::*;
use crate::ServerConfig;

struct TestServer {
    addr: String,
    shutdown: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl TestServer {
    fn start(auth: Option<crate::AuthStore>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let config = ServerConfig {
            listen: addr,
            auth,
            max_connections: 64,
            advertised_address: None,
            tls: None,
        };
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        let db = arbor_engine::Database::in_memory();
        let handle = std::thread::spawn(move || {
            crate::serve_listener(listener, db, config, flag).unwrap();
        });
        TestServer { addr: format!("bolt://{addr}"), shutdown, handle: Some(handle) }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn params(pairs: &[(&str, Value)]) -> PropertyMap {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn connect(s: &TestServer) -> Client {
    Client::connect(&s.addr, &ClientConfig::default()).unwrap()
}

#[test]
fn handshake_hello_and_simple_query() {
    let s = TestServer::start(None);
    let mut c = connect(&s);
    assert_eq!(c.version(), Version::new(5, 8));
    assert!(c.server_agent().starts_with("Neo4j/"), "{}", c.server_agent());
    let r = c.run_all("RETURN $x + 1 AS y, 'a' AS s", &params(&[("x", Value::Int(41))])).unwrap();
    assert_eq!(r.fields, vec!["y".to_string(), "s".to_string()]);
    assert_eq!(r.records.len(), 1);
    assert!(matches!(r.records[0][0], Value::Int(42)));
    assert!(matches!(&r.records[0][1], Value::String(s) if &**s == "a"));
}

#[test]
fn nodes_relationships_and_paths_decode() {
    let s = TestServer::start(None);
    let mut c = connect(&s);
    c.run_all("CREATE (:A {k: 1})-[:T {w: 2}]->(:B {k: 3})", &PropertyMap::new()).unwrap();
    let r = c.run_all("MATCH p = (a:A)-[r:T]->(b) RETURN a, r, b, p", &PropertyMap::new());
    let r = r.unwrap();
    assert_eq!(r.records.len(), 1);
    let row = &r.records[0];
    let (Value::NodeData(a), Value::RelData(rel), Value::NodeData(b), Value::PathData(p)) =
        (&row[0], &row[1], &row[2], &row[3])
    else {
        panic!("unexpected row {row:?}");
    };
    assert_eq!(a.labels, vec!["A".to_string()]);
    assert!(matches!(a.properties.get("k"), Some(Value::Int(1))));
    assert_eq!(rel.rel_type, "T");
    assert_eq!((rel.start, rel.end), (a.id, b.id));
    assert_eq!(p.nodes.len(), 2);
    assert_eq!(p.rels.len(), 1);
    assert_eq!((p.rels[0].start, p.rels[0].end), (a.id, b.id));
    // Walking the relationship backwards keeps its stored direction.
    let r = c.run_all("MATCH p = (b:B)<-[:T]-(a) RETURN p", &PropertyMap::new()).unwrap();
    let Value::PathData(p) = &r.records[0][0] else { panic!("not a path") };
    assert_eq!(p.nodes[0].id, b.id);
    assert_eq!((p.rels[0].start, p.rels[0].end), (a.id, b.id));
}

#[test]
fn captured_records_decode_to_the_same_rows() {
    let s = TestServer::start(None);
    let mut c = connect(&s);
    let q = "UNWIND range(1, 50) AS i CREATE (n:A {k: i, s: 'x' + i}) RETURN i, n, [n.k, {m: n.s}]";
    c.capture_records(true);
    let r = c.run_all(q, &PropertyMap::new()).unwrap();
    let captured = c.take_captured();
    let again = decode_captured(&captured).unwrap();
    assert_eq!(r.records.len(), 50);
    assert_eq!(again.len(), r.records.len());
    for (a, b) in again.iter().zip(&r.records) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
    // Taken means gone; with capture off nothing is kept.
    assert!(c.take_captured().is_empty());
    c.capture_records(false);
    c.run_all("RETURN 1", &PropertyMap::new()).unwrap();
    assert!(c.take_captured().is_empty());
    // A damaged copy is an error, not a panic.
    assert!(decode_captured(&captured[..captured.len() - 1]).is_err());
    assert!(decode_captured(&[9, 0, 0, 0, 1]).is_err());
}

#[test]
fn temporal_values_decode() {
    let s = TestServer::start(None);
    let mut c = connect(&s);
    let r = c.run_all("RETURN date('2024-02-29') AS d", &PropertyMap::new()).unwrap();
    assert!(matches!(r.records[0][0], Value::Date(_)), "{:?}", r.records[0][0]);
}

#[test]
fn pull_n_streams_in_batches_and_discard_ends() {
    let s = TestServer::start(None);
    let mut c = connect(&s);
    let h = c.run("UNWIND range(1, 10) AS i RETURN i", &PropertyMap::new()).unwrap();
    assert_eq!(h.fields, vec!["i".to_string()]);
    let b = c.pull(4, -1).unwrap();
    assert_eq!(b.records.len(), 4);
    assert!(b.has_more);
    let b = c.pull(4, -1).unwrap();
    assert!(matches!(b.records[0][0], Value::Int(5)));
    assert!(b.has_more);
    let b = c.discard(-1, -1).unwrap();
    assert!(!b.has_more);
    // The connection is ready for the next statement.
    let r = c.run_all("RETURN 1 AS one", &PropertyMap::new()).unwrap();
    assert_eq!(r.records.len(), 1);
}

#[test]
fn explicit_transactions_commit_and_roll_back() {
    let s = TestServer::start(None);
    let mut c = connect(&s);
    c.begin(PropertyMap::new()).unwrap();
    c.run_all("CREATE (:Tx {v: 1})", &PropertyMap::new()).unwrap();
    c.rollback().unwrap();
    c.begin(PropertyMap::new()).unwrap();
    let h = c.run("CREATE (:Tx {v: 2}) RETURN 1", &PropertyMap::new()).unwrap();
    c.pull(-1, h.qid).unwrap();
    let bookmark = c.commit().unwrap();
    assert!(!bookmark.is_empty());
    let r = c.run_all("MATCH (n:Tx) RETURN n.v", &PropertyMap::new()).unwrap();
    assert_eq!(r.records.len(), 1);
    assert!(matches!(r.records[0][0], Value::Int(2)));
}

#[test]
fn server_errors_carry_the_neo4j_code_and_leave_the_connection_usable() {
    let s = TestServer::start(None);
    let mut c = connect(&s);
    let e = c.run_all("RETRUN 1", &PropertyMap::new()).unwrap_err();
    assert_eq!(e.status, Status::SyntaxError, "{e}");
    let e = c.run_all("RETURN $missing", &PropertyMap::new()).unwrap_err();
    assert_eq!(e.status, Status::ParameterMissing, "{e}");
    // Failure inside a transaction: RESET is sent for us, the tx is gone.
    c.begin(PropertyMap::new()).unwrap();
    assert!(c.run_all("RETURN 1/0", &PropertyMap::new()).is_err());
    let r = c.run_all("RETURN 2 AS two", &PropertyMap::new()).unwrap();
    assert!(matches!(r.records[0][0], Value::Int(2)));
    c.reset().unwrap();
}

#[test]
fn basic_auth_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = crate::AuthStore::open(&dir.path().join("auth.toml")).unwrap();
    store.set_password("neo4j", "secret-pass").unwrap();
    let s = TestServer::start(Some(store));
    let good = ClientConfig {
        auth: Auth::Basic { user: "neo4j".into(), password: "secret-pass".into() },
        ..ClientConfig::default()
    };
    let mut c = Client::connect(&s.addr, &good).unwrap();
    assert_eq!(c.run_all("RETURN 1", &PropertyMap::new()).unwrap().records.len(), 1);
    let bad = ClientConfig {
        auth: Auth::Basic { user: "neo4j".into(), password: "wrong".into() },
        ..ClientConfig::default()
    };
    let e = Client::connect(&s.addr, &bad).unwrap_err();
    assert_eq!(e.status, Status::Unauthorized, "{e}");
}

#[test]
fn error_codes_map_to_statuses() {
    let e = error_from_code("Neo.ClientError.Statement.SyntaxError", "bad");
    assert_eq!(e.status, Status::SyntaxError);
    assert_eq!(e.message, "bad");
    let e = error_from_code("Neo.TransientError.Transaction.DeadlockDetected", "dl");
    assert!(is_transient(&e));
    assert!(e.message.contains("DeadlockDetected"));
    let e = error_from_code("Neo.ClientError.Schema.IndexNotFound", "x");
    assert_eq!(e.status, Status::RequestInvalid);
    assert!(!is_transient(&e));
}

#[test]
fn uri_forms_are_accepted() {
    assert_eq!(strip_scheme("bolt://127.0.0.1:7687"), "127.0.0.1:7687");
    assert_eq!(strip_scheme("neo4j://h:1/db?x=1"), "h:1");
    assert_eq!(strip_scheme("h:2"), "h:2");
}
