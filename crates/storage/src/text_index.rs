//! The TEXT index's own structure: trigram postings over the distinct string values of an
//! indexed `(label, key)`, answering `CONTAINS` and `ENDS WITH` without reading every value.
//!
//! Every string is padded with a start and an end marker and cut into overlapping runs of
//! three characters (Unicode scalar values, so non-ASCII text is cut where it should be). A
//! `CONTAINS s` candidate holds every trigram of `s`; an `ENDS WITH s` candidate every trigram
//! of `s` + end marker. A query reads the shortest posting list among its needle's trigrams and
//! checks each value exactly, so answers never depend on the postings being minimal (stale
//! values only cost time). A needle too short to have a trigram (`CONTAINS 'a'`) gets `None`:
//! the caller walks the index's strings instead.
//!
//! Two layers use it, like the RANGE data: the schema's shared map (recent writes; postings
//! of string values, kept in step with the map's keys) and the base (built on the first text
//! seek of a target, postings of positions in a value table).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// Three characters; markers are `'\u{2}'` (start) and `'\u{3}'` (end).
type Gram = [char; 3];

const START: char = '\u{2}';
const END: char = '\u{3}';

/// What a text seek asks for.
#[derive(Clone, Debug)]
pub(crate) enum TextMatch {
    Contains(Arc<str>),
    EndsWith(Arc<str>),
}

impl TextMatch {
    /// Whether `s` satisfies the predicate (Cypher's, on strings).
    pub fn matches(&self, s: &str) -> bool {
        match self {
            TextMatch::Contains(n) => s.contains(&**n),
            TextMatch::EndsWith(n) => s.ends_with(&**n),
        }
    }

    /// The trigrams every matching value holds (empty: the needle is too short).
    fn grams(&self) -> Vec<Gram> {
        let chars: Vec<char> = match self {
            TextMatch::Contains(n) => n.chars().collect(),
            TextMatch::EndsWith(n) => n.chars().chain([END]).collect(),
        };
        let mut g: Vec<Gram> = chars.windows(3).map(|w| [w[0], w[1], w[2]]).collect();
        g.sort_unstable();
        g.dedup();
        g
    }
}

/// The distinct trigrams of `s` with its markers.
fn grams_of(s: &str) -> Vec<Gram> {
    let chars: Vec<char> = [START].into_iter().chain(s.chars()).chain([END]).collect();
    let mut g: Vec<Gram> = chars.windows(3).map(|w| [w[0], w[1], w[2]]).collect();
    g.sort_unstable();
    g.dedup();
    g
}

/// Trigram postings of values `T` (a string, or its position in a table).
#[derive(Debug)]
pub(crate) struct Trigrams<T: Ord + Clone> {
    postings: HashMap<Gram, BTreeSet<T>>,
}

impl<T: Ord + Clone> Default for Trigrams<T> {
    fn default() -> Self {
        Trigrams { postings: HashMap::new() }
    }
}

impl<T: Ord + Clone> Trigrams<T> {
    /// Adds the value `v` whose text is `s`.
    pub fn add(&mut self, s: &str, v: &T) {
        for g in grams_of(s) {
            self.postings.entry(g).or_default().insert(v.clone());
        }
    }

    /// Removes the value `v` whose text is `s`.
    pub fn remove(&mut self, s: &str, v: &T) {
        for g in grams_of(s) {
            if let Some(p) = self.postings.get_mut(&g) {
                p.remove(v);
                if p.is_empty() {
                    self.postings.remove(&g);
                }
            }
        }
    }

    /// The values that may match `m` (a superset: check each), `None` when the needle has no
    /// trigram (every value may match).
    pub fn candidates(&self, m: &TextMatch) -> Option<Vec<&T>> {
        let grams = m.grams();
        if grams.is_empty() {
            return None;
        }
        let mut lists = Vec::with_capacity(grams.len());
        for g in &grams {
            match self.postings.get(g) {
                Some(p) => lists.push(p),
                None => return Some(Vec::new()),
            }
        }
        lists.sort_by_key(|p| p.len());
        let (first, rest) = lists.split_first()?;
        // Intersect with the next shortest list or two; the exact check does the rest.
        let out = first.iter().filter(|v| rest.iter().take(2).all(|p| p.contains(*v))).collect();
        Some(out)
    }
}

/// The base's text index of one target: the distinct strings with their node ids, and
/// trigram postings of positions in that table.
#[derive(Debug, Default)]
pub(crate) struct BaseText {
    values: Vec<(Arc<str>, Vec<u64>)>,
    grams: Trigrams<u32>,
}

impl BaseText {
    /// Builds from `(string, node id)` pairs in any order.
    pub fn build(pairs: impl Iterator<Item = (Arc<str>, u64)>) -> BaseText {
        let mut by: HashMap<Arc<str>, Vec<u64>> = HashMap::new();
        for (s, id) in pairs {
            by.entry(s).or_default().push(id);
        }
        let mut values: Vec<(Arc<str>, Vec<u64>)> = by.into_iter().collect();
        values.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut grams = Trigrams::default();
        for (i, (s, _)) in values.iter().enumerate() {
            grams.add(s, &(i as u32));
        }
        BaseText { values, grams }
    }

    /// Appends the ids of every value that matches `m`.
    pub fn matching(&self, m: &TextMatch, out: &mut Vec<u64>) {
        match self.grams.candidates(m) {
            Some(c) => {
                for i in c {
                    let (s, ids) = &self.values[*i as usize];
                    if m.matches(s) {
                        out.extend_from_slice(ids);
                    }
                }
            }
            None => {
                for (s, ids) in &self.values {
                    if m.matches(s) {
                        out.extend_from_slice(ids);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings() -> Vec<&'static str> {
        vec![
            "",
            "a",
            "ab",
            "abc",
            "Hannah",
            "Anna",
            "Ångström",
            "naïve café",
            "日本語テキスト",
            "aaa",
        ]
    }

    #[test]
    fn postings_answer_as_a_scan_does() {
        let values: Vec<Arc<str>> = strings().into_iter().map(Arc::from).collect();
        let mut t: Trigrams<Arc<str>> = Trigrams::default();
        for v in &values {
            t.add(v, v);
        }
        let needles = ["", "a", "an", "nna", "ah", "h", "ström", "é", "café", "語テ", "aa", "zzz"];
        for n in needles {
            for m in [TextMatch::Contains(Arc::from(n)), TextMatch::EndsWith(Arc::from(n))] {
                let scan: Vec<&Arc<str>> = values.iter().filter(|v| m.matches(v)).collect();
                let got: Vec<&Arc<str>> = match t.candidates(&m) {
                    Some(c) => c.into_iter().filter(|v| m.matches(v)).collect(),
                    None => values.iter().filter(|v| m.matches(v)).collect(),
                };
                let mut a: Vec<&str> = scan.iter().map(|s| &***s).collect();
                let mut b: Vec<&str> = got.iter().map(|s| &***s).collect();
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "{m:?}");
            }
        }
    }

    #[test]
    fn removal_forgets_a_value() {
        let mut t: Trigrams<u32> = Trigrams::default();
        t.add("Hannah", &1);
        t.add("Hanna", &2);
        t.remove("Hannah", &1);
        let m = TextMatch::EndsWith(Arc::from("nah"));
        assert_eq!(t.candidates(&m), Some(Vec::new()));
        assert!(t.postings.values().all(|p| !p.contains(&1)));
    }

    #[test]
    fn base_text_groups_ids_by_value() {
        let pairs = [("Anna", 3), ("Hannah", 1), ("Anna", 2)];
        let b = BaseText::build(pairs.into_iter().map(|(s, id)| (Arc::from(s), id)));
        let mut out = Vec::new();
        b.matching(&TextMatch::Contains(Arc::from("nn")), &mut out);
        out.sort_unstable();
        assert_eq!(out, vec![1, 2, 3]);
        out.clear();
        b.matching(&TextMatch::EndsWith(Arc::from("a")), &mut out);
        out.sort_unstable();
        assert_eq!(out, vec![2, 3]);
    }
}
