//! The base's node indexes: per indexed target, ids sorted by a 32-bit hash of the key
//! (equality seeks), and the key hash itself.

use std::hash::{Hash, Hasher};

use crate::value::IndexKey;

// ------------------------------------------------------------------------------ the base

/// One indexed `(label, key)`: node ids ordered by a 32-bit hash of their key, packed as
/// `hash << 32 | id` (8 bytes per entry) while ids fit in 32 bits.
pub(super) enum BaseIndex {
    Packed(Box<[u64]>),
    Wide(Box<[(u32, u64)]>),
}

impl BaseIndex {
    pub(super) fn lookup(&self, h: u32, out: &mut Vec<u64>) {
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
        }
    }

    pub(super) fn bytes(&self) -> usize {
        match self {
            BaseIndex::Packed(v) => v.len() * 8,
            BaseIndex::Wide(v) => v.len() * 16,
        }
    }
}

pub(super) fn key_hash(k: &IndexKey) -> u32 {
    let mut h = std::hash::DefaultHasher::new();
    k.hash(&mut h);
    h.finish() as u32
}
