//! The buffer pool: a fixed budget of 4 KiB frames caching clean pages of immutable segment
//! files, filled by positional reads (`pread`) on a miss, evicted by clock (second chance),
//! and pinned while read. This is the crate's only `unsafe`.
//!
//! # Invariants (what makes the `unsafe` sound)
//!
//! 1. The frames live in page-aligned chunks of 1 MiB, allocated when the pool first needs
//!    one of their frames (under the table mutex, before the frame is handed out) and freed
//!    only when the pool is dropped; a [`PageGuard`] borrows the pool, so no
//!    guard outlives the memory.
//! 2. A frame's bytes are written only by its *loader*: the thread that, under the table mutex,
//!    took the frame as a victim by swapping its pin word from 0 to `EXCLUSIVE` (so nobody held
//!    a guard on it, and a reader that pins it meanwhile sees the bit and backs off), set its
//!    owner and state `LOADING`, and turned the exclusive bit into its own pin. The loader then
//!    releases the mutex and reads the page into the frame; nobody else writes it (it is
//!    pinned, so never a victim again until unpinned) and nobody reads its bytes while the
//!    state is `LOADING`.
//! 3. A frame's bytes are read only through a [`PageGuard`], which holds one pin from its
//!    creation to its drop (a `Release` decrement), and only after observing the frame's state
//!    `READY` with `Acquire`, which the loader stored with `Release` after its last write: the
//!    write happens before every read. A pinned frame is never chosen as a victim, so its
//!    bytes do not change while any guard exists. A thread that finds its page `LOADING` pins
//!    the frame and waits for `READY`, or for `FAILED` (the read failed; the loader unmapped
//!    the frame under the mutex), then unpins it and starts over.
//!
//! Pages are immutable on disk, so the pool never writes back: eviction just reuses the frame.
//! Every page is checked against the CRC32C its segment lists before it becomes visible; a bad
//! or short page is a `Corruption` error naming the file and page, and the frame stays free.
//!
//! 4. Frame memory is only ever accessed through `AtomicU64` words (relaxed loads and stores)
//!    or, while pinned, as plain bytes ([`PageGuard::bytes`]): a loader reads the page into a
//!    private buffer and then stores it into the frame word by word, so an optimistic reader
//!    (below) that races with a loader reads atomically and there is no data race.
//! 5. Each frame has a `version` (a sequence lock): the thread that takes a frame as a victim
//!    makes it odd before it changes the owner, state or bytes, and even again (`Release`) once
//!    the frame is `READY` or `FAILED`. Only the exclusive holder writes it.
//!
//! A hit usually takes no lock and no read-modify-write: [`BufferPool::read`] reads the frame
//! that the page's hint names *optimistically* (the vmcache/LeanStore scheme): version even
//! (`Acquire`), owner and state checked, words read, `Acquire` fence, version unchanged; only
//! then is the result used, otherwise it falls back to pinning. A pinned read ([`BufferPool::fix`])
//! uses the same hint: a reader pins that frame and keeps it only if the pin word had no
//! `EXCLUSIVE` bit and the frame's owner is still that page and `READY` (the pin stops any
//! eviction from then on). Hits are counted per thread ([`super::counter`]), so readers on
//! different cores never write a shared cache line.
//! Otherwise, the table mutex covers the lookup (the page's hint, checked against the frame's
//! owner: no hash map, so neither a miss nor an eviction hashes), the victim choice and the
//! mapping; the `pread`
//! of a miss runs outside it, so misses on different pages proceed in parallel and hits never
//! wait for another page's read. The vmcache design (a state word per page of a virtual region,
//! optimistic reads with no table lookup) can replace the table behind the same API.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use arbor_model::{Error, Result, Status};
use parking_lot::Mutex;

use super::counter::Counter;

/// Bytes per page (and frame).
pub const PAGE_SIZE: usize = 4096;

/// The smallest pool that can run: a node's range may pin one page of each of the columns an
/// expansion reads at once (offsets twice, neighbour, relationship, type) plus a few for
/// concurrent readers.
pub const MIN_FRAMES: usize = 16;

/// A file whose pages can be read at any offset without moving a cursor (`pread`).
pub trait PageFile: Send + Sync {
    /// Reads up to `buf.len()` bytes at `offset`; fewer only at the end of the file.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

#[cfg(unix)]
impl PageFile for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match std::os::unix::fs::FileExt::read_at(self, &mut buf[done..], offset + done as u64)
            {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

/// A file held in memory (simulated file systems, tests).
pub struct MemFile(pub Vec<u8>);

impl PageFile for MemFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let at = usize::try_from(offset).unwrap_or(usize::MAX).min(self.0.len());
        let n = buf.len().min(self.0.len() - at);
        buf[..n].copy_from_slice(&self.0[at..at + n]);
        Ok(n)
    }
}

/// A file registered for paging: its handle, its path (for errors), where its data pages
/// start, the expected CRC32C of each data page, and per page a hint of the frame holding it.
pub struct PagedFile {
    id: u32,
    /// Per data page, 1 + the frame it was last mapped to (0: none), written under the table
    /// mutex when it is mapped; checked by every use (the frame may hold another page since).
    hints: Box<[AtomicU32]>,
    file: Arc<dyn PageFile>,
    path: PathBuf,
    /// Byte offset of data page 0.
    data_offset: u64,
    crcs: Box<[u32]>,
}

static NEXT_FILE_ID: AtomicU32 = AtomicU32::new(1);

impl PagedFile {
    /// Registers a file: data page `p` is the `PAGE_SIZE` bytes at `data_offset + p * PAGE_SIZE`
    /// and must have CRC32C `crcs[p]`. Ids are never reused, so pages of a dropped file still in
    /// a pool are never mistaken for another file's.
    pub fn new(file: Arc<dyn PageFile>, path: &Path, data_offset: u64, crcs: Box<[u32]>) -> Self {
        let id = NEXT_FILE_ID.fetch_add(1, Ordering::Relaxed);
        let hints = crcs.iter().map(|_| AtomicU32::new(0)).collect();
        PagedFile { id, hints, file, path: path.to_path_buf(), data_offset, crcs }
    }

    pub fn pages(&self) -> u64 {
        self.crcs.len() as u64
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn corrupt(&self, page: u64, what: &str) -> Error {
        Error::new(
            Status::Corruption,
            format!("segment file {} page {page}: {what}", self.path.display()),
        )
    }

    /// Reads and verifies one data page into `buf` (exactly `PAGE_SIZE` bytes).
    fn load(&self, page: u64, buf: &mut [u8]) -> Result<()> {
        let Some(&want) = self.crcs.get(page as usize) else {
            return Err(self.corrupt(page, "past the last page"));
        };
        let off = self.data_offset + page * PAGE_SIZE as u64;
        let n = self.file.read_at(buf, off).map_err(|e| {
            Error::new(
                Status::Io,
                format!("cannot read segment file {} page {page}: {e}", self.path.display()),
            )
        })?;
        if n < PAGE_SIZE {
            return Err(self.corrupt(page, "the file ends inside it (truncated)"));
        }
        if crc32c::crc32c(buf) != want {
            return Err(self.corrupt(page, "checksum mismatch"));
        }
        Ok(())
    }

    /// Reads and verifies data pages `first..first + buf.len() / PAGE_SIZE` into `buf` with
    /// one read (a column read whole, bypassing the pool).
    pub fn load_run(&self, first: u64, buf: &mut [u8]) -> Result<()> {
        let pages = (buf.len() / PAGE_SIZE) as u64;
        if first.checked_add(pages).is_none_or(|end| end > self.pages()) {
            return Err(self.corrupt(first, "a run past the last page"));
        }
        let off = self.data_offset + first * PAGE_SIZE as u64;
        let n = self.file.read_at(buf, off).map_err(|e| {
            Error::new(
                Status::Io,
                format!("cannot read segment file {} page {first}: {e}", self.path.display()),
            )
        })?;
        for (i, page) in buf.chunks_exact(PAGE_SIZE).enumerate() {
            let p = first + i as u64;
            if n < (i + 1) * PAGE_SIZE {
                return Err(self.corrupt(p, "the file ends inside it (truncated)"));
            }
            if crc32c::crc32c(page) != self.crcs[p as usize] {
                return Err(self.corrupt(p, "checksum mismatch"));
            }
        }
        Ok(())
    }

    /// Reads and verifies every data page without caching them (`arbor check`).
    pub fn verify_all(&self) -> Result<()> {
        // In runs of 64 pages (256 KiB): one read per run, not per page.
        const RUN: u64 = 64;
        let mut buf = vec![0u8; RUN as usize * PAGE_SIZE];
        let mut p = 0;
        while p < self.pages() {
            let n = RUN.min(self.pages() - p);
            self.load_run(p, &mut buf[..n as usize * PAGE_SIZE])?;
            p += n;
        }
        Ok(())
    }
}

/// Words (`u64`) per page.
pub const WORDS: usize = PAGE_SIZE / 8;

/// Frames per separately allocated chunk (1 MiB): memory is taken as the pool fills, so an
/// idle pool with a large budget costs nothing.
const CHUNK_FRAMES: usize = 256;

/// The page-aligned frame memory (invariant 1): chunks allocated on first use, under the table
/// mutex, and freed with the pool.
struct Frames {
    chunks: Box<[AtomicPtr<u8>]>,
    count: usize,
}

impl Frames {
    fn layout(&self, chunk: usize) -> Layout {
        let frames = CHUNK_FRAMES.min(self.count - chunk * CHUNK_FRAMES);
        // Cannot fail: at most 1 MiB, page alignment is a power of two.
        Layout::from_size_align(frames * PAGE_SIZE, PAGE_SIZE).unwrap_or(Layout::new::<u8>())
    }

    /// Makes sure frame `f`'s chunk exists (called under the table mutex).
    fn ensure(&self, f: usize) -> Result<()> {
        let c = f / CHUNK_FRAMES;
        if !self.chunks[c].load(Ordering::Acquire).is_null() {
            return Ok(());
        }
        // From the system allocator, not the global one: the page cache has its own budget, and
        // the `arbor` binary's global allocator counts a query thread's allocations against that
        // query's memory limit (a miss on a query thread would otherwise charge it a chunk).
        // SAFETY: the layout has a non-zero size (at least one frame).
        let p = unsafe { System.alloc_zeroed(self.layout(c)) };
        if p.is_null() {
            return Err(Error::new(Status::MemoryExhausted, "cannot allocate page cache memory"));
        }
        self.chunks[c].store(p, Ordering::Release);
        Ok(())
    }

    /// Frame `f`'s memory as words (invariant 4), whose chunk exists.
    fn words(&self, f: usize) -> &[AtomicU64] {
        // SAFETY: the chunk exists and the frame's `PAGE_SIZE` bytes lie inside it (invariant
        // 1), page-aligned, so suitably aligned for `AtomicU64` (same size and layout as
        // `u64`); every concurrent access to frame memory is atomic (invariant 4), and the
        // slice borrows `self`, which owns the memory.
        unsafe { std::slice::from_raw_parts(self.ptr(f) as *const AtomicU64, WORDS) }
    }

    /// The address of frame `f`, whose chunk exists.
    fn ptr(&self, f: usize) -> *mut u8 {
        let base = self.chunks[f / CHUNK_FRAMES].load(Ordering::Acquire);
        debug_assert!(!base.is_null());
        base.wrapping_add((f % CHUNK_FRAMES) * PAGE_SIZE)
    }
}

impl Drop for Frames {
    fn drop(&mut self) {
        for c in 0..self.chunks.len() {
            let p = self.chunks[c].load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: allocated in `ensure` with this very layout, freed once.
                unsafe { System.dealloc(p, self.layout(c)) }
            }
        }
    }
}

/// A frame's pin count (readers holding a [`PageGuard`]; [`EXCLUSIVE`] while a victim is
/// being taken), clock reference bit, load state ([`READY`], [`LOADING`], [`FAILED`]) and
/// owner (invariants 2 and 3; the owner is written only by the loader while exclusive).
struct FrameMeta {
    pins: AtomicU32,
    referenced: AtomicBool,
    state: AtomicU8,
    file: AtomicU32,
    page: AtomicU64,
    /// The sequence lock of invariant 5 (odd while the frame's owner or bytes change).
    version: AtomicU64,
}

impl FrameMeta {
    /// Begins a change of the frame (invariant 5); the caller holds it exclusively.
    fn begin_write(&self) {
        let v = self.version.load(Ordering::Relaxed);
        self.version.store(v | 1, Ordering::Relaxed);
        fence(Ordering::Release);
    }

    /// Ends the change begun by [`FrameMeta::begin_write`].
    fn end_write(&self) {
        let v = self.version.load(Ordering::Relaxed);
        self.version.store((v | 1) + 1, Ordering::Release);
    }
}

/// The pin word's bit held by the thread taking the frame as a victim.
const EXCLUSIVE: u32 = 1 << 31;

/// The frame holds its page's bytes (or is free: then no table entry leads to it).
const READY: u8 = 0;
/// The frame's loader is reading its page.
const LOADING: u8 = 1;
/// The loader's read failed; the frame is unmapped and free once unpinned.
const FAILED: u8 = 2;

/// What the table mutex protects. There is no page → frame map: a page's hint in its
/// [`PagedFile`] (written under this mutex when the page is mapped) names the frame, and the
/// page is mapped iff that frame's `owner` is the page, so an eviction is one store.
struct Table {
    /// Per frame handed out so far, the page it holds (`None`: free).
    owner: Vec<Option<(u32, u64)>>,
    /// The clock hand.
    hand: usize,
    /// Frames handed out so far (`0..used` have memory); the clock runs once all are used.
    used: usize,
}

/// Counters for tests and memory statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub frames: u64,
    /// Frames the pool may fill: `frames` less those promoted parts took
    /// ([`BufferPool::set_reserved`]).
    pub limit: u64,
    pub resident: u64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
}

/// The buffer pool (see the module docs).
pub struct BufferPool {
    frames: Frames,
    count: usize,
    /// Frames the pool may fill: `count` less the pages of the budget that promoted parts of
    /// the base hold in memory ([`BufferPool::set_reserved`]), at least [`MIN_FRAMES`].
    limit: AtomicUsize,
    /// Per chunk of frames, their pin counts and reference bits (made with the chunk, so an
    /// idle pool with a large budget holds no per-frame state either).
    meta: Box<[OnceLock<Box<[FrameMeta]>>]>,
    table: Mutex<Table>,
    hits: Counter,
    misses: AtomicU64,
    evictions: AtomicU64,
}

impl BufferPool {
    /// A pool of `budget` bytes (rounded down to whole pages). A budget below
    /// [`MIN_FRAMES`] pages is refused with the minimum named. The memory is reserved, not
    /// touched: frames become resident as pages are first read into them.
    pub fn new(budget: u64) -> Result<BufferPool> {
        let count = usize::try_from(budget / PAGE_SIZE as u64).unwrap_or(usize::MAX);
        if count < MIN_FRAMES {
            return Err(Error::new(
                Status::MemoryExhausted,
                format!(
                    "a memory limit of {budget} bytes is too small for the page cache: the \
                     minimum is {} bytes",
                    MIN_FRAMES * PAGE_SIZE
                ),
            ));
        }
        let chunks = count.div_ceil(CHUNK_FRAMES);
        Ok(BufferPool {
            frames: Frames {
                chunks: (0..chunks).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect(),
                count,
            },
            count,
            limit: AtomicUsize::new(count),
            meta: (0..chunks).map(|_| OnceLock::new()).collect(),
            table: Mutex::new(Table { owner: Vec::new(), hand: 0, used: 0 }),
            hits: Counter::new(),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        })
    }

    /// The pool's budget in bytes (whole frames).
    pub fn budget(&self) -> u64 {
        (self.count * PAGE_SIZE) as u64
    }

    /// Takes `bytes` of the budget (rounded up to pages) for parts of the base held in memory
    /// (promoted): the pool then fills at most the rest, and never fewer than [`MIN_FRAMES`]
    /// frames, so pool and promoted parts together stay within the budget. Lowering the limit
    /// unmaps the unpinned frames above it at once (one pinned then stays mapped until the
    /// next call); their memory, once touched, stays allocated until the pool is dropped, so
    /// a store reserves before its pool fills (`durability/promote.rs`).
    pub fn set_reserved(&self, bytes: u64) {
        let pages = usize::try_from(bytes.div_ceil(PAGE_SIZE as u64)).unwrap_or(usize::MAX);
        let limit = self.count.saturating_sub(pages).max(MIN_FRAMES).min(self.count);
        let mut t = self.table.lock();
        self.limit.store(limit, Ordering::Relaxed);
        for f in limit..t.used {
            self.retire(&mut t, f);
        }
        if t.hand >= limit {
            t.hand = 0;
        }
    }

    /// Unmaps frame `f` (above the limit) if nobody pins it.
    fn retire(&self, t: &mut Table, f: usize) {
        let m = self.meta(f);
        if t.owner[f].is_none()
            || m.pins.compare_exchange(0, EXCLUSIVE, Ordering::AcqRel, Ordering::Relaxed).is_err()
        {
            return;
        }
        m.begin_write();
        t.owner[f] = None;
        m.file.store(0, Ordering::Relaxed);
        m.end_write();
        m.pins.fetch_sub(EXCLUSIVE, Ordering::Release);
    }

    /// The bytes of the budget taken by [`BufferPool::set_reserved`] (as the limit rounds
    /// them: up to whole pages, the pool keeping at least [`MIN_FRAMES`]).
    pub fn reserved(&self) -> u64 {
        ((self.count - self.limit.load(Ordering::Relaxed)) * PAGE_SIZE) as u64
    }

    pub fn stats(&self) -> PoolStats {
        let resident = self.table.lock().owner.iter().filter(|o| o.is_some()).count() as u64;
        PoolStats {
            frames: self.count as u64,
            limit: self.limit.load(Ordering::Relaxed) as u64,
            resident,
            hits: self.hits.sum(),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }

    /// The pin count and reference bit of frame `f`.
    #[inline]
    fn meta(&self, f: usize) -> &FrameMeta {
        let chunk = self.meta[f / CHUNK_FRAMES].get_or_init(|| {
            (0..CHUNK_FRAMES)
                .map(|_| FrameMeta {
                    pins: AtomicU32::new(0),
                    referenced: AtomicBool::new(false),
                    state: AtomicU8::new(READY),
                    file: AtomicU32::new(0),
                    page: AtomicU64::new(0),
                    version: AtomicU64::new(0),
                })
                .collect()
        });
        &chunk[f % CHUNK_FRAMES]
    }

    /// Runs `f` over page `page` of `file` (as words: [`WORDS`] little-endian `u64`s), reading
    /// the page on a miss. A cached page is read optimistically, without pinning it: `f` may
    /// then see a page being replaced (torn data) and run again, so it must only compute from
    /// the words (no side effects beyond its own output, no panics on any data); its result is
    /// returned only from a run the frame's version proves consistent. Errors as [`Self::fix`].
    #[inline]
    pub fn read<R>(
        &self,
        file: &PagedFile,
        page: u64,
        mut f: impl FnMut(&[AtomicU64]) -> R,
    ) -> Result<R> {
        for _ in 0..2 {
            if let Some(r) = self.read_optimistic(file, page, &mut f) {
                self.hits.add1();
                return Ok(r);
            }
        }
        let g = self.fix(file, page)?;
        Ok(f(self.frames.words(g.frame)))
    }

    /// The optimistic hit of [`Self::read`] (invariant 5): `None` if the hint names no frame,
    /// the frame holds another page or is changing, or it changed while `f` ran.
    #[inline]
    fn read_optimistic<R>(
        &self,
        file: &PagedFile,
        page: u64,
        f: &mut impl FnMut(&[AtomicU64]) -> R,
    ) -> Option<R> {
        let hint = file.hints.get(page as usize)?.load(Ordering::Acquire);
        let fr = hint.checked_sub(1)? as usize;
        let m = self.meta(fr);
        let v = m.version.load(Ordering::Acquire);
        if v & 1 != 0
            || m.state.load(Ordering::Relaxed) != READY
            || m.file.load(Ordering::Relaxed) != file.id
            || m.page.load(Ordering::Relaxed) != page
        {
            return None;
        }
        let r = f(self.frames.words(fr));
        fence(Ordering::Acquire);
        if m.version.load(Ordering::Relaxed) != v {
            return None;
        }
        if !m.referenced.load(Ordering::Relaxed) {
            m.referenced.store(true, Ordering::Relaxed);
        }
        Some(r)
    }

    /// Pins page `page` of `file`, reading it on a miss. Errors: a bad page (`Corruption`
    /// naming file and page), a read error (`Io`), or every frame pinned (`MemoryExhausted`).
    #[inline]
    pub fn fix<'p>(&'p self, file: &PagedFile, page: u64) -> Result<PageGuard<'p>> {
        if let Some(g) = self.fix_hinted(file, page) {
            return Ok(g);
        }
        self.fix_locked(file, page)
    }

    /// The lock-free hit: pins the frame the page's hint names if it still holds the page,
    /// ready (see the module docs).
    #[inline]
    fn fix_hinted<'p>(&'p self, file: &PagedFile, page: u64) -> Option<PageGuard<'p>> {
        let hint = file.hints.get(page as usize)?.load(Ordering::Acquire);
        let f = hint.checked_sub(1)? as usize;
        let m = self.meta(f);
        let prev = m.pins.fetch_add(1, Ordering::Acquire);
        let guard = PageGuard { pool: self, frame: f };
        if prev & EXCLUSIVE == 0
            && m.file.load(Ordering::Relaxed) == file.id
            && m.page.load(Ordering::Relaxed) == page
            && m.state.load(Ordering::Acquire) == READY
        {
            if !m.referenced.load(Ordering::Relaxed) {
                m.referenced.store(true, Ordering::Relaxed);
            }
            self.hits.add1();
            return Some(guard);
        }
        None
    }

    #[inline(never)]
    fn fix_locked<'p>(&'p self, file: &PagedFile, page: u64) -> Result<PageGuard<'p>> {
        let key = (file.id, page);
        let Some(hint) = file.hints.get(page as usize) else {
            return Err(file.corrupt(page, "past the last page"));
        };
        loop {
            let mut t = self.table.lock();
            // Mapped iff the frame the hint names holds the page (see `Table`).
            let mapped = (hint.load(Ordering::Relaxed) as usize).checked_sub(1);
            if let Some(f) = mapped.filter(|f| t.owner.get(*f) == Some(&Some(key))) {
                let m = self.meta(f);
                m.pins.fetch_add(1, Ordering::Acquire);
                m.referenced.store(true, Ordering::Relaxed);
                drop(t);
                let guard = PageGuard { pool: self, frame: f };
                if self.wait_ready(m) {
                    self.hits.add1();
                    return Ok(guard);
                }
                // The read failed and the frame was unmapped: start over (and read it again).
                continue;
            }
            let f = self.victim(&mut t)?;
            if t.owner[f].replace(key).is_some() {
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
            hint.store(f as u32 + 1, Ordering::Release);
            let m = self.meta(f);
            m.state.store(LOADING, Ordering::Relaxed);
            m.file.store(file.id, Ordering::Relaxed);
            m.page.store(page, Ordering::Relaxed);
            m.referenced.store(true, Ordering::Relaxed);
            // The exclusive bit becomes the loader's pin (readers' transient pins stay counted).
            m.pins.fetch_sub(EXCLUSIVE - 1, Ordering::AcqRel);
            drop(t);
            let guard = PageGuard { pool: self, frame: f };
            // This thread is the frame's loader (invariant 2): read privately, then store the
            // words (invariant 4).
            let mut buf = [0u8; PAGE_SIZE];
            return match file.load(page, &mut buf) {
                Ok(()) => {
                    for (w, b) in self.frames.words(f).iter().zip(buf.chunks_exact(8)) {
                        let mut x = [0u8; 8];
                        x.copy_from_slice(b);
                        w.store(u64::from_ne_bytes(x), Ordering::Relaxed);
                    }
                    m.state.store(READY, Ordering::Release);
                    m.end_write();
                    self.misses.fetch_add(1, Ordering::Relaxed);
                    Ok(guard)
                }
                Err(e) => {
                    let mut t = self.table.lock();
                    m.state.store(FAILED, Ordering::Release);
                    m.end_write();
                    t.owner[f] = None;
                    drop(t);
                    Err(e)
                }
            };
        }
    }

    /// Waits while a frame the caller has pinned is `LOADING`; true once `READY`, false if
    /// its read failed.
    #[inline]
    fn wait_ready(&self, m: &FrameMeta) -> bool {
        let mut spins = 0u32;
        loop {
            match m.state.load(Ordering::Acquire) {
                READY => return true,
                LOADING => {
                    spins += 1;
                    if spins < 64 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
                _ => return false,
            }
        }
    }

    /// Clock: the first frame after the hand that is unpinned and not referenced since the
    /// hand last passed (clearing the bits it passes). Two turns find one unless all are pinned.
    fn victim(&self, t: &mut Table) -> Result<usize> {
        let take = |f: usize| {
            let m = self.meta(f);
            let won =
                m.pins.compare_exchange(0, EXCLUSIVE, Ordering::AcqRel, Ordering::Relaxed).is_ok();
            if won {
                m.begin_write();
            }
            won
        };
        let limit = self.limit.load(Ordering::Relaxed);
        if t.used < limit {
            self.frames.ensure(t.used)?;
            t.owner.push(None);
            t.used += 1;
            if take(t.used - 1) {
                return Ok(t.used - 1);
            }
        }
        // The clock turns over the frames below the limit only (those above it are retired).
        let span = limit.min(t.used);
        for _ in 0..2 * span {
            let f = t.hand % span;
            t.hand = (f + 1) % span;
            if self.meta(f).pins.load(Ordering::Acquire) != 0 {
                continue;
            }
            let second_chance =
                t.owner[f].is_some() && self.meta(f).referenced.swap(false, Ordering::Relaxed);
            if !second_chance && take(f) {
                return Ok(f);
            }
        }
        Err(Error::new(
            Status::MemoryExhausted,
            format!("all {} pages of the page cache are pinned", self.count),
        ))
    }

    /// Drops every cached page of `file` that is not pinned (its segment was replaced).
    pub fn forget(&self, file: &PagedFile) {
        let mut t = self.table.lock();
        for f in 0..t.owner.len() {
            if matches!(t.owner[f], Some((id, _)) if id == file.id)
                && self.meta(f).pins.load(Ordering::Acquire) == 0
            {
                t.owner[f] = None;
            }
        }
    }
}

/// A pinned page: its bytes stay valid and unchanged until the guard is dropped.
pub struct PageGuard<'p> {
    pool: &'p BufferPool,
    frame: usize,
}

impl PageGuard<'_> {
    /// The page's `PAGE_SIZE` bytes (readers of the columns use [`BufferPool::read`]).
    #[cfg_attr(not(test), allow(dead_code))]
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the frame is pinned by this guard, which `fix` returns only after observing
        // `READY` (invariant 3): it was filled before and is not written again while the pin
        // is held; the range lies inside the allocation (invariant 1) and the pool outlives the
        // guard.
        unsafe { std::slice::from_raw_parts(self.pool.frames.ptr(self.frame), PAGE_SIZE) }
    }
}

impl Drop for PageGuard<'_> {
    fn drop(&mut self) {
        self.pool.meta(self.frame).pins.fetch_sub(1, Ordering::Release);
    }
}

/// Half of the machine's memory (`/proc/meminfo`), or 1 GiB where that cannot be read: the
/// default page-cache budget.
pub fn default_memory_limit() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    });
    total.map_or(1 << 30, |t| t / 2)
}
