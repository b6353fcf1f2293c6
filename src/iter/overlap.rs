//! `compute_mem_overlaps`: outputs must not overlap themselves, nor partially overlap an input.
//!
//! Exact overlap detection of two strided views is a bounded subset-sum problem, so PyTorch
//! (and this module) only rejects cases that *provably* overlap, and lets "too hard" cases
//! through:
//!
//! * **internal overlap** of an output: a non-empty output with a dimension of size > 1 and
//!   stride 0 (PyTorch's `has_internal_overlap`; an empty tensor is contiguous, hence
//!   non-overlapping and dense, and never overlaps). Anything else is "too hard" and allowed,
//!   as in PyTorch: the golden cases include outputs with two equal strides (a sliding
//!   window) that PyTorch writes without complaint. The kernels re-check every plan they
//!   execute exactly (`kernel::exec`), so this leniency is about *which* calls are legal, never
//!   about memory safety.
//! * **partial overlap** of an output and an input (PyTorch's `get_overlap_status`): only when
//!   both live in the same storage, are non-empty and non-overlapping-and-dense; then equal byte
//!   ranges with equal strides is *full* aliasing (an in-place op, allowed), equal ranges with
//!   different strides or intersecting ranges is a partial overlap (rejected).

use super::build::{decide_layout, Predicate};
use super::config::TensorSpec;
use crate::error::{Error, Result};
use crate::int::{Bool, Int};
use std::fmt::Display;

const CLONE_HINT: &str = "Please clone() the tensor before performing the operation.";

/// Rejects an output (named `name`) whose elements provably share memory.
pub(super) fn assert_no_internal_overlap<I: Int>(
    name: impl Display,
    t: &TensorSpec<I>,
) -> Result<()> {
    let n = t.ndim();
    let err = |what: String| {
        Error::MemoryOverlap {
        message: format!(
            "{name} overlaps itself: {what}; more than one element of the written-to tensor refers to a single memory location. {CLONE_HINT}"
        ),
    }
    };
    if n == 0
        || any_empty(&t.sizes)
            .guard(|| format!("compute_mem_overlaps: {name} is empty (no internal overlap)"))?
    {
        return Ok(());
    }
    for d in 0..n {
        let (size, stride) = (&t.sizes[d], &t.strides[d]);
        if size.gt_i1().and(&stride.eq_i(0)).guard(|| {
            format!("compute_mem_overlaps: {name} dim {d}: size {size} > 1 with stride {stride} == 0 (internal overlap)")
        })? {
            return Err(err(format!("dim {d} has size {size} and stride 0")));
        }
    }
    Ok(())
}

fn numel<I: Int>(sizes: &[I]) -> I {
    sizes.iter().fold(I::from_i64(1), |acc, s| acc * s.clone())
}

fn any_empty<I: Int>(sizes: &[I]) -> I::Bool {
    sizes
        .iter()
        .fold(I::Bool::from_bool(false), |acc, s| acc.or(&s.eq_i(0)))
}

/// Length-and-elementwise equality of two integer lists, as one (possibly symbolic) condition.
pub(super) fn all_equal<I: Int>(a: &[I], b: &[I]) -> I::Bool {
    if a.len() != b.len() {
        return I::Bool::from_bool(false);
    }
    a.iter()
        .zip(b)
        .fold(I::Bool::from_bool(true), |acc, (x, y)| {
            acc.and(&x.sym_eq(y))
        })
}

/// Rejects an output and an input that partially share memory.
pub(super) fn assert_no_partial_overlap<I: Int>(
    (out_name, out): (impl Display, &TensorSpec<I>),
    (in_name, inp): (impl Display, &TensorSpec<I>),
) -> Result<()> {
    let (Some(sa), Some(sb)) = (&out.storage, &inp.storage) else {
        return Ok(());
    };
    if sa.id != sb.id {
        return Ok(());
    }
    let pair = format_args!("{out_name}, {in_name}");
    if any_empty(&out.sizes).or(&any_empty(&inp.sizes)).guard(|| {
        format!("compute_mem_overlaps: {pair}: either tensor is empty (no overlap possible)")
    })? {
        return Ok(());
    }
    let nod = |name: &dyn Display, t: &TensorSpec<I>| {
        decide_layout(t, Predicate::non_overlapping_and_dense(), || {
            format!("compute_mem_overlaps: {name} is non-overlapping and dense")
        })
    };
    if !nod(&out_name, out)? || !nod(&in_name, inp)? {
        return Ok(()); // too hard to decide: allowed, as in PyTorch
    }
    let range = |t: &TensorSpec<I>| {
        let es = I::from_i64(t.element_size as i64);
        let begin = t.storage_offset.clone() * es.clone();
        let end = begin.clone() + numel(&t.sizes) * es;
        (begin, end)
    };
    let (a0, a1) = range(out);
    let (b0, b1) = range(inp);
    let partial = || {
        Error::MemoryOverlap {
        message: format!(
            "{out_name} and {in_name} share storage {} and partially overlap (bytes [{a0}, {a1}) and [{b0}, {b1})): some elements of the input tensor and the written-to tensor refer to a single memory location. {CLONE_HINT}",
            sa.id
        ),
    }
    };
    if a0.sym_eq(&b0).and(&a1.sym_eq(&b1)).guard(|| {
        format!("compute_mem_overlaps: {pair}: same byte range [{a0}, {a1}) vs [{b0}, {b1})")
    })? {
        if all_equal(&out.strides, &inp.strides).guard(|| {
            format!("compute_mem_overlaps: {pair}: same strides (full alias, in-place)")
        })? {
            return Ok(());
        }
        return Err(partial());
    }
    if a0.sym_lt(&b1).and(&b0.sym_lt(&a1)).guard(|| {
        format!("compute_mem_overlaps: {pair}: byte ranges [{a0}, {a1}) and [{b0}, {b1}) intersect")
    })? {
        return Err(partial());
    }
    Ok(())
}

/// `size > 1`, spelled with the trait's constant comparisons.
trait GtOne: Int {
    fn gt_i1(&self) -> Self::Bool {
        self.ge_i(2)
    }
}
impl<I: Int> GtOne for I {}

#[cfg(test)]
mod tests {
    use super::*;

    fn internal(sizes: Vec<i64>, strides: Vec<i64>) -> bool {
        assert_no_internal_overlap("output 0", &TensorSpec::new(sizes, strides, 4)).is_err()
    }

    #[test]
    fn internal_overlap_is_detected_only_when_provable() {
        assert!(internal(vec![2, 3], vec![0, 1]));
        assert!(
            !internal(vec![1, 3], vec![0, 1]),
            "stride 0 on a size-1 dim is harmless"
        );
        assert!(
            !internal(vec![3, 3], vec![1, 1]),
            "a sliding window: too hard for PyTorch, allowed"
        );
        assert!(
            !internal(vec![2, 0], vec![0, 1]),
            "an empty tensor never overlaps"
        );
        assert!(
            !internal(vec![2, 3], vec![2, 1]),
            "overlaps, but only provable by divisibility: allowed, as in PyTorch"
        );
        assert!(
            !internal(vec![2, 2], vec![2, 1]),
            "row step 2 is past the 2 columns"
        );
        assert!(
            !internal(vec![3, 2], vec![2, 3]),
            "interleaved but disjoint: 0,3,2,5,4,7"
        );
        assert!(!internal(vec![2, 3, 4], vec![12, 4, 1]));
        assert!(!internal(vec![], vec![]));
    }

    #[test]
    fn internal_overlap_check_has_no_false_positives() {
        // Soundness: whenever the check fires, two indices really share an address.
        for a in 0..5i64 {
            for b in 0..5i64 {
                for (n0, n1) in [(2i64, 3i64), (3, 3), (4, 2), (1, 4)] {
                    let mut offs: Vec<i64> = (0..n0)
                        .flat_map(|i| (0..n1).map(move |j| i * a + j * b))
                        .collect();
                    offs.sort();
                    let dup = offs.windows(2).any(|w| w[0] == w[1]);
                    if internal(vec![n0, n1], vec![a, b]) {
                        assert!(
                            dup,
                            "false positive for sizes [{n0}, {n1}] strides [{a}, {b}]"
                        );
                    }
                }
            }
        }
    }
}
