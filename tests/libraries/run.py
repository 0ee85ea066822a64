#!/usr/bin/env python3
"""Run the Neo4j libraries' own integration test suites against `arbor serve` and Neo4j 5.26.

Usage:  python3 tests/libraries/run.py --src /work/libsrc [--targets arbor,neo4j] [--libs ...]
See tests/libraries/README.md for how to obtain the suites (sdists from PyPI, one from GitHub).
Standard library only; each library gets its own venv ($LIB_VENV/<lib>, default /tmp/libvenv-<lib>)
because their pinned `neo4j` driver versions conflict.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ANCHOR = "/work/shared/anchors/neo4j/neo4j-anchor"

# key: suite directory (under --src), pytest paths, password the suite expects, env builder.
SUITES = {
    "langchain": {
        "name": "langchain-neo4j 0.11.0",
        "dir": "langchain_neo4j-0.11.0",
        "paths": ["tests/integration_tests"],
        "password": "password",
        "env": lambda a, pw: {"NEO4J_URI": f"bolt://{a}", "NEO4J_USERNAME": "neo4j",
                              "NEO4J_PASSWORD": pw},
    },
    "neomodel": {
        "name": "neomodel 7.0.0",
        "dir": "neomodel-7.0.0",
        "paths": ["test"],
        "password": "foobarbaz",
        # mocks that assert the configured URL is neomodel's default `...@localhost:7687`
        "default_port_tests": [
            "test/async_/test_connection.py::test_ensure_connection_decorator_no_driver",
            "test/sync_/test_connection.py::test_ensure_connection_decorator_no_driver",
            "test/sync_/test_core_additional.py::test_ensure_connection_decorator_no_driver",
        ],
        "default_url": "bolt://neo4j:{pw}@localhost:7687",
        "env": lambda a, pw: {"NEO4J_BOLT_URL": f"bolt://neo4j:{pw}@{a}",
                              "NEOMODEL_DATABASE_URL": f"bolt://neo4j:{pw}@{a}",
                              "NEO4J_URL": f"bolt://{a}", "NEO4J_USERNAME": "neo4j",
                              "NEO4J_PASSWORD": pw},
    },
    "graphrag": {
        "name": "neo4j-graphrag 1.21.0",
        "dir": "neo4j_graphrag-1.21.0",
        "paths": ["tests/e2e"],
        "password": "password",
        "env": lambda a, pw: {"NEO4J_URI": f"neo4j://{a}", "NEO4J_USERNAME": "neo4j",
                              "NEO4J_PASSWORD": pw},
    },
    "llamaindex": {
        "name": "llama-index-graph-stores-neo4j 0.8.0",
        "dir": "llama_index_neo4j_tests",
        "paths": ["tests"],
        "password": "password",
        "env": lambda a, pw: {"NEO4J_URI": f"bolt://{a}", "NEO4J_USERNAME": "neo4j",
                              "NEO4J_PASSWORD": pw, "NEO4J_TEST_URL": f"bolt://{a}",
                              "NEO4J_TEST_USER": "neo4j", "NEO4J_TEST_PASSWORD": pw},
    },
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"server not listening on {port} after {timeout}s")


class Arbor:
    """A fresh `arbor serve` (basic auth, temp data dir) per suite."""

    def __init__(self, binary, password, workdir):
        self.port = free_port()
        self.data = tempfile.mkdtemp(prefix="arbor-lib-", dir=workdir)
        self.log = open(os.path.join(self.data, "serve.log"), "w")
        cmd = [binary, "serve", "--data", os.path.join(self.data, "db"),
               "--listen", f"127.0.0.1:{self.port}", "--auth", "basic",
               "--initial-password", password, "--durability", "off"]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        wait_port(self.port, self.proc, 60)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)


class Neo4jAnchor:
    """The Neo4j 5.26 anchor (auth off: any password is accepted), fresh per suite."""

    def __init__(self, workdir, timeout):
        self.port = free_port()
        self.data = tempfile.mkdtemp(prefix="neo4j-lib-", dir=workdir)
        self.logpath = os.path.join(self.data, "anchor.log")
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen([ANCHOR, "serve", "--port", str(self.port), "--data",
                                      os.path.join(self.data, "home"), "--heap", "1g"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        end = time.time() + timeout
        while "NEO4J_ANCHOR_READY" not in open(self.logpath).read():
            if self.proc.poll() is not None or time.time() > end:
                self.stop()
                raise RuntimeError(f"Neo4j anchor did not start; see {self.logpath}")
            time.sleep(1)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)


class RunningNeo4j:
    """An already running Neo4j (`--neo4j-addr`), emptied before each suite."""

    CLEAR = (
        "import sys, neo4j\n"
        "d = neo4j.GraphDatabase.driver('bolt://' + sys.argv[1], auth=('neo4j', sys.argv[2]))\n"
        "d.execute_query('MATCH (n) DETACH DELETE n')\n"
        "for kind in ('CONSTRAINTS', 'INDEXES'):\n"
        "    for r in d.execute_query('SHOW ' + kind).records:\n"
        "        if kind == 'INDEXES' and r['type'] == 'LOOKUP':\n"
        "            continue\n"
        "        d.execute_query('DROP ' + kind[:-1].rstrip('E') + ' `' + r['name'] + '` IF EXISTS')\n"
        "d.close()\n"
    )

    def __init__(self, addr, python, password):
        self.port = int(addr.rsplit(":", 1)[1])
        subprocess.run([python, "-c", self.CLEAR, addr, password], check=True, timeout=300)

    def stop(self):
        pass


def read_exclusions(lib):
    """Pytest arguments for the exclusions of one library (see exclusions.txt)."""
    args, markers = [], []
    for line in open(os.path.join(HERE, "exclusions.txt")):
        line = line.split("#", 1)[0] if line.startswith("#") else line
        if not line.strip():
            continue
        spec = line.split("|", 1)[0].split(None, 2)
        if spec[0] != lib:
            continue
        kind, target = spec[1], spec[2].strip()
        if kind == "ignore":
            args.append(f"--ignore={target}")
        elif kind == "deselect":
            args += ["--deselect", target]
        elif kind == "marker":
            markers.append(f"({target})")
    if markers:
        args += ["-m", " and ".join(markers)]
    return args


def venv_python(lib):
    base = os.environ.get("LIB_VENV")
    root = os.path.join(base, lib) if base else f"/tmp/libvenv-{lib}"
    return os.path.join(root, "bin", "python")


class Forwarder:
    """Relays 127.0.0.1:<listen> to the target server, so tests that hard-code a client default
    (neomodel's `localhost:7687`) reach the server under test. `None` when the port is taken."""

    @staticmethod
    def start(listen, addr):
        host, port = addr.rsplit(":", 1)
        try:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", listen))
        except OSError:
            sock.close()
            return None
        sock.listen(16)
        fwd = Forwarder()
        fwd.sock, fwd.target = sock, (host, int(port))
        threading.Thread(target=fwd.accept_loop, daemon=True).start()
        return fwd

    def accept_loop(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return  # closed by stop()
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def pipe(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(self):
        self.sock.close()


def run_pytest(lib, target, env, extra, xml, log, args):
    """One pytest run of a suite; returns its parsed junit xml."""
    suite = SUITES[lib]
    cwd = os.path.join(args.src, suite["dir"])
    cmd = [venv_python(lib), "-m", "pytest", "-p", "no:cacheprovider", "-p", "redirect_plugin",
           "-q", "-rN", f"--junitxml={xml}", "-o", "junit_family=xunit1",
           f"--timeout={args.test_timeout}"] + extra
    t0 = time.time()
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT)
        try:
            proc.wait(args.suite_timeout)
        except subprocess.TimeoutExpired:
            # SIGINT: pytest stops and still writes the junit xml for the tests it ran.
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            fh.write(f"\nSUITE TIMEOUT after {args.suite_timeout}s (interrupted)\n")
    print(f"  {lib} on {target}: {time.time() - t0:.0f}s, log {log}", flush=True)
    return parse_junit(xml)


def run_suite(lib, target, addr, password, args):
    suite = SUITES[lib]
    env = dict(os.environ)
    env.update(suite["env"](addr, password))
    env["LIB_TARGET_ADDR"] = addr
    # console scripts of the library (neomodel's test_scripts.py runs `neomodel_install_labels`)
    env["PATH"] = os.path.dirname(venv_python(lib)) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    base = os.path.join(args.out, f"{lib}-{target}")
    pinned = suite.get("default_port_tests", [])
    fwd = Forwarder.start(7687, addr) if pinned else None
    if pinned and fwd is None:
        print(f"  {lib}: 127.0.0.1:7687 is taken; {len(pinned)} tests run on the free port "
              "(their mocks expect localhost:7687 and fail)", flush=True)
    deselect = [a for t in pinned for a in ("--deselect", t)] if fwd else []
    res = run_pytest(lib, target, env, suite["paths"] + read_exclusions(lib) + deselect,
                     base + ".xml", base + ".log", args)
    if fwd:
        try:
            env2 = dict(env)
            env2.update(suite["env"]("localhost:7687", password))
            env2["NEO4J_BOLT_URL"] = suite["default_url"].format(pw=password)
            env2["NEOMODEL_DATABASE_URL"] = env2["NEO4J_BOLT_URL"]
            res.update(run_pytest(lib, target, env2, pinned, base + "-7687.xml",
                                  base + "-7687.log", args))
        finally:
            fwd.stop()
    return res


def parse_junit(path):
    """{test id: (outcome, first line of the message)} from a junit xml."""
    results = {}
    if not os.path.exists(path):
        return results
    for case in ET.parse(path).getroot().iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        outcome, msg = "pass", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "fail", "error": "error", "skipped": "skip"}[child.tag]
                msg = first_error_line(child.get("message") or "", child.text or "")
                break
        if outcome == "error" and tid in results:  # teardown error after a result
            outcome = results[tid][0] if results[tid][0] != "pass" else "error"
        results[tid] = (outcome, msg)
    return results


def first_error_line(message, text):
    """The server's error (status code, message and the offending Cypher line) when the failure
    came from the database, else the first line of pytest's message."""
    lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    for i, ln in enumerate(lines):
        m = re.search(r"\{(?:neo4j_)?code: ([^}]*)\} \{message: (.*)", ln)
        if m:
            quoted = next((q for q in lines[i + 1:i + 3] if q.startswith('"')), "")
            body = m.group(2).split("} {gql_status")[0].rstrip("}")
            return f"{m.group(1)}: {body[:200]} {quoted[:160]}".strip()
    first = (message or (lines[0] if lines else "")).strip().splitlines()
    return first[0][:300] if first else ""


def counts(res):
    c = {"pass": 0, "fail": 0, "error": 0, "skip": 0}
    for outcome, _ in res.values():
        c[outcome] += 1
    return c


def report(all_results, out):
    lines = ["| library | target | tests | pass | fail | error | skip |",
             "|---|---|---|---|---|---|---|"]
    regress = []
    for lib, by_target in all_results.items():
        for target, res in by_target.items():
            c = counts(res)
            lines.append(f"| {SUITES[lib]['name']} | {target} | {len(res)} | {c['pass']} | "
                         f"{c['fail']} | {c['error']} | {c['skip']} |")
        neo, arb = by_target.get("neo4j"), by_target.get("arbor")
        if neo is not None and arb is not None:
            for tid, (outcome, _) in sorted(neo.items()):
                a = arb.get(tid, ("missing", "not run on arbor"))
                if outcome == "pass" and a[0] != "pass":
                    regress.append(f"{lib}\t{tid}\t{a[0]}\t{a[1]}")
    print("\n".join(lines))
    print(f"\nPass on Neo4j, not on Arbor: {len(regress)}")
    for r in regress:
        print("  " + r)
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump({lib: {t: r for t, r in bt.items()} for lib, bt in all_results.items()},
                  fh, indent=1)
    with open(os.path.join(out, "regressions.tsv"), "w") as fh:
        fh.write("\n".join(["library\ttest\tarbor outcome\tfirst error line"] + regress) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True, help="directory holding the suites (see README)")
    ap.add_argument("--libs", default=",".join(SUITES), help="comma list of " + ",".join(SUITES))
    ap.add_argument("--targets", default="arbor,neo4j", help="arbor, neo4j or both")
    ap.add_argument("--arbor-bin", default=os.environ.get(
        "ARBOR_BIN", os.path.join(REPO, "target/release/arbor")))
    ap.add_argument("--out", default="/tmp/libtests-out")
    ap.add_argument("--test-timeout", type=int, default=120, help="seconds per test")
    ap.add_argument("--suite-timeout", type=int, default=3600)
    ap.add_argument("--neo4j-startup", type=int, default=600, help="seconds to wait for Neo4j")
    ap.add_argument("--neo4j-addr", help="host:port of a running Neo4j to reuse (emptied per "
                    "suite) instead of starting the anchor per suite")
    ap.add_argument("--report-only", action="store_true",
                    help="no runs: print the table from the <lib>-<target>.xml files in --out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    all_results = {}
    if args.report_only:
        for lib in args.libs.split(","):
            for target in args.targets.split(","):
                xml = os.path.join(args.out, f"{lib}-{target}.xml")
                if os.path.exists(xml):
                    res = parse_junit(xml)
                    res.update(parse_junit(os.path.join(args.out, f"{lib}-{target}-7687.xml")))
                    all_results.setdefault(lib, {})[target] = res
        report(all_results, args.out)
        return
    for lib in args.libs.split(","):
        if not os.path.isdir(os.path.join(args.src, SUITES[lib]["dir"])):
            sys.exit(f"suite {lib}: {args.src}/{SUITES[lib]['dir']} missing; see README.md")
        if not os.path.exists(venv_python(lib)):
            sys.exit(f"suite {lib}: no venv at {venv_python(lib)}; run run.sh --setup")
        all_results[lib] = {}
        for target in args.targets.split(","):
            pw = SUITES[lib]["password"]
            if target == "arbor":
                server = Arbor(args.arbor_bin, pw, args.out)
            elif args.neo4j_addr:
                server = RunningNeo4j(args.neo4j_addr, venv_python(lib), pw)
            else:
                server = Neo4jAnchor(args.out, args.neo4j_startup)
            try:
                res = run_suite(lib, target, f"127.0.0.1:{server.port}", pw, args)
            finally:
                server.stop()
            all_results[lib][target] = res
    report(all_results, args.out)


if __name__ == "__main__":
    main()
