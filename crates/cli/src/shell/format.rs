//! Printing results as cypher-shell does (`verbose` tables with a footer, `plain` comma-separated
//! lines) plus `json` (one object per row) and `csv`.
//!
//! Values print as the Neo4j drivers' `toString` shows them in cypher-shell: strings quoted,
//! `NULL`/`TRUE`/`FALSE` upper-case, nodes `(:Label {key: value})`, relationships
//! `[:TYPE {key: value}]`, paths with direction arrows, temporals in ISO form, points as
//! `point({srid:4326, x:1.0, y:2.0})`.

use std::fmt::Write as _;
use std::io::Write;

use arbor_model::{NodeData, PathData, PropertyMap, RelData, Value};

/// How results are printed (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `verbose` when the output is a terminal, else `plain` (cypher-shell's rule).
    Auto,
    /// Tables with borders, row count, timings and update statistics.
    Verbose,
    /// Header line and rows of comma-separated values; nothing else.
    Plain,
    /// One JSON object per row (JSON lines).
    Json,
    /// RFC 4180 CSV with a header line.
    Csv,
}

impl Format {
    /// Resolves `auto` for the given terminal state.
    pub fn resolve(self, terminal: bool) -> Format {
        match self {
            Format::Auto if terminal => Format::Verbose,
            Format::Auto => Format::Plain,
            other => other,
        }
    }
}

/// What the server reported about a finished statement.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Milliseconds until the first record was available, and to consume the rest.
    pub available_ms: i64,
    pub consumed_ms: i64,
    /// Update counters as Bolt names them (`nodes-created`, ...), in the server's order.
    pub stats: Vec<(String, i64)>,
}

/// Formats one value as cypher-shell prints it.
pub fn value(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v);
    out
}

/// Like [`value`] but strings unquoted (CSV cells).
pub fn raw_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Null => String::new(),
        other => value(other),
    }
}

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Bool(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::String(s) => {
            out.push('"');
            out.push_str(&s.replace('"', "\\\""));
            out.push('"');
        }
        Value::Bytes(b) => {
            out.push('#');
            for x in b.iter() {
                let _ = write!(out, "{x:02x}");
            }
        }
        Value::List(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, x);
            }
            out.push(']');
        }
        Value::Map(m) => write_map(out, m),
        Value::NodeData(n) => write_node(out, n),
        Value::RelData(r) => write_rel(out, r),
        Value::PathData(p) => write_path(out, p),
        Value::Point(p) => {
            let _ = write!(
                out,
                "point({{srid:{}, x:{}, y:{}",
                p.srid,
                arbor_model::format::format_float(p.x),
                arbor_model::format::format_float(p.y)
            );
            if let Some(z) = p.z {
                let _ = write!(out, ", z:{}", arbor_model::format::format_float(z));
            }
            out.push_str("})");
        }
        Value::Node(id) => {
            let _ = write!(out, "node<{}>", id.0);
        }
        Value::Relationship(id) => {
            let _ = write!(out, "relationship<{}>", id.0);
        }
        Value::Path(p) => {
            let _ = write!(out, "path<{} nodes>", p.nodes.len());
        }
        other => out.push_str(&arbor_model::to_string_value(other).unwrap_or_default()),
    }
}

fn write_map(out: &mut String, m: &PropertyMap) {
    out.push('{');
    for (i, (k, v)) in m.iter_ordered().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(k.as_str());
        out.push_str(": ");
        write_value(out, v);
    }
    out.push('}');
}

fn write_node(out: &mut String, n: &NodeData) {
    out.push('(');
    for l in &n.labels {
        out.push(':');
        out.push_str(l);
    }
    if !n.properties.is_empty() {
        if !n.labels.is_empty() {
            out.push(' ');
        }
        write_map(out, &n.properties);
    }
    out.push(')');
}

fn write_rel(out: &mut String, r: &RelData) {
    out.push_str("[:");
    out.push_str(&r.rel_type);
    if !r.properties.is_empty() {
        out.push(' ');
        write_map(out, &r.properties);
    }
    out.push(']');
}

fn write_path(out: &mut String, p: &PathData) {
    let Some(first) = p.nodes.first() else { return };
    write_node(out, first);
    for (i, r) in p.rels.iter().enumerate() {
        let from = &p.nodes[i];
        let forward = r.start == from.id;
        out.push_str(if forward { "-" } else { "<-" });
        write_rel(out, r);
        out.push_str(if forward { "->" } else { "-" });
        if let Some(n) = p.nodes.get(i + 1) {
            write_node(out, n);
        }
    }
}

/// Prints a finished result in `format`. `rows` may be empty; `fields` are the column names.
pub fn print_result(
    out: &mut impl Write,
    format: Format,
    fields: &[String],
    rows: &[Vec<Value>],
    summary: &Summary,
) -> std::io::Result<()> {
    match format {
        Format::Verbose | Format::Auto => print_table(out, fields, rows, summary),
        Format::Plain => print_plain(out, fields, rows),
        Format::Json => print_json(out, fields, rows),
        Format::Csv => print_csv(out, fields, rows),
    }
}

fn print_table(
    out: &mut impl Write,
    fields: &[String],
    rows: &[Vec<Value>],
    summary: &Summary,
) -> std::io::Result<()> {
    if !fields.is_empty() {
        let cells: Vec<Vec<String>> =
            rows.iter().map(|r| r.iter().map(|v| first_line(&value(v))).collect()).collect();
        let mut widths: Vec<usize> = fields.iter().map(|f| display_width(f)).collect();
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(display_width(c));
            }
        }
        let total: usize = widths.iter().map(|w| w + 3).sum::<usize>() + 1;
        let dashes = format!("+{}+", "-".repeat(total - 2));
        writeln!(out, "{dashes}")?;
        writeln!(out, "{}", table_row(fields, &widths))?;
        writeln!(out, "{dashes}")?;
        for row in &cells {
            writeln!(out, "{}", table_row(row, &widths))?;
        }
        writeln!(out, "{dashes}")?;
        writeln!(out)?;
        let n = rows.len();
        writeln!(out, "{n} row{}", if n == 1 { "" } else { "s" })?;
        writeln!(
            out,
            "ready to start consuming query after {} ms, results consumed after another {} ms",
            summary.available_ms, summary.consumed_ms
        )?;
    }
    if let Some(line) = statistics(&summary.stats) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn table_row(cells: &[String], widths: &[usize]) -> String {
    let mut line = String::from("|");
    for (c, w) in cells.iter().zip(widths) {
        line.push(' ');
        line.push_str(c);
        line.push_str(&" ".repeat(w.saturating_sub(display_width(c))));
        line.push_str(" |");
    }
    line
}

fn first_line(s: &str) -> String {
    s.split(['\n', '\r']).next().unwrap_or("").to_string()
}

/// Terminal columns a string takes (wide East Asian characters count two).
fn display_width(s: &str) -> usize {
    s.chars()
        .map(|c| {
            let cp = c as u32;
            if cp < 32 || (0x7f..0xa0).contains(&cp) {
                0
            } else if is_wide(cp) {
                2
            } else {
                1
            }
        })
        .sum()
}

fn is_wide(cp: u32) -> bool {
    cp >= 0x1100
        && (cp <= 0x115f
            || (0x2e80..=0xa4cf).contains(&cp) && cp != 0x303f
            || (0xac00..=0xd7a3).contains(&cp)
            || (0xf900..=0xfaff).contains(&cp)
            || (0xfe30..=0xfe6f).contains(&cp)
            || (0xff00..=0xff60).contains(&cp)
            || (0xffe0..=0xffe6).contains(&cp)
            || (0x1f300..=0x1f64f).contains(&cp)
            || (0x1f900..=0x1f9ff).contains(&cp)
            || (0x20000..=0x3fffd).contains(&cp))
}

/// cypher-shell's update summary (`Added 1 nodes, Set 2 properties`), `None` when nothing changed.
pub fn statistics(stats: &[(String, i64)]) -> Option<String> {
    const WORDS: &[(&str, &str)] = &[
        ("nodes-created", "Added {} nodes"),
        ("nodes-deleted", "Deleted {} nodes"),
        ("relationships-created", "Created {} relationships"),
        ("relationships-deleted", "Deleted {} relationships"),
        ("properties-set", "Set {} properties"),
        ("labels-added", "Added {} labels"),
        ("labels-removed", "Removed {} labels"),
        ("indexes-added", "Added {} indexes"),
        ("indexes-removed", "Removed {} indexes"),
        ("constraints-added", "Added {} constraints"),
        ("constraints-removed", "Removed {} constraints"),
    ];
    let parts: Vec<String> = WORDS
        .iter()
        .filter_map(|(key, text)| {
            let n = stats.iter().find(|(k, _)| k == key).map(|(_, n)| *n).unwrap_or(0);
            (n > 0).then(|| text.replace("{}", &n.to_string()))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn print_plain(
    out: &mut impl Write,
    fields: &[String],
    rows: &[Vec<Value>],
) -> std::io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "{}", fields.join(", "))?;
    for row in rows {
        let cells: Vec<String> = row.iter().map(value).collect();
        writeln!(out, "{}", cells.join(", "))?;
    }
    Ok(())
}

fn print_json(out: &mut impl Write, fields: &[String], rows: &[Vec<Value>]) -> std::io::Result<()> {
    for row in rows {
        let mut obj = serde_json::Map::new();
        for (f, v) in fields.iter().zip(row) {
            obj.insert(f.clone(), to_json(v));
        }
        writeln!(out, "{}", serde_json::Value::Object(obj))?;
    }
    Ok(())
}

/// JSON for one value: numbers, strings, booleans, lists and maps as themselves; nodes as
/// `{"elementId", "labels", "properties"}`, relationships with `type`, `start`, `end`; other
/// values (temporals, points, durations) as their Cypher string form.
pub fn to_json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    let map = |m: &PropertyMap| {
        J::Object(m.iter().map(|(k, v)| (k.as_str().to_string(), to_json(v))).collect())
    };
    match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map(J::Number).unwrap_or(J::Null),
        Value::String(s) => J::String(s.to_string()),
        Value::List(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => map(m),
        Value::NodeData(n) => serde_json::json!({
            "id": n.id.0, "labels": n.labels, "properties": map(&n.properties)
        }),
        Value::RelData(r) => serde_json::json!({
            "id": r.id.0, "type": r.rel_type, "start": r.start.0, "end": r.end.0,
            "properties": map(&r.properties)
        }),
        Value::PathData(p) => serde_json::json!({
            "nodes": p.nodes.iter().map(|n| to_json(&Value::NodeData(n.clone().into()))).collect::<Vec<_>>(),
            "relationships": p.rels.iter().map(|r| to_json(&Value::RelData(r.clone().into()))).collect::<Vec<_>>(),
        }),
        other => J::String(value(other)),
    }
}

fn print_csv(out: &mut impl Write, fields: &[String], rows: &[Vec<Value>]) -> std::io::Result<()> {
    if fields.is_empty() {
        return Ok(());
    }
    let line = |cells: Vec<String>| cells.into_iter().map(|c| csv_cell(&c)).collect::<Vec<_>>();
    writeln!(out, "{}", line(fields.to_vec()).join(","))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(raw_value).collect()).join(","))?;
    }
    Ok(())
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests;
