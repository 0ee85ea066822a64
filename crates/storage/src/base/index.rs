//! The base's node indexes: per indexed target, ids sorted by a 32-bit hash of the key
//! (equality seeks), and the key hash itself.
//!
//! The hash orders the index arrays a segment stores, so it is part of the on-disk format
//! and must never change with the toolchain: [`key_hash`] is CRC32C (Castagnoli polynomial,
//! RFC 3720; the `crc32c` crate that also checksums every page) of a canonical encoding of
//! the key, fixed here. Segments whose meta version predates it (1: `std`'s
//! `DefaultHasher`, free to change between Rust releases) have their arrays rebuilt at open
//! (`segment_open.rs`).

use std::sync::Arc;

use arbor_model::Result;

use crate::pager::pool::BufferPool;
use crate::pager::segment::{SegColumn, Segment};
use crate::value::IndexKey;

// ------------------------------------------------------------------------------ the base

/// One indexed `(label, key)`: node ids ordered by a 32-bit hash of their key, packed as
/// `hash << 32 | id` (8 bytes per entry) while ids fit in 32 bits.
pub(super) enum BaseIndex {
    Packed(Box<[u64]>),
    Wide(Box<[(u32, u64)]>),
    /// Either layout left in the segment, read through the pool (a base opened from a
    /// segment whose index arrays do not stay resident).
    Paged(PagedIndex),
}

/// Entries `from..from + n` of a segment's index words (one word per entry, or two when
/// `wide`: hash, then id), in hash order.
pub(super) struct PagedIndex {
    pub seg: Arc<Segment>,
    pub pool: Arc<BufferPool>,
    pub col: SegColumn,
    pub from: u64,
    pub n: u64,
    pub wide: bool,
}

impl PagedIndex {
    /// Entry `i` as `(hash, id)`.
    fn entry(&self, i: u64) -> Result<(u32, u64)> {
        if self.wide {
            let mut w = [0u64; 2];
            self.seg.fill(&self.pool, self.col, self.from + 2 * i, &mut w)?;
            Ok((w[0] as u32, w[1]))
        } else {
            let w = self.seg.get(&self.pool, self.col, self.from + i)?;
            Ok(((w >> 32) as u32, w & 0xffff_ffff))
        }
    }

    /// Binary search for the first entry of hash `h`, then the entries that follow with it.
    fn lookup(&self, h: u32, out: &mut Vec<u64>) -> Result<()> {
        let (mut lo, mut hi) = (0, self.n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(mid)?.0 < h {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        while lo < self.n {
            let (x, id) = self.entry(lo)?;
            if x != h {
                break;
            }
            out.push(id);
            lo += 1;
        }
        Ok(())
    }

    /// The words of these entries (a checkpoint writing a base that reads them).
    pub(super) fn words(&self) -> Result<Vec<u64>> {
        let mut w = vec![0u64; (self.n * if self.wide { 2 } else { 1 }) as usize];
        self.seg.fill(&self.pool, self.col, self.from, &mut w)?;
        Ok(w)
    }
}

impl BaseIndex {
    /// Appends the ids of entries with hash `h` (a failed read of a paged index is the error).
    pub(super) fn lookup(&self, h: u32, out: &mut Vec<u64>) -> Result<()> {
        match self {
            BaseIndex::Packed(v) => {
                let lo = v.partition_point(|x| (x >> 32) < u64::from(h));
                let hi = v.partition_point(|x| (x >> 32) <= u64::from(h));
                out.extend(v[lo..hi].iter().map(|x| x & 0xffff_ffff));
            }
            BaseIndex::Wide(v) => {
                let lo = v.partition_point(|x| x.0 < h);
                let hi = v.partition_point(|x| x.0 <= h);
                out.extend(v[lo..hi].iter().map(|x| x.1));
            }
            BaseIndex::Paged(p) => p.lookup(h, out)?,
        }
        Ok(())
    }

    pub(super) fn bytes(&self) -> usize {
        match self {
            BaseIndex::Packed(v) => v.len() * 8,
            BaseIndex::Wide(v) => v.len() * 16,
            BaseIndex::Paged(_) => 0,
        }
    }
}

/// The key's hash: CRC32C of its canonical bytes (see the module docs). Equal keys (Cypher
/// equality as [`IndexKey`] models it) have equal bytes, so equal hashes.
pub(crate) fn key_hash(k: &IndexKey) -> u32 {
    let mut crc = 0;
    key_bytes(k, &mut |b| crc = crc32c::crc32c_append(crc, b));
    crc
}

/// Feeds the canonical encoding of `k` to `put`: a tag byte per variant, then its fields
/// little-endian at their declared width; strings and byte arrays as a u64 length and the
/// bytes, lists as a u64 count and the elements, an optional coordinate as 0, or 1 and it.
fn key_bytes(k: &IndexKey, put: &mut dyn FnMut(&[u8])) {
    use IndexKey as K;
    match k {
        K::Bool(v) => put(&[0, u8::from(*v)]),
        K::Int(v) => tagged(put, 1, &[&v.to_le_bytes()]),
        K::Float(v) => tagged(put, 2, &[&v.to_le_bytes()]),
        K::Str(s) => tagged(put, 3, &[&(s.len() as u64).to_le_bytes(), s.as_bytes()]),
        K::Bytes(b) => tagged(put, 4, &[&(b.len() as u64).to_le_bytes(), b]),
        K::List(items) => {
            tagged(put, 5, &[&(items.len() as u64).to_le_bytes()]);
            items.iter().for_each(|i| key_bytes(i, put));
        }
        K::Date(d) => tagged(put, 6, &[&d.to_le_bytes()]),
        K::LocalTime(a, b) => tagged(put, 7, &[&a.to_le_bytes(), &b.to_le_bytes()]),
        K::Time(a, b, c) => {
            tagged(put, 8, &[&a.to_le_bytes(), &b.to_le_bytes(), &c.to_le_bytes()]);
        }
        K::LocalDateTime(a, b, c) => {
            tagged(put, 9, &[&a.to_le_bytes(), &b.to_le_bytes(), &c.to_le_bytes()]);
        }
        K::DateTime(a, b, c) => {
            tagged(put, 10, &[&a.to_le_bytes(), &b.to_le_bytes(), &c.to_le_bytes()]);
        }
        K::Duration(m, d, s, n) => {
            let f: [&[u8]; 4] =
                [&m.to_le_bytes(), &d.to_le_bytes(), &s.to_le_bytes(), &n.to_le_bytes()];
            tagged(put, 11, &f);
        }
        K::Point(crs, x, y, z) => {
            tagged(put, 12, &[&crs.to_le_bytes(), &x.to_le_bytes(), &y.to_le_bytes()]);
            match z {
                None => put(&[0]),
                Some(z) => tagged(put, 1, &[&z.to_le_bytes()]),
            }
        }
    }
}

fn tagged(put: &mut dyn FnMut(&[u8]), tag: u8, fields: &[&[u8]]) {
    put(&[tag]);
    fields.iter().for_each(|f| put(f));
}

/// The hash of segment meta version 1 (`std`'s `DefaultHasher` over the derived `Hash`),
/// kept to write such segments in tests.
#[cfg(test)]
pub(crate) fn legacy_key_hash(k: &IndexKey) -> u32 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    k.hash(&mut h);
    h.finish() as u32
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::key_hash;
    use crate::value::IndexKey as K;

    /// The hash is part of the segment format: these values must never change (a change
    /// needs a new segment meta version and a conversion of older segments).
    #[test]
    fn key_hashes_are_fixed() {
        // CRC32C itself: the check value of RFC 3720 / the Castagnoli parameters.
        assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
        let keys = [
            K::Bool(false),
            K::Bool(true),
            K::Int(0),
            K::Int(-1),
            K::Int(1 << 40),
            K::Float(2.5f64.to_bits()),
            K::Str(Arc::from("")),
            K::Str(Arc::from("p42")),
            K::Str(Arc::from("Grüße, 世界")),
            K::Bytes(Arc::from(&[1u8, 2, 3][..])),
            K::List(vec![K::Int(1), K::Str(Arc::from("a"))]),
            K::Date(19_000),
            K::LocalTime(3600, 5),
            K::Time(3600, 5, -7200),
            K::LocalDateTime(19_000, 3600, 5),
            K::DateTime(19_000, 3600, 5),
            K::Duration(14, 3, 3600, 5),
            K::Point(7203, 1.5f64.to_bits(), 2.5f64.to_bits(), None),
            K::Point(9157, 1.5f64.to_bits(), 2.5f64.to_bits(), Some(3.5f64.to_bits())),
        ];
        let got: Vec<u32> = keys.iter().map(key_hash).collect();
        assert_eq!(got, WANT, "the stored index hash changed: {got:08x?}");
        // The encoding, spelled out for two keys.
        let mut s = vec![3u8, 3, 0, 0, 0, 0, 0, 0, 0];
        s.extend_from_slice(b"p42");
        assert_eq!(key_hash(&K::Str(Arc::from("p42"))), crc32c::crc32c(&s));
        assert_eq!(
            key_hash(&K::Int(-1)),
            crc32c::crc32c(&[1, 255, 255, 255, 255, 255, 255, 255, 255])
        );
    }

    const WANT: [u32; 19] = [
        0xf161_77d2,
        0x030a_f4d1,
        0x4fdb_beeb,
        0x8b94_47a6,
        0xea9a_2c95,
        0x5985_cea2,
        0xa24a_648a,
        0x4d13_ebe1,
        0xb242_5bf2,
        0xc38d_da4b,
        0xe3f8_dad4,
        0xa76a_bbbf, // Date: days since 1970 as i64 (dates reach year 999,999,999)
        0x655f_5554,
        0xf895_c041,
        0x47a9_1b1b,
        0x16df_53b4,
        0x0639_20a1,
        0x16d0_b7da,
        0xacbb_f533,
    ];
}
