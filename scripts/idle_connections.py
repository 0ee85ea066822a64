#!/usr/bin/env python3
"""Holds N idle Bolt connections open against a fresh `arbor serve`, then reports the server's
threads and RSS (per connection, over a baseline) and how long a new client's `RETURN 1` takes.

    python3 scripts/idle_connections.py --bin target/release/arbor --n 10000 [--mode idle|half-open]

`idle`: handshake + HELLO answered (logged in, between messages). `half-open`: the 20-byte
handshake only (spread over several loopback source addresses, since a server caps connections
per address that have not logged in). Uses raw sockets (Bolt 4.4), not a driver, so the client
side stays small. Starts and stops its own server on a free port; deletes its data directory.

    python3 scripts/idle_connections.py --n 10000 --alternate 3 --samples 100

`--alternate R`: R rounds in one server run, each measuring `--samples` new clients' `RETURN 1`
without the N connections, then with them (opened, settled, parked), then closing them; prints
the median and p99 of each condition over all rounds.
"""
import argparse, os, resource, shutil, socket, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bolt_raw import HANDSHAKE, PULL_ALL, free_port, hello, read_message, recv_exact, run_msg  # noqa: E402

HELLO = hello("idle/1")
RUN = run_msg("RETURN 1")
PULL = PULL_ALL


def open_conn(port, mode, src):
    s = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(src, 0))
    s.sendall(HANDSHAKE)
    recv_exact(s, 4)
    if mode == "idle":
        s.sendall(HELLO)
        reply = read_message(s)
        if reply[1] != 0x70:
            raise RuntimeError(f"HELLO failed: {reply!r}")
    return s


def server_stats(pid):
    threads = rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                threads = int(line.split()[1])
            elif line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return threads, rss


def query_latency(port):
    t = time.perf_counter()
    s = open_conn(port, "idle", "127.0.0.1")
    s.sendall(RUN + PULL)
    msgs = [read_message(s) for _ in range(3)]
    dt = time.perf_counter() - t
    s.close()
    assert msgs[0][1] == 0x70 and msgs[1][1] == 0x71 and msgs[2][1] == 0x70, msgs
    return dt


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] * 1000


def alternate(a, port, pid):
    without, with_ = [], []
    for r in range(a.alternate):
        without += [query_latency(port) for _ in range(a.samples)]
        conns = []
        try:
            t = time.perf_counter()
            for i in range(a.n):
                src = "127.0.0.1" if a.mode == "idle" else f"127.0.{1 + i // 200}.{2 + i % 200}"
                conns.append(open_conn(port, a.mode, src))
            opened = time.perf_counter() - t
            time.sleep(a.settle)
            threads, rss = server_stats(pid)
            with_ += [query_latency(port) for _ in range(a.samples)]
        finally:
            for c in conns:
                c.close()
        print(f"round {r + 1}: {a.n} {a.mode} opened in {opened:.1f}s; server {threads} threads, "
              f"{rss} KiB RSS with them open", flush=True)
        time.sleep(a.settle)
    for name, xs in (("without", without), (f"with {a.n} {a.mode}", with_)):
        print(f"new client RETURN 1 (connect+hello+run+pull) {name}: n={len(xs)} "
              f"median {pct(xs, 50):.2f} ms, p99 {pct(xs, 99):.2f} ms, max {pct(xs, 100):.2f} ms")
    print(f"ratio of medians with/without: {pct(with_, 50) / pct(without, 50):.2f}, "
          f"p99: {pct(with_, 99) / pct(without, 99):.2f}; load {os.getloadavg()[0]:.1f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/arbor")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--mode", choices=["idle", "half-open"], default="idle")
    ap.add_argument("--settle", type=float, default=3.0, help="seconds to wait before measuring")
    ap.add_argument("--alternate", type=int, default=0, help="rounds of without/with (see above)")
    ap.add_argument("--samples", type=int, default=100, help="new clients per condition and round")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, a.n + 1000)), hard))
    port, http = free_port(), free_port()
    data = tempfile.mkdtemp(prefix="arbor-idle-")
    # The server inherits the raised limit; it needs a descriptor per connection (plus dups).
    args = [a.bin, "serve", "--data", data, "--listen", f"127.0.0.1:{port}"]
    usage = subprocess.run([a.bin, "serve", "--help"], capture_output=True, text=True).stdout
    if "--max-connections" in usage:  # older builds: a fixed cap of 1,000
        args += ["--max-connections", str(a.n + 100)]
    if "--http-listen" in usage:
        args += ["--http-listen", f"127.0.0.1:{http}"]
    srv = subprocess.Popen(args,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    conns = []
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(a.settle)
        if a.alternate:
            alternate(a, port, srv.pid)
            return 0
        base_threads, base_rss = server_stats(srv.pid)
        base_latency = min(query_latency(port) for _ in range(5))
        t = time.perf_counter()
        for i in range(a.n):
            src = "127.0.0.1" if a.mode == "idle" else f"127.0.{1 + i // 200}.{2 + i % 200}"
            conns.append(open_conn(port, a.mode, src))
        opened = time.perf_counter() - t
        time.sleep(a.settle)
        threads, rss = server_stats(srv.pid)
        latencies = sorted(query_latency(port) for _ in range(20))
        print(f"mode={a.mode} connections={a.n} opened_in={opened:.1f}s")
        print(f"server threads: {base_threads} before, {threads} with the connections open")
        print(f"server RSS: {base_rss} KiB before, {rss} KiB after, "
              f"{(rss - base_rss) / a.n:.1f} KiB per connection")
        for c in conns:
            c.close()
        conns = []
        time.sleep(a.settle)
        after = sorted(query_latency(port) for _ in range(20))
        print(f"new client RETURN 1 (connect+hello+run+pull): {base_latency * 1000:.2f} ms before "
              f"(best of 5), median {latencies[10] * 1000:.2f} ms / max {latencies[-1] * 1000:.2f} ms "
              f"with them open, median {after[10] * 1000:.2f} ms after they closed")
    finally:
        for c in conns:
            c.close()
        srv.terminate()
        srv.wait(timeout=60)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
