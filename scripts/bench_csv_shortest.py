#!/usr/bin/env python3
"""LOAD CSV and shortest paths, Arbor beside Neo4j, both reached by Bolt address.

    python3 scripts/bench_csv_shortest.py --arbor bolt://127.0.0.1:PORT \
        --neo4j bolt://127.0.0.1:17687 --size medium \
        --import-dir-arbor DIR --import-dir-neo4j DIR [--pairs 200] [--rows 100]

1. Generates the synthetic Pokec CSVs (`/work/shared/bench/gen_pokec.py`, neo4j-admin header
   names such as `id:long`), copies users.csv and friends.csv into each server's import
   directory (under `csvsp6/`), and deletes them at the end.
2. On each target, one after the other (Arbor first in odd rounds of `--load-rounds`): the
   LOAD CSV a Neo4j user writes, timed statement by statement: the users (`CALL (row) {
   CREATE ... } IN TRANSACTIONS OF 10000 ROWS`), an index on the id (awaited), then the
   friendships (MATCH + MATCH + CREATE per row, in transactions of 10000 rows).
3. Per-row path queries on pairs of random ids (fixed seed), the targets alternating query by
   query (which goes first alternates too): shortestPath over `*1..3` and unbounded,
   allShortestPaths with `[n IN nodes(p) | n.id]`, and the per-row forms over `--rows` source
   rows in one query (`UNWIND $pairs`). Answers are compared; p50 / p99 / total wall per
   query shape, and the CPU time of each server process (`/proc/PID/stat` utime + stime;
   the server's pid is found from its listening port, or given with `--arbor-pid` /
   `--neo4j-pid`).

Data lives under the labels `CSVSP6_User` / `CSVSP6_Friend` and the index `csvsp6_user_id`
only, so the script can share a Neo4j with others; it is deleted after each load round (in
batches), before and after the run.
"""

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from neo4j import GraphDatabase

LABEL, REL, INDEX = "CSVSP6_User", "CSVSP6_Friend", "csvsp6_user_id"
GEN = "/work/shared/bench/gen_pokec.py"
SIZES = {"small": 10000, "medium": 100000}

LOAD_USERS = f"""LOAD CSV WITH HEADERS FROM $base + 'users.csv' AS row
CALL (row) {{
  CREATE (:{LABEL} {{id: toInteger(row.`id:long`),
    completion_percentage: toInteger(row.`completion_percentage:int`),
    gender: row.gender, age: toInteger(row.`age:int`)}})
}} IN TRANSACTIONS OF 10000 ROWS"""
CREATE_INDEX = f"CREATE INDEX {INDEX} IF NOT EXISTS FOR (u:{LABEL}) ON (u.id)"
LOAD_FRIENDS = f"""LOAD CSV WITH HEADERS FROM $base + 'friends.csv' AS row
CALL (row) {{
  MATCH (a:{LABEL} {{id: toInteger(row.`:START_ID(User)`)}})
  MATCH (b:{LABEL} {{id: toInteger(row.`:END_ID(User)`)}})
  CREATE (a)-[:{REL}]->(b)
}} IN TRANSACTIONS OF 10000 ROWS"""

PAIR = f"MATCH (a:{LABEL} {{id: $a}}), (b:{LABEL} {{id: $b}}) "
QUERIES = {
    "shortest *1..3": PAIR + f"MATCH p = shortestPath((a)-[:{REL}*1..3]-(b)) RETURN length(p) AS r",
    "shortest *": PAIR + f"MATCH p = shortestPath((a)-[:{REL}*]-(b)) RETURN length(p) AS r",
    "allShortest * ids": PAIR
    + f"MATCH p = allShortestPaths((a)-[:{REL}*]-(b)) RETURN [n IN nodes(p) | n.id] AS r",
    "rows: shortest *1..3": f"""UNWIND $pairs AS pr
MATCH (a:{LABEL} {{id: pr[0]}}), (b:{LABEL} {{id: pr[1]}})
OPTIONAL MATCH p = shortestPath((a)-[:{REL}*1..3]-(b))
RETURN pr[0] AS x, pr[1] AS y, length(p) AS r""",
    "rows: allShortest *..4 ids": f"""UNWIND $pairs AS pr
MATCH (a:{LABEL} {{id: pr[0]}}), (b:{LABEL} {{id: pr[1]}})
OPTIONAL MATCH p = allShortestPaths((a)-[:{REL}*..4]-(b))
RETURN pr[0] AS x, pr[1] AS y, [n IN nodes(p) | n.id] AS r""",
}


def cpu_seconds(pid):
    """utime + stime of a process (`/proc/PID/stat`: clock ticks, 10 ms, so every measured
    step runs long enough for ticks to add up), in seconds; None without a pid. (The threads'
    own `schedstat` would be finer, but a thread that ends takes its share along.)"""
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def listening_pid(addr):
    """The pid listening on the port of a bolt:// address (from `ss -ltnp`), or None."""
    port = addr.rsplit(":", 1)[1].strip("/")
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        cols = line.split()
        if len(cols) > 3 and cols[3].endswith(":" + port):
            m = re.search(r"pid=(\d+)", line)
            if m:
                return int(m.group(1))
    return None


class Target:
    def __init__(self, name, addr, pid, import_dir):
        self.name, self.pid = name, pid or listening_pid(addr)
        self.driver = GraphDatabase.driver(addr, auth=None)
        self.import_dir = import_dir
        self.base = None

    def find_base(self, dest):
        """The URL prefix under which this server reads `dest` (a folder in its import
        directory): `file:///csvsp6/` as the setting says, or, for a server that does not
        confine file URLs to it (the shared anchor), the absolute path."""
        probe = os.path.join(dest, "probe.csv")
        with open(probe, "w") as f:
            f.write("a\n1\n")
        for base in ("file:///csvsp6/", "file://" + os.path.abspath(dest) + "/"):
            try:
                self.run("LOAD CSV FROM $u AS r RETURN count(*)", u=base + "probe.csv")
                self.base = base
                break
            except Exception:
                continue
        os.remove(probe)
        if self.base is None:
            sys.exit(f"{self.name} cannot read {dest} by a file:/// URL")

    def run(self, query, **params):
        with self.driver.session() as s:
            return [tuple(r.values()) for r in s.run(query, **params)]

    def timed(self, query, **params):
        """(wall seconds, server CPU seconds, rows, client CPU seconds): the client's CPU is
        this Python process's (the driver receiving and decoding the records)."""
        c0, p0, t0 = cpu_seconds(self.pid), time.process_time(), time.perf_counter()
        rows = self.run(query, **params)
        wall, client = time.perf_counter() - t0, time.process_time() - p0
        c1 = cpu_seconds(self.pid)
        return wall, (c1 - c0 if c0 is not None else float("nan")), rows, client

    def wipe(self):
        """Deletes this script's data and index, in batches."""
        self.run(f"DROP INDEX {INDEX} IF EXISTS")
        self.run(
            f"MATCH (n:{LABEL}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 2000 ROWS"
        )


def load(t, n_users):
    t.wipe()
    out = {}
    for step, q in (("users", LOAD_USERS), ("index", CREATE_INDEX), ("friends", LOAD_FRIENDS)):
        wall, cpu, _, _ = t.timed(q, base=t.base)
        if step == "index":
            w2, c2, _, _ = t.timed("CALL db.awaitIndexes(300)")
            wall, cpu = wall + w2, cpu + c2
        out[step] = (wall, cpu)
    got = t.run(f"MATCH (n:{LABEL}) RETURN count(n)")[0][0]
    rels = t.run(f"MATCH (:{LABEL})-[r:{REL}]->() RETURN count(r)")[0][0]
    if got != n_users:
        sys.exit(f"{t.name}: loaded {got} users, expected {n_users}")
    out["rels"] = rels
    return out


def normalise(name, rows):
    """Answers in a comparable form (path lists as sorted sets)."""
    if "allShortest" in name:
        if name.startswith("rows"):
            return sorted((x, y, tuple(r) if r is not None else None) for x, y, r in rows)
        return sorted(tuple(r[0]) for r in rows)
    return sorted(rows, key=repr)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def bench_paths(targets, n_users, args):
    rng = random.Random(args.seed)
    n = max(args.pairs, args.rows * args.row_calls)
    pairs = [(rng.randint(1, n_users), rng.randint(1, n_users)) for _ in range(n)]
    results = {}
    for name, q in QUERIES.items():
        per_row = name.startswith("rows")
        if per_row:
            k = args.rows
            calls = [
                {"pairs": [list(p) for p in pairs[i : i + k]]}
                for i in range(0, min(len(pairs), k * args.row_calls), k)
            ]
        else:
            calls = [{"a": a, "b": b} for a, b in pairs[: args.pairs]]
        for t in targets:  # warm-up: plan caches, JIT
            for c in calls[:3]:
                t.run(q, **c)
        stats = {t.name: {"wall": [], "cpu": 0.0, "client": 0.0, "rows": 0} for t in targets}
        mismatches = 0
        for i, c in enumerate(calls):
            order = targets if i % 2 == 0 else targets[::-1]
            answers = {}
            for t in order:
                wall, cpu, rows, client = t.timed(q, **c)
                stats[t.name]["wall"].append(wall)
                stats[t.name]["cpu"] += cpu
                stats[t.name]["client"] += client
                stats[t.name]["rows"] += len(rows)
                answers[t.name] = normalise(name, rows)
            if len({repr(a) for a in answers.values()}) > 1:
                mismatches += 1
                if mismatches <= 3:
                    print(f"  MISMATCH {name} {c}: {answers}", file=sys.stderr)
        results[name] = (stats, mismatches, len(calls))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arbor", required=True)
    ap.add_argument("--neo4j", required=True)
    ap.add_argument("--size", choices=sorted(SIZES), default="medium")
    ap.add_argument("--import-dir-arbor", required=True)
    ap.add_argument("--import-dir-neo4j", required=True)
    ap.add_argument("--arbor-pid", type=int)
    ap.add_argument("--neo4j-pid", type=int)
    ap.add_argument("--pairs", type=int, default=200, help="pairs for the one-pair queries")
    ap.add_argument("--rows", type=int, default=100, help="source rows per per-row query")
    ap.add_argument("--row-calls", type=int, default=10, help="per-row queries per shape")
    ap.add_argument("--load-rounds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--skip-load", action="store_true", help="reuse data already loaded")
    ap.add_argument("--csv-dir", help="users.csv and friends.csv already generated (same --size)")
    ap.add_argument("--keep", action="store_true", help="leave the data loaded at the end")
    args = ap.parse_args()
    n_users = SIZES[args.size]
    arbor = Target("arbor", args.arbor, args.arbor_pid, args.import_dir_arbor)
    neo = Target("neo4j", args.neo4j, args.neo4j_pid, args.import_dir_neo4j)
    print(f"# size {args.size}; arbor pid {arbor.pid}, neo4j pid {neo.pid}; "
          f"load average {os.getloadavg()[0]:.2f}")
    work = tempfile.mkdtemp(prefix="csvsp6-gen-")
    placed = []
    try:
        if not args.skip_load:
            csv = args.csv_dir
            if not csv:
                gen = [sys.executable, GEN, "--size", args.size, "--out", work, "--formats", "csv"]
                subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
                csv = os.path.join(work, "csv")
            for t in (arbor, neo):
                dest = os.path.join(t.import_dir, "csvsp6")
                os.makedirs(dest, exist_ok=True)
                placed.append(dest)
                t.find_base(dest)
                for f in ("users.csv", "friends.csv"):
                    shutil.copy(os.path.join(csv, f), dest)
            loads = {"arbor": [], "neo4j": []}
            for r in range(args.load_rounds):
                for t in ((arbor, neo) if r % 2 == 0 else (neo, arbor)):
                    loads[t.name].append(load(t, n_users))
                    print(f"  loaded {t.name}: {loads[t.name][-1]}", flush=True)
            print("\n| LOAD CSV step | Arbor wall s | Neo4j wall s | wall ratio "
                  "| Arbor CPU s | Neo4j CPU s | CPU ratio |\n|---|---|---|---|---|---|---|")
            for step in ("users", "index", "friends"):
                a = [l[step] for l in loads["arbor"]]
                n = [l[step] for l in loads["neo4j"]]
                aw, ac = min(x[0] for x in a), min(x[1] for x in a)
                nw, nc = min(x[0] for x in n), min(x[1] for x in n)
                print(f"| {step} | {aw:.2f} | {nw:.2f} | {nw / aw:.1f}x | {ac:.2f} | {nc:.2f} "
                      f"| {nc / ac if ac else float('nan'):.1f}x |")
            print(f"(relationships: arbor {loads['arbor'][-1]['rels']}, "
                  f"neo4j {loads['neo4j'][-1]['rels']})")
        res = bench_paths([arbor, neo], n_users, args)
        # "client s": this process's CPU inside the timed calls (the Python driver receiving
        # and decoding the rows); "wall - client": the rest of the wall (the server's work, the
        # network and the waits), whose ratio says what the servers did apart from the client.
        print("\n| query | calls | rows/call | Arbor p50 ms | Arbor p99 ms | Arbor total s "
              "| Neo4j p50 ms | Neo4j p99 ms | Neo4j total s | wall ratio | CPU ratio "
              "| client s (A / N) | wall - client ratio | mismatches |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, (stats, bad, n) in res.items():
            a, o = stats["arbor"], stats["neo4j"]
            at, ot = sum(a["wall"]), sum(o["wall"])
            cr = o["cpu"] / a["cpu"] if a["cpu"] else float("nan")
            an, on = at - a["client"], ot - o["client"]
            nr = on / an if an > 0 else float("nan")
            print(f"| {name} | {n} | {a['rows'] / n:.0f} | {statistics.median(a['wall']) * 1e3:.2f} "
                  f"| {pct(a['wall'], 99) * 1e3:.2f} | {at:.2f} "
                  f"| {statistics.median(o['wall']) * 1e3:.2f} | {pct(o['wall'], 99) * 1e3:.2f} "
                  f"| {ot:.2f} | {ot / at:.1f}x | {cr:.1f}x | {a['client']:.2f} / {o['client']:.2f} "
                  f"| {nr:.1f}x | {bad} |")
        print(f"# load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for d in placed:
            shutil.rmtree(d, ignore_errors=True)
        if not args.keep:
            for t in (arbor, neo):
                t.wipe()
        arbor.driver.close()
        neo.driver.close()


if __name__ == "__main__":
    main()
