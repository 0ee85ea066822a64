"""Snapshot isolation seen through the official Python driver, with concurrent sessions over Bolt.

Each test opens several sessions on one `arbor serve` and interleaves their transactions by hand (or with
threads) to check the anomalies snapshot isolation forbids: dirty reads, non-repeatable reads, phantoms
inside one transaction, and lost updates. It also checks that readers never wait for writers, that a
write-write conflict is the retryable `Neo.TransientError.Transaction.*` the driver's transaction functions
retry, that concurrent relationship inserts on one dense node do not conflict, and that a node with
relationships cannot be deleted without DETACH.
"""
import threading
import time

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import ClientError, TransientError


def reset(driver, label):
    with driver.session() as s:
        s.run(f"MATCH (n:{label}) DETACH DELETE n").consume()


def value_of(session_or_tx, label):
    return session_or_tx.run(f"MATCH (n:{label}) RETURN n.v AS v").single()["v"]


def test_no_dirty_reads(driver):
    reset(driver, "Dirty")
    with driver.session() as s:
        s.run("CREATE (:Dirty {v: 1})").consume()
    with driver.session() as writer, driver.session() as reader:
        tx = writer.begin_transaction()
        tx.run("MATCH (n:Dirty) SET n.v = 2").consume()
        tx.run("CREATE (:Dirty {v: 99})").consume()
        # The uncommitted change and the uncommitted node are invisible to everyone else.
        rows = reader.run("MATCH (n:Dirty) RETURN n.v AS v ORDER BY v").values()
        assert rows == [[1]]
        tx.rollback()
        rows = reader.run("MATCH (n:Dirty) RETURN n.v AS v ORDER BY v").values()
        assert rows == [[1]]


def test_no_non_repeatable_reads_or_phantoms_within_a_transaction(driver):
    reset(driver, "Rep")
    with driver.session() as s:
        s.run("CREATE (:Rep {v: 1})").consume()
    with driver.session() as reader, driver.session() as writer:
        tx = reader.begin_transaction()
        assert value_of(tx, "Rep") == 1
        first_count = tx.run("MATCH (n:Rep) RETURN count(n) AS c").single()["c"]
        # Committed by another session after the reader's snapshot was taken.
        writer.run("MATCH (n:Rep) SET n.v = 2").consume()
        writer.run("CREATE (:Rep {v: 3})").consume()
        assert value_of(tx, "Rep") == 1
        assert tx.run("MATCH (n:Rep) RETURN count(n) AS c").single()["c"] == first_count == 1
        tx.commit()
        # A new transaction sees both committed writes.
        rows = reader.run("MATCH (n:Rep) RETURN n.v AS v ORDER BY v").values()
        assert rows == [[2], [3]]


def test_readers_do_not_wait_for_writers(driver):
    reset(driver, "Busy")
    with driver.session() as s:
        s.run("CREATE (:Busy {v: 1})").consume()
    with driver.session() as writer, driver.session() as reader:
        tx = writer.begin_transaction()
        tx.run("MATCH (n:Busy) SET n.v = 2").consume()
        started = time.monotonic()
        assert value_of(reader, "Busy") == 1
        # Generous bound: a reader blocked behind the open writer would wait forever.
        assert time.monotonic() - started < 5
        tx.commit()
        assert value_of(reader, "Busy") == 2


def test_write_write_conflict_is_retryable_and_first_committer_wins(driver):
    reset(driver, "Conflict")
    with driver.session() as s:
        s.run("CREATE (:Conflict {v: 0})").consume()
    with driver.session() as a, driver.session() as b:
        tx_a = a.begin_transaction()
        tx_b = b.begin_transaction()
        # Both snapshots are taken before either write commits.
        assert value_of(tx_a, "Conflict") == 0
        assert value_of(tx_b, "Conflict") == 0
        tx_a.run("MATCH (n:Conflict) SET n.v = 1").consume()
        tx_a.commit()
        with pytest.raises(TransientError) as err:
            tx_b.run("MATCH (n:Conflict) SET n.v = 2").consume()
            tx_b.commit()
        assert err.value.code.startswith("Neo.TransientError.Transaction.")
        assert err.value.is_retryable()
        if not tx_b.closed():
            tx_b.close()
        assert value_of(a, "Conflict") == 1


def test_no_lost_updates_with_retrying_transaction_functions(driver, server, concurrently):
    reset(driver, "Counter")
    with driver.session() as s:
        s.run("CREATE (:Counter {v: 0})").consume()
    workers, per_worker = 6, 25

    def increment(tx):
        # Read-modify-write across two statements: under snapshot isolation a concurrent increment makes
        # this transaction fail (first committer wins) and the driver retries it on a fresh snapshot.
        v = tx.run("MATCH (n:Counter) RETURN n.v AS v").single()["v"]
        tx.run("MATCH (n:Counter) SET n.v = $v", v=v + 1).consume()

    def work(_):
        # One driver (connection pool) per worker. The Python driver (6.4.1) returns a connection to the
        # pool as soon as a statement in a transaction function fails, before it closes that transaction;
        # when another thread of the same driver picks the connection up in between, the failed
        # transaction's clean-up sees the other thread's BEGIN in flight and raises a non-retryable
        # ResultFailedError (reproduced about once in 100 runs of this test, with any server that reports a
        # conflict at the statement). Separate pools keep that client-side race out of this server test.
        with GraphDatabase.driver(f"bolt://127.0.0.1:{server}", auth=None) as own, own.session() as s:
            for _ in range(per_worker):
                s.execute_write(increment)

    errors = concurrently(work, workers)
    assert not errors, errors
    with driver.session() as s:
        assert value_of(s, "Counter") == workers * per_worker


def test_concurrent_relationship_inserts_on_a_dense_node_do_not_conflict(driver, concurrently):
    reset(driver, "Hub")
    reset(driver, "Spoke")
    with driver.session() as s:
        s.run("CREATE (:Hub {id: 1})").consume()
    workers, per_worker = 4, 40
    barrier = threading.Barrier(workers)

    def work(w):
        with driver.session() as s:
            tx = s.begin_transaction()
            # All workers hold open transactions on the same hub at once.
            barrier.wait(timeout=30)
            for i in range(per_worker):
                tx.run("MATCH (h:Hub {id: 1}) CREATE (h)-[:SPOKE]->(:Spoke {w: $w, i: $i})",
                       w=w, i=i).consume()
            tx.commit()

    errors = concurrently(work, workers)
    assert not errors, errors
    with driver.session() as s:
        c = s.run("MATCH (:Hub {id: 1})-[:SPOKE]->(x:Spoke) RETURN count(x) AS c").single()["c"]
        assert c == workers * per_worker


def test_delete_of_connected_node_needs_detach(driver):
    reset(driver, "Del")
    with driver.session() as s:
        s.run("CREATE (:Del {k: 'a'})-[:R]->(:Del {k: 'b'})").consume()
        with pytest.raises(ClientError) as err:
            s.run("MATCH (n:Del {k: 'a'}) DELETE n").consume()
        assert err.value.code == "Neo.ClientError.Schema.ConstraintValidationFailed"
        # Nothing of the failed statement is visible; the relationship does not dangle.
        assert s.run("MATCH (:Del)-[r:R]->(:Del) RETURN count(r) AS c").single()["c"] == 1
        s.run("MATCH (n:Del {k: 'a'}) DETACH DELETE n").consume()
        assert s.run("MATCH (n:Del) RETURN count(n) AS c").single()["c"] == 1
        assert s.run("MATCH ()-[r:R]->() RETURN count(r) AS c").single()["c"] == 0


def test_concurrent_auto_commit_updates_of_one_node_all_succeed_without_lost_updates(
    driver, server, concurrently
):
    # Neo4j serialises two auto-commit updates of one node with a write lock: both succeed, and an
    # application written against it never sees a conflict outside a transaction function. Arbor
    # detects the conflict instead and re-runs the losing auto-commit statement on a fresh snapshot
    # (engine session/retry.rs), so `SET n.v = n.v + 1` from many sessions neither fails nor loses
    # an increment.
    reset(driver, "AutoCounter")
    with driver.session() as s:
        s.run("CREATE (:AutoCounter {v: 0})").consume()
    workers, per_worker = 8, 40

    def work(_):
        with GraphDatabase.driver(f"bolt://127.0.0.1:{server}", auth=None) as own, own.session() as s:
            for _ in range(per_worker):
                s.run("MATCH (n:AutoCounter) SET n.v = n.v + 1").consume()

    errors = concurrently(work, workers)
    assert not errors, errors
    with driver.session() as s:
        assert value_of(s, "AutoCounter") == workers * per_worker


def test_an_explicit_transaction_still_reports_the_conflict(driver):
    # Only auto-commit statements are re-run: an explicit transaction's earlier statements cannot be.
    reset(driver, "ExplicitConflict")
    with driver.session() as s:
        s.run("CREATE (:ExplicitConflict {v: 0})").consume()
    with driver.session() as a, driver.session() as b:
        tx_b = b.begin_transaction()
        assert value_of(tx_b, "ExplicitConflict") == 0
        a.run("MATCH (n:ExplicitConflict) SET n.v = 1").consume()
        with pytest.raises(TransientError):
            tx_b.run("MATCH (n:ExplicitConflict) SET n.v = 2").consume()
            tx_b.commit()
        if not tx_b.closed():
            tx_b.close()
