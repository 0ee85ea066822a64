"""A real kill -9 loop: writers running, the server SIGKILLed at random moments 20 times and
restarted each time; every acknowledged commit is present at the end and the store passes
`arbor check`. Seeded, so a failure can be replayed (ARBOR_KILL_SEED, ARBOR_KILL_ROUNDS)."""
import os
import random
import subprocess
import threading
import time

from neo4j import GraphDatabase

from test_crash import BIN, free_port, kill, start

ROUNDS = int(os.environ.get("ARBOR_KILL_ROUNDS", "20"))
SEED = int(os.environ.get("ARBOR_KILL_SEED", "7"))


def writer(port, w, acked, lock, stop):
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None,
                                  max_transaction_retry_time=0) as driver:
            with driver.session() as s:
                i = 0
                while not stop.is_set():
                    key = f"{w}-{i}"
                    if i % 3 == 0:
                        # An explicit transaction with several writes: all or nothing.
                        with s.begin_transaction() as tx:
                            tx.run("CREATE (:K {k: $k, part: 1})", k=key).consume()
                            tx.run("CREATE (:K {k: $k, part: 2})", k=key).consume()
                            tx.commit()
                    else:
                        s.run("CREATE (:K {k: $k, part: 1}), (:K {k: $k, part: 2})", k=key).consume()
                    with lock:
                        acked.append(key)
                    i += 1
    except Exception:
        pass  # killed under us: the unacknowledged transaction may or may not be there


def test_kill_loop_keeps_every_acknowledged_commit(tmp_path):
    rng = random.Random(SEED)
    data = tmp_path / "data"
    acked, lock = [], threading.Lock()
    for round_no in range(ROUNDS):
        port = free_port()
        proc = start(data, port)
        stop = threading.Event()
        threads = [threading.Thread(target=writer, args=(port, f"r{round_no}w{w}", acked, lock, stop))
                   for w in range(3)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.05, 0.6))
        kill(proc)
        stop.set()
        for t in threads:
            t.join(timeout=30)
    expected = set(acked)
    # Every round should get some commits acknowledged before the kill.
    assert len(expected) >= ROUNDS, f"only {len(expected)} commits acknowledged in {ROUNDS} rounds"
    print(f"{len(expected)} acknowledged transactions over {ROUNDS} kills")
    port = free_port()
    proc = start(data, port)
    try:
        with GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=None) as driver:
            records, _, _ = driver.execute_query("MATCH (k:K) RETURN k.k AS k, count(*) AS parts")
        present = {r["k"]: r["parts"] for r in records}
        missing = expected - present.keys()
        assert not missing, f"{len(missing)} acknowledged transactions lost, e.g. {sorted(missing)[:5]}"
        torn = {k: p for k, p in present.items() if p != 2}
        assert not torn, f"transactions applied partially: {list(torn.items())[:5]}"
    finally:
        kill(proc)
    r = subprocess.run([BIN, "check", "--data", str(data)], capture_output=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr).decode(errors="replace")
