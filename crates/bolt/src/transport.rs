//! Bolt chunked framing: messages are split into chunks with a 2-byte big-endian length, and end
//! with an empty chunk (`00 00`). An empty chunk between messages is a NOOP (keep-alive).
//!
//! [`MessageReader`] reassembles whole messages with a size cap and tolerates socket read
//! timeouts (used to poll for server shutdown) without losing partial data. [`MessageWriter`]
//! encodes messages straight into one output buffer and writes it out once it passes a
//! threshold, so a large result streams in bounded memory.

use std::io::{self, Read, Write};

/// Default cap on one incoming message (all its chunks together).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Largest chunk payload the 16-bit length allows.
const MAX_CHUNK: usize = 0xFFFF;

#[derive(Debug)]
pub enum ReadError {
    /// The peer closed the connection between messages.
    Eof,
    /// `stop()` said to stop while we were waiting between messages.
    Stopped,
    /// The message grew past the cap; the stream is no longer usable.
    TooLarge {
        max: usize,
    },
    /// The peer closed the connection in the middle of a message.
    Truncated,
    /// The caller's deadline (`expired()`) passed, between or in the middle of a message.
    Expired,
    Io(io::Error),
}

/// Reads whole Bolt messages from a byte stream.
pub struct MessageReader<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    max_message: usize,
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

impl<R: Read> MessageReader<R> {
    pub fn new(inner: R, max_message: usize) -> MessageReader<R> {
        MessageReader {
            inner,
            buf: vec![0u8; 16 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
            max_message,
        }
    }

    /// Fills `out` completely. `boundary` says we are between messages with nothing consumed, so
    /// EOF is clean and `stop()` may end the wait; anywhere else a read timeout just retries.
    fn read_exact(
        &mut self,
        out: &mut [u8],
        boundary: bool,
        stop: &dyn Fn() -> bool,
        expired: &dyn Fn() -> bool,
    ) -> Result<(), ReadError> {
        let mut filled = 0;
        while filled < out.len() {
            let buffered = self.end - self.start;
            if buffered > 0 {
                let n = buffered.min(out.len() - filled);
                out[filled..filled + n].copy_from_slice(&self.buf[self.start..self.start + n]);
                self.start += n;
                filled += n;
                continue;
            }
            // Large payloads skip the buffer and land in place.
            let direct = out.len() - filled >= self.buf.len();
            let res = if direct {
                self.inner.read(&mut out[filled..])
            } else {
                self.inner.read(&mut self.buf)
            };
            match res {
                Ok(0) => {
                    return Err(if boundary && filled == 0 {
                        ReadError::Eof
                    } else {
                        ReadError::Truncated
                    })
                }
                Ok(n) if direct => filled += n,
                Ok(n) => {
                    self.start = 0;
                    self.end = n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) => {
                    if boundary && filled == 0 && stop() {
                        return Err(ReadError::Stopped);
                    }
                }
                Err(e) => return Err(ReadError::Io(e)),
            }
            // Checked after every read, not only on timeouts: a peer trickling one byte at a
            // time must not outlive its deadline.
            if expired() {
                return Err(ReadError::Expired);
            }
        }
        Ok(())
    }

    /// Reads the next message, skipping NOOP chunks.
    pub fn read_message(&mut self, stop: &dyn Fn() -> bool) -> Result<Vec<u8>, ReadError> {
        let mut msg = Vec::new();
        self.read_message_into(&mut msg, stop)?;
        Ok(msg)
    }

    /// [`Self::read_message`] into `msg` (cleared first), so a caller that decodes each message
    /// before reading the next (the client) reuses one buffer instead of allocating per record.
    pub fn read_message_into(
        &mut self,
        msg: &mut Vec<u8>,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), ReadError> {
        self.read_message_until(msg, stop, &|| false)
    }

    /// [`Self::read_message_into`] that also gives up with [`ReadError::Expired`] once
    /// `expired()` says so (a total deadline: checked after every read, whatever the peer sends).
    pub fn read_message_until(
        &mut self,
        msg: &mut Vec<u8>,
        stop: &dyn Fn() -> bool,
        expired: &dyn Fn() -> bool,
    ) -> Result<(), ReadError> {
        msg.clear();
        loop {
            let mut header = [0u8; 2];
            self.read_exact(&mut header, msg.is_empty(), stop, expired)?;
            let len = usize::from(u16::from_be_bytes(header));
            if len == 0 {
                if msg.is_empty() {
                    continue; // NOOP keep-alive chunk
                }
                return Ok(());
            }
            if msg.len() + len > self.max_message {
                return Err(ReadError::TooLarge { max: self.max_message });
            }
            let old = msg.len();
            // At most one chunk (64 KiB) is reserved ahead of the data that fills it.
            msg.resize(old + len, 0);
            self.read_exact(&mut msg[old..], false, stop, expired)?;
        }
    }
}

/// Writes chunked Bolt messages through an output buffer.
pub struct MessageWriter<W> {
    inner: W,
    out: Vec<u8>,
    flush_threshold: usize,
}

impl<W: Write> MessageWriter<W> {
    pub fn new(inner: W, flush_threshold: usize) -> MessageWriter<W> {
        MessageWriter { inner, out: Vec::with_capacity(flush_threshold + 1024), flush_threshold }
    }

    /// Appends one message whose body `body` encodes. If `body` fails, nothing is appended.
    pub fn message<E>(
        &mut self,
        body: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start = self.out.len();
        // Encode in place after a placeholder header: the common case (< 64 KiB) needs no copy.
        self.out.extend_from_slice(&[0, 0]);
        if let Err(e) = body(&mut self.out) {
            self.out.truncate(start);
            return Err(e);
        }
        let len = self.out.len() - start - 2;
        if len <= MAX_CHUNK {
            self.out[start..start + 2].copy_from_slice(&(len as u16).to_be_bytes());
        } else {
            let payload = self.out.split_off(start + 2);
            self.out.truncate(start);
            for chunk in payload.chunks(MAX_CHUNK) {
                self.out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
                self.out.extend_from_slice(chunk);
            }
        }
        self.out.extend_from_slice(&[0, 0]);
        Ok(())
    }

    /// Writes the buffer out if it has grown past the threshold.
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.out.len() >= self.flush_threshold {
            self.flush()?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            let res = self.inner.write_all(&self.out);
            self.out.clear();
            // A single huge record may have grown the buffer; do not keep that memory around.
            if self.out.capacity() > 4 * self.flush_threshold {
                self.out.shrink_to(self.flush_threshold + 1024);
            }
            res?;
        }
        self.inner.flush()
    }

    pub fn get_ref(&self) -> &W {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> bool {
        false
    }

    #[test]
    fn messages_are_chunked_and_reassembled() {
        let mut w = MessageWriter::new(Vec::new(), 1 << 20);
        let small: Vec<u8> = (0..16).collect();
        let big: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        w.message(|b| {
            b.extend_from_slice(&small);
            Ok::<_, ()>(())
        })
        .unwrap();
        w.message(|b| {
            b.extend_from_slice(&big);
            Ok::<_, ()>(())
        })
        .unwrap();
        // A failed body leaves nothing behind.
        assert!(w
            .message(|b| {
                b.push(1);
                Err(())
            })
            .is_err());
        w.flush().unwrap();
        let bytes = w.get_ref().clone();
        // The spec's single-chunk example.
        assert_eq!(&bytes[..2], &[0x00, 0x10]);
        assert_eq!(&bytes[18..20], &[0, 0]);
        // 200 000 bytes: 3 full chunks and one of 3 395.
        assert_eq!(bytes.len(), 20 + 4 * 2 + 200_000 + 2);

        let mut r = MessageReader::new(&bytes[..], 1 << 20);
        assert_eq!(r.read_message(&never).unwrap(), small);
        assert_eq!(r.read_message(&never).unwrap(), big);
        assert!(matches!(r.read_message(&never), Err(ReadError::Eof)));
    }

    #[test]
    fn noop_chunks_are_skipped_and_truncation_is_detected() {
        let stream = [0, 0, 0, 0, 0, 2, 0xB0, 0x0F, 0, 0, 0, 0, 0, 3, 1];
        let mut r = MessageReader::new(&stream[..], 100);
        assert_eq!(r.read_message(&never).unwrap(), vec![0xB0, 0x0F]);
        assert!(matches!(r.read_message(&never), Err(ReadError::Truncated)));
    }

    #[test]
    fn oversized_messages_are_refused() {
        let mut stream = vec![0x00, 0x08];
        stream.extend_from_slice(&[1; 8]);
        stream.extend_from_slice(&[0x00, 0x08]);
        stream.extend_from_slice(&[1; 8]);
        stream.extend_from_slice(&[0, 0]);
        let mut r = MessageReader::new(&stream[..], 12);
        assert!(matches!(r.read_message(&never), Err(ReadError::TooLarge { max: 12 })));
        let mut r = MessageReader::new(&stream[..], 16);
        assert_eq!(r.read_message(&never).unwrap().len(), 16);
    }

    /// A reader that times out between every byte, like a socket with a short read timeout.
    struct Trickle<'a> {
        data: &'a [u8],
        pos: usize,
        tick: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.tick = !self.tick;
            if self.tick {
                return Err(io::Error::from(io::ErrorKind::WouldBlock));
            }
            if self.pos == self.data.len() || out.is_empty() {
                return Ok(0);
            }
            out[0] = self.data[self.pos];
            self.pos += 1;
            Ok(1)
        }
    }

    #[test]
    fn timeouts_mid_message_lose_nothing_and_stop_only_at_a_boundary() {
        let data = [0, 3, 0xB1, 0x10, 0x80, 0, 0];
        let stop_always = || true;
        let mut r = MessageReader::new(Trickle { data: &data, pos: 0, tick: false }, 100);
        // The first read times out at a boundary: stop wins.
        assert!(matches!(r.read_message(&stop_always), Err(ReadError::Stopped)));
        // Once bytes flow, timeouts inside the message are retried even if stop says yes.
        let mut r = MessageReader::new(Trickle { data: &data, pos: 0, tick: true }, 100);
        assert_eq!(r.read_message(&stop_always).unwrap(), vec![0xB1, 0x10, 0x80]);
    }
}
