//! [`Prepared`]: a statement after parsing and planning, as `dispatch` routes it (a planned
//! query, `SHOW` commands included, or a schema or administration command that runs without
//! the planner).

use std::sync::Arc;

use arbor_exec::PreparedQuery;

use super::{Notification, QueryType};

pub(crate) enum Prepared {
    Query(Arc<PreparedQuery>, Arc<[Notification]>),
    Schema(arbor_cypher_syntax::ast::SchemaCommand),
    Admin(arbor_cypher_syntax::ast_admin::AdminCommand),
    ShowCurrentUserCall,
    /// `EXPLAIN` of a schema or administration command: runs nothing.
    Explained(QueryType),
}
