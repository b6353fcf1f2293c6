//! The elementwise op set: one table ([`TABLE`]) that every layer reads.
//!
//! # Why a table
//! An op used to be defined in four places (the spec parser, the golden reader, the kernels,
//! the ahead-of-time executor and its reference). A row of [`TABLE`] now says everything about
//! an op once: its name and arity, how its dtypes are decided ([`Promotion`]), where Python
//! numbers are allowed, whether it has `out=` and in-place forms, PyTorch's checks on input
//! dtypes, and its naive reference. Adding an op is one row plus one element function.
//!
//! # An op call
//! [`plan_op`] plans `op(args)` into a [`Dest`] the way PyTorch's op does, in PyTorch's order:
//! the op's own checks (`neg` of bool, `sub` of bools, `relu` of bool; `where`'s result type,
//! `out` dtype and condition checks, after the conversions `where` makes), then the
//! TensorIterator build (`compute_mem_overlaps`, `compute_shape`, `mark_resize_outputs`,
//! `compute_types`, the layout steps), then the kernel's dtype support (`abs`, `addcmul`,
//! `clamp` have no bool kernel). A Python integer outside an integral computation dtype is
//! wrapped into it, as PyTorch does (`uint8 + 1000` adds 232, `uint8 < 1048576` compares
//! with 0); only `where`, which converts its scalar with a check, refuses one.
//! Errors carry golden categories ([`crate::Error::category`]).
//!
//! `where` is the one op that converts operands before its build: values of another dtype
//! than the result type, Python numbers and a `uint8` condition are copies in PyTorch
//! (`t.to(dtype)`, with `empty_like` strides), which changes what the output's layout follows;
//! [`OpPlan::inputs`] holds exactly what the iterator saw.
//!
//! # Execution
//! [`call`] runs a planned call on [`AnyTensor`]s: converted inputs are materialized with the
//! layout the plan assumed (PyTorch's CPU path converts inputs the same way), and the kernel
//! (one typed map per op and computation dtype, `kernels.rs`, over `kernel::execute_map*`)
//! writes the output, or a temporary copied into an output of another dtype. The kernels
//! validate every plan against the real storages before touching memory.

mod call;
mod exec;
mod kernels;
mod named;
mod reference;
mod registry;

pub use call::{
    check_scalar_fits, plan_op, plan_op_reads, scalar_dtype, Arg, Dest, Numbers, OpPlan,
};
pub use exec::{call, run_kernel_f32, AnyElement, AnyTensor, Input, Output};
pub(crate) use exec::{call_into, call_planned, each, with_dtype, with_float};
pub use reference::narrow;
pub(crate) use registry::elementwise_ops;
pub use named::{
    is_elementwise, keywords, kwarg_from_json, resolve, scalar_from_json, Kwarg, Resolved, Slot,
    NAME_KEYWORDS,
};
pub use registry::{Kernels, Op, OpDef, Param, Promotion, TABLE};
