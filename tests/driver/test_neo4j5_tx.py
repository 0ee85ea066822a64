"""Neo4j 5 transaction behaviour drivers react to: a write in a READ transaction fails at once
with `Neo.ClientError.Statement.AccessMode` (not retried), the driver's transaction timeout ends
a query with `TransactionTimedOutClientConfiguration` and rolls back, even while the query runs,
and transaction metadata is visible to `tx.getMetaData()`. A running query also stops on RESET,
on disconnect and on SIGTERM (which exits promptly and leaves a store that opens again).
Expectations are Neo4j 5.26.30's (run with BOLT_TEST_PORT pointing at the Neo4j anchor to check
the driver-level ones)."""
import os
import signal
import socket
import struct
import threading
import time

import neo4j
import pytest
from neo4j import GraphDatabase, Query
from neo4j.exceptions import ClientError

# A query that runs for many minutes unless it is stopped (10^10 rows, little memory).
LONG = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b WITH a, b WHERE a + b < 0 RETURN count(*) AS c"
# How long a stopped query may take to answer (generous: the test machine is shared).
BOUND = 10


def test_write_in_read_transaction_fails_at_once(driver):
    t = time.time()
    with driver.session(default_access_mode=neo4j.READ_ACCESS) as s:
        with pytest.raises(ClientError) as e:
            s.execute_read(lambda tx: tx.run("CREATE (:AccessModeProbe)").consume())
    assert e.value.code == "Neo.ClientError.Statement.AccessMode"
    assert "read access mode" in e.value.message
    assert time.time() - t < 5, "the driver retried the failure"
    with driver.session() as s:
        assert s.run("MATCH (n:AccessModeProbe) RETURN count(n) AS c").single()["c"] == 0


def test_schema_command_in_read_transaction_fails(driver):
    with driver.session(default_access_mode=neo4j.READ_ACCESS) as s:
        with pytest.raises(ClientError) as e:
            s.run("CREATE INDEX access_ix FOR (n:AccessModeProbe) ON (n.p)").consume()
    assert e.value.code == "Neo.ClientError.Statement.AccessMode"


def test_read_in_read_transaction_works(driver):
    with driver.session(default_access_mode=neo4j.READ_ACCESS) as s:
        assert s.execute_read(lambda tx: tx.run("RETURN 1 AS x").single()["x"]) == 1


def test_idle_transaction_past_its_timeout_fails(driver):
    with driver.session() as s:
        tx = s.begin_transaction(timeout=0.5)
        time.sleep(1.0)
        with pytest.raises(ClientError) as e:
            tx.run("RETURN 1").consume()
        assert e.value.code == "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
        tx.close()


def test_timeout_does_not_leak_into_the_next_transaction(driver):
    with driver.session() as s:
        tx = s.begin_transaction(timeout=0.3)
        tx.run("RETURN 1").consume()
        tx.commit()
        time.sleep(0.6)
        assert s.run("UNWIND range(1, 100000) AS x RETURN count(x) AS c").single()["c"] == 100000


def test_metadata_from_begin_and_set_meta_data(driver):
    with driver.session() as s:
        tx = s.begin_transaction(metadata={"app": "probe", "n": 1})
        assert tx.run("CALL tx.getMetaData()").single()["metadata"] == {"app": "probe", "n": 1}
        tx.run("CALL tx.setMetaData({b: 2})").consume()
        got = tx.run("CALL tx.getMetaData() YIELD metadata RETURN metadata").single()["metadata"]
        assert got == {"b": 2}
        tx.commit()
        # A new transaction starts with its own (here: no) metadata.
        assert s.run("CALL tx.getMetaData()").single()["metadata"] == {}


def test_metadata_of_auto_commit_query(driver):
    with driver.session() as s:
        rec = s.run(Query("CALL tx.getMetaData()", metadata={"q": "x"})).single()
        assert rec["metadata"] == {"q": "x"}


def test_timeout_stops_a_running_auto_commit_query(driver):
    with driver.session() as s:
        t = time.time()
        with pytest.raises(ClientError) as e:
            s.run(Query(LONG, timeout=1)).consume()
        assert e.value.code == "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
        assert time.time() - t < BOUND
        assert s.run("RETURN 1 AS x").single()["x"] == 1


def test_timeout_stops_a_running_query_and_rolls_back(driver):
    with driver.session() as s:
        tx = s.begin_transaction(timeout=1)
        tx.run("CREATE (:TimedOutWrite)").consume()
        t = time.time()
        with pytest.raises(ClientError) as e:
            tx.run(LONG).consume()
        assert e.value.code == "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
        assert time.time() - t < BOUND
        tx.close()
        assert s.run("MATCH (n:TimedOutWrite) RETURN count(n) AS c").single()["c"] == 0


# A minimal Bolt 5.0 client: the official driver cannot send RESET while a PULL is running.
def _pack(v):
    if isinstance(v, str):
        b = v.encode()
        assert len(b) < 256
        return (bytes([0x80 | len(b)]) if len(b) < 16 else bytes([0xD0, len(b)])) + b
    if isinstance(v, int):
        assert -16 <= v < 128
        return struct.pack(">b", v)
    if isinstance(v, dict):
        return bytes([0xA0 | len(v)]) + b"".join(_pack(k) + _pack(x) for k, x in v.items())
    raise TypeError(v)


class RawBolt:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND + 20)
        self.sock.sendall(b"\x60\x60\xb0\x17" + b"\x00\x00\x00\x05" + b"\x00" * 12)
        assert self._read(4) == b"\x00\x00\x00\x05"
        self.send(0x01, {"user_agent": "cancel-test/1", "scheme": "none"})
        assert self.recv()[0] == 0x70

    def send(self, tag, *fields):
        body = bytes([0xB0 | len(fields), tag]) + b"".join(_pack(f) for f in fields)
        self.sock.sendall(struct.pack(">H", len(body)) + body + b"\x00\x00")

    def _read(self, n):
        out = b""
        while len(out) < n:
            got = self.sock.recv(n - len(out))
            assert got, "connection closed"
            out += got
        return out

    def recv(self):
        """The next response: (tag, raw message bytes)."""
        msg = b""
        while True:
            (n,) = struct.unpack(">H", self._read(2))
            if n == 0 and msg:
                return msg[1], msg
            msg += self._read(n)


def test_reset_interrupts_a_running_query(server):
    c = RawBolt(server)
    c.send(0x10, LONG, {}, {})
    c.send(0x3F, {"n": -1})
    assert c.recv()[0] == 0x70  # RUN: SUCCESS
    time.sleep(0.5)
    t = time.time()
    c.send(0x0F)
    tag, _ = c.recv()  # the PULL: failed or ignored
    assert tag in (0x7F, 0x7E)
    assert c.recv()[0] == 0x70  # RESET: SUCCESS
    assert time.time() - t < BOUND
    c.send(0x10, "RETURN 1 AS x", {}, {})
    c.send(0x3F, {"n": -1})
    assert [c.recv()[0] for _ in range(3)] == [0x70, 0x71, 0x70]
    c.sock.close()


def _cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture()
def own_server(tmp_path, servers, port_factory):
    """A server of this test's own (its process is needed), with its data directory."""
    if os.environ.get("BOLT_TEST_PORT"):
        pytest.skip("needs a server process of its own")
    start, stop = servers
    port = port_factory()
    proc = start(tmp_path / "data", port)
    yield proc, port, tmp_path / "data"
    if proc.poll() is None:
        stop(proc)


def test_disconnect_frees_the_cpu(own_server):
    proc, port, _ = own_server
    c = RawBolt(port)
    c.send(0x10, LONG, {}, {})
    c.send(0x3F, {"n": -1})
    assert c.recv()[0] == 0x70
    time.sleep(0.5)
    c.sock.close()
    time.sleep(2)  # poll interval and interrupt check, generously
    before = _cpu_seconds(proc.pid)
    time.sleep(2)
    used = _cpu_seconds(proc.pid) - before
    assert used < 0.5, f"the server used {used:.2f} s of CPU in 2 s after the client left"


def test_sigterm_during_a_long_query_exits_and_the_store_reopens(own_server, servers, port_factory):
    proc, port, data = own_server
    errors = []

    def run_long():
        try:
            with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
                with d.session() as s:
                    s.run("CREATE (:BeforeStop)").consume()
                    s.run(LONG).consume()
        except Exception as e:  # the query must fail (interrupted or connection closed)
            errors.append(e)

    th = threading.Thread(target=run_long, daemon=True)
    th.start()
    time.sleep(1.5)
    t = time.time()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=BOUND) == 0, proc.stderr.read().decode(errors="replace")
    assert time.time() - t < BOUND
    th.join(timeout=BOUND)
    assert errors, "the long query did not fail"
    start, stop = servers
    port2 = port_factory()
    again = start(data, port2)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port2}", auth=None) as d:
            with d.session() as s:
                assert s.run("MATCH (n:BeforeStop) RETURN count(n) AS c").single()["c"] == 1
    finally:
        stop(again)


def test_server_wide_timeout(tmp_path, servers, port_factory):
    if os.environ.get("BOLT_TEST_PORT"):
        pytest.skip("needs a server started with --transaction-timeout")
    start, stop = servers
    port = port_factory()
    proc = start(tmp_path / "data", port, "--transaction-timeout", "1s")
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            with d.session() as s:
                t = time.time()
                with pytest.raises(ClientError) as e:
                    s.run(LONG).consume()
                assert e.value.code == "Neo.ClientError.Transaction.TransactionTimedOut"
                assert time.time() - t < BOUND
                # A driver's smaller timeout wins, with its own code.
                with pytest.raises(ClientError) as e:
                    s.run(Query(LONG, timeout=0.5)).consume()
                assert e.value.code == "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
                assert s.run("RETURN 1 AS x").single()["x"] == 1
    finally:
        stop(proc)


def test_timeout_stops_apoc_util_sleep(driver):
    # neomodel's timeout tests: `CALL apoc.util.sleep(...)` under a driver timeout.
    with driver.session() as s:
        t = time.time()
        with pytest.raises(ClientError, match="TransactionTimedOut") as e:
            s.run(Query("CALL apoc.util.sleep(60000)", timeout=1)).consume()
        assert e.value.code == "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
        assert time.time() - t < BOUND


def test_explain_of_a_schema_command_runs_nothing(driver):
    # neo4j-graphrag's Text2CypherRetriever: EXPLAIN, then refuse unless query_type is 'r'.
    with driver.session() as s:
        summary = s.run("EXPLAIN CREATE INDEX explain_probe FOR (n:ExplainProbe) ON (n.p)").consume()
        assert summary.query_type == "s"
        names = [r["name"] for r in s.run("SHOW INDEXES YIELD name")]
        assert "explain_probe" not in names
        assert s.run("EXPLAIN SHOW INDEXES").consume().query_type == "r"
