//! Index part files and the WAL records that name them (`base/part_file.rs` has the format).
//!
//! A file-backed store writes each part it builds to a part file and reads it through the
//! buffer pool. Once the file and its directory entry are fsynced, an `OP_ATTACH_PART` record
//! names it ([`PartRef`]: rule, file, entries, base ts, header CRC), after the rule's own
//! create record: a separate record at the next commit ts when the rule was logged before
//! the part was built (`CREATE INDEX`, a replayed rule being refilled), or in the create
//! record itself when the part came first (a constraint is logged only after its check,
//! [`Core::append_part_attach`]).
//!
//! Replay remembers the last attach record of each rule still present ([`Core::replay_attach`];
//! a create or drop of the name forgets it); `Core::populate` of that rule then attaches the
//! file instead of sorting ([`Core::attach_replayed`]) when it opens, its header matches the
//! record, every page verifies and the base it indexes is the base recovery loaded. Otherwise
//! it logs why and rebuilds (a new file, a new record). Crash points: before the file is
//! fsynced and renamed, only a tmp file exists (removed at the next open); after the file but
//! before the record, nothing names it (removed at the next open, the rule rebuilt); after both,
//! the part attaches. Files no replayed record names are removed at a writable open; files
//! named only by records a checkpoint covers are removed once that checkpoint's manifest is
//! durable ([`Core::remove_checkpointed_parts`]): its base indexes the target itself.

use std::sync::Arc;

use arbor_model::Result;

use super::state::{CommitState, Core};
use crate::base::{open_part, remove_part_files, remove_unnamed, Base, PartRef, PartStore};
use crate::codec::Enc;
use crate::schema::{Progress, Target};

impl Core {
    /// Where parts are written and read from (`None`: in memory).
    pub(crate) fn set_part_store(&self, store: Option<PartStore>) {
        *self.part_files.store.write() = store;
    }

    /// The store new parts are written to, if any.
    pub(crate) fn writable_part_store(&self) -> Option<PartStore> {
        self.part_files.store.read().clone().filter(|s| s.writable)
    }

    /// A part file was written for `rule` (its record still to come).
    pub(crate) fn note_part_written(&self, r: PartRef) {
        self.part_files.inner.lock().unlogged.insert(r.rule.clone(), r);
    }

    /// Logs the attach record of the part file written for `rule` (see the module docs): at
    /// once, under the commit mutex (`cs`, or taken here), unless the rule itself is not
    /// logged yet (a constraint being validated) or was dropped. Waits for its durability
    /// when it took the mutex itself.
    pub(crate) fn log_part(
        &self,
        cs: Option<&mut CommitState>,
        rule: &str,
        progress: &Arc<Progress>,
    ) {
        let Some(r) = self.part_files.inner.lock().unlogged.remove(rule) else { return };
        let took = cs.is_none();
        let mut own = None;
        let cs = match cs {
            Some(cs) => cs,
            None => &mut **own.insert(self.lock_commit()),
        };
        {
            let s = self.schema.read();
            if s.pending.contains(rule) {
                drop(s);
                self.part_files.inner.lock().unlogged.insert(rule.to_string(), r);
                return;
            }
            if !s.defs.iter().any(|d| d.name == rule && Arc::ptr_eq(&d.progress, progress)) {
                return;
            }
        }
        let ts = cs.next_ts;
        let mut body = Enc::new();
        body.op_attach_part(&r);
        match self.log_schema(cs, body) {
            Ok(ticket) => {
                self.part_files.inner.lock().logged.push((r.file.clone(), ts));
                drop(own);
                // Waiting under a caller's commit mutex would hold every commit meanwhile.
                if let Some(t) = ticket.filter(|_| took) {
                    if let Err(e) = t.wait() {
                        tracing::warn!("the record of index part file {} failed: {e}", r.file);
                    }
                }
            }
            Err(e) => tracing::warn!("cannot log index part file {}: {e}", r.file),
        }
    }

    /// Appends to `body` (the create record of `rule`, about to be logged at `cs.next_ts`)
    /// the attach record of the part file written for it, if any.
    pub(crate) fn append_part_attach(&self, cs: &CommitState, rule: &str, body: &mut Enc) {
        let mut inner = self.part_files.inner.lock();
        if let Some(r) = inner.unlogged.remove(rule) {
            body.op_attach_part(&r);
            inner.logged.push((r.file, cs.next_ts));
        }
    }

    /// Replay of an attach record (see the module docs).
    pub(crate) fn replay_attach(&self, r: PartRef, ts: u64) {
        let mut inner = self.part_files.inner.lock();
        inner.logged.push((r.file.clone(), ts));
        inner.replayed.insert(r.rule.clone(), r);
    }

    /// Replay of a create or drop of rule `name`: an earlier attach record no longer applies.
    pub(crate) fn replay_forget_part(&self, name: &str) {
        self.part_files.inner.lock().replayed.remove(name);
    }

    /// After the replay: with `repair` (a writable open), removes the part files no replayed
    /// record of a present rule names, and forgets the records of rules no longer present.
    pub(crate) fn after_replay_parts(&self, repair: bool) {
        let present: Vec<String> = self.schema.read().defs.iter().map(|d| d.name.clone()).collect();
        let mut inner = self.part_files.inner.lock();
        inner.replayed.retain(|name, _| present.contains(name));
        let keep: Vec<String> = inner.replayed.values().map(|r| r.file.clone()).collect();
        inner.logged.retain(|(f, _)| keep.contains(f));
        drop(inner);
        if let Some(s) = self.part_files.store.read().as_ref().filter(|_| repair) {
            remove_unnamed(&*s.vfs, &s.dir, &keep);
        }
    }

    /// Attaches the part file a replayed record names for `rule` (target `t`), if any, as
    /// the index of `base`'s rows; the delta versions go into the map as after a sort. `false`
    /// (logged) if there is none or it does not attach: the caller sorts.
    pub(crate) fn attach_replayed(&self, base: &Base, t: &Target, rule: &str) -> bool {
        let Some(r) = self.part_files.inner.lock().replayed.remove(rule) else { return false };
        let Some(store) = self.part_files.store.read().clone() else { return false };
        let attach = || -> Result<crate::base::IndexPart> {
            if r.base_ts != base.ts {
                return Err(crate::codec::corrupt(format!(
                    "it indexes the base of commit {}, the store's is of commit {}",
                    r.base_ts, base.ts
                )));
            }
            open_part(&store, &r)
        };
        let part = match attach() {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(
                    "index part file {} of rule {rule} does not attach, rebuilding: {}",
                    r.file,
                    e.message
                );
                return false;
            }
        };
        self.install_part(base, t, Some(part));
        tracing::info!("index part file {} attached to rule {rule}: no sort", r.file);
        true
    }

    /// Removes the part files named only by records at or below checkpoint `c`, whose
    /// manifest is durable (see the module docs).
    pub(crate) fn remove_checkpointed_parts(&self, c: u64) {
        let gone: Vec<String> = {
            let mut inner = self.part_files.inner.lock();
            let (gone, keep): (Vec<_>, Vec<_>) =
                std::mem::take(&mut inner.logged).into_iter().partition(|(_, ts)| *ts <= c);
            inner.logged = keep;
            gone.into_iter().map(|(f, _)| f).collect()
        };
        if let Some(s) = self.part_files.store.read().as_ref().filter(|s| s.writable) {
            remove_part_files(&*s.vfs, &s.dir, &gone);
        }
    }
}
