//! The CSV record reader of `LOAD CSV`: RFC 4180 records streamed from a `BufRead`, with
//! Neo4j's conventions (taken from Neo4j 5.26): quoted fields may hold the terminator,
//! newlines and doubled quotes; an empty unquoted field is null and a quoted one (`""`) the
//! empty string; whitespace is kept; blank lines are skipped and not counted; a UTF-8 byte
//! order mark at the start is dropped; `\r\n` ends a record like `\n`.
//!
//! It holds one record at a time (bounded by [`MAX_RECORD_BYTES`]), never the file. Opening
//! URLs is the engine's job (`Graph::open_csv`), not this module's.

use std::io::BufRead;
use std::sync::Arc;

use arbor_model::{Error, Result, Status};

/// A record larger than this is refused (an unterminated quote would otherwise read the whole
/// file into one field).
pub(crate) const MAX_RECORD_BYTES: usize = 64 << 20;

/// One field: `None` for an empty unquoted field (null in Cypher).
pub(crate) type Field = Option<Arc<str>>;

/// Reads records one at a time.
pub(crate) struct CsvReader {
    src: Box<dyn BufRead + Send>,
    terminator: u8,
    line: Vec<u8>,
    /// The text of a quoted field (reused from field to field).
    quoted: Vec<u8>,
    /// Fields in the last record: the next one's capacity.
    width: usize,
    /// Records read so far: the line number `linenumber()` reports for the last one.
    pub(crate) records: i64,
    at_start: bool,
    /// Names the source in errors.
    name: String,
}

impl CsvReader {
    pub(crate) fn new(src: Box<dyn BufRead + Send>, terminator: u8, name: String) -> CsvReader {
        CsvReader {
            src,
            terminator,
            line: Vec::new(),
            quoted: Vec::new(),
            width: 4,
            records: 0,
            at_start: true,
            name,
        }
    }

    /// The next record, or `None` at the end of the file.
    pub(crate) fn next_record(&mut self) -> Result<Option<Vec<Field>>> {
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            if self.at_start {
                self.at_start = false;
                if self.line.starts_with(b"\xEF\xBB\xBF") {
                    self.line.drain(..3);
                }
            }
            if matches!(self.line.as_slice(), b"\n" | b"\r\n" | b"\r" | b"") {
                continue;
            }
            let record = self.parse()?;
            self.records += 1;
            self.width = record.len();
            return Ok(Some(record));
        }
    }

    /// Reads the next physical line into `self.line` (replacing it); `false` at the end.
    fn read_line(&mut self) -> Result<bool> {
        self.line.clear();
        let n = self.src.read_until(b'\n', &mut self.line).map_err(|e| self.io_error(&e))?;
        Ok(n > 0)
    }

    /// Splits the record that starts in `self.line`, reading more lines while a quoted field
    /// is open. An unquoted field is taken from the line as it stands; a quote opens a quoted
    /// field only as a field's first byte, and what follows its closing quote up to the
    /// terminator is kept as written.
    fn parse(&mut self) -> Result<Vec<Field>> {
        let mut fields = Vec::with_capacity(self.width);
        let mut pos = 0;
        loop {
            let field = if self.line.get(pos) == Some(&b'"') && self.terminator != b'"' {
                self.quoted.clear();
                pos = self.read_quoted(pos + 1)?;
                let end = self.field_end(pos);
                self.quoted.extend_from_slice(&self.line[pos..end]);
                pos = end;
                Some(text(&self.quoted))
            } else {
                let end = self.field_end(pos);
                let f = (end > pos).then(|| text(&self.line[pos..end]));
                pos = end;
                f
            };
            fields.push(field);
            if self.line.get(pos) != Some(&self.terminator) {
                return Ok(fields);
            }
            pos += 1;
        }
    }

    /// Where the field starting at `pos` ends: at the terminator or the end of the line.
    fn field_end(&self, pos: usize) -> usize {
        let line = &self.line;
        let mut i = pos;
        while let Some(&c) = line.get(i) {
            if c == self.terminator
                || c == b'\n'
                || (c == b'\r' && matches!(line.get(i + 1), None | Some(b'\n')))
            {
                break;
            }
            i += 1;
        }
        i
    }

    /// Reads a quoted field's text (from `pos`, just past its opening quote) into
    /// `self.quoted`, across lines; returns the position just past its closing quote.
    fn read_quoted(&mut self, mut pos: usize) -> Result<usize> {
        loop {
            match self.line[pos..].iter().position(|&c| c == b'"') {
                Some(i) => {
                    self.quoted.extend_from_slice(&self.line[pos..pos + i]);
                    pos += i + 1;
                    if self.line.get(pos) != Some(&b'"') {
                        return Ok(pos);
                    }
                    self.quoted.push(b'"');
                    pos += 1;
                }
                None => {
                    self.quoted.extend_from_slice(&self.line[pos..]);
                    if self.quoted.len() > MAX_RECORD_BYTES {
                        return Err(self.error(format!(
                            "a field of record {} is larger than {MAX_RECORD_BYTES} bytes (a \
                             quote that is never closed?)",
                            self.records + 1
                        )));
                    }
                    if !self.read_line()? {
                        return Err(self.error(format!(
                            "the file ends inside a quoted field of record {}",
                            self.records + 1
                        )));
                    }
                    pos = 0;
                }
            }
        }
    }

    fn error(&self, what: String) -> Error {
        Error::new(Status::ExternalResourceFailed, format!("{}: {what}", self.name))
    }

    fn io_error(&self, e: &std::io::Error) -> Error {
        self.error(format!("read failed: {e}"))
    }
}

/// A field's bytes as text (invalid UTF-8 replaced).
fn text(bytes: &[u8]) -> Arc<str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Arc::from(s),
        Err(_) => Arc::from(String::from_utf8_lossy(bytes).as_ref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, terminator: u8) -> Result<Vec<(i64, Vec<Field>)>> {
        let src = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        let mut r = CsvReader::new(src, terminator, "test.csv".into());
        let mut out = Vec::new();
        while let Some(rec) = r.next_record()? {
            out.push((r.records, rec));
        }
        Ok(out)
    }

    fn s(x: &str) -> Field {
        Some(Arc::from(x))
    }

    /// The answers Neo4j 5.26 gave for the same bytes.
    #[test]
    fn records_follow_neo4j() {
        let got = read(
            "name,age,city\nAnn,30,\"Paris, FR\"\nBob,,\"He said \"\"hi\"\"\"\n\"multi\nline\",5,\n",
            b',',
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                (1, vec![s("name"), s("age"), s("city")]),
                (2, vec![s("Ann"), s("30"), s("Paris, FR")]),
                (3, vec![s("Bob"), None, s("He said \"hi\"")]),
                (4, vec![s("multi\nline"), s("5"), None]),
            ]
        );
        // Blank lines are skipped and not counted; `""` is the empty string; spaces stay.
        let got = read("x,y\n\n\"\",  x \n", b',').unwrap();
        assert_eq!(got, vec![(1, vec![s("x"), s("y")]), (2, vec![s(""), s("  x ")])]);
        // A byte order mark and CRLF line ends; another terminator.
        let got = read("\u{feff}id;v\r\n1;a\r\n", b';').unwrap();
        assert_eq!(got, vec![(1, vec![s("id"), s("v")]), (2, vec![s("1"), s("a")])]);
        // A quote opens a field only as its first byte; text after the closing quote stays;
        // a lone carriage return inside a field stays; the last line may lack its newline.
        let got = read("\"ab\"cd,a\"b,x\ry,\"\"\"q\"\"\"\n,\"z\"", b',').unwrap();
        assert_eq!(
            got,
            vec![(1, vec![s("abcd"), s("a\"b"), s("x\ry"), s("\"q\"")]), (2, vec![None, s("z")]),]
        );
    }

    #[test]
    fn an_unterminated_quote_is_an_error_naming_the_file() {
        let e = read("a\n\"open,1\n2\n", b',').unwrap_err();
        assert_eq!(e.status, Status::ExternalResourceFailed);
        assert!(e.message.starts_with("test.csv: the file ends inside a quoted field of record 2"));
    }
}
