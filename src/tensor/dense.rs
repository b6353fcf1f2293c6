//! The strided tensor type and its zero-copy views.

use super::element::{DType, Element};
use super::format;
use super::storage::Storage;
use crate::layout::MemoryFormat;
use crate::view::{SqueezeDims, View};
use crate::{Error, Result};
use smallvec::SmallVec;

/// Small inline vector for sizes/strides (no allocation up to 6 dims).
pub type Dims = SmallVec<[i64; 6]>;

/// A strided view over shared [`Storage`]: sizes, strides (in elements) and a storage offset.
///
/// Cloning a `Tensor` (the [`Clone`] trait) is cheap and makes another *view* of the same
/// storage, like `Arc::clone`; [`Tensor::deep_clone`] copies the data (PyTorch's `clone()`).
///
/// Invariant (checked by every constructor and view): sizes and strides are non-negative and
/// every element the view addresses lies inside the storage. Negative strides are rejected
/// (as in PyTorch), which keeps the address range of a view `[offset, offset + Σ(size-1)·stride]`.
pub struct Tensor<T: Element> {
    pub(crate) storage: Storage<T>,
    pub(crate) sizes: Dims,
    pub(crate) strides: Dims,
    pub(crate) offset: i64,
}

impl<T: Element> Clone for Tensor<T> {
    fn clone(&self) -> Self {
        Tensor {
            storage: self.storage.clone(),
            sizes: self.sizes.clone(),
            strides: self.strides.clone(),
            offset: self.offset,
        }
    }
}

impl<T: Element> std::fmt::Debug for Tensor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tensor<{:?}>(sizes {:?}, strides {:?}, offset {}, storage {})",
            T::DTYPE,
            &self.sizes[..],
            &self.strides[..],
            self.offset,
            self.storage.len()
        )
    }
}

/// Validates a layout against a storage length: non-negative sizes/strides/offset, checked
/// i64 arithmetic, and `offset + Σ(size-1)·stride < len` when the view is non-empty.
pub(crate) fn check_layout(
    sizes: &[i64],
    strides: &[i64],
    offset: i64,
    storage_len: usize,
    what: &str,
) -> Result<()> {
    if sizes.len() != strides.len() {
        return Err(Error::layout(
            what,
            format!("{} sizes but {} strides", sizes.len(), strides.len()),
        ));
    }
    if offset < 0 {
        return Err(Error::layout(
            what,
            format!("negative storage offset {offset}"),
        ));
    }
    // The library's shape rule (rank, and contiguous strides of these sizes fit in i64,
    // even for an empty tensor): later stride computations rely on it.
    crate::layout::check_sizes(what, sizes)?;
    let mut numel: i64 = 1;
    let mut max = offset;
    for (d, (&s, &st)) in sizes.iter().zip(strides).enumerate() {
        if s < 0 {
            return Err(Error::layout(what, format!("dim {d}: negative size {s}")));
        }
        if st < 0 {
            return Err(Error::layout(
                what,
                format!("dim {d}: negative stride {st} (negative strides are not supported)"),
            ));
        }
        numel = numel
            .checked_mul(s)
            .ok_or_else(|| Error::overflow(format!("numel of {what} at dim {d}")))?;
        if s > 0 {
            max = (s - 1)
                .checked_mul(st)
                .and_then(|e| max.checked_add(e))
                .ok_or_else(|| Error::overflow(format!("extent of {what} at dim {d}")))?;
        }
    }
    if numel > 0 && max >= storage_len as i64 {
        return Err(Error::layout(
            what,
            format!(
                "addresses element {max} but its storage holds {storage_len} (sizes {sizes:?}, strides {strides:?}, offset {offset})"
            ),
        ));
    }
    Ok(())
}

/// A `usize` dim as the `i64` the view layer takes (too large wraps to an invalid dim).
fn dim_arg(d: usize) -> i64 {
    i64::try_from(d).unwrap_or(i64::MAX)
}

impl<T: Element> Tensor<T> {
    /// A contiguous tensor owning `data` (no copy). Fails if `data.len()` is not the product of
    /// `sizes`.
    pub fn from_vec(data: Vec<T>, sizes: &[i64]) -> Result<Self> {
        let strides = crate::layout::try_contiguous_strides(sizes)?;
        let n = data.len();
        let t = Tensor::from_storage(Storage::from_vec(data), sizes, &strides, 0)?;
        if t.numel() as usize != n {
            return Err(Error::layout(
                "from_vec",
                format!(
                    "sizes {sizes:?} hold {} elements but {n} were given",
                    t.numel()
                ),
            ));
        }
        Ok(t)
    }

    /// A view of `storage` with the given layout (validated).
    pub fn from_storage(
        storage: Storage<T>,
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
    ) -> Result<Self> {
        check_layout(sizes, strides, offset, storage.len(), "as_strided")?;
        Ok(Tensor {
            storage,
            sizes: sizes.into(),
            strides: strides.into(),
            offset,
        })
    }

    /// A tensor of `sizes` in `format` filled with `value`.
    pub fn full(sizes: &[i64], value: T, format: MemoryFormat) -> Result<Self> {
        let strides = dense_strides(sizes, format)?;
        let n = numel_of(sizes)?;
        Tensor::from_storage(Storage::filled(n, value)?, sizes, &strides, 0)
    }

    /// A contiguous tensor of zeros (`T::default()`).
    pub fn zeros(sizes: &[i64]) -> Result<Self> {
        Tensor::full(sizes, T::default(), MemoryFormat::Contiguous)
    }

    /// A dense tensor with the given strides whose contents are unspecified. Crate-private:
    /// the caller writes every element before the tensor escapes.
    pub(crate) fn uninit(sizes: &[i64], strides: &[i64]) -> Result<Self> {
        let n = numel_of(sizes)?;
        Tensor::from_storage(Storage::uninit(n)?, sizes, strides, 0)
    }

    /// Sizes.
    pub fn sizes(&self) -> &[i64] {
        &self.sizes
    }
    /// Strides in elements.
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }
    /// Storage offset in elements.
    pub fn storage_offset(&self) -> i64 {
        self.offset
    }
    /// The shared storage.
    pub fn storage(&self) -> &Storage<T> {
        &self.storage
    }
    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.sizes.len()
    }
    /// Number of elements.
    pub fn numel(&self) -> i64 {
        self.sizes.iter().product()
    }
    /// Element type tag.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }
    /// True if both views share one storage.
    pub fn shares_storage<U: Element>(&self, other: &Tensor<U>) -> bool {
        self.storage.same(&other.storage)
    }
    /// PyTorch's `is_contiguous(memory_format)`.
    pub fn is_contiguous(&self, format: MemoryFormat) -> bool {
        format::is_contiguous_as(&self.sizes, &self.strides, format)
    }
    /// c10's `is_non_overlapping_and_dense`.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        format::is_non_overlapping_and_dense(&self.sizes, &self.strides)
    }
    /// PyTorch's `suggest_memory_format()`.
    pub fn suggest_memory_format(&self) -> MemoryFormat {
        format::suggest_memory_format(&self.sizes, &self.strides)
    }

    /// The element at a multi-index.
    pub fn get(&self, index: &[i64]) -> Result<T> {
        if index.len() != self.dim() {
            return Err(Error::invalid(format!(
                "get: {} indices for a {}-d tensor",
                index.len(),
                self.dim()
            )));
        }
        let mut off = self.offset;
        for (d, (&i, (&s, &st))) in index
            .iter()
            .zip(self.sizes.iter().zip(&self.strides))
            .enumerate()
        {
            if i < 0 || i >= s {
                return Err(Error::invalid(format!(
                    "get: index {i} out of range for dim {d} of size {s}"
                )));
            }
            off += i * st; // in bounds by the layout invariant
        }
        let _g = self.storage.read()?;
        // SAFETY: the layout invariant puts every in-range index inside the storage, and the
        // read guard excludes concurrent writers.
        Ok(unsafe { *self.storage.ptr().add(off as usize) })
    }

    /// All elements in logical (row-major) order.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let n = self.numel() as usize;
        let mut out = Vec::new();
        out.try_reserve_exact(n)
            .map_err(|_| {
                Error::invalid(format!(
                    "out of memory reading the tensor's {n} elements ({} bytes) into a vector",
                    (n as u64).saturating_mul(std::mem::size_of::<T>() as u64)
                ))
            })?;
        self.visit(|v| {
            out.push(v);
            true
        })?;
        Ok(out)
    }

    /// Whether some element satisfies `f` (read in logical order, stopping at the first).
    pub fn any(&self, f: impl Fn(T) -> bool) -> Result<bool> {
        let mut found = false;
        self.visit(|v| {
            found = f(v);
            !found
        })?;
        Ok(found)
    }

    /// Calls `f` on the elements in logical (row-major) order while it returns `true`.
    /// Calls `f` with the elements of a row-major contiguous tensor as one slice (held under
    /// the storage's read borrow). A tensor that is not row-major contiguous is an error.
    pub fn with_slice<R>(&self, f: impl FnOnce(&[T]) -> R) -> Result<R> {
        let n = self.contiguous_span()?;
        let _g = self.storage.read()?;
        // SAFETY: the layout invariant (checked when the tensor was made) puts the `n`
        // elements of a contiguous tensor at `offset..offset + n`, inside the storage; the
        // read guard excludes writers for the slice's lifetime (it ends before `_g` drops).
        let s = unsafe { std::slice::from_raw_parts(self.storage.ptr().add(self.offset as usize), n) };
        Ok(f(s))
    }

    /// [`Tensor::with_slice`] with exclusive access: `f` may write every element.
    pub fn with_slice_mut<R>(&self, f: impl FnOnce(&mut [T]) -> R) -> Result<R> {
        let n = self.contiguous_span()?;
        let _g = self.storage.write()?;
        // SAFETY: as in `with_slice`; the write guard makes this the only access to the
        // storage while the slice lives.
        let s = unsafe { std::slice::from_raw_parts_mut(self.storage.ptr().add(self.offset as usize), n) };
        Ok(f(s))
    }

    /// The element count of a row-major contiguous tensor (an error otherwise).
    fn contiguous_span(&self) -> Result<usize> {
        if !crate::layout::is_contiguous(&self.sizes, &self.strides)? {
            return Err(Error::invalid(format!(
                "internal: a slice of a non-contiguous tensor (sizes {:?}, strides {:?})",
                &self.sizes[..],
                &self.strides[..]
            )));
        }
        let n = self.numel() as usize;
        if n > 0 && self.offset as usize + n > self.storage.len() {
            return Err(Error::invalid("internal: a contiguous tensor past its storage"));
        }
        Ok(n)
    }

    fn visit(&self, mut f: impl FnMut(T) -> bool) -> Result<()> {
        let n = self.numel();
        if n == 0 {
            return Ok(());
        }
        let _g = self.storage.read()?;
        let base = self.storage.ptr();
        let nd = self.dim();
        let mut idx = vec![0i64; nd];
        let mut off = self.offset;
        for _ in 0..n {
            // SAFETY: `off` is the offset of an in-range index, inside the storage by the layout
            // invariant; the read guard excludes writers.
            if !f(unsafe { *base.add(off as usize) }) {
                return Ok(());
            }
            for d in (0..nd).rev() {
                idx[d] += 1;
                off += self.strides[d];
                if idx[d] < self.sizes[d] {
                    break;
                }
                off -= self.strides[d] * self.sizes[d];
                idx[d] = 0;
            }
        }
        Ok(())
    }

    fn restrided(&self, sizes: Dims, strides: Dims, offset: i64, what: &str) -> Result<Self> {
        check_layout(&sizes, &strides, offset, self.storage.len(), what)?;
        Ok(Tensor {
            storage: self.storage.clone(),
            sizes,
            strides,
            offset,
        })
    }

    /// `as_strided(sizes, strides, offset)`: any validated view of the same storage.
    pub fn as_strided(&self, sizes: &[i64], strides: &[i64], offset: i64) -> Result<Self> {
        self.restrided(sizes.into(), strides.into(), offset, "as_strided")
    }

    /// This tensor's layout as a [`View`]: the generic movement ops (`crate::view`) act on
    /// it, so eager and symbolic views are the same code.
    pub fn layout_view(&self) -> View<i64> {
        View::from_valid_parts(self.sizes.to_vec(), self.strides.to_vec(), self.offset)
    }

    /// A tensor over the same storage with the layout `v` (bounds-checked against it).
    fn aliased(&self, v: View<i64>, what: &str) -> Result<Self> {
        let (sizes, strides, offset) = v.into_parts();
        self.restrided(sizes.into(), strides.into(), offset, what)
    }

    /// Reorders dimensions: result dim `i` is input dim `perm[i]`.
    pub fn permute(&self, perm: &[usize]) -> Result<Self> {
        let dims: Vec<i64> = perm.iter().map(|&d| dim_arg(d)).collect();
        self.aliased(self.layout_view().permute(&dims)?, "permute")
    }

    /// Swaps two dimensions.
    pub fn transpose(&self, d0: usize, d1: usize) -> Result<Self> {
        let v = self.layout_view().transpose(dim_arg(d0), dim_arg(d1))?;
        self.aliased(v, "transpose")
    }

    /// `t()`: transposes a 2-d tensor; 0-d and 1-d tensors are returned as they are.
    pub fn t(&self) -> Result<Self> {
        self.aliased(self.layout_view().t()?, "t")
    }

    /// `t[.., start:end:step, ..]` along `dim` (bounds clamped like Python slices; `step > 0`).
    pub fn slice(&self, dim: usize, start: i64, end: i64, step: i64) -> Result<Self> {
        let v = self
            .layout_view()
            .slice(dim_arg(dim), Some(start), Some(end), step)?;
        self.aliased(v, "slice")
    }

    /// `narrow(dim, start, length)` (PyTorch's checks: `-size <= start <= size`, a
    /// negative start counts from the end, `start + length <= size`).
    pub fn narrow(&self, dim: usize, start: i64, length: i64) -> Result<Self> {
        let v = self.layout_view().narrow(dim_arg(dim), start, length)?;
        self.aliased(v, "narrow")
    }

    /// Removes `dim`, fixing it at `index` (negative counts from the end).
    pub fn select(&self, dim: usize, index: i64) -> Result<Self> {
        self.aliased(self.layout_view().select(dim_arg(dim), index)?, "select")
    }

    /// Inserts a size-1 dimension at `dim` (`0..=ndim`).
    pub fn unsqueeze(&self, dim: usize) -> Result<Self> {
        self.aliased(self.layout_view().unsqueeze(dim_arg(dim))?, "unsqueeze")
    }

    /// Broadcasts to `sizes` (right-aligned; `-1` keeps a dimension): expanded dims get
    /// stride 0 (PyTorch's `expand`, errors [`Error::Expand`]).
    pub fn expand(&self, sizes: &[i64]) -> Result<Self> {
        self.aliased(self.layout_view().expand(sizes)?, "expand")
    }

    /// `view(shape)` (one `-1` allowed): fails with [`Error::View`] when the strides
    /// cannot express the new shape.
    pub fn view(&self, shape: &[i64]) -> Result<Self> {
        self.aliased(self.layout_view().view(shape)?, "view")
    }

    /// `reshape(shape)`: a view when [`View::reshape`] finds one, else a contiguous copy.
    pub fn reshape(&self, shape: &[i64]) -> Result<Self> {
        let r = self.layout_view().reshape(shape)?;
        if r.copied {
            let c = self.contiguous()?;
            let (sizes, strides, offset) = r.view.into_parts();
            return c.restrided(sizes.into(), strides.into(), offset, "reshape");
        }
        self.aliased(r.view, "reshape")
    }

    /// `flatten(start, end)` (may copy, like `reshape`).
    pub fn flatten(&self, start: i64, end: i64) -> Result<Self> {
        let r = self.layout_view().flatten(start, end)?;
        if r.copied {
            let c = self.contiguous()?;
            let (sizes, strides, offset) = r.view.into_parts();
            return c.restrided(sizes.into(), strides.into(), offset, "flatten");
        }
        self.aliased(r.view, "flatten")
    }

    /// `unflatten(dim, sizes)`.
    pub fn unflatten(&self, dim: i64, sizes: &[i64]) -> Result<Self> {
        self.aliased(self.layout_view().unflatten(dim, sizes)?, "unflatten")
    }

    /// `squeeze(...)` (see [`SqueezeDims`]).
    pub fn squeeze(&self, dims: &SqueezeDims) -> Result<Self> {
        self.aliased(self.layout_view().squeeze(dims)?, "squeeze")
    }

    /// `movedim(src, dst)`.
    pub fn movedim(&self, src: i64, dst: i64) -> Result<Self> {
        self.aliased(self.layout_view().movedim(src, dst)?, "movedim")
    }

    /// `diagonal(offset, dim1, dim2)`.
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Self> {
        let v = self.layout_view().diagonal(offset, dim1, dim2)?;
        self.aliased(v, "diagonal")
    }

    /// `unfold(dim, size, step)`.
    pub fn unfold(&self, dim: i64, size: i64, step: i64) -> Result<Self> {
        self.aliased(self.layout_view().unfold(dim, size, step)?, "unfold")
    }
}

/// Product of sizes with overflow and sign checks.
pub(crate) fn numel_of(sizes: &[i64]) -> Result<usize> {
    let mut n: i64 = 1;
    for (d, &s) in sizes.iter().enumerate() {
        if s < 0 {
            return Err(Error::layout(
                "new tensor",
                format!("dim {d}: negative size {s}"),
            ));
        }
        n = n.checked_mul(s).ok_or_else(|| Error::overflow("numel"))?;
    }
    usize::try_from(n).map_err(|_| Error::overflow("numel"))
}

/// Dense strides of `sizes` in `format` (Preserve means contiguous here).
pub(crate) fn dense_strides(sizes: &[i64], format: MemoryFormat) -> Result<Vec<i64>> {
    let f = if format == MemoryFormat::Preserve {
        MemoryFormat::Contiguous
    } else {
        format
    };
    numel_of(sizes)?;
    crate::layout::strides_for_format(sizes, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arange(n: i64) -> Vec<f32> {
        (0..n).map(|x| x as f32).collect()
    }

    #[test]
    fn views_address_the_right_elements() {
        let t = Tensor::from_vec(arange(24), &[2, 3, 4]).unwrap();
        let p = t.permute(&[2, 0, 1]).unwrap();
        assert_eq!(p.sizes(), &[4, 2, 3]);
        assert_eq!(p.get(&[3, 1, 2]).unwrap(), t.get(&[1, 2, 3]).unwrap());
        let s = t.slice(2, 1, 4, 2).unwrap();
        assert_eq!(
            s.to_vec().unwrap(),
            vec![1., 3., 5., 7., 9., 11., 13., 15., 17., 19., 21., 23.]
        );
        let sel = t.select(1, -1).unwrap();
        assert_eq!(
            sel.to_vec().unwrap(),
            vec![8., 9., 10., 11., 20., 21., 22., 23.]
        );
        let e = t
            .select(0, 0)
            .unwrap()
            .select(0, 0)
            .unwrap()
            .unsqueeze(0)
            .unwrap()
            .expand(&[3, 4])
            .unwrap();
        assert_eq!(e.strides(), &[0, 1]);
        assert_eq!(e.to_vec().unwrap()[4..8], [0., 1., 2., 3.]);
    }

    #[test]
    fn views_are_validated() {
        let t = Tensor::from_vec(arange(6), &[2, 3]).unwrap();
        assert!(t.as_strided(&[2, 3], &[3, 1], 1).is_err());
        assert!(t.as_strided(&[2, 3], &[-3, 1], 3).is_err());
        assert!(t.as_strided(&[0, 3], &[100, 1], 5).is_ok());
        assert!(t.as_strided(&[i64::MAX, 2], &[2, 1], 0).is_err());
        assert!(t.narrow(1, 2, 2).is_err());
        assert!(t.select(0, 2).is_err());
        assert!(matches!(t.expand(&[4, 3]), Err(Error::Expand { .. })));
        assert!(t.permute(&[0, 0]).is_err());
    }
}
