//! Aggregation past the query memory: the rows of groups that do not fit, in scratch files.
//!
//! When the group table would grow past what the transaction may still allocate
//! ([`crate::memory::headroom`]), the table is frozen: a later row of a group already in it
//! updates that group as before; a row of any other group is written, as its key values and
//! each aggregate's arguments, to one of the [`Partitions`] chosen by its grouping key's hash.
//! Once the input ends, the table's groups are handed up, then each partition is read back
//! into a fresh table and its groups handed up in turn; a partition's table that does not fit
//! freezes and spills the same way, one level deeper with another hash (see `spill_file`).
//! All rows of a group meet in one table and in input order (a group is either in a frozen
//! table from its first row there or spilled from it), so every aggregate, `collect` order
//! included, gets what it would have got in memory. One group too big for the memory (or
//! too many at the deepest level) fails with the memory error.

use std::fs::File;

use arbor_model::{Result, Value};

use super::spill_codec::Reader;
use super::spill_file::{read_part, Part, Partitions, Record};

/// The spilled rows of one aggregation run (one table).
pub(super) struct AggSpill {
    parts: Partitions,
    rec: Record,
}

impl AggSpill {
    /// A spill at partitioning `depth` over scratch files from `open`; `None` if one cannot be
    /// had.
    pub(super) fn new(depth: u8, open: impl FnMut() -> Option<File>) -> Option<AggSpill> {
        Some(AggSpill { parts: Partitions::new(depth, open)?, rec: Record::default() })
    }

    /// Writes one row: its key values and each aggregate's arguments. `Ok(false)` (nothing
    /// written) when a value has no byte form.
    pub(super) fn write(&mut self, kv: &[Value], args: &[Vec<Value>]) -> Result<bool> {
        self.rec.clear();
        if !self.rec.part(kv) || !args.iter().all(|a| self.rec.part(a)) {
            return Ok(false);
        }
        self.parts.write(kv, &mut self.rec)?;
        Ok(true)
    }

    /// Rows written so far.
    pub(super) fn rows(&self) -> u64 {
        self.parts.records()
    }

    /// The partitions that hold rows, flushed and rewound for reading.
    pub(super) fn finish(self) -> Result<Vec<SpillPart>> {
        Ok(self.parts.finish()?.into_iter().map(|p| SpillPart { p }).collect())
    }
}

/// One partition's rows, read back in the order they were written.
pub(super) struct SpillPart {
    p: Part,
}

impl SpillPart {
    /// The depth a table of this partition spills at.
    pub(super) fn depth(&self) -> u8 {
        self.p.depth
    }

    /// The next row into `kv` and `args` (one vector per aggregate); `false` at the end.
    pub(super) fn next_row(
        &mut self,
        kv: &mut Vec<Value>,
        args: &mut [Vec<Value>],
        buf: &mut Vec<u8>,
    ) -> Result<bool> {
        if !self.p.run.next_into(buf)? {
            return Ok(false);
        }
        let mut rd = Reader::new(buf);
        read_part(&mut rd, kv)?;
        for a in args.iter_mut() {
            read_part(&mut rd, a)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
#[path = "agg_spill_tests.rs"]
mod tests;
