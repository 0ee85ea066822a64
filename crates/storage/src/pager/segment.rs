//! Segment files: immutable, page-aligned integer columns written by a checkpoint and read
//! through the [`BufferPool`], each data page checksummed.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! header region (header_pages × 4 KiB, read whole at open):
//!   "ARBORSG1"  u32 format version (1)  u32 header_pages  u64 checkpoint ts
//!   u64 data_pages  u32 column count
//!   per column: u8 id, u8 repr (0 const, 1 sequence, 2 u8, 3 u16, 4 u32, 5 u64),
//!               u64 length, u64 value (the constant or the first of the sequence),
//!               u64 first data page, u64 data pages
//!   data_pages × u32 CRC32C (one per data page)
//!   u32 CRC32C of the header region up to here, then zeros to the page boundary
//! data pages: each column's values packed from the start of its first page, so value `i` of
//!   a `w`-byte column is at page `first + i / (4096 / w)`, slot `i % (4096 / w)`.
//! ```
//!
//! Constant and sequence columns take no pages. The header is verified as a whole when the
//! file is opened; a data page when the pool reads it (or by [`Segment::verify_pages`]).

use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arbor_model::{Error, Result, Status};

use super::pool::{BufferPool, PageFile, PagedFile, PAGE_SIZE};

pub(crate) const SEG_MAGIC: &[u8; 8] = b"ARBORSG1";
/// The segment format this build writes and reads.
pub(crate) const SEG_VERSION: u32 = 1;
const FIXED_HEADER: usize = 36;
const COLUMN_ENTRY: usize = 34;

/// A column to write: the representations of the base's packed integer columns.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ColumnData<'a> {
    Const(u64, usize),
    Seq(u64, usize),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    /// `len` values of `width` bytes (1, 2, 4 or 8) that are not in memory: the writer asks
    /// for them, in order, when it reaches the column ([`write_segment_streaming`]).
    Stream {
        width: usize,
        len: usize,
    },
}

impl ColumnData<'_> {
    fn len(&self) -> usize {
        match self {
            ColumnData::Const(_, n) | ColumnData::Seq(_, n) => *n,
            ColumnData::Stream { len, .. } => *len,
            ColumnData::U8(v) => v.len(),
            ColumnData::U16(v) => v.len(),
            ColumnData::U32(v) => v.len(),
            ColumnData::U64(v) => v.len(),
        }
    }

    /// `(repr code, value, bytes per entry)`; 0 bytes for the computed representations.
    fn repr(&self) -> (u8, u64, usize) {
        match self {
            ColumnData::Const(v, _) => (0, *v, 0),
            ColumnData::Seq(v, _) => (1, *v, 0),
            ColumnData::U8(_) => (2, 0, 1),
            ColumnData::U16(_) => (3, 0, 2),
            ColumnData::U32(_) => (4, 0, 4),
            ColumnData::U64(_) => (5, 0, 8),
            ColumnData::Stream { width, .. } => (width_code(*width), 0, *width),
        }
    }

    fn pages(&self) -> u64 {
        let w = self.repr().2;
        (self.len() * w).div_ceil(PAGE_SIZE) as u64
    }

    /// Encodes page `p` of this column into `buf` (zero-padded).
    fn page(&self, p: u64, buf: &mut [u8]) {
        buf.fill(0);
        let w = self.repr().2;
        if w == 0 {
            return;
        }
        let per = PAGE_SIZE / w;
        let from = p as usize * per;
        let to = (from + per).min(self.len());
        fn put<T: Copy, const W: usize>(s: &[T], buf: &mut [u8], enc: impl Fn(T) -> [u8; W]) {
            for (d, v) in buf.chunks_exact_mut(W).zip(s) {
                d.copy_from_slice(&enc(*v));
            }
        }
        match self {
            ColumnData::U8(v) => buf[..to - from].copy_from_slice(&v[from..to]),
            ColumnData::U16(v) => put(&v[from..to], buf, u16::to_le_bytes),
            ColumnData::U32(v) => put(&v[from..to], buf, u32::to_le_bytes),
            ColumnData::U64(v) => put(&v[from..to], buf, u64::to_le_bytes),
            ColumnData::Const(..) | ColumnData::Seq(..) | ColumnData::Stream { .. } => {}
        }
    }
}

/// The repr code of a column of `width`-byte values.
fn width_code(width: usize) -> u8 {
    match width {
        1 => 2,
        2 => 3,
        4 => 4,
        _ => 5,
    }
}

/// Writes a segment holding `columns` (ids must be distinct) for checkpoint `ts` to `out`, in
/// two passes over the columns (checksums, then pages) because the header comes first. A
/// file that can go back to its start is written in one pass by [`write_segment_rewinding`]
/// (what checkpoints and imports use; this one writes the tests' segments into memory).
#[cfg(test)]
pub(crate) fn write_segment(
    out: &mut dyn Write,
    ts: u64,
    columns: &[(u8, ColumnData<'_>)],
) -> io::Result<()> {
    let mut buf = vec![0u8; PAGE_SIZE];
    let mut crcs = Vec::new();
    for (_, c) in columns {
        for p in 0..c.pages() {
            c.page(p, &mut buf);
            crcs.push(crc32c::crc32c(&buf));
        }
    }
    out.write_all(&header(ts, columns, &crcs))?;
    for (_, c) in columns {
        for p in 0..c.pages() {
            c.page(p, &mut buf);
            out.write_all(&buf)?;
        }
    }
    Ok(())
}

/// [`write_segment`] in one pass: the header region is reserved (zeros; its size follows from
/// the column lengths), each data page checksummed as it is written, then `rewind` takes the
/// writer back to the file's start (after flushing what it buffers) and the header is written
/// over the zeros. The same bytes as [`write_segment`], each page encoded once instead of twice.
#[cfg(test)]
pub(crate) fn write_segment_rewinding<W: Write>(
    out: &mut W,
    ts: u64,
    columns: &[(u8, ColumnData<'_>)],
    rewind: impl FnOnce(&mut W) -> io::Result<()>,
) -> io::Result<()> {
    let mut none = |_: u8, _: &mut Sink<'_>| -> io::Result<()> {
        Err(io::Error::other("a streamed segment column without a producer"))
    };
    write_segment_streaming(out, ts, columns, rewind, &mut none)
}

/// Values of a streamed column, as a producer gives them: integers, or bytes (a one-byte
/// column's values, copied into pages as they are).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Values<'a> {
    U64(&'a [u64]),
    Bytes(&'a [u8]),
}

/// Takes a streamed column's values in order, in slices of any length.
pub(crate) type Sink<'s> = dyn FnMut(Values<'_>) -> io::Result<()> + 's;

/// Produces a [`ColumnData::Stream`] column's values: called with the column id and a
/// [`Sink`].
pub(crate) type Produce<'p> = dyn FnMut(u8, &mut Sink<'_>) -> io::Result<()> + 'p;

/// [`write_segment_rewinding`] with columns whose values are produced while the segment is
/// written: when the writer reaches a [`ColumnData::Stream`] column it calls `produce`, packs
/// the values into pages as they come (one page buffered) and checksums each page. A column
/// may so be computed in passes and never held whole. The same bytes as for the column in
/// memory; a producer that gives another number of values than the column's length is an
/// error (`InvalidData`).
pub(crate) fn write_segment_streaming<W: Write>(
    out: &mut W,
    ts: u64,
    columns: &[(u8, ColumnData<'_>)],
    rewind: impl FnOnce(&mut W) -> io::Result<()>,
    produce: &mut Produce<'_>,
) -> io::Result<()> {
    let data_pages: u64 = columns.iter().map(|(_, c)| c.pages()).sum();
    let header_pages = header_pages(columns.len(), data_pages as usize);
    out.write_all(&vec![0u8; header_pages * PAGE_SIZE])?;
    let mut buf = vec![0u8; PAGE_SIZE];
    let mut crcs = Vec::with_capacity(data_pages as usize);
    for (id, c) in columns {
        if let ColumnData::Stream { width, len } = *c {
            // What was written is in the file before the producer runs (it may read the
            // columns before this one back: `SegmentStreams::place`).
            out.flush()?;
            let mut pk =
                Packer { width, at: 0, n: 0, buf: &mut buf, out: &mut *out, crcs: &mut crcs };
            produce(*id, &mut |vals| pk.push(vals))?;
            pk.end()?;
            if pk.n != len {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("segment column {id}: {} values produced, {len} expected", pk.n),
                ));
            }
            continue;
        }
        for p in 0..c.pages() {
            c.page(p, &mut buf);
            crcs.push(crc32c::crc32c(&buf));
            out.write_all(&buf)?;
        }
    }
    rewind(out)?;
    out.write_all(&header(ts, columns, &crcs))
}

/// Packs a streamed column's values into pages, writing and checksumming each when full.
struct Packer<'a, W: Write> {
    width: usize,
    /// Bytes filled in `buf`, and values taken so far.
    at: usize,
    n: usize,
    buf: &'a mut [u8],
    out: &'a mut W,
    crcs: &'a mut Vec<u32>,
}

impl<W: Write> Packer<'_, W> {
    fn push(&mut self, vals: Values<'_>) -> io::Result<()> {
        let vals = match vals {
            Values::U64(v) => v,
            Values::Bytes(b) if self.width == 1 => return self.push_bytes(b),
            Values::Bytes(b) => {
                let wide: Vec<u64> = b.iter().map(|x| u64::from(*x)).collect();
                return self.push(Values::U64(&wide));
            }
        };
        let w = self.width;
        let mut vals = vals;
        // A page's room at a time (widths divide the page: no value straddles two), eight-byte
        // values, the part files' and most streams', by a copy the compiler unrolls.
        while !vals.is_empty() {
            let take = ((PAGE_SIZE - self.at) / w).min(vals.len());
            let dst = self.buf[self.at..self.at + take * w].chunks_exact_mut(w);
            if w == 8 {
                for (d, v) in dst.zip(&vals[..take]) {
                    d.copy_from_slice(&v.to_le_bytes());
                }
            } else {
                for (d, v) in dst.zip(&vals[..take]) {
                    d.copy_from_slice(&v.to_le_bytes()[..w]);
                }
            }
            self.at += take * w;
            self.n += take;
            vals = &vals[take..];
            if self.at == PAGE_SIZE {
                self.page()?;
            }
        }
        Ok(())
    }

    /// [`Packer::push`] of a one-byte column's values: copied a page's worth at a time.
    fn push_bytes(&mut self, mut b: &[u8]) -> io::Result<()> {
        self.n += b.len();
        while !b.is_empty() {
            let take = (PAGE_SIZE - self.at).min(b.len());
            self.buf[self.at..self.at + take].copy_from_slice(&b[..take]);
            self.at += take;
            b = &b[take..];
            if self.at == PAGE_SIZE {
                self.page()?;
            }
        }
        Ok(())
    }

    fn page(&mut self) -> io::Result<()> {
        self.buf[self.at..].fill(0);
        self.crcs.push(crc32c::crc32c(self.buf));
        self.out.write_all(self.buf)?;
        self.at = 0;
        Ok(())
    }

    /// Writes the last, partly filled page.
    fn end(&mut self) -> io::Result<()> {
        if self.at > 0 {
            self.page()?;
        }
        Ok(())
    }
}

/// Where each column's first page starts in the segment [`write_segment_streaming`] writes
/// for `columns`: `(id, byte offset)` in column order.
pub(crate) fn column_offsets(columns: &[(u8, ColumnData<'_>)]) -> Vec<(u8, u64)> {
    let data_pages: u64 = columns.iter().map(|(_, c)| c.pages()).sum();
    let mut page = header_pages(columns.len(), data_pages as usize) as u64;
    let mut at = Vec::with_capacity(columns.len());
    for (id, c) in columns {
        at.push((*id, page * PAGE_SIZE as u64));
        page += c.pages();
    }
    at
}

fn header_pages(columns: usize, data_pages: usize) -> usize {
    (FIXED_HEADER + columns * COLUMN_ENTRY + data_pages * 4 + 4).div_ceil(PAGE_SIZE)
}

/// The header region of a segment whose data pages have checksums `crcs`.
fn header(ts: u64, columns: &[(u8, ColumnData<'_>)], crcs: &[u32]) -> Vec<u8> {
    let header_pages = header_pages(columns.len(), crcs.len());
    let mut h = Vec::with_capacity(header_pages * PAGE_SIZE);
    h.extend_from_slice(SEG_MAGIC);
    h.extend_from_slice(&SEG_VERSION.to_le_bytes());
    h.extend_from_slice(&(header_pages as u32).to_le_bytes());
    h.extend_from_slice(&ts.to_le_bytes());
    h.extend_from_slice(&(crcs.len() as u64).to_le_bytes());
    h.extend_from_slice(&(columns.len() as u32).to_le_bytes());
    let mut first = 0u64;
    for (id, c) in columns {
        let (code, value, _) = c.repr();
        h.push(*id);
        h.push(code);
        h.extend_from_slice(&(c.len() as u64).to_le_bytes());
        h.extend_from_slice(&value.to_le_bytes());
        h.extend_from_slice(&first.to_le_bytes());
        h.extend_from_slice(&c.pages().to_le_bytes());
        first += c.pages();
    }
    for crc in crcs {
        h.extend_from_slice(&crc.to_le_bytes());
    }
    let crc = crc32c::crc32c(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h.resize(header_pages * PAGE_SIZE, 0);
    h
}

/// How a column's values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repr {
    Const(u64),
    Seq(u64),
    /// Bytes per value (1, 2, 4 or 8).
    Width(usize),
}

/// One column of an open segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SegColumn {
    repr: Repr,
    len: u64,
    first_page: u64,
}

impl SegColumn {
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Bytes its values take when read into memory (0 for a computed column).
    pub fn bytes(&self) -> u64 {
        match self.repr {
            Repr::Width(w) => self.len * w as u64,
            Repr::Const(_) | Repr::Seq(_) => 0,
        }
    }

    /// The column's first data page (0 for a computed column).
    #[cfg(test)]
    pub fn first_page(&self) -> u64 {
        self.first_page
    }
}

/// An open segment file: its directory in memory, its data pages behind the pool.
pub(crate) struct Segment {
    pub ts: u64,
    /// The CRC32C stored at the end of the header (over the directory and the page CRCs).
    crc: u32,
    columns: Vec<(u8, SegColumn)>,
    file: PagedFile,
}

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::new(Status::Corruption, format!("segment file {} is corrupt: {what}", path.display()))
}

/// Little-endian reads over the header, with bounds checks.
struct Cursor<'a>(&'a [u8], usize);

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.0.get(self.1..self.1 + N)?;
        self.1 += N;
        s.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
}

impl Segment {
    /// Opens a segment: reads and verifies its header (magic, version, checksum, a directory
    /// whose columns fit the data pages). Data pages are verified as they are read.
    pub fn open(file: Arc<dyn PageFile>, path: &Path) -> Result<Segment> {
        let io = |e: io::Error| {
            Error::new(Status::Io, format!("cannot read segment file {}: {e}", path.display()))
        };
        let mut first = vec![0u8; PAGE_SIZE];
        if file.read_at(&mut first, 0).map_err(io)? < PAGE_SIZE || &first[..8] != SEG_MAGIC {
            return Err(bad(path, "bad header"));
        }
        let mut c = Cursor(&first, 8);
        let version = c.u32().unwrap_or(0);
        if version != SEG_VERSION {
            return Err(Error::new(
                Status::Corruption,
                format!(
                    "segment file {} has format version {version}; this build reads version \
                     {SEG_VERSION}",
                    path.display()
                ),
            ));
        }
        let header_pages = c.u32().unwrap_or(0) as usize;
        if header_pages == 0 || header_pages > 1 << 20 {
            return Err(bad(path, "bad header length"));
        }
        let mut h = vec![0u8; header_pages * PAGE_SIZE];
        if file.read_at(&mut h, 0).map_err(io)? < h.len() {
            return Err(bad(path, "the header is truncated"));
        }
        Self::parse(h, file, path)
    }

    fn parse(h: Vec<u8>, file: Arc<dyn PageFile>, path: &Path) -> Result<Segment> {
        let mut c = Cursor(&h, 16);
        let e = |what: &str| bad(path, what);
        let ts = c.u64().ok_or_else(|| e("short header"))?;
        let data_pages = c.u64().ok_or_else(|| e("short header"))?;
        let ncols = c.u32().ok_or_else(|| e("short header"))? as usize;
        let needed = FIXED_HEADER as u64 + ncols as u64 * COLUMN_ENTRY as u64 + data_pages * 4 + 4;
        if needed > h.len() as u64 {
            return Err(e("the directory does not fit the header"));
        }
        let mut columns = Vec::with_capacity(ncols);
        for _ in 0..ncols {
            let (id, code) = (c.u8().unwrap_or(0), c.u8().unwrap_or(0));
            let (len, value) = (c.u64().unwrap_or(0), c.u64().unwrap_or(0));
            let (first_page, pages) = (c.u64().unwrap_or(0), c.u64().unwrap_or(0));
            let repr = match code {
                0 => Repr::Const(value),
                1 => Repr::Seq(value),
                2 => Repr::Width(1),
                3 => Repr::Width(2),
                4 => Repr::Width(4),
                5 => Repr::Width(8),
                _ => return Err(e(&format!("column {id} has unknown representation {code}"))),
            };
            let w = if let Repr::Width(w) = repr { w as u64 } else { 0 };
            let fits = len.checked_mul(w).map(|b| b.div_ceil(PAGE_SIZE as u64)) == Some(pages)
                && first_page.checked_add(pages).is_some_and(|end| end <= data_pages);
            if !fits {
                return Err(e(&format!("column {id} does not fit its pages")));
            }
            columns.push((id, SegColumn { repr, len, first_page }));
        }
        let crcs: Box<[u32]> = (0..data_pages).map(|_| c.u32().unwrap_or(0)).collect();
        let at = c.1;
        let stored = c.u32().ok_or_else(|| e("short header"))?;
        if crc32c::crc32c(&h[..at]) != stored {
            return Err(e("header checksum mismatch"));
        }
        let file = PagedFile::new(file, path, h.len() as u64, crcs);
        Ok(Segment { ts, crc: stored, columns, file })
    }

    pub fn column(&self, id: u8) -> Option<SegColumn> {
        self.columns.iter().find(|(i, _)| *i == id).map(|(_, c)| *c)
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The header's checksum: names this file's exact contents (every page's CRC is in it).
    pub fn crc(&self) -> u32 {
        self.crc
    }

    pub fn pages(&self) -> u64 {
        self.file.pages()
    }

    /// Reads and verifies every data page (`arbor check`), bypassing the pool.
    pub fn verify_pages(&self) -> Result<()> {
        self.file.verify_all()
    }

    /// Drops this segment's cached pages from `pool`.
    pub fn forget(&self, pool: &BufferPool) {
        pool.forget(&self.file);
    }

    /// Value `i` of `col` (0 past its end, as the in-memory columns answer).
    pub fn get(&self, pool: &BufferPool, col: SegColumn, i: u64) -> Result<u64> {
        let mut v = [0u64; 1];
        self.fill(pool, col, i, &mut v)?;
        Ok(v[0])
    }

    /// Writes values `from..from + dst.len()` of `col` into `dst` (0 past its end), reading
    /// each page it touches once through the pool (optimistically when cached, see
    /// [`BufferPool::read`]).
    pub fn fill(
        &self,
        pool: &BufferPool,
        col: SegColumn,
        from: u64,
        dst: &mut [u64],
    ) -> Result<()> {
        let w = match col.repr {
            Repr::Const(v) => {
                for (i, d) in dst.iter_mut().enumerate() {
                    *d = if from + (i as u64) < col.len { v } else { 0 };
                }
                return Ok(());
            }
            Repr::Seq(first) => {
                for (i, d) in dst.iter_mut().enumerate() {
                    let at = from + i as u64;
                    *d = if at < col.len { first + at } else { 0 };
                }
                return Ok(());
            }
            Repr::Width(w) => w,
        };
        let per = (PAGE_SIZE / w) as u64;
        let mut done = 0usize;
        while done < dst.len() {
            let at = from + done as u64;
            if at >= col.len {
                dst[done..].fill(0);
                break;
            }
            let (page, slot) = (at / per, (at % per) as usize);
            let take = ((per as usize - slot).min(dst.len() - done) as u64).min(col.len - at);
            let out = &mut dst[done..done + take as usize];
            pool.read(&self.file, col.first_page + page, |words| decode(words, slot, w, out))?;
            done += take as usize;
        }
        Ok(())
    }
}

impl Segment {
    /// Copies bytes `from..from + dst.len()` of the one-byte column `col` into `dst`, reading
    /// each page it touches once through the pool. A column of another width, or a range past
    /// its end, is `Corruption` (the caller took the range from the segment's own offsets).
    pub fn read_bytes(
        &self,
        pool: &BufferPool,
        col: SegColumn,
        from: u64,
        dst: &mut [u8],
    ) -> Result<()> {
        let end = from.checked_add(dst.len() as u64);
        if col.repr != Repr::Width(1) || end.is_none_or(|e| e > col.len) {
            return Err(bad(
                self.path(),
                format_args!("a byte range {from}+{} outside its column", dst.len()),
            ));
        }
        let per = PAGE_SIZE as u64;
        let mut done = 0usize;
        while done < dst.len() {
            let at = from + done as u64;
            let (page, slot) = (at / per, (at % per) as usize);
            let take = (PAGE_SIZE - slot).min(dst.len() - done);
            let out = &mut dst[done..done + take];
            pool.read(&self.file, col.first_page + page, |words| copy_bytes(words, slot, out))?;
            done += take;
        }
        Ok(())
    }
}

/// A column's values read whole ([`Segment::read_column`]).
#[derive(Debug)]
pub(crate) enum ColumnValues {
    Const(u64, usize),
    Seq(u64, usize),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

/// Pages read per system call by [`Segment::read_column`].
const RUN_PAGES: usize = 256;

impl Segment {
    /// Reads column `col` whole, straight from the file in runs of pages (a one-time
    /// sequential read at open, not through the pool), verifying every page's checksum.
    pub fn read_column(&self, col: SegColumn) -> Result<ColumnValues> {
        let w = match col.repr {
            Repr::Const(v) => return Ok(ColumnValues::Const(v, col.len as usize)),
            Repr::Seq(v) => return Ok(ColumnValues::Seq(v, col.len as usize)),
            Repr::Width(w) => w,
        };
        let bytes = usize::try_from(col.len.saturating_mul(w as u64))
            .map_err(|_| bad(self.path(), "a column too large for this machine"))?;
        let pages = bytes.div_ceil(PAGE_SIZE);
        let mut raw = vec![0u8; pages * PAGE_SIZE];
        for (i, run) in raw.chunks_mut(RUN_PAGES * PAGE_SIZE).enumerate() {
            self.file.load_run(col.first_page + (i * RUN_PAGES) as u64, run)?;
        }
        raw.truncate(bytes);
        fn words<T, const N: usize>(raw: &[u8], f: fn([u8; N]) -> T) -> Vec<T> {
            raw.chunks_exact(N).map(|c| f(c.try_into().unwrap_or([0; N]))).collect()
        }
        Ok(match w {
            1 => ColumnValues::U8(raw),
            2 => ColumnValues::U16(words(&raw, u16::from_le_bytes)),
            4 => ColumnValues::U32(words(&raw, u32::from_le_bytes)),
            _ => ColumnValues::U64(words(&raw, u64::from_le_bytes)),
        })
    }
}

/// Copies bytes `slot..slot + out.len()` of a page (given as little-endian words) into `out`.
#[inline]
fn copy_bytes(words: &[AtomicU64], slot: usize, out: &mut [u8]) {
    let mut k = 0;
    while k < out.len() {
        let at = slot + k;
        let Some(w) = words.get(at / 8) else {
            out[k..].fill(0);
            return;
        };
        let bytes = u64::from_le(w.load(Ordering::Relaxed)).to_le_bytes();
        let take = (8 - at % 8).min(out.len() - k);
        out[k..k + take].copy_from_slice(&bytes[at % 8..at % 8 + take]);
        k += take;
    }
}

/// Widens the `w`-byte little-endian values `slot..slot + out.len()` of a page (given as
/// words, see [`BufferPool::read`]) into `out`. `w` divides 8, so no value straddles two words.
#[inline]
fn decode(words: &[AtomicU64], slot: usize, w: usize, out: &mut [u64]) {
    match w {
        1 => decode_w::<1>(words, slot, out),
        2 => decode_w::<2>(words, slot, out),
        4 => decode_w::<4>(words, slot, out),
        _ => decode_w::<8>(words, slot, out),
    }
}

/// [`decode`] for width `W` (the divisions become shifts).
#[inline(always)]
fn decode_w<const W: usize>(words: &[AtomicU64], slot: usize, out: &mut [u64]) {
    let per = 8 / W;
    let first = slot / per;
    let Some(ws) = words.get(first..(slot + out.len()).div_ceil(per)) else {
        // Only a caller asking past the page gets here; `fill` never does.
        out.fill(0);
        return;
    };
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    for (k, o) in out.iter_mut().enumerate() {
        let at = slot + k;
        let x = u64::from_le(ws[at / per - first].load(Ordering::Relaxed));
        *o = (x >> (8 * W * (at % per))) & mask;
    }
}
