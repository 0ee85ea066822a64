//! Input id -> dense node id, per id group.
//!
//! Integer ids (`--id-type=integer|actual`) are keys as they are: in a direct table while they
//! are dense, else hashed. String ids are keyed by a
//! 128-bit hash of their bytes instead of the bytes themselves, which keeps the table at ~24 bytes
//! per node however long the ids are; two distinct ids collide with probability ~n²/2¹²⁹
//! (about 10⁻²¹ for 458 M ids), far below the rate of undetected disk errors.
//! The map is filled by one thread in input order (so duplicate detection and dense ids are
//! deterministic) and then read by all relationship parser threads.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A node's key in its id group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdKey {
    Int(i64),
    Str(u128),
}

/// How input ids are interpreted (`--id-type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdType {
    String,
    Integer,
    /// Neo4j's "actual" node ids; Arbor maps them like integers (dense ids in input order).
    Actual,
}

impl IdType {
    pub fn parse(s: &str) -> Option<IdType> {
        match s.to_ascii_lowercase().as_str() {
            "string" => Some(IdType::String),
            "integer" => Some(IdType::Integer),
            "actual" => Some(IdType::Actual),
            _ => None,
        }
    }

    /// The key of an id field's text, or why it is not a valid id.
    pub fn key(self, text: &str) -> Result<IdKey, String> {
        match self {
            // A canonical decimal string ("0", "17", not "017" or "+17") names exactly one
            // integer, so it is keyed as that integer (in the integer table, which string keys
            // never share): exported string ids are often numbers, and dense ones then get the
            // direct table.
            IdType::String => Ok(match canonical_decimal(text) {
                Some(n) => IdKey::Int(n),
                None => IdKey::Str(hash128(text.as_bytes())),
            }),
            IdType::Integer | IdType::Actual => text
                .trim()
                .parse::<i64>()
                .map(IdKey::Int)
                .map_err(|_| format!("id `{text}` is not an integer (--id-type={self:?})")),
        }
    }
}

/// The value of a canonical non-negative decimal of at most 18 digits.
fn canonical_decimal(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.is_empty() || b.len() > 18 || (b[0] == b'0' && b.len() > 1) {
        return None;
    }
    let mut v: i64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(v)
}

/// The keys are already well mixed (hashes) or need one multiply (integers).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 ^= self.0 >> 29;
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }

    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// Separate tables per key kind keep entries small (an enum key would pad every entry to 48
/// bytes).
#[derive(Default)]
struct Map {
    ints: IntMap,
    strs: HashMap<(u64, u64), u32, BuildHasherDefault<KeyHasher>>,
}

const EMPTY: u32 = u32::MAX;

/// Integer ids. Exported ids are usually small and dense (1..n, or a sequence per label).
/// While the ids of a group arrive as one ascending run onto consecutive nodes, the map is
/// just that arithmetic (`Run`: no memory, no memory access per lookup, which is what the
/// relationship stage spends its time on). Otherwise a direct table indexed by the id
/// (4 bytes per slot, one memory access), offset by the first id seen; an id below that, or
/// one that would make the table less than half full, moves everything to a hash table.
enum IntMap {
    Run { base: i64, first: u32, len: u32 },
    Dense { base: Option<i64>, slots: Vec<u32>, count: usize },
    Hash(HashMap<i64, u32, BuildHasherDefault<KeyHasher>>),
}

impl Default for IntMap {
    fn default() -> Self {
        IntMap::Run { base: 0, first: 0, len: 0 }
    }
}

impl IntMap {
    fn insert(&mut self, id: i64, node: u32) -> Result<(), u32> {
        if let IntMap::Run { base, first, len } = self {
            if *len == 0 {
                (*base, *first, *len) = (id, node, 1);
                return Ok(());
            }
            let d = id.checked_sub(*base);
            if d == Some(i64::from(*len))
                && Some(node) == first.checked_add(*len)
                && *len < u32::MAX
            {
                *len += 1;
                return Ok(());
            }
            if let Some(d) = d.filter(|d| (0..i64::from(*len)).contains(d)) {
                return Err(*first + d as u32);
            }
            // The run ends: materialize it as a table.
            let slots: Vec<u32> = (0..*len).map(|i| *first + i).collect();
            let count = slots.len();
            *self = IntMap::Dense { base: Some(*base), slots, count };
        }
        if let IntMap::Dense { base, slots, count } = self {
            let b = *base.get_or_insert(id);
            let fits = id
                .checked_sub(b)
                .and_then(|d| usize::try_from(d).ok())
                .filter(|&i| i < (*count * 2).max(1 << 20));
            match fits {
                Some(i) => {
                    if i >= slots.len() {
                        let len = (i + 1).max(slots.len() + slots.len() / 2);
                        slots.resize(len, EMPTY);
                    }
                    if slots[i] != EMPTY {
                        return Err(slots[i]);
                    }
                    slots[i] = node;
                    *count += 1;
                    return Ok(());
                }
                None => {
                    let mut map: HashMap<i64, u32, BuildHasherDefault<KeyHasher>> =
                        HashMap::default();
                    map.reserve(*count * 2);
                    for (i, n) in slots.iter().enumerate() {
                        if *n != EMPTY {
                            map.insert(b + i as i64, *n);
                        }
                    }
                    *self = IntMap::Hash(map);
                }
            }
        }
        match self {
            IntMap::Hash(map) => match map.entry(id) {
                std::collections::hash_map::Entry::Occupied(e) => Err(*e.get()),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(node);
                    Ok(())
                }
            },
            _ => Ok(()),
        }
    }

    fn get(&self, id: i64) -> Option<u32> {
        match self {
            IntMap::Run { base, first, len } => id
                .checked_sub(*base)
                .filter(|d| (0..i64::from(*len)).contains(d))
                .map(|d| *first + d as u32),
            IntMap::Dense { base, slots, .. } => base
                .and_then(|b| id.checked_sub(b))
                .and_then(|d| usize::try_from(d).ok())
                .and_then(|i| slots.get(i))
                .copied()
                .filter(|n| *n != EMPTY),
            IntMap::Hash(map) => map.get(&id).copied(),
        }
    }

    fn bytes(&self) -> u64 {
        match self {
            IntMap::Run { .. } => 0,
            IntMap::Dense { slots, .. } => slots.capacity() as u64 * 4,
            IntMap::Hash(map) => map.capacity() as u64 * 17,
        }
    }
}

fn split(h: u128) -> (u64, u64) {
    ((h >> 64) as u64, h as u64)
}

fn mix(a: u64, b: u64) -> u64 {
    let p = u128::from(a).wrapping_mul(u128::from(b));
    (p as u64) ^ ((p >> 64) as u64)
}

/// A 128-bit hash of a byte string: two independent multiply-fold lanes over 8-byte words.
pub fn hash128(bytes: &[u8]) -> u128 {
    const K: [u64; 4] = [
        0xa076_1d64_78bd_642f,
        0xe703_7ed1_a0b4_28db,
        0x8ebc_6af0_9c88_c6e3,
        0x5899_65cc_7537_4cc3,
    ];
    let mut h1 = K[0] ^ bytes.len() as u64;
    let mut h2 = K[1].wrapping_add(bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let w = u64::from_le_bytes(w);
        h1 = mix(h1 ^ w, K[2]);
        h2 = mix(h2 ^ w.rotate_left(31), K[3]);
    }
    let rest = chunks.remainder();
    let mut w = [0u8; 8];
    w[..rest.len()].copy_from_slice(rest);
    let w = u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56);
    h1 = mix(h1 ^ w, K[2]);
    h2 = mix(h2 ^ w.rotate_left(31), K[3]);
    h1 = mix(h1 ^ (h2 >> 7), K[1]);
    h2 = mix(h2 ^ (h1 >> 11), K[0]);
    (u128::from(h1) << 64) | u128::from(h2)
}

/// All id groups.
#[derive(Default)]
pub struct IdMap {
    names: Vec<String>,
    groups: Vec<Map>,
}

impl IdMap {
    /// The index of group `name`, created if new.
    pub fn group(&mut self, name: &str) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_string());
                self.groups.push(Map::default());
                self.groups.len() - 1
            }
        }
    }

    /// The index of an existing group.
    pub fn find_group(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Maps `key` to `node` in `group`; on a duplicate returns the node it already maps to.
    pub fn insert(&mut self, group: usize, key: IdKey, node: u32) -> Result<(), u32> {
        use std::collections::hash_map::Entry;
        let g = &mut self.groups[group];
        match key {
            IdKey::Int(i) => g.ints.insert(i, node),
            IdKey::Str(h) => match g.strs.entry(split(h)) {
                Entry::Occupied(e) => Err(*e.get()),
                Entry::Vacant(v) => {
                    v.insert(node);
                    Ok(())
                }
            },
        }
    }

    pub fn get(&self, group: usize, key: &IdKey) -> Option<u32> {
        let g = self.groups.get(group)?;
        match key {
            IdKey::Int(i) => g.ints.get(*i),
            IdKey::Str(h) => g.strs.get(&split(*h)).copied(),
        }
    }

    /// Approximate heap bytes (hash tables at their capacity).
    pub fn bytes(&self) -> u64 {
        self.groups.iter().map(|g| g.ints.bytes() + g.strs.capacity() as u64 * 25).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_separate_and_duplicates_found() {
        let mut m = IdMap::default();
        let a = m.group("A");
        let b = m.group("B");
        assert_eq!(m.group("A"), a);
        let k = IdType::String.key("42").unwrap();
        m.insert(a, k, 0).unwrap();
        m.insert(b, k, 1).unwrap();
        assert_eq!(m.insert(a, k, 2), Err(0));
        assert_eq!(m.get(a, &k), Some(0));
        assert_eq!(m.get(b, &k), Some(1));
        assert_eq!(m.get(a, &IdType::String.key("43").unwrap()), None);
        assert_eq!(m.find_group("C"), None);
    }

    #[test]
    fn dense_integer_ids_switch_to_hashing_when_sparse() {
        let mut m = IdMap::default();
        let g = m.group("G");
        for i in 0..1000 {
            m.insert(g, IdKey::Int(i * 3), i as u32).unwrap();
        }
        assert_eq!(m.insert(g, IdKey::Int(30), 7), Err(10));
        assert_eq!(m.get(g, &IdKey::Int(2997)), Some(999));
        assert_eq!(m.get(g, &IdKey::Int(2998)), None);
        assert!(m.bytes() < 64 << 20);
        // A negative and a huge id move the group to a hash table; nothing is lost.
        assert_eq!(m.get(g, &IdKey::Int(-1)), None);
        m.insert(g, IdKey::Int(-5), 5000).unwrap();
        m.insert(g, IdKey::Int(1 << 40), 5001).unwrap();
        assert_eq!(m.insert(g, IdKey::Int(3), 9), Err(1));
        assert_eq!(m.get(g, &IdKey::Int(2997)), Some(999));
        assert_eq!(m.get(g, &IdKey::Int(-5)), Some(5000));
        assert_eq!(m.get(g, &IdKey::Int(1 << 40)), Some(5001));
        assert_eq!(m.get(g, &IdKey::Int(-6)), None);
    }

    #[test]
    fn runs_cost_nothing_until_broken() {
        let mut m = IdMap::default();
        let g = m.group("G");
        for i in 0..1000u32 {
            m.insert(g, IdKey::Int(10 + i64::from(i)), 5 + i).unwrap();
        }
        assert_eq!(m.bytes(), 0);
        assert_eq!(m.get(g, &IdKey::Int(10)), Some(5));
        assert_eq!(m.get(g, &IdKey::Int(1009)), Some(1004));
        assert_eq!(m.get(g, &IdKey::Int(1010)), None);
        assert_eq!(m.get(g, &IdKey::Int(9)), None);
        assert_eq!(m.insert(g, IdKey::Int(500), 77), Err(495));
        // A gap ends the run; everything is still found.
        m.insert(g, IdKey::Int(2000), 2000).unwrap();
        assert!(m.bytes() > 0);
        assert_eq!(m.get(g, &IdKey::Int(1009)), Some(1004));
        assert_eq!(m.get(g, &IdKey::Int(2000)), Some(2000));
        assert_eq!(m.insert(g, IdKey::Int(11), 1), Err(6));
    }

    #[test]
    fn dense_ids_may_start_anywhere() {
        let mut m = IdMap::default();
        let g = m.group("G");
        for i in 0..100 {
            m.insert(g, IdKey::Int(5_000_000 + i), i as u32).unwrap();
        }
        assert_eq!(m.get(g, &IdKey::Int(5_000_042)), Some(42));
        assert_eq!(m.get(g, &IdKey::Int(42)), None);
        assert!(m.bytes() < 8 << 20, "{}", m.bytes());
        m.insert(g, IdKey::Int(7), 100).unwrap();
        assert_eq!(m.get(g, &IdKey::Int(7)), Some(100));
        assert_eq!(m.get(g, &IdKey::Int(5_000_099)), Some(99));
    }

    #[test]
    fn integer_ids() {
        assert_eq!(IdType::Integer.key(" 7 "), Ok(IdKey::Int(7)));
        assert!(IdType::Integer.key("x7").unwrap_err().contains("not an integer"));
        assert_ne!(IdType::String.key("7"), IdType::String.key("07"));
        assert_eq!(IdType::String.key("7"), Ok(IdKey::Int(7)));
        assert!(matches!(IdType::String.key("07"), Ok(IdKey::Str(_))));
        assert!(matches!(IdType::String.key(" 7"), Ok(IdKey::Str(_))));
        assert!(matches!(IdType::String.key("-7"), Ok(IdKey::Str(_))));
        assert!(matches!(IdType::String.key("1234567890123456789"), Ok(IdKey::Str(_))));
        let mut m = IdMap::default();
        let g = m.group("G");
        m.insert(g, IdType::String.key("7").unwrap(), 0).unwrap();
        m.insert(g, IdType::String.key("07").unwrap(), 1).unwrap();
        assert_eq!(m.get(g, &IdType::String.key("07").unwrap()), Some(1));
        assert_eq!(m.insert(g, IdType::String.key("7").unwrap(), 2), Err(0));
    }

    #[test]
    fn hash_spreads() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000u32 {
            assert!(seen.insert(hash128(format!("id-{i}").as_bytes())));
        }
        assert_ne!(hash128(b""), hash128(b"\0"));
        assert_ne!(hash128(b"abcdefgh"), hash128(b"abcdefgh\0"));
    }
}
