//! Index population by external sort (`base::index_build`, `mvcc/index_part.rs`): seeks on
//! an index built with a tiny run buffer (many spilled runs) answer exactly what a scan with
//! Cypher equality answers on random graphs (duplicates, missing keys, mixed value types,
//! rows updated, deleted and created in the delta); uniqueness violations are found across
//! run boundaries with Neo4j's message, and hash collisions between distinct keys are
//! accepted; the sort's own allocation stays within its share.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use arbor_model::{NodeId, Status, Value};

use crate::base::{HashSorter, SortBudget};
use crate::schema::IndexKind;
use crate::value::index_key;
use crate::{Store, TokenKind};

/// A small deterministic generator (xorshift).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A value of a few types, often repeated (Int and integral Float compare equal).
pub(crate) fn value(r: &mut Rng) -> Value {
    let x = r.below(40) as i64;
    match r.below(5) {
        0 => Value::Int(x),
        1 => Value::Float(x as f64),
        2 => Value::Float(x as f64 + 0.5),
        3 => Value::String(Arc::from(format!("s{x}"))),
        _ => Value::Bool(x % 2 == 0),
    }
}

/// A store of `n` nodes (label 0 on most, key 0 on most) folded into its base, then rows
/// updated, deleted, relabelled and created in the delta.
fn random_store(seed: u64, n: u64) -> (Store, u32, u32) {
    let s = Store::in_memory();
    let (l, k, _) = fill(&s, seed, n, false);
    (s, l, k)
}

/// Fills `s` with `n` random nodes (label `P` on most, key `k` on most), makes them its base
/// (`checkpoint`: a file-backed store; else a fold), then updates, deletes and creates rows
/// in the delta. Returns the label, the key and an id bound.
pub(crate) fn fill(s: &Store, seed: u64, n: u64, checkpoint: bool) -> (u32, u32, u64) {
    let mut r = Rng(seed | 1);
    let l = s.get_or_create_token(TokenKind::Label, "P").unwrap();
    let other = s.get_or_create_token(TokenKind::Label, "Q").unwrap();
    let k = s.get_or_create_token(TokenKind::PropertyKey, "k").unwrap();
    let mut tx = s.begin(false);
    for _ in 0..n {
        let labels = if r.below(10) == 0 { vec![other] } else { vec![l] };
        let props = if r.below(8) == 0 { vec![] } else { vec![(k, value(&mut r))] };
        tx.create_node(&labels, props).unwrap();
    }
    tx.commit().unwrap();
    if checkpoint {
        s.checkpoint().unwrap();
    } else {
        s.compact().unwrap();
    }
    let mut tx = s.begin(false);
    for _ in 0..n / 10 {
        let id = NodeId(r.below(n));
        if !tx.node_exists(id) {
            continue;
        }
        match r.below(3) {
            0 => tx.set_node_property(id, k, value(&mut r)).unwrap(),
            1 => {
                let _ = tx.delete_node(id);
            }
            _ => {
                tx.create_node(&[l], vec![(k, value(&mut r))]).unwrap();
            }
        }
    }
    tx.commit().unwrap();
    (l, k, n + n / 10 + 10)
}

/// Every visible node of label `l` whose key `k` equals `v` (Cypher equality), by scan.
pub(crate) fn scan(s: &Store, l: u32, k: u32, v: &Value, end: u64) -> Vec<NodeId> {
    let tx = s.begin(true);
    let want = index_key(v);
    (0..end)
        .map(NodeId)
        .filter(|id| tx.node_labels(*id).contains(&l))
        .filter(|id| want.is_some() && tx.node_property(*id, k).and_then(|x| index_key(&x)) == want)
        .collect()
}

/// Keys to seek: values of the graph's kinds, plus keys no node has.
pub(crate) fn probes() -> Vec<Value> {
    let mut r = Rng(99);
    let mut v: Vec<Value> = (0..60).map(|_| value(&mut r)).collect();
    v.extend([Value::Int(1000), Value::String(Arc::from("absent")), Value::Float(f64::NAN)]);
    v
}

#[test]
fn external_population_seeks_like_a_scan() {
    for (seed, kind) in [(1, IndexKind::Range), (7, IndexKind::Range), (3, IndexKind::Range)] {
        let n = 3000;
        let (s, l, k) = random_store(seed, n);
        let core = s.core_for_test();
        // 1 KiB run buffer: 128 entries a run, tens of runs.
        core.set_index_budget(8 << 10, None);
        let built = core.parts_built();
        assert!(s.create_rule(kind, l, &[k], Some("ix")).unwrap());
        s.await_indexes(None, Duration::from_secs(60)).unwrap();
        assert_eq!(core.parts_built(), built + 1, "the base rows went into a part");
        let runs = {
            let schema = core.schema().read();
            let part = schema.parts.get(&(l, vec![k])).expect("a part is attached");
            part.stats.runs
        };
        assert!(runs > 10, "seed {seed}: {runs} run(s)");
        let end = n + n / 10 + 10;
        for v in probes() {
            let tx = s.begin(true);
            let got = tx.index_seek(l, k, &v).expect("indexed");
            assert_eq!(got, scan(&s, l, k, &v, end), "seed {seed}, value {v:?}");
        }
        // Writes after the population are found too; after a fold the base takes over.
        let mut tx = s.begin(false);
        let fresh = tx.create_node(&[l], vec![(k, Value::Int(7))]).unwrap();
        tx.commit().unwrap();
        assert!(s.begin(true).index_seek(l, k, &Value::Int(7)).unwrap().contains(&fresh));
        s.compact().unwrap();
        for v in probes() {
            let got = s.begin(true).index_seek(l, k, &v).expect("indexed");
            assert_eq!(got, scan(&s, l, k, &v, end + 1), "after the fold: seed {seed}, {v:?}");
        }
    }
}

/// A uniqueness constraint over distinct keys, with a tiny run buffer and every hash
/// masked to 2 bits (distinct keys collide all the time): created, and enforced.
#[test]
fn unique_constraint_accepts_colliding_hashes() {
    let s = Store::in_memory();
    let tx = s.begin(false);
    let l = tx.get_or_create_token(TokenKind::Label, "U").unwrap();
    let k = tx.get_or_create_token(TokenKind::PropertyKey, "id").unwrap();
    drop(tx);
    let mut tx = s.begin(false);
    for i in 0..2000i64 {
        let v = if i % 2 == 0 { Value::Int(i) } else { Value::String(Arc::from(format!("{i}"))) };
        tx.create_node(&[l], vec![(k, v)]).unwrap();
    }
    tx.commit().unwrap();
    s.compact().unwrap();
    let core = s.core_for_test();
    core.set_index_budget(8 << 10, None);
    let stats = {
        crate::mvcc::CHECK_HASH_MASK.store(0x3, Ordering::Relaxed);
        let r = core.check_rule_sorted(l, &[k], IndexKind::Uniqueness, "u");
        crate::mvcc::CHECK_HASH_MASK.store(u32::MAX, Ordering::Relaxed);
        r.unwrap()
    };
    assert!(stats.runs > 10, "{stats:?}");
    assert!(s.create_unique_constraint(l, k, Some("u")).unwrap());
    let mut tx = s.begin(false);
    let e = match tx.create_node(&[l], vec![(k, Value::Int(1998))]) {
        Err(e) => e,
        Ok(_) => tx.commit().unwrap_err(),
    };
    assert_eq!(e.status, Status::ConstraintValidationFailed, "{e:?}");
    let tx = s.begin(true);
    assert_eq!(tx.index_seek(l, k, &Value::Int(1998)).unwrap(), vec![NodeId(1998)]);
    assert_eq!(tx.index_seek(l, k, &Value::Float(1998.0)).unwrap(), vec![NodeId(1998)]);
    assert_eq!(tx.index_seek(l, k, &Value::String(Arc::from("1999"))).unwrap(), vec![NodeId(1999)]);
    assert!(tx.index_seek(l, k, &Value::String(Arc::from("1998"))).unwrap().is_empty());
}

/// Duplicates far apart (different runs), one of them only in the delta: the constraint
/// fails with Neo4j's message naming the first duplicate in id order.
#[test]
fn unique_violation_across_runs() {
    let s = Store::in_memory();
    let tx = s.begin(false);
    let l = tx.get_or_create_token(TokenKind::Label, "U").unwrap();
    let k = tx.get_or_create_token(TokenKind::PropertyKey, "id").unwrap();
    drop(tx);
    let mut tx = s.begin(false);
    for i in 0..3000i64 {
        // Nodes 100 and 2900 share a key (so do, later in id order, 2950 and 2990).
        let v = match i {
            2900 => 100,
            2990 => 2950,
            _ => i,
        };
        tx.create_node(&[l], vec![(k, Value::Int(v))]).unwrap();
    }
    tx.commit().unwrap();
    s.compact().unwrap();
    s.core_for_test().set_index_budget(8 << 10, None);
    let e = s.create_unique_constraint(l, k, Some("u")).unwrap_err();
    assert_eq!(e.status, Status::ConstraintCreationFailed);
    assert_eq!(
        e.message,
        "Unable to create Constraint( name='u', type='UNIQUENESS', schema=(:U {id}) ): Both \
         Node(100) and Node(2900) have the label `U` and property `id` = 100"
    );
    assert!(s.indexes().is_empty(), "a failed constraint leaves nothing behind");
    // Fix the base duplicates in the delta; a delta row duplicates a base row instead.
    let mut tx = s.begin(false);
    tx.set_node_property(NodeId(2900), k, Value::Int(-1)).unwrap();
    tx.set_node_property(NodeId(2990), k, Value::Int(-2)).unwrap();
    tx.set_node_property(NodeId(500), k, Value::Float(7.0)).unwrap();
    tx.commit().unwrap();
    let e = s.create_unique_constraint(l, k, Some("u")).unwrap_err();
    assert!(
        e.message
            .ends_with("Both Node(7) and Node(500) have the label `U` and property `id` = 7.0"),
        "{}",
        e.message
    );
    let mut tx = s.begin(false);
    tx.set_node_property(NodeId(500), k, Value::Int(500)).unwrap();
    tx.commit().unwrap();
    assert!(s.create_unique_constraint(l, k, Some("u")).unwrap());
}

/// The sort never holds more than its run buffer (or the merge windows of the same size).
#[test]
fn sort_stays_within_its_share() {
    for (run_bytes, n) in [(4096usize, 100_000u64), (1 << 16, 100_000), (1 << 20, 1000)] {
        let budget = SortBudget { run_bytes, dir: None };
        let mut s = HashSorter::new(n, &budget);
        let mut r = Rng(5);
        for id in 0..n {
            s.push(r.next() as u32, id).unwrap();
        }
        let mut prev = (0u32, 0u64);
        let mut count = 0;
        let stats = s
            .finish(&mut |h, id| {
                assert!((h, id) >= prev, "out of order");
                prev = (h, id);
                count += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(count, n);
        assert!(stats.peak_bytes <= run_bytes as u64, "{stats:?} over {run_bytes}");
        if (run_bytes as u64) < n * 8 {
            assert!(stats.runs >= n * 8 / run_bytes as u64, "{stats:?}");
        }
    }
}

/// A file-backed store: the part is built at creation over the checkpointed base (the log
/// records the rule), the store closes and reopens, and the index answers as a scan does and
/// still enforces uniqueness.
#[test]
fn parts_survive_a_restart_through_the_log_and_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = || crate::StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        ..crate::StoreConfig::default()
    };
    let (l, k);
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let tx = s.begin(false);
        l = tx.get_or_create_token(TokenKind::Label, "U").unwrap();
        k = tx.get_or_create_token(TokenKind::PropertyKey, "id").unwrap();
        drop(tx);
        let mut tx = s.begin(false);
        for i in 0..2000i64 {
            tx.create_node(&[l], vec![(k, Value::Int(i))]).unwrap();
        }
        tx.commit().unwrap();
        s.checkpoint().unwrap();
        let core = s.core_for_test();
        core.set_index_budget(8 << 10, None);
        let built = core.parts_built();
        assert!(s.create_unique_constraint(l, k, Some("u")).unwrap());
        assert_eq!(core.parts_built(), built + 1);
        assert!(core.schema().read().parts.contains_key(&(l, vec![k])));
        s.close().unwrap();
    }
    let s = Store::open(dir.path(), cfg()).unwrap();
    // (A rule replayed from the log would fill in the background: wait for it either way.)
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let tx = s.begin(true);
    for v in [0i64, 1, 777, 1999, 2000, -5] {
        let got = tx.index_seek(l, k, &Value::Int(v)).expect("indexed");
        assert_eq!(got, scan(&s, l, k, &Value::Int(v), 2005), "{v}");
    }
    drop(tx);
    let mut tx = s.begin(false);
    let e = match tx.create_node(&[l], vec![(k, Value::Int(5))]) {
        Err(e) => e,
        Ok(_) => tx.commit().unwrap_err(),
    };
    assert_eq!(e.status, Status::ConstraintValidationFailed);
}

/// A crash (simulated file system, power loss) after the constraint's log record: the
/// reopened store replays it, and the index answers as a scan does and enforces uniqueness.
#[test]
fn parts_survive_a_crash_through_the_log() {
    let fs = crate::simfs::SimFs::new(11);
    let cfg = crate::StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        ..crate::StoreConfig::default()
    };
    let open = || {
        Store::open_with_vfs(std::path::Path::new("/db"), cfg.clone(), Arc::new(fs.clone()))
            .unwrap()
    };
    let s = open();
    let tx = s.begin(false);
    let l = tx.get_or_create_token(TokenKind::Label, "U").unwrap();
    let k = tx.get_or_create_token(TokenKind::PropertyKey, "id").unwrap();
    drop(tx);
    let mut tx = s.begin(false);
    for i in 0..2000i64 {
        tx.create_node(&[l], vec![(k, Value::Int(i % 1500))]).unwrap();
    }
    tx.commit().unwrap();
    s.checkpoint().unwrap();
    // The scratch file goes to the real temporary directory (the store's is simulated).
    s.core_for_test().set_index_budget(8 << 10, None);
    assert!(s.create_rule(IndexKind::Range, l, &[k], Some("ix")).unwrap());
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    assert!(s.core_for_test().schema().read().parts.contains_key(&(l, vec![k])));
    s.crash_for_test();
    drop(s);
    fs.restart();
    let s = open();
    // Replayed rules fill in the background after the open (durability/populate_replayed.rs).
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    for v in [0i64, 1, 499, 500, 1499, 1500] {
        let got = s.begin(true).index_seek(l, k, &Value::Int(v)).expect("indexed");
        assert_eq!(got, scan(&s, l, k, &Value::Int(v), 2005), "{v}");
        assert_eq!(
            got.len(),
            if v < 500 {
                2
            } else if v < 1500 {
                1
            } else {
                0
            },
            "{v}"
        );
    }
}
