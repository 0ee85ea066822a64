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

/// A `SyntaxError` whose message ends with the position of byte `offset`.
pub(crate) fn syntax_error_at(text: &str, offset: usize, message: &str) -> Error {
    let (line, column) = line_col(text, offset);
    let off = char_offset(text, offset);
    Error::syntax(format!("{message} (line {line}, column {column} (offset: {off}))"))
}
