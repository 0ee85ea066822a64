//! [`PropertyMap`]: the map of Cypher map values, parameters and materialized properties, and
//! its key type [`Key`].
//!
//! A map is a vector of `(key, value)` entries kept sorted by key (byte order, as `str`
//! compares) with unique keys, and a key is a shared `Arc<str>`. This replaced
//! `BTreeMap<String, Value>`: a Cypher map is small (a handful of keys) and is mostly built
//! once, read by key or in key order, and dropped. The B-tree cost one node allocation per
//! map plus one `String` per key; a batched write of 10,000 five-key parameter rows (`UNWIND
//! $batch AS r CREATE ...`) decoded 60,000 allocations and freed them again, about a third of
//! the server's instructions for such a write. Here a map is one allocation, and a decoder can
//! share one `Arc<str>` for a key that every row repeats. Iteration order, lookup semantics
//! and "the last insert of a key wins" are those of the B-tree map it replaced.
//!
//! A map may also carry a *display order* (`LOAD CSV WITH HEADERS` rows: the header's order,
//! which Neo4j keeps and drivers show). It is only a hint for [`PropertyMap::iter_ordered`]
//! (results, `keys()`): lookups, iteration, equality, ordering and hashing stay by key, so
//! two maps with the same entries are the same value whatever order they display. A `.*` map
//! projection has two orders, as in Neo4j: results list its named items first, `keys()` the
//! projected map's or entity's own keys first ([`KeyOrder`]).

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::value::Value;

/// A map key: an immutable shared string (cloning it is a reference-count increment).
/// Compares as its text; two keys sharing one string compare equal without reading it.
#[derive(Clone, Eq)]
pub struct Key(Arc<str>);

// Hashes the text, as `eq` compares it (the pointer test there is only a shortcut).
impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (*self.0).hash(h)
    }
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        Arc::ptr_eq(&self.0, &o.0) || *self.0 == *o.0
    }
}

impl Ord for Key {
    fn cmp(&self, o: &Key) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &o.0) {
            return std::cmp::Ordering::Equal;
        }
        self.0.cmp(&o.0)
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Key {
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The shared string itself.
    pub fn as_arc(&self) -> &Arc<str> {
        &self.0
    }
}

impl Deref for Key {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Key {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key(Arc::from(s))
    }
}

impl From<String> for Key {
    fn from(s: String) -> Key {
        Key(Arc::from(s))
    }
}

impl From<&String> for Key {
    fn from(s: &String) -> Key {
        Key(Arc::from(s.as_str()))
    }
}

impl From<Arc<str>> for Key {
    fn from(s: Arc<str>) -> Key {
        Key(s)
    }
}

impl From<&Arc<str>> for Key {
    fn from(s: &Arc<str>) -> Key {
        Key(s.clone())
    }
}

impl From<&Key> for Key {
    fn from(k: &Key) -> Key {
        k.clone()
    }
}

impl From<Key> for String {
    fn from(k: Key) -> String {
        k.0.to_string()
    }
}

impl From<Key> for Arc<str> {
    fn from(k: Key) -> Arc<str> {
        k.0
    }
}

impl From<Key> for Value {
    fn from(k: Key) -> Value {
        Value::String(k.0)
    }
}

impl PartialEq<str> for Key {
    fn eq(&self, o: &str) -> bool {
        &*self.0 == o
    }
}

impl PartialEq<&str> for Key {
    fn eq(&self, o: &&str) -> bool {
        &*self.0 == *o
    }
}

impl PartialEq<Arc<str>> for Key {
    fn eq(&self, o: &Arc<str>) -> bool {
        *self.0 == **o
    }
}

impl PartialEq<String> for Key {
    fn eq(&self, o: &String) -> bool {
        &*self.0 == o.as_str()
    }
}

/// The order a map shows its keys in (see the module documentation).
#[derive(Debug, Default)]
pub struct KeyOrder {
    /// Keys in the order results (and Bolt) show them.
    pub shown: Vec<Key>,
    /// Keys in the order `keys()` lists them, when that differs from `shown` (else empty).
    pub listed: Vec<Key>,
}

impl From<Vec<Key>> for KeyOrder {
    fn from(shown: Vec<Key>) -> KeyOrder {
        KeyOrder { shown, listed: Vec::new() }
    }
}

/// A Cypher map: entries sorted by key, keys unique (see the module documentation).
#[derive(Clone, Default)]
pub struct PropertyMap {
    entries: Vec<(Key, Value)>,
    /// The display order, when the map has one (shared by every row of one CSV header; a
    /// thin pointer, so a map stays four words and a `Value` does not grow).
    order: Option<Arc<KeyOrder>>,
}

impl PropertyMap {
    pub fn new() -> PropertyMap {
        PropertyMap { entries: Vec::new(), order: None }
    }

    pub fn with_capacity(n: usize) -> PropertyMap {
        PropertyMap { entries: Vec::with_capacity(n), order: None }
    }

    /// This map displaying its keys in `order` (keys not in it follow, by key).
    pub fn with_order(mut self, order: Arc<KeyOrder>) -> PropertyMap {
        self.order = Some(order);
        self
    }

    /// The entries in display order: the order the map was given (keys since removed are
    /// skipped, keys since added follow by key), else by key.
    pub fn iter_ordered(&self) -> impl Iterator<Item = (&Key, &Value)> + '_ {
        self.ordered_by(self.order.as_deref().map_or(&[][..], |o| o.shown.as_slice()))
    }

    /// The keys in the order `keys()` lists them: as [`PropertyMap::iter_ordered`], except for
    /// a map whose order says otherwise (a `.*` projection).
    pub fn keys_ordered(&self) -> impl Iterator<Item = &Key> + '_ {
        let order = match self.order.as_deref() {
            Some(o) if !o.listed.is_empty() => o.listed.as_slice(),
            Some(o) => o.shown.as_slice(),
            None => &[][..],
        };
        self.ordered_by(order).map(|(k, _)| k)
    }

    /// The entries listed in `order`, then the others by key.
    fn ordered_by<'a>(
        &'a self,
        order: &'a [Key],
    ) -> impl Iterator<Item = (&'a Key, &'a Value)> + 'a {
        let listed = order.iter().enumerate().filter_map(move |(i, k)| {
            // A key listed twice (a repeated header) shows at its first place only.
            let first = order[..i].iter().all(|e| e != k);
            self.get_key_value(k).filter(|_| first)
        });
        let rest = self.iter().filter(move |(k, _)| !order.contains(k));
        listed.chain(rest)
    }

    /// A map of `entries` in any order; of repeated keys the last one wins.
    pub fn from_entries(mut entries: Vec<(Key, Value)>) -> PropertyMap {
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            // Stable: equal keys keep their input order; of each run of equal keys the dedup
            // moves the last value into the first entry and drops the rest.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    std::mem::swap(&mut later.1, &mut kept.1);
                }
                same
            });
        }
        PropertyMap { entries, order: None }
    }

    /// A map of entries already sorted by key with unique keys (the caller's guarantee; checked
    /// in debug builds). Lookups in a map built from unsorted entries would miss keys.
    pub fn from_sorted(entries: Vec<(Key, Value)>) -> PropertyMap {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        PropertyMap { entries, order: None }
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The index of `key`: a scan that skips keys of another length for small maps (most
    /// maps; a miss then reads no key's bytes), a binary search otherwise.
    #[inline]
    fn index_of(&self, key: &str) -> Option<usize> {
        if self.entries.len() <= 8 {
            self.entries
                .iter()
                .position(|(k, _)| k.len() == key.len() && k.as_bytes() == key.as_bytes())
        } else {
            self.find(key).ok()
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.index_of(key).map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.index_of(key).map(|i| &mut self.entries[i].1)
    }

    pub fn get_key_value(&self, key: &str) -> Option<(&Key, &Value)> {
        self.index_of(key).map(|i| (&self.entries[i].0, &self.entries[i].1))
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.index_of(key).is_some()
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&mut self, key: Key, value: Value) -> Option<Value> {
        // Keys often arrive in order (decoded maps, sorted sources): append without a search.
        if self.entries.last().is_none_or(|(last, _)| *last < key) {
            self.entries.push((key, value));
            return None;
        }
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.index_of(key).map(|i| self.entries.remove(i).1)
    }

    pub fn retain(&mut self, mut f: impl FnMut(&Key, &mut Value) -> bool) {
        self.entries.retain_mut(|(k, v)| f(k, v));
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    pub fn iter_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = (&Key, &mut Value)> + ExactSizeIterator {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Key> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = Key> + ExactSizeIterator {
        self.entries.into_iter().map(|(k, _)| k)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = Value> + ExactSizeIterator {
        self.entries.into_iter().map(|(_, v)| v)
    }

    /// The entries, sorted by key.
    pub fn as_slice(&self) -> &[(Key, Value)] {
        &self.entries
    }
}

/// Iterator over `(&key, &value)` in key order.
#[derive(Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, (Key, Value)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a Key, &'a Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl fmt::Debug for PropertyMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.entries.iter().map(|(k, v)| (k, v))).finish()
    }
}

impl<K: Into<Key>> FromIterator<(K, Value)> for PropertyMap {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> PropertyMap {
        PropertyMap::from_entries(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl<K: Into<Key>> Extend<(K, Value)> for PropertyMap {
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k.into(), v);
        }
    }
}

impl IntoIterator for PropertyMap {
    type Item = (Key, Value);
    type IntoIter = std::vec::IntoIter<(Key, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a> IntoIterator for &'a PropertyMap {
    type Item = (&'a Key, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut PropertyMap {
    type Item = (&'a Key, &'a mut Value);
    type IntoIter = std::iter::Map<
        std::slice::IterMut<'a, (Key, Value)>,
        fn(&'a mut (Key, Value)) -> (&'a Key, &'a mut Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        fn split(e: &mut (Key, Value)) -> (&Key, &mut Value) {
            (&e.0, &mut e.1)
        }
        self.entries.iter_mut().map(split as fn(&'a mut (Key, Value)) -> (&'a Key, &'a mut Value))
    }
}

impl std::ops::Index<&str> for PropertyMap {
    type Output = Value;
    /// Panics when the key is missing, like `BTreeMap`'s index (only for keys known present).
    fn index(&self, key: &str) -> &Value {
        match self.get(key) {
            Some(v) => v,
            None => panic!("no key {key:?} in the map"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(m: &PropertyMap) -> Vec<String> {
        m.keys().map(|k| k.to_string()).collect()
    }

    #[test]
    fn insert_keeps_keys_sorted_unique_and_last_wins() {
        let mut m = PropertyMap::new();
        assert!(m.insert("b".into(), Value::Int(1)).is_none());
        assert!(m.insert("a".into(), Value::Int(2)).is_none());
        assert!(m.insert("c".to_string().into(), Value::Int(3)).is_none());
        assert!(matches!(m.insert("a".into(), Value::Int(4)), Some(Value::Int(2))));
        assert_eq!(keys(&m), ["a", "b", "c"]);
        assert!(matches!(m.get("a"), Some(Value::Int(4))));
        assert!(m.get("z").is_none());
        assert!(matches!(m.remove("b"), Some(Value::Int(1))));
        assert_eq!(keys(&m), ["a", "c"]);
        assert_eq!(format!("{m:?}"), "{\"a\": Int(4), \"c\": Int(3)}");
    }

    #[test]
    fn lookups_agree_on_small_and_large_maps() {
        for n in [0usize, 1, 5, 8, 9, 40] {
            let m: PropertyMap =
                (0..n).rev().map(|i| (format!("k{i}"), Value::Int(i as i64))).collect();
            assert_eq!(m.len(), n);
            for i in 0..n {
                assert!(matches!(m.get(&format!("k{i}")), Some(Value::Int(v)) if *v == i as i64));
            }
            for miss in ["", "k", "k99", "kk", "j0"] {
                assert!(m.get(miss).is_none(), "{miss} in a map of {n}");
            }
            let keys: Vec<String> = m.keys().map(|k| k.to_string()).collect();
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, sorted);
        }
    }

    // Goal: a display order changes only `iter_ordered`; lookups, `iter` and the size of a
    // `Value` stay as they were.
    #[test]
    fn display_order_is_a_hint_only() {
        let order = Arc::new(KeyOrder::from(vec!["zeta".into(), "alpha".into(), "zeta".into()]));
        let mut m: PropertyMap =
            vec![("alpha", Value::Int(1)), ("zeta", Value::Int(2)), ("mid", Value::Int(3))]
                .into_iter()
                .collect::<PropertyMap>()
                .with_order(order);
        let shown =
            |m: &PropertyMap| m.iter_ordered().map(|(k, _)| k.to_string()).collect::<Vec<_>>();
        assert_eq!(shown(&m), ["zeta", "alpha", "mid"]);
        assert_eq!(keys(&m), ["alpha", "mid", "zeta"]);
        assert!(matches!(m.get("zeta"), Some(Value::Int(2))));
        m.remove("zeta");
        m.insert("b".into(), Value::Null);
        assert_eq!(shown(&m), ["alpha", "b", "mid"]);
        assert_eq!(shown(&PropertyMap::new()), Vec::<String>::new());
        assert!(std::mem::size_of::<PropertyMap>() <= 4 * std::mem::size_of::<usize>());
        assert!(std::mem::size_of::<Value>() <= 40, "{}", std::mem::size_of::<Value>());
    }

    #[test]
    fn collect_sorts_by_bytes_and_keeps_the_last_of_repeated_keys() {
        let m: PropertyMap = vec![
            ("é", Value::Int(1)),
            ("b", Value::Int(2)),
            ("B", Value::Int(3)),
            ("b", Value::Int(4)),
        ]
        .into_iter()
        .collect();
        assert_eq!(keys(&m), ["B", "b", "é"]);
        assert!(matches!(m.get("b"), Some(Value::Int(4))));
        assert_eq!(m.len(), 3);
    }
}
