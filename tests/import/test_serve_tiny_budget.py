"""A store served under the smallest page-cache budget (`--memory-limit` of 16 pages, 64 KiB) over a
graph more than 10x larger answers every query as the same store served with the default budget
(issue 19: "a tiny budget over a graph >= 10x larger"): index seeks, label scans, expansions in both
directions, variable-length paths, aggregations and property reads all go through the buffer pool
with constant eviction. A budget below the minimum is refused at start, naming the minimum."""
import os
import subprocess
import time
import urllib.request

from neo4j import GraphDatabase
from test_import import BIN, free_port, stop
from test_import_budget import NODES, RELS, make_data

MIN_BYTES = 16 * 4096

QUERIES = [
    "MATCH (n) RETURN count(n) AS c",
    "MATCH (:Admin) RETURN count(*) AS c",
    "MATCH (p:Person) WHERE p.id IN [0, 3, 17, 20000, 39999] "
    "RETURN p.id AS id, p.name AS n, p.age AS a, COUNT { (p)-->() } AS o, COUNT { (p)<--() } AS i ORDER BY id",
    "MATCH (p:Person {id: 3})-[r:KNOWS]->(o) RETURN o.id AS o, r.w AS w ORDER BY o, w",
    "MATCH (p:Person {id: 3})<-[r]-(o) RETURN count(*) AS c, sum(o.id) AS s, sum(r.w) AS w",
    "MATCH (p:Person {id: 12345})-[*1..2]-(o) RETURN count(*) AS c, count(DISTINCT o) AS d",
    "MATCH (a:Person)-[:LIKES]->(b)-[:KNOWS]->(c) WHERE a.id < 300 RETURN count(*) AS c, sum(c.age) AS s",
    "MATCH (p:Person)-[r]->() RETURN p.age AS age, count(r) AS c, sum(r.w) AS w ORDER BY c DESC, age LIMIT 5",
    "MATCH (p:Person) WHERE p.name = 'name-5' RETURN count(p) AS c, min(p.id) AS lo, max(p.id) AS hi",
    "MATCH ()-[r:LIKES]->() RETURN count(r) AS c, sum(r.w) AS w",
]


def serve(data, *extra, http="off"):
    port = free_port()
    proc = subprocess.Popen([BIN, "serve", "--data", str(data), "--listen", f"127.0.0.1:{port}",
                             "--http-listen", http, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
                d.verify_connectivity()
                return proc, port
        except Exception:
            if proc.poll() is not None:
                raise RuntimeError("server exited: " + proc.stderr.read().decode(errors="replace"))
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def page_cache_misses(http):
    """The server's `arbor_page_cache_misses_total` (its /metrics)."""
    with urllib.request.urlopen(f"http://{http}/metrics", timeout=30) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("arbor_page_cache_misses_total "):
                return int(float(line.split()[1]))
    raise AssertionError("no page cache metrics")


def answers(db, *extra):
    """The answers to QUERIES of `db` served with `extra` flags, and the page-cache misses they took."""
    http = f"127.0.0.1:{free_port()}"
    proc, port = serve(db, *extra, http=http)
    try:
        before = page_cache_misses(http)
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as drv:
            got = [[r.data() for r in drv.execute_query(q)[0]] for q in QUERIES]
        return got, page_cache_misses(http) - before
    finally:
        stop(proc)


def store_bytes(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)


def test_the_smallest_budget_answers_as_the_default_one(tmp_path):
    make_data(tmp_path)
    db = tmp_path / "db"
    r = subprocess.run([BIN, "import", "--data", str(db), "--nodes=people.csv", "--relationships=knows.csv",
                        "--id-type=integer"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    proc, port = serve(db)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as drv:
            drv.execute_query("CREATE INDEX FOR (p:Person) ON (p.id)")
            drv.execute_query("CREATE INDEX FOR (p:Person) ON (p.name)")
    finally:
        stop(proc)  # the checkpoint at close writes the indexes into the segment
    assert store_bytes(db) >= 10 * MIN_BYTES, store_bytes(db)
    default, _ = answers(db)
    tiny, misses = answers(db, "--memory-limit", str(MIN_BYTES))
    # 16 frames: the queries re-read evicted pages over and over.
    assert misses > 100 * 16, misses
    assert default[0] == [{"c": NODES}] and default[-1][0]["c"] < RELS
    assert default[5][0]["c"] > 100, default[5]  # the 2-hop walk really reads many pages
    for q, a, b in zip(QUERIES, default, tiny):
        assert a == b, f"{q}\n default: {a}\n 64 KiB: {b}"


def test_a_budget_below_the_minimum_is_refused_naming_it(tmp_path):
    r = subprocess.run([BIN, "serve", "--data", str(tmp_path / "d"), "--listen", f"127.0.0.1:{free_port()}",
                        "--http-listen", "off", "--memory-limit", str(MIN_BYTES - 4096)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert str(MIN_BYTES) in r.stderr + r.stdout, r.stderr + r.stdout
