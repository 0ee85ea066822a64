//! `arbor import`: neo4j-admin compatible bulk import of (gzip/zip) CSV files into a new store.
//!
//! # Pipeline
//!
//! For each input group (a `--nodes` or `--relationships` argument: a header plus data files),
//! one reader thread decompresses the files in order and cuts them into ~1 MiB chunks of whole
//! records; `--threads` parser threads split the records, parse and type the values and encode
//! each node's labels and properties straight into the checkpoint record format; the calling
//! thread takes the parsed chunks back in input order (so node ids are dense and assigned in
//! input order, and duplicate detection is deterministic). Nodes first: the collector assigns
//! ids, fills the id map (`idmap.rs`) and appends the encoded records to a spill file (memory
//! stays flat however many nodes there are). Relationships next: parser threads resolve both
//! ends through the (now read-only) id map, the collector appends `(start, end, type)` triples.
//! Linking: a counting sort by start node (stable, so relationships of one node keep their input
//! order) gives each relationship its id in start-node order, which makes the store's forward
//! adjacency columns identities. Finally `arbor_storage::bulk::CheckpointWriter` writes the
//! checkpoint and the manifest (see there for crash safety).
//!
//! Memory: the id map (nothing for ascending id runs, 4-8 bytes per node for dense integer ids,
//! ~17 for sparse ones, ~25 for string ids), 12 bytes per relationship (24 while sorting),
//! relationship properties when there are any (plus 4 bytes per relationship for the sort
//! order). Past `--max-off-heap-memory` the relationship triples spill to a work file and the
//! linking stage sorts one start-node range at a time (`rel_budget`). Node
//! records never stay in memory. The chunk queues hold at most `4 × threads` chunks.
//!
//! Bad input is handled in `report.rs`; value syntax in `values.rs`; headers in `header.rs`.

pub mod csv;
pub mod header;
pub mod idmap;
pub mod input;
pub mod progress;
pub mod report;
pub mod values;

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use arbor_model::{Error, Status, Value};
use arbor_storage::bulk::{self, BulkHeader, CheckpointWriter};

use crate::csv::{first_boundary, Record, Splitter};
use crate::header::{Column, Entity, Header, ValueType};
use crate::idmap::{IdKey, IdMap, IdType};
use crate::input::Encoding;
use crate::progress::{human_bytes, human_duration, Mode, Stage};
use crate::report::{BadKind, BadLog};
use crate::values::{parse_field, ValueOptions};

/// One `--nodes=[Label1:Label2=]files` argument.
#[derive(Clone, Debug)]
pub struct NodeInput {
    pub labels: Vec<String>,
    pub files: Vec<PathBuf>,
}

/// One `--relationships=[TYPE=]files` argument.
#[derive(Clone, Debug)]
pub struct RelInput {
    pub rel_type: Option<String>,
    pub files: Vec<PathBuf>,
}

/// Everything `arbor import` was asked to do.
#[derive(Clone, Debug)]
pub struct ImportConfig {
    pub dest: PathBuf,
    pub nodes: Vec<NodeInput>,
    pub relationships: Vec<RelInput>,
    pub overwrite: bool,
    pub report_file: PathBuf,
    pub threads: usize,
    /// `--max-off-heap-memory` in bytes (`None` = no limit).
    pub max_memory: Option<u64>,
    pub id_type: IdType,
    pub delimiter: u8,
    pub array_delimiter: u8,
    pub quote: u8,
    pub multiline_fields: bool,
    pub trim_strings: bool,
    pub ignore_empty_strings: bool,
    pub ignore_extra_columns: bool,
    pub skip_duplicate_nodes: bool,
    pub skip_bad_relationships: bool,
    /// `None` = unlimited (`--bad-tolerance=-1`).
    pub bad_tolerance: Option<u64>,
    pub skip_bad_entries_logging: bool,
    pub auto_skip_subsequent_headers: bool,
    pub encoding: Encoding,
    pub progress: Mode,
    /// fsync the store files (off only for tests and throwaway imports).
    pub sync: bool,
}

impl ImportConfig {
    /// A configuration with neo4j-admin's defaults for `dest`.
    pub fn new(dest: PathBuf) -> ImportConfig {
        ImportConfig {
            dest,
            nodes: Vec::new(),
            relationships: Vec::new(),
            overwrite: false,
            report_file: PathBuf::from("import.report"),
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            max_memory: None,
            id_type: IdType::String,
            delimiter: b',',
            array_delimiter: b';',
            quote: b'"',
            multiline_fields: false,
            trim_strings: false,
            ignore_empty_strings: false,
            ignore_extra_columns: false,
            skip_duplicate_nodes: false,
            skip_bad_relationships: false,
            bad_tolerance: Some(1000),
            skip_bad_entries_logging: false,
            auto_skip_subsequent_headers: false,
            encoding: Encoding::Utf8,
            progress: Mode::Auto,
            sync: true,
        }
    }
}

/// What an import did.
#[derive(Clone, Debug, Default)]
pub struct ImportSummary {
    pub nodes: u64,
    pub relationships: u64,
    pub properties: u64,
    pub bad_entries: u64,
    pub elapsed: Duration,
    pub peak_rss: Option<u64>,
    pub input_bytes: u64,
    pub store_bytes: u64,
    /// Each stage's name and duration.
    pub stages: Vec<(String, Duration)>,
    /// Relationships that went to the spill file (past `--max-off-heap-memory`).
    pub spilled_relationships: u64,
    /// Start-node ranges the linking stage needed (1 when everything fit in memory).
    pub link_passes: u32,
}

fn arg_err(msg: impl Into<String>) -> Error {
    Error::new(Status::ArgumentError, msg)
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::new(Status::Io, format!("{what} {}: {e}", path.display()))
}

// ------------------------------------------------------------------------------ tokens

#[derive(Default)]
struct TokenSet {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl TokenSet {
    fn get_or_add(&mut self, name: &str) -> u32 {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }
}

/// Labels and types are discovered by parser threads (`:LABEL`, `:TYPE` columns); each thread
/// caches what it resolved so the shared lock is taken once per distinct name.
struct SharedTokens(RwLock<TokenSet>);

impl SharedTokens {
    fn new() -> SharedTokens {
        SharedTokens(RwLock::new(TokenSet::default()))
    }
    fn get_or_add(&self, name: &str, cache: &mut HashMap<String, u32>) -> u32 {
        if let Some(id) = cache.get(name) {
            return *id;
        }
        let found = self.0.read().ok().and_then(|t| t.ids.get(name).copied());
        let id = match found {
            Some(id) => id,
            None => match self.0.write() {
                Ok(mut t) => t.get_or_add(name),
                Err(poisoned) => poisoned.into_inner().get_or_add(name),
            },
        };
        cache.insert(name.to_string(), id);
        id
    }
    fn names(&self) -> Vec<String> {
        match self.0.read() {
            Ok(t) => t.names.clone(),
            Err(p) => p.into_inner().names.clone(),
        }
    }
}

// ------------------------------------------------------------------------------ pipeline

/// A block of whole records from one input file.
struct Chunk {
    file: usize,
    first_line: u64,
    data: Vec<u8>,
}

/// Reads the header record of a group (the first record of its first file).
fn read_header(path: &Path, cfg: &ImportConfig) -> Result<Vec<String>, Error> {
    let counter = Arc::new(AtomicU64::new(0));
    let mut record: Option<Vec<u8>> = None;
    input::for_each_stream(path, &counter, &mut |r| {
        let (rec, _) = take_first_record(r, cfg)?;
        record = Some(rec);
        Ok(false)
    })
    .map_err(arg_err)?;
    let mut data = record.unwrap_or_default();
    if cfg.encoding == Encoding::Latin1 {
        input::latin1_to_utf8(&mut data);
    }
    let sp =
        Splitter { delimiter: cfg.delimiter, quote: cfg.quote, multiline: cfg.multiline_fields };
    let mut pos = 0;
    let mut rec = Record::default();
    match sp.next(&data, &mut pos, &mut rec) {
        None => Err(arg_err(format!("{}: the header is missing (empty file)", path.display()))),
        Some(Err(e)) => Err(arg_err(format!("{}:1: bad header: {e}", path.display()))),
        Some(Ok(_)) => rec
            .fields
            .iter()
            .map(|f| {
                String::from_utf8(rec.bytes(&data, f).to_vec()).map_err(|_| {
                    arg_err(format!("{}:1: the header is not valid UTF-8", path.display()))
                })
            })
            .collect(),
    }
}

/// Splits off the first record of a stream: `(record, rest already read)`.
fn take_first_record(r: &mut dyn Read, cfg: &ImportConfig) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut data = Vec::new();
    let mut want = 64 << 10;
    loop {
        let eof = input::fill(r, &mut data, want).map_err(|e| format!("read error: {e}"))?;
        if let Some(b) = first_boundary(&data, cfg.quote, cfg.multiline_fields) {
            let rest = data.split_off(b);
            return Ok((data, rest));
        }
        if eof {
            return Ok((data, Vec::new()));
        }
        if data.len() >= input::MAX_RECORD {
            return Err("the header record is longer than 1 GiB (an unterminated quote?)".into());
        }
        want *= 2;
    }
}

/// Runs one input group through reader -> parsers -> in-order `consume`.
fn pipeline<R: Send>(
    files: &[PathBuf],
    cfg: &ImportConfig,
    header_text: &[u8],
    counter: &Arc<AtomicU64>,
    parse: &(dyn Fn(&Chunk, &mut HashMap<String, u32>) -> R + Sync),
    consume: &mut dyn FnMut(R) -> Result<(), Error>,
) -> Result<(), Error> {
    let workers = cfg.threads.max(1);
    let (chunk_tx, chunk_rx) = crossbeam_channel::bounded::<(u64, Chunk)>(workers * 2);
    let (out_tx, out_rx) = crossbeam_channel::bounded::<(u64, R)>(workers * 2);
    let stop = AtomicBool::new(false);
    let reader_error: Mutex<Option<String>> = Mutex::new(None);
    let mut result = Ok(());
    std::thread::scope(|s| {
        let stop = &stop;
        let reader_error = &reader_error;
        s.spawn(move || {
            let mut seq = 0u64;
            let mut first = true;
            for (fi, path) in files.iter().enumerate() {
                let r = input::for_each_stream(path, counter, &mut |r| {
                    let (head, rest) = take_first_record(r, cfg)?;
                    let mut line = 1u64;
                    let skip = first
                        || (cfg.auto_skip_subsequent_headers
                            && trim_eol(&head) == trim_eol(header_text));
                    first = false;
                    let carry = if skip {
                        line += 1;
                        rest
                    } else {
                        let mut all = head;
                        all.extend_from_slice(&rest);
                        all
                    };
                    let mut emit = |mut data: Vec<u8>| -> Result<bool, String> {
                        if stop.load(Ordering::Relaxed) {
                            return Ok(false);
                        }
                        if cfg.encoding == Encoding::Latin1 {
                            input::latin1_to_utf8(&mut data);
                        }
                        let lines = memchr::memchr_iter(b'\n', &data).count() as u64;
                        let chunk = Chunk { file: fi, first_line: line, data };
                        line += lines;
                        seq += 1;
                        Ok(chunk_tx.send((seq - 1, chunk)).is_ok())
                    };
                    input::chunks(r, cfg.quote, cfg.multiline_fields, carry, &mut emit)?;
                    Ok(!stop.load(Ordering::Relaxed))
                });
                if let Err(e) = r {
                    if let Ok(mut slot) = reader_error.lock() {
                        *slot = Some(e);
                    }
                    break;
                }
                if stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            drop(chunk_tx);
        });
        for _ in 0..workers {
            let rx = chunk_rx.clone();
            let tx = out_tx.clone();
            s.spawn(move || {
                let mut cache = HashMap::new();
                for (seq, chunk) in rx.iter() {
                    if stop.load(Ordering::Relaxed) {
                        continue;
                    }
                    let out = parse(&chunk, &mut cache);
                    if tx.send((seq, out)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(chunk_rx);
        drop(out_tx);
        let mut pending: BTreeMap<u64, R> = BTreeMap::new();
        let mut next = 0u64;
        for (seq, out) in out_rx.iter() {
            if result.is_err() {
                continue; // drain so the workers finish
            }
            pending.insert(seq, out);
            while let Some(out) = pending.remove(&next) {
                next += 1;
                if let Err(e) = consume(out) {
                    stop.store(true, Ordering::Relaxed);
                    result = Err(e);
                    break;
                }
            }
        }
    });
    result?;
    let reader_error = reader_error.lock().ok().and_then(|mut e| e.take());
    if let Some(e) = reader_error {
        return Err(arg_err(e));
    }
    Ok(())
}

fn trim_eol(b: &[u8]) -> &[u8] {
    let mut b = b;
    while let Some((last, rest)) = b.split_last() {
        if *last == b'\n' || *last == b'\r' {
            b = rest;
        } else {
            break;
        }
    }
    b
}

// ------------------------------------------------------------------------------ rows

/// A parse problem of one row: line, kind and reason.
type Bad = (u64, BadKind, String);

/// Per-column plan of a header: what each field becomes.
enum Plan {
    Skip,
    Id { key: Option<u32>, ty: ValueType },
    Labels,
    Start,
    End,
    Type,
    Prop { key: u32, ty: ValueType },
}

fn plan_columns(header: &Header, keys: &mut TokenSet, id_type: IdType) -> Vec<Plan> {
    header
        .columns
        .iter()
        .map(|c| match c {
            Column::Id { prop, .. } => Plan::Id {
                key: prop.as_ref().map(|p| keys.get_or_add(p)),
                ty: if id_type == IdType::String { ValueType::STRING } else { ValueType::LONG },
            },
            Column::Label => Plan::Labels,
            Column::StartId { .. } => Plan::Start,
            Column::EndId { .. } => Plan::End,
            Column::Type => Plan::Type,
            Column::Ignore => Plan::Skip,
            Column::Property { name, ty } => Plan::Prop { key: keys.get_or_add(name), ty: *ty },
        })
        .collect()
}

/// Shared, read-only context of one group's parser threads.
struct RowCtx<'a> {
    cfg: &'a ImportConfig,
    plan: Vec<Plan>,
    splitter: Splitter,
    vopts: ValueOptions,
    labels: &'a SharedTokens,
    types: &'a SharedTokens,
    static_labels: Vec<u32>,
    default_type: Option<String>,
    idmap: Option<&'a IdMap>,
    start_group: usize,
    end_group: usize,
    start_group_name: String,
    end_group_name: String,
}

/// Iterates the records of a chunk: `f(line, fields-as-str)`; bad rows go to `bad`.
fn for_each_row(
    ctx: &RowCtx<'_>,
    chunk: &Chunk,
    bad: &mut Vec<Bad>,
    mut f: impl FnMut(u64, &[(&str, bool)], &mut Vec<Bad>),
) {
    let data = &chunk.data;
    let mut pos = 0;
    let mut line = chunk.first_line;
    let mut rec = Record::default();
    let columns = ctx.plan.len();
    let mut spare: Vec<(&str, bool)> = Vec::with_capacity(columns);
    while pos < data.len() {
        let start = pos;
        let Some(r) = ctx.splitter.next(data, &mut pos, &mut rec) else { break };
        let this = line;
        match r {
            Ok(n) if n <= 1 => line += u64::from(n),
            _ => line += memchr::memchr_iter(b'\n', &data[start..pos]).count() as u64,
        }
        if let Err(e) = r {
            bad.push((this, BadKind::BadRow, e));
            continue;
        }
        if rec.fields.len() == 1 && rec.bytes(data, &rec.fields[0]).is_empty() {
            continue; // blank line
        }
        if rec.fields.len() > columns && !ctx.cfg.ignore_extra_columns {
            bad.push((
                this,
                BadKind::BadRow,
                format!(
                    "{} fields but the header has {columns} columns (use \
                     --ignore-extra-columns=true to ignore extra ones)",
                    rec.fields.len()
                ),
            ));
            continue;
        }
        let mut ok = true;
        let mut texts: Vec<(&str, bool)> = recycle(std::mem::take(&mut spare));
        for (i, fl) in rec.fields.iter().take(columns).enumerate() {
            match std::str::from_utf8(rec.bytes(data, fl)) {
                Ok(s) => texts.push((s, fl.quoted)),
                Err(_) => {
                    bad.push((
                        this,
                        BadKind::BadRow,
                        format!("column {} is not valid UTF-8", i + 1),
                    ));
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        while texts.len() < columns {
            texts.push(("", false));
        }
        f(this, &texts, bad);
        spare = recycle(texts);
    }
}

/// Reuses a vector's allocation for borrows of a different lifetime (an in-place `collect`
/// over an emptied vector keeps the buffer), so rows do not allocate.
fn recycle<'b>(mut v: Vec<(&str, bool)>) -> Vec<(&'b str, bool)> {
    v.clear();
    v.into_iter().map(|_| ("", false)).collect()
}

/// Parsed nodes of one chunk, in input order.
struct NodeOut {
    file: usize,
    rows: Vec<NodeRow>,
    /// Encoded labels + properties of every row, back to back.
    data: Vec<u8>,
    /// Id texts (for duplicate reports), back to back.
    ids: String,
    bad: Vec<Bad>,
    bytes: u64,
}

struct NodeRow {
    line: u64,
    key: Option<IdKey>,
    data_end: u32,
    id_end: u32,
    props: u32,
}

fn parse_nodes(ctx: &RowCtx<'_>, chunk: &Chunk, cache: &mut HashMap<String, u32>) -> NodeOut {
    let mut out = NodeOut {
        file: chunk.file,
        rows: Vec::new(),
        data: Vec::with_capacity(chunk.data.len()),
        ids: String::new(),
        bad: Vec::new(),
        bytes: chunk.data.len() as u64,
    };
    let mut labels: Vec<u32> = Vec::new();
    let mut props: Vec<(u32, Value)> = Vec::new();
    let mut bad = Vec::new();
    let mut last_label: Option<(String, u32)> = None;
    for_each_row(ctx, chunk, &mut bad, |line, texts, bad| {
        labels.clear();
        labels.extend_from_slice(&ctx.static_labels);
        props.clear();
        let mut key = None;
        let mut id_text = "";
        for (plan, (text, quoted)) in ctx.plan.iter().zip(texts) {
            match plan {
                Plan::Skip | Plan::Start | Plan::End | Plan::Type => {}
                Plan::Id { key: prop, ty } => {
                    if text.is_empty() {
                        continue;
                    }
                    match ctx.cfg.id_type.key(text) {
                        Ok(k) => key = Some(k),
                        Err(e) => {
                            bad.push((line, BadKind::BadRow, e));
                            return;
                        }
                    }
                    id_text = text;
                    if let Some(p) = prop {
                        match parse_field(*ty, text, *quoted, &ctx.vopts) {
                            Ok(Some(v)) => props.push((*p, v)),
                            Ok(None) => {}
                            Err(e) => {
                                bad.push((line, BadKind::BadRow, e));
                                return;
                            }
                        }
                    }
                }
                Plan::Labels => {
                    for l in text.split(ctx.cfg.array_delimiter as char) {
                        let l = l.trim();
                        if !l.is_empty() {
                            let id = match &last_label {
                                Some((name, id)) if name == l => *id,
                                _ => {
                                    let id = ctx.labels.get_or_add(l, cache);
                                    last_label = Some((l.to_string(), id));
                                    id
                                }
                            };
                            labels.push(id);
                        }
                    }
                }
                Plan::Prop { key: k, ty } => match parse_field(*ty, text, *quoted, &ctx.vopts) {
                    Ok(Some(v)) => props.push((*k, v)),
                    Ok(None) => {}
                    Err(e) => {
                        bad.push((line, BadKind::BadRow, e));
                        return;
                    }
                },
            }
        }
        bulk::encode_labels(&mut out.data, &mut labels);
        bulk::encode_props(&mut out.data, &mut props);
        out.ids.push_str(id_text);
        out.rows.push(NodeRow {
            line,
            key,
            data_end: out.data.len() as u32,
            id_end: out.ids.len() as u32,
            props: props.len() as u32,
        });
    });
    out.bad = bad;
    out
}

/// Parsed relationships of one chunk.
struct RelOut {
    rels: Vec<(u32, u32, u32)>,
    /// Encoded properties per relationship (ends in `prop_ends`), only if the header has any.
    props: Vec<u8>,
    prop_ends: Vec<u32>,
    prop_count: u64,
    file: usize,
    bad: Vec<Bad>,
    bytes: u64,
}

fn parse_rels(ctx: &RowCtx<'_>, chunk: &Chunk, cache: &mut HashMap<String, u32>) -> RelOut {
    let has_props = ctx.plan.iter().any(|p| matches!(p, Plan::Prop { .. }));
    let mut out = RelOut {
        rels: Vec::new(),
        props: Vec::new(),
        prop_ends: Vec::new(),
        prop_count: 0,
        file: chunk.file,
        bad: Vec::new(),
        bytes: chunk.data.len() as u64,
    };
    let mut props: Vec<(u32, Value)> = Vec::new();
    let mut bad = Vec::new();
    let mut last_type: Option<(String, u32)> = None;
    let Some(idmap) = ctx.idmap else { return out };
    for_each_row(ctx, chunk, &mut bad, |line, texts, bad| {
        props.clear();
        let (mut start, mut end, mut ty) = ("", "", "");
        for (plan, (text, quoted)) in ctx.plan.iter().zip(texts) {
            match plan {
                Plan::Start => start = text,
                Plan::End => end = text,
                Plan::Type => ty = text.trim(),
                Plan::Prop { key, ty } => match parse_field(*ty, text, *quoted, &ctx.vopts) {
                    Ok(Some(v)) => props.push((*key, v)),
                    Ok(None) => {}
                    Err(e) => {
                        bad.push((line, BadKind::BadRow, e));
                        return;
                    }
                },
                _ => {}
            }
        }
        let ty = if ty.is_empty() { ctx.default_type.as_deref().unwrap_or("") } else { ty };
        let describe = || format!("({start})-[:{ty}]->({end})");
        if ty.is_empty() {
            bad.push((line, BadKind::BadRelationship, format!("{} has no type", describe())));
            return;
        }
        let mut resolve = |text: &str, group: usize, gname: &str, which: &str| -> Option<u32> {
            if text.is_empty() {
                bad.push((
                    line,
                    BadKind::BadRelationship,
                    format!("{} has no {which} node id", describe()),
                ));
                return None;
            }
            let found = ctx.cfg.id_type.key(text).ok().and_then(|k| idmap.get(group, &k));
            if found.is_none() {
                bad.push((
                    line,
                    BadKind::BadRelationship,
                    format!(
                        "{} refers to missing {which} node '{text}' in id group '{gname}'",
                        describe()
                    ),
                ));
            }
            found
        };
        let Some(s) = resolve(start, ctx.start_group, &ctx.start_group_name, "start") else {
            return;
        };
        let Some(e) = resolve(end, ctx.end_group, &ctx.end_group_name, "end") else { return };
        // Types repeat from row to row: compare with the previous one before hashing.
        let t = match &last_type {
            Some((name, id)) if name == ty => *id,
            _ => {
                let id = ctx.types.get_or_add(ty, cache);
                last_type = Some((ty.to_string(), id));
                id
            }
        };
        out.rels.push((s, e, t));
        if has_props {
            out.prop_count += props.iter().filter(|(_, v)| !v.is_null()).count() as u64;
            bulk::encode_props(&mut out.props, &mut props);
            out.prop_ends.push(out.props.len() as u32);
        }
    });
    out.bad = bad;
    out
}

// ------------------------------------------------------------------------------ driver

/// Removes the work directory however the import ends.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn total_size(files: &[PathBuf]) -> u64 {
    files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum()
}

fn display_files(files: &[PathBuf]) -> String {
    files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// Runs the import (see the module doc). Prints progress to stdout/stderr unless quiet.
pub fn run(cfg: &ImportConfig) -> Result<ImportSummary, Error> {
    let started = Instant::now();
    let quiet = cfg.progress == Mode::Quiet;
    let say = |s: String| {
        if !quiet {
            println!("{s}");
        }
    };
    if cfg.nodes.is_empty() {
        return Err(arg_err("no node input given (--nodes)"));
    }
    if bulk::holds_store(&cfg.dest)? && !cfg.overwrite {
        return Err(arg_err(format!(
            "{} already holds a database; use --overwrite-destination to replace it",
            cfg.dest.display()
        )));
    }
    for f in cfg
        .nodes
        .iter()
        .flat_map(|n| &n.files)
        .chain(cfg.relationships.iter().flat_map(|r| &r.files))
    {
        if !f.is_file() {
            return Err(arg_err(format!("input file {} does not exist", f.display())));
        }
    }
    let node_bytes: u64 = cfg.nodes.iter().map(|n| total_size(&n.files)).sum();
    let rel_bytes: u64 = cfg.relationships.iter().map(|r| total_size(&r.files)).sum();

    say("Arbor import".to_string());
    say("Input files:".to_string());
    for n in &cfg.nodes {
        let l =
            if n.labels.is_empty() { String::new() } else { format!(":{} ", n.labels.join(":")) };
        say(format!(
            "  nodes {l}{} ({})",
            display_files(&n.files),
            human_bytes(total_size(&n.files) as f64)
        ));
    }
    for r in &cfg.relationships {
        let t = r.rel_type.as_ref().map_or(String::new(), |t| format!("[:{t}] "));
        say(format!(
            "  relationships {t}{} ({})",
            display_files(&r.files),
            human_bytes(total_size(&r.files) as f64)
        ));
    }
    say("Available resources:".to_string());
    if let Some(m) = progress::machine_memory() {
        say(format!("  Total machine memory: {}", human_bytes(m as f64)));
    }
    say(format!(
        "  Max memory for the import: {}",
        cfg.max_memory.map_or("unlimited".to_string(), |m| human_bytes(m as f64))
    ));
    say(format!("  Threads: {} parser(s) + 1 reader + 1 collector", cfg.threads.max(1)));
    say(format!(
        "  Input: {} (nodes {}, relationships {})",
        human_bytes((node_bytes + rel_bytes) as f64),
        human_bytes(node_bytes as f64),
        human_bytes(rel_bytes as f64)
    ));
    say(format!(
        "  Destination: {}; report file: {}",
        cfg.dest.display(),
        cfg.report_file.display()
    ));
    say(String::new());

    arbor_storage::vfs::create_private_dir_all(&cfg.dest)
        .map_err(|e| io_err("cannot create", &cfg.dest, e))?;
    // Work directories left by killed imports are garbage.
    if let Ok(entries) = std::fs::read_dir(&cfg.dest) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("import-work-") {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let work = WorkDir(cfg.dest.join(format!("import-work-{}", std::process::id())));
    arbor_storage::vfs::create_private_dir_all(&work.0)
        .map_err(|e| io_err("cannot create", &work.0, e))?;
    let mut bad = BadLog::create(
        &cfg.report_file,
        cfg.bad_tolerance,
        cfg.skip_duplicate_nodes,
        cfg.skip_bad_relationships,
        !cfg.skip_bad_entries_logging,
    )?;
    let splitter =
        Splitter { delimiter: cfg.delimiter, quote: cfg.quote, multiline: cfg.multiline_fields };
    let vopts = ValueOptions {
        array_delimiter: cfg.array_delimiter,
        trim_strings: cfg.trim_strings,
        ignore_empty_strings: cfg.ignore_empty_strings,
    };
    let labels = SharedTokens::new();
    let types = SharedTokens::new();
    let mut keys = TokenSet::default();
    let mut idmap = IdMap::default();
    let mut summary = ImportSummary { input_bytes: node_bytes + rel_bytes, ..Default::default() };

    // ---- nodes
    let spill_path = work.0.join("nodes.bin");
    let spill_file =
        File::create(&spill_path).map_err(|e| io_err("cannot create", &spill_path, e))?;
    let mut spill = BufWriter::with_capacity(4 << 20, spill_file);
    let mut next_node: u64 = 0;
    let mut stage = Stage::start("Nodes", node_bytes, true, cfg.progress);
    for group in &cfg.nodes {
        let Some(first) = group.files.first() else { continue };
        let fields = read_header(first, cfg)?;
        let header = header::parse(&fields, Entity::Nodes)
            .map_err(|e| arg_err(format!("{}: {e}", first.display())))?;
        let id_group = header.columns.iter().find_map(|c| match c {
            Column::Id { group, .. } => Some(group.clone()),
            _ => None,
        });
        let gi = id_group.as_ref().map(|g| idmap.group(g));
        let static_labels: Vec<u32> = {
            let mut cache = HashMap::new();
            group.labels.iter().map(|l| labels.get_or_add(l, &mut cache)).collect()
        };
        let ctx = RowCtx {
            cfg,
            plan: plan_columns(&header, &mut keys, cfg.id_type),
            splitter,
            vopts,
            labels: &labels,
            types: &types,
            static_labels,
            default_type: None,
            idmap: None,
            start_group: 0,
            end_group: 0,
            start_group_name: String::new(),
            end_group_name: String::new(),
        };
        let names: Vec<String> = group.files.iter().map(|f| f.display().to_string()).collect();
        let header_text = fields.join(&(cfg.delimiter as char).to_string());
        let counter = stage.bytes.clone();
        let mut consume = |out: NodeOut| -> Result<(), Error> {
            let file = &names[out.file];
            let mut bads = out.bad.into_iter().peekable();
            let (mut d0, mut i0) = (0usize, 0usize);
            let mut rows = 0;
            for row in &out.rows {
                while let Some(b) = bads.next_if(|b| b.0 <= row.line) {
                    bad.record(b.1, file, b.0, &b.2)?;
                }
                let data = &out.data[d0..row.data_end as usize];
                let id_text = &out.ids[i0..row.id_end as usize];
                d0 = row.data_end as usize;
                i0 = row.id_end as usize;
                if let (Some(k), Some(g)) = (row.key, gi) {
                    let Ok(node) = u32::try_from(next_node) else {
                        return Err(arg_err("more than 4,294,967,295 nodes in one import"));
                    };
                    if let Err(first) = idmap.insert(g, k, node) {
                        let group = id_group.as_deref().unwrap_or(header::GLOBAL_GROUP);
                        bad.record(
                            BadKind::DuplicateNode,
                            file,
                            row.line,
                            &format!(
                                "id '{id_text}' is defined more than once in id group '{group}' \
                                 (first as node {first})"
                            ),
                        )?;
                        continue;
                    }
                }
                if next_node >= u64::from(u32::MAX) {
                    return Err(arg_err("more than 4,294,967,295 nodes in one import"));
                }
                let mut len = Vec::with_capacity(5);
                put_var(&mut len, data.len() as u64);
                spill.write_all(&len).map_err(|e| io_err("cannot write", &spill_path, e))?;
                spill.write_all(data).map_err(|e| io_err("cannot write", &spill_path, e))?;
                next_node += 1;
                summary.properties += u64::from(row.props);
                rows += 1;
            }
            for b in bads {
                bad.record(b.1, file, b.0, &b.2)?;
            }
            let _ = out.bytes;
            stage.advance(rows);
            Ok(())
        };
        pipeline(
            &group.files,
            cfg,
            header_text.as_bytes(),
            &counter,
            &|chunk, cache| parse_nodes(&ctx, chunk, cache),
            &mut consume,
        )?;
    }
    let took = stage.finish(&format!("{next_node} nodes"));
    summary.stages.push(("nodes".to_string(), took));
    summary.nodes = next_node;
    spill.flush().map_err(|e| io_err("cannot write", &spill_path, e))?;
    drop(spill);
    say(format!("  id map: {}", human_bytes(idmap.bytes() as f64)));

    // ---- relationships
    // (start, end, type) per relationship, in input order.
    let mut rels: Vec<[u32; 3]> = Vec::new();
    let mut rel_props: Vec<u8> = Vec::new();
    let mut rel_prop_ends: Option<Vec<u64>> = None;
    // Relationships per start node, for the counting sort.
    let mut degree: Vec<u32> = vec![0; next_node as usize + 1];
    // Past the memory budget, triples go to a spill file in input order (the in-memory tail
    // follows them); linking then works in start-node ranges that fit the budget.
    let rel_cap = rel_budget(cfg.max_memory, idmap.bytes());
    let rel_spill_path = work.0.join("rels.bin");
    let mut rel_spill: Option<BufWriter<File>> = None;
    let mut spilled: u64 = 0;
    let mut stage = Stage::start("Relationships", rel_bytes, true, cfg.progress);
    for group in &cfg.relationships {
        let Some(first) = group.files.first() else { continue };
        let fields = read_header(first, cfg)?;
        let header = header::parse(&fields, Entity::Relationships)
            .map_err(|e| arg_err(format!("{}: {e}", first.display())))?;
        let (mut sg, mut eg) = (String::new(), String::new());
        for c in &header.columns {
            match c {
                Column::StartId { group } => sg = group.clone(),
                Column::EndId { group } => eg = group.clone(),
                _ => {}
            }
        }
        let find = |g: &str| {
            idmap.find_group(g).ok_or_else(|| {
                arg_err(format!(
                    "{}: id group '{g}' is used by this relationship header but no node header \
                     defines it",
                    first.display()
                ))
            })
        };
        let (sgi, egi) = (find(&sg)?, find(&eg)?);
        let has_props = header.columns.iter().any(|c| matches!(c, Column::Property { .. }));
        if has_props && rel_prop_ends.is_none() {
            rel_prop_ends = Some(vec![0; rels.len()]);
        }
        let ctx = RowCtx {
            cfg,
            plan: plan_columns(&header, &mut keys, cfg.id_type),
            splitter,
            vopts,
            labels: &labels,
            types: &types,
            static_labels: Vec::new(),
            default_type: group.rel_type.clone(),
            idmap: Some(&idmap),
            start_group: sgi,
            end_group: egi,
            start_group_name: sg.clone(),
            end_group_name: eg.clone(),
        };
        let names: Vec<String> = group.files.iter().map(|f| f.display().to_string()).collect();
        let header_text = fields.join(&(cfg.delimiter as char).to_string());
        let counter = stage.bytes.clone();
        let mut consume = |out: RelOut| -> Result<(), Error> {
            let file = &names[out.file];
            for b in &out.bad {
                bad.record(b.1, file, b.0, &b.2)?;
            }
            if spilled as usize + rels.len() + out.rels.len() > u32::MAX as usize {
                return Err(arg_err("more than 4,294,967,295 relationships in one import"));
            }
            for &(s, _, _) in &out.rels {
                degree[s as usize] += 1;
            }
            rels.extend(out.rels.iter().map(|&(s, e, t)| [s, e, t]));
            if rels.len() >= rel_cap {
                let f = match rel_spill.as_mut() {
                    Some(f) => f,
                    None => {
                        let f = File::create(&rel_spill_path)
                            .map_err(|e| io_err("cannot create", &rel_spill_path, e))?;
                        rel_spill.insert(BufWriter::with_capacity(4 << 20, f))
                    }
                };
                let mut bytes = Vec::with_capacity(rels.len() * 12);
                for r in &rels {
                    for v in r {
                        bytes.extend_from_slice(&v.to_le_bytes());
                    }
                }
                f.write_all(&bytes).map_err(|e| io_err("cannot write", &rel_spill_path, e))?;
                spilled += rels.len() as u64;
                rels.clear();
            }
            if let Some(ends_col) = rel_prop_ends.as_mut() {
                if out.prop_ends.is_empty() {
                    ends_col.extend(std::iter::repeat_n(rel_props.len() as u64, out.rels.len()));
                } else {
                    let base = rel_props.len() as u64;
                    rel_props.extend_from_slice(&out.props);
                    ends_col.extend(out.prop_ends.iter().map(|e| base + u64::from(*e)));
                }
            }
            summary.properties += out.prop_count;
            let _ = out.bytes;
            stage.advance(out.rels.len() as u64);
            Ok(())
        };
        pipeline(
            &group.files,
            cfg,
            header_text.as_bytes(),
            &counter,
            &|chunk, cache| parse_rels(&ctx, chunk, cache),
            &mut consume,
        )?;
    }
    let rel_count = spilled + rels.len() as u64;
    if let Some(mut f) = rel_spill.take() {
        f.flush().map_err(|e| io_err("cannot write", &rel_spill_path, e))?;
    }
    let took = stage.finish(&format!("{rel_count} relationships"));
    summary.stages.push(("relationships".to_string(), took));
    summary.relationships = rel_count;
    drop(idmap);
    bad.flush()?;

    // ---- write the store
    let mut stage = Stage::start("Writing nodes", next_node, false, cfg.progress);
    let header = BulkHeader {
        labels: labels.names(),
        rel_types: types.names(),
        property_keys: keys.names.clone(),
        indexes: Vec::new(),
        next_node,
        next_rel: rel_count,
    };
    let mut w = CheckpointWriter::create(&cfg.dest, &header, cfg.overwrite, cfg.sync)?;
    {
        // The spill file is `varint(len) record` per node; read it in large blocks.
        let mut f = File::open(&spill_path).map_err(|e| io_err("cannot read", &spill_path, e))?;
        let mut block: Vec<u8> = Vec::new();
        let mut at = 0usize;
        let mut id = 0u64;
        let mut eof = false;
        while id < next_node {
            match decode_var(&block[at..]) {
                Some((len, n)) if block.len() - at - n >= len as usize => {
                    let rec = &block[at + n..at + n + len as usize];
                    w.node_raw(id, rec)?;
                    at += n + len as usize;
                    id += 1;
                    if id.is_multiple_of(65536) {
                        stage.advance(65536);
                    }
                }
                _ => {
                    if eof {
                        return Err(Error::new(
                            Status::Io,
                            format!("{} is truncated", spill_path.display()),
                        ));
                    }
                    block.drain(..at);
                    at = 0;
                    let want = (block.len() + (4 << 20)).max(block.capacity());
                    eof = input::fill(&mut f, &mut block, want)
                        .map_err(|e| io_err("cannot read", &spill_path, e))?;
                }
            }
        }
    }
    let _ = std::fs::remove_file(&spill_path);
    let took = stage.finish(&format!("{next_node} nodes written"));
    summary.stages.push(("write nodes".to_string(), took));

    // ---- linking: relationships in start-node order (a stable counting sort that scatters the
    // triples: sequential reads, random writes, which the CPU overlaps far better than the
    // random reads of a gather), one start-node range at a time when they were spilled.
    let mut stage = Stage::start("Linking", rel_count, false, cfg.progress);
    let n = next_node as usize;
    let mut pos: Vec<u32> = vec![0; n + 1];
    for i in 0..n {
        pos[i + 1] = pos[i] + degree[i];
    }
    drop(degree);
    let cap = rel_cap.clamp(1, u32::MAX as usize) as u32;
    let mut passes = 0u32;
    let mut lo = 0usize;
    while lo < n {
        let from = pos[lo];
        let mut hi = lo + pos[lo + 1..].partition_point(|p| p - from <= cap);
        if hi == lo {
            hi = lo + 1; // one node with more relationships than the budget
        }
        let len = (pos[hi] - from) as usize;
        if len == 0 {
            lo = hi;
            continue;
        }
        passes += 1;
        let mut sorted: Vec<[u32; 3]> = vec![[0; 3]; len];
        let mut order: Vec<u32> = if rel_prop_ends.is_some() { vec![0; len] } else { Vec::new() };
        let mut cursor: Vec<u32> = pos[lo..hi].iter().map(|p| p - from).collect();
        let mut place = |i: u32, r: [u32; 3]| {
            let s = r[0] as usize;
            if s >= lo && s < hi {
                let c = &mut cursor[s - lo];
                sorted[*c as usize] = r;
                if let Some(o) = order.get_mut(*c as usize) {
                    *o = i;
                }
                *c += 1;
            }
        };
        if spilled > 0 {
            let f = File::open(&rel_spill_path)
                .map_err(|e| io_err("cannot read", &rel_spill_path, e))?;
            let mut r = BufReader::with_capacity(4 << 20, f);
            let mut rec = [0u8; 12];
            for i in 0..spilled {
                r.read_exact(&mut rec).map_err(|e| io_err("cannot read", &rel_spill_path, e))?;
                let word =
                    |k: usize| u32::from_le_bytes([rec[k], rec[k + 1], rec[k + 2], rec[k + 3]]);
                place(i as u32, [word(0), word(4), word(8)]);
            }
        }
        for (j, r) in rels.iter().enumerate() {
            place((spilled as usize + j) as u32, *r);
        }
        for (j, r) in sorted.iter().enumerate() {
            let props = match (&rel_prop_ends, order.get(j)) {
                (Some(e), Some(&i)) => {
                    let i = i as usize;
                    let a = if i == 0 { 0 } else { e[i - 1] as usize };
                    let b = e[i] as usize;
                    if a == b {
                        bulk::NO_PROPS
                    } else {
                        &rel_props[a..b]
                    }
                }
                _ => bulk::NO_PROPS,
            };
            w.rel_raw(u64::from(from) + j as u64, u64::from(r[0]), u64::from(r[1]), r[2], props)?;
            if j % 65536 == 65535 {
                stage.advance(65536);
            }
        }
        lo = hi;
    }
    drop(rels);
    let _ = std::fs::remove_file(&rel_spill_path);
    summary.spilled_relationships = spilled;
    summary.link_passes = passes;
    let took = stage
        .finish(&format!("{rel_count} relationships ordered by start node in {passes} pass(es)"));
    summary.stages.push(("linking".to_string(), took));
    let written = w.finish()?;
    summary.store_bytes = written.bytes;
    say(format!("Store written: {} checkpoint", human_bytes(written.bytes as f64)));
    summary.bad_entries = bad.count;
    bad.flush()?;
    summary.elapsed = started.elapsed();
    summary.peak_rss = progress::peak_rss();

    say(String::new());
    say(format!("IMPORT DONE in {}.", human_duration(summary.elapsed)));
    say("Imported:".to_string());
    say(format!("  {} nodes", summary.nodes));
    say(format!("  {} relationships", summary.relationships));
    say(format!("  {} properties", summary.properties));
    if summary.bad_entries > 0 {
        say(format!(
            "There were {} bad entries which were skipped and logged into {}",
            summary.bad_entries,
            bad.path().display()
        ));
    }
    if let Some(p) = summary.peak_rss {
        say(format!("Peak memory usage: {}", human_bytes(p as f64)));
    }
    Ok(summary)
}

/// How many relationship triples may be held in memory at once: half of what the budget leaves
/// after the id map (the other half is the sorted copy made while linking); unlimited without
/// a budget.
fn rel_budget(max_memory: Option<u64>, idmap_bytes: u64) -> usize {
    match max_memory {
        None => usize::MAX,
        Some(m) => {
            let free = m.saturating_sub(idmap_bytes + (64 << 20));
            usize::try_from(free / 2 / 12).unwrap_or(usize::MAX).max(1 << 12)
        }
    }
}

fn put_var(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Decodes a LEB128 varint at the start of `b`: `(value, bytes used)`, `None` if incomplete.
fn decode_var(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests;
