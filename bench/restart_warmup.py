"""Restart after schema changes that no checkpoint holds yet, and warm-up, at one memory budget.

Steps (each on a fresh copy of an imported store, Arbor only):
    restart   start the server, create two uniqueness constraints and one index
              (`CALL db.awaitIndexes`), drop one of the constraints, `kill -9` the server (so the
              schema records stay in the WAL tail), start it again with `--memory-limit B`:
              seconds from the start to the first answered `RETURN 1`, the server's CPU (user+sys)
              and peak RSS (VmHWM) at that moment, then the seconds until every index is ONLINE
              and the CPU / peak RSS then.
    warmup    start the server with `--memory-limit B` for each budget of --warmup-budgets,
              `CALL apoc.warmup.run()`: wall, server CPU, peak RSS before and after, and what the
              procedure reported.

Usage: python3 bench/restart_warmup.py --arbor PATH --store IMPORTED_DIR --work DIR
       [--budget 256M] [--warmup-budgets 256M,4G] [--port 17820] [--steps restart,warmup]
Prints one JSON line per step; the load average is taken before and after each.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from neo4j import GraphDatabase

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cliff  # noqa: E402  (the /proc readers)

SCHEMA = [
    "CREATE CONSTRAINT individual_id FOR (n:Individual) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT organization_id FOR (n:Organization) REQUIRE n.id IS UNIQUE",
    "CREATE INDEX individual_name FOR (n:Individual) ON (n.name)",
    "CALL db.awaitIndexes(36000)",
    "DROP CONSTRAINT organization_id",
]


def load():
    return [round(x, 2) for x in os.getloadavg()]


def serve(args, store, budget, log):
    cmd = [args.arbor, "serve", "--data", store, "--listen", f"127.0.0.1:{args.port}",
           "--http-listen", f"127.0.0.1:{args.port + 1}", "--memory-limit", budget]
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    uri = f"bolt://127.0.0.1:{args.port}"
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited ({proc.returncode}); see {log}")
        try:
            # A plain connect first: the driver's own retries back off for seconds.
            socket.create_connection(("127.0.0.1", args.port), timeout=1).close()
            d = GraphDatabase.driver(uri, auth=None, notifications_min_severity="OFF",
                                     max_transaction_retry_time=0)
            d.execute_query("RETURN 1")
            break
        except Exception:
            time.sleep(0.02)
    return proc, d, {"cmd": " ".join(cmd), "first_answer_s": round(time.time() - t0, 2),
                     "cpu_s": round(cliff.proc_cpu(proc.pid), 2), "hwm_mib": round(cliff.proc_hwm(proc.pid), 1)}, t0


def fresh(args, name):
    dst = os.path.join(args.work, name)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(args.store, dst)
    return dst


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def restart(args):
    store = fresh(args, "restart-store")
    proc, d, _, _ = serve(args, store, args.budget, os.path.join(args.work, "restart-1.log"))
    for q in SCHEMA:
        d.execute_query(q)
    d.close()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    la0 = load()
    proc, d, r, t0 = serve(args, store, args.budget, os.path.join(args.work, "restart-2.log"))
    while True:
        recs, _, _ = d.execute_query("SHOW INDEXES YIELD name, state")
        states = {x["name"]: x["state"] for x in recs}
        if all(s == "ONLINE" for s in states.values()):
            break
        time.sleep(0.05)
    r.update({"online_s": round(time.time() - t0, 2), "online_cpu_s": round(cliff.proc_cpu(proc.pid), 2),
              "online_hwm_mib": round(cliff.proc_hwm(proc.pid), 1), "indexes": states,
              "load_before": la0, "load_after": load()})
    d.close()
    stop(proc)
    shutil.rmtree(store, ignore_errors=True)
    return r


def warmup(args, budget):
    store = fresh(args, "warmup-store")
    la0 = load()
    proc, d, r, _ = serve(args, store, budget, os.path.join(args.work, f"warmup-{budget}.log"))
    time.sleep(args.settle)
    c0, h0, t0 = cliff.proc_cpu(proc.pid), cliff.proc_hwm(proc.pid), time.time()
    recs, _, _ = d.execute_query("CALL apoc.warmup.run()")
    r.update({"budget": budget, "hwm_before_mib": round(h0, 1), "wall_s": round(time.time() - t0, 2),
              "server_cpu_s": round(cliff.proc_cpu(proc.pid) - c0, 2),
              "hwm_after_mib": round(cliff.proc_hwm(proc.pid), 1),
              "reported": dict(recs[0]), "load_before": la0, "load_after": load()})
    d.close()
    stop(proc)
    shutil.rmtree(store, ignore_errors=True)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arbor", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--budget", default="256M")
    ap.add_argument("--warmup-budgets", default="256M,4G")
    ap.add_argument("--port", type=int, default=17820)
    ap.add_argument("--settle", type=float, default=5.0, help="seconds between the open and the warm-up")
    ap.add_argument("--steps", default="restart,warmup")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    steps = args.steps.split(",")
    if "restart" in steps:
        print("restart", json.dumps(restart(args)), flush=True)
    if "warmup" in steps:
        for b in args.warmup_budgets.split(","):
            print("warmup", json.dumps(warmup(args, b)), flush=True)


if __name__ == "__main__":
    main()
