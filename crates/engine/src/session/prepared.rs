//! [`Prepared`]: a statement after parsing and planning, as `dispatch` routes it (a planned
//! query, `SHOW` and administration commands included, or a schema command that runs without
//! the planner).

use std::sync::Arc;

use arbor_exec::PreparedQuery;

use super::{Notification, QueryType};

pub(crate) enum Prepared {
    Query(Arc<PreparedQuery>, Arc<[Notification]>),
    /// Boxed: a schema command is much larger than the other variants.
    Schema(Box<arbor_cypher_syntax::ast::SchemaCommand>),
    /// `EXPLAIN` of a schema command: runs nothing.
    Explained(QueryType),
}
