"""Bolt compatibility with the official Neo4j Python driver, over a real `arbor serve` process.

Every value type both ways (parameters in, records out), graph entities, transactions, errors and
recovery, streaming with fetch_size, routing (`neo4j://`), concurrency, summaries and bookmarks.
The server binary comes from $ARBOR_BIN (default target/release/arbor).
"""
import datetime as dt
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import neo4j
import pytest
import pytz
from neo4j import GraphDatabase
from neo4j.exceptions import ClientError, CypherSyntaxError
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import CartesianPoint, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.environ.get("BOLT_SMOKE", "/work/shared/anchors/neo4j/bolt_smoke.py")


def echo(driver, value):
    with driver.session() as s:
        return s.run("RETURN $x AS x", x=value).single()["x"]


# ---- values ---------------------------------------------------------------------------------

INTS = [0, 1, -1, 127, 128, -16, -17, -128, -129, 32767, 32768, -32768, -32769,
        2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**63 - 1, -2**63]


@pytest.mark.parametrize("value", INTS)
def test_int_edges_round_trip(driver, value):
    got = echo(driver, value)
    assert got == value and type(got) is int


@pytest.mark.parametrize("value", [0.0, 1.5, -2.25, 1e308, 5e-324, math.inf, -math.inf])
def test_floats_round_trip(driver, value):
    got = echo(driver, value)
    assert got == value and type(got) is float


def test_nan_and_negative_zero(driver):
    assert math.isnan(echo(driver, math.nan))
    assert math.copysign(1.0, echo(driver, -0.0)) == -1.0


@pytest.mark.parametrize("value", ["", "a", "ünïcødé", "日本語テキスト", "emoji 🎉🌳", "x" * 100_000,
                                   "nul\x00inside", "line\nbreak"])
def test_strings_round_trip(driver, value):
    assert echo(driver, value) == value


@pytest.mark.parametrize("value", [b"", b"\x00\xff\x10", bytes(range(256)) * 300])
def test_bytes_round_trip(driver, value):
    assert bytes(echo(driver, bytearray(value))) == value


def test_booleans_null_lists_maps_and_nesting(driver):
    assert echo(driver, True) is True
    assert echo(driver, False) is False
    assert echo(driver, None) is None
    assert echo(driver, []) == []
    assert echo(driver, list(range(70_000))) == list(range(70_000))
    assert echo(driver, {}) == {}
    big_map = {f"k{i}": i for i in range(300)}
    assert echo(driver, big_map) == big_map
    nested = {"a": [1, "two", 3.0, None, [True, {"deep": ["er", {"est": b"\x01"}]}]], "b": {"c": {}}}
    got = echo(driver, nested)
    assert got["a"][:4] == [1, "two", 3.0, None]
    assert got["a"][4][1]["deep"][1]["est"] == b"\x01"
    assert got["b"] == {"c": {}}


@pytest.mark.parametrize("value", [
    Date(1970, 1, 1), Date(2024, 2, 29), Date(1900, 3, 1), Date(9999, 12, 31), Date(1, 1, 1),
])
def test_dates_round_trip(driver, value):
    assert echo(driver, value) == value


def test_local_times_and_times_with_offset(driver):
    lt = Time(12, 34, 56, 789123456)
    got = echo(driver, lt)
    assert got == lt and got.tzinfo is None
    assert echo(driver, Time(0, 0, 0)) == Time(0, 0, 0)
    assert echo(driver, Time(23, 59, 59, 999999999)) == Time(23, 59, 59, 999999999)
    # The driver needs a pytz offset for times (datetime.timezone cannot take a bare time).
    t = Time(1, 2, 3, 4, tzinfo=pytz.FixedOffset(150))
    got = echo(driver, t)
    assert (got.hour, got.minute, got.second, got.nanosecond) == (1, 2, 3, 4)
    assert got.utcoffset() == dt.timedelta(hours=2, minutes=30)


def test_local_datetimes(driver):
    for v in [DateTime(2024, 1, 2, 3, 4, 5, 6), DateTime(1969, 12, 31, 23, 59, 59, 999999999),
              DateTime(2000, 2, 29, 0, 0, 0, 0)]:
        got = echo(driver, v)
        assert got == v and got.tzinfo is None


def test_datetimes_with_offset(driver):
    for hours in [0, 2, -5, 14, -12]:
        tz = dt.timezone(dt.timedelta(hours=hours))
        v = DateTime(2024, 3, 31, 2, 30, 15, 123456789, tzinfo=tz)
        got = echo(driver, v)
        assert got == v
        assert got.utcoffset() == dt.timedelta(hours=hours)
        assert (got.hour, got.minute, got.nanosecond) == (2, 30, 123456789)
    # Plain Python datetimes are accepted too.
    native = dt.datetime(2021, 6, 1, 8, 0, 0, 500, tzinfo=dt.timezone.utc)
    assert echo(driver, native).to_native() == native


def test_datetimes_with_zone_id(driver):
    # pytz zones: the driver's zoneinfo path is unreliable (driver 5.x is an hour off in DST,
    # matching real Neo4j; CPython 3.11 here can crash inside it).
    stockholm = pytz.timezone("Europe/Stockholm")
    for when in [dt.datetime(2024, 7, 1, 12, 0, 0), dt.datetime(2024, 1, 15, 23, 59, 59, 250)]:
        v = stockholm.localize(when)
        got = echo(driver, v)
        assert got.to_native() == v  # same instant
        assert (got.hour, got.minute, got.second) == (when.hour, when.minute, when.second)
        assert got.utcoffset() == v.utcoffset()
        zone = getattr(got.tzinfo, "zone", None) or getattr(got.tzinfo, "key", None)
        assert zone == "Europe/Stockholm"
    tokyo = pytz.timezone("Asia/Tokyo").localize(dt.datetime(1999, 12, 31, 23, 0, 0))
    assert echo(driver, tokyo).to_native() == tokyo


def test_durations(driver):
    for v in [Duration(months=14, days=3, seconds=5, nanoseconds=7), Duration(seconds=-1, nanoseconds=5),
              Duration(), Duration(days=-400, hours=-3)]:
        assert echo(driver, v) == v


def test_points(driver):
    for v in [CartesianPoint((1.5, -2.5)), CartesianPoint((1.0, 2.0, 3.0)),
              WGS84Point((12.56, 55.67)), WGS84Point((12.56, 55.67, 100.0))]:
        got = echo(driver, v)
        assert type(got) is type(v)
        assert tuple(got) == tuple(v) and got.srid == v.srid


def test_many_parameters_at_once(driver):
    params = {"i": 1, "f": 2.5, "s": "x", "l": [1, 2], "m": {"k": "v"}, "d": Date(2020, 1, 1),
              "n": None, "b": True}
    with driver.session() as s:
        rec = s.run("RETURN $i AS i, $f AS f, $s AS s, $l AS l, $m AS m, $d AS d, $n AS n, $b AS b",
                    **params).single()
    assert rec.data() == params
    assert rec.keys() == ["i", "f", "s", "l", "m", "d", "n", "b"]


# ---- graph entities ---------------------------------------------------------------------------

def test_nodes_relationships_and_paths_out(driver):
    with driver.session() as s:
        s.run("MATCH (n:EntA) DETACH DELETE n").consume()
        s.run("MATCH (n:EntB) DETACH DELETE n").consume()
        rec = s.run("CREATE p=(a:EntA {x: 1})-[r:R {w: 2}]->(b:EntB {name: 'b'}) RETURN a, r, b, p").single()
    a, r, b, p = rec["a"], rec["r"], rec["b"], rec["p"]
    assert isinstance(a, Node) and a.labels == {"EntA"} and a["x"] == 1 and dict(a) == {"x": 1}
    assert isinstance(r, Relationship) and r.type == "R" and r["w"] == 2
    assert r.start_node.element_id == a.element_id and r.end_node.element_id == b.element_id
    assert a.element_id != b.element_id and isinstance(a.element_id, str)
    assert isinstance(p, Path) and len(p) == 1
    assert p.start_node.element_id == a.element_id and p.end_node.element_id == b.element_id
    assert p.start_node.labels == {"EntA"} and p.end_node["name"] == "b"
    assert p.relationships[0].type == "R" and p.relationships[0]["w"] == 2
    # Element ids are stable across queries.
    with driver.session() as s:
        again = s.run("MATCH (a:EntA) RETURN a").single()["a"]
    assert again.element_id == a.element_id


def test_paths_walked_against_relationship_direction(driver):
    with driver.session() as s:
        s.run("MATCH (n:Dir) DETACH DELETE n").consume()
        s.run("CREATE (:Dir {n: 1})-[:T]->(:Dir {n: 2})<-[:T]-(:Dir {n: 3})").consume()
        p = s.run("MATCH p=(x:Dir {n: 1})-[:T]->(:Dir {n: 2})<-[:T]-(:Dir {n: 3}) RETURN p").single()["p"]
    assert [n["n"] for n in p.nodes] == [1, 2, 3]
    first, second = p.relationships
    assert (first.start_node["n"], first.end_node["n"]) == (1, 2)
    # The second relationship is stored 3->2 even though the path walks 2->3.
    assert (second.start_node["n"], second.end_node["n"]) == (3, 2)


# ---- transactions and errors ------------------------------------------------------------------

def count(session, label):
    return session.run(f"MATCH (n:{label}) RETURN count(n) AS c").single()["c"]


def test_explicit_transactions_commit_and_rollback(driver):
    with driver.session() as s:
        s.run("MATCH (n:TxT) DETACH DELETE n").consume()
        with s.begin_transaction() as tx:
            tx.run("CREATE (:TxT {v: 1})").consume()
            assert tx.run("MATCH (n:TxT) RETURN count(n) AS c").single()["c"] == 1
            tx.commit()
        assert count(s, "TxT") == 1
        tx = s.begin_transaction()
        tx.run("CREATE (:TxT {v: 2})").consume()
        tx.rollback()
        assert count(s, "TxT") == 1
        # Two open results in one transaction.
        with s.begin_transaction() as tx:
            r1 = tx.run("UNWIND range(1, 5) AS i RETURN i")
            r2 = tx.run("UNWIND range(10, 12) AS j RETURN j")
            assert [r["j"] for r in r2] == [10, 11, 12]
            assert [r["i"] for r in r1] == [1, 2, 3, 4, 5]
            tx.commit()


def test_managed_transaction_functions(driver):
    with driver.session() as s:
        s.execute_write(lambda tx: tx.run("MERGE (:Managed {k: 1})").consume())
        n = s.execute_read(lambda tx: tx.run("MATCH (m:Managed) RETURN count(m) AS c").single()["c"])
    assert n == 1
    records, summary, keys = driver.execute_query("RETURN $a + 1 AS b", a=41)
    assert records[0]["b"] == 42 and keys == ["b"]


def test_errors_then_recovery_on_the_same_session(driver):
    with driver.session() as s:
        with pytest.raises(CypherSyntaxError) as e:
            s.run("RETRUN 1").consume()
        assert e.value.code == "Neo.ClientError.Statement.SyntaxError"
        assert s.run("RETURN 1 AS x").single()["x"] == 1
        with pytest.raises(ClientError):
            s.run("RETURN 1 / 0 AS x").consume()
        assert s.run("RETURN 2 AS x").single()["x"] == 2
        # An error inside an explicit transaction, then a new one.
        tx = s.begin_transaction()
        with pytest.raises(CypherSyntaxError):
            tx.run("THIS IS NOT CYPHER").consume()
        tx.close()
        with s.begin_transaction() as tx:
            assert tx.run("RETURN 3 AS x").single()["x"] == 3


def test_unknown_database_is_reported(server):
    with GraphDatabase.driver(f"bolt://127.0.0.1:{server}", auth=None) as d:
        with d.session(database="no_such_db") as s:
            with pytest.raises(ClientError) as e:
                s.run("RETURN 1").consume()
        assert e.value.code == "Neo.ClientError.Database.DatabaseNotFound"
        with d.session(database="neo4j") as s:
            assert s.run("RETURN 1 AS x").single()["x"] == 1


# ---- streaming, routing, concurrency -------------------------------------------------------------

def test_fetch_size_streams_100k_rows_in_order(driver):
    with driver.session(fetch_size=1000) as s:
        result = s.run("UNWIND range(1, 100000) AS i RETURN i")
        got = [r["i"] for r in result]
    assert got == list(range(1, 100001))


def test_partial_consumption_then_next_query(driver):
    with driver.session(fetch_size=10) as s:
        result = s.run("UNWIND range(1, 100000) AS i RETURN i")
        first = [next(iter(result))["i"] for _ in range(3)]
        assert first == [1, 2, 3]
        # The rest is discarded when the next query runs.
        assert s.run("RETURN 7 AS x").single()["x"] == 7


def test_neo4j_routing_scheme(server):
    with GraphDatabase.driver(f"neo4j://127.0.0.1:{server}", auth=None) as d:
        d.verify_connectivity()
        records, _, _ = d.execute_query("RETURN 1 AS x", routing_="r")
        assert records[0]["x"] == 1
        records, _, _ = d.execute_query("CREATE (n:Routed) RETURN count(n) AS c", routing_="w")
        assert records[0]["c"] == 1
        with d.session(default_access_mode=neo4j.READ_ACCESS) as s:
            assert s.run("RETURN 2 AS x").single()["x"] == 2


def test_concurrent_sessions_in_threads(driver):
    errors = []

    def work(k):
        try:
            with driver.session() as s:
                for i in range(30):
                    got = s.run("UNWIND range(1, $n) AS i RETURN sum(i) AS s", n=i + k).single()["s"]
                    assert got == (i + k) * (i + k + 1) // 2
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors


# ---- summaries and bookmarks ----------------------------------------------------------------

def test_summary_counters(driver):
    with driver.session() as s:
        s.run("MATCH (n:Cnt) DETACH DELETE n").consume()
        summary = s.run("CREATE (a:Cnt {x: 1, y: 2})-[:REL]->(b:Cnt) RETURN a").consume()
        c = summary.counters
        assert (c.nodes_created, c.relationships_created, c.properties_set, c.labels_added) == (2, 1, 2, 2)
        assert c.contains_updates
        assert summary.database == "neo4j"
        assert summary.result_available_after is not None and summary.result_consumed_after is not None
        summary = s.run("MATCH (n:Cnt) DETACH DELETE n").consume()
        assert summary.counters.nodes_deleted == 2 and summary.counters.relationships_deleted == 1
        summary = s.run("RETURN 1").consume()
        assert not summary.counters.contains_updates


def test_schema_counters_and_constraint_errors(driver):
    with driver.session() as s:
        c = s.run("CREATE INDEX drv_idx IF NOT EXISTS FOR (n:DrvIx) ON (n.p)").consume().counters
        assert c.indexes_added == 1 and c.contains_updates
        s.run("CALL db.awaitIndexes(60)").consume()
        c = s.run("CREATE CONSTRAINT drv_uniq FOR (n:DrvC) REQUIRE n.k IS UNIQUE").consume().counters
        assert c.constraints_added == 1
        s.run("CREATE (:DrvC {k: 1})").consume()
        with pytest.raises(ClientError) as e:
            s.run("CREATE (:DrvC {k: 1})").consume()
        assert e.value.code == "Neo.ClientError.Schema.ConstraintValidationFailed"
        # Neo4j 5 classifies this as a database error (the driver raises DatabaseError).
        with pytest.raises(neo4j.exceptions.DatabaseError) as e:
            s.run("CREATE CONSTRAINT FOR (n:DrvC) REQUIRE n.missing IS NOT NULL").consume()
        assert e.value.code == "Neo.DatabaseError.Schema.ConstraintCreationFailed"
        rows = s.run("SHOW INDEXES YIELD name, state WHERE name = 'drv_idx' RETURN state").values()
        assert rows == [["ONLINE"]]
        assert s.run("DROP CONSTRAINT drv_uniq").consume().counters.constraints_removed == 1
        assert s.run("DROP INDEX drv_idx").consume().counters.indexes_removed == 1
        s.run("MATCH (n:DrvC) DELETE n").consume()


def test_query_types_match_neo4j(driver):
    # Neo4j: a write that also returns rows is "rw"; a write that returns nothing is "w".
    with driver.session() as s:
        assert s.run("RETURN 1").consume().query_type == "r"
        assert s.run("CREATE (n:Qt) RETURN n").consume().query_type == "rw"
        assert s.run("MATCH (n:Qt) DETACH DELETE n").consume().query_type == "w"
        assert s.run("CREATE (:Qt)").consume().query_type == "w"


def test_bookmarks_are_returned_and_accepted(driver):
    with driver.session() as s:
        s.run("CREATE (:Bm)").consume()
        bookmarks = s.last_bookmarks()
    assert bookmarks and all(isinstance(b, str) and b for b in bookmarks.raw_values)
    with driver.session(bookmarks=bookmarks) as s:
        assert count(s, "Bm") >= 1
        with s.begin_transaction() as tx:
            tx.run("CREATE (:Bm)").consume()
            tx.commit()
        after_tx = s.last_bookmarks()
    assert after_tx and after_tx != bookmarks


def test_server_info(driver):
    info = driver.get_server_info()
    assert info.agent.startswith("Neo4j/")
    assert info.protocol_version >= (5, 0)


def test_official_bolt_smoke_script(server):
    if not os.path.exists(SMOKE):
        pytest.skip(f"{SMOKE} not available")
    out = subprocess.run([sys.executable, SMOKE, "--uri", f"bolt://127.0.0.1:{server}"],
                         capture_output=True, text=True, timeout=120)
    assert "5 passed, 0 failed" in out.stdout, out.stdout + out.stderr


def test_cartesian_product_notification(driver):
    with driver.session() as s:
        summary = s.run("MATCH (a), (b) RETURN count(*) AS c").consume()
        codes = [n["code"] for n in (summary.notifications or [])]
        assert "Neo.ClientNotification.Statement.CartesianProduct" in codes
        summary = s.run("MATCH (a)-->(b), (b)-->(c) RETURN count(*) AS c").consume()
        assert not summary.notifications


def test_show_databases_lists_neo4j(driver):
    with driver.session() as s:
        names = [r["name"] for r in s.run("SHOW DATABASES")]
        assert "neo4j" in names


def test_write_conflict_is_retryable_transient_error(driver):
    from neo4j.exceptions import TransientError
    with driver.session() as s:
        s.run("MATCH (n:Conflict) DETACH DELETE n").consume()
        s.run("CREATE (:Conflict {v: 0})").consume()
        with driver.session() as s2:
            t1 = s.begin_transaction()
            t2 = s2.begin_transaction()
            t1.run("MATCH (n:Conflict) SET n.v = 1").consume()
            t2.run("MATCH (n:Conflict) SET n.v = 2").consume()
            t1.commit()
            with pytest.raises(TransientError):
                t2.commit()
        assert s.run("MATCH (n:Conflict) RETURN n.v AS v").single()["v"] == 1
