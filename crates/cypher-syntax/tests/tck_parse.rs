//! Parses every query of the openCypher TCK feature files and checks that those the TCK expects
//! to compile (everything except the query of a scenario expecting "a SyntaxError ... at compile
//! time") parse successfully. Scenario outlines are expanded from their Examples tables.
//!
//! The TCK lives outside this repository (`../../../shared/tck/features` from the crate); when it
//! is absent the test prints a note and passes.

use std::path::{Path, PathBuf};

/// One query extracted from a scenario.
struct TckQuery {
    location: String,
    text: String,
    /// True for the `When executing query:` of a scenario that expects a compile-time
    /// SyntaxError.
    expects_syntax_error: bool,
}

fn feature_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            feature_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "feature") {
            out.push(p);
        }
    }
}

/// Splits a Gherkin table row into cells, honouring `\|` escapes.
fn table_cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some('|') | Some('\\')) => {
                cur.push(chars.next().unwrap_or('\\'));
            }
            '|' => {
                cells.push(cur.trim().to_string());
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    cells
}

struct Scenario {
    name: String,
    /// (step keyword line, docstring) for query steps.
    queries: Vec<(bool, String)>,
    expects_syntax_error: bool,
    examples: Vec<Vec<String>>,
}

fn extract(path: &Path, out: &mut Vec<TckQuery>) {
    let Ok(content) = std::fs::read_to_string(path) else { return };
    let lines: Vec<&str> = content.lines().collect();
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut i = 0;
    let mut pending_query_step: Option<bool> = None;
    let mut in_examples = false;
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with("Scenario") {
            scenarios.push(Scenario {
                name: line.to_string(),
                queries: Vec::new(),
                expects_syntax_error: false,
                examples: Vec::new(),
            });
            in_examples = false;
            continue;
        }
        let Some(sc) = scenarios.last_mut() else { continue };
        if line.starts_with("Examples") {
            in_examples = true;
            continue;
        }
        if in_examples && line.starts_with('|') {
            sc.examples.push(table_cells(line));
            continue;
        }
        if line.ends_with("executing query:") || line.ends_with("executing control query:") {
            pending_query_step = Some(true);
        } else if line.ends_with("having executed:") {
            pending_query_step = Some(false);
        } else if line.starts_with("Then a SyntaxError should be raised at compile time") {
            sc.expects_syntax_error = true;
        } else if line == "\"\"\"" {
            let mut doc = Vec::new();
            while i < lines.len() && lines[i].trim() != "\"\"\"" {
                doc.push(lines[i].trim_end());
                i += 1;
            }
            i += 1;
            if let Some(is_main) = pending_query_step.take() {
                sc.queries.push((is_main, doc.join("\n")));
            }
        }
    }
    for sc in scenarios {
        // An outline runs once per Examples row with `<name>` placeholders replaced.
        let mut variants: Vec<(String, Vec<(String, String)>)> = Vec::new();
        if sc.examples.len() > 1 {
            let header = &sc.examples[0];
            for (n, row) in sc.examples[1..].iter().enumerate() {
                let subst = header.iter().cloned().zip(row.iter().cloned()).collect();
                variants.push((format!(" (example {n})"), subst));
            }
        } else {
            variants.push((String::new(), Vec::new()));
        }
        for (suffix, subst) in &variants {
            for (is_main, q) in &sc.queries {
                let mut text = q.clone();
                for (k, v) in subst {
                    text = text.replace(&format!("<{k}>"), v);
                }
                out.push(TckQuery {
                    location: format!("{}: {}{}", path.display(), sc.name, suffix),
                    text,
                    expects_syntax_error: *is_main && sc.expects_syntax_error,
                });
            }
        }
    }
}

#[test]
fn tck_queries_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tck/features");
    if !dir.is_dir() {
        println!("note: TCK features not found at {}; skipping", dir.display());
        return;
    }
    let mut files = Vec::new();
    feature_files(&dir, &mut files);
    let mut queries = Vec::new();
    for f in &files {
        extract(f, &mut queries);
    }
    let (mut pos_total, mut pos_ok, mut neg_total, mut neg_rejected) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for q in &queries {
        let result = arbor_cypher_syntax::parse(&q.text);
        if q.expects_syntax_error {
            neg_total += 1;
            if result.is_err() {
                neg_rejected += 1;
            } else if std::env::var_os("TCK_SHOW_ACCEPTED_NEGATIVES").is_some() {
                println!("ACCEPTED-NEGATIVE {}\n  {}", q.location, q.text);
            }
        } else {
            pos_total += 1;
            match result {
                Ok(_) => pos_ok += 1,
                Err(e) => failures.push(format!("{}\n  {}\n  {}", q.location, q.text, e.message)),
            }
        }
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    let rate = pos_ok as f64 * 100.0 / pos_total.max(1) as f64;
    println!(
        "TCK: {} files, {pos_ok}/{pos_total} expected-valid queries parse ({rate:.2}%); \
         {neg_rejected}/{neg_total} expected-SyntaxError queries rejected by the parser",
        files.len()
    );
    assert!(pos_total > 1000, "suspiciously few TCK queries extracted: {pos_total}");
    assert!(rate >= 99.0, "TCK parse rate {rate:.2}% is below 99%");
}
