//! The TensorIterator build: from operands (sizes, strides, offsets) to an iteration [`Plan`].
//!
//! This is PyTorch's `TensorIteratorBase::build` for elementwise operations, written once over
//! [`Int`](crate::Int): with `i64` it is the eager computation, with `SymInt` it is a trace
//! that records, for each decision, a guard whose reason names the step, the operand and the
//! dimension (`"compute_perm: input 0 dims 2,3: byte stride s4 < s7"`). A tensor is named
//! `output k` or `input k` (0-based within its kind) in every reason and error message, here
//! and in the `conformance` CLI; plan operands (`Plan::operands`, the artifact's `operands`)
//! are numbered outputs first, then inputs, as in PyTorch.
//!
//! # Steps
//!
//! [`TensorIteratorConfig::build`] runs, in PyTorch's order:
//!
//! 1. **validation** (on hints, no guards): rank ≤ 64, non-negative sizes/strides/offsets,
//!    every byte offset and `size * stride` product within i64, and every addressable element
//!    inside the operand's storage when one is given.
//! 2. **`mark_outputs`**: an output that is the same tensor as an input (same
//!    [`TensorSpec::tensor_id`]; without ids: the very same view, same storage id,
//!    and offset, sizes, strides equal without needing a guard) is read-write (in-place) and
//!    will never be resized.
//! 3. **`compute_mem_overlaps`** (option `check_mem_overlap`): a non-empty output must not
//!    overlap itself (stride 0 on a dimension of size > 1), nor partially overlap an input in
//!    the same storage; full aliasing (in-place) is fine. Undecidable cases are let through,
//!    as in PyTorch (details in the `overlap` module).
//! 4. **`compute_shape`**: broadcast all defined operands (outputs excluded when
//!    `resize_outputs`), remembering whether they all had one shape.
//! 5. **`mark_resize_outputs`**: a given output of another shape is resized, or rejected
//!    ([`crate::Error::Shape`]) when it is also an input (in place).
//! 6. **`compute_types`** (only with a [`TypeConfig`]): the common dtype (PyTorch's
//!    `result_type`), dtype errors, the dtype (hence element size) of allocated outputs, and
//!    inputs of another dtype replaced by their `to(common)` copies, whose `empty_like`
//!    strides are what the following steps see (details in the `types` module).
//! 7. **`fast_set_up`**: if all operands have one shape and are all contiguous, all
//!    channels-last, or all non-overlapping-and-dense with *equal* strides, outputs take that
//!    layout and the iteration collapses to one dimension of `numel` elements.
//! 8. Otherwise the general path:
//!    * **`compute_strides`**: byte strides over the broadcast dims, 0 where broadcast;
//!    * **`reorder_dimensions`** / **`compute_perm`**: sort dimensions by stride (below);
//!    * **`allocate_or_resize_outputs`**: outputs to allocate get dense strides in the
//!      permuted order, mapped back with `invert_perm`;
//!    * **`coalesce_dimensions`**: merge adjacent dims that are size 1 or contiguous with each
//!      other in every operand.
//!
//! # Why outputs are allocated from the permutation
//!
//! The permutation orders dimensions from fastest- to slowest-moving in memory as the inputs
//! see it. Allocating the output densely *in that order* gives it the inputs' memory layout: a
//! channels-last or transposed input yields a channels-last or transposed output, broadcast
//! inputs don't disturb the layout of the full-size one, and the kernel then walks the output
//! and the inputs linearly at the same time (good locality, and the most coalescing). The
//! result is expressed in user order by inverting the permutation. A plain reversal (the
//! row-major order) is allocated as `empty(sizes)`, i.e. contiguous strides.
//!
//! # Ambiguity
//!
//! The comparator `should_swap(d0, d1)` asks the operands in order (outputs first, skipping
//! outputs still to be allocated or resized): the first operand whose strides on `d0` and `d1`
//! are both non-zero and differ decides; equal strides are broken by size when `d0` is larger;
//! otherwise the next operand is asked. If nobody decides the comparison is *ambiguous* (0),
//! which is not a total order, so the sort is an insertion sort that moves past ambiguous
//! elements without swapping or stopping. Consequences worth knowing:
//!
//! * the left (first) operand wins: `add(channels_last, contiguous)` is channels-last and
//!   `add(contiguous, channels_last)` is contiguous;
//! * size-1 dimensions keep their stride ("effective strides") and take part, so an `N,C,1,1`
//!   tensor with channels-last strides propagates channels-last, while with a stride that ties
//!   it falls back to the initial reversed order;
//! * the fast path does not run this sort: with several ambiguous but contiguous inputs the
//!   output is contiguous even where the sort would have said otherwise (PyTorch's NOTE
//!   [Computing output strides]).
//!
//! # Guards
//!
//! Conditions that feed one outcome are guarded as one: "either stride is 0" is a single
//! guard, so is "sizes equal the broadcast shape"; a symbolic build therefore records only what
//! its decisions needed, and any binding that satisfies the guards yields, evaluated with
//! [`Plan::try_map`], exactly the plan the concrete build computes for that binding.

mod build;
mod config;
mod elementwise;
mod overlap;
mod plan;
mod reduce;
mod types;
mod validate;

pub use config::{IterOptions, OutputSpec, Storage, TensorIteratorConfig, TensorSpec};
pub use elementwise::{elementwise_output, FLOAT32_SIZE};
pub use plan::{OperandPlan, Plan, PlanInt};
pub use reduce::{reduction_plan, ReductionPlan};
pub use types::{result_type, torch_name, TypeConfig, TypeOperand, Types};
pub use validate::MAX_DIMS;

/// `[a, b, c]` for error messages and guard reasons.
fn fmt_dims<I: std::fmt::Display>(v: &[I]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(", "))
}
