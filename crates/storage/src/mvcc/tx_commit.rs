//! Transaction commit: conflict and constraint validation under the commit mutex, install,
//! and the hand-off of the redo record to the durability sink.

use std::collections::HashMap;
use std::sync::Arc;

use arbor_model::{Error, Result, Status};

use super::state::{CommitState, Core};
use crate::codec::{entity_size_hint, Enc};
use crate::records::{NodeData, RelData};
use crate::schema::Target;
use crate::types::TokenKind;
use crate::value::IndexKey;

use super::tx::{outdated, Transaction};

impl Transaction {
    // ---------------------------------------------------------------- commit

    /// Discards all writes.
    pub fn rollback(self) {}

    /// Commits; returns the commit timestamp (usable as a bookmark: it is visible to every
    /// transaction begun after this returns). A transaction without writes returns its
    /// snapshot timestamp.
    pub fn commit(self) -> Result<u64> {
        if let Some(e) = self.read_error() {
            return Err(e.clone());
        }
        let nodes: Vec<(u64, Option<Arc<NodeData>>)> = self
            .nodes
            .iter()
            .filter(|(_, w)| !(w.created && w.data.is_none()))
            .map(|(id, w)| (*id, w.data.clone()))
            .collect();
        let rels: Vec<(u64, Option<Arc<RelData>>)> = self
            .rels
            .iter()
            .filter(|(_, w)| !(w.created && w.data.is_none()))
            .map(|(id, w)| (*id, w.data.clone()))
            .collect();
        if nodes.is_empty() && rels.is_empty() {
            return Ok(self.start_ts);
        }
        let _timer = crate::metrics::Timer::start(&crate::metrics::STORAGE.commit);
        let core = self.core.clone();
        let durable = core.durable;
        let body = if durable { encode_body(&nodes, &rels) } else { Vec::new() };
        let (ts, ack) = {
            let mut cs = core.commit.lock();
            core.clock.check()?;
            if cs.closed {
                return Err(Error::new(Status::Io, "the store is closed"));
            }
            self.validate()?;
            self.validate_unique()?;
            self.validate_required()?;
            self.validate_types()?;
            let ts = cs.next_ts;
            cs.next_ts += 1;
            let header = if durable { core.record_header(&mut cs, ts) } else { Vec::new() };
            // The record goes to the log first: a large one is written and synced by the log
            // thread while this thread installs the versions (a batch of 10,000 nodes takes a
            // few milliseconds to install and about as long to sync), a small one by this
            // thread when it waits on the ticket, or by a committer leading a group then
            // (`durability/wal_group.rs`). The commit becomes visible when it is both durable
            // and installed (see `Clock`).
            let ack = match &cs.sink {
                Some(sink) => {
                    let Some(ticket) = sink.submit(ts, header, body) else {
                        core.clock.fail("the log writer has stopped".into());
                        return Err(Error::new(Status::Io, "the log writer has stopped"));
                    };
                    Some(ticket)
                }
                None => {
                    if durable {
                        return Err(Error::new(Status::Io, "the log writer has stopped"));
                    }
                    None
                }
            };
            // Before `apply`: it compares with the previous committed state.
            core.maintain_vectors(&mut cs, ts, &nodes, &rels);
            core.apply(&mut cs, ts, &nodes, &rels);
            if let Some(o) = &cs.observer {
                o.committed(ts, &super::CommitChanges { nodes: &nodes, rels: &rels });
            }
            if ack.is_some() {
                core.clock.applied(ts);
            } else {
                core.clock.publish(ts);
            }
            if ts.is_multiple_of(64) {
                core.gc(&mut cs);
            }
            (ts, ack)
        };
        if let Some(ticket) = ack {
            ticket.wait()?;
        }
        Ok(ts)
    }

    /// First committer wins: anything this transaction updates or deletes must not have a newer
    /// committed version than the snapshot; relationships it creates need live endpoints, and
    /// nodes it deletes must not have gained relationships. Caller holds the commit mutex.
    pub(super) fn validate(&self) -> Result<()> {
        let core = &self.core;
        for (id, w) in &self.nodes {
            if w.created {
                continue;
            }
            if core.node_newest_ts(*id) > self.start_ts {
                return Err(outdated("Node", *id));
            }
            if w.data.is_none() {
                let mut rels: Vec<u64> = core
                    .nodes
                    .read(*id, |s| s.out.iter().chain(s.inc.iter()).map(|a| a.rel).collect())
                    .unwrap_or_default();
                core.base().edges(*id, true, true, |r, _, _, _| rels.push(r))?;
                for r in rels {
                    if self.rels.get(&r).is_some_and(|w| w.data.is_none()) {
                        continue;
                    }
                    if core.rel_newest_exists(r) {
                        return Err(outdated("Node", *id));
                    }
                }
            }
        }
        for (id, w) in &self.rels {
            if w.created {
                if let Some(r) = &w.data {
                    for n in [r.start, r.end] {
                        let alive = match self.nodes.get(&n) {
                            Some(nw) => nw.data.is_some(),
                            None => core.node_newest_exists(n),
                        };
                        if !alive {
                            return Err(outdated("Node", n));
                        }
                    }
                }
                continue;
            }
            if core.rel_newest_ts(*id) > self.start_ts {
                return Err(outdated("Relationship", *id));
            }
        }
        Ok(())
    }

    /// Unique constraints against the newest committed state (not the snapshot), so two
    /// concurrent transactions cannot both insert the same key. Caller holds the commit mutex.
    pub(super) fn validate_unique(&self) -> Result<()> {
        self.validate_rel_unique()?;
        let targets = self.core.schema.read().unique_targets();
        if targets.is_empty() {
            return Ok(());
        }
        let mut seen: HashMap<(Target, IndexKey), u64> = HashMap::new();
        for (id, w) in &self.nodes {
            let Some(d) = &w.data else { continue };
            for t in &targets {
                let Some(key) = d.key_for(t.0, &t.1) else { continue };
                if let Some(other) = seen.insert((t.clone(), key.clone()), *id) {
                    return Err(self.core.unique_violation(other, t, d));
                }
                let (mut cands, complete) = self.core.schema.read().lookup(t, &key);
                let base = self.core.base();
                if !complete {
                    super::index_part::label_rows(&base, t.0, &mut cands);
                }
                base.index_lookup(t, &key, &mut cands);
                for c in cands {
                    if c == *id || self.nodes.contains_key(&c) {
                        continue;
                    }
                    if self.core.node_newest_key(c, t.0, &t.1).as_ref() == Some(&key) {
                        return Err(self.core.unique_violation(c, t, d));
                    }
                }
            }
        }
        Ok(())
    }

    /// Relationship uniqueness and key constraints against the newest committed state (as
    /// `validate_unique` for nodes). Caller holds the commit mutex.
    pub(super) fn validate_rel_unique(&self) -> Result<()> {
        let targets = self.core.schema.read().rel_unique_targets();
        if targets.is_empty() {
            return Ok(());
        }
        let mut seen: HashMap<(Target, IndexKey), u64> = HashMap::new();
        for (id, w) in &self.rels {
            let Some(r) = &w.data else { continue };
            for t in targets.iter().filter(|t| t.0 == r.ty) {
                let Some(key) = r.key_for(t.0, &t.1) else { continue };
                if let Some(other) = seen.insert((t.clone(), key.clone()), *id) {
                    return Err(self.core.rel_unique_violation(other, t, r));
                }
                let cands = self.core.schema.read().rel_lookup(t, &key);
                for c in cands {
                    if c == *id || self.rels.contains_key(&c) {
                        continue;
                    }
                    let newest = self.core.rel_newest_data(c);
                    if newest.is_some_and(|o| o.key_for(t.0, &t.1).as_ref() == Some(&key)) {
                        return Err(self.core.rel_unique_violation(c, t, r));
                    }
                }
            }
        }
        Ok(())
    }

    /// Existence and node-key constraints: every node this transaction leaves with a
    /// constrained label has the required properties. Caller holds the commit mutex (so a
    /// constraint created concurrently is either checked here or saw this commit's data).
    pub(super) fn validate_required(&self) -> Result<()> {
        let (required, rel_required) = {
            let s = self.core.schema.read();
            (s.required_targets(), s.rel_required())
        };
        for (id, w) in &self.rels {
            let Some(r) = &w.data else { continue };
            for ((ty, keys), kind) in &rel_required {
                if r.ty == *ty
                    && keys.iter().any(|k| crate::records::prop_of(&r.props, *k).is_none())
                {
                    return Err(self.core.missing_rel_property(*id, *ty, keys, *kind));
                }
            }
        }
        if required.is_empty() {
            return Ok(());
        }
        for (id, w) in &self.nodes {
            let Some(d) = &w.data else { continue };
            for ((label, keys), kind) in &required {
                if d.has_label(*label) && keys.iter().any(|k| d.prop(*k).is_none()) {
                    return Err(self.core.missing_property(*id, *label, keys, *kind));
                }
            }
        }
        Ok(())
    }
}

/// Redo operations of a commit (full images of every written entity).
pub(super) fn encode_body(
    nodes: &[(u64, Option<Arc<NodeData>>)],
    rels: &[(u64, Option<Arc<RelData>>)],
) -> Vec<u8> {
    let hint: usize = nodes
        .iter()
        .map(|(_, d)| d.as_ref().map_or(11, |d| entity_size_hint(d.labels.len(), &d.props)))
        .chain(rels.iter().map(|(_, r)| r.as_ref().map_or(11, |r| entity_size_hint(0, &r.props))))
        .sum();
    let mut e = Enc::with_capacity(hint);
    for (id, d) in nodes {
        match d {
            Some(d) => e.op_put_node(*id, &d.labels, &d.props),
            None => e.op_del_node(*id),
        }
    }
    for (id, r) in rels {
        match r {
            Some(r) => e.op_put_rel(*id, r.start, r.end, r.ty, &r.props),
            None => e.op_del_rel(*id),
        }
    }
    e.buf
}

impl Core {
    /// The start of a WAL record: commit ts and tokens not yet logged. Caller holds the commit
    /// mutex (which orders records and token logging).
    pub(crate) fn record_header(&self, cs: &mut CommitState, ts: u64) -> Vec<u8> {
        let mut e = Enc::new();
        e.u64(ts);
        let t = self.tokens.read();
        for kind in [TokenKind::Label, TokenKind::RelType, TokenKind::PropertyKey] {
            let names = &t.t[kind.index()].names;
            let from = cs.tokens_logged[kind.index()];
            for (i, n) in names.iter().enumerate().skip(from) {
                e.op_token(kind, i as u32, n);
            }
            cs.tokens_logged[kind.index()] = names.len();
        }
        e.buf
    }
}
