//! `arbor-tck`: runs the openCypher TCK in-process and prints a per-folder table.
//!
//! `cargo run -p arbor-tck --release -- [--filter SUBSTRING] [--verbose] [--clusters N]
//! [--timeout SECS] [--tck DIR] [--check] [--bolt]`. `--check` also compares with
//! `tests/tck/expected-failures.txt` and exits non-zero on a mismatch. `--bolt` runs the
//! scenarios over Bolt against `$ARBOR_BIN` (default `target/release/arbor`) started on a free
//! port; `--bolt-in-process` runs arbor_bolt's server on a thread of this process instead
//! (same protocol path over a real socket, no binary needed).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use arbor_tck::{expected, load_cases, locate_tck_dir, run_cases_on, Target};

struct Args {
    filter: Option<String>,
    verbose: bool,
    clusters: usize,
    timeout: Duration,
    tck: Option<PathBuf>,
    check: bool,
    bolt: bool,
    bolt_in_process: bool,
}

const USAGE: &str = "usage: arbor-tck [--filter SUBSTRING] [--verbose] [--clusters N] \
                     [--timeout SECS] [--tck DIR] [--check] [--bolt | --bolt-in-process]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        filter: None,
        verbose: false,
        clusters: 15,
        timeout: arbor_tck::default_timeout(),
        tck: None,
        check: false,
        bolt: false,
        bolt_in_process: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--filter" => args.filter = Some(value("--filter")?),
            "--verbose" | "-v" => args.verbose = true,
            "--check" => args.check = true,
            "--bolt" => args.bolt = true,
            "--bolt-in-process" => {
                args.bolt = true;
                args.bolt_in_process = true
            }
            "--clusters" => {
                args.clusters = value("--clusters")?.parse().map_err(|_| "bad --clusters")?
            }
            "--timeout" => {
                let s: u64 = value("--timeout")?.parse().map_err(|_| "bad --timeout")?;
                args.timeout = Duration::from_secs(s);
            }
            "--tck" => args.tck = Some(PathBuf::from(value("--tck")?)),
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let Some(dir) = args.tck.clone().or_else(locate_tck_dir) else {
        eprintln!("cannot find the TCK (set ARBOR_TCK_DIR or pass --tck DIR)");
        return ExitCode::from(2);
    };
    let cases = match load_cases(&dir, args.filter.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // Over Bolt: a server process for the whole run, killed when `_server` drops.
    let (_server, target) = if args.bolt {
        let bin = arbor_tck::bolt::default_binary();
        let started = if args.bolt_in_process {
            arbor_tck::bolt::Server::start_in_process()
        } else {
            arbor_tck::bolt::Server::start(&bin)
        };
        match started {
            Ok(server) => {
                let what = if args.bolt_in_process {
                    "arbor_bolt server thread".to_string()
                } else {
                    format!("{} serve", bin.display())
                };
                eprintln!("over Bolt: {what} on {}", server.addr);
                let t = arbor_tck::bolt::BoltTarget::new(&server.addr, args.timeout);
                (Some(server), Target::Bolt(std::sync::Arc::new(t)))
            }
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    } else {
        (None, Target::InProcess)
    };
    eprintln!("running {} scenarios from {}", cases.len(), dir.display());
    let mut done = 0usize;
    let report = run_cases_on(&cases, &dir, args.timeout, &target, |r| {
        done += 1;
        if done.is_multiple_of(100) {
            eprint!("\r{done}/{}", cases.len());
            let _ = std::io::stderr().flush();
        }
        if !r.passed() && matches!(r.outcome, arbor_tck::Outcome::Timeout) {
            eprintln!("\ntimeout: {}", r.id);
        }
    });
    eprintln!();
    if args.verbose {
        print!("{}", report.failures());
        println!();
    }
    let crashes = report.crashes();
    if !crashes.is_empty() {
        println!("Panics and timeouts:\n{crashes}");
    }
    if args.clusters > 0 && report.failed() > 0 {
        println!("Most common failure reasons:");
        for (key, n) in report.clusters().into_iter().take(args.clusters) {
            println!("{n:>5}  {key}");
        }
        println!();
    }
    print!("{}", report.summary());
    if args.check {
        let path = arbor_tck::expected_failures_path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let verdict = match expected::parse(&text) {
            Ok(exp) => expected::compare(&report, &exp, args.filter.is_none()),
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        if !verdict.ok() {
            print!("{}", verdict.describe());
            return ExitCode::FAILURE;
        }
        println!("matches {}", path.display());
    }
    ExitCode::SUCCESS
}
