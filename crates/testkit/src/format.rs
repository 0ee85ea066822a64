//! Parsing a golden file into [`Record`]s (the format is documented at the crate root). The
//! parser keeps each record's line span so the rewrite mode can replace exactly that span; it
//! does not look inside queries or values.

/// What a record asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `statement ok`
    Ok,
    /// `statement error CODE [message substring]`
    Error { code: String, message: Option<String> },
    /// `query` (multiset) or `query ordered`.
    Query { ordered: bool },
    /// `query explain` or `plan`: the body is explained and the plan compared.
    Explain,
    /// `restart`: clean shutdown and reopen.
    Restart,
    /// `crash`: kill without checkpoint and reopen.
    Crash,
}

/// One record of a golden file.
#[derive(Clone, Debug)]
pub struct Record {
    /// 1-based line of the record's header, for messages.
    pub line: usize,
    pub kind: Kind,
    /// The `connection NAME` before this record, if any.
    pub connection: Option<String>,
    /// The `params {...}` map literal before this record, if any (text, evaluated later).
    pub params: Option<String>,
    /// The query text (lines joined by `\n`); empty for `restart` / `crash`.
    pub query: String,
    /// The lines after `----`, trimmed; `None` if the record has no `----`.
    pub expected: Option<Vec<String>>,
    /// 0-based index of the header line and one past the record's last line: the span the
    /// rewrite mode replaces (`connection` / `params` lines stay outside it).
    pub span: (usize, usize),
}

/// Parses a whole file; errors name the line.
pub fn parse(text: &str) -> Result<Vec<Record>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut records = Vec::new();
    let mut connection = None;
    let mut params: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.is_empty() || line.starts_with('#') {
            i += 1;
            continue;
        }
        if let Some(name) = line.strip_prefix("connection ") {
            connection = Some(name.trim().to_string());
            i += 1;
            continue;
        }
        if let Some(rest) = line.strip_prefix("params") {
            let (text, next) = params_literal(&lines, i, rest)?;
            params = Some(text);
            i = next;
            continue;
        }
        let header = i;
        let kind =
            header_kind(line).ok_or_else(|| format!("line {}: unknown record `{line}`", i + 1))?;
        i += 1;
        let mut query = Vec::new();
        if !matches!(kind, Kind::Restart | Kind::Crash) {
            while i < lines.len() && !lines[i].trim().is_empty() && lines[i].trim() != "----" {
                query.push(lines[i]);
                i += 1;
            }
        }
        let mut expected = None;
        if i < lines.len() && lines[i].trim() == "----" {
            i += 1;
            let mut rows = Vec::new();
            while i < lines.len() && !lines[i].trim().is_empty() {
                rows.push(lines[i].trim().to_string());
                i += 1;
            }
            expected = Some(rows);
        }
        if query.is_empty() && !matches!(kind, Kind::Restart | Kind::Crash) {
            return Err(format!("line {}: record `{line}` has no query", header + 1));
        }
        records.push(Record {
            line: header + 1,
            kind,
            connection: connection.take(),
            params: params.take(),
            query: query.join("\n"),
            expected,
            span: (header, i),
        });
    }
    if connection.is_some() || params.is_some() {
        return Err("`connection` or `params` at the end of the file applies to no record".into());
    }
    Ok(records)
}

fn header_kind(line: &str) -> Option<Kind> {
    Some(match line {
        "statement ok" => Kind::Ok,
        "query" => Kind::Query { ordered: false },
        "query ordered" => Kind::Query { ordered: true },
        "query explain" | "plan" => Kind::Explain,
        "restart" => Kind::Restart,
        "crash" => Kind::Crash,
        _ => {
            let rest = line.strip_prefix("statement error")?;
            let rest = rest.trim();
            let (code, message) = match rest.split_once(char::is_whitespace) {
                Some((c, m)) => (c, Some(m.trim().to_string())),
                None => (rest, None),
            };
            if code.is_empty() {
                return None;
            }
            Kind::Error { code: code.to_string(), message }
        }
    })
}

/// Reads a `params` map literal starting on line `at` (after the keyword: `rest`), continuing
/// over further lines until its braces balance. Returns the text and the next line index.
fn params_literal(lines: &[&str], at: usize, rest: &str) -> Result<(String, usize), String> {
    let mut text = rest.trim().to_string();
    let mut i = at + 1;
    loop {
        match brace_depth(&text) {
            Some(0) if text.starts_with('{') => return Ok((text, i)),
            Some(d) if d > 0 && i < lines.len() && !lines[i].trim().is_empty() => {
                text.push('\n');
                text.push_str(lines[i]);
                i += 1;
            }
            _ => return Err(format!("line {}: `params` needs one map literal `{{...}}`", at + 1)),
        }
    }
}

/// Brace nesting at the end of `text`, ignoring braces inside quoted strings; `None` if it
/// goes negative.
fn brace_depth(text: &str) -> Option<i32> {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    Some(depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Goal: every record kind parses with its modifiers and spans. Method: one file with all.
    #[test]
    fn parses_every_record_kind() {
        let text = "# c\nconnection w\nparams {a: '}', b: [1,\n  2]}\nquery ordered\nRETURN $a\n----\n'}'\n\nrestart\n\nstatement error Neo.ClientError.Statement.SyntaxError Invalid input\nMATCH (n\n\nplan\nMATCH (n) RETURN n\n----\n01)ProduceResults: n\n";
        let r = parse(text).unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].connection.as_deref(), Some("w"));
        assert_eq!(r[0].params.as_deref(), Some("{a: '}', b: [1,\n  2]}"));
        assert_eq!(r[0].kind, Kind::Query { ordered: true });
        assert_eq!(r[0].expected, Some(vec!["'}'".to_string()]));
        assert_eq!(r[0].span, (4, 8));
        assert_eq!(r[1].kind, Kind::Restart);
        assert!(r[1].connection.is_none());
        assert_eq!(
            r[2].kind,
            Kind::Error {
                code: "Neo.ClientError.Statement.SyntaxError".into(),
                message: Some("Invalid input".into())
            }
        );
        assert_eq!(r[3].kind, Kind::Explain);
    }

    // Goal: malformed files are rejected with the line. Method: three broken files.
    #[test]
    fn rejects_malformed_records() {
        assert!(parse("querie\nRETURN 1\n").unwrap_err().starts_with("line 1"));
        assert!(parse("params {a: 1\n\nstatement ok\nRETURN 1\n").is_err());
        assert!(parse("statement ok\n\nconnection x\n").is_err());
        assert!(parse("statement ok\n----\n").is_err());
    }
}
