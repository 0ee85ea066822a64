"""The schema step of `bench/b2b_side_by_side.py` (4 uniqueness constraints, 2 indexes, then
`db.awaitIndexes`) one statement at a time over Bolt against `arbor serve --memory-limit BUDGET`:
wall, server CPU (user + sys from /proc) and the server's VmHWM after each; then the server is
stopped (SIGTERM, or SIGKILL with `kill` so the WAL's schema records are replayed) and restarted:
time and CPU to the first answer, VmHWM, and an equality seek on `:Individual(id)`.

Usage: python3 bench/schema_step.py ARBOR STORE PORT BUDGET OUT.json [kill]
(STORE: a copy of an imported B2B store; it is changed.)
"""
import json, os, signal, subprocess, sys, time
from neo4j import GraphDatabase

arbor, store, port, budget, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
STMTS = [
    "CREATE CONSTRAINT activity_id IF NOT EXISTS FOR (n:Activity) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT individual_id IF NOT EXISTS FOR (n:Individual) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT organization_id IF NOT EXISTS FOR (n:Organization) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT activity_name IF NOT EXISTS FOR (n:Activity) REQUIRE n.name IS UNIQUE",
    "CREATE INDEX individual_name IF NOT EXISTS FOR (n:Individual) ON (n.name)",
    "CREATE INDEX organization_name IF NOT EXISTS FOR (n:Organization) ON (n.name)",
    "CALL db.awaitIndexes(36000)",
]
PROBE = "MATCH (n:Individual) WHERE n.id = $v RETURN count(n) AS c"

def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        p = f.read().rsplit(")", 1)[1].split()
    return (int(p[11]) + int(p[12])) / os.sysconf("SC_CLK_TCK")

def status(pid, field):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith(field + ":"):
            return round(int(l.split()[1]) / 1024, 1)

def hwm(pid):
    return status(pid, "VmHWM")

def load():
    return open("/proc/loadavg").read().split()[0]

def start():
    cmd = [arbor, "serve", "--data", store, "--listen", f"127.0.0.1:{port}", "--http-listen", f"127.0.0.1:{port+1}", "--memory-limit", budget]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=open(out + ".log", "a"), stderr=subprocess.STDOUT)
    while True:
        if p.poll() is not None:
            raise SystemExit("server exited")
        try:
            with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
                d.execute_query("RETURN 1")
            break
        except Exception:
            time.sleep(0.2)
    return p, {"first_answer_s": round(time.time() - t0, 2), "cpu_s": cpu(p.pid), "hwm_mib": hwm(p.pid), "load": load(), "t0": t0}

def probe_value(d):
    recs, _, _ = d.execute_query("MATCH (n:Individual) RETURN n.id AS v LIMIT 1")
    return recs[0]["v"]

res = {"cmd": f"{arbor} serve --memory-limit {budget}"}
p, res["start"] = start()
steps = []
with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
    for q in STMTS:
        t, c, la = time.time(), cpu(p.pid), load()
        d.execute_query(q)
        steps.append({"q": q[:60], "wall_s": round(time.time() - t, 2), "server_cpu_s": round(cpu(p.pid) - c, 2), "hwm_mib": hwm(p.pid), "load": la})
        print(steps[-1], flush=True)
    v = probe_value(d)
    t = time.time()
    recs, summ, _ = d.execute_query(PROBE, v=v)
    res["probe_before_restart"] = {"count": recs[0]["c"], "wall_s": round(time.time() - t, 3)}
res["steps"] = steps
res["hwm_after_schema_mib"] = hwm(p.pid)
res["rss_after_schema_mib"] = status(p.pid, "VmRSS")
kill = len(sys.argv) > 6 and sys.argv[6] == "kill"
res["stop"] = "SIGKILL" if kill else "SIGTERM"
p.send_signal(signal.SIGKILL if kill else signal.SIGTERM); p.wait()
p, res["restart"] = start()
with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
    t, c = time.time(), cpu(p.pid)
    recs, _, _ = d.execute_query(PROBE, v=v)
    res["restart"]["first_seek"] = {"count": recs[0]["c"], "wall_s": round(time.time() - t, 3), "cpu_s": round(cpu(p.pid) - c, 2)}
    recs, _, _ = d.execute_query("PROFILE " + PROBE, v=v)
    # Every rule ONLINE (a replayed rule refills, or attaches its stored part), then a seek.
    d.execute_query("CALL db.awaitIndexes(36000)")
    res["restart"]["all_online_s"] = round(time.time() - res["restart"]["t0"], 2)
    res["restart"]["all_online_cpu_s"] = cpu(p.pid)
    t = time.time()
    recs, _, _ = d.execute_query(PROBE, v=v)
    res["restart"]["seek_when_online"] = {"count": recs[0]["c"], "wall_s": round(time.time() - t, 3)}
res["restart"]["hwm_mib"] = hwm(p.pid)
res["restart"]["rss_mib"] = status(p.pid, "VmRSS")
del res["restart"]["t0"]
p.send_signal(signal.SIGTERM); p.wait()
print(json.dumps(res, indent=1))
json.dump(res, open(out, "w"), indent=1)
