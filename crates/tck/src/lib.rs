//! Arbor's openCypher TCK harness: parses the Gherkin feature files (own small parser, see
//! [`gherkin`]), runs every scenario in-process against a fresh `Database::in_memory()`
//! ([`steps`]), and compares results the TCK way ([`values`]).
//!
//! Each scenario runs on its own thread under a watchdog: a scenario slower than the timeout is
//! interrupted (the session's interrupt flag is raised) and counted as a `timeout` failure; a
//! panic is caught and counted as a failure carrying the panic message and location. Scenarios
//! run one at a time (the build machine is small and shared).
//!
//! Scenario ids are `<feature path relative to features/>:<scenario name>[:<example index>]`,
//! where the example index is the outline row's `tck_example_index`. The expected-failures file
//! ([`expected`]) lists ids with a one-line reason.
//!
//! Scenarios run in process ([`Target::InProcess`]) or over Bolt against a spawned
//! `arbor serve` ([`Target::Bolt`], see [`bolt`]); the steps are the same.

pub mod bolt;
pub mod expected;
pub mod gherkin;
pub mod steps;
pub mod values;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Once};
use std::thread;
use std::time::{Duration, Instant};

use gherkin::TestCase;
pub use steps::Target;

/// Finds the TCK folder (the one holding `features/` and `graphs/`): `$ARBOR_TCK_DIR`, else
/// `../shared/tck` next to the workspace, else `/work/shared/tck`.
pub fn locate_tck_dir() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(d) = std::env::var("ARBOR_TCK_DIR") {
        candidates.push(PathBuf::from(d));
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    candidates.push(manifest.join("../../../shared/tck"));
    candidates.push(PathBuf::from("/work/shared/tck"));
    candidates.into_iter().find(|c| c.join("features").is_dir())
}

/// The workspace's `tests/tck/expected-failures.txt`.
pub fn expected_failures_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/tck/expected-failures.txt")
}

fn collect_features(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            collect_features(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "feature") {
            out.push(path);
        }
    }
    Ok(())
}

/// Loads and expands every feature under `tck_dir/features`, sorted by path, skipping `@ignore`
/// scenarios and keeping those whose id contains `filter`.
pub fn load_cases(tck_dir: &Path, filter: Option<&str>) -> Result<Vec<TestCase>, String> {
    let root = tck_dir.join("features");
    let mut files = Vec::new();
    collect_features(&root, &mut files)?;
    files.sort();
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for file in files {
        let rel = file
            .strip_prefix(&root)
            .map_err(|e| e.to_string())?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                errors.push(format!("{rel}: {e}"));
                continue;
            }
        };
        let feature = match gherkin::parse_feature(&text) {
            Ok(f) => f,
            Err(e) => {
                errors.push(format!("{rel}: {e}"));
                continue;
            }
        };
        for mut case in gherkin::expand(&feature, &rel) {
            if case.tags.iter().any(|t| t == "@ignore") {
                continue;
            }
            // Ids must be unique for the expected-failures file; disambiguate just in case.
            if !seen.insert(case.id.clone()) {
                let mut n = 2;
                while !seen.insert(format!("{} ({n})", case.id)) {
                    n += 1;
                }
                case.id = format!("{} ({n})", case.id);
            }
            if filter.is_none_or(|f| case.id.contains(f)) {
                cases.push(case);
            }
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(format!("cannot parse feature files:\n  {}", errors.join("\n  ")))
    }
}

/// How a scenario ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Passed,
    /// A step failed; the reason's first line summarises it.
    Failed(String),
    /// The scenario did not finish in time.
    Timeout,
    /// The engine (or harness) panicked: message and location.
    Panicked(String),
}

/// One scenario's result.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub id: String,
    pub folder: String,
    pub outcome: Outcome,
    /// The query running when a timeout or panic struck.
    pub query: Option<String>,
    pub elapsed: Duration,
}

impl CaseResult {
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Passed
    }

    /// The full failure reason (`None` when passed).
    pub fn reason(&self) -> Option<String> {
        match &self.outcome {
            Outcome::Passed => None,
            Outcome::Failed(r) => Some(r.clone()),
            Outcome::Timeout => Some("timeout".into()),
            Outcome::Panicked(m) => Some(format!("panic: {m}")),
        }
    }
}

/// Results of a run, in scenario order.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub results: Vec<CaseResult>,
}

thread_local! {
    /// The last panic on this thread, recorded by the hook (message with location).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Scenario threads are named with this prefix; the panic hook stays quiet for them only.
const THREAD_PREFIX: &str = "tck-scenario";

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let ours = thread::current().name().is_some_and(|n| n.starts_with(THREAD_PREFIX));
            if !ours {
                previous(info);
                return;
            }
            let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = info.payload().downcast_ref::<String>() {
                s.clone()
            } else {
                "non-string panic payload".to_string()
            };
            let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line()));
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{}", at.unwrap_or_default())));
        }));
    });
}

/// Stack for scenario threads: deeply nested expressions recurse in the parser and evaluator.
const SCENARIO_STACK: usize = 64 << 20;

/// Runs one scenario in process on a fresh thread, with a timeout and panic capture.
pub fn run_one(case: &TestCase, tck_dir: &Path, timeout: Duration) -> CaseResult {
    run_one_on(case, tck_dir, timeout, &Target::InProcess)
}

/// Runs one scenario against `target` on a fresh thread, with a timeout and panic capture.
pub fn run_one_on(
    case: &TestCase,
    tck_dir: &Path,
    timeout: Duration,
    target: &Target,
) -> CaseResult {
    let started = Instant::now();
    let (c, dir, t) = (case.clone(), tck_dir.to_path_buf(), target.clone());
    let (outcome, query) =
        run_guarded(move |shared| steps::run_case_on(&c, &dir, shared, &t), timeout);
    CaseResult {
        id: case.id.clone(),
        folder: case.folder.clone(),
        outcome,
        query,
        elapsed: started.elapsed(),
    }
}

/// Runs `body` on its own thread: catches panics (message and location) and gives up after
/// `timeout`, raising the session's interrupt flag so a runaway query stops. Returns the outcome
/// and, for panics and timeouts, the query that was running.
fn run_guarded<F>(body: F, timeout: Duration) -> (Outcome, Option<String>)
where
    F: FnOnce(&Mutex<steps::Shared>) -> Result<(), String> + Send + 'static,
{
    install_panic_hook();
    let shared = Arc::new(Mutex::new(steps::Shared::default()));
    let (tx, rx) = mpsc::channel();
    let spawned = {
        let shared = shared.clone();
        thread::Builder::new().name(THREAD_PREFIX.into()).stack_size(SCENARIO_STACK).spawn(
            move || {
                let r = panic::catch_unwind(AssertUnwindSafe(|| body(&shared)));
                let r = r.map_err(|_| {
                    LAST_PANIC
                        .with(|p| p.borrow_mut().take())
                        .unwrap_or_else(|| "unknown panic".to_string())
                });
                let _ = tx.send(r);
            },
        )
    };
    let handle = match spawned {
        Ok(h) => h,
        Err(e) => return (Outcome::Failed(format!("cannot spawn scenario thread: {e}")), None),
    };
    let current_query = || shared.lock().ok().and_then(|s| s.current_query.clone());
    let result = match rx.recv_timeout(timeout) {
        Ok(Ok(Ok(()))) => (Outcome::Passed, None),
        Ok(Ok(Err(reason))) => (Outcome::Failed(reason), None),
        Ok(Err(panic)) => (Outcome::Panicked(panic), current_query()),
        Err(RecvTimeoutError::Timeout) => {
            // If the thread is stuck outside the executor it leaks; acceptable for a test run.
            if let Ok(s) = shared.lock() {
                if let Some(flag) = &s.interrupt {
                    flag.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            }
            return (Outcome::Timeout, current_query());
        }
        Err(RecvTimeoutError::Disconnected) => {
            (Outcome::Panicked("scenario thread vanished".into()), current_query())
        }
    };
    let _ = handle.join();
    result
}

/// The per-scenario timeout: `$ARBOR_TCK_TIMEOUT_SECS`, default 10 s.
pub fn default_timeout() -> Duration {
    let secs = std::env::var("ARBOR_TCK_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(10);
    Duration::from_secs(secs)
}

/// Runs `cases` in process one after the other; `progress` sees each result as it comes.
pub fn run_cases(
    cases: &[TestCase],
    tck_dir: &Path,
    timeout: Duration,
    progress: impl FnMut(&CaseResult),
) -> Report {
    run_cases_on(cases, tck_dir, timeout, &Target::InProcess, progress)
}

/// Runs `cases` against `target` one after the other.
pub fn run_cases_on(
    cases: &[TestCase],
    tck_dir: &Path,
    timeout: Duration,
    target: &Target,
    mut progress: impl FnMut(&CaseResult),
) -> Report {
    let mut report = Report::default();
    for case in cases {
        let r = run_one_on(case, tck_dir, timeout, target);
        progress(&r);
        report.results.push(r);
    }
    report
}

impl Report {
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|r| r.passed()).count()
    }

    pub fn failed(&self) -> usize {
        self.results.len() - self.passed()
    }

    /// The per-folder table and the `N passed, N failed` line.
    pub fn summary(&self) -> String {
        let mut folders: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for r in &self.results {
            let e = folders.entry(r.folder.as_str()).or_default();
            if r.passed() {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
        let width = folders.keys().map(|k| k.len()).max().unwrap_or(6).max(6);
        let mut out =
            format!("{:<width$}  {:>6}  {:>6}  {:>6}\n", "folder", "passed", "failed", "total");
        for (folder, (p, f)) in &folders {
            out.push_str(&format!("{folder:<width$}  {p:>6}  {f:>6}  {:>6}\n", p + f));
        }
        out.push_str(&format!(
            "{:<width$}  {:>6}  {:>6}  {:>6}\n",
            "TOTAL",
            self.passed(),
            self.failed(),
            self.results.len()
        ));
        out.push_str(&format!("{} passed, {} failed\n", self.passed(), self.failed()));
        out
    }

    /// Every failure with its full reason.
    pub fn failures(&self) -> String {
        let mut out = String::new();
        for r in self.results.iter().filter(|r| !r.passed()) {
            out.push_str(&format!("FAIL {}\n", r.id));
            for line in r.reason().unwrap_or_default().lines() {
                out.push_str(&format!("    {line}\n"));
            }
            if let Some(q) = &r.query {
                out.push_str(&format!("    while running: {}\n", q.replace('\n', " ")));
            }
        }
        out
    }

    /// Panics and timeouts (engine bugs), with the query that was running.
    pub fn crashes(&self) -> String {
        let mut out = String::new();
        for r in &self.results {
            let kind = match &r.outcome {
                Outcome::Timeout => "TIMEOUT".to_string(),
                Outcome::Panicked(m) => format!("PANIC {m}"),
                _ => continue,
            };
            out.push_str(&format!("{kind}\n    scenario: {}\n", r.id));
            if let Some(q) = &r.query {
                out.push_str(&format!("    query: {}\n", q.replace('\n', " ")));
            }
        }
        out
    }

    /// Failures grouped by [`cluster_key`], largest first.
    pub fn clusters(&self) -> Vec<(String, usize)> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for r in &self.results {
            if let Some(reason) = r.reason() {
                *counts.entry(cluster_key(&reason)).or_default() += 1;
            }
        }
        let mut v: Vec<(String, usize)> = counts.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }
}

/// A coarse key for grouping failure reasons: the first line with quoted text, backticked names
/// and numbers blanked out.
pub fn cluster_key(reason: &str) -> String {
    let line = reason.lines().next().unwrap_or("");
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' | '\'' | '"' => {
                // Skip to the matching quote.
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                }
                out.push('…');
            }
            c if c.is_ascii_digit() => {
                while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    chars.next();
                }
                out.push('N');
            }
            c => out.push(c),
        }
    }
    let mut key: String = out.chars().take(140).collect();
    if out.chars().count() > 140 {
        key.push('…');
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_blank_out_specifics() {
        assert_eq!(
            cluster_key("wrong error: expected `x` got 12 rows\nmore"),
            "wrong error: expected … got N rows"
        );
    }

    #[test]
    fn guard_catches_panics_and_timeouts() {
        let (o, _) = run_guarded(|_| panic!("boom"), Duration::from_secs(5));
        assert!(matches!(&o, Outcome::Panicked(m) if m.starts_with("boom at ")), "{o:?}");
        let (o, q) = run_guarded(
            |shared| {
                if let Ok(mut s) = shared.lock() {
                    s.current_query = Some("RETURN 1".into());
                }
                thread::sleep(Duration::from_secs(3));
                Ok(())
            },
            Duration::from_millis(100),
        );
        assert_eq!(o, Outcome::Timeout);
        assert_eq!(q.as_deref(), Some("RETURN 1"));
        let (o, _) = run_guarded(|_| Err("nope".into()), Duration::from_secs(5));
        assert_eq!(o, Outcome::Failed("nope".into()));
    }

    #[test]
    fn scenarios_run_against_the_engine() {
        // A scenario whose only step panics inside the harness thread is reported, not fatal.
        let f = gherkin::parse_feature(
            "Feature: f\n Scenario: s\n  Given an empty graph\n  When executing query:\n   \"\"\"\n   RETURN 1 AS x\n   \"\"\"\n  Then the result should be, in any order:\n   | x |\n   | 1 |\n",
        )
        .unwrap();
        let cases = gherkin::expand(&f, "a/A.feature");
        let r = run_one(&cases[0], Path::new("/nonexistent"), Duration::from_secs(30));
        assert!(r.passed(), "{:?}", r.outcome);
        let f = gherkin::parse_feature(
            "Feature: f\n Scenario: s\n  Given an empty graph\n  When executing query:\n   \"\"\"\n   RETURN 1 AS x\n   \"\"\"\n  Then the result should be, in any order:\n   | y |\n   | 1 |\n",
        )
        .unwrap();
        let r = run_one(
            &gherkin::expand(&f, "a/A.feature")[0],
            Path::new("/x"),
            Duration::from_secs(30),
        );
        assert!(
            matches!(&r.outcome, Outcome::Failed(m) if m.starts_with("wrong columns")),
            "{:?}",
            r.outcome
        );
    }

    #[test]
    fn scenarios_run_over_bolt() {
        // A real socket and the Bolt client against arbor_bolt's server on a thread.
        let server = bolt::Server::start_in_process().unwrap();
        let target =
            Target::Bolt(Arc::new(bolt::BoltTarget::new(&server.addr, Duration::from_secs(30))));
        let f = gherkin::parse_feature(
            "Feature: f\n Scenario: s\n  Given an empty graph\n  And there exists a procedure test.p(in :: INTEGER?) :: (out :: STRING?):\n   | in | out |\n   | 1  | 'a' |\n  When executing query:\n   \"\"\"\n   CREATE (n:X {v: 1}) WITH n CALL test.p(n.v) YIELD out RETURN out\n   \"\"\"\n  Then the result should be, in any order:\n   | out |\n   | 'a' |\n  And the side effects should be:\n   | +nodes | 1 |\n   | +labels | 1 |\n   | +properties | 1 |\n",
        )
        .unwrap();
        let case = &gherkin::expand(&f, "a/A.feature")[0];
        // Twice: the second run must start from an empty graph and registry again.
        for _ in 0..2 {
            let r = run_one_on(case, Path::new("/nonexistent"), Duration::from_secs(30), &target);
            assert!(r.passed(), "{:?}", r.outcome);
        }
        let f = gherkin::parse_feature(
            "Feature: f\n Scenario: s\n  Given an empty graph\n  When executing query:\n   \"\"\"\n   CALL test.p(1)\n   \"\"\"\n  Then a ProcedureError should be raised at compile time: ProcedureNotFound\n",
        )
        .unwrap();
        let r = run_one_on(
            &gherkin::expand(&f, "a/A.feature")[0],
            Path::new("/nonexistent"),
            Duration::from_secs(30),
            &target,
        );
        assert!(r.passed(), "{:?}", r.outcome);
    }
}
