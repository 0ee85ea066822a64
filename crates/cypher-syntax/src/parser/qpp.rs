//! GQL path patterns of Neo4j 5: quantified path patterns `((x)-[r]->(y) WHERE p){1,3}`,
//! quantified relationships `-[:R]->+`, their quantifiers (`{n}`, `{n,}`, `{,m}`, `{n,m}`, `+`,
//! `*`), path selectors (`SHORTEST k [PATHS] [GROUPS]`, `ALL SHORTEST`, `ANY [SHORTEST]`,
//! `ANY k`, `ALL [PATHS]`) and the match modes Neo4j 5.26 rejects (`REPEATABLE ELEMENTS`,
//! `DIFFERENT RELATIONSHIPS`).

use crate::ast::*;
use crate::lexer::Tok;

use super::{PResult, Parser};

/// A parsed quantifier: bounds and the offset of its first token.
pub(crate) struct Quantifier {
    pub(crate) min: u64,
    pub(crate) max: Option<u64>,
    pub(crate) at: usize,
}

impl<'a> Parser<'a> {
    /// `REPEATABLE ELEMENTS` / `DIFFERENT RELATIONSHIPS` before a pattern: Neo4j 5.26 knows
    /// the words (Cypher 25 match modes) and refuses them.
    pub(crate) fn reject_match_mode(&self) -> PResult<()> {
        let mode = if self.is_kw("REPEATABLE")
            && (self.is_kw_n(1, "ELEMENTS") || self.is_kw_n(1, "ELEMENT"))
        {
            "REPEATABLE ELEMENTS"
        } else if self.is_kw("DIFFERENT")
            && (self.is_kw_n(1, "RELATIONSHIPS") || self.is_kw_n(1, "RELATIONSHIP"))
        {
            "DIFFERENT RELATIONSHIPS"
        } else {
            return Ok(());
        };
        Err(self.error_at(
            self.cur_span().start,
            &format!("Match modes such as `{mode}` are not supported yet."),
        ))
    }

    /// A GQL path selector before a path pattern, if one is here (consumed).
    pub(crate) fn gql_selector(&mut self) -> PResult<Option<PathSelector>> {
        let count = |p: &Self, n: usize| matches!(p.peek_n(n), Tok::Int(_));
        let path_kw = |p: &Self, n: usize| p.is_kw_n(n, "PATH") || p.is_kw_n(n, "PATHS");
        let group_kw = |p: &Self, n: usize| p.is_kw_n(n, "GROUP") || p.is_kw_n(n, "GROUPS");
        // `SHORTEST k [PATH | PATHS] [GROUP | GROUPS]`; without `k` only the group form
        // (`SHORTEST [PATH] GROUPS` is `SHORTEST 1 GROUPS`), as Neo4j 5.26 reads it.
        if self.is_kw("SHORTEST") && (count(self, 1) || path_kw(self, 1) || group_kw(self, 1)) {
            self.bump();
            let counted = count(self, 0);
            let k = if counted { self.selector_count()? } else { 1 };
            let _ = self.eat_kw("PATHS") || self.eat_kw("PATH");
            let groups = self.eat_kw("GROUPS") || self.eat_kw("GROUP");
            if !counted && !groups {
                return Err(self.unexpected("'GROUP' or 'GROUPS'"));
            }
            return Ok(Some(PathSelector::Shortest { k, groups }));
        }
        // `ALL [PATH | PATHS]`: every path, as with no selector.
        if self.is_kw("ALL") && (path_kw(self, 1) || self.is_sym_n(1, "(")) {
            self.bump();
            let _ = self.eat_kw("PATHS") || self.eat_kw("PATH");
            return Ok(Some(PathSelector::All));
        }
        if self.is_kw("ALL") && self.is_kw_n(1, "SHORTEST") {
            self.bump();
            self.bump();
            self.eat_kw("PATHS");
            self.eat_kw("PATH");
            return Ok(Some(PathSelector::Shortest { k: 1, groups: true }));
        }
        if self.is_kw("ANY") && self.is_kw_n(1, "SHORTEST") {
            self.bump();
            self.bump();
            self.eat_kw("PATHS");
            self.eat_kw("PATH");
            return Ok(Some(PathSelector::Shortest { k: 1, groups: false }));
        }
        if self.is_kw("ANY") && (count(self, 1) || self.is_sym_n(1, "(")) {
            self.bump();
            let k = if count(self, 0) { self.selector_count()? } else { 1 };
            self.eat_kw("PATHS");
            self.eat_kw("PATH");
            return Ok(Some(PathSelector::Any { k }));
        }
        Ok(None)
    }

    fn selector_count(&mut self) -> PResult<u64> {
        let at = self.cur_span().start;
        match self.peek() {
            Tok::Int(Some(k)) => {
                let k = *k;
                self.bump();
                if k == 0 {
                    return Err(self.error_at(at, "The path count needs to be greater than 0."));
                }
                Ok(k)
            }
            _ => Err(self.unexpected("a positive integer")),
        }
    }

    /// A quantifier after a parenthesised path pattern or a relationship pattern, if one is
    /// here (consumed), with Neo4j's checks of its bounds.
    pub(crate) fn quantifier(&mut self) -> PResult<Option<Quantifier>> {
        let at = self.cur_span().start;
        if self.eat_sym("+") {
            return Ok(Some(Quantifier { min: 1, max: None, at }));
        }
        if self.eat_sym("*") {
            return Ok(Some(Quantifier { min: 0, max: None, at }));
        }
        if !self.is_sym("{") {
            return Ok(None);
        }
        self.bump();
        let min = self.opt_u64()?;
        let (min, max) = if self.eat_sym(",") {
            (min.unwrap_or(0), self.opt_u64()?)
        } else {
            match min {
                Some(n) => (n, Some(n)),
                None => return Err(self.unexpected("an integer")),
            }
        };
        self.expect_sym("}")?;
        if max == Some(0) {
            return Err(
                self.error_at(at, "A quantifier for a path pattern must not be limited by 0.")
            );
        }
        if let Some(m) = max.filter(|m| min > *m) {
            return Err(self.error_at(
                at,
                &format!(
                    "A quantifier for a path pattern must not have a lower bound which exceeds \
                     its upper bound.\nIn this case, the lower bound {min} is greater than the \
                     upper bound {m}."
                ),
            ));
        }
        Ok(Some(Quantifier { min, max, at }))
    }

    /// `( element [WHERE pred] )` at a `(` followed by `(`: the inner element carries the
    /// WHERE. Returns it with the offset of the opening parenthesis.
    pub(crate) fn paren_path(&mut self) -> PResult<(PatternElement, usize)> {
        let at = self.cur_span().start;
        self.nested(|p| {
            p.bump();
            let mut e = p.pattern_element()?;
            if p.eat_kw("WHERE") {
                let w = p.expr()?;
                e.where_ = Some(Box::new(match e.where_.take() {
                    Some(prev) => and_exprs(*prev, w),
                    None => w,
                }));
            }
            p.expect_sym(")")?;
            Ok((e, at))
        })
    }

    /// Checks a quantified path pattern's body and wraps it as a chain entry.
    pub(crate) fn quantified_group(
        &self,
        element: PatternElement,
        at: usize,
        q: Quantifier,
    ) -> PResult<RelPattern> {
        let span = self.span_from(at);
        if element.chain.is_empty() {
            let body = self.text.get(at..q.at).unwrap_or("").trim_end();
            let max = q.max.map(|m| m.to_string()).unwrap_or_default();
            return Err(self.error_at(
                at,
                &format!(
                    "A quantified path pattern needs to have at least one relationship.\nIn \
                     this case, the quantified path pattern {body}{{{}, {max}}} consists of \
                     only one node.",
                    q.min
                ),
            ));
        }
        for (rp, _) in &element.chain {
            if rp.length.is_some() {
                return Err(self.error_at(
                    rp.span.start,
                    "Variable length relationships cannot be part of a quantified path pattern.",
                ));
            }
            if rp.quantified.is_some() {
                return Err(self.error_at(
                    rp.span.start,
                    "Quantified path patterns are not allowed to be nested.",
                ));
            }
        }
        let quantified = Quantified { element, min: q.min, max: q.max, span };
        Ok(group_rel(quantified, span))
    }

    /// A relationship followed by a quantifier (`-[r:R]->{1,3}`): a variable-length
    /// relationship when that says the same (no WHERE, no type expression), else a quantified
    /// path pattern of one relationship between anonymous nodes.
    pub(crate) fn quantified_rel(&self, rel: RelPattern, q: Quantifier) -> PResult<RelPattern> {
        if rel.length.is_some() {
            return Err(self.error_at(
                rel.span.start,
                "Variable length relationships cannot be part of a quantified path pattern.",
            ));
        }
        let span = Span { start: rel.span.start, end: self.prev_end() };
        if rel.where_.is_none() && rel.type_expr.is_none() {
            return Ok(RelPattern { length: Some((Some(q.min), q.max)), span, ..rel });
        }
        let element = PatternElement {
            start: anon_node(rel.span.start),
            chain: vec![(rel, anon_node(span.end))],
            where_: None,
        };
        Ok(group_rel(Quantified { element, min: q.min, max: q.max, span }, span))
    }
}

impl<'a> Parser<'a> {
    /// Quantified patterns in `CREATE` / `MERGE` (`clause`): Neo4j's error.
    pub(crate) fn reject_quantified_in(&self, clause: &str, parts: &[PatternPart]) -> PResult<()> {
        for part in parts {
            if let Some((rp, _)) =
                part.element.chain.iter().find(|(rp, _)| self.written_quantified(rp))
            {
                return Err(self.error_at(
                    rp.span.start,
                    &format!(
                        "Quantified path patterns cannot be used in a {clause} clause, but only \
                         in a MATCH clause."
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A selective path pattern must be the clause's only one (Neo4j 5.26).
    pub(crate) fn check_selective_alone(&self, parts: &[PatternPart]) -> PResult<()> {
        let selective = |p: &PatternPart| {
            matches!(p.selector, PathSelector::Shortest { .. } | PathSelector::Any { .. })
        };
        if parts.len() > 1 && parts.iter().any(selective) {
            return Err(self.error_at(
                parts[0].span.start,
                "Multiple path patterns cannot be used in the same clause in combination with a \
                 selective path selector.",
            ));
        }
        Ok(())
    }

    /// Whether `rp` was written quantified (a group, or `-[..]->+` made variable-length).
    pub(crate) fn written_quantified(&self, rp: &RelPattern) -> bool {
        let text = self.text.get(rp.span.start..rp.span.end).unwrap_or("");
        rp.quantified.is_some() || text.ends_with(['+', '*', '}'])
    }

    /// Neo4j 5.26's rules on where quantified patterns may stand: not inside
    /// `shortestPath(..)`, and not next to a `-[*]-` relationship in one pattern.
    pub(crate) fn check_quantified_use(&self, part: &PatternPart) -> PResult<()> {
        let chain = &part.element.chain;
        let quantified = chain.iter().find(|(rp, _)| self.written_quantified(rp));
        let Some((q, _)) = quantified else { return Ok(()) };
        if matches!(part.selector, PathSelector::ShortestPath | PathSelector::AllShortestPaths) {
            let f = if part.selector == PathSelector::ShortestPath {
                "shortestPath"
            } else {
                "allShortestPaths"
            };
            return Err(self.error_at(
                q.span.start,
                &format!("{f}(...) contains quantified pattern. This is currently not supported."),
            ));
        }
        if let Some((v, _)) =
            chain.iter().find(|(rp, _)| rp.length.is_some() && !self.written_quantified(rp))
        {
            return Err(self.error_at(
                v.span.start,
                "Mixing variable-length relationships ('-[*]-') with quantified relationships                  ('()-->*()') or quantified path patterns ('(()-->())*') is not allowed.",
            ));
        }
        Ok(())
    }
}

/// The chain entry standing for a quantified path pattern.
fn group_rel(q: Quantified, span: Span) -> RelPattern {
    RelPattern {
        variable: None,
        direction: Direction::Outgoing,
        types: Vec::new(),
        type_expr: None,
        length: None,
        properties: None,
        where_: None,
        quantified: Some(Box::new(q)),
        span,
    }
}

/// An anonymous boundary node `()` added next to a quantified path pattern.
pub(crate) fn anon_node(at: usize) -> NodePattern {
    NodePattern {
        variable: None,
        labels: Vec::new(),
        label_expr: None,
        properties: None,
        where_: None,
        span: Span { start: at, end: at },
    }
}

fn and_exprs(a: Expr, b: Expr) -> Expr {
    let span = Span { start: a.span.start, end: b.span.end };
    Expr { kind: ExprKind::Binary(BinaryOp::And, Box::new(a), Box::new(b)), span }
}

#[cfg(test)]
mod tests {
    use crate::ast::*;
    use crate::tests::clauses;

    fn part(text: &str) -> PatternPart {
        match clauses(text).into_iter().next() {
            Some(ClauseKind::Match { mut pattern, .. }) => pattern.remove(0),
            other => panic!("{text}: {other:?}"),
        }
    }

    fn group(rp: &RelPattern) -> &Quantified {
        rp.quantified.as_deref().expect("a quantified path pattern")
    }

    #[test]
    fn quantifiers_and_boundaries() {
        let p = part("MATCH (a:X) ((x)-[:R]->(y) WHERE x.p < y.p){1,3} (b) RETURN a");
        assert_eq!(p.element.chain.len(), 1);
        let q = group(&p.element.chain[0].0);
        assert_eq!((q.min, q.max), (1, Some(3)));
        assert!(q.element.where_.is_some());
        assert_eq!(p.element.chain[0].1.variable.as_ref().map(|v| &*v.name), Some("b"));
        for (text, min, max) in [("{2}", 2, Some(2)), ("{2,}", 2, None), ("{,4}", 0, Some(4))] {
            let p = part(&format!("MATCH ((x)-->(y)){text} RETURN 1"));
            let q = group(&p.element.chain[0].0);
            assert_eq!((q.min, q.max), (min, max), "{text}");
            assert!(p.element.start.variable.is_none(), "an anonymous left boundary");
        }
        let p = part("MATCH (a) ((x)-->(y))+ ((u)-->(v))* (b) RETURN 1");
        assert_eq!(p.element.chain.len(), 2, "juxtaposed groups get a node between them");
        assert_eq!((group(&p.element.chain[1].0).min, group(&p.element.chain[1].0).max), (0, None));
    }

    #[test]
    fn quantified_relationships() {
        let p = part("MATCH (a)-[r:R]->{2,4}(b) RETURN 1");
        let rp = &p.element.chain[0].0;
        assert_eq!(rp.length, Some((Some(2), Some(4))), "plain: a variable-length relationship");
        let p = part("MATCH (a)-[r:R WHERE r.w > 1]->+(b) RETURN 1");
        let q = group(&p.element.chain[0].0);
        assert_eq!((q.min, q.max), (1, None));
        assert_eq!(q.element.chain[0].0.variable.as_ref().map(|v| &*v.name), Some("r"));
    }

    #[test]
    fn selectors() {
        let cases = [
            ("SHORTEST 2", PathSelector::Shortest { k: 2, groups: false }),
            ("SHORTEST 3 GROUPS", PathSelector::Shortest { k: 3, groups: true }),
            ("ALL SHORTEST", PathSelector::Shortest { k: 1, groups: true }),
            ("ANY SHORTEST", PathSelector::Shortest { k: 1, groups: false }),
            ("ANY", PathSelector::Any { k: 1 }),
            ("ANY 4", PathSelector::Any { k: 4 }),
            ("SHORTEST 2 PATHS", PathSelector::Shortest { k: 2, groups: false }),
            ("SHORTEST 1 PATH GROUPS", PathSelector::Shortest { k: 1, groups: true }),
            ("SHORTEST GROUPS", PathSelector::Shortest { k: 1, groups: true }),
            ("SHORTEST PATH GROUP", PathSelector::Shortest { k: 1, groups: true }),
            ("ALL PATHS", PathSelector::All),
            ("ALL", PathSelector::All),
        ];
        for (text, want) in cases {
            let p = part(&format!("MATCH p = {text} (a)-[:R]->+(b) RETURN p"));
            assert_eq!(p.selector, want, "{text}");
        }
        let p = part("MATCH p = SHORTEST 1 ((a)-[:R]->+(b) WHERE a.x = 1) RETURN p");
        assert!(p.element.where_.is_some());
    }

    #[test]
    fn errors_name_the_problem() {
        let cases = [
            ("MATCH ((x)-->(y)){3,1} RETURN 1", "lower bound 3 is greater than the upper bound 1"),
            ("MATCH ((x)-->(y)){0} RETURN 1", "must not be limited by 0"),
            ("MATCH (a) ((x)){1,3} (b) RETURN 1", "at least one relationship"),
            ("MATCH ((x)-[*]->(y))+ RETURN 1", "Variable length relationships cannot be part"),
            ("MATCH (a) (((x)-->(y))+)+ RETURN 1", "not allowed to be nested"),
            ("MATCH (a) ((x)-->(y)) (b) RETURN 1", "Juxtaposition"),
            ("MATCH REPEATABLE ELEMENTS (a)-->(b) RETURN 1", "`REPEATABLE ELEMENTS`"),
            ("MATCH p = shortestPath((a)-->+(b)) RETURN p", "contains quantified pattern"),
            ("MATCH (a)-[*]->(b)-->+(c) RETURN 1", "Mixing variable-length"),
            ("MATCH p = SHORTEST 1 (a)-->+(b), (c) RETURN 1", "Multiple path patterns"),
            ("CREATE (a) ((x)-[:R]->(y)){1,2} (b)", "in a CREATE clause"),
        ];
        for (text, msg) in cases {
            let e = crate::parse(text).expect_err(text);
            assert!(e.message.contains(msg), "{text}: {}", e.message);
        }
    }
}
