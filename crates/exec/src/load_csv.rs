//! The CSV record reader of `LOAD CSV`: RFC 4180 records streamed from a `BufRead`, with
//! Neo4j's conventions (taken from Neo4j 5.26): quoted fields may hold the terminator,
//! newlines and doubled quotes; an empty unquoted field is null and a quoted one (`""`) the
//! empty string; whitespace is kept; blank lines are skipped and not counted; a UTF-8 byte
//! order mark at the start is dropped; `\r\n` ends a record like `\n`.
//!
//! It holds one record at a time (bounded by [`MAX_RECORD_BYTES`]), never the file. Opening
//! URLs is the engine's job (`Graph::open_csv`), not this module's.

use std::io::BufRead;

use arbor_model::{Error, Result, Status};

/// A record larger than this is refused (an unterminated quote would otherwise read the whole
/// file into one field).
pub(crate) const MAX_RECORD_BYTES: usize = 64 << 20;

/// One field: `None` for an empty unquoted field (null in Cypher).
pub(crate) type Field = Option<String>;

/// Reads records one at a time.
pub(crate) struct CsvReader {
    src: Box<dyn BufRead + Send>,
    terminator: u8,
    line: Vec<u8>,
    /// Records read so far: the line number `linenumber()` reports for the last one.
    pub(crate) records: i64,
    at_start: bool,
    /// Names the source in errors.
    name: String,
}

impl CsvReader {
    pub(crate) fn new(src: Box<dyn BufRead + Send>, terminator: u8, name: String) -> CsvReader {
        CsvReader { src, terminator, line: Vec::new(), records: 0, at_start: true, name }
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
    /// is open.
    fn parse(&mut self) -> Result<Vec<Field>> {
        let mut fields = Vec::new();
        let mut cur = Vec::new();
        let (mut quoted, mut in_quotes) = (false, false);
        let mut pos = 0;
        loop {
            while let Some(&c) = self.line.get(pos) {
                pos += 1;
                if in_quotes {
                    if c != b'"' {
                        cur.push(c);
                    } else if self.line.get(pos) == Some(&b'"') {
                        cur.push(b'"');
                        pos += 1;
                    } else {
                        in_quotes = false;
                    }
                } else if c == self.terminator {
                    fields.push(field(&mut cur, quoted));
                    quoted = false;
                } else if c == b'"' && cur.is_empty() && !quoted {
                    (quoted, in_quotes) = (true, true);
                } else if c == b'\n'
                    || (c == b'\r' && matches!(self.line.get(pos), None | Some(b'\n')))
                {
                    break;
                } else {
                    cur.push(c);
                }
            }
            if !in_quotes {
                break;
            }
            if cur.len() > MAX_RECORD_BYTES {
                return Err(self.error(format!(
                    "a field of record {} is larger than {MAX_RECORD_BYTES} bytes (a quote \
                     that is never closed?)",
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
        fields.push(field(&mut cur, quoted));
        Ok(fields)
    }

    fn error(&self, what: String) -> Error {
        Error::new(Status::ExternalResourceFailed, format!("{}: {what}", self.name))
    }

    fn io_error(&self, e: &std::io::Error) -> Error {
        self.error(format!("read failed: {e}"))
    }
}

/// Takes the field's bytes (`cur` is left empty for the next one).
fn field(cur: &mut Vec<u8>, quoted: bool) -> Field {
    if cur.is_empty() && !quoted {
        return None;
    }
    let bytes = std::mem::take(cur);
    Some(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
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
        Some(x.to_string())
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
    }

    #[test]
    fn an_unterminated_quote_is_an_error_naming_the_file() {
        let e = read("a\n\"open,1\n2\n", b',').unwrap_err();
        assert_eq!(e.status, Status::ExternalResourceFailed);
        assert!(e.message.starts_with("test.csv: the file ends inside a quoted field of record 2"));
    }
}
