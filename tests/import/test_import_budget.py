"""`arbor import` with a tiny `--max-off-heap-memory` (every relationship spilled to sorted runs and
merged) against the same import with the default budget (one in-memory pass): the peak resident
memory of the tiny-budget import stays bounded (`getrusage` of a wrapper process whose only child is
the import, with generous slack for the binary's fixed overhead), and both stores answer the same
queries the same way (`arbor serve` + the official driver)."""
import os
import random
import subprocess
import sys

from test_import import BIN, serve, stop
from neo4j import GraphDatabase

NODES = 40_000
RELS = 400_000
# The binary's fixed overhead (allocator, reader/parser pipeline buffers, threads: ~45 MiB here)
# plus this graph's base (~15 bytes per relationship), with slack for other machines: a guard
# against buffers sized from anything but the budget (the default budget is 90 % of the
# available memory), not a measurement.
PEAK_LIMIT_MIB = 128

MEASURE = ("import resource, subprocess, sys\n"
           "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
           "sys.stdout.write(r.stdout + r.stderr)\n"
           "print('PEAK_KIB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
           "sys.exit(r.returncode)\n")


def make_data(d):
    rnd = random.Random(7)
    with open(d / "people.csv", "w") as f:
        f.write("id:ID(P),name,age:int,:LABEL\n")
        for i in range(NODES):
            f.write(f"{i},name-{i % 997},{i % 90},{'Person;Admin' if i % 100 == 0 else 'Person'}\n")
    with open(d / "knows.csv", "w") as f:
        f.write(":START_ID(P),:END_ID(P),:TYPE,w:int\n")
        for i in range(RELS):
            # A hub (node 3) and random ends, in no particular order.
            s = 3 if i % 10 == 0 else rnd.randrange(NODES)
            f.write(f"{s},{rnd.randrange(NODES)},{'KNOWS' if i % 3 else 'LIKES'},{i % 1000}\n")


def run_import(d, name, extra):
    args = [sys.executable, "-c", MEASURE, BIN, "import", "--data", str(d / name),
            "--nodes=people.csv", "--relationships=knows.csv", "--id-type=integer",
            "--progress=plain", *extra]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=d)
    assert r.returncode == 0, r.stdout + r.stderr
    peak = int(r.stdout.rsplit("PEAK_KIB", 1)[1]) // 1024
    return r.stdout, peak


QUERIES = [
    "MATCH (n) RETURN count(n) AS c",
    "MATCH (:Admin) RETURN count(*) AS c",
    "MATCH ()-[r:KNOWS]->() RETURN count(r) AS c, sum(r.w) AS w",
    "MATCH ()-[r:LIKES]->() RETURN count(r) AS c, sum(r.w) AS w",
    "MATCH (p:Person {id: 3})-[r]->(o) RETURN count(*) AS c, sum(o.age) AS a, sum(r.w) AS w",
    "MATCH (p:Person {id: 3})<-[r]-(o) RETURN count(*) AS c, sum(o.id) AS i",
    "MATCH (a)-[:LIKES]->(b)-[:KNOWS]->(c) WHERE a.id < 50 RETURN count(*) AS c, sum(c.age) AS s",
    "MATCH (p:Person) WHERE p.id IN [0, 17, 39999] "
    "RETURN p.id AS id, p.name AS n, p.age AS a, COUNT { (p)--() } AS d ORDER BY id",
    "MATCH ()-[r]->() WITH r ORDER BY elementId(r) LIMIT 5 "
    "RETURN [x IN collect(r) | [startNode(x).id, endNode(x).id, type(x), x.w]] AS l",
]


def answers(db):
    proc, port = serve(db)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as drv:
            return [[r.data() for r in drv.execute_query(q)[0]] for q in QUERIES]
    finally:
        stop(proc)


def test_a_tiny_budget_stays_bounded_and_answers_as_in_memory(tmp_path):
    make_data(tmp_path)
    out, peak = run_import(tmp_path, "tiny", ["--max-off-heap-memory", "1m"])
    assert "IMPORT DONE" in out and f"  {RELS} relationships" in out, out
    runs = int(out.split("relationships ordered by start node, ")[1].split(" sorted run")[0])
    assert runs >= 4, out  # really spilled
    assert peak <= PEAK_LIMIT_MIB, f"peak {peak} MiB with a 1m budget:\n{out}"
    out_mem, _ = run_import(tmp_path, "memory", [])
    assert "1 sorted run(s) merged" in out_mem, out_mem
    tiny, memory = answers(tmp_path / "tiny"), answers(tmp_path / "memory")
    assert tiny[0] == [{"c": NODES}] and tiny[2][0]["c"] + tiny[3][0]["c"] == RELS
    assert tiny == memory
    for name in ["tiny", "memory"]:
        r = subprocess.run([BIN, "check", "--data", str(tmp_path / name)], capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0 and "OK: no problems found" in r.stdout, r.stdout + r.stderr
    assert os.path.getsize(tmp_path / "knows.csv") > 1_000_000
