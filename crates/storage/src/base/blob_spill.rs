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

use std::io::{self, BufReader, BufWriter, Read, Write};
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

/// The blob arena of a [`BaseBuilder`](super::BaseBuilder): rows are appended to `buf`;
/// with a scratch file, the bytes of complete rows go to it once `buf` holds `chunk` bytes.
#[derive(Default)]
pub(super) struct BlobArena {
    pub(super) buf: Vec<u8>,
    /// Bytes written to the scratch file (they come before `buf`).
    flushed: u64,
    spill: Option<Scratch>,
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
        self.spill = Some(Scratch::create(vfs, path)?);
        self.chunk = chunk.max(1);
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
            (Some(s), Some(e)) => Some((&s.path, e)),
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
        if error.is_none() {
            error = s.file.as_mut().and_then(|f| f.flush().err());
        }
        s.file = None;
        Err(SpilledBlobs { scratch: s, len: self.len(), error, writes: self.writes })
    }
}

/// The node property bytes in a closed scratch file, for the segment writer.
pub(crate) struct SpilledBlobs {
    scratch: Scratch,
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
        let path = self.scratch.path.with_extension("recoded");
        let run = |noff: &mut PackedBuilder| -> io::Result<(Scratch, u64)> {
            if let Some(e) = &self.error {
                return Err(io::Error::new(e.kind(), e.to_string()));
            }
            let vfs = self.scratch.vfs.clone();
            let mut input =
                BufReader::with_capacity(READ_CHUNK, vfs.open_read(&self.scratch.path)?);
            let mut out = Scratch::create(vfs, path.clone())?;
            let (mut blob, mut row, mut written) = (Vec::new(), Vec::new(), 0u64);
            {
                let Some(f) = out.file.as_mut() else { return Err(io::Error::other("closed")) };
                let mut w = BufWriter::with_capacity(READ_CHUNK, f);
                for i in 0..off.len().saturating_sub(1) {
                    let n = off.get(i + 1).saturating_sub(off.get(i)) as usize;
                    blob.resize(n, 0);
                    input.read_exact(&mut blob)?;
                    row.clear();
                    rewrite_blob(&mut row, &blob, remap, strs);
                    w.write_all(&row)?;
                    written += row.len() as u64;
                    noff.push(written);
                }
                w.flush()?;
            }
            out.file = None;
            Ok((out, written))
        };
        match run(&mut noff) {
            Ok((scratch, len)) => {
                let writes = self.writes;
                (noff.finish(), SpilledBlobs { scratch, len, error: None, writes })
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

    /// Gives the bytes to `emit`, in order, a chunk at a time.
    pub(crate) fn produce(&self, emit: &mut Sink<'_>) -> io::Result<()> {
        if let Some(e) = &self.error {
            return Err(io::Error::new(e.kind(), format!("{}: {e}", self.scratch.path.display())));
        }
        let mut input = self.scratch.vfs.open_read(&self.scratch.path)?;
        let mut buf = vec![0u8; READ_CHUNK];
        let mut left = self.len;
        while left > 0 {
            let n = (left.min(READ_CHUNK as u64)) as usize;
            input.read_exact(&mut buf[..n])?;
            emit(Values::Bytes(&buf[..n]))?;
            left -= n as u64;
        }
        Ok(())
    }
}
