//! The traversal tree's hot paths against a reference count: the native traversal framework
//! (depth-first and breadth-first, one path built per step for the evaluator and the expander,
//! relationships through `NodeRef::relationships` with no, one or several types) and Cypher's
//! variable-length `count(b)` / `count(DISTINCT b)` over several relationship types (the
//! storage's multi-type CSR loop). Random graphs with cycles, self loops and parallel
//! relationships in three types are counted here by a plain recursive walk over the graph as
//! created, and every form must agree: in the delta (before a checkpoint) and in the compact
//! base (after one, where the clean-node fast paths run).

use arbor_engine::traversal::{Evaluation, Path, TraversalDescription, Uniqueness, Workspace};
use arbor_engine::{Database, DatabaseConfig, Direction, Edge, NodeId, PropertyMap, Value};

/// A small deterministic generator (xorshift64*), so each seed is one reproducible graph.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const TYPES: [&str; 3] = ["T1", "T2", "T3"];

/// The graph as created: per node (index) its `:B` label and `value`, and its outgoing
/// relationships as (type index, target index).
struct Graph {
    is_b: Vec<bool>,
    value: Vec<bool>,
    out: Vec<Vec<(usize, usize)>>,
}

/// A random tree of `n` nodes under node 0 (`:Root`) plus `extra` random relationships
/// (back edges make cycles; self loops and parallels happen), types drawn from [`TYPES`].
fn random_graph(rng: &mut Rng, n: usize, extra: usize) -> Graph {
    let is_b: Vec<bool> = (0..n).map(|i| i > 0 && rng.below(2) == 0).collect();
    let value: Vec<bool> = (0..n).map(|_| rng.below(3) != 0).collect();
    let mut out = vec![Vec::new(); n];
    for child in 1..n {
        let parent = rng.below(child);
        out[parent].push((rng.below(TYPES.len()), child));
    }
    for _ in 0..extra {
        let (s, e) = (rng.below(n), rng.below(n));
        out[s].push((rng.below(TYPES.len()), e));
    }
    Graph { is_b, value, out }
}

/// Paths from `node` of 1..=`left` more relationships of a type in `types`, outgoing, no
/// relationship twice when `rel_unique`, ending on a `:B` with `value` true; and the set of
/// such end nodes (the `count(DISTINCT b)` answer).
fn reference(
    g: &Graph,
    node: usize,
    left: u32,
    types: &[usize],
    rel_unique: bool,
    used: &mut Vec<(usize, usize)>,
    ends: &mut Vec<bool>,
) -> u64 {
    if left == 0 {
        return 0;
    }
    let mut n = 0;
    for (k, &(ty, to)) in g.out[node].iter().enumerate() {
        let rel = (node, k);
        if !types.contains(&ty) || (rel_unique && used.contains(&rel)) {
            continue;
        }
        if g.is_b[to] && g.value[to] {
            n += 1;
            ends[to] = true;
        }
        used.push(rel);
        n += reference(g, to, left - 1, types, rel_unique, used, ends);
        used.pop();
    }
    n
}

/// Creates `g` (node 0 is `:Root`); returns the node ids by index.
fn create(db: &Database, g: &Graph) -> Vec<NodeId> {
    db.write(|tx| {
        let mut ids = Vec::new();
        for i in 0..g.is_b.len() {
            let labels: &[&str] = match (i, g.is_b[i]) {
                (0, _) => &["Root", "A"],
                (_, true) => &["B"],
                (_, false) => &["A"],
            };
            ids.push(tx.create_node(labels, [("value", Value::Bool(g.value[i]))])?);
        }
        for (s, rels) in g.out.iter().enumerate() {
            for &(ty, e) in rels {
                tx.create_relationship(ids[s], ids[e], TYPES[ty], [])?;
            }
        }
        Ok(ids)
    })
    .unwrap()
}

/// The native count: paths of 1..=`max` relationships of `types` (by name), ending on a true
/// `:B`, depth-first and breadth-first; both must agree, the one answer is returned.
fn native(db: &Database, root: NodeId, types: &[usize], max: u32, u: Uniqueness) -> u64 {
    let tx = db.begin_read().unwrap();
    let b = tx.label("B").unwrap();
    let value = tx.property_key("value").unwrap();
    let rts: Vec<_> = types.iter().filter_map(|t| tx.rel_type(TYPES[*t])).collect();
    let td = TraversalDescription::new()
        .uniqueness(u)
        .max_depth(max)
        .expand_with(move |p: &Path<'_>, out: &mut Vec<Edge>| {
            p.end_node().relationships(Direction::Outgoing, &rts, out)
        })
        .evaluate_with(move |p: &Path<'_>| {
            let end = p.end_node();
            Evaluation::of_includes(
                p.length() > 0
                    && end.has_label(b)
                    && matches!(end.property(value), Some(Value::Bool(true))),
            )
        });
    let mut ws = Workspace::default();
    let dfs = td.traverse_in(&tx, root, &mut ws).count_paths();
    let bfs = td.clone().breadth_first().traverse_in(&tx, root, &mut ws).count_paths();
    assert_eq!(dfs, bfs, "depth-first and breadth-first counts differ");
    dfs
}

fn cypher(db: &Database, q: &str) -> u64 {
    let rows = db.execute(q, PropertyMap::new()).unwrap_or_else(|e| panic!("{q}: {e}"));
    match rows.as_slice() {
        [row] => match row.as_slice() {
            [arbor_engine::ResultValue::Int(n)] if *n >= 0 => *n as u64,
            other => panic!("{q}: {other:?}"),
        },
        other => panic!("{q}: {other:?}"),
    }
}

/// Every form against the reference, for the type sets none-but-all, one, two and three.
fn check(db: &Database, g: &Graph, root: NodeId, when: &str) -> u64 {
    let mut nonzero = 0;
    for types in [&[0usize][..], &[1, 2], &[0, 1, 2]] {
        let names: Vec<&str> = types.iter().map(|t| TYPES[*t]).collect();
        for max in [1u32, 3, 5] {
            let mut ends = vec![false; g.is_b.len()];
            let want = reference(g, 0, max, types, true, &mut Vec::new(), &mut ends);
            let distinct = ends.iter().filter(|e| **e).count() as u64;
            let pattern = format!("(:Root)-[:{}*1..{max}]->(b:B)", names.join("|"));
            let q = format!("MATCH {pattern} WHERE b.value RETURN count(b)");
            assert_eq!(cypher(db, &q), want, "{when}: {q}");
            let q = format!("MATCH {pattern} WHERE b.value RETURN count(DISTINCT b)");
            assert_eq!(cypher(db, &q), distinct, "{when}: {q}");
            let got = native(db, root, types, max, Uniqueness::RelationshipPath);
            assert_eq!(got, want, "{when}: native {names:?} up to {max}, relationship path");
            // No uniqueness: every walk (cycles are bounded by the depth).
            let walks = reference(g, 0, max, types, false, &mut Vec::new(), &mut ends);
            let got = native(db, root, types, max, Uniqueness::None);
            assert_eq!(got, walks, "{when}: native {names:?} up to {max}, no uniqueness");
            nonzero += want;
        }
    }
    // The untyped expander (every relationship) is the three-type count.
    let mut ends = vec![false; g.is_b.len()];
    let want = reference(g, 0, 4, &[0, 1, 2], true, &mut Vec::new(), &mut ends);
    assert_eq!(native(db, root, &[], 4, Uniqueness::RelationshipPath), want, "{when}: untyped");
    nonzero
}

#[test]
fn native_and_cypher_counts_equal_the_reference_walk() {
    let mut counted = 0;
    for seed in 1..=6u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (n, extra) = (20 + rng.below(40), 4 + rng.below(12));
        let g = random_graph(&mut rng, n, extra);
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DatabaseConfig::default()).unwrap();
        let root = create(&db, &g)[0];
        counted += check(&db, &g, root, &format!("seed {seed}, delta"));
        db.checkpoint().unwrap();
        counted += check(&db, &g, root, &format!("seed {seed}, base"));
    }
    // The comparisons were not all between empty answers.
    assert!(counted > 100, "only {counted} paths counted");
}
