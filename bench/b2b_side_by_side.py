#!/usr/bin/env python3
"""B2B side by side with Neo4j 5.26 at one memory budget: the original deployment's steps, one server at a time.

Steps per server (issue 19 §5/§6), each recorded with the machine's load average:

    import       `arbor import --max-off-heap-memory B` / `neo4j-anchor import` with NEO4J_ANCHOR_IMPORT_OFFHEAP=B,
                 under `/usr/bin/time -v`: wall, user + sys CPU, peak RSS; store size on disk after it
    start        server start (Arbor `--memory-limit B`, Neo4j `--pagecache B --heap H`) to the first answered
                 query (`MATCH (n:Individual) RETURN n.id LIMIT 1`)
    schema       four uniqueness constraints + two indexes over Bolt in Neo4j 5 syntax (Neo4j: then
                 `db.awaitIndexes`): wall + server CPU (/proc/PID/stat); whether the 3.x form
                 `CREATE CONSTRAINT ON (n:L) ASSERT n.key IS UNIQUE` is accepted (on a label with no nodes)
    warmup       Arbor `CALL apoc.warmup.run()` (its reported pages/bytes); Neo4j has no APOC here, so its
                 nearest equivalent is a scan of every node and relationship,
                 `MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(n) + count(r)` (run on Arbor too, after its warm-up)
    queries      the server restarted fresh, then `bench/cliff.py`'s four queries (lookup, hop1, hop2, topk)
                 over the same seeded parameter stream twice: cold (first pass) and warm (second);
                 p50/p99 wall ms and mean server CPU ms per query; every answer hashed
    concurrent   12 client processes, each its own driver and session, lookup/hop1/hop2 in turn for a fixed
                 time: QPS, p50/p99 wall ms, server CPU
    rss          server peak RSS (VmHWM) and RSS at the end

usage:
  python3 bench/b2b_side_by_side.py --server arbor --arbor BIN --csv B2B --work DIR --port 17840 --json arbor.json
  python3 bench/b2b_side_by_side.py --server neo4j --neo4j-anchor PATH --csv B2B --work DIR --port 17842 \
      --json neo4j.json
  python3 bench/b2b_side_by_side.py --compare arbor.json neo4j.json     # table with ratios, answers compared
Options: --budget 2G (Arbor --memory-limit and --max-off-heap-memory, Neo4j --pagecache and the importer's
off-heap), --neo4j-heap 2g, --steps import,start,schema,warmup,queries,concurrent (a subset; `import` is
skipped when left out and the store exists), --schema all|constraints (the latter without the two name indexes),
--no-restart (the queries on the server that ran the schema step, no fresh start), --no-scan (no full
scan after the warm-up), --queries (a subset; the
12 clients run the subset's lookup/hop1/hop2), --n 200, --n-topk 5 (a smaller n-topk keeps the first draws of
the same stream), --seed 7, --concurrent-s 30.
The parameter ranges are the scale's (from manifest.json). Needs the `neo4j` Python driver.
"""
import argparse
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time

from neo4j import GraphDatabase

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cliff  # noqa: E402  (the queries, their canonical answers, /proc readers)

CONSTRAINTS = [
    "CREATE CONSTRAINT activity_id IF NOT EXISTS FOR (n:Activity) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT individual_id IF NOT EXISTS FOR (n:Individual) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT organization_id IF NOT EXISTS FOR (n:Organization) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT activity_name IF NOT EXISTS FOR (n:Activity) REQUIRE n.name IS UNIQUE",
]
INDEXES = [
    "CREATE INDEX individual_name IF NOT EXISTS FOR (n:Individual) ON (n.name)",
    "CREATE INDEX organization_name IF NOT EXISTS FOR (n:Organization) ON (n.name)",
]
OLD_FORM = "CREATE CONSTRAINT ON (n:OldSyntaxProbe) ASSERT n.key IS UNIQUE"
SCAN = "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(n) + count(r) AS c"
FIRST = "MATCH (n:Individual) RETURN n.id LIMIT 1"
MIX = ["lookup", "hop1", "hop2"]


def load():
    return [round(x, 2) for x in os.getloadavg()]


def mib(b):
    return round(b / 2**20, 1)


def proc_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def time_v(cmd, log, env=None):
    """Runs cmd under /usr/bin/time -v: wall s, user + sys s, peak RSS MiB (the largest process it waited for)."""
    tv = log + ".time"
    la0 = load()
    t0 = time.time()
    with open(log, "w") as out:
        rc = subprocess.call(["/usr/bin/time", "-v", "-o", tv, *cmd], stdout=out, stderr=subprocess.STDOUT, env=env)
    wall = time.time() - t0
    got = {}
    with open(tv) as f:
        for line in f:
            k, _, v = line.strip().rpartition(": ")
            got[k] = v
    return {"cmd": " ".join(cmd), "rc": rc, "wall_s": round(wall, 2),
            "user_s": float(got.get("User time (seconds)", 0)), "sys_s": float(got.get("System time (seconds)", 0)),
            "cpu_s": round(float(got.get("User time (seconds)", 0)) + float(got.get("System time (seconds)", 0)), 2),
            "peak_rss_mib": round(int(got.get("Maximum resident set size (kbytes)", 0)) / 1024, 1),
            "load_before": la0, "load_after": load()}


def manifest(csv):
    with open(os.path.join(csv, "manifest.json")) as f:
        return json.load(f)


def store_dirs(args):
    if args.server == "arbor":
        return [args.store]
    return [os.path.join(args.store, "data/databases/neo4j"), os.path.join(args.store, "data/transactions/neo4j")]


def store_bytes(args):
    return sum(cliff.du(d) for d in store_dirs(args))


def do_import(args, m):
    log = os.path.join(args.work, f"{args.server}-import.log")
    files = [a.split("=", 1)[0] + "=" + os.path.join(args.csv, a.split("=", 1)[1]) if "=" in a and
             a.split("=", 1)[0] in ("--nodes", "--relationships") else a for a in m["neo4j_admin_args"]]
    if args.server == "arbor":
        cmd = [args.arbor, "import", "--data", args.store, "--progress=plain", f"--max-off-heap-memory={args.budget}",
               f"--report-file={os.path.join(args.work, 'arbor-import.report')}", *files]
        r = time_v(cmd, log)
    else:
        env = dict(os.environ, NEO4J_ANCHOR_IMPORT_OFFHEAP=args.budget)
        cmd = [args.neo4j_anchor, "import", "--data", args.store, "--manifest", os.path.join(args.csv, "manifest.json")]
        r = time_v(cmd, log, env)
        r["cmd"] = f"NEO4J_ANCHOR_IMPORT_OFFHEAP={args.budget} " + r["cmd"]
    r["store_bytes"] = store_bytes(args)
    r["store_mib"] = mib(r["store_bytes"])
    return r


def start(args, log):
    port = args.port
    if args.server == "arbor":
        cmd = [args.arbor, "serve", "--data", args.store, "--listen", f"127.0.0.1:{port}",
               "--http-listen", f"127.0.0.1:{port + 1}", "--memory-limit", args.budget]
    else:
        cmd = [args.neo4j_anchor, "serve", "--port", str(port), "--data", args.store,
               "--heap", args.neo4j_heap, "--pagecache", args.budget]
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    uri = f"bolt://127.0.0.1:{port}"
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited ({proc.returncode}); see {log}")
        if time.time() - t0 > 3600:
            raise RuntimeError(f"server not up after an hour; see {log}")
        try:
            with GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF") as d:
                d.execute_query(FIRST)
                break
        except Exception:
            time.sleep(0.25)
    up = time.time() - t0
    return proc, uri, {"cmd": " ".join(cmd), "first_answer_s": round(up, 2), "cpu_s": round(cliff.proc_cpu(proc.pid), 2),
                       "rss_mib": round(proc_rss(proc.pid), 1), "load": load()}


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def timed_query(d, pid, q, **kw):
    la0, c0, t0 = load(), cliff.proc_cpu(pid), time.time()
    recs, _, _ = d.execute_query(q, **kw)
    return recs, {"wall_s": round(time.time() - t0, 2), "server_cpu_s": round(cliff.proc_cpu(pid) - c0, 2),
                  "hwm_mib": round(cliff.proc_hwm(pid), 1), "load_before": la0, "load_after": load()}


def schema(args, d, pid):
    la0, c0, t0 = load(), cliff.proc_cpu(pid), time.time()
    each = []
    for q in CONSTRAINTS + (INDEXES if args.schema == "all" else []) + ["CALL db.awaitIndexes(36000)"]:
        t, c = time.time(), cliff.proc_cpu(pid)
        d.execute_query(q)
        each.append({"query": q, "wall_s": round(time.time() - t, 2),
                     "server_cpu_s": round(cliff.proc_cpu(pid) - c, 2), "hwm_mib": round(cliff.proc_hwm(pid), 1)})
    r = {"wall_s": round(time.time() - t0, 2), "server_cpu_s": round(cliff.proc_cpu(pid) - c0, 2),
         "hwm_mib": round(cliff.proc_hwm(pid), 1), "load_before": la0, "load_after": load(), "each": each}
    recs, _, _ = d.execute_query("SHOW INDEXES YIELD name, type, state, owningConstraint")
    r["indexes"] = [dict(x) for x in recs]
    try:
        d.execute_query(OLD_FORM)
        r["old_form"] = "accepted"
    except Exception as e:  # the answer is the finding
        r["old_form"] = f"refused: {getattr(e, 'code', '')} {str(e)[:200]}"
    try:
        recs, _, _ = d.execute_query("SHOW CONSTRAINTS YIELD name, labelsOrTypes")
        for x in recs:
            if "OldSyntaxProbe" in (x["labelsOrTypes"] or []):
                d.execute_query(f"DROP CONSTRAINT `{x['name']}`")
    except Exception as e:
        r["old_form_cleanup"] = str(e)[:200]
    return r


def warmup(args, d, pid):
    r = {}
    if args.server == "arbor":
        recs, r["apoc_warmup_run"] = timed_query(d, pid, "CALL apoc.warmup.run()")
        r["apoc_warmup_run"]["reported"] = [{k: (v if isinstance(v, (int, float, str, bool)) or v is None else str(v))
                                            for k, v in dict(x).items()} for x in recs]
    if args.no_scan:
        return r
    recs, r["scan"] = timed_query(d, pid, SCAN)
    r["scan"]["count"] = recs[0]["c"]
    r["scan"]["query"] = SCAN
    return r


def queries(args, d, pid, stream):
    out, answers = {}, {}
    for name in ("cold", "warm"):
        cpu0, la0 = cliff.proc_cpu(pid), load()
        ans, pc0 = {}, cliff.page_cache(args.server, args.port)
        lat, cpu = cliff.run_pass(d, stream, ans, pid)
        pc1 = cliff.page_cache(args.server, args.port)
        out[name] = {"cpu_s": round(cliff.proc_cpu(pid) - cpu0, 2), "hwm_mib": round(cliff.proc_hwm(pid), 1),
                     "page_cache": pc1 and pc0 and {k: pc1[k] - pc0.get(k, 0) for k in pc1},
                     "load_before": la0, "load_after": load(),
                     "queries": {q: {"n": len(ts), "p50": round(cliff.pct(ts, 50), 3),
                                     "p99": round(cliff.pct(ts, 99), 3), "cpu_ms": round(cpu[q], 3)}
                                 for q, ts in lat.items()}}
        for k, v in ans.items():
            answers.setdefault(f"{k[0]}#{k[1]}", set()).update(v)
        print(args.server, name, json.dumps(out[name]), flush=True)
    return out, {k: sorted(v) for k, v in answers.items()}


def worker(uri, seed, begin, deadline, n_ind, n_org, q):
    rng = random.Random(seed)
    lat = []
    with GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF") as d, d.session() as s:
        i = 0
        while time.time() < deadline:
            mix = [m for m in MIX if m in cliff.QUERIES]
            name = mix[i % len(mix)]
            p = rng.randrange(n_org if name == "hop2" else n_ind)
            t0, w0 = time.perf_counter(), time.time()
            list(s.run(cliff.QUERIES[name][0], id=p))
            if w0 >= begin:
                lat.append((name, (time.perf_counter() - t0) * 1000))
            i += 1
    q.put(lat)


def concurrent(args, uri, pid, n_ind, n_org, clients=12):
    q = multiprocessing.Queue()
    begin = time.time() + 5  # connections up and a few queries each before the measured window
    deadline = begin + args.concurrent_s
    la0 = load()
    procs = [multiprocessing.Process(target=worker, args=(uri, 1000 + i, begin, deadline, n_ind, n_org, q))
             for i in range(clients)]
    for p in procs:
        p.start()
    time.sleep(max(0.0, begin - time.time()))
    cpu0 = cliff.proc_cpu(pid)
    time.sleep(max(0.0, deadline - time.time()))
    cpu = cliff.proc_cpu(pid) - cpu0  # the window only (a query in flight at its end is cut)
    lats = [q.get() for _ in procs]
    span = args.concurrent_s
    for p in procs:
        p.join()
    allv = [ms for lat in lats for _, ms in lat]
    r = {"clients": clients, "window_s": round(span, 1), "queries": len(allv),
         "qps": round(len(allv) / span, 1),
         "p50": round(cliff.pct(allv, 50), 3), "p99": round(cliff.pct(allv, 99), 3),
         "server_cpu_s": round(cpu, 2), "server_cpu_ms_per_query": round(cpu * 1000 / max(1, len(allv)), 3),
         "per_query": {n: {"p50": round(cliff.pct([ms for lat in lats for m, ms in lat if m == n], 50), 3),
                           "p99": round(cliff.pct([ms for lat in lats for m, ms in lat if m == n], 99), 3)}
                       for n in MIX if n in cliff.QUERIES},
         "load_before": la0, "load_after": load(), "hwm_mib": round(cliff.proc_hwm(pid), 1)}
    print(args.server, "concurrent", json.dumps(r), flush=True)
    return r


def run(args):
    m = manifest(args.csv)
    cliff.N_IND = m["nodes"]["Individual"] if "Individual" in m["nodes"] else cliff.N_IND
    cliff.N_ORG = m["nodes"]["Organization"] if "Organization" in m["nodes"] else cliff.N_ORG
    for q in set(cliff.QUERIES) - set(args.queries.split(",")):
        del cliff.QUERIES[q]
    steps = args.steps.split(",")
    res = {"server": args.server, "budget": args.budget, "neo4j_heap": args.neo4j_heap if args.server == "neo4j" else None,
           "scale": m["scale"], "nodes": m["nodes"]["total"], "rels": m["relationships"]["total"],
           "n_ind": cliff.N_IND, "n_org": cliff.N_ORG, "steps": {}}

    def save():
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)

    os.makedirs(args.work, exist_ok=True)
    if "import" in steps:
        res["steps"]["import"] = do_import(args, m)
        print(args.server, "import", json.dumps(res["steps"]["import"]), flush=True)
        save()
    serve_steps = [s for s in steps if s != "import"]
    if not serve_steps:
        return 0
    proc, uri, res["steps"]["start"] = start(args, os.path.join(args.work, f"{args.server}-serve-1.log"))
    print(args.server, "start", json.dumps(res["steps"]["start"]), flush=True)
    save()
    try:
        with GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF") as d:
            if "schema" in steps:
                res["steps"]["schema"] = schema(args, d, proc.pid)
                print(args.server, "schema", json.dumps(res["steps"]["schema"]), flush=True)
                save()
            if "warmup" in steps:
                res["steps"]["warmup"] = warmup(args, d, proc.pid)
                print(args.server, "warmup", json.dumps(res["steps"]["warmup"]), flush=True)
                save()
        res["steps"]["first_serve_end"] = {"hwm_mib": round(cliff.proc_hwm(proc.pid), 1),
                                           "rss_mib": round(proc_rss(proc.pid), 1)}
    finally:
        if not args.no_restart:
            stop(proc)
    if not args.no_restart:
        res["store_after_schema_mib"] = mib(store_bytes(args))
    if "queries" not in steps and "concurrent" not in steps:
        save()
        return 0
    if not args.no_restart:
        proc, uri, res["steps"]["restart"] = start(args, os.path.join(args.work, f"{args.server}-serve-2.log"))
        print(args.server, "restart", json.dumps(res["steps"]["restart"]), flush=True)
    try:
        with GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF") as d:
            if "queries" in steps:
                stream = cliff.params(args.n, args.n_topk, args.seed)
                res["steps"]["queries"], res["answers"] = queries(args, d, proc.pid, stream)
                save()
        if "concurrent" in steps:
            res["steps"]["concurrent"] = concurrent(args, uri, proc.pid, cliff.N_IND, cliff.N_ORG)
        res["steps"]["end"] = {"hwm_mib": round(cliff.proc_hwm(proc.pid), 1), "rss_mib": round(proc_rss(proc.pid), 1),
                               "load": load()}
        print(args.server, "end", json.dumps(res["steps"]["end"]), flush=True)
    finally:
        stop(proc)
    save()
    return 0


def compare(a_path, n_path):
    a, n = json.load(open(a_path)), json.load(open(n_path))
    A, N = a["steps"], n["steps"]
    rows = []

    def row(what, av, nv, ratio):
        rows.append(f"| {what} | {av} | {nv} | {ratio} |")

    def r(x, y):
        return f"{y / x:.1f}×" if x and y else "–"
    if "import" in A and "import" in N:
        ai, ni = A["import"], N["import"]
        row("import wall / CPU (user+sys) s", f"{ai['wall_s']} / {ai['cpu_s']}", f"{ni['wall_s']} / {ni['cpu_s']}",
            f"{r(ai['wall_s'], ni['wall_s'])} / {r(ai['cpu_s'], ni['cpu_s'])}")
        row("import peak RSS MiB", ai["peak_rss_mib"], ni["peak_rss_mib"], r(ai["peak_rss_mib"], ni["peak_rss_mib"]))
        row("store after import MiB", ai["store_mib"], ni["store_mib"], r(ai["store_mib"], ni["store_mib"]))
    if "store_after_schema_mib" in a and "store_after_schema_mib" in n:
        row("store with constraints + indexes MiB", a["store_after_schema_mib"], n["store_after_schema_mib"],
            r(a["store_after_schema_mib"], n["store_after_schema_mib"]))
    for k in ("start", "restart"):
        if k in A and k in N:
            row(f"{k} to first answer s (server CPU s)", f"{A[k]['first_answer_s']} ({A[k]['cpu_s']})",
                f"{N[k]['first_answer_s']} ({N[k]['cpu_s']})", r(A[k]["first_answer_s"], N[k]["first_answer_s"]))
    if "schema" in A and "schema" in N:
        row("4 constraints + 2 indexes wall / server CPU s", f"{A['schema']['wall_s']} / {A['schema']['server_cpu_s']}",
            f"{N['schema']['wall_s']} / {N['schema']['server_cpu_s']}",
            f"{r(A['schema']['wall_s'], N['schema']['wall_s'])} / "
            f"{r(A['schema']['server_cpu_s'], N['schema']['server_cpu_s'])}")
    if "warmup" in A and "warmup" in N:
        aw, nw = A["warmup"], N["warmup"]
        if "apoc_warmup_run" in aw:
            row("`apoc.warmup.run()` wall / CPU s", f"{aw['apoc_warmup_run']['wall_s']} / "
                f"{aw['apoc_warmup_run']['server_cpu_s']}", "n/a (no APOC)", "–")
        if "scan" in aw and "scan" in nw:
            row("scan of all nodes + rels wall / CPU s", f"{aw['scan']['wall_s']} / {aw['scan']['server_cpu_s']}",
                f"{nw['scan']['wall_s']} / {nw['scan']['server_cpu_s']}",
                f"{r(aw['scan']['wall_s'], nw['scan']['wall_s'])} / "
                f"{r(aw['scan']['server_cpu_s'], nw['scan']['server_cpu_s'])}")
    if "queries" in A and "queries" in N:
        for p in ("cold", "warm"):
            for q, av in A["queries"][p]["queries"].items():
                nv = N["queries"][p]["queries"].get(q)
                if nv:
                    row(f"{q} {p}: p50 / p99 ms (CPU ms)", f"{av['p50']} / {av['p99']} ({av['cpu_ms']})",
                        f"{nv['p50']} / {nv['p99']} ({nv['cpu_ms']})",
                        f"{r(av['p50'], nv['p50'])} / {r(av['p99'], nv['p99'])} ({r(av['cpu_ms'], nv['cpu_ms'])})")
    if "concurrent" in A and "concurrent" in N:
        ac, nc = A["concurrent"], N["concurrent"]
        row("12 clients QPS; p50 / p99 ms (CPU ms per query)",
            f"{ac['qps']}; {ac['p50']} / {ac['p99']} ({ac['server_cpu_ms_per_query']})",
            f"{nc['qps']}; {nc['p50']} / {nc['p99']} ({nc['server_cpu_ms_per_query']})",
            f"{r(nc['qps'], ac['qps'])}; {r(ac['p50'], nc['p50'])} / {r(ac['p99'], nc['p99'])} "
            f"({r(ac['server_cpu_ms_per_query'], nc['server_cpu_ms_per_query'])})")
    if "end" in A and "end" in N:
        row("server peak RSS (VmHWM) / RSS at end MiB", f"{A['end']['hwm_mib']} / {A['end']['rss_mib']}",
            f"{N['end']['hwm_mib']} / {N['end']['rss_mib']}", r(A["end"]["hwm_mib"], N["end"]["hwm_mib"]))
    print("| step | Arbor | Neo4j | ratio |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    aa, na = a.get("answers", {}), n.get("answers", {})
    common = sorted(set(aa) & set(na))
    bad = [k for k in common if aa[k] != na[k] or len(aa[k]) != 1]
    for k in bad[:20]:
        print(f"MISMATCH {k}: arbor {aa[k]} neo4j {na[k]}")
    print(f"answers: {len(common)} compared, {len(bad)} differ")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", choices=["arbor", "neo4j"])
    ap.add_argument("--arbor")
    ap.add_argument("--neo4j-anchor")
    ap.add_argument("--csv")
    ap.add_argument("--work", default=".")
    ap.add_argument("--store", help="default: WORK/<server>-store")
    ap.add_argument("--port", type=int)
    ap.add_argument("--budget", default="2G")
    ap.add_argument("--neo4j-heap", default="2g")
    ap.add_argument("--steps", default="import,start,schema,warmup,queries,concurrent")
    ap.add_argument("--queries", default=",".join(cliff.QUERIES))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--n-topk", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--concurrent-s", type=int, default=30)
    ap.add_argument("--schema", choices=["all", "constraints"], default="all",
                    help="constraints: the four constraints without the two name indexes")
    ap.add_argument("--no-scan", action="store_true",
                    help="skip the full scan after the warm-up (it reads every node and relationship: minutes at 1.0)")
    ap.add_argument("--no-restart", action="store_true",
                    help="queries on the server that ran the schema step (no fresh start before the cold pass)")
    ap.add_argument("--json")
    ap.add_argument("--compare", nargs=2, metavar=("ARBOR_JSON", "NEO4J_JSON"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not (args.server and args.csv and args.port):
        ap.error("--server, --csv and --port are needed (or --compare)")
    args.store = args.store or os.path.join(args.work, f"{args.server}-store")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
