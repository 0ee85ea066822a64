"""Users travel with backups: `arbor backup` (online) and `arbor dump` carry the user store
(auth.toml, hashes only); `arbor restore` / `arbor load` put it back, so the restored server
accepts the same logins; `--skip-users` leaves it out."""
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from test_backup import arbor
from test_cli import start, stop

ADMIN = ("neo4j", "admin-pass-1")
ALICE = ("alice", "alice-pass-1")


def serve_basic(data):
    return start(["--data", str(data), "--auth", "basic"],
                 env={"ARBOR_INITIAL_PASSWORD": ADMIN[1]})


def logins(data):
    """Which of ADMIN, ALICE can log in to a server on `data`, and its node count."""
    proc, port = serve_basic(data)
    ok = []
    nodes = None
    try:
        for who in (ADMIN, ALICE):
            with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=who) as d:
                try:
                    records, _, _ = d.execute_query("MATCH (n:OPS3_BackupUser) RETURN count(n) AS c")
                    ok.append(who[0])
                    nodes = records[0]["c"]
                except AuthError:
                    pass
    finally:
        stop(proc)
    return ok, nodes


def test_backup_restore_dump_and_load_carry_the_users(tmp_path):
    data, bk = tmp_path / "data", tmp_path / "bk"
    proc, port = serve_basic(data)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=ADMIN) as d:
            d.execute_query(
                f"CREATE USER {ALICE[0]} SET PASSWORD '{ALICE[1]}' CHANGE NOT REQUIRED")
            d.execute_query("CREATE (:OPS3_BackupUser {i: 1})")
        out = arbor("backup", "--from", f"127.0.0.1:{port}", "--to", str(bk),
                    "-u", ADMIN[0], "-p", ADMIN[1]).stdout
        assert "backup: users:" in out, out
    finally:
        stop(proc)
    assert (bk / "auth.toml").read_text() == (data / "auth.toml").read_text()
    assert "alice-pass-1" not in (bk / "auth.toml").read_text()

    arbor("restore", "--from", str(bk), "--to", str(tmp_path / "r1"))
    assert logins(tmp_path / "r1") == (["neo4j", "alice"], 1)

    # Without the users the restored store starts empty: the initial password makes `neo4j`.
    arbor("restore", "--from", str(bk), "--to", str(tmp_path / "r2"), "--skip-users")
    assert not (tmp_path / "r2" / "auth.toml").exists()
    assert logins(tmp_path / "r2") == (["neo4j"], 1)

    # A damaged users file in the backup is named by restore.
    (bk / "auth.toml").write_text((bk / "auth.toml").read_text().replace("alice", "alicf"))
    p = arbor("restore", "--from", str(bk), "--to", str(tmp_path / "r3"), check=False)
    assert p.returncode != 0 and "auth.toml" in p.stderr and "corrupt" in p.stderr, p.stderr

    dump = tmp_path / "db.dump"
    arbor("dump", "--data", str(data), "--to", str(dump))
    arbor("load", "--from", str(dump), "--to", str(tmp_path / "l1"))
    assert (tmp_path / "l1" / "auth.toml").read_text() == (data / "auth.toml").read_text()
    assert logins(tmp_path / "l1") == (["neo4j", "alice"], 1)
    arbor("load", "--from", str(dump), "--to", str(tmp_path / "l2"), "--skip-users")
    assert not (tmp_path / "l2" / "auth.toml").exists()


def test_a_backup_of_a_server_without_auth_still_has_its_user_file(tmp_path):
    data, bk = tmp_path / "data", tmp_path / "bk"
    proc, port = start(["--data", str(data)])
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            d.execute_query(f"CREATE USER {ALICE[0]} SET PASSWORD '{ALICE[1]}' CHANGE NOT REQUIRED")
        arbor("backup", "--from", f"127.0.0.1:{port}", "--to", str(bk))
    finally:
        stop(proc)
    assert "[users.alice]" in (bk / "auth.toml").read_text()
    arbor("restore", "--from", str(bk), "--to", str(tmp_path / "r"))
    # The store is not empty, so no initial `neo4j` is made: exactly the backed-up users.
    assert logins(tmp_path / "r")[0] == ["alice"]
