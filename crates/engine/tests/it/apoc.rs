//! APOC procedures through a session: writing procedures are refused in read transactions
//! (`Neo.ClientError.Statement.AccessMode`) even when they would change nothing, and
//! `apoc.meta.data` reads what the writes made.

use arbor_engine::{AccessMode, Database, Status, TxConfig};

use crate::common::all;

fn read() -> TxConfig {
    TxConfig { mode: AccessMode::Read, ..TxConfig::default() }
}

#[test]
fn writing_procedures_are_refused_in_read_mode() {
    let db = Database::in_memory();
    let mut s = db.session();
    let merge = "CALL apoc.merge.node(['P'], {id: 1}, {}, {}) YIELD node RETURN node.id";
    assert_eq!(all(&mut s, merge, read()).unwrap_err(), Status::AccessMode);
    let rows = all(&mut s, merge, TxConfig::default()).unwrap();
    assert_eq!(format!("{rows:?}"), "[[Int(1)]]");
    // The node exists now, so the merge would write nothing: still a WRITE procedure.
    assert_eq!(all(&mut s, merge, read()).unwrap_err(), Status::AccessMode);
    let create = "CALL apoc.create.node(['Q'], {}) YIELD node RETURN node";
    assert_eq!(all(&mut s, create, read()).unwrap_err(), Status::AccessMode);
    let meta = "CALL apoc.meta.data() YIELD label, property, type RETURN label, property, type";
    let rows = all(&mut s, meta, read()).unwrap();
    assert_eq!(format!("{rows:?}"), r#"[[String("P"), String("id"), String("INTEGER")]]"#);
}

#[test]
fn merge_node_matches_every_existing_node_once() {
    let db = Database::in_memory();
    let mut s = db.session();
    all(&mut s, "CREATE (:P {id: 1, n: 1}), (:P {id: 1, n: 2}), (:P {id: 2})", TxConfig::default())
        .unwrap();
    let q = "CALL apoc.merge.node(['P'], {id: 1}, {}, {seen: true}) YIELD node RETURN node.n ORDER BY node.n";
    let rows = all(&mut s, q, TxConfig::default()).unwrap();
    assert_eq!(format!("{rows:?}"), "[[Int(1)], [Int(2)]]");
    let seen = "MATCH (p:P) WHERE p.seen RETURN count(p)";
    assert_eq!(format!("{:?}", all(&mut s, seen, TxConfig::default()).unwrap()), "[[Int(2)]]");
}
