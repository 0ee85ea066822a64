//! The algorithms over a named projection: `gds.shortestPath.dijkstra.stream`,
//! `gds.allShortestPaths.dijkstra.stream`, `gds.pageRank.stream|write|stats` and
//! `gds.wcc.stream|write|stats`, with GDS's config keys, defaults and columns.
//!
//! PageRank is GDS's (unnormalised) form: every node starts at `1 - dampingFactor` and each
//! iteration sets `score(v) = (1 - d) + d * sum(score(u) * w(u, v) / outWeight(u))` over
//! the relationships into `v`; a node without outgoing relationships passes nothing on. It
//! stops after `maxIterations` (20) supersteps or once no score moved by more than `tolerance`
//! (1e-7), computed as GDS's Pregel PageRank does (it reproduces GDS's documented scores).
//! Component ids of WCC are the smallest projection index in each component, so the first
//! component found is 0, as GDS reports them.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::Instant;

use arbor_cypher_plan::CypherType as T;
use arbor_model::{NodeId, PathRef, PropertyMap, RelId, Result, Value};

use super::{col, failed, lookup, Catalog, Projection};
use crate::graph::{Graph, TokenKind};
use crate::procs::Procedure;

pub(super) fn procedures(catalog: &Catalog) -> Vec<Procedure> {
    let mut out = Vec::new();
    let inputs = || vec![col("graphName", T::Any), col("configuration", T::Map)];
    let path_cols = || {
        vec![
            col("index", T::Integer),
            col("sourceNode", T::Integer),
            col("targetNode", T::Integer),
            col("totalCost", T::Float),
            col("nodeIds", T::List(Box::new(T::Integer))),
            col("costs", T::List(Box::new(T::Float))),
            col("path", T::Path),
        ]
    };
    let c = catalog.clone();
    out.push(Procedure::new(
        "gds.shortestPath.dijkstra.stream",
        inputs(),
        path_cols(),
        "The Dijkstra shortest path algorithm computes the shortest (weighted) path between \
         one node and any other node in the graph.",
        move |a, _| dijkstra(&c, a, false),
    ));
    let c = catalog.clone();
    out.push(Procedure::new(
        "gds.allShortestPaths.dijkstra.stream",
        inputs(),
        path_cols(),
        "The Dijkstra shortest path algorithm computes the shortest (weighted) path between \
         one node and any other node in the graph.",
        move |a, _| dijkstra(&c, a, true),
    ));
    let stats = |extra: Vec<(String, T)>| {
        let mut v = extra;
        v.extend([
            col("preProcessingMillis", T::Integer),
            col("computeMillis", T::Integer),
            col("postProcessingMillis", T::Integer),
            col("configuration", T::Map),
        ]);
        v
    };
    let pr_stats = || {
        vec![
            col("ranIterations", T::Integer),
            col("didConverge", T::Boolean),
            col("centralityDistribution", T::Map),
        ]
    };
    for mode in ["stream", "write", "stats"] {
        let c = catalog.clone();
        let outputs = match mode {
            "stream" => vec![col("nodeId", T::Integer), col("score", T::Float)],
            "write" => {
                let mut v =
                    vec![col("nodePropertiesWritten", T::Integer), col("writeMillis", T::Integer)];
                v.extend(pr_stats());
                stats(v)
            }
            _ => stats(pr_stats()),
        };
        let mut p = Procedure::new(
            &format!("gds.pageRank.{mode}"),
            inputs(),
            outputs,
            "Page Rank is an algorithm that measures the transitive influence or connectivity \
             of nodes.",
            move |a, g| page_rank(&c, a, g, mode),
        );
        p.writes = mode == "write";
        p.sig.optional = 1;
        out.push(p);
    }
    for mode in ["stream", "write", "stats"] {
        let c = catalog.clone();
        let outputs = match mode {
            "stream" => vec![col("nodeId", T::Integer), col("componentId", T::Integer)],
            "write" => stats(vec![
                col("nodePropertiesWritten", T::Integer),
                col("writeMillis", T::Integer),
                col("componentCount", T::Integer),
                col("componentDistribution", T::Map),
            ]),
            _ => {
                stats(vec![col("componentCount", T::Integer), col("componentDistribution", T::Map)])
            }
        };
        let mut p = Procedure::new(
            &format!("gds.wcc.{mode}"),
            inputs(),
            outputs,
            "The WCC algorithm finds sets of connected nodes in an undirected graph, where all \
             nodes in the same set form a connected component.",
            move |a, g| wcc(&c, a, g, mode),
        );
        p.writes = mode == "write";
        p.sig.optional = 1;
        out.push(p);
    }
    out
}

fn config(a: &[Value]) -> PropertyMap {
    match a.get(1) {
        Some(Value::Map(m)) => m.clone(),
        _ => PropertyMap::new(),
    }
}

/// A node given as a node or an id, as its projection index.
fn node_cfg(name: &str, p: &Projection, cfg: &PropertyMap, key: &str) -> Result<u32> {
    let id = match cfg.get(key) {
        Some(Value::Node(n)) => *n,
        Some(Value::NodeData(n)) => n.id,
        Some(Value::Int(i)) if *i >= 0 => NodeId(*i as u64),
        _ => {
            return Err(failed(
                name,
                &format!("No value specified for the mandatory configuration parameter `{key}`"),
            ))
        }
    };
    p.index.get(&id).copied().ok_or_else(|| {
        failed(name, &format!("{key} node with id {} was not loaded into the graph", id.0))
    })
}

/// Whether the algorithm uses weights: `relationshipWeightProperty` must name the projected one.
fn weighted(name: &str, p: &Projection, cfg: &PropertyMap) -> Result<bool> {
    match cfg.get("relationshipWeightProperty") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::String(w)) if p.weight.as_deref() == Some(&**w) => Ok(true),
        Some(Value::String(w)) => Err(failed(
            name,
            &format!(
                "Relationship weight property `{w}` not found in relationship types {:?}. \
                 Properties existing on all relationship types: {:?}",
                p.rel_projection.iter().map(|(k, _)| k.as_str().to_string()).collect::<Vec<_>>(),
                p.weight.iter().collect::<Vec<_>>()
            ),
        )),
        Some(_) => Err(failed(name, "relationshipWeightProperty must be a string")),
    }
}

#[derive(PartialEq)]
struct Entry(f64, u32);

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // A min-heap on cost, then on index.
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Dijkstra from `sourceNode`: to `targetNode`, or (`all`) to every reachable node in the
/// order they are settled (the source first).
fn dijkstra(catalog: &Catalog, a: &[Value], all: bool) -> Result<Vec<Vec<Value>>> {
    let name = if all {
        "gds.allShortestPaths.dijkstra.stream"
    } else {
        "gds.shortestPath.dijkstra.stream"
    };
    let p = lookup(catalog, name, a.first())?;
    let cfg = config(a);
    let src = node_cfg(name, &p, &cfg, "sourceNode")?;
    let target = if all { None } else { Some(node_cfg(name, &p, &cfg, "targetNode")?) };
    let use_w = weighted(name, &p, &cfg)?;
    let n = p.nodes.len();
    let mut dist = vec![f64::INFINITY; n];
    let mut prev: Vec<Option<(u32, RelId)>> = vec![None; n];
    let mut done = vec![false; n];
    let mut heap = BinaryHeap::new();
    dist[src as usize] = 0.0;
    heap.push(Entry(0.0, src));
    let mut rows = Vec::new();
    let mut settled = 0usize;
    while let Some(Entry(d, u)) = heap.pop() {
        if done[u as usize] {
            continue;
        }
        done[u as usize] = true;
        settled += 1;
        if settled.is_multiple_of(4096) {
            crate::interrupt::check()?;
        }
        if all || target == Some(u) {
            rows.push(path_row(&p, rows.len(), src, u, &dist, &prev));
            if !all {
                break;
            }
        }
        for arc in &p.out[u as usize] {
            let w = if use_w { arc.weight } else { 1.0 };
            let nd = d + w;
            if nd < dist[arc.to as usize] {
                dist[arc.to as usize] = nd;
                prev[arc.to as usize] = Some((u, arc.rel));
                heap.push(Entry(nd, arc.to));
            }
        }
    }
    Ok(rows)
}

fn path_row(
    p: &Projection,
    index: usize,
    src: u32,
    to: u32,
    dist: &[f64],
    prev: &[Option<(u32, RelId)>],
) -> Vec<Value> {
    let mut chain = vec![to];
    let mut rels = Vec::new();
    let mut at = to;
    while at != src {
        let Some((u, r)) = prev[at as usize] else { break };
        chain.push(u);
        rels.push(r);
        at = u;
    }
    chain.reverse();
    rels.reverse();
    let ids: Vec<NodeId> = chain.iter().map(|i| p.nodes[*i as usize]).collect();
    vec![
        Value::Int(index as i64),
        Value::Int(p.nodes[src as usize].0 as i64),
        Value::Int(p.nodes[to as usize].0 as i64),
        Value::Float(dist[to as usize]),
        Value::List(ids.iter().map(|n| Value::Int(n.0 as i64)).collect()),
        Value::List(chain.iter().map(|i| Value::Float(dist[*i as usize])).collect()),
        Value::Path(Arc::new(PathRef { nodes: ids, rels })),
    ]
}

fn float_cfg(name: &str, cfg: &PropertyMap, key: &str, default: f64) -> Result<f64> {
    match cfg.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Int(i)) => Ok(*i as f64),
        Some(Value::Float(f)) => Ok(*f),
        Some(_) => Err(failed(name, &format!("`{key}` must be a number"))),
    }
}

/// The PageRank scores, iterations run and whether they converged.
fn page_rank_scores(
    name: &str,
    p: &Projection,
    cfg: &PropertyMap,
) -> Result<(Vec<f64>, i64, bool)> {
    let d = float_cfg(name, cfg, "dampingFactor", 0.85)?;
    if !(0.0..1.0).contains(&d) {
        return Err(failed(
            name,
            &format!(
                "Value for `dampingFactor` was `{d}`, but must be within the range [0.00, 1.00)."
            ),
        ));
    }
    let max_iter = float_cfg(name, cfg, "maxIterations", 20.0)? as i64;
    if max_iter < 1 {
        return Err(failed(name, "Value for `maxIterations` must be at least 1"));
    }
    let tol = float_cfg(name, cfg, "tolerance", 1e-7)?;
    let use_w = weighted(name, p, cfg)?;
    let n = p.nodes.len();
    let out_w: Vec<f64> = p
        .out
        .iter()
        .map(|arcs| arcs.iter().map(|a| if use_w { a.weight } else { 1.0 }).sum())
        .collect();
    // GDS's Pregel formulation: every node starts at 1 - d and sends it on; from then on a
    // node adds d times what it received and sends on only that change, and stops sending
    // once the change is at most `tolerance`. Superstep 0 only sends, so `maxIterations`
    // supersteps make `maxIterations - 1` updates; converged when no node sends.
    let mut score = vec![1.0 - d; n];
    let mut delta = score.clone();
    let mut sending = vec![true; n];
    let mut inbox = vec![0.0; n];
    for it in 0..max_iter {
        crate::interrupt::check()?;
        if it > 0 {
            let mut any = false;
            for v in 0..n {
                let change = d * inbox[v];
                score[v] += change;
                delta[v] = change;
                sending[v] = change > tol;
                any |= sending[v];
            }
            if !any {
                return Ok((score, it, true));
            }
        }
        inbox.iter_mut().for_each(|x| *x = 0.0);
        for (u, arcs) in p.out.iter().enumerate() {
            if !sending[u] || out_w[u] <= 0.0 {
                continue;
            }
            let share = delta[u] / out_w[u];
            for a in arcs {
                inbox[a.to as usize] += share * if use_w { a.weight } else { 1.0 };
            }
        }
    }
    Ok((score, max_iter, false))
}

/// GDS's distribution summary of a set of values.
fn distribution(values: &[f64], ints: bool) -> Value {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let mut m = PropertyMap::new();
    let num = |x: f64| if ints { Value::Int(x as i64) } else { Value::Float(x) };
    if v.is_empty() {
        return Value::Map(m);
    }
    let pct = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    m.insert("min".into(), num(v[0]));
    m.insert("max".into(), num(v[v.len() - 1]));
    m.insert("mean".into(), Value::Float(v.iter().sum::<f64>() / v.len() as f64));
    for (k, q) in
        [("p50", 0.5), ("p75", 0.75), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("p999", 0.999)]
    {
        m.insert(k.into(), num(pct(q)));
    }
    Value::Map(m)
}

/// Writes `values` (one per projection index) as `writeProperty` on the nodes.
fn write_values(
    name: &str,
    p: &Projection,
    cfg: &PropertyMap,
    g: &mut dyn Graph,
    values: &[Value],
) -> Result<i64> {
    let prop = match cfg.get("writeProperty") {
        Some(Value::String(s)) if !s.is_empty() => s.to_string(),
        _ => {
            return Err(failed(
                name,
                "No value specified for the mandatory configuration parameter `writeProperty`",
            ))
        }
    };
    let key = g.get_or_create_token(TokenKind::PropertyKey, &prop)?;
    for (i, v) in values.iter().enumerate() {
        if i % 4096 == 0 {
            crate::interrupt::check()?;
        }
        g.set_node_property(p.nodes[i], key, v.clone())?;
    }
    Ok(values.len() as i64)
}

fn page_rank(
    catalog: &Catalog,
    a: &[Value],
    g: &mut dyn Graph,
    mode: &str,
) -> Result<Vec<Vec<Value>>> {
    let name = format!("gds.pageRank.{mode}");
    let p = lookup(catalog, &name, a.first())?;
    let cfg = config(a);
    let started = Instant::now();
    let (scores, iterations, converged) = page_rank_scores(&name, &p, &cfg)?;
    let compute = started.elapsed().as_millis() as i64;
    if mode == "stream" {
        return Ok(scores
            .iter()
            .enumerate()
            .map(|(i, s)| vec![Value::Int(p.nodes[i].0 as i64), Value::Float(*s)])
            .collect());
    }
    let mut row = Vec::new();
    if mode == "write" {
        let values: Vec<Value> = scores.iter().map(|s| Value::Float(*s)).collect();
        let t = Instant::now();
        row.push(Value::Int(write_values(&name, &p, &cfg, g, &values)?));
        row.push(Value::Int(t.elapsed().as_millis() as i64));
    }
    row.extend([Value::Int(iterations), Value::Bool(converged), distribution(&scores, false)]);
    row.extend([Value::Int(0), Value::Int(compute), Value::Int(0), Value::Map(cfg)]);
    Ok(vec![row])
}

/// Union-find over the projection ignoring direction; each node's component (the smallest
/// index in it). With a `threshold`, only relationships weighing more than it join nodes.
fn components(p: &Projection, threshold: Option<f64>) -> Vec<u32> {
    let n = p.nodes.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for (u, arcs) in p.out.iter().enumerate() {
        for a in arcs {
            if threshold.is_some_and(|t| a.weight <= t) {
                continue;
            }
            let (ru, rv) = (find(&mut parent, u as u32), find(&mut parent, a.to));
            if ru != rv {
                // The smaller index stays the root.
                let (lo, hi) = if ru < rv { (ru, rv) } else { (rv, ru) };
                parent[hi as usize] = lo;
            }
        }
    }
    (0..n as u32).map(|i| find(&mut parent, i)).collect()
}

fn wcc(catalog: &Catalog, a: &[Value], g: &mut dyn Graph, mode: &str) -> Result<Vec<Vec<Value>>> {
    let name = format!("gds.wcc.{mode}");
    let p = lookup(catalog, &name, a.first())?;
    let cfg = config(a);
    // GDS: with a weight property only relationships above `threshold` (0.0) count, and
    // `consecutiveIds` numbers the components 0, 1, ... in order of their first node.
    let threshold = if weighted(&name, &p, &cfg)? {
        Some(float_cfg(&name, &cfg, "threshold", 0.0)?)
    } else {
        None
    };
    let started = Instant::now();
    let mut comp = components(&p, threshold);
    if matches!(cfg.get("consecutiveIds"), Some(Value::Bool(true))) {
        let mut ids = std::collections::HashMap::new();
        for c in &mut comp {
            let next = ids.len() as u32;
            *c = *ids.entry(*c).or_insert(next);
        }
    }
    let compute = started.elapsed().as_millis() as i64;
    if mode == "stream" {
        return Ok(comp
            .iter()
            .enumerate()
            .map(|(i, c)| vec![Value::Int(p.nodes[i].0 as i64), Value::Int(i64::from(*c))])
            .collect());
    }
    let mut sizes = std::collections::BTreeMap::<u32, f64>::new();
    for c in &comp {
        *sizes.entry(*c).or_default() += 1.0;
    }
    let size_list: Vec<f64> = sizes.values().copied().collect();
    let mut row = Vec::new();
    if mode == "write" {
        let values: Vec<Value> = comp.iter().map(|c| Value::Int(i64::from(*c))).collect();
        let t = Instant::now();
        row.push(Value::Int(write_values(&name, &p, &cfg, g, &values)?));
        row.push(Value::Int(t.elapsed().as_millis() as i64));
    }
    row.extend([Value::Int(sizes.len() as i64), distribution(&size_list, true)]);
    row.extend([Value::Int(0), Value::Int(compute), Value::Int(0), Value::Map(cfg)]);
    Ok(vec![row])
}
