//! PackStream v1, the binary value format inside Bolt messages: the marker-level encoder and a
//! bounded, non-panicking decoder.
//!
//! This layer knows only PackStream's own types (null, bool, int, float, string, bytes, list,
//! map, structure header). What a structure *means* (a node, a date, ...) depends on the
//! negotiated Bolt version and lives in `values.rs`.
//!
//! Decoder guarantees, because its input comes straight off the network:
//! - it never panics and never reads past the message;
//! - a container's declared length is checked against the bytes that remain before anything is
//!   allocated (every element takes at least one byte, every map entry two), so a forged header
//!   cannot make us reserve more than the message size;
//! - nesting deeper than [`MAX_DEPTH`] is rejected, so recursion is bounded.

use std::fmt;

/// Deepest nesting of lists, maps and structures the decoder accepts. Real parameters are a few
/// levels deep; the limit exists so that a hostile message cannot exhaust the stack.
pub const MAX_DEPTH: usize = 64;

pub mod marker {
    pub const NULL: u8 = 0xC0;
    pub const FLOAT_64: u8 = 0xC1;
    pub const FALSE: u8 = 0xC2;
    pub const TRUE: u8 = 0xC3;
    pub const INT_8: u8 = 0xC8;
    pub const INT_16: u8 = 0xC9;
    pub const INT_32: u8 = 0xCA;
    pub const INT_64: u8 = 0xCB;
    pub const BYTES_8: u8 = 0xCC;
    pub const BYTES_16: u8 = 0xCD;
    pub const BYTES_32: u8 = 0xCE;
    pub const TINY_STRING: u8 = 0x80;
    pub const STRING_8: u8 = 0xD0;
    pub const STRING_16: u8 = 0xD1;
    pub const STRING_32: u8 = 0xD2;
    pub const TINY_LIST: u8 = 0x90;
    pub const LIST_8: u8 = 0xD4;
    pub const LIST_16: u8 = 0xD5;
    pub const LIST_32: u8 = 0xD6;
    pub const TINY_MAP: u8 = 0xA0;
    pub const MAP_8: u8 = 0xD8;
    pub const MAP_16: u8 = 0xD9;
    pub const MAP_32: u8 = 0xDA;
    pub const TINY_STRUCT: u8 = 0xB0;
}

/// Why a message could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: DecodeErrorKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The bytes are not valid PackStream or not the message shape Bolt requires. The stream
    /// can no longer be trusted: the connection is closed after a FAILURE.
    Malformed,
    /// Well-formed PackStream carrying a value we cannot accept (an unknown time zone, a date out
    /// of range). The connection stays usable: FAILURE, then the FAILED state.
    InvalidValue,
}

impl DecodeError {
    pub fn malformed(message: impl Into<String>) -> DecodeError {
        DecodeError { kind: DecodeErrorKind::Malformed, message: message.into() }
    }

    pub fn invalid(message: impl Into<String>) -> DecodeError {
        DecodeError { kind: DecodeErrorKind::InvalidValue, message: message.into() }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The start of one PackStream value: scalars complete, containers with their length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Header {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(usize),
    Bytes(usize),
    List(usize),
    Map(usize),
    Struct { fields: usize, tag: u8 },
}

impl Header {
    /// The PackStream type name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Header::Null => "Null",
            Header::Bool(_) => "Boolean",
            Header::Int(_) => "Integer",
            Header::Float(_) => "Float",
            Header::String(_) => "String",
            Header::Bytes(_) => "Bytes",
            Header::List(_) => "List",
            Header::Map(_) => "Map",
            Header::Struct { .. } => "Structure",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/// A container or string longer than PackStream's 32-bit length fields can express.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge;

pub fn write_null(buf: &mut Vec<u8>) {
    buf.push(marker::NULL);
}

pub fn write_bool(buf: &mut Vec<u8>, v: bool) {
    buf.push(if v { marker::TRUE } else { marker::FALSE });
}

/// Writes an integer in the smallest encoding that holds it, as the spec recommends (drivers
/// accept any width, but the smallest keeps records compact).
pub fn write_int(buf: &mut Vec<u8>, v: i64) {
    if (-16..=127).contains(&v) {
        // Tiny int: the marker byte is the two's-complement value itself.
        buf.push(v as i8 as u8);
    } else if let Ok(v) = i8::try_from(v) {
        buf.push(marker::INT_8);
        buf.push(v as u8);
    } else if let Ok(v) = i16::try_from(v) {
        buf.push(marker::INT_16);
        buf.extend_from_slice(&v.to_be_bytes());
    } else if let Ok(v) = i32::try_from(v) {
        buf.push(marker::INT_32);
        buf.extend_from_slice(&v.to_be_bytes());
    } else {
        buf.push(marker::INT_64);
        buf.extend_from_slice(&v.to_be_bytes());
    }
}

pub fn write_float(buf: &mut Vec<u8>, v: f64) {
    buf.push(marker::FLOAT_64);
    buf.extend_from_slice(&v.to_bits().to_be_bytes());
}

/// Writes a size header: tiny form (marker + size in the low nibble) when `tiny` is set and the
/// size fits, else the 8-, 16- or 32-bit form.
fn write_size(
    buf: &mut Vec<u8>,
    len: usize,
    tiny: Option<u8>,
    m8: u8,
    m16: u8,
    m32: u8,
) -> Result<(), TooLarge> {
    if let (Some(tiny), true) = (tiny, len < 16) {
        buf.push(tiny | len as u8);
    } else if let Ok(l) = u8::try_from(len) {
        buf.push(m8);
        buf.push(l);
    } else if let Ok(l) = u16::try_from(len) {
        buf.push(m16);
        buf.extend_from_slice(&l.to_be_bytes());
    } else if let Ok(l) = u32::try_from(len) {
        buf.push(m32);
        buf.extend_from_slice(&l.to_be_bytes());
    } else {
        return Err(TooLarge);
    }
    Ok(())
}

pub fn write_string(buf: &mut Vec<u8>, s: &str) -> Result<(), TooLarge> {
    write_size(
        buf,
        s.len(),
        Some(marker::TINY_STRING),
        marker::STRING_8,
        marker::STRING_16,
        marker::STRING_32,
    )?;
    buf.extend_from_slice(s.as_bytes());
    Ok(())
}

pub fn write_bytes(buf: &mut Vec<u8>, b: &[u8]) -> Result<(), TooLarge> {
    // Byte arrays have no tiny form.
    write_size(buf, b.len(), None, marker::BYTES_8, marker::BYTES_16, marker::BYTES_32)?;
    buf.extend_from_slice(b);
    Ok(())
}

pub fn write_list_header(buf: &mut Vec<u8>, len: usize) -> Result<(), TooLarge> {
    write_size(buf, len, Some(marker::TINY_LIST), marker::LIST_8, marker::LIST_16, marker::LIST_32)
}

pub fn write_map_header(buf: &mut Vec<u8>, len: usize) -> Result<(), TooLarge> {
    write_size(buf, len, Some(marker::TINY_MAP), marker::MAP_8, marker::MAP_16, marker::MAP_32)
}

/// Structures have at most 15 fields in PackStream v1; every Bolt structure we write has fewer.
pub fn write_struct_header(buf: &mut Vec<u8>, fields: u8, tag: u8) {
    debug_assert!(fields < 16, "PackStream v1 structures have at most 15 fields");
    buf.push(marker::TINY_STRUCT | (fields & 0x0F));
    buf.push(tag);
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/// Reads PackStream values out of one complete message.
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: usize,
    /// Map keys decoded so far (at most [`KEY_CACHE`]), shared by every map of the message
    /// that repeats them: a batch of 10,000 rows with the same five keys allocates five key
    /// strings, not 50,000.
    keys: Vec<std::sync::Arc<str>>,
    /// Where in `keys` the next key is looked for first.
    next_key: usize,
    /// The key sequence of the last map decoded with more than one key (the shared strings)
    /// and the order that sorts it: rows of a batch repeat it, and reuse the order instead of
    /// sorting their keys again (see `values::decode_map_entries`).
    pub(crate) shape_keys: Vec<std::sync::Arc<str>>,
    pub(crate) shape_order: Vec<u8>,
}

/// Distinct map keys a [`Decoder`] remembers.
const KEY_CACHE: usize = 32;

impl<'a> Decoder<'a> {
    pub fn new(buf: &'a [u8]) -> Decoder<'a> {
        Decoder {
            buf,
            pos: 0,
            depth: 0,
            keys: Vec::new(),
            next_key: 0,
            shape_keys: Vec::new(),
            shape_order: Vec::new(),
        }
    }

    /// Reads a map key (a String), shared with the earlier keys of this message that have the
    /// same text.
    pub fn key(&mut self) -> Result<std::sync::Arc<str>, DecodeError> {
        let len = match self.header()? {
            Header::String(len) => len,
            other => {
                return Err(DecodeError::malformed(format!(
                    "expected a String but got {}",
                    other.type_name()
                )))
            }
        };
        let bytes = self.take(len)?;
        // Rows of a batch repeat their keys in the same order: try the key after the last
        // one found first.
        if let Some(k) = self.keys.get(self.next_key).filter(|k| k.as_bytes() == bytes) {
            self.next_key += 1;
            return Ok(k.clone());
        }
        if let Some(i) = self.keys.iter().position(|k| k.as_bytes() == bytes) {
            self.next_key = i + 1;
            return Ok(self.keys[i].clone());
        }
        let s = std::str::from_utf8(bytes)
            .map_err(|_| DecodeError::malformed("PackStream string is not valid UTF-8"))?;
        let k: std::sync::Arc<str> = std::sync::Arc::from(s);
        if self.keys.len() < KEY_CACHE {
            self.keys.push(k.clone());
            self.next_key = self.keys.len();
        }
        Ok(k)
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_at_end(&self) -> bool {
        self.pos == self.buf.len()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::malformed(format!(
                "PackStream value needs {n} bytes but only {} remain in the message",
                self.remaining()
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Checks a declared element count against what the message can still hold, so a forged
    /// header cannot make the caller reserve more than the message size.
    fn checked_len(&self, len: usize, min_bytes_each: usize) -> Result<usize, DecodeError> {
        if len.saturating_mul(min_bytes_each) > self.remaining() {
            return Err(DecodeError::malformed(format!(
                "PackStream container declares {len} entries but only {} bytes remain",
                self.remaining()
            )));
        }
        Ok(len)
    }

    /// Reads the next marker and whatever fixed-size payload it has.
    pub fn header(&mut self) -> Result<Header, DecodeError> {
        let m = self.u8()?;
        let h = match m {
            0x00..=0x7F => Header::Int(i64::from(m)),
            0xF0..=0xFF => Header::Int(i64::from(m as i8)),
            0x80..=0x8F => Header::String(self.checked_len(usize::from(m & 0x0F), 1)?),
            0x90..=0x9F => Header::List(self.checked_len(usize::from(m & 0x0F), 1)?),
            0xA0..=0xAF => Header::Map(self.checked_len(usize::from(m & 0x0F), 2)?),
            0xB0..=0xBF => {
                let tag = self.u8()?;
                Header::Struct { fields: self.checked_len(usize::from(m & 0x0F), 1)?, tag }
            }
            marker::NULL => Header::Null,
            marker::FLOAT_64 => Header::Float(f64::from_bits(u64::from_be_bytes(self.array()?))),
            marker::FALSE => Header::Bool(false),
            marker::TRUE => Header::Bool(true),
            marker::INT_8 => Header::Int(i64::from(i8::from_be_bytes(self.array()?))),
            marker::INT_16 => Header::Int(i64::from(i16::from_be_bytes(self.array()?))),
            marker::INT_32 => Header::Int(i64::from(i32::from_be_bytes(self.array()?))),
            marker::INT_64 => Header::Int(i64::from_be_bytes(self.array()?)),
            marker::BYTES_8 | marker::BYTES_16 | marker::BYTES_32 => {
                let len = self.size(m - marker::BYTES_8)?;
                Header::Bytes(self.checked_len(len, 1)?)
            }
            marker::STRING_8 | marker::STRING_16 | marker::STRING_32 => {
                let len = self.size(m - marker::STRING_8)?;
                Header::String(self.checked_len(len, 1)?)
            }
            marker::LIST_8 | marker::LIST_16 | marker::LIST_32 => {
                let len = self.size(m - marker::LIST_8)?;
                Header::List(self.checked_len(len, 1)?)
            }
            marker::MAP_8 | marker::MAP_16 | marker::MAP_32 => {
                let len = self.size(m - marker::MAP_8)?;
                Header::Map(self.checked_len(len, 2)?)
            }
            other => {
                return Err(DecodeError::malformed(format!(
                    "unknown PackStream marker 0x{other:02X}"
                )))
            }
        };
        Ok(h)
    }

    /// Reads an 8-, 16- or 32-bit unsigned size (`width` 0, 1, 2).
    fn size(&mut self, width: u8) -> Result<usize, DecodeError> {
        Ok(match width {
            0 => usize::from(self.u8()?),
            1 => usize::from(u16::from_be_bytes(self.array()?)),
            _ => u32::from_be_bytes(self.array()?) as usize,
        })
    }

    /// The payload of a string whose header was just read.
    pub fn string_body(&mut self, len: usize) -> Result<&'a str, DecodeError> {
        let bytes = self.take(len)?;
        std::str::from_utf8(bytes)
            .map_err(|_| DecodeError::malformed("PackStream string is not valid UTF-8"))
    }

    /// The payload of a byte array whose header was just read.
    pub fn bytes_body(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        self.take(len)
    }

    /// Enters a container; pair with [`Decoder::leave`].
    pub fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= MAX_DEPTH {
            return Err(DecodeError::malformed(format!(
                "PackStream value nested deeper than {MAX_DEPTH} levels"
            )));
        }
        self.depth += 1;
        Ok(())
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Reads a string value (header and body).
    pub fn string(&mut self) -> Result<&'a str, DecodeError> {
        match self.header()? {
            Header::String(len) => self.string_body(len),
            other => Err(DecodeError::malformed(format!(
                "expected a String but got {}",
                other.type_name()
            ))),
        }
    }

    /// Reads an integer value.
    pub fn int(&mut self) -> Result<i64, DecodeError> {
        match self.header()? {
            Header::Int(v) => Ok(v),
            other => Err(DecodeError::malformed(format!(
                "expected an Integer but got {}",
                other.type_name()
            ))),
        }
    }

    /// Skips one complete value of any type (used for fields we do not interpret).
    pub fn skip(&mut self) -> Result<(), DecodeError> {
        match self.header()? {
            Header::String(len) | Header::Bytes(len) => {
                self.take(len)?;
            }
            Header::List(len) | Header::Struct { fields: len, .. } => {
                self.enter()?;
                for _ in 0..len {
                    self.skip()?;
                }
                self.leave();
            }
            Header::Map(len) => {
                self.enter()?;
                for _ in 0..len {
                    self.string()?;
                    self.skip()?;
                }
                self.leave();
            }
            Header::Null | Header::Bool(_) | Header::Int(_) | Header::Float(_) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_bytes(v: i64) -> Vec<u8> {
        let mut b = Vec::new();
        write_int(&mut b, v);
        b
    }

    #[test]
    fn ints_use_the_smallest_encoding_at_every_boundary() {
        let cases: &[(i64, usize, Option<u8>)] = &[
            (0, 1, None),
            (127, 1, None),
            (-16, 1, None),
            (-17, 2, Some(marker::INT_8)),
            (-128, 2, Some(marker::INT_8)),
            (128, 3, Some(marker::INT_16)),
            (-129, 3, Some(marker::INT_16)),
            (32767, 3, Some(marker::INT_16)),
            (-32768, 3, Some(marker::INT_16)),
            (32768, 5, Some(marker::INT_32)),
            (-32769, 5, Some(marker::INT_32)),
            (i64::from(i32::MAX), 5, Some(marker::INT_32)),
            (i64::from(i32::MIN), 5, Some(marker::INT_32)),
            (i64::from(i32::MAX) + 1, 9, Some(marker::INT_64)),
            (i64::from(i32::MIN) - 1, 9, Some(marker::INT_64)),
            (i64::MAX, 9, Some(marker::INT_64)),
            (i64::MIN, 9, Some(marker::INT_64)),
        ];
        for &(v, len, m) in cases {
            let b = int_bytes(v);
            assert_eq!(b.len(), len, "length of {v}");
            if let Some(m) = m {
                assert_eq!(b[0], m, "marker of {v}");
            }
            let mut d = Decoder::new(&b);
            assert_eq!(d.header().unwrap(), Header::Int(v));
            assert!(d.is_at_end());
        }
        assert_eq!(int_bytes(-1), vec![0xFF]);
        assert_eq!(int_bytes(-16), vec![0xF0]);
    }

    #[test]
    fn non_minimal_int_encodings_are_accepted() {
        let mut d = Decoder::new(&[marker::INT_64, 0, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(d.header().unwrap(), Header::Int(5));
        let mut d = Decoder::new(&[marker::INT_16, 0xFF, 0xFE]);
        assert_eq!(d.header().unwrap(), Header::Int(-2));
    }

    #[test]
    fn size_headers_switch_width_at_the_boundaries() {
        // (length, expected header bytes) for strings.
        let cases: &[(usize, &[u8])] = &[
            (0, &[0x80]),
            (15, &[0x8F]),
            (16, &[marker::STRING_8, 16]),
            (255, &[marker::STRING_8, 255]),
            (256, &[marker::STRING_16, 1, 0]),
            (65535, &[marker::STRING_16, 0xFF, 0xFF]),
            (65536, &[marker::STRING_32, 0, 1, 0, 0]),
        ];
        for &(len, header) in cases {
            let s = "x".repeat(len);
            let mut b = Vec::new();
            write_string(&mut b, &s).unwrap();
            assert_eq!(&b[..header.len()], header, "string header for {len}");
            assert_eq!(b.len(), header.len() + len);
            let mut d = Decoder::new(&b);
            assert_eq!(d.string().unwrap(), s);
            assert!(d.is_at_end());
        }
        for len in [0usize, 15, 16, 255, 256, 65535, 65536] {
            let mut b = Vec::new();
            write_list_header(&mut b, len).unwrap();
            for _ in 0..len {
                write_null(&mut b);
            }
            let mut d = Decoder::new(&b);
            assert_eq!(d.header().unwrap(), Header::List(len), "list {len}");
            let mut b = Vec::new();
            write_map_header(&mut b, len).unwrap();
            for i in 0..len {
                write_string(&mut b, &i.to_string()).unwrap();
                write_null(&mut b);
            }
            let mut d = Decoder::new(&b);
            assert_eq!(d.header().unwrap(), Header::Map(len), "map {len}");
            let mut b = Vec::new();
            write_bytes(&mut b, &vec![7u8; len]).unwrap();
            let mut d = Decoder::new(&b);
            assert_eq!(d.header().unwrap(), Header::Bytes(len), "bytes {len}");
            assert_eq!(d.bytes_body(len).unwrap().len(), len);
        }
        // Byte arrays never use a tiny form.
        let mut b = Vec::new();
        write_bytes(&mut b, &[]).unwrap();
        assert_eq!(b, vec![marker::BYTES_8, 0]);
    }

    #[test]
    fn floats_round_trip_bit_exactly() {
        for v in [0.0, -0.0, 1.5, f64::MAX, f64::MIN_POSITIVE, f64::INFINITY, f64::NEG_INFINITY] {
            let mut b = Vec::new();
            write_float(&mut b, v);
            let mut d = Decoder::new(&b);
            match d.header().unwrap() {
                Header::Float(f) => assert_eq!(f.to_bits(), v.to_bits()),
                other => panic!("{other:?}"),
            }
        }
        let mut b = Vec::new();
        write_float(&mut b, f64::NAN);
        assert!(matches!(Decoder::new(&b).header().unwrap(), Header::Float(f) if f.is_nan()));
    }

    #[test]
    fn forged_lengths_are_rejected_before_allocation() {
        // A 32-bit list header claiming 4 billion entries in a 5-byte message.
        let mut d = Decoder::new(&[marker::LIST_32, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(d.header().unwrap_err().kind, DecodeErrorKind::Malformed);
        let mut d = Decoder::new(&[marker::STRING_8, 10, b'a']);
        assert!(d.string().is_err());
        let mut d = Decoder::new(&[0xA2, 0x81, b'a', 1]);
        assert!(d.header().is_err(), "map of 2 entries needs at least 4 bytes");
    }

    #[test]
    fn invalid_utf8_and_unknown_markers_are_errors() {
        assert!(Decoder::new(&[0x82, 0xC3, 0x28]).string().is_err());
        for m in [0xC4u8, 0xC7, 0xCF, 0xD3, 0xD7, 0xDB, 0xDC, 0xDF, 0xE0, 0xEF] {
            assert!(Decoder::new(&[m, 0, 0, 0, 0]).header().is_err(), "marker {m:02X}");
        }
    }

    #[test]
    fn skip_respects_the_depth_limit() {
        let mut deep = vec![0x91u8; MAX_DEPTH + 1];
        deep.push(0xC0);
        assert!(Decoder::new(&deep).skip().is_err());
        let mut ok = vec![0x91u8; MAX_DEPTH];
        ok.push(0xC0);
        let mut d = Decoder::new(&ok);
        d.skip().unwrap();
        assert!(d.is_at_end());
    }
}
