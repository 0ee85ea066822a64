//! Checkpoints, the manifest, and base rebuilds.
//!
//! A checkpoint is the full state at one snapshot ts `C`, written from a read-only snapshot
//! transaction (writers keep going) to `checkpoint-<C>.arbor.tmp`, fsynced, renamed, and the
//! directory fsynced; then `MANIFEST` is replaced the same way. Only then are older checkpoints
//! and WAL segments covered by `C` deleted. The same scan feeds a [`BaseBuilder`]; the new
//! compact base is swapped in after the checkpoint is durable (`compact` does the scan without a
//! file for in-memory stores). Recovery verifies the checksum in a streaming pass, then streams
//! the records straight into a base builder.
//!
//! File format: `"ARBORCK1"`, then a body, then `crc32c(body)` (u32 LE). The body: `C`, the next
//! node and relationship ids, tokens, schema rules, then tagged node (1) and relationship (2)
//! records and an end tag (0). The manifest: `"ARBORMF1"`, `C`, the checkpoint file name, the
//! first WAL segment to replay, then (since version 3; older readers ignore it) what is known
//! of sealed segments ([`wal::Sealed`]: the last commit they hold and the first ts of each one
//! not covered by `C`), then (since version 4) the manifest version and the checkpoint's
//! segment files (`checkpoint_segments`), and a trailing CRC.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use arbor_model::{Error, Result, Status, Value};

use super::checkpoint_segments;
use super::persist::Persist;
use super::wal::{self, io_err, sync_dir};
use crate::base::{Base, BaseBuilder, NodeRef};
use crate::codec::{corrupt, Dec, Enc};
use crate::mvcc::Transaction;
use crate::mvcc::{Core, CountDelta};
use crate::schema::{IndexDef, IndexKind, Target};
use crate::types::{Durability, TokenKind};
use crate::vfs::{Vfs, VfsFile, VfsRead};

pub(crate) const CK_MAGIC: &[u8; 8] = b"ARBORCK1";
pub(crate) const MF_MAGIC: &[u8; 8] = b"ARBORMF1";
pub(crate) const MANIFEST: &str = "MANIFEST";
pub(crate) const TAG_END: u8 = 0;
pub(crate) const TAG_NODE: u8 = 1;
pub(crate) const TAG_REL: u8 = 2;

pub(crate) fn checkpoint_name(ts: u64) -> String {
    format!("checkpoint-{ts:020}.arbor")
}

/// Writes bytes while computing their CRC.
struct CrcWriter {
    out: BufWriter<Box<dyn VfsFile>>,
    crc: u32,
    path: PathBuf,
}

impl CrcWriter {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.out.write_all(bytes).map_err(|e| io_err("cannot write", &self.path, e))
    }
}

/// Writes an atomic file: tmp, fsync, rename, fsync directory.
pub(crate) fn write_atomic(
    vfs: &dyn Vfs,
    dir: &Path,
    name: &str,
    bytes: &[u8],
    sync: bool,
) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let fin = dir.join(name);
    let mut f = vfs.create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
    f.write_all(bytes).map_err(|e| io_err("cannot write", &tmp, e))?;
    if sync {
        f.sync_all().map_err(|e| io_err("cannot fsync", &tmp, e))?;
    }
    drop(f);
    vfs.rename(&tmp, &fin).map_err(|e| io_err("cannot rename", &tmp, e))?;
    if sync {
        sync_dir(vfs, dir)?;
    }
    Ok(())
}

/// Takes a checkpoint of the current state. Returns its ts, or `None` if nothing committed
/// since the previous one.
pub(crate) fn checkpoint(core: &Arc<Core>, persist: Option<&Persist>) -> Result<Option<u64>> {
    checkpoint_with(core, persist, true)
}

/// A checkpoint that, with `rebuild`, also folds the delta into a new base built from the same
/// scan (not worth it when the store is closing).
pub(crate) fn checkpoint_with(
    core: &Arc<Core>,
    persist: Option<&Persist>,
    rebuild: bool,
) -> Result<Option<u64>> {
    let Some(p) = persist else { return Ok(None) };
    if p.read_only {
        return Ok(None);
    }
    let vfs = &*p.vfs;
    let mut last = p.checkpoint_lock.lock();
    let _rebuild = core.lock_rebuild();
    core.clock().check_failed()?;
    let tx = Transaction::new(core.clone(), true);
    let c = tx.start_ts();
    if c == *last {
        *p.last_checkpoint_at.lock() = Instant::now();
        return Ok(None);
    }
    if let Err(e) =
        whole_base_stats(core, p).and_then(|s| fits_a_rewrite(&s, p.pager.pool.budget()))
    {
        *p.last_checkpoint_at.lock() = Instant::now();
        return Err(e);
    }
    let _timer = crate::metrics::Timer::start(&crate::metrics::STORAGE.checkpoint);
    // Synced whatever the durability mode (`Durability::Off` only skips the per-commit fsync):
    // a manifest naming a checkpoint that never reached the disk would lose the whole store.
    let name = checkpoint_name(c);
    let tmp = p.dir.join(format!("{name}.tmp"));
    let file = vfs.create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
    let mut w =
        CrcWriter { out: BufWriter::with_capacity(1 << 20, file), crc: 0, path: tmp.clone() };
    w.out.write_all(CK_MAGIC).map_err(|e| io_err("cannot write", &tmp, e))?;

    let mut e = Enc::new();
    e.u64(c);
    e.u64(core.next_ids().0);
    e.u64(core.next_ids().1);
    {
        let t = core.tokens().read();
        for kind in [TokenKind::Label, TokenKind::RelType, TokenKind::PropertyKey] {
            let names = &t.t[kind.index()].names;
            e.var(names.len() as u64);
            for n in names {
                e.str(n);
            }
        }
    }
    {
        // The schema as of `c`: a schema change with a later ts may already be installed but
        // not yet durable (and may still fail). Then skip this round; the next one catches up.
        let cs = core.lock_commit();
        if cs.last_schema_ts > c {
            drop(cs);
            drop(w);
            let _ = vfs.remove_file(&tmp);
            return Ok(None);
        }
        let s = core.schema().read();
        // Constraints still being validated are not logged yet either (see
        // `Store::finish_constraint`).
        let defs: Vec<&IndexDef> = s.defs.iter().filter(|d| !s.pending.contains(&d.name)).collect();
        e.var(defs.len() as u64);
        for d in defs {
            // name, label, first key, kind code; kinds beyond range/unique or more than one
            // key set bit 7 of the code and append the remaining keys (count + keys), so
            // single-key range/unique rules keep the original layout.
            e.str(&d.name);
            e.var(u64::from(d.label));
            let keys = d.logged_keys();
            e.var(u64::from(keys.first().copied().unwrap_or(0)));
            if keys.len() == 1 && d.kind.code() <= 1 && !d.rel {
                e.u8(d.kind.code());
            } else {
                // Bit 6: a relationship index.
                e.u8(d.kind.code() | 0x80 | if d.rel { 0x40 } else { 0 });
                e.var(keys.len().saturating_sub(1) as u64);
                for k in keys.iter().skip(1) {
                    e.var(u64::from(*k));
                }
            }
        }
    }
    w.put(&e.buf)?;
    e.buf.clear();
    // The base is built even when it will not be installed (`rebuild` false): the segment
    // file is written from it, whole; the checkpoint file keeps the header only.
    let mut builder = BaseBuilder::new(c);
    feed(core, &tx, Some(&mut builder), None)?;
    w.put(&[TAG_END])?;
    #[cfg(test)]
    run_hook(&BEFORE_FINISH);
    let base = builder.finish(&core.schema().read().pairs());
    let counts = checkpoint_segments::counts_of(&base);
    let crc = w.crc;
    w.out.write_all(&crc.to_le_bytes()).map_err(|e| io_err("cannot write", &tmp, e))?;
    let mut file = w.out.into_inner().map_err(|e| io_err("cannot write", &tmp, e.into_error()))?;
    file.sync_all().map_err(|e| io_err("cannot fsync", &tmp, e))?;
    drop(file);
    vfs.rename(&tmp, &p.dir.join(&name)).map_err(|e| io_err("cannot rename", &tmp, e))?;
    let segment = checkpoint_segments::write(vfs, &p.dir, &base, c, &counts)?;
    sync_dir(vfs, &p.dir)?;

    let (first_wal, sealed) = {
        let segs = p.wal.segments.lock();
        let first_wal = segs.first().map_or(c + 1, |s| s.0);
        // Every segment but the last (the one being written) was fsynced before the log moved
        // on (except without fsyncs at all).
        let mut sealed = wal::Sealed::default();
        if p.config.durability != Durability::Off && segs.len() >= 2 {
            sealed.until = segs[segs.len() - 1].0.saturating_sub(1);
            sealed.segments = (0..segs.len() - 1)
                .filter(|&i| !wal::covered(&segs, i, c))
                .map(|i| segs[i].0)
                .collect();
        }
        (first_wal, sealed)
    };
    let manifest = manifest_bytes(c, &name, first_wal, &sealed, &segment);
    write_atomic(vfs, &p.dir, MANIFEST, &manifest, true)?;

    // The new checkpoint is durable and referenced: older files are garbage.
    if let Ok(names) = vfs.list_dir(&p.dir) {
        for s in names {
            if s.starts_with("checkpoint-") && s != name {
                let _ = vfs.remove_file(&p.dir.join(s));
            }
        }
    }
    checkpoint_segments::remove_others(vfs, &p.dir, std::slice::from_ref(&segment));
    // Its base indexes every target: part files its records named are garbage too.
    core.remove_checkpointed_parts(c);
    wal::delete_covered(vfs, &p.wal, c);
    p.wal.bytes_since_checkpoint.store(0, Ordering::Relaxed);
    *last = c;
    *p.last_checkpoint_at.lock() = Instant::now();
    // A base that reads a segment moves to the new one (its own would stay open, unlinked,
    // holding its disk space until the store closes), also when no rebuild was asked for.
    let reattach = rebuild || core.base().is_paged();
    p.pager.set_current(segment);
    if reattach {
        install(core, attached(p, base), tx);
    }
    Ok(Some(c))
}

/// A checkpoint builds its base whole in memory before it writes the segment: over a base
/// larger than both the memory budget and half of the machine (B2B 1.0: ~49 GB against 24 GiB)
/// that took the server past the machine's memory, and a checkpoint runs after any commit once
/// the interval passes, after recovery replays a log, and when the store closes. Such a
/// checkpoint is refused instead (the server stays up): the log keeps every commit durable and
/// is replayed at the next open, it just is not truncated.
fn fits_a_rewrite(s: &crate::base::BaseStats, budget: u64) -> Result<()> {
    let need = rebuild_bytes(s);
    let room = budget.max(crate::pager::pool::default_memory_limit());
    if need <= room {
        return Ok(());
    }
    Err(Error::new(
        Status::MemoryExhausted,
        format!(
            "checkpoint deferred: it would rebuild a base of {} MiB in memory, more than the \
             memory budget and half of the machine ({} MiB); the write-ahead log keeps every \
             commit and is replayed at the next start",
            need >> 20,
            room >> 20
        ),
    ))
}

/// The whole base's statistics: its segment's (a paged base's own count only what it keeps in
/// memory) or the in-memory base's, whichever is larger.
fn whole_base_stats(core: &Core, p: &Persist) -> Result<crate::base::BaseStats> {
    let own = core.base().stats().clone();
    Ok(match p.pager.current()? {
        Some(seg) => Some(Base::segment_stats(&seg)?)
            .filter(|s| rebuild_bytes(s) > rebuild_bytes(&own))
            .unwrap_or(own),
        None => own,
    })
}

/// The bytes a base with these statistics takes built whole in memory.
fn rebuild_bytes(s: &crate::base::BaseStats) -> u64 {
    s.node_bytes + s.node_property_bytes + s.rel_bytes + s.rel_property_bytes + s.index_bytes
}

/// The manifest naming checkpoint `name` of commit `c`, the first log segment to replay,
/// the sealed log segments and the checkpoint's segment file (see the module docs).
fn manifest_bytes(
    c: u64,
    name: &str,
    first_wal: u64,
    sealed: &wal::Sealed,
    segment: &str,
) -> Vec<u8> {
    let mut m = Enc::new();
    m.buf.extend_from_slice(MF_MAGIC);
    m.u64(c);
    m.str(name);
    m.u64(first_wal);
    m.u64(sealed.until);
    m.var(sealed.segments.len() as u64);
    for ts in &sealed.segments {
        m.u64(*ts);
    }
    m.var(checkpoint_segments::MANIFEST_VERSION);
    m.var(1);
    m.str(segment);
    let crc = crc32c::crc32c(&m.buf[8..]);
    m.u32(crc);
    m.buf
}

/// The base just written to the current segment, made to read its adjacency from it (see
/// [`Base::attach_segment`]). The checkpoint is durable already, so a segment that does not
/// open or fit (a disk fault between write and read) leaves the base in memory, with a warning.
fn attached(p: &Persist, mut base: Base) -> Base {
    let r = p.pager.current().and_then(|seg| match seg {
        Some(seg) => base.attach_segment(seg, p.pager.pool.clone()),
        None => Ok(()),
    });
    if let Err(e) = r {
        tracing::warn!("the new base stays in memory: {e}");
    }
    base
}

/// Pair assertion for one checkpoint record before it is written: decoding it and encoding the
/// result again gives the same bytes (bytes, not values, so a NaN compares equal). The other
/// half is on reading: the file's CRC, then the decoder's bounds and tag checks (`load_body`),
/// which turn bad bytes into `Corruption` errors.
fn round_trips(rec: &[u8]) -> bool {
    let mut d = Dec::new(rec);
    let mut e = Enc::new();
    let mut decode = || -> Result<()> {
        match d.u8()? {
            TAG_NODE => {
                e.u8(TAG_NODE);
                e.var(d.id()?);
                e.labels(&d.labels()?);
                e.props(&d.props()?);
            }
            TAG_REL => {
                e.u8(TAG_REL);
                for _ in 0..3 {
                    e.var(d.id()?);
                }
                e.var(u64::from(d.var_u32()?));
                e.props(&d.props()?);
            }
            t => return Err(corrupt(format!("unknown record tag {t}"))),
        }
        Ok(())
    };
    decode().is_ok() && d.is_empty() && e.buf == rec
}

/// Streams the snapshot of `tx` into a base builder and, when given, a checkpoint body.
fn feed(
    core: &Core,
    tx: &Transaction,
    mut builder: Option<&mut BaseBuilder>,
    w: Option<&mut CrcWriter>,
) -> Result<()> {
    let mut w = w;
    let mut e = Enc::new();
    let flush = |e: &mut Enc, w: &mut Option<&mut CrcWriter>, force: bool| -> Result<()> {
        if let Some(w) = w.as_deref_mut() {
            if force || e.buf.len() >= 1 << 16 {
                w.put(&e.buf)?;
                e.buf.clear();
            }
        } else {
            e.buf.clear();
        }
        Ok(())
    };
    let max_node = core.next_ids().0;
    // An incremental fold (no checkpoint file) copies the base rows nobody wrote since as
    // bytes: the builder extends this base (same label codes and string indexes).
    let copy_from = match (&builder, &w) {
        (Some(b), None) if b.extends(tx.base()) => Some(tx.base().clone()),
        _ => None,
    };
    for id in 0..max_node {
        if let (Some(old), Some(b)) = (&copy_from, builder.as_deref_mut()) {
            if !old.node_dirty(id) {
                b.node_copy(id, old);
                continue;
            }
        }
        let seen = tx.with_node(id, |n| {
            // A delta version's properties are read in place; only a base row is decoded
            // (cloning every delta node's property list was a tenth of a bulk load's fold).
            let decoded;
            let props: &[(u32, Value)] = match &n {
                NodeRef::Data(d) => &d.props,
                NodeRef::Base(..) => {
                    decoded = n.props();
                    &decoded
                }
            };
            if let Some(b) = builder.as_deref_mut() {
                b.node(id, n.labels(), props);
            }
            if w.is_some() {
                let at = e.buf.len();
                e.u8(TAG_NODE);
                e.var(id);
                e.labels(n.labels());
                e.props(props);
                invariant!(
                    round_trips(&e.buf[at..]),
                    "checkpoint record of node {id} does not decode"
                );
            }
        });
        if seen.is_some() {
            flush(&mut e, &mut w, false)?;
        }
    }
    let max_rel = core.next_ids().1;
    let base = tx.base().clone();
    let mut hint = 0;
    for id in 0..max_rel {
        // Base rows nobody wrote since (the bulk of a large store) are read column-wise.
        let clean = if base.rel_dirty(id) { None } else { Some(base.rel_scan(id, &mut hint)) };
        let mut emit = |start: u64, end: u64, ty: u32, props: &[(u32, Value)]| {
            if let Some(b) = builder.as_deref_mut() {
                b.rel(id, start, end, ty, props);
            }
            if w.is_some() {
                let at = e.buf.len();
                e.u8(TAG_REL);
                e.var(id);
                e.var(start);
                e.var(end);
                e.var(u64::from(ty));
                e.props(props);
                invariant!(
                    round_trips(&e.buf[at..]),
                    "checkpoint record of relationship {id} does not decode"
                );
            }
        };
        let seen = match clean {
            Some(Some((start, end, ty, props))) => {
                emit(start, end, ty, &props);
                Some(())
            }
            Some(None) => None,
            None => tx.with_rel(id, |r| emit(r.start(), r.end(), r.ty(), &r.props())),
        };
        if seen.is_some() {
            flush(&mut e, &mut w, false)?;
        }
    }
    // A base property blob that failed to read was scanned as empty: such a scan must not
    // become a checkpoint or a base.
    if let Some(err) = tx.read_error() {
        return Err(err.clone());
    }
    e.u8(TAG_END);
    flush(&mut e, &mut w, true)
}

#[cfg(test)]
type Hook = std::thread::LocalKey<std::cell::RefCell<Option<Box<dyn FnMut()>>>>;

#[cfg(test)]
thread_local! {
    /// Test hook: runs on this thread between a rebuild's scan and the install of its base.
    pub(crate) static BEFORE_INSTALL: std::cell::RefCell<Option<Box<dyn FnMut()>>> =
        std::cell::RefCell::new(None);
    /// Test hook: runs on this thread after a checkpoint's scan (its file holds the schema
    /// of its snapshot), before its base is finished with the index targets of that moment.
    pub(crate) static BEFORE_FINISH: std::cell::RefCell<Option<Box<dyn FnMut()>>> =
        std::cell::RefCell::new(None);
}

#[cfg(test)]
fn run_hook(hook: &'static Hook) {
    hook.with(|h| {
        if let Some(f) = h.borrow_mut().as_mut() {
            f();
        }
    });
}

/// Finishes a base and makes it current, then folds the delta into it where possible.
///
/// `snapshot` is the transaction the base was built from. It must stay registered until the
/// base is in place: otherwise GC may prune the whole version chain of an entity created before
/// and deleted after the snapshot (when the current base lacks it), and the new base, which has
/// it, would get no dirty bit for it and show it again (found by the fault tests).
fn install(core: &Core, base: Base, snapshot: Transaction) {
    #[cfg(test)]
    run_hook(&BEFORE_INSTALL);
    let mut cs = core.lock_commit();
    if base.ts <= core.base_ts() {
        return;
    }
    core.install_base(&mut cs, base);
    drop(snapshot);
    core.gc(&mut cs);
}

/// Rebuilds the compact base from the current snapshot without writing files (what a
/// checkpoint does for a file-backed store). Returns whether anything changed.
pub(crate) fn compact(core: &Arc<Core>) -> Result<bool> {
    let _g = core.lock_rebuild();
    let tx = Transaction::new(core.clone(), true);
    let c = tx.start_ts();
    if c <= core.base_ts() {
        return Ok(false);
    }
    let mut builder = BaseBuilder::extending(c, tx.base());
    feed(core, &tx, Some(&mut builder), None)?;
    let base = builder.finish(&core.schema().read().pairs());
    install(core, base, tx);
    Ok(true)
}

/// What the manifest says.
pub(crate) struct Manifest {
    /// The checkpoint's commit ts and file name.
    pub ts: u64,
    pub name: String,
    /// Sealed log segments (empty if nothing).
    pub sealed: wal::Sealed,
    /// The checkpoint's segment files (none before manifest version 4, and for imports).
    pub segments: Vec<String>,
    /// Whether the segment holds the whole base (version 5): the checkpoint file then has
    /// no entity records.
    pub complete: bool,
}

/// Reads the whole manifest, or `None` for a new store.
pub(crate) fn read_manifest(vfs: &dyn Vfs, dir: &Path) -> Result<Option<Manifest>> {
    let path = dir.join(MANIFEST);
    let data = match vfs.read(&path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("cannot read", &path, e)),
    };
    let bad = || corrupt(format!("manifest {} is corrupt", path.display()));
    if data.len() < 12 || &data[..8] != MF_MAGIC {
        return Err(bad());
    }
    let body = &data[8..data.len() - 4];
    let mut crc = [0u8; 4];
    crc.copy_from_slice(&data[data.len() - 4..]);
    if crc32c::crc32c(body) != u32::from_le_bytes(crc) {
        return Err(bad());
    }
    let mut d = Dec::new(body);
    let ts = d.u64().map_err(|_| bad())?;
    let name = d.str().map_err(|_| bad())?.to_string();
    if name.contains('/') || name.contains('\\') || !name.starts_with("checkpoint-") {
        return Err(bad());
    }
    let mut sealed = wal::Sealed::default();
    let mut segments = Vec::new();
    let mut complete = false;
    // Written by older versions (and the importer) without the sealed segments.
    if d.u64().is_ok() && !d.is_empty() {
        sealed.until = d.u64().map_err(|_| bad())?;
        let n = d.count(8).map_err(|_| bad())?;
        for _ in 0..n {
            sealed.segments.push(d.u64().map_err(|_| bad())?);
        }
        if sealed.until <= ts {
            sealed = wal::Sealed::default();
        }
        // Since version 4: the segment files.
        if !d.is_empty() {
            let version = d.var().map_err(|_| bad())?;
            if version > checkpoint_segments::MANIFEST_VERSION {
                return Err(corrupt(format!(
                    "manifest {} has format version {version}; this build reads versions up \
                     to {}",
                    path.display(),
                    checkpoint_segments::MANIFEST_VERSION
                )));
            }
            complete = version >= checkpoint_segments::COMPLETE_SINCE;
            let n = d.count(1).map_err(|_| bad())?;
            for _ in 0..n {
                let s = d.str().map_err(|_| bad())?;
                if !checkpoint_segments::is_segment_name(s) {
                    return Err(bad());
                }
                segments.push(s.to_string());
            }
        }
    }
    if complete && segments.is_empty() {
        return Err(bad());
    }
    Ok(Some(Manifest { ts, name, sealed, segments, complete }))
}

/// Reads a checkpoint body in bounded chunks (recovery never holds the whole file), checking
/// its CRC as it goes.
struct Stream {
    file: Box<dyn VfsRead>,
    path: PathBuf,
    window: Vec<u8>,
    pos: usize,
    /// Body bytes not yet read.
    left: u64,
    crc: u32,
}

const STREAM_CHUNK: usize = 1 << 20;

impl Stream {
    /// Appends the next chunk of the body; `false` at its end.
    fn fill(&mut self) -> Result<bool> {
        use std::io::Read;
        if self.left == 0 {
            return Ok(false);
        }
        self.window.drain(..self.pos);
        self.pos = 0;
        let n = STREAM_CHUNK.min(self.left as usize);
        let at = self.window.len();
        self.window.resize(at + n, 0);
        self.file
            .read_exact(&mut self.window[at..])
            .map_err(|e| io_err("cannot read checkpoint", &self.path, e))?;
        self.crc = crc32c::crc32c_append(self.crc, &self.window[at..]);
        self.left -= n as u64;
        Ok(true)
    }

    /// Decodes one record, reading more of the file while it is cut off by the window's end.
    fn record<T>(&mut self, f: impl Fn(&mut Dec<'_>) -> Result<T>) -> Result<T> {
        loop {
            let mut d = Dec::new(&self.window[self.pos..]);
            match f(&mut d) {
                Ok(v) => {
                    self.pos += d.pos();
                    return Ok(v);
                }
                Err(e) => {
                    if !self.fill()? {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Checks that the body is fully consumed and matches the trailing CRC.
    fn finish(&mut self) -> Result<()> {
        use std::io::Read;
        if self.pos != self.window.len() || self.left != 0 {
            return Err(corrupt("trailing bytes"));
        }
        let mut crc = [0u8; 4];
        self.file
            .read_exact(&mut crc)
            .map_err(|e| io_err("cannot read checkpoint", &self.path, e))?;
        if self.crc != u32::from_le_bytes(crc) {
            return Err(corrupt("checksum mismatch"));
        }
        Ok(())
    }
}

/// Loads a checkpoint into an empty core: tokens, schema, and one compact base at ts `c`.
pub(crate) fn load(core: &Core, vfs: &dyn Vfs, dir: &Path, name: &str, c: u64) -> Result<()> {
    load_with(core, vfs, dir, name, c, None)
}

/// Opens the base and counts of a complete segment, given the schema's index targets.
pub(crate) type FromSegment<'a> = &'a dyn Fn(&[Target]) -> Result<(Base, CountDelta)>;

/// [`load`]; with `from_segment`, the checkpoint file holds no entity records (a complete
/// segment's) and the base and counts come from that function.
pub(crate) fn load_with(
    core: &Core,
    vfs: &dyn Vfs,
    dir: &Path,
    name: &str,
    c: u64,
    from_segment: Option<FromSegment<'_>>,
) -> Result<()> {
    use std::io::Read;
    // Checksum first (a streaming pass): decoding trusts ids enough to allocate by them.
    verify(vfs, dir, name)?;
    let path = dir.join(name);
    let mut file = vfs.open_read(&path).map_err(|e| io_err("cannot read checkpoint", &path, e))?;
    let size = file.size().map_err(|e| io_err("cannot read checkpoint", &path, e))?;
    let ctx =
        |e: Error| corrupt(format!("checkpoint {} is corrupt: {}", path.display(), e.message));
    let mut magic = [0u8; 8];
    if size < 12 || file.read_exact(&mut magic).is_err() || &magic != CK_MAGIC {
        return Err(ctx(corrupt("bad header")));
    }
    let mut st =
        Stream { file, path: path.clone(), window: Vec::new(), pos: 0, left: size - 12, crc: 0 };
    load_body(core, &mut st, c, from_segment).map_err(|e| {
        // A segment's own errors name their file already.
        if e.status == Status::Corruption && !e.message.starts_with("segment file") {
            ctx(e)
        } else {
            e
        }
    })
}

/// Verifies a checkpoint file's header and checksum without loading it.
pub(crate) fn verify(vfs: &dyn Vfs, dir: &Path, name: &str) -> Result<()> {
    use std::io::Read;
    let path = dir.join(name);
    let mut file = vfs.open_read(&path).map_err(|e| io_err("cannot read checkpoint", &path, e))?;
    let size = file.size().map_err(|e| io_err("cannot read checkpoint", &path, e))?;
    let bad = |m: &str| corrupt(format!("checkpoint {} is corrupt: {m}", path.display()));
    let mut magic = [0u8; 8];
    if size < 12 || file.read_exact(&mut magic).is_err() || &magic != CK_MAGIC {
        return Err(bad("bad header"));
    }
    let mut st =
        Stream { file, path: path.clone(), window: Vec::new(), pos: 0, left: size - 12, crc: 0 };
    while st.fill()? {
        st.pos = st.window.len();
    }
    st.finish().map_err(|e| bad(&e.message))
}

type Header = (u64, u64, Vec<Vec<String>>, Vec<IndexDef>);

fn load_body(
    core: &Core,
    st: &mut Stream,
    c: u64,
    from_segment: Option<FromSegment<'_>>,
) -> Result<()> {
    // The header is decoded without side effects (it may be retried on a longer window).
    let (next_node, next_rel, tokens, defs): Header = st.record(|d| {
        if d.u64()? != c {
            return Err(corrupt("timestamp does not match the manifest"));
        }
        let next_node = d.u64()?;
        let next_rel = d.u64()?;
        let mut tokens = Vec::new();
        for _ in 0..3 {
            let n = d.count(1)?;
            let mut names = Vec::with_capacity(n);
            for _ in 0..n {
                names.push(d.str()?.to_string());
            }
            tokens.push(names);
        }
        let n = d.count(4)?;
        let mut defs = Vec::with_capacity(n);
        for _ in 0..n {
            let name = d.str()?.to_string();
            let label = d.var_u32()?;
            let mut keys = vec![d.var_u32()?];
            let code = d.u8()?;
            let rel = code & 0x40 != 0;
            let kind = IndexKind::from_code(code & 0x3f)
                .ok_or_else(|| corrupt(format!("unknown schema rule kind {code}")))?;
            if code & 0x80 != 0 {
                let n = d.count(1)?;
                for _ in 0..n {
                    keys.push(d.var_u32()?);
                }
            }
            let progress = crate::schema::Progress::online();
            defs.push(IndexDef::from_logged(name, label, keys, kind, rel, progress));
        }
        Ok((next_node, next_rel, tokens, defs))
    })?;
    {
        let mut t = core.tokens().write();
        let kinds = [TokenKind::Label, TokenKind::RelType, TokenKind::PropertyKey];
        for (kind, names) in kinds.into_iter().zip(&tokens) {
            for (i, name) in names.iter().enumerate() {
                let id = u32::try_from(i).map_err(|_| corrupt("too many tokens"))?;
                t.ensure(kind, id, name)?;
            }
        }
    }
    let mut cs = core.lock_commit();
    for def in defs {
        core.install_index(&mut cs, def);
    }
    if let Some(open) = from_segment {
        if st.record(|d| d.u8())? != TAG_END {
            return Err(corrupt("entity records beside a complete segment"));
        }
        st.finish()?;
        let (base, counts) = open(&core.schema().read().pairs())?;
        if base.ts != c {
            return Err(corrupt(format!("segment of commit {}, checkpoint of {c}", base.ts)));
        }
        core.load_base(&mut cs, base, counts, (next_node, next_rel));
        return Ok(());
    }
    // Entities go straight into the compact base; nothing is versioned.
    let mut builder = BaseBuilder::new(c);
    let mut counts = CountDelta::default();
    enum Rec {
        End,
        Node(u64, Vec<u32>, Vec<(u32, Value)>),
        Rel(u64, u64, u64, u32, Vec<(u32, Value)>),
    }
    loop {
        let (at, rec) = st.record(|d| {
            let at = d.pos();
            Ok((
                at,
                match d.u8()? {
                    TAG_END => Rec::End,
                    TAG_NODE => Rec::Node(d.id()?, d.labels()?, d.props()?),
                    TAG_REL => Rec::Rel(d.id()?, d.id()?, d.id()?, d.var_u32()?, d.props()?),
                    t => return Err(corrupt(format!("unknown record tag {t}"))),
                },
            ))
        })?;
        match rec {
            Rec::End => break,
            Rec::Node(id, labels, props) => {
                if !builder.node(id, &labels, &props) {
                    return Err(corrupt(format!("node {id} out of order (record at {at})")));
                }
                counts.total += 1;
                for l in &labels {
                    counts.label(*l, 1);
                }
            }
            Rec::Rel(id, start, end, ty, props) => {
                if !builder.rel(id, start, end, ty, &props) {
                    return Err(corrupt(format!(
                        "relationship {id} out of order or with a missing end node"
                    )));
                }
            }
        }
    }
    st.finish()?;
    let pairs = core.schema().read().pairs();
    let base = builder.finish(&pairs);
    core.load_base(&mut cs, base, counts, (next_node, next_rel));
    Ok(())
}

/// Removes leftovers of interrupted checkpoints.
pub(crate) fn remove_tmp_files(vfs: &dyn Vfs, dir: &Path) {
    if let Ok(names) = vfs.list_dir(dir) {
        for name in names.iter().filter(|s| s.ends_with(".tmp")) {
            let _ = vfs.remove_file(&dir.join(name));
        }
    }
}

#[cfg(test)]
mod rewrite_tests {
    use super::fits_a_rewrite;
    use crate::base::BaseStats;
    use arbor_model::Status;

    /// A base that fits the budget or half of the machine is rewritten; one larger than both is
    /// refused with `MemoryExhausted` and a message naming both sizes.
    #[test]
    fn a_checkpoint_is_refused_only_over_both_the_budget_and_half_the_machine() {
        let half = crate::pager::pool::default_memory_limit();
        let base = |bytes: u64| BaseStats {
            node_bytes: bytes / 4,
            node_property_bytes: bytes / 4,
            rel_bytes: bytes / 4,
            rel_property_bytes: bytes / 8,
            index_bytes: bytes - bytes / 4 * 3 - bytes / 8,
            ..BaseStats::default()
        };
        assert!(fits_a_rewrite(&base(1 << 20), 1 << 16).is_ok(), "small: under half the machine");
        assert!(fits_a_rewrite(&base(half), 1 << 20).is_ok(), "exactly half the machine");
        assert!(fits_a_rewrite(&base(half * 3), half * 4).is_ok(), "within a larger budget");
        let e = fits_a_rewrite(&base(half + (1 << 20)), 1 << 30).unwrap_err();
        assert_eq!(e.status, Status::MemoryExhausted);
        assert!(e.message.contains("checkpoint deferred"), "{}", e.message);
        assert!(e.message.contains(&format!("{} MiB", (half + (1 << 20)) >> 20)), "{}", e.message);
    }
}
