"""Query memory limits over Bolt (issue 20): the issue's queries that took the server past 6 GB
fail with Neo4j's codes while the server's resident memory stays under its limits, and the same
connection keeps working. The server runs with a 256 MiB pool and a 64 MiB transaction limit."""
import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import ClientError, TransientError

POOL_MIB = 256
TX_MIB = 64


def hwm_mib(pid):
    """The server's peak resident memory so far."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def limited(tmp_path_factory, servers, port_factory):
    start, stop = servers
    port = port_factory()
    proc = start(tmp_path_factory.mktemp("mem-data"), port, "--memory-pool-max", f"{POOL_MIB}m",
                 "--transaction-memory-max", f"{TX_MIB}m")
    with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
        yield d, proc
    stop(proc)


def fails_with(driver, query, code):
    with driver.session() as s:
        with pytest.raises((ClientError, TransientError)) as e:
            s.run(query).consume()
    assert e.value.code == code, e.value
    return e.value


HUGE = [
    "UNWIND range(1, 100000000) AS x WITH collect(x) AS c RETURN size(c)",
    "UNWIND range(1, 10000) AS a UNWIND range(1, 10000) AS b WITH collect([a, b]) AS c RETURN size(c)",
    # (A full sort spills to scratch files and answers: see test_a_sort_past_the_pool_spills.)
    "UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b RETURN count(DISTINCT [a, b])",
    "RETURN size(reduce(s = 'ab', i IN range(1, 40) | s + s))",
]


@pytest.mark.parametrize("query", HUGE)
def test_a_huge_intermediate_result_fails_with_the_transaction_code(limited, query):
    driver, proc = limited
    e = fails_with(driver, query, "Neo.ClientError.General.TransactionOutOfMemoryError")
    assert "db.memory.transaction.max threshold reached" in e.message
    # Under the limits plus the server's own memory; nothing was killed.
    assert hwm_mib(proc.pid) < POOL_MIB + 200, hwm_mib(proc.pid)
    assert proc.poll() is None
    with driver.session() as s:
        assert s.run("RETURN 1 AS one").single()["one"] == 1


def test_order_by_with_a_limit_over_the_same_rows_fits(limited):
    """The sort that fails above, with a LIMIT: a Top holds only the rows it returns."""
    driver, proc = limited
    q = "UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b RETURN a, b ORDER BY a * b DESC, a LIMIT 2"
    with driver.session() as s:
        assert [r.values() for r in s.run(q)] == [[3000, 3000], [2999, 3000]]
    assert hwm_mib(proc.pid) < POOL_MIB + 200, hwm_mib(proc.pid)


def test_a_union_of_20000_branches_is_bounded(limited):
    driver, proc = limited
    query = " UNION ".join(f"RETURN {i} AS x" for i in range(20000))
    with driver.session() as s:
        try:
            n = len(list(s.run(query)))
            assert n == 20000
        except (ClientError, TransientError) as e:
            assert e.code == "Neo.ClientError.General.TransactionOutOfMemoryError", e
    assert hwm_mib(proc.pid) < POOL_MIB + 200, hwm_mib(proc.pid)
    assert proc.poll() is None


def test_explicit_transaction_metadata_still_works_and_a_small_query_runs(limited):
    driver, _ = limited
    with driver.session() as s:
        with s.begin_transaction(metadata={"app": "mem"}, timeout=5) as tx:
            assert tx.run("UNWIND range(1, 100000) AS x RETURN count(x) AS n").single()["n"] == 100000
            tx.commit()


def test_the_pool_limit_has_its_own_transient_code(tmp_path, servers, port_factory):
    start, stop = servers
    port = port_factory()
    proc = start(tmp_path / "pool-data", port, "--memory-pool-max", "64m")
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            e = fails_with(d, HUGE[0], "Neo.TransientError.General.MemoryPoolOutOfMemoryError")
            assert "db.memory.transaction.total.max threshold reached" in e.message
            assert hwm_mib(proc.pid) < 64 + 200, hwm_mib(proc.pid)
            with d.session() as s:
                assert s.run("RETURN 2 AS two").single()["two"] == 2
    finally:
        stop(proc)


def test_a_memory_limit_alone_bounds_query_memory_too(tmp_path, servers, port_factory):
    """`--memory-limit` without a pool setting is one budget: a quarter of it (64 MiB of 256 MiB)
    is the query pool, so a query needing far more fails with the pool's code instead of growing
    the server past its limit."""
    start, stop = servers
    port = port_factory()
    proc = start(tmp_path / "data", port, "--memory-limit", "256m")
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            e = fails_with(d, "UNWIND range(1, 20000000) AS x WITH collect(x) AS c RETURN size(c)",
                           "Neo.TransientError.General.MemoryPoolOutOfMemoryError")
            assert "db.memory.transaction.total.max" in e.message, e.message
            assert hwm_mib(proc.pid) < 256 + 200, hwm_mib(proc.pid)
            with d.session() as s:
                assert s.run("RETURN 1 AS one").single()["one"] == 1
    finally:
        stop(proc)


def test_an_aggregation_past_the_pool_spills_and_answers(tmp_path, servers, port_factory):
    """A grouping into 1 M groups under a 32 MiB pool: the table freezes, the rows of further
    groups go to scratch files in the data directory, and the answer is the one in memory; the
    scratch files are unnamed (nothing is left in the directory)."""
    start, stop = servers
    port = port_factory()
    data = tmp_path / "data"
    proc = start(data, port, "--memory-pool-max", "32m")
    q = ("UNWIND range(0, 999) AS a UNWIND range(1, 1000) AS b WITH a * 1000 + b AS k "
         "RETURN k % 1000003 AS g, count(*) AS c, collect(k)[0] AS first ORDER BY c DESC, g LIMIT 3")
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            with d.session() as s:
                rows = [r.values() for r in s.run(q)]
            assert rows == [[1, 1, 1], [2, 1, 2], [3, 1, 3]], rows
            before = set(p.name for p in data.iterdir())
            with d.session() as s:
                total = s.run("UNWIND range(0, 999) AS a UNWIND range(1, 1000) AS b "
                              "WITH (a * 1000 + b) % 500000 AS g, count(*) AS c "
                              "RETURN count(*) AS groups, sum(c) AS rows").single()
            assert (total["groups"], total["rows"]) == (500000, 1000000), total
            assert set(p.name for p in data.iterdir()) == before, "no scratch file left behind"
    finally:
        stop(proc)


def spill_server(tmp_path, servers, port_factory):
    start, _ = servers
    port = port_factory()
    data = tmp_path / "data"
    proc = start(data, port, "--memory-pool-max", "32m")
    return proc, port, data


def test_a_sort_past_the_pool_spills_and_answers(tmp_path, servers, port_factory):
    """ORDER BY without LIMIT over 1.5 M rows under a 32 MiB pool: sorted runs go to unnamed
    scratch files and are merged; the rows come in the order of a stable sort (ties in input
    order) and nothing is left in the data directory."""
    _, stop = servers
    proc, port, data = spill_server(tmp_path, servers, port_factory)
    q = ("UNWIND range(1, 1500) AS a UNWIND range(1, 1000) AS b "
         "RETURN a, b ORDER BY (a * 7919 + b * 31) % 1000 DESC SKIP 1499980")
    rows = [(a, b) for a in range(1, 1501) for b in range(1, 1001)]
    rows.sort(key=lambda r: -((r[0] * 7919 + r[1] * 31) % 1000))
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            before = set(p.name for p in data.iterdir())
            with d.session() as s:
                got = [tuple(r.values()) for r in s.run(q)]
            assert got == rows[1499980:], got
            assert set(p.name for p in data.iterdir()) == before, "no scratch file left behind"
    finally:
        stop(proc)


def test_a_distinct_past_the_pool_spills_and_answers(tmp_path, servers, port_factory):
    """WITH DISTINCT over 700,001 string keys under a 32 MiB pool: the set freezes, rows of new
    keys go to scratch files by hash and are deduplicated per file; each key comes out once."""
    _, stop = servers
    proc, port, data = spill_server(tmp_path, servers, port_factory)
    q = ("UNWIND range(0, 999) AS a UNWIND range(1, 1000) AS b "
         "WITH DISTINCT toString((a * 1000 + b) % 700001) AS k "
         "RETURN count(*) AS n, sum(toInteger(k)) AS s")
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            before = set(p.name for p in data.iterdir())
            with d.session() as s:
                r = s.run(q).single()
            assert (r["n"], r["s"]) == (700001, 700000 * 700001 // 2), r
            assert set(p.name for p in data.iterdir()) == before, "no scratch file left behind"
    finally:
        stop(proc)
