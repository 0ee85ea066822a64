"""Neo4j 5 transaction behaviour drivers react to: a write in a READ transaction fails at once
with `Neo.ClientError.Statement.AccessMode` (not retried), the driver's transaction timeout ends
a query with `TransactionTimedOutClientConfiguration` and rolls back, and transaction metadata
is visible to `tx.getMetaData()`. Expectations are Neo4j 5.26.30's (run with BOLT_TEST_PORT
pointing at the Neo4j anchor to check them)."""
import time

import neo4j
import pytest
from neo4j import Query
from neo4j.exceptions import ClientError

# A query that outlives a short timeout (interrupting it in flight is not yet reliable).
LONG = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b WITH a, b WHERE a + b < 0 RETURN count(*) AS c"


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
