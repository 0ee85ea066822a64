//! Scenario tests of the store: visibility, conflicts, deletes, constraints, durability,
//! checkpoints, recovery from torn and corrupt logs, and group commit.

use std::fs;
use std::path::Path;
use std::time::Duration;

use super::*;
use crate::durability::wal;

fn cfg() -> StoreConfig {
    // No background checkpoints unless a test asks for them.
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        ..StoreConfig::default()
    }
}

fn label(s: &Store, n: &str) -> TokenId {
    s.get_or_create_token(TokenKind::Label, n).unwrap()
}

fn key(s: &Store, n: &str) -> TokenId {
    s.get_or_create_token(TokenKind::PropertyKey, n).unwrap()
}

fn rtype(s: &Store, n: &str) -> TokenId {
    s.get_or_create_token(TokenKind::RelType, n).unwrap()
}

fn int(v: &Option<Value>) -> Option<i64> {
    match v {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

fn all_nodes(tx: &Transaction, l: Option<TokenId>) -> Vec<u64> {
    let mut out = Vec::new();
    let mut cur = NodeId(0);
    while let Some(n) = tx.next_node(l, cur) {
        out.push(n.0);
        cur = NodeId(n.0 + 1);
    }
    out
}

#[test]
fn snapshot_does_not_see_later_commits() {
    let s = Store::in_memory();
    let k = key(&s, "k");
    let mut w = s.begin(false);
    let n = w.create_node(&[], vec![(k, Value::Int(1))]).unwrap();
    w.commit().unwrap();

    let old = s.begin(true);
    let mut w = s.begin(false);
    w.set_node_property(n, k, Value::Int(2)).unwrap();
    let n2 = w.create_node(&[], vec![]).unwrap();
    // Own writes are visible, others' uncommitted ones are not.
    assert_eq!(int(&w.node_property(n, k)), Some(2));
    assert_eq!(int(&old.node_property(n, k)), Some(1));
    w.commit().unwrap();
    assert_eq!(int(&old.node_property(n, k)), Some(1));
    assert!(!old.node_exists(n2));
    assert_eq!(old.count_nodes(None), 1);
    let new = s.begin(true);
    assert_eq!(int(&new.node_property(n, k)), Some(2));
    assert!(new.node_exists(n2));
    assert_eq!(new.count_nodes(None), 2);
}

#[test]
fn rollback_discards_and_savepoints_undo_partially() {
    let s = Store::in_memory();
    let l = label(&s, "L");
    let k = key(&s, "k");
    let t = rtype(&s, "T");
    let mut w = s.begin(false);
    let a = w.create_node(&[l], vec![(k, Value::Int(1))]).unwrap();
    w.rollback();
    assert!(!s.begin(true).node_exists(a));

    let mut w = s.begin(false);
    let a = w.create_node(&[l], vec![(k, Value::Int(1))]).unwrap();
    let sp = w.savepoint();
    let b = w.create_node(&[l], vec![]).unwrap();
    w.create_rel(a, b, t, vec![]).unwrap();
    w.set_node_property(a, k, Value::Int(9)).unwrap();
    w.remove_label(a, l).unwrap();
    assert_eq!(w.count_nodes(Some(l)), 1);
    w.rollback_to(&sp);
    assert!(!w.node_exists(b));
    assert_eq!(int(&w.node_property(a, k)), Some(1));
    assert!(w.node_has_label(a, l));
    assert_eq!(w.degree(a, Direction::Both, &[]), 0);
    assert_eq!(w.count_nodes(Some(l)), 1);
    assert_eq!(all_nodes(&w, Some(l)), vec![a.0]);
    w.commit().unwrap();
    let r = s.begin(true);
    assert_eq!(all_nodes(&r, None), vec![a.0]);
    assert_eq!(int(&r.node_property(a, k)), Some(1));
    assert_eq!(r.next_rel(&[], RelId(0)), None);
}

#[test]
fn read_only_and_type_errors() {
    let s = Store::in_memory();
    let k = key(&s, "k");
    let mut r = s.begin(true);
    assert_eq!(r.create_node(&[], vec![]).unwrap_err().status, Status::ForbiddenOnReadOnly);
    let mut w = s.begin(false);
    let e = w.create_node(&[], vec![(k, Value::Map(Default::default()))]).unwrap_err();
    assert_eq!(e.status, Status::TypeError);
    assert!(e.message.contains("Property values can only be of primitive types"));
    let n = w.create_node(&[], vec![(k, Value::Null)]).unwrap();
    assert!(w.node_properties(n).is_empty());
    let e = w.set_node_property(n, k, Value::Node(n)).unwrap_err();
    assert_eq!(e.status, Status::TypeError);
    // Null removes.
    w.set_node_property(n, k, Value::Int(3)).unwrap();
    w.set_node_property(n, k, Value::Null).unwrap();
    assert_eq!(w.node_property(n, k).map(|v| v.type_name()), None);
}

#[test]
fn write_conflicts_first_committer_wins() {
    let s = Store::in_memory();
    let k = key(&s, "k");
    let l = label(&s, "L");
    let mut w = s.begin(false);
    let n = w.create_node(&[], vec![]).unwrap();
    let m = w.create_node(&[], vec![]).unwrap();
    w.commit().unwrap();

    // Detected at commit: both wrote before either committed.
    let mut a = s.begin(false);
    let mut b = s.begin(false);
    a.set_node_property(n, k, Value::Int(1)).unwrap();
    b.set_node_property(n, k, Value::Int(2)).unwrap();
    a.commit().unwrap();
    let e = b.commit().unwrap_err();
    assert_eq!(e.status, Status::TransactionOutdated);
    assert!(e.message.contains(&format!("Node({})", n.0)), "{}", e.message);

    // Detected at write time: the other transaction committed first.
    let mut a = s.begin(false);
    let mut b = s.begin(false);
    a.add_label(m, l).unwrap();
    a.commit().unwrap();
    assert_eq!(b.add_label(m, l).unwrap_err().status, Status::TransactionOutdated);
    assert_eq!(b.delete_node(m).unwrap_err().status, Status::TransactionOutdated);

    // Relationships: delete vs property update.
    let t = rtype(&s, "T");
    let mut w = s.begin(false);
    let r = w.create_rel(n, m, t, vec![]).unwrap();
    w.commit().unwrap();
    let mut a = s.begin(false);
    let mut b = s.begin(false);
    a.delete_rel(r).unwrap();
    b.set_rel_property(r, k, Value::Int(1)).unwrap();
    a.commit().unwrap();
    let e = b.commit().unwrap_err();
    assert_eq!(e.status, Status::TransactionOutdated);
    assert!(e.message.contains("Relationship"));
}

#[test]
fn concurrent_relationship_creation_on_one_node_does_not_conflict() {
    let s = Store::in_memory();
    let t = rtype(&s, "T");
    let mut w = s.begin(false);
    let hub = w.create_node(&[], vec![]).unwrap();
    w.commit().unwrap();
    let mut txs: Vec<Transaction> = (0..4).map(|_| s.begin(false)).collect();
    for tx in &mut txs {
        let other = tx.create_node(&[], vec![]).unwrap();
        tx.create_rel(hub, other, t, vec![]).unwrap();
        tx.create_rel(other, hub, t, vec![]).unwrap();
    }
    for tx in txs {
        tx.commit().unwrap();
    }
    let r = s.begin(true);
    assert_eq!(r.degree(hub, Direction::Outgoing, &[]), 4);
    assert_eq!(r.degree(hub, Direction::Incoming, &[t]), 4);
    assert_eq!(r.degree(hub, Direction::Both, &[t + 1]), 0);
}

#[test]
fn delete_node_with_relationships_fails() {
    let s = Store::in_memory();
    let t = rtype(&s, "T");
    let mut w = s.begin(false);
    let a = w.create_node(&[], vec![]).unwrap();
    let b = w.create_node(&[], vec![]).unwrap();
    // Own, uncommitted relationship counts.
    let r = w.create_rel(a, b, t, vec![]).unwrap();
    let e = w.delete_node(a).unwrap_err();
    assert_eq!(e.status, Status::DeleteNodeWithRelationships);
    assert_eq!(
        e.message,
        format!(
            "Cannot delete node<{}>, because it still has relationships. To delete this node, \
             you must first delete its relationships.",
            a.0
        )
    );
    w.commit().unwrap();
    let mut w = s.begin(false);
    assert_eq!(w.delete_node(b).unwrap_err().status, Status::DeleteNodeWithRelationships);
    w.delete_rel(r).unwrap();
    assert!(w.rel_deleted_in_tx(r));
    w.delete_node(b).unwrap();
    assert!(w.node_deleted_in_tx(b));
    assert!(!w.node_exists(b));
    w.commit().unwrap();
    assert!(!s.begin(true).node_exists(b));

    // A relationship created concurrently with a delete: the later commit loses.
    let mut w = s.begin(false);
    let c = w.create_node(&[], vec![]).unwrap();
    w.commit().unwrap();
    let mut del = s.begin(false);
    let mut add = s.begin(false);
    del.delete_node(c).unwrap();
    add.create_rel(a, c, t, vec![]).unwrap();
    add.commit().unwrap();
    assert_eq!(del.commit().unwrap_err().status, Status::TransactionOutdated);
}

#[test]
fn edges_self_loops_and_type_filters() {
    let s = Store::in_memory();
    let t = rtype(&s, "T");
    let u = rtype(&s, "U");
    let mut w = s.begin(false);
    let a = w.create_node(&[], vec![]).unwrap();
    let b = w.create_node(&[], vec![]).unwrap();
    let r1 = w.create_rel(a, a, t, vec![]).unwrap();
    let r2 = w.create_rel(a, b, u, vec![]).unwrap();
    let check = |tx: &Transaction| {
        let mut out = Vec::new();
        tx.node_edges(a, Direction::Both, &[], &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0], Edge { rel: r1, other: a, dir: Direction::Outgoing });
        assert_eq!(out[1], Edge { rel: r2, other: b, dir: Direction::Outgoing });
        assert_eq!(tx.degree(a, Direction::Incoming, &[]), 1);
        assert_eq!(tx.degree(b, Direction::Incoming, &[u]), 1);
        assert_eq!(tx.degree(b, Direction::Incoming, &[t]), 0);
        assert_eq!(tx.rel_info(r2), Some((a, b, u)));
        assert_eq!(tx.next_rel(&[u], RelId(0)), Some(r2));
        assert_eq!(tx.next_rel(&[], RelId(r1.0 + 1)), Some(r2));
        assert_eq!(tx.next_rel(&[t], RelId(r1.0 + 1)), None);
    };
    check(&w);
    w.commit().unwrap();
    check(&s.begin(true));
}

#[test]
fn label_scans_and_counts() {
    let s = Store::in_memory();
    let a = label(&s, "A");
    let b = label(&s, "B");
    let mut w = s.begin(false);
    let ids: Vec<NodeId> = (0..10)
        .map(|i| w.create_node(&[if i % 2 == 0 { a } else { b }], vec![]).unwrap())
        .collect();
    w.commit().unwrap();
    let mut w = s.begin(false);
    w.remove_label(ids[0], a).unwrap();
    w.add_label(ids[1], a).unwrap();
    assert!(!w.add_label(ids[1], a).unwrap());
    w.delete_node(ids[2]).unwrap();
    let extra = w.create_node(&[a], vec![]).unwrap();
    let expect = vec![ids[1].0, ids[4].0, ids[6].0, ids[8].0, extra.0];
    assert_eq!(all_nodes(&w, Some(a)), expect);
    assert_eq!(w.count_nodes(Some(a)), 5);
    assert_eq!(w.count_nodes(None), 10);
    let before = s.begin(true);
    w.commit().unwrap();
    assert_eq!(before.count_nodes(Some(a)), 5);
    assert_eq!(all_nodes(&before, Some(a)), vec![0, 2, 4, 6, 8]);
    let r = s.begin(true);
    assert_eq!(all_nodes(&r, Some(a)), expect);
    assert_eq!(r.count_nodes(Some(a)), 5);
    assert_eq!(r.count_nodes(Some(b)), 5);
    drop(before);
    drop(r);
    s.gc();
    let r = s.begin(true);
    assert_eq!(all_nodes(&r, Some(a)), expect);
    assert_eq!(r.count_nodes(None), 10);
    // GC dropped the stale label-set entries.
    let stale = s.h_core_label_set(a);
    assert_eq!(stale, expect);
}

impl Store {
    /// Test helper: the committed label set (a superset until GC).
    fn h_core_label_set(&self, l: TokenId) -> Vec<u64> {
        self.core_for_test()
            .label_sets_for_test()
            .read()
            .get(&l)
            .map(|s| s.iter().collect())
            .unwrap_or_default()
    }
}

/// A seek into a caller's buffer (the per-row seek of a relationship load) clears and reuses
/// it: the answer is exactly the visible matches from the base (after a fold), the delta index
/// and this transaction's own writes, in id order without duplicates; without an index it is
/// `false` and empty. Each user seek counts one read on the index; the uniqueness check of a
/// write (an internal seek) counts none.
#[test]
fn index_seek_into_reuses_the_buffer_sees_every_layer_and_counts_reads() {
    let s = Store::in_memory();
    let u = label(&s, "User");
    let id = key(&s, "id");
    let mut out = vec![NodeId(999), NodeId(1000)];
    assert!(!s.begin(true).index_seek_into(u, id, &Value::Int(5), &mut out));
    assert!(out.is_empty());
    let mut w = s.begin(false);
    let a = w.create_node(&[u], vec![(id, Value::Int(5))]).unwrap();
    w.commit().unwrap();
    assert!(s.create_index(u, id, Some("ix")).unwrap());
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    assert!(s.compact().unwrap(), "the fold puts `a` in the base and its index");
    let mut w = s.begin(false);
    let b = w.create_node(&[u], vec![(id, Value::Float(5.0))]).unwrap();
    w.commit().unwrap();
    let mut w = s.begin(false);
    let c = w.create_node(&[u], vec![(id, Value::Int(5))]).unwrap();
    w.set_node_property(a, id, Value::Int(6)).unwrap();
    out = vec![NodeId(999); 3];
    assert!(w.index_seek_into(u, id, &Value::Int(5), &mut out));
    assert_eq!(out, vec![b, c], "delta + own write; the base row changed in this tx");
    assert!(w.index_seek_into(u, id, &Value::Float(6.0), &mut out));
    assert_eq!(out, vec![a]);
    assert!(w.index_seek_into(u, id, &Value::Null, &mut out));
    assert!(out.is_empty());
    let r = s.begin(true);
    assert_eq!(r.index_seek(u, id, &Value::Int(5)), Some(vec![a, b]), "the snapshot before");
    w.commit().unwrap();
    let r = s.begin(true);
    assert_eq!(r.index_seek(u, id, &Value::Int(5)), Some(vec![b, c]));
    let reads = |s: &Store| s.indexes().into_iter().find(|i| i.name == "ix").unwrap().read_count;
    assert_eq!(reads(&s), 5);
    // A uniqueness constraint on another pair: its internal seeks count nothing.
    let n = key(&s, "n");
    assert!(s.create_rule(IndexKind::Uniqueness, u, &[n], Some("un")).unwrap());
    let mut w = s.begin(false);
    w.create_node(&[u], vec![(n, Value::Int(1))]).unwrap();
    w.commit().unwrap();
    let un = s.indexes().into_iter().find(|i| i.name == "un").unwrap().read_count;
    assert_eq!((reads(&s), un), (5, 0));
}

/// The maintenance thread's "writes are quiet" test sees a load's open batch: creating nodes
/// and relationships in a transaction not committed yet moves the write progress, as its
/// commit does (a batch slower than the quiet period was taken for a quiet store, and the
/// delta folded and collected in the middle of the load).
#[test]
fn write_progress_moves_with_creates_before_their_commit() {
    let s = Store::in_memory();
    let l = label(&s, "L");
    let t = rtype(&s, "T");
    let core = s.core_for_test();
    let p0 = core.write_progress();
    let mut w = s.begin(false);
    let a = w.create_node(&[l], vec![]).unwrap();
    let p1 = core.write_progress();
    assert_ne!(p1, p0, "a node created, not committed");
    w.create_rel(a, a, t, vec![]).unwrap();
    let p2 = core.write_progress();
    assert_ne!(p2, p1, "a relationship created, not committed");
    w.commit().unwrap();
    assert_ne!(core.write_progress(), p2, "the commit");
}

#[test]
fn index_seek_unifies_numbers_and_sees_own_writes() {
    let s = Store::in_memory();
    let u = label(&s, "User");
    let id = key(&s, "id");
    let mut w = s.begin(false);
    let a = w.create_node(&[u], vec![(id, Value::Int(5))]).unwrap();
    let b = w.create_node(&[u], vec![(id, Value::Float(6.0))]).unwrap();
    w.commit().unwrap();
    assert_eq!(s.begin(true).index_seek(u, id, &Value::Int(5)), None);
    assert!(s.create_index(u, id, None).unwrap());
    assert!(!s.create_index(u, id, None).unwrap());
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let info = s.indexes();
    assert_eq!(info.len(), 1);
    assert!(info[0].name.starts_with("index_"));
    assert_eq!(info[0].kind.type_name(), "RANGE");
    let r = s.begin(true);
    assert_eq!(r.index_seek(u, id, &Value::Int(5)), Some(vec![a]));
    assert_eq!(r.index_seek(u, id, &Value::Float(5.0)), Some(vec![a]));
    assert_eq!(r.index_seek(u, id, &Value::Int(6)), Some(vec![b]));
    assert_eq!(r.index_seek(u, id, &Value::Int(7)), Some(vec![]));
    let mut w = s.begin(false);
    w.set_node_property(a, id, Value::Int(7)).unwrap();
    let c = w.create_node(&[u], vec![(id, Value::Int(5))]).unwrap();
    assert_eq!(w.index_seek(u, id, &Value::Int(5)), Some(vec![c]));
    assert_eq!(w.index_seek(u, id, &Value::Int(7)), Some(vec![a]));
    w.commit().unwrap();
    // The old snapshot still finds the old value.
    assert_eq!(r.index_seek(u, id, &Value::Int(5)), Some(vec![a]));
    let r2 = s.begin(true);
    assert_eq!(r2.index_seek(u, id, &Value::Int(5)), Some(vec![c]));
    assert!(s.drop_index(&info[0].name).unwrap());
    assert!(!s.drop_index(&info[0].name).unwrap());
    assert_eq!(r2.index_seek(u, id, &Value::Int(5)), None);
}

#[test]
fn unique_constraints() {
    let s = Store::in_memory();
    let u = label(&s, "User");
    let id = key(&s, "name");
    let mut w = s.begin(false);
    let a = w.create_node(&[u], vec![(id, Value::str("alice"))]).unwrap();
    let dup = w.create_node(&[u], vec![(id, Value::str("alice"))]).unwrap();
    w.commit().unwrap();
    let e = s.create_unique_constraint(u, id, Some("uniq_user")).unwrap_err();
    assert_eq!(e.status, Status::ConstraintCreationFailed);
    assert!(s.indexes().is_empty());
    let mut w = s.begin(false);
    w.delete_node(dup).unwrap();
    w.commit().unwrap();
    assert!(s.create_unique_constraint(u, id, Some("uniq_user")).unwrap());
    assert_eq!(s.indexes()[0].kind, IndexKind::Uniqueness);

    // Within one transaction: rejected at write time.
    let mut w = s.begin(false);
    let e = w.create_node(&[u], vec![(id, Value::str("alice"))]).unwrap_err();
    assert_eq!(e.status, Status::ConstraintValidationFailed);
    assert_eq!(
        e.message,
        format!("Node({}) already exists with label `User` and property `name` = 'alice'", a.0)
    );

    // Two concurrent transactions: the second commit fails and changes nothing.
    let mut t1 = s.begin(false);
    let mut t2 = s.begin(false);
    t1.create_node(&[u], vec![(id, Value::str("bob"))]).unwrap();
    let other = t2.create_node(&[], vec![]).unwrap();
    let n = t2.create_node(&[], vec![(id, Value::str("bob"))]).unwrap();
    t2.add_label(n, u).unwrap();
    t1.commit().unwrap();
    let e = t2.commit().unwrap_err();
    assert_eq!(e.status, Status::ConstraintValidationFailed);
    let r = s.begin(true);
    assert!(!r.node_exists(other));
    assert_eq!(r.count_nodes(Some(u)), 2);
}

#[test]
fn durable_commits_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let n = 50;
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let l = label(&s, "L");
        let k = key(&s, "k");
        let t = rtype(&s, "T");
        let mut prev = None;
        for i in 0..n {
            let mut w = s.begin(false);
            let id = w.create_node(&[l], vec![(k, Value::Int(i))]).unwrap();
            if let Some(p) = prev {
                w.create_rel(p, id, t, vec![(k, Value::str("x"))]).unwrap();
            }
            prev = Some(id);
            w.commit().unwrap();
        }
        let mut w = s.begin(false);
        w.set_node_property(NodeId(0), k, Value::Int(-1)).unwrap();
        w.commit().unwrap();
        // Open twice is refused.
        assert!(Store::open(dir.path(), cfg()).is_err());
        s.crash_for_test();
    }
    let s = Store::open(dir.path(), cfg()).unwrap();
    let l = s.token_id(TokenKind::Label, "L").unwrap();
    let k = s.token_id(TokenKind::PropertyKey, "k").unwrap();
    let r = s.begin(true);
    assert_eq!(r.count_nodes(Some(l)), n as u64);
    assert_eq!(int(&r.node_property(NodeId(0), k)), Some(-1));
    assert_eq!(int(&r.node_property(NodeId(7), k)), Some(7));
    assert_eq!(r.degree(NodeId(7), Direction::Both, &[]), 2);
    // New commits continue after the recovered ones.
    let ts = r.start_ts();
    drop(r);
    let mut w = s.begin(false);
    let new = w.create_node(&[], vec![]).unwrap();
    assert_eq!(new.0, n as u64);
    assert!(w.commit().unwrap() > ts);
}

#[test]
fn checkpoint_then_more_wal_then_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig { wal_segment_bytes: 128, ..cfg() };
    {
        let s = Store::open(dir.path(), config.clone()).unwrap();
        let l = label(&s, "L");
        let k = key(&s, "k");
        for i in 0..30 {
            let mut w = s.begin(false);
            w.create_node(&[l], vec![(k, Value::Int(i))]).unwrap();
            w.commit().unwrap();
        }
        s.create_unique_constraint(l, k, None).unwrap();
        let segments_before = wal::list_segments(&crate::vfs::RealFs, dir.path()).unwrap().len();
        assert!(segments_before > 2, "rotation should have made several segments");
        s.checkpoint().unwrap();
        let segments_after = wal::list_segments(&crate::vfs::RealFs, dir.path()).unwrap().len();
        assert!(segments_after < segments_before);
        // More commits after the checkpoint, including a new token.
        let m = label(&s, "M");
        let mut w = s.begin(false);
        w.create_node(&[m], vec![(k, Value::Int(100))]).unwrap();
        w.delete_node(NodeId(3)).unwrap();
        w.commit().unwrap();
        s.crash_for_test();
    }
    let s = Store::open(dir.path(), config.clone()).unwrap();
    let l = s.token_id(TokenKind::Label, "L").unwrap();
    let m = s.token_id(TokenKind::Label, "M").unwrap();
    let k = s.token_id(TokenKind::PropertyKey, "k").unwrap();
    let r = s.begin(true);
    assert_eq!(r.count_nodes(Some(l)), 29);
    assert_eq!(r.count_nodes(Some(m)), 1);
    assert!(!r.node_exists(NodeId(3)));
    assert_eq!(r.index_seek(l, k, &Value::Int(4)), Some(vec![NodeId(4)]));
    assert_eq!(s.indexes().len(), 1);
    let mut w = s.begin(false);
    let e = w.create_node(&[l], vec![(k, Value::Int(5))]).unwrap_err();
    assert_eq!(e.status, Status::ConstraintValidationFailed);
    drop(w);
    drop(r);
    // A clean close checkpoints; reopening needs no WAL records.
    s.close().unwrap();
    let s = Store::open(dir.path(), config).unwrap();
    assert_eq!(s.begin(true).count_nodes(None), 30);
}

fn last_segment(dir: &Path) -> std::path::PathBuf {
    wal::list_segments(&crate::vfs::RealFs, dir)
        .unwrap()
        .into_iter()
        .rev()
        .find(|(_, p)| fs::metadata(p).unwrap().len() > 0)
        .unwrap()
        .1
}

#[test]
fn torn_tail_is_discarded() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let k = key(&s, "k");
        for i in 0..10 {
            let mut w = s.begin(false);
            w.create_node(&[], vec![(k, Value::Int(i))]).unwrap();
            w.commit().unwrap();
        }
        s.crash_for_test();
    }
    let seg = last_segment(dir.path());
    let len = fs::metadata(&seg).unwrap().len();
    let f = fs::OpenOptions::new().write(true).open(&seg).unwrap();
    f.set_len(len - 3).unwrap();
    drop(f);
    let s = Store::open(dir.path(), cfg()).unwrap();
    let r = s.begin(true);
    assert_eq!(r.count_nodes(None), 9);
    assert!(!r.node_exists(NodeId(9)));
    drop(r);
    // The store keeps working and the next reopen is clean.
    let mut w = s.begin(false);
    w.create_node(&[], vec![]).unwrap();
    w.commit().unwrap();
    s.crash_for_test();
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(s.begin(true).count_nodes(None), 10);
}

#[test]
fn corruption_in_the_middle_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        for _ in 0..10 {
            let mut w = s.begin(false);
            w.create_node(&[], vec![]).unwrap();
            w.commit().unwrap();
        }
        s.crash_for_test();
    }
    let seg = last_segment(dir.path());
    let mut data = fs::read(&seg).unwrap();
    let mid = data.len() / 2;
    data[mid] ^= 0xff;
    fs::write(&seg, &data).unwrap();
    let e = Store::open(dir.path(), cfg()).err().unwrap();
    assert_eq!(e.status, Status::Corruption);
    assert!(e.message.contains("wal-") && e.message.contains("at byte"), "{}", e.message);

    // A damaged checkpoint is detected by its checksum.
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let mut w = s.begin(false);
        w.create_node(&[], vec![(key(&s, "k"), Value::str("some text"))]).unwrap();
        w.commit().unwrap();
        s.close().unwrap();
    }
    let ck = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("checkpoint-"))
        .unwrap()
        .path();
    let mut data = fs::read(&ck).unwrap();
    let n = data.len();
    data[n - 8] ^= 1;
    fs::write(&ck, &data).unwrap();
    let e = Store::open(dir.path(), cfg()).err().unwrap();
    assert_eq!(e.status, Status::Corruption);
    assert!(e.message.contains("checkpoint"), "{}", e.message);
}

#[test]
fn group_commit_shares_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg()).unwrap();
    let k = key(&s, "k");
    let per_thread = 40;
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let mut w = s.begin(false);
                    w.create_node(&[], vec![(k, Value::Int(t * 1000 + i))]).unwrap();
                    w.commit().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let commits = 8 * per_thread as u64;
    let syncs = s.wal_syncs();
    assert!(syncs > 0 && syncs < commits, "syncs {syncs} commits {commits}");
    assert_eq!(s.begin(true).count_nodes(None), commits);
}

#[test]
fn async_and_off_modes_persist_on_close() {
    for durability in [Durability::Async, Durability::Off] {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig { durability, ..cfg() };
        {
            let s = Store::open(dir.path(), config.clone()).unwrap();
            for _ in 0..5 {
                let mut w = s.begin(false);
                w.create_node(&[], vec![]).unwrap();
                w.commit().unwrap();
            }
            s.crash_for_test();
        }
        let s = Store::open(dir.path(), config).unwrap();
        assert_eq!(s.begin(true).count_nodes(None), 5);
    }
}

#[test]
fn background_checkpoint_by_wal_size() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig { checkpoint_wal_bytes: 1, ..cfg() };
    let s = Store::open(dir.path(), config).unwrap();
    let mut w = s.begin(false);
    w.create_node(&[], vec![]).unwrap();
    w.commit().unwrap();
    let mut found = false;
    for _ in 0..100 {
        if dir.path().join("MANIFEST").exists() {
            found = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(found, "no background checkpoint");
}

#[test]
fn background_fold_of_a_large_delta_writes_no_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(s.memory_stats().base_ts, 0);
    // More than the 200,000 delta versions that trigger a fold.
    for _ in 0..5 {
        let mut w = s.begin(false);
        for _ in 0..41_000 {
            w.create_node(&[], vec![]).unwrap();
        }
        w.commit().unwrap();
    }
    let mut folded = false;
    for _ in 0..1000 {
        if s.memory_stats().base_ts > 0 {
            folded = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(folded, "the large delta was not folded into a new base");
    assert!(!dir.path().join("MANIFEST").exists(), "the fold wrote a checkpoint");
    assert_eq!(s.begin(true).count_nodes(None), 205_000);
    s.crash_for_test();
    drop(s);
    // Everything is still recovered from the log alone.
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(s.begin(true).count_nodes(None), 205_000);
}

#[test]
fn gc_prunes_versions() {
    let s = Store::in_memory();
    let k = key(&s, "k");
    let mut w = s.begin(false);
    let n = w.create_node(&[], vec![]).unwrap();
    w.commit().unwrap();
    let pin = s.begin(true);
    for i in 0..10 {
        let mut w = s.begin(false);
        w.set_node_property(n, k, Value::Int(i)).unwrap();
        w.commit().unwrap();
    }
    let chain_len =
        |s: &Store| s.core_for_test().nodes_for_test().read(n.0, |x| x.chain.len()).unwrap();
    s.gc();
    assert_eq!(chain_len(&s), 11, "a pinned snapshot keeps versions");
    assert!(pin.node_properties(n).is_empty());
    drop(pin);
    s.gc();
    assert_eq!(chain_len(&s), 1);
    let mut w = s.begin(false);
    w.set_node_property(n, k, Value::Null).unwrap();
    w.delete_node(n).unwrap();
    w.commit().unwrap();
    s.gc();
    assert!(s.core_for_test().nodes_for_test().read(n.0, |_| ()).is_none());
}

#[test]
fn transaction_is_send_and_store_is_sync() {
    fn assert_send<T: Send>() {}
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send::<Transaction>();
    assert_send_sync::<Store>();
    let s = Store::in_memory();
    let tx = s.begin(false);
    let h = std::thread::spawn(move || {
        let mut tx = tx;
        tx.create_node(&[], vec![]).unwrap();
        tx.commit().unwrap()
    });
    assert!(h.join().unwrap() > 0);
}

#[test]
fn failed_fsync_refuses_further_commits() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg()).unwrap();
    let mut w = s.begin(false);
    let a = w.create_node(&[], vec![]).unwrap();
    w.commit().unwrap();
    s.persist_for_test()
        .as_ref()
        .unwrap()
        .wal
        .fail_next_sync
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let mut w = s.begin(false);
    let b = w.create_node(&[], vec![]).unwrap();
    let e = w.commit().unwrap_err();
    assert_eq!(e.status, Status::Io);
    let r = s.begin(true);
    assert!(r.node_exists(a));
    assert!(!r.node_exists(b), "a commit whose fsync failed must not become visible");
    let mut w = s.begin(false);
    w.create_node(&[], vec![]).unwrap();
    assert_eq!(w.commit().unwrap_err().status, Status::Io);
    assert_eq!(s.create_index(0, 0, None).unwrap_err().status, Status::Io);
    // Close does not pretend success either, and does not checkpoint.
    drop(r);
    let _ = s.close();
}

#[test]
fn concurrent_transfers_keep_snapshots_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg()).unwrap();
    let bal = key(&s, "balance");
    let accounts = 8u64;
    let mut w = s.begin(false);
    for _ in 0..accounts {
        w.create_node(&[], vec![(bal, Value::Int(100))]).unwrap();
    }
    w.commit().unwrap();
    let total = move |tx: &Transaction| -> i64 {
        (0..accounts).map(|i| int(&tx.node_property(NodeId(i), bal)).unwrap()).sum()
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut handles = Vec::new();
    for t in 0..4u64 {
        let s = s.clone();
        handles.push(std::thread::spawn(move || {
            let mut done = 0;
            let mut conflicts = 0;
            let mut i = t;
            while done < 60 {
                i = i.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let (a, b) = ((i >> 33) % accounts, (i >> 40) % accounts);
                if a == b {
                    continue;
                }
                let mut w = s.begin(false);
                let res = (|| -> Result<()> {
                    let va = int(&w.node_property(NodeId(a), bal)).unwrap();
                    let vb = int(&w.node_property(NodeId(b), bal)).unwrap();
                    w.set_node_property(NodeId(a), bal, Value::Int(va - 1))?;
                    w.set_node_property(NodeId(b), bal, Value::Int(vb + 1))?;
                    Ok(())
                })();
                match res.and_then(|_| w.commit()) {
                    Ok(_) => done += 1,
                    Err(e) => {
                        assert_eq!(e.status, Status::TransactionOutdated, "{e}");
                        conflicts += 1;
                    }
                }
            }
            conflicts
        }));
    }
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let s = s.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut checks = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let r = s.begin(true);
                    assert_eq!(total(&r), 800);
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert_eq!(total(&s.begin(true)), 800);
    s.crash_for_test();
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(total(&s.begin(true)), 800);
}

/// One large transaction (MERGE-like seeks, creates, commit, checkpoint, reopen) stays correct;
/// `--nocapture` prints rough timings (speed itself is measured by benchmarks, not tests).
#[test]
fn bulk_transaction_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg()).unwrap();
    let u = label(&s, "User");
    let id = key(&s, "id");
    let t = rtype(&s, "KNOWS");
    s.create_unique_constraint(u, id, None).unwrap();
    let n = 20_000i64;
    let start = std::time::Instant::now();
    let mut w = s.begin(false);
    for i in 0..n {
        // MERGE-like: seek, then create.
        assert_eq!(w.index_seek(u, id, &Value::Int(i)), Some(vec![]));
        w.create_node(&[u], vec![(id, Value::Int(i))]).unwrap();
    }
    for i in 0..n {
        w.create_rel(NodeId(i as u64), NodeId(((i * 7) % n) as u64), t, vec![]).unwrap();
    }
    eprintln!("build tx: {:?}", start.elapsed());
    let c = std::time::Instant::now();
    w.commit().unwrap();
    eprintln!("commit: {:?}", c.elapsed());
    let c = std::time::Instant::now();
    let r = s.begin(true);
    let mut cur = NodeId(0);
    let mut cnt = 0;
    let mut edges = Vec::new();
    while let Some(x) = r.next_node(Some(u), cur) {
        edges.clear();
        r.node_edges(x, Direction::Both, &[], &mut edges);
        cnt += 1;
        cur = NodeId(x.0 + 1);
    }
    assert_eq!(cnt, n);
    eprintln!("scan+expand: {:?}", c.elapsed());
    drop(r);
    let c = std::time::Instant::now();
    s.checkpoint().unwrap();
    eprintln!("checkpoint: {:?}", c.elapsed());
    s.crash_for_test();
    let c = std::time::Instant::now();
    let s = Store::open(dir.path(), cfg()).unwrap();
    eprintln!("reopen: {:?}", c.elapsed());
    assert_eq!(s.begin(true).count_nodes(Some(u)), n as u64);
}

/// Found by the fault tests: an index created after a rebuild missed the newer (delta) versions
/// of nodes whose label is already in the base, because the delta's label sets only list
/// nodes that gained the label since the base.
#[test]
fn index_created_after_a_rebuild_sees_updates_of_base_nodes() {
    let s = Store::in_memory();
    let (l, k) = (label(&s, "L"), key(&s, "k"));
    let mut w = s.begin(false);
    let a = w.create_node(&[l], vec![]).unwrap();
    w.commit().unwrap();
    assert!(s.compact().unwrap());
    let mut w = s.begin(false);
    w.set_node_property(a, k, Value::Int(5)).unwrap();
    w.commit().unwrap();
    assert!(s.create_index(l, k, None).unwrap());
    // Existing data: the index populates in the background.
    s.await_indexes(None, std::time::Duration::from_secs(60)).unwrap();
    assert_eq!(s.begin(true).index_seek(l, k, &Value::Int(5)), Some(vec![a]));
    assert!(s.check().unwrap().is_ok());
}

/// `arbor check` opens read-only: recovery in memory, and not a byte of the directory changes
/// (no torn-tail truncation, no new segment, no leftover cleanup, no checkpoint on close).
#[test]
fn read_only_open_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg()).unwrap();
    let l = label(&s, "L");
    let mut w = s.begin(false);
    let a = w.create_node(&[l], vec![]).unwrap();
    w.commit().unwrap();
    s.checkpoint().unwrap();
    let mut w = s.begin(false);
    let b = w.create_node(&[l], vec![]).unwrap();
    w.commit().unwrap();
    // Read-only opens are refused while a writer has the store.
    assert!(Store::open_read_only(dir.path()).is_err());
    s.crash_for_test();
    let seg = last_segment(dir.path());
    let mut f = fs::OpenOptions::new().append(true).open(&seg).unwrap();
    std::io::Write::write_all(&mut f, &[7, 0, 0, 0, 1, 2]).unwrap();
    fs::write(dir.path().join("checkpoint-00000000000000000099.arbor.tmp"), b"junk").unwrap();
    let files = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().to_string(), fs::read(e.path()).unwrap()))
            .collect();
        v.sort();
        v
    };
    let before = files(dir.path());
    let r = Store::open_read_only(dir.path()).unwrap();
    let tx = r.begin(true);
    assert!(tx.node_exists(a) && tx.node_exists(b));
    drop(tx);
    let report = r.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let mut w = r.begin(false);
    w.create_node(&[], vec![]).unwrap();
    assert_eq!(w.commit().unwrap_err().status, Status::Io);
    assert!(r.create_index(l, 0, None).is_err());
    r.checkpoint().unwrap();
    // Two read-only opens may share the directory.
    let r2 = Store::open_read_only(dir.path()).unwrap();
    r2.close().unwrap();
    r.close().unwrap();
    drop(r);
    assert!(before == files(dir.path()), "a read-only open changed the directory");
    // A writable open still repairs and recovers as before.
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert!(s.begin(true).node_exists(b));
}

/// Found by the fault tests (a deleted node came back after recovery): a rebuild dropped its
/// snapshot before installing the base built from it, so GC could prune the whole version
/// chain of a node created before and deleted after the snapshot (the current base lacked it);
/// the installed base, which has the node, then had no dirty bit for it and showed it again.
#[test]
fn rebuild_does_not_resurrect_a_node_deleted_during_the_build() {
    let s = Store::in_memory();
    let l = label(&s, "L");
    let mut w = s.begin(false);
    w.create_node(&[l], vec![]).unwrap();
    w.commit().unwrap();
    assert!(s.compact().unwrap());
    let mut w = s.begin(false);
    let n = w.create_node(&[l], vec![]).unwrap();
    w.commit().unwrap();
    let s2 = s.clone();
    crate::durability::checkpoint::BEFORE_INSTALL.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            let mut w = s2.begin(false);
            w.delete_node(n).unwrap();
            w.commit().unwrap();
            s2.gc();
        }))
    });
    assert!(s.compact().unwrap());
    crate::durability::checkpoint::BEFORE_INSTALL.with(|h| *h.borrow_mut() = None);
    let r = s.begin(true);
    assert!(!r.node_exists(n), "a deleted node came back");
    assert_eq!(r.count_nodes(Some(l)), 1);
    drop(r);
    assert!(s.check().unwrap().is_ok());
}

/// Seeks and scans agree: every node with the label whose key is `v` (by brute force).
fn scan_eq(tx: &Transaction, l: TokenId, k: TokenId, v: i64) -> Vec<NodeId> {
    all_nodes(tx, Some(l))
        .into_iter()
        .map(NodeId)
        .filter(|n| int(&tx.node_property(*n, k)) == Some(v))
        .collect()
}

#[test]
fn background_population_races_with_commits() {
    let s = Store::in_memory();
    let (l, k) = (label(&s, "L"), key(&s, "k"));
    let mut w = s.begin(false);
    let mut ids = Vec::new();
    for i in 0..20_000i64 {
        ids.push(w.create_node(&[l], vec![(k, Value::Int(i % 100))]).unwrap());
    }
    w.commit().unwrap();
    s.compact().unwrap();
    let mut w = s.begin(false);
    for id in ids.iter().step_by(7) {
        w.set_node_property(*id, k, Value::Int(1000)).unwrap();
    }
    w.commit().unwrap();
    assert!(s.create_index(l, k, Some("ix")).unwrap());
    // Commits keep going while the index fills.
    for round in 0..20i64 {
        let mut w = s.begin(false);
        for id in ids.iter().skip(round as usize).step_by(97) {
            w.set_node_property(*id, k, Value::Int(2000 + round)).unwrap();
        }
        w.create_node(&[l], vec![(k, Value::Int(3000 + round))]).unwrap();
        w.commit().unwrap();
        let r = s.begin(true);
        // Not online yet: no index answers (callers scan); online: it answers exactly.
        if let Some(found) = r.index_seek(l, k, &Value::Int(5)) {
            assert_eq!(found, scan_eq(&r, l, k, 5));
        }
    }
    s.await_indexes(Some("ix"), Duration::from_secs(60)).unwrap();
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let info = &s.indexes()[0];
    assert_eq!((info.state, info.population_percent), ("ONLINE", 100.0));
    let r = s.begin(true);
    for v in [0, 5, 99, 1000, 2003, 2019, 3007] {
        assert_eq!(r.index_seek(l, k, &Value::Int(v)), Some(scan_eq(&r, l, k, v)), "value {v}");
    }
    let rep = s.check().unwrap();
    assert!(rep.problems.is_empty(), "{:?}", rep.problems);
    assert!(s.await_indexes(Some("nope"), Duration::from_secs(1)).is_err());
}

/// Relationships of type `t` with `k = v`, by scanning.
fn scan_rel_eq(tx: &Transaction, t: TokenId, k: TokenId, v: i64) -> Vec<RelId> {
    let mut out = Vec::new();
    let mut from = RelId(0);
    while let Some(id) = tx.next_rel(&[t], from) {
        from = RelId(id.0 + 1);
        if int(&tx.rel_property(id, k)) == Some(v) {
            out.push(id);
        }
    }
    out
}

#[test]
fn relationship_index_populates_in_background() {
    let dir = tempfile::tempdir().unwrap();
    let rels;
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let (t, u, k) = (rtype(&s, "T"), rtype(&s, "U"), key(&s, "k"));
        let mut w = s.begin(false);
        let n = w.create_node(&[], vec![]).unwrap();
        let m = w.create_node(&[], vec![]).unwrap();
        let mut ids = Vec::new();
        for i in 0..20_000i64 {
            ids.push(w.create_rel(n, m, t, vec![(k, Value::Int(i % 100))]).unwrap());
            if i % 10 == 0 {
                w.create_rel(m, n, u, vec![(k, Value::Int(5))]).unwrap();
            }
        }
        w.commit().unwrap();
        s.checkpoint().unwrap();
        let mut w = s.begin(false);
        for id in ids.iter().step_by(7) {
            w.set_rel_property(*id, k, Value::Int(1000)).unwrap();
        }
        w.commit().unwrap();
        // Returns before the index is complete; writers are not held up meanwhile.
        assert!(s.create_rel_index(t, &[k], Some("rix")).unwrap());
        for round in 0..20i64 {
            let mut w = s.begin(false);
            for id in ids.iter().skip(round as usize).step_by(97) {
                w.set_rel_property(*id, k, Value::Int(2000 + round)).unwrap();
            }
            w.create_rel(n, n, t, vec![(k, Value::Int(3000 + round))]).unwrap();
            w.delete_rel(ids[19_000 + round as usize]).unwrap();
            w.commit().unwrap();
            let r = s.begin(true);
            // Not online yet: no index answers (callers scan); online: it answers exactly.
            if let Some(found) = r.rel_index_seek(t, &[k], &[Value::Int(5)]) {
                assert_eq!(found, scan_rel_eq(&r, t, k, 5));
            }
        }
        s.await_indexes(Some("rix"), Duration::from_secs(60)).unwrap();
        let info = &s.indexes()[0];
        assert_eq!((info.state, info.population_percent), ("ONLINE", 100.0));
        let r = s.begin(true);
        for v in [0, 5, 99, 1000, 2003, 2019, 3007] {
            let want = scan_rel_eq(&r, t, k, v);
            assert_eq!(r.rel_index_seek(t, &[k], &[Value::Int(v)]), Some(want), "value {v}");
        }
        let hi = Value::Int(3000);
        let above = r.rel_index_range(t, k, Some((&hi, false)), None).unwrap();
        assert_eq!(above.len(), 19);
        drop(r);
        // A crash right after creating another one: recovery builds it completely.
        let ku = key(&s, "k");
        assert!(s.create_rel_index(u, &[ku], Some("uix")).unwrap());
        rels = ids;
        s.crash_for_test();
    }
    let s = Store::open(dir.path(), cfg()).unwrap();
    let (t, u, k) = (rtype(&s, "T"), rtype(&s, "U"), key(&s, "k"));
    // Rules replayed from the log fill after the open.
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    assert!(s.indexes().iter().all(|i| i.state == "ONLINE"));
    let r = s.begin(true);
    assert_eq!(r.rel_index_seek(u, &[k], &[Value::Int(5)]).map(|v| v.len()), Some(2000));
    assert_eq!(r.rel_index_seek(t, &[k], &[Value::Int(1)]), Some(scan_rel_eq(&r, t, k, 1)));
    assert!(r.rel_exists(rels[0]));
}

#[test]
fn crash_during_population_recovers_a_complete_index() {
    let dir = tempfile::tempdir().unwrap();
    let ids;
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let (l, k) = (label(&s, "L"), key(&s, "k"));
        let mut w = s.begin(false);
        ids = (0..5_000i64)
            .map(|i| w.create_node(&[l], vec![(k, Value::Int(i % 10))]).unwrap())
            .collect::<Vec<_>>();
        w.commit().unwrap();
        s.checkpoint().unwrap();
        assert!(s.create_index(l, k, Some("ix")).unwrap());
        let mut w = s.begin(false);
        w.set_node_property(ids[3], k, Value::Int(77)).unwrap();
        w.commit().unwrap();
        s.crash_for_test();
    }
    let s = Store::open(dir.path(), cfg()).unwrap();
    let (l, k) = (label(&s, "L"), key(&s, "k"));
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    assert_eq!(s.indexes()[0].state, "ONLINE");
    let r = s.begin(true);
    assert_eq!(r.index_seek(l, k, &Value::Int(77)), Some(vec![ids[3]]));
    assert_eq!(r.index_seek(l, k, &Value::Int(4)), Some(scan_eq(&r, l, k, 4)));
}

#[test]
fn composite_unique_node_key_and_existence() {
    let s = Store::in_memory();
    let (l, a, b) = (label(&s, "L"), key(&s, "a"), key(&s, "b"));
    assert!(s.create_rule(IndexKind::NodeKey, l, &[a, b], Some("nk")).unwrap());
    assert!(!s.create_rule(IndexKind::NodeKey, l, &[a, b], Some("nk")).unwrap());
    let mut w = s.begin(false);
    let n = w.create_node(&[l], vec![(a, Value::Int(1)), (b, Value::str("x"))]).unwrap();
    // Same composite key (1 == 1.0): rejected at once, the transaction goes on.
    let e = w.create_node(&[l], vec![(a, Value::Float(1.0)), (b, Value::str("x"))]).unwrap_err();
    assert_eq!(e.status, Status::ConstraintValidationFailed);
    w.create_node(&[l], vec![(a, Value::Int(1)), (b, Value::str("y"))]).unwrap();
    w.commit().unwrap();
    let r = s.begin(true);
    assert_eq!(
        r.index_seek_composite(l, &[a, b], &[Value::Float(1.0), Value::str("x")]),
        Some(vec![n])
    );
    assert_eq!(r.index_seek_composite(l, &[b, a], &[Value::str("x"), Value::Int(1)]), None);
    drop(r);
    // A missing key fails at commit and leaves nothing behind.
    let mut w = s.begin(false);
    w.create_node(&[l], vec![(a, Value::Int(2))]).unwrap();
    let e = w.commit().unwrap_err();
    assert_eq!(e.status, Status::ConstraintValidationFailed);
    assert!(e.message.contains("must have the properties (`a`, `b`)"), "{}", e.message);
    assert_eq!(s.begin(true).count_nodes(Some(l)), 2);
    // Existence on data that violates it cannot be created.
    let c = key(&s, "c");
    let e = s.create_rule(IndexKind::Existence, l, &[c], None).unwrap_err();
    assert_eq!(e.status, Status::ConstraintCreationFailed);
    assert!(s.create_rule(IndexKind::Existence, l, &[a], Some("ex")).unwrap());
    let mut w = s.begin(false);
    w.remove_label(n, l).unwrap();
    w.commit().unwrap();
    assert!(s.drop_constraint("nk").unwrap());
    assert!(s.drop_constraint("ex").unwrap());
    assert!(s.indexes().is_empty());
}

#[test]
fn schema_rules_survive_wal_replay_and_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let (l, a, b, t) = (label(&s, "L"), key(&s, "a"), key(&s, "b"), rtype(&s, "T"));
        s.create_rule(IndexKind::NodeKey, l, &[a, b], Some("nk")).unwrap();
        s.create_rel_existence_constraint(t, a, Some("rex")).unwrap();
        s.create_rel_index(t, &[b], Some("rix")).unwrap();
        let mut w = s.begin(false);
        let n = w.create_node(&[l], vec![(a, Value::Int(1)), (b, Value::Int(2))]).unwrap();
        w.create_rel(n, n, t, vec![(a, Value::Int(1)), (b, Value::Int(9))]).unwrap();
        w.commit().unwrap();
        s.crash_for_test();
    }
    for round in 0..2 {
        let s = Store::open(dir.path(), cfg()).unwrap();
        // Replayed rules fill in the background (`populate_replayed.rs`): seeks and the
        // statement-time uniqueness check use them once online (commits wait for them).
        s.await_indexes(None, Duration::from_secs(60)).unwrap();
        let (l, a, b, t) = (label(&s, "L"), key(&s, "a"), key(&s, "b"), rtype(&s, "T"));
        let mut names: Vec<String> = s.indexes().into_iter().map(|i| i.name).collect();
        names.sort();
        assert_eq!(names, ["nk", "rex", "rix"], "round {round}");
        let r = s.begin(true);
        assert_eq!(r.rel_index_seek(t, &[b], &[Value::Float(9.0)]).map(|v| v.len()), Some(1));
        let nine = Value::Int(9);
        let len = |v: Option<Vec<crate::RelId>>| v.map(|v| v.len());
        assert_eq!(len(r.rel_index_range(t, b, Some((&nine, true)), None)), Some(1));
        assert_eq!(len(r.rel_index_range(t, b, Some((&nine, false)), None)), Some(0));
        assert_eq!(len(r.rel_index_range(t, b, None, Some((&Value::Float(9.5), false)))), Some(1));
        assert_eq!(len(r.rel_index_prefix(t, b, "")), Some(0));
        // No index on `(T, a)` (only an existence constraint): the caller scans.
        assert_eq!(len(r.rel_index_range(t, a, Some((&nine, true)), None)), None);
        drop(r);
        let mut w = s.begin(false);
        let n = w.create_node(&[l], vec![(a, Value::Int(1)), (b, Value::Int(3))]).unwrap();
        w.create_rel(n, n, t, vec![]).unwrap();
        let e = w.commit().unwrap_err();
        assert_eq!(e.status, Status::ConstraintValidationFailed, "round {round}");
        let mut w = s.begin(false);
        w.create_node(&[l], vec![(a, Value::Int(1))]).unwrap();
        assert_eq!(w.commit().unwrap_err().status, Status::ConstraintValidationFailed);
        s.checkpoint().unwrap();
        s.crash_for_test();
    }
}

/// A node handle reads a clean base row straight from the base and everything else (delta
/// versions, the transaction's own writes, deleted or missing nodes) exactly as the
/// transaction's own methods; `for_each_edge` lists what `node_edges` lists.
#[test]
fn node_handles_and_edge_streaming_follow_the_snapshot() {
    let s = Store::in_memory();
    let (a, b, k, t) = (label(&s, "A"), label(&s, "B"), key(&s, "k"), rtype(&s, "T"));
    let mut w = s.begin(false);
    let n0 = w.create_node(&[a], vec![(k, Value::Bool(true))]).unwrap();
    let n1 = w.create_node(&[a], vec![]).unwrap();
    let n2 = w.create_node(&[b], vec![]).unwrap();
    w.create_rel(n0, n1, t, vec![]).unwrap();
    w.create_rel(n0, n2, t, vec![]).unwrap();
    w.create_rel(n1, n1, t, vec![]).unwrap();
    let n3 = w.create_node(&[a, b], vec![(k, Value::Int(3))]).unwrap();
    let r3 = w.create_rel(n3, n2, t, vec![]).unwrap();
    w.commit().unwrap();
    s.compact().unwrap();
    // After the fold everything is base; then one more relationship and a property change
    // land in the delta.
    let mut w = s.begin(false);
    let late = w.create_rel(n2, n0, t, vec![]).unwrap();
    w.set_node_property(n1, k, Value::Int(5)).unwrap();
    w.commit().unwrap();

    let edges_via = |tx: &Transaction, n: NodeId, dir: Direction| {
        let mut v = Vec::new();
        tx.node_handle(n).for_each_edge(dir, &[], |e| v.push(e));
        let mut w = Vec::new();
        tx.node_edges(n, dir, &[], &mut w);
        assert_eq!(v, w);
        v
    };
    let r = s.begin(true);
    // n3 is a clean base row (the fast path); n1 has a delta version, n0 a delta adjacency.
    let h3 = r.node_handle(n3);
    assert!(format!("{h3:?}").ends_with(", clean)"), "{h3:?}");
    assert!(!format!("{:?}", r.node_handle(n1)).contains("clean"));
    assert!(!format!("{:?}", r.node_handle(n0)).contains("clean"));
    assert!(h3.exists() && h3.has_label(a) && h3.has_label(b));
    assert_eq!(int(&h3.property(k)), Some(3));
    assert_eq!(h3.labels(), vec![a, b]);
    let out3 = edges_via(&r, n3, Direction::Both);
    assert_eq!((out3.len(), out3[0].rel, out3[0].other), (1, r3, n2));
    let h0 = r.node_handle(n0);
    assert!(h0.exists() && h0.has_label(a) && !h0.has_label(b));
    assert!(matches!(h0.property(k), Some(Value::Bool(true))));
    assert_eq!(h0.labels(), vec![a]);
    assert_eq!(edges_via(&r, n0, Direction::Outgoing).len(), 2);
    // The relationship committed after the base is seen from both ends.
    let inc = edges_via(&r, n0, Direction::Incoming);
    assert_eq!(inc.iter().map(|e| e.rel).collect::<Vec<_>>(), vec![late]);
    assert_eq!(int(&r.node_handle(n1).property(k)), Some(5));
    // A self-loop is listed once with `Both`.
    assert_eq!(edges_via(&r, n1, Direction::Both).iter().filter(|e| e.other == n1).count(), 1);

    // Own writes: a new label, a deleted relationship, a created one and a deleted node.
    let mut w = s.begin(false);
    w.add_label(n0, b).unwrap();
    let first = edges_via(&w, n0, Direction::Outgoing)[0].rel;
    w.delete_rel(first).unwrap();
    let own = w.create_rel(n0, n0, t, vec![]).unwrap();
    let out: Vec<RelId> = edges_via(&w, n0, Direction::Outgoing).iter().map(|e| e.rel).collect();
    assert!(!out.contains(&first) && out.contains(&own) && out.len() == 2, "{out:?}");
    assert!(w.node_handle(n0).has_label(b));
    w.delete_rel(late).unwrap();
    for e in edges_via(&w, n2, Direction::Both) {
        w.delete_rel(e.rel).unwrap();
    }
    w.delete_node(n2).unwrap();
    let gone = w.node_handle(n2);
    assert!(!gone.exists() && !gone.has_label(b) && gone.property(k).is_none());
    assert!(edges_via(&w, n2, Direction::Both).is_empty());
    assert!(!w.node_handle(NodeId(1 << 40)).exists());
    // The reader's snapshot is untouched by all of that.
    assert!(!r.node_handle(n0).has_label(b) && r.node_handle(n2).exists());
    assert_eq!(edges_via(&r, n0, Direction::Outgoing).len(), 2);
}

/// Relationship uniqueness and key constraints: refused on violating data, enforced at the
/// statement and, against concurrent commits, at commit; kept across WAL replay and
/// checkpoints; their backing index answers seeks.
#[test]
fn relationship_unique_and_key_constraints() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let (t, a, b) = (rtype(&s, "T"), key(&s, "a"), key(&s, "b"));
        let mut w = s.begin(false);
        let n = w.create_node(&[], vec![]).unwrap();
        w.create_rel(n, n, t, vec![(a, Value::Int(1))]).unwrap();
        w.create_rel(n, n, t, vec![(a, Value::Float(1.0))]).unwrap();
        w.commit().unwrap();
        let e = s.create_rel_constraint(IndexKind::Uniqueness, t, &[a], Some("u")).unwrap_err();
        assert_eq!(e.status, Status::ConstraintCreationFailed);
        assert!(e.message.contains("Both Relationship(0) and Relationship(1)"), "{}", e.message);
        let e = s.create_rel_constraint(IndexKind::NodeKey, t, &[b], Some("k")).unwrap_err();
        assert_eq!(e.status, Status::ConstraintCreationFailed);
        assert!(e.message.contains("must have the properties (`b`)"), "{}", e.message);
        let mut w = s.begin(false);
        w.set_rel_property(RelId(1), a, Value::Int(2)).unwrap();
        w.commit().unwrap();
        assert!(s.create_rel_constraint(IndexKind::Uniqueness, t, &[a], Some("u")).unwrap());
        // Two transactions, each fine on its own snapshot: the second committer fails.
        let mut w1 = s.begin(false);
        let mut w2 = s.begin(false);
        w1.create_rel(n, n, t, vec![(a, Value::Int(5))]).unwrap();
        w2.create_rel(n, n, t, vec![(a, Value::Float(5.0))]).unwrap();
        w1.commit().unwrap();
        let e = w2.commit().unwrap_err();
        assert_eq!(e.status, Status::ConstraintValidationFailed);
        assert!(
            e.message.contains("already exists with type `T` and property `a` = 5"),
            "{}",
            e.message
        );
        let r = s.begin(true);
        assert_eq!(r.rel_index_seek(t, &[a], &[Value::Int(5)]).map(|v| v.len()), Some(1));
        drop(r);
        s.crash_for_test();
    }
    for round in 0..2 {
        let s = Store::open(dir.path(), cfg()).unwrap();
        // Replayed rules fill in the background (`populate_replayed.rs`): seeks and the
        // statement-time uniqueness check use them once online (commits wait for them).
        s.await_indexes(None, Duration::from_secs(60)).unwrap();
        let (t, a) = (rtype(&s, "T"), key(&s, "a"));
        let mut w = s.begin(false);
        let e = w.create_rel(NodeId(0), NodeId(0), t, vec![(a, Value::Int(2))]).unwrap_err();
        assert_eq!(e.status, Status::ConstraintValidationFailed, "round {round}");
        let e = w.set_rel_property(RelId(0), a, Value::Int(5)).unwrap_err();
        assert_eq!(e.status, Status::ConstraintValidationFailed, "round {round}");
        w.rollback();
        s.checkpoint().unwrap();
        s.crash_for_test();
    }
    let s = Store::open(dir.path(), cfg()).unwrap();
    // Replayed rules fill in the background (`populate_replayed.rs`): seeks and the
    // statement-time uniqueness check use them once online (commits wait for them).
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let (t, a, b) = (rtype(&s, "T"), key(&s, "a"), key(&s, "b"));
    assert!(s.drop_constraint("u").unwrap());
    let mut w = s.begin(false);
    w.create_rel(NodeId(0), NodeId(0), t, vec![(a, Value::Int(2))]).unwrap();
    w.commit().unwrap();
    // A composite key: every key required, the pair unique.
    // Every relationship (ids a failed create took are skipped: which ones depends on when
    // checkpoints recorded the id counter).
    let mut w = s.begin(false);
    let mut cur = RelId(0);
    let mut rels = Vec::new();
    while let Some(r) = w.next_rel(&[], cur) {
        rels.push(r);
        cur = RelId(r.0 + 1);
    }
    assert_eq!(rels.len(), 4);
    for r in rels {
        w.set_rel_property(r, b, Value::Int(r.0 as i64)).unwrap();
    }
    w.commit().unwrap();
    assert!(s.create_rel_constraint(IndexKind::NodeKey, t, &[a, b], Some("k")).unwrap());
    let mut w = s.begin(false);
    w.create_rel(NodeId(0), NodeId(0), t, vec![(a, Value::Int(9))]).unwrap();
    let e = w.commit().unwrap_err();
    assert_eq!(e.status, Status::ConstraintValidationFailed);
    assert!(e.message.contains("must have the properties (`a`, `b`)"), "{}", e.message);
    // Refused next to the key: a plain index and a uniqueness constraint on the same schema.
    let e = s.create_rel_index(t, &[a, b], None).unwrap_err();
    assert_eq!(e.status, Status::ConstraintAlreadyExists);
    let e = s.create_rel_constraint(IndexKind::Uniqueness, t, &[a, b], None).unwrap_err();
    assert_eq!(e.status, Status::ConstraintAlreadyExists);
}

/// Composite index ranges: equality on a prefix of the keys and a range or string prefix on
/// the next, answered from the delta, the base and the transaction's own writes.
#[test]
fn composite_index_ranges() {
    let s = Store::in_memory();
    let (l, a, b) = (label(&s, "L"), key(&s, "a"), key(&s, "b"));
    assert!(s.create_rule(IndexKind::Range, l, &[a, b], Some("ab")).unwrap());
    let mut w = s.begin(false);
    let mut ids = Vec::new();
    for i in 0..60i64 {
        let bv = if i % 5 == 0 { Value::str(&format!("s{i}")) } else { Value::Int(i) };
        ids.push(w.create_node(&[l], vec![(a, Value::Int(i % 3)), (b, bv)]).unwrap());
    }
    w.create_node(&[l], vec![(a, Value::Int(1))]).unwrap();
    w.commit().unwrap();
    let check = |tx: &Transaction, when: &str| {
        let (one, ten, fifty) = (Value::Int(1), Value::Int(10), Value::Float(50.0));
        let got = tx
            .index_composite_range(
                l,
                &[a, b],
                std::slice::from_ref(&one),
                Some((&ten, false)),
                Some((&fifty, true)),
                None,
            )
            .unwrap();
        let want: Vec<NodeId> = (0..60i64)
            .filter(|i| i % 3 == 1 && i % 5 != 0 && *i > 10 && *i <= 50)
            .map(|i| ids[i as usize])
            .collect();
        assert_eq!(got, want, "{when}");
        let got =
            tx.index_composite_range(l, &[a, b], &[], Some((&one, true)), None, None).unwrap();
        let want: Vec<NodeId> =
            (0..60i64).filter(|i| i % 3 >= 1).map(|i| ids[i as usize]).collect();
        assert_eq!(got, want, "{when}");
        let got =
            tx.index_composite_range(l, &[a, b], &[Value::Int(0)], None, None, Some("s1")).unwrap();
        assert_eq!(got, vec![ids[15]], "{when}");
        let nan = Value::Float(f64::NAN);
        assert_eq!(
            tx.index_composite_range(l, &[a, b], &[nan], None, None, Some("")),
            Some(vec![])
        );
        assert_eq!(tx.index_composite_range(l, &[b, a], &[], Some((&one, true)), None, None), None);
    };
    check(&s.begin(true), "delta");
    s.compact().unwrap();
    check(&s.begin(true), "base");
    let mut w = s.begin(false);
    let extra = w.create_node(&[l], vec![(a, Value::Int(0)), (b, Value::str("s1x"))]).unwrap();
    let got =
        w.index_composite_range(l, &[a, b], &[Value::Int(0)], None, None, Some("s1")).unwrap();
    assert_eq!(got, vec![ids[15], extra]);
}

/// Constraint creation validates without holding the commit mutex: writers commit meanwhile,
/// and whatever the interleaving, either the constraint exists and no two entities share a
/// key, or creation failed with `ConstraintCreationFailed` and left no rule behind.
#[test]
fn constraint_creation_races_with_writers() {
    for (round, dup_at) in [(0, 0usize), (1, 3), (2, 40), (3, usize::MAX)] {
        let s = std::sync::Arc::new(Store::in_memory());
        let (l, k, t) = (label(&s, "L"), key(&s, "k"), rtype(&s, "T"));
        let mut w = s.begin(false);
        let hub = w.create_node(&[], vec![]).unwrap();
        for i in 0..20_000i64 {
            w.create_node(&[l], vec![(k, Value::Int(i))]).unwrap();
            w.create_rel(hub, hub, t, vec![(k, Value::Int(i))]).unwrap();
        }
        w.commit().unwrap();
        if round % 2 == 1 {
            s.compact().unwrap();
        }
        let writer = {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut committed = 0;
                for i in 0..60usize {
                    let v = if i == dup_at { 7 } else { 100_000 + i as i64 };
                    let mut w = s.begin(false);
                    // Once a rule is installed, the duplicate is refused at the write itself
                    // (and its transaction dropped); any other write must go through.
                    let written = w.create_node(&[l], vec![(k, Value::Int(v))]).is_ok()
                        && w.create_rel(hub, hub, t, vec![(k, Value::Int(v))]).is_ok();
                    assert!(written || i == dup_at, "write {i} refused");
                    if written && w.commit().is_ok() {
                        committed += 1;
                    }
                }
                committed
            })
        };
        let node = s.create_rule(IndexKind::Uniqueness, l, &[k], Some("nu"));
        let rel = s.create_rel_constraint(IndexKind::Uniqueness, t, &[k], Some("ru"));
        let committed = writer.join().unwrap();
        assert!(committed >= 59, "round {round}: {committed}");
        let r = s.begin(true);
        let nodes_with_7 = scan_eq(&r, l, k, 7).len();
        let rels_with_7 = scan_rel_eq(&r, t, k, 7).len();
        for (res, name, n) in [(node, "nu", nodes_with_7), (rel, "ru", rels_with_7)] {
            let listed = s.indexes().iter().any(|i| i.name == name);
            match res {
                Ok(true) => assert!(listed && n == 1, "round {round} {name}: {n}"),
                Ok(false) => panic!("round {round} {name}: not created"),
                Err(e) => {
                    assert_eq!(e.status, Status::ConstraintCreationFailed, "{}", e.message);
                    assert!(!listed && n == 2, "round {round} {name}: {n}");
                }
            }
        }
        if dup_at == usize::MAX {
            assert!(s.indexes().len() == 2, "round {round}");
        }
    }
}

/// The value-ordered id array a base builds on its first range seek shows in `memory_stats`.
#[test]
fn memory_stats_count_value_ordered_arrays() {
    let s = Store::in_memory();
    let (l, k) = (label(&s, "L"), key(&s, "k"));
    assert!(s.create_index(l, k, None).unwrap());
    let mut w = s.begin(false);
    for i in 0..1000i64 {
        w.create_node(&[l], vec![(k, Value::Int(i))]).unwrap();
    }
    w.commit().unwrap();
    s.compact().unwrap();
    let before = s.memory_stats().base.index_bytes;
    let r = s.begin(true);
    let lo = Value::Int(990);
    assert_eq!(r.index_range(l, k, Some((&lo, false)), None).map(|v| v.len()), Some(9));
    assert_eq!(s.memory_stats().base.index_bytes, before + 1000 * 8);
}

/// An incremental fold copies clean base rows as bytes (same label codes, same string
/// indexes) and re-encodes only what was written since; every node must read back exactly,
/// across several folds, with updates, deletions, label changes, repeated strings (interned)
/// and a key whose strings are all distinct (which stops being interned).
/// Node id -> (labels, properties) a test expects.
type Expected = std::collections::BTreeMap<u64, (Vec<TokenId>, Vec<(TokenId, Value)>)>;

#[test]
fn incremental_folds_keep_every_row() {
    let s = Store::in_memory();
    let (a, b, c) = (label(&s, "A"), label(&s, "B"), label(&s, "C"));
    let (name, city, n) = (key(&s, "name"), key(&s, "city"), key(&s, "n"));
    let cities = ["Berlin, a city with a long name", "Paris, also with a long name", "Rome, same"];
    let mut expect: Expected = Default::default();
    let mut next = 0i64;
    let mut add = |s: &Store, count: i64, expect: &mut std::collections::BTreeMap<_, _>| {
        let mut w = s.begin(false);
        for _ in 0..count {
            let i = next;
            next += 1;
            let labels = if i % 3 == 0 { vec![a] } else { vec![a, b] };
            let mut props = vec![
                (name, Value::String(format!("unique name number {i}").into())),
                (city, Value::String(cities[(i % 3) as usize].into())),
                (n, Value::Int(i)),
            ];
            props.sort_by_key(|(k, _)| *k);
            let id = w.create_node(&labels, props.clone()).unwrap();
            expect.insert(id.0, (labels, props));
        }
        w.commit().unwrap();
    };
    let check = |s: &Store, expect: &Expected| {
        let r = s.begin(true);
        assert_eq!(all_nodes(&r, None), expect.keys().copied().collect::<Vec<_>>());
        for (id, (labels, props)) in expect {
            let mut got = r.node_labels(NodeId(*id));
            got.sort();
            let mut want = labels.clone();
            want.sort();
            assert_eq!(got, want, "labels of node {id}");
            for (k, v) in props {
                assert_eq!(
                    format!("{:?}", r.node_property(NodeId(*id), *k)),
                    format!("{:?}", Some(v)),
                    "node {id} key {k:?}"
                );
            }
            assert_eq!(r.node_properties(NodeId(*id)).len(), props.len(), "node {id}");
        }
        assert_eq!(r.count_nodes(Some(a)), expect.len() as u64);
        drop(r);
        assert!(s.check().unwrap().is_ok());
    };
    add(&s, 6000, &mut expect);
    assert!(s.compact().unwrap());
    check(&s, &expect);
    // Writes to base rows between folds: an update, a label change, a deletion.
    let mut w = s.begin(false);
    for id in [3u64, 10, 4000] {
        w.set_node_property(NodeId(id), n, Value::Int(-1)).unwrap();
        let e = expect.get_mut(&id).unwrap();
        e.1.iter_mut().find(|(k, _)| *k == n).unwrap().1 = Value::Int(-1);
    }
    w.add_label(NodeId(5), c).unwrap();
    expect.get_mut(&5).unwrap().0.push(c);
    w.delete_node(NodeId(7)).unwrap();
    expect.remove(&7);
    w.commit().unwrap();
    add(&s, 7000, &mut expect);
    assert!(s.compact().unwrap());
    check(&s, &expect);
    add(&s, 100, &mut expect);
    assert!(s.compact().unwrap());
    check(&s, &expect);
    // The repeated strings are interned, the distinct names stay inline.
    let interned = s.memory_stats().base.interned_strings;
    assert!((3..100).contains(&interned), "{interned} interned strings");
}
