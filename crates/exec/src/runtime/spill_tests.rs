//! `Sort` and `Distinct` past the query memory answer as in memory: each query runs once
//! without a memory limit, once under a pool too small for its state on a graph without
//! scratch files (it fails with the pool's memory error, as before spilling existed) and once
//! on a graph with them (it spills, and the answer is the same: for ORDER BY the same rows in
//! the same order, ties in input order; for DISTINCT the same set of rows, each once). Rows
//! are random-looking (a multiplicative hash of the row number) with nulls, integers, floats
//! equal to integers, strings, lists and many duplicates.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_model::{to_cypher_literal, PropertyMap, Result, Status};

use crate::memory::{self, MemoryPool};
use crate::testing::MemGraph;
use crate::{Execution, PreparedQuery};

/// What a query's rows come to: how many, a fingerprint of them in order and one that does
/// not depend on their order.
pub(crate) type Rows = (usize, u64, u64);

/// The count and the order-free fingerprint (groups and DISTINCT keys come in no fixed order).
pub(crate) fn as_set(r: &Rows) -> (usize, u64) {
    (r.0, r.2)
}

/// Runs `q` in a transaction of `pool` (see [`Rows`]). The rows are not kept (they would
/// count against the transaction's memory).
pub(crate) fn rows_in(pool: &Arc<MemoryPool>, g: &mut MemGraph, q: &str) -> Result<Rows> {
    let tx = pool.transaction();
    let _scope = memory::enter(&tx);
    let stmt = arbor_cypher_syntax::parse(q)?;
    let pq = Arc::new(PreparedQuery::prepare(&stmt, q)?);
    let mut ex = Execution::start(pq, PropertyMap::new())?;
    let (mut n, mut ordered, mut set) = (0, 0u64, 0u64);
    while let Some(r) = ex.next(g)? {
        let text = r.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | ");
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let h = h.finish();
        ordered = ordered.wrapping_mul(0x100_0000_01B3).wrapping_add(h);
        set = set.wrapping_add(h);
        n += 1;
    }
    Ok((n, ordered, set))
}

/// 120,000 rows: `x` the row number, `h` a hash of it (a big `range()` would itself pass the
/// limit), `v` a value of mixed type from `h`: null, an integer, the same integer as a float,
/// a string, a list.
const ROWS: &str = "UNWIND range(0, 299) AS hi UNWIND range(1, 400) AS lo \
    WITH hi * 400 + lo AS x WITH x, (x * 2654435761) % 1000003 AS h \
    WITH x, h, CASE h % 9 WHEN 0 THEN null WHEN 1 THEN toFloat(h % 5000) \
    WHEN 2 THEN toString(h % 3000) WHEN 3 THEN [h % 7, h % 3] ELSE h % 5000 END AS v ";

/// A scratch directory of its own for one test.
pub(crate) fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arbor-spill-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Every scratch file was unlinked; the directory goes.
pub(crate) fn no_files_left(dir: &Path) {
    let left = std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "scratch files are unlinked");
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs `q` on `g` without a limit (more than 5,000 rows), under a pool too small for it on a
/// graph without scratch files (the memory error) and with scratch files in `dir` (it spills,
/// answers the same as `compare` sees it, and gives its memory back).
pub(crate) fn spills_as_in_memory(
    g: &mut MemGraph,
    dir: &Path,
    q: &str,
    compare: impl Fn(&Rows) -> (usize, u64),
) {
    g.scratch_dir = None;
    g.scratch_files.set(0);
    let free = Arc::new(MemoryPool::default());
    let want = rows_in(&free, g, q).expect("runs without a limit");
    assert!(want.0 > 5000, "{q}: many rows");
    let tight = Arc::new(MemoryPool::new(3 << 20, 0));
    let e = rows_in(&tight, g, q).expect_err("does not fit without spilling");
    assert_eq!(e.status, Status::MemoryExhausted, "{q}: {e}");
    g.scratch_dir = Some(dir.to_path_buf());
    let tight = Arc::new(MemoryPool::new(3 << 20, 0));
    let got = rows_in(&tight, g, q).unwrap_or_else(|e| panic!("{q}: {e}"));
    assert!(g.scratch_files.get() > 0, "{q}: spilled");
    assert_eq!(compare(&got), compare(&want), "{q}: rows and their fingerprint");
    assert_eq!(tight.used(), 0, "{q}: memory given back");
}

/// Runs every query on a graph of its own (see [`spills_as_in_memory`]).
fn same_when_spilled(name: &str, queries: &[String], compare: impl Fn(&Rows) -> (usize, u64)) {
    let dir = scratch_dir(name);
    for q in queries {
        spills_as_in_memory(&mut MemGraph::new(), &dir, q, &compare);
    }
    no_files_left(&dir);
}

#[test]
fn a_spilled_sort_gives_the_rows_of_the_sort_in_memory_in_the_same_order() {
    let tails = [
        // Many ties (5,000 keys over 120,000 rows): their input order must be kept.
        "RETURN x, v ORDER BY v",
        "RETURN v, x, h ORDER BY v DESC, h % 7",
        "RETURN x, h ORDER BY h % 1000 DESC, x % 3",
        "WITH x, v, toString(h) AS s RETURN s, v, x ORDER BY s",
    ];
    let qs: Vec<String> = tails.iter().map(|t| format!("{ROWS}{t}")).collect();
    same_when_spilled("sort", &qs, |r| (r.0, r.1));
}

#[test]
fn a_spilled_distinct_gives_each_row_of_the_distinct_in_memory_once() {
    let tails = [
        "RETURN DISTINCT h AS k",
        // `1` and `1.0` are one key; nulls are one key.
        "RETURN DISTINCT CASE h % 5 WHEN 0 THEN null WHEN 1 THEN toFloat(h % 60000) \
         WHEN 2 THEN toString(h % 40000) ELSE h % 60000 END AS v",
        "WITH DISTINCT h % 50000 AS a, x % 3 AS b RETURN a, b",
        "WITH DISTINCT toString(h % 30000) AS s, x % 2 AS p, v RETURN s, p, v",
    ];
    let qs: Vec<String> = tails.iter().map(|t| format!("{ROWS}{t}")).collect();
    same_when_spilled("distinct", &qs, as_set);
}

#[test]
fn a_sort_key_error_surfaces_when_the_sort_spills() {
    let dir = std::env::temp_dir().join(format!("arbor-spill-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let q = format!("{ROWS}RETURN x ORDER BY 10 / (x - 110000)");
    let mut g = MemGraph::new();
    let free = Arc::new(MemoryPool::default());
    let want = rows_in(&free, &mut g, &q).expect_err("division by zero");
    g.scratch_dir = Some(dir.clone());
    let tight = Arc::new(MemoryPool::new(3 << 20, 0));
    let got = rows_in(&tight, &mut g, &q).expect_err("division by zero");
    assert!(g.scratch_files.get() > 0, "spilled before the error");
    assert_eq!((got.status, got.message), (want.status, want.message));
    let _ = std::fs::remove_dir_all(&dir);
}
