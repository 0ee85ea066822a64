//! Scenario tests of the compact base under the versioned delta: updates and deletes of base
//! entities, relationships added to base nodes, snapshot isolation across a base rebuild,
//! indexes and constraints over base rows, and crashes after a rebuild.

use std::time::Duration;

use super::*;

fn cfg() -> StoreConfig {
    StoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_wal_bytes: u64::MAX,
        ..StoreConfig::default()
    }
}

struct Ids {
    user: TokenId,
    other: TokenId,
    name: TokenId,
    age: TokenId,
    knows: TokenId,
    likes: TokenId,
}

fn tokens(s: &Store) -> Ids {
    Ids {
        user: s.get_or_create_token(TokenKind::Label, "User").unwrap(),
        other: s.get_or_create_token(TokenKind::Label, "Other").unwrap(),
        name: s.get_or_create_token(TokenKind::PropertyKey, "name").unwrap(),
        age: s.get_or_create_token(TokenKind::PropertyKey, "age").unwrap(),
        knows: s.get_or_create_token(TokenKind::RelType, "KNOWS").unwrap(),
        likes: s.get_or_create_token(TokenKind::RelType, "LIKES").unwrap(),
    }
}

/// A ring of `n` users (`i -> i+1` KNOWS) plus a LIKES from 0 to every other node.
fn ring(s: &Store, t: &Ids, n: u64) -> (Vec<NodeId>, Vec<RelId>) {
    let mut w = s.begin(false);
    let nodes: Vec<NodeId> = (0..n)
        .map(|i| {
            let g = if i % 2 == 0 { "even" } else { "odd" };
            w.create_node(&[t.user], vec![(t.name, Value::str(g)), (t.age, Value::Int(i as i64))])
                .unwrap()
        })
        .collect();
    let mut rels = Vec::new();
    for i in 0..n {
        let j = (i + 1) % n;
        rels.push(w.create_rel(nodes[i as usize], nodes[j as usize], t.knows, vec![]).unwrap());
    }
    for i in 1..n {
        rels.push(
            w.create_rel(nodes[0], nodes[i as usize], t.likes, vec![(t.age, Value::Float(0.5))])
                .unwrap(),
        );
    }
    w.commit().unwrap();
    (nodes, rels)
}

fn age(tx: &Transaction, n: NodeId, k: TokenId) -> Option<i64> {
    match tx.node_property(n, k) {
        Some(Value::Int(i)) => Some(i),
        _ => None,
    }
}

fn edges(tx: &Transaction, n: NodeId, dir: Direction, types: &[TokenId]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    tx.node_edges(n, dir, types, &mut out);
    let mut v: Vec<(u64, u64)> = out.iter().map(|e| (e.rel.0, e.other.0)).collect();
    v.sort_unstable();
    v
}

#[test]
fn base_rows_read_like_versions_and_take_updates() {
    let s = Store::in_memory();
    let t = tokens(&s);
    let (n, r) = ring(&s, &t, 10);
    assert!(s.compact().unwrap());
    let st = s.memory_stats();
    assert_eq!((st.base.nodes, st.base.relationships, st.base.node_properties), (10, 19, 20));
    assert_eq!((st.delta_nodes, st.delta_rels), (0, 0), "the delta folded into the base");
    assert!(!s.compact().unwrap(), "nothing new to compact");

    let before = s.begin(true);
    assert_eq!(age(&before, n[3], t.age), Some(3));
    assert_eq!(
        before.node_property(n[3], t.name).map(|v| format!("{v:?}")),
        Some(format!("{:?}", Value::str("odd")))
    );
    assert_eq!(before.rel_info(r[3]), Some((n[3], n[4], t.knows)));
    assert!(matches!(before.rel_property(r[12], t.age), Some(Value::Float(f)) if f == 0.5));
    assert_eq!(edges(&before, n[0], Direction::Outgoing, &[t.knows]), vec![(r[0].0, n[1].0)]);
    assert_eq!(before.degree(n[0], Direction::Both, &[]), 11);
    assert_eq!(before.count_nodes(Some(t.user)), 10);

    // Update, relabel, delete and connect base rows.
    let mut w = s.begin(false);
    w.set_node_property(n[3], t.age, Value::Int(33)).unwrap();
    w.add_label(n[4], t.other).unwrap();
    w.remove_label(n[5], t.user).unwrap();
    w.delete_rel(r[5]).unwrap(); // 5 -> 6
    w.delete_rel(r[4]).unwrap(); // 4 -> 5
    w.delete_rel(r[10 + 4]).unwrap(); // 0 -> 5 LIKES
    w.delete_node(n[5]).unwrap();
    let fresh = w.create_rel(n[3], n[7], t.likes, vec![]).unwrap();
    w.set_rel_property(r[7], t.name, Value::str("x")).unwrap();
    w.commit().unwrap();

    let after = s.begin(true);
    for tx in [&after, &before] {
        let new = std::ptr::eq(tx, &after);
        assert_eq!(age(tx, n[3], t.age), Some(if new { 33 } else { 3 }));
        assert_eq!(tx.node_has_label(n[4], t.other), new);
        assert_eq!(tx.node_exists(n[5]), !new);
        assert_eq!(tx.rel_exists(r[5]), !new);
        assert_eq!(tx.rel_exists(fresh), new);
        assert_eq!(tx.rel_property(r[7], t.name).is_some(), new);
        let out3 = edges(tx, n[3], Direction::Outgoing, &[]);
        assert_eq!(out3.len(), if new { 2 } else { 1 });
        assert_eq!(tx.count_nodes(Some(t.user)), if new { 9 } else { 10 });
        assert_eq!(tx.count_nodes(Some(t.other)), u64::from(new));
        let mut users = Vec::new();
        let mut cur = NodeId(0);
        while let Some(x) = tx.next_node(Some(t.user), cur) {
            users.push(x.0);
            cur = NodeId(x.0 + 1);
        }
        assert_eq!(users.contains(&n[5].0), !new);
        let likes_from_3 = tx.next_rel(&[t.likes], RelId(0)).map(|x| x.0);
        assert_eq!(likes_from_3, Some(r[10].0));
    }
    // A rebuild while `before` is open: both keep their views, and the next one folds.
    assert!(s.compact().unwrap());
    assert_eq!(age(&before, n[3], t.age), Some(3));
    assert!(before.node_exists(n[5]));
    assert_eq!(edges(&before, n[4], Direction::Outgoing, &[]), vec![(r[4].0, n[5].0)]);
    let post = s.begin(true);
    assert_eq!(age(&post, n[3], t.age), Some(33));
    assert_eq!(
        edges(&post, n[3], Direction::Outgoing, &[]),
        vec![(r[3].0, n[4].0), (fresh.0, n[7].0)]
    );
    assert!(s.memory_stats().delta_nodes > 0, "an old snapshot pins the delta");
    drop((before, after, post));
    s.gc();
    let st = s.memory_stats();
    assert_eq!((st.delta_nodes, st.delta_rels), (0, 0), "folded once nobody reads the old base");
    assert_eq!((st.base.nodes, st.base.relationships), (9, 17));
    let r2 = s.begin(true);
    assert_eq!(age(&r2, n[3], t.age), Some(33));
    assert!(!r2.node_exists(n[5]));
    assert_eq!(r2.count_nodes(None), 9);
}

#[test]
fn conflicts_and_deletes_against_base_rows() {
    let s = Store::in_memory();
    let t = tokens(&s);
    let (n, r) = ring(&s, &t, 4);
    s.compact().unwrap();
    let mut a = s.begin(false);
    let mut b = s.begin(false);
    a.set_node_property(n[1], t.age, Value::Int(100)).unwrap();
    b.set_node_property(n[1], t.age, Value::Int(200)).unwrap();
    a.commit().unwrap();
    assert_eq!(b.commit().unwrap_err().status, Status::TransactionOutdated);
    // A base node with base relationships cannot be deleted...
    let mut w = s.begin(false);
    assert_eq!(w.delete_node(n[2]).unwrap_err().status, Status::DeleteNodeWithRelationships);
    drop(w);
    // ...nor can a concurrent transaction delete it after its relationships are gone while
    // another one connects it.
    let mut del = s.begin(false);
    for rel in [r[1], r[2], r[4 + 1]] {
        del.delete_rel(rel).unwrap();
    }
    del.delete_node(n[2]).unwrap();
    let mut add = s.begin(false);
    add.create_rel(n[3], n[2], t.knows, vec![]).unwrap();
    add.commit().unwrap();
    assert_eq!(del.commit().unwrap_err().status, Status::TransactionOutdated);
}

#[test]
fn indexes_and_constraints_cover_base_rows() {
    let s = Store::in_memory();
    let t = tokens(&s);
    let (n, _) = ring(&s, &t, 6);
    s.compact().unwrap();
    // Created after the base: built from the base rows.
    assert!(s.create_index(t.user, t.age, None).unwrap());
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    let r = s.begin(true);
    assert_eq!(r.index_seek(t.user, t.age, &Value::Float(4.0)), Some(vec![n[4]]));
    drop(r);
    let mut w = s.begin(false);
    w.set_node_property(n[4], t.age, Value::Int(40)).unwrap();
    w.commit().unwrap();
    for round in 0..2 {
        let r = s.begin(true);
        assert_eq!(r.index_seek(t.user, t.age, &Value::Int(4)), Some(vec![]), "round {round}");
        assert_eq!(r.index_seek(t.user, t.age, &Value::Int(40)), Some(vec![n[4]]));
        assert_eq!(r.index_seek(t.user, t.age, &Value::Int(2)), Some(vec![n[2]]));
        drop(r);
        // Now the base carries the index.
        s.compact().unwrap();
    }
    // Duplicate names in the base: the constraint cannot be created.
    let e = s.create_unique_constraint(t.user, t.name, None).unwrap_err();
    assert_eq!(e.status, Status::ConstraintCreationFailed);
    // Neo4j refuses a constraint where an index on the same schema exists.
    let e = s.create_unique_constraint(t.user, t.age, None).unwrap_err();
    assert_eq!(e.status, Status::IndexAlreadyExists);
    let name = s.indexes().into_iter().find(|i| i.properties == [t.age]).unwrap().name;
    assert!(s.drop_index(&name).unwrap());
    assert!(s.create_unique_constraint(t.user, t.age, None).unwrap());
    let mut w = s.begin(false);
    let e = w.create_node(&[t.user], vec![(t.age, Value::Int(2))]).unwrap_err();
    assert_eq!(e.status, Status::ConstraintValidationFailed);
    w.create_node(&[t.user], vec![(t.age, Value::Int(4))]).unwrap();
    w.commit().unwrap();
}

#[test]
fn checkpoint_rebuilds_and_recovery_restores_base_plus_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (n, r, extra);
    {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let t = tokens(&s);
        (n, r) = ring(&s, &t, 8);
        s.create_index(t.user, t.age, None).unwrap();
        s.checkpoint().unwrap();
        assert_eq!(s.memory_stats().base.relationships, 15);
        let mut w = s.begin(false);
        w.set_node_property(n[2], t.age, Value::Int(-2)).unwrap();
        w.delete_rel(r[0]).unwrap();
        extra = w.create_rel(n[2], n[5], t.likes, vec![]).unwrap();
        w.commit().unwrap();
        s.crash_for_test();
    }
    for round in 0..3 {
        let s = Store::open(dir.path(), cfg()).unwrap();
        let t = tokens(&s);
        let tx = s.begin(true);
        assert_eq!(age(&tx, n[2], t.age), Some(-2), "round {round}");
        assert!(!tx.rel_exists(r[0]));
        assert_eq!(tx.rel_info(extra), Some((n[2], n[5], t.likes)));
        assert_eq!(
            edges(&tx, n[5], Direction::Incoming, &[t.likes]),
            vec![(r[8 + 4].0, n[0].0), (extra.0, n[2].0)]
        );
        assert_eq!(tx.index_seek(t.user, t.age, &Value::Int(-2)), Some(vec![n[2]]));
        assert_eq!(tx.index_seek(t.user, t.age, &Value::Int(2)), Some(vec![]));
        assert_eq!(tx.count_nodes(None), 8);
        drop(tx);
        match round {
            0 => s.crash_for_test(), // replay the WAL again
            1 => {
                s.checkpoint().unwrap(); // everything in the base, then crash
                assert_eq!(s.memory_stats().delta_rels, 0);
                s.crash_for_test();
            }
            _ => s.close().unwrap(),
        }
    }
}

#[test]
fn unsorted_creation_order_builds_a_general_csr() {
    let s = Store::in_memory();
    let t = tokens(&s);
    let mut w = s.begin(false);
    let n: Vec<NodeId> = (0..5).map(|_| w.create_node(&[], vec![]).unwrap()).collect();
    let pairs = [(4, 0), (1, 2), (4, 4), (0, 3), (2, 1), (4, 1)];
    let r: Vec<RelId> =
        pairs.iter().map(|(a, b)| w.create_rel(n[*a], n[*b], t.knows, vec![]).unwrap()).collect();
    w.commit().unwrap();
    s.compact().unwrap();
    let tx = s.begin(true);
    for (i, (a, b)) in pairs.iter().enumerate() {
        assert_eq!(tx.rel_info(r[i]), Some((n[*a], n[*b], t.knows)));
    }
    assert_eq!(
        edges(&tx, n[4], Direction::Outgoing, &[]),
        vec![(r[0].0, 0), (r[2].0, 4), (r[5].0, 1)]
    );
    assert_eq!(tx.degree(n[4], Direction::Both, &[]), 3, "a self-loop counts once with Both");
    assert_eq!(edges(&tx, n[1], Direction::Incoming, &[]), vec![(r[4].0, 2), (r[5].0, 4)]);
}

#[test]
fn check_reports_healthy_stores_and_damaged_files() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path(), cfg()).unwrap();
    let t = tokens(&s);
    let (n, _) = ring(&s, &t, 6);
    s.create_index(t.user, t.age, None).unwrap();
    // It populates in the background; the counts below are of the complete index.
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    s.checkpoint().unwrap();
    let mut w = s.begin(false);
    w.set_node_property(n[1], t.age, Value::Int(10)).unwrap();
    w.create_rel(n[1], n[1], t.knows, vec![]).unwrap();
    w.commit().unwrap();
    let r = s.check().unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
    assert_eq!((r.nodes, r.relationships, r.index_entries), (6, 12, 6));
    assert!(r.checkpoint.is_some() && r.wal_records >= 1);
    s.close().unwrap();

    // Flip a byte in the middle of the checkpoint: reported, not a panic or an error.
    let ck = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|f| f.to_string_lossy().starts_with("checkpoint-")))
        .unwrap();
    let good = std::fs::read(&ck).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    let s = Store::open(dir.path(), cfg()).unwrap();
    std::fs::write(&ck, &bad).unwrap();
    let r = s.check().unwrap();
    assert!(r.problems.iter().any(|p| p.contains("checksum")), "{:?}", r.problems);
    std::fs::write(&ck, &good).unwrap();
    assert!(s.check().unwrap().is_ok());
    drop(s);
}

#[test]
fn check_finds_an_index_that_misses_a_node() {
    let s = Store::in_memory();
    let t = tokens(&s);
    let (n, _) = ring(&s, &t, 3);
    s.create_index(t.user, t.age, None).unwrap();
    s.await_indexes(None, Duration::from_secs(60)).unwrap();
    assert!(s.check().unwrap().is_ok());
    // Damage the in-memory index behind the store's back.
    s.core_for_test().schema().write().maps.clear();
    s.core_for_test().schema().write().maps.insert((t.user, vec![t.age]), Default::default());
    let r = s.check().unwrap();
    assert!(!r.is_ok());
    assert!(r.problems.iter().any(|p| p.contains(&format!("node {}", n[0].0))), "{:?}", r.problems);
}

/// Batch property reads answer exactly what `node_property` answers, from the base's integer
/// column for clean rows (built once, counted in memory stats) and from the versions for
/// updated, deleted, new and own-written nodes; a key with a non-integer base value has no
/// column and is read from the blobs.
#[test]
fn batch_property_reads_match_single_reads() {
    let s = Store::in_memory();
    let t = tokens(&s);
    let (n, _) = ring(&s, &t, 300);
    let mut w = s.begin(false);
    w.set_node_property(n[7], t.age, Value::Null).unwrap();
    let lone = w.create_node(&[t.user], vec![(t.age, Value::Int(77))]).unwrap();
    w.commit().unwrap();
    assert!(s.compact().unwrap());
    let empty = s.memory_stats().base.index_bytes;

    let mut w = s.begin(false);
    w.set_node_property(n[3], t.age, Value::Float(2.5)).unwrap();
    w.set_node_property(n[4], t.age, Value::str("x")).unwrap();
    w.delete_node(lone).unwrap();
    let fresh = w.create_node(&[t.user], vec![(t.age, Value::Int(-4))]).unwrap();
    w.commit().unwrap();

    let mut own = s.begin(false);
    own.set_node_property(n[9], t.age, Value::Int(1000)).unwrap();
    own.set_node_property(n[10], t.age, Value::Null).unwrap();
    for tx in [&s.begin(true), &own] {
        let mut ids = Vec::new();
        tx.next_nodes(Some(t.user), NodeId(0), 1000, &mut ids);
        assert!(ids.contains(&fresh) && !ids.contains(&lone));
        for key in [t.age, t.name] {
            let mut batch = Vec::new();
            tx.node_property_batch(&ids, key, &mut batch);
            let single: Vec<Value> =
                ids.iter().map(|id| tx.node_property(*id, key).unwrap_or(Value::Null)).collect();
            assert_eq!(format!("{batch:?}"), format!("{single:?}"));
        }
    }
    let own_ages = {
        let mut b = Vec::new();
        own.node_property_batch(&[n[8], n[9], n[10], fresh], t.age, &mut b);
        format!("{b:?}")
    };
    assert_eq!(
        own_ages,
        format!("{:?}", [Value::Int(8), Value::Int(1000), Value::Null, Value::Int(-4)])
    );
    // `age` (0..=299, 301 base rows) got a column of two bytes per node, `name` (strings)
    // none.
    let st = s.memory_stats().base.index_bytes - empty;
    assert_eq!(st, 2 * 301);
}

/// `node_int_gather` answers exactly what `node_property` answers (as integers and presence)
/// for clean base rows read as one run or scattered, and stays typed (`true`) across a delta
/// of integer updates, removals, deletions and new nodes, another transaction's uncommitted
/// writes and the reader's own writes; a visible non-integer value makes it refuse the batch
/// that holds it, and only that one.
#[test]
fn int_gather_matches_single_reads_under_versions() {
    let s = Store::in_memory();
    let t = tokens(&s);
    let (n, _) = ring(&s, &t, 300);
    let mut w = s.begin(false);
    let lone = w.create_node(&[t.user], vec![(t.age, Value::Int(5))]).unwrap();
    w.commit().unwrap();
    assert!(s.compact().unwrap());
    let check = |tx: &Transaction, ids: &[NodeId], what: &str| -> bool {
        let (mut vals, mut present) = (vec![-1], vec![true]);
        if !tx.node_int_gather(ids, t.age, &mut vals, &mut present) {
            assert_eq!((vals.len(), present.len()), (1, 1), "{what}: appended on refusal");
            return false;
        }
        for (i, id) in ids.iter().enumerate() {
            let want = age(tx, *id, t.age);
            assert_eq!(present[i + 1], want.is_some(), "{what}: presence of {id:?}");
            assert_eq!(vals[i + 1], want.unwrap_or(0), "{what}: value of {id:?}");
        }
        true
    };
    let scan = |tx: &Transaction| {
        let mut ids = Vec::new();
        tx.next_nodes(Some(t.user), NodeId(0), 1000, &mut ids);
        ids
    };
    let clean = s.begin(true);
    assert!(check(&clean, &scan(&clean), "clean run"));
    let odd: Vec<NodeId> = n.iter().copied().filter(|id| id.0 % 3 == 1).collect();
    assert!(check(&clean, &odd, "clean scattered"));

    let mut w = s.begin(false);
    w.set_node_property(n[3], t.age, Value::Int(-33)).unwrap();
    w.set_node_property(n[4], t.age, Value::Null).unwrap();
    w.delete_node(lone).unwrap();
    let fresh = w.create_node(&[t.user], vec![(t.age, Value::Int(1 << 40))]).unwrap();
    w.create_node(&[t.user], vec![]).unwrap();
    w.commit().unwrap();
    let mut other = s.begin(false);
    other.set_node_property(n[6], t.age, Value::Int(600)).unwrap();
    other.create_node(&[t.user], vec![(t.age, Value::Int(9))]).unwrap();
    let mut own = s.begin(false);
    own.set_node_property(n[8], t.age, Value::Int(800)).unwrap();
    own.set_node_property(n[9], t.age, Value::Null).unwrap();
    own.create_node(&[t.user], vec![(t.age, Value::Int(-1))]).unwrap();
    for (tx, what) in [(&s.begin(true), "delta"), (&own, "own writes")] {
        let ids = scan(tx);
        assert!(ids.contains(&fresh) && !ids.contains(&lone), "{what}");
        assert!(check(tx, &ids, what), "{what}: integer changes stay typed");
        assert!(check(tx, &odd, what), "{what} scattered");
    }
    assert!(check(&clean, &scan(&clean), "old snapshot"));
    assert_eq!(age(&own, n[3], t.age), Some(-33));

    own.set_node_property(n[200], t.age, Value::Float(0.5)).unwrap();
    assert!(!check(&own, &scan(&own), "a float"));
    assert!(check(&own, &n[..100], "a batch without the float"));
    other.rollback();
}

/// Scans count the rows they read from the delta (nodes past the base, base rows with a
/// delta version) for the maintenance thread's early fold, and nothing once the delta is
/// folded; a clean base row never counts.
#[test]
fn scans_count_the_delta_rows_they_read() {
    let s = Store::in_memory();
    let t = tokens(&s);
    let core = s.core_for_test().clone();
    let (n, _) = ring(&s, &t, 300);
    // The delta rows one scan adds to the store's count, and the rows it found.
    let scan = |label: Option<TokenId>| {
        let before = core.delta_reads();
        let tx = s.begin(true);
        let mut ids = Vec::new();
        tx.next_nodes(label, NodeId(0), 1000, &mut ids);
        (core.delta_reads() - before, ids.len())
    };
    assert_eq!(scan(Some(t.user)), (300, 300), "every row is in the delta");
    assert_eq!(scan(None), (300, 300), "unlabelled scan");
    assert!(s.compact().unwrap());
    assert_eq!(scan(Some(t.user)), (0, 300), "folded: all base rows");
    assert_eq!(scan(None), (0, 300));
    let mut w = s.begin(false);
    w.set_node_property(n[3], t.age, Value::Int(-3)).unwrap();
    w.create_node(&[t.user], vec![]).unwrap();
    w.commit().unwrap();
    assert_eq!(scan(Some(t.user)), (2, 301), "one updated base row and one new node");
    assert_eq!(scan(None), (2, 301));
}

/// `NodeHandle::edges_into` (the traversal hot path, with loops specialised per column
/// representation) must list exactly what `for_each_edge` lists, in the same order, for every
/// direction and type filter, on a clean base and once the delta shadows it; and both must
/// agree with the relationships' own endpoints.
#[test]
fn edges_into_matches_for_each_edge() {
    // Two layouts: one type created in start-node order (constant type column), and three
    // types created out of order with a hub and self-loops (general columns).
    for mixed in [false, true] {
        let s = Store::in_memory();
        let t = tokens(&s);
        let third = s.get_or_create_token(TokenKind::RelType, "THIRD").unwrap();
        let types = [t.knows, t.likes, third];
        let mut w = s.begin(false);
        let n: Vec<NodeId> = (0..40).map(|_| w.create_node(&[t.user], vec![]).unwrap()).collect();
        let mut rels = Vec::new();
        if mixed {
            for i in 0..120u64 {
                let (a, b) = ((i * 7 + 3) % 40, (i * 13) % 40);
                let (a, b) = if i % 5 == 0 { (0, b) } else { (a, b) }; // node 0 is a hub
                let ty = types[(i % 3) as usize];
                rels.push(w.create_rel(n[a as usize], n[b as usize], ty, vec![]).unwrap());
            }
            rels.push(w.create_rel(n[0], n[0], t.knows, vec![]).unwrap());
        } else {
            for a in 0..40u64 {
                for k in 1..4u64 {
                    let b = (a + k) % 40;
                    rels.push(w.create_rel(n[a as usize], n[b as usize], t.knows, vec![]).unwrap());
                }
            }
        }
        w.commit().unwrap();
        s.compact().unwrap();
        let filters: Vec<Vec<TokenId>> = vec![
            vec![],
            vec![t.knows],
            vec![t.likes],
            vec![t.knows, third],
            vec![t.knows, t.likes, third],
            vec![t.user + 1000],
        ];
        let check = |tx: &Transaction, rels: &[RelId], what: &str| {
            for node in &n {
                for dir in [Direction::Outgoing, Direction::Incoming, Direction::Both] {
                    for f in &filters {
                        let mut streamed = Vec::new();
                        tx.for_each_edge(*node, dir, f, |e| streamed.push(e));
                        let mut into = vec![Edge { rel: RelId(7), other: NodeId(7), dir }];
                        tx.node_handle(*node).edges_into(dir, f, &mut into);
                        assert_eq!(into.remove(0).rel, RelId(7), "edges_into only appends");
                        assert_eq!(into, streamed, "{what}: node {node:?} {dir:?} {f:?}");
                        // The oracle: every visible relationship at the node, by endpoints.
                        let mut want: Vec<(u64, u64)> = Vec::new();
                        for r in rels {
                            let Some((a, b, ty)) = tx.rel_info(*r) else { continue };
                            if !f.is_empty() && !f.contains(&ty) {
                                continue;
                            }
                            let out = a == *node && dir != Direction::Incoming;
                            let inc = b == *node && dir != Direction::Outgoing;
                            if out {
                                want.push((r.0, b.0));
                            } else if inc {
                                want.push((r.0, a.0));
                            }
                        }
                        let mut got: Vec<(u64, u64)> =
                            streamed.iter().map(|e| (e.rel.0, e.other.0)).collect();
                        got.sort_unstable();
                        want.sort_unstable();
                        assert_eq!(got, want, "{what}: node {node:?} {dir:?} {f:?}");
                    }
                }
            }
        };
        check(&s.begin(true), &rels, "clean base");
        // Shadow the base: a node updated, a relationship deleted, one added.
        let mut w = s.begin(false);
        w.set_node_property(n[1], t.age, Value::Int(1)).unwrap();
        w.delete_rel(rels[2]).unwrap();
        rels.push(w.create_rel(n[1], n[0], t.likes, vec![]).unwrap());
        check(&w, &rels, "own writes");
        w.commit().unwrap();
        check(&s.begin(true), &rels, "delta over the base");
    }
}

/// As `edges_into_matches_for_each_edge`, with ids past 65,535 so that the neighbour and
/// relationship columns are u32 slices (relationship ids in CSR order, or not).
#[test]
fn edges_into_matches_for_each_edge_on_wide_columns() {
    const N: u64 = 70_000;
    for interleaved in [true, false] {
        let s = Store::in_memory();
        let t = tokens(&s);
        let mut w = s.begin(false);
        let n: Vec<NodeId> = (0..N).map(|_| w.create_node(&[], vec![]).unwrap()).collect();
        let link = |w: &mut Transaction, i: u64, ty: TokenId| {
            let b = if ty == t.knows { (i + 1) % N } else { (i * 7 + 1) % N };
            w.create_rel(n[i as usize], n[b as usize], ty, vec![]).unwrap();
        };
        if interleaved {
            // Relationship ids follow the CSR: a sequence column.
            for i in 0..N {
                link(&mut w, i, t.knows);
                link(&mut w, i, t.likes);
            }
        } else {
            for i in 0..N {
                link(&mut w, i, t.knows);
            }
            for i in 0..N {
                link(&mut w, i, t.likes);
            }
        }
        w.commit().unwrap();
        s.compact().unwrap();
        let tx = s.begin(true);
        for i in (0..N).step_by(997).chain([1, 7, N - 1]) {
            for dir in [Direction::Outgoing, Direction::Incoming, Direction::Both] {
                for f in [vec![], vec![t.knows], vec![t.likes], vec![t.knows, t.likes]] {
                    let mut streamed = Vec::new();
                    tx.for_each_edge(n[i as usize], dir, &f, |e| streamed.push(e));
                    let mut into = Vec::new();
                    tx.node_handle(n[i as usize]).edges_into(dir, &f, &mut into);
                    assert_eq!(into, streamed, "node {i} {dir:?} {f:?}");
                    if dir == Direction::Outgoing {
                        // One KNOWS and one LIKES out of every node.
                        let want = if f.len() == 1 { 1 } else { 2 };
                        assert_eq!(into.len(), want, "node {i} {f:?}");
                    }
                }
            }
        }
    }
}
