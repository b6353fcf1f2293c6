//! Strided tensors over shared storage, and zero-copy views.
//!
//! A [`Tensor<T>`] is PyTorch's strided layout over a reference-counted [`Storage<T>`]:
//! sizes, strides (in elements) and a storage offset. Views (`permute`, `transpose`, `t`,
//! `slice` with a step, `narrow`, `select`, `unsqueeze`, `squeeze`, `expand`, `movedim`,
//! `diagonal`, `unfold`, `unflatten`, `view`, `as_strided`) copy nothing; they share the
//! storage and only change the layout. `reshape` and `flatten` copy exactly when PyTorch
//! does. The layouts come from [`crate::view`] at `i64`, the same code that traces symbolic
//! views, so eager and symbolic views cannot drift apart; the tensor adds the bounds check
//! against its real storage.
//!
//! # Why the checks are where they are
//! * **Bounds.** Every constructor and view validates, with checked `i64` arithmetic, that the
//!   largest addressed element `offset + Σ (size-1)·stride` lies inside the storage (an empty
//!   view addresses nothing and is always valid). This is the invariant every `unsafe` element
//!   access in the crate relies on; the kernels re-validate the plans they execute, because a
//!   plan can come from elsewhere (the `iter` build, a deserialized artifact).
//! * **Negative strides are rejected** (as in PyTorch): they would buy reversed views at the
//!   cost of a two-sided extent everywhere. The kernels' plan validation still handles negative
//!   byte strides correctly (min and max over the strided extent), so a plan that iterates
//!   backwards is safe.
//! * **Writes through shared storage.** Views alias, so `&mut Tensor` proves nothing about
//!   exclusive access. Instead each [`Storage`] carries a cross-thread borrow flag (many readers
//!   or one writer); a kernel borrows every storage it touches for the duration of the call —
//!   exclusively when it writes to it — and a conflicting access fails with
//!   [`crate::Error::MemoryOverlap`] rather than racing. Within one call the kernel checks that
//!   outputs have no internal overlap and that an output sharing a storage with an input is
//!   either disjoint from it or laid out identically (elementwise in-place is fine, a shifted
//!   view is not). Element pointers are raw (`*mut T` into the owned block), never long-lived
//!   references, so aliasing views never create overlapping `&mut`.
//! * **Allocated outputs** come from a pool of large blocks: a fresh 64 MiB buffer costs 16k
//!   page faults, which would double a bandwidth-bound op. Pooled memory is uninitialized; only
//!   kernels that write every element of a dense output may use it (crate-private).

mod dense;
mod element;
mod format;
#[cfg(feature = "ndarray")]
mod nd;
mod storage;

pub use crate::layout::MemoryFormat;
pub use dense::{Dims, Tensor};
pub use element::{DType, Element, FloatElement, MathElement, NumElement, Scalar};
#[cfg(feature = "ndarray")]
pub use nd::{NdView, NdViewMut};
pub use storage::{set_pool_limit, ReadGuard, Storage, WriteGuard};

pub(crate) use storage::{borrow_all, RawStorage};

/// Sufficient test that a layout has no internal overlap.
pub(crate) fn layout_is_non_overlapping(sizes: &[i64], strides: &[i64]) -> bool {
    format::is_non_overlapping(sizes, strides)
}

/// `empty_like` strides under `preserve_format`.
pub(crate) fn preserve_strides(sizes: &[i64], strides: &[i64]) -> Vec<i64> {
    format::preserve_strides(sizes, strides)
}

/// Dense strides of a memory format (error if the rank does not fit the format).
pub(crate) fn dense_strides_for(sizes: &[i64], f: MemoryFormat) -> crate::Result<Vec<i64>> {
    dense::dense_strides(sizes, f)
}
