//! Bulk creation of a store without transactions: what `arbor import` writes.
//!
//! The importer feeds what a checkpoint holds (tokens, schema rules, node records in ascending
//! id order, then relationship records in ascending id order) and the result is a regular data
//! directory in the current format: the records go into the same `BaseBuilder` a checkpoint
//! uses, and [`CheckpointWriter::finish`] writes that base through the checkpoint's segment
//! writer (`checkpoint_segments::write`: one code path for the format) as a complete
//! `segment-<ts>.arbor`, beside a `checkpoint-<ts>.arbor` holding only the header (next ids,
//! tokens, schema) and a `MANIFEST` of the current version naming both. The first open is a
//! segment open.
//! The base is held in memory until it is written, as a checkpoint holds it, except its
//! incoming adjacency: relationships fed in start-node order (the importer's) let the segment
//! writer produce the incoming neighbour, relationship and type columns in windows of end nodes
//! bounded by [`CheckpointWriter::set_memory_budget`] (`base/backward.rs`), the same bytes as
//! the columns built whole (see BENCHMARKS.md "Import within a memory budget" for the sizes).
//!
//! Crash safety: the checkpoint file is written to a `.tmp` file beside the destination's
//! contents, the segment into the `import-staging` directory inside it. Into an empty
//! destination, [`CheckpointWriter::create`] first writes (and fsyncs) an `IMPORT-INCOMPLETE`
//! marker. Over a previous store (`overwrite`), the previous store stays untouched and usable
//! while the new files are written (an import that fails, runs out of disk or is killed leaves
//! it as it was); only [`CheckpointWriter::finish`], once the new files are durable, writes the
//! marker and removes the previous store files. Then the segment and the `.tmp` are renamed,
//! the `MANIFEST` written atomically, and the marker deleted. [`Store::open`](crate::Store::open)
//! refuses a directory holding the marker, so no point of an import leaves a store that opens
//! as if it were complete. The store's `LOCK` is held throughout, so a running server's
//! directory cannot be overwritten.
//!
//! Relationships fed in start-node order make the base's forward adjacency columns identities
//! (free in memory and load time); the importer sorts them that way before writing.
//!
//! The writer trusts its caller for the contents of pre-encoded records (the `*_raw` methods take
//! bytes from [`encode_labels`] / [`encode_props`], transcoded into the builder's blobs without
//! building values: `BaseBuilder::node_encoded`) but checks id
//! order and end-node bounds, the invariants whose violation recovery would report as
//! corruption.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use arbor_model::{Error, Result, Status, Value};

use crate::base::{Base, BaseBuilder, SegmentStreams};
use crate::codec::{Enc, MAX_ID};
use crate::durability::checkpoint::{
    checkpoint_name, write_atomic, CK_MAGIC, MANIFEST, MF_MAGIC, TAG_END, TAG_NODE, TAG_REL,
};
use crate::durability::checkpoint_segments;
use crate::durability::wal::{io_err, sync_dir};
use crate::mvcc::CountDelta;
use crate::schema::Target;
use crate::vfs::{create_private_dir_all, private_file_options, RealFs};

/// Name of the marker file present while an import is writing a data directory.
pub const INCOMPLETE_MARKER: &str = "IMPORT-INCOMPLETE";

/// The commit timestamp of an imported store's checkpoint (the first commit after it is 2).
pub const IMPORT_TS: u64 = 1;

/// The directory (inside the destination) the segment is written to before it replaces a
/// previous store's files.
pub const STAGING_DIR: &str = "import-staging";

/// The scratch file of the node property blobs, in the staging directory.
const BLOB_SCRATCH: &str = "node-blobs.scratch";

/// The scratch files of the forward neighbour and type columns, in the staging directory.
const FWD_SCRATCH: [&str; 2] = ["fwd-other.scratch", "fwd-type.scratch"];

/// Bytes the forward neighbour and type columns take per relationship in memory (at most: a
/// four-byte end node and a one-byte type), to decide whether they spill.
const FWD_BYTES_PER_REL: u64 = 5;

/// The largest chunk of node property blobs held before it is written to the scratch file.
pub const BLOB_CHUNK_MAX: u64 = 4 << 20;

/// The share of the budget (one part in this many) one window of the incoming adjacency may
/// hold while the segment is written, when the forward columns are in memory beside it (each
/// window is one more scan of the forward neighbours).
const WINDOW_SHARE: u64 = 8;

/// The same share when the forward columns, degree counts and offsets were spilled: the segment
/// stage then holds little else per node (label codes and bitsets, dirty bits: ~1.4 GB at B2B
/// 1.0), so a window may take half the budget (B2B 1.0 under 8 GiB: 268 M entries, 9 windows
/// per column instead of 34 at an eighth).
const WINDOW_SHARE_SPILLED: u64 = 2;

/// Bytes a window holds per entry: the value and, at most one per entry, an end node's cursor.
const WINDOW_BYTES_PER_ENTRY: u64 = 16;

/// An index or unique constraint to create with the store (built when the store is opened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkIndex {
    pub name: String,
    pub label: u32,
    pub key: u32,
    pub unique: bool,
}

/// Everything a checkpoint states before its records. Token ids are positions in the lists.
#[derive(Clone, Debug, Default)]
pub struct BulkHeader {
    pub labels: Vec<String>,
    pub rel_types: Vec<String>,
    pub property_keys: Vec<String>,
    pub indexes: Vec<BulkIndex>,
    /// One past the highest node id written.
    pub next_node: u64,
    /// One past the highest relationship id written.
    pub next_rel: u64,
}

/// What [`CheckpointWriter::finish`] wrote.
#[derive(Clone, Debug)]
pub struct BulkSummary {
    pub checkpoint: PathBuf,
    /// The complete segment (`None` only for the old format, written by this crate's tests).
    pub segment: Option<PathBuf>,
    /// Bytes of the checkpoint file and the segment.
    pub bytes: u64,
    pub nodes: u64,
    pub relationships: u64,
    /// Windows in which the incoming adjacency was produced (summed over its columns; 0 when
    /// it was built whole).
    pub backward_passes: u64,
    /// Chunks of node property blobs written to the scratch file (0: held in memory).
    pub node_blob_spills: u64,
}

/// Whether `dir` holds (part of) a store: a manifest, a checkpoint, a WAL segment, or the
/// marker of an unfinished import. `LOCK` and `auth.toml` alone do not count.
pub fn holds_store(dir: &Path) -> Result<bool> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_err("cannot list", dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io_err("cannot list", dir, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if is_store_file(&name) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn is_store_file(name: &str) -> bool {
    name == MANIFEST
        || name == INCOMPLETE_MARKER
        || name.starts_with("checkpoint-")
        || name.starts_with("segment-")
        || (name.starts_with("wal-") && name.ends_with(".log"))
        || name.ends_with(".tmp")
}

/// Fails if `dir` holds the marker of an import that did not finish.
pub(crate) fn refuse_incomplete(dir: &Path) -> Result<()> {
    if dir.join(INCOMPLETE_MARKER).exists() {
        return Err(Error::new(
            Status::Io,
            format!(
                "the store in {} is the result of an import that did not finish ({} is present); \
                 run the import again with --overwrite-destination, or remove the directory",
                dir.display(),
                INCOMPLETE_MARKER
            ),
        ));
    }
    Ok(())
}

/// Removes the store files of `dir` but the marker and `keep`.
fn remove_store_files(dir: &Path, keep: Option<&Path>) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| io_err("cannot list", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_err("cannot list", dir, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        if is_store_file(&name) && name != INCOMPLETE_MARKER && Some(path.as_path()) != keep {
            fs::remove_file(&path).map_err(|e| io_err("cannot remove", &path, e))?;
        }
    }
    Ok(())
}

/// Appends a label list in checkpoint encoding, sorting and deduplicating it first.
pub fn encode_labels(buf: &mut Vec<u8>, labels: &mut Vec<u32>) {
    labels.sort_unstable();
    labels.dedup();
    let mut e = Enc { buf: std::mem::take(buf) };
    e.labels(labels);
    *buf = e.buf;
}

/// Appends a property list in checkpoint encoding after normalizing it as a transaction would:
/// nulls dropped, sorted by key, a repeated key keeping its last value. Values must be storable
/// (see [`check_storable`](crate::check_storable)); the importer only produces storable ones.
pub fn encode_props(buf: &mut Vec<u8>, props: &mut Vec<(u32, Value)>) {
    props.retain(|(_, v)| !v.is_null());
    // Stable sort keeps input order within a key, so "last wins" is the last of each run.
    props.sort_by_key(|(k, _)| *k);
    let mut i = 0;
    while i + 1 < props.len() {
        if props[i].0 == props[i + 1].0 {
            props.remove(i);
        } else {
            i += 1;
        }
    }
    let mut e = Enc { buf: std::mem::take(buf) };
    e.props(props);
    *buf = e.buf;
}

/// The empty property list, pre-encoded.
pub const NO_PROPS: &[u8] = &[0];

/// Writes a new store's segment, checkpoint and manifest (see the module doc).
pub struct CheckpointWriter {
    dir: PathBuf,
    name: String,
    tmp: PathBuf,
    staging: PathBuf,
    out: Option<BufWriter<File>>,
    crc: u32,
    bytes: u64,
    next_node: u64,
    next_rel: u64,
    /// Ids written so far (checked ascending and below the header's bounds).
    nodes: u64,
    rels: u64,
    last_node: Option<u64>,
    last_rel: Option<u64>,
    in_rels: bool,
    scratch: Enc,
    /// The base the records build; `None` writes them into the checkpoint file instead (the
    /// format before complete segments, kept for this crate's migration tests).
    builder: Option<BaseBuilder>,
    /// The node indexes of the header, built into the segment.
    pairs: Vec<Target>,
    /// Bytes the segment stage may hold beyond the base ([`CheckpointWriter::set_memory_budget`]).
    budget: Option<u64>,
    backward_passes: u64,
    node_blob_spills: u64,
    sync: bool,
    done: bool,
    _lock: File,
}

impl CheckpointWriter {
    /// Prepares `dir` (created if missing) and starts the store. Refuses a directory that
    /// holds a store unless `overwrite`, in which case the old store files are deleted (after
    /// the incomplete-import marker is durable). `sync` = fsync files and directory.
    pub fn create(
        dir: &Path,
        header: &BulkHeader,
        overwrite: bool,
        sync: bool,
    ) -> Result<CheckpointWriter> {
        let mut w = Self::start(dir, header, overwrite, sync)?;
        w.builder = Some(BaseBuilder::new(IMPORT_TS));
        Ok(w)
    }

    /// [`CheckpointWriter::create`] for the format before complete segments: every record in
    /// the checkpoint file, no segment (a store the next checkpoint migrates).
    #[cfg(test)]
    pub(crate) fn create_old_format(
        dir: &Path,
        header: &BulkHeader,
        overwrite: bool,
        sync: bool,
    ) -> Result<CheckpointWriter> {
        Self::start(dir, header, overwrite, sync)
    }

    fn start(
        dir: &Path,
        header: &BulkHeader,
        overwrite: bool,
        sync: bool,
    ) -> Result<CheckpointWriter> {
        if header.next_node > MAX_ID || header.next_rel > MAX_ID {
            return Err(Error::new(Status::ArgumentError, "too many entities for one store"));
        }
        create_private_dir_all(dir).map_err(|e| io_err("cannot create", dir, e))?;
        let lock = lock_dir(dir)?;
        if holds_store(dir)? && !overwrite {
            return Err(Error::new(
                Status::ArgumentError,
                format!(
                    "{} already holds a database; use --overwrite-destination to replace it",
                    dir.display()
                ),
            ));
        }
        let previous = dir.join(MANIFEST).exists() && !dir.join(INCOMPLETE_MARKER).exists();
        if !previous {
            // Nothing usable to keep: mark the directory first, then clear what is left.
            write_atomic(&RealFs, dir, INCOMPLETE_MARKER, b"arbor import in progress\n", sync)?;
            remove_store_files(dir, None)?;
        }
        let name = checkpoint_name(IMPORT_TS);
        let tmp = dir.join(format!("{name}.tmp"));
        if previous {
            let _ = fs::remove_file(&tmp); // left by an import that was killed
        }
        let staging = dir.join(STAGING_DIR);
        let _ = fs::remove_dir_all(&staging); // likewise
        create_private_dir_all(&staging).map_err(|e| io_err("cannot create", &staging, e))?;
        let file = private_file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| io_err("cannot create", &tmp, e))?;
        let mut w = CheckpointWriter {
            dir: dir.to_path_buf(),
            name,
            tmp,
            staging,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            crc: 0,
            bytes: 0,
            next_node: header.next_node,
            next_rel: header.next_rel,
            nodes: 0,
            rels: 0,
            last_node: None,
            last_rel: None,
            in_rels: false,
            scratch: Enc::new(),
            builder: None,
            pairs: header.indexes.iter().map(|ix| (ix.label, vec![ix.key])).collect(),
            budget: None,
            backward_passes: 0,
            node_blob_spills: 0,
            sync,
            done: false,
            _lock: lock,
        };
        w.raw_unchecked(CK_MAGIC, false)?;
        let mut e = Enc::new();
        e.u64(IMPORT_TS);
        e.u64(header.next_node);
        e.u64(header.next_rel);
        for names in [&header.labels, &header.rel_types, &header.property_keys] {
            e.var(names.len() as u64);
            for n in names {
                e.str(n);
            }
        }
        e.var(header.indexes.len() as u64);
        for ix in &header.indexes {
            e.str(&ix.name);
            e.var(u64::from(ix.label));
            e.var(u64::from(ix.key));
            e.u8(u8::from(ix.unique));
        }
        w.raw_unchecked(&e.buf, true)?;
        Ok(w)
    }

    fn raw_unchecked(&mut self, bytes: &[u8], body: bool) -> Result<()> {
        if body {
            self.crc = crc32c::crc32c_append(self.crc, bytes);
        }
        self.bytes += bytes.len() as u64;
        let Some(out) = self.out.as_mut() else {
            return Err(Error::new(Status::Internal, "checkpoint writer already finished"));
        };
        out.write_all(bytes).map_err(|e| io_err("cannot write", &self.tmp, e))
    }

    fn flush_scratch(&mut self) -> Result<()> {
        let buf = std::mem::take(&mut self.scratch.buf);
        let r = self.raw_unchecked(&buf, true);
        self.scratch.buf = buf;
        self.scratch.buf.clear();
        r
    }

    /// Writes a node whose labels and properties are already encoded (by [`encode_labels`]
    /// followed by [`encode_props`]). Ids must ascend and come before any relationship.
    pub fn node_raw(&mut self, id: u64, labels_and_props: &[u8]) -> Result<()> {
        if self.in_rels || self.last_node.is_some_and(|l| id <= l) || id >= self.next_node {
            return Err(Error::new(
                Status::Internal,
                format!("bulk node {id} out of order or beyond the header's bound"),
            ));
        }
        self.last_node = Some(id);
        self.nodes += 1;
        if let Some(b) = self.builder.as_mut() {
            let ok = b.node_encoded(id, labels_and_props);
            if let Some((path, e)) = b.spill_error() {
                return Err(io_err("cannot write", path, io::Error::new(e.kind(), e.to_string())));
            }
            return if ok { Ok(()) } else { Err(bad_record("node", id)) };
        }
        self.scratch.u8(TAG_NODE);
        self.scratch.var(id);
        self.scratch.buf.extend_from_slice(labels_and_props);
        if self.scratch.buf.len() >= 1 << 16 {
            self.flush_scratch()?;
        }
        Ok(())
    }

    /// Writes a node from plain labels and properties (normalized here).
    pub fn node(&mut self, id: u64, labels: &[u32], props: &[(u32, Value)]) -> Result<()> {
        let mut buf = Vec::new();
        encode_labels(&mut buf, &mut labels.to_vec());
        encode_props(&mut buf, &mut props.to_vec());
        self.node_raw(id, &buf)
    }

    /// Writes a relationship whose properties are already encoded ([`encode_props`], or
    /// [`NO_PROPS`]). Ids must ascend; both ends must be written nodes' ids (the caller
    /// guarantees they exist; here they are checked against the highest node written).
    pub fn rel_raw(&mut self, id: u64, start: u64, end: u64, ty: u32, props: &[u8]) -> Result<()> {
        let max = self.last_node;
        if self.last_rel.is_some_and(|l| id <= l)
            || id >= self.next_rel
            || max.is_none_or(|m| start > m || end > m)
        {
            return Err(Error::new(
                Status::Internal,
                format!("bulk relationship {id} out of order or with an unknown end node"),
            ));
        }
        self.in_rels = true;
        self.last_rel = Some(id);
        self.rels += 1;
        if let Some(b) = self.builder.as_mut() {
            let ok = b.rel_encoded(id, start, end, ty, props);
            if let Some((path, e)) = b.spill_error() {
                return Err(io_err("cannot write", path, io::Error::new(e.kind(), e.to_string())));
            }
            return if ok { Ok(()) } else { Err(bad_record("relationship", id)) };
        }
        self.scratch.u8(TAG_REL);
        self.scratch.var(id);
        self.scratch.var(start);
        self.scratch.var(end);
        self.scratch.var(u64::from(ty));
        self.scratch.buf.extend_from_slice(props);
        if self.scratch.buf.len() >= 1 << 16 {
            self.flush_scratch()?;
        }
        Ok(())
    }

    /// Writes a relationship from plain properties (normalized here).
    pub fn rel(
        &mut self,
        id: u64,
        start: u64,
        end: u64,
        ty: u32,
        props: &[(u32, Value)],
    ) -> Result<()> {
        let mut buf = Vec::new();
        encode_props(&mut buf, &mut props.to_vec());
        self.rel_raw(id, start, end, ty, &buf)
    }

    /// Bounds what writing the segment holds beyond the base's own columns: the incoming
    /// adjacency is produced in windows of end nodes whose entries (16 bytes each while
    /// scattered) take at most a [`WINDOW_SHARE`] of `bytes`, and at most a quarter of the
    /// relationships (`None`:
    /// one window per column). Relationships fed in start-node order only; otherwise the base is built
    /// whole. With a budget, and before the first node, the node property blobs go to a
    /// scratch file in the staging directory as they are built, in chunks of a sixteenth of
    /// the budget (at most [`BLOB_CHUNK_MAX`]), and are read back into the segment (no index
    /// in the header: an index is built from the blobs). Likewise, before the first
    /// relationship, the forward neighbour and type columns (`base/fwd_spill.rs`), whatever
    /// the header's indexes, unless they fit a quarter of the budget
    /// ([`FWD_BYTES_PER_REL`] per relationship of the header): the budget decides.
    pub fn set_memory_budget(&mut self, bytes: Option<u64>) -> Result<()> {
        self.budget = bytes;
        let (Some(m), Some(b)) = (bytes, self.builder.as_mut()) else { return Ok(()) };
        let chunk = (m / 16).clamp(1, BLOB_CHUNK_MAX) as usize;
        let vfs: std::sync::Arc<dyn crate::vfs::Vfs> = std::sync::Arc::new(RealFs);
        if self.rels == 0 && self.next_rel.saturating_mul(FWD_BYTES_PER_REL) > m / 4 {
            let paths = FWD_SCRATCH.map(|f| self.staging.join(f));
            b.spill_forward(vfs.clone(), paths, chunk)
                .map_err(|e| io_err("cannot create", &self.staging, e))?;
        }
        if !self.pairs.is_empty() || self.nodes > 0 {
            return Ok(());
        }
        let path = self.staging.join(BLOB_SCRATCH);
        b.spill_node_blobs(vfs, path.clone(), chunk).map_err(|e| io_err("cannot create", &path, e))
    }

    /// Bytes of the checkpoint file written so far (including buffered ones; the segment is
    /// written by [`CheckpointWriter::finish`]).
    pub fn bytes_written(&self) -> u64 {
        self.bytes + self.scratch.buf.len() as u64
    }

    /// Ends the checkpoint file and writes the segment (both durable), then replaces any
    /// previous store: from here on the directory opens as the imported store.
    pub fn finish(mut self) -> Result<BulkSummary> {
        self.scratch.u8(TAG_END);
        self.flush_scratch()?;
        let crc = self.crc;
        self.raw_unchecked(&crc.to_le_bytes(), false)?;
        let Some(out) = self.out.take() else {
            return Err(Error::new(Status::Internal, "checkpoint writer already finished"));
        };
        let file =
            out.into_inner().map_err(|e| io_err("cannot write", &self.tmp, e.into_error()))?;
        if self.sync {
            file.sync_all().map_err(|e| io_err("cannot fsync", &self.tmp, e))?;
        }
        drop(file);
        let segment = match self.builder.take() {
            Some(b) => {
                // The importer's linking buffers are gone: give their pages back before the
                // base's columns are built.
                crate::release::release_now();
                // Under a budget, a window takes at most its share of it (larger when the
                // forward columns are spilled), and a quarter of the relationships, even when
                // the budget holds more: the columns built whole
                // would add 9-17 bytes per relationship to the peak, the windows cost three
                // more scans of the forward neighbours. Without one, one window per column
                // (no repeated scans).
                let quarter = self.rels.div_ceil(4).max(1 << 20);
                let share = if b.forward_spilled() { WINDOW_SHARE_SPILLED } else { WINDOW_SHARE };
                let window = match self.budget {
                    Some(m) => (m / share / WINDOW_BYTES_PER_ENTRY).min(quarter),
                    None => self.rels.max(1),
                } as usize;
                let (base, mut streams) = b.finish_streamed(&self.pairs, Some(window));
                let counts = counts_streamed(&base, &streams, &self.staging)?;
                let name = checkpoint_segments::write_streamed(
                    &RealFs,
                    &self.staging,
                    &base,
                    IMPORT_TS,
                    &counts,
                    Some(&mut streams),
                )?;
                self.backward_passes = streams.backward_passes();
                self.node_blob_spills = streams.node_blob_spills();
                // The scratch files go now, before the store files are moved into place.
                drop(streams);
                Some(name)
            }
            None => None,
        };
        if !self.dir.join(INCOMPLETE_MARKER).exists() {
            // The new files are durable: only now may the previous store go.
            write_atomic(
                &RealFs,
                &self.dir,
                INCOMPLETE_MARKER,
                b"arbor import in progress\n",
                self.sync,
            )?;
        }
        remove_store_files(&self.dir, Some(&self.tmp))?;
        let mut seg_path = None;
        if let Some(s) = &segment {
            let (from, to) = (self.staging.join(s), self.dir.join(s));
            fs::rename(&from, &to).map_err(|e| io_err("cannot rename", &from, e))?;
            self.bytes += fs::metadata(&to).map_err(|e| io_err("cannot stat", &to, e))?.len();
            seg_path = Some(to);
        }
        let fin = self.dir.join(&self.name);
        fs::rename(&self.tmp, &fin).map_err(|e| io_err("cannot rename", &self.tmp, e))?;
        if self.sync {
            sync_dir(&RealFs, &self.dir)?;
        }
        write_atomic(&RealFs, &self.dir, MANIFEST, &self.manifest(segment.as_deref()), self.sync)?;
        let marker = self.dir.join(INCOMPLETE_MARKER);
        fs::remove_file(&marker).map_err(|e| io_err("cannot remove", &marker, e))?;
        if self.sync {
            sync_dir(&RealFs, &self.dir)?;
        }
        self.done = true;
        let _ = fs::remove_dir_all(&self.staging);
        Ok(BulkSummary {
            checkpoint: fin,
            segment: seg_path,
            bytes: self.bytes,
            nodes: self.nodes,
            relationships: self.rels,
            backward_passes: self.backward_passes,
            node_blob_spills: self.node_blob_spills,
        })
    }

    /// The manifest: the checkpoint, the first log segment to replay, and (with a segment)
    /// no sealed log segments, the manifest version and the segment file.
    fn manifest(&self, segment: Option<&str>) -> Vec<u8> {
        let mut m = Enc::new();
        m.buf.extend_from_slice(MF_MAGIC);
        m.u64(IMPORT_TS);
        m.str(&self.name);
        m.u64(IMPORT_TS + 1);
        if let Some(s) = segment {
            m.u64(0);
            m.var(0);
            m.var(checkpoint_segments::MANIFEST_VERSION);
            m.var(1);
            m.str(s);
        }
        let crc = crc32c::crc32c(&m.buf[8..]);
        m.u32(crc);
        m.buf
    }
}

/// The count store of a base written with `streams`: `checkpoint_segments::counts_of`, but
/// with the relationships read from the spilled forward columns when they were (the base then
/// holds none). The same counts, per (start label set, type, end label set) first.
pub(crate) fn counts_streamed(
    base: &Base,
    streams: &SegmentStreams,
    staging: &Path,
) -> Result<CountDelta> {
    if !streams.forward_spilled() {
        return Ok(checkpoint_segments::counts_of(base));
    }
    let mut by_sets: rustc_hash::FxHashMap<(usize, u32, usize), i64> = Default::default();
    let mut run: Option<((usize, u32, usize), i64)> = None;
    let count = |s: u64, ty: u32, e: u64| {
        let k = (base.node_label_code(s), ty, base.node_label_code(e));
        match &mut run {
            Some((rk, n)) if *rk == k => *n += 1,
            _ => {
                if let Some((rk, n)) = run.replace((k, 1)) {
                    *by_sets.entry(rk).or_insert(0) += n;
                }
            }
        }
    };
    streams.for_each_rel_forward(base, count).map_err(|e| io_err("cannot read", staging, e))?;
    if let Some((rk, n)) = run {
        *by_sets.entry(rk).or_insert(0) += n;
    }
    let mut c = CountDelta::default();
    for ((s, ty, e), n) in by_sets {
        c.rel(base.label_set(s), ty, base.label_set(e), n);
    }
    checkpoint_segments::add_node_counts(base, &mut c);
    Ok(c)
}

fn bad_record(what: &str, id: u64) -> Error {
    Error::new(
        Status::Internal,
        format!("bulk {what} {id}: a record that does not decode, out of order or dangling"),
    )
}

/// Creates and locks the store's `LOCK` file (refused while a server has the store open).
fn lock_dir(dir: &Path) -> Result<File> {
    let lock_path = dir.join("LOCK");
    let lock = private_file_options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| io_err("cannot open", &lock_path, e))?;
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::new(
            Status::Io,
            format!("the store in {} is open (stop the server first)", dir.display()),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(io_err("cannot lock", &lock_path, e)),
    }
}

impl Drop for CheckpointWriter {
    fn drop(&mut self) {
        if !self.done {
            // The marker stays: the directory must not open as a (partial) store.
            self.out = None;
            let _ = fs::remove_file(&self.tmp);
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NodeId, RelId, Store, StoreConfig, TokenKind};
    use std::sync::Arc;

    fn header(next_node: u64, next_rel: u64) -> BulkHeader {
        BulkHeader {
            labels: vec!["Person".into(), "City".into()],
            rel_types: vec!["KNOWS".into(), "LIVES_IN".into()],
            property_keys: vec!["name".into(), "age".into(), "since".into()],
            indexes: vec![BulkIndex { name: "person_name".into(), label: 0, key: 0, unique: true }],
            next_node,
            next_rel,
        }
    }

    #[test]
    fn written_store_opens_with_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = CheckpointWriter::create(dir.path(), &header(3, 3), false, false).unwrap();
        w.node(0, &[0], &[(0, Value::String(Arc::from("ann"))), (1, Value::Int(30))]).unwrap();
        w.node(1, &[0], &[(0, Value::String(Arc::from("bob")))]).unwrap();
        w.node(2, &[1], &[(0, Value::String(Arc::from("Oslo"))), (1, Value::Null)]).unwrap();
        w.rel(0, 0, 1, 0, &[(2, Value::Int(2020))]).unwrap();
        w.rel(1, 0, 2, 1, &[]).unwrap();
        w.rel(2, 1, 2, 1, &[]).unwrap();
        let s = w.finish().unwrap();
        assert_eq!((s.nodes, s.relationships), (3, 3));
        assert!(!dir.path().join(INCOMPLETE_MARKER).exists());

        let store = Store::open(dir.path(), StoreConfig::default()).unwrap();
        assert_eq!(store.token_id(TokenKind::Label, "City"), Some(1));
        assert_eq!(store.indexes().len(), 1);
        let report = store.check().unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        assert_eq!((report.nodes, report.relationships), (3, 3));
        let tx = store.begin(true);
        assert_eq!(format!("{:?}", tx.node_property(NodeId(0), 1)), "Some(Int(30))");
        assert!(tx.node_property(NodeId(2), 1).is_none());
        assert_eq!(format!("{:?}", tx.rel_property(RelId(0), 2)), "Some(Int(2020))");
        drop(tx);
        store.close().unwrap();
    }

    #[test]
    fn refuses_existing_store_and_out_of_order_ids() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = CheckpointWriter::create(dir.path(), &header(2, 0), false, false).unwrap();
        w.node(1, &[], &[]).unwrap();
        assert!(w.node(0, &[], &[]).is_err());
        assert!(w.node(2, &[], &[]).is_err(), "beyond next_node");
        assert!(w.rel_raw(0, 0, 1, 0, NO_PROPS).is_err(), "beyond next_rel");
        w.finish().unwrap();
        assert!(CheckpointWriter::create(dir.path(), &header(1, 0), false, false).is_err());
        let w = CheckpointWriter::create(dir.path(), &header(1, 0), true, false).unwrap();
        w.finish().unwrap();
        let store = Store::open(dir.path(), StoreConfig::default()).unwrap();
        assert_eq!(store.check().unwrap().nodes, 0);
        store.close().unwrap();
    }

    #[test]
    fn an_unfinished_import_never_opens() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = CheckpointWriter::create(dir.path(), &header(1, 0), false, false).unwrap();
        w.node(0, &[0], &[]).unwrap();
        drop(w);
        let err = Store::open(dir.path(), StoreConfig::default()).err().unwrap();
        assert!(err.message.contains("did not finish"), "{}", err.message);
        assert!(holds_store(dir.path()).unwrap());
        let w = CheckpointWriter::create(dir.path(), &header(0, 0), true, false).unwrap();
        w.finish().unwrap();
        Store::open(dir.path(), StoreConfig::default()).unwrap().close().unwrap();
    }

    #[test]
    fn a_failed_overwrite_keeps_the_previous_store() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = CheckpointWriter::create(dir.path(), &header(2, 0), false, false).unwrap();
        w.node(0, &[0], &[]).unwrap();
        w.node(1, &[0], &[]).unwrap();
        w.finish().unwrap();
        // An overwriting import that stops half way (out of disk, killed): the old store stays.
        let mut w = CheckpointWriter::create(dir.path(), &header(5, 0), true, false).unwrap();
        w.node(0, &[1], &[]).unwrap();
        assert!(!dir.path().join(INCOMPLETE_MARKER).exists());
        drop(w);
        let store = Store::open(dir.path(), StoreConfig::default()).unwrap();
        assert_eq!(store.check().unwrap().nodes, 2);
        store.close().unwrap();
        // One that finishes replaces it.
        let mut w = CheckpointWriter::create(dir.path(), &header(3, 0), true, false).unwrap();
        for id in 0..3 {
            w.node(id, &[1], &[]).unwrap();
        }
        w.finish().unwrap();
        let store = Store::open(dir.path(), StoreConfig::default()).unwrap();
        let report = store.check().unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        assert_eq!(report.nodes, 3);
        store.close().unwrap();
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp") || n == INCOMPLETE_MARKER), "{names:?}");
    }

    #[test]
    fn props_are_normalized() {
        let mut a = Vec::new();
        let mut props =
            vec![(2, Value::Int(1)), (1, Value::Null), (2, Value::Int(5)), (0, Value::Bool(true))];
        encode_props(&mut a, &mut props);
        assert_eq!(format!("{props:?}"), "[(0, Bool(true)), (2, Int(5))]");
        let mut labels = vec![3, 1, 3];
        let mut b = Vec::new();
        encode_labels(&mut b, &mut labels);
        assert_eq!(labels, vec![1, 3]);
        assert_eq!(b, vec![2, 1, 3]);
    }
}
