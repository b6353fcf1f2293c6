//! Movement ops that only reorder, insert, drop or re-stride dimensions: `permute`,
//! `transpose`, `t`, `movedim`, `expand`, `unsqueeze`, `squeeze`, `diagonal`, `unfold`,
//! `as_strided`. None of them needs a guard unless a size-1 question is asked of a
//! symbolic size (`squeeze`, `expand`).

use super::core::{check_add, check_mul, list, wrap_dim, View};
use crate::{Bool, Error, Int, Result};

/// Which dimensions `squeeze` removes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqueezeDims {
    /// Every size-1 dimension (`squeeze()`).
    All,
    /// One dimension, if it has size 1 (`squeeze(dim)`).
    One(i64),
    /// These dimensions, those of size 1 (`squeeze([d, ...])`; `[]` removes nothing).
    Many(Vec<i64>),
}

impl<I: Int> View<I> {
    /// `permute(dims)`: result dim `i` is input dim `dims[i]` (negative dims wrap).
    pub fn permute(&self, dims: &[i64]) -> Result<Self> {
        let n = self.dim();
        if dims.len() != n {
            return Err(Error::invalid(format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match \
                 the length of the desired ordering of dimensions i.e. input.dim() = {n} is not \
                 equal to len(dims) = {}",
                dims.len()
            )));
        }
        let mut seen = vec![false; n];
        let mut perm = Vec::with_capacity(n);
        for &d in dims {
            let w = wrap_dim(d, n)?;
            if std::mem::replace(&mut seen[w], true) {
                return Err(Error::invalid("permute(): duplicate dims are not allowed."));
            }
            perm.push(w);
        }
        Ok(self.permuted(&perm))
    }

    /// Permutes by an already validated permutation.
    fn permuted(&self, perm: &[usize]) -> Self {
        let sizes = perm.iter().map(|&p| self.sizes()[p].clone()).collect();
        let strides = perm.iter().map(|&p| self.strides()[p].clone()).collect();
        // Same sizes and strides in another order: still valid.
        View::from_valid_parts(sizes, strides, self.offset().clone())
    }

    /// `transpose(d0, d1)`: swaps two dimensions.
    pub fn transpose(&self, d0: i64, d1: i64) -> Result<Self> {
        let n = self.dim();
        let (a, b) = (wrap_dim(d0, n)?, wrap_dim(d1, n)?);
        if a == b || n == 0 {
            return Ok(self.clone());
        }
        let mut perm: Vec<usize> = (0..n).collect();
        perm.swap(a, b);
        Ok(self.permuted(&perm))
    }

    /// `t()`: transposes a 2-d view; 0-d and 1-d views are returned unchanged.
    pub fn t(&self) -> Result<Self> {
        match self.dim() {
            0 | 1 => Ok(self.clone()),
            2 => self.transpose(0, 1),
            n => Err(Error::invalid(format!(
                "t() expects a tensor with <= 2 dimensions, but self is {n}D"
            ))),
        }
    }

    /// `movedim(src, dst)`: moves one dimension to position `dst`, keeping the order of
    /// the others.
    pub fn movedim(&self, src: i64, dst: i64) -> Result<Self> {
        let n = self.dim();
        let (s, d) = (wrap_dim(src, n)?, wrap_dim(dst, n)?);
        if s == d || n == 0 {
            return Ok(self.clone());
        }
        let mut perm: Vec<usize> = (0..n).filter(|&k| k != s).collect();
        perm.insert(d, s);
        Ok(self.permuted(&perm))
    }

    /// `expand(sizes)`: broadcasts size-1 dimensions (stride 0) and prepends new ones;
    /// `-1` keeps a size. PyTorch's `inferExpandGeometry`.
    ///
    /// A negative target size other than `-1` on an existing dim is never checked by
    /// PyTorch; the new tensor's element count then fails (`numel: integer multiplication
    /// overflow`, category `error`). A 0-d tensor skips the `-1` check too (its `-1`s stay
    /// sizes), so `expand([-1])` of a 0-d tensor fails that way, not as an `expand` error.
    pub fn expand(&self, target: &[I]) -> Result<Self> {
        let n = self.dim();
        let m = target.len();
        let negative = || {
            Error::invalid(format!(
                "numel: integer multiplication overflow (expand to negative sizes {})",
                list(target)
            ))
        };
        if n == 0 {
            for (i, t) in target.iter().enumerate() {
                if t.lt_i(0)
                    .guard(|| format!("expand: target size[{i}] = {t} < 0"))?
                {
                    return Err(negative());
                }
            }
        }
        if m < n {
            return Err(Error::Expand {
                message: format!(
                    "expand(size={}): the number of sizes provided ({m}) must be greater or \
                     equal to the number of dimensions in the tensor ({n})",
                    list(target)
                ),
            });
        }
        let mut sizes = vec![I::from_i64(0); m];
        let mut strides = vec![I::from_i64(0); m];
        for i in (0..m).rev() {
            let existing = (i + n).checked_sub(m);
            let (size, stride) = match existing {
                Some(d) => (self.sizes()[d].clone(), self.strides()[d].clone()),
                None if i + 1 < m => (
                    I::from_i64(1),
                    sizes[i + 1].clone() * strides[i + 1].clone(),
                ),
                // Expanding a 0-d tensor: PyTorch gives every new dim stride 0.
                None => (I::from_i64(1), I::from_i64(0)),
            };
            let mut t = target[i].clone();
            if t.as_const() == Some(-1) {
                if existing.is_none() {
                    return Err(Error::Expand {
                        message: format!(
                            "The expanded size of the tensor (-1) isn't allowed in a leading, \
                             non-existing dimension {i}"
                        ),
                    });
                }
                t = size.clone();
            }
            let differs = size
                .sym_ne(&t)
                .guard(|| format!("expand: size {size} != target size[{i}] = {t}"))?;
            let (size, stride) = if differs {
                let one = size
                    .eq_i(1)
                    .guard(|| format!("expand: size {size} == 1 (to expand to {t} at dim {i})"))?;
                if !one {
                    return Err(Error::Expand {
                        message: format!(
                            "The expanded size of the tensor ({t}) must match the existing size \
                             ({size}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor \
                             sizes: {}",
                            list(target),
                            list(self.sizes())
                        ),
                    });
                }
                if t.lt_i(0)
                    .guard(|| format!("expand: target size[{i}] = {t} < 0"))?
                {
                    return Err(negative());
                }
                (t, I::from_i64(0))
            } else {
                (size, stride)
            };
            sizes[i] = size;
            strides[i] = stride;
        }
        View::derived(sizes, strides, self.offset().clone(), "expand")
    }

    /// `unsqueeze(dim)`: inserts a size-1 dimension at `dim` (in `[-n-1, n]`), with the
    /// stride PyTorch gives it (`size * stride` of the dimension it precedes, 1 at the end).
    pub fn unsqueeze(&self, dim: i64) -> Result<Self> {
        let n = self.dim();
        let d = wrap_dim(dim, n + 1)?;
        let stride = if d >= n {
            I::from_i64(1)
        } else {
            self.sizes()[d].clone() * self.strides()[d].clone()
        };
        let mut sizes = self.sizes().to_vec();
        let mut strides = self.strides().to_vec();
        sizes.insert(d, I::from_i64(1));
        strides.insert(d, stride);
        View::derived(sizes, strides, self.offset().clone(), "unsqueeze")
    }

    /// `squeeze(...)`: removes size-1 dimensions (see [`SqueezeDims`]).
    pub fn squeeze(&self, dims: &SqueezeDims) -> Result<Self> {
        let n = self.dim();
        let mut chosen = vec![false; n];
        match dims {
            SqueezeDims::All => chosen.iter_mut().for_each(|c| *c = true),
            SqueezeDims::One(d) => {
                let w = wrap_dim(*d, n)?;
                if n > 0 {
                    chosen[w] = true;
                }
            }
            SqueezeDims::Many(ds) => {
                let mut seen = vec![false; n.max(1)];
                for &d in ds {
                    let w = wrap_dim(d, n)?;
                    if std::mem::replace(&mut seen[w], true) {
                        return Err(Error::invalid(format!(
                            "dim {w} appears multiple times in the list of dims"
                        )));
                    }
                    if n > 0 {
                        chosen[w] = true;
                    }
                }
            }
        }
        let mut sizes = Vec::with_capacity(n);
        let mut strides = Vec::with_capacity(n);
        for (d, &chosen) in chosen.iter().enumerate() {
            let size = &self.sizes()[d];
            let drop = chosen
                && size
                    .eq_i(1)
                    .guard(|| format!("squeeze: size[{d}] = {size} == 1"))?;
            if !drop {
                sizes.push(size.clone());
                strides.push(self.strides()[d].clone());
            }
        }
        View::derived(sizes, strides, self.offset().clone(), "squeeze")
    }

    /// `diagonal(offset, dim1, dim2)`: drops both dims and appends the diagonal (size
    /// `max(min(n1, n2 - offset), 0)` for `offset >= 0`, stride `stride1 + stride2`).
    ///
    /// The size is a `min`/`max` value and the offset shift is multiplied by
    /// `min(size, 1)` (PyTorch skips the shift for an empty diagonal), so no guard is
    /// recorded.
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Self> {
        let n = self.dim();
        let (a, b) = (wrap_dim(dim1, n)?, wrap_dim(dim2, n)?);
        if a == b {
            return Err(Error::invalid(format!(
                "diagonal dimensions cannot be identical {dim1}, {dim2}"
            )));
        }
        let zero = I::from_i64(0);
        let k = I::from_i64(offset);
        let (sa, sb) = (self.sizes()[a].clone(), self.sizes()[b].clone());
        let (ta, tb) = (self.strides()[a].clone(), self.strides()[b].clone());
        let neg_k = I::from_i64(offset.checked_neg().unwrap_or(i64::MAX));
        check_add(&sb, &neg_k, || "diagonal: size - offset".into())?;
        check_add(&sa, &k, || "diagonal: size + offset".into())?;
        let size = if offset >= 0 {
            sa.min(&(sb - k)).max(&zero)
        } else {
            (sa + k).min(&sb).max(&zero)
        };
        let shift_stride = if offset >= 0 { tb.clone() } else { ta.clone() };
        let shift = I::from_i64(offset.unsigned_abs().min(i64::MAX as u64) as i64);
        check_mul(&shift, &shift_stride, || "diagonal: offset * stride".into())?;
        let nonempty = size.min(&I::from_i64(1));
        let delta = match nonempty.as_const() {
            Some(0) => zero,
            Some(_) => shift * shift_stride,
            None => shift * shift_stride * nonempty,
        };
        check_add(self.offset(), &delta, || "diagonal: storage offset".into())?;
        let new_offset = self.offset().clone() + delta;
        check_add(&ta, &tb, || "diagonal: stride1 + stride2".into())?;
        let mut sizes = Vec::with_capacity(n - 1);
        let mut strides = Vec::with_capacity(n - 1);
        for d in (0..n).filter(|&d| d != a && d != b) {
            sizes.push(self.sizes()[d].clone());
            strides.push(self.strides()[d].clone());
        }
        sizes.push(size);
        strides.push(ta + tb);
        View::derived(sizes, strides, new_offset, "diagonal")
    }

    /// `unfold(dim, size, step)`: windows of `size` elements every `step` along `dim`,
    /// as a new last dimension.
    pub fn unfold(&self, dim: i64, size: I, step: i64) -> Result<Self> {
        let n = self.dim();
        let d = wrap_dim(dim, n)?;
        let max_size = if n == 0 {
            I::from_i64(1)
        } else {
            self.sizes()[d].clone()
        };
        if !size
            .sym_le(&max_size)
            .guard(|| format!("unfold: size {size} <= size[{d}]"))?
        {
            return Err(Error::invalid(format!(
                "maximum size for tensor at dimension {d} is {max_size} but size is {size}"
            )));
        }
        if step <= 0 {
            return Err(Error::invalid(format!("step is {step} but must be > 0")));
        }
        if size.lt_i(0).guard(|| format!("unfold: size {size} < 0"))? {
            return Err(Error::invalid(format!("size is {size} but must be >= 0")));
        }
        let mut sizes = self.sizes().to_vec();
        let mut strides = self.strides().to_vec();
        let last_stride = if n == 0 {
            I::from_i64(1)
        } else {
            let stride = strides[d].clone();
            check_mul(&I::from_i64(step), &stride, || {
                format!("unfold: step {step} * stride at dim {d}")
            })?;
            let windows = (sizes[d].clone() - size.clone()).floor_div(&I::from_i64(step));
            sizes[d] = windows + I::from_i64(1);
            strides[d] = stride.clone() * I::from_i64(step);
            stride
        };
        sizes.push(size);
        strides.push(last_stride);
        View::derived(sizes, strides, self.offset().clone(), "unfold")
    }

    /// `as_strided(sizes, strides, offset)` (absolute offset) over a storage of
    /// `storage_numel` elements: PyTorch's checks (no negative strides, the addressed
    /// range inside the storage unless the view is empty).
    pub fn as_strided(
        &self,
        sizes: Vec<I>,
        strides: Vec<I>,
        offset: I,
        storage_numel: &I,
    ) -> Result<Self> {
        if sizes.len() != strides.len() {
            return Err(Error::invalid(format!(
                "mismatch in length of strides and shape: {} sizes, {} strides",
                sizes.len(),
                strides.len()
            )));
        }
        for s in &strides {
            if s.lt_i(0).guard(|| format!("as_strided: stride {s} < 0"))? {
                return Err(Error::invalid(format!(
                    "as_strided: Negative strides are not supported at the moment, got strides: {}",
                    list(&strides)
                )));
            }
        }
        if offset
            .lt_i(0)
            .guard(|| format!("as_strided: offset {offset} < 0"))?
        {
            return Err(Error::invalid(format!(
                "Tensor: invalid storage offset {offset}"
            )));
        }
        for (d, s) in sizes.iter().enumerate() {
            if s.lt_i(0)
                .guard(|| format!("as_strided: size[{d}] = {s} < 0"))?
            {
                return Err(Error::invalid(format!(
                    "Trying to create tensor with negative dimension {s}: {}",
                    list(&sizes)
                )));
            }
        }
        crate::layout::check_layout("as_strided", &sizes, &strides)?;
        let numel = crate::layout::numel(&sizes);
        let empty = numel
            .eq_i(0)
            .guard(|| "as_strided: numel == 0".to_string())?;
        if !empty {
            let mut last = offset.clone();
            for (s, t) in sizes.iter().zip(&strides) {
                let term = (s.clone() - I::from_i64(1)) * t.clone();
                check_add(&last, &term, || "as_strided: largest element".into())?;
                last = last + term;
            }
            if !last.sym_lt(storage_numel).guard(|| {
                format!("as_strided: largest element {last} < storage size {storage_numel}")
            })? {
                return Err(Error::invalid(format!(
                    "setStorage: sizes {}, strides {}, storage offset {offset}, and itemsize 4 \
                     requiring a storage size of {} are out of bounds for storage of size {}",
                    list(&sizes),
                    list(&strides),
                    last.clone() + I::from_i64(1),
                    storage_numel.clone() * I::from_i64(4)
                )));
            }
        }
        View::derived(sizes, strides, offset, "as_strided")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(sizes: &[i64]) -> View<i64> {
        View::contiguous(sizes.to_vec()).unwrap()
    }

    #[test]
    fn permute_transpose_movedim() {
        let x = v(&[2, 3, 4]);
        let p = x.permute(&[2, 0, 1]).unwrap();
        assert_eq!((p.sizes(), p.strides()), (&[4, 2, 3][..], &[1, 12, 4][..]));
        assert_eq!(x.permute(&[0, 0, 1]).unwrap_err().category(), "error");
        assert_eq!(x.permute(&[0, 1]).unwrap_err().category(), "error");
        assert_eq!(x.permute(&[0, 1, 3]).unwrap_err().category(), "index");
        let t = x.transpose(0, -1).unwrap();
        assert_eq!(t.sizes(), &[4, 3, 2]);
        let m = x.movedim(0, 2).unwrap();
        assert_eq!((m.sizes(), m.strides()), (&[3, 4, 2][..], &[4, 1, 12][..]));
        assert_eq!(x.t().unwrap_err().category(), "error");
    }

    #[test]
    fn expand_follows_infer_expand_geometry() {
        let x = v(&[3, 1]);
        let e = x.expand(&[2, -1, 4]).unwrap();
        assert_eq!((e.sizes(), e.strides()), (&[2, 3, 4][..], &[0, 1, 0][..]));
        let e = x.expand(&[1, 3, 1]).unwrap();
        assert_eq!(e.strides(), &[3, 1, 1]);
        assert_eq!(x.expand(&[4, 1]).unwrap_err().category(), "expand");
        assert_eq!(x.expand(&[1]).unwrap_err().category(), "expand");
        assert_eq!(x.expand(&[-1, 3, 1]).unwrap_err().category(), "expand");
    }

    /// PyTorch 2.15: `torch.tensor(1.).expand(-1)` and `expand(3, -1)` fail with
    /// "numel: integer multiplication overflow" (category `error`), as do negative sizes
    /// other than `-1` (`zeros(3, 1).expand(3, -5)`, `zeros(3).expand(-2, 3)`); a leading
    /// `-1` of a tensor with dims stays an `expand` error.
    #[test]
    fn negative_expand_sizes_are_errors_as_in_pytorch() {
        let z = v(&[]);
        for t in [&[-1][..], &[3, -1], &[-1, -1], &[-2]] {
            assert_eq!(z.expand(t).unwrap_err().category(), "error", "{t:?}");
        }
        assert_eq!(z.expand(&[3]).unwrap().strides(), &[0]);
        assert_eq!(v(&[3, 1]).expand(&[3, -5]).unwrap_err().category(), "error");
        assert_eq!(v(&[3]).expand(&[-2, 3]).unwrap_err().category(), "error");
        assert_eq!(v(&[3]).expand(&[-1, 3]).unwrap_err().category(), "expand");
    }

    #[test]
    fn squeeze_unsqueeze() {
        let x = v(&[1, 3, 1]);
        assert_eq!(x.squeeze(&SqueezeDims::All).unwrap().sizes(), &[3]);
        assert_eq!(x.squeeze(&SqueezeDims::One(1)).unwrap().sizes(), &[1, 3, 1]);
        assert_eq!(
            x.squeeze(&SqueezeDims::Many(vec![])).unwrap().sizes(),
            &[1, 3, 1]
        );
        assert_eq!(
            x.squeeze(&SqueezeDims::Many(vec![0, -1])).unwrap().sizes(),
            &[3]
        );
        assert!(x.squeeze(&SqueezeDims::Many(vec![0, -3])).is_err());
        let u = v(&[5, 16]).unsqueeze(1).unwrap();
        assert_eq!(
            (u.sizes(), u.strides()),
            (&[5, 1, 16][..], &[16, 16, 1][..])
        );
        assert_eq!(v(&[5]).unsqueeze(1).unwrap().strides(), &[1, 1]);
    }

    #[test]
    fn diagonal_unfold_as_strided() {
        let x = v(&[3, 4]);
        let d = x.diagonal(1, 0, 1).unwrap();
        assert_eq!(
            (d.sizes(), d.strides(), *d.offset()),
            (&[3][..], &[5][..], 1)
        );
        let d = x.diagonal(-5, 0, 1).unwrap();
        assert_eq!((d.sizes(), *d.offset()), (&[0][..], 0));
        assert!(x.diagonal(i64::MIN, 0, 1).is_err());
        assert_eq!(x.diagonal(i64::MAX - 8, 0, 1).unwrap().sizes(), &[0]);
        let u = v(&[8]).unfold(0, 3, 2).unwrap();
        assert_eq!((u.sizes(), u.strides()), (&[3, 3][..], &[2, 1][..]));
        assert!(v(&[2]).unfold(0, 3, 1).is_err());
        let a = x.as_strided(vec![2, 2], vec![1, 2], 7, &12).unwrap();
        assert_eq!(a.strides(), &[1, 2]);
        assert!(x.as_strided(vec![2, 2], vec![1, 2], 9, &12).is_err());
        assert!(x.as_strided(vec![0, 2], vec![1, 2], 900, &12).is_ok());
    }
}
