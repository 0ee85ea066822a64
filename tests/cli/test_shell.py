"""`arbor shell` over Bolt, as cypher-shell is used: a query argument, a script on standard input or
in a file, parameters, explicit transactions, output formats, errors with their status codes and
the exit status scripts rely on."""
import json
import subprocess

from test_cli import BIN, start, stop


def shell(port, *args, stdin=None, user_env=None):
    r = subprocess.run([BIN, "shell", "-a", f"bolt://127.0.0.1:{port}", *args],
                       input=stdin.encode() if stdin is not None else None,
                       capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def test_shell_over_bolt_runs_queries_params_transactions_and_formats(tmp_path):
    proc, port = start(["--data", str(tmp_path / "d")])
    try:
        rc, out, _ = shell(port, "RETURN 1 AS x, 'a' AS s, null AS n")
        assert rc == 0 and out == 'x, s, n\n1, "a", NULL\n', out

        rc, out, _ = shell(port, "--format", "verbose", "-P", "x => 41", "RETURN $x + 1 AS y")
        assert rc == 0
        assert out.startswith("+----+\n| y  |\n+----+\n| 42 |\n+----+\n\n1 row\n"), out
        assert "ready to start consuming query after" in out

        script = """:param {a: 2}
CREATE (n:Sh {v: $a}) RETURN n;
:begin
MATCH (n:Sh) SET n.w = 1;
:rollback
// a comment; with a semicolon
MATCH (n:Sh) RETURN n.w AS w, n.v AS v;
"""
        rc, out, err = shell(port, "--format", "plain", stdin=script)
        assert rc == 0, err
        assert out == "n\n(:Sh {v: 2})\nw, v\nNULL, 2\n", out

        rc, out, _ = shell(port, "--format", "csv", "MATCH (n:Sh) RETURN 'x,y' AS a, n.v AS v")
        assert rc == 0 and out == 'a,v\n"x,y",2\n', out
        rc, out, _ = shell(port, "--format", "json", "MATCH (n:Sh) RETURN n.v AS v, [1, 2] AS l")
        assert rc == 0 and [json.loads(l) for l in out.splitlines()] == [{"v": 2, "l": [1, 2]}]

        rc, out, _ = shell(port, "--format", "verbose", "MATCH (n:Sh) SET n.z = 3")
        assert rc == 0 and out == "Set 1 properties\n", out
    finally:
        stop(proc)


def test_shell_stops_at_the_first_error_with_its_code_unless_fail_at_end(tmp_path):
    proc, port = start(["--data", str(tmp_path / "d")])
    try:
        script = "RETURN 1 AS a;\nRETURN nope;\nRETURN 2 AS b;\n"
        rc, out, err = shell(port, stdin=script)
        assert rc == 1
        assert out == "a\n1\n", out
        assert "Variable `nope` not defined" in err and "Neo.ClientError.Statement.SyntaxError" in err
        f = tmp_path / "s.cypher"
        f.write_text(script)
        rc, out, err = shell(port, "--fail-at-end", "-f", str(f))
        assert rc == 1 and out == "a\n1\nb\n2\n", out
        rc, _, err = shell(port, stdin=":commit\n")
        assert rc == 1 and "no open transaction" in err
        rc, _, err = shell(port, stdin=":nosuch\n")
        assert rc == 1 and "Could not find command :nosuch" in err
    finally:
        stop(proc)


def test_shell_reports_a_server_that_is_not_there():
    rc, _, err = shell(1, "RETURN 1")
    assert rc != 0 and "connecting to bolt://127.0.0.1:1" in err
