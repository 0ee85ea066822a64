"""`arbor backup` / `restore` / `dump` / `load`: an online backup under concurrent writers
restores exactly the commits up to its point (each write's commit is read from its bookmark),
incremental backups continue it, a damaged chunk or file is an error naming it, a non-empty
target is refused without --force; a backup runs at the lowest CPU and I/O priority, one with
nothing new leaves the directory untouched, --max-rate holds it to its rate; and SHOW
TRANSACTIONS reports a transaction's memory."""
import os
import re
import subprocess
import threading
import time

from neo4j import GraphDatabase

from test_cli import BIN, start, stop


def arbor(*args, check=True):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    if check:
        assert p.returncode == 0, f"arbor {' '.join(args)} failed:\n{p.stdout}\n{p.stderr}"
    return p


class Writers:
    """Threads creating (:BACKUP_W {w, i}) one auto-commit transaction each; every
    acknowledged write is kept with its commit (from the bookmark `neo4j:<commit>`)."""

    def __init__(self, port, n=2):
        self.driver = GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None)
        self.acked = []  # (commit, w, i)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(w,)) for w in range(n)]
        for t in self.threads:
            t.start()

    def run(self, w):
        with self.driver.session() as s:
            i = 0
            while not self.stop.is_set():
                s.run("CREATE (:BACKUP_W {w: $w, i: $i, pad: $pad})", w=w, i=i, pad="x" * 200).consume()
                commit = int(list(s.last_bookmarks().raw_values)[0].split(":")[-1])
                with self.lock:
                    self.acked.append((commit, w, i))
                i += 1

    def count(self):
        with self.lock:
            return len(self.acked)

    def wait_for(self, n):
        while self.count() < n:
            threading.Event().wait(0.01)

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join()
        self.driver.close()


def backup_commit(out):
    m = re.search(r"at commit (\d+)", out)
    assert m, out
    return int(m.group(1))


def contents(data):
    proc, port = start(["--data", str(data)])
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            rows, _, _ = d.execute_query("MATCH (n:BACKUP_W) RETURN n.w AS w, n.i AS i")
            return sorted((r["w"], r["i"]) for r in rows)
    finally:
        stop(proc)


def expected(writers, commit):
    with writers.lock:
        return sorted((w, i) for c, w, i in writers.acked if c <= commit)


def test_online_backup_under_writers_restores_exactly_its_commit(tmp_path):
    data, bk = tmp_path / "data", tmp_path / "bk"
    proc, port = start(["--data", str(data)])
    writers = Writers(port)
    try:
        writers.wait_for(200)
        before = writers.count()
        out = arbor("backup", "--from", f"bolt://127.0.0.1:{port}", "--to", str(bk)).stdout
        assert "full backup" in out, out
        first = backup_commit(out)
        writers.wait_for(writers.count() + 100)
        out2 = arbor("backup", "--from", f"127.0.0.1:{port}", "--to", str(bk)).stdout
        assert "incremental backup" in out2, out2
        second = backup_commit(out2)
        writers.wait_for(writers.count() + 100)
        out3 = arbor("backup", "--from", f"127.0.0.1:{port}", "--to", str(bk)).stdout
        assert "incremental backup" in out3, out3
        third = backup_commit(out3)
    finally:
        writers.finish()
        stop(proc)
    assert first < second < third
    # Everything acknowledged before the backup started is in it.
    assert before <= len(expected(writers, first))
    r1 = tmp_path / "r1"
    out = arbor("restore", "--from", str(bk), "--to", str(r1)).stdout
    assert f"restored commit {third}" in out and "check OK" in out, out
    arbor("check", "--data", str(r1))
    assert contents(r1) == expected(writers, third)
    assert len(expected(writers, third)) > len(expected(writers, first))


def test_a_backup_yields_leaves_an_unchanged_backup_alone_and_keeps_its_max_rate(tmp_path):
    data, bk = tmp_path / "data", tmp_path / "bk"
    proc, port = start(["--data", str(data)])
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            d.execute_query("UNWIND range(1, 3000) AS i CREATE (:BACKUP_W {w: 2, i: i, pad: $pad})",
                            pad="y" * 300)
        url = f"127.0.0.1:{port}"
        out = arbor("backup", "--from", url, "--to", str(bk)).stdout
        # What the process reads back from the kernel after lowering itself (SCHED_IDLE, or
        # nice 19 where the class is refused; the idle I/O class).
        m = re.search(r"running at the lowest priority: CPU (\S+) \(nice (-?\d+)\), I/O (\S+)", out)
        assert m, out
        assert m.group(1) == "SCHED_IDLE" or m.group(2) == "19", out
        assert m.group(3) == "idle", out
        meta = bk / "backup.meta"
        before = (meta.read_bytes(), meta.stat().st_mtime_ns)
        out = arbor("backup", "--from", url, "--to", str(bk)).stdout
        assert "incremental backup" in out and "nothing new since commit" in out, out
        assert (meta.read_bytes(), meta.stat().st_mtime_ns) == before
        # --max-rate: the full copy takes at least size / rate.
        size = sum(f.stat().st_size for f in bk.iterdir() if f.name.startswith("wal-"))
        assert size > 800_000, size
        t = time.perf_counter()
        out = arbor("backup", "--from", url, "--to", str(tmp_path / "slow"), "--max-rate", "1m").stdout
        took = time.perf_counter() - t
        assert took >= 0.9 * size / (1 << 20), (took, size, out)
        p = arbor("backup", "--from", url, "--to", str(tmp_path / "bad"), "--max-rate", "12q",
                  check=False)
        assert p.returncode != 0 and "--max-rate" in p.stderr, p.stderr
    finally:
        stop(proc)
    out = arbor("restore", "--from", str(tmp_path / "slow"), "--to", str(tmp_path / "r")).stdout
    assert "check OK" in out, out
    assert len(contents(tmp_path / "r")) == 3000


def test_restore_refuses_a_non_empty_target_and_names_a_damaged_file(tmp_path):
    data, bk = tmp_path / "data", tmp_path / "bk"
    proc, port = start(["--data", str(data)])
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            d.execute_query("UNWIND range(1, 50) AS i CREATE (:BACKUP_W {w: 0, i: i})")
        arbor("backup", "--from", f"127.0.0.1:{port}", "--to", str(bk))
    finally:
        stop(proc)
    target = tmp_path / "busy"
    target.mkdir()
    (target / "keep").write_text("x")
    p = arbor("restore", "--from", str(bk), "--to", str(target), check=False)
    assert p.returncode != 0 and "not empty" in p.stderr and "--force" in p.stderr, p.stderr
    assert (target / "keep").exists()
    arbor("restore", "--from", str(bk), "--to", str(target), "--force")
    assert len(contents(target)) == 50
    # Flip one byte of the largest file: restore names it.
    victim = max((f for f in bk.iterdir() if f.name != "backup.meta"), key=lambda f: f.stat().st_size)
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    victim.write_bytes(bytes(raw))
    p = arbor("restore", "--from", str(bk), "--to", str(tmp_path / "r2"), check=False)
    assert p.returncode != 0 and victim.name in p.stderr and "corrupt" in p.stderr, p.stderr
    assert not (tmp_path / "r2").exists()


def test_dump_and_load_round_trip_and_a_damaged_dump_is_refused(tmp_path):
    data = tmp_path / "data"
    proc, port = start(["--data", str(data)])
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            d.execute_query("UNWIND range(1, 300) AS i CREATE (:BACKUP_W {w: 1, i: i})-[:BACKUP_R]->(:BACKUP_X)")
        # A dump needs the store stopped.
        p = arbor("dump", "--data", str(data), "--to", str(tmp_path / "x.dump"), check=False)
        assert p.returncode != 0
    finally:
        stop(proc)
    dump = tmp_path / "db.dump"
    out = arbor("dump", "--data", str(data), "--to", str(dump)).stdout
    assert "dump: commit" in out
    out = arbor("load", "--from", str(dump), "--to", str(tmp_path / "loaded")).stdout
    assert "600 nodes, 300 relationships" in out and "check OK" in out, out
    assert contents(tmp_path / "loaded") == contents(data)
    raw = bytearray(dump.read_bytes())
    raw[20] ^= 0x01
    dump.write_bytes(bytes(raw))
    p = arbor("load", "--from", str(dump), "--to", str(tmp_path / "l2"), check=False)
    assert p.returncode != 0 and "db.dump is corrupt" in p.stderr, p.stderr
    assert not (tmp_path / "l2").exists()


def test_show_transactions_reports_memory(tmp_path):
    proc, port = start(["--data", str(tmp_path / "d")])
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as d:
            with d.session() as s, s.begin_transaction() as tx:
                tx.run("UNWIND range(1, 300000) AS x WITH collect(toString(x)) AS c RETURN size(c)").consume()
                rows, _, _ = d.execute_query(
                    "SHOW TRANSACTIONS YIELD currentQuery, currentQueryAllocatedBytes AS now, "
                    "estimatedUsedHeapMemory AS peak WHERE NOT currentQuery STARTS WITH 'SHOW' "
                    "RETURN now, peak")
                assert len(rows) == 1
                assert rows[0]["peak"] >= 1 << 20 and rows[0]["now"] >= 0, rows
    finally:
        stop(proc)
