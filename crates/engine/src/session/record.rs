//! [`Record`]: one result row as the engine hands it to a streaming consumer (the Bolt
//! encoder), and the total conversion that writes it into an [`arbor_model::ResultWriter`].
//!
//! A record borrows the executor's row and the transaction's graph for the time of one sink
//! call. Its only way out is [`Record::write`] (or [`Record::to_values`], the same written into
//! an owned [`ResultBuilder`]), so a transaction-bound reference cannot leave the engine: [`write_value`] matches every
//! [`Value`] variant, resolving a reference against the graph as it writes it (labels, type
//! and properties read from storage, names from a per-result cache, no property map built).

use arbor_exec::graph::{GraphRead, TokenId, TokenKind};
use arbor_model::result_value::write_stored;
use arbor_model::{
    NodeData, NodeHead, NodeId, PathData, PathLayout, PathPart, PropertyMap, RelData, RelHead,
    RelId, Result, ResultBuilder, ResultValue, ResultWriter, Scalar, Value,
};
use arbor_storage::Transaction;

use crate::graph_impl::TxGraph;

/// One result row, borrowed for one call of the pull sink.
pub struct Record<'a> {
    values: &'a [Value],
    graph: Option<&'a dyn GraphRead>,
    /// The transaction behind `graph`, asked after writing whether a read failed.
    tx: Option<&'a Transaction>,
    names: &'a mut Names,
}

impl<'a> Record<'a> {
    pub(crate) fn new(values: &'a [Value], g: &'a TxGraph<'_>, names: &'a mut Names) -> Self {
        Record { values, graph: Some(g), tx: Some(&*g.tx), names }
    }

    /// A base page that could not be read (I/O, checksum) left a read of this record without
    /// its answer: the record fails (and the consumer drops what it wrote) instead of going
    /// out computed without it.
    fn check_reads(&self) -> Result<()> {
        match self.tx.and_then(|tx| tx.read_error()) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// A record of values that hold no entity reference (a test double's rows). Should one
    /// hold a reference anyway, it is written with its id only: there is no graph to read.
    pub fn detached(values: &'a [Value], names: &'a mut Names) -> Self {
        Record { values, graph: None, tx: None, names }
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Writes column `i` (nothing if there is none).
    pub fn write_column(&mut self, i: usize, w: &mut dyn ResultWriter) -> Result<()> {
        match self.values.get(i) {
            Some(v) => write_value(v, self.graph, self.names, w)?,
            None => return Ok(()),
        }
        self.check_reads()
    }

    /// Writes every column, in order.
    pub fn write(&mut self, w: &mut dyn ResultWriter) -> Result<()> {
        for v in self.values {
            write_value(v, self.graph, self.names, w)?;
        }
        self.check_reads()
    }

    /// The row as owned values, every entity materialised: written into a
    /// [`ResultBuilder`], the one way a row leaves the engine.
    pub fn to_values(&mut self) -> Result<Vec<ResultValue>> {
        let mut b = ResultBuilder::new();
        self.write(&mut b)?;
        b.take()
    }
}

/// Token names of one result, cached: a stream of whole nodes names the same few labels and
/// keys over and over, and asking storage takes its token lock. Token ids are never reused and
/// a name never changes, so a name once found stays right.
#[derive(Default)]
pub struct Names {
    by_kind: [Vec<Option<Box<str>>>; 3],
    /// The keys of the last property list put in name order, and that order (positions in the
    /// list): entities of one label mostly list the same keys in the same storage order, so
    /// their order is found again, not sorted again.
    last_keys: Vec<TokenId>,
    last_order: Vec<usize>,
}

/// Token ids above this are looked up each time (the cache is a dense vector).
const MAX_CACHED_TOKEN: usize = 1 << 16;

impl Names {
    /// Whether token `t` can be cached (a dense vector up to [`MAX_CACHED_TOKEN`]).
    fn cached(t: TokenId) -> bool {
        (t as usize) < MAX_CACHED_TOKEN
    }

    /// Caches the name of `t` (if it has one); [`Names::get`] then answers without the graph.
    fn fill(&mut self, g: &dyn GraphRead, kind: TokenKind, t: TokenId) {
        let i = t as usize;
        let names = &mut self.by_kind[kind.index()];
        if !Names::cached(t) || matches!(names.get(i), Some(Some(_))) {
            return;
        }
        if let Some(n) = g.token_name(kind, t) {
            if names.len() <= i {
                names.resize(i + 1, None);
            }
            names[i] = Some(n.into_boxed_str());
        }
    }

    /// Drops the properties whose key has no name and leaves in `last_order` the positions of
    /// the others in key-name order (the order `NodeData` holds them in).
    fn order_props(&mut self, props: &mut Vec<(TokenId, Value)>) {
        props.retain(|(k, _)| self.get(TokenKind::PropertyKey, *k).is_some());
        let same = props.len() == self.last_keys.len()
            && props.iter().zip(&self.last_keys).all(|((k, _), l)| k == l);
        if same {
            return;
        }
        self.last_keys.clear();
        self.last_keys.extend(props.iter().map(|(k, _)| *k));
        self.last_order.clear();
        self.last_order.extend(0..props.len());
        let keys = &self.by_kind[TokenKind::PropertyKey.index()];
        let name = |t: TokenId| keys.get(t as usize).and_then(|n| n.as_deref());
        let last = &self.last_keys;
        self.last_order.sort_unstable_by(|&a, &b| name(last[a]).cmp(&name(last[b])));
    }

    fn get(&self, kind: TokenKind, t: TokenId) -> Option<&str> {
        self.by_kind[kind.index()].get(t as usize).and_then(|n| n.as_deref())
    }

    /// The name of `t`, cached or (past the cache) looked up.
    fn name(&mut self, g: &dyn GraphRead, kind: TokenKind, t: TokenId) -> Option<String> {
        self.fill(g, kind, t);
        match self.get(kind, t) {
            Some(n) => Some(n.to_string()),
            None => g.token_name(kind, t),
        }
    }
}

/// Writes `v`, resolving entity references against `g`: the total conversion (every variant
/// has its arm, so a new kind of value fails to compile here rather than slip through).
fn write_value(
    v: &Value,
    g: Option<&dyn GraphRead>,
    names: &mut Names,
    w: &mut dyn ResultWriter,
) -> Result<()> {
    match v {
        Value::Null => w.scalar(Scalar::Null),
        Value::Bool(b) => w.scalar(Scalar::Bool(*b)),
        Value::Int(i) => w.scalar(Scalar::Int(*i)),
        Value::Float(f) => w.scalar(Scalar::Float(*f)),
        Value::String(s) => w.scalar(Scalar::String(s)),
        Value::Bytes(b) => w.scalar(Scalar::Bytes(b)),
        Value::Date(d) => w.scalar(Scalar::Date(d)),
        Value::Time(t) => w.scalar(Scalar::Time(t)),
        Value::LocalTime(t) => w.scalar(Scalar::LocalTime(t)),
        Value::DateTime(t) => w.scalar(Scalar::DateTime(t)),
        Value::LocalDateTime(t) => w.scalar(Scalar::LocalDateTime(t)),
        Value::Duration(d) => w.scalar(Scalar::Duration(d)),
        Value::Point(p) => w.scalar(Scalar::Point(p)),
        Value::List(items) => {
            w.list(items.len())?;
            for item in items {
                write_value(item, g, names, w)?;
            }
            Ok(())
        }
        Value::Map(m) => write_map(m, g, names, w),
        Value::Node(id) => write_node_ref(*id, g, names, w),
        Value::Relationship(id) => write_rel_ref(*id, g, names, w),
        Value::Path(p) => {
            let rels: Vec<(RelId, NodeId)> =
                p.rels.iter().map(|r| (*r, rel_ends(*r, g).0)).collect();
            let layout = PathLayout::new(&p.nodes, &rels);
            let nodes = layout.node_order.len();
            w.path(nodes, layout.rel_order.len(), &layout.steps, &mut |w, part| match part {
                PathPart::Nodes => layout
                    .node_order
                    .iter()
                    .try_for_each(|&i| write_node_ref(p.nodes[i], g, names, w)),
                PathPart::Relationships => {
                    layout.rel_order.iter().try_for_each(|&i| write_rel_ref(p.rels[i], g, names, w))
                }
            })
        }
        Value::NodeData(n) => write_node_data(n, g, names, w),
        Value::RelData(r) => write_rel_data(r, g, names, w),
        Value::PathData(p) => write_path_data(p, g, names, w),
    }
}

fn write_map(
    m: &PropertyMap,
    g: Option<&dyn GraphRead>,
    names: &mut Names,
    w: &mut dyn ResultWriter,
) -> Result<()> {
    w.map(m.len())?;
    // A LOAD CSV row shows its header's order, as Neo4j sends it.
    for (k, x) in m.iter_ordered() {
        w.key(k)?;
        write_value(x, g, names, w)?;
    }
    Ok(())
}

/// Writes `props` (a materialised entity's property map) as its `key` + value pairs.
fn property_writer<'p>(
    props: &'p PropertyMap,
    g: Option<&'p dyn GraphRead>,
    names: &'p mut Names,
) -> impl FnMut(&mut dyn ResultWriter, ()) -> Result<()> + 'p {
    move |w, ()| {
        for (k, x) in props.iter() {
            w.key(k)?;
            write_value(x, g, names, w)?;
        }
        Ok(())
    }
}

/// A node read from the graph: labels sorted by name, properties in key order, as
/// [`NodeData`] holds them. Without a graph (a detached record), only its id.
fn write_node_ref(
    id: NodeId,
    g: Option<&dyn GraphRead>,
    names: &mut Names,
    w: &mut dyn ResultWriter,
) -> Result<()> {
    let Some(graph) = g else {
        return w.node(NodeHead { id, labels: &[], properties: 0 }, &mut |_, ()| Ok(()));
    };
    let label_ids = graph.node_labels(id);
    let mut props = graph.node_properties(id);
    if label_ids.iter().chain(props.iter().map(|(k, _)| k)).any(|&t| !Names::cached(t)) {
        // A token past the cache: the owned form looks each one up.
        let n = node_data(id, graph, names);
        return write_node_data(&n, g, names, w);
    }
    for &t in &label_ids {
        names.fill(graph, TokenKind::Label, t);
    }
    for (k, _) in &props {
        names.fill(graph, TokenKind::PropertyKey, *k);
    }
    names.order_props(&mut props);
    let names: &Names = names;
    // As `NodeData` holds them: nameless tokens left out, labels and keys sorted by name.
    let named = label_ids.iter().filter_map(|&t| names.get(TokenKind::Label, t));
    // Most nodes have a label or two: no allocation for up to four.
    let mut few = [""; 4];
    let mut many = Vec::new();
    let labels: &mut [&str] = if label_ids.len() <= few.len() {
        let mut n = 0;
        for l in named {
            few[n] = l;
            n += 1;
        }
        &mut few[..n]
    } else {
        many.extend(named);
        &mut many
    };
    labels.sort_unstable();
    let head = NodeHead { id, labels, properties: props.len() };
    w.node(head, &mut |w, ()| write_token_props(&props, names, w))
}

/// Writes properties as a graph read them, in the order [`Names::order_props`] found.
fn write_token_props(
    props: &[(TokenId, Value)],
    names: &Names,
    w: &mut dyn ResultWriter,
) -> Result<()> {
    for &i in &names.last_order {
        let Some((k, x)) = props.get(i) else { continue };
        w.key(names.get(TokenKind::PropertyKey, *k).unwrap_or_default())?;
        write_stored(x, w)?;
    }
    Ok(())
}

/// The stored start and end of relationship `id` (`0`, `0` without a graph or once deleted).
fn rel_ends(id: RelId, g: Option<&dyn GraphRead>) -> (NodeId, NodeId) {
    g.and_then(|g| g.rel_info(id)).map_or((NodeId(0), NodeId(0)), |(s, e, _)| (s, e))
}

fn write_rel_ref(
    id: RelId,
    g: Option<&dyn GraphRead>,
    names: &mut Names,
    w: &mut dyn ResultWriter,
) -> Result<()> {
    let Some(graph) = g else {
        let head = RelHead { id, start: NodeId(0), end: NodeId(0), rel_type: "", properties: 0 };
        return w.relationship(head, &mut |_, ()| Ok(()));
    };
    let (start, end, t) = graph.rel_info(id).unwrap_or((NodeId(0), NodeId(0), 0));
    let mut props = graph.rel_properties(id);
    if !Names::cached(t) || props.iter().any(|(k, _)| !Names::cached(*k)) {
        let r = rel_data(id, graph, names);
        return write_rel_data(&r, g, names, w);
    }
    names.fill(graph, TokenKind::RelType, t);
    for (k, _) in &props {
        names.fill(graph, TokenKind::PropertyKey, *k);
    }
    names.order_props(&mut props);
    let names: &Names = names;
    let rel_type = names.get(TokenKind::RelType, t).unwrap_or_default();
    let head = RelHead { id, start, end, rel_type, properties: props.len() };
    w.relationship(head, &mut |w, ()| write_token_props(&props, names, w))
}

fn write_node_data(
    n: &NodeData,
    g: Option<&dyn GraphRead>,
    names: &mut Names,
    w: &mut dyn ResultWriter,
) -> Result<()> {
    let labels: Vec<&str> = n.labels.iter().map(String::as_str).collect();
    let head = NodeHead { id: n.id, labels: &labels, properties: n.properties.len() };
    w.node(head, &mut property_writer(&n.properties, g, names))
}

fn write_rel_data(
    r: &RelData,
    g: Option<&dyn GraphRead>,
    names: &mut Names,
    w: &mut dyn ResultWriter,
) -> Result<()> {
    let head = RelHead {
        id: r.id,
        start: r.start,
        end: r.end,
        rel_type: &r.rel_type,
        properties: r.properties.len(),
    };
    w.relationship(head, &mut property_writer(&r.properties, g, names))
}

fn write_path_data(
    p: &PathData,
    g: Option<&dyn GraphRead>,
    names: &mut Names,
    w: &mut dyn ResultWriter,
) -> Result<()> {
    let ids: Vec<NodeId> = p.nodes.iter().map(|n| n.id).collect();
    let rels: Vec<(RelId, NodeId)> = p.rels.iter().map(|r| (r.id, r.start)).collect();
    let layout = PathLayout::new(&ids, &rels);
    w.path(
        layout.node_order.len(),
        layout.rel_order.len(),
        &layout.steps,
        &mut |w, part| match part {
            PathPart::Nodes => layout
                .node_order
                .iter()
                .try_for_each(|&i| write_node_data(&p.nodes[i], g, names, w)),
            PathPart::Relationships => {
                layout.rel_order.iter().try_for_each(|&i| write_rel_data(&p.rels[i], g, names, w))
            }
        },
    )
}

fn node_data(id: NodeId, g: &dyn GraphRead, names: &mut Names) -> NodeData {
    let mut labels: Vec<String> =
        g.node_labels(id).into_iter().filter_map(|t| names.name(g, TokenKind::Label, t)).collect();
    labels.sort();
    let mut properties = PropertyMap::new();
    for (k, v) in g.node_properties(id) {
        if let Some(n) = names.name(g, TokenKind::PropertyKey, k) {
            properties.insert(n.into(), v);
        }
    }
    NodeData { id, labels, properties }
}

fn rel_data(id: RelId, g: &dyn GraphRead, names: &mut Names) -> RelData {
    let (start, end, t) = g.rel_info(id).unwrap_or((NodeId(0), NodeId(0), 0));
    let properties = g
        .rel_properties(id)
        .into_iter()
        .filter_map(|(k, v)| names.name(g, TokenKind::PropertyKey, k).map(|n| (n, v)))
        .collect();
    RelData {
        id,
        start,
        end,
        rel_type: names.name(g, TokenKind::RelType, t).unwrap_or_default(),
        properties,
    }
}
