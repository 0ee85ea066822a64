//! Bolt request messages (parsed from one reassembled message) and response messages (written
//! into the output buffer).
//!
//! A request is a PackStream structure whose tag is the message type. Shape errors (wrong field
//! count or type, unknown tag, trailing bytes) are [`DecodeErrorKind::Malformed`]: the peer is not
//! speaking Bolt as we understand it and the connection is closed after a FAILURE.

use arbor_model::{PropertyMap, Value};

use crate::packstream::{self as ps, DecodeError, Decoder, Header, TooLarge};
use crate::values::{decode_map, decode_value, encode_map, Dialect, EncodeError, PackWriter};

pub mod tag {
    pub const HELLO: u8 = 0x01;
    pub const GOODBYE: u8 = 0x02;
    pub const RESET: u8 = 0x0F;
    pub const RUN: u8 = 0x10;
    pub const BEGIN: u8 = 0x11;
    pub const COMMIT: u8 = 0x12;
    pub const ROLLBACK: u8 = 0x13;
    pub const DISCARD: u8 = 0x2F;
    pub const PULL: u8 = 0x3F;
    pub const TELEMETRY: u8 = 0x54;
    pub const ROUTE: u8 = 0x66;
    pub const LOGON: u8 = 0x6A;
    pub const LOGOFF: u8 = 0x6B;

    pub const SUCCESS: u8 = 0x70;
    pub const RECORD: u8 = 0x71;
    pub const IGNORED: u8 = 0x7E;
    pub const FAILURE: u8 = 0x7F;
}

/// The message tag of a raw request, if it looks like a structure at all. The reader thread
/// uses this to spot `RESET` and `GOODBYE` without decoding anything else.
pub fn peek_tag(msg: &[u8]) -> Option<u8> {
    match msg {
        [m, t, ..] if m & 0xF0 == 0xB0 => Some(*t),
        _ => None,
    }
}

#[derive(Debug)]
pub enum Request {
    Hello { extra: PropertyMap },
    Logon { auth: PropertyMap },
    Logoff,
    Goodbye,
    Reset,
    Run { query: String, params: PropertyMap, extra: PropertyMap },
    Begin { extra: PropertyMap },
    Commit,
    Rollback,
    Pull { n: i64, qid: i64 },
    Discard { n: i64, qid: i64 },
    Route { routing: PropertyMap, bookmarks: Vec<String>, db: Option<String> },
    Telemetry { api: i64 },
}

impl Request {
    pub fn name(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "HELLO",
            Request::Logon { .. } => "LOGON",
            Request::Logoff => "LOGOFF",
            Request::Goodbye => "GOODBYE",
            Request::Reset => "RESET",
            Request::Run { .. } => "RUN",
            Request::Begin { .. } => "BEGIN",
            Request::Commit => "COMMIT",
            Request::Rollback => "ROLLBACK",
            Request::Pull { .. } => "PULL",
            Request::Discard { .. } => "DISCARD",
            Request::Route { .. } => "ROUTE",
            Request::Telemetry { .. } => "TELEMETRY",
        }
    }
}

fn field_count(name: &str, got: usize, allowed: &[usize]) -> Result<(), DecodeError> {
    if !allowed.contains(&got) {
        return Err(DecodeError::malformed(format!(
            "{name} message must have {} fields, got {got}",
            allowed.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" or ")
        )));
    }
    Ok(())
}

/// A map field that may also be sent as null (treated as empty).
fn optional_map(dec: &mut Decoder<'_>) -> Result<PropertyMap, DecodeError> {
    match decode_value(dec)? {
        Value::Map(m) => Ok(m),
        Value::Null => Ok(PropertyMap::new()),
        other => {
            Err(DecodeError::malformed(format!("expected a Map but got {}", other.type_name())))
        }
    }
}

/// Reads `n` and `qid` out of a PULL/DISCARD extra map. `n` is mandatory.
fn n_and_qid(name: &str, extra: &PropertyMap) -> Result<(i64, i64), DecodeError> {
    let n = match extra.get("n") {
        Some(Value::Int(n)) => *n,
        Some(other) => {
            return Err(DecodeError::malformed(format!(
                "{name} field n must be an Integer, got {}",
                other.type_name()
            )))
        }
        None => return Err(DecodeError::malformed(format!("{name} is missing the field n"))),
    };
    let qid = match extra.get("qid") {
        Some(Value::Int(q)) => *q,
        None | Some(Value::Null) => -1,
        Some(other) => {
            return Err(DecodeError::malformed(format!(
                "{name} field qid must be an Integer, got {}",
                other.type_name()
            )))
        }
    };
    Ok((n, qid))
}

/// Parses one complete request message.
pub fn parse_request(msg: &[u8]) -> Result<Request, DecodeError> {
    let mut dec = Decoder::new(msg);
    let (fields, t) = match dec.header()? {
        Header::Struct { fields, tag } => (fields, tag),
        other => {
            return Err(DecodeError::malformed(format!(
                "a Bolt message must be a structure, got {}",
                other.type_name()
            )))
        }
    };
    dec.enter()?;
    let req = match t {
        tag::HELLO => {
            field_count("HELLO", fields, &[1])?;
            Request::Hello { extra: decode_map(&mut dec)? }
        }
        tag::LOGON => {
            field_count("LOGON", fields, &[1])?;
            Request::Logon { auth: decode_map(&mut dec)? }
        }
        tag::LOGOFF => {
            field_count("LOGOFF", fields, &[0])?;
            Request::Logoff
        }
        tag::GOODBYE => {
            field_count("GOODBYE", fields, &[0])?;
            Request::Goodbye
        }
        tag::RESET => {
            field_count("RESET", fields, &[0])?;
            Request::Reset
        }
        tag::RUN => {
            field_count("RUN", fields, &[2, 3])?;
            let query = dec.string()?.to_owned();
            let params = optional_map(&mut dec)?;
            let extra = if fields == 3 { optional_map(&mut dec)? } else { PropertyMap::new() };
            Request::Run { query, params, extra }
        }
        tag::BEGIN => {
            field_count("BEGIN", fields, &[0, 1])?;
            let extra = if fields == 1 { optional_map(&mut dec)? } else { PropertyMap::new() };
            Request::Begin { extra }
        }
        tag::COMMIT => {
            field_count("COMMIT", fields, &[0])?;
            Request::Commit
        }
        tag::ROLLBACK => {
            field_count("ROLLBACK", fields, &[0])?;
            Request::Rollback
        }
        tag::PULL | tag::DISCARD => {
            let name = if t == tag::PULL { "PULL" } else { "DISCARD" };
            field_count(name, fields, &[1])?;
            let extra = decode_map(&mut dec)?;
            let (n, qid) = n_and_qid(name, &extra)?;
            if t == tag::PULL {
                Request::Pull { n, qid }
            } else {
                Request::Discard { n, qid }
            }
        }
        tag::TELEMETRY => {
            field_count("TELEMETRY", fields, &[1])?;
            Request::Telemetry { api: dec.int()? }
        }
        tag::ROUTE => {
            field_count("ROUTE", fields, &[3])?;
            let routing = optional_map(&mut dec)?;
            let bookmarks = match decode_value(&mut dec)? {
                Value::Null => Vec::new(),
                Value::List(items) => string_list("ROUTE bookmarks", items)?,
                other => {
                    return Err(DecodeError::malformed(format!(
                        "ROUTE bookmarks must be a List, got {}",
                        other.type_name()
                    )))
                }
            };
            // 4.4+: a map with `db` (and `imp_user`); 4.3 sent the database name directly.
            let db = match decode_value(&mut dec)? {
                Value::Null => None,
                Value::String(s) => Some(s.to_string()),
                Value::Map(m) => match m.get("db") {
                    Some(Value::String(s)) => Some(s.to_string()),
                    None | Some(Value::Null) => None,
                    Some(other) => {
                        return Err(DecodeError::malformed(format!(
                            "ROUTE db must be a String, got {}",
                            other.type_name()
                        )))
                    }
                },
                other => {
                    return Err(DecodeError::malformed(format!(
                        "ROUTE extra must be a Map, got {}",
                        other.type_name()
                    )))
                }
            };
            Request::Route { routing, bookmarks, db }
        }
        other => {
            return Err(DecodeError::malformed(format!("unknown message type 0x{other:02X}")));
        }
    };
    dec.leave();
    if !dec.is_at_end() {
        return Err(DecodeError::malformed(format!(
            "{} message has {} unexpected trailing bytes",
            req.name(),
            dec.remaining()
        )));
    }
    Ok(req)
}

pub fn string_list(what: &str, items: Vec<Value>) -> Result<Vec<String>, DecodeError> {
    items
        .into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.to_string()),
            other => Err(DecodeError::malformed(format!(
                "{what} must contain Strings, got {}",
                other.type_name()
            ))),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

pub fn write_success(buf: &mut Vec<u8>, meta: &PropertyMap, d: Dialect) -> Result<(), EncodeError> {
    ps::write_struct_header(buf, 1, tag::SUCCESS);
    encode_map(buf, meta, d)
}

pub fn write_failure(buf: &mut Vec<u8>, meta: &PropertyMap, d: Dialect) -> Result<(), EncodeError> {
    ps::write_struct_header(buf, 1, tag::FAILURE);
    encode_map(buf, meta, d)
}

pub fn write_ignored(buf: &mut Vec<u8>) -> Result<(), TooLarge> {
    ps::write_struct_header(buf, 0, tag::IGNORED);
    Ok(())
}

/// Writes a `RECORD` from the engine's record, its values straight from the executor's row and
/// the graph (no owned row in between).
pub fn write_record(
    buf: &mut Vec<u8>,
    record: &mut arbor_engine::Record<'_>,
    d: Dialect,
) -> arbor_model::Result<()> {
    ps::write_struct_header(buf, 1, tag::RECORD);
    ps::write_list_header(buf, record.len())
        .map_err(|_| arbor_model::Error::internal("a record is too large for PackStream"))?;
    record.write(&mut PackWriter::new(buf, d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packstream::DecodeErrorKind;
    use crate::values::encode_value;

    fn msg(tag: u8, fields: &[Value]) -> Vec<u8> {
        let mut b = Vec::new();
        ps::write_struct_header(&mut b, fields.len() as u8, tag);
        for f in fields {
            encode_value(&mut b, f, Dialect::V5).unwrap();
        }
        b
    }

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::Map(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    #[test]
    fn parses_every_request() {
        let run = msg(
            tag::RUN,
            &[
                Value::str("RETURN $x"),
                map(&[("x", Value::Int(1))]),
                map(&[("mode", Value::str("r"))]),
            ],
        );
        match parse_request(&run).unwrap() {
            Request::Run { query, params, extra } => {
                assert_eq!(query, "RETURN $x");
                assert!(matches!(params.get("x"), Some(Value::Int(1))));
                assert!(matches!(extra.get("mode"), Some(Value::String(s)) if &**s == "r"));
            }
            other => panic!("{other:?}"),
        }
        let pull = msg(tag::PULL, &[map(&[("n", Value::Int(1000))])]);
        assert!(matches!(parse_request(&pull).unwrap(), Request::Pull { n: 1000, qid: -1 }));
        let discard = msg(tag::DISCARD, &[map(&[("n", Value::Int(-1)), ("qid", Value::Int(3))])]);
        assert!(matches!(parse_request(&discard).unwrap(), Request::Discard { n: -1, qid: 3 }));
        let route = msg(
            tag::ROUTE,
            &[
                map(&[("address", Value::str("h:7687"))]),
                Value::List(vec![Value::str("b1")]),
                map(&[("db", Value::Null)]),
            ],
        );
        match parse_request(&route).unwrap() {
            Request::Route { routing, bookmarks, db } => {
                assert!(routing.contains_key("address"));
                assert_eq!(bookmarks, vec!["b1".to_string()]);
                assert_eq!(db, None);
            }
            other => panic!("{other:?}"),
        }
        for (t, name) in [
            (tag::GOODBYE, "GOODBYE"),
            (tag::RESET, "RESET"),
            (tag::COMMIT, "COMMIT"),
            (tag::ROLLBACK, "ROLLBACK"),
            (tag::LOGOFF, "LOGOFF"),
        ] {
            assert_eq!(parse_request(&msg(t, &[])).unwrap().name(), name);
        }
        assert!(matches!(
            parse_request(&msg(tag::TELEMETRY, &[Value::Int(2)])).unwrap(),
            Request::Telemetry { api: 2 }
        ));
        assert!(matches!(
            parse_request(&msg(tag::BEGIN, &[map(&[])])).unwrap(),
            Request::Begin { .. }
        ));
        assert!(matches!(
            parse_request(&msg(tag::HELLO, &[map(&[])])).unwrap(),
            Request::Hello { .. }
        ));
        assert!(matches!(
            parse_request(&msg(tag::LOGON, &[map(&[])])).unwrap(),
            Request::Logon { .. }
        ));
    }

    #[test]
    fn shape_errors_are_malformed() {
        let bad = [
            msg(0x55, &[]),                                      // unknown tag
            msg(tag::RUN, &[Value::Int(1), map(&[]), map(&[])]), // query not a string
            msg(tag::PULL, &[map(&[])]),                         // n missing
            msg(tag::PULL, &[map(&[("n", Value::str("all"))])]), // n not an int
            msg(tag::RESET, &[Value::Null]),                     // extra field
            msg(tag::TELEMETRY, &[Value::str("oh no!")]),        // api not an int
            vec![0xC0],                                          // not a structure
            vec![],                                              // empty
        ];
        for b in bad {
            let e = parse_request(&b).unwrap_err();
            assert_eq!(e.kind, DecodeErrorKind::Malformed, "{b:02X?}: {e}");
        }
        let mut trailing = msg(tag::RESET, &[]);
        trailing.push(0xC0);
        assert!(parse_request(&trailing).is_err());
    }

    #[test]
    fn peek_tag_reads_the_message_type() {
        assert_eq!(peek_tag(&[0xB0, tag::RESET]), Some(tag::RESET));
        assert_eq!(peek_tag(&[0xC0]), None);
        assert_eq!(peek_tag(&[]), None);
    }
}
