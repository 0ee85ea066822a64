//! Errors with Neo4j status codes.
//!
//! Every error a user can cause carries a [`Status`], which maps one-to-one to the Neo4j status
//! code drivers branch on (`Neo.ClientError.Statement.SyntaxError`, ...). The code is part of the
//! model rather than of the Bolt layer because embedded users and the TCK harness need it too.

use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The class of an error, as a Neo4j status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    SyntaxError,
    SemanticError,
    TypeError,
    ArgumentError,
    ArithmeticError,
    ParameterMissing,
    EntityNotFound,
    ConstraintValidationFailed,
    /// Creating a constraint that existing data violates.
    ConstraintCreationFailed,
    /// Creating an index or constraint equivalent to an existing one (without `IF NOT EXISTS`).
    EquivalentSchemaRule,
    /// Creating an index or constraint where an index on the same schema exists (a constraint
    /// would need its own backing index; a second index of another name is redundant).
    IndexAlreadyExists,
    /// Creating an index or constraint where a constraint on the same schema exists.
    ConstraintAlreadyExists,
    /// Deleting a node that still has relationships.
    DeleteNodeWithRelationships,
    ProcedureNotFound,
    FunctionNotFound,
    DatabaseNotFound,
    /// A write-write conflict with a concurrent transaction; retryable.
    TransactionOutdated,
    TransactionTerminated,
    TransactionNotFound,
    InvalidBookmark,
    ForbiddenOnReadOnly,
    Unauthorized,
    RequestInvalid,
    /// The memory pool (`db.memory.transaction.total.max`) is exhausted; retryable.
    MemoryExhausted,
    /// A transaction passed its own memory limit (`db.memory.transaction.max`).
    TransactionOutOfMemory,
    Io,
    Corruption,
    Internal,
    /// A write in a transaction the client opened in READ access mode.
    AccessMode,
    /// A transaction ran past the server's `db.transaction.timeout`.
    TransactionTimedOut,
    /// A transaction ran past the timeout its client set (Bolt `tx_timeout`).
    TransactionTimedOutClientConfiguration,
    /// `DROP INDEX` of an index that does not exist (without `IF EXISTS`).
    IndexDropFailed,
    /// `DROP CONSTRAINT` of a constraint that does not exist (without `IF EXISTS`).
    ConstraintDropFailed,
    /// A user who must change their password ran something other than `ALTER CURRENT USER`.
    CredentialsExpired,
    /// An administration command that cannot run here (e.g. `ALTER CURRENT USER` without auth).
    ExecutionFailed,
    /// Too many failed logins in a row (`dbms.security.auth_max_failed_attempts`).
    AuthenticationRateLimit,
    /// A procedure failed on its arguments or the state it found (`db.index.vector.queryNodes`
    /// on a missing index); the message says `Failed to invoke procedure ...: Caused by: ...`.
    ProcedureCallFailed,
    /// Creating an index under a name another index (on another schema) already has.
    IndexWithNameAlreadyExists,
    /// Settings a command does not accept (an unknown `indexConfig` key, a mistyped value).
    InvalidArguments,
    /// A label, type or property key name that cannot be a token (`SET n:$('')`).
    TokenNameError,
    /// `CALL { ... } IN TRANSACTIONS` in an explicit transaction.
    TransactionStartFailed,
    /// `LOAD CSV` could not read its URL (missing file, unsupported scheme, outside the import
    /// directory).
    ExternalResourceFailed,
    /// An administration command this edition does not run (`SHOW SERVERS`, as in Neo4j
    /// Community).
    NotSystemDatabaseError,
}

impl Status {
    /// The Neo4j status code.
    pub fn code(self) -> &'static str {
        match self {
            Status::SyntaxError => "Neo.ClientError.Statement.SyntaxError",
            Status::SemanticError => "Neo.ClientError.Statement.SemanticError",
            Status::TypeError => "Neo.ClientError.Statement.TypeError",
            Status::ArgumentError => "Neo.ClientError.Statement.ArgumentError",
            Status::ArithmeticError => "Neo.ClientError.Statement.ArithmeticError",
            Status::ParameterMissing => "Neo.ClientError.Statement.ParameterMissing",
            Status::EntityNotFound => "Neo.ClientError.Statement.EntityNotFound",
            Status::ConstraintValidationFailed => {
                "Neo.ClientError.Schema.ConstraintValidationFailed"
            }
            Status::DeleteNodeWithRelationships => {
                "Neo.ClientError.Schema.ConstraintValidationFailed"
            }
            // Neo4j 5 classifies this one as a database error.
            Status::ConstraintCreationFailed => "Neo.DatabaseError.Schema.ConstraintCreationFailed",
            Status::EquivalentSchemaRule => {
                "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
            }
            Status::IndexAlreadyExists => "Neo.ClientError.Schema.IndexAlreadyExists",
            Status::ConstraintAlreadyExists => "Neo.ClientError.Schema.ConstraintAlreadyExists",
            Status::ProcedureNotFound => "Neo.ClientError.Procedure.ProcedureNotFound",
            Status::FunctionNotFound => "Neo.ClientError.Statement.SyntaxError",
            Status::DatabaseNotFound => "Neo.ClientError.Database.DatabaseNotFound",
            Status::TransactionOutdated => "Neo.TransientError.Transaction.Outdated",
            Status::TransactionTerminated => "Neo.ClientError.Transaction.Terminated",
            Status::TransactionNotFound => "Neo.ClientError.Transaction.TransactionNotFound",
            Status::InvalidBookmark => "Neo.ClientError.Transaction.InvalidBookmark",
            Status::ForbiddenOnReadOnly => "Neo.ClientError.General.ForbiddenOnReadOnlyDatabase",
            Status::Unauthorized => "Neo.ClientError.Security.Unauthorized",
            Status::RequestInvalid => "Neo.ClientError.Request.Invalid",
            Status::MemoryExhausted => "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
            Status::TransactionOutOfMemory => "Neo.ClientError.General.TransactionOutOfMemoryError",
            Status::Io => "Neo.DatabaseError.General.UnknownError",
            Status::Corruption => "Neo.DatabaseError.General.UnknownError",
            Status::Internal => "Neo.DatabaseError.General.UnknownError",
            Status::AccessMode => "Neo.ClientError.Statement.AccessMode",
            Status::TransactionTimedOut => "Neo.ClientError.Transaction.TransactionTimedOut",
            Status::TransactionTimedOutClientConfiguration => {
                "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"
            }
            Status::IndexDropFailed => "Neo.DatabaseError.Schema.IndexDropFailed",
            Status::ConstraintDropFailed => "Neo.DatabaseError.Schema.ConstraintDropFailed",
            Status::CredentialsExpired => "Neo.ClientError.Security.CredentialsExpired",
            Status::ExecutionFailed => "Neo.DatabaseError.Statement.ExecutionFailed",
            Status::AuthenticationRateLimit => "Neo.ClientError.Security.AuthenticationRateLimit",
            Status::ProcedureCallFailed => "Neo.ClientError.Procedure.ProcedureCallFailed",
            Status::InvalidArguments => "Neo.ClientError.General.InvalidArguments",
            Status::TokenNameError => "Neo.ClientError.Schema.TokenNameError",
            Status::TransactionStartFailed => {
                "Neo.DatabaseError.Transaction.TransactionStartFailed"
            }
            Status::ExternalResourceFailed => "Neo.ClientError.Statement.ExternalResourceFailed",
            Status::NotSystemDatabaseError => "Neo.ClientError.Statement.NotSystemDatabaseError",
            Status::IndexWithNameAlreadyExists => {
                "Neo.ClientError.Schema.IndexWithNameAlreadyExists"
            }
        }
    }

    /// The GQLSTATUS code sent to Bolt 5.7+ clients.
    pub fn gql_status(self) -> &'static str {
        match self {
            Status::SyntaxError | Status::FunctionNotFound => "42001",
            Status::SemanticError => "42N00",
            Status::TypeError => "22G03",
            Status::ArgumentError => "22N00",
            Status::ArithmeticError => "22003",
            Status::ParameterMissing => "42N51",
            Status::EntityNotFound => "22N00",
            Status::ConstraintValidationFailed | Status::DeleteNodeWithRelationships => "22N41",
            Status::ConstraintCreationFailed => "22N66",
            Status::EquivalentSchemaRule => "22N70",
            // What Neo4j 5.26 sends for both (its generic schema-rule failure).
            Status::IndexAlreadyExists | Status::ConstraintAlreadyExists => "50N42",
            Status::ProcedureNotFound => "42N08",
            Status::DatabaseNotFound => "22000",
            Status::TransactionOutdated => "25N11",
            Status::TransactionTerminated => "25N05",
            Status::TransactionNotFound => "25N05",
            Status::InvalidBookmark => "08N13",
            Status::ForbiddenOnReadOnly => "08N09",
            Status::Unauthorized => "42NFF",
            Status::RequestInvalid => "08N06",
            Status::MemoryExhausted => "51N72",
            Status::TransactionOutOfMemory => "51N73",
            Status::Io | Status::Corruption | Status::Internal => "50N42",
            // What Neo4j 5.26 sends (its generic code for these; golden from 5.26.30).
            Status::AccessMode | Status::IndexDropFailed => "50N42",
            Status::TransactionTimedOut | Status::TransactionTimedOutClientConfiguration => "50N42",
            Status::ConstraintDropFailed => "50N12",
            Status::CredentialsExpired => "42NFF",
            Status::ExecutionFailed => "50N00",
            Status::AuthenticationRateLimit => "42NFF",
            // What Neo4j 5.26 sends for both (checked against 5.26).
            Status::ProcedureCallFailed | Status::InvalidArguments => "50N42",
            Status::TokenNameError => "50N42",
            Status::TransactionStartFailed | Status::ExternalResourceFailed => "50N42",
            Status::NotSystemDatabaseError => "50N42",
            Status::IndexWithNameAlreadyExists => "50N42",
        }
    }

    /// `CLIENT_ERROR`, `TRANSIENT_ERROR` or `DATABASE_ERROR`, as Bolt 5.7+ diagnostic records say.
    pub fn classification(self) -> &'static str {
        let code = self.code();
        if code.starts_with("Neo.ClientError") {
            "CLIENT_ERROR"
        } else if code.starts_with("Neo.TransientError") {
            "TRANSIENT_ERROR"
        } else {
            "DATABASE_ERROR"
        }
    }
}

/// An error a user can see: a status, a message, and for the TCK the detail name
/// (`UnknownFunction`, `VariableTypeConflict`, `InvalidArgumentType`, ...).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    pub status: Status,
    pub message: String,
    pub detail: Option<&'static str>,
}

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into(), detail: None }
    }

    /// Adds the TCK detail name (`openCypher` error detail, e.g. `UnknownFunction`).
    pub fn with_detail(mut self, detail: &'static str) -> Error {
        self.detail = Some(detail);
        self
    }

    pub fn syntax(message: impl Into<String>) -> Error {
        Error::new(Status::SyntaxError, message)
    }

    pub fn semantic(message: impl Into<String>) -> Error {
        Error::new(Status::SemanticError, message)
    }

    pub fn type_error(message: impl Into<String>) -> Error {
        Error::new(Status::TypeError, message)
    }

    pub fn argument(message: impl Into<String>) -> Error {
        Error::new(Status::ArgumentError, message)
    }

    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(Status::Internal, format!("{} (this is a bug in Arbor)", message.into()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.code(), self.message)
    }
}
