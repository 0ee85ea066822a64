//! [`CheckReport`] and [`SegmentReport`]: what `Database::check` found. One report shape, owned
//! by the storage layer that fills it (`storage/src/durability/check.rs`); the engine hands it on.

pub use arbor_storage::{CheckReport, SegmentReport};
