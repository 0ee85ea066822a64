//! Running a parsed golden file against a [`Target`]: each record's outcome is printed
//! ([`crate::render`]) and compared with the file; mismatches are reported with `file:line`, or,
//! in rewrite mode, written back into the file in place of the record.

use std::path::{Path, PathBuf};

use arbor_model::PropertyMap;

use crate::format::{parse, Kind, Record};
use crate::render;
use crate::target::Target;

/// The connection records without `connection NAME` use.
pub const DEFAULT_CONNECTION: &str = "default";

/// What running one file found.
#[derive(Debug, Default)]
pub struct FileOutcome {
    /// One message per mismatching record (empty: the file passed).
    pub failures: Vec<String>,
    /// Records rewritten in the file (rewrite mode only).
    pub rewritten: usize,
}

/// What a record observed, in the file's terms.
enum Observed {
    Ok,
    Rows(Vec<String>),
    Error { code: String, message: String },
}

/// Every `*.cypher` file under `dir`, sorted.
pub fn golden_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "cypher") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// Runs `path` against `target`. With `update`, mismatching records are rewritten in the file
/// instead of reported.
pub fn run_file(path: &Path, target: &mut dyn Target, update: bool) -> FileOutcome {
    let mut outcome = FileOutcome::default();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            outcome.failures.push(format!("{}: {e}", path.display()));
            return outcome;
        }
    };
    let records = match parse(&text) {
        Ok(r) => r,
        Err(e) => {
            outcome.failures.push(format!("{}: {e}", path.display()));
            return outcome;
        }
    };
    let mut replacements = Vec::new();
    for r in &records {
        let at = format!("{}:{} ({})", path.display(), r.line, target.name());
        let observed = match observe(target, r) {
            Ok(o) => o,
            Err(e) => {
                // The harness itself failed (restart, bad params): the rest would be noise.
                outcome.failures.push(format!("{at}: {e}"));
                break;
            }
        };
        if let Some(msg) = mismatch(r, &observed) {
            if update {
                replacements.push((r.span, rewrite(r, &observed)));
            } else {
                outcome.failures.push(format!("{at}: {msg}"));
            }
        }
    }
    if update && !replacements.is_empty() {
        outcome.rewritten = replacements.len();
        let new_text = apply(&text, &replacements);
        if let Err(e) = std::fs::write(path, new_text) {
            outcome.failures.push(format!("{}: rewriting: {e}", path.display()));
        }
    }
    outcome
}

/// Runs one record. `Err` only for failures of the harness, not of the statement.
fn observe(target: &mut dyn Target, r: &Record) -> Result<Observed, String> {
    let conn = r.connection.as_deref().unwrap_or(DEFAULT_CONNECTION);
    let query = r.query.trim();
    let restart = r.kind == Kind::Restart || (r.kind == Kind::Ok && query == ":restart");
    let crash = r.kind == Kind::Crash || (r.kind == Kind::Ok && query == ":crash");
    if restart || crash {
        let res = if restart { target.restart() } else { target.crash() };
        return res.map(|_| Observed::Ok).map_err(|e| format!("restart/crash failed: {e}"));
    }
    let params = match &r.params {
        Some(p) => render::params(p)?,
        None => PropertyMap::new(),
    };
    let result = match query {
        ":begin" => target.begin(conn).map(|_| None),
        ":commit" => target.commit(conn).map(|_| None),
        ":rollback" => target.rollback(conn).map(|_| None),
        _ if r.kind == Kind::Explain => {
            target.execute(conn, &format!("EXPLAIN {query}"), &params).map(Some)
        }
        _ => target.execute(conn, query, &params).map(Some),
    };
    Ok(match result {
        Err(e) => {
            let (code, message) = render::error_code(&e);
            Observed::Error { code, message }
        }
        Ok(None) => Observed::Ok,
        Ok(Some(reply)) if r.kind == Kind::Explain => match reply.plan {
            Some(plan) => Observed::Rows(render::plan(&plan)),
            None => Observed::Error {
                code: "<no plan>".into(),
                message: "EXPLAIN returned no plan in its summary".into(),
            },
        },
        Ok(Some(reply)) => {
            let mut rows: Vec<String> = reply.rows.iter().map(|v| render::row(v)).collect();
            if r.kind == (Kind::Query { ordered: false }) {
                rows.sort();
            }
            Observed::Rows(rows)
        }
    })
}

/// Whether an expected code matches: equal, or (older files) a prefix ending at a `.`.
fn code_matches(expected: &str, actual: &str) -> bool {
    actual == expected || actual.strip_prefix(expected).is_some_and(|rest| rest.starts_with('.'))
}

/// `None` when the record holds; otherwise what differs.
fn mismatch(r: &Record, observed: &Observed) -> Option<String> {
    match (&r.kind, observed) {
        (Kind::Error { code, message }, Observed::Error { code: c, message: m }) => {
            if !code_matches(code, c) {
                Some(format!("expected error {code}, got {c}: {m}"))
            } else if message.as_ref().is_some_and(|s| !m.contains(s.as_str())) {
                Some(format!("expected an error message containing {message:?}, got {c}: {m}"))
            } else {
                None
            }
        }
        (Kind::Error { code, .. }, _) => Some(format!("expected error {code}, got success")),
        (_, Observed::Error { code, message }) => {
            Some(format!("{}\n  failed: {code}: {message}", r.query))
        }
        (Kind::Query { .. } | Kind::Explain, Observed::Rows(rows)) => {
            let mut expected = r.expected.clone().unwrap_or_default();
            if r.kind == (Kind::Query { ordered: false }) {
                expected.sort();
            }
            (rows != &expected).then(|| {
                format!(
                    "{}\n  expected:\n    {}\n  got:\n    {}",
                    r.query,
                    expected.join("\n    "),
                    rows.join("\n    ")
                )
            })
        }
        _ => None,
    }
}

/// The record's new text (header, query, and for results `----` plus the rows).
fn rewrite(r: &Record, observed: &Observed) -> Vec<String> {
    let header = match (&r.kind, observed) {
        (Kind::Error { code, message }, Observed::Error { code: c, message: m }) => {
            let keep = message.as_ref().filter(|s| code_matches(code, c) && m.contains(s.as_str()));
            match keep {
                Some(s) => format!("statement error {c} {s}"),
                None => format!("statement error {c}"),
            }
        }
        (_, Observed::Error { code, .. }) => {
            format!("statement error {code}")
        }
        (Kind::Error { .. }, _) => "statement ok".to_string(),
        (Kind::Query { ordered: true }, _) => "query ordered".to_string(),
        (Kind::Query { ordered: false }, _) => "query".to_string(),
        (Kind::Explain, _) => "query explain".to_string(),
        (Kind::Ok, _) => "statement ok".to_string(),
        (Kind::Restart, _) => "restart".to_string(),
        (Kind::Crash, _) => "crash".to_string(),
    };
    let mut out = vec![header];
    out.extend(r.query.lines().map(str::to_string));
    if let (Kind::Query { .. } | Kind::Explain, Observed::Rows(rows)) = (&r.kind, observed) {
        out.push("----".to_string());
        out.extend(rows.iter().cloned());
    }
    out
}

/// `text` with each `(span, lines)` replacing the lines of `span`; spans do not overlap.
fn apply(text: &str, replacements: &[((usize, usize), Vec<String>)]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut next = 0;
    for ((start, end), new) in replacements {
        out.extend(lines[next..*start].iter().map(|l| l.to_string()));
        out.extend(new.iter().cloned());
        next = *end;
    }
    out.extend(lines[next..].iter().map(|l| l.to_string()));
    let mut s = out.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::InProcess;

    // Goal: the rewrite mode fixes wrong expectations in place and the file then passes.
    // Method: a file with a wrong result, a wrong plan-less error and a passing record; run
    // with update, check the text, run again without.
    #[test]
    fn rewrite_mode_rewrites_only_mismatches() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.cypher");
        let text = "# keep me\nstatement ok\nCREATE (:A {x: 1}), (:A {x: 2})\n\nquery\nMATCH (a:A) RETURN a.x\n----\n7\n\nstatement ok\nRETURN 1 +\n\nstatement error Neo.ClientError.Statement.SyntaxError\nRETURN 2\n";
        std::fs::write(&path, text).unwrap();
        let mut t = InProcess::new().unwrap();
        let first = run_file(&path, &mut t, false);
        assert_eq!(first.failures.len(), 3, "{:?}", first.failures);
        let mut t = InProcess::new().unwrap();
        let out = run_file(&path, &mut t, true);
        assert_eq!(out.rewritten, 3, "{:?}", out.failures);
        let new = std::fs::read_to_string(&path).unwrap();
        assert!(new.starts_with("# keep me\nstatement ok\nCREATE"), "{new}");
        assert!(new.contains("query\nMATCH (a:A) RETURN a.x\n----\n1\n2\n"), "{new}");
        assert!(new.contains("statement error Neo.ClientError.Statement.SyntaxError\nRETURN 1 +"));
        assert!(new.contains("statement ok\nRETURN 2\n"), "{new}");
        let mut t = InProcess::new().unwrap();
        let again = run_file(&path, &mut t, false);
        assert!(again.failures.is_empty(), "{:?}", again.failures);
    }

    // Goal: legacy code prefixes match only at a `.` boundary.
    #[test]
    fn code_prefix_matches_at_dot_only() {
        assert!(code_matches("Neo.ClientError.Statement", "Neo.ClientError.Statement.TypeError"));
        assert!(!code_matches("Neo.ClientError.State", "Neo.ClientError.Statement.TypeError"));
        assert!(code_matches("Neo.X.Y", "Neo.X.Y"));
    }
}
