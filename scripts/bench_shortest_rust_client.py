#!/usr/bin/env python3
"""The per-row `allShortestPaths` form of `bench_csv_shortest.py` through a compiled client.

    python3 scripts/bench_shortest_rust_client.py --arbor-bin target/release/arbor \
        --arbor bolt://127.0.0.1:P --neo4j bolt://127.0.0.1:Q [--calls 10]

Runs the script's "rows: allShortest *..4 ids" query (same pairs: seed 18, 100 per call) on
both servers, which must hold the data `bench_csv_shortest.py --keep` left, through `arbor
shell -a ADDRESS -P 'pairs => [...]'` (Arbor's own Rust Bolt client, one process per query,
the same for both servers; its start-up is inside the wall), alternating which server goes
first. Prints per server: the wall, the server's CPU (`/proc/PID/stat`), the client's CPU
(the shell processes') and the output lines (the same rows on both: checked). This separates
the servers' difference from the Python driver's decoding, which bounds the Python script's
wall ratio on this form.
"""

import argparse
import os
import random
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_csv_shortest import QUERIES, cpu_seconds, listening_pid  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arbor-bin", required=True)
    ap.add_argument("--arbor", required=True)
    ap.add_argument("--neo4j", required=True)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--seed", type=int, default=18)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    n = args.rows * args.calls
    pairs = [(rng.randint(1, 100000), rng.randint(1, 100000)) for _ in range(n)]
    query = QUERIES["rows: allShortest *..4 ids"]
    targets = [("arbor", args.arbor), ("neo4j", args.neo4j)]
    pids = {name: listening_pid(addr) for name, addr in targets}
    res = {name: [0.0, 0.0, 0.0, 0] for name, _ in targets}
    for call in range(args.calls):
        chunk = pairs[call * args.rows : (call + 1) * args.rows]
        lit = "[" + ",".join(f"[{a},{b}]" for a, b in chunk) + "]"
        outputs = {}
        for name, addr in targets if call % 2 == 0 else targets[::-1]:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            c0, t0 = cpu_seconds(pids[name]), time.perf_counter()
            out = subprocess.run(
                [args.arbor_bin, "shell", "-a", addr, "--format", "plain",
                 "-P", f"pairs => {lit}", query],
                capture_output=True, text=True,
            )
            t1, c1 = time.perf_counter(), cpu_seconds(pids[name])
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if out.returncode:
                sys.exit(f"{name}: {out.stderr[:500]}")
            r = res[name]
            r[0] += t1 - t0
            r[1] += c1 - c0
            r[2] += (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
            r[3] += out.stdout.count("\n")
            outputs[name] = sorted(out.stdout.splitlines())
        if outputs["arbor"] != outputs["neo4j"]:
            print(f"  MISMATCH in call {call}", file=sys.stderr)
    for name, (wall, server, client, lines) in res.items():
        print(f"{name}: wall {wall:.2f} s, server CPU {server:.2f} s, "
              f"client CPU {client:.2f} s, output lines {lines}")
    a, o = res["arbor"], res["neo4j"]
    print(f"wall ratio {o[0] / a[0]:.1f}x, server CPU ratio {o[1] / a[1]:.1f}x; "
          f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
