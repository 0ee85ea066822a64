//! Lucene's classic query syntax, parsed into a [`Node`] tree that `search` turns into tantivy
//! queries against the index's fields.
//!
//! Covered: terms, `"phrases"` (with `~slop`), `AND`/`&&`, `OR`/`||`, `NOT`/`!`, `+`/`-`,
//! grouping, `field:` (on terms and groups), `^boost`, `*`/`?` wildcards (leading ones too, as
//! Neo4j allows), `term~` / `term~N` fuzzy (at most 2 edits, tantivy's limit: Lucene's too),
//! `/regex/`, `[a TO b]` / `{a TO b}` ranges with `*` bounds, `*:*`, and `\` escapes.
//! Boolean precedence is Lucene's classic one: `AND` makes both neighbours required, `NOT` and
//! `-` prohibit, everything else is optional (the default operator is `OR`); a query of only
//! prohibited clauses matches nothing.
//!
//! Differences from Lucene (and so from Neo4j): fuzzy matches score a constant 1 per field
//! (Lucene ranks them by similarity and term statistics); a word that the analyzer splits into
//! several tokens becomes alternatives, as in Lucene, but synonyms and token graphs do not
//! exist here; no date or numeric ranges (ranges compare terms as text, as Lucene does on text
//! fields). We do not use tantivy's own query parser: its grammar differs from Lucene's in
//! precedence (`a AND b OR c`), fuzzy (`~` is per field configuration there), leading
//! wildcards and error messages.
//!
//! Errors follow Lucene's wording (`Encountered "<EOF>" at line 1, column 0.`), without its
//! list of expected tokens.

use std::fmt;

/// How a clause takes part in a boolean query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occur {
    Must,
    Should,
    MustNot,
}

/// A parsed query. `field: None` means every field of the index.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Bool(Vec<(Occur, Node)>),
    /// An unquoted word: analyzed, one token is a term query, several are alternatives.
    Term {
        field: Option<String>,
        text: String,
    },
    Phrase {
        field: Option<String>,
        text: String,
        slop: u32,
    },
    /// A pattern with `*` and `?` (a prefix when its only wildcard is a trailing `*`).
    Wildcard {
        field: Option<String>,
        pattern: String,
    },
    Fuzzy {
        field: Option<String>,
        text: String,
        edits: u8,
    },
    Regex {
        field: Option<String>,
        pattern: String,
    },
    Range {
        field: Option<String>,
        lower: Option<String>,
        upper: Option<String>,
        incl: (bool, bool),
    },
    /// `*:*`.
    All,
    Boost(Box<Node>, f32),
}

/// A syntax error, worded as Lucene's parser words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// `ParseException` or `TokenMgrError` (Lucene's class, which Neo4j's message names).
    pub kind: &'static str,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    And,
    Or,
    Not,
    Plus,
    Minus,
    Open,
    Close,
    Colon,
    Caret,
    Tilde,
    RangeOpen(bool),
    RangeClose(bool),
    Quoted(String),
    Regex(String),
    /// A word; `wild` when it holds an unescaped `*` or `?`.
    Word {
        text: String,
        wild: bool,
    },
    Star,
    Eof,
}

impl Tok {
    /// Lucene's `ParseException` rendering: `<EOF>`, or ` <KIND> "image "`.
    fn describe(&self) -> String {
        let (kind, image): (&str, String) = match self {
            Tok::Eof => return "<EOF>".into(),
            Tok::And => ("<AND>", "AND".into()),
            Tok::Or => ("<OR>", "OR".into()),
            Tok::Not => ("<NOT>", "NOT".into()),
            Tok::Plus => ("\"+\"", "+".into()),
            Tok::Minus => ("\"-\"", "-".into()),
            Tok::Open => ("\"(\"", "(".into()),
            Tok::Close => ("\")\"", ")".into()),
            Tok::Colon => ("\":\"", ":".into()),
            Tok::Caret => ("\"^\"", "^".into()),
            Tok::Tilde => ("\"~\"", "~".into()),
            Tok::RangeOpen(true) => ("\"[\"", "[".into()),
            Tok::RangeOpen(false) => ("\"{\"", "{".into()),
            Tok::RangeClose(true) => ("\"]\"", "]".into()),
            Tok::RangeClose(false) => ("\"}\"", "}".into()),
            Tok::Quoted(s) => ("<QUOTED>", format!("\\\"{s}\\\"")),
            Tok::Regex(s) => ("<REGEXPTERM>", format!("/{s}/")),
            Tok::Word { text, .. } => ("<TERM>", text.clone()),
            Tok::Star => ("\"*\"", "*".into()),
        };
        format!(" {kind} \"{image} \"")
    }
}

fn special(c: char) -> bool {
    c.is_whitespace()
        || matches!(c, '(' | ')' | ':' | '^' | '[' | ']' | '{' | '}' | '"' | '~' | '/' | '\\')
}

/// Splits the query into tokens with their character columns.
fn lex(q: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let chars: Vec<char> = q.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let lex_err = |col: usize, prefix: &str| ParseError {
        kind: "TokenMgrError",
        message: format!(
            "Lexical error at line 1, column {}.  Encountered: <EOF> after prefix \"{}\"",
            col,
            prefix.replace('"', "\\\"")
        ),
    };
    while i < chars.len() {
        let c = chars[i];
        let at = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let simple = match c {
            '(' => Some(Tok::Open),
            ')' => Some(Tok::Close),
            ':' => Some(Tok::Colon),
            '^' => Some(Tok::Caret),
            '~' => Some(Tok::Tilde),
            '+' => Some(Tok::Plus),
            '-' => Some(Tok::Minus),
            '!' => Some(Tok::Not),
            '[' => Some(Tok::RangeOpen(true)),
            '{' => Some(Tok::RangeOpen(false)),
            ']' => Some(Tok::RangeClose(true)),
            '}' => Some(Tok::RangeClose(false)),
            _ => None,
        };
        if let Some(t) = simple {
            out.push((t, at));
            i += 1;
            continue;
        }
        if c == '&' && chars.get(i + 1) == Some(&'&') {
            out.push((Tok::And, at));
            i += 2;
            continue;
        }
        if c == '|' && chars.get(i + 1) == Some(&'|') {
            out.push((Tok::Or, at));
            i += 2;
            continue;
        }
        if c == '"' || c == '/' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => {
                        let prefix: String = chars[at..].iter().collect();
                        return Err(lex_err(chars.len() + 1, &prefix));
                    }
                    Some(&'\\') if c == '"' && i + 1 < chars.len() => {
                        s.push(chars[i + 1]);
                        i += 2;
                    }
                    Some(&'\\') if c == '/' && chars.get(i + 1) == Some(&'/') => {
                        s.push('/');
                        i += 2;
                    }
                    Some(&d) if d == c => {
                        i += 1;
                        break;
                    }
                    Some(&d) => {
                        s.push(d);
                        i += 1;
                    }
                }
            }
            out.push((if c == '"' { Tok::Quoted(s) } else { Tok::Regex(s) }, at));
            continue;
        }
        // A word: up to the next special character; `\` escapes one character.
        let mut text = String::new();
        let mut wild = false;
        while i < chars.len() {
            let d = chars[i];
            if d == '\\' {
                let Some(&e) = chars.get(i + 1) else {
                    let prefix: String = chars[at..].iter().collect();
                    return Err(lex_err(chars.len() + 1, &prefix));
                };
                // Escaped wildcards stay literal: keep the escape for the pattern builder.
                if wild_char(e) {
                    text.push('\\');
                }
                text.push(e);
                i += 2;
                continue;
            }
            if special(d) || (text.is_empty() && matches!(d, '+' | '-' | '!')) {
                break;
            }
            wild |= wild_char(d);
            text.push(d);
            i += 1;
        }
        let tok = match text.as_str() {
            "AND" => Tok::And,
            "OR" => Tok::Or,
            "NOT" => Tok::Not,
            "*" => Tok::Star,
            _ => Tok::Word { text, wild },
        };
        out.push((tok, at));
    }
    out.push((Tok::Eof, chars.len()));
    Ok(out)
}

fn wild_char(c: char) -> bool {
    c == '*' || c == '?'
}

/// Removes the escapes `lex` kept before literal wildcard characters.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

/// Parses a Lucene query.
pub fn parse(q: &str) -> Result<Node, ParseError> {
    let mut p = Parser { toks: lex(q)?, pos: 0 };
    let node = p.query(None)?;
    if p.peek() != &Tok::Eof {
        return Err(p.unexpected());
    }
    Ok(node)
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].0
    }

    fn bump(&mut self) -> Tok {
        let t = self.toks[self.pos].0.clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn unexpected(&self) -> ParseError {
        let (t, col) = &self.toks[self.pos];
        ParseError {
            kind: "ParseException",
            message: format!("Encountered \"{}\" at line 1, column {col}.", t.describe()),
        }
    }

    /// `Query := (Conj? Mod? Clause)+`, with Lucene's classic `addClause` rules.
    fn query(&mut self, field: Option<&str>) -> Result<Node, ParseError> {
        let mut clauses: Vec<(Occur, Node)> = Vec::new();
        let mut first = true;
        loop {
            let conj = match self.peek() {
                Tok::And | Tok::Or if !first => Some(self.bump()),
                Tok::Eof | Tok::Close if !first => break,
                _ => None,
            };
            let prohibit = matches!(self.peek(), Tok::Not | Tok::Minus);
            let require = matches!(self.peek(), Tok::Plus);
            if prohibit || require {
                self.bump();
            }
            let clause = self.clause(field)?;
            let and = conj == Some(Tok::And);
            if and {
                // `a AND b`: the previous clause becomes required unless prohibited.
                if let Some(last) = clauses.last_mut() {
                    if last.0 == Occur::Should {
                        last.0 = Occur::Must;
                    }
                }
            }
            let occur = if prohibit {
                Occur::MustNot
            } else if require || and {
                Occur::Must
            } else {
                Occur::Should
            };
            clauses.push((occur, clause));
            first = false;
        }
        Ok(if clauses.len() == 1 && clauses[0].0 == Occur::Should {
            clauses.pop().map(|c| c.1).unwrap_or(Node::Bool(Vec::new()))
        } else {
            Node::Bool(clauses)
        })
    }

    /// `[field ':'] (Term | '(' Query ')' ['^' boost])`.
    fn clause(&mut self, field: Option<&str>) -> Result<Node, ParseError> {
        let mut field = field.map(str::to_string);
        let fielded = matches!(self.peek(), Tok::Word { wild: false, .. } | Tok::Star)
            && *self.peek_at(1) == Tok::Colon;
        if fielded {
            let f = match self.bump() {
                Tok::Word { text, .. } => text,
                _ => "*".to_string(),
            };
            self.bump(); // ':'
            if f == "*" && *self.peek() == Tok::Star {
                self.bump();
                return self.boosted(Node::All);
            }
            field = Some(f);
        }
        if *self.peek() == Tok::Open {
            self.bump();
            let inner = self.query(field.as_deref())?;
            if *self.peek() != Tok::Close {
                return Err(self.unexpected());
            }
            self.bump();
            return self.boosted(inner);
        }
        self.term(field)
    }

    fn boosted(&mut self, node: Node) -> Result<Node, ParseError> {
        if *self.peek() != Tok::Caret {
            return Ok(node);
        }
        self.bump();
        let b = self.number()?;
        Ok(Node::Boost(Box::new(node), b))
    }

    fn number(&mut self) -> Result<f32, ParseError> {
        match self.peek().clone() {
            Tok::Word { text, wild: false } => match text.parse::<f32>() {
                Ok(n) => {
                    self.bump();
                    Ok(n)
                }
                Err(_) => Err(self.unexpected()),
            },
            _ => Err(self.unexpected()),
        }
    }

    fn optional_number(&mut self) -> Option<f32> {
        match self.peek() {
            Tok::Word { text, wild: false } => {
                let n = text.parse::<f32>().ok()?;
                self.bump();
                Some(n)
            }
            _ => None,
        }
    }

    fn term(&mut self, field: Option<String>) -> Result<Node, ParseError> {
        let node = match self.peek().clone() {
            Tok::Word { text, wild } => {
                self.bump();
                if *self.peek() == Tok::Tilde {
                    self.bump();
                    let edits = fuzzy_edits(self.optional_number(), text.chars().count());
                    Node::Fuzzy { field, text: unescape(&text), edits }
                } else if wild {
                    Node::Wildcard { field, pattern: text }
                } else {
                    Node::Term { field, text }
                }
            }
            Tok::Star => {
                self.bump();
                Node::Wildcard { field, pattern: "*".into() }
            }
            Tok::Quoted(text) => {
                self.bump();
                let mut slop = 0;
                if *self.peek() == Tok::Tilde {
                    self.bump();
                    slop = self.optional_number().map_or(0, |n| n.max(0.0) as u32);
                }
                Node::Phrase { field, text, slop }
            }
            Tok::Regex(pattern) => {
                self.bump();
                Node::Regex { field, pattern }
            }
            Tok::RangeOpen(incl_lower) => {
                self.bump();
                let lower = self.range_bound()?;
                match self.peek() {
                    Tok::Word { text, .. } if text == "TO" => {
                        self.bump();
                    }
                    _ => return Err(self.unexpected()),
                }
                let upper = self.range_bound()?;
                let Tok::RangeClose(incl_upper) = *self.peek() else {
                    return Err(self.unexpected());
                };
                self.bump();
                Node::Range { field, lower, upper, incl: (incl_lower, incl_upper) }
            }
            _ => return Err(self.unexpected()),
        };
        self.boosted(node)
    }

    fn range_bound(&mut self) -> Result<Option<String>, ParseError> {
        match self.peek().clone() {
            Tok::Star => {
                self.bump();
                Ok(None)
            }
            Tok::Word { text, .. } if text != "TO" => {
                self.bump();
                Ok(Some(unescape(&text)))
            }
            Tok::Quoted(text) => {
                self.bump();
                Ok(Some(text))
            }
            _ => Err(self.unexpected()),
        }
    }
}

/// Lucene's `term~N`: `N` edits (default 2), or for a legacy similarity below 1, edits derived
/// from the term's length; at most 2.
fn fuzzy_edits(n: Option<f32>, len: usize) -> u8 {
    let edits = match n {
        None => 2.0,
        Some(s) if s >= 1.0 => s.floor(),
        Some(s) => ((1.0 - s) * len as f32).floor(),
    };
    edits.clamp(0.0, 2.0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(t: &str) -> Node {
        Node::Term { field: None, text: t.into() }
    }

    #[test]
    fn default_operator_is_or_and_and_requires_both_sides() {
        assert_eq!(
            parse("a b").unwrap(),
            Node::Bool(vec![(Occur::Should, term("a")), (Occur::Should, term("b"))])
        );
        assert_eq!(
            parse("a AND b OR c").unwrap(),
            Node::Bool(vec![
                (Occur::Must, term("a")),
                (Occur::Must, term("b")),
                (Occur::Should, term("c"))
            ])
        );
        assert_eq!(
            parse("+a -b NOT c").unwrap(),
            Node::Bool(vec![
                (Occur::Must, term("a")),
                (Occur::MustNot, term("b")),
                (Occur::MustNot, term("c"))
            ])
        );
    }

    #[test]
    fn fields_groups_boosts_and_special_terms() {
        let f = Some("title".to_string());
        assert_eq!(
            parse("title:(x OR y)^2").unwrap(),
            Node::Boost(
                Box::new(Node::Bool(vec![
                    (Occur::Should, Node::Term { field: f.clone(), text: "x".into() }),
                    (Occur::Should, Node::Term { field: f.clone(), text: "y".into() }),
                ])),
                2.0
            )
        );
        assert_eq!(parse("*:*").unwrap(), Node::All);
        assert_eq!(
            parse("\"a b\"~3").unwrap(),
            Node::Phrase { field: None, text: "a b".into(), slop: 3 }
        );
        assert_eq!(parse("ma*").unwrap(), Node::Wildcard { field: None, pattern: "ma*".into() });
        assert_eq!(
            parse("matrx~").unwrap(),
            Node::Fuzzy { field: None, text: "matrx".into(), edits: 2 }
        );
        assert_eq!(
            parse("matrx~1").unwrap(),
            Node::Fuzzy { field: None, text: "matrx".into(), edits: 1 }
        );
        assert_eq!(
            parse("[a TO *}").unwrap(),
            Node::Range { field: None, lower: Some("a".into()), upper: None, incl: (true, false) }
        );
        assert_eq!(parse("/ma.*x/").unwrap(), Node::Regex { field: None, pattern: "ma.*x".into() });
        assert_eq!(parse("e\\-mail").unwrap(), term("e-mail"));
    }

    #[test]
    fn errors_read_like_lucene() {
        assert_eq!(
            parse("AND (").unwrap_err().message,
            "Encountered \" <AND> \"AND \"\" at line 1, column 0."
        );
        assert_eq!(parse("").unwrap_err().message, "Encountered \"<EOF>\" at line 1, column 0.");
        let e = parse("\"unterminated").unwrap_err();
        assert_eq!(e.kind, "TokenMgrError");
        assert!(e.message.starts_with("Lexical error at line 1, column 14."), "{}", e.message);
        assert!(parse("(a").is_err());
        assert!(parse("a AND").is_err());
        assert!(parse("a^x").is_err());
    }
}
