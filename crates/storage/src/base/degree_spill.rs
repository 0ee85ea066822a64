//! The degree counts and CSR offset columns of a bulk build kept out of memory (segment
//! columns 2 and 6, the forward and incoming offsets): without this, out- and in-degree counts
//! are held while relationships are fed and become the two offset columns (4 + 4 bytes per
//! node, 3.7 GB for B2B scale 1.0), whole until the segment is written.
//!
//! Enabled with the forward columns' spill (`BaseBuilder::spill_forward`), for relationships
//! fed in start-node order: the out-degree of a start node is complete when the next start
//! node comes, so [`DegreeSpill`] writes it then (4 bytes per node, to a scratch file, in
//! chunks) and holds one count. In-degrees are not counted while feeding (end nodes come in
//! any order): [`DegreeSpill::finish`] counts them in windows of end nodes, each window one
//! scan of the forward neighbours, into a second scratch file. Both files hold lengths behind a
//! leading 0, so their running sums are the offset columns ([`SpilledOffsets`]), which the
//! segment writer, the incoming windows (`backward.rs`) and the count store read in order
//! ([`OffReader`]). A builder whose relationships leave start order, or reach `u32::MAX`
//! (past which the counts in memory check each node's), reads the counts back and goes on in
//! memory ([`DegreeSpill::into_counts`]). The columns have the width the counts built in
//! memory get: 4 bytes, 8 past `u32::MAX` relationships (`Wide::prefix_inclusive`).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::columns::{PackedView, Wide};
use super::fwd_spill::{ColReader, ColSpill, FwdSource, Placed};
use super::graph::Base;
use super::node_cols::SpilledOffsets;
use super::segments::{IN, OUT};
use crate::pager::segment::{ColumnData, Sink};
use crate::vfs::Vfs;

/// The out-degrees of a build fed in start order, written as each start node completes.
pub(super) struct DegreeSpill {
    /// `0`, then one out-degree per node written so far.
    out: ColSpill,
    /// The start node being counted and its count.
    open: Option<(u64, u64)>,
    vfs: Arc<dyn Vfs>,
    in_path: PathBuf,
    chunk: usize,
}

impl DegreeSpill {
    /// Out-degrees to a new scratch file at `out_path`, in-degrees (at the end) to `in_path`,
    /// `chunk` bytes at a time.
    pub(super) fn create(
        vfs: Arc<dyn Vfs>,
        out_path: PathBuf,
        in_path: PathBuf,
        chunk: usize,
    ) -> io::Result<DegreeSpill> {
        let mut out = ColSpill::create(vfs.clone(), out_path, 4, chunk)?;
        out.push(0);
        Ok(DegreeSpill { out, open: None, vfs, in_path, chunk })
    }

    /// Counts a relationship of `start`, which is not below the previous one's; `false` (not
    /// counted) when the node's count would pass `u32::MAX`, as the counts in memory refuse it.
    pub(super) fn add(&mut self, start: u64) -> bool {
        match &mut self.open {
            Some((s, c)) if *s == start => {
                if *c >= u64::from(u32::MAX) {
                    return false;
                }
                *c += 1;
            }
            _ => {
                self.close_to(start);
                self.open = Some((start, 1));
            }
        }
        true
    }

    /// Nodes whose out-degree is written.
    fn written(&self) -> u64 {
        self.out.len() - 1
    }

    /// Writes the out-degrees of the nodes before `node`: the open count, 0 for the others.
    fn close_to(&mut self, node: u64) {
        if let Some((s, c)) = self.open.take() {
            while self.written() < s {
                self.out.push(0);
            }
            self.out.push(c);
        }
        while self.written() < node {
            self.out.push(0);
        }
    }

    /// The write error of the scratch file, if any.
    pub(super) fn error(&self) -> Option<(&Path, &io::Error)> {
        self.out.error()
    }

    /// The out- and in-degree counts in memory, as the builder holds them without a spill
    /// (`nodes + 1` entries): the out-degrees read back (the file is removed), the in-degrees
    /// counted from `ends`, the end nodes fed so far.
    pub(super) fn into_counts(
        mut self,
        nodes: usize,
        ends: impl Iterator<Item = u64>,
    ) -> io::Result<(Wide, Wide)> {
        let open = self.open.take();
        let mut out = Wide::new(nodes + 1, 0, u64::from(u32::MAX));
        for (i, d) in self.out.read_all()?.into_iter().enumerate().skip(1) {
            out.set(i - 1, d);
        }
        if let Some((s, c)) = open {
            out.set(s as usize, c);
        }
        let mut inc = Wide::new(nodes + 1, 0, u64::from(u32::MAX));
        for e in ends {
            inc.set(e as usize, inc.get(e as usize) + 1);
        }
        Ok((out, inc))
    }

    /// Closes the out-degrees at `nodes` and counts the in-degrees, end nodes `window` at a
    /// time (8 bytes each), each window one pass over the forward neighbours that `ends` opens.
    /// A failure is kept in the result and returned when the columns are read.
    pub(super) fn finish<'a>(
        mut self,
        nodes: u64,
        rel_count: u64,
        window: usize,
        ends: &dyn Fn() -> io::Result<FwdSource<'a>>,
    ) -> CsrOffsets {
        self.close_to(nodes);
        let width = if rel_count > u64::from(u32::MAX) { 8 } else { 4 };
        let out = SpilledOffsets::new(self.out.close(), width, OUT[0]);
        let mut passes = 0;
        let inc = (|| -> io::Result<SpilledOffsets> {
            let mut inc = ColSpill::create(self.vfs.clone(), self.in_path.clone(), 4, self.chunk)?;
            inc.push(0);
            let window = window.max(1) as u64;
            let (mut counts, mut block) = (Vec::new(), Vec::new());
            let mut lo = 0u64;
            while lo < nodes {
                let hi = lo.saturating_add(window).min(nodes);
                counts.clear();
                counts.resize((hi - lo) as usize, 0u64);
                let mut src = ends()?;
                while src.fill(&mut block)? > 0 {
                    for e in &block {
                        if let Some(c) = e.checked_sub(lo).and_then(|i| counts.get_mut(i as usize))
                        {
                            *c += 1;
                        }
                    }
                }
                passes += 1;
                for c in &counts {
                    inc.push(*c);
                }
                lo = hi;
            }
            Ok(SpilledOffsets::new(inc.close(), width, IN[0]))
        })();
        CsrOffsets { out, inc, width, len: nodes as usize + 1, passes }
    }
}

/// The two CSR offset columns in scratch files (`0` and the degrees, summed as read).
pub(crate) struct CsrOffsets {
    out: SpilledOffsets,
    /// The incoming offsets, or what struck while counting them.
    inc: io::Result<SpilledOffsets>,
    /// Bytes per offset in the segment, and offsets per column (nodes + 1).
    width: usize,
    len: usize,
    /// Scans of the forward neighbours that counted the in-degrees.
    pub(crate) passes: u64,
}

impl CsrOffsets {
    fn inc(&self) -> io::Result<&SpilledOffsets> {
        self.inc.as_ref().map_err(|e| io::Error::new(e.kind(), e.to_string()))
    }

    /// The heap bytes the two columns would take in memory (the base's statistics).
    pub(super) fn bytes(&self) -> u64 {
        2 * (self.len * self.width) as u64
    }

    /// The segment columns produced here, to put in place of the base's.
    pub(crate) fn columns(&self) -> Vec<(u8, ColumnData<'static>)> {
        let (width, len) = (self.width, self.len);
        [OUT[0], IN[0]].map(|id| (id, ColumnData::Stream { width, len })).to_vec()
    }

    /// Whether column `id` is produced here.
    pub(crate) fn has(&self, id: u8) -> bool {
        id == OUT[0] || id == IN[0]
    }

    /// Column `id` (produced here) is written to the segment at `at`: the offsets are read
    /// there from now on and the degree file goes.
    pub(crate) fn place(mut self, id: u8, at: Placed) -> CsrOffsets {
        if id == OUT[0] {
            self.out = self.out.placed(at);
        } else if id == IN[0] {
            self.inc = self.inc.map(|s| s.placed(at));
        }
        self
    }

    /// Gives column `id`'s values to `emit`, in order, a block at a time.
    pub(crate) fn produce(&self, id: u8, emit: &mut Sink<'_>) -> io::Result<()> {
        match id {
            x if x == OUT[0] => self.out.produce(emit),
            x if x == IN[0] => self.inc()?.produce(emit),
            _ => Err(io::Error::other(format!("segment column {id} is not streamed"))),
        }
    }
}

/// A CSR offset column read at ascending positions: from the base's column, or summed from
/// its scratch file a block at a time.
pub(super) enum OffReader<'a> {
    Mem(PackedView<'a>),
    /// `sum`: the file holds lengths (a degree file), summed as read; otherwise offsets.
    File {
        r: ColReader,
        block: Vec<u64>,
        at: usize,
        acc: u64,
        sum: bool,
    },
}

impl OffReader<'_> {
    /// Offset `i`: not below the first position of the block that held the last one read.
    pub(super) fn get(&mut self, i: usize) -> io::Result<u64> {
        match self {
            OffReader::Mem(v) => Ok(v.get(i)),
            OffReader::File { r, block, at, acc, sum } => {
                while i >= *at + block.len() {
                    *at += block.len();
                    if r.fill(block)? == 0 {
                        return Err(io::Error::other("a CSR offset column is short"));
                    }
                    for d in block.iter_mut().filter(|_| *sum) {
                        *acc += *d;
                        *d = *acc;
                    }
                }
                (i.checked_sub(*at).and_then(|k| block.get(k).copied()))
                    .ok_or_else(|| io::Error::other("CSR offsets read out of order"))
            }
        }
    }
}

/// The forward (`out`) or incoming offsets of `base`, from `spilled` when they are there.
pub(super) fn offsets<'a>(
    base: &'a Base,
    spilled: Option<&CsrOffsets>,
    out: bool,
) -> io::Result<OffReader<'a>> {
    let file = |s: &SpilledOffsets| -> io::Result<OffReader<'a>> {
        let sum = !s.summed();
        Ok(OffReader::File { r: s.lengths()?, block: Vec::new(), at: 0, acc: 0, sum })
    };
    match (spilled, out) {
        (Some(s), true) => file(&s.out),
        (Some(s), false) => file(s.inc()?),
        (None, true) => Ok(OffReader::Mem(base.out_off.view())),
        (None, false) => Ok(OffReader::Mem(base.in_off.view())),
    }
}
