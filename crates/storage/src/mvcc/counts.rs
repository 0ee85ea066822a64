//! Count store: node counts per label and relationship counts per key, as short `(ts, count)`
//! histories, and the per-commit [`CountDelta`].

use std::collections::HashMap;

use rustc_hash::FxHashMap;

/// "Any label" / "any type" in a relationship count key.
pub(crate) const ANY: u32 = u32::MAX;

/// Node-count changes of one transaction (and, computed at commit, relationship counts).
#[derive(Clone, Debug, Default)]
pub(crate) struct CountDelta {
    pub total: i64,
    pub labels: FxHashMap<u32, i64>,
    /// `(start label, type, end label)` with [`ANY`] for "any"; at most one label is set.
    pub rels: FxHashMap<(u32, u32, u32), i64>,
}

impl CountDelta {
    pub fn label(&mut self, l: u32, d: i64) {
        *self.labels.entry(l).or_insert(0) += d;
    }

    pub(super) fn rel_key(&mut self, k: (u32, u32, u32), d: i64) {
        *self.rels.entry(k).or_insert(0) += d;
    }

    /// One relationship of type `ty` from a node with labels `start` to one with `end`
    /// appears (`d = 1`) or disappears (`d = -1`) in every count key it matches.
    pub fn rel(&mut self, start: &[u32], ty: u32, end: &[u32], d: i64) {
        for t in [ty, ANY] {
            self.rel_key((ANY, t, ANY), d);
            for l in start {
                self.rel_key((*l, t, ANY), d);
            }
            for l in end {
                self.rel_key((ANY, t, *l), d);
            }
        }
    }
}

/// Count histories `(commit ts, count)`, so counts at any live snapshot are a binary search.
#[derive(Default)]
pub(crate) struct Counts {
    pub(super) total: Vec<(u64, i64)>,
    pub(super) labels: HashMap<u32, Vec<(u64, i64)>>,
    pub(super) rels: HashMap<(u32, u32, u32), Vec<(u64, i64)>>,
}

pub(super) fn hist_at(h: &[(u64, i64)], ts: u64) -> i64 {
    let p = h.partition_point(|(t, _)| *t <= ts);
    if p == 0 {
        0
    } else {
        h[p - 1].1
    }
}

pub(super) fn hist_add(h: &mut Vec<(u64, i64)>, ts: u64, d: i64) {
    match h.last_mut() {
        Some(last) if last.0 == ts => last.1 += d,
        last => {
            let cur = last.map_or(0, |x| x.1);
            h.push((ts, cur + d));
        }
    }
}

pub(super) fn hist_prune(h: &mut Vec<(u64, i64)>, horizon: u64) {
    let p = h.partition_point(|(t, _)| *t <= horizon);
    if p > 1 {
        h.drain(..p - 1);
    }
}

impl Counts {
    pub fn at(&self, label: Option<u32>, ts: u64) -> i64 {
        match label {
            None => hist_at(&self.total, ts),
            Some(l) => self.labels.get(&l).map_or(0, |h| hist_at(h, ts)),
        }
    }
    /// Relationships matching `(start label, type, end label)` ([`ANY`] = any) at `ts`.
    pub fn rels_at(&self, key: (u32, u32, u32), ts: u64) -> i64 {
        self.rels.get(&key).map_or(0, |h| hist_at(h, ts))
    }
    pub fn apply(&mut self, ts: u64, d: &CountDelta) {
        if d.total != 0 {
            hist_add(&mut self.total, ts, d.total);
        }
        for (l, n) in &d.labels {
            if *n != 0 {
                hist_add(self.labels.entry(*l).or_default(), ts, *n);
            }
        }
        for (k, n) in &d.rels {
            if *n != 0 {
                hist_add(self.rels.entry(*k).or_default(), ts, *n);
            }
        }
    }
    pub(super) fn prune(&mut self, horizon: u64) {
        hist_prune(&mut self.total, horizon);
        for h in self.labels.values_mut().chain(self.rels.values_mut()) {
            hist_prune(h, horizon);
        }
    }
}
