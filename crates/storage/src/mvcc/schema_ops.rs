//! Schema operations on the shared state: installing index rules (built now or populated in
//! the background), relationship index data, constraint checks against existing data, and
//! logging a schema record through the commit sink.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arbor_model::{Error, Result, Status, Value};

use super::index_part::uses_part;
use super::sink::Ticket;
use super::state::{CommitState, Core};
use crate::codec::Enc;
use crate::records::RelData;
use crate::schema::{IdSet, IndexDef, IndexKind, Progress, Target};
use crate::types::TokenKind;
use crate::value::{fmt_value, IndexKey};

impl Core {
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
        if def.kind == IndexKind::Vector {
            self.install_vector(def);
            return;
        }
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
        if build && uses_part(def.kind, def.rel) {
            // The base rows into a part by an external sort, the delta versions into the map
            // (the commit mutex is held: the base cannot change meanwhile).
            {
                let mut s = self.schema.write();
                s.maps.entry(target.clone()).or_default();
            }
            if self.populate_part(&self.base(), &target, None, &def.name) {
                let mut s = self.schema.write();
                s.version += 1;
                def.since = s.version;
                s.defs.push(def);
                return;
            }
        }
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
            let m = s.maps.entry(target.clone()).or_default();
            for (k, ids) in map {
                for id in ids.to_vec() {
                    m.entry(k.clone()).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
                }
            }
            if (def.kind == IndexKind::Text && !def.rel) || s.texts.contains_key(&target) {
                s.install_text(&target);
            }
        }
        s.defs.push(def);
    }

    /// Adds a relationship index, built from every retained version of the relationships of
    /// its type (base rows and delta chains), or without `build_now` empty (commits from now on
    /// add their entries; [`Core::populate`] adds the existing rows). Caller holds the commit
    /// mutex.
    pub(crate) fn install_rel_index(&self, mut def: IndexDef, build_now: bool) {
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

    pub(crate) fn rel_index_data(&self, def: &IndexDef) -> BTreeMap<IndexKey, IdSet> {
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
    pub(crate) fn check_rel_rule_data(
        &self,
        ty: u32,
        keys: &[u32],
        kind: IndexKind,
        name: &str,
    ) -> Result<()> {
        if kind == IndexKind::PropertyType {
            return self.check_type_data(true, ty, keys, name);
        }
        if !kind.is_constraint() {
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
            if kind.requires()
                && keys.iter().any(|k| crate::records::prop_of(&r.props, *k).is_none())
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
                            let v = crate::records::prop_of(&r.props, *k).cloned();
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
    pub(crate) fn schema_text(&self, rel: bool, label: u32, keys: &[u32]) -> String {
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
    pub(crate) fn has_label_rows(&self, label: u32) -> bool {
        self.base().next_with_label(label, 0).is_some()
            || self.label_sets.read().get(&label).is_some_and(|s| !s.is_empty())
    }

    /// Writes a schema record (`body`) at the next commit ts; the receiver acknowledges its
    /// durability (`None` for an in-memory store). Caller holds the commit mutex.
    pub(crate) fn log_schema(&self, cs: &mut CommitState, body: Enc) -> Result<Option<Ticket>> {
        let ts = cs.next_ts;
        cs.next_ts += 1;
        cs.last_schema_ts = ts;
        if !self.durable {
            self.clock.publish(ts);
            return Ok(None);
        }
        let header = self.record_header(cs, ts);
        let Some(sink) = &cs.sink else {
            return Err(Error::new(Status::Io, "the log writer has stopped"));
        };
        let Some(ticket) = sink.submit(ts, header, body.buf) else {
            self.clock.fail("the log writer has stopped".into());
            return Err(Error::new(Status::Io, "the log writer has stopped"));
        };
        // A schema change is in force from the moment its ts is assigned: visible once durable.
        self.clock.applied(ts);
        Ok(Some(ticket))
    }

    /// The final uniqueness check of a constraint being created (see
    /// `Store::finish_constraint`): every key its complete index holds for more than one
    /// entity is re-checked against the newest committed states; a real duplicate gets the
    /// full check's error (naming both). Caller holds the commit mutex.
    pub(crate) fn recheck_unique(&self, def: &IndexDef) -> Result<()> {
        let t = def.target();
        if !def.rel && self.base().indexes(&t) {
            // A base built meanwhile took over part of the entries: check everything.
            return self.check_rule_data(def.label, &def.keys, def.kind, &def.name);
        }
        // The part's hash matches count (its base rows are not in the map).
        let shared = self.shared_keys(&t, def.rel);
        for (k, ids) in shared {
            let holders = ids
                .iter()
                .filter(|id| {
                    let key = if def.rel {
                        self.rel_newest_data(**id).and_then(|r| r.key_for(def.label, &def.keys))
                    } else {
                        self.node_newest_key(**id, def.label, &def.keys)
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
    pub(crate) fn has_type_rows(&self, ty: u32) -> bool {
        self.base().next_rel_of_types(&[ty], 0).is_some()
            || self.type_sets.read().get(&ty).is_some_and(|s| !s.is_empty())
    }

    /// Waits while the uniqueness or key rule on `t` (`rel`: a relationship rule) is a rule
    /// replayed from the log that is still filling: its index is incomplete, so a statement's
    /// check against it (`check_unique`) would miss a duplicate of an existing row and fail
    /// only at commit. Its filling thread holds the commit mutex (`populate_replayed.rs`), so
    /// this waits on that mutex. A constraint being created online (`pending`) is not waited
    /// for: it re-checks its whole index before it is logged.
    pub(crate) fn await_replayed_unique(&self, rel: bool, t: &Target) {
        loop {
            let filling = {
                let s = self.schema.read();
                s.defs.iter().any(|d| {
                    d.rel == rel
                        && d.kind.unique()
                        && d.label == t.0
                        && d.keys == t.1
                        && !d.progress.is_online()
                        && !s.pending.contains(&d.name)
                })
            };
            if !filling {
                return;
            }
            if self.commit.try_lock_for(Duration::from_millis(20)).is_some() {
                // Free, yet the rule not online: its filler has not taken the mutex yet.
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Fills a background index with the rows that existed when it was created (commits since
    /// add their own entries), then marks it online. Runs as a registered reader, so the
    /// versions and base it scans stay until it finishes; entries are a superset that seeks
    /// re-check, so racing with commits and GC is harmless. Stops early if the rule is dropped.
    /// `rel`: a relationship index on `(type, keys)`.
    pub(crate) fn populate(&self, target: &Target, progress: &Arc<Progress>, rel: bool) {
        self.populate_in(None, target, progress, rel);
    }

    /// [`Core::populate`] by a caller holding the commit mutex (`cs`: a replayed uniqueness
    /// rule, `populate_replayed.rs`), which a part's record is then logged under.
    pub(crate) fn populate_in(
        &self,
        cs: Option<&mut CommitState>,
        target: &Target,
        progress: &Arc<Progress>,
        rel: bool,
    ) {
        let (ts, base) = self.register();
        let rule = self
            .schema
            .read()
            .defs
            .iter()
            .find(|d| Arc::ptr_eq(&d.progress, progress))
            .map(|d| (d.kind, d.name.clone()));
        if let Some((_, name)) = rule.as_ref().filter(|(k, _)| uses_part(*k, rel)) {
            let mut n = 0u64;
            let mut cur = 0;
            while let Some(id) = base.next_with_label(target.0, cur) {
                n += 1;
                cur = id + 1;
            }
            progress.total.store(n, Ordering::Release);
            // A part file a replayed record names attaches without a sort.
            if self.attach_replayed(&base, target, name) {
                progress.done.store(n, Ordering::Release);
                progress.online.store(true, Ordering::Release);
                self.unregister(ts, base.ts);
                return;
            }
            if self.populate_part(&base, target, Some(progress), name) {
                self.log_part(cs, name, progress);
                progress.online.store(true, Ordering::Release);
                self.unregister(ts, base.ts);
                return;
            }
            progress.done.store(0, Ordering::Release);
        }
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
                    let indexed = |k: IndexKind| k.has_index() || k == IndexKind::Vector;
                    if !s.defs.iter().any(|d| d.name == n && indexed(d.kind)) {
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
    pub(crate) fn check_rule_data(
        &self,
        label: u32,
        keys: &[u32],
        kind: IndexKind,
        name: &str,
    ) -> Result<()> {
        if kind == IndexKind::PropertyType {
            return self.check_type_data(false, label, keys, name);
        }
        if !kind.is_constraint() {
            return Ok(());
        }
        self.check_rule_sorted(label, keys, kind, name).map(|_| ())
    }
}
