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
    *SINK.lock() = Some(Sink { config, file: None, size: 0, failed: false });
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

/// Writes one line (if the log is on).
pub(crate) fn write(entry: &Entry<'_>) {
    let mut guard = SINK.lock();
    let Some(sink) = guard.as_mut() else { return };
    if sink.config.level == QueryLogLevel::Off {
        return;
    }
    let mut line = serde_json::Map::new();
    let time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    line.insert("time".into(), time.into());
    line.insert("event".into(), entry.event.into());
    line.insert("elapsed_ms".into(), (entry.elapsed.as_millis() as u64).into());
    line.insert("user".into(), entry.user.into());
    line.insert("client".into(), entry.client.into());
    line.insert("query".into(), entry.query.into());
    if sink.config.parameters {
        if let Some(p) = entry.parameters {
            line.insert("parameters".into(), map_json(p));
        }
    }
    if entry.event != "start" {
        line.insert("rows".into(), entry.rows.into());
    }
    if let Some(e) = entry.error {
        line.insert("error_code".into(), e.status.code().into());
        line.insert("error_message".into(), e.message.clone().into());
    }
    let mut text = serde_json::Value::Object(line).to_string();
    text.push('\n');
    if let Err(e) = sink.append(text.as_bytes()) {
        if !sink.failed {
            sink.failed = true;
            tracing::warn!("cannot write the query log {}: {e}", sink.config.path.display());
        }
    }
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
