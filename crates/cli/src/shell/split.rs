//! Splitting shell input into statements and `:` commands, as cypher-shell does: a Cypher
//! statement ends at a `;` outside string literals, quoted names and comments; a line whose
//! first non-blank character is `:` (outside a statement) is a shell command ending at the line's
//! end.

/// One unit of input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A Cypher statement without its terminating `;`.
    Statement(String),
    /// A shell command line such as `:param x => 1` (leading `:` kept, trimmed).
    Command(String),
}

/// Incremental splitter: feed lines, take complete items; what is left is an unfinished
/// statement.
#[derive(Default, Debug)]
pub struct Splitter {
    buf: String,
    state: Lex,
}

#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
enum Lex {
    #[default]
    Code,
    Single,
    Double,
    Backtick,
    LineComment,
    BlockComment,
}

impl Splitter {
    /// True when no partial statement is buffered (a prompt shows the primary form).
    pub fn is_idle(&self) -> bool {
        self.state == Lex::Code && is_only_comments(&self.buf)
    }

    /// Adds one line (without its newline) and returns the items it completed.
    pub fn push_line(&mut self, line: &str) -> Vec<Item> {
        let mut out = Vec::new();
        if self.is_idle() && self.state == Lex::Code && line.trim_start().starts_with(':') {
            self.buf.clear();
            out.push(Item::Command(line.trim().to_string()));
            return out;
        }
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match self.state {
                Lex::Code => match c {
                    ';' => {
                        let stmt = std::mem::take(&mut self.buf);
                        let stmt = stmt.trim();
                        if !stmt.is_empty() {
                            out.push(Item::Statement(stmt.to_string()));
                        }
                        continue;
                    }
                    '\'' => self.state = Lex::Single,
                    '"' => self.state = Lex::Double,
                    '`' => self.state = Lex::Backtick,
                    '/' if chars.peek() == Some(&'/') => {
                        // Line comments are dropped: they never reach the server.
                        self.state = Lex::LineComment;
                        continue;
                    }
                    '/' if chars.peek() == Some(&'*') => {
                        self.buf.push(c);
                        self.buf.push('*');
                        chars.next();
                        self.state = Lex::BlockComment;
                        continue;
                    }
                    _ => {}
                },
                Lex::Single | Lex::Double => {
                    let close = if self.state == Lex::Single { '\'' } else { '"' };
                    if c == '\\' {
                        self.buf.push(c);
                        if let Some(n) = chars.next() {
                            self.buf.push(n);
                        }
                        continue;
                    }
                    if c == close {
                        self.state = Lex::Code;
                    }
                }
                Lex::Backtick => {
                    if c == '`' {
                        self.state = Lex::Code;
                    }
                }
                Lex::LineComment => continue,
                Lex::BlockComment => {
                    if c == '*' && chars.peek() == Some(&'/') {
                        self.buf.push(c);
                        self.buf.push('/');
                        chars.next();
                        self.state = Lex::Code;
                        continue;
                    }
                }
            }
            self.buf.push(c);
        }
        if self.state == Lex::LineComment {
            self.state = Lex::Code;
        }
        if !self.buf.trim().is_empty() {
            self.buf.push('\n');
        } else {
            self.buf.clear();
        }
        out
    }

    /// What is left at the end of the input (a statement without a final `;`), if anything.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.buf);
        self.state = Lex::Code;
        let rest = rest.trim();
        (!rest.is_empty() && !is_only_comments(rest)).then(|| rest.to_string())
    }
}

/// A remainder made only of comments is not a statement.
fn is_only_comments(text: &str) -> bool {
    let mut rest = text.trim_start();
    loop {
        if rest.is_empty() {
            return true;
        }
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map(|i| &r[i + 1..]).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map(|i| &r[i + 2..]).unwrap_or("");
        } else {
            return false;
        }
        rest = rest.trim_start();
    }
}

/// Splits a whole input at once (files, `-c`, piped standard input).
pub fn split_all(text: &str) -> Vec<Item> {
    let mut s = Splitter::default();
    let mut items = Vec::new();
    for line in text.lines() {
        items.extend(s.push_line(line));
    }
    if let Some(rest) = s.finish() {
        items.push(Item::Statement(rest));
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmts(text: &str) -> Vec<Item> {
        split_all(text)
    }

    #[test]
    fn semicolons_end_statements_outside_strings_names_and_comments() {
        let items = stmts(
            "RETURN 'a;b' AS x;\nRETURN \"c;\" AS `y;z`; // tail; comment\nMATCH (n)\n/* ; */ RETURN n;",
        );
        assert_eq!(
            items,
            vec![
                Item::Statement("RETURN 'a;b' AS x".into()),
                Item::Statement("RETURN \"c;\" AS `y;z`".into()),
                Item::Statement("MATCH (n)\n/* ; */ RETURN n".into()),
            ]
        );
    }

    #[test]
    fn escaped_quotes_stay_inside_the_string() {
        assert_eq!(
            stmts("RETURN 'it\\'s;' AS s;"),
            vec![Item::Statement("RETURN 'it\\'s;' AS s".into())]
        );
    }

    #[test]
    fn commands_are_lines_starting_with_a_colon_between_statements() {
        let items = stmts(":param x => 1\nRETURN $x\n AS v;\n  :begin\n");
        assert_eq!(
            items,
            vec![
                Item::Command(":param x => 1".into()),
                Item::Statement("RETURN $x\n AS v".into()),
                Item::Command(":begin".into()),
            ]
        );
    }

    #[test]
    fn a_colon_inside_a_statement_is_not_a_command() {
        let items = stmts("MATCH (n\n:Label) RETURN n;");
        assert_eq!(items, vec![Item::Statement("MATCH (n\n:Label) RETURN n".into())]);
    }

    #[test]
    fn a_final_statement_without_semicolon_is_kept_but_not_a_comment() {
        assert_eq!(stmts("RETURN 1"), vec![Item::Statement("RETURN 1".into())]);
        assert_eq!(stmts("RETURN 1; // done"), vec![Item::Statement("RETURN 1".into())]);
        assert_eq!(stmts("RETURN 1; /* done */"), vec![Item::Statement("RETURN 1".into())]);
    }

    #[test]
    fn the_splitter_reports_whether_a_statement_is_pending() {
        let mut s = Splitter::default();
        assert!(s.push_line("MATCH (n)").is_empty());
        assert!(!s.is_idle());
        assert_eq!(s.push_line("RETURN n;"), vec![Item::Statement("MATCH (n)\nRETURN n".into())]);
        assert!(s.is_idle());
    }
}
