"""`arbor import` running out of disk: the destination sits on an 8 MiB tmpfs (real ENOSPC) and the
input makes a store of about 17 MiB, mostly relationship properties (held in memory until the segment
is written, so the disk fills while the segment is written, after the incomplete-import marker). A
fresh import fails saying it ran out of disk space and that the directory holds no usable store;
`arbor check` refuses the directory (it never opens as a partial store) and the work files are gone. Over a previous store, the failed import leaves that
store as it was, checked and counted. (Skipped where this process may not mount, as in
tests/cli/test_full_disk.py; `arbor_storage::bulk`'s own tests cover an import stopped at any
point.)"""
import os
import subprocess

import pytest

BIN = os.environ.get("ARBOR_BIN", os.path.join(os.path.dirname(__file__), "../../target/release/arbor"))

NODES = 40_000
PAD = "x" * 400


def try_mount(path, size):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                       capture_output=True)
    return r.returncode == 0


def run(args, cwd):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def import_args(db, nodes, rels):
    return ["import", "--data", str(db), f"--nodes=FULLIMP_N={nodes}",
            f"--relationships=FULLIMP_R={rels}", "--threads=2", "--progress=quiet",
            "--max-off-heap-memory=1g"]


def test_import_out_of_disk_leaves_no_half_store(tmp_path):
    disk = tmp_path / "disk"
    if not try_mount(disk, "8m"):
        pytest.skip("cannot mount a tmpfs here")
    try:
        big_nodes = tmp_path / "big-nodes.csv"
        with open(big_nodes, "w") as f:
            f.write("id:ID\n")
            for i in range(NODES):
                f.write(f"{i}\n")
        big_rels = tmp_path / "big-rels.csv"
        with open(big_rels, "w") as f:
            f.write(":START_ID,:END_ID,pad\n")
            for i in range(NODES):
                f.write(f"{i},{(i * 7919) % NODES},{i}-{PAD}\n")
        small_nodes = tmp_path / "small-nodes.csv"
        small_nodes.write_text("id:ID,name\n" + "".join(f"{i},n{i}\n" for i in range(100)))
        small_rels = tmp_path / "small-rels.csv"
        small_rels.write_text(":START_ID,:END_ID\n" + "".join(f"{i},{(i + 1) % 100}\n" for i in range(100)))

        # A fresh destination: the import fails and says so; nothing opens.
        db = disk / "db"
        r = run(import_args(db, big_nodes, big_rels), tmp_path)
        assert r.returncode != 0, r.stdout + r.stderr
        assert "out of disk space" in r.stderr, r.stderr
        assert "holds no usable store" in r.stderr, r.stderr
        left = sorted(os.listdir(db))
        assert not any(n.startswith("import-work-") or n == "import-staging" or n.endswith(".tmp")
                       for n in left), left
        c = run(["check", "--data", str(db)], tmp_path)
        assert c.returncode != 0 and "did not finish" in c.stdout + c.stderr, c.stdout + c.stderr

        # Over a previous store: it stays as it was.
        r = run(import_args(db, small_nodes, small_rels) + ["--overwrite-destination"], tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        r = run(import_args(db, big_nodes, big_rels) + ["--overwrite-destination"], tmp_path)
        assert r.returncode != 0, r.stdout + r.stderr
        assert "out of disk space" in r.stderr and "still holds its previous store" in r.stderr, r.stderr
        c = run(["check", "--data", str(db)], tmp_path)
        assert c.returncode == 0, c.stdout + c.stderr
        assert "snapshot: 100 nodes, 100 relationships" in c.stdout, c.stdout
        assert "OK: no problems found" in c.stdout, c.stdout
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
