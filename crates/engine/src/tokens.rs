//! Token handles of the embedded API: [`Label`], [`RelType`], [`PropertyKey`] (resolved once
//! per transaction), and [`RelInfo`], a relationship's endpoints and type.

use arbor_model::graph::TokenId;
use arbor_model::{NodeId, RelId};

/// A label token, resolved once with [`crate::Tx::label`] (or created with [`crate::Tx::get_or_create_label`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(pub TokenId);

/// A relationship type token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelType(pub TokenId);

/// A property key token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PropertyKey(pub TokenId);

/// A relationship's endpoints and type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelInfo {
    pub id: RelId,
    pub start: NodeId,
    pub end: NodeId,
    pub rel_type: RelType,
}
