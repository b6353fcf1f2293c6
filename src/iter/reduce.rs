//! The reduction path of the build: the result's layout, and the iteration plan a reduction
//! kernel walks.
//!
//! PyTorch allocates a reduction's result first (contiguous, with the reduced dimensions
//! kept as size 1 or removed), then views it back over the input's shape with stride 0 on
//! the reduced dimensions and hands that view to TensorIterator as output 0 with
//! `is_reduction` set. The build then skips the fast setup, and `reorder_dimensions` moves
//! every dimension on which the output has stride 0 innermost (the output is consulted first
//! and decides every reduced/kept pair), so the kernel sees `[reduced dims..., kept dims...]`
//! in iteration order; coalescing then merges runs of reduced dims (and runs of kept dims)
//! that are contiguous in both operands. A reduced and a kept dimension never merge: the
//! output's stride 0 cannot chain into a non-zero stride.

use super::config::{IterOptions, TensorIteratorConfig, TensorSpec};
use super::plan::Plan;
use crate::error::Result;
use crate::int::Int;
use crate::layout;

/// The result of [`reduction_plan`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReductionPlan<I> {
    /// Sizes of the result (reduced dims kept as 1 with `keepdim`, removed otherwise).
    pub sizes: Vec<I>,
    /// Strides (elements) of the result: contiguous, as PyTorch's `resize_reduction` makes it.
    pub strides: Vec<I>,
    /// The iteration plan: operand 0 is the result viewed over the input's shape (byte stride
    /// 0 on reduced dims), operand 1 the input. Reduced dims come first (innermost).
    pub plan: Plan<I>,
}

/// Builds a reduction of `input` over the dimensions where `mask` is true (one entry per
/// input dimension), for a result of `out_element_size`-byte elements.
///
/// ```
/// use symstride::iter::{reduction_plan, TensorSpec};
/// // Sum a contiguous [4, 6] over dim 0: the reduced dim (input stride 24 bytes) is moved
/// // innermost; the result is [6] with stride 1.
/// let r = reduction_plan(&TensorSpec::new(vec![4i64, 6], vec![6, 1], 4), &[true, false], false, 4)
///     .unwrap();
/// assert_eq!((r.sizes, r.strides), (vec![6], vec![1]));
/// assert_eq!(r.plan.shape, vec![4, 6]);
/// assert_eq!(r.plan.operands[0].byte_strides, vec![0, 4]);
/// assert_eq!(r.plan.operands[1].byte_strides, vec![24, 4]);
/// ```
pub fn reduction_plan<I: Int>(
    input: &TensorSpec<I>,
    mask: &[bool],
    keepdim: bool,
    out_element_size: usize,
) -> Result<ReductionPlan<I>> {
    let nd = input.ndim();
    if mask.len() != nd {
        return Err(crate::Error::invalid(format!(
            "reduction mask has {} entries for a {nd}-d input",
            mask.len()
        )));
    }
    let keep_sizes: Vec<I> = input
        .sizes
        .iter()
        .zip(mask)
        .map(|(s, &m)| if m { I::from_i64(1) } else { s.clone() })
        .collect();
    let keep_strides = layout::contiguous_strides(&keep_sizes);
    let viewed: Vec<I> = keep_strides
        .iter()
        .zip(mask)
        .map(|(s, &m)| if m { I::from_i64(0) } else { s.clone() })
        .collect();
    let (sizes, strides) = if keepdim {
        (keep_sizes, keep_strides)
    } else {
        // Dropping size-1 dims leaves the other contiguous strides unchanged.
        let kept = |v: Vec<I>| -> Vec<I> {
            v.into_iter()
                .zip(mask)
                .filter(|(_, &m)| !m)
                .map(|(x, _)| x)
                .collect()
        };
        (kept(keep_sizes), kept(keep_strides))
    };
    let plan = TensorIteratorConfig::new()
        .options(IterOptions {
            is_reduction: true,
            check_mem_overlap: false,
            resize_outputs: false,
            ..Default::default()
        })
        .add_output(TensorSpec::new(
            input.sizes.clone(),
            viewed,
            out_element_size,
        ))
        .add_input(input.clone())
        .build()?;
    Ok(ReductionPlan {
        sizes,
        strides,
        plan,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(sizes: &[i64], strides: &[i64], mask: &[bool], keepdim: bool) -> ReductionPlan<i64> {
        reduction_plan(
            &TensorSpec::new(sizes.to_vec(), strides.to_vec(), 4),
            mask,
            keepdim,
            4,
        )
        .unwrap()
    }

    #[test]
    fn reduced_dims_go_innermost_and_coalesce() {
        // Channels-last [2, 3, 4, 5] over (2, 3): H and W merge into one reduced dim of 20
        // with the input's stride C = 3 elements; C and N are kept.
        let r = red(
            &[2, 3, 4, 5],
            &[60, 1, 15, 3],
            &[false, false, true, true],
            false,
        );
        assert_eq!(r.sizes, vec![2, 3]);
        assert_eq!(r.strides, vec![3, 1]);
        assert_eq!(r.plan.shape, vec![20, 3, 2]);
        assert_eq!(r.plan.operands[0].byte_strides, vec![0, 4, 12]);
        assert_eq!(r.plan.operands[1].byte_strides, vec![12, 4, 240]);
    }

    #[test]
    fn keepdim_and_full_reductions() {
        let r = red(&[3, 1, 5], &[5, 5, 1], &[true, true, true], true);
        assert_eq!((r.sizes, r.strides), (vec![1, 1, 1], vec![1, 1, 1]));
        assert_eq!(r.plan.shape, vec![15]);
        let r = red(&[3, 4], &[1, 3], &[false, true], true);
        assert_eq!((r.sizes, r.strides), (vec![3, 1], vec![1, 1]));
        // The reduced dim (input stride 3) is innermost even though dim 0 has stride 1.
        assert_eq!(r.plan.shape, vec![4, 3]);
        assert_eq!(r.plan.operands[1].byte_strides, vec![12, 4]);
        // Nothing reduced: plain elementwise layout over the input.
        let r = red(&[3, 4], &[4, 1], &[false, false], false);
        assert_eq!((r.sizes, r.strides), (vec![3, 4], vec![4, 1]));
        assert_eq!(r.plan.shape, vec![12]);
    }
}
