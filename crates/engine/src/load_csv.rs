//! Where `LOAD CSV` reads from: `file:///` URLs resolved inside the import directory (Neo4j's
//! `server.directories.import`; `Database::import_dir`), gzip detected by its magic bytes,
//! and Neo4j's `ExternalResourceFailed` errors and messages for everything else.
//!
//! A URL path is taken relative to the import directory; one that leaves it (`..` past its
//! root, or a symbolic link pointing out) is refused. `http(s)://` is refused with a message
//! saying so: Arbor does not fetch from the network. The file is streamed, never read whole.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use arbor_exec::graph::CsvSource;
use arbor_model::{Error, Result, Status};

/// Opens `url` for `LOAD CSV`.
pub(crate) fn open(import_dir: Option<&Path>, url: &str) -> Result<CsvSource> {
    let Some((scheme, rest)) = url.split_once(':').filter(|(s, _)| is_scheme(s)) else {
        return Err(failed(format!("Invalid URL '{url}': no protocol: {url} ()")));
    };
    let cannot = |why: &str| failed(format!("Cannot load from URL '{url}': {why} ()"));
    let missing = || cannot(&format!("Couldn't load the external resource at: {url}"));
    match scheme.to_ascii_lowercase().as_str() {
        "file" => {}
        "http" | "https" => {
            return Err(cannot(
                "Arbor does not load CSV over http(s); copy the file into the import directory \
                 and use a file:/// URL",
            ))
        }
        _ => return Err(missing()),
    }
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Err(missing());
            }
            path
        }
        None => rest,
    };
    let Some(dir) = import_dir else {
        return Err(cannot("no import directory is configured"));
    };
    let outside = || cannot("file URL points outside configured import directory");
    let full = inside(dir, &percent_decode(path)).ok_or_else(outside)?;
    // A symbolic link inside the directory may point out of it.
    if let (Ok(real), Ok(root)) = (full.canonicalize(), dir.canonicalize()) {
        if !real.starts_with(&root) {
            return Err(outside());
        }
    }
    let file = File::open(&full).map_err(|_| missing())?;
    if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
        return Err(missing());
    }
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let gzip = reader.fill_buf().map(|b| b.starts_with(&[0x1f, 0x8b])).map_err(|_| missing())?;
    let reader: Box<dyn BufRead + Send> = if gzip {
        let inflated: Box<dyn Read + Send> = Box::new(flate2::bufread::MultiGzDecoder::new(reader));
        Box::new(BufReader::with_capacity(1 << 16, inflated))
    } else {
        Box::new(reader)
    };
    // Neo4j's `file()`: the URL without its scheme.
    Ok(CsvSource { reader, file: rest.to_string() })
}

fn failed(message: String) -> Error {
    Error::new(Status::ExternalResourceFailed, message)
}

/// A URL scheme: a letter, then letters, digits, `+`, `-`, `.` (RFC 3986).
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `path` (a URL path, `/`-separated) under `dir`, or `None` if `..` leaves it.
fn inside(dir: &Path, path: &str) -> Option<PathBuf> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    let mut full = dir.to_path_buf();
    full.extend(parts);
    Some(full)
}

/// Decodes `%XX` escapes (invalid ones stay as written).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_import_directory() {
        let d = Path::new("/imp");
        assert_eq!(inside(d, "/a/b.csv"), Some(PathBuf::from("/imp/a/b.csv")));
        assert_eq!(inside(d, "/a/../b.csv"), Some(PathBuf::from("/imp/b.csv")));
        assert_eq!(inside(d, "/../etc/passwd"), None);
        assert_eq!(percent_decode("/my%20file.csv"), "/my file.csv");
        assert_eq!(percent_decode("/100%"), "/100%");
    }

    #[test]
    fn urls_fail_with_neo4j_codes_and_messages() {
        let dir = tempfile::tempdir().unwrap();
        let msg = |url: &str| match open(Some(dir.path()), url) {
            Ok(_) => panic!("{url} opened"),
            Err(e) => {
                assert_eq!(e.status.code(), "Neo.ClientError.Statement.ExternalResourceFailed");
                e.message
            }
        };
        assert_eq!(msg("nope.csv"), "Invalid URL 'nope.csv': no protocol: nope.csv ()");
        assert_eq!(
            msg("file:///nope.csv"),
            "Cannot load from URL 'file:///nope.csv': Couldn't load the external resource at: \
             file:///nope.csv ()"
        );
        assert_eq!(
            msg("ftp://x/y.csv"),
            "Cannot load from URL 'ftp://x/y.csv': Couldn't load the external resource at: \
             ftp://x/y.csv ()"
        );
        assert!(msg("file:///../etc/passwd").contains("outside configured import directory"));
        assert!(msg("https://example.com/a.csv").contains("does not load CSV over http(s)"));
        std::fs::write(dir.path().join("a b.csv"), "x\n").unwrap();
        let src = open(Some(dir.path()), "file:///a%20b.csv").unwrap();
        assert_eq!(src.file, "///a%20b.csv");
    }
}
