//! Expressions by precedence climbing.
//!
//! Binding powers, loosest first: OR(1) < XOR(2) < AND(3) < NOT(4, prefix) < comparison chains(5)
//! < string/list/null predicates(6) < + -(7) < * / %(8) < ^(9, left-assoc) < unary + -(10) <
//! postfix (`.key`, `[i]`, `[a..b]`, `:Label`) < atoms.

use std::sync::Arc;

use crate::ast::*;
use crate::lexer::Tok;

use super::{PResult, Parser};

const BP_NOT: u8 = 4;
const BP_CMP: u8 = 5;
const BP_PRED: u8 = 6;
const BP_UNARY: u8 = 10;

enum Infix {
    Bin(BinaryOp, u8, usize),
    Cmp,
    IsNull,
}

fn cmp_op(t: &Tok) -> Option<CompareOp> {
    match t {
        Tok::Sym("=") => Some(CompareOp::Eq),
        Tok::Sym("<>") | Tok::Sym("!=") => Some(CompareOp::Ne),
        Tok::Sym("<") => Some(CompareOp::Lt),
        Tok::Sym("<=") => Some(CompareOp::Le),
        Tok::Sym(">") => Some(CompareOp::Gt),
        Tok::Sym(">=") => Some(CompareOp::Ge),
        _ => None,
    }
}

fn boxed(e: Expr) -> Box<Expr> {
    Box::new(e)
}

impl<'a> Parser<'a> {
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.expr_bp(0)
    }

    /// The infix operator at the current position: (op, binding power, tokens to consume).
    fn peek_infix(&self) -> Option<Infix> {
        let t = self.peek();
        if cmp_op(t).is_some() {
            return Some(Infix::Cmp);
        }
        let bin = |op, bp, n| Some(Infix::Bin(op, bp, n));
        match t {
            Tok::Sym("+") => bin(BinaryOp::Add, 7, 1),
            Tok::Sym("-") => bin(BinaryOp::Sub, 7, 1),
            Tok::Sym("*") => bin(BinaryOp::Mul, 8, 1),
            Tok::Sym("/") => bin(BinaryOp::Div, 8, 1),
            Tok::Sym("%") => bin(BinaryOp::Mod, 8, 1),
            Tok::Sym("^") => bin(BinaryOp::Pow, 9, 1),
            Tok::Sym("=~") => bin(BinaryOp::RegexMatch, BP_PRED, 1),
            Tok::Word(w) => {
                let w = w.to_ascii_uppercase();
                match w.as_str() {
                    "OR" => bin(BinaryOp::Or, 1, 1),
                    "XOR" => bin(BinaryOp::Xor, 2, 1),
                    "AND" => bin(BinaryOp::And, 3, 1),
                    "IN" => bin(BinaryOp::In, BP_PRED, 1),
                    "CONTAINS" => bin(BinaryOp::Contains, BP_PRED, 1),
                    "STARTS" if self.is_kw_n(1, "WITH") => bin(BinaryOp::StartsWith, BP_PRED, 2),
                    "ENDS" if self.is_kw_n(1, "WITH") => bin(BinaryOp::EndsWith, BP_PRED, 2),
                    "IS" => Some(Infix::IsNull),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    pub(crate) fn expr_bp(&mut self, min: u8) -> PResult<Expr> {
        self.nested(|p| p.expr_bp_inner(min))
    }

    fn expr_bp_inner(&mut self, min: u8) -> PResult<Expr> {
        let start = self.cur_span().start;
        let mut lhs = if self.is_kw("NOT") {
            self.bump();
            let operand = self.expr_bp(BP_NOT)?;
            Expr {
                kind: ExprKind::Unary(UnaryOp::Not, boxed(operand)),
                span: self.span_from(start),
            }
        } else if self.is_sym("-") || self.is_sym("+") {
            let neg = self.is_sym("-");
            self.bump();
            match (neg, self.peek().clone()) {
                // Fold the sign into integer literals so that i64::MIN is expressible.
                (true, Tok::Int(v)) => {
                    self.bump();
                    let value = match v {
                        Some(v) if v <= (i64::MAX as u64) + 1 => (v as i128).wrapping_neg() as i64,
                        _ => return Err(self.int_overflow(start)),
                    };
                    let lit = Expr {
                        kind: ExprKind::Literal(Literal::Int(value)),
                        span: self.span_from(start),
                    };
                    self.postfix(lit)?
                }
                (true, Tok::Float(f)) => {
                    self.bump();
                    let lit = Expr {
                        kind: ExprKind::Literal(Literal::Float(-f)),
                        span: self.span_from(start),
                    };
                    self.postfix(lit)?
                }
                _ => {
                    let operand = self.expr_bp(BP_UNARY)?;
                    let op = if neg { UnaryOp::Neg } else { UnaryOp::Plus };
                    Expr { kind: ExprKind::Unary(op, boxed(operand)), span: self.span_from(start) }
                }
            }
        } else {
            self.postfix_expr()?
        };
        let mut wraps = 0usize;
        while let Some(op) = self.peek_infix() {
            wraps += 1;
            self.check_chain(wraps)?;
            match op {
                Infix::Cmp => {
                    if BP_CMP < min {
                        break;
                    }
                    let mut items = Vec::new();
                    while let Some(op) = cmp_op(self.peek()) {
                        self.bump();
                        items.push((op, self.expr_bp(BP_CMP + 1)?));
                    }
                    lhs = Expr {
                        kind: ExprKind::Compare(boxed(lhs), items),
                        span: self.span_from(start),
                    };
                }
                Infix::IsNull => {
                    if BP_PRED < min {
                        break;
                    }
                    if let Some(negated) = self.at_is_labeled() {
                        lhs = self.is_labeled(lhs, negated, start)?;
                        continue;
                    }
                    if self.is_label_is() {
                        let kind = self.has_labels(lhs)?;
                        lhs = Expr { kind, span: self.span_from(start) };
                        continue;
                    }
                    self.bump();
                    let negated = self.eat_kw("NOT");
                    self.expect_kw("NULL")?;
                    lhs = Expr {
                        kind: ExprKind::IsNull { expr: boxed(lhs), negated },
                        span: self.span_from(start),
                    };
                }
                Infix::Bin(op, bp, ntoks) => {
                    if bp < min {
                        break;
                    }
                    for _ in 0..ntoks {
                        self.bump();
                    }
                    let rhs = self.expr_bp(bp + 1)?;
                    lhs = Expr {
                        kind: ExprKind::Binary(op, boxed(lhs), boxed(rhs)),
                        span: self.span_from(start),
                    };
                }
            }
        }
        Ok(lhs)
    }

    /// `Some(negated)` at `IS [NOT] LABELED` followed by a label expression (Cypher 25). A
    /// `LABELED` followed by a word that can follow an expression (`n IS LABELED AS x`,
    /// `WHERE n IS LABELED RETURN n`) is the old `IS` form over a label named `LABELED`, as
    /// Neo4j 5.26 reads it.
    fn at_is_labeled(&self) -> Option<bool> {
        let negated = self.is_kw_n(1, "NOT");
        let at = if negated { 2 } else { 1 };
        let after_expr = EXPR_FOLLOWERS.iter().any(|w| self.is_kw_n(at + 1, w));
        (self.is_kw("IS")
            && self.is_kw_n(at, "LABELED")
            && self.label_start_n(at + 1)
            && !after_expr)
            .then_some(negated)
    }

    /// `lhs IS [NOT] LABELED labelExpr`: the colon form, negated as a whole for `NOT`.
    fn is_labeled(&mut self, lhs: Expr, negated: bool, start: usize) -> PResult<Expr> {
        self.bump(); // IS
        if negated {
            self.bump();
        }
        let kind = self.has_labels(lhs)?;
        let test = Expr { kind, span: self.span_from(start) };
        if !negated {
            return Ok(test);
        }
        Ok(Expr { kind: ExprKind::Unary(UnaryOp::Not, boxed(test)), span: self.span_from(start) })
    }

    fn int_overflow(&self, at: usize) -> arbor_model::Error {
        self.error_at(at, "integer is too large").with_detail("IntegerOverflow")
    }

    /// An atom followed by postfix operators (property access, index, slice, label check).
    pub(crate) fn postfix_expr(&mut self) -> PResult<Expr> {
        let atom = self.atom()?;
        self.postfix(atom)
    }

    fn postfix(&mut self, mut e: Expr) -> PResult<Expr> {
        let start = e.span.start;
        let mut wraps = 0usize;
        loop {
            if self.is_sym(".") {
                self.bump();
                let key = self.ident("a property key")?;
                e = Expr { kind: ExprKind::Property(boxed(e), key), span: self.span_from(start) };
            } else if self.is_sym("[") {
                self.bump();
                if self.eat_sym("..") {
                    let to = if self.is_sym("]") { None } else { Some(boxed(self.expr()?)) };
                    self.expect_sym("]")?;
                    e = Expr {
                        kind: ExprKind::Slice { expr: boxed(e), from: None, to },
                        span: self.span_from(start),
                    };
                } else {
                    let first = self.expr()?;
                    if self.eat_sym("..") {
                        let to = if self.is_sym("]") { None } else { Some(boxed(self.expr()?)) };
                        self.expect_sym("]")?;
                        e = Expr {
                            kind: ExprKind::Slice { expr: boxed(e), from: Some(boxed(first)), to },
                            span: self.span_from(start),
                        };
                    } else {
                        self.expect_sym("]")?;
                        e = Expr {
                            kind: ExprKind::Index(boxed(e), boxed(first)),
                            span: self.span_from(start),
                        };
                    }
                }
            } else if self.is_sym(":") && self.label_start_n(1) {
                let kind = self.has_labels(e)?;
                e = Expr { kind, span: self.span_from(start) };
            } else {
                return Ok(e);
            }
            wraps += 1;
            self.check_chain(wraps)?;
        }
    }

    fn atom(&mut self) -> PResult<Expr> {
        let start = self.cur_span().start;
        let lit = |kind: Literal| ExprKind::Literal(kind);
        let kind = match self.peek().clone() {
            Tok::Int(v) => {
                let Some(v) = v.filter(|v| *v <= i64::MAX as u64) else {
                    return Err(self.int_overflow(start));
                };
                self.bump();
                lit(Literal::Int(v as i64))
            }
            Tok::Float(f) => {
                self.bump();
                lit(Literal::Float(f))
            }
            Tok::Str(s) => {
                self.bump();
                lit(Literal::String(Arc::from(s.as_str())))
            }
            Tok::Param(name) => {
                self.bump();
                ExprKind::Parameter(Arc::from(name.as_str()))
            }
            Tok::Sym("(") => {
                if self.paren_pattern_here() {
                    let element = self.pattern_element()?;
                    ExprKind::PatternPredicate(Box::new(element))
                } else {
                    self.bump();
                    let inner = self.expr()?;
                    self.expect_sym(")")?;
                    // Keep the parentheses in the span so that column names read as written.
                    return Ok(Expr { kind: inner.kind, span: self.span_from(start) });
                }
            }
            Tok::Sym("[") => return self.bracket_atom(),
            Tok::Sym("{") => return self.map_literal(),
            Tok::Word(w) => return self.word_atom(&w),
            Tok::Quoted(_) => {
                if self.is_sym_n(1, "(") {
                    return self.function_call();
                }
                let var = self.ident("a variable")?;
                if self.is_sym("{") {
                    return self.map_projection(var);
                }
                ExprKind::Variable(var.name)
            }
            _ => return Err(self.unexpected("an expression")),
        };
        Ok(Expr { kind, span: self.span_from(start) })
    }

    fn word_atom(&mut self, w: &str) -> PResult<Expr> {
        let start = self.cur_span().start;
        let upper = w.to_ascii_uppercase();
        let done = |p: &Self, kind| Ok(Expr { kind, span: p.span_from(start) });
        match upper.as_str() {
            "TRUE" => {
                self.bump();
                return done(self, ExprKind::Literal(Literal::Bool(true)));
            }
            "FALSE" => {
                self.bump();
                return done(self, ExprKind::Literal(Literal::Bool(false)));
            }
            "NULL" => {
                self.bump();
                return done(self, ExprKind::Literal(Literal::Null));
            }
            "CASE" => return self.case_expr(),
            "EXISTS" | "COUNT" | "COLLECT" if self.is_sym_n(1, "{") => {
                self.bump();
                self.bump();
                let body = self.subquery_body()?;
                self.expect_sym("}")?;
                let body = Box::new(body);
                let kind = match upper.as_str() {
                    "EXISTS" => ExprKind::Exists(body),
                    "COUNT" => ExprKind::CountSubquery(body),
                    _ => ExprKind::CollectSubquery(body),
                };
                return done(self, kind);
            }
            "COUNT" if self.is_sym_n(1, "(") && self.is_sym_n(2, "*") && self.is_sym_n(3, ")") => {
                for _ in 0..4 {
                    self.bump();
                }
                return done(self, ExprKind::CountStar);
            }
            "ALL" | "ANY" | "NONE" | "SINGLE"
                if self.is_sym_n(1, "(") && self.is_name_n(2) && self.is_kw_n(3, "IN") =>
            {
                let quantifier = match upper.as_str() {
                    "ALL" => Quantifier::All,
                    "ANY" => Quantifier::Any,
                    "NONE" => Quantifier::None,
                    _ => Quantifier::Single,
                };
                self.bump();
                self.bump();
                let variable = self.ident("a variable")?;
                self.bump(); // IN
                let list = self.expr()?;
                self.expect_kw("WHERE")?;
                let filter = self.expr()?;
                self.expect_sym(")")?;
                return done(
                    self,
                    ExprKind::Quantified {
                        quantifier,
                        variable,
                        list: boxed(list),
                        filter: boxed(filter),
                    },
                );
            }
            "REDUCE" if self.is_sym_n(1, "(") && self.is_name_n(2) && self.is_sym_n(3, "=") => {
                self.bump();
                self.bump();
                let accumulator = self.ident("an accumulator")?;
                self.bump(); // =
                let init = self.expr()?;
                self.expect_sym(",")?;
                let variable = self.ident("a variable")?;
                self.expect_kw("IN")?;
                let list = self.expr()?;
                self.expect_sym("|")?;
                let expr = self.expr()?;
                self.expect_sym(")")?;
                return done(
                    self,
                    ExprKind::Reduce {
                        accumulator,
                        init: boxed(init),
                        variable,
                        list: boxed(list),
                        expr: boxed(expr),
                    },
                );
            }
            _ => {}
        }
        if self.is_function_call_here() {
            return self.function_call();
        }
        let var = self.ident("a variable")?;
        if self.is_sym("{") {
            return self.map_projection(var);
        }
        done(self, ExprKind::Variable(var.name))
    }

    /// `name(`, `ns.name(`, `a.b.c(`.
    fn is_function_call_here(&self) -> bool {
        let mut i = 1;
        loop {
            if self.is_sym_n(i, "(") {
                return true;
            }
            if self.is_sym_n(i, ".") && self.is_name_n(i + 1) {
                i += 2;
            } else {
                return false;
            }
        }
    }

    fn function_call(&mut self) -> PResult<Expr> {
        let start = self.cur_span().start;
        let name = self.qualified_name()?;
        self.expect_sym("(")?;
        let distinct = self.eat_kw("DISTINCT");
        let mut args = Vec::new();
        if !self.is_sym(")") {
            args = self.expr_list()?;
        }
        self.expect_sym(")")?;
        Ok(Expr { kind: ExprKind::Function { name, distinct, args }, span: self.span_from(start) })
    }

    fn case_expr(&mut self) -> PResult<Expr> {
        let start = self.cur_span().start;
        self.bump(); // CASE
        let operand = if self.is_kw("WHEN") { None } else { Some(boxed(self.expr()?)) };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let w = self.expr()?;
            self.expect_kw("THEN")?;
            let t = self.expr()?;
            whens.push((w, t));
        }
        if whens.is_empty() {
            return Err(self.unexpected("WHEN"));
        }
        let else_ = if self.eat_kw("ELSE") { Some(boxed(self.expr()?)) } else { None };
        self.expect_kw("END")?;
        Ok(Expr { kind: ExprKind::Case { operand, whens, else_ }, span: self.span_from(start) })
    }

    /// `[`: list comprehension, pattern comprehension or list literal.
    fn bracket_atom(&mut self) -> PResult<Expr> {
        let start = self.cur_span().start;
        if self.is_name_n(1) && self.is_kw_n(2, "IN") {
            self.bump();
            let variable = self.ident("a variable")?;
            self.bump(); // IN
            let list = self.expr()?;
            let filter = if self.eat_kw("WHERE") { Some(boxed(self.comp_filter()?)) } else { None };
            let map = if self.eat_sym("|") { Some(boxed(self.expr()?)) } else { None };
            self.expect_sym("]")?;
            return Ok(Expr {
                kind: ExprKind::ListComprehension { variable, list: boxed(list), filter, map },
                span: self.span_from(start),
            });
        }
        let named = self.is_name_n(1)
            && self.is_sym_n(2, "=")
            && self.is_sym_n(3, "(")
            && self.paren_starts_pattern(self.pos + 3);
        let anonymous = self.is_sym_n(1, "(") && self.paren_starts_pattern(self.pos + 1);
        if named || anonymous {
            self.bump();
            let variable = if named {
                let v = self.ident("a path variable")?;
                self.bump(); // =
                Some(v)
            } else {
                None
            };
            let pattern = self.pattern_element()?;
            let filter = if self.eat_kw("WHERE") { Some(boxed(self.comp_filter()?)) } else { None };
            self.expect_sym("|")?;
            let map = self.expr()?;
            self.expect_sym("]")?;
            return Ok(Expr {
                kind: ExprKind::PatternComprehension {
                    variable,
                    pattern: Box::new(pattern),
                    filter,
                    map: boxed(map),
                },
                span: self.span_from(start),
            });
        }
        self.bump();
        let mut items = Vec::new();
        if !self.is_sym("]") {
            items = self.expr_list()?;
        }
        self.expect_sym("]")?;
        Ok(Expr { kind: ExprKind::List(items), span: self.span_from(start) })
    }

    pub(crate) fn map_literal(&mut self) -> PResult<Expr> {
        let start = self.cur_span().start;
        self.expect_sym("{")?;
        let mut entries = Vec::new();
        if !self.is_sym("}") {
            loop {
                let key = self.ident("a property key")?;
                self.expect_sym(":")?;
                let value = self.expr()?;
                entries.push((key, value));
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        self.expect_sym("}")?;
        Ok(Expr { kind: ExprKind::Map(entries), span: self.span_from(start) })
    }

    fn map_projection(&mut self, variable: Ident) -> PResult<Expr> {
        let start = variable.span.start;
        self.expect_sym("{")?;
        let mut items = Vec::new();
        if !self.is_sym("}") {
            loop {
                if self.eat_sym(".") {
                    if self.eat_sym("*") {
                        items.push(MapProjectionItem::AllProperties);
                    } else {
                        items.push(MapProjectionItem::Property(self.ident("a property key")?));
                    }
                } else {
                    let key = self.ident("a map projection item")?;
                    if self.eat_sym(":") {
                        let value = self.expr()?;
                        items.push(MapProjectionItem::Literal(key, value));
                    } else {
                        items.push(MapProjectionItem::Variable(key));
                    }
                }
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        self.expect_sym("}")?;
        Ok(Expr { kind: ExprKind::MapProjection { variable, items }, span: self.span_from(start) })
    }

    /// Body of `EXISTS { ... }` / `COUNT { ... }` / `COLLECT { ... }`: a full query, or a bare
    /// pattern list with an optional WHERE, represented as a query with a single MATCH clause.
    fn subquery_body(&mut self) -> PResult<Query> {
        let is_query = (CLAUSE_WORDS.iter().any(|k| self.is_kw(k)) && !self.is_sym_n(1, "="))
            || self.is_kw("WHEN")
            || self.at_for();
        if is_query {
            return self.query();
        }
        self.nested(|p| {
            let start = p.cur_span().start;
            let pattern = p.pattern_list()?;
            let where_ = if p.eat_kw("WHERE") { Some(p.expr()?) } else { None };
            let span = p.span_from(start);
            let clause =
                Clause { kind: ClauseKind::Match { optional: false, pattern, where_ }, span };
            Ok(Query {
                first: SingleQuery { clauses: vec![clause], span },
                unions: Vec::new(),
                span,
            })
        })
    }
}

use super::CLAUSE_KEYWORDS as CLAUSE_WORDS;

/// Words that can follow a complete expression: after `IS LABELED` they end it, so `LABELED`
/// there is a label name, not the Cypher 25 keyword.
const EXPR_FOLLOWERS: &[&str] = &[
    "AS",
    "AND",
    "OR",
    "XOR",
    "THEN",
    "ELSE",
    "END",
    "WHEN",
    "RETURN",
    "WITH",
    "WHERE",
    "ORDER",
    "SKIP",
    "LIMIT",
    "OFFSET",
    "UNION",
    "MATCH",
    "OPTIONAL",
    "CREATE",
    "MERGE",
    "SET",
    "DELETE",
    "DETACH",
    "NODETACH",
    "REMOVE",
    "UNWIND",
    "CALL",
    "FOREACH",
    "LOAD",
    "FINISH",
    "INSERT",
    "USE",
    "IS",
    "IN",
    "CONTAINS",
    "STARTS",
    "ENDS",
    "YIELD",
    "ASC",
    "DESC",
    "ASCENDING",
    "DESCENDING",
    "ON",
];
