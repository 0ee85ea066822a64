//! Index part files (`base/part_file.rs`, `mvcc/part_files.rs`): a file-backed store's part
//! is a page-checksummed file read through the buffer pool, seeking exactly as the resident
//! part of an in-memory store and a scan do; a restart attaches it without a sort when its
//! file and record are durable (every crash point of the simulated file system), rebuilds it
//! when not, and never answers from a corrupted file; files nothing names go at the next open,
//! files a checkpoint folded go with that checkpoint.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arbor_model::{NodeId, Status, Value};

use crate::index_part_tests::{fill, probes, scan};
use crate::schema::{IndexKind, Target};
use crate::simfs::{FaultKind, SimFs};
use crate::vfs::Vfs;
use crate::{Store, StoreConfig, TokenKind};

fn cfg() -> StoreConfig {
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        memory_limit: Some(4 << 20),
        promote_at_open: false,
        ..StoreConfig::default()
    }
}

/// Every probe's seek, asserted equal to a scan; returns the answers.
fn seeks_like_a_scan(s: &Store, l: u32, k: u32, end: u64, what: &str) -> Vec<Vec<NodeId>> {
    probes()
        .iter()
        .map(|v| {
            let got = s.begin(true).index_seek(l, k, v).expect("indexed");
            assert_eq!(got, scan(s, l, k, v, end), "{what}: value {v:?}");
            got
        })
        .collect()
}

/// The part file attached to target `t`, if its part is paged.
fn part_file(s: &Store, t: &Target) -> Option<String> {
    let schema = s.core_for_test().schema().read();
    schema.parts.get(t).and_then(|p| p.file().map(str::to_string))
}

fn part_files(vfs: &dyn Vfs, dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        vfs.list_dir(dir).unwrap().into_iter().filter(|n| n.starts_with("index-")).collect();
    v.sort();
    v
}

fn real_part_files(dir: &Path) -> Vec<String> {
    part_files(&crate::vfs::RealFs, dir)
}

#[test]
fn a_paged_part_seeks_like_the_resident_part_and_a_scan() {
    for seed in [1, 7, 3] {
        let n = 3000;
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path(), cfg()).unwrap();
        let (l, k, end) = fill(&s, seed, n, true);
        let mem = Store::in_memory();
        assert_eq!(fill(&mem, seed, n, false), (l, k, end));
        for st in [&s, &mem] {
            // 8 KiB run buffer: 1,024 entries a run, a few spilled runs.
            st.core_for_test().set_index_budget(64 << 10, Some(dir.path().to_path_buf()));
            assert!(st.create_rule(IndexKind::Range, l, &[k], Some("ix")).unwrap());
            st.await_indexes(None, Duration::from_secs(60)).unwrap();
        }
        let t = (l, vec![k]);
        let file = part_file(&s, &t).expect("the file-backed store's part is paged");
        assert_eq!(part_file(&mem, &t), None, "the in-memory store's part is resident");
        {
            let schema = s.core_for_test().schema().read();
            assert_eq!(schema.parts[&t].bytes(), 0, "the paged part holds no words in memory");
            assert!(schema.parts[&t].stats.runs > 1);
        }
        assert_eq!(real_part_files(dir.path()), vec![file]);
        let before = s.page_cache_stats().unwrap();
        let paged = seeks_like_a_scan(&s, l, k, end, &format!("paged, seed {seed}"));
        let after = s.page_cache_stats().unwrap();
        assert!(
            after.misses + after.hits > before.misses + before.hits,
            "the seeks read the part's pages through the pool: {before:?} → {after:?}"
        );
        let resident = seeks_like_a_scan(&mem, l, k, end, &format!("resident, seed {seed}"));
        assert_eq!(paged, resident, "seed {seed}");
        // Writes after the population are found too.
        let mut tx = s.begin(false);
        let fresh = tx.create_node(&[l], vec![(k, Value::Int(7))]).unwrap();
        tx.commit().unwrap();
        assert!(s.begin(true).index_seek(l, k, &Value::Int(7)).unwrap().contains(&fresh));
    }
}

/// Nodes `0..n` labelled `L` with `u = i` (unique) and `k = i % 50`, checkpointed.
fn base_store(dir: &Path, n: i64) -> (Store, u32, u32, u32) {
    let s = Store::open(dir, cfg()).unwrap();
    let l = s.get_or_create_token(TokenKind::Label, "L").unwrap();
    let u = s.get_or_create_token(TokenKind::PropertyKey, "u").unwrap();
    let k = s.get_or_create_token(TokenKind::PropertyKey, "k").unwrap();
    let mut w = s.begin(false);
    for i in 0..n {
        w.create_node(&[l], vec![(u, Value::Int(i)), (k, Value::Int(i % 50))]).unwrap();
    }
    w.commit().unwrap();
    s.checkpoint().unwrap();
    (s, l, u, k)
}

fn reopen(dir: &Path) -> Store {
    let s = Store::open(dir, cfg()).unwrap();
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    s
}

fn ids(v: &[u64]) -> Vec<NodeId> {
    v.iter().map(|i| NodeId(*i)).collect()
}

#[test]
fn a_restart_attaches_the_stored_parts_without_a_sort() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (s, l, u, k) = base_store(dir.path(), 4000);
        // Rows of the log tail before the rules: their versions go into the delta index.
        let mut w = s.begin(false);
        w.set_node_property(NodeId(5), k, Value::Int(777)).unwrap();
        w.commit().unwrap();
        assert!(s.create_rule(IndexKind::Uniqueness, l, &[u], Some("uq")).unwrap());
        assert!(s.create_index(l, k, Some("ix")).unwrap());
        s.await_indexes(None, Duration::from_secs(60)).unwrap();
        assert_eq!(s.core_for_test().parts_built(), 2);
        assert_eq!(real_part_files(dir.path()).len(), 2);
        s.crash_for_test();
    }
    let s = reopen(dir.path());
    let (l, u, k) = (0, 0, 1);
    assert_eq!(s.core_for_test().parts_built(), 0, "a stored part was sorted again");
    assert!(part_file(&s, &(l, vec![u])).is_some() && part_file(&s, &(l, vec![k])).is_some());
    assert!(s.indexes().iter().all(|i| i.state == "ONLINE"));
    let r = s.begin(true);
    assert_eq!(r.index_seek(l, k, &Value::Int(777)), Some(ids(&[5])));
    let fives: Vec<NodeId> = (0..4000u64).filter(|i| i % 50 == 5 && *i != 5).map(NodeId).collect();
    assert_eq!(r.index_seek(l, k, &Value::Int(5)), Some(fives));
    assert_eq!(r.index_seek(l, u, &Value::Int(3999)), Some(ids(&[3999])));
    assert_eq!(r.index_seek(l, u, &Value::Int(4000)), Some(vec![]));
    drop(r);
    // The attached uniqueness rule is enforced against the stored rows.
    let mut w = s.begin(false);
    let e = match w.create_node(&[l], vec![(u, Value::Int(1234))]) {
        Err(e) => e,
        Ok(_) => w.commit().unwrap_err(),
    };
    assert_eq!(e.status, Status::ConstraintValidationFailed, "{e:?}");
    // A clean close checkpoints: the base indexes both targets, the files are garbage.
    s.close().unwrap();
    drop(s);
    assert_eq!(real_part_files(dir.path()), Vec::<String>::new());
    let s = reopen(dir.path());
    assert_eq!(s.core_for_test().parts_built(), 0);
    assert_eq!(s.begin(true).index_seek(l, u, &Value::Int(3999)), Some(ids(&[3999])));
}

/// Flips one byte of every part file at `at` bytes from its start.
fn flip(dir: &Path, at: u64) {
    for f in real_part_files(dir) {
        let p: PathBuf = dir.join(f);
        let mut b = std::fs::read(&p).unwrap();
        let i = (at as usize).min(b.len() - 1);
        b[i] ^= 0x10;
        std::fs::write(&p, b).unwrap();
    }
}

#[test]
fn a_corrupted_part_file_is_rebuilt_never_read() {
    // A data page (the last byte of the file), then the header.
    for at in [u64::MAX, 20] {
        let dir = tempfile::tempdir().unwrap();
        {
            let (s, l, _, k) = base_store(dir.path(), 3000);
            assert!(s.create_index(l, k, Some("ix")).unwrap());
            s.await_indexes(None, Duration::from_secs(60)).unwrap();
            s.crash_for_test();
        }
        let old = real_part_files(dir.path());
        assert_eq!(old.len(), 1);
        flip(dir.path(), at);
        let s = reopen(dir.path());
        assert_eq!(s.core_for_test().parts_built(), 1, "byte {at}: the part was not rebuilt");
        let new = part_file(&s, &(0, vec![1])).expect("rebuilt into a new file");
        assert_ne!(vec![new.clone()], old);
        let want: Vec<NodeId> = (0..3000u64).filter(|i| i % 50 == 7).map(NodeId).collect();
        assert_eq!(s.begin(true).index_seek(0, 1, &Value::Int(7)), Some(want));
        s.crash_for_test();
        drop(s);
        // The next open attaches the rebuilt file and removes the corrupt one.
        let s = reopen(dir.path());
        assert_eq!(s.core_for_test().parts_built(), 0);
        assert_eq!(real_part_files(dir.path()), vec![new]);
    }
}

#[test]
fn dropped_and_unnamed_part_files_go_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (s, l, u, k) = base_store(dir.path(), 2000);
        assert!(s.create_index(l, k, Some("ix")).unwrap());
        assert!(s.create_rule(IndexKind::Uniqueness, l, &[u], Some("uq")).unwrap());
        s.await_indexes(None, Duration::from_secs(60)).unwrap();
        assert!(s.drop_index("ix").unwrap());
        assert_eq!(real_part_files(dir.path()).len(), 2, "a drop leaves the file to the open");
        s.crash_for_test();
    }
    // A file no record names (a crash before its record), and a torn tmp file.
    std::fs::write(dir.path().join("index-00000000000000ff-0.arbor"), b"x").unwrap();
    std::fs::write(dir.path().join("index-00000000000000ff-1.arbor.tmp"), b"x").unwrap();
    let s = reopen(dir.path());
    let kept = part_file(&s, &(0, vec![0])).expect("the constraint's part attached");
    assert_eq!(real_part_files(dir.path()), vec![kept]);
    assert_eq!(s.core_for_test().parts_built(), 0);
}

const DIR: &str = "/data";

/// Every crash point of `CREATE INDEX` over a base (the create record, the part file's
/// writes, fsync, rename and directory fsync, the attach record): the restart answers as a
/// scan; the part attaches without a sort exactly when the crash came after its record, and
/// leaves no file nothing names.
#[test]
fn every_crash_point_of_a_part_restarts_attached_or_rebuilt() {
    let config = StoreConfig { memory_limit: Some(1 << 20), ..cfg() };
    let (mut attached, mut rebuilt) = (0, 0);
    for skip in 0.. {
        let fs = SimFs::new(skip + 1);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let s = Store::open_with_vfs(Path::new(DIR), config.clone(), vfs.clone()).unwrap();
        let (l, k, end) = fill(&s, 5, 1500, true);
        fs.arm(FaultKind::Crash, skip);
        let created = s.create_rule(IndexKind::Range, l, &[k], Some("ix")).is_ok();
        if created {
            let _ = s.await_indexes(None, Duration::from_secs(60));
        }
        let struck = fs.crashed();
        fs.disarm();
        s.crash_for_test();
        drop(s);
        fs.restart();
        let s = Store::open_with_vfs(Path::new(DIR), config.clone(), vfs.clone()).unwrap();
        s.await_indexes(None, Duration::from_secs(60)).unwrap();
        let files = part_files(&*vfs, Path::new(DIR));
        if s.indexes().is_empty() {
            // The create record was lost: nothing of the rule survives.
            assert!(struck, "skip {skip}: the rule vanished without a crash");
            assert_eq!(files, Vec::<String>::new(), "skip {skip}");
        } else {
            let file = part_file(&s, &(l, vec![k])).expect("a paged part");
            assert_eq!(files, vec![file], "skip {skip}: a file nothing names survived");
            if s.core_for_test().parts_built() == 0 {
                attached += 1;
            } else {
                rebuilt += 1;
            }
            seeks_like_a_scan(&s, l, k, end, &format!("crash at operation {skip}"));
        }
        s.crash_for_test();
        if !struck {
            break;
        }
    }
    eprintln!("crash points: {attached} attached, {rebuilt} rebuilt");
    assert!(attached >= 1 && rebuilt >= 3, "attached {attached}, rebuilt {rebuilt}");
}
