//! Cypher text → AST ([`ast`]).
//!
//! **Architecture Invariant:** parsing never panics, never recurses without a depth bound, and
//! every error names what was expected and where (line, column).

pub mod ast;
pub mod ast_admin;
mod error;
mod lexer;
mod parser;

pub use error::line_col;

/// Parses one statement (a query, `EXPLAIN`/`PROFILE` of one, a schema command or a `SHOW`
/// command), with an optional trailing semicolon.
///
/// Errors carry `Status::SyntaxError` and a message in Neo4j's style naming what was found, what
/// was expected and the position.
pub fn parse(text: &str) -> Result<ast::Statement, arbor_model::Error> {
    parser::parse_statement(text).map(|(stmt, _)| stmt)
}

/// [`parse`], also returning the graph a leading `USE <graph>` clause names (after any
/// `CYPHER` options and `EXPLAIN`/`PROFILE`). `CYPHER` options are validated and dropped.
pub fn parse_with_graph(
    text: &str,
) -> Result<(ast::Statement, Option<String>), arbor_model::Error> {
    parser::parse_statement(text)
}

#[cfg(test)]
mod cy25_tests;
#[cfg(test)]
mod label_tests;
#[cfg(test)]
mod tests;
