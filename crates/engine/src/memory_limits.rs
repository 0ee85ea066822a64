//! The database's query memory limits: Neo4j's `db.memory.transaction.total.max` (the pool all
//! transactions share) and `db.memory.transaction.max` (one transaction), their defaults, and
//! the accounting allocator the `arbor` binary installs ([`TrackingAlloc`], from
//! `arbor_exec::memory`, where the accounting is described).
//!
//! The default pool is 70 % of the machine's memory (or of the cgroup's limit when lower) minus
//! what the store holds in memory when it opens, at least [`MIN_POOL`]; a transaction may use
//! the whole pool unless `db.memory.transaction.max` says less, as in Neo4j. With an explicit
//! memory limit (`--memory-limit`) and no pool setting, the limit is the one budget: a quarter
//! of it is the pool and the page cache gets the rest ([`split_limit`]).

pub use arbor_exec::memory::{
    format_bytes, parse_size, MemoryPool, TrackingAlloc, TxMemory, POOL_SETTING, TX_SETTING,
};

/// Sets what the store calls when it freed memory while writes are quiet (after a load or a
/// delete); the `arbor` binary makes its allocator return free pages to the OS. The first call
/// wins.
pub fn set_memory_release_hook(hook: fn()) {
    arbor_storage::set_memory_release_hook(hook);
}

/// The smallest default pool (a store larger than the budget still gets this much to query).
pub const MIN_POOL: u64 = 64 << 20;

/// The share of the machine's memory the store and the pool may use together by default.
const BUDGET_PERCENT: u64 = 70;

/// The share of an explicit memory limit (`--memory-limit`) that goes to query memory when the
/// pool is not set on its own: the page cache gets the rest, so the two together keep the one
/// budget.
pub const QUERY_SHARE_DIVISOR: u64 = 4;
/// Below this memory limit the page cache keeps the whole limit and the pool is [`MIN_POOL`]
/// on top (a quarter would be too small to run a query; such limits are for tests).
pub const SPLIT_FROM: u64 = 256 << 20;

/// How an explicit memory limit is split when the query pool is not configured on its own:
/// `(page cache, query pool)`.
pub fn split_limit(limit: u64) -> (u64, u64) {
    if limit < SPLIT_FROM {
        return (limit, MIN_POOL);
    }
    let pool = limit / QUERY_SHARE_DIVISOR;
    (limit - pool, pool)
}

/// The default pool for a machine with `ram` bytes and a store holding `store` bytes.
pub fn default_pool(ram: u64, store: u64) -> u64 {
    (ram / 100 * BUDGET_PERCENT).saturating_sub(store).max(MIN_POOL)
}

/// The memory this process may use: the machine's (`MemTotal`), or its cgroup's limit when
/// that is lower. `None` where neither can be read.
pub fn physical_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let total = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())?
        * 1024;
    let cgroup = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .find_map(|s| s.trim().parse::<u64>().ok());
    Some(cgroup.map_or(total, |c| c.min(total)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Database, PropertyMap, Status, TxConfig, Value};

    #[test]
    fn an_explicit_limit_is_split_between_page_cache_and_queries() {
        let mib = 1u64 << 20;
        assert_eq!(split_limit(2048 * mib), (1536 * mib, 512 * mib));
        assert_eq!(split_limit(256 * mib), (192 * mib, 64 * mib));
        assert_eq!(split_limit(64 * 1024), (64 * 1024, MIN_POOL), "tiny limits keep the cache");
        for l in [SPLIT_FROM, 3 * SPLIT_FROM + 7, 1 << 40] {
            let (cache, pool) = split_limit(l);
            assert_eq!(cache + pool, l);
        }
    }

    #[test]
    fn the_default_pool_leaves_room_for_the_store() {
        let gib = 1u64 << 30;
        assert_eq!(default_pool(100 * gib, 10 * gib), 60 * gib);
        assert_eq!(default_pool(gib, 2 * gib), MIN_POOL, "a store over budget still gets a pool");
        assert!(physical_memory().is_some_and(|m| m > MIN_POOL));
    }

    /// Runs `q` to the end; the rows as Cypher literals.
    fn run_all(s: &mut crate::Session, q: &str) -> crate::Result<Vec<String>> {
        s.run(q, PropertyMap::new(), TxConfig::default())?;
        let mut rows = Vec::new();
        s.pull(None, -1, &mut |r: Vec<arbor_model::ResultValue>| {
            let r: Vec<Value> = r.into_iter().map(Value::from).collect();
            rows.push(r.iter().map(arbor_model::to_cypher_literal).collect::<Vec<_>>().join(" | "));
            Ok(())
        })?;
        Ok(rows)
    }

    /// Goal: a query over a session's limit fails with Neo4j's code and the session (and the
    /// pool) is usable at once. Method: the issue's `collect` of a large range and a cartesian
    /// product, under a 4 MiB transaction limit and then a 4 MiB pool.
    #[test]
    fn over_the_limit_a_query_fails_with_the_code_and_the_session_goes_on() {
        let db = Database::in_memory();
        db.set_memory_limits(0, 4 << 20);
        let mut s = db.session();
        let q = "UNWIND range(1, 1000000) AS x WITH collect(x) AS c RETURN size(c)";
        let e = run_all(&mut s, q).unwrap_err();
        assert_eq!(e.status, Status::TransactionOutOfMemory, "{e}");
        assert_eq!(e.status.code(), "Neo.ClientError.General.TransactionOutOfMemoryError");
        assert!(e.message.contains("db.memory.transaction.max threshold reached"), "{e}");
        assert_eq!(db.memory_pool().used(), 0, "the failed transaction gave its memory back");
        assert_eq!(run_all(&mut s, "RETURN 1").unwrap(), ["1"]);
        run_all(&mut s, "UNWIND range(1, 300) AS i CREATE (:MemN {i: i})").unwrap();
        let cart = "MATCH (a:MemN), (b:MemN) WITH collect([a, b]) AS c RETURN size(c)";
        assert_eq!(run_all(&mut s, cart).unwrap_err().status, Status::TransactionOutOfMemory);
        // An explicit transaction fails as a whole and the next one starts clean.
        s.begin(TxConfig::default()).unwrap();
        assert!(run_all(&mut s, q).is_err());
        assert!(s.commit().is_err());
        db.set_memory_limits(4 << 20, 0);
        let e = run_all(&mut s, q).unwrap_err();
        assert_eq!(e.status, Status::MemoryExhausted, "{e}");
        assert!(e.message.contains("db.memory.transaction.total.max threshold reached"), "{e}");
        db.set_memory_limits(0, 0);
        let q = "UNWIND range(1, 100000) AS x WITH collect(x) AS c RETURN size(c)";
        assert_eq!(run_all(&mut s, q).unwrap(), ["100000"]);
        assert!(db.memory_pool().peak() >= 100000 * 16, "the collect was accounted");
    }
}
