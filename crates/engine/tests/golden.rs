//! Golden Cypher files: `tests/cypher/**/*.cypher` at the workspace root, run in process.
//!
//! Format (a small sqllogictest dialect; each file gets a fresh in-memory database):
//!
//! ```text
//! # comment
//! statement ok
//! CREATE (:A {x: 1})
//!
//! statement error Neo.ClientError.Statement.SyntaxError
//! MATCH (n RETURN n
//!
//! query            (rows compared as a multiset)
//! query ordered    (rows compared in order)
//! MATCH (n:A) RETURN n.x AS x, n
//! ----
//! 1 | (:A {x: 1})
//! ```
//!
//! A record's body runs until a blank line. Values print as Cypher literals (`to_cypher_literal`),
//! columns are joined by ` | `. `params {json-ish map literal}` before a record is not supported;
//! use literals in the query. `:begin`, `:commit`, `:rollback` as a statement control an explicit
//! transaction.

use std::path::{Path, PathBuf};

use arbor_engine::{Database, PullOutcome, TxConfig};
use arbor_model::to_cypher_literal;

struct Record {
    line: usize,
    kind: Kind,
    query: String,
    expected: Vec<String>,
}

enum Kind {
    Ok,
    Error(String),
    Query { ordered: bool },
}

fn parse_file(text: &str) -> Result<Vec<Record>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut records = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.is_empty() || line.starts_with('#') {
            i += 1;
            continue;
        }
        let start = i + 1;
        let kind = if line == "statement ok" {
            Kind::Ok
        } else if let Some(code) = line.strip_prefix("statement error") {
            Kind::Error(code.trim().to_string())
        } else if line == "query" {
            Kind::Query { ordered: false }
        } else if line == "query ordered" {
            Kind::Query { ordered: true }
        } else {
            return Err(format!("line {start}: unknown record `{line}`"));
        };
        i += 1;
        let mut query = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() && lines[i].trim() != "----" {
            query.push(lines[i]);
            i += 1;
        }
        let mut expected = Vec::new();
        if i < lines.len() && lines[i].trim() == "----" {
            i += 1;
            while i < lines.len() && !lines[i].trim().is_empty() {
                expected.push(lines[i].trim().to_string());
                i += 1;
            }
        }
        records.push(Record { line: start, kind, query: query.join("\n"), expected });
    }
    Ok(records)
}

/// Runs one statement; returns its rows printed, or the error's status code and message.
fn run(session: &mut arbor_engine::Session, query: &str) -> Result<Vec<String>, String> {
    match query.trim() {
        ":begin" => {
            return session.begin(TxConfig::default()).map(|_| vec![]).map_err(|e| e.to_string())
        }
        ":commit" => return session.commit().map(|_| vec![]).map_err(|e| e.to_string()),
        ":rollback" => return session.rollback().map(|_| vec![]).map_err(|e| e.to_string()),
        _ => {}
    }
    session.run(query, Default::default(), TxConfig::default()).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    let mut sink = |row: Vec<arbor_model::Value>| {
        rows.push(row.iter().map(to_cypher_literal).collect::<Vec<_>>().join(" | "));
        Ok(())
    };
    match session.pull(None, -1, &mut sink).map_err(|e| e.to_string())? {
        PullOutcome::Done(_) => Ok(rows),
        PullOutcome::HasMore => Err("result not exhausted by PULL ALL".into()),
    }
}

fn run_file(path: &Path) -> Vec<String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return vec![format!("{}: {e}", path.display())],
    };
    let records = match parse_file(&text) {
        Ok(r) => r,
        Err(e) => return vec![format!("{}: {e}", path.display())],
    };
    let db = Database::in_memory();
    let mut session = db.session();
    let mut failures = Vec::new();
    for r in records {
        let at = format!("{}:{}", path.display(), r.line);
        let outcome = run(&mut session, &r.query);
        match (&r.kind, outcome) {
            (Kind::Ok, Ok(_)) => {}
            (Kind::Ok, Err(e)) => failures.push(format!("{at}: expected ok, got {e}")),
            (Kind::Error(code), Err(e)) if e.contains(code.as_str()) => {}
            (Kind::Error(code), other) => {
                failures.push(format!("{at}: expected error {code}, got {other:?}"))
            }
            (Kind::Query { .. }, Err(e)) => failures.push(format!("{at}: query failed: {e}")),
            (Kind::Query { ordered }, Ok(mut rows)) => {
                let mut expected = r.expected.clone();
                if !ordered {
                    rows.sort();
                    expected.sort();
                }
                if rows != expected {
                    failures.push(format!(
                        "{at}: {}\n  expected:\n    {}\n  got:\n    {}",
                        r.query,
                        expected.join("\n    "),
                        rows.join("\n    ")
                    ));
                }
            }
        }
    }
    failures
}

fn golden_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            golden_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "cypher") {
            out.push(path);
        }
    }
}

#[test]
fn golden_cypher_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cypher");
    let mut files = Vec::new();
    golden_files(&root, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no golden files under {}", root.display());
    let mut failures = Vec::new();
    for f in &files {
        failures.extend(run_file(f));
    }
    assert!(failures.is_empty(), "{} golden failures:\n{}", failures.len(), failures.join("\n"));
}
