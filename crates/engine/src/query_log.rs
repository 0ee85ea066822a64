//! The query log (Neo4j's `db.logs.query.*`): one JSON line per query in `<data>/logs/query.log`
//! (or a configured file), rotated by size.
//!
//! - `off`: nothing is written (the default); the check on the hot path is one relaxed load.
//! - `info`: a line when a query ends, if it ran at least `db.logs.query.threshold` or failed.
//! - `verbose`: a line when every query starts and when it ends, whatever its time.
//!
//! A line holds `time` (UTC, RFC 3339), `event` (`start`, `success`, `failure`), `elapsed_ms`,
//! `user`, `client`, `query`, `parameters` (only with `db.logs.query.parameter_logging_enabled`),
//! `rows` (records returned), `error_code` and `error_message` on failure. When the file passes
//! `rotation_size` it is renamed to `query.log.1` (older ones shift up to `rotation_keep`) and a
//! new one is started. Writing happens on the query's thread under a mutex; a write error is
//! reported once to the server log and never fails the query.
//!
//! The configuration is process-wide, like the metrics: a server runs one database.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use arbor_model::{PropertyMap, Value};
use parking_lot::Mutex;

/// `db.logs.query.enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueryLogLevel {
    #[default]
    Off,
    Info,
    Verbose,
}

impl QueryLogLevel {
    /// `off`, `info` or `verbose` (Neo4j also accepts `false`/`true` for off/info).
    pub fn parse(text: &str) -> Result<QueryLogLevel, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "off" | "false" => Ok(QueryLogLevel::Off),
            "info" | "true" => Ok(QueryLogLevel::Info),
            "verbose" => Ok(QueryLogLevel::Verbose),
            other => Err(format!("`{other}` is not one of off, info, verbose")),
        }
    }
}

/// The query log's settings.
#[derive(Clone, Debug)]
pub struct QueryLogConfig {
    pub level: QueryLogLevel,
    /// `db.logs.query.threshold`: at `info`, queries faster than this are not logged.
    pub threshold: Duration,
    /// `db.logs.query.parameter_logging_enabled`.
    pub parameters: bool,
    /// The log file (`<data>/logs/query.log` by default).
    pub path: PathBuf,
    /// `db.logs.query.rotation.size`: a file larger than this is rotated.
    pub rotation_size: u64,
    /// `db.logs.query.rotation.keep_number`: rotated files kept.
    pub rotation_keep: u32,
}

impl QueryLogConfig {
    /// The defaults for a data directory: off, threshold 0, parameters logged, 20 MiB files,
    /// 7 kept.
    pub fn for_data_dir(data: &Path) -> QueryLogConfig {
        QueryLogConfig {
            level: QueryLogLevel::Off,
            threshold: Duration::ZERO,
            parameters: true,
            path: data.join("logs").join("query.log"),
            rotation_size: 20 << 20,
            rotation_keep: 7,
        }
    }
}

struct Sink {
    config: QueryLogConfig,
    file: Option<File>,
    size: u64,
    failed: bool,
    /// The line being formatted (kept to reuse its allocation).
    line: String,
    clock: Clock,
}

static LEVEL: AtomicU8 = AtomicU8::new(0);
static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Installs the configuration (creating the log's directory owner-only).
pub fn configure(config: QueryLogConfig) -> std::io::Result<()> {
    if config.level != QueryLogLevel::Off {
        if let Some(dir) = config.path.parent() {
            let mut b = std::fs::DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            b.create(dir)?;
        }
    }
    let level = config.level;
    *SINK.lock() = Some(Sink {
        config,
        file: None,
        size: 0,
        failed: false,
        line: String::new(),
        clock: Clock::default(),
    });
    LEVEL.store(level as u8, Ordering::Release);
    Ok(())
}

/// The level in force (one relaxed load).
#[inline]
pub fn level() -> QueryLogLevel {
    match LEVEL.load(Ordering::Relaxed) {
        0 => QueryLogLevel::Off,
        1 => QueryLogLevel::Info,
        _ => QueryLogLevel::Verbose,
    }
}

/// Whether the parameters are logged.
pub(crate) fn wants_parameters() -> bool {
    SINK.lock().as_ref().is_some_and(|s| s.config.parameters)
}

/// What one line says.
pub(crate) struct Entry<'a> {
    pub event: &'static str,
    pub elapsed: Duration,
    pub user: &'a str,
    pub client: &'a str,
    pub query: &'a str,
    pub parameters: Option<&'a PropertyMap>,
    pub rows: u64,
    pub error: Option<&'a arbor_model::Error>,
}

/// Whether a query that ended after `elapsed` (failed or not) gets a line.
pub(crate) fn should_log_end(elapsed: Duration, failed: bool) -> bool {
    match level() {
        QueryLogLevel::Off => false,
        QueryLogLevel::Verbose => true,
        QueryLogLevel::Info => {
            failed || SINK.lock().as_ref().is_some_and(|s| elapsed >= s.config.threshold)
        }
    }
}

/// Writes one line (if the log is on). The line is formatted by hand into one buffer (keys in
/// a fixed order: time, event, elapsed_ms, user, client, query, parameters, rows, error_code,
/// error_message), with the timestamp's seconds part cached: a line costs about what running
/// a point lookup does, not several times that (BENCHMARKS.md "Cost of metrics and the query
/// log").
pub(crate) fn write(entry: &Entry<'_>) {
    let mut guard = SINK.lock();
    let Some(sink) = guard.as_mut() else { return };
    if sink.config.level == QueryLogLevel::Off {
        return;
    }
    let mut text = std::mem::take(&mut sink.line);
    text.clear();
    text.push_str("{\"time\":\"");
    sink.clock.push_now(&mut text);
    text.push_str("\",\"event\":");
    push_json_str(&mut text, entry.event);
    let _ = write!(text, ",\"elapsed_ms\":{}", entry.elapsed.as_millis() as u64);
    text.push_str(",\"user\":");
    push_json_str(&mut text, entry.user);
    text.push_str(",\"client\":");
    push_json_str(&mut text, entry.client);
    text.push_str(",\"query\":");
    push_json_str(&mut text, entry.query);
    if sink.config.parameters {
        if let Some(p) = entry.parameters {
            text.push_str(",\"parameters\":");
            push_json_map(&mut text, p);
        }
    }
    if entry.event != "start" {
        let _ = write!(text, ",\"rows\":{}", entry.rows);
    }
    if let Some(e) = entry.error {
        text.push_str(",\"error_code\":");
        push_json_str(&mut text, e.status.code());
        text.push_str(",\"error_message\":");
        push_json_str(&mut text, &e.message);
    }
    text.push_str("}\n");
    if let Err(e) = sink.append(text.as_bytes()) {
        if !sink.failed {
            sink.failed = true;
            tracing::warn!("cannot write the query log {}: {e}", sink.config.path.display());
        }
    }
    sink.line = text;
}

/// The `YYYY-MM-DDTHH:MM:SS` part of the current time, formatted once per second.
#[derive(Default)]
struct Clock {
    second: i64,
    prefix: String,
}

impl Clock {
    /// Appends the current UTC time as RFC 3339 with milliseconds (`...T12:00:00.123Z`).
    fn push_now(&mut self, out: &mut String) {
        let now = chrono::Utc::now();
        let second = now.timestamp();
        if self.prefix.is_empty() || second != self.second {
            self.second = second;
            self.prefix = now.format("%Y-%m-%dT%H:%M:%S").to_string();
        }
        out.push_str(&self.prefix);
        let _ = write!(out, ".{:03}Z", now.timestamp_subsec_millis().min(999));
    }
}

/// `s` as a JSON string, escaped as serde_json escapes it.
fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Parameters as a JSON object: the common scalars directly, anything else through
/// [`value_json`].
fn push_json_map(out: &mut String, map: &PropertyMap) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_json_str(out, k);
        out.push(':');
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::String(s) => push_json_str(out, s),
            other => out.push_str(&value_json(other).to_string()),
        }
    }
    out.push('}');
}

impl Sink {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.file.is_some() && self.size + bytes.len() as u64 > self.config.rotation_size {
            self.file = None;
            rotate(&self.config.path, self.config.rotation_keep)?;
        }
        if self.file.is_none() {
            let mut o = std::fs::OpenOptions::new();
            o.create(true).append(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
            let f = o.open(&self.config.path)?;
            self.size = f.metadata()?.len();
            self.file = Some(f);
        }
        if let Some(f) = self.file.as_mut() {
            f.write_all(bytes)?;
            self.size += bytes.len() as u64;
        }
        Ok(())
    }
}

/// `query.log` → `query.log.1` → ... → `query.log.<keep>` (the oldest is dropped).
fn rotate(path: &Path, keep: u32) -> std::io::Result<()> {
    let numbered = |n: u32| {
        let mut p = path.as_os_str().to_owned();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    };
    if keep == 0 {
        return std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(numbered(keep));
    for n in (1..keep).rev() {
        let from = numbered(n);
        if from.exists() {
            std::fs::rename(&from, numbered(n + 1))?;
        }
    }
    std::fs::rename(path, numbered(1))
}

fn map_json(map: &PropertyMap) -> serde_json::Value {
    serde_json::Value::Object(map.iter().map(|(k, v)| (k.to_string(), value_json(v))).collect())
}

/// Parameters as JSON: numbers, strings, lists and maps as themselves, everything else as its
/// Cypher literal text.
fn value_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => (*i).into(),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map_or_else(|| arbor_model::to_cypher_literal(v).into(), serde_json::Value::Number),
        Value::String(s) => s.to_string().into(),
        Value::List(items) => items.iter().map(value_json).collect(),
        Value::Map(m) => map_json(m),
        other => arbor_model::to_cypher_literal(other).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_formatted_json_matches_serde_json() {
        for text in ["plain", "quote \" back \\ slash", "nl\n tab\t cr\r \u{1}\u{8}\u{c} é 日本"]
        {
            let mut out = String::new();
            push_json_str(&mut out, text);
            assert_eq!(out, serde_json::to_string(text).unwrap());
        }
        let mut p = PropertyMap::new();
        p.insert("id".into(), Value::Int(-7));
        p.insert("name".into(), Value::str("a\"b"));
        p.insert("ok".into(), Value::Bool(true));
        p.insert("none".into(), Value::Null);
        p.insert("xs".into(), Value::List(vec![Value::Float(1.5), Value::Int(2)]));
        let mut out = String::new();
        push_json_map(&mut out, &p);
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed, map_json(&p));
    }

    #[test]
    fn levels_parse_with_neo4j_spellings() {
        assert_eq!(QueryLogLevel::parse("INFO").unwrap(), QueryLogLevel::Info);
        assert_eq!(QueryLogLevel::parse("false").unwrap(), QueryLogLevel::Off);
        assert_eq!(QueryLogLevel::parse("verbose").unwrap(), QueryLogLevel::Verbose);
        assert!(QueryLogLevel::parse("loud").is_err());
    }

    #[test]
    fn rotation_shifts_files_and_drops_the_oldest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("query.log");
        for round in 0..4 {
            std::fs::write(&path, format!("{round}")).unwrap();
            rotate(&path, 2).unwrap();
        }
        assert!(!path.exists());
        let read = |n: u32| std::fs::read_to_string(dir.path().join(format!("query.log.{n}")));
        assert_eq!(read(1).unwrap(), "3");
        assert_eq!(read(2).unwrap(), "2");
        assert!(read(3).is_err(), "only two are kept");
    }
}
