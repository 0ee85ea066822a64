#!/usr/bin/env python3
"""Server CPU per auto-commit write, per server thread (utime + stime from /proc/PID/task/*/stat).

One Bolt session (official Python driver), 200 warm-up commits, then N timed ones; the resolution is
one clock tick (10 ms) over N commits.

usage: python3 bench/commit_cpu.py BIN DURABILITY N [QUERY] [PORT]
  e.g. python3 bench/commit_cpu.py target/release/arbor sync 3000
"""
import os, shutil, signal, socket, subprocess, sys, tempfile, time
from neo4j import GraphDatabase
BIN, DUR, N = sys.argv[1], sys.argv[2], int(sys.argv[3])
Q = sys.argv[4] if len(sys.argv) > 4 else "CREATE (:N {id: $i})"
PORT = int(sys.argv[5]) if len(sys.argv) > 5 else 17831
tmp = tempfile.mkdtemp(prefix="commit-cpu-")
d = os.path.join(tmp, "db")
p = subprocess.Popen([BIN, "serve", "--data", d, "--listen", f"127.0.0.1:{PORT}", "--durability", DUR],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(300):
    s = socket.socket()
    if s.connect_ex(("127.0.0.1", PORT)) == 0:
        s.close(); break
    s.close(); time.sleep(0.1)
TCK = os.sysconf("SC_CLK_TCK")
def threads():
    out = {}
    for t in os.listdir(f"/proc/{p.pid}/task"):
        try:
            st = open(f"/proc/{p.pid}/task/{t}/stat").read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        f = st[st.rindex(")") + 2:].split()
        out[t] = (comm, int(f[11]), int(f[12]))
    return out
def tot():
    f = open(f"/proc/{p.pid}/stat").read()
    f = f[f.rindex(")") + 2:].split()
    return int(f[11]), int(f[12])
with GraphDatabase.driver(f"bolt://127.0.0.1:{PORT}", auth=None) as drv, drv.session(database="neo4j") as s:
    s.run("CREATE (:N {id: -1})").consume()
    for i in range(200):
        s.run(Q, i=i).consume()
    a, ta, w0 = tot(), threads(), time.time()
    for i in range(N):
        s.run(Q, i=i).consume()
    b, tb, w1 = tot(), threads(), time.time()
p.send_signal(signal.SIGTERM); p.wait(30)
us = lambda ticks: ticks * 1e6 / TCK / N
print(f"{DUR}: N={N} server utime {us(b[0]-a[0]):.1f} us stime {us(b[1]-a[1]):.1f} us total {us(b[0]-a[0]+b[1]-a[1]):.1f} us/commit; wall {1e6*(w1-w0)/N:.0f} us/commit")
by = {}
for t, (c, u, st) in tb.items():
    c0, u0, s0 = ta.get(t, (c, 0, 0))
    x = by.setdefault(c, [0, 0]); x[0] += u - u0; x[1] += st - s0
for c, (u, st) in sorted(by.items(), key=lambda kv: -sum(kv[1])):
    if u + st:
        print(f"   {c:20s} user {us(u):7.1f} sys {us(st):7.1f}")
shutil.rmtree(tmp, ignore_errors=True)
