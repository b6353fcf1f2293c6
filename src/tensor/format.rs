//! Memory formats and the concrete stride rules the tensor type needs (contiguity checks,
//! dense strides for a format, PyTorch's `is_strides_like_channels_last` heuristic).

/// A memory format, as in PyTorch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryFormat {
    /// Row-major (last dimension fastest).
    Contiguous,
    /// NHWC order for 4-D tensors (channels fastest).
    ChannelsLast,
    /// NDHWC order for 5-D tensors.
    ChannelsLast3d,
    /// Keep the tensor's own dense layout (only meaningful for clone/empty_like).
    Preserve,
}

/// Dimension order, innermost first, of a format for `ndim` dimensions (None if the format
/// does not apply to that rank).
pub(crate) fn format_order(format: MemoryFormat, ndim: usize) -> Option<Vec<usize>> {
    match (format, ndim) {
        (MemoryFormat::Contiguous, n) => Some((0..n).rev().collect()),
        (MemoryFormat::ChannelsLast, 4) => Some(vec![1, 3, 2, 0]),
        (MemoryFormat::ChannelsLast3d, 5) => Some(vec![1, 4, 3, 2, 0]),
        _ => None,
    }
}

/// Dense strides laying out `sizes` in `order` (innermost first). Size-0/1 dims count as 1.
pub(crate) fn strides_for_order(sizes: &[i64], order: &[usize]) -> Vec<i64> {
    let mut strides = vec![0; sizes.len()];
    let mut acc: i64 = 1;
    for &d in order {
        strides[d] = acc;
        acc = acc.saturating_mul(sizes[d].max(1));
    }
    strides
}

/// PyTorch's `is_contiguous(memory_format)`: size-1 dimensions' strides are ignored, an empty
/// tensor is contiguous.
pub(crate) fn is_contiguous_as(sizes: &[i64], strides: &[i64], format: MemoryFormat) -> bool {
    let Some(order) = format_order(format, sizes.len()) else {
        return false;
    };
    if sizes.iter().any(|&s| s == 0) {
        return true;
    }
    let mut expected: i64 = 1;
    for &d in &order {
        if sizes[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected = expected.saturating_mul(sizes[d]);
        }
    }
    true
}

/// c10's `is_channels_last_strides_2d/3d` (the heuristic behind `suggest_memory_format`).
fn strides_like(sizes: &[i64], strides: &[i64], order: &[usize]) -> bool {
    // order here is innermost first: C, then W, H, (D), N
    let c = order[0];
    if strides[c] == 0 {
        return false;
    }
    let mut min: i64 = 0;
    for (k, &d) in order.iter().enumerate() {
        if sizes[d] == 0 || strides[d] < min {
            return false;
        }
        // N with the same stride as C: NCHW is the default for ambiguous N111 tensors.
        if k == order.len() - 1 && min == strides[c] {
            return false;
        }
        min = strides[d];
        if sizes[d] > 1 {
            min = min.saturating_mul(sizes[d]);
        }
    }
    true
}

/// PyTorch's `suggest_memory_format()` (without exact match).
pub(crate) fn suggest_memory_format(sizes: &[i64], strides: &[i64]) -> MemoryFormat {
    match sizes.len() {
        4 if strides_like(sizes, strides, &[1, 3, 2, 0]) => MemoryFormat::ChannelsLast,
        5 if strides_like(sizes, strides, &[1, 4, 3, 2, 0]) => MemoryFormat::ChannelsLast3d,
        _ => MemoryFormat::Contiguous,
    }
}

/// True when no two in-bounds indices address the same element (a sufficient test: dims of
/// size > 1 sorted by stride must each step past the extent of all smaller ones).
pub(crate) fn is_non_overlapping(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.iter().any(|&s| s == 0) {
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

/// c10's `is_non_overlapping_and_dense`.
pub(crate) fn is_non_overlapping_and_dense(sizes: &[i64], strides: &[i64]) -> bool {
    let n = sizes.len();
    if n == 1 {
        return sizes[0] < 2 || strides[0] == 1;
    }
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by(|&a, &b| {
        if sizes[a] < 2 {
            std::cmp::Ordering::Greater
        } else if sizes[b] < 2 {
            std::cmp::Ordering::Less
        } else {
            strides[a].cmp(&strides[b])
        }
    });
    let mut require: i64 = 1;
    for &d in &perm {
        if sizes[d] < 2 {
            return true;
        }
        if strides[d] != require {
            return false;
        }
        require = require.saturating_mul(sizes[d]);
    }
    true
}

/// Strides of `empty_like(t)` under `preserve_format`: own strides when non-overlapping and
/// dense, otherwise dense strides in the tensor's stride order.
pub(crate) fn preserve_strides(sizes: &[i64], strides: &[i64]) -> Vec<i64> {
    if is_non_overlapping_and_dense(sizes, strides) {
        return strides.to_vec();
    }
    let n = sizes.len();
    // insertion sort, innermost first; ambiguous comparisons (stride 0 / equal) keep order
    let mut perm: Vec<usize> = (0..n).rev().collect();
    for i in 1..n {
        let mut j = i;
        while j > 0 {
            let (a, b) = (perm[j - 1], perm[j]);
            let swap = strides[a] != 0
                && strides[b] != 0
                && (strides[a] > strides[b] || (strides[a] == strides[b] && sizes[a] > sizes[b]));
            if !swap {
                break;
            }
            perm.swap(j - 1, j);
            j -= 1;
        }
    }
    strides_for_order(sizes, &perm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_last_rules() {
        let s = [2, 3, 4, 5];
        let cl = strides_for_order(&s, &format_order(MemoryFormat::ChannelsLast, 4).unwrap());
        assert_eq!(cl, vec![60, 1, 15, 3]);
        assert!(is_contiguous_as(&s, &cl, MemoryFormat::ChannelsLast));
        assert!(!is_contiguous_as(&s, &cl, MemoryFormat::Contiguous));
        assert_eq!(suggest_memory_format(&s, &cl), MemoryFormat::ChannelsLast);
        // ambiguous (2,1,4,4) contiguous: suggests contiguous
        assert_eq!(
            suggest_memory_format(&[2, 1, 4, 4], &[16, 16, 4, 1]),
            MemoryFormat::Contiguous
        );
        assert!(is_contiguous_as(
            &[2, 1, 4, 4],
            &[16, 16, 4, 1],
            MemoryFormat::ChannelsLast
        ));
    }

    #[test]
    fn overlap_and_density() {
        assert!(is_non_overlapping(&[2, 2], &[3, 2]));
        assert!(!is_non_overlapping(&[2, 3], &[1, 1]));
        assert!(!is_non_overlapping(&[4], &[0]));
        assert!(is_non_overlapping_and_dense(&[2, 3], &[1, 2]));
        assert!(!is_non_overlapping_and_dense(&[2, 3], &[4, 1]));
        assert_eq!(preserve_strides(&[2, 3], &[1, 4]), vec![1, 2]);
    }
}
