//! Seeded durability fault tests over the simulated file system (`simfs.rs`).
//!
//! Each case runs a random workload (creates, updates and deletes of nodes and relationships
//! with properties from several concurrent writers, index creation and removal, explicit and
//! background checkpoints by WAL size and time, small WAL segments so they rotate) against a
//! store on a [`SimFs`], with one fault armed at a random operation: a crash (with a random
//! prefix of the unsynced writes surviving and the last one torn), a failing file or directory
//! fsync, `ENOSPC` after a partial write, or a failing rename. Every commit's outcome is
//! recorded. Some cases then close cleanly instead of crashing, some restart only the process
//! first (recovery on the page cache's content, new commits, then the power loss), and some
//! get a second fault during recovery. Then the machine restarts on the surviving durable
//! state and the test asserts:
//!
//! * the store opens (read-only first, which must not change a byte; then writable);
//! * per writer (each owns its entities, so writers never conflict), the recovered state
//!   equals the reference model after some prefix of that writer's transactions that
//!   contains every acknowledged one (in `Async` mode: any prefix, since acknowledged commits
//!   may be lost there, but never a partial transaction); after a process restart with new
//!   acknowledged commits, exactly the state that restart recovered;
//! * after a failed log write or fsync, commits and schema changes are refused;
//! * [`crate::Store::check`] finds no problem;
//! * new writes are accepted and survive a further crash.
//!
//! `cargo test -p arbor-storage` runs 1000 cases (a few seconds); `ARBOR_FAULT_CASES=n` runs
//! more (`ARBOR_FAULT_BASE` picks the first seed), `ARBOR_FAULT_SEED=<seed>` replays one (a
//! failure prints its seed, the faults injected and the files). Writer threads make the
//! interleaving, and so the exact operation a fault strikes, vary between runs of one seed;
//! `ARBOR_FAULT_THREADS=1` makes a replay close to deterministic. At the end the test prints
//! what the cases exercised (`--nocapture`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::simfs::{FaultKind, Rng, SimFs};
use crate::{Durability, NodeId, RelId, Store, StoreConfig, TokenKind, Value};

const LABELS: u32 = 3;
/// Property keys: 0 = the owning writer (never changes), 1..KEYS = data.
const KEYS: u32 = 4;
const OWNER: u32 = 0;

#[derive(Clone, Debug, PartialEq, Eq)]
enum V {
    Int(i64),
    Str(String),
}

impl V {
    fn value(&self) -> Value {
        match self {
            V::Int(i) => Value::Int(*i),
            V::Str(s) => Value::str(s),
        }
    }
    fn from_value(v: &Value) -> V {
        match v {
            Value::Int(i) => V::Int(*i),
            Value::String(s) => V::Str(s.to_string()),
            other => V::Str(format!("unexpected value {other:?}")),
        }
    }
}

type Props = BTreeMap<u32, V>;

/// The reference model of what one writer owns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Graph {
    nodes: BTreeMap<u64, (BTreeSet<u32>, Props)>,
    rels: BTreeMap<u64, (u64, u64, u32, Props)>,
    /// Index names (only writer 0 changes the schema).
    indexes: BTreeSet<String>,
}

/// One writer's transactions: `states[i]` is its state after its first `i` transactions;
/// the first `acked` were acknowledged, a further one may have failed.
#[derive(Debug)]
struct History {
    states: Vec<Graph>,
    acked: usize,
    error: Option<String>,
}

fn setup_tokens(store: &Store) {
    for l in 0..LABELS {
        assert_eq!(store.get_or_create_token(TokenKind::Label, &format!("L{l}")).unwrap(), l);
    }
    for k in 0..KEYS {
        assert_eq!(store.get_or_create_token(TokenKind::PropertyKey, &format!("k{k}")).unwrap(), k);
    }
    for t in 0..2 {
        assert_eq!(store.get_or_create_token(TokenKind::RelType, &format!("T{t}")).unwrap(), t);
    }
}

fn pick<T: Copy>(rng: &mut Rng, items: impl Iterator<Item = T>) -> Option<T> {
    let v: Vec<T> = items.collect();
    if v.is_empty() {
        None
    } else {
        Some(v[rng.below(v.len() as u64) as usize])
    }
}

fn random_value(rng: &mut Rng) -> V {
    if rng.one_in(3) {
        let n = rng.below(300) as usize;
        V::Str((0..n).map(|i| char::from(b'a' + ((i as u64 + rng.below(3)) % 26) as u8)).collect())
    } else {
        V::Int(rng.below(1000) as i64 - 500)
    }
}

/// Runs `txs` random transactions for writer `owner`, starting from `cur`. Stops at the first
/// failed commit (after a fault the store refuses writes, or the process is dead).
fn writer(store: &Store, owner: u32, seed: u64, txs: usize, cur: Graph) -> History {
    let mut rng = Rng::new(seed);
    let mut h = History { states: vec![cur.clone()], acked: 0, error: None };
    let mut cur = cur;
    for _ in 0..txs {
        let mut next = cur.clone();
        let res = if owner == 0 && rng.one_in(6) {
            let (l, k) = (rng.below(u64::from(LABELS)) as u32, 1 + rng.below(2) as u32);
            let name = format!("i_{l}_{k}");
            let r = if next.indexes.remove(&name) {
                store.drop_index(&name)
            } else {
                next.indexes.insert(name.clone());
                store.create_index(l, k, Some(&name))
            };
            match r {
                Ok(changed) => {
                    assert!(changed, "schema change of {name} did nothing");
                    Ok(())
                }
                Err(e) => Err(e),
            }
        } else {
            let mut tx = store.begin(false);
            for _ in 0..1 + rng.below(5) {
                random_op(&mut rng, &mut tx, &mut next, owner);
            }
            tx.commit().map(|_| ())
        };
        h.states.push(next.clone());
        match res {
            Ok(()) => {
                h.acked += 1;
                cur = next;
            }
            Err(e) => {
                h.error = Some(e.to_string());
                break;
            }
        }
        if rng.one_in(12) {
            // Explicit checkpoints; they may fail under a fault without failing the store.
            let _ = store.checkpoint();
        }
    }
    h
}

fn random_op(rng: &mut Rng, tx: &mut crate::Transaction, g: &mut Graph, owner: u32) {
    match rng.below(8) {
        0 | 1 => {
            let labels: BTreeSet<u32> = (0..LABELS).filter(|_| rng.one_in(2)).collect();
            let mut props = Props::new();
            props.insert(OWNER, V::Int(i64::from(owner)));
            for k in 1..KEYS {
                if rng.one_in(2) {
                    props.insert(k, random_value(rng));
                }
            }
            let ls: Vec<u32> = labels.iter().copied().collect();
            let id =
                tx.create_node(&ls, props.iter().map(|(k, v)| (*k, v.value())).collect()).unwrap();
            g.nodes.insert(id.0, (labels, props));
        }
        2 => {
            let Some(n) = pick(rng, g.nodes.keys().copied()) else { return };
            let k = 1 + rng.below(u64::from(KEYS) - 1) as u32;
            let props = &mut g.nodes.get_mut(&n).unwrap().1;
            if rng.one_in(3) {
                tx.set_node_property(NodeId(n), k, Value::Null).unwrap();
                props.remove(&k);
            } else {
                let v = random_value(rng);
                tx.set_node_property(NodeId(n), k, v.value()).unwrap();
                props.insert(k, v);
            }
        }
        3 => {
            let Some(n) = pick(rng, g.nodes.keys().copied()) else { return };
            let l = rng.below(u64::from(LABELS)) as u32;
            let labels = &mut g.nodes.get_mut(&n).unwrap().0;
            if labels.remove(&l) {
                assert!(tx.remove_label(NodeId(n), l).unwrap());
            } else {
                labels.insert(l);
                assert!(tx.add_label(NodeId(n), l).unwrap());
            }
        }
        4 => {
            let lonely = g
                .nodes
                .keys()
                .copied()
                .filter(|n| !g.rels.values().any(|r| r.0 == *n || r.1 == *n));
            let Some(n) = pick(rng, lonely) else { return };
            tx.delete_node(NodeId(n)).unwrap();
            g.nodes.remove(&n);
        }
        5 | 6 => {
            let a = pick(rng, g.nodes.keys().copied());
            let b = pick(rng, g.nodes.keys().copied());
            let (Some(a), Some(b)) = (a, b) else { return };
            let ty = rng.below(2) as u32;
            let mut props = Props::new();
            if rng.one_in(2) {
                props.insert(1, random_value(rng));
            }
            let id = tx
                .create_rel(
                    NodeId(a),
                    NodeId(b),
                    ty,
                    props.iter().map(|(k, v)| (*k, v.value())).collect(),
                )
                .unwrap();
            g.rels.insert(id.0, (a, b, ty, props));
        }
        _ => {
            let Some(r) = pick(rng, g.rels.keys().copied()) else { return };
            if rng.one_in(2) {
                tx.delete_rel(RelId(r)).unwrap();
                g.rels.remove(&r);
            } else {
                let v = random_value(rng);
                tx.set_rel_property(RelId(r), 2, v.value()).unwrap();
                g.rels.get_mut(&r).unwrap().3.insert(2, v);
            }
        }
    }
}

/// Everything in the store, split by owner; index names go to writer 0.
fn extract(store: &Store) -> BTreeMap<u32, Graph> {
    let tx = store.begin(true);
    let mut out: BTreeMap<u32, Graph> = BTreeMap::new();
    let mut owner_of = BTreeMap::new();
    let mut cur = NodeId(0);
    while let Some(n) = tx.next_node(None, cur) {
        cur = NodeId(n.0 + 1);
        let props: Props =
            tx.node_properties(n).iter().map(|(k, v)| (*k, V::from_value(v))).collect();
        let owner = match props.get(&OWNER) {
            Some(V::Int(o)) => *o as u32,
            other => panic!("node {} has no owner property: {other:?}", n.0),
        };
        owner_of.insert(n.0, owner);
        let labels = tx.node_labels(n).into_iter().collect();
        out.entry(owner).or_default().nodes.insert(n.0, (labels, props));
    }
    let mut cur = RelId(0);
    while let Some(r) = tx.next_rel(&[], cur) {
        cur = RelId(r.0 + 1);
        let (a, b, ty) = tx.rel_info(r).expect("a scanned relationship exists");
        let owner = *owner_of.get(&a.0).expect("relationship from a scanned node");
        let props = tx.rel_properties(r).iter().map(|(k, v)| (*k, V::from_value(v))).collect();
        out.entry(owner).or_default().rels.insert(r.0, (a.0, b.0, ty, props));
    }
    // The probe of `commits_again` is no writer's.
    for i in store.indexes().into_iter().filter(|i| i.name != "probe") {
        out.entry(0).or_default().indexes.insert(i.name);
    }
    out
}

struct Case {
    seed: u64,
    threads: u32,
    config: StoreConfig,
    fault: FaultKind,
    skip: u64,
    close: bool,
    process_restart: bool,
    /// A fault during the first recovery (which is then abandoned, and the machine restarts).
    recovery_fault: Option<(FaultKind, u64)>,
}

impl Case {
    fn new(seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let threads = match std::env::var("ARBOR_FAULT_THREADS") {
            Ok(t) => t.parse().unwrap_or(1),
            Err(_) => 1 + rng.below(3) as u32,
        };
        let config = StoreConfig {
            durability: match rng.below(12) {
                0 | 1 => Durability::Async,
                2 => Durability::Off,
                _ => Durability::Sync,
            },
            checkpoint_interval: if rng.one_in(4) {
                Duration::from_millis(5)
            } else {
                Duration::from_secs(3600)
            },
            checkpoint_wal_bytes: [2_000, 20_000, u64::MAX][rng.below(3) as usize],
            wal_segment_bytes: [400, 4_000, 1 << 20][rng.below(3) as usize],
            memory_limit: Some(1 << 20),
            // Half the cases promote the base at every open (not drawn: the seeds keep their
            // other choices).
            promote_at_open: seed.is_multiple_of(2),
        };
        let (fault, skip) = match rng.below(9) {
            0..=2 => (FaultKind::Crash, rng.below(150)),
            3 => (FaultKind::SyncFail, rng.below(40)),
            4 => (FaultKind::DirSyncFail, rng.below(8)),
            5 | 6 => (FaultKind::NoSpace, rng.below(60)),
            7 => (FaultKind::OtherFail, rng.below(10)),
            _ => (FaultKind::RenameFail, rng.below(4)),
        };
        let close = rng.one_in(4);
        let process_restart = rng.one_in(3);
        let recovery_fault = rng.one_in(4).then(|| {
            let kind = match rng.below(8) {
                0..=1 => FaultKind::Crash,
                2 => FaultKind::SyncFail,
                3 => FaultKind::DirSyncFail,
                4 => FaultKind::NoSpace,
                5 => FaultKind::OtherFail,
                6 => FaultKind::ReadFail,
                _ => FaultKind::RenameFail,
            };
            // Recovery reads only a handful of files (manifest, checkpoint, segments).
            let skip = if kind == FaultKind::ReadFail { rng.below(4) } else { rng.below(12) };
            (kind, skip)
        });
        Case { seed, threads, config, fault, skip, close, process_restart, recovery_fault }
    }
}

/// Opens read-only, checks that nothing changes, and returns what it recovered.
fn open_read_only(fs: &SimFs, dir: &Path) -> BTreeMap<u32, Graph> {
    let before = fs.snapshot();
    let ro = Store::open_read_only_with_vfs(dir, Arc::new(fs.for_process()))
        .unwrap_or_else(|e| panic!("read-only recovery failed: {e}\n{}", dump(fs)));
    let got = extract(&ro);
    let report = ro.check().unwrap();
    assert!(report.is_ok(), "read-only check: {:?}\n{}", report.problems, dump(fs));
    let mut tx = ro.begin(false);
    tx.create_node(&[], vec![]).unwrap();
    assert!(tx.commit().is_err(), "a read-only store accepted a commit");
    ro.close().unwrap();
    drop(ro);
    assert!(fs.snapshot() == before, "the read-only open changed files");
    got
}

/// The files and decoded WAL records, for diagnosing a failing seed.
fn dump(fs: &SimFs) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for op in fs.trace() {
        let _ = writeln!(out, "op {op}");
    }
    for (path, data) in fs.snapshot() {
        let _ = writeln!(out, "{} ({} bytes)", path.display(), data.len());
        if !path.to_string_lossy().contains("wal-") {
            continue;
        }
        let mut pos = 0;
        while let Some(rec) = crate::durability::wal::parse_record(&data, pos) {
            let (ts, next) = (rec.ts, rec.next);
            let mut d = crate::codec::Dec::new(rec.ops);
            let mut ops = Vec::new();
            while !d.is_empty() {
                match d.op() {
                    Ok(crate::codec::Op::Token { .. }) => ops.push("token".to_string()),
                    Ok(op) => ops.push(format!("{op:?}").chars().take(60).collect()),
                    Err(e) => {
                        ops.push(format!("bad: {e}"));
                        break;
                    }
                }
            }
            let _ = writeln!(out, "  @{pos} ts {ts} (durable {}): {}", rec.durable, ops.join("; "));
            pos = next;
        }
        if pos < data.len() {
            let _ = writeln!(out, "  @{pos}: {} bytes of torn tail", data.len() - pos);
            for p in pos + 1..data.len() {
                if let Some(r) = crate::durability::wal::parse_record(&data, p) {
                    let _ = writeln!(
                        out,
                        "    intact after it @{p}: ts {} durable {}",
                        r.ts, r.durable
                    );
                }
            }
        }
    }
    out
}

/// One writer's history and whether its acknowledged commits must all be durable.
struct Writer {
    owner: u32,
    h: History,
    durable_acks: bool,
}

/// Checks the recovered state against every writer's history (see the module doc).
fn verify(writers: &[Writer], got: &BTreeMap<u32, Graph>) {
    let empty = Graph::default();
    for owner in got.keys() {
        assert!(
            writers.iter().any(|w| w.owner == *owner) || *owner == 0,
            "entities of unknown owner {owner}"
        );
    }
    for w in writers {
        let (t, h) = (w.owner, &w.h);
        let g = got.get(&t).unwrap_or(&empty);
        let min = if w.durable_acks { h.acked } else { 0 };
        let found = (min..h.states.len()).find(|&k| h.states[k] == *g);
        assert!(
            found.is_some(),
            "writer {t}: the recovered state is not the state after any of its transactions \
             {min}..={} ({} acknowledged, error {:?}).\nrecovered: {g:?}\nafter the acknowledged \
             ones: {:?}",
            h.states.len() - 1,
            h.acked,
            h.error,
            h.states[h.acked],
        );
    }
}

/// Opens the store after a restart (read-only first), verifies it and returns it.
fn reopen(case: &Case, fs: &SimFs, writers: &[Writer]) -> (Store, BTreeMap<u32, Graph>) {
    let dir = Path::new(DIR);
    let ro = open_read_only(fs, dir);
    let store = Store::open_with_vfs(dir, case.config.clone(), Arc::new(fs.for_process()))
        .unwrap_or_else(|e| panic!("recovery failed: {e}\n{}", dump(fs)));
    let got = extract(&store);
    assert!(ro == got, "read-only and writable recovery differ");
    verify(writers, &got);
    let report = store.check().unwrap();
    assert!(report.is_ok(), "check after recovery: {:?}\n{}", report.problems, dump(fs));
    (store, got)
}

/// Runs a few transactions as a new writer on a recovered store; all must succeed.
fn more_writes(case: &Case, store: &Store, writers: &[Writer]) -> Writer {
    setup_tokens(store);
    let owner = writers.iter().map(|w| w.owner).max().unwrap_or(0) + 1;
    let h = writer(store, owner, case.seed ^ (0xABCD + u64::from(owner)), 8, Graph::default());
    assert!(h.error.is_none(), "a write after recovery failed: {:?}", h.error);
    // `Async` and `Off` acknowledge before any fsync; a clean close makes everything durable.
    if case.config.durability != Durability::Sync {
        store.close().unwrap();
    }
    Writer { owner, h, durable_acks: true }
}

const DIR: &str = "/data";

/// Whether commits succeed again within a few seconds (after a full disk the log writer
/// retries in the background, refusing commits meanwhile): an index is created and dropped
/// again, two logged commits that leave the graph alone (even if only the first survives a
/// crash, as without fsyncs).
fn commits_again(store: &Store) -> bool {
    let start = std::time::Instant::now();
    let mut created = false;
    // A label and a key no writer uses.
    let label = store.get_or_create_token(TokenKind::Label, "Probe").unwrap();
    let key = store.get_or_create_token(TokenKind::PropertyKey, "probe").unwrap();
    while start.elapsed() < Duration::from_secs(10) {
        let res = if created {
            store.drop_index("probe")
        } else {
            store.create_index(label, key, Some("probe"))
        };
        match res {
            Ok(_) if created => return true,
            Ok(_) => created = true,
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    false
}

/// What the cases exercised (printed at the end, to see that faults actually strike).
#[derive(Debug, Default)]
struct Stats {
    cases: u64,
    struck: BTreeMap<String, u64>,
    acked: u64,
    failed_commits: u64,
    /// Recoveries that kept a transaction whose commit had failed or was never acknowledged.
    kept_unacked: u64,
    checkpoints_loaded: u64,
    /// Cases that reopened on the page cache's content before the power loss.
    process_restarts: u64,
    /// Cases with a fault during a recovery.
    recovery_faults: u64,
}

fn run_case(case: &Case, fs: &SimFs, stats: &mut Stats) {
    let dir = Path::new(DIR);
    let store = Store::open_with_vfs(dir, case.config.clone(), Arc::new(fs.for_process())).unwrap();
    setup_tokens(&store);
    fs.arm(case.fault, case.skip);
    let histories: Vec<History> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..case.threads)
            .map(|t| {
                let store = store.clone();
                let seed = case.seed.wrapping_mul(31).wrapping_add(u64::from(t));
                s.spawn(move || writer(&store, t, seed, 25, Graph::default()))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let durable_acks = case.config.durability == Durability::Sync;
    let mut writers: Vec<Writer> = histories
        .into_iter()
        .enumerate()
        .map(|(t, h)| Writer { owner: t as u32, h, durable_acks })
        .collect();
    // After a failed fsync of the log the store must refuse commits until it is reopened:
    // retrying the fsync could "succeed" with the data already dropped. A write that found the
    // disk full synced nothing: it is retried, and commits go on.
    let wal_fault =
        |kind: &str| fs.log().iter().any(|e| e.starts_with(kind) && e.contains("/wal-"));
    if wal_fault("SyncFail") {
        let mut tx = store.begin(false);
        tx.create_node(&[], vec![(OWNER, Value::Int(0))]).unwrap();
        assert!(tx.commit().is_err(), "a commit succeeded after the log failed");
        assert!(store.create_index(0, 3, None).is_err(), "a schema change after the log failed");
    } else if wal_fault("NoSpace") {
        assert!(commits_again(&store), "commits stay refused after a full disk's write");
    }
    if case.close {
        // A clean close checkpoints; under a fault it may fail, which must not lose anything.
        let _ = store.close();
    } else {
        store.crash_for_test();
    }
    drop(store);

    if case.process_restart && !fs.crashed() {
        // Only the process restarts, the machine stays up: recovery reads what the page cache
        // holds, which after a failed fsync includes data that will never reach the disk.
        fs.disarm();
        let store = Store::open_with_vfs(dir, case.config.clone(), Arc::new(fs.for_process()))
            .unwrap_or_else(|e| panic!("recovery without power loss failed: {e}"));
        let seen = extract(&store);
        verify(&writers, &seen);
        let w = more_writes(case, &store, &writers);
        if w.h.states.last() != w.h.states.first() {
            // The new commits come after everything this process recovered in the commit
            // order; as they are acknowledged, all of that must survive the power loss too,
            // even the transactions whose commits had failed.
            for old in &mut writers {
                let g = seen.get(&old.owner).cloned().unwrap_or_default();
                old.h = History { states: vec![g], acked: 0, error: None };
                old.durable_acks = true;
            }
        }
        writers.push(w);
        store.crash_for_test();
        stats.process_restarts += 1;
    }
    fs.restart();
    if std::env::var_os("ARBOR_SIMFS_TRACE").is_some() {
        eprintln!("---- after the restart\n{}", dump(fs));
    }
    if let Some((kind, skip)) = case.recovery_fault {
        // Recovery itself is interrupted (it truncates a torn tail, checkpoints, creates a
        // segment): the next one must still find everything.
        fs.arm(kind, skip);
        if let Ok(store) =
            Store::open_with_vfs(dir, case.config.clone(), Arc::new(fs.for_process()))
        {
            // A recovery that hit a fault either fails or opens everything: never a store
            // with part of the acknowledged data (say, a checkpoint or a log segment it could
            // not read taken for missing).
            verify(&writers, &extract(&store));
            store.crash_for_test();
        }
        fs.restart();
        stats.recovery_faults += 1;
    }

    let (store, got) = reopen(case, fs, &writers);
    stats.cases += 1;
    for w in &writers {
        let h = &w.h;
        stats.acked += h.acked as u64;
        stats.failed_commits += u64::from(h.error.is_some());
        if h.states.len() > h.acked + 1 && got.get(&w.owner) == Some(&h.states[h.acked + 1]) {
            stats.kept_unacked += 1;
        }
    }
    for entry in fs.log() {
        let kind = entry.split(" at ").next().unwrap_or_default().to_string();
        *stats.struck.entry(kind).or_default() += 1;
    }
    stats.checkpoints_loaded += u64::from(store.memory_stats().base_ts > 0);

    // The recovered store takes new writes, and they survive another crash; nothing else
    // changes.
    let w = more_writes(case, &store, &writers);
    store.crash_for_test();
    drop(store);
    fs.restart();
    let mut before = got;
    before.insert(w.owner, w.h.states[w.h.acked].clone());
    writers.push(w);
    let (store, again) = reopen(case, fs, &writers);
    let nonempty = |m: &BTreeMap<u32, Graph>| -> BTreeMap<u32, Graph> {
        m.iter().filter(|(_, g)| **g != Graph::default()).map(|(k, g)| (*k, g.clone())).collect()
    };
    assert!(nonempty(&again) == nonempty(&before), "the second recovery changed data");
    store.crash_for_test();
}

fn run(seed: u64, stats: &mut Stats) {
    let case = Case::new(seed);
    let fs = SimFs::new(seed);
    let res =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_case(&case, &fs, stats)));
    if let Err(e) = res {
        if std::env::var_os("ARBOR_SIMFS_TRACE").is_some() {
            eprintln!("{}", dump(&fs));
        }
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!(
            "fault case failed; replay with ARBOR_FAULT_SEED={seed} \
             (fault {:?} after {} matching ops, {} writers, {:?}, close {}, process restart {}, \
             recovery fault {:?}; injected: {:?}): {msg}",
            case.fault,
            case.skip,
            case.threads,
            case.config,
            case.close,
            case.process_restart,
            case.recovery_fault,
            fs.log()
        );
    }
}

#[test]
fn acknowledged_commits_survive_faults() {
    if let Ok(seed) = std::env::var("ARBOR_FAULT_SEED") {
        let seed = seed.parse().expect("ARBOR_FAULT_SEED must be a number");
        return run(seed, &mut Stats::default());
    }
    let cases: u64 =
        std::env::var("ARBOR_FAULT_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1000);
    let base: u64 =
        std::env::var("ARBOR_FAULT_BASE").ok().and_then(|c| c.parse().ok()).unwrap_or(0);
    let mut stats = Stats::default();
    for seed in base..base + cases {
        run(seed, &mut stats);
    }
    eprintln!("{stats:#?}");
}

// ------------------------------------------------------------------------------------------
// Deterministic regressions for what the seeded cases found.

fn quiet_config(durability: Durability, wal_segment_bytes: u64) -> StoreConfig {
    StoreConfig {
        durability,
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        wal_segment_bytes,
        memory_limit: Some(1 << 20),
        promote_at_open: false,
    }
}

fn open_sim(fs: &SimFs, config: &StoreConfig) -> Store {
    Store::open_with_vfs(Path::new(DIR), config.clone(), Arc::new(fs.for_process())).unwrap()
}

/// Commits one node with property `k1 = v`; returns its id, or the commit error.
fn commit_node(store: &Store, v: i64) -> crate::Result<NodeId> {
    let mut tx = store.begin(false);
    let id = tx.create_node(&[0], vec![(OWNER, Value::Int(0)), (1, Value::Int(v))])?;
    tx.commit().map(|_| id)
}

/// A failed log fsync, then only the process restarts: recovery replays commits the page cache
/// still shows but the disk lost. New commits build on them, so after a power loss they must
/// all be there, not just the new ones (the store checkpoints what it replayed).
#[test]
fn replayed_page_cache_state_survives_the_power_loss_after_an_fsync_failure() {
    let config = quiet_config(Durability::Sync, 1 << 20);
    for seed in 0..32 {
        let fs = SimFs::new(seed);
        let s = open_sim(&fs, &config);
        setup_tokens(&s);
        let a = commit_node(&s, 1).unwrap();
        fs.arm(FaultKind::SyncFail, 0);
        assert!(commit_node(&s, 2).is_err());
        assert!(commit_node(&s, 3).is_err(), "a commit after a failed fsync");
        s.crash_for_test();
        drop(s);
        // The process restarts; the machine stays up.
        let s = open_sim(&fs, &config);
        let seen: Vec<u64> = extract(&s).remove(&0).unwrap_or_default().nodes.into_keys().collect();
        assert!(seen.contains(&a.0));
        let d = commit_node(&s, 4).unwrap();
        s.crash_for_test();
        drop(s);
        fs.restart();
        let s = open_sim(&fs, &config);
        let after: Vec<u64> =
            extract(&s).remove(&0).unwrap_or_default().nodes.into_keys().collect();
        let mut expect = seen.clone();
        expect.push(d.0);
        assert_eq!(after, expect, "seed {seed}: {:?}\n{}", fs.log(), dump(&fs));
        assert!(s.check().unwrap().is_ok());
        s.crash_for_test();
    }
}

/// A checkpoint's directory fsync failing (the one after its files' renames, or the one after
/// the manifest's): the new manifest may be visible and never durable. A restarted process
/// (the machine stays up) must not remove what the durable manifest names, so after a power
/// loss every acknowledged commit is there.
#[test]
fn a_manifest_visible_but_not_durable_keeps_what_the_durable_one_names() {
    let config = quiet_config(Durability::Sync, 1 << 20);
    let mut struck_manifest = false;
    for skip in 0..4 {
        for seed in 0..8 {
            let fs = SimFs::new(seed);
            let s = open_sim(&fs, &config);
            setup_tokens(&s);
            let mut acked: Vec<u64> = (0..4).map(|v| commit_node(&s, v).unwrap().0).collect();
            s.checkpoint().unwrap();
            acked.extend((4..8).map(|v| commit_node(&s, v).unwrap().0));
            let manifest = Path::new(DIR).join("MANIFEST");
            let before = crate::vfs::Vfs::read(&fs, &manifest).unwrap();
            fs.arm(FaultKind::DirSyncFail, skip);
            let res = s.checkpoint();
            fs.disarm();
            assert_eq!(res.is_err(), !fs.log().is_empty());
            // The case of the failure: the new manifest is visible, its checkpoint failed.
            struck_manifest |=
                res.is_err() && crate::vfs::Vfs::read(&fs, &manifest).unwrap() != before;
            s.crash_for_test();
            drop(s);
            // The process restarts; the machine stays up.
            let s = open_sim(&fs, &config);
            let seen: Vec<u64> =
                extract(&s).remove(&0).unwrap_or_default().nodes.into_keys().collect();
            assert_eq!(seen, acked);
            s.crash_for_test();
            drop(s);
            fs.restart();
            let s =
                Store::open_with_vfs(Path::new(DIR), config.clone(), Arc::new(fs.for_process()))
                    .unwrap_or_else(|e| panic!("skip {skip} seed {seed}: {e}\n{}", dump(&fs)));
            let after: Vec<u64> =
                extract(&s).remove(&0).unwrap_or_default().nodes.into_keys().collect();
            assert_eq!(after, acked, "skip {skip} seed {seed}: {:?}\n{}", fs.log(), dump(&fs));
            assert!(s.check().unwrap().is_ok());
            s.crash_for_test();
        }
    }
    assert!(struck_manifest, "no case failed the fsync after the manifest's rename");
}

/// A new log segment whose directory fsync failed: its name may never reach the disk. A
/// restarted process must not append acknowledged commits to it.
#[test]
fn commits_after_a_failed_segment_creation_survive() {
    let config = quiet_config(Durability::Sync, 200);
    for seed in 0..16 {
        let fs = SimFs::new(seed);
        let s = open_sim(&fs, &config);
        setup_tokens(&s);
        let mut acked = Vec::new();
        // The first commit (with the tokens) fills the first segment; the next rotates.
        acked.push(commit_node(&s, 0).unwrap().0);
        fs.arm(FaultKind::DirSyncFail, 0);
        let mut v = 1;
        while fs.log().is_empty() {
            if let Ok(id) = commit_node(&s, v) {
                acked.push(id.0);
            }
            v += 1;
            assert!(v < 100, "the log never rotated");
        }
        assert!(commit_node(&s, v).is_err(), "a commit after a failed directory fsync");
        s.crash_for_test();
        drop(s);
        let s = open_sim(&fs, &config);
        for i in 0..5 {
            acked.push(commit_node(&s, 1000 + i).unwrap().0);
        }
        s.crash_for_test();
        drop(s);
        fs.restart();
        let s = open_sim(&fs, &config);
        let got = extract(&s).remove(&0).unwrap_or_default();
        for id in &acked {
            assert!(got.nodes.contains_key(id), "seed {seed}: lost node {id}\n{}", dump(&fs));
        }
        assert!(s.check().unwrap().is_ok());
        s.crash_for_test();
    }
}

/// In `Async` mode the background fsync's failure used to be ignored (and the fsync retried
/// later, "successfully"): it must stop commits like any other log failure.
#[test]
fn async_background_fsync_failure_stops_commits() {
    let fs = SimFs::new(1);
    let s = open_sim(&fs, &quiet_config(Durability::Async, 1 << 20));
    setup_tokens(&s);
    fs.arm(FaultKind::SyncFail, 0);
    // Acknowledged after the write; the fsync normally follows from the writer's idle timer
    // (or, if the commit came 10 ms after the store opened, from the commit's own batch).
    let _ = commit_node(&s, 1);
    let start = std::time::Instant::now();
    while fs.log().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(20), "no background fsync happened");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(commit_node(&s, 3).is_err(), "a commit after a failed background fsync");
    s.crash_for_test();
}

/// An unreadable file during recovery (checkpoint, manifest or log segment): the open fails
/// with an error naming the file, changes nothing, and a later open finds everything.
#[test]
fn unreadable_files_fail_recovery_cleanly() {
    let config = quiet_config(Durability::Sync, 300);
    let fs = SimFs::new(7);
    let s = open_sim(&fs, &config);
    setup_tokens(&s);
    let mut acked: Vec<u64> = (0..5).map(|v| commit_node(&s, v).unwrap().0).collect();
    s.close().unwrap(); // a checkpoint and a manifest
    drop(s);
    let s = open_sim(&fs, &config);
    acked.extend((5..12).map(|v| commit_node(&s, v).unwrap().0)); // several log segments
    s.crash_for_test();
    drop(s);
    fs.restart();
    let mut failures = 0;
    for skip in 0.. {
        let before = fs.snapshot();
        fs.arm(FaultKind::ReadFail, skip);
        let res = Store::open_with_vfs(Path::new(DIR), config.clone(), Arc::new(fs.for_process()));
        let struck = fs.log().iter().filter(|l| l.starts_with("ReadFail")).count() > failures;
        fs.disarm();
        match res {
            Err(e) => {
                assert!(struck, "open failed without a fault: {e}");
                failures += 1;
                let msg = e.to_string();
                assert!(msg.contains(DIR), "the error names no file: {msg}");
                assert!(fs.snapshot() == before, "a failed recovery changed files: {msg}");
            }
            Ok(store) => {
                // One read may fail without failing the open: the segment the checkpoint
                // after recovery has just written, read back to attach the new base to it
                // (the checkpoint is durable; the base then stays in memory).
                let reattach = fs.log().last().is_some_and(|l| {
                    l.starts_with("ReadFail") && l.contains("segment-") && l.contains(".arbor")
                });
                assert!(!struck || reattach, "a read failed and the open still succeeded");
                assert!(!reattach || !store.core_for_test().base().is_paged());
                let got: Vec<u64> =
                    extract(&store).remove(&0).unwrap_or_default().nodes.into_keys().collect();
                assert_eq!(got, acked);
                store.crash_for_test();
                break;
            }
        }
    }
    assert!(failures >= 3, "expected the manifest, checkpoint and a segment to be read");
}

/// The disk fills up under a commit: that commit waits (its record is held, nothing of it was
/// synced), new commits are refused with an error saying why, and once space is freed the held
/// record is written and commits go on, without a restart; all of it survives a power loss.
#[test]
fn a_full_disk_pauses_commits_until_space_returns() {
    for (seed, durability) in [(1, Durability::Sync), (2, Durability::Async), (3, Durability::Sync)]
    {
        let fs = SimFs::new(seed);
        let s = open_sim(&fs, &quiet_config(durability, 300));
        setup_tokens(&s);
        let a = commit_node(&s, 1).unwrap();
        fs.set_full(true);
        let held = {
            let s = s.clone();
            std::thread::spawn(move || commit_node(&s, 2))
        };
        let start = std::time::Instant::now();
        while s.core_for_test().clock().check().is_ok() {
            assert!(start.elapsed() < Duration::from_secs(10), "the full disk went unnoticed");
            std::thread::sleep(Duration::from_millis(2));
        }
        let err = commit_node(&s, 3).unwrap_err();
        assert!(err.message.contains("disk is full"), "{}", err.message);
        assert!(!held.is_finished(), "the held commit was answered while the disk is full");
        fs.set_full(false);
        let b = held.join().unwrap().expect("the held commit failed after space returned");
        assert!(commits_again(&s));
        let d = commit_node(&s, 4).unwrap();
        s.close().unwrap();
        drop(s);
        fs.restart();
        let s = open_sim(&fs, &quiet_config(durability, 300));
        let got = extract(&s).remove(&0).unwrap_or_default();
        let ids: Vec<u64> = got.nodes.into_keys().collect();
        assert_eq!(ids, vec![a.0, b.0, d.0], "seed {seed}\n{}", dump(&fs));
        assert!(s.check().unwrap().is_ok());
        s.crash_for_test();
    }
}

/// A restart on a still-full disk: recovery opens without new space (the checkpoint of what it
/// replayed is deferred, the next log segment is created by the first write), reads work,
/// commits are refused until the checkpoint could be taken, then go on.
#[test]
fn recovery_opens_on_a_full_disk_and_checkpoints_later() {
    let config = quiet_config(Durability::Sync, 300);
    for seed in 0..4 {
        let fs = SimFs::new(seed);
        let s = open_sim(&fs, &config);
        setup_tokens(&s);
        let mut acked: Vec<u64> = (0..6).map(|v| commit_node(&s, v).unwrap().0).collect();
        s.crash_for_test();
        drop(s);
        fs.restart();
        fs.set_full(true);
        let before = fs.snapshot();
        let s = Store::open_with_vfs(Path::new(DIR), config.clone(), Arc::new(fs.for_process()))
            .unwrap_or_else(|e| panic!("seed {seed}: recovery on a full disk failed: {e}"));
        let got: Vec<u64> = extract(&s).remove(&0).unwrap_or_default().nodes.into_keys().collect();
        assert_eq!(got, acked);
        assert!(commit_node(&s, 10).is_err(), "a commit before the recovery checkpoint");
        assert!(fs.snapshot().len() <= before.len(), "recovery created files on a full disk");
        fs.set_full(false);
        assert!(commits_again(&s), "commits stay refused after space returned");
        acked.push(commit_node(&s, 11).unwrap().0);
        s.crash_for_test();
        drop(s);
        fs.restart();
        let s = open_sim(&fs, &config);
        let got = extract(&s).remove(&0).unwrap_or_default();
        for id in &acked {
            assert!(got.nodes.contains_key(id), "seed {seed}: lost node {id}\n{}", dump(&fs));
        }
        assert!(s.check().unwrap().is_ok());
        s.crash_for_test();
    }
}

/// Recovery makes the replayed log tail durable by rewriting it (`durability/resync.rs`) and
/// leaves the checkpoint of it to the maintenance thread: commits go on at once, and a crash at
/// any point of that background checkpoint loses neither the replayed commits nor the ones
/// acknowledged after the open.
#[test]
fn a_crash_during_the_background_checkpoint_after_recovery_loses_nothing() {
    use std::sync::atomic::Ordering;
    let config = quiet_config(Durability::Sync, 400);
    let mut struck = 0;
    for skip in 0..16 {
        let fs = SimFs::new(skip);
        let s = open_sim(&fs, &config);
        setup_tokens(&s);
        let mut acked: Vec<u64> = (0..6).map(|v| commit_node(&s, v).unwrap().0).collect();
        s.crash_for_test();
        drop(s);
        fs.restart();
        let s = open_sim(&fs, &config);
        let p = s.persist_for_test().clone().unwrap();
        assert!(p.recovery_checkpoint.load(Ordering::Acquire), "the checkpoint ran in the open");
        acked.push(commit_node(&s, 100).unwrap().0);
        fs.arm(FaultKind::Crash, skip);
        let start = std::time::Instant::now();
        while p.recovery_checkpoint.load(Ordering::Acquire) && !fs.crashed() {
            assert!(start.elapsed() < Duration::from_secs(20), "no checkpoint after recovery");
            std::thread::sleep(Duration::from_millis(5));
        }
        struck += u32::from(fs.crashed());
        fs.disarm();
        s.crash_for_test();
        drop(s);
        fs.restart();
        let s = open_sim(&fs, &config);
        let got = extract(&s).remove(&0).unwrap_or_default();
        for id in &acked {
            assert!(got.nodes.contains_key(id), "skip {skip}: lost node {id}\n{}", dump(&fs));
        }
        assert!(s.check().unwrap().is_ok());
        s.crash_for_test();
    }
    assert!(struck > 0, "no crash struck the background checkpoint");
}

/// A checkpoint whose segment write meets a full disk removes its half-written tmp file at once
/// (left behind, it would hold the space the log needs until the next restart), and the store
/// still commits and checkpoints once space returns.
#[test]
fn a_segment_write_failing_on_a_full_disk_leaves_no_tmp_file() {
    let config = quiet_config(Durability::Sync, 1 << 20);
    let mut struck_in_segment = 0;
    for skip in 0..12 {
        let fs = SimFs::new(skip);
        let s = open_sim(&fs, &config);
        setup_tokens(&s);
        for v in 0..200 {
            commit_node(&s, v).unwrap();
        }
        fs.arm(FaultKind::NoSpace, skip);
        let failed = s.checkpoint().is_err();
        fs.disarm();
        let tmps: Vec<String> = fs
            .snapshot()
            .keys()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        if failed && fs.log().iter().any(|l| l.contains("segment-")) {
            struck_in_segment += 1;
            assert!(
                !tmps.iter().any(|n| n.starts_with("segment-")),
                "skip {skip}: a failed segment write left {tmps:?}"
            );
        }
        commit_node(&s, 1_000).unwrap();
        s.checkpoint().unwrap();
        s.crash_for_test();
    }
    assert!(struck_in_segment > 0, "no fault struck the segment write");
}
