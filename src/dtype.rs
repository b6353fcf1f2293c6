//! Element types as the layers below the tensors see them: names, sizes, categories and
//! PyTorch's pairwise type promotion.
//!
//! # Why this sits below `iter`
//! TensorIterator decides output dtypes (`compute_types`) in the same build that decides
//! strides, and reductions pick their accumulator and result types there too. So the build
//! needs a dtype that is more than an element size; putting [`DType`] here (instead of in
//! `tensor`, a layer above) keeps the layering one-way: `dtype -> iter -> tensor -> kernel`.
//! The `tensor` module re-exports it and ties each Rust element type to its tag.
//!
//! # Promotion
//! PyTorch orders the six dtypes in three categories, `bool < integer < floating`.
//! [`promote_types`] is PyTorch's pairwise table restricted to them: the higher category
//! wins; within integers the wider type wins, and `uint8` with a signed type gives the
//! smallest signed type holding both (`int32` or `int64`, never `uint8`); within floats the
//! wider wins.

use crate::error::{Error, Result};
use std::fmt;

/// The runtime tag of an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`
    Bool,
    /// `u8` (`torch.uint8`)
    U8,
    /// `i32` (`torch.int32`)
    I32,
    /// `i64` (`torch.int64`)
    I64,
    /// `f32` (`torch.float32`)
    F32,
    /// `f64` (`torch.float64`)
    F64,
}

/// PyTorch's type categories, in promotion order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// `bool`
    Bool,
    /// `uint8`, `int32`, `int64`
    Integer,
    /// `float32`, `float64`
    Floating,
}

impl DType {
    /// Every dtype, in promotion order within categories.
    pub const ALL: [DType; 6] = [
        DType::Bool,
        DType::U8,
        DType::I32,
        DType::I64,
        DType::F32,
        DType::F64,
    ];

    /// The name used in golden files, specs and messages (`"float32"`, `"uint8"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// Parses a name as written by [`DType::name`].
    pub fn parse(name: &str) -> Result<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == name)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown dtype `{name}` (expected one of bool, uint8, int32, int64, float32, float64)"
                ))
            })
    }

    /// Size of one element in bytes.
    pub fn element_size(self) -> usize {
        match self {
            DType::Bool | DType::U8 => 1,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    /// The promotion category.
    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::U8 | DType::I32 | DType::I64 => Category::Integer,
            DType::F32 | DType::F64 => Category::Floating,
        }
    }

    /// `float32` or `float64`.
    pub fn is_floating(self) -> bool {
        self.category() == Category::Floating
    }

    /// An integer type (not `bool`).
    pub fn is_integral(self) -> bool {
        self.category() == Category::Integer
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// PyTorch's `promote_types(a, b)` over the six dtypes.
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    match (a, b) {
        _ if a == b => a,
        // uint8 with a signed integer: the smallest signed type holding both.
        (U8, I32) | (I32, U8) => I32,
        (U8, I64) | (I64, U8) => I64,
        // Otherwise the order of the enum is PyTorch's lattice over these six types:
        // a higher category wins, and within a category the wider type.
        _ => a.max(b),
    }
}

/// Whether a value of category `from` may be written to an output of dtype `to` by an op
/// whose computation type is `from` (PyTorch's `canCast`: no floating -> integral, no
/// non-bool -> bool).
pub fn can_cast(from: DType, to: DType) -> bool {
    let (f, t) = (from.category(), to.category());
    !(f == Category::Floating && t != Category::Floating
        || f != Category::Bool && t == Category::Bool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::parse(d.name()).unwrap(), d);
        }
        assert!(DType::parse("half").is_err());
    }

    #[test]
    fn promotion_is_symmetric_and_idempotent() {
        for a in DType::ALL {
            assert_eq!(promote_types(a, a), a);
            for b in DType::ALL {
                assert_eq!(promote_types(a, b), promote_types(b, a));
                let p = promote_types(a, b);
                assert!(p.category() >= a.category() && p.category() >= b.category());
            }
        }
    }

    #[test]
    fn promotion_matches_pytorch_table() {
        // torch.promote_types, measured on PyTorch for these pairs.
        assert_eq!(promote_types(Bool, U8), U8);
        assert_eq!(promote_types(U8, I32), I32);
        assert_eq!(promote_types(U8, I64), I64);
        assert_eq!(promote_types(I32, I64), I64);
        assert_eq!(promote_types(I64, F32), F32);
        assert_eq!(promote_types(U8, F32), F32);
        assert_eq!(promote_types(F32, F64), F64);
        assert_eq!(promote_types(Bool, F64), F64);
    }

    #[test]
    fn casting_rules() {
        assert!(can_cast(I64, F32));
        assert!(!can_cast(F32, I64));
        assert!(!can_cast(I32, Bool));
        assert!(can_cast(Bool, Bool));
        assert!(can_cast(Bool, U8));
        assert!(can_cast(F64, F32));
    }
}
