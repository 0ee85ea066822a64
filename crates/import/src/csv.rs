//! A small, fast CSV record splitter (RFC 4180 quoting with a configurable delimiter and quote
//! character, as neo4j-admin reads it), working on byte chunks that hold whole records.
//!
//! Lines without a quote character take a fast path: `memchr` finds the delimiters and the
//! fields are slices of the input. Lines with quotes are unescaped (`""` -> `"`) into a side
//! buffer. A quoted field may span lines only with `--multiline-fields`; otherwise an open quote
//! at the end of a line is a bad row. `\r\n` line ends are accepted.
//!
//! Chunk boundaries: [`last_boundary`] finds the end of the last complete record in a block, so
//! a reader thread can cut the input into independent chunks (quote-aware when fields may span
//! lines).

use memchr::{memchr, memchr2, memchr_iter};

/// Where a field's bytes are: in the input chunk or in the unescape buffer.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    in_buf: bool,
    start: u32,
    end: u32,
    /// The field was quoted (a quoted empty field is an empty string, not a missing value).
    pub quoted: bool,
}

/// One record's fields, valid until the next call of [`Splitter::next`].
#[derive(Default)]
pub struct Record {
    pub fields: Vec<Field>,
    buf: Vec<u8>,
}

impl Record {
    pub fn bytes<'a>(&'a self, data: &'a [u8], f: &Field) -> &'a [u8] {
        let src = if f.in_buf { &self.buf[..] } else { data };
        &src[f.start as usize..f.end as usize]
    }
}

/// Splitting options.
#[derive(Clone, Copy, Debug)]
pub struct Splitter {
    pub delimiter: u8,
    pub quote: u8,
    pub multiline: bool,
}

impl Splitter {
    /// Splits the record starting at `*pos` in `data` into `rec`, advancing `*pos` past its line
    /// end. Returns the number of line breaks consumed (1 for a normal line, more for multi-line
    /// fields, 0 for a last line without a line break), `None` at the end of `data`, or an error
    /// for a malformed record (then `*pos` is past the offending line).
    pub fn next(
        &self,
        data: &[u8],
        pos: &mut usize,
        rec: &mut Record,
    ) -> Option<Result<u32, String>> {
        if *pos >= data.len() {
            return None;
        }
        rec.fields.clear();
        rec.buf.clear();
        let start = *pos;
        let line_end = memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
        let line = &data[start..line_end];
        if memchr(self.quote, line).is_none() {
            let mut content_end = line_end;
            if content_end > start && data[content_end - 1] == b'\r' {
                content_end -= 1;
            }
            let mut fs = start;
            for i in memchr_iter(self.delimiter, &data[start..content_end]) {
                let at = start + i;
                rec.fields.push(Field {
                    in_buf: false,
                    start: fs as u32,
                    end: at as u32,
                    quoted: false,
                });
                fs = at + 1;
            }
            rec.fields.push(Field {
                in_buf: false,
                start: fs as u32,
                end: content_end as u32,
                quoted: false,
            });
            if line_end < data.len() {
                *pos = line_end + 1;
                return Some(Ok(1));
            }
            *pos = data.len();
            return Some(Ok(0));
        }
        Some(self.slow(data, pos, rec))
    }

    /// The quote-aware path: unescapes every field into the record buffer.
    fn slow(&self, data: &[u8], pos: &mut usize, rec: &mut Record) -> Result<u32, String> {
        let (d, q) = (self.delimiter, self.quote);
        let mut i = *pos;
        let mut lines = 0u32;
        let mut field_start = 0u32;
        let mut quoted = false;
        let mut at_field_start = true;
        loop {
            if i >= data.len() {
                rec.fields.push(Field {
                    in_buf: true,
                    start: field_start,
                    end: rec.buf.len() as u32,
                    quoted,
                });
                *pos = data.len();
                return Ok(lines);
            }
            let c = data[i];
            if at_field_start && c == q {
                quoted = true;
                at_field_start = false;
                i += 1;
                // Inside quotes until a lone quote.
                loop {
                    let Some(off) = memchr2(q, b'\n', &data[i..]) else {
                        *pos = data.len();
                        return Err("unterminated quoted field".to_string());
                    };
                    rec.buf.extend_from_slice(&data[i..i + off]);
                    i += off;
                    if data[i] == b'\n' {
                        if !self.multiline {
                            *pos = i + 1;
                            return Err("quoted field spans lines (use --multiline-fields=true)"
                                .to_string());
                        }
                        rec.buf.push(b'\n');
                        lines += 1;
                        i += 1;
                        continue;
                    }
                    // A quote: doubled = literal quote, else the end of the quoted part.
                    if data.get(i + 1) == Some(&q) {
                        rec.buf.push(q);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                continue;
            }
            at_field_start = false;
            if c == d {
                rec.fields.push(Field {
                    in_buf: true,
                    start: field_start,
                    end: rec.buf.len() as u32,
                    quoted,
                });
                field_start = rec.buf.len() as u32;
                quoted = false;
                at_field_start = true;
                i += 1;
            } else if c == b'\n' {
                rec.fields.push(Field {
                    in_buf: true,
                    start: field_start,
                    end: rec.buf.len() as u32,
                    quoted,
                });
                *pos = i + 1;
                return Ok(lines + 1);
            } else if c == b'\r' && data.get(i + 1) == Some(&b'\n') {
                i += 1;
            } else {
                rec.buf.push(c);
                i += 1;
            }
        }
    }
}

/// The length of the prefix of `data` made of complete records (ending with a line break), or
/// `None` if it holds none. With `multiline`, line breaks inside quotes do not end records.
pub fn last_boundary(data: &[u8], quote: u8, multiline: bool) -> Option<usize> {
    if !multiline {
        return memchr::memrchr(b'\n', data).map(|i| i + 1);
    }
    let mut in_quotes = false;
    let mut last = None;
    let mut i = 0;
    while let Some(off) = memchr2(quote, b'\n', &data[i..]) {
        let at = i + off;
        if data[at] == quote {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            last = Some(at + 1);
        }
        i = at + 1;
    }
    last
}

/// The length of the first complete record of `data` (including its line break), if any.
pub fn first_boundary(data: &[u8], quote: u8, multiline: bool) -> Option<usize> {
    if !multiline {
        return memchr(b'\n', data).map(|i| i + 1);
    }
    let mut in_quotes = false;
    let mut i = 0;
    while let Some(off) = memchr2(quote, b'\n', &data[i..]) {
        let at = i + off;
        if data[at] == quote {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            return Some(at + 1);
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str, multiline: bool) -> Vec<Result<Vec<(String, bool)>, String>> {
        let sp = Splitter { delimiter: b',', quote: b'"', multiline };
        let data = s.as_bytes();
        let mut pos = 0;
        let mut rec = Record::default();
        let mut out = Vec::new();
        while let Some(r) = sp.next(data, &mut pos, &mut rec) {
            out.push(r.map(|_| {
                rec.fields
                    .iter()
                    .map(|f| (String::from_utf8(rec.bytes(data, f).to_vec()).unwrap(), f.quoted))
                    .collect()
            }));
        }
        out
    }

    fn plain(s: &str) -> Vec<Vec<String>> {
        split(s, false)
            .into_iter()
            .map(|r| r.unwrap().into_iter().map(|(s, _)| s).collect())
            .collect()
    }

    #[test]
    fn plain_lines() {
        assert_eq!(
            plain("a,b,c\n1,,3\r\nx"),
            vec![vec!["a", "b", "c"], vec!["1", "", "3"], vec!["x"]]
        );
    }

    #[test]
    fn quotes_and_escapes() {
        let r = split("\"a,b\",\"say \"\"hi\"\"\",\"\",plain\n", false);
        let f = r[0].as_ref().unwrap();
        assert_eq!(f[0], ("a,b".to_string(), true));
        assert_eq!(f[1], ("say \"hi\"".to_string(), true));
        assert_eq!(f[2], (String::new(), true));
        assert_eq!(f[3], ("plain".to_string(), false));
    }

    #[test]
    fn multiline_only_when_allowed() {
        let s = "1,\"two\nlines\",3\n4,5,6\n";
        let r = split(s, false);
        assert!(r[0].as_ref().unwrap_err().contains("multiline"));
        let r = split(s, true);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].as_ref().unwrap()[1].0, "two\nlines");
        assert_eq!(r[1].as_ref().unwrap()[2].0, "6");
        assert!(split("1,\"open", true)[0].is_err());
    }

    #[test]
    fn boundaries() {
        assert_eq!(last_boundary(b"a\nb\nc", b'"', false), Some(4));
        assert_eq!(last_boundary(b"abc", b'"', false), None);
        assert_eq!(last_boundary(b"a\n\"b\nc", b'"', true), Some(2));
        assert_eq!(last_boundary(b"a\n\"b\nc\"\n", b'"', true), Some(8));
        assert_eq!(first_boundary(b"\"a\nb\"\nc\n", b'"', true), Some(6));
        assert_eq!(first_boundary(b"\"a\nb\"\nc\n", b'"', false), Some(3));
    }

    #[test]
    fn other_delimiters() {
        let sp = Splitter { delimiter: b'\t', quote: b'\'', multiline: false };
        let data = b"a\t'b\tc'\n";
        let mut pos = 0;
        let mut rec = Record::default();
        sp.next(data, &mut pos, &mut rec).unwrap().unwrap();
        assert_eq!(rec.bytes(data, &rec.fields[1]), b"b\tc");
    }
}
