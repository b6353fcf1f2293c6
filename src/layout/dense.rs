//! Dense strides inferred from an existing layout: what `empty_like` allocates.

use super::contiguity::is_non_overlapping_and_dense;
use super::validate::check_layout;
use crate::{Bool, Int, Result};

/// ATen's `infer_dense_strides`: dense strides that follow the stride order of the given
/// layout, sorted as TensorIterator sorts a single operand (stable insertion sort from the
/// innermost dimension; stride-0 dimensions compare as ambiguous and stay in place; equal
/// strides put the smaller size first). Size-0/1 dimensions do not grow the stride.
///
/// This is `empty_like`'s answer for a tensor that is not non-overlapping and dense.
pub fn infer_dense_strides<I: Int>(sizes: &[I], strides: &[I]) -> Result<Vec<I>> {
    check_layout("input", sizes, strides)?;
    let n = sizes.len();
    match n {
        0 => return Ok(Vec::new()),
        1 => return Ok(vec![I::from_i64(1)]),
        _ => {}
    }
    // perm[0] is the innermost (fastest) dimension; start from n-1, ..., 0.
    let mut perm: Vec<usize> = (0..n).rev().collect();
    // Some(true): a goes after b; Some(false): a goes before b; None: ambiguous.
    let after = |a: usize, b: usize| -> Result<Option<bool>> {
        let (sa, sb) = (&strides[a], &strides[b]);
        let zero = sa.eq_i(0).or(&sb.eq_i(0));
        if zero.guard(|| format!("infer_dense_strides: stride[{a}] == 0 or stride[{b}] == 0"))? {
            return Ok(None);
        }
        if sa
            .sym_lt(sb)
            .guard(|| format!("infer_dense_strides: stride[{a}] < stride[{b}]"))?
        {
            return Ok(Some(false));
        }
        if sa
            .sym_gt(sb)
            .guard(|| format!("infer_dense_strides: stride[{a}] > stride[{b}]"))?
        {
            return Ok(Some(true));
        }
        if sizes[a]
            .sym_gt(&sizes[b])
            .guard(|| format!("infer_dense_strides: size[{a}] > size[{b}] (equal strides)"))?
        {
            return Ok(Some(true));
        }
        Ok(None)
    };
    for i in 1..n {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match after(perm[d0], perm[d1])? {
                Some(true) => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                Some(false) => break,
                None => {}
            }
        }
    }
    let mut out = vec![I::from_i64(0); n];
    let mut cur = I::from_i64(1);
    for &d in &perm {
        out[d] = cur.clone();
        // A size-0 dimension is treated as 1: the tensor has no elements anyway.
        cur = cur * sizes[d].max(&I::from_i64(1));
    }
    Ok(out)
}

/// Strides of `torch.empty_like(t)` (preserve format): the tensor's own strides when it
/// is non-overlapping and dense, otherwise [`infer_dense_strides`].
pub fn empty_like_strides<I: Int>(sizes: &[I], strides: &[I]) -> Result<Vec<I>> {
    if is_non_overlapping_and_dense(sizes, strides)? {
        Ok(strides.to_vec())
    } else {
        infer_dense_strides(sizes, strides)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_strides_stay_in_place() {
        // ATen's own example: (6,5,4,3,2)/(6,0,120,0,1) sorts to perm (4,3,0,1,2).
        assert_eq!(
            infer_dense_strides(&[6i64, 5, 4, 3, 2], &[6, 0, 120, 0, 1]).unwrap(),
            vec![6, 36, 180, 2, 1]
        );
    }

    #[test]
    fn empty_like_keeps_dense_strides() {
        assert_eq!(empty_like_strides(&[3i64, 4], &[1, 3]).unwrap(), vec![1, 3]);
        assert_eq!(empty_like_strides(&[3i64, 4], &[2, 6]).unwrap(), vec![1, 3]);
        assert_eq!(empty_like_strides(&[3i64, 4], &[0, 0]).unwrap(), vec![4, 1]);
    }
}
