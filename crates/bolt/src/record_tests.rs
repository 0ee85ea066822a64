//! The `RECORD`s the server streams from the engine's records against the same rows encoded
//! from their owned, materialised values: byte for byte, in both value dialects.

use arbor_engine::{Database, PullOutcome, Record, Session, TxConfig};
use arbor_model::{NodeId, PathRef, PropertyMap, RelId, Value};

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

/// Each row's `RECORD` bytes, encoded from the owned row.
fn owned(s: &mut Session, q: &str, d: Dialect) -> Vec<Vec<u8>> {
    run(s, q);
    let mut out = Vec::new();
    let outcome = s
        .pull(None, -1, &mut |row: Vec<Value>| {
            let mut b = Vec::new();
            ps::write_struct_header(&mut b, 1, tag::RECORD);
            ps::write_list_header(&mut b, row.len()).unwrap();
            for v in &row {
                encode_value(&mut b, v, d).unwrap();
            }
            out.push(b);
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
