//! The traversal benchmark (after fpavageau/traversal-perfs, 2016): count the `:B` nodes whose
//! `value` is true below `:Root`, depth-first and breadth-first through the traversal framework
//! and with two Cypher forms, warm and cold; time, allocation and memory per run; optional
//! side-by-side with Neo4j 5.26 through `neo4j-anchor traversal-bench`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use arbor_engine::traversal::{
    Evaluation, Path as TPath, TraversalDescription, Uniqueness, Workspace,
};
use arbor_engine::{Database, DatabaseConfig, Direction, Durability, Edge, PropertyMap, Value};
use arbor_model::{Error, Result, Status};

use crate::alloc::{self, AllocCount};
use crate::stats::Summary;
use crate::tree::{self, BuildStats, Expected, TreeSpec};
use serde_json::{json, Value as Json};

/// `count(b)` form; plan: label scan, variable-length expand, filter, aggregate.
pub const CYPHER: &str = "MATCH (:Root)-[:HAS_B|HAS_A*]->(b:B) WHERE b.value RETURN count(b) AS c";
/// `count(DISTINCT b)` form (Neo4j plans a pruning BFS var-expand for it).
pub const CYPHER_DISTINCT: &str =
    "MATCH (:Root)-[:HAS_B|HAS_A*]->(b:B) WHERE b.value RETURN count(DISTINCT b) AS c";

/// One way of computing the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    DepthFirst,
    BreadthFirst,
    Cypher,
    CypherDistinct,
}

impl Mode {
    pub const ALL: [Mode; 4] =
        [Mode::DepthFirst, Mode::BreadthFirst, Mode::Cypher, Mode::CypherDistinct];

    /// The name used in JSON (the anchor's mode names).
    pub fn name(self) -> &'static str {
        match self {
            Mode::DepthFirst => "depth-first",
            Mode::BreadthFirst => "breadth-first",
            Mode::Cypher => "cypher",
            Mode::CypherDistinct => "cypher-distinct",
        }
    }

    pub fn parse(s: &str) -> Result<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s.trim()).ok_or_else(|| {
            Error::new(
                Status::ArgumentError,
                format!("unknown mode `{s}` (depth-first, breadth-first, cypher, cypher-distinct)"),
            )
        })
    }

    /// Parses a comma-separated list.
    pub fn parse_list(s: &str) -> Result<Vec<Mode>> {
        s.split(',').filter(|p| !p.trim().is_empty()).map(Mode::parse).collect()
    }
}

/// Data resident (after warm-up runs) or cold (database reopened, OS page cache dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    Warm,
    Cold,
}

impl Condition {
    pub fn name(self) -> &'static str {
        match self {
            Condition::Warm => "warm",
            Condition::Cold => "cold",
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub spec: TreeSpec,
    pub warmup: usize,
    pub runs: usize,
    /// Cold runs per mode: each reopens the database first.
    pub cold_runs: usize,
    pub modes: Vec<Mode>,
    /// Database directory (the tree is built once and reused while its marker matches).
    pub data_dir: PathBuf,
    /// Try `sync; echo 3 > /proc/sys/vm/drop_caches` before each cold run.
    pub drop_caches: bool,
    /// Progress lines on standard error.
    pub verbose: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            spec: TreeSpec::default(),
            warmup: 100,
            runs: 100,
            cold_runs: 5,
            modes: Mode::ALL.to_vec(),
            data_dir: PathBuf::from("arbor-bench-traversal"),
            drop_caches: true,
            verbose: false,
        }
    }
}

/// Results of one mode under one condition.
#[derive(Clone, Debug)]
pub struct ModeResult {
    pub mode: Mode,
    pub condition: Condition,
    pub count: u64,
    pub summary: Summary,
    /// Mean bytes allocated by the measuring thread per run (`None` without the counting
    /// allocator).
    pub alloc_bytes_per_run: Option<f64>,
    pub allocs_per_run: Option<f64>,
}

/// Neo4j's numbers from the anchor, for the side-by-side table.
#[derive(Clone, Debug)]
pub struct NeoResult {
    pub mode: String,
    pub count: u64,
    pub runs: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// Everything one benchmark run measured.
#[derive(Clone, Debug)]
pub struct Report {
    pub spec: TreeSpec,
    pub expected: Expected,
    /// `:B` nodes with `value = true` counted by a label scan (sanity check of the data).
    pub label_scan_true_b: u64,
    pub warmup: usize,
    pub build: Option<BuildStats>,
    /// Time to open the database before each cold run.
    pub open_ms: Vec<f64>,
    /// How dropping the OS page cache went (`ok`, `disabled` or the error).
    pub drop_caches: String,
    pub rss_bytes: u64,
    pub peak_rss_bytes: u64,
    pub results: Vec<ModeResult>,
    pub neo4j: Option<(Json, Vec<NeoResult>)>,
}

fn bench_config() -> DatabaseConfig {
    DatabaseConfig {
        // The tree is checkpointed right after it is built; nothing else is written.
        durability: Durability::Off,
        checkpoint_interval: Duration::from_secs(24 * 3600),
        checkpoint_wal_bytes: u64::MAX,
        memory_limit: None,
    }
}

/// Runs one mode once in its own read transaction; returns the count.
pub fn run_once(db: &Database, mode: Mode, ws: &mut Workspace) -> Result<u64> {
    match mode {
        Mode::DepthFirst | Mode::BreadthFirst => {
            let tx = db.begin_read()?;
            let missing = || Error::new(Status::EntityNotFound, "the traversal tree is not there");
            let root_label = tx.label("Root").ok_or_else(missing)?;
            let (a, b) = (tx.label("A").ok_or_else(missing)?, tx.label("B").ok_or_else(missing)?);
            let has_a = tx.rel_type("HAS_A").ok_or_else(missing)?;
            let has_b = tx.rel_type("HAS_B").ok_or_else(missing)?;
            let value = tx.property_key("value").ok_or_else(missing)?;
            let root = tx.find_nodes(root_label).next().ok_or_else(missing)?;
            // The anchor's traversal: HAS_B out of :A, HAS_A out of :B, no uniqueness,
            // include paths ending on a :B whose value is true, always continue.
            let td = TraversalDescription::new()
                .uniqueness(Uniqueness::None)
                .expand_with(move |p: &TPath<'_>, out: &mut Vec<Edge>| {
                    let end = p.end_node();
                    if end.has_label(a) {
                        end.relationships(Direction::Outgoing, &[has_b], out);
                    } else if end.has_label(b) {
                        end.relationships(Direction::Outgoing, &[has_a], out);
                    }
                })
                .evaluate_with(move |p: &TPath<'_>| {
                    let end = p.end_node();
                    Evaluation::of_includes(
                        end.has_label(b) && matches!(end.property(value), Some(Value::Bool(true))),
                    )
                });
            let td = if mode == Mode::BreadthFirst { td.breadth_first() } else { td };
            Ok(td.traverse_in(&tx, root, ws).count_paths())
        }
        Mode::Cypher | Mode::CypherDistinct => {
            let q = if mode == Mode::Cypher { CYPHER } else { CYPHER_DISTINCT };
            let mut tx = db.begin_read()?;
            match tx.execute(q, PropertyMap::new())?.single()? {
                arbor_engine::ResultValue::Int(n) if n >= 0 => Ok(n as u64),
                other => Err(Error::internal(format!("{q} returned {other:?}"))),
            }
        }
    }
}

/// One timed run: (milliseconds, allocation on this thread, count).
fn timed(db: &Database, mode: Mode, ws: &mut Workspace) -> Result<(f64, AllocCount, u64)> {
    let a0 = alloc::thread_allocated();
    let t0 = Instant::now();
    let count = run_once(db, mode, ws)?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok((ms, alloc::thread_allocated().since(a0), count))
}

fn check_count(mode: Mode, got: u64, want: u64) -> Result<()> {
    if got != want {
        return Err(Error::internal(format!(
            "{}: counted {got} true :B nodes, expected {want}",
            mode.name()
        )));
    }
    Ok(())
}

fn result_of(
    mode: Mode,
    condition: Condition,
    count: u64,
    ms: &[f64],
    allocs: &[AllocCount],
    counting: bool,
) -> ModeResult {
    let n = allocs.len().max(1) as f64;
    ModeResult {
        mode,
        condition,
        count,
        summary: Summary::of(ms),
        alloc_bytes_per_run: counting
            .then(|| allocs.iter().map(|a| a.bytes as f64).sum::<f64>() / n),
        allocs_per_run: counting.then(|| allocs.iter().map(|a| a.calls as f64).sum::<f64>() / n),
    }
}

/// `(VmRSS, VmHWM)` of this process in bytes (zeros where /proc is unavailable).
pub fn rss() -> (u64, u64) {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else { return (0, 0) };
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// `sync; echo 3 > /proc/sys/vm/drop_caches`; `Err` says why it did not work.
pub fn drop_os_caches() -> std::result::Result<(), String> {
    let _ = Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").map_err(|e| e.to_string())
}

fn log(opts: &Options, msg: impl FnOnce() -> String) {
    if opts.verbose {
        eprintln!("[bench traversal] {}", msg());
    }
}

/// Builds (or reuses) the tree in `opts.data_dir` and measures every mode warm, then cold.
pub fn run(opts: &Options) -> Result<Report> {
    opts.spec.validate()?;
    let expected = opts.spec.expected();
    let counting = alloc::is_installed();
    let dir = &opts.data_dir;
    let mut db = Database::open(dir, bench_config())?;
    log(opts, || format!("database at {}", dir.display()));
    let build = tree::ensure_built(&db, dir, &opts.spec)?;
    match &build {
        Some(b) => log(opts, || {
            format!(
                "built {} nodes, {} relationships in {:.1} s",
                b.nodes, b.relationships, b.seconds
            )
        }),
        None => log(opts, || format!("reusing tree: {}", opts.spec.marker())),
    }
    if build.is_some() {
        // Measure from a clean open of the checkpoint, as later cold runs do.
        db.shutdown()?;
        drop(db);
        db = Database::open(dir, bench_config())?;
    }
    let label_scan_true_b = {
        let tx = db.begin_read()?;
        match (tx.label("B"), tx.property_key("value")) {
            (Some(b), Some(v)) => tx
                .find_nodes(b)
                .filter(|n| matches!(tx.node_property(*n, v), Some(Value::Bool(true))))
                .count() as u64,
            _ => 0,
        }
    };
    if label_scan_true_b != expected.true_b {
        return Err(Error::internal(format!(
            "the stored tree has {label_scan_true_b} true :B nodes, expected {}",
            expected.true_b
        )));
    }

    let mut results = Vec::new();
    let mut ws = Workspace::default();
    for &mode in &opts.modes {
        for _ in 0..opts.warmup {
            let c = run_once(&db, mode, &mut ws)?;
            check_count(mode, c, expected.true_b)?;
        }
        let (mut ms, mut allocs) = (Vec::with_capacity(opts.runs), Vec::with_capacity(opts.runs));
        for _ in 0..opts.runs {
            let (t, a, c) = timed(&db, mode, &mut ws)?;
            check_count(mode, c, expected.true_b)?;
            ms.push(t);
            allocs.push(a);
        }
        let r = result_of(mode, Condition::Warm, expected.true_b, &ms, &allocs, counting);
        log(opts, || {
            format!(
                "{} warm: mean {:.1} ms, p50 {:.1} ms",
                mode.name(),
                r.summary.mean,
                r.summary.p50
            )
        });
        results.push(r);
    }
    let (rss_bytes, _) = rss();
    drop(ws);

    let mut open_ms = Vec::new();
    let mut drop_caches =
        if opts.drop_caches { String::from("ok") } else { String::from("disabled") };
    if opts.cold_runs > 0 {
        for &mode in &opts.modes {
            let (mut ms, mut allocs) = (Vec::new(), Vec::new());
            for _ in 0..opts.cold_runs {
                db.shutdown()?;
                drop(db);
                if opts.drop_caches {
                    if let Err(e) = drop_os_caches() {
                        drop_caches = format!("failed: {e}");
                    }
                }
                let t0 = Instant::now();
                db = Database::open(dir, bench_config())?;
                open_ms.push(t0.elapsed().as_secs_f64() * 1e3);
                // A fresh workspace too: nothing of the previous runs is reused.
                let mut fresh = Workspace::default();
                let (t, a, c) = timed(&db, mode, &mut fresh)?;
                check_count(mode, c, expected.true_b)?;
                ms.push(t);
                allocs.push(a);
            }
            let r = result_of(mode, Condition::Cold, expected.true_b, &ms, &allocs, counting);
            log(opts, || format!("{} cold: mean {:.1} ms", mode.name(), r.summary.mean));
            results.push(r);
        }
    }
    let (_, peak_rss_bytes) = rss();
    db.shutdown()?;
    Ok(Report {
        spec: opts.spec,
        expected,
        label_scan_true_b,
        warmup: opts.warmup,
        build,
        open_ms,
        drop_caches,
        rss_bytes,
        peak_rss_bytes,
        results,
        neo4j: None,
    })
}

/// How to run Neo4j's side.
#[derive(Clone, Debug)]
pub struct AnchorOptions {
    /// Path of the `neo4j-anchor` script.
    pub anchor: PathBuf,
    /// Neo4j home for the tree (built on first use, then reused).
    pub data_dir: PathBuf,
    pub warmup: usize,
    pub runs: usize,
    pub heap: String,
}

/// Runs `neo4j-anchor traversal-bench` on the same tree and parses its `--json`.
pub fn run_anchor(
    spec: &TreeSpec,
    modes: &[Mode],
    a: &AnchorOptions,
) -> Result<(Json, Vec<NeoResult>)> {
    let json_path =
        std::env::temp_dir().join(format!("arbor-neo4j-trav-{}.json", std::process::id()));
    let modes: Vec<&str> = modes.iter().map(|m| m.name()).collect();
    let status = Command::new(&a.anchor)
        .arg("traversal-bench")
        .arg("--data")
        .arg(&a.data_dir)
        .args(["--depth", &spec.depth.to_string(), "--fanout", &spec.fanout.to_string()])
        .args(["--seed", &spec.seed.to_string(), "--warmup", &a.warmup.to_string()])
        .args(["--runs", &a.runs.to_string(), "--modes", &modes.join(","), "--heap", &a.heap])
        .arg("--json")
        .arg(&json_path)
        .status()
        .map_err(|e| Error::new(Status::Io, format!("cannot run {}: {e}", a.anchor.display())))?;
    if !status.success() {
        return Err(Error::new(
            Status::Io,
            format!("neo4j-anchor traversal-bench failed: {status}"),
        ));
    }
    let text = std::fs::read_to_string(&json_path)
        .map_err(|e| Error::new(Status::Io, format!("cannot read {}: {e}", json_path.display())))?;
    let _ = std::fs::remove_file(&json_path);
    parse_anchor_json(&text)
}

/// Reads the anchor's `--json` output.
pub fn parse_anchor_json(text: &str) -> Result<(Json, Vec<NeoResult>)> {
    let bad = || Error::new(Status::ArgumentError, "not neo4j-anchor traversal-bench JSON");
    let j: Json = serde_json::from_str(text).map_err(|_| bad())?;
    let mut out = Vec::new();
    for r in j.get("results").and_then(Json::as_array).ok_or_else(bad)? {
        let f = |k: &str| r.get(k).and_then(Json::as_f64).ok_or_else(bad);
        out.push(NeoResult {
            mode: r.get("mode").and_then(Json::as_str).ok_or_else(bad)?.to_string(),
            count: f("count")? as u64,
            runs: f("runs")? as u64,
            mean: f("mean_ms")?,
            p50: f("p50_ms")?,
            p90: f("p90_ms")?,
            p99: f("p99_ms")?,
            max: f("max_ms")?,
        });
    }
    Ok((j, out))
}

/// A duration in milliseconds rounded to microseconds (what the reports always showed);
/// `null` when not finite.
fn ms(x: f64) -> Json {
    if x.is_finite() {
        json!((x * 1000.0).round() / 1000.0)
    } else {
        Json::Null
    }
}

impl Report {
    /// `{"results": [...]}` with the anchor's keys plus `condition`, `p95_ms` and
    /// `alloc_bytes_per_run`; the anchor's own document under `"neo4j"` when it ran.
    pub fn to_json(&self) -> String {
        let results: Vec<Json> = self
            .results
            .iter()
            .map(|r| {
                let m = &r.summary;
                json!({
                    "mode": r.mode.name(),
                    "condition": r.condition.name(),
                    "count": r.count,
                    "runs": m.runs,
                    "mean_ms": ms(m.mean),
                    "p50_ms": ms(m.p50),
                    "p90_ms": ms(m.p90),
                    "p95_ms": ms(m.p95),
                    "p99_ms": ms(m.p99),
                    "max_ms": ms(m.max),
                    "min_ms": ms(m.min),
                    "alloc_bytes_per_run": r.alloc_bytes_per_run.map(|b| b.round() as u64),
                })
            })
            .collect();
        let mut doc = json!({
            "arbor": env!("CARGO_PKG_VERSION"),
            "depth": self.spec.depth,
            "fanout": self.spec.fanout,
            "seed": self.spec.seed,
            "nodes": self.expected.nodes,
            "relationships": self.expected.relationships,
            "true_b": self.label_scan_true_b,
            "warmup": self.warmup,
            "rss_bytes": self.rss_bytes,
            "peak_rss_bytes": self.peak_rss_bytes,
            "open_ms_mean": ms(mean(&self.open_ms)),
            "drop_caches": self.drop_caches,
            "results": results,
        });
        if let (Some((j, _)), Some(fields)) = (&self.neo4j, doc.as_object_mut()) {
            fields.insert("neo4j".into(), j.clone());
        }
        let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The markdown table (with Neo4j's numbers and the ratios when the anchor ran).
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let e = &self.expected;
        let _ = writeln!(
            s,
            "Tree: depth {} fanout {} seed {}: {} nodes, {} relationships, {} true `:B` (asserted). \
             Warm: {} warm-up runs, then the runs below; cold: database reopened{} before each run.\n",
            self.spec.depth,
            self.spec.fanout,
            self.spec.seed,
            e.nodes,
            e.relationships,
            e.true_b,
            self.warmup,
            if self.drop_caches == "ok" { " and OS page cache dropped" } else { "" },
        );
        let neo = self.neo4j.as_ref().map(|(_, r)| r.as_slice()).unwrap_or(&[]);
        s.push_str(
            "| mode | condition | runs | mean ms | p50 ms | p90 ms | p95 ms | max ms | alloc/run | \
             Neo4j mean ms | Neo4j p50 ms | speed-up (mean) | speed-up (p50) |\n",
        );
        s.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.results {
            let m = &r.summary;
            let n = neo.iter().find(|n| n.mode == r.mode.name());
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {} | {} | {} |",
                r.mode.name(),
                r.condition.name(),
                m.runs,
                m.mean,
                m.p50,
                m.p90,
                m.p95,
                m.max,
                r.alloc_bytes_per_run.map_or("n/a".into(), fmt_bytes),
                n.map_or("–".into(), |n| format!("{:.1}", n.mean)),
                n.map_or("–".into(), |n| format!("{:.1}", n.p50)),
                n.map_or("–".into(), |n| format!("{:.1}×", n.mean / m.mean)),
                n.map_or("–".into(), |n| format!("{:.1}×", n.p50 / m.p50)),
            );
        }
        let _ = writeln!(
            s,
            "\nArbor: resident memory {} after the warm runs (peak {}); reopening the database \
             for a cold run took {:.0} ms on average (not included in the cold times); OS page \
             cache drop: {}.",
            fmt_bytes(self.rss_bytes as f64),
            fmt_bytes(self.peak_rss_bytes as f64),
            mean(&self.open_ms),
            self.drop_caches,
        );
        if let Some((j, _)) = &self.neo4j {
            let v = j.get("neo4j").and_then(Json::as_str).unwrap_or("?");
            let w = j.get("warmup").and_then(Json::as_f64).unwrap_or(0.0);
            let _ = writeln!(
                s,
                "Neo4j {v}: `neo4j-anchor traversal-bench`, {w} warm-up runs (warm only)."
            );
        }
        s
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// `1.2 MB`-style byte counts.
pub fn fmt_bytes(b: f64) -> String {
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{} B", b.round() as u64)
    }
}

/// Used by tests and the CLI: the path of the shared expected-count script, if present.
pub fn expected_script(repo_root: &Path) -> PathBuf {
    repo_root.join("../shared/bench/traversal_expected.py")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_name() {
        assert_eq!(
            Mode::parse_list("depth-first, cypher").unwrap(),
            vec![Mode::DepthFirst, Mode::Cypher]
        );
        assert!(Mode::parse("sideways").is_err());
        for m in Mode::ALL {
            assert_eq!(Mode::parse(m.name()).unwrap(), m);
        }
    }

    /// The CI smoke test: the whole benchmark at depth 2, warm and cold, every mode.
    #[test]
    fn smoke_depth_2() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            spec: TreeSpec { depth: 2, fanout: 4, seed: 42 },
            warmup: 2,
            runs: 3,
            cold_runs: 1,
            modes: Mode::ALL.to_vec(),
            data_dir: dir.path().join("db"),
            drop_caches: false,
            verbose: false,
        };
        let report = run(&opts).unwrap();
        let want = opts.spec.expected().true_b;
        assert_eq!(report.results.len(), 8);
        for r in &report.results {
            assert_eq!(r.count, want, "{:?}", r.mode);
            assert!(r.summary.mean > 0.0);
        }
        assert!(report.build.is_some());
        // Second run reuses the tree.
        let again = run(&Options { cold_runs: 0, ..opts.clone() }).unwrap();
        assert!(again.build.is_none());
        assert_eq!(again.results.len(), 4);
        let j: Json = serde_json::from_str(&report.to_json()).unwrap();
        let first = &j["results"][0];
        for key in [
            "mode",
            "condition",
            "count",
            "runs",
            "mean_ms",
            "p50_ms",
            "p90_ms",
            "p95_ms",
            "p99_ms",
            "max_ms",
            "min_ms",
            "alloc_bytes_per_run",
        ] {
            assert!(first.get(key).is_some(), "missing {key}");
        }
        assert!(report.to_markdown().contains("| depth-first | warm |"));
    }

    #[test]
    fn side_by_side_with_anchor_json() {
        let text = r#"{"neo4j": "5.26.30", "depth": 2, "fanout": 4, "seed": 42, "nodes": 341,
            "relationships": 340, "true_b": 10, "warmup": 1, "results": [{"mode": "depth-first",
            "count": 10, "runs": 2, "mean_ms": 4.000, "p50_ms": 4.000, "p90_ms": 4.000,
            "p99_ms": 4.000, "max_ms": 4.000, "min_ms": 4.000}]}"#;
        let (j, neo) = parse_anchor_json(text).unwrap();
        assert_eq!(neo[0].mode, "depth-first");
        let spec = TreeSpec { depth: 2, fanout: 4, seed: 42 };
        let report = Report {
            spec,
            expected: spec.expected(),
            label_scan_true_b: spec.expected().true_b,
            warmup: 1,
            build: None,
            open_ms: vec![],
            drop_caches: "disabled".into(),
            rss_bytes: 0,
            peak_rss_bytes: 0,
            results: vec![result_of(
                Mode::DepthFirst,
                Condition::Warm,
                10,
                &[0.5, 0.5],
                &[],
                false,
            )],
            neo4j: Some((j, neo)),
        };
        let md = report.to_markdown();
        assert!(md.contains("| 8.0× | 8.0× |"), "{md}");
        let back: Json = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(
            back.get("neo4j").and_then(|n| n.get("neo4j")).and_then(Json::as_str),
            Some("5.26.30")
        );
        assert!(parse_anchor_json("{}").is_err());
    }
}
