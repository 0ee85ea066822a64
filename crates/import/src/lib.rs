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
//! ends through the (now read-only) id map, the collector adds `(start, end, type)` triples and
//! encoded properties to a `spill::RelBuffer`. Linking gives each relationship its id in
//! start-node order (stable, so relationships of one node keep their input order), which makes
//! the store's forward adjacency columns identities. Node records and linked relationships
//! go to `arbor_storage::bulk::CheckpointWriter`, which builds the base as a checkpoint does
//! and writes it through the checkpoint's segment writer: the store is a complete segment, a
//! header-only checkpoint file and a version-5 manifest, so its first open is a segment open
//! (see there for crash safety: a failed import leaves a previous store as it was).
//!
//! Memory (`--max-off-heap-memory`, by default 90 % of the memory available at start): the id
//! map (nothing for ascending id runs, 4-8 bytes per node for dense integer ids, ~17 for sparse
//! ones, ~25 for string ids; it is not spilled), 4 bytes per node while linking, the chunk
//! queues (at most `4 × threads` chunks), and the relationship buffer, which gets half of the
//! rest: past it, relationships and their properties spill to sorted runs on disk, merged while
//! linking (`spill.rs`). Node records wait in a work file while relationships are read. Not
//! covered by the budget yet: the base the segment is built from (the graph's in-memory size,
//! as a checkpoint of the same store needs), held from the node feed to the segment write.
//!
//! Bad input is handled in `report.rs`; value syntax in `values.rs`; headers in `header.rs`.

pub mod csv;
pub mod header;
pub mod idmap;
pub mod input;
pub mod progress;
pub mod report;
pub mod values;

mod run;
mod spill;
pub use run::run;

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use arbor_model::{Error, Status, Value};
use arbor_storage::bulk;

use crate::csv::{first_boundary, Record, Splitter};
use crate::header::{Column, Header, ValueType};
use crate::idmap::{IdKey, IdMap, IdType};
use crate::input::Encoding;
use crate::progress::Mode;
use crate::report::BadKind;
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
    /// Relationships that went to sorted runs on disk (past `--max-off-heap-memory`).
    pub spilled_relationships: u64,
    /// Sorted runs the linking stage merged (1 when everything fit in memory).
    pub link_passes: u32,
    /// Windows of end nodes in which the segment's incoming adjacency was produced, summed
    /// over its columns (one per column when it fit `--max-off-heap-memory`).
    pub backward_passes: u64,
    /// Chunks of node property blobs written to a scratch file while building (under
    /// `--max-off-heap-memory`; 0 when they were held in memory).
    pub node_blob_spills: u64,
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

/// Reads the header record of a group (the first record of its first file). A named pipe can be
/// read only once: its stream comes back with the header taken off ([`input::Held`]), for the
/// pipeline to go on from there (`counter` then counts its bytes).
fn read_header(
    path: &Path,
    cfg: &ImportConfig,
    counter: &Arc<AtomicU64>,
) -> Result<(Vec<String>, Option<input::Held>), Error> {
    let mut record: Option<Vec<u8>> = None;
    let mut held = None;
    if input::is_pipe(path) {
        let mut reader = input::open_stream(path, counter).map_err(arg_err)?;
        let (head, rest) = take_first_record(&mut reader, cfg)
            .map_err(|e| arg_err(format!("cannot read {}: {e}", path.display())))?;
        record = Some(head.clone());
        held = Some(input::Held { reader, head, rest });
    } else {
        let counter = Arc::new(AtomicU64::new(0));
        input::for_each_stream(path, &counter, &mut |r| {
            let (rec, _) = take_first_record(r, cfg)?;
            record = Some(rec);
            Ok(false)
        })
        .map_err(arg_err)?;
    }
    let fields = header_fields(path, cfg, record.unwrap_or_default())?;
    Ok((fields, held))
}

/// Splits a header record into its field names.
fn header_fields(path: &Path, cfg: &ImportConfig, mut data: Vec<u8>) -> Result<Vec<String>, Error> {
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
    held: Option<input::Held>,
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
            let mut held = held;
            for (fi, path) in files.iter().enumerate() {
                let mut feed = |r: &mut dyn Read, head: Vec<u8>, rest: Vec<u8>| {
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
                    let read = input::chunks(r, cfg.quote, cfg.multiline_fields, carry, &mut emit);
                    read.map_err(|e| format!("{e} (after line {})", line - 1))?;
                    Ok(!stop.load(Ordering::Relaxed))
                };
                // The group's first file, when a pipe, was opened by `read_header`: go on from
                // its stream (a pipe cannot be opened a second time).
                let r = match held.take().filter(|_| fi == 0) {
                    Some(mut h) => feed(&mut h.reader, h.head, h.rest)
                        .map(|_| ())
                        .map_err(|e| format!("cannot read {}: {e}", path.display())),
                    None => input::for_each_stream(path, counter, &mut |r| {
                        let (head, rest) = take_first_record(r, cfg)?;
                        feed(r, head, rest)
                    }),
                };
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

#[cfg(test)]
mod tests;
