//! The branchy predicates, written like c10 (`Contiguity.h`, `TensorImpl::refresh_contiguous`,
//! `MemoryFormat.h`): they short-circuit, and on the symbolic path every decision records a
//! guard with its reason.

use super::strides::{numel, strides_in_order, CL2D_ORDER, CL3D_ORDER};
use super::validate::check_layout;
use super::MemoryFormat;
use crate::{Bool, Int, Result};

/// Name used for the tensor in validation errors of the single-tensor predicates.
const TENSOR: &str = "input";

/// `t.is_contiguous()`: row-major up to size-1 dimensions (whose strides are ignored);
/// an empty tensor (numel 0) is contiguous whatever its strides.
pub fn is_contiguous<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    check_layout(TENSOR, sizes, strides)?;
    contiguous_unchecked(sizes, strides)
}

pub(crate) fn contiguous_unchecked<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    if numel(sizes)
        .eq_i(0)
        .guard(|| "is_contiguous: numel == 0 (empty tensor)".into())?
    {
        return Ok(true);
    }
    let mut expected = I::from_i64(1);
    for d in (0..sizes.len()).rev() {
        if sizes[d]
            .eq_i(1)
            .guard(|| format!("is_contiguous: size[{d}] == 1"))?
        {
            continue;
        }
        if strides[d]
            .sym_ne(&expected)
            .guard(|| format!("is_contiguous: stride[{d}] != expected stride {expected}"))?
        {
            return Ok(false);
        }
        expected = expected * sizes[d].clone();
    }
    Ok(true)
}

/// Contiguity in a given dimension order (fastest first), c10's channels-last way: no
/// shortcut for empty tensors; a size-0 dimension multiplies the expected stride by 0.
fn contiguous_in_order<I: Int>(
    sizes: &[I],
    strides: &[I],
    order: &[usize],
    what: &'static str,
) -> Result<bool> {
    let mut expected = I::from_i64(1);
    for &d in order {
        if sizes[d]
            .eq_i(1)
            .guard(|| format!("{what}: size[{d}] == 1"))?
        {
            continue;
        }
        if strides[d]
            .sym_ne(&expected)
            .guard(|| format!("{what}: stride[{d}] != expected stride {expected}"))?
        {
            return Ok(false);
        }
        expected = expected * sizes[d].clone();
    }
    Ok(true)
}

/// `t.is_contiguous(memory_format=torch.channels_last)`: NHWC-contiguous up to size-1
/// dimensions. False for any rank but 4 (as c10). Unlike [`is_contiguous`], an empty
/// tensor is not automatically channels-last contiguous.
pub fn is_channels_last_contiguous_2d<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    check_layout(TENSOR, sizes, strides)?;
    cl2d_contiguous_unchecked(sizes, strides)
}

pub(crate) fn cl2d_contiguous_unchecked<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    if sizes.len() != 4 {
        return Ok(false);
    }
    contiguous_in_order(sizes, strides, &CL2D_ORDER, "is_channels_last_contiguous")
}

/// `t.is_contiguous(memory_format=torch.channels_last_3d)`: NDHWC-contiguous up to size-1
/// dimensions. False for any rank but 5.
pub fn is_channels_last_contiguous_3d<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    check_layout(TENSOR, sizes, strides)?;
    cl3d_contiguous_unchecked(sizes, strides)
}

pub(crate) fn cl3d_contiguous_unchecked<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    if sizes.len() != 5 {
        return Ok(false);
    }
    contiguous_in_order(
        sizes,
        strides,
        &CL3D_ORDER,
        "is_channels_last_3d_contiguous",
    )
}

/// c10's `is_channels_last_strides_2d_s4` / `_3d_s5`: do the strides *look like* the
/// channels-last order (non-decreasing along it), resolving ambiguity towards contiguous?
fn strides_like_in_order<I: Int>(
    sizes: &[I],
    strides: &[I],
    order: &[usize],
    what: &'static str,
) -> Result<bool> {
    // A trivial C dimension (stride 0) defaults to contiguous.
    if strides[1]
        .eq_i(0)
        .guard(|| format!("{what}: stride[1] == 0"))?
    {
        return Ok(false);
    }
    let mut min = I::from_i64(0);
    for &d in order {
        if sizes[d]
            .eq_i(0)
            .guard(|| format!("{what}: size[{d}] == 0"))?
        {
            return Ok(false);
        }
        if strides[d]
            .sym_lt(&min)
            .guard(|| format!("{what}: stride[{d}] < running minimum {min}"))?
        {
            return Ok(false);
        }
        // N111 with identical strides ([N,1,1,1]@[1,1,1,1], or a sliced N11W): ambiguous,
        // fall back to contiguous.
        if d == 0
            && min
                .sym_eq(&strides[1])
                .guard(|| format!("{what}: stride[1] == running minimum {min} at N"))?
        {
            return Ok(false);
        }
        // Tells N1H1 ([H,1,1,1] channels-last vs [H,H,1,1] contiguous) and permuted 1C1W apart.
        min = strides[d].clone();
        if sizes[d]
            .sym_gt(&I::from_i64(1))
            .guard(|| format!("{what}: size[{d}] > 1"))?
        {
            min = min * sizes[d].clone();
        }
    }
    Ok(true)
}

/// c10's `is_channels_last_strides_2d`: strides ordered like NHWC (the `is_channels_last_`
/// flag behind `suggest_memory_format`). False for any rank but 4.
pub fn is_strides_like_channels_last_2d<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    check_layout(TENSOR, sizes, strides)?;
    if sizes.len() != 4 {
        return Ok(false);
    }
    strides_like_in_order(sizes, strides, &CL2D_ORDER, "is_strides_like_channels_last")
}

/// c10's `is_channels_last_strides_3d`: strides ordered like NDHWC. False for any rank but 5.
pub fn is_strides_like_channels_last_3d<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    check_layout(TENSOR, sizes, strides)?;
    if sizes.len() != 5 {
        return Ok(false);
    }
    strides_like_in_order(
        sizes,
        strides,
        &CL3D_ORDER,
        "is_strides_like_channels_last_3d",
    )
}

/// How [`suggest_memory_format`] decides channels-last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StrideMatch {
    /// The strides only need to be ordered like channels-last (PyTorch's default,
    /// `channels_last_strides_exact_match=False`).
    #[default]
    Like,
    /// The strides must equal the channels-last strides of the sizes exactly, including
    /// those of size-0/1 dimensions (`channels_last_strides_exact_match=True`).
    Exact,
}

/// `t.suggest_memory_format(channels_last_strides_exact_match)`: the memory format an op
/// should give outputs "like" this tensor. Never [`MemoryFormat::Preserve`].
pub fn suggest_memory_format<I: Int>(
    sizes: &[I],
    strides: &[I],
    matching: StrideMatch,
) -> Result<MemoryFormat> {
    check_layout(TENSOR, sizes, strides)?;
    let exact = |expected: Vec<I>, what: &'static str| -> Result<bool> {
        for (d, (e, s)) in expected.iter().zip(strides).enumerate() {
            if s.sym_ne(e)
                .guard(|| format!("suggest_memory_format: stride[{d}] != {what} stride {e}"))?
            {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let (order, format, what): (&[usize], _, _) = match sizes.len() {
        4 => (
            &CL2D_ORDER,
            MemoryFormat::ChannelsLast,
            "is_strides_like_channels_last",
        ),
        5 => (
            &CL3D_ORDER,
            MemoryFormat::ChannelsLast3d,
            "is_strides_like_channels_last_3d",
        ),
        _ => return Ok(MemoryFormat::Contiguous),
    };
    if strides_like_in_order(sizes, strides, order, what)? {
        let matches = match matching {
            StrideMatch::Like => true,
            StrideMatch::Exact => exact(strides_in_order(sizes, order), format.name())?,
        };
        if matches {
            return Ok(format);
        }
    }
    Ok(MemoryFormat::Contiguous)
}

/// c10's `_compute_non_overlapping_and_dense`: sort the dimensions of size >= 2 by stride
/// and check they form the chain `1, n0, n0*n1, ...`. Dimensions of size 0 or 1 are
/// ignored (sorted last, where the walk stops).
pub(crate) fn compute_nod_sorted<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    let what = "is_non_overlapping_and_dense";
    let mut big: Vec<usize> = Vec::with_capacity(sizes.len());
    for (d, size) in sizes.iter().enumerate() {
        if size.ge_i(2).guard(|| format!("{what}: size[{d}] >= 2"))? {
            big.push(d);
        }
    }
    // Stable insertion sort by stride. Dimensions with equal strides cannot both fit the
    // chain, so the order among them does not change the answer.
    for i in 1..big.len() {
        let mut j = i;
        while j > 0 {
            let (a, b) = (big[j - 1], big[j]);
            if strides[b]
                .sym_lt(&strides[a])
                .guard(|| format!("{what}: sort by stride: stride[{b}] < stride[{a}]"))?
            {
                big.swap(j - 1, j);
                j -= 1;
            } else {
                break;
            }
        }
    }
    let mut required = I::from_i64(1);
    for &d in &big {
        if strides[d]
            .sym_ne(&required)
            .guard(|| format!("{what}: stride[{d}] != required stride {required}"))?
        {
            return Ok(false);
        }
        required = required * sizes[d].clone();
    }
    Ok(true)
}

/// `t.is_non_overlapping_and_dense()` as the C++ TensorImpl computes it: contiguous, or
/// (4-D) channels-last contiguous, or (5-D) channels-last-3d contiguous, or c10's
/// sort-based check. Every element has a distinct address and the addresses fill a
/// range without gaps (up to size-0/1 dimensions, whose strides are ignored; empty
/// tensors are always dense).
///
/// This differs from `torch._prims_common.is_non_overlapping_and_dense` (Python) on
/// size-1 dimensions and on rank 1.
pub fn is_non_overlapping_and_dense<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    check_layout(TENSOR, sizes, strides)?;
    if contiguous_unchecked(sizes, strides)? {
        return Ok(true);
    }
    let cl = match sizes.len() {
        4 => cl2d_contiguous_unchecked(sizes, strides)?,
        5 => cl3d_contiguous_unchecked(sizes, strides)?,
        _ => false,
    };
    Ok(cl || compute_nod_sorted(sizes, strides)?)
}

/// `t.is_contiguous(memory_format=format)`: a channels-last format on another rank is
/// `false`, `Preserve` asks plain contiguity.
pub fn is_contiguous_in<I: Int>(sizes: &[I], strides: &[I], format: MemoryFormat) -> Result<bool> {
    match format {
        MemoryFormat::ChannelsLast if sizes.len() == 4 => is_channels_last_contiguous_2d(sizes, strides),
        MemoryFormat::ChannelsLast3d if sizes.len() == 5 => is_channels_last_contiguous_3d(sizes, strides),
        MemoryFormat::ChannelsLast | MemoryFormat::ChannelsLast3d => Ok(false),
        _ => is_contiguous(sizes, strides),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity_ignores_size_one_and_empty() {
        assert!(is_contiguous(&[3i64, 1, 5], &[5, 999, 1]).unwrap());
        assert!(is_contiguous(&[3i64, 0, 5], &[1, 2, 3]).unwrap());
        assert!(!is_contiguous(&[3i64, 4], &[1, 3]).unwrap());
        assert!(is_contiguous::<i64>(&[], &[]).unwrap());
    }

    #[test]
    fn channels_last_contiguity_has_no_empty_shortcut() {
        assert!(is_channels_last_contiguous_2d(&[2i64, 3, 4, 5], &[60, 1, 15, 3]).unwrap());
        assert!(!is_channels_last_contiguous_2d(&[2i64, 3, 0, 5], &[60, 20, 5, 1]).unwrap());
        assert!(!is_channels_last_contiguous_2d(&[2i64, 3, 4], &[12, 4, 1]).unwrap());
        assert!(is_channels_last_contiguous_3d(&[2i64, 3, 4, 5, 6], &[360, 1, 90, 18, 3]).unwrap());
    }

    #[test]
    fn ambiguous_layouts_resolve_like_pytorch() {
        // N111 with unit strides: both contiguous and channels-last, suggests contiguous.
        let (s, t) = ([2i64, 4, 1, 1], [4i64, 1, 1, 1]);
        assert!(is_contiguous(&s, &t).unwrap());
        assert!(is_channels_last_contiguous_2d(&s, &t).unwrap());
        assert_eq!(
            suggest_memory_format(&s, &t, StrideMatch::Like).unwrap(),
            MemoryFormat::Contiguous
        );
        // A channels-last N1H1 tensor is told apart from the contiguous one.
        assert!(is_strides_like_channels_last_2d(&[2i64, 3, 4, 1], &[12, 1, 3, 3]).unwrap());
        assert!(!is_strides_like_channels_last_2d(&[2i64, 3, 4, 1], &[12, 4, 1, 1]).unwrap());
    }

    #[test]
    fn exact_match_checks_size_one_strides() {
        // Ordered like channels-last, but N's stride is not the canonical H*W*C.
        let (s, t) = ([2i64, 3, 4, 1], [24i64, 1, 3, 3]);
        assert!(is_strides_like_channels_last_2d(&s, &t).unwrap());
        assert_eq!(
            suggest_memory_format(&s, &t, StrideMatch::Like).unwrap(),
            MemoryFormat::ChannelsLast
        );
        assert_eq!(
            suggest_memory_format(&s, &t, StrideMatch::Exact).unwrap(),
            MemoryFormat::Contiguous
        );
    }

    #[test]
    fn nod_matches_c10_examples() {
        assert!(is_non_overlapping_and_dense(&[3i64, 4], &[1, 3]).unwrap());
        assert!(!is_non_overlapping_and_dense(&[4i64, 2, 3], &[8, 3, 1]).unwrap());
        assert!(!is_non_overlapping_and_dense(&[4i64, 2], &[1, 1]).unwrap());
        // Rank 1: size < 2 or unit stride.
        assert!(is_non_overlapping_and_dense(&[1i64], &[0]).unwrap());
        assert!(!is_non_overlapping_and_dense(&[3i64], &[2]).unwrap());
        // Size-1 dims with stride 0 are ignored (the Python reference disagrees here).
        assert!(is_non_overlapping_and_dense(&[3i64, 1], &[1, 0]).unwrap());
        // Empty tensors are dense through is_contiguous.
        assert!(is_non_overlapping_and_dense(&[0i64, 3], &[1, 5]).unwrap());
    }
}

