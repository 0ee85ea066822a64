"""The B2B top-k aggregation against one `arbor serve`, with its memory settings: wall, server CPU
(`/proc/PID/stat`), RSS and VmHWM per query, or the error (`MemoryPoolOutOfMemoryError` when the
grouping does not fit the query pool).

    python3 bench/topk_pool.py --arbor BIN --store STORE --port 17860 --memory-limit 2G \
        [--memory-pool-max 256m] [--n-topk 2] [--repeat 2]

The activities are `bench/cliff.py`'s stream (seed 7), so runs compare with the cliff and B2B tables.
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cliff  # noqa: E402
from neo4j import GraphDatabase  # noqa: E402


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) // 1024
    return -1


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().split(")")[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arbor", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--port", type=int, default=17860)
    ap.add_argument("--memory-limit", default="2G")
    ap.add_argument("--memory-pool-max")
    ap.add_argument("--n-topk", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    cmd = [args.arbor, "serve", "--data", args.store, "--listen", f"127.0.0.1:{args.port}",
           "--memory-limit", args.memory_limit]
    if args.memory_pool_max:
        cmd += ["--memory-pool-max", args.memory_pool_max]
    log = open(os.path.join(args.store, "..", f"topk-serve-{args.port}.log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=log)
    uri = f"bolt://127.0.0.1:{args.port}"
    try:
        cliff.wait_bolt(uri, proc, log.name)
        d = GraphDatabase.driver(uri, auth=None)
        q = cliff.QUERIES["topk"][0]
        print(f"{' '.join(cmd[1:])}: RSS {status(proc.pid, 'VmRSS')} MiB, load {os.getloadavg()}", flush=True)
        for _ in range(args.repeat):
            for aid in cliff.params(200, args.n_topk, 7)["topk"]:
                c0, t0 = cpu(proc.pid), time.time()
                try:
                    with d.session() as s:
                        res = s.run(q, id=aid).values()[:3]
                except Exception as e:  # the error is the measurement
                    res = "ERROR " + str(e)[:200]
                print(f"id={aid} wall {time.time() - t0:.2f} s, CPU {cpu(proc.pid) - c0:.2f} s, "
                      f"RSS {status(proc.pid, 'VmRSS')} MiB, VmHWM {status(proc.pid, 'VmHWM')} MiB: {res}",
                      flush=True)
        print(f"load {os.getloadavg()}")
        d.close()
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
