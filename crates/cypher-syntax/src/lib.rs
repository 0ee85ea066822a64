//! Cypher text → AST ([`ast`]).
//!
//! **Architecture Invariant:** parsing never panics, never recurses without a depth bound, and
//! every error names what was expected and where (line, column).

pub mod ast;
