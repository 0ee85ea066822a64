//! Syntax-error construction in Neo4j's format: what was found, what was expected, and where
//! (`(line L, column C (offset: O))`).

use arbor_model::Error;

/// 1-based line and column (in characters) of byte `offset` in `text`.
///
/// Offsets past the end or inside a multi-byte character are clamped to the nearest preceding
/// character boundary, so this never panics.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Character offset of byte `offset`, which is what Neo4j reports as `offset`.
fn char_offset(text: &str, offset: usize) -> usize {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].chars().count()
}

/// Characters of context shown on each side of the caret for long lines.
const SNIPPET_RADIUS: usize = 60;

/// A `SyntaxError` whose message gives the position of byte `offset` and, like Neo4j, quotes the
/// offending line with a caret under the column.
pub(crate) fn syntax_error_at(text: &str, offset: usize, message: &str) -> Error {
    let (line, column) = line_col(text, offset);
    let off = char_offset(text, offset);
    let line_text = text.lines().nth(line - 1).unwrap_or("");
    // Long lines (generated queries) are cut to a window around the caret.
    let skip = column.saturating_sub(1 + SNIPPET_RADIUS);
    let shown: String = line_text.chars().skip(skip).take(2 * SNIPPET_RADIUS).collect();
    let caret_col = column - 1 - skip;
    Error::syntax(format!(
        "{message} (line {line}, column {column} (offset: {off}))\n\"{shown}\"\n{}^",
        " ".repeat(caret_col + 1)
    ))
}
