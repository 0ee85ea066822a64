//! The analyzers a full-text index can use, under Neo4j's names, built from tantivy's
//! tokenizer pipeline: a tokenizer ([`SpanTokenizer`]: words for the `standard` family, letters only,
//! whitespace, or the whole value), then lower-casing, stop words and a stemmer as the analyzer
//! asks.
//!
//! Where we differ from Lucene (and so from Neo4j): the `standard` tokenizer is a subset of
//! Unicode word segmentation (UAX #29: letters and digits, `_`, apostrophes and dots inside
//! words, separators inside numbers, one token per CJK ideograph); the `email`, `url` and
//! `url_or_email` analyzers do not keep addresses whole; stemmers are Snowball's (tantivy), not
//! Lucene's Porter and light stemmers; the language analyzers stem but remove no stop words.
//! Analyzers whose language tantivy has no stemmer for are not offered (see [`CATALOG`]).

use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RawTokenizer, RemoveLongFilter, Stemmer,
    StopWordFilter, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer, WhitespaceTokenizer,
};

/// Lucene's English stop words (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`), used by `standard`,
/// `english`, `stop`, `classic` and the `standard` relatives, as in Neo4j.
pub const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// The analyzer Neo4j uses when an index names none.
pub const DEFAULT_ANALYZER: &str = "standard-no-stop-words";

/// How an analyzer splits text into tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    /// Words (see [`SpanTokenizer::words`]).
    Words,
    /// Runs of letters (Lucene's `LetterTokenizer`).
    Letters,
    /// Runs of non-whitespace.
    Whitespace,
    /// The whole value is one token.
    Keyword,
}

/// One analyzer: its Neo4j name and description and how to build it.
#[derive(Clone, Copy, Debug)]
pub struct AnalyzerSpec {
    pub name: &'static str,
    pub description: &'static str,
    split: Split,
    lowercase: bool,
    fold_ascii: bool,
    /// Stop words: Lucene's English list or none.
    stop: Stop,
    stem: Option<Language>,
    /// Strip a trailing `'s` (Lucene's `EnglishPossessiveFilter`).
    possessive: bool,
}

#[derive(Clone, Copy, Debug)]
enum Stop {
    None,
    English,
}

const fn words(name: &'static str, description: &'static str, stop: Stop) -> AnalyzerSpec {
    AnalyzerSpec {
        name,
        description,
        split: Split::Words,
        lowercase: true,
        fold_ascii: false,
        stop,
        stem: None,
        possessive: false,
    }
}

const fn language(name: &'static str, lang: Language) -> AnalyzerSpec {
    AnalyzerSpec {
        name,
        description: "",
        split: Split::Words,
        lowercase: true,
        fold_ascii: false,
        stop: Stop::None,
        stem: Some(lang),
        possessive: false,
    }
}

const EMAIL_URL: &str =
    "Tokenizes into sequences of alpha-numeric, numeric, URL, email, southeast \
                         asian terms, and into terms of individual ideographic and hiragana \
                         characters. English stop words are filtered out.";

/// Every analyzer Arbor offers, in `listAvailableAnalyzers` order. Descriptions are Neo4j's;
/// the language analyzers' are generated (see [`AnalyzerSpec::describe`]).
pub const CATALOG: &[AnalyzerSpec] = &[
    words(
        "standard-no-stop-words",
        "The default analyzer. Similar to the 'standard' analyzer, but filters no stop words. \
         Tokenizes on non-letter boundaries filters out punctuation. Does no stemming, but takes \
         care to keep likely product names, URLs and email addresses as single terms.",
        Stop::None,
    ),
    words(
        "standard",
        "The standard analyzer. Tokenizes on non-letter and filters out English stop words and \
         punctuation. Does no stemming, but takes care to keep likely product names, URLs and \
         email addresses as single terms.",
        Stop::English,
    ),
    AnalyzerSpec {
        fold_ascii: true,
        ..words(
            "standard-folding",
            "Analyzer that uses ASCIIFoldingFilter to remove accents (diacritics). Otherwise \
             behaves as standard english analyzer. Note! This Analyser may have unexpected \
             behaviour, such as tokenizing, for all non ASCII numbers and symbols.",
            Stop::English,
        )
    },
    words(
        "classic",
        "Classic Lucene analyzer. Similar to 'standard', but with worse unicode support.",
        Stop::English,
    ),
    AnalyzerSpec {
        stem: Some(Language::English),
        possessive: true,
        ..words("english", "English analyzer with stemming and stop word filtering.", Stop::English)
    },
    AnalyzerSpec {
        split: Split::Letters,
        ..words(
            "simple",
            "A simple analyzer that tokenizes at non-letter boundaries. No stemming or \
             filtering. Works okay for most European languages, but is terrible for languages \
             where words are not separated by spaces, such as many Asian languages.",
            Stop::None,
        )
    },
    AnalyzerSpec {
        split: Split::Letters,
        ..words(
            "stop",
            "Stop analyzer tokenizes at non-letter characters, and filters out English stop \
             words. This differs from the 'classic' and 'standard' analyzers in that it makes \
             no effort to recognize special terms, like likely product names, URLs or email \
             addresses.",
            Stop::English,
        )
    },
    AnalyzerSpec {
        split: Split::Whitespace,
        lowercase: false,
        ..words(
            "whitespace",
            "Breaks text into terms by characters that are considered \"Java whitespace\".",
            Stop::None,
        )
    },
    AnalyzerSpec {
        split: Split::Whitespace,
        lowercase: false,
        ..words(
            "unicode_whitespace",
            "Breaks text into terms by characters that have the unicode WHITESPACE property.",
            Stop::None,
        )
    },
    AnalyzerSpec {
        split: Split::Keyword,
        lowercase: false,
        ..words(
            "keyword",
            "Keyword analyzer \"tokenizes\" the text as a single term. Useful for zip-codes, \
             ids, etc. Situations where complete and exact matches are desired.",
            Stop::None,
        )
    },
    words("email", EMAIL_URL, Stop::English),
    words("url", EMAIL_URL, Stop::English),
    words("url_or_email", EMAIL_URL, Stop::English),
    language("arabic", Language::Arabic),
    language("danish", Language::Danish),
    language("dutch", Language::Dutch),
    language("finnish", Language::Finnish),
    language("french", Language::French),
    language("german", Language::German),
    language("greek", Language::Greek),
    language("hungarian", Language::Hungarian),
    language("italian", Language::Italian),
    language("norwegian", Language::Norwegian),
    language("portuguese", Language::Portuguese),
    language("romanian", Language::Romanian),
    language("russian", Language::Russian),
    language("spanish", Language::Spanish),
    language("swedish", Language::Swedish),
    language("turkish", Language::Turkish),
];

impl AnalyzerSpec {
    /// The analyzer called `name`, if Arbor offers it.
    pub fn named(name: &str) -> Option<&'static AnalyzerSpec> {
        CATALOG.iter().find(|a| a.name == name)
    }

    /// The description `listAvailableAnalyzers` shows.
    pub fn describe(&self) -> String {
        if !self.description.is_empty() {
            return self.description.to_string();
        }
        let mut lang = self.name.to_string();
        lang[..1].make_ascii_uppercase();
        format!("{lang} analyzer with stemming (no stop words in Arbor).")
    }

    /// The stop words this analyzer removes.
    pub fn stopwords(&self) -> Vec<String> {
        match self.stop {
            Stop::None => Vec::new(),
            Stop::English => ENGLISH_STOP_WORDS.iter().map(|w| w.to_string()).collect(),
        }
    }

    /// Whether multi-term queries (wildcards, fuzzy, ranges) lower-case their text, as Lucene's
    /// `Analyzer.normalize` does for analyzers that lower-case.
    pub fn lowercases(&self) -> bool {
        self.lowercase
    }

    /// Lucene's `normalize`: the text of a wildcard, prefix, fuzzy, regex or range term.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = if self.lowercase { text.to_lowercase() } else { text.to_string() };
        if self.fold_ascii {
            let mut a =
                TextAnalyzer::builder(RawTokenizer::default()).filter(AsciiFoldingFilter).build();
            let folded = a.token_stream(&out).next().map(|t| t.text.clone());
            if let Some(f) = folded {
                out = f;
            }
        }
        out
    }

    /// The tantivy analyzer.
    pub fn build(&self) -> TextAnalyzer {
        let b = match self.split {
            Split::Words => TextAnalyzer::builder(SpanTokenizer::words()).dynamic(),
            Split::Letters => TextAnalyzer::builder(SpanTokenizer::letters()).dynamic(),
            Split::Whitespace => TextAnalyzer::builder(WhitespaceTokenizer::default()).dynamic(),
            Split::Keyword => TextAnalyzer::builder(RawTokenizer::default()).dynamic(),
        };
        // Lucene's StandardTokenizer drops tokens longer than 255 characters.
        let mut b = b.filter_dynamic(RemoveLongFilter::limit(256));
        if self.possessive {
            b = b.filter_dynamic(PossessiveFilter);
        }
        if self.lowercase {
            b = b.filter_dynamic(LowerCaser);
        }
        if self.fold_ascii {
            b = b.filter_dynamic(AsciiFoldingFilter);
        }
        match self.stop {
            Stop::None => {}
            Stop::English => {
                b = b.filter_dynamic(StopWordFilter::remove(
                    ENGLISH_STOP_WORDS.iter().map(|w| w.to_string()),
                ));
            }
        }
        if let Some(lang) = self.stem {
            b = b.filter_dynamic(Stemmer::new(lang));
        }
        b.build()
    }

    /// The tokens of `text` with their positions (for phrase queries).
    pub fn tokens(&self, text: &str) -> Vec<(usize, String)> {
        let mut a = self.build();
        let mut s = a.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = s.next() {
            out.push((t.position, t.text.clone()));
        }
        out
    }
}

/// Lucene's `EnglishPossessiveFilter`: removes a trailing `'s` (any apostrophe form).
#[derive(Clone, Copy)]
struct PossessiveFilter;

impl TokenFilter for PossessiveFilter {
    type Tokenizer<T: Tokenizer> = PossessiveWrapper<T>;
    fn transform<T: Tokenizer>(self, tokenizer: T) -> PossessiveWrapper<T> {
        PossessiveWrapper(tokenizer)
    }
}

#[derive(Clone)]
pub struct PossessiveWrapper<T>(T);

impl<T: Tokenizer> Tokenizer for PossessiveWrapper<T> {
    type TokenStream<'a> = PossessiveStream<T::TokenStream<'a>>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        PossessiveStream(self.0.token_stream(text))
    }
}

pub struct PossessiveStream<S>(S);

impl<S: TokenStream> TokenStream for PossessiveStream<S> {
    fn advance(&mut self) -> bool {
        if !self.0.advance() {
            return false;
        }
        let t = &mut self.0.token_mut().text;
        for suffix in ["'s", "'S", "\u{2019}s", "\u{2019}S", "\u{FF07}s", "\u{FF07}S"] {
            if t.ends_with(suffix) {
                t.truncate(t.len() - suffix.len());
                break;
            }
        }
        true
    }
    fn token(&self) -> &Token {
        self.0.token()
    }
    fn token_mut(&mut self) -> &mut Token {
        self.0.token_mut()
    }
}

/// Characters that are one token each (CJK ideographs and hiragana), as UAX #29 splits them.
fn is_ideographic(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x309F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

fn is_word(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_ideographic(c)
}

/// Whether `mid` joins `prev` and `next` into one word (UAX #29 rules WB6/7 and WB11/12:
/// apostrophes, dots and colons between letters; dots, commas, semicolons and apostrophes
/// between digits).
fn joins(prev: char, mid: char, next: char) -> bool {
    let letters = prev.is_alphabetic() && next.is_alphabetic();
    let digits = prev.is_numeric() && next.is_numeric();
    match mid {
        '\'' | '\u{2019}' | '.' => letters || digits,
        ':' | '\u{00B7}' => letters,
        ',' | ';' => digits,
        _ => false,
    }
}

/// The next word in `rest` as a byte range, approximating Lucene's `StandardTokenizer` (see
/// the module docs).
fn next_word(rest: &str) -> Option<(usize, usize)> {
    let mut start = None;
    let mut chars = rest.char_indices().peekable();
    let mut end = rest.len();
    let mut prev = ' ';
    while let Some((i, c)) = chars.next() {
        match start {
            None if is_ideographic(c) => {
                start = Some(i);
                end = i + c.len_utf8();
                break;
            }
            None if is_word(c) => start = Some(i),
            None => {}
            Some(_) if is_word(c) => {}
            Some(_) => {
                let next = chars.peek().map(|&(_, n)| n).unwrap_or(' ');
                if !(joins(prev, c, next) && is_word(next)) {
                    end = i;
                    break;
                }
            }
        }
        prev = c;
    }
    Some((start?, end))
}

/// The next run of letters in `rest` as a byte range (Lucene's `LetterTokenizer`).
fn next_letters(rest: &str) -> Option<(usize, usize)> {
    let start = rest.find(char::is_alphabetic)?;
    let len = rest[start..].find(|c: char| !c.is_alphabetic()).unwrap_or(rest.len() - start);
    Some((start, start + len))
}

/// A tokenizer that cuts text where `next` finds the next token: words for the `standard`
/// family, runs of letters for `simple` and `stop`.
#[derive(Clone)]
pub struct SpanTokenizer {
    token: Token,
    next: fn(&str) -> Option<(usize, usize)>,
}

impl SpanTokenizer {
    /// Words (see [`next_word`]).
    pub fn words() -> SpanTokenizer {
        SpanTokenizer { token: Token::default(), next: next_word }
    }

    /// Runs of letters (Lucene's `LetterTokenizer`).
    pub fn letters() -> SpanTokenizer {
        SpanTokenizer { token: Token::default(), next: next_letters }
    }
}

pub struct SpanStream<'a> {
    text: &'a str,
    at: usize,
    token: &'a mut Token,
    next: fn(&str) -> Option<(usize, usize)>,
}

impl Tokenizer for SpanTokenizer {
    type TokenStream<'a> = SpanStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> SpanStream<'a> {
        self.token.reset();
        SpanStream { text, at: 0, token: &mut self.token, next: self.next }
    }
}

impl TokenStream for SpanStream<'_> {
    fn advance(&mut self) -> bool {
        let Some((start, end)) = (self.next)(&self.text[self.at..]) else {
            self.at = self.text.len();
            return false;
        };
        let (from, to) = (self.at + start, self.at + end);
        self.at = to;
        self.token.text.clear();
        self.token.text.push_str(&self.text[from..to]);
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = self.token.position.wrapping_add(1);
        true
    }
    fn token(&self) -> &Token {
        self.token
    }
    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(analyzer: &str, text: &str) -> Vec<String> {
        AnalyzerSpec::named(analyzer).unwrap().tokens(text).into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn standard_keeps_words_together_like_uax29() {
        assert_eq!(
            toks("standard-no-stop-words", "Don't stop: 3.14, U.S.A. foo_bar e-mail 東京"),
            ["don't", "stop", "3.14", "u.s.a", "foo_bar", "e", "mail", "東", "京"]
        );
    }

    #[test]
    fn stop_words_leave_position_gaps() {
        let a = AnalyzerSpec::named("standard").unwrap();
        assert_eq!(a.tokens("the matrix of souls"), [(1, "matrix".into()), (3, "souls".into())]);
    }

    #[test]
    fn english_stems_and_drops_possessives() {
        assert_eq!(toks("english", "Neo's learning hackers"), ["neo", "learn", "hacker"]);
    }

    #[test]
    fn keyword_whitespace_and_simple() {
        assert_eq!(toks("keyword", "Zip 0123"), ["Zip 0123"]);
        assert_eq!(toks("whitespace", "A b-C"), ["A", "b-C"]);
        assert_eq!(toks("simple", "R2-D2 rocks"), ["r", "d", "rocks"]);
    }

    #[test]
    fn folding_removes_accents() {
        assert_eq!(toks("standard-folding", "Café Ørsted"), ["cafe", "orsted"]);
    }
}
