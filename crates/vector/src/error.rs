//! The error type of the vector index: every failure names what was wrong and where.

use thiserror::Error;

/// Errors from building, querying, reading or writing a vector index.
///
/// The engine maps the argument errors to `Neo.ClientError.Statement.ArgumentError` (Neo4j reports
/// a bad query vector or a bad index configuration with that code) and [`VectorError::Corrupt`] /
/// [`VectorError::Io`] to a database error.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum VectorError {
    /// `vector.dimensions` outside `1..=4096`.
    #[error("vector dimensions must be between 1 and {max}, got {got}")]
    BadDimensions { got: usize, max: usize },
    /// A vector whose length differs from the index's (or the other argument's) dimensions.
    #[error("vector has {got} dimensions, expected {expected}")]
    DimensionMismatch { expected: usize, got: usize },
    /// The two arguments of a similarity function differ in length (Neo4j's message).
    #[error("The supplied vectors do not have the same number of dimensions.")]
    DifferentDimensions,
    /// An argument of a similarity function that the function cannot use: empty, a non-finite
    /// coordinate, or a zero vector for cosine (Neo4j's message; `argument` is `a` or `b`).
    #[error("Argument {argument} is not a valid vector for this similarity function.")]
    InvalidArgument { argument: &'static str },
    /// A coordinate that is NaN or infinite, at index `at`.
    #[error("vector coordinate {at} is not a finite number")]
    NotFinite { at: usize },
    /// A zero vector (or one whose norm underflows), which has no direction for cosine similarity.
    #[error("vector has zero norm and is not valid for cosine similarity")]
    ZeroNorm,
    /// A configuration value out of range, naming the setting.
    #[error("invalid vector index setting {name}: {reason}")]
    BadConfig { name: &'static str, reason: String },
    /// The index cannot take more entries: slots and link offsets are `u32` (`what` names
    /// which one ran out).
    #[error("vector index is full: at most {max} {what}")]
    Full { what: &'static str, max: u64 },
    /// A persisted index that fails a check; `what` names the section and the problem.
    #[error("corrupt vector index file: {what}")]
    Corrupt { what: String },
    /// An I/O error while reading or writing an index file.
    #[error("vector index I/O error: {0}")]
    Io(#[from] std::io::Error),
}

pub type Result<T, E = VectorError> = std::result::Result<T, E>;

pub(crate) fn corrupt(what: impl Into<String>) -> VectorError {
    VectorError::Corrupt { what: what.into() }
}
