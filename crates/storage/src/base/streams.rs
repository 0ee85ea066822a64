//! [`SegmentStreams`]: the columns of a bulk-built base that are not in memory when its
//! segment is written (`BaseBuilder::finish_streamed`): the incoming adjacency, produced in
//! windows ([`BackwardStream`]), and the node property bytes, read back from their scratch
//! file ([`SpilledBlobs`]). The segment writer asks for them as it reaches them.

use std::io;

use super::backward::BackwardStream;
use super::blob_spill::SpilledBlobs;
use super::graph::Base;
use super::segments::NODE_PROPS;
use crate::pager::segment::{ColumnData, Sink};

/// The streamed columns of one base (either part may be absent).
#[derive(Default)]
pub(crate) struct SegmentStreams {
    pub(crate) backward: Option<BackwardStream>,
    pub(crate) node_blobs: Option<SpilledBlobs>,
}

impl SegmentStreams {
    /// The segment columns produced here, to put in place of the base's.
    pub(crate) fn columns(&self) -> Vec<(u8, ColumnData<'static>)> {
        let mut cols = self.backward.as_ref().map(BackwardStream::columns).unwrap_or_default();
        cols.extend(self.node_blobs.as_ref().map(SpilledBlobs::column));
        cols
    }

    /// Gives column `id`'s values (one of [`SegmentStreams::columns`]) to `emit`, in order.
    pub(crate) fn produce(&mut self, base: &Base, id: u8, emit: &mut Sink<'_>) -> io::Result<()> {
        match (&mut self.backward, &self.node_blobs) {
            (_, Some(b)) if id == NODE_PROPS[1] => b.produce(emit),
            (Some(s), _) if id != NODE_PROPS[1] => s.produce(base, id, emit),
            _ => Err(io::Error::other(format!("segment column {id} is not streamed"))),
        }
    }

    /// Windows the incoming adjacency was produced in (0: built whole).
    pub(crate) fn backward_passes(&self) -> u64 {
        self.backward.as_ref().map_or(0, |s| s.passes)
    }

    /// Chunks of node property bytes written to the scratch file while building (0: none).
    pub(crate) fn node_blob_spills(&self) -> u64 {
        self.node_blobs.as_ref().map_or(0, |b| b.writes)
    }
}
