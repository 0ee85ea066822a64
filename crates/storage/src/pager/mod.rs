//! Paging of immutable segment files: the [`pool::BufferPool`] (fixed budget, `pread` misses,
//! clock eviction, pinned reads; the crate's only `unsafe`) and the segment file format
//! ([`segment`]: page-aligned integer columns, a CRC32C per page).
//!
//! A checkpoint writes the base's adjacency (CSR both ways) and node label codes as one
//! segment file next to its checkpoint file, and the manifest lists it; [`Pager`] holds the
//! pool and the segment the current manifest names. See `ARCHITECTURE.md` (design decisions)
//! for why a buffer pool with explicit reads rather than `mmap`.

mod counter;
pub(crate) mod pool;
pub(crate) mod segment;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_model::{Error, Result, Status};
use parking_lot::Mutex;

use crate::vfs::Vfs;
pub use pool::default_memory_limit;
use pool::BufferPool;
use segment::Segment;

/// The current segment: none, named by a manifest just written (opened on first use, so a
/// checkpoint reads nothing back), or open.
enum Current {
    None,
    Named(String),
    Open(Arc<Segment>),
}

/// The page cache of a file-backed store and its current segment.
pub(crate) struct Pager {
    /// Shared with the bases that read the current segment through it.
    pub pool: Arc<BufferPool>,
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    current: Mutex<Current>,
}

/// Opens segment file `name` in `dir` (its header verified).
pub(crate) fn open_segment(vfs: &dyn Vfs, dir: &Path, name: &str) -> Result<Arc<Segment>> {
    let path = dir.join(name);
    let file = vfs.open_pages(&path).map_err(|e| {
        Error::new(Status::Io, format!("cannot open segment file {}: {e}", path.display()))
    })?;
    Ok(Arc::new(Segment::open(file, &path)?))
}

impl Pager {
    /// A pager over `dir` with a pool of `memory_limit` bytes (the default: half of the
    /// machine's memory).
    pub fn new(vfs: Arc<dyn Vfs>, dir: &Path, memory_limit: Option<u64>) -> Result<Pager> {
        let pool = Arc::new(BufferPool::new(memory_limit.unwrap_or_else(default_memory_limit))?);
        Ok(Pager { pool, vfs, dir: dir.to_path_buf(), current: Mutex::new(Current::None) })
    }

    /// The segment of the current checkpoint, if it has one (opening it on first use).
    pub fn current(&self) -> Result<Option<Arc<Segment>>> {
        let mut cur = self.current.lock();
        match &*cur {
            Current::None => Ok(None),
            Current::Open(s) => Ok(Some(s.clone())),
            Current::Named(name) => {
                let seg = open_segment(&*self.vfs, &self.dir, name)?;
                *cur = Current::Open(seg.clone());
                Ok(Some(seg))
            }
        }
    }

    /// Opens segment `name` now and makes it current (recovery: a manifest's segment that
    /// does not open fails the open).
    pub fn open_current(&self, name: &str) -> Result<()> {
        let seg = open_segment(&*self.vfs, &self.dir, name)?;
        self.replace(Current::Open(seg));
        Ok(())
    }

    /// Makes segment `name` (just written and listed by the manifest) current; it is opened on
    /// first use.
    pub fn set_current(&self, name: String) {
        self.replace(Current::Named(name));
    }

    /// The replaced segment's cached pages are dropped.
    fn replace(&self, new: Current) {
        let old = std::mem::replace(&mut *self.current.lock(), new);
        if let Current::Open(old) = old {
            old.forget(&self.pool);
        }
    }
}
