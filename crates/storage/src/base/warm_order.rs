//! The segment columns a warm-up reads into the page cache (`durability/warm_pool.rs`): per
//! part of a base, in the order a promotion takes the parts (label codes and bitsets, index
//! arrays, adjacency, node property blobs, relationship property blobs), the columns this base
//! reads through the pool, in the order queries read them (offsets before what they point
//! into); none for a part held in memory.

use super::graph::Base;
use super::index::BaseIndex;
use super::segments::{FWD, IN, LABEL_BITS, LABEL_CODE, NODE_PROPS, OUT, REL_PROPS};

/// The number of parts, as `segment_open.rs` orders them.
pub(crate) const PARTS: usize = 5;

/// Index words (a complete segment's, `segment_open.rs`).
const INDEX_WORDS: u8 = 18;

impl Base {
    /// Per part, the segment columns this base pages (see the module docs).
    pub(crate) fn paged_part_columns(&self) -> [Vec<u8>; PARTS] {
        let nodes = if self.paged_nodes.is_some() { vec![LABEL_CODE, LABEL_BITS] } else { vec![] };
        let index_paged = self.indexes.values().any(|ix| matches!(ix, BaseIndex::Paged(_)));
        let index = if index_paged { vec![INDEX_WORDS] } else { vec![] };
        let rels = if self.paged.is_some() {
            let mut c: Vec<u8> = FWD.to_vec();
            c.extend(IN);
            c.extend(OUT.iter().filter(|id| !FWD.contains(id)));
            c
        } else {
            vec![]
        };
        let props = |i: usize, ids: [u8; 2]| {
            if self.paged_props[i].is_some() {
                ids.to_vec()
            } else {
                vec![]
            }
        };
        [nodes, index, rels, props(0, NODE_PROPS), props(1, REL_PROPS)]
    }
}
