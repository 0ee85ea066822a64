//! The Bolt handshake: the magic preamble, then version negotiation, either legacy (four
//! proposed versions or ranges, the server answers with one) or manifest v1 (the server lists
//! everything it speaks and the client picks).
//!
//! Supported: 4.4, 5.0-5.4, 5.6-5.8 and 6.0. 5.5 is never negotiated: it shipped only in some
//! drivers with a flawed design and no Neo4j server speaks it.

use std::fmt;
use std::io::{self, Read, Write};

pub const MAGIC: [u8; 4] = [0x60, 0x60, 0xB0, 0x17];
const MANIFEST_V1: [u8; 4] = [0x00, 0x00, 0x01, 0xFF];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u8,
    pub minor: u8,
}

impl Version {
    pub const fn new(major: u8, minor: u8) -> Version {
        Version { major, minor }
    }

    pub fn at_least(self, major: u8, minor: u8) -> bool {
        self >= Version::new(major, minor)
    }

    fn to_bytes(self) -> [u8; 4] {
        [0, 0, self.minor, self.major]
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Every version we speak, newest first.
pub const SUPPORTED: &[Version] = &[
    Version::new(6, 0),
    Version::new(5, 8),
    Version::new(5, 7),
    Version::new(5, 6),
    Version::new(5, 4),
    Version::new(5, 3),
    Version::new(5, 2),
    Version::new(5, 1),
    Version::new(5, 0),
    Version::new(4, 4),
];

/// The manifest's list: `[reserved, range, minor, major]` entries covering exactly `SUPPORTED`.
const MANIFEST_RANGES: &[[u8; 4]] = &[[0, 0, 0, 6], [0, 2, 8, 5], [0, 4, 4, 5], [0, 0, 4, 4]];

fn supported(v: Version) -> bool {
    SUPPORTED.contains(&v)
}

/// What the client's four slots ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Legacy negotiation settled on this version.
    Version(Version),
    /// The client offered manifest v1 before any slot we could satisfy.
    Manifest,
    /// Nothing we speak.
    None,
}

/// Scans the slots in the client's order of preference; within a range slot picks the highest
/// version we support.
pub fn choose(slots: &[[u8; 4]; 4]) -> Choice {
    for slot in slots {
        if *slot == MANIFEST_V1 {
            return Choice::Manifest;
        }
        let [_, range, minor, major] = *slot;
        if major == 0 || slot[3] == 0xFF {
            continue;
        }
        let lowest = minor.saturating_sub(range);
        for m in (lowest..=minor).rev() {
            let v = Version::new(major, m);
            if supported(v) {
                return Choice::Version(v);
            }
        }
    }
    Choice::None
}

/// How a handshake ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    pub version: Version,
    /// Manifest v1 was used (HELLO's SUCCESS then reports `protocol_version`).
    pub manifest: bool,
}

#[derive(Debug)]
pub enum HandshakeError {
    BadMagic([u8; 4]),
    NoCommonVersion,
    /// The client picked something from the manifest we did not offer.
    BadManifestChoice(Version),
    Io(io::Error),
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::BadMagic(m) => write!(f, "not a Bolt client (preamble {m:02X?})"),
            HandshakeError::NoCommonVersion => f.write_str("no Bolt version in common"),
            HandshakeError::BadManifestChoice(v) => write!(f, "client chose unoffered version {v}"),
            HandshakeError::Io(e) => write!(f, "I/O error during handshake: {e}"),
        }
    }
}

impl From<io::Error> for HandshakeError {
    fn from(e: io::Error) -> Self {
        HandshakeError::Io(e)
    }
}

pub fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Reads a base-128 varint (least significant group first), at most 10 bytes.
pub fn read_varint(r: &mut impl Read) -> io::Result<u64> {
    let mut value = 0u64;
    for i in 0..10 {
        let mut b = [0u8; 1];
        r.read_exact(&mut b)?;
        value |= u64::from(b[0] & 0x7F) << (7 * i);
        if b[0] & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(io::Error::new(io::ErrorKind::InvalidData, "varint longer than 10 bytes"))
}

/// Runs the server side of the handshake on a fresh connection.
pub fn perform<S: Read + Write>(stream: &mut S) -> Result<Negotiated, HandshakeError> {
    let mut magic = [0u8; 4];
    stream.read_exact(&mut magic)?;
    perform_after_magic(stream, magic)
}

/// The handshake once the first four bytes have been read (the caller looked at them to tell
/// Bolt from a WebSocket upgrade).
pub fn perform_after_magic<S: Read + Write>(
    stream: &mut S,
    magic: [u8; 4],
) -> Result<Negotiated, HandshakeError> {
    if magic != MAGIC {
        return Err(HandshakeError::BadMagic(magic));
    }
    let mut raw = [0u8; 16];
    stream.read_exact(&mut raw)?;
    let mut slots = [[0u8; 4]; 4];
    for (i, slot) in slots.iter_mut().enumerate() {
        slot.copy_from_slice(&raw[i * 4..i * 4 + 4]);
    }
    match choose(&slots) {
        Choice::Version(v) => {
            stream.write_all(&v.to_bytes())?;
            stream.flush()?;
            Ok(Negotiated { version: v, manifest: false })
        }
        Choice::None => {
            // The spec's "no match": four zero bytes, then close.
            stream.write_all(&[0, 0, 0, 0])?;
            stream.flush()?;
            Err(HandshakeError::NoCommonVersion)
        }
        Choice::Manifest => {
            let mut reply = MANIFEST_V1.to_vec();
            write_varint(&mut reply, MANIFEST_RANGES.len() as u64);
            for r in MANIFEST_RANGES {
                reply.extend_from_slice(r);
            }
            write_varint(&mut reply, 0); // no capabilities
            stream.write_all(&reply)?;
            stream.flush()?;
            let mut chosen = [0u8; 4];
            stream.read_exact(&mut chosen)?;
            let _capabilities = read_varint(stream)?;
            let v = Version::new(chosen[3], chosen[2]);
            if !supported(v) {
                return Err(HandshakeError::BadManifestChoice(v));
            }
            Ok(Negotiated { version: v, manifest: true })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(s: [[u8; 4]; 4]) -> Choice {
        choose(&s)
    }

    #[test]
    fn legacy_slots_pick_the_highest_supported_in_the_first_matching_slot() {
        const Z: [u8; 4] = [0; 4];
        // Python 5.x: 5.7..5.0, 4.4..4.2, 4.1, 3.0
        assert_eq!(
            slots([[0, 7, 7, 5], [0, 2, 4, 4], [0, 0, 1, 4], [0, 0, 0, 3]]),
            Choice::Version(Version::new(5, 7))
        );
        // A 5.5-only range falls through to the next slot...
        assert_eq!(slots([[0, 0, 5, 5], [0, 0, 4, 4], Z, Z]), Choice::Version(Version::new(4, 4)));
        // ...and 5.6..5.4 skips 5.5.
        assert_eq!(slots([[0, 1, 6, 5], Z, Z, Z]), Choice::Version(Version::new(5, 6)));
        assert_eq!(slots([[0, 1, 5, 5], Z, Z, Z]), Choice::Version(Version::new(5, 4)));
        // Newer minors than we know are clipped to what we speak.
        assert_eq!(slots([[0, 9, 9, 5], Z, Z, Z]), Choice::Version(Version::new(5, 8)));
        assert_eq!(slots([[0, 0, 0, 6], Z, Z, Z]), Choice::Version(Version::new(6, 0)));
        assert_eq!(slots([[0, 0, 0, 3], [0, 0, 0, 2], Z, Z]), Choice::None);
        assert_eq!(slots([Z, Z, Z, Z]), Choice::None);
        // Manifest first wins; manifest after a matching slot does not.
        assert_eq!(slots([MANIFEST_V1, [0, 8, 8, 5], Z, Z]), Choice::Manifest);
        assert_eq!(slots([[0, 0, 4, 4], MANIFEST_V1, Z, Z]), Choice::Version(Version::new(4, 4)));
        // Unknown manifest versions are skipped.
        assert_eq!(
            slots([[0, 0, 2, 0xFF], [0, 0, 4, 4], Z, Z]),
            Choice::Version(Version::new(4, 4))
        );
    }

    #[test]
    fn manifest_ranges_cover_exactly_the_supported_versions() {
        let mut listed = Vec::new();
        for [_, range, minor, major] in MANIFEST_RANGES.iter().copied() {
            for m in minor - range..=minor {
                listed.push(Version::new(major, m));
            }
        }
        listed.sort();
        let mut want = SUPPORTED.to_vec();
        want.sort();
        assert_eq!(listed, want);
    }

    #[test]
    fn varints_round_trip_including_the_spec_example() {
        let mut b = Vec::new();
        write_varint(&mut b, 1_851_775);
        assert_eq!(b, vec![0xFF, 0x82, 0x71]);
        for v in [0u64, 1, 127, 128, 16_383, 16_384, u64::MAX] {
            let mut b = Vec::new();
            write_varint(&mut b, v);
            assert_eq!(read_varint(&mut &b[..]).unwrap(), v);
        }
        assert!(read_varint(&mut &[0xFFu8; 11][..]).is_err());
    }

    /// An in-memory duplex: reads from `input`, collects writes.
    struct Duplex {
        input: io::Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Duplex {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.input.read(b)
        }
    }

    impl Write for Duplex {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn manifest_exchange_reads_the_clients_choice() {
        let mut input = MAGIC.to_vec();
        input.extend_from_slice(&[0, 0, 1, 0xFF, 0, 8, 8, 5, 0, 2, 4, 4, 0, 0, 0, 3]);
        input.extend_from_slice(&[0, 0, 7, 5, 0x00]);
        let mut d = Duplex { input: io::Cursor::new(input), output: Vec::new() };
        let n = perform(&mut d).unwrap();
        assert_eq!(n, Negotiated { version: Version::new(5, 7), manifest: true });
        let mut want = vec![0, 0, 1, 0xFF, 4];
        for r in MANIFEST_RANGES {
            want.extend_from_slice(r);
        }
        want.push(0);
        assert_eq!(d.output, want);

        // Choosing 5.5 (not offered) fails.
        let mut input = MAGIC.to_vec();
        input.extend_from_slice(&[0, 0, 1, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        input.extend_from_slice(&[0, 0, 5, 5, 0x00]);
        let mut d = Duplex { input: io::Cursor::new(input), output: Vec::new() };
        assert!(matches!(perform(&mut d), Err(HandshakeError::BadManifestChoice(_))));
    }

    #[test]
    fn bad_magic_and_no_match_are_errors() {
        let mut d =
            Duplex { input: io::Cursor::new(b"GET / HTTP/1.1\r\n\r\n".to_vec()), output: vec![] };
        assert!(matches!(perform(&mut d), Err(HandshakeError::BadMagic(_))));
        assert!(d.output.is_empty());
        let mut input = MAGIC.to_vec();
        input.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
        let mut d = Duplex { input: io::Cursor::new(input), output: Vec::new() };
        assert!(matches!(perform(&mut d), Err(HandshakeError::NoCommonVersion)));
        assert_eq!(d.output, vec![0, 0, 0, 0]);
    }
}
