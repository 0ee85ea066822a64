//! A searchable set of documents: one tantivy index in RAM with a text field per indexed
//! property and the entity id as an indexed fast field (built once, or maintained by id), and
//! the translation of a parsed Lucene query
//! ([`Node`]) into tantivy queries over those fields.
//!
//! Scores are tantivy's BM25 (k1 = 1.2, b = 0.75, as Lucene), summed over the clauses and
//! fields that match; wildcard, regex and range clauses score a constant 1 per field, as in
//! Lucene. Results are ordered by score, then by entity id (Lucene breaks ties by insertion
//! order, which for Neo4j is mostly creation order).

use std::ops::Bound;

use tantivy::collector::TopDocs;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, FuzzyTermQuery, Occur as TOccur, PhraseQuery, Query,
    RangeQuery, RegexQuery, TermQuery,
};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::analyzer::AnalyzerSpec;
use crate::query::{Node, Occur};
use crate::Error;

/// One entity's indexed text: `(property position, value)` pairs (a string list gives several
/// values for one property).
#[derive(Clone, Debug, Default)]
pub struct Document {
    pub id: u64,
    pub values: Vec<(usize, String)>,
}

/// An index over a set of documents: built once ([`Corpus::build`]), or maintained
/// ([`Corpus::maintained`]: documents are put and removed, and become searchable at
/// [`Corpus::commit`]).
pub struct Corpus {
    writer: Option<IndexWriter>,
    reader: IndexReader,
    id: Field,
    fields: Vec<Field>,
    names: Vec<String>,
}

const TOKENIZER: &str = "arbor";
/// tantivy's minimum writer budget; one thread, so one segment for all but huge corpora.
const WRITER_BUDGET: usize = 15_000_000;

fn search_err(e: tantivy::TantivyError) -> Error {
    Error::Search(e.to_string())
}

impl Corpus {
    /// An empty corpus over `properties` (their names, for `field:` queries) analyzed with
    /// `analyzer`, with its writer.
    pub fn maintained(properties: &[String], analyzer: &AnalyzerSpec) -> Result<Corpus, Error> {
        let mut schema = Schema::builder();
        // Indexed as well as fast: a changed or deleted document is removed by its id term.
        let id = schema.add_u64_field("id", INDEXED | FAST);
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let fields: Vec<Field> = (0..properties.len())
            .map(|i| schema.add_text_field(&format!("p{i}"), text.clone()))
            .collect();
        let index = Index::create_in_ram(schema.build());
        index.tokenizers().register(TOKENIZER, analyzer.build());
        let writer = index.writer_with_num_threads(1, WRITER_BUDGET).map_err(search_err)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(search_err)?;
        Ok(Corpus { writer: Some(writer), reader, id, fields, names: properties.to_vec() })
    }

    /// Indexes `docs` over `properties` with `analyzer`, once (the writer is released).
    /// Documents without values are skipped.
    pub fn build(
        properties: &[String],
        analyzer: &AnalyzerSpec,
        docs: impl IntoIterator<Item = Document>,
    ) -> Result<Corpus, Error> {
        let mut c = Corpus::maintained(properties, analyzer)?;
        for d in docs {
            c.insert(d)?;
        }
        c.commit()?;
        if let Some(w) = c.writer.take() {
            w.wait_merging_threads().map_err(search_err)?;
        }
        Ok(c)
    }

    fn writer(&self) -> Result<&IndexWriter, Error> {
        self.writer.as_ref().ok_or_else(|| Error::Search("the corpus is read-only".into()))
    }

    /// Adds `d` (nothing if it has no values); its id must not be in the corpus.
    pub fn insert(&mut self, d: Document) -> Result<(), Error> {
        if d.values.is_empty() {
            return Ok(());
        }
        let mut doc = TantivyDocument::default();
        doc.add_u64(self.id, d.id);
        for (p, v) in d.values {
            if let Some(f) = self.fields.get(p) {
                doc.add_text(*f, v);
            }
        }
        self.writer()?.add_document(doc).map_err(search_err)?;
        Ok(())
    }

    /// Replaces the document with `d`'s id by `d` (removes it if `d` has no values), as of
    /// the next [`Corpus::commit`].
    pub fn put(&mut self, d: Document) -> Result<(), Error> {
        self.remove(d.id)?;
        self.insert(d)
    }

    /// Removes the document with id `id` (if any), as of the next [`Corpus::commit`].
    pub fn remove(&mut self, id: u64) -> Result<(), Error> {
        self.writer()?.delete_term(Term::from_field_u64(self.id, id));
        Ok(())
    }

    /// Makes everything put and removed so far searchable.
    pub fn commit(&mut self) -> Result<(), Error> {
        if let Some(w) = self.writer.as_mut() {
            w.commit().map_err(search_err)?;
        }
        self.reader.reload().map_err(search_err)
    }

    /// Number of searchable documents.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ids and scores of the documents matching `query` (terms analyzed with `analyzer`),
    /// best first, after skipping `skip` and keeping at most `limit`.
    pub fn search(
        &self,
        query: &Node,
        analyzer: &AnalyzerSpec,
        skip: usize,
        limit: Option<usize>,
    ) -> Result<Vec<(u64, f64)>, Error> {
        let mut hits = self.hits(query, analyzer, None)?;
        rank(&mut hits);
        Ok(hits.into_iter().skip(skip).take(limit.unwrap_or(usize::MAX)).collect())
    }

    /// Every document matching `query`, unordered, as `(id, score)`. With `statistics`, BM25
    /// takes its document counts and term frequencies from that corpus (which must have the
    /// same properties) instead of this one: a small corpus of changed documents then scores
    /// about as the large one it stands in for.
    pub fn hits(
        &self,
        query: &Node,
        analyzer: &AnalyzerSpec,
        statistics: Option<&Corpus>,
    ) -> Result<Vec<(u64, f64)>, Error> {
        let Some(q) = self.translate(query, analyzer)? else { return Ok(Vec::new()) };
        let searcher = self.reader.searcher();
        let n = usize::try_from(searcher.num_docs().max(1)).unwrap_or(usize::MAX);
        let collector = TopDocs::with_limit(n).order_by_score();
        let top = match statistics {
            Some(other) => {
                let stats = other.reader.searcher();
                searcher.search_with_statistics_provider(&q, &collector, &stats)
            }
            None => searcher.search(&q, &collector),
        }
        .map_err(search_err)?;
        let mut columns = Vec::new();
        for seg in searcher.segment_readers() {
            columns.push(seg.fast_fields().u64("id").map_err(search_err)?);
        }
        Ok(top
            .into_iter()
            .filter_map(|(score, addr)| {
                let id = columns.get(addr.segment_ord as usize)?.first(addr.doc_id)?;
                Some((id, f64::from(score)))
            })
            .collect())
    }

    /// The fields a clause searches: all, or the one named (none if no property has the name).
    fn fields_for(&self, field: &Option<String>) -> Vec<Field> {
        match field {
            None => self.fields.clone(),
            Some(name) => self
                .names
                .iter()
                .zip(&self.fields)
                .filter(|(n, _)| *n == name)
                .map(|(_, f)| *f)
                .collect(),
        }
    }

    /// One query per field, combined as alternatives (Lucene's `MultiFieldQueryParser`).
    fn per_field(
        &self,
        field: &Option<String>,
        mut make: impl FnMut(Field) -> Result<Option<Box<dyn Query>>, Error>,
    ) -> Result<Option<Box<dyn Query>>, Error> {
        let mut qs = Vec::new();
        for f in self.fields_for(field) {
            if let Some(q) = make(f)? {
                qs.push(q);
            }
        }
        Ok(any_of(qs))
    }

    fn translate(&self, node: &Node, a: &AnalyzerSpec) -> Result<Option<Box<dyn Query>>, Error> {
        match node {
            Node::Bool(clauses) => {
                let mut out: Vec<(TOccur, Box<dyn Query>)> = Vec::new();
                for (occur, c) in clauses {
                    if let Some(q) = self.translate(c, a)? {
                        let o = match occur {
                            Occur::Must => TOccur::Must,
                            Occur::Should => TOccur::Should,
                            Occur::MustNot => TOccur::MustNot,
                        };
                        out.push((o, q));
                    }
                }
                // Only prohibited clauses (or none) match nothing, as in Lucene.
                if out.iter().all(|(o, _)| *o == TOccur::MustNot) {
                    return Ok(None);
                }
                Ok(Some(Box::new(BooleanQuery::new(out))))
            }
            Node::Term { field, text } => self.per_field(field, |f| {
                let qs: Vec<Box<dyn Query>> =
                    a.tokens(text).into_iter().map(|(_, t)| term_query(f, &t)).collect();
                Ok(any_of(qs))
            }),
            Node::Phrase { field, text, slop } => self.per_field(field, |f| {
                let toks = a.tokens(text);
                Ok(match toks.len() {
                    0 => None,
                    1 => Some(term_query(f, &toks[0].1)),
                    _ => {
                        let first = toks[0].0;
                        let terms = toks
                            .iter()
                            .map(|(p, t)| (p - first, Term::from_field_text(f, t)))
                            .collect();
                        Some(Box::new(PhraseQuery::new_with_offset_and_slop(terms, *slop)))
                    }
                })
            }),
            Node::Wildcard { field, pattern } => {
                let re = wildcard_regex(&a.normalize(pattern));
                self.per_field(field, |f| regex_query(&re, f))
            }
            Node::Regex { field, pattern } => self.per_field(field, |f| regex_query(pattern, f)),
            Node::Fuzzy { field, text, edits } => {
                let text = a.normalize(text);
                self.per_field(field, |f| {
                    let t = Term::from_field_text(f, &text);
                    Ok(Some(Box::new(FuzzyTermQuery::new(t, *edits, true)) as Box<dyn Query>))
                })
            }
            Node::Range { field, lower, upper, incl } => self.per_field(field, |f| {
                let bound = |v: &Option<String>, inclusive: bool| match v {
                    None => Bound::Unbounded,
                    Some(s) => {
                        let t = Term::from_field_text(f, &a.normalize(s));
                        if inclusive {
                            Bound::Included(t)
                        } else {
                            Bound::Excluded(t)
                        }
                    }
                };
                if lower.is_none() && upper.is_none() {
                    return regex_query(".*", f);
                }
                let q = RangeQuery::new(bound(lower, incl.0), bound(upper, incl.1));
                Ok(Some(Box::new(q) as Box<dyn Query>))
            }),
            Node::All => Ok(Some(Box::new(AllQuery))),
            Node::Boost(inner, b) => Ok(self
                .translate(inner, a)?
                .map(|q| Box::new(BoostQuery::new(q, *b)) as Box<dyn Query>)),
        }
    }
}

fn term_query(f: Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(f, text), IndexRecordOption::WithFreqs))
}

fn regex_query(pattern: &str, f: Field) -> Result<Option<Box<dyn Query>>, Error> {
    let q = RegexQuery::from_pattern(pattern, f)
        .map_err(|e| Error::Search(format!("invalid regular expression /{pattern}/: {e}")))?;
    Ok(Some(Box::new(q)))
}

/// Orders hits as every answer is ordered: by score, best first, then by id.
pub fn rank(hits: &mut [(u64, f64)]) {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
}

/// Alternatives: none, the one, or a disjunction.
fn any_of(mut qs: Vec<Box<dyn Query>>) -> Option<Box<dyn Query>> {
    match qs.len() {
        0 => None,
        1 => qs.pop(),
        _ => {
            Some(Box::new(BooleanQuery::new(qs.into_iter().map(|q| (TOccur::Should, q)).collect())))
        }
    }
}

/// A Lucene wildcard pattern (`*`, `?`, `\` escapes) as a regular expression.
fn wildcard_regex(pattern: &str) -> String {
    let mut re = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '\\' => {
                if let Some(n) = chars.next() {
                    push_literal(&mut re, n);
                }
            }
            c => push_literal(&mut re, c),
        }
    }
    re
}

fn push_literal(re: &mut String, c: char) {
    if "\\.+*?()|[]{}^$#&-~\"@<>".contains(c) {
        re.push('\\');
    }
    re.push(c);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::parse;

    fn corpus() -> Corpus {
        let docs = [
            (1, "The Matrix", "A computer hacker learns about the true nature of reality"),
            (2, "The Matrix Reloaded", "Neo and the rebel leaders estimate they have 72 hours"),
            (3, "Matrix Analysis", "linear algebra"),
            (4, "Cloud Atlas", "stories of the matrix of souls"),
        ];
        let a = AnalyzerSpec::named("standard-no-stop-words").unwrap();
        let props = vec!["title".to_string(), "description".to_string()];
        Corpus::build(
            &props,
            a,
            docs.iter().map(|(id, t, d)| Document {
                id: *id,
                values: vec![(0, t.to_string()), (1, d.to_string())],
            }),
        )
        .unwrap()
    }

    fn ids(c: &Corpus, q: &str) -> Vec<u64> {
        let a = AnalyzerSpec::named("standard-no-stop-words").unwrap();
        c.search(&parse(q).unwrap(), a, 0, None).unwrap().into_iter().map(|h| h.0).collect()
    }

    #[test]
    fn ranks_like_lucene_bm25() {
        let c = corpus();
        // Neo4j 5.26's order for the same data (scores differ: see the module docs).
        assert_eq!(ids(&c, "matrix"), [4, 1, 3, 2]);
        assert_eq!(ids(&c, "\"the matrix\""), [4, 1, 2]);
        assert_eq!(ids(&c, "the"), [1, 2, 4]);
    }

    #[test]
    fn boolean_operators_fields_and_multiterm_queries() {
        let c = corpus();
        assert_eq!(ids(&c, "title:matrix AND NOT reloaded"), [1, 3]);
        assert_eq!(ids(&c, "+matrix -cloud"), [1, 3, 2]);
        assert_eq!(ids(&c, "NOT matrix"), Vec::<u64>::new());
        assert_eq!(ids(&c, "nosuchfield:matrix"), Vec::<u64>::new());
        assert_eq!(ids(&c, "description:(rebel OR hacker)"), [1, 2]);
        assert_eq!(ids(&c, "matr*"), [1, 2, 3, 4]);
        assert_eq!(ids(&c, "*atrix"), [1, 2, 3, 4]);
        assert_eq!(ids(&c, "title:/ma.*x/"), [1, 2, 3]);
        assert_eq!(ids(&c, "*:*"), [1, 2, 3, 4]);
        let mut fuzzy = ids(&c, "matrx~");
        fuzzy.sort();
        assert_eq!(fuzzy, [1, 2, 3, 4]);
        assert_eq!(ids(&c, "[a TO m]")[0], 3);
        assert_eq!(ids(&c, "matrix^3 OR cloud")[0], 4);
    }

    #[test]
    fn skip_and_limit_page_the_ranking() {
        let c = corpus();
        let a = AnalyzerSpec::named("standard-no-stop-words").unwrap();
        let hits = c.search(&parse("matrix").unwrap(), a, 1, Some(2)).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 3]);
        assert!(hits[0].1 >= hits[1].1);
    }

    #[test]
    fn a_maintained_corpus_replaces_and_removes_by_id() {
        let a = AnalyzerSpec::named("standard-no-stop-words").unwrap();
        let mut c = Corpus::maintained(&["title".to_string()], a).unwrap();
        let doc = |id, t: &str| Document { id, values: vec![(0, t.to_string())] };
        c.put(doc(1, "red apple")).unwrap();
        c.put(doc(2, "green apple")).unwrap();
        c.commit().unwrap();
        assert_eq!(ids(&c, "apple"), [1, 2]);
        // Not searchable before the commit.
        c.put(doc(1, "red pear")).unwrap();
        c.remove(2).unwrap();
        assert_eq!(ids(&c, "apple"), [1, 2]);
        c.commit().unwrap();
        assert_eq!(ids(&c, "apple"), Vec::<u64>::new());
        assert_eq!(ids(&c, "pear"), [1]);
        assert_eq!(c.len(), 1);
        // A small corpus scored with the large one's statistics scores as the large one.
        let small = Corpus::build(&["title".to_string()], a, [doc(7, "red pear")]).unwrap();
        let q = parse("pear").unwrap();
        let with = small.hits(&q, a, Some(&c)).unwrap();
        let large = c.hits(&q, a, None).unwrap();
        assert_eq!(with[0].1, large[0].1);
    }
}
