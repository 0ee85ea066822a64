//! Parse and plan time of typical queries, in microseconds per call (a timing loop, not a
//! test): `cargo run -p arbor-exec --release --example plan_time [ITERATIONS]`.
//!
//! "Plan" is `PreparedQuery::prepare`: binding, semantic checks and building the operator plan
//! from an already parsed statement; it excludes parsing, which is measured separately.

use std::hint::black_box;
use std::time::Instant;

use arbor_exec::PreparedQuery;

/// Queries of the kind drivers send all day.
const QUERIES: &[(&str, &str)] = &[
    ("point lookup", "MATCH (u:User {id: $id}) RETURN u.name AS name, u.email AS email"),
    (
        "two-hop with filter",
        "MATCH (u:User {id: $id})-[:FOLLOWS]->(f:User)-[:POSTED]->(p:Post) \
         WHERE p.created > $since RETURN f.name, p.title ORDER BY p.created DESC LIMIT 20",
    ),
    (
        "aggregation",
        "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WITH p, count(m) AS movies \
         WHERE movies > 3 RETURN p.name, movies ORDER BY movies DESC",
    ),
    (
        "write",
        "MERGE (a:Account {id: $id}) ON CREATE SET a.created = timestamp() SET a.seen = $now",
    ),
];

fn main() {
    let iterations: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    println!("{:<22} {:>12} {:>12}", "query", "parse µs", "plan µs");
    for (name, text) in QUERIES {
        // Warm up (allocator, caches) before measuring.
        for _ in 0..iterations / 10 {
            if let Ok(stmt) = arbor_cypher_syntax::parse(text) {
                let _ = black_box(PreparedQuery::prepare(&stmt, text));
            }
        }
        let started = Instant::now();
        for _ in 0..iterations {
            let _ = black_box(arbor_cypher_syntax::parse(black_box(text)));
        }
        let parse = started.elapsed().as_secs_f64() * 1e6 / f64::from(iterations);
        let stmt = match arbor_cypher_syntax::parse(text) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{name}: {e}");
                std::process::exit(1);
            }
        };
        let started = Instant::now();
        for _ in 0..iterations {
            let _ = black_box(PreparedQuery::prepare(black_box(&stmt), text));
        }
        let plan = started.elapsed().as_secs_f64() * 1e6 / f64::from(iterations);
        println!("{name:<22} {parse:>12.2} {plan:>12.2}");
    }
}
