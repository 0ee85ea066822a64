//! The mgBench runner: prepares a loaded copy of the data set per server (once, cached), then
//! for every run restores it, starts the server, applies the condition's warm-up, executes the
//! query list with N workers, stops the server and checks every answer against the reference.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arbor_bolt::client::{Client, ClientConfig};
use arbor_model::{Error, PropertyMap, Result, Status};

use crate::driver;
use crate::metrics::{self, Latency};
use crate::pokec::{self, Pokec, Size};
use crate::server::{self, Server, ServerKind, ServerStats};
use crate::verify::{Mode, Verifier};
use crate::workload::{self, Kind, MixConfig, Query, QuerySpec};

/// mgBench's database conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    Cold,
    Hot,
    Vulcanic,
}

impl Condition {
    pub fn parse(s: &str) -> Option<Condition> {
        match s {
            "cold" => Some(Condition::Cold),
            "hot" => Some(Condition::Hot),
            "vulcanic" => Some(Condition::Vulcanic),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Condition::Cold => "cold",
            Condition::Hot => "hot",
            Condition::Vulcanic => "vulcanic",
        }
    }
}

/// Which workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    Isolated,
    Mixed,
    Realistic,
}

impl WorkloadKind {
    pub fn parse(s: &str) -> Option<WorkloadKind> {
        match s {
            "isolated" => Some(WorkloadKind::Isolated),
            "mixed" => Some(WorkloadKind::Mixed),
            "realistic" => Some(WorkloadKind::Realistic),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Isolated => "isolated",
            WorkloadKind::Mixed => "mixed",
            WorkloadKind::Realistic => "realistic",
        }
    }
}

/// Everything a run needs.
#[derive(Clone, Debug)]
pub struct Options {
    pub size: Size,
    pub workers: usize,
    pub condition: Condition,
    pub workloads: Vec<WorkloadKind>,
    /// Isolated queries to run (and mixed base queries); default all 23.
    pub queries: Vec<&'static QuerySpec>,
    /// Queries per isolated run; with `runtime`, the lower bound (benchgraph v2+: 300).
    pub count: usize,
    /// mgBench's `--single-threaded-runtime-sec`: size each isolated run so that it would take
    /// this long single-threaded, estimated on the first target and reused for the others (so
    /// every server runs the same list). `None`: exactly `count` queries.
    pub runtime: Option<f64>,
    /// Queries per mixed / realistic run (benchgraph v2+: 500).
    pub mix_count: usize,
    /// `gen_pokec.py`.
    pub gen_script: PathBuf,
    /// Cache of generated data and loaded stores, and run directories.
    pub work_dir: PathBuf,
    /// Rows per `UNWIND` batch when loading.
    pub load_batch: usize,
    pub verify: bool,
    pub targets: Vec<ServerKind>,
    pub start_timeout: Duration,
    pub verbose: bool,
}

/// One measured run.
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub target: String,
    pub workload: WorkloadKind,
    /// `expansion_1`, or `W1`..`W4` for realistic.
    pub name: String,
    pub q: Option<u8>,
    pub count: usize,
    pub workers: usize,
    pub throughput: f64,
    pub wall_seconds: f64,
    pub mean_worker_seconds: f64,
    pub latency: Latency,
    /// Latency of the base query only (mixed), else of all queries.
    pub base_latency: Latency,
    pub rows_mean: f64,
    pub retries: usize,
    pub failed: usize,
    pub verified: usize,
    pub mismatches: Vec<String>,
    pub server: ServerStats,
    /// Server CPU seconds during the timed part only.
    pub server_cpu_run: f64,
    pub client_cpu: f64,
    pub load_avg: Option<f64>,
}

impl RunRecord {
    /// Share of the CPU used during the timed part that was the client's.
    pub fn client_share(&self) -> f64 {
        let total = self.client_cpu + self.server_cpu_run;
        if total > 0.0 {
            self.client_cpu / total
        } else {
            0.0
        }
    }

    pub fn ok(&self) -> bool {
        self.failed == 0 && self.mismatches.is_empty()
    }
}

/// How a target's data set was loaded.
#[derive(Clone, Debug)]
pub struct LoadRecord {
    pub target: String,
    pub seconds: f64,
    pub cached: bool,
    pub store_bytes: u64,
}

/// Everything measured in one invocation.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub loads: Vec<LoadRecord>,
    pub runs: Vec<RunRecord>,
    pub vertices: usize,
    pub edges: usize,
}

fn log(o: &Options, msg: &str) {
    if o.verbose {
        eprintln!("[mgbench] {msg}");
    }
}

fn dir_size(p: &std::path::Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else { return 0 };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Creates (once) the loaded copy of the data set for `kind`; returns its directory.
fn golden(o: &Options, kind: &ServerKind, data: &Pokec) -> Result<(PathBuf, LoadRecord)> {
    if let ServerKind::External { .. } = kind {
        // Someone else's server: load only if it holds no users yet; it is never restored.
        let t = Instant::now();
        let server = Server::start(kind, &o.work_dir, o.start_timeout)?;
        let mut c = Client::connect(&server.uri, &ClientConfig::default())?;
        let r = c.run_all("MATCH (n:User) RETURN count(n)", &PropertyMap::new())?;
        let users = match r.records.first().and_then(|r| r.first()) {
            Some(arbor_model::Value::Int(i)) => *i,
            _ => 0,
        };
        let cached = users != 0;
        if !cached {
            pokec::load(&mut c, data, o.load_batch, pokec::INDEX_NEO4J)?;
        }
        let seconds = t.elapsed().as_secs_f64();
        return Ok((
            PathBuf::new(),
            LoadRecord { target: kind.name().into(), seconds, cached, store_bytes: 0 },
        ));
    }
    let base = o.work_dir.join(format!("{}-{}", kind.name(), o.size.label()));
    let dir = base.join("golden");
    let marker = base.join("golden.ok");
    let want = format!("{} {}\n", data.n(), data.edge_count);
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(want.as_str()) && dir.is_dir() {
        return Ok((
            dir.clone(),
            LoadRecord {
                target: kind.name().into(),
                seconds: 0.0,
                cached: true,
                store_bytes: dir_size(&dir),
            },
        ));
    }
    let _ = std::fs::remove_file(&marker);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| Error::new(Status::Io, format!("{}: {e}", dir.display())))?;
    }
    std::fs::create_dir_all(&base)
        .map_err(|e| Error::new(Status::Io, format!("{}: {e}", base.display())))?;
    log(o, &format!("loading {} into {} ({})", o.size.label(), kind.name(), dir.display()));
    let t = Instant::now();
    let server = Server::start(kind, &dir, o.start_timeout)?;
    let mut c = Client::connect(&server.uri, &ClientConfig::default())?;
    pokec::load(&mut c, data, o.load_batch, pokec::INDEX_NEO4J)?;
    drop(c);
    server.stop()?;
    let seconds = t.elapsed().as_secs_f64();
    std::fs::write(&marker, want)
        .map_err(|e| Error::new(Status::Io, format!("{}: {e}", marker.display())))?;
    log(o, &format!("loaded in {seconds:.1} s"));
    Ok((
        dir.clone(),
        LoadRecord {
            target: kind.name().into(),
            seconds,
            cached: false,
            store_bytes: dir_size(&dir),
        },
    ))
}

/// Runs the warm-up of the condition (single worker). Returns how many extra non-User nodes it
/// created.
fn warm_up(o: &Options, uri: &str, list: &[Query]) -> Result<()> {
    match o.condition {
        Condition::Cold => Ok(()),
        Condition::Hot => {
            let mut c = Client::connect(uri, &ClientConfig::default())?;
            for q in workload::HOT_WARMUP {
                c.run_all(q, &PropertyMap::new())?;
            }
            Ok(())
        }
        Condition::Vulcanic => {
            let out = driver::run(uri, &ClientConfig::default(), list, 1)?;
            if out.failed() > 0 {
                return Err(Error::new(Status::Internal, "vulcanic warm-up had failing queries"));
            }
            Ok(())
        }
    }
}

struct Measured {
    outcome: driver::Outcome,
    stats: ServerStats,
    server_cpu_run: f64,
}

fn measure(o: &Options, kind: &ServerKind, golden: &Path, list: &[Query]) -> Result<Measured> {
    let run_dir = golden.with_file_name("run");
    if !matches!(kind, ServerKind::External { .. }) {
        server::restore(golden, &run_dir)?;
    }
    let server = Server::start(kind, &run_dir, o.start_timeout)?;
    warm_up(o, &server.uri, list)?;
    let before = server.stats();
    let outcome = driver::run(&server.uri, &ClientConfig::default(), list, o.workers)?;
    let after = server.stats();
    let stats = server.stop()?;
    Ok(Measured { outcome, stats, server_cpu_run: after.cpu_seconds - before.cpu_seconds })
}

#[allow(clippy::too_many_arguments)]
fn record(
    kind: &ServerKind,
    wl: WorkloadKind,
    name: String,
    q: Option<u8>,
    list: &[Query],
    m: Measured,
    verifier: Option<&mut Verifier<'_>>,
    mode: Mode,
    base: Option<&'static QuerySpec>,
) -> RunRecord {
    let out = &m.outcome;
    let mut mismatches = Vec::new();
    let mut verified = 0;
    if let Some(v) = verifier {
        for (i, (q, a)) in list.iter().zip(&out.answers).enumerate() {
            if a.error.is_some() {
                continue;
            }
            match v.check(q, &a.rows, &a.summary, mode) {
                Ok(()) => verified += 1,
                Err(e) => {
                    if mismatches.len() < 5 {
                        mismatches.push(format!("#{i} Q{} id={}: {e}", q.spec.q, q.a));
                    }
                }
            }
        }
    }
    for a in out.answers.iter().filter_map(|a| a.error.as_ref()).take(3) {
        mismatches.push(format!("error: {a}"));
    }
    let base_lat: Vec<f64> = list
        .iter()
        .zip(&out.latencies)
        .filter(|(q, _)| base.is_none_or(|b| std::ptr::eq(q.spec, b)))
        .map(|(_, l)| *l)
        .collect();
    let rows: usize = out.answers.iter().map(|a| a.rows.len()).sum();
    let mean_worker = out.worker_durations.iter().sum::<f64>() / out.workers.max(1) as f64;
    RunRecord {
        target: kind.name().into(),
        workload: wl,
        name,
        q,
        count: out.count,
        workers: out.workers,
        throughput: out.throughput,
        wall_seconds: out.wall_seconds,
        mean_worker_seconds: mean_worker,
        latency: Latency::from_seconds(&out.latencies),
        base_latency: Latency::from_seconds(&base_lat),
        rows_mean: rows as f64 / out.count.max(1) as f64,
        retries: out.retries,
        failed: out.failed(),
        verified,
        mismatches,
        server: m.stats,
        server_cpu_run: m.server_cpu_run,
        client_cpu: out.client_cpu_seconds,
        load_avg: metrics::load_average(),
    }
}

fn mode_for(o: &Options, kind: &ServerKind, list: &[Query], isolated: bool) -> Mode {
    let warm = if o.condition == Condition::Hot { 3 } else { 0 };
    if let ServerKind::External { .. } = kind {
        // Earlier runs' writes stay: only monotone checks make sense.
        return Mode::Bounded { min_extra_nodes: 0, max_extra_nodes: i64::MAX / 4 };
    }
    if isolated {
        return Mode::Exact { extra_nodes: warm };
    }
    let vertex_writes = list.iter().filter(|q| q.spec.q == 21).count() as i64;
    let passes = if o.condition == Condition::Vulcanic { 2 } else { 1 };
    Mode::Bounded { min_extra_nodes: warm, max_extra_nodes: warm + vertex_writes * passes }
}

/// mgBench's `get_query_cache_count`: prime with one query, then time 1, 10, 100, ... queries
/// single-threaded until the extrapolated count for `runtime` seconds is within 10x of the
/// next step; never below `o.count`.
fn calibrate(
    o: &Options,
    kind: &ServerKind,
    golden: &Path,
    spec: &'static QuerySpec,
    n: i64,
    runtime: f64,
) -> Result<usize> {
    let run_dir = golden.with_file_name("run");
    if !matches!(kind, ServerKind::External { .. }) {
        server::restore(golden, &run_dir)?;
    }
    let server = Server::start(kind, &run_dir, o.start_timeout)?;
    let cfg = ClientConfig::default();
    driver::run(&server.uri, &cfg, &workload::isolated(spec, 1, n), 1)?;
    let result = calibrated_count(runtime, o.count, |count| {
        let out = driver::run(&server.uri, &cfg, &workload::isolated(spec, count, n), 1)?;
        Ok(out.worker_durations.iter().sum::<f64>())
    });
    server.stop()?;
    result
}

/// The steps of [`calibrate`]: `time(count)` runs `count` queries and returns the seconds they
/// took; counts grow tenfold until the count extrapolated for `runtime` seconds is within 10x of
/// the next step (or 10 M queries). Never below `min`.
fn calibrated_count(
    runtime: f64,
    min: usize,
    mut time: impl FnMut(usize) -> Result<f64>,
) -> Result<usize> {
    let mut count = 1usize;
    loop {
        let per_query = time(count)? / count as f64;
        let should = (runtime / per_query.max(1e-9)) as usize;
        if (should as f64) / ((count * 10) as f64) < 10.0 || count >= 10_000_000 {
            return Ok(should.max(min));
        }
        count *= 10;
    }
}

/// Runs everything `o` asks for against every target, in order. `on_record` sees each run as
/// it completes (progress output).
/// One measured run of a workload: its name, query number, query list and (mixed) base query.
type Run = (String, Option<u8>, Vec<Query>, Option<&'static QuerySpec>);

pub fn run(o: &Options, mut on_record: impl FnMut(&RunRecord)) -> Result<Report> {
    let dir = pokec::generate(&o.gen_script, &o.work_dir, &o.size)?;
    let data = Pokec::read(&dir)?;
    let n = data.n() as i64;
    let mut report = Report { vertices: data.n(), edges: data.edge_count, ..Report::default() };
    let mut verifier = Verifier::new(&data);
    let mut counts: std::collections::HashMap<u8, usize> = std::collections::HashMap::new();
    for kind in &o.targets {
        let (golden_dir, load) = golden(o, kind, &data)?;
        report.loads.push(load);
        if let (Some(rt), true) = (o.runtime, o.workloads.contains(&WorkloadKind::Isolated)) {
            for s in &o.queries {
                if let std::collections::hash_map::Entry::Vacant(slot) = counts.entry(s.q) {
                    let c = calibrate(o, kind, &golden_dir, s, n, rt)?;
                    log(o, &format!("{}: {c} queries for {rt} s single-threaded", s.name));
                    slot.insert(c);
                }
            }
        }
        for &wl in &o.workloads {
            let runs: Vec<Run> = match wl {
                WorkloadKind::Isolated => o
                    .queries
                    .iter()
                    .map(|s| {
                        let c = counts.get(&s.q).copied().unwrap_or(o.count);
                        (s.name.to_string(), Some(s.q), workload::isolated(s, c, n), None)
                    })
                    .collect(),
                WorkloadKind::Mixed => workload::mixed(&MixConfig::mixed_preset(o.mix_count), n)
                    .map_err(Error::argument)?
                    .into_iter()
                    .filter(|(b, _)| o.queries.iter().any(|s| std::ptr::eq(*s, *b)))
                    .map(|(b, l)| (b.name.to_string(), Some(b.q), l, Some(b)))
                    .collect(),
                WorkloadKind::Realistic => MixConfig::realistic_presets(o.mix_count)
                    .into_iter()
                    .map(|(w, cfg)| {
                        workload::realistic(&cfg, n).map(|l| (w.to_string(), None, l, None))
                    })
                    .collect::<std::result::Result<_, _>>()
                    .map_err(Error::argument)?,
            };
            for (name, q, list, base) in runs {
                log(o, &format!("{} {} {name} ({} queries)", kind.name(), wl.name(), list.len()));
                let m = measure(o, kind, &golden_dir, &list)?;
                let mode = mode_for(o, kind, &list, wl == WorkloadKind::Isolated);
                let v = if o.verify { Some(&mut verifier) } else { None };
                let r = record(kind, wl, name, q, &list, m, v, mode, base);
                on_record(&r);
                report.runs.push(r);
            }
        }
    }
    Ok(report)
}

/// The kinds of a query list, for reports (`w/r/u/a` counts).
pub fn kind_counts(list: &[Query]) -> [usize; 5] {
    let mut c = [0; 5];
    for q in list {
        c[match q.spec.kind {
            Kind::Write => 0,
            Kind::Read => 1,
            Kind::Update => 2,
            Kind::Analytical => 3,
            Kind::Aggregate => 4,
        }] += 1;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::calibrated_count;

    #[test]
    fn calibration_grows_tenfold_until_the_extrapolation_is_close() {
        let mut seen = Vec::new();
        let c = calibrated_count(0.05, 20, |n| {
            seen.push(n);
            Ok(n as f64 * 1e-5)
        })
        .unwrap();
        assert_eq!(c, 5_000);
        assert_eq!(seen, [1, 10, 100]);
    }

    #[test]
    fn calibration_never_goes_below_the_lower_bound_and_stops_at_ten_million() {
        assert_eq!(calibrated_count(0.05, 300, |n| Ok(n as f64)).unwrap(), 300);
        let mut last = 0;
        let c = calibrated_count(1_000.0, 1, |n| {
            last = n;
            Ok(0.0)
        })
        .unwrap();
        assert_eq!(last, 10_000_000);
        assert_eq!(c, (1_000.0_f64 / 1e-9) as usize);
        let err = calibrated_count(0.05, 1, |_| Err(arbor_model::Error::internal("down")));
        assert!(err.is_err());
    }
}
