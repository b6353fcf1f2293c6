//! The iteration plan: what the build decides and the kernels execute.

use crate::int::Int;

/// Per-operand part of a [`Plan`].
#[derive(Clone, Debug, PartialEq)]
pub struct OperandPlan<I> {
    /// Strides in **bytes** along each iteration dimension (same length as [`Plan::shape`]).
    pub byte_strides: Vec<I>,
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

/// The integers a [`Plan`] can hold whose value may be known statically: `i64`, `SymInt`
/// and the expressions of a traced plan.
pub trait PlanInt: Clone {
    /// The constant `v`.
    fn constant(v: i64) -> Self;
    /// The value, when it is known statically.
    fn known(&self) -> Option<i64>;
}

impl<I: Int> PlanInt for I {
    fn constant(v: i64) -> Self {
        I::from_i64(v)
    }
    fn known(&self) -> Option<i64> {
        self.as_const()
    }
}

impl PlanInt for crate::sym::Expr {
    fn constant(v: i64) -> Self {
        crate::sym::Expr::constant(v)
    }
    fn known(&self) -> Option<i64> {
        self.as_const()
    }
}

impl<I: PlanInt> Plan<I> {
    /// True when the broadcast shape has a size known to be 0 (an `i64` 0, a constant
    /// `SymInt` 0): the outputs are empty and nothing is iterated.
    pub fn is_statically_empty(&self) -> bool {
        self.broadcast_shape.iter().any(|s| s.known() == Some(0))
    }

    /// The canonical form of a plan over an empty broadcast shape: iteration shape `[0]`,
    /// every operand's byte strides `[0]`, identity permutation; the broadcast shape, the
    /// output strides, offsets and element sizes are kept.
    ///
    /// Why: over an empty output no kernel visits an element, so the iteration part of the
    /// plan (coalescing, operand strides, permutation) is unobservable; what a caller sees is
    /// the outputs' sizes and strides, which PyTorch's rules decide (they are computed before
    /// this point). Two zero patterns with the same output layout then have the same plan,
    /// and the ahead-of-time cover needs one specialization for them, not one per pattern.
    pub fn canonicalize_empty(&mut self) {
        self.shape = vec![I::constant(0)];
        for op in &mut self.operands {
            op.byte_strides = vec![I::constant(0)];
        }
        self.perm = (0..self.broadcast_shape.len()).collect();
    }
}

impl<I: crate::Int> Plan<I> {
    /// Coalesces the iteration dimensions again (PyTorch's `coalesce_dimensions`, the
    /// build's own routine): a no-op on a plan the build coalesced; on a plan evaluated where
    /// some of its dimensions have size 1 (or have become contiguous with their neighbour),
    /// it gives what a fresh build gives there. The permutation is kept.
    pub fn coalesce(&mut self) -> crate::error::Result<()> {
        // On the stack for up to four operands: instantiation calls this on every plan.
        let mut strides: smallvec::SmallVec<[&mut Vec<I>; 4]> =
            self.operands.iter_mut().map(|op| &mut op.byte_strides).collect();
        super::build::coalesce(&mut self.shape, &mut strides, &self.perm)
    }
}

impl<I> Plan<I> {
    /// A plan with nothing in it (no dims, no operands): what an error or empty-output
    /// specialization stores, and a buffer to instantiate plans into.
    pub fn nothing() -> Plan<I> {
        Plan {
            shape: Vec::new(),
            operands: Vec::new(),
            num_outputs: 0,
            broadcast_shape: Vec::new(),
            output_strides: Vec::new(),
            perm: Vec::new(),
        }
    }

    /// Applies `f` to every integer of the plan (e.g. evaluating a symbolic plan at a binding:
    /// `plan.try_map(|s| s.eval(&bindings))`), keeping its structure.
    pub fn try_map<J, E>(&self, mut f: impl FnMut(&I) -> Result<J, E>) -> Result<Plan<J>, E> {
        let mut map_all = |v: &[I]| v.iter().map(&mut f).collect::<Result<Vec<J>, E>>();
        let shape = map_all(&self.shape)?;
        let broadcast_shape = map_all(&self.broadcast_shape)?;
        let output_strides = self
            .output_strides
            .iter()
            .map(|s| map_all(s))
            .collect::<Result<Vec<_>, E>>()?;
        let mut operands = Vec::with_capacity(self.operands.len());
        for op in &self.operands {
            operands.push(OperandPlan {
                byte_strides: map_all(&op.byte_strides)?,
                offset: map_all(std::slice::from_ref(&op.offset))?.remove(0),
                element_size: op.element_size,
                is_output: op.is_output,
            });
        }
        Ok(Plan {
            shape,
            operands,
            num_outputs: self.num_outputs,
            broadcast_shape,
            output_strides,
            perm: self.perm.clone(),
        })
    }
}

impl Plan<i64> {
    /// Number of elements visited (product of [`Plan::shape`]).
    ///
    /// Saturates at `i64::MAX` for a (hand-made, invalid) shape whose product overflows;
    /// the kernels reject such plans.
    pub fn numel(&self) -> i64 {
        self.shape.iter().fold(1i64, |n, &s| n.saturating_mul(s))
    }

    /// Moves each operand's storage offset by `shift[i]` elements (operand order): a plan
    /// made for one placement of the tensors in their storages, applied to another (e.g. a
    /// program's plan, made with inputs at offset 0, on inputs that start later).
    pub fn shift_offsets(&mut self, shift: &[i64]) -> crate::Result<()> {
        for (o, s) in self.operands.iter_mut().zip(shift) {
            o.offset = o
                .offset
                .checked_add(*s)
                .ok_or_else(|| crate::Error::overflow("a plan's storage offset"))?;
        }
        Ok(())
    }

    /// Reference walk: calls `f` once per iteration point, innermost dimension fastest, with
    /// the byte offset of every operand (`offset * element_size + sum(index * byte_strides)`),
    /// outputs first. A plain odometer, meant as the oracle kernels are tested against.
    pub fn for_each_byte_offsets(&self, mut f: impl FnMut(&[i64])) {
        if self.shape.iter().any(|&s| s <= 0) {
            return;
        }
        let mut ptrs: Vec<i64> = self
            .operands
            .iter()
            .map(|op| op.offset * op.element_size as i64)
            .collect();
        let mut index = vec![0i64; self.shape.len()];
        loop {
            f(&ptrs);
            let mut d = 0;
            loop {
                if d == self.shape.len() {
                    return;
                }
                index[d] += 1;
                for (p, op) in ptrs.iter_mut().zip(&self.operands) {
                    *p += op.byte_strides[d];
                }
                if index[d] < self.shape[d] {
                    break;
                }
                for (p, op) in ptrs.iter_mut().zip(&self.operands) {
                    *p -= op.byte_strides[d] * self.shape[d];
                }
                index[d] = 0;
                d += 1;
            }
        }
    }
}
