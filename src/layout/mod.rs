//! PyTorch's layout semantics, written once over [`Int`](crate::Int).
//!
//! Everything here takes sizes and strides in elements, in PyTorch's dimension order, and
//! is generic over the integer type: with `i64` it is eager PyTorch (and checked against
//! PyTorch's own answers in `../shared/golden`); with `SymInt` the same code traces, and
//! each decision it takes records a guard with a readable reason.
//!
//! # Size-0 and size-1 dimensions are ambiguous
//!
//! A dimension of size 1 is never stepped over, so its stride is meaningless; a tensor
//! with a size-0 dimension has no elements, so *all* its strides are. PyTorch's predicates
//! ignore those strides, and that makes layouts ambiguous: `[2, 4, 1, 1]` with strides
//! `[4, 1, 1, 1]` is both contiguous and channels-last contiguous; an empty tensor is
//! contiguous whatever its strides. The rules are not uniform, and are reproduced here
//! exactly as c10 has them:
//!
//! * [`contiguous_strides`] uses `max(size, 1)` products, while [`channels_last_strides_2d`]
//!   and [`channels_last_strides_3d`] use plain products (a size-0 dimension zeroes every
//!   slower stride).
//! * [`is_contiguous`] short-circuits on empty tensors; the channels-last predicates do not.
//! * [`is_strides_like_channels_last_2d`] (which drives [`suggest_memory_format`]) breaks
//!   ties towards contiguous: a zero C stride, any size-0 dimension, or an `N111`-like
//!   tensor whose N and C strides coincide are not channels-last.
//!   [`StrideMatch::Exact`] additionally requires the canonical strides on size-0/1
//!   dimensions.
//! * [`is_non_overlapping_and_dense`] is the C++ TensorImpl flag (contiguous, or
//!   channels-last contiguous for its rank, or c10's sort-based check that ignores size-0/1
//!   dimensions); it differs from the Python reference in `torch._prims_common` on size-1
//!   dimensions with stride 0 and on rank 1.
//!
//! For symbolic sizes the ambiguity is what makes tracing expensive: whether `s0 == 1`
//! changes which strides matter, so a branchy predicate guards on it and specializes the
//! trace to one side.
//!
//! # Why branch-free forms exist
//!
//! The branchy predicates ([`is_contiguous`] and friends) follow c10 step by step, short-
//! circuit, and cost nothing on the concrete path. Symbolically, every step is a guard:
//! `is_contiguous` of a `[s0, s1, s2]` tensor guards on `s0*s1*s2 == 0`, on each `s_i == 1`
//! and on each stride comparison, so the resulting plan only admits shapes that take the
//! same path. The branch-free forms ([`contiguity_expr`], [`non_overlapping_and_dense_expr`],
//! ...) return the whole condition as one `I::Bool` and record nothing: the simplifier can
//! prove it (contiguous strides of symbolic sizes are contiguous for *every* binding, size-1
//! or not), a plan can test it at run time, or a caller can branch on it once. The dense
//! check has a sort in c10 (a guard per comparison); its branch-free form is a quadratic
//! sort-free characterisation, stated and proven on [`non_overlapping_and_dense_expr`].
//! The `*_or_false` variants answer "definitely true" without ever failing on unbacked
//! symbols, like PyTorch's `is_contiguous_or_false` family.
//!
//! # Validation
//!
//! Public functions validate their input first ([`check_layout`]): negative sizes and a
//! rank mismatch between sizes and strides are [`Error::InvalidLayout`](crate::Error), and
//! sizes/strides whose products could overflow i64 are [`Error::Overflow`](crate::Error).
//! After that the algorithms use plain arithmetic.

mod branch_free;
mod broadcast;
mod contiguity;
mod dense;
mod strides;
mod validate;

pub use branch_free::{
    channels_last_contiguity_expr_2d, channels_last_contiguity_expr_3d, contiguity_expr,
    is_channels_last_contiguous_2d_or_false, is_channels_last_contiguous_3d_or_false,
    is_contiguous_or_false, is_non_overlapping_and_dense_or_false, non_overlapping_and_dense_expr,
};
pub use broadcast::{broadcast_strides, infer_size};
pub use contiguity::{
    is_channels_last_contiguous_2d, is_channels_last_contiguous_3d, is_contiguous, is_contiguous_in,
    is_non_overlapping_and_dense, is_strides_like_channels_last_2d,
    is_strides_like_channels_last_3d, suggest_memory_format, StrideMatch,
};
pub use dense::{empty_like_strides, infer_dense_strides};
pub use strides::{
    channels_last_strides_2d, channels_last_strides_3d, contiguous_strides, numel,
    strides_for_format, try_contiguous_strides, try_numel, MemoryFormat,
};
pub use validate::{check_layout, check_sizes};
