//! The file-system seam of the storage engine: every byte the WAL, checkpoints, the manifest,
//! recovery and `check` read or write goes through a [`Vfs`].
//!
//! [`RealFs`] is the production implementation over `std::fs` (what [`crate::Store::open`]
//! uses). Tests plug in a simulated file system that models the page cache and injects crashes,
//! torn writes and failing fsyncs (`simfs.rs`), through [`crate::Store::open_with_vfs`].
//!
//! The seam is a trait object (`Arc<dyn Vfs>`, `Box<dyn VfsFile>`): the WAL writes a whole
//! group-commit batch per call and checkpoints write through a 1 MiB buffer, so one virtual
//! call per I/O is noise next to the system call behind it.
//!
//! Operations are the ones storage needs and nothing more: files are either appended to (WAL
//! segments), written once from the start (checkpoints, the manifest), or read; directories are
//! listed, entries renamed and removed, and a directory is fsynced to make those entry changes
//! durable.

use std::any::Any;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::pager::pool::{MemFile, PageFile};

/// A file open for writing (appending to a WAL segment, or writing a new checkpoint).
pub trait VfsFile: Write + Send {
    /// `fdatasync`: the written data (and the size) are durable when this returns `Ok`.
    /// After an error the written data may be lost even though it stays readable, and a later
    /// successful call does not bring it back (Linux semantics).
    fn sync_data(&mut self) -> io::Result<()>;
    /// `fsync`: data and all metadata.
    fn sync_all(&mut self) -> io::Result<()>;
    /// Current size in bytes.
    fn size(&self) -> io::Result<u64>;
    /// Truncates (or extends with zeros) to `len` bytes.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// Moves the write position back to the file's start (a segment's header is written last,
    /// over the region reserved for it). Not for a file opened to append.
    fn rewind(&mut self) -> io::Result<()>;
}

/// A file open for reading.
pub trait VfsRead: Read + Send {
    fn size(&self) -> io::Result<u64>;
}

/// The file-system operations storage needs. Paths are absolute or relative to the process's
/// working directory, as with `std::fs`.
pub trait Vfs: Send + Sync {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Opens `path` for appending, creating it if missing (the new directory entry is durable
    /// only after [`Vfs::sync_dir`]).
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn VfsFile>>;
    /// Creates `path`, or truncates it if it exists, for writing from the start.
    fn create(&self, path: &Path) -> io::Result<Box<dyn VfsFile>>;
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn VfsRead>>;
    /// The whole content of `path`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Opens `path` for positional page reads (segment files through the buffer pool). The
    /// default reads the whole file into memory (simulated file systems); [`RealFs`] reads
    /// pages on demand with `pread`.
    fn open_pages(&self, path: &Path) -> io::Result<Arc<dyn PageFile>> {
        Ok(Arc::new(MemFile(self.read(path)?)))
    }
    fn exists(&self, path: &Path) -> bool;
    /// Atomically replaces `to` with `from` (durable after [`Vfs::sync_dir`]).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Names of the entries of `dir` (not recursive, no order promised).
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Makes the entry changes of `dir` (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Locks the store in `dir` against other processes: `exclusive` for a writer (creating the
    /// lock file), shared for a read-only opener (`Ok(None)` if there is no lock file, which
    /// is then not created). A lock held elsewhere is `ErrorKind::WouldBlock`. The lock is
    /// released when the returned guard is dropped.
    fn lock_dir(&self, dir: &Path, exclusive: bool) -> io::Result<Option<Box<dyn Any + Send>>>;
}

/// The real file system (`std::fs`). Files and directories it creates are owner-only (0600
/// and 0700 on Unix): they hold the whole database.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFs;

/// Creates `dir` and its missing parents owner-only (0700 on Unix; existing ones are left as
/// they are).
pub fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Open options whose file, if created, is owner-only (0600 on Unix).
pub fn private_file_options() -> OpenOptions {
    let mut o = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o
}

/// The name of the lock file in a data directory.
pub(crate) const LOCK_FILE: &str = "LOCK";

impl VfsFile for File {
    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }
    fn sync_all(&mut self) -> io::Result<()> {
        File::sync_all(self)
    }
    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
    fn rewind(&mut self) -> io::Result<()> {
        io::Seek::rewind(self)
    }
}

impl VfsRead for File {
    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
}

impl Vfs for RealFs {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        create_private_dir_all(dir)
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn VfsFile>> {
        Ok(Box::new(private_file_options().create(true).append(true).open(path)?))
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn VfsFile>> {
        let file = private_file_options().write(true).create(true).truncate(true).open(path)?;
        Ok(Box::new(file))
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn VfsRead>> {
        Ok(Box::new(File::open(path)?))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }
    #[cfg(unix)]
    fn open_pages(&self, path: &Path) -> io::Result<Arc<dyn PageFile>> {
        Ok(Arc::new(File::open(path)?))
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir)? {
            // Names that are not UTF-8 are not ours.
            if let Some(name) = entry?.file_name().to_str() {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
    fn lock_dir(&self, dir: &Path, exclusive: bool) -> io::Result<Option<Box<dyn Any + Send>>> {
        let path = dir.join(LOCK_FILE);
        let file = if exclusive {
            private_file_options().create(true).truncate(false).write(true).open(&path)?
        } else {
            match File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e),
            }
        };
        let res = if exclusive { file.try_lock() } else { file.try_lock_shared() };
        match res {
            Ok(()) => Ok(Some(Box::new(file))),
            Err(fs::TryLockError::WouldBlock) => Err(io::ErrorKind::WouldBlock.into()),
            Err(fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

/// Makes a failed directory fsync final, for one open store: once one failed, every later
/// one fails too. The failed one may have dropped entry changes made by another thread (say,
/// the checkpoint's rename, pending when the log writer's fsync of a new segment's entry
/// failed), and a later fsync on a fresh descriptor can succeed without them: a checkpoint
/// would then publish a manifest naming a file whose entry never reached the disk. The fsyncs
/// are serialized so that the failure is recorded before any later one can report success.
pub(crate) struct StickyDirSync {
    inner: Arc<dyn Vfs>,
    failed: Mutex<Option<String>>,
}

impl StickyDirSync {
    pub fn new(inner: Arc<dyn Vfs>) -> StickyDirSync {
        StickyDirSync { inner, failed: Mutex::new(None) }
    }
}

impl Vfs for StickyDirSync {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn VfsFile>> {
        self.inner.open_append(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn VfsFile>> {
        self.inner.create(path)
    }
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn VfsRead>> {
        self.inner.open_read(path)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn open_pages(&self, path: &Path) -> io::Result<Arc<dyn PageFile>> {
        self.inner.open_pages(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.inner.list_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut failed = self.failed.lock();
        if let Some(first) = &*failed {
            return Err(io::Error::other(format!("an earlier directory fsync failed: {first}")));
        }
        self.inner.sync_dir(dir).inspect_err(|e| *failed = Some(e.to_string()))
    }
    fn lock_dir(&self, dir: &Path, exclusive: bool) -> io::Result<Option<Box<dyn Any + Send>>> {
        self.inner.lock_dir(dir, exclusive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_fs_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let fs = RealFs;
        let a = dir.path().join("a");
        let mut f = fs.open_append(&a).unwrap();
        f.write_all(b"hello").unwrap();
        f.sync_data().unwrap();
        assert_eq!(f.size().unwrap(), 5);
        f.set_len(2).unwrap();
        drop(f);
        let mut f = fs.open_append(&a).unwrap();
        f.write_all(b"y").unwrap();
        drop(f);
        assert_eq!(fs.read(&a).unwrap(), b"hey");
        let b = dir.path().join("b");
        fs.rename(&a, &b).unwrap();
        fs.sync_dir(dir.path()).unwrap();
        assert!(!fs.exists(&a) && fs.exists(&b));
        let mut r = fs.open_read(&b).unwrap();
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!((s.as_str(), r.size().unwrap()), ("hey", 3));
        assert_eq!(fs.list_dir(dir.path()).unwrap(), vec!["b".to_string()]);
        fs.remove_file(&b).unwrap();
        assert!(fs.list_dir(dir.path()).unwrap().is_empty());
        // Locks: a shared lock needs no file; an exclusive one creates it and excludes others.
        assert!(fs.lock_dir(dir.path(), false).unwrap().is_none());
        let g = fs.lock_dir(dir.path(), true).unwrap();
        assert!(g.is_some());
        let e = fs.lock_dir(dir.path(), false).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        drop(g);
        assert!(fs.lock_dir(dir.path(), false).unwrap().is_some());
    }

    /// Everything a store writes is owner-only: its directory, log, checkpoint, manifest and
    /// lock file.
    #[cfg(unix)]
    #[test]
    fn store_files_are_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/db");
        let store = crate::Store::open(&dir, crate::StoreConfig::default()).unwrap();
        let mut tx = store.begin(false);
        tx.create_node(&[], vec![]).unwrap();
        tx.commit().unwrap();
        store.close().unwrap();
        drop(store);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&tmp.path().join("a")), 0o700);
        let mut kinds = Vec::new();
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(mode(&path), 0o600, "{}", path.display());
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            kinds.push(name.split(['-', '.']).next().unwrap().to_string());
        }
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds, ["LOCK", "MANIFEST", "checkpoint", "segment", "wal"]);
    }

    #[test]
    fn a_failed_directory_fsync_is_final() {
        let sim = crate::simfs::SimFs::new(1);
        let d = Path::new("/d");
        sim.create_dir_all(d).unwrap();
        let fs = StickyDirSync::new(Arc::new(sim.clone()));
        fs.sync_dir(d).unwrap();
        sim.arm(crate::simfs::FaultKind::DirSyncFail, 0);
        assert!(fs.sync_dir(d).is_err());
        // The simulated file system would report success now; the store must not believe it.
        assert!(sim.sync_dir(d).is_ok());
        assert!(fs.sync_dir(d).is_err());
    }
}
