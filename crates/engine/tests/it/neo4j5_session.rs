//! Session behaviour Neo4j 5 drivers rely on: access mode refused before running, transaction
//! timeouts (`tx_timeout`), and transaction metadata seen by `tx.getMetaData()`.

use std::time::Duration;

use arbor_engine::{AccessMode, Database, PropertyMap, Status, TxConfig, Value};

/// Compares by Debug output (values have no `PartialEq`).
macro_rules! same {
    ($a:expr, $b:expr $(,)?) => {
        assert_eq!(format!("{:?}", $a), format!("{:?}", $b))
    };
}

use crate::common::all;

fn ok(rows: Vec<Vec<Value>>) -> Result<Vec<Vec<Value>>, Status> {
    Ok(rows)
}

fn err(status: Status) -> Result<Vec<Vec<Value>>, Status> {
    Err(status)
}

fn read() -> TxConfig {
    TxConfig { mode: AccessMode::Read, ..TxConfig::default() }
}

fn timeout(ms: u64) -> TxConfig {
    TxConfig { timeout: Some(Duration::from_millis(ms)), ..TxConfig::default() }
}

#[test]
fn write_in_read_mode_is_refused_before_it_runs() {
    let db = Database::in_memory();
    let mut s = db.session();
    same!(all(&mut s, "CREATE (:X)", read()), err(Status::AccessMode));
    same!(all(&mut s, "CREATE INDEX i FOR (n:X) ON (n.p)", read()), err(Status::AccessMode));
    assert!(all(&mut s, "EXPLAIN CREATE (:X)", read()).is_ok());
    same!(all(&mut s, "MATCH (n:X) RETURN count(n)", read()), ok(vec![vec![Value::Int(0)]]));
    s.begin(read()).unwrap();
    same!(all(&mut s, "MERGE (:X)", TxConfig::default()), err(Status::AccessMode));
    s.reset();
}

#[test]
fn explicit_transaction_past_its_timeout_fails() {
    let db = Database::in_memory();
    let mut s = db.session();
    s.begin(timeout(100)).unwrap();
    all(&mut s, "CREATE (:T)", TxConfig::default()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let got = all(&mut s, "RETURN 1", TxConfig::default());
    same!(got, err(Status::TransactionTimedOutClientConfiguration));
    assert_eq!(s.commit().unwrap_err().status, Status::TransactionTimedOutClientConfiguration);
    // The deadline of that transaction does not touch the next one.
    s.begin(timeout(100)).unwrap();
    s.commit().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let n = all(&mut s, "UNWIND range(1, 1000) AS x RETURN count(x)", TxConfig::default());
    same!(n, ok(vec![vec![Value::Int(1000)]]));
    same!(
        all(&mut s, "MATCH (n:T) RETURN count(n)", TxConfig::default()),
        ok(vec![vec![Value::Int(0)]])
    );
}

#[test]
fn metadata_is_kept_on_the_transaction() {
    let db = Database::in_memory();
    let mut s = db.session();
    let mut meta = PropertyMap::new();
    meta.insert("app".into(), Value::from("probe"));
    s.begin(TxConfig { metadata: meta.clone(), ..TxConfig::default() }).unwrap();
    let got = all(&mut s, "CALL tx.getMetaData()", TxConfig::default()).unwrap();
    same!(got, vec![vec![Value::Map(meta)]]);
    all(&mut s, "CALL tx.setMetaData({b: 2})", TxConfig::default()).unwrap();
    let got =
        all(&mut s, "CALL tx.getMetaData() YIELD metadata RETURN metadata.b", TxConfig::default());
    same!(got, ok(vec![vec![Value::Int(2)]]));
    s.commit().unwrap();
    let got = all(
        &mut s,
        "CALL tx.getMetaData() YIELD metadata RETURN size(keys(metadata))",
        TxConfig::default(),
    );
    same!(got, ok(vec![vec![Value::Int(0)]]));
}
