//! The [`Store`] handle: opening (with recovery) or creating an in-memory store, schema
//! operations, checkpoints, background maintenance and shutdown.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status, Value};
use crossbeam_channel::{RecvTimeoutError, Sender};
use parking_lot::Mutex;

use crate::checkpoint;
use crate::codec::{Dec, Enc, Op};
use crate::mvcc::{CommitState, Core, NodeData, RelData};
use crate::schema::{default_name, IdSet, IndexDef, IndexInfo};
use crate::tx::Transaction;
use crate::value::{fmt_value, IndexKey};
use crate::wal::{self, io_err, WalMsg, WalShared};
use crate::{BaseStats, StoreConfig, TokenId, TokenKind};

/// What [`Store::memory_stats`] reports.
#[derive(Clone, Debug, Default)]
pub struct MemoryStats {
    /// Commit ts the compact base reflects.
    pub base_ts: u64,
    /// Entity counts and byte sizes of the base's columns.
    pub base: BaseStats,
    /// Nodes / relationships with delta slots (written since the base was built).
    pub delta_nodes: u64,
    pub delta_rels: u64,
}

/// How often the background thread collects garbage and checks checkpoint triggers.
const MAINTENANCE_EVERY: Duration = Duration::from_millis(50);
/// The delta is folded into a new base (by a checkpoint, or a compaction for an in-memory
/// store) once it holds this many versions and more than a quarter of the base's size: the
/// delta costs ~100-200 bytes per entity, the base ~10-20.
const COMPACT_MIN_DELTA: u64 = 200_000;

/// File-backed configuration and state.
pub(crate) struct Persist {
    pub dir: PathBuf,
    pub config: StoreConfig,
    pub wal: Arc<WalShared>,
    /// Serializes checkpoints; holds the ts of the last one.
    pub checkpoint_lock: Mutex<u64>,
    pub last_checkpoint_at: Mutex<Instant>,
}

/// A graph store. Cheap to clone (all clones share one store); `Send + Sync`. The store is
/// closed (checkpoint, threads stopped) by [`Store::close`] or when the last clone is dropped.
#[derive(Clone)]
pub struct Store {
    h: Arc<Handle>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir = self.h.core.persist.as_ref().map(|p| p.dir.clone());
        f.debug_struct("Store")
            .field("dir", &dir)
            .field("last_commit_ts", &self.last_commit_ts())
            .finish()
    }
}

struct Handle {
    core: Arc<Core>,
    life: Mutex<Life>,
}

struct Life {
    writer: Option<JoinHandle<()>>,
    background: Option<(Sender<()>, JoinHandle<()>)>,
    lock_file: Option<File>,
    stopped: bool,
}

enum SchemaChange {
    Create { name: Option<String>, label: u32, key: u32, unique: bool },
    Drop { name: String, unique: bool },
}

impl Store {
    /// A store without files: nothing survives the process.
    pub fn in_memory() -> Store {
        let core = Arc::new(Core::new(None));
        let background = spawn_background(core.clone());
        Store {
            h: Arc::new(Handle {
                core,
                life: Mutex::new(Life {
                    writer: None,
                    background,
                    lock_file: None,
                    stopped: false,
                }),
            }),
        }
    }

    /// Opens (creating if missing) the store in `dir`, recovering from its checkpoint and WAL.
    pub fn open(dir: &Path, config: StoreConfig) -> Result<Store> {
        fs::create_dir_all(dir).map_err(|e| io_err("cannot create", dir, e))?;
        let lock_path = dir.join("LOCK");
        let lock_file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io_err("cannot open", &lock_path, e))?;
        match lock_file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::new(
                    Status::Io,
                    format!("the store in {} is already open", dir.display()),
                ))
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(io_err("cannot lock", &lock_path, e))
            }
        }
        crate::bulk::refuse_incomplete(dir)?;
        let shared = Arc::new(WalShared::default());
        let persist = Persist {
            dir: dir.to_path_buf(),
            config: config.clone(),
            wal: shared.clone(),
            checkpoint_lock: Mutex::new(0),
            last_checkpoint_at: Mutex::new(Instant::now()),
        };
        let core = Arc::new(Core::new(Some(persist)));
        checkpoint::remove_tmp_files(dir);
        let next_ts = recover(&core, dir)?;
        let (sender, writer) = wal::start(
            dir,
            config.durability,
            config.wal_segment_bytes,
            next_ts,
            shared,
            core.clock.clone(),
        )?;
        core.commit.lock().wal = Some(sender);
        let background = spawn_background(core.clone());
        Ok(Store {
            h: Arc::new(Handle {
                core,
                life: Mutex::new(Life {
                    writer: Some(writer),
                    background,
                    lock_file: Some(lock_file),
                    stopped: false,
                }),
            }),
        })
    }

    /// Starts a transaction on the newest visible snapshot.
    pub fn begin(&self, read_only: bool) -> Transaction {
        Transaction::new(self.h.core.clone(), read_only)
    }

    // ---------------------------------------------------------------- tokens

    pub fn token_id(&self, kind: TokenKind, name: &str) -> Option<TokenId> {
        self.h.core.tokens.read().get(kind, name)
    }

    pub fn token_name(&self, kind: TokenKind, id: TokenId) -> Option<String> {
        self.h.core.tokens.read().name(kind, id).map(|n| n.to_string())
    }

    pub fn get_or_create_token(&self, kind: TokenKind, name: &str) -> Result<TokenId> {
        if let Some(id) = self.token_id(kind, name) {
            return Ok(id);
        }
        self.h.core.tokens.write().create(kind, name)
    }

    pub fn tokens(&self, kind: TokenKind) -> Vec<(TokenId, String)> {
        let t = self.h.core.tokens.read();
        t.t[kind.index()].names.iter().enumerate().map(|(i, n)| (i as u32, n.to_string())).collect()
    }

    // ---------------------------------------------------------------- schema

    /// Creates an equality index on `(label, key)`. Returns `false` (and changes nothing) if an
    /// index or constraint on that pair, or an equivalent rule with that name, already exists.
    /// A different rule with the same name is an `ArgumentError`.
    pub fn create_index(&self, label: TokenId, key: TokenId, name: Option<&str>) -> Result<bool> {
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label,
            key,
            unique: false,
        })
    }

    /// Creates a uniqueness constraint (with its backing index) on `(label, key)`. Fails with
    /// `ConstraintValidationFailed` if existing nodes violate it; `false` if it already exists.
    pub fn create_unique_constraint(
        &self,
        label: TokenId,
        key: TokenId,
        name: Option<&str>,
    ) -> Result<bool> {
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label,
            key,
            unique: true,
        })
    }

    /// Drops a (non-constraint) index by name; `false` if there is none.
    pub fn drop_index(&self, name: &str) -> Result<bool> {
        self.schema_change(SchemaChange::Drop { name: name.to_string(), unique: false })
    }

    /// Drops a uniqueness constraint by name; `false` if there is none.
    pub fn drop_constraint(&self, name: &str) -> Result<bool> {
        self.schema_change(SchemaChange::Drop { name: name.to_string(), unique: true })
    }

    /// All indexes and constraints, by name.
    pub fn indexes(&self) -> Vec<IndexInfo> {
        self.h.core.schema.read().list()
    }

    fn schema_change(&self, change: SchemaChange) -> Result<bool> {
        let core = &self.h.core;
        let ack = {
            let mut cs = core.commit.lock();
            core.clock.check()?;
            if cs.closed {
                return Err(Error::new(Status::Io, "the store is closed"));
            }
            let mut body = Enc::new();
            match change {
                SchemaChange::Create { name, label, key, unique } => {
                    let name = name.unwrap_or_else(|| default_name(unique, label, key));
                    {
                        let s = core.schema.read();
                        if let Some(d) = s.defs.iter().find(|d| d.name == name) {
                            if d.label == label && d.key == key && d.unique == unique {
                                return Ok(false);
                            }
                            return Err(Error::argument(format!(
                                "There already exists an index or constraint called '{name}'."
                            )));
                        }
                        if s.defs
                            .iter()
                            .any(|d| d.label == label && d.key == key && (d.unique || !unique))
                        {
                            return Ok(false);
                        }
                    }
                    if unique {
                        core.check_unique_data(label, key, &name)?;
                    }
                    body.op_create_index(&name, label, key, unique);
                    core.install_index(&mut cs, IndexDef { name, label, key, unique, since: 0 });
                }
                SchemaChange::Drop { name, unique } => {
                    let mut s = core.schema.write();
                    if !s.defs.iter().any(|d| d.name == name && d.unique == unique) {
                        return Ok(false);
                    }
                    s.drop_def(&name);
                    body.op_drop_index(&name);
                }
            }
            let ts = cs.next_ts;
            cs.next_ts += 1;
            if core.persist.is_some() {
                let header = core.record_header(&mut cs, ts);
                let Some(w) = &cs.wal else {
                    return Err(Error::new(Status::Io, "the log writer has stopped"));
                };
                let (atx, arx) = crossbeam_channel::bounded(1);
                if w.send(WalMsg::Commit { ts, header, body: body.buf, ack: Some(atx) }).is_err() {
                    core.clock.fail("the log writer has stopped".into());
                    return Err(Error::new(Status::Io, "the log writer has stopped"));
                }
                Some(arx)
            } else {
                core.clock.publish(ts);
                None
            }
        };
        if let Some(arx) = ack {
            arx.recv()
                .map_err(|_| Error::new(Status::Io, "the log writer has stopped"))
                .and_then(|r| r)?;
        }
        Ok(true)
    }

    // ---------------------------------------------------------------- maintenance

    /// Writes a checkpoint now (no-op for an in-memory store or if nothing changed).
    pub fn checkpoint(&self) -> Result<()> {
        checkpoint::checkpoint(&self.h.core).map(|_| ())
    }

    /// Rebuilds the compact base from the current state and folds the delta (versions written
    /// since the last rebuild) into it, without blocking readers or writers for the build. A
    /// file-backed store does this at every checkpoint; the background thread also does it when
    /// the delta grows large. Returns whether a new base was built.
    pub fn compact(&self) -> Result<bool> {
        checkpoint::compact(&self.h.core)
    }

    /// Sizes of the compact base (built at the last checkpoint, compaction or recovery) and the
    /// number of delta entries on top of it.
    pub fn memory_stats(&self) -> MemoryStats {
        let core = &self.h.core;
        let base = core.base();
        MemoryStats {
            base_ts: base.ts,
            base: base.stats().clone(),
            delta_nodes: core.nodes.len() as u64,
            delta_rels: core.rels.len() as u64,
        }
    }

    /// Verifies checksums of the checkpoint and WAL files and the internal consistency of the
    /// current snapshot (adjacency symmetry, counts, indexes); for `arbor check`. Runs online
    /// (a read-only snapshot; checkpoints wait while the files are read). `Err` only for I/O
    /// errors that stop the check itself; inconsistencies are listed in the report.
    pub fn check(&self) -> Result<crate::CheckReport> {
        crate::check::check(&self.h.core)
    }

    /// Prunes versions no live transaction can see (also done in the background).
    pub fn gc(&self) {
        let mut cs = self.h.core.commit.lock();
        self.h.core.gc(&mut cs);
    }

    /// Checkpoints, stops background threads and the log writer, and releases the directory.
    /// Later commits fail; reads of open transactions keep working. Idempotent.
    pub fn close(&self) -> Result<()> {
        self.h.shutdown(true)
    }

    /// Simulates a crash for tests: stops threads and releases the directory without a
    /// checkpoint (everything already handed to the OS stays in the files).
    #[doc(hidden)]
    pub fn crash_for_test(&self) {
        let _ = self.h.shutdown(false);
    }

    /// Number of WAL fsyncs so far (group commit makes this smaller than the commit count).
    pub fn wal_syncs(&self) -> u64 {
        self.h.core.persist.as_ref().map_or(0, |p| p.wal.syncs.load(Ordering::Relaxed))
    }

    /// The newest commit ts visible to new transactions (a bookmark value).
    pub fn last_commit_ts(&self) -> u64 {
        self.h.core.clock.visible()
    }

    /// Waits until commit `ts` is visible to new transactions; `false` on timeout.
    pub fn wait_for_commit(&self, ts: u64, timeout: Duration) -> bool {
        self.h.core.clock.wait_for(ts, timeout)
    }

    #[cfg(test)]
    pub(crate) fn core_for_test(&self) -> &Arc<Core> {
        &self.h.core
    }

    /// Whether this store writes files.
    pub fn is_persistent(&self) -> bool {
        self.h.core.persist.is_some()
    }
}

impl Handle {
    fn shutdown(&self, take_checkpoint: bool) -> Result<()> {
        let mut life = self.life.lock();
        if life.stopped {
            return Ok(());
        }
        life.stopped = true;
        if let Some((stop, thread)) = life.background.take() {
            drop(stop);
            let _ = thread.join();
        }
        let mut res = Ok(());
        if take_checkpoint && self.core.persist.is_some() && self.core.clock.check().is_ok() {
            res = checkpoint::checkpoint_with(&self.core, false).map(|_| ());
        }
        let wal = {
            let mut cs = self.core.commit.lock();
            cs.closed = true;
            cs.wal.take()
        };
        if let Some(w) = wal {
            let (atx, arx) = crossbeam_channel::bounded(1);
            if w.send(WalMsg::Stop(atx)).is_ok() {
                if let Ok(Err(e)) = arx.recv() {
                    res = res.and(Err(e));
                }
            }
        }
        if let Some(t) = life.writer.take() {
            let _ = t.join();
        }
        life.lock_file = None;
        res
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown(true) {
            tracing::warn!("closing the store failed: {e}");
        }
    }
}

fn spawn_background(core: Arc<Core>) -> Option<(Sender<()>, JoinHandle<()>)> {
    let (tx, rx) = crossbeam_channel::bounded::<()>(1);
    let t = std::thread::Builder::new()
        .name("arbor-maintenance".into())
        .spawn(move || loop {
            match rx.recv_timeout(MAINTENANCE_EVERY) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            let delta_big = {
                let mut cs = core.commit.lock();
                core.gc(&mut cs);
                let base = core.base.read();
                let s = base.stats();
                cs.delta_versions > COMPACT_MIN_DELTA.max((s.nodes + s.relationships) / 4)
            };
            let Some(p) = &core.persist else {
                if delta_big {
                    if let Err(e) = checkpoint::compact(&core) {
                        tracing::warn!("background compaction failed: {e}");
                    }
                }
                continue;
            };
            let due = delta_big
                || p.last_checkpoint_at.lock().elapsed() >= p.config.checkpoint_interval
                || p.wal.bytes_since_checkpoint.load(Ordering::Relaxed)
                    >= p.config.checkpoint_wal_bytes;
            if due && core.clock.check().is_ok() {
                if let Err(e) = checkpoint::checkpoint(&core) {
                    tracing::warn!("background checkpoint failed: {e}");
                    *p.last_checkpoint_at.lock() = Instant::now();
                }
            }
        })
        .ok()?;
    Some((tx, t))
}

/// Loads the checkpoint and replays the WAL; returns the next commit ts.
fn recover(core: &Arc<Core>, dir: &Path) -> Result<u64> {
    let mut ckpt_ts = 0;
    if let Some((ts, name)) = checkpoint::read_manifest(dir)? {
        checkpoint::load(core, dir, &name, ts)?;
        ckpt_ts = ts;
        if let Some(p) = &core.persist {
            *p.checkpoint_lock.lock() = ts;
        }
    }
    let mut cs = core.commit.lock();
    let (segments, last) = wal::replay(dir, |ts, payload| {
        if ts <= ckpt_ts {
            return Ok(());
        }
        core.replay_record(&mut cs, ts, payload)
    })?;
    let last = last.max(ckpt_ts);
    let next_ts = (last + 1).max(segments.last().map_or(0, |s| s.0));
    if let Some(p) = &core.persist {
        *p.wal.segments.lock() = segments;
    }
    cs.next_ts = next_ts;
    {
        let t = core.tokens.read();
        for (i, tt) in t.t.iter().enumerate() {
            cs.tokens_logged[i] = tt.names.len();
        }
    }
    core.clock.publish(last);
    core.gc(&mut cs);
    Ok(next_ts)
}

impl Core {
    /// Applies one WAL record. Caller holds the commit mutex.
    fn replay_record(&self, cs: &mut CommitState, ts: u64, payload: &[u8]) -> Result<()> {
        let mut d = Dec::new(payload);
        let mut nodes: Vec<(u64, Option<Arc<NodeData>>)> = Vec::new();
        let mut rels: Vec<(u64, Option<Arc<RelData>>)> = Vec::new();
        while !d.is_empty() {
            match d.op()? {
                Op::Token { kind, id, name } => self.tokens.write().ensure(kind, id, &name)?,
                Op::PutNode { id, labels, props } => {
                    nodes.push((id, Some(Arc::new(NodeData { labels, props }))))
                }
                Op::DelNode { id } => nodes.push((id, None)),
                Op::PutRel { id, start, end, ty, props } => {
                    rels.push((id, Some(Arc::new(RelData { start, end, ty, props }))))
                }
                Op::DelRel { id } => rels.push((id, None)),
                Op::CreateIndex { name, label, key, unique } => {
                    let exists = self.schema.read().defs.iter().any(|x| x.name == name);
                    if !exists {
                        self.install_index(cs, IndexDef { name, label, key, unique, since: 0 });
                    }
                }
                Op::DropIndex { name } => {
                    self.schema.write().drop_def(&name);
                }
            }
        }
        if !nodes.is_empty() || !rels.is_empty() {
            self.apply(cs, ts, &nodes, &rels);
        }
        Ok(())
    }

    /// Adds a schema rule, building its index from every retained version (old snapshots may
    /// seek through it too). Caller holds the commit mutex.
    pub(crate) fn install_index(&self, _cs: &mut CommitState, mut def: IndexDef) {
        let pair = (def.label, def.key);
        let exists = self.schema.read().maps.contains_key(&pair);
        let mut map: HashMap<IndexKey, IdSet> = HashMap::new();
        if !exists {
            // Base rows (kept in the delta index until the next base indexes the pair: a
            // transaction may still read an older base without that index)...
            let base = self.base();
            let mut cur = 0;
            while let Some(id) = base.next_with_label(def.label, cur) {
                if let Some(k) = base.node(id).and_then(|n| n.key_for(def.label, def.key)) {
                    map.entry(k).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
                }
                cur = id + 1;
            }
            // ...and every retained delta version.
            let ids: Vec<u64> = self
                .label_sets
                .read()
                .get(&def.label)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            for id in ids {
                self.nodes.read(id, |s| {
                    for d in s.chain.iter().filter_map(|(_, d)| d.as_ref()) {
                        if let Some(k) = d.key_for(def.label, def.key) {
                            map.entry(k).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
                        }
                    }
                });
            }
        }
        let mut s = self.schema.write();
        s.version += 1;
        def.since = s.version;
        if !exists {
            s.maps.insert(pair, map);
        }
        s.defs.push(def);
    }

    /// Fails if two nodes with `label` share a value of `key` in the newest committed state.
    fn check_unique_data(&self, label: u32, key: u32, name: &str) -> Result<()> {
        let mut ids: Vec<u64> = self
            .label_sets
            .read()
            .get(&label)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default();
        let base = self.base();
        let mut cur = 0;
        while let Some(id) = base.next_with_label(label, cur) {
            ids.push(id);
            cur = id + 1;
        }
        ids.sort_unstable();
        ids.dedup();
        let mut seen: HashMap<IndexKey, u64> = HashMap::new();
        for id in ids {
            let Some(d) = self.node_newest(id).1 else { continue };
            let Some(k) = d.key_for(label, key) else { continue };
            if let Some(other) = seen.insert(k, id) {
                let t = self.tokens.read();
                let l = t.name(TokenKind::Label, label).map(|s| s.to_string()).unwrap_or_default();
                let p =
                    t.name(TokenKind::PropertyKey, key).map(|s| s.to_string()).unwrap_or_default();
                let v = d.prop(key).cloned().unwrap_or(Value::Null);
                return Err(Error::new(
                    Status::ConstraintValidationFailed,
                    format!(
                        "Unable to create Constraint( name='{name}', type='UNIQUENESS', \
                         schema=(:{l} {{{p}}}) ): Both Node({other}) and Node({id}) have the \
                         label `{l}` and property `{p}` = {}",
                        fmt_value(&v)
                    ),
                ));
            }
        }
        Ok(())
    }
}
