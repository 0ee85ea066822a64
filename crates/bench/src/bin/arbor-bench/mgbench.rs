//! `arbor-bench mgbench ...` and `arbor-bench copy ...` (what `arbor bench ...` runs): argument plumbing for the
//! `arbor-mgbench` crate (mgBench's Pokec workloads against Arbor and Neo4j side by side, and
//! the Bolt data-copy benchmark).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use arbor_mgbench::bench::{self, Condition, Options, WorkloadKind};
use arbor_mgbench::pokec::Size;
use arbor_mgbench::server::ServerKind;
use arbor_mgbench::{metrics, report, workload};
use serde_json::json;

#[derive(clap::Args)]
pub struct MgbenchArgs {
    /// Drive an already running Bolt server at this URI instead of starting servers (no
    /// restarts between runs; the data set is loaded if the server holds no :User nodes).
    #[arg(long)]
    uri: Option<String>,
    /// PID of the --uri server, to read its peak RSS and CPU time.
    #[arg(long, requires = "uri")]
    server_pid: Option<u32>,
    /// small | medium | large | custom:VERTICES:EDGES
    #[arg(long, default_value = "small")]
    dataset: String,
    #[arg(long, default_value_t = 12)]
    workers: usize,
    /// cold | hot | vulcanic
    #[arg(long, default_value = "hot")]
    condition: String,
    /// Comma-separated: isolated, mixed, realistic.
    #[arg(long, default_value = "isolated")]
    workload: String,
    /// Comma-separated queries (Q5, expansion_1, ...); default all 23.
    #[arg(long)]
    queries: Option<String>,
    /// Queries per isolated run (benchgraph's lower bound is 300).
    #[arg(long, default_value_t = 300)]
    count: usize,
    /// Size each isolated run like mgBench: the number of queries that take this many seconds
    /// single-threaded (estimated on the first target, reused for the others), at least
    /// --count. 0: exactly --count queries.
    #[arg(long, default_value_t = 0.0)]
    runtime: f64,
    /// Queries per mixed / realistic run (benchgraph: 500).
    #[arg(long, default_value_t = 500)]
    mix_count: usize,
    /// Comma-separated servers to run in this order: arbor, neo4j.
    #[arg(long, default_value = "arbor,neo4j")]
    targets: String,
    /// The arbor binary to benchmark (default: `arbor` next to this binary).
    #[arg(long)]
    arbor_binary: Option<PathBuf>,
    /// Arbor's commit durability (sync = fsync per commit group, like Neo4j).
    #[arg(long, default_value = "sync")]
    durability: String,
    #[arg(long, default_value = "../shared/anchors/neo4j/neo4j-anchor")]
    neo4j_anchor: PathBuf,
    #[arg(long, default_value = "2g")]
    neo4j_heap: String,
    #[arg(long, default_value = "../shared/bench/gen_pokec.py")]
    gen_script: PathBuf,
    /// Generated data, loaded stores and run directories.
    #[arg(long, default_value = "arbor-bench-mgbench")]
    work_dir: PathBuf,
    #[arg(long, default_value_t = 1000)]
    load_batch: usize,
    /// Skip result verification.
    #[arg(long)]
    no_verify: bool,
    #[arg(long)]
    json: Option<PathBuf>,
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Replace the marked mgBench block (`<!-- mgbench-<workload>-<condition>:begin -->`) in
    /// this file (e.g. BENCHMARKS.md) with the markdown tables.
    #[arg(long)]
    benchmarks_md: Option<PathBuf>,
    /// Seconds to wait for a server to come up.
    #[arg(long, default_value_t = 180)]
    start_timeout: u64,
}

/// The `arbor` binary next to this one (both are built into the same target directory).
fn sibling_arbor() -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe().context("locating the arbor-bench binary")?;
    let arbor = me.with_file_name(format!("arbor{}", std::env::consts::EXE_SUFFIX));
    if !arbor.is_file() {
        bail!(
            "the arbor binary is not next to {} (expected {}): build the workspace or pass \
             --arbor-binary",
            me.display(),
            arbor.display()
        );
    }
    Ok(arbor)
}

fn abs(p: &Path) -> anyhow::Result<PathBuf> {
    if p.is_absolute() {
        Ok(p.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(p))
    }
}

pub fn mgbench(a: MgbenchArgs) -> anyhow::Result<()> {
    let size = Size::parse(&a.dataset).with_context(|| {
        format!("unknown --dataset {} (small|medium|large|custom:V:E)", a.dataset)
    })?;
    let condition = Condition::parse(&a.condition)
        .with_context(|| format!("unknown --condition {} (cold|hot|vulcanic)", a.condition))?;
    let workloads = a
        .workload
        .split(',')
        .map(|w| {
            WorkloadKind::parse(w.trim())
                .with_context(|| format!("unknown workload {w} (isolated|mixed|realistic)"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let queries = match &a.queries {
        None => workload::QUERIES.iter().collect(),
        Some(list) => list
            .split(',')
            .map(|q| workload::lookup(q).with_context(|| format!("unknown query {q}")))
            .collect::<anyhow::Result<Vec<_>>>()?,
    };
    let targets = match &a.uri {
        Some(uri) => vec![ServerKind::External { uri: uri.clone(), pid: a.server_pid }],
        None => a
            .targets
            .split(',')
            .map(|t| match t.trim() {
                "arbor" => Ok(ServerKind::Arbor {
                    binary: match &a.arbor_binary {
                        Some(b) => abs(b)?,
                        None => sibling_arbor()?,
                    },
                    durability: Some(a.durability.clone()),
                }),
                "neo4j" => {
                    let anchor = abs(&a.neo4j_anchor)?;
                    if !anchor.is_file() {
                        bail!("neo4j-anchor not found at {} (--neo4j-anchor)", anchor.display());
                    }
                    Ok(ServerKind::Neo4j { anchor, heap: a.neo4j_heap.clone() })
                }
                other => bail!("unknown target {other} (arbor|neo4j)"),
            })
            .collect::<anyhow::Result<Vec<_>>>()?,
    };
    let o = Options {
        size: size.clone(),
        workers: a.workers,
        condition,
        workloads: workloads.clone(),
        queries,
        count: a.count,
        runtime: (a.runtime > 0.0).then_some(a.runtime),
        mix_count: a.mix_count,
        gen_script: abs(&a.gen_script)?,
        work_dir: abs(&a.work_dir)?,
        load_batch: a.load_batch,
        verify: !a.no_verify,
        targets,
        start_timeout: Duration::from_secs(a.start_timeout),
        verbose: true,
    };
    let load0 = metrics::load_average();
    let report = bench::run(&o, |r| {
        eprintln!(
            "[mgbench] {:>5} {:<9} {:<34} {:>9.1} QPS  p50 {:>8.2} ms  p99 {:>8.2} ms  RSS {:>6.0} MiB  client {:>3.0}%  {}",
            r.target,
            r.workload.name(),
            r.name,
            r.throughput,
            r.latency.p50,
            r.latency.p99,
            r.server.peak_rss_kib as f64 / 1024.0,
            r.client_share() * 100.0,
            if r.ok() { "verified".to_string() } else { format!("FAILED {:?}", r.mismatches) }
        )
    })?;
    let load1 = metrics::load_average();
    let header = format!(
        "Pokec {} ({} users, {} edges), {} workers, {} condition, {} queries per isolated run{}, {} per mixed/realistic run; {} CPUs, load average {} -> {}; Arbor durability {}.",
        size.label(),
        report.vertices,
        report.edges,
        a.workers,
        condition.name(),
        a.count,
        if a.runtime > 0.0 {
            format!(
                " at least (mgBench sizing: {} s single-threaded on the first target, same list for all)",
                a.runtime
            )
        } else {
            String::new()
        },
        a.mix_count,
        metrics::cpu_count(),
        load0.map(|l| format!("{l:.1}")).unwrap_or_default(),
        load1.map(|l| format!("{l:.1}")).unwrap_or_default(),
        a.durability,
    );
    let md = report::to_markdown(&report, condition, &header);
    println!("{md}");
    if let Some(p) = &a.markdown {
        std::fs::write(p, &md).with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &a.json {
        let meta = json!({
            "dataset": size.label(),
            "workers": a.workers,
            "condition": condition.name(),
            "count": a.count,
            "mix_count": a.mix_count,
            "durability": a.durability.as_str(),
            "cpus": metrics::cpu_count(),
            "load_average_start": load0,
            "load_average_end": load1,
        });
        std::fs::write(p, report::to_json(&report, meta))
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &a.benchmarks_md {
        let doc = std::fs::read_to_string(p).unwrap_or_default();
        let names: Vec<&str> = workloads.iter().map(|w| w.name()).collect();
        let block = format!("mgbench-{}-{}-{}", size.label(), names.join("-"), condition.name());
        std::fs::write(p, report::splice(&doc, &block, md.trim_end()))
            .with_context(|| format!("writing {}", p.display()))?;
    }
    let failed: Vec<String> = report
        .runs
        .iter()
        .filter(|r| !r.ok())
        .map(|r| format!("{} {} {}", r.target, r.workload.name(), r.name))
        .collect();
    if !failed.is_empty() {
        bail!("{} run(s) returned wrong answers or errors: {}", failed.len(), failed.join(", "));
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct CopyArgs {
    /// Source nodes to generate and copy.
    #[arg(long, default_value_t = 1_000_000)]
    nodes: usize,
    /// Rows per `UNWIND $batch CREATE` (and per `PULL n` when streaming).
    #[arg(long, default_value_t = 10_000)]
    batch: usize,
    /// Writer threads (each with its own connection) for reader-writers and streaming.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Bounded queue capacity, in batches.
    #[arg(long, default_value_t = 2)]
    queue: usize,
    /// Comma-separated: single, reader-writers, streaming.
    #[arg(long, default_value = "streaming,reader-writers,single")]
    strategies: String,
    /// Comma-separated servers: arbor, neo4j (two instances of each are started).
    #[arg(long, default_value = "arbor,neo4j")]
    targets: String,
    #[arg(long)]
    arbor_binary: Option<PathBuf>,
    #[arg(long, default_value = "sync")]
    durability: String,
    #[arg(long, default_value = "../shared/anchors/neo4j/neo4j-anchor")]
    neo4j_anchor: PathBuf,
    #[arg(long, default_value = "1g")]
    neo4j_heap: String,
    #[arg(long, default_value = "arbor-bench-copy")]
    work_dir: PathBuf,
    #[arg(long)]
    json: Option<PathBuf>,
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Replace the marked data-copy block in this file (e.g. BENCHMARKS.md).
    #[arg(long)]
    benchmarks_md: Option<PathBuf>,
    #[arg(long, default_value_t = 180)]
    start_timeout: u64,
}

pub fn copy(a: CopyArgs) -> anyhow::Result<()> {
    use arbor_mgbench::copy::{self, CopyOptions, Strategy};
    let strategies = a
        .strategies
        .split(',')
        .map(|s| Strategy::parse(s.trim()).with_context(|| format!("unknown strategy {s}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let targets = a
        .targets
        .split(',')
        .map(|t| match t.trim() {
            "arbor" => Ok(ServerKind::Arbor {
                binary: match &a.arbor_binary {
                    Some(b) => abs(b)?,
                    None => sibling_arbor()?,
                },
                durability: Some(a.durability.clone()),
            }),
            "neo4j" => {
                Ok(ServerKind::Neo4j { anchor: abs(&a.neo4j_anchor)?, heap: a.neo4j_heap.clone() })
            }
            other => bail!("unknown target {other} (arbor|neo4j)"),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let o = CopyOptions {
        nodes: a.nodes,
        batch: a.batch,
        writers: a.writers,
        queue: a.queue,
        strategies,
        targets,
        work_dir: abs(&a.work_dir)?,
        start_timeout: Duration::from_secs(a.start_timeout),
        verbose: true,
    };
    let load0 = metrics::load_average();
    let records = copy::run(&o, |r| {
        eprintln!(
            "[copy] {:>5} {:<15} {:>8.2} s  {:>9.0} nodes/s  CPU s client {:.1} source {:.1} target {:.1}  client peak {:>6.0} MiB (base {:.0})  {}",
            r.target,
            r.strategy.name(),
            r.seconds,
            r.nodes as f64 / r.seconds.max(1e-9),
            r.client_cpu_seconds,
            r.source_cpu_seconds,
            r.target_cpu_seconds,
            r.client_peak_rss_kib as f64 / 1024.0,
            r.client_base_rss_kib as f64 / 1024.0,
            if r.ok() { "verified".to_string() } else { format!("FAILED {:?}", r.error) }
        )
    })?;
    let load1 = metrics::load_average();
    let header = format!(
        "{} nodes (5 properties each), batch {}, {} writers, queue {} batches; {} CPUs, load average {} -> {}; Arbor durability {}.",
        a.nodes,
        a.batch,
        a.writers,
        a.queue,
        metrics::cpu_count(),
        load0.map(|l| format!("{l:.1}")).unwrap_or_default(),
        load1.map(|l| format!("{l:.1}")).unwrap_or_default(),
        a.durability
    );
    let md = copy::to_markdown(&records, &header);
    println!("{md}");
    if let Some(p) = &a.markdown {
        std::fs::write(p, &md).with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &a.json {
        let meta = json!({
            "nodes": a.nodes,
            "batch": a.batch,
            "writers": a.writers,
            "queue": a.queue,
            "load_average_start": load0,
            "load_average_end": load1,
        });
        std::fs::write(p, copy::to_json(&records, meta))
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &a.benchmarks_md {
        let doc = std::fs::read_to_string(p).unwrap_or_default();
        let block = format!("copy-{}", a.nodes);
        std::fs::write(p, report::splice(&doc, &block, md.trim_end()))
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if records.iter().any(|r| !r.ok()) {
        bail!("a copy strategy failed verification");
    }
    Ok(())
}
