//! `CALL procedure(...) YIELD ...`: signature checks and output columns.

use std::sync::Arc;

use arbor_cypher_syntax::ast::{self, Expr, Span};
use arbor_model::{Result, Status, Value};

use crate::bind::*;
use crate::expr::PExpr;
use crate::ops::Op;

impl Binder<'_> {
    pub(crate) fn plan_call(
        &mut self,
        op: Op,
        scope: &mut Scope,
        qn: &ast::QualifiedName,
        args: Option<&[Expr]>,
        yield_: &Option<ast::YieldSpec>,
        standalone: bool,
    ) -> Result<(Op, Cols)> {
        let dotted = qn.dotted();
        let sig = self.res.procedure(&dotted).ok_or_else(|| {
            self.err(
                qn.span,
                Status::ProcedureNotFound,
                "ProcedureNotFound",
                format!("There is no procedure with the name `{dotted}` registered for this database instance. Please ensure you've spelled the procedure name correctly and that the procedure is properly deployed."),
            )
        })?;
        let mut bargs = Vec::new();
        match args {
            Some(a) => {
                let required = sig.inputs.len().saturating_sub(sig.optional);
                if a.len() > sig.inputs.len() || a.len() < required {
                    return Err(self.syntax(
                        qn.span,
                        "InvalidNumberOfArguments",
                        format!(
                            "Procedure call does not provide the required number of arguments: got {} expected {} (signature: {})",
                            a.len(),
                            sig.inputs.len(),
                            sig.signature_text()
                        ),
                    ));
                }
                for (e, (input, ty)) in a.iter().zip(&sig.inputs) {
                    let b = self.bind_expr(e, scope)?;
                    // Literal arguments are type-checked now; others when the call runs.
                    if let PExpr::Const(v) = &b {
                        if !ty.accepts(v) {
                            return Err(self.syntax(
                                e.span,
                                "InvalidArgumentType",
                                format!(
                                    "Type mismatch for procedure argument `{input}`: expected {ty} but was {}",
                                    v.type_name()
                                ),
                            ));
                        }
                    }
                    bargs.push(b);
                }
                // Left-out optional inputs.
                while bargs.len() < sig.inputs.len() {
                    bargs.push(PExpr::Const(Value::Null));
                }
            }
            None => {
                if !standalone && !sig.inputs.is_empty() {
                    return Err(self.syntax(
                        qn.span,
                        "InvalidArgumentPassingMode",
                        "Procedure call inside a query does not support passing arguments implicitly",
                    ));
                }
                // Standalone calls without parentheses take their arguments from the
                // parameters of the same names.
                for (i, _) in &sig.inputs {
                    let idx = self.param(&Arc::from(i.as_str()));
                    bargs.push(PExpr::Param(idx));
                }
            }
        }
        let mut yields = Vec::new();
        let mut cols = Vec::new();
        let mut where_ = None;
        match yield_ {
            None => {
                // Standalone: every output is a column. In a query, outputs are not bound
                // implicitly (Neo4j asks for an explicit YIELD), so naming one is an error.
                if standalone {
                    for (i, (o, _)) in sig.outputs.iter().enumerate() {
                        let s = self.slot();
                        yields.push((i, s));
                        cols.push((o.clone(), s));
                    }
                }
            }
            Some(y) => {
                if y.star && !standalone {
                    return Err(self.syntax(
                        qn.span,
                        "UnexpectedSyntax",
                        "Cannot use `YIELD *` outside standalone call",
                    ));
                }
                let items: Vec<(String, Option<&ast::Ident>, Span)> = if y.star {
                    sig.outputs.iter().map(|(o, _)| (o.clone(), None, qn.span)).collect()
                } else {
                    y.items.iter().map(|(o, a)| (o.name.to_string(), a.as_ref(), o.span)).collect()
                };
                for (o, alias, span) in items {
                    let idx = sig.outputs.iter().position(|(x, _)| *x == o).ok_or_else(|| {
                        self.syntax(
                            span,
                            "UndefinedVariable",
                            format!("Unknown procedure output: `{o}`"),
                        )
                    })?;
                    let n: Arc<str> =
                        alias.map(|a| a.name.clone()).unwrap_or_else(|| Arc::from(o.as_str()));
                    if scope.get(&n).is_some() {
                        return Err(self.syntax(
                            span,
                            "VariableAlreadyBound",
                            format!("Variable `{n}` already declared"),
                        ));
                    }
                    let s = self.slot();
                    scope.bind(n.clone(), s, Kind::Any);
                    yields.push((idx, s));
                    cols.push((n.to_string(), s));
                }
                if let Some(w) = &y.where_ {
                    where_ = Some(self.bind_pred(w, scope)?);
                }
            }
        }
        let mut op = Op::ProcedureCall {
            input: Box::new(op),
            name: Arc::from(dotted.as_str()),
            args: bargs,
            arg_types: sig.inputs.iter().map(|(_, t)| t.clone()).collect(),
            void: sig.outputs.is_empty(),
            yields,
        };
        if let Some(w) = where_ {
            op = Op::Filter { input: Box::new(op), pred: w, reads: false };
        }
        Ok((op, cols))
    }
}
