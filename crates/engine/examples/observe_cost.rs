//! A fixed, mgBench-like workload in process, for instruction-count A/B runs of the metrics and
//! query-log hooks under `valgrind --tool=callgrind` (see BENCHMARKS.md): a small social graph
//! (2,000 users, 10,000 follows), then 1,000 queries mixing mgBench's kinds: point lookups,
//! 1- and 2-hop expansions, an aggregation, property updates and single-node creates, each an
//! auto-commit transaction through `Session::run`/`pull` as Bolt drives it.
//!
//! `cargo run --release -p arbor-engine --example observe_cost [queries] [metrics-off] [log]`:
//! `metrics-off` turns per-query observation off (`metrics::set_enabled(false)`), `log` turns
//! the query log on at level info with threshold 0 (every query logged, parameters included)
//! into a temporary file.

use arbor_engine::{Database, PropertyMap, PullOutcome, Session, TxConfig, Value};

fn run(s: &mut Session, q: &str, params: PropertyMap) -> u64 {
    s.run(q, params, TxConfig::default()).expect("run");
    let mut rows = 0;
    loop {
        let out = s.pull(None, 1000, &mut |_| {
            rows += 1;
            Ok(())
        });
        match out.expect("pull") {
            PullOutcome::HasMore => {}
            PullOutcome::Done(_) => return rows,
        }
    }
}

fn id(i: i64) -> PropertyMap {
    let mut p = PropertyMap::new();
    p.insert("id".into(), Value::Int(i));
    p
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let queries: i64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    if args.iter().any(|a| a == "metrics-off") {
        arbor_engine::metrics::set_enabled(false);
    }
    let log_dir = std::env::temp_dir().join(format!("observe-cost-{}", std::process::id()));
    if args.iter().any(|a| a == "log") {
        let mut config = arbor_engine::query_log::QueryLogConfig::for_data_dir(&log_dir);
        config.level = arbor_engine::query_log::QueryLogLevel::Info;
        arbor_engine::query_log::configure(config).expect("query log");
    }
    let db = Database::in_memory();
    let mut s = db.session();
    run(&mut s, "CREATE INDEX FOR (u:User) ON (u.id)", PropertyMap::new());
    run(
        &mut s,
        "UNWIND range(0, 1999) AS i CREATE (:User {id: i, age: i % 80})",
        PropertyMap::new(),
    );
    run(
        &mut s,
        "UNWIND range(0, 9999) AS i MATCH (a:User {id: i % 2000}), (b:User {id: (i * 7 + 13) % 2000}) \
         CREATE (a)-[:Follows]->(b)",
        PropertyMap::new(),
    );
    let mut total = 0;
    let mut x: i64 = 12345;
    for q in 0..queries {
        // A small LCG keeps the parameter stream fixed between runs.
        x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
        let user = x % 2000;
        total += match q % 10 {
            0..=3 => run(&mut s, "MATCH (n:User {id: $id}) RETURN n", id(user)),
            4 | 5 => run(&mut s, "MATCH (n:User {id: $id})-[:Follows]->(m) RETURN m.id", id(user)),
            6 => run(
                &mut s,
                "MATCH (n:User {id: $id})-[:Follows]->()-[:Follows]->(m) RETURN DISTINCT m.id",
                id(user),
            ),
            7 => run(&mut s, "MATCH (n:User) WHERE n.age = $id % 80 RETURN count(n)", id(user)),
            8 => run(&mut s, "MATCH (n:User {id: $id}) SET n.age = n.age + 1", id(user)),
            _ => run(&mut s, "CREATE (:Visit {id: $id})", id(user)),
        };
    }
    println!("{queries} queries, {total} rows");
    let _ = std::fs::remove_dir_all(&log_dir);
}
