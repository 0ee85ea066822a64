//! Vector indexes on the shared state: creating a rule, building its ANN structure in the
//! background from a snapshot, and maintaining it at commit with the commit timestamp.
//!
//! The build never blocks commits for long: under the commit mutex the index is switched to
//! `Building` (from then on every commit queues its changes), the builder reads a snapshot that
//! holds every commit before the switch and links the vectors on all threads without any lock,
//! then, under the mutex again, replays the queued changes in commit order and publishes the
//! index as `Ready` for snapshots from that point on. Replaying a change the snapshot already
//! holds is harmless (the same vector replaces itself; a delete of an absent entry does
//! nothing), so the snapshot may be newer than the switch.
//!
//! In a file-backed store the build starts from the index's ANN file when there is one and
//! only links the vectors that changed since (`crate::vector::AnnFiles`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_model::{Error, NodeId, RelId, Result, Status};
use arbor_vector::{IndexBuilder, VectorIndex};

use super::state::{CommitState, Core};
use super::tx::Transaction;
use crate::codec::Enc;
use crate::records::{prop_of, NodeData, RelData};
use crate::schema::{default_name, IndexDef, IndexKind, Progress};
use crate::vector::{Ann, AnnFiles, Change, VectorSettings, VectorState};

/// Vectors the builder collects between progress updates.
const BUILD_CHUNK: u64 = 4096;
/// New vectors in one commit from which they are linked on all threads.
const BATCH_INSERT: usize = 64;
/// Commits between collections of entries no snapshot can see any more.
const GC_EVERY: u64 = 1024;

impl Core {
    /// Installs a vector rule and its (idle) state. Caller holds the commit mutex.
    pub(crate) fn install_vector(&self, mut def: IndexDef) {
        let Some((property, settings)) = VectorSettings::from_keys(&def.keys) else {
            // Malformed keys cannot come from this code; the rule is kept and lists as it is.
            tracing::error!("vector index `{}` has malformed settings {:?}", def.name, def.keys);
            return;
        };
        if settings.dimensions.is_none() {
            // Nothing to build: queries scan.
            def.progress.online.store(true, std::sync::atomic::Ordering::Release);
        }
        let state = Arc::new(VectorState {
            name: def.name.clone(),
            rel: def.rel,
            owner: def.label,
            property,
            settings,
            progress: def.progress.clone(),
            ann: parking_lot::RwLock::new(Ann::Idle),
        });
        let mut s = self.schema.write();
        s.version += 1;
        def.since = s.version;
        s.vectors.insert(state);
        s.defs.push(def);
    }

    /// Creates a vector rule (logged like every schema rule) and starts building it. `false`
    /// (nothing changed) when an equivalent rule of that name exists; another rule of the name,
    /// or another vector index on the same property, is an error, as in Neo4j.
    pub(crate) fn create_vector_rule(
        self: &Arc<Core>,
        name: Option<&str>,
        rel: bool,
        owner: u32,
        property: u32,
        settings: VectorSettings,
    ) -> Result<bool> {
        let keys = settings.to_keys(property);
        let name =
            name.map_or_else(|| default_name(IndexKind::Vector, rel, owner, &keys), str::to_string);
        let ack = {
            let mut cs = self.lock_commit();
            self.clock().check()?;
            if cs.closed {
                return Err(Error::new(Status::Io, "the store is closed"));
            }
            if self.check_new_vector_rule(&name, rel, owner, &keys)?.is_none() {
                return Ok(false);
            }
            let mut body = Enc::new();
            body.op_create_rule(&name, IndexKind::Vector, rel, owner, &keys);
            let progress = Arc::new(Progress::default());
            let def = IndexDef {
                name: name.clone(),
                label: owner,
                keys,
                kind: IndexKind::Vector,
                since: 0,
                progress,
                rel,
                config: Vec::new(),
            };
            self.install_index_with(&mut cs, def, true);
            self.log_schema(&mut cs, body)?
        };
        if let Some(ticket) = ack {
            ticket.wait()?;
        }
        self.start_vector_build(&name)?;
        Ok(true)
    }

    /// `Ok(None)` when an equivalent rule named `name` exists, `Ok(Some(()))` when the rule
    /// may be created. Caller holds the commit mutex.
    fn check_new_vector_rule(
        &self,
        name: &str,
        rel: bool,
        owner: u32,
        keys: &[u32],
    ) -> Result<Option<()>> {
        let s = self.schema.read();
        if let Some(d) = s.defs.iter().find(|d| d.name == name) {
            // Neo4j: the same name on the same schema is "equivalent", whatever the options.
            if d.kind == IndexKind::Vector
                && d.rel == rel
                && d.label == owner
                && d.keys[0] == keys[0]
            {
                return Ok(None);
            }
            return Err(Error::new(
                Status::IndexWithNameAlreadyExists,
                format!("There already exists an index called '{name}'."),
            ));
        }
        let same_property = |d: &&IndexDef| {
            d.kind == IndexKind::Vector
                && d.rel == rel
                && d.label == owner
                && d.keys[..1] == keys[..1]
        };
        if s.defs.iter().any(|d| same_property(&d)) {
            return Err(Error::new(
                Status::IndexAlreadyExists,
                format!(
                    "There already exists an index {}.",
                    self.schema_text(rel, owner, &keys[..1])
                ),
            ));
        }
        Ok(Some(()))
    }

    /// Starts the background build of the named index if it is idle and has dimensions: on
    /// this thread when there is nothing to read (so a rule on new data is online at once),
    /// else on its own thread.
    pub(crate) fn start_vector_build(self: &Arc<Core>, name: &str) -> Result<()> {
        let Some(state) = self.schema.read().vectors.get(name).cloned() else {
            return Ok(());
        };
        if state.settings.dimensions.is_none() || !matches!(*state.ann.read(), Ann::Idle) {
            return Ok(());
        }
        let has_rows = if state.rel {
            self.has_type_rows(state.owner)
        } else {
            self.has_label_rows(state.owner)
        };
        if !has_rows {
            self.build_vector(&state);
            return Ok(());
        }
        let core = self.clone();
        std::thread::Builder::new()
            .name("arbor-vector-index".into())
            .spawn(move || core.build_vector(&state))
            .map(|_| ())
            .map_err(|e| {
                Error::new(Status::Internal, format!("cannot start the vector index build: {e}"))
            })
    }

    /// Keeps built ANN structures in files under the store's directory `dir` from now on
    /// (a store opened for writing; see `crate::vector::AnnFiles`), and removes the files of
    /// indexes that no longer exist.
    pub(crate) fn keep_vector_files(&self, vfs: Arc<dyn crate::vfs::Vfs>, dir: &std::path::Path) {
        let files = Arc::new(AnnFiles::new(vfs, dir));
        let mut s = self.schema.write();
        let names: Vec<String> = s.vectors.all().iter().map(|v| v.name.clone()).collect();
        files.remove_others(&names);
        s.vectors.files = Some(files);
    }

    /// Starts building every idle vector index (after a store opened and recovered).
    pub(crate) fn start_vector_builds(self: &Arc<Core>) {
        let names: Vec<String> =
            self.schema.read().vectors.all().iter().map(|v| v.name.clone()).collect();
        for name in names {
            if let Err(e) = self.start_vector_build(&name) {
                tracing::error!("vector index `{name}`: {e}");
            }
        }
    }

    /// Builds the ANN structure of `state` (see the module docs). Gives up quietly when the
    /// index is dropped meanwhile.
    fn build_vector(self: &Arc<Core>, state: &Arc<VectorState>) {
        let Some(dims) = state.settings.dimensions else { return };
        let started = Instant::now();
        let switch_ts = {
            let cs = self.lock_commit();
            *state.ann.write() = Ann::Building { pending: Vec::new() };
            cs.next_ts - 1
        };
        // The snapshot must hold every commit before the switch (they queued nothing).
        while !self.clock().wait_for(switch_ts, Duration::from_secs(1)) {
            if self.clock().check().is_err() {
                return;
            }
        }
        let files = self.schema.read().vectors.files.clone();
        let stored = files.as_ref().and_then(|f| f.load(&state.name, &state.settings, dims));
        let tx = Transaction::new(self.clone(), true);
        let built = collect_and_build(&tx, state, dims, stored);
        drop(tx);
        let built = built.map(|(index, changed)| {
            if let (Some(files), true) = (&files, changed) {
                if let Err(e) = files.save(&state.name, &index) {
                    // The index works without its file; the next open builds it again.
                    tracing::warn!("vector index `{}`: not saved: {e}", state.name);
                }
            }
            index
        });
        let cs = self.lock_commit();
        let present =
            self.schema.read().vectors.get(&state.name).is_some_and(|s| Arc::ptr_eq(s, state));
        if !present {
            return;
        }
        let mut ann = state.ann.write();
        let pending = match std::mem::replace(&mut *ann, Ann::Idle) {
            Ann::Building { pending } => pending,
            _ => Vec::new(),
        };
        let result = built.and_then(|mut index| {
            // Queued in commit order; the changes of one commit share its ts.
            let mut rest = pending;
            while !rest.is_empty() {
                let ts = rest[0].2;
                let cut = rest.iter().position(|c| c.2 != ts).unwrap_or(rest.len());
                let tail = rest.split_off(cut);
                apply_changes(&mut index, rest)?;
                rest = tail;
            }
            Ok(index)
        });
        *ann = match result {
            Ok(index) => {
                tracing::info!(
                    "vector index `{}` online: {} vectors in {} ms",
                    state.name,
                    index.live_len(),
                    started.elapsed().as_millis()
                );
                Ann::Ready { index: Box::new(index), since: cs.next_ts - 1 }
            }
            Err(e) => {
                tracing::error!("vector index `{}` failed: {e}", state.name);
                Ann::Failed(e.to_string())
            }
        };
        state.progress.online.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Queues or applies the vector changes of a commit at `ts` (called by the commit before
    /// `apply` installs the versions, so the newest committed state is still the previous one;
    /// WAL replay skips it, as every index is idle until the store has opened and its builds
    /// read the recovered state). Caller holds the commit mutex.
    pub(crate) fn maintain_vectors(
        &self,
        _cs: &mut CommitState,
        ts: u64,
        nodes: &[(u64, Option<Arc<NodeData>>)],
        rels: &[(u64, Option<Arc<RelData>>)],
    ) {
        let states = {
            let s = self.schema.read();
            if s.vectors.is_empty() {
                return;
            }
            s.vectors.all()
        };
        let horizon = ts.is_multiple_of(GC_EVERY).then(|| self.horizons().0);
        for state in states {
            let mut ann = state.ann.write();
            if !matches!(*ann, Ann::Building { .. } | Ann::Ready { .. }) {
                continue;
            }
            let changes = self.vector_changes(&state, ts, nodes, rels);
            let failed = match &mut *ann {
                Ann::Building { pending } => {
                    pending.extend(changes);
                    None
                }
                Ann::Ready { index, .. } => {
                    let failed = apply_changes(index, changes).err().map(|e| e.to_string());
                    if let Some(h) = horizon {
                        index.gc(h);
                    }
                    failed
                }
                _ => None,
            };
            if let Some(msg) = failed {
                tracing::error!("vector index `{}` failed: {msg}", state.name);
                *ann = Ann::Failed(msg);
            }
        }
    }

    /// The entities of a commit whose vector for `state` changes, with their new vector.
    fn vector_changes(
        &self,
        state: &VectorState,
        ts: u64,
        nodes: &[(u64, Option<Arc<NodeData>>)],
        rels: &[(u64, Option<Arc<RelData>>)],
    ) -> Vec<Change> {
        let mut out = Vec::new();
        let settings = &state.settings;
        if state.rel {
            let of = |r: &RelData| {
                (r.ty == state.owner)
                    .then(|| prop_of(&r.props, state.property))
                    .flatten()
                    .and_then(|v| settings.vector_of(v))
            };
            for (id, data) in rels {
                let new = data.as_deref().and_then(of);
                let old = self.rel_newest_data(*id).as_deref().and_then(of);
                if new != old {
                    out.push((*id, new, ts));
                }
            }
        } else {
            let of = |n: &NodeData| {
                n.has_label(state.owner)
                    .then(|| n.prop(state.property))
                    .flatten()
                    .and_then(|v| settings.vector_of(v))
            };
            for (id, data) in nodes {
                let new = data.as_deref().and_then(of);
                let old = self.node_newest(*id).1.as_deref().and_then(of);
                if new != old {
                    out.push((*id, new, ts));
                }
            }
        }
        out
    }
}

/// Applies the changes of one commit (one per entity, all at the commit's ts). Many new
/// vectors are linked together on all threads ([`VectorIndex::insert_batch`]); a few, one by
/// one on this thread (starting threads would cost more than it saves).
fn apply_changes(index: &mut VectorIndex, changes: Vec<Change>) -> arbor_vector::Result<()> {
    let inserts = changes.iter().filter(|c| c.1.is_some()).count();
    if inserts < BATCH_INSERT {
        return changes.into_iter().try_for_each(|c| apply_change(index, c));
    }
    let ts = changes[0].2;
    let batch: Vec<(u64, &[f32])> =
        changes.iter().filter_map(|(id, v, _)| Some((*id, v.as_deref()?))).collect();
    // Checks every entry first and changes nothing on an error (an id twice, which one commit
    // never sends): then the changes go one by one, as they always may.
    if index.insert_batch(&batch, ts).is_err() {
        return changes.into_iter().try_for_each(|c| apply_change(index, c));
    }
    for (id, v, ts) in changes {
        if v.is_none() {
            index.delete(id, ts);
        }
    }
    Ok(())
}

/// Applies one queued or fresh change to a ready index.
fn apply_change(index: &mut VectorIndex, (id, vector, ts): Change) -> arbor_vector::Result<()> {
    match vector {
        Some(v) => index.insert(id, &v, ts),
        None => {
            index.delete(id, ts);
            Ok(())
        }
    }
}

/// Reads every vector of `state` in the builder's snapshot and links them, or, given the
/// structure `stored` in its file, reconciles that with the snapshot. Also says whether the
/// result differs from `stored` (and should be saved).
fn collect_and_build(
    tx: &Transaction,
    state: &VectorState,
    dims: u32,
    stored: Option<VectorIndex>,
) -> arbor_vector::Result<(VectorIndex, bool)> {
    let progress = &state.progress;
    let total = if state.rel {
        tx.count_rels(None, Some(state.owner), None).unwrap_or(0)
    } else {
        tx.count_nodes(Some(state.owner))
    };
    progress.total.store(total.max(1), std::sync::atomic::Ordering::Release);
    tracing::info!("vector index `{}`: populating from {total} entities", state.name);
    let created = tx.start_ts();
    let mut target = match stored {
        Some(mut index) => {
            index.rebase(created);
            Target::Stored { index: Box::new(index), changed: Vec::new(), seen: Vec::new() }
        }
        None => Target::Fresh(IndexBuilder::new(state.settings.config(dims))?),
    };
    let mut seen = 0u64;
    let mut add = |id: u64, value: Option<arbor_model::Value>| {
        if let Some(v) = value.as_ref().and_then(|v| state.settings.vector_of(v)) {
            target.add(state, id, v, created);
        }
        seen += 1;
        if seen.is_multiple_of(BUILD_CHUNK) {
            progress.done.store(seen, std::sync::atomic::Ordering::Release);
        }
    };
    if state.rel {
        let mut cur = 0;
        while let Some(r) = tx.next_rel(&[state.owner], RelId(cur)) {
            add(r.0, tx.rel_property(r, state.property));
            cur = r.0 + 1;
        }
    } else {
        let mut cur = 0;
        while let Some(n) = tx.next_node(Some(state.owner), NodeId(cur)) {
            add(n.0, tx.node_property(n, state.property));
            cur = n.0 + 1;
        }
    }
    progress.done.store(seen, std::sync::atomic::Ordering::Release);
    target.finish(&state.name, created)
}

/// What a build fills: a fresh builder, or a structure read from its file.
enum Target {
    Fresh(IndexBuilder),
    Stored {
        index: Box<VectorIndex>,
        /// Entities whose vector differs from the file's.
        changed: Vec<(u64, Vec<f32>)>,
        /// Entities with a vector in the snapshot, ascending.
        seen: Vec<u64>,
    },
}

impl Target {
    fn add(&mut self, state: &VectorState, id: u64, v: Vec<f32>, created: u64) {
        match self {
            // Vectors `vector_of` accepted are valid for the index.
            Target::Fresh(builder) => {
                let _ = builder.add(id, &v, created);
            }
            Target::Stored { index, changed, seen } => {
                seen.push(id);
                let same =
                    state.settings.similarity.prepare(&v).is_ok_and(|p| index.same_vector(id, &p));
                if !same {
                    changed.push((id, v));
                }
            }
        }
    }

    fn finish(self, name: &str, ts: u64) -> arbor_vector::Result<(VectorIndex, bool)> {
        match self {
            Target::Fresh(builder) => Ok((builder.build()?, true)),
            Target::Stored { mut index, changed, seen } => {
                let gone: Vec<u64> = index
                    .live_ids()
                    .into_iter()
                    .filter(|id| seen.binary_search(id).is_err())
                    .collect();
                for &id in &gone {
                    index.delete(id, ts);
                }
                let entries: Vec<(u64, &[f32])> =
                    changed.iter().map(|(id, v)| (*id, v.as_slice())).collect();
                index.insert_batch(&entries, ts)?;
                tracing::info!(
                    "vector index `{name}`: read from its file, {} vectors kept, {} linked again, \
                     {} removed",
                    seen.len() - changed.len(),
                    changed.len(),
                    gone.len()
                );
                Ok((*index, !changed.is_empty() || !gone.is_empty()))
            }
        }
    }
}
