//! Schema: equality indexes and unique constraints on `(label, property key)`.
//!
//! Index entries are not versioned: an entry `value -> node` is added whenever a committed
//! version of the node carries that value, and only removed by GC once no retained version does.
//! Lookups therefore return a superset which the caller re-checks against its snapshot.

use std::collections::{BTreeSet, HashMap};

use crate::value::IndexKey;
use crate::TokenId;

/// What kind of schema rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexKind {
    /// A plain (equality-capable) index, listed by Neo4j as type `RANGE`.
    Range,
    /// A uniqueness constraint (with its own backing index).
    Uniqueness,
}

impl IndexKind {
    /// `RANGE` or `UNIQUENESS`, as `SHOW INDEXES`/`SHOW CONSTRAINTS` print it.
    pub fn type_name(self) -> &'static str {
        match self {
            IndexKind::Range => "RANGE",
            IndexKind::Uniqueness => "UNIQUENESS",
        }
    }
}

/// A schema rule as listed to users.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexInfo {
    pub name: String,
    pub kind: IndexKind,
    pub label: TokenId,
    /// Property keys (exactly one in this version).
    pub properties: Vec<TokenId>,
    /// Always `"ONLINE"`: indexes are built synchronously.
    pub state: &'static str,
}

#[derive(Clone, Debug)]
pub(crate) struct IndexDef {
    pub name: String,
    pub label: u32,
    pub key: u32,
    pub unique: bool,
    /// Schema version at which the rule was created (transactions that started earlier did not
    /// track their own writes for it).
    pub since: u64,
}

/// A set of node ids: a sorted vector while small, a B-tree when a key is shared by many nodes.
#[derive(Debug)]
pub(crate) enum IdSet {
    Small(Vec<u64>),
    Large(BTreeSet<u64>),
}

impl IdSet {
    pub fn insert(&mut self, id: u64) {
        match self {
            IdSet::Small(v) => {
                if let Err(pos) = v.binary_search(&id) {
                    v.insert(pos, id);
                    if v.len() > 64 {
                        *self = IdSet::Large(v.iter().copied().collect());
                    }
                }
            }
            IdSet::Large(s) => {
                s.insert(id);
            }
        }
    }
    pub fn remove(&mut self, id: u64) {
        match self {
            IdSet::Small(v) => {
                if let Ok(pos) = v.binary_search(&id) {
                    v.remove(pos);
                }
            }
            IdSet::Large(s) => {
                s.remove(&id);
            }
        }
    }
    pub fn retain(&mut self, f: impl Fn(&u64) -> bool) {
        match self {
            IdSet::Small(v) => v.retain(|x| f(x)),
            IdSet::Large(s) => s.retain(|x| f(x)),
        }
    }
    pub fn is_empty(&self) -> bool {
        match self {
            IdSet::Small(v) => v.is_empty(),
            IdSet::Large(s) => s.is_empty(),
        }
    }
    pub fn to_vec(&self) -> Vec<u64> {
        match self {
            IdSet::Small(v) => v.clone(),
            IdSet::Large(s) => s.iter().copied().collect(),
        }
    }
}

/// All schema rules and the index data behind them. One map per `(label, key)` pair, shared by
/// every rule on that pair.
#[derive(Default)]
pub(crate) struct Schema {
    pub defs: Vec<IndexDef>,
    pub maps: HashMap<(u32, u32), HashMap<IndexKey, IdSet>>,
    pub version: u64,
}

impl Schema {
    /// Earliest schema version at which `(label, key)` became indexed.
    pub fn indexed_since(&self, label: u32, key: u32) -> Option<u64> {
        self.defs.iter().filter(|d| d.label == label && d.key == key).map(|d| d.since).min()
    }

    pub fn has_unique(&self) -> bool {
        self.defs.iter().any(|d| d.unique)
    }

    pub fn insert_entry(&mut self, label: u32, key: u32, k: IndexKey, id: u64) {
        if let Some(m) = self.maps.get_mut(&(label, key)) {
            m.entry(k).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
        }
    }

    pub fn remove_entry(&mut self, label: u32, key: u32, k: &IndexKey, id: u64) {
        if let Some(m) = self.maps.get_mut(&(label, key)) {
            if let Some(set) = m.get_mut(k) {
                set.remove(id);
                if set.is_empty() {
                    m.remove(k);
                }
            }
        }
    }

    pub fn lookup(&self, label: u32, key: u32, k: &IndexKey) -> Vec<u64> {
        self.maps.get(&(label, key)).and_then(|m| m.get(k)).map(IdSet::to_vec).unwrap_or_default()
    }

    /// The `(label, key)` pairs that have index data.
    pub fn pairs(&self) -> Vec<(u32, u32)> {
        self.maps.keys().copied().collect()
    }

    pub fn list(&self) -> Vec<IndexInfo> {
        let mut out: Vec<IndexInfo> = self
            .defs
            .iter()
            .map(|d| IndexInfo {
                name: d.name.clone(),
                kind: if d.unique { IndexKind::Uniqueness } else { IndexKind::Range },
                label: d.label,
                properties: vec![d.key],
                state: "ONLINE",
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Drops a rule by name and, if no other rule uses its pair, the index data.
    pub fn drop_def(&mut self, name: &str) -> bool {
        let Some(pos) = self.defs.iter().position(|d| d.name == name) else {
            return false;
        };
        let d = self.defs.remove(pos);
        if !self.defs.iter().any(|o| o.label == d.label && o.key == d.key) {
            self.maps.remove(&(d.label, d.key));
        }
        self.version += 1;
        true
    }
}

/// The default name of a rule: `index_<hash>` / `constraint_<hash>` over its definition.
pub(crate) fn default_name(unique: bool, label: u32, key: u32) -> String {
    let kind = if unique { "constraint" } else { "index" };
    let h = crc32c::crc32c(format!("{kind}:{label}:{key}").as_bytes());
    format!("{kind}_{h:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idset_grows_and_shrinks() {
        let mut s = IdSet::Small(Vec::new());
        for i in (0..200).rev() {
            s.insert(i);
        }
        assert!(matches!(s, IdSet::Large(_)));
        assert_eq!(s.to_vec(), (0..200).collect::<Vec<_>>());
        for i in 0..200 {
            s.remove(i);
        }
        assert!(s.is_empty());
    }

    #[test]
    fn names_are_stable_and_distinct() {
        assert_eq!(default_name(false, 1, 2), default_name(false, 1, 2));
        assert_ne!(default_name(false, 1, 2), default_name(true, 1, 2));
        assert!(default_name(true, 1, 2).starts_with("constraint_"));
    }
}
