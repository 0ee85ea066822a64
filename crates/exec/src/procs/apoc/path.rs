//! `apoc.path.expand`, `expandConfig`, `subgraphNodes`, `subgraphAll`, `spanningTree`: a
//! breadth-first path expander with APOC's filters.
//!
//! `relationshipFilter` is `TYPE>|<TYPE|TYPE|>|<` (direction by an arrow after or before the
//! type; no arrow is both ways; a bare arrow is any type); a `,`-separated list is a repeating
//! sequence, one element per hop. `labelFilter` entries are `+L` (whitelist), `-L` (blacklist),
//! `/L` (termination: paths end there and go no further) and `>L` (end node: paths end there
//! and go on); an entry without an operator takes the previous entry's (whitelist first). The
//! start node is exempt from label filters unless `filterStartNode`. Uniqueness is
//! `RELATIONSHIP_PATH` for the expand procedures and `NODE_GLOBAL` for the subgraph ones.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use arbor_cypher_plan::CypherType as T;
use arbor_model::{NodeId, PathRef, PropertyMap, RelId, Result, Value};

use super::{arg_error, col, list_of, map_arg, nodes_arg};
use crate::graph::{Direction, Edge, Graph, TokenId, TokenKind};
use crate::procs::Procedure;

pub(super) fn procedures() -> Vec<Procedure> {
    let path_out = || vec![col("path", T::Path)];
    let cfg = || vec![col("startNode", T::Any), col("config", T::Map)];
    vec![
        Procedure::new(
            "apoc.path.expand",
            vec![
                col("startNode", T::Any),
                col("relationshipFilter", T::String),
                col("labelFilter", T::String),
                col("minDepth", T::Integer),
                col("maxDepth", T::Integer),
            ],
            path_out(),
            "Returns PATH values expanded from the start NODE following the given relationship \
             types from min-depth to max-depth.",
            expand,
        ),
        Procedure::new(
            "apoc.path.expandConfig",
            cfg(),
            path_out(),
            "Returns PATH values expanded from the start NODE with the given relationship types \
             from min-depth to max-depth.",
            |args, g| run(args, g, Kind::Paths, "apoc.path.expandConfig"),
        ),
        Procedure::new(
            "apoc.path.subgraphNodes",
            cfg(),
            vec![col("node", T::Node)],
            "Returns the NODE values in the sub-graph reachable from the start NODE following \
             the given relationship types to max-depth.",
            |args, g| run(args, g, Kind::Nodes, "apoc.path.subgraphNodes"),
        ),
        Procedure::new(
            "apoc.path.subgraphAll",
            cfg(),
            vec![col("nodes", list_of(T::Node)), col("relationships", list_of(T::Relationship))],
            "Returns the sub-graph reachable from the start NODE following the given \
             relationship types to max-depth.",
            |args, g| run(args, g, Kind::All, "apoc.path.subgraphAll"),
        ),
        Procedure::new(
            "apoc.path.spanningTree",
            cfg(),
            path_out(),
            "Returns spanning tree PATH values expanded from the start NODE following the given \
             relationship types to max-depth.",
            |args, g| run(args, g, Kind::Tree, "apoc.path.spanningTree"),
        ),
    ]
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Paths,
    Nodes,
    All,
    Tree,
}

#[derive(Clone, Copy, PartialEq)]
enum Uniqueness {
    RelPath,
    NodePath,
    NodeGlobal,
    RelGlobal,
    None,
}

/// One hop's allowed (type, direction) pairs; `None` type is any.
type Step = Vec<(Option<TokenId>, Direction)>;

struct Filters {
    /// The repeating sequence of hop filters (one element: every hop).
    steps: Vec<Step>,
    white: Vec<TokenId>,
    black: Vec<TokenId>,
    term: Vec<TokenId>,
    end: Vec<TokenId>,
    /// A label filter named a label no node has: whitelist/termination/end entries for it
    /// still make those filters exist.
    has_white: bool,
    has_term: bool,
    has_end: bool,
    end_nodes: HashSet<NodeId>,
    term_nodes: HashSet<NodeId>,
    white_nodes: HashSet<NodeId>,
    black_nodes: HashSet<NodeId>,
}

fn parse_rel_filter(name: &str, text: &str, g: &dyn Graph) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for seq in text.split(',') {
        let mut step = Step::new();
        for part in seq.split('|').map(str::trim) {
            let (ty, dir) = if let Some(t) = part.strip_suffix('>') {
                (t, Direction::Outgoing)
            } else if let Some(t) = part.strip_prefix('<') {
                (t, Direction::Incoming)
            } else {
                (part, Direction::Both)
            };
            if ty.contains(['<', '>']) {
                return Err(arg_error(name, &format!("invalid relationshipFilter `{text}`")));
            }
            if ty.is_empty() {
                step.push((None, dir));
            } else if let Some(t) = g.token_id(TokenKind::RelType, ty) {
                step.push((Some(t), dir));
            }
            // A type no relationship has matches nothing: leave it out.
        }
        if step.is_empty() && seq.split('|').all(|p| !p.trim().is_empty()) {
            // Every named type is unknown: this hop can match nothing.
            step.push((Some(TokenId::MAX), Direction::Both));
        }
        steps.push(step);
    }
    Ok(steps)
}

impl Filters {
    fn parse(
        name: &str,
        rel: &Value,
        labels: &Value,
        cfg: &PropertyMap,
        g: &dyn Graph,
    ) -> Result<Filters> {
        let steps = match rel {
            Value::String(s) if !s.trim().is_empty() => parse_rel_filter(name, s, g)?,
            Value::Null | Value::String(_) => vec![vec![(None, Direction::Both)]],
            other => {
                return Err(arg_error(
                    name,
                    &format!("relationshipFilter must be a string, got {}", other.type_name()),
                ))
            }
        };
        let mut f = Filters {
            steps,
            white: vec![],
            black: vec![],
            term: vec![],
            end: vec![],
            has_white: false,
            has_term: false,
            has_end: false,
            end_nodes: node_set(name, cfg.get("endNodes"))?,
            term_nodes: node_set(name, cfg.get("terminatorNodes"))?,
            white_nodes: node_set(name, cfg.get("whitelistNodes"))?,
            black_nodes: node_set(name, cfg.get("blacklistNodes"))?,
        };
        if let Value::String(s) = labels {
            let mut op = '+';
            for part in s.split([',', '|']).map(str::trim).filter(|p| !p.is_empty()) {
                let mut label = part;
                if let Some(c) = part.chars().next().filter(|c| "+-/>".contains(*c)) {
                    op = c;
                    label = &part[1..];
                }
                let tok = g.token_id(TokenKind::Label, label);
                let (list, flag) = match op {
                    '+' => (&mut f.white, Some(&mut f.has_white)),
                    '-' => (&mut f.black, None),
                    '/' => (&mut f.term, Some(&mut f.has_term)),
                    _ => (&mut f.end, Some(&mut f.has_end)),
                };
                if let Some(flag) = flag {
                    *flag = true;
                }
                list.extend(tok);
            }
        }
        f.has_white |= !f.white_nodes.is_empty();
        f.has_term |= !f.term_nodes.is_empty();
        f.has_end |= !f.end_nodes.is_empty();
        Ok(f)
    }

    fn step(&self, depth: usize) -> &Step {
        &self.steps[depth % self.steps.len()]
    }

    /// Whether a node reached by a hop is (returned, expanded further); `None` prunes it.
    fn judge(&self, g: &dyn Graph, n: NodeId) -> Option<(bool, bool)> {
        let has = |ls: &[TokenId]| ls.iter().any(|l| g.node_has_label(n, *l));
        if has(&self.black) || self.black_nodes.contains(&n) {
            return None;
        }
        let term = has(&self.term) || self.term_nodes.contains(&n);
        let end = has(&self.end) || self.end_nodes.contains(&n);
        if self.has_white && !term && !end && !has(&self.white) && !self.white_nodes.contains(&n) {
            return None;
        }
        let returned = (!self.has_term && !self.has_end) || term || end;
        Some((returned, !term))
    }
}

fn node_set(name: &str, v: Option<&Value>) -> Result<HashSet<NodeId>> {
    Ok(nodes_arg(name, v, "a node list")?.into_iter().collect())
}

fn int_cfg(name: &str, cfg: &PropertyMap, key: &str, default: i64) -> Result<i64> {
    match cfg.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Int(i)) => Ok(*i),
        Some(other) => {
            Err(arg_error(name, &format!("{key} must be an integer, got {}", other.type_name())))
        }
    }
}

fn uniqueness(name: &str, cfg: &PropertyMap, default: Uniqueness) -> Result<Uniqueness> {
    Ok(match cfg.get("uniqueness") {
        None | Some(Value::Null) => default,
        Some(Value::String(s)) => match s.to_ascii_uppercase().as_str() {
            "RELATIONSHIP_PATH" | "RELATIONSHIP_RECENT" => Uniqueness::RelPath,
            "NODE_PATH" | "NODE_RECENT" | "NODE_LEVEL" => Uniqueness::NodePath,
            "NODE_GLOBAL" => Uniqueness::NodeGlobal,
            "RELATIONSHIP_GLOBAL" | "RELATIONSHIP_LEVEL" => Uniqueness::RelGlobal,
            "NONE" => Uniqueness::None,
            other => return Err(arg_error(name, &format!("unknown uniqueness `{other}`"))),
        },
        Some(other) => {
            return Err(arg_error(
                name,
                &format!("uniqueness must be a string, got {}", other.type_name()),
            ))
        }
    })
}

/// `apoc.path.expand(start, relationshipFilter, labelFilter, minLevel, maxLevel)`.
fn expand(args: &[Value], g: &mut dyn Graph) -> Result<Vec<Vec<Value>>> {
    let mut cfg = PropertyMap::new();
    cfg.insert("relationshipFilter".into(), args.get(1).cloned().unwrap_or(Value::Null));
    cfg.insert("labelFilter".into(), args.get(2).cloned().unwrap_or(Value::Null));
    cfg.insert("minLevel".into(), args.get(3).cloned().unwrap_or(Value::Null));
    cfg.insert("maxLevel".into(), args.get(4).cloned().unwrap_or(Value::Null));
    let start = args.first().cloned().unwrap_or(Value::Null);
    run(&[start, Value::Map(cfg)], g, Kind::Paths, "apoc.path.expand")
}

/// The BFS every procedure shares; rows shaped for `kind`.
fn run(args: &[Value], g: &mut dyn Graph, kind: Kind, name: &str) -> Result<Vec<Vec<Value>>> {
    let cfg = map_arg(name, args.get(1), "config")?;
    let starts = nodes_arg(name, args.first(), "startNode")?;
    let null = Value::Null;
    let f = Filters::parse(
        name,
        cfg.get("relationshipFilter").unwrap_or(&null),
        cfg.get("labelFilter").unwrap_or(&null),
        &cfg,
        g,
    )?;
    let subgraph = kind != Kind::Paths;
    let default_u = if subgraph { Uniqueness::NodeGlobal } else { Uniqueness::RelPath };
    let u = if subgraph { Uniqueness::NodeGlobal } else { uniqueness(name, &cfg, default_u)? };
    let min = int_cfg(name, &cfg, "minLevel", if subgraph { 0 } else { -1 })?.max(0) as usize;
    let max = int_cfg(name, &cfg, "maxLevel", -1)?;
    if u == Uniqueness::None && max < 0 {
        return Err(arg_error(name, "uniqueness NONE needs a maxLevel"));
    }
    let max = if max < 0 { usize::MAX } else { max as usize };
    let limit = match int_cfg(name, &cfg, "limit", -1)? {
        n if n < 0 => usize::MAX,
        n => n as usize,
    };
    let filter_start = matches!(cfg.get("filterStartNode"), Some(Value::Bool(true)));
    let mut found: Vec<PathRef> = Vec::new();
    for s in starts {
        if !g.node_exists(s) || found.len() >= limit {
            continue;
        }
        bfs(g, &f, s, (min, max, limit), u, filter_start, &mut found)?;
    }
    let optional = matches!(cfg.get("optional"), Some(Value::Bool(true)));
    Ok(match kind {
        Kind::Paths | Kind::Tree => {
            if found.is_empty() && optional {
                return Ok(vec![vec![Value::Null]]);
            }
            found.into_iter().map(|p| vec![Value::Path(Arc::new(p))]).collect()
        }
        Kind::Nodes => {
            found.iter().filter_map(|p| p.nodes.last()).map(|n| vec![Value::Node(*n)]).collect()
        }
        Kind::All => vec![subgraph_all(g, &f, &found)],
    })
}

/// Breadth-first expansion from `start`, pushing the returned paths.
fn bfs(
    g: &dyn Graph,
    f: &Filters,
    start: NodeId,
    (min, max, limit): (usize, usize, usize),
    u: Uniqueness,
    filter_start: bool,
    found: &mut Vec<PathRef>,
) -> Result<()> {
    let (start_returned, start_expands) = if filter_start {
        match f.judge(g, start) {
            Some(j) => j,
            None => return Ok(()),
        }
    } else {
        (!f.has_term && !f.has_end, true)
    };
    let mut seen_nodes: HashSet<NodeId> = HashSet::from([start]);
    let mut seen_rels: HashSet<RelId> = HashSet::new();
    if min == 0 && start_returned {
        found.push(PathRef { nodes: vec![start], rels: vec![] });
    }
    let mut queue = VecDeque::new();
    if start_expands && max > 0 {
        queue.push_back(PathRef { nodes: vec![start], rels: vec![] });
    }
    let mut edges: Vec<Edge> = Vec::new();
    let mut visited = 0usize;
    while let Some(p) = queue.pop_front() {
        visited += 1;
        if visited.is_multiple_of(1024) {
            crate::interrupt::check()?;
        }
        let depth = p.rels.len();
        let at = *p.nodes.last().unwrap_or(&start);
        edges.clear();
        for (ty, dir) in f.step(depth) {
            let types: Vec<TokenId> = ty.iter().copied().collect();
            if ty == &Some(TokenId::MAX) {
                continue;
            }
            g.node_edges(at, *dir, &types, &mut edges);
        }
        let mut this_hop: HashSet<RelId> = HashSet::new();
        for e in edges.iter() {
            if !this_hop.insert(e.rel) {
                continue;
            }
            let ok = match u {
                Uniqueness::RelPath => !p.rels.contains(&e.rel),
                Uniqueness::NodePath => !p.nodes.contains(&e.other),
                Uniqueness::NodeGlobal => !seen_nodes.contains(&e.other),
                Uniqueness::RelGlobal => !seen_rels.contains(&e.rel),
                Uniqueness::None => true,
            };
            if !ok {
                continue;
            }
            let Some((returned, expands)) = f.judge(g, e.other) else { continue };
            seen_nodes.insert(e.other);
            seen_rels.insert(e.rel);
            let mut next = p.clone();
            next.nodes.push(e.other);
            next.rels.push(e.rel);
            if returned && depth + 1 >= min {
                found.push(next.clone());
                if found.len() >= limit {
                    return Ok(());
                }
            }
            if expands && depth + 1 < max {
                queue.push_back(next);
            }
        }
    }
    Ok(())
}

/// `subgraphAll`'s row: the reached nodes and every relationship among them whose type the
/// relationship filter allows.
fn subgraph_all(g: &dyn Graph, f: &Filters, found: &[PathRef]) -> Vec<Value> {
    let mut nodes: Vec<NodeId> = Vec::new();
    let mut in_set: HashSet<NodeId> = HashSet::new();
    for p in found {
        if let Some(n) = p.nodes.last() {
            if in_set.insert(*n) {
                nodes.push(*n);
            }
        }
    }
    let any_type = f.steps.iter().flatten().any(|(t, _)| t.is_none());
    let types: Vec<TokenId> = if any_type {
        Vec::new()
    } else {
        f.steps.iter().flatten().filter_map(|(t, _)| *t).filter(|t| *t != TokenId::MAX).collect()
    };
    let mut rels = Vec::new();
    let mut edges = Vec::new();
    if any_type || !types.is_empty() {
        for n in &nodes {
            edges.clear();
            g.node_edges(*n, Direction::Outgoing, &types, &mut edges);
            rels.extend(
                edges
                    .iter()
                    .filter(|e| in_set.contains(&e.other))
                    .map(|e| Value::Relationship(e.rel)),
            );
        }
    }
    vec![Value::List(nodes.into_iter().map(Value::Node).collect()), Value::List(rels)]
}
