"""`CALL { ... } IN TRANSACTIONS` through the official Python driver, as langchain-neo4j sends it:
in an implicit transaction (`session.run`) each batch commits and the next one sees it (the
vector-store delete `MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS` over connected
nodes), `ON ERROR CONTINUE ... REPORT STATUS`, and in an explicit transaction the query fails
with Neo4j's code and message. Expectations are Neo4j 5.26's (labels are prefixed so the file
can run against the shared Neo4j with BOLT_TEST_PORT)."""
import pytest
from neo4j.exceptions import DatabaseError, ClientError


def count(session, label):
    return session.run(f"MATCH (n:{label}) RETURN count(n) AS c").single()["c"]


def test_detach_delete_in_batches_of_connected_nodes(driver):
    with driver.session() as s:
        s.run("UNWIND range(1, 20) AS i CREATE (:CITX_L {i: i})").consume()
        s.run("MATCH (a:CITX_L), (b:CITX_L {i: a.i + 1}) CREATE (a)-[:CITX_N]->(b)").consume()
        s.run("MATCH (n:CITX_L) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1 ROWS").consume()
        assert count(s, "CITX_L") == 0
        s.run("UNWIND range(1, 20) AS i CREATE (:CITX_L {i: i})").consume()
        s.run("MATCH (a:CITX_L), (b:CITX_L {i: a.i + 1}) CREATE (a)-[:CITX_N]->(b)").consume()
        summary = s.run("MATCH (n:CITX_L) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF $b ROWS",
                        b=3).consume()
        assert summary.counters.nodes_deleted == 20
        assert summary.counters.relationships_deleted == 19
        assert count(s, "CITX_L") == 0


def test_on_error_continue_reports_status(driver):
    with driver.session() as s:
        rows = s.run("UNWIND [1, 0, 2] AS i CALL (i) { CREATE (:CITX_E {v: 1 / i}) } "
                     "IN TRANSACTIONS OF 1 ROWS ON ERROR CONTINUE REPORT STATUS AS s "
                     "RETURN i, s ORDER BY i").data()
        assert [r["i"] for r in rows] == [0, 1, 2]
        failed, ok = rows[0]["s"], rows[1]["s"]
        assert failed["started"] is True and failed["committed"] is False
        assert failed["errorMessage"] == "/ by zero"
        assert ok == {"started": True, "committed": True, "errorMessage": None,
                      "transactionId": ok["transactionId"]}
        assert ok["transactionId"].startswith("neo4j-transaction-")
        assert count(s, "CITX_E") == 2
        s.run("MATCH (n:CITX_E) DELETE n").consume()


def test_failed_batch_leaves_earlier_batches_committed(driver):
    with driver.session() as s:
        with pytest.raises(ClientError) as e:
            s.run("UNWIND [1, 2, 0, 3] AS i CALL (i) { CREATE (:CITX_F {v: 1 / i}) } "
                  "IN TRANSACTIONS OF 1 ROWS").consume()
        assert e.value.code == "Neo.ClientError.Statement.ArithmeticError"
        assert e.value.message == "/ by zero (Transactions committed: 2)"
        assert count(s, "CITX_F") == 2
        s.run("MATCH (n:CITX_F) DELETE n").consume()


def test_explicit_transaction_is_refused(driver):
    with driver.session() as s:
        tx = s.begin_transaction()
        with pytest.raises(DatabaseError) as e:
            tx.run("UNWIND [1] AS i CALL (i) { CREATE (:CITX_X) } IN TRANSACTIONS").consume()
        assert e.value.code == "Neo.DatabaseError.Transaction.TransactionStartFailed"
        assert e.value.message == (
            "A query with 'CALL { ... } IN TRANSACTIONS' can only be executed in an implicit "
            "transaction, but tried to execute in an explicit transaction.")
        tx.close()
        assert count(s, "CITX_X") == 0


def test_load_csv_in_batches_from_the_import_dir(tmp_path, servers, port_factory):
    """`arbor serve --import-dir`: LOAD CSV reads `file:///` URLs there and nowhere else."""
    import os
    from neo4j import GraphDatabase
    if os.environ.get("BOLT_TEST_PORT"):
        pytest.skip("needs its own server with --import-dir")
    start, stop = servers
    imports = tmp_path / "imports"
    imports.mkdir()
    (imports / "people.csv").write_text(
        "id,name\n" + "".join(f"{i},p{i}\n" for i in range(1, 1001)))
    port = port_factory()
    proc = start(tmp_path / "data", port, "--import-dir", str(imports))
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d, d.session() as s:
            summary = s.run("LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row "
                            "CALL (row) { CREATE (:P {id: toInteger(row.id), name: row.name}) } "
                            "IN TRANSACTIONS OF 100 ROWS").consume()
            assert summary.counters.nodes_created == 1000
            assert s.run("MATCH (p:P) RETURN sum(p.id) AS s").single()["s"] == 500500
            with pytest.raises(ClientError) as e:
                s.run("LOAD CSV FROM 'file:///../data/auth.toml' AS row RETURN row").consume()
            assert e.value.code == "Neo.ClientError.Statement.ExternalResourceFailed"
    finally:
        stop(proc)
