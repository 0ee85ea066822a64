//! `exec::graph::{GraphRead, GraphWrite}` over a storage transaction: the seam between query
//! execution and storage.
//!
//! Pure delegation: both crates speak `arbor_model::graph`'s vocabulary (`Direction`, `Edge`,
//! `TokenKind`), so nothing is converted, and the adjacency calls hand storage's `Edge`s
//! straight through.

use arbor_exec::graph::{
    Direction, Edge, ExpandArgs, GraphRead, GraphWrite, ProbeArgs, TokenId, TokenKind, TrailCount,
    TrailStack, ValueRange,
};
use std::sync::atomic::{AtomicU64, Ordering};

use arbor_model::{Error, NodeId, RelId, Result, Status, Value};
use arbor_storage as st;

/// A storage transaction seen through the `Graph` trait.
pub struct TxGraph<'a> {
    pub tx: &'a mut st::Transaction,
    /// Set for auto-commit transactions: `CALL { ... } IN TRANSACTIONS` then commits each batch
    /// and continues in a fresh transaction. `None` in an explicit transaction, where such a
    /// query fails (`TransactionStartFailed`, as in Neo4j).
    pub batch_store: Option<&'a st::Store>,
    /// Where `LOAD CSV` reads `file:///` URLs (`None`: it cannot).
    pub import_dir: Option<&'a std::path::Path>,
    /// The database's directory, where operators past the query memory get scratch files
    /// (`None`, an in-memory database: they get none).
    pub data_dir: Option<&'a std::path::Path>,
}

/// `node_probe` on a resolved node: whether it has every label in `labels`, and if so each
/// property of `keys` (null where missing) appended to `out`.
#[inline]
fn probe_handle(
    h: &st::NodeHandle<'_>,
    labels: &[TokenId],
    keys: &[TokenId],
    out: &mut Vec<Value>,
) -> bool {
    if !labels.iter().all(|l| h.has_label(*l)) {
        return false;
    }
    out.extend(keys.iter().map(|k| h.property(*k).unwrap_or(Value::Null)));
    true
}

impl GraphRead for TxGraph<'_> {
    fn token_id(&self, k: TokenKind, name: &str) -> Option<TokenId> {
        self.tx.token_id(k, name)
    }
    fn token_name(&self, k: TokenKind, id: TokenId) -> Option<String> {
        self.tx.token_name(k, id)
    }
    fn tokens(&self, k: TokenKind) -> Vec<(TokenId, String)> {
        self.tx.tokens(k)
    }
    fn next_node(&self, label: Option<TokenId>, from: NodeId) -> Option<NodeId> {
        self.tx.next_node(label, from)
    }
    fn next_nodes(&self, label: Option<TokenId>, from: NodeId, max: usize, out: &mut Vec<NodeId>) {
        self.tx.next_nodes(label, from, max, out)
    }
    fn node_exists(&self, id: NodeId) -> bool {
        self.tx.node_exists(id)
    }
    fn node_labels(&self, id: NodeId) -> Vec<TokenId> {
        self.tx.node_labels(id)
    }
    fn node_has_label(&self, id: NodeId, label: TokenId) -> bool {
        self.tx.node_has_label(id, label)
    }
    fn node_property(&self, id: NodeId, key: TokenId) -> Option<Value> {
        self.tx.node_property(id, key)
    }
    fn node_properties(&self, id: NodeId) -> Vec<(TokenId, Value)> {
        self.tx.node_properties(id)
    }
    fn node_probe(
        &self,
        id: NodeId,
        labels: &[TokenId],
        keys: &[TokenId],
        out: &mut Vec<Value>,
    ) -> bool {
        probe_handle(&self.tx.node_handle(id), labels, keys, out)
    }
    #[inline]
    fn node_expand_probe(
        &self,
        id: NodeId,
        expand: Option<ExpandArgs<'_>>,
        probe: Option<ProbeArgs<'_>>,
        vals: &mut Vec<Value>,
    ) -> bool {
        // One handle for both reads: the node's base row is looked up once.
        let h = self.tx.node_handle(id);
        if let Some(x) = expand {
            h.edges_into(x.dir, x.types, x.edges);
        }
        probe.is_none_or(|p| probe_handle(&h, p.labels, p.keys, vals))
    }
    fn count_trails(
        &self,
        q: &TrailCount<'_>,
        stack: &mut TrailStack,
        check: &mut dyn FnMut() -> Result<()>,
    ) -> Option<Result<u64>> {
        crate::trail_count::count_trails(self.tx, q, stack, check)
    }
    fn node_property_batch(&self, ids: &[NodeId], key: TokenId, out: &mut Vec<Value>) {
        self.tx.node_property_batch(ids, key, out)
    }
    fn node_int_batch(
        &self,
        ids: &[NodeId],
        key: TokenId,
        vals: &mut Vec<i64>,
        present: &mut Vec<bool>,
    ) -> bool {
        self.tx.node_int_gather(ids, key, vals, present)
    }
    fn node_edges(&self, node: NodeId, d: Direction, types: &[TokenId], out: &mut Vec<Edge>) {
        self.tx.node_handle(node).edges_into(d, types, out);
    }
    fn for_each_edge(
        &self,
        node: NodeId,
        d: Direction,
        types: &[TokenId],
        f: &mut dyn FnMut(Edge),
    ) {
        self.tx.for_each_edge(node, d, types, f);
    }
    fn degree(&self, node: NodeId, d: Direction, types: &[TokenId]) -> u64 {
        self.tx.degree(node, d, types)
    }
    fn index_seek(&self, label: TokenId, key: TokenId, value: &Value) -> Option<Vec<NodeId>> {
        self.tx.index_seek(label, key, value)
    }
    fn index_seek_into(
        &self,
        label: TokenId,
        key: TokenId,
        value: &Value,
        out: &mut Vec<NodeId>,
    ) -> bool {
        self.tx.index_seek_into(label, key, value, out)
    }
    fn index_seek_range(
        &self,
        label: TokenId,
        key: TokenId,
        range: &ValueRange,
    ) -> Option<Vec<NodeId>> {
        match range {
            ValueRange::Between { lo, hi } => self.tx.index_range(
                label,
                key,
                lo.as_ref().map(|(v, i)| (v, *i)),
                hi.as_ref().map(|(v, i)| (v, *i)),
            ),
            ValueRange::Prefix(p) => self.tx.index_prefix(label, key, p),
            ValueRange::Contains(p) => self.tx.index_text(label, key, p, false),
            ValueRange::EndsWith(p) => self.tx.index_text(label, key, p, true),
            ValueRange::Near { .. } | ValueRange::Within { .. } => {
                self.tx.index_point(label, key, &point_query(range)?)
            }
        }
    }
    fn count_rels_by_labels(
        &self,
        start: Option<TokenId>,
        ty: Option<TokenId>,
        end: Option<TokenId>,
    ) -> Option<u64> {
        self.tx.count_rels(start, ty, end)
    }
    fn count_rels(&self, types: &[TokenId]) -> Option<u64> {
        match types {
            [] => self.tx.count_rels(None, None, None),
            [t] => self.tx.count_rels(None, Some(*t), None),
            _ => None,
        }
    }
    fn index_seek_composite(
        &self,
        label: TokenId,
        keys: &[TokenId],
        values: &[Value],
    ) -> Option<Vec<NodeId>> {
        self.tx.index_seek_composite(label, keys, values)
    }
    fn rel_index_seek(
        &self,
        ty: TokenId,
        keys: &[TokenId],
        values: &[Value],
    ) -> Option<Vec<RelId>> {
        self.tx.rel_index_seek(ty, keys, values)
    }
    fn index_seek_composite_range(
        &self,
        label: TokenId,
        keys: &[TokenId],
        eq: &[Value],
        range: &ValueRange,
    ) -> Option<Vec<NodeId>> {
        match range {
            ValueRange::Between { lo, hi } => self.tx.index_composite_range(
                label,
                keys,
                eq,
                lo.as_ref().map(|(v, i)| (v, *i)),
                hi.as_ref().map(|(v, i)| (v, *i)),
                None,
            ),
            ValueRange::Prefix(p) => {
                self.tx.index_composite_range(label, keys, eq, None, None, Some(p))
            }
            // Composite indexes are RANGE indexes: the caller scans.
            ValueRange::Contains(_)
            | ValueRange::EndsWith(_)
            | ValueRange::Near { .. }
            | ValueRange::Within { .. } => None,
        }
    }
    fn rel_index_seek_range(
        &self,
        ty: TokenId,
        key: TokenId,
        range: &ValueRange,
    ) -> Option<Vec<RelId>> {
        match range {
            ValueRange::Between { lo, hi } => self.tx.rel_index_range(
                ty,
                key,
                lo.as_ref().map(|(v, i)| (v, *i)),
                hi.as_ref().map(|(v, i)| (v, *i)),
            ),
            ValueRange::Prefix(p) => self.tx.rel_index_prefix(ty, key, p),
            ValueRange::Contains(p) => self.tx.rel_index_text(ty, key, p, false),
            ValueRange::EndsWith(p) => self.tx.rel_index_text(ty, key, p, true),
            ValueRange::Near { .. } | ValueRange::Within { .. } => {
                self.tx.rel_index_point(ty, key, &point_query(range)?)
            }
        }
    }
    fn committed_snapshot(&self) -> Option<u64> {
        (!self.tx.has_writes()).then(|| self.tx.start_ts())
    }
    fn snapshot_with_writes(&self, rels: bool) -> Option<(u64, Vec<u64>)> {
        Some((self.tx.start_ts(), self.tx.written_ids(rels)))
    }
    fn await_indexes(&self, name: Option<&str>, timeout: std::time::Duration) -> Result<()> {
        self.tx.await_indexes(name, timeout)
    }
    fn vector_query(
        &self,
        index: &str,
        relationships: bool,
        k: usize,
        query: &[f32],
    ) -> Result<Vec<(u64, f64)>> {
        let entity =
            if relationships { st::VectorEntity::Relationship } else { st::VectorEntity::Node };
        self.tx.vector_query(index, entity, k, query)
    }
    fn count_nodes(&self, label: Option<TokenId>) -> u64 {
        self.tx.count_nodes(label)
    }
    fn rel_exists(&self, id: RelId) -> bool {
        self.tx.rel_exists(id)
    }
    fn rel_info(&self, id: RelId) -> Option<(NodeId, NodeId, TokenId)> {
        self.tx.rel_info(id)
    }
    fn rel_property(&self, id: RelId, key: TokenId) -> Option<Value> {
        self.tx.rel_property(id, key)
    }
    fn rel_properties(&self, id: RelId) -> Vec<(TokenId, Value)> {
        self.tx.rel_properties(id)
    }
    fn next_rel(&self, types: &[TokenId], from: RelId) -> Option<RelId> {
        self.tx.next_rel(types, from)
    }
    fn node_deleted_in_tx(&self, id: NodeId) -> bool {
        self.tx.node_deleted_in_tx(id)
    }
    fn rel_deleted_in_tx(&self, id: RelId) -> bool {
        self.tx.rel_deleted_in_tx(id)
    }
}

impl GraphWrite for TxGraph<'_> {
    fn get_or_create_token(&mut self, k: TokenKind, name: &str) -> Result<TokenId> {
        self.tx.get_or_create_token(k, name)
    }
    fn create_node(&mut self, labels: &[TokenId], props: Vec<(TokenId, Value)>) -> Result<NodeId> {
        self.tx.create_node(labels, props)
    }
    fn create_rel(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: TokenId,
        props: Vec<(TokenId, Value)>,
    ) -> Result<RelId> {
        self.tx.create_rel(start, end, rel_type, props)
    }
    fn set_node_property(&mut self, id: NodeId, key: TokenId, value: Value) -> Result<()> {
        self.tx.set_node_property(id, key, value)
    }
    fn set_rel_property(&mut self, id: RelId, key: TokenId, value: Value) -> Result<()> {
        self.tx.set_rel_property(id, key, value)
    }
    fn add_label(&mut self, id: NodeId, label: TokenId) -> Result<bool> {
        self.tx.add_label(id, label)
    }
    fn remove_label(&mut self, id: NodeId, label: TokenId) -> Result<bool> {
        self.tx.remove_label(id, label)
    }
    fn delete_node(&mut self, id: NodeId) -> Result<()> {
        self.tx.delete_node(id)
    }
    fn delete_rel(&mut self, id: RelId) -> Result<()> {
        self.tx.delete_rel(id)
    }
    fn create_vector_index(
        &mut self,
        name: &str,
        label: &str,
        property: &str,
        dimensions: i64,
        similarity: &str,
    ) -> Result<()> {
        crate::vector_schema::create_node_index(
            self.tx, name, label, property, dimensions, similarity,
        )
    }
    fn batch_begin(&mut self) -> Result<String> {
        if self.batch_store.is_none() {
            return Err(Error::new(
                Status::TransactionStartFailed,
                "A query with 'CALL { ... } IN TRANSACTIONS' can only be executed in an implicit \
                 transaction, but tried to execute in an explicit transaction.",
            ));
        }
        let id = NEXT_INNER_TX.fetch_add(1, Ordering::Relaxed);
        Ok(format!("neo4j-transaction-{id}"))
    }
    fn batch_commit(&mut self) -> Result<()> {
        let Some(store) = self.batch_store else { return Ok(()) };
        let read_only = self.tx.is_read_only();
        // The next batch must begin after this commit, so that it sees it: a snapshot taken
        // before would report the batch's own writes as concurrent changes. The placeholder
        // stands in (and stays, if the commit fails) while the batch commits.
        let done = std::mem::replace(self.tx, store.begin(read_only));
        done.commit()?;
        *self.tx = store.begin(read_only);
        Ok(())
    }
    fn open_csv(&mut self, url: &str) -> Result<arbor_exec::graph::CsvSource> {
        crate::load_csv::open(self.import_dir, url)
    }
    fn scratch_file(&mut self) -> Option<std::fs::File> {
        // An unnamed file (O_TMPFILE where the file system has it, else created and unlinked
        // at once): nothing is left in the directory, even after a crash.
        match tempfile::tempfile_in(self.data_dir?) {
            Ok(f) => Some(f),
            Err(e) => {
                tracing::warn!("no scratch file for a query in the data directory: {e}");
                None
            }
        }
    }
    fn batch_rollback(&mut self) -> Result<()> {
        let Some(store) = self.batch_store else {
            return Err(Error::new(
                Status::TransactionStartFailed,
                "CALL { ... } IN TRANSACTIONS cannot roll back a batch in an explicit transaction",
            ));
        };
        let failed = std::mem::replace(self.tx, store.begin(self.tx.is_read_only()));
        failed.rollback();
        Ok(())
    }
}

/// Ids of inner transactions, for `REPORT STATUS` (`neo4j-transaction-N`).
static NEXT_INNER_TX: AtomicU64 = AtomicU64::new(1);

/// The storage query of a spatial seek (`None` for another kind of range).
fn point_query(range: &ValueRange) -> Option<arbor_storage::PointQuery> {
    match range {
        ValueRange::Near { center, distance } => {
            Some(arbor_storage::PointQuery::Distance { center: *center, distance: *distance })
        }
        ValueRange::Within { lo, hi } => Some(arbor_storage::PointQuery::BBox { lo: *lo, hi: *hi }),
        _ => None,
    }
}
