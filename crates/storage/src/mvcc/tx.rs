//! Transactions: a snapshot of the committed store plus a private write set, savepoints, and the
//! commit protocol (conflict validation, unique constraints, install, WAL hand-off).
//!
//! A transaction owns everything it needs (an `Arc` of the store core and its write set), so it is
//! `Send` and can live in a session across network round trips. No lock is held between calls.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use std::sync::Arc;

use arbor_model::{Error, Result, Status, Value};

use super::counts::CountDelta;
use super::state::Core;
use crate::base::Base;
use crate::idset::IdSet;
use crate::records::{set_prop, NodeData, RelData};
use crate::schema::Target;
use crate::types::{TokenId, TokenKind};
use crate::value::{check_storable, IndexKey};

#[derive(Clone)]
pub(super) struct NodeWrite {
    /// `None`: deleted by this transaction.
    pub(super) data: Option<Arc<NodeData>>,
    /// Created by this transaction (so no conflict check and no redo if also deleted).
    pub(super) created: bool,
}

#[derive(Clone)]
pub(super) struct RelWrite {
    pub(super) data: Option<Arc<RelData>>,
    pub(super) created: bool,
}

/// A relationship created by this transaction, seen from one of its nodes.
#[derive(Clone, Copy)]
pub(super) struct TxAdj {
    pub(super) rel: u64,
    pub(super) other: u64,
    pub(super) ty: u32,
    pub(super) out: bool,
}

/// How to restore the write set to an earlier point.
pub(super) enum Undo {
    Node(u64, Option<NodeWrite>),
    Rel(u64, Option<RelWrite>),
    /// Pop the last entry of this node's transaction-local adjacency.
    Adj(u64),
}

/// A point in a transaction to roll back to (see [`Transaction::rollback_to`]).
#[derive(Clone, Debug)]
pub struct Savepoint {
    pub(super) undo_len: usize,
    pub(super) delta: CountDelta,
}

/// A snapshot-isolated transaction. Dropping it without [`commit`](Transaction::commit) rolls
/// it back.
pub struct Transaction {
    pub(super) core: Arc<Core>,
    /// The compact base this transaction reads under the delta (`base.ts <= start_ts`).
    pub(super) base: Arc<Base>,
    pub(super) start_ts: u64,
    pub(super) read_only: bool,
    /// Schema version when the transaction started: indexes created later did not track this
    /// transaction's writes in `tx_index`.
    pub(super) schema_version: u64,
    pub(super) nodes: BTreeMap<u64, NodeWrite>,
    pub(super) rels: BTreeMap<u64, RelWrite>,
    pub(super) adj: FxHashMap<u64, Vec<TxAdj>>,
    /// Supersets (never undone; readers re-check): nodes given a label, rels of a type, and
    /// index keys written by this transaction.
    pub(super) tx_labels: FxHashMap<u32, IdSet>,
    pub(super) tx_types: FxHashMap<u32, IdSet>,
    pub(super) tx_index: BTreeMap<(Target, IndexKey), Vec<u64>>,
    pub(super) undo: Vec<Undo>,
    pub(super) delta: CountDelta,
    /// Token tables as of `begin` (tokens are never removed): lookups need no shared lock.
    pub(super) tokens: Arc<super::tokens::Tokens>,
    /// The first failed read of a base page (I/O, checksum): reads that hit it answered
    /// without the page, so the query that made them must fail with this error
    /// ([`Transaction::read_error`]), and the transaction cannot commit.
    pub(super) read_error: std::sync::OnceLock<arbor_model::Error>,
    /// The base's failed property reads when this transaction began (see
    /// [`crate::base::Base::failure_since`]).
    pub(super) base_failures: u64,
}

/// The smaller of two optional ids, `None` only if both are.
#[inline]
pub(super) fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

pub(super) fn outdated(kind: &str, id: u64) -> Error {
    Error::new(
        Status::TransactionOutdated,
        format!(
            "{kind}({id}) was changed by a concurrent transaction that committed first; \
             the transaction can be retried"
        ),
    )
}

pub(super) fn node_not_found(id: u64) -> Error {
    Error::new(
        Status::EntityNotFound,
        format!("Node with id {id} has been deleted or does not exist"),
    )
}

pub(super) fn rel_not_found(id: u64) -> Error {
    Error::new(
        Status::EntityNotFound,
        format!("Relationship with id {id} has been deleted or does not exist"),
    )
}

/// Validates, drops nulls, sorts by key; a repeated key keeps its last value.
pub(super) fn normalize_props(props: Vec<(u32, Value)>) -> Result<Vec<(u32, Value)>> {
    // The common case (keys already ascending and distinct, no nulls) keeps the caller's
    // vector: no second allocation per created entity.
    if props.iter().all(|(_, v)| !v.is_null()) && props.windows(2).all(|w| w[0].0 < w[1].0) {
        for (_, v) in &props {
            check_storable(v)?;
        }
        return Ok(props);
    }
    let mut out: Vec<(u32, Value)> = Vec::with_capacity(props.len());
    for (k, v) in props {
        if v.is_null() {
            set_prop(&mut out, k, None);
        } else {
            check_storable(&v)?;
            set_prop(&mut out, k, Some(v));
        }
    }
    Ok(out)
}

impl Transaction {
    pub(crate) fn new(core: Arc<Core>, read_only: bool) -> Transaction {
        let (start_ts, base) = core.register();
        let base_failures = base.failures();
        let schema_version = core.schema.read().version;
        let tokens = core.tokens.snapshot();
        Transaction {
            tokens,
            core,
            base,
            start_ts,
            read_only,
            schema_version,
            nodes: BTreeMap::new(),
            rels: BTreeMap::new(),
            adj: FxHashMap::default(),
            tx_labels: FxHashMap::default(),
            tx_types: FxHashMap::default(),
            tx_index: BTreeMap::new(),
            undo: Vec::new(),
            delta: CountDelta::default(),
            read_error: std::sync::OnceLock::new(),
            base_failures,
        }
    }

    /// The first failed read of a base page in this transaction, if any (see the field). A
    /// query that read through the transaction must report it instead of its answer.
    #[inline]
    pub fn read_error(&self) -> Option<&arbor_model::Error> {
        self.read_error.get().or_else(|| self.base.failure_since(self.base_failures))
    }

    /// Keeps the first read error (later ones are usually the same page again).
    #[cold]
    pub(super) fn note_read_error(&self, e: arbor_model::Error) {
        tracing::error!("{}", e.message);
        let _ = self.read_error.set(e);
    }

    /// The base this transaction reads under the delta.
    pub(crate) fn base(&self) -> &Arc<Base> {
        &self.base
    }

    /// The snapshot timestamp (the newest commit this transaction sees).
    pub fn start_ts(&self) -> u64 {
        self.start_ts
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether the transaction has written anything (still pending).
    pub fn has_writes(&self) -> bool {
        !self.nodes.is_empty() || !self.rels.is_empty()
    }

    /// The ids of the relationships (`rels`) or nodes this transaction has written (created,
    /// changed or deleted), ascending.
    pub fn written_ids(&self, rels: bool) -> Vec<u64> {
        if rels {
            self.rels.keys().copied().collect()
        } else {
            self.nodes.keys().copied().collect()
        }
    }

    // ---------------------------------------------------------------- tokens

    pub fn token_id(&self, kind: TokenKind, name: &str) -> Option<TokenId> {
        // A token created after `begin` (by anyone) is only in the shared tables.
        self.tokens.get(kind, name).or_else(|| self.core.tokens.read().get(kind, name))
    }

    pub fn token_name(&self, kind: TokenKind, id: TokenId) -> Option<String> {
        match self.tokens.name(kind, id) {
            Some(n) => Some(n.to_string()),
            None => self.core.tokens.read().name(kind, id).map(|n| n.to_string()),
        }
    }

    /// Finds or creates a token. Tokens are global and survive a rollback.
    pub fn get_or_create_token(&self, kind: TokenKind, name: &str) -> Result<TokenId> {
        if let Some(id) = self.token_id(kind, name) {
            return Ok(id);
        }
        self.core.tokens.write().create(kind, name)
    }

    /// All tokens of a kind, in id order.
    pub fn tokens(&self, kind: TokenKind) -> Vec<(TokenId, String)> {
        let t = self.core.tokens.read();
        t.t[kind.index()].names.iter().enumerate().map(|(i, n)| (i as u32, n.to_string())).collect()
    }
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("start_ts", &self.start_ts)
            .field("read_only", &self.read_only)
            .field("nodes_written", &self.nodes.len())
            .field("rels_written", &self.rels.len())
            .finish()
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.core.unregister(self.start_ts, self.base.ts);
    }
}
