//! The [`Store`] handle: opening (with recovery) or creating an in-memory store, schema
//! operations, checkpoints, background maintenance and shutdown.

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
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
use crate::schema::{default_name, IdSet, IndexDef, IndexInfo, IndexKind, Progress, Target};
use crate::tx::Transaction;
use crate::value::{fmt_value, IndexKey};
use crate::vfs::{RealFs, StickyDirSync, Vfs};
use crate::wal::{self, io_err, WalMsg, WalShared};
use crate::{BaseStats, Durability, StoreConfig, TokenId, TokenKind};

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
/// store) once it holds this many versions and more than [`COMPACT_DELTA_SHARE`] of the base's
/// size: the delta costs ~100-200 bytes per entity, the base ~10-20.
const COMPACT_MIN_DELTA: u64 = 200_000;
/// The fold rebuilds the whole base, so the delta may grow to half the base before one (a
/// quarter made inserting 1,000,000 nodes into an empty store rebuild 3,000,000 in five folds,
/// a third of the server's CPU in the data-copy benchmark; half makes it 2,100,000 in four).
const COMPACT_DELTA_SHARE: u64 = 2;
/// Ids the background GC collects per hold of the commit mutex (a few milliseconds of work).
const GC_STEP: usize = 8192;
/// GC steps per maintenance round; what is left waits for the next round.
const GC_STEPS_PER_ROUND: usize = 256;

/// File-backed configuration and state.
pub(crate) struct Persist {
    pub vfs: Arc<dyn Vfs>,
    /// Opened by [`Store::open_read_only`]: nothing in `dir` is ever written.
    pub read_only: bool,
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
    lock_file: Option<Box<dyn Any + Send>>,
    stopped: bool,
}

enum SchemaChange {
    Create { name: Option<String>, label: u32, keys: Vec<u32>, kind: IndexKind, rel: bool },
    Drop { name: String, constraint: bool },
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
        Store::open_with_vfs(dir, config, Arc::new(RealFs))
    }

    /// [`Store::open`] over another file system (tests use a simulated one that injects
    /// crashes and I/O errors).
    pub fn open_with_vfs(dir: &Path, config: StoreConfig, vfs: Arc<dyn Vfs>) -> Result<Store> {
        let vfs: Arc<dyn Vfs> = Arc::new(StickyDirSync::new(vfs));
        vfs.create_dir_all(dir).map_err(|e| io_err("cannot create", dir, e))?;
        let lock_file = lock(&*vfs, dir, true)?;
        crate::bulk::refuse_incomplete(dir)?;
        let shared = Arc::new(WalShared::default());
        let persist = Persist {
            vfs: vfs.clone(),
            read_only: false,
            dir: dir.to_path_buf(),
            config: config.clone(),
            wal: shared.clone(),
            checkpoint_lock: Mutex::new(0),
            last_checkpoint_at: Mutex::new(Instant::now()),
        };
        let core = Arc::new(Core::new(Some(persist)));
        checkpoint::remove_tmp_files(&*vfs, dir);
        let (next_ts, replayed) = recover(&core, &*vfs, dir, true)?;
        if replayed && config.durability != Durability::Off {
            // What was just replayed came from the page cache, which is not necessarily what is
            // on disk: after a failed fsync (of a process that then exited) the kernel may have
            // dropped those pages from the write-back and marked them clean, so they stay
            // readable but no later fsync writes them. A checkpoint rewrites the replayed state
            // into a new, fsynced file; all old segments, the last one included (writing starts
            // in a new one), are then garbage.
            if let Some(p) = &core.persist {
                p.wal.segments.lock().push((next_ts, dir.join(wal::segment_name(next_ts))));
            }
            checkpoint::checkpoint_with(&core, false)?;
        }
        let (sender, writer) = wal::start(
            vfs.clone(),
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
                    lock_file,
                    stopped: false,
                }),
            }),
        })
    }

    /// Opens the store in `dir` for reading only (`arbor check`): recovery runs in memory and
    /// nothing in the directory is created, repaired or deleted (a torn WAL tail is ignored, not
    /// truncated; no log segment is opened; closing writes no checkpoint). Commits and schema
    /// changes fail. Refused while a writer has the store open.
    pub fn open_read_only(dir: &Path) -> Result<Store> {
        Store::open_read_only_with_vfs(dir, Arc::new(RealFs))
    }

    /// [`Store::open_read_only`] over another file system.
    pub fn open_read_only_with_vfs(dir: &Path, vfs: Arc<dyn Vfs>) -> Result<Store> {
        let lock_file = lock(&*vfs, dir, false)?;
        crate::bulk::refuse_incomplete(dir)?;
        let persist = Persist {
            vfs: vfs.clone(),
            read_only: true,
            dir: dir.to_path_buf(),
            config: StoreConfig::default(),
            wal: Arc::new(WalShared::default()),
            checkpoint_lock: Mutex::new(0),
            last_checkpoint_at: Mutex::new(Instant::now()),
        };
        let core = Arc::new(Core::new(Some(persist)));
        recover(&core, &*vfs, dir, false)?;
        core.commit.lock().closed = true;
        Ok(Store {
            h: Arc::new(Handle {
                core,
                life: Mutex::new(Life {
                    writer: None,
                    background: None,
                    lock_file,
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

    /// Creates an index on `(label, key)`. Returns `false` (and changes nothing) if an
    /// index or constraint on that pair, or an equivalent rule with that name, already exists.
    /// A different rule with the same name is an `ArgumentError`.
    pub fn create_index(&self, label: TokenId, key: TokenId, name: Option<&str>) -> Result<bool> {
        self.create_rule(IndexKind::Range, label, &[key], name)
    }

    /// Creates a uniqueness constraint (with its backing index) on `(label, key)`. Fails with
    /// `ConstraintCreationFailed` if existing nodes violate it; `false` if it already exists.
    pub fn create_unique_constraint(
        &self,
        label: TokenId,
        key: TokenId,
        name: Option<&str>,
    ) -> Result<bool> {
        self.create_rule(IndexKind::Uniqueness, label, &[key], name)
    }

    /// Creates a schema rule of any kind on `label` and one or more property `keys` (a
    /// composite index or constraint when more than one; existence constraints take one key).
    /// Returns `false` (and changes nothing) if an equivalent rule exists (for an index: any
    /// rule with an index on the same target). Constraints fail with `ConstraintCreationFailed`
    /// if existing nodes violate them.
    pub fn create_rule(
        &self,
        kind: IndexKind,
        label: TokenId,
        keys: &[TokenId],
        name: Option<&str>,
    ) -> Result<bool> {
        if keys.is_empty() || (kind == IndexKind::Existence && keys.len() != 1) {
            return Err(Error::argument(
                "an index or constraint needs one property (existence: exactly one)",
            ));
        }
        let mut seen = keys.to_vec();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != keys.len() {
            return Err(Error::argument("a property may appear only once in a schema rule"));
        }
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label,
            keys: keys.to_vec(),
            kind,
            rel: false,
        })
    }

    /// Creates an existence constraint on relationships of type `ty`: every one has property
    /// `key`. Fails with `ConstraintCreationFailed` if an existing relationship lacks it;
    /// `false` if it already exists.
    pub fn create_rel_existence_constraint(
        &self,
        ty: TokenId,
        key: TokenId,
        name: Option<&str>,
    ) -> Result<bool> {
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label: ty,
            keys: vec![key],
            kind: IndexKind::Existence,
            rel: true,
        })
    }

    /// Creates a constraint of `kind` (uniqueness, key or existence) on relationships of type
    /// `ty` and one or more property `keys` (existence: exactly one). Uniqueness and key
    /// constraints get their own backing index, used by seeks. Returns `false` (and changes
    /// nothing) if an equivalent rule exists; fails with `ConstraintCreationFailed` if existing
    /// relationships violate it, `IndexAlreadyExists` / `ConstraintAlreadyExists` if another
    /// rule on the same schema is in the way (as Neo4j).
    pub fn create_rel_constraint(
        &self,
        kind: IndexKind,
        ty: TokenId,
        keys: &[TokenId],
        name: Option<&str>,
    ) -> Result<bool> {
        if !kind.is_constraint() {
            return self.create_rel_index(ty, keys, name);
        }
        if keys.is_empty() || (kind == IndexKind::Existence && keys.len() != 1) {
            return Err(Error::argument(
                "a constraint needs one property (existence: exactly one)",
            ));
        }
        let mut seen = keys.to_vec();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != keys.len() {
            return Err(Error::argument("a property may appear only once in a schema rule"));
        }
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label: ty,
            keys: keys.to_vec(),
            kind,
            rel: true,
        })
    }

    /// Creates a relationship property index on relationships of type `ty` and one or more
    /// property `keys`, used by equality, range, prefix and `IN` seeks. On existing
    /// relationships it populates in the background (`POPULATING`, then `ONLINE`). Returns
    /// `false` if an equivalent index exists; fails with `ConstraintAlreadyExists` where a
    /// uniqueness or key constraint on the same schema exists.
    pub fn create_rel_index(
        &self,
        ty: TokenId,
        keys: &[TokenId],
        name: Option<&str>,
    ) -> Result<bool> {
        let mut seen = keys.to_vec();
        seen.sort_unstable();
        seen.dedup();
        if keys.is_empty() || seen.len() != keys.len() {
            return Err(Error::argument("an index needs distinct properties"));
        }
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label: ty,
            keys: keys.to_vec(),
            kind: IndexKind::Range,
            rel: true,
        })
    }

    /// Drops a (non-constraint) index by name; `false` if there is none.
    pub fn drop_index(&self, name: &str) -> Result<bool> {
        self.schema_change(SchemaChange::Drop { name: name.to_string(), constraint: false })
    }

    /// Drops a constraint by name; `false` if there is none.
    pub fn drop_constraint(&self, name: &str) -> Result<bool> {
        self.schema_change(SchemaChange::Drop { name: name.to_string(), constraint: true })
    }

    /// All indexes and constraints, by name.
    pub fn indexes(&self) -> Vec<IndexInfo> {
        self.h.core.schema.read().list()
    }

    fn schema_change(&self, change: SchemaChange) -> Result<bool> {
        let core = &self.h.core;
        // A plain index on existing data is filled in the background after the commit.
        let mut populate: Option<(Target, Arc<Progress>, bool)> = None;
        // A constraint installed but not yet validated nor logged.
        let mut validate: Option<IndexDef> = None;
        let ack = 'locked: {
            let mut cs = core.commit.lock();
            core.clock.check()?;
            if cs.closed {
                return Err(Error::new(Status::Io, "the store is closed"));
            }
            let mut body = Enc::new();
            match change {
                SchemaChange::Create { name, label, keys, kind, rel } => {
                    let name = name.unwrap_or_else(|| default_name(kind, rel, label, &keys));
                    {
                        let s = core.schema.read();
                        if let Some(d) = s.defs.iter().find(|d| d.name == name) {
                            if d.label == label && d.keys == keys && d.kind == kind && d.rel == rel
                            {
                                return Ok(false);
                            }
                            return Err(Error::argument(format!(
                                "There already exists an index or constraint called '{name}'."
                            )));
                        }
                        let same =
                            |d: &&IndexDef| d.rel == rel && d.label == label && d.keys == keys;
                        let schema_text = || core.schema_text(rel, label, &keys);
                        // Neo4j's rules: one index-backed rule per schema. An index next to a
                        // uniqueness/key constraint, a second index, a constraint next to an
                        // index, a key next to a uniqueness constraint (and the reverse) are
                        // refused; only the same kind under another name is "equivalent"
                        // (`false`: the caller decides whether IF NOT EXISTS allows it).
                        for d in s.defs.iter().filter(same) {
                            match (kind, d.kind) {
                                (k, o) if k == o => return Ok(false),
                                (IndexKind::Existence, _) | (_, IndexKind::Existence) => {}
                                (IndexKind::Range, _) => {
                                    return Err(Error::new(
                                        Status::ConstraintAlreadyExists,
                                        format!(
                                            "There is a uniqueness constraint on {}, so an index \
                                             is already created that matches this.",
                                            schema_text()
                                        ),
                                    ))
                                }
                                (_, IndexKind::Range) => {
                                    return Err(Error::new(
                                        Status::IndexAlreadyExists,
                                        format!(
                                            "There already exists an index {}. A constraint \
                                             cannot be created until the index has been dropped.",
                                            schema_text()
                                        ),
                                    ))
                                }
                                (_, o) => {
                                    return Err(Error::new(
                                        Status::ConstraintAlreadyExists,
                                        format!(
                                            "Constraint already exists: Constraint( name='{}', \
                                             type='{}', schema={} )",
                                            d.name,
                                            if rel { o.rel_type_name() } else { o.type_name() },
                                            schema_text()
                                        ),
                                    ))
                                }
                            }
                        }
                    }
                    if kind.is_constraint() {
                        // Validated against the data after the mutex is released (see
                        // `finish_constraint`); enforced on commits from now on.
                        let progress = if kind.has_index() {
                            Arc::new(Progress::default())
                        } else {
                            Progress::online()
                        };
                        let def = IndexDef { name, label, keys, kind, since: 0, progress, rel };
                        core.schema.write().pending.insert(def.name.clone());
                        core.install_index_with(&mut cs, def.clone(), false);
                        validate = Some(def);
                        break 'locked None;
                    }
                    body.op_create_rule(&name, kind, rel, label, &keys);
                    // Constraints must see all data before they exist; indexes need not.
                    let background = kind == IndexKind::Range
                        && if rel { core.has_type_rows(label) } else { core.has_label_rows(label) };
                    let progress =
                        if background { Arc::new(Progress::default()) } else { Progress::online() };
                    let def = IndexDef { name, label, keys, kind, since: 0, progress, rel };
                    if background {
                        populate = Some((def.target(), def.progress.clone(), rel));
                    }
                    core.install_index_with(&mut cs, def, !background);
                }
                SchemaChange::Drop { name, constraint } => {
                    let mut s = core.schema.write();
                    if !s
                        .defs
                        .iter()
                        .any(|d| d.name == name && d.kind.is_constraint() == constraint)
                    {
                        return Ok(false);
                    }
                    s.drop_def(&name);
                    body.op_drop_index(&name);
                }
            }
            core.log_schema(&mut cs, body)?
        };
        if let Some(def) = validate {
            return self.finish_constraint(def);
        }
        if let Some(arx) = ack {
            arx.recv()
                .map_err(|_| Error::new(Status::Io, "the log writer has stopped"))
                .and_then(|r| r)?;
        }
        if let Some((target, progress, rel)) = populate {
            let core = core.clone();
            let spawned = std::thread::Builder::new()
                .name("arbor-index-population".into())
                .spawn(move || core.populate(&target, &progress, rel));
            if let Err(e) = spawned {
                return Err(Error::new(
                    Status::Internal,
                    format!("cannot start the index population thread: {e}"),
                ));
            }
        }
        Ok(true)
    }

    /// Validates a constraint `schema_change` installed (enforced by commits since, not
    /// logged, `pending`) without holding the commit mutex, then logs it. Writers go on
    /// meanwhile: their commits are checked against the rule, though against an index that
    /// is still filling, so a duplicate of an existing row can slip in; that is why the
    /// uniqueness is checked again at the end, under the mutex, over the keys the complete
    /// index holds more than once (O(index size), no property reads). Any violation removes
    /// the rule and fails with `ConstraintCreationFailed`; nothing was logged, so a crash
    /// before the log record leaves no trace of it (checkpoints skip pending rules).
    fn finish_constraint(&self, def: IndexDef) -> Result<bool> {
        let core = &self.h.core;
        let target = def.target();
        if def.kind.has_index() {
            core.populate(&target, &def.progress, def.rel);
        }
        let mut result = if def.rel {
            core.check_rel_rule_data(def.label, &def.keys, def.kind, &def.name)
        } else {
            core.check_rule_data(def.label, &def.keys, def.kind, &def.name)
        };
        let ack = {
            let mut cs = core.commit.lock();
            let present = core
                .schema
                .read()
                .defs
                .iter()
                .any(|d| d.name == def.name && Arc::ptr_eq(&d.progress, &def.progress));
            if !present {
                core.schema.write().pending.remove(&def.name);
                return Err(Error::new(
                    Status::ConstraintCreationFailed,
                    format!(
                        "Unable to create Constraint( name='{}' ): it was dropped while being \
                         created",
                        def.name
                    ),
                ));
            }
            if result.is_ok() && def.kind.unique() {
                result = core.recheck_unique(&def);
            }
            if let Err(e) = result.and_then(|()| core.clock.check()) {
                let mut s = core.schema.write();
                s.pending.remove(&def.name);
                s.drop_def(&def.name);
                return Err(e);
            }
            if cs.closed {
                return Err(Error::new(Status::Io, "the store is closed"));
            }
            let mut body = Enc::new();
            body.op_create_rule(&def.name, def.kind, def.rel, def.label, &def.keys);
            core.schema.write().pending.remove(&def.name);
            core.log_schema(&mut cs, body)?
        };
        if let Some(arx) = ack {
            arx.recv()
                .map_err(|_| Error::new(Status::Io, "the log writer has stopped"))
                .and_then(|r| r)?;
        }
        Ok(true)
    }

    /// Waits until the named index (or every index, with `None`) is online; fails with an
    /// `ArgumentError` for an unknown name or when `timeout` passes first.
    pub fn await_indexes(&self, name: Option<&str>, timeout: Duration) -> Result<()> {
        self.h.core.await_indexes(name, timeout)
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
        let mut stats = base.stats().clone();
        stats.index_bytes += base.ordered_bytes() + base.int_column_bytes();
        MemoryStats {
            base_ts: base.ts,
            base: stats,
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
        let writable = self.core.persist.as_ref().is_some_and(|p| !p.read_only);
        if take_checkpoint && writable && self.core.clock.check().is_ok() {
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
            // GC in bounded steps, releasing the commit mutex in between so commits go on
            // (a fold queues the whole delta at once); a bounded number of steps per round.
            for _ in 0..GC_STEPS_PER_ROUND {
                let mut cs = core.commit.lock();
                if !core.gc_some(&mut cs, GC_STEP) {
                    break;
                }
            }
            let delta_big = {
                let cs = core.commit.lock();
                let base = core.base.read();
                let s = base.stats();
                cs.delta_versions
                    > COMPACT_MIN_DELTA.max((s.nodes + s.relationships) / COMPACT_DELTA_SHARE)
            };
            let Some(p) = &core.persist else {
                if delta_big {
                    if let Err(e) = checkpoint::compact(&core) {
                        tracing::warn!("background compaction failed: {e}");
                    }
                }
                continue;
            };
            let due = p.last_checkpoint_at.lock().elapsed() >= p.config.checkpoint_interval
                || p.wal.bytes_since_checkpoint.load(Ordering::Relaxed)
                    >= p.config.checkpoint_wal_bytes;
            if due && core.clock.check().is_ok() {
                if let Err(e) = checkpoint::checkpoint(&core) {
                    tracing::warn!("background checkpoint failed: {e}");
                    *p.last_checkpoint_at.lock() = Instant::now();
                }
            } else if delta_big && !p.read_only && core.clock.check().is_ok() {
                // A large delta only needs folding into a new base: the WAL keeps it durable
                // and the log-size / interval triggers bound recovery. Writing a checkpoint
                // file for every fold cost a bulk load (1,000,000 nodes into an empty store:
                // four folds) the encoding, a file of the whole graph each time and its
                // fsync, which competed with the commits' own fsyncs on the same disk.
                if let Err(e) = checkpoint::compact(&core) {
                    tracing::warn!("background compaction failed: {e}");
                }
            }
        })
        .ok()?;
    Some((tx, t))
}

/// Takes the store's directory lock (see [`Vfs::lock_dir`]).
///
/// A lock held elsewhere is retried for a moment: a store closed in this process can stay
/// locked briefly when another thread forks a child (the child shares the lock file's open
/// description until it execs).
fn lock(vfs: &dyn Vfs, dir: &Path, exclusive: bool) -> Result<Option<Box<dyn Any + Send>>> {
    let mut tries = 0;
    loop {
        match vfs.lock_dir(dir, exclusive) {
            Ok(guard) => return Ok(guard),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(Error::new(
                    Status::Io,
                    format!("the store in {} is already open", dir.display()),
                ))
            }
            Err(e) => return Err(io_err("cannot lock", &dir.join(crate::vfs::LOCK_FILE), e)),
        }
    }
}

/// Loads the checkpoint and replays the WAL (cutting off a torn tail with `repair`); returns
/// the next commit ts and whether any WAL record newer than the checkpoint was replayed.
fn recover(core: &Arc<Core>, vfs: &dyn Vfs, dir: &Path, repair: bool) -> Result<(u64, bool)> {
    let mut ckpt_ts = 0;
    if let Some((ts, name)) = checkpoint::read_manifest(vfs, dir)? {
        checkpoint::load(core, vfs, dir, &name, ts)?;
        ckpt_ts = ts;
        if let Some(p) = &core.persist {
            *p.checkpoint_lock.lock() = ts;
        }
    }
    let mut cs = core.commit.lock();
    let mut prev = ckpt_ts;
    let (segments, last) = wal::replay(vfs, dir, repair, ckpt_ts, |ts, payload| {
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
    Ok((next_ts, last > ckpt_ts))
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
                    nodes.push((id, Some(Arc::new(NodeData { labels: labels.into(), props }))))
                }
                Op::DelNode { id } => nodes.push((id, None)),
                Op::PutRel { id, start, end, ty, props } => {
                    rels.push((id, Some(Arc::new(RelData { start, end, ty, props }))))
                }
                Op::DelRel { id } => rels.push((id, None)),
                Op::CreateIndex { name, label, keys, kind, rel } => {
                    let exists = self.schema.read().defs.iter().any(|x| x.name == name);
                    if !exists {
                        let progress = Progress::online();
                        let def = IndexDef { name, label, keys, kind, since: 0, progress, rel };
                        self.install_index(cs, def);
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
    pub(crate) fn install_index(&self, cs: &mut CommitState, def: IndexDef) {
        self.install_index_with(cs, def, true);
    }

    /// As `install_index`; without `build_now` the index data starts empty (commits from now on
    /// add their entries) and [`Core::populate`] fills in the existing rows.
    pub(crate) fn install_index_with(
        &self,
        _cs: &mut CommitState,
        mut def: IndexDef,
        build_now: bool,
    ) {
        let target = def.target();
        if def.rel && def.kind.has_index() {
            self.install_rel_index(def, build_now);
            return;
        }
        if !def.kind.has_index() {
            // Existence constraints have no index data.
            let mut s = self.schema.write();
            s.version += 1;
            def.since = s.version;
            s.defs.push(def);
            return;
        }
        let mut map: BTreeMap<IndexKey, IdSet> = BTreeMap::new();
        // An existing map may still be populating: building again (a set union) keeps a rule
        // that is online at once from relying on it.
        let build = def.kind.has_index() && build_now;
        if build {
            let (label, keys) = (def.label, &def.keys[..]);
            // Base rows (kept in the delta index until the next base indexes the target: a
            // transaction may still read an older base without that index)...
            let base = self.base();
            let mut ids: Vec<u64> = Vec::new();
            let mut cur = 0;
            while let Some(id) = base.next_with_label(label, cur) {
                if let Some(k) = base.node(id).and_then(|n| n.key_for(label, keys)) {
                    map.entry(k).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
                }
                ids.push(id);
                cur = id + 1;
            }
            // ...and every retained delta version: of those rows (the delta's label sets list
            // only nodes that gained the label since the base, not base rows that kept it) and
            // of the nodes in the delta's label set.
            if let Some(s) = self.label_sets.read().get(&label) {
                ids.extend(s.iter());
            }
            ids.sort_unstable();
            ids.dedup();
            for id in ids {
                self.nodes.read(id, |s| {
                    for d in s.chain.iter().filter_map(|(_, d)| d.as_ref()) {
                        if let Some(k) = d.key_for(label, keys) {
                            map.entry(k).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
                        }
                    }
                });
            }
        }
        let mut s = self.schema.write();
        s.version += 1;
        def.since = s.version;
        if def.kind.has_index() {
            let m = s.maps.entry(target).or_default();
            for (k, ids) in map {
                for id in ids.to_vec() {
                    m.entry(k.clone()).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
                }
            }
        }
        s.defs.push(def);
    }

    /// Adds a relationship index, built from every retained version of the relationships of
    /// its type (base rows and delta chains), or without `build_now` empty (commits from now on
    /// add their entries; [`Core::populate`] adds the existing rows). Caller holds the commit
    /// mutex.
    fn install_rel_index(&self, mut def: IndexDef, build_now: bool) {
        let target = def.target();
        let map = if build_now { self.rel_index_data(&def) } else { BTreeMap::new() };
        let mut s = self.schema.write();
        s.version += 1;
        def.since = s.version;
        let m = s.rel_maps.entry(target).or_default();
        for (k, ids) in map {
            for id in ids.to_vec() {
                m.entry(k.clone()).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
            }
        }
        s.defs.push(def);
    }

    /// Rebuilds every relationship index from the base and delta (after a checkpoint is loaded:
    /// its rules are installed before its relationships are).
    pub(crate) fn rebuild_rel_indexes(&self) {
        let defs: Vec<IndexDef> =
            self.schema.read().defs.iter().filter(|d| d.rel).cloned().collect();
        for def in defs {
            let map = self.rel_index_data(&def);
            self.schema.write().rel_maps.insert(def.target(), map);
        }
    }

    fn rel_index_data(&self, def: &IndexDef) -> BTreeMap<IndexKey, IdSet> {
        let mut map: BTreeMap<IndexKey, IdSet> = BTreeMap::new();
        let mut add = |k: IndexKey, id: u64| {
            map.entry(k).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
        };
        let base = self.base();
        let mut cur = 0;
        while let Some(id) = base.next_rel_of_types(&[def.label], cur) {
            if let Some(k) = base.rel(id).and_then(|r| r.to_data().key_for(def.label, &def.keys)) {
                add(k, id);
            }
            cur = id + 1;
        }
        let ids: Vec<u64> =
            self.type_sets.read().get(&def.label).map(|s| s.iter().collect()).unwrap_or_default();
        for id in ids {
            self.rels.read(id, |s| {
                for d in s.chain.iter().filter_map(|(_, d)| d.as_ref()) {
                    if let Some(k) = d.key_for(def.label, &def.keys) {
                        add(k, id);
                    }
                }
            });
        }
        map
    }

    /// The newest committed state of relationship `id` (delta chain, else base row); `None`
    /// if it is deleted or never existed.
    pub(crate) fn rel_newest_data(&self, id: u64) -> Option<Arc<RelData>> {
        match self.rels.read(id, |s| s.chain.last().map(|v| v.1.clone())).flatten() {
            Some(d) => d,
            None => self.base().rel(id).map(|r| Arc::new(r.to_data())),
        }
    }

    /// Fails with `ConstraintCreationFailed` if the newest committed state violates the
    /// relationship rule about to be created: a relationship of type `ty` lacking a key the
    /// rule requires (existence, key), or two sharing a unique key (uniqueness, key).
    fn check_rel_rule_data(
        &self,
        ty: u32,
        keys: &[u32],
        kind: IndexKind,
        name: &str,
    ) -> Result<()> {
        if kind == IndexKind::Range {
            return Ok(());
        }
        let (tn, ks) = {
            let t = self.tokens.read();
            let tn = t.name(TokenKind::RelType, ty).map(|s| s.to_string()).unwrap_or_default();
            let ks: Vec<String> = keys
                .iter()
                .map(|k| {
                    t.name(TokenKind::PropertyKey, *k).map(|s| s.to_string()).unwrap_or_default()
                })
                .collect();
            (tn, ks)
        };
        let type_text = match kind {
            IndexKind::Uniqueness => "RELATIONSHIP UNIQUENESS",
            IndexKind::NodeKey => "RELATIONSHIP KEY",
            _ => "RELATIONSHIP_PROPERTY_EXISTENCE",
        };
        let fail = |detail: String| {
            Error::new(
                Status::ConstraintCreationFailed,
                format!(
                    "Unable to create Constraint( name='{name}', type='{type_text}', \
                     schema=()-[:{tn} {{{}}}]-() ):\n{detail}",
                    ks.join(", ")
                ),
            )
        };
        let mut ids: Vec<u64> =
            self.type_sets.read().get(&ty).map(|s| s.iter().collect()).unwrap_or_default();
        let base = self.base();
        let mut cur = 0;
        while let Some(id) = base.next_rel_of_types(&[ty], cur) {
            ids.push(id);
            cur = id + 1;
        }
        ids.sort_unstable();
        ids.dedup();
        let mut seen: HashMap<IndexKey, u64> = HashMap::new();
        for id in ids {
            let Some(r) = self.rel_newest_data(id) else { continue };
            if r.ty != ty {
                continue;
            }
            if kind.requires() && keys.iter().any(|k| crate::mvcc::prop_of(&r.props, *k).is_none())
            {
                return Err(fail(self.missing_rel_property(id, ty, keys, kind).message));
            }
            if kind.unique() {
                let Some(k) = r.key_for(ty, keys) else { continue };
                if let Some(other) = seen.insert(k, id) {
                    let vals: Vec<String> = keys
                        .iter()
                        .zip(&ks)
                        .map(|(k, n)| {
                            let v = crate::mvcc::prop_of(&r.props, *k).cloned();
                            format!("`{n}` = {}", fmt_value(&v.unwrap_or(Value::Null)))
                        })
                        .collect();
                    let what = if ks.len() == 1 {
                        format!("property {}", vals[0])
                    } else {
                        format!("properties {}", vals.join(", "))
                    };
                    return Err(fail(format!(
                        "Both Relationship({other}) and Relationship({id}) have the type `{tn}` \
                         and {what}. Note that only the first found violation is shown."
                    )));
                }
            }
        }
        Ok(())
    }

    /// A rule's schema as Neo4j prints it in messages: `(:L {a, b})` or `()-[:T {a}]-()`.
    fn schema_text(&self, rel: bool, label: u32, keys: &[u32]) -> String {
        let t = self.tokens.read();
        let kind = if rel { TokenKind::RelType } else { TokenKind::Label };
        let l = t.name(kind, label).map(|s| s.to_string()).unwrap_or_default();
        let ks: Vec<String> = keys
            .iter()
            .map(|k| t.name(TokenKind::PropertyKey, *k).map(|s| s.to_string()).unwrap_or_default())
            .collect();
        if rel {
            format!("()-[:{l} {{{}}}]-()", ks.join(", "))
        } else {
            format!("(:{l} {{{}}})", ks.join(", "))
        }
    }

    /// Whether any node (base or delta) may carry `label`.
    fn has_label_rows(&self, label: u32) -> bool {
        self.base().next_with_label(label, 0).is_some()
            || self.label_sets.read().get(&label).is_some_and(|s| !s.is_empty())
    }

    /// Writes a schema record (`body`) at the next commit ts; the receiver acknowledges its
    /// durability (`None` for an in-memory store). Caller holds the commit mutex.
    fn log_schema(
        &self,
        cs: &mut CommitState,
        body: Enc,
    ) -> Result<Option<crossbeam_channel::Receiver<Result<()>>>> {
        let ts = cs.next_ts;
        cs.next_ts += 1;
        cs.last_schema_ts = ts;
        if self.persist.is_none() {
            self.clock.publish(ts);
            return Ok(None);
        }
        let header = self.record_header(cs, ts);
        let Some(w) = &cs.wal else {
            return Err(Error::new(Status::Io, "the log writer has stopped"));
        };
        let (atx, arx) = crossbeam_channel::bounded(1);
        if w.send(WalMsg::Commit { ts, header, body: body.buf, ack: Some(atx) }).is_err() {
            self.clock.fail("the log writer has stopped".into());
            return Err(Error::new(Status::Io, "the log writer has stopped"));
        }
        // A schema change is in force from the moment its ts is assigned: visible once durable.
        self.clock.applied(ts);
        Ok(Some(arx))
    }

    /// The final uniqueness check of a constraint being created (see
    /// `Store::finish_constraint`): every key its complete index holds for more than one
    /// entity is re-checked against the newest committed states; a real duplicate gets the
    /// full check's error (naming both). Caller holds the commit mutex.
    fn recheck_unique(&self, def: &IndexDef) -> Result<()> {
        let t = def.target();
        if !def.rel && self.base().indexes(&t) {
            // A base built meanwhile took over part of the entries: check everything.
            return self.check_rule_data(def.label, &def.keys, def.kind, &def.name);
        }
        let shared: Vec<(IndexKey, Vec<u64>)> = {
            let s = self.schema.read();
            let map = if def.rel { s.rel_maps.get(&t) } else { s.maps.get(&t) };
            map.map(|m| {
                m.iter()
                    .filter(|(_, ids)| !matches!(ids, IdSet::Small(v) if v.len() < 2))
                    .map(|(k, ids)| (k.clone(), ids.to_vec()))
                    .collect()
            })
            .unwrap_or_default()
        };
        for (k, ids) in shared {
            let holders = ids
                .iter()
                .filter(|id| {
                    let key = if def.rel {
                        self.rel_newest_data(**id).and_then(|r| r.key_for(def.label, &def.keys))
                    } else {
                        self.node_newest(**id).1.and_then(|n| n.key_for(def.label, &def.keys))
                    };
                    key.as_ref() == Some(&k)
                })
                .count();
            if holders > 1 {
                return if def.rel {
                    self.check_rel_rule_data(def.label, &def.keys, def.kind, &def.name)
                } else {
                    self.check_rule_data(def.label, &def.keys, def.kind, &def.name)
                };
            }
        }
        Ok(())
    }

    /// Whether any relationship (base or delta) may have type `ty`.
    fn has_type_rows(&self, ty: u32) -> bool {
        self.base().next_rel_of_types(&[ty], 0).is_some()
            || self.type_sets.read().get(&ty).is_some_and(|s| !s.is_empty())
    }

    /// Fills a background index with the rows that existed when it was created (commits since
    /// add their own entries), then marks it online. Runs as a registered reader, so the
    /// versions and base it scans stay until it finishes; entries are a superset that seeks
    /// re-check, so racing with commits and GC is harmless. Stops early if the rule is dropped.
    /// `rel`: a relationship index on `(type, keys)`.
    pub(crate) fn populate(&self, target: &Target, progress: &Arc<Progress>, rel: bool) {
        let (ts, base) = self.register();
        let key = target.0;
        // Every candidate id: the delta's members of the label/type, then the base's.
        let mut ids: Vec<u64> = if rel { self.type_sets.read() } else { self.label_sets.read() }
            .get(&key)
            .map(|s| s.iter().collect())
            .unwrap_or_default();
        let mut cur = 0;
        loop {
            let next = if rel {
                base.next_rel_of_types(&[key], cur)
            } else {
                base.next_with_label(key, cur)
            };
            let Some(id) = next else { break };
            ids.push(id);
            cur = id + 1;
        }
        ids.sort_unstable();
        ids.dedup();
        progress.total.store(ids.len() as u64, Ordering::Release);
        let alive = || self.schema.read().defs.iter().any(|d| Arc::ptr_eq(&d.progress, progress));
        let mut entries: Vec<(IndexKey, u64)> = Vec::new();
        for chunk in ids.chunks(4096) {
            if !alive() {
                break;
            }
            entries.clear();
            for &id in chunk {
                // The base row's key and each retained delta version's.
                let mut add = |k: Option<IndexKey>| {
                    if let Some(k) = k {
                        entries.push((k, id));
                    }
                };
                if rel {
                    add(base.rel(id).and_then(|r| r.to_data().key_for(key, &target.1)));
                    self.rels.read(id, |s| {
                        for d in s.chain.iter().filter_map(|(_, d)| d.as_ref()) {
                            add(d.key_for(key, &target.1));
                        }
                    });
                } else {
                    add(base.node(id).and_then(|n| n.key_for(key, &target.1)));
                    self.nodes.read(id, |s| {
                        for d in s.chain.iter().filter_map(|(_, d)| d.as_ref()) {
                            add(d.key_for(key, &target.1));
                        }
                    });
                }
            }
            {
                let mut s = self.schema.write();
                for (k, id) in entries.drain(..) {
                    if rel {
                        s.rel_entry(target, k, id, true);
                    } else {
                        s.insert_entry(target, k, id);
                    }
                }
            }
            progress.done.fetch_add(chunk.len() as u64, Ordering::AcqRel);
        }
        progress.online.store(true, Ordering::Release);
        self.unregister(ts, base.ts);
    }

    /// See [`Store::await_indexes`].
    pub(crate) fn await_indexes(&self, name: Option<&str>, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let pending: Vec<String> = {
                let s = self.schema.read();
                if let Some(n) = name {
                    if !s.defs.iter().any(|d| d.name == n && d.kind.has_index()) {
                        return Err(Error::argument(format!("No such index '{n}'")));
                    }
                }
                s.defs
                    .iter()
                    .filter(|d| name.is_none_or(|n| d.name == n) && !d.progress.is_online())
                    .map(|d| d.name.clone())
                    .collect()
            };
            if pending.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::argument(format!(
                    "Timed out after {}s waiting for index population: {}",
                    timeout.as_secs_f64(),
                    pending.join(", ")
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Fails with `ConstraintCreationFailed` if the newest committed state violates the rule
    /// about to be created (two nodes sharing a unique key, a node lacking a required key).
    fn check_rule_data(&self, label: u32, keys: &[u32], kind: IndexKind, name: &str) -> Result<()> {
        if !kind.is_constraint() {
            return Ok(());
        }
        let mut ids: Vec<u64> =
            self.label_sets.read().get(&label).map(|s| s.iter().collect()).unwrap_or_default();
        let base = self.base();
        let mut cur = 0;
        while let Some(id) = base.next_with_label(label, cur) {
            ids.push(id);
            cur = id + 1;
        }
        ids.sort_unstable();
        ids.dedup();
        let (l, ks) = {
            let t = self.tokens.read();
            let l = t.name(TokenKind::Label, label).map(|s| s.to_string()).unwrap_or_default();
            let ks: Vec<String> = keys
                .iter()
                .map(|k| {
                    t.name(TokenKind::PropertyKey, *k).map(|s| s.to_string()).unwrap_or_default()
                })
                .collect();
            (l, ks)
        };
        let schema_text = if ks.len() == 1 {
            format!("(:{l} {{{}}})", ks[0])
        } else {
            format!("(:{l} {{{}}})", ks.join(", "))
        };
        let fail = |detail: String| {
            Error::new(
                Status::ConstraintCreationFailed,
                format!(
                    "Unable to create Constraint( name='{name}', type='{}', schema={schema_text} ): \
                     {detail}",
                    kind.type_name()
                ),
            )
        };
        let mut seen: HashMap<IndexKey, u64> = HashMap::new();
        for id in ids {
            let Some(d) = self.node_newest(id).1 else { continue };
            if !d.has_label(label) {
                continue;
            }
            if kind.requires() {
                if let Some(i) = keys.iter().position(|k| d.prop(*k).is_none()) {
                    return Err(fail(format!(
                        "Node({id}) with label `{l}` must have the property `{}`",
                        ks[i]
                    )));
                }
            }
            if kind.unique() {
                let Some(k) = d.key_for(label, keys) else { continue };
                if let Some(other) = seen.insert(k, id) {
                    let vals: Vec<String> = keys
                        .iter()
                        .zip(&ks)
                        .map(|(k, n)| {
                            format!(
                                "`{n}` = {}",
                                fmt_value(&d.prop(*k).cloned().unwrap_or(Value::Null))
                            )
                        })
                        .collect();
                    let what = if ks.len() == 1 {
                        format!("property {}", vals[0])
                    } else {
                        format!("properties {}", vals.join(", "))
                    };
                    return Err(fail(format!(
                        "Both Node({other}) and Node({id}) have the label `{l}` and {what}"
                    )));
                }
            }
        }
        Ok(())
    }
}
