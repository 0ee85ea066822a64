//! Index and constraint DDL (Neo4j 5 and pre-5 forms) and SHOW commands.
//!
//! Pre-5 forms that name no variable (`CREATE INDEX ON :L(p)`) and LOOKUP indexes that name no
//! label get an empty-named [`Ident`] in the [`SchemaTarget`]; the span still points at the text.

use std::sync::Arc;

use crate::ast::*;

use super::{PResult, Parser};

const INDEX_KIND_WORDS: &[&str] =
    &["RANGE", "TEXT", "POINT", "LOOKUP", "BTREE", "FULLTEXT", "VECTOR"];

/// Words allowed between `SHOW` and the object kind (filters such as `SHOW RANGE INDEXES`).
const SHOW_FILTER_WORDS: &[&str] = &[
    "ALL",
    "RANGE",
    "TEXT",
    "POINT",
    "LOOKUP",
    "FULLTEXT",
    "VECTOR",
    "BTREE",
    "UNIQUE",
    "NODE",
    "REL",
    "RELATIONSHIP",
    "KEY",
    "EXISTENCE",
    "EXIST",
    "EXISTS",
    "PROPERTY",
    "TYPE",
    "BUILT",
    "IN",
    "USER",
    "DEFINED",
    "UNIQUENESS",
];

impl<'a> Parser<'a> {
    fn empty_ident(&self) -> Ident {
        let at = self.cur_span().start;
        Ident { name: Arc::from(""), span: Span { start: at, end: at } }
    }

    /// At `CREATE`: is this index/constraint DDL rather than a CREATE clause?
    pub(crate) fn is_schema_create(&self) -> bool {
        if self.is_sym_n(2, "=") {
            return false; // `CREATE index = (a)-->(b)` is a named path
        }
        if self.is_kw_n(1, "INDEX") || self.is_kw_n(1, "CONSTRAINT") {
            return true;
        }
        INDEX_KIND_WORDS.iter().any(|k| self.is_kw_n(1, k)) && self.is_kw_n(2, "INDEX")
    }

    pub(crate) fn schema_create(&mut self) -> PResult<SchemaCommand> {
        self.bump(); // CREATE
        if self.eat_kw("CONSTRAINT") {
            return self.create_constraint();
        }
        let kind_at = self.cur_span().start;
        let kind = if self.eat_kw("INDEX") {
            IndexKind::Range
        } else {
            let kind = if self.eat_kw("RANGE") || self.eat_kw("BTREE") {
                IndexKind::Range
            } else if self.eat_kw("TEXT") {
                IndexKind::Text
            } else if self.eat_kw("POINT") {
                IndexKind::Point
            } else if self.eat_kw("LOOKUP") {
                IndexKind::Lookup
            } else if self.eat_kw("VECTOR") {
                self.expect_kw("INDEX")?;
                return self.create_vector_index();
            } else if self.eat_kw("FULLTEXT") {
                self.expect_kw("INDEX")?;
                return self.create_fulltext_index();
            } else {
                return Err(self.error_at(
                    kind_at,
                    "Unsupported index type (expected RANGE, TEXT, POINT, LOOKUP or VECTOR)",
                ));
            };
            self.expect_kw("INDEX")?;
            kind
        };
        // Pre-5: CREATE INDEX ON :Label(prop, ...)
        if self.is_kw("ON") && self.is_sym_n(1, ":") {
            self.bump();
            let (target, properties) = self.legacy_index_target()?;
            return Ok(SchemaCommand::CreateIndex {
                name: None,
                if_not_exists: false,
                kind,
                target,
                properties,
                options: None,
            });
        }
        let name = self.schema_name()?;
        let if_not_exists = self.if_not_exists()?;
        self.expect_kw("FOR")?;
        let target = self.schema_target(kind == IndexKind::Lookup)?;
        self.expect_kw("ON")?;
        let properties = if kind == IndexKind::Lookup {
            // ON EACH labels(n) / ON EACH type(r)
            self.expect_kw("EACH")?;
            let function = self.ident("a function name")?.name;
            let rel = matches!(target, SchemaTarget::Relationship { .. });
            let (entity, valid) = if rel { ("relationship", "type") } else { ("node", "labels") };
            if !function.eq_ignore_ascii_case(valid) {
                let msg = format!(
                    "Failed to create {entity} lookup index: Function '{function}' is not \
                     allowed, valid function is '{valid}'."
                );
                return Err(self.error_at(0, &msg));
            }
            self.expect_sym("(")?;
            self.ident("a variable")?;
            self.expect_sym(")")?;
            Vec::new()
        } else if self.eat_sym("(") {
            let props = self.property_refs()?;
            self.expect_sym(")")?;
            props
        } else {
            self.property_refs()?
        };
        if let (Some(second), IndexKind::Text | IndexKind::Point) = (properties.get(1), kind) {
            let what = if kind == IndexKind::Text { "text" } else { "point" };
            let msg = format!("Only single property {what} indexes are supported");
            return Err(self.error_at(self.variable_start(second.span.start), &msg));
        }
        let options = self.options()?;
        Ok(SchemaCommand::CreateIndex { name, if_not_exists, kind, target, properties, options })
    }

    /// The head of `CREATE VECTOR|FULLTEXT INDEX`: the name (or a `$param` naming it), `IF NOT
    /// EXISTS`, and `FOR`.
    fn index_head(&mut self) -> PResult<(Option<Ident>, Option<Arc<str>>, bool)> {
        let mut name_param = None;
        if let crate::lexer::Tok::Param(p) = self.peek() {
            name_param = Some(Arc::from(p.as_str()));
            self.bump();
        }
        let name = if name_param.is_some() { None } else { self.schema_name()? };
        let if_not_exists = self.if_not_exists()?;
        self.expect_kw("FOR")?;
        Ok((name, name_param, if_not_exists))
    }

    /// After `CREATE VECTOR INDEX`: one property, as `n.p` or `(n.p)`, and the OPTIONS map.
    fn create_vector_index(&mut self) -> PResult<SchemaCommand> {
        let (name, name_param, if_not_exists) = self.index_head()?;
        let target = self.schema_target(false)?;
        self.expect_kw("ON")?;
        let at = self.cur_span().start;
        let mut properties = if self.eat_sym("(") {
            let props = self.property_refs()?;
            self.expect_sym(")")?;
            props
        } else {
            self.property_refs()?
        };
        if properties.len() != 1 {
            return Err(self.error_at(at, "A vector index is on exactly one property"));
        }
        let property = properties.remove(0);
        let options = self.options()?;
        Ok(SchemaCommand::CreateVectorIndex {
            name,
            name_param,
            if_not_exists,
            target,
            property,
            options,
        })
    }

    /// After `CREATE FULLTEXT INDEX`: `FOR (n:A|B)` or `FOR ()-[r:T1|T2]-()`, `ON EACH [n.p,
    /// ...]` and the OPTIONS map.
    fn create_fulltext_index(&mut self) -> PResult<SchemaCommand> {
        let (name, name_param, if_not_exists) = self.index_head()?;
        self.expect_sym("(")?;
        let relationship = self.eat_sym(")");
        if relationship {
            self.eat_sym("<");
            self.expect_sym("-")?;
            self.expect_sym("[")?;
        }
        self.ident("a variable")?;
        self.expect_sym(":")?;
        let what = if relationship { "a relationship type" } else { "a label" };
        let mut labels = vec![self.ident(what)?];
        while self.eat_sym("|") {
            labels.push(self.ident(what)?);
        }
        if relationship {
            self.expect_sym("]")?;
            self.expect_sym("-")?;
            self.eat_sym(">");
            self.expect_sym("(")?;
        }
        self.expect_sym(")")?;
        self.expect_kw("ON")?;
        self.expect_kw("EACH")?;
        self.expect_sym("[")?;
        let properties = self.property_refs()?;
        self.expect_sym("]")?;
        let options = self.options()?;
        Ok(SchemaCommand::CreateFulltextIndex {
            name,
            name_param,
            if_not_exists,
            relationship,
            labels,
            properties,
            options,
        })
    }

    fn create_constraint(&mut self) -> PResult<SchemaCommand> {
        if self.is_kw("ON") && self.is_sym_n(1, "(") {
            self.bump();
            let at = self.cur_span().start;
            let target = self.schema_target(false)?;
            self.expect_kw("ASSERT")?;
            let (properties, kind) = self.constraint_body(&target, at)?;
            return Ok(SchemaCommand::CreateConstraint {
                name: None,
                if_not_exists: false,
                target,
                properties,
                kind,
            });
        }
        let name = self.schema_name()?;
        let if_not_exists = self.if_not_exists()?;
        if !(self.eat_kw("FOR") || self.eat_kw("ON")) {
            return Err(self.unexpected("FOR"));
        }
        let at = self.cur_span().start;
        let target = self.schema_target(false)?;
        if !(self.eat_kw("REQUIRE") || self.eat_kw("ASSERT")) {
            return Err(self.unexpected("REQUIRE"));
        }
        let (properties, kind) = self.constraint_body(&target, at)?;
        self.skip_options()?;
        Ok(SchemaCommand::CreateConstraint { name, if_not_exists, target, properties, kind })
    }

    pub(crate) fn schema_drop(&mut self) -> PResult<SchemaCommand> {
        self.bump(); // DROP
        if self.eat_kw("INDEX") {
            if self.is_kw("ON") && self.is_sym_n(1, ":") {
                self.bump();
                let target = self.legacy_index_target()?;
                return Ok(SchemaCommand::DropIndex {
                    name: None,
                    param: None,
                    if_exists: false,
                    target: Some(target),
                });
            }
            if let crate::lexer::Tok::Param(p) = self.peek() {
                let param = Some(Arc::from(p.as_str()));
                self.bump();
                let if_exists = self.if_exists()?;
                return Ok(SchemaCommand::DropIndex { name: None, param, if_exists, target: None });
            }
            let name = Some(self.ident("an index name")?);
            let if_exists = self.if_exists()?;
            return Ok(SchemaCommand::DropIndex { name, param: None, if_exists, target: None });
        }
        if self.eat_kw("CONSTRAINT") {
            if self.eat_kw("ON") {
                let at = self.cur_span().start;
                let target = self.schema_target(false)?;
                self.expect_kw("ASSERT")?;
                let (properties, kind) = self.constraint_body(&target, at)?;
                return Ok(SchemaCommand::DropConstraint {
                    name: None,
                    if_exists: false,
                    definition: Some((target, properties, kind)),
                });
            }
            let name = Some(self.ident("a constraint name")?);
            let if_exists = self.if_exists()?;
            return Ok(SchemaCommand::DropConstraint { name, if_exists, definition: None });
        }
        Err(self.unexpected("INDEX or CONSTRAINT"))
    }

    /// An optional index/constraint name before `IF NOT EXISTS` / `FOR` / `ON`.
    fn schema_name(&mut self) -> PResult<Option<Ident>> {
        let is_keyword_here = (self.is_kw("IF") && self.is_kw_n(1, "NOT"))
            || (self.is_kw("FOR") && self.is_sym_n(1, "("))
            || (self.is_kw("ON") && self.is_sym_n(1, "("));
        if self.is_name() && !is_keyword_here {
            Ok(Some(self.ident("a name")?))
        } else {
            Ok(None)
        }
    }

    fn if_not_exists(&mut self) -> PResult<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn if_exists(&mut self) -> PResult<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// `OPTIONS {...}` or `OPTIONS $param` of a vector or full-text index, kept for the engine
    /// to check.
    fn options(&mut self) -> PResult<Option<Expr>> {
        if !self.eat_kw("OPTIONS") {
            return Ok(None);
        }
        Ok(Some(if matches!(self.peek(), crate::lexer::Tok::Param(_)) {
            self.expr()?
        } else {
            self.map_literal()?
        }))
    }

    /// `OPTIONS {...}` is accepted and ignored (index providers and configs are not modelled).
    fn skip_options(&mut self) -> PResult<()> {
        if self.eat_kw("OPTIONS") {
            if matches!(self.peek(), crate::lexer::Tok::Param(_)) {
                self.bump();
            } else {
                self.map_literal()?;
            }
        }
        Ok(())
    }

    /// After `ON` in `CREATE INDEX ON :Label(p, q)`.
    fn legacy_index_target(&mut self) -> PResult<(SchemaTarget, Vec<Ident>)> {
        let variable = self.empty_ident();
        self.expect_sym(":")?;
        let label = self.ident("a label")?;
        self.expect_sym("(")?;
        let mut props = vec![self.ident("a property key")?];
        while self.eat_sym(",") {
            props.push(self.ident("a property key")?);
        }
        self.expect_sym(")")?;
        Ok((SchemaTarget::Node { variable, label }, props))
    }

    /// `(n:Label)` or `()-[r:TYPE]-()`; with `allow_unlabelled`, `(n)` / `()-[r]-()` too.
    fn schema_target(&mut self, allow_unlabelled: bool) -> PResult<SchemaTarget> {
        self.expect_sym("(")?;
        if self.eat_sym(")") {
            self.eat_sym("<");
            self.expect_sym("-")?;
            self.expect_sym("[")?;
            let variable = self.ident("a variable")?;
            let rel_type = if self.eat_sym(":") {
                self.ident("a relationship type")?
            } else if allow_unlabelled {
                self.empty_ident()
            } else {
                return Err(self.unexpected("':'"));
            };
            self.expect_sym("]")?;
            self.expect_sym("-")?;
            self.eat_sym(">");
            self.expect_sym("(")?;
            self.expect_sym(")")?;
            return Ok(SchemaTarget::Relationship { variable, rel_type });
        }
        let variable = self.ident("a variable")?;
        let label = if self.eat_sym(":") {
            self.ident("a label")?
        } else if allow_unlabelled {
            self.empty_ident()
        } else {
            return Err(self.unexpected("':'"));
        };
        self.expect_sym(")")?;
        Ok(SchemaTarget::Node { variable, label })
    }

    /// Where the `n` of `n.p` starts, given where `p` starts (Neo4j points errors there).
    fn variable_start(&self, key_start: usize) -> usize {
        let before = self.text.get(..key_start.saturating_sub(1)).unwrap_or("");
        let var = before.trim_end().chars().rev().take_while(|c| c.is_alphanumeric() || *c == '_');
        before.trim_end().len() - var.map(char::len_utf8).sum::<usize>()
    }

    /// `n.p[, n.q]` → the keys.
    fn property_refs(&mut self) -> PResult<Vec<Ident>> {
        let mut out = Vec::new();
        loop {
            self.ident("a variable")?;
            self.expect_sym(".")?;
            out.push(self.ident("a property key")?);
            if !self.eat_sym(",") {
                return Ok(out);
            }
        }
    }

    /// After `REQUIRE` / `ASSERT`, for `target` (which starts at offset `at`). `IS NODE KEY` /
    /// `IS NODE UNIQUE` name nodes and `IS REL[ATIONSHIP] KEY|UNIQUE` relationships: the other
    /// kind of pattern is a syntax error at the pattern, as in Neo4j. `IS KEY` (without the
    /// entity) is a key constraint on whichever the pattern is.
    fn constraint_body(
        &mut self,
        target: &SchemaTarget,
        at: usize,
    ) -> PResult<(Vec<Ident>, ConstraintKind)> {
        if self.is_kw("exists") && self.is_sym_n(1, "(") {
            self.bump();
            self.bump();
            let props = self.property_refs()?;
            self.expect_sym(")")?;
            return Ok((props, ConstraintKind::Exists));
        }
        let props = if self.eat_sym("(") {
            let p = self.property_refs()?;
            self.expect_sym(")")?;
            p
        } else {
            self.property_refs()?
        };
        let typed = self.is_double_colon()
            || (self.is_kw("IS") && (self.is_kw_n(1, "TYPED") || self.is_sym_n(1, ":")));
        if typed {
            let rel = matches!(target, SchemaTarget::Relationship { .. });
            if let Some(second) = props.get(1) {
                let msg = "Constraint type 'IS TYPED' does not allow multiple properties";
                return Err(self.error_at(second.span.start.saturating_sub(1), msg));
            }
            self.eat_kw("IS");
            if !self.eat_kw("TYPED") {
                self.expect_sym(":")?;
                self.expect_sym(":")?;
            }
            let types = self.constraint_property_type(rel)?;
            return Ok((props, ConstraintKind::PropertyType(types)));
        }
        self.expect_kw("IS")?;
        let kind = if self.eat_kw("UNIQUE") {
            ConstraintKind::Unique
        } else if self.is_kw("NODE") || self.is_kw("REL") || self.is_kw("RELATIONSHIP") {
            let node = self.is_kw("NODE");
            self.bump();
            let kind = if self.eat_kw("KEY") {
                ConstraintKind::NodeKey
            } else if self.eat_kw("UNIQUE") {
                ConstraintKind::Unique
            } else {
                return Err(self.unexpected("KEY or UNIQUE"));
            };
            let rel_target = matches!(target, SchemaTarget::Relationship { .. });
            if node == rel_target {
                let spelled = match (node, kind) {
                    (true, ConstraintKind::NodeKey) => "'IS NODE KEY' does not allow relationship",
                    (true, _) => "'IS NODE UNIQUE' does not allow relationship",
                    (false, ConstraintKind::NodeKey) => "'IS RELATIONSHIP KEY' does not allow node",
                    (false, _) => "'IS RELATIONSHIP UNIQUE' does not allow node",
                };
                return Err(self.error_at(at, &format!("{spelled} patterns")));
            }
            kind
        } else if self.eat_kw("KEY") {
            ConstraintKind::NodeKey
        } else if self.eat_kw("NOT") {
            self.expect_kw("NULL")?;
            ConstraintKind::Exists
        } else {
            return Err(self.unexpected("UNIQUE, NODE KEY or NOT NULL"));
        };
        Ok((props, kind))
    }

    pub(crate) fn show_command(&mut self) -> PResult<ShowCommand> {
        self.bump(); // SHOW
        let mut filters = 0;
        let mut filter: Option<Arc<str>> = None;
        if (self.is_kw("DEFAULT") || self.is_kw("HOME")) && self.is_kw_n(1, "DATABASE") {
            if let crate::lexer::Tok::Word(w) = self.peek() {
                filter = Some(Arc::from(w.to_ascii_uppercase().as_str()));
            }
            self.bump();
        }
        let single_database = filter.is_some();
        let mut names = None;
        let kind = loop {
            let kind = if self.is_kw("SETTINGS") || self.is_kw("SETTING") {
                self.bump();
                names = self.show_setting_names()?;
                break ShowKind::Settings;
            } else if self.is_kw("SERVERS") || self.is_kw("SERVER") {
                Some(ShowKind::Servers)
            } else if single_database {
                self.expect_kw("DATABASE")?;
                break ShowKind::Databases;
            } else if self.is_kw("DATABASE")
                && !self.is_kw_n(1, "YIELD")
                && !self.is_kw_n(1, "WHERE")
            {
                self.bump();
                names = self.show_database_name()?;
                break ShowKind::Databases;
            } else if self.is_kw("DATABASES") || self.is_kw("DATABASE") {
                Some(ShowKind::Databases)
            } else if self.is_kw("INDEX") || self.is_kw("INDEXES") {
                Some(ShowKind::Indexes)
            } else if self.is_kw("CONSTRAINT") || self.is_kw("CONSTRAINTS") {
                Some(ShowKind::Constraints)
            } else if self.is_kw("FUNCTION") || self.is_kw("FUNCTIONS") {
                Some(ShowKind::Functions)
            } else if self.is_kw("PROCEDURE") || self.is_kw("PROCEDURES") {
                Some(ShowKind::Procedures)
            } else if self.is_kw("TRANSACTION") || self.is_kw("TRANSACTIONS") {
                Some(ShowKind::Transactions)
            } else {
                None
            };
            if let Some(kind) = kind {
                self.bump();
                break kind;
            }
            if filters < 4 && SHOW_FILTER_WORDS.iter().any(|w| self.is_kw(w)) {
                if filters == 0 && INDEX_KIND_WORDS.iter().chain(&["ALL"]).any(|w| self.is_kw(w)) {
                    if let crate::lexer::Tok::Word(w) = self.peek() {
                        filter = Some(Arc::from(w.to_ascii_uppercase().as_str()));
                    }
                }
                filters += 1;
                self.bump();
                continue;
            }
            return Err(self.unexpected(
                "DATABASES, INDEXES, CONSTRAINTS, FUNCTIONS, PROCEDURES or TRANSACTIONS",
            ));
        };
        if matches!(kind, ShowKind::Functions | ShowKind::Procedures)
            && self.eat_kw("EXECUTABLE")
            && self.eat_kw("BY")
        {
            if self.eat_kw("CURRENT") {
                self.expect_kw("USER")?;
            } else {
                self.ident("a user name")?;
            }
        }
        if kind != ShowKind::Indexes && kind != ShowKind::Databases {
            filter = None;
        }
        let mut cmd =
            ShowCommand { kind, filter, names, yield_: None, where_: None, then: Vec::new() };
        if self.eat_kw("YIELD") {
            let (spec, paging) = self.yield_spec(true)?;
            cmd.yield_ = Some(spec);
            cmd.then.extend(paging);
            while self.at_clause_start() {
                cmd.then.push(self.clause()?);
            }
        } else if self.eat_kw("WHERE") {
            cmd.where_ = Some(self.expr()?);
        }
        Ok(cmd)
    }

    /// The names after `SHOW SETTINGS`: string literals (a list expression when there are
    /// several) or one `$parameter`; `None` when the command continues (or ends) at once.
    fn show_setting_names(&mut self) -> PResult<Option<Expr>> {
        use crate::lexer::Tok;
        if !matches!(self.peek(), Tok::Str(_) | Tok::Param(_)) {
            return Ok(None);
        }
        let start = self.cur_span().start;
        let mut list = self.expr_list()?;
        if list.len() == 1 {
            return Ok(list.pop());
        }
        Ok(Some(Expr { kind: ExprKind::List(list), span: self.span_from(start) }))
    }

    /// The name after `SHOW DATABASE`: a (possibly dotted) name as a string, or a `$parameter`.
    fn show_database_name(&mut self) -> PResult<Option<Expr>> {
        use crate::lexer::Tok;
        let start = self.cur_span().start;
        if let Tok::Param(_) = self.peek() {
            return Ok(Some(self.expr()?));
        }
        if !self.is_name() || self.is_kw("YIELD") || self.is_kw("WHERE") {
            return Ok(None);
        }
        let mut name = self.ident("a database name")?.name.to_string();
        while self.is_sym(".") && self.is_name_n(1) {
            self.bump();
            name.push('.');
            name.push_str(&self.ident("a database name")?.name);
        }
        let lit = Literal::String(Arc::from(name.as_str()));
        Ok(Some(Expr { kind: ExprKind::Literal(lit), span: self.span_from(start) }))
    }
}
