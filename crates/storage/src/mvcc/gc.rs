//! Garbage collection of the delta: pruning version chains below the horizons, folding what
//! every live base holds, and purging the delta's label, type and index sets.

use std::sync::Arc;

use crate::base::Base;
use crate::records::{NodeData, RelData};
use crate::schema::Target;
use crate::value::IndexKey;

use super::state::{CommitState, Core, Dirty};
use super::versions::{prune_chain, NodeSlot};

impl Core {
    /// Prunes versions no live snapshot can see, folds versions every live base already holds,
    /// and drops the secondary entries only they justified. Caller holds the commit mutex.
    pub fn gc(&self, cs: &mut CommitState) {
        while self.gc_some(cs, usize::MAX) {}
    }

    /// One step of [`Core::gc`]: collects at most about `budget` queued ids (a queue entry
    /// larger than what is left of the budget is split, its rest stays queued). Returns whether
    /// eligible work is left. The background thread calls this with a bounded budget and
    /// releases the commit mutex between steps: a fold queues the whole delta at once
    /// (hundreds of thousands of ids during a bulk load), and collecting it in one go held the
    /// mutex, and so every commit, for that long.
    pub fn gc_some(&self, cs: &mut CommitState, budget: usize) -> bool {
        let (horizon, base_h) = self.horizons();
        let cur = self.base();
        let mut nodes = Vec::new();
        let mut rels = Vec::new();
        let mut folded = false;
        let eligible = |d: &Dirty| d.ts <= horizon && d.gate <= base_h;
        while cs.gc_queue.front().is_some_and(eligible) {
            let room = budget.saturating_sub(nodes.len() + rels.len());
            let Some(d) = cs.gc_queue.front_mut() else { break };
            if room == 0 {
                break;
            }
            if d.nodes.len() + d.rels.len() > room {
                // Ids of one entry are independent of each other: collecting part of them now
                // and the rest later (with horizons at least as new) is what a later GC would
                // have done. The entry's fold bookkeeping waits for its last part.
                let k = room.min(d.nodes.len());
                nodes.extend(d.nodes.drain(d.nodes.len() - k..));
                let r = (room - k).min(d.rels.len());
                rels.extend(d.rels.drain(d.rels.len() - r..));
                break;
            }
            if let Some(d) = cs.gc_queue.pop_front() {
                folded |= d.gate != 0 && d.gate >= cur.ts;
                nodes.extend(d.nodes);
                rels.extend(d.rels);
            }
        }
        let more = cs.gc_queue.front().is_some_and(eligible);
        if nodes.is_empty() && rels.is_empty() && !folded {
            // Commits that only create queue nothing (see `apply`); their count histories
            // still shrink here.
            self.counts.write().prune(horizon);
            return more;
        }
        nodes.sort_unstable();
        nodes.dedup();
        rels.sort_unstable();
        rels.dedup();
        let all_on_cur = base_h >= cur.ts;
        for id in rels {
            self.gc_rel(id, horizon, base_h, all_on_cur && !cur.has_rel(id), all_on_cur, &cur);
        }
        let pairs = self.schema.read().pairs();
        // Index entries of versions that only the base now holds may go if every live base
        // indexes the pair (otherwise the delta index is the only index of those rows).
        let base_indexed: Vec<Target> =
            pairs.iter().filter(|t| all_on_cur && cur.indexes(t)).cloned().collect();
        let mut label_drops: Vec<(u32, u64)> = Vec::new();
        for id in nodes {
            let absent = all_on_cur && !cur.has_node(id);
            self.gc_node(id, horizon, base_h, absent, &pairs, &base_indexed, &mut label_drops);
        }
        if !label_drops.is_empty() {
            // One write lock for the whole step, not one per node.
            let mut ls = self.label_sets.write();
            for (l, id) in label_drops {
                if let Some(set) = ls.get_mut(&l) {
                    set.remove(id);
                }
            }
        }
        self.counts.write().prune(horizon);
        if folded && all_on_cur {
            self.purge_secondary(&cur, &pairs);
        }
        more
    }

    /// After a fold: the delta's label, type and index sets keep only entities that still have
    /// delta slots (the base answers for the rest).
    pub(super) fn purge_secondary(&self, cur: &Base, pairs: &[Target]) {
        let has_node = |id: &u64| self.nodes.read(*id, |_| ()).is_some();
        let has_rel = |id: &u64| self.rels.read(*id, |_| ()).is_some();
        {
            let mut ls = self.label_sets.write();
            for set in ls.values_mut() {
                set.retain(|id| has_node(&id));
            }
            ls.retain(|_, s| !s.is_empty());
        }
        {
            let mut ts = self.type_sets.write();
            for set in ts.values_mut() {
                set.retain(|id| has_rel(&id));
            }
            ts.retain(|_, s| !s.is_empty());
        }
        {
            let mut schema = self.schema.write();
            for t in pairs {
                if !cur.indexes(t) {
                    continue;
                }
                schema.retain_entries(t, has_node);
                // Every reader is on a base that indexes the target itself.
                schema.parts.remove(t);
            }
        }
        self.nodes.shrink();
        self.rels.shrink();
    }

    pub(super) fn gc_rel(
        &self,
        id: u64,
        horizon: u64,
        base_h: u64,
        absent: bool,
        all_on_cur: bool,
        cur: &Base,
    ) {
        let removed = self
            .rels
            .write(id, |slot| {
                let Some(s) = slot.as_mut() else { return (Vec::new(), false, Vec::new()) };
                let removed = prune_chain(&mut s.chain, horizon, base_h, absent);
                let remaining: Vec<Arc<RelData>> =
                    s.chain.iter().filter_map(|(_, d)| d.clone()).collect();
                let gone = s.chain.is_empty();
                if gone {
                    *slot = None;
                }
                (removed, gone, remaining)
            })
            .unwrap_or_default();
        let (removed, gone, remaining) = removed;
        // Relationship index entries only dropped versions needed: readers (all on the
        // current base) see a remaining version or the current base row.
        if all_on_cur && !removed.is_empty() && !self.schema.read().rel_maps.is_empty() {
            let base_row = cur.rel(id).map(|b| b.to_data());
            let mut schema = self.schema.write();
            let targets: Vec<Target> = schema.rel_maps.keys().cloned().collect();
            for t in &targets {
                let keep = |k: &IndexKey| {
                    remaining.iter().any(|r| r.key_for(t.0, &t.1).as_ref() == Some(k))
                        || base_row.as_ref().and_then(|b| b.key_for(t.0, &t.1)).as_ref() == Some(k)
                };
                for d in removed.iter().flatten() {
                    if let Some(k) = d.key_for(t.0, &t.1) {
                        if !keep(&k) {
                            schema.rel_entry(t, k, id, false);
                        }
                    }
                }
            }
        }
        if !gone {
            return;
        }
        let Some(r) = removed.iter().flatten().next() else { return };
        let mut ts = self.type_sets.write();
        if let Some(set) = ts.get_mut(&r.ty) {
            set.remove(id);
        }
        drop(ts);
        if !absent {
            // Folded into every live base: its delta adjacency entries are at most `base_h`
            // old and `gc_node` drops them in one pass per node (detaching them one by one
            // here would be quadratic in the degree).
            return;
        }
        // Deleted and in no live base: drop its delta adjacency entries; a node slot left with
        // nothing at all goes too.
        let detach = |slot: &mut Option<NodeSlot>, out: bool| {
            if let Some(s) = slot.as_mut() {
                if out {
                    s.out.retain(|a| a.rel != id);
                } else {
                    s.inc.retain(|a| a.rel != id);
                }
                if s.chain.is_empty() && s.out.is_empty() && s.inc.is_empty() {
                    *slot = None;
                }
            }
        };
        self.nodes.write(r.start, |s| detach(s, true));
        self.nodes.write(r.end, |s| detach(s, false));
    }

    /// Prunes one node's chain and adjacency; label-set entries only the dropped versions
    /// needed are appended to `label_drops` (removed by the caller under one lock).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gc_node(
        &self,
        id: u64,
        horizon: u64,
        base_h: u64,
        absent: bool,
        pairs: &[Target],
        base_indexed: &[Target],
        label_drops: &mut Vec<(u32, u64)>,
    ) {
        let Some((removed, remaining)) = self.nodes.write(id, |slot| {
            let Some(s) = slot.as_mut() else { return (Vec::new(), Vec::new()) };
            let removed = prune_chain(&mut s.chain, horizon, base_h, absent);
            // What is left only matters when something was dropped (most calls drop nothing,
            // or drop the one version of a node the base now holds, leaving nothing).
            let remaining: Vec<Arc<NodeData>> = if removed.iter().any(Option::is_some) {
                s.chain.iter().filter_map(|(_, d)| d.clone()).collect()
            } else {
                Vec::new()
            };
            // Relationships created at or before the base horizon are in every live base CSR.
            s.out.retain(|a| a.ts > base_h);
            s.inc.retain(|a| a.ts > base_h);
            if s.chain.is_empty() && s.out.is_empty() && s.inc.is_empty() {
                *slot = None;
            } else if s.out.capacity() > 2 * s.out.len() + 4
                || s.inc.capacity() > 2 * s.inc.len() + 4
            {
                s.out.shrink_to_fit();
                s.inc.shrink_to_fit();
            }
            (removed, remaining)
        }) else {
            return;
        };
        // Read in place (no second vector per collected node: a fold collects every node it
        // folded, hundreds of thousands during a bulk load).
        if removed.iter().all(Option::is_none) {
            return;
        }
        let removed = removed.iter().flatten();
        // Label sets: base rows are found through the base's label bitsets, so an entry only
        // a dropped version needed can always go. (A node has few labels and versions: plain
        // scans, no hash sets.)
        let first = label_drops.len();
        for d in removed.clone() {
            for l in &d.labels {
                let kept = remaining.iter().any(|r| r.labels.contains(l));
                if !kept && !label_drops[first..].iter().any(|(x, _)| x == l) {
                    label_drops.push((*l, id));
                }
            }
        }
        // Index entries: a reader that finds no delta version at its snapshot falls back to a
        // base, whose row is the newest dropped version; that may only be relied on when every
        // live base indexes the target (otherwise the entries stay, as a re-checked superset,
        // until a base indexes it).
        let mut stale: Vec<(Target, IndexKey)> = Vec::new();
        for t in pairs {
            if !absent && !base_indexed.contains(t) {
                continue;
            }
            for d in removed.clone() {
                if let Some(key) = d.key_for(t.0, &t.1) {
                    if !remaining.iter().any(|r| r.key_for(t.0, &t.1).as_ref() == Some(&key)) {
                        stale.push((t.clone(), key));
                    }
                }
            }
        }
        if !stale.is_empty() {
            let mut schema = self.schema.write();
            for (t, key) in stale {
                schema.remove_entry(&t, key, id);
            }
        }
    }
}
