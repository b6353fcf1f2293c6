//! The TensorIterator build: from operands (sizes, strides, offsets) to an iteration plan.
//!
//! (Build steps under construction; the plan type below is the contract between the
//! build and the kernels.)

mod plan;

pub use plan::{OperandPlan, Plan};
