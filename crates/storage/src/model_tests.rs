//! Model-based property test: random interleavings of operations over a few concurrent
//! transactions, checked against a simple `BTreeMap` reference model of snapshot isolation with
//! first-committer-wins conflicts.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use proptest::prelude::*;

use super::*;

type Props = BTreeMap<u32, i64>;

#[derive(Clone, Default, Debug)]
struct Graph {
    nodes: BTreeMap<u64, (BTreeSet<u32>, Props)>,
    rels: BTreeMap<u64, (u64, u64, u32, Props)>,
}

struct MTx {
    tx: Transaction,
    start: u64,
    view: Graph,
    written_nodes: BTreeSet<u64>,
    written_rels: BTreeSet<u64>,
    created_nodes: BTreeSet<u64>,
    created_rels: BTreeSet<u64>,
    sp: Option<(Savepoint, Graph, [BTreeSet<u64>; 4])>,
}

impl MTx {
    fn sets(&self) -> [BTreeSet<u64>; 4] {
        [
            self.written_nodes.clone(),
            self.written_rels.clone(),
            self.created_nodes.clone(),
            self.created_rels.clone(),
        ]
    }
}

#[derive(Clone, Debug)]
enum Op {
    Begin(usize),
    CreateNode(usize, Vec<u32>, Option<i64>),
    SetProp(usize, usize, u32, Option<i64>),
    AddLabel(usize, usize, u32),
    RemoveLabel(usize, usize, u32),
    DeleteNode(usize, usize),
    CreateRel(usize, usize, usize, u32),
    DeleteRel(usize, usize),
    Savepoint(usize),
    RollbackTo(usize),
    Commit(usize),
    Rollback(usize),
    Check(usize),
    /// Rebuild the compact base (`true`: through a checkpoint, a no-op for in-memory stores)
    /// while the open transactions keep reading the old one.
    Compact(bool),
    Gc,
}

const SLOTS: usize = 3;
const LABELS: u32 = 3;
const KEYS: u32 = 2;

fn op() -> impl Strategy<Value = Op> {
    let s = 0..SLOTS;
    prop_oneof![
        3 => s.clone().prop_map(Op::Begin),
        4 => (s.clone(), proptest::collection::vec(0..LABELS, 0..3), proptest::option::of(0i64..3))
            .prop_map(|(s, l, v)| Op::CreateNode(s, l, v)),
        4 => (s.clone(), any::<usize>(), 0..KEYS, proptest::option::of(0i64..3))
            .prop_map(|(s, n, k, v)| Op::SetProp(s, n, k, v)),
        2 => (s.clone(), any::<usize>(), 0..LABELS).prop_map(|(s, n, l)| Op::AddLabel(s, n, l)),
        2 => (s.clone(), any::<usize>(), 0..LABELS).prop_map(|(s, n, l)| Op::RemoveLabel(s, n, l)),
        2 => (s.clone(), any::<usize>()).prop_map(|(s, n)| Op::DeleteNode(s, n)),
        3 => (s.clone(), any::<usize>(), any::<usize>(), 0u32..2)
            .prop_map(|(s, a, b, t)| Op::CreateRel(s, a, b, t)),
        2 => (s.clone(), any::<usize>()).prop_map(|(s, r)| Op::DeleteRel(s, r)),
        1 => s.clone().prop_map(Op::Savepoint),
        1 => s.clone().prop_map(Op::RollbackTo),
        3 => s.clone().prop_map(Op::Commit),
        1 => s.clone().prop_map(Op::Rollback),
        2 => s.prop_map(Op::Check),
        2 => any::<bool>().prop_map(Op::Compact),
        1 => Just(Op::Gc),
    ]
}

struct Harness {
    store: Store,
    committed: Graph,
    seq: u64,
    last_write_node: HashMap<u64, u64>,
    last_write_rel: HashMap<u64, u64>,
    node_ids: Vec<u64>,
    rel_ids: Vec<u64>,
    txs: Vec<Option<MTx>>,
}

fn pick(ids: &[u64], i: usize) -> Option<u64> {
    if ids.is_empty() {
        None
    } else {
        Some(ids[i % ids.len()])
    }
}

fn st(r: &Result<impl Sized>) -> Option<Status> {
    r.as_ref().err().map(|e| e.status)
}

impl Harness {
    fn new() -> Harness {
        Harness::with_store(Store::in_memory())
    }

    fn with_store(store: Store) -> Harness {
        for i in 0..LABELS {
            store.get_or_create_token(TokenKind::Label, &format!("L{i}")).unwrap();
        }
        for i in 0..KEYS {
            store.get_or_create_token(TokenKind::PropertyKey, &format!("k{i}")).unwrap();
        }
        store.get_or_create_token(TokenKind::RelType, "T0").unwrap();
        store.get_or_create_token(TokenKind::RelType, "T1").unwrap();
        store.create_index(0, 0, None).unwrap();
        Harness {
            store,
            committed: Graph::default(),
            seq: 0,
            last_write_node: HashMap::new(),
            last_write_rel: HashMap::new(),
            node_ids: Vec::new(),
            rel_ids: Vec::new(),
            txs: (0..SLOTS).map(|_| None).collect(),
        }
    }

    /// Write-time conflict for an entity this transaction has not written yet.
    fn node_conflict(&self, m: &MTx, n: u64) -> bool {
        !m.written_nodes.contains(&n)
            && !m.created_nodes.contains(&n)
            && self.last_write_node.get(&n).is_some_and(|s| *s > m.start)
    }

    fn rel_conflict(&self, m: &MTx, r: u64) -> bool {
        !m.written_rels.contains(&r)
            && !m.created_rels.contains(&r)
            && self.last_write_rel.get(&r).is_some_and(|s| *s > m.start)
    }

    fn run(&mut self, op: Op) {
        match op {
            Op::Begin(s) => {
                if self.txs[s].is_none() {
                    self.txs[s] = Some(MTx {
                        tx: self.store.begin(false),
                        start: self.seq,
                        view: self.committed.clone(),
                        written_nodes: BTreeSet::new(),
                        written_rels: BTreeSet::new(),
                        created_nodes: BTreeSet::new(),
                        created_rels: BTreeSet::new(),
                        sp: None,
                    });
                }
            }
            Op::Commit(s) => self.commit(s),
            Op::Compact(true) => self.store.checkpoint().unwrap(),
            Op::Compact(false) => {
                self.store.compact().unwrap();
            }
            Op::Gc => self.store.gc(),
            Op::Rollback(s) => {
                self.txs[s] = None;
            }
            Op::Check(s) => {
                if let Some(m) = &self.txs[s] {
                    check_view(&m.tx, &m.view);
                } else {
                    let tx = self.store.begin(true);
                    check_view(&tx, &self.committed);
                }
            }
            op => self.write(op),
        }
    }

    fn write(&mut self, op: Op) {
        let slot = match &op {
            Op::CreateNode(s, ..)
            | Op::SetProp(s, ..)
            | Op::AddLabel(s, ..)
            | Op::RemoveLabel(s, ..)
            | Op::DeleteNode(s, ..)
            | Op::CreateRel(s, ..)
            | Op::DeleteRel(s, ..)
            | Op::Savepoint(s)
            | Op::RollbackTo(s) => *s,
            _ => return,
        };
        let Some(mut m) = self.txs[slot].take() else { return };
        match op {
            Op::Savepoint(_) => {
                m.sp = Some((m.tx.savepoint(), m.view.clone(), m.sets()));
            }
            Op::RollbackTo(_) => {
                if let Some((sp, view, sets)) = m.sp.clone() {
                    m.tx.rollback_to(&sp);
                    m.view = view;
                    let [a, b, c, d] = sets;
                    m.written_nodes = a;
                    m.written_rels = b;
                    m.created_nodes = c;
                    m.created_rels = d;
                }
            }
            Op::CreateNode(_, labels, v) => {
                let props: Vec<(u32, Value)> = v.map(|v| (0, Value::Int(v))).into_iter().collect();
                let id = m.tx.create_node(&labels, props).unwrap().0;
                assert!(!self.node_ids.contains(&id), "node id reused");
                self.node_ids.push(id);
                m.created_nodes.insert(id);
                let props: Props = v.map(|v| (0, v)).into_iter().collect();
                m.view.nodes.insert(id, (labels.into_iter().collect(), props));
            }
            Op::SetProp(_, n, k, v) => {
                let Some(n) = pick(&self.node_ids, n) else { return self.put(slot, m) };
                let r = m.tx.set_node_property(NodeId(n), k, v.map_or(Value::Null, Value::Int));
                let expect = match m.view.nodes.get(&n) {
                    None => Some(Status::EntityNotFound),
                    Some((_, p)) if v.is_none() && !p.contains_key(&k) => None,
                    Some(_) if self.node_conflict(&m, n) => Some(Status::TransactionOutdated),
                    Some(_) => {
                        let p = &mut m.view.nodes.get_mut(&n).unwrap().1;
                        match v {
                            Some(v) => p.insert(k, v),
                            None => p.remove(&k),
                        };
                        m.written_nodes.insert(n);
                        None
                    }
                };
                assert_eq!(st(&r), expect, "set_node_property");
            }
            Op::AddLabel(_, n, l) | Op::RemoveLabel(_, n, l) => {
                let add = matches!(op, Op::AddLabel(..));
                let Some(n) = pick(&self.node_ids, n) else { return self.put(slot, m) };
                let r = if add {
                    m.tx.add_label(NodeId(n), l)
                } else {
                    m.tx.remove_label(NodeId(n), l)
                };
                let expect = match m.view.nodes.get(&n) {
                    None => Err(Status::EntityNotFound),
                    Some((ls, _)) if ls.contains(&l) == add => Ok(false),
                    Some(_) if self.node_conflict(&m, n) => Err(Status::TransactionOutdated),
                    Some(_) => {
                        let ls = &mut m.view.nodes.get_mut(&n).unwrap().0;
                        if add {
                            ls.insert(l);
                        } else {
                            ls.remove(&l);
                        }
                        m.written_nodes.insert(n);
                        Ok(true)
                    }
                };
                assert_eq!(r.map_err(|e| e.status), expect, "label change");
            }
            Op::DeleteNode(_, n) => {
                let Some(n) = pick(&self.node_ids, n) else { return self.put(slot, m) };
                let r = m.tx.delete_node(NodeId(n));
                let deleted_here = (m.written_nodes.contains(&n) || m.created_nodes.contains(&n))
                    && !m.view.nodes.contains_key(&n);
                let expect = if deleted_here {
                    None
                } else if !m.view.nodes.contains_key(&n) {
                    Some(Status::EntityNotFound)
                } else if self.node_conflict(&m, n) {
                    Some(Status::TransactionOutdated)
                } else if m.view.rels.values().any(|r| r.0 == n || r.1 == n) {
                    Some(Status::DeleteNodeWithRelationships)
                } else {
                    m.view.nodes.remove(&n);
                    m.written_nodes.insert(n);
                    None
                };
                assert_eq!(st(&r), expect, "delete_node");
            }
            Op::CreateRel(_, a, b, t) => {
                let (Some(a), Some(b)) = (pick(&self.node_ids, a), pick(&self.node_ids, b)) else {
                    return self.put(slot, m);
                };
                let r = m.tx.create_rel(NodeId(a), NodeId(b), t, vec![(1, Value::Int(7))]);
                if m.view.nodes.contains_key(&a) && m.view.nodes.contains_key(&b) {
                    let id = r.unwrap().0;
                    assert!(!self.rel_ids.contains(&id), "rel id reused");
                    self.rel_ids.push(id);
                    m.created_rels.insert(id);
                    m.view.rels.insert(id, (a, b, t, [(1, 7)].into_iter().collect()));
                } else {
                    assert_eq!(st(&r), Some(Status::EntityNotFound));
                }
            }
            Op::DeleteRel(_, r) => {
                let Some(r) = pick(&self.rel_ids, r) else { return self.put(slot, m) };
                let res = m.tx.delete_rel(RelId(r));
                let deleted_here = (m.written_rels.contains(&r) || m.created_rels.contains(&r))
                    && !m.view.rels.contains_key(&r);
                let expect = if deleted_here {
                    None
                } else if !m.view.rels.contains_key(&r) {
                    Some(Status::EntityNotFound)
                } else if self.rel_conflict(&m, r) {
                    Some(Status::TransactionOutdated)
                } else {
                    m.view.rels.remove(&r);
                    m.written_rels.insert(r);
                    None
                };
                assert_eq!(st(&res), expect, "delete_rel");
            }
            _ => {}
        }
        self.put(slot, m);
    }

    fn put(&mut self, slot: usize, m: MTx) {
        self.txs[slot] = Some(m);
    }

    fn commit(&mut self, s: usize) {
        let Some(m) = self.txs[s].take() else { return };
        let c = &self.committed;
        let mut conflict = false;
        for n in &m.written_nodes {
            if self.last_write_node.get(n).is_some_and(|x| *x > m.start) {
                conflict = true;
            }
            if !m.view.nodes.contains_key(n)
                && c.rels.iter().any(|(id, r)| {
                    (r.0 == *n || r.1 == *n)
                        && (m.view.rels.contains_key(id) || !m.written_rels.contains(id))
                })
            {
                conflict = true;
            }
        }
        for r in &m.written_rels {
            if self.last_write_rel.get(r).is_some_and(|x| *x > m.start) {
                conflict = true;
            }
        }
        for r in &m.created_rels {
            if let Some((a, b, _, _)) = m.view.rels.get(r) {
                for n in [a, b] {
                    if !m.created_nodes.contains(n) && !c.nodes.contains_key(n) {
                        conflict = true;
                    }
                }
            }
        }
        let res = m.tx.commit();
        if conflict {
            assert_eq!(st(&res), Some(Status::TransactionOutdated), "commit should conflict");
            return;
        }
        res.unwrap();
        self.seq += 1;
        for n in m.written_nodes.iter().chain(m.created_nodes.iter()) {
            match m.view.nodes.get(n) {
                Some(d) => self.committed.nodes.insert(*n, d.clone()),
                None => self.committed.nodes.remove(n),
            };
            self.last_write_node.insert(*n, self.seq);
        }
        for r in m.written_rels.iter().chain(m.created_rels.iter()) {
            match m.view.rels.get(r) {
                Some(d) => self.committed.rels.insert(*r, d.clone()),
                None => self.committed.rels.remove(r),
            };
            self.last_write_rel.insert(*r, self.seq);
        }
    }
}

fn check_view(tx: &Transaction, g: &Graph) {
    let mut ids = Vec::new();
    let mut cur = NodeId(0);
    while let Some(n) = tx.next_node(None, cur) {
        ids.push(n.0);
        cur = NodeId(n.0 + 1);
    }
    assert_eq!(ids, g.nodes.keys().copied().collect::<Vec<_>>(), "all nodes");
    assert_eq!(tx.count_nodes(None), g.nodes.len() as u64);
    for l in 0..LABELS {
        let mut ids = Vec::new();
        let mut cur = NodeId(0);
        while let Some(n) = tx.next_node(Some(l), cur) {
            ids.push(n.0);
            cur = NodeId(n.0 + 1);
        }
        let expect: Vec<u64> =
            g.nodes.iter().filter(|(_, (ls, _))| ls.contains(&l)).map(|(id, _)| *id).collect();
        assert_eq!(ids, expect, "label scan {l}");
        assert_eq!(tx.count_nodes(Some(l)), expect.len() as u64, "count {l}");
    }
    // Batched scans (small batches, so batch boundaries fall everywhere) give the same ids.
    for label in std::iter::once(None).chain((0..LABELS).map(Some)) {
        let expect: Vec<u64> = g
            .nodes
            .iter()
            .filter(|(_, (ls, _))| label.is_none_or(|l| ls.contains(&l)))
            .map(|(id, _)| *id)
            .collect();
        for max in [1, 2, 3, 7] {
            let mut ids = Vec::new();
            let mut batch = Vec::new();
            let mut cur = NodeId(0);
            loop {
                batch.clear();
                tx.next_nodes(label, cur, max, &mut batch);
                assert!(batch.len() <= max);
                ids.extend(batch.iter().map(|n| n.0));
                match batch.last() {
                    Some(last) if batch.len() == max => cur = NodeId(last.0 + 1),
                    _ => break,
                }
            }
            assert_eq!(ids, expect, "batched scan {label:?} by {max}");
        }
    }
    for (id, (ls, props)) in &g.nodes {
        let n = NodeId(*id);
        assert_eq!(tx.node_labels(n), ls.iter().copied().collect::<Vec<_>>());
        let got: Vec<(u32, i64)> = tx
            .node_properties(n)
            .into_iter()
            .map(|(k, v)| (k, if let Value::Int(i) = v { i } else { -1 }))
            .collect();
        assert_eq!(got, props.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>());
        let mut edges = Vec::new();
        tx.node_edges(n, Direction::Both, &[], &mut edges);
        let mut got: Vec<(u64, u64, bool)> =
            edges.iter().map(|e| (e.rel.0, e.other.0, e.dir == Direction::Outgoing)).collect();
        got.sort_unstable();
        let mut expect: Vec<(u64, u64, bool)> = Vec::new();
        for (rid, (a, b, _, _)) in &g.rels {
            if a == id {
                expect.push((*rid, *b, true));
            } else if b == id {
                expect.push((*rid, *a, false));
            }
        }
        expect.sort_unstable();
        assert_eq!(got, expect, "edges of {id}");
    }
    let mut rels = Vec::new();
    let mut cur = RelId(0);
    while let Some(r) = tx.next_rel(&[], cur) {
        rels.push(r.0);
        cur = RelId(r.0 + 1);
    }
    assert_eq!(rels, g.rels.keys().copied().collect::<Vec<_>>(), "all rels");
    for (rid, (a, b, t, _)) in &g.rels {
        assert_eq!(tx.rel_info(RelId(*rid)), Some((NodeId(*a), NodeId(*b), *t)));
        assert!(tx.next_rel(&[*t], RelId(*rid)) == Some(RelId(*rid)));
    }
    // The index on (L0, k0) agrees with a scan.
    for v in 0..3 {
        let expect: Vec<NodeId> = g
            .nodes
            .iter()
            .filter(|(_, (ls, p))| ls.contains(&0) && p.get(&0) == Some(&v))
            .map(|(id, _)| NodeId(*id))
            .collect();
        assert_eq!(tx.index_seek(0, 0, &Value::Float(v as f64)), Some(expect), "index {v}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_reference_model(ops in proptest::collection::vec(op(), 1..80)) {
        let mut h = Harness::new();
        for (i, op) in ops.into_iter().enumerate() {
            h.run(op);
            if i % 16 == 15 {
                h.store.gc();
            }
        }
        for s in 0..SLOTS {
            h.run(Op::Check(s));
            h.run(Op::Commit(s));
        }
        h.store.gc();
        h.run(Op::Check(0));
        let report = h.store.check().unwrap();
        prop_assert!(report.is_ok(), "{:?}", report.problems);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The same random workload on a file-backed store, with a checkpoint somewhere in the
    /// middle and a crash at the end: recovery must restore exactly the committed state.
    #[test]
    fn recovery_matches_reference_model(
        ops in proptest::collection::vec(op(), 1..60),
        checkpoint_at in 0usize..60,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig {
            durability: Durability::Off,
            checkpoint_interval: std::time::Duration::from_secs(3600),
            checkpoint_wal_bytes: u64::MAX,
            wal_segment_bytes: 256,
            memory_limit: Some(1 << 20),
            promote_at_open: false,
        };
        let mut h = Harness::with_store(Store::open(dir.path(), config.clone()).unwrap());
        for (i, op) in ops.into_iter().enumerate() {
            h.run(op);
            if i == checkpoint_at {
                h.store.checkpoint().unwrap();
            }
        }
        h.txs.iter_mut().for_each(|t| *t = None);
        h.store.crash_for_test();
        let store = Store::open(dir.path(), config).unwrap();
        // A replayed index rule fills in the background (`populate_replayed.rs`); the view's
        // index check seeks it once online.
        store.await_indexes(None, std::time::Duration::from_secs(60)).unwrap();
        check_view(&store.begin(true), &h.committed);
        // The lazily opened base, with the replayed log on top, promoted: the same view (the
        // dirty bits of the replayed entities carried over).
        let before = store.begin(true);
        store.warm_base().unwrap();
        check_view(&store.begin(true), &h.committed);
        check_view(&before, &h.committed);
        prop_assert_eq!(store.indexes().len(), 1);
        let report = store.check().unwrap();
        prop_assert!(report.is_ok(), "{:?}", report.problems);
    }
}

/// Builds a small store with a checkpoint and a WAL tail; returns its files.
fn sample_store_files() -> Vec<(String, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig { durability: Durability::Off, ..StoreConfig::default() };
    let s = Store::open(dir.path(), config).unwrap();
    let l = s.get_or_create_token(TokenKind::Label, "L").unwrap();
    let k = s.get_or_create_token(TokenKind::PropertyKey, "k").unwrap();
    let t = s.get_or_create_token(TokenKind::RelType, "T").unwrap();
    s.create_index(l, k, None).unwrap();
    for round in 0..2 {
        let mut w = s.begin(false);
        let a = w.create_node(&[l], vec![(k, Value::str("text"))]).unwrap();
        let b = w.create_node(&[], vec![(k, Value::List(vec![Value::Float(1.5)]))]).unwrap();
        w.create_rel(a, b, t, vec![(k, Value::Int(round))]).unwrap();
        w.commit().unwrap();
        if round == 0 {
            s.checkpoint().unwrap();
        }
    }
    s.crash_for_test();
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name != "LOCK" {
            files.push((name, std::fs::read(e.path()).unwrap()));
        }
    }
    files.sort();
    files
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Damaged files (a flipped byte, a truncation, or garbage) make `open` fail cleanly or
    /// succeed; they never panic.
    #[test]
    fn damaged_files_never_panic(
        file in any::<usize>(),
        pos in any::<usize>(),
        flip in 1u8..=255,
        truncate in any::<bool>(),
        garbage in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let files = sample_store_files();
        let dir = tempfile::tempdir().unwrap();
        let victim = file % files.len();
        for (i, (name, data)) in files.iter().enumerate() {
            let mut data = data.clone();
            if i == victim {
                if data.is_empty() {
                    data = garbage.clone();
                } else if truncate {
                    data.truncate(pos % data.len());
                } else {
                    let p = pos % data.len();
                    data[p] ^= flip;
                }
            }
            std::fs::write(dir.path().join(name), data).unwrap();
        }
        if let Ok(s) = Store::open(dir.path(), StoreConfig::default()) {
            let r = s.begin(true);
            let mut cur = NodeId(0);
            while let Some(n) = r.next_node(None, cur) {
                let _ = r.node_properties(n);
                cur = NodeId(n.0 + 1);
            }
        }
    }
}
