//! Arbor's value model: what a Cypher value is, independent of storage, wire format and query engine.
//!
//! **Architecture Invariant:** this crate does no I/O and knows nothing of Bolt, PackStream, storage
//! layout or Cypher syntax. Every other crate speaks in these types.
//!
//! Entities appear in two forms. Inside the engine a node is a reference, [`Value::Node`] (an id
//! resolved against a transaction); results leaving the engine are materialized, so a client never
//! needs the transaction: the engine writes result rows into a [`ResultWriter`] ([`result`]),
//! which has no case for a reference, and owned rows are [`ResultValue`]s ([`result_value`]),
//! which have no reference variant.
//!
//! Value semantics (equality, ordering, arithmetic) live in [`ops`], printing in [`format`],
//! temporal arithmetic in [`temporal_ops`] and spatial functions in [`spatial`].

pub mod check_report;
mod error;
pub mod format;
pub mod graph;
pub mod histogram;
pub mod ops;
pub mod property_type;
pub mod propmap;
pub mod result;
pub mod result_value;
pub mod spatial;
mod temporal;
pub mod temporal_build;
pub mod temporal_ops;
mod temporal_parse;
mod value;

pub use check_report::{CheckReport, SegmentReport};
pub use error::{Error, Result, Status};
pub use format::{to_cypher_literal, to_string_value};
pub use graph::{Direction, Edge, TokenId, TokenKind};
pub use ops::{compare, compare_op, equals, group_key, order, CmpOp, GroupKey};
pub use propmap::{Key, KeyOrder};
pub use result::{NodeHead, PathLayout, PathPart, RelHead, ResultWriter, Scalar};
pub use result_value::{ResultBuilder, ResultValue};
pub use temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Point, Time};
pub use temporal_build::temporal_component;
pub use value::{NodeData, NodeId, PathData, PathRef, PropertyMap, RelData, RelId, Value};
