//! `tests/tck/expected-failures.txt`: the scenarios known to fail, one `id # reason` per line
//! (`#` lines are comments). CI fails on a failure not listed there and on a listed scenario that
//! now passes, so the file only ever shrinks.

use std::collections::BTreeMap;

use crate::Report;

/// Parses the file into `id -> reason`.
pub fn parse(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (id, reason) = line.split_once(" # ").unwrap_or((line, ""));
        if out.insert(id.trim().to_string(), reason.trim().to_string()).is_some() {
            return Err(format!("line {}: duplicate id `{}`", n + 1, id.trim()));
        }
    }
    Ok(out)
}

/// A reason fit for one line of the file: the first line of the failure, shortened.
fn one_line(reason: &str) -> String {
    let first = reason.lines().next().unwrap_or("").replace(" # ", " - ");
    let mut s: String = first.chars().take(200).collect();
    if first.chars().count() > 200 {
        s.push('…');
    }
    s
}

/// Renders the file from a run: every failing scenario, in run order.
pub fn render(report: &Report) -> String {
    let mut out = String::from(
        "# openCypher TCK scenarios Arbor is known to fail (in-process run of crates/tck).\n\
         # Format: <feature path under features/>:<scenario name>[:<example index>] # <reason>\n\
         # `cargo test -p arbor-tck` fails on any failure not listed here and on any listed\n\
         # scenario that passes: remove lines as features land. Regenerate with\n\
         # ARBOR_TCK_WRITE_EXPECTED=1 cargo test -p arbor-tck --test tck\n",
    );
    for r in &report.results {
        if let Some(reason) = r.reason() {
            out.push_str(&format!("{} # {}\n", r.id, one_line(&reason)));
        }
    }
    out
}

/// How a run compares with the file.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Failing scenarios the file does not list: `(id, reason)`.
    pub unexpected_failures: Vec<(String, String)>,
    /// Listed scenarios that passed.
    pub now_passing: Vec<String>,
    /// Listed ids that match no scenario of the run (only checked for full runs).
    pub unknown: Vec<String>,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.unexpected_failures.is_empty()
            && self.now_passing.is_empty()
            && self.unknown.is_empty()
    }

    pub fn describe(&self) -> String {
        let mut out = String::new();
        for (id, reason) in &self.unexpected_failures {
            out.push_str(&format!("unexpected failure: {id}\n"));
            for line in reason.lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
        for id in &self.now_passing {
            out.push_str(&format!("now passing, remove from expected-failures: {id}\n"));
        }
        for id in &self.unknown {
            out.push_str(&format!("unknown scenario in expected-failures, remove it: {id}\n"));
        }
        out
    }
}

/// Compares a run with the expected failures. `full_run` enables the unknown-id check.
pub fn compare(report: &Report, expected: &BTreeMap<String, String>, full_run: bool) -> Verdict {
    let mut v = Verdict::default();
    let mut seen = std::collections::HashSet::new();
    for r in &report.results {
        seen.insert(r.id.as_str());
        match (r.reason(), expected.contains_key(&r.id)) {
            (Some(reason), false) => v.unexpected_failures.push((r.id.clone(), reason)),
            (None, true) => v.now_passing.push(r.id.clone()),
            _ => {}
        }
    }
    if full_run {
        v.unknown = expected.keys().filter(|id| !seen.contains(id.as_str())).cloned().collect();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CaseResult, Outcome};
    use std::time::Duration;

    fn result(id: &str, outcome: Outcome) -> CaseResult {
        CaseResult {
            id: id.into(),
            folder: "f".into(),
            outcome,
            query: None,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn round_trip_and_compare() {
        let report = Report {
            results: vec![
                result("a.feature:[1] x", Outcome::Passed),
                result(
                    "a.feature:[2] y #Example: <e>:3",
                    Outcome::Failed("bad # thing\nmore".into()),
                ),
                result("a.feature:[3] z", Outcome::Timeout),
            ],
        };
        let text = render(&report);
        let parsed = parse(&text).unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed["a.feature:[2] y #Example: <e>:3"], "bad - thing");
        assert_eq!(parsed["a.feature:[3] z"], "timeout");
        assert!(compare(&report, &parsed, true).ok());

        let mut stale = parsed.clone();
        stale.insert("a.feature:[1] x".into(), "old".into());
        stale.insert("gone.feature:[9] q".into(), "old".into());
        stale.remove("a.feature:[3] z");
        let v = compare(&report, &stale, true);
        assert_eq!(v.now_passing, vec!["a.feature:[1] x".to_string()]);
        assert_eq!(v.unknown, vec!["gone.feature:[9] q".to_string()]);
        assert_eq!(v.unexpected_failures.len(), 1);
        assert!(!v.ok());
        assert!(compare(&report, &stale, false).unknown.is_empty());
        assert!(parse("x # a\nx # b\n").is_err());
    }
}
