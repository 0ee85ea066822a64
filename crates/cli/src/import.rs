//! `arbor import`: the neo4j-admin compatible command line of the bulk importer (`arbor-import`).
//!
//! Both spellings are accepted: Neo4j 5's `database import full` options (`--nodes=[L1:L2=]files`,
//! `--relationships=[TYPE=]files`, `--flag[=true|false]`, an optional trailing database name)
//! and the older `neo4j-admin import` / `neo4j-import` form (`--into DIR`,
//! `--nodes:Label "files"`, `--relationships:TYPE "files"`, `--flag true`, `--stacktrace`).
//! clap cannot parse `--nodes:Label`, so [`normalize_argv`] rewrites the old forms first.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Context};
use arbor_import::idmap::IdType;
use arbor_import::input::{self, Encoding};
use arbor_import::progress::Mode;
use arbor_import::{ImportConfig, NodeInput, RelInput};

use crate::config::memory;

/// Boolean options that older scripts pass as `--flag true` (rewritten to `--flag=true`).
const BOOL_FLAGS: &[&str] = &[
    "--overwrite-destination",
    "--multiline-fields",
    "--trim-strings",
    "--ignore-empty-strings",
    "--ignore-extra-columns",
    "--skip-duplicate-nodes",
    "--skip-bad-relationships",
    "--ignore-duplicate-nodes",
    "--ignore-missing-nodes",
    "--normalize-types",
    "--skip-bad-entries-logging",
    "--auto-skip-subsequent-headers",
    "--legacy-style-quoting",
    "--high-parallel-io",
    "--stacktrace",
    "--verbose",
    "--fsync",
];

/// Rewrites the pre-Neo4j-5 spellings of `arbor import` arguments into the ones clap parses.
pub fn normalize_argv(args: Vec<OsString>) -> Vec<OsString> {
    let is_import = args.get(1).and_then(|a| a.to_str()) == Some("import");
    if !is_import {
        return args;
    }
    let mut out: Vec<OsString> = Vec::with_capacity(args.len());
    let mut it = args.into_iter().peekable();
    while let Some(arg) = it.next() {
        let Some(s) = arg.to_str().map(str::to_string) else {
            out.push(arg);
            continue;
        };
        // --nodes:Label1:Label2 files  |  --nodes:Label=files  -> --nodes=Label1:Label2=files
        let legacy = ["--nodes:", "--relationships:"]
            .iter()
            .find_map(|p| s.strip_prefix(p).map(|rest| (&p[..p.len() - 1], rest.to_string())));
        if let Some((opt, rest)) = legacy {
            let (names, value) = match rest.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (rest, None),
            };
            let value = match value {
                Some(v) => Some(v),
                None => it.next().and_then(|v| v.to_str().map(str::to_string)),
            };
            match value {
                Some(v) => out.push(OsString::from(format!("{opt}={names}={v}"))),
                None => out.push(OsString::from(s)),
            }
            continue;
        }
        if BOOL_FLAGS.contains(&s.as_str()) {
            let next_is_bool = it
                .peek()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.eq_ignore_ascii_case("true") || n.eq_ignore_ascii_case("false"));
            if next_is_bool {
                let v = it.next().and_then(|v| v.to_str().map(str::to_ascii_lowercase));
                out.push(OsString::from(format!("{s}={}", v.unwrap_or_default())));
                continue;
            }
        }
        out.push(OsString::from(s));
    }
    out
}

/// Bulk import of neo4j-admin style CSV files (plain, .gz or .zip) into a new data directory.
///
/// Node and relationship inputs are groups of files, comma-separated; the first line of the
/// first file is the header (so the first file may be a header-only file). File names may be
/// regular expressions or globs. Header columns: `name:ID(Group)`, `:ID`, `:LABEL`,
/// `:START_ID(Group)`, `:END_ID(Group)`, `:TYPE`, `:IGNORE`, `name:type` with type one of int,
/// long, float, double, boolean, byte, short, char, string, date, localtime, time, localdatetime,
/// datetime, duration, point, optionally with `[]` for arrays.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  arbor import --data ./db --nodes=Person=people-header.csv,people.csv.gz \\\n      \
     --relationships=KNOWS=knows.csv.gz --id-type=integer\n  \
     arbor import --into ./db --nodes:Person \"people-header.csv,people.csv\" \
     --relationships:KNOWS \"knows.csv\" --skip-duplicate-nodes true"
)]
pub struct ImportArgs {
    /// Data directory to create (old spelling: --into). Default: ./arbor-data
    #[arg(long, visible_alias = "into", value_name = "DIR")]
    data: Option<PathBuf>,
    /// Database name as neo4j-admin takes it (accepted and ignored: one database per directory).
    #[arg(value_name = "DATABASE")]
    database: Option<String>,
    /// Neo4j 4's `--database=NAME` (accepted and ignored, as the positional name).
    #[arg(long = "database", value_name = "NAME", hide = true)]
    database_opt: Option<String>,
    /// Node input: `[Label1:Label2=]file1,file2,...` (repeatable). Old form: `--nodes:Label files`.
    #[arg(long, value_name = "[LABELS=]FILES")]
    nodes: Vec<String>,
    /// Relationship input: `[TYPE=]file1,file2,...` (repeatable). Old form:
    /// `--relationships:TYPE files`.
    #[arg(long, value_name = "[TYPE=]FILES")]
    relationships: Vec<String>,
    /// Replace an existing database in the data directory.
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    overwrite_destination: Option<String>,
    /// File for the bad entries (one `file:line: reason` per line).
    #[arg(long, value_name = "FILE", default_value = "import.report")]
    report_file: PathBuf,
    /// Parser threads (old spelling: --processors). Default: the number of cores.
    #[arg(long, visible_alias = "processors", value_name = "N")]
    threads: Option<usize>,
    /// Memory budget, e.g. `2G`, `512m` or `80%` of the machine's memory: relationships and
    /// their properties past it spill to sorted runs on disk (the id map stays in memory; see
    /// the README). Default: 90% of the memory available at start.
    #[arg(long, value_name = "SIZE")]
    max_off_heap_memory: Option<String>,
    /// How ids are read: `string` (default), `integer` or `actual` (treated as integer).
    #[arg(long, value_name = "TYPE", default_value = "string")]
    id_type: String,
    /// Field delimiter: one character, `\t` or `TAB`, or `U+XXXX`.
    #[arg(long, value_name = "CHAR", default_value = ",")]
    delimiter: String,
    /// Delimiter between array elements (and between labels in :LABEL).
    #[arg(long, value_name = "CHAR", default_value = ";")]
    array_delimiter: String,
    /// Quote character.
    #[arg(long, value_name = "CHAR", default_value = "\"")]
    quote: String,
    /// Allow quoted fields to span lines (slower chunking).
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    multiline_fields: Option<String>,
    /// Trim whitespace around string values.
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    trim_strings: Option<String>,
    /// Treat empty quoted strings as missing values.
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    ignore_empty_strings: Option<String>,
    /// Ignore fields beyond the header's columns instead of rejecting the row.
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    ignore_extra_columns: Option<String>,
    /// Skip (and report) nodes whose id was already seen instead of failing
    /// (old spelling: --ignore-duplicate-nodes).
    #[arg(long, visible_alias = "ignore-duplicate-nodes", value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    skip_duplicate_nodes: Option<String>,
    /// Skip (and report) relationships with a missing or unknown end node or no type instead of
    /// failing (old spelling: --ignore-missing-nodes).
    #[arg(long, visible_alias = "ignore-missing-nodes", value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    skip_bad_relationships: Option<String>,
    /// Stop after this many skipped bad entries (-1 = no limit).
    #[arg(long, value_name = "N", default_value_t = 1000, allow_negative_numbers = true)]
    bad_tolerance: i64,
    /// Do not write bad entries to the report file (still counted).
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    skip_bad_entries_logging: Option<String>,
    /// Skip the first line of later files of a group when it repeats the header.
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    auto_skip_subsequent_headers: Option<String>,
    /// Character set of the input: UTF-8 (default) or ISO-8859-1.
    #[arg(long, value_name = "CHARSET", default_value = "UTF-8")]
    input_encoding: String,
    /// Accepted for compatibility: Arbor stores every integer as 64-bit and every float as
    /// 64-bit, which is what normalizing would give.
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    normalize_types: Option<String>,
    /// Backslash-escaped quotes (`\"`): not supported; `true` is refused.
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    legacy_style_quoting: Option<String>,
    /// Accepted for compatibility (no effect).
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true", hide = true)]
    high_parallel_io: Option<String>,
    /// Print the full error chain on failure.
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    stacktrace: Option<String>,
    /// Accepted for compatibility (progress is always shown).
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    verbose: Option<String>,
    /// Progress display: `auto` (bar on a terminal, lines otherwise), `plain` or `quiet`.
    #[arg(long, value_name = "MODE", default_value = "auto")]
    progress: String,
    /// fsync the written store (default true; false only for throwaway imports).
    #[arg(long, value_name = "true|false", num_args = 0..=1, require_equals = true, default_missing_value = "true", hide = true)]
    fsync: Option<String>,
}

fn flag(name: &str, v: &Option<String>, default: bool) -> anyhow::Result<bool> {
    match v.as_deref() {
        None => Ok(default),
        Some(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        Some(s) => bail!("--{name} takes true or false, not `{s}`"),
    }
}

/// Parses a delimiter/quote option into one ASCII byte.
fn one_char(name: &str, s: &str) -> anyhow::Result<u8> {
    let c: Option<char> = match s {
        "\\t" | "TAB" | "'\\t'" => Some('\t'),
        _ if s.to_ascii_uppercase().starts_with("U+") => {
            u32::from_str_radix(&s[2..], 16).ok().and_then(char::from_u32)
        }
        _ => {
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        }
    };
    match c {
        Some(c) if c.is_ascii() => Ok(c as u8),
        Some(c) => bail!("--{name} `{c}`: only ASCII characters are supported"),
        None => bail!("--{name} must be a single character (or \\t, TAB, U+XXXX), not `{s}`"),
    }
}

/// Splits `Label1:Label2=files` / `TYPE=files` into the names and the file list.
fn split_spec(spec: &str) -> (Option<&str>, &str) {
    if let Some((names, files)) = spec.split_once('=') {
        if !names.contains(['/', '\\', ',', '.']) {
            return (Some(names), files);
        }
    }
    (None, spec)
}

pub fn run(args: ImportArgs) -> anyhow::Result<()> {
    let stacktrace = flag("stacktrace", &args.stacktrace, false)?;
    let result = run_inner(args);
    if let Err(e) = &result {
        if stacktrace {
            eprintln!("{e:?}");
        }
    }
    result
}

fn run_inner(args: ImportArgs) -> anyhow::Result<()> {
    let _ = (&args.database, &args.database_opt);
    let dest = args.data.clone().unwrap_or_else(crate::config::default_data_dir);
    let mut cfg = ImportConfig::new(dest);
    for spec in &args.nodes {
        let (names, files) = split_spec(spec);
        let labels: Vec<String> = names
            .map(|n| {
                n.split(':')
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let files = input::expand(files).map_err(anyhow::Error::msg)?;
        cfg.nodes.push(NodeInput { labels, files });
    }
    for spec in &args.relationships {
        let (names, files) = split_spec(spec);
        let rel_type =
            names.map(|t| t.trim().trim_start_matches(':').to_string()).filter(|t| !t.is_empty());
        let files = input::expand(files).map_err(anyhow::Error::msg)?;
        cfg.relationships.push(RelInput { rel_type, files });
    }
    if cfg.nodes.is_empty() {
        bail!("no node input: give at least one --nodes=[Label=]files");
    }
    cfg.overwrite = flag("overwrite-destination", &args.overwrite_destination, false)?;
    cfg.report_file = args.report_file.clone();
    if let Some(t) = args.threads {
        if t == 0 {
            bail!("--threads must be at least 1");
        }
        cfg.threads = t;
    }
    cfg.max_memory = match args.max_off_heap_memory.as_deref() {
        Some(s) => Some(memory(s)?),
        None => arbor_import::progress::default_memory_budget(),
    };
    cfg.id_type = IdType::parse(&args.id_type).with_context(|| {
        format!("--id-type must be string, integer or actual, not `{}`", args.id_type)
    })?;
    cfg.delimiter = one_char("delimiter", &args.delimiter)?;
    cfg.array_delimiter = one_char("array-delimiter", &args.array_delimiter)?;
    cfg.quote = one_char("quote", &args.quote)?;
    if cfg.delimiter == cfg.quote || cfg.delimiter == b'\n' {
        bail!("--delimiter must differ from --quote and from a line break");
    }
    cfg.multiline_fields = flag("multiline-fields", &args.multiline_fields, false)?;
    cfg.trim_strings = flag("trim-strings", &args.trim_strings, false)?;
    cfg.ignore_empty_strings = flag("ignore-empty-strings", &args.ignore_empty_strings, false)?;
    cfg.ignore_extra_columns = flag("ignore-extra-columns", &args.ignore_extra_columns, false)?;
    cfg.skip_duplicate_nodes = flag("skip-duplicate-nodes", &args.skip_duplicate_nodes, false)?;
    cfg.skip_bad_relationships =
        flag("skip-bad-relationships", &args.skip_bad_relationships, false)?;
    cfg.bad_tolerance = u64::try_from(args.bad_tolerance).ok();
    cfg.skip_bad_entries_logging =
        flag("skip-bad-entries-logging", &args.skip_bad_entries_logging, false)?;
    cfg.auto_skip_subsequent_headers =
        flag("auto-skip-subsequent-headers", &args.auto_skip_subsequent_headers, false)?;
    cfg.encoding = Encoding::parse(&args.input_encoding).with_context(|| {
        format!("--input-encoding `{}` is not supported (UTF-8 or ISO-8859-1)", args.input_encoding)
    })?;
    flag("normalize-types", &args.normalize_types, true)?;
    flag("high-parallel-io", &args.high_parallel_io, false)?;
    flag("verbose", &args.verbose, false)?;
    if flag("legacy-style-quoting", &args.legacy_style_quoting, false)? {
        bail!("--legacy-style-quoting=true (backslash-escaped quotes) is not supported");
    }
    cfg.progress = match args.progress.as_str() {
        "auto" => Mode::Auto,
        "plain" => Mode::Plain,
        "quiet" => Mode::Quiet,
        other => bail!("--progress must be auto, plain or quiet, not `{other}`"),
    };
    cfg.sync = flag("fsync", &args.fsync, true)?;
    arbor_import::run(&cfg).map_err(|e| anyhow::anyhow!("import failed: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        normalize_argv(args.iter().map(OsString::from).collect())
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect()
    }

    #[test]
    fn old_forms_are_rewritten() {
        assert_eq!(
            norm(&[
                "arbor",
                "import",
                "--into",
                "d",
                "--nodes:Person:User",
                "h.csv,a.csv",
                "--relationships:KNOWS",
                "r.csv",
                "--skip-duplicate-nodes",
                "true",
                "--stacktrace"
            ]),
            [
                "arbor",
                "import",
                "--into",
                "d",
                "--nodes=Person:User=h.csv,a.csv",
                "--relationships=KNOWS=r.csv",
                "--skip-duplicate-nodes=true",
                "--stacktrace"
            ]
        );
        assert_eq!(
            norm(&["arbor", "import", "--nodes:A=x.csv"]),
            ["arbor", "import", "--nodes=A=x.csv"]
        );
        assert_eq!(
            norm(&["arbor", "serve", "--nodes:A", "x"]),
            ["arbor", "serve", "--nodes:A", "x"]
        );
    }

    #[test]
    fn option_values() {
        assert_eq!(one_char("d", "\\t").unwrap(), b'\t');
        assert_eq!(one_char("d", "TAB").unwrap(), b'\t');
        assert_eq!(one_char("d", "U+007C").unwrap(), b'|');
        assert_eq!(one_char("d", ";").unwrap(), b';');
        assert!(one_char("d", "ab").is_err());
        assert_eq!(memory("2G").unwrap(), 2 << 30);
        assert_eq!(memory("512m").unwrap(), 512 << 20);
        assert_eq!(memory("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(memory("1000").unwrap(), 1000);
        assert!(memory("lots").is_err());
        assert_eq!(split_spec("A:B=x.csv,y.csv"), (Some("A:B"), "x.csv,y.csv"));
        assert_eq!(split_spec("dir/x=1.csv"), (None, "dir/x=1.csv"));
        assert_eq!(split_spec("x.csv"), (None, "x.csv"));
    }
}
