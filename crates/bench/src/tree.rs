//! The traversal-perfs tree: root `:Root:A`; each `:A` has `fanout` `:B` children via `HAS_B`,
//! each `:B` has `fanout` `:A` children via `HAS_A`; `depth` A→B→A levels. Every node has a
//! boolean `value` from `java.util.Random(seed).nextBoolean()` drawn in creation order (root;
//! then per level, for each `:A` leaf in creation order, for each child: the `:B`, then that
//! B's `fanout` `:A` children), exactly as `neo4j-anchor traversal-bench` and
//! `shared/bench/traversal_expected.py` do.

use std::path::Path;
use std::time::Instant;

use arbor_engine::{Database, NodeId, Result, Tx, Value};
use arbor_model::{Error, Status};

use crate::java_random::JavaRandom;

/// The tree's shape and seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeSpec {
    /// A→B→A levels (5 = 10 hops, 11 node layers).
    pub depth: u32,
    pub fanout: u32,
    pub seed: i64,
}

impl Default for TreeSpec {
    fn default() -> Self {
        TreeSpec { depth: 5, fanout: 4, seed: 42 }
    }
}

/// What the tree must contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    pub nodes: u64,
    pub relationships: u64,
    /// `:B` nodes whose `value` is true: the answer of every benchmark mode.
    pub true_b: u64,
}

impl TreeSpec {
    /// Refuses shapes that would not fit in memory anyway (over a billion nodes).
    pub fn validate(&self) -> Result<()> {
        let nodes = self.node_count_checked();
        if self.fanout == 0 || nodes.is_none_or(|n| n > 1_000_000_000) {
            return Err(Error::new(
                Status::ArgumentError,
                format!(
                    "tree depth {} fanout {} is out of range (fanout >= 1, at most 10^9 nodes)",
                    self.depth, self.fanout
                ),
            ));
        }
        Ok(())
    }

    fn node_count_checked(&self) -> Option<u64> {
        let mut total: u64 = 0;
        let mut layer: u64 = 1;
        for _ in 0..=2 * self.depth {
            total = total.checked_add(layer)?;
            layer = layer.checked_mul(u64::from(self.fanout))?;
        }
        Some(total)
    }

    /// The expected counts, by replaying the flags (no database).
    pub fn expected(&self) -> Expected {
        let mut rng = JavaRandom::new(self.seed);
        rng.next_boolean(); // root
        let f = u64::from(self.fanout);
        let (mut nodes, mut leaves, mut true_b) = (1u64, 1u64, 0u64);
        for _ in 0..self.depth {
            for _ in 0..leaves * f {
                true_b += u64::from(rng.next_boolean());
                for _ in 0..f {
                    rng.next_boolean();
                }
            }
            nodes += leaves * f * (1 + f);
            leaves *= f * f;
        }
        Expected { nodes, relationships: nodes - 1, true_b }
    }

    /// The line recorded next to a built tree so that a data directory is reused only for the
    /// same tree (same format as the Neo4j anchor's marker).
    pub fn marker(&self) -> String {
        format!(
            "depth={} fanout={} seed={} nodes={}",
            self.depth,
            self.fanout,
            self.seed,
            self.expected().nodes
        )
    }
}

/// Name of the marker file in the data directory.
pub const MARKER_FILE: &str = "traversal-tree.txt";

/// Whether `dir` holds this tree already (per its marker).
pub fn is_built(dir: &Path, spec: &TreeSpec) -> bool {
    std::fs::read_to_string(dir.join(MARKER_FILE)).is_ok_and(|s| s.trim() == spec.marker())
}

/// Build statistics.
#[derive(Clone, Copy, Debug)]
pub struct BuildStats {
    pub nodes: u64,
    pub relationships: u64,
    pub seconds: f64,
}

/// Writes the tree into `db` through the embedded API, committing every `batch` nodes (the
/// anchor uses 50,000). Tokens are resolved once; node ids come back in creation order.
pub fn build(db: &Database, spec: &TreeSpec, batch: usize) -> Result<BuildStats> {
    spec.validate()?;
    let started = Instant::now();
    let mut rng = JavaRandom::new(spec.seed);
    let mut tx = db.begin_write()?;
    let root_l = tx.get_or_create_label("Root")?;
    let a_l = tx.get_or_create_label("A")?;
    let b_l = tx.get_or_create_label("B")?;
    let has_a = tx.get_or_create_rel_type("HAS_A")?;
    let has_b = tx.get_or_create_rel_type("HAS_B")?;
    let value = tx.get_or_create_property_key("value")?;
    let batch = batch.max(1);
    let (mut nodes, mut rels, mut in_tx) = (0u64, 0u64, 0usize);

    // Commits and starts the next transaction once `batch` nodes are pending. The next one
    // begins after the commit, or it would not see the nodes it links to (a cheap read
    // transaction holds the place meanwhile).
    fn roll(db: &Database, tx: &mut Tx, in_tx: &mut usize, batch: usize) -> Result<()> {
        if *in_tx >= batch {
            let full = std::mem::replace(tx, db.begin_read()?);
            full.commit()?;
            *tx = db.begin_write()?;
            *in_tx = 0;
        }
        Ok(())
    }

    let root =
        tx.create_node_with(&[root_l, a_l], vec![(value, Value::Bool(rng.next_boolean()))])?;
    nodes += 1;
    in_tx += 1;
    let mut leaves: Vec<NodeId> = vec![root];
    for _ in 0..spec.depth {
        let mut next = Vec::with_capacity(leaves.len() * (spec.fanout as usize).pow(2));
        for &a in &leaves {
            for _ in 0..spec.fanout {
                let b =
                    tx.create_node_with(&[b_l], vec![(value, Value::Bool(rng.next_boolean()))])?;
                tx.create_relationship_with(a, b, has_b, Vec::new())?;
                for _ in 0..spec.fanout {
                    let child = tx
                        .create_node_with(&[a_l], vec![(value, Value::Bool(rng.next_boolean()))])?;
                    tx.create_relationship_with(b, child, has_a, Vec::new())?;
                    next.push(child);
                }
                nodes += 1 + u64::from(spec.fanout);
                rels += 1 + u64::from(spec.fanout);
                in_tx += 1 + spec.fanout as usize;
                roll(db, &mut tx, &mut in_tx, batch)?;
            }
        }
        leaves = next;
    }
    tx.commit()?;
    Ok(BuildStats { nodes, relationships: rels, seconds: started.elapsed().as_secs_f64() })
}

/// Builds the tree in the database at `dir` unless its marker says it is already there; then
/// checkpoints so that a reopen loads it from the checkpoint. Returns `None` if reused.
pub fn ensure_built(db: &Database, dir: &Path, spec: &TreeSpec) -> Result<Option<BuildStats>> {
    if is_built(dir, spec) {
        return Ok(None);
    }
    let has_nodes = db.begin_read()?.count_nodes(None) > 0;
    if has_nodes {
        return Err(Error::new(
            Status::ArgumentError,
            format!(
                "{} holds a different graph (no marker for `{}`); use a fresh data directory",
                dir.display(),
                spec.marker()
            ),
        ));
    }
    let stats = build(db, spec, 50_000)?;
    db.checkpoint()?;
    std::fs::write(dir.join(MARKER_FILE), spec.marker() + "\n").map_err(|e| {
        Error::new(Status::Io, format!("cannot write {}: {e}", dir.join(MARKER_FILE).display()))
    })?;
    Ok(Some(stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_counts_match_the_reference() {
        // shared/bench/traversal_expected.py and the Neo4j anchor: seed 42 -> 139,854.
        let e = TreeSpec::default().expected();
        assert_eq!(e, Expected { nodes: 1_398_101, relationships: 1_398_100, true_b: 139_854 });
        let small = TreeSpec { depth: 2, fanout: 4, seed: 42 }.expected();
        assert_eq!(small.nodes, 1 + 4 + 16 + 64 + 256);
    }

    #[test]
    fn expected_counts_match_traversal_expected_py() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/bench/traversal_expected.py");
        if !script.exists() {
            eprintln!("skipped: {} not found", script.display());
            return;
        }
        for spec in [
            TreeSpec { depth: 2, fanout: 4, seed: 42 },
            TreeSpec { depth: 3, fanout: 3, seed: -5 },
            TreeSpec { depth: 1, fanout: 7, seed: 123_456_789_012 },
        ] {
            let out = std::process::Command::new("python3")
                .arg(&script)
                .args(["--depth", &spec.depth.to_string()])
                .args(["--fanout", &spec.fanout.to_string()])
                .args(["--seed", &spec.seed.to_string()])
                .output();
            let Ok(out) = out else {
                eprintln!("skipped: python3 not available");
                return;
            };
            let text = String::from_utf8_lossy(&out.stdout);
            let e = spec.expected();
            let want =
                format!("nodes={} relationships={} true_b={}", e.nodes, e.relationships, e.true_b);
            assert!(text.contains(&want), "{spec:?}: python says `{text}`, we say `{want}`");
        }
    }

    #[test]
    fn built_tree_has_the_expected_flags() {
        let db = Database::in_memory();
        let spec = TreeSpec { depth: 2, fanout: 3, seed: 7 };
        let stats = build(&db, &spec, 10).unwrap();
        let e = spec.expected();
        assert_eq!((stats.nodes, stats.relationships), (e.nodes, e.relationships));
        let tx = db.begin_read().unwrap();
        let b = tx.label("B").unwrap();
        let value = tx.property_key("value").unwrap();
        let true_b = tx
            .find_nodes(b)
            .filter(|n| matches!(tx.node_property(*n, value), Some(Value::Bool(true))))
            .count() as u64;
        assert_eq!(true_b, e.true_b);
        assert_eq!(tx.count_nodes(None), e.nodes);
        assert!(TreeSpec { depth: 40, fanout: 4, seed: 1 }.validate().is_err());
    }
}
