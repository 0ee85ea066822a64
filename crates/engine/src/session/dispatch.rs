//! Statement dispatch: parse and plan a statement (or take its cached plan; `SHOW` and
//! administration commands are planned as calls of their internal procedures), route schema
//! commands, attach notifications, refuse writes in READ mode.

use std::sync::Arc;

use arbor_cypher_syntax::ast::{ShowKind, Statement};
use arbor_exec::PreparedQuery;
use arbor_model::{Error, Result, Status};

use super::database::PLAN_CACHE_MAX;
use super::prepared::Prepared;
use super::transaction::access_mode_error;
use super::{AccessMode, Database, Notification, QueryType};

impl Database {
    /// Parses and plans `text`, or returns the cached plan.
    pub(crate) fn prepare(&self, text: &str) -> Result<Prepared> {
        if let Some((p, n)) = self.inner.plans.lock().get(text) {
            return Ok(Prepared::Query(p.clone(), n.clone()));
        }
        let (stmt, graph) = arbor_cypher_syntax::parse_with_graph(text)?;
        if let Some(graph) = graph {
            check_graph(&graph, &stmt, text)?;
        }
        match stmt {
            // Neo4j plans these without running them: no rows, the command's query type.
            Statement::Explain(inner) if matches!(*inner, Statement::Schema(_)) => {
                Ok(Prepared::Explained(QueryType::Schema))
            }
            Statement::Show(cmd) if cmd.kind == ShowKind::Servers => {
                Err(crate::show_settings::servers_refused())
            }
            Statement::Explain(inner) if matches!(&*inner, Statement::Show(c) if c.kind == ShowKind::Servers) => {
                Ok(Prepared::Explained(QueryType::Read))
            }
            Statement::Schema(cmd) => Ok(Prepared::Schema(Box::new(cmd))),
            other => {
                // [procedures hook] resolve CALLs against this database's registry; a `SHOW` or
                // administration command also resolves its internal procedure (show.rs,
                // users.rs, show_transactions.rs).
                let internal =
                    |s: &Statement| matches!(s, Statement::Show(_) | Statement::Admin(_));
                let procs = match &other {
                    s if internal(s) => self.inner.procedures.for_show(),
                    Statement::Explain(s) | Statement::Profile(s) if internal(s) => {
                        self.inner.procedures.for_show()
                    }
                    _ => self.inner.procedures.snapshot(),
                };
                let indexed = self.indexed_names();
                let rel_indexed = self.rel_indexed_names();
                let rel_indexes_on = |t: &str| {
                    rel_indexed
                        .iter()
                        .filter(|(it, _)| it.as_str() == t)
                        .map(|(_, ks)| ks.clone())
                        .collect()
                };
                let indexes_on = |l: &str| {
                    indexed
                        .iter()
                        .filter(|(il, _)| il.as_str() == l)
                        .map(|(_, ks)| ks.clone())
                        .collect()
                };
                let kinds = self.kind_indexed_names();
                let kind_indexed = |u: arbor_cypher_plan::IndexUse, rel: bool, l: &str, k: &str| {
                    kinds
                        .iter()
                        .any(|(tu, tr, tl, tk)| *tu == u && *tr == rel && tl == l && tk == k)
                };
                let prepared = Arc::new(PreparedQuery::prepare_with_schema(
                    &other,
                    text,
                    &procs,
                    &indexes_on,
                    &rel_indexes_on,
                    &kind_indexed,
                )?);
                let notes: Arc<[Notification]> = query_notifications(&other).into();
                let mut plans = self.inner.plans.lock();
                if plans.len() >= PLAN_CACHE_MAX {
                    plans.clear();
                }
                plans.insert(text.to_string(), (prepared.clone(), notes.clone()));
                Ok(Prepared::Query(prepared, notes))
            }
        }
    }
}

/// The graph a leading `USE` names must be this database (`neo4j`); `system` takes only
/// administration commands (here: `SHOW`), as in Neo4j.
fn check_graph(graph: &str, stmt: &Statement, text: &str) -> Result<()> {
    if graph.eq_ignore_ascii_case("neo4j") {
        return Ok(());
    }
    if graph.eq_ignore_ascii_case("system") {
        if matches!(stmt, Statement::Show(_)) {
            return Ok(());
        }
        return Err(Error::semantic(format!(
            "Not a recognised system command or procedure. This Cypher command can only be \
             executed in a user database: {text}"
        )));
    }
    Err(Error::new(Status::DatabaseNotFound, format!("Graph not found: {graph}")))
}

/// Notifications Neo4j attaches to a query (computed once per cached plan).
fn query_notifications(stmt: &Statement) -> Vec<Notification> {
    let mut out = Vec::new();
    if has_cartesian_product(stmt) {
        out.push(Notification {
            code: "Neo.ClientNotification.Statement.CartesianProduct".into(),
            gql_status: "03N90".into(),
            title: "This query builds a cartesian product between disconnected patterns.".into(),
            description: "If a part of a query contains multiple disconnected patterns, this will \
                build a cartesian product between all those parts. This may produce a large amount \
                of data and slow down query processing. While occasionally intended, it may often \
                be possible to reformulate the query that avoids the use of this cross product, \
                perhaps by adding a relationship between the different parts or by using OPTIONAL \
                MATCH."
                .into(),
            severity: "INFORMATION".into(),
            position: None,
        });
    }
    out
}

/// Whether some `MATCH` has pattern parts that share no variable (directly or through others).
fn has_cartesian_product(stmt: &Statement) -> bool {
    use arbor_cypher_syntax::ast::{ClauseKind, PatternPart};
    fn vars(part: &PatternPart) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        let nodes =
            std::iter::once(&part.element.start).chain(part.element.chain.iter().map(|(_, n)| n));
        for n in nodes {
            if let Some(id) = &n.variable {
                v.push(&id.name);
            }
        }
        v
    }
    fn disconnected(parts: &[PatternPart]) -> bool {
        if parts.len() < 2 {
            return false;
        }
        // Grow one component from the first part until nothing more joins it.
        let sets: Vec<Vec<&str>> = parts.iter().map(vars).collect();
        let mut joined = vec![false; sets.len()];
        joined[0] = true;
        let mut component: Vec<&str> = sets[0].clone();
        let mut changed = true;
        while changed {
            changed = false;
            for (i, set) in sets.iter().enumerate() {
                if !joined[i] && set.iter().any(|v| component.contains(v)) {
                    joined[i] = true;
                    component.extend(set.iter().copied());
                    changed = true;
                }
            }
        }
        joined.iter().any(|j| !j)
    }
    let query = match stmt {
        Statement::Query(q) => q,
        Statement::Explain(inner) | Statement::Profile(inner) => {
            return has_cartesian_product(inner)
        }
        _ => return false,
    };
    std::iter::once(&query.first).chain(query.unions.iter().map(|(_, q)| q)).any(|single| {
        single.clauses.iter().any(|c| match &c.kind {
            ClauseKind::Match { pattern, .. } => disconnected(pattern),
            _ => false,
        })
    })
}

/// Refuses a writing statement in a READ transaction before it runs (the plan knows it
/// writes); `EXPLAIN` of one runs nothing and is allowed.
pub(super) fn check_access(p: Prepared, mode: AccessMode) -> Result<Prepared> {
    if mode == AccessMode::Write {
        return Ok(p);
    }
    let writes = match &p {
        Prepared::Schema(_) => true,
        Prepared::Explained(_) => false,
        // User administration changes the user store, not the graph (Neo4j runs it on
        // `system`): its procedures do not write.
        Prepared::Query(q, _) => q.is_write() && !q.is_explain(),
    };
    if writes {
        return Err(access_mode_error());
    }
    Ok(p)
}
