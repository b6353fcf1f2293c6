//! Stride construction: contiguous and channels-last strides for given sizes.

use super::validate::check_sizes;
use crate::{Error, Int, Result};

/// A memory format, as `torch.memory_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MemoryFormat {
    /// Row-major (`torch.contiguous_format`): last dimension fastest.
    #[default]
    Contiguous,
    /// NHWC order for 4-D tensors (`torch.channels_last`): C fastest, then W, H, N.
    ChannelsLast,
    /// NDHWC order for 5-D tensors (`torch.channels_last_3d`): C, W, H, D, N.
    ChannelsLast3d,
    /// Keep the input's layout (`torch.preserve_format`): only meaningful for ops that
    /// allocate "like" an input, such as `empty_like`.
    Preserve,
}

impl MemoryFormat {
    /// PyTorch's lower-case name (`"contiguous"`, `"channels_last"`, ...), as in the golden
    /// files.
    pub fn name(self) -> &'static str {
        match self {
            MemoryFormat::Contiguous => "contiguous",
            MemoryFormat::ChannelsLast => "channels_last",
            MemoryFormat::ChannelsLast3d => "channels_last_3d",
            MemoryFormat::Preserve => "preserve",
        }
    }
}

impl std::fmt::Display for MemoryFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Dimension order, fastest first, of channels-last (4-D).
pub(crate) const CL2D_ORDER: [usize; 4] = [1, 3, 2, 0];
/// Dimension order, fastest first, of channels-last-3d (5-D).
pub(crate) const CL3D_ORDER: [usize; 5] = [1, 4, 3, 2, 0];

/// The number of elements: the product of all sizes (no branching).
///
/// The caller must have validated `sizes` ([`check_sizes`](super::check_sizes)); use
/// [`try_numel`] on untrusted input.
pub fn numel<I: Int>(sizes: &[I]) -> I {
    sizes.iter().fold(I::from_i64(1), |acc, s| acc * s.clone())
}

/// [`numel`] after validating `sizes` (rank, negative sizes, i64 overflow).
pub fn try_numel<I: Int>(sizes: &[I]) -> Result<I> {
    check_sizes("sizes", sizes)?;
    Ok(numel(sizes))
}

/// Strides of `torch.empty(sizes)`: row-major, where a size-0 dimension counts as 1
/// (c10's `contiguous_strides`: every stride is a product of `max(size, 1)`).
///
/// Branch-free (no guard is ever recorded). The caller must have validated `sizes`
/// ([`check_sizes`](super::check_sizes)) so that the products fit in i64; use
/// [`try_contiguous_strides`] on untrusted input.
pub fn contiguous_strides<I: Int>(sizes: &[I]) -> Vec<I> {
    let n = sizes.len();
    let mut strides = vec![I::from_i64(1); n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].clone() * sizes[d + 1].max(&I::from_i64(1));
    }
    strides
}

/// [`contiguous_strides`] after validating `sizes` (negative sizes, i64 overflow).
pub fn try_contiguous_strides<I: Int>(sizes: &[I]) -> Result<Vec<I>> {
    check_sizes("sizes", sizes)?;
    Ok(contiguous_strides(sizes))
}

/// Strides in a given dimension order (`order[0]` fastest), PyTorch's channels-last way:
/// plain products of the sizes, so a size-0 dimension makes every slower stride 0.
pub(crate) fn strides_in_order<I: Int>(sizes: &[I], order: &[usize]) -> Vec<I> {
    let mut strides = vec![I::from_i64(1); sizes.len()];
    let mut next = I::from_i64(1);
    for &d in order {
        strides[d] = next.clone();
        next = next * sizes[d].clone();
    }
    strides
}

/// Strides of `torch.empty(sizes, memory_format=torch.channels_last)` (NHWC) for 4-D
/// `sizes`.
///
/// Like c10's `get_channels_last_strides_2d`, the strides are plain products of the sizes
/// (no `max(size, 1)`): with a size-0 dimension, the strides of all slower dimensions are
/// 0 (e.g. sizes `[2, 0, 3, 4]` give `[0, 1, 0, 0]`). Branch-free.
///
/// Errors: rank other than 4, negative sizes, overflow.
pub fn channels_last_strides_2d<I: Int>(sizes: &[I]) -> Result<Vec<I>> {
    if sizes.len() != 4 {
        return Err(Error::layout(
            "sizes",
            format!(
                "channels_last strides need a rank-4 tensor, got rank {}",
                sizes.len()
            ),
        ));
    }
    check_sizes("sizes", sizes)?;
    Ok(strides_in_order(sizes, &CL2D_ORDER))
}

/// Strides of `torch.empty(sizes, memory_format=torch.channels_last_3d)` (NDHWC) for 5-D
/// `sizes`; same size-0 behaviour as [`channels_last_strides_2d`].
///
/// Errors: rank other than 5, negative sizes, overflow.
pub fn channels_last_strides_3d<I: Int>(sizes: &[I]) -> Result<Vec<I>> {
    if sizes.len() != 5 {
        return Err(Error::layout(
            "sizes",
            format!(
                "channels_last_3d strides need a rank-5 tensor, got rank {}",
                sizes.len()
            ),
        ));
    }
    check_sizes("sizes", sizes)?;
    Ok(strides_in_order(sizes, &CL3D_ORDER))
}

/// Strides of `torch.empty(sizes, memory_format=format)`.
///
/// Errors: channels-last formats on the wrong rank, and [`MemoryFormat::Preserve`] (which
/// needs an input tensor to preserve).
pub fn strides_for_format<I: Int>(sizes: &[I], format: MemoryFormat) -> Result<Vec<I>> {
    match format {
        MemoryFormat::Contiguous => try_contiguous_strides(sizes),
        MemoryFormat::ChannelsLast => channels_last_strides_2d(sizes),
        MemoryFormat::ChannelsLast3d => channels_last_strides_3d(sizes),
        MemoryFormat::Preserve => Err(Error::invalid(
            "memory format `preserve` has no strides of its own: it needs an input tensor",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_strides_treat_zero_as_one() {
        assert_eq!(contiguous_strides::<i64>(&[]), Vec::<i64>::new());
        assert_eq!(contiguous_strides(&[5i64]), vec![1]);
        assert_eq!(contiguous_strides(&[2i64, 3, 4]), vec![12, 4, 1]);
        assert_eq!(contiguous_strides(&[2i64, 0, 4]), vec![4, 4, 1]);
        assert_eq!(contiguous_strides(&[0i64, 1, 0]), vec![1, 1, 1]);
    }

    #[test]
    fn channels_last_strides_keep_zero_products() {
        assert_eq!(
            channels_last_strides_2d(&[2i64, 3, 4, 5]).unwrap(),
            vec![60, 1, 15, 3]
        );
        assert_eq!(
            channels_last_strides_2d(&[2i64, 0, 3, 4]).unwrap(),
            vec![0, 1, 0, 0]
        );
        assert_eq!(
            channels_last_strides_3d(&[2i64, 3, 4, 5, 6]).unwrap(),
            vec![360, 1, 90, 18, 3]
        );
        assert!(matches!(
            channels_last_strides_2d(&[2i64, 3, 4]),
            Err(Error::InvalidLayout { .. })
        ));
        assert!(channels_last_strides_3d(&[2i64, 3, 4, 5]).is_err());
        assert!(strides_for_format(&[2i64], MemoryFormat::Preserve).is_err());
    }
}
