//! Tokenizer: Cypher text → a flat token vector with byte spans.
//!
//! The lexer is deliberately context-free: arrows such as `-->` or `<-[` are emitted as the single
//! symbols `<`, `-`, `>` and reassembled by the pattern parser, because the same characters mean
//! comparison and subtraction inside expressions. Literal values are decoded here (string escapes,
//! number bases) so the parser deals only in values; integers are kept unsigned so that the parser
//! can accept `-9223372036854775808` by folding the sign into the literal.

use arbor_model::Error;

use crate::ast::Span;
use crate::error::syntax_error_at;

/// A token kind with its decoded payload.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// An unquoted word; keywords are words too (compared case-insensitively by the parser).
    Word(String),
    /// A backtick-quoted identifier, unescaped. Never a keyword.
    Quoted(String),
    /// An integer literal; `None` when it does not even fit in a `u64`.
    Int(Option<u64>),
    Float(f64),
    Str(String),
    /// `$name` / `$0` (name without the dollar).
    Param(String),
    /// Punctuation and operators, e.g. `"("`, `".."`, `"<="`.
    Sym(&'static str),
    Eof,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Two-character symbols first so that the longest match wins.
const SYMBOLS: &[&str] = &[
    "..", "<>", "<=", ">=", "!=", "=~", "+=", "(", ")", "[", "]", "{", "}", ",", ".", ":", ";",
    "|", "=", "<", ">", "+", "-", "*", "/", "%", "^", "&", "!",
];

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    out: Vec<Token>,
}

/// Splits `text` into tokens, ending with [`Tok::Eof`].
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, Error> {
    let mut lx = Lexer { text, pos: 0, out: Vec::new() };
    lx.run()?;
    Ok(lx.out)
}

impl<'a> Lexer<'a> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.text[self.pos..].chars().nth(n)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// A lexical error; callers override the TCK detail where a more specific one applies.
    fn err(&self, at: usize, msg: &str) -> Error {
        syntax_error_at(self.text, at, msg).with_detail("UnexpectedSyntax")
    }

    fn push(&mut self, tok: Tok, start: usize) {
        self.out.push(Token { tok, span: Span { start, end: self.pos } });
    }

    fn run(&mut self) -> Result<(), Error> {
        loop {
            self.skip_trivia()?;
            let start = self.pos;
            let Some(c) = self.peek() else {
                self.push(Tok::Eof, start);
                return Ok(());
            };
            if c.is_ascii_digit()
                || (c == '.' && self.peek_at(1).is_some_and(|d| d.is_ascii_digit()))
            {
                self.number(start)?;
            } else if is_ident_start(c) {
                while self.peek().is_some_and(is_ident_continue) {
                    self.bump();
                }
                let word = self.text[start..self.pos].to_string();
                self.push(Tok::Word(word), start);
            } else if c == '`' {
                let name = self.quoted_ident()?;
                self.push(Tok::Quoted(name), start);
            } else if c == '\'' || c == '"' {
                let s = self.string(c)?;
                self.push(Tok::Str(s), start);
            } else if c == '$' && self.peek_at(1) == Some('(') {
                // `$(expr)`: a dynamic label or type (Neo4j 5.26).
                self.bump();
                self.push(Tok::Sym("$"), start);
            } else if c == '$' {
                self.bump();
                let name = match self.peek() {
                    Some('`') => self.quoted_ident()?,
                    Some(d) if is_ident_continue(d) => {
                        let s = self.pos;
                        while self.peek().is_some_and(is_ident_continue) {
                            self.bump();
                        }
                        self.text[s..self.pos].to_string()
                    }
                    _ => return Err(self.err(self.pos, "expected a parameter name after '$'")),
                };
                self.push(Tok::Param(name), start);
            } else if let Some(sym) =
                SYMBOLS.iter().find(|s| self.text[self.pos..].starts_with(**s))
            {
                self.pos += sym.len();
                self.push(Tok::Sym(sym), start);
            } else {
                return Err(self.err(start, &format!("Invalid input '{c}'")));
            }
        }
    }

    fn skip_trivia(&mut self) -> Result<(), Error> {
        loop {
            let rest = &self.text[self.pos..];
            if rest.starts_with("//") {
                match rest.find('\n') {
                    Some(n) => self.pos += n + 1,
                    None => self.pos = self.text.len(),
                }
            } else if let Some(body) = rest.strip_prefix("/*") {
                match body.find("*/") {
                    Some(n) => self.pos += n + 4,
                    None => return Err(self.err(self.pos, "Failed to parse comment: missing '*/'")),
                }
            } else if self.peek().is_some_and(char::is_whitespace) {
                self.bump();
            } else {
                return Ok(());
            }
        }
    }

    fn quoted_ident(&mut self) -> Result<String, Error> {
        let start = self.pos;
        self.bump(); // opening backtick
        let mut name = String::new();
        loop {
            match self.bump() {
                None => return Err(self.err(start, "Failed to parse quoted name: missing '`'")),
                Some('`') => {
                    // A doubled backtick stands for one literal backtick.
                    if self.peek() == Some('`') {
                        self.bump();
                        name.push('`');
                    } else {
                        return Ok(name);
                    }
                }
                Some(c) => name.push(c),
            }
        }
    }

    fn string(&mut self, quote: char) -> Result<String, Error> {
        let start = self.pos;
        self.bump();
        let mut s = String::new();
        loop {
            let at = self.pos;
            match self.bump() {
                None => {
                    return Err(self
                        .err(start, &format!("Failed to parse string literal: missing {quote}")))
                }
                Some(c) if c == quote => return Ok(s),
                Some('\\') => {
                    let Some(e) = self.bump() else {
                        return Err(self.err(at, "Failed to parse string literal: dangling '\\'"));
                    };
                    match e {
                        '\\' => s.push('\\'),
                        '\'' => s.push('\''),
                        '"' => s.push('"'),
                        'n' | 'N' => s.push('\n'),
                        't' | 'T' => s.push('\t'),
                        'r' | 'R' => s.push('\r'),
                        'b' | 'B' => s.push('\u{8}'),
                        'f' | 'F' => s.push('\u{c}'),
                        'u' | 'U' => {
                            let n = if e == 'u' { 4 } else { 8 };
                            let hex_start = self.pos;
                            for _ in 0..n {
                                if !self.peek().is_some_and(|h| h.is_ascii_hexdigit()) {
                                    return Err(self
                                        .err(at, "Invalid input: invalid unicode escape sequence")
                                        .with_detail("InvalidUnicodeLiteral"));
                                }
                                self.bump();
                            }
                            let code = u32::from_str_radix(&self.text[hex_start..self.pos], 16)
                                .ok()
                                .and_then(char::from_u32);
                            match code {
                                Some(ch) => s.push(ch),
                                None => {
                                    return Err(self
                                        .err(at, "Invalid input: invalid unicode code point")
                                        .with_detail("InvalidUnicodeLiteral"))
                                }
                            }
                        }
                        // Neo4j keeps unknown escapes verbatim (e.g. regexes written as '\d').
                        other => {
                            s.push('\\');
                            s.push(other);
                        }
                    }
                }
                Some(c) => s.push(c),
            }
        }
    }

    fn number(&mut self, start: usize) -> Result<(), Error> {
        let rest = &self.text[self.pos..];
        let radix_prefix = if rest.starts_with("0x") || rest.starts_with("0X") {
            Some(16)
        } else if rest.starts_with("0o") || rest.starts_with("0O") {
            Some(8)
        } else {
            None
        };
        if let Some(radix) = radix_prefix {
            self.pos += 2;
            let ds = self.pos;
            while self.peek().is_some_and(is_ident_continue) {
                self.bump();
            }
            let digits = &self.text[ds..self.pos];
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return Err(self.invalid_number(start));
            }
            let value = u64::from_str_radix(digits, radix).ok();
            self.push(Tok::Int(value), start);
            return Ok(());
        }
        let mut is_float = false;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
        // A fraction needs a digit after the dot, so `1..3` stays a range.
        if self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            is_float = true;
            self.bump();
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let sign = matches!(self.peek_at(1), Some('+' | '-'));
            let digit_at = if sign { 2 } else { 1 };
            if self.peek_at(digit_at).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                for _ in 0..=digit_at {
                    self.bump();
                }
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.bump();
                }
            }
        }
        if self.peek().is_some_and(is_ident_continue) {
            while self.peek().is_some_and(is_ident_continue) {
                self.bump();
            }
            return Err(self.invalid_number(start));
        }
        let lit = &self.text[start..self.pos];
        if is_float {
            let v: f64 = lit.parse().map_err(|_| self.invalid_number(start))?;
            if v.is_infinite() {
                return Err(self
                    .err(start, "floating point number is too large")
                    .with_detail("FloatingPointOverflow"));
            }
            self.push(Tok::Float(v), start);
        } else if lit.len() > 1 && lit.starts_with('0') {
            // Legacy octal: `0777`.
            if !lit.chars().all(|c| c.is_digit(8)) {
                return Err(self.invalid_number(start));
            }
            self.push(Tok::Int(u64::from_str_radix(&lit[1..], 8).ok()), start);
        } else {
            self.push(Tok::Int(lit.parse::<u64>().ok()), start);
        }
        Ok(())
    }

    fn invalid_number(&self, start: usize) -> Error {
        let lit = &self.text[start..self.pos];
        self.err(start, &format!("Invalid input '{lit}': invalid number literal"))
            .with_detail("InvalidNumberLiteral")
    }
}
