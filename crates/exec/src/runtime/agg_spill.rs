//! Aggregation past the query memory: the rows of groups that do not fit, in scratch files.
//!
//! When the group table would grow past what the transaction may still allocate
//! ([`crate::memory::headroom`]), the table is frozen: a later row of a group already in it
//! updates that group as before; a row of any other group is written, as its key values and
//! each aggregate's arguments ([`super::spill_codec`]), to one of [`PARTITIONS`] files chosen
//! by its grouping key's hash. Once the input ends, the table's groups are handed up, then each
//! file is read back into a fresh table and its groups handed up in turn. All rows of a group
//! meet in one table and in input order (a group is either in the frozen table from its first
//! row or spilled from its first row), so every aggregate, `collect` order included, gets what
//! it would have got in memory. A partition that alone does not fit fails with the memory
//! error (no second level of partitioning).

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use rustc_hash::FxHasher;

use arbor_model::{group_key, Error, Result, Value};

use super::spill_codec::{encode, Reader};

/// Each partition file's write buffer (all of them count against the query memory).
const BUFFER: usize = 16 << 10;

/// What spilling itself holds in memory: the partitions' write buffers.
pub(super) const SPILL_BYTES: usize = PARTITIONS * BUFFER;

/// Files a spilled aggregation is split into: each is read back alone, so the part of the
/// groups one must hold is about this much smaller than the spilled whole.
pub(super) const PARTITIONS: usize = 32;

fn io_error(e: std::io::Error) -> Error {
    Error::internal(format!("aggregation scratch file: {e}"))
}

/// The hash that picks a row's partition: of its grouping keys (so `1` and `1.0` meet).
pub(super) fn partition_of(kv: &[Value]) -> usize {
    let mut h = FxHasher::default();
    for v in kv {
        group_key(v).hash(&mut h);
    }
    // The high bits: the table's own hashing uses the low ones.
    (h.finish() >> 40) as usize % PARTITIONS
}

/// The spilled rows of one aggregation run.
pub(super) struct AggSpill {
    files: Vec<BufWriter<File>>,
    rows: Vec<u64>,
    buf: Vec<u8>,
}

impl AggSpill {
    /// A spill over `PARTITIONS` scratch files from `open`; `None` if one cannot be had.
    pub(super) fn new(mut open: impl FnMut() -> Option<File>) -> Option<AggSpill> {
        let mut files = Vec::with_capacity(PARTITIONS);
        for _ in 0..PARTITIONS {
            files.push(BufWriter::with_capacity(BUFFER, open()?));
        }
        Some(AggSpill { files, rows: vec![0; PARTITIONS], buf: Vec::new() })
    }

    /// Writes one row: its key values and each aggregate's arguments. `Ok(false)` (nothing
    /// written) when a value has no byte form.
    pub(super) fn write(&mut self, kv: &[Value], args: &[Vec<Value>]) -> Result<bool> {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 4]);
        for v in kv {
            if !encode(v, &mut self.buf) {
                return Ok(false);
            }
        }
        for a in args {
            self.buf
                .push(u8::try_from(a.len()).map_err(|_| Error::internal("too many arguments"))?);
            for v in a {
                if !encode(v, &mut self.buf) {
                    return Ok(false);
                }
            }
        }
        let len = u32::try_from(self.buf.len() - 4)
            .map_err(|_| Error::internal("a spilled aggregation row over 4 GiB"))?;
        self.buf[..4].copy_from_slice(&len.to_le_bytes());
        let p = partition_of(kv);
        self.files[p].write_all(&self.buf).map_err(io_error)?;
        self.rows[p] += 1;
        Ok(true)
    }

    /// Rows written so far.
    pub(super) fn rows(&self) -> u64 {
        self.rows.iter().sum()
    }

    /// The partitions that hold rows, flushed and rewound for reading.
    pub(super) fn finish(self) -> Result<Vec<SpillPart>> {
        let mut parts = Vec::new();
        for (w, rows) in self.files.into_iter().zip(self.rows) {
            let mut f = w.into_inner().map_err(|e| io_error(e.into_error()))?;
            if rows == 0 {
                continue;
            }
            f.seek(SeekFrom::Start(0)).map_err(io_error)?;
            parts.push(SpillPart { r: BufReader::with_capacity(BUFFER, f), left: rows });
        }
        Ok(parts)
    }
}

/// One partition's rows, read back in the order they were written.
pub(super) struct SpillPart {
    r: BufReader<File>,
    left: u64,
}

impl SpillPart {
    /// The next row into `kv` (`nkeys` values) and `args` (one vector per aggregate); `false`
    /// at the end.
    pub(super) fn next_row(
        &mut self,
        nkeys: usize,
        kv: &mut Vec<Value>,
        args: &mut [Vec<Value>],
        buf: &mut Vec<u8>,
    ) -> Result<bool> {
        if self.left == 0 {
            return Ok(false);
        }
        self.left -= 1;
        let mut len = [0u8; 4];
        self.r.read_exact(&mut len).map_err(io_error)?;
        buf.clear();
        buf.resize(u32::from_le_bytes(len) as usize, 0);
        self.r.read_exact(buf).map_err(io_error)?;
        let mut rd = Reader::new(buf);
        kv.clear();
        for _ in 0..nkeys {
            kv.push(rd.value()?);
        }
        for a in args.iter_mut() {
            a.clear();
            let n = rd.byte()?;
            for _ in 0..n {
                a.push(rd.value()?);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
#[path = "agg_spill_tests.rs"]
mod tests;
