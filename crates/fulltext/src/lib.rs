//! Full-text search for Arbor's FULLTEXT indexes: Neo4j's analyzers ([`analyzer`]), Lucene's
//! classic query syntax ([`query`]) and BM25-ranked search over a set of documents
//! ([`search`]), built on tantivy.
//!
//! A leaf library: it knows nothing of graphs, transactions or Cypher. The database decides
//! which entities and values form the documents of an index (see `engine/src/fulltext.rs`).

pub mod analyzer;
pub mod query;
pub mod search;

pub use analyzer::{AnalyzerSpec, CATALOG, DEFAULT_ANALYZER};
pub use query::{parse, Node, ParseError};
pub use search::{rank, Corpus, Document};

/// What can go wrong searching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The query text is not valid Lucene syntax.
    Parse(ParseError),
    /// tantivy failed (an invalid regular expression, or a bug).
    Search(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Parse(e) => write!(f, "{e}"),
            Error::Search(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}
