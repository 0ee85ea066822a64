#!/usr/bin/env python3
"""Commits per second with 1, 4 and 12 concurrent writers, durability on (fsync before success).

Each writer is its own process (no GIL between them) with one Bolt session doing auto-commit
`CREATE (:C {w: $w, i: $i})` for --seconds. Arbor runs in its default `sync` mode (group commit);
with --neo4j, the Neo4j 5.26 anchor runs with its defaults (every commit fsynced) on the same
machine in the same invocation. Prints a markdown table, writes JSON with --json.

usage: python3 bench/commit_throughput.py [--writers 1,4,12] [--seconds 10] [--neo4j] [--json FILE]
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from point_latency import rss_kib, start_arbor, start_neo4j  # noqa: E402


def writer(port, w, seconds, start_at, out):
    from neo4j import GraphDatabase
    lat = []
    with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as driver:
        with driver.session(database="neo4j") as s:
            s.run("RETURN 1").consume()
            while time.time() < start_at:
                time.sleep(0.001)
            end = start_at + seconds
            i = 0
            while time.time() < end:
                t0 = time.perf_counter()
                s.run("CREATE (:C {w: $w, i: $i})", w=w, i=i).consume()
                lat.append((time.perf_counter() - t0) * 1000)
                i += 1
    out.put((w, i, lat))


def pct(xs, p):
    return xs[max(0, min(len(xs) - 1, math.ceil(p * len(xs)) - 1))] if xs else 0.0


def measure(port, writers, seconds):
    out = mp.Queue()
    start_at = time.time() + 2.0
    procs = [mp.Process(target=writer, args=(port, w, seconds, start_at, out)) for w in range(writers)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    commits = sum(n for _, n, _ in results)
    lat = sorted(x for _, _, ls in results for x in ls)
    return {"writers": writers, "commits": commits, "commits_per_s": commits / seconds,
            "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", default="1,4,12")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--neo4j", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    counts = [int(x) for x in args.writers.split(",")]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        engines = [("arbor", start_arbor)] + ([("neo4j", start_neo4j)] if args.neo4j else [])
        for name, starter in engines:
            proc, port = starter(tmp)
            try:
                results[name] = [measure(port, n, args.seconds) for n in counts]
                for r in results[name]:
                    r["server_peak_rss_mib"] = (rss_kib(proc.pid) or 0) / 1024
            finally:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except Exception:
                    proc.kill()
    print("| writers | engine | commits/s | p50 ms | p99 ms |")
    print("|---|---|---|---|---|")
    for i, n in enumerate(counts):
        for name in results:
            r = results[name][i]
            print(f"| {n} | {name} | {r['commits_per_s']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} |")
        if "neo4j" in results:
            ratio = results["arbor"][i]["commits_per_s"] / max(results["neo4j"][i]["commits_per_s"], 1e-9)
            print(f"| {n} | ratio (Arbor / Neo4j) | {ratio:.2f}x | | |")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"seconds": args.seconds, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
