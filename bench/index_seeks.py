#!/usr/bin/env python3
"""Index seeks and the count store against scans, through the official Python driver.

Starts Arbor on a free loopback port, loads N nodes `(:P {v, s})` (v in [0, 1000), s a string;
also labelled Q with v made integral) and M relationships `(:P)-[:R {w}]->(:P)`, then times each query QUERIES times after
WARMUP untimed runs, first without indexes (label scan + filter, counting by expansion for the
counts a scan answers) and then with `:P(v)`, `:P(s)`, `()-[:R]-()(w)` and composite `:Q(v, id)` indexes (awaited).
Both runs must return the same rows. Prints a markdown table with p50/mean per query and mode.

usage: python3 bench/index_seeks.py [--nodes 100000] [--queries 200] [--warmup 20]
"""
import argparse
import os
import random
import statistics
import sys
import tempfile
import time

from neo4j import GraphDatabase

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from point_latency import start_arbor  # noqa: E402

QUERIES = [
    ("range v in [x, x+1)", "MATCH (n:P) WHERE $x <= n.v < $x + 1 RETURN count(*) AS c",
     lambda r: {"x": r.uniform(0, 999)}),
    ("v > x (0.1 %)", "MATCH (n:P) WHERE n.v > $x RETURN count(*) AS c",
     lambda r: {"x": 999.0}),
    ("prefix s", "MATCH (n:P) WHERE n.s STARTS WITH $p RETURN count(*) AS c",
     lambda r: {"p": "s%03d" % r.randint(0, 999)}),
    ("IN 10 values", "MATCH (n:P) WHERE n.s IN $l RETURN count(*) AS c",
     lambda r: {"l": ["s%03d%d" % (r.randint(0, 999), r.randint(0, 9)) for _ in range(10)]}),
    ("rel {w: x}", "MATCH (a)-[r:R {w: $w}]->(b) RETURN count(*) AS c",
     lambda r: {"w": r.randint(0, 99999)}),
    ("rel w in [x, x+100)", "MATCH (a)-[r:R]->(b) WHERE $x <= r.w < $x + 100 RETURN count(*) AS c",
     lambda r: {"x": r.randint(0, 99899)}),
    ("rel w IN 10 values", "MATCH (a)-[r:R]-(b) WHERE r.w IN $l RETURN count(*) AS c",
     lambda r: {"l": [r.randint(0, 99999) for _ in range(10)]}),
    ("composite v = x AND id > y", "MATCH (n:Q) WHERE n.v = $x AND n.id > $y RETURN count(*) AS c",
     lambda r: {"x": float(r.randint(0, 999)), "y": r.randint(0, 99999)}),
    ("count (:P)-[:R]->()", "MATCH (:P)-[:R]->() RETURN count(*) AS c", lambda r: {}),
]
# The scan run answers the count with an expansion (the same count, forced past the count store).
PLAIN = {"count (:P)-[:R]->()": "MATCH (:P)-[r:R]->() WHERE r IS NOT NULL RETURN count(*) AS c"}


def timed(session, q, params):
    t = time.perf_counter()
    rows = session.run(q, params).values()
    return time.perf_counter() - t, rows


def run_all(session, n_queries, warmup, plain):
    out = {}
    for name, q, gen in QUERIES:
        if plain:
            q = PLAIN.get(name, q)
        rng = random.Random(7)
        for _ in range(warmup):
            session.run(q, gen(rng)).consume()
        rng = random.Random(11)
        times, results = [], []
        for _ in range(n_queries):
            t, rows = timed(session, q, gen(rng))
            times.append(t * 1000)
            results.append(rows)
        out[name] = (times, results)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=100000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_arbor(tmp)
        try:
            with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as driver:
                with driver.session() as s:
                    # An id index only speeds up loading; the measured queries do not use it.
                    s.run("CREATE INDEX FOR (n:P) ON (n.id)").consume()
                    s.run("UNWIND range(0, $n - 1) AS i "
                          "CREATE (:P {id: i, v: (i * 7919 % $n) * 1000.0 / $n, "
                          "s: 's' + substring(toString(1000 + i % 1000), 1) + toString(i % 10)})",
                          {"n": args.nodes}).consume()
                    s.run("MATCH (a:P) WITH a, (a.id * 31 + 7) % $n AS j MATCH (b:P {id: j}) "
                          "CREATE (a)-[:R {w: a.id}]->(b)", {"n": args.nodes}).consume()
                    # Q: integral v (100 nodes per value) for the composite (v, id) index.
                    s.run("MATCH (n:P) SET n:Q, n.v = floor(n.v)").consume()
                    plain = run_all(s, args.queries, args.warmup, True)
                    s.run("CREATE INDEX FOR (n:P) ON (n.v)").consume()
                    s.run("CREATE INDEX FOR (n:P) ON (n.s)").consume()
                    s.run("CREATE INDEX FOR ()-[r:R]-() ON (r.w)").consume()
                    s.run("CREATE INDEX FOR (n:Q) ON (n.v, n.id)").consume()
                    s.run("CALL db.awaitIndexes(600)").consume()
                    indexed = run_all(s, args.queries, args.warmup, False)
        finally:
            proc.terminate()
            proc.wait()
    print(f"| query ({args.nodes} nodes, {args.nodes} rels) | scan p50 ms | scan mean ms "
          "| indexed p50 ms | indexed mean ms | speed-up (p50) |")
    print("|---|---|---|---|---|---|")
    for name, _, _ in QUERIES:
        (pt, pr), (it, ir) = plain[name], indexed[name]
        if pr != ir:
            sys.exit(f"{name}: results differ between scan and index runs")
        p50s, p50i = statistics.median(pt), statistics.median(it)
        print(f"| {name} | {p50s:.3f} | {statistics.mean(pt):.3f} | {p50i:.3f} | "
              f"{statistics.mean(it):.3f} | {p50s / p50i:.1f}× |")


if __name__ == "__main__":
    main()
