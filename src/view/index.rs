//! Indexing views: `slice`, `narrow`, `select`. They move the storage offset, so offsets
//! are expressions like every stride (`offset + start * stride`).

use super::core::{check_add, check_mul, list, wrap_dim, View};
use crate::{Bool, Error, Int, Result};

impl<I: Int> View<I> {
    /// `x[..., start:end:step, ...]` along `dim` (PyTorch's `slice`): `None` bounds mean
    /// the ends, negative bounds count from the end, out-of-range bounds clamp as in Python
    /// slicing, `step >= 1`.
    ///
    /// The clamping is written as `min`/`max` values, not branches, so a symbolic size
    /// records no guard: the result size is `ceil((end' - start') / step)` with
    /// `start' = clamp(start, 0, size)` and `end' = clamp(end, start', size)`.
    pub fn slice(&self, dim: i64, start: Option<I>, end: Option<I>, step: i64) -> Result<Self> {
        if self.dim() == 0 {
            return Err(Error::Index {
                message: "slice() cannot be applied to a 0-dim tensor.".into(),
            });
        }
        let d = wrap_dim(dim, self.dim())?;
        if step <= 0 {
            return Err(Error::invalid("slice step must be positive"));
        }
        let size = self.sizes()[d].clone();
        let zero = I::from_i64(0);
        // A negative bound counts from the end; that is a branch on the bound's sign,
        // free for the usual constant bounds.
        let from_end = |b: I, what: &str| -> Result<I> {
            let negative = b
                .lt_i(0)
                .guard(|| format!("slice: {what} {b} < 0 (dim {d})"))?;
            Ok(if negative { b + size.clone() } else { b })
        };
        let start = match start {
            None => zero.clone(),
            Some(s) => {
                let s = from_end(s, "start")?;
                s.max(&zero).min(&size)
            }
        };
        let end = match end {
            None => size.clone(),
            Some(e) => {
                let e = from_end(e, "end")?;
                e.max(&start).min(&size)
            }
        };
        let stride = self.strides()[d].clone();
        check_mul(&start, &stride, || {
            format!("slice: start * stride at dim {d}")
        })?;
        check_mul(&I::from_i64(step), &stride, || {
            format!("slice: step {step} * stride at dim {d}")
        })?;
        let offset = self.offset().clone() + start.clone() * stride.clone();
        let len = end - start;
        // ceil(len / step) as `(len - 1) // step + 1` (0 for len == 0 by floor division),
        // which cannot overflow for any step.
        let new_size = if step == 1 {
            len
        } else {
            (len - I::from_i64(1)).floor_div(&I::from_i64(step)) + I::from_i64(1)
        };
        let mut sizes = self.sizes().to_vec();
        let mut strides = self.strides().to_vec();
        sizes[d] = new_size;
        strides[d] = stride * I::from_i64(step);
        View::derived(sizes, strides, offset, "slice")
    }

    /// `narrow(dim, start, length)`: `slice(dim, start, start + length)` with PyTorch's
    /// checks (`-size <= start <= size`, `length >= 0`, `start + length <= size`).
    pub fn narrow(&self, dim: i64, start: I, length: I) -> Result<Self> {
        if self.dim() == 0 {
            return Err(Error::invalid(
                "narrow() cannot be applied to a 0-dim tensor.",
            ));
        }
        if !length
            .ge_i(0)
            .guard(|| format!("narrow: length {length} >= 0"))?
        {
            return Err(Error::invalid("narrow(): length must be non-negative."));
        }
        let d = wrap_dim(dim, self.dim())?;
        let size = self.sizes()[d].clone();
        let neg_size = I::from_i64(0) - size.clone();
        let in_range = neg_size.sym_le(&start).and(&start.sym_le(&size));
        if !in_range.guard(|| format!("narrow: -size[{d}] <= start {start} <= size[{d}]"))? {
            return Err(Error::Index {
                message: format!(
                    "start out of range (expected to be in range of [{neg_size}, {size}], but got {start})"
                ),
            });
        }
        let start = if start
            .lt_i(0)
            .guard(|| format!("narrow: start {start} < 0"))?
        {
            start + size.clone()
        } else {
            start
        };
        if !start
            .sym_le(&(size.clone() - length.clone()))
            .guard(|| format!("narrow: start {start} + length {length} <= size[{d}]"))?
        {
            return Err(Error::invalid(format!(
                "start ({start}) + length ({length}) exceeds dimension size ({size})."
            )));
        }
        // Within bounds: no clamping needed, so no min/max atoms.
        let stride = self.strides()[d].clone();
        check_mul(&start, &stride, || {
            format!("narrow: start * stride at dim {d}")
        })?;
        let offset = self.offset().clone() + start * stride;
        let mut sizes = self.sizes().to_vec();
        sizes[d] = length;
        View::derived(sizes, self.strides().to_vec(), offset, "narrow")
    }

    /// `select(dim, index)`: drops `dim`, moving the offset to `index` (negative counts
    /// from the end; `-size <= index < size`).
    pub fn select(&self, dim: i64, index: I) -> Result<Self> {
        if self.dim() == 0 {
            return Err(Error::Index {
                message: "select() cannot be applied to a 0-dim tensor.".into(),
            });
        }
        let d = wrap_dim(dim, self.dim())?;
        let size = self.sizes()[d].clone();
        let neg_size = I::from_i64(0) - size.clone();
        let in_range = neg_size.sym_le(&index).and(&index.sym_lt(&size));
        if !in_range.guard(|| format!("select: -size[{d}] <= index {index} < size[{d}]"))? {
            return Err(Error::Index {
                message: format!(
                    "select(): index {index} out of range for tensor of size {} at dimension {dim}",
                    list(self.sizes())
                ),
            });
        }
        let index = if index
            .lt_i(0)
            .guard(|| format!("select: index {index} < 0"))?
        {
            index + size
        } else {
            index
        };
        let stride = self.strides()[d].clone();
        check_mul(&index, &stride, || {
            format!("select: index * stride at dim {d}")
        })?;
        let step = index * stride;
        check_add(self.offset(), &step, || {
            "select: storage offset".to_string()
        })?;
        let offset = self.offset().clone() + step;
        let mut sizes = self.sizes().to_vec();
        let mut strides = self.strides().to_vec();
        sizes.remove(d);
        strides.remove(d);
        View::derived(sizes, strides, offset, "select")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(sizes: &[i64]) -> View<i64> {
        View::contiguous(sizes.to_vec()).unwrap()
    }

    #[test]
    fn slice_clamps_like_python() {
        let x = v(&[10, 3]);
        let s = x.slice(0, Some(-3), None, 1).unwrap();
        assert_eq!((s.sizes(), *s.offset()), (&[3, 3][..], 21));
        let s = x.slice(0, Some(2), Some(100), 3).unwrap();
        assert_eq!((s.sizes(), s.strides()), (&[3, 3][..], &[9, 1][..]));
        let s = x.slice(0, Some(8), Some(2), 1).unwrap();
        assert_eq!(s.sizes(), &[0, 3]);
        let s = x.slice(-1, Some(-100), Some(-1), 1).unwrap();
        assert_eq!(s.sizes(), &[10, 2]);
        assert_eq!(x.slice(0, None, None, 0).unwrap_err().category(), "error");
        assert_eq!(x.slice(2, None, None, 1).unwrap_err().category(), "index");
        // A huge step: the size is ceil(len / step) without overflow...
        let s = x.slice(1, Some(1), None, i64::MAX).unwrap();
        assert_eq!((s.sizes(), *s.offset()), (&[10, 1][..], 1));
        // ...and a stride that no longer fits is an error, not a wrap.
        assert!(matches!(
            x.slice(0, Some(1), None, i64::MAX),
            Err(Error::Overflow { .. })
        ));
    }

    #[test]
    fn narrow_and_select_check_bounds() {
        let x = v(&[4, 5]);
        let n = x.narrow(1, -2, 2).unwrap();
        assert_eq!((n.sizes(), *n.offset()), (&[4, 2][..], 3));
        assert_eq!(x.narrow(1, 4, 2).unwrap_err().category(), "error");
        assert_eq!(x.narrow(1, 6, 0).unwrap_err().category(), "index");
        assert_eq!(x.narrow(1, 0, -1).unwrap_err().category(), "error");
        let s = x.select(0, -1).unwrap();
        assert_eq!((s.sizes(), *s.offset()), (&[5][..], 15));
        assert_eq!(x.select(0, 4).unwrap_err().category(), "index");
    }
}
