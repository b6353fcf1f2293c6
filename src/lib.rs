//! # symstride
//!
//! A symbolic dynamic-shape stride engine: PyTorch's layout reasoning (contiguity,
//! channels-last, non-overlapping-and-dense, broadcasting, TensorIterator's stride
//! permutation and coalescing) written once over an integer abstraction ([`Int`]) that is
//! either a concrete `i64` or a symbolic [`SymInt`](sym::SymInt). Symbolic runs record the guards each
//! decision needed; guards specialize a plan to concrete shapes that drives real kernels.
//!
//! The crate is organised as small private modules behind flat re-exports:
//!
//! * [`sym`]: expressions, simplification (egg), `ShapeEnv`, `SymInt`/`SymBool`, guards.
//! * [`layout`]: strides, contiguity, memory formats, broadcasting (concrete and symbolic).
//! * [`iter`]: the TensorIterator build producing an iteration plan.
//! * [`tensor`] and [`kernel`]: strided tensors and the loops that execute plans.
//! * [`op`]: the elementwise op table (dtypes, promotion, `out=`, in-place, references).
//! * [`aot`]: ahead-of-time specializations, artifacts and dispatch.
//! * [`view`]: PyTorch's movement ops (permute, slice, view/reshape, ...) over [`Int`].
#![warn(missing_docs)]

mod dtype;
mod error;
mod int;

pub mod aot;
pub mod golden;
pub mod iter;
pub mod kernel;
pub mod layout;
pub mod op;
pub mod program;
pub mod reduce;
pub mod structured;
pub mod sym;
pub mod tensor;
#[doc(hidden)]
pub mod testing;
pub mod view;

pub use dtype::{can_cast, promote_types, Category, DType};
pub use error::{a_category_error, Error, Result};
pub use int::{Bool, Int};

/// The README's Rust examples, compiled and run as doctests so the README stays true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
