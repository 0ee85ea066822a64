//! The base's adjacency read from its checkpoint's segment through the buffer pool
//! ([`PagedAdj`]), instead of from decoded in-memory columns: what a base opened from a
//! checkpoint with a segment reads for expand, degree and var-length (see
//! [`super::Base::attach_segment`]). A failed read (I/O, a bad checksum) is an error naming the
//! file and page, which the transaction keeps and the query reports.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use arbor_model::{Error, Result, Status};

use crate::pager::pool::BufferPool;
use crate::pager::segment::{SegColumn, Segment};

/// Entries decoded per pool round trip when reading a node's relationships: each chunk pins
/// one page per column (at most two when the chunk crosses a page boundary), never one per
/// entry.
pub(super) const CHUNK: usize = 64;

/// Calls `f(rel, other, type)` for `node`'s CSR entries of the direction whose columns are
/// `[offsets, neighbour, relationship, type]`, in CSR order. The type column is read only when
/// `read_ty` (otherwise `type` is 0).
#[inline]
pub(super) fn read_edges(
    seg: &Segment,
    pool: &BufferPool,
    [off, other, rel, ty]: [SegColumn; 4],
    node: u64,
    read_ty: bool,
    mut f: impl FnMut(u64, u64, u64),
) -> Result<()> {
    if node + 1 >= off.len() {
        return Ok(());
    }
    let mut ab = [0u64; 2];
    seg.fill(pool, off, node, &mut ab)?;
    let (a, b) = (ab[0], ab[1]);
    if a >= b {
        return Ok(());
    }
    // Most nodes have few relationships: a small buffer saves zeroing three large ones.
    if b - a <= SMALL as u64 {
        read_run::<SMALL>(seg, pool, [other, rel, ty], a, b, read_ty, &mut f)
    } else {
        read_run::<CHUNK>(seg, pool, [other, rel, ty], a, b, read_ty, &mut f)
    }
}

/// Entries per chunk for a node with at most this many relationships in the direction.
const SMALL: usize = 8;

/// [`read_edges`]'s loop over CSR entries `a..b` in chunks of `N`.
#[inline]
fn read_run<const N: usize>(
    seg: &Segment,
    pool: &BufferPool,
    [other, rel, ty]: [SegColumn; 3],
    a: u64,
    b: u64,
    read_ty: bool,
    f: &mut impl FnMut(u64, u64, u64),
) -> Result<()> {
    let (mut os, mut rs, mut ts) = ([0u64; N], [0u64; N], [0u64; N]);
    let mut p = a;
    while p < b {
        let k = ((b - p) as usize).min(N);
        seg.fill(pool, other, p, &mut os[..k])?;
        seg.fill(pool, rel, p, &mut rs[..k])?;
        if read_ty {
            seg.fill(pool, ty, p, &mut ts[..k])?;
        }
        for i in 0..k {
            f(rs[i], os[i], ts[i]);
        }
        p += k as u64;
    }
    Ok(())
}

/// A base's adjacency in a segment: the segment, the pool it is read through, and its CSR
/// columns per direction.
pub(crate) struct PagedAdj {
    seg: Arc<Segment>,
    pool: Arc<BufferPool>,
    out: [SegColumn; 4],
    inc: [SegColumn; 4],
}

impl PagedAdj {
    /// Looks up the CSR columns of `seg` (ids in [`super::segments`]) and checks that their
    /// lengths are those of a base with `node_end` node slots and `rels` relationships.
    pub fn new(
        seg: Arc<Segment>,
        pool: Arc<BufferPool>,
        (out, inc): ([u8; 4], [u8; 4]),
        node_end: u64,
        rels: u64,
    ) -> Result<PagedAdj> {
        let bad = |what: String| {
            Error::new(
                Status::Corruption,
                format!(
                    "segment file {} does not match its checkpoint: {what}",
                    seg.path().display()
                ),
            )
        };
        let cols = |ids: [u8; 4]| -> Result<[SegColumn; 4]> {
            let col = |id: u8| seg.column(id).ok_or_else(|| bad(format!("no column {id}")));
            let c = [col(ids[0])?, col(ids[1])?, col(ids[2])?, col(ids[3])?];
            if c[0].len() != node_end + 1 {
                return Err(bad(format!("{} offsets for {node_end} node slots", c[0].len())));
            }
            if c[1..].iter().any(|x| x.len() != rels) {
                return Err(bad(format!("an adjacency column is not {rels} entries long")));
            }
            Ok(c)
        };
        let (out, inc) = (cols(out)?, cols(inc)?);
        Ok(PagedAdj { seg, pool, out, inc })
    }

    /// Calls `f(rel, other, type)` for the node's relationships in one direction (see
    /// [`read_edges`]).
    #[inline]
    pub fn edges(
        &self,
        node: u64,
        out: bool,
        read_ty: bool,
        f: impl FnMut(u64, u64, u64),
    ) -> Result<()> {
        let cols = if out { self.out } else { self.inc };
        read_edges(&self.seg, &self.pool, cols, node, read_ty, f)
    }
}

/// A base's forward CSR columns other than the relationship ids (offsets, neighbour, type)
/// and its relationship-id positions, in its segment: read through the pool, a value at a
/// time, by relationship lookups (`Base::rel`, a relationship's end and type, the owner
/// search) once the adjacency is paged, instead of held in memory (O(relationships)).
pub(crate) struct PagedFwd {
    seg: Arc<Segment>,
    pool: Arc<BufferPool>,
    pub(super) off: SegColumn,
    pub(super) other: SegColumn,
    pub(super) ty: SegColumn,
    pub(super) pos: SegColumn,
}

impl PagedFwd {
    /// Looks up columns `[offsets, neighbour, type, positions]` of `seg` and checks their
    /// lengths against a base of `node_end` node slots and `rels` relationships (`None`: a
    /// segment without positions, written before complete segments).
    pub fn new(
        seg: Arc<Segment>,
        pool: Arc<BufferPool>,
        ids: [u8; 4],
        node_end: u64,
        rels: u64,
    ) -> Result<Option<PagedFwd>> {
        let Some(pos) = seg.column(ids[3]) else { return Ok(None) };
        let cols = ids.map(|id| seg.column(id));
        let [Some(off), Some(other), Some(ty), _] = cols else {
            return Err(Error::new(
                Status::Corruption,
                format!("segment file {} has no forward columns", seg.path().display()),
            ));
        };
        if off.len() != node_end + 1 || other.len() != rels || ty.len() != rels {
            return Err(Error::new(
                Status::Corruption,
                format!(
                    "segment file {} does not match its base: forward columns of {}, {} and \
                     {} entries for {node_end} node slots and {rels} relationships",
                    seg.path().display(),
                    off.len(),
                    other.len(),
                    ty.len()
                ),
            ));
        }
        Ok(Some(PagedFwd { seg, pool, off, other, ty, pos }))
    }

    /// Value `i` of column `col` (one of this struct's).
    #[inline]
    pub fn get(&self, col: SegColumn, i: u64) -> Result<u64> {
        self.seg.get(&self.pool, col, i)
    }
}

/// One entity kind's property blobs in a segment (offsets per entity and the byte arena),
/// read through the buffer pool instead of from the in-memory [`super::props::PropCol`].
pub(crate) struct PagedProps {
    seg: Arc<Segment>,
    pool: Arc<BufferPool>,
    off: SegColumn,
    arena: SegColumn,
}

impl PagedProps {
    /// Looks up columns `[offsets, arena]` of `seg` and checks them against a base whose
    /// offsets column has `offsets` entries and whose arena holds `bytes` bytes (`None`: the
    /// segment has no such columns, as one written before properties moved into segments).
    pub fn new(
        seg: Arc<Segment>,
        pool: Arc<BufferPool>,
        [off, arena]: [u8; 2],
        offsets: u64,
        bytes: u64,
    ) -> Result<Option<PagedProps>> {
        let (Some(off), Some(arena)) = (seg.column(off), seg.column(arena)) else {
            return Ok(None);
        };
        if arena.len() != bytes || off.len() != offsets {
            return Err(Error::new(
                Status::Corruption,
                format!(
                    "segment file {} does not match its checkpoint: property columns of {} \
                     offsets and {} bytes, the base has {offsets} and {bytes}",
                    seg.path().display(),
                    off.len(),
                    arena.len()
                ),
            ));
        }
        Ok(Some(PagedProps { seg, pool, off, arena }))
    }

    /// Replaces `buf` with the property blob of entity `i` (see [`read_blob`]).
    #[inline]
    pub fn blob_into(&self, i: u64, buf: &mut Vec<u8>) -> Result<()> {
        read_blob(&self.seg, &self.pool, [self.off, self.arena], i, buf)
    }
}

/// Replaces `buf` with the property blob of entity `i` in the columns `[offsets, arena]` of
/// `seg` (empty past the end): the two offsets in one pool read, then the bytes, a page at a
/// time. Offsets outside the arena are `Corruption`.
pub(super) fn read_blob(
    seg: &Segment,
    pool: &BufferPool,
    [off, arena]: [SegColumn; 2],
    i: u64,
    buf: &mut Vec<u8>,
) -> Result<()> {
    buf.clear();
    if i + 1 >= off.len() {
        return Ok(());
    }
    let mut ab = [0u64; 2];
    seg.fill(pool, off, i, &mut ab)?;
    let (a, b) = (ab[0], ab[1]);
    if a > b || b > arena.len() {
        return Err(Error::new(
            Status::Corruption,
            format!(
                "segment file {} is corrupt: property offsets {a}..{b} of entity {i} outside \
                 its {} bytes",
                seg.path().display(),
                arena.len()
            ),
        ));
    }
    buf.resize((b - a) as usize, 0);
    seg.read_bytes(pool, arena, a, buf)
}

/// Failed reads of a base's paged label bitsets: their scans answer through `Option`s (the
/// next labelled node), so a failure is kept here, shared by every bitset of the base, and
/// reported like the base's own failed reads ([`super::Base::failure_since`]).
#[derive(Default)]
pub(crate) struct FailNote {
    first: OnceLock<Error>,
    count: AtomicU64,
}

impl FailNote {
    #[cold]
    fn note(&self, e: Error) {
        tracing::error!("{}", e.message);
        let _ = self.first.set(e);
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    /// How many reads failed so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// The first failed read, if any.
    pub fn first(&self) -> Option<&Error> {
        self.first.get()
    }
}

/// A base's node label codes (one per node slot) and label bitset words in its segment, read
/// through the buffer pool instead of held in memory (O(nodes)); the label-set dictionary
/// they index stays in memory (one entry per distinct label combination).
pub(crate) struct PagedNodes {
    seg: Arc<Segment>,
    pool: Arc<BufferPool>,
    codes: SegColumn,
    pub(super) note: Arc<FailNote>,
}

impl PagedNodes {
    /// Looks up label-code column `code` of `seg` and checks it has `node_end` entries.
    pub fn new(
        seg: Arc<Segment>,
        pool: Arc<BufferPool>,
        code: u8,
        node_end: u64,
    ) -> Result<PagedNodes> {
        let codes = seg.column(code).filter(|c| c.len() == node_end).ok_or_else(|| {
            Error::new(
                Status::Corruption,
                format!(
                    "segment file {} does not match its base: no label codes for {node_end} \
                     node slots",
                    seg.path().display()
                ),
            )
        })?;
        Ok(PagedNodes { seg, pool, codes, note: Arc::default() })
    }

    /// The label code of node slot `id` (0 past the end).
    #[inline]
    pub fn code(&self, id: u64) -> Result<u64> {
        self.seg.get(&self.pool, self.codes, id)
    }

    /// The label codes of slots `from..from + dst.len()` (0 past the end).
    pub fn codes(&self, from: u64, dst: &mut [u64]) -> Result<()> {
        self.seg.fill(&self.pool, self.codes, from, dst)
    }

    /// Words `from..from + n` of bitset-words column `col`, as one label's bitset (`None`:
    /// past the column's end).
    pub fn words(&self, col: SegColumn, from: u64, n: u64) -> Option<PagedWords> {
        (from.checked_add(n)? <= col.len()).then(|| PagedWords {
            seg: self.seg.clone(),
            pool: self.pool.clone(),
            col,
            from,
            n,
            note: self.note.clone(),
        })
    }
}

/// Words read per pool round trip by a paged bitset scan.
const WORDS: usize = 64;

/// One label's bitset in its segment ([`PagedNodes::words`]): scans read it through the pool a
/// chunk of words at a time. A failed read is noted in the base's [`FailNote`] and ends the
/// scan.
pub(crate) struct PagedWords {
    seg: Arc<Segment>,
    pool: Arc<BufferPool>,
    col: SegColumn,
    from: u64,
    n: u64,
    note: Arc<FailNote>,
}

impl PagedWords {
    /// Words `w..w + dst.len()` into `dst`; `false` (noted) when a page fails to read.
    fn fill(&self, w: u64, dst: &mut [u64]) -> bool {
        match self.seg.fill(&self.pool, self.col, self.from + w, dst) {
            Ok(()) => true,
            Err(e) => {
                self.note.note(e);
                false
            }
        }
    }

    /// Every word, a failed read returned (the checkpoint copies them, `arbor check` reads them).
    pub fn all(&self) -> Result<Vec<u64>> {
        let mut v = vec![0; self.n as usize];
        self.seg.fill(&self.pool, self.col, self.from, &mut v)?;
        Ok(v)
    }

    /// Calls `f(word index, word)` for words from `w` on, a chunk at a time, until it returns
    /// `false`, the words end, or a read fails.
    #[inline]
    pub fn scan(&self, mut w: u64, mut f: impl FnMut(u64, u64) -> bool) {
        let mut buf = [0u64; WORDS];
        while w < self.n {
            let k = ((self.n - w) as usize).min(WORDS);
            if !self.fill(w, &mut buf[..k]) {
                return;
            }
            for (i, word) in buf[..k].iter().enumerate() {
                if !f(w + i as u64, *word) {
                    return;
                }
            }
            w += k as u64;
        }
    }
}
