"""The `arbor` binary's command line: auth modes, refusal to expose an unauthenticated server,
configuration errors, and the embedded shell."""
import os
import signal
import socket
import subprocess
import time

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

BIN = os.environ.get("ARBOR_BIN", os.path.join(os.path.dirname(__file__), "../../target/release/arbor"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, env=None):
    port = free_port()
    proc = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{port}", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited: " + proc.stderr.read().decode(errors="replace"))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("server did not start")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


def test_basic_auth_accepts_the_right_password_and_rejects_a_wrong_one(tmp_path):
    proc, port = start(["--data", str(tmp_path / "d"), "--auth", "basic"],
                       env={"ARBOR_INITIAL_PASSWORD": "s3cret-pw"})
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", "s3cret-pw")) as d:
            records, _, _ = d.execute_query("RETURN 1 AS x")
            assert records[0]["x"] == 1
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", "wrong")) as d:
            with pytest.raises(AuthError):
                d.verify_connectivity()
    finally:
        stop(proc)
    # The hash is stored, never the password.
    stored = (tmp_path / "d" / "auth.toml").read_text()
    assert "s3cret-pw" not in stored and "argon2" in stored


def test_refuses_non_loopback_without_auth(tmp_path):
    r = subprocess.run([BIN, "serve", "--data", str(tmp_path / "d"), "--listen", "0.0.0.0:0",
                        "--auth", "none"], capture_output=True, timeout=30)
    assert r.returncode != 0
    assert b"without authentication" in r.stderr


def test_non_loopback_defaults_to_basic_auth_and_needs_a_password(tmp_path):
    r = subprocess.run([BIN, "serve", "--data", str(tmp_path / "d"), "--listen", "0.0.0.0:0"],
                       capture_output=True, timeout=30, env={k: v for k, v in os.environ.items()
                                                            if k != "ARBOR_INITIAL_PASSWORD"})
    assert r.returncode != 0
    assert b"initial password" in r.stderr


def test_bad_config_file_names_the_problem(tmp_path):
    cfg = tmp_path / "arbor.toml"
    cfg.write_text('listen = "not an address"\n')
    r = subprocess.run([BIN, "serve", "--config", str(cfg), "--data", str(tmp_path / "d")],
                       capture_output=True, timeout=30)
    assert r.returncode != 0
    assert b"listen" in r.stderr and b"not an address" in r.stderr
    cfg.write_text('nonsense_key = 1\n')
    r = subprocess.run([BIN, "serve", "--config", str(cfg), "--data", str(tmp_path / "d")],
                       capture_output=True, timeout=30)
    assert r.returncode != 0
    assert b"nonsense_key" in r.stderr


def test_config_file_sets_listen_and_data(tmp_path):
    port = free_port()
    cfg = tmp_path / "arbor.toml"
    cfg.write_text(f'listen = "127.0.0.1:{port}"\ndata = "{tmp_path / "fromcfg"}"\n')
    proc = subprocess.Popen([BIN, "serve", "--config", str(cfg)], stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert time.time() < deadline and proc.poll() is None
                time.sleep(0.05)
        assert (tmp_path / "fromcfg").is_dir()
    finally:
        stop(proc)


def test_shell_runs_statements_against_a_data_directory(tmp_path):
    data = str(tmp_path / "d")
    r = subprocess.run([BIN, "shell", "--data", data], input=b"CREATE (:S {v: 41});\nMATCH (s:S) RETURN s.v + 1 AS v;\n",
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b"42" in r.stdout
    r = subprocess.run([BIN, "shell", "--data", data, "-c", "MATCH (s:S) RETURN count(s) AS c"],
                       capture_output=True, timeout=60)
    assert r.returncode == 0 and b"1" in r.stdout
