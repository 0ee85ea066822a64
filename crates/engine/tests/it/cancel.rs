//! Queries stop when they must: a transaction deadline (the driver's `tx_timeout` or the
//! server-wide `db.transaction.timeout`) and an interrupt from another thread (Bolt `RESET`,
//! a disconnect, shutdown) end each kind of long loop within a bound, with Neo4j's codes, and
//! roll the transaction back. Every query here would otherwise run for minutes.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use arbor_engine::{Database, PropertyMap, PullOutcome, Session, Status, TxConfig};

/// How long an interrupted query may take to stop (generous: the machine is shared).
const BOUND: Duration = Duration::from_secs(5);

/// Runs `query` in auto-commit with `config` and pulls everything; the error's status, and
/// how long it took. Panics if the query succeeds.
fn fails(s: &mut Session, query: &str, config: TxConfig) -> (Status, Duration) {
    let t = Instant::now();
    let r = s.run(query, PropertyMap::new(), config).and_then(|_| loop {
        match s.pull(None, 1000, &mut |_| Ok(())) {
            Ok(PullOutcome::HasMore) => {}
            Ok(PullOutcome::Done(_)) => break Ok(()),
            Err(e) => break Err(e),
        }
    });
    let e = r.expect_err(&format!("`{query}` was not stopped"));
    (e.status, t.elapsed())
}

fn timeout(ms: u64) -> TxConfig {
    TxConfig { timeout: Some(Duration::from_millis(ms)), ..TxConfig::default() }
}

/// A long query of each kind of loop, stopped by a 200 ms driver timeout.
fn assert_timed_out(db: &Database, query: &str) {
    let mut s = db.session();
    let (status, took) = fails(&mut s, query, timeout(200));
    assert_eq!(status, Status::TransactionTimedOutClientConfiguration, "{query}");
    assert!(took < BOUND, "`{query}` took {took:?} to stop");
    // The session is usable afterwards, without a leftover interrupt.
    s.run("RETURN 1", PropertyMap::new(), TxConfig::default()).unwrap();
    s.pull(None, -1, &mut |_| Ok(())).unwrap();
}

const PAIRS: &str = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b";

#[test]
fn aggregation_drain_stops() {
    let db = Database::in_memory();
    assert_timed_out(&db, &format!("{PAIRS} RETURN count(*)"));
    assert_timed_out(&db, &format!("{PAIRS} RETURN a % 7 AS k, collect(DISTINCT b % 3) AS c"));
}

#[test]
fn sort_and_distinct_stop() {
    let db = Database::in_memory();
    assert_timed_out(&db, &format!("{PAIRS} WITH a, b WHERE a + b < 0 RETURN a ORDER BY a"));
    assert_timed_out(&db, &format!("{PAIRS} RETURN DISTINCT a + b < 0 AS x"));
}

#[test]
fn range_building_stops() {
    // Each row builds a list of 3 million: without a check inside range() the first look at
    // the flag would come only after 1024 of them.
    let db = Database::in_memory();
    assert_timed_out(&db, "UNWIND range(1, 1000000) AS a RETURN size(range(a, 3000000 + a)) AS n");
}

#[test]
fn reduce_and_comprehensions_stop() {
    let db = Database::in_memory();
    // Quadratic: every step copies the list so far.
    assert_timed_out(&db, "RETURN size(reduce(acc = [], x IN range(1, 300000) | acc + [x])) AS n");
    assert_timed_out(
        &db,
        "RETURN size([x IN range(1, 50000) WHERE any(y IN range(1, 50000) WHERE y = -x)]) AS n",
    );
}

#[test]
fn var_length_expansion_stops() {
    let db = Database::in_memory();
    let mut s = db.session();
    for q in [
        "UNWIND range(1, 30) AS i CREATE (:N {i: i})",
        "MATCH (a:N), (b:N) WHERE a <> b CREATE (a)-[:R]->(b)",
    ] {
        s.run(q, PropertyMap::new(), TxConfig::default()).unwrap();
        s.pull(None, -1, &mut |_| Ok(())).unwrap();
    }
    drop(s);
    assert_timed_out(&db, "MATCH p = (:N)-[:R*1..12]->(:N) RETURN count(p)");
    assert_timed_out(&db, "MATCH p = (:N)-[:R*1..12]->(:N) WHERE length(p) > 20 RETURN count(*)");
}

#[test]
fn server_timeout_applies_and_a_smaller_driver_timeout_wins() {
    let db = Database::in_memory();
    db.set_transaction_timeout(Duration::from_millis(200));
    let mut s = db.session();
    let q = format!("{PAIRS} RETURN count(*)");
    let (status, took) = fails(&mut s, &q, TxConfig::default());
    assert_eq!(status, Status::TransactionTimedOut);
    assert!(took < BOUND, "took {took:?}");
    // A larger driver timeout does not extend the server's.
    let (status, _) = fails(&mut s, &q, timeout(60_000));
    assert_eq!(status, Status::TransactionTimedOut);
    db.set_transaction_timeout(Duration::from_secs(60));
    let (status, _) = fails(&mut s, &q, timeout(200));
    assert_eq!(status, Status::TransactionTimedOutClientConfiguration);
    // Explicit transactions too.
    db.set_transaction_timeout(Duration::from_millis(200));
    s.begin(TxConfig::default()).unwrap();
    let (status, _) = fails(&mut s, &q, TxConfig::default());
    assert_eq!(status, Status::TransactionTimedOut);
    assert_eq!(s.commit().unwrap_err().status, Status::TransactionTimedOut);
}

#[test]
fn interrupt_from_another_thread_stops_and_rolls_back() {
    let db = Database::in_memory();
    let mut s = db.session();
    let flag = s.interrupt_flag();
    s.begin(TxConfig::default()).unwrap();
    s.run("CREATE (:Gone)", PropertyMap::new(), TxConfig::default()).unwrap();
    s.pull(None, -1, &mut |_| Ok(())).unwrap();
    let raiser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, Ordering::SeqCst);
    });
    let (status, took) = fails(&mut s, &format!("{PAIRS} RETURN count(*)"), TxConfig::default());
    raiser.join().unwrap();
    assert_eq!(status, Status::TransactionTerminated);
    assert!(took < BOUND, "took {took:?}");
    assert!(s.commit().is_err(), "an interrupted transaction cannot commit");
    s.reset();
    s.run("MATCH (n:Gone) RETURN count(n)", PropertyMap::new(), TxConfig::default()).unwrap();
    let mut n = None;
    s.pull(None, -1, &mut |r| {
        n = Some(format!("{:?}", r[0]));
        Ok(())
    })
    .unwrap();
    assert_eq!(n.as_deref(), Some("Int(0)"), "the interrupted transaction was rolled back");
}
