//! Node index population over the base by an external sort (`base::index_build`): the base
//! rows of a RANGE index or a uniqueness / key constraint go into an [`IndexPart`] of
//! `(key_hash, id)` words (no keys kept) instead of the delta index's `IndexKey` map; only
//! the retained delta versions (rows written since the base) go into the map. The uniqueness
//! of a constraint being created is checked on a sorted run of the newest states' hashes:
//! equal adjacent hashes have their keys compared, so no map of every key is held.
//!
//! The run buffer is [`RUN_SHARE`] of the memory budget (`StoreConfig::memory_limit`, the
//! buffer pool's budget; the pool's default for an in-memory store).

use std::collections::HashMap;
use std::path::PathBuf;
#[cfg(test)]
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use arbor_model::{Error, Result, Status, Value};

use super::state::Core;
use crate::base::{
    key_hash, write_part, Base, HashSorter, IndexPart, PartRef, SortBudget, SortStats, RUN_SHARE,
};
use crate::schema::{IdSet, IndexKind, Progress, Target};
use crate::value::{fmt_value, IndexKey};

/// Test hook: the uniqueness check's hashes are masked with this (a narrow mask forces
/// collisions between distinct keys).
#[cfg(test)]
pub(crate) static CHECK_HASH_MASK: AtomicU32 = AtomicU32::new(u32::MAX);

/// Whether a node rule of `kind` gets its base rows' entries from an [`IndexPart`] (TEXT and
/// POINT indexes read their own structures built from the delta index's keys).
pub(crate) fn uses_part(kind: IndexKind, rel: bool) -> bool {
    !rel && matches!(kind, IndexKind::Range | IndexKind::Uniqueness | IndexKind::NodeKey)
}

/// Appends every row of `base` with `label` (what a seek takes as candidates when its index
/// part cannot be read: the rows' keys are checked after).
pub(crate) fn label_rows(base: &Base, label: u32, out: &mut Vec<u64>) {
    let mut cur = 0;
    while let Some(id) = base.next_with_label(label, cur) {
        out.push(id);
        cur = id + 1;
    }
}

impl Core {
    /// Sets the memory budget the run buffer takes its share of, and where sorts spill.
    pub(crate) fn set_index_budget(&self, budget: u64, dir: Option<PathBuf>) {
        let run_bytes = usize::try_from(budget / RUN_SHARE).unwrap_or(usize::MAX);
        *self.sort_budget.write() = SortBudget { run_bytes, dir };
    }

    /// How many index parts this core has built (a restart that rebuilds one counts).
    #[cfg(test)]
    pub(crate) fn parts_built(&self) -> u64 {
        self.parts_built.load(Ordering::Relaxed)
    }

    pub(crate) fn sort_budget(&self) -> SortBudget {
        self.sort_budget.read().clone()
    }

    /// The part of `base`'s rows of node target `t`; counts them into `progress`. With
    /// `file` (the rule's name) and a writable store, written to a part file and paged; the
    /// file's reference comes back for the rule's record.
    pub(crate) fn build_part(
        &self,
        base: &Base,
        t: &Target,
        progress: Option<&Progress>,
        file: Option<&str>,
    ) -> Result<(IndexPart, Option<PartRef>)> {
        let mut sorter = HashSorter::new(base.node_end, &self.sort_budget());
        let mut cur = 0;
        let mut n = 0u64;
        while let Some(id) = base.next_with_label(t.0, cur) {
            if let Some(k) = base.node(id).and_then(|r| r.key_for(t.0, &t.1)) {
                sorter.push_key(&k, id)?;
            }
            cur = id + 1;
            n += 1;
            if let Some(p) = progress.filter(|_| n.is_multiple_of(4096)) {
                p.done.fetch_add(4096, Ordering::AcqRel);
            }
        }
        if let Some(p) = progress {
            p.done.fetch_add(n % 4096, Ordering::AcqRel);
        }
        self.parts_built.fetch_add(1, Ordering::Relaxed);
        // The store is looked up after the scan: a store closed meanwhile gets no file.
        let (part, r) = match file.and_then(|rule| self.writable_part_store().map(|s| (s, rule))) {
            Some((store, rule)) => {
                let open = || self.writable_part_store().is_some();
                let (part, r) = write_part(&store, sorter, base.ts, rule, &open)?;
                (part, Some(r))
            }
            None => (IndexPart::new(sorter)?, None),
        };
        tracing::debug!(
            "index part of {} base row(s) built{}: {} entries, {} run(s), {} byte(s) peak",
            n,
            r.as_ref().map(|r| format!(" into {}", r.file)).unwrap_or_default(),
            part.stats.entries,
            part.stats.runs,
            part.stats.peak_bytes
        );
        Ok((part, r))
    }

    /// The ids whose retained delta versions need entries in the delta index: members of the
    /// delta's label set and base rows of the label written since `base`.
    pub(crate) fn delta_ids(&self, base: &Base, label: u32) -> Vec<u64> {
        let mut ids: Vec<u64> =
            self.label_sets.read().get(&label).map(|s| s.iter().collect()).unwrap_or_default();
        if base.any_node_dirty() {
            let mut cur = 0;
            while let Some(id) = base.next_with_label(label, cur) {
                if base.node_dirty(id) {
                    ids.push(id);
                }
                cur = id + 1;
            }
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Every retained delta version's key of target `t` for `ids`, as `(key, id)`.
    pub(crate) fn delta_entries(&self, t: &Target, ids: &[u64]) -> Vec<(IndexKey, u64)> {
        let mut out = Vec::new();
        for &id in ids {
            self.nodes.read(id, |s| {
                for d in s.chain.iter().filter_map(|(_, d)| d.as_ref()) {
                    if let Some(k) = d.key_for(t.0, &t.1) {
                        out.push((k, id));
                    }
                }
            });
        }
        out
    }

    /// Fills node target `t` from `base` the external way: the base rows into a part, the
    /// delta versions into the delta index. A file-backed store writes the part to a file
    /// for rule `rule` (its record is logged by the caller: [`Core::log_part`]); a failed
    /// write is logged and the part built again in memory. `false` if the sort failed (the
    /// caller falls back to the delta index for every row).
    pub(crate) fn populate_part(
        &self,
        base: &Base,
        t: &Target,
        progress: Option<&Progress>,
        rule: &str,
    ) -> bool {
        // No base rows: no part (range seeks stay answered by the map alone).
        let part = match base.next_with_label(t.0, 0) {
            None => None,
            Some(_) => match self.sort_part(base, t, progress, rule) {
                Ok(p) => Some(p),
                Err(e) => {
                    tracing::warn!("index population by external sort failed, using the map: {e}");
                    return false;
                }
            },
        };
        self.install_part(base, t, part);
        true
    }

    /// [`Core::build_part`] into a file when the store has one, else (or if that fails) in
    /// memory; notes the file written.
    fn sort_part(
        &self,
        base: &Base,
        t: &Target,
        progress: Option<&Progress>,
        rule: &str,
    ) -> Result<IndexPart> {
        if self.writable_part_store().is_some() {
            match self.build_part(base, t, progress, Some(rule)) {
                Ok((part, r)) => {
                    if let Some(r) = r {
                        self.note_part_written(r);
                    }
                    return Ok(part);
                }
                Err(e) => {
                    tracing::warn!("cannot write the index part of rule {rule}, in memory: {e}");
                    if let Some(p) = progress {
                        p.done.store(0, Ordering::Release);
                    }
                }
            }
        }
        self.build_part(base, t, progress, None).map(|(p, _)| p)
    }

    /// Puts `part` (the index of `base`'s rows of `t`) beside the delta index of `t`, and
    /// the retained delta versions' entries into that (unless the rule was dropped meanwhile).
    pub(crate) fn install_part(&self, base: &Base, t: &Target, part: Option<IndexPart>) {
        let entries = self.delta_entries(t, &self.delta_ids(base, t.0));
        let mut s = self.schema.write();
        if !s.maps.contains_key(t) {
            // Dropped meanwhile.
            return;
        }
        for (k, id) in entries {
            s.insert_entry(t, k, id);
        }
        if let Some(part) = part {
            s.parts.insert(t.clone(), Arc::new(part));
        }
    }

    /// The uniqueness / existence check of a node rule about to be created, against the
    /// newest committed state, on a sorted run of key hashes (see the module docs). The first
    /// violation in id order is reported, with the message of [`Core::check_rule_data`].
    pub(crate) fn check_rule_sorted(
        &self,
        label: u32,
        keys: &[u32],
        kind: IndexKind,
        name: &str,
    ) -> Result<SortStats> {
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
        let end = ids.last().map_or(0, |x| x + 1);
        let mut sorter = HashSorter::new(end, &self.sort_budget());
        let mut missing: Option<(u64, usize)> = None;
        #[cfg(test)]
        let mask = CHECK_HASH_MASK.load(Ordering::Relaxed);
        #[cfg(not(test))]
        let mask = u32::MAX;
        for id in ids {
            // The row's missing key (by position) or its key, read without decoding the rest.
            let row = self.with_node_newest(id, |d| {
                if !d.has_label(label) {
                    return Ok(None);
                }
                if kind.requires() {
                    if let Some(i) = keys.iter().position(|k| !d.has_prop(*k)) {
                        return Err(i);
                    }
                }
                Ok(if kind.unique() { d.key_for(label, keys) } else { None })
            });
            match row {
                Some(Err(i)) => {
                    missing = Some((id, i));
                    break;
                }
                Some(Ok(Some(k))) => sorter.push(key_hash(&k) & mask, id)?,
                _ => {}
            }
        }
        // The first duplicate in id order: the least later holder of a key, with the one
        // before it.
        let mut dup: Option<(u64, u64)> = None;
        let mut group: Vec<u64> = Vec::new();
        let mut group_h: Option<u32> = None;
        let close = |group: &mut Vec<u64>, dup: &mut Option<(u64, u64)>| {
            if group.len() > 1 {
                let mut seen: HashMap<IndexKey, u64> = HashMap::new();
                for &id in group.iter() {
                    let Some(k) = self.node_newest_key(id, label, keys) else { continue };
                    if let Some(other) = seen.insert(k, id) {
                        if dup.is_none_or(|(j, _)| id < j) {
                            *dup = Some((id, other));
                        }
                        break;
                    }
                }
            }
            group.clear();
        };
        let stats = sorter.finish(&mut |h, id| {
            if group_h != Some(h) {
                close(&mut group, &mut dup);
                group_h = Some(h);
            }
            group.push(id);
            Ok(())
        })?;
        close(&mut group, &mut dup);
        if let Some((id, other)) = dup {
            return Err(self.duplicate_error(label, keys, kind, name, id, other));
        }
        if let Some((id, i)) = missing {
            let (l, ks) = self.names(label, keys);
            let detail = format!("Node({id}) with label `{l}` must have the property `{}`", ks[i]);
            return Err(self.creation_failed(label, keys, kind, name, detail));
        }
        Ok(stats)
    }

    fn duplicate_error(
        &self,
        label: u32,
        keys: &[u32],
        kind: IndexKind,
        name: &str,
        id: u64,
        other: u64,
    ) -> Error {
        let (l, ks) = self.names(label, keys);
        let d = self.node_newest(id).1;
        let vals: Vec<String> = keys
            .iter()
            .zip(&ks)
            .map(|(k, n)| {
                let v = d.as_ref().and_then(|d| d.prop(*k).cloned()).unwrap_or(Value::Null);
                format!("`{n}` = {}", fmt_value(&v))
            })
            .collect();
        let what = if ks.len() == 1 {
            format!("property {}", vals[0])
        } else {
            format!("properties {}", vals.join(", "))
        };
        let detail = format!("Both Node({other}) and Node({id}) have the label `{l}` and {what}");
        self.creation_failed(label, keys, kind, name, detail)
    }

    /// `ConstraintCreationFailed` with Neo4j's text for node rule `name`.
    pub(crate) fn creation_failed(
        &self,
        label: u32,
        keys: &[u32],
        kind: IndexKind,
        name: &str,
        detail: String,
    ) -> Error {
        let (l, ks) = self.names(label, keys);
        Error::new(
            Status::ConstraintCreationFailed,
            format!(
                "Unable to create Constraint( name='{name}', type='{}', schema=(:{l} {{{}}}) ): \
                 {detail}",
                kind.type_name(),
                ks.join(", ")
            ),
        )
    }

    /// The keys of the delta index of `t` that more than one entry may hold, counting the
    /// part's hash matches (what `recheck_unique` re-reads).
    pub(crate) fn shared_keys(&self, t: &Target, rel: bool) -> Vec<(IndexKey, Vec<u64>)> {
        let s = self.schema.read();
        let map = if rel { s.rel_maps.get(t) } else { s.maps.get(t) };
        let part = if rel { None } else { s.parts.get(t) };
        let Some(m) = map else { return Vec::new() };
        let mut out = Vec::new();
        for (k, ids) in m {
            let mut all = ids.to_vec();
            if let Some(p) = part {
                if !p.lookup(k, &mut all) {
                    label_rows(&self.base(), t.0, &mut all);
                }
                all.sort_unstable();
                all.dedup();
            }
            if all.len() > 1 || !matches!(ids, IdSet::Small(_)) {
                out.push((k.clone(), all));
            }
        }
        out
    }
}
