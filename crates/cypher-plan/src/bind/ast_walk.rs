//! Syntactic queries over AST expressions (no scope needed): a generic walk, and whether an
//! expression aggregates, aggregates inside a list body, or holds a subquery.

use arbor_cypher_syntax::ast::{Expr, ExprKind, MapProjectionItem, Span};

use crate::catalog::is_aggregate;

/// Visits `e` and its sub-expressions (not entering subqueries); `f` returns false to stop
/// descending below a node.
pub(crate) fn walk_ast(e: &Expr, f: &mut dyn FnMut(&Expr) -> bool) {
    if !f(e) {
        return;
    }
    let mut go = |x: &Expr| walk_ast(x, f);
    match &e.kind {
        ExprKind::Literal(_)
        | ExprKind::Parameter(_)
        | ExprKind::Variable(_)
        | ExprKind::CountStar
        | ExprKind::PatternPredicate(_)
        | ExprKind::Exists(_)
        | ExprKind::CountSubquery(_)
        | ExprKind::CollectSubquery(_) => {}
        ExprKind::Property(a, _)
        | ExprKind::Unary(_, a)
        | ExprKind::IsNull { expr: a, .. }
        | ExprKind::HasLabels(a, _)
        | ExprKind::HasLabelExpr(a, _) => go(a),
        ExprKind::List(xs) => xs.iter().for_each(go),
        ExprKind::Function { args, .. } => args.iter().for_each(go),
        ExprKind::Map(xs) => xs.iter().for_each(|(_, x)| go(x)),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            go(a);
            go(b);
        }
        ExprKind::Compare(a, rest) => {
            go(a);
            rest.iter().for_each(|(_, x)| go(x));
        }
        ExprKind::Slice { expr, from, to } => {
            go(expr);
            if let Some(x) = from {
                go(x);
            }
            if let Some(x) = to {
                go(x);
            }
        }
        ExprKind::Case { operand, whens, else_ } => {
            if let Some(x) = operand {
                go(x);
            }
            for (w, t) in whens {
                go(w);
                go(t);
            }
            if let Some(x) = else_ {
                go(x);
            }
        }
        ExprKind::ListComprehension { list, filter, map, .. } => {
            go(list);
            if let Some(x) = filter {
                go(x);
            }
            if let Some(x) = map {
                go(x);
            }
        }
        ExprKind::PatternComprehension { filter, map, .. } => {
            if let Some(x) = filter {
                go(x);
            }
            go(map);
        }
        ExprKind::Quantified { list, filter, .. } => {
            go(list);
            go(filter);
        }
        ExprKind::Reduce { init, list, expr, .. } => {
            go(init);
            go(list);
            go(expr);
        }
        ExprKind::MapProjection { items, .. } => {
            for it in items {
                if let MapProjectionItem::Literal(_, x) = it {
                    go(x);
                }
            }
        }
    }
}

pub(crate) fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    walk_ast(e, &mut |x| {
        match &x.kind {
            ExprKind::CountStar => found = true,
            ExprKind::Function { name, .. } if is_aggregate(&name.dotted().to_lowercase()) => {
                found = true
            }
            _ => {}
        }
        !found
    });
    found
}

/// The first aggregate call inside the body of a list comprehension, quantifier or `reduce`:
/// those bodies run once per list element, where an aggregation means nothing (Neo4j: "Can't
/// use aggregating expressions inside of expressions executing over lists").
pub(crate) fn aggregate_over_list(e: &Expr) -> Option<Span> {
    let mut found = None;
    walk_ast(e, &mut |x| {
        let bodies: Vec<&Expr> = match &x.kind {
            ExprKind::ListComprehension { filter, map, .. } => {
                filter.iter().chain(map.iter()).map(|b| &**b).collect()
            }
            ExprKind::Quantified { filter, .. } => vec![&**filter],
            ExprKind::Reduce { expr, .. } => vec![&**expr],
            _ => Vec::new(),
        };
        if let Some(b) = bodies.into_iter().find(|b| contains_aggregate(b)) {
            found = Some(b.span);
        }
        found.is_none()
    });
    found
}

pub(crate) fn has_subquery(e: &Expr) -> bool {
    let mut found = false;
    walk_ast(e, &mut |x| {
        match &x.kind {
            ExprKind::PatternPredicate(_)
            | ExprKind::PatternComprehension { .. }
            | ExprKind::Exists(_)
            | ExprKind::CountSubquery(_)
            | ExprKind::CollectSubquery(_) => found = true,
            _ => {}
        }
        !found
    });
    found
}
