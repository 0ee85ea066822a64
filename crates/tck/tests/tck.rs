//! The TCK gate: runs every dev-split scenario in-process and compares the failures with
//! `tests/tck/expected-failures.txt`. Fails on a failure the file does not list and on a listed
//! scenario that now passes. `ARBOR_TCK_WRITE_EXPECTED=1` rewrites the file from this run instead.

use arbor_tck::{expected, expected_failures_path, load_cases, locate_tck_dir, run_cases};

#[test]
fn tck() {
    let Some(dir) = locate_tck_dir() else {
        panic!("cannot find the openCypher TCK: set ARBOR_TCK_DIR to the folder holding features/");
    };
    let cases = match load_cases(&dir, None) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    assert!(!cases.is_empty(), "no scenarios under {}", dir.display());
    let report = run_cases(&cases, &dir, arbor_tck::default_timeout(), |_| {});
    println!("{}", report.summary());
    let crashes = report.crashes();
    if !crashes.is_empty() {
        println!("Panics and timeouts:\n{crashes}");
    }
    let path = expected_failures_path();
    if std::env::var("ARBOR_TCK_WRITE_EXPECTED").is_ok_and(|v| v == "1") {
        if let Err(e) = std::fs::write(&path, expected::render(&report)) {
            panic!("cannot write {}: {e}", path.display());
        }
        println!("wrote {} ({} failures)", path.display(), report.failed());
        return;
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => panic!("cannot read {}: {e}", path.display()),
    };
    let expected = match expected::parse(&text) {
        Ok(x) => x,
        Err(e) => panic!("{}: {e}", path.display()),
    };
    let verdict = expected::compare(&report, &expected, true);
    assert!(verdict.ok(), "TCK results differ from {}:\n{}", path.display(), verdict.describe());
}
