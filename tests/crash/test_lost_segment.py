"""A lost WAL segment must not go unnoticed.

The server (default `sync` durability, 64 MiB log segments) commits two large transactions, so
that the first fills a segment which is sealed (fsynced) when the log moves on, then a few
small ones; it is killed with SIGKILL (no checkpoint). The newest sealed segment is deleted:
the commits after it say it was durable, so the server must refuse to start, naming what is
missing, and `arbor check` must fail too. Deleting the segment being written instead (its
commits not known durable by anything left) must start, and the start-up log must say which
commit the store now ends at.
"""
import os
import re
import subprocess
import time

import pytest
from neo4j import GraphDatabase

from test_crash import BIN, free_port, kill, start

SEGMENT = re.compile(r"^wal-(\d{20})\.log$")
BIG = "x" * (1 << 20)


def segments(data):
    return sorted(p for p in data.iterdir() if SEGMENT.match(p.name))


def fill(data):
    """Commits 2 x 40 MiB and 5 small transactions, then kills the server; returns the log."""
    port = free_port()
    proc = start(data, port)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as driver:
            with driver.session() as s:
                for batch in range(2):
                    s.run("UNWIND range(1, 40) AS i CREATE (:Big {b: $b, s: $s})",
                          b=batch, s=BIG).consume()
                for i in range(5):
                    s.run("CREATE (:Small {i: $i})", i=i).consume()
    finally:
        kill(proc)
    return segments(data)


@pytest.fixture
def data(tmp_path):
    return tmp_path / "data"


def test_a_deleted_sealed_segment_refuses_to_start(data):
    segs = fill(data)
    assert len(segs) >= 2, [p.name for p in data.iterdir()]
    sealed = segs[-2]
    sealed.unlink()
    with pytest.raises(RuntimeError) as e:
        kill(start(data, free_port()))
    msg = str(e.value)
    assert "missing from the log" in msg and sealed.name in msg, msg
    r = subprocess.run([BIN, "check", "--data", str(data)], capture_output=True, timeout=120)
    assert r.returncode != 0, r.stdout
    assert sealed.name.encode() in r.stdout + r.stderr, r.stdout + r.stderr


def test_a_deleted_newest_segment_starts_and_says_where_the_log_ends(data):
    segs = fill(data)
    assert len(segs) >= 2
    segs[-1].unlink()
    port = free_port()
    log = data.parent / "server.log"
    with open(log, "wb") as err:
        env = dict(os.environ, ARBOR_LOG="info")
        proc = subprocess.Popen(
            [BIN, "serve", "--data", str(data), "--listen", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=err, env=env)
        try:
            deadline = time.time() + 60
            text = ""
            while time.time() < deadline and "last commit" not in text:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.1)
                text = log.read_text(errors="replace")
            # The first big transaction is all that is left, and the log says when it was made.
            m = re.search(r"last commit (\d+) \(made at (\d{4}-\d\d-\d\dT[0-9:.]+Z)\)", text)
            assert m, text
            with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as driver:
                deadline = time.time() + 30
                while True:
                    try:
                        recs, _, _ = driver.execute_query(
                            "MATCH (b:Big) RETURN count(b) AS n, max(b.b) AS top")
                        break
                    except Exception:
                        if time.time() > deadline:
                            raise
                        time.sleep(0.1)
                assert (recs[0]["n"], recs[0]["top"]) == (40, 0)
        finally:
            kill(proc)
    r = subprocess.run([BIN, "check", "--data", str(data)], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert b"last commit: " in r.stdout, r.stdout
