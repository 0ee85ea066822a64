//! Node property blobs of a bulk build kept out of memory: [`BlobArena`] is the builder's
//! blob arena, which can write its bytes to a scratch file as rows complete (a chunk at a
//! time), and [`SpilledBlobs`] gives them back to the segment writer as the node property
//! bytes column (segment column 12, a [`ColumnData::Stream`]), so the importer holds at most
//! one chunk and one row of them instead of all (146 MiB for B2B 0.01, 33.5 bytes per node).
//!
//! The offsets go to a scratch file of their own (`node_cols.rs`). When the string table
//! re-codes the blobs (strings that go inline), the offsets come back into memory and the
//! scratch file is rewritten into a second one in one sequential pass
//! ([`SpilledBlobs::recode`]), with the new offsets (in memory). The column's bytes are the
//! ones the arena built whole would give. A write or read error is kept and returned when
//! the segment writer asks for the column (the import fails, its staging directory goes);
//! the scratch files are removed when the [`SpilledBlobs`] (or the arena) is dropped.
//!
//! The scratch file is written in parts ([`Parts`]: `<path>.0`, `<path>.1`, …, each about
//! [`PART_CHUNKS`] chunks) so that producing the column removes each part once it is read: the
//! blobs leave the disk as the segment's column 12 takes their place (13.7 GB at B2B 1.0 that
//! would otherwise sit beside the finished segment).

use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::columns::{Packed, PackedBuilder};
use super::props::rewrite_blob;
use super::segments::NODE_PROPS;
use crate::pager::segment::{ColumnData, Sink, Values};
use crate::vfs::{Vfs, VfsFile};

/// A scratch file being written (and removed when dropped unless handed on).
pub(super) struct Scratch {
    pub(super) vfs: Arc<dyn Vfs>,
    pub(super) path: PathBuf,
    pub(super) file: Option<Box<dyn VfsFile>>,
}

impl Scratch {
    pub(super) fn create(vfs: Arc<dyn Vfs>, path: PathBuf) -> io::Result<Scratch> {
        let file = vfs.create(&path)?;
        Ok(Scratch { vfs, path, file: Some(file) })
    }

    pub(super) fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.write_all(bytes),
            None => Err(io::Error::other("scratch file already closed")),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.file = None;
        let _ = self.vfs.remove_file(&self.path);
    }
}

/// Chunks per part of the blob scratch file (at the 4 MiB chunk of a budget of 64 MiB or more:
/// 256 MiB parts).
const PART_CHUNKS: u64 = 64;

/// A scratch file written as numbered parts (`<path>.0`, `<path>.1`, …) of at least `part_max`
/// bytes each (but the last), so that its reader can remove each part once read.
pub(super) struct Parts {
    vfs: Arc<dyn Vfs>,
    path: PathBuf,
    part_max: u64,
    /// Closed parts and their lengths.
    done: Vec<(Scratch, u64)>,
    /// The part being written and its length.
    cur: Scratch,
    cur_len: u64,
}

impl Parts {
    fn create(vfs: Arc<dyn Vfs>, path: PathBuf, part_max: u64) -> io::Result<Parts> {
        let cur = Scratch::create(vfs.clone(), part_path(&path, 0))?;
        Ok(Parts { vfs, path, part_max: part_max.max(1), done: Vec::new(), cur, cur_len: 0 })
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.cur.write(bytes)?;
        self.cur_len += bytes.len() as u64;
        if self.cur_len >= self.part_max {
            let next = part_path(&self.path, self.done.len() + 1);
            let next = Scratch::create(self.vfs.clone(), next)?;
            let mut full = std::mem::replace(&mut self.cur, next);
            let flushed = full.file.as_mut().map_or(Ok(()), |f| f.flush());
            full.file = None;
            self.done.push((full, std::mem::take(&mut self.cur_len)));
            flushed?;
        }
        Ok(())
    }

    /// The parts in order with their lengths, closed (flushed).
    fn close(mut self) -> io::Result<Vec<(Scratch, u64)>> {
        let flushed = self.cur.file.as_mut().map_or(Ok(()), |f| f.flush());
        self.cur.file = None;
        self.done.push((self.cur, self.cur_len));
        flushed.map(|()| self.done)
    }
}

fn part_path(path: &Path, i: usize) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(format!(".{i}"));
    PathBuf::from(p)
}

/// The blob arena of a [`BaseBuilder`](super::BaseBuilder): rows are appended to `buf`;
/// with a scratch file, the bytes of complete rows go to it once `buf` holds `chunk` bytes.
#[derive(Default)]
pub(super) struct BlobArena {
    pub(super) buf: Vec<u8>,
    /// Bytes written to the scratch file (they come before `buf`).
    flushed: u64,
    spill: Option<Parts>,
    chunk: usize,
    /// Chunks written.
    pub(super) writes: u64,
    /// The first write error (later rows are dropped: the build has failed).
    error: Option<io::Error>,
}

impl BlobArena {
    /// Starts spilling to a new scratch file at `path` (an arena that holds nothing yet).
    pub(super) fn spill_to(
        &mut self,
        vfs: Arc<dyn Vfs>,
        path: PathBuf,
        chunk: usize,
    ) -> io::Result<()> {
        if self.len() > 0 || self.spill.is_some() {
            return Err(io::Error::other("the blob arena holds rows already"));
        }
        self.chunk = chunk.max(1);
        self.spill = Some(Parts::create(vfs, path, self.chunk as u64 * PART_CHUNKS)?);
        Ok(())
    }

    /// Bytes of all rows so far (spilled or not).
    pub(super) fn len(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    /// Drops the bytes after `len` (of the row being built: always in `buf`).
    pub(super) fn truncate(&mut self, len: u64) {
        self.buf.truncate(len.saturating_sub(self.flushed) as usize);
    }

    /// A row is complete: with a scratch file, writes `buf` to it once it holds a chunk.
    pub(super) fn row_end(&mut self) {
        let Some(s) = &mut self.spill else { return };
        if self.buf.len() < self.chunk {
            return;
        }
        if self.error.is_none() {
            if let Err(e) = s.write(&self.buf) {
                self.error = Some(e);
            }
        }
        self.flushed += self.buf.len() as u64;
        self.writes += 1;
        self.buf.clear();
    }

    /// The scratch file and the first error writing to it, if any.
    pub(super) fn error(&self) -> Option<(&Path, &io::Error)> {
        match (&self.spill, &self.error) {
            (Some(s), Some(e)) => Some((s.path.as_path(), e)),
            _ => None,
        }
    }

    /// The rows in memory (an arena that never spilled), or in the closed scratch file.
    pub(super) fn finish(mut self) -> Result<Vec<u8>, SpilledBlobs> {
        let Some(mut s) = self.spill.take() else { return Ok(std::mem::take(&mut self.buf)) };
        let mut error = self.error.take();
        if error.is_none() && !self.buf.is_empty() {
            error = s.write(&self.buf).err();
            self.writes += 1;
        }
        let (path, vfs, part_max) = (s.path.clone(), s.vfs.clone(), s.part_max);
        let parts = match s.close() {
            Ok(parts) => parts,
            Err(e) => {
                error = error.or(Some(e));
                Vec::new()
            }
        };
        let (len, writes) = (self.len(), self.writes);
        Err(SpilledBlobs { parts, path, vfs, part_max, len, error, writes })
    }
}

/// The node property bytes in closed scratch files (parts, in order, with their lengths), for
/// the segment writer.
pub(crate) struct SpilledBlobs {
    parts: Vec<(Scratch, u64)>,
    /// The scratch file's path (its parts add `.0`, `.1`, …), for messages.
    path: PathBuf,
    vfs: Arc<dyn Vfs>,
    part_max: u64,
    len: u64,
    error: Option<io::Error>,
    /// Chunks written while building.
    pub(crate) writes: u64,
}

/// Bytes read at a time when the column is produced or re-coded.
const READ_CHUNK: usize = 1 << 20;

impl SpilledBlobs {
    /// Bytes in the file.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// These blobs, failing with `error` when read, if there is one (the first error stays).
    pub(super) fn with_error(mut self, error: Option<io::Error>) -> SpilledBlobs {
        if self.error.is_none() {
            self.error = error;
        }
        self
    }

    /// The blobs re-coded by `remap` (`rewrite_blob`) into a second scratch file beside this
    /// one, and their new offsets; `off` are the offsets of the rows in this file.
    pub(super) fn recode(
        self,
        off: &PackedBuilder,
        remap: &[Option<u32>],
        strs: &[(Arc<str>, u64)],
    ) -> (Packed, SpilledBlobs) {
        let mut noff = PackedBuilder::default();
        noff.push(0);
        let path = self.path.with_extension("recoded");
        let run = |noff: &mut PackedBuilder| -> io::Result<(Vec<(Scratch, u64)>, u64)> {
            if let Some(e) = &self.error {
                return Err(io::Error::new(e.kind(), e.to_string()));
            }
            let vfs = self.vfs.clone();
            let mut input: Box<dyn Read> = Box::new(io::empty());
            for (part, _) in &self.parts {
                input = Box::new(input.chain(vfs.open_read(&part.path)?));
            }
            let mut input = BufReader::with_capacity(READ_CHUNK, input);
            let mut out = Parts::create(vfs, path.clone(), self.part_max)?;
            let (mut blob, mut row, mut pending, mut written) =
                (Vec::new(), Vec::new(), Vec::new(), 0u64);
            for i in 0..off.len().saturating_sub(1) {
                let n = off.get(i + 1).saturating_sub(off.get(i)) as usize;
                blob.resize(n, 0);
                input.read_exact(&mut blob)?;
                row.clear();
                rewrite_blob(&mut row, &blob, remap, strs);
                pending.extend_from_slice(&row);
                if pending.len() >= READ_CHUNK {
                    out.write(&pending)?;
                    pending.clear();
                }
                written += row.len() as u64;
                noff.push(written);
            }
            out.write(&pending)?;
            Ok((out.close()?, written))
        };
        match run(&mut noff) {
            Ok((parts, len)) => {
                let (vfs, part_max, writes) = (self.vfs.clone(), self.part_max, self.writes);
                let blobs = SpilledBlobs { parts, path, vfs, part_max, len, error: None, writes };
                (noff.finish(), blobs)
            }
            Err(e) => {
                // The column fails with the error when asked for; the offsets keep their length.
                while noff.len() < off.len() {
                    noff.push(noff.last().unwrap_or(0));
                }
                let mut failed = self;
                failed.error = Some(e);
                (noff.finish(), failed)
            }
        }
    }

    /// The segment column this stream produces (node property bytes).
    pub(crate) fn column(&self) -> (u8, ColumnData<'static>) {
        (NODE_PROPS[1], ColumnData::Stream { width: 1, len: self.len as usize })
    }

    /// Gives the bytes to `emit`, in order, a chunk at a time, removing each part of the
    /// scratch file once read (the blobs are read once: the rest go when dropped).
    pub(crate) fn produce(&mut self, emit: &mut Sink<'_>) -> io::Result<()> {
        if let Some(e) = &self.error {
            return Err(io::Error::new(e.kind(), format!("{}: {e}", self.path.display())));
        }
        let mut buf = vec![0u8; READ_CHUNK];
        let mut left = self.len;
        for (part, len) in std::mem::take(&mut self.parts) {
            let mut input = self.vfs.open_read(&part.path)?;
            let mut in_part = len.min(left);
            while in_part > 0 {
                let n = (in_part.min(READ_CHUNK as u64)) as usize;
                input.read_exact(&mut buf[..n])?;
                emit(Values::Bytes(&buf[..n]))?;
                in_part -= n as u64;
                left -= n as u64;
            }
            drop(part);
        }
        if left > 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{}: {left} bytes of node blobs missing", self.path.display()),
            ));
        }
        Ok(())
    }
}
