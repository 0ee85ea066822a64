//! `LOAD CSV [WITH HEADERS] FROM url AS row [FIELDTERMINATOR c]`, and the `linenumber()` and
//! `file()` functions that read where the current row came from.
//!
//! The clause binds `row` and two hidden slots (line number, file) that the `LoadCsv`
//! operator fills for every record; `linenumber()` and `file()` read those slots anywhere
//! after the clause, and are null without a `LOAD CSV` before them, as in Neo4j. Opening the
//! URL and parsing the file happen at run time (`exec`).

use arbor_cypher_syntax::ast::{Expr, ExprKind, Ident, Literal, QualifiedName, Span};
use arbor_model::{Result, Value};

use crate::bind::*;
use crate::expr::PExpr;
use crate::ops::Op;

/// One `LOAD CSV` clause, as written.
pub(crate) struct LoadCsvClause<'a> {
    pub(crate) headers: bool,
    pub(crate) url: &'a Expr,
    pub(crate) variable: &'a Ident,
    pub(crate) terminator: Option<&'a str>,
    pub(crate) span: Span,
}

impl Binder<'_> {
    /// Plans the clause on top of `op`; `row` joins `scope`.
    pub(crate) fn plan_load_csv(
        &mut self,
        op: Op,
        scope: &mut Scope,
        load: &LoadCsvClause<'_>,
    ) -> Result<Op> {
        let shown = match &load.url.kind {
            ExprKind::Literal(Literal::Int(_)) => Some("Integer"),
            ExprKind::Literal(Literal::Float(_)) => Some("Float"),
            ExprKind::Literal(Literal::Bool(_)) => Some("Boolean"),
            ExprKind::List(_) => Some("List<Any>"),
            ExprKind::Map(_) => Some("Map"),
            _ => None,
        };
        if let Some(t) = shown {
            return Err(self.syntax(
                load.url.span,
                "InvalidArgumentType",
                format!("Type mismatch: expected String but was {t}"),
            ));
        }
        let url = self.bind_expr(load.url, scope)?;
        let terminator = match load.terminator {
            None => b',',
            Some(t) => match t.as_bytes() {
                [c] => *c,
                _ => {
                    return Err(self.syntax(
                        load.span,
                        "InvalidArgumentValue",
                        "CSV field terminator can only be one character wide",
                    ))
                }
            },
        };
        if scope.get(&load.variable.name).is_some() {
            return Err(self.already_bound(load.variable));
        }
        let slot = self.slot();
        let (line, file) = (self.slot(), self.slot());
        self.csv = Some((line, file));
        scope.bind(load.variable.name.clone(), slot, Kind::Any);
        Ok(Op::LoadCsv {
            input: Box::new(op),
            url,
            slot,
            headers: load.headers,
            terminator,
            line,
            file,
        })
    }

    /// Whether `name` is `linenumber` or `file` (any case), which this module binds.
    pub(crate) fn is_csv_function(&self, name: &QualifiedName) -> bool {
        let n = &name.parts[0].name;
        n.eq_ignore_ascii_case("linenumber") || n.eq_ignore_ascii_case("file")
    }

    /// `linenumber()` / `file()`: the hidden slot of the last `LOAD CSV`, or null.
    pub(crate) fn csv_function(&self, name: &QualifiedName) -> PExpr {
        let line = name.parts[0].name.eq_ignore_ascii_case("linenumber");
        match self.csv {
            Some((l, _)) if line => PExpr::Slot(l),
            Some((_, f)) => PExpr::Slot(f),
            None => PExpr::Const(Value::Null),
        }
    }
}
