"""Q1-Q4 server CPU on a graph loaded over Bolt (BENCHMARKS.md, "Instructions per query and per row").

Usage: python3 scripts/live_load_aggregates.py PORT SERVER_PID load|queries|both [RUNS]
Loads Pokec small (/tmp/pokec-small/csv, from shared/bench/gen_pokec.py) into a running
`arbor serve` exactly as the kuzu-falkordb harness does (CREATE INDEX, UNWIND batches of 5,000),
then runs mgBench Q1-Q4 as the harness does (20 warm-ups, RUNS measured) right after the load
and again 3 s later, printing the server's CPU per query: all its threads' CPU time from
/proc/PID/task/*/schedstat (nanoseconds) over the measured runs / RUNS."""
import csv, sys, time, os
from neo4j import GraphDatabase
port, pid = int(sys.argv[1]), int(sys.argv[2])
mode = sys.argv[3]  # load | queries | both
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 200
d = GraphDatabase.driver("bolt://127.0.0.1:%d" % port, auth=None)
s = d.session(database="neo4j")
def q(t, p=None): return list(s.run(t, p or {}))
def cpu():
    # CPU time of all the server's threads in seconds, from schedstat (ns resolution).
    t = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            t += int(open("/proc/%d/task/%s/schedstat" % (pid, tid)).read().split()[0])
        except OSError:
            pass
    return t / 1e9
if mode in ("load", "both"):
    users, edges = [], []
    with open("/tmp/pokec-small/csv/users.csv") as fh:
        rd = csv.reader(fh); next(rd)
        users = [[int(r[1]), int(r[2]), r[3], int(r[4])] for r in rd]
    with open("/tmp/pokec-small/csv/friends.csv") as fh:
        rd = csv.reader(fh); next(rd)
        edges = [[int(r[0]), int(r[1])] for r in rd]
    q("CREATE INDEX FOR (n:User) ON (n.id)")
    for i in range(0, len(users), 5000):
        q("UNWIND $rows AS r CREATE (:User {id: r[0], completion_percentage: r[1], gender: r[2], age: r[3]})", {"rows": users[i:i+5000]})
    for i in range(0, len(edges), 5000):
        q("UNWIND $rows AS r MATCH (a:User {id: r[0]}), (b:User {id: r[1]}) CREATE (a)-[:Friend]->(b)", {"rows": edges[i:i+5000]})
    q("CALL db.awaitIndexes()")
    print("loaded", q("MATCH (n:User) RETURN count(n) AS c")[0]["c"], flush=True)
if mode in ("queries", "both"):
    Q = ["MATCH (n:User) RETURN n.age, COUNT(*)", "MATCH (n) RETURN count(n), count(n.age)",
         "MATCH (n:User) WHERE n.age >= 18 RETURN n.age, COUNT(*)", "MATCH (n) RETURN min(n.age), max(n.age), avg(n.age)"]
    for rnd in ("right after the load", "3 s later"):
        if rnd != "right after the load": time.sleep(3)
        for i, t in enumerate(Q):
            c_w = cpu()
            for _ in range(20): q(t)
            c0, w0 = cpu(), time.time()
            first = None
            for k in range(runs):
                q(t)
                if k == 0: first = cpu() - c0
            c1 = cpu()
            print("%s Q%d server cpu/q %.3f ms (first run %.3f ms, warm-ups %.3f ms each; %d runs, %.2fs wall)" % (rnd, i + 1, (c1 - c0) * 1000 / runs, first * 1000, (c0 - c_w) * 1000 / 20, runs, time.time() - w0), flush=True)
d.close()
