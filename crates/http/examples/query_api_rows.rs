//! Instruction counts per row of the Query API's answer: an in-memory graph of `N` nodes
//! (default 10,000; three properties and a label each), then `MATCH (n:P) RETURN n` run through
//! `query_api::execute` and serialised as the HTTP handler does, `REPS` times (default 5).
//! Run under `valgrind --tool=callgrind` with `--toggle-collect=*query_answer*` to count only
//! the answers. Args: `[N] [REPS] [typed]`.

use arbor_engine::{Database, PropertyMap, TxConfig};
use arbor_http::query_api;
use serde_json::Map;

/// One answer, serialised; its length (so the work cannot be optimised away).
#[inline(never)]
fn query_answer(db: &Database, req: &query_api::Request, typed: bool) -> usize {
    let mut session = db.session();
    let mut out = Map::new();
    query_api::execute(&mut session, req, TxConfig::default(), typed, &mut out).unwrap();
    serde_json::to_vec(&out).unwrap().len()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let typed = args.next().is_some_and(|a| a == "typed");
    let db = Database::in_memory();
    let mut s = db.session();
    let create = format!(
        "UNWIND range(1, {n}) AS i CREATE (:P {{name: 'person ' + toString(i), age: i % 90, \
         score: i * 0.5}})"
    );
    s.run(&create, PropertyMap::new(), TxConfig::default()).unwrap();
    let _ = s.discard(None, -1).unwrap();
    let req = query_api::parse_request(br#"{"statement": "MATCH (n:P) RETURN n"}"#, false).unwrap();
    let mut bytes = 0;
    for _ in 0..reps {
        bytes += query_answer(&db, &req, typed);
    }
    println!("{n} rows x {reps}: {bytes} bytes");
}
