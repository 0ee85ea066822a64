//! Binary encoding shared by the WAL and checkpoints: varints, strings, property values and the
//! redo operations. Decoding treats its input as untrusted: every length is bounds-checked, every
//! allocation is capped by the bytes actually present, and malformed input is a `Corruption`
//! error, never a panic.

use std::sync::Arc;

use arbor_model::{
    Date, DateTime, Duration, Error, LocalDateTime, LocalTime, Point, Result, Status, Time, Value,
};
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use crate::schema::IndexKind;
use crate::types::TokenKind;

/// Ids decoded from disk above this bound are rejected (they would make tables allocate absurd
/// amounts of memory).
pub(crate) const MAX_ID: u64 = 1 << 40;
/// Nesting of lists is at most one level for storable values; this caps recursion anyway.
const MAX_DEPTH: u32 = 4;

pub(crate) fn corrupt(msg: impl Into<String>) -> Error {
    Error::new(Status::Corruption, msg)
}

/// An append-only byte buffer with little-endian primitives.
#[derive(Default)]
pub(crate) struct Enc {
    pub buf: Vec<u8>,
}

impl Enc {
    pub fn new() -> Enc {
        Enc { buf: Vec::new() }
    }
    pub fn with_capacity(bytes: usize) -> Enc {
        Enc { buf: Vec::with_capacity(bytes) }
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// LEB128 unsigned varint.
    pub fn var(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
    /// Zig-zag signed varint.
    pub fn ivar(&mut self, v: i64) {
        self.var(((v << 1) ^ (v >> 63)) as u64);
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.var(b.len() as u64);
        self.buf.extend_from_slice(b);
    }
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    pub fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.u8(0),
            Value::Bool(false) => self.u8(1),
            Value::Bool(true) => self.u8(2),
            Value::Int(i) => {
                self.u8(3);
                self.ivar(*i);
            }
            Value::Float(f) => {
                self.u8(4);
                self.f64(*f);
            }
            Value::String(s) => {
                self.u8(5);
                self.str(s);
            }
            Value::Bytes(b) => {
                self.u8(6);
                self.bytes(b);
            }
            Value::List(items) => {
                self.u8(7);
                self.var(items.len() as u64);
                for i in items {
                    self.value(i);
                }
            }
            // Dates chrono holds keep their original encoding (days from CE as an i32); the far
            // years of Java's range have their own tag (days since the epoch).
            Value::Date(d) => match d.naive() {
                Some(n) => {
                    self.u8(8);
                    self.i32(n.num_days_from_ce());
                }
                None => {
                    self.u8(15);
                    self.ivar(d.epoch_day());
                }
            },
            Value::LocalTime(t) => {
                self.u8(9);
                self.time(&t.0);
            }
            Value::Time(t) => {
                self.u8(10);
                self.time(&t.time);
                self.i32(t.offset_seconds);
            }
            Value::LocalDateTime(t) => {
                self.u8(11);
                self.datetime(&t.0);
            }
            Value::DateTime(t) => {
                self.u8(12);
                self.datetime(&t.local);
                self.i32(t.offset_seconds);
                match &t.zone {
                    None => self.u8(0),
                    Some(z) => {
                        self.u8(1);
                        self.str(z);
                    }
                }
            }
            Value::Duration(d) => {
                self.u8(13);
                self.ivar(d.months);
                self.ivar(d.days);
                self.ivar(d.seconds);
                self.i32(d.nanos);
            }
            Value::Point(p) => {
                self.u8(14);
                self.u32(p.srid);
                self.f64(p.x);
                self.f64(p.y);
                match p.z {
                    None => self.u8(0),
                    Some(z) => {
                        self.u8(1);
                        self.f64(z);
                    }
                }
            }
            // Not storable; `check_storable` keeps these out. Encode as null defensively.
            _ => self.u8(0),
        }
    }

    fn time(&mut self, t: &NaiveTime) {
        self.u32(t.num_seconds_from_midnight());
        self.u32(t.nanosecond());
    }

    fn datetime(&mut self, t: &NaiveDateTime) {
        self.i32(t.date().num_days_from_ce());
        self.time(&t.time());
    }

    pub fn props(&mut self, props: &[(u32, Value)]) {
        self.var(props.len() as u64);
        for (k, v) in props {
            self.var(u64::from(*k));
            self.value(v);
        }
    }

    pub fn labels(&mut self, labels: &[u32]) {
        self.var(labels.len() as u64);
        for l in labels {
            self.var(u64::from(*l));
        }
    }
}

/// An estimate of the bytes [`Enc::op_put_node`] / [`Enc::op_put_rel`] write for an entity
/// with these labels and properties: an upper bound when the values are scalars, strings or
/// bytes (lists and temporal values are estimated; the buffer still grows if they need more).
/// Used to size a redo body up front: a 10,000-node batch is about half a megabyte, and
/// growing the buffer by doubling copied it again and again (reallocations of large blocks
/// were a fifth of a batch write's CPU).
pub(crate) fn entity_size_hint(labels: usize, props: &[(u32, Value)]) -> usize {
    // Op byte, id, start, end, type (relationship) and the two counts: at most 4 * 10 + 3.
    let mut n = 43 + labels * 5;
    for (_, v) in props {
        n += 5 + match v {
            Value::String(s) => 11 + s.len(),
            Value::Bytes(b) => 11 + b.len(),
            Value::List(items) => 11 + items.len() * 16,
            _ => 32,
        };
    }
    n
}

/// A bounds-checked reader over untrusted bytes.
pub(crate) struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    pub fn new(buf: &'a [u8]) -> Dec<'a> {
        Dec { buf, pos: 0 }
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    /// The next byte, not consumed.
    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(corrupt(format!("truncated data at byte {}", self.pos)));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    pub fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.arr()?))
    }
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.arr()?))
    }
    /// An unsigned varint. The one-byte case (small ints, property headers, interned string
    /// ids) is inlined: property reads decode several per value.
    #[inline]
    pub fn var(&mut self) -> Result<u64> {
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(u64::from(b));
            }
        }
        self.var_long()
    }
    fn var_long(&mut self) -> Result<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt(format!("overlong varint at byte {}", self.pos)))
    }
    pub fn ivar(&mut self) -> Result<i64> {
        let u = self.var()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }
    pub fn var_u32(&mut self) -> Result<u32> {
        u32::try_from(self.var()?)
            .map_err(|_| corrupt(format!("token out of range at {}", self.pos)))
    }
    pub fn id(&mut self) -> Result<u64> {
        let v = self.var()?;
        if v >= MAX_ID {
            return Err(corrupt(format!("entity id {v} out of range at byte {}", self.pos)));
        }
        Ok(v)
    }
    /// A count of items each taking at least `min_size` bytes, checked against what remains.
    pub fn count(&mut self, min_size: usize) -> Result<usize> {
        let n = self.var()?;
        if n > (self.remaining() / min_size.max(1)) as u64 {
            return Err(corrupt(format!("implausible count {n} at byte {}", self.pos)));
        }
        Ok(n as usize)
    }
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.var()?;
        if n > self.remaining() as u64 {
            return Err(corrupt(format!("truncated data at byte {}", self.pos)));
        }
        self.take(n as usize)
    }
    pub fn str(&mut self) -> Result<&'a str> {
        let at = self.pos;
        std::str::from_utf8(self.bytes()?)
            .map_err(|_| corrupt(format!("invalid UTF-8 at byte {at}")))
    }

    pub fn value(&mut self) -> Result<Value> {
        self.value_at(0)
    }

    fn value_at(&mut self, depth: u32) -> Result<Value> {
        let at = self.pos;
        let bad = |what: &str| corrupt(format!("invalid {what} at byte {at}"));
        Ok(match self.u8()? {
            0 => Value::Null,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => Value::Int(self.ivar()?),
            4 => Value::Float(self.f64()?),
            5 => Value::String(Arc::from(self.str()?)),
            6 => Value::Bytes(Arc::from(self.bytes()?)),
            7 => {
                if depth >= MAX_DEPTH {
                    return Err(bad("nesting"));
                }
                let n = self.count(1)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value_at(depth + 1)?);
                }
                Value::List(items)
            }
            8 => Value::Date(Date::from_naive(
                NaiveDate::from_num_days_from_ce_opt(self.i32()?).ok_or_else(|| bad("date"))?,
            )),
            15 => Value::Date(Date::from_epoch_day(self.ivar()?).ok_or_else(|| bad("date"))?),
            9 => Value::LocalTime(LocalTime(self.time()?)),
            10 => {
                let time = self.time()?;
                Value::Time(Time { time, offset_seconds: self.i32()? })
            }
            11 => Value::LocalDateTime(LocalDateTime(self.datetime()?)),
            12 => {
                let local = self.datetime()?;
                let offset_seconds = self.i32()?;
                let zone = match self.u8()? {
                    0 => None,
                    1 => Some(Arc::from(self.str()?)),
                    _ => return Err(bad("zone flag")),
                };
                Value::DateTime(DateTime { local, offset_seconds, zone })
            }
            13 => Value::Duration(Duration {
                months: self.ivar()?,
                days: self.ivar()?,
                seconds: self.ivar()?,
                nanos: self.i32()?,
            }),
            14 => {
                let srid = self.u32()?;
                let x = self.f64()?;
                let y = self.f64()?;
                let z = match self.u8()? {
                    0 => None,
                    1 => Some(self.f64()?),
                    _ => return Err(bad("point flag")),
                };
                Value::Point(Point { srid, x, y, z })
            }
            _ => return Err(bad("value tag")),
        })
    }

    fn time(&mut self) -> Result<NaiveTime> {
        let at = self.pos;
        let secs = self.u32()?;
        let nanos = self.u32()?;
        NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos)
            .ok_or_else(|| corrupt(format!("invalid time at byte {at}")))
    }

    fn datetime(&mut self) -> Result<NaiveDateTime> {
        let at = self.pos;
        let d = NaiveDate::from_num_days_from_ce_opt(self.i32()?)
            .ok_or_else(|| corrupt(format!("invalid date at byte {at}")))?;
        Ok(d.and_time(self.time()?))
    }

    /// Properties, validated to be sorted by key without duplicates and without nulls.
    pub fn props(&mut self) -> Result<Vec<(u32, Value)>> {
        let n = self.count(2)?;
        let mut out: Vec<(u32, Value)> = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.pos;
            let k = self.var_u32()?;
            let v = self.value()?;
            if v.is_null() || out.last().is_some_and(|(p, _)| *p >= k) {
                return Err(corrupt(format!("malformed property list at byte {at}")));
            }
            out.push((k, v));
        }
        Ok(out)
    }

    pub fn labels(&mut self) -> Result<Vec<u32>> {
        let n = self.count(1)?;
        let mut out: Vec<u32> = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.pos;
            let l = self.var_u32()?;
            if out.last().is_some_and(|p| *p >= l) {
                return Err(corrupt(format!("malformed label list at byte {at}")));
            }
            out.push(l);
        }
        Ok(out)
    }
}

/// A logical redo operation, as the WAL stores it and recovery replays it.
#[derive(Debug)]
pub(crate) enum Op {
    Token {
        kind: TokenKind,
        id: u32,
        name: String,
    },
    PutNode {
        id: u64,
        labels: Vec<u32>,
        props: Vec<(u32, Value)>,
    },
    DelNode {
        id: u64,
    },
    PutRel {
        id: u64,
        start: u64,
        end: u64,
        ty: u32,
        props: Vec<(u32, Value)>,
    },
    DelRel {
        id: u64,
    },
    CreateIndex {
        name: String,
        label: u32,
        keys: Vec<u32>,
        kind: IndexKind,
        rel: bool,
    },
    DropIndex {
        name: String,
    },
    /// An index part file written and fsynced for a rule (`base/part_file.rs`).
    AttachPart(crate::base::PartRef),
}

pub(crate) const OP_TOKEN: u8 = 1;
pub(crate) const OP_PUT_NODE: u8 = 2;
pub(crate) const OP_DEL_NODE: u8 = 3;
pub(crate) const OP_PUT_REL: u8 = 4;
pub(crate) const OP_DEL_REL: u8 = 5;
pub(crate) const OP_CREATE_INDEX: u8 = 6;
pub(crate) const OP_DROP_INDEX: u8 = 7;
/// A schema rule of any kind with one or more keys (name, kind code with bit 6 set for a
/// relationship index, label or type, key count, keys).
pub(crate) const OP_CREATE_RULE: u8 = 8;
/// An index part file of a rule: rule name, file name, entries, wide flag (u8), the ts of the
/// base whose rows it indexes, and the CRC32C of the file's header.
pub(crate) const OP_ATTACH_PART: u8 = 9;

impl Enc {
    pub fn op_token(&mut self, kind: TokenKind, id: u32, name: &str) {
        self.u8(OP_TOKEN);
        self.u8(kind.index() as u8);
        self.var(u64::from(id));
        self.str(name);
    }
    pub fn op_put_node(&mut self, id: u64, labels: &[u32], props: &[(u32, Value)]) {
        self.u8(OP_PUT_NODE);
        self.var(id);
        self.labels(labels);
        self.props(props);
    }
    pub fn op_del_node(&mut self, id: u64) {
        self.u8(OP_DEL_NODE);
        self.var(id);
    }
    pub fn op_put_rel(&mut self, id: u64, start: u64, end: u64, ty: u32, props: &[(u32, Value)]) {
        self.u8(OP_PUT_REL);
        self.var(id);
        self.var(start);
        self.var(end);
        self.var(u64::from(ty));
        self.props(props);
    }
    pub fn op_del_rel(&mut self, id: u64) {
        self.u8(OP_DEL_REL);
        self.var(id);
    }
    pub fn op_create_rule(
        &mut self,
        name: &str,
        kind: IndexKind,
        rel: bool,
        label: u32,
        keys: &[u32],
    ) {
        self.u8(OP_CREATE_RULE);
        self.str(name);
        self.u8(kind.code() | if rel { 0x40 } else { 0 });
        self.var(u64::from(label));
        self.var(keys.len() as u64);
        for k in keys {
            self.var(u64::from(*k));
        }
    }
    pub fn op_drop_index(&mut self, name: &str) {
        self.u8(OP_DROP_INDEX);
        self.str(name);
    }
    pub fn op_attach_part(&mut self, r: &crate::base::PartRef) {
        self.u8(OP_ATTACH_PART);
        self.str(&r.rule);
        self.str(&r.file);
        self.var(r.entries);
        self.u8(u8::from(r.wide));
        self.var(r.base_ts);
        self.u32(r.crc);
    }
}

impl Dec<'_> {
    pub fn op(&mut self) -> Result<Op> {
        let at = self.pos;
        Ok(match self.u8()? {
            OP_TOKEN => {
                let kind = TokenKind::from_index(self.u8()?)
                    .ok_or_else(|| corrupt(format!("invalid token kind at byte {at}")))?;
                let id = self.var_u32()?;
                Op::Token { kind, id, name: self.str()?.to_string() }
            }
            OP_PUT_NODE => {
                Op::PutNode { id: self.id()?, labels: self.labels()?, props: self.props()? }
            }
            OP_DEL_NODE => Op::DelNode { id: self.id()? },
            OP_PUT_REL => Op::PutRel {
                id: self.id()?,
                start: self.id()?,
                end: self.id()?,
                ty: self.var_u32()?,
                props: self.props()?,
            },
            OP_DEL_REL => Op::DelRel { id: self.id()? },
            // The original single-key form (range or unique), still read from old logs.
            OP_CREATE_INDEX => {
                let name = self.str()?.to_string();
                let label = self.var_u32()?;
                let keys = vec![self.var_u32()?];
                let kind = if self.u8()? != 0 { IndexKind::Uniqueness } else { IndexKind::Range };
                Op::CreateIndex { name, label, keys, kind, rel: false }
            }
            OP_CREATE_RULE => {
                let name = self.str()?.to_string();
                let code = self.u8()?;
                let rel = code & 0x40 != 0;
                let kind = IndexKind::from_code(code & 0x3f).ok_or_else(|| {
                    corrupt(format!("unknown schema rule kind {code} at byte {at}"))
                })?;
                let label = self.var_u32()?;
                let n = self.count(1)?;
                let mut keys = Vec::with_capacity(n);
                for _ in 0..n {
                    keys.push(self.var_u32()?);
                }
                Op::CreateIndex { name, label, keys, kind, rel }
            }
            OP_DROP_INDEX => Op::DropIndex { name: self.str()?.to_string() },
            OP_ATTACH_PART => Op::AttachPart(crate::base::PartRef {
                rule: self.str()?.to_string(),
                file: self.str()?.to_string(),
                entries: self.var()?,
                wide: self.u8()? != 0,
                base_ts: self.var()?,
                crc: self.u32()?,
            }),
            t => return Err(corrupt(format!("unknown operation {t} at byte {at}"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(v: Value) -> Value {
        let mut e = Enc::new();
        e.value(&v);
        let mut d = Dec::new(&e.buf);
        let out = d.value().unwrap();
        assert!(d.is_empty());
        out
    }

    #[test]
    fn values_roundtrip() {
        let dt = NaiveDate::from_ymd_opt(2024, 2, 29)
            .unwrap()
            .and_hms_nano_opt(13, 14, 15, 123_456_789)
            .unwrap();
        let vals = vec![
            Value::Bool(true),
            Value::Int(-123_456_789_012),
            Value::Float(1.5),
            Value::str("héllo"),
            Value::Bytes(Arc::from(&[1u8, 2, 3][..])),
            Value::List(vec![Value::Int(1), Value::Int(i64::MIN)]),
            Value::Date(Date::from_naive(dt.date())),
            Value::Date(Date::from_epoch_day(365_241_780_471).unwrap()),
            Value::Date(Date::from_epoch_day(-365_243_219_162).unwrap()),
            Value::LocalTime(LocalTime(dt.time())),
            Value::Time(Time { time: dt.time(), offset_seconds: -3600 }),
            Value::LocalDateTime(LocalDateTime(dt)),
            Value::DateTime(DateTime {
                local: dt,
                offset_seconds: 3600,
                zone: Some(Arc::from("Europe/Stockholm")),
            }),
            Value::Duration(Duration { months: 1, days: -2, seconds: 3, nanos: 4 }),
            Value::Point(Point { srid: 9157, x: 1.0, y: 2.0, z: Some(3.0) }),
        ];
        for v in vals {
            let back = roundtrip(v.clone());
            assert_eq!(format!("{v:?}"), format!("{back:?}"));
        }
    }

    #[test]
    fn size_hint_bounds_scalar_entities() {
        let props = vec![
            (1, Value::Int(i64::MIN)),
            (200, Value::Float(0.5)),
            (70_000, Value::str("item-00000001")),
            (u32::MAX, Value::Bool(true)),
            (5, Value::Bytes(vec![0u8; 300].into())),
        ];
        let labels = [1, 300, u32::MAX];
        let mut e = Enc::new();
        e.op_put_node(MAX_ID - 1, &labels, &props);
        assert!(e.buf.len() <= entity_size_hint(labels.len(), &props));
        let mut e = Enc::new();
        e.op_put_rel(MAX_ID - 1, MAX_ID - 2, MAX_ID - 3, u32::MAX, &props);
        assert!(e.buf.len() <= entity_size_hint(0, &props));
        // Not wildly above either (it sizes megabyte buffers).
        assert!(entity_size_hint(labels.len(), &props) < 4 * e.buf.len());
    }

    #[test]
    fn garbage_never_panics() {
        // Every prefix and some bit flips of a valid encoding decode to Ok or Err, never panic.
        let mut e = Enc::new();
        e.op_put_node(7, &[1, 2], &[(1, Value::str("x")), (3, Value::List(vec![Value::Int(1)]))]);
        let buf = e.buf;
        for n in 0..buf.len() {
            let _ = Dec::new(&buf[..n]).op();
            for bit in 0..8 {
                let mut b = buf.clone();
                b[n] ^= 1 << bit;
                let _ = Dec::new(&b).op();
            }
        }
        let huge = [0xffu8; 16];
        assert!(Dec::new(&huge).count(1).is_err());
    }
}
