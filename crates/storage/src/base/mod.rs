//! The compact, immutable *base* of the store: every node and relationship committed up to the
//! base timestamp, laid out in dense columns instead of per-entity objects.
//!
//! * Nodes (indexed by id, holes allowed): a label-set code column (code 0 = no node) into a
//!   dictionary of label sets, per-label bitsets for label scans, and property blobs in one
//!   contiguous arena with per-node offsets.
//! * Relationships: CSR per direction (offsets per node + neighbour, relationship id and type per
//!   entry), a relationship-id -> forward-position column (the start node is found by binary
//!   search over the forward offsets, the end node and type are read at that position), and
//!   property blobs by relationship id.
//! * Indexes: per indexed `(label, key)`, node ids sorted by a 32-bit hash of the key (equality
//!   seeks), and, built on the first range or prefix seek, the same ids sorted by key value
//!   (binary-searched by decoding the keyed property).
//!
//! Every integer column is [`Packed`]: constant, arithmetic sequence, or the narrowest of
//! u8/u16/u32/u64. Bulk-loaded relationships created in start-node order therefore cost no bytes
//! for their id columns, and a single relationship type costs nothing per entry.
//!
//! Property blob: per property `varint(key << 3 | tag)` then the payload: tags 0/1 false/true,
//! 2 zig-zag varint int, 3 f64, 4 inline string (varint length + bytes), 5 interned string
//! (varint index into the base's string table), 6 any other value in the WAL encoding. Strings
//! are interned only where it pays (repeated often enough to amortize the table entry).
//!
//! A base is never modified after it is built, except for its *dirty bits*: a bit per entity that
//! is set (before the commit becomes visible) when a newer version is installed in the delta, so
//! readers of clean entities skip the delta lookup entirely.

mod adjacency;
mod backward;
mod blob_spill;
mod builder;
mod columns;
mod degree_spill;
mod fwd_spill;
mod gather;
mod graph;
mod index;
mod index_build;
mod node_cols;
mod paged;
mod part_file;
mod props;
mod segment_open;
mod segments;
mod streams;
#[cfg(test)]
mod tests;
mod warm_order;

pub(crate) use builder::BaseBuilder;
pub use graph::BaseStats;
pub(crate) use graph::{Base, NodeRef, RelRef};
pub(crate) use index::key_hash;
#[cfg(test)]
pub(crate) use index::legacy_key_hash;
pub(crate) use index_build::{HashSorter, IndexPart, SortBudget, SortStats, RUN_SHARE};
pub(crate) use part_file::{
    open_part, remove as remove_part_files, remove_unnamed, write_part, PartFiles, PartRef,
    PartStore,
};
#[cfg(test)]
pub(crate) use segment_open::meta_version;
pub(crate) use segment_open::{is_complete, OpenMode};
pub(crate) use segments::{compare as compare_segment, SegGraph};
pub(crate) use streams::SegmentStreams;
