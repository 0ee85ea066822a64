//! The memory a traversal runs in ([`Workspace`]: path stack, arena, uniqueness bitsets,
//! per-level continue bits) and the database's pool of idle workspaces. No traversal logic.

use std::borrow::{Borrow, BorrowMut};

use arbor_exec::traverse::DepthFirst;
use arbor_model::graph::Edge;

use super::Arena;

/// A growable bitset over dense ids.
#[derive(Default, Debug)]
pub(super) struct BitSet {
    pub(super) words: Vec<u64>,
    /// Words written since the last clear (so clearing costs what was used, not the capacity).
    pub(super) dirty: Vec<u32>,
    pub(super) sparse_clear: bool,
}

impl BitSet {
    /// Sets bit `id`; returns whether it was clear.
    pub(super) fn insert(&mut self, id: u64) -> bool {
        let w = (id / 64) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1 + w / 4, 0);
        }
        let bit = 1u64 << (id % 64);
        let limit = self.words.len() / 16;
        let word = &mut self.words[w];
        if *word & bit != 0 {
            return false;
        }
        if *word == 0 && self.sparse_clear {
            if self.dirty.len() < limit {
                self.dirty.push(w as u32);
            } else {
                // Too many words touched to track them: clear everything next time.
                self.sparse_clear = false;
            }
        }
        *word |= bit;
        true
    }

    pub(super) fn clear(&mut self) {
        if self.sparse_clear {
            for &w in &self.dirty {
                self.words[w as usize] = 0;
            }
        } else {
            self.words.iter_mut().for_each(|w| *w = 0);
        }
        self.dirty.clear();
        self.sparse_clear = true;
    }
}

/// The continue decisions of one breadth-first level, one bit per path in level order (bit `j`
/// for the `j`-th path of the level). A level whose bits are all equal (every path continues,
/// or none does, as at the maximum depth) is kept as a count, with no memory.
#[derive(Default, Debug)]
pub(super) struct LevelBits {
    pub(super) len: u64,
    pub(super) ones: u64,
    /// With `dense`, the bits; otherwise all `len` bits equal `uniform`.
    pub(super) words: Vec<u64>,
    pub(super) dense: bool,
    pub(super) uniform: bool,
}

impl LevelBits {
    pub(super) fn clear(&mut self) {
        self.len = 0;
        self.ones = 0;
        self.words.clear();
        self.dense = false;
    }

    #[inline(always)]
    pub(super) fn push(&mut self, bit: bool) {
        if !self.dense && (self.len == 0 || bit == self.uniform) {
            self.uniform = bit;
            self.len += 1;
            self.ones += bit as u64;
            return;
        }
        self.push_dense(bit);
    }

    /// `push` once the bits differ (kept out of line: the uniform case is the hot one).
    #[inline(never)]
    pub(super) fn push_dense(&mut self, bit: bool) {
        if !self.dense {
            // The first differing bit: spell out the uniform prefix.
            let fill = if self.uniform { u64::MAX } else { 0 };
            self.words.clear();
            self.words.resize((self.len / 64) as usize + 1, fill);
            if let Some(last) = self.words.last_mut() {
                // Bits at and beyond `len` start clear.
                *last &= (1u64 << (self.len % 64)) - 1;
            }
            self.dense = true;
        }
        let (w, b) = ((self.len / 64) as usize, self.len % 64);
        if w == self.words.len() {
            self.words.push(0);
        }
        if bit {
            self.words[w] |= 1 << b;
            self.ones += 1;
        }
        self.len += 1;
    }

    /// Bit `j` (`j < len`).
    #[inline]
    pub(super) fn get(&self, j: u64) -> bool {
        if !self.dense {
            return self.uniform;
        }
        self.words.get((j / 64) as usize).is_some_and(|w| w & (1 << (j % 64)) != 0)
    }
}

/// Memory a traversal works in. Reusing one across traversals (with
/// [`TraversalDescription::traverse_in`]) avoids all allocation once it has grown to size.
#[derive(Default, Debug)]
pub struct Workspace {
    /// Depth-first: the path stack.
    pub(super) dfs: DepthFirst<Edge>,
    /// Breadth-first: the children of the branch being expanded.
    pub(super) edges: Vec<Edge>,
    pub(super) branches: Arena,
    pub(super) seen_nodes: BitSet,
    pub(super) seen_rels: BitSet,
    /// Bounded breadth-first: per level, the continue decision of each path.
    pub(super) levels: Vec<LevelBits>,
    /// Bounded breadth-first: per level, paths reached so far in the current walk.
    pub(super) ordinals: Vec<u64>,
}

impl Workspace {
    pub(super) fn reset(&mut self) {
        self.dfs.clear();
        self.edges.clear();
        self.branches.clear();
        self.seen_nodes.clear();
        self.seen_rels.clear();
        self.levels.iter_mut().for_each(LevelBits::clear);
        self.ordinals.clear();
    }

    /// Bytes of memory currently reserved (for reporting).
    pub fn capacity_bytes(&self) -> usize {
        self.dfs.capacity_bytes()
            + self.edges.capacity() * std::mem::size_of::<Edge>()
            + self.branches.capacity_bytes()
            + (self.seen_nodes.words.capacity() + self.seen_rels.words.capacity()) * 8
            + (self.seen_nodes.dirty.capacity() + self.seen_rels.dirty.capacity()) * 4
            + self.levels.capacity() * std::mem::size_of::<LevelBits>()
            + self.levels.iter().map(|l| l.words.capacity() * 8).sum::<usize>()
            + self.ordinals.capacity() * 8
    }
}

/// Workspaces a database keeps for [`TraversalDescription::traverse`], so that repeated
/// traversals reuse their memory (a breadth-first arena can be tens of MB) instead of
/// allocating and freeing it per call. Bounded: at most [`POOL_MAX`] idle workspaces, and a
/// workspace that grew past [`POOL_KEEP_BYTES`] is freed rather than kept.
#[derive(Default)]
pub(crate) struct WorkspacePool {
    pub(super) idle: parking_lot::Mutex<Vec<Workspace>>,
}

pub(super) const POOL_MAX: usize = 16;
pub(super) const POOL_KEEP_BYTES: usize = 256 << 20;

impl WorkspacePool {
    pub(super) fn take(&self) -> PooledWorkspace<'_> {
        let ws = self.idle.lock().pop().unwrap_or_default();
        PooledWorkspace { ws, pool: self }
    }

    /// Idle workspaces and the bytes they hold.
    #[cfg(test)]
    pub(crate) fn idle(&self) -> (usize, usize) {
        let idle = self.idle.lock();
        (idle.len(), idle.iter().map(Workspace::capacity_bytes).sum())
    }
}

/// A workspace on loan from a database's pool; it goes back when dropped.
pub struct PooledWorkspace<'a> {
    pub(super) ws: Workspace,
    pub(super) pool: &'a WorkspacePool,
}

impl Borrow<Workspace> for PooledWorkspace<'_> {
    fn borrow(&self) -> &Workspace {
        &self.ws
    }
}

impl BorrowMut<Workspace> for PooledWorkspace<'_> {
    fn borrow_mut(&mut self) -> &mut Workspace {
        &mut self.ws
    }
}

impl Drop for PooledWorkspace<'_> {
    fn drop(&mut self) {
        if self.ws.capacity_bytes() > POOL_KEEP_BYTES {
            return;
        }
        let ws = std::mem::take(&mut self.ws);
        let mut idle = self.pool.idle.lock();
        if idle.len() < POOL_MAX {
            idle.push(ws);
        }
    }
}
