"""A full disk under a running server: the data directory sits on a 64 MiB tmpfs filled up to a
few MiB (real ENOSPC). As the storage designs it: the commit that meets the full disk is held,
unacknowledged, while the log writer retries; new writes fail at once with a clear error; reads
go on and see every acknowledged commit; once space returns the held commit is acknowledged and
writes work again; after a restart exactly the acknowledged commits are there. (Skipped where
this process may not mount; storage's simulated file system covers the same in
crates/storage/src/fault_tests.rs.) Also any other log write failure (here EFBIG from a
file-size limit, RLIMIT_FSIZE): final, the failing write gets an error naming the file, reads go
on, and a restart has exactly the acknowledged commits and takes writes again."""
import os
import resource
import signal
import socket
import subprocess
import threading
import time

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

from test_cli import BIN, free_port

BATCH = 200
PAD = "x" * 1000


def try_mount(path):
    """Mounts a 64 MiB tmpfs at `path`; False when this process may not mount."""
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(path)],
                       capture_output=True)
    return r.returncode == 0


def start(data, port, fsize=None, log=None):
    def limit():
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, resource.RLIM_INFINITY))

    proc = subprocess.Popen([BIN, "serve", "--data", str(data), "--listen", f"127.0.0.1:{port}",
                             "--http-listen", "off", "--durability", "sync"],
                            stdout=subprocess.DEVNULL, stderr=log or subprocess.DEVNULL,
                            preexec_fn=limit)
    deadline = time.time() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            assert time.time() < deadline, "server did not start listening"
            time.sleep(0.05)


def write_batch(driver, b):
    driver.execute_query("UNWIND range(1, $n) AS i CREATE (:FULLDISK_N {b: $b, i: i, pad: $pad})",
                         n=BATCH, b=b, pad=PAD)


def count(driver):
    records, _, _ = driver.execute_query("MATCH (n:FULLDISK_N) RETURN count(n) AS c, "
                                         "count(DISTINCT n.b) AS b")
    return records[0]["c"], records[0]["b"]


class Writer:
    """Writes batches one after another on a thread, keeping the acknowledged ones."""

    def __init__(self, driver, first):
        self.driver, self.next = driver, first
        self.acked, self.errors = [], []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            try:
                write_batch(self.driver, self.next)
                self.acked.append(self.next)
            except (Neo4jError, ServiceUnavailable, SessionExpired) as e:
                self.errors.append(e)
                return
            self.next += 1

    def stalled(self, quiet=3.0, limit=300.0):
        """Waits until no batch was acknowledged for `quiet` seconds."""
        deadline = time.time() + limit
        seen, since = len(self.acked), time.time()
        while time.time() < deadline:
            time.sleep(0.2)
            if len(self.acked) != seen:
                seen, since = len(self.acked), time.time()
            elif time.time() - since >= quiet:
                return True
        return False


@pytest.fixture
def full_disk(tmp_path):
    """(data dir, fill, free) on a 64 MiB tmpfs."""
    mnt = tmp_path / "mnt"
    if not try_mount(mnt):
        pytest.skip("mounting a tmpfs is not allowed here")
    filler = mnt / "filler"

    def fill():
        st = os.statvfs(mnt)
        free = st.f_bavail * st.f_frsize
        with open(filler, "wb") as f:
            f.write(b"\0" * max(0, free - 3 * 1024 * 1024))

    try:
        yield mnt / "data", fill, filler.unlink
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_full_disk_holds_the_commit_refuses_new_writes_keeps_reads_and_recovers(full_disk, tmp_path):
    data, fill, free = full_disk
    port = free_port()
    log = open(tmp_path / "server.log", "wb")
    proc = start(data, port, None, log)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None,
                                  max_transaction_retry_time=0) as driver:
            write_batch(driver, 0)
            fill()
            writer = Writer(driver, 1)
            assert writer.stalled(), "the disk never filled up"
            assert not writer.errors, writer.errors
            acked = [0] + list(writer.acked)
            assert proc.poll() is None, "the server died on a full disk"
            # A new write fails at once, naming the problem.
            t = time.time()
            with pytest.raises(Neo4jError) as e:
                write_batch(driver, 50_000)
            assert time.time() - t < 10
            assert "full" in str(e.value).lower() or "space" in str(e.value).lower(), e.value
            # Reads go on and see every acknowledged write (the held one may not be visible yet).
            n, b = count(driver)
            assert len(acked) * BATCH <= n <= (len(acked) + 1) * BATCH, (n, len(acked))
            # Space returns: the held commit is acknowledged, and writes work again. The writer
            # stops after the held commit, so the log stays small enough for the shutdown
            # checkpoint to fit on the 64 MiB disk (a fast machine wrote 30 MiB more before).
            writer.stop.set()
            free()
            deadline = time.time() + 60
            while len(writer.acked) + 1 == len(acked) and time.time() < deadline:
                time.sleep(0.2)
            writer.thread.join(timeout=60)
            assert not writer.thread.is_alive(), "the held commit was never acknowledged"
            assert not writer.errors, writer.errors
            acked = [0] + list(writer.acked)
            write_batch(driver, 60_000)
            acked.append(60_000)
            assert count(driver) == (len(acked) * BATCH, len(acked))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, (tmp_path / "server.log").read_text()[-3000:]
        # Exactly the acknowledged commits are there after a restart.
        proc = start(data, port, None, log)
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as driver:
            assert count(driver) == (len(acked) * BATCH, len(acked))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, (tmp_path / "server.log").read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def test_a_log_write_failure_other_than_a_full_disk_is_final_and_loses_nothing(tmp_path):
    data = tmp_path / "data"
    port = free_port()
    log = open(tmp_path / "server.log", "wb")
    proc = start(data, port, 4 * 1024 * 1024, log)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None,
                                  max_transaction_retry_time=0) as driver:
            writer = Writer(driver, 0)
            writer.thread.join(timeout=300)
            assert writer.errors, "the log never reached the file-size limit"
            assert "file too large" in str(writer.errors[0]).lower(), writer.errors[0]
            acked = list(writer.acked)
            assert acked, "nothing was written before the limit"
            # Final: later writes are refused too, and reads see exactly the acknowledged ones.
            with pytest.raises(Neo4jError):
                write_batch(driver, 50_000)
            assert count(driver) == (len(acked) * BATCH, len(acked))
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        # A restart without the limit has exactly the acknowledged commits, and takes writes.
        proc = start(data, port, None, log)
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as driver:
            assert count(driver) == (len(acked) * BATCH, len(acked))
            write_batch(driver, 60_000)
            assert count(driver) == ((len(acked) + 1) * BATCH, len(acked) + 1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, (tmp_path / "server.log").read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
