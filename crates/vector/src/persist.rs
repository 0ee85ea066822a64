//! The index file: a checksummed header, a checksummed body, all little-endian.
//!
//! ```text
//! header  "ARBORVEC" | format u32 | body_len u64 | crc32c(previous 20 bytes) u32
//! body    dims u32 | similarity u8 | m u32 | ef_construction u32 | ef_search u32 | seed u64
//!         n u64 | sorted_len u64 | ids n×u64 | created n×u64 | levels n×u8
//!         layer-0 counts n×u8 | layer-0 links n×2m×u32 | upper_len u64 | upper upper_len×u32
//!         deleted_len u64 | (slot u32, ts u64)×deleted_len | tuned_ef u64 | tuned_at u64
//!         parts u8 (1: vectors, 2: codes)
//!         [codes: lo dims×f32 | step dims×f32 | codes n×dims×u8 | norms n×f32]
//!         [vectors: n×dims×f32]
//! trailer crc32c(body) u32
//! ```
//!
//! The index is saved rather than rebuilt because a rebuild costs a full HNSW build (about a
//! minute per million vectors on two cores) at every open; the file is about the size of the
//! index in memory. Reading checks every length against the body size before allocating and
//! every link against the node count, so a damaged file gives [`VectorError::Corrupt`] naming
//! the section, never a panic or an unbounded allocation.

use std::io::{Read, Write};

use rustc_hash::FxHashMap;

use crate::codes::Codebook;
use crate::distance::Similarity;
use crate::error::{corrupt, Result, VectorError};
use crate::graph::Graph;
use crate::index::{IndexConfig, VectorIndex, MAX_DIMENSIONS};

const MAGIC: &[u8; 8] = b"ARBORVEC";
/// Format 2 added the codes (a format-1 file is refused, and the engine rebuilds).
const FORMAT: u32 = 2;
/// Bytes per read while filling an array, so a claimed length never allocates ahead of data.
const CHUNK: usize = 1 << 20;

struct CrcWriter<'w, W: Write> {
    inner: &'w mut W,
    crc: u32,
    len: u64,
}

impl<W: Write> CrcWriter<'_, W> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.len += bytes.len() as u64;
        self.inner.write_all(bytes)?;
        Ok(())
    }

    fn u32s(&mut self, words: impl Iterator<Item = u32>) -> Result<()> {
        let mut buf = Vec::with_capacity(CHUNK);
        for w in words {
            buf.extend_from_slice(&w.to_le_bytes());
            if buf.len() >= CHUNK {
                self.put(&buf)?;
                buf.clear();
            }
        }
        self.put(&buf)
    }

    fn u64s(&mut self, words: &[u64]) -> Result<()> {
        for chunk in words.chunks(CHUNK / 8) {
            let bytes: Vec<u8> = chunk.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.put(&bytes)?;
        }
        Ok(())
    }
}

impl VectorIndex {
    /// Writes the index; see the module docs for the layout.
    pub fn write_to(&self, w: &mut impl Write) -> Result<()> {
        let (levels, counts, links0, upper) = self.graph.export();
        let n = self.len() as u64;
        let deleted: Vec<(u32, u64)> = {
            let mut d: Vec<_> = self.deleted.iter().map(|(&s, &t)| (s, t)).collect();
            d.sort_unstable();
            d
        };
        let body_len = 25
            + 16
            + n * 18
            + links0.len() as u64 * 4
            + 8
            + upper.len() as u64 * 4
            + 8
            + deleted.len() as u64 * 12
            + 16
            + 1
            + self.book.as_ref().map_or(0, |_| c_len(self.config.dims, n))
            + self.data.len() as u64 * 4;
        let mut header = Vec::with_capacity(24);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&FORMAT.to_le_bytes());
        header.extend_from_slice(&body_len.to_le_bytes());
        header.extend_from_slice(&crc32c::crc32c(&header).to_le_bytes());
        w.write_all(&header)?;
        let c = &self.config;
        let mut body = CrcWriter { inner: w, crc: 0, len: 0 };
        body.put(&(c.dims as u32).to_le_bytes())?;
        body.put(&[match c.similarity {
            Similarity::Cosine => 0,
            Similarity::Euclidean => 1,
        }])?;
        for v in [c.m, c.ef_construction, c.ef_search] {
            body.put(&(v as u32).to_le_bytes())?;
        }
        body.put(&c.seed.to_le_bytes())?;
        body.u64s(&[n, self.sorted_len as u64])?;
        body.u64s(&self.ids)?;
        body.u64s(&self.created)?;
        body.put(levels)?;
        body.put(&counts)?;
        body.u32s(links0.into_iter())?;
        body.u64s(&[upper.len() as u64])?;
        body.u32s(upper.into_iter())?;
        body.u64s(&[deleted.len() as u64])?;
        for (slot, ts) in deleted {
            body.put(&slot.to_le_bytes())?;
            body.put(&ts.to_le_bytes())?;
        }
        body.u64s(&[self.tuned_ef as u64, self.tuned_at as u64])?;
        let has_vectors = !self.data.is_empty() || n == 0;
        body.put(&[u8::from(has_vectors) | (u8::from(self.book.is_some()) << 1)])?;
        if let Some(book) = &self.book {
            body.u32s(book.lo.iter().chain(&book.step).map(|f| f.to_bits()))?;
            body.put(&self.codes)?;
            body.u32s(self.norms.iter().map(|f| f.to_bits()))?;
        }
        body.u32s(self.data.iter().map(|f| f.to_bits()))?;
        let (crc, len) = (body.crc, body.len);
        if len != body_len {
            return Err(VectorError::Io(std::io::Error::other(format!(
                "vector index writer produced {len} body bytes, expected {body_len}"
            ))));
        }
        w.write_all(&crc.to_le_bytes())?;
        Ok(())
    }

    /// Reads an index written by [`VectorIndex::write_to`].
    pub fn read_from(r: &mut impl Read) -> Result<VectorIndex> {
        let mut header = [0u8; 24];
        read_exact(r, &mut header, "header")?;
        if &header[..8] != MAGIC {
            return Err(corrupt("header: not a vector index file (bad magic)"));
        }
        let stored = u32::from_le_bytes(header[20..24].try_into().expect("4 bytes"));
        if crc32c::crc32c(&header[..20]) != stored {
            return Err(corrupt("header: checksum mismatch"));
        }
        let format = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes"));
        if format != FORMAT {
            return Err(corrupt(format!("header: format {format}, this build reads {FORMAT}")));
        }
        let body_len = u64::from_le_bytes(header[12..20].try_into().expect("8 bytes"));
        let mut body = Body { inner: r, crc: 0, left: body_len };
        let index = read_body(&mut body)?;
        if body.left != 0 {
            return Err(corrupt(format!("body: {} bytes left over", body.left)));
        }
        let body_crc = body.crc;
        let mut trailer = [0u8; 4];
        read_exact(r, &mut trailer, "trailer")?;
        if u32::from_le_bytes(trailer) != body_crc {
            return Err(corrupt("body: checksum mismatch"));
        }
        Ok(index)
    }
}

/// Bytes of the codes section for `n` entries of `dims` dimensions.
fn c_len(dims: usize, n: u64) -> u64 {
    8 * dims as u64 + n * dims as u64 + 4 * n
}

fn read_exact(r: &mut impl Read, buf: &mut [u8], what: &str) -> Result<()> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => corrupt(format!("{what}: file is truncated")),
        _ => VectorError::Io(e),
    })
}

/// The body being read: counts what is left and checksums what was read.
struct Body<'r, R: Read> {
    inner: &'r mut R,
    crc: u32,
    left: u64,
}

impl<R: Read> Body<'_, R> {
    fn bytes(&mut self, len: u64, what: &str) -> Result<Vec<u8>> {
        if len > self.left {
            return Err(corrupt(format!("{what}: longer than the body")));
        }
        let mut out = Vec::new();
        let mut todo = len as usize;
        while todo > 0 {
            let step = todo.min(CHUNK);
            let at = out.len();
            out.resize(at + step, 0);
            read_exact(self.inner, &mut out[at..], what)?;
            todo -= step;
        }
        self.crc = crc32c::crc32c_append(self.crc, &out);
        self.left -= len;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, count: u64, what: &str) -> Result<Vec<[u8; N]>> {
        let len = count
            .checked_mul(N as u64)
            .ok_or_else(|| corrupt(format!("{what}: length overflows")))?;
        let raw = self.bytes(len, what)?;
        Ok(raw.chunks_exact(N).map(|c| c.try_into().expect("chunks_exact")).collect())
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array::<4>(1, what)?[0]))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array::<8>(1, what)?[0]))
    }

    fn u64s(&mut self, count: u64, what: &str) -> Result<Vec<u64>> {
        Ok(self.array::<8>(count, what)?.into_iter().map(u64::from_le_bytes).collect())
    }

    fn u32s(&mut self, count: u64, what: &str) -> Result<Vec<u32>> {
        Ok(self.array::<4>(count, what)?.into_iter().map(u32::from_le_bytes).collect())
    }
}

fn read_config<R: Read>(b: &mut Body<'_, R>) -> Result<IndexConfig> {
    let dims = b.u32("config")? as usize;
    let similarity = match b.bytes(1, "config")?[0] {
        0 => Similarity::Cosine,
        1 => Similarity::Euclidean,
        other => return Err(corrupt(format!("config: unknown similarity {other}"))),
    };
    let m = b.u32("config")? as usize;
    let ef_construction = b.u32("config")? as usize;
    let ef_search = b.u32("config")? as usize;
    let seed = b.u64("config")?;
    if dims == 0 || dims > MAX_DIMENSIONS || !(2..=127).contains(&m) {
        return Err(corrupt(format!("config: dims {dims} or m {m} out of range")));
    }
    if ef_construction == 0 || ef_search == 0 {
        return Err(corrupt("config: ef is zero"));
    }
    let mut config = IndexConfig::new(dims, similarity);
    config.m = m;
    config.ef_construction = ef_construction;
    config.ef_search = ef_search;
    config.seed = seed;
    Ok(config)
}

fn read_body<R: Read>(b: &mut Body<'_, R>) -> Result<VectorIndex> {
    let config = read_config(b)?;
    let (dims, m) = (config.dims as u64, config.m);
    let n = b.u64("counts")?;
    let sorted_len = b.u64("counts")?;
    if n >= u64::from(u32::MAX) || sorted_len > n {
        return Err(corrupt(format!("counts: {n} entries, {sorted_len} sorted")));
    }
    let ids = b.u64s(n, "ids")?;
    if ids[..sorted_len as usize].windows(2).any(|w| w[0] > w[1]) {
        return Err(corrupt("ids: sorted prefix is out of order"));
    }
    let created = b.u64s(n, "versions")?;
    let levels = b.bytes(n, "levels")?;
    let counts = b.bytes(n, "layer-0 counts")?;
    let m0 = crate::index::layer0_degree(m);
    let links0 = b.u32s(n * m0 as u64, "layer-0 links")?;
    let upper_len = b.u64("upper links")?;
    let upper = b.u32s(upper_len, "upper links")?;
    let graph = Graph::import(m, m0, levels, counts, links0, upper)
        .map_err(|e| corrupt(format!("graph: {e}")))?;
    let deleted_len = b.u64("deletions")?;
    if deleted_len > n {
        return Err(corrupt("deletions: more than entries"));
    }
    let mut deleted = FxHashMap::default();
    for _ in 0..deleted_len {
        let slot = b.u32("deletions")?;
        let ts = b.u64("deletions")?;
        if u64::from(slot) >= n || deleted.insert(slot, ts).is_some() {
            return Err(corrupt(format!("deletions: bad slot {slot}")));
        }
    }
    let tuned_ef = b.u64("tuned ef")?;
    let tuned_at = b.u64("tuned ef")?;
    if tuned_ef > 1 << 20 || tuned_at > n {
        return Err(corrupt(format!("tuned ef: {tuned_ef} at {tuned_at} entries")));
    }
    let parts = b.bytes(1, "parts")?[0];
    if parts & !3 != 0 || parts & 3 == 0 && n > 0 {
        return Err(corrupt(format!("parts: unknown flags {parts}")));
    }
    let codes = if parts & 2 != 0 {
        let floats = |b: &mut Body<'_, R>, count: u64, what: &str| -> Result<Vec<f32>> {
            let v: Vec<f32> = b.u32s(count, what)?.into_iter().map(f32::from_bits).collect();
            if v.iter().any(|x| !x.is_finite()) {
                return Err(corrupt(format!("{what}: a value is not finite")));
            }
            Ok(v)
        };
        let scale = floats(b, 2 * dims, "codebook")?;
        let (lo, step) = scale.split_at(dims as usize);
        if step.iter().any(|&s| s <= 0.0) {
            return Err(corrupt("codebook: a step is not positive"));
        }
        let book = Codebook { lo: lo.to_vec(), step: step.to_vec() };
        let codes = b.bytes(n * dims, "codes")?;
        let norms = floats(b, n, "code norms")?;
        Some((book, codes, norms))
    } else {
        None
    };
    let mut config = config;
    let data: Vec<f32> = if parts & 1 != 0 {
        b.u32s(n * dims, "vectors")?.into_iter().map(f32::from_bits).collect()
    } else {
        config.keep_vectors = false;
        Vec::new()
    };
    if let Some(at) = data.iter().position(|x| !x.is_finite()) {
        return Err(corrupt(format!("vectors: slot {} is not finite", at as u64 / dims)));
    }
    let mut index = VectorIndex::from_parts(
        config,
        graph,
        data,
        codes,
        ids,
        created,
        deleted,
        sorted_len as usize,
    );
    (index.tuned_ef, index.tuned_at) = (tuned_ef as usize, tuned_at as usize);
    Ok(index)
}
