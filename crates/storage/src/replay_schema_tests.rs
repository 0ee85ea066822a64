//! Index rules in the replayed log tail (`durability/recovery.rs`,
//! `durability/populate_replayed.rs`): a rule created and dropped in the tail is never built,
//! replayed rules list POPULATING, then ONLINE with the answers of a fresh build, and a
//! replayed uniqueness rule rejects a duplicate committed while it fills.

use std::time::Duration;

use super::*;
use crate::durability::populate_replayed::{FILLED, HOLD};

fn cfg() -> StoreConfig {
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        ..StoreConfig::default()
    }
}

fn tok(s: &Store, kind: TokenKind, n: &str) -> TokenId {
    s.get_or_create_token(kind, n).unwrap()
}

/// A checkpointed store of `n` nodes labelled `L` with `k = i % 100` and `u = i`.
fn base_store(dir: &std::path::Path, n: i64) -> (Store, Vec<NodeId>) {
    let s = Store::open(dir, cfg()).unwrap();
    let (l, k, u) = (
        tok(&s, TokenKind::Label, "L"),
        tok(&s, TokenKind::PropertyKey, "k"),
        tok(&s, TokenKind::PropertyKey, "u"),
    );
    let mut w = s.begin(false);
    let ids = (0..n)
        .map(|i| w.create_node(&[l], vec![(k, Value::Int(i % 100)), (u, Value::Int(i))]).unwrap())
        .collect();
    w.commit().unwrap();
    s.checkpoint().unwrap();
    (s, ids)
}

fn scan_eq(r: &Transaction, l: TokenId, k: TokenId, v: i64) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut cur = NodeId(0);
    while let Some(n) = r.next_node(Some(l), cur) {
        if matches!(r.node_property(n, k), Some(Value::Int(x)) if x == v) {
            out.push(n);
        }
        cur = NodeId(n.0 + 1);
    }
    out
}

fn state(s: &Store, name: &str) -> &'static str {
    s.indexes().iter().find(|i| i.name == name).map_or("MISSING", |i| i.state)
}

#[test]
fn a_rule_created_and_dropped_in_the_log_tail_is_never_built() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (s, _) = base_store(dir.path(), 3_000);
        let (l, k, u) = (
            tok(&s, TokenKind::Label, "L"),
            tok(&s, TokenKind::PropertyKey, "k"),
            tok(&s, TokenKind::PropertyKey, "u"),
        );
        assert!(s.create_index(l, k, Some("rp_dropped_ix")).unwrap());
        assert!(s.create_rule(IndexKind::Uniqueness, l, &[u], Some("rp_dropped_uq")).unwrap());
        let v = tok(&s, TokenKind::PropertyKey, "v");
        assert!(s.create_index(l, v, Some("rp_kept_ix")).unwrap());
        s.await_indexes(None, Duration::from_secs(60)).unwrap();
        assert!(s.drop_index("rp_dropped_ix").unwrap());
        assert!(s.drop_constraint("rp_dropped_uq").unwrap());
        s.crash_for_test();
    }
    let s = Store::open(dir.path(), cfg()).unwrap();
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let names: Vec<String> = s.indexes().into_iter().map(|i| i.name).collect();
    assert_eq!(names, vec!["rp_kept_ix".to_string()]);
    let built = FILLED.lock().clone();
    assert!(built.contains(&"rp_kept_ix".to_string()), "{built:?}");
    assert!(!built.iter().any(|n| n.starts_with("rp_dropped")), "built a dropped rule: {built:?}");
}

#[test]
fn replayed_rules_populate_after_the_open_and_answer_as_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let ids;
    {
        let (s, all) = base_store(dir.path(), 5_000);
        let (l, k) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "k"));
        assert!(s.create_index(l, k, Some("pop_held_ix")).unwrap());
        s.await_indexes(None, Duration::from_secs(60)).unwrap();
        // Rows changed after the rule in the same tail.
        let mut w = s.begin(false);
        w.set_node_property(all[3], k, Value::Int(777)).unwrap();
        w.delete_node(all[4]).unwrap();
        w.commit().unwrap();
        ids = all;
        s.crash_for_test();
    }
    HOLD.lock().push("pop_held_ix".into());
    let s = Store::open(dir.path(), cfg()).unwrap();
    let (l, k) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "k"));
    assert_eq!(state(&s, "pop_held_ix"), "POPULATING");
    // Reads go on meanwhile, without the index.
    let r = s.begin(true);
    assert_eq!(r.index_seek(l, k, &Value::Int(777)), None);
    assert_eq!(scan_eq(&r, l, k, 777), vec![ids[3]]);
    drop(r);
    HOLD.lock().retain(|n| n != "pop_held_ix");
    s.await_indexes(Some("pop_held_ix"), Duration::from_secs(60)).unwrap();
    assert_eq!(state(&s, "pop_held_ix"), "ONLINE");
    let r = s.begin(true);
    assert_eq!(r.index_seek(l, k, &Value::Int(777)), Some(vec![ids[3]]));
    for v in [0, 4, 99] {
        assert_eq!(r.index_seek(l, k, &Value::Int(v)), Some(scan_eq(&r, l, k, v)), "k = {v}");
    }
}

#[test]
fn a_replayed_uniqueness_rule_rejects_a_duplicate_committed_while_it_fills() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (s, _) = base_store(dir.path(), 5_000);
        let (l, u) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "u"));
        assert!(s.create_rule(IndexKind::Uniqueness, l, &[u], Some("dup_held_uq")).unwrap());
        s.crash_for_test();
    }
    HOLD.lock().push("dup_held_uq".into());
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(state(&s, "dup_held_uq"), "POPULATING");
    let (l, u) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "u"));
    // A database opening on the store removes the commit observer it does not need: that
    // must not wait for the rule (the Bolt port opens after it).
    let (otx, orx) = crossbeam_channel::bounded(1);
    let opener = s.clone();
    std::thread::spawn(move || {
        opener.set_commit_observer(None);
        let _ = otx.send(());
    });
    assert!(orx.recv_timeout(Duration::from_secs(60)).is_ok(), "removing no observer waited");
    // A duplicate of a checkpointed row, which the still empty index does not hold.
    let (tx, rx) = crossbeam_channel::bounded(1);
    let writer = s.clone();
    let t = std::thread::spawn(move || {
        let mut w = writer.begin(false);
        let r = w.create_node(&[l], vec![(u, Value::Int(1234))]).and_then(|_| w.commit());
        let _ = tx.send(r);
    });
    // The commit waits for the rule (or, had it gone through, must have failed).
    if let Ok(r) = rx.recv_timeout(Duration::from_millis(300)) {
        let e = r.expect_err("a duplicate committed while the rule was filling");
        assert_eq!(e.status, Status::ConstraintValidationFailed);
    }
    HOLD.lock().retain(|n| n != "dup_held_uq");
    t.join().unwrap();
    if let Ok(r) = rx.try_recv() {
        let e = r.expect_err("a duplicate committed while the rule was filling");
        assert_eq!(e.status, Status::ConstraintValidationFailed);
    }
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let r = s.begin(true);
    assert_eq!(scan_eq(&r, l, u, 1234).len(), 1);
    drop(r);
    // A new key commits.
    let mut w = s.begin(false);
    w.create_node(&[l], vec![(u, Value::Int(-1))]).unwrap();
    w.commit().unwrap();
}

/// What `write` returns from a thread started while rule `name` is held POPULATING: nothing
/// may come back before the hold is released unless it is the answer the ONLINE rule gives.
fn while_held<T: Send + 'static>(
    s: &Store,
    name: &str,
    write: impl FnOnce(&Store) -> T + Send + 'static,
) -> T {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let writer = s.clone();
    let t = std::thread::spawn(move || {
        let _ = tx.send(write(&writer));
    });
    let early = rx.recv_timeout(Duration::from_millis(300)).ok();
    HOLD.lock().retain(|n| n != name);
    t.join().unwrap();
    early.or_else(|| rx.try_recv().ok()).unwrap()
}

#[test]
fn a_write_checks_a_replayed_uniqueness_rule_at_the_statement_as_when_online() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (s, _) = base_store(dir.path(), 5_000);
        let (l, u) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "u"));
        assert!(s.create_rule(IndexKind::Uniqueness, l, &[u], Some("stmt_held_uq")).unwrap());
        s.crash_for_test();
    }
    HOLD.lock().push("stmt_held_uq".into());
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(state(&s, "stmt_held_uq"), "POPULATING");
    let (l, u) = (tok(&s, TokenKind::Label, "L"), tok(&s, TokenKind::PropertyKey, "u"));
    // Seeks while it fills are not answered by the rule (the caller scans the label).
    let r = s.begin(true);
    assert_eq!(r.index_seek(l, u, &Value::Int(1234)), None);
    assert_eq!(scan_eq(&r, l, u, 1234).len(), 1);
    drop(r);
    // The duplicate fails at its statement, as against the ONLINE rule (not at commit).
    let held = while_held(&s, "stmt_held_uq", move |s| {
        let mut w = s.begin(false);
        let created = w.create_node(&[l], vec![(u, Value::Int(1234))]).map(|_| ());
        let fresh = w.create_node(&[l], vec![(u, Value::Int(-7))]).map(|_| ());
        (created, fresh, w.commit())
    });
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let e = held.0.expect_err("a duplicate passed its statement while the rule was filling");
    let mut w = s.begin(false);
    let online = w.create_node(&[l], vec![(u, Value::Int(1234))]).unwrap_err();
    drop(w);
    assert_eq!((e.status, e.message), (online.status, online.message));
    // A key no row has is written and commits.
    held.1.unwrap();
    held.2.unwrap();
    let r = s.begin(true);
    assert_eq!(r.index_seek(l, u, &Value::Int(-7)).map(|v| v.len()), Some(1));
    assert_eq!(scan_eq(&r, l, u, 1234).len(), 1);
}

#[test]
fn a_write_checks_a_replayed_relationship_uniqueness_rule_at_the_statement_as_when_online() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b);
    {
        let (s, ids) = base_store(dir.path(), 100);
        let (t, p) = (tok(&s, TokenKind::RelType, "T"), tok(&s, TokenKind::PropertyKey, "p"));
        let mut w = s.begin(false);
        for i in 0..50 {
            w.create_rel(ids[i], ids[i + 1], t, vec![(p, Value::Int(i as i64))]).unwrap();
        }
        w.commit().unwrap();
        s.checkpoint().unwrap();
        assert!(s
            .create_rel_constraint(IndexKind::Uniqueness, t, &[p], Some("rel_held_uq"))
            .unwrap());
        (a, b) = (ids[0], ids[1]);
        s.crash_for_test();
    }
    HOLD.lock().push("rel_held_uq".into());
    let s = Store::open(dir.path(), cfg()).unwrap();
    assert_eq!(state(&s, "rel_held_uq"), "POPULATING");
    let (t, p) = (tok(&s, TokenKind::RelType, "T"), tok(&s, TokenKind::PropertyKey, "p"));
    let held = while_held(&s, "rel_held_uq", move |s| {
        let mut w = s.begin(false);
        let created = w.create_rel(a, b, t, vec![(p, Value::Int(7))]).map(|_| ());
        let fresh = w.create_rel(a, b, t, vec![(p, Value::Int(-7))]).map(|_| ());
        (created, fresh, w.commit())
    });
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let e = held.0.expect_err("a duplicate passed its statement while the rule was filling");
    let mut w = s.begin(false);
    let online = w.create_rel(a, b, t, vec![(p, Value::Int(7))]).unwrap_err();
    drop(w);
    assert_eq!((e.status, e.message), (online.status, online.message));
    held.1.unwrap();
    held.2.unwrap();
}
