//! The embedded API: read and write transactions ([`Tx`]) on a [`Database`], core graph access
//! (nodes by label or indexed property, labels, properties, relationships by type and
//! direction, the other end of a relationship), Cypher with parameters and streamed rows, and
//! the entry point to native traversals ([`crate::traversal`]).
//!
//! Values read through a [`Tx`]'s core access are references (`NodeId`, `RelId`, token ids)
//! valid within that transaction's snapshot; nothing is materialized unless asked for, which is
//! what makes native traversals cheap. Cypher rows are [`ResultValue`]s, as in session results:
//! owned, every entity materialised, so a row outlives its transaction.
//!
//! # Example
//!
//! ```
//! use arbor_engine::{Database, Direction, PropertyMap, ResultValue, Value};
//!
//! let db = Database::in_memory();
//! let (alice, bob) = db.write(|tx| {
//!     let alice = tx.create_node(&["Person"], [("name", Value::from("Alice"))])?;
//!     let bob = tx.create_node(&["Person"], [("name", Value::from("Bob"))])?;
//!     tx.create_relationship(alice, bob, "KNOWS", [("since", Value::Int(2020))])?;
//!     Ok((alice, bob))
//! })?;
//!
//! let mut tx = db.begin_read()?;
//! let person = tx.label("Person").unwrap();
//! let name = tx.property_key("name").unwrap();
//! let knows = tx.rel_type("KNOWS").unwrap();
//! assert_eq!(tx.find_nodes(person).count(), 2);
//! assert_eq!(tx.find_nodes_by_property(person, name, &Value::from("Bob")), vec![bob]);
//! let rels = tx.relationships(alice, Direction::Outgoing, &[knows]);
//! assert_eq!(rels.len(), 1);
//! assert_eq!(tx.other_node(rels[0].rel, alice), Some(bob));
//!
//! // Cypher with parameters; rows are computed as they are pulled.
//! let mut params = PropertyMap::new();
//! params.insert("name".into(), Value::from("Alice"));
//! let rows = tx.execute("MATCH (p:Person {name: $name})-[:KNOWS]->(f) RETURN f.name, f", params)?;
//! let rows: Vec<Vec<ResultValue>> = rows.collect::<Result<_, _>>()?;
//! assert_eq!(rows[0][0].as_str(), Some("Bob"));
//! // Nodes come whole: labels and properties, readable after the transaction ends.
//! assert!(matches!(&rows[0][1], ResultValue::Node(n) if n.labels == ["Person"]));
//! # Ok::<(), arbor_engine::Error>(())
//! ```

use std::collections::VecDeque;

use arbor_exec::Execution;
use arbor_model::graph::{Direction, Edge, TokenId, TokenKind};
use arbor_model::{Error, NodeId, PropertyMap, RelId, Result, ResultValue, Status, Value};
use arbor_storage::Transaction;

use crate::graph_impl::TxGraph;
use crate::session::{Database, Prepared, Record, RecordNames};
use crate::tokens::{Label, PropertyKey, RelInfo, RelType};
use crate::traversal::NodeRef;

impl Database {
    /// Starts a read-only transaction on the newest committed snapshot.
    pub fn begin_read(&self) -> Result<Tx> {
        self.check_open()?;
        Ok(Tx { db: self.clone(), tx: self.store().begin(true) })
    }

    /// Starts a read-write transaction. Dropping it without [`Tx::commit`] rolls it back.
    pub fn begin_write(&self) -> Result<Tx> {
        self.check_open()?;
        Ok(Tx { db: self.clone(), tx: self.store().begin(false) })
    }

    /// Runs `f` in a read-only transaction.
    pub fn read<R>(&self, f: impl FnOnce(&mut Tx) -> Result<R>) -> Result<R> {
        let mut tx = self.begin_read()?;
        f(&mut tx)
    }

    /// Runs `f` in a write transaction and commits it if `f` succeeds (rolls back otherwise).
    pub fn write<R>(&self, f: impl FnOnce(&mut Tx) -> Result<R>) -> Result<R> {
        let mut tx = self.begin_write()?;
        let r = f(&mut tx)?;
        tx.commit()?;
        Ok(r)
    }

    /// Runs one Cypher statement in its own write transaction and returns all its rows.
    pub fn execute(&self, query: &str, params: PropertyMap) -> Result<Vec<Vec<ResultValue>>> {
        self.write(|tx| tx.execute(query, params)?.collect())
    }
}

/// A transaction of the embedded API: a snapshot plus (for write transactions) pending writes.
pub struct Tx {
    db: Database,
    tx: Transaction,
}

impl std::fmt::Debug for Tx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tx").field("tx", &self.tx).finish()
    }
}

/// Nodes with a label, in id order (see [`Tx::find_nodes`]).
pub struct NodesWithLabel<'t> {
    tx: &'t Transaction,
    label: Option<TokenId>,
    next: u64,
}

impl Iterator for NodesWithLabel<'_> {
    type Item = NodeId;
    fn next(&mut self) -> Option<NodeId> {
        let n = self.tx.next_node(self.label, NodeId(self.next))?;
        self.next = n.0.saturating_add(1);
        Some(n)
    }
}

impl Tx {
    /// The storage snapshot, for the traversal framework.
    pub(crate) fn storage(&self) -> &Transaction {
        &self.tx
    }

    pub fn database(&self) -> &Database {
        &self.db
    }

    pub fn is_read_only(&self) -> bool {
        self.tx.is_read_only()
    }

    // ------------------------------------------------------------------------------ tokens

    /// The label token for `name`; `None` if no node ever had it (so none can match).
    pub fn label(&self, name: &str) -> Option<Label> {
        self.tx.token_id(TokenKind::Label, name).map(Label)
    }

    pub fn rel_type(&self, name: &str) -> Option<RelType> {
        self.tx.token_id(TokenKind::RelType, name).map(RelType)
    }

    pub fn property_key(&self, name: &str) -> Option<PropertyKey> {
        self.tx.token_id(TokenKind::PropertyKey, name).map(PropertyKey)
    }

    pub fn get_or_create_label(&self, name: &str) -> Result<Label> {
        self.tx.get_or_create_token(TokenKind::Label, name).map(Label)
    }

    pub fn get_or_create_rel_type(&self, name: &str) -> Result<RelType> {
        self.tx.get_or_create_token(TokenKind::RelType, name).map(RelType)
    }

    pub fn get_or_create_property_key(&self, name: &str) -> Result<PropertyKey> {
        self.tx.get_or_create_token(TokenKind::PropertyKey, name).map(PropertyKey)
    }

    pub fn label_name(&self, label: Label) -> Option<String> {
        self.tx.token_name(TokenKind::Label, label.0)
    }

    pub fn rel_type_name(&self, t: RelType) -> Option<String> {
        self.tx.token_name(TokenKind::RelType, t.0)
    }

    pub fn property_key_name(&self, k: PropertyKey) -> Option<String> {
        self.tx.token_name(TokenKind::PropertyKey, k.0)
    }

    // ------------------------------------------------------------------------------- reads

    /// Nodes with `label`, lazily, in id order.
    pub fn find_nodes(&self, label: Label) -> NodesWithLabel<'_> {
        NodesWithLabel { tx: &self.tx, label: Some(label.0), next: 0 }
    }

    /// Every node, lazily, in id order.
    pub fn all_nodes(&self) -> NodesWithLabel<'_> {
        NodesWithLabel { tx: &self.tx, label: None, next: 0 }
    }

    /// Nodes with `label` whose `key` equals `value` (Cypher equality), in id order. Uses an
    /// index on `(label, key)` if there is one, otherwise scans the label.
    pub fn find_nodes_by_property(
        &self,
        label: Label,
        key: PropertyKey,
        value: &Value,
    ) -> Vec<NodeId> {
        if let Some(ids) = self.tx.index_seek(label.0, key.0, value) {
            return ids;
        }
        self.find_nodes(label)
            .filter(|n| {
                self.tx
                    .node_property(*n, key.0)
                    .is_some_and(|v| arbor_model::ops::equals(&v, value) == Some(true))
            })
            .collect()
    }

    /// A handle on `id` for cheap repeated reads; `None` if the node is not visible.
    pub fn node(&self, id: NodeId) -> Option<NodeRef<'_>> {
        self.tx.node_exists(id).then(|| NodeRef::new(&self.tx, id))
    }

    pub fn node_exists(&self, id: NodeId) -> bool {
        self.tx.node_exists(id)
    }

    pub fn node_labels(&self, id: NodeId) -> Vec<Label> {
        self.tx.node_labels(id).into_iter().map(Label).collect()
    }

    pub fn node_has_label(&self, id: NodeId, label: Label) -> bool {
        self.tx.node_has_label(id, label.0)
    }

    /// `None` if the node has no such property (or is not visible).
    pub fn node_property(&self, id: NodeId, key: PropertyKey) -> Option<Value> {
        self.tx.node_property(id, key.0)
    }

    /// Properties in key order.
    pub fn node_properties(&self, id: NodeId) -> Vec<(PropertyKey, Value)> {
        self.tx.node_properties(id).into_iter().map(|(k, v)| (PropertyKey(k), v)).collect()
    }

    /// Properties by name.
    pub fn node_property_map(&self, id: NodeId) -> PropertyMap {
        self.tx
            .node_properties(id)
            .into_iter()
            .filter_map(|(k, v)| Some((self.tx.token_name(TokenKind::PropertyKey, k)?, v)))
            .collect()
    }

    /// The node's relationships in `dir` whose type is one of `types` (all if empty).
    pub fn relationships(&self, node: NodeId, dir: Direction, types: &[RelType]) -> Vec<Edge> {
        let mut out = Vec::new();
        self.relationships_into(node, dir, types, &mut out);
        out
    }

    /// Like [`Tx::relationships`], appending to a reusable buffer.
    pub fn relationships_into(
        &self,
        node: NodeId,
        dir: Direction,
        types: &[RelType],
        out: &mut Vec<Edge>,
    ) {
        NodeRef::new(&self.tx, node).relationships(dir, types, out)
    }

    pub fn degree(&self, node: NodeId, dir: Direction, types: &[RelType]) -> u64 {
        NodeRef::new(&self.tx, node).degree(dir, types)
    }

    pub fn relationship(&self, id: RelId) -> Option<RelInfo> {
        let (start, end, t) = self.tx.rel_info(id)?;
        Some(RelInfo { id, start, end, rel_type: RelType(t) })
    }

    /// The end of `rel` that is not `node`; `None` if `node` is neither end.
    pub fn other_node(&self, rel: RelId, node: NodeId) -> Option<NodeId> {
        let (s, e, _) = self.tx.rel_info(rel)?;
        if s == node {
            Some(e)
        } else if e == node {
            Some(s)
        } else {
            None
        }
    }

    pub fn rel_property(&self, id: RelId, key: PropertyKey) -> Option<Value> {
        self.tx.rel_property(id, key.0)
    }

    pub fn rel_properties(&self, id: RelId) -> Vec<(PropertyKey, Value)> {
        self.tx.rel_properties(id).into_iter().map(|(k, v)| (PropertyKey(k), v)).collect()
    }

    pub fn count_nodes(&self, label: Option<Label>) -> u64 {
        self.tx.count_nodes(label.map(|l| l.0))
    }

    // ------------------------------------------------------------------------------ writes

    /// Creates a node, creating label and property-key tokens as needed.
    pub fn create_node<'k>(
        &mut self,
        labels: &[&str],
        props: impl IntoIterator<Item = (&'k str, Value)>,
    ) -> Result<NodeId> {
        let labels = labels
            .iter()
            .map(|l| self.tx.get_or_create_token(TokenKind::Label, l))
            .collect::<Result<Vec<_>>>()?;
        let props = self.prop_tokens(props)?;
        self.tx.create_node(&labels, props)
    }

    /// Creates a node from resolved tokens (the bulk-loading path: no name lookups).
    pub fn create_node_with(
        &mut self,
        labels: &[Label],
        props: Vec<(PropertyKey, Value)>,
    ) -> Result<NodeId> {
        let labels: Vec<TokenId> = labels.iter().map(|l| l.0).collect();
        self.tx.create_node(&labels, props.into_iter().map(|(k, v)| (k.0, v)).collect())
    }

    /// Creates a relationship, creating the type and property-key tokens as needed.
    pub fn create_relationship<'k>(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: &str,
        props: impl IntoIterator<Item = (&'k str, Value)>,
    ) -> Result<RelId> {
        let t = self.tx.get_or_create_token(TokenKind::RelType, rel_type)?;
        let props = self.prop_tokens(props)?;
        self.tx.create_rel(start, end, t, props)
    }

    /// Creates a relationship from resolved tokens.
    pub fn create_relationship_with(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: RelType,
        props: Vec<(PropertyKey, Value)>,
    ) -> Result<RelId> {
        self.tx.create_rel(
            start,
            end,
            rel_type.0,
            props.into_iter().map(|(k, v)| (k.0, v)).collect(),
        )
    }

    fn prop_tokens<'k>(
        &self,
        props: impl IntoIterator<Item = (&'k str, Value)>,
    ) -> Result<Vec<(TokenId, Value)>> {
        props
            .into_iter()
            .map(|(k, v)| Ok((self.tx.get_or_create_token(TokenKind::PropertyKey, k)?, v)))
            .collect()
    }

    /// Sets (or with `Value::Null`, removes) a node property.
    pub fn set_node_property(&mut self, id: NodeId, key: &str, value: Value) -> Result<()> {
        let k = self.tx.get_or_create_token(TokenKind::PropertyKey, key)?;
        self.tx.set_node_property(id, k, value)
    }

    /// Sets (or with `Value::Null`, removes) a relationship property.
    pub fn set_rel_property(&mut self, id: RelId, key: &str, value: Value) -> Result<()> {
        let k = self.tx.get_or_create_token(TokenKind::PropertyKey, key)?;
        self.tx.set_rel_property(id, k, value)
    }

    /// Adds a label; returns whether it was new.
    pub fn add_label(&mut self, id: NodeId, label: &str) -> Result<bool> {
        let l = self.tx.get_or_create_token(TokenKind::Label, label)?;
        self.tx.add_label(id, l)
    }

    pub fn remove_label(&mut self, id: NodeId, label: Label) -> Result<bool> {
        self.tx.remove_label(id, label.0)
    }

    /// Deletes a node that has no relationships.
    pub fn delete_node(&mut self, id: NodeId) -> Result<()> {
        self.tx.delete_node(id)
    }

    pub fn delete_relationship(&mut self, id: RelId) -> Result<()> {
        self.tx.delete_rel(id)
    }

    // ------------------------------------------------------------------------------ cypher

    /// Runs a Cypher statement in this transaction. Rows are computed lazily as the returned
    /// iterator is advanced; compile errors are returned here, runtime errors as items.
    /// Schema commands (`CREATE INDEX` ...) take effect immediately, outside the transaction.
    pub fn execute(&mut self, query: &str, params: PropertyMap) -> Result<Rows<'_>> {
        self.db.check_open()?;
        match self.db.prepare(query)? {
            Prepared::Query(q, _) => {
                let columns = q.columns().to_vec();
                if q.is_explain() {
                    return Ok(Rows::new(&mut self.tx, columns, None, VecDeque::new()));
                }
                let exec = Execution::start(q, params)?;
                Ok(Rows::new(&mut self.tx, columns, Some(Box::new(exec)), VecDeque::new()))
            }
            Prepared::Explained(_) => {
                Ok(Rows::new(&mut self.tx, Vec::new(), None, VecDeque::new()))
            }
            Prepared::Schema(cmd) => {
                let (_, columns, rows) = crate::schema::run_schema(&self.db, &cmd, &params)?;
                Ok(Rows::new(&mut self.tx, columns, None, rows.into()))
            }
        }
    }

    // --------------------------------------------------------------------------- finishing

    /// Commits; returns the commit timestamp (the snapshot's for a transaction without writes).
    pub fn commit(self) -> Result<u64> {
        if self.tx.has_writes() {
            self.db.check_open()?;
        }
        self.tx.commit()
    }

    /// Discards all writes (dropping the transaction does the same).
    pub fn rollback(self) {
        self.tx.rollback()
    }
}

/// Streamed rows of a Cypher statement run in a [`Tx`]: owned [`ResultValue`]s, every entity
/// materialised, written from the executor's row as session results are (one path out).
pub struct Rows<'t> {
    tx: &'t mut Transaction,
    columns: Vec<String>,
    exec: Option<Box<Execution>>,
    /// Precomputed rows (schema and `SHOW` commands).
    rows: VecDeque<Vec<Value>>,
    /// The executor's row, reused from row to row.
    row: Vec<Value>,
    names: RecordNames,
}

impl<'t> Rows<'t> {
    fn new(
        tx: &'t mut Transaction,
        columns: Vec<String>,
        exec: Option<Box<Execution>>,
        rows: VecDeque<Vec<Value>>,
    ) -> Rows<'t> {
        Rows { tx, columns, exec, rows, row: Vec::new(), names: RecordNames::default() }
    }

    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The single value of a one-row, one-column result (e.g. `RETURN count(*)`).
    pub fn single(mut self) -> Result<ResultValue> {
        let row = self.next().transpose()?.ok_or_else(|| {
            Error::new(Status::RequestInvalid, "expected one row, the result is empty")
        })?;
        if self.next().is_some() {
            return Err(Error::new(Status::RequestInvalid, "expected one row, got more"));
        }
        row.into_iter()
            .next()
            .ok_or_else(|| Error::new(Status::RequestInvalid, "the result has no column"))
    }

    /// The next row, written from the executor's (or a precomputed) row into owned values.
    fn advance(&mut self) -> Result<Option<Vec<ResultValue>>> {
        let g = TxGraph { tx: self.tx, batch_store: None, import_dir: None, data_dir: None };
        if let Some(row) = self.rows.pop_front() {
            return Record::new(&row, &g, &mut self.names).to_values().map(Some);
        }
        let Some(exec) = self.exec.as_mut() else { return Ok(None) };
        let mut g = g;
        if !exec.next_raw(&mut g, &mut self.row)? {
            self.exec = None;
            return Ok(None);
        }
        let values = Record::new(&self.row, &g, &mut self.names).to_values();
        self.row.clear();
        values.map(Some)
    }
}

impl Iterator for Rows<'_> {
    type Item = Result<Vec<ResultValue>>;
    fn next(&mut self) -> Option<Result<Vec<ResultValue>>> {
        let r = self.advance();
        if r.is_err() {
            self.exec = None;
            self.rows.clear();
        }
        r.transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traversal::{Evaluation, Path, TraversalDescription, Uniqueness};

    fn chain(db: &Database, n: usize) -> Vec<NodeId> {
        db.write(|tx| {
            let mut ids = Vec::new();
            for i in 0..n {
                ids.push(tx.create_node(&["N"], [("i", Value::Int(i as i64))])?);
            }
            for w in ids.windows(2) {
                tx.create_relationship(w[0], w[1], "NEXT", [])?;
            }
            Ok(ids)
        })
        .unwrap()
    }

    #[test]
    fn core_access_and_cypher() {
        let db = Database::in_memory();
        let ids = chain(&db, 3);
        let mut tx = db.begin_read().unwrap();
        let n = tx.label("N").unwrap();
        let i = tx.property_key("i").unwrap();
        let next = tx.rel_type("NEXT").unwrap();
        assert_eq!(tx.find_nodes(n).collect::<Vec<_>>(), ids);
        assert_eq!(tx.find_nodes_by_property(n, i, &Value::Float(1.0)), vec![ids[1]]);
        assert_eq!(tx.relationships(ids[1], Direction::Both, &[next]).len(), 2);
        assert_eq!(tx.relationships(ids[1], Direction::Incoming, &[]).len(), 1);
        let r = tx.relationships(ids[0], Direction::Outgoing, &[])[0];
        assert_eq!(tx.other_node(r.rel, ids[0]), Some(ids[1]));
        assert_eq!(tx.other_node(r.rel, ids[2]), None);
        assert_eq!(tx.label("Missing"), None);
        let v = tx.execute("MATCH (n:N) RETURN count(n)", PropertyMap::new()).unwrap().single();
        assert!(matches!(v, Ok(ResultValue::Int(3))));
        // Read-only transactions refuse writes.
        let err = tx.execute("CREATE (:X)", PropertyMap::new()).unwrap().next();
        assert!(matches!(err, Some(Err(_))));
    }

    #[test]
    fn write_rolls_back_on_error() {
        let db = Database::in_memory();
        let r: Result<()> = db.write(|tx| {
            tx.create_node(&["X"], [])?;
            Err(Error::new(Status::ArgumentError, "stop"))
        });
        assert!(r.is_err());
        assert_eq!(db.begin_read().unwrap().count_nodes(None), 0);
    }

    /// A small diamond with a cycle back: a->b, a->c, b->d, c->d, d->a.
    fn diamond(db: &Database) -> Vec<NodeId> {
        db.write(|tx| {
            let ids: Vec<NodeId> = (0..4)
                .map(|i| tx.create_node(&["V"], [("i", Value::Int(i))]))
                .collect::<Result<_>>()?;
            for (s, e) in [(0, 1), (0, 2), (1, 3), (2, 3), (3, 0)] {
                tx.create_relationship(ids[s], ids[e], "E", [])?;
            }
            Ok(ids)
        })
        .unwrap()
    }

    fn ends(
        td: &TraversalDescription<
            impl crate::traversal::Expander,
            impl crate::traversal::Evaluator,
        >,
        tx: &Tx,
        s: NodeId,
    ) -> Vec<u64> {
        td.traverse(tx, s).map(|n| n.0).collect()
    }

    #[test]
    fn traverse_reuses_pooled_workspaces() {
        let db = Database::in_memory();
        let ids = diamond(&db);
        let tx = db.begin_read().unwrap();
        let e = tx.rel_type("E").unwrap();
        let bfs = TraversalDescription::new()
            .relationships(e, Direction::Outgoing)
            .uniqueness(Uniqueness::NodePath)
            .breadth_first();
        let pool = db.traversal_pool();
        assert_eq!(pool.idle().0, 0);
        let first = ends(&bfs, &tx, ids[0]);
        // Given back on drop, with the memory it grew.
        let (idle, bytes) = pool.idle();
        assert_eq!(idle, 1);
        assert!(bytes > 0);
        {
            // Two traversals at once: the second gets a new workspace; both come back.
            let mut a = bfs.traverse(&tx, ids[0]);
            let mut b = bfs.traverse(&tx, ids[1]);
            assert!(a.next().is_some() && b.next().is_some());
            assert_eq!(pool.idle().0, 0);
        }
        assert_eq!(pool.idle().0, 2);
        // A reused workspace starts clean: same answer again.
        assert_eq!(ends(&bfs, &tx, ids[0]), first);
    }

    #[test]
    fn orders_and_uniqueness() {
        let db = Database::in_memory();
        let ids = diamond(&db);
        let tx = db.begin_read().unwrap();
        let e = tx.rel_type("E").unwrap();
        let base = TraversalDescription::new().relationships(e, Direction::Outgoing);
        let n = |i: usize| ids[i].0;
        // Node-global: every node once; depth-first goes a, b, d before c.
        assert_eq!(ends(&base, &tx, ids[0]), vec![n(0), n(1), n(3), n(2)]);
        assert_eq!(ends(&base.clone().breadth_first(), &tx, ids[0]), vec![n(0), n(1), n(2), n(3)]);
        // Node-path: d is reached twice (via b and via c); the cycle back to a is cut.
        let np = base.clone().uniqueness(Uniqueness::NodePath);
        assert_eq!(ends(&np, &tx, ids[0]), vec![n(0), n(1), n(3), n(2), n(3)]);
        assert_eq!(
            ends(&np.clone().breadth_first(), &tx, ids[0]),
            vec![n(0), n(1), n(2), n(3), n(3)]
        );
        // Relationship-path: the cycle d->a is followed once per path.
        let rp = base.clone().uniqueness(Uniqueness::RelationshipPath);
        assert_eq!(rp.traverse(&tx, ids[0]).count(), 11);
        assert_eq!(rp.clone().breadth_first().traverse(&tx, ids[0]).count(), 11);
        // Relationship-global: each of the 5 relationships once, plus the start.
        let rg = base.clone().uniqueness(Uniqueness::RelationshipGlobal);
        assert_eq!(rg.traverse(&tx, ids[0]).count(), 6);
        assert_eq!(rg.clone().breadth_first().traverse(&tx, ids[0]).count(), 6);
        // None with a max depth: paths of length 0..=3 = 1 + 2 + 2 + 2.
        let none = base.clone().uniqueness(Uniqueness::None).max_depth(3);
        assert_eq!(none.traverse(&tx, ids[0]).count(), 7);
        assert_eq!(none.clone().breadth_first().traverse(&tx, ids[0]).count(), 7);
    }

    #[test]
    fn evaluator_prunes_and_paths_are_consistent() {
        let db = Database::in_memory();
        let ids = diamond(&db);
        let tx = db.begin_read().unwrap();
        let e = tx.rel_type("E").unwrap();
        let b = ids[1];
        // Exclude the start, prune at b: reach b, c, d (via c).
        let td = TraversalDescription::new().relationships(e, Direction::Outgoing).evaluate_with(
            move |p: &Path<'_>| Evaluation::of(p.length() > 0, p.end_node().id() != b),
        );
        for bfs in [false, true] {
            let td = if bfs { td.clone().breadth_first() } else { td.clone() };
            let mut t = td.traverse(&tx, ids[0]);
            let mut got = Vec::new();
            while let Some(p) = t.next_path() {
                let owned = p.to_owned_path();
                assert_eq!(owned.nodes.len(), owned.rels.len() + 1);
                assert_eq!(owned.nodes[0], ids[0]);
                assert_eq!(*owned.nodes.last().unwrap(), p.end_node().id());
                assert_eq!(p.last_relationship(), owned.rels.last().copied());
                // Every step follows a real relationship.
                for (i, r) in owned.rels.iter().enumerate() {
                    assert_eq!(tx.other_node(*r, owned.nodes[i]), Some(owned.nodes[i + 1]));
                }
                got.push(owned.nodes.last().unwrap().0);
            }
            got.sort();
            assert_eq!(got, vec![ids[1].0, ids[2].0, ids[3].0], "bfs={bfs}");
        }
    }

    #[test]
    fn workspace_reuse_gives_same_results() {
        let db = Database::in_memory();
        let ids = diamond(&db);
        let tx = db.begin_read().unwrap();
        let mut ws = crate::traversal::Workspace::default();
        let td = TraversalDescription::new();
        let first: Vec<NodeId> = td.traverse_in(&tx, ids[0], &mut ws).collect();
        assert_eq!(first.len(), 4);
        for _ in 0..3 {
            let again: Vec<NodeId> = td.traverse_in(&tx, ids[0], &mut ws).collect();
            assert_eq!(again, first);
        }
        // Default expander follows both directions: from d everything is reachable.
        assert_eq!(td.traverse(&tx, ids[3]).count(), 4);
    }
}
