//! The iteration plan: what the build decides and the kernels execute.

use crate::int::Int;

/// Per-operand part of a [`Plan`].
#[derive(Clone, Debug, PartialEq)]
pub struct OperandPlan<I> {
    /// Strides in **bytes** along each iteration dimension (same length as [`Plan::shape`]).
    pub stride_bytes: Vec<I>,
    /// Storage offset of the operand's first element, in elements.
    pub offset: I,
    /// Element size in bytes.
    pub element_size: usize,
    /// True for outputs (they come first in [`Plan::operands`]).
    pub is_output: bool,
}

/// The result of a TensorIterator build.
///
/// Dimensions are in **iteration order**: dimension 0 is the fastest-moving (innermost), as in
/// PyTorch after `reorder_dimensions`, and adjacent dimensions have been coalesced where every
/// operand allowed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan<I> {
    /// Iteration shape after reordering and coalescing (innermost first).
    pub shape: Vec<I>,
    /// Operands: outputs first, then inputs.
    pub operands: Vec<OperandPlan<I>>,
    /// Number of outputs at the front of `operands`.
    pub num_outputs: usize,
    /// The broadcast shape in the user's dimension order (the outputs' sizes).
    pub broadcast_shape: Vec<I>,
    /// Strides (in elements) of each output in the user's dimension order, as allocated or given.
    pub output_strides: Vec<Vec<I>>,
    /// The permutation applied: `perm[i]` is the user dimension placed at iteration position `i`
    /// (before coalescing). Identity for fast setup.
    pub perm: Vec<usize>,
}

impl<I: Int> Plan<I> {
    /// Number of iteration dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
}
