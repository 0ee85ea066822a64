//! A small blocking Bolt *client*: enough to drive any Bolt server (Arbor, Neo4j) from
//! benchmarks and tools without a driver dependency.
//!
//! It reuses the server's own PackStream encoder/decoder, chunked framing and value conversion,
//! and adds what only a client needs: the client side of the handshake (offers 5.8..5.0 and
//! 4.4), `HELLO` (+ `LOGON` on 5.1+), `RUN`/`PULL`/`DISCARD`, explicit transactions, `RESET`,
//! and decoding of the entities servers *send* (nodes, relationships, paths), which the
//! server-side decoder rightly refuses as parameters.
//!
//! Error model: a `FAILURE` from the server becomes an [`arbor_model::Error`] whose status is the
//! matching [`Status`] when the Neo4j code is one Arbor knows, otherwise the nearest class (any
//! `Neo.TransientError.*` maps to the retryable `TransactionOutdated`); the server's original
//! code is then kept at the front of the message. After a failure the client sends `RESET`
//! itself, so the connection is usable again (an open explicit transaction is rolled back by
//! that, as with the official drivers). I/O and protocol errors are `Status::Io` /
//! `Status::RequestInvalid`; after one of those the connection should be dropped.
//!
//! Requests of one call are pipelined (written, then flushed once): `run_all` costs one round
//! trip.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use arbor_model::{Error, PropertyMap, Result, Status, Value};

use crate::handshake::{Version, MAGIC};
use crate::message::tag;
use crate::packstream::{self as ps, DecodeError, Decoder, Header};
use crate::transport::{MessageReader, MessageWriter, ReadError, DEFAULT_MAX_MESSAGE_BYTES};
use crate::values::{encode_map, encode_value, Dialect, EncodeError};

mod decode;
pub use decode::{decode_captured, decode_result_value};

/// How the client authenticates.
#[derive(Clone, Debug, Default)]
pub enum Auth {
    /// Scheme `none` (servers with authentication disabled).
    #[default]
    None,
    /// Scheme `basic`.
    Basic { user: String, password: String },
}

/// Connection options.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub auth: Auth,
    pub user_agent: String,
    /// Applied to connect, reads and writes. `None`: block forever.
    pub timeout: Option<Duration>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig { auth: Auth::None, user_agent: "arbor-client/0.1".into(), timeout: None }
    }
}

/// What `RUN` answered.
#[derive(Clone, Debug, Default)]
pub struct RunHeader {
    pub fields: Vec<String>,
    /// The query id inside an explicit transaction (`-1` when the server sent none).
    pub qid: i64,
    /// Milliseconds until the result was available (`t_first`), when the server sent it.
    pub t_first: Option<i64>,
}

/// A fully pulled result.
#[derive(Clone, Debug, Default)]
pub struct QueryResult {
    pub fields: Vec<String>,
    pub records: Vec<Vec<Value>>,
    /// The metadata of the final `SUCCESS` (`type`, `stats`, `bookmark`, `t_last`, `db`...).
    pub summary: PropertyMap,
}

/// One batch of a pulled stream.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub records: Vec<Vec<Value>>,
    /// The server has more records for this result (`PULL` again).
    pub has_more: bool,
    pub summary: PropertyMap,
}

/// One reply message.
enum Reply {
    Success(PropertyMap),
    Record(Vec<Value>),
    Ignored,
    Failure(Error),
}

/// A blocking connection to a Bolt server. Not thread-safe by design: one per worker thread.
pub struct Client {
    reader: MessageReader<TcpStream>,
    writer: MessageWriter<TcpStream>,
    version: Version,
    dialect: Dialect,
    server_agent: String,
    /// A stream opened by [`Client::open_stream`] has records left to read.
    streaming: bool,
    /// A FAILURE was seen and not yet cleared by RESET.
    needs_reset: bool,
    broken: bool,
    /// The buffer replies are read into, reused for every message.
    msg: Vec<u8>,
    /// When set, every RECORD message is also appended here (see [`Client::capture_records`]).
    captured: Option<Vec<u8>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("version", &self.version)
            .field("server_agent", &self.server_agent)
            .finish()
    }
}

fn io_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(Status::Io, format!("{what}: {e}"))
}

fn protocol_error(e: impl std::fmt::Display) -> Error {
    Error::new(Status::RequestInvalid, format!("Bolt protocol error: {e}"))
}

fn decode_err(e: DecodeError) -> Error {
    protocol_error(e.message)
}

/// Every status whose code can be matched exactly (first match wins for shared codes).
const KNOWN: &[Status] = &[
    Status::SyntaxError,
    Status::SemanticError,
    Status::TypeError,
    Status::ArgumentError,
    Status::ArithmeticError,
    Status::ParameterMissing,
    Status::EntityNotFound,
    Status::ConstraintValidationFailed,
    Status::ProcedureNotFound,
    Status::DatabaseNotFound,
    Status::TransactionOutdated,
    Status::TransactionTerminated,
    Status::TransactionNotFound,
    Status::InvalidBookmark,
    Status::ForbiddenOnReadOnly,
    Status::Unauthorized,
    Status::RequestInvalid,
    Status::MemoryExhausted,
    Status::TransactionOutOfMemory,
    Status::Internal,
];

/// Maps a Neo4j status code to an Arbor error, keeping the original code visible when the
/// mapping is not exact.
pub fn error_from_code(code: &str, message: &str) -> Error {
    if let Some(status) = KNOWN.iter().copied().find(|s| s.code() == code) {
        return Error::new(status, message);
    }
    let status = if code.starts_with("Neo.TransientError") {
        Status::TransactionOutdated
    } else if code.starts_with("Neo.ClientError.Security") {
        Status::Unauthorized
    } else if code.starts_with("Neo.ClientError.Statement") {
        Status::SemanticError
    } else if code.starts_with("Neo.ClientError") {
        Status::RequestInvalid
    } else {
        Status::Internal
    };
    Error::new(status, format!("[{code}] {message}"))
}

/// Whether retrying the same statement may succeed (Neo4j's transient class: deadlocks,
/// write-write conflicts, a busy server).
pub fn is_transient(e: &Error) -> bool {
    e.status.code().starts_with("Neo.TransientError")
}

impl Client {
    /// Connects to `addr` (`host:port`, or a `bolt://host:port` / `neo4j://host:port` URI) and
    /// authenticates.
    pub fn connect(addr: &str, config: &ClientConfig) -> Result<Client> {
        let hostport = strip_scheme(addr);
        let addrs: Vec<_> = hostport
            .to_socket_addrs()
            .map_err(|e| io_error(&format!("resolving {hostport}"), e))?
            .collect();
        let mut last = None;
        let mut stream = None;
        for a in addrs {
            let res = match config.timeout {
                Some(t) => TcpStream::connect_timeout(&a, t),
                None => TcpStream::connect(a),
            };
            match res {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let Some(mut stream) = stream else {
            return Err(io_error(
                &format!("connecting to {hostport}"),
                last.map(|e| e.to_string()).unwrap_or_else(|| "no address".into()),
            ));
        };
        // Small request/response messages: Nagle would add 40 ms per round trip.
        stream.set_nodelay(true).map_err(|e| io_error("setting TCP_NODELAY", e))?;
        stream.set_read_timeout(config.timeout).map_err(|e| io_error("setting timeout", e))?;
        stream.set_write_timeout(config.timeout).map_err(|e| io_error("setting timeout", e))?;
        let version = client_handshake(&mut stream)?;
        let read_half = stream.try_clone().map_err(|e| io_error("cloning the socket", e))?;
        let dialect = if version.at_least(5, 0) { Dialect::V5 } else { Dialect::V4_4 };
        let mut client = Client {
            reader: MessageReader::new(read_half, DEFAULT_MAX_MESSAGE_BYTES),
            writer: MessageWriter::new(stream, 64 * 1024),
            version,
            dialect,
            server_agent: String::new(),
            streaming: false,
            needs_reset: false,
            broken: false,
            msg: Vec::new(),
            captured: None,
        };
        client.hello(config)?;
        Ok(client)
    }

    /// The negotiated protocol version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The `server` field of HELLO's SUCCESS (e.g. `Neo4j/5.26.30`).
    pub fn server_agent(&self) -> &str {
        &self.server_agent
    }

    fn hello(&mut self, config: &ClientConfig) -> Result<()> {
        let mut extra = PropertyMap::new();
        extra.insert("user_agent".into(), Value::str(&config.user_agent));
        if self.version.at_least(5, 3) {
            let mut agent = PropertyMap::new();
            agent.insert("product".into(), Value::str(&config.user_agent));
            extra.insert("bolt_agent".into(), Value::Map(agent));
        }
        let auth = auth_map(&config.auth);
        let logon = self.version.at_least(5, 1);
        if !logon {
            extra.extend(auth.clone());
        }
        self.send(tag::HELLO, &[Value::Map(extra)])?;
        if logon {
            self.send(tag::LOGON, &[Value::Map(auth)])?;
        }
        self.flush()?;
        let meta = self.expect_success()?;
        if let Some(Value::String(s)) = meta.get("server") {
            self.server_agent = s.to_string();
        }
        if logon {
            self.expect_success()?;
        }
        Ok(())
    }

    // ---- framing ---------------------------------------------------------------------------

    fn send(&mut self, t: u8, fields: &[Value]) -> Result<()> {
        let d = self.dialect;
        self.writer
            .message(|buf| {
                ps::write_struct_header(buf, fields.len() as u8, t);
                for f in fields {
                    encode_value(buf, f, d)?;
                }
                Ok::<(), EncodeError>(())
            })
            .map_err(|e| Error::argument(format!("cannot send the request: {e}")))
    }

    /// Sends `RUN` with borrowed parameters (no clone of the map).
    fn send_run(&mut self, query: &str, params: &PropertyMap, extra: &PropertyMap) -> Result<()> {
        let d = self.dialect;
        self.writer
            .message(|buf| {
                ps::write_struct_header(buf, 3, tag::RUN);
                ps::write_string(buf, query)?;
                encode_map(buf, params, d)?;
                encode_map(buf, extra, d)
            })
            .map_err(|e| Error::argument(format!("cannot send the query: {e}")))
    }

    fn send_n(&mut self, t: u8, n: i64, qid: i64) -> Result<()> {
        let mut extra = PropertyMap::new();
        extra.insert("n".into(), Value::Int(n));
        if qid >= 0 {
            extra.insert("qid".into(), Value::Int(qid));
        }
        self.send(t, &[Value::Map(extra)])
    }

    fn flush(&mut self) -> Result<()> {
        self.writer.flush().map_err(|e| {
            self.broken = true;
            io_error("writing to the server", e)
        })
    }

    fn recv(&mut self) -> Result<Reply> {
        // One buffer per connection: records are decoded before the next one is read.
        let mut msg = std::mem::take(&mut self.msg);
        let reply = self.recv_in(&mut msg);
        self.msg = msg;
        reply
    }

    fn recv_in(&mut self, msg: &mut Vec<u8>) -> Result<Reply> {
        match self.reader.read_message_into(msg, &|| false) {
            Ok(()) => {}
            Err(e) => {
                self.broken = true;
                return Err(match e {
                    ReadError::Eof | ReadError::Truncated => {
                        Error::new(Status::Io, "the server closed the connection")
                    }
                    ReadError::Io(e) => io_error("reading from the server", e),
                    ReadError::TooLarge { max } => {
                        protocol_error(format!("reply larger than {max} bytes"))
                    }
                    ReadError::Stopped | ReadError::Expired => {
                        Error::new(Status::Io, "read stopped")
                    }
                });
            }
        }
        let mut dec = Decoder::new(msg);
        let (fields, t) = match dec.header().map_err(decode_err)? {
            Header::Struct { fields, tag } => (fields, tag),
            other => return Err(protocol_error(format!("reply is a {}", other.type_name()))),
        };
        let reply = match t {
            tag::SUCCESS | tag::FAILURE => {
                let meta = if fields == 0 {
                    PropertyMap::new()
                } else {
                    match decode_result_value(&mut dec).map_err(decode_err)? {
                        Value::Map(m) => m,
                        Value::Null => PropertyMap::new(),
                        other => {
                            return Err(protocol_error(format!(
                                "reply metadata is a {}",
                                other.type_name()
                            )))
                        }
                    }
                };
                if t == tag::SUCCESS {
                    Reply::Success(meta)
                } else {
                    Reply::Failure(failure_error(&meta))
                }
            }
            tag::RECORD => {
                if let Some(c) = self.captured.as_mut() {
                    c.extend_from_slice(&(msg.len() as u32).to_le_bytes());
                    c.extend_from_slice(msg);
                }
                match decode_result_value(&mut dec).map_err(decode_err)? {
                    Value::List(v) => Reply::Record(v),
                    other => {
                        return Err(protocol_error(format!("RECORD holds a {}", other.type_name())))
                    }
                }
            }
            tag::IGNORED => Reply::Ignored,
            other => return Err(protocol_error(format!("unknown reply tag 0x{other:02X}"))),
        };
        if let Reply::Failure(_) = reply {
            self.needs_reset = true;
        }
        Ok(reply)
    }

    /// Reads one reply that must be SUCCESS.
    fn expect_success(&mut self) -> Result<PropertyMap> {
        match self.recv()? {
            Reply::Success(m) => Ok(m),
            Reply::Failure(e) => Err(e),
            Reply::Ignored => Err(protocol_error("request IGNORED")),
            Reply::Record(_) => Err(protocol_error("unexpected RECORD")),
        }
    }

    /// After a FAILURE the server ignores everything until RESET: clear that, so the caller
    /// gets the error and a usable connection.
    fn recover(&mut self, err: Error) -> Error {
        if self.broken {
            return err;
        }
        if self.needs_reset {
            if let Err(e) = self.reset() {
                return Error::new(err.status, format!("{} (and RESET failed: {e})", err.message));
            }
        }
        err
    }

    /// Reads the replies of `n` pipelined requests after the first FAILURE (they are IGNORED).
    fn drain(&mut self, mut n: usize) {
        while n > 0 && !self.broken {
            match self.recv() {
                Ok(Reply::Record(_)) => {}
                Ok(_) => n -= 1,
                Err(_) => return,
            }
        }
    }

    /// Starts (`true`) or stops keeping a copy of every RECORD message received, as the bytes
    /// came off the wire. Records are still decoded as usual; [`decode_captured`] turns the
    /// copy back into rows later. A benchmark keeps answers this way for verification after
    /// the timed run: a few compact buffers instead of thousands of decoded values per query,
    /// whose allocation would grow the client's heap (page faults) during the measurement.
    pub fn capture_records(&mut self, on: bool) {
        self.captured = if on { Some(self.captured.take().unwrap_or_default()) } else { None };
    }

    /// The RECORD messages captured since the last call (empty when capture is off).
    pub fn take_captured(&mut self) -> Vec<u8> {
        match self.captured.as_mut() {
            Some(c) => std::mem::take(c),
            None => Vec::new(),
        }
    }

    // ---- queries ---------------------------------------------------------------------------

    /// `RUN` (auto-commit outside a transaction) then `PULL` everything, pipelined.
    pub fn run_all(&mut self, query: &str, params: &PropertyMap) -> Result<QueryResult> {
        let mut records = Vec::new();
        let (fields, summary) = self.run_with(query, params, |row| {
            records.push(row);
            Ok(())
        })?;
        Ok(QueryResult { fields, records, summary })
    }

    /// Like [`Client::run_all`] but hands each record to `on_row` instead of collecting them
    /// (constant client memory for large results). An error from `on_row` is returned after
    /// the result has been consumed, so the connection stays in sync.
    pub fn run_with(
        &mut self,
        query: &str,
        params: &PropertyMap,
        on_row: impl FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<(Vec<String>, PropertyMap)> {
        self.send_run_all(query, params)?;
        self.finish_run_with(on_row)
    }

    /// Like [`Client::run_with`] with `RUN`'s extra map (`db`, `mode`, `tx_metadata`, ...); also
    /// returns the `RUN` reply's header (fields and `t_first`).
    pub fn run_extra_with(
        &mut self,
        query: &str,
        params: &PropertyMap,
        extra: &PropertyMap,
        on_row: impl FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<(RunHeader, PropertyMap)> {
        self.send_run(query, params, extra)?;
        self.send_n(tag::PULL, -1, -1)?;
        self.flush()?;
        let header = self.finish_run_header()?;
        let summary = self.finish_pull(on_row)?;
        Ok((header, summary))
    }

    /// Sends `RUN` + `PULL` all and returns without reading any reply, so one thread can keep
    /// several connections busy (write to one server while reading another). Read the replies
    /// with [`Client::finish_run_all`] or [`Client::finish_run_with`] before sending anything
    /// else on this connection.
    pub fn send_run_all(&mut self, query: &str, params: &PropertyMap) -> Result<()> {
        self.send_run(query, params, &PropertyMap::new())?;
        self.send_n(tag::PULL, -1, -1)?;
        self.flush()
    }

    /// Like [`Client::send_run_all`] with one parameter `name` holding a list of maps, written
    /// straight from `rows` (map `i` is `{keys[0]: rows[i][0], keys[1]: rows[i][1], ...}`)
    /// without building a map per row: a copy that streams records from one server into
    /// another spends most of its client time on those maps otherwise. The server receives
    /// exactly what `send_run_all` with the equivalent `PropertyMap` would send.
    pub fn send_run_rows(
        &mut self,
        query: &str,
        name: &str,
        keys: &[&str],
        rows: &[Vec<Value>],
    ) -> Result<()> {
        let d = self.dialect;
        self.writer
            .message(|buf| {
                ps::write_struct_header(buf, 3, tag::RUN);
                ps::write_string(buf, query)?;
                ps::write_map_header(buf, 1)?;
                ps::write_string(buf, name)?;
                ps::write_list_header(buf, rows.len())?;
                for row in rows {
                    ps::write_map_header(buf, keys.len().min(row.len()))?;
                    for (k, v) in keys.iter().zip(row) {
                        ps::write_string(buf, k)?;
                        encode_value(buf, v, d)?;
                    }
                }
                encode_map(buf, &PropertyMap::new(), d)
            })
            .map_err(|e| Error::argument(format!("cannot send the query: {e}")))?;
        self.send_n(tag::PULL, -1, -1)?;
        self.flush()
    }

    /// Reads the replies of a [`Client::send_run_all`], collecting the records.
    pub fn finish_run_all(&mut self) -> Result<QueryResult> {
        let mut records = Vec::new();
        let (fields, summary) = self.finish_run_with(|row| {
            records.push(row);
            Ok(())
        })?;
        Ok(QueryResult { fields, records, summary })
    }

    /// Reads the `RUN` reply of a pipelined `RUN` + `PULL`; on a failure the `PULL`'s reply is
    /// drained and the connection recovered.
    fn finish_run_header(&mut self) -> Result<RunHeader> {
        match self.recv()? {
            Reply::Success(m) => Ok(run_header(&m)),
            Reply::Failure(e) => {
                self.drain(1);
                Err(self.recover(e))
            }
            Reply::Ignored | Reply::Record(_) => {
                self.drain(1);
                Err(self.recover(protocol_error("unexpected reply to RUN")))
            }
        }
    }

    /// Reads the replies of a [`Client::send_run_all`], handing each record to `on_row` (see
    /// [`Client::run_with`]).
    pub fn finish_run_with(
        &mut self,
        on_row: impl FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<(Vec<String>, PropertyMap)> {
        let header = self.finish_run_header()?;
        let summary = self.finish_pull(on_row)?;
        Ok((header.fields, summary))
    }

    /// Reads the records and the final reply of a `PULL` all, handing each record to `on_row`.
    fn finish_pull(
        &mut self,
        mut on_row: impl FnMut(Vec<Value>) -> Result<()>,
    ) -> Result<PropertyMap> {
        let mut row_error = None;
        loop {
            match self.recv()? {
                Reply::Record(r) => {
                    if row_error.is_none() {
                        if let Err(e) = on_row(r) {
                            row_error = Some(e);
                        }
                    }
                }
                Reply::Success(m) => {
                    return match row_error {
                        Some(e) => Err(e),
                        None => Ok(m),
                    }
                }
                Reply::Failure(e) => return Err(self.recover(e)),
                Reply::Ignored => return Err(self.recover(protocol_error("PULL was IGNORED"))),
            }
        }
    }

    /// `RUN` + `PULL` all, returning after the `RUN` reply: the records are then read one at a
    /// time with [`Client::next_record`] (the server streams them; TCP flow control holds it
    /// back while the caller is busy elsewhere). Read the stream to its end before sending
    /// anything else on this connection.
    pub fn open_stream(&mut self, query: &str, params: &PropertyMap) -> Result<RunHeader> {
        self.send_run_all(query, params)?;
        let header = self.finish_run_header()?;
        self.streaming = true;
        Ok(header)
    }

    /// The next record of the stream opened by [`Client::open_stream`]; `None` once the
    /// stream has ended (or when none is open).
    pub fn next_record(&mut self) -> Result<Option<Vec<Value>>> {
        if !self.streaming {
            return Ok(None);
        }
        let reply = self.recv();
        if !matches!(reply, Ok(Reply::Record(_))) {
            self.streaming = false;
        }
        match reply? {
            Reply::Record(r) => Ok(Some(r)),
            Reply::Success(_) => Ok(None),
            Reply::Failure(e) => Err(self.recover(e)),
            Reply::Ignored => Err(self.recover(protocol_error("PULL was IGNORED"))),
        }
    }

    /// `RUN` only; fetch with [`Client::pull`] or drop with [`Client::discard`].
    pub fn run(&mut self, query: &str, params: &PropertyMap) -> Result<RunHeader> {
        self.send_run(query, params, &PropertyMap::new())?;
        self.flush()?;
        match self.recv()? {
            Reply::Success(m) => Ok(run_header(&m)),
            Reply::Failure(e) => Err(self.recover(e)),
            _ => Err(self.recover(protocol_error("unexpected reply to RUN"))),
        }
    }

    /// `PULL n` (`n = -1`: all) of the last result (`qid = -1`) or of `qid`.
    pub fn pull(&mut self, n: i64, qid: i64) -> Result<Batch> {
        self.send_n(tag::PULL, n, qid)?;
        self.flush()?;
        let mut records = Vec::new();
        loop {
            match self.recv()? {
                Reply::Record(r) => records.push(r),
                Reply::Success(m) => {
                    let has_more = matches!(m.get("has_more"), Some(Value::Bool(true)));
                    return Ok(Batch { records, has_more, summary: m });
                }
                Reply::Failure(e) => return Err(self.recover(e)),
                Reply::Ignored => return Err(self.recover(protocol_error("PULL was IGNORED"))),
            }
        }
    }

    /// `DISCARD n` (`-1`: all).
    pub fn discard(&mut self, n: i64, qid: i64) -> Result<Batch> {
        self.send_n(tag::DISCARD, n, qid)?;
        self.flush()?;
        match self.recv()? {
            Reply::Success(m) => {
                let has_more = matches!(m.get("has_more"), Some(Value::Bool(true)));
                Ok(Batch { records: vec![], has_more, summary: m })
            }
            Reply::Failure(e) => Err(self.recover(e)),
            _ => Err(self.recover(protocol_error("unexpected reply to DISCARD"))),
        }
    }

    /// Opens an explicit transaction (`extra`: `mode`, `db`, `tx_timeout`, ... as Bolt defines).
    pub fn begin(&mut self, extra: PropertyMap) -> Result<()> {
        self.send(tag::BEGIN, &[Value::Map(extra)])?;
        self.flush()?;
        match self.expect_success() {
            Ok(_) => Ok(()),
            Err(e) => Err(self.recover(e)),
        }
    }

    /// Commits; returns the bookmark (empty if the server sent none).
    pub fn commit(&mut self) -> Result<String> {
        self.send(tag::COMMIT, &[])?;
        self.flush()?;
        match self.expect_success() {
            Ok(m) => Ok(match m.get("bookmark") {
                Some(Value::String(s)) => s.to_string(),
                _ => String::new(),
            }),
            Err(e) => Err(self.recover(e)),
        }
    }

    pub fn rollback(&mut self) -> Result<()> {
        self.send(tag::ROLLBACK, &[])?;
        self.flush()?;
        match self.expect_success() {
            Ok(_) => Ok(()),
            Err(e) => Err(self.recover(e)),
        }
    }

    /// Returns the connection to a clean state (ends any transaction, clears a failure).
    pub fn reset(&mut self) -> Result<()> {
        self.send(tag::RESET, &[])?;
        self.flush()?;
        // Replies to requests sent before RESET may still be in flight: skip to RESET's own.
        loop {
            match self.recv()? {
                Reply::Success(_) => {
                    self.needs_reset = false;
                    self.streaming = false;
                    return Ok(());
                }
                Reply::Failure(e) => return Err(e),
                Reply::Ignored | Reply::Record(_) => {}
            }
        }
    }

    /// True after an I/O or framing error: the connection must be replaced.
    pub fn is_broken(&self) -> bool {
        self.broken
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if !self.broken {
            // Best effort: a polite GOODBYE lets the server release the session at once.
            let _ = self.send(tag::GOODBYE, &[]);
            let _ = self.writer.flush();
        }
    }
}

fn strip_scheme(addr: &str) -> &str {
    let rest = match addr.split_once("://") {
        Some((_, rest)) => rest,
        None => addr,
    };
    rest.split(['/', '?']).next().unwrap_or(rest)
}

fn auth_map(auth: &Auth) -> PropertyMap {
    let mut m = PropertyMap::new();
    match auth {
        Auth::None => {
            m.insert("scheme".into(), Value::str("none"));
        }
        Auth::Basic { user, password } => {
            m.insert("scheme".into(), Value::str("basic"));
            m.insert("principal".into(), Value::str(user));
            m.insert("credentials".into(), Value::str(password));
        }
    }
    m
}

fn run_header(m: &PropertyMap) -> RunHeader {
    let fields = match m.get("fields") {
        Some(Value::List(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => s.to_string(),
                other => format!("{other:?}"),
            })
            .collect(),
        _ => vec![],
    };
    let qid = match m.get("qid") {
        Some(Value::Int(q)) => *q,
        _ => -1,
    };
    let t_first = match m.get("t_first") {
        Some(Value::Int(t)) => Some(*t),
        _ => None,
    };
    RunHeader { fields, qid, t_first }
}

fn failure_error(meta: &PropertyMap) -> Error {
    // Bolt 5.7+ calls the classic code `neo4j_code`; older versions `code`.
    let code = match meta.get("neo4j_code").or_else(|| meta.get("code")) {
        Some(Value::String(s)) => s.to_string(),
        _ => "Neo.DatabaseError.General.UnknownError".to_string(),
    };
    let message = match meta.get("message") {
        Some(Value::String(s)) => s.to_string(),
        _ => String::new(),
    };
    error_from_code(&code, &message)
}

/// Client side of the handshake: offer 5.8..5.0 (5.5 is never chosen by a correct server) and
/// 4.4, in the legacy four-slot form every server understands.
fn client_handshake(stream: &mut TcpStream) -> Result<Version> {
    use std::io::{Read, Write};
    let mut out = Vec::with_capacity(20);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[0, 3, 8, 5]); // 5.8 down to 5.5
    out.extend_from_slice(&[0, 4, 4, 5]); // 5.4 down to 5.0
    out.extend_from_slice(&[0, 0, 4, 4]); // 4.4
    out.extend_from_slice(&[0, 0, 0, 0]);
    stream.write_all(&out).map_err(|e| io_error("sending the Bolt handshake", e))?;
    stream.flush().map_err(|e| io_error("sending the Bolt handshake", e))?;
    let mut reply = [0u8; 4];
    stream.read_exact(&mut reply).map_err(|e| io_error("reading the Bolt handshake", e))?;
    if reply == [0, 0, 0, 0] {
        return Err(protocol_error("the server speaks none of Bolt 5.0-5.8, 4.4"));
    }
    let v = Version::new(reply[3], reply[2]);
    if !(v.major == 5 && v.minor <= 8 && v.minor != 5) && v != Version::new(4, 4) {
        return Err(protocol_error(format!("the server chose unoffered Bolt {v}")));
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
