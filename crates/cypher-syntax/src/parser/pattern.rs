//! Graph patterns: `p = shortestPath((a:A {k: 1})-[r:T|U*1..3]->(b))`, node and relationship
//! details, and the O(1) lookahead that tells a pattern from a parenthesised expression.

use crate::ast::*;
use crate::lexer::Tok;

use super::labels::{split_node_labels, split_rel_types, LabelSite};
use super::{PResult, Parser};

impl<'a> Parser<'a> {
    pub(crate) fn pattern_list(&mut self) -> PResult<Vec<PatternPart>> {
        self.reject_match_mode()?;
        let mut parts = vec![self.pattern_part()?];
        while self.eat_sym(",") {
            parts.push(self.pattern_part()?);
        }
        self.check_selective_alone(&parts)?;
        Ok(parts)
    }

    pub(crate) fn pattern_part(&mut self) -> PResult<PatternPart> {
        let start = self.cur_span().start;
        let variable = if self.is_name() && self.is_sym_n(1, "=") {
            let v = self.ident("a path variable")?;
            self.bump();
            Some(v)
        } else {
            None
        };
        self.reject_match_mode()?;
        let selector = if let Some(sel) = self.gql_selector()? {
            sel
        } else if self.is_sym_n(1, "(") && self.is_kw("shortestPath") {
            PathSelector::ShortestPath
        } else if self.is_sym_n(1, "(") && self.is_kw("allShortestPaths") {
            PathSelector::AllShortestPaths
        } else {
            PathSelector::All
        };
        let element =
            if !matches!(selector, PathSelector::ShortestPath | PathSelector::AllShortestPaths) {
                self.pattern_element()?
            } else {
                self.bump();
                self.bump();
                let e = self.pattern_element()?;
                self.expect_sym(")")?;
                e
            };
        let part = PatternPart { variable, selector, element, span: self.span_from(start) };
        self.check_quantified_use(&part)?;
        Ok(part)
    }

    /// `(a)-[r]->(b)...`; a whole element may also be wrapped in parentheses (with a WHERE),
    /// and quantified path patterns `((x)-->(y)){1,3}` may stand between nodes, at either end,
    /// or next to each other (anonymous boundary nodes are added for them).
    pub(crate) fn pattern_element(&mut self) -> PResult<PatternElement> {
        let mut start: Option<NodePattern> = None;
        let mut chain: Vec<(RelPattern, NodePattern)> = Vec::new();
        // A quantified path pattern (or relationship) still waiting for its right node.
        let mut pending: Option<RelPattern> = None;
        loop {
            if self.is_sym("(") && self.is_sym_n(1, "(") {
                let (inner, at) = self.paren_path()?;
                let Some(q) = self.quantifier()? else {
                    if start.is_none() {
                        // The whole element in parentheses.
                        return Ok(inner);
                    }
                    return Err(self.error_at(
                        at,
                        "Juxtaposition is currently only supported for quantified path patterns.",
                    ));
                };
                let group = self.quantified_group(inner, at, q)?;
                match pending.take() {
                    Some(p) => chain.push((p, super::qpp::anon_node(at))),
                    None if start.is_none() => start = Some(super::qpp::anon_node(at)),
                    None => {}
                }
                pending = Some(group);
                continue;
            }
            if let Some(p) = pending.take_if(|_| self.is_sym("(")) {
                let node = self.node_pattern()?;
                chain.push((p, node));
            } else if start.is_none() {
                start = Some(self.node_pattern()?);
            }
            if self.at_rel_start() {
                if let Some(p) = pending.take() {
                    chain.push((p, super::qpp::anon_node(self.cur_span().start)));
                }
                let mut rel = self.rel_pattern()?;
                if let Some(q) = self.quantifier()? {
                    rel = self.quantified_rel(rel, q)?;
                }
                if self.is_sym("(") && self.is_sym_n(1, "(") {
                    pending = Some(rel);
                } else {
                    let node = self.node_pattern()?;
                    chain.push((rel, node));
                }
                continue;
            }
            if self.is_sym("(") && self.is_sym_n(1, "(") {
                continue;
            }
            break;
        }
        if let Some(p) = pending {
            chain.push((p, super::qpp::anon_node(self.prev_end())));
        }
        let Some(start) = start else {
            return Err(
                self.error_at(self.cur_span().start, "Invalid input: expected a node pattern")
            );
        };
        Ok(PatternElement { start, chain, where_: None })
    }

    fn at_rel_start(&self) -> bool {
        (self.is_sym("-") && (self.is_sym_n(1, "-") || self.is_sym_n(1, "[")))
            || (self.is_sym("<") && self.is_sym_n(1, "-"))
    }

    /// Whether the `(` at token index `open` starts a relationship pattern such as `(a)-->(b)`
    /// rather than a parenthesised expression: looks just past its matching `)`.
    pub(crate) fn paren_starts_pattern(&self, open: usize) -> bool {
        let Some(&close) = self.matching.get(open) else { return false };
        if close == usize::MAX {
            return false;
        }
        let sym = |i: usize, s: &str| matches!(self.tok_at(i).tok, Tok::Sym(x) if x == s);
        let c = close;
        if sym(c + 1, "-") && sym(c + 2, "-") {
            return true;
        }
        if sym(c + 1, "<") && sym(c + 2, "-") && (sym(c + 3, "-") || sym(c + 3, "[")) {
            return true;
        }
        if sym(c + 1, "-") && sym(c + 2, "[") {
            // `(a)-[1]` would be a subtraction of a list; relationship details start otherwise.
            return matches!(
                self.tok_at(c + 3).tok,
                Tok::Sym("]" | ":" | "*" | "{") | Tok::Word(_) | Tok::Quoted(_) | Tok::Param(_)
            );
        }
        false
    }

    pub(crate) fn paren_pattern_here(&self) -> bool {
        self.is_sym("(") && self.paren_starts_pattern(self.pos)
    }

    /// True if the current word can be a variable in a node/relationship pattern, i.e. it is
    /// not the `WHERE` keyword introducing an inline predicate.
    fn pattern_var_here(&self) -> bool {
        if !self.is_name() {
            return false;
        }
        if self.is_kw("IS") && self.label_start_n(1) {
            return false;
        }
        if self.is_kw("WHERE") {
            return self.is_sym_n(1, ")")
                || self.is_sym_n(1, "]")
                || self.is_sym_n(1, ":")
                || self.is_sym_n(1, "{");
        }
        true
    }

    fn node_pattern(&mut self) -> PResult<NodePattern> {
        let start = self.cur_span().start;
        self.expect_sym("(")?;
        let variable = if self.pattern_var_here() { Some(self.ident("a variable")?) } else { None };
        let (labels, label_expr) = if self.at_pattern_labels() {
            split_node_labels(self.label_expression(LabelSite::Node, true)?.0)
        } else {
            (Vec::new(), None)
        };
        let properties = self.pattern_properties()?;
        let where_ = if self.eat_kw("WHERE") { Some(Box::new(self.expr()?)) } else { None };
        if !self.is_sym(")") {
            return Err(self.unexpected("a label (':'), properties ('{'), WHERE or ')'"));
        }
        self.bump();
        let span = self.span_from(start);
        Ok(NodePattern { variable, labels, label_expr, properties, where_, span })
    }

    /// At `:` or `IS` introducing the labels of a node or the types of a relationship.
    fn at_pattern_labels(&self) -> bool {
        self.is_sym(":") || (self.is_kw("IS") && self.label_start_n(1))
    }

    fn pattern_properties(&mut self) -> PResult<Option<Expr>> {
        if self.is_sym("{") {
            return Ok(Some(self.map_literal()?));
        }
        if let Tok::Param(name) = self.peek() {
            let e = Expr { kind: ExprKind::Parameter(name.as_str().into()), span: self.cur_span() };
            self.bump();
            return Ok(Some(e));
        }
        Ok(None)
    }

    fn rel_pattern(&mut self) -> PResult<RelPattern> {
        let start = self.cur_span().start;
        let left = self.eat_sym("<");
        self.expect_sym("-")?;
        let mut variable = None;
        let mut types = Vec::new();
        let mut type_expr = None;
        let mut pipe_colon = None;
        let mut length = None;
        let mut properties = None;
        let mut where_ = None;
        if self.eat_sym("[") {
            if self.pattern_var_here() {
                variable = Some(self.ident("a variable")?);
            }
            if self.at_pattern_labels() {
                let (e, pc) = self.label_expression(LabelSite::Rel, true)?;
                (types, type_expr) = split_rel_types(e);
                pipe_colon = pc;
            }
            if self.eat_sym("*") {
                length = Some(self.range_bounds()?);
            }
            properties = self.pattern_properties()?;
            if self.eat_kw("WHERE") {
                where_ = Some(Box::new(self.expr()?));
            }
            if !self.is_sym("]") {
                let err = self.unexpected("a type (':'), length ('*'), properties, WHERE or ']'");
                // A range without `*` (`[:T..2]`) or a negative bound (`[*-2]`) is a malformed
                // variable-length relationship, which the TCK names precisely.
                let malformed_range =
                    self.is_sym("..") || self.is_sym("-") || matches!(self.peek(), Tok::Int(_));
                return Err(if malformed_range {
                    err.with_detail("InvalidRelationshipPattern")
                } else {
                    err
                });
            }
            self.bump();
        }
        if let Some(at) = pipe_colon.filter(|_| {
            variable.is_some() || length.is_some() || properties.is_some() || where_.is_some()
        }) {
            return Err(self.error_at(
                at,
                "The semantics of using colon in the separation of alternative relationship \
                 types in conjunction with\nthe use of variable binding, inlined property \
                 predicates, or variable length is no longer supported.\nPlease separate the \
                 relationships types using `:T1|T2` instead.",
            ));
        }
        self.expect_sym("-")?;
        let right = self.eat_sym(">");
        let direction = match (left, right) {
            (true, false) => Direction::Incoming,
            (false, true) => Direction::Outgoing,
            _ => Direction::Both,
        };
        Ok(RelPattern {
            variable,
            direction,
            types,
            type_expr,
            length,
            properties,
            where_,
            quantified: None,
            span: self.span_from(start),
        })
    }

    /// After `*`: `[min][..[max]]`.
    fn range_bounds(&mut self) -> PResult<(Option<u64>, Option<u64>)> {
        let min = self.opt_u64()?;
        if self.eat_sym("..") {
            let max = self.opt_u64()?;
            Ok((min, max))
        } else {
            Ok((min, min))
        }
    }

    /// An optional integer bound (of `*min..max` or a quantifier `{min,max}`); too large is
    /// `IntegerOverflow`.
    pub(super) fn opt_u64(&mut self) -> PResult<Option<u64>> {
        match self.peek() {
            Tok::Int(Some(v)) => {
                let v = *v;
                self.bump();
                Ok(Some(v))
            }
            Tok::Int(None) => Err(self
                .error_at(self.cur_span().start, "integer is too large")
                .with_detail("IntegerOverflow")),
            _ => Ok(None),
        }
    }
}
