//! Loopback tests of the whole server (handshake, framing, state machine, auth, shutdown) over
//! real sockets, driven by a hand-written Bolt client against a scripted backend. The scripted
//! backend stands in for the engine so the protocol is checked on its own.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arbor_engine::{
    PullOutcome, QueryType, Record, RecordNames, RunInfo, Stats, Summary, TxConfig,
};
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use rand::{Rng, SeedableRng};

use crate::connection::{Backend, Limits};
use crate::message::{parse_request, tag};
use crate::packstream::{self as ps, Decoder, Header};
use crate::transport::{MessageReader, MessageWriter, ReadError};
use crate::values::{decode_value, encode_value, Dialect};
use crate::{AuthStore, ServerConfig};

// ---- scripted backend --------------------------------------------------------------------------

/// Queries understood by the fake engine:
/// - `COUNT n`: one column `i`, rows 1..=n;
/// - `ECHO`: one row with parameter `x`;
/// - `WRITE`: no columns, reports two created nodes;
/// - `SLOW`: one column, never produces a row until interrupted;
/// - anything else: a syntax error.
struct Script {
    interrupt: Arc<AtomicBool>,
    in_tx: bool,
    results: Vec<FakeResult>,
    next_qid: i64,
}

struct FakeResult {
    qid: i64,
    rows: std::collections::VecDeque<Vec<Value>>,
    slow: bool,
    write: bool,
}

impl Script {
    fn new() -> Script {
        Script {
            interrupt: Arc::new(AtomicBool::new(false)),
            in_tx: false,
            results: vec![],
            next_qid: 0,
        }
    }

    fn summary(&self, r: &FakeResult) -> Summary {
        let mut stats = Stats::default();
        if r.write {
            stats.nodes_created = 2;
        }
        Summary {
            stats,
            query_type: if r.write { QueryType::Write } else { QueryType::Read },
            bookmark: if self.in_tx { None } else { Some("neo4j:7".into()) },
            notifications: vec![],
            t_last_ms: 1,
            plan: None,
            profiled: false,
        }
    }

    fn find(&mut self, qid: Option<i64>) -> Result<usize> {
        let found = match qid {
            Some(q) => self.results.iter().position(|r| r.qid == q),
            None => self.results.len().checked_sub(1),
        };
        found.ok_or_else(|| Error::new(Status::RequestInvalid, "no such result"))
    }
}

impl Backend for Script {
    fn begin(&mut self, _config: TxConfig) -> Result<()> {
        self.in_tx = true;
        Ok(())
    }

    fn run(&mut self, query: &str, params: PropertyMap, _config: TxConfig) -> Result<RunInfo> {
        let (fields, rows, slow, write): (Vec<&str>, Vec<Vec<Value>>, bool, bool) = if let Some(n) =
            query.strip_prefix("COUNT ")
        {
            let n: i64 = n.parse().map_err(|_| Error::syntax("bad count"))?;
            (vec!["i"], (1..=n).map(|i| vec![Value::Int(i)]).collect(), false, false)
        } else if query == "ECHO" {
            (vec!["x"], vec![vec![params.get("x").cloned().unwrap_or(Value::Null)]], false, false)
        } else if query == "WRITE" {
            (vec![], vec![], false, true)
        } else if query == "SLOW" {
            (vec!["x"], vec![], true, false)
        } else {
            return Err(Error::syntax(format!("Invalid input '{query}'")));
        };
        self.next_qid += 1;
        let qid = self.next_qid;
        if !self.in_tx {
            self.results.clear();
        }
        self.results.push(FakeResult { qid, rows: rows.into(), slow, write });
        Ok(RunInfo {
            fields: fields.into_iter().map(String::from).collect(),
            qid: if self.in_tx { Some(qid) } else { None },
        })
    }

    fn pull(
        &mut self,
        qid: Option<i64>,
        n: i64,
        sink: &mut dyn FnMut(&mut Record<'_>) -> Result<()>,
    ) -> Result<PullOutcome> {
        let i = self.find(qid)?;
        if self.results[i].slow {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !self.interrupt.load(Ordering::SeqCst) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            return Err(Error::new(Status::TransactionTerminated, "terminated"));
        }
        let mut left = if n < 0 { u64::MAX } else { n as u64 };
        while left > 0 {
            let Some(row) = self.results[i].rows.pop_front() else { break };
            if self.interrupt.load(Ordering::SeqCst) {
                return Err(Error::new(Status::TransactionTerminated, "terminated"));
            }
            sink(&mut Record::detached(&row, &mut RecordNames::default()))?;
            left -= 1;
        }
        if self.results[i].rows.is_empty() {
            let r = self.results.remove(i);
            Ok(PullOutcome::Done(self.summary(&r)))
        } else {
            Ok(PullOutcome::HasMore)
        }
    }

    fn discard(&mut self, qid: Option<i64>, _n: i64) -> Result<PullOutcome> {
        let i = self.find(qid)?;
        let r = self.results.remove(i);
        Ok(PullOutcome::Done(self.summary(&r)))
    }

    fn commit(&mut self) -> Result<String> {
        self.in_tx = false;
        self.results.clear();
        Ok("neo4j:42".into())
    }

    fn rollback(&mut self) -> Result<()> {
        self.in_tx = false;
        self.results.clear();
        Ok(())
    }

    fn reset(&mut self) {
        self.in_tx = false;
        self.results.clear();
        self.interrupt.store(false, Ordering::SeqCst);
    }

    fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }
}

// ---- test server -------------------------------------------------------------------------------

struct TestServer {
    addr: SocketAddr,
    shutdown: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl TestServer {
    fn start(auth: Option<AuthStore>, max_connections: usize, limits: Limits) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = Arc::new(AtomicBool::new(false));
        let config = ServerConfig {
            listen: addr,
            auth,
            max_connections,
            advertised_address: None,
            tls: None,
        };
        let flag = shutdown.clone();
        let handle = std::thread::spawn(move || {
            let logins = Arc::new(crate::LoginGuard::new(limits.logins.clone()));
            crate::server::serve_with(listener, Script::new, config, limits, logins, flag).unwrap();
        });
        TestServer { addr, shutdown, handle: Some(handle) }
    }

    fn plain() -> TestServer {
        TestServer::start(None, 100, fast_limits())
    }

    /// Stops the server and returns how long that took.
    fn stop(&mut self) -> Duration {
        let t = Instant::now();
        self.shutdown.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            h.join().unwrap();
        }
        t.elapsed()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn fast_limits() -> Limits {
    Limits {
        poll_interval: Duration::from_millis(20),
        shutdown_grace: Duration::from_secs(2),
        ..Limits::default()
    }
}

// ---- hand-written client -----------------------------------------------------------------------

const V5_SLOTS: [[u8; 4]; 4] = [[0, 8, 8, 5], [0, 0, 4, 4], [0; 4], [0; 4]];

struct Client {
    stream: TcpStream,
    reader: MessageReader<TcpStream>,
}

#[derive(Debug)]
struct Reply {
    tag: u8,
    fields: Vec<Value>,
}

impl Reply {
    fn meta(&self) -> &PropertyMap {
        match self.fields.first() {
            Some(Value::Map(m)) => m,
            _ => panic!("reply has no metadata: {self:?}"),
        }
    }

    fn get(&self, key: &str) -> &Value {
        self.meta().get(key).unwrap_or_else(|| panic!("no {key} in {self:?}"))
    }

    fn str(&self, key: &str) -> String {
        match self.get(key) {
            Value::String(s) => s.to_string(),
            other => panic!("{key} is {other:?}"),
        }
    }

    fn is_success(&self) -> bool {
        self.tag == tag::SUCCESS
    }
}

impl Client {
    fn connect(addr: SocketAddr, slots: [[u8; 4]; 4]) -> (Client, [u8; 4]) {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut hello = vec![0x60, 0x60, 0xB0, 0x17];
        for s in slots {
            hello.extend_from_slice(&s);
        }
        stream.write_all(&hello).unwrap();
        let mut reply = [0u8; 4];
        stream.read_exact(&mut reply).unwrap();
        let reader = MessageReader::new(stream.try_clone().unwrap(), 1 << 26);
        (Client { stream, reader }, reply)
    }

    /// Connects with Bolt 5.8 (legacy handshake) and logs in with `scheme: none`.
    fn ready(addr: SocketAddr) -> Client {
        let (mut c, v) = Client::connect(addr, V5_SLOTS);
        assert_eq!(v, [0, 0, 8, 5]);
        assert!(c.call(tag::HELLO, &[map(&[("user_agent", Value::str("test/1"))])]).is_success());
        assert!(c.call(tag::LOGON, &[map(&[("scheme", Value::str("none"))])]).is_success());
        c
    }

    fn send(&mut self, t: u8, fields: &[Value]) {
        let mut w = MessageWriter::new(&mut self.stream, 1 << 16);
        w.message(|b| {
            ps::write_struct_header(b, fields.len() as u8, t);
            for f in fields {
                encode_value(b, f, Dialect::V5)?;
            }
            Ok::<_, crate::values::EncodeError>(())
        })
        .unwrap();
        w.flush().unwrap();
    }

    fn send_raw_message(&mut self, body: &[u8]) {
        let mut w = MessageWriter::new(&mut self.stream, 1 << 16);
        w.message(|b| {
            b.extend_from_slice(body);
            Ok::<_, ()>(())
        })
        .unwrap();
        w.flush().unwrap();
    }

    fn recv(&mut self) -> Reply {
        let msg = self.reader.read_message(&|| false).expect("a reply");
        decode_reply(&msg)
    }

    /// Reads until the connection closes; true if it closed within the timeout.
    fn closed(&mut self) -> bool {
        matches!(
            self.reader.read_message(&|| false),
            Err(ReadError::Eof) | Err(ReadError::Truncated) | Err(ReadError::Io(_))
        )
    }

    fn call(&mut self, t: u8, fields: &[Value]) -> Reply {
        self.send(t, fields);
        self.recv()
    }

    /// PULL n; returns the records and the summary.
    fn pull(&mut self, n: i64, qid: Option<i64>) -> (Vec<Vec<Value>>, Reply) {
        let mut extra = vec![("n", Value::Int(n))];
        if let Some(q) = qid {
            extra.push(("qid", Value::Int(q)));
        }
        self.send(tag::PULL, &[map(&extra)]);
        let mut records = Vec::new();
        loop {
            let r = self.recv();
            if r.tag == tag::RECORD {
                match r.fields.into_iter().next() {
                    Some(Value::List(l)) => records.push(l),
                    other => panic!("bad record {other:?}"),
                }
            } else {
                return (records, r);
            }
        }
    }
}

fn decode_reply(msg: &[u8]) -> Reply {
    let mut d = Decoder::new(msg);
    let Header::Struct { fields, tag } = d.header().unwrap() else { panic!("not a structure") };
    let fields = (0..fields).map(|_| decode_value(&mut d).unwrap()).collect();
    assert!(d.is_at_end());
    Reply { tag, fields }
}

fn map(entries: &[(&str, Value)]) -> Value {
    Value::Map(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
}

fn run(c: &mut Client, query: &str) -> Reply {
    c.call(tag::RUN, &[Value::str(query), map(&[]), map(&[])])
}

fn ints(records: &[Vec<Value>]) -> Vec<i64> {
    records
        .iter()
        .map(|r| match r.as_slice() {
            [Value::Int(i)] => *i,
            other => panic!("{other:?}"),
        })
        .collect()
}

// ---- tests -------------------------------------------------------------------------------------

#[test]
fn legacy_handshake_hello_logon_run_and_pull_in_batches() {
    let server = TestServer::plain();
    let (mut c, v) = Client::connect(server.addr, V5_SLOTS);
    assert_eq!(v, [0, 0, 8, 5]);
    let hello = c.call(tag::HELLO, &[map(&[("user_agent", Value::str("test/1"))])]);
    assert!(hello.is_success());
    assert!(hello.str("server").starts_with("Neo4j/"));
    assert!(hello.str("connection_id").starts_with("bolt-"));
    assert!(matches!(hello.get("hints"), Value::Map(_)));
    // protocol_version only after a manifest handshake.
    assert!(!hello.meta().contains_key("protocol_version"));
    assert!(c.call(tag::LOGON, &[map(&[("scheme", Value::str("none"))])]).is_success());

    let r = run(&mut c, "COUNT 5");
    assert!(r.is_success());
    assert!(matches!(r.get("fields"), Value::List(f) if f.len() == 1));
    assert!(matches!(r.get("t_first"), Value::Int(_)));
    assert!(matches!(r.get("db"), Value::String(s) if &**s == "neo4j"), "5.8 reports the db");
    let (recs, s) = c.pull(2, None);
    assert_eq!(ints(&recs), vec![1, 2]);
    assert!(matches!(s.get("has_more"), Value::Bool(true)));
    let (recs, s) = c.pull(-1, None);
    assert_eq!(ints(&recs), vec![3, 4, 5]);
    assert!(s.is_success());
    assert_eq!(s.str("bookmark"), "neo4j:7");
    assert_eq!(s.str("db"), "neo4j");
    assert_eq!(s.str("type"), "r");
    assert!(!s.meta().contains_key("has_more"));
    // 5.6+: statuses with the success status.
    let Value::List(statuses) = s.get("statuses") else { panic!() };
    assert!(
        matches!(&statuses[0], Value::Map(m) if matches!(m.get("gql_status"), Some(Value::String(g)) if &**g == "00000"))
    );

    let w = run(&mut c, "WRITE");
    assert!(w.is_success());
    let (_, s) = c.pull(-1, None);
    let Value::Map(stats) = s.get("stats") else { panic!("{s:?}") };
    assert!(matches!(stats.get("nodes-created"), Some(Value::Int(2))));
    assert!(matches!(stats.get("contains-updates"), Some(Value::Bool(true))));
    assert!(!stats.contains_key("nodes-deleted"), "only non-zero counters");
    assert_eq!(s.str("type"), "w");
}

#[test]
fn manifest_handshake_negotiates_and_reports_the_protocol_version() {
    let server = TestServer::plain();
    let (mut c, reply) =
        Client::connect(server.addr, [[0, 0, 1, 0xFF], [0, 8, 8, 5], [0, 2, 4, 4], [0, 0, 0, 3]]);
    assert_eq!(reply, [0, 0, 1, 0xFF]);
    let mut count = [0u8; 1];
    c.stream.read_exact(&mut count).unwrap();
    let mut ranges = vec![0u8; 4 * count[0] as usize];
    c.stream.read_exact(&mut ranges).unwrap();
    assert!(ranges.chunks(4).any(|r| r == [0, 2, 8, 5]), "{ranges:02X?}");
    let mut caps = [0u8; 1];
    c.stream.read_exact(&mut caps).unwrap();
    assert_eq!(caps, [0]);
    // Choose 5.7, no capabilities, and pipeline HELLO right behind it.
    c.stream.write_all(&[0, 0, 7, 5, 0]).unwrap();
    let hello = c.call(tag::HELLO, &[map(&[])]);
    assert_eq!(hello.str("protocol_version"), "5.7");
    assert!(c.call(tag::LOGON, &[map(&[])]).is_success());
    assert!(run(&mut c, "COUNT 1").is_success());
}

#[test]
fn failure_then_ignored_until_reset_with_version_specific_fields() {
    let server = TestServer::plain();
    let mut c = Client::ready(server.addr);
    let f = run(&mut c, "NOT CYPHER");
    assert_eq!(f.tag, tag::FAILURE);
    // 5.8 >= 5.7: GQL fields, no legacy `code`.
    assert_eq!(f.str("neo4j_code"), "Neo.ClientError.Statement.SyntaxError");
    assert_eq!(f.str("gql_status"), "42001");
    assert!(f.str("description").starts_with("error: "));
    let Value::Map(diag) = f.get("diagnostic_record") else { panic!() };
    assert!(
        matches!(diag.get("_classification"), Some(Value::String(s)) if &**s == "CLIENT_ERROR")
    );
    assert!(matches!(diag.get("CURRENT_SCHEMA"), Some(Value::String(s)) if &**s == "/"));
    assert!(!f.meta().contains_key("code"));

    // FAILED: everything but RESET/GOODBYE is IGNORED, pipelined or not.
    c.send(tag::RUN, &[Value::str("COUNT 1"), map(&[]), map(&[])]);
    c.send(tag::PULL, &[map(&[("n", Value::Int(-1))])]);
    c.send(tag::BEGIN, &[map(&[])]);
    for _ in 0..3 {
        assert_eq!(c.recv().tag, tag::IGNORED);
    }
    assert!(c.call(tag::RESET, &[]).is_success());
    assert!(run(&mut c, "COUNT 1").is_success());
    let (recs, _) = c.pull(-1, None);
    assert_eq!(ints(&recs), vec![1]);

    // Bolt 5.4 sends the legacy `code`.
    let (mut c, v) = Client::connect(server.addr, [[0, 0, 4, 5], [0; 4], [0; 4], [0; 4]]);
    assert_eq!(v, [0, 0, 4, 5]);
    assert!(c.call(tag::HELLO, &[map(&[])]).is_success());
    assert!(c.call(tag::LOGON, &[map(&[])]).is_success());
    let f = run(&mut c, "NOT CYPHER");
    assert_eq!(f.str("code"), "Neo.ClientError.Statement.SyntaxError");
    assert!(!f.meta().contains_key("gql_status"));
    // And no `statuses` on 5.4.
    assert!(c.call(tag::RESET, &[]).is_success());
    run(&mut c, "COUNT 1");
    let (_, s) = c.pull(-1, None);
    assert!(!s.meta().contains_key("statuses"));
}

#[test]
fn wrong_state_messages_fail_and_protocol_violations_close() {
    let server = TestServer::plain();
    let mut c = Client::ready(server.addr);
    // PULL in READY: FAILURE, then FAILED.
    let (_, f) = c.pull(-1, None);
    assert_eq!(f.tag, tag::FAILURE);
    assert_eq!(f.str("neo4j_code"), "Neo.ClientError.Request.Invalid");
    assert!(c.call(tag::RESET, &[]).is_success());
    // RUN while STREAMING an auto-commit result.
    assert!(run(&mut c, "COUNT 3").is_success());
    assert_eq!(run(&mut c, "COUNT 3").tag, tag::FAILURE);
    assert!(c.call(tag::RESET, &[]).is_success());
    // A second HELLO is a protocol violation: FAILURE and close.
    assert_eq!(c.call(tag::HELLO, &[map(&[])]).tag, tag::FAILURE);
    assert!(c.closed());

    // RUN before HELLO: FAILURE and close.
    let (mut c, _) = Client::connect(server.addr, V5_SLOTS);
    assert_eq!(run(&mut c, "COUNT 1").tag, tag::FAILURE);
    assert!(c.closed());

    // An unknown database fails the request, not the connection.
    let mut c = Client::ready(server.addr);
    let f =
        c.call(tag::RUN, &[Value::str("COUNT 1"), map(&[]), map(&[("db", Value::str("nope"))])]);
    assert_eq!(f.str("neo4j_code"), "Neo.ClientError.Database.DatabaseNotFound");
    assert!(c.call(tag::RESET, &[]).is_success());
    let r =
        c.call(tag::RUN, &[Value::str("COUNT 1"), map(&[]), map(&[("db", Value::str("system"))])]);
    assert!(r.is_success());
    assert!(!r.meta().contains_key("db"), "db only reported when the client gave none");
}

#[test]
fn explicit_transactions_with_several_results() {
    let server = TestServer::plain();
    let mut c = Client::ready(server.addr);
    let b = c.call(tag::BEGIN, &[map(&[("bookmarks", Value::List(vec![Value::str("neo4j:1")]))])]);
    assert!(b.is_success());
    let r1 = run(&mut c, "COUNT 3");
    let Value::Int(q1) = *r1.get("qid") else { panic!() };
    let r2 = run(&mut c, "COUNT 2");
    let Value::Int(q2) = *r2.get("qid") else { panic!() };
    assert_ne!(q1, q2);
    let (recs, s) = c.pull(1, Some(q1));
    assert_eq!(ints(&recs), vec![1]);
    assert!(matches!(s.get("has_more"), Value::Bool(true)));
    // qid -1: the last result run.
    let (recs, s) = c.pull(-1, Some(-1));
    assert_eq!(ints(&recs), vec![1, 2]);
    assert!(!s.meta().contains_key("bookmark"), "no bookmark inside a transaction");
    let (recs, _) = c.pull(-1, Some(q1));
    assert_eq!(ints(&recs), vec![2, 3]);
    let commit = c.call(tag::COMMIT, &[]);
    assert_eq!(commit.str("bookmark"), "neo4j:42");

    assert!(c.call(tag::BEGIN, &[map(&[])]).is_success());
    assert!(run(&mut c, "WRITE").is_success());
    assert!(c.call(tag::ROLLBACK, &[]).is_success());
    // Back in READY: auto-commit works again.
    assert!(run(&mut c, "COUNT 1").is_success());
    let (_, s) = c.pull(-1, None);
    assert_eq!(s.str("bookmark"), "neo4j:7");
}

#[test]
fn reset_interrupts_a_running_query() {
    let server = TestServer::plain();
    let mut c = Client::ready(server.addr);
    assert!(run(&mut c, "SLOW").is_success());
    c.send(tag::PULL, &[map(&[("n", Value::Int(-1))])]);
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    c.send(tag::RESET, &[]);
    // The interrupted PULL is answered as in INTERRUPTED, then RESET succeeds.
    assert_eq!(c.recv().tag, tag::IGNORED);
    assert!(c.recv().is_success());
    assert!(t.elapsed() < Duration::from_secs(5), "RESET did not interrupt");
    assert!(run(&mut c, "COUNT 2").is_success());
    let (recs, _) = c.pull(-1, None);
    assert_eq!(ints(&recs), vec![1, 2]);

    // Messages pipelined in front of a RESET are ignored.
    c.send(tag::RUN, &[Value::str("SLOW"), map(&[]), map(&[])]);
    c.send(tag::PULL, &[map(&[("n", Value::Int(-1))])]);
    c.send(tag::RUN, &[Value::str("COUNT 1"), map(&[]), map(&[])]);
    c.send(tag::RESET, &[]);
    let tags: Vec<u8> = (0..4).map(|_| c.recv().tag).collect();
    assert_eq!(*tags.last().unwrap(), tag::SUCCESS);
    assert!(tags[..3].iter().all(|&t| t == tag::IGNORED || t == tag::SUCCESS), "{tags:?}");
    assert!(run(&mut c, "COUNT 1").is_success());
}

#[test]
fn oversized_and_malformed_messages_close_only_that_connection() {
    let limits = Limits { max_message_bytes: 1024, ..fast_limits() };
    let server = TestServer::start(None, 100, limits);
    let mut bystander = Client::ready(server.addr);

    let mut c = Client::ready(server.addr);
    let big = "x".repeat(4000);
    c.send(tag::RUN, &[Value::str(&big), map(&[]), map(&[])]);
    let f = c.recv();
    assert_eq!(f.tag, tag::FAILURE);
    assert_eq!(f.str("neo4j_code"), "Neo.ClientError.Request.Invalid");
    assert!(c.closed());

    // Garbage inside a well-framed message.
    let mut c = Client::ready(server.addr);
    c.send_raw_message(&[0xB1, tag::RUN, 0xDF, 0xFF]);
    assert_eq!(c.recv().tag, tag::FAILURE);
    assert!(c.closed());

    // Unknown message type.
    let mut c = Client::ready(server.addr);
    c.send_raw_message(&[0xB0, 0x55]);
    assert_eq!(c.recv().tag, tag::FAILURE);
    assert!(c.closed());

    // Not Bolt at all (an HTTP request gets a 400 instead: see the WebSocket tests).
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"SSH-2.0-OpenSSH_9.6\r\n").unwrap();
    let mut buf = [0u8; 16];
    assert!(matches!(s.read(&mut buf), Ok(0) | Err(_)));

    // The bystander never noticed.
    assert!(run(&mut bystander, "COUNT 3").is_success());
    let (recs, _) = bystander.pull(-1, None);
    assert_eq!(recs.len(), 3);
}

#[test]
fn disconnect_mid_stream_does_not_hang_the_server() {
    let mut server = TestServer::plain();
    for _ in 0..3 {
        let mut c = Client::ready(server.addr);
        assert!(run(&mut c, "COUNT 2000000").is_success());
        c.send(tag::PULL, &[map(&[("n", Value::Int(-1))])]);
        let _ = c.recv(); // first record
        drop(c);
    }
    // Half a message, then gone.
    let mut c = Client::ready(server.addr);
    c.stream.write_all(&[0x00, 0x10, 0xB1]).unwrap();
    drop(c);
    let mut still = Client::ready(server.addr);
    assert!(run(&mut still, "COUNT 1").is_success());
    drop(still);
    assert!(server.stop() < Duration::from_secs(5));
}

#[test]
fn shutdown_closes_idle_connections_and_returns() {
    let mut server = TestServer::plain();
    let mut idle = Client::ready(server.addr);
    let mut in_tx = Client::ready(server.addr);
    assert!(in_tx.call(tag::BEGIN, &[map(&[])]).is_success());
    let took = server.stop();
    assert!(took < Duration::from_secs(2), "shutdown took {took:?}");
    assert!(idle.closed());
    assert!(in_tx.closed());
    assert!(
        TcpStream::connect(server.addr).is_err() || {
            // A connect may still succeed on some systems' backlog; it must not be served.
            let (mut c, _) = Client::connect_nowait(server.addr);
            c.closed()
        }
    );
}

impl Client {
    fn connect_nowait(addr: SocketAddr) -> (Client, ()) {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let reader = MessageReader::new(stream.try_clone().unwrap(), 1 << 20);
        (Client { stream, reader }, ())
    }
}

#[test]
fn basic_auth_accepts_the_right_password_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = AuthStore::open(&dir.path().join("auth.toml")).unwrap();
    store.set_password("neo4j", "pa55word").unwrap();
    let server = TestServer::start(Some(store), 100, fast_limits());

    let login = |token: Value| {
        let (mut c, _) = Client::connect(server.addr, V5_SLOTS);
        assert!(c.call(tag::HELLO, &[map(&[])]).is_success());
        let r = c.call(tag::LOGON, &[token]);
        (c, r)
    };
    let basic = |user: &str, pw: &str| {
        map(&[
            ("scheme", Value::str("basic")),
            ("principal", Value::str(user)),
            ("credentials", Value::str(pw)),
        ])
    };
    let (mut c, r) = login(basic("neo4j", "wrong"));
    assert_eq!(r.str("neo4j_code"), "Neo.ClientError.Security.Unauthorized");
    assert!(c.closed());
    let (mut c, r) = login(map(&[("scheme", Value::str("none"))]));
    assert_eq!(r.tag, tag::FAILURE);
    assert!(c.closed());
    let (mut c, r) = login(basic("neo4j", "pa55word"));
    assert!(r.is_success());
    assert!(run(&mut c, "COUNT 1").is_success());
    c.pull(-1, None);
    // LOGOFF returns to AUTHENTICATION; RUN there is a protocol violation.
    assert!(c.call(tag::LOGOFF, &[]).is_success());
    assert!(c.call(tag::LOGON, &[basic("neo4j", "pa55word")]).is_success());

    // Bolt 4.4 authenticates in HELLO.
    let (mut c, v) = Client::connect(server.addr, [[0, 0, 4, 4], [0; 4], [0; 4], [0; 4]]);
    assert_eq!(v, [0, 0, 4, 4]);
    let mut extra = match basic("neo4j", "pa55word") {
        Value::Map(m) => m,
        _ => unreachable!(),
    };
    extra.insert("user_agent".into(), Value::str("t/1"));
    assert!(c.call(tag::HELLO, &[Value::Map(extra)]).is_success());
    assert!(run(&mut c, "COUNT 1").is_success());
    let (mut c, _) = Client::connect(server.addr, [[0, 0, 4, 4], [0; 4], [0; 4], [0; 4]]);
    let f = c.call(tag::HELLO, &[basic("neo4j", "nope")]);
    assert_eq!(f.str("code"), "Neo.ClientError.Security.Unauthorized");
    assert!(c.closed());
}

#[test]
fn route_returns_a_single_server_table() {
    let server = TestServer::plain();
    let mut c = Client::ready(server.addr);
    let r = c.call(
        tag::ROUTE,
        &[map(&[("address", Value::str("localhost:7687"))]), Value::List(vec![]), map(&[])],
    );
    let Value::Map(rt) = r.get("rt") else { panic!("{r:?}") };
    assert!(matches!(rt.get("ttl"), Some(Value::Int(300))));
    assert!(matches!(rt.get("db"), Some(Value::String(s)) if &**s == "neo4j"));
    let Some(Value::List(servers)) = rt.get("servers") else { panic!() };
    let mut roles: Vec<String> = servers
        .iter()
        .map(|s| match s {
            Value::Map(m) => {
                assert!(matches!(m.get("addresses"),
                    Some(Value::List(a)) if matches!(&a[0], Value::String(s) if &**s == "localhost:7687")));
                match m.get("role") {
                    Some(Value::String(r)) => r.to_string(),
                    _ => panic!(),
                }
            }
            _ => panic!(),
        })
        .collect();
    roles.sort();
    assert_eq!(roles, vec!["READ", "ROUTE", "WRITE"]);
    let f = c.call(tag::ROUTE, &[map(&[]), Value::Null, map(&[("db", Value::str("other"))])]);
    assert_eq!(f.str("neo4j_code"), "Neo.ClientError.Database.DatabaseNotFound");
    assert!(c.call(tag::RESET, &[]).is_success());
    assert!(c.call(tag::TELEMETRY, &[Value::Int(1)]).is_success());
}

/// Sends `x` as a parameter, gets it back as a record, and compares the bytes.
fn echo(c: &mut Client, x: Value) -> Value {
    let r = c.call(tag::RUN, &[Value::str("ECHO"), map(&[("x", x)]), map(&[])]);
    assert!(r.is_success(), "{r:?}");
    let (mut recs, _) = c.pull(-1, None);
    recs.pop().and_then(|mut r| r.pop()).unwrap()
}

#[test]
fn values_round_trip_through_parameters_and_records() {
    let server = TestServer::plain();
    let mut c = Client::ready(server.addr);
    let mut nested = PropertyMap::new();
    nested.insert("list".into(), Value::List(vec![Value::Int(-1), Value::Float(0.5), Value::Null]));
    let values = vec![
        Value::Int(i64::MIN),
        Value::Float(f64::NAN),
        Value::str("ünïcødé 🎉"),
        Value::Bytes(Arc::from(&[1u8, 2, 3][..])),
        Value::Map(nested),
    ];
    for v in values {
        let mut want = Vec::new();
        encode_value(&mut want, &v, Dialect::V5).unwrap();
        let mut got = Vec::new();
        encode_value(&mut got, &echo(&mut c, v), Dialect::V5).unwrap();
        assert_eq!(got, want);
    }
    // A DateTime with an offset comes back in the UTC encoding on 5.x.
    let dt = [0xB3, b'I', 0xC9, 0x11, 0x94, 42, 0xC9, 0x0E, 0x10];
    let v = decode_value(&mut Decoder::new(&dt)).unwrap();
    let mut got = Vec::new();
    encode_value(&mut got, &echo(&mut c, v), Dialect::V5).unwrap();
    assert_eq!(got, dt);
}

#[test]
fn bolt_4_4_uses_legacy_datetimes_unless_utc_is_patched() {
    let server = TestServer::plain();
    let utc_instant = [0xB3, b'I', 0xC9, 0x11, 0x94, 42, 0xC9, 0x0E, 0x10];
    let param = decode_value(&mut Decoder::new(&utc_instant)).unwrap();
    for (patch, want_tag) in [(false, b'F'), (true, b'I')] {
        let (mut c, v) = Client::connect(server.addr, [[0, 0, 4, 4], [0; 4], [0; 4], [0; 4]]);
        assert_eq!(v, [0, 0, 4, 4]);
        let mut extra = vec![("scheme", Value::str("none"))];
        if patch {
            extra.push(("patch_bolt", Value::List(vec![Value::str("utc")])));
        }
        let hello = c.call(tag::HELLO, &[map(&extra)]);
        assert_eq!(hello.meta().contains_key("patch_bolt"), patch);
        c.send(tag::RUN, &[Value::str("ECHO"), map(&[("x", param.clone())]), map(&[])]);
        assert!(c.recv().is_success());
        c.send(tag::PULL, &[map(&[("n", Value::Int(-1))])]);
        let raw = c.reader.read_message(&|| false).unwrap();
        // RECORD [ DateTime ]: B1 71 91 B3 <tag>
        assert_eq!(&raw[..4], &[0xB1, tag::RECORD, 0x91, 0xB3]);
        assert_eq!(raw[4], want_tag);
        // 4.4 nodes have no element id: checked in values.rs; here the summary arrives.
        assert!(c.recv().is_success());
    }
}

#[test]
fn connections_over_the_limit_are_refused_cleanly() {
    let server = TestServer::start(None, 1, fast_limits());
    let mut first = Client::ready(server.addr);
    let (mut second, v) = Client::connect(server.addr, V5_SLOTS);
    assert_eq!(v, [0, 0, 8, 5]);
    let f = second.call(tag::HELLO, &[map(&[])]);
    assert_eq!(f.str("neo4j_code"), "Neo.TransientError.Request.NoThreadsAvailable");
    assert!(second.closed());
    assert!(run(&mut first, "COUNT 1").is_success());
    drop(first);
    // The slot frees up once the first connection is gone.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (mut c, _) = Client::connect(server.addr, V5_SLOTS);
        if c.call(tag::HELLO, &[map(&[])]).is_success() {
            break;
        }
        assert!(Instant::now() < deadline, "slot never freed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn random_bytes_never_panic_the_decoders() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xB017);
    // Valid messages to mutate.
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    let mut b = vec![0xB3, tag::RUN];
    ps::write_string(&mut b, "RETURN $x").unwrap();
    encode_value(
        &mut b,
        &map(&[("x", Value::List(vec![Value::Int(1), Value::str("a")]))]),
        Dialect::V5,
    )
    .unwrap();
    encode_value(&mut b, &map(&[("db", Value::str("neo4j"))]), Dialect::V5).unwrap();
    seeds.push(b);
    let mut b = vec![0xB1, tag::RUN];
    encode_value(
        &mut b,
        &decode_value(&mut Decoder::new(&[0xB3, b'i', 1, 2, 0x83, b'U', b'T', b'C'])).unwrap(),
        Dialect::V5,
    )
    .unwrap();
    seeds.push(b);
    seeds.push(vec![0xB1, tag::PULL, 0xA1, 0x81, b'n', 0xFF]);

    for i in 0..200_000u32 {
        let msg: Vec<u8> = if i % 2 == 0 {
            let len = rng.gen_range(0..64);
            (0..len).map(|_| rng.gen()).collect()
        } else {
            let mut m = seeds[(i as usize / 2) % seeds.len()].clone();
            for _ in 0..rng.gen_range(1..4) {
                let pos = rng.gen_range(0..m.len());
                match rng.gen_range(0..3) {
                    0 => m[pos] = rng.gen(),
                    1 => m.truncate(pos),
                    _ => m.insert(pos, rng.gen()),
                }
                if m.is_empty() {
                    break;
                }
            }
            m
        };
        let _ = parse_request(&msg);
        let _ = decode_value(&mut Decoder::new(&msg));
        let mut d = Decoder::new(&msg);
        let _ = d.skip();
    }
}

#[test]
fn random_bytes_on_a_live_connection_are_survived() {
    let server = TestServer::plain();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..20 {
        let (mut c, _) = Client::connect(server.addr, V5_SLOTS);
        let junk: Vec<u8> = (0..rng.gen_range(1..300)).map(|_| rng.gen()).collect();
        let _ = c.stream.write_all(&junk);
        let _ = c.stream.shutdown(std::net::Shutdown::Write);
        // Whatever comes back, the connection ends.
        let deadline = Instant::now() + Duration::from_secs(5);
        while c.reader.read_message(&|| false).is_ok() {
            assert!(Instant::now() < deadline);
        }
    }
    let mut c = Client::ready(server.addr);
    assert!(run(&mut c, "COUNT 1").is_success());
}

#[test]
fn the_real_engine_serves_cypher_through_serve_listener() {
    let listener = crate::bind(&ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        auth: None,
        max_connections: 10,
        advertised_address: None,
        tls: None,
    })
    .unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Arc::new(AtomicBool::new(false));
    let config = ServerConfig {
        listen: addr,
        auth: None,
        max_connections: 10,
        advertised_address: None,
        tls: None,
    };
    let flag = shutdown.clone();
    let db = arbor_engine::Database::in_memory();
    let server = std::thread::spawn(move || crate::serve_listener(listener, db, config, flag));

    let mut c = Client::ready(addr);
    let r = c.call(
        tag::RUN,
        &[
            Value::str("UNWIND range(1, $n) AS i RETURN i"),
            map(&[("n", Value::Int(2500))]),
            map(&[]),
        ],
    );
    assert!(r.is_success(), "{r:?}");
    let (recs, s) = c.pull(1000, None);
    assert_eq!(recs.len(), 1000);
    assert!(matches!(s.get("has_more"), Value::Bool(true)));
    let (recs, s) = c.pull(-1, None);
    assert_eq!(ints(&recs), (1001..=2500).collect::<Vec<_>>());
    assert!(s.meta().contains_key("bookmark"));
    let f = run(&mut c, "RETRUN 1");
    assert_eq!(f.str("neo4j_code"), "Neo.ClientError.Statement.SyntaxError");
    assert!(c.call(tag::RESET, &[]).is_success());
    assert!(c.call(tag::BEGIN, &[map(&[])]).is_success());
    let r = run(&mut c, "CREATE (n:T {x: 1}) RETURN n.x");
    assert!(matches!(r.get("qid"), Value::Int(_)));
    let (recs, s) = c.pull(-1, Some(-1));
    assert_eq!(recs.len(), 1);
    let Value::Map(stats) = s.get("stats") else { panic!("{s:?}") };
    assert!(matches!(stats.get("nodes-created"), Some(Value::Int(1))));
    assert!(!c.call(tag::COMMIT, &[]).str("bookmark").is_empty());
    drop(c);
    shutdown.store(true, Ordering::SeqCst);
    server.join().unwrap().unwrap();
}

#[test]
fn bolt_5_0_authenticates_in_hello_and_has_no_logon() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = AuthStore::open(&dir.path().join("auth.toml")).unwrap();
    store.set_password("u", "p").unwrap();
    let server = TestServer::start(Some(store), 100, fast_limits());
    let (mut c, v) = Client::connect(server.addr, [[0, 0, 0, 5], [0; 4], [0; 4], [0; 4]]);
    assert_eq!(v, [0, 0, 0, 5]);
    let token = map(&[
        ("scheme", Value::str("basic")),
        ("principal", Value::str("u")),
        ("credentials", Value::str("p")),
    ]);
    assert!(c.call(tag::HELLO, std::slice::from_ref(&token)).is_success());
    assert!(run(&mut c, "COUNT 1").is_success());
    let (recs, _) = c.pull(-1, None);
    assert_eq!(ints(&recs), vec![1]);
    // LOGON does not exist before 5.1: a protocol violation.
    assert_eq!(c.call(tag::LOGON, &[token]).tag, tag::FAILURE);
    assert!(c.closed());
}

// ---- Bolt over WebSocket -----------------------------------------------------------------------

/// A WebSocket client speaking Bolt in binary frames, as the JavaScript driver does in a browser.
struct WsClient {
    ws: tungstenite::WebSocket<TcpStream>,
    inbox: Vec<u8>,
}

impl WsClient {
    fn connect(addr: SocketAddr) -> WsClient {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let (ws, response) =
            tungstenite::client::client(format!("ws://{addr}/"), stream).expect("upgrade");
        assert_eq!(response.status().as_u16(), 101);
        WsClient { ws, inbox: Vec::new() }
    }

    fn send_bytes(&mut self, bytes: Vec<u8>) {
        self.ws.send(tungstenite::Message::Binary(bytes.into())).unwrap();
    }

    /// Reads until `n` bytes are buffered (answering nothing itself: tungstenite queues pongs).
    fn take(&mut self, n: usize) -> Vec<u8> {
        while self.inbox.len() < n {
            match self.ws.read().unwrap() {
                tungstenite::Message::Binary(b) => self.inbox.extend_from_slice(&b),
                tungstenite::Message::Pong(p) => assert_eq!(&p[..], b"are you there"),
                other => panic!("unexpected frame {other:?}"),
            }
        }
        self.inbox.drain(..n).collect()
    }

    fn call(&mut self, t: u8, fields: &[Value]) -> Reply {
        let mut out = Vec::new();
        let mut w = MessageWriter::new(&mut out, 1 << 16);
        w.message(|b| {
            ps::write_struct_header(b, fields.len() as u8, t);
            for f in fields {
                encode_value(b, f, Dialect::V5)?;
            }
            Ok::<_, crate::values::EncodeError>(())
        })
        .unwrap();
        w.flush().unwrap();
        drop(w);
        self.send_bytes(out);
        self.recv()
    }

    fn recv(&mut self) -> Reply {
        let mut msg = Vec::new();
        loop {
            let len = self.take(2);
            let len = u16::from_be_bytes([len[0], len[1]]) as usize;
            if len == 0 {
                return decode_reply(&msg);
            }
            msg.extend(self.take(len));
        }
    }
}

#[test]
fn bolt_over_websocket_handshakes_runs_queries_and_answers_pings() {
    let server = TestServer::plain();
    let mut c = WsClient::connect(server.addr);
    let mut hello = vec![0x60, 0x60, 0xB0, 0x17];
    for s in V5_SLOTS {
        hello.extend_from_slice(&s);
    }
    // The preamble split over two frames: frame boundaries mean nothing to Bolt.
    let rest = hello.split_off(6);
    c.send_bytes(hello);
    c.send_bytes(rest);
    assert_eq!(c.take(4), vec![0, 0, 8, 5]);
    assert!(c.call(tag::HELLO, &[map(&[("user_agent", Value::str("ws/1"))])]).is_success());
    assert!(c.call(tag::LOGON, &[map(&[("scheme", Value::str("none"))])]).is_success());
    c.ws.send(tungstenite::Message::Ping(b"are you there".to_vec().into())).unwrap();
    let run = c.call(tag::RUN, &[Value::str("COUNT 3"), map(&[]), map(&[])]);
    assert!(run.is_success(), "{run:?}");
    let mut out = Vec::new();
    let mut w = MessageWriter::new(&mut out, 1 << 16);
    w.message(|b| {
        ps::write_struct_header(b, 1, tag::PULL);
        encode_value(b, &map(&[("n", Value::Int(-1))]), Dialect::V5)
    })
    .unwrap();
    w.flush().unwrap();
    drop(w);
    c.send_bytes(out);
    let mut records = Vec::new();
    loop {
        let r = c.recv();
        if r.tag == tag::RECORD {
            let Some(Value::List(l)) = r.fields.into_iter().next() else { panic!("bad record") };
            records.push(l);
        } else {
            assert!(r.is_success(), "{r:?}");
            break;
        }
    }
    assert_eq!(ints(&records), vec![1, 2, 3]);
    // A close frame is answered with a close frame.
    c.ws.close(None).unwrap();
    loop {
        match c.ws.read() {
            Ok(tungstenite::Message::Close(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

#[test]
fn plain_http_on_the_bolt_port_gets_a_400_and_bolt_still_works() {
    let server = TestServer::plain();
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    assert!(reply.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{reply}");
    assert!(reply.contains("this is a Bolt port"), "{reply}");
    let mut c = Client::ready(server.addr);
    assert!(run(&mut c, "COUNT 1").is_success());
}
