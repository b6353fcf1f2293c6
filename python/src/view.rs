//! `symstride.View`: PyTorch's movement ops on a layout (sizes, strides, storage offset),
//! concrete or symbolic.
//!
//! A `View` wraps the crate's `ViewChain` (the same object `symstride conformance` answers
//! golden view cases with). Ops whose arguments are all ints go through
//! [`ViewChain::apply`] with a [`ViewOp`] (exactly the conformance path); ops with `SymInt`
//! arguments (`x.view(b, s, 4, -1)`) call the generic `View` method at `SymInt`. Views are
//! immutable: every op returns a new `View`.

use crate::errors::IntoPyResult;
use crate::symbolic::{to_py_list, Num, ToPyNum};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use symstride::sym::SymInt;
use symstride::view::{Reshaped, SqueezeDims, View, ViewChain, ViewOp};
use symstride::{Int, Result};

#[derive(Clone)]
enum Chain {
    I(ViewChain<i64>),
    S(ViewChain<SymInt>),
}

/// A strided layout over a storage of `storage_numel` elements, with PyTorch's movement
/// ops. Arguments may be ints or `SymInt`s.
#[pyclass(name = "View", module = "symstride", frozen)]
#[derive(Clone)]
pub struct PyView(Chain);

fn ints(xs: &[Num]) -> Option<Vec<i64>> {
    xs.iter()
        .map(|n| match n {
            Num::I(v) => Some(*v),
            Num::S(_) => None,
        })
        .collect()
}

fn syms(xs: &[Num]) -> Vec<SymInt> {
    xs.iter().map(Num::sym).collect()
}

/// `f(2, 3)` or `f((2, 3))` / `f([2, 3])`: PyTorch's size arguments.
fn size_args(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Num>> {
    if args.len() == 1 {
        let a = args.get_item(0)?;
        if a.is_instance_of::<PyList>() || a.is_instance_of::<PyTuple>() {
            return a.extract();
        }
    }
    args.extract()
}

fn lift(c: &ViewChain<i64>) -> Result<ViewChain<SymInt>> {
    let s = |xs: &[i64]| xs.iter().map(|&v| SymInt::constant(v)).collect::<Vec<_>>();
    let v = View::new(
        s(c.view.sizes()),
        s(c.view.strides()),
        SymInt::constant(*c.view.offset()),
    )?;
    Ok(ViewChain {
        view: v,
        storage_numel: SymInt::constant(c.storage_numel),
        aliases: c.aliases,
    })
}

fn reshaped(mut c: ViewChain<SymInt>, r: Reshaped<SymInt>) -> ViewChain<SymInt> {
    // As `ViewChain::apply` does for a reshape: a copy is a new contiguous storage.
    if r.copied {
        c.storage_numel = r.view.numel();
        c.aliases = false;
    }
    c.view = r.view;
    c
}

impl PyView {
    fn apply(&self, op: ViewOp) -> PyResult<PyView> {
        let mut c = self.0.clone();
        match &mut c {
            Chain::I(ch) => ch.apply(&op).py()?,
            Chain::S(ch) => ch.apply(&op).py()?,
        }
        Ok(PyView(c))
    }

    fn symbolic(&self) -> PyResult<ViewChain<SymInt>> {
        match &self.0 {
            Chain::I(c) => lift(c).py(),
            Chain::S(c) => Ok(c.clone()),
        }
    }

    fn with_syms(
        &self,
        f: impl FnOnce(ViewChain<SymInt>) -> Result<ViewChain<SymInt>>,
    ) -> PyResult<PyView> {
        Ok(PyView(Chain::S(f(self.symbolic()?).py()?)))
    }
}

#[pymethods]
impl PyView {
    /// A layout: `strides` default to contiguous strides, `storage_numel` to the extent
    /// the layout addresses (`offset + Σ (size - 1) * stride + 1`).
    #[new]
    #[pyo3(signature = (sizes, strides=None, offset=Num::I(0), storage_numel=None))]
    fn new(
        sizes: Vec<Num>,
        strides: Option<Vec<Num>>,
        offset: Num,
        storage_numel: Option<Num>,
    ) -> PyResult<PyView> {
        let mut all = sizes.clone();
        all.extend(strides.iter().flatten().cloned());
        all.push(offset.clone());
        all.extend(storage_numel.iter().cloned());
        fn build<I: Int>(
            sizes: Vec<I>,
            strides: Option<Vec<I>>,
            offset: I,
            numel: Option<I>,
        ) -> Result<ViewChain<I>> {
            let strides = match strides {
                Some(s) => s,
                None => symstride::layout::try_contiguous_strides(&sizes)?,
            };
            let view = View::new(sizes, strides, offset)?;
            let numel = match numel {
                Some(n) => n,
                None => {
                    let mut last = view.offset().clone() + I::from_i64(1);
                    for (z, s) in view.sizes().iter().zip(view.strides()) {
                        last = last + (z.clone() - I::from_i64(1)) * s.clone();
                    }
                    last
                }
            };
            Ok(ViewChain::new(view, numel))
        }
        let chain = match ints(&all) {
            Some(_) => {
                let i = |xs: &[Num]| ints(xs).unwrap_or_default();
                Chain::I(
                    build(
                        i(&sizes),
                        strides.as_deref().map(i),
                        i(std::slice::from_ref(&offset))[0],
                        storage_numel.map(|n| i(&[n])[0]),
                    )
                    .py()?,
                )
            }
            None => Chain::S(
                build(
                    syms(&sizes),
                    strides.as_deref().map(syms),
                    offset.sym(),
                    storage_numel.map(|n| n.sym()),
                )
                .py()?,
            ),
        };
        Ok(PyView(chain))
    }

    /// Sizes.
    #[getter]
    fn sizes(&self, py: Python<'_>) -> PyResult<PyObject> {
        match &self.0 {
            Chain::I(c) => to_py_list(py, c.view.sizes()),
            Chain::S(c) => to_py_list(py, c.view.sizes()),
        }
    }

    /// Sizes (PyTorch's name).
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.sizes(py)
    }

    /// Strides, in elements.
    #[getter]
    fn strides(&self, py: Python<'_>) -> PyResult<PyObject> {
        match &self.0 {
            Chain::I(c) => to_py_list(py, c.view.strides()),
            Chain::S(c) => to_py_list(py, c.view.strides()),
        }
    }

    /// Storage offset, in elements.
    #[getter]
    fn offset(&self, py: Python<'_>) -> PyResult<PyObject> {
        match &self.0 {
            Chain::I(c) => c.view.offset().to_py(py),
            Chain::S(c) => c.view.offset().to_py(py),
        }
    }

    /// Elements of the storage this layout lives in (what `as_strided` is checked
    /// against).
    #[getter]
    fn storage_numel(&self, py: Python<'_>) -> PyResult<PyObject> {
        match &self.0 {
            Chain::I(c) => c.storage_numel.to_py(py),
            Chain::S(c) => c.storage_numel.to_py(py),
        }
    }

    /// False once a `reshape`/`flatten` had to copy (the result is a new contiguous
    /// tensor; later ops act on the copy).
    #[getter]
    fn aliases(&self) -> bool {
        match &self.0 {
            Chain::I(c) => c.aliases,
            Chain::S(c) => c.aliases,
        }
    }

    /// Number of dimensions.
    fn dim(&self) -> usize {
        match &self.0 {
            Chain::I(c) => c.view.dim(),
            Chain::S(c) => c.view.dim(),
        }
    }

    /// `permute(*dims)`
    #[pyo3(signature = (*dims))]
    fn permute(&self, dims: &Bound<'_, PyTuple>) -> PyResult<PyView> {
        let d: Vec<Num> = size_args(dims)?;
        let d = ints(&d)
            .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("permute takes int dims"))?;
        self.apply(ViewOp::Permute(d))
    }

    /// `transpose(d0, d1)`
    fn transpose(&self, d0: i64, d1: i64) -> PyResult<PyView> {
        self.apply(ViewOp::Transpose(d0, d1))
    }

    /// `t()`
    fn t(&self) -> PyResult<PyView> {
        self.apply(ViewOp::T)
    }

    /// `movedim(src, dst)`
    fn movedim(&self, src: i64, dst: i64) -> PyResult<PyView> {
        self.apply(ViewOp::Movedim(src, dst))
    }

    /// `unsqueeze(dim)`
    fn unsqueeze(&self, dim: i64) -> PyResult<PyView> {
        self.apply(ViewOp::Unsqueeze(dim))
    }

    /// `squeeze()`, `squeeze(dim)` or `squeeze([dims])`.
    #[pyo3(signature = (dim=None))]
    fn squeeze(&self, dim: Option<&Bound<'_, PyAny>>) -> PyResult<PyView> {
        let d = match dim {
            None => SqueezeDims::All,
            Some(d) if d.is_instance_of::<PyList>() || d.is_instance_of::<PyTuple>() => {
                SqueezeDims::Many(d.extract()?)
            }
            Some(d) => SqueezeDims::One(d.extract()?),
        };
        self.apply(ViewOp::Squeeze(d))
    }

    /// `flatten(start_dim=0, end_dim=-1)` (may copy: see `aliases`).
    #[pyo3(signature = (start_dim=0, end_dim=-1))]
    fn flatten(&self, start_dim: i64, end_dim: i64) -> PyResult<PyView> {
        self.apply(ViewOp::Flatten(start_dim, end_dim))
    }

    /// `diagonal(offset=0, dim1=0, dim2=1)`
    #[pyo3(signature = (offset=0, dim1=0, dim2=1))]
    fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> PyResult<PyView> {
        self.apply(ViewOp::Diagonal(offset, dim1, dim2))
    }

    /// `x[start:end:step]` along `dim` (Python slicing clamps out-of-range bounds).
    #[pyo3(signature = (dim, start=None, end=None, step=1))]
    fn slice(&self, dim: i64, start: Option<Num>, end: Option<Num>, step: i64) -> PyResult<PyView> {
        let all: Vec<Num> = start.iter().chain(end.iter()).cloned().collect();
        if ints(&all).is_some() {
            let i = |n: Option<Num>| n.and_then(|n| ints(&[n])).map(|v| v[0]);
            return self.apply(ViewOp::Slice {
                dim,
                start: i(start),
                end: i(end),
                step,
            });
        }
        self.with_syms(|mut c| {
            c.view = c
                .view
                .slice(dim, start.map(|n| n.sym()), end.map(|n| n.sym()), step)?;
            Ok(c)
        })
    }

    /// `narrow(dim, start, length)`
    fn narrow(&self, dim: i64, start: Num, length: Num) -> PyResult<PyView> {
        if let Some(v) = ints(&[start.clone(), length.clone()]) {
            return self.apply(ViewOp::Narrow(dim, v[0], v[1]));
        }
        self.with_syms(|mut c| {
            c.view = c.view.narrow(dim, start.sym(), length.sym())?;
            Ok(c)
        })
    }

    /// `select(dim, index)`
    fn select(&self, dim: i64, index: Num) -> PyResult<PyView> {
        if let Num::I(i) = index {
            return self.apply(ViewOp::Select(dim, i));
        }
        self.with_syms(|mut c| {
            c.view = c.view.select(dim, index.sym())?;
            Ok(c)
        })
    }

    /// `expand(*sizes)` (`-1` keeps a size).
    #[pyo3(signature = (*sizes))]
    fn expand(&self, sizes: &Bound<'_, PyTuple>) -> PyResult<PyView> {
        let s = size_args(sizes)?;
        if let Some(v) = ints(&s) {
            return self.apply(ViewOp::Expand(v));
        }
        self.with_syms(|mut c| {
            c.view = c.view.expand(&syms(&s))?;
            Ok(c)
        })
    }

    /// `view(*sizes)` (one `-1` allowed).
    #[pyo3(signature = (*sizes))]
    fn view(&self, sizes: &Bound<'_, PyTuple>) -> PyResult<PyView> {
        let s = size_args(sizes)?;
        if let Some(v) = ints(&s) {
            return self.apply(ViewOp::View(v));
        }
        self.with_syms(|mut c| {
            c.view = c.view.view(&syms(&s))?;
            Ok(c)
        })
    }

    /// `reshape(*sizes)`: a view when one exists, else a copy (`aliases` becomes false).
    #[pyo3(signature = (*sizes))]
    fn reshape(&self, sizes: &Bound<'_, PyTuple>) -> PyResult<PyView> {
        let s = size_args(sizes)?;
        if let Some(v) = ints(&s) {
            return self.apply(ViewOp::Reshape(v));
        }
        self.with_syms(|c| {
            let r = c.view.reshape(&syms(&s))?;
            Ok(reshaped(c, r))
        })
    }

    /// `unflatten(dim, sizes)`
    fn unflatten(&self, dim: i64, sizes: Vec<Num>) -> PyResult<PyView> {
        if let Some(v) = ints(&sizes) {
            return self.apply(ViewOp::Unflatten(dim, v));
        }
        self.with_syms(|mut c| {
            c.view = c.view.unflatten(dim, &syms(&sizes))?;
            Ok(c)
        })
    }

    /// `unfold(dim, size, step)`
    fn unfold(&self, dim: i64, size: Num, step: i64) -> PyResult<PyView> {
        if let Num::I(s) = size {
            return self.apply(ViewOp::Unfold(dim, s, step));
        }
        self.with_syms(|mut c| {
            c.view = c.view.unfold(dim, size.sym(), step)?;
            Ok(c)
        })
    }

    /// `as_strided(sizes, strides, storage_offset)` (absolute offset; default: this view's
    /// offset), bounds-checked against the storage.
    #[pyo3(signature = (sizes, strides, storage_offset=None))]
    fn as_strided(
        &self,
        sizes: Vec<Num>,
        strides: Vec<Num>,
        storage_offset: Option<Num>,
    ) -> PyResult<PyView> {
        let offset = match storage_offset {
            Some(o) => o,
            None => match &self.0 {
                Chain::I(c) => Num::I(*c.view.offset()),
                Chain::S(c) => Num::S(c.view.offset().clone()),
            },
        };
        if let (Some(z), Some(s), Some(o)) = (
            ints(&sizes),
            ints(&strides),
            ints(std::slice::from_ref(&offset)),
        ) {
            return self.apply(ViewOp::AsStrided(z, s, o[0]));
        }
        self.with_syms(|mut c| {
            c.view =
                c.view
                    .as_strided(syms(&sizes), syms(&strides), offset.sym(), &c.storage_numel)?;
            Ok(c)
        })
    }

    fn __repr__(&self) -> String {
        match &self.0 {
            Chain::I(c) => format!(
                "View(sizes={:?}, strides={:?}, offset={}, aliases={})",
                c.view.sizes(),
                c.view.strides(),
                c.view.offset(),
                if c.aliases { "True" } else { "False" }
            ),
            Chain::S(c) => format!(
                "View(sizes=[{}], strides=[{}], offset={}, aliases={})",
                join(c.view.sizes()),
                join(c.view.strides()),
                c.view.offset(),
                if c.aliases { "True" } else { "False" }
            ),
        }
    }
}

fn join(xs: &[SymInt]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
