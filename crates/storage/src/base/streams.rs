//! [`SegmentStreams`]: the columns of a bulk-built base that are not in memory when its
//! segment is written (`BaseBuilder::finish_streamed`): the incoming adjacency, produced in
//! windows ([`BackwardStream`]), the node property bytes and offsets, read back from their
//! scratch files ([`SpilledBlobs`], [`SpilledOffsets`]), and the forward neighbour and type columns, likewise
//! ([`ForwardSpill`]). The segment writer asks for them as it reaches them.

use std::io;
use std::path::PathBuf;

use super::backward::BackwardStream;
use super::blob_spill::SpilledBlobs;
use super::degree_spill::{self, CsrOffsets};
use super::fwd_spill::{ForwardSpill, Placed};
use super::graph::Base;
use super::node_cols::SpilledOffsets;
use super::segments::NODE_PROPS;
use crate::pager::segment::{ColumnData, Sink};

/// The streamed columns of one base (any part may be absent).
#[derive(Default)]
pub(crate) struct SegmentStreams {
    pub(crate) backward: Option<BackwardStream>,
    pub(crate) node_blobs: Option<SpilledBlobs>,
    /// The node blob offsets, spilled beside the blobs (`base/node_cols.rs`).
    pub(crate) node_offsets: Option<SpilledOffsets>,
    /// The forward columns in scratch files (none: both in the base).
    pub(crate) forward: ForwardSpill,
    /// The CSR offset columns in scratch files (`base/degree_spill.rs`).
    pub(crate) offsets: Option<CsrOffsets>,
    /// The segment file being written and where each column's pages start in it
    /// ([`SegmentStreams::place`]).
    placed: Option<(PathBuf, Vec<(u8, u64)>)>,
    /// Chunks of node property blobs written while building (kept when the blobs go).
    blob_writes: u64,
}

impl SegmentStreams {
    pub(super) fn new(
        backward: Option<BackwardStream>,
        node_blobs: Option<SpilledBlobs>,
        node_offsets: Option<SpilledOffsets>,
        forward: ForwardSpill,
        offsets: Option<CsrOffsets>,
    ) -> SegmentStreams {
        SegmentStreams {
            backward,
            node_blobs,
            node_offsets,
            forward,
            offsets,
            ..Default::default()
        }
    }

    /// The segment columns produced here, to put in place of the base's.
    pub(crate) fn columns(&self) -> Vec<(u8, ColumnData<'static>)> {
        let mut cols = self.backward.as_ref().map(BackwardStream::columns).unwrap_or_default();
        cols.extend(self.node_blobs.as_ref().map(SpilledBlobs::column));
        cols.extend(self.node_offsets.as_ref().map(SpilledOffsets::column));
        cols.extend(self.forward.columns());
        cols.extend(self.offsets.as_ref().map(CsrOffsets::columns).unwrap_or_default());
        cols
    }

    /// The segment is being written to `path` (on the scratch files' file system), column
    /// `id`'s pages from byte offset `at` (`(id, at)` pairs): once a column produced here is
    /// written, its scratch file goes and later readers (the incoming windows) read its pages
    /// instead. The segment writer flushes what it wrote before it asks for the next column.
    pub(crate) fn place(&mut self, path: PathBuf, at: Vec<(u8, u64)>) {
        self.placed = Some((path, at));
    }

    /// Gives column `id`'s values (one of [`SegmentStreams::columns`]) to `emit`, in order;
    /// then removes what only this column read, and with [`Self::place`] moves the readers
    /// of a forward or offset column to its pages in the segment.
    pub(crate) fn produce(&mut self, base: &Base, id: u8, emit: &mut Sink<'_>) -> io::Result<()> {
        self.produce_column(base, id, emit)?;
        if id == NODE_PROPS[0] {
            self.node_offsets = None;
        } else if id == NODE_PROPS[1] {
            self.blob_writes = self.node_blob_spills();
            self.node_blobs = None;
        }
        let Some((path, at)) = &self.placed else { return Ok(()) };
        let Some(offset) = at.iter().find(|(c, _)| *c == id).map(|(_, o)| *o) else {
            return Ok(());
        };
        let at = Placed { path: path.clone(), offset };
        if self.forward.has(id) {
            self.forward.place(id, at);
        } else if self.offsets.as_ref().is_some_and(|o| o.has(id)) {
            self.offsets = self.offsets.take().map(|o| o.place(id, at));
        }
        Ok(())
    }

    fn produce_column(&mut self, base: &Base, id: u8, emit: &mut Sink<'_>) -> io::Result<()> {
        if self.forward.has(id) {
            return self.forward.produce(id, emit);
        }
        if let Some(o) = self.offsets.as_ref().filter(|o| o.has(id)) {
            return o.produce(id, emit);
        }
        if let (Some(o), true) = (&self.node_offsets, id == NODE_PROPS[0]) {
            return o.produce(emit);
        }
        match (&mut self.backward, &mut self.node_blobs) {
            (_, Some(b)) if id == NODE_PROPS[1] => b.produce(emit),
            (Some(s), _) if id != NODE_PROPS[1] => {
                s.produce(base, &self.forward, self.offsets.as_ref(), id, emit)
            }
            _ => Err(io::Error::other(format!("segment column {id} is not streamed"))),
        }
    }

    /// `f(start, type, end)` for every relationship of `base` in forward order, whether its
    /// forward columns are in memory or spilled (what the count store is computed from).
    pub(crate) fn for_each_rel_forward(
        &self,
        base: &Base,
        f: impl FnMut(u64, u32, u64),
    ) -> io::Result<()> {
        let mut out_off = degree_spill::offsets(base, self.offsets.as_ref(), true)?;
        self.forward.for_each_rel_forward(base, &mut |i| out_off.get(i), f)
    }

    /// Whether the forward columns or the CSR offsets were spilled to scratch files (the
    /// base then lacks them: the count store is computed through [`Self::for_each_rel_forward`]).
    pub(crate) fn forward_spilled(&self) -> bool {
        self.forward.spilled() != (false, false) || self.offsets.is_some()
    }

    /// Windows the incoming adjacency was produced in (0: built whole), and the scans of the
    /// forward neighbours that counted spilled in-degrees.
    pub(crate) fn backward_passes(&self) -> u64 {
        self.backward.as_ref().map_or(0, |s| s.passes)
            + self.offsets.as_ref().map_or(0, |o| o.passes)
    }

    /// Chunks of node property bytes written to the scratch file while building (0: none).
    pub(crate) fn node_blob_spills(&self) -> u64 {
        self.node_blobs.as_ref().map_or(self.blob_writes, |b| b.writes)
    }
}
