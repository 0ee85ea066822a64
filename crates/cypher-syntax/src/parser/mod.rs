//! Recursive-descent parser over the token vector: statements and clauses live here, expressions
//! in [`expr`], patterns in [`pattern`], index/constraint/SHOW commands in [`schema`].
//!
//! Recursion is bounded by [`MAX_DEPTH`] (see [`Parser::nested`]) and left-nested chains such as
//! `a + b + c` or `x[0][0]` count towards the same budget, so neither parsing nor dropping the tree
//! can exhaust the stack. Backtracking is limited to O(1) lookahead decisions (bracket matching is
//! precomputed), so parsing time stays linear even for adversarial input.

mod admin;
mod conditional;
mod expr;
mod labels;
mod linear;
mod pattern;
mod prefix;
mod property_type;
mod qpp;
mod schema;

use std::sync::Arc;

use arbor_model::Error;

use crate::ast::*;
use crate::error::syntax_error_at;
use crate::lexer::{tokenize, Tok, Token};

/// Maximum nesting of recursive constructs (parentheses, lists, subqueries, FOREACH, ...).
pub(crate) const MAX_DEPTH: usize = 500;
/// Maximum height of an expression tree, counting left-nested operator chains too.
pub(crate) const MAX_HEIGHT: usize = 1000;

pub(crate) type PResult<T> = Result<T, Error>;

/// Words that start a clause (used to decide where a query part ends and whether a `{ ... }`
/// subquery body is a full query or a bare pattern).
const CLAUSE_KEYWORDS: &[&str] = &[
    "MATCH", "OPTIONAL", "WITH", "RETURN", "UNWIND", "CREATE", "MERGE", "SET", "REMOVE", "DELETE",
    "DETACH", "NODETACH", "FOREACH", "CALL", "LOAD", "FINISH", "FILTER",
];

/// Inputs whose estimated recursion stays within this many [`Parser::nested`] levels are parsed
/// on the caller's stack. One level costs up to ~3.5 KiB in unoptimised builds, so this keeps the
/// parser within ~0.5 MiB of whatever thread calls it (Rust threads default to 2 MiB).
const INLINE_LEVELS: usize = 150;
/// Stack for parsing deeper inputs: a wide margin over [`MAX_DEPTH`] levels. Only reserved, not
/// committed, by the OS.
const DEEP_STACK: usize = 32 << 20;
/// Nested levels one bracket level can add without further brackets: one per precedence level
/// that parses its right operand recursively (`a OR b AND c = d + e * f ^ g`), plus the bracket.
const LEVELS_PER_BRACKET: usize = 10;

pub(crate) fn parse_statement(text: &str) -> PResult<(Statement, Option<String>)> {
    let toks = tokenize(text)?;
    if recursion_estimate(&toks) <= INLINE_LEVELS {
        return parse_tokens(text, toks);
    }
    // Deep input: parse on a dedicated thread with a known, large stack so that the depth limit
    // (not the caller's stack size) decides what is accepted.
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name("cypher-parse".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(s, move || parse_tokens(text, toks));
        match handle {
            Ok(h) => {
                h.join().unwrap_or_else(|_| Err(Error::internal("the Cypher parser panicked")))
            }
            Err(e) => Err(Error::new(
                arbor_model::Status::Internal,
                format!("could not start a parser thread for a deeply nested query: {e}"),
            )),
        }
    })
}

/// An upper bound on how many [`Parser::nested`] levels the parser can stack up for these
/// tokens: bracket nesting (each level with its operator-precedence recursion) plus every token
/// that can start a nested prefix expression or statement.
/// Keywords after which a `-`/`+` is a prefix sign rather than a binary operator.
const PREFIX_CONTEXT_WORDS: &[&str] = &[
    "NOT", "AND", "OR", "XOR", "IN", "RETURN", "WITH", "WHERE", "WHEN", "THEN", "ELSE", "CASE",
    "SKIP", "LIMIT", "CONTAINS", "BY", "UNWIND", "SET", "DELETE", "YIELD",
];

pub(crate) fn recursion_estimate(toks: &[Token]) -> usize {
    let mut depth = 0usize;
    let mut max_depth = 0usize;
    let mut prefixes = 0usize;
    let mut prev: Option<&Tok> = None;
    for t in toks {
        let after_operand = match prev {
            Some(Tok::Word(w)) => !PREFIX_CONTEXT_WORDS.iter().any(|k| w.eq_ignore_ascii_case(k)),
            Some(Tok::Sym(s)) => matches!(*s, ")" | "]" | "}"),
            Some(Tok::Eof) | None => false,
            Some(_) => true,
        };
        prev = Some(&t.tok);
        match &t.tok {
            Tok::Sym("(" | "[" | "{") => {
                depth += 1;
                max_depth = max_depth.max(depth);
            }
            Tok::Sym(")" | "]" | "}") => depth = depth.saturating_sub(1),
            // Only signs in prefix position can nest; `a - b` and `)-[` cannot.
            Tok::Sym("-" | "+") if !after_operand => prefixes += 1,
            Tok::Word(w)
                if w.eq_ignore_ascii_case("NOT")
                    || w.eq_ignore_ascii_case("EXPLAIN")
                    || w.eq_ignore_ascii_case("PROFILE") =>
            {
                prefixes += 1
            }
            _ => {}
        }
    }
    (max_depth + 1).saturating_mul(LEVELS_PER_BRACKET).saturating_add(prefixes)
}

fn parse_tokens(text: &str, toks: Vec<Token>) -> PResult<(Statement, Option<String>)> {
    let matching = match_brackets(&toks);
    let mut p =
        Parser { text, toks, pos: 0, depth: 0, matching, graph: None, in_comp_filter: false };
    let stmt = p.statement()?;
    p.eat_sym(";");
    if !matches!(p.peek(), Tok::Eof) {
        return Err(p.unexpected("a clause keyword, UNION, ';' or end of input"));
    }
    Ok((stmt, p.graph))
}

/// For each opening bracket token, the index of its matching closing token (`usize::MAX` when
/// unmatched), so that pattern-vs-expression decisions are O(1).
fn match_brackets(toks: &[Token]) -> Vec<usize> {
    let mut out = vec![usize::MAX; toks.len()];
    let mut stack: Vec<(usize, &'static str)> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if let Tok::Sym(s) = t.tok {
            match s {
                "(" => stack.push((i, ")")),
                "[" => stack.push((i, "]")),
                "{" => stack.push((i, "}")),
                ")" | "]" | "}" => {
                    if let Some(&(open, close)) = stack.last() {
                        if close == s {
                            stack.pop();
                            out[open] = i;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

pub(crate) struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    matching: Vec<usize>,
    /// The graph a leading `USE` names (see [`prefix`]).
    graph: Option<String>,
    /// Inside a comprehension's filter, where `|` ends the filter rather than continuing a
    /// label expression (`[x IN l WHERE x:A | x]`).
    in_comp_filter: bool,
}

impl<'a> Parser<'a> {
    // ----- token helpers -------------------------------------------------------------------

    fn tok_at(&self, i: usize) -> &Token {
        // The vector always ends with Eof, so clamping to the last element is Eof.
        let last = self.toks.len().saturating_sub(1);
        &self.toks[i.min(last)]
    }

    pub(crate) fn peek(&self) -> &Tok {
        &self.tok_at(self.pos).tok
    }

    pub(crate) fn peek_n(&self, n: usize) -> &Tok {
        &self.tok_at(self.pos + n).tok
    }

    pub(crate) fn cur_span(&self) -> Span {
        self.tok_at(self.pos).span
    }

    /// End offset of the last consumed token.
    pub(crate) fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.tok_at(self.pos - 1).span.end
        }
    }

    pub(crate) fn span_from(&self, start: usize) -> Span {
        Span { start, end: self.prev_end().max(start) }
    }

    pub(crate) fn bump(&mut self) {
        if self.pos < self.toks.len().saturating_sub(1) {
            self.pos += 1;
        }
    }

    pub(crate) fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }

    pub(crate) fn is_sym_n(&self, n: usize, s: &str) -> bool {
        matches!(self.peek_n(n), Tok::Sym(x) if *x == s)
    }

    pub(crate) fn eat_sym(&mut self, s: &str) -> bool {
        if self.is_sym(s) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_sym(&mut self, s: &str) -> PResult<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{s}'")))
        }
    }

    pub(crate) fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    pub(crate) fn is_kw_n(&self, n: usize, kw: &str) -> bool {
        matches!(self.peek_n(n), Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    pub(crate) fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.unexpected(kw))
        }
    }

    /// True if the current token can be read as a name (any word, keywords included, or a
    /// backtick-quoted name).
    pub(crate) fn is_name(&self) -> bool {
        self.is_name_n(0)
    }

    pub(crate) fn is_name_n(&self, n: usize) -> bool {
        matches!(self.peek_n(n), Tok::Word(_) | Tok::Quoted(_))
    }

    /// Reads a name: variables, labels, property keys, aliases.
    pub(crate) fn ident(&mut self, what: &str) -> PResult<Ident> {
        let span = self.cur_span();
        let name = match self.peek() {
            Tok::Word(w) | Tok::Quoted(w) => Arc::from(w.as_str()),
            _ => return Err(self.unexpected(what)),
        };
        self.bump();
        Ok(Ident { name, span })
    }

    /// "Invalid input 'X': expected Y (line, column)" at the current token.
    pub(crate) fn unexpected(&self, expected: &str) -> Error {
        let t = self.tok_at(self.pos);
        let msg = if matches!(t.tok, Tok::Eof) {
            format!("Unexpected end of input: expected {expected}")
        } else {
            let found = self.text.get(t.span.start..t.span.end).unwrap_or("");
            let found: String = found.chars().take(60).collect();
            format!("Invalid input '{found}': expected {expected}")
        };
        syntax_error_at(self.text, t.span.start, &msg).with_detail("UnexpectedSyntax")
    }

    pub(crate) fn error_at(&self, offset: usize, msg: &str) -> Error {
        syntax_error_at(self.text, offset, msg)
    }

    /// Runs `f` one nesting level deeper, failing cleanly past [`MAX_DEPTH`].
    pub(crate) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error_at(
                self.cur_span().start,
                &format!("Query is too deeply nested (more than {MAX_DEPTH} levels)"),
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Checks the height budget for a left-nested chain that has been wrapped `wraps` times.
    pub(crate) fn check_chain(&self, wraps: usize) -> PResult<()> {
        if self.depth + wraps > MAX_HEIGHT {
            return Err(self.error_at(
                self.cur_span().start,
                &format!("Expression is too deeply nested (more than {MAX_HEIGHT} levels)"),
            ));
        }
        Ok(())
    }

    pub(crate) fn at_clause_start(&self) -> bool {
        CLAUSE_KEYWORDS.iter().any(|k| self.is_kw(k)) || self.at_let() || self.at_for()
    }

    // ----- statements ----------------------------------------------------------------------

    fn statement(&mut self) -> PResult<Statement> {
        self.query_options()?;
        if self.eat_kw("EXPLAIN") {
            return Ok(Statement::Explain(Box::new(self.nested(|p| p.statement())?)));
        }
        if self.eat_kw("PROFILE") {
            return Ok(Statement::Profile(Box::new(self.nested(|p| p.statement())?)));
        }
        if let Some(graph) = self.use_clause()? {
            self.graph = Some(graph);
        }
        if let Some(admin) = self.admin_command()? {
            return Ok(admin);
        }
        if self.is_kw("SHOW") {
            return Ok(Statement::Show(self.show_command()?));
        }
        if self.is_kw("CREATE") && self.is_schema_create() {
            return Ok(Statement::Schema(self.schema_create()?));
        }
        if self.is_kw("DROP") {
            return Ok(Statement::Schema(self.schema_drop()?));
        }
        Ok(Statement::Query(self.query()?))
    }

    /// A query with UNIONs, possibly chained with `NEXT` (see [`linear`]).
    pub(crate) fn query(&mut self) -> PResult<Query> {
        let first = self.union_query()?;
        self.next_chain(first)
    }

    /// A query with UNIONs.
    pub(crate) fn union_query(&mut self) -> PResult<Query> {
        self.nested(|p| {
            let start = p.cur_span().start;
            let first = p.union_part()?;
            let mut unions = Vec::new();
            while p.is_kw("UNION") {
                let at = p.cur_span().start;
                p.bump();
                let all = p.eat_kw("ALL");
                // Mixing is rejected by Neo4j; it is decidable from the text alone.
                if unions.first().is_some_and(|(first_all, _)| *first_all != all) {
                    return Err(p
                        .error_at(at, "Invalid combination of UNION and UNION ALL")
                        .with_detail("InvalidClauseComposition"));
                }
                unions.push((all, p.union_part()?));
            }
            Ok(Query { first, unions, span: p.span_from(start) })
        })
    }

    pub(crate) fn single_query(&mut self) -> PResult<SingleQuery> {
        let start = self.cur_span().start;
        let mut clauses = Vec::new();
        while self.at_clause_start() {
            if self.at_let() {
                clauses.extend(self.let_clauses()?);
                continue;
            }
            clauses.push(self.clause()?);
        }
        if clauses.is_empty() {
            return Err(self.unexpected(
                "a clause (MATCH, OPTIONAL MATCH, WITH, RETURN, UNWIND, CREATE, MERGE, SET, \
                 REMOVE, DELETE, DETACH DELETE, FOREACH, CALL, LOAD CSV)",
            ));
        }
        Ok(SingleQuery { clauses, span: self.span_from(start) })
    }

    // ----- clauses -------------------------------------------------------------------------

    pub(crate) fn clause(&mut self) -> PResult<Clause> {
        let start = self.cur_span().start;
        let kind = self.clause_kind()?;
        Ok(Clause { kind, span: self.span_from(start) })
    }

    fn clause_kind(&mut self) -> PResult<ClauseKind> {
        if self.eat_kw("OPTIONAL") {
            if self.eat_kw("CALL") {
                return self.call_rest(true);
            }
            self.expect_kw("MATCH")?;
            return self.match_rest(true);
        }
        if self.eat_kw("MATCH") {
            return self.match_rest(false);
        }
        if self.eat_kw("WITH") {
            return Ok(ClauseKind::With(self.projection(true)?));
        }
        if self.eat_kw("RETURN") {
            return Ok(ClauseKind::Return(self.projection(false)?));
        }
        if self.eat_kw("UNWIND") {
            let expr = self.expr()?;
            self.expect_kw("AS")?;
            let variable = self.ident("a variable name")?;
            return Ok(ClauseKind::Unwind { expr, variable });
        }
        if self.eat_kw("CREATE") {
            let pattern = self.pattern_list()?;
            self.reject_quantified_in("CREATE", &pattern)?;
            return Ok(ClauseKind::Create { pattern });
        }
        if self.eat_kw("MERGE") {
            return self.merge_rest();
        }
        if self.eat_kw("SET") {
            return Ok(ClauseKind::Set { items: self.set_items()? });
        }
        if self.eat_kw("REMOVE") {
            let mut items = vec![self.remove_item()?];
            while self.eat_sym(",") {
                items.push(self.remove_item()?);
            }
            return Ok(ClauseKind::Remove { items });
        }
        if self.eat_kw("DETACH") {
            self.expect_kw("DELETE")?;
            return Ok(ClauseKind::Delete { detach: true, exprs: self.expr_list()? });
        }
        if self.eat_kw("NODETACH") {
            self.expect_kw("DELETE")?;
            return Ok(ClauseKind::Delete { detach: false, exprs: self.expr_list()? });
        }
        if self.eat_kw("DELETE") {
            return Ok(ClauseKind::Delete { detach: false, exprs: self.expr_list()? });
        }
        if self.eat_kw("FOREACH") {
            return self.nested(|p| p.foreach_rest());
        }
        if self.eat_kw("CALL") {
            return self.call_rest(false);
        }
        if self.eat_kw("LOAD") {
            return self.load_csv_rest();
        }
        if self.eat_kw("FINISH") {
            return Ok(ClauseKind::Finish);
        }
        if self.at_for() {
            return self.for_rest();
        }
        if self.eat_kw("FILTER") {
            return self.filter_rest();
        }
        Err(self.unexpected("a clause"))
    }

    fn match_rest(&mut self, optional: bool) -> PResult<ClauseKind> {
        let pattern = self.pattern_list()?;
        let where_ = if self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
        Ok(ClauseKind::Match { optional, pattern, where_ })
    }

    pub(crate) fn expr_list(&mut self) -> PResult<Vec<Expr>> {
        let mut v = vec![self.expr()?];
        while self.eat_sym(",") {
            v.push(self.expr()?);
        }
        Ok(v)
    }

    fn projection(&mut self, is_with: bool) -> PResult<Projection> {
        let distinct = self.eat_kw("DISTINCT");
        let mut star = false;
        let mut items = Vec::new();
        if self.eat_sym("*") {
            star = true;
            while self.eat_sym(",") {
                items.push(self.projection_item()?);
            }
        } else {
            items.push(self.projection_item()?);
            while self.eat_sym(",") {
                items.push(self.projection_item()?);
            }
        }
        let (order_by, skip, limit) = self.order_skip_limit()?;
        let where_ = if is_with && self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
        Ok(Projection { distinct, star, items, order_by, skip, limit, where_ })
    }

    fn projection_item(&mut self) -> PResult<ProjectionItem> {
        let expr = self.expr()?;
        let text = self.text.get(expr.span.start..expr.span.end).unwrap_or("").trim().to_string();
        let alias = if self.eat_kw("AS") { Some(self.ident("an alias name")?) } else { None };
        Ok(ProjectionItem { expr, alias, text })
    }

    #[allow(clippy::type_complexity)]
    fn order_skip_limit(&mut self) -> PResult<(Vec<SortItem>, Option<Expr>, Option<Expr>)> {
        let mut order_by = Vec::new();
        if self.is_kw("ORDER") && self.is_kw_n(1, "BY") {
            self.bump();
            self.bump();
            loop {
                let expr = self.expr()?;
                let descending = if self.eat_kw("DESC") || self.eat_kw("DESCENDING") {
                    true
                } else {
                    let _ = self.eat_kw("ASC") || self.eat_kw("ASCENDING");
                    false
                };
                order_by.push(SortItem { expr, descending });
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        let skip =
            if self.eat_kw("SKIP") || self.eat_kw("OFFSET") { Some(self.expr()?) } else { None };
        let limit = if self.eat_kw("LIMIT") { Some(self.expr()?) } else { None };
        Ok((order_by, skip, limit))
    }

    fn merge_rest(&mut self) -> PResult<ClauseKind> {
        let pattern = self.pattern_part()?;
        self.reject_quantified_in("MERGE", std::slice::from_ref(&pattern))?;
        let mut actions = Vec::new();
        while self.is_kw("ON") {
            self.bump();
            if self.eat_kw("CREATE") {
                self.expect_kw("SET")?;
                actions.push(MergeAction::OnCreate(self.set_items()?));
            } else if self.eat_kw("MATCH") {
                self.expect_kw("SET")?;
                actions.push(MergeAction::OnMatch(self.set_items()?));
            } else {
                return Err(self.unexpected("CREATE or MATCH"));
            }
        }
        Ok(ClauseKind::Merge { pattern, actions })
    }

    fn set_items(&mut self) -> PResult<Vec<SetItem>> {
        let mut items = vec![self.set_item()?];
        while self.eat_sym(",") {
            items.push(self.set_item()?);
        }
        Ok(items)
    }

    fn set_item(&mut self) -> PResult<SetItem> {
        if self.is_name() {
            if self.is_sym_n(1, "=") {
                let variable = self.ident("a variable")?;
                self.bump();
                return Ok(SetItem::Replace { variable, value: self.expr()? });
            }
            if self.is_sym_n(1, "+=") {
                let variable = self.ident("a variable")?;
                self.bump();
                return Ok(SetItem::Merge { variable, value: self.expr()? });
            }
            if self.is_sym_n(1, ":") {
                let variable = self.ident("a variable")?;
                let (labels, dynamic) = self.set_labels()?;
                return Ok(SetItem::Labels { variable, labels, dynamic });
            }
        }
        let at = self.cur_span().start;
        let target = self.postfix_expr()?;
        match target.kind {
            ExprKind::Property(target, key) => {
                self.expect_sym("=")?;
                Ok(SetItem::Property { target: *target, key, value: self.expr()? })
            }
            ExprKind::Index(target, key) => {
                self.check_dynamic_key(&key)?;
                self.expect_sym("=")?;
                Ok(SetItem::DynamicProperty { target: *target, key: *key, value: self.expr()? })
            }
            _ => Err(self.error_at(
                at,
                "Invalid SET item: expected a property (n.prop = ...), n = {map}, n += {map} \
                 or n:Label",
            )),
        }
    }

    fn remove_item(&mut self) -> PResult<RemoveItem> {
        if self.is_name() && self.is_sym_n(1, ":") {
            let variable = self.ident("a variable")?;
            let (labels, dynamic) = self.set_labels()?;
            return Ok(RemoveItem::Labels { variable, labels, dynamic });
        }
        let at = self.cur_span().start;
        let target = self.postfix_expr()?;
        match target.kind {
            ExprKind::Property(target, key) => Ok(RemoveItem::Property { target: *target, key }),
            ExprKind::Index(target, key) => {
                self.check_dynamic_key(&key)?;
                Ok(RemoveItem::DynamicProperty { target: *target, key: *key })
            }
            _ => Err(self.error_at(
                at,
                "Invalid REMOVE item: expected a property (n.prop) or labels (n:Label)",
            )),
        }
    }

    /// A dynamic property key written as a literal must be a string (Neo4j checks this
    /// while planning, as a syntax error pointing at the key).
    fn check_dynamic_key(&self, key: &Expr) -> PResult<()> {
        let found = match &key.kind {
            ExprKind::Literal(Literal::Int(_)) => "Integer",
            ExprKind::Literal(Literal::Float(_)) => "Float",
            ExprKind::Literal(Literal::Bool(_)) => "Boolean",
            ExprKind::Map(_) => "Map",
            ExprKind::List(_) => "List<Any>",
            _ => return Ok(()),
        };
        Err(self.error_at(
            key.span.start,
            &format!(
                "Type mismatch: node or relationship property key must be given as String, but \
                 was {found}"
            ),
        ))
    }

    fn foreach_rest(&mut self) -> PResult<ClauseKind> {
        self.expect_sym("(")?;
        let variable = self.ident("a variable name")?;
        self.expect_kw("IN")?;
        let list = self.expr()?;
        self.expect_sym("|")?;
        let mut clauses = Vec::new();
        while self.at_clause_start() {
            clauses.push(self.clause()?);
        }
        if clauses.is_empty() {
            return Err(self.unexpected("an updating clause"));
        }
        self.expect_sym(")")?;
        Ok(ClauseKind::Foreach { variable, list, clauses })
    }

    /// After `[OPTIONAL] CALL`: a subquery or a procedure call.
    fn call_rest(&mut self, optional: bool) -> PResult<ClauseKind> {
        if self.is_sym("{") || self.is_sym("(") {
            return self.call_subquery_rest(optional);
        }
        let name = self.qualified_name()?;
        let args = if self.eat_sym("(") {
            let mut args = Vec::new();
            if !self.is_sym(")") {
                args = self.expr_list()?;
            }
            self.expect_sym(")")?;
            Some(args)
        } else {
            None
        };
        let yield_ = if self.eat_kw("YIELD") { Some(self.yield_spec(false)?.0) } else { None };
        Ok(ClauseKind::CallProcedure { name, args, yield_, optional })
    }

    /// After `[OPTIONAL] CALL`: `[(scope)] { query } [IN TRANSACTIONS [OF n ROWS]]`.
    fn call_subquery_rest(&mut self, optional: bool) -> PResult<ClauseKind> {
        let scope = if self.eat_sym("(") { Some(self.call_scope()?) } else { None };
        self.expect_sym("{")?;
        let body = self.query()?;
        self.expect_sym("}")?;
        let in_transactions = if self.is_kw("IN") { Some(self.in_transactions()?) } else { None };
        Ok(ClauseKind::CallSubquery { scope, optional, body: Box::new(body), in_transactions })
    }

    /// `IN [[n] CONCURRENT] TRANSACTIONS [OF n ROWS] [ON ERROR ...] [REPORT STATUS AS s]`.
    fn in_transactions(&mut self) -> PResult<InTransactions> {
        self.expect_kw("IN")?;
        let mut concurrency = None;
        if !self.is_kw("TRANSACTIONS") {
            let count = if self.is_kw("CONCURRENT") { None } else { Some(self.expr()?) };
            self.expect_kw("CONCURRENT")?;
            concurrency = Some(count);
        }
        self.expect_kw("TRANSACTIONS")?;
        let mut batch_rows = None;
        if self.eat_kw("OF") {
            batch_rows = Some(self.expr()?);
            if !(self.eat_kw("ROWS") || self.eat_kw("ROW")) {
                return Err(self.unexpected("ROWS"));
            }
        }
        let mut on_error = None;
        if self.is_kw("ON") && self.is_kw_n(1, "ERROR") {
            self.bump();
            self.bump();
            on_error = Some(if self.eat_kw("CONTINUE") {
                OnError::Continue
            } else if self.eat_kw("BREAK") {
                OnError::Break
            } else if self.eat_kw("FAIL") {
                OnError::Fail
            } else {
                return Err(self.unexpected("CONTINUE, BREAK or FAIL"));
            });
        }
        let mut report_status = None;
        if self.eat_kw("REPORT") {
            self.expect_kw("STATUS")?;
            self.expect_kw("AS")?;
            report_status = Some(self.ident("a variable name")?);
        }
        Ok(InTransactions { batch_rows, concurrency, on_error, report_status })
    }

    /// The variable scope clause after its `(`: `*)`, `)` or `a, b)`.
    fn call_scope(&mut self) -> PResult<CallScope> {
        if self.eat_sym("*") {
            self.expect_sym(")")?;
            return Ok(CallScope::All);
        }
        let mut vars = Vec::new();
        if !self.eat_sym(")") {
            loop {
                vars.push(self.ident("a variable name")?);
                if self.eat_sym(")") {
                    break;
                }
                if !self.eat_sym(",") {
                    return Err(self.unexpected("')' or ','"));
                }
            }
        }
        Ok(CallScope::Vars(vars))
    }

    pub(crate) fn qualified_name(&mut self) -> PResult<QualifiedName> {
        let start = self.cur_span().start;
        let mut parts = vec![self.ident("a procedure name")?];
        while self.is_sym(".") && self.is_name_n(1) {
            self.bump();
            parts.push(self.ident("a name")?);
        }
        Ok(QualifiedName { parts, span: self.span_from(start) })
    }

    /// `YIELD` body after the keyword. With `allow_paging` (SHOW commands) ORDER BY / SKIP /
    /// LIMIT are accepted too and returned as a `WITH *` clause to run after the yield.
    pub(crate) fn yield_spec(
        &mut self,
        allow_paging: bool,
    ) -> PResult<(YieldSpec, Option<Clause>)> {
        let start = self.cur_span().start;
        let mut star = false;
        let mut items = Vec::new();
        if self.eat_sym("*") {
            star = true;
        } else {
            loop {
                let name = self.ident("a yield field name")?;
                let alias = if self.eat_kw("AS") { Some(self.ident("an alias")?) } else { None };
                items.push((name, alias));
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        let mut paging = None;
        if allow_paging {
            let (order_by, skip, limit) = self.order_skip_limit()?;
            if !order_by.is_empty() || skip.is_some() || limit.is_some() {
                let where_ = if self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
                let projection = Projection {
                    distinct: false,
                    star: true,
                    items: Vec::new(),
                    order_by,
                    skip,
                    limit,
                    where_,
                };
                paging = Some(Clause {
                    kind: ClauseKind::With(projection),
                    span: self.span_from(start),
                });
            }
        }
        let where_ =
            if paging.is_none() && self.eat_kw("WHERE") { Some(self.expr()?) } else { None };
        Ok((YieldSpec { star, items, where_ }, paging))
    }

    fn load_csv_rest(&mut self) -> PResult<ClauseKind> {
        self.expect_kw("CSV")?;
        let with_headers = if self.eat_kw("WITH") {
            self.expect_kw("HEADERS")?;
            true
        } else {
            false
        };
        self.expect_kw("FROM")?;
        let url = self.expr()?;
        self.expect_kw("AS")?;
        let variable = self.ident("a variable name")?;
        let field_terminator = if self.eat_kw("FIELDTERMINATOR") {
            match self.peek().clone() {
                Tok::Str(s) => {
                    self.bump();
                    Some(s)
                }
                _ => return Err(self.unexpected("a string literal")),
            }
        } else {
            None
        };
        Ok(ClauseKind::LoadCsv { with_headers, url, variable, field_terminator })
    }
}
