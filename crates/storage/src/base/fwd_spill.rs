//! The forward adjacency of a bulk build kept out of memory: the neighbour column (one end node
//! per relationship, segment column 3) and the type column (segment column 5) are written to
//! scratch files as relationships are fed ([`EndCol`], and `TypeCol` in `builder.rs`, over a
//! [`ColSpill`]) instead of being held (5 bytes per relationship: 104 MiB for B2B 0.01). The
//! segment writer reads them back as [`ColumnData::Stream`] columns ([`ForwardSpill`]), the
//! incoming windows (`backward.rs`) and the count store scan them in forward order
//! ([`FwdSource`]).
//!
//! Only for relationships fed in start-node order: the fed columns are then the forward
//! columns. A builder whose relationships stop arriving in start order, or whose values no
//! longer fit the scratch file's width (node ids past `u32`, types past a byte), reads the
//! values back and goes on in memory ([`EndCol::unspill`]). Byte-identical to the columns
//! built in memory: a neighbour column that is a run (constant or ascending by one) stays a
//! run in memory and never reaches the file; otherwise its width is the one
//! `Packed::from_u32` picks from the largest value. A write error is kept and returned when
//! the column is read (the segment write fails); the scratch files are removed when dropped.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use super::blob_spill::Scratch;
use super::columns::{Packed, PackedBuilder, PackedView};
use super::graph::Base;
use super::segments::OUT;
use crate::pager::pool::PageFile;
use crate::pager::segment::{ColumnData, Sink, Values};
use crate::vfs::{Vfs, VfsRead};

/// Values read from a scratch file (or a column in memory) at a time.
const BLOCK: usize = 1 << 16;

/// A column's values written to a scratch file, `width` bytes each (little-endian), a chunk
/// of bytes at a time.
pub(super) struct ColSpill {
    scratch: Scratch,
    width: usize,
    chunk: usize,
    buf: Vec<u8>,
    len: u64,
    max: u64,
    /// The first write error (later values are dropped: the build has failed).
    error: Option<io::Error>,
}

impl ColSpill {
    pub(super) fn create(
        vfs: Arc<dyn Vfs>,
        path: PathBuf,
        width: usize,
        chunk: usize,
    ) -> io::Result<ColSpill> {
        let scratch = Scratch::create(vfs, path)?;
        let chunk = chunk.max(1);
        Ok(ColSpill { scratch, width, chunk, buf: Vec::new(), len: 0, max: 0, error: None })
    }

    /// Whether `v` fits the file's width.
    pub(super) fn fits(&self, v: u64) -> bool {
        self.width >= 8 || v >> (8 * self.width) == 0
    }

    /// Appends `v` (callers check [`ColSpill::fits`] first).
    pub(super) fn push(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes()[..self.width]);
        self.len += 1;
        self.max = self.max.max(v);
        if self.buf.len() >= self.chunk {
            self.flush_buf();
        }
    }

    fn flush_buf(&mut self) {
        if self.error.is_none() && !self.buf.is_empty() {
            if let Err(e) = self.scratch.write(&self.buf) {
                self.error = Some(e);
            }
        }
        self.buf.clear();
    }

    /// Values written so far.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The scratch file.
    pub(super) fn path(&self) -> &std::path::Path {
        &self.scratch.path
    }

    /// The first write error, if any.
    pub(super) fn error(&self) -> Option<(&std::path::Path, &io::Error)> {
        self.error.as_ref().map(|e| (self.scratch.path.as_path(), e))
    }

    /// Every value written, read back (the file is removed).
    pub(super) fn read_all(self) -> io::Result<Vec<u64>> {
        let col = self.close();
        let mut r = col.reader()?;
        let mut out = Vec::with_capacity(col.len as usize);
        let mut block = Vec::new();
        while r.fill(&mut block)? > 0 {
            out.extend_from_slice(&block);
        }
        Ok(out)
    }

    /// The closed file, for reading.
    pub(super) fn close(mut self) -> SpilledCol {
        self.flush_buf();
        let mut error = self.error.take();
        if error.is_none() {
            error = self.scratch.file.as_mut().and_then(|f| f.flush().err());
        }
        self.scratch.file = None;
        let (width, len, max) = (self.width, self.len, self.max);
        SpilledCol { src: ColSrc::Scratch(self.scratch), width, len, max, error }
    }
}

/// Where a closed column's values are.
enum ColSrc {
    /// Its scratch file (removed when dropped).
    Scratch(Scratch),
    /// Its pages in the segment being written (`SegmentStreams::place`), the scratch file gone.
    Segment(Arc<dyn Vfs>, Placed),
}

/// A column's pages in the segment file being written: from byte `offset` of `path`.
#[derive(Clone)]
pub(crate) struct Placed {
    pub(crate) path: PathBuf,
    pub(crate) offset: u64,
}

/// Reads a [`Placed`] column front to back (`pread` at an advancing position).
struct PlacedRead {
    pages: Arc<dyn PageFile>,
    offset: u64,
}

impl Read for PlacedRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.pages.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

impl VfsRead for PlacedRead {
    fn size(&self) -> io::Result<u64> {
        Err(io::Error::other("a placed column has no size"))
    }
}

/// A column in a closed scratch file, or in the segment once written there.
pub(crate) struct SpilledCol {
    src: ColSrc,
    width: usize,
    len: u64,
    max: u64,
    error: Option<io::Error>,
}

impl SpilledCol {
    /// A sequential reader of the values, or the error that struck while writing them.
    pub(super) fn reader(&self) -> io::Result<ColReader> {
        let input: Box<dyn VfsRead> = match &self.src {
            ColSrc::Scratch(s) => {
                if let Some(e) = &self.error {
                    return Err(io::Error::new(e.kind(), format!("{}: {e}", s.path.display())));
                }
                s.vfs.open_read(&s.path)?
            }
            ColSrc::Segment(vfs, p) => {
                Box::new(PlacedRead { pages: vfs.open_pages(&p.path)?, offset: p.offset })
            }
        };
        Ok(ColReader { input, width: self.width, left: self.len, bytes: Vec::new() })
    }

    /// The same values read from the segment at `at`, `width` bytes each, from now on: the
    /// scratch file is removed (the segment writer wrote the column there).
    pub(super) fn placed(self, at: Placed, width: usize) -> SpilledCol {
        let vfs = match &self.src {
            ColSrc::Scratch(s) => s.vfs.clone(),
            ColSrc::Segment(v, _) => v.clone(),
        };
        let (len, max) = (self.len, self.max);
        SpilledCol { src: ColSrc::Segment(vfs, at), width, len, max, error: None }
    }

    /// Values in the file.
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }
}

/// Reads a [`SpilledCol`] a block at a time.
pub(super) struct ColReader {
    input: Box<dyn VfsRead>,
    width: usize,
    left: u64,
    bytes: Vec<u8>,
}

impl ColReader {
    /// The next values (at most [`BLOCK`]) into `out`, replacing its contents; 0 at the end.
    pub(super) fn fill(&mut self, out: &mut Vec<u64>) -> io::Result<usize> {
        out.clear();
        let n = self.left.min(BLOCK as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        self.bytes.resize(n * self.width, 0);
        self.input.read_exact(&mut self.bytes)?;
        match self.width {
            1 => out.extend(self.bytes.iter().map(|b| u64::from(*b))),
            4 => out.extend(
                self.bytes
                    .chunks_exact(4)
                    .map(|c| u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
            ),
            w => out.extend(self.bytes.chunks_exact(w).map(|c| {
                let mut b = [0u8; 8];
                b[..w].copy_from_slice(c);
                u64::from_le_bytes(b)
            })),
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// One forward column read in order, a block at a time: in memory or from its scratch file.
pub(super) enum FwdSource<'a> {
    Mem { view: PackedView<'a>, at: usize, len: usize },
    File(ColReader),
}

impl FwdSource<'_> {
    fn mem(p: &Packed) -> FwdSource<'_> {
        FwdSource::Mem { view: p.view(), at: 0, len: p.len() }
    }

    /// As [`ColReader::fill`].
    pub(super) fn fill(&mut self, out: &mut Vec<u64>) -> io::Result<usize> {
        match self {
            FwdSource::Mem { view, at, len } => {
                out.clear();
                let end = (*at + BLOCK).min(*len);
                out.extend((*at..end).map(|i| view.get(i)));
                *at = end;
                Ok(out.len())
            }
            FwdSource::File(r) => r.fill(out),
        }
    }
}

/// The forward columns of a base kept in scratch files (either may be in memory instead).
#[derive(Default)]
pub(crate) struct ForwardSpill {
    /// The neighbour column and its width in the segment.
    pub(super) other: Option<(SpilledCol, usize)>,
    /// The type column (one byte per value in the segment, as `TypeCol` builds it).
    pub(super) ty: Option<SpilledCol>,
}

impl ForwardSpill {
    /// The heap bytes the spilled columns would take in memory (the base's statistics).
    pub(super) fn bytes(&self) -> u64 {
        let other = self.other.as_ref().map_or(0, |(c, w)| c.len() * w);
        (other + self.ty.as_ref().map_or(0, SpilledCol::len)) as u64
    }

    /// The segment columns produced here, to put in place of the base's.
    pub(crate) fn columns(&self) -> Vec<(u8, ColumnData<'static>)> {
        let mut cols = Vec::new();
        if let Some((c, width)) = &self.other {
            cols.push((OUT[1], ColumnData::Stream { width: *width, len: c.len() }));
        }
        if let Some(c) = &self.ty {
            cols.push((OUT[3], ColumnData::Stream { width: 1, len: c.len() }));
        }
        cols
    }

    /// Whether the neighbour and the type column are in scratch files.
    pub(crate) fn spilled(&self) -> (bool, bool) {
        (self.other.is_some(), self.ty.is_some())
    }

    /// Whether column `id` is produced here.
    pub(crate) fn has(&self, id: u8) -> bool {
        (id == OUT[1] && self.other.is_some()) || (id == OUT[3] && self.ty.is_some())
    }

    /// Column `id` (produced here) is written to the segment at `at`: its readers read it
    /// there from now on and its scratch file goes.
    pub(crate) fn place(&mut self, id: u8, at: Placed) {
        if id == OUT[1] {
            self.other = self.other.take().map(|(c, w)| (c.placed(at, w), w));
        } else if id == OUT[3] {
            self.ty = self.ty.take().map(|c| c.placed(at, 1));
        }
    }

    /// Gives column `id`'s values to `emit`, in order, a block at a time.
    pub(crate) fn produce(&self, id: u8, emit: &mut Sink<'_>) -> io::Result<()> {
        let col = match (id, &self.other, &self.ty) {
            (x, Some((c, _)), _) if x == OUT[1] => c,
            (x, _, Some(c)) if x == OUT[3] => c,
            _ => return Err(io::Error::other(format!("segment column {id} is not streamed"))),
        };
        let mut r = col.reader()?;
        let mut block = Vec::new();
        while r.fill(&mut block)? > 0 {
            emit(Values::U64(&block))?;
        }
        Ok(())
    }

    /// The neighbour column of `base` in forward order.
    pub(super) fn others<'a>(&self, base: &'a Base) -> io::Result<FwdSource<'a>> {
        self.others_of(&base.out_other)
    }

    /// The neighbour column in forward order, `mem` when it is not spilled.
    pub(super) fn others_of<'a>(&self, mem: &'a Packed) -> io::Result<FwdSource<'a>> {
        match &self.other {
            Some((c, _)) => Ok(FwdSource::File(c.reader()?)),
            None => Ok(FwdSource::mem(mem)),
        }
    }

    /// The type column of `base` in forward order.
    pub(super) fn types<'a>(&self, base: &'a Base) -> io::Result<FwdSource<'a>> {
        match &self.ty {
            Some(c) => Ok(FwdSource::File(c.reader()?)),
            None => Ok(FwdSource::mem(&base.out_type)),
        }
    }

    /// `f(start, type, end)` for every relationship of `base` in forward order (what
    /// `Base::for_each_rel_forward` gives for the base built whole); `out_off(i)` gives the
    /// forward offsets at ascending positions (`degree_spill::offsets`).
    pub(crate) fn for_each_rel_forward(
        &self,
        base: &Base,
        out_off: &mut dyn FnMut(usize) -> io::Result<u64>,
        mut f: impl FnMut(u64, u32, u64),
    ) -> io::Result<()> {
        let (mut others, mut types) = (self.others(base)?, self.types(base)?);
        let n = base.node_end as usize;
        let (mut ob, mut tb) = (Vec::new(), Vec::new());
        let (mut pos, mut owner) = (0u64, 0usize);
        while others.fill(&mut ob)? > 0 {
            if types.fill(&mut tb)? != ob.len() {
                return Err(io::Error::other("the forward type column is short"));
            }
            for (e, t) in ob.iter().zip(&tb) {
                while owner < n && out_off(owner + 1)? <= pos {
                    owner += 1;
                }
                f(owner as u64, *t as u32, *e);
                pos += 1;
            }
        }
        Ok(())
    }
}

/// The forward neighbour column while relationships are fed: a [`PackedBuilder`], and once a
/// scratch file is given and the values stop being a run, the file ([`ColSpill`], 4 bytes per
/// value).
#[derive(Default)]
pub(super) struct EndCol {
    mem: PackedBuilder,
    spill: Option<ColSpill>,
    /// The values are in `spill` (none in `mem`).
    spilled: bool,
}

impl EndCol {
    /// Writes the values to a new scratch file at `path` once they stop being a run, `chunk`
    /// bytes at a time; before any value only.
    pub(super) fn spill_to(
        &mut self,
        vfs: Arc<dyn Vfs>,
        path: PathBuf,
        chunk: usize,
    ) -> io::Result<()> {
        if self.mem.len() > 0 || self.spill.is_some() {
            return Err(io::Error::other("the neighbour column holds values already"));
        }
        self.spill = Some(ColSpill::create(vfs, path, 4, chunk)?);
        Ok(())
    }

    pub(super) fn push(&mut self, x: u64) -> io::Result<()> {
        if self.spilled {
            match &mut self.spill {
                Some(s) if s.fits(x) => {
                    s.push(x);
                    return Ok(());
                }
                _ => self.unspill()?,
            }
        }
        self.mem.push(x);
        if self.mem.run.is_none() && !self.spilled {
            if let Some(s) = &mut self.spill {
                if self.mem.big.is_none() {
                    std::mem::take(&mut self.mem.small).into_iter().for_each(|v| s.push(v.into()));
                    self.spilled = true;
                } else {
                    self.spill = None;
                }
            }
        }
        Ok(())
    }

    /// Value `i` (a column in memory only: see [`EndCol::unspill`]).
    pub(super) fn get(&self, i: usize) -> u64 {
        self.mem.get(i)
    }

    /// Whether the values are in the scratch file.
    pub(super) fn is_spilled(&self) -> bool {
        self.spilled
    }

    /// The write error of the scratch file, if any.
    pub(super) fn error(&self) -> Option<(&std::path::Path, &io::Error)> {
        self.spill.as_ref().and_then(ColSpill::error)
    }

    /// Brings the values back into memory and stops spilling (the file is removed).
    pub(super) fn unspill(&mut self) -> io::Result<()> {
        let Some(s) = self.spill.take() else { return Ok(()) };
        if std::mem::take(&mut self.spilled) {
            let mut mem = PackedBuilder::default();
            s.read_all()?.into_iter().for_each(|v| mem.push(v));
            self.mem = mem;
        }
        Ok(())
    }

    /// The column in memory, or its closed scratch file and the width the segment stores it in
    /// (the one `Packed::from_u32` picks).
    pub(super) fn finish(self) -> Result<Packed, (SpilledCol, usize)> {
        match (self.spill, self.spilled) {
            (Some(s), true) => {
                let col = s.close();
                let width = match col.max {
                    m if m <= u64::from(u8::MAX) => 1,
                    m if m <= u64::from(u16::MAX) => 2,
                    _ => 4,
                };
                Err((col, width))
            }
            _ => Ok(self.mem.finish()),
        }
    }
}
