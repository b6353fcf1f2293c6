//! Zero-copy conversions from and to `ndarray` (cargo feature `ndarray`).
//!
//! An owned `ndarray::Array` becomes a tensor without copying (its `Vec` becomes the storage).
//! A tensor is viewed as an `ArrayView`/`ArrayViewMut` without copying; the view holds a
//! borrow of the storage (shared or exclusive, see [`Storage`]) for its lifetime, so no kernel
//! can write the memory while an ndarray view reads it.

use super::dense::Tensor;
use super::element::Element;
use super::format::is_non_overlapping;
use super::storage::{ReadGuard, Storage, WriteGuard};
use crate::{Error, Result};
use ndarray::{Array, ArrayView, ArrayViewMut, Dimension, IxDyn, ShapeBuilder};
use std::ops::{Deref, DerefMut};

/// A read-only ndarray view of a tensor, holding a shared borrow of its storage.
pub struct NdView<'a, T> {
    view: ArrayView<'a, T, IxDyn>,
    _guard: ReadGuard<'a>,
}

impl<'a, T> Deref for NdView<'a, T> {
    type Target = ArrayView<'a, T, IxDyn>;
    fn deref(&self) -> &Self::Target {
        &self.view
    }
}

/// A mutable ndarray view of a tensor, holding an exclusive borrow of its storage.
pub struct NdViewMut<'a, T> {
    view: ArrayViewMut<'a, T, IxDyn>,
    _guard: WriteGuard<'a>,
}

impl<'a, T> Deref for NdViewMut<'a, T> {
    type Target = ArrayViewMut<'a, T, IxDyn>;
    fn deref(&self) -> &Self::Target {
        &self.view
    }
}
impl<T> DerefMut for NdViewMut<'_, T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.view
    }
}

impl<T: Element> Tensor<T> {
    /// Takes an owned array without copying its elements (arrays with negative strides are
    /// first made standard-layout, which copies: tensors do not support negative strides).
    pub fn from_ndarray<D: Dimension>(a: Array<T, D>) -> Result<Self> {
        let a = if a.strides().iter().any(|&s| s < 0) {
            a.as_standard_layout().into_owned()
        } else {
            a
        };
        let sizes: Vec<i64> = a.shape().iter().map(|&s| s as i64).collect();
        let strides: Vec<i64> = a.strides().iter().map(|&s| s as i64).collect();
        let (v, offset) = a.into_raw_vec_and_offset();
        Tensor::from_storage(
            Storage::from_vec(v),
            &sizes,
            &strides,
            offset.unwrap_or(0) as i64,
        )
    }

    fn nd_parts(&self) -> (IxDyn, IxDyn, *mut T) {
        let sizes: Vec<usize> = self.sizes.iter().map(|&s| s as usize).collect();
        let strides: Vec<usize> = self.strides.iter().map(|&s| s as usize).collect();
        let ptr = if self.numel() == 0 {
            self.storage.ptr()
        } else {
            // SAFETY: a non-empty view's offset is inside the storage (layout invariant).
            unsafe { self.storage.ptr().add(self.offset as usize) }
        };
        (IxDyn(&sizes), IxDyn(&strides), ptr)
    }

    /// A zero-copy read-only ndarray view (holds a shared borrow of the storage).
    pub fn as_ndarray(&self) -> Result<NdView<'_, T>> {
        let guard = self.storage.read()?;
        let (sh, st, ptr) = self.nd_parts();
        // SAFETY: sizes/strides are non-negative and every addressed element lies inside the
        // storage (layout invariant); the storage outlives 'a (borrowed from `self`) and the
        // read guard excludes writers while the view exists.
        let view = unsafe { ArrayView::from_shape_ptr(sh.strides(st), ptr as *const T) };
        Ok(NdView {
            view,
            _guard: guard,
        })
    }

    /// A zero-copy mutable ndarray view (holds an exclusive borrow of the storage). Fails with
    /// [`Error::MemoryOverlap`] if the view has internal overlap (e.g. expanded dimensions).
    pub fn as_ndarray_mut(&self) -> Result<NdViewMut<'_, T>> {
        if !is_non_overlapping(&self.sizes, &self.strides) {
            return Err(Error::MemoryOverlap {
                message: format!("cannot view {self:?} mutably: it has internal overlap"),
            });
        }
        let guard = self.storage.write()?;
        let (sh, st, ptr) = self.nd_parts();
        // SAFETY: as in `as_ndarray`, plus: no two indices address the same element (checked
        // above) and the write guard excludes every other access while the view exists.
        let view = unsafe { ArrayViewMut::from_shape_ptr(sh.strides(st), ptr) };
        Ok(NdViewMut {
            view,
            _guard: guard,
        })
    }
}
