//! Source scanning for the tidy checks in `tests/tidy.rs` (run by `cargo test`, as
//! rust-analyzer's tidy and TigerBeetle's `tidy.zig`): blanking comments and literals so that
//! braces and words inside them are not seen, and finding each `fn` with the lines from its
//! `fn` line to its closing brace. It is a plain scanner, not a Rust parser: it knows
//! comments (nested block comments too), string, raw string, byte and char literals, and
//! tells lifetimes from char literals; that is all brace matching needs.
//!
//! To print what is over a limit today (the allowlists' format), run
//! `TIDY_PRINT=1 cargo test --release -p arbor-tidy -- --nocapture`; `TIDY_BLESS=1` rewrites
//! the allowlists in `crates/tidy/allow/` from the current tree instead. [`uses`] builds the
//! file-level `use` graph of a crate for the check that files do not import each other in a loop.

pub mod uses;

/// One function found in a source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnSpan {
    /// The function's name (without `r#`).
    pub name: String,
    /// 1-based line of the `fn` keyword.
    pub start_line: usize,
    /// 1-based line of the closing brace of its body.
    pub end_line: usize,
}

impl FnSpan {
    /// Lines from the `fn` line to the closing brace, both included.
    pub fn lines(&self) -> usize {
        self.end_line - self.start_line + 1
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source with every comment and every string, raw string and char literal replaced by
/// spaces (newlines are kept, so line numbers stay the same).
pub fn code_only(src: &str) -> String {
    let s: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, chars: &[char]| {
        for &c in chars {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident(s[i - 1]);
        let end = if c == '/' && next == Some('/') {
            s[i..].iter().position(|&c| c == '\n').map_or(s.len(), |p| i + p)
        } else if c == '/' && next == Some('*') {
            block_comment_end(&s, i)
        } else if c == '"' {
            string_end(&s, i + 1)
        } else if c == 'r' && !prev_ident
            || (c == 'b' || c == 'c') && next == Some('r') && !prev_ident
        {
            let r = if c == 'r' { i } else { i + 1 };
            match raw_string_end(&s, r + 1) {
                Some(e) => e,
                None => {
                    out.push(c);
                    i += 1;
                    continue;
                }
            }
        } else if c == '\'' {
            match char_literal_end(&s, i) {
                Some(e) => e,
                None => {
                    out.push(c);
                    i += 1;
                    continue;
                }
            }
        } else {
            out.push(c);
            i += 1;
            continue;
        };
        blank(&mut out, &s[i..end]);
        i = end;
    }
    out
}

/// End (exclusive) of a block comment starting at `i` (`/*`), nested comments included.
fn block_comment_end(s: &[char], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < s.len() {
        if s[i] == '/' && s.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    s.len()
}

/// End (exclusive, after the closing quote) of a string whose contents start at `i`.
fn string_end(s: &[char], mut i: usize) -> usize {
    while i < s.len() {
        match s[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// With `i` just after an `r`: the end of a raw string `#*"..."#*`, or `None` when this is
/// not one (an identifier such as `r#type`, or a plain `r`).
fn raw_string_end(s: &[char], mut i: usize) -> Option<usize> {
    let mut hashes = 0;
    while s.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    if s.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    while i < s.len() {
        if s[i] == '"' && (1..=hashes).all(|k| s.get(i + k) == Some(&'#')) {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(s.len())
}

/// With `i` at a `'`: the end of a char literal, or `None` for a lifetime or label.
fn char_literal_end(s: &[char], i: usize) -> Option<usize> {
    match s.get(i + 1) {
        Some('\\') => {
            let mut j = i + 3;
            while j < s.len() && s[j] != '\'' && s[j] != '\n' {
                j += 1;
            }
            Some((j + 1).min(s.len()))
        }
        Some(_) if s.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// Every function with a body in `src`, in source order (nested ones too).
pub fn functions(src: &str) -> Vec<FnSpan> {
    let code: Vec<char> = code_only(src).chars().collect();
    let mut line_of = Vec::with_capacity(code.len());
    let mut line = 1;
    for &c in &code {
        line_of.push(line);
        if c == '\n' {
            line += 1;
        }
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i + 2 < code.len() {
        let at_fn = code[i] == 'f'
            && code[i + 1] == 'n'
            && code[i + 2].is_whitespace()
            && (i == 0 || !is_ident(code[i - 1]));
        if at_fn {
            if let Some(span) = function_at(&code, &line_of, i) {
                found.push(span);
            }
        }
        i += 1;
    }
    found
}

/// The function whose `fn` keyword is at `at`, if it has a name and a body.
fn function_at(code: &[char], line_of: &[usize], at: usize) -> Option<FnSpan> {
    let mut i = at + 2;
    while i < code.len() && code[i].is_whitespace() {
        i += 1;
    }
    if code.get(i) == Some(&'r') && code.get(i + 1) == Some(&'#') {
        i += 2;
    }
    let name_start = i;
    while i < code.len() && is_ident(code[i]) {
        i += 1;
    }
    if i == name_start || code[name_start].is_ascii_digit() {
        return None;
    }
    let name: String = code[name_start..i].iter().collect();
    let mut nesting = 0i32;
    while i < code.len() {
        match code[i] {
            '(' | '[' => nesting += 1,
            ')' | ']' => nesting -= 1,
            ';' if nesting == 0 => return None,
            '{' if nesting == 0 => break,
            _ => {}
        }
        i += 1;
    }
    let mut depth = 0usize;
    while i < code.len() {
        match code[i] {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(FnSpan { name, start_line: line_of[at], end_line: line_of[i] });
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(src: &str) -> Vec<(String, usize)> {
        functions(src).into_iter().map(|f| (f.name.clone(), f.lines())).collect()
    }

    #[test]
    fn counts_from_fn_line_to_closing_brace() {
        let src = "fn a() {\n    1;\n}\n\nfn b(x: u32)\n    -> u32\n{\n    x\n}\n";
        assert_eq!(spans(src), vec![("a".into(), 3), ("b".into(), 5)]);
    }

    #[test]
    fn braces_in_strings_chars_and_comments_are_ignored() {
        let src = r####"fn a() {
    let s = "}}}";
    let r = r#"}"#;
    let c = '}';
    let e = '\'';
    let u = '\u{7d}';
    // }
    /* } /* nested } */ } */
    let l: &'static str = "x";
    'outer: loop { break 'outer; }
}
fn b() {}
"####;
        assert_eq!(spans(src), vec![("a".into(), 11), ("b".into(), 1)]);
    }

    #[test]
    fn declarations_fn_types_and_nested_functions() {
        let src = "trait T {\n    fn decl(&self) -> [u8; 2];\n    fn body(&self) {\n        fn inner() {}\n        let f: fn(u8) = g;\n    }\n}\nfn r#type() {}\n";
        assert_eq!(spans(src), vec![("body".into(), 4), ("inner".into(), 1), ("type".into(), 1)]);
    }

    #[test]
    fn code_only_keeps_lines_and_blanks_literals() {
        let src = "let a = \"x\ny\"; // c\nlet b = b'z';";
        let code = code_only(src);
        assert_eq!(code.lines().count(), src.lines().count());
        assert!(!code.contains('x') && !code.contains('c') && !code.contains('z'));
        assert!(code.contains("let b = b"));
    }
}
