//! Label and relationship type expressions (GQL, Neo4j 5): `:A|B`, `:A&!B`, `:%`, `:(A|B)&C`,
//! the old `:A:B`, the `IS A` form, and Neo4j 5.26's dynamic `:$(expr)`, `:$all(expr)` and
//! `:$any(expr)`; with Neo4j's errors for mixing the old colon form with the symbols. Also how a
//! parsed expression splits into the plain labels a scan can use and the rest.

use crate::ast::*;
use crate::lexer::Tok;

use super::{PResult, Parser};

/// Where a label expression stands: it decides which old forms are errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LabelSite {
    Node,
    Rel,
    Expr,
}

/// What a parse saw besides the tree (the old forms and the symbols).
#[derive(Default)]
struct Seen {
    /// Offset of the first `:` between two operands (the old conjunction).
    colon: Option<usize>,
    /// Offset of the first `|:` (the old alternative of relationship types).
    pipe_colon: Option<usize>,
    /// Whether any of `|`, `&`, `!`, `%` or parentheses appeared.
    symbols: bool,
}

impl Parser<'_> {
    /// Whether the token `n` ahead can start a label expression operand.
    pub(crate) fn label_start_n(&self, n: usize) -> bool {
        match self.peek_n(n) {
            Tok::Word(_) | Tok::Quoted(_) => true,
            Tok::Sym("!" | "%" | "(") => true,
            Tok::Sym("$") => self.is_sym_n(n + 1, "("),
            Tok::Param(p) => is_dyn_word(p) && self.is_sym_n(n + 1, "("),
            _ => false,
        }
    }

    /// At `:` or `IS`: reads a whole label expression. `pipe_ok` is false where a `|` ends the
    /// expression instead (a comprehension's filter). Returns the offset of an old `|:` too,
    /// which only relationship patterns may accept.
    pub(crate) fn label_expression(
        &mut self,
        site: LabelSite,
        pipe_ok: bool,
    ) -> PResult<(LabelExpr, Option<usize>)> {
        let is_form = self.is_kw("IS");
        self.bump();
        let mut seen = Seen::default();
        let e = self.label_or(pipe_ok, &mut seen)?;
        if let Some(at) = seen.colon {
            if is_form {
                let msg = format!(
                    "Mixing the IS keyword with colon (':') between labels is not allowed. \
                     This expression could be expressed as IS {}.",
                    self.render_labels(&e)
                );
                return Err(self.error_at(at, &msg));
            }
            if site == LabelSite::Rel {
                return Err(self.error_at(
                    at,
                    "Relationship types in a relationship type expressions may not be combined \
                     using ':'",
                ));
            }
            if seen.symbols {
                let msg = format!(
                    "Mixing label expression symbols ('|', '&', '!', and '%') with colon (':') \
                     between labels is not allowed. Please only use one set of symbols. This \
                     expression could be expressed as :{}.",
                    self.render_labels(&e)
                );
                return Err(self.error_at(at, &msg));
            }
        }
        if let (Some(at), false) = (seen.pipe_colon, site == LabelSite::Rel) {
            return Err(self.error_at(at, "Label expressions are not allowed to contain '|:'."));
        }
        Ok((e, seen.pipe_colon))
    }

    fn label_or(&mut self, pipe_ok: bool, seen: &mut Seen) -> PResult<LabelExpr> {
        let mut items = vec![self.label_and(seen)?];
        while pipe_ok
            && self.is_sym("|")
            && (self.label_start_n(1) || (self.is_sym_n(1, ":") && self.label_start_n(2)))
        {
            let at = self.cur_span().start;
            self.bump();
            seen.symbols = true;
            if self.eat_sym(":") {
                seen.pipe_colon.get_or_insert(at);
            }
            items.push(self.label_and(seen)?);
        }
        Ok(collapse(items, LabelExpr::Or))
    }

    fn label_and(&mut self, seen: &mut Seen) -> PResult<LabelExpr> {
        let mut items = vec![self.label_not(seen)?];
        loop {
            if self.is_sym("&") && self.label_start_n(1) {
                seen.symbols = true;
            } else if self.is_sym(":") && self.label_start_n(1) {
                seen.colon.get_or_insert(self.cur_span().start);
            } else {
                break;
            }
            self.bump();
            items.push(self.label_not(seen)?);
        }
        Ok(collapse(items, LabelExpr::And))
    }

    fn label_not(&mut self, seen: &mut Seen) -> PResult<LabelExpr> {
        if self.eat_sym("!") {
            seen.symbols = true;
            return self.nested(|p| Ok(LabelExpr::Not(Box::new(p.label_not(seen)?))));
        }
        self.label_atom(seen)
    }

    fn label_atom(&mut self, seen: &mut Seen) -> PResult<LabelExpr> {
        let start = self.cur_span().start;
        if self.eat_sym("%") {
            seen.symbols = true;
            return Ok(LabelExpr::Wildcard(self.span_from(start)));
        }
        if self.is_sym("(") {
            seen.symbols = true;
            return self.nested(|p| {
                p.bump();
                // A `|` inside parentheses always continues the expression.
                let e = p.label_or(true, seen)?;
                p.expect_sym(")")?;
                Ok(e)
            });
        }
        if let Some(any) = self.dynamic_label_here() {
            return self.dynamic_label(any);
        }
        Ok(LabelExpr::Name(self.ident("a label name, '!', '%', '(' or '$('")?))
    }

    /// After `e`, at `:` or `IS`: the label check `e:A:B` or `e IS A|B`.
    pub(crate) fn has_labels(&mut self, e: Expr) -> PResult<ExprKind> {
        let (expr, _) = self.label_expression(LabelSite::Expr, !self.in_comp_filter)?;
        Ok(match split_node_labels(expr.clone()) {
            (labels, None) => ExprKind::HasLabels(Box::new(e), labels),
            _ => ExprKind::HasLabelExpr(Box::new(e), expr),
        })
    }

    /// At `IS` followed by a label expression (not `IS NULL`, `IS NOT`, `IS NORMALIZED`, ...).
    pub(crate) fn is_label_is(&self) -> bool {
        const NOT_LABELS: &[&str] =
            &["NULL", "NOT", "NORMALIZED", "NFC", "NFD", "NFKC", "NFKD", "TYPED"];
        self.is_kw("IS") && self.label_start_n(1) && !NOT_LABELS.iter().any(|w| self.is_kw_n(1, w))
    }

    /// Parses a comprehension's filter, where a `|` ends the filter.
    pub(crate) fn comp_filter(&mut self) -> PResult<Expr> {
        let outer = std::mem::replace(&mut self.in_comp_filter, true);
        let r = self.expr();
        self.in_comp_filter = outer;
        r
    }

    /// `Some(any)` at `$(`, `$all(` or `$any(`.
    pub(crate) fn dynamic_label_here(&self) -> Option<bool> {
        match self.peek() {
            Tok::Sym("$") if self.is_sym_n(1, "(") => Some(false),
            Tok::Param(p) if is_dyn_word(p) && self.is_sym_n(1, "(") => {
                Some(p.eq_ignore_ascii_case("any"))
            }
            _ => None,
        }
    }

    /// `$(expr)`, `$all(expr)` or `$any(expr)` (at its first token).
    pub(crate) fn dynamic_label(&mut self, any: bool) -> PResult<LabelExpr> {
        let start = self.cur_span().start;
        self.bump();
        self.expect_sym("(")?;
        let expr = self.expr()?;
        self.expect_sym(")")?;
        Ok(LabelExpr::Dynamic { expr: Box::new(expr), any, span: self.span_from(start) })
    }

    /// `:A:$(x):B` in SET and REMOVE: plain names and `$(expr)` only.
    pub(crate) fn set_labels(&mut self) -> PResult<(Vec<Ident>, Vec<Expr>)> {
        let (mut labels, mut dynamic) = (Vec::new(), Vec::new());
        while self.eat_sym(":") {
            if let Tok::Param(p) = self.peek() {
                if is_dyn_word(p) && self.is_sym_n(1, "(") {
                    let msg = format!("Invalid input '{p}': expected '('");
                    return Err(self.error_at(self.cur_span().start + 1, &msg));
                }
            }
            match self.dynamic_label_here() {
                Some(any) => {
                    if let LabelExpr::Dynamic { expr, .. } = self.dynamic_label(any)? {
                        dynamic.push(*expr);
                    }
                }
                None => labels.push(self.ident("a label name or '$('")?),
            }
        }
        Ok((labels, dynamic))
    }

    /// The expression as Neo4j suggests it in errors: `(A&B)|C`.
    fn render_labels(&self, e: &LabelExpr) -> String {
        let wrap = |p: &Self, x: &LabelExpr, bad: fn(&LabelExpr) -> bool| {
            let s = p.render_labels(x);
            if bad(x) {
                format!("({s})")
            } else {
                s
            }
        };
        match e {
            LabelExpr::Name(n) => n.name.to_string(),
            LabelExpr::Wildcard(_) => "%".into(),
            LabelExpr::Not(x) => {
                format!("!{}", wrap(self, x, |x| matches!(x, LabelExpr::And(_) | LabelExpr::Or(_))))
            }
            LabelExpr::And(xs) => xs
                .iter()
                .map(|x| wrap(self, x, |x| matches!(x, LabelExpr::Or(_))))
                .collect::<Vec<_>>()
                .join("&"),
            LabelExpr::Or(xs) => xs
                .iter()
                .map(|x| wrap(self, x, |x| matches!(x, LabelExpr::And(_))))
                .collect::<Vec<_>>()
                .join("|"),
            LabelExpr::Dynamic { span, .. } => {
                self.text.get(span.start..span.end).unwrap_or("$(...)").to_string()
            }
        }
    }
}

/// One operand as itself, more as `many` of them.
fn collapse(mut items: Vec<LabelExpr>, many: fn(Vec<LabelExpr>) -> LabelExpr) -> LabelExpr {
    if items.len() == 1 {
        if let Some(x) = items.pop() {
            return x;
        }
    }
    many(items)
}

fn is_dyn_word(p: &str) -> bool {
    p.eq_ignore_ascii_case("any") || p.eq_ignore_ascii_case("all")
}

/// A node's label expression as the plain labels it requires (its top-level names) and the
/// rest (`None` when the names say it all).
pub(crate) fn split_node_labels(e: LabelExpr) -> (Vec<Ident>, Option<LabelExpr>) {
    let items = match e {
        LabelExpr::And(items) => items,
        other => vec![other],
    };
    let mut labels = Vec::new();
    let mut rest = Vec::new();
    for item in items {
        match item {
            LabelExpr::Name(n) => labels.push(n),
            other => rest.push(other),
        }
    }
    let rest = match rest.len() {
        0 => None,
        1 => rest.pop(),
        _ => Some(LabelExpr::And(rest)),
    };
    (labels, rest)
}

/// A relationship's type expression as plain alternatives (`[:A|B]`) or, otherwise, the whole
/// expression.
pub(crate) fn split_rel_types(e: LabelExpr) -> (Vec<Ident>, Option<LabelExpr>) {
    match e {
        LabelExpr::Name(n) => (vec![n], None),
        LabelExpr::Or(items) if items.iter().all(|i| matches!(i, LabelExpr::Name(_))) => {
            let names = items
                .into_iter()
                .filter_map(|i| match i {
                    LabelExpr::Name(n) => Some(n),
                    _ => None,
                })
                .collect();
            (names, None)
        }
        other => (Vec::new(), Some(other)),
    }
}
