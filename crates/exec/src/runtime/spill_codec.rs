//! The byte form of values an operator writes to a scratch file when its state would pass the
//! query memory (see `agg_spill`): one tag byte per value, then its fields little-endian,
//! lengths as `u32`. Only the operator that wrote a file reads it, within the same statement,
//! so the form is private and unversioned. Node and relationship references are their ids
//! (valid for the statement that wrote them). Materialised entities (`NodeData`, `RelData`,
//! `PathData`) have no byte form here: [`encode`] says so and the operator keeps its state
//! in memory.

use std::sync::Arc;

use chrono::{NaiveDateTime, NaiveTime, Timelike};

use arbor_model::{
    Date, DateTime, Duration, Error, LocalDateTime, LocalTime, NodeId, PathRef, Point, PropertyMap,
    RelId, Result, Time, Value,
};

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT: u8 = 3;
const FLOAT: u8 = 4;
const STRING: u8 = 5;
const BYTES: u8 = 6;
const LIST: u8 = 7;
const MAP: u8 = 8;
const NODE: u8 = 9;
const REL: u8 = 10;
const PATH: u8 = 11;
const DATE: u8 = 12;
const LOCAL_TIME: u8 = 13;
const TIME: u8 = 14;
const LOCAL_DATETIME: u8 = 15;
const DATETIME: u8 = 16;
const DURATION: u8 = 17;
const POINT: u8 = 18;

/// Appends `v`'s byte form to `out`; `false` (and `out` as it was) for a value without one.
pub(super) fn encode(v: &Value, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let ok = put(v, out);
    if !ok {
        out.truncate(start);
    }
    ok
}

fn put_len(n: usize, out: &mut Vec<u8>) -> bool {
    match u32::try_from(n) {
        Ok(n) => {
            out.extend_from_slice(&n.to_le_bytes());
            true
        }
        Err(_) => false,
    }
}

fn put_bytes(b: &[u8], out: &mut Vec<u8>) -> bool {
    put_len(b.len(), out) && {
        out.extend_from_slice(b);
        true
    }
}

fn put_time(t: NaiveTime, out: &mut Vec<u8>) {
    out.extend_from_slice(&t.num_seconds_from_midnight().to_le_bytes());
    out.extend_from_slice(&t.nanosecond().to_le_bytes());
}

fn put_datetime(t: NaiveDateTime, out: &mut Vec<u8>) {
    let utc = t.and_utc();
    out.extend_from_slice(&utc.timestamp().to_le_bytes());
    out.extend_from_slice(&utc.timestamp_subsec_nanos().to_le_bytes());
}

fn put(v: &Value, out: &mut Vec<u8>) -> bool {
    match v {
        Value::Null => out.push(NULL),
        Value::Bool(b) => out.push(if *b { TRUE } else { FALSE }),
        Value::Int(i) => {
            out.push(INT);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Value::Float(f) => {
            out.push(FLOAT);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::String(s) => {
            out.push(STRING);
            return put_bytes(s.as_bytes(), out);
        }
        Value::Bytes(b) => {
            out.push(BYTES);
            return put_bytes(b, out);
        }
        Value::List(items) => {
            out.push(LIST);
            return put_len(items.len(), out) && items.iter().all(|x| put(x, out));
        }
        Value::Map(m) => {
            out.push(MAP);
            return put_len(m.len(), out)
                && m.iter().all(|(k, x)| put_bytes(k.as_bytes(), out) && put(x, out));
        }
        Value::Node(id) => {
            out.push(NODE);
            out.extend_from_slice(&id.0.to_le_bytes());
        }
        Value::Relationship(id) => {
            out.push(REL);
            out.extend_from_slice(&id.0.to_le_bytes());
        }
        Value::Path(p) => {
            out.push(PATH);
            if !put_len(p.nodes.len(), out) || !put_len(p.rels.len(), out) {
                return false;
            }
            for n in &p.nodes {
                out.extend_from_slice(&n.0.to_le_bytes());
            }
            for r in &p.rels {
                out.extend_from_slice(&r.0.to_le_bytes());
            }
        }
        Value::Date(d) => {
            out.push(DATE);
            out.extend_from_slice(&d.epoch_day().to_le_bytes());
        }
        Value::LocalTime(t) => {
            out.push(LOCAL_TIME);
            put_time(t.0, out);
        }
        Value::Time(t) => {
            out.push(TIME);
            put_time(t.time, out);
            out.extend_from_slice(&t.offset_seconds.to_le_bytes());
        }
        Value::LocalDateTime(t) => {
            out.push(LOCAL_DATETIME);
            put_datetime(t.0, out);
        }
        Value::DateTime(t) => {
            out.push(DATETIME);
            put_datetime(t.local, out);
            out.extend_from_slice(&t.offset_seconds.to_le_bytes());
            match &t.zone {
                Some(z) => {
                    out.push(1);
                    return put_bytes(z.as_bytes(), out);
                }
                None => out.push(0),
            }
        }
        Value::Duration(d) => {
            out.push(DURATION);
            out.extend_from_slice(&d.months.to_le_bytes());
            out.extend_from_slice(&d.days.to_le_bytes());
            out.extend_from_slice(&d.seconds.to_le_bytes());
            out.extend_from_slice(&d.nanos.to_le_bytes());
        }
        Value::Point(p) => {
            out.push(POINT);
            out.extend_from_slice(&p.srid.to_le_bytes());
            out.extend_from_slice(&p.x.to_bits().to_le_bytes());
            out.extend_from_slice(&p.y.to_bits().to_le_bytes());
            match p.z {
                Some(z) => {
                    out.push(1);
                    out.extend_from_slice(&z.to_bits().to_le_bytes());
                }
                None => out.push(0),
            }
        }
        Value::NodeData(_) | Value::RelData(_) | Value::PathData(_) => return false,
    }
    true
}

/// Reads values back from a byte form made by [`encode`].
pub(super) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn corrupt() -> Error {
    Error::internal("a spilled value could not be read back (scratch file damaged)")
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    #[cfg(test)]
    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len()).ok_or_else(corrupt)?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        self.take(N)?.try_into().map_err(|_| corrupt())
    }

    /// The next byte.
    pub(super) fn byte(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn len(&mut self) -> Result<usize> {
        usize::try_from(self.u32()?).map_err(|_| corrupt())
    }
    fn str(&mut self) -> Result<&'a str> {
        let n = self.len()?;
        std::str::from_utf8(self.take(n)?).map_err(|_| corrupt())
    }
    fn time(&mut self) -> Result<NaiveTime> {
        let (secs, nanos) = (self.u32()?, self.u32()?);
        NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos).ok_or_else(corrupt)
    }
    fn datetime(&mut self) -> Result<NaiveDateTime> {
        let (secs, nanos) = (self.i64()?, self.u32()?);
        chrono::DateTime::from_timestamp(secs, nanos).map(|t| t.naive_utc()).ok_or_else(corrupt)
    }

    /// The next value.
    pub(super) fn value(&mut self) -> Result<Value> {
        Ok(match self.byte()? {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            INT => Value::Int(self.i64()?),
            FLOAT => Value::Float(self.f64()?),
            STRING => Value::String(Arc::from(self.str()?)),
            BYTES => {
                let n = self.len()?;
                Value::Bytes(Arc::from(self.take(n)?))
            }
            LIST => {
                let n = self.len()?;
                let mut items = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    items.push(self.value()?);
                }
                Value::List(items)
            }
            MAP => {
                let n = self.len()?;
                let mut m = PropertyMap::new();
                for _ in 0..n {
                    let k = self.str()?.into();
                    m.insert(k, self.value()?);
                }
                Value::Map(m)
            }
            NODE => Value::Node(NodeId(self.u64()?)),
            REL => Value::Relationship(RelId(self.u64()?)),
            PATH => {
                let (nn, nr) = (self.len()?, self.len()?);
                let mut nodes = Vec::with_capacity(nn.min(1 << 16));
                for _ in 0..nn {
                    nodes.push(NodeId(self.u64()?));
                }
                let mut rels = Vec::with_capacity(nr.min(1 << 16));
                for _ in 0..nr {
                    rels.push(RelId(self.u64()?));
                }
                Value::Path(Arc::new(PathRef { nodes, rels }))
            }
            DATE => Value::Date(Date::from_epoch_day(self.i64()?).ok_or_else(corrupt)?),
            LOCAL_TIME => Value::LocalTime(LocalTime(self.time()?)),
            TIME => {
                let time = self.time()?;
                Value::Time(Time { time, offset_seconds: self.i32()? })
            }
            LOCAL_DATETIME => Value::LocalDateTime(LocalDateTime(self.datetime()?)),
            DATETIME => {
                let local = self.datetime()?;
                let offset_seconds = self.i32()?;
                let zone = match self.byte()? {
                    0 => None,
                    _ => Some(Arc::from(self.str()?)),
                };
                Value::DateTime(DateTime { local, offset_seconds, zone })
            }
            DURATION => Value::Duration(Duration {
                months: self.i64()?,
                days: self.i64()?,
                seconds: self.i64()?,
                nanos: self.i32()?,
            }),
            POINT => {
                let srid = self.u32()?;
                let (x, y) = (self.f64()?, self.f64()?);
                let z = match self.byte()? {
                    0 => None,
                    _ => Some(self.f64()?),
                };
                Value::Point(Point { srid, x, y, z })
            }
            _ => return Err(corrupt()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_with_a_byte_form_reads_back_equal() {
        let t = NaiveTime::from_hms_nano_opt(13, 14, 15, 123_456_789).expect("time");
        let dt = chrono::DateTime::from_timestamp(1_700_000_000, 42).expect("ts").naive_utc();
        let mut m = PropertyMap::new();
        m.insert("k".into(), Value::List(vec![Value::Int(1), Value::Null]));
        m.insert("é".into(), Value::str("ü"));
        let values = vec![
            Value::Null,
            Value::Bool(true),
            Value::Bool(false),
            Value::Int(i64::MIN),
            Value::Float(-0.5),
            Value::Float(f64::NAN),
            Value::str(""),
            Value::str("Zürich"),
            Value::Bytes(Arc::from(&[0u8, 255][..])),
            Value::List(vec![Value::List(vec![]), Value::Int(3)]),
            Value::Map(m),
            Value::Node(NodeId(7)),
            Value::Relationship(RelId(u64::MAX)),
            Value::Path(Arc::new(PathRef {
                nodes: vec![NodeId(1), NodeId(2)],
                rels: vec![RelId(9)],
            })),
            Value::Date(Date::from_epoch_day(-4000).expect("date")),
            Value::LocalTime(LocalTime(t)),
            Value::Time(Time { time: t, offset_seconds: -3600 }),
            Value::LocalDateTime(LocalDateTime(dt)),
            Value::DateTime(DateTime { local: dt, offset_seconds: 3600, zone: None }),
            Value::DateTime(DateTime {
                local: dt,
                offset_seconds: 3600,
                zone: Some(Arc::from("Europe/Stockholm")),
            }),
            Value::Duration(Duration { months: -1, days: 2, seconds: 3, nanos: 4 }),
            Value::Point(Point { srid: 4326, x: 1.5, y: -2.0, z: None }),
            Value::Point(Point { srid: 9157, x: 1.0, y: 2.0, z: Some(3.0) }),
        ];
        let mut buf = Vec::new();
        for v in &values {
            assert!(encode(v, &mut buf), "{v:?} has a byte form");
        }
        let mut r = Reader::new(&buf);
        for v in &values {
            let back = r.value().expect("reads back");
            // NaN is not equal to itself: compare its bits.
            match (v, &back) {
                (Value::Float(a), Value::Float(b)) => assert_eq!(a.to_bits(), b.to_bits()),
                _ => assert_eq!(format!("{back:?}"), format!("{v:?}")),
            }
        }
        assert!(r.at_end());
        // A cut-off or damaged form is an error, never a panic.
        for cut in 0..buf.len() {
            let mut r = Reader::new(&buf[..cut]);
            while !r.at_end() {
                if r.value().is_err() {
                    break;
                }
            }
        }
        let mut r = Reader::new(&[250u8]);
        assert!(r.value().is_err());
    }
}
