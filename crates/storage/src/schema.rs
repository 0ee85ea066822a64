//! Schema: indexes (single-property and composite) and uniqueness, key and existence
//! constraints on `(label, property keys)` or, for relationships, `(type, property keys)`.
//!
//! Index entries are not versioned: an entry `value -> node` is added whenever a committed
//! version of the node carries that value, and only removed by GC once no retained version does.
//! Lookups therefore return a superset which the caller re-checks against its snapshot.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use rustc_hash::FxHashMap;

pub use arbor_model::property_type::PropertyTypes;

use crate::base::IndexPart;
use crate::point_index::PointBox;
pub(crate) use crate::progress::Progress;
use crate::text_index::{TextMatch, Trigrams};
use crate::types::TokenId;
use crate::value::{IndexKey, KeyRange};

/// What kind of schema rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexKind {
    /// A plain index (equality, range and prefix seeks), listed by Neo4j as type `RANGE`.
    Range,
    /// A uniqueness constraint (with its own backing index).
    Uniqueness,
    /// A node key: unique and every key present (with its own backing index). On
    /// relationships (`rel`), a relationship key.
    NodeKey,
    /// Every node with the label has the property (no index).
    Existence,
    /// A vector index (`crate::vector`): its `keys` hold the property and the settings.
    Vector,
    /// A TEXT index (provider `text-2.0`): single property, used by string seeks. Its values
    /// live in the target's shared map, and its trigram postings (`crate::text_index`) in
    /// [`Schema::texts`] and the base: `CONTAINS` / `ENDS WITH` seek through them.
    Text,
    /// A POINT index (provider `point-1.0`): single property, used by point seeks.
    Point,
    /// A property-type constraint: `keys` hold the property and the allowed types' bits
    /// ([`PropertyTypes`]); no index data.
    PropertyType,
}

impl IndexKind {
    /// `RANGE`, `UNIQUENESS`, `NODE_KEY` or `NODE_PROPERTY_EXISTENCE`, as `SHOW INDEXES` /
    /// `SHOW CONSTRAINTS` print it for a node rule (see [`IndexKind::rel_type_name`]).
    pub fn type_name(self) -> &'static str {
        match self {
            IndexKind::Range => "RANGE",
            IndexKind::Uniqueness => "UNIQUENESS",
            IndexKind::NodeKey => "NODE_KEY",
            IndexKind::Existence => "NODE_PROPERTY_EXISTENCE",
            IndexKind::Vector => "VECTOR",
            IndexKind::Text => "TEXT",
            IndexKind::Point => "POINT",
            IndexKind::PropertyType => "NODE_PROPERTY_TYPE",
        }
    }

    /// The `SHOW CONSTRAINTS` type of a relationship rule: `RELATIONSHIP_UNIQUENESS`,
    /// `RELATIONSHIP_KEY` or `RELATIONSHIP_PROPERTY_EXISTENCE` (`RANGE` for an index).
    pub fn rel_type_name(self) -> &'static str {
        match self {
            IndexKind::Range => "RANGE",
            IndexKind::Uniqueness => "RELATIONSHIP_UNIQUENESS",
            IndexKind::NodeKey => "RELATIONSHIP_KEY",
            IndexKind::Existence => "RELATIONSHIP_PROPERTY_EXISTENCE",
            IndexKind::Vector => "VECTOR",
            IndexKind::Text => "TEXT",
            IndexKind::Point => "POINT",
            IndexKind::PropertyType => "RELATIONSHIP_PROPERTY_TYPE",
        }
    }

    /// Whether this is a constraint (as opposed to a plain index).
    pub fn is_constraint(self) -> bool {
        matches!(
            self,
            IndexKind::Uniqueness
                | IndexKind::NodeKey
                | IndexKind::Existence
                | IndexKind::PropertyType
        )
    }

    /// Whether the rule has property index data (seekable by value: everything but existence
    /// and property-type constraints and vector indexes, whose data is `crate::vector`'s).
    pub fn has_index(self) -> bool {
        !matches!(self, IndexKind::Existence | IndexKind::Vector | IndexKind::PropertyType)
    }

    /// The index type `SHOW INDEXES` lists (`RANGE` for the backing index of a uniqueness or
    /// key constraint), `None` for a rule without an index.
    pub fn index_type(self) -> Option<&'static str> {
        match self {
            IndexKind::Vector => Some("VECTOR"),
            IndexKind::Text => Some("TEXT"),
            IndexKind::Point => Some("POINT"),
            k if k.has_index() => Some("RANGE"),
            _ => None,
        }
    }

    /// Whether the rule forbids two nodes sharing a key.
    pub fn unique(self) -> bool {
        matches!(self, IndexKind::Uniqueness | IndexKind::NodeKey)
    }

    /// Whether the rule requires every key to be present.
    pub fn requires(self) -> bool {
        matches!(self, IndexKind::NodeKey | IndexKind::Existence)
    }

    /// The byte stored in the WAL and checkpoints (0 and 1 are the original range/unique).
    pub(crate) fn code(self) -> u8 {
        match self {
            IndexKind::Range => 0,
            IndexKind::Uniqueness => 1,
            IndexKind::NodeKey => 2,
            IndexKind::Existence => 3,
            IndexKind::Vector => 4,
            IndexKind::Text => 5,
            IndexKind::Point => 6,
            IndexKind::PropertyType => 7,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<IndexKind> {
        Some(match c {
            0 => IndexKind::Range,
            1 => IndexKind::Uniqueness,
            2 => IndexKind::NodeKey,
            3 => IndexKind::Existence,
            4 => IndexKind::Vector,
            5 => IndexKind::Text,
            6 => IndexKind::Point,
            7 => IndexKind::PropertyType,
            _ => return None,
        })
    }
}

/// A schema rule as listed to users.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexInfo {
    pub name: String,
    pub kind: IndexKind,
    pub label: TokenId,
    /// Property keys, in definition order.
    pub properties: Vec<TokenId>,
    /// `"POPULATING"` while an index on existing data is being built in the background (also
    /// one a recovery replayed from the log, filled after the open), then `"ONLINE"`.
    pub state: &'static str,
    /// Share of the existing nodes the population has indexed so far (100 when online).
    pub population_percent: f64,
    /// A relationship property index: `label` is then the relationship type.
    pub relationship: bool,
    /// The settings of a vector index (`properties` then holds its one property).
    pub vector: Option<crate::vector::VectorSettings>,
    /// Why an index failed (`SHOW INDEXES`' `failureMessage`); empty when it did not.
    pub failure: String,
    /// The allowed types of a property-type constraint (`properties` then holds its one
    /// property).
    pub property_type: Option<PropertyTypes>,
    /// The rule's position in creation order (0 for the oldest rule that still exists):
    /// `SHOW INDEXES` numbers its `id` column from it, as Neo4j numbers rules.
    pub id: u64,
    /// Seeks and scans through the index since the store was opened (`readCount`).
    pub read_count: u64,
    /// When the last of them ran, milliseconds since the epoch (`lastRead`).
    pub last_read_ms: Option<i64>,
    /// When the first of them ran (`trackedSince`).
    pub tracked_since_ms: Option<i64>,
    /// A POINT index's settings as given at creation ([`POINT_SETTINGS`] values: min and max
    /// of cartesian, cartesian-3d, wgs-84, wgs-84-3d); `None`: Neo4j's defaults.
    pub point_config: Option<Vec<f64>>,
}

/// What an index covers: a label and one or more property keys (in definition order). A node
/// has an entry when it has the label and every key; a composite key is a list of the values.
pub(crate) type Target = (u32, Vec<u32>);

#[derive(Clone, Debug)]
pub(crate) struct IndexDef {
    pub name: String,
    pub label: u32,
    pub keys: Vec<u32>,
    pub kind: IndexKind,
    /// Schema version at which the rule was created (transactions that started earlier did not
    /// track their own writes for it).
    pub since: u64,
    /// Whether the index is complete (seeks use only online indexes).
    pub progress: Arc<Progress>,
    /// On relationships of type `label` (index data kept in the delta only, see
    /// `Schema::rel_maps`).
    pub rel: bool,
    /// A POINT index's settings given at creation (empty: Neo4j's defaults), see
    /// [`point_config_words`]; logged after the keys.
    pub config: Vec<u32>,
}

impl IndexDef {
    pub fn target(&self) -> Target {
        (self.label, self.keys.clone())
    }

    /// A rule as the WAL and checkpoints hold it: a POINT index's settings follow its one key.
    pub fn from_logged(
        name: String,
        label: u32,
        mut keys: Vec<u32>,
        kind: IndexKind,
        rel: bool,
        progress: Arc<Progress>,
    ) -> IndexDef {
        let config = match kind {
            IndexKind::Point if keys.len() > 1 => keys.split_off(1),
            _ => Vec::new(),
        };
        IndexDef { name, label, keys, kind, since: 0, progress, rel, config }
    }

    /// The keys as logged (see [`IndexDef::from_logged`]).
    pub fn logged_keys(&self) -> Vec<u32> {
        let mut k = self.keys.clone();
        k.extend_from_slice(&self.config);
        k
    }
}

/// The number of settings of a POINT index: min and max of cartesian (2), cartesian-3d (3),
/// wgs-84 (2) and wgs-84-3d (3), in that order.
pub const POINT_SETTINGS: usize = 20;

/// A POINT index's settings as words for the rule's logged keys (two per value).
pub(crate) fn point_config_words(values: &[f64]) -> Vec<u32> {
    values.iter().flat_map(|v| [(v.to_bits() >> 32) as u32, v.to_bits() as u32]).collect()
}

/// The settings back from [`point_config_words`] (`None`: not a full set).
fn point_config_values(words: &[u32]) -> Option<Vec<f64>> {
    (words.len() == 2 * POINT_SETTINGS).then(|| {
        words.chunks(2).map(|w| f64::from_bits(u64::from(w[0]) << 32 | u64::from(w[1]))).collect()
    })
}

/// Which index a seek counts its read on: the lowest rank among the online indexes of the
/// pair (TEXT for a string seek, POINT for a point seek, else RANGE, else a constraint's).
fn read_rank(k: IndexKind, text: bool, point: bool) -> u8 {
    match k {
        IndexKind::Text if text => 0,
        IndexKind::Point if point => 0,
        IndexKind::Range => 1,
        IndexKind::Uniqueness | IndexKind::NodeKey => 2,
        _ => 3,
    }
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
    /// FxHash, here and on the base's per-target maps and a transaction's write-set maps: a
    /// seek hashes its `(label, keys)` target on every call, and SipHash took ~270
    /// instructions of it (a MATCH + MATCH + CREATE row of a relationship load does two).
    pub maps: FxHashMap<Target, BTreeMap<IndexKey, IdSet>>,
    /// Relationship property indexes, `(type, keys)`: complete in themselves (bases do not
    /// index relationships), entries pruned only by relationship GC.
    pub rel_maps: FxHashMap<Target, BTreeMap<IndexKey, IdSet>>,
    pub version: u64,
    /// Names of constraints installed (and enforced) but still being validated against the
    /// existing data: not logged yet, so checkpoints leave them out.
    pub pending: HashSet<String>,
    /// The vector indexes' state, by rule name (`crate::vector`).
    pub vectors: crate::vector::VectorIndexes,
    /// Trigram postings of the string keys of `maps[t]`, for every node target `t` with a TEXT
    /// index; kept in step with the map's keys by every change of them.
    pub texts: HashMap<Target, Trigrams<Arc<str>>>,
    /// Per node target, the hash-ordered index of one base's rows built by an external sort
    /// (`base::index_build`) when the rule was created over existing rows: equality seeks read
    /// it beside `maps[t]` (which then holds only delta versions' entries) until a base indexes
    /// the target itself and every reader is on such a base (`Core::purge_secondary`).
    pub parts: FxHashMap<Target, Arc<IndexPart>>,
}

impl Schema {
    /// Earliest schema version at which `target` became indexed.
    pub fn indexed_since(&self, label: u32, keys: &[u32]) -> Option<u64> {
        self.defs
            .iter()
            .filter(|d| {
                !d.rel
                    && d.kind.has_index()
                    && d.label == label
                    && d.keys == keys
                    && d.progress.is_online()
            })
            .map(|d| d.since)
            .min()
    }

    /// Counts a read through the online index on `(label, keys)` (`rel`: a relationship
    /// index) that a seek of that shape would use: a TEXT index for a string seek (`text`), a
    /// POINT index for a point seek (`point`), else a RANGE index or a constraint's.
    pub fn note_read(&self, rel: bool, label: u32, keys: &[u32], text: bool, point: bool) {
        let used = self
            .defs
            .iter()
            .filter(|d| {
                d.rel == rel
                    && d.kind.has_index()
                    && d.label == label
                    && d.keys == keys
                    && d.progress.is_online()
            })
            .min_by_key(|d| read_rank(d.kind, text, point));
        if let Some(d) = used {
            d.progress.note_read();
        }
    }

    /// [`Schema::indexed_since`] and [`Schema::note_read`] of a node equality seek in one
    /// pass over the rules (a relationship load seeks twice per row).
    pub fn seek_since(&self, label: u32, keys: &[u32], point: bool) -> Option<u64> {
        let mut since: Option<u64> = None;
        let mut used: Option<(u8, &IndexDef)> = None;
        for d in &self.defs {
            if d.rel
                || !d.kind.has_index()
                || d.label != label
                || d.keys != keys
                || !d.progress.is_online()
            {
                continue;
            }
            since = Some(since.map_or(d.since, |s| s.min(d.since)));
            let r = read_rank(d.kind, false, point);
            // The first of the best rank, as `min_by_key` in `note_read`.
            if used.is_none_or(|(b, _)| r < b) {
                used = Some((r, d));
            }
        }
        if let Some((_, d)) = used {
            d.progress.note_read();
        }
        since
    }

    /// Whether any node rule forbids duplicates.
    pub fn has_unique(&self) -> bool {
        self.defs.iter().any(|d| !d.rel && d.kind.unique())
    }

    /// Whether an online relationship index covers `(type, keys)`.
    pub fn rel_indexed(&self, ty: u32, keys: &[u32]) -> bool {
        self.defs.iter().any(|d| {
            d.rel && d.kind.has_index() && d.label == ty && d.keys == keys && d.progress.is_online()
        })
    }

    /// Adds or removes a relationship index entry.
    pub fn rel_entry(&mut self, t: &Target, k: IndexKey, id: u64, add: bool) {
        let Some(m) = self.rel_maps.get_mut(t) else { return };
        if add {
            m.entry(k).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
        } else if let Some(set) = m.get_mut(&k) {
            set.remove(id);
            if set.is_empty() {
                m.remove(&k);
            }
        }
    }

    /// Targets of the node rules that forbid duplicates.
    pub fn unique_targets(&self) -> Vec<Target> {
        self.defs.iter().filter(|d| !d.rel && d.kind.unique()).map(IndexDef::target).collect()
    }

    /// `(type, keys)` of the relationship rules that forbid duplicates (uniqueness and key).
    pub fn rel_unique_targets(&self) -> Vec<Target> {
        self.defs.iter().filter(|d| d.rel && d.kind.unique()).map(IndexDef::target).collect()
    }

    /// Visible-or-not candidates for relationships of target `t` with key `k` (the shared
    /// index only; a superset the caller re-checks).
    pub fn rel_lookup(&self, t: &Target, k: &IndexKey) -> Vec<u64> {
        self.rel_maps.get(t).and_then(|m| m.get(k)).map(IdSet::to_vec).unwrap_or_default()
    }

    /// `(relationship, label or type, property, allowed types)` of every property-type
    /// constraint.
    pub fn type_rules(&self) -> Vec<(bool, u32, u32, PropertyTypes)> {
        self.defs
            .iter()
            .filter(|d| d.kind == IndexKind::PropertyType && d.keys.len() == 2)
            .map(|d| (d.rel, d.label, d.keys[0], PropertyTypes(d.keys[1])))
            .collect()
    }

    /// Targets of the rules that require their keys.
    pub fn required_targets(&self) -> Vec<(Target, IndexKind)> {
        self.defs
            .iter()
            .filter(|d| !d.rel && d.kind.requires())
            .map(|d| (d.target(), d.kind))
            .collect()
    }

    /// `(type, keys)` and kind of the relationship rules that require their keys (existence
    /// and relationship key constraints).
    pub fn rel_required(&self) -> Vec<(Target, IndexKind)> {
        self.defs
            .iter()
            .filter(|d| d.rel && d.kind.requires())
            .map(|d| (d.target(), d.kind))
            .collect()
    }

    pub fn insert_entry(&mut self, t: &Target, k: IndexKey, id: u64) {
        if let Some(m) = self.maps.get_mut(t) {
            if let (Some(text), IndexKey::Str(s)) = (self.texts.get_mut(t), &k) {
                if !m.contains_key(&k) {
                    text.add(s, s);
                }
            }
            m.entry(k).or_insert_with(|| IdSet::Small(Vec::new())).insert(id);
        }
    }

    pub fn remove_entry(&mut self, t: &Target, k: IndexKey, id: u64) {
        let Some(m) = self.maps.get_mut(t) else { return };
        // One search of the ordered map for both the id's removal and the key's (GC after a
        // fold removes every folded node's entries).
        let std::collections::btree_map::Entry::Occupied(mut e) = m.entry(k) else { return };
        e.get_mut().remove(id);
        if e.get().is_empty() {
            let (k, _) = e.remove_entry();
            if let (Some(text), IndexKey::Str(s)) = (self.texts.get_mut(t), &k) {
                text.remove(s, s);
            }
        }
    }

    /// Keeps the entries of node target `t` whose id passes `keep` (GC), forgetting the
    /// string keys left without ids in the TEXT postings too.
    pub fn retain_entries(&mut self, t: &Target, keep: impl Fn(&u64) -> bool) {
        let Some(m) = self.maps.get_mut(t) else { return };
        let mut gone: Vec<Arc<str>> = Vec::new();
        m.retain(|k, set| {
            set.retain(&keep);
            if set.is_empty() {
                if let IndexKey::Str(s) = k {
                    gone.push(s.clone());
                }
            }
            !set.is_empty()
        });
        if let Some(text) = self.texts.get_mut(t) {
            for s in gone {
                text.remove(&s, &s);
            }
        }
    }

    /// (Re)builds the TEXT postings of node target `t` from its map's string keys (a TEXT
    /// index was created on it, or entries were added to the map wholesale).
    pub fn install_text(&mut self, t: &Target) {
        let mut text = Trigrams::default();
        if let Some(m) = self.maps.get(t) {
            for k in m.keys() {
                if let IndexKey::Str(s) = k {
                    text.add(s, s);
                }
            }
        }
        self.texts.insert(t.clone(), text);
    }

    /// Whether an online TEXT index covers the node target `(label, [key])`.
    pub fn text_indexed(&self, label: u32, key: u32) -> bool {
        self.defs.iter().any(|d| {
            !d.rel
                && d.kind == IndexKind::Text
                && d.label == label
                && d.keys == [key]
                && d.progress.is_online()
        })
    }

    /// Ids of the shared map's entries of node target `t` whose string matches `m`
    /// (appended to `out`, unsorted), through the TEXT postings.
    pub fn text_lookup(&self, t: &Target, m: &TextMatch, out: &mut Vec<u64>) {
        let Some(map) = self.maps.get(t) else { return };
        let mut add = |s: &Arc<str>| {
            if m.matches(s) {
                if let Some(set) = map.get(&IndexKey::Str(s.clone())) {
                    match set {
                        IdSet::Small(v) => out.extend_from_slice(v),
                        IdSet::Large(v) => out.extend(v.iter().copied()),
                    }
                }
            }
        };
        match self.texts.get(t).and_then(|x| x.candidates(m)) {
            Some(c) => c.into_iter().for_each(&mut add),
            None => {
                let strings = KeyRange::prefix("");
                for k in map.range(strings.start()..) {
                    match k.0 {
                        IndexKey::Str(s) => add(s),
                        _ => break,
                    }
                }
            }
        }
    }

    /// Whether an online index of `kind` covers `(label or type, [key])` (`rel`: a
    /// relationship index).
    pub fn kind_indexed(&self, kind: IndexKind, rel: bool, label: u32, key: u32) -> bool {
        self.defs.iter().any(|d| {
            d.rel == rel
                && d.kind == kind
                && d.label == label
                && d.keys == [key]
                && d.progress.is_online()
        })
    }

    /// Ids of the shared map's entries of target `t` (`rel`: a relationship index) whose
    /// point lies inside one of `boxes` (appended to `out`, unsorted), along the points'
    /// Z-order.
    pub fn point_lookup(&self, rel: bool, t: &Target, boxes: &[PointBox], out: &mut Vec<u64>) {
        let maps = if rel { &self.rel_maps } else { &self.maps };
        let Some(m) = maps.get(t) else { return };
        for b in boxes {
            crate::point_index::map_ids(m, b, |set, out| out.extend(set.to_vec()), out);
        }
    }

    /// Ids of the relationship index `t`'s entries whose string matches `m` (appended to
    /// `out`, unsorted): a walk over the index's distinct strings, each checked exactly.
    pub fn rel_text_lookup(&self, t: &Target, m: &TextMatch, out: &mut Vec<u64>) {
        let Some(map) = self.rel_maps.get(t) else { return };
        let strings = KeyRange::prefix("");
        for (k, set) in map.range(strings.start()..) {
            match k {
                IndexKey::Str(s) if m.matches(s) => out.extend(set.to_vec()),
                IndexKey::Str(_) => {}
                _ => break,
            }
        }
    }

    /// The ids of `t`'s entries of key `k`, and whether they are complete (see
    /// [`Schema::lookup_into`]).
    pub fn lookup(&self, t: &Target, k: &IndexKey) -> (Vec<u64>, bool) {
        let mut out = Vec::new();
        let complete = self.lookup_into(t, k, &mut out);
        (out, complete)
    }

    /// [`Schema::lookup`] appended to `out` (no vector of its own). `false` if the target's
    /// index part could not be read: the caller must add every base row of the label.
    #[must_use]
    pub fn lookup_into(&self, t: &Target, k: &IndexKey, out: &mut Vec<u64>) -> bool {
        match self.maps.get(t).and_then(|m| m.get(k)) {
            Some(IdSet::Small(v)) => out.extend_from_slice(v),
            Some(IdSet::Large(s)) => out.extend(s.iter().copied()),
            None => {}
        }
        self.parts.get(t).is_none_or(|p| p.lookup(k, out))
    }

    /// Ids of every entry whose key lies in `r` (appended to `out`, unsorted).
    pub fn lookup_range(&self, t: &Target, r: &KeyRange, out: &mut Vec<u64>) {
        if let Some(m) = self.maps.get(t) {
            range_ids(m, r, out);
        }
    }

    /// Relationship ids of every entry of the relationship index `t` whose key lies in `r`
    /// (appended to `out`, unsorted).
    pub fn rel_lookup_range(&self, t: &Target, r: &KeyRange, out: &mut Vec<u64>) {
        if let Some(m) = self.rel_maps.get(t) {
            range_ids(m, r, out);
        }
    }

    /// The targets that have index data.
    pub fn pairs(&self) -> Vec<Target> {
        self.maps.keys().cloned().collect()
    }

    pub fn list(&self) -> Vec<IndexInfo> {
        let mut out: Vec<IndexInfo> = self
            .defs
            .iter()
            .enumerate()
            .map(|(id, d)| {
                let vector = (d.kind == IndexKind::Vector)
                    .then(|| crate::vector::VectorSettings::from_keys(&d.keys))
                    .flatten();
                let property_type = (d.kind == IndexKind::PropertyType)
                    .then(|| d.keys.get(1).map(|b| PropertyTypes(*b)))
                    .flatten();
                let ms = |a: &AtomicI64| Some(a.load(Ordering::Relaxed)).filter(|v| *v != 0);
                let failure = self.vectors.get(&d.name).and_then(|v| v.failure());
                IndexInfo {
                    id: id as u64,
                    name: d.name.clone(),
                    kind: d.kind,
                    label: d.label,
                    properties: match (&vector, property_type) {
                        (None, None) => d.keys.clone(),
                        _ => d.keys[..1].to_vec(),
                    },
                    state: match (&failure, d.progress.is_online()) {
                        (Some(_), _) => "FAILED",
                        (None, true) => "ONLINE",
                        (None, false) => "POPULATING",
                    },
                    population_percent: d.progress.percent(),
                    relationship: d.rel,
                    vector: vector.map(|(_, v)| v),
                    failure: failure.unwrap_or_default(),
                    property_type,
                    read_count: d.progress.reads.load(Ordering::Relaxed),
                    last_read_ms: ms(&d.progress.last_read_ms),
                    tracked_since_ms: ms(&d.progress.first_read_ms),
                    point_config: point_config_values(&d.config),
                }
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Drops a rule by name and, if no other rule uses its target, the index data.
    pub fn drop_def(&mut self, name: &str) -> bool {
        let Some(pos) = self.defs.iter().position(|d| d.name == name) else {
            return false;
        };
        let d = self.defs.remove(pos);
        self.vectors.remove(name);
        if d.kind == IndexKind::Text && !d.rel {
            self.texts.remove(&d.target());
        }
        let shared = |o: &IndexDef| {
            o.rel == d.rel && o.kind.has_index() && o.label == d.label && o.keys == d.keys
        };
        if !self.defs.iter().any(shared) {
            if d.rel {
                self.rel_maps.remove(&d.target());
            } else {
                self.maps.remove(&d.target());
                self.parts.remove(&d.target());
            }
        }
        self.version += 1;
        true
    }
}

/// Appends the ids of every entry of `m` whose key lies in `r`.
fn range_ids(m: &BTreeMap<IndexKey, IdSet>, r: &KeyRange, out: &mut Vec<u64>) {
    for (k, set) in m.range(r.start()..) {
        if r.past_end(k) {
            break;
        }
        if r.contains(k) {
            match set {
                IdSet::Small(v) => out.extend_from_slice(v),
                IdSet::Large(s) => out.extend(s.iter().copied()),
            }
        }
    }
}

/// Checks the keys of a rule about to be created: at least one, distinct; exactly one for
/// existence constraints and TEXT/POINT indexes; the property and valid type bits for a
/// property-type constraint.
pub(crate) fn check_rule_keys(kind: IndexKind, keys: &[u32]) -> arbor_model::Result<()> {
    let fail = |m: &str| Err(arbor_model::Error::argument(m));
    match kind {
        IndexKind::PropertyType if keys.len() != 2 || !PropertyTypes(keys[1]).is_valid() => {
            fail("a property-type constraint needs one property and its types")
        }
        IndexKind::PropertyType => Ok(()),
        _ if keys.is_empty() => fail("an index or constraint needs at least one property"),
        IndexKind::Existence | IndexKind::Text | IndexKind::Point if keys.len() != 1 => {
            fail("existence constraints and TEXT/POINT indexes take exactly one property")
        }
        _ => {
            let mut seen = keys.to_vec();
            seen.sort_unstable();
            seen.dedup();
            if seen.len() == keys.len() {
                Ok(())
            } else {
                fail("a property may appear only once in a schema rule")
            }
        }
    }
}

/// Whether two different rule kinds compete for the one RANGE index a schema may have (a
/// RANGE index, a uniqueness or a key constraint); other kinds live side by side.
pub(crate) fn shares_index_type(a: IndexKind, b: IndexKind) -> bool {
    let range = |k| matches!(k, IndexKind::Range | IndexKind::Uniqueness | IndexKind::NodeKey);
    range(a) && range(b)
}

/// The default name of a rule: `index_<hash>` / `constraint_<hash>` over its definition.
pub(crate) fn default_name(kind: IndexKind, rel: bool, label: u32, keys: &[u32]) -> String {
    let prefix = if kind.is_constraint() { "constraint" } else { "index" };
    let mut def = format!("{prefix}:{}:{}{label}", kind.code(), if rel { "rel:" } else { "" });
    for k in keys {
        def.push_str(&format!(":{k}"));
    }
    // The original single-property forms keep their original names.
    if keys.len() == 1 && kind.code() <= 1 && !rel {
        def = format!("{prefix}:{label}:{}", keys[0]);
    }
    let h = crc32c::crc32c(def.as_bytes());
    format!("{prefix}_{h:08x}")
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
        let (r, u) = (IndexKind::Range, IndexKind::Uniqueness);
        assert_eq!(default_name(r, false, 1, &[2]), default_name(r, false, 1, &[2]));
        assert_ne!(default_name(r, false, 1, &[2]), default_name(u, false, 1, &[2]));
        assert_ne!(default_name(r, false, 1, &[2, 3]), default_name(r, false, 1, &[3, 2]));
        assert!(default_name(u, false, 1, &[2]).starts_with("constraint_"));
        assert_ne!(default_name(r, true, 1, &[2]), default_name(r, false, 1, &[2]));
        assert!(default_name(IndexKind::Existence, false, 1, &[2]).starts_with("constraint_"));
    }
}
