//! The Cypher abstract syntax tree.
//!
//! The tree mirrors the surface syntax; it resolves nothing (names, scopes and types are the
//! binder's job in `cypher-plan`). Every expression and clause carries the [`Span`] of the text it
//! came from, so later stages can point at the culprit in error messages.

use std::sync::Arc;

/// Byte offsets `[start, end)` into the query text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// A name as written (unescaped: `` `my var` `` becomes `my var`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: Arc<str>,
    pub span: Span,
}

/// One statement: what a single `RUN` carries.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Query(Query),
    /// `EXPLAIN <statement>`: plan only.
    Explain(Box<Statement>),
    /// `PROFILE <statement>`: run and report per-operator rows and db hits.
    Profile(Box<Statement>),
    Schema(SchemaCommand),
    Show(ShowCommand),
    /// User administration (`CREATE USER`, `SHOW USERS`, ...).
    Admin(AdminCommand),
}

/// A query: one or more single queries joined by `UNION` / `UNION ALL`.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub first: SingleQuery,
    /// Each following part with `true` for `UNION ALL`, `false` for `UNION`.
    pub unions: Vec<(bool, SingleQuery)>,
    pub span: Span,
}

/// A sequence of clauses, e.g. `MATCH ... WITH ... RETURN ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct SingleQuery {
    pub clauses: Vec<Clause>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub kind: ClauseKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ClauseKind {
    Match {
        optional: bool,
        pattern: Vec<PatternPart>,
        where_: Option<Expr>,
    },
    Unwind {
        expr: Expr,
        variable: Ident,
    },
    With(Projection),
    Return(Projection),
    Create {
        pattern: Vec<PatternPart>,
    },
    Merge {
        pattern: PatternPart,
        actions: Vec<MergeAction>,
    },
    Set {
        items: Vec<SetItem>,
    },
    Remove {
        items: Vec<RemoveItem>,
    },
    Delete {
        detach: bool,
        exprs: Vec<Expr>,
    },
    Foreach {
        variable: Ident,
        list: Expr,
        clauses: Vec<Clause>,
    },
    /// `[OPTIONAL] CALL proc.name(args) YIELD a, b AS c WHERE ...`; `args == None` for the implicit-argument
    /// form `CALL proc.name` (standalone only).
    CallProcedure {
        name: QualifiedName,
        args: Option<Vec<Expr>>,
        yield_: Option<YieldSpec>,
        /// `OPTIONAL CALL proc(...)`: a row with nulls for the yielded columns when the
        /// procedure yields none (Neo4j 5.24+).
        optional: bool,
    },
    /// `[OPTIONAL] CALL [(scope)] { ... }` with an optional `IN TRANSACTIONS [OF n ROWS]`.
    CallSubquery {
        /// The variable scope clause of Neo4j 5.23+ (`CALL (a, b) { ... }`, `CALL (*)`,
        /// `CALL ()`); `None` for the older `CALL { ... }`, which imports through a leading
        /// `WITH`.
        scope: Option<CallScope>,
        /// `OPTIONAL CALL`: a row with nulls for the returned columns when the body has none.
        optional: bool,
        body: Box<Query>,
        in_transactions: Option<InTransactions>,
    },
    LoadCsv {
        with_headers: bool,
        url: Expr,
        variable: Ident,
        field_terminator: Option<String>,
    },
    /// `FINISH` (Neo4j 5.19+): the query ends here and returns no columns.
    Finish,
}

/// The variable scope clause of a subquery call: which outer variables its body sees.
#[derive(Clone, Debug, PartialEq)]
pub enum CallScope {
    /// `CALL (*) { ... }`: every variable in scope.
    All,
    /// `CALL (a, b) { ... }`; empty for `CALL () { ... }`.
    Vars(Vec<Ident>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct InTransactions {
    pub batch_rows: Option<Expr>,
    /// `IN [n] CONCURRENT TRANSACTIONS`: `Some(None)` without a count.
    pub concurrency: Option<Option<Expr>>,
    /// `ON ERROR CONTINUE | BREAK | FAIL` (`None` when not written; FAIL is the default).
    pub on_error: Option<OnError>,
    /// `REPORT STATUS AS s`.
    pub report_status: Option<Ident>,
}

/// What `CALL { ... } IN TRANSACTIONS` does when a batch fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    Continue,
    Break,
    Fail,
}

/// `WITH` and `RETURN` bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub distinct: bool,
    /// `RETURN *` / `WITH *` (further items may follow the star).
    pub star: bool,
    pub items: Vec<ProjectionItem>,
    pub order_by: Vec<SortItem>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
    /// `WITH ... WHERE` (always `None` for `RETURN`).
    pub where_: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionItem {
    pub expr: Expr,
    /// `AS alias`; without one the column is named by the expression's text as written.
    pub alias: Option<Ident>,
    /// The original text of the expression, used as the column name when there is no alias.
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SortItem {
    pub expr: Expr,
    pub descending: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MergeAction {
    OnCreate(Vec<SetItem>),
    OnMatch(Vec<SetItem>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum SetItem {
    /// `n.prop = expr` (the target may be any expression yielding an entity or map, e.g. `(n).p`).
    Property { target: Expr, key: Ident, value: Expr },
    /// `n = {map}` replaces all properties.
    Replace { variable: Ident, value: Expr },
    /// `n += {map}` merges properties.
    Merge { variable: Ident, value: Expr },
    /// `n:A:B`, also `n:$(expr)` (Neo4j 5.26 dynamic labels, each a string or a list of them).
    Labels { variable: Ident, labels: Vec<Ident>, dynamic: Vec<Expr> },
    /// `n[key] = expr` (Neo4j 5.26 dynamic property keys; `key` must yield a string).
    DynamicProperty { target: Expr, key: Expr, value: Expr },
}

#[derive(Clone, Debug, PartialEq)]
pub enum RemoveItem {
    Property {
        target: Expr,
        key: Ident,
    },
    /// `n:A:B`, also `n:$(expr)` as in [`SetItem::Labels`].
    Labels {
        variable: Ident,
        labels: Vec<Ident>,
        dynamic: Vec<Expr>,
    },
    /// `n[key]`, as in [`SetItem::DynamicProperty`].
    DynamicProperty {
        target: Expr,
        key: Expr,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct YieldSpec {
    /// `YIELD *`
    pub star: bool,
    /// `(procedure output name, alias)`
    pub items: Vec<(Ident, Option<Ident>)>,
    pub where_: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QualifiedName {
    /// `["db", "labels"]` for `db.labels`.
    pub parts: Vec<Ident>,
    pub span: Span,
}

impl QualifiedName {
    /// The dotted name, e.g. `db.labels`.
    pub fn dotted(&self) -> String {
        self.parts.iter().map(|p| &*p.name).collect::<Vec<_>>().join(".")
    }
}

/// `p = shortestPath((a)-[*]->(b))` or just `(a)-->(b)`.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternPart {
    pub variable: Option<Ident>,
    pub selector: PathSelector,
    pub element: PatternElement,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSelector {
    All,
    ShortestPath,
    AllShortestPaths,
    /// GQL `SHORTEST k` (`ANY SHORTEST` is `SHORTEST 1`), or with `groups` `SHORTEST k GROUPS`
    /// (`ALL SHORTEST` is `SHORTEST 1 GROUPS`): per pair of end nodes, the `k` shortest paths,
    /// or every path whose length is among the `k` smallest.
    Shortest {
        k: u64,
        groups: bool,
    },
    /// GQL `ANY k` (`ANY` is `ANY 1`): per pair of end nodes, any `k` paths.
    Any {
        k: u64,
    },
}

/// A chain `(a)-[r]->(b)<-[s]-(c)`. A quantified path pattern sits in the chain as a
/// [`RelPattern`] whose `quantified` is set, between its two boundary nodes (anonymous ones
/// are added where the text juxtaposes it with nothing or with another one).
#[derive(Clone, Debug, PartialEq)]
pub struct PatternElement {
    pub start: NodePattern,
    pub chain: Vec<(RelPattern, NodePattern)>,
    /// The WHERE of a parenthesised path pattern: `((a)-->(b) WHERE a.x < b.x)`.
    pub where_: Option<Box<Expr>>,
}

/// A quantified path pattern `((x)-[r:R]->(y) WHERE x.p < y.p){1,3}` (also a quantified
/// relationship `-[r:R WHERE r.w > 1]->+`): `element` is repeated `min..=max` times (`max`
/// `None`: unbounded), each iteration's first node being the previous one's last.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantified {
    pub element: PatternElement,
    pub min: u64,
    pub max: Option<u64>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodePattern {
    pub variable: Option<Ident>,
    /// `(n:A:B)` (also written `(n:A&B)`) — all must hold. With a [`LabelExpr`] these are the
    /// static labels it requires (its top-level positive conjuncts), so a scan can use one.
    pub labels: Vec<Ident>,
    /// The rest of a label expression (`(n:A&(B|C))` keeps `B|C` here, `A` in `labels`): `None`
    /// when `labels` say it all. Dynamic labels `$(expr)` are conjuncts of it.
    pub label_expr: Option<LabelExpr>,
    /// A map literal or a parameter.
    pub properties: Option<Expr>,
    /// `(n WHERE n.x > 1)` (Neo4j 5).
    pub where_: Option<Box<Expr>>,
    pub span: Span,
}

/// A pattern arrow: `-->` `Outgoing`, `<--` `Incoming`, `--` `Both` (the shared graph vocabulary).
pub use arbor_model::graph::Direction;

#[derive(Clone, Debug, PartialEq)]
pub struct RelPattern {
    pub variable: Option<Ident>,
    pub direction: Direction,
    /// `[:A|B]` (also written `[:A|:B]`) — any of them; empty means any type.
    pub types: Vec<Ident>,
    /// A type expression that is not a plain alternative of names (`[:!A]`, `[:%]`,
    /// `[:$(expr)]`); `types` is then empty.
    pub type_expr: Option<LabelExpr>,
    /// `*`, `*2`, `*1..3`, `*..3`, `*2..`: `Some((min, max))` with missing bounds as `None`.
    pub length: Option<(Option<u64>, Option<u64>)>,
    pub properties: Option<Expr>,
    pub where_: Option<Box<Expr>>,
    /// A quantified path pattern standing in the chain (the other fields are then empty).
    pub quantified: Option<Box<Quantified>>,
    pub span: Span,
}

/// A label or relationship type expression (GQL, Neo4j 5): `A|B`, `A&!B`, `%`, `(A|B)&C`,
/// and Neo4j 5.26's dynamic `$(expr)` / `$all(expr)` / `$any(expr)`.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelExpr {
    Name(Ident),
    /// `%`: some label (a node with at least one; every relationship has a type).
    Wildcard(Span),
    Not(Box<LabelExpr>),
    /// `A&B` (also the old `A:B`), at least two operands.
    And(Vec<LabelExpr>),
    /// `A|B`, at least two operands.
    Or(Vec<LabelExpr>),
    /// `$(expr)` / `$all(expr)`: all the names `expr` yields; `$any(expr)`: one of them.
    Dynamic {
        expr: Box<Expr>,
        any: bool,
        span: Span,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(Arc<str>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Not,
    Neg,
    Plus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Or,
    Xor,
    And,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    In,
    StartsWith,
    EndsWith,
    Contains,
    /// `=~`
    RegexMatch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantifier {
    All,
    Any,
    None,
    Single,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MapProjectionItem {
    /// `.key`
    Property(Ident),
    /// `key: expr`
    Literal(Ident, Expr),
    /// `var` (includes `var: var`)
    Variable(Ident),
    /// `.*`
    AllProperties,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// `$name` or `$0`.
    Parameter(Arc<str>),
    Variable(Arc<str>),
    /// `expr.key`
    Property(Box<Expr>, Ident),
    List(Vec<Expr>),
    Map(Vec<(Ident, Expr)>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// A comparison chain: `a < b <= c` is `a < b AND b <= c`, with `b` evaluated once.
    Compare(Box<Expr>, Vec<(CompareOp, Expr)>),
    /// `expr IS NULL` (`negated` for `IS NOT NULL`).
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `expr:A:B` — true if the node has all labels (or the relationship has the type).
    HasLabels(Box<Expr>, Vec<Ident>),
    /// `expr:A|B`, `expr IS A&!B`: a label expression that is not a plain conjunction.
    HasLabelExpr(Box<Expr>, LabelExpr),
    /// `list[index]`
    Index(Box<Expr>, Box<Expr>),
    /// `list[from..to]`
    Slice {
        expr: Box<Expr>,
        from: Option<Box<Expr>>,
        to: Option<Box<Expr>>,
    },
    /// `name(args)` / `name(DISTINCT args)`.
    Function {
        name: QualifiedName,
        distinct: bool,
        args: Vec<Expr>,
    },
    /// `count(*)`
    CountStar,
    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        else_: Option<Box<Expr>>,
    },
    /// `[x IN list WHERE pred | expr]`
    ListComprehension {
        variable: Ident,
        list: Box<Expr>,
        filter: Option<Box<Expr>>,
        map: Option<Box<Expr>>,
    },
    /// `[p = (a)-->(b) WHERE pred | expr]`
    PatternComprehension {
        variable: Option<Ident>,
        pattern: Box<PatternElement>,
        filter: Option<Box<Expr>>,
        map: Box<Expr>,
    },
    /// `all(x IN list WHERE pred)` and friends.
    Quantified {
        quantifier: Quantifier,
        variable: Ident,
        list: Box<Expr>,
        filter: Box<Expr>,
    },
    /// `reduce(acc = init, x IN list | expr)`
    Reduce {
        accumulator: Ident,
        init: Box<Expr>,
        variable: Ident,
        list: Box<Expr>,
        expr: Box<Expr>,
    },
    /// A pattern used as a predicate: `WHERE (a)-->(b)` (always at least one relationship).
    ///
    /// `shortestPath(...)` / `allShortestPaths(...)` written inside an expression parse as a
    /// [`ExprKind::Function`] of that name whose single argument is a `PatternPredicate`.
    PatternPredicate(Box<PatternElement>),
    /// `EXISTS { MATCH ... }` or `EXISTS { (a)-->(b) WHERE ... }`.
    ///
    /// The bare-pattern form (`{ pattern [WHERE pred] }`, no clause keyword) is represented as a
    /// [`Query`] whose only clause is a non-optional [`ClauseKind::Match`] carrying the pattern
    /// and the WHERE, with **no** RETURN clause; a full-query body is kept as written. The same
    /// holds for `COUNT { ... }` and `COLLECT { ... }`.
    Exists(Box<Query>),
    /// `COUNT { ... }` (bare-pattern bodies as for [`ExprKind::Exists`]).
    CountSubquery(Box<Query>),
    /// `COLLECT { ... }` (bare-pattern bodies as for [`ExprKind::Exists`]).
    CollectSubquery(Box<Query>),
    /// `n {.a, b: 1, .*}`
    MapProjection {
        variable: Ident,
        items: Vec<MapProjectionItem>,
    },
}

/// Index and constraint DDL, in Neo4j 5 and pre-5 syntax.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaCommand {
    CreateIndex {
        name: Option<Ident>,
        if_not_exists: bool,
        kind: IndexKind,
        target: SchemaTarget,
        properties: Vec<Ident>,
        /// The OPTIONS map (or parameter) as written (a POINT index's settings).
        options: Option<Expr>,
    },
    /// `CREATE VECTOR INDEX [name] [IF NOT EXISTS] FOR (n:L) ON n.p [OPTIONS {...}]` (also the
    /// relationship form); `options` is the OPTIONS map (or parameter) as written.
    CreateVectorIndex {
        name: Option<Ident>,
        /// `CREATE VECTOR INDEX $name ...`: the parameter holding the name.
        name_param: Option<Arc<str>>,
        if_not_exists: bool,
        target: SchemaTarget,
        property: Ident,
        options: Option<Expr>,
    },
    /// `CREATE FULLTEXT INDEX [name] [IF NOT EXISTS] FOR (n:A|B) ON EACH [n.p, ...] [OPTIONS
    /// {...}]`, or `FOR ()-[r:T1|T2]-()` (`relationship`); `options` as written.
    CreateFulltextIndex {
        name: Option<Ident>,
        /// `CREATE FULLTEXT INDEX $name ...`: the parameter holding the name.
        name_param: Option<Arc<str>>,
        if_not_exists: bool,
        relationship: bool,
        /// The labels (or relationship types), in definition order.
        labels: Vec<Ident>,
        properties: Vec<Ident>,
        options: Option<Expr>,
    },
    DropIndex {
        name: Option<Ident>,
        /// `DROP INDEX $name`: the parameter holding the name.
        param: Option<Arc<str>>,
        if_exists: bool,
        target: Option<(SchemaTarget, Vec<Ident>)>,
    },
    CreateConstraint {
        name: Option<Ident>,
        if_not_exists: bool,
        target: SchemaTarget,
        properties: Vec<Ident>,
        kind: ConstraintKind,
    },
    DropConstraint {
        name: Option<Ident>,
        if_exists: bool,
        /// The pre-5 form names the constraint by its definition.
        definition: Option<(SchemaTarget, Vec<Ident>, ConstraintKind)>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    Range,
    Text,
    Point,
    Lookup,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintKind {
    Unique,
    NodeKey,
    Exists,
    /// `IS :: T`, `IS TYPED T`, `:: T`: the property has one of the (normalised) types.
    PropertyType(arbor_model::property_type::PropertyTypes),
}

/// `(n:Label)` or `()-[r:TYPE]-()` in schema commands.
///
/// Forms that do not spell a part get an [`Ident`] with an empty name (span at the point where
/// it would be): the variable of pre-5 `CREATE INDEX ON :Label(p)` / `DROP INDEX ON :Label(p)`,
/// and the label/type of LOOKUP indexes (`FOR (n) ON EACH labels(n)`).
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaTarget {
    Node { variable: Ident, label: Ident },
    Relationship { variable: Ident, rel_type: Ident },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShowKind {
    Databases,
    Indexes,
    Constraints,
    Functions,
    Procedures,
    Transactions,
    /// `SHOW SETTINGS [names]`.
    Settings,
    /// `SHOW SERVERS` (refused as Neo4j Community refuses it).
    Servers,
}

/// `SHOW INDEXES [YIELD ...] [WHERE ...] [RETURN ...]`.
///
/// `ORDER BY` / `SKIP` / `LIMIT` after `YIELD` (and a `WHERE` following them) arrive as a leading
/// `WITH *` clause in [`ShowCommand::then`]. The index type of `SHOW RANGE|VECTOR|... INDEXES`
/// is kept in [`ShowCommand::filter`]; other filter words (`SHOW UNIQUE CONSTRAINTS`, `SHOW
/// BUILT IN FUNCTIONS`, `EXECUTABLE BY ...`) are accepted but not recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct ShowCommand {
    pub kind: ShowKind,
    /// `SHOW ALL|RANGE|TEXT|POINT|LOOKUP|VECTOR|FULLTEXT|BTREE INDEXES`: that word, uppercase;
    /// also `DEFAULT` / `HOME` for `SHOW DEFAULT|HOME DATABASE`.
    pub filter: Option<Arc<str>>,
    /// What the command is narrowed to: `SHOW SETTINGS 'a', 'b'` (a list), `SHOW SETTINGS $p`
    /// (a string or list parameter), `SHOW DATABASE name` (a string).
    pub names: Option<Expr>,
    pub yield_: Option<YieldSpec>,
    pub where_: Option<Expr>,
    /// Clauses following `YIELD` (typically `RETURN ...`), run over the yielded rows.
    pub then: Vec<Clause>,
}

// Administration: users (`CREATE USER`, `ALTER USER`, `ALTER CURRENT USER`, `RENAME USER`,
// `DROP USER`, `SHOW USERS`, `SHOW CURRENT USER`) and transactions (`SHOW TRANSACTIONS`,
// `TERMINATE TRANSACTIONS`), as Neo4j 5 spells them. Only the syntax lives
// here: the planner turns each command into a call of an internal procedure (cypher-plan's
// `plan/admin.rs`), and the engine's procedures check the rules (password length, name
// characters, existing users) and change its user store.

/// A name or secret given literally or as a `$parameter`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Argument {
    Literal(String),
    Parameter(Arc<str>),
}

/// `SET [PLAINTEXT | ENCRYPTED] PASSWORD 'pw' | $param`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswordSpec {
    /// `ENCRYPTED`: the value is a hash (`<version>,<hash>,<salt>[,<iterations>]`).
    pub encrypted: bool,
    pub value: Argument,
}

/// Settings shared by `CREATE USER` and `ALTER USER`; `None` leaves a setting alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserSettings {
    pub password: Option<PasswordSpec>,
    /// `CHANGE [NOT] REQUIRED`.
    pub change_required: Option<bool>,
    /// `SET STATUS SUSPENDED` (true) or `ACTIVE` (false).
    pub suspended: Option<bool>,
    /// `SET HOME DATABASE db` (`Some(Some)`) or `REMOVE HOME DATABASE` (`Some(None)`).
    pub home: Option<Option<Argument>>,
}

/// A user administration command.
#[derive(Clone, Debug, PartialEq)]
pub enum AdminCommand {
    CreateUser {
        name: Argument,
        or_replace: bool,
        if_not_exists: bool,
        settings: UserSettings,
    },
    AlterUser {
        name: Argument,
        if_exists: bool,
        settings: UserSettings,
    },
    /// `ALTER CURRENT USER SET PASSWORD FROM old TO new`.
    AlterCurrentUser {
        old: Argument,
        new: Argument,
    },
    RenameUser {
        from: Argument,
        to: Argument,
        if_exists: bool,
    },
    DropUser {
        name: Argument,
        if_exists: bool,
    },
    /// `SHOW USERS` / `SHOW CURRENT USER` with the usual `YIELD`/`WHERE`/`RETURN` tail.
    ShowUsers {
        current: bool,
        yield_: Option<YieldSpec>,
        where_: Option<Expr>,
        then: Vec<Clause>,
    },
    /// `SHOW TRANSACTION[S] [id, ...]` with the usual `YIELD`/`WHERE`/`RETURN` tail; ids are
    /// strings or parameters (a parameter may hold a list of ids).
    ShowTransactions {
        ids: Vec<Argument>,
        yield_: Option<YieldSpec>,
        where_: Option<Expr>,
        then: Vec<Clause>,
    },
    /// `TERMINATE TRANSACTION[S] id, ... [YIELD ...]`.
    TerminateTransactions {
        ids: Vec<Argument>,
        yield_: Option<YieldSpec>,
        where_: Option<Expr>,
        then: Vec<Clause>,
    },
}
