//! Vocabulary of the public API used by every layer: token ids and kinds, expansion
//! directions and edges, durability modes and the store configuration.

use arbor_model::{NodeId, RelId};
use std::time::Duration;

/// Token ids for labels, relationship types and property keys (same shape as `arbor_exec`'s).
pub type TokenId = u32;

/// Direction of an expansion, as seen from the expanded node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Outgoing,
    Incoming,
    Both,
}

/// One relationship seen from a node: the relationship, the node at its other end and which way
/// it points (`Outgoing` if the expanded node is its start). A self-loop expanded with `Both`
/// appears once, as `Outgoing`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub rel: RelId,
    pub other: NodeId,
    pub dir: Dir,
}

/// Which kind of token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Label,
    RelType,
    PropertyKey,
}

impl TokenKind {
    pub(crate) fn index(self) -> usize {
        match self {
            TokenKind::Label => 0,
            TokenKind::RelType => 1,
            TokenKind::PropertyKey => 2,
        }
    }

    pub(crate) fn from_index(i: u8) -> Option<TokenKind> {
        match i {
            0 => Some(TokenKind::Label),
            1 => Some(TokenKind::RelType),
            2 => Some(TokenKind::PropertyKey),
            _ => None,
        }
    }
}

/// When a commit is acknowledged relative to its WAL record reaching the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// fdatasync before success; concurrent commits share one fdatasync (group commit).
    #[default]
    Sync,
    /// Acknowledge after `write()`; fdatasync in the background about every 10 ms.
    Async,
    /// Never fsync (ephemeral use).
    Off,
}

/// Configuration of a file-backed store.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub durability: Durability,
    /// Checkpoint when this much time has passed since the last checkpoint...
    pub checkpoint_interval: Duration,
    /// ...or when this many WAL bytes were written since the last checkpoint.
    pub checkpoint_wal_bytes: u64,
    /// A WAL segment is closed and a new one started once it exceeds this size.
    pub wal_segment_bytes: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            durability: Durability::Sync,
            checkpoint_interval: Duration::from_secs(300),
            checkpoint_wal_bytes: 256 << 20,
            wal_segment_bytes: 64 << 20,
        }
    }
}
