//! The graph vocabulary every layer shares: token ids and kinds, expansion directions and
//! edges. The parser's pattern arrows, the planner's operators, the executor's graph seam,
//! storage and the embedding API all speak these types, so no layer converts between copies.

use crate::{NodeId, RelId};

/// Token ids for labels, relationship types and property keys. Tokens are global, never
/// deleted, and created outside transactions (a rolled-back transaction may leave an unused
/// token, as in Neo4j).
pub type TokenId = u32;

/// Which way a relationship is followed: a pattern arrow (`-->`, `<--`, `--`) or the
/// direction of an expansion as seen from the expanded node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `-->`: from the node to the relationship's end.
    Outgoing,
    /// `<--`: from the node to the relationship's start.
    Incoming,
    /// `--`: either way.
    Both,
}

impl Direction {
    /// The same relationships seen from the other end (`Both` stays `Both`).
    pub fn reverse(self) -> Direction {
        match self {
            Direction::Outgoing => Direction::Incoming,
            Direction::Incoming => Direction::Outgoing,
            Direction::Both => Direction::Both,
        }
    }
}

/// One relationship seen from a node: the relationship, the node at its other end and which
/// way it points as seen from the expanded node (`Outgoing` if that node is the start). A
/// self-loop expanded with `Both` appears once, as `Outgoing`. Small and `Copy`: the hot
/// adjacency paths pass it by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub rel: RelId,
    pub other: NodeId,
    pub dir: Direction,
}

/// Which kind of token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Label,
    RelType,
    PropertyKey,
}

impl TokenKind {
    /// Every kind, in [`TokenKind::index`] order.
    pub const ALL: [TokenKind; 3] = [TokenKind::Label, TokenKind::RelType, TokenKind::PropertyKey];

    /// A dense, stable number for the kind (0, 1, 2): table slots and storage's on-disk tag.
    pub fn index(self) -> usize {
        match self {
            TokenKind::Label => 0,
            TokenKind::RelType => 1,
            TokenKind::PropertyKey => 2,
        }
    }

    /// The kind numbered `i` by [`TokenKind::index`], `None` for an unknown number.
    pub fn from_index(i: u8) -> Option<TokenKind> {
        TokenKind::ALL.get(i as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_kind_numbering_round_trips() {
        for k in TokenKind::ALL {
            assert_eq!(TokenKind::from_index(k.index() as u8), Some(k));
        }
        assert_eq!(TokenKind::from_index(3), None);
        assert_eq!(TokenKind::PropertyKey.index(), 2);
    }

    #[test]
    fn reverse_swaps_only_directed_arrows() {
        assert_eq!(Direction::Outgoing.reverse(), Direction::Incoming);
        assert_eq!(Direction::Incoming.reverse(), Direction::Outgoing);
        assert_eq!(Direction::Both.reverse(), Direction::Both);
    }
}
