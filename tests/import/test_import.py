"""`arbor import` end to end: a small generated data set with bad rows, a gzip file, a separate
header file and both command-line spellings, imported by the release binary; then the printed
counts, the report file, `arbor serve` + queries over Bolt with the official driver, and
`arbor check`."""
import gzip
import os
import signal
import socket
import subprocess
import time

from neo4j import GraphDatabase

BIN = os.environ.get("ARBOR_BIN", os.path.join(os.path.dirname(__file__), "../../target/release/arbor"))

PEOPLE = 200  # person ids p0..p199; p7 appears twice (a duplicate)
CITIES = ["Oslo", "Rome", "Lima"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(data):
    port = free_port()
    proc = subprocess.Popen([BIN, "serve", "--data", str(data), "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
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
    assert proc.wait(timeout=60) == 0


def make_data(d):
    """Writes the input files; returns the expected numbers."""
    (d / "people-header.csv").write_text(
        "uid:ID(Person),name,age:int,score:double,tags:string[],born:date,active:boolean,:LABEL\n")
    rows = []
    for i in range(PEOPLE):
        label = "Admin" if i % 50 == 0 else ""
        rows.append(f'p{i},"Person {i}",{20 + i % 60},{i / 4},t{i % 3};x,2000-01-{1 + i % 28:02d},'
                    f'{"true" if i % 2 else "false"},{label}\n')
    rows.insert(10, 'p7,"Duplicate",1,,,,,\n')          # duplicate id (skipped, reported)
    rows.insert(20, 'p900,"Bad age",notanumber,,,,,\n')  # unparsable value (skipped, reported)
    with gzip.open(d / "people.csv.gz", "wt") as f:
        f.write("".join(rows))
    (d / "cities.csv").write_text("name:ID(City),population:long\n" +
                                  "".join(f"{c},{(n + 1) * 100000}\n" for n, c in enumerate(CITIES)))
    knows = [":START_ID(Person),:END_ID(Person),since:int\n"]
    for i in range(PEOPLE):
        knows.append(f"p{i},p{(i + 1) % PEOPLE},{2000 + i % 20}\n")
    knows.append("p1,p12345,2001\n")   # unknown end node (skipped, reported)
    knows.append(",p2,2001\n")         # missing start id (skipped, reported)
    (d / "knows.csv").write_text("".join(knows))
    lives = [":START_ID(Person),:END_ID(City)\n"]
    for i in range(PEOPLE):
        lives.append(f"p{i},{CITIES[i % 3]}\n")
    (d / "lives.csv").write_text("".join(lives))
    return {"nodes": PEOPLE + len(CITIES), "rels": 2 * PEOPLE, "bad": 4}


def run_import(args, cwd):
    r = subprocess.run([BIN, "import", *args], capture_output=True, text=True, timeout=300, cwd=cwd)
    return r


def test_import_then_serve_query_and_check(tmp_path):
    want = make_data(tmp_path)
    db = tmp_path / "db"
    r = run_import(["--data", str(db),
                    "--nodes=Person=people-header.csv,people.csv.gz",
                    "--nodes=City=cities.csv",
                    "--relationships=KNOWS=knows.csv",
                    "--relationships=LIVES_IN=lives.csv",
                    "--skip-duplicate-nodes", "--skip-bad-relationships=true",
                    "--report-file=import.report", "--threads=2", "--progress=plain"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "IMPORT DONE in" in out
    assert f"  {want['nodes']} nodes" in out
    assert f"  {want['rels']} relationships" in out
    assert "Peak memory usage:" in out
    assert f"There were {want['bad']} bad entries" in out

    report = (tmp_path / "import.report").read_text().splitlines()
    assert len(report) == want["bad"], report
    assert report[0].startswith("people.csv.gz:11: id 'p7' is defined more than once"), report
    assert report[1].startswith("people.csv.gz:21: cannot parse `notanumber` as int"), report
    assert report[2].startswith("knows.csv:202:") and "'p12345'" in report[2], report
    assert report[3].startswith("knows.csv:203:") and "no start node id" in report[3], report

    proc, port = serve(db)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as drv:
            def one(q, **params):
                records, _, _ = drv.execute_query(q, params)
                return records[0]
            assert one("MATCH (n) RETURN count(n) AS c")["c"] == want["nodes"]
            assert one("MATCH (:Person) RETURN count(*) AS c")["c"] == PEOPLE
            assert one("MATCH (:Admin) RETURN count(*) AS c")["c"] == PEOPLE // 50
            assert one("MATCH ()-[r:KNOWS]->() RETURN count(r) AS c")["c"] == PEOPLE
            assert one("MATCH ()-[r:LIVES_IN]->() RETURN count(r) AS c")["c"] == PEOPLE
            p = one("MATCH (p:Person {uid: 'p5'}) RETURN p")["p"]
            assert p["name"] == "Person 5" and p["age"] == 25 and p["score"] == 1.25
            assert p["tags"] == ["t2", "x"] and p["active"] is True
            assert str(p["born"]) == "2000-01-06"
            assert one("MATCH (p:Person {uid: 'p7'}) RETURN p.name AS n")["n"] == "Person 7"
            rec = one("MATCH (:Person {uid: 'p3'})-[k:KNOWS]->(o)-[:LIVES_IN]->(c) "
                      "RETURN o.uid AS o, k.since AS s, c.name AS c, c.population AS pop")
            assert (rec["o"], rec["s"], rec["c"], rec["pop"]) == ("p4", 2003, "Rome", 200000)
            assert one("CALL db.warmup() YIELD nodes RETURN nodes")["nodes"] == want["nodes"]
            w = one("CALL apoc.warmup.run(true) YIELD nodesTotal, relsTotal, propertiesLoaded "
                    "RETURN nodesTotal, relsTotal, propertiesLoaded")
            assert (w["nodesTotal"], w["relsTotal"], w["propertiesLoaded"]) == (want["nodes"], want["rels"], True)
            drv.execute_query("CREATE CONSTRAINT person_uid FOR (p:Person) REQUIRE p.uid IS UNIQUE")
            assert one("MATCH (p:Person {uid: 'p150'}) RETURN p.age AS a")["a"] == 20 + 150 % 60
    finally:
        stop(proc)

    r = subprocess.run([BIN, "check", "--data", str(db)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK: no problems found" in r.stdout


def test_old_syntax_defaults_and_refusals(tmp_path):
    make_data(tmp_path)
    db = tmp_path / "db"
    # Duplicates are fatal by default, and a failed import leaves nothing that opens.
    r = run_import(["--into", str(db), "--nodes:Person", "people-header.csv,people.csv.gz"], tmp_path)
    assert r.returncode != 0
    assert "defined more than once" in r.stderr and "--skip-duplicate-nodes" in r.stderr
    assert not (db / "MANIFEST").exists()
    # The old form with `--flag true` values and a bad-relationship tolerance of zero.
    r = run_import(["--into", str(db), "--nodes:Person", "people-header.csv,people.csv.gz",
                    "--nodes:City", "cities.csv", "--relationships:KNOWS", "knows.csv",
                    "--skip-duplicate-nodes", "true", "--skip-bad-relationships", "true",
                    "--bad-tolerance", "1", "--stacktrace"], tmp_path)
    assert r.returncode != 0
    assert "too many bad entries" in r.stderr, r.stderr
    r = run_import(["--into", str(db), "--nodes:Person", "people-header.csv,people.csv.gz",
                    "--nodes:City", "cities.csv", "--relationships:KNOWS", "knows.csv",
                    "--skip-duplicate-nodes", "true", "--skip-bad-relationships", "true"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"  {PEOPLE + len(CITIES)} nodes" in r.stdout
    assert f"  {PEOPLE} relationships" in r.stdout
    # An existing store is refused without --overwrite-destination.
    r = run_import(["--data", str(db), "--nodes=City=cities.csv"], tmp_path)
    assert r.returncode != 0 and "--overwrite-destination" in r.stderr
    r = run_import(["--data", str(db), "--nodes=City=cities.csv", "--overwrite-destination=true"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"  {len(CITIES)} nodes" in r.stdout


def test_help_documents_the_options():
    r = subprocess.run([BIN, "import", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0
    for opt in ["--nodes", "--relationships", "--overwrite-destination", "--report-file", "--threads",
                "--max-off-heap-memory", "--id-type", "--delimiter", "--array-delimiter", "--quote",
                "--multiline-fields", "--trim-strings", "--ignore-empty-strings", "--ignore-extra-columns",
                "--skip-duplicate-nodes", "--skip-bad-relationships", "--bad-tolerance", "--input-encoding",
                "--normalize-types", "--into", "--stacktrace"]:
        assert opt in r.stdout, opt
