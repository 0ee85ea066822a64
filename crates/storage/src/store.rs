//! The [`Store`] handle: opening (with recovery) or creating an in-memory store, schema
//! operations, checkpoints, background maintenance and shutdown.

use std::any::Any;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status};
use crossbeam_channel::{RecvTimeoutError, Sender};
use parking_lot::Mutex;

use crate::base::BaseStats;
use crate::codec::Enc;
use crate::durability::checkpoint;
use crate::durability::persist::Persist;
use crate::durability::recovery::recover;
use crate::durability::snapshot::{BackupSnapshot, Since};
use crate::durability::wal::{io_err, WalShared};
use crate::durability::wal_group;
use crate::durability::warm_pool::{self, WarmUp};
use crate::durability::{populate_replayed, promote, resync};
use crate::mvcc::Core;
use crate::mvcc::Transaction;
use crate::pager::Pager;
use crate::schema::{
    check_rule_keys, default_name, shares_index_type, IndexDef, IndexInfo, IndexKind, Progress,
    PropertyTypes, Target,
};
use crate::types::{Durability, StoreConfig, TokenId, TokenKind};
use crate::vfs::{RealFs, StickyDirSync, Vfs};

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

/// A graph store. Cheap to clone (all clones share one store); `Send + Sync`. The store is
/// closed (checkpoint, threads stopped) by [`Store::close`] or when the last clone is dropped.
#[derive(Clone)]
pub struct Store {
    h: Arc<Handle>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir = self.h.persist.as_ref().map(|p| p.dir.clone());
        f.debug_struct("Store")
            .field("dir", &dir)
            .field("last_commit_ts", &self.last_commit_ts())
            .finish()
    }
}

struct Handle {
    core: Arc<Core>,
    /// File-backed configuration and state (`None` for an in-memory store).
    persist: Option<Arc<Persist>>,
    life: Mutex<Life>,
    /// Whether a commit observer may be installed ([`Store::set_commit_observer`]).
    observed: AtomicBool,
}

struct Life {
    writer: Option<JoinHandle<()>>,
    /// The promotion of the lazily opened base (`durability/promote.rs`) and its stop flag.
    promote: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
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
        let core = Arc::new(Core::new(false));
        let background = spawn_background(core.clone(), None);
        Store {
            h: Arc::new(Handle {
                core,
                persist: None,
                life: Mutex::new(Life {
                    writer: None,
                    promote: None,
                    background,
                    lock_file: None,
                    stopped: false,
                }),
                observed: AtomicBool::new(false),
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
        crate::durability::bulk::refuse_incomplete(dir)?;
        let shared = Arc::new(WalShared::default());
        let persist = Persist {
            vfs: vfs.clone(),
            read_only: false,
            dir: dir.to_path_buf(),
            config: config.clone(),
            wal: shared.clone(),
            checkpoint_lock: Mutex::new(0),
            last_checkpoint_at: Mutex::new(Instant::now()),
            recovery_checkpoint: AtomicBool::new(false),
            pager: Pager::new(vfs.clone(), dir, config.memory_limit)?,
            backup_marks: Default::default(),
            promote_lock: Mutex::new(()),
        };
        let persist = Arc::new(persist);
        let core = Arc::new(Core::new(true));
        core.set_index_budget(persist.pager.pool.budget(), Some(dir.to_path_buf()));
        checkpoint::remove_tmp_files(&*vfs, dir);
        let rec = recover(&core, Some(&persist), &*vfs, dir, true)?;
        let next_ts = rec.next_ts;
        if rec.replayed && config.durability != Durability::Off {
            // The replayed records must be durable before commits build on them (see
            // `resync.rs`): the log tail is written again and fsynced (O(tail)), and the
            // maintenance thread checkpoints them (O(store)) once the store is open.
            let segments = persist.wal.segments.lock().clone();
            if let Err(e) = resync::rewrite_tail(&*vfs, dir, &segments, rec.checkpoint_ts)? {
                // Opening must not need new space (the disk may be full): the replayed state is
                // readable now, and commits, which would build on it, wait until the
                // maintenance thread has taken the checkpoint.
                tracing::warn!("the replayed log could not be made durable, checkpointing: {e}");
                core.clock().pause(format!("the checkpoint after recovery is pending ({e})"));
            }
            persist.recovery_checkpoint.store(true, Ordering::Release);
        }
        let (sender, writer) = wal_group::start(
            vfs.clone(),
            dir,
            config.durability,
            config.wal_segment_bytes,
            next_ts,
            shared,
            core.clock().clone(),
        )?;
        core.lock_commit().sink = Some(Box::new(sender));
        let background = spawn_background(core.clone(), Some(persist.clone()));
        core.keep_vector_files(vfs.clone(), dir);
        core.start_vector_builds();
        let promote =
            config.promote_at_open.then(|| promote::start(&core, &persist, true)).flatten();
        // Last: while uniqueness rules fill, the commit mutex is held.
        populate_replayed::start(&core, rec.populate)?;
        Ok(Store {
            h: Arc::new(Handle {
                core,
                persist: Some(persist),
                life: Mutex::new(Life {
                    writer: Some(writer),
                    promote,
                    background,
                    lock_file,
                    stopped: false,
                }),
                observed: AtomicBool::new(false),
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
        crate::durability::bulk::refuse_incomplete(dir)?;
        let persist = Persist {
            vfs: vfs.clone(),
            read_only: true,
            dir: dir.to_path_buf(),
            config: StoreConfig::default(),
            wal: Arc::new(WalShared::default()),
            checkpoint_lock: Mutex::new(0),
            last_checkpoint_at: Mutex::new(Instant::now()),
            recovery_checkpoint: AtomicBool::new(false),
            pager: Pager::new(vfs.clone(), dir, None)?,
            backup_marks: Default::default(),
            promote_lock: Mutex::new(()),
        };
        let persist = Arc::new(persist);
        let core = Arc::new(Core::new(true));
        let rec = recover(&core, Some(&persist), &*vfs, dir, false)?;
        // Nothing commits here: the replayed rules are filled before the open returns.
        for d in &rec.populate {
            core.populate(&d.target(), &d.progress, d.rel);
        }
        if StoreConfig::default().promote_at_open {
            promote::start(&core, &persist, false);
        }
        core.lock_commit().closed = true;
        Ok(Store {
            h: Arc::new(Handle {
                core,
                persist: Some(persist),
                life: Mutex::new(Life {
                    writer: None,
                    promote: None,
                    background: None,
                    lock_file,
                    stopped: false,
                }),
                observed: AtomicBool::new(false),
            }),
        })
    }

    /// Starts a transaction on the newest visible snapshot.
    pub fn begin(&self, read_only: bool) -> Transaction {
        Transaction::new(self.h.core.clone(), read_only)
    }

    // ---------------------------------------------------------------- tokens

    pub fn token_id(&self, kind: TokenKind, name: &str) -> Option<TokenId> {
        self.h.core.tokens().read().get(kind, name)
    }

    pub fn token_name(&self, kind: TokenKind, id: TokenId) -> Option<String> {
        self.h.core.tokens().read().name(kind, id).map(|n| n.to_string())
    }

    pub fn get_or_create_token(&self, kind: TokenKind, name: &str) -> Result<TokenId> {
        if let Some(id) = self.token_id(kind, name) {
            return Ok(id);
        }
        self.h.core.tokens().write().create(kind, name)
    }

    pub fn tokens(&self, kind: TokenKind) -> Vec<(TokenId, String)> {
        let t = self.h.core.tokens().read();
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
        check_rule_keys(kind, keys)?;
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

    /// Creates a constraint of `kind` (uniqueness, key, existence or property type: `keys` then
    /// holds the property and the types' bits), or a TEXT/POINT index, on relationships of type
    /// `ty` and one or more property `keys` (existence, TEXT, POINT: exactly one). Uniqueness and key
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
        if kind == IndexKind::Range {
            return self.create_rel_index(ty, keys, name);
        }
        check_rule_keys(kind, keys)?;
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label: ty,
            keys: keys.to_vec(),
            kind,
            rel: true,
        })
    }

    /// Creates a POINT index on `owner` (a label; with `rel` a relationship type) and `key`,
    /// with `settings` ([`crate::schema::POINT_SETTINGS`] values, as [`IndexInfo::point_config`]
    /// lists them) or Neo4j's defaults. The settings are kept and listed; the index itself
    /// covers every point whatever its bounds. `false` if an equivalent index exists.
    pub fn create_point_index(
        &self,
        rel: bool,
        owner: TokenId,
        key: TokenId,
        name: Option<&str>,
        settings: Option<&[f64]>,
    ) -> Result<bool> {
        let mut keys = vec![key];
        if let Some(s) = settings {
            if s.len() != crate::schema::POINT_SETTINGS || s.iter().any(|v| !v.is_finite()) {
                return Err(Error::argument("a POINT index takes 20 finite settings"));
            }
            keys.extend(crate::schema::point_config_words(s));
        }
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label: owner,
            keys,
            kind: IndexKind::Point,
            rel,
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
        check_rule_keys(IndexKind::Range, keys)?;
        self.schema_change(SchemaChange::Create {
            name: name.map(str::to_string),
            label: ty,
            keys: keys.to_vec(),
            kind: IndexKind::Range,
            rel: true,
        })
    }

    /// Creates a vector index on `owner` (a label; with `rel` a relationship type) and
    /// `property`. Its ANN structure is built in the background (`POPULATING`, then
    /// `ONLINE`); queries scan exactly until then. `false` if an equivalent index of that name
    /// exists; another index of the name, or another vector index on the same property, is an
    /// error.
    pub fn create_vector_index(
        &self,
        name: Option<&str>,
        rel: bool,
        owner: TokenId,
        property: TokenId,
        settings: crate::vector::VectorSettings,
    ) -> Result<bool> {
        self.h.core.create_vector_rule(name, rel, owner, property, settings)
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
        self.h.core.schema().read().list()
    }

    fn schema_change(&self, change: SchemaChange) -> Result<bool> {
        let core = &self.h.core;
        // A plain index on existing data is filled in the background after the commit.
        let mut populate: Option<(Target, Arc<Progress>, bool)> = None;
        // A constraint installed but not yet validated nor logged.
        let mut validate: Option<IndexDef> = None;
        let ack = 'locked: {
            let mut cs = core.lock_commit();
            core.clock().check()?;
            if cs.closed {
                return Err(Error::new(Status::Io, "the store is closed"));
            }
            let mut body = Enc::new();
            match change {
                SchemaChange::Create { name, label, keys, kind, rel } => {
                    // A POINT index's settings ride after its key (`IndexDef::from_logged`).
                    let logged = keys.clone();
                    let keys = if kind == IndexKind::Point { keys[..1].to_vec() } else { keys };
                    let name = name.unwrap_or_else(|| default_name(kind, rel, label, &keys));
                    if existing_rule(core, &name, label, &keys, kind, rel)? {
                        return Ok(false);
                    }
                    if kind.is_constraint() {
                        // Validated against the data after the mutex is released (see
                        // `finish_constraint`); enforced on commits from now on.
                        let progress = if kind.has_index() {
                            Arc::new(Progress::default())
                        } else {
                            Progress::online()
                        };
                        let config = Vec::new();
                        let def =
                            IndexDef { name, label, keys, kind, since: 0, progress, rel, config };
                        core.schema().write().pending.insert(def.name.clone());
                        core.install_index_with(&mut cs, def.clone(), false);
                        validate = Some(def);
                        break 'locked None;
                    }
                    body.op_create_rule(&name, kind, rel, label, &logged);
                    // Constraints must see all data before they exist; indexes need not.
                    let background = kind.has_index()
                        && if rel { core.has_type_rows(label) } else { core.has_label_rows(label) };
                    let progress =
                        if background { Arc::new(Progress::default()) } else { Progress::online() };
                    let def = IndexDef::from_logged(name, label, logged, kind, rel, progress);
                    if background {
                        populate = Some((def.target(), def.progress.clone(), rel));
                    }
                    core.install_index_with(&mut cs, def, !background);
                }
                SchemaChange::Drop { name, constraint } => {
                    let mut s = core.schema().write();
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
        if let Some(ticket) = ack {
            ticket.wait()?;
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
            let mut cs = core.lock_commit();
            let present = core
                .schema()
                .read()
                .defs
                .iter()
                .any(|d| d.name == def.name && Arc::ptr_eq(&d.progress, &def.progress));
            if !present {
                core.schema().write().pending.remove(&def.name);
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
            if let Err(e) = result.and_then(|()| core.clock().check()) {
                let mut s = core.schema().write();
                s.pending.remove(&def.name);
                s.drop_def(&def.name);
                return Err(e);
            }
            if cs.closed {
                return Err(Error::new(Status::Io, "the store is closed"));
            }
            let mut body = Enc::new();
            body.op_create_rule(&def.name, def.kind, def.rel, def.label, &def.logged_keys());
            // The part file its population wrote is named in the same record.
            core.append_part_attach(&cs, &def.name, &mut body);
            core.schema().write().pending.remove(&def.name);
            core.log_schema(&mut cs, body)?
        };
        if let Some(ticket) = ack {
            ticket.wait()?;
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
        checkpoint::checkpoint(&self.h.core, self.h.persist.as_deref()).map(|_| ())
    }

    /// Rebuilds the compact base from the current state and folds the delta (versions written
    /// since the last rebuild) into it, without blocking readers or writers for the build. A
    /// file-backed store does this at every checkpoint; the background thread also does it when
    /// the delta grows large. Returns whether a new base was built.
    pub fn compact(&self) -> Result<bool> {
        checkpoint::compact(&self.h.core)
    }

    /// Promotes the base the store opened lazily (every large column read through the page
    /// cache) now: the parts that fit their share of the memory limit are read into memory
    /// and new transactions read them there (`durability/promote.rs`; a file-backed store
    /// also does this in the background after it opens). Returns whether the base changed;
    /// `false` when nothing more fits, a checkpoint already replaced the base, or the store
    /// has no files.
    pub fn warm_base(&self) -> Result<bool> {
        let Some(p) = &self.h.persist else { return Ok(false) };
        promote::promote(&self.h.core, p, &AtomicBool::new(false))
    }

    /// Warms the store up within its memory limit (`durability/warm_pool.rs`): the promotion
    /// of [`Store::warm_base`], then the page cache filled with the pages of what stays paged,
    /// in query order, until it is full (without `props`, leaving out the property blobs'
    /// pages). An in-memory store reports its base's sizes.
    pub fn warm_up(&self, props: bool) -> Result<WarmUp> {
        match &self.h.persist {
            Some(p) => warm_pool::warm_up(&self.h.core, p, props),
            None => {
                let s = self.h.core.base().stats().clone();
                let in_memory = [
                    s.node_bytes,
                    s.index_bytes,
                    s.rel_bytes,
                    s.node_property_bytes,
                    s.rel_property_bytes,
                ];
                Ok(WarmUp { in_memory, ..WarmUp::default() })
            }
        }
    }

    /// Sizes of the compact base (built at the last checkpoint, compaction or recovery) and the
    /// number of delta entries on top of it.
    pub fn memory_stats(&self) -> MemoryStats {
        let core = &self.h.core;
        let base = core.base();
        let mut stats = base.stats().clone();
        stats.index_bytes += base.ordered_bytes() + base.int_column_bytes();
        // Index parts built over the base since (`Schema::parts`).
        let parts: usize = core.schema().read().parts.values().map(|p| p.bytes()).sum();
        stats.index_bytes += parts as u64;
        MemoryStats {
            base_ts: base.ts,
            base: stats,
            delta_nodes: core.delta_len().0 as u64,
            delta_rels: core.delta_len().1 as u64,
        }
    }

    /// Verifies checksums of the checkpoint and WAL files and the internal consistency of the
    /// current snapshot (adjacency symmetry, counts, indexes); for `arbor check`. Runs online
    /// (a read-only snapshot; checkpoints wait while the files are read). `Err` only for I/O
    /// errors that stop the check itself; inconsistencies are listed in the report.
    /// The page cache's counters (`None` for an in-memory store).
    pub fn page_cache_stats(&self) -> Option<crate::PoolStats> {
        self.h.persist.as_ref().map(|p| p.pager.pool.stats())
    }

    pub fn check(&self) -> Result<arbor_model::CheckReport> {
        crate::durability::check::check(&self.h.core, self.h.persist.as_deref())
    }

    /// Prunes versions no live transaction can see (also done in the background).
    pub fn gc(&self) {
        let mut cs = self.h.core.lock_commit();
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
        self.h.persist.as_ref().map_or(0, |p| p.wal.syncs.load(Ordering::Relaxed))
    }

    /// [backup hook] Pins the files that hold exactly the newest visible commit, for a backup
    /// (see `durability/snapshot.rs`); `extras` are other files of the directory copied whole.
    /// In-memory stores have nothing to back up.
    pub fn backup_snapshot(&self, since: Option<Since>, extras: &[&str]) -> Result<BackupSnapshot> {
        let Some(p) = &self.h.persist else {
            return Err(Error::new(
                Status::ProcedureCallFailed,
                "an in-memory store has no files to back up",
            ));
        };
        crate::durability::snapshot::pin(&self.h.core, p, since, extras)
    }

    /// The newest commit ts visible to new transactions (a bookmark value).
    pub fn last_commit_ts(&self) -> u64 {
        self.h.core.clock().visible()
    }

    /// Waits until commit `ts` is visible to new transactions; `false` on timeout.
    pub fn wait_for_commit(&self, ts: u64, timeout: Duration) -> bool {
        self.h.core.clock().wait_for(ts, timeout)
    }

    #[cfg(test)]
    pub(crate) fn core_for_test(&self) -> &Arc<Core> {
        &self.h.core
    }

    #[cfg(test)]
    pub(crate) fn persist_for_test(&self) -> &Option<Arc<Persist>> {
        &self.h.persist
    }

    /// Installs (or with `None` removes) the observer that sees every later commit's new
    /// versions. Returns the last commit timestamp assigned before it was installed: every
    /// commit after that one reaches the observer (wait for it with [`Store::wait_for_commit`]
    /// before reading a snapshot that must not miss any).
    pub fn set_commit_observer(&self, observer: Option<Arc<dyn crate::CommitObserver>>) -> u64 {
        let install = observer.is_some();
        if !install && !self.h.observed.load(Ordering::Acquire) {
            // Nothing to remove: no commit mutex, which the filling of replayed uniqueness
            // rules holds for a while after the open (`durability/populate_replayed.rs`) while
            // the database opening on this store removes the observer it does not need.
            return self.h.core.clock().visible();
        }
        if install {
            self.h.observed.store(true, Ordering::Release);
        }
        let last = self.h.core.set_observer(observer);
        if !install {
            self.h.observed.store(false, Ordering::Release);
        }
        last
    }

    /// Whether this store writes files.
    pub fn is_persistent(&self) -> bool {
        self.h.persist.is_some()
    }
}

impl Handle {
    fn shutdown(&self, take_checkpoint: bool) -> Result<()> {
        let mut life = self.life.lock();
        if life.stopped {
            return Ok(());
        }
        life.stopped = true;
        if let Some((stop, _detached)) = life.promote.take() {
            // Not joined: a promotion of a large store may be seconds from its next check.
            stop.store(true, Ordering::Release);
        }
        if let Some((stop, thread)) = life.background.take() {
            drop(stop);
            let _ = thread.join();
        }
        let mut res = Ok(());
        let writable = self.persist.as_ref().is_some_and(|p| !p.read_only);
        if take_checkpoint && writable && self.core.clock().check().is_ok() {
            res =
                checkpoint::checkpoint_with(&self.core, self.persist.as_deref(), false).map(|_| ());
        }
        let sink = {
            let mut cs = self.core.lock_commit();
            cs.closed = true;
            cs.sink.take()
        };
        // A population still running writes no part file into the closed store.
        self.core.set_part_store(None);
        if let Some(sink) = sink {
            res = res.and(sink.stop());
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

fn spawn_background(
    core: Arc<Core>,
    persist: Option<Arc<Persist>>,
) -> Option<(Sender<()>, JoinHandle<()>)> {
    let (tx, rx) = crossbeam_channel::bounded::<()>(1);
    let t = std::thread::Builder::new()
        .name("arbor-maintenance".into())
        .spawn(move || {
            let mut quiet = crate::release::Quiet::new();
            loop {
                match rx.recv_timeout(MAINTENANCE_EVERY) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                let before = core.lock_commit().delta_versions;
                // GC in bounded steps, releasing the commit mutex in between so commits go on
                // (a fold queues the whole delta at once); a bounded number of steps per round.
                for _ in 0..GC_STEPS_PER_ROUND {
                    let mut cs = core.lock_commit();
                    if !core.gc_some(&mut cs, GC_STEP) {
                        break;
                    }
                }
                let quiet_for = quiet.observe(core.write_progress(), core.delta_reads());
                let is_quiet = quiet_for >= crate::release::QUIET_AFTER;
                let (delta_big, delta, base_entities) = {
                    let cs = core.lock_commit();
                    let base = core.base();
                    let s = base.stats();
                    let entities = s.nodes + s.relationships;
                    let big =
                        cs.delta_versions > COMPACT_MIN_DELTA.max(entities / COMPACT_DELTA_SHARE);
                    (big, cs.delta_versions, entities)
                };
                if delta < before {
                    quiet.freed();
                }
                quiet.release(is_quiet);
                // Once writes stop, a leftover delta is folded too, sooner where scans keep
                // reading it (see release.rs).
                let delta_big = delta_big || quiet.should_fold(quiet_for, delta, base_entities);
                let Some(p) = &persist else {
                    if delta_big {
                        if let Err(e) = checkpoint::compact(&core) {
                            tracing::warn!("background compaction failed: {e}");
                        }
                    }
                    continue;
                };
                if p.recovery_checkpoint.load(Ordering::Acquire) {
                    retry_recovery_checkpoint(&core, p);
                    continue;
                }
                let due = p.last_checkpoint_at.lock().elapsed() >= p.config.checkpoint_interval
                    || p.wal.bytes_since_checkpoint.load(Ordering::Relaxed)
                        >= p.config.checkpoint_wal_bytes;
                if due && core.clock().check().is_ok() {
                    if let Err(e) = checkpoint::checkpoint(&core, Some(p)) {
                        tracing::warn!("background checkpoint failed: {e}");
                        *p.last_checkpoint_at.lock() = Instant::now();
                    }
                } else if delta_big && !p.read_only && core.clock().check().is_ok() {
                    // A large delta only needs folding into a new base: the WAL keeps it durable
                    // and the log-size / interval triggers bound recovery. Writing a checkpoint
                    // file for every fold cost a bulk load (1,000,000 nodes into an empty store:
                    // four folds) the encoding, a file of the whole graph each time and its
                    // fsync, which competed with the commits' own fsyncs on the same disk.
                    if let Err(e) = checkpoint::compact(&core) {
                        tracing::warn!("background compaction failed: {e}");
                    }
                }
            }
        })
        .ok()?;
    Some((tx, t))
}

/// How often the maintenance thread retries a checkpoint that recovery could not take.
const RECOVERY_CHECKPOINT_RETRY: Duration = Duration::from_millis(500);

/// Takes the checkpoint of what recovery replayed (see [`Store::open_with_vfs`]), retrying
/// it after a failure; once it is durable, commits are accepted if they were refused.
fn retry_recovery_checkpoint(core: &Arc<Core>, p: &Persist) {
    if p.last_checkpoint_at.lock().elapsed() < RECOVERY_CHECKPOINT_RETRY {
        return;
    }
    match checkpoint::checkpoint_with(core, Some(p), false) {
        Ok(_) => {
            p.recovery_checkpoint.store(false, Ordering::Release);
            tracing::info!("the checkpoint after recovery is written");
            core.clock().resume();
        }
        Err(e) => {
            tracing::debug!("the checkpoint after recovery failed again: {e}");
            *p.last_checkpoint_at.lock() = Instant::now();
        }
    }
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

/// Checks a new rule against the existing ones under Neo4j's rules: `Ok(true)` when an
/// equivalent rule exists already (nothing to do), an error when one conflicts with it.
fn existing_rule(
    core: &Core,
    name: &str,
    label: u32,
    keys: &[u32],
    kind: IndexKind,
    rel: bool,
) -> Result<bool> {
    let s = core.schema().read();
    if let Some(d) = s.defs.iter().find(|d| d.name == name) {
        if d.label == label && d.keys == keys && d.kind == kind && d.rel == rel {
            return Ok(true);
        }
        return Err(Error::argument(format!(
            "There already exists an index or constraint called '{name}'."
        )));
    }
    let same = |d: &&IndexDef| d.rel == rel && d.label == label && d.keys == keys;
    let props = if kind == IndexKind::PropertyType { &keys[..1] } else { keys };
    let schema_text = || core.schema_text(rel, label, props);
    if let Some(d) = s.defs.iter().find(|d| {
        kind == IndexKind::PropertyType
            && d.kind == kind
            && d.rel == rel
            && d.label == label
            && d.keys[0] == keys[0]
            && d.keys != keys
    }) {
        return Err(Error::new(
            Status::ConstraintAlreadyExists,
            format!(
                "Conflicting constraint already exists: Constraint( name='{}', \
                     type='{}', schema={}, propertyType={} )",
                d.name,
                if rel { "RELATIONSHIP PROPERTY TYPE" } else { "NODE PROPERTY TYPE" },
                schema_text(),
                PropertyTypes(d.keys[1]).name()
            ),
        ));
    }
    // Neo4j's rules: one index-backed rule per schema. An index next to a
    // uniqueness/key constraint, a second index, a constraint next to an
    // index, a key next to a uniqueness constraint (and the reverse) are
    // refused; only the same kind under another name is "equivalent"
    // (`true`: the caller decides whether IF NOT EXISTS allows it).
    for d in s.defs.iter().filter(same) {
        match (kind, d.kind) {
            (k, o) if k == o => return Ok(true),
            // Rules of other index types (or none) live side by side.
            (k, o) if !shares_index_type(k, o) => {}
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
    Ok(false)
}
