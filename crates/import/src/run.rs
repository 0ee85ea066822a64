//! The import driver, stage by stage (see the crate doc for the pipeline): check the inputs and
//! print the plan, prepare the destination, read the nodes (ids into the id map, encoded
//! records into a spill file), read the relationships (triples in memory, spilled past the
//! budget), feed the node records, link the relationships in start-node order, write the
//! complete segment, report.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use arbor_model::{Error, Status};
use arbor_storage::bulk::{self, BulkHeader, CheckpointWriter};

use crate::csv::Splitter;
use crate::header::{self, Column, Entity};
use crate::idmap::IdMap;
use crate::progress::{self, human_bytes, human_duration, Mode, Stage};
use crate::report::{BadKind, BadLog};
use crate::spill::{decode_var, put_var, RelBuffer};
use crate::values::ValueOptions;
use crate::{
    arg_err, input, io_err, parse_nodes, parse_rels, pipeline, plan_columns, read_header,
    ImportConfig, ImportSummary, NodeOut, RelOut, RowCtx, SharedTokens, TokenSet,
};

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

/// Prints a line of the report unless quiet.
type Say<'a> = &'a dyn Fn(String);

/// What the reading stages share: the options, the token sets and the bad-entry log.
struct Reader<'a> {
    cfg: &'a ImportConfig,
    splitter: Splitter,
    vopts: ValueOptions,
    labels: SharedTokens,
    types: SharedTokens,
    keys: TokenSet,
    bad: BadLog,
    work: WorkDir,
}

/// The node records spilled by [`read_nodes`].
struct NodeSpill {
    path: PathBuf,
    count: u64,
    /// Bytes of the encoded records (what the base builder will hold of them).
    bytes: u64,
}

/// Runs the import (see the crate doc). Prints progress to stdout/stderr unless quiet. A
/// failure while writing (a full disk, say) also tells what the destination holds now.
pub fn run(cfg: &ImportConfig) -> Result<ImportSummary, Error> {
    import(cfg).map_err(|e| explain_failure(cfg, e))
}

/// Adds to an I/O failure what it left behind: the work files are gone by now (dropped on the
/// way out), so the destination holds the previous store, nothing, or a marked incomplete one.
fn explain_failure(cfg: &ImportConfig, mut e: Error) -> Error {
    if e.status != Status::Io {
        return e;
    }
    let dest = cfg.dest.display();
    let full = e.message.contains("os error 28") || e.message.contains("No space left");
    let state = if cfg.dest.join(bulk::INCOMPLETE_MARKER).exists() {
        format!("{dest} holds no usable store (marked {})", bulk::INCOMPLETE_MARKER)
    } else if bulk::holds_store(&cfg.dest).unwrap_or(false) {
        format!("{dest} still holds its previous store, unchanged")
    } else {
        format!("{dest} holds no store")
    };
    let what = if full { "out of disk space: " } else { "" };
    e.message = format!("{what}{}; the import stopped and {state}", e.message);
    e
}

fn import(cfg: &ImportConfig) -> Result<ImportSummary, Error> {
    let started = Instant::now();
    let quiet = cfg.progress == Mode::Quiet;
    let say = |s: String| {
        if !quiet {
            println!("{s}");
        }
    };
    let (node_bytes, rel_bytes) = check_inputs(cfg)?;
    print_plan(cfg, node_bytes, rel_bytes, &say);
    let work = prepare_destination(cfg)?;
    let bad = BadLog::create(
        &cfg.report_file,
        cfg.bad_tolerance,
        cfg.skip_duplicate_nodes,
        cfg.skip_bad_relationships,
        !cfg.skip_bad_entries_logging,
    )?;
    let mut rd = Reader {
        cfg,
        splitter: Splitter {
            delimiter: cfg.delimiter,
            quote: cfg.quote,
            multiline: cfg.multiline_fields,
        },
        vopts: ValueOptions {
            array_delimiter: cfg.array_delimiter,
            trim_strings: cfg.trim_strings,
            ignore_empty_strings: cfg.ignore_empty_strings,
        },
        labels: SharedTokens::new(),
        types: SharedTokens::new(),
        keys: TokenSet::default(),
        bad,
        work,
    };
    let mut idmap = IdMap::default();
    let mut summary = ImportSummary { input_bytes: node_bytes + rel_bytes, ..Default::default() };

    let nodes = read_nodes(&mut rd, &mut idmap, node_bytes, &mut summary)?;
    say(format!("  id map: {}", human_bytes(idmap.bytes() as f64)));
    let rels = read_relationships(&mut rd, &idmap, &nodes, rel_bytes, &mut summary, &say)?;
    drop(idmap);
    rd.bad.flush()?;

    let header = BulkHeader {
        labels: rd.labels.names(),
        rel_types: rd.types.names(),
        property_keys: rd.keys.names.clone(),
        indexes: Vec::new(),
        next_node: nodes.count,
        next_rel: rels.count(),
    };
    let mut w = CheckpointWriter::create(&cfg.dest, &header, cfg.overwrite, cfg.sync)?;
    w.set_memory_budget(cfg.max_memory)?;
    write_nodes(&mut w, &nodes, cfg.progress, &mut summary)?;
    let rel_count = rels.count();
    let spilled = rels.spilled();
    let mut stage = Stage::start("Linking", rel_count, false, cfg.progress);
    let passes = rels.link(nodes.count, &mut w, &mut stage)?;
    summary.spilled_relationships = spilled;
    summary.link_passes = passes;
    let took = stage.finish(&format!(
        "{rel_count} relationships ordered by start node, {passes} sorted run(s) merged"
    ));
    summary.stages.push(("linking".to_string(), took));
    let stage = Stage::start("Writing segment", 0, false, cfg.progress);
    let written = w.finish()?;
    let took = stage.finish(&format!(
        "complete segment and checkpoint header: {}, incoming adjacency in {} window(s), \
         node property blobs from {} spilled chunk(s)",
        human_bytes(written.bytes as f64),
        written.backward_passes,
        written.node_blob_spills
    ));
    summary.backward_passes = written.backward_passes;
    summary.node_blob_spills = written.node_blob_spills;
    summary.stages.push(("segment".to_string(), took));
    summary.store_bytes = written.bytes;
    say(format!("Store written: {} (complete segment)", human_bytes(written.bytes as f64)));
    summary.bad_entries = rd.bad.count;
    rd.bad.flush()?;
    summary.elapsed = started.elapsed();
    summary.peak_rss = progress::peak_rss();
    print_done(&summary, &rd.bad, &say);
    Ok(summary)
}

/// Checks the arguments and the input files; returns the input sizes (nodes, relationships).
fn check_inputs(cfg: &ImportConfig) -> Result<(u64, u64), Error> {
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
        if !input::is_input(f) {
            return Err(arg_err(format!("input file {} does not exist", f.display())));
        }
    }
    let node_bytes: u64 = cfg.nodes.iter().map(|n| total_size(&n.files)).sum();
    let rel_bytes: u64 = cfg.relationships.iter().map(|r| total_size(&r.files)).sum();
    Ok((node_bytes, rel_bytes))
}

/// The report's head: input files, resources, destination.
fn print_plan(cfg: &ImportConfig, node_bytes: u64, rel_bytes: u64, say: Say<'_>) {
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
}

/// Creates the destination, removes work directories left by killed imports, and creates
/// this import's own.
fn prepare_destination(cfg: &ImportConfig) -> Result<WorkDir, Error> {
    arbor_storage::vfs::create_private_dir_all(&cfg.dest)
        .map_err(|e| io_err("cannot create", &cfg.dest, e))?;
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
    Ok(work)
}

/// Reads every node group: assigns ids in input order, fills the id map and appends each
/// node's encoded record (`varint(len) record`) to the spill file.
fn read_nodes(
    rd: &mut Reader<'_>,
    idmap: &mut IdMap,
    node_bytes: u64,
    summary: &mut ImportSummary,
) -> Result<NodeSpill, Error> {
    let cfg = rd.cfg;
    let spill_path = rd.work.0.join("nodes.bin");
    let spill_file =
        File::create(&spill_path).map_err(|e| io_err("cannot create", &spill_path, e))?;
    let mut spill = BufWriter::with_capacity(4 << 20, spill_file);
    let mut next_node: u64 = 0;
    let mut record_bytes: u64 = 0;
    let mut stage = Stage::start("Nodes", node_bytes, true, cfg.progress);
    for group in &cfg.nodes {
        let Some(first) = group.files.first() else { continue };
        let (fields, held) = read_header(first, cfg, &stage.bytes)?;
        let header = header::parse(&fields, Entity::Nodes)
            .map_err(|e| arg_err(format!("{}: {e}", first.display())))?;
        let id_group = header.columns.iter().find_map(|c| match c {
            Column::Id { group, .. } => Some(group.clone()),
            _ => None,
        });
        let gi = id_group.as_ref().map(|g| idmap.group(g));
        let static_labels: Vec<u32> = {
            let mut cache = HashMap::new();
            group.labels.iter().map(|l| rd.labels.get_or_add(l, &mut cache)).collect()
        };
        let ctx = RowCtx {
            cfg,
            plan: plan_columns(&header, &mut rd.keys, cfg.id_type),
            splitter: rd.splitter,
            vopts: rd.vopts,
            labels: &rd.labels,
            types: &rd.types,
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
        let bad = &mut rd.bad;
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
                record_bytes += data.len() as u64;
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
            held,
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
    Ok(NodeSpill { path: spill_path, count: next_node, bytes: record_bytes })
}

/// Reads every relationship group: both ends resolved through the id map, `(start, end,
/// type)` triples kept in input order (spilled past the memory budget, after which linking
/// works in start-node ranges that fit it), properties encoded alongside.
fn read_relationships(
    rd: &mut Reader<'_>,
    idmap: &IdMap,
    nodes: &NodeSpill,
    rel_bytes: u64,
    summary: &mut ImportSummary,
    say: Say<'_>,
) -> Result<RelBuffer, Error> {
    let cfg = rd.cfg;
    let node_count = nodes.count;
    // The id map is gone while linking, but the base builder then holds its per-node columns;
    // the node records (blobs and offsets) are in its scratch files under a budget.
    let builder = BUILDER_BYTES_PER_NODE * (node_count + 1);
    let held = idmap.bytes().max(builder);
    let cap = rel_budget(cfg.max_memory, held, node_count, cfg.threads);
    if let Some(m) = cfg.max_memory {
        say(format!(
            "Memory budget {}: id map {} or node columns {} (records {} on disk), linking {}, \
             pipeline {}; \
             relationships past {} spill to sorted runs on disk",
            human_bytes(m as f64),
            human_bytes(idmap.bytes() as f64),
            human_bytes(builder as f64),
            human_bytes(nodes.bytes as f64),
            human_bytes((4 * (node_count + 1)) as f64),
            human_bytes(pipeline_bytes(cfg.threads) as f64),
            human_bytes(cap as f64)
        ));
    }
    let mut rels = RelBuffer::new(rd.work.0.join("rels.bin"), cap);
    let mut stage = Stage::start("Relationships", rel_bytes, true, cfg.progress);
    for group in &cfg.relationships {
        let Some(first) = group.files.first() else { continue };
        let (fields, held) = read_header(first, cfg, &stage.bytes)?;
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
        let ctx = RowCtx {
            cfg,
            plan: plan_columns(&header, &mut rd.keys, cfg.id_type),
            splitter: rd.splitter,
            vopts: rd.vopts,
            labels: &rd.labels,
            types: &rd.types,
            static_labels: Vec::new(),
            default_type: group.rel_type.clone(),
            idmap: Some(idmap),
            start_group: sgi,
            end_group: egi,
            start_group_name: sg.clone(),
            end_group_name: eg.clone(),
        };
        let names: Vec<String> = group.files.iter().map(|f| f.display().to_string()).collect();
        let header_text = fields.join(&(cfg.delimiter as char).to_string());
        let counter = stage.bytes.clone();
        let bad = &mut rd.bad;
        let mut consume = |out: RelOut| -> Result<(), Error> {
            for b in &out.bad {
                bad.record(b.1, &names[out.file], b.0, &b.2)?;
            }
            rels.push(&out.rels, &out.props, &out.prop_ends)?;
            summary.properties += out.prop_count;
            stage.advance(out.rels.len() as u64);
            Ok(())
        };
        pipeline(
            &group.files,
            held,
            cfg,
            header_text.as_bytes(),
            &counter,
            &|chunk, cache| parse_rels(&ctx, chunk, cache),
            &mut consume,
        )?;
    }
    let took = stage.finish(&format!("{} relationships", rels.count()));
    summary.stages.push(("relationships".to_string(), took));
    summary.relationships = rels.count();
    Ok(rels)
}

/// Feeds the spilled node records to the store writer, reading the spill file in large
/// blocks.
fn write_nodes(
    w: &mut CheckpointWriter,
    nodes: &NodeSpill,
    mode: Mode,
    summary: &mut ImportSummary,
) -> Result<(), Error> {
    let mut stage = Stage::start("Writing nodes", nodes.count, false, mode);
    let path = &nodes.path;
    let mut f = File::open(path).map_err(|e| io_err("cannot read", path, e))?;
    let mut block: Vec<u8> = Vec::new();
    let mut at = 0usize;
    let mut id = 0u64;
    let mut eof = false;
    while id < nodes.count {
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
                    return Err(Error::new(Status::Io, format!("{} is truncated", path.display())));
                }
                block.drain(..at);
                at = 0;
                let want = (block.len() + (4 << 20)).max(block.capacity());
                eof = input::fill(&mut f, &mut block, want)
                    .map_err(|e| io_err("cannot read", path, e))?;
            }
        }
    }
    drop(f);
    let _ = std::fs::remove_file(path);
    let took = stage.finish(&format!("{} nodes written", nodes.count));
    summary.stages.push(("write nodes".to_string(), took));
    Ok(())
}

/// The report's tail: what was imported, bad entries, peak memory.
fn print_done(summary: &ImportSummary, bad: &BadLog, say: Say<'_>) {
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
}

/// Bytes per node the base builder holds while linking under a budget, its node property
/// blobs and their offsets spilled to scratch files (`storage::bulk`): label codes (1) and
/// out- and in-degree counts (4 + 4).
const BUILDER_BYTES_PER_NODE: u64 = 9;

/// The relationship buffer's share of the budget in bytes: half of what is left after `held`
/// (the id map while reading, the base builder's per-node columns while linking), the
/// per-node array of linking (4 bytes per node) and the pipeline's chunk queues (the other half
/// is the sorted copy or the merge's read blocks while linking). Unlimited without a budget.
fn rel_budget(max_memory: Option<u64>, held: u64, nodes: u64, threads: usize) -> usize {
    match max_memory {
        None => usize::MAX,
        Some(m) => {
            let fixed = held + 4 * (nodes + 1) + pipeline_bytes(threads);
            let free = m.saturating_sub(fixed);
            usize::try_from(free / 2).unwrap_or(usize::MAX).max(64 << 10)
        }
    }
}

/// What the reader, parser and collector stages hold at most: `4 × threads` chunks of ~1 MiB in
/// flight, each with its parsed form, plus the writer's buffers.
fn pipeline_bytes(threads: usize) -> u64 {
    (32 << 20) + (threads.max(1) as u64) * (12 << 20)
}
