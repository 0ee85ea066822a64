//! Bounded breadth-first traversal (`TraversalDescription::memory_budget`): once the branch
//! arena is full, the traversal continues by iterative deepening. Whatever the budget, it must
//! produce the same paths in the same order as the unbounded arena, call the evaluator exactly
//! once per path and in the same order, honour maximum depth, pruning and path uniqueness, and
//! stop on exhausted traversals. Each case runs with budgets that switch before the start
//! branch, inside a level and at larger sizes, and compares against `usize::MAX` (arena only).

use std::cell::RefCell;

use arbor_engine::traversal::{
    Evaluation, OwnedPath, Path, TraversalDescription, Uniqueness, Workspace, DEFAULT_MEMORY_BUDGET,
};
use arbor_engine::{Database, Direction, Edge, NodeId, Tx, Value};

/// Budgets (bytes; 24 per branch) to compare against the unbounded arena.
const BUDGETS: &[usize] = &[0, 1, 24, 24 * 2, 24 * 5, 24 * 17, 24 * 100, 24 * 1000];

/// The traversal benchmark's tree at a small size: `:Root:A`, `:A -HAS_B-> :B -HAS_A-> :A`,
/// `levels` A->B->A levels with `fanout` children each, `value` true on every third node.
fn tree(db: &Database, levels: u32, fanout: usize) -> NodeId {
    db.write(|tx| {
        let mut n = 0i64;
        let mut next_value = || {
            n += 1;
            Value::Bool(n % 3 == 0)
        };
        let root = tx.create_node(&["Root", "A"], [("value", next_value())])?;
        let mut frontier = vec![root];
        for hop in 0..levels * 2 {
            let (label, ty) = if hop % 2 == 0 { ("B", "HAS_B") } else { ("A", "HAS_A") };
            let mut next = Vec::new();
            for &p in &frontier {
                for _ in 0..fanout {
                    let c = tx.create_node(&[label], [("value", next_value())])?;
                    tx.create_relationship(p, c, ty, [])?;
                    next.push(c);
                }
            }
            frontier = next;
        }
        Ok(root)
    })
    .unwrap()
}

/// Nine nodes with cycles, a self loop and parallel relationships.
fn cyclic(db: &Database) -> NodeId {
    db.write(|tx| {
        let ids: Vec<NodeId> = (0..9)
            .map(|i| tx.create_node(&["V"], [("i", Value::Int(i))]))
            .collect::<arbor_engine::Result<_>>()?;
        let edges = [
            (0, 1),
            (0, 2),
            (1, 3),
            (2, 3),
            (3, 0),
            (3, 4),
            (4, 5),
            (5, 3),
            (5, 5),
            (2, 6),
            (6, 7),
            (7, 2),
            (7, 2),
            (6, 8),
        ];
        for (s, e) in edges {
            tx.create_relationship(ids[s], ids[e], "E", [])?;
        }
        Ok(ids[0])
    })
    .unwrap()
}

/// Runs `td` from `start` in `ws`: the included paths in output order, and every path the
/// evaluator saw, in call order (`log` is the evaluator's record).
fn run<E, V>(
    td: &TraversalDescription<E, V>,
    tx: &Tx,
    start: NodeId,
    ws: &mut Workspace,
    log: &RefCell<Vec<OwnedPath>>,
) -> (Vec<OwnedPath>, Vec<OwnedPath>)
where
    E: arbor_engine::traversal::Expander,
    V: arbor_engine::traversal::Evaluator,
{
    log.borrow_mut().clear();
    let mut out = Vec::new();
    let mut t = td.traverse_in(tx, start, ws);
    while let Some(p) = t.next_path() {
        let owned = p.to_owned_path();
        // The lazily handed-out path is consistent while it is the current item.
        assert_eq!(owned.nodes.len(), p.length() + 1);
        assert_eq!(*owned.nodes.last().unwrap(), p.end_node().id());
        assert_eq!(p.last_relationship(), owned.rels.last().copied());
        assert_eq!(owned.nodes[0], start);
        assert!(owned.nodes.iter().all(|n| p.contains_node(*n)));
        assert!(owned.rels.iter().all(|r| p.contains_relationship(*r)));
        for (i, r) in owned.rels.iter().enumerate() {
            assert_eq!(tx.other_node(*r, owned.nodes[i]), Some(owned.nodes[i + 1]));
        }
        out.push(owned);
    }
    (out, log.borrow().clone())
}

/// Compares `td` under every budget with the arena-only run; returns the arena-only result
/// (included paths, evaluator calls).
fn compare<E, V>(
    what: &str,
    td: &TraversalDescription<E, V>,
    tx: &Tx,
    start: NodeId,
    log: &RefCell<Vec<OwnedPath>>,
) -> (Vec<OwnedPath>, Vec<OwnedPath>)
where
    E: arbor_engine::traversal::Expander + Clone,
    V: arbor_engine::traversal::Evaluator + Clone,
{
    let td = td.clone().breadth_first();
    // One workspace for all runs: reuse between arena and bounded runs must not leak state.
    let mut ws = Workspace::default();
    let (want, want_log) = run(&td.clone().memory_budget(usize::MAX), tx, start, &mut ws, log);
    assert!(!want.is_empty(), "{what}: a comparison of two empty answers proves nothing");
    // Breadth-first really is level by level.
    assert!(want.windows(2).all(|w| w[0].rels.len() <= w[1].rels.len()), "{what}");
    for &budget in BUDGETS.iter().chain([DEFAULT_MEMORY_BUDGET].iter()) {
        let (got, got_log) = run(&td.clone().memory_budget(budget), tx, start, &mut ws, log);
        assert_eq!(got, want, "{what}: budget {budget}: included paths or their order differ");
        assert_eq!(
            got_log, want_log,
            "{what}: budget {budget}: evaluator calls differ (each path exactly once, same order)"
        );
        // Counting without materializing paths agrees too.
        let n = td.clone().memory_budget(budget).traverse_in(tx, start, &mut ws).count_paths();
        assert_eq!(n as usize, want.len(), "{what}: budget {budget}: count_paths");
    }
    // The evaluator saw no path twice.
    let mut seen = want_log.clone();
    seen.sort_by(|a, b| (&a.nodes, &a.rels).cmp(&(&b.nodes, &b.rels)));
    seen.dedup();
    assert_eq!(seen.len(), want_log.len(), "{what}: a path was evaluated twice");
    (want, want_log)
}

#[test]
fn benchmark_tree_matches_the_arena() {
    let db = Database::in_memory();
    let root = tree(&db, 3, 4);
    let tx = db.begin_read().unwrap();
    let (a, b) = (tx.label("A").unwrap(), tx.label("B").unwrap());
    let (has_a, has_b) = (tx.rel_type("HAS_A").unwrap(), tx.rel_type("HAS_B").unwrap());
    let value = tx.property_key("value").unwrap();
    let log = RefCell::new(Vec::new());
    let td = TraversalDescription::new()
        .uniqueness(Uniqueness::None)
        .expand_with(move |path: &Path<'_>, out: &mut Vec<Edge>| {
            let end = path.end_node();
            if end.has_label(a) {
                end.relationships(Direction::Outgoing, &[has_b], out);
            } else if end.has_label(b) {
                end.relationships(Direction::Outgoing, &[has_a], out);
            }
        })
        .evaluate_with(|path: &Path<'_>| {
            log.borrow_mut().push(path.to_owned_path());
            let end = path.end_node();
            Evaluation::of_includes(
                end.has_label(b) && matches!(end.property(value), Some(Value::Bool(true))),
            )
        });
    let (got, calls) = compare("tree", &td, &tx, root, &log);
    // Every third node has value true; the :B ones are on odd levels.
    assert_eq!(got.len(), (4 + 4usize.pow(3) + 4usize.pow(5)) / 3);
    assert_eq!(calls.len(), (4usize.pow(7) - 1) / 3);
    // Max depth cuts the same way in both modes.
    for max in [0, 1, 2, 4, 5] {
        let limited = td.clone().max_depth(max);
        let all = compare_or_empty(&limited, &tx, root, &log);
        assert!(all.iter().all(|p| p.rels.len() <= max as usize), "max {max}");
        assert_eq!(log.borrow().len(), (4usize.pow(max + 1) - 1) / 3, "max {max}");
    }
}

/// Like `compare` with an evaluator that includes everything, for cases whose own evaluator may
/// include nothing: checks the evaluator calls and the paths seen.
fn compare_or_empty<E, V>(
    td: &TraversalDescription<E, V>,
    tx: &Tx,
    start: NodeId,
    log: &RefCell<Vec<OwnedPath>>,
) -> Vec<OwnedPath>
where
    E: arbor_engine::traversal::Expander + Clone,
    V: arbor_engine::traversal::Evaluator + Clone,
{
    let td = td.clone().breadth_first();
    let mut ws = Workspace::default();
    let (want, want_log) = run(&td.clone().memory_budget(usize::MAX), tx, start, &mut ws, log);
    for &budget in BUDGETS {
        let (got, got_log) = run(&td.clone().memory_budget(budget), tx, start, &mut ws, log);
        assert_eq!((&got, &got_log), (&want, &want_log), "budget {budget}");
    }
    want
}

#[test]
fn cycles_with_path_uniqueness_pruning_and_exclusion() {
    let db = Database::in_memory();
    let start = cyclic(&db);
    let tx = db.begin_read().unwrap();
    let e = tx.rel_type("E").unwrap();
    let log = RefCell::new(Vec::new());
    // Excludes paths ending on a node whose id is 2 modulo 3; prunes paths whose id plus
    // length is 3 modulo 4 (so pruned paths may still be included and vice versa).
    let evaluator = |path: &Path<'_>| {
        log.borrow_mut().push(path.to_owned_path());
        let id = path.end_node().id().0;
        Evaluation::of(id % 3 != 2, (id + path.length() as u64) % 4 != 3)
    };
    let include_all = |path: &Path<'_>| {
        log.borrow_mut().push(path.to_owned_path());
        Evaluation::IncludeAndContinue
    };
    for dir in [Direction::Outgoing, Direction::Both] {
        let base = TraversalDescription::new().relationships(e, dir);
        for u in [Uniqueness::NodePath, Uniqueness::RelationshipPath, Uniqueness::None] {
            let base = base.clone().uniqueness(u);
            // Without uniqueness the cycles need a depth limit; relationship-path trails over
            // both directions are many, so they get one too.
            let base = match (u, dir) {
                (Uniqueness::NodePath, _) => base,
                (Uniqueness::RelationshipPath, Direction::Outgoing) => base,
                _ => base.max_depth(6),
            };
            let what = format!("{u:?} {dir:?}");
            let (all, _) =
                compare(&what, &base.clone().evaluate_with(include_all), &tx, start, &log);
            let (pruned, calls) =
                compare(&what, &base.clone().evaluate_with(evaluator), &tx, start, &log);
            // Pruning stopped some paths from being reached at all.
            assert!(calls.len() < all.len(), "{what}");
            // The evaluator's answers matter (else this would test nothing).
            assert!(pruned.len() < all.len(), "{what}");
            assert!(pruned.iter().all(|p| p.nodes.last().unwrap().0 % 3 != 2), "{what}");
            // Uniqueness holds in the included paths.
            for p in &all {
                match u {
                    Uniqueness::NodePath => {
                        let mut n = p.nodes.clone();
                        n.sort();
                        n.dedup();
                        assert_eq!(n.len(), p.nodes.len(), "{what}: {p:?}");
                    }
                    Uniqueness::RelationshipPath => {
                        let mut r = p.rels.clone();
                        r.sort();
                        r.dedup();
                        assert_eq!(r.len(), p.rels.len(), "{what}: {p:?}");
                    }
                    _ => assert!(p.rels.len() <= 6),
                }
            }
        }
    }
}

#[test]
fn global_uniqueness_ignores_the_budget() {
    let db = Database::in_memory();
    let start = cyclic(&db);
    let tx = db.begin_read().unwrap();
    let e = tx.rel_type("E").unwrap();
    let log = RefCell::new(Vec::new());
    for u in [Uniqueness::NodeGlobal, Uniqueness::RelationshipGlobal] {
        let td = TraversalDescription::new()
            .relationships(e, Direction::Both)
            .uniqueness(u)
            .evaluate_with(|path: &Path<'_>| {
                log.borrow_mut().push(path.to_owned_path());
                Evaluation::IncludeAndContinue
            });
        let (got, _) = compare(&format!("{u:?}"), &td, &tx, start, &log);
        assert_eq!(got.len(), if u == Uniqueness::NodeGlobal { 9 } else { 15 }, "{u:?}");
    }
}

#[test]
fn exhausted_and_empty_traversals_stop() {
    let db = Database::in_memory();
    let (lonely, start) = db
        .write(|tx| {
            let lonely = tx.create_node(&["L"], [])?;
            let a = tx.create_node(&["L"], [])?;
            let b = tx.create_node(&["L"], [])?;
            tx.create_relationship(a, b, "E", [])?;
            tx.create_relationship(b, a, "E", [])?;
            Ok((lonely, a))
        })
        .unwrap();
    let tx = db.begin_read().unwrap();
    let mut ws = Workspace::default();
    for budget in BUDGETS.iter().copied().chain([usize::MAX]) {
        let td = TraversalDescription::new()
            .relationships(tx.rel_type("E").unwrap(), Direction::Outgoing)
            .breadth_first()
            .uniqueness(Uniqueness::None)
            .memory_budget(budget);
        // No relationships: the start path only.
        assert_eq!(td.traverse_in(&tx, lonely, &mut ws).count(), 1, "budget {budget}");
        // The start excluded and pruned: nothing, and no endless re-walk.
        let none = td.clone().evaluate_with(|_: &Path<'_>| Evaluation::ExcludeAndPrune);
        assert_eq!(none.traverse_in(&tx, start, &mut ws).count(), 0, "budget {budget}");
        // A two-node cycle without uniqueness, pruned at length 3: one path per length 0..=3,
        // then every path is pruned and the traversal must end.
        let cut = td.clone().evaluate_with(|p: &Path<'_>| Evaluation::of_continues(p.length() < 3));
        assert_eq!(cut.traverse_in(&tx, start, &mut ws).count(), 4, "budget {budget}");
    }
}

#[test]
fn bounded_workspace_stays_small() {
    let db = Database::in_memory();
    let root = tree(&db, 4, 4);
    let tx = db.begin_read().unwrap();
    let td = TraversalDescription::new()
        .relationships(tx.rel_type("HAS_A").unwrap(), Direction::Outgoing)
        .relationships(tx.rel_type("HAS_B").unwrap(), Direction::Outgoing)
        .uniqueness(Uniqueness::None)
        .breadth_first();
    let nodes = (4u64.pow(9) - 1) / 3;
    let mut arena = Workspace::default();
    assert_eq!(
        td.clone().memory_budget(usize::MAX).traverse_in(&tx, root, &mut arena).count_paths(),
        nodes
    );
    assert!(arena.capacity_bytes() >= nodes as usize * 24, "{}", arena.capacity_bytes());
    let mut bounded = Workspace::default();
    assert_eq!(td.traverse_in(&tx, root, &mut bounded).count_paths(), nodes);
    assert!(
        bounded.capacity_bytes() <= DEFAULT_MEMORY_BUDGET + (64 << 10),
        "{} bytes",
        bounded.capacity_bytes()
    );
}
