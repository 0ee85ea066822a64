//! The `RECORD`s the server streams from the engine's records against the same rows encoded
//! from their owned, materialised values (as `Session::pull` and the embedded API hand them
//! out): byte for byte, in both value dialects.

use arbor_engine::{Database, PullOutcome, Record, Session, TxConfig};
use arbor_model::{NodeId, PathRef, PropertyMap, RelId, ResultValue, Value};

use crate::message::{tag, write_record};
use crate::packstream as ps;
use crate::values::{encode_value, Dialect, EncodeError};

fn run(s: &mut Session, q: &str) {
    s.run(q, PropertyMap::new(), TxConfig::default()).unwrap();
}

/// Each row's `RECORD` bytes, streamed from records.
fn streamed(s: &mut Session, q: &str, d: Dialect) -> Vec<Vec<u8>> {
    run(s, q);
    let mut out = Vec::new();
    let outcome = s
        .pull_records(None, -1, &mut |r: &mut Record<'_>| {
            let mut b = Vec::new();
            write_record(&mut b, r, d)?;
            out.push(b);
            Ok(())
        })
        .unwrap();
    assert!(matches!(outcome, PullOutcome::Done(_)));
    out
}

/// A `RECORD` encoded from an owned row by the value encoder.
fn encoded(row: Vec<ResultValue>, d: Dialect) -> Vec<u8> {
    let mut b = Vec::new();
    ps::write_struct_header(&mut b, 1, tag::RECORD);
    ps::write_list_header(&mut b, row.len()).unwrap();
    for v in row {
        encode_value(&mut b, &Value::from(v), d).unwrap();
    }
    b
}

/// Each row's `RECORD` bytes, encoded from the owned row.
fn owned(s: &mut Session, q: &str, d: Dialect) -> Vec<Vec<u8>> {
    run(s, q);
    let mut out = Vec::new();
    let outcome = s
        .pull(None, -1, &mut |row: Vec<ResultValue>| {
            out.push(encoded(row, d));
            Ok(())
        })
        .unwrap();
    assert!(matches!(outcome, PullOutcome::Done(_)));
    out
}

#[test]
fn streamed_records_are_the_bytes_of_their_materialised_rows() {
    let db = Database::in_memory();
    let mut s = db.session();
    s.begin(TxConfig::default()).unwrap();
    for q in [
        "CREATE (:P {name: 'a', age: 3, tags: ['x', 'y']})-[:K {since: 2001}]->(:P:Q {name: 'b'})",
        "MATCH (a {name: 'a'}), (b {name: 'b'}) CREATE (b)-[:K]->(a), (b)-[:L]->(b)",
    ] {
        run(&mut s, q);
        let _ = s.discard(None, -1);
    }
    let queries = [
        "MATCH (n) RETURN n, n.name AS name, id(n) AS id ORDER BY id",
        "MATCH p = (a)-[r]->(b) RETURN p, r, [p, {r: r, n: [a, b]}] AS nested ORDER BY id(r)",
        "MATCH p = (a)-[*1..3]-(b) RETURN p ORDER BY id(a), id(b), length(p) LIMIT 40",
        "UNWIND range(1, 300) AS i RETURN i, toString(i), i / 7.0, [i, 'x'], {i: i}",
        "RETURN datetime('2024-05-06T07:08:09.5+02:00') AS t, duration('P1M2DT3S') AS d, \
         point({x: 1, y: 2}) AS p, null AS n, true AS b",
    ];
    for d in [Dialect::V5, Dialect::V4_4] {
        for q in queries {
            let a = streamed(&mut s, q, d);
            let b = owned(&mut s, q, d);
            assert!(!a.is_empty(), "{q}");
            assert_eq!(a, b, "{q} ({d:?})");
        }
    }
    s.rollback().unwrap();
}

/// The embedded API's rows in a write transaction, after its own uncommitted writes, encode to
/// the bytes Bolt streams in an explicit transaction with the same writes (two databases, so
/// the same ids): nodes, relationships and paths equal to Bolt's.
#[test]
fn embedded_rows_after_own_writes_are_the_streamed_bytes() {
    let writes = [
        "CREATE (:P {name: 'a', tags: ['x']})-[:K {since: 2001}]->(:P:Q {name: 'b'})",
        "MATCH (a {name: 'a'}), (b {name: 'b'}) CREATE (b)-[:K]->(a), (b)-[:L]->(b)",
    ];
    let bolt_db = Database::in_memory();
    let mut s = bolt_db.session();
    s.begin(TxConfig::default()).unwrap();
    let embedded_db = Database::in_memory();
    let mut tx = embedded_db.begin_write().unwrap();
    for q in writes {
        run(&mut s, q);
        let _ = s.discard(None, -1);
        tx.execute(q, PropertyMap::new()).unwrap().for_each(|r| drop(r.unwrap()));
    }
    let q = "MATCH p = (a)-[r]-(b) RETURN a, r, p, [p, {r: r}] AS nested ORDER BY id(r), id(a)";
    let bolt = streamed(&mut s, q, Dialect::V5);
    let rows = tx.execute(q, PropertyMap::new()).unwrap();
    let embedded: Vec<Vec<u8>> = rows.map(|r| encoded(r.unwrap(), Dialect::V5)).collect();
    assert!(bolt.len() >= 5, "{}", bolt.len());
    assert_eq!(embedded, bolt);
}

#[test]
fn references_are_refused_by_the_value_encoder() {
    let mut b = Vec::new();
    let path = PathRef { nodes: vec![NodeId(1)], rels: Vec::<RelId>::new() };
    for v in [
        Value::Node(NodeId(1)),
        Value::List(vec![Value::Relationship(RelId(2))]),
        Value::Path(std::sync::Arc::new(path)),
    ] {
        b.clear();
        assert!(matches!(encode_value(&mut b, &v, Dialect::V5), Err(EncodeError::Reference(_))));
    }
}
