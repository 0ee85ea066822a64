"""Connections and logins that cannot lock clients out (issue 20), tried with raw sockets and the
official driver against `arbor serve` with short limits: a total handshake deadline, a login
deadline, a cap on connections per address that have not logged in, oversized messages answered
and closed, and Neo4j's login lockout (`AuthenticationRateLimit`)."""
import socket
import struct
import time

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

PASSWORD = "ops-secret-1"
MAGIC = b"\x60\x60\xb0\x17"
# Bolt 5.4 down to 4.4 in the first slot, then nothing.
VERSIONS = b"\x00\x04\x04\x05" + b"\x00" * 12


@pytest.fixture(scope="module")
def ops_server(tmp_path_factory, servers, port_factory):
    start, stop = servers
    port = port_factory()
    proc = start(tmp_path_factory.mktemp("ops-data"), port, "--auth", "basic",
                 "--initial-password", PASSWORD, "--handshake-timeout", "2s",
                 "--login-timeout", "3s", "--auth-lock-time", "2s")
    yield port
    stop(proc)


def handshaken(port, source="127.0.0.1"):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(MAGIC + VERSIONS)
    assert len(s.recv(4)) == 4
    return s


def closed_within(s, seconds):
    """Whether the server closes `s` within `seconds` (reads until EOF or reset)."""
    s.settimeout(seconds)
    end = time.time() + seconds
    try:
        while time.time() < end:
            if not s.recv(4096):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


def test_a_trickled_handshake_is_cut_off_at_its_total_deadline(ops_server):
    s = socket.create_connection(("127.0.0.1", ops_server))
    started = time.time()
    try:
        # One byte every 0.5 s: each read is well inside any per-read timeout.
        for b in (MAGIC + VERSIONS)[:10]:
            s.sendall(bytes([b]))
            time.sleep(0.5)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert closed_within(s, 3)
    assert time.time() - started < 6


def test_a_connection_that_never_logs_in_is_closed(ops_server):
    s = handshaken(ops_server)
    started = time.time()
    assert closed_within(s, 6)
    assert 2 <= time.time() - started <= 6


def test_handshake_only_sockets_do_not_lock_other_clients_out(ops_server):
    # 256 is the default cap on connections per address that have not logged in; the flood
    # comes from 127.0.0.2 (all of 127/8 is loopback), the real client from 127.0.0.1.
    idle = [handshaken(ops_server, "127.0.0.2") for _ in range(256)]
    try:
        started = time.time()
        with GraphDatabase.driver(f"bolt://127.0.0.1:{ops_server}", auth=("neo4j", PASSWORD),
                                  max_transaction_retry_time=0) as d:
            records, _, _ = d.execute_query("RETURN 1 AS x")
        assert records[0]["x"] == 1
        assert time.time() - started < 3
        # One more from the flooding address is refused at once, not left hanging.
        extra = socket.socket()
        extra.bind(("127.0.0.2", 0))
        extra.connect(("127.0.0.1", ops_server))
        extra.sendall(MAGIC + VERSIONS)
        assert closed_within(extra, 4)
        extra.close()
    finally:
        for s in idle:
            s.close()
    # Once they are gone the address is served again.
    time.sleep(0.5)
    handshaken(ops_server, "127.0.0.2").close()


def test_an_oversized_message_is_answered_and_closed_without_a_hang(ops_server):
    with GraphDatabase.driver(f"bolt://127.0.0.1:{ops_server}", auth=("neo4j", PASSWORD),
                              max_transaction_retry_time=0) as d:
        started = time.time()
        with pytest.raises((Neo4jError, ServiceUnavailable, SessionExpired)) as e:
            with d.session() as s:
                s.run("RETURN size($x)", x="x" * (65 << 20)).consume()
        assert time.time() - started < 15, e.value
        # The server is fine afterwards.
        records, _, _ = d.execute_query("RETURN 2 AS x")
        assert records[0]["x"] == 2


DEFAULT_COLUMNS = ["database", "transactionId", "currentQueryId", "connectionId", "clientAddress",
                   "username", "currentQuery", "startTime", "status", "elapsedTime"]


def test_show_and_terminate_transactions_as_neo4j(ops_server):
    url = f"bolt://127.0.0.1:{ops_server}"
    with GraphDatabase.driver(url, auth=("neo4j", PASSWORD)) as d:
        victim = d.session()
        tx = victim.begin_transaction()
        tx.run("RETURN 1").consume()
        with d.session() as s:
            r = s.run("SHOW TRANSACTIONS")
            assert r.keys() == DEFAULT_COLUMNS
            rows = [rec.data() for rec in r]
            others = [x for x in rows if x["currentQuery"] != "SHOW TRANSACTIONS"]
            assert len(others) == 1, rows
            t = others[0]
            assert t["database"] == "neo4j" and t["status"] == "Running"
            assert t["transactionId"].startswith("neo4j-transaction-")
            assert t["connectionId"].startswith("bolt-") and t["username"] == "neo4j"
            assert t["clientAddress"].startswith("127.0.0.1:")
            assert len(s.run("SHOW TRANSACTIONS YIELD *").keys()) == 39
            r = s.run("SHOW TRANSACTIONS YIELD transactionId AS t WHERE t = 'x' RETURN t")
            assert r.keys() == ["t"] and list(r) == []

            r = s.run("TERMINATE TRANSACTION $id", id=t["transactionId"])
            assert r.keys() == ["transactionId", "username", "message"]
            assert [x.data() for x in r] == [{"transactionId": t["transactionId"],
                                              "username": "neo4j",
                                              "message": "Transaction terminated."}]
            r = s.run("TERMINATE TRANSACTIONS 'neo4j-transaction-999999' YIELD message")
            assert [x.data() for x in r] == [{"message": "Transaction not found."}]
            with pytest.raises(Neo4jError) as e:
                s.run("TERMINATE TRANSACTION 'foo'").consume()
            assert e.value.code == "Neo.ClientError.General.InvalidArguments"
        with pytest.raises(Neo4jError) as e:
            tx.run("RETURN 2").consume()
        assert e.value.code == "Neo.ClientError.Transaction.Terminated"
        assert "Explicitly terminated by the user" in e.value.message
        try:
            tx.close()
        except Neo4jError:
            pass
        victim.close()
        # The connection is fine for the next transaction.
        records, _, _ = d.execute_query("RETURN 3 AS x")
        assert records[0]["x"] == 3


def login(port, password):
    with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", password)) as d:
        d.verify_connectivity()


def test_three_wrong_passwords_lock_the_user_as_neo4j_does(ops_server):
    for _ in range(3):
        with pytest.raises(Neo4jError) as e:
            login(ops_server, "wrong")
        assert e.value.code == "Neo.ClientError.Security.Unauthorized"
    with pytest.raises(Neo4jError) as e:
        login(ops_server, PASSWORD)
    assert e.value.code == "Neo.ClientError.Security.AuthenticationRateLimit"
    assert "too many times in a row" in e.value.message
    time.sleep(2.2)
    login(ops_server, PASSWORD)
