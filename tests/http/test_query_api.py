"""The HTTP port of `arbor serve`: Neo4j's Query API v2 with the exact requests Neo4j's
documentation shows (https://neo4j.com/docs/query-api/current/), health, Prometheus metrics,
basic auth against the Bolt user store, and the query log. Plain urllib, no HTTP library."""
import base64
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

BIN = os.environ.get("ARBOR_BIN", os.path.join(os.path.dirname(__file__), "../../target/release/arbor"))
DOCS_AUTH = "Basic bmVvNGo6dmVyeXNlY3JldA=="  # neo4j / verysecret, as in Neo4j's examples
TYPED = "application/vnd.neo4j.query.v1.1"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, data, *extra, env=None):
        self.bolt, self.http = free_port(), free_port()
        self.proc = subprocess.Popen(
            [BIN, "serve", "--data", str(data), "--listen", f"127.0.0.1:{self.bolt}",
             "--http-listen", f"127.0.0.1:{self.http}", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited: " + self.proc.stderr.read().decode(errors="replace"))
            try:
                if self.request("GET", "/health/ready")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.proc.kill()
        raise RuntimeError("server did not become ready")

    def request(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.http}{path}", data=data, method=method)
        if body is not None:
            req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                raw, status, hdrs = r.read(), r.status, r.headers
        except urllib.error.HTTPError as e:
            raw, status, hdrs = e.read(), e.code, e.headers
        hdrs = {k.lower(): v for k, v in hdrs.items()}
        ctype = hdrs.get("content-type", "")
        return status, (json.loads(raw) if "json" in ctype else raw.decode()), hdrs

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=30) == 0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("http") / "d", "--query-log", "info",
               "--query-log-threshold", "0")
    yield s
    s.stop()


def test_docs_query_example(server):
    # "Query the database": MERGE with parameters in an implicit transaction.
    status, body, _ = server.request("POST", "/db/neo4j/query/v2", {
        "statement": "MERGE (n:Person {name: $name, age: $age}) RETURN n AS alice",
        "parameters": {"name": "Alice", "age": 42}}, {"Authorization": DOCS_AUTH})
    assert status == 202
    assert body["data"]["fields"] == ["alice"]
    [[alice]] = body["data"]["values"]
    assert alice["labels"] == ["Person"]
    assert alice["properties"] == {"name": "Alice", "age": 42}
    assert isinstance(alice["elementId"], str)
    assert len(body["bookmarks"]) == 1


def test_docs_typed_json_example(server):
    # "Typed JSON": both parameters and results with type information.
    status, body, _ = server.request("POST", "/db/neo4j/query/v2", {
        "statement": "MERGE (p:Person {name: $name}) RETURN p AS person, p.name AS name",
        "parameters": {"name": {"$type": "String", "_value": "Phil"}}},
        {"Accept": TYPED, "Content-Type": TYPED})
    assert status == 202, body
    person, name = body["data"]["values"][0]
    assert person["$type"] == "Node"
    assert person["_value"]["_labels"] == ["Person"]
    assert person["_value"]["_properties"] == {"name": {"$type": "String", "_value": "Phil"}}
    assert name == {"$type": "String", "_value": "Phil"}
    _, body, _ = server.request("POST", "/db/neo4j/query/v2", {
        "statement": "RETURN 1 AS i, 1.5 AS f, date('2024-01-01') AS d, null AS n"},
        {"Accept": TYPED})
    assert body["data"]["values"][0] == [
        {"$type": "Integer", "_value": "1"}, {"$type": "Float", "_value": "1.5"},
        {"$type": "Date", "_value": "2024-01-01"}, {"$type": "Null", "_value": None}]


def test_counters_and_errors(server):
    status, body, _ = server.request("POST", "/db/neo4j/query/v2", {
        "statement": "CREATE (:OPS_Counted {x: 1})", "includeCounters": True})
    assert status == 202
    assert body["counters"]["nodesCreated"] == 1 and body["counters"]["containsUpdates"] is True
    status, body, _ = server.request("POST", "/db/neo4j/query/v2", {"statement": "MATCH (n RETURN n"})
    assert status == 400
    assert body["errors"][0]["code"] == "Neo.ClientError.Statement.SyntaxError"
    status, body, _ = server.request("POST", "/db/nosuchdb/query/v2", {"statement": "RETURN 1"})
    assert body["errors"][0]["code"] == "Neo.ClientError.Database.DatabaseNotFound"
    status, body, _ = server.request("POST", "/db/neo4j/query/v2", {
        "statement": "CREATE (:OPS_X)", "accessMode": "READ"})
    assert body["errors"][0]["code"] == "Neo.ClientError.Statement.AccessMode"


def test_docs_explicit_transaction_flow(server):
    # "Run transactions": open with a statement, run another, commit.
    status, body, hdrs = server.request("POST", "/db/neo4j/query/v2/tx", {
        "statement": "MERGE (n:Person {name: $name, age: $age}) RETURN n AS alice",
        "parameters": {"name": "Alice", "age": 42}}, {"Authorization": DOCS_AUTH})
    assert status == 202
    tx = body["transaction"]
    assert tx["id"] and tx["expires"].endswith("Z")
    assert "neo4j-cluster-affinity" in hdrs
    status, body, _ = server.request("POST", f"/db/neo4j/query/v2/tx/{tx['id']}", {
        "statement": "CREATE (:OPS_InTx {k: 1}) RETURN 1 AS one"})
    assert status == 202 and body["data"]["values"] == [[1]]
    # Not visible outside before the commit.
    _, outside, _ = server.request("POST", "/db/neo4j/query/v2", {
        "statement": "MATCH (n:OPS_InTx) RETURN count(n) AS c"})
    assert outside["data"]["values"] == [[0]]
    status, body, _ = server.request("POST", f"/db/neo4j/query/v2/tx/{tx['id']}/commit")
    assert status == 202 and len(body["bookmarks"]) == 1
    _, outside, _ = server.request("POST", "/db/neo4j/query/v2", {
        "statement": "MATCH (n:OPS_InTx) RETURN count(n) AS c"})
    assert outside["data"]["values"] == [[1]]
    # Committed: the id is gone.
    status, body, _ = server.request("POST", f"/db/neo4j/query/v2/tx/{tx['id']}", {"statement": "RETURN 1"})
    assert status == 404
    assert body["errors"][0]["code"] == "Neo.ClientError.Transaction.TransactionNotFound"


def test_rollback_and_error_end_the_transaction(server):
    _, body, _ = server.request("POST", "/db/neo4j/query/v2/tx", {"statement": "CREATE (:OPS_Rolled)"})
    tx = body["transaction"]["id"]
    status, _, _ = server.request("DELETE", f"/db/neo4j/query/v2/tx/{tx}")
    assert status == 202
    _, body, _ = server.request("POST", "/db/neo4j/query/v2", {
        "statement": "MATCH (n:OPS_Rolled) RETURN count(n)"})
    assert body["data"]["values"] == [[0]]
    # An empty body opens a transaction too; a failing statement rolls it back.
    _, body, _ = server.request("POST", "/db/neo4j/query/v2/tx")
    tx = body["transaction"]["id"]
    server.request("POST", f"/db/neo4j/query/v2/tx/{tx}", {"statement": "CREATE (:OPS_Lost)"})
    status, body, _ = server.request("POST", f"/db/neo4j/query/v2/tx/{tx}", {"statement": "RETURN 1/0"})
    assert status == 400 and body["errors"][0]["code"] == "Neo.ClientError.Statement.ArithmeticError"
    status, _, _ = server.request("POST", f"/db/neo4j/query/v2/tx/{tx}/commit")
    assert status == 404


def test_discovery_health_and_metrics(server):
    status, body, _ = server.request("GET", "/")
    assert status == 200 and body["query"].endswith("/db/{databaseName}/query/v2")
    assert body["bolt_direct"] == f"bolt://127.0.0.1:{server.bolt}"
    assert server.request("GET", "/health/live")[0] == 200
    status, text, hdrs = server.request("GET", "/metrics")
    assert status == 200 and hdrs["content-type"].startswith("text/plain")

    def sample(text, name):
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        raise AssertionError(f"{name} missing")
    before = sample(text, 'arbor_queries_total{type="read"}')
    server.request("POST", "/db/neo4j/query/v2", {"statement": "RETURN 1"})
    _, text, _ = server.request("GET", "/metrics")
    assert sample(text, 'arbor_queries_total{type="read"}') == before + 1
    for family in ["arbor_query_duration_seconds_count", "arbor_transactions_committed_total",
                   "arbor_wal_bytes_total", "arbor_memory_pool_limit_bytes",
                   "arbor_bolt_connections_open", "arbor_failed_logins_total"]:
        sample(text, family)


def test_query_log_has_one_json_line_per_query(server, tmp_path_factory):
    server.request("POST", "/db/neo4j/query/v2", {"statement": "RETURN $x AS logged",
                                                  "parameters": {"x": 7}})
    log = None
    for d in tmp_path_factory.getbasetemp().rglob("query.log"):
        log = d
    assert log is not None
    lines = [json.loads(l) for l in log.read_text().splitlines()]
    [entry] = [l for l in lines if l["query"] == "RETURN $x AS logged"]
    assert entry["event"] == "success" and entry["rows"] == 1
    assert entry["parameters"] == {"x": 7} and entry["client"] == "127.0.0.1"
    assert any(l["event"] == "failure" and l["error_code"] == "Neo.ClientError.Statement.SyntaxError"
               for l in lines)


def test_basic_auth_uses_the_bolt_user_store(tmp_path):
    s = Server(tmp_path / "d", "--auth", "basic", env={"ARBOR_INITIAL_PASSWORD": "verysecret"})
    try:
        status, body, hdrs = s.request("POST", "/db/neo4j/query/v2", {"statement": "RETURN 1"})
        assert status == 401 and body["errors"][0]["code"] == "Neo.ClientError.Security.Unauthorized"
        wrong = "Basic " + base64.b64encode(b"neo4j:wrong").decode()
        status, _, _ = s.request("POST", "/db/neo4j/query/v2", {"statement": "RETURN 1"},
                                 {"Authorization": wrong})
        assert status == 401
        status, body, _ = s.request("POST", "/db/neo4j/query/v2", {"statement": "RETURN 1 AS one"},
                                    {"Authorization": DOCS_AUTH})
        assert status == 202 and body["data"]["values"] == [[1]]
        # Health and metrics stay open.
        assert s.request("GET", "/health/ready")[0] == 200
    finally:
        s.stop()
