//! `arbor-bench traversal` (what `arbor bench traversal` runs): builds (or reuses) the
//! traversal-perfs tree, measures the traversal framework and the Cypher forms warm and cold,
//! optionally runs Neo4j's side through `neo4j-anchor traversal-bench`, and writes JSON and a
//! markdown table. The logic lives in the `arbor-bench` crate; this is argument plumbing.

use std::path::PathBuf;

use anyhow::Context;
use arbor_bench::traversal::{self, AnchorOptions, Mode, Options};
use arbor_bench::tree::TreeSpec;

#[derive(clap::Args)]
pub struct TraversalArgs {
    /// A->B->A levels (5 = 10 hops, 1,398,101 nodes with fanout 4).
    #[arg(long, default_value_t = 5)]
    depth: u32,
    #[arg(long, default_value_t = 4)]
    fanout: u32,
    /// Seed of java.util.Random for the `value` flags.
    #[arg(long, default_value_t = 42, allow_negative_numbers = true)]
    seed: i64,
    /// Untimed runs per mode before the measured ones.
    #[arg(long, default_value_t = 100)]
    warmup: usize,
    /// Measured warm runs per mode.
    #[arg(long, default_value_t = 100)]
    runs: usize,
    /// Measured cold runs per mode (each reopens the database and drops the OS page cache).
    #[arg(long, default_value_t = 5)]
    cold_runs: usize,
    /// Comma-separated modes.
    #[arg(long, default_value = "depth-first,breadth-first,cypher,cypher-distinct")]
    modes: String,
    /// Database directory; the tree is built once and reused while its parameters match.
    #[arg(long, default_value = "arbor-bench-traversal")]
    data: PathBuf,
    /// Do not try to drop the OS page cache before cold runs.
    #[arg(long)]
    no_drop_caches: bool,
    /// Write the results as JSON (the Neo4j anchor's keys plus condition, p95 and allocation).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the markdown table to this file (it is always printed).
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Run Neo4j's side with this `neo4j-anchor` script (e.g. ../shared/anchors/neo4j/neo4j-anchor).
    #[arg(long)]
    neo4j_anchor: Option<PathBuf>,
    /// Neo4j home for the anchor's copy of the tree.
    #[arg(long, default_value = "neo4j-bench-traversal")]
    neo4j_data: PathBuf,
    /// Warm-up runs for Neo4j (default: --warmup).
    #[arg(long)]
    neo4j_warmup: Option<usize>,
    /// Measured runs for Neo4j (default: --runs).
    #[arg(long)]
    neo4j_runs: Option<usize>,
    #[arg(long, default_value = "2g")]
    neo4j_heap: String,
    /// Instead of running the anchor, read its earlier `--json` output.
    #[arg(long, conflicts_with = "neo4j_anchor")]
    neo4j_json: Option<PathBuf>,
}

pub fn run(a: TraversalArgs) -> anyhow::Result<()> {
    let spec = TreeSpec { depth: a.depth, fanout: a.fanout, seed: a.seed };
    let modes = Mode::parse_list(&a.modes)?;
    let opts = Options {
        spec,
        warmup: a.warmup,
        runs: a.runs,
        cold_runs: a.cold_runs,
        modes: modes.clone(),
        data_dir: a.data.clone(),
        drop_caches: !a.no_drop_caches,
        verbose: true,
    };
    if !arbor_bench::alloc::is_installed() {
        eprintln!("note: the counting allocator is not installed; allocation is not reported");
    }
    let mut report = traversal::run(&opts)
        .with_context(|| format!("traversal benchmark in {}", a.data.display()))?;
    if let Some(path) = &a.neo4j_json {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        report.neo4j = Some(traversal::parse_anchor_json(&text)?);
    } else if let Some(anchor) = &a.neo4j_anchor {
        eprintln!("[bench traversal] running Neo4j: {} traversal-bench", anchor.display());
        let anchor_opts = AnchorOptions {
            anchor: anchor.clone(),
            data_dir: a.neo4j_data.clone(),
            warmup: a.neo4j_warmup.unwrap_or(a.warmup),
            runs: a.neo4j_runs.unwrap_or(a.runs),
            heap: a.neo4j_heap.clone(),
        };
        report.neo4j = Some(traversal::run_anchor(&spec, &modes, &anchor_opts)?);
    }
    if let Some((_, neo)) = &report.neo4j {
        for n in neo {
            if n.count != report.expected.true_b {
                anyhow::bail!(
                    "Neo4j {} counted {}, expected {}",
                    n.mode,
                    n.count,
                    report.expected.true_b
                );
            }
        }
    }
    let md = report.to_markdown();
    println!("{md}");
    if let Some(path) = &a.markdown {
        std::fs::write(path, &md).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &a.json {
        std::fs::write(path, report.to_json())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        args: TraversalArgs,
    }

    /// `arbor bench traversal --depth 2` end to end (CI smoke test of the subcommand).
    #[test]
    fn traversal_subcommand_at_depth_2() {
        let dir = std::env::temp_dir().join(format!("arbor-cli-bench-{}", std::process::id()));
        let json = dir.join("out.json");
        let t = T::try_parse_from([
            "t",
            "--depth",
            "2",
            "--warmup",
            "1",
            "--runs",
            "2",
            "--cold-runs",
            "1",
            "--no-drop-caches",
            "--data",
            dir.join("db").to_str().unwrap_or("db"),
            "--json",
            json.to_str().unwrap_or("out.json"),
        ])
        .unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        run(t.args).unwrap();
        let text = std::fs::read_to_string(&json).unwrap();
        let j: serde_json::Value = serde_json::from_str(&text).unwrap();
        let results = j["results"].as_array().unwrap();
        assert_eq!(results.len(), 8);
        let want = TreeSpec { depth: 2, fanout: 4, seed: 42 }.expected().true_b as f64;
        for r in results {
            assert_eq!(r["count"].as_f64(), Some(want));
            // The binary's global allocator is the counting one, so allocation is reported.
            assert!(r["alloc_bytes_per_run"].as_f64().is_some());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
