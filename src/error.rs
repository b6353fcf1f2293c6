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
        /// How many dimensions follow it in that result (`0`: the last). Shapes broadcast
        /// aligned at their last dimension, so this names the failing dimension in every
        /// operand, whatever the rank of the shapes compared when it failed.
        from_end: usize,
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
    /// A dimension or index out of range, or a reduction over an empty dimension
    /// (PyTorch's `IndexError`; golden category `index`).
    Index {
        /// Description, PyTorch's wording where it has one.
        message: String,
    },
    /// Invalid sizes: a numel mismatch, two `-1`, a negative size, an in-place output whose
    /// shape is not the broadcast shape (golden category `shape`).
    Shape {
        /// Description, PyTorch's wording where it has one.
        message: String,
    },
    /// A `view` whose sizes are not compatible with the input's strides (golden category
    /// `view`).
    View {
        /// Description, PyTorch's wording where it has one.
        message: String,
    },
    /// Expanding a dimension that is not of size 1, or to too few sizes (golden category
    /// `expand`).
    Expand {
        /// Description, PyTorch's wording where it has one.
        message: String,
    },
    /// An op not defined for a dtype, or a result type that cannot be cast to the given
    /// output's dtype (golden category `dtype`).
    DType {
        /// Description, PyTorch's wording where it has one.
        message: String,
    },
    /// An argument value PyTorch rejects with a plain `RuntimeError` (golden category
    /// `error`): a Python number that does not fit the tensor's dtype, `min_val` above
    /// `max_val`, an unknown `approximate`, a clamp without bounds.
    Argument {
        /// Description, PyTorch's wording where it has one.
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
    /// Builds an [`Error::Argument`].
    pub fn argument(message: impl Into<String>) -> Self {
        Error::Argument {
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

/// "a broadcast error", "an index error", "an error (category `error`)": a category in a
/// sentence, with its article.
pub fn a_category_error(category: &str) -> String {
    match category {
        "error" => "an error (category `error`)".to_string(),
        c if c.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {c} error"),
        c => format!("a {c} error"),
    }
}

impl Error {
    /// The golden-file error category (`../shared/golden/README.md`): `broadcast`,
    /// `overlap`, `index`, `shape`, `view`, `expand`, `dtype`, or `error` for any other
    /// rejection.
    pub fn category(&self) -> &'static str {
        match self {
            Error::Broadcast { .. } => "broadcast",
            Error::MemoryOverlap { .. } => "overlap",
            Error::Index { .. } => "index",
            Error::Shape { .. } => "shape",
            Error::View { .. } => "view",
            Error::Expand { .. } => "expand",
            Error::DType { .. } => "dtype",
            _ => "error",
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
            Error::Broadcast {
                size_a,
                size_b,
                dim,
                ..
            } => write!(
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
            Error::Index { message }
            | Error::Shape { message }
            | Error::View { message }
            | Error::Expand { message }
            | Error::DType { message }
            | Error::Argument { message } => write!(f, "{message}"),
            Error::Io { path, message } => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod category_tests {
    use super::*;

    #[test]
    fn categories_read_with_their_article() {
        assert_eq!(a_category_error("broadcast"), "a broadcast error");
        assert_eq!(a_category_error("index"), "an index error");
        assert_eq!(a_category_error("error"), "an error (category `error`)");
    }
}
