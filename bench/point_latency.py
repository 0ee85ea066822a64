#!/usr/bin/env python3
"""Single-client latency through the official Python driver: `RETURN 1` and a point read by id.

Starts Arbor (and, with --neo4j, the Neo4j 5.26 anchor from ../shared/anchors/neo4j) on free
loopback ports, loads N users `(:User {id, name, age})` with an index on :User(id), then times
each query QUERIES times after WARMUP untimed runs (session.run + consume of all records).
Writes JSON (--json) and prints a markdown table with p50/p90/p99/mean and the ratio.

usage: python3 bench/point_latency.py [--users 10000] [--queries 5000] [--warmup 500]
                                      [--neo4j] [--json bench/out/point_latency.json]
"""
import argparse
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

from neo4j import GraphDatabase

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARBOR = os.environ.get("ARBOR_BIN", os.path.join(ROOT, "target/release/arbor"))
ANCHOR = os.path.join(ROOT, "../shared/anchors/neo4j/neo4j-anchor")
QUERIES = {
    "return_1": ("RETURN 1 AS x", lambda rng, n: {}),
    "point_read": ("MATCH (n:User {id: $id}) RETURN n", lambda rng, n: {"id": rng.randint(1, n)}),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited early")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def start_arbor(tmp):
    port = free_port()
    proc = subprocess.Popen([ARBOR, "serve", "--data", os.path.join(tmp, "arbor"),
                             "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, proc)
    return proc, port


def start_neo4j(tmp):
    port = free_port()
    log = open(os.path.join(tmp, "neo4j.log"), "w")
    proc = subprocess.Popen([ANCHOR, "serve", "--port", str(port), "--data", os.path.join(tmp, "neo4j")],
                            stdout=log, stderr=subprocess.STDOUT)
    wait_port(port, proc, timeout=300)
    return proc, port


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def pct(xs, p):
    return xs[max(0, min(len(xs) - 1, math.ceil(p * len(xs)) - 1))]


def measure(port, users, queries, warmup):
    out = {}
    with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as driver:
        with driver.session(database="neo4j") as s:
            s.run("CREATE INDEX user_id IF NOT EXISTS FOR (u:User) ON (u.id)").consume()
            for lo in range(1, users + 1, 5000):
                s.run("UNWIND range($lo, $hi) AS i CREATE (:User {id: i, name: 'user' + toString(i), age: i % 90})",
                      lo=lo, hi=min(users, lo + 4999)).consume()
            for name, (text, params) in QUERIES.items():
                rng = random.Random(42)
                for _ in range(warmup):
                    list(s.run(text, **params(rng, users)))
                times = []
                for _ in range(queries):
                    p = params(rng, users)
                    t0 = time.perf_counter()
                    rows = list(s.run(text, **p))
                    times.append((time.perf_counter() - t0) * 1000)
                    if name == "point_read":
                        assert len(rows) == 1 and rows[0]["n"]["id"] == p["id"], rows
                times.sort()
                out[name] = {"runs": queries, "p50_ms": pct(times, 0.5), "p90_ms": pct(times, 0.9),
                             "p99_ms": pct(times, 0.99), "mean_ms": sum(times) / len(times),
                             "qps_single_client": len(times) / (sum(times) / 1000)}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--neo4j", action="store_true", help="also measure the Neo4j 5.26 anchor")
    ap.add_argument("--json")
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        engines = [("arbor", start_arbor)] + ([("neo4j", start_neo4j)] if args.neo4j else [])
        for name, starter in engines:
            proc, port = starter(tmp)
            try:
                results[name] = measure(port, args.users, args.queries, args.warmup)
                results[name]["peak_rss_mib"] = (rss_kib(proc.pid) or 0) / 1024
            finally:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
    print("| query | engine | p50 ms | p90 ms | p99 ms | mean ms | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for q in QUERIES:
        for name in results:
            r = results[name][q]
            print(f"| {q} | {name} | {r['p50_ms']:.3f} | {r['p90_ms']:.3f} | {r['p99_ms']:.3f} | "
                  f"{r['mean_ms']:.3f} | {results[name]['peak_rss_mib']:.0f} |")
        if "neo4j" in results:
            ratio = results["neo4j"][q]["p50_ms"] / results["arbor"][q]["p50_ms"]
            print(f"| {q} | ratio (Neo4j p50 / Arbor p50) | {ratio:.2f}x | | | | |")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"users": args.users, "queries": args.queries, "results": results}, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
