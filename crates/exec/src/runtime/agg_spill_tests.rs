//! Aggregations that spill give the answers of the same aggregations in memory: each query
//! runs once without a memory limit and once under a pool too small for its group table on a
//! graph with scratch files (where it must spill, and does: files are handed out) and on one
//! without (where it fails with the pool's memory error, as before spilling existed). Keys
//! are single integers, mixed integers / floats / strings (`1` and `1.0` one group), several
//! columns, and nulls; aggregates include `collect` (order within a group kept), DISTINCT,
//! `sum`, `avg`, `min`, `max`. A partition that does not fit is split again; one group that
//! does not fit fails with the memory error.

use std::sync::Arc;

use arbor_model::Status;

use crate::memory::MemoryPool;
use crate::runtime::spill_file::tests::{
    as_set, no_files_left, rows_in, scratch_dir, spills_as_in_memory,
};
use crate::testing::MemGraph;

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
    let dir = scratch_dir("agg");
    for tail in TAILS {
        spills_as_in_memory(&mut MemGraph::new(), &dir, &format!("{ROWS}{tail}"), as_set);
    }
    no_files_left(&dir);
}

#[test]
fn a_partition_that_alone_does_not_fit_is_split_again() {
    let dir = scratch_dir("agg-split");
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
    assert_eq!(as_set(&got), as_set(&want), "rows and their fingerprint");
    assert_eq!(tight.used(), 0, "memory given back");
    no_files_left(&dir);
}

#[test]
fn one_group_too_big_for_the_memory_fails_with_the_memory_error() {
    let dir = scratch_dir("agg-one-group");
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
    let dir = scratch_dir("agg-fused");
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
        spills_as_in_memory(&mut g, &dir, q, as_set);
    }
    no_files_left(&dir);
}
