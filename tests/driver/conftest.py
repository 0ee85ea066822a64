"""Fixtures shared by the driver tests: one `arbor serve` per test module on a fresh data directory
and a free loopback port, an official-driver `driver` connected to it, and `concurrently`, which runs
a worker on several threads at once.
The server binary comes from $ARBOR_BIN (default target/release/arbor)."""
import os
import signal
import socket
import subprocess
import threading
import time

import pytest
from neo4j import GraphDatabase

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("ARBOR_BIN", os.path.join(HERE, "../../target/release/arbor"))


_next_port = [0]


def free_port():
    """A free loopback port: any, or one of $ARBOR_TEST_PORTS ("lo-hi") on a shared machine."""
    span = os.environ.get("ARBOR_TEST_PORTS")
    if not span:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    lo, hi = (int(x) for x in span.split("-"))
    for _ in range(hi - lo + 1):
        port = lo + _next_port[0] % (hi - lo + 1)
        _next_port[0] += 1
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError(f"no free port in {span}")


def start_server(data, port, *extra):
    """Starts `arbor serve` on `data` and a loopback `port` (extra flags appended); returns the
    process once it accepts connections."""
    proc = subprocess.Popen([BIN, "serve", "--data", str(data), "--listen", f"127.0.0.1:{port}", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while True:
        if proc.poll() is not None:
            raise RuntimeError("server exited: " + proc.stderr.read().decode(errors="replace"))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            if time.time() > deadline:
                proc.kill()
                raise RuntimeError("server did not start listening")
            time.sleep(0.05)


def stop_server(proc):
    """SIGTERM, and the server must exit cleanly (0) within 30 s."""
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=30) == 0, proc.stderr.read().decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """An `arbor serve` on a fresh data directory and a free loopback port; stopped with SIGTERM.
    With BOLT_TEST_PORT set, the tests run against that already running server instead (e.g. the
    Neo4j anchor, to check that the expectations here are Neo4j's)."""
    if os.environ.get("BOLT_TEST_PORT"):
        yield int(os.environ["BOLT_TEST_PORT"])
        return
    port = free_port()
    proc = start_server(tmp_path_factory.mktemp("driver-data"), port)
    yield port
    stop_server(proc)


@pytest.fixture(scope="module")
def driver(server):
    with GraphDatabase.driver(f"bolt://127.0.0.1:{server}", auth=None) as d:
        yield d


@pytest.fixture(scope="session")
def arbor_bin():
    """The `arbor` binary under test (for tests that run it themselves)."""
    return BIN


@pytest.fixture(scope="session")
def servers():
    """`(start_server, stop_server)`, for tests that start servers with their own flags."""
    return start_server, stop_server


@pytest.fixture(scope="session")
def port_factory():
    """Returns a function giving a free loopback port."""
    return free_port


def run_concurrently(work, workers, timeout=120):
    """Runs `work(i)` for every i in range(workers), each on its own thread, all at once; joins
    them (each for at most `timeout` seconds) and returns the exceptions the workers raised."""
    errors = []

    def guarded(i):
        try:
            work(i)
        except Exception as e:  # noqa: BLE001 - returned to the test, which reports it
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    return errors


@pytest.fixture(scope="session")
def concurrently():
    """`run_concurrently(work, workers)`: the worker/thread loop of the concurrency tests."""
    return run_concurrently
