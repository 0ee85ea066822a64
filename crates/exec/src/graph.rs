//! The seam between query execution and storage.
//!
//! Operators never hold a borrow of the graph between calls: every call receives `&dyn Graph` or
//! `&mut dyn Graph` and iteration is by cursor (the last id seen), so a result stream can be
//! suspended between Bolt `PULL`s and writes can interleave with reads in one statement.
//! The engine implements this seam over a storage transaction.
//!
//! The seam has two halves: [`GraphRead`] (tokens, nodes, relationships, index seeks, counts)
//! and [`GraphWrite`]` : GraphRead` (creating tokens and entities, setting and removing
//! properties and labels, deleting, committing a batch). [`Graph`] names the write half, the
//! one object every operator is handed (`&mut dyn Graph`). We keep that one trait object
//! rather than passing a `&dyn GraphRead` beside it because a `dyn GraphWrite` vtable holds
//! the read half's methods too: a read on the hot path (expanding, scanning, reading a
//! property) stays one indirect call, with no second object or double dispatch. Code that only
//! reads takes `&dyn GraphRead` (plan estimates, for instance) and gets it from a `&dyn Graph`
//! by trait upcasting.

use arbor_model::{Error, NodeId, RelId, Result, Status, Value};

pub use arbor_model::graph::{Direction, Edge, TokenId, TokenKind};

/// Counters of what a statement changed, as drivers read them (`nodes-created`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub nodes_created: u64,
    pub nodes_deleted: u64,
    pub relationships_created: u64,
    pub relationships_deleted: u64,
    pub properties_set: u64,
    pub labels_added: u64,
    pub labels_removed: u64,
    pub indexes_added: u64,
    pub indexes_removed: u64,
    pub constraints_added: u64,
    pub constraints_removed: u64,
    /// User administration changes (`system-updates`).
    pub system_updates: u64,
}

/// What a range index seek asks for.
#[derive(Clone, Debug)]
pub enum ValueRange {
    /// Values between the bounds (`(value, inclusive)`; `None` = unbounded, not both).
    Between { lo: Option<(Value, bool)>, hi: Option<(Value, bool)> },
    /// Strings starting with the prefix.
    Prefix(String),
    /// Strings containing the text (a TEXT index scan).
    Contains(String),
    /// Strings ending with the text (a TEXT index scan).
    EndsWith(String),
    /// Points within `distance` of `center` (a POINT index seek; a superset the caller
    /// filters).
    Near { center: arbor_model::Point, distance: f64 },
    /// Points inside the box `point.withinBBox(p, lo, hi)` accepts (a POINT index seek).
    Within { lo: arbor_model::Point, hi: arbor_model::Point },
}

/// The relationships [`GraphRead::node_expand_probe`] lists: those `node_edges` would append
/// to `edges`.
pub struct ExpandArgs<'a> {
    pub dir: Direction,
    pub types: &'a [TokenId],
    pub edges: &'a mut Vec<Edge>,
}

/// The label tests and property reads [`GraphRead::node_expand_probe`] makes: those of
/// `node_probe`.
#[derive(Clone, Copy)]
pub struct ProbeArgs<'a> {
    pub labels: &'a [TokenId],
    pub keys: &'a [TokenId],
}

/// What [`GraphRead::count_trails`] counts: the trails (paths that repeat no relationship)
/// from `start` of `1..=max` relationships, at least `min`, over relationships of `types` (any if
/// empty) followed in `dir`, whose end node has every label of `labels` and, if `key` is given,
/// the value `true` for that property (the filter `b:L AND b.key`).
pub struct TrailCount<'a> {
    pub start: NodeId,
    pub dir: Direction,
    pub types: &'a [TokenId],
    pub min: u64,
    pub max: u64,
    pub labels: &'a [TokenId],
    pub key: Option<TokenId>,
}

/// The path stack [`GraphRead::count_trails`] enumerates in: the caller's, reused across calls
/// so that counting allocates nothing once warm.
pub type TrailStack = crate::traverse::DepthFirst<Edge, true>;

/// Read access to the graph as one transaction sees it: its snapshot plus its own writes.
/// Reads of an entity deleted in this transaction return `None`/empty.
pub trait GraphRead {
    // ---- tokens ----
    fn token_id(&self, kind: TokenKind, name: &str) -> Option<TokenId>;
    fn token_name(&self, kind: TokenKind, id: TokenId) -> Option<String>;
    /// All tokens of a kind, in id order.
    fn tokens(&self, kind: TokenKind) -> Vec<(TokenId, String)>;

    /// The first visible node with id `>= from` (and the label, if given), in id order.
    fn next_node(&self, label: Option<TokenId>, from: NodeId) -> Option<NodeId>;
    /// Appends to `out` the visible nodes with id `>= from` (and the label, if given), in id
    /// order, stopping after `max` of them; fewer than `max` means the scan is complete. The
    /// same nodes as repeated `next_node` calls; the engine's implementation does the
    /// per-call work (locks, label lookup) once per batch. Only valid while the graph does
    /// not change, i.e. in read-only statements.
    fn next_nodes(&self, label: Option<TokenId>, from: NodeId, max: usize, out: &mut Vec<NodeId>) {
        let mut cur = from;
        for _ in 0..max {
            let Some(id) = self.next_node(label, cur) else {
                return;
            };
            out.push(id);
            cur = NodeId(id.0 + 1);
        }
    }
    fn node_exists(&self, id: NodeId) -> bool;
    fn node_labels(&self, id: NodeId) -> Vec<TokenId>;
    fn node_has_label(&self, id: NodeId, label: TokenId) -> bool;
    /// `None` if the node has no such property (or does not exist).
    fn node_property(&self, id: NodeId, key: TokenId) -> Option<Value>;
    fn node_properties(&self, id: NodeId) -> Vec<(TokenId, Value)>;
    /// Whether node `id` has every label in `labels`; if it does, the value of each property
    /// in `keys` (`Value::Null` where missing) is appended to `out`, exactly as
    /// `node_has_label` and `node_property` answer. What a filter such as `n:L AND n.k`
    /// reads of one node, for one lookup of the node instead of one per label and property
    /// (the engine resolves it once into a storage node handle).
    fn node_probe(
        &self,
        id: NodeId,
        labels: &[TokenId],
        keys: &[TokenId],
        out: &mut Vec<Value>,
    ) -> bool {
        if !labels.iter().all(|l| self.node_has_label(id, *l)) {
            return false;
        }
        out.extend(keys.iter().map(|k| self.node_property(id, *k).unwrap_or(Value::Null)));
        true
    }
    /// What a depth-first expansion reads of a node it reaches: its relationships
    /// (`node_edges(id, ..., edges)`, if `expand` is given) and its filter's probe
    /// (`node_probe(id, labels, keys, vals)`, if `probe` is given; the answer, `true` without
    /// it), exactly as those two calls answer. The engine resolves the node once for both
    /// instead of once per call.
    fn node_expand_probe(
        &self,
        id: NodeId,
        expand: Option<ExpandArgs<'_>>,
        probe: Option<ProbeArgs<'_>>,
        vals: &mut Vec<Value>,
    ) -> bool {
        if let Some(x) = expand {
            self.node_edges(id, x.dir, x.types, x.edges);
        }
        match probe {
            Some(p) => self.node_probe(id, p.labels, p.keys, vals),
            None => true,
        }
    }
    /// The number of trails [`TrailCount`] describes, counted by the implementation in one call
    /// (the engine walks its storage handles directly, without a seam call per node), or `None`
    /// where it has no such path or met an end whose `key` holds neither a boolean nor nothing
    /// (the caller then counts with `node_expand_probe` steps, which raise the filter's error).
    /// Exactly the count a depth-first enumeration of the trails with `node_edges`,
    /// `node_has_label` and `node_property` gives, in a read-only statement. `check` is called
    /// every 1,024 steps; its error ends the count.
    fn count_trails(
        &self,
        _q: &TrailCount<'_>,
        _stack: &mut TrailStack,
        _check: &mut dyn FnMut() -> Result<()>,
    ) -> Option<Result<u64>> {
        None
    }
    /// Appends to `out` the value of property `key` of each visible node in `ids`, exactly as
    /// `node_property` reads it, with `Value::Null` where a node lacks it: one call per batch
    /// of a scan, which the engine answers from a per-key column of the storage base where it
    /// can.
    fn node_property_batch(&self, ids: &[NodeId], key: TokenId, out: &mut Vec<Value>) {
        out.extend(ids.iter().map(|id| self.node_property(*id, key).unwrap_or(Value::Null)));
    }
    /// The typed form of [`Self::node_property_batch`] for integer properties: appends to
    /// `vals` and `present` each node's value of `key` (`0` and `false` where it lacks it) and
    /// returns `true`, or returns `false` (what it appended is then meaningless) where some
    /// node holds another type or the implementation cannot read the batch this way; the
    /// engine gathers the batch from the base's integer column in one pass (one slice for a
    /// run of ids) and overlays only the rows its transaction sees in another version.
    fn node_int_batch(
        &self,
        ids: &[NodeId],
        key: TokenId,
        vals: &mut Vec<i64>,
        present: &mut Vec<bool>,
    ) -> bool {
        for id in ids {
            match self.node_property(*id, key) {
                Some(Value::Int(v)) => {
                    vals.push(v);
                    present.push(true);
                }
                None => {
                    vals.push(0);
                    present.push(false);
                }
                Some(_) => return false,
            }
        }
        true
    }
    /// Relationships of `node` in `dir` whose type is in `types` (all types if empty), appended
    /// to `out`.
    fn node_edges(&self, node: NodeId, dir: Direction, types: &[TokenId], out: &mut Vec<Edge>);
    /// Calls `f` for every relationship `node_edges` would append, in the same order. The
    /// engine's implementation allocates nothing (this default collects into a `Vec` first).
    fn for_each_edge(
        &self,
        node: NodeId,
        dir: Direction,
        types: &[TokenId],
        f: &mut dyn FnMut(Edge),
    ) {
        let mut v = Vec::new();
        self.node_edges(node, dir, types, &mut v);
        v.into_iter().for_each(f);
    }
    /// Number of relationships as `node_edges` would list them.
    fn degree(&self, node: NodeId, dir: Direction, types: &[TokenId]) -> u64;
    /// Nodes with `label` whose property `key` equals `value`, if an index can answer that;
    /// `None` when there is no usable index (the caller then scans).
    fn index_seek(&self, label: TokenId, key: TokenId, value: &Value) -> Option<Vec<NodeId>>;
    /// [`GraphRead::index_seek`] into `out` (cleared first), reusing its allocation; `false`
    /// when there is no usable index (`out` left empty).
    fn index_seek_into(
        &self,
        label: TokenId,
        key: TokenId,
        value: &Value,
        out: &mut Vec<NodeId>,
    ) -> bool {
        out.clear();
        match self.index_seek(label, key, value) {
            Some(found) => {
                *out = found;
                true
            }
            None => false,
        }
    }
    /// Nodes with `label` whose property `key` lies in `range` (Cypher comparison semantics),
    /// in id order, if an index can answer that; `None` when there is no usable index or the
    /// range's values are not of a type an index orders (the caller then scans).
    fn index_seek_range(
        &self,
        label: TokenId,
        key: TokenId,
        range: &ValueRange,
    ) -> Option<Vec<NodeId>> {
        let _ = (label, key, range);
        None
    }
    /// Nodes with `label` whose properties `keys` equal `values` pairwise, if a composite
    /// index on exactly `(label, keys)` answers; `None` makes the caller scan.
    fn index_seek_composite(
        &self,
        label: TokenId,
        keys: &[TokenId],
        values: &[Value],
    ) -> Option<Vec<NodeId>> {
        let _ = (label, keys, values);
        None
    }
    /// Nodes with `label` whose composite index on exactly `keys` has values equal to `eq`
    /// for the first `eq.len()` keys and, for the next key, a value in `range`, in id order, if
    /// that index answers; `None` makes the caller scan.
    fn index_seek_composite_range(
        &self,
        label: TokenId,
        keys: &[TokenId],
        eq: &[Value],
        range: &ValueRange,
    ) -> Option<Vec<NodeId>> {
        let _ = (label, keys, eq, range);
        None
    }
    /// Relationships of type `ty` whose properties `keys` equal `values` pairwise, in id
    /// order, if a relationship index on exactly `(ty, keys)` answers; `None` makes the caller
    /// scan the type.
    fn rel_index_seek(
        &self,
        ty: TokenId,
        keys: &[TokenId],
        values: &[Value],
    ) -> Option<Vec<RelId>> {
        let _ = (ty, keys, values);
        None
    }
    /// Relationships of type `ty` whose property `key` lies in `range` (Cypher comparison
    /// semantics), in id order, if a relationship index on exactly `(ty, [key])` answers;
    /// `None` when there is no usable index or the range's values are not of a type an index
    /// orders (the caller then scans the type).
    fn rel_index_seek_range(
        &self,
        ty: TokenId,
        key: TokenId,
        range: &ValueRange,
    ) -> Option<Vec<RelId>> {
        let _ = (ty, key, range);
        None
    }
    /// Number of visible nodes (with the label, if given).
    fn count_nodes(&self, label: Option<TokenId>) -> u64;

    fn rel_exists(&self, id: RelId) -> bool;
    /// `(start, end, type)` of a visible relationship.
    fn rel_info(&self, id: RelId) -> Option<(NodeId, NodeId, TokenId)>;
    fn rel_property(&self, id: RelId, key: TokenId) -> Option<Value>;
    fn rel_properties(&self, id: RelId) -> Vec<(TokenId, Value)>;
    /// The first visible relationship with id `>= from` (and one of the types, if non-empty).
    fn next_rel(&self, types: &[TokenId], from: RelId) -> Option<RelId>;

    /// Whether this entity was deleted by this transaction (reading it is then an error in some
    /// contexts, e.g. property access).
    fn node_deleted_in_tx(&self, id: NodeId) -> bool;
    fn rel_deleted_in_tx(&self, id: RelId) -> bool;

    /// Number of visible relationships (of one of the types, if non-empty), if known cheaply;
    /// used for EXPLAIN/PROFILE row estimates only.
    fn count_rels(&self, types: &[TokenId]) -> Option<u64> {
        let _ = types;
        None
    }
    /// Number of visible relationships of type `ty` (any if `None`) from a node with label
    /// `start` to a node with label `end` (any if `None`), if a count store answers it (at
    /// most one label given); `None` makes the caller count by scanning.
    fn count_rels_by_labels(
        &self,
        start: Option<TokenId>,
        ty: Option<TokenId>,
        end: Option<TokenId>,
    ) -> Option<u64> {
        let _ = (start, ty, end);
        None
    }
    /// The commit timestamp this transaction reads at, if it has written nothing itself: it
    /// then sees exactly the committed state at that timestamp, so results derived from it can
    /// be shared with other such transactions (the full-text procedures cache on it).
    fn committed_snapshot(&self) -> Option<u64> {
        None
    }
    /// The commit timestamp this transaction's snapshot is at, and the ids of the
    /// relationships (`rels`) or nodes it has written itself, if the graph knows them (the
    /// maintained full-text indexes re-check exactly those against the transaction). `None`:
    /// the caller must read everything through the transaction.
    fn snapshot_with_writes(&self, rels: bool) -> Option<(u64, Vec<u64>)> {
        let _ = rels;
        None
    }
    /// Waits until the named index (or every index) is online; the default has no
    /// background population, so everything is always online.
    fn await_indexes(&self, name: Option<&str>, timeout: std::time::Duration) -> Result<()> {
        let _ = (name, timeout);
        Ok(())
    }
    /// The `k` nodes (with `relationships`, relationships) nearest to `query` in the vector
    /// index `index`, best first, as `(id, score)`: this transaction's snapshot plus its own
    /// writes. Argument errors carry Neo4j's exception message (the procedure wraps it). The
    /// default has no vector indexes.
    fn vector_query(
        &self,
        index: &str,
        relationships: bool,
        k: usize,
        query: &[f32],
    ) -> Result<Vec<(u64, f64)>> {
        let _ = (relationships, k, query);
        Err(arbor_model::Error::argument(format!("There is no such vector schema index: {index}")))
    }
}

/// Write access to the graph in one transaction. Every method fails with
/// `ForbiddenOnReadOnly` in a read-only transaction (except `get_or_create_token`: tokens are
/// created outside transactions).
pub trait GraphWrite: GraphRead {
    /// Finds or creates a token. Never fails for a valid name.
    fn get_or_create_token(&mut self, kind: TokenKind, name: &str) -> Result<TokenId>;
    fn create_node(&mut self, labels: &[TokenId], props: Vec<(TokenId, Value)>) -> Result<NodeId>;
    fn create_rel(
        &mut self,
        start: NodeId,
        end: NodeId,
        rel_type: TokenId,
        props: Vec<(TokenId, Value)>,
    ) -> Result<RelId>;
    /// Sets (or with `Value::Null`, removes) a property. Storable values only: scalars,
    /// temporals, points, and homogeneous lists of those.
    fn set_node_property(&mut self, id: NodeId, key: TokenId, value: Value) -> Result<()>;
    fn set_rel_property(&mut self, id: RelId, key: TokenId, value: Value) -> Result<()>;
    /// Returns whether the label was newly added.
    fn add_label(&mut self, id: NodeId, label: TokenId) -> Result<bool>;
    /// Returns whether the label was present.
    fn remove_label(&mut self, id: NodeId, label: TokenId) -> Result<bool>;
    /// Deletes a node; fails with `DeleteNodeWithRelationships` if it still has relationships.
    fn delete_node(&mut self, id: NodeId) -> Result<()>;
    fn delete_rel(&mut self, id: RelId) -> Result<()>;
    /// `db.index.vector.createNodeIndex(name, label, property, dimensions, similarity)`: a
    /// vector index, committed on its own as every schema change. The default cannot.
    fn create_vector_index(
        &mut self,
        name: &str,
        label: &str,
        property: &str,
        dimensions: i64,
        similarity: &str,
    ) -> Result<()> {
        let _ = (label, property, dimensions, similarity);
        Err(arbor_model::Error::new(
            arbor_model::Status::ExecutionFailed,
            format!("this graph cannot create the vector index {name}"),
        ))
    }
    /// `CALL { ... } IN TRANSACTIONS`: an inner transaction starts; returns its id for
    /// `REPORT STATUS` (`neo4j-transaction-N`). Fails with `TransactionStartFailed` where
    /// inner transactions cannot be committed (an explicit transaction). The default keeps one
    /// transaction for the whole statement (same final state when no batch fails).
    fn batch_begin(&mut self) -> Result<String> {
        Ok(String::from("neo4j-transaction-0"))
    }
    /// Commits the current inner transaction; what follows (the next batch and the rest of
    /// the statement) reads a snapshot that includes it.
    fn batch_commit(&mut self) -> Result<()> {
        Ok(())
    }
    /// `LOAD CSV`: opens `url` (the engine resolves `file:///` URLs inside its import
    /// directory). Fails with `ExternalResourceFailed`, as by default here.
    fn open_csv(&mut self, url: &str) -> Result<CsvSource> {
        Err(Error::new(
            Status::ExternalResourceFailed,
            format!("Cannot load from URL '{url}': LOAD CSV is not available here ()"),
        ))
    }
    /// A scratch file for an operator whose state would pass the query memory (aggregation
    /// spills the rows of groups that do not fit), gone once dropped. `None` (as by default
    /// here): the state stays in memory and the memory limit fails the query.
    fn scratch_file(&mut self) -> Option<std::fs::File> {
        None
    }
    /// Rolls the current inner transaction back (`ON ERROR CONTINUE | BREAK`); what follows
    /// reads the latest committed state.
    fn batch_rollback(&mut self) -> Result<()> {
        Err(Error::new(
            Status::TransactionStartFailed,
            "this graph cannot roll back a batch of CALL { ... } IN TRANSACTIONS",
        ))
    }
}

/// A file `LOAD CSV` reads, opened by [`GraphWrite::open_csv`].
pub struct CsvSource {
    /// The bytes, streamed (never read whole).
    pub reader: Box<dyn std::io::BufRead + Send>,
    /// What `file()` returns: the path the URL resolved to.
    pub file: String,
}

/// The whole seam, as operators receive it: the write half, whose trait object also answers
/// every read.
pub use self::GraphWrite as Graph;
