//! Recovery: load the manifest's checkpoint, replay newer WAL records into the delta.
//!
//! An index rule a replayed record creates is installed without building its index (commits,
//! the replayed ones included, add their entries from then on); a later record dropping it
//! removes it, so a rule created and dropped in the same log tail costs nothing. The rules
//! still present after the replay are handed back ([`Recovered::populate`]) and filled after
//! the open by `populate_replayed.rs`, as an online `CREATE INDEX` is; a rule whose part file a
//! replayed attach record names attaches it there instead of sorting (`mvcc/part_files.rs`).

use std::path::Path;
use std::sync::Arc;

use arbor_model::check_report::describe_commit;
use arbor_model::Result;

use super::checkpoint;
use super::checkpoint_segments;
use super::persist::Persist;
use crate::base::{OpenMode, PartStore};
use crate::codec::{Dec, Op};
use crate::durability::wal::{self};
use crate::mvcc::{CommitState, Core};
use crate::records::{NodeData, RelData};
use crate::schema::{IndexDef, IndexKind, Progress};
use crate::vfs::Vfs;
use crate::Durability;

/// Publishes the manifest again (temporary file, fsync, rename, directory fsync) before a
/// writable open removes what it does not name. The manifest read may be visible without
/// being durable: a process whose directory fsync after the manifest's rename failed (its
/// checkpoint then failed) leaves the new entry in the page cache, possibly never to reach
/// the disk. Removing the previous checkpoint's segment on the strength of it, and making that
/// removal durable with the next directory fsync, would leave the on-disk manifest naming a
/// file that is gone. `false` (remove nothing this time) when it cannot be written again (a
/// full disk: opening must not need new space); without fsyncs there is nothing to make
/// durable.
fn publish_manifest_again(vfs: &dyn Vfs, dir: &Path, durability: Durability) -> Result<bool> {
    let path = dir.join(checkpoint::MANIFEST);
    if durability == Durability::Off || !vfs.exists(&path) {
        return Ok(true);
    }
    // A read failure fails the open, as recovery's own read of the manifest would.
    let bytes = vfs.read(&path).map_err(|e| wal::io_err("cannot read", &path, e))?;
    match checkpoint::write_atomic(vfs, dir, checkpoint::MANIFEST, &bytes, true) {
        Ok(()) => Ok(true),
        Err(e) => {
            tracing::warn!("the manifest could not be written again, leaving unnamed files: {e}");
            Ok(false)
        }
    }
}

/// What [`recover`] found.
pub(crate) struct Recovered {
    /// The next commit ts.
    pub next_ts: u64,
    /// Whether any WAL record newer than the checkpoint was replayed.
    pub replayed: bool,
    /// The commit ts of the checkpoint loaded (0: none).
    pub checkpoint_ts: u64,
    /// The index rules replayed records created and no later record dropped, installed
    /// POPULATING with empty index data, in log order (see the module docs).
    pub populate: Vec<IndexDef>,
}

/// Loads the checkpoint and replays the WAL (cutting off a torn tail with `repair`).
pub(crate) fn recover(
    core: &Arc<Core>,
    persist: Option<&Persist>,
    vfs: &dyn Vfs,
    dir: &Path,
    repair: bool,
) -> Result<Recovered> {
    let mut ckpt_ts = 0;
    let mut sealed = wal::Sealed::default();
    if let Some(p) = persist {
        core.set_part_store(Some(PartStore {
            vfs: p.vfs.clone(),
            dir: p.dir.clone(),
            pool: p.pager.pool.clone(),
            writable: !p.read_only,
        }));
    }
    // What a writable open removes (segments, part files the manifest's checkpoint made
    // garbage) is garbage only if the manifest it read is the one on disk; see
    // `publish_manifest_again`.
    let may_remove = match persist {
        Some(p) if repair && !p.read_only => publish_manifest_again(vfs, dir, p.config.durability)?,
        _ => false,
    };
    if let Some(m) = checkpoint::read_manifest(vfs, dir)? {
        sealed = m.sealed;
        match (persist, m.segments.first()) {
            // A complete segment: the base opens from it (header, in-memory columns) and the
            // small checkpoint file gives tokens, schema and next ids.
            (Some(p), Some(name)) if m.complete => {
                p.pager.open_current(name)?;
                let seg = p.pager.current()?.ok_or_else(|| {
                    crate::codec::corrupt(format!("segment file {name} did not open"))
                })?;
                let pool = p.pager.pool.clone();
                let open = |pairs: &[crate::schema::Target]| {
                    checkpoint_segments::open_base(&seg, &pool, pairs, OpenMode::Lazy)
                };
                checkpoint::load_with(core, vfs, dir, &m.name, m.ts, Some(&open))?;
            }
            _ => checkpoint::load(core, vfs, dir, &m.name, m.ts)?,
        }
        ckpt_ts = m.ts;
        if let Some(p) = persist {
            *p.checkpoint_lock.lock() = m.ts;
            // The segment files the manifest names must open; others are garbage of a
            // checkpoint that never reached its manifest.
            if let Some(name) = m.segments.first().filter(|_| !m.complete) {
                p.pager.open_current(name)?;
                // Expand, degree and var-length read the adjacency from it from now on.
                if let Some(seg) = p.pager.current()? {
                    core.attach_segment(seg, p.pager.pool.clone())?;
                }
            }
            if may_remove {
                checkpoint_segments::remove_others(vfs, dir, &m.segments);
            }
        }
    }
    let mut cs = core.lock_commit();
    let mut prev = ckpt_ts;
    let mut created: Vec<IndexDef> = Vec::new();
    let (segments, end) = wal::replay(vfs, dir, repair, (ckpt_ts, &sealed), |ts, payload| {
        if ts <= ckpt_ts {
            return Ok(());
        }
        // Commit timestamps are dense: a gap means a lost segment (say, one whose directory
        // entry never became durable), and replaying past it would mix states.
        if ts != prev + 1 {
            return Err(crate::codec::corrupt(format!(
                "commits {} to {} are missing from the log (a lost segment?)",
                prev + 1,
                ts - 1
            )));
        }
        prev = ts;
        core.replay_record(&mut cs, ts, payload, &mut created)
    })?;
    let last = end.last_ts.max(ckpt_ts);
    tracing::info!(
        "recovered {}: checkpoint at commit {ckpt_ts}, {} log record(s) replayed, last commit {}",
        dir.display(),
        end.records,
        describe_commit(last, (end.last_ts == last).then_some(end.last_time_ms).flatten()),
    );
    let next_ts = (last + 1).max(segments.last().map_or(0, |s| s.0));
    if let Some(p) = persist {
        *p.wal.segments.lock() = segments;
    }
    cs.next_ts = next_ts;
    {
        let t = core.tokens().read();
        for (i, tt) in t.t.iter().enumerate() {
            cs.tokens_logged[i] = tt.names.len();
        }
    }
    core.clock().publish(last);
    core.after_replay_parts(may_remove);
    core.gc(&mut cs);
    // A rule dropped later in the log (or dropped and created again) is no longer the one
    // installed under its name.
    let populate = {
        let s = core.schema().read();
        created.retain(|c| s.defs.iter().any(|d| Arc::ptr_eq(&d.progress, &c.progress)));
        created
    };
    Ok(Recovered { next_ts, replayed: last > ckpt_ts, checkpoint_ts: ckpt_ts, populate })
}
impl Core {
    /// Applies one WAL record; index rules it creates are installed POPULATING, unbuilt, and
    /// added to `created`. Caller holds the commit mutex.
    fn replay_record(
        &self,
        cs: &mut CommitState,
        ts: u64,
        payload: &[u8],
        created: &mut Vec<IndexDef>,
    ) -> Result<()> {
        let mut d = Dec::new(payload);
        let mut nodes: Vec<(u64, Option<Arc<NodeData>>)> = Vec::new();
        let mut rels: Vec<(u64, Option<Arc<RelData>>)> = Vec::new();
        while !d.is_empty() {
            match d.op()? {
                Op::Token { kind, id, name } => self.tokens().write().ensure(kind, id, &name)?,
                Op::PutNode { id, labels, props } => {
                    nodes.push((id, Some(Arc::new(NodeData { labels: labels.into(), props }))))
                }
                Op::DelNode { id } => nodes.push((id, None)),
                Op::PutRel { id, start, end, ty, props } => {
                    rels.push((id, Some(Arc::new(RelData { start, end, ty, props }))))
                }
                Op::DelRel { id } => rels.push((id, None)),
                Op::CreateIndex { name, label, keys, kind, rel } => {
                    self.replay_forget_part(&name);
                    let exists = self.schema().read().defs.iter().any(|x| x.name == name);
                    if !exists {
                        // Vector indexes build in their own threads after the open
                        // (`start_vector_builds`); rules without index data have nothing to fill.
                        let deferred = kind.has_index() && kind != IndexKind::Vector;
                        let progress = if deferred {
                            Arc::new(Progress::default())
                        } else {
                            Progress::online()
                        };
                        let def = IndexDef::from_logged(name, label, keys, kind, rel, progress);
                        if deferred {
                            created.push(def.clone());
                        }
                        #[cfg(test)]
                        if !deferred && kind.has_index() {
                            super::populate_replayed::FILLED.lock().push(def.name.clone());
                        }
                        self.install_index_with(cs, def, !deferred);
                    }
                }
                Op::DropIndex { name } => {
                    self.replay_forget_part(&name);
                    self.schema().write().drop_def(&name);
                }
                Op::AttachPart(r) => self.replay_attach(r, ts),
            }
        }
        if !nodes.is_empty() || !rels.is_empty() {
            self.apply(cs, ts, &nodes, &rels);
        }
        Ok(())
    }
}
