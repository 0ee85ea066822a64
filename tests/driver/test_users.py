"""User administration in Cypher with the official Python driver, against `arbor serve --auth basic`:
neomodel's fixture statement (`CREATE OR REPLACE USER ... CHANGE NOT REQUIRED`, on `system` and on
the default database as neomodel sends it, then a login as that user), Neo4j's errors for each refusal, "password change required", suspended users,
persistence across a restart, and the commands with authentication disabled.

The expected codes and messages are Neo4j 5.26's. With USERS_TEST_PORT and USERS_TEST_PASSWORD set
(the admin user `neo4j`'s password), the tests run against that already running server instead, e.g.
a Neo4j with auth enabled, to check the expectations; Arbor-only features (SET STATUS, restarts)
are then left out.
"""
import os
import subprocess

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, Neo4jError

ADMIN_PASSWORD = os.environ.get("USERS_TEST_PASSWORD", "admin-secret")
EXTERNAL = bool(os.environ.get("USERS_TEST_PORT"))
arbor_only = pytest.mark.skipif(EXTERNAL, reason="Arbor-only behaviour (server restarts, SET STATUS)")


@pytest.fixture(scope="module")
def basic_server(tmp_path_factory, servers, port_factory):
    """`arbor serve --auth basic` with admin `neo4j`; yields (port, data directory)."""
    if EXTERNAL:
        yield int(os.environ["USERS_TEST_PORT"]), None
        return
    start, stop = servers
    data = tmp_path_factory.mktemp("users-data")
    port = port_factory()
    proc = start(data, port, "--auth", "basic", "--initial-password", ADMIN_PASSWORD)
    yield port, data
    stop(proc)


def driver_for(port, user, password):
    return GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=(user, password))


@pytest.fixture(scope="module")
def admin(basic_server):
    with driver_for(basic_server[0], "neo4j", ADMIN_PASSWORD) as d:
        yield d


def system(d, text, **params):
    records, summary, keys = d.execute_query(text, params, database_="system")
    return [r.data() for r in records], summary, keys


def neo4j_error(fn):
    with pytest.raises(Neo4jError) as e:
        fn()
    return e.value


def cleanup(admin, *names):
    for n in names:
        system(admin, f"DROP USER {n} IF EXISTS")


def test_neomodel_fixture_creates_a_user_that_can_log_in(admin, basic_server):
    # neomodel's conftest: create (or replace) the test user on system, then connect as it.
    stmt = "CREATE OR REPLACE USER troygreene SET PASSWORD 'foobarbaz' CHANGE NOT REQUIRED"
    _, summary, keys = system(admin, stmt)
    assert keys == []
    assert summary.counters.system_updates == 1
    assert summary.counters.contains_system_updates
    assert summary.query_type == "s"
    # neomodel itself sends it to the default database, which Neo4j 5 accepts too; a second run
    # replaces the user (a drop and a create).
    _, summary, _ = admin.execute_query(stmt)
    assert summary.counters.system_updates == 2
    with driver_for(basic_server[0], "troygreene", "foobarbaz") as d:
        records, _, _ = d.execute_query("CREATE (n:Person {name: 'Troy'}) RETURN n.name AS name")
        assert records[0]["name"] == "Troy"
        rows, _, keys = system(d, "SHOW CURRENT USER")
        assert keys == ["user", "roles", "passwordChangeRequired", "suspended", "home"]
        assert [(r["user"], r["roles"], r["passwordChangeRequired"]) for r in rows] == [("troygreene", None, False)]
        records, _, keys = d.execute_query("CALL dbms.showCurrentUser()")
        assert keys == ["username", "roles", "flags"]
        assert records[0].data() == {"username": "troygreene", "roles": None, "flags": []}
    with pytest.raises(AuthError):
        with driver_for(basic_server[0], "troygreene", "wrong-password") as d:
            d.verify_connectivity()
    cleanup(admin, "troygreene")
    with pytest.raises(AuthError):
        with driver_for(basic_server[0], "troygreene", "foobarbaz") as d:
            d.verify_connectivity()


def test_show_users_columns_yield_and_where(admin):
    cleanup(admin, "sam", "sue")
    system(admin, "CREATE USER sam SET PASSWORD 'sam-password'")
    system(admin, "CREATE USER sue SET PLAINTEXT PASSWORD $pw CHANGE NOT REQUIRED", pw="sue-password")
    rows, _, keys = system(admin, "SHOW USERS")
    assert keys == ["user", "roles", "passwordChangeRequired", "suspended", "home"]
    by_name = {r["user"]: r for r in rows}
    assert by_name["sam"]["passwordChangeRequired"] is True  # the default for CREATE USER
    assert by_name["sue"]["passwordChangeRequired"] is False
    assert by_name["neo4j"]["roles"] is None
    rows, _, keys = system(admin, "SHOW USERS YIELD user, passwordChangeRequired WHERE user STARTS WITH 's'")
    assert keys == ["user", "passwordChangeRequired"]
    assert rows == [{"user": "sam", "passwordChangeRequired": True}, {"user": "sue", "passwordChangeRequired": False}]
    rows, _, _ = system(admin, "SHOW USERS YIELD user ORDER BY user DESC LIMIT 1")
    assert rows == [{"user": "sue"}]
    # Administration commands are accepted on the default database too, as in Neo4j 5.
    records, _, _ = admin.execute_query("SHOW USERS YIELD user WHERE user = 'sam'", database_="neo4j")
    assert [r["user"] for r in records] == ["sam"]
    cleanup(admin, "sam", "sue")


def test_refusals_carry_neo4j_codes_and_messages(admin):
    cleanup(admin, "dup", "other", "renamed")
    system(admin, "CREATE USER dup SET PASSWORD 'dup-password'")
    cases = [
        ("CREATE USER dup SET PASSWORD 'dup-password'", "Neo.ClientError.Statement.ArgumentError",
         "Failed to create the specified user 'dup': User already exists."),
        ("DROP USER nobody", "Neo.ClientError.Statement.ArgumentError",
         "Failed to delete the specified user 'nobody': User does not exist."),
        ("DROP USER neo4j", "Neo.ClientError.Statement.ArgumentError",
         "Failed to delete the specified user 'neo4j': Deleting yourself is not allowed."),
        ("CREATE USER other SET PASSWORD ''", "Neo.ClientError.Statement.ArgumentError",
         "A password cannot be empty."),
        ("CREATE USER other SET PASSWORD 'short'", "Neo.ClientError.Statement.ArgumentError",
         "A password must be at least 8 characters."),
        ("ALTER USER nobody SET PASSWORD 'long-enough'", "Neo.ClientError.Statement.ArgumentError",
         "Failed to alter the specified user 'nobody': User does not exist."),
        ("ALTER USER dup SET PASSWORD 'dup-password'", "Neo.ClientError.Statement.ArgumentError",
         "Failed to alter the specified user 'dup': Old password and new password cannot be the same."),
        ("RENAME USER nobody TO x", "Neo.ClientError.Statement.ArgumentError",
         "Failed to rename the specified user 'nobody' to 'x': The user 'nobody' does not exist."),
        ("RENAME USER dup TO neo4j", "Neo.ClientError.Statement.ArgumentError",
         "Failed to rename the specified user 'dup' to 'neo4j': User 'neo4j' already exists."),
        ("ALTER CURRENT USER SET PASSWORD FROM 'wrong-password' TO 'new-password'",
         "Neo.ClientError.Statement.ArgumentError",
         "User 'neo4j' failed to alter their own password: Invalid principal or credentials."),
        (f"ALTER CURRENT USER SET PASSWORD FROM '{ADMIN_PASSWORD}' TO '{ADMIN_PASSWORD}'",
         "Neo.ClientError.Statement.ArgumentError",
         "User 'neo4j' failed to alter their own password: Old password and new password cannot be the same."),
        ("CREATE OR REPLACE USER neo4j SET PASSWORD 'long-enough'", "Neo.ClientError.Statement.ArgumentError",
         "Failed to replace the specified user 'neo4j': Deleting yourself is not allowed."),
        ("CREATE USER `we ird` SET PASSWORD 'long-enough'", "Neo.ClientError.Statement.ArgumentError",
         "Username 'we ird' contains illegal characters."),
        ("CREATE USER other SET ENCRYPTED PASSWORD 'abc'", "Neo.ClientError.Statement.ArgumentError",
         "Incorrect format of encrypted password. Correct format is '<encryption-version>,<hash>,<salt>'."),
        ("CREATE USER other SET PASSWORD $pw", "Neo.ClientError.Statement.ParameterMissing",
         "Expected parameter(s): pw"),
        ("ALTER USER dup", "Neo.ClientError.Statement.SyntaxError", "`ALTER USER` requires at least one clause."),
        ("CREATE OR REPLACE USER x IF NOT EXISTS SET PASSWORD 'long-enough'", "Neo.ClientError.Statement.SyntaxError",
         "cannot have both `OR REPLACE` and `IF NOT EXISTS`"),
    ]
    for text, code, message in cases:
        e = neo4j_error(lambda: system(admin, text))
        assert (e.code, message in e.message) == (code, True), (text, e.code, e.message)
    # The IF [NOT] EXISTS forms are quiet no-ops.
    for text in ["CREATE USER dup IF NOT EXISTS SET PASSWORD 'dup-password'", "DROP USER nobody IF EXISTS",
                 "ALTER USER nobody IF EXISTS SET PASSWORD 'long-enough'", "RENAME USER nobody IF EXISTS TO x"]:
        _, summary, _ = system(admin, text)
        assert summary.counters.system_updates == 0, text
    system(admin, "RENAME USER dup TO renamed")
    rows, _, _ = system(admin, "SHOW USERS YIELD user WHERE user IN ['dup', 'renamed']")
    assert rows == [{"user": "renamed"}]
    cleanup(admin, "renamed")


EXPIRED = "Neo.ClientError.Security.CredentialsExpired"


def test_password_change_required(admin, basic_server):
    port = basic_server[0]
    cleanup(admin, "newbie")
    system(admin, "CREATE USER newbie SET PASSWORD 'first-password'")  # CHANGE REQUIRED by default
    with driver_for(port, "newbie", "first-password") as d:
        e = neo4j_error(lambda: d.execute_query("RETURN 1", database_="neo4j"))
        assert e.code == EXPIRED
        assert e.message.startswith("ACCESS on database 'neo4j' is not allowed.")
        assert "ALTER CURRENT USER SET PASSWORD FROM 'current password' TO 'new password'" in e.message
        e = neo4j_error(lambda: system(d, "SHOW USERS"))
        assert (e.code, e.message.startswith("Permission denied.")) == (EXPIRED, True)
        e = neo4j_error(lambda: system(d, "ALTER CURRENT USER SET PASSWORD FROM 'first-password' TO 'short'"))
        assert e.message == "A password must be at least 8 characters."
        system(d, "ALTER CURRENT USER SET PASSWORD FROM 'first-password' TO 'second-password'")
    rows, _, _ = system(admin, "SHOW USERS YIELD user, passwordChangeRequired WHERE user = 'newbie'")
    assert rows == [{"user": "newbie", "passwordChangeRequired": False}]
    with driver_for(port, "newbie", "second-password") as d:
        records, _, _ = d.execute_query("RETURN 2 AS x")
        assert records[0]["x"] == 2
    # An administrator can require a change again.
    system(admin, "ALTER USER newbie SET PASSWORD CHANGE REQUIRED")
    with driver_for(port, "newbie", "second-password") as d:
        assert neo4j_error(lambda: d.execute_query("RETURN 3")).code == EXPIRED
    cleanup(admin, "newbie")


@arbor_only
def test_suspended_user_cannot_log_in(admin, basic_server):
    port = basic_server[0]
    cleanup(admin, "sleepy")
    system(admin, "CREATE USER sleepy SET PASSWORD 'sleepy-password' CHANGE NOT REQUIRED SET STATUS SUSPENDED")
    rows, _, _ = system(admin, "SHOW USERS YIELD user, suspended WHERE user = 'sleepy'")
    assert rows == [{"user": "sleepy", "suspended": True}]
    with pytest.raises(AuthError):
        with driver_for(port, "sleepy", "sleepy-password") as d:
            d.verify_connectivity()
    system(admin, "ALTER USER sleepy SET STATUS ACTIVE SET HOME DATABASE neo4j")
    with driver_for(port, "sleepy", "sleepy-password") as d:
        rows, _, _ = system(d, "SHOW CURRENT USER YIELD user, suspended, home")
        assert rows == [{"user": "sleepy", "suspended": False, "home": "neo4j"}]
    e = neo4j_error(lambda: system(admin, "ALTER USER neo4j SET STATUS SUSPENDED"))
    assert e.message == "Failed to alter the specified user 'neo4j': Changing your own activation status is not allowed."
    cleanup(admin, "sleepy")


@arbor_only
def test_users_persist_across_restarts_and_without_auth(tmp_path, servers, port_factory, arbor_bin):
    start, stop = servers
    data = tmp_path / "data"
    # With authentication disabled the commands still manage the stored users, as in Neo4j.
    port = port_factory()
    proc = start(data, port, "--auth", "none")
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            system(d, "CREATE USER keeper SET PASSWORD 'keeper-password' CHANGE NOT REQUIRED")
            rows, _, _ = system(d, "SHOW CURRENT USER")
            assert rows == []
            e = neo4j_error(lambda: system(d, "ALTER CURRENT USER SET PASSWORD FROM 'a-password' TO 'b-password'"))
            assert e.code == "Neo.DatabaseError.Statement.ExecutionFailed"
            assert e.message == ("User failed to alter their own password: "
                                 "Command not available with auth disabled.")
            e = neo4j_error(lambda: d.execute_query("CALL dbms.showCurrentUser()"))
            assert e.code == "Neo.ClientError.Procedure.ProcedureNotFound"
    finally:
        stop(proc)
    text = (data / "auth.toml").read_text()
    assert "$argon2id$" in text and "keeper-password" not in text
    # `arbor passwd` manages the same file.
    subprocess.run([arbor_bin, "passwd", "--data", str(data), "--user", "admin2", "--password", "admin2-password"],
                   check=True, capture_output=True, timeout=60)
    # The stored user exists, so basic auth needs no initial password; it logs in at once.
    port = port_factory()
    proc = start(data, port, "--auth", "basic")
    try:
        with driver_for(port, "admin2", "admin2-password") as d:
            d.verify_connectivity()
        with driver_for(port, "keeper", "keeper-password") as d:
            records, _, _ = d.execute_query("RETURN 'in' AS x")
            assert records[0]["x"] == "in"
            system(d, "CREATE USER second SET PASSWORD 'second-password'")
            system(d, "ALTER CURRENT USER SET PASSWORD FROM 'keeper-password' TO 'keeper-password-2'")
    finally:
        stop(proc)
    port = port_factory()
    proc = start(data, port, "--auth", "basic")
    try:
        with driver_for(port, "keeper", "keeper-password-2") as d:
            rows, _, _ = system(d, "SHOW USERS YIELD user, passwordChangeRequired")
            assert rows == [{"user": "admin2", "passwordChangeRequired": False},
                            {"user": "keeper", "passwordChangeRequired": False},
                            {"user": "second", "passwordChangeRequired": True}]
    finally:
        stop(proc)
