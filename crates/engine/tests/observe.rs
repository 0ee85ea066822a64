//! Metrics and the query log as a session drives them: query counts by type, transaction
//! starts and ends (commit, rollback, error, conflict), and one JSON line per logged query.
//! One test function in its own test binary (not in `tests/it`): the counters and the log
//! configuration are process-wide.

use std::sync::atomic::Ordering;
use std::time::Duration;

use arbor_engine::metrics::QUERIES;
use arbor_engine::query_log::{self, QueryLogConfig, QueryLogLevel};
use arbor_engine::{Database, PropertyMap, PullOutcome, TxConfig, Value};

fn run_all(s: &mut arbor_engine::Session, q: &str) -> arbor_engine::Result<u64> {
    s.run(q, PropertyMap::new(), TxConfig::default())?;
    let mut rows = 0;
    loop {
        match s.pull(None, 100, &mut |_| {
            rows += 1;
            Ok(())
        })? {
            PullOutcome::HasMore => {}
            PullOutcome::Done(_) => return Ok(rows),
        }
    }
}

fn get(c: &std::sync::atomic::AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

#[test]
fn sessions_drive_the_metrics_and_the_query_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = QueryLogConfig::for_data_dir(dir.path());
    config.level = QueryLogLevel::Info;
    config.threshold = Duration::ZERO;
    query_log::configure(config).unwrap();

    let db = Database::in_memory();
    let mut s = db.session();
    s.set_client("test-1", "10.1.2.3");
    let (read, write, failed) = (get(&QUERIES.read), get(&QUERIES.write), get(&QUERIES.failed));
    let (started, committed, rolled_back) =
        (get(&QUERIES.tx_started), get(&QUERIES.tx_committed), get(&QUERIES.tx_rolled_back));

    assert_eq!(run_all(&mut s, "UNWIND range(1, 250) AS x RETURN x").unwrap(), 250);
    run_all(&mut s, "CREATE (:Obs)").unwrap();
    assert!(run_all(&mut s, "RETURN 1/0").is_err());
    assert!(s.run("RETURN (", PropertyMap::new(), TxConfig::default()).is_err());
    assert_eq!(get(&QUERIES.read), read + 1);
    assert_eq!(get(&QUERIES.write), write + 1);
    assert_eq!(get(&QUERIES.failed), failed + 2);

    // Explicit transactions: one committed, one rolled back, one dropped with the session.
    s.begin(TxConfig::default()).unwrap();
    run_all(&mut s, "CREATE (:Obs)").unwrap();
    s.commit().unwrap();
    s.begin(TxConfig::default()).unwrap();
    s.rollback().unwrap();
    let mut other = db.session();
    other.begin(TxConfig::default()).unwrap();
    drop(other);
    // Auto-commit: 3 started (2 committed, 1 failed at run time; the syntax error never
    // started one), explicit: 3 started (1 committed, 2 rolled back).
    assert_eq!(get(&QUERIES.tx_started), started + 6);
    assert_eq!(get(&QUERIES.tx_committed), committed + 3);
    assert_eq!(get(&QUERIES.tx_rolled_back), rolled_back + 3);

    let mut params = PropertyMap::new();
    params.insert("p".into(), Value::Int(5));
    s.run("RETURN $p AS p", params, TxConfig::default()).unwrap();
    s.pull(None, -1, &mut |_| Ok(())).unwrap();

    let log = std::fs::read_to_string(dir.path().join("logs").join("query.log")).unwrap();
    let lines: Vec<serde_json::Value> =
        log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let unwind = lines.iter().find(|l| l["query"] == "UNWIND range(1, 250) AS x RETURN x").unwrap();
    assert_eq!(unwind["rows"], 250);
    assert_eq!(unwind["event"], "success");
    assert_eq!(unwind["client"], "10.1.2.3");
    let failed = lines.iter().find(|l| l["query"] == "RETURN 1/0").unwrap();
    assert_eq!(failed["error_code"], "Neo.ClientError.Statement.ArithmeticError");
    let p = lines.iter().find(|l| l["query"] == "RETURN $p AS p").unwrap();
    assert_eq!(p["parameters"], serde_json::json!({"p": 5}));

    // Off: nothing more is written.
    query_log::configure(QueryLogConfig::for_data_dir(dir.path())).unwrap();
    run_all(&mut s, "RETURN 'not logged'").unwrap();
    let after = std::fs::read_to_string(dir.path().join("logs").join("query.log")).unwrap();
    assert_eq!(after, log);
}
