//! Property blobs of the base: the typed packed encoding (`varint(key << 3 | tag)` + value),
//! string interning while building, per-entity blob columns and dense integer columns.

use std::sync::Arc;

use arbor_model::{NodeId, Value};
use rustc_hash::FxHashMap;

use crate::codec::{Dec, Enc};

use super::columns::Packed;

// ------------------------------------------------------------------------------ property blobs

pub(super) const T_FALSE: u64 = 0;
pub(super) const T_TRUE: u64 = 1;
pub(super) const T_INT: u64 = 2;
pub(super) const T_FLOAT: u64 = 3;
pub(super) const T_STR: u64 = 4;
pub(super) const T_ISTR: u64 = 5;
pub(super) const T_OTHER: u64 = 6;

/// Strings at most this long are interning candidates (longer ones are rarely repeated).
pub(super) const INTERN_MAX_LEN: usize = 64;
/// Distinct strings tracked while building; beyond this new strings stay inline.
pub(super) const INTERN_MAX_DISTINCT: usize = 1 << 18;

/// Interning attempts of one property key after which its hit rate is judged (see
/// [`Interner::intern`]).
pub(super) const INTERN_SAMPLE: u32 = 4096;

/// String interning while building: every candidate gets an index and a use count; at the end
/// only the strings that pay for their table entry are kept.
///
/// Like a columnar format's dictionary encoding, interning falls back to plain (inline)
/// strings for a property key whose values are nearly all distinct (names, ids, free text):
/// after [`INTERN_SAMPLE`] attempts for a key, if more than 90 % of them were new strings the
/// key stops being interned. Interning such a key only cost a hash insert per value and, at
/// the end, a rewrite of every blob (its strings do not pay for a table entry). The decision
/// is carried into the next base built on top of this one (`Base::inline_keys`), so the
/// incremental folds of a bulk load do not learn it again.
#[derive(Default)]
pub(super) struct Interner {
    /// Fx, not SipHash: every string property of every row is looked up here at each rebuild
    /// (SipHash was ~8 % of a rebuild's CPU when bulk-loading distinct strings).
    pub(super) ids: FxHashMap<Arc<str>, u32>,
    pub(super) strs: Vec<(Arc<str>, u64)>,
    /// The first `pinned` strings are the table of the base this build extends (blobs copied
    /// from it refer to them by index): they keep their index whatever their count.
    pub(super) pinned: usize,
    /// Per property key: `(attempts, new strings)` until judged.
    pub(super) sample: FxHashMap<u32, (u32, u32)>,
    /// Property keys whose strings stay inline (sorted).
    pub(super) inline_keys: Vec<u32>,
}

impl Interner {
    pub(super) fn intern(&mut self, key: u32, s: &str) -> Option<u32> {
        if s.len() > INTERN_MAX_LEN || self.inline_keys.binary_search(&key).is_ok() {
            return None;
        }
        let hit = self.ids.get(s).copied();
        if let Some(e) = self.sample.get_mut(&key) {
            e.0 += 1;
            e.1 += u32::from(hit.is_none());
            if e.0 >= INTERN_SAMPLE {
                let (tries, new) = *e;
                self.sample.remove(&key);
                if u64::from(new) * 10 > u64::from(tries) * 9 {
                    if let Err(i) = self.inline_keys.binary_search(&key) {
                        self.inline_keys.insert(i, key);
                    }
                }
            }
        } else {
            self.sample.insert(key, (1, u32::from(hit.is_none())));
        }
        if let Some(i) = hit {
            self.strs[i as usize].1 += 1;
            return Some(i);
        }
        if self.strs.len() >= INTERN_MAX_DISTINCT {
            return None;
        }
        let i = self.strs.len() as u32;
        let s: Arc<str> = Arc::from(s);
        self.ids.insert(s.clone(), i);
        self.strs.push((s, 1));
        Some(i)
    }
}

pub(super) fn put_var(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

pub(super) fn put_props(buf: &mut Vec<u8>, props: &[(u32, Value)], interner: &mut Interner) {
    for (k, v) in props {
        let k_id = *k;
        let k = u64::from(*k) << 3;
        match v {
            Value::Null => {}
            Value::Bool(b) => put_var(buf, k | if *b { T_TRUE } else { T_FALSE }),
            Value::Int(i) => {
                put_var(buf, k | T_INT);
                put_var(buf, ((i << 1) ^ (i >> 63)) as u64);
            }
            Value::Float(f) => {
                put_var(buf, k | T_FLOAT);
                buf.extend_from_slice(&f.to_le_bytes());
            }
            Value::String(s) => put_str(buf, k_id, s, interner),
            other => {
                put_var(buf, k | T_OTHER);
                let mut e = Enc::new();
                e.value(other);
                buf.extend_from_slice(&e.buf);
            }
        }
    }
}

fn put_str(buf: &mut Vec<u8>, key: u32, s: &str, interner: &mut Interner) {
    let k = u64::from(key) << 3;
    match interner.intern(key, s) {
        Some(i) => {
            put_var(buf, k | T_ISTR);
            put_var(buf, u64::from(i));
        }
        None => {
            put_var(buf, k | T_STR);
            put_var(buf, s.len() as u64);
            buf.extend_from_slice(s.as_bytes());
        }
    }
}

/// [`put_props`] of a property list in checkpoint encoding (the format of [`Dec::props`]:
/// a count, then ascending keys with non-null values), read from `d` without building values
/// for booleans, numbers and strings (a bulk import's records arrive encoded; decoding them
/// allocated every string once more). Returns the property count, or `None` for bytes that
/// are not such a list.
pub(super) fn put_encoded_props(
    buf: &mut Vec<u8>,
    d: &mut Dec<'_>,
    interner: &mut Interner,
) -> Option<u64> {
    let n = d.count(2).ok()?;
    let mut last: Option<u32> = None;
    for _ in 0..n {
        let key = d.var_u32().ok()?;
        if last.is_some_and(|l| l >= key) {
            return None;
        }
        last = Some(key);
        let k = u64::from(key) << 3;
        // The value tags of `Enc::value`: 1/2 booleans, 3 integer, 4 float, 5 string.
        match d.peek_u8()? {
            t @ (1 | 2) => {
                d.u8().ok()?;
                put_var(buf, k | if t == 2 { T_TRUE } else { T_FALSE });
            }
            3 => {
                d.u8().ok()?;
                let i = d.ivar().ok()?;
                put_var(buf, k | T_INT);
                put_var(buf, ((i << 1) ^ (i >> 63)) as u64);
            }
            4 => {
                d.u8().ok()?;
                let f = d.f64().ok()?;
                put_var(buf, k | T_FLOAT);
                buf.extend_from_slice(&f.to_le_bytes());
            }
            5 => {
                d.u8().ok()?;
                put_str(buf, key, d.str().ok()?, interner);
            }
            _ => {
                let v = d.value().ok()?;
                if v.is_null() {
                    return None;
                }
                put_props(buf, &[(key, v)], interner);
            }
        }
    }
    Some(n as u64)
}

/// Reads the next property header: `(key, tag)`.
pub(super) fn prop_header(d: &mut Dec<'_>) -> Option<(u32, u64)> {
    let h = d.var().ok()?;
    Some(((h >> 3) as u32, h & 7))
}

pub(super) fn prop_value(d: &mut Dec<'_>, tag: u64, strings: &[Arc<str>]) -> Option<Value> {
    Some(match tag {
        T_FALSE => Value::Bool(false),
        T_TRUE => Value::Bool(true),
        T_INT => Value::Int(d.ivar().ok()?),
        T_FLOAT => Value::Float(d.f64().ok()?),
        T_STR => Value::String(Arc::from(d.str().ok()?)),
        T_ISTR => Value::String(strings.get(d.var().ok()? as usize)?.clone()),
        T_OTHER => d.value().ok()?,
        _ => return None,
    })
}

pub(super) fn skip_value(d: &mut Dec<'_>, tag: u64) -> Option<()> {
    match tag {
        T_FALSE | T_TRUE => {}
        T_INT | T_ISTR => {
            d.var().ok()?;
        }
        T_FLOAT => {
            d.f64().ok()?;
        }
        T_STR => {
            d.bytes().ok()?;
        }
        T_OTHER => {
            d.value().ok()?;
        }
        _ => return None,
    }
    Some(())
}

/// Property blobs of one entity kind: `arena[off[i]..off[i + 1]]` for entity `i`.
#[derive(Default)]
pub(super) struct PropCol {
    pub(super) off: Packed,
    pub(super) arena: Box<[u8]>,
}

impl PropCol {
    #[inline]
    pub(super) fn blob(&self, i: u64) -> &[u8] {
        if self.arena.is_empty() {
            return &[];
        }
        // One representation match for both offsets.
        let off = self.off.view();
        let (a, b) = (off.get(i as usize) as usize, off.get(i as usize + 1) as usize);
        self.arena.get(a..b).unwrap_or(&[])
    }
    pub(super) fn bytes(&self) -> usize {
        self.off.bytes() + self.arena.len()
    }
}

pub(super) fn blob_get(blob: &[u8], key: u32, strings: &[Arc<str>]) -> Option<Value> {
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let (k, tag) = prop_header(&mut d)?;
        if k == key {
            // Booleans carry no payload: answered here, without the general decoder.
            return match tag {
                T_FALSE => Some(Value::Bool(false)),
                T_TRUE => Some(Value::Bool(true)),
                _ => prop_value(&mut d, tag, strings),
            };
        }
        if k > key {
            return None;
        }
        skip_value(&mut d, tag)?;
    }
    None
}

/// The integer value of `key` in a blob: `Some(None)` when the key is missing, `None` when it
/// holds another type (or the blob does not decode).
pub(super) fn blob_int(blob: &[u8], key: u32) -> Option<Option<i64>> {
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let (k, tag) = prop_header(&mut d)?;
        if k == key {
            return if tag == T_INT { Some(Some(d.ivar().ok()?)) } else { None };
        }
        if k > key {
            return Some(None);
        }
        skip_value(&mut d, tag)?;
    }
    Some(None)
}

/// One node property key's values over the base's node ids, for keys every base node holds
/// as an integer or not at all: per node `value - min + 1`, or 0 where the node lacks the key,
/// packed as narrow as the value range allows (one byte per node for ages).
pub(crate) struct IntColumn {
    pub(super) min: i64,
    pub(super) codes: Packed,
}

impl IntColumn {
    /// The value of base node `id` (`None`: it has no such property). Valid for clean base
    /// rows only; the caller checks that.
    #[inline]
    pub fn get(&self, id: u64) -> Option<i64> {
        match self.codes.get(id as usize) {
            0 => None,
            c => Some(self.min.wrapping_add((c - 1) as i64)),
        }
    }

    /// Appends the values of `ids` (all clean base rows) as `Value`s, `Null` where missing:
    /// one match on the packing per batch instead of one per node.
    pub fn extend_values(&self, ids: &[NodeId], out: &mut Vec<Value>) {
        let min = self.min;
        let conv = move |c: u64| match c {
            0 => Value::Null,
            c => Value::Int(min.wrapping_add((c - 1) as i64)),
        };
        let at = |i: NodeId| i.0 as usize;
        match &self.codes {
            Packed::U8(v) => {
                out.extend(ids.iter().map(|i| conv(v.get(at(*i)).map_or(0, |x| u64::from(*x)))))
            }
            Packed::U16(v) => {
                out.extend(ids.iter().map(|i| conv(v.get(at(*i)).map_or(0, |x| u64::from(*x)))))
            }
            Packed::U32(v) => {
                out.extend(ids.iter().map(|i| conv(v.get(at(*i)).map_or(0, |x| u64::from(*x)))))
            }
            codes => out.extend(ids.iter().map(|i| conv(codes.get(at(*i))))),
        }
    }
}

pub(super) fn blob_has(blob: &[u8], key: u32) -> bool {
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let Some((k, tag)) = prop_header(&mut d) else { return false };
        if k >= key {
            return k == key;
        }
        if skip_value(&mut d, tag).is_none() {
            return false;
        }
    }
    false
}

pub(super) fn blob_all(blob: &[u8], strings: &[Arc<str>]) -> Vec<(u32, Value)> {
    let mut out = Vec::new();
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let Some((k, tag)) = prop_header(&mut d) else { break };
        let Some(v) = prop_value(&mut d, tag, strings) else { break };
        out.push((k, v));
    }
    out
}

/// How many properties a blob holds.
pub(super) fn blob_entries(blob: &[u8]) -> u64 {
    let mut d = Dec::new(blob);
    let mut n = 0;
    while !d.is_empty() {
        let Some((_, tag)) = prop_header(&mut d) else { break };
        if skip_value(&mut d, tag).is_none() {
            break;
        }
        n += 1;
    }
    n
}

/// Re-encodes a blob with a new string table: kept strings get their new index, dropped ones
/// are written inline.
pub(super) fn rewrite_blob(
    out: &mut Vec<u8>,
    blob: &[u8],
    remap: &[Option<u32>],
    old: &[(Arc<str>, u64)],
) {
    let mut d = Dec::new(blob);
    while !d.is_empty() {
        let start = d.pos();
        let Some((k, tag)) = prop_header(&mut d) else { break };
        if tag == T_ISTR {
            let Ok(i) = d.var() else { break };
            let i = i as usize;
            let k = u64::from(k) << 3;
            match (remap.get(i).copied().flatten(), old.get(i)) {
                (Some(n), _) => {
                    put_var(out, k | T_ISTR);
                    put_var(out, u64::from(n));
                }
                (None, Some((s, _))) => {
                    put_var(out, k | T_STR);
                    put_var(out, s.len() as u64);
                    out.extend_from_slice(s.as_bytes());
                }
                (None, None) => {}
            }
        } else {
            if skip_value(&mut d, tag).is_none() {
                break;
            }
            out.extend_from_slice(&blob[start..d.pos()]);
        }
    }
}
