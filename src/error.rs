//! One error type for the whole crate.
//!
//! Every entry point (library or CLI) reports bad input through [`Error`], whose
//! `Display` says *what* was wrong and *where* (which tensor, which dimension,
//! which value, which line). Nothing reachable from user input panics.

use std::fmt;

/// Convenient alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in symstride.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An expression, spec or file could not be parsed.
    Parse {
        /// What was being parsed (`"expression"`, `"spec"`, ...).
        what: String,
        /// Human-readable description, including the position when known.
        message: String,
    },
    /// A branch on a condition over unbacked symbols that cannot be decided statically.
    DataDependent {
        /// The condition, printed.
        expr: String,
        /// Which operation asked.
        reason: String,
    },
    /// Shapes that do not broadcast, PyTorch's wording.
    Broadcast {
        /// Size of the left operand at that dimension.
        size_a: String,
        /// Size of the right operand at that dimension.
        size_b: String,
        /// Dimension index (in the broadcast result).
        dim: usize,
    },
    /// Sizes/strides that do not describe a valid strided tensor.
    InvalidLayout {
        /// Which tensor (operand name or index).
        tensor: String,
        /// Description including the dimension and value.
        message: String,
    },
    /// A size, stride, numel or byte offset product does not fit in i64.
    Overflow {
        /// What overflowed, and where.
        what: String,
    },
    /// An operand's memory overlaps itself or another operand illegally.
    MemoryOverlap {
        /// Description of the overlap.
        message: String,
    },
    /// Unknown symbol, missing hint, inconsistent binding and the like.
    Symbol {
        /// Description.
        message: String,
    },
    /// Division or modulo by zero while evaluating an expression.
    DivisionByZero {
        /// The expression being evaluated.
        expr: String,
    },
    /// A configured limit (guards per symbol, expression size, dims) was exceeded.
    Limit {
        /// Description.
        message: String,
    },
    /// An artifact/plan file is invalid or from another format version.
    Artifact {
        /// Description.
        message: String,
    },
    /// Anything else a caller asked that cannot be done, with an explanation.
    Invalid {
        /// Description.
        message: String,
    },
    /// An I/O failure (file name and OS message).
    Io {
        /// Path or stream.
        path: String,
        /// OS message.
        message: String,
    },
}

impl Error {
    /// Builds an [`Error::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid {
            message: message.into(),
        }
    }
    /// Builds an [`Error::Parse`].
    pub fn parse(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Parse {
            what: what.into(),
            message: message.into(),
        }
    }
    /// Builds an [`Error::Overflow`].
    pub fn overflow(what: impl Into<String>) -> Self {
        Error::Overflow { what: what.into() }
    }
    /// Builds an [`Error::InvalidLayout`].
    pub fn layout(tensor: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidLayout {
            tensor: tensor.into(),
            message: message.into(),
        }
    }
    /// Builds an [`Error::Symbol`].
    pub fn symbol(message: impl Into<String>) -> Self {
        Error::Symbol {
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse { what, message } => write!(f, "cannot parse {what}: {message}"),
            Error::DataDependent { expr, reason } => write!(
                f,
                "data-dependent branch: cannot decide `{expr}` (asked by {reason}); the value depends on an unbacked symbol"
            ),
            Error::Broadcast { size_a, size_b, dim } => write!(
                f,
                "The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at non-singleton dimension {dim}"
            ),
            Error::InvalidLayout { tensor, message } => write!(f, "invalid tensor {tensor}: {message}"),
            Error::Overflow { what } => write!(f, "integer overflow: {what} does not fit in i64"),
            Error::MemoryOverlap { message } => write!(f, "memory overlap: {message}"),
            Error::Symbol { message } => write!(f, "{message}"),
            Error::DivisionByZero { expr } => write!(f, "division by zero while evaluating `{expr}`"),
            Error::Limit { message } => write!(f, "limit exceeded: {message}"),
            Error::Artifact { message } => write!(f, "invalid artifact: {message}"),
            Error::Invalid { message } => write!(f, "{message}"),
            Error::Io { path, message } => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for Error {}
