//! Input files: expanding file lists (comma-separated, with regular-expression or glob patterns
//! in the file name as neo4j-admin allows), opening plain, gzip (`.gz`, detected by magic bytes)
//! and zip (every entry in order) inputs, transcoding ISO-8859-1 input to UTF-8, and cutting
//! the byte stream into chunks of whole records for the parser threads.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use regex::Regex;

use crate::csv::last_boundary;

/// Size of the blocks handed to parser threads (grown for longer records).
pub const CHUNK: usize = 1 << 20;
/// The longest record accepted.
pub const MAX_RECORD: usize = 1 << 30;

/// The character set of the input files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Latin1,
}

impl Encoding {
    pub fn parse(s: &str) -> Option<Encoding> {
        match s.to_ascii_uppercase().replace('_', "-").as_str() {
            "UTF-8" | "UTF8" | "US-ASCII" | "ASCII" => Some(Encoding::Utf8),
            "ISO-8859-1" | "LATIN1" | "LATIN-1" | "ISO8859-1" => Some(Encoding::Latin1),
            _ => None,
        }
    }
}

/// Expands one `--nodes`/`--relationships` file list: comma-separated names; a name that is not
/// an existing file is matched, as a regular expression and as a glob, against the file names
/// of its directory (matches sorted by name, numbers compared by value).
pub fn expand(spec: &str) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let path = PathBuf::from(part);
        if is_input(&path) {
            out.push(path);
            continue;
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Some(pattern) = path.file_name().and_then(|n| n.to_str()) else {
            return Err(format!("input file {part} does not exist"));
        };
        let regex = Regex::new(&format!("^(?:{pattern})$")).ok();
        let glob = Regex::new(&glob_to_regex(pattern)).ok();
        let mut matched: Vec<PathBuf> = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                let hit = regex.as_ref().is_some_and(|r| r.is_match(name))
                    || glob.as_ref().is_some_and(|g| g.is_match(name));
                if hit && is_input(&entry.path()) {
                    matched.push(entry.path());
                }
            }
        }
        if matched.is_empty() {
            return Err(format!("input file {part} does not exist (and matches no file)"));
        }
        matched.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        out.extend(matched);
    }
    if out.is_empty() {
        return Err(format!("no input files in `{spec}`"));
    }
    Ok(out)
}

fn glob_to_regex(g: &str) -> String {
    let mut r = String::from("^");
    for c in g.chars() {
        match c {
            '*' => r.push_str(".*"),
            '?' => r.push('.'),
            c => r.push_str(&regex::escape(&c.to_string())),
        }
    }
    r.push('$');
    r
}

/// Orders names so that `part2` sorts before `part10`.
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let nx = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let ny = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (dx, dy) = (&x[..nx], &y[..ny]);
                let tx = dx.iter().skip_while(|c| **c == b'0').count();
                let ty = dy.iter().skip_while(|c| **c == b'0').count();
                let o = tx.cmp(&ty).then_with(|| dx[nx - tx..].cmp(&dy[ny - ty..]));
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
                x = &x[nx..];
                y = &y[ny..];
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

/// Counts the bytes read from the underlying (compressed) file, for progress and MB/s.
struct Counting<R> {
    inner: R,
    counter: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// Whether `path` is something the importer reads as an input file: a regular file, or a named
/// pipe (FIFO) that a generator writes into (`arbor bench gen-b2b --fifo`), read once, front to
/// back, when its group's turn comes.
pub fn is_input(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() || m.file_type().is_fifo())
}

/// Whether `path` is a named pipe: it can be opened and read only once, so its group's header
/// is taken from the stream the pipeline then goes on reading ([`Held`]).
pub fn is_pipe(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// A pipe's stream, opened once, with its first record (the group's header) already split off.
pub struct Held {
    pub reader: Box<dyn Read + Send>,
    pub head: Vec<u8>,
    pub rest: Vec<u8>,
}

/// Reads up to 4 bytes (fewer only at the end of the stream), for the format's magic bytes.
fn read_magic(file: &mut File, magic: &mut [u8; 4]) -> io::Result<usize> {
    let mut n = 0;
    while n < magic.len() {
        match file.read(&mut magic[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Opens a plain or gzip input without seeking (a pipe cannot seek): the magic bytes read to
/// tell the format are put back in front of the rest. A zip archive needs seeking: an error.
pub fn open_stream(path: &Path, counter: &Arc<AtomicU64>) -> Result<Box<dyn Read + Send>, String> {
    let ctx = |e: &dyn std::fmt::Display| format!("cannot read {}: {e}", path.display());
    let mut file = File::open(path).map_err(|e| ctx(&e))?;
    let mut magic = [0u8; 4];
    let n = read_magic(&mut file, &mut magic).map_err(|e| ctx(&e))?;
    counter.fetch_add(n as u64, Ordering::Relaxed);
    let counted = Counting { inner: file, counter: counter.clone() };
    let whole = Cursor::new(magic[..n].to_vec()).chain(counted);
    if n >= 2 && magic[..2] == [0x1f, 0x8b] {
        let buffered = BufReader::with_capacity(1 << 20, whole);
        Ok(Box::new(flate2::read::MultiGzDecoder::new(buffered)))
    } else if n == 4 && magic == *b"PK\x03\x04" {
        Err(ctx(&"a zip archive cannot be read from a pipe (give plain or gzip CSV)"))
    } else {
        Ok(Box::new(whole))
    }
}

/// Calls `f` with each decompressed stream of `path`: one for plain and gzip files (and pipes),
/// one per file entry for zip archives. `counter` receives the bytes read from disk.
pub fn for_each_stream(
    path: &Path,
    counter: &Arc<AtomicU64>,
    f: &mut dyn FnMut(&mut dyn Read) -> Result<bool, String>,
) -> Result<(), String> {
    let ctx = |e: &dyn std::fmt::Display| format!("cannot read {}: {e}", path.display());
    if is_pipe(path) {
        let mut r = open_stream(path, counter)?;
        f(&mut r).map_err(|e| ctx(&e))?;
        return Ok(());
    }
    let mut file = File::open(path).map_err(|e| ctx(&e))?;
    let mut magic = [0u8; 4];
    let n = read_magic(&mut file, &mut magic).map_err(|e| ctx(&e))?;
    file.seek(SeekFrom::Start(0)).map_err(|e| ctx(&e))?;
    let counted = Counting { inner: file, counter: counter.clone() };
    if n >= 2 && magic[..2] == [0x1f, 0x8b] {
        let mut gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 20, counted));
        f(&mut gz).map_err(|e| ctx(&e))?;
    } else if n == 4 && magic == *b"PK\x03\x04" {
        let mut archive = zip::ZipArchive::new(BufReader::new(counted)).map_err(|e| ctx(&e))?;
        for i in 0..archive.len() {
            let mut entry = archive.by_index(i).map_err(|e| ctx(&e))?;
            if entry.is_dir() {
                continue;
            }
            if !f(&mut entry).map_err(|e| ctx(&e))? {
                break;
            }
        }
    } else {
        let mut plain = counted;
        f(&mut plain).map_err(|e| ctx(&e))?;
    }
    Ok(())
}

/// Converts ISO-8859-1 bytes to UTF-8 in place (every byte is its code point).
pub fn latin1_to_utf8(data: &mut Vec<u8>) {
    if data.iter().all(|b| *b < 0x80) {
        return;
    }
    let mut out = Vec::with_capacity(data.len() + data.len() / 8);
    for &b in data.iter() {
        if b < 0x80 {
            out.push(b);
        } else {
            out.push(0xc0 | (b >> 6));
            out.push(0x80 | (b & 0x3f));
        }
    }
    *data = out;
}

/// Reads until `data` has `want` bytes or the stream ends; returns whether it ended.
pub fn fill(r: &mut dyn Read, data: &mut Vec<u8>, want: usize) -> io::Result<bool> {
    while data.len() < want {
        let at = data.len();
        data.resize(want, 0);
        match r.read(&mut data[at..]) {
            Ok(0) => {
                data.truncate(at);
                return Ok(true);
            }
            Ok(n) => data.truncate(at + n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => data.truncate(at),
            Err(e) => {
                data.truncate(at);
                return Err(e);
            }
        }
    }
    Ok(false)
}

/// Cuts a stream into blocks of whole records and hands each to `emit` (with the number of
/// bytes consumed so far, for line numbering by the caller). Returns at the stream's end or
/// when `emit` returns `false`.
pub fn chunks(
    r: &mut dyn Read,
    quote: u8,
    multiline: bool,
    mut carry: Vec<u8>,
    emit: &mut dyn FnMut(Vec<u8>) -> Result<bool, String>,
) -> Result<(), String> {
    let mut target = CHUNK;
    loop {
        let mut data = std::mem::take(&mut carry);
        if data.capacity() < target {
            data.reserve(target - data.len());
        }
        let eof = fill(r, &mut data, target).map_err(|e| format!("read error: {e}"))?;
        if eof {
            if !data.is_empty() && !emit(data)? {
                return Ok(());
            }
            return Ok(());
        }
        match last_boundary(&data, quote, multiline) {
            Some(b) => {
                carry = data.split_off(b);
                target = CHUNK.max(carry.len() * 2);
                if !emit(data)? {
                    return Ok(());
                }
            }
            None => {
                // One record longer than the block: read more, up to a limit (field offsets
                // are 32-bit, and a runaway record is almost always an unterminated quote).
                if data.len() >= MAX_RECORD {
                    return Err(format!(
                        "a record longer than {} MiB (an unterminated quote?)",
                        MAX_RECORD >> 20
                    ));
                }
                target = (data.len() * 2).min(MAX_RECORD);
                carry = data;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn expands_lists_regexes_and_globs() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["part1.csv", "part2.csv", "part10.csv", "header.csv", "other.txt"] {
            std::fs::write(dir.path().join(n), "x\n").unwrap();
        }
        let d = dir.path().display();
        let got = expand(&format!("{d}/header.csv,{d}/part.*\\.csv")).unwrap();
        let names: Vec<String> =
            got.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["header.csv", "part1.csv", "part2.csv", "part10.csv"]);
        assert_eq!(expand(&format!("{d}/part*.csv")).unwrap().len(), 3);
        assert!(expand(&format!("{d}/missing.csv")).unwrap_err().contains("does not exist"));
    }

    #[test]
    fn reads_gzip_and_zip() {
        let dir = tempfile::tempdir().unwrap();
        let gz = dir.path().join("a.csv.gz");
        let mut enc =
            flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        enc.write_all(b"a,b\n1,2\n").unwrap();
        enc.finish().unwrap();
        let zp = dir.path().join("a.zip");
        let mut z = zip::ZipWriter::new(File::create(&zp).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        z.start_file("one.csv", opts).unwrap();
        z.write_all(b"a,b\n").unwrap();
        z.start_file("two.csv", opts).unwrap();
        z.write_all(b"3,4\n").unwrap();
        z.finish().unwrap();
        for (p, want) in [(gz, "a,b\n1,2\n"), (zp, "a,b\n3,4\n")] {
            let counter = Arc::new(AtomicU64::new(0));
            let mut all = Vec::new();
            for_each_stream(&p, &counter, &mut |r| {
                r.read_to_end(&mut all).map_err(|e| e.to_string())?;
                Ok(true)
            })
            .unwrap();
            assert_eq!(String::from_utf8(all).unwrap(), want);
            assert!(counter.load(Ordering::Relaxed) > 0);
        }
    }

    #[test]
    fn chunks_hold_whole_records() {
        let text: String = (0..100_000).map(|i| format!("{i},\"v{i}\"\n")).collect();
        let mut r = text.as_bytes();
        let mut got = Vec::new();
        chunks(&mut r, b'"', true, Vec::new(), &mut |c| {
            assert!(c.ends_with(b"\n"));
            got.extend_from_slice(&c);
            Ok(true)
        })
        .unwrap();
        assert_eq!(got, text.as_bytes());
    }

    #[test]
    fn latin1() {
        let mut v = vec![b'a', 0xe9];
        latin1_to_utf8(&mut v);
        assert_eq!(String::from_utf8(v).unwrap(), "aé");
        assert_eq!(Encoding::parse("utf-8"), Some(Encoding::Utf8));
        assert_eq!(Encoding::parse("ISO-8859-1"), Some(Encoding::Latin1));
        assert_eq!(Encoding::parse("EBCDIC"), None);
    }
}
