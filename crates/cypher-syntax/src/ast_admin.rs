//! The administration commands of the AST by their own name: users (`CREATE USER`, `ALTER USER`,
//! `ALTER CURRENT USER`, `RENAME USER`, `DROP USER`, `SHOW USERS`, `SHOW CURRENT USER`) and
//! transactions (`SHOW TRANSACTIONS`, `TERMINATE TRANSACTIONS`).
//!
//! The types are defined in [`crate::ast`], because [`crate::ast::Statement`] holds them and
//! `SHOW USERS` holds clauses and expressions in turn; this module only names them, so the
//! dependency runs one way.

pub use crate::ast::{AdminCommand, Argument, PasswordSpec, UserSettings};
