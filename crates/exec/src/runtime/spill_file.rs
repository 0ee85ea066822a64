//! Scratch files of records for the operators that move state to disk when it would pass the
//! query memory (aggregation, DISTINCT, sort): a record is a few lists of values in the
//! private byte form of [`super::spill_codec`], length-prefixed, written and read back in
//! order. [`Partitions`] splits records over [`PARTITIONS`] files by a key hash that depends
//! on the partitioning depth, so a partition that alone does not fit is split again with
//! another hash (at most [`MAX_DEPTH`] levels).

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use rustc_hash::FxHasher;

use arbor_model::{group_key, Error, Result, Status, Value};

use super::spill_codec::{encode, Reader};

/// Each scratch file's read or write buffer (all of them count against the query memory).
pub(super) const BUFFER: usize = 16 << 10;

/// Files one level of partitioning splits into: each is read back alone, so the part one
/// must hold is about this much smaller than the whole.
pub(super) const PARTITIONS: usize = 32;

/// What one level of partitioning holds in memory: its write buffers.
pub(super) const SPILL_BYTES: usize = PARTITIONS * BUFFER;

/// Levels of partitioning: a partition read back at this depth that does not fit is not split
/// again (32^4 parts of the input: only a key too big for the memory, or many rows of one key,
/// get there) and fails with the memory error.
pub(super) const MAX_DEPTH: u8 = 4;

pub(super) fn io_error(e: std::io::Error) -> Error {
    Error::internal(format!("query scratch file: {e}"))
}

/// The error of state that must move to disk but holds a value without a byte form.
pub(super) fn unspillable(what: &str) -> Error {
    Error::new(
        Status::TransactionOutOfMemory,
        format!(
            "The {what} does not fit the query memory and a value in it (a materialised node, \
             relationship or path) cannot be moved to disk"
        ),
    )
}

/// The partition of a record with key values `kv` at partitioning depth `depth`: of the
/// values' grouping keys (so `1` and `1.0` meet). Depth 0 takes the hash's high bits (the
/// in-memory tables use the low ones); a deeper level mixes the hash with its depth, so the
/// records of one partition spread over the next level's files.
pub(super) fn partition_of(kv: &[Value], depth: u8) -> usize {
    let mut h = FxHasher::default();
    for v in kv {
        group_key(v).hash(&mut h);
    }
    let h = h.finish();
    if depth == 0 {
        return (h >> 40) as usize % PARTITIONS;
    }
    // splitmix64's finaliser over the hash and the depth.
    let mut z = h ^ u64::from(depth).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as usize % PARTITIONS
}

/// One record being encoded: lists of values appended with [`Record::part`].
#[derive(Default)]
pub(super) struct Record {
    buf: Vec<u8>,
}

impl Record {
    /// Starts a new record.
    pub(super) fn clear(&mut self) {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 4]);
    }

    /// Appends a list of values; `false` when one has no byte form (the record is then
    /// unusable).
    pub(super) fn part(&mut self, vals: &[Value]) -> bool {
        let Ok(n) = u32::try_from(vals.len()) else { return false };
        self.buf.extend_from_slice(&n.to_le_bytes());
        vals.iter().all(|v| encode(v, &mut self.buf))
    }

    /// The record with its length written in front.
    fn bytes(&mut self) -> Result<&[u8]> {
        let len = u32::try_from(self.buf.len().saturating_sub(4))
            .map_err(|_| Error::internal("a spilled record over 4 GiB"))?;
        if self.buf.len() < 4 {
            return Err(Error::internal("a spilled record without its start"));
        }
        self.buf[..4].copy_from_slice(&len.to_le_bytes());
        Ok(&self.buf)
    }
}

/// Reads a list of values written by [`Record::part`] into `out` (replaced).
pub(super) fn read_part(rd: &mut Reader<'_>, out: &mut Vec<Value>) -> Result<()> {
    let n = u32::from_le_bytes([rd.byte()?, rd.byte()?, rd.byte()?, rd.byte()?]);
    out.clear();
    for _ in 0..n {
        out.push(rd.value()?);
    }
    Ok(())
}

/// Records written to one scratch file.
pub(super) struct RunWriter {
    w: BufWriter<File>,
    records: u64,
}

impl RunWriter {
    pub(super) fn new(f: File) -> RunWriter {
        RunWriter { w: BufWriter::with_capacity(BUFFER, f), records: 0 }
    }

    pub(super) fn write(&mut self, rec: &mut Record) -> Result<()> {
        self.w.write_all(rec.bytes()?).map_err(io_error)?;
        self.records += 1;
        Ok(())
    }

    pub(super) fn records(&self) -> u64 {
        self.records
    }

    /// The file flushed and rewound for reading.
    pub(super) fn finish(self) -> Result<RunReader> {
        let mut f = self.w.into_inner().map_err(|e| io_error(e.into_error()))?;
        f.seek(SeekFrom::Start(0)).map_err(io_error)?;
        Ok(RunReader { r: BufReader::with_capacity(BUFFER, f), left: self.records })
    }
}

/// The records of one scratch file, in the order they were written.
pub(super) struct RunReader {
    r: BufReader<File>,
    left: u64,
}

impl RunReader {
    /// The next record's bytes into `buf` (read them with [`Reader`] and [`read_part`]);
    /// `false` at the end.
    pub(super) fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<bool> {
        if self.left == 0 {
            return Ok(false);
        }
        self.left -= 1;
        let mut len = [0u8; 4];
        self.r.read_exact(&mut len).map_err(io_error)?;
        buf.clear();
        buf.resize(u32::from_le_bytes(len) as usize, 0);
        self.r.read_exact(buf).map_err(io_error)?;
        Ok(true)
    }
}

/// A partition read back: its records and the depth its own spill would partition at.
pub(super) struct Part {
    pub(super) run: RunReader,
    pub(super) depth: u8,
}

/// Records split over [`PARTITIONS`] scratch files by their key's hash at one depth.
pub(super) struct Partitions {
    files: Vec<RunWriter>,
    depth: u8,
}

impl Partitions {
    /// Partitions at `depth` over files from `open`; `None` if one cannot be had.
    pub(super) fn new(depth: u8, mut open: impl FnMut() -> Option<File>) -> Option<Partitions> {
        let mut files = Vec::with_capacity(PARTITIONS);
        for _ in 0..PARTITIONS {
            files.push(RunWriter::new(open()?));
        }
        Some(Partitions { files, depth })
    }

    /// Writes a record whose key values are `kv`.
    pub(super) fn write(&mut self, kv: &[Value], rec: &mut Record) -> Result<()> {
        let p = partition_of(kv, self.depth);
        match self.files.get_mut(p) {
            Some(f) => f.write(rec),
            None => Err(Error::internal("a spilled record's partition out of range")),
        }
    }

    /// Records written so far.
    pub(super) fn records(&self) -> u64 {
        self.files.iter().map(RunWriter::records).sum()
    }

    /// The partitions that hold records, to be read at the next depth.
    pub(super) fn finish(self) -> Result<Vec<Part>> {
        let depth = self.depth + 1;
        let mut parts = Vec::new();
        for w in self.files {
            if w.records() > 0 {
                parts.push(Part { run: w.finish()?, depth });
            }
        }
        Ok(parts)
    }
}

#[cfg(test)]
#[path = "spill_tests.rs"]
pub(super) mod tests;
