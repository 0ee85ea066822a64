"""Usage: python3 bench/spill_pool.py ARBOR_BIN DATA_DIR [PORT]. Server VmHWM and CPU per spilling operator: each query on a fresh server with a 32 MiB pool
(spills) and with a 3 GiB pool (in memory)."""
import os, subprocess, sys, time, socket, shutil
from neo4j import GraphDatabase
BIN = sys.argv[1]; DATA = sys.argv[2]; PORT = int(sys.argv[3]) if len(sys.argv) > 3 else 17821
def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        p = f.read().rsplit(")", 1)[1].split()
    cpu = (int(p[11]) + int(p[12])) / os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/status") as f:
        hwm = [int(l.split()[1]) // 1024 for l in f if l.startswith("VmHWM")][0]
    return cpu, hwm
def serve(pool):
    p = subprocess.Popen([BIN, "serve", "--data", DATA, "--listen", f"127.0.0.1:{PORT}", "--memory-pool-max", pool],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=0.2).close(); return p
        except OSError: time.sleep(0.1)
    raise SystemExit("no server")
SETUP = "UNWIND range(1, 2000000) AS i CALL { WITH i CREATE (:L {x: i}) } IN TRANSACTIONS OF 200000 ROWS"
Q = {
 "sort 5 M rows": "UNWIND range(1, 5000) AS a UNWIND range(1, 1000) AS b RETURN a, b ORDER BY (a * 7919 + b * 31) % 100003 SKIP 4999999",
 "distinct 2 M string keys": "UNWIND range(0, 1999) AS a UNWIND range(1, 1000) AS b WITH DISTINCT toString(a * 1000 + b) AS k RETURN count(*) AS n",
 "aggregation 2 M groups": "UNWIND range(0, 1999) AS a UNWIND range(1, 1000) AS b WITH (a * 1000 + b) * 7919 % 2000003 AS k, count(*) AS c RETURN count(*) AS n, sum(c) AS s",
 "fused scan aggregation 2 M groups": "MATCH (n:L) WITH n.x * 7919 % 2000003 AS k, count(*) AS c RETURN count(*) AS n, sum(c) AS s",
}
if not os.path.exists(DATA):
    p = serve("3g")
    with GraphDatabase.driver(f"bolt://127.0.0.1:{PORT}", auth=None) as d, d.session() as s:
        s.run(SETUP).consume()
    p.terminate(); p.wait()
for name, q in Q.items():
    for pool in ["3g", "32m"]:
        p = serve(pool)
        try:
            c0, h0 = stat(p.pid)
            t0 = time.time()
            with GraphDatabase.driver(f"bolt://127.0.0.1:{PORT}", auth=None) as d, d.session() as s:
                try:
                    r = [x.values() for x in s.run(q)]
                except Exception as e:
                    r = f"ERROR {type(e).__name__}: {str(e)[:100]}"
            c1, h1 = stat(p.pid)
            print(f"{name}\t{pool}\tcpu {c1 - c0:.2f} s\twall {time.time() - t0:.1f} s\tVmHWM {h1} MiB (idle {h0})\t{r}\tload {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            p.terminate(); p.wait()
        left = [f for f in os.listdir(DATA)]
print("data dir:", sorted(left))
