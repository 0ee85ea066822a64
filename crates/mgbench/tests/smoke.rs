//! CI smoke test: the isolated, mixed and realistic workloads at a tiny size (a 500-user custom
//! Pokec) against an in-process Arbor server, with every answer verified.

use std::path::PathBuf;
use std::time::Duration;

use arbor_mgbench::bench::{self, Condition, Options, WorkloadKind};
use arbor_mgbench::server::ServerKind;
use arbor_mgbench::workload;

fn gen_script() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/gen_pokec.py");
    let python = std::process::Command::new("python3").arg("--version").output().is_ok();
    (p.is_file() && python).then_some(p)
}

fn options(work: &std::path::Path, script: PathBuf) -> Options {
    Options {
        size: arbor_mgbench::pokec::Size::Custom { vertices: 500, edges: 4000 },
        workers: 2,
        condition: Condition::Hot,
        workloads: vec![WorkloadKind::Isolated],
        queries: [
            "Q1", "Q2", "Q4", "Q5", "Q9", "Q15", "Q17", "Q18", "Q19", "Q20", "Q21", "Q22", "Q23",
        ]
        .iter()
        .map(|q| workload::lookup(q).unwrap())
        .collect(),
        count: 20,
        runtime: None,
        mix_count: 40,
        gen_script: script,
        work_dir: work.to_path_buf(),
        load_batch: 300,
        verify: true,
        targets: vec![ServerKind::InProcess],
        start_timeout: Duration::from_secs(30),
        verbose: true,
    }
}

#[test]
fn isolated_mixed_realistic_tiny() {
    let Some(script) = gen_script() else {
        eprintln!("gen_pokec.py or python3 missing: skipping");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mut o = options(work.path(), script);
    let report = bench::run(&o, |_| {}).unwrap();
    assert_eq!(report.runs.len(), o.queries.len());
    for r in &report.runs {
        assert!(r.ok(), "{} failed: {:?}", r.name, r.mismatches);
        assert_eq!(r.verified, r.count, "{}", r.name);
        assert!(r.throughput > 0.0);
    }
    // Second invocation reuses the loaded store; mixed + realistic, cold.
    o.workloads = vec![WorkloadKind::Mixed, WorkloadKind::Realistic];
    o.condition = Condition::Cold;
    o.queries = vec![workload::lookup("Q5").unwrap(), workload::lookup("Q2").unwrap()];
    let report = bench::run(&o, |_| {}).unwrap();
    assert!(report.loads.iter().all(|l| l.cached));
    assert_eq!(report.runs.len(), 2 + 4);
    for r in &report.runs {
        assert!(r.ok(), "{} failed: {:?}", r.name, r.mismatches);
    }
    let md = arbor_mgbench::report::to_markdown(&report, o.condition, "t");
    assert!(md.contains("W4"), "{md}");
    // mgBench's calibration wired in: at least the lower bound for 0.05 s.
    o.workloads = vec![WorkloadKind::Isolated];
    o.queries = vec![workload::lookup("Q23").unwrap()];
    o.runtime = Some(0.05);
    let report = bench::run(&o, |_| {}).unwrap();
    // Its steps are unit tests of `calibrated_count` (timings here depend on the load).
    assert!(report.runs[0].count >= o.count, "count {}", report.runs[0].count);
    assert!(report.runs[0].ok());
}

#[test]
fn a_wrong_answer_is_caught() {
    let Some(script) = gen_script() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = arbor_mgbench::pokec::generate(
        &script,
        work.path(),
        &arbor_mgbench::pokec::Size::Custom { vertices: 200, edges: 1500 },
    )
    .unwrap();
    let data = arbor_mgbench::pokec::Pokec::read(&dir).unwrap();
    let mut v = arbor_mgbench::verify::Verifier::new(&data);
    let spec = workload::lookup("Q5").unwrap();
    let q = workload::isolated(spec, 1, 200)[0];
    let s = data.index(q.a).unwrap();
    let mut rows: Vec<Vec<arbor_model::Value>> =
        data.out(s).iter().map(|&w| vec![arbor_model::Value::Int(i64::from(w) + 1)]).collect();
    let mode = arbor_mgbench::verify::Mode::Exact { extra_nodes: 0 };
    v.check(&q, &rows, &Default::default(), mode).unwrap();
    rows.push(vec![arbor_model::Value::Int(1)]);
    assert!(v.check(&q, &rows, &Default::default(), mode).is_err());
}

#[test]
fn copy_tiny_all_strategies_verified() {
    use arbor_mgbench::copy::{self, CopyOptions, Strategy};
    let work = tempfile::tempdir().unwrap();
    let o = CopyOptions {
        nodes: 2000,
        batch: 250,
        writers: 2,
        queue: 2,
        strategies: Strategy::ALL.to_vec(),
        targets: vec![ServerKind::InProcess],
        work_dir: work.path().to_path_buf(),
        start_timeout: Duration::from_secs(30),
        verbose: false,
    };
    let records = copy::run(&o, |_| {}).unwrap();
    assert_eq!(records.len(), 3);
    for r in &records {
        assert!(r.ok(), "{:?}", r);
        assert_eq!(r.copied, 2000);
    }
}
