#!/usr/bin/env python3
"""Vector search over Bolt, Arbor and Neo4j 5.26 side by side (issue 18, vector targets).

For each target: loads N deterministic vectors as `(:VEC_Bench {id, e})` nodes (UNWIND batches),
creates a vector index on them and times it until ONLINE (build vectors/s), then runs Q
single-client `db.index.vector.queryNodes(.., k, q)` calls and reports p50/p99 latency and QPS,
recall@k against the exact answer (the same server's `ORDER BY vector.similarity.*` over all
nodes) and, for an Arbor it started itself, the server's RSS growth over the index build (after
the load, before `CREATE VECTOR INDEX`, to ONLINE) against the raw vector bytes, and the
server's CPU time (user + system, from /proc: stable on a loaded machine, unlike latencies)
per vector built and per query, and per `RETURN size($q)` with the same vector parameter
(`baseline_cpu_ms`: Bolt, parameter decoding and the transaction without the index). With
`--index-first` the index exists before the load, so the "build" is the load itself: vectors
linked at commit.

    python3 tests/vector/bolt_bench.py --arbor-bin target/release/arbor [--neo4j bolt://127.0.0.1:17687]
        [--n 20000] [--dims 128] [--kind random|clustered] [--queries 200] [--k 10]
        [--quantization true|false] [--index-first] [--label VEC_Bench]
        [--fetch-k 50,100,200,400] [--neo4j-pid PID]

`--fetch-k` repeats the queries asking the index for more candidates and keeping the best k:
Neo4j's `queryNodes` searches with a beam of its k, so this is how its recall is matched to
Arbor's for a same-recall comparison. `--neo4j-pid` adds the Neo4j server's CPU per query.

The last line printed per target starts with `SUMMARY` (one line for the lead to compare
runs). Only the label (default `VEC_Bench`) and the index `<label>_idx` are created on the
Neo4j side, and they are dropped at the end. Needs the `neo4j` Python driver. Not part of CI
(minutes of load); the numbers are in BENCHMARKS.md, "Vector search: recall, latency, build
rate, memory".
"""
import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import neo4j



def vectors(n, dims, kind, seed):
    """`n` vectors (uniform in [-1, 1), or 100 Gaussian clusters) and 1 extra seed for queries."""
    rng = random.Random(seed)
    if kind == "random":
        return [[rng.uniform(-1, 1) for _ in range(dims)] for _ in range(n)]
    centres = [[rng.gauss(0, 1) for _ in range(dims)] for _ in range(100)]
    return [[c + rng.gauss(0, 0.35) for c in centres[rng.randrange(100)]] for _ in range(n)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    """User + system CPU seconds of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def run_target(name, uri, args, docs, queries, pid=None):
    """Loads, indexes and queries one server; `pid` (the server's process) adds CPU and RSS."""
    driver = neo4j.GraphDatabase.driver(uri, auth=("neo4j", "password"))
    run = lambda q, **p: driver.execute_query(q, p, database_="neo4j").records
    label, index = args.label, args.label.lower() + "_idx"

    def wipe():
        run(f"DROP INDEX {index} IF EXISTS")
        with driver.session(database="neo4j") as s:  # auto-commit: IN TRANSACTIONS needs it
            s.run(f"MATCH (n:{label}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS").consume()

    def create_index():
        run(f"CREATE VECTOR INDEX {index} FOR (n:{label}) ON n.e OPTIONS {{indexConfig: "
            f"{{`vector.dimensions`: {args.dims}, `vector.similarity_function`: '{sim}', "
            f"`vector.quantization.enabled`: {args.quantization}}}}}")
        run("CALL db.awaitIndexes(3600)")

    sim = "euclidean" if args.kind == "random" else "cosine"
    wipe()
    rss0 = rss_kib(pid) if pid else 0
    cpu0 = cpu_s(pid) if pid else 0
    if args.index_first:
        create_index()
    t0 = time.time()
    for i in range(0, len(docs), 2000):
        rows = [{"id": i + j, "e": v} for j, v in enumerate(docs[i:i + 2000])]
        run(f"UNWIND $rows AS r CREATE (:{label} {{id: r.id, e: r.e}})", rows=rows)
    load_s = time.time() - t0
    rss1, cpu1 = (rss_kib(pid), cpu_s(pid)) if pid else (0, 0)
    t0 = time.time()
    if not args.index_first:
        create_index()
    build_s = time.time() - t0 if not args.index_first else load_s
    rss2, cpu2 = (rss_kib(pid), cpu_s(pid)) if pid else (0, 0)
    q = f"CALL db.index.vector.queryNodes('{index}', $k, $q) YIELD node, score RETURN node.id AS id"
    exact = (f"MATCH (n:{label}) RETURN n.id AS id ORDER BY vector.similarity.{sim}(n.e, $q) DESC "
             f"LIMIT $k")
    sweep = []
    with driver.session(database="neo4j") as s:
        truths = [{r["id"] for r in s.run(exact, k=args.k, q=v)} for v in queries]
        # Each candidate count asks the index for that many neighbours and keeps the best k
        # (Neo4j's `queryNodes` searches with a beam of its k, so a larger k is how its users buy
        # recall); the first entry is the plain k the headline numbers use.
        for fetch in [args.k] + [f for f in args.fetch_k if f != args.k]:
            for v in queries[:10]:  # warm-up
                list(s.run(q, k=fetch, q=v))
            cpu3 = cpu_s(pid) if pid else 0
            lat, hit = [], 0
            for v, truth in zip(queries, truths):
                t = time.perf_counter()
                ids = [r["id"] for r in s.run(q, k=fetch, q=v)][:args.k]
                lat.append((time.perf_counter() - t) * 1000)
                hit += len(truth & set(ids))
            cpu4 = cpu_s(pid) if pid else 0
            point = {"fetch_k": fetch, "p50_ms": round(pct(lat, 50), 3),
                     "p99_ms": round(pct(lat, 99), 3), "qps": round(len(lat) / (sum(lat) / 1000)),
                     f"recall@{args.k}": round(hit / (args.k * len(queries)), 4)}
            if pid:
                point["query_cpu_ms"] = round((cpu4 - cpu3) * 1000 / len(queries), 3)
            sweep.append(point)
        # The same round trip without the index (Bolt, the vector parameter, a transaction).
        cpu4 = cpu_s(pid) if pid else 0
        for v in queries:
            list(s.run("RETURN size($q) AS id, $k AS k", k=args.k, q=v))
        cpu5 = cpu_s(pid) if pid else 0
    wipe()
    driver.close()
    raw_mib = len(docs) * args.dims * 4 / 2**20
    out = {
        "target": name, "n": len(docs), "dims": args.dims, "kind": args.kind,
        "index_first": args.index_first, "load_s": round(load_s, 1), "build_s": round(build_s, 2),
        "build_vps": round(len(docs) / build_s), **{key: sweep[0][key] for key in sweep[0]
                                                    if key != "fetch_k"},
        "sweep": sweep,
    }
    if pid:
        build_cpu = (cpu2 - cpu0) if args.index_first else (cpu2 - cpu1)
        out["build_cpu_us_per_vector"] = round(build_cpu * 1e6 / len(docs), 1)
        out["baseline_cpu_ms"] = round((cpu5 - cpu4) * 1000 / len(queries), 3)
        out["rss_build_mib"] = round(((rss2 - rss0) if args.index_first else (rss2 - rss1)) / 1024, 1)
        out["rss_total_mib"] = round((rss2 - rss0) / 1024, 1)
        out["raw_vectors_mib"] = round(raw_mib, 1)
    return out


def summary(r, k):
    """One line per target, the fields the lead compares across runs."""
    keys = ["n", "dims", "kind", "build_vps", "p50_ms", "p99_ms", "qps", f"recall@{k}",
            "build_cpu_us_per_vector", "query_cpu_ms", "baseline_cpu_ms", "rss_build_mib",
            "raw_vectors_mib"]
    line = "SUMMARY " + r["target"] + " " + " ".join(f"{key}={r[key]}" for key in keys if key in r)
    for point in r["sweep"][1:]:
        line += "\n  " + " ".join(f"{key}={v}" for key, v in point.items())
    return line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arbor-bin")
    ap.add_argument("--neo4j", help="bolt URI of a running Neo4j 5.26 (shared: VEC_ data only)")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--dims", type=int, default=128)
    ap.add_argument("--kind", choices=["random", "clustered"], default="random")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--quantization", choices=["true", "false"], default="true")
    ap.add_argument("--index-first", action="store_true",
                    help="create the index before loading (vectors linked at commit)")
    ap.add_argument("--fetch-k", default="",
                    type=lambda v: [int(x) for x in v.split(",") if x],
                    help="also query with these candidate counts (comma list), keeping the best k: "
                         "recall against QPS, since Neo4j's beam is its k")
    ap.add_argument("--neo4j-pid", type=int,
                    help="the Neo4j server's process id, for its CPU per vector and per query")
    ap.add_argument("--label", default="VEC_Bench",
                    help="label of the bench nodes on both servers (the index is <label>_idx)")
    args = ap.parse_args()
    docs = vectors(args.n, args.dims, args.kind, 7)
    queries = vectors(args.queries, args.dims, args.kind, 8)
    print(f"load average: {os.getloadavg()}", file=sys.stderr)
    results = []
    if args.arbor_bin:
        data = tempfile.mkdtemp(prefix="vec-bench-")
        port = free_port()
        proc = subprocess.Popen([args.arbor_bin, "serve", "--data", os.path.join(data, "db"),
                                 "--listen", f"127.0.0.1:{port}", "--durability", "off"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    socket.create_connection(("127.0.0.1", port), 0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)
            results.append(run_target("arbor", f"bolt://127.0.0.1:{port}", args, docs, queries,
                                      proc.pid))
            print(results[-1], flush=True)
        finally:
            proc.terminate()
            proc.wait(30)
            shutil.rmtree(data, ignore_errors=True)
    if args.neo4j:
        results.append(run_target("neo4j", args.neo4j, args, docs, queries, args.neo4j_pid))
    for r in results[1 if args.arbor_bin else 0:]:
        print(r, flush=True)
    print(f"load average: {os.getloadavg()}", file=sys.stderr)
    for r in results:
        print(summary(r, args.k), flush=True)


if __name__ == "__main__":
    main()
