//! Bolt over WebSocket on the Bolt port, as Neo4j accepts it: browser tools (Neo4j Browser, the
//! official JavaScript driver in a page) open `ws://host:7687` (or `wss://` over TLS) and then
//! speak ordinary Bolt inside binary frames.
//!
//! A connection whose first four bytes are `GET ` is an HTTP request: with `Upgrade: websocket`
//! and a `Sec-WebSocket-Key` it is answered `101 Switching Protocols` and becomes a
//! [`WsConn`]; anything else gets a short `400` saying this is a Bolt port, and is closed.
//!
//! [`WsConn`] turns frames into the byte stream the rest of the server reads and writes: reads
//! unmask client frames (RFC 6455 requires clients to mask) and concatenate data frame payloads
//! (frame boundaries carry no meaning for Bolt, which has its own chunking); pings are answered
//! with pongs; a close frame is answered and reads as end of stream. Each write becomes one
//! unmasked binary frame. A connection's two threads share it: only the reader thread reads
//! (its partial frame state survives read timeouts, which the reader uses to poll for shutdown);
//! writes, including pongs, are serialised by one lock. Frame headers are parsed and formatted by
//! `tungstenite` (the well-kept WebSocket crate); its own `WebSocket` type owns the stream for both
//! directions, which does not fit a reader and a writer on different threads, so only its frame
//! and handshake helpers are used.

use std::io::{self, Cursor, Read, Write};

use parking_lot::Mutex;
use tungstenite::protocol::frame::coding::{Control, Data, OpCode};
use tungstenite::protocol::frame::FrameHeader;

/// The longest HTTP request head accepted before the upgrade.
const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// Largest control frame payload (RFC 6455 §5.5).
const MAX_CONTROL_PAYLOAD: usize = 125;

/// The first four bytes of an HTTP `GET` request.
pub(crate) const GET: [u8; 4] = *b"GET ";

/// Reads the rest of an HTTP request head (its first four bytes, `GET `, already read) and
/// answers it: `Ok(true)` after a successful WebSocket upgrade, `Ok(false)` when the request
/// was answered with an error and the connection should be closed.
pub(crate) fn upgrade(stream: &mut (impl Read + Write)) -> io::Result<bool> {
    let mut head = GET.to_vec();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_REQUEST_HEAD {
            reply_error(stream, "431 Request Header Fields Too Large", "request head too large")?;
            return Ok(false);
        }
        if stream.read(&mut byte)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "closed inside the HTTP request",
            ));
        }
        head.push(byte[0]);
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    if !matches!(request.parse(&head), Ok(httparse::Status::Complete(_))) {
        reply_error(stream, "400 Bad Request", "malformed HTTP request")?;
        return Ok(false);
    }
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
    };
    let upgrade_ws = header("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let Some(key) = header("sec-websocket-key").filter(|_| upgrade_ws) else {
        reply_error(
            stream,
            "400 Bad Request",
            "this is a Bolt port: connect with a Bolt driver, or open a WebSocket (Upgrade: websocket)",
        )?;
        return Ok(false);
    };
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {accept}\r\n\r\n"
    );
    stream.write_all(response.as_bytes())?;
    stream.flush()?;
    Ok(true)
}

fn reply_error(stream: &mut impl Write, status: &str, message: &str) -> io::Result<()> {
    let body = format!("{message}\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes())?;
    stream.flush()
}

/// Where the reader is inside the incoming frame sequence.
#[derive(Default)]
struct ReadState {
    /// Header bytes of the next frame read so far (a read timeout may split a header).
    header: Vec<u8>,
    /// Payload bytes left in the current data frame, and its mask and position in it.
    remaining: u64,
    mask: Option<[u8; 4]>,
    mask_pos: usize,
    /// The current frame is a control frame: its payload is collected here.
    control: Option<(Control, Vec<u8>)>,
    /// A close frame was seen: every later read is end of stream.
    closed: bool,
}

/// A WebSocket over a plain or TLS socket, read and written as a Bolt byte stream. Generic over
/// the socket (`tls::Sock` in the server) so this file needs nothing from the one that wraps it.
pub(crate) struct WsConn<S> {
    inner: S,
    read: Mutex<ReadState>,
    write: Mutex<()>,
}

impl<S> WsConn<S>
where
    for<'a> &'a S: Read + Write,
{
    pub(crate) fn new(inner: S) -> WsConn<S> {
        WsConn { inner, read: Mutex::new(ReadState::default()), write: Mutex::new(()) }
    }

    pub(crate) fn inner(&self) -> &S {
        &self.inner
    }

    /// Writes one unmasked frame.
    fn send_frame(&self, opcode: OpCode, payload: &[u8]) -> io::Result<usize> {
        let header = FrameHeader { opcode, mask: None, ..FrameHeader::default() };
        let mut out = Vec::with_capacity(payload.len() + 10);
        header.format(payload.len() as u64, &mut out).map_err(io::Error::other)?;
        out.extend_from_slice(payload);
        let _guard = self.write.lock();
        (&self.inner).write_all(&out)?;
        (&self.inner).flush()?;
        Ok(payload.len())
    }

    /// Sends a close frame (best effort) before the socket is shut down.
    pub(crate) fn close(&self) {
        let _ = self.send_frame(OpCode::Control(Control::Close), &1000u16.to_be_bytes());
    }

    /// Reads into `buf` from the frame stream: data payload bytes, or `Ok(0)` at the end.
    pub(crate) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut st = self.read.lock();
        loop {
            if st.closed {
                return Ok(0);
            }
            if st.remaining > 0 && st.control.is_none() {
                let want = buf.len().min(usize::try_from(st.remaining).unwrap_or(usize::MAX));
                let n = (&self.inner).read(&mut buf[..want])?;
                if n == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "closed inside a frame",
                    ));
                }
                if let Some(mask) = st.mask {
                    for (i, b) in buf[..n].iter_mut().enumerate() {
                        *b ^= mask[(st.mask_pos + i) % 4];
                    }
                }
                st.mask_pos = (st.mask_pos + n) % 4;
                st.remaining -= n as u64;
                return Ok(n);
            }
            if st.control.is_some() {
                self.read_control(&mut st)?;
                continue;
            }
            self.read_header(&mut st)?;
        }
    }

    /// Reads the next frame header (resuming a partial one).
    fn read_header(&self, st: &mut ReadState) -> io::Result<()> {
        loop {
            let mut cursor = Cursor::new(&st.header[..]);
            match FrameHeader::parse(&mut cursor) {
                Ok(Some((header, len))) => {
                    st.header.clear();
                    return self.start_frame(st, header, len);
                }
                Ok(None) => {}
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
            }
            let mut byte = [0u8; 1];
            if (&self.inner).read(&mut byte)? == 0 {
                if st.header.is_empty() {
                    st.closed = true;
                    return Ok(());
                }
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "closed inside a frame header",
                ));
            }
            st.header.push(byte[0]);
        }
    }

    fn start_frame(&self, st: &mut ReadState, header: FrameHeader, len: u64) -> io::Result<()> {
        if header.mask.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "WebSocket client frame not masked",
            ));
        }
        st.mask = header.mask;
        st.mask_pos = 0;
        st.remaining = len;
        match header.opcode {
            OpCode::Data(Data::Binary | Data::Continue | Data::Text) => Ok(()),
            OpCode::Control(c @ (Control::Close | Control::Ping | Control::Pong)) => {
                if len as usize > MAX_CONTROL_PAYLOAD {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "WebSocket control frame too long",
                    ));
                }
                st.control = Some((c, Vec::with_capacity(len as usize)));
                Ok(())
            }
            other => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("WebSocket opcode {other} not supported"),
            )),
        }
    }

    /// Collects a control frame's payload, then acts on it.
    fn read_control(&self, st: &mut ReadState) -> io::Result<()> {
        while st.remaining > 0 {
            let mut chunk = [0u8; MAX_CONTROL_PAYLOAD];
            let want = st.remaining as usize;
            let n = (&self.inner).read(&mut chunk[..want])?;
            if n == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed inside a frame"));
            }
            let mask = st.mask.unwrap_or_default();
            let start = st.mask_pos;
            if let Some((_, payload)) = st.control.as_mut() {
                payload
                    .extend(chunk[..n].iter().enumerate().map(|(i, b)| b ^ mask[(start + i) % 4]));
            }
            st.mask_pos = (st.mask_pos + n) % 4;
            st.remaining -= n as u64;
        }
        let Some((kind, payload)) = st.control.take() else { return Ok(()) };
        match kind {
            Control::Ping => {
                self.send_frame(OpCode::Control(Control::Pong), &payload)?;
            }
            Control::Close => {
                let code = payload.get(..2).map(<[u8]>::to_vec).unwrap_or_default();
                let _ = self.send_frame(OpCode::Control(Control::Close), &code);
                st.closed = true;
            }
            _ => {}
        }
        Ok(())
    }

    /// Writes `buf` as one binary frame.
    pub(crate) fn write(&self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.send_frame(OpCode::Data(Data::Binary), buf)
    }
}
