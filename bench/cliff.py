#!/usr/bin/env python3
"""The cliff curve: the same queries with the memory budget at 100 %, 30 % and 10 % of the store, beside Neo4j.

Per server (Arbor `arbor serve --memory-limit`, Neo4j `neo4j-anchor serve --pagecache`) and per budget (a
percentage of that server's own store size on disk), the server is started fresh on the stopped store, then the
same seeded parameter stream of four queries over the B2B graph (`arbor bench gen-b2b` /
`../shared/bench/gen_b2b.py`, imported with `--id-type=integer`, indexes on `:Individual(id)`,
`:Organization(id)` and `:Activity(id)`) runs twice, one client, one query at a time, all rows pulled:

    lookup  MATCH (n:Individual {id: $id}) RETURN n.name
    hop1    MATCH (n:Individual {id: $id})--(m) RETURN m.id            (its Activities and Organizations)
    hop2    MATCH (o:Organization {id: $id})<-[:WORKS_FOR]-(i)<-[:TOUCHED]-(a) RETURN count(*)
    topk    MATCH (a:Activity {id: $id})-[:TOUCHED]->(i)-[:WORKS_FOR]->(o)
            RETURN o.id AS org, count(*) AS c ORDER BY c DESC, org LIMIT 10

Pass 1 after the start is "cold" (the server's own cache is empty; the OS page cache is not dropped: no root),
pass 2 "warm". Reported per query: p50/p99 of the client-side latency (ms) and the server's mean CPU per query
(ms: the server process's user + sys over the query's stream / its length), per pass the server's CPU (user + sys, from
/proc) and peak RSS (VmHWM) after each pass, and for Arbor the page-cache hits and misses of the pass (its
/metrics on the HTTP port, Bolt port + 1). Every answer is reduced to a canonical form (rows sorted
where the query has no ORDER BY) and hashed; answers are compared across passes, budgets and servers, and a
mismatch is printed and makes the exit status 1.

usage:
  python3 bench/cliff.py --arbor target/release/arbor --arbor-store DIR \
      --neo4j-anchor ../shared/anchors/neo4j/neo4j-anchor --neo4j-home DIR \
      --port 17830 [--budgets 100,30,10] [--servers arbor,neo4j] [--queries lookup,hop1,hop2,topk] [--n 200] \
      [--n-topk 20] [--seed 7] [--json F]
  python3 bench/cliff.py ... --prepare      # create the three indexes on each store (once), then stop
"""
import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request

from neo4j import GraphDatabase

N_IND = 1_960_000  # scale 0.01
N_ORG = 2_610_000
N_ACT = 254

QUERIES = {
    "lookup": ("MATCH (n:Individual {id: $id}) RETURN n.name", True),
    "hop1": ("MATCH (n:Individual {id: $id})--(m) RETURN m.id", True),
    "hop2": ("MATCH (o:Organization {id: $id})<-[:WORKS_FOR]-(i)<-[:TOUCHED]-(a) RETURN count(*)", False),
    "topk": ("MATCH (a:Activity {id: $id})-[:TOUCHED]->(i)-[:WORKS_FOR]->(o) "
             "RETURN o.id AS org, count(*) AS c ORDER BY c DESC, org LIMIT 10", False),
}
INDEXES = [("Individual", "id"), ("Organization", "id"), ("Activity", "id")]


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def proc_cpu(pid):
    """User + sys CPU seconds of a process (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def proc_hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def params(n, n_topk, seed):
    rng = random.Random(seed)
    return {
        "lookup": [rng.randrange(N_IND) for _ in range(n)],
        "hop1": [rng.randrange(N_IND) for _ in range(n)],
        "hop2": [rng.randrange(N_ORG) for _ in range(n)],
        "topk": [rng.randrange(N_ACT) for _ in range(n_topk)],
    }


def wait_bolt(uri, proc, log, deadline_s=600):
    t0 = time.time()
    while time.time() - t0 < deadline_s:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited ({proc.returncode}); see {log}")
        try:
            with GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF") as d:
                d.verify_connectivity()
                return time.time() - t0
        except Exception:
            time.sleep(0.5)
    raise RuntimeError(f"server not up after {deadline_s} s; see {log}")


def start(server, args, budget_bytes, log):
    port = args.port
    if server == "arbor":
        cmd = [args.arbor, "serve", "--data", args.arbor_store, "--listen", f"127.0.0.1:{port}",
               "--http-listen", f"127.0.0.1:{port + 1}", "--memory-limit", str(budget_bytes)]
    else:
        cmd = [args.neo4j_anchor, "serve", "--port", str(port), "--data", args.neo4j_home,
               "--heap", args.neo4j_heap, "--pagecache", str(budget_bytes)]
    out = open(log, "w")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    return proc, f"bolt://127.0.0.1:{port}"


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def canon(records, unordered):
    rows = [tuple(r.values()) for r in records]
    if unordered:
        rows.sort(key=repr)
    return hashlib.sha1(repr(rows).encode()).hexdigest()[:16]


def run_pass(driver, stream, answers, pid):
    lat, cpu = {}, {}
    with driver.session() as s:
        for q, (text, unordered) in QUERIES.items():
            ts = []
            cpu0 = proc_cpu(pid)
            for i, p in enumerate(stream[q]):
                t0 = time.perf_counter()
                recs = list(s.run(text, id=p))
                ts.append((time.perf_counter() - t0) * 1000)
                answers.setdefault((q, i), set()).add(canon(recs, unordered))
            lat[q] = ts
            cpu[q] = (proc_cpu(pid) - cpu0) * 1000 / len(ts)
    return lat, cpu


def page_cache(server, port):
    """Arbor's page-cache hit and miss counters (its /metrics), or None."""
    if server != "arbor":
        return None
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port + 1}/metrics", timeout=10) as r:
            text = r.read().decode()
    except OSError:
        return None
    got = {}
    for line in text.splitlines():
        for name in ("hits", "misses"):
            if line.startswith(f"arbor_page_cache_{name}_total "):
                got[name] = int(float(line.split()[1]))
    return got


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def prepare(args):
    for server in args.servers:
        proc, uri = start(server, args, 512 << 20, os.path.join(args.work, f"prepare-{server}.log"))
        try:
            wait_bolt(uri, proc, "prepare log")
            with GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF") as d:
                for label, key in INDEXES:
                    d.execute_query(f"CREATE INDEX IF NOT EXISTS FOR (n:{label}) ON (n.{key})")
                if server == "neo4j":
                    d.execute_query("CALL db.awaitIndexes(600)")
                print(server, "indexes:", [r["name"] for r in d.execute_query("SHOW INDEXES YIELD name").records])
        finally:
            stop(proc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arbor")
    ap.add_argument("--arbor-store")
    ap.add_argument("--neo4j-anchor")
    ap.add_argument("--neo4j-home")
    ap.add_argument("--neo4j-heap", default="1g")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--budgets", default="100,30,10")
    ap.add_argument("--servers", default="arbor,neo4j")
    ap.add_argument("--queries", default=",".join(QUERIES), help="a subset of " + ",".join(QUERIES))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--n-topk", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", default=".")
    ap.add_argument("--json")
    ap.add_argument("--prepare", action="store_true")
    args = ap.parse_args()
    args.servers = args.servers.split(",")
    for q in set(QUERIES) - set(args.queries.split(",")):
        del QUERIES[q]
    if args.prepare:
        prepare(args)
        return 0
    stream = params(args.n, args.n_topk, args.seed)
    answers = {}
    results = []
    for server in args.servers:
        store = args.arbor_store if server == "arbor" else os.path.join(args.neo4j_home, "data/databases/neo4j")
        size = du(store)
        for pc in [int(b) for b in args.budgets.split(",")]:
            budget = size * pc // 100
            log = os.path.join(args.work, f"{server}-{pc}.log")
            proc, uri = start(server, args, budget, log)
            try:
                up = wait_bolt(uri, proc, log)
                with GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF") as d:
                    row = {"server": server, "budget_pct": pc, "budget_bytes": budget, "store_bytes": size,
                           "startup_s": round(up, 2), "passes": {}}
                    for name in ("cold", "warm"):
                        cpu0, pc0 = proc_cpu(proc.pid), page_cache(server, args.port)
                        lat, cpu = run_pass(d, stream, answers, proc.pid)
                        pc1 = page_cache(server, args.port)
                        row["passes"][name] = {
                            "cpu_s": round(proc_cpu(proc.pid) - cpu0, 2),
                            "hwm_mib": round(proc_hwm(proc.pid), 1),
                            "page_cache": pc1 and pc0 and {k: pc1[k] - pc0.get(k, 0) for k in pc1},
                            "queries": {q: {"p50": round(pct(ts, 50), 3), "p99": round(pct(ts, 99), 3),
                                            "cpu_ms": round(cpu[q], 3)}
                                        for q, ts in lat.items()},
                        }
                        print(server, f"{pc}%", f"budget={budget >> 20}MiB", name, json.dumps(row["passes"][name]),
                              flush=True)
                    results.append(row)
            finally:
                stop(proc)
    bad = {k: v for k, v in answers.items() if len(v) != 1}
    for (q, i), hashes in sorted(bad.items())[:20]:
        print(f"MISMATCH {q} #{i} param={stream[q][i]}: {sorted(hashes)}")
    print(f"answers: {len(answers)} compared, {len(bad)} differ")
    print_table(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "mismatches": len(bad), "load": os.getloadavg(),
                       "answers": {f"{q}#{i}": sorted(h) for (q, i), h in sorted(answers.items())}}, f, indent=1)
    return 1 if bad else 0


def print_table(results):
    print("| server | budget | pass | " + " | ".join(f"{q} p50 / p99 (CPU) ms" for q in QUERIES)
          + " | CPU s | peak RSS MiB |")
    print("|---|---|---|" + "---|" * (len(QUERIES) + 2))
    for r in results:
        for name, p in r["passes"].items():
            cells = " | ".join(f"{p['queries'][q]['p50']:.2f} / {p['queries'][q]['p99']:.2f} ({p['queries'][q]['cpu_ms']:.2f})"
                              for q in QUERIES)
            print(f"| {r['server']} | {r['budget_pct']} % ({r['budget_bytes'] >> 20} MiB) | {name} | {cells} | "
                  f"{p['cpu_s']} | {p['hwm_mib']:.0f} |")


if __name__ == "__main__":
    sys.exit(main())
