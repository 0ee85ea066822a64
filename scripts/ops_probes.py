#!/usr/bin/env python3
"""Tries a fresh `arbor serve` the way a bad client and a careless user would, and prints what
happened to each probe (outcome, error code, time, server RSS). Issue 20's "done means" list.

    python3 scripts/ops_probes.py --bin target/release/arbor [--pool 1g --tx 512m] [--only NAME]

Bad clients (raw sockets, Bolt 4.4): a slow-loris handshake (one byte a second), an oversized
message (65 MiB), garbage after HELLO, a disconnect in the middle of a large stream. Huge
queries (official Python driver): an unbounded collect, a collected 10k x 10k cartesian product,
20,000 UNION branches, a deep variable-length expansion over a small complete graph, a huge
UNWIND range (streamed, and materialised), string doubling. After each probe the server must
still answer `RETURN 1`. Starts its own server on a free port with --memory-pool-max/
--transaction-memory-max, --transaction-timeout 20s and --handshake-timeout 3s; deletes its data
directory. The full-disk probe is a test: tests/cli/test_full_disk.py.
"""
import argparse, os, random, shutil, socket, struct, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bolt_raw import HANDSHAKE, PULL_ALL, chunked, free_port, hello, read_message, run_msg  # noqa: E402

from neo4j import GraphDatabase
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

HELLO = hello("probe/1")


def rss(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) // 1024
    return out


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def connect(port, hello=True):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(HANDSHAKE)
    assert s.recv(4) == b"\x00\x00\x04\x04"
    if hello:
        s.sendall(HELLO)
        read_message(s)
    return s


def closed_after(s, limit):
    """Seconds until the server closes `s` (reading and dropping what it sends)."""
    t = time.perf_counter()
    s.settimeout(limit)
    try:
        while s.recv(65536):
            pass
    except socket.timeout:
        return None
    except OSError:
        pass
    return time.perf_counter() - t


def failure_code(msg):
    i = msg.find(b"Neo.")
    if i < 0:
        return ""
    j = i
    while j < len(msg) and 32 < msg[j] < 127:
        j += 1
    return msg[i:j].decode()


# ---- bad clients --------------------------------------------------------------------------

def slow_loris(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    t = time.perf_counter()
    try:
        for b in HANDSHAKE:
            s.sendall(bytes([b]))
            time.sleep(1)
    except OSError:
        pass
    left = closed_after(s, 30)
    took = time.perf_counter() - t
    return ("closed" if left is not None else "still open"), "", took


def oversized(port):
    s = connect(port)
    t = time.perf_counter()
    body = b"\xb3\x10\xd2" + struct.pack(">I", 65 << 20) + b"a" * (65 << 20)
    code = ""
    try:
        s.sendall(chunked(body))
        code = failure_code(read_message(s))
    except OSError as e:
        code = f"({e.__class__.__name__})"
    left = closed_after(s, 30)
    return ("FAILURE, then closed" if left is not None else "left open"), code, time.perf_counter() - t


def garbage_after_hello(port):
    s = connect(port)
    t = time.perf_counter()
    rnd = random.Random(7)
    junk = bytes(rnd.randrange(256) for _ in range(4096))
    code = ""
    try:
        s.sendall(b"\x00\x40" + junk[:64] + b"\x00\x00" + junk)
        code = failure_code(read_message(s))
    except OSError:
        pass
    left = closed_after(s, 30)
    return ("closed" if left is not None else "left open"), code, time.perf_counter() - t


# 25 M rows streamed from two small ranges (nothing is materialised: a single range of 2e7 would
# be a 2e7-element list, refused by the transaction memory limit before the first record).
STREAM = "UNWIND range(1, 5000) AS a UNWIND range(1, 5000) AS b RETURN a, b, 'padding padding' AS p"


def other_transactions(port):
    """`SHOW TRANSACTIONS` rows other than the one asking."""
    with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
        rows = d.execute_query("SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery").records
    return [r["currentQuery"] for r in rows if "SHOW TRANSACTIONS" not in r["currentQuery"]]


def disconnect_mid_stream(port, pid):
    """Streams a 25 M-row result, reads 20,000 records, closes the socket: the server must stop
    the query (no CPU), end its transaction (SHOW TRANSACTIONS lists nothing else) and give its
    memory back."""
    before = rss(pid)["VmRSS"]
    s = connect(port)
    s.sendall(run_msg(STREAM) + PULL_ALL)
    records = 0
    while records < 20000:
        m = read_message(s)
        if m[1] == 0x71:
            records += 1
        elif m[1] == 0x7F:
            return "RUN failed", failure_code(m), 0.0
    during = other_transactions(port)
    t = time.perf_counter()
    s.close()
    time.sleep(1.0)
    c0 = cpu_seconds(pid)
    time.sleep(2.0)
    busy = (cpu_seconds(pid) - c0) / 2.0
    left = other_transactions(port)
    after = rss(pid)["VmRSS"]
    return (f"{records} records read, then closed; while streaming SHOW TRANSACTIONS listed "
            f"{len(during)} other, after the close {len(left)}; server CPU after close "
            f"{busy * 100:.0f}% of a core; RSS {before} -> {after} MiB"), "", time.perf_counter() - t


# ---- huge queries -------------------------------------------------------------------------

def union_query(n):
    return " UNION ".join(f"RETURN {i} AS x" for i in range(n))


HUGE = [
    ("unbounded collect", "UNWIND range(1, 100000000) AS x WITH collect(x) AS c RETURN size(c)"),
    ("cartesian 10k x 10k, collected",
     "UNWIND range(1, 10000) AS a UNWIND range(1, 10000) AS b WITH collect([a, b]) AS c RETURN size(c)"),
    ("cartesian 10k x 10k, sorted",
     "UNWIND range(1, 10000) AS a UNWIND range(1, 10000) AS b RETURN a, b ORDER BY a * b DESC LIMIT 1"),
    ("20,000 UNION branches", union_query(20000)),
    ("deep var-length, collected paths",
     "MATCH p = (a:OPS4_K {i: 0})-[:OPS4_E*1..12]->(b) RETURN size(collect(p))"),
    ("deep var-length, counted", "MATCH (a:OPS4_K {i: 0})-[:OPS4_E*1..12]->(b) RETURN count(*)"),
    ("huge UNWIND range, streamed", "UNWIND range(1, 100000000000) AS x RETURN count(x)"),
    ("huge range, materialised", "RETURN size(range(1, 2000000000))"),
    ("string doubling", "RETURN size(reduce(s = 'ab', i IN range(1, 40) | s + s))"),
]


def huge(driver, q):
    t = time.perf_counter()
    try:
        records, _, _ = driver.execute_query(q)
        return f"answered {records[0][0]}", "", time.perf_counter() - t
    except (Neo4jError, ServiceUnavailable, SessionExpired) as e:
        return "error", getattr(e, "code", None) or e.__class__.__name__, time.perf_counter() - t


def alive(port):
    with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
        return d.execute_query("RETURN 1 AS x").records[0]["x"] == 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/arbor")
    ap.add_argument("--pool", default="1g", help="--memory-pool-max")
    ap.add_argument("--tx", default="512m", help="--transaction-memory-max")
    ap.add_argument("--only", default="", help="run only the probes whose name contains this")
    a = ap.parse_args()
    port = free_port()
    data = tempfile.mkdtemp(prefix="arbor-probes-")
    srv = subprocess.Popen([a.bin, "serve", "--data", data, "--listen", f"127.0.0.1:{port}",
                            "--http-listen", "off", "--memory-pool-max", a.pool,
                            "--transaction-memory-max", a.tx, "--transaction-timeout", "20s",
                            "--handshake-timeout", "3s"],
                           stdout=subprocess.DEVNULL, stderr=open(data + ".log", "wb"))
    rows = []
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if srv.poll() is not None:
                    with open(data + ".log", errors="replace") as f:
                        tail = f.read()[-2000:]
                    sys.exit(f"the server exited with {srv.returncode} before listening:\n{tail}")
                time.sleep(0.1)
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            # K12: 12 nodes, every ordered pair connected (12! / k! simple paths of length 12 - k).
            d.execute_query("UNWIND range(0, 11) AS i CREATE (:OPS4_K {i: i})")
            d.execute_query("MATCH (a:OPS4_K), (b:OPS4_K) WHERE a <> b CREATE (a)-[:OPS4_E]->(b)")
        base = rss(srv.pid)
        print(f"server RSS at start {base['VmRSS']} MiB; pool {a.pool}, per transaction {a.tx}",
              flush=True)
        probes = [
            ("slow-loris handshake (1 byte/s, deadline 3s)", lambda: slow_loris(port)),
            ("oversized message (65 MiB)", lambda: oversized(port)),
            ("garbage after HELLO (4 KiB random)", lambda: garbage_after_hello(port)),
            ("disconnect mid-stream (25 M-row result)", lambda: disconnect_mid_stream(port, srv.pid)),
        ]
        # No driver retries: each probe's time is the server's answer to one attempt.
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None,
                                  max_transaction_retry_time=0) as d:
            probes += [(name, lambda q=q: huge(d, q)) for name, q in HUGE]
            for name, probe in [p for p in probes if a.only in p[0]]:
                outcome, code, took = probe()
                mem = rss(srv.pid)
                ok = srv.poll() is None and alive(port)
                rows.append((name, outcome, code, took, mem["VmRSS"], mem["VmHWM"], ok))
                print(f"| {name} | {outcome} | {code} | {took:.1f} s | {mem['VmRSS']} MiB "
                      f"(peak {mem['VmHWM']}) | {'yes' if ok else 'NO'} |", flush=True)
        print(f"load {os.getloadavg()[0]:.1f}")
    finally:
        srv.terminate()
        try:
            code = srv.wait(timeout=60)
            print(f"SIGTERM: exited {code}")
        except subprocess.TimeoutExpired:
            srv.kill()
            print("SIGTERM: did not exit within 60 s")
        shutil.rmtree(data, ignore_errors=True)
        if os.path.exists(data + ".log"):
            os.remove(data + ".log")
    return 0 if all(r[-1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
