//! The [`View`] value: sizes, strides and a storage offset, validated once.

use crate::layout::{self, check_layout};
use crate::{Error, Int, Result};

/// A strided view of some storage: PyTorch's `(sizes, strides, storage_offset)` triple over
/// an [`Int`], so one value type serves eager tensors (`i64`) and symbolic traces
/// ([`SymInt`](crate::sym::SymInt)).
///
/// Every `View` went through [`View::new`] (or a movement op that re-validates its
/// result): ranks agree, sizes are non-negative, strides are non-negative (PyTorch does
/// not support negative strides), the offset is non-negative, and every
/// `stride * max(size, 1)` and the largest addressed element fit in `i64`. Symbolic values
/// are checked at their hints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View<I> {
    sizes: Vec<I>,
    strides: Vec<I>,
    offset: I,
}

/// The concrete value used for validation: the constant, else the hint.
fn probe<I: Int>(v: &I) -> Option<i64> {
    v.as_const().or_else(|| v.hint())
}

impl<I: Int> View<I> {
    /// A validated view (see the type's docs for what is checked).
    pub fn new(sizes: Vec<I>, strides: Vec<I>, offset: I) -> Result<Self> {
        let v = View {
            sizes,
            strides,
            offset,
        };
        v.validate("view")?;
        Ok(v)
    }

    /// A contiguous (row-major) view at offset 0 of the given sizes.
    pub fn contiguous(sizes: Vec<I>) -> Result<Self> {
        layout::check_sizes("view", &sizes)?;
        let strides = layout::contiguous_strides(&sizes);
        View::new(sizes, strides, I::from_i64(0))
    }

    /// Sizes, one per dimension.
    pub fn sizes(&self) -> &[I] {
        &self.sizes
    }

    /// Strides in elements, one per dimension.
    pub fn strides(&self) -> &[I] {
        &self.strides
    }

    /// Storage offset in elements.
    pub fn offset(&self) -> &I {
        &self.offset
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.sizes.len()
    }

    /// Number of elements (product of the sizes).
    pub fn numel(&self) -> I {
        layout::numel(&self.sizes)
    }

    /// `(sizes, strides, offset)`.
    pub fn into_parts(self) -> (Vec<I>, Vec<I>, I) {
        (self.sizes, self.strides, self.offset)
    }

    /// The result of a movement op `op`: validated like [`View::new`], so that no op can
    /// produce a layout whose arithmetic overflows.
    pub(crate) fn derived(sizes: Vec<I>, strides: Vec<I>, offset: I, op: &str) -> Result<Self> {
        let v = View {
            sizes,
            strides,
            offset,
        };
        v.validate(op)?;
        Ok(v)
    }

    /// A view from parts the caller has proven valid (a permutation of a valid view).
    pub(crate) fn from_valid_parts(sizes: Vec<I>, strides: Vec<I>, offset: I) -> Self {
        View {
            sizes,
            strides,
            offset,
        }
    }

    fn validate(&self, what: &str) -> Result<()> {
        check_layout(what, &self.sizes, &self.strides)?;
        let mut extent = probe(&self.offset);
        if let Some(o) = extent {
            if o < 0 {
                return Err(Error::layout(what, format!("negative storage offset {o}")));
            }
        }
        for (d, (size, stride)) in self.sizes.iter().zip(&self.strides).enumerate() {
            let (Some(n), Some(s)) = (probe(size), probe(stride)) else {
                continue;
            };
            if s < 0 {
                return Err(Error::layout(
                    what,
                    format!("negative stride {s} at dim {d} (not supported, as in PyTorch)"),
                ));
            }
            // offset + Σ (size-1)*stride must fit (check_layout bounded each term).
            extent = extent.and_then(|e| e.checked_add((n - 1).max(0) * s));
            if extent.is_none() && probe(&self.offset).is_some() {
                return Err(Error::overflow(format!(
                    "{what}: largest addressed element (offset + extent) up to dim {d}"
                )));
            }
        }
        Ok(())
    }
}

/// PyTorch's `maybe_wrap_dim(dim, ndim)` with `wrap_scalar = true`: a 0-d tensor accepts
/// dims `-1` and `0`. Out of range is [`Error::Index`] with PyTorch's message.
pub(crate) fn wrap_dim(dim: i64, ndim: usize) -> Result<usize> {
    let n = (ndim as i64).max(1);
    if dim < -n || dim >= n {
        return Err(Error::Index {
            message: format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -n,
                n - 1
            ),
        });
    }
    Ok(if dim < 0 { dim + n } else { dim } as usize)
}

/// Checks that `a * b` fits in `i64` where both are known (constant or hint): the concrete
/// path uses plain arithmetic, so products of op arguments with strides are checked here,
/// identically for both paths.
pub(crate) fn check_mul<I: Int>(a: &I, b: &I, what: impl FnOnce() -> String) -> Result<()> {
    if let (Some(x), Some(y)) = (probe(a), probe(b)) {
        if x.checked_mul(y).is_none() {
            return Err(Error::overflow(what()));
        }
    }
    Ok(())
}

/// Checks that `a + b` fits in `i64` where both are known (see [`check_mul`]).
pub(crate) fn check_add<I: Int>(a: &I, b: &I, what: impl FnOnce() -> String) -> Result<()> {
    if let (Some(x), Some(y)) = (probe(a), probe(b)) {
        if x.checked_add(y).is_none() {
            return Err(Error::overflow(what()));
        }
    }
    Ok(())
}

/// Formats a list of values like PyTorch prints an `IntArrayRef`: `[2, 3]`.
pub(crate) fn list<I: std::fmt::Display>(v: &[I]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_dim_follows_pytorch() {
        assert_eq!(wrap_dim(-1, 3).unwrap(), 2);
        assert_eq!(wrap_dim(0, 0).unwrap(), 0);
        assert_eq!(wrap_dim(-1, 0).unwrap(), 0);
        let e = wrap_dim(3, 3).unwrap_err();
        assert_eq!(e.category(), "index");
        assert!(e.to_string().contains("[-3, 2], but got 3"), "{e}");
        assert!(wrap_dim(-4, 3).is_err());
    }

    #[test]
    fn constructor_validates() {
        assert!(View::new(vec![2i64, 3], vec![3, 1], 0).is_ok());
        assert!(View::new(vec![2i64, 3], vec![3], 0).is_err());
        assert!(View::new(vec![2i64, -3], vec![3, 1], 0).is_err());
        assert!(View::new(vec![2i64, 3], vec![-3, 1], 0).is_err());
        assert!(View::new(vec![2i64, 3], vec![3, 1], -1).is_err());
        assert!(View::new(vec![2i64], vec![i64::MAX / 2], i64::MAX / 2 + 10).is_err());
        let c = View::<i64>::contiguous(vec![2, 0, 4]).unwrap();
        assert_eq!(c.strides(), &[4, 4, 1]);
    }
}
