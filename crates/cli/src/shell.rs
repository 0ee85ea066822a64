//! `arbor shell`: run Cypher against a data directory in process and print results as a table.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::Context;
use arbor_engine::{Database, DatabaseConfig, PullOutcome, TxConfig};

pub fn run(data: PathBuf, command: Option<&str>) -> anyhow::Result<()> {
    let db = Database::open(&data, DatabaseConfig::default())
        .with_context(|| format!("opening database at {}", data.display()))?;
    let mut session = db.session();
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    match command {
        Some(text) => failed |= !run_one(&mut session, text, &mut out)?,
        None => {
            let stdin = std::io::stdin();
            let mut buf = String::new();
            for line in stdin.lock().lines() {
                let line = line.context("reading standard input")?;
                buf.push_str(&line);
                buf.push('\n');
                let trimmed = buf.trim();
                if trimmed.ends_with(';') || (!trimmed.is_empty() && line.trim().is_empty()) {
                    let stmt = trimmed.trim_end_matches(';').to_string();
                    buf.clear();
                    if !stmt.is_empty() {
                        failed |= !run_one(&mut session, &stmt, &mut out)?;
                    }
                }
            }
            let rest = buf.trim().trim_end_matches(';').to_string();
            if !rest.is_empty() {
                failed |= !run_one(&mut session, &rest, &mut out)?;
            }
        }
    }
    db.shutdown().context("closing the database")?;
    if failed {
        anyhow::bail!("some statements failed");
    }
    Ok(())
}

/// Runs one statement and prints its rows; returns false if it failed.
fn run_one(
    session: &mut arbor_engine::Session,
    text: &str,
    out: &mut impl Write,
) -> anyhow::Result<bool> {
    let info = match session.run(text, Default::default(), TxConfig::default()) {
        Ok(info) => info,
        Err(e) => {
            writeln!(out, "{e}")?;
            return Ok(false);
        }
    };
    writeln!(out, "{}", info.fields.join(" | "))?;
    let mut rows = 0u64;
    let mut sink = |row: Vec<arbor_model::Value>| {
        rows += 1;
        let cells: Vec<String> = row.iter().map(arbor_model::to_cypher_literal).collect();
        let _ = writeln!(out, "{}", cells.join(" | "));
        Ok(())
    };
    match session.pull(None, -1, &mut sink) {
        Ok(PullOutcome::Done(summary)) => {
            writeln!(out, "({rows} rows, {} ms)", summary.t_last_ms)?;
            Ok(true)
        }
        Ok(PullOutcome::HasMore) => Ok(true),
        Err(e) => {
            writeln!(out, "{e}")?;
            Ok(false)
        }
    }
}
