//! Write operators: CREATE, MERGE, SET/REMOVE, DELETE and FOREACH, and their helpers.

use std::collections::HashSet;

use arbor_cypher_plan::expr::{PExpr, Slot};
use arbor_cypher_plan::ops::{CreateStep, Name, Op, SetOp};
use arbor_model::{Error, NodeId, RelId, Result, Status, Value};

use super::builder::{build, Builder};
use crate::ctx::{Ctx, Operator, Row};
use crate::eval::{self, dyn_names, eval, NameOf};
use crate::graph::{Direction, Graph, TokenId, TokenKind};

/// Builds a write operator (the builder's dispatch, [`super::build`], sends only those here).
pub(super) fn build_write(op: &Op, b: &mut Builder) -> Box<dyn Operator> {
    match op {
        Op::Create { input, steps } => {
            Box::new(Create { input: build(input, b), steps: steps.clone() })
        }
        Op::Merge { input, matcher, create, on_create, on_match, .. } => Box::new(Merge {
            input: build(input, b),
            matcher: build(matcher, b),
            create: create.clone(),
            on_create: on_create.clone(),
            on_match: on_match.clone(),
            pending: Vec::new(),
        }),
        Op::Set { input, items } => {
            Box::new(SetOpr { input: build(input, b), items: items.clone() })
        }
        Op::Delete { input, exprs, detach } => Box::new(Delete {
            input: build(input, b),
            exprs: exprs.clone(),
            detach: *detach,
            out: None,
        }),
        Op::Foreach { input, slot, list, body } => Box::new(Foreach {
            input: build(input, b),
            slot: *slot,
            list: list.clone(),
            body: build(body, b),
        }),
        _ => unreachable!("build_write called on another operator"),
    }
}

/// Checks a value can be stored as a property and returns it (lists must be homogeneous).
fn storable(v: Value) -> Result<Value> {
    let bad = |v: &Value| {
        Error::type_error(format!(
            "Property values can only be of primitive types or arrays thereof. Encountered: {}",
            v.type_name()
        ))
        .with_detail("InvalidPropertyType")
    };
    match &v {
        Value::Map(_)
        | Value::Node(_)
        | Value::Relationship(_)
        | Value::Path(_)
        | Value::NodeData(_)
        | Value::RelData(_)
        | Value::PathData(_) => Err(bad(&v)),
        Value::List(items) => {
            let mut ty = None;
            for it in items {
                match it {
                    Value::List(_) | Value::Map(_) | Value::Null => return Err(bad(it)),
                    Value::Node(_) | Value::Relationship(_) | Value::Path(_) => {
                        return Err(bad(it))
                    }
                    _ => {}
                }
                let t = it.type_name();
                if *ty.get_or_insert(t) != t {
                    return Err(bad(&v));
                }
            }
            Ok(v)
        }
        _ => Ok(v),
    }
}

/// Evaluates a property map for CREATE/MERGE.
fn prop_list(
    e: Option<&PExpr>,
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
    merge: bool,
) -> Result<Vec<(TokenId, Value)>> {
    let Some(e) = e else { return Ok(Vec::new()) };
    if let PExpr::Map(items) = e {
        // A map literal (`CREATE (:L {a: r.a, ...})`): evaluate each value straight into the
        // property list, with the key tokens cached per execution, instead of building a map
        // with owned keys and looking every key up by name for every row. MERGE keeps the
        // map path (its null error names the first null key in key order), and so does a
        // literal repeating a key (the map keeps the last value, nulls included).
        let distinct =
            items.iter().enumerate().all(|(i, (k, _))| items[..i].iter().all(|(o, _)| o != k));
        if !merge && distinct {
            let mut out = Vec::with_capacity(items.len());
            for (k, x) in items {
                let v = eval(x, row, ctx, g)?;
                if v.is_null() {
                    continue;
                }
                let t = ctx.token_or_create(g, TokenKind::PropertyKey, k)?;
                out.push((t, storable(v)?));
            }
            return Ok(out);
        }
    }
    let m = match eval(e, row, ctx, g)? {
        Value::Map(m) => m,
        Value::Null => return Ok(Vec::new()),
        other => {
            return Err(Error::type_error(format!(
                "Expected a map of properties but got {}",
                other.type_name()
            ))
            .with_detail("InvalidArgumentType"))
        }
    };
    let mut out = Vec::with_capacity(m.len());
    for (k, v) in m {
        if v.is_null() {
            if merge {
                return Err(Error::semantic(format!(
                    "Cannot merge the following node because of null property value for '{k}'"
                ))
                .with_detail("MergeReadOwnWrites"));
            }
            continue;
        }
        let t = g.get_or_create_token(TokenKind::PropertyKey, &k)?;
        out.push((t, storable(v)?));
    }
    Ok(out)
}

fn run_create(
    steps: &[CreateStep],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
    merge: bool,
) -> Result<()> {
    for step in steps {
        match step {
            CreateStep::Node { slot, labels, dyn_labels, props } => {
                // The label tokens on the stack for the usual few labels: no allocation per
                // created node (batched writes create tens of thousands per statement).
                let mut inline = [TokenId::default(); 8];
                let mut spilled = Vec::new();
                let mut n_toks = 0;
                for l in labels {
                    let t = ctx.token_or_create(g, TokenKind::Label, l)?;
                    if inline[..n_toks].contains(&t) || spilled.contains(&t) {
                        continue;
                    }
                    if n_toks < inline.len() {
                        inline[n_toks] = t;
                        n_toks += 1;
                    } else {
                        spilled.push(t);
                    }
                }
                for e in dyn_labels {
                    let v = eval(e, row, ctx, g)?;
                    for l in dyn_names(&v, NameOf::NodeLabel)? {
                        let t = g.get_or_create_token(TokenKind::Label, &l)?;
                        if inline[..n_toks].contains(&t) || spilled.contains(&t) {
                            continue;
                        }
                        if n_toks < inline.len() {
                            inline[n_toks] = t;
                            n_toks += 1;
                        } else {
                            spilled.push(t);
                        }
                    }
                }
                if !spilled.is_empty() {
                    spilled.splice(0..0, inline.iter().copied());
                }
                let toks: &[TokenId] =
                    if spilled.is_empty() { &inline[..n_toks] } else { &spilled };
                let props = prop_list(props.as_ref(), row, ctx, g, merge)?;
                let n = props.len() as u64;
                let id = g.create_node(toks, props)?;
                ctx.stats.nodes_created += 1;
                ctx.stats.labels_added += toks.len() as u64;
                ctx.stats.properties_set += n;
                row[*slot] = Value::Node(id);
            }
            CreateStep::Rel { slot, from, to, rel_type, dyn_type, props } => {
                let (Value::Node(a), Value::Node(b)) = (&row[*from], &row[*to]) else {
                    let bad = if row[*from].is_node() { &row[*to] } else { &row[*from] };
                    return Err(Error::semantic(format!(
                        "Failed to create relationship, node is {}",
                        if bad.is_null() { "missing (null)" } else { bad.type_name() }
                    ))
                    .with_detail("CreateRelationshipWithNull"));
                };
                let (a, b) = (*a, *b);
                let t = match dyn_type {
                    Some(e) => {
                        let v = eval(e, row, ctx, g)?;
                        let names = dyn_names(&v, NameOf::RelType)?;
                        let [name] = names.as_slice() else {
                            return Err(Error::new(
                                Status::ExecutionFailed,
                                format!(
                                    "Exactly one relationship type must be specified, but {} \
                                     were found.",
                                    names.len()
                                ),
                            ));
                        };
                        g.get_or_create_token(TokenKind::RelType, name)?
                    }
                    // Cached per execution, as the labels above: no name hashed per row.
                    None => ctx.token_or_create(g, TokenKind::RelType, rel_type)?,
                };
                let props = prop_list(props.as_ref(), row, ctx, g, merge)?;
                let n = props.len() as u64;
                let id = g.create_rel(a, b, t, props)?;
                ctx.stats.relationships_created += 1;
                ctx.stats.properties_set += n;
                row[*slot] = Value::Relationship(id);
            }
            CreateStep::Path { slot, expr } => {
                let v = eval(expr, row, ctx, g)?;
                row[*slot] = v;
            }
        }
    }
    Ok(())
}

trait IsNode {
    fn is_node(&self) -> bool;
}
impl IsNode for Value {
    fn is_node(&self) -> bool {
        matches!(self, Value::Node(_))
    }
}

enum Entity {
    Node(NodeId),
    Rel(RelId),
}

fn entity(v: &Value, what: &str) -> Result<Option<Entity>> {
    match v {
        Value::Node(n) => Ok(Some(Entity::Node(*n))),
        Value::Relationship(r) => Ok(Some(Entity::Rel(*r))),
        Value::Null => Ok(None),
        other => Err(Error::type_error(format!(
            "Type mismatch: expected Node or Relationship but was {} ({what})",
            other.type_name()
        ))
        .with_detail("InvalidArgumentType")),
    }
}

fn set_prop(g: &mut dyn Graph, ent: &Entity, key: TokenId, v: Value) -> Result<()> {
    match ent {
        Entity::Node(n) => g.set_node_property(*n, key, v),
        Entity::Rel(r) => g.set_rel_property(*r, key, v),
    }
}

fn get_props(g: &dyn Graph, ent: &Entity) -> Vec<(TokenId, Value)> {
    match ent {
        Entity::Node(n) => g.node_properties(*n),
        Entity::Rel(r) => g.rel_properties(*r),
    }
}

fn get_prop(g: &dyn Graph, ent: &Entity, k: TokenId) -> Option<Value> {
    match ent {
        Entity::Node(n) => g.node_property(*n, k),
        Entity::Rel(r) => g.rel_property(*r, k),
    }
}

fn check_alive(g: &dyn Graph, ent: &Entity) -> Result<()> {
    let dead = match ent {
        Entity::Node(n) => g.node_deleted_in_tx(*n),
        Entity::Rel(r) => g.rel_deleted_in_tx(*r),
    };
    if dead {
        return Err(Error::new(
            Status::EntityNotFound,
            "The entity has been deleted in this transaction",
        )
        .with_detail("DeletedEntityAccess"));
    }
    Ok(())
}

/// Property map from a SET source value (a map, node or relationship).
fn source_map(v: Value, g: &dyn Graph) -> Result<Vec<(arbor_model::Key, Value)>> {
    match v {
        Value::Map(m) => Ok(m.into_iter().collect()),
        Value::Null => Ok(Vec::new()),
        Value::Node(_) | Value::Relationship(_) => match eval::properties(&v, g)? {
            Value::Map(m) => Ok(m.into_iter().collect()),
            _ => Ok(Vec::new()),
        },
        other => Err(Error::type_error(format!(
            "Expected a map of properties but got {}",
            other.type_name()
        ))
        .with_detail("InvalidArgumentType")),
    }
}

/// The key of `n[key]` in SET / REMOVE: a string (Neo4j: a syntax error for a parameter of
/// another type, a type error for null).
fn dynamic_key(v: Value) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.to_string()),
        Value::Null => {
            Err(Error::type_error("Expected a String as dynamic property key, but it was null"))
        }
        other => Err(Error::syntax(format!(
            "Type mismatch: node or relationship property key must be given as String, but was {}",
            other.type_name()
        ))),
    }
}

fn run_set(items: &[SetOp], row: &mut Row, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<()> {
    for it in items {
        match it {
            SetOp::Property { target, key, value } => {
                let t = eval(target, row, ctx, g)?;
                let Some(ent) = entity(&t, "SET")? else { continue };
                check_alive(g, &ent)?;
                let v = storable(eval(value, row, ctx, g)?)?;
                let k = g.get_or_create_token(TokenKind::PropertyKey, key)?;
                if v.is_null() && get_prop(g, &ent, k).is_none() {
                    continue;
                }
                set_prop(g, &ent, k, v)?;
                ctx.stats.properties_set += 1;
            }
            SetOp::Replace { target, value } | SetOp::Merge { target, value } => {
                let replace = matches!(it, SetOp::Replace { .. });
                let t = eval(target, row, ctx, g)?;
                let Some(ent) = entity(&t, "SET")? else { continue };
                check_alive(g, &ent)?;
                let src = eval(value, row, ctx, g)?;
                let new = source_map(src, g)?;
                if replace {
                    for (k, _) in get_props(g, &ent) {
                        let name = g.token_name(TokenKind::PropertyKey, k).unwrap_or_default();
                        if !new.iter().any(|(n, v)| *n == name && !v.is_null()) {
                            set_prop(g, &ent, k, Value::Null)?;
                            ctx.stats.properties_set += 1;
                        }
                    }
                }
                for (k, v) in new {
                    let tok = g.get_or_create_token(TokenKind::PropertyKey, &k)?;
                    if v.is_null() {
                        if get_prop(g, &ent, tok).is_some() {
                            set_prop(g, &ent, tok, Value::Null)?;
                            ctx.stats.properties_set += 1;
                        }
                        continue;
                    }
                    set_prop(g, &ent, tok, storable(v)?)?;
                    ctx.stats.properties_set += 1;
                }
            }
            SetOp::Labels { target, labels, dynamic } => {
                let t = eval(target, row, ctx, g)?;
                let labels = with_dyn_labels(labels, dynamic, row, ctx, g)?;
                match t {
                    Value::Node(n) => {
                        for l in labels.iter() {
                            let tok = g.get_or_create_token(TokenKind::Label, l)?;
                            if g.add_label(n, tok)? {
                                ctx.stats.labels_added += 1;
                            }
                        }
                    }
                    Value::Null => {}
                    other => {
                        return Err(Error::type_error(format!(
                            "Type mismatch: expected Node but was {}",
                            other.type_name()
                        ))
                        .with_detail("InvalidArgumentType"))
                    }
                }
            }
            SetOp::RemoveProperty { target, key } => {
                let t = eval(target, row, ctx, g)?;
                let Some(ent) = entity(&t, "REMOVE")? else { continue };
                check_alive(g, &ent)?;
                let Some(k) = g.token_id(TokenKind::PropertyKey, key) else { continue };
                if get_prop(g, &ent, k).is_some() {
                    set_prop(g, &ent, k, Value::Null)?;
                    ctx.stats.properties_set += 1;
                }
            }
            SetOp::DynamicProperty { target, key, value } => {
                let t = eval(target, row, ctx, g)?;
                let key = dynamic_key(eval(key, row, ctx, g)?)?;
                let Some(ent) = entity(&t, "SET")? else { continue };
                check_alive(g, &ent)?;
                let v = storable(eval(value, row, ctx, g)?)?;
                let k = g.get_or_create_token(TokenKind::PropertyKey, &key)?;
                if v.is_null() && get_prop(g, &ent, k).is_none() {
                    continue;
                }
                set_prop(g, &ent, k, v)?;
                ctx.stats.properties_set += 1;
            }
            SetOp::RemoveDynamicProperty { target, key } => {
                let t = eval(target, row, ctx, g)?;
                let key = dynamic_key(eval(key, row, ctx, g)?)?;
                let Some(ent) = entity(&t, "REMOVE")? else { continue };
                check_alive(g, &ent)?;
                let Some(k) = g.token_id(TokenKind::PropertyKey, &key) else { continue };
                if get_prop(g, &ent, k).is_some() {
                    set_prop(g, &ent, k, Value::Null)?;
                    ctx.stats.properties_set += 1;
                }
            }
            SetOp::RemoveLabels { target, labels, dynamic } => {
                let t = eval(target, row, ctx, g)?;
                let labels = with_dyn_labels(labels, dynamic, row, ctx, g)?;
                match t {
                    Value::Node(n) => {
                        for l in labels.iter() {
                            if let Some(tok) = g.token_id(TokenKind::Label, l) {
                                if g.remove_label(n, tok)? {
                                    ctx.stats.labels_removed += 1;
                                }
                            }
                        }
                    }
                    Value::Null => {}
                    other => {
                        return Err(Error::type_error(format!(
                            "Type mismatch: expected Node but was {}",
                            other.type_name()
                        ))
                        .with_detail("InvalidArgumentType"))
                    }
                }
            }
        }
    }
    Ok(())
}

/// Static labels followed by the names of the dynamic ones (borrowed when there are none).
fn with_dyn_labels<'l>(
    labels: &'l [Name],
    dynamic: &[PExpr],
    row: &mut Row,
    ctx: &mut Ctx,
    g: &mut dyn Graph,
) -> Result<std::borrow::Cow<'l, [Name]>> {
    if dynamic.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(labels));
    }
    let mut all = labels.to_vec();
    for e in dynamic {
        let v = eval(e, row, ctx, g)?;
        all.extend(dyn_names(&v, NameOf::NodeLabel)?);
    }
    Ok(std::borrow::Cow::Owned(all))
}

struct Create {
    input: Box<dyn Operator>,
    steps: Vec<CreateStep>,
}

impl Operator for Create {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        run_create(&self.steps, &mut r, ctx, g, false)?;
        Ok(Some(r))
    }
}

struct Merge {
    input: Box<dyn Operator>,
    matcher: Box<dyn Operator>,
    create: Vec<CreateStep>,
    on_create: Vec<SetOp>,
    on_match: Vec<SetOp>,
    pending: Vec<Row>,
}

impl Operator for Merge {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.pending.clear();
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop() {
                return Ok(Some(r));
            }
            let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
            self.matcher.reset(&r);
            let mut found = Vec::new();
            while let Some(m) = self.matcher.next(ctx, g)? {
                found.push(m);
            }
            if found.is_empty() {
                run_create(&self.create, &mut r, ctx, g, true)?;
                run_set(&self.on_create, &mut r, ctx, g)?;
                return Ok(Some(r));
            }
            for m in &mut found {
                run_set(&self.on_match, m, ctx, g)?;
            }
            found.reverse();
            self.pending = found;
        }
    }
}

struct SetOpr {
    input: Box<dyn Operator>,
    items: Vec<SetOp>,
}

impl Operator for SetOpr {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        run_set(&self.items, &mut r, ctx, g)?;
        Ok(Some(r))
    }
}

/// Deletes after reading all input rows: relationships first, then nodes, so a clause like
/// `DELETE a, r, b` succeeds regardless of the order rows arrive in.
struct Delete {
    input: Box<dyn Operator>,
    exprs: Vec<PExpr>,
    detach: bool,
    out: Option<std::vec::IntoIter<Row>>,
}

impl Delete {
    fn collect(v: &Value, nodes: &mut Vec<NodeId>, rels: &mut Vec<RelId>) -> Result<()> {
        match v {
            Value::Null => {}
            Value::Node(n) => nodes.push(*n),
            Value::Relationship(r) => rels.push(*r),
            Value::Path(p) => {
                nodes.extend(p.nodes.iter().copied());
                rels.extend(p.rels.iter().copied());
            }
            Value::List(items) => {
                for it in items {
                    Self::collect(it, nodes, rels)?;
                }
            }
            other => {
                return Err(Error::type_error(format!(
                    "Expected a Node, Relationship or Path, but got a {}",
                    other.type_name()
                ))
                .with_detail("InvalidArgumentType"))
            }
        }
        Ok(())
    }
}

impl Operator for Delete {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
        self.out = None;
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        if self.out.is_none() {
            let mut rows = Vec::new();
            let mut nodes = Vec::new();
            let mut rels = Vec::new();
            while let Some(mut r) = self.input.next(ctx, g)? {
                for e in &self.exprs {
                    let v = eval(e, &mut r, ctx, g)?;
                    Self::collect(&v, &mut nodes, &mut rels)?;
                }
                rows.push(r);
            }
            if self.detach {
                let mut edges = Vec::new();
                for n in &nodes {
                    edges.clear();
                    g.node_edges(*n, Direction::Both, &[], &mut edges);
                    rels.extend(edges.iter().map(|e| e.rel));
                }
            }
            let mut seen = HashSet::new();
            for r in rels {
                if seen.insert(r) && !g.rel_deleted_in_tx(r) && g.rel_exists(r) {
                    if let Some((_, _, t)) = g.rel_info(r) {
                        ctx.deleted_rel_types.insert(r, t);
                    }
                    g.delete_rel(r)?;
                    ctx.stats.relationships_deleted += 1;
                }
            }
            let mut seen = HashSet::new();
            for n in nodes {
                if seen.insert(n) && !g.node_deleted_in_tx(n) && g.node_exists(n) {
                    g.delete_node(n).map_err(|e| {
                        if e.status == Status::DeleteNodeWithRelationships && e.detail.is_none() {
                            e.with_detail("DeleteConnectedNode")
                        } else {
                            e
                        }
                    })?;
                    ctx.stats.nodes_deleted += 1;
                }
            }
            self.out = Some(rows.into_iter());
        }
        Ok(self.out.as_mut().and_then(|o| o.next()))
    }
}

struct Foreach {
    input: Box<dyn Operator>,
    slot: Slot,
    list: PExpr,
    body: Box<dyn Operator>,
}

impl Operator for Foreach {
    fn reset(&mut self, arg: &Row) {
        self.input.reset(arg);
    }
    fn next(&mut self, ctx: &mut Ctx, g: &mut dyn Graph) -> Result<Option<Row>> {
        let Some(mut r) = self.input.next(ctx, g)? else { return Ok(None) };
        let items = match eval(&self.list, &mut r, ctx, g)? {
            Value::List(items) => items,
            Value::Null => Vec::new(),
            other => {
                return Err(Error::type_error(format!(
                    "Type mismatch: expected List but was {}",
                    other.type_name()
                ))
                .with_detail("InvalidArgumentType"))
            }
        };
        for it in items {
            let mut inner = r.clone();
            inner[self.slot] = it;
            self.body.reset(&inner);
            while self.body.next(ctx, g)?.is_some() {}
        }
        Ok(Some(r))
    }
}
