#!/usr/bin/env python3
"""Bulk-import benchmark: `arbor import` vs Neo4j 5.26's `neo4j-admin database import full`
(through ../shared/anchors/neo4j/neo4j-anchor) on the same CSV files, in one run.

Per data set and system: import wall time, relationships/s, peak RSS of the importer process
(wait4 rusage), store size on disk; then, with the imported store served, the time to create
unique constraints (and an index) on the imported labels, and a warm-up:
`CALL db.warmup()` for Arbor, and for both the same Cypher scan
`MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(n) + count(r)`.

Data sets (generate them outside the repository):
  b2b:   python3 ../shared/bench/gen_b2b.py --scale 0.01 --out /work/bench-import/b2b
  pokec: python3 ../shared/bench/gen_pokec.py --size large --formats csv --out /work/bench-import/pokec-large

usage: python3 bench/import.py --b2b DIR [--pokec DIR] [--work DIR] [--arbor BIN] [--anchor PATH]
       [--only arbor|neo4j] [--json FILE] [--md FILE]
Needs the `neo4j` Python driver.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time

from neo4j import GraphDatabase

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def du(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def timed(cmd, log, cwd=None, env=None):
    """Runs cmd; returns (seconds, peak RSS bytes of the process tree it waited for)."""
    t = time.time()
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
        _, status, ru = os.wait4(p.pid, 0)
    secs = time.time() - t
    if status != 0:
        sys.exit(f"command failed ({status}): {' '.join(cmd)}; see {log}")
    return secs, ru.ru_maxrss * 1024


def datasets(args):
    out = []
    if args.b2b:
        m = json.load(open(os.path.join(args.b2b, "manifest.json")))
        files = [a if not a.startswith("--nodes=") and not a.startswith("--relationships=")
                 else a.split("=", 1)[0] + "=" + os.path.join(args.b2b, a.split("=", 1)[1])
                 for a in m["neo4j_admin_args"]]
        out.append({
            "name": f"B2B scale {m['scale']}",
            "key": "b2b",
            "args": files,
            "nodes": m["nodes"]["total"],
            "rels": m["relationships"]["total"],
            "input_bytes": m["bytes"],
            "schema": ["CREATE CONSTRAINT act_id FOR (n:Activity) REQUIRE n.id IS UNIQUE",
                       "CREATE CONSTRAINT ind_id FOR (n:Individual) REQUIRE n.id IS UNIQUE",
                       "CREATE CONSTRAINT org_id FOR (n:Organization) REQUIRE n.id IS UNIQUE",
                       "CREATE INDEX ind_name FOR (n:Individual) ON (n.name)"],
        })
    if args.pokec:
        csv = os.path.join(args.pokec, "csv")
        out.append({
            "name": "Pokec large (synthetic)",
            "key": "pokec",
            "args": [f"--nodes={csv}/users.csv", f"--relationships={csv}/friends.csv",
                     "--ignore-empty-strings=true"],
            "nodes": None,
            "rels": None,
            "input_bytes": du(csv),
            "schema": ["CREATE CONSTRAINT user_id FOR (n:User) REQUIRE n.id IS UNIQUE",
                       "CREATE INDEX user_age FOR (n:User) ON (n.age)"],
        })
    return out


def serve_arbor(bin_, data, log):
    port = free_port()
    out = open(log, "w")
    p = subprocess.Popen([bin_, "serve", "--data", data, "--listen", f"127.0.0.1:{port}"],
                         stdout=out, stderr=subprocess.STDOUT)
    t = time.time()
    while True:
        if p.poll() is not None:
            sys.exit(f"arbor serve exited; see {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.05)
    return p, port, time.time() - t


def serve_neo4j(anchor, data, log):
    port = free_port()
    out = open(log, "w")
    p = subprocess.Popen([anchor, "serve", "--data", data, "--port", str(port)],
                         stdout=out, stderr=subprocess.STDOUT)
    t = time.time()
    while True:
        if p.poll() is not None:
            sys.exit(f"neo4j-anchor serve exited; see {log}")
        if "NEO4J_ANCHOR_READY" in open(log).read():
            break
        time.sleep(0.2)
    return p, port, time.time() - t


def after_import(system, port, ds):
    res = {}
    with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
        t = time.time()
        for q in ds["schema"]:
            d.execute_query(q)
        if system == "neo4j":
            d.execute_query("CALL db.awaitIndexes(3600)")
        res["schema_s"] = time.time() - t
        t = time.time()
        recs, _, _ = d.execute_query("MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(n) + count(r) AS c")
        res["scan_warmup_s"] = time.time() - t
        res["scan_count"] = recs[0]["c"]
        if system == "arbor":
            t = time.time()
            recs, _, _ = d.execute_query("CALL db.warmup()")
            res["db_warmup_s"] = time.time() - t
        recs, _, _ = d.execute_query("MATCH (n) RETURN count(n) AS c")
        res["nodes"] = recs[0]["c"]
        recs, _, _ = d.execute_query("MATCH ()-[r]->() RETURN count(r) AS c")
        res["rels"] = recs[0]["c"]
    return res


def run_system(system, ds, args):
    work = os.path.join(args.work, f"{system}-{ds['key']}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    log = os.path.join(args.work, f"{system}-{ds['key']}-import.log")
    if system == "arbor":
        db = os.path.join(work, "db")
        cmd = [args.arbor, "import", "--data", db, "--progress=plain",
               f"--report-file={work}/import.report", *ds["args"]]
        secs, rss = timed(cmd, log)
        size = du(db)
    else:
        cmd = [args.anchor, "import", "--data", work, "--", *ds["args"]]
        secs, rss = timed(cmd, log)
        size = du(os.path.join(work, "data", "databases", "neo4j")) + \
            du(os.path.join(work, "data", "transactions", "neo4j"))
    slog = os.path.join(args.work, f"{system}-{ds['key']}-serve.log")
    if system == "arbor":
        p, port, start_s = serve_arbor(args.arbor, os.path.join(work, "db"), slog)
    else:
        p, port, start_s = serve_neo4j(args.anchor, work, slog)
    try:
        post = after_import(system, port, ds)
    finally:
        p.terminate()
        p.wait(timeout=600)
    r = {"system": system, "dataset": ds["name"], "import_s": secs, "peak_rss": rss,
         "store_bytes": size, "startup_s": start_s, **post}
    r["rels_per_s"] = post["rels"] / secs if secs else 0
    print(json.dumps(r), flush=True)
    return r


def markdown(results):
    lines = ["| data set | system | import | rels/s | peak RSS | store on disk | open | constraints + index | "
             "warm-up scan | db.warmup() |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(
            f"| {r['dataset']} ({r['nodes']:,} nodes, {r['rels']:,} rels) | {r['system']} | {r['import_s']:.1f} s | "
            f"{r['rels_per_s'] / 1e6:.2f} M | {r['peak_rss'] / 2**20:,.0f} MiB | {r['store_bytes'] / 2**20:,.0f} MiB | "
            f"{r['startup_s']:.1f} s | {r['schema_s']:.1f} s | {r['scan_warmup_s']:.1f} s | "
            f"{r['db_warmup_s']:.1f} s |" if "db_warmup_s" in r else
            f"| {r['dataset']} ({r['nodes']:,} nodes, {r['rels']:,} rels) | {r['system']} | {r['import_s']:.1f} s | "
            f"{r['rels_per_s'] / 1e6:.2f} M | {r['peak_rss'] / 2**20:,.0f} MiB | {r['store_bytes'] / 2**20:,.0f} MiB | "
            f"{r['startup_s']:.1f} s | {r['schema_s']:.1f} s | {r['scan_warmup_s']:.1f} s | n/a |")
    by = {}
    for r in results:
        by.setdefault(r["dataset"], {})[r["system"]] = r
    lines.append("")
    for name, s in by.items():
        if "arbor" in s and "neo4j" in s:
            a, n = s["arbor"], s["neo4j"]
            lines.append(f"- {name}: import {n['import_s'] / a['import_s']:.1f}x faster than Neo4j, "
                         f"peak RSS {a['peak_rss'] / n['peak_rss']:.2f}x, store size {a['store_bytes'] / n['store_bytes']:.2f}x "
                         f"of Neo4j's.")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--b2b")
    ap.add_argument("--pokec")
    ap.add_argument("--work", default="/work/bench-import/runs")
    ap.add_argument("--arbor", default=os.path.join(ROOT, "target/release/arbor"))
    ap.add_argument("--anchor", default=os.path.join(ROOT, "../shared/anchors/neo4j/neo4j-anchor"))
    ap.add_argument("--only", choices=["arbor", "neo4j"])
    ap.add_argument("--json")
    ap.add_argument("--md")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    results = []
    for ds in datasets(args):
        for system in ["neo4j", "arbor"]:
            if args.only and system != args.only:
                continue
            results.append(run_system(system, ds, args))
    md = markdown(results)
    print(md)
    if args.json:
        json.dump(results, open(args.json, "w"), indent=2)
    if args.md:
        open(args.md, "w").write(md)


if __name__ == "__main__":
    main()
