//! Checkpoints and the manifest.
//!
//! A checkpoint is the full state at one snapshot ts `C`, written from a read-only snapshot
//! transaction (writers keep going) to `checkpoint-<C>.arbor.tmp`, fsynced, renamed, and the
//! directory fsynced; then `MANIFEST` is replaced the same way. Only then are older checkpoints
//! and WAL segments covered by `C` deleted.
//!
//! File format: `"ARBORCK1"`, then a body, then `crc32c(body)` (u32 LE). The body: `C`, the next
//! node and relationship ids, tokens, schema rules, then tagged node (1) and relationship (2)
//! records and an end tag (0). The manifest: `"ARBORMF1"`, `C`, the checkpoint file name, the
//! first WAL segment to replay, and a trailing CRC.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use arbor_model::{Error, Result, Status};

use crate::base::BaseBuilder;
use crate::codec::{corrupt, Dec, Enc};
use crate::mvcc::{Core, CountDelta};
use crate::schema::IndexDef;
use crate::tx::Transaction;
use crate::wal::{self, io_err, sync_dir};
use crate::{Durability, TokenKind};

const CK_MAGIC: &[u8; 8] = b"ARBORCK1";
const MF_MAGIC: &[u8; 8] = b"ARBORMF1";
pub(crate) const MANIFEST: &str = "MANIFEST";
const TAG_END: u8 = 0;
const TAG_NODE: u8 = 1;
const TAG_REL: u8 = 2;

fn checkpoint_name(ts: u64) -> String {
    format!("checkpoint-{ts:020}.arbor")
}

/// Writes bytes while computing their CRC.
struct CrcWriter {
    out: BufWriter<File>,
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
fn write_atomic(dir: &Path, name: &str, bytes: &[u8], sync: bool) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let fin = dir.join(name);
    let mut f = File::create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
    f.write_all(bytes).map_err(|e| io_err("cannot write", &tmp, e))?;
    if sync {
        f.sync_all().map_err(|e| io_err("cannot fsync", &tmp, e))?;
    }
    fs::rename(&tmp, &fin).map_err(|e| io_err("cannot rename", &tmp, e))?;
    if sync {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Takes a checkpoint of the current state. Returns its ts, or `None` if nothing committed
/// since the previous one.
pub(crate) fn checkpoint(core: &Arc<Core>) -> Result<Option<u64>> {
    let Some(p) = &core.persist else { return Ok(None) };
    let mut last = p.checkpoint_lock.lock();
    let _rebuild = core.rebuild.lock();
    core.clock.check()?;
    let tx = Transaction::new(core.clone(), true);
    let c = tx.start_ts();
    if c == *last {
        *p.last_checkpoint_at.lock() = Instant::now();
        return Ok(None);
    }
    let sync = p.config.durability != Durability::Off;
    let name = checkpoint_name(c);
    let tmp = p.dir.join(format!("{name}.tmp"));
    let file = File::create(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
    let mut w =
        CrcWriter { out: BufWriter::with_capacity(1 << 20, file), crc: 0, path: tmp.clone() };
    w.out.write_all(CK_MAGIC).map_err(|e| io_err("cannot write", &tmp, e))?;

    let mut e = Enc::new();
    e.u64(c);
    e.u64(core.next_node.load(Ordering::Acquire));
    e.u64(core.next_rel.load(Ordering::Acquire));
    {
        let t = core.tokens.read();
        for kind in [TokenKind::Label, TokenKind::RelType, TokenKind::PropertyKey] {
            let names = &t.t[kind.index()].names;
            e.var(names.len() as u64);
            for n in names {
                e.str(n);
            }
        }
    }
    {
        let s = core.schema.read();
        e.var(s.defs.len() as u64);
        for d in &s.defs {
            e.str(&d.name);
            e.var(u64::from(d.label));
            e.var(u64::from(d.key));
            e.u8(u8::from(d.unique));
        }
    }
    w.put(&e.buf)?;
    e.buf.clear();
    let mut builder = BaseBuilder::new(c);
    feed(core, &tx, &mut builder, Some(&mut w))?;
    drop(tx);
    let crc = w.crc;
    w.out.write_all(&crc.to_le_bytes()).map_err(|e| io_err("cannot write", &tmp, e))?;
    let file = w.out.into_inner().map_err(|e| io_err("cannot write", &tmp, e.into_error()))?;
    if sync {
        file.sync_all().map_err(|e| io_err("cannot fsync", &tmp, e))?;
    }
    drop(file);
    fs::rename(&tmp, p.dir.join(&name)).map_err(|e| io_err("cannot rename", &tmp, e))?;
    if sync {
        sync_dir(&p.dir)?;
    }

    let first_wal = p.wal.segments.lock().first().map_or(c + 1, |s| s.0);
    let mut m = Enc::new();
    m.buf.extend_from_slice(MF_MAGIC);
    m.u64(c);
    m.str(&name);
    m.u64(first_wal);
    let crc = crc32c::crc32c(&m.buf[8..]);
    m.u32(crc);
    write_atomic(&p.dir, MANIFEST, &m.buf, sync)?;

    // The new checkpoint is durable and referenced: older files are garbage.
    if let Ok(entries) = fs::read_dir(&p.dir) {
        for entry in entries.flatten() {
            let fname = entry.file_name();
            let Some(s) = fname.to_str() else { continue };
            if s.starts_with("checkpoint-") && s != name {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
    wal::delete_covered(&p.wal, c);
    p.wal.bytes_since_checkpoint.store(0, Ordering::Relaxed);
    *last = c;
    *p.last_checkpoint_at.lock() = Instant::now();
    install(core, builder);
    Ok(Some(c))
}

/// Streams the snapshot of `tx` into a base builder and, when given, a checkpoint body.
fn feed(
    core: &Core,
    tx: &Transaction,
    builder: &mut BaseBuilder,
    w: Option<&mut CrcWriter>,
) -> Result<()> {
    let mut w = w;
    let mut e = Enc::new();
    let mut flush = |e: &mut Enc, w: &mut Option<&mut CrcWriter>, force: bool| -> Result<()> {
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
    let max_node = core.next_node.load(Ordering::Acquire);
    for id in 0..max_node {
        let seen = tx.with_node(id, |n| {
            let props = n.props();
            builder.node(id, n.labels(), &props);
            if w.is_some() {
                e.u8(TAG_NODE);
                e.var(id);
                e.labels(n.labels());
                e.props(&props);
            }
        });
        if seen.is_some() {
            flush(&mut e, &mut w, false)?;
        }
    }
    let max_rel = core.next_rel.load(Ordering::Acquire);
    for id in 0..max_rel {
        let seen = tx.with_rel(id, |r| {
            let props = r.props();
            let (start, end, ty) = (r.start(), r.end(), r.ty());
            builder.rel(id, start, end, ty, &props);
            if w.is_some() {
                e.u8(TAG_REL);
                e.var(id);
                e.var(start);
                e.var(end);
                e.var(u64::from(ty));
                e.props(&props);
            }
        });
        if seen.is_some() {
            flush(&mut e, &mut w, false)?;
        }
    }
    e.u8(TAG_END);
    flush(&mut e, &mut w, true)
}

/// Finishes a base and makes it current, then folds the delta into it where possible.
fn install(core: &Core, builder: BaseBuilder) {
    let pairs = core.schema.read().pairs();
    let base = builder.finish(&pairs);
    let mut cs = core.commit.lock();
    if base.ts <= core.base.read().ts {
        return;
    }
    core.install_base(&mut cs, base);
    core.gc(&mut cs);
}

/// Rebuilds the compact base from the current snapshot without writing files (what a
/// checkpoint does for a file-backed store). Returns whether anything changed.
pub(crate) fn compact(core: &Arc<Core>) -> Result<bool> {
    let _g = core.rebuild.lock();
    let tx = Transaction::new(core.clone(), true);
    let c = tx.start_ts();
    if c <= core.base.read().ts {
        return Ok(false);
    }
    let mut builder = BaseBuilder::new(c);
    feed(core, &tx, &mut builder, None)?;
    drop(tx);
    install(core, builder);
    Ok(true)
}

/// Reads the manifest: `(checkpoint ts, checkpoint file name)`, or `None` for a new store.
pub(crate) fn read_manifest(dir: &Path) -> Result<Option<(u64, String)>> {
    let path = dir.join(MANIFEST);
    let data = match fs::read(&path) {
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
    Ok(Some((ts, name)))
}

/// Loads a checkpoint into an empty core, installing everything at ts `c`.
pub(crate) fn load(core: &Core, dir: &Path, name: &str, c: u64) -> Result<()> {
    let path = dir.join(name);
    let data = fs::read(&path).map_err(|e| io_err("cannot read checkpoint", &path, e))?;
    let ctx =
        |e: Error| corrupt(format!("checkpoint {} is corrupt: {}", path.display(), e.message));
    if data.len() < 12 || &data[..8] != CK_MAGIC {
        return Err(ctx(corrupt("bad header")));
    }
    let body = &data[8..data.len() - 4];
    let mut crc = [0u8; 4];
    crc.copy_from_slice(&data[data.len() - 4..]);
    if crc32c::crc32c(body) != u32::from_le_bytes(crc) {
        return Err(ctx(corrupt("checksum mismatch")));
    }
    let mut d = Dec::new(body);
    load_body(core, &mut d, c).map_err(|e| if e.status == Status::Corruption { ctx(e) } else { e })
}

fn load_body(core: &Core, d: &mut Dec<'_>, c: u64) -> Result<()> {
    if d.u64()? != c {
        return Err(corrupt("timestamp does not match the manifest"));
    }
    let next_node = d.u64()?;
    let next_rel = d.u64()?;
    {
        let mut t = core.tokens.write();
        for kind in [TokenKind::Label, TokenKind::RelType, TokenKind::PropertyKey] {
            let n = d.count(1)?;
            for i in 0..n {
                let id = u32::try_from(i).map_err(|_| corrupt("too many tokens"))?;
                t.ensure(kind, id, d.str()?)?;
            }
        }
    }
    let mut cs = core.commit.lock();
    let n = d.count(4)?;
    for _ in 0..n {
        let name = d.str()?.to_string();
        let label = d.var_u32()?;
        let key = d.var_u32()?;
        let unique = d.u8()? != 0;
        core.install_index(&mut cs, IndexDef { name, label, key, unique, since: 0 });
    }
    // Entities go straight into the compact base; nothing is versioned.
    let mut builder = BaseBuilder::new(c);
    let mut counts = CountDelta::default();
    loop {
        match d.u8()? {
            TAG_END => break,
            TAG_NODE => {
                let at = d.pos();
                let id = d.id()?;
                let labels = d.labels()?;
                let props = d.props()?;
                if !builder.node(id, &labels, &props) {
                    return Err(corrupt(format!("node ids out of order at byte {at}")));
                }
                counts.total += 1;
                for l in &labels {
                    counts.label(*l, 1);
                }
            }
            TAG_REL => {
                let at = d.pos();
                let id = d.id()?;
                let start = d.id()?;
                let end = d.id()?;
                let ty = d.var_u32()?;
                let props = d.props()?;
                if !builder.rel(id, start, end, ty, &props) {
                    return Err(corrupt(format!(
                        "relationship out of order or with a missing end node at byte {at}"
                    )));
                }
            }
            t => return Err(corrupt(format!("unknown record tag {t} at byte {}", d.pos()))),
        }
    }
    if !d.is_empty() {
        return Err(corrupt("trailing bytes"));
    }
    let pairs = core.schema.read().pairs();
    let base = builder.finish(&pairs);
    *core.base.write() = Arc::new(base);
    core.counts.write().apply(c, &counts);
    cs.gc_queue.clear();
    core.next_node.fetch_max(next_node.min(crate::codec::MAX_ID), Ordering::AcqRel);
    core.next_rel.fetch_max(next_rel.min(crate::codec::MAX_ID), Ordering::AcqRel);
    Ok(())
}

/// Removes leftovers of interrupted checkpoints.
pub(crate) fn remove_tmp_files(dir: &Path) {
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_name().to_str().is_some_and(|s| s.ends_with(".tmp")) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}
