//! `shortestPath` and `allShortestPaths` (the bidirectional search of `exec`'s
//! `runtime/shortest.rs`) against the general variable-length expansion on random graphs with
//! cycles, self-loops and parallel relationships: for every pair of distinct nodes, in each
//! direction, bounded and unbounded, `allShortestPaths` must return exactly the
//! variable-length paths of the smallest length, and `shortestPath` one of them.

use std::collections::{BTreeMap, BTreeSet};

use arbor_engine::{Database, DatabaseConfig, PullOutcome, Session, TxConfig};
use arbor_model::{to_cypher_literal, Value};

fn run(s: &mut Session, q: &str) -> Vec<Vec<String>> {
    s.run(q, Default::default(), TxConfig::default()).unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut rows = Vec::new();
    let mut sink = |row: Vec<arbor_engine::ResultValue>| {
        let row: Vec<Value> = row.into_iter().map(Value::from).collect();
        rows.push(row.iter().map(to_cypher_literal).collect());
        Ok(())
    };
    match s.pull(None, -1, &mut sink).unwrap_or_else(|e| panic!("{q}: {e}")) {
        PullOutcome::Done(_) => rows,
        PullOutcome::HasMore => panic!("{q}: not exhausted"),
    }
}

type Pair = (String, String);
type Path = (String, String);

/// The rows of `q` (`a.id, b.id, node ids, relationship ids`) by end pair.
fn by_pair(s: &mut Session, q: &str) -> BTreeMap<Pair, Vec<Path>> {
    let mut out: BTreeMap<Pair, Vec<Path>> = BTreeMap::new();
    for r in run(s, q) {
        out.entry((r[0].clone(), r[1].clone())).or_default().push((r[2].clone(), r[3].clone()));
    }
    out
}

/// The number of relationships of a path given as its relationship-id list literal.
fn len(p: &Path) -> usize {
    p.1.matches(',').count() + usize::from(p.1 != "[]")
}

/// Compares both selectors with the variable-length paths of `pattern` (bounded by `var`,
/// which must reach every shortest path the selectors' `sel` bound allows).
fn compare(s: &mut Session, what: &str, pattern: &str, var: &str, sel: &str) {
    let ret = "RETURN a.id, b.id, [n IN nodes(p) | n.id], [r IN relationships(p) | id(r)]";
    let shape = |bound: &str| pattern.replace("*", &format!("*{bound}"));
    let all = by_pair(s, &format!("MATCH p = (a:N){} (b:N) WHERE a <> b {ret}", shape(var)));
    let mut want: BTreeMap<Pair, BTreeSet<Path>> = BTreeMap::new();
    for (pair, paths) in all {
        let d = paths.iter().map(len).min().unwrap_or(0);
        want.insert(pair, paths.into_iter().filter(|p| len(p) == d).collect());
    }
    let m = "MATCH (a:N), (b:N) WHERE a <> b MATCH p =";
    let sel_pattern = shape(sel);
    let got = by_pair(s, &format!("{m} allShortestPaths((a){sel_pattern}(b)) {ret}"));
    let got: BTreeMap<Pair, BTreeSet<Path>> = got
        .into_iter()
        .map(|(pair, paths)| {
            let n = paths.len();
            let set: BTreeSet<Path> = paths.into_iter().collect();
            assert_eq!(set.len(), n, "{what}: a path returned twice for {pair:?}");
            (pair, set)
        })
        .collect();
    assert_eq!(got, want, "{what}: allShortestPaths");
    assert!(!want.is_empty(), "{what}: the graph has paths");
    let one = by_pair(s, &format!("{m} shortestPath((a){sel_pattern}(b)) {ret}"));
    assert_eq!(
        one.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}: shortestPath finds a path for the same pairs"
    );
    for (pair, paths) in &one {
        assert_eq!(paths.len(), 1, "{what}: shortestPath gave {} paths for {pair:?}", paths.len());
        assert!(want[pair].contains(&paths[0]), "{what}: {pair:?} {:?} is not shortest", paths[0]);
    }
}

#[test]
fn shortest_paths_equal_the_shortest_variable_length_paths() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
    let mut s = db.session();
    // Small graphs: the unbounded selectors against every path up to the node count.
    for seed in [3, 11, 29] {
        crate::common::random_rs_graph(&mut s, seed, 8, 14);
        for (p, var) in [("-[:R*]->", "1..7"), ("<-[:R*]-", "1..7"), ("-[:R|S*]-", "1..5")] {
            let what = format!("seed {seed}, {p}");
            // Undirected, 5 is past every shortest path on these graphs (asserted below).
            compare(&mut s, &what, p, var, "");
            compare(&mut s, &format!("{what} bounded"), p, "1..2", "1..2");
        }
        let unbounded = run(
            &mut s,
            "MATCH (a:N), (b:N) WHERE a <> b MATCH p = shortestPath((a)-[:R|S*]-(b)) \
             RETURN max(length(p))",
        );
        assert!(unbounded[0][0].parse::<u64>().unwrap() <= 5, "seed {seed}: {unbounded:?}");
    }
    // Larger, denser graphs: both sides of the search take several levels, with many
    // shortest paths per pair.
    for seed in [5, 17] {
        crate::common::random_rs_graph(&mut s, seed, 40, 110);
        for p in ["-[:R*]->", "-[:R|S*]-"] {
            compare(&mut s, &format!("seed {seed}, {p}, 40 nodes"), p, "1..3", "1..3");
        }
        let many = run(
            &mut s,
            "MATCH (a:N), (b:N) WHERE a <> b MATCH p = allShortestPaths((a)-[:R|S*]-(b)) \
             WITH a, b, count(p) AS n WHERE n > 2 RETURN count(*)",
        );
        assert_ne!(many[0][0], "0", "seed {seed}: some pairs have several shortest paths");
    }
}
