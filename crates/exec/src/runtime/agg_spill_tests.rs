//! Aggregations that spill give the answers of the same aggregations in memory: each query
//! runs once without a memory limit and once under a pool too small for its group table on a
//! graph with scratch files (where it must spill, and does: files are handed out) and on one
//! without (where it fails with the pool's memory error, as before spilling existed). Keys
//! are single integers, mixed integers / floats / strings (`1` and `1.0` one group), several
//! columns, and nulls; aggregates include `collect` (order within a group kept), DISTINCT,
//! `sum`, `avg`, `min`, `max`. A partition that does not fit is split again; one group that
//! does not fit fails with the memory error.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arbor_model::{to_cypher_literal, PropertyMap, Result, Status};

use crate::memory::{self, MemoryPool};
use crate::testing::MemGraph;
use crate::{Execution, PreparedQuery};

/// Runs `q` in a transaction of `pool`: how many rows, and a fingerprint of them that does
/// not depend on their order (groups come in no fixed order). The rows are not kept: they would
/// count against the transaction's memory.
fn rows_in(pool: &Arc<MemoryPool>, g: &mut MemGraph, q: &str) -> Result<(usize, u64)> {
    let tx = pool.transaction();
    let _scope = memory::enter(&tx);
    let stmt = arbor_cypher_syntax::parse(q)?;
    let pq = Arc::new(PreparedQuery::prepare(&stmt, q)?);
    let mut ex = Execution::start(pq, PropertyMap::new())?;
    let (mut n, mut fp) = (0, 0u64);
    while let Some(r) = ex.next(g)? {
        let text = r.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | ");
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        fp = fp.wrapping_add(h.finish());
        n += 1;
    }
    Ok((n, fp))
}

/// 120,000 rows `x` from two small lists (a big `range()` would itself pass the limit).
const ROWS: &str = "UNWIND range(0, 299) AS hi UNWIND range(1, 400) AS lo WITH hi * 400 + lo AS x ";

const TAILS: &[&str] = &[
    "RETURN x % 40000 AS k, count(*) AS c, sum(x) AS s",
    "RETURN x % 30000 AS k, collect(x) AS xs, min(x) AS lo, max(x) AS hi",
    "RETURN CASE x % 3 WHEN 0 THEN x % 20000 WHEN 1 THEN toFloat(x % 20000) ELSE toString(x % 9000) END AS k, \
     count(*) AS c, avg(x) AS a",
    "RETURN x % 200 AS a, x % 333 AS b, count(DISTINCT x % 7) AS d, count(x) AS c",
    "WITH x, CASE WHEN x % 50 = 0 THEN null ELSE x % 25000 END AS k \
     RETURN k, count(*) AS c, collect(x % 10)[0..3] AS firsts",
];

#[test]
fn a_spilled_aggregation_answers_as_in_memory() {
    let dir = std::env::temp_dir().join(format!("arbor-agg-spill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let free = Arc::new(MemoryPool::default());
    for tail in TAILS {
        let q = &format!("{ROWS}{tail}");
        let mut g = MemGraph::new();
        let want = rows_in(&free, &mut g, q).expect("runs without a limit");
        assert!(want.0 > 5000, "{q}: a big group table");
        // Without scratch files the table does not fit the pool.
        let tight = Arc::new(MemoryPool::new(3 << 20, 0));
        let e = rows_in(&tight, &mut g, q).expect_err("does not fit without spilling");
        assert_eq!(e.status, Status::MemoryExhausted, "{q}: {e}");
        // With them it spills and answers the same.
        g.scratch_dir = Some(dir.clone());
        let tight = Arc::new(MemoryPool::new(3 << 20, 0));
        let got = rows_in(&tight, &mut g, q).unwrap_or_else(|e| panic!("{q}: {e}"));
        assert!(g.scratch_files.get() > 0, "{q}: spilled");
        assert_eq!(got, want, "{q}: rows and their fingerprint");
        assert_eq!(tight.used(), 0, "{q}: memory given back");
    }
    let left = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "scratch files are unlinked");
    let _ = std::fs::remove_dir(&dir);
}

#[test]
fn a_partition_that_alone_does_not_fit_is_split_again() {
    let dir = std::env::temp_dir().join(format!("arbor-agg-spill2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    // A million groups: a 32nd of them (one partition) is still several times the pool.
    let q = "UNWIND range(0, 999) AS hi UNWIND range(1, 1000) AS lo \
             WITH hi * 1000 + lo AS x RETURN (x * 7919) % 1000003 AS k, count(*) AS c, sum(x) AS s";
    let mut g = MemGraph::new();
    let free = Arc::new(MemoryPool::default());
    let want = rows_in(&free, &mut g, q).expect("runs without a limit");
    g.scratch_dir = Some(dir.clone());
    let tight = Arc::new(MemoryPool::new(3 << 20, 0));
    let got = rows_in(&tight, &mut g, q).unwrap_or_else(|e| panic!("{q}: {e}"));
    // The first level's 32 files, then at least one partition's own 32.
    assert!(g.scratch_files.get() >= 64, "split again: {} files", g.scratch_files.get());
    assert_eq!(got, want, "rows and their fingerprint");
    assert_eq!(tight.used(), 0, "memory given back");
    let left = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "scratch files are unlinked");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_group_too_big_for_the_memory_fails_with_the_memory_error() {
    let dir = std::env::temp_dir().join(format!("arbor-agg-spill3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let mut g = MemGraph::new();
    g.scratch_dir = Some(dir.clone());
    let q = format!("{ROWS}RETURN x % 2 AS k, collect(toString(x)) AS xs");
    let tight = Arc::new(MemoryPool::new(3 << 20, 0));
    let e = rows_in(&tight, &mut g, &q).expect_err("a group's list does not fit");
    assert_eq!(e.status, Status::MemoryExhausted, "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fused scan aggregation, in its typed integer columns, its `Value` columns (a string
/// key, a filter) and row at a time, falls back to the spilling row path when its table would
/// not fit, and answers as in memory.
#[test]
fn a_fused_scan_aggregation_spills_and_answers_as_in_memory() {
    let dir = std::env::temp_dir().join(format!("arbor-agg-spill4-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let free = Arc::new(MemoryPool::default());
    let mut g = MemGraph::new();
    let make = format!(
        "{ROWS}CREATE (:L {{x: x, k: (x * 7919) % 40000, s: toString(x % 30000), \
         m: CASE x % 5 WHEN 0 THEN null WHEN 1 THEN toFloat(x % 20000) ELSE x % 20000 END}})"
    );
    rows_in(&free, &mut g, &make).expect("graph made");
    g.commit();
    let queries = [
        "MATCH (n:L) RETURN n.k AS k, count(*) AS c, sum(n.x) AS s",
        "MATCH (n:L) RETURN n.s AS k, count(*) AS c, max(n.x) AS hi",
        "MATCH (n:L) WHERE n.x % 3 <> 0 RETURN n.k AS k, count(n.m) AS c, min(n.x) AS lo",
        "MATCH (n:L) RETURN n.m AS k, count(*) AS c, avg(n.x) AS a",
        "MATCH (n:L) RETURN n.k AS k, collect(n.x)[0..2] AS firsts",
        "MATCH (n:L) RETURN n.k % 30000 AS k, n.x % 2 AS p, count(*) AS c",
    ];
    for q in queries {
        g.scratch_dir = None;
        g.scratch_files.set(0);
        let want = rows_in(&free, &mut g, q).expect("runs without a limit");
        assert!(want.0 > 5000, "{q}: a big group table");
        let tight = Arc::new(MemoryPool::new(3 << 20, 0));
        let e = rows_in(&tight, &mut g, q).expect_err("does not fit without spilling");
        assert_eq!(e.status, Status::MemoryExhausted, "{q}: {e}");
        g.scratch_dir = Some(dir.clone());
        let tight = Arc::new(MemoryPool::new(3 << 20, 0));
        let got = rows_in(&tight, &mut g, q).unwrap_or_else(|e| panic!("{q}: {e}"));
        assert!(g.scratch_files.get() > 0, "{q}: spilled");
        assert_eq!(got, want, "{q}: rows and their fingerprint");
        assert_eq!(tight.used(), 0, "{q}: memory given back");
    }
    let left = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "scratch files are unlinked");
    let _ = std::fs::remove_dir(&dir);
}
