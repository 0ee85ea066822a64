"""RSS after a live load and after deletes: start `arbor serve` (BIN) on a fresh dir, load Pokec
medium over Bolt with the mgBench loader, sample VmRSS / VmHWM, delete half the users in batches,
sample again, restart and sample. Usage: rss_live_load.py BIN PORT OUTDIR [extra serve flags...]
(`arbor-bench` is taken from BIN's directory; mgBench's data set is cached in $MG_WORK, default
target/mg-work). BENCHMARKS.md, "Memory", reports its output."""
import os, subprocess, sys, time, shutil, socket
from neo4j import GraphDatabase

bin_, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
extra = sys.argv[4:]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
data = os.path.join(out, "data")
log = open(os.path.join(out, "serve.log"), "w")
env = dict(os.environ)
proc = subprocess.Popen([bin_, "serve", "--data", data, "--listen", f"127.0.0.1:{port}", *extra],
                        stdout=log, stderr=log, env=env)
while True:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close(); break
    except OSError:
        time.sleep(0.1)

def mem():
    d = {}
    for line in open(f"/proc/{proc.pid}/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM"):
            d[k] = int(v.split()[0]) / 1024
    return d

def say(what):
    m = mem()
    line = f"{what:28s} RSS {m['VmRSS']:7.1f} MiB  peak {m['VmHWM']:7.1f} MiB  load {os.getloadavg()[0]:.1f}"
    print(line, flush=True)

time.sleep(1)
say("empty")
t = time.time()
bench = os.path.join(os.path.dirname(os.path.abspath(bin_)), "arbor-bench")
subprocess.run([bench, "mgbench", "--uri", f"bolt://127.0.0.1:{port}",
                "--server-pid", str(proc.pid), "--dataset", "medium", "--queries", "Q23", "--count", "10",
                "--work-dir", os.environ.get("MG_WORK", "target/mg-work"), "--targets", "arbor", "--no-verify"],
               stdout=open(os.path.join(out, "mg.log"), "w"), stderr=subprocess.STDOUT, check=True)
say(f"loaded ({time.time()-t:.0f} s)")
time.sleep(10); say("loaded +10 s")
time.sleep(20); say("loaded +30 s")
with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
    with d.session() as s:
        n = 0
        while True:
            c = s.run("MATCH (n:User) WHERE n.id % 2 = 0 WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS c").single()["c"]
            n += c
            if c == 0: break
        print("deleted users:", n)
say("deleted")
time.sleep(10); say("deleted +10 s")
time.sleep(20); say("deleted +30 s")
proc.terminate(); proc.wait()
proc = subprocess.Popen([bin_, "serve", "--data", data, "--listen", f"127.0.0.1:{port}", *extra],
                        stdout=log, stderr=log)
while True:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close(); break
    except OSError:
        time.sleep(0.1)
time.sleep(2); say("restarted")
proc.terminate(); proc.wait()
