//! Quantified path patterns against the variable-length relationships that say the same on
//! random graphs with cycles, self-loops and parallel relationships: `((a)-[:R]->(b)){1,k}`
//! and `-[:R*1..k]->` must give the same rows (end pairs with their path counts), in each
//! direction, with a WHERE that forces the quantified-pattern operator, and next to another
//! relationship of the clause (relationship uniqueness across the MATCH). `SHORTEST 1` must
//! find the lengths `shortestPath` finds.

use arbor_engine::{Database, DatabaseConfig, Session};

use crate::common::run_or_panic as run;

fn sorted(s: &mut Session, q: &str) -> Vec<String> {
    let mut rows = run(s, q);
    rows.sort();
    rows
}

fn compare(s: &mut Session, seed: u64) {
    let ends = "RETURN a.id, b.id, count(*)";
    for k in 1..=4 {
        for (l, r) in [("-", "->"), ("<-", "-"), ("-", "-")] {
            let var = sorted(s, &format!("MATCH (a:N){l}[:R*1..{k}]{r}(b) {ends}"));
            let qpp = sorted(s, &format!("MATCH (a:N) ((x){l}[:R]{r}(y)){{1,{k}}} (b) {ends}"));
            assert_eq!(var, qpp, "seed {seed}, k {k}, {l}{r}");
            let forced = sorted(
                s,
                &format!("MATCH (a:N){l}[q:R WHERE q.missing IS NULL]{r}{{1,{k}}}(b) {ends}"),
            );
            assert_eq!(var, forced, "seed {seed}, k {k}, {l}{r}, quantified relationship");
        }
        let var = sorted(s, &format!("MATCH (c)-[:S]->(a:N)-[:R*1..{k}]->(b) {ends}"));
        let qpp = sorted(
            s,
            &format!("MATCH (c)-[:S]->(a:N) ((x)-[:R|S]->(y) WHERE true){{1,{k}}} (b) {ends}"),
        );
        let var_rs = sorted(s, &format!("MATCH (c)-[:S]->(a:N)-[:R|S*1..{k}]->(b) {ends}"));
        assert_eq!(var_rs, qpp, "seed {seed}, k {k}, uniqueness with another relationship");
        assert!(!var.is_empty(), "seed {seed}: the graph has paths");
    }
    let shortest = sorted(
        s,
        "MATCH p = SHORTEST 1 (a:N)-[:R]->+(b:N) WHERE a <> b RETURN a.id, b.id, length(p)",
    );
    let classic = sorted(
        s,
        "MATCH (a:N), (b:N) WHERE a <> b MATCH p = shortestPath((a)-[:R*]->(b)) \
         RETURN a.id, b.id, length(p)",
    );
    assert_eq!(shortest, classic, "seed {seed}: SHORTEST 1 and shortestPath");
    assert!(!shortest.is_empty(), "seed {seed}: some shortest paths");
}

#[test]
fn quantified_path_patterns_equal_variable_length_relationships() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    for seed in [1, 7, 42] {
        crate::common::random_rs_graph(&mut s, seed, 9, 22);
        compare(&mut s, seed);
    }
}
