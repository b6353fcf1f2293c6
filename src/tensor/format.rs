//! Layout helpers the tensor type needs on top of [`crate::layout`]: memory-format
//! predicates with concrete `i64` sizes (delegating to `layout`, which is checked against
//! PyTorch's golden cases), and the internal-overlap test the kernels use for outputs.

use crate::layout::{self, MemoryFormat, StrideMatch};

/// PyTorch's `is_contiguous(memory_format)` (false for a format that does not fit the rank,
/// and for `Preserve`).
pub(crate) fn is_contiguous_as(sizes: &[i64], strides: &[i64], format: MemoryFormat) -> bool {
    let r = match format {
        MemoryFormat::Contiguous => layout::is_contiguous(sizes, strides),
        MemoryFormat::ChannelsLast => layout::is_channels_last_contiguous_2d(sizes, strides),
        MemoryFormat::ChannelsLast3d => layout::is_channels_last_contiguous_3d(sizes, strides),
        MemoryFormat::Preserve => Ok(false),
    };
    r.unwrap_or(false)
}

/// PyTorch's `suggest_memory_format()` (strides "like" channels-last suffice).
pub(crate) fn suggest_memory_format(sizes: &[i64], strides: &[i64]) -> MemoryFormat {
    layout::suggest_memory_format(sizes, strides, StrideMatch::Like)
        .unwrap_or(MemoryFormat::Contiguous)
}

/// c10's `is_non_overlapping_and_dense`.
pub(crate) fn is_non_overlapping_and_dense(sizes: &[i64], strides: &[i64]) -> bool {
    layout::is_non_overlapping_and_dense(sizes, strides).unwrap_or(false)
}

/// Strides of `empty_like` under `preserve_format`.
pub(crate) fn preserve_strides(sizes: &[i64], strides: &[i64]) -> Vec<i64> {
    layout::empty_like_strides(sizes, strides).unwrap_or_else(|_| layout::contiguous_strides(sizes))
}

/// True when no two in-bounds indices address the same element (a sufficient test: dims of
/// size > 1 sorted by stride must each step past the extent of all smaller ones).
pub(crate) fn is_non_overlapping(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.contains(&0) {
        return true;
    }
    let mut dims: Vec<(i64, i64)> = sizes
        .iter()
        .zip(strides)
        .filter(|(&s, _)| s > 1)
        .map(|(&s, &st)| (st.unsigned_abs() as i64, s))
        .collect();
    dims.sort_unstable();
    let mut extent: i64 = 0; // max offset reachable by the dims so far
    for (stride, size) in dims {
        if stride <= extent {
            return false;
        }
        extent = extent.saturating_add(stride.saturating_mul(size - 1));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_test_is_sufficient() {
        assert!(is_non_overlapping(&[2, 2], &[3, 2]));
        assert!(!is_non_overlapping(&[2, 3], &[1, 1]));
        assert!(!is_non_overlapping(&[4], &[0]));
        assert!(is_non_overlapping(&[4, 1], &[1, 0]));
        assert!(is_non_overlapping(&[0, 3], &[0, 0]));
    }

    #[test]
    fn ambiguous_channels_last() {
        assert_eq!(
            suggest_memory_format(&[2, 1, 4, 4], &[16, 16, 4, 1]),
            MemoryFormat::Contiguous
        );
        assert!(is_contiguous_as(
            &[2, 1, 4, 4],
            &[16, 16, 4, 1],
            MemoryFormat::ChannelsLast
        ));
        assert_eq!(
            suggest_memory_format(&[2, 3, 4, 5], &[60, 1, 15, 3]),
            MemoryFormat::ChannelsLast
        );
    }
}
